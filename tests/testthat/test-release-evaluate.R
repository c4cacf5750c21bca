small_release <- function(seed = 1, xi = 0.3, ...) {
  set.seed(seed)
  n <- 400
  df <- data.frame(
    sex = factor(sample(c("F", "M"), n, TRUE)),
    age = sample(20:60, n, TRUE),
    area = sample(c("a", "b", "c", "d"), n, TRUE),
    edu = factor(sample(c("low", "mid", "high"), n, TRUE)),
    w = runif(n)
  )
  list(df = df, rel = ifpr(df, c("sex", "age", "area"), xi, partition = list(sex = "keep"), ...))
}

test_that("release_risk's Table 3 equals a direct per-unit computation", {
  for (seed in 1:5) {
    s <- small_release(seed)
    rel <- s$rel
    rr <- release_risk(rel)
    cf <- rel$cells
    old <- cf$cell_id
    new <- rel$new_cell
    S <- tabulate(new, nrow(cf$cells))
    in_block <- old %in% rel$plan$block_cells
    units <- which(cf$cells$count[old] <= 2 | in_block)
    tau <- pmin(cf$cells$count[old[units]], 3)
    tstar <- pmin(S[old[units]], 3)
    p <- vapply(units, function(u) if (new[u] == old[u]) 1 / S[old[u]] else 0, numeric(1))
    for (i in seq_len(nrow(rr$table))) {
      r <- rr$table[i, ]
      sel <- (r$tau == "all" | tau == c("1" = 1, "2" = 2, "3+" = 3)[r$tau]) &
        (r$tau_star == "all" | tstar == c("0" = 0, "1" = 1, "2" = 2, "3+" = 3)[r$tau_star])
      expect_identical(r$units, as.numeric(sum(sel)), info = paste(seed, r$tau, r$tau_star))
      if (sum(sel) > 0) expect_equal(r$mean, mean(p[sel]), info = paste(seed, r$tau, r$tau_star))
    }
    expect_identical(rr$uniques$units_after, c(sum(S == 1), 2 * sum(S == 2)))
    expect_output(print(rr), "Certified exact maximum")
  }
})

test_that("Table 3 margins are weighted means (2570 units, 1008 unchanged: 0.1961)", {
  p <- c(rep(0.5, 1008), rep(0, 1562), rep(1, 1173), rep(0, 5066 - 1173))
  tau <- factor(rep("1", length(p)), levels = c("1", "2", "3+"))
  star <- factor(c(rep("2", 2570), rep("1", 5066)), levels = c("0", "1", "2", "3+"))
  tab <- sdcRisk:::risk_table(p, tau, star)
  expect_equal(round(tab$mean[tab$tau == "1" & tab$tau_star == "2"], 4), 0.1961)
  expect_equal(round(tab$mean[tab$tau == "1" & tab$tau_star == "1"], 4), 0.2315)
  all <- tab$mean[tab$tau == "1" & tab$tau_star == "all"]
  expect_equal(all, (1008 * 0.5 + 1173) / (2570 + 5066))
})

test_that("Section 4.1: the theoretical percentages 35.95% and 7.19% for theta = 0.8", {
  keys <- c("sex", "age", "race", "marital", "puma")
  set.seed(8)
  rel <- ifpr(pums_md, keys, psi(2, 0.8), method = "nayak", calibrate = "bound",
              partition = list(sex = "keep", age = c(0, 18, 25, 35, 45, 55, 65, Inf)))
  expect_equal(unique(rel$plan$theta), 0.8, tolerance = 1e-12)
  ch <- release_risk(rel)$changes
  expect_equal(round(ch$bound_emptied_pct[1:2], 2), c(35.95, 7.19))
  # the exact expectation is just below the bound for blocks of hundreds of cells
  expect_true(all(ch$expected_emptied_pct[1:2] <= ch$bound_emptied_pct[1:2]))
  expect_equal(ch$expected_emptied_pct[1:2], c(35.95, 7.19), tolerance = 0.005)
  expect_equal(ch$expected_changed_pct[1:2], c(80, 40))
  # and the observed values are near them (Section 7.1: 80.18%, 39.85%, 36.47%, 7.54%)
  expect_equal(ch$units_changed_pct[1:2], c(80, 40), tolerance = 0.03)
})

test_that("TVD and cell counts from integer codes equal a count over pasted keys", {
  # the reference: every record's combination as a string, NA a value of its own
  reference <- function(a, b, n) {
    key <- function(d) do.call(paste, c(lapply(d, as.character), sep = "\r"))
    ka <- key(a)
    kb <- key(b)
    all <- unique(c(ka, kb))
    list(
      tvd = sum(abs(tabulate(match(ka, all), length(all)) - tabulate(match(kb, all), length(all)))) / (2 * n),
      cells = prod(vapply(names(a), function(v) length(unique(c(as.character(a[[v]]), as.character(b[[v]])))), 1)),
      nonempty = length(all)
    )
  }
  set.seed(11)
  for (it in 1:60) {
    n <- sample(1:150, 1)
    k <- sample(1:4, 1)
    make <- function() {
      d <- lapply(seq_len(k), function(j) {
        v <- sample(c(letters[1:(j + 2)], NA), n, TRUE)
        switch(j %% 3 + 1, factor(v, levels = letters[1:(j + 2)]), v, match(v, letters))
      })
      stats::setNames(as.data.frame(d, stringsAsFactors = FALSE), paste0("v", seq_len(k)))
    }
    a <- make()
    b <- make()
    got <- sdcRisk:::tvd_row(a, b, n)
    expect_equal(as.list(got[c("tvd", "cells", "nonempty")]), reference(a, b, n))
  }
  # many columns of many levels: codes renumbered before they pass 2^50
  n <- 3000
  a <- as.data.frame(replicate(7, factor(sample(1:900, n, TRUE), levels = 1:900), simplify = FALSE))
  b <- a
  b[[1]][1:40] <- b[[1]][41:80]
  got <- sdcRisk:::tvd_row(a, b, n)
  expect_equal(as.list(got[c("tvd", "cells", "nonempty")]), reference(a, b, n))
})

test_that("TVD agrees with a direct computation and is 0 for identical data", {
  s <- small_release(3)
  rel <- s$rel
  u <- release_utility(rel, list("area", c("sex", "area"), c("age", "edu")))
  direct <- function(a, b) {
    ka <- interaction(a, drop = TRUE, sep = "|")
    kb <- interaction(b, drop = TRUE, sep = "|")
    lev <- union(levels(ka), levels(kb))
    sum(abs(table(factor(ka, lev)) - table(factor(kb, lev)))) / (2 * nrow(a))
  }
  expect_equal(u$tvd$tvd[1], direct(s$df["area"], rel$data["area"]))
  expect_equal(u$tvd$tvd[2], direct(s$df[c("sex", "area")], rel$data[c("sex", "area")]))
  expect_equal(u$tvd$tvd[3], direct(s$df[c("age", "edu")], rel$data[c("age", "edu")]))
  expect_identical(u$tvd$cells, c(4, 8, 41 * 3))
  expect_identical(sdcRisk:::tvd_row(s$df["area"], s$df["area"], nrow(s$df))$tvd, 0)
  # distributions: counts, difference, sampling SD as in Table 4
  d <- u$distributions$area
  expect_identical(d$original, as.vector(table(s$df$area)))
  expect_identical(d$perturbed, as.vector(table(rel$data$area)))
  expect_identical(d$difference, d$original - d$perturbed)
  expect_equal(d$sampling_sd, sqrt(400 * d$original_share * (1 - d$original_share)))
  expect_output(print(u), "Total variation distance")
})

test_that("the conditional variance follows eq. 6.5 and matches repeated draws", {
  s <- small_release(4, xi = 0.2)
  rel <- s$rel
  vt <- release_utility(rel, "area")$variance$area
  # eq. 6.5 block by block
  plan <- rel$plan
  counts <- rel$cells$cells$count
  area <- as.character(rel$cells$cells$area)
  ref <- setNames(numeric(4), c("a", "b", "c", "d"))
  for (b in seq_along(plan$theta)) {
    ids <- sdcRisk:::plan_block_cells(plan, b)
    m <- length(ids)
    th <- plan$theta[b]
    for (d in unique(area[ids])) {
      A <- area[ids] == d
      bb <- sum(A)
      ref[d] <- ref[d] + 2 * th * bb * (m - bb) / (m - 1) -
        th^2 / (m - 1)^2 * (bb^2 * sum(1 / counts[ids][!A]) + (m - bb)^2 * sum(1 / counts[ids][A]))
    }
  }
  expect_equal(vt$perturbation_var, unname(ref))
  expect_true(all(vt$perturbation_var <= vt$bound_var + 1e-12))
  # repeated draws
  set.seed(10)
  reps <- 3000
  S <- vapply(seq_len(reps), function(r) {
    nc <- pram_draw(plan)
    as.vector(tapply(counts[nc] * 0 + 1, factor(area[nc], levels = c("a", "b", "c", "d")), sum, default = 0))
  }, numeric(4))
  v_emp <- apply(S, 1, var)
  # the variance of a sample variance: about v^2 * 2 / (reps - 1) for near-normal counts
  expect_true(all(abs(v_emp - vt$perturbation_var) <= 5 * vt$perturbation_var * sqrt(2 / (reps - 1)) + 1e-9))
})

test_that("Nayak et al. Table 4: sampling SDs of marital status on pums_md (exact counts)", {
  keys <- c("sex", "age", "race", "marital", "puma")
  set.seed(4)
  rel <- ifpr(pums_md, keys, 0.395, method = "nayak", partition = list(sex = "keep"))
  d <- release_utility(rel, "marital")$distributions$marital
  expect_identical(d$original, c(24688L, 3156L, 4742L, 1040L, 25407L))
  # the paper computes them from shares rounded to 4 decimals
  expect_equal(d$sampling_sd, c(119.84, 54.67, 66.03, 31.95, 120.30), tolerance = 0.02 / 50)
  expect_true(all(abs(d$difference) < 3 * d$sampling_sd))
})

test_that("bad input to the evaluation functions gets classed errors", {
  s <- small_release(2)
  expect_error(release_risk(s$df), class = "sdcRisk_error_argument")
  expect_error(release_utility(s$rel, "nope"), class = "sdcRisk_error_unknown_key")
  expect_error(release_utility(s$rel, 3), class = "sdcRisk_error_argument")
  broken <- s$rel
  broken$data <- broken$data[-1, ]
  expect_error(release_risk(broken), class = "sdcRisk_error_release_mismatch")
  expect_snapshot(error = TRUE, release_utility(s$rel, "nope"))
  expect_snapshot(error = TRUE, release_risk(broken))
})

test_that("plots draw without error and return their object", {
  s <- small_release(6)
  pdf(NULL)
  on.exit(dev.off())
  expect_identical(plot(s$rel), s$rel)
  rr <- release_risk(s$rel)
  expect_identical(plot(rr), rr)
  u <- release_utility(s$rel, list("area", c("sex", "area")))
  expect_identical(plot(u), u)
  expect_identical(plot(u, which = "tvd"), u)
})

test_that("plot() of a release puts its legend beside the curves, not over them (issue 37)", {
  set.seed(1)
  rel <- ifpr(pums_md[1:5000, ], c("sex", "age", "race", "marital"), 0.3, partition = list(sex = "keep"))
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  plan <- rel$plan
  leg <- sdcRisk:::plot_risk_curves(plan, unique(plan$block_cells), 0.3, "xi", 5, 8, "risk")
  usr <- graphics::par("usr")
  # the legend's box lies right of the plotting region, where no curve is
  expect_gte(leg$rect$left, usr[2])
  expect_length(leg$text$x, 6)
  # and plot() itself restores the margins it widened
  mar <- graphics::par("mar")
  plot(rel)
  expect_identical(graphics::par("mar"), mar)
})

test_that("summaries of empirical risk and utility are compact tables", {
  s <- small_release(7)
  rr <- release_risk(s$rel)
  srr <- summary(rr)
  expect_s3_class(srr, "summary.sdc_release_risk")
  expect_output(print(srr), "Margins of the empirical")
  expect_true(all(srr$margins$tau == "all" | srr$margins$tau_star == "all"))
  u <- release_utility(s$rel, list("area", "sex", c("sex", "area")))
  su <- summary(u)
  expect_identical(su$distributions$variable, c("area", "sex"))
  expect_identical(su$variance$variable, c("area", "sex"))
  expect_identical(su$variance$largest_perturbation_var[2], 0) # sex is kept
  expect_output(print(su), "Total variation distances")
  expect_identical(names(as.data.frame(u))[1:2], c("variable", "category"))
  expect_identical(as.data.frame(rr), rr$table)
})

test_that("the standard errors of Table 3 are cluster-robust: a block's units are one cluster (issue 37)", {
  # brute force: the sandwich variance of a mean, cluster by cluster
  brute <- function(p, g) {
    m <- mean(p)
    G <- length(unique(g))
    s <- vapply(split(p - m, g), sum, numeric(1))
    sqrt(G / (G - 1) * sum(s^2)) / length(p)
  }
  set.seed(37)
  for (i in 1:20) {
    n <- sample(5:60, 1)
    p <- runif(n)
    g <- sample(seq_len(sample(2:8, 1)), n, TRUE)
    if (length(unique(g)) < 2) next
    expect_equal(sdcRisk:::cluster_se(p, g), brute(p, g), info = paste("case", i))
    # one unit per cluster: the usual sd / sqrt(n)
    expect_equal(sdcRisk:::cluster_se(p, seq_len(n)), stats::sd(p) / sqrt(n), info = paste("case", i))
  }
  expect_identical(sdcRisk:::cluster_se(c(0, 1, 0.5), c(1, 1, 1)), NA_real_)

  s <- small_release(3)
  rel <- s$rel
  rr <- release_risk(rel)
  cf <- rel$cells
  old <- cf$cell_id
  S <- tabulate(rel$new_cell, nrow(cf$cells))
  block_of <- sdcRisk:::plan_block_of(rel$plan)
  units <- which(cf$cells$count[old] <= 2 | !is.na(block_of[old]))
  p <- ifelse(rel$new_cell[units] == old[units], 1 / S[old[units]], 0)
  cl <- ifelse(is.na(block_of[old[units]]), paste0("cell", old[units]), paste0("block", block_of[old[units]]))
  all <- rr$table[rr$table$tau == "all" & rr$table$tau_star == "all", ]
  expect_equal(all$clusters, length(unique(cl)))
  expect_equal(all$se, brute(p, cl))
})

test_that("the empirical risk is labelled as one realization, the certificate as a bound on expectations (issue 37)", {
  s <- small_release(4)
  rr <- release_risk(s$rel)
  out <- format(rr)
  expect_match(out[1], "in this release (one realization)", fixed = TRUE)
  expect_true(any(grepl("a bound on expected values over the perturbation", out, fixed = TRUE)))
  expect_output(print(summary(rr)), "a bound on expected values; largest mean in this release (one realization)", fixed = TRUE)
  # the plot's dashed line says what it is
  drawn <- plotted_strings(plot(rr))
  expect_true("certificate: max. of the expected risk" %in% drawn)
  expect_false("certified maximum" %in% drawn)
  expect_true("Empirical risk in this release (one realization)" %in% drawn)
})

test_that("release_risk() for a sample: every unit's probability times t / F, and the certificate of (t / F) R", {
  set.seed(1)
  keys <- c("sex", "age", "race", "marital", "puma")
  rel <- ifpr(pums_md[1:3000, ], keys, 0.3, partition = list(sex = "keep"))
  cells <- rel$cells$cells
  plain <- release_risk(rel)
  # a population of exactly twice the file in every cell: t / F = 1 / 2
  twice <- transform(cells, count = 2L * count)
  half <- release_risk(rel, population = twice, target_in_file = "unknown")
  expect_equal(half$table$mean, plain$table$mean / 2)
  expect_equal(half$table$units, plain$table$units)
  expect_equal(half$certificate$risk, plain$certificate$risk / 2)
  expect_identical(half$certificate$target_in_file, "unknown")
  # uneven populations: the certificate is max_match_risk()'s
  pop <- transform(cells, count = count + (seq_len(nrow(cells)) %% 7L))
  uneven <- release_risk(rel, population = pop, target_in_file = "unknown")
  expect_identical(uneven$certificate$risk,
                   max_match_risk(rel$plan, population = pop, target_in_file = "unknown")$risk)
  expect_snapshot(print(half))
})
