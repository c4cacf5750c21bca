# Progress of long work (issue 20, item 4): the core reports the share of
# its work done through the glue's callback; R shows it as a cli progress
# bar only when R is interactive or option sdcRisk.progress is TRUE.

progress_data <- function(n = 3000) {
  set.seed(11)
  data.frame(
    a = factor(sample(letters[1:6], n, TRUE)),
    b = sample(1:40, n, TRUE),
    c = factor(sample(c("x", "y", "z"), n, TRUE, prob = c(0.7, 0.2, 0.1)))
  )
}

test_that("the core's loops report rising fractions that end at 1 through core_call(progress =)", {
  df <- progress_data()
  keys <- c("a", "b", "c")
  cf <- cell_frequencies(df, keys)
  pv <- pram_release(df, keys, pd = 0.7)$plan
  seen <- numeric()
  record <- function(f) seen <<- c(seen, f)
  ep <- sdcRisk:::engine_plan(pv)
  res <- sdcRisk:::core_call(sdcRisk:::cpp_max_risk, ep, "all_matches", progress = record)
  expect_gt(length(seen), 0)
  expect_true(all(diff(seen) >= 0) && all(seen >= 0 & seen <= 1))
  expect_identical(seen[length(seen)], 1)
  # the same maximum as without a progress callback
  expect_identical(res$value, max_match_risk(pv)$risk)
  # the callback is unbound after the call
  expect_null(sdcRisk:::the_progress$update)

  # simulation, of a per-variable and of a block plan
  for (plan in list(pv, pram_plan(cf, list(which(cf$cells$count <= 2)), theta = 0.8))) {
    seen <- numeric()
    set.seed(3)
    sdcRisk:::core_call(sdcRisk:::cpp_simulate, sdcRisk:::engine_plan(plan), 50L, NA_integer_, progress = record)
    expect_gt(length(seen), 0)
    expect_true(all(diff(seen) >= 0))
    expect_identical(seen[length(seen)], 1)
  }
})

test_that("an error in the progress callback is a classed error, and leaves no callback behind", {
  df <- progress_data()
  pv <- pram_release(df, c("a", "b", "c"), pd = 0.7)$plan
  ep <- sdcRisk:::engine_plan(pv)
  expect_error(
    sdcRisk:::core_call(sdcRisk:::cpp_max_risk, ep, "all_matches", progress = function(f) stop("boom")),
    class = "sdcRisk_error"
  )
  expect_null(sdcRisk:::the_progress$update)
})

test_that("a progress bar is shown when asked for, and never in scripts by default", {
  skip_if_not_installed("cli")
  df <- progress_data()
  keys <- c("a", "b", "c")
  pv <- pram_release(df, keys, pd = 0.7)$plan
  # not interactive, no option: nothing is printed
  withr::local_options(sdcRisk.progress = NULL, cli.progress_handlers_only = "logger", cli.progress_show_after = 0)
  expect_false(interactive())
  quiet <- capture.output(r0 <- max_match_risk(pv), type = "output")
  expect_length(quiet, 0)
  # forced: cli's logger handler writes the bar's states
  withr::local_options(sdcRisk.progress = TRUE)
  lines <- capture.output(r1 <- max_match_risk(pv))
  expect_true(any(grepl("created", lines)))
  expect_true(any(grepl("terminated", lines)))
  expect_identical(r1$risk, r0$risk)
  # simulate_release() and ifpr() too, with the same results as without
  plan <- pram_plan(cell_frequencies(df, keys), list(which(cell_frequencies(df, keys)$cells$count <= 2)), theta = 0.8)
  set.seed(5)
  lines <- capture.output(s1 <- simulate_release(df, keys, plan, reps = 20))
  expect_true(any(grepl("created", lines)) && any(grepl("terminated", lines)))
  set.seed(9)
  lines <- capture.output(rel1 <- ifpr(df, keys, xi = 0.5))
  expect_true(any(grepl("created", lines)) && any(grepl("terminated", lines)))
  withr::local_options(sdcRisk.progress = FALSE)
  set.seed(5)
  expect_length(capture.output(s0 <- simulate_release(df, keys, plan, reps = 20)), 0)
  expect_equal(s1, s0)
  set.seed(9)
  rel0 <- ifpr(df, keys, xi = 0.5)
  expect_identical(rel1$data, rel0$data)
})
