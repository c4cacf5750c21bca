# Exact risk of per-variable PRAM plans, and of any plan for intruders who
# know only some keys, against enumeration of every outcome.

# Probability that each unit lands in D, from the dense transition matrix over
# the full grid of categories (built here independently of the package: the
# Kronecker product of the per-variable matrices, stratum by stratum).
bf_vars_alpha <- function(df, keys, mats, strata, known, unit_b) {
  lev <- lapply(df[keys], function(x) sort(unique(x)))
  code <- sapply(keys, function(k) match(df[[k]], lev[[k]]))
  code <- matrix(code, nrow(df))
  grid <- as.matrix(expand.grid(lapply(lev, seq_along)))
  stratum_of <- function(u) {
    if (length(strata) == 0) return(1L)
    paste0(paste0(strata, "=", sapply(strata, function(s) as.character(df[[s]][u]))), collapse = ", ")
  }
  in_d <- apply(grid, 1, function(g) all(g[match(known, keys)] == code[unit_b, match(known, keys)]))
  vapply(seq_len(nrow(df)), function(u) {
    m <- if (length(strata) == 0) mats else mats[[stratum_of(u)]]
    p <- apply(grid, 1, function(g) {
      prod(vapply(seq_along(keys), function(k) {
        v <- keys[k]
        if (v %in% names(m)) m[[v]][g[k], code[u, k]] else as.numeric(g[k] == code[u, k])
      }, 0))
    })
    sum(p[in_d])
  }, 0) -> alpha
  # the sum over D of the Kronecker product is exactly 1 where every factor
  # sums to 1; floating point leaves 1 - 1e-16, which would make impossible
  # events possible
  alpha[abs(alpha - 1) < 1e-12] <- 1
  alpha
}

# R_D(a), P(S_D = a) for a = 1..n, P(S_D = 0) and gamma by enumerating which
# units land in D.
bf_enumerate <- function(alpha, b) {
  n <- length(alpha)
  out <- expand.grid(rep(list(0:1), n))
  pr <- apply(out, 1, function(x) prod(ifelse(x == 1, alpha, 1 - alpha)))
  s <- rowSums(out)
  prob <- vapply(seq_len(n), function(a) sum(pr[s == a]), 0)
  joint <- vapply(seq_len(n), function(a) sum(pr[s == a & out[[b]] == 1]), 0)
  risk <- ifelse(prob > 0, joint / prob / seq_len(n), NA)
  list(risk = risk, prob = prob, p_empty = sum(pr[s == 0]), gamma = sum(joint / seq_len(n)))
}

random_matrix <- function(k, zeros = FALSE) {
  p <- matrix(stats::rexp(k * k), k, k)
  if (zeros) p[sample(length(p), k %/% 2)] <- 0
  diag(p) <- diag(p) + 0.1
  sweep(p, 2, colSums(p), "/")
}

random_vars_case <- function(seed) {
  set.seed(seed)
  n <- sample(4:8, 1)
  df <- data.frame(
    x = sample(c("a", "b", "c"), n, TRUE),
    y = sample(c("u", "v"), n, TRUE),
    z = sample(c("p", "q"), n, TRUE)
  )
  keys <- c("x", "y", "z")
  k <- vapply(df, function(v) length(unique(v)), 1L)
  strata <- if (seed %% 3 == 0 && k[["z"]] == 2) "z" else character(0)
  cand <- setdiff(keys[k >= 2], strata)
  vars <- if (length(cand) == 1) cand else sample(cand, sample(seq_along(cand), 1))
  one <- function() {
    m <- lapply(vars, function(v) random_matrix(k[[v]], zeros = seed %% 2 == 0))
    names(m) <- vars
    m
  }
  if (length(strata) == 0) {
    mats <- one()
  } else {
    labs <- paste0("z=", sort(unique(df$z)))
    mats <- lapply(labs, function(l) one())
    names(mats) <- labs
  }
  known <- if (seed %% 2 == 1) keys else keys[sort(sample(3, sample(1:3, 1)))]
  list(df = df, keys = keys, vars = vars, strata = strata, mats = mats, known = known)
}

known_counts_ref <- function(df, cf, known) {
  id <- do.call(paste, df[known])
  cid <- do.call(paste, cf$cells[known])
  as.vector(table(id)[cid])
}

test_that("match_risk() on per-variable plans equals enumeration of every outcome", {
  for (seed in 1:40) {
    cs <- random_vars_case(seed)
    cf <- cell_frequencies(cs$df, cs$keys)
    plan <- pram_plan_vars(cf, cs$mats, strata = if (length(cs$strata)) cs$strata)
    n <- nrow(cs$df)
    mr <- match_risk(plan, a = seq_len(n), known = cs$known)
    for (j in seq_len(nrow(cf$cells))) {
      b <- which(cf$cell_id == j)[1]
      ref <- bf_enumerate(bf_vars_alpha(cs$df, cs$keys, cs$mats, cs$strata, cs$known, b), b)
      got <- mr[mr$cell == j, ]
      info <- paste("seed", seed, "cell", j)
      expect_identical(is.na(got$risk), is.na(ref$risk), info = info)
      ok <- !is.na(ref$risk)
      expect_equal(got$risk[ok], ref$risk[ok], tolerance = 1e-9, info = info)
      expect_equal(got$prob, ref$prob, tolerance = 1e-9, info = info)
      expect_equal(got$p_empty[1], ref$p_empty, tolerance = 1e-9, info = info)
      expect_equal(got$gamma[1], ref$gamma, tolerance = 1e-9, info = info)
    }
  }
})

test_that("max_match_risk() on per-variable plans is the maximum over enumeration, for every goal", {
  for (seed in 1:30) {
    cs <- random_vars_case(seed)
    cf <- cell_frequencies(cs$df, cs$keys)
    plan <- pram_plan_vars(cf, cs$mats, strata = if (length(cs$strata)) cs$strata)
    n <- nrow(cs$df)
    refs <- lapply(seq_len(nrow(cf$cells)), function(j) {
      b <- which(cf$cell_id == j)[1]
      bf_enumerate(bf_vars_alpha(cs$df, cs$keys, cs$mats, cs$strata, cs$known, b), b)$risk
    })
    tk <- known_counts_ref(cs$df, cf, cs$known)
    for (goal in c("all_matches", "unique_matches", "sample_uniques")) {
      keep <- switch(goal,
        all_matches = rep(TRUE, length(refs)), unique_matches = rep(TRUE, length(refs)),
        sample_uniques = cf$cells$count == 1
      )
      vals <- unlist(lapply(refs[keep], function(r) if (goal == "all_matches") r else r[1]))
      want <- if (all(is.na(vals))) NA_real_ else max(vals, na.rm = TRUE)
      got <- max_match_risk(plan, goal, known = cs$known)
      expect_equal(got$risk, want, tolerance = 1e-9, info = paste("seed", seed, goal))
    }
  }
})

# sdcMicro-style invariant matrix (package convention: columns = original
# category): diagonal pd, the rest spread evenly, made invariant for `freq`
invariant_like <- function(freq, pd) {
  freq <- as.numeric(freq)
  k <- length(freq)
  p <- matrix((1 - pd) / (k - 1), k, k)
  diag(p) <- pd
  denom <- as.vector(crossprod(p, freq))
  r <- p %*% (t(p * freq) / denom)
  r <- 0.5 * r / rowSums(r) + 0.5 * diag(k)
  t(r)
}

test_that("the certificate of larger per-variable plans is the maximum over every cell and every a", {
  # the certificate evaluates only targets whose bound can beat the maximum;
  # the reference evaluates every cell at every a (match_risk()), for plans
  # with hundreds of cells: invariant or random matrices, strata, intruders
  # who know some keys, strong perturbation (so that a >= 2 matters)
  for (seed in 1:12) {
    set.seed(seed)
    n <- sample(c(150, 400), 1)
    df <- data.frame(
      s = sample(c("f", "m"), n, TRUE),
      x = sample(letters[1:6], n, TRUE, prob = c(30, 20, 10, 5, 1, 0.5)),
      y = sample(c("u", "v", "w", "z"), n, TRUE),
      z = sample(c("p", "q", "r"), n, TRUE, prob = c(5, 3, 1))
    )
    if (seed %% 4 == 0) df <- df[rep(seq_len(n), sample(1:6, n, TRUE)), ]
    keys <- c("s", "x", "y", "z")
    cf <- cell_frequencies(df, keys)
    pd <- if (seed %% 3 == 0) 0.3 else 0.8
    lev <- lapply(df[c("x", "y", "z")], function(v) sort(unique(v)))
    one <- function(d) {
      list(
        x = if (seed %% 2 == 0) {
          invariant_like(table(factor(d$x, lev$x)) + 0.5, pd)
        } else {
          random_matrix(length(lev$x), seed %% 5 == 0)
        },
        y = invariant_like(table(factor(d$y, lev$y)) + 0.5, pd),
        z = random_matrix(length(lev$z))
      )
    }
    strata <- if (seed %% 3 == 1) "s" else NULL
    mats <- if (is.null(strata)) one(df) else list("s=f" = one(df[df$s == "f", ]), "s=m" = one(df[df$s == "m", ]))
    plan <- pram_plan_vars(cf, mats, strata = strata)
    known <- switch(seed %% 4 + 1, NULL, c("x", "y"), c("s", "x", "z"), c("x", "y", "z"))
    a_max <- min(nrow(df), 60)
    mr <- match_risk(plan, a = seq_len(a_max), known = known)
    if (suppressWarnings(max(mr$risk, na.rm = TRUE)) <= 1 / a_max) {
      a_max <- nrow(df)
      mr <- match_risk(plan, a = seq_len(a_max), known = known)
    }
    for (goal in c("all_matches", "unique_matches", "sample_uniques")) {
      keep <- switch(goal,
        all_matches = rep(TRUE, nrow(mr)), unique_matches = mr$a == 1,
        sample_uniques = mr$a == 1 & mr$count == 1
      )
      want <- suppressWarnings(max(mr$risk[keep], na.rm = TRUE))
      got <- max_match_risk(plan, goal, known = known)
      info <- paste("seed", seed, goal)
      if (goal == "all_matches") expect_true(want > 1 / a_max || a_max == nrow(df), info = info) # a beyond a_max cannot matter
      expect_equal(got$risk, want, tolerance = 1e-9, info = info)
      # the arg-max is a cell and a with that risk
      hit <- mr$risk[mr$cell == got$cell & mr$a == got$a]
      expect_equal(hit, got$risk, tolerance = 1e-9, info = info)
    }
  }
})

test_that("a per-variable plan on one key is the block-diagonal explicit plan", {
  for (seed in 1:10) {
    set.seed(seed)
    # every combination occurs, so no unit can move to an empty cell
    df <- expand.grid(x = c("a", "b", "c"), y = c("u", "v"), stringsAsFactors = FALSE)
    df <- df[c(seq_len(nrow(df)), sample(nrow(df), 8, TRUE)), ]
    cf <- cell_frequencies(df, c("x", "y"))
    p <- random_matrix(3, zeros = seed %% 2 == 0)
    vars <- pram_plan_vars(cf, list(x = p))
    blocks <- split(seq_len(nrow(cf$cells)), cf$cells$y)
    blk <- pram_plan(cf, unname(blocks), matrix = lapply(blocks, function(b) p[match(cf$cells$x[b], c("a", "b", "c")), match(cf$cells$x[b], c("a", "b", "c"))]))
    a <- seq_len(nrow(df))
    r1 <- match_risk(vars, a = a)
    r2 <- match_risk(blk, a = a)
    expect_equal(r1$risk, r2$risk, tolerance = 1e-9, info = paste("seed", seed))
    expect_equal(r1$log_prob, r2$log_prob, tolerance = 1e-9, info = paste("seed", seed))
    expect_equal(r1$gamma, r2$gamma, tolerance = 1e-9, info = paste("seed", seed))
    for (goal in c("all_matches", "unique_matches", "sample_uniques")) {
      expect_equal(max_match_risk(vars, goal)$risk, max_match_risk(blk, goal)$risk, tolerance = 1e-9)
    }
    # and for an intruder who knows only x
    k1 <- match_risk(vars, a = a, known = "x")
    k2 <- match_risk(blk, a = a, known = "x")
    expect_equal(k1$risk, k2$risk, tolerance = 1e-9, info = paste("seed", seed))
    expect_equal(k1$gamma, k2$gamma, tolerance = 1e-9, info = paste("seed", seed))
    expect_equal(max_match_risk(vars, known = "x")$risk, max_match_risk(blk, known = "x")$risk, tolerance = 1e-9)
  }
})

test_that("block plans (IFPR and matrix blocks) for partial-key intruders equal enumeration", {
  for (seed in 1:25) {
    set.seed(seed)
    n <- sample(5:9, 1)
    df <- data.frame(x = sample(c("a", "b", "c"), n, TRUE), y = sample(c("u", "v", "w"), n, TRUE))
    cf <- cell_frequencies(df, c("x", "y"))
    nc <- nrow(cf$cells)
    skip_if(nc < 3)
    ids <- sample(nc)
    cut <- sample(2:(nc - 1), 1)
    blocks <- list(ids[seq_len(cut)], ids[-seq_len(cut)])
    if (length(blocks[[2]]) < 2) blocks <- blocks[1]
    use_ifpr <- c(TRUE, seed %% 2 == 0)[seq_along(blocks)]
    theta <- ifelse(use_ifpr, vapply(blocks, function(b) min(cf$cells$count[b]) * stats::runif(1), 0), NA)
    mats <- lapply(seq_along(blocks), function(i) if (use_ifpr[i]) NULL else random_matrix(length(blocks[[i]]), seed %% 4 == 0))
    plan <- pram_plan(cf, blocks, theta = theta, matrix = mats)
    # dense matrix over the nonempty cells, from the blocks' own matrices
    M <- diag(nc)
    for (b in seq_along(blocks)) M[blocks[[b]], blocks[[b]]] <- pram_matrix(plan, b)
    known <- sample(list("x", "y", c("x", "y")), 1)[[1]]
    mr <- match_risk(plan, a = seq_len(n), known = known)
    for (j in seq_len(nc)) {
      d <- which(do.call(paste, cf$cells[known]) == do.call(paste, cf$cells[j, known, drop = FALSE]))
      alpha <- colSums(M[d, , drop = FALSE])[cf$cell_id]
      b <- which(cf$cell_id == j)[1]
      ref <- bf_enumerate(alpha, b)
      got <- mr[mr$cell == j, ]
      info <- paste("seed", seed, "cell", j)
      expect_identical(is.na(got$risk), is.na(ref$risk), info = info)
      ok <- !is.na(ref$risk)
      expect_equal(got$risk[ok], ref$risk[ok], tolerance = 1e-9, info = info)
      expect_equal(got$prob, ref$prob, tolerance = 1e-9, info = info)
      expect_equal(got$gamma[1], ref$gamma, tolerance = 1e-9, info = info)
    }
    refmax <- max(mr$risk, na.rm = TRUE)
    expect_equal(max_match_risk(plan, known = known)$risk, refmax, tolerance = 1e-9)
  }
})

test_that("an intruder who knows fewer keys can face a higher risk", {
  # two singletons swapped surely by PRAM on y: for an intruder who knows x
  # only, the pair stays in D = {x = a} and each is found with probability 1/2
  df <- data.frame(x = c("a", "a", "b", "b", "b"), y = c("u", "v", "u", "v", "v"))
  cf <- cell_frequencies(df, c("x", "y"))
  plan <- pram_plan_vars(cf, list(y = matrix(c(0, 1, 1, 0), 2)))
  # with all keys, every unit leaves its cell surely: no match is correct
  expect_equal(max_match_risk(plan, "all_matches")$risk, 0)
  mk <- max_match_risk(plan, "all_matches", known = "x")
  expect_equal(mk$risk, 1 / 2)
  expect_identical(mk$known, "x")
  expect_identical(mk$count_known, 2L)
})

test_that("match_risk() and max_match_risk() check known", {
  cf <- cell_frequencies(data.frame(x = c("a", "b")), "x")
  plan <- pram_plan_vars(cf, list(x = matrix(0.5, 2, 2)))
  expect_error(match_risk(plan, known = "nokey"), class = "sdcRisk_error_known")
  expect_error(max_match_risk(plan, known = character(0)), class = "sdcRisk_error_known")
  expect_error(match_risk(plan, a = 2^31), class = "sdcRisk_error_argument")
  expect_error(max_match_risk(list()), class = "sdcRisk_error_argument")
})

test_that("max_match_risk() is not fooled by tiny risks at a = 1 (issue 13, 2.13)", {
  cf <- cell_frequencies(data.frame(k = c("a", "b")), "k")
  p <- matrix(c(1e-10, 1 - 1e-10, 1 - 1e-10, 1e-10), 2)
  for (plan in list(
    pram_plan(cf, list(1:2), matrix = list(p)),
    pram_plan(cf, list(1:2), theta = 1 - 1e-10),
    pram_plan_vars(cf, list(k = p))
  )) {
    mr <- match_risk(plan, 1, 2)
    expect_equal(mr$risk, 0.5)
    expect_equal(mr$prob, 1e-10, tolerance = 1e-6)
    mx <- max_match_risk(plan, "all_matches")
    expect_equal(mx$risk, 0.5)
    expect_identical(mx$a, 2L)
  }
})

test_that("the certificate is never below a risk match_risk() returns (extreme entries)", {
  extreme <- function(k) {
    p <- matrix(sample(c(0, 1, 1e-300, 1e-200, 1e-15, 1e-9, 0.5, 1 - 1e-9), k * k, TRUE), k, k)
    diag(p) <- diag(p) + sample(c(0, 1e-12, 1), k, TRUE)
    p[, colSums(p) == 0] <- 1
    sweep(p, 2, colSums(p), "/")
  }
  for (seed in 1:60) {
    set.seed(seed)
    n <- sample(3:9, 1)
    df <- data.frame(x = sample(c("a", "b", "c"), n, TRUE), y = sample(c("u", "v"), n, TRUE))
    cf <- cell_frequencies(df, c("x", "y"))
    nc <- nrow(cf$cells)
    plans <- list()
    kx <- length(unique(df$x))
    ky <- length(unique(df$y))
    m <- list(x = extreme(kx))
    if (ky > 1 && seed %% 2 == 0) m$y <- extreme(ky)
    plans$vars <- pram_plan_vars(cf, m)
    if (nc >= 2) {
      plans$matrix <- pram_plan(cf, list(seq_len(nc)), matrix = list(extreme(nc)))
      tmin <- min(cf$cells$count)
      plans$ifpr <- pram_plan(cf, list(seq_len(nc)), theta = tmin * sample(c(1e-300, 1e-12, 0.5, 1 - 1e-12, 1), 1))
    }
    for (nm in names(plans)) {
      plan <- plans[[nm]]
      known <- if (seed %% 3 == 0) "x" else NULL
      mr <- tryCatch(match_risk(plan, a = seq_len(n), known = known),
        sdcRisk_error_underflow = function(e) NULL
      )
      if (is.null(mr)) {
        # probabilities below the smallest double are refused, never rounded
        expect_error(max_match_risk(plan, known = known), class = "sdcRisk_error_underflow")
        next
      }
      # a risk is NA exactly where its event is impossible
      expect_identical(is.na(mr$risk), mr$log_prob == -Inf, info = paste(seed, nm))
      top <- suppressWarnings(max(mr$risk, na.rm = TRUE))
      mx <- tryCatch(max_match_risk(plan, "all_matches", known = known)$risk,
        sdcRisk_error_underflow = function(e) NA_real_
      )
      if (is.finite(top)) {
        expect_equal(mx, top, tolerance = 1e-9, info = paste("seed", seed, nm))
      } else {
        expect_true(is.na(mx), info = paste("seed", seed, nm))
      }
    }
  }
})

test_that("max_match_risk_known() checks every subset of the keys and puts the worst first", {
  df <- data.frame(x = c("a", "a", "b", "b", "b"), y = c("u", "v", "u", "v", "v"))
  cf <- cell_frequencies(df, c("x", "y"))
  plan <- pram_plan_vars(cf, list(y = matrix(c(0, 1, 1, 0), 2)))
  res <- max_match_risk_known(plan)
  expect_s3_class(res, "sdc_max_risk_known")
  expect_identical(sort(res$known), sort(c("x", "y", "x, y")))
  # knowing x: the swapped pair stays in D = {x = a}, found with probability 1/2;
  # knowing y or both: every unit leaves the target's set surely
  expect_identical(res$known[1], "x")
  expect_equal(res$risk, c(0.5, 0, 0))
  expect_identical(res$count_known[1], 2L)
  # each row is the certificate for that intruder
  for (i in seq_len(nrow(res))) {
    k <- strsplit(res$known[i], ", ")[[1]]
    expect_equal(res$risk[i], max_match_risk(plan, known = k)$risk)
  }
  one <- max_match_risk_known(plan, subsets = list("x"))
  expect_identical(nrow(one), 1L)
  expect_error(max_match_risk_known(plan, subsets = list("z")), class = "sdcRisk_error_known")
  expect_snapshot(print(res))
})

test_that("the search over a is fast and exact when every risk at a = 1 is small (issue 13, 2.14)", {
  # R_j(a) from log dbinom, summing the convolution in full
  ref_risk <- function(t1, t2, theta, a) {
    p_stay <- 1 - theta / t1
    move1 <- theta / t2 # a unit of the other cell lands in c_1
    lp <- function(k) { # log P(Y = k), Y = Bin(t1 - 1, p_stay) + Bin(t2, move1)
      l <- 0:k
      v <- dbinom(l, t1 - 1, p_stay, log = TRUE) + dbinom(k - l, t2, move1, log = TRUE)
      m <- max(v)
      m + log(sum(exp(v - m)))
    }
    vapply(a, function(aa) {
      la <- log(p_stay) + lp(aa - 1)
      lb <- log(theta / t1) + lp(aa)
      (1 / aa) / (1 + exp(lb - la))
    }, 0)
  }
  df <- data.frame(k = rep(c("a", "b"), c(3000, 3000)))
  plan <- pram_plan(cell_frequencies(df, "k"), list(1:2), theta = 0.5)
  a <- c(1, 2, 10, 500, 2999, 3000, 3001, 3050)
  expect_equal(match_risk(plan, 1, a)$risk, ref_risk(3000, 3000, 0.5, a), tolerance = 1e-9)
  all_a <- seq_len(6000)
  mr <- match_risk(plan, 1, all_a)
  mx <- max_match_risk(plan, "all_matches")
  expect_equal(mx$risk, max(mr$risk, na.rm = TRUE), tolerance = 1e-12)
  # two cells of 40,000: formerly a 40,000^2 convolution (15 s)
  df <- data.frame(k = rep(c("a", "b"), c(40000, 40000)))
  plan <- pram_plan(cell_frequencies(df, "k"), list(1:2), theta = 0.5)
  elapsed <- system.time(mx <- max_match_risk(plan, "all_matches"))[["elapsed"]]
  expect_lt(elapsed, 5)
  a <- c(1, 2, 100, mx$a, 39999, 40000, 40001)
  expect_equal(match_risk(plan, 1, a)$risk, ref_risk(40000, 40000, 0.5, a), tolerance = 1e-9)
})

test_that("an edited per-variable plan gives a classed error, not a crash", {
  df <- data.frame(x = c("a", "b", "b"), y = c("u", "u", "v"))
  cf <- cell_frequencies(df, c("x", "y"))
  plan <- pram_plan_vars(cf, list(x = matrix(0.5, 2, 2)))
  bad <- plan
  bad$cells$cells$count[1] <- 0L
  expect_error(max_match_risk(bad), class = "sdcRisk_error_invalid_object")
  bad <- plan
  bad$codes$x[1] <- 99L
  expect_error(match_risk(bad), class = "sdcRisk_error_invalid_object")
  bad <- plan
  bad$stratum_of_cell[2] <- 5L
  expect_error(max_match_risk(bad), class = "sdcRisk_error_invalid_object")
  bad <- plan
  bad$matrices[[1]]$x <- diag(3)
  expect_error(max_match_risk(bad), class = "sdcRisk_error_invalid_object")
})
