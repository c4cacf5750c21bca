# estimate_glm(): the corrected estimating equation. Its score is unbiased
# for the original file's score at every beta (brute force over every
# release of a tiny file); without a key in the model it is glm() with the
# robust variance; errors are classed.

# The corrected score sum_r psi*_r(beta) of a released file at a fixed beta,
# through the pairs and expanded records of estimate_glm().
corrected_score <- function(formula, released, pub, beta, family) {
  ns <- asNamespace("sdcRisk")
  keys <- vapply(pub$keys, `[[`, "", "name")
  vars <- all.vars(formula)
  codes <- ns$released_codes(pub, released)
  model_keys <- intersect(keys, vars)
  pairs <- ns$model_pairs(pub, codes, model_keys, environment())
  ex <- ns$expand_records(released, vars, pairs, pub, model_keys)
  mf <- stats::model.frame(formula, ex)
  x <- stats::model.matrix(formula, mf)
  y <- as.numeric(stats::model.response(mf))
  drop(crossprod(x, pairs$h * (y - family$linkinv(drop(x %*% beta)))))
}

test_that("brute force: the corrected score is unbiased for the original score at any beta (blocks and per-variable)", {
  df <- data.frame(a = c("p", "p", "q", "q", "r", "r", "r", "r"), b = c(1, 2, 1, 2, 1, 2, 2, 2),
                   x = c(0.5, 1.2, -0.3, 2, 1, 0.1, -1, 0.7), y = c(1, 0, 1, 1, 0, 0, 1, 0))
  cf <- cell_frequencies(df, c("a", "b"))
  # the per-variable plan on five records (3^5 releases)
  small <- df[c(1, 3, 4, 5, 6), ]
  plans <- list(
    blocks = pram_plan(cf, list(1:3, 4:5), theta = c(0.8, NA), matrix = list(NULL, matrix(c(0.7, 0.3, 0.2, 0.8), 2))),
    vars = pram_plan_vars(cell_frequencies(small, c("a", "b")),
                          list(a = matrix(c(0.8, 0.1, 0.1, 0.2, 0.7, 0.1, 0.1, 0.2, 0.7), 3)))
  )
  models <- list(
    list(f = y ~ a + x, family = stats::binomial(), beta = c(0.2, -0.5, 0.4, 0.3)),
    list(f = I(a == "q") ~ x + b, family = stats::binomial(), beta = c(-0.3, 0.6, 0.2)),
    list(f = x ~ a * b, family = stats::gaussian(), beta = c(0.1, 0.2, -0.3, 0.4, 0.5, -0.6))
  )
  for (kind in names(plans)) {
    plan <- plans[[kind]]
    if (kind == "vars") df <- small
    released <- pram_apply(df, c("a", "b"), plan)
    pub <- publish_plan(plan, released = released)
    rel <- if (kind == "blocks") all_releases(df, c("a", "b"), plan) else all_releases_vars(df, plan)
    prob <- vapply(rel, `[[`, 0, "prob")
    for (m in models) {
      scores <- vapply(rel, function(r) corrected_score(m$f, r$data, with_margins(pub, r$data), m$beta, m$family),
                       numeric(length(m$beta)))
      x0 <- stats::model.matrix(m$f, df)
      y0 <- as.numeric(stats::model.response(stats::model.frame(m$f, df)))
      original <- drop(crossprod(x0, y0 - m$family$linkinv(drop(x0 %*% m$beta))))
      expect_equal(unname(drop(scores %*% prob)), unname(original), tolerance = 1e-10, info = paste(kind, deparse(m$f)))
    }
  }
})

test_that("without a key in the model the fit is glm() with its robust variance, and no perturbation variance", {
  set.seed(1)
  rel <- ifpr(pums_md[1:3000, ], c("sex", "age", "race"), xi = 0.3)
  pub <- publish_plan(rel)
  d <- rel$data
  for (fam in list(stats::gaussian(), stats::poisson())) {
    f <- if (fam$family == "gaussian") weight ~ education else I(round(weight / 50)) ~ education
    fit <- estimate_glm(f, d, pub, family = fam)
    ref <- stats::glm(f, d, family = fam, control = stats::glm.control(epsilon = 1e-14, maxit = 100))
    expect_equal(coef(fit), coef(ref), tolerance = 1e-8)
    x <- stats::model.matrix(ref)
    bread <- solve(crossprod(x, x * ref$weights))
    meat <- crossprod(x * stats::residuals(ref, "response"))
    # (glm() keeps the working weights of its last iteration)
    expect_equal(unname(vcov(fit, type = "sampling")), unname(bread %*% meat %*% bread), tolerance = 1e-6)
    expect_equal(unname(vcov(fit, type = "perturbation")), matrix(0, ncol(x), ncol(x)), tolerance = 1e-8)
  }
})

test_that("the total variance is the perturbation's plus the sampling's; summary, confint, print", {
  set.seed(1)
  d <- pums_md[1:4000, ]
  rel <- pram_release(d, c("sex", "race", "marital"), vars = c("race", "marital"), pd = 0.8)
  pub <- publish_plan(rel)
  fit <- estimate_glm(I(marital == "Married") ~ I(race == "White") + sex, rel$data, pub, family = "binomial")
  expect_equal(vcov(fit), vcov(fit, "perturbation") + vcov(fit, "sampling"))
  s <- summary(fit)
  expect_identical(colnames(s$coefficients), c("Estimate", "Std. Error", "z value", "Pr(>|z|)"))
  expect_equal(unname(s$coefficients[, 2]), unname(sqrt(diag(vcov(fit)))))
  ci <- confint(fit, "sexFemale", level = 0.9, type = "perturbation")
  expect_equal(unname(ci[1, ]), unname(coef(fit)["sexFemale"] + c(-1, 1) * stats::qnorm(0.95) * sqrt(vcov(fit, "perturbation")["sexFemale", "sexFemale"])))
  expect_identical(nobs(fit), 4000L)
  expect_output(print(s), "Corrected binomial regression")
  expect_output(print(fit), "Coefficients")
})

test_that("a record's pairs with the same covariates and response are merged, their weights added", {
  x <- cbind(1, c(0, 1, 0, 1, 1, 0), c(2.5, 2.5, 2.5, 3, 3, 3))
  y <- c(1, 1, 1, 0, 0, 1)
  h <- c(0.5, 0.25, -0.1, 0.7, 0.2, 1)
  record <- c(1L, 1L, 1L, 2L, 2L, 2L)
  cp <- sdcRisk:::collapse_pairs(x, y, h, record)
  # record 1: rows 1 and 3 are alike; record 2: rows 4 and 5
  expect_identical(cp$first, c(1L, 2L, 4L, 6L))
  expect_equal(cp$h, c(0.4, 0.25, 0.9, 1))
  expect_identical(cp$record, c(1L, 1L, 2L, 2L))
  expect_equal(cp$x, x[c(1, 2, 4, 6), ])
})

test_that("bad models are classed errors", {
  set.seed(3)
  d <- pums_md[1:2000, ]
  rel <- pram_release(d, c("sex", "race"), vars = "race", pd = 0.8)
  pub <- publish_plan(rel)
  r <- rel$data
  expect_error(estimate_glm(~ race, r, pub), class = "sdcRisk_error_model")
  expect_error(estimate_glm(weight ~ race, r, pub, family = stats::binomial("probit")), class = "sdcRisk_error_model")
  expect_error(estimate_glm(weight ~ race, r, pub, family = stats::Gamma()), class = "sdcRisk_error_model")
  expect_error(estimate_glm(weight ~ nothing, r, pub), class = "sdcRisk_error_unknown_key")
  expect_error(estimate_glm(weight ~ sex, r, pub, weights = "race"), class = "sdcRisk_error_weight")
  expect_error(estimate_glm(weight ~ sex, r[-1, ], pub), class = "sdcRisk_error_publication_mismatch")
  expect_error(estimate_glm(weight ~ sex, r, pub, family = "binomial"), class = "sdcRisk_error_model")
  # categories no record has (by the corrected weights): named in the error
  expect_snapshot(error = TRUE, estimate_glm(weight ~ race, r, pub))
})

test_that("estimate_glm() and simex::mcsimex() correct one misclassified covariate alike (per-variable PRAM of marital)", {
  skip_if_not_installed("simex")
  # one perturbed key, a covariate of a logistic model: where both apply.
  # Both estimate the original file's fit from the released file, by
  # different methods: estimate_glm() exactly (the corrected likelihood),
  # mcsimex() approximately (it adds more misclassification and extrapolates
  # back to none with a quadratic, whose extrapolation bias is not zero).
  md <- pums_md[seq(1, nrow(pums_md), by = 8), ]
  md$degree <- md$education >= "Bachelor's degree"
  set.seed(7)
  rel <- pram_release(md, c("sex", "race", "marital"), vars = "marital", pd = 0.8, alpha = 0.5)
  released <- rel$data
  fit <- estimate_glm(degree ~ marital + sex, released, publish_plan(rel), family = stats::binomial())
  original <- stats::glm(degree ~ marital + sex, md, family = stats::binomial())
  naive <- stats::glm(degree ~ marital + sex, released, family = stats::binomial(), x = TRUE, y = TRUE)
  # mcsimex() takes P(released | original) with the levels as dimnames, as
  # the plan holds it (columns sum to 1)
  m <- rel$plan$matrices[[1]]$marital
  dimnames(m) <- list(levels(md$marital), levels(md$marital))
  set.seed(8)
  sim <- simex::mcsimex(naive, SIMEXvariable = "marital", mc.matrix = list(marital = m), B = 25, asymptotic = FALSE)
  se <- sqrt(diag(vcov(fit, "perturbation")))
  z <- function(b) (b - stats::coef(original)) / se
  # the correction matters here: the naive fit misses a coefficient by
  # more than 3 of the perturbation's standard errors
  expect_gt(max(abs(z(stats::coef(naive)))), 3)
  # both corrected fits are within 3 perturbation standard errors of the
  # original fit (a calibrated interval misses that by chance in 0.3% of
  # coefficients), every coefficient
  expect_lt(max(abs(z(coef(fit)))), 3)
  expect_lt(max(abs(z(stats::coef(sim)))), 3)
  # and they agree within one standard error, every coefficient: both
  # are functions of the same released file, so their difference is the
  # difference of the methods (simex's extrapolation bias and the Monte
  # Carlo error of its 25 simulations), not the perturbation's error
  # (measured: at most 0.4 standard errors)
  expect_lt(max(abs(coef(fit) - stats::coef(sim)) / se), 1)
})
