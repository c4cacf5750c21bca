# Reference: enumerate every outcome of every unit of a block. Transition
# probabilities are integers over a common denominator D (Pnum[i, j] / D =
# P(Z = c_i | X = c_j)), so every outcome's weight prod(Pnum) and every sum of
# weights is an integer below 2^53: the arithmetic is exact rational
# arithmetic carried in doubles.
brute_force_block <- function(counts, Pnum, D, j) {
  m <- length(counts)
  units <- rep(seq_len(m), counts)
  n <- length(units)
  stopifnot(D^n < 2^53)
  B <- match(j, units) # the target unit: the first unit of cell j
  grid <- as.matrix(expand.grid(rep(list(seq_len(m)), n), KEEP.OUT.ATTRS = FALSE))
  w <- rep(1, nrow(grid))
  for (u in seq_len(n)) w <- w * Pnum[cbind(grid[, u], units[u])]
  S <- rowSums(grid == j)
  stay <- grid[, B] == j
  lev <- factor(S, levels = 0:n)
  total <- as.numeric(tapply(w, lev, sum, default = 0))
  joint <- as.numeric(tapply(w * stay, lev, sum, default = 0))
  a <- seq_len(n)
  list(
    risk = ifelse(total[a + 1] > 0, joint[a + 1] / total[a + 1] / a, NA_real_),
    prob = total[a + 1] / D^n,
    p_empty = total[1] / D^n,
    gamma = sum(w[stay] / S[stay]) / D^n
  )
}

gcd <- function(a, b) if (b == 0) a else gcd(b, a %% b)

random_counts <- function(max_units = 8) {
  repeat {
    m <- sample(2:4, 1)
    counts <- sample(1:3, m, TRUE)
    if (sum(counts) <= max_units && m^sum(counts) <= 70000) return(counts)
  }
}

random_stochastic_numerators <- function(m, D) {
  vapply(seq_len(m), function(j) diff(c(0, sort(sample(0:D, m - 1, TRUE)), D)), numeric(m))
}

# A table with the block's cells first and some cells outside every block.
cells_for <- function(block_counts, outside = c(1, 2, 4)) {
  cell_frequencies(data_with_counts(c(block_counts, outside)), "k")
}

expect_matches_brute_force <- function(plan, block_counts, Pnum, D, info) {
  m <- length(block_counts)
  n <- sum(block_counts)
  for (j in seq_len(m)) {
    bf <- brute_force_block(block_counts, Pnum, D, j)
    mr <- match_risk(plan, cells = j, a = seq_len(n))
    expect_equal(is.na(mr$risk), is.na(bf$risk), info = info)
    expect_equal(mr$risk, bf$risk, tolerance = 1e-12, info = info)
    expect_equal(mr$prob, bf$prob, tolerance = 1e-12, info = info)
    expect_equal(mr$p_empty[1], bf$p_empty, tolerance = 1e-12, info = info)
    expect_equal(mr$gamma[1], bf$gamma, tolerance = 1e-11, info = info)
  }
}

test_that("exact risk equals brute-force enumeration for random column-stochastic matrices", {
  D <- 12
  for (seed in 1:60) {
    set.seed(seed)
    counts <- random_counts()
    m <- length(counts)
    Pnum <- random_stochastic_numerators(m, D)
    cf <- cells_for(counts)
    plan <- pram_plan(cf, list(seq_len(m)), matrix = list(Pnum / D))
    expect_matches_brute_force(plan, counts, Pnum, D, info = paste("seed", seed))
  }
})

test_that("exact risk equals brute-force enumeration for IFPR blocks", {
  for (seed in 1:60) {
    set.seed(seed)
    repeat {
      counts <- random_counts(7)
      m <- length(counts)
      s <- sample(2:5, 1)
      r <- sample(seq_len(s * min(counts)), 1) # theta = r / s <= min T, may exceed 1
      L <- Reduce(function(x, y) x * y / gcd(x, y), counts)
      D <- s * (m - 1) * L
      if (D^sum(counts) < 2^53) break
    }
    theta <- r / s
    Pnum <- matrix(0, m, m)
    for (i in seq_len(m)) {
      Pnum[, i] <- r * L / counts[i]
      Pnum[i, i] <- (s * counts[i] - r) * (m - 1) * L / counts[i]
    }
    stopifnot(all(colSums(Pnum) == D))
    plan <- pram_plan(cells_for(counts), list(seq_len(m)), theta = theta)
    expect_matches_brute_force(plan, counts, Pnum, D, info = paste("seed", seed, "theta", theta))
  }
})

# A random matrix block (numerators over D) and three cells outside it.
random_block_case <- function(D) {
  counts <- random_counts()
  m <- length(counts)
  Pnum <- random_stochastic_numerators(m, D)
  outside <- sample(1:4, 3, TRUE)
  plan <- pram_plan(cells_for(counts, outside), list(seq_len(m)), matrix = list(Pnum / D))
  list(counts = counts, m = m, Pnum = Pnum, outside = outside, plan = plan)
}

test_that("max_match_risk equals the brute-force maximum for every goal", {
  D <- 12
  for (seed in 1:40) {
    set.seed(seed)
    case <- random_block_case(D)
    counts <- case$counts
    m <- case$m
    Pnum <- case$Pnum
    outside <- case$outside
    plan <- case$plan
    bf <- lapply(seq_len(m), function(j) brute_force_block(counts, Pnum, D, j)$risk)
    r1 <- vapply(bf, `[`, numeric(1), 1)
    all_max <- max(c(unlist(bf), 1 / outside), na.rm = TRUE)
    uniq_max <- max(c(r1, if (any(outside == 1)) 1), na.rm = TRUE)
    su <- c(r1[counts == 1], if (any(outside == 1)) 1)
    su_max <- if (length(su) == 0 || all(is.na(su))) NA_real_ else max(su, na.rm = TRUE)
    info <- paste("seed", seed)
    expect_equal(max_match_risk(plan, "all_matches")$risk, all_max, tolerance = 1e-12, info = info)
    expect_equal(max_match_risk(plan, "unique_matches")$risk, uniq_max, tolerance = 1e-12, info = info)
    expect_equal(max_match_risk(plan, "sample_uniques")$risk, su_max, tolerance = 1e-12, info = info)
    # the reported arg-max attains the maximum
    mx <- max_match_risk(plan, "all_matches")
    expect_equal(match_risk(plan, mx$cell, mx$a)$risk, mx$risk, tolerance = 1e-12, info = info)
  }
})

# max over (cell, a) of w_j R_j(a, t) for the goal, from per-cell risks
# (`risk`: a list with, per cell, its risks at a = 1, 2, ...) and counts.
weighted_max <- function(risk, counts, w, goal) {
  top <- vapply(seq_along(risk), function(j) {
    r <- risk[[j]]
    if (goal != "all_matches") r <- r[1]
    if (goal == "sample_uniques" && counts[j] != 1) r <- NA
    if (all(is.na(r))) NA_real_ else w[j] * max(r, na.rm = TRUE)
  }, numeric(1))
  if (all(is.na(top))) NA_real_ else max(top, na.rm = TRUE)
}

test_that("the weighted maximum (per-cell weights of the core) equals brute force", {
  D <- 12
  goals <- c("all_matches", "unique_matches", "sample_uniques")
  for (seed in 1:30) {
    set.seed(seed)
    case <- random_block_case(D)
    m <- case$m
    plan <- case$plan
    # cells outside the block: R = 1 / T at a = T only
    risk <- c(
      lapply(seq_len(m), function(j) brute_force_block(case$counts, case$Pnum, D, j)$risk),
      lapply(case$outside, function(t) c(rep(NA, t - 1), 1 / t))
    )
    all_counts <- c(case$counts, case$outside)
    w <- sample(c(1, 0.5, runif(3, 1e-6, 1)), m + 3, TRUE)
    ep <- sdcRisk:::engine_plan(plan)
    for (goal in goals) {
      mx <- sdcRisk:::plan_max_risk(plan, goal, "k", ep, weight = w)
      info <- paste("seed", seed, goal)
      expect_equal(mx$risk, weighted_max(risk, all_counts, w, goal), tolerance = 1e-12, info = info)
      if (!is.na(mx$risk)) {
        expect_equal(w[mx$cell] * match_risk(plan, mx$cell, mx$a)$risk, mx$risk, tolerance = 1e-12, info = info)
      }
      # weights 1 are no weights, bit for bit
      expect_identical(sdcRisk:::plan_max_risk(plan, goal, "k", ep, weight = rep(1, m + 3)),
                       sdcRisk:::plan_max_risk(plan, goal, "k", ep), info = info)
    }
  }
})

test_that("the weighted maximum for partial-key intruders and per-variable plans equals every cell's risk", {
  goals <- c("all_matches", "unique_matches", "sample_uniques")
  for (seed in 1:12) {
    set.seed(seed)
    df <- data.frame(x = sample(c("a", "b", "c"), 14, TRUE), y = sample(1:3, 14, TRUE))
    cf <- cell_frequencies(df, c("x", "y"))
    n <- nrow(cf$cells)
    plans <- list(
      pram_plan(cf, list(seq_len(n)), theta = min(cf$cells$count) * 0.9),
      pram_plan_vars(cf, list(y = matrix(c(0.7, 0.2, 0.1, 0.1, 0.8, 0.1, 0.3, 0.3, 0.4), 3)))
    )
    w <- runif(n, 0.01, 1)
    for (plan in plans) {
      ep <- sdcRisk:::engine_plan(plan)
      for (known in list(c("x", "y"), "x", "y")) {
        mr <- match_risk(plan, a = seq_len(sum(cf$cells$count)), known = known)
        risk <- split(mr$risk, mr$cell)
        for (goal in goals) {
          info <- paste("seed", seed, class(plan)[1], paste(known, collapse = "+"), goal)
          mx <- sdcRisk:::plan_max_risk(plan, goal, known, ep, weight = w)
          expect_equal(mx$risk, weighted_max(risk, cf$cells$count, w, goal), tolerance = 1e-10, info = info)
        }
      }
    }
  }
})

test_that("an explicit matrix equal to an IFPR block gives the IFPR risk", {
  cf <- cells_for(c(1, 1, 2, 3, 2))
  ifpr <- pram_plan(cf, list(1:5), theta = 0.8)
  mat <- pram_plan(cf, list(1:5), matrix = list(pram_matrix(ifpr, 1)))
  a <- 1:6
  expect_equal(match_risk(mat, 1:8, a), match_risk(ifpr, 1:8, a), tolerance = 1e-12)
  for (g in c("all_matches", "unique_matches", "sample_uniques")) {
    expect_equal(max_match_risk(mat, g)$risk, max_match_risk(ifpr, g)$risk, tolerance = 1e-12)
  }
})

test_that("three singletons with theta = 0.8: R_1(3, t) = 1/3 exceeds psi(1, 0.8)", {
  plan <- pram_plan(cell_frequencies(data.frame(k = 1:3), "k"), list(1:3), theta = 0.8)
  mr <- match_risk(plan, cells = 1, a = 1:4)
  expect_equal(mr$risk[3], 1 / 3)
  expect_gt(mr$risk[3], psi(1, 0.8))
  expect_true(mr$risk[1] <= psi(1, 0.8))
  expect_true(is.na(mr$risk[4])) # S_1 = 4 is impossible: NA, never NaN
  expect_identical(mr$prob[4], 0)
  mx <- max_match_risk(plan, "all_matches")
  expect_equal(mx$risk, 1 / 3)
  expect_identical(mx$a, 3L)
})

test_that("cells outside every block have R_j(t_j, t) = 1/t_j and NA elsewhere", {
  cf <- cells_for(c(1, 1), outside = c(1, 3))
  plan <- pram_plan(cf, list(1:2), theta = 0.5)
  mr <- match_risk(plan, cells = 4, a = 1:4)
  expect_equal(mr$risk, c(NA, NA, 1 / 3, NA))
  expect_equal(mr$prob, c(0, 0, 1, 0))
  expect_identical(mr$p_empty[1], 0)
  expect_equal(mr$gamma[1], 1 / 3)
  expect_true(is.na(mr$block[1]))
  # an unprotected singleton is found with certainty
  expect_equal(max_match_risk(plan, "sample_uniques")$risk, 1)
  expect_identical(max_match_risk(plan, "sample_uniques")$cell, 3L)
})

test_that("Nayak et al. Table 1: bounds of P(S_1 = 0 | T) when T_1 = 1", {
  theta <- seq(0.1, 0.9, by = 0.1)
  table1 <- rbind(
    `2` = c(0.0900, 0.1600, 0.2100, 0.2400, 0.2500, 0.2400, 0.2100, 0.1600, 0.0900),
    `3` = c(0.0902, 0.1620, 0.2167, 0.2560, 0.2812, 0.2940, 0.2958, 0.2880, 0.2723),
    `4` = c(0.0903, 0.1626, 0.2187, 0.2604, 0.2894, 0.3072, 0.3154, 0.3155, 0.3087),
    `5` = c(0.0904, 0.1629, 0.2196, 0.2624, 0.2931, 0.3132, 0.3243, 0.3277, 0.3247),
    `10` = c(0.0904, 0.1634, 0.2211, 0.2657, 0.2989, 0.3225, 0.3378, 0.3461, 0.3487),
    `15` = c(0.0905, 0.1635, 0.2215, 0.2666, 0.3005, 0.3250, 0.3414, 0.3510, 0.3550)
  )
  ub <- c(0.0905, 0.1637, 0.2222, 0.2681, 0.3033, 0.3293, 0.3476, 0.3595, 0.3659)
  for (k1 in as.integer(rownames(table1))) {
    # the lower bound is attained when every cell of the block is a singleton
    cf <- cell_frequencies(data.frame(k = seq_len(k1)), "k")
    p0 <- vapply(theta, function(th) {
      match_risk(pram_plan(cf, list(seq_len(k1)), theta = th), cells = 1)$p_empty
    }, numeric(1))
    # the paper rounds to 4 decimals (exact ties such as 0.09025 either way)
    expect_true(all(abs(p0 - table1[as.character(k1), ]) <= 5e-5 + 1e-12), info = paste("k1", k1))
  }
  # the upper bound theta exp(-theta) is approached as the other counts grow
  cells <- sdcRisk:::new_sdc_cells(
    cells = data.frame(k = 1:5, count = c(1L, 1e7L, 1e7L, 1e7L, 1e7L)),
    cell_id = integer(0), keys = "k", na = "exclude", n_records = 4e7 + 1, n_excluded = 0
  )
  p0 <- vapply(theta, function(th) match_risk(pram_plan(cells, list(1:5), theta = th), cells = 1)$p_empty, numeric(1))
  expect_true(all(abs(p0 - ub) <= 5e-5 + 1e-12))
  expect_equal(p0, theta * exp(-theta), tolerance = 1e-7)
})

test_that("P(S_j = 0 | T) follows eq. 4.9 for IFPR", {
  counts <- c(1, 2, 2, 5, 9)
  cf <- cell_frequencies(data_with_counts(counts), "k")
  th <- 0.7
  plan <- pram_plan(cf, list(1:5), theta = th)
  k1 <- 5
  eq49 <- vapply(1:5, function(j) {
    (th / counts[j])^counts[j] * prod((1 - th / ((k1 - 1) * counts[-j]))^counts[-j])
  }, numeric(1))
  expect_equal(match_risk(plan)$p_empty, eq49, tolerance = 1e-13)
})

test_that("R_j(1, t) follows eq. 4.11 and is bounded by psi (eq. 4.12)", {
  for (seed in 1:20) {
    set.seed(seed)
    counts <- sample(c(1:6, 50, 1000), sample(2:12, 1), TRUE)
    th <- runif(1, 0, min(counts))
    cf <- cell_frequencies(data_with_counts(counts), "k")
    plan <- pram_plan(cf, list(seq_along(counts)), theta = th)
    k1 <- length(counts)
    eq411 <- vapply(seq_along(counts), function(j) {
      t1 <- counts[j]
      (t1 - th) / (t1 * (t1 - th) + th^2 * sum(counts[-j] / ((k1 - 1) * counts[-j] - th)))
    }, numeric(1))
    r1 <- match_risk(plan, a = 1)$risk
    expect_equal(r1, eq411, tolerance = 1e-12, info = paste("seed", seed))
    expect_true(all(r1 <= psi(counts, th) * (1 + 1e-12)), info = paste("seed", seed))
  }
})

# Log-space reference for an IFPR block, straight from eq. 4.1 and 4.4:
# log Sigma_a = log sum over splits (a_1..a_k) of a among the cells of
# prod_i choose(T_i*, a_i) beta_i^a_i, with T_j* = T_j - 1 for the target j,
# alpha_i = p_ji and beta_i = alpha_i / (1 - alpha_i); both alpha and 1 - alpha
# are written without cancellation.
ifpr_log_sigma_reference <- function(counts, theta, j, a) {
  k <- length(counts)
  tstar <- counts
  tstar[j] <- counts[j] - 1
  alpha <- theta / ((k - 1) * counts)
  oma <- ((k - 1) * counts - theta) / ((k - 1) * counts)
  alpha[j] <- (counts[j] - theta) / counts[j]
  oma[j] <- theta / counts[j]
  lbeta <- log(alpha) - log(oma)
  splits <- as.matrix(expand.grid(rep(list(0:a), k)))
  splits <- splits[rowSums(splits) == a, , drop = FALSE]
  lt <- apply(splits, 1, function(ai) sum(lchoose(tstar, ai) + ai * lbeta))
  mx <- max(lt)
  list(
    log_sigma = if (is.finite(mx)) mx + log(sum(exp(lt - mx))) else -Inf,
    log_base = sum(tstar * log(oma)), log_alpha = log(alpha[j]), log_oma = log(oma[j])
  )
}

test_that("large counts (T up to 1e7): risk agrees with a log-space reference to 1e-9", {
  counts <- c(1L, 3L, 2000000L, 10000000L)
  cells <- sdcRisk:::new_sdc_cells(
    cells = data.frame(k = seq_along(counts), count = counts),
    cell_id = integer(0), keys = "k", na = "exclude", n_records = sum(counts), n_excluded = 0
  )
  for (th in c(0.3, 0.95)) {
    plan <- pram_plan(cells, list(seq_along(counts)), theta = th)
    for (j in seq_along(counts)) {
      mr <- match_risk(plan, cells = j, a = 1:3)
      ref <- lapply(0:3, function(y) ifpr_log_sigma_reference(counts, th, j, y))
      ls <- vapply(ref, `[[`, numeric(1), "log_sigma")
      # eq. 4.4: R_j(a, t) = (1 / a) / (1 + Sigma_a / (beta_j Sigma_{a-1}))
      lbeta_j <- ref[[1]]$log_alpha - ref[[1]]$log_oma
      ref_risk <- (1 / (1:3)) / (1 + exp(ls[2:4] - ls[1:3] - lbeta_j))
      # eq. 4.1-4.2: P(S_j = a) = base (alpha_j Sigma_{a-1} + (1 - alpha_j) Sigma_a)
      la <- ref[[1]]$log_alpha + ls[1:3]
      lb <- ref[[1]]$log_oma + ls[2:4]
      ref_logp <- ref[[1]]$log_base + pmax(la, lb) + log1p(exp(-abs(la - lb)))
      info <- paste("theta", th, "cell", j)
      expect_equal(mr$risk, ref_risk, tolerance = 1e-9, info = info)
      expect_equal(mr$log_prob, ref_logp, tolerance = 1e-9, info = info)
      expect_true(all(is.finite(mr$log_prob)), info = info)
      # P(S_j = 0) of eq. 4.9 in log space
      k1 <- length(counts)
      lp0 <- counts[j] * log(th / counts[j]) + sum(counts[-j] * log1p(-th / ((k1 - 1) * counts[-j])))
      expect_equal(log(mr$p_empty[1]), if (lp0 < -700) -Inf else lp0, tolerance = 1e-9, info = info)
    }
    # the huge cells have risk close to, and below, 1 / T at a = 1
    r <- match_risk(plan, cells = 4, a = 1)$risk
    expect_lt(r, 1 / counts[4])
    expect_gt(r, 0.9 / counts[4])
  }
})

test_that("gamma is the mean correct-match probability (Remark 2.1)", {
  counts <- c(1, 2, 3, 1)
  cf <- cell_frequencies(data_with_counts(counts), "k")
  plan <- pram_plan(cf, list(1:4), theta = 0.6)
  mr <- match_risk(plan, cells = 1:4, a = 1:7)
  by_cell <- split(mr, mr$cell)
  for (d in by_cell) {
    expect_equal(sum(d$risk * d$prob, na.rm = TRUE), d$gamma[1], tolerance = 1e-12)
  }
  # gamma for large blocks via quadrature against the closed form of one binomial:
  # a cell whose only other source is itself, E[1/(1+Bin(n,p))] = (1-(1-p)^(n+1))/((n+1)p)
  cf2 <- cell_frequencies(data_with_counts(c(5000, 1)), "k")
  p <- matrix(c(0.9, 0.1, 0, 1), 2)
  plan2 <- pram_plan(cf2, list(1:2), matrix = list(p))
  n <- 4999
  g <- 0.9 * (1 - 0.1^(n + 1)) / ((n + 1) * 0.9)
  expect_equal(match_risk(plan2, cells = 1)$gamma, g, tolerance = 1e-12)
})

test_that("max_match_risk searches a exactly, without a fixed cut-off", {
  # a block where the maximum sits at a large a: one cell of count 30 whose
  # units always stay, plus singletons that all move into it
  counts <- c(30, 1, 1, 1)
  cf <- cell_frequencies(data_with_counts(counts), "k")
  p <- diag(4)
  p[, 2:4] <- 0
  p[1, 2:4] <- 1
  plan <- pram_plan(cf, list(1:4), matrix = list(p))
  mx <- max_match_risk(plan, "all_matches")
  # S_1 = 33 always; R_1(33) = 1/33; cells 2-4 are always empty
  expect_equal(mx$risk, 1 / 33)
  expect_identical(mx$a, 33L)
  expect_true(is.na(max_match_risk(plan, "sample_uniques")$risk))
  expect_output(print(max_match_risk(plan, "sample_uniques")), "can occur")
})

test_that("print of the maximum names the cell, its keys and a", {
  df <- data.frame(sex = c("F", "M", "M", "F", "F"), area = c("A", "A", "B", "B", "B"))
  cf <- cell_frequencies(df, c("sex", "area"))
  plan <- pram_plan(cf, list(1:3), theta = 0.8)
  expect_snapshot(print(max_match_risk(plan)))
})

test_that("max_match_risk_known() prints risks from 1 to 4e-4 in fixed notation, within 80 columns (issue 37)", {
  keys <- c("sex", "age", "race", "marital", "puma")
  set.seed(5)
  rel <- pram_release(pums_md[1:5000, ], keys, vars = c("race", "marital"), pd = 0.8)
  kn <- max_match_risk_known(rel$plan, subsets = list(c("sex", "age"), "sex", "marital"))
  out <- utils::capture.output(print(kn))
  expect_true(all(nchar(out) <= 80))
  expect_false(any(grepl("[0-9]e[-+][0-9]", out)))
  # 1 prints as 1, and the smallest risk (sex alone: about 1 / 2,500) with its digits
  expect_identical(kn$risk[1], 1)
  expect_true(any(grepl(" 1 ", out[-(1:3)])))
  expect_true(any(grepl(format(signif(min(kn$risk), 6), scientific = FALSE), out, fixed = TRUE)))
  # a long certificate line of max_match_risk() is wrapped too
  expect_true(all(nchar(format(max_match_risk(rel$plan))) <= 80))
})

test_that("bad input to the risk functions gets classed errors", {
  cf <- cells_for(c(1, 1, 2))
  plan <- pram_plan(cf, list(1:3), theta = 0.5)
  expect_error(match_risk(cf), class = "sdcRisk_error_argument")
  expect_error(match_risk(plan, cells = 0), class = "sdcRisk_error_argument")
  expect_error(match_risk(plan, cells = 99), class = "sdcRisk_error_argument")
  expect_error(match_risk(plan, a = 0), class = "sdcRisk_error_argument")
  expect_error(match_risk(plan, a = 1.5), class = "sdcRisk_error_argument")
  expect_error(max_match_risk(plan, "everything"))
  expect_snapshot(error = TRUE, match_risk(plan, cells = c(1, 99)))
  expect_snapshot(error = TRUE, match_risk(plan, a = -1))
})

test_that("max_match_risk_known() for a sample: each set's maximum is max_match_risk()'s with the population", {
  df <- data.frame(x = c("a", "a", "b", "b", "b", "c"), y = c("u", "v", "u", "v", "v", "u"))
  cf <- cell_frequencies(df, c("x", "y"))
  plan <- pram_plan_vars(cf, list(y = matrix(c(0.6, 0.4, 0.3, 0.7), 2)))
  pop <- transform(cf$cells, count = count * c(3L, 1L, 5L, 2L, 4L))
  kn <- max_match_risk_known(plan, population = pop, target_in_file = "unknown")
  for (i in seq_len(nrow(kn))) {
    k <- strsplit(kn$known[i], ", ")[[1]]
    mx <- max_match_risk(plan, known = k, population = pop, target_in_file = "unknown")
    expect_identical(kn$risk[i], mx$risk)
    expect_identical(kn$p_in_file[i], mx$p_in_file)
  }
  # under the head line since issue 37 (item 9: lines within 80 columns)
  expect_match(paste(format(kn), collapse = " "), "for a target who may not be in the file")
  expect_null(max_match_risk_known(plan)$p_in_file)
})

# A random plan on three keys (s has two categories): IFPR blocks with a few
# shared thetas, explicit matrix blocks and cells outside every block.
random_known_plan <- function(seed) {
  set.seed(seed)
  n <- sample(40:90, 1)
  df <- data.frame(s = sample(c("f", "m"), n, TRUE), x = sample(letters[1:4], n, TRUE),
                   y = sample(1:5, n, TRUE, prob = c(5, 3, 2, 1, 1)))
  cf <- cell_frequencies(df, c("s", "x", "y"))
  nc <- nrow(cf$cells)
  ids <- sample(nc)
  size <- sample(2:5, nc, TRUE)
  blocks <- list()
  at <- 1
  while (at + 1 <= nc - 2) {
    m <- min(size[at], nc - 2 - at + 1)
    if (m < 2) break
    blocks[[length(blocks) + 1]] <- ids[at:(at + m - 1)]
    at <- at + m
  }
  nb <- length(blocks)
  is_mat <- seq_len(nb) %% 3 == 0
  theta <- vapply(seq_len(nb), function(b) {
    if (is_mat[b]) NA_real_ else min(cf$cells$count[blocks[[b]]]) * sample(c(0.5, 0.8, 1), 1)
  }, numeric(1))
  mats <- lapply(seq_len(nb), function(b) {
    if (!is_mat[b]) return(NULL)
    m <- length(blocks[[b]])
    p <- matrix(runif(m * m), m) + diag(m) * 2
    sweep(p, 2, colSums(p), "/")
  })
  list(cf = cf, plan = pram_plan(cf, blocks, theta = theta, matrix = mats))
}

test_that("max_match_risk_known() is bit for bit the maximum of every cell's partial-key risk on random plans", {
  subsets <- list("s", "x", "y", c("s", "x"), c("s", "y"), c("x", "y"))
  for (seed in 1:8) {
    case <- random_known_plan(seed)
    plan <- case$plan
    counts <- case$cf$cells$count
    total <- sum(counts)
    for (goal in c("all_matches", "unique_matches", "sample_uniques")) {
      kn <- max_match_risk_known(plan, goal, subsets = subsets)
      for (k in subsets) {
        info <- paste("seed", seed, goal, paste(k, collapse = "+"))
        # every cell's risk from the per-cell model (one binomial per cell)
        mr <- match_risk(plan, a = seq_len(total), known = k)
        if (goal == "all_matches") {
          # without gamma, cells that stay in D alike share one merged model:
          # the same risks and probabilities, bit for bit
          ek <- sdcRisk:::engine_known(plan, sdcRisk:::engine_plan(plan), k)
          cells <- sample(nrow(case$cf$cells))
          with_g <- sdcRisk:::cpp_cell_risk(ek, cells, seq_len(total), TRUE)
          without <- sdcRisk:::cpp_cell_risk(ek, cells, seq_len(total), FALSE)
          for (v in c("risk", "log_prob", "log_p_empty")) expect_identical(without[[v]], with_g[[v]], info = info)
        }
        keep <- switch(goal,
          all_matches = rep(TRUE, nrow(mr)),
          unique_matches = mr$a == 1,
          sample_uniques = mr$a == 1 & mr$count == 1
        )
        r <- mr$risk[keep]
        ref <- if (all(is.na(r))) NA_real_ else max(r, na.rm = TRUE)
        row <- kn[kn$known == paste(k, collapse = ", "), ]
        expect_identical(row$risk, ref, info = info)
        if (!is.na(ref)) {
          # the reported cell and a reach it (among exact ties the search
          # may report a cell other than the smallest: it skips a cell
          # whose bound 1 / T_j only equals the maximum)
          at <- mr$cell == row$cell & mr$a == row$a
          expect_identical(mr$risk[keep & at], ref, info = info)
          expect_identical(row$count_known, mr$count_known[mr$cell == row$cell][1], info = info)
        }
      }
    }
  }
})

test_that("a known key with two categories and many blocks: each cell's risk against brute force", {
  # 24 cells in 8 IFPR blocks of 3, every block crossing the two values of s
  df <- data.frame(s = rep(c("f", "m"), 12), x = rep(1:12, each = 2))
  df <- df[rep(seq_len(24), rep(c(1, 2, 1, 3), 6)), ]
  cf <- cell_frequencies(df, c("s", "x"))
  blocks <- split(seq_len(24), rep(1:8, each = 3))
  theta <- rep(c(0.5, 0.9), 4)
  plan <- pram_plan(cf, unname(blocks), theta = theta)
  counts <- cf$cells$count
  s <- cf$cells$s
  # P: the full transition matrix over the 24 cells
  P <- matrix(0, 24, 24)
  for (b in seq_along(blocks)) P[blocks[[b]], blocks[[b]]] <- pram_matrix(plan, b)
  total <- sum(counts)
  for (j in c(1, 2, 5, 10)) {
    in_d <- s == s[j]
    alpha <- colSums(P[in_d, , drop = FALSE])
    # Y: the other units that land in D; S_D = Y + 1{B lands in D}
    y <- 1
    for (i in seq_len(24)) {
      n <- counts[i] - (i == j)
      if (n > 0) y <- convolve(y, rev(dbinom(0:n, n, alpha[i])), type = "open")
    }
    y <- c(y, rep(0, total + 1 - length(y)))
    a <- seq_len(total)
    ref <- alpha[j] * y[a] / (alpha[j] * y[a] + (1 - alpha[j]) * y[a + 1]) / a
    got <- match_risk(plan, j, a = a, known = "s")
    ok <- y[a] > 1e-12
    expect_equal(got$risk[ok], ref[ok], tolerance = 1e-8, info = paste("cell", j))
  }
  mr <- match_risk(plan, a = seq_len(total), known = "s")
  expect_identical(max_match_risk(plan, known = "s")$risk, max(mr$risk, na.rm = TRUE))
  expect_identical(max_match_risk_known(plan, subsets = list("s"))$risk, max(mr$risk, na.rm = TRUE))
})
