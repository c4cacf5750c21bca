# The risk of a sample release for an intruder who does not know whether his
# target is in the file, against brute force: every sample of the given
# counts from a tiny population, every perturbation of the sampled units and
# every target of the population, with no formula of the package.

# P(CM | X_B = c_j, S_D = a) for a = 1..n (NA where P(S_D = a) = 0). The
# population has F[c] units of each sample cell c; a sample takes f[c] of
# them (every subset equally likely); each sampled unit of cell c lands in
# outcome o with probability P[o, c]; the intruder counts the released
# records in the outcomes D and picks one at random; the target is a
# uniform population unit of cell j.
brute_force_sample <- function(big_f, f, P, j, D) {
  units <- rep(seq_along(big_f), big_f)
  # (combn(x, m) of a single number x would choose from seq_len(x))
  subsets <- function(x, m) if (length(x) == 1) list(x) else utils::combn(x, m, simplify = FALSE)
  pick <- lapply(seq_along(big_f), function(c) subsets(which(units == c), f[c]))
  samples <- as.matrix(expand.grid(lapply(pick, seq_along)))
  n <- sum(f)
  grid <- as.matrix(expand.grid(rep(list(seq_len(nrow(P))), n)))
  in_d <- matrix(grid %in% D, nrow(grid))
  s_d <- factor(rowSums(in_d), levels = 0:n)
  num <- den <- numeric(n + 1)
  for (s in seq_len(nrow(samples))) {
    sampled <- unlist(lapply(seq_along(big_f), function(c) pick[[c]][[samples[s, c]]]))
    pr <- Reduce(`*`, lapply(seq_len(n), function(u) P[grid[, u], units[sampled[u]]]))
    den <- den + as.numeric(tapply(pr, s_d, sum, default = 0))
    for (b in which(units == j)) {
      u <- match(b, sampled)
      # the target is sampled, lands in D, and is the record picked
      if (!is.na(u)) num <- num + as.numeric(tapply(pr * in_d[, u] / pmax(rowSums(in_d), 1), s_d, sum, default = 0))
    }
  }
  a <- seq_len(n)
  ifelse(den[a + 1] > 0, num[a + 1] / (big_f[j] * den[a + 1]), NA_real_)
}

# A tiny sample of keys x (2 categories) and y (3), its cells, and a
# population with at least the sample's units in each of its cells, more
# in some, a cell and a category of y the sample does not have.
tiny_sample <- function() {
  repeat {
    df <- data.frame(x = sample(c("a", "b"), sample(3:5, 1), TRUE), y = sample(c("u", "v"), 1, TRUE))
    df$y[-1] <- sample(c("u", "v"), nrow(df) - 1, TRUE)
    cf <- cell_frequencies(df, c("x", "y"))
    if (nrow(cf$cells) >= 2) break
  }
  f <- cf$cells$count
  big_f <- f + sample(0:2, length(f), TRUE)
  pop <- rbind(
    data.frame(x = as.character(cf$cells$x), y = as.character(cf$cells$y), count = big_f),
    data.frame(x = "a", y = "w", count = 3)
  )
  pop <- pop[sample(nrow(pop)), ]
  list(df = df, cf = cf, f = f, big_f = big_f, pop = pop)
}

test_that("the risk of a target who may not be in the file equals brute force over samples, perturbations and targets (block plans)", {
  for (seed in 1:25) {
    set.seed(seed)
    s <- tiny_sample()
    m <- nrow(s$cf$cells)
    # a random column-stochastic matrix over all cells, or a block of some
    P <- matrix(stats::rexp(m * m) + diag(m), m)
    P <- sweep(P, 2, colSums(P), "/")
    plan <- pram_plan(s$cf, list(seq_len(m)), matrix = list(P))
    for (known in list(c("x", "y"), "x")) {
      for (j in seq_len(m)) {
        D <- which(s$cf$cells$x == s$cf$cells$x[j] & (length(known) == 1 | s$cf$cells$y == s$cf$cells$y[j]))
        bf <- brute_force_sample(s$big_f, s$f, P, j, D)
        mr <- match_risk(plan, j, a = seq_along(bf), known = known, population = s$pop, target_in_file = "unknown")
        info <- paste("seed", seed, "cell", j, paste(known, collapse = "+"))
        expect_equal(is.na(mr$risk), is.na(bf), info = info)
        expect_equal(mr$risk, bf, tolerance = 1e-12, info = info)
        expect_equal(mr$p_in_file, rep(s$f[j] / s$big_f[j], length(bf)), info = info)
        expect_equal(mr$risk_in_file * mr$p_in_file, mr$risk, info = info)
      }
    }
  }
})

test_that("the risk of a target who may not be in the file equals brute force (per-variable plans and cells outside blocks)", {
  for (seed in 1:20) {
    set.seed(100 + seed)
    s <- tiny_sample()
    cells <- s$cf$cells
    m <- nrow(cells)
    # y perturbed within x: outcomes are every (x, y) of the sample's categories
    M <- matrix(stats::rexp(4) + diag(2), 2)
    M <- sweep(M, 2, colSums(M), "/")
    lev_y <- levels(factor(s$df$y))
    if (length(lev_y) < 2) next
    out <- expand.grid(y = lev_y, x = c("a", "b"), stringsAsFactors = FALSE)
    P <- vapply(seq_len(m), function(c) {
      (out$x == cells$x[c]) * M[cbind(match(out$y, lev_y), match(cells$y[c], lev_y))]
    }, numeric(nrow(out)))
    plan <- pram_plan_vars(s$cf, list(y = M))
    for (known in list(c("x", "y"), "y")) {
      for (j in seq_len(m)) {
        D <- which((length(known) == 1 | out$x == cells$x[j]) & out$y == cells$y[j])
        bf <- brute_force_sample(s$big_f, s$f, P, j, D)
        mr <- match_risk(plan, j, a = seq_along(bf), known = known, population = s$pop, target_in_file = "unknown")
        expect_equal(mr$risk, bf, tolerance = 1e-12, info = paste("seed", seed, "cell", j))
      }
    }
    # a block of the first two cells, the others never change: 1 / F at a = t
    bp <- pram_plan(s$cf, list(1:2), matrix = list(diag(2) * 0.5 + 0.25))
    Pb <- diag(m)
    Pb[1:2, 1:2] <- diag(2) * 0.5 + 0.25
    for (j in seq_len(m)) {
      bf <- brute_force_sample(s$big_f, s$f, Pb, j, j)
      mr <- match_risk(bp, j, a = seq_along(bf), population = s$pop, target_in_file = "unknown")
      expect_equal(mr$risk, bf, tolerance = 1e-12, info = paste("seed", seed, "block cell", j))
      if (j > 2) expect_equal(mr$risk[s$f[j]], 1 / s$big_f[j], tolerance = 1e-15)
    }
  }
})

test_that("max_match_risk() for a target who may not be in the file is the brute-force maximum of (t / F) R", {
  for (seed in 1:12) {
    set.seed(200 + seed)
    s <- tiny_sample()
    m <- nrow(s$cf$cells)
    plan <- pram_plan(s$cf, list(seq_len(m)), theta = min(s$f) * 0.7)
    n <- sum(s$f)
    mr <- match_risk(plan, a = seq_len(n), population = s$pop, target_in_file = "unknown")
    for (goal in c("all_matches", "unique_matches", "sample_uniques")) {
      keep <- !is.na(mr$risk) & (goal == "all_matches" | mr$a == 1) & (goal != "sample_uniques" | mr$count == 1)
      want <- if (any(keep)) max(mr$risk[keep]) else NA_real_
      mx <- max_match_risk(plan, goal, population = s$pop, target_in_file = "unknown")
      expect_equal(mx$risk, want, tolerance = 1e-12, info = paste("seed", seed, goal))
      if (!is.na(want)) {
        expect_equal(mx$p_in_file, s$f[mx$cell] / s$big_f[mx$cell])
        expect_equal(mx$risk_in_file, match_risk(plan, mx$cell, mx$a)$risk, tolerance = 1e-12)
      }
      # never above the risk of a target known to be in the file
      if (!is.na(want)) expect_lte(mx$risk, max_match_risk(plan, goal)$risk)
    }
  }
})

test_that("the risk of a target who may not be in the file agrees with simulation on an ACS excerpt as the population", {
  # the population: Massachusetts persons of the 2019 ACS excerpt; the
  # file: a simple random sample of a quarter of them, released by IFPR
  pop <- readRDS(test_path("fixtures", "acs2019", "ma2019.rds"))
  pop$AGEP <- cut(pop$AGEP, c(seq(0, 80, 10), Inf), right = FALSE)
  keys <- c("SEX", "AGEP", "RAC1P", "MSP", "PUMA")
  set.seed(34)
  in_file <- sort(sample(nrow(pop), nrow(pop) %/% 4))
  rel <- ifpr(pop[in_file, ], keys, xi = 0.3, calibrate = "bound")
  plan <- rel$plan
  cf <- rel$cells
  counts <- cell_frequencies(pop, keys)$cells
  # population cells of the sample's cells, and each population unit's cell
  # in the sample's numbering (NA for cells the sample does not have)
  key_of <- function(d) do.call(paste, c(lapply(keys, function(k) as.character(d[[k]])), sep = "|"))
  unit_cell <- match(key_of(pop), key_of(cf$cells))
  big_f <- tabulate(unit_cell, nrow(cf$cells))
  # target cells: in blocks, with more population than sample units
  in_block <- plan$block_cells
  targets <- utils::head(in_block[big_f[in_block] > cf$cells$count[in_block]], 6)
  expect_gte(length(targets), 4)
  ep <- sdcRisk:::engine_plan(plan)
  reps <- 4000
  hits <- matrix(0, length(targets), 8)
  seen <- matrix(0, length(targets), 8)
  units_of <- lapply(targets, function(j) which(unit_cell == j))
  for (r in seq_len(reps)) {
    new_cell <- sdcRisk:::plan_draw(plan, cf$cell_id, ep = ep)
    s <- tabulate(new_cell, nrow(cf$cells))[targets]
    for (i in seq_along(targets)) {
      if (s[i] < 1 || s[i] > 8) next
      # a uniform population unit of the cell: in the file, kept in its
      # cell and picked (probability 1 / S_j), or not
      b <- units_of[[i]][sample.int(length(units_of[[i]]), 1)]
      rec <- match(b, in_file)
      hit <- !is.na(rec) && new_cell[rec] == targets[i]
      hits[i, s[i]] <- hits[i, s[i]] + hit / s[i]
      seen[i, s[i]] <- seen[i, s[i]] + 1
    }
  }
  pop_counts <- data.frame(counts[keys], count = counts$count)
  exact <- match_risk(plan, targets, a = 1:8, population = pop_counts, target_in_file = "unknown")
  expect_equal(exact$p_in_file[exact$a == 1], cf$cells$count[targets] / big_f[targets])
  sim <- as.vector(t(hits / pmax(seen, 1)))
  n <- as.vector(t(seen))
  ok <- n >= 100 & !is.na(exact$risk)
  expect_gte(sum(ok), 8)
  # each hit is at most 1: a standard error from the exact risk and the draws
  se <- sqrt(pmax(exact$risk, 1e-3) / n)
  expect_true(all(abs(sim[ok] - exact$risk[ok]) <= 4.5 * se[ok]),
              info = paste(format(sim[ok], digits = 3), format(exact$risk[ok], digits = 3), collapse = "; "))
})

test_that("population counts come from a data frame, cell frequencies or a database table alike", {
  set.seed(7)
  s <- tiny_sample()
  m <- nrow(s$cf$cells)
  plan <- pram_plan(s$cf, list(seq_len(m)), theta = min(s$f) * 0.5)
  want <- max_match_risk(plan, population = s$pop, target_in_file = "unknown")
  records <- s$pop[rep(seq_len(nrow(s$pop)), s$pop$count), c("x", "y")]
  from_cells <- max_match_risk(plan, population = cell_frequencies(records, c("x", "y")), target_in_file = "unknown")
  expect_equal(from_cells$risk, want$risk)
  # rows with the same keys add up; factors match strings
  split_rows <- rbind(s$pop, transform(s$pop, count = 0L))
  split_rows$x <- factor(split_rows$x)
  expect_equal(max_match_risk(plan, population = split_rows, target_in_file = "unknown")$risk, want$risk)
  skip_if_not_installed("RSQLite")
  skip_if_not_installed("dbplyr")
  con <- DBI::dbConnect(RSQLite::SQLite(), ":memory:")
  on.exit(DBI::dbDisconnect(con))
  DBI::dbWriteTable(con, "pop", s$pop)
  lazy <- dplyr::tbl(con, "pop")
  expect_equal(max_match_risk(plan, population = lazy, target_in_file = "unknown")$risk, want$risk)
})

test_that("a target who may not be in the file is printed as such; the default is unchanged", {
  df <- data.frame(k = rep(c("a", "b", "c", "d"), c(1, 1, 2, 3)))
  cf <- cell_frequencies(df, "k")
  plan <- pram_plan(cf, list(1:3), theta = 0.8)
  pop <- data.frame(k = c("a", "b", "c", "d"), count = c(10L, 4L, 5L, 30L))
  expect_snapshot({
    max_match_risk(plan)
    max_match_risk(plan, population = pop, target_in_file = "unknown")
  })
  expect_identical(max_match_risk(plan, target_in_file = "known")$risk, max_match_risk(plan)$risk)
})

test_that("bad population counts get classed errors naming the argument", {
  df <- data.frame(x = c("a", "a", "b"), y = c(1L, 2L, 2L))
  cf <- cell_frequencies(df, c("x", "y"))
  plan <- pram_plan(cf, list(1:3), theta = 0.5)
  pop <- data.frame(x = c("a", "a", "b"), y = c(1L, 2L, 2L), count = c(5, 3, 2))
  mx <- function(population, target_in_file = "unknown") {
    max_match_risk(plan, population = population, target_in_file = target_in_file)
  }
  expect_error(mx(NULL), class = "sdcRisk_error_population")
  expect_error(mx(pop, "known"), class = "sdcRisk_error_population")
  expect_error(mx(pop, "maybe"), class = "sdcRisk_error_argument")
  expect_error(mx(list(1)), class = "sdcRisk_error_population")
  expect_error(mx(pop[c("x", "count")]), class = "sdcRisk_error_population")
  expect_error(mx(transform(pop, count = c(5, NA, 2))), class = "sdcRisk_error_population")
  expect_error(mx(transform(pop, count = c(5, -1, 2))), class = "sdcRisk_error_population")
  expect_error(mx(transform(pop, count = c(5, 1.5, 2))), class = "sdcRisk_error_population")
  expect_error(mx(transform(pop, count = c(5, 0, 2))), class = "sdcRisk_error_population_missing")
  expect_error(mx(pop[-2, ]), class = "sdcRisk_error_population_missing")
  expect_error(mx(transform(pop, x = c("a", "a", "c"))), class = "sdcRisk_error_population_categories")
  expect_error(mx(transform(pop, y = as.character(y))), class = "sdcRisk_error_population_categories")
  # F below t: the cell (b, 2) has 2 records in the sample, 1 in the population
  df2 <- data.frame(x = c("a", "a", "b", "b"), y = c(1L, 2L, 2L, 2L))
  plan2 <- pram_plan(cell_frequencies(df2, c("x", "y")), list(1:3), theta = 0.5)
  pop_small <- transform(pop, count = c(5, 3, 1))
  expect_error(max_match_risk(plan2, population = pop_small, target_in_file = "unknown"),
               class = "sdcRisk_error_population_counts")
  expect_snapshot(error = TRUE, {
    max_match_risk(plan2, population = pop_small, target_in_file = "unknown")
    mx(pop[-2, ])
    mx(transform(pop, x = c("a", "a", "c")))
    mx(pop, "known")
  })
})

test_that("population counts are joined alike when the keys' combinations pass 2^62", {
  set.seed(3)
  n <- 3000
  d <- as.data.frame(replicate(7, sample.int(4000L, n, TRUE)))
  keys <- names(d)
  # thousands of values per key: the warning for keys too distinct to release
  # is expected here (this test is about the join's arithmetic)
  warned <- 0
  cf <- withCallingHandlers(cell_frequencies(d, keys), sdcRisk_warning_key_distinct = function(w) {
    warned <<- warned + 1
    invokeRestart("muffleWarning")
  })
  expect_equal(warned, 7)
  pop <- rbind(transform(cf$cells, count = count + 2L), transform(cf$cells[1:5, ], count = 1L))
  pop[[1]][nrow(pop)] <- -1L # a category the sample lacks
  big_f <- sdcRisk:::population_counts(cf, pop)
  want <- cf$cells$count + 2 + c(1, 1, 1, 1, 0, rep(0, nrow(cf$cells) - 5))
  expect_equal(as.vector(big_f), want)
  expect_gt(prod(as.numeric(vapply(keys, function(k) length(unique(d[[k]])), 1))), 2^62)
})
