# lp_session(): programs solved again and again with new objectives and
# bounds (R/table-lp.R), against solve_lp() and values known by hand.

test_that("lp_session() gives the optimum, its value and its status as solve_lp() does, objective after objective", {
  ns <- asNamespace("sdcRisk")
  # x1 + x2 + x3 = 10, x1 - x2 = 2; 0 <= x <= 8
  mat <- ns$triplet_matrix(c(1, 1, 1, 2, 2), c(1, 2, 3, 1, 2), c(1, 1, 1, 1, -1), 2, 3)
  # (from the last basis or from the slack basis, by the primal or the dual
  # simplex: the same programs, the same answers)
  for (mode in list(list(TRUE, 4L), list(FALSE, 4L), list(TRUE, 1L), list(FALSE, 1L))) {
    info <- paste("warm", mode[[1]], "strategy", mode[[2]])
    s <- ns$lp_session(mat, c(10, 2), c(10, 2), rep(0, 3), rep(8, 3), warm = mode[[1]], strategy = mode[[2]])
    set.seed(11)
    for (k in 1:30) {
      obj <- round(stats::rnorm(3), 2)
      for (maximize in c(TRUE, FALSE)) {
        r <- s$extreme(obj, maximize = maximize)
        ref <- ns$solve_lp(obj, mat, c("==", "=="), c(10, 2), lower = rep(0, 3), upper = rep(8, 3),
                           maximize = maximize)
        expect_identical(r$status, "optimal", info = info)
        expect_equal(r$value, ref$value, tolerance = 1e-9, info = info)
        # the value is the objective at the solution, which keeps the rows
        expect_equal(r$value, sum(obj * r$solution), tolerance = 1e-12, info = info)
        expect_equal(c(sum(r$solution), r$solution[1] - r$solution[2]), c(10, 2), tolerance = 1e-9, info = info)
      }
    }
    expect_identical(s$n_lp(), 60L)
    # by hand: x1 = x2 + 2, x3 = 8 - 2 x2, x2 in [0, 4]: max x3 = 8, min x1 = 2
    expect_equal(s$extreme(c(0, 0, 1), maximize = TRUE)$value, 8, info = info)
    expect_equal(s$extreme(c(1, 0, 0), maximize = FALSE)$value, 2, info = info)
    # bounds changed: x3 <= 3 leaves x2 >= 2.5; then infeasible (x1 <= 1),
    # with a certificate (the dual ray: a combination of the rows that no
    # values within the bounds keep)
    s$set_bounds(rep(0, 3), c(8, 8, 3))
    expect_equal(s$extreme(c(0, 1, 0), maximize = FALSE)$value, 2.5, info = info)
    s$set_bounds(rep(0, 3), c(1, 8, 8))
    expect_identical(s$extreme(c(0, 1, 0), maximize = FALSE)$status, "infeasible", info = info)
    # (the dual simplex's)
    if (mode[[2]] == 1L) expect_length(s$dual_ray(), 2L)
    expect_null(s$extreme(c(0, 1, 0), maximize = FALSE)$solution)
  }
})

test_that("lp_session(warm = FALSE) starts every program from the slack basis, warm = TRUE from the last optimum", {
  ns <- asNamespace("sdcRisk")
  # a transport-like program: 6 columns, 5 rows, whose optimum is no slack
  # basis (x_ij, i in 1:2, j in 1:3: supplies 5 and 7, demands 4, 4, 4)
  mat <- ns$triplet_matrix(c(1, 1, 1, 2, 2, 2, 3, 3, 4, 4, 5, 5), c(1:6, 1, 4, 2, 5, 3, 6), rep(1, 12), 5, 6)
  obj <- c(4, 6, 9, 5, 3, 8)
  for (warm in c(TRUE, FALSE)) {
    s <- ns$lp_session(mat, c(5, 7, 4, 4, 4), c(5, 7, 4, 4, 4), rep(0, 6), rep(Inf, 6), warm = warm, strategy = 1L)
    first <- s$extreme(obj, maximize = FALSE)
    expect_gt(s$last_iterations(), 0)
    # the costs doubled, the same optimum: no iteration from the last one,
    # some from the slack basis
    again <- s$extreme(2 * obj, maximize = FALSE)
    expect_equal(again$value, 2 * first$value)
    if (warm) expect_equal(s$last_iterations(), 0) else expect_gt(s$last_iterations(), 0)
    # by hand: x11 = 4, x13 = 1, x22 = 4, x23 = 3, 16 + 9 + 12 + 24
    expect_equal(first$value, 61)
    expect_equal(sum(first$solution * obj), 61)
  }
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
