# Monte Carlo over draws of the same plan, on the ACS fixtures: the moment
# estimates are unbiased, their variance estimates match the variance over
# draws, and the 95% intervals of estimate_table() and estimate_glm() cover
# the original file's values at 95% +- 1.5%, for key x key, key x non-key
# and model estimands. A smaller version of bench/bench_estimate.R (1,000
# draws per plan, every row, the table in bench/README.md), with the same
# machinery (mc_draws(), table_est(), glm_est() in helper-estimate.R);
# tolerances add three Monte Carlo standard errors of the number of draws
# used here.

mc_reps <- 80

# Coverage per family of estimands within 95% +- 1.5%, with three Monte
# Carlo standard errors of the draws (from the spread of each draw's share
# of covered rows, so that rows of one draw may be correlated); every row
# at 90% at least, less three standard errors of one row's coverage;
# unbiased estimates (the default moment estimator, every row, those outside
# the parameter space in some draws included) within four Monte Carlo
# standard errors; mean variance estimate over the variance of the
# estimates (rows never outside) within four standard errors of a variance
# ratio.
expect_coverage <- function(all) {
  all <- all[!is.na(all$truth), ]
  for (fam in unique(all$family)) {
    x <- all[all$family == fam, ]
    per_draw <- tapply(x$covered, x$draw, mean)
    mc_se <- stats::sd(per_draw) / sqrt(length(per_draw))
    expect_lte(abs(mean(per_draw) - 0.95), 0.015 + 3 * mc_se)
    by_row <- tapply(x$covered, x$id, mean)
    expect_gte(min(by_row), 0.90 - 3 * sqrt(0.9 * 0.1 / mc_reps))
  }
  # the default estimator keeps the moment estimate in every row
  expect_true(all(all$estimator %in% c("moment", "exact", "corrected")))
  rows <- split(all, all$id)
  bias_z <- vapply(rows, function(x) (mean(x$estimate) - x$truth[1]) / (stats::sd(x$estimate) / sqrt(nrow(x)) + 1e-12), 0)
  expect_lt(max(abs(bias_z)), 4)
  # the variance estimates, in rows never outside the parameter space (a
  # mean whose count comes near 0 has heavy tails)
  rows <- rows[vapply(rows, function(x) !any(x$outside), TRUE)]
  ratio <- sum(vapply(rows, function(x) mean(x$se^2), 0)) / sum(vapply(rows, function(x) stats::var(x$estimate), 0))
  expect_lt(abs(ratio - 1), 4 * sqrt(2 / (mc_reps - 1)))
}

test_that("Monte Carlo on an IFPR release of the Massachusetts excerpt: unbiased, and 95% intervals cover", {
  ma <- load_acs("ma2019", values = TRUE)
  ma$BACH <- !is.na(ma$EDU) & ma$EDU >= 9
  keys <- c("SEX", "AGEP", "RAC1P", "MSP", "PUMA")
  set.seed(1)
  rel <- ifpr(ma, keys, xi = 0.3, partition = list(SEX = "keep"))
  pub <- publish_plan(rel)
  estimands <- list(
    table_est("key x key", c("MSP", "SEX"), weights = "PWGTP", truth_fun = function(d) sum(d$PWGTP)),
    # every row, those of one to five records included
    table_est("key x key", "RAC1P", weights = "PWGTP", truth_fun = function(d) sum(d$PWGTP), min_count = 1),
    table_est("key x non-key", "MSP", value = "PINCP", stat = "mean", na_rm = TRUE,
              truth_fun = function(d) mean(d$PINCP, na.rm = TRUE)),
    table_est("key x non-key", "MSP", value = "BACH", stat = "proportion", truth_fun = function(d) mean(d$BACH)),
    glm_est(BACH ~ SEX + I(MSP == "1") + I(AGEP >= 65), stats::binomial())
  )
  expect_coverage(mc_draws(ma, keys, rel$plan, pub, estimands, mc_reps, seed = 2))
})

test_that("Monte Carlo on a stratified per-variable release of the national excerpt: unbiased, and 95% intervals cover", {
  nat <- load_acs("national2019", values = TRUE)
  set.seed(3)
  nat <- nat[sample.int(nrow(nat), 8000), ]
  keys <- c("SEX", "RAC1P", "MSP")
  rel <- pram_release(nat, keys, vars = c("RAC1P", "MSP"), strata = "SEX", pd = 0.85, alpha = 0.5)
  pub <- publish_plan(rel)
  estimands <- list(
    # every row, those of one or two records included
    table_est("key x key", c("RAC1P", "MSP"), truth_fun = nrow, min_count = 1),
    table_est("key x non-key", "RAC1P", value = "PINCP", stat = "mean", na_rm = TRUE, weights = "PWGTP",
              truth_fun = function(d) stats::weighted.mean(d$PINCP, d$PWGTP, na.rm = TRUE)),
    # (one perturbed key: its 7 categories make 7 rows a record in the fit)
    glm_est(log1p(pmax(PINCP, 0)) ~ I(MSP == "1") + SEX + I(MSP %in% c("2", "3", "4")), stats::gaussian())
  )
  expect_coverage(mc_draws(nat, keys, rel$plan, pub, estimands, mc_reps, seed = 4))
})
