# Bad and unusual input to every exported function: each case is a defect
# once found (issue 13, section 2) or a class of input the package must
# answer with a classed error (?sdcRisk_errors) or a correct result, never a
# crash, a base R error or a warning.

# Calls `expr`; passes if it returns without a warning or fails with an
# error of class sdcRisk_error (or rlang_error: rlang::arg_match() and
# rlang::check_dots_empty()). Returns "ok", "sdc" or "rlang".
classed_or_ok <- function(expr, label) {
  warned <- NULL
  out <- withCallingHandlers(
    tryCatch({
      force(expr)
      "ok"
    }, sdcRisk_error = function(e) "sdc", rlang_error = function(e) "rlang",
    error = function(e) paste("unclassed error:", conditionMessage(e))),
    warning = function(w) {
      warned <<- conditionMessage(w)
      invokeRestart("muffleWarning")
    }
  )
  expect(out %in% c("ok", "sdc", "rlang"), paste0(label, ": ", out))
  expect(is.null(warned), paste0(label, ": warning: ", warned))
  out
}

small_data <- function() {
  data.frame(
    a = c("x", "x", "y", "z", "z", "z", "w", "v"),
    b = c(1L, 2L, 1L, 1L, 1L, 2L, 2L, 1L),
    v = c(1.5, 2, 3, 4, 5, 6, 7, 8)
  )
}

# --- 2.1: key names that collide with the package's columns -------------

test_that("a key may not be named like a column the package adds (count, cell)", {
  expect_error(cell_frequencies(data.frame(count = c(5, 5, 7)), "count"), class = "sdcRisk_error_key_name")
  expect_error(cell_frequencies(data.frame(cell = 1:3, g = 1), c("g", "cell")), class = "sdcRisk_error_key_name")
  d <- data.frame(count = c(1, 1, 2, 3, 4, 5), g = c("a", "b", "a", "b", "a", "b"))
  expect_error(ifpr(d, c("count", "g"), xi = 0.5), class = "sdcRisk_error_key_name")
  names(d)[1] <- "n"
  d$count <- 1:6
  expect_error(ifpr(d, c("n", "g"), xi = 0.5, also = "count"), class = "sdcRisk_error_key_name")
  expect_snapshot(error = TRUE, cell_frequencies(data.frame(count = c(5, 5, 7)), "count"))
})

test_that("keys named like other columns keep their values (no collision)", {
  d <- data.frame(counts = c(5, 5, 7), n = c("a", "a", "b"))
  cf <- cell_frequencies(d, c("counts", "n"))
  expect_equal(cf$cells$counts, c(5, 7))
  expect_equal(cf$cells$count, c(2L, 1L))
})

# --- 2.2: edited objects never crash --------------------------------------

edited_plan_cases <- function() {
  cf <- cell_frequencies(small_data(), c("a", "b"))
  plan <- pram_plan(cf, list(1:3, 4:5), theta = c(0.5, NA), matrix = list(NULL, matrix(c(0.9, 0.1, 0.2, 0.8), 2)))
  edit <- function(f) {
    p <- plan
    f(p)
  }
  list(
    count_zero = edit(function(p) { p$cells$cells$count[1] <- 0L; p }),
    count_changed = edit(function(p) { p$cells$cells$count[2] <- 5L; p }),
    count_double = edit(function(p) { p$cells$cells$count <- as.numeric(p$cells$cells$count); p }),
    cell_id_999 = edit(function(p) { p$cells$cell_id[1] <- 999L; p }),
    cell_id_zero = edit(function(p) { p$cells$cell_id[1] <- 0L; p }),
    block_cell_999 = edit(function(p) { p$block_cells[1] <- 999L; p }),
    block_cell_na = edit(function(p) { p$block_cells[2] <- NA_integer_; p }),
    block_cell_twice = edit(function(p) { p$block_cells[2] <- p$block_cells[1]; p }),
    block_start_past = edit(function(p) { p$block_start[3] <- 50L; p }),
    block_start_short = edit(function(p) { p$block_start <- p$block_start[-1]; p }),
    block_start_double = edit(function(p) { p$block_start <- as.numeric(p$block_start); p }),
    theta_big = edit(function(p) { p$theta[1] <- 7; p }),
    theta_negative = edit(function(p) { p$theta[1] <- -1; p }),
    theta_na = edit(function(p) { p$theta[1] <- NA_real_; p }),
    theta_for_matrix = edit(function(p) { p$theta[2] <- 0.5; p }),
    matrix_start_past = edit(function(p) { p$matrix_start[2] <- 1e6; p }),
    matrix_start_gone = edit(function(p) { p$matrix_start <- numeric(); p }),
    matrix_nan = edit(function(p) { p$matrix[2] <- NaN; p }),
    matrix_short = edit(function(p) { p$matrix <- p$matrix[1:2]; p }),
    cells_gone = edit(function(p) { p$cells <- NULL; p }),
    keys_renamed = edit(function(p) { p$cells$keys <- c("a", "zz"); p })
  )
}

test_that("an edited plan or cells object gives a classed error from every function, never a crash", {
  d <- small_data()
  for (nm in names(cases <- edited_plan_cases())) {
    p <- cases[[nm]]
    set.seed(1)
    classed_or_ok(pram_draw(p), paste(nm, "pram_draw"))
    classed_or_ok(pram_apply(d, c("a", "b"), p), paste(nm, "pram_apply"))
    classed_or_ok(match_risk(p, a = 1:3), paste(nm, "match_risk"))
    classed_or_ok(max_match_risk(p), paste(nm, "max_match_risk"))
    classed_or_ok(pram_matrix(p, 1), paste(nm, "pram_matrix"))
    classed_or_ok(pram_unbiased(p), paste(nm, "pram_unbiased"))
    classed_or_ok(simulate_release(d, c("a", "b"), p, reps = 3), paste(nm, "simulate_release"))
    classed_or_ok(format(p), paste(nm, "format"))
  }
  # the edits reported in the issue are errors of class invalid_object
  cases <- edited_plan_cases()
  expect_error(pram_draw(cases$count_zero), class = "sdcRisk_error_invalid_object")
  expect_error(pram_draw(cases$cell_id_999), class = "sdcRisk_error_invalid_object")
  expect_error(max_match_risk(cases$block_cell_999), class = "sdcRisk_error_invalid_object")
  expect_error(pram_draw(cases$count_changed), class = "sdcRisk_error_invalid_object")
  cf <- cell_frequencies(small_data(), c("a", "b"))
  cf$cell_id[1] <- 999L
  expect_error(pram_plan(cf, list(1:2), theta = 0.5), class = "sdcRisk_error_invalid_object")
  expect_snapshot(error = TRUE, pram_draw(edited_plan_cases()$cell_id_999))
  expect_snapshot(error = TRUE, match_risk(edited_plan_cases()$block_cell_999))
})

test_that("random edits of a plan give a result or a classed error (fuzz)", {
  d <- small_data()
  cf <- cell_frequencies(d, c("a", "b"))
  base <- pram_plan(cf, list(1:3, 4:6), theta = c(1, NA), matrix = list(NULL, diag(3)))
  fields <- c("block_start", "block_cells", "theta", "matrix", "matrix_start", "count", "cell_id")
  values <- list(0L, -1L, NA_integer_, 999L, .Machine$integer.max, 0, -1, NA_real_, NaN, Inf, 2.5, 1e300)
  for (seed in 1:40) {
    set.seed(seed)
    p <- base
    f <- sample(fields, 1)
    v <- values[[sample(length(values), 1)]]
    target <- switch(f, count = p$cells$cells$count, cell_id = p$cells$cell_id, p[[f]])
    i <- sample(length(target), 1)
    target[i] <- v
    if (f == "count") p$cells$cells$count <- target else if (f == "cell_id") p$cells$cell_id <- target else p[[f]] <- target
    label <- paste0("seed ", seed, ": ", f, "[", i, "] <- ", format(v))
    classed_or_ok(pram_draw(p), paste(label, "pram_draw"))
    classed_or_ok(match_risk(p, a = 1:2), paste(label, "match_risk"))
    classed_or_ok(max_match_risk(p), paste(label, "max_match_risk"))
    classed_or_ok(pram_unbiased(p), paste(label, "pram_unbiased"))
  }
})

# --- 2.3 - 2.5: keys of unusual values -----------------------------------

test_that("integer keys near the integer minimum keep their values", {
  k <- c(-2147483647L, -2147483640L, -2147483647L)
  cf <- cell_frequencies(data.frame(k = k), "k")
  expect_identical(cf$cells$k, c(-2147483647L, -2147483640L))
  expect_identical(cf$cells$count, c(2L, 1L))
  expect_identical(cf$cell_id, c(1L, 2L, 1L))
  k2 <- c(.Machine$integer.max, .Machine$integer.max - 5L)
  expect_identical(cell_frequencies(data.frame(k = k2), "k")$cells$k, rev(k2))
})

test_that("an all-missing key or a matrix column is a classed error", {
  for (x in list(c(NA_character_, NA), c(NA_integer_, NA), c(NA_real_, NaN), factor(c(NA, NA)), c(NA, NA))) {
    expect_error(cell_frequencies(data.frame(k = x, g = 1:2), c("g", "k")), class = "sdcRisk_error_key_type")
    # as a category of its own, it is one cell
    cf <- cell_frequencies(data.frame(k = x), "k", na = "category")
    expect_identical(cf$cells$count, 2L)
  }
  d <- data.frame(id = 1:6)
  d$m <- matrix(1:12, 6)
  expect_error(cell_frequencies(d, "m"), class = "sdcRisk_error_key_type")
  d$l <- as.list(1:6)
  expect_error(cell_frequencies(d, "l"), class = "sdcRisk_error_key_type")
  expect_snapshot(error = TRUE, cell_frequencies(data.frame(k = factor(c(NA, NA))), "k"))
  expect_snapshot(error = TRUE, cell_frequencies(d, "m"))
})

test_that("NaN as a category comes back as NaN, NA as NA", {
  d <- data.frame(k = c(NaN, 1, 2, 3, 4, 5))
  cf <- cell_frequencies(d, "k", na = "category")
  expect_true(is.nan(cf$cells$k[6]))
  plan <- pram_plan(cf, list(1:6), theta = 1)
  for (seed in 1:20) {
    set.seed(seed)
    out <- pram_apply(d, "k", plan)
    expect_identical(is.na(out$k), is.nan(out$k))
  }
  # with both NA and NaN the category is NA, a value the data has
  d2 <- data.frame(k = c(NaN, NA, 1, 2, 3))
  cf2 <- cell_frequencies(d2, "k", na = "category")
  expect_true(is.na(cf2$cells$k[4]) && !is.nan(cf2$cells$k[4]))
})

# --- 2.6: utility with a missing category ----------------------------------

test_that("release_utility() works under na = \"category\" with missing keys", {
  set.seed(1)
  d <- data.frame(
    a = sample(c("x", "y", "z", NA), 80, TRUE),
    b = sample(1:12, 80, TRUE),
    f = factor(sample(c("u", "w", NA), 80, TRUE))
  )
  rel <- ifpr(d, c("a", "b", "f"), xi = 0.3, na = "category")
  u <- release_utility(rel, list("a", "f", c("a", "f")))
  for (v in c("a", "f")) {
    dist <- u$distributions[[v]]
    expect_equal(sum(dist$original), 80)
    expect_equal(sum(dist$perturbed), 80)
    expect_true(NA_character_ %in% dist$category)
    expect_equal(dist$original[is.na(dist$category)], sum(is.na(d[[v]])))
    vt <- u$variance[[v]]
    expect_equal(sum(vt$original), 80)
    expect_true(all(vt$perturbation_var >= 0))
  }
})

# --- 2.7, 2.8: extreme numbers ----------------------------------------------

test_that("xi near its limits is a classed error, not NA with a warning", {
  expect_error(ifpr_theta(1 / 3 + 1e-12), class = "sdcRisk_error_infeasible")
  expect_error(ifpr_theta_ghatak(1e-12, 1), class = "sdcRisk_error_infeasible")
  expect_snapshot(error = TRUE, ifpr_theta_ghatak(1e-12, 1))
  set.seed(1)
  d <- data.frame(a = sample(c("x", "y", "z"), 80, TRUE), b = sample(1:12, 80, TRUE))
  classed_or_ok(ifpr(d, c("a", "b"), xi = 1e-12), "ifpr(xi = 1e-12)")
  expect_error(ifpr(d, c("a", "b"), xi = 1e-12), class = "sdcRisk_error")
})

test_that("whole numbers above the integer maximum and unbounded sizes fail fast", {
  cf <- cell_frequencies(small_data(), c("a", "b"))
  plan <- pram_plan(cf, list(1:3), theta = 0.5)
  expect_error(match_risk(plan, 1, a = 2^31), class = "sdcRisk_error_argument")
  # a above the number of records is an impossible event, answered at once
  elapsed <- system.time(mr <- match_risk(plan, 1:2, a = c(1, 9, .Machine$integer.max)))[["elapsed"]]
  expect_lt(elapsed, 5)
  expect_identical(is.na(mr$risk), c(FALSE, TRUE, TRUE, FALSE, TRUE, TRUE))
  expect_identical(mr$prob[mr$a > 8], rep(0, 4))
  expect_identical(mr$prob[mr$a == 1], match_risk(plan, 1:2, a = 1)$prob)
  expect_error(rule_nk(2^31, 50), class = "sdcRisk_error_argument")
  expect_error(rule_ptn(1, 1, nt = 2^31), class = "sdcRisk_error_argument")
  expect_error(ptn_sensitivity(1, 1, nt = 2^31), class = "sdcRisk_error_argument")
  expect_error(ptn_sensitivity(1, 1, nt = 1e8), class = "sdcRisk_error_argument")
  expect_error(ptn_sensitivity(1, 1, ns = 1e8), class = "sdcRisk_error_argument")
  expect_error(simulate_release(small_data(), c("a", "b"), plan, reps = 2^31), class = "sdcRisk_error_argument")
  d <- data.frame(g = c("a", "a", "b"), x = c(1, 2, 3))
  expect_error(cell_sensitivity(d, "g", "x", rule_p(10), largest = 1e5), class = "sdcRisk_error_argument")
  expect_snapshot(error = TRUE, ptn_sensitivity(1, 1, nt = 1e8))
  expect_snapshot(error = TRUE, rule_nk(2^31, 50))
})

test_that("values near the largest double do not overflow silently", {
  big <- .Machine$double.xmax
  expect_error(ptn_sensitivity(c(big, big) / 2, c(big, big)), class = "sdcRisk_error_ptn_input")
  expect_error(ptn_sensitivity(big / 4, c(big, 1) / 4), class = "sdcRisk_error_ptn_input")
  # large but summable values work
  res <- ptn_sensitivity(c(1e300, 2e300), c(1e300, 2e300))
  expect_true(is.finite(res$S))
  expect_snapshot(error = TRUE, ptn_sensitivity(c(big, big) / 2, c(big, big)))
})

# --- 2.10 - 2.12 ---------------------------------------------------------

test_that("a released data.table can be modified by reference without a warning", {
  skip_if_not_installed("data.table")
  set.seed(1)
  d <- data.frame(a = sample(c("x", "y", "z"), 80, TRUE), b = sample(1:12, 80, TRUE))
  rel <- ifpr(data.table::as.data.table(d), c("a", "b"), xi = 0.3)
  expect_gt(rel$certificate$records_changed, 0)
  expect_s3_class(rel$data, "data.table")
  expect_no_warning(data.table::set(rel$data, j = "x", value = 1))
  # `:=` from code that uses data.table (here: evaluated in the global environment)
  dt <- rel$data
  expect_no_warning(eval(quote(dt[, y := 2]), list(dt = dt), globalenv()))
  expect_equal(rel$data$x, rep(1, 80))
})

test_that("unchecked arguments now have classed errors", {
  set.seed(1)
  d <- data.frame(a = sample(c("x", "y", "z"), 80, TRUE), b = sample(1:12, 80, TRUE))
  expect_error(ifpr(d, c("a", "b"), xi = 0.5, method = "nayak", split = NA), class = "sdcRisk_error_argument")
  expect_error(ifpr(d, c("a", "b"), xi = 0.5, method = "nayak", split = "yes"), class = "sdcRisk_error_argument")
  cf <- cell_frequencies(d, c("a", "b"))
  plan <- pram_plan(cf, list(1:3), theta = 0.5)
  expect_error(pram_unbiased(plan, tol = "a"), class = "sdcRisk_error_argument")
  expect_error(pram_unbiased(plan, tol = -1), class = "sdcRisk_error_argument")
  d$l <- as.list(1:80)
  rel <- ifpr(d, c("a", "b"), xi = 0.3)
  expect_error(release_utility(rel, "l"), class = "sdcRisk_error_argument")
  expect_error(release_utility(rel, list(c("a", "l"))), class = "sdcRisk_error_argument")
  expect_snapshot(error = TRUE, pram_unbiased(plan, tol = "a"))
  expect_snapshot(error = TRUE, release_utility(rel, "l"))
})

test_that("the certificate prints as it does on the release", {
  set.seed(1)
  d <- data.frame(a = sample(c("x", "y", "z"), 80, TRUE), b = sample(1:12, 80, TRUE))
  rel <- ifpr(d, c("a", "b"), xi = 0.3)
  cert <- rel$certificate
  expect_s3_class(cert, "sdc_certificate")
  lines <- format(cert)
  rel_lines <- format(rel)
  expect_true(all(c(rel_lines[2], rel_lines[3], rel_lines[5]) %in% lines))
  expect_output(print(cert), "Certificate (exact maximum risk)", fixed = TRUE)
})

# --- every exported function, fed bad values --------------------------------

test_that("every exported function answers bad values with a classed error or a result", {
  d <- small_data()
  cf <- cell_frequencies(d, c("a", "b"))
  plan <- pram_plan(cf, list(1:3), theta = 0.5)
  set.seed(1)
  rel <- ifpr(data.frame(a = sample(c("x", "y", "z"), 80, TRUE), b = sample(1:12, 80, TRUE)), c("a", "b"), xi = 0.3)
  # one value of each kind (every error costs cli some milliseconds)
  bad <- list(NULL, NA, NaN, -Inf, 0, 2^31, "a", character(), c(1, 2), list(1), factor("a"), d, matrix(1:4, 2))
  calls <- list(
    cell_frequencies = function(x) cell_frequencies(d, x),
    cell_frequencies_data = function(x) cell_frequencies(x, "a"),
    cell_frequencies_na = function(x) cell_frequencies(d, "a", na = x),
    pram_plan_blocks = function(x) pram_plan(cf, x, theta = 0.5),
    pram_plan_theta = function(x) pram_plan(cf, list(1:3), theta = x),
    pram_plan_matrix = function(x) pram_plan(cf, list(1:2), matrix = x),
    pram_plan_cells = function(x) pram_plan(x, list(1:2), theta = 0.5),
    pram_matrix = function(x) pram_matrix(plan, x),
    pram_matrix_plan = function(x) pram_matrix(x, 1),
    pram_unbiased = function(x) pram_unbiased(plan, x),
    pram_apply_data = function(x) pram_apply(x, c("a", "b"), plan),
    pram_apply_keys = function(x) pram_apply(d, x, plan),
    pram_draw = function(x) pram_draw(x),
    match_risk_cells = function(x) match_risk(plan, x),
    match_risk_a = function(x) match_risk(plan, 1, x),
    max_match_risk = function(x) max_match_risk(plan, x),
    psi_t = function(x) psi(x, 0.5),
    psi_theta = function(x) psi(2, x),
    ifpr_theta = function(x) ifpr_theta(x),
    ifpr_theta_goal = function(x) ifpr_theta(0.5, x),
    ifpr_theta_ghatak_xi = function(x) ifpr_theta_ghatak(x, 2),
    ifpr_theta_ghatak_t1 = function(x) ifpr_theta_ghatak(0.2, x),
    ifpr_xi = function(x) ifpr(d, c("a", "b"), xi = x),
    ifpr_keys = function(x) ifpr(d, x, xi = 0.5),
    ifpr_partition = function(x) ifpr(d, c("a", "b"), xi = 0.5, partition = x),
    ifpr_also = function(x) ifpr(d, c("a", "b"), xi = 0.5, also = x),
    ifpr_goal = function(x) ifpr(d, c("a", "b"), xi = 0.5, goal = x),
    ifpr_split = function(x) ifpr(d, c("a", "b"), xi = 0.5, method = "nayak", split = x),
    release_risk = function(x) release_risk(x),
    release_utility = function(x) release_utility(rel, x),
    simulate_release_reps = function(x) simulate_release(d, c("a", "b"), plan, reps = x),
    simulate_release_target = function(x) simulate_release(d, c("a", "b"), plan, reps = 2, target = x),
    rule_frequency = function(x) rule_frequency(x),
    rule_nk_n = function(x) rule_nk(x, 50),
    rule_nk_k = function(x) rule_nk(1, x),
    rule_p = function(x) rule_p(x),
    rule_pq = function(x) rule_pq(x, 20),
    rule_ptn_nt = function(x) rule_ptn(1, 1, nt = x),
    rule_ptn_pt = function(x) rule_ptn(x, 1),
    ptn_pt = function(x) ptn_sensitivity(x, 1),
    ptn_noise = function(x) ptn_sensitivity(1, x),
    ptn_nt = function(x) ptn_sensitivity(1, 1, nt = x),
    cell_sensitivity_by = function(x) cell_sensitivity(d, x, "v", rule_p(10)),
    cell_sensitivity_value = function(x) cell_sensitivity(d, "a", x, rule_p(10)),
    cell_sensitivity_rules = function(x) cell_sensitivity(d, "a", "v", x),
    cell_sensitivity_largest = function(x) cell_sensitivity(d, "a", "v", rule_p(10), largest = x),
    cell_sensitivity_total = function(x) cell_sensitivity(d, "a", "v", rule_p(10), total_label = x)
  )
  for (fn in names(calls)) {
    for (i in seq_along(bad)) {
      set.seed(1)
      classed_or_ok(calls[[fn]](bad[[i]]), paste0(fn, "(bad[[", i, "]])"))
    }
  }
})

test_that("empty and one-row data", {
  one <- data.frame(a = "x", b = 1L, v = 2)
  cf <- cell_frequencies(one, c("a", "b"))
  expect_identical(cf$cells$count, 1L)
  expect_error(pram_plan(cf, list(1L), theta = 0.5), class = "sdcRisk_error_block")
  # one record: no block possible, so ifpr() cannot protect it
  classed_or_ok(ifpr(one, c("a", "b"), xi = 0.5), "ifpr on one record")
  expect_error(cell_frequencies(one[0, ], "a"), class = "sdcRisk_error_empty_data")
  expect_error(ifpr(one[0, ], "a", xi = 0.5), class = "sdcRisk_error_empty_data")
  classed_or_ok(cell_sensitivity(one, "a", "v", rule_p(10)), "cell_sensitivity on one record")
  classed_or_ok(cell_sensitivity(one[0, ], "a", "v", rule_p(10)), "cell_sensitivity on no record")
  classed_or_ok(ptn_sensitivity(numeric(), numeric()), "ptn_sensitivity of nothing")
})

# --- 2.9: merging infeasible partition sets --------------------------------

# The nearest set by direct comparison of every pair of coordinate rows (the
# definition in ?ifpr, as first implemented).
nearest_set_reference <- function(s, sets, alive, sizes) {
  keep <- attr(sets, "keep")
  a <- sets$coords[[s]]
  cand <- setdiff(which(alive), s)
  if (length(keep) > 0) {
    cand <- cand[vapply(cand, function(t) all(sets$coords[[t]][1, keep] == a[1, keep]), logical(1))]
  }
  if (length(cand) == 0) return(NA_integer_)
  score <- t(vapply(cand, function(t) {
    b <- sets$coords[[t]]
    best <- c(Inf, Inf)
    for (i in seq_len(nrow(a))) {
      for (j in seq_len(nrow(b))) {
        d <- c(sum(a[i, ] != b[j, ]), sum(abs(a[i, ] - b[j, ])))
        if (d[1] < best[1] || (d[1] == best[1] && d[2] < best[2])) best <- d
      }
    }
    best
  }, numeric(2)))
  cand[order(score[, 1], score[, 2], -sizes[cand], cand)[1]]
}

test_that("the nearest set for a merge agrees with pairwise comparison", {
  for (seed in 1:200) {
    set.seed(seed)
    p <- sample(1:3, 1)
    ns <- sample(2:12, 1)
    grid <- unique(matrix(sample(1:4, ns * p, TRUE), ncol = p))
    ns <- nrow(grid)
    keep <- if (p > 1 && runif(1) < 0.5) 1L else integer()
    # merged sets hold several rows (distinct coordinates), all with the
    # same kept values: each row goes to a set among the rows that agree
    # with it on the kept variable
    same <- if (length(keep)) grid[, keep] else rep(1, ns)
    owner <- vapply(seq_len(ns), function(r) {
      peers <- which(same == same[r])
      peers[sample.int(length(peers), 1)]
    }, integer(1))
    live <- sort(unique(owner))
    sets <- data.frame(set = seq_len(ns))
    sets$coords <- lapply(seq_len(ns), function(s) grid[owner == s, , drop = FALSE])
    attr(sets, "keep") <- keep
    alive <- seq_len(ns) %in% live
    sizes <- sample(1:5, ns, TRUE)
    for (s in live) {
      expect_identical(
        sdcRisk:::nearest_set(s, sets, alive, sizes),
        nearest_set_reference(s, sets, alive, sizes),
        info = paste("seed", seed, "set", s)
      )
    }
  }
})

test_that("on_infeasible = \"merge\" is fast with thousands of partition sets", {
  skip_on_cran()
  set.seed(1)
  n <- 20000
  d <- data.frame(age = sample(0:3999, n, TRUE), sex = sample(c("F", "M"), n, TRUE), r = sample(letters[1:6], n, TRUE))
  # age with 4,000 values is warned about (recode first): expected here
  elapsed <- system.time(withCallingHandlers(
    rel <- ifpr(d, c("age", "sex", "r"), xi = 0.2, partition = list(age = seq(0, 4000, by = 2)),
      on_infeasible = "merge", calibrate = "bound"),
    sdcRisk_warning_key_distinct = function(w) invokeRestart("muffleWarning")
  ))[["elapsed"]]
  expect_gt(nrow(rel$merges), 1500)
  expect_lte(rel$certificate$risk, 0.2)
  # the pairwise search took minutes here (quadratic); allow a slow machine
  expect_lt(elapsed, 60)
})

test_that("the certificate stored in an sdcMicroObj prints as on the release", {
  skip_if_not_installed("sdcMicro")
  env <- new.env()
  utils::data("testdata", package = "sdcMicro", envir = env)
  td <- env$testdata
  keys <- c("urbrur", "roof", "walls", "water", "electcon", "relat", "sex")
  obj <- sdcMicro::createSdcObj(td, keyVars = keys, w = "sampling_weight")
  set.seed(4)
  out <- ifpr(obj, xi = 0.3, partition = list(urbrur = "keep"), on_infeasible = "merge")
  cert <- sdcMicro::get.sdcMicroObj(out, "risk")$ifpr
  expect_s3_class(cert, "sdc_certificate")
  printed <- capture.output(print(cert))
  expect_identical(printed, format(cert))
  expect_match(printed[3], "^Certificate \\(exact maximum risk\\): R = ")
  expect_s3_class(sdcMicro::get.sdcMicroObj(out, "pram")$params$relat$certificate, "sdc_certificate")
})

# --- the functions added for per-variable PRAM, partial keys and tables ----

test_that("the newer exported functions answer bad values with a classed error or a result", {
  d <- small_data()
  cf <- cell_frequencies(d, c("a", "b"))
  pv <- pram_plan_vars(cf, list(b = matrix(c(0.8, 0.2, 0.3, 0.7), 2)))
  sens <- cell_sensitivity(d, "a", "v", rule_frequency(3))
  supp <- sens$total < 0 # nothing suppressed
  set.seed(2)
  rel <- ifpr(d, c("a", "b"), xi = 0.5)
  pub <- publish_plan(rel)
  bad <- list(NULL, NA, NaN, -Inf, 0, 2^31, "a", character(), c(1, 2), list(1), factor("a"), d, matrix(1:4, 2))
  calls <- list(
    pram_plan_vars_cells = function(x) pram_plan_vars(x, list(b = diag(2))),
    pram_plan_vars_matrices = function(x) pram_plan_vars(cf, x),
    pram_plan_vars_one = function(x) pram_plan_vars(cf, list(b = x)),
    pram_plan_vars_strata = function(x) pram_plan_vars(cf, list(b = diag(2)), strata = x),
    pram_plan_vars_orientation = function(x) pram_plan_vars(cf, list(b = diag(2)), orientation = x),
    pram_strata = function(x) pram_strata(cf, x),
    pram_matrix_invariant_freq = function(x) pram_matrix_invariant(x),
    pram_matrix_invariant_pd = function(x) pram_matrix_invariant(c(a = 3, b = 5), pd = x),
    pram_matrix_invariant_alpha = function(x) pram_matrix_invariant(c(a = 3, b = 5), alpha = x),
    pram_matrix_argus_cat = function(x) pram_matrix_argus(x, 0.8),
    pram_matrix_argus_ret = function(x) pram_matrix_argus(3, x),
    pram_matrix_argus_band = function(x) pram_matrix_argus(3, 0.8, x),
    pram_release_data = function(x) pram_release(x, c("a", "b"), vars = "b"),
    pram_release_keys = function(x) pram_release(d, x, vars = "b"),
    pram_release_vars = function(x) pram_release(d, c("a", "b"), vars = x),
    pram_release_strata = function(x) pram_release(d, c("a", "b"), vars = "b", strata = x),
    pram_release_pd = function(x) pram_release(d, c("a", "b"), vars = "b", pd = x),
    pram_release_known = function(x) pram_release(d, c("a", "b"), vars = "b", known = x),
    pram_certify = function(x) pram_certify(x),
    pram_draw_vars = function(x) pram_draw(x),
    match_risk_known = function(x) match_risk(pv, 1, 1, known = x),
    max_match_risk_known_arg = function(x) max_match_risk(pv, known = x),
    max_match_risk_known_fn = function(x) max_match_risk_known(pv, subsets = x),
    max_match_risk_known_plan = function(x) max_match_risk_known(x),
    ifpr_known = function(x) ifpr(d, c("a", "b"), xi = 0.5, known = x),
    pram_damage_plan = function(x) pram_damage(x),
    pram_damage_weights = function(x) pram_damage(pv, weights = x),
    pram_damage_ordered = function(x) pram_damage(pv, ordered = x),
    protect_table_x = function(x) protect_table(x),
    protect_table_cost = function(x) protect_table(sens, cost = x),
    protect_table_lower = function(x) protect_table(sens, lower = x),
    protect_table_freq = function(x) protect_table(sens, freq_protection = x),
    protect_table_box = function(x) protect_table(sens, box = x),
    protect_table_intervals = function(x) protect_table(sens, intervals = x),
    protect_table_method = function(x) protect_table(sens, method = x),
    protect_table_time = function(x) protect_table(sens, method = "optimal", time_limit = x),
    audit_table_x = function(x) audit_table(x, supp),
    audit_table_supp = function(x) audit_table(sens, x),
    audit_table_upper = function(x) audit_table(sens, supp, upper = x),
    audit_table_attacker = function(x) audit_table(sens, supp, attacker = x),
    audit_table_zero = function(x) audit_table(sens, supp, zero_contributions = x),
    protect_table_attacker = function(x) protect_table(sens, attacker = x),
    protect_table_zero = function(x) protect_table(sens, zero_contributions = x),
    protect_table_cores = function(x) protect_table(sens, cores = x),
    estimate_table_estimator = function(x) estimate_table(rel$data, pub, by = "a", estimator = x),
    estimate_table_level = function(x) estimate_table(rel$data, pub, by = "a", level = x),
    cell_sensitivity_hierarchy = function(x) cell_sensitivity(d, "a", "v", rule_p(10), hierarchy = x)
  )
  for (fn in names(calls)) {
    for (i in seq_along(bad)) {
      set.seed(1)
      classed_or_ok(calls[[fn]](bad[[i]]), paste0(fn, "(bad[[", i, "]])"))
    }
  }
})

test_that("an edited per-variable plan gives a classed error, never a crash", {
  d <- small_data()
  cf <- cell_frequencies(d, c("a", "b"))
  pv <- pram_plan_vars(cf, list(b = matrix(c(0.8, 0.2, 0.3, 0.7), 2)))
  edits <- list(
    function(p) { p$codes[[2]][1] <- 99L; p },
    function(p) { p$codes[[1]] <- p$codes[[1]][-1]; p },
    function(p) { p$stratum_of_cell[1] <- 5L; p },
    function(p) { p$matrices[[1]]$b <- matrix(0.5, 3, 3); p },
    function(p) { p$matrices[[1]]$b[1, 1] <- NaN; p },
    function(p) { p$matrices <- list(); p },
    function(p) { p$vars <- "zz"; p },
    function(p) { p$levels <- p$levels[1]; p },
    function(p) { p$cells$cells$count[1] <- 0L; p }
  )
  for (i in seq_along(edits)) {
    bad <- edits[[i]](pv)
    fs <- list(function(p) pram_draw(p), function(p) max_match_risk(p), function(p) match_risk(p, 1, 1),
               function(p) max_match_risk_known(p))
    for (f in fs) expect_error(f(bad), class = "sdcRisk_error", info = paste("edit", i))
  }
  # the cells of the records: checked wherever records are drawn or
  # written; a risk computation reads the cells' counts only, and its
  # result is that of the unedited plan
  bad <- pv
  bad$cells$cell_id[1] <- 999L
  expect_error(pram_draw(bad), class = "sdcRisk_error_invalid_object")
  expect_error(pram_apply(d, c("a", "b"), bad), class = "sdcRisk_error_invalid_object")
  expect_identical(max_match_risk(bad)$risk, max_match_risk(pv)$risk)
  expect_identical(match_risk(bad, 1, 1), match_risk(pv, 1, 1))
})
