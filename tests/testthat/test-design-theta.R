test_that("psi(1, theta) = psi(2, theta) = 3/7 at theta = 2/3", {
  expect_equal(psi(1, 2 / 3), 3 / 7)
  expect_equal(psi(2, 2 / 3), 3 / 7)
  # psi(1, .) >= psi(2, .) iff theta <= 2/3
  th <- seq(0.01, 0.99, by = 0.01)
  expect_identical(psi(1, th) >= psi(2, th), th <= 2 / 3 + 1e-12)
  expect_equal(psi(5, 0), 1 / 5)
  expect_equal(psi(3, 3), 0)
})

test_that("Nayak et al. Table 2: psi(1, theta), psi(2, theta), xi and minimum block size", {
  table2 <- data.frame(
    theta = c(0.4, 0.5, 2 / 3, 0.75, 0.8, 0.9, 0.95, 0.99),
    psi1 = c(0.789, 0.667, 0.429, 0.308, 0.238, 0.110, 0.052, 0.010),
    psi2 = c(0.476, 0.462, 0.429, 0.408, 0.395, 0.365, 0.350, 0.337),
    xi = c(0.789, 0.667, 0.429, 0.408, 0.395, 0.365, 0.350, 0.337),
    size = c(2, 2, 3, 4, 5, 10, 20, 100)
  )
  expect_equal(round(psi(1, table2$theta), 3), table2$psi1)
  expect_equal(round(psi(2, table2$theta), 3), table2$psi2)
  xi <- pmax(psi(1, table2$theta), psi(2, table2$theta))
  expect_equal(round(xi, 3), table2$xi)
  d <- ifpr_theta(xi, "all_matches")
  expect_equal(d$theta, table2$theta, tolerance = 1e-12)
  # 1 / (1 - 0.8) is 5.000000000000001 in floating point: the block size is 5
  expect_identical(d$block_size, as.integer(table2$size))
  expect_identical(ifpr_theta(psi(2, 0.8))$block_size, 5L)
})

test_that("ifpr_theta solves psi(1, theta) = xi (Goal 1) and h(theta) = xi (Goals 2, 3)", {
  xi <- c(0.05, 0.1, 0.2, 0.3, 0.5, 0.9)
  g1 <- ifpr_theta(xi, "sample_uniques")
  expect_equal(psi(1, g1$theta), xi, tolerance = 1e-12)
  expect_identical(g1$block_size, rep(2L, length(xi)))
  xi <- c(0.34, 0.35, 0.395, 0.42, 3 / 7, 0.5, 0.8)
  g2 <- ifpr_theta(xi, "unique_matches")
  h <- pmax(psi(1, g2$theta), psi(2, g2$theta))
  expect_equal(h, xi, tolerance = 1e-12)
  expect_true(all(g2$theta < 1))
  g3 <- ifpr_theta(xi, "all_matches")
  expect_equal(g3$theta, g2$theta)
  expect_identical(g3$block_size, as.integer(pmax(2, ceiling(1 / (1 - g3$theta) - 1e-9))))
  expect_identical(ifpr_theta(0.395)$block_size, 5L)
  expect_equal(ifpr_theta(0.395)$theta, 0.79905, tolerance = 1e-5)
})

test_that("Ghatak et al. Table 1: all 70 minimum block sizes K1(xi, T1)", {
  table1 <- rbind(
    c(11, 9, 8, 7, 6, 5, 5),
    c(6, 5, 5, 4, 4, 3, 3),
    c(5, 4, 3, 3, 3, 2, 2),
    c(4, 3, 3, 2, 2, 2, 2),
    c(3, 3, 2, 2, 2, 2, 2),
    c(3, 2, 2, 2, 2, 2, 2),
    c(2, 2, 2, 2, 2, 2, 2),
    c(2, 2, 2, 2, 2, 2, 2),
    c(2, 2, 2, 2, 2, 2, 2),
    c(2, 2, 2, 2, 2, 2, 2)
  )
  xi <- c(0.1, 0.125, 0.15, 0.175, 0.2, 0.25, 0.3)
  grid <- expand.grid(t1 = 1:10, xi = xi)
  d <- ifpr_theta_ghatak(grid$xi, grid$t1)
  expect_identical(matrix(d$block_size, 10), matrix(as.integer(table1), 10))
  ok <- d$theta > 0
  expect_equal(psi(d$t1[ok], d$theta[ok]), d$xi[ok], tolerance = 1e-12)
  expect_true(all(d$theta < d$t1))
  # no perturbation needed where 1 / T1 <= xi
  expect_identical(d$theta == 0, 1 / d$t1 <= d$xi)
})

test_that("a Ghatak block of cells of equal count meets xi for every a", {
  for (t1 in 1:4) {
    for (xi in c(0.1, 0.2, 0.3)) {
      g <- ifpr_theta_ghatak(xi, t1)
      if (g$theta == 0) next
      cf <- cell_frequencies(data_with_counts(rep(t1, g$block_size)), "k")
      plan <- pram_plan(cf, list(seq_len(g$block_size)), theta = g$theta)
      mx <- max_match_risk(plan, "all_matches")
      expect_lte(mx$risk, xi * (1 + 1e-12))
      expect_identical(mx$a, 1L, info = paste(t1, xi))
    }
  }
})

test_that("design functions reject impossible parameters with classed errors", {
  expect_error(ifpr_theta(0.3, "all_matches"), class = "sdcRisk_error_infeasible")
  expect_error(ifpr_theta(1 / 3, "unique_matches"), class = "sdcRisk_error_infeasible")
  expect_error(ifpr_theta(0), class = "sdcRisk_error_xi")
  expect_error(ifpr_theta(1), class = "sdcRisk_error_xi")
  expect_error(ifpr_theta(NA_real_), class = "sdcRisk_error_xi")
  expect_error(ifpr_theta("0.5"), class = "sdcRisk_error_xi")
  expect_error(ifpr_theta_ghatak(1.2, 2), class = "sdcRisk_error_xi")
  expect_error(ifpr_theta_ghatak(0.1, 0), class = "sdcRisk_error_argument")
  expect_error(psi(0.5, 0.1), class = "sdcRisk_error_argument")
  expect_error(psi(1, -0.1), class = "sdcRisk_error_theta")
  expect_error(psi(1, 2), class = "sdcRisk_error_theta")
  expect_snapshot(error = TRUE, ifpr_theta(0.3, "all_matches"))
  expect_snapshot(error = TRUE, ifpr_theta(c(0.5, 1.5)))
})
