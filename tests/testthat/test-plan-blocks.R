test_that("pram_plan accepts block lists and per-cell labels alike", {
  cf <- cell_frequencies(data_with_counts(c(1, 1, 2, 3, 1, 2)), "k")
  p1 <- pram_plan(cf, list(c(1, 2, 5), c(3, 6)), theta = c(0.8, 0.5))
  p2 <- pram_plan(cf, c("a", "a", "b", NA, "a", "b"), theta = c(0.8, 0.5))
  expect_identical(p1$block_cells, p2$block_cells)
  expect_identical(p1$block_start, p2$block_start)
  d <- as.data.frame(p1)
  expect_identical(d$cell, c(1L, 2L, 5L, 3L, 6L))
  expect_identical(d$block, c(1L, 1L, 1L, 2L, 2L))
  expect_equal(d$theta, c(0.8, 0.8, 0.8, 0.5, 0.5))
  expect_snapshot(print(p1))
})

test_that("IFPR matrices follow Section 3.3 and are unbiased (eq. 3.3)", {
  counts <- c(1, 2, 2, 5, 7)
  cf <- cell_frequencies(data_with_counts(counts), "k")
  plan <- pram_plan(cf, list(1:5), theta = 0.9)
  p <- pram_matrix(plan, 1)
  expect_equal(unname(diag(p)), 1 - 0.9 / counts)
  expect_equal(p[2, 1], 0.9 / (4 * 1))
  expect_equal(p[1, 4], 0.9 / (4 * 5))
  expect_equal(unname(colSums(p)), rep(1, 5))
  expect_equal(as.vector(p %*% counts), counts)
  expect_true(all(pram_unbiased(plan)$unbiased))
  expect_identical(rownames(p), as.character(1:5))
})

test_that("theta may exceed 1 when every cell of its block has T >= theta (Ghatak et al.)", {
  cf <- cell_frequencies(data_with_counts(c(2, 205, 431, 106, 230, 221, 611, 194)), "k")
  plan <- pram_plan(cf, list(c(1, 2, 4, 5, 6, 8)), theta = 1.656854)
  expect_true(pram_unbiased(plan)$unbiased)
  expect_error(pram_plan(cf, list(c(1, 2)), theta = 2.5), class = "sdcRisk_error_theta")
})

test_that("Ghatak et al. Section 4: theta* = 1.656854 and the printed transition matrix", {
  counts <- c(2, 205, 431, 106, 230, 221, 611, 194)
  cf <- cell_frequencies(data_with_counts(counts), "k")
  th <- ifpr_theta_ghatak(0.1, 2)$theta
  expect_equal(round(th, 6), 1.656854)
  plan <- pram_plan(cf, list(c(1, 2, 4, 5, 6, 8)), theta = th)
  # the paper prints P with rows = original category (our transpose)
  printed <- rbind(
    c(0.172, 0.166, 0, 0.166, 0.166, 0.166, 0, 0.166),
    c(0.002, 0.992, 0, 0.002, 0.002, 0.002, 0, 0.002),
    c(0, 0, 1, 0, 0, 0, 0, 0),
    c(0.003, 0.003, 0, 0.984, 0.003, 0.003, 0, 0.003),
    c(0.001, 0.001, 0, 0.001, 0.993, 0.001, 0, 0.001),
    c(0.001, 0.001, 0, 0.001, 0.001, 0.993, 0, 0.001),
    c(0, 0, 0, 0, 0, 0, 1, 0),
    c(0.002, 0.002, 0, 0.002, 0.002, 0.002, 0, 0.991)
  )
  full <- diag(8)
  blk <- c(1, 2, 4, 5, 6, 8)
  full[blk, blk] <- pram_matrix(plan, 1)
  expect_equal(round(t(full), 3), printed)
  # and the design meets xi = 0.1 exactly, over every a and every cell
  expect_lte(max_match_risk(plan, "all_matches")$risk, 0.1)
})

test_that("explicit matrices are validated", {
  cf <- cell_frequencies(data_with_counts(c(1, 1, 2)), "k")
  good <- matrix(c(0.5, 0.5, 0, 0.25, 0.5, 0.25, 0, 0.5, 0.5), 3)
  expect_s3_class(pram_plan(cf, list(1:3), matrix = list(good)), "pram_plan")
  expect_s3_class(pram_plan(cf, list(1:3), matrix = good), "pram_plan")
  rows <- t(matrix(c(0.5, 0.5, 0, 0.2, 0.5, 0.3, 0, 0.6, 0.4), 3))
  expect_error(pram_plan(cf, list(1:3), matrix = list(rows)), class = "sdcRisk_error_matrix")
  expect_error(pram_plan(cf, list(1:3), matrix = list(good[1:2, 1:2])), class = "sdcRisk_error_matrix")
  neg <- good
  neg[1, 1] <- -0.1
  neg[2, 1] <- 1.1
  expect_error(pram_plan(cf, list(1:3), matrix = list(neg)), class = "sdcRisk_error_matrix")
  nas <- good
  nas[1, 1] <- NA
  expect_error(pram_plan(cf, list(1:3), matrix = list(nas)), class = "sdcRisk_error_matrix")
  expect_error(pram_plan(cf, list(1:3), theta = 0.5, matrix = list(good)), class = "sdcRisk_error_matrix")
  expect_error(pram_plan(cf, list(1:3)), class = "sdcRisk_error_theta")
  # within 1e-12 is accepted and rescaled to sum to 1
  near <- good
  near[1, 1] <- 0.5 + 5e-13
  plan <- pram_plan(cf, list(1:3), matrix = list(near))
  expect_equal(unname(colSums(pram_matrix(plan, 1))), rep(1, 3), tolerance = 0)
  expect_snapshot(error = TRUE, pram_plan(cf, list(1:3), matrix = list(rows)))
})

test_that("pram_unbiased detects a matrix that does not keep the counts", {
  cf <- cell_frequencies(data_with_counts(c(1, 2, 4)), "k")
  p <- matrix(c(0.5, 0.5, 0, 0.5, 0.5, 0, 0, 0, 1), 3)
  u <- pram_unbiased(pram_plan(cf, list(1:3), matrix = list(p)))
  expect_false(u$unbiased)
  expect_equal(u$max_deviation, 0.5)
})

test_that("bad blocks and theta get classed errors", {
  cf <- cell_frequencies(data_with_counts(c(1, 1, 2, 3)), "k")
  expect_error(pram_plan(cf, list(1), theta = 0.5), class = "sdcRisk_error_block")
  expect_error(pram_plan(cf, list(1:2, 2:3), theta = 0.5), class = "sdcRisk_error_block_overlap")
  expect_error(pram_plan(cf, list(c(1, 1)), theta = 0.5), class = "sdcRisk_error_block_overlap")
  expect_error(pram_plan(cf, list(c(1, 9)), theta = 0.5), class = "sdcRisk_error_block")
  expect_error(pram_plan(cf, list(c(1, NA)), theta = 0.5), class = "sdcRisk_error_block")
  expect_error(pram_plan(cf, list("a"), theta = 0.5), class = "sdcRisk_error_block")
  expect_error(pram_plan(cf, 1:2, theta = 0.5), class = "sdcRisk_error_block")
  expect_error(pram_plan(cf, list(1:2), theta = -0.1), class = "sdcRisk_error_theta")
  expect_error(pram_plan(cf, list(1:2), theta = 1.5), class = "sdcRisk_error_theta")
  expect_error(pram_plan(cf, list(1:2), theta = c(0.1, 0.2)), class = "sdcRisk_error_theta")
  expect_error(pram_plan(cf, list(1:2), theta = "a"), class = "sdcRisk_error_theta")
  expect_error(pram_plan(data.frame(k = 1), list(1:2), theta = 0.5), class = "sdcRisk_error_argument")
  expect_error(pram_matrix(pram_plan(cf, list(1:2), theta = 0.5), 2), class = "sdcRisk_error_argument")
  expect_snapshot(error = TRUE, pram_plan(cf, list(1:2, 2:3), theta = 0.5))
  expect_snapshot(error = TRUE, pram_plan(cf, list(1:2), theta = 1.5))
  expect_snapshot(error = TRUE, pram_plan(cf, list(1, 2:3), theta = 0.5))
})

test_that("a plan with 1e5 cells in blocks of 1e3 stays linear in size", {
  n_cells <- 1e5
  counts <- rep(c(1L, 2L, 3L, 5L), length.out = n_cells)
  cells <- sdcRisk:::new_sdc_cells(
    cells = data.frame(k = seq_len(n_cells), count = counts),
    cell_id = rep.int(seq_len(n_cells), counts), keys = "k", na = "exclude",
    n_records = sum(counts), n_excluded = 0
  )
  plan <- pram_plan(cells, ceiling(seq_len(n_cells) / 1e3), theta = 0.8)
  expect_lt(as.numeric(object.size(plan$block_cells) + object.size(plan$theta)), 1e6)
  expect_true(all(pram_unbiased(plan)$unbiased))
  mx <- max_match_risk(plan, "all_matches")
  expect_lte(mx$risk, ifpr_theta(0.395)$xi)
  drawn <- pram_draw(plan)
  expect_length(drawn, sum(counts))
  # no record leaves its block
  blk <- ceiling(seq_len(n_cells) / 1e3)
  expect_identical(blk[drawn], blk[cells$cell_id])
})
