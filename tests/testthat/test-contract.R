# The contract of the one interface (R/plan-interface.R, R/release-interface.R): every exported function
# that takes a plan or a release, for every kind of plan and every release
# source, and every way a user can edit such an object into an invalid
# state, raises a classed sdcRisk_error_* condition: never a crash, never an
# internal error, never a silent result.
#
# The objects, their edits and the calls are generated in a child R process
# (callr), one per kind of object, so that a crash fails this test instead of
# killing the run; a child that dies is run again edit by edit to name the
# edit that crashed it.

# Runs in the child: builds the objects of one kind, applies the edits
# `which` (all when NULL) and calls every function on each edited object.
# Returns one row per edit and call: the outcome is "same result" (the
# edit changed nothing that matters, e.g. NaN for NA), "different result"
# (a silent result: a defect), "warning: ...", the classes of the condition
# raised, or "unclassed: ..." for any other error.
contract_child <- function(kind, which = NULL, count = FALSE) {
  library(sdcRisk)
  keys <- c("sex", "race", "marital")
  d <- pums_md[seq_len(900), c(keys, "age")]
  cf <- cell_frequencies(d, keys)
  counts <- cf$cells$count
  ncell <- length(counts)
  small <- which(counts <= 3)
  race_p <- function(keep) {
    lev <- levels(d$race)
    p <- matrix((1 - keep) / (length(lev) - 1), length(lev), length(lev), dimnames = list(lev, lev))
    diag(p) <- keep
    p
  }
  set.seed(1)
  objects <- list(
    block_ifpr = function() pram_plan(cf, list(small[1:4], small[5:9]), theta = 0.8),
    block_matrix = function() {
      pram_plan(cf, list(small[1:3]), matrix = list(matrix(c(0.5, 0.25, 0.25, 0.25, 0.5, 0.25, 0.25, 0.25, 0.5), 3)))
    },
    vars = function() pram_plan_vars(cf, list(race = race_p(0.8))),
    vars_strata = function() {
      st <- pram_strata(cf, "sex")$label
      pram_plan_vars(cf, stats::setNames(list(list(race = race_p(0.8)), list(race = race_p(0.7))), st),
                     strata = "sex")
    },
    release_ifpr = function() {
      set.seed(2)
      ifpr(d, keys, xi = 0.5)
    },
    release_pram = function() {
      set.seed(3)
      pram_release(d, keys, vars = c("race", "marital"), strata = "sex", pd = 0.8)
    }
  )
  # Edits: each turns a valid object into an invalid one.
  set_at <- function(path, value_fun) {
    function(x) {
      old <- x[[path]]
      x[[path]] <- value_fun(old)
      x
    }
  }
  first <- function(v) function(x) {
    x[1] <- v
    x
  }
  vector_edits <- function(path, kind) {
    e <- list(
      drop_one = set_at(path, function(x) x[-length(x)]),
      to_character = set_at(path, function(x) as.character(x)),
      na = set_at(path, first(NA)),
      negative = set_at(path, first(-1L)),
      huge = set_at(path, first(1e6L))
    )
    if (kind == "double") {
      e$nan <- set_at(path, first(NaN))
      e$inf <- set_at(path, first(Inf))
    }
    names(e) <- paste(paste(path, collapse = "$"), names(e), sep = ":")
    e
  }
  cells_edits <- function(prefix) {
    c(
      vector_edits(c(prefix, "cells", "count"), "integer"),
      stats::setNames(list(
        set_at(c(prefix, "cells", "count"), function(x) x + 1L),
        set_at(c(prefix, "cells", "count"), function(x) as.numeric(x)),
        set_at(c(prefix, "cell_id"), first(0L)),
        set_at(c(prefix, "cell_id"), first(.Machine$integer.max)),
        set_at(c(prefix, "cell_id"), function(x) x[-1]),
        set_at(c(prefix, "keys"), function(x) c(x[-1], "nope")),
        set_at(c(prefix, "cells"), function(x) x[-1, , drop = FALSE]),
        set_at(c(prefix, "cells"), function(x) NULL),
        set_at(prefix, function(x) NULL)
      ), paste0(paste(prefix, collapse = "$"), c(
        ":counts_plus_one", ":counts_double", ":cell_id_zero", ":cell_id_max", ":cell_id_short",
        ":keys_renamed", ":cell_row_dropped", ":cells_table_gone", ":gone"
      )))
    )
  }
  block_edits <- function(prefix) {
    p <- function(...) c(prefix, ...)
    c(
      vector_edits(p("block_start"), "integer"),
      vector_edits(p("block_cells"), "integer"),
      vector_edits(p("theta"), "double"),
      vector_edits(p("matrix_start"), "double"),
      stats::setNames(list(
        set_at(p("block_start"), function(x) { x[2] <- x[3]; x }),
        set_at(p("block_cells"), function(x) { x[2] <- x[1]; x }),
        set_at(p("theta"), function(x) { x[!is.na(x)] <- 1e6; x }),
        set_at(p("theta"), function(x) { x[!is.na(x)] <- x[!is.na(x)] + 100; x }),
        set_at(p("matrix"), function(x) if (length(x)) { x[1] <- x[1] / 2; x } else 1),
        set_at(p("matrix"), function(x) if (length(x)) { x[1] <- 2; x } else 2),
        set_at(p("matrix"), function(x) if (length(x)) { x[1] <- NaN; x } else NaN),
        set_at(p("matrix"), function(x) if (length(x)) x[-1] else c(1, 2)),
        set_at(p("matrix_start"), function(x) { x[is.na(x)] <- 0; x })
      ), paste0(paste(prefix, collapse = "$"), c(
        ":block_start_empty_block", ":block_cells_duplicate", ":theta_above_counts", ":theta_plus_100",
        ":matrix_column_not_stochastic", ":matrix_entry_2", ":matrix_nan", ":matrix_short",
        ":matrix_start_for_ifpr"
      ))),
      cells_edits(p("cells"))
    )
  }
  vars_edits <- function(prefix) {
    p <- function(...) c(prefix, ...)
    c(
      vector_edits(p("stratum_of_cell"), "integer"),
      stats::setNames(list(
        set_at(p("stratum_of_cell"), function(x) { x[1] <- if (max(x) > 1) 3L - x[1] else 2L; x }),
        set_at(p("codes"), function(x) { x[[2]][1] <- 50L; x }),
        set_at(p("codes"), function(x) { x[[2]][1] <- x[[2]][1] %% 9L + 1L; x }),
        set_at(p("codes"), function(x) { x[[1]][1] <- 0L; x }),
        set_at(p("codes"), function(x) x[-1]),
        set_at(p("levels"), function(x) { x$race <- x$race[-1]; x }),
        set_at(p("levels"), function(x) { x$race[1] <- "renamed"; x }),
        set_at(p("vars"), function(x) "nope"),
        set_at(p("vars"), function(x) c(x, "sex")),
        set_at(p("strata"), function(x) "race"),
        set_at(p("stratum_labels"), function(x) paste0(x, "?")),
        set_at(p("matrices"), function(x) { x[[1]]$race[1, 1] <- 2; x }),
        set_at(p("matrices"), function(x) { x[[1]]$race[, 1] <- x[[1]]$race[, 1] / 2; x }),
        set_at(p("matrices"), function(x) { x[[1]]$race[1, 1] <- NaN; x }),
        set_at(p("matrices"), function(x) { x[[1]]$race <- x[[1]]$race[-1, -1]; x }),
        set_at(p("matrices"), function(x) { x[[1]]$race <- NULL; x }),
        set_at(p("matrices"), function(x) c(x, x)),
        set_at(p("matrices"), function(x) list())
      ), paste0(paste(prefix, collapse = "$"), c(
        ":stratum_swapped", ":code_50", ":code_shifted", ":code_zero", ":codes_short",
        ":levels_short", ":levels_renamed", ":vars_unknown", ":vars_with_unperturbed", ":strata_perturbed",
        ":stratum_labels_changed", ":matrix_entry_2", ":matrix_column_halved", ":matrix_nan",
        ":matrix_too_small", ":matrix_gone", ":strata_doubled", ":matrices_empty"
      ))),
      cells_edits(p("cells"))
    )
  }
  release_edits <- function(plan_edits, new_what) {
    c(
      plan_edits("plan"),
      cells_edits("cells"),
      stats::setNames(list(
        set_at("data", function(x) x[-1, , drop = FALSE]),
        set_at("data", function(x) { names(x)[names(x) == "race"] <- "Race"; x }),
        set_at("data", function(x) { x$race <- NULL; x }),
        set_at("data", function(x) as.list(x)),
        set_at("new_cell", first(0L)),
        set_at("new_cell", first(1e6L)),
        set_at("new_cell", function(x) x[-1]),
        set_at("new_cell", function(x) as.character(x)),
        set_at("keys", function(x) c(x, "age"))
      ), c("data:row_dropped", "data:key_renamed", "data:key_dropped", "data:not_a_data_frame",
           "new_cell:zero", "new_cell:huge", "new_cell:short", "new_cell:character", "keys:added")),
      if (new_what == "codes") {
        stats::setNames(list(
          set_at("new_codes", function(x) { x[1, 1] <- 99L; x }),
          set_at("new_codes", function(x) x[-1, , drop = FALSE]),
          set_at("new_codes", function(x) x[, 1, drop = FALSE])
        ), c("new_codes:99", "new_codes:row_dropped", "new_codes:column_dropped"))
      }
    )
  }
  edits <- switch(kind,
    block_ifpr = , block_matrix = block_edits(character()),
    vars = , vars_strata = vars_edits(character()),
    release_ifpr = release_edits(block_edits, "cells"),
    release_pram = release_edits(vars_edits, "codes")
  )
  if (count) return(length(edits))
  plan_calls <- list(
    match_risk = function(x) match_risk(x, a = 1:2),
    max_match_risk = function(x) max_match_risk(x),
    max_match_risk_known = function(x) max_match_risk_known(x, subsets = list("sex")),
    pram_draw = function(x) pram_draw(x),
    pram_apply = function(x) pram_apply(d, keys, x),
    simulate_release = function(x) simulate_release(d, keys, x, reps = 2),
    format = function(x) format(x)
  )
  if (startsWith(kind, "block")) {
    plan_calls$pram_matrix <- function(x) pram_matrix(x, 1)
    plan_calls$pram_unbiased <- function(x) pram_unbiased(x)
  }
  release_calls <- list(
    release_risk = function(x) release_risk(x),
    release_utility = function(x) release_utility(x, list("race", c("race", "sex"))),
    summary = function(x) summary(x),
    format = function(x) format(x),
    plot = function(x) {
      grDevices::pdf(NULL)
      on.exit(grDevices::dev.off())
      plot(x, n = 2, a_max = 3)
      NULL # plot() returns its (edited) input
    },
    match_risk = function(x) match_risk(x, cells = 1, a = 1),
    max_match_risk = function(x) max_match_risk(x)
  )
  calls <- if (startsWith(kind, "release")) release_calls else plan_calls
  base <- objects[[kind]]()
  run_call <- function(fn, x) {
    set.seed(1)
    calls[[fn]](x)
  }
  base_value <- lapply(stats::setNames(names(calls), names(calls)), run_call, x = base)
  if (is.null(which)) which <- seq_along(edits)
  rows <- list()
  for (i in which) {
    x <- tryCatch(edits[[i]](base), error = function(e) NULL)
    # an edit that does not apply to this object, or changes nothing
    if (is.null(x) || identical(x, base)) next
    for (fn in names(calls)) {
      outcome <- tryCatch(
        withCallingHandlers({
          # a result is acceptable only where the edit changed nothing that
          # matters (the same result as the object before the edit)
          if (identical(run_call(fn, x), base_value[[fn]])) "same result" else "different result"
        }, warning = function(w) stop(structure(class = c("contract_warning", "error", "condition"),
          list(message = conditionMessage(w), call = NULL)))),
        contract_warning = function(w) paste("warning:", conditionMessage(w)),
        sdcRisk_error = function(e) paste(class(e), collapse = "/"),
        error = function(e) paste("unclassed:", conditionMessage(e))
      )
      rows[[length(rows) + 1]] <- data.frame(kind = kind, edit = names(edits)[i], index = i,
                                             call = fn, outcome = outcome)
    }
  }
  do.call(rbind, rows)
}

run_contract <- function(kind) {
  res <- tryCatch(callr::r(contract_child, args = list(kind)), error = function(e) e)
  if (!inherits(res, "error")) return(res)
  # the child died: run every edit alone to name those that crash
  n <- callr::r(contract_child, args = list(kind, count = TRUE))
  rows <- lapply(seq_len(n), function(i) {
    tryCatch(callr::r(contract_child, args = list(kind, i)), error = function(e) {
      data.frame(kind = kind, edit = paste("edit", i), index = i, call = "(any)",
                 outcome = paste("crash:", conditionMessage(e)))
    })
  })
  do.call(rbind, rows)
}

for (kind in c("block_ifpr", "block_matrix", "vars", "vars_strata", "release_ifpr", "release_pram")) {
  test_that(paste0("every function gives a classed error for every edit of a ", kind, " object"), {
    skip_if_not_installed("callr")
    res <- run_contract(kind)
    expect_true(is.data.frame(res) && nrow(res) > 100, info = kind)
    ok <- (grepl("^sdcRisk_error_", res$outcome) & !grepl("sdcRisk_error_internal", res$outcome)) |
      res$outcome == "same result"
    bad <- res[!ok, ]
    expect_identical(nrow(bad), 0L,
      info = paste(utils::capture.output(print(utils::head(bad, 40), row.names = FALSE)), collapse = "\n"))
    # the classes are the ones for edited or inconsistent objects
    classes <- setdiff(unique(sub("/.*", "", res$outcome)), "same result")
    expect_true(all(classes %in% c("sdcRisk_error_invalid_object", "sdcRisk_error_release_mismatch",
                                   "sdcRisk_error_argument", "sdcRisk_error_plan_mismatch",
                                   "sdcRisk_error_unknown_key", "sdcRisk_error_keys")),
                info = paste(classes, collapse = ", "))
  })
}

test_that("the edits reported in issue 19 are classed errors, not crashes (in a child process)", {
  skip_if_not_installed("callr")
  res <- callr::r(function() {
    library(sdcRisk)
    keys <- c("sex", "race", "marital")
    d <- pums_md[1:800, keys]
    cf <- cell_frequencies(d, keys)
    lev <- levels(d$race)
    p <- matrix(0.05, 9, 9, dimnames = list(lev, lev))
    diag(p) <- 0.6
    try_class <- function(expr) tryCatch({
      force(expr)
      "no error"
    }, error = function(e) class(e)[1])
    pl <- pram_plan_vars(cf, list(race = p))
    set.seed(1)
    rel <- ifpr(d, keys, xi = 0.5)
    set.seed(1)
    pr <- pram_release(d, keys, vars = "race", pd = 0.8)
    c(
      vars_stratum = try_class({ pl$stratum_of_cell[1] <- 100000L; simulate_release(d, keys, pl, reps = 2) }),
      vars_code = try_class({ pl$codes[[1]][1] <- 50L; simulate_release(d, keys, pl, reps = 2) }),
      block_start_utility = try_class({ rel$plan$block_start[2] <- 1e6L; release_utility(rel, "race") }),
      block_start_risk = try_class({ rel$plan$block_start[2] <- 1e6L; release_risk(rel) }),
      block_start_summary = try_class({ rel$plan$block_start[2] <- 1e6L; summary(rel) }),
      theta = try_class({ rel$plan$theta[1] <- 1e6; release_risk(rel) }),
      pram_stratum = try_class({ pr$plan$stratum_of_cell[1] <- 100000L; release_utility(pr, "race") })
    )
  })
  expect_true(all(res == "sdcRisk_error_invalid_object"), info = paste(names(res), res, collapse = "; "))
})

test_that("a factor whose codes exceed its levels is a classed error", {
  d <- data.frame(id = 1:3)
  d$f <- structure(c(1L, 5L, 2L), levels = c("a", "b"), class = "factor")
  expect_error(cell_frequencies(d, "f"), class = "sdcRisk_error_key_type")
  e <- tryCatch(cell_frequencies(d, "f"), error = function(e) e)
  expect_identical(e$arg, "f")
})

test_that("errors carry the user's call and the argument's name", {
  cf <- cell_frequencies(data.frame(x = c("a", "a", "b"), y = c("u", "v", "v")), c("x", "y"))
  plan <- pram_plan_vars(cf, list(y = matrix(c(0.5, 0.5, 0.5, 0.5), 2)))
  e <- tryCatch(max_match_risk_known(plan, subsets = list("nope")), error = function(e) e)
  expect_s3_class(e, "sdcRisk_error_known")
  expect_identical(e$arg, "subsets")
  expect_identical(as.character(e$call[[1]]), "max_match_risk_known")
  e <- tryCatch(match_risk(plan, known = "nope"), error = function(e) e)
  expect_identical(e$arg, "known")
  expect_identical(as.character(e$call[[1]]), "match_risk")
  bad <- plan
  bad$codes[[1]][1] <- 9L
  e <- tryCatch(max_match_risk(bad), error = function(e) e)
  expect_s3_class(e, "sdcRisk_error_invalid_object")
  expect_identical(e$arg, "plan")
  expect_identical(as.character(e$call[[1]]), "max_match_risk")
  e <- tryCatch(release_risk(list()), error = function(e) e)
  expect_s3_class(e, "sdcRisk_error_argument")
  expect_identical(e$arg, "release")
  expect_identical(as.character(e$call[[1]]), "release_risk")
})

test_that("the core's exceptions reach the user as classed errors", {
  # an exception thrown in the core (a kind of plan the core does not know)
  # comes back through run_engine() as sdcRisk_error_internal with the C++
  # message, never as an Rcpp exception
  e <- tryCatch(sdcRisk:::core_call(sdcRisk:::cpp_max_risk, list(kind = "nope"), "all_matches"),
                error = function(e) e)
  expect_s3_class(e, "sdcRisk_error_internal")
  expect_match(e$core_message, "unknown kind of plan")
  # an error of the Rcpp layer before the core runs (a list that is not a plan)
  e <- tryCatch(sdcRisk:::core_call(sdcRisk:::cpp_max_risk, list(), "all_matches"), error = function(e) e)
  expect_s3_class(e, "sdcRisk_error_internal")
  # an underflow is its own class
  e <- tryCatch(
    sdcRisk:::abort_core(list(kind = "underflow", message = "x"), NULL),
    error = function(e) e
  )
  expect_s3_class(e, "sdcRisk_error_underflow")
  e <- tryCatch(sdcRisk:::abort_core(list(kind = "memory", message = "std::bad_alloc"), NULL), error = function(e) e)
  expect_s3_class(e, "sdcRisk_error_memory")
})
