# The maximum likelihood estimator where the moment estimator leaves the
# parameter space: equal to the moment estimator inside it (estimates and
# standard errors), the maximum of the likelihood at the boundary (against
# a general optimizer and the Kuhn-Tucker conditions).

strong_matrix <- function(k, keep = 0.8) {
  m <- matrix((1 - keep) / (k - 1), k, k)
  diag(m) <- keep
  m
}

test_that("inside the parameter space the ML estimator is the moment estimator, with its standard error", {
  set.seed(5)
  n <- 3000
  df <- data.frame(a = sample(c("p", "q", "r"), n, TRUE), b = sample(1:2, n, TRUE),
                   s = sample(c("u", "v"), n, TRUE), g = sample(c("x", "y"), n, TRUE),
                   y = stats::rexp(n))
  cf <- cell_frequencies(df, c("a", "b", "s"))
  mats <- stats::setNames(list(list(a = strong_matrix(3), b = strong_matrix(2, 0.9)),
                               list(a = strong_matrix(3, 0.7), b = strong_matrix(2))), pram_strata(cf, "s")$label)
  plan <- pram_plan_vars(cf, mats, strata = "s")
  released <- pram_apply(df, c("a", "b", "s"), plan)
  pub <- publish_plan(plan, released = released)
  for (args in list(list(), list(value = "y", stat = "total"), list(value = "y", stat = "mean"))) {
    mom <- do.call(estimate_table, c(list(released, pub, by = c("a", "g")), args, estimator = "moment"))
    ml <- do.call(estimate_table, c(list(released, pub, by = c("a", "g")), args, estimator = "ml"))
    expect_identical(ml$estimator, rep("ml", nrow(ml)))
    expect_equal(ml$estimate, mom$estimate, tolerance = 1e-7)
    # unweighted counts: the delta method gives the unbiased variance estimate
    if (length(args) == 0) expect_equal(ml$se, mom$se, tolerance = 1e-6)
    # (auto keeps the moment estimator: every row is inside)
    auto <- do.call(estimate_table, c(list(released, pub, by = c("a", "g")), args))
    expect_identical(auto$estimator, rep("moment", nrow(auto)))
  }
})

# A tiny released file whose moment estimate of one count is negative: a
# single key perturbed with a strong matrix, few records.
boundary_file <- function() {
  df <- data.frame(a = c(rep("p", 12), rep("q", 2), rep("r", 6)), y = c(1:12, 3, 4, 2 * (1:6)))
  cf <- cell_frequencies(df, "a")
  plan <- pram_plan_vars(cf, list(a = strong_matrix(3, 0.6)))
  released <- df
  # a release in which no record is released as "q"
  released$a[13:14] <- c("p", "r")
  list(df = df, plan = plan, released = released, pub = publish_plan(plan, released = released))
}

test_that("at the boundary the ML estimate maximizes the likelihood and meets the Kuhn-Tucker conditions", {
  bf <- boundary_file()
  mom <- estimate_table(bf$released, bf$pub, by = "a", estimator = "moment")
  expect_lt(mom$estimate[mom$a == "q"], 0)
  expect_identical(mom$outside, c(FALSE, TRUE, FALSE))
  expect_identical(mom$estimator, rep("moment", 3))
  expect_identical(estimate_table(bf$released, bf$pub, by = "a"), mom)
  expect_match(format(mom), "outside the parameter space", all = FALSE)
  auto <- estimate_table(bf$released, bf$pub, by = "a", estimator = "auto")
  expect_identical(auto$estimator, c("moment", "ml", "moment"))
  expect_identical(auto$outside, c(FALSE, TRUE, FALSE))
  expect_gte(auto$estimate[2], 0)
  ml <- estimate_table(bf$released, bf$pub, by = "a", estimator = "ml")
  p <- strong_matrix(3, 0.6)
  m <- as.numeric(table(factor(bf$released$a, c("p", "q", "r"))))
  fit <- ml$estimate
  expect_equal(sum(fit), 20)
  loglik <- function(x) sum(m[m > 0] * log(drop(p %*% x)[m > 0]))
  best <- stats::optim(c(0, 0), function(a) -loglik(20 * c(1, exp(a)) / (1 + sum(exp(a)))), method = "BFGS",
                       control = list(reltol = 1e-15, maxit = 10000))
  expect_gte(loglik(fit), -best$value - 1e-8)
  # Kuhn-Tucker: the score is 1 on the free states and at most 1 at zero
  score <- drop(crossprod(p, m / drop(p %*% fit)))
  expect_equal(score[fit > 0], rep(1, sum(fit > 0)), tolerance = 1e-6)
  expect_true(all(score[fit == 0] <= 1 + 1e-6))
  expect_identical(auto$estimate[2], ml$estimate[2])
  # its limits: the moment estimator's, cut to [0, Inf)
  expect_equal(auto$lower[2], max(0, mom$lower[2]))
  expect_equal(auto$upper[2], max(auto$lower[2], mom$upper[2]))
  expect_equal(auto$lower[-2], mom$lower[-2])
})

test_that("a mean outside the parameter space gets the maximum likelihood mean, within the values' range", {
  bf <- boundary_file()
  mom <- estimate_table(bf$released, bf$pub, by = "a", value = "y", stat = "mean", estimator = "moment")
  # the ML count of q is 0: its mean is not estimable, and says so
  expect_warning(auto <- estimate_table(bf$released, bf$pub, by = "a", value = "y", stat = "mean", estimator = "auto"),
                 class = "sdcRisk_warning_not_estimable")
  expect_identical(auto$estimator, c("moment", "ml", "moment"))
  expect_true(is.na(auto$estimate[2]))
  expect_identical(auto$estimate[-2], mom$estimate[-2])
  # means outside the values' range: lo + (hi - lo) A / (A + B) with the
  # fitted amounts A of y - lo and B of hi - y
  bf$released$y[bf$released$a == "r"] <- 100
  bf$released$y[bf$released$a == "p"] <- 0
  mom <- estimate_table(bf$released, bf$pub, by = "a", value = "y", stat = "mean", estimator = "moment")
  suppressWarnings(auto <- estimate_table(bf$released, bf$pub, by = "a", value = "y", stat = "mean", estimator = "auto"))
  out <- auto$estimator == "ml" & !is.na(auto$estimate)
  expect_true(any(mom$estimate < 0 | mom$estimate > 100))
  expect_true(any(out))
  expect_true(all(auto$estimate[out] >= 0 & auto$estimate[out] <= 100))
  expect_true(all(is.finite(auto$se[out])))
  b <- bf$released
  b$hi <- 100 - b$y
  fit_a <- estimate_table(b, bf$pub, by = "a", value = "y", stat = "total", estimator = "ml")
  fit_b <- estimate_table(b, bf$pub, by = "a", value = "hi", stat = "total", estimator = "ml")
  expect_equal(auto$estimate[out], (100 * fit_a$estimate / (fit_a$estimate + fit_b$estimate))[out])
})

test_that("block plans: ML per block and group, equal to the moment estimator inside", {
  df <- data.frame(k = rep(c("a", "b", "c", "d"), c(40, 30, 50, 60)), g = rep(c("x", "y"), 90))
  cf <- cell_frequencies(df, "k")
  plan <- pram_plan(cf, list(1:4), matrix = list(strong_matrix(4, 0.85)))
  set.seed(2)
  released <- pram_apply(df, "k", plan)
  pub <- publish_plan(plan, released = released)
  mom <- estimate_table(released, pub, by = c("k", "g"), estimator = "moment")
  ml <- estimate_table(released, pub, by = c("k", "g"), estimator = "ml")
  expect_true(all(mom$estimate > 0)) # inside the parameter space at this seed
  expect_equal(ml$estimate, mom$estimate, tolerance = 1e-7)
  expect_equal(ml$se, mom$se, tolerance = 1e-6)
  # IFPR block with a negative estimate: ML at the boundary, non-negative
  set.seed(1)
  rel <- ifpr(pums_md[1:2000, ], c("sex", "age", "race"), xi = 0.3)
  est <- estimate_table(rel$data, publish_plan(rel), by = c("race", "education"), estimator = "auto")
  expect_true(all(est$estimate[est$estimator == "ml"] >= 0))
  expect_true(any(est$estimator == "ml"))
})

test_that("maximum likelihood on more than 1,000 rows says so; the default flags them and refits none", {
  set.seed(1)
  keys <- c("sex", "age", "race", "marital", "puma")
  rel <- ifpr(pums_md[1:10000, ], keys, xi = 0.3, partition = list(sex = "keep"))
  pub <- publish_plan(rel)
  expect_no_message(mom <- estimate_table(rel$data, pub, by = keys, weights = "weight"))
  expect_gt(sum(mom$outside), 1000)
  expect_identical(unique(mom$estimator), "moment")
  expect_message(auto <- suppressWarnings(estimate_table(rel$data, pub, by = keys, weights = "weight", estimator = "auto")),
                 class = "sdcRisk_message_ml_rows")
  expect_identical(auto$outside, mom$outside)
  expect_identical(auto$estimate[!mom$outside], mom$estimate[!mom$outside])
  ml <- auto$estimator == "ml"
  expect_true(all(ml <= mom$outside))
  expect_true(all(auto$estimate[ml] >= 0, na.rm = TRUE))
  # few rows outside: no message
  expect_no_message(suppressWarnings(estimate_table(rel$data, pub, by = c("race", "marital"), weights = "weight",
                                                    estimator = "auto")))
})
