# Shared set-up of the table tests (test-table-*.R, test-contract-tables.R):
# the records of random tables, brute-force intervals, small helpers and a
# child R process. Every generator draws its random numbers in the order the
# tests drew them inline before, so that each test sees the same data.

# Records of small firms for a two-way table r x c with margins, with
# whole-number values 0 to 2 (brute_intervals() can enumerate their tables).
small_firms <- function(seed, n = 25, nr = 2, nc = 3) {
  set.seed(seed)
  data.frame(firm = seq_len(n),
             r = sample(letters[seq_len(nr)], n, TRUE),
             c = sample(LETTERS[seq_len(nc)], n, TRUE),
             v = sample(0:2, n, TRUE, prob = c(0.5, 0.3, 0.2)))
}

# Records of a random table: one classification variable a, b, c, ... per
# entry of `sizes` (categories 1 to that size, uniform) and whole-number
# log-normal values `v`.
random_records <- function(n, sizes, meanlog, sdlog) {
  d <- lapply(sizes, function(k) sample(k, n, TRUE))
  names(d) <- letters[seq_along(sizes)]
  d$v <- round(rlnorm(n, meanlog, sdlog))
  as.data.frame(d)
}

# Records of a random table of firms with labelled categories: `n_a`
# categories a1, a2, ... of `a`, `n_b` of `b`, u, v, w of `c`, and skewed
# whole-number values. `n_a` and `n_b` may be random draws: each is drawn
# when its variable is (lazy evaluation), as the tests drew them inline.
random_firms <- function(n, n_a, n_b) {
  data.frame(a = sample(sprintf("a%d", seq_len(n_a)), n, TRUE),
             b = sample(sprintf("b%d", seq_len(n_b)), n, TRUE),
             c = sample(c("u", "v", "w"), n, TRUE),
             v = round(rlnorm(n, 8, 2.5)))
}

# Records of firms whose first variable `a` has `n_a` categories of skewed
# sizes (gamma weights), `b` has `n_b` and `c` three; values lognormal.
skewed_firms <- function(n, n_a, n_b) {
  data.frame(a = sample(sprintf("a%02d", seq_len(n_a)), n, TRUE, prob = rgamma(n_a, 0.7)),
             b = sample(sprintf("b%d", seq_len(n_b)), n, TRUE), c = sample(c("u", "v", "w"), n, TRUE),
             v = round(rlnorm(n, 6, 1.8)))
}

# Tiny tables (12 records, 2-way or one hierarchical variable) with at least
# one sensitive cell and at most 10 others, small enough for brute force
# over every pattern.
tiny_tables <- function() {
  out <- list()
  for (seed in 1:36) {
    set.seed(seed)
    kind <- seed %% 3
    d <- data.frame(r = sample(letters[1:(2 + (kind == 1))], 12, TRUE),
                    c = sample(c("X", "Y"), 12, TRUE), v = round(rlnorm(12, 3, 1.5)))
    hier <- NULL
    by <- c("r", "c")
    if (kind == 2) {
      # one hierarchical variable: 4 categories in 2 groups
      d$r <- sample(c("a1", "a2", "b1", "b2"), 12, TRUE)
      by <- "r"
      hier <- list(r = c(a1 = "A", a2 = "A", b1 = "B", b2 = "B"))
    }
    sens <- cell_sensitivity(d, by, "v", list(rule_frequency(3), rule_p(25)), hierarchy = hier)
    if (any(sens$sensitive) && sum(!sens$sensitive) <= 10) out[[paste("seed", seed)]] <- sens
  }
  out
}

# What a protection suppresses, at cost `w` per cell (by default the cells'
# absolute values).
lost <- function(p, w = abs(p$total)) sum(w[p$status != "published"])

# min and max of each suppressed cell of a two-way table r x c (made from
# small_firms()) over all non-negative whole-number tables agreeing with the
# published cells, the row, column and grand totals. For a two-way table
# with margins the relations form a totally unimodular system, so with
# whole-number cells these are the extreme values over all real tables.
brute_intervals <- function(sens, supp) {
  rl <- setdiff(levels(sens$r), "Total")
  cl <- setdiff(levels(sens$c), "Total")
  full <- expand.grid(r = c(rl, "Total"), c = c(cl, "Total"), stringsAsFactors = FALSE)
  pos <- match(paste(full$r, full$c), paste(sens$r, sens$c))
  full$total <- ifelse(is.na(pos), 0, sens$total[pos])
  full$supp <- ifelse(is.na(pos), FALSE, supp[pos])
  grand <- full$total[full$r == "Total" & full$c == "Total"]
  unknown <- which(full$supp)
  grid <- as.matrix(expand.grid(rep(list(0:grand), length(unknown))))
  ok <- rep(TRUE, nrow(grid))
  value <- function(i) {
    k <- match(i, unknown)
    if (is.na(k)) rep(full$total[i], nrow(grid)) else grid[, k]
  }
  cell <- function(a, b) which(full$r == a & full$c == b)
  for (a in c(rl, "Total")) {
    s <- Reduce(`+`, lapply(cl, function(b) value(cell(a, b))))
    ok <- ok & s == value(cell(a, "Total"))
  }
  for (b in c(cl, "Total")) {
    s <- Reduce(`+`, lapply(rl, function(a) value(cell(a, b))))
    ok <- ok & s == value(cell("Total", b))
  }
  feas <- grid[ok, , drop = FALSE]
  data.frame(r = full$r[unknown], c = full$c[unknown],
             lower = apply(feas, 2, min), upper = apply(feas, 2, max))
}

# Runs `fun` (a function of no argument, self-contained) in a child R
# process with sdcRisk loaded as in this one (installed, or load_all() of the
# source tree), with the environment variables `env`.
in_child <- function(fun, env = callr::rcmd_safe_env()) {
  path <- getNamespaceInfo("sdcRisk", "path")
  dev <- !dir.exists(file.path(path, "Meta")) # an installed package has Meta/, a source tree not
  callr::r(function(fun, path, dev) {
    if (dev) pkgload::load_all(path, quiet = TRUE) else library(sdcRisk, lib.loc = dirname(path))
    fun()
  }, args = list(fun = fun, path = path, dev = dev), libpath = .libPaths(), env = env)
}

# A hierarchical table of `n` records (a in 3 levels, b in 2, c flat) and
# its search state, with some cells suppressed at random.
hier_search <- function(seed, n = 900, upper = NULL) {
  set.seed(seed)
  a <- sample(12, n, TRUE, prob = rgamma(12, 1.5))
  b <- sample(8, n, TRUE)
  d <- data.frame(a = sprintf("A%02d", a), ag = sprintf("AG%d", (a - 1) %/% 3 + 1),
                  as = sprintf("AS%d", (a - 1) %/% 6 + 1), b = sprintf("B%d", b),
                  bg = sprintf("BG%d", (b - 1) %/% 4 + 1), c = sample(c("u", "v", "w", "x"), n, TRUE),
                  v = round(rlnorm(n, 6, 1.8)))
  sens <- cell_sensitivity(d, c("a", "b", "c"), "v", rule_p(10),
                           hierarchy = list(a = unique(d[c("a", "ag", "as")]), b = unique(d[c("b", "bg")])))
  # (`upper`: a priori upper bounds of that many times each cell's value)
  prep <- sdcRisk:::table_problem(sens, NULL, if (!is.null(upper)) upper * sens$total, 10)
  search <- sdcRisk:::new_protection_search(prep, sdcRisk:::suppression_cost(prep$value, "value"),
                                           sdcRisk:::cell_labels(sens), 2000)
  search$supp <- prep$sensitive | runif(nrow(sens)) < 0.2
  list(sens = sens, prep = prep, search = search)
}

# The protection search of table `sens` as protect_table() starts it: the
# problem, the search and its sensitive cells in the heuristic's order.
new_search <- function(sens) {
  ns <- asNamespace("sdcRisk")
  prep <- ns$table_problem(sens, NULL, NULL, 10, arg = "x")
  search <- ns$new_protection_search(prep, ns$suppression_cost(prep$value, "value"),
                                     ns$cell_labels(sens), 2000)
  todo <- which(prep$sensitive)
  list(prep = prep, search = search, todo = todo[order(-prep$level[todo], todo)])
}

# Tables of the bench's sweep (bench/bench_suppress_sweep.R, seed 1,
# tables 17, 14, 1 and 20): personal income of the people with a positive
# income in the first PUMAs of the national ACS excerpt
# (tests/testthat/fixtures/acs2019), records as contributors. "W17": PUMA
# x sex x race group x education group, p% rule p = 10 (628 cells, 12
# PUMAs); "W14": PUMA x education group x race group, the (1, 80) rule
# (218 cells, 12 PUMAs); "W1": race group x age group x PUMA x education
# group, p% rule p = 10 (350 cells, 4 PUMAs); "W20": the same table with
# its classifications in the order race, PUMA, education, age (its cells
# in another order). Returns list(sens, dims).
acs_sweep_table <- function(id) {
  d <- load_acs("national2019", values = TRUE)
  d <- d[!is.na(d$PINCP) & d$PINCP > 0, ]
  spec <- switch(id,
                 W1 = list(dims = c("race", "age", "puma", "edu"), rule = rule_p(10), pumas = 4),
                 W20 = list(dims = c("race", "puma", "edu", "age"), rule = rule_p(10), pumas = 4),
                 W17 = list(dims = c("puma", "sex", "race", "edu"), rule = rule_p(10), pumas = 12),
                 W14 = list(dims = c("puma", "edu", "race"), rule = rule_nk(1, 80), pumas = 12))
  d <- d[d$PUMA %in% unique(d$PUMA)[seq_len(spec$pumas)], ]
  d <- data.frame(sex = paste0("s", d$SEX), race = paste0("r", pmin(d$RAC1P, 4)),
                  age = as.character(cut(d$AGEP, c(0, 30, 45, 60, 200), labels = c("a15", "a30", "a45", "a60"))),
                  edu = paste0("e", pmin(d$EDU, 8) %/% 3), puma = as.character(d$PUMA), v = d$PINCP)
  list(sens = cell_sensitivity(d, spec$dims, "v", spec$rule), dims = spec$dims)
}

# GaussSuppression's interval pattern of table `id` from the fixture `file`
# of tests/testthat/fixtures/gauss (SuppressDominantCells(...,
# protectionIntervals = TRUE, lpPackage = "lpSolve") of GaussSuppression
# 1.3.0, recorded so that the tests run without it; see the fixtures'
# README), as the suppressed
# vector of `sens` (every fixture cell must be a cell of `sens`).
gauss_fixture_pattern <- function(sens, id, dims, file = "acs_p10_intervals.csv") {
  g <- utils::read.csv(testthat::test_path("fixtures", "gauss", file), colClasses = "character")
  g <- g[g$table == id, dims]
  key <- function(df) do.call(paste, c(lapply(dims, function(v) as.character(df[[v]])), sep = "|"))
  testthat::expect_true(all(key(g) %in% key(as.data.frame(sens))))
  key(as.data.frame(sens)) %in% key(g)
}
