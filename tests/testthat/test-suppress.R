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
  expect_error(audit_table(bad, bad$r == "a" & bad$c != "Total"),
               class = "sdcRisk_error_audit_infeasible")
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

# Reference for the elimination step: cell j is computable from the
# published cells P iff its column of X (inner cells x cells) lies in the
# span of P's columns, a rank test.
brute_x <- function(sens) {
  st <- sdcRisk:::table_structure(sens)
  X <- sdcRisk:::inner_incidence(st)
  m <- matrix(0, X$n_inner, st$ncell)
  m[cbind(X$inner, X$cell)] <- 1
  m
}
in_span <- function(m, pub, j) {
  r <- function(a) if (ncol(a)) qr(a)$rank else 0L
  r(m[, c(pub, j), drop = FALSE]) == r(m[, pub, drop = FALSE])
}

test_that("elimination: no primary is computable, every secondary is needed (brute force)", {
  for (seed in 1:12) {
    set.seed(seed)
    nd <- sample(2:3, 1)
    d <- data.frame(a = sample(4, 40, TRUE), b = sample(3, 40, TRUE), c = sample(2, 40, TRUE),
                    v = round(rlnorm(40, 3, 1.5)))
    by <- c("a", "b", "c")[seq_len(nd)]
    sens <- cell_sensitivity(d, by, "v", list(rule_frequency(3), rule_p(20)))
    skip_if_not(any(sens$sensitive))
    st <- sdcRisk:::table_structure(sens)
    w <- sdcRisk:::suppression_cost(sens$total, "value")
    g <- sdcRisk:::gauss_step(st, sens$sensitive, w, sdcRisk:::cell_labels(sens))
    expect_false(is.null(g), info = paste("seed", seed))
    supp <- sens$sensitive
    supp[g$cells] <- TRUE
    m <- brute_x(sens)
    pub <- which(!supp)
    # no primary cell lies in the span of the published cells
    for (j in which(sens$sensitive)) expect_false(in_span(m, pub, j), info = paste("seed", seed, "cell", j))
    # each secondary cell, published on top, would disclose some primary cell
    for (s in g$cells) {
      disclosed <- vapply(which(sens$sensitive), function(j) in_span(m, c(pub, s), j), logical(1))
      expect_true(any(disclosed), info = paste("seed", seed, "secondary", s))
    }
    # the pattern the greedy promises: publishing in decreasing cost, a cell
    # is suppressed iff it would disclose a primary cell given those before
    order <- which(!sens$sensitive)
    order <- order[order(-w[order], order)]
    ref <- logical(length(order))
    published <- integer(0)
    for (t in seq_along(order)) {
      hit <- any(vapply(which(sens$sensitive), function(j) in_span(m, c(published, order[t]), j), logical(1)))
      if (hit) ref[t] <- TRUE else published <- c(published, order[t])
    }
    expect_setequal(g$cells, order[ref])
  }
})

test_that("every pattern protect_table() returns passes a fresh audit, with and without elimination", {
  on.exit(options(sdcRisk.elimination = NULL, sdcRisk.elimination_work = NULL))
  for (seed in 1:6) {
    set.seed(seed)
    d <- data.frame(a = sample(6, 120, TRUE), b = sample(4, 120, TRUE), c = sample(3, 120, TRUE),
                    v = round(rlnorm(120, 3, 1.5)))
    sens <- cell_sensitivity(d, c("a", "b", "c"), "v", list(rule_frequency(3), rule_p(15)))
    for (elim in c(FALSE, TRUE)) {
      options(sdcRisk.elimination = elim)
      for (cost in c("value", "cells")) {
        prot <- protect_table(sens, cost = cost, intervals = "none")
        aud <- audit_table(sens, prot$status != "published", intervals = "sensitive")
        expect_true(attr(aud, "passed"), info = paste("seed", seed, cost, elim))
        # which step chose each secondary cell
        step <- sub(":.*", "", prot$reason[prot$status == "secondary"])
        expect_true(all(step %in% c(if (elim) "elimination" else "singleton", "audit")),
                    info = paste("seed", seed, cost, elim))
      }
    }
    # the fallback when the elimination outgrows its work limit
    options(sdcRisk.elimination = TRUE, sdcRisk.elimination_work = 0)
    prot <- protect_table(sens, intervals = "none")
    expect_false(any(grepl("^elimination:", prot$reason)))
    expect_true(attr(audit_table(sens, prot$status != "published", intervals = "none"), "passed"))
    options(sdcRisk.elimination = NULL, sdcRisk.elimination_work = NULL)
  }
})

test_that("the elimination gives up within its work limit", {
  set.seed(1)
  d <- data.frame(a = sample(8, 200, TRUE), b = sample(6, 200, TRUE), v = round(rlnorm(200, 3, 1.5)))
  sens <- cell_sensitivity(d, c("a", "b"), "v", list(rule_frequency(3), rule_p(15)))
  st <- sdcRisk:::table_structure(sens)
  w <- sdcRisk:::suppression_cost(sens$total, "value")
  expect_null(sdcRisk:::gauss_step(st, sens$sensitive, w, sdcRisk:::cell_labels(sens), max_work = 1))
  expect_false(is.null(sdcRisk:::gauss_step(st, sens$sensitive, w, sdcRisk:::cell_labels(sens))))
})
