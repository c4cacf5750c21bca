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
    ref <- vapply(1:ncell, function(k) {
      i <- cell == k
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

# ---------------------------------------------------------------------------
# Classic rules against their textbook formulas

test_that("p%, pq and nk rules give the textbook status on random cells with ties", {
  rules <- list(p = rule_p(10), p25 = rule_p(25), pq = rule_pq(10, 40),
                nk1 = rule_nk(1, 60), nk2 = rule_nk(2, 90), nk3 = rule_nk(3, 75))
  failed <- integer()
  for (seed in 1:40) {
    set.seed(seed)
    d <- random_cells(60)
    res <- cell_rows(cell_sensitivity(d, "g", "v", rules))
    xs <- split(d$v, d$g)[as.character(res$g)]
    ref <- list(
      p = vapply(xs, textbook_p, logical(1), p = 10),
      p25 = vapply(xs, textbook_p, logical(1), p = 25),
      pq = vapply(xs, textbook_pq, logical(1), p = 10, q = 40),
      nk1 = vapply(xs, textbook_nk, logical(1), n = 1, k = 60),
      nk2 = vapply(xs, textbook_nk, logical(1), n = 2, k = 90),
      nk3 = vapply(xs, textbook_nk, logical(1), n = 3, k = 75)
    )
    ok <- all(vapply(names(ref), function(r) {
      identical(unname(ref[[r]]), res[[paste0("sensitive_", r)]])
    }, logical(1)))
    # the PTN S values (Gray 2018, Section 2.4 and eq. 11)
    s1 <- vapply(xs, function(x) { s <- c(sorted_desc(x), 0, 0); 0.1 * s[1] - (sum(x) - s[1] - s[2]) }, 1)
    s_pq <- vapply(xs, function(x) { s <- c(sorted_desc(x), 0, 0); 0.1 * s[1] - 0.4 * (sum(x) - s[1] - s[2]) }, 1)
    s_nk2 <- vapply(xs, function(x) { s <- c(sorted_desc(x), 0, 0); (10 / 90) * (s[1] + s[2]) - (sum(x) - s[1] - s[2]) }, 1)
    ok <- ok && isTRUE(all.equal(unname(s1), res$S_p)) &&
      isTRUE(all.equal(unname(s_pq), res$S_pq)) && isTRUE(all.equal(unname(s_nk2), res$S_nk2))
    if (!ok) failed <- c(failed, seed)
  }
  expect_identical(failed, integer(), label = "seeds where a classic rule differs from its formula")
})

test_that("PTN forms stated with rule_ptn() (Section 2.4, appendix) match the classic rules", {
  failed <- integer()
  for (seed in 1:20) {
    set.seed(seed)
    d <- random_cells(50)
    rules <- list(
      p = rule_p(10), p_ptn = rule_ptn(function(z) 0.1 * z$x, function(z) z$x),
      pq = rule_pq(10, 40), pq_ptn = rule_ptn(function(z) 0.1 * z$x, function(z) 0.4 * z$x),
      nk = rule_nk(2, 80),
      nk_ptn = rule_ptn(function(z) (100 - 80) / 80 * z$x, function(z) z$x, nt = 2, ns = 0)
    )
    res <- cell_rows(cell_sensitivity(d, "g", "v", rules))
    ok <- TRUE
    for (r in c("p", "pq", "nk")) {
      s_ptn <- res[[paste0("S_", r, "_ptn")]]
      clear <- abs(s_ptn) > 1e-9 # floating point can only matter at S = 0
      ok <- ok && isTRUE(all.equal(res[[paste0("S_", r)]], s_ptn)) &&
        identical(res[[paste0("sensitive_", r)]][clear], res[[paste0("sensitive_", r, "_ptn")]][clear])
    }
    if (!ok) failed <- c(failed, seed)
  }
  expect_identical(failed, integer(), label = "seeds where a PTN form differs from its rule")
})

test_that("classic rules at exact boundaries, with one and two contributors", {
  d <- data.frame(
    g = c("one", "two", "two", "edge", "edge", "edge", "zero", "zero"),
    v = c(7, 3, 3, 100, 50, 10, 0, 0)
  )
  res <- cell_rows(cell_sensitivity(d, "g", "v", list(p = rule_p(10), nk = rule_nk(2, 90))))
  rownames(res) <- as.character(res$g)
  # X - x1 - x2 = 10 = p/100 * x1: not strictly below -> safe
  expect_false(res["edge", "sensitive_p"])
  expect_equal(res["edge", "S_p"], 0)
  # x1 + x2 = 150 > 0.9 * 160 = 144
  expect_true(res["edge", "sensitive_nk"])
  expect_true(res["one", "sensitive_p"])
  expect_true(res["two", "sensitive_p"])
  expect_true(res["two", "sensitive_nk"])
  # a cell of zeros: S = 0, safe under the concentration rules
  expect_false(res["zero", "sensitive_p"])
  expect_false(res["zero", "sensitive_nk"])
})

test_that("frequency rule: both conventions; zero rule", {
  d <- data.frame(g = rep(c("a", "b", "c"), c(2, 3, 4)), v = c(1, 1, 0, 0, 0, 1, 1, 1, 1))
  below <- cell_rows(cell_sensitivity(d, "g", "v", rule_frequency(3)))
  at_most <- cell_rows(cell_sensitivity(d, "g", "v", rule_frequency(3, "at_most")))
  expect_identical(below$sensitive_freq3, c(TRUE, FALSE, FALSE))
  expect_identical(at_most$sensitive_freq3, c(TRUE, TRUE, FALSE))
  zero <- cell_rows(cell_sensitivity(d, "g", "v", rule_zero()))
  expect_identical(zero$sensitive_zero, c(FALSE, TRUE, FALSE))
})

test_that("course report (Dahlqvist-Sjoberg 2020, Section 2a): dominance (1, 60) and (2, 90) as stated", {
  set.seed(2020)
  d <- random_cells(300, values = c(0, 1, 5, 20, 60, 90, 300))
  res <- cell_rows(cell_sensitivity(d, "g", "v", list(a = rule_nk(1, 60), b = rule_nk(2, 90))))
  xs <- split(d$v, d$g)[as.character(res$g)]
  # "Unsafe-cell := x_largest / X > 60%" and "(x_largest + x_second) / X > 90%"
  stated_a <- vapply(xs, function(x) { s <- sorted_desc(x); sum(x) > 0 && s[1] / sum(x) > 0.60 }, logical(1))
  stated_b <- vapply(xs, function(x) {
    s <- c(sorted_desc(x), 0); sum(x) > 0 && (s[1] + s[2]) / sum(x) > 0.90
  }, logical(1))
  expect_identical(res$sensitive_a, unname(stated_a))
  expect_identical(res$sensitive_b, unname(stated_b))
  # (2, 90) flags at least what (1, 90) flags (Section 2c)
  r90 <- cell_rows(cell_sensitivity(d, "g", "v", list(c = rule_nk(1, 90), b = rule_nk(2, 90))))
  expect_true(all(r90$sensitive_b[r90$sensitive_c]))
})

test_that("course report (Dahlqvist-Sjoberg 2020, Section 2b): p% (1, 11) as stated", {
  # The report states "(X - (x_largest + x_second)) / X < 11%": relative to
  # the total, which is the dominance rule (2, 89), not the textbook p% rule
  # X - x1 - x2 < p/100 * x1 (Hundepool et al. 2012), which rule_p() follows.
  set.seed(11)
  d <- random_cells(300, values = c(1, 5, 20, 60, 90, 300))
  res <- cell_rows(cell_sensitivity(d, "g", "v", list(stated = rule_nk(2, 89), p = rule_p(11))))
  xs <- split(d$v, d$g)[as.character(res$g)]
  stated <- vapply(xs, function(x) {
    s <- c(sorted_desc(x), 0); (sum(x) - (s[1] + s[2])) / sum(x) < 0.11
  }, logical(1))
  expect_identical(res$sensitive_stated, unname(stated))
  expect_identical(res$sensitive_p, unname(vapply(xs, textbook_p, logical(1), p = 11)))
  # they differ: 100, 100, 20 is unsafe as stated (20/220 < 11%) but safe
  # under the textbook p% rule (20 is not below 11% of 100)
  ex <- cell_rows(cell_sensitivity(data.frame(g = "a", v = c(100, 100, 20)), "g", "v",
                                   list(stated = rule_nk(2, 89), p = rule_p(11))))
  expect_true(ex$sensitive_stated)
  expect_false(ex$sensitive_p)
})

# ---------------------------------------------------------------------------
# Special cases (Gray 2018, Section 3)

test_that("Gray (2018) Section 3.1 / Table 1: distribution counts as bounds give S = 150", {
  rev <- data.frame(
    id = sprintf("%02d", 1:5), cell = "all",
    revenue = c(5000, 1100, 750, 500, 300),
    lb = c(5000, 1000, 500, 500, 0), ub = c(10000, 5000, 1000, 1000, 500)
  )
  plain <- cell_rows(cell_sensitivity(rev, "cell", "revenue", rule_p(10), contributor = "id"))
  expect_false(plain$sensitive_p10)
  bounded <- cell_rows(cell_sensitivity(rev, "cell", "revenue", rule_p(10), contributor = "id",
                                        lower = "lb"))
  expect_equal(bounded$S_p10, 150)
  expect_true(bounded$sensitive_p10)
  expect_identical(bounded$target_p10, "01")
  expect_identical(bounded$suspect_p10, "05")
  both <- cell_rows(cell_sensitivity(rev, "cell", "revenue", rule_p(10), contributor = "id",
                                     lower = "lb", upper = "ub"))
  expect_equal(both$S_p10, 150)
  # NA bound = no bound known for that record
  rev$lb[2] <- NA
  part <- cell_rows(cell_sensitivity(rev, "cell", "revenue", rule_p(10), lower = "lb"))
  # now 02 has noise 1100 and the maximal pair is (01, 02)
  expect_equal(part$S_p10, 0.1 * 5000 - (250 + 0 + 300))
  expect_identical(part$suspect_p10, "2")
})

test_that("negative contributions: error by default, absolute values on request", {
  d <- data.frame(g = rep(c("a", "b"), c(3, 4)), v = c(-50, 20, 5, 10, -10, 3, 1))
  expect_error(cell_sensitivity(d, "g", "v", rule_p(10)), class = "sdcRisk_error_negative_values")
  # rules that do not assume non-negative values accept them
  expect_no_error(cell_sensitivity(d, "g", "v", list(rule_frequency(3), rule_zero())))
  res <- cell_rows(cell_sensitivity(d, "g", "v", list(p = rule_p(10), pq = rule_pq(10, 30)),
                                    negative = "abs"))
  xs <- lapply(split(d$v, d$g), abs)
  expect_identical(res$sensitive_p, unname(vapply(xs, textbook_p, logical(1), p = 10)))
  expect_identical(res$sensitive_pq, unname(vapply(xs, textbook_pq, logical(1), p = 10, q = 30)))
  expect_equal(res$total, c(-25, 4))
  expect_equal(res$x1, c(50, 10))
  # Section 3.2: S = p|x1| - q sum_{r >= 3} |x_r|
  expect_equal(res$S_pq, c(0.1 * 50 - 0.3 * 5, 0.1 * 10 - 0.3 * 4))
  # the zero rule sees the signed total
  z <- cell_rows(cell_sensitivity(data.frame(g = "a", v = c(5, -5)), "g", "v", rule_zero()))
  expect_true(z$sensitive_zero)
})

test_that("waivers: PT = 0, noise kept (Section 3.3); matches brute force and Theorem 3", {
  failed <- integer()
  for (seed in 1:60) {
    set.seed(seed)
    d <- random_cells(30, values = c(1, 2, 5, 10, 40, 100))
    d$w <- runif(nrow(d)) < 0.3
    res <- cell_rows(cell_sensitivity(d, "g", "v", rule_p(10), waiver = "w"))
    by_cell <- split(d, d$g)[as.character(res$g)]
    ref <- vapply(by_cell, function(z) {
      bf_ptn(ifelse(z$w, 0, 0.1 * z$v), z$v, rep(0, nrow(z)), 1, 1)
    }, numeric(1))
    # Hundepool et al. (2012, p. 148): largest contributor without a waiver
    # as target, the largest remaining as suspect
    hp <- vapply(by_cell, function(z) {
      if (all(z$w)) return(FALSE)
      t <- which(!z$w)[which.max(z$v[!z$w])]
      s <- if (nrow(z) > 1) max(z$v[-t]) else 0
      100 * (sum(z$v) - z$v[t] - s) < 10 * z$v[t]
    }, logical(1))
    ok <- isTRUE(all.equal(unname(ref), res$S_p10)) && identical(unname(hp), res$sensitive_p10)
    if (!ok) failed <- c(failed, seed)
  }
  expect_identical(failed, integer(), label = "seeds where waivers differ")
  # a contributor waived only if all its records say so
  d <- data.frame(id = c(1, 1, 2), g = "a", v = c(50, 50, 1), w = c(TRUE, FALSE, TRUE))
  expect_true(cell_rows(cell_sensitivity(d, "g", "v", rule_p(10), contributor = "id",
                                         waiver = "w"))$sensitive_p10)
  d$w[2] <- TRUE
  expect_false(cell_rows(cell_sensitivity(d, "g", "v", rule_p(10), contributor = "id",
                                          waiver = "w"))$sensitive_p10)
})

test_that("sampling weights known and unknown to respondents (Section 3.4)", {
  set.seed(34)
  d <- random_cells(80, values = c(1, 2, 5, 10, 40, 100))
  d$wt <- sample(c(1, 1.5, 2, 4), nrow(d), TRUE)
  known <- cell_rows(cell_sensitivity(d, "g", "v", rule_p(10), weight = "wt"))
  xs <- lapply(split(d, d$g)[as.character(known$g)], function(z) z$wt * z$v)
  s_known <- vapply(xs, function(x) { s <- c(sorted_desc(x), 0, 0); 0.1 * s[1] - (sum(x) - s[1] - s[2]) }, 1)
  expect_equal(known$S_p10, unname(s_known))
  expect_equal(known$total, unname(vapply(xs, sum, 1)))
  # unknown: the p% rule on y reduced by sum (w - 1) y (O'Malley and Ernst)
  unknown <- cell_rows(cell_sensitivity(d, "g", "v", rule_p(10), weight = "wt",
                                        weights_known = FALSE))
  s_unknown <- vapply(split(d, d$g)[as.character(unknown$g)], function(z) {
    s <- c(sorted_desc(z$v), 0, 0)
    0.1 * s[1] - (sum(z$v) - s[1] - s[2]) - sum((z$wt - 1) * z$v)
  }, 1)
  expect_equal(unknown$S_p10, unname(s_unknown))
  # a single respondent with weight >= 1 + p is declared safe (Tambay and Fillion)
  one <- data.frame(g = "a", v = 100, wt = c(1.2))
  expect_false(cell_rows(cell_sensitivity(one, "g", "v", rule_p(10), weight = "wt",
                                          weights_known = FALSE))$sensitive_p10)
  expect_true(cell_rows(cell_sensitivity(one, "g", "v", rule_p(10), weight = "wt"))$sensitive_p10)
})

# ---------------------------------------------------------------------------
# Tables from microdata

test_that("margins and contributors agree with a direct aggregation", {
  set.seed(99)
  n <- 400
  d <- data.frame(
    ind = sample(c("A", "B", "C"), n, TRUE),
    reg = factor(sample(c("N", "S", "E", "W"), n, TRUE), levels = c("N", "S", "E", "W")),
    size = sample(1:2, n, TRUE),
    firm = sample(60, n, TRUE),
    v = sample(c(0, 1, 3, 10, 50, 200), n, TRUE)
  )
  by <- c("ind", "reg", "size")
  res <- as.data.frame(cell_sensitivity(d, by, "v", list(p = rule_p(15), nk = rule_nk(2, 80)),
                                        contributor = "firm"))
  expect_equal(nrow(res), sum(apply(expand.grid(rep(list(0:1), 3)), 1, function(m) {
    if (sum(m) == 0) return(1)
    nrow(unique(d[by[m == 1]]))
  })))
  for (m in 0:7) {
    kept <- by[bitwAnd(m, c(1, 2, 4)) > 0]
    key <- if (length(kept)) do.call(paste, c(d[kept], sep = "|")) else rep("all", n)
    rows <- res[res$level == (if (length(kept)) paste(kept, collapse = ":") else "(total)"), ]
    rkey <- if (length(kept)) do.call(paste, c(lapply(rows[kept], as.character), sep = "|")) else "all"
    cells <- split(d, key)[rkey]
    # each firm is one respondent with the sum of its records
    contrib <- lapply(cells, function(z) tapply(z$v, z$firm, sum))
    expect_equal(rows$total, unname(vapply(cells, function(z) sum(z$v), 1)), info = paste("mask", m))
    expect_equal(rows$n_contributors, unname(vapply(contrib, length, 1L)), info = paste("mask", m))
    expect_equal(rows$x1, unname(vapply(contrib, max, 1)), info = paste("mask", m))
    expect_identical(rows$sensitive_p, unname(vapply(contrib, textbook_p, TRUE, p = 15)),
                     info = paste("mask", m))
    expect_identical(rows$sensitive_nk, unname(vapply(contrib, textbook_nk, TRUE, n = 2, k = 80)),
                     info = paste("mask", m))
    others <- setdiff(by, kept)
    for (o in others) expect_true(all(rows[[o]] == "Total"))
  }
  # totals come last in each by variable
  expect_identical(levels(res$reg), c("N", "S", "E", "W", "Total"))
  expect_identical(as.character(res$ind[nrow(res)]), "Total")
})

test_that("the kept contributions agree with a direct aggregation, with and without known bounds", {
  set.seed(5)
  n <- 300
  d <- data.frame(firm = sample(50, n, TRUE), a = sample(c("a1", "a2", "b1", "b2"), n, TRUE),
                  b = sample(3, n, TRUE), v = sample(c(0, 1, 5, 40), n, TRUE),
                  lo = ifelse(runif(n) < 0.3, 0, NA), hi = ifelse(runif(n) < 0.3, 100, NA))
  hier <- list(a = c(a1 = "A", a2 = "A", b1 = "B", b2 = "B"))
  plain <- cell_sensitivity(d, c("a", "b"), "v", rule_p(10), contributor = "firm", hierarchy = hier)
  # a bounds column of NA only: no bound known either, stored one per pair
  d$none <- NA_real_
  na_col <- cell_sensitivity(d, c("a", "b"), "v", rule_p(10), contributor = "firm", hierarchy = hier,
                             lower = "none", upper = "none")
  inc <- attr(plain, "contributions")
  expect_identical(c(inc$lower, inc$upper), c(-Inf, Inf))
  expect_identical(length(attr(na_col, "contributions")$lower), length(inc$cell))
  # (the respondents read bounds without contributions as one number, and
  # the stored ones per row: the same bounds)
  per_row <- function(tc) {
    tc$lower <- row_values(tc$lower, seq_along(tc$cell))
    tc$upper <- row_values(tc$upper, seq_along(tc$cell))
    tc
  }
  expect_identical(table_contributions(plain)$lower, -Inf)
  expect_identical(per_row(table_contributions(plain)), per_row(table_contributions(na_col)))
  # every (cell, firm) pair: the firm's records under the cell, summed
  bounded <- cell_sensitivity(d, c("a", "b"), "v", rule_p(10), contributor = "firm", hierarchy = hier,
                              lower = "lo", upper = "hi")
  tc <- table_contributions(bounded)
  tc$key <- contributor_keys(tc, tc$id)
  x <- as.data.frame(bounded)
  group <- c(a1 = "A", a2 = "A", b1 = "B", b2 = "B")
  under <- function(cell) {
    ok_a <- x$a[cell] == "Total" | d$a == as.character(x$a[cell]) | group[d$a] == as.character(x$a[cell])
    ok_b <- x$b[cell] == "Total" | as.character(d$b) == as.character(x$b[cell])
    which(ok_a & ok_b)
  }
  for (cell in seq_len(nrow(x))) {
    r <- under(cell)
    mine <- tc$cell == cell
    ord <- order(as.numeric(tc$key[mine]))
    firms <- sort(unique(d$firm[r]))
    expect_identical(as.numeric(tc$key[mine][ord]), as.numeric(firms), info = paste("cell", cell))
    expect_equal(tc$x[mine][ord], as.vector(tapply(d$v[r], d$firm[r], sum)), info = paste("cell", cell))
    lo <- ifelse(is.na(d$lo[r]), -Inf, d$lo[r])
    hi <- ifelse(is.na(d$hi[r]), Inf, d$hi[r])
    expect_equal(tc$lower[mine][ord], as.vector(tapply(lo, d$firm[r], sum)), info = paste("cell", cell))
    expect_equal(tc$upper[mine][ord], as.vector(tapply(hi, d$firm[r], sum)), info = paste("cell", cell))
  }
})

test_that("general nt, ns in cell_sensitivity equals brute force per cell", {
  set.seed(7)
  d <- random_cells(40, max_n = 7, values = c(0, 1, 2, 5, 9))
  rule <- rule_ptn(pt = function(z) 0.3 * z$x, noise = function(z) z$x,
                   self_noise = function(z) 0.5 * z$x, nt = 2, ns = 2)
  res <- cell_rows(cell_sensitivity(d, "g", "v", list(r = rule)))
  ref <- vapply(split(d$v, d$g)[as.character(res$g)], function(x) {
    bf_ptn(0.3 * x, x, 0.5 * x, 2, 2)
  }, 1)
  expect_equal(res$S_r, unname(ref))
  expect_identical(res$sensitive_r, unname(ref > 0))
  expect_true(all(lengths(strsplit(res$target_r, ", ")) == pmin(2, res$n_contributors)))
})

test_that("upper and lower PTN rules: cell S is the larger side", {
  d <- data.frame(g = "a", v = c(10, 10, 1))
  rule <- rule_ptn(pt = list(upper = 0, lower = function(z) z$x),
                   noise = list(lower = function(z) z$x, upper = 0))
  res <- cell_rows(cell_sensitivity(d, "g", "v", list(r = rule)))
  expect_equal(res$S_r, ptn_sensitivity(list(upper = c(0, 0, 0), lower = c(10, 10, 1)),
                                        list(lower = c(10, 10, 1), upper = c(0, 0, 0)))$S)
  expect_equal(res$S_r, 10)
})

test_that("NA in a by variable can be a category of its own", {
  d <- data.frame(g = c("a", NA, NA, "a"), v = c(1, 2, 3, 4))
  res <- as.data.frame(cell_sensitivity(d, "g", "v", rule_frequency(3), na = "category"))
  expect_identical(nrow(res), 3L)
  expect_identical(res$n_contributors, c(2L, 2L, 4L))
  expect_identical(levels(res$g), c("a", NA, "Total"))
})

test_that("contributor ids and ties: the first contributor is the largest", {
  d <- data.frame(id = c("z", "y", "x"), g = "a", v = c(5, 9, 9))
  res <- cell_rows(cell_sensitivity(d, "g", "v", rule_p(10), contributor = "id"))
  expect_identical(res$target_p10, "y")
  expect_identical(res$suspect_p10, "x")
  expect_equal(c(res$x1, res$x2), c(9, 9))
})

# ---------------------------------------------------------------------------
# Printing

test_that("rules, PTN results and tables print", {
  expect_snapshot({
    rule_frequency(3)
    rule_frequency(4, "at_most")
    rule_zero()
    rule_nk(2, 85)
    rule_p(10)
    rule_pq(10, 50)
    rule_ptn(pt = function(d) 0.1 * d$x, noise = function(d) d$x, nt = 2, ns = 0)
    rule_ptn(pt = list(upper = 1, lower = 0), noise = 1)
  })
  x <- c(5000, 1100, 750, 500, 300)
  expect_snapshot(ptn_sensitivity(0.1 * x, list(lower = x - c(5000, 1000, 500, 500, 0), upper = x)))
  d <- data.frame(
    id = c(1, 2, 3, 4, 5, 6, 7, 1),
    ind = c("103", "103", "140", "140", "142", "142", "142", "142"),
    reg = c("N", "E", "N", "E", "N", "N", "E", "E"),
    v = c(92, 0, 22, 1, 1238, 20, 58, 3)
  )
  res <- cell_sensitivity(d, c("ind", "reg"), "v", list(rule_frequency(3), rule_zero(),
                                                         rule_nk(1, 60), rule_p(11)),
                          contributor = "id")
  expect_snapshot({
    res
    summary(res)
  })
  expect_s3_class(summary(res), "summary.sdc_sensitivity")
  expect_identical(class(as.data.frame(res)), "data.frame")
  expect_invisible(print(res))
  sub <- res[res$sensitive_zero, ]
  expect_s3_class(sub, "sdc_sensitivity")
  expect_snapshot(sub)
  expect_identical(class(res[c("ind", "total")]), "data.frame")
  # the cell with contributors and total 0 is flagged by the zero rule
  expect_true(res$sensitive_zero[res$ind == "103" & res$reg == "E"])
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_invisible(plot(res))
  expect_invisible(plot(res, rows = "reg", cols = NULL))
  expect_error(plot(res, rows = "nope"), class = "sdcRisk_error_argument")
})

test_that("print() of a table with five rules fits 80 columns, the rules beside their cells (issue 37)", {
  set.seed(2024)
  d <- random_firms(600, 10, 6)
  d$firm <- sample(400, 600, TRUE)
  rules <- list(freq = rule_frequency(3), dom1 = rule_nk(1, 60), dom2 = rule_nk(2, 90),
                p10 = rule_p(10), pq = rule_pq(10, 50))
  sens <- cell_sensitivity(d, c("a", "b"), "v", rules, contributor = "firm")
  out <- format(sens, n = 77)
  expect_true(all(nchar(out) <= 80), info = out[nchar(out) > 80][1])
  # one header, the rules column in it: no second block of columns
  head <- grep("n_contributors", out)
  expect_length(head, 1)
  expect_match(out[head], "rules$")
  expect_length(out, head + nrow(sens) + 1)
  # the S columns left out are named; none is printed in e-notation
  shown <- strsplit(trimws(out[head]), " +")[[1]]
  left_out <- setdiff(paste0("S_", c("dom1", "dom2", "p10", "pq")), shown)
  if (length(left_out)) expect_match(out[length(out)], paste(left_out, collapse = ", "), fixed = TRUE)
  expect_false(any(grepl("[0-9]e[-+][0-9]", out)))
})

test_that("cell_sensitivity() handles 10^5 records in a 3-way table with margins", {
  # timing is measured in bench/tabular.R, not asserted here
  set.seed(5)
  n <- 1e5
  d <- data.frame(a = sample(20, n, TRUE), b = sample(10, n, TRUE), c = sample(5, n, TRUE),
                  firm = sample(2e4, n, TRUE), v = round(rlnorm(n, 5, 2)))
  res <- cell_sensitivity(d, c("a", "b", "c"), "v", list(rule_p(10), rule_nk(2, 85)), contributor = "firm")
  expect_equal(res$total[nrow(res)], sum(d$v))
  expect_identical(nrow(res), as.integer((20 + 1) * (10 + 1) * (5 + 1)))
})

# ---------------------------------------------------------------------------
# Bad input

test_that("bad input gives classed errors naming the argument", {
  d <- data.frame(g = c("a", "b"), v = c(1, 2))
  expect_error(cell_sensitivity(data.frame(g = "a", v = NA_real_), "g", "v", rule_p(10)),
               class = "sdcRisk_error_missing_value")
  expect_error(cell_sensitivity(data.frame(g = NA, v = 1), "g", "v", rule_p(10)),
               class = "sdcRisk_error_missing_value")
  expect_error(cell_sensitivity(data.frame(g = "a", v = -1), "g", "v", rule_p(10)),
               class = "sdcRisk_error_negative_values")
  expect_error(cell_sensitivity(d[0, ], "g", "v", rule_p(10)), class = "sdcRisk_error_empty_data")
  expect_error(cell_sensitivity(d, "h", "v", rule_p(10)), class = "sdcRisk_error_unknown_key")
  expect_error(cell_sensitivity(d, "g", "v", "p"), class = "sdcRisk_error_rules")
  expect_error(cell_sensitivity(d, "g", "v", list(rule_p(10), rule_p(10))),
               class = "sdcRisk_error_rules")
  expect_error(cell_sensitivity(transform(d, g = "Total"), "g", "v", rule_p(10)),
               class = "sdcRisk_error_total_label")
  expect_error(cell_sensitivity(transform(d, w = 0.5), "g", "v", rule_p(10), weight = "w",
                                weights_known = FALSE), class = "sdcRisk_error_weight")
  expect_error(cell_sensitivity(transform(d, lb = 5), "g", "v", rule_p(10), lower = "lb"),
               class = "sdcRisk_error_bounds")
  expect_error(cell_sensitivity(d, "g", "v", rule_ptn(function(z) 1:3, 1)),
               class = "sdcRisk_error_rule_value")
  expect_error(cell_sensitivity(transform(d, total = g), "total", "v", rule_p(10)),
               class = "sdcRisk_error_keys")
  expect_error(rule_pq(20, 10), class = "sdcRisk_error_rule_parameter")
  expect_error(rule_pq(10, 10), class = "sdcRisk_error_rule_parameter")
  expect_error(rule_nk(0, 50), class = "sdcRisk_error_argument")
  expect_error(rule_frequency(0), class = "sdcRisk_error_argument")
  expect_error(rule_nk(1, 0), class = "sdcRisk_error_rule_parameter")
  expect_error(rule_nk(1, 101), class = "sdcRisk_error_rule_parameter")
  expect_error(rule_p(-1), class = "sdcRisk_error_rule_parameter")
  expect_error(rule_ptn(pt = "a", noise = 1), class = "sdcRisk_error_rule_parameter")
  expect_error(ptn_sensitivity(1:3, 1:2), class = "sdcRisk_error_ptn_length")
  expect_error(ptn_sensitivity(c(1, NA), 1:2), class = "sdcRisk_error_ptn_input")
  expect_error(ptn_sensitivity(numeric(), numeric()), class = "sdcRisk_error_empty_data")
  expect_error(ptn_sensitivity(1, 1, nt = 0), class = "sdcRisk_error_argument")
})

test_that("error messages", {
  d <- data.frame(g = c("a", "b"), v = c(1, 2))
  expect_snapshot(error = TRUE, {
    cell_sensitivity(data.frame(g = c("a", "a"), v = c(1, NA)), "g", "v", rule_p(10))
  })
  expect_snapshot(error = TRUE, {
    cell_sensitivity(data.frame(g = c("a", NA), v = 1:2), "g", "v", rule_p(10))
  })
  expect_snapshot(error = TRUE, {
    cell_sensitivity(data.frame(g = "a", v = c(-3, 1)), "g", "v", list(rule_frequency(3), rule_p(10)))
  })
  expect_snapshot(error = TRUE, cell_sensitivity(d[0, ], "g", "v", rule_p(10)))
  expect_snapshot(error = TRUE, cell_sensitivity(d, "g", "v", list(rule_p(10), rule_p(10))))
  expect_snapshot(error = TRUE, rule_pq(20, 10))
  expect_snapshot(error = TRUE, rule_nk(0, 50))
  expect_snapshot(error = TRUE, rule_nk(1, 120))
  expect_snapshot(error = TRUE, rule_frequency(0.5))
  expect_snapshot(error = TRUE, ptn_sensitivity(1:3, 1:2))
  expect_snapshot(error = TRUE, ptn_sensitivity(numeric(), numeric()))
  expect_snapshot(error = TRUE, ptn_sensitivity(c(1, NA), 1:2))
  expect_snapshot(error = TRUE, cell_sensitivity(d, "g", "v", rule_ptn(function(z) 1:3, 1)))
})

test_that("the table glue's core errors come back through the one bridge as classed errors", {
  # a broken internal assumption (a cell index out of range, lengths that
  # differ) is a std::invalid_argument in the core; run_engine() returns it
  # and core_call() raises sdcRisk_error_internal with the core's message
  err <- expect_error(
    sdcRisk:::core_call(sdcRisk:::cpp_ptn_cells, c(1L, 3L), c(1, 1), c(1, 1), c(0, 0),
                        list(ncell = 2L, nt = 1L, ns = 1L)),
    class = "sdcRisk_error_internal"
  )
  expect_match(err$core_message, "out of range")
  err <- expect_error(
    sdcRisk:::core_call(sdcRisk:::cpp_relation_components, c(1L, 2L), c(1L, 9L), 2L, 3L),
    class = "sdcRisk_error_internal"
  )
  expect_match(err$core_message, "incidence out of range")
  expect_error(sdcRisk:::core_call(sdcRisk:::cpp_cell_largest, 1:2, 1, 2L, 1L),
               class = "sdcRisk_error_internal")
  expect_error(sdcRisk:::core_call(sdcRisk:::cpp_ptn_sensitivity, c(1, 2), 1, c(0, 0),
                                   list(nt = 1L, ns = 1L, algorithm = "auto")),
               class = "sdcRisk_error_internal")
  # valid input is unchanged: components are 1-based labels
  expect_identical(sdcRisk:::core_call(sdcRisk:::cpp_relation_components, c(1L, 1L, 2L), c(1L, 2L, 3L), 2L, 3L),
                   c(1L, 1L, 2L))
})
