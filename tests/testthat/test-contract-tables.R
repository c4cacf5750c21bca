# The contract of the table objects (sdc_sensitivity, sdc_protection,
# sdc_audit): every way a user can edit one into an invalid state, given to
# every exported function and method that takes one, gives a classed
# sdcRisk_error_* condition: never a crash, never an internal error, never
# a silent result. The combinations are generated, and run in a child R
# process (in_child() in helper-tables.R) so that a crash fails this test
# instead of ending the run.

# The outcome of every (edit, function) pair: "ok" or the classes of the
# condition raised.
contract_grid <- function() {
  outcome <- function(expr) {
    tryCatch({
      grDevices::pdf(NULL)
      on.exit(grDevices::dev.off())
      utils::capture.output(force(expr))
      "ok"
    }, error = function(e) paste(class(e), collapse = " "))
  }
  set.seed(4)
  d <- data.frame(a = sample(c("a1", "a2", "b1", "b2"), 60, TRUE), b = sample(c("x", "y", "z"), 60, TRUE),
                  v = round(rlnorm(60, 4, 1.5)))
  hier <- list(a = c(a1 = "A", a2 = "A", b1 = "B", b2 = "B"))
  sens <- cell_sensitivity(d, c("a", "b"), "v", list(rule_frequency(3), rule_p(15)), hierarchy = hier)
  stopifnot(any(sens$sensitive))
  prot <- protect_table(sens)
  aud <- audit_table(sens, prot$status != "published")
  detail <- which(sens$level == "a:b")[1]
  margin <- which(sens$level == "a_group:b")[1]
  grand <- which(sens$level == "(total)")
  set_col <- function(x, col, rows, value) {
    x[[col]][rows] <- value
    x
  }
  rename <- function(x, col) {
    names(x)[names(x) == col] <- paste0(col, "_renamed")
    x
  }
  drop_attr <- function(x, a) {
    attr(x, a) <- NULL
    x
  }
  edits_common <- list(
    total_na = function(x) set_col(x, "total", 1, NA),
    total_inf = function(x) set_col(x, "total", 1, Inf),
    total_text = function(x) {
      x$total <- as.character(x$total)
      x
    },
    total_renamed = function(x) rename(x, "total"),
    by_renamed = function(x) rename(x, "b"),
    by_na = function(x) set_col(x, "a", 2, NA),
    attr_by = function(x) drop_attr(x, "by"),
    attr_by_extra = function(x) {
      attr(x, "by") <- c(attr(x, "by"), "c")
      x
    },
    rows_short = function(x) {
      attr(x, "row.names") <- seq_len(nrow(x) - 1)
      x
    }
  )
  edits <- list(
    sdc_sensitivity = c(edits_common, list(
      detail_dropped = function(x) x[-detail, ],
      margin_dropped = function(x) x[-margin, ],
      grand_dropped = function(x) x[-grand, ],
      row_twice = function(x) x[c(seq_len(nrow(x)), 1), ],
      total_edited = function(x) set_col(x, "total", detail, x$total[detail] + 1),
      total_negative = function(x) set_col(x, "total", grand, -1),
      sensitive_na = function(x) set_col(x, "sensitive", 1, NA),
      sensitive_cleared = function(x) set_col(x, "sensitive", which(x$sensitive), FALSE),
      rule_flag_text = function(x) set_col(x, "sensitive_p15", 1, "yes"),
      S_na = function(x) set_col(x, "S_p15", 1, NA),
      rules_renamed = function(x) rename(x, "rules"),
      hierarchy_broken = function(x) {
        o <- attr(x, "options")
        o$hierarchy$a[["a1"]] <- "nowhere"
        attr(x, "options") <- o
        x
      },
      hierarchy_cycle = function(x) {
        o <- attr(x, "options")
        o$hierarchy$a[["A"]] <- "a1"
        attr(x, "options") <- o
        x
      },
      attr_rules = function(x) drop_attr(x, "rules"),
      attr_options = function(x) drop_attr(x, "options"),
      bound_na = function(x) {
        x$lower_bound <- 0
        x$lower_bound[1] <- NA
        x
      }
    )),
    sdc_protection = c(edits_common, list(
      status_na = function(x) set_col(x, "status", 1, NA),
      primary_published = function(x) set_col(x, "status", which(x$status == "primary")[1], "published"),
      published_primary = function(x) set_col(x, "status", which(x$status == "published")[1], "primary"),
      status_text = function(x) {
        x$status <- as.character(x$status)
        x
      },
      protected_false = function(x) set_col(x, "protected", which(x$status == "primary")[1], FALSE),
      protection_negative = function(x) set_col(x, "protection", 1, -1),
      status_renamed = function(x) rename(x, "status"),
      attr_stats = function(x) drop_attr(x, "stats")
    )),
    sdc_audit = c(edits_common, list(
      protected_na = function(x) set_col(x, "protected", which(x$sensitive)[1], NA),
      verdict_flipped = function(x) {
        attr(x, "passed") <- !attr(x, "passed")
        x
      },
      sensitive_text = function(x) {
        x$sensitive <- as.character(x$sensitive)
        x
      },
      suppressed_na = function(x) set_col(x, "suppressed", 1, NA),
      lower_renamed = function(x) rename(x, "lower"),
      attr_passed = function(x) drop_attr(x, "passed")
    ))
  )
  funs <- list(
    sdc_sensitivity = list(
      protect_table = function(x) protect_table(x),
      protect_table_optimal = function(x) protect_table(x, method = "optimal", intervals = "none"),
      audit_table = function(x) audit_table(x, rep(TRUE, nrow(x))),
      print = function(x) print(x), summary = function(x) print(summary(x)), plot = function(x) plot(x)),
    sdc_protection = list(print = function(x) print(x), summary = function(x) print(summary(x)),
                          plot = function(x) plot(x)),
    sdc_audit = list(print = function(x) print(x), summary = function(x) print(summary(x)))
  )
  objects <- list(sdc_sensitivity = sens, sdc_protection = prot, sdc_audit = aud)
  out <- list()
  for (cls in names(objects)) {
    # the unedited object passes every function
    for (f in names(funs[[cls]])) {
      out[[length(out) + 1]] <- data.frame(object = cls, edit = "(none)", fun = f,
                                           outcome = outcome(funs[[cls]][[f]](objects[[cls]])))
    }
    for (e in names(edits[[cls]])) {
      x <- tryCatch(edits[[cls]][[e]](objects[[cls]]), error = function(err) err)
      for (f in names(funs[[cls]])) {
        res <- if (inherits(x, "error")) paste("edit failed:", conditionMessage(x)) else
          outcome(funs[[cls]][[f]](x))
        out[[length(out) + 1]] <- data.frame(object = cls, edit = e, fun = f, outcome = res)
      }
    }
  }
  do.call(rbind, out)
}

test_that("every edit of a table object gives a classed error in every function (child process)", {
  skip_if_not_installed("callr")
  grid <- in_child(contract_grid)
  expect_gt(nrow(grid), 150)
  clean <- grid[grid$edit == "(none)", ]
  expect_true(all(clean$outcome == "ok"), info = paste(clean$fun, clean$outcome, collapse = "; "))
  edited <- grid[grid$edit != "(none)", ]
  expect_false(any(startsWith(edited$outcome, "edit failed")))
  classed <- grepl("(^| )sdcRisk_error_[a-z_]+ ", edited$outcome)
  internal <- grepl("sdcRisk_error_internal", edited$outcome)
  # a subset of the cells, or edited totals, still print, summarise and
  # plot (users look at the sensitive cells alone); only the functions that
  # need the whole table's relations refuse them
  partial <- edited$edit %in% c("detail_dropped", "margin_dropped", "grand_dropped", "total_edited",
                                "total_negative") & edited$fun %in% c("print", "summary", "plot")
  bad <- edited[!(classed | (partial & edited$outcome == "ok")) | internal, ]
  expect_true(nrow(bad) == 0, info = paste(bad$object, bad$edit, bad$fun, bad$outcome, sep = " / ",
                                           collapse = "\n"))
  # the edits that drop a row or break the sums name the table as incomplete or invalid
  rows <- edited[edited$edit %in% c("detail_dropped", "margin_dropped", "grand_dropped", "total_edited") &
                   edited$fun %in% c("protect_table", "audit_table"), ]
  expect_true(all(grepl("sdcRisk_error_(invalid_object|incomplete_table)", rows$outcome)),
              info = paste(rows$edit, rows$outcome, collapse = "; "))
})
