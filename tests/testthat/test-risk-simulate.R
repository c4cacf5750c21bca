# Eq. 3.6 of Nayak, Zhang and You (2016) from the full matrix of a block:
# V(S | T) = D_{PT} - sum_k T_k P_k P_k' (D_T when PT = T), its diagonal.
# An obviously-correct reference for eq. 6.1 and for the matrix blocks.
var_eq36 <- function(p, t) {
  v <- diag(as.vector(p %*% t), length(t))
  for (k in seq_along(t)) v <- v - t[k] * tcrossprod(p[, k])
  diag(v)
}

ghatak_example <- function() {
  df <- data.frame(k = rep(1:8, c(2, 205, 431, 106, 230, 221, 611, 194)))
  cf <- cell_frequencies(df, "k")
  plan <- pram_plan(cf, list(c(1, 2, 4, 5, 6, 8)), theta = ifpr_theta_ghatak(0.1, 2)$theta)
  list(data = df, plan = plan)
}

test_that("Ghatak et al. (2018) Section 4: MSE per category and mean correct-match probability", {
  ex <- ghatak_example()
  expect_equal(ex$plan$theta, 1.656854, tolerance = 1e-6)
  reps <- 1000
  set.seed(2018)
  sim <- simulate_release(ex$data, "k", ex$plan, reps = reps, target = 1)
  tab <- as.data.frame(sim)
  expect_identical(sim$n, 2000L)
  expect_identical(tab$count, c(2L, 205L, 431L, 106L, 230L, 221L, 611L, 194L))

  # exact MSE = v_ii / n^2 with v_ii from eq. 6.1, here against eq. 3.6
  p <- pram_matrix(ex$plan, 1)
  ids <- c(1, 2, 4, 5, 6, 8)
  expect_equal(tab$exact_mse[ids], var_eq36(p, tab$count[ids]) / 2000^2, tolerance = 1e-12)
  expect_identical(tab$exact_mse[c(3, 7)], c(0, 0))
  expect_equal(tab$exact_share, tab$count / 2000)

  # our simulation against the exact values, within its own standard errors
  in_block <- !is.na(tab$block)
  expect_true(all(abs(tab$mse - tab$exact_mse)[in_block] <= 4 * tab$se_mse[in_block]))
  expect_true(all(abs(tab$mean_share - tab$exact_share)[in_block] <= 4 * tab$se_mean_share[in_block]))
  expect_identical(tab$mse[!in_block], c(0, 0))
  tg <- sim$target
  expect_equal(tg$exact_gamma, match_risk(ex$plan, 1)$gamma)
  expect_lte(abs(tg$mean_cm - tg$exact_gamma), 4 * tg$se_cm)
  expect_lt(tg$exact_gamma, 0.1) # the design goal xi = 0.1

  # Their published values are Monte Carlo estimates from 1000 releases too:
  # they must lie within 5 of our Monte Carlo standard errors (same number
  # of releases, so no rescaling) of the exact values. Cells 3 and 7 are in
  # no block: their MSE is exactly 0, as published.
  published_mse <- c(4.9350e-07, 7.6125e-07, 0, 7.4300e-07, 8.8550e-07, 7.8375e-07, 0, 8.5550e-07)
  published_cm <- 0.07639286
  scale <- sqrt(reps / 1000)
  z_pub <- (published_mse - tab$exact_mse)[in_block] / (tab$se_mse[in_block] * scale)
  expect_true(all(abs(z_pub) <= 5), info = paste(format(z_pub, digits = 3), collapse = ", "))
  expect_identical(published_mse[!in_block], tab$exact_mse[!in_block])
  expect_lte(abs(published_cm - tg$exact_gamma), 5 * tg$se_cm * scale)
  expect_snapshot(
    print(data.frame(
      cell = 1:8, published_mse = published_mse, exact_mse = signif(tab$exact_mse, 5),
      published_cm = c(published_cm, rep(NA, 7)), exact_gamma = c(signif(tg$exact_gamma, 7), rep(NA, 7))
    ))
  )
})

test_that("the empirical variance of S agrees with eq. 6.1 on random IFPR plans", {
  for (seed in c(11, 12, 13)) {
    set.seed(seed)
    counts <- sample(c(1:5, 20, 100), sample(4:9, 1), replace = TRUE)
    df <- data_with_counts(counts)
    cf <- cell_frequencies(df, "k")
    blk <- sort(sample(seq_along(counts), max(2, length(counts) - 1)))
    theta <- runif(1, 0.1, min(counts[blk]))
    plan <- pram_plan(cf, list(blk), theta = theta)
    sim <- simulate_release(df, "k", plan, reps = 4000)
    tab <- as.data.frame(sim)
    ok <- abs(tab$var_count - tab$exact_var)[blk] <= 4 * tab$se_var_count[blk]
    expect_true(all(ok), info = paste("seed", seed))
    # eq. 6.1 itself against eq. 3.6 on the block's matrix
    expect_equal(tab$exact_var[blk], var_eq36(pram_matrix(plan, 1), counts[blk]),
      tolerance = 1e-10, info = paste("seed", seed))
    # IFPR is unbiased (eq. 3.3)
    ok <- abs(tab$mean_share - tab$exact_share)[blk] <= 4 * tab$se_mean_share[blk]
    expect_true(all(ok), info = paste("seed", seed))
  }
})

test_that("large theta (binomial chop-down from the mode) still follows eq. 6.1", {
  counts <- c(60, 80, 200, 150)
  df <- data_with_counts(counts)
  plan <- pram_plan(cell_frequencies(df, "k"), list(1:4), theta = 45)
  set.seed(5)
  tab <- as.data.frame(simulate_release(df, "k", plan, reps = 4000))
  expect_true(all(abs(tab$var_count - tab$exact_var) <= 4 * tab$se_var_count))
  expect_true(all(abs(tab$mean_share - tab$exact_share) <= 4 * tab$se_mean_share))
})

test_that("the empirical mean and variance of S agree with PT and eq. 3.6 for a random matrix block", {
  for (seed in c(21, 22)) {
    set.seed(seed)
    counts <- c(sample(1:6, 3, replace = TRUE), 400, 3)
    df <- data_with_counts(counts)
    cf <- cell_frequencies(df, "k")
    m <- 4
    p <- matrix(rexp(m * m), m) + diag(2, m)
    p <- sweep(p, 2, colSums(p), "/")
    plan <- pram_plan(cf, list(1:4), matrix = list(p))
    sim <- simulate_release(df, "k", plan, reps = 4000, target = 2)
    tab <- as.data.frame(sim)
    t <- counts[1:4]
    expect_equal(tab$exact_var[1:4], var_eq36(p, t), tolerance = 1e-10)
    expect_equal(tab$exact_share[1:4], as.vector(p %*% t) / sum(counts), tolerance = 1e-12)
    # a biased plan: the exact MSE adds the squared bias
    expect_equal(tab$exact_mse[1:4], (var_eq36(p, t) + (as.vector(p %*% t) - t)^2) / sum(counts)^2,
      tolerance = 1e-10)
    expect_true(all(abs(tab$var_count - tab$exact_var)[1:4] <= 4 * tab$se_var_count[1:4]), info = paste("seed", seed))
    expect_true(all(abs(tab$mean_share - tab$exact_share)[1:4] <= 4 * tab$se_mean_share[1:4]), info = paste("seed", seed))
    expect_true(all(abs(tab$mse - tab$exact_mse)[1:4] <= 4 * tab$se_mse[1:4]), info = paste("seed", seed))
    expect_identical(tab$var_count[5], 0)
    tg <- sim$target
    expect_lte(abs(tg$mean_cm - tg$exact_gamma), 4 * tg$se_cm)
  }
})

test_that("a target in no block is matched with probability 1 / T", {
  df <- data_with_counts(c(1, 2, 2, 4))
  plan <- pram_plan(cell_frequencies(df, "k"), list(1:3), theta = 0.7)
  set.seed(1)
  sim <- simulate_release(df, "k", plan, reps = 50, target = 4)
  expect_identical(sim$target$mean_cm, 0.25)
  expect_identical(sim$target$se_cm, 0)
  expect_equal(sim$target$exact_gamma, 0.25)
})

test_that("set.seed reproduces a simulation", {
  ex <- ghatak_example()
  set.seed(7)
  a <- simulate_release(ex$data, "k", ex$plan, reps = 200, target = 1)
  set.seed(7)
  b <- simulate_release(ex$data, "k", ex$plan, reps = 200, target = 1)
  set.seed(8)
  c <- simulate_release(ex$data, "k", ex$plan, reps = 200, target = 1)
  expect_identical(a, b)
  expect_false(identical(a$cells$mse, c$cells$mse))
  # one replication: no standard errors
  one <- simulate_release(ex$data, "k", ex$plan, reps = 1, target = 1)
  expect_true(all(is.na(one$cells$se_mse)))
  expect_true(is.na(one$target$se_cm))
})

test_that("print, summary, as.data.frame and plot", {
  ex <- ghatak_example()
  set.seed(3)
  sim <- simulate_release(ex$data, "k", ex$plan, reps = 300, target = 1)
  expect_snapshot(print(sim))
  expect_snapshot(print(summary(sim)))
  expect_s3_class(summary(sim), "summary.sdc_simulation")
  expect_named(as.data.frame(sim), c(
    "cell", "count", "block", "mean_share", "se_mean_share", "exact_share", "mse", "se_mse",
    "exact_mse", "var_count", "se_var_count", "exact_var"
  ))
  path <- withr::local_tempfile(fileext = ".pdf")
  grDevices::pdf(path)
  expect_identical(plot(sim), sim)
  grDevices::dev.off()
  expect_gt(file.size(path), 0)
  expect_invisible(print(sim))
})

test_that("bad reps, target and data are classed errors", {
  ex <- ghatak_example()
  df <- ex$data
  plan <- ex$plan
  expect_error(simulate_release(df, "k", plan, reps = 0), class = "sdcRisk_error_argument")
  expect_error(simulate_release(df, "k", plan, reps = 2.5), class = "sdcRisk_error_argument")
  expect_error(simulate_release(df, "k", plan, reps = NA), class = "sdcRisk_error_argument")
  expect_error(simulate_release(df, "k", plan, reps = 10, target = 9), class = "sdcRisk_error_argument")
  expect_error(simulate_release(df, "k", plan, reps = 10, target = 1:2), class = "sdcRisk_error_argument")
  expect_error(simulate_release(df[-1, , drop = FALSE], "k", plan, reps = 10), class = "sdcRisk_error_plan_mismatch")
  df2 <- transform(df, j = 1)
  expect_error(simulate_release(df2, c("k", "j"), plan, reps = 10), class = "sdcRisk_error_plan_mismatch")
  expect_error(simulate_release(df, "k", list(), reps = 10), class = "sdcRisk_error_argument")
  expect_snapshot(error = TRUE, simulate_release(df, "k", plan, reps = 0))
  expect_snapshot(error = TRUE, simulate_release(df, "k", plan, reps = 10, target = 9))
  expect_snapshot(error = TRUE, simulate_release(df[-1, , drop = FALSE], "k", plan, reps = 10))
})

test_that("1000 releases of 10^5 records run on cells and counts", {
  set.seed(100)
  n <- 1e5
  df <- data.frame(
    a = sample(1:50, n, TRUE, prob = 1 / (1:50)),
    b = sample(1:40, n, TRUE, prob = 1 / (1:40)^1.5),
    c = sample(1:3, n, TRUE)
  )
  cf <- cell_frequencies(df, c("a", "b", "c"))
  small <- which(cf$cells$count <= 5)
  blocks <- split(small, cut(seq_along(small), 10, labels = FALSE))
  theta <- vapply(blocks, function(b) 0.8 * min(cf$cells$count[b]), numeric(1))
  plan <- pram_plan(cf, unname(blocks), theta = theta)
  target <- small[1]
  elapsed <- system.time(sim <- simulate_release(df, c("a", "b", "c"), plan, reps = 1000, target = target))[["elapsed"]]
  message(sprintf("simulate_release: 1000 releases of %s records, %d cells (%d in blocks): %.2f s",
    format(n, big.mark = ",", scientific = FALSE), nrow(cf$cells), length(small), elapsed))
  tab <- as.data.frame(sim)
  expect_identical(sim$reps, 1000L)
  expect_identical(sum(tab$count), as.integer(n))
  z <- (tab$mse - tab$exact_mse)[small] / tab$se_mse[small]
  # The MSE of a cell with T = 1 is a mean of a very skewed variable, so its
  # z-scores have heavier tails than a normal at 1000 releases (a z of -6.9
  # occurs among 4,566 cells; with 20,000 releases all lie within 3.7):
  # check the bulk of the z-scores, not their maximum.
  expect_lt(mean(abs(z) > 3), 0.01)
  expect_lt(abs(mean(z)), 0.15)
  expect_gt(stats::sd(z), 0.8)
  expect_lt(stats::sd(z), 1.2)
})
