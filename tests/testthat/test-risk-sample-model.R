# Estimated population counts: E[1 / F | f] under the negative binomial
# model (sdcMicro's individual risk) and the Poisson log-linear model
# (Skinner and Shlomo 2008), against sdcMicro, independent computations and
# Monte Carlo.

# A sample of three keys with sampling weights, as a survey would have.
survey_sample <- function(n = 400) {
  set.seed(5)
  d <- data.frame(
    a = sample(c("x", "y", "z"), n, TRUE, prob = c(0.6, 0.3, 0.1)),
    b = sample(1:4, n, TRUE),
    c = sample(c("u", "v"), n, TRUE, prob = c(0.8, 0.2))
  )
  d$w <- stats::runif(n, 5, 40)
  d
}

# The risk at a = t_j of every cell of a plan that changes nothing: t_j
# E[1 / F_j | t_j] R_j(t_j, t) = E[1 / F_j | t_j].
unperturbed_risk <- function(cf, population, data = NULL) {
  plan <- pram_plan(cf, list())
  mr <- match_risk(plan, a = seq_len(max(cf$cells$count)), population = population, target_in_file = "unknown")
  mr$risk[mr$a == mr$count]
}

test_that("negative binomial model: the risk without PRAM at a = t is sdcMicro's individual risk (exactly where sdcMicro's formula is exact)", {
  skip_if_not_installed("sdcMicro")
  d <- survey_sample()
  keys <- c("a", "b", "c")
  cf <- cell_frequencies(d, keys)
  ours <- unperturbed_risk(cf, population_model("negbin", weights = d$w))
  mr <- sdcMicro::measure_risk(d, keyVars = keys, w = "w")
  theirs <- mr$Res[!duplicated(cf$cell_id), "risk"][order(cf$cell_id[!duplicated(cf$cell_id)])]
  f <- cf$cells$count
  # t = 1, 2: sdcMicro's closed forms, the same model
  expect_equal(ours[f <= 2], theirs[f <= 2], tolerance = 1e-12)
  # t >= 3: sdcMicro approximates p / (t - 1 + p); the exact expectation
  # is close, and E[1 / F] lies between 1 / E[F] and 1 / t
  big <- f >= 3
  expect_true(any(big))
  expect_equal(ours[big], theirs[big], tolerance = 0.01)
  big_f <- tapply(d$w, cf$cell_id, sum)
  expect_true(all(ours >= 1 / big_f * (1 - 1e-12) & ours <= 1 / f * (1 + 1e-12)))
  # the same with a sampling fraction: F-hat = t / fraction
  with_fraction <- unperturbed_risk(cf, population_model("negbin", fraction = 0.05))
  series <- vapply(f, function(t) sum(stats::dnbinom(0:20000, t, 0.05) / (t + 0:20000)), numeric(1))
  expect_equal(with_fraction, series, tolerance = 1e-12)
})

test_that("negative binomial model: E[1 / F | t] equals the defining series and Monte Carlo draws of F", {
  f <- c(1, 2, 3, 7, 30, 200)
  p <- c(0.9, 0.5, 0.2, 0.05, 0.01, 0.3)
  got <- sdcRisk:::core_call(sdcRisk:::cpp_population, "negbin", f, p)
  series <- vapply(seq_along(f), function(i) {
    y <- 0:200000
    sum(stats::dnbinom(y, f[i], p[i]) / (f[i] + y))
  }, numeric(1))
  expect_equal(got, series, tolerance = 1e-12)
  set.seed(9)
  n <- 2e5
  for (i in seq_along(f)) {
    draws <- 1 / (f[i] + stats::rnbinom(n, f[i], p[i]))
    expect_lt(abs(mean(draws) - got[i]), 5 * stats::sd(draws) / sqrt(n))
  }
})

test_that("log-linear model: the estimate follows an independent Poisson GLM fit and E[1 / (t + Poisson)]", {
  d <- survey_sample(300)
  keys <- c("a", "b", "c")
  cf <- cell_frequencies(d, keys)
  pi <- 0.02
  # IPF to the maximum likelihood fit (the default stops at 0.01 records)
  local_package_function("loglinear_ipf", list(eps = 1e-9, iter = 10000L))
  ours <- unperturbed_risk(cf, population_model("loglinear", fraction = pi))
  # every combination of the categories, the sample counts, a GLM with all
  # two-way interactions (the same maximum likelihood fit as IPF)
  full <- expand.grid(a = unique(cf$cells$a), b = unique(cf$cells$b), c = unique(cf$cells$c), stringsAsFactors = FALSE)
  key_of <- function(x) paste(x$a, x$b, x$c)
  full$n <- 0
  full$n[match(key_of(cf$cells), key_of(full))] <- cf$cells$count
  fit <- stats::glm(n ~ (factor(a) + factor(b) + factor(c))^2, family = stats::poisson(), data = full,
                    control = stats::glm.control(epsilon = 1e-12, maxit = 100))
  mu <- unname(stats::fitted(fit)[match(key_of(cf$cells), key_of(full))])
  lambda <- (1 - pi) * mu / pi
  f <- cf$cells$count
  want <- vapply(seq_along(f), function(j) {
    x <- 0:ceiling(lambda[j] + 40 * sqrt(lambda[j]) + 50)
    sum(stats::dpois(x, lambda[j]) / (f[j] + x))
  }, numeric(1))
  expect_equal(ours, want, tolerance = 1e-6)
  expect_equal(ours[f == 1], -expm1(-lambda[f == 1]) / lambda[f == 1], tolerance = 1e-6)
  # main effects only, by the margins given as sets of keys
  main <- unperturbed_risk(cf, population_model("loglinear", fraction = pi, margins = list("a", "b", "c")))
  expect_equal(main, unperturbed_risk(cf, population_model("loglinear", fraction = pi, margins = 1)))
  expect_false(isTRUE(all.equal(main, ours)))
})

test_that("log-linear model: on a population drawn from the model, the estimated risk of sample uniques has small bias", {
  # Skinner and Shlomo's measure: the sum over sample uniques of 1 / F,
  # estimated by the sum of E[1 / F | t = 1]; a log-linear population with
  # an a x b interaction, Poisson samples of 5%, the model fitted each time
  set.seed(21)
  grid <- expand.grid(a = 1:6, b = 1:8, c = 1:5)
  mu <- exp(1.5 + 0.3 * grid$a - 0.2 * grid$b + 0.1 * grid$c + 0.05 * grid$a * grid$b)
  true <- est <- numeric(30)
  for (r in seq_along(true)) {
    big_f <- stats::rpois(nrow(grid), mu)
    f <- stats::rbinom(nrow(grid), big_f, 0.05)
    keep <- f > 0
    d <- grid[rep(which(keep), f[keep]), ]
    cf <- cell_frequencies(d, c("a", "b", "c"))
    risk <- unperturbed_risk(cf, population_model("loglinear", fraction = 0.05))
    cell_f <- big_f[keep][match(paste(cf$cells$a, cf$cells$b, cf$cells$c), paste(grid$a, grid$b, grid$c)[keep])]
    su <- cf$cells$count == 1
    true[r] <- sum(1 / cell_f[su])
    est[r] <- sum(risk[su])
  }
  # the relative bias of the estimated sum, within its Monte Carlo error
  bias <- mean(est - true)
  expect_lt(abs(bias), max(0.1 * mean(true), 4 * stats::sd(est - true) / sqrt(length(true))))
})

test_that("an estimated risk is labelled as an estimate with its model", {
  d <- survey_sample(200)
  cf <- cell_frequencies(d, c("a", "b"))
  plan <- pram_plan(cf, list(which(cf$cells$count <= 3)), theta = 0.5)
  expect_snapshot({
    population_model("negbin", weights = "w")
    population_model("loglinear", fraction = 0.01)
    max_match_risk(plan, population = population_model("negbin", weights = d$w), target_in_file = "unknown")
    max_match_risk(plan, population = population_model("loglinear", fraction = 0.01, margins = 1),
                   target_in_file = "unknown")
  })
})

test_that("bad sampling weights and models get classed errors naming the argument", {
  d <- survey_sample(50)
  cf <- cell_frequencies(d, c("a", "b"))
  plan <- pram_plan(cf, list(which(cf$cells$count <= 3)), theta = 0.5)
  mx <- function(model) max_match_risk(plan, population = model, target_in_file = "unknown")
  expect_error(population_model("negbin"), class = "sdcRisk_error_population_model")
  expect_error(population_model("negbin", weights = d$w, fraction = 0.1), class = "sdcRisk_error_population_model")
  expect_error(population_model("negbin", fraction = 0), class = "sdcRisk_error_population_model")
  expect_error(population_model("negbin", fraction = 1.5), class = "sdcRisk_error_population_model")
  expect_error(population_model("poisson", fraction = 0.1), class = "sdcRisk_error_argument")
  expect_error(population_model("loglinear", fraction = 0.1, margins = 3), class = "sdcRisk_error_population_model")
  for (bad in list(replace(d$w, 3, NA), replace(d$w, 3, 0), replace(d$w, 3, -2), replace(d$w, 3, Inf), "w" == 1)) {
    expect_error(population_model("negbin", weights = bad), class = "sdcRisk_error_sampling_weights")
  }
  expect_error(mx(population_model("negbin", weights = d$w[-1])), class = "sdcRisk_error_sampling_weights")
  expect_error(mx(population_model("negbin", weights = "w")), class = "sdcRisk_error_sampling_weights")
  expect_error(mx(population_model("negbin", weights = rep(0.5, 50))), class = "sdcRisk_error_sampling_weights")
  expect_error(mx(population_model("loglinear", fraction = 0.1, margins = list(c("a", "zz")))),
               class = "sdcRisk_error_population_model")
  # a table whose log-linear fit has no maximum: IPF converges slowly, and
  # not within a budget of 5 sweeps to 1e-9 records
  nc <- data.frame(x = c(1, 2, 2, 1, 1, 2), y = c(2, 1, 2, 1, 2, 1), z = c(1, 1, 1, 2, 2, 2))
  ncf <- cell_frequencies(nc, c("x", "y", "z"))
  nplan <- pram_plan(ncf, list(1:6), theta = 0.5)
  local_package_function("loglinear_ipf", list(eps = 1e-9, iter = 5L))
  expect_error(max_match_risk(nplan, population = population_model("loglinear", fraction = 0.1), target_in_file = "unknown"),
               class = "sdcRisk_error_population_model")
  expect_snapshot(error = TRUE, {
    population_model("negbin")
    mx(population_model("negbin", weights = rep(0.5, 50)))
    max_match_risk(nplan, population = population_model("loglinear", fraction = 0.1), target_in_file = "unknown")
  })
})
