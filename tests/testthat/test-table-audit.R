# The exact audit (audit_table(), R/table-audit.R) against references:
# brute-force enumeration over whole-number tables (brute_intervals() in
# helper-tables.R), one linear program per end over the whole table
# (whole_table_intervals() below), and the exact intervals of random
# systems of relations.

test_that("audit intervals equal brute-force enumeration over whole-number tables", {
  for (seed in 1:15) {
    d <- small_firms(seed)
    sens <- cell_sensitivity(d, c("r", "c"), "v", rule_p(20), contributor = "firm")
    set.seed(100 + seed)
    # the grand total stays published so that brute force is finite
    candidates <- which(!(sens$r == "Total" & sens$c == "Total"))
    supp <- seq_len(nrow(sens)) %in% sample(candidates, min(length(candidates), sample(2:4, 1)))
    aud <- audit_table(sens, supp)
    ref <- brute_intervals(sens, supp)
    got <- aud[aud$suppressed, ]
    m <- match(paste(ref$r, ref$c), paste(got$r, got$c))
    expect_equal(got$lower[m], ref$lower, tolerance = 1e-9, info = paste("seed", seed))
    expect_equal(got$upper[m], ref$upper, tolerance = 1e-9, info = paste("seed", seed))
    # deciding protection from witness tables gives the exact decision
    quick <- audit_table(sens, supp, intervals = "none")
    expect_equal(quick$protected, aud$protected, info = paste("seed", seed))
  }
})

test_that("witness-based decisions agree with exact intervals on larger tables", {
  for (seed in 1:6) {
    set.seed(seed)
    d <- random_records(150, c(5, 4, 3), 3, 1.5)
    sens <- cell_sensitivity(d, c("a", "b", "c"), "v", list(rule_frequency(3), rule_p(15)))
    supp <- sens$sensitive | runif(nrow(sens)) < 0.3
    exact <- audit_table(sens, supp, intervals = "sensitive")
    quick <- audit_table(sens, supp, intervals = "none")
    expect_equal(quick$protected, exact$protected, info = paste("seed", seed))
    expect_true(all(is.na(quick$lower)))
  }
})

test_that("a suppressed grand total with its whole row is unbounded above", {
  d <- data.frame(k = c("a", "a", "b", "b", "b"), v = c(1, 2, 3, 4, 5))
  sens <- cell_sensitivity(d, "k", "v", rule_frequency(3))
  aud <- audit_table(sens, rep(TRUE, 3))
  expect_equal(aud$upper, c(Inf, Inf, Inf))
  expect_equal(aud$lower, c(0, 0, 0))
  # with known upper bounds the interval closes
  aud2 <- audit_table(sens, rep(TRUE, 3), upper = c(10, 20, 30))
  expect_equal(aud2$upper, c(10, 20, 30))
})

test_that("primary suppression alone is disclosed by subtraction (the issue's North marginal)", {
  d <- small_firms(7, n = 40)
  sens <- cell_sensitivity(d, c("r", "c"), "v", rule_frequency(3), contributor = "firm")
  skip_if(sum(sens$sensitive) != 1, "the seed gives more than one sensitive cell")
  aud <- audit_table(sens, sens$sensitive)
  expect_false(attr(aud, "passed"))
  expect_equal(aud$lower, aud$total)
  expect_equal(aud$upper, aud$total)
})

test_that("audit_table() reads a pattern given as a data frame of cells", {
  d <- small_firms(3, n = 40)
  sens <- cell_sensitivity(d, c("r", "c"), "v", rule_frequency(3), contributor = "firm")
  prot <- protect_table(sens)
  cells <- as.data.frame(prot)[prot$status != "published", c("r", "c")]
  cells$r <- as.character(cells$r)
  a1 <- audit_table(sens, cells)
  a2 <- audit_table(sens, prot$status != "published")
  expect_equal(as.data.frame(a1), as.data.frame(a2))
})

# Reference intervals: one linear program per end over the whole table, every
# published cell fixed, no components, no witnesses, no relation bounds.
whole_table_intervals <- function(sens, supp, lower, upper) {
  st <- sdcRisk:::table_structure(sens)
  n <- nrow(sens)
  mat <- sdcRisk:::triplet_matrix(st$rel, st$cell, st$coef, st$nrel, n)
  lo <- ifelse(supp, lower, sens$total)
  hi <- ifelse(supp, upper, sens$total)
  one <- function(j, maximize) {
    obj <- numeric(n)
    obj[j] <- 1
    r <- Rglpk::Rglpk_solve_LP(obj, mat, rep("==", st$nrel), numeric(st$nrel), max = maximize,
                               bounds = list(lower = list(ind = seq_len(n), val = lo),
                                             upper = list(ind = seq_len(n), val = hi)))
    if (r$status == 0) r$optimum else if (maximize) Inf else -Inf
  }
  cells <- which(supp)
  data.frame(cell = cells, lower = vapply(cells, one, 0, maximize = FALSE),
             upper = vapply(cells, one, 0, maximize = TRUE))
}

test_that("exact intervals equal whole-table programs, with negative values and hierarchies", {
  for (seed in 1:5) {
    set.seed(seed)
    d <- data.frame(a = sample(c("a1", "a2", "b1", "b2", "b3"), 120, TRUE),
                    b = sample(3, 120, TRUE), c = sample(2, 120, TRUE),
                    v = round(rnorm(120, 10, 30)))
    hier <- list(a = c(a1 = "A", a2 = "A", b1 = "B", b2 = "B", b3 = "B"))
    sens <- cell_sensitivity(d, c("a", "b", "c"), "v", rule_frequency(3), hierarchy = hier,
                             negative = "abs")
    bound <- 2 * sum(abs(d$v))
    lower <- if (seed %% 2) -Inf else -bound
    supp <- sens$sensitive | runif(nrow(sens)) < 0.35
    aud <- audit_table(sens, supp, lower = lower, upper = bound)
    ref <- whole_table_intervals(sens, supp, rep(lower, nrow(sens)), rep(bound, nrow(sens)))
    got <- aud[aud$suppressed, ]
    expect_equal(got$lower, ref$lower, tolerance = 1e-7, info = paste("seed", seed))
    expect_equal(got$upper, ref$upper, tolerance = 1e-7, info = paste("seed", seed))
    # the path of large components: programs by the interior point method
    # (batches, and the first single program), then by the simplex
    aud_ipm <- withr::with_options(list(sdcRisk.audit_ipm_cols = 1L),
                                   audit_table(sens, supp, lower = lower, upper = bound))
    expect_equal(aud_ipm$lower[aud_ipm$suppressed], ref$lower, tolerance = 1e-7, info = paste("ipm, seed", seed))
    expect_equal(aud_ipm$upper[aud_ipm$suppressed], ref$upper, tolerance = 1e-7, info = paste("ipm, seed", seed))
    prot <- protect_table(sens, lower = lower, upper = bound)
    expect_true(attr(audit_table(sens, prot$status != "published", lower = lower, upper = bound), "passed"))
  }
})

test_that("twin cells (a relation with two suppressed cells) take their ends from one program: the same exact intervals", {
  n_lp <- c(twins = 0, without = 0)
  n_twins <- 0
  for (seed in 1:6) {
    set.seed(seed)
    d <- random_records(400, c(6, 5, 4), 3, 1.5)
    sens <- cell_sensitivity(d, c("a", "b", "c"), "v", list(rule_frequency(3), rule_p(15)))
    # (a pattern of the heuristic: cells in pairs along its relations)
    supp <- protect_table(sens, attacker = "outsider")$status != "published"
    cells <- which(supp)
    prep <- sdcRisk:::table_problem(sens, NULL, NULL, 10, arg = "x")
    # (the twins exist: some relation holds exactly two suppressed cells)
    st <- prep$structure
    n_twins <- n_twins + sum(tabulate(st$rel[supp[st$cell]], st$nrel) == 2)
    got <- sdcRisk:::audit_cells(prep, supp, cells, exact = TRUE, call = NULL)
    # (a problem of its own: the first audit's solvers are kept with `prep`)
    prep <- sdcRisk:::table_problem(sens, NULL, NULL, 10, arg = "x")
    without <- withr::with_options(list(sdcRisk.audit_twins = FALSE),
                                   sdcRisk:::audit_cells(prep, supp, cells, exact = TRUE, call = NULL))
    ref <- whole_table_intervals(sens, supp, rep(0, nrow(sens)), rep(Inf, nrow(sens)))
    info <- paste("seed", seed)
    expect_equal(got$lower, ref$lower, tolerance = 1e-7, info = info)
    expect_equal(got$upper, ref$upper, tolerance = 1e-7, info = info)
    expect_equal(got$lower, without$lower, tolerance = 1e-9, info = info)
    expect_equal(got$upper, without$upper, tolerance = 1e-9, info = info)
    expect_lte(got$n_lp, without$n_lp)
    n_lp <- n_lp + c(got$n_lp, without$n_lp)
  }
  expect_gt(n_twins, 0)
  expect_lt(n_lp[["twins"]], n_lp[["without"]])
})

test_that("twin columns map every column of a class to its root, on every table of the program", {
  # x1 + x2 = 10, x2 - x3 = 4, 2 x3 + x4 = 0, x4 + x5 + x6 = 7 (three
  # cells: no twins), x6 alone
  m <- sdcRisk:::triplet_matrix(i = c(1, 1, 2, 2, 3, 3, 4, 4, 4), j = c(1, 2, 2, 3, 3, 4, 4, 5, 6),
                                v = c(1, 1, 1, -1, 2, 1, 1, 1, 1), nrow = 4, ncol = 6)
  tw <- sdcRisk:::program_twins(list(mat = m, rhs = c(10, 4, 0, 7)))
  expect_equal(tw$size, c(4, 4, 4, 4, 1, 1))
  expect_equal(length(unique(tw$root[1:4])), 1)
  expect_false(tw$root[5] %in% tw$root[1:4])
  # any table of the first four rows: x1 free
  for (x1 in c(-3, 0, 2.5, 17)) {
    x <- c(x1, 10 - x1, 10 - x1 - 4, -2 * (10 - x1 - 4))
    expect_equal(tw$a[1:4] + tw$b[1:4] * x[tw$root[1:4]], x)
  }
})

test_that("the outsider's decision from small programs around each cell is exact, their tables witnesses", {
  for (seed in 1:8) {
    set.seed(seed)
    d <- data.frame(a = sample(c("a1", "a2", "b1", "b2", "b3"), 150, TRUE),
                    b = sample(4, 150, TRUE), c = sample(3, 150, TRUE),
                    v = if (seed %% 3 == 0) round(rnorm(150, 10, 30)) else round(rlnorm(150, 3, 1.5)))
    hier <- list(a = c(a1 = "A", a2 = "A", b1 = "B", b2 = "B", b3 = "B"))
    sens <- cell_sensitivity(d, c("a", "b", "c"), "v", list(rule_frequency(3), rule_p(15)),
                             hierarchy = hier, negative = "abs")
    bound <- 2 * sum(abs(d$v))
    lower <- if (seed %% 3 == 0) -bound else 0
    # sparse patterns fail, dense ones pass
    supp <- sens$sensitive | runif(nrow(sens)) < c(0.1, 0.3, 0.6)[seed %% 3 + 1]
    # (the small programs serve the components of the interior point method)
    local <- withr::with_options(list(sdcRisk.audit_ipm_cols = 1L),
                                 audit_table(sens, supp, intervals = "none", attacker = "outsider",
                                             lower = lower, upper = bound))
    global <- withr::with_options(list(sdcRisk.audit_local = FALSE, sdcRisk.audit_ipm_cols = 1L),
                                  audit_table(sens, supp, intervals = "none", attacker = "outsider",
                                              lower = lower, upper = bound))
    exact <- audit_table(sens, supp, intervals = "sensitive", attacker = "outsider", lower = lower, upper = bound)
    expect_equal(local$protected, exact$protected, info = paste("seed", seed))
    expect_equal(local$protected, global$protected, info = paste("seed", seed))
    expect_identical(attr(local, "passed"), attr(exact, "passed"))
    # every value the small programs reach is inside the exact interval
    prep <- table_problem(sens, lower, bound, 10, arg = "x")
    sp <- suppressed_components(prep, supp, call = NULL)
    # (every suppressed cell in one program, whatever its component)
    vars <- which(supp)
    lp <- suppressed_lp(sp, prep, vars, seq_along(sp$sc))
    targets <- which(supp & prep$sensitive)
    ends <- new_interval_ends(lp, match(targets, vars), targets, prep, exact = FALSE)
    local_witnesses(ends, local_witness_search(prep, supp))
    ref <- whole_table_intervals(sens, supp, prep$lower, prep$upper)
    at <- match(targets, ref$cell)
    tol <- 1e-6 * (1 + abs(sens$total[targets]))
    expect_true(all(ends$seen_hi <= ref$upper[at] + tol), info = paste("seed", seed))
    expect_true(all(ends$seen_lo >= ref$lower[at] - tol), info = paste("seed", seed))
    # boxes of 4 cells at first, enlarged for the ends they leave open up to
    # the whole table (160 cells): sound too, and then every end that the
    # exact interval reaches is settled
    small <- local_witness_search(prep, supp)
    small$box <- 4
    ends2 <- new_interval_ends(lp, match(targets, vars), targets, prep, exact = FALSE)
    local_witnesses(ends2, small, max_budget = 256)
    expect_true(all(ends2$seen_hi <= ref$upper[at] + tol), info = paste("small, seed", seed))
    expect_true(all(ends2$seen_lo >= ref$lower[at] - tol), info = paste("small, seed", seed))
    reach_hi <- ref$upper[at] >= ends2$need_hi + tol
    reach_lo <- ref$lower[at] <= ends2$need_lo - tol
    expect_true(all(ends2$seen_hi[reach_hi] >= ends2$need_hi[reach_hi]), info = paste("small, seed", seed))
    expect_true(all(ends2$seen_lo[reach_lo] <= ends2$need_lo[reach_lo]), info = paste("small, seed", seed))
    # and they settle ends that need a move (a pattern whose relations pin
    # every sensitive cell needs none)
    if (any(ends$need_hi > sens$total[targets] + tol)) {
      expect_true(ends$n_lp > 0)
      expect_true(any(ends$seen_hi >= ends$need_hi & ends$seen_hi > sens$total[targets] + tol),
                  info = paste("seed", seed))
    }
  }
})

test_that("the interior point path keeps exact intervals for unbounded cells and failing programs", {
  set.seed(1)
  d <- data.frame(a = sample(c("a1", "a2", "a3"), 60, TRUE), b = sample(c("x", "y", "z"), 60, TRUE),
                  v = round(rnorm(60, 5, 30)))
  sens <- cell_sensitivity(d, c("a", "b"), "v", rule_frequency(3), negative = "abs")
  withr::local_options(sdcRisk.audit_ipm_cols = 1L)
  # the audit with every single program after the first failing in its
  # session: each is solved from scratch (interior point method, then
  # without added bounds)
  real <- sdcRisk:::lp_session
  audit_failing <- function(...) {
    local_package_function("lp_session", function(..., method = "simplex", iterations = NULL) {
      s <- real(..., method = method, iterations = iterations)
      if (method != "ipm_first") return(s)
      list(extreme = function(obj, maximize) {
        r <- s$extreme(obj, maximize)
        if (s$n_lp() > 1L) list(status = "failed", value = NA_real_, solution = NULL) else r
      }, n_lp = s$n_lp)
    })
    audit_table(...)
  }
  # a 2 x 2 block of inner cells: unbounded both ways without a priori
  # bounds; with a3:z and its margins added, a larger component
  for (extra in c(FALSE, TRUE)) {
    supp <- (sens$a %in% c("a1", "a2") & sens$b %in% c("x", "y")) |
      (extra & sens$a %in% c("a3", "Total") & sens$b %in% c("z", "Total"))
    for (bounds in list(c(-Inf, Inf), c(-500, 500))) {
      info <- paste("extra", extra, "bounds", bounds[2])
      ref <- whole_table_intervals(sens, supp, rep(bounds[1], nrow(sens)), rep(bounds[2], nrow(sens)))
      if (bounds[2] == Inf && !extra) expect_true(all(is.infinite(c(ref$lower, ref$upper))), info = info)
      for (fail in c(FALSE, TRUE)) {
        aud <- (if (fail) audit_failing else audit_table)(sens, supp, lower = bounds[1], upper = bounds[2])
        expect_equal(aud$lower, ref$lower, tolerance = 1e-7, info = paste(info, fail))
        expect_equal(aud$upper, ref$upper, tolerance = 1e-7, info = paste(info, fail))
      }
    }
  }
})

test_that("bounds implied by single relations, infinities included", {
  # x1 + x2 = 10, x1 - x3 = 0; x1 >= 0, 0 <= x2 <= 4, x3 <= 8
  lp <- list(mat = sdcRisk:::triplet_matrix(c(1, 1, 2, 2), c(1, 2, 1, 3), c(1, 1, 1, -1), 2, 3),
             rhs = c(10, 0),
             lower = c(0, 0, -Inf), upper = c(Inf, 4, 8))
  rb <- sdcRisk:::relation_bounds(lp, passes = 1)
  expect_equal(rb$lower, c(6, 0, 0))
  expect_equal(rb$upper, c(8, 4, 8))
  # propagated: x2 = 10 - x1 >= 2 and x3 = x1 >= 6 (here the exact intervals)
  rb <- sdcRisk:::relation_bounds(lp)
  expect_equal(rb$lower, c(6, 2, 6))
  expect_equal(rb$upper, c(8, 4, 8))
})

test_that("the core's relation bounds are those of the vectorised R code they replaced, bit for bit", {
  # the R code of relation_bounds() before it moved into the core
  ref_pass <- function(lp, lower, upper) {
    m <- lp$mat
    lo <- lower[m$j]
    hi <- upper[m$j]
    tmin <- pmin(m$v * lo, m$v * hi)
    tmax <- pmax(m$v * lo, m$v * hi)
    others <- function(t, inf) {
      fin <- ifelse(is.infinite(t), 0, t)
      sum_fin <- sdcRisk:::tabulate_sum(m$i, fin, m$nrow)[m$i]
      n_inf <- tabulate(m$i[t == inf], m$nrow)[m$i]
      ifelse(n_inf - (t == inf) > 0, inf, sum_fin - fin)
    }
    omin <- others(tmin, -Inf)
    omax <- others(tmax, Inf)
    rhs <- lp$rhs[m$i]
    a <- (rhs - omax) / m$v
    b <- (rhs - omin) / m$v
    ext <- function(x, f, empty) {
      out <- rep(empty, m$ncol)
      g <- split(x, factor(m$j, levels = seq_len(m$ncol)))
      has <- lengths(g) > 0
      out[has] <- vapply(g[has], f, numeric(1))
      out
    }
    list(lower = pmax(lower, ext(pmin(a, b), max, -Inf)), upper = pmin(upper, ext(pmax(a, b), min, Inf)))
  }
  ref <- function(lp, passes = 20) {
    lower <- lp$lower
    upper <- lp$upper
    for (pass in seq_len(passes)) {
      rb <- ref_pass(lp, lower, upper)
      gain <- function(new, old) new != old & (is.infinite(old) | abs(new - old) > 1e-9 * (1 + abs(old)))
      moved <- gain(rb$lower, lower) | gain(rb$upper, upper)
      lower <- rb$lower
      upper <- rb$upper
      if (!any(moved, na.rm = TRUE)) break
    }
    list(lower = lower, upper = upper)
  }
  for (seed in 1:40) {
    set.seed(seed)
    n <- sample(5:40, 1)
    nr <- sample(2:15, 1)
    x0 <- round(rlnorm(n, 3, 1.5), sample(0:2, 1))
    a <- matrix(sample(c(-1, 0, 0, 0, 1, 2.5), nr * n, TRUE), nr, n)
    a[cbind(seq_len(nr), sample(n, nr, TRUE))] <- 1
    nz <- which(a != 0, arr.ind = TRUE)
    nz <- nz[sample(nrow(nz)), , drop = FALSE] # triplets in any order
    lp <- list(mat = sdcRisk:::triplet_matrix(nz[, 1], nz[, 2], a[nz], nr, n),
               rhs = as.vector(a %*% x0),
               lower = ifelse(runif(n) < 0.3, -Inf, x0 - runif(n) * x0),
               upper = ifelse(runif(n) < 0.4, Inf, x0 * (1 + runif(n))))
    expect_identical(sdcRisk:::relation_bounds(lp), ref(lp), info = paste("seed", seed))
    expect_identical(sdcRisk:::relation_bounds(lp, passes = 1), ref(lp, 1), info = paste("seed", seed))
  }
})

test_that("the core's packing of open ends is that of the R code it replaced", {
  # the R code of relation_packing() before it moved into the core
  ref <- function(open, rel_of, nrel, batch) {
    if (length(open) <= 1L) return(open)
    key <- (((open + batch * 40503) %% 2097152) * 2654435761) %% 4294967296
    used <- logical(nrel)
    keep <- logical(length(open))
    for (i in order(key)) {
      r <- rel_of[[open[i]]]
      if (!any(used[r])) {
        used[r] <- TRUE
        keep[i] <- TRUE
      }
    }
    open[keep]
  }
  for (seed in 1:30) {
    set.seed(seed)
    nc <- sample(5:60, 1)
    nr <- sample(2:30, 1)
    nz <- unique(cbind(sample(nr, 3 * nc, TRUE), sample(nc, 3 * nc, TRUE)))
    mat <- sdcRisk:::triplet_matrix(nz[, 1], nz[, 2], rep(1, nrow(nz)), nr, nc)
    pos <- sample(nc, sample(1:nc, 1))
    rel_of <- split(mat$i, factor(mat$j, levels = seq_len(nc)))[pos]
    for (batch in c(1, 2, 7, 123)) {
      open <- sort(sample(length(pos), sample(0:length(pos), 1)))
      expect_identical(sdcRisk:::relation_packing(open, pos, mat, batch), ref(open, rel_of, nr, batch),
                       info = paste("seed", seed, "batch", batch))
    }
  }
})

test_that("extremes over witness tables: only tables within the changed bounds count", {
  set.seed(5)
  tabs <- lapply(1:30, function(k) round(rnorm(12, 10, 5), 1))
  m <- do.call(cbind, tabs)
  for (rep in 1:20) {
    rows <- sort(sample(12, sample(1:12, 1)))
    check <- sort(sample(12, sample(0:4, 1)))
    lo <- runif(length(check), 0, 10)
    hi <- lo + runif(length(check), 0, 15)
    tol <- rep(0.05, length(check))
    ok <- vapply(seq_along(tabs), function(k) {
      all(m[check, k] >= lo - tol & m[check, k] <= hi + tol)
    }, logical(1))
    ex <- sdcRisk:::cpp_table_extremes(tabs, rows, check, lo, hi, tol, numeric(), numeric(), numeric())
    expect_equal(ex$used, sum(ok))
    if (any(ok)) {
      expect_identical(ex$max, apply(m[rows, ok, drop = FALSE], 1, max))
      expect_identical(ex$min, apply(m[rows, ok, drop = FALSE], 1, min))
    } else {
      expect_identical(ex$max, rep(-Inf, length(rows)))
    }
  }
  core <- function(...) sdcRisk:::core_call(sdcRisk:::cpp_table_extremes, ...)
  none <- numeric()
  expect_error(core(list(1:3), 1L, integer(), numeric(), numeric(), numeric(), none, none, none), "numeric",
               class = "sdcRisk_error")
  expect_error(core(list(c(1, 2), c(1, 2, 3)), 1L, integer(), numeric(), numeric(), numeric(), none, none, none),
               "length", class = "sdcRisk_error")
  expect_error(core(list(c(1, 2)), 3L, integer(), numeric(), numeric(), numeric(), none, none, none), "range",
               class = "sdcRisk_error")
  expect_error(core(list(c(1, 2)), 1L, 1L, 0, 3, 0, c(5, 5), none, none), "center", class = "sdcRisk_error")
  expect_error(core(list(c(1, 2)), 1L, 1L, 0, 3, 0, c(1, 1, 1), none, none), "length", class = "sdcRisk_error")
  expect_error(core(list(c(1, 2)), 1L, integer(), numeric(), numeric(), numeric(), none, 1, none), "needs",
               class = "sdcRisk_error")
})

test_that("extremes over witness tables moved toward the published table (brute force)", {
  set.seed(6)
  for (rep in 1:40) {
    n <- 10
    center <- round(runif(n, 5, 15), 1)
    tabs <- lapply(1:25, function(k) round(center + rnorm(n, 0, 6), 1))
    m <- do.call(cbind, tabs)
    rows <- sort(sample(n, sample(1:n, 1)))
    check <- sort(sample(n, sample(0:3, 1)))
    lo <- center[check] - runif(length(check), 0, 5)
    hi <- center[check] + runif(length(check), 0, 5)
    lo[seq_along(lo) %% 3 == 0] <- center[check][seq_along(lo) %% 3 == 0]
    tol <- rep(1e-9, length(check))
    # each table's largest lambda in (0, 1] keeping the checked rows
    lam <- vapply(seq_along(tabs), function(k) {
      x <- m[check, k]
      if (anyNA(x)) return(0)
      l <- 1
      for (c in seq_along(check)) {
        if (x[c] > hi[c] + tol[c]) l <- min(l, (hi[c] - center[check[c]]) / (x[c] - center[check[c]]))
        if (x[c] < lo[c] - tol[c]) l <- min(l, (lo[c] - center[check[c]]) / (x[c] - center[check[c]]))
      }
      l
    }, numeric(1))
    ok <- lam > 0
    ex <- sdcRisk:::cpp_table_extremes(tabs, rows, check, lo, hi, tol, center, numeric(), numeric())
    expect_equal(ex$used, sum(ok))
    moved <- center[rows] + sweep(m[rows, ok, drop = FALSE] - center[rows], 2, lam[ok], `*`)
    want_max <- if (any(ok)) apply(moved, 1, max) else rep(-Inf, length(rows))
    want_min <- if (any(ok)) apply(moved, 1, min) else rep(Inf, length(rows))
    # with one checked row, the tables between a table above its bounds and
    # one below (those with the largest, the smallest value of each row), at
    # the bounds
    if (length(check) == 1) {
      x <- m[check, ]
      ab <- which(x > hi + tol)
      be <- which(x < lo - tol)
      if (length(ab) && length(be)) {
        along <- function(a, b, r, at) m[r, b] + (at - x[b]) / (x[a] - x[b]) * (m[r, a] - m[r, b])
        for (k in seq_along(rows)) {
          r <- rows[k]
          a <- ab[which.max(m[r, ab])]
          b <- be[which.max(m[r, be])]
          want_max[k] <- max(want_max[k], along(a, b, r, lo), along(a, b, r, hi))
          a <- ab[which.min(m[r, ab])]
          b <- be[which.min(m[r, be])]
          want_min[k] <- min(want_min[k], along(a, b, r, lo), along(a, b, r, hi))
          # the table between them keeps the checked row
          expect_true(abs(along(a, b, check, lo) - lo) < 1e-9 && abs(along(a, b, check, hi) - hi) < 1e-9)
        }
      }
    }
    expect_equal(ex$max, want_max, tolerance = 1e-12)
    expect_equal(ex$min, want_min, tolerance = 1e-12)
    # every moved table keeps the checked rows
    kept <- center[check] + sweep(m[check, ok, drop = FALSE] - center[check], 2, lam[ok], `*`)
    expect_true(all(kept >= lo - 1e-9 & kept <= hi + 1e-9))
    # with needs: the tables are read until every row reaches them (what is
    # returned then was attained), else all of them
    need_hi <- center[rows] + runif(length(rows), 0, 4)
    need_lo <- center[rows] - runif(length(rows), 0, 4)
    ne <- sdcRisk:::cpp_table_extremes(tabs, rows, check, lo, hi, tol, center, need_hi, need_lo)
    settled <- all(ne$max >= need_hi & ne$min <= need_lo)
    expect_true(settled || identical(ne, ex))
    if (all(ex$max >= need_hi & ex$min <= need_lo)) expect_true(settled)
    if (settled) expect_lte(ne$used, ex$used)
  }
})

test_that("propagated relation bounds contain every cell's exact interval (random systems)", {
  for (seed in 1:30) {
    set.seed(seed)
    n <- sample(3:7, 1)
    nr <- sample(1:3, 1)
    # relations of a nonnegative point x0, some cells bounded above
    x0 <- sample(0:9, n, TRUE)
    a <- matrix(sample(c(-1, 0, 0, 1), nr * n, TRUE), nr, n)
    a[cbind(seq_len(nr), sample(n, nr, TRUE))] <- 1
    nz <- which(a != 0, arr.ind = TRUE)
    mat <- sdcRisk:::triplet_matrix(nz[, 1], nz[, 2], a[nz], nr, n)
    upper <- ifelse(runif(n) < 0.5, x0 + sample(0:5, n, TRUE), Inf)
    lp <- list(mat = mat, rhs = as.vector(a %*% x0), lower = numeric(n), upper = upper)
    rb <- sdcRisk:::relation_bounds(lp)
    for (j in seq_len(n)) {
      obj <- replace(numeric(n), j, 1)
      for (maximize in c(TRUE, FALSE)) {
        r <- sdcRisk:::solve_lp(obj, mat, rep("==", nr), lp$rhs, lp$lower, upper, maximize = maximize)
        end <- if (r$status == "optimal") r$value else if (maximize) Inf else -Inf
        info <- paste("seed", seed, "cell", j, if (maximize) "max" else "min")
        if (maximize) expect_gte(rb$upper[j], end - 1e-9, label = info) else
          expect_lte(rb$lower[j], end + 1e-9, label = info)
      }
      expect_true(rb$lower[j] <= x0[j] && x0[j] <= rb$upper[j], info = paste("seed", seed))
    }
  }
})

# --- The witness tables of protect_table() ----------------------------------

# A protection whose pattern is `supp` (sensitive cells primary, the other
# suppressed cells secondary) and whose witness tables are `w`, as
# protect_table() would return it: a forged certificate for the tests.
forged_protection <- function(prot, supp, w) {
  status <- ifelse(prot$status == "primary", "primary", ifelse(supp, "secondary", "published"))
  prot$status <- factor(status, levels = levels(prot$status))
  prot$lower[!supp] <- NA_real_
  prot$upper[!supp] <- NA_real_
  attr(prot, "witnesses") <- w
  prot
}

test_that("audit_table() of a protection reads its pattern, and its witness tables spare programs", {
  for (seed in 1:12) {
    set.seed(seed)
    d <- random_records(160, c(5, 4, 3), 3, 1.5)
    sens <- cell_sensitivity(d, c("a", "b", "c"), "v", list(rule_frequency(3), rule_p(15)))
    if (!any(sens$sensitive)) next
    for (attacker in c("outsider", "respondents")) {
      prot <- protect_table(sens, attacker = attacker)
      w <- attr(prot, "witnesses")
      expect_s3_class(w, "data.frame")
      expect_true(nrow(w) > 0)
      expect_true(all(prot$status[w$row] != "published"), info = paste("seed", seed))
      supp <- prot$status != "published"
      for (iv in c("none", "suppressed")) {
        plain <- audit_table(sens, supp, intervals = iv, attacker = attacker)
        given <- audit_table(sens, prot, intervals = iv, attacker = attacker)
        info <- paste("seed", seed, attacker, iv)
        # the same pattern, the same verdicts and exact intervals
        expect_identical(given$suppressed, plain$suppressed, info = info)
        expect_identical(given$protected, plain$protected, info = info)
        expect_true(attr(given, "passed"), info = info)
        expect_equal(given$lower, plain$lower, tolerance = 1e-7, info = info)
        expect_equal(given$upper, plain$upper, tolerance = 1e-7, info = info)
        expect_null(attr(plain, "witnesses"))
        if (iv == "none" && attacker == "outsider") {
          # every table protect_table() returns checks out, and deciding
          # protection needs no program at all
          expect_equal(attr(given, "witnesses")[["valid"]], length(unique(w$witness)), info = info)
          expect_identical(attr(given, "n_lp"), 0L, info = info)
          expect_gt(attr(plain, "n_lp"), 0L)
        } else {
          # (exact intervals, and the respondents' audit, do without them)
          expect_null(attr(given, "witnesses"))
        }
      }
    }
  }
})

test_that("witness tables that do not check out decide nothing", {
  set.seed(5)
  d <- random_records(200, c(5, 4, 3), 3, 1.5)
  sens <- cell_sensitivity(d, c("a", "b", "c"), "v", list(rule_frequency(3), rule_p(15)))
  prot <- protect_table(sens, attacker = "outsider")
  w <- attr(prot, "witnesses")
  n_w <- length(unique(w$witness))
  sens_rows <- which(sens$sensitive)
  # (1) a pattern of the sensitive cells alone fails; forged tables that move
  # each sensitive cell by its level alone break their relations, those
  # that move published cells break the pattern: none counts
  alone <- sens$sensitive
  lone <- data.frame(witness = seq_along(sens_rows), row = sens_rows, change = sens$S_p15[sens_rows] + 1)
  lone$change[is.na(lone$change) | lone$change <= 0] <- sens$total[sens_rows][is.na(lone$change) | lone$change <= 0]
  forged <- forged_protection(prot, alone, rbind(lone, transform(w, witness = witness + nrow(lone))))
  ref <- audit_table(sens, alone, intervals = "none", attacker = "outsider")
  got <- audit_table(sens, forged, intervals = "none", attacker = "outsider")
  expect_false(attr(ref, "passed"))
  expect_false(attr(got, "passed"))
  expect_identical(got$protected, ref$protected)
  expect_identical(attr(got, "witnesses")[["valid"]], 0L)
  # (2) the real pattern with damaged tables: each changed table is refused,
  # the verdict and the exact intervals stay
  bad <- w
  hit <- w$witness %in% unique(w$witness)[c(TRUE, FALSE)]
  bad$change[hit] <- bad$change[hit] * 1.5 + 1
  damaged <- prot
  attr(damaged, "witnesses") <- bad
  supp <- prot$status != "published"
  got <- audit_table(sens, damaged, intervals = "none", attacker = "outsider")
  ref <- audit_table(sens, supp, intervals = "none", attacker = "outsider")
  expect_true(attr(got, "passed"))
  expect_identical(got$protected, ref$protected)
  expect_lt(attr(got, "witnesses")[["valid"]], n_w)
  expect_gt(attr(got, "witnesses")[["valid"]], 0L)
  expect_gt(attr(got, "n_lp"), 0L)
  # (3) a table that moves one cell twice is refused too
  twice <- w[w$witness == w$witness[1], ]
  twice <- rbind(twice, twice[1, ])
  attr(damaged, "witnesses") <- twice
  got <- audit_table(sens, damaged, intervals = "none", attacker = "outsider")
  expect_identical(attr(got, "witnesses")[["valid"]], 0L)
  expect_identical(got$protected, audit_table(sens, supp, intervals = "none", attacker = "outsider")$protected)
})

test_that("a protection as the pattern: checked against the table, its witness tables for shape", {
  set.seed(2)
  d <- random_records(160, c(5, 4, 3), 3, 1.5)
  sens <- cell_sensitivity(d, c("a", "b", "c"), "v", list(rule_frequency(3), rule_p(15)))
  expect_true(any(sens$sensitive))
  prot <- protect_table(sens, attacker = "outsider")
  other <- cell_sensitivity(d[d$a != 1, ], c("a", "b", "c"), "v", list(rule_frequency(3), rule_p(15)))
  expect_error(audit_table(other, prot), class = "sdcRisk_error_pattern")
  shuffled <- prot[rev(seq_len(nrow(prot))), ]
  attributes(shuffled)[c("by", "value", "cost", "stats", "total_label", "rules", "witnesses")] <-
    attributes(prot)[c("by", "value", "cost", "stats", "total_label", "rules", "witnesses")]
  expect_error(audit_table(sens, shuffled), class = "sdcRisk_error_pattern")
  for (w in list(data.frame(witness = 1, row = nrow(sens) + 1, change = 1),
                 data.frame(witness = 1, row = 1, change = NA_real_),
                 data.frame(witness = 1, row = 1.5, change = 1),
                 data.frame(witness = 1, cell = 1, change = 1),
                 "a table")) {
    damaged <- prot
    attr(damaged, "witnesses") <- w
    expect_error(audit_table(sens, damaged), class = "sdcRisk_error_pattern")
  }
  # without the attribute (a subset, or an older object): the pattern alone
  plain <- prot
  attr(plain, "witnesses") <- NULL
  a <- audit_table(sens, plain, intervals = "none", attacker = "outsider")
  expect_true(attr(a, "passed"))
  expect_null(attr(a, "witnesses"))
  # an audit as the pattern: its suppressed cells, not all its rows
  aud <- audit_table(sens, prot, attacker = "outsider")
  again <- audit_table(sens, aud, attacker = "outsider")
  expect_identical(again$suppressed, aud$suppressed)
  expect_equal(again$lower, aud$lower)
  # the print names the witness tables
  aud <- audit_table(sens, prot, intervals = "none", attacker = "outsider")
  expect_match(paste(format(aud), collapse = "\n"), "Witness tables of the pattern: [0-9]+ checked, [0-9]+ valid")
  expect_match(paste(format(summary(aud)), collapse = "\n"), "Witness tables of the pattern")
})

test_that("linked tables: each table's witness tables check out against that table alone", {
  for (seed in 1:4) {
    set.seed(seed)
    d <- data.frame(a = sample(c("a1", "a2", "a3"), 120, TRUE), b = sample(c("x", "y"), 120, TRUE),
                    c = sample(c("u", "v", "w"), 120, TRUE, prob = c(0.6, 0.3, 0.1)),
                    v = round(rlnorm(120, 4, 1.4)))
    t1 <- cell_sensitivity(d, c("a", "b"), "v", list(rule_frequency(3), rule_p(20)))
    t2 <- cell_sensitivity(d, c("a", "c"), "v", list(rule_frequency(3), rule_p(20)))
    prot <- protect_tables(list(t1, t2), attacker = "outsider")
    for (k in 1:2) {
      x <- list(t1, t2)[[k]]
      w <- attr(prot[[k]], "witnesses")
      if (!nrow(w)) next
      a <- audit_table(x, prot[[k]], intervals = "none", attacker = "outsider")
      expect_identical(attr(a, "witnesses")[["valid"]], length(unique(w$witness)), info = paste(seed, k))
    }
    # audit_tables() reads the protections' patterns
    at <- audit_tables(list(t1, t2), list(prot[[1]], prot[[2]]), attacker = "outsider")
    expect_true(attr(at, "passed"))
  }
})

# The decision that stops at the first breach (audit_cells(first_breach =
# TRUE), the respondents' clean-up's first test of a trial) and the
# relation bounds' test of a pattern (relation_breach(), the outsider's
# clean-up's), against the exact audit.

# The problem of a random 2- or 3-way table (`seed`) and the pattern
# protect_table() gives it against the outsider; NULL when no cell is
# sensitive.
protected_random_table <- function(seed) {
  set.seed(seed)
  d <- random_firms(sample(60:160, 1), sample(3:6, 1), sample(2:4, 1))
  by <- if (seed %% 2) c("a", "b", "c") else c("a", "b")
  sens <- cell_sensitivity(d, by, "v", list(rule_frequency(3), rule_p(15)))
  if (!any(sens$sensitive)) return(NULL)
  list(prep = sdcRisk:::table_problem(sens, NULL, NULL, 10, arg = "x"),
       good = protect_table(sens, attacker = "outsider")$status != "published", seed = seed)
}
protected_random_tables <- function() Filter(Negate(is.null), lapply(1:12, protected_random_table))

test_that("first_breach decides as the exact audit, and proves each breach by an outer bound (random patterns)", {
  ns <- asNamespace("sdcRisk")
  n_fail <- 0
  n_pass <- 0
  for (tab in protected_random_tables()) {
    prep <- tab$prep
    good <- tab$good
    seed <- tab$seed
    for (k in 1:6) {
      supp <- good
      # drop some of the protection's secondary cells, or add others
      sec <- which(supp & !prep$sensitive)
      if (k > 1 && length(sec)) supp[sample(sec, min(length(sec), k - 1))] <- FALSE
      if (k %% 3 == 0) supp[sample(which(!supp), 1)] <- TRUE
      targets <- which(supp & prep$sensitive)
      info <- paste("seed", seed, "pattern", k)
      ex <- ns$audit_cells(prep, supp, targets, exact = TRUE, call = environment())
      fb <- ns$audit_cells(prep, supp, targets, exact = FALSE, call = environment(), first_breach = TRUE)
      met_ex <- ns$protection_met(prep, targets, ex$lower, ex$upper)
      met_fb <- ns$protection_met(prep, targets, fb$lower, fb$upper)
      expect_identical(all(met_fb), all(met_ex), info = info)
      expect_lte(fb$n_lp, 2 * length(targets) + ex$n_lp, label = info)
      if (all(met_ex)) {
        n_pass <- n_pass + 1
        next
      }
      n_fail <- n_fail + 1
      # a target it reports as breached is breached, and its interval
      # contains the exact one
      shown <- which(!is.na(fb$lower) & !met_fb)
      expect_gt(length(shown), 0, label = info)
      expect_false(any(met_ex[shown]), info = info)
      tol <- 1e-6 * (1 + abs(prep$value[targets[shown]]))
      expect_true(all(fb$lower[shown] <= ex$lower[shown] + tol), info = info)
      expect_true(all(fb$upper[shown] >= ex$upper[shown] - tol), info = info)
    }
  }
  expect_gte(n_fail, 10)
  expect_gte(n_pass, 5)
})

test_that("relation_breach() never condemns a protected pattern, and finds most cells a pattern's relations fix", {
  ns <- asNamespace("sdcRisk")
  n_true <- 0
  n_checked <- 0
  for (tab in protected_random_tables()) {
    prep <- tab$prep
    good <- tab$good
    seed <- tab$seed
    for (j in which(good & !prep$sensitive)) {
      supp <- good
      supp[j] <- FALSE
      targets <- which(supp & prep$sensitive)
      ex <- ns$audit_cells(prep, supp, targets, exact = TRUE, call = environment())
      passes <- all(ns$protection_met(prep, targets, ex$lower, ex$upper))
      rb <- ns$relation_breach(prep, supp, j, environment())
      info <- paste("seed", seed, "cell", j)
      if (rb) expect_false(passes, info = info)
      n_true <- n_true + rb
      n_checked <- n_checked + 1
    }
    # a published cell alone in its relations with a sensitive one fixes it
    i <- which(prep$sensitive)[1]
    expect_true(ns$relation_breach(prep, replace(logical(length(good)), i, TRUE), i, environment()))
  }
  expect_gte(n_checked, 20)
  expect_gte(n_true, 5)
})
