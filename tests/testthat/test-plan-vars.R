# pram_plan_vars(): per-variable PRAM plans

vars_data <- function(n = 60, seed = 1) {
  set.seed(seed)
  data.frame(
    sex = sample(c("F", "M"), n, TRUE),
    age = factor(sample(c("young", "middle", "old"), n, TRUE), levels = c("young", "middle", "old")),
    region = sample(1:3, n, TRUE)
  )
}

random_stochastic <- function(k, by = c("columns", "rows")) {
  by <- match.arg(by)
  p <- matrix(stats::rexp(k * k), k, k)
  if (by == "columns") sweep(p, 2, colSums(p), "/") else p / rowSums(p)
}

test_that("pram_plan_vars() stores column-stochastic matrices in cell_frequencies() order", {
  cf <- cell_frequencies(vars_data(), c("sex", "age", "region"))
  set.seed(2)
  p_age <- random_stochastic(3)
  plan <- pram_plan_vars(cf, list(age = p_age))
  expect_s3_class(plan, c("pram_plan_vars", "pram_plan_any"))
  expect_identical(plan$vars, "age")
  expect_identical(plan$strata, character(0))
  expect_equal(unname(plan$matrices[[1]]$age), p_age, tolerance = 1e-15)
  expect_identical(rownames(plan$matrices[[1]]$age), c("young", "middle", "old"))
  expect_identical(plan$stratum_of_cell, rep(1L, nrow(cf$cells)))
  # codes reproduce the key values of every cell
  expect_identical(plan$levels$age[plan$codes$age], as.character(cf$cells$age))
  expect_identical(as.integer(plan$levels$region[plan$codes$region]), cf$cells$region)
})

test_that("orientation = 'rows' transposes sdcMicro's matrices; names reorder", {
  cf <- cell_frequencies(vars_data(), c("sex", "age", "region"))
  set.seed(3)
  rows <- random_stochastic(3, "rows")
  a <- pram_plan_vars(cf, list(age = rows), orientation = "rows")
  expect_equal(unname(a$matrices[[1]]$age), t(rows), tolerance = 1e-15)
  # the same matrix with its categories in another order, named
  perm <- c(3, 1, 2)
  named <- rows[perm, perm]
  dimnames(named) <- list(c("young", "middle", "old")[perm], c("young", "middle", "old")[perm])
  b <- pram_plan_vars(cf, list(age = named), orientation = "rows")
  expect_equal(b$matrices, a$matrices, tolerance = 1e-15)
  expect_error(pram_plan_vars(cf, list(age = rows)), class = "sdcRisk_error_matrix")
  expect_snapshot(error = TRUE, pram_plan_vars(cf, list(age = rows)))
})

test_that("pram_plan_vars() refuses malformed matrices with classed errors", {
  cf <- cell_frequencies(vars_data(), c("sex", "age", "region"))
  ok <- diag(3)
  expect_error(pram_plan_vars(cf, list(agex = ok)), class = "sdcRisk_error_matrix")
  expect_error(pram_plan_vars(cf, list(age = diag(2))), class = "sdcRisk_error_matrix")
  expect_error(pram_plan_vars(cf, list(age = ok * 2)), class = "sdcRisk_error_matrix")
  bad <- ok
  bad[1, 1] <- NA
  expect_error(pram_plan_vars(cf, list(age = bad)), class = "sdcRisk_error_matrix")
  named <- ok
  dimnames(named) <- list(c("a", "b", "c"), NULL)
  expect_error(pram_plan_vars(cf, list(age = named)), class = "sdcRisk_error_matrix")
  expect_error(pram_plan_vars(cf, list(ok)), class = "sdcRisk_error_matrix")
  expect_error(pram_plan_vars(list(), list(age = ok)), class = "sdcRisk_error_argument")
  expect_snapshot(error = TRUE, pram_plan_vars(cf, list(age = diag(2))))
})

test_that("strata: one set of matrices per stratum, named as pram_strata() names them", {
  cf <- cell_frequencies(vars_data(200), c("sex", "age", "region"))
  st <- pram_strata(cf, c("sex", "region"))
  expect_identical(nrow(st), 6L)
  expect_identical(sum(st$records), 200L)
  expect_identical(st$label[1], "sex=F, region=1")
  set.seed(4)
  mats <- lapply(st$label, function(l) list(age = random_stochastic(3)))
  names(mats) <- rev(st$label) # order does not matter
  plan <- pram_plan_vars(cf, mats, strata = c("sex", "region"))
  expect_identical(plan$strata, c("sex", "region"))
  expect_identical(plan$stratum_labels, st$label)
  lab <- paste0("sex=", cf$cells$sex, ", region=", cf$cells$region)
  expect_identical(plan$stratum_labels[plan$stratum_of_cell], lab)
  for (s in seq_along(st$label)) {
    expect_equal(unname(plan$matrices[[s]]$age), unname(mats[[st$label[s]]]$age), tolerance = 1e-15)
  }
  expect_error(pram_plan_vars(cf, mats[-1], strata = c("sex", "region")), class = "sdcRisk_error_matrix")
  expect_error(pram_plan_vars(cf, mats, strata = c("sex", "age")), class = "sdcRisk_error_matrix")
  expect_error(pram_plan_vars(cf, mats, strata = "nokey"), class = "sdcRisk_error_strata")
  expect_error(pram_plan_vars(cf, mats), class = "sdcRisk_error_matrix")
  expect_snapshot(error = TRUE, pram_plan_vars(cf, mats[-1], strata = c("sex", "region")))
})

test_that("pram_plan_vars() prints what it perturbs", {
  cf <- cell_frequencies(vars_data(), c("sex", "age", "region"))
  expect_snapshot(pram_plan_vars(cf, list(age = diag(3), region = diag(3))))
})
