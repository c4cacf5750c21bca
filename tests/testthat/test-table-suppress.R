# Secondary suppression and its audit, against brute force: for a two-way
# table with margins the relations form a totally unimodular system, so with
# whole-number cells the extreme values of a suppressed cell over all real
# tables are reached by whole-number tables, which a test can enumerate.

small_firms <- function(seed, n = 25, nr = 2, nc = 3) {
  set.seed(seed)
  data.frame(firm = seq_len(n),
             r = sample(letters[seq_len(nr)], n, TRUE),
             c = sample(LETTERS[seq_len(nc)], n, TRUE),
             v = sample(0:2, n, TRUE, prob = c(0.5, 0.3, 0.2)))
}

# min and max of each suppressed cell over all non-negative whole-number
# tables agreeing with the published cells, the row, column and grand totals
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
    d <- data.frame(a = sample(5, 150, TRUE), b = sample(4, 150, TRUE), c = sample(3, 150, TRUE),
                    v = round(rlnorm(150, 3, 1.5)))
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

test_that("protect_table() patterns pass an independent audit and brute force", {
  for (seed in 1:10) {
    d <- small_firms(seed, n = 30, nr = 3, nc = 3)
    d$v <- d$v + sample(0:1, nrow(d), TRUE)
    rules <- list(rule_frequency(3), rule_p(25))
    sens <- cell_sensitivity(d, c("r", "c"), "v", rules, contributor = "firm")
    for (cost in c("value", "cells")) {
      prot <- protect_table(sens, cost = cost)
      supp <- prot$status != "published"
      expect_true(all(supp[sens$sensitive]), info = paste("seed", seed))
      expect_true(all(prot$status[!sens$sensitive] != "primary"))
      aud <- audit_table(sens, supp)
      expect_true(attr(aud, "passed"), info = paste("seed", seed, cost))
      # the certificate printed with the pattern is the audit's
      m <- match(paste(aud$r, aud$c), paste(prot$r, prot$c))
      expect_equal(prot$lower[m], aud$lower)
      expect_equal(prot$upper[m], aud$upper)
      # brute force agrees that every sensitive cell meets its level
      if (!supp[sens$r == "Total" & sens$c == "Total"] && sum(supp) <= 5) {
        ref <- brute_intervals(sens, supp)
        k <- match(paste(ref$r, ref$c), paste(prot$r, prot$c))
        lev <- prot$protection[k]
        sensitive <- prot$status[k] == "primary"
        expect_true(all((ref$upper >= prot$total[k] + lev - 1e-9 &
                           ref$lower <= pmax(prot$total[k] - lev, 0) + 1e-9 &
                           ref$upper > ref$lower)[sensitive]), info = paste("seed", seed))
      }
    }
  }
})

test_that("protection levels are the rules' classic upper protection levels", {
  d <- data.frame(k = c(rep("a", 4), rep("b", 3)),
                  v = c(100, 30, 10, 5, 50, 40, 30))
  sens <- cell_sensitivity(d, "k", "v", list(rule_p(10), rule_nk(1, 60), rule_pq(10, 50)))
  prot <- protect_table(sens)
  a <- prot[prot$k == "a", ]
  # p%: p/100 x1 - (X - x1 - x2) = 10 - 15 < 0 (safe); (1, 60): 100/60 x1 - X
  expect_equal(sens$S_p10[sens$k == "a"], 10 - 15)
  expect_equal(a$protection, 100 / 60 * 100 - 145)
  # pq: p/100 x1 - q/100 (X - x1 - x2)
  expect_equal(sens$S_pq10_50[sens$k == "a"], 10 - 0.5 * 15)
  expect_equal(attr(audit_table(sens, prot$status != "published"), "passed"), TRUE)
})

test_that("frequency tables (counts) are protected and audited the same way", {
  set.seed(11)
  d <- data.frame(sex = sample(c("f", "m"), 60, TRUE),
                  age = sample(c("young", "mid", "old"), 60, TRUE, prob = c(0.1, 0.6, 0.3)),
                  area = sample(c("x", "y", "z"), 60, TRUE))
  d$one <- 1
  counts <- cell_sensitivity(d, c("sex", "age", "area"), "one", rule_frequency(3))
  expect_true(any(counts$sensitive))
  prot <- protect_table(counts, cost = "cells")
  expect_true(all(prot$protected[counts$sensitive]))
  prim <- prot[prot$status == "primary", ]
  expect_true(all(prim$upper - prim$lower > 0))
  expect_true(all(prim$upper >= prim$total + 0.1 * prim$total - 1e-9))
  expect_true(attr(audit_table(counts, prot$status != "published"), "passed"))
})

test_that("hierarchies give margins at every level, equal to direct aggregation", {
  set.seed(5)
  n <- 200
  d <- data.frame(firm = seq_len(n),
                  ind = sample(c("A1", "A2", "B1", "B2", "B3"), n, TRUE),
                  county = sample(c("n1", "n2", "s1", "s2"), n, TRUE),
                  v = round(rlnorm(n, 4, 1.5)))
  hier <- list(ind = c(A1 = "A", A2 = "A", B1 = "B", B2 = "B", B3 = "B"),
               county = data.frame(county = c("n1", "n2", "s1", "s2"),
                                   region = c("N", "N", "S", "S")))
  rules <- list(rule_frequency(3), rule_p(10))
  s <- cell_sensitivity(d, c("ind", "county"), "v", rules, contributor = "firm", hierarchy = hier)
  # 3 levels of ind (detail, group, total) x 3 of county
  expect_equal(length(unique(s$level)), 9)
  expect_equal(nrow(s), (5 + 2 + 1) * (4 + 2 + 1))
  # the group x region cells are the table of the derived variables
  d$grp <- substr(d$ind, 1, 1)
  d$region <- ifelse(d$county %in% c("n1", "n2"), "N", "S")
  flat <- cell_sensitivity(d, c("grp", "region"), "v", rules, contributor = "firm")
  mine <- s[s$level == "ind_group:region", ]
  m <- match(paste(flat$grp, flat$region), paste(mine$ind, mine$county))
  m[flat$grp == "Total" & flat$region == "Total"] <- which(s$level == "(total)") - 0
  ref <- as.data.frame(flat)
  got <- as.data.frame(s)
  gi <- match(paste(ref$grp, ref$region),
              paste(ifelse(got$ind == "Total", "Total", as.character(got$ind)),
                    as.character(got$county)))
  expect_false(anyNA(gi))
  expect_equal(got$total[gi], ref$total)
  expect_equal(got$S_p10[gi], ref$S_p10)
  expect_equal(got$sensitive[gi], ref$sensitive)
  # and the protected pattern passes its audit across every level
  prot <- protect_table(s)
  expect_true(attr(audit_table(s, prot$status != "published"), "passed"))
  # hierarchy relation: every suppressed group cell is linked to its children
  rel <- sdcRisk:::table_structure(s)
  expect_equal(length(unique(rel$rel)), rel$nrel)
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

test_that("sensitive-only intervals agree with the full audit", {
  set.seed(9)
  d <- data.frame(a = sample(6, 300, TRUE), b = sample(5, 300, TRUE), v = round(rlnorm(300, 4, 2)))
  sens <- cell_sensitivity(d, c("a", "b"), "v", list(rule_frequency(3), rule_p(10)))
  full <- protect_table(sens)
  fast <- protect_table(sens, intervals = "sensitive")
  expect_equal(fast$status, full$status)
  p <- full$status == "primary"
  expect_equal(fast$lower[p], full$lower[p])
  expect_equal(fast$upper[p], full$upper[p])
  expect_true(all(is.na(fast$lower[full$status == "secondary"])))
})

test_that("errors are classed and worded", {
  d <- small_firms(2, n = 30)
  sens <- cell_sensitivity(d, c("r", "c"), "v", rule_frequency(5), contributor = "firm")
  expect_true(any(sens$sensitive))
  expect_error(protect_table(as.data.frame(sens)), class = "sdcRisk_error_not_sensitivity")
  expect_error(audit_table(sens, TRUE), class = "sdcRisk_error_pattern")
  expect_error(audit_table(sens, data.frame(r = "zz", c = "A")), class = "sdcRisk_error_pattern")
  expect_error(protect_table(sens[sens$level != "(total)", ]), class = "sdcRisk_error_incomplete_table")
  expect_error(protect_table(sens, lower = sens$total, upper = sens$total),
               class = "sdcRisk_error_unprotectable")
  expect_error(protect_table(sens, upper = 0), class = "sdcRisk_error_bounds")
  bad <- sens
  bad$total[bad$r == "a" & bad$c == "Total"] <- bad$total[bad$r == "a" & bad$c == "Total"] + 5
  # a total that no longer adds up is refused before any program is solved
  expect_error(audit_table(bad, bad$r == "a" & bad$c != "Total"),
               class = "sdcRisk_error_not_additive")
  expect_error(cell_sensitivity(d, c("r", "c"), "v", rule_frequency(3), hierarchy = list(r = c(a = "g"))),
               class = "sdcRisk_error_hierarchy")
  expect_error(cell_sensitivity(d, c("r", "c"), "v", rule_frequency(3), hierarchy = list(r = c(a = "b", b = "g"))),
               class = "sdcRisk_error_hierarchy")
  expect_snapshot(error = TRUE, {
    audit_table(sens, TRUE)
    protect_table(sens, lower = sens$total, upper = sens$total)
    cell_sensitivity(d, c("r", "c"), "v", rule_frequency(3), hierarchy = list(r = c(a = "g")))
  })
})

test_that("printing and plotting a protected table", {
  d <- small_firms(4, n = 40)
  sens <- cell_sensitivity(d, c("r", "c"), "v", list(rule_frequency(3), rule_p(20)),
                           contributor = "firm")
  prot <- protect_table(sens)
  out <- format(prot)
  expect_match(out[1], "<sdc_protection> 12 cells of v by r x c")
  expect_match(out[3], "Audit passed")
  expect_match(format(audit_table(sens, sens$sensitive))[2], "NOT PROTECTED")
  pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_invisible(plot(prot))
})

test_that("every pattern protect_table() returns passes a fresh audit, whatever the box", {
  for (seed in 1:6) {
    set.seed(seed)
    d <- data.frame(a = sample(6, 120, TRUE), b = sample(4, 120, TRUE), c = sample(3, 120, TRUE),
                    v = round(rlnorm(120, 3, 1.5)))
    sens <- cell_sensitivity(d, c("a", "b", "c"), "v", list(rule_frequency(3), rule_p(15)))
    expect_true(any(sens$sensitive))
    for (box in c(4, 30, Inf)) {
      for (cost in c("value", "cells")) {
        info <- paste("seed", seed, "box", box, cost)
        prot <- protect_table(sens, cost = cost, intervals = "none", box = box)
        aud <- audit_table(sens, prot$status != "published", intervals = "sensitive")
        expect_true(attr(aud, "passed"), info = info)
        # every secondary cell names the sensitive cell whose witness chose it
        sec <- prot$reason[prot$status == "secondary"]
        named <- sub("^protects ", "", sec)
        expect_true(all(startsWith(sec, "protects ")), info = info)
        expect_true(all(named %in% sdcRisk:::cell_labels(sens)[sens$sensitive]), info = info)
      }
    }
  }
})

test_that("a larger box never needs the whole table and finds cheaper patterns on the whole", {
  set.seed(21)
  d <- data.frame(a = sample(12, 600, TRUE), b = sample(8, 600, TRUE), c = sample(5, 600, TRUE),
                  v = round(rlnorm(600, 4, 1.8)))
  sens <- cell_sensitivity(d, c("a", "b", "c"), "v", rule_p(10))
  lost <- function(p) sum(abs(p$total[p$status != "published"]))
  small <- protect_table(sens, box = 8, intervals = "none")
  whole <- protect_table(sens, box = Inf, intervals = "none")
  expect_true(attr(audit_table(sens, small$status != "published", intervals = "none"), "passed"))
  expect_true(attr(audit_table(sens, whole$status != "published", intervals = "none"), "passed"))
  expect_lte(lost(whole), lost(small))
})

test_that("the search box holds the cell, its ancestors and siblings, within its budget", {
  set.seed(5)
  n <- 300
  d <- data.frame(ind = sample(c("A1", "A2", "A3", "B1", "B2", "B3"), n, TRUE),
                  area = sample(c("x", "y", "z", "u"), n, TRUE),
                  v = round(rlnorm(n, 4, 1.5)))
  hier <- list(ind = c(A1 = "A", A2 = "A", A3 = "A", B1 = "B", B2 = "B", B3 = "B"))
  s <- cell_sensitivity(d, c("ind", "area"), "v", rule_p(10), hierarchy = hier)
  prep <- sdcRisk:::table_problem(s, NULL, NULL, 10)
  search <- sdcRisk:::new_protection_search(prep, sdcRisk:::suppression_cost(prep$value, "value"),
                                           sdcRisk:::cell_labels(s), 2000)
  i <- which(s$ind == "A2" & s$area == "y")
  lab <- function(cells) paste(s$ind[cells], s$area[cells])
  whole <- sdcRisk:::search_box(search, i, 1, Inf)
  expect_true(whole$whole)
  expect_setequal(whole$cells, seq_len(nrow(s)))
  # the smallest box: one other category at each level
  tiny <- sdcRisk:::search_box(search, i, 1, 4)
  expect_false(tiny$whole)
  got <- lab(tiny$cells)
  expect_true(all(c("A2 y", "A y", "Total y", "A2 Total", "A Total", "Total Total") %in% got))
  cats <- unique(as.character(s$ind[tiny$cells]))
  # ancestors A and Total, one sibling of A2 and one of A (B), B's child
  expect_equal(length(cats), 6)
  expect_true("B" %in% cats)
  expect_true(any(c("B1", "B2", "B3") %in% cats))
  expect_true(any(c("A1", "A3") %in% cats))
  # a margin cell's box reaches down to the finest level
  m <- which(s$ind == "Total" & s$area == "Total")
  got <- lab(sdcRisk:::search_box(search, m, 1, 4)$cells)
  expect_true(any(grepl("^(A|B)[123] ", got)))
  # the budget holds, unless the smallest box is larger
  for (b in c(10, 40, 100)) {
    expect_lte(length(sdcRisk:::search_box(search, i, 1, b)$cells), max(b, length(tiny$cells)))
  }
})

test_that("a witness must add up and keep the bounds before it counts", {
  d <- data.frame(k = c("a", "a", "b", "b", "b"), v = c(1, 2, 3, 4, 5))
  sens <- cell_sensitivity(d, "k", "v", rule_frequency(3))
  prep <- sdcRisk:::table_problem(sens, NULL, NULL, 10)
  search <- sdcRisk:::new_protection_search(prep, sdcRisk:::suppression_cost(prep$value, "value"),
                                           sdcRisk:::cell_labels(sens), 2000)
  a <- which(sens$k == "a")
  b <- which(sens$k == "b")
  tot <- which(sens$k == "Total")
  expect_true(sdcRisk:::witness_ok(search, c(a, b), c(1, -1)))
  expect_true(sdcRisk:::witness_ok(search, c(a, tot), c(2, 2)))
  # does not add up
  expect_false(sdcRisk:::witness_ok(search, c(a, b), c(1, -0.5)))
  # leaves the bounds: a is 3 and cannot go below 0
  expect_false(sdcRisk:::witness_ok(search, c(a, b), c(-4, 4)))
})

test_that("negative contributions and known bounds are respected", {
  set.seed(8)
  d <- data.frame(a = sample(5, 150, TRUE), b = sample(4, 150, TRUE),
                  v = round(rnorm(150, 20, 40)))
  sens <- cell_sensitivity(d, c("a", "b"), "v", list(rule_frequency(4), rule_p(20)),
                           negative = "abs")
  expect_true(any(sens$total < 0))
  prot <- protect_table(sens)
  aud <- audit_table(sens, prot$status != "published")
  expect_true(attr(aud, "passed"))
  # the intervals may reach below zero when contributions may be negative
  expect_true(any(prot$lower < 0, na.rm = TRUE))
  # known upper bounds close the intervals; the pattern still passes
  up <- abs(sens$total) * 3 + 50
  lo <- -up
  prot2 <- protect_table(sens, lower = lo, upper = up)
  expect_true(all(prot2$upper <= up + 1e-6, na.rm = TRUE))
  expect_true(all(prot2$lower >= lo - 1e-6, na.rm = TRUE))
  expect_true(attr(audit_table(sens, prot2$status != "published", lower = lo, upper = up), "passed"))
})

# Reference intervals: one linear program per end over the whole table, every
# published cell fixed, no components, no witnesses, no relation bounds.
whole_table_intervals <- function(sens, supp, lower, upper) {
  st <- sdcRisk:::table_structure(sens)
  n <- nrow(sens)
  mat <- sdcRisk:::triplet_matrix(st$rel, st$cell, st$coef, st$nrel, n)
  lo <- ifelse(supp, lower, sens$total)
  hi <- ifelse(supp, upper, sens$total)
  one <- function(j, max) {
    obj <- numeric(n)
    obj[j] <- 1
    r <- Rglpk::Rglpk_solve_LP(obj, mat, rep("==", st$nrel), numeric(st$nrel), max = max,
                               bounds = list(lower = list(ind = seq_len(n), val = lo),
                                             upper = list(ind = seq_len(n), val = hi)))
    if (r$status == 0) r$optimum else if (max) Inf else -Inf
  }
  cells <- which(supp)
  data.frame(cell = cells, lower = vapply(cells, one, 0, max = FALSE),
             upper = vapply(cells, one, 0, max = TRUE))
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
      list(extreme = function(obj, max) {
        r <- s$extreme(obj, max)
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
      for (max in c(TRUE, FALSE)) {
        r <- sdcRisk:::solve_lp(obj, mat, rep("==", nr), lp$rhs, lp$lower, upper, max = max)
        end <- if (r$status == "optimal") r$value else if (max) Inf else -Inf
        info <- paste("seed", seed, "cell", j, if (max) "max" else "min")
        if (max) expect_gte(rb$upper[j], end - 1e-9, label = info) else
          expect_lte(rb$lower[j], end + 1e-9, label = info)
      }
      expect_true(rb$lower[j] <= x0[j] && x0[j] <= rb$upper[j], info = paste("seed", seed))
    }
  }
})

test_that("method = \"optimal\" finds the cheapest pattern that passes the audit (brute force)", {
  checked <- 0
  for (seed in 1:40) {
    set.seed(seed)
    nr <- 2 + seed %% 2
    d <- data.frame(r = sample(letters[seq_len(nr)], 14, TRUE), c = sample(c("X", "Y"), 14, TRUE),
                    v = round(rlnorm(14, 3, 1.2)))
    sens <- cell_sensitivity(d, c("r", "c"), "v", list(rule_frequency(3), rule_p(25)))
    free <- which(!sens$sensitive)
    if (!any(sens$sensitive) || length(free) > 9) next
    for (cost in c("value", "cells")) {
      info <- paste("seed", seed, cost)
      w <- sdcRisk:::suppression_cost(sens$total, cost)
      opt <- protect_table(sens, cost = cost, method = "optimal", intervals = "none")
      heur <- protect_table(sens, cost = cost, intervals = "none")
      lost <- function(p) sum(w[p$status != "published"])
      # every subset of the other cells, on top of the sensitive ones
      best <- Inf
      for (m in 0:(2^length(free) - 1)) {
        supp <- sens$sensitive
        supp[free[bitwAnd(m, 2^(seq_along(free) - 1)) > 0]] <- TRUE
        if (sum(w[supp]) >= best) next
        if (attr(audit_table(sens, supp, intervals = "none"), "passed")) best <- sum(w[supp])
      }
      expect_true(isTRUE(attr(opt, "stats")$optimal), info = info)
      expect_equal(lost(opt), best, tolerance = 1e-9, info = info)
      expect_gte(lost(heur), best - 1e-9)
      expect_true(attr(audit_table(sens, opt$status != "published"), "passed"), info = info)
      checked <- checked + 1
    }
  }
  expect_gte(checked, 10)
})

test_that("method = \"optimal\" refuses large tables and checks its arguments", {
  set.seed(2)
  d <- data.frame(a = sample(30, 30000, TRUE), b = sample(20, 30000, TRUE), c = sample(20, 30000, TRUE),
                  v = round(rlnorm(30000, 3, 2)))
  sens <- cell_sensitivity(d, c("a", "b", "c"), "v", rule_p(15))
  expect_gt(nrow(sens), 10000)
  expect_error(protect_table(sens, method = "optimal"), class = "sdcRisk_error_argument")
  expect_error(protect_table(sens, time_limit = 0), class = "sdcRisk_error_argument")
  expect_error(protect_table(sens, method = "best"), class = "sdcRisk_error_argument")
  expect_error(protect_table(sens, cleanup = "yes"), class = "sdcRisk_error_argument")
  expect_error(protect_table(sens, cleanup = NA), class = "sdcRisk_error_argument")
})

test_that("cleanup = \"auto\" cleans tables of at most 3,500 cells and leaves larger ones to the heuristic", {
  expect_true(sdcRisk:::check_cleanup("auto", 3500))
  expect_false(sdcRisk:::check_cleanup("auto", 3501))
  expect_false(sdcRisk:::check_cleanup(FALSE, 10))
  expect_true(sdcRisk:::check_cleanup(TRUE, 1e6))
  d <- small_firms(5, n = 40)
  sens <- cell_sensitivity(d, c("r", "c"), "v", rule_p(20), contributor = "firm")
  expect_identical(protect_table(sens)$status, protect_table(sens, cleanup = TRUE)$status)
})

test_that("repeated clean-up passes never cost more than one, and every pattern passes the audit", {
  ns <- asNamespace("sdcRisk")
  one_pass <- function(sens) {
    # the heuristic and a single clean-up pass, by the package's own steps
    prep <- ns$table_problem(sens, NULL, NULL, 10, arg = "x")
    search <- ns$new_protection_search(prep, ns$suppression_cost(prep$value, "value"),
                                       ns$cell_labels(sens), 2000)
    todo <- which(prep$sensitive)
    todo <- todo[order(-prep$level[todo], todo)]
    for (i in todo) ns$protect_cell(search, i, call = environment())
    ns$cleanup_pattern(search, todo, call = environment())
    search$supp
  }
  checked <- 0
  for (seed in 1:8) {
    set.seed(seed)
    n <- 300
    d <- data.frame(a = sample(sprintf("a%02d", 1:12), n, TRUE, prob = rgamma(12, 0.7)),
                    b = sample(sprintf("b%d", 1:6), n, TRUE), c = sample(c("u", "v", "w"), n, TRUE),
                    v = round(rlnorm(n, 6, 1.8)))
    by <- if (seed %% 2) c("a", "b") else c("a", "b", "c")
    sens <- cell_sensitivity(d, by, "v", rule_p(10))
    if (!any(sens$sensitive)) next
    w <- abs(sens$total)
    once <- one_pass(sens)
    p <- protect_table(sens, intervals = "none", cleanup = TRUE)
    again <- p$status != "published"
    expect_lte(sum(w[again]), sum(w[once]) + 1e-9, label = paste("seed", seed))
    expect_true(attr(audit_table(sens, again, intervals = "none"), "passed"), info = paste("seed", seed))
    checked <- checked + 1
  }
  expect_gte(checked, 6)
})

test_that("progress bars show only when R is interactive, and leave the result unchanged", {
  skip_if_not_installed("callr")
  # in a child process whose cli redraws every millisecond (CLI_TICK_TIME),
  # so that bars of a small table show at all
  path <- getNamespaceInfo("sdcRisk", "path")
  dev <- !dir.exists(file.path(path, "Meta")) # an installed package has Meta/, a source tree not
  res <- callr::r(function(path, dev) {
    if (dev) pkgload::load_all(path, quiet = TRUE) else library(sdcRisk, lib.loc = dirname(path))
    set.seed(3)
    firms <- data.frame(firm = 1:80, sector = sample(c("a", "b", "c", "d"), 80, TRUE),
                        area = sample(c("x", "y", "z"), 80, TRUE), sales = round(rlnorm(80, 5, 1.5)))
    sens <- cell_sensitivity(firms, c("sector", "area"), "sales",
                             rules = list(rule_frequency(3), rule_p(15)), contributor = "firm")
    msgs <- function(expr) {
      out <- character()
      value <- withCallingHandlers(expr, message = function(m) {
        out <<- c(out, conditionMessage(m))
        invokeRestart("muffleMessage")
      })
      list(value = value, messages = out)
    }
    options(cli.progress_show_after = 0)
    quiet <- msgs(protect_table(sens))
    quiet_audit <- msgs(audit_table(sens, quiet$value$status != "published"))
    rlang::local_interactive(TRUE)
    shown <- msgs(protect_table(sens))
    shown_audit <- msgs(audit_table(sens, quiet$value$status != "published"))
    list(quiet = quiet$messages, quiet_audit = quiet_audit$messages, shown = shown$messages,
         shown_audit = shown_audit$messages,
         same = identical(quiet$value$status, shown$value$status) &&
           identical(quiet$value$lower, shown$value$lower))
  }, args = list(path = path, dev = dev), libpath = .libPaths(), env = c(callr::rcmd_safe_env(), CLI_TICK_TIME = "1"))
  # tests and scripts (not interactive): silent
  expect_identical(res$quiet, character())
  expect_identical(res$quiet_audit, character())
  expect_true(any(grepl("Protecting the sensitive cells", res$shown)))
  expect_true(any(grepl("Auditing the suppressed cells", res$shown)))
  expect_true(any(grepl("Auditing the suppressed cells", res$shown_audit)))
  expect_true(res$same)
})
