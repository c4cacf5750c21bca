# Per-cell risk bounds in the tiered and Nayak designs (issue 34: a sample's
# intruder who does not know whether the target is in the file).

# Every cell's exact risk, from the core's match_risk() cell by cell, against
# its own bound, over a = 1..ceil(1 / bound) (beyond, R <= 1 / a <= bound;
# Goals 1-2: a = 1): the largest R / bound and where.
worst_ratio <- function(plan, bound, goal) {
  counts <- plan$cells$cells$count
  cells <- seq_along(counts)
  if (goal == "sample_uniques") cells <- cells[counts == 1]
  a_max <- if (goal == "all_matches") ceiling(1 / min(bound)) else 1
  r <- match_risk(plan, cells = cells, a = seq_len(a_max))
  r <- r[!is.na(r$risk) & (goal != "all_matches" | r$a <= ceiling(1 / bound[r$cell])), ]
  r$ratio <- r$risk / bound[r$cell]
  r[which.max(r$ratio), c("cell", "a", "risk", "ratio")]
}

test_that("the tiered and Nayak designs meet a bound per cell, checked cell by cell", {
  ma <- load_acs("ma2019")
  keys <- c("SEX", "AGEP", "RAC1P", "MSP", "PUMA")
  cf <- cell_frequencies(ma, keys)
  n <- nrow(cf$cells)
  for (seed in 1:3) {
    set.seed(seed)
    # bounds as a sample's would be: xi F / f for estimated F >= f, capped at 1
    bound <- pmin(1, 0.35 * (1 + stats::rexp(n, 0.7)))
    for (goal in c("all_matches", "unique_matches", "sample_uniques")) {
      for (method in c("tiered", "nayak")) {
        info <- paste(seed, goal, method)
        d <- sdcRisk:::ifpr_design(cf, keys, keys, 0.35, goal, list(SEX = "keep"), method, "exact", "merge",
          FALSE, bound = bound)
        w <- worst_ratio(d$plan, bound, goal)
        expect_lte(w$ratio, 1, label = info)
        # the core's certificate with per-cell weights min(xi, bound) / bound
        # (ifpr_design()'s) finds the same worst ratio
        ref <- min(0.35, bound)
        mx <- sdcRisk:::plan_max_risk(d$plan, goal, keys, d$ep, weight = ref / bound)
        expect_equal(mx$risk / ref, w$ratio, tolerance = 1e-12, info = info)
        expect_true(all(pram_unbiased(d$plan)$unbiased), info = info)
        # a cell whose bound needs nothing is left alone unless it pads a block
        free <- sdcRisk:::needs_protection(cf$cells$count, bound, goal)
        expect_true(all(free[setdiff(which(cf$cells$count <= 2 & bound < 1), d$plan$block_cells)] == FALSE),
          info = info)
      }
    }
  }
})

test_that("cells with bound 1 need no protection, and a cell above its bound is an error", {
  df <- data.frame(k = rep(letters[1:8], c(1, 1, 1, 1, 1, 2, 5, 9)))
  cf <- cell_frequencies(df, "k")
  bound <- c(rep(1, 5), 0.45, 1, 1)
  d <- sdcRisk:::ifpr_design(cf, "k", "k", 0.45, "all_matches", NULL, "tiered", "exact", "error", FALSE,
    bound = bound)
  # only the doubleton needs protection (2 * 0.45 < 1); the singletons with
  # bound 1 stay out, larger cells pad its block
  expect_true(6L %in% d$plan$block_cells)
  expect_false(any(1:5 %in% d$plan$block_cells))
  expect_lte(worst_ratio(d$plan, bound, "all_matches")$ratio, 1)
  # the same plan against a bound of 0.5 for a singleton it leaves alone
  tight <- replace(bound, 1, 0.5)
  mx <- sdcRisk:::plan_max_risk(d$plan, "all_matches", "k", d$ep, weight = 0.45 / tight)
  expect_error(sdcRisk:::check_certificate(mx, 0.45), class = "sdcRisk_error_certificate")
  expect_error(sdcRisk:::risk_bounds(c(0.5, NA), 0.3, 2), class = "sdcRisk_error_bound")
  expect_error(sdcRisk:::risk_bounds(c(0.5, 0), 0.3, 2), class = "sdcRisk_error_bound")
  expect_error(sdcRisk:::risk_bounds(0.5, 0.3, 2), class = "sdcRisk_error_bound")
})
