# Brute-force references for the tabular tests: every disjoint pair (T, S)
# with |T| = nt, |S| = ns, cells completed with zero respondents as the
# package does (x_k = 0 beyond the number of contributors).
bf_ptn <- function(pt, noise, self_noise, nt, ns) {
  n <- length(pt)
  if (n < nt + ns) {
    pad <- nt + ns - n
    pt <- c(pt, rep(0, pad))
    noise <- c(noise, rep(0, pad))
    self_noise <- c(self_noise, rep(0, pad))
    n <- nt + ns
  }
  subsets <- function(set, k) {
    if (k == 0) return(list(integer()))
    if (length(set) == k) return(list(set))
    utils::combn(set, k, simplify = FALSE)
  }
  best <- -Inf
  for (tt in subsets(seq_len(n), nt)) {
    for (ss in subsets(setdiff(seq_len(n), tt), ns)) {
      v <- sum(pt[tt]) - sum(self_noise[ss]) - sum(noise[-c(tt, ss)])
      best <- max(best, v)
    }
  }
  best
}

# S(T, S) of given sets (NA ids = zero respondents).
set_value <- function(pt, noise, self_noise, tt, ss) {
  tt <- tt[!is.na(tt)]
  ss <- ss[!is.na(ss)]
  sum(pt[tt]) - sum(self_noise[ss]) - sum(noise[-c(tt, ss)])
}

# Textbook statuses, in exact integer arithmetic for whole-number data.
sorted_desc <- function(x) sort(x, decreasing = TRUE)
textbook_p <- function(x, p) {
  if (length(x) == 0) return(FALSE)
  s <- c(sorted_desc(x), 0, 0)
  100 * (sum(x) - s[1] - s[2]) < p * s[1]
}
textbook_pq <- function(x, p, q) {
  if (length(x) == 0) return(FALSE)
  s <- c(sorted_desc(x), 0, 0)
  q * (sum(x) - s[1] - s[2]) < p * s[1]
}
textbook_nk <- function(x, n, k) {
  if (length(x) == 0) return(FALSE)
  s <- c(sorted_desc(x), rep(0, n))
  100 * sum(s[seq_len(n)]) > k * sum(x)
}

# Records of `ncell` cells of one classification variable, each cell with
# 1..max_n contributors whose values come from a small set (ties and zeros).
random_cells <- function(ncell, max_n = 6, values = c(0, 1, 2, 3, 5, 10, 40, 100)) {
  sizes <- sample(seq_len(max_n), ncell, TRUE)
  data.frame(
    g = rep(sprintf("c%03d", seq_len(ncell)), sizes),
    v = sample(values, sum(sizes), TRUE)
  )
}

cell_rows <- function(res) as.data.frame(res)[res$level != "(total)", ]

# ---------------------------------------------------------------------------
# The PTN core

test_that("Theorem 1 and the general algorithm equal brute force on random cells", {
  failed <- integer()
  for (seed in 1:2500) {
    set.seed(seed)
    n <- sample(1:7, 1)
    # whole numbers from a small range: many ties; SN may exceed N
    pt <- sample(0:6, n, TRUE)
    noise <- sample(0:6, n, TRUE)
    sn <- sample(0:8, n, TRUE) * (runif(1) < 0.5)
    ref <- bf_ptn(pt, noise, sn, 1, 1)
    t1 <- sdcRisk:::cpp_ptn_sensitivity(pt, noise, sn, list(nt = 1L, ns = 1L, algorithm = "theorem1"))
    gen <- sdcRisk:::cpp_ptn_sensitivity(pt, noise, sn, list(nt = 1L, ns = 1L, algorithm = "general"))
    ok <- t1$S == ref && gen$S == ref &&
      set_value(pt, noise, sn, t1$target, t1$suspect) == ref &&
      set_value(pt, noise, sn, gen$target, gen$suspect) == ref
    if (!ok) failed <- c(failed, seed)
  }
  expect_identical(failed, integer(), label = "seeds where S^1_1 differs from brute force")
})

test_that("general nt, ns equals brute force over all set pairs", {
  failed <- integer()
  for (seed in 1:3000) {
    set.seed(seed)
    n <- sample(1:8, 1)
    nt <- sample(1:3, 1)
    ns <- sample(0:3, 1)
    if (seed %% 2 == 0) {
      pt <- sample(0:5, n, TRUE)
      noise <- sample(0:5, n, TRUE)
      sn <- sample(0:7, n, TRUE)
    } else {
      pt <- round(rexp(n), 3)
      noise <- round(rexp(n), 3)
      sn <- round(rexp(n) * (runif(1) < 0.5), 3)
    }
    ref <- bf_ptn(pt, noise, sn, nt, ns)
    res <- ptn_sensitivity(pt, noise, sn, nt = nt, ns = ns)
    sets <- set_value(pt, noise, sn, res$target, res$suspect)
    ok <- abs(res$S - ref) < 1e-9 && abs(sets - ref) < 1e-9 &&
      length(res$target) == nt && length(res$suspect) == ns &&
      !any(res$target %in% res$suspect[!is.na(res$suspect)] & !is.na(res$target))
    if (!ok) failed <- c(failed, seed)
  }
  expect_identical(failed, integer(), label = "seeds where S^nt_ns differs from brute force")
})

test_that("per-cell top-k tracking gives the exact S of every cell", {
  failed <- integer()
  for (seed in 1:200) {
    set.seed(seed)
    ncell <- 20
    nt <- sample(1:3, 1)
    ns <- sample(0:2, 1)
    cell <- sample(ncell, 80, TRUE)
    cell[1:ncell] <- 1:ncell
    pt <- sample(0:4, 80, TRUE)
    noise <- sample(0:4, 80, TRUE)
    sn <- sample(0:5, 80, TRUE)
    res <- sdcRisk:::cpp_ptn_cells(cell, pt, noise, sn, list(ncell = ncell, nt = nt, ns = ns))
    ref <- vapply(1:ncell, function(c) {
      i <- cell == c
      bf_ptn(pt[i], noise[i], sn[i], nt, ns)
    }, numeric(1))
    if (!isTRUE(all.equal(res$S, ref))) failed <- c(failed, seed)
  }
  expect_identical(failed, integer(), label = "seeds where per-cell S differs")
})

test_that("Gray (2018) Table 2: revenue with Table 1 ranges gives S = 150 (01, 05)", {
  x <- c(5000, 1100, 750, 500, 300)
  lb <- c(5000, 1000, 500, 500, 0) # lower limits of the Table 1 ranges
  res <- ptn_sensitivity(pt = 0.1 * x, noise = x - lb)
  expect_equal(res$S, 150)
  expect_true(res$sensitive)
  expect_identical(res$target, 1L)
  expect_identical(res$suspect, 5L)
  # the plain p% rule with p = 10% says safe
  plain <- ptn_sensitivity(pt = 0.1 * x, noise = x)
  expect_false(plain$sensitive)
  expect_equal(plain$S, 500 - (750 + 500 + 300))
  # upper range limits as well: lower sensitivity stays negative
  ub <- c(10000, 5000, 1000, 1000, 500)
  both <- ptn_sensitivity(pt = 0.1 * x,
                          noise = list(lower = x - lb, upper = pmin(x, ub - x)))
  expect_equal(both$S, 150)
  expect_equal(both$S_lower, -450)
  expect_identical(both$side, "upper")
})

test_that("asymmetric PTN: lower side wins when only it is sensitive", {
  res <- ptn_sensitivity(pt = list(upper = c(0, 0), lower = c(5, 1)),
                         noise = list(lower = c(10, 10), upper = c(1, 1)))
  # upper: PT 0 -> S = 0 at best; lower: S = 5 - 0 - 0 (two respondents)
  expect_equal(res$S_upper, 0)
  expect_equal(res$S_lower, 5)
  expect_identical(res$side, "lower")
  expect_true(res$sensitive)
  expect_identical(res$target, 1L)
})

test_that("Theorem 2: the pq rule in PTN form has maximal pair (1, 2)", {
  set.seed(11)
  for (i in 1:50) {
    x <- sort(round(rexp(6) * 100), decreasing = TRUE)
    res <- ptn_sensitivity(0.1 * x, 0.5 * x)
    expect_equal(res$S, 0.1 * x[1] - 0.5 * sum(x[-(1:2)]), info = paste("draw", i))
  }
})

test_that("Theorem 4 ordering S^nt_ns <= S^nt_(ns+1) <= S^(nt+1)_ns holds", {
  set.seed(4)
  for (i in 1:100) {
    x <- round(rexp(7) * 10, 2)
    sn <- x * runif(7) # SN <= N
    s <- function(nt, ns) ptn_sensitivity(0.2 * x, x, sn, nt = nt, ns = ns)$S
    expect_lte(s(1, 1), s(1, 2) + 1e-12)
    expect_lte(s(1, 2), s(2, 1) + 1e-12)
  }
})

test_that("a single respondent is sensitive under the p% rule; ties pick the first", {
  expect_true(ptn_sensitivity(0.1 * 7, 7)$sensitive)
  expect_identical(ptn_sensitivity(0.1 * 7, 7)$suspect, NA_integer_)
  res <- ptn_sensitivity(0.1 * c(5, 9, 9, 1), c(5, 9, 9, 1))
  expect_identical(res$target, 2L)
  expect_identical(res$suspect, 3L)
})
