test_that("pram_matrix_invariant() reproduces sdcMicro's invariant matrix draw for draw", {
  skip_if_not_installed("sdcMicro")
  for (seed in 1:5) {
    set.seed(seed)
    x <- factor(sample(c("a", "b", "c", "d", "e"), 80, TRUE, c(8, 4, 2, 1, 1)), levels = c("a", "b", "c", "d", "e", "f"))
    pd <- runif(1, 0.3, 0.9)
    alpha <- runif(1)
    set.seed(100 + seed)
    res <- sdcMicro:::pramWORK(
      data = data.frame(x = x), variables = "x", strata_variables = NULL,
      params = list(pd = list(pd), alpha = list(alpha))
    )
    set.seed(100 + seed)
    p <- pram_matrix_invariant(x, pd = pd, alpha = alpha)
    expect_equal(t(p), attr(res, "pram_params")$x$Rs, tolerance = 1e-14, info = paste("seed", seed))
  }
})

test_that("invariant matrices are column-stochastic and keep the expected frequencies (Gouweleeuw et al. 1998)", {
  set.seed(3)
  freq <- c(a = 50, b = 20, c = 5, d = 0, e = 1)
  for (alpha in c(0, 0.3, 1)) {
    p <- pram_matrix_invariant(freq, pd = c(0.9, 0.8, 0.7, 0.6, 0.95), alpha = alpha)
    expect_equal(unname(colSums(p)), rep(1, 5), tolerance = 1e-15)
    expect_equal(drop(p %*% freq), freq, tolerance = 1e-12)
    expect_true(all(p >= 0))
    expect_identical(dimnames(p), list(names(freq), names(freq)))
  }
  expect_equal(pram_matrix_invariant(freq, pd = 1, alpha = 0.5), diag(5), ignore_attr = TRUE)
})

test_that("pram_matrix_argus() keeps with the retention probability and spreads over the band", {
  p <- pram_matrix_argus(6, retention = 0.7, bandwidth = 3)
  expect_equal(unname(colSums(p)), rep(1, 6))
  expect_equal(unname(diag(p)), rep(0.7, 6))
  # every category moves only to its bandwidth - 1 nearest, equally
  expect_equal(colSums(p > 0 & row(p) != col(p)), rep(2, 6), ignore_attr = TRUE)
  expect_equal(p[2:3, 1], c(0.15, 0.15), ignore_attr = TRUE)
  expect_equal(p[c(3, 5), 4], c(0.15, 0.15), ignore_attr = TRUE)
  expect_equal(p[4:5, 6], c(0.15, 0.15), ignore_attr = TRUE)
  full <- pram_matrix_argus(c("x", "y", "z"), retention = c(0.5, 0.8, 1))
  expect_equal(full[, "x"], c(x = 0.5, y = 0.25, z = 0.25))
  expect_equal(full[, "z"], c(x = 0, y = 0, z = 1))
})

test_that("matrix builders refuse bad parameters with classed errors", {
  expect_error(pram_matrix_invariant(c(a = 1, b = 2), pd = 1.5), class = "sdcRisk_error_argument")
  expect_error(pram_matrix_invariant(c(a = 1, b = 2), alpha = -1), class = "sdcRisk_error_argument")
  expect_error(pram_matrix_argus(4, retention = 0.5, bandwidth = 5), class = "sdcRisk_error_argument")
  expect_snapshot(error = TRUE, pram_matrix_argus(4, retention = 0.5, bandwidth = 1))
  expect_snapshot(error = TRUE, pram_matrix_invariant(c(a = 1, b = 2, c = 3), pd = c(0.5, 0.6)))
})
