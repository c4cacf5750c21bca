# lp_session(): programs solved again and again with new objectives and
# bounds (R/table-lp.R), against solve_lp() and values known by hand.

test_that("lp_session() gives the optimum, its value and its status as solve_lp() does, objective after objective", {
  ns <- asNamespace("sdcRisk")
  # x1 + x2 + x3 = 10, x1 - x2 = 2; 0 <= x <= 8
  mat <- ns$triplet_matrix(c(1, 1, 1, 2, 2), c(1, 2, 3, 1, 2), c(1, 1, 1, 1, -1), 2, 3)
  s <- ns$lp_session(mat, c(10, 2), c(10, 2), rep(0, 3), rep(8, 3))
  set.seed(11)
  for (k in 1:30) {
    obj <- round(stats::rnorm(3), 2)
    for (maximize in c(TRUE, FALSE)) {
      r <- s$extreme(obj, maximize = maximize)
      ref <- ns$solve_lp(obj, mat, c("==", "=="), c(10, 2), lower = rep(0, 3), upper = rep(8, 3),
                         maximize = maximize)
      expect_identical(r$status, "optimal")
      expect_equal(r$value, ref$value, tolerance = 1e-9)
      # the value is the objective at the solution, which keeps the rows
      expect_equal(r$value, sum(obj * r$solution), tolerance = 1e-12)
      expect_equal(c(sum(r$solution), r$solution[1] - r$solution[2]), c(10, 2), tolerance = 1e-9)
    }
  }
  expect_identical(s$n_lp(), 60L)
  # by hand: x1 = x2 + 2, x3 = 8 - 2 x2, x2 in [0, 4]: max x3 = 8, min x1 = 2
  expect_equal(s$extreme(c(0, 0, 1), maximize = TRUE)$value, 8)
  expect_equal(s$extreme(c(1, 0, 0), maximize = FALSE)$value, 2)
  # bounds changed: x3 <= 3 leaves x2 >= 2.5; then infeasible (x1 <= 1)
  s$set_bounds(rep(0, 3), c(8, 8, 3))
  expect_equal(s$extreme(c(0, 1, 0), maximize = FALSE)$value, 2.5)
  s$set_bounds(rep(0, 3), c(1, 8, 8))
  expect_identical(s$extreme(c(0, 1, 0), maximize = FALSE)$status, "infeasible")
  expect_null(s$extreme(c(0, 1, 0), maximize = FALSE)$solution)
})

test_that("lp_session() tells an unbounded program, with an infinite value in the direction asked", {
  ns <- asNamespace("sdcRisk")
  # x1 - x2 = 0, x free
  mat <- ns$triplet_matrix(c(1, 1), c(1, 2), c(1, -1), 1, 2)
  s <- ns$lp_session(mat, 0, 0, c(-Inf, -Inf), c(Inf, Inf))
  up <- s$extreme(c(1, 0), maximize = TRUE)
  expect_identical(up$status, "unbounded")
  expect_identical(up$value, Inf)
  down <- s$extreme(c(1, 0), maximize = FALSE)
  expect_identical(down$status, "unbounded")
  expect_identical(down$value, -Inf)
  # and bounded again once the bounds are
  s$set_bounds(c(-3, -5), c(4, 5))
  expect_equal(s$extreme(c(1, 1), maximize = TRUE)$value, 8)
  expect_equal(s$extreme(c(1, 1), maximize = FALSE)$value, -6)
})
