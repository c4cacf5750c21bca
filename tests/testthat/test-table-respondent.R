# The respondent audit (audit_table(), protect_table(), attacker =
# "respondents"), checked against an independent formulation: every cell of
# a two-way table with margins is a variable of one linear program (no
# components, no witnesses, no pruning), published cells fixed, the
# respondent's knowledge computed here from the records.

# Records of a small two-way table r x c whose contributors (firm) may have
# records in several cells, with some zero values.
respondent_firms <- function(seed, n = 14, nr = 2, nc = 3, firms = 10) {
  # (seed NULL: the random stream as it is)
  if (!is.null(seed)) set.seed(seed)
  data.frame(firm = sample(sprintf("f%02d", seq_len(firms)), n, TRUE),
             r = sample(letters[seq_len(nr)], n, TRUE),
             c = sample(LETTERS[seq_len(nc)], n, TRUE),
             v = round(rlnorm(n, 3, 1.2)) * rbinom(n, 1, 0.85))
}

# The contribution of every firm to every cell of the table `sens` (rows),
# margins included, from the records: a firms x cells matrix. (Any number
# of classification variables, each with its "Total".)
firm_cells <- function(d, sens, firm = "firm") {
  by <- attr(sens, "by")
  ids <- unique(as.character(d[[firm]]))
  m <- matrix(0, length(ids), nrow(sens), dimnames = list(ids, NULL))
  nz <- matrix(FALSE, length(ids), nrow(sens))
  has <- matrix(FALSE, length(ids), nrow(sens))
  for (k in seq_len(nrow(sens))) {
    sel <- Reduce(`&`, lapply(by, function(v) as.character(sens[[v]][k]) == "Total" |
                                as.character(d[[v]]) == as.character(sens[[v]][k])))
    f <- as.character(d[[firm]][sel])
    m[, k] <- vapply(ids, function(i) sum(d$v[sel][f == i]), numeric(1))
    nz[, k] <- vapply(ids, function(i) any(d$v[sel][f == i] != 0), logical(1))
    has[, k] <- ids %in% f
  }
  list(x = m, nonzero = nz, has = has, ids = ids)
}

# min and max of cell s over every table agreeing with the published cells,
# adding up, non-negative, within [lo, hi] (one program with all cells as
# variables, by highs directly): for every variable and every cell with
# that variable at "Total", its categories add up to it.
lp_range <- function(sens, supp, lo, hi, s) {
  n <- nrow(sens)
  by <- attr(sens, "by")
  key <- function(df) do.call(paste, c(lapply(by, function(v) as.character(df[[v]])), sep = "\r"))
  keys <- key(sens)
  rows <- list()
  for (v in by) {
    cats <- setdiff(unique(as.character(sens[[v]])), "Total")
    for (t in which(as.character(sens[[v]]) == "Total")) {
      kids <- vapply(cats, function(cv) {
        df <- as.data.frame(sens[t, by, drop = FALSE], stringsAsFactors = FALSE)
        df[[v]] <- cv
        k <- match(key(df), keys)
        if (is.na(k)) 0L else k
      }, integer(1))
      rows[[length(rows) + 1]] <- list(kids[kids > 0], t)
    }
  }
  A <- matrix(0, length(rows), n)
  for (i in seq_along(rows)) {
    A[i, rows[[i]][[1]]] <- 1
    A[i, rows[[i]][[2]]] <- -1
  }
  lower <- ifelse(supp, pmax(0, lo), sens$total)
  upper <- ifelse(supp, hi, sens$total)
  one <- function(maximum) {
    obj <- numeric(n)
    obj[s] <- 1
    r <- highs::highs_solve(L = obj, lower = lower, upper = upper, A = A, lhs = rep(0, nrow(A)),
                            rhs = rep(0, nrow(A)), maximum = maximum)
    if (r$status_message == "Optimal") r$primal_solution[s] else if (maximum) Inf else -Inf
  }
  c(one(FALSE), one(TRUE))
}

# The breaches of pattern `supp` by every single firm, independently:
# a firm knows its contribution to each cell (the cell is at least that,
# the others being non-negative), and the cell itself when no other firm
# counts in it (zero contributors ignored with zero = "ignore"). Returns
# "firm|row" keys with the firm's interval.
reference_breaches <- function(d, sens, supp, level, zero = "ignore", firm = "firm") {
  fc <- firm_cells(d, sens, firm)
  counted <- if (zero == "ignore") fc$nonzero else fc$has
  out <- list()
  tol <- function(v) 1e-6 * (1 + abs(v))
  for (a in seq_along(fc$ids)) {
    if (!any(fc$has[a, ] & supp)) next
    others <- colSums(counted[-a, , drop = FALSE]) > 0
    alone <- fc$has[a, ] & !others
    # alone in a cell, it knows that every cell below it without its
    # records (all of whose contributors report 0) is 0
    zero <- which(colSums(counted) == 0 & colSums(fc$has) > 0 & !fc$has[a, ])
    up <- function(v, z, m) as.character(v[m]) == "Total" | as.character(v[z]) == as.character(v[m])
    for (z in zero) {
      below <- Reduce(`&`, lapply(attr(sens, "by"), function(v) up(sens[[v]], z, which(alone))))
      if (any(below)) alone[z] <- TRUE
    }
    lo <- ifelse(alone, sens$total, ifelse(fc$has[a, ], fc$x[a, ], 0))
    hi <- ifelse(alone, sens$total, Inf)
    for (s in which(sens$sensitive & supp & !alone)) {
      r <- lp_range(sens, supp, lo, hi, s)
      v <- sens$total[s]
      need_lo <- max(v - level[s], lo[s], 0)
      need_hi <- v + level[s]
      ok <- r[2] >= need_hi - tol(v) && r[1] <= need_lo + tol(v) && r[2] - r[1] > tol(v)
      if (!ok) out[[length(out) + 1]] <- data.frame(key = paste(fc$ids[a], s, sep = "|"),
                                                    lower = r[1], upper = r[2])
    }
  }
  if (length(out)) do.call(rbind, out) else data.frame(key = character(), lower = numeric(), upper = numeric())
}

# The breaches an audit reports, keyed as reference_breaches() keys them.
audit_breaches <- function(a, sens) {
  b <- attr(a, "breaches")
  row <- match(paste(b$r, b$c), paste(sens$r, sens$c))
  data.frame(key = paste(b$respondent, row, sep = "|"), lower = b$lower, upper = b$upper)
}

# Protection levels of every cell, as the audit requires them.
audit_levels <- function(sens) {
  a <- audit_table(sens, sens$sensitive, attacker = "outsider")
  lev <- numeric(nrow(sens))
  row <- match(paste(a$r, a$c), paste(sens$r, sens$c))
  lev[row] <- ifelse(is.na(a$protection), 0, a$protection)
  lev
}

singleton_firms <- function() {
  data.frame(firm = c(1, 2, 3, 4, 5, 6:8, 9:11, 12:14),
             r = c("a", "a", "a", "a", "a", rep("b", 9)),
             c = c("X", "Y", "Z", "Z", "Z", rep(c("X", "Y", "Z"), each = 3)),
             v = c(50, 40, 30, 30, 30, rep(20, 9)))
}

test_that("a singleton breaks a pattern the outsider audit accepts, and protect_table() returns a stronger one", {
  d <- singleton_firms()
  sens <- cell_sensitivity(d, c("r", "c"), "v", list(rule_frequency(2), rule_p(10)), contributor = "firm")
  expect_equal(sum(sens$sensitive), 2)
  at <- function(a, b) which(sens$r == a & sens$c == b)
  supp <- logical(nrow(sens))
  supp[c(at("a", "X"), at("a", "Y"), at("b", "X"), at("b", "Y"))] <- TRUE
  outsider <- audit_table(sens, supp, attacker = "outsider")
  expect_true(attr(outsider, "passed"))
  a <- audit_table(sens, supp)
  expect_false(attr(a, "passed"))
  b <- attr(a, "breaches")
  # firm 1 alone in a x X knows a x Y exactly (and firm 2 the other way)
  expect_setequal(paste(b$respondent, b$c), c("1 Y", "2 X"))
  expect_equal(b$lower, b$upper)
  expect_equal(b$lower[b$respondent == "1"], 40)
  expect_false(any(a$protected[a$sensitive]))
  expect_output(print(a), "Breaches by respondent")
  expect_output(print(summary(a)), "2 \\(respondent, cell\\) pairs break")
  # the old pattern of protect_table() fails; the new one passes both audits
  old <- protect_table(sens, attacker = "outsider")
  new <- protect_table(sens)
  expect_false(attr(audit_table(sens, old$status != "published"), "passed"))
  pa <- audit_table(sens, new$status != "published")
  expect_true(attr(pa, "passed"))
  expect_equal(nrow(attr(pa, "breaches")), 0)
  expect_gt(sum(new$status != "published"), sum(old$status != "published"))
  expect_equal(attr(new, "stats")$attacker, "respondents")
  expect_match(new$reason[new$status == "secondary"], "against respondent", all = FALSE)
  # the independent program agrees on both patterns
  lev <- audit_levels(sens)
  expect_equal(nrow(reference_breaches(d, sens, new$status != "published", lev)), 0)
  expect_setequal(reference_breaches(d, sens, supp, lev)$key, audit_breaches(a, sens)$key)
})

test_that("respondent breaches and their intervals match an independent program (random tables, contributors across cells)", {
  checked <- 0
  for (seed in 1:30) {
    d <- respondent_firms(seed)
    sens <- cell_sensitivity(d, c("r", "c"), "v", list(rule_frequency(3), rule_p(20)), contributor = "firm")
    if (!any(sens$sensitive)) next
    lev <- audit_levels(sens)
    out <- protect_table(sens, attacker = "outsider", cost = "cells")
    patterns <- list(out$status != "published")
    set.seed(100 + seed)
    patterns[[2]] <- patterns[[1]] | runif(nrow(sens)) < 0.3
    for (supp in patterns) {
      for (zero in c("ignore", "count")) {
        a <- audit_table(sens, supp, zero_contributions = zero)
        ref <- reference_breaches(d, sens, supp, lev, zero)
        got <- audit_breaches(a, sens)
        info <- paste("seed", seed, "zero", zero)
        expect_setequal(got$key, ref$key)
        m <- match(ref$key, got$key)
        expect_equal(got$lower[m], ref$lower, tolerance = 1e-6, info = info)
        expect_equal(got$upper[m], ref$upper, tolerance = 1e-6, info = info)
        expect_equal(attr(a, "passed"), attr(audit_table(sens, supp, attacker = "outsider"), "passed") &&
                       nrow(ref) == 0, info = info)
        # protection decided, not measured (witness tables moved and combined
        # to keep each respondent's knowledge, shared_witnesses()): the same
        # breaching pairs
        a_none <- audit_table(sens, supp, zero_contributions = zero, intervals = "none")
        expect_setequal(audit_breaches(a_none, sens)$key, ref$key)
        checked <- checked + nrow(ref)
      }
      # protect_table()'s pattern withstands every firm, by the independent program
    }
    for (zero in c("ignore", "count")) {
      p <- protect_table(sens, cost = "cells", zero_contributions = zero)
      expect_equal(nrow(reference_breaches(d, sens, p$status != "published", lev, zero)), 0,
                   info = paste("seed", seed, zero))
    }
  }
  # the grid must contain breaches for the comparison to mean anything
  expect_gt(checked, 5)
})

test_that("zero contributions: ignored, a respondent with only zero co-contributors knows the cell; counted, it does not", {
  d <- singleton_firms()
  # firm 15 contributes 0 next to firm 1 in a x X
  d <- rbind(d, data.frame(firm = 15, r = "a", c = "X", v = 0))
  sens <- cell_sensitivity(d, c("r", "c"), "v", list(rule_frequency(3), rule_p(10)), contributor = "firm")
  at <- function(a, b) which(sens$r == a & sens$c == b)
  supp <- logical(nrow(sens))
  supp[c(at("a", "X"), at("a", "Y"), at("b", "X"), at("b", "Y"))] <- TRUE
  ign <- audit_table(sens, supp)
  cnt <- audit_table(sens, supp, zero_contributions = "count")
  b_ign <- attr(ign, "breaches")
  b_cnt <- attr(cnt, "breaches")
  # ignored: firm 1 knows a x X = 50 and so a x Y = 40; counted: firm 1
  # only knows a x X >= 50, so a x Y <= 40 (its upper side breaks) but not
  # exactly
  f1_ign <- b_ign[b_ign$respondent == "1", ]
  f1_cnt <- b_cnt[b_cnt$respondent == "1", ]
  expect_equal(c(f1_ign$lower, f1_ign$upper), c(40, 40))
  expect_equal(f1_cnt$upper, 40)
  expect_lt(f1_cnt$lower, 40)
  # firm 2, alone in a x Y, breaks a x X either way
  expect_true("2" %in% b_cnt$respondent)
  lev <- audit_levels(sens)
  for (z in c("ignore", "count")) {
    a <- if (z == "ignore") ign else cnt
    expect_setequal(audit_breaches(a, sens)$key, reference_breaches(d, sens, supp, lev, z)$key)
  }
  expect_error(audit_table(sens, supp, zero_contributions = "maybe"), class = "sdcRisk_error_argument")
})

test_that("frequency table: a person alone in a cell knows it is 1", {
  d <- data.frame(r = c("a", "a", "a", "a", "b", "b", "b", "b", "b", "b"),
                  c = c("X", "Y", "Z", "Z", "X", "X", "Y", "Y", "Z", "Z"))
  d$one <- 1
  sens <- cell_sensitivity(d, c("r", "c"), "one", rule_frequency(2))
  at <- function(a, b) which(sens$r == a & sens$c == b)
  supp <- logical(nrow(sens))
  supp[c(at("a", "X"), at("a", "Y"), at("b", "X"), at("b", "Y"))] <- TRUE
  expect_true(attr(audit_table(sens, supp, attacker = "outsider", freq_protection = 50), "passed"))
  a <- audit_table(sens, supp, freq_protection = 50)
  expect_false(attr(a, "passed"))
  b <- attr(a, "breaches")
  # record 1 (alone in a x X) knows a x Y = 1, record 2 the other way
  expect_setequal(paste(b$respondent, b$c), c("1 Y", "2 X"))
  expect_equal(b$lower, c(1, 1))
  p <- protect_table(sens, cost = "cells", freq_protection = 50)
  expect_true(attr(audit_table(sens, p$status != "published", freq_protection = 50), "passed"))
  d$id <- seq_len(nrow(d))
  lev <- ifelse(sens$sensitive, 0.5 * sens$total, 0)
  expect_equal(nrow(reference_breaches(transform(d, v = one), sens, p$status != "published", lev,
                                       firm = "id")), 0)
})

test_that("a contributor knows its contributions to every cell of its records", {
  # firm 1 has records in a x X and b x Y, and is alone in neither; with
  # the records numbered apart, no record is alone anywhere
  d <- data.frame(firm = c(1, 2, 3, 1, 4, 5, 6, 7, 8, 9),
                  r = c("a", "a", "a", "b", "b", "b", "a", "b", "a", "b"),
                  c = c("X", "X", "Y", "Y", "Y", "X", "Z", "Z", "Z", "Z"),
                  v = c(60, 5, 3, 70, 4, 2, 30, 30, 40, 40))
  sens <- cell_sensitivity(d, c("r", "c"), "v", rule_p(30), contributor = "firm")
  lev <- audit_levels(sens)
  p_out <- protect_table(sens, attacker = "outsider", cost = "cells")
  supp <- p_out$status != "published"
  a <- audit_table(sens, supp)
  expect_setequal(audit_breaches(a, sens)$key, reference_breaches(d, sens, supp, lev)$key)
  # the same records without `contributor`: each record its own respondent
  sens_r <- cell_sensitivity(d, c("r", "c"), "v", rule_p(30))
  d$rec <- as.character(seq_len(nrow(d)))
  a_r <- audit_table(sens_r, supp)
  expect_setequal(audit_breaches(a_r, sens_r)$key, reference_breaches(d, sens_r, supp, lev, firm = "rec")$key)
  p <- protect_table(sens)
  expect_equal(nrow(reference_breaches(d, sens, p$status != "published", lev)), 0)
})

test_that("the rows of a set of cells are those of the index by cell, whatever the cells", {
  set.seed(11)
  d <- data.frame(firm = sample(1:15, 60, TRUE), r = sample(c("a", "b", "c"), 60, TRUE),
                  c = sample(c("X", "Y"), 60, TRUE), v = round(rlnorm(60, 3, 1)))
  sens <- cell_sensitivity(d, c("r", "c"), "v", rule_p(20), contributor = "firm")
  resp <- table_respondents(sens, table_problem(sens, NULL, NULL, 10), "respondents", "ignore")
  n <- nrow(sens)
  for (cells in list(integer(), 1L, n, seq_len(n), c(n, 2L, 5L), sample(n, 4))) {
    got <- cell_rows(resp, cells)
    expect_false(anyDuplicated(got) > 0)
    expect_setequal(got, which(resp$cell %in% cells))
  }
  # every row of a cell comes together, cell by cell in the order asked
  got <- cell_rows(resp, c(n, 1L))
  expect_equal(resp$cell[got], sort(resp$cell[got], decreasing = TRUE))
  # the extremes of the contributors' knowledge of each cell, asked for in
  # parts (computed once, kept), against every row's knowledge
  prep <- table_problem(sens, NULL, NULL, 10)
  k <- knowledge_rows(resp, prep, seq_along(resp$cell))
  part <- c(3L, n, 1L)
  first <- cell_knowledge(resp, prep, part)
  all <- cell_knowledge(resp, prep, seq_len(n))
  expect_equal(first, lapply(all, `[`, part))
  for (c in seq_len(n)) {
    mine <- k$cells == c
    expect_equal(all$lo[c], if (any(mine)) max(k$lo[mine]) else -Inf)
    expect_equal(all$hi[c], if (any(mine)) min(k$hi[mine]) else Inf)
  }
  # new a priori bounds: the memo starts again
  prep2 <- prep
  prep2$upper <- prep$value * 3
  k2 <- knowledge_rows(resp, prep2, seq_along(resp$cell))
  expect_equal(cell_knowledge(resp, prep2, 1L)$hi, min(k2$hi[k2$cells == 1L]))
})

test_that("coalitions of an (n, k) rule are attackers", {
  set.seed(4)
  d <- data.frame(firm = 1:24, r = rep(c("a", "b"), each = 12), c = rep(c("X", "Y", "Z"), 8),
                  v = round(rlnorm(24, 3, 1)))
  d$v[1] <- 500
  sens <- cell_sensitivity(d, c("r", "c"), "v", rule_nk(3, 80), contributor = "firm")
  resp <- table_respondents(sens, table_problem(sens, NULL, NULL, 10), "respondents", "ignore")
  coal <- resp$coalitions
  cell <- which(sens$sensitive & sens$n_contributors >= 3)[1]
  rows <- d$r == sens$r[cell] | sens$r[cell] == "Total"
  rows <- rows & (d$c == sens$c[cell] | sens$c[cell] == "Total")
  top <- d$firm[rows][order(-d$v[rows])][2:3]
  expect_true(any(vapply(coal, function(g) setequal(resp$labels[g], as.character(top)), logical(1))))
  p <- protect_table(sens)
  expect_true(attr(audit_table(sens, p$status != "published"), "passed"))
})

test_that("the suspect sets of a PTN rule with ns = 2 are coalitions, by record and by contributor", {
  set.seed(4)
  d <- data.frame(firm = sample(paste0("f", 1:8), 40, TRUE), r = rep(c("a", "b"), each = 20),
                  c = rep(c("X", "Y", "Z", "W"), 10), v = round(rlnorm(40, 3, 1)))
  for (by in list(NULL, "firm")) {
    sens <- cell_sensitivity(d, c("r", "c"), "v", rule_ptn(pt = 10, noise = 0, ns = 2), contributor = by)
    resp <- table_respondents(sens, table_problem(sens, NULL, NULL, 10), "respondents", "ignore")
    suspects <- unique(lapply(strsplit(sens$suspect_ptn[sens$sensitive_ptn], ", ", fixed = TRUE), sort))
    suspects <- suspects[lengths(suspects) >= 2]
    expect_gt(length(suspects), 0)
    # every coalition is a suspect set, and every suspect set a coalition
    coal <- lapply(resp$coalitions, function(g) sort(resp$labels[g]))
    expect_setequal(vapply(coal, paste, "", collapse = ","), vapply(suspects, paste, "", collapse = ","))
    expect_equal(resp$labels[resp$n_single + seq_along(coal)],
                 vapply(resp$coalitions, function(g) paste(resp$labels[g], collapse = " + "), ""))
    # each member's rows are its contributions
    inc <- attr(sens, "contributions")
    for (g in resp$coalitions[1:2]) {
      rows <- contributor_rows(resp, g)
      expect_setequal(unique(resp$who[rows]), g)
      expect_equal(sum(resp$x[rows]), sum(inc$x[resp$who %in% g]))
    }
    p <- protect_table(sens)
    expect_true(attr(audit_table(sens, p$status != "published"), "passed"))
  }
})

test_that("bad input: contributor with NA, tables without contributions, linked ids, no sensitive cell", {
  d <- singleton_firms()
  d$firm[3] <- NA
  expect_error(cell_sensitivity(d, c("r", "c"), "v", rule_p(10), contributor = "firm"),
               class = "sdcRisk_error_missing_value")
  d <- singleton_firms()
  sens <- cell_sensitivity(d, c("r", "c"), "v", rule_p(10), contributor = "firm")
  # a reordered table no longer carries its contributions
  shuffled <- sens[rev(seq_len(nrow(sens))), ]
  expect_error(audit_table(shuffled, shuffled$sensitive), class = "sdcRisk_error_no_contributions")
  expect_error(protect_table(shuffled), class = "sdcRisk_error_no_contributions")
  expect_no_error(audit_table(shuffled, shuffled$sensitive, attacker = "outsider"))
  # edited contributions disagree with the totals
  broken <- sens
  attr(broken, "contributions")$x[1] <- attr(broken, "contributions")$x[1] + 1
  expect_error(audit_table(broken, broken$sensitive), class = "sdcRisk_error_invalid_object")
  # bounds stored as one number each (no bound known): another length, or
  # NA, is broken too
  inc <- attr(sens, "contributions")
  expect_length(inc$lower, 1)
  for (bad in list(c(-Inf, 0), NA_real_, numeric())) {
    edited <- sens
    attr(edited, "contributions")$lower <- bad
    expect_error(audit_table(edited, edited$sensitive), class = "sdcRisk_error_invalid_object")
  }
  # contributor codes that are not whole, or beyond the rows (a code of
  # 10^12 must not allocate a table that large)
  for (bad in c(1.5, 1e12, length(inc$cell) + 1)) {
    edited <- sens
    attr(edited, "contributions")$contributor[2] <- bad
    expect_error(audit_table(edited, edited$sensitive), class = "sdcRisk_error_invalid_object")
    expect_error(protect_table(edited), class = "sdcRisk_error_invalid_object")
  }
  # cells, codes and contributions checked by their least and largest values:
  # NA, NaN, 0, beyond the table or infinite anywhere is broken
  edits <- list(cell = list(NA_integer_, 0L, nrow(sens) + 1L), contributor = list(NA_integer_, 0L, -1L),
                x = list(NA_real_, NaN, Inf, -Inf))
  for (field in names(edits)) {
    for (bad in edits[[field]]) {
      edited <- sens
      v <- attr(edited, "contributions")[[field]]
      v[length(v)] <- bad
      attr(edited, "contributions")[[field]] <- v
      expect_error(audit_table(edited, edited$sensitive), class = "sdcRisk_error_invalid_object",
                   info = paste(field, bad))
    }
  }
  # the contributors' index: numbered by first row, rows by contributor in
  # the rows' order (order() of each row's contributor)
  ns <- asNamespace("sdcRisk")
  resp <- ns$table_respondents(sens, ns$table_problem(sens, NULL, NULL, 10), "respondents", "ignore")
  expect_identical(resp$ord, order(resp$who))
  expect_identical(resp$start, c(0L, cumsum(tabulate(resp$who, resp$n_single))))
  expect_identical(resp$who, match(inc$contributor, unique(inc$contributor)))
  # the rows counted in each cell: without the zero rows unless they count
  dz <- d
  dz$v[c(2, 7)] <- 0
  sz <- cell_sensitivity(dz, c("r", "c"), "v", rule_p(10), contributor = "firm")
  iz <- attr(sz, "contributions")
  expect_true(any(iz$zero))
  for (zc in c("ignore", "count")) {
    rz <- ns$table_respondents(sz, ns$table_problem(sz, NULL, NULL, 10), "respondents", zc)
    expect_identical(rz$n_counted, tabulate(iz$cell[if (zc == "ignore") !iz$zero else TRUE], nrow(sz)))
  }
  # a table with no sensitive cell passes, with nothing to attack
  safe <- cell_sensitivity(d, c("r", "c"), "v", rule_frequency(1), contributor = "firm")
  expect_false(any(safe$sensitive))
  a <- audit_table(safe, safe$sensitive)
  expect_true(attr(a, "passed"))
  expect_equal(nrow(attr(a, "breaches")), 0)
  expect_true(all(protect_table(safe)$status == "published"))
  # negative contributions: zero is a contributor's records all 0, not a
  # net 0 of records that cancel
  dn <- data.frame(firm = c(1, 2, 2, 3, 4, 5, 6, 7), r = c("a", "a", "a", "a", "b", "b", "b", "b"),
                   c = c("X", "X", "X", "Y", "X", "X", "Y", "Y"), v = c(10, 5, -5, 7, 3, 4, 5, 6))
  sn <- cell_sensitivity(dn, c("r", "c"), "v", list(rule_frequency(3), rule_zero()),
                         contributor = "firm", negative = "abs")
  inc <- attr(sn, "contributions")
  net0 <- inc$contributor == match("2", inc$ids) & inc$x == 0
  expect_true(any(net0))
  expect_false(any(inc$zero[net0]))
  pn <- protect_table(sn, lower = -Inf, cost = "cells")
  expect_true(attr(audit_table(sn, pn$status != "published", lower = -Inf), "passed"))
})

test_that("linked tables: contributors span the tables; ids that disagree are an error", {
  set.seed(7)
  d <- data.frame(firm = sprintf("f%d", 1:30), a = sample(c("p", "q"), 30, TRUE),
                  b = sample(c("x", "y", "z"), 30, TRUE), s = sample(c("S", "L"), 30, TRUE),
                  v = round(rlnorm(30, 3, 1.3)))
  t1 <- cell_sensitivity(d, c("a", "b"), "v", list(rule_frequency(3), rule_p(15)), contributor = "firm")
  t2 <- cell_sensitivity(d, c("a", "s"), "v", list(rule_frequency(3), rule_p(15)), contributor = "firm")
  p <- protect_tables(list(t1, t2), cost = "cells")
  a <- audit_tables(list(t1, t2), lapply(p, function(x) x$status != "published"))
  expect_true(attr(a, "passed"))
  t3 <- cell_sensitivity(d, c("a", "s"), "v", list(rule_frequency(3), rule_p(15)))
  expect_error(protect_tables(list(t1, t3)), class = "sdcRisk_error_linked_contributors")
  d2 <- d
  d2$firm <- d$firm[c(2:30, 1)]
  t4 <- cell_sensitivity(d2, c("a", "s"), "v", list(rule_frequency(3), rule_p(15)), contributor = "firm")
  expect_error(audit_tables(list(t1, t4), list(t1$sensitive, t4$sensitive)),
               class = "sdcRisk_error_linked_contributors")
  expect_no_error(audit_tables(list(t1, t4), list(t1$sensitive, t4$sensitive), attacker = "outsider"))
})

test_that("the clean-up after the respondent rounds never leaves a breach and only publishes (random tables)", {
  published <- 0
  rounds <- 0
  for (seed in 1:6) {
    d <- respondent_firms(seed, n = 80, nr = 3, nc = 6, firms = 12)
    sens <- cell_sensitivity(d, c("r", "c"), "v", list(rule_frequency(3), rule_p(20)), contributor = "firm")
    if (!any(sens$sensitive)) next
    lev <- audit_levels(sens)
    for (zero in c("ignore", "count")) {
      info <- paste("seed", seed, zero)
      lean <- protect_table(sens, zero_contributions = zero)
      full <- withr::with_options(list(sdcRisk.respondent_cleanup = FALSE),
                                  protect_table(sens, zero_contributions = zero))
      s_lean <- lean$status != "published"
      s_full <- full$status != "published"
      # the clean-up only publishes: the lean pattern is a subset of the other
      expect_true(all(s_full[s_lean]), info = info)
      expect_lte(sum(abs(sens$total[s_lean])), sum(abs(sens$total[s_full])))
      # both audits pass, and the independent program finds no breach
      expect_true(attr(audit_table(sens, s_lean, zero_contributions = zero), "passed"), info = info)
      expect_true(attr(audit_table(sens, s_lean, attacker = "outsider"), "passed"), info = info)
      expect_equal(nrow(reference_breaches(d, sens, s_lean, lev, zero)), 0, info = info)
      published <- published + sum(s_full) - sum(s_lean)
      rounds <- rounds + (attr(full, "stats")$respondent_rounds > 0)
    }
  }
  # the grid must make the clean-up publish for the test to mean anything
  expect_gt(rounds, 2)
  expect_gt(published, 2)
})

test_that("cleanup = FALSE keeps the respondents' witnesses", {
  d <- respondent_firms(6, n = 80, nr = 3, nc = 6, firms = 12)
  sens <- cell_sensitivity(d, c("r", "c"), "v", list(rule_frequency(3), rule_p(20)), contributor = "firm")
  a <- protect_table(sens, cleanup = FALSE)
  b <- withr::with_options(list(sdcRisk.respondent_cleanup = FALSE), protect_table(sens, cleanup = FALSE))
  expect_identical(a$status, b$status)
  # (with the clean-up, this table's pattern is smaller: see the test above)
  expect_lt(sum(protect_table(sens)$status != "published"), sum(a$status != "published"))
  expect_true(attr(audit_table(sens, a$status != "published"), "passed"))
})

# The bench's real tables (bench/bench_suppress.R, make_acs()): personal
# income of the people with a positive income in the first eight PUMAs of
# the national ACS excerpt (tests/testthat/fixtures/acs2019), p% rule
# p = 10, records as contributors. R1: sex x age group x race group (72
# cells), R2: age group x race group x education group (95 cells).
acs_bench_table <- function(dims) {
  d <- load_acs("national2019", values = TRUE)
  d <- d[!is.na(d$PINCP) & d$PINCP > 0, ]
  d <- d[d$PUMA %in% unique(d$PUMA)[1:8], ]
  d <- data.frame(sex = paste0("s", d$SEX),
                  age = as.character(cut(d$AGEP, c(0, 30, 45, 60, 200), labels = c("a15", "a30", "a45", "a60"))),
                  race = paste0("r", pmin(d$RAC1P, 4)), edu = paste0("e", pmin(d$EDU, 8) %/% 3),
                  v = d$PINCP)
  cell_sensitivity(d, dims, "v", rule_p(10))
}

test_that("on a real table protect_table() suppresses no more than GaussSuppression's interval pattern", {
  dims <- c("sex", "age", "race")
  sens <- acs_bench_table(dims)
  expect_equal(nrow(sens), 72)
  g <- gauss_fixture_pattern(sens, "R1", dims)
  expect_equal(sum(g), 20)
  # the fixture is what it is: it protects every sensitive cell from the
  # outsider and from every respondent
  expect_true(attr(audit_table(sens, g, attacker = "outsider"), "passed"))
  expect_true(attr(audit_table(sens, g), "passed"))
  p <- protect_table(sens)
  s <- p$status != "published"
  expect_lte(sum(abs(sens$total[s])), sum(abs(sens$total[g])))
  expect_true(attr(audit_table(sens, s), "passed"))
  expect_true(attr(audit_table(sens, s, attacker = "outsider"), "passed"))
})

test_that("GaussSuppression's interval pattern of a real table can fail the respondent audit", {
  # R2: the pattern protects every sensitive cell from the outsider, but
  # a respondent narrows one below its protection; protect_table()'s
  # outsider pattern costs less, its default (safe from both) more
  dims <- c("age", "race", "edu")
  sens <- acs_bench_table(dims)
  g <- gauss_fixture_pattern(sens, "R2", dims)
  expect_equal(sum(g), 41)
  expect_true(attr(audit_table(sens, g, attacker = "outsider"), "passed"))
  a <- audit_table(sens, g)
  expect_false(attr(a, "passed"))
  br <- attr(a, "breaches")
  expect_gt(nrow(br), 0)
  expect_true(all(br$lower > br$required_lower | br$upper < br$required_upper))
  out <- protect_table(sens, attacker = "outsider")
  s <- out$status != "published"
  expect_lte(sum(abs(sens$total[s])), sum(abs(sens$total[g])))
  expect_true(attr(audit_table(sens, s, attacker = "outsider"), "passed"))
})

# Two tables of the bench's sweep where the forward heuristic alone
# suppressed more value than GaussSuppression's interval pattern (1.099 and
# 1.083 times; fixtures/gauss/acs_sweep_intervals.csv, made by
# data-raw/gauss-sweep-fixtures.R): against the outsider, the backward
# pattern (W17) and the pair swaps (W14) now suppress less.
test_that("against the outsider, protect_table() suppresses no more than GaussSuppression on the sweep's two hard tables", {
  for (id in c("W17", "W14")) {
    tb <- acs_sweep_table(id)
    sens <- tb$sens
    expect_equal(nrow(sens), c(W17 = 628, W14 = 218)[[id]])
    g <- gauss_fixture_pattern(sens, id, tb$dims, "acs_sweep_intervals.csv")
    expect_equal(sum(g), c(W17 = 254, W14 = 69)[[id]])
    expect_true(all(g[sens$sensitive]))
    expect_true(attr(audit_table(sens, g, attacker = "outsider"), "passed"))
    p <- protect_table(sens, attacker = "outsider")
    s <- p$status != "published"
    expect_lt(sum(abs(sens$total[s])), sum(abs(sens$total[g])))
    expect_true(attr(audit_table(sens, s, attacker = "outsider"), "passed"))
    st <- attr(p, "stats")
    expect_identical(st$start, c(W17 = "backward", W14 = "forward")[[id]])
    # the forward pattern alone (its clean-up's pair swaps included)
    # costs more on W17
    q <- withr::with_options(list(sdcRisk.backward = FALSE), protect_table(sens, attacker = "outsider"))
    expect_identical(attr(q, "stats")$start, "forward")
    if (id == "W17") expect_gt(lost(q), sum(abs(sens$total[g])))
  }
})

# Random tables with firms across cells, each with a random pattern: the
# problem, its respondents and the pattern, for the tests of the clean-up's
# trials (NULL for a table without a sensitive cell).
trial_setup <- function(seed) {
  d <- respondent_firms(seed, n = 40, nr = 3, nc = 4, firms = 25)
  sens <- cell_sensitivity(d, c("r", "c"), "v", list(rule_frequency(3), rule_p(20)), contributor = "firm")
  if (!any(sens$sensitive)) return(NULL)
  prep <- sdcRisk:::table_problem(sens, NULL, NULL, 10, arg = "x")
  set.seed(seed)
  list(sens = sens, prep = prep, resp = sdcRisk:::table_respondents(sens, prep, "respondents", "ignore"),
       supp = sens$sensitive | runif(nrow(sens)) < 0.5)
}

# f(ts, j, trial, info) for every trial of the clean-up (the pattern of
# trial_setup() without secondary cell j) of every table of `seeds`.
for_each_trial <- function(seeds, f) {
  for (seed in seeds) {
    ts <- trial_setup(seed)
    if (is.null(ts)) next
    for (j in which(ts$supp & !ts$sens$sensitive)) {
      f(ts, j, replace(ts$supp, j, FALSE), paste("seed", seed, "cell", j))
    }
  }
}

# The outsider's exact intervals of pattern p, over all cells (NA for
# published ones).
exact_outer <- function(prep, p) {
  all_s <- which(p)
  o <- sdcRisk:::audit_cells(prep, p, all_s, exact = TRUE, call = NULL)
  out <- list(lower = rep(NA_real_, length(p)), upper = rep(NA_real_, length(p)))
  out$lower[all_s] <- o$lower
  out$upper[all_s] <- o$upper
  out
}

test_that("the audit's pool keeps the newest tables whose values fit, and nothing with the option off", {
  ns <- asNamespace("sdcRisk")
  cap <- ns$audit_pool_values
  # a solver of 10 cells whose own tables are 2/5 of the pool each
  per <- cap / 25
  solver_of <- function(round) {
    list(vars = 1:10, solver = list(own_tables = function() {
      lapply(seq_len(per), function(k) as.double(1:10 + round * 1e6 + k))
    }))
  }
  prep <- list(lp_cache = new.env(parent = emptyenv()), value = as.double(1:10))
  for (round in 1:4) {
    assign("1", solver_of(round), envir = prep$lp_cache)
    ns$reset_lp_cache(prep)
    expect_identical(ls(prep$lp_cache), character())
  }
  pool <- prep$lp_cache$.pool
  x <- lapply(pool, `[[`, "x")
  expect_identical(sum(lengths(x)), as.integer(cap))
  # rounds 3 and 4 whole, the newest half of round 2
  expect_length(pool, 3)
  expect_identical(ncol(x[[1]]), as.integer(per / 2))
  expect_identical(x[[1]][, 1], as.double(1:10 + 2e6 + per / 2 + 1))
  expect_identical(x[[3]][, per], as.double(1:10 + 4e6 + per))
  withr::local_options(sdcRisk.audit_pool = FALSE)
  assign("1", solver_of(5), envir = prep$lp_cache)
  ns$reset_lp_cache(prep)
  expect_null(prep$lp_cache$.pool)
})

test_that("the tables of an earlier pattern's programs serve a later pattern's only as its tables: same verdict, fewer programs", {
  ns <- asNamespace("sdcRisk")
  saved <- 0
  handed <- 0
  broke <- 0
  for (seed in 1:30) {
    ts <- trial_setup(seed)
    if (is.null(ts)) next
    for (j in which(ts$supp & !ts$sens$sensitive)) {
      p <- replace(ts$supp, j, FALSE)
      s_p <- which(p & ts$prep$sensitive)
      if (!length(s_p)) next
      info <- paste("seed", seed, "cell", j)
      # the pattern with j audited first: its programs' tables pooled when
      # the cache is emptied for the trial
      pooled <- ts$prep
      pooled$lp_cache <- new.env(parent = emptyenv())
      ns$audit_cells(pooled, ts$supp, which(ts$supp), exact = TRUE, call = NULL)
      ns$reset_lp_cache(pooled)
      # every table the pool hands a component of the trial is a table of
      # its program: every relation kept, within its bounds
      sp <- ns$suppressed_components(pooled, p, NULL)
      for (cc in unique(sp$comp[s_p])) {
        trip <- sp$trip_by_comp[[as.character(cc)]]
        if (is.null(trip)) next
        lp <- ns$suppressed_lp(sp, pooled, sp$supp_by_comp[[as.character(cc)]], trip)
        for (x in ns$pooled_tables(pooled, lp)) {
          handed <- handed + 1
          resid <- rowsum(lp$mat$v * x[lp$mat$j], factor(lp$mat$i, seq_len(lp$mat$nrow)))[, 1] - lp$rhs
          expect_true(all(abs(resid) <= 1e-6 * (1 + abs(lp$rhs))), info = info)
          tol <- pooled$tol[lp$vars]
          expect_true(all(x >= lp$lower - tol & x <= lp$upper + tol), info = info)
        }
      }
      # the trial's test with them and without: the same verdict as the
      # exact intervals', inner bounds of them, no more programs
      outer <- withr::with_options(list(sdcRisk.audit_pool = FALSE), exact_outer(ts$prep, p))
      verdict <- all(ns$protection_met(pooled, s_p, outer$lower[s_p], outer$upper[s_p]))
      a <- ns$audit_cells(pooled, p, s_p, exact = FALSE, call = NULL)
      plain <- ts$prep
      plain$lp_cache <- new.env(parent = emptyenv())
      b <- withr::with_options(list(sdcRisk.audit_pool = FALSE), ns$audit_cells(plain, p, s_p, exact = FALSE, call = NULL))
      tol <- pooled$tol[s_p]
      expect_true(all(a$lower >= outer$lower[s_p] - tol & a$upper <= outer$upper[s_p] + tol), info = info)
      expect_identical(all(ns$protection_met(pooled, s_p, a$lower, a$upper)), verdict, info = info)
      expect_identical(all(ns$protection_met(plain, s_p, b$lower, b$upper)), verdict, info = info)
      expect_lte(a$n_lp, b$n_lp)
      saved <- saved + (a$n_lp < b$n_lp)
      broke <- broke + !verdict
    }
  }
  # the pool must hand tables and save programs, and some trials fail,
  # for the comparison to mean anything
  expect_gt(handed, 10)
  expect_gt(saved, 3)
  expect_gt(broke, 3)
})

# trial_setup(seed) with a solver cache, which the outsider's exact audit
# of its pattern p fills (each component's solver, with the optimal tables
# of its programs); NULL when the table has no sensitive cell.
audited_setup <- function(seed) {
  ts <- trial_setup(seed)
  if (is.null(ts)) return(NULL)
  ts$prep$lp_cache <- new.env(parent = emptyenv())
  sdcRisk:::audit_cells(ts$prep, ts$supp, which(ts$supp), exact = TRUE, call = NULL)
  ts
}

# The programs of the components of pattern p that have relations.
component_programs <- function(prep, p) {
  ns <- asNamespace("sdcRisk")
  sp <- ns$suppressed_components(prep, p, NULL)
  out <- list()
  for (cc in unique(sp$comp[which(p)])) {
    trip <- sp$trip_by_comp[[as.character(cc)]]
    if (!is.null(trip)) out[[length(out) + 1L]] <- ns$suppressed_lp(sp, prep, sp$supp_by_comp[[as.character(cc)]], trip)
  }
  out
}

test_that("combinations of a component's earlier tables within a respondent's knowledge are tables of its program", {
  ns <- asNamespace("sdcRisk")
  beyond <- 0
  cases <- 0
  for (seed in 1:40) {
    ts <- audited_setup(seed)
    if (is.null(ts)) next
    prep <- ts$prep
    for (lp in component_programs(prep, ts$supp)) {
      cc <- lp$vars[1]
      solver <- ns$cached_solver(lp, prep)
      if (is.null(solver) || length(lp$vars) < 3) next
      set.seed(seed * 100 + cc)
      for (rep in 1:4) {
        # a respondent who knows one to three of the cells: exactly, or
        # within part of their exact interval around the value
        known <- sample(seq_along(lp$vars), sample(1:min(3, length(lp$vars) - 1), 1))
        v <- prep$value[lp$vars]
        kp <- lp
        exact_k <- runif(length(known)) < 0.6
        kp$lower[known] <- ifelse(exact_k, v[known], v[known] - runif(length(known)) * abs(v[known]) / 4)
        kp$upper[known] <- ifelse(exact_k, v[known], v[known] + runif(length(known)) * abs(v[known]) / 4)
        pos <- setdiff(seq_along(lp$vars), known)
        n <- length(pos)
        cx <- ns$combined_extremes(solver, kp, prep, pos, rep(Inf, n), rep(-Inf, n), v[pos], v[pos], NULL)
        sx <- ns$shared_extremes(solver, kp, prep, pos, rep(Inf, n), rep(-Inf, n), NULL)
        info <- paste("seed", seed, "component", cc, "rep", rep)
        for (k in seq_len(n)) {
          obj <- ns$unit_objective(kp, pos[k])
          hi <- ns$component_program(kp, obj, TRUE, lp$vars[pos[k]], NULL)$value
          lo <- ns$component_program(kp, obj, FALSE, lp$vars[pos[k]], NULL)$value
          tol <- prep$tol[lp$vars[pos[k]]]
          # never beyond the program's own extremes: each is a table of it
          expect_lte(cx$max[k], hi + tol)
          expect_gte(cx$min[k], lo - tol)
          # and never short of the single tables' (which the combinations
          # include, shrunk toward the published table)
          expect_gte(cx$max[k], min(sx$max[k], hi) - tol)
          expect_lte(cx$min[k], max(sx$min[k], lo) + tol)
          beyond <- beyond + (cx$max[k] > max(sx$max[k], v[pos[k]]) + tol) +
            (cx$min[k] < min(sx$min[k], v[pos[k]]) - tol)
          cases <- cases + 2
        }
      }
    }
  }
  # combinations must reach beyond the single tables often enough for the
  # comparison to mean anything
  expect_gt(cases, 100)
  expect_gt(beyond, 10)
})

test_that("attacking first the respondents near a published cell changes the order, not the verdict", {
  hops_bfs <- function(st, from, supp) {
    # cells x relations incidence, breadth first by hand
    inc <- matrix(FALSE, st$ncell, st$nrel)
    inc[cbind(st$cell, st$rel)] <- TRUE
    d <- rep(Inf, st$ncell)
    d[from] <- 0
    h <- 0
    front <- from
    while (length(front)) {
      h <- h + 1
      rels <- which(colSums(inc[front, , drop = FALSE]) > 0)
      nxt <- which(rowSums(inc[, rels, drop = FALSE]) > 0 & supp & is.infinite(d))
      d[nxt] <- h
      front <- nxt
    }
    d
  }
  checked <- 0
  for_each_trial(1:12, function(ts, j, trial, info) {
    prep <- ts$prep
    expect_identical(sdcRisk:::relation_hops(prep, j, trial), hops_bfs(prep$structure, j, trial))
    outer <- exact_outer(prep, trial)
    full <- sdcRisk:::respondent_breaches(prep, trial, ts$resp, outer, exact = FALSE, call = NULL)
    near <- sdcRisk:::respondent_breaches(prep, trial, ts$resp, outer, exact = FALSE, call = NULL,
                                          first = TRUE, near = j)
    expect_equal(nrow(near$breaches) > 0, nrow(full$breaches) > 0, info = info)
    expect_true(all(near$breaches$group %in% full$breaches$group), info = info)
    checked <<- checked + (nrow(full$breaches) > 0)
  })
  # some trials must break for the comparison to mean anything
  expect_gt(checked, 3)
})

test_that("the outsider's relation test of a trial in the core gives the R test's verdict", {
  ns <- asNamespace("sdcRisk")
  broke <- passed <- 0
  for_each_trial(1:25, function(ts, j, trial, info) {
    core <- ns$relation_breach(ts$prep, trial, j, NULL)
    in_r <- ns$relation_breach_in_r(ts$prep, trial, j, NULL)
    expect_identical(core, in_r, info = info)
    # (the neighbourhood of several cells)
    near <- c(j, which(ts$sens$sensitive)[1])
    expect_identical(ns$relation_breach(ts$prep, trial, near, NULL),
                     ns$relation_breach_in_r(ts$prep, trial, near, NULL), info = info)
    broke <<- broke + core
    passed <<- passed + !core
  })
  expect_gt(broke, 10)
  expect_gt(passed, 10)
})

test_that("the respondents' relation bounds report only real breaches (the clean-up's test before programs)", {
  caught <- 0
  for_each_trial(1:12, function(ts, j, trial, info) {
    prep <- ts$prep
    # (as in the clean-up, trials the outsider breaks never get here)
    now <- exact_outer(prep, trial)
    s_t <- which(trial & ts$sens$sensitive)
    if (!all(sdcRisk:::protection_met(prep, s_t, now$lower[s_t], now$upper[s_t]))) return()
    full <- sdcRisk:::respondent_breaches(prep, trial, ts$resp, now, exact = TRUE, call = NULL)
    # the clean-up's way: the intervals before the trial (wider), no
    # program; and the trial's own
    wide <- lapply(exact_outer(prep, ts$supp), replace, j, NA_real_)
    for (outer in list(wide, now)) {
      rel <- sdcRisk:::respondent_breaches(prep, trial, ts$resp, outer, exact = FALSE, call = NULL,
                                           relations_only = TRUE)
      expect_identical(rel$n_lp, 0L)
      # every pair it reports is a breach of the exact audit, and its
      # interval (an outer bound) contains the exact one
      key_rel <- paste(rel$breaches$group, rel$breaches$cell)
      key_full <- paste(full$breaches$group, full$breaches$cell)
      expect_true(all(key_rel %in% key_full), info = info)
      m <- match(key_rel, key_full)
      expect_true(all(rel$breaches$lower <= full$breaches$lower[m] + 1e-6), info = info)
      expect_true(all(rel$breaches$upper >= full$breaches$upper[m] - 1e-6), info = info)
    }
    caught <<- caught + (nrow(rel$breaches) > 0)
  })
  # the relation bounds must catch breaches for the test to mean anything
  expect_gt(caught, 3)
})

test_that("the respondents' relation bounds in the core give the breaches of one respondent at a time", {
  ns <- asNamespace("sdcRisk")
  one_by_one <- function(...) {
    withr::local_options(sdcRisk.relation_cases = FALSE)
    ns$respondent_breaches(...)
  }
  broke <- passed <- 0
  # the trials of the clean-up on random firm tables, and on tables whose
  # (n, k) rule makes coalitions (knowledge of several cells per group)
  coalition_setup <- function(seed) {
    set.seed(seed)
    d <- data.frame(firm = sample(sprintf("f%02d", 1:30), 60, TRUE), r = sample(letters[1:3], 60, TRUE),
                    c = sample(LETTERS[1:4], 60, TRUE), v = round(rlnorm(60, 3, 1.2)))
    sens <- cell_sensitivity(d, c("r", "c"), "v", rule_nk(3, 75), contributor = "firm")
    if (!any(sens$sensitive)) return(NULL)
    prep <- ns$table_problem(sens, NULL, NULL, 10, arg = "x")
    resp <- ns$table_respondents(sens, prep, "respondents", "ignore")
    list(sens = sens, prep = prep, resp = resp, supp = sens$sensitive | runif(nrow(sens)) < 0.5)
  }
  trials <- list()
  for (seed in 1:15) trials[[length(trials) + 1L]] <- trial_setup(seed)
  for (seed in 1:6) trials[[length(trials) + 1L]] <- coalition_setup(seed)
  expect_true(any(vapply(trials, function(ts) length(ts$resp$coalitions) > 0, logical(1))))
  for (ts in Filter(Negate(is.null), trials)) for (j in which(ts$supp & !ts$sens$sensitive)) (function(ts, j, trial, info) {
    prep <- ts$prep
    wide <- lapply(exact_outer(prep, ts$supp), replace, j, NA_real_)
    sens_t <- which(trial & ts$sens$sensitive)
    # every way the clean-up asks (first breach or all, near j, with
    # earlier breakers first) and the coalitions' groups
    hint <- rev(seq_len(ns$n_groups(ts$resp)))[1:2]
    for (args in list(list(first = TRUE, near = j, hint = hint), list(first = FALSE),
                      list(first = TRUE, only = sens_t[1]))) {
      a <- do.call(ns$respondent_breaches, c(list(prep, trial, ts$resp, wide, exact = FALSE, call = NULL,
                                                  relations_only = TRUE), args))
      b <- do.call(one_by_one, c(list(prep, trial, ts$resp, wide, exact = FALSE, call = NULL,
                                      relations_only = TRUE), args))
      expect_identical(a, b, info = info)
      broke <<- broke + (nrow(a$breaches) > 0)
      passed <<- passed + (nrow(a$breaches) == 0)
    }
  })(ts, j, replace(ts$supp, j, FALSE), paste("cell", j))
  expect_gt(broke, 10)
  expect_gt(passed, 10)
})

test_that("a breach is covered by the round's earlier witness tables that keep the respondent's knowledge, and only by them", {
  ns <- asNamespace("sdcRisk")
  checked <- 0
  for (seed in 1:40) {
    ts <- trial_setup(seed)
    if (is.null(ts)) next
    prep <- ts$prep
    r <- ns$respondent_audit(prep, ts$supp, ts$resp, exact = FALSE, call = NULL)
    if (!nrow(r$breaches)) next
    b <- r$breaches[1, ]
    kn <- ns$respondent_knowledge(ts$resp, prep, b$group)
    search <- ns$new_protection_search(prep, ns$suppression_cost(prep$value, "value"),
                                       ns$cell_labels(ts$sens), 2000)
    search$supp <- ts$supp
    # the first protection finds witness tables (and suppresses their cells)
    w <- ns$protect_against(prep, search, kn, b$cell, "r", NULL)
    expect_gt(length(w), 0)
    expect_true(all(search$supp[unlist(lapply(w, `[[`, "cells"))]))
    # the same breach again, given them: no program, no cell, no new table
    supp <- search$supp
    n_lp <- search$n_lp
    again <- ns$protect_against(prep, search, kn, b$cell, "r", NULL, earlier = w)
    expect_identical(search$supp, supp)
    expect_equal(search$n_lp, n_lp)
    expect_length(again, 0)
    # without them the same pattern takes programs, and adds no cell either
    ns$protect_against(prep, search, kn, b$cell, "r", NULL)
    expect_gt(search$n_lp, n_lp)
    expect_identical(search$supp, supp)
    # a table that breaks the respondent's knowledge (moved far beyond it)
    # covers nothing: programs again
    far <- lapply(w, function(x) list(cells = x$cells, y = x$y * 1e6))
    n_lp <- search$n_lp
    ns$protect_against(prep, search, kn, b$cell, "r", NULL, earlier = far)
    expect_gt(search$n_lp, n_lp)
    # and the pattern is safe from that respondent for that cell
    r2 <- ns$respondent_audit(prep, search$supp, ts$resp, exact = FALSE, call = NULL)
    expect_false(any(r2$breaches$group == b$group & r2$breaches$cell == b$cell))
    checked <- checked + 1
    if (checked >= 4) break
  }
  expect_gt(checked, 0)
})

# The witness tables of protect_table()'s pattern of ts$sens, as
# list(cells, y), and the pattern.
pattern_witness_tables <- function(ts) {
  p <- protect_table(ts$sens)
  w <- attr(p, "witnesses")
  list(supp = p$status != "published",
       tables = lapply(split(seq_len(nrow(w)), w$witness), function(k) list(cells = w$row[k], y = w$change[k])))
}

# f(ts, pw, ix, seed) for each table of trial_setup(seed), `seeds`, whose
# protect_table() pattern (pattern_witness_tables(): `pw`) has witness
# tables to index (witness_index(): `ix`).
for_each_witnessed_table <- function(seeds, f) {
  for (seed in seeds) {
    ts <- trial_setup(seed)
    if (is.null(ts)) next
    pw <- pattern_witness_tables(ts)
    ix <- sdcRisk:::witness_index(pw$tables, ts$prep)
    if (is.null(ix)) next
    f(ts, pw, ix, seed)
  }
}

test_that("witness tables shrunk within a respondent's knowledge: the core's extremes against a scan of every table", {
  ns <- asNamespace("sdcRisk")
  checked <- 0
  for (seed in 1:15) {
    ts <- trial_setup(seed)
    if (is.null(ts)) next
    pw <- pattern_witness_tables(ts)
    if (length(pw$tables) < 2) next
    prep <- ts$prep
    ix <- ns$witness_index(pw$tables, prep)
    expect_equal(ix$n_w, length(pw$tables))
    set.seed(seed)
    dead <- runif(ix$n_w) < 0.3
    targets <- which(pw$supp & prep$sensitive)
    for (g in seq_len(min(ts$resp$n_single, 12))) {
      k <- ns$respondent_knowledge(ts$resp, prep, g)
      known <- k$cells[pw$supp[k$cells]]
      if (!length(known)) next
      pa <- prep
      at <- match(known, k$cells)
      pa$lower[known] <- pmax(prep$lower[known], k$lo[at])
      pa$upper[known] <- pmin(prep$upper[known], k$hi[at])
      got <- ns$respondent_seeds(ix, dead, pa, known, targets)
      # by hand: every table shrunk over all its cells to the bounds of pa
      v <- pa$value[targets]
      hi <- lo <- v
      for (t in which(!dead)) {
        w <- pw$tables[[t]]
        vc <- pa$value[w$cells]
        share <- function(y) {
          room <- ifelse(y > 0, pa$upper[w$cells] - vc, vc - pa$lower[w$cells])
          min(1, (pmax(room, 0) / abs(y))[y != 0])
        }
        for (lam in c(share(w$y), -share(-w$y))) {
          # a table of the respondent's problem: every relation, its bounds
          expect_true(ns$witness_ok(list(prep = pa), w$cells, lam * w$y))
          at_t <- match(targets, w$cells)
          moved <- v + ifelse(is.na(at_t), 0, lam * w$y[at_t])
          hi <- pmax(hi, moved)
          lo <- pmin(lo, moved)
        }
      }
      expect_identical(got$cells, targets)
      expect_equal(got$hi, hi, tolerance = 1e-12)
      expect_equal(got$lo, lo, tolerance = 1e-12)
      checked <- checked + 1
    }
  }
  expect_gt(checked, 10)
})

test_that("witness tables that break a relation or a bound, or repeat a cell, are left out", {
  ns <- asNamespace("sdcRisk")
  ts <- NULL
  seed <- 0
  while (is.null(ts)) {
    seed <- seed + 1
    ts <- trial_setup(seed)
  }
  pw <- pattern_witness_tables(ts)
  good <- pw$tables[[1]]
  prep <- ts$prep
  # one cell moved alone breaks its relations; moved far, the bounds; a
  # cell twice, the index
  broken <- list(cells = good$cells[1], y = 1)
  far <- list(cells = good$cells, y = -good$y * 1e12)
  twice <- list(cells = c(good$cells, good$cells[1]), y = c(good$y, 0))
  # and cells beyond the table, or moves that do not match the cells
  outside <- list(cells = c(good$cells, length(prep$value) + 1L), y = c(good$y, 0))
  short <- list(cells = good$cells, y = good$y[-1])
  expect_null(ns$witness_index(list(broken, far, twice, outside, short), prep))
  ix <- ns$witness_index(list(broken, good, far), prep)
  expect_equal(ix$n_w, 1)
  expect_setequal(ix$cell, good$cells[good$y != 0])
  expect_null(ns$witness_index(list(), prep))
  # a table moving a published cell of the pattern is dead there
  supp <- pw$supp
  supp[good$cells[1]] <- FALSE
  expect_identical(ns$witness_dead(ix, supp), TRUE)
  expect_identical(ns$witness_dead(ix, pw$supp), FALSE)
})

test_that("witnesses_ok() gives witness_ok()'s verdict on every table at once", {
  ns <- asNamespace("sdcRisk")
  checked <- 0
  for (seed in 1:6) {
    ts <- trial_setup(seed)
    if (is.null(ts)) next
    pw <- pattern_witness_tables(ts)
    prep <- ts$prep
    set.seed(seed)
    # the pattern's tables, each also scaled (far ones break the bounds),
    # with one move changed (breaks a relation), with a missing move, and
    # a single cell moved alone
    tabs <- c(pw$tables,
              lapply(pw$tables, function(w) list(cells = w$cells, y = w$y * sample(c(-3, 0.5, 1e9), 1))),
              lapply(pw$tables, function(w) list(cells = w$cells, y = replace(w$y, 1, w$y[1] + 1))),
              lapply(pw$tables, function(w) list(cells = w$cells, y = replace(w$y, 1, NA))),
              list(list(cells = pw$tables[[1]]$cells[1], y = 1)))
    tabs <- tabs[sample(length(tabs))]
    one <- vapply(tabs, function(w) isTRUE(ns$witness_ok(list(prep = prep), w$cells, w$y)), logical(1))
    expect_identical(ns$witnesses_ok(prep, tabs), one)
    expect_true(any(one))
    expect_true(any(!one))
    checked <- checked + 1
  }
  expect_gt(checked, 2)
  expect_identical(ns$witnesses_ok(ts$prep, list()), logical(0))
  # the core's batch refuses offsets that do not cover the moves, and cells
  # out of range, as internal errors
  prep <- ts$prep
  ix <- ns$relation_index_of(prep)
  batch <- function(cells, y, start) {
    ns$core_call(ns$cpp_witnesses_ok, ix, as.integer(cells), as.double(y), as.integer(start), prep$value,
                 as.double(prep$lower), as.double(prep$upper), prep$tol, ns$audit_tolerance)
  }
  expect_identical(batch(integer(), numeric(), 0L), logical(0))
  expect_error(batch(1:2, c(0, 0), c(0L, 1L)), class = "sdcRisk_error_internal")
  expect_error(batch(1:2, c(0, 0), c(0L, 2L, 1L, 2L)), class = "sdcRisk_error_internal")
  expect_error(batch(1:2, c(0, 0), c(0L, 5L, 2L)), class = "sdcRisk_error_internal")
  expect_error(batch(length(prep$value) + 1L, 0, c(0L, 1L)), class = "sdcRisk_error_internal")
  expect_identical(batch(c(1L, 1L), c(0, 0), c(0L, 1L, 2L)), c(TRUE, TRUE))
})

test_that("the witness tables as seeds change the respondents' programs, never their verdict (clean-up trials)", {
  ns <- asNamespace("sdcRisk")
  # (the earlier patterns' tables and solvers would save programs of both:
  # left out)
  withr::local_options(sdcRisk.audit_pool = FALSE, sdcRisk.audit_subpatterns = FALSE)
  saved <- 0
  broke <- 0
  for_each_witnessed_table(1:10, function(ts, pw, ix, seed) {
    prep <- ts$prep
    # the pattern itself and every trial of the clean-up on it (the tables
    # that move the cell a trial publishes are not used there)
    pats <- c(list(pw$supp), lapply(which(pw$supp & !prep$sensitive), function(j) replace(pw$supp, j, FALSE)))
    for (p in pats) {
      outer <- exact_outer(prep, p)
      s_p <- which(p & prep$sensitive)
      if (!all(ns$protection_met(prep, s_p, outer$lower[s_p], outer$upper[s_p]))) next
      plain <- ns$respondent_breaches(prep, p, ts$resp, outer, exact = FALSE, call = NULL)
      seeded <- ns$respondent_breaches(prep, p, ts$resp, outer, exact = FALSE, call = NULL, witnesses = ix)
      expect_identical(paste(seeded$breaches$group, seeded$breaches$cell),
                       paste(plain$breaches$group, plain$breaches$cell))
      expect_lte(seeded$n_lp, plain$n_lp)
      saved <<- saved + (seeded$n_lp < plain$n_lp)
      broke <<- broke + (nrow(plain$breaches) > 0)
    }
  })
  # the seeds must save programs, and some patterns break, for the
  # comparison to mean anything
  expect_gt(saved, 3)
  expect_gt(broke, 3)
})

test_that("the outsider's seeds of a clean-up trial: inner bounds of its exact intervals, the same verdict", {
  ns <- asNamespace("sdcRisk")
  # (the earlier patterns' tables and solvers would save programs of both:
  # left out)
  withr::local_options(sdcRisk.audit_pool = FALSE, sdcRisk.audit_subpatterns = FALSE)
  saved <- 0
  broke <- 0
  for_each_witnessed_table(1:10, function(ts, pw, ix, seed) {
    prep <- ts$prep
    for (j in which(pw$supp & !prep$sensitive)) {
      p <- replace(pw$supp, j, FALSE)
      info <- paste("seed", seed, "cell", j)
      s_p <- which(p & prep$sensitive)
      seeds <- ns$outsider_seeds(ix, prep, p, s_p)
      # only tables that keep to the trial's pattern, each within the
      # exact intervals
      dead <- ns$witness_dead(ix, p)
      expect_true(all(dead[ix$id0[ix$cell == j] + 1L]), info = info)
      outer <- exact_outer(prep, p)
      tol <- prep$tol[s_p]
      expect_true(all(seeds$hi <= outer$upper[s_p] + tol & seeds$lo >= outer$lower[s_p] - tol), info = info)
      # the clean-up's test of the trial: the same verdict, with fewer programs
      plain <- ns$audit_cells(prep, p, s_p, exact = FALSE, call = NULL, first_breach = TRUE)
      seeded <- ns$audit_cells(prep, p, s_p, exact = FALSE, call = NULL, first_breach = TRUE, seeds = seeds)
      verdict <- all(ns$protection_met(prep, s_p, outer$lower[s_p], outer$upper[s_p]))
      expect_identical(all(ns$protection_met(prep, s_p, plain$lower, plain$upper)), verdict, info = info)
      expect_identical(all(ns$protection_met(prep, s_p, seeded$lower, seeded$upper)), verdict, info = info)
      expect_lte(seeded$n_lp, plain$n_lp)
      saved <<- saved + (seeded$n_lp < plain$n_lp)
      broke <<- broke + !verdict
    }
  })
  # the seeds must save programs, and some trials fail, for the comparison
  # to mean anything
  expect_gt(saved, 3)
  expect_gt(broke, 3)
})

test_that("a flat decided interval (pinned by the relation bounds, no program) is the exact one", {
  ns <- asNamespace("sdcRisk")
  pinned <- 0
  for_each_trial(1:10, function(ts, j, p, info) {
    prep <- ts$prep
    cmp <- ns$respondent_components(prep, p, NULL)
    for (g in seq_len(min(ts$resp$n_single, 8))) {
      k <- ns$respondent_knowledge(ts$resp, prep, g)
      for (cc in setdiff(unique(cmp$comp[k$cells]), 0L)) {
        mine <- p[k$cells] & cmp$comp[k$cells] == cc
        args <- list(prep, cmp, cc, k$cells[mine], k$lo[mine], k$hi[mine], sens = prep$sensitive, call = NULL)
        dec <- do.call(ns$respondent_component, c(args, exact = FALSE))
        ex <- do.call(ns$respondent_component, c(args, exact = TRUE))
        if (!length(dec$cells)) next
        tol <- prep$tol[dec$cells]
        flat <- dec$upper - dec$lower <= tol
        # a flat decided interval is the exact one (within the tolerance)
        expect_true(all(abs(dec$lower[flat] - ex$lower[flat]) <= tol[flat] &
                          abs(dec$upper[flat] - ex$upper[flat]) <= tol[flat]), info = info)
        # and the verdicts agree everywhere
        expect_identical(ns$protection_met(prep, dec$cells, dec$lower, dec$upper),
                         ns$protection_met(prep, ex$cells, ex$lower, ex$upper), info = info)
        pinned <<- pinned + sum(flat)
      }
    }
  })
  expect_gt(pinned, 5)
})

test_that("protection decided by the component's earlier tables is sound: inner bounds of the exact intervals", {
  ns <- asNamespace("sdcRisk")
  decided <- 0
  left <- 0
  for_each_trial(1:8, function(ts, j, p, info) {
    prep <- ts$prep
    # the outsider's audit fills the cache with each component's solver and
    # its optimal tables
    ns$audit_cells(prep, p, which(p), exact = TRUE, call = NULL)
    cmp <- ns$respondent_components(prep, p, NULL)
    for (g in seq_len(min(ts$resp$n_single, 6))) {
      k <- ns$respondent_knowledge(ts$resp, prep, g)
      for (cc in setdiff(unique(cmp$comp[k$cells]), 0L)) {
        mine <- p[k$cells] & cmp$comp[k$cells] == cc
        lp <- cmp$lp_of(cc)
        targets <- lp$vars[prep$sensitive[lp$vars]]
        if (is.null(lp$mat) || !length(targets)) next
        pa <- prep
        pa$lower[k$cells[mine]] <- pmax(prep$lower[k$cells[mine]], k$lo[mine])
        pa$upper[k$cells[mine]] <- pmin(prep$upper[k$cells[mine]], k$hi[mine])
        lp$lower <- pa$lower[lp$vars]
        lp$upper <- pa$upper[lp$vars]
        w <- ns$witnessed_protection(pa, lp, targets, NULL, NULL)
        ex <- ns$respondent_component(prep, cmp, cc, k$cells[mine], k$lo[mine], k$hi[mine], exact = TRUE,
                                      prep$sensitive, NULL)
        met <- ns$protection_met(pa, targets, ex$lower, ex$upper)
        if (is.null(w)) {
          left <<- left + 1
          next
        }
        decided <<- decided + 1
        tol <- prep$tol[targets]
        expect_true(all(met), info = info)
        expect_true(all(w$lower >= ex$lower - tol & w$upper <= ex$upper + tol), info = info)
        expect_equal(w$n_lp, 0L)
      }
    }
  })
  # both outcomes occur, for the comparison to mean anything
  expect_gt(decided, 20)
  expect_gt(left, 5)
})

# Random tables whose respondents' clean-up publishes several cells (firms,
# or each record its own contributor when seed is a multiple of 3).
firm_table <- function(seed) {
  set.seed(seed)
  n <- sample(c(60, 120, 300), 1)
  nr <- sample(3:5, 1)
  nc <- sample(4:8, 1)
  firms <- sample(c(10, 25, 60), 1)
  d <- respondent_firms(NULL, n, nr, nc, firms)
  list(d = d, sens = cell_sensitivity(d, c("r", "c"), "v", list(rule_frequency(3), rule_p(20)),
                                      contributor = if (seed %% 3) "firm"))
}

# What every respondent_cleanup() returns, in runs$out (runs the
# environment returned), until the calling test ends.
record_cleanups <- function(frame = parent.frame()) {
  runs <- new.env()
  runs$out <- list()
  record <- function(r) runs$out[[length(runs$out) + 1L]] <- r
  suppressMessages(trace("respondent_cleanup", exit = bquote(.(record)(returnValue())),
                         where = asNamespace("sdcRisk"), print = FALSE))
  withr::defer(suppressMessages(untrace("respondent_cleanup", where = asNamespace("sdcRisk"))), envir = frame)
  runs
}

test_that("the respondents' clean-up tests its publications together and gives the same pattern", {
  # on table 51 the test of all the publications fails, and the trials run
  # again (without the pre-test of each trial by the respondents that broke
  # earlier ones, which refuses that trial before the deferred test)
  withr::local_options(sdcRisk.respondent_pretest = FALSE)
  runs <- record_cleanups()
  published <- 0
  for (seed in c(1, 7, 51, 53)) {
    tb <- firm_table(seed)
    sens <- tb$sens
    info <- paste("table", seed)
    runs$out <- list()
    together <- protect_table(sens)
    first <- runs$out
    runs$out <- list()
    alone <- withr::with_options(list(sdcRisk.respondent_defer = FALSE), protect_table(sens))
    expect_identical(together$status, alone$status, info = info)
    s <- together$status != "published"
    a <- audit_table(sens, s)
    expect_true(attr(a, "passed"), info = info)
    # the intervals the clean-up measured (final_audit() reads them) are
    # the exact ones, deferred or not
    expect_equal(together$lower[s], a$lower, info = info)
    expect_equal(together$upper[s], a$upper, info = info)
    expect_equal(alone$lower[s], a$lower, info = info)
    expect_equal(alone$upper[s], a$upper, info = info)
    d <- tb$d
    d$record <- seq_len(nrow(d))
    expect_equal(nrow(reference_breaches(d, sens, s, audit_levels(sens), firm = if (seed %% 3) "firm" else "record")),
                 0, info = info)
    if (seed == 51) {
      expect_true(first[[1]]$rolled_back)
      expect_false(runs$out[[1]]$rolled_back)
    }
    if (length(first)) published <- published + first[[1]]$published
  }
  expect_gt(published, 4)
})

test_that("a refused test of several publications is tried again by halves, down to the refused trial: the same pattern", {
  # three-way firm tables whose first test fails (tables 10 and 24): the
  # trials again half as many to a test, one trial refused alone, then
  # more to a test after each that passes (without the pre-test
  # of each trial by the respondents that broke earlier ones, which refuses
  # most such trials before the deferred test)
  withr::local_options(sdcRisk.respondent_pretest = FALSE)
  runs <- record_cleanups()
  sizes <- integer()
  passed <- logical()
  regrown <- 0
  for (seed in c(10, 24)) {
    set.seed(seed)
    d <- respondent_firms(NULL, sample(c(300, 600), 1), sample(3:4, 1), sample(4:5, 1), sample(c(40, 100), 1))
    d$s <- sample(letters[1:3], nrow(d), TRUE)
    sens <- cell_sensitivity(d, c("r", "c", "s"), "v", list(rule_frequency(3), rule_p(20)), contributor = "firm")
    info <- paste("table", seed)
    runs$out <- list()
    together <- protect_table(sens)
    tests <- runs$out[[1]]$tests
    alone <- withr::with_options(list(sdcRisk.respondent_defer = FALSE), protect_table(sens))
    expect_identical(together$status, alone$status, info = info)
    s <- together$status != "published"
    expect_true(attr(audit_table(sens, s), "passed"), info = info)
    d$record <- seq_len(nrow(d))
    expect_equal(nrow(reference_breaches(d, sens, s, audit_levels(sens), firm = "firm")), 0, info = info)
    # after a refused test of n trials the next takes ceiling(n / 2) (one
    # refused alone: one); after a passed one at most
    # cleanup_respondent_test_growth times as many
    n <- length(tests$size)
    if (n > 1) {
      refused <- which(!tests$passed[-n])
      expect_true(all(tests$size[refused + 1L] <= pmax(1, ceiling(tests$size[refused] / 2))), info = info)
      ok <- which(tests$passed[-n])
      growth <- asNamespace("sdcRisk")$cleanup_respondent_test_growth
      expect_true(all(tests$size[ok + 1L] <= growth * tests$size[ok]), info = info)
    }
    sizes <- c(sizes, tests$size)
    passed <- c(passed, tests$passed)
    after <- c(FALSE, cumsum(!tests$passed)[-n] > 0)
    regrown <- regrown + any(tests$passed & tests$size > 1 & after)
  }
  # a refused test of several trials, a trial refused alone, and a passed
  # test of several after a refusal, for the comparison to mean anything
  expect_true(any(!passed & sizes > 1))
  expect_true(any(!passed & sizes == 1))
  expect_gt(regrown, 0)
})

test_that("the respondents' clean-up's first test takes at most a few trials; every first size gives the same pattern", {
  # tables 10 and 24 of the test above and 51 of the one before (without
  # the pre-test, so that deferred tests fail): a first test of one trial,
  # of two, of cleanup_respondent_first_test (the default) and of the
  # whole pass
  withr::local_options(sdcRisk.respondent_pretest = FALSE)
  ns <- asNamespace("sdcRisk")
  runs <- record_cleanups()
  whole <- integer()
  tables <- list(firm_table(51)$sens)
  for (seed in c(10, 24)) {
    set.seed(seed)
    d <- respondent_firms(NULL, sample(c(300, 600), 1), sample(3:4, 1), sample(4:5, 1), sample(c(40, 100), 1))
    d$s <- sample(letters[1:3], nrow(d), TRUE)
    tables[[length(tables) + 1L]] <- cell_sensitivity(d, c("r", "c", "s"), "v",
                                                       list(rule_frequency(3), rule_p(20)), contributor = "firm")
  }
  for (k in seq_along(tables)) {
    sens <- tables[[k]]
    info <- paste("table", k)
    runs$out <- list()
    default <- protect_table(sens)
    tests <- runs$out[[1]]$tests
    expect_true(length(tests$size) > 0, info = info)
    expect_lte(tests$size[1], ns$cleanup_respondent_first_test)
    for (size in c(1, 2, Inf)) {
      runs$out <- list()
      other <- withr::with_options(list(sdcRisk.respondent_first_test = size), protect_table(sens))
      expect_identical(other$status, default$status, info = paste(info, "first test", size))
      expect_equal(other$lower, default$lower, info = paste(info, "first test", size))
      expect_equal(other$upper, default$upper, info = paste(info, "first test", size))
      first <- runs$out[[1]]$tests$size[1]
      if (size < Inf) expect_lte(first, size) else whole <- c(whole, first)
    }
    expect_true(attr(audit_table(sens, default$status != "published"), "passed"), info = info)
  }
  # (passes longer than the smaller first tests, for the comparison to
  # mean anything)
  expect_true(any(whole > 2))
})

test_that("a trial run again after a refused test keeps its verdict: the same pattern, fewer tests of trials", {
  # table 10 of the test above, whose deferred tests fail (without the
  # pre-test, so that they do): its trials run again from the first
  # deferred one, on the same patterns as before until the next test
  withr::local_options(sdcRisk.respondent_pretest = FALSE)
  ns <- asNamespace("sdcRisk")
  runs <- record_cleanups()
  verdicts <- new.env()
  verdicts$n <- 0L
  count <- function() verdicts$n <- verdicts$n + 1L
  suppressMessages(trace("trial_verdict", tracer = bquote(.(count)()), where = ns, print = FALSE))
  withr::defer(suppressMessages(untrace("trial_verdict", where = ns)))
  set.seed(10)
  d <- respondent_firms(NULL, sample(c(300, 600), 1), sample(3:4, 1), sample(4:5, 1), sample(c(40, 100), 1))
  d$s <- sample(letters[1:3], nrow(d), TRUE)
  sens <- cell_sensitivity(d, c("r", "c", "s"), "v", list(rule_frequency(3), rule_p(20)), contributor = "firm")
  with <- protect_table(sens)
  n_with <- verdicts$n
  tests <- runs$out[[1]]$tests
  # (a refused test of several trials: some run again)
  expect_true(any(!tests$passed & tests$size > 1))
  verdicts$n <- 0L
  without <- withr::with_options(list(sdcRisk.respondent_memo = FALSE), protect_table(sens))
  expect_identical(with$status, without$status)
  expect_equal(with$lower, without$lower)
  expect_equal(with$upper, without$upper)
  expect_lt(n_with, verdicts$n)
  s <- with$status != "published"
  expect_true(attr(audit_table(sens, s), "passed"))
  d$record <- seq_len(nrow(d))
  expect_equal(nrow(reference_breaches(d, sens, s, audit_levels(sens), firm = "firm")), 0)
})

test_that("the rounds measure exactly only the upper ends some respondent knows a bound below: the same breaches, the same pattern", {
  ns <- asNamespace("sdcRisk")
  sens <- acs_bench_table(c("sex", "age", "edu", "race"))
  prep <- ns$table_problem(sens, NULL, NULL, 10, arg = "x")
  resp <- ns$table_respondents(sens, prep, "respondents", "ignore")
  outsider <- protect_table(sens, attacker = "outsider")
  default <- protect_table(sens)
  lazy_total <- 0
  for (supp in list(outsider$status != "published", default$status != "published")) {
    cells <- which(supp)
    known <- ns$upper_known(resp, prep, cells)
    # (by brute force: some group's knowledge of the cell has an upper
    # bound below the cell's a priori one)
    brute <- logical(length(cells))
    for (g in seq_len(ns$n_groups(resp))) {
      k <- ns$respondent_knowledge(resp, prep, g)
      brute <- brute | cells %in% k$cells[k$hi < prep$upper[k$cells]]
    }
    expect_identical(known, brute)
    lazy <- cells[!known]
    lazy_total <- lazy_total + length(lazy)
    ns$reset_lp_cache(prep)
    a <- ns$respondent_audit(prep, supp, resp, exact = FALSE, call = NULL)
    ns$reset_lp_cache(prep)
    b <- withr::with_options(list(sdcRisk.respondent_upper_bounds = FALSE),
                             ns$respondent_audit(prep, supp, resp, exact = FALSE, call = NULL))
    expect_identical(nrow(a$breaches) > 0, nrow(b$breaches) > 0)
    expect_setequal(paste(a$breaches$group, a$breaches$cell), paste(b$breaches$group, b$breaches$cell))
    # exact lower ends everywhere, exact upper ends where some respondent
    # knows a bound, outer bounds (at least the exact ends) elsewhere
    expect_equal(a$outer$lower[cells], b$outer$lower[cells])
    expect_equal(a$outer$upper[cells[known]], b$outer$upper[cells[known]])
    expect_true(all(a$outer$upper[lazy] >= b$outer$upper[lazy] - 1e-6 * pmax(1, abs(b$outer$upper[lazy]))))
    expect_identical(a$outer$exact, replace(supp, lazy, FALSE))
    # (the outsider's programs: fewer, or as many when the lower ends'
    # programs give the upper ends of their twins, audit_twins; fewer
    # without the twins; the respondents' may take a few more, without the
    # tables of the upper ends' programs)
    ns$reset_lp_cache(prep)
    o_lazy <- ns$audit_cells(prep, supp, cells, exact = TRUE, call = NULL, outer_upper = !known)
    ns$reset_lp_cache(prep)
    o_all <- ns$audit_cells(prep, supp, cells, exact = TRUE, call = NULL)
    expect_equal(o_lazy$lower, o_all$lower)
    expect_lte(o_lazy$n_lp, o_all$n_lp)
    withr::with_options(list(sdcRisk.audit_twins = FALSE), {
      ns$reset_lp_cache(prep)
      o_lazy <- ns$audit_cells(prep, supp, cells, exact = TRUE, call = NULL, outer_upper = !known)
      ns$reset_lp_cache(prep)
      o_all <- ns$audit_cells(prep, supp, cells, exact = TRUE, call = NULL)
    })
    expect_equal(o_lazy$lower, o_all$lower)
    expect_lt(o_lazy$n_lp, o_all$n_lp)
  }
  expect_gt(lazy_total, 0)
  # the pattern and its published intervals are the same
  without <- withr::with_options(list(sdcRisk.respondent_upper_bounds = FALSE), protect_table(sens))
  expect_identical(default$status, without$status)
  expect_equal(default$lower, without$lower)
  expect_equal(default$upper, without$upper)
  s <- default$status != "published"
  a <- audit_table(sens, s)
  expect_equal(default$lower[s], a$lower)
  expect_equal(default$upper[s], a$upper)
})

test_that("combinations of earlier tables save respondents' programs and change no verdict", {
  ns <- asNamespace("sdcRisk")
  saved <- 0
  for (seed in 1:20) {
    ft <- firm_table(seed)
    info <- paste("seed", seed)
    a <- suppressMessages(protect_table(ft$sens))
    b <- withr::with_options(list(sdcRisk.audit_combinations = FALSE), suppressMessages(protect_table(ft$sens)))
    expect_identical(a$status, b$status, info = info)
    expect_lte(attr(a, "stats")$n_lp, attr(b, "stats")$n_lp)
    saved <- saved + (attr(a, "stats")$n_lp < attr(b, "stats")$n_lp)
    au <- audit_table(ft$sens, a$status != "published")
    expect_true(isTRUE(attr(au, "passed")), info = info)
  }
  expect_gt(saved, 3)
})

test_that("the combinations' programs from the last one's basis give the same pattern and intervals as programs solved from scratch", {
  ns <- asNamespace("sdcRisk")
  # (the programs of the warm calls, counted in the core's answers)
  programs <- 0
  count <- function(r) if (is.list(r) && !is.null(r$programs)) programs <<- programs + r$programs
  for (seed in 1:12) {
    ft <- firm_table(seed)
    info <- paste("seed", seed)
    suppressMessages(trace("cpp_combination_extremes", exit = bquote(.(count)(returnValue())), where = ns,
                                print = FALSE))
    a <- suppressMessages(protect_table(ft$sens))
    suppressMessages(untrace("cpp_combination_extremes", where = ns))
    b <- withr::with_options(list(sdcRisk.hull_warm = FALSE), suppressMessages(protect_table(ft$sens)))
    expect_identical(a$status, b$status, info = info)
    expect_equal(a$lower, b$lower, info = info)
    expect_equal(a$upper, b$upper, info = info)
    au <- audit_table(ft$sens, a$status != "published")
    expect_true(isTRUE(attr(au, "passed")), info = info)
  }
  expect_gt(programs, 100)
})

test_that("a later pattern's components are solved as the cached solvers' programs with their other cells held: the same exact intervals", {
  ns <- asNamespace("sdcRisk")
  mapped <- 0
  for (seed in 1:30) {
    ts <- audited_setup(seed)
    if (is.null(ts)) next
    prep <- ts$prep
    p <- ts$supp
    expect_identical(prep$lp_cache$.supp, p)
    secondary <- which(p & !prep$sensitive)
    set.seed(seed)
    for (j in secondary[sample.int(length(secondary))][seq_len(min(3, length(secondary)))]) {
      # one or two cells published: a pattern within the cached one
      q <- replace(p, c(j, if (length(secondary) > 1 && runif(1) < 0.5) sample(setdiff(secondary, j), 1)), FALSE)
      info <- paste("seed", seed, "cell", j)
      for (lp in component_programs(prep, q)) {
        big <- ns$cached_program(lp, prep)
        if (length(big$vars) == length(lp$vars)) next
        mapped <- mapped + 1
        # the component's cells with their bounds, the solver's others held
        at <- match(lp$vars, big$vars)
        expect_false(anyNA(at), info = info)
        expect_identical(big$lower[at], lp$lower)
        others <- setdiff(seq_along(big$vars), at)
        expect_identical(big$lower[others], prep$value[big$vars[others]])
        expect_identical(big$upper[others], prep$value[big$vars[others]])
      }
      s_q <- which(q)
      a <- ns$audit_cells(prep, q, s_q, exact = TRUE, call = NULL)
      # (still the cache of p: q suppresses nothing p publishes)
      expect_identical(prep$lp_cache$.supp, p)
      plain <- ts$prep
      plain$lp_cache <- new.env(parent = emptyenv())
      b <- ns$audit_cells(plain, q, s_q, exact = TRUE, call = NULL)
      tol <- 10 * prep$tol[s_q]
      near <- function(x, y) x == y | abs(x - y) <= tol
      expect_true(all(near(a$lower, b$lower) & near(a$upper, b$upper)), info = info)
    }
    # a pattern that suppresses a cell p publishes empties the cache
    pub <- which(!p)
    if (length(pub)) {
      r <- replace(p, pub[1], TRUE)
      ns$audit_cells(prep, r, which(r), exact = TRUE, call = NULL)
      expect_identical(prep$lp_cache$.supp, r)
    }
  }
  expect_gt(mapped, 10)
})

test_that("solving later patterns as the cached solvers' programs changes no protect_table() status", {
  for (seed in 1:12) {
    ft <- firm_table(seed)
    info <- paste("seed", seed)
    a <- suppressMessages(protect_table(ft$sens))
    b <- withr::with_options(list(sdcRisk.audit_subpatterns = FALSE), suppressMessages(protect_table(ft$sens)))
    expect_identical(a$status, b$status, info = info)
    tol <- 1e-6 * (1 + abs(a$total))
    near <- function(x, y) (is.na(x) & is.na(y)) | x == y | abs(x - y) <= tol
    expect_true(all(near(a$lower, b$lower) & near(a$upper, b$upper)), info = info)
    expect_true(isTRUE(attr(audit_table(ft$sens, a$status != "published"), "passed")), info = info)
  }
})

test_that("cheap_tail() flags the cheapest candidates that cost less than the share of all", {
  ns <- asNamespace("sdcRisk")
  s <- new.env(parent = emptyenv())
  s$w <- c(50, 30, 10, 6, 3, 1)
  # (suffix sums 100, 50, 20, 10, 4, 1)
  s$tail_share <- 0.1
  expect_identical(ns$cheap_tail(s, 1:6), c(FALSE, FALSE, FALSE, FALSE, TRUE, TRUE))
  expect_identical(ns$cheap_tail(s, c(6, 5)), c(FALSE, FALSE))
  expect_identical(ns$cheap_tail(s, integer()), logical())
  s$tail_share <- 0
  expect_false(any(ns$cheap_tail(s, 1:6)))
  s$tail_share <- NULL
  expect_false(any(ns$cheap_tail(s, 1:6)))
  withr::with_options(list(sdcRisk.cleanup_tail = 0.25),
                      expect_identical(ns$cheap_tail(s, 1:6), c(FALSE, FALSE, TRUE, TRUE, TRUE, TRUE)))
})

test_that("the respondents' clean-up leaves its cheap tail: the same decisions before it, less than the share after", {
  ns <- asNamespace("sdcRisk")
  sens <- acs_bench_table(c("sex", "age", "edu", "race"))
  # the state at the start of the respondents' clean-up (a copy of the
  # search, which the clean-up changes)
  st <- NULL
  keep <- function(x) st <<- x
  suppressMessages(trace("respondent_cleanup", where = ns, print = FALSE, tracer = bquote(.(keep)(list(
    prep = prep, search = list2env(as.list(search, all.names = TRUE), parent = emptyenv()), resp = resp,
    keep_witnessed = keep_witnessed, outer = outer, witnesses = witnesses, index = index)))))
  traced <- TRUE
  untrace_cleanup <- function() if (traced) suppressMessages(untrace("respondent_cleanup", where = ns))
  withr::defer(untrace_cleanup())
  p <- protect_table(sens)
  untrace_cleanup()
  traced <- FALSE
  expect_false(is.null(st))
  run <- function(share) {
    s <- list2env(as.list(st$search, all.names = TRUE), parent = emptyenv())
    withr::with_options(list(sdcRisk.cleanup_tail = share),
                        ns$respondent_cleanup(st$prep, s, st$resp, st$keep_witnessed, call = NULL, outer = st$outer,
                                              witnesses = st$witnesses, index = st$index))
    s$supp
  }
  share <- 0.1
  full <- run(0)
  part <- run(share)
  cand <- ns$costliest_first(st$search)
  tail <- withr::with_options(list(sdcRisk.cleanup_tail = share), ns$cheap_tail(st$search, cand))
  w <- st$search$w
  # the same decisions up to the tail, every tail cell kept, and what the
  # tail keeps costs less than the share of the candidates
  expect_identical(part[cand[!tail]], full[cand[!tail]])
  expect_true(all(part[cand[tail]]))
  expect_lt(sum(w[part & !full]), share * sum(w[cand]))
  # (the full clean-up publishes cells on both sides of the tail's start)
  expect_true(any(!full[cand[tail]]))
  expect_true(any(!full[cand[!tail]]))
  for (s in list(full, part)) {
    expect_true(attr(audit_table(sens, s), "passed"))
    expect_true(attr(audit_table(sens, s, attacker = "outsider"), "passed"))
  }
  # protect_table() leaves the tails of cleanup_respondent_tail and
  # cleanup_respondent_pass_tail against the respondents, none against the
  # outsider alone
  off <- withr::with_options(list(sdcRisk.cleanup_tail = 0, sdcRisk.cleanup_pass_tail = 0), protect_table(sens))
  on <- withr::with_options(list(sdcRisk.cleanup_tail = ns$cleanup_respondent_tail,
                                 sdcRisk.cleanup_pass_tail = ns$cleanup_respondent_pass_tail), protect_table(sens))
  expect_identical(p$status, on$status)
  expect_false(identical(p$status, off$status))
  expect_lt(sum(abs(sens$total[off$status != "published"])), sum(abs(sens$total[p$status != "published"])))
  o <- protect_table(sens, attacker = "outsider")
  o_off <- withr::with_options(list(sdcRisk.cleanup_tail = 0, sdcRisk.cleanup_pass_tail = 0),
                               protect_table(sens, attacker = "outsider"))
  expect_identical(o$status, o_off$status)
  o_on <- withr::with_options(list(sdcRisk.cleanup_pass_tail = ns$cleanup_respondent_pass_tail),
                              protect_table(sens, attacker = "outsider"))
  expect_false(identical(o$status, o_on$status))
})

# The tables of the pre-tests' tests: three-way tables of firms whose
# first deferred test fails (seeds 10, 24) and the firm tables of
# firm_table(). Returns list(sens, d (with a record id), firm: the
# contributor column of reference_breaches()).
pretest_table <- function(seed) {
  if (seed %in% c(10, 24)) {
    set.seed(seed)
    d <- respondent_firms(NULL, sample(c(300, 600), 1), sample(3:4, 1), sample(4:5, 1), sample(c(40, 100), 1))
    d$s <- sample(letters[1:3], nrow(d), TRUE)
    sens <- cell_sensitivity(d, c("r", "c", "s"), "v", list(rule_frequency(3), rule_p(20)), contributor = "firm")
    firm <- "firm"
  } else {
    tb <- firm_table(seed)
    sens <- tb$sens
    d <- tb$d
    firm <- if (seed %% 3) "firm" else "record"
  }
  d$record <- seq_len(nrow(d))
  list(sens = sens, d = d, firm = firm)
}

test_that("the respondents that broke earlier trials attack a trial first: the same pattern, fewer deferred tests", {
  runs <- record_cleanups()
  n_tests <- c(with = 0, without = 0)
  for (seed in c(10, 24, 1:12)) {
    tb <- pretest_table(seed)
    sens <- tb$sens
    info <- paste("table", seed)
    runs$out <- list()
    with <- protect_table(sens)
    t_with <- sum(vapply(runs$out, function(r) length(r$tests$size), integer(1)))
    runs$out <- list()
    without <- withr::with_options(list(sdcRisk.respondent_pretest = FALSE), protect_table(sens))
    t_without <- sum(vapply(runs$out, function(r) length(r$tests$size), integer(1)))
    # (a trial the pre-test refuses is one its own test would refuse: the
    # same trials are published)
    expect_identical(with$status, without$status, info = info)
    expect_lte(t_with, t_without)
    n_tests <- n_tests + c(t_with, t_without)
    s <- with$status != "published"
    expect_true(attr(audit_table(sens, s), "passed"), info = info)
    expect_equal(nrow(reference_breaches(tb$d, sens, s, audit_levels(sens), firm = tb$firm)), 0, info = info)
  }
  # (the pre-test must spare some deferred tests for the comparison to mean anything)
  expect_lt(n_tests[["with"]], n_tests[["without"]])
})

test_that("the pre-tests attack with the respondents whose programs broke a trial: the same pattern, fewer attacks", {
  runs <- record_cleanups()
  attacked <- c(programs = 0, all = 0)
  # (seed 10: respondents' programs break trials; the others: only their
  # relation bounds do, and no pre-test runs)
  for (seed in c(10, 24, 1, 3, 7)) {
    tb <- pretest_table(seed)
    sens <- tb$sens
    info <- paste("table", seed)
    runs$out <- list()
    programs <- protect_table(sens)
    a_programs <- sum(vapply(runs$out, function(r) r$pretested, integer(1)))
    runs$out <- list()
    all <- withr::with_options(list(sdcRisk.respondent_pretest_all = TRUE), protect_table(sens))
    a_all <- sum(vapply(runs$out, function(r) r$pretested, integer(1)))
    # (which respondents a pre-test attacks decides only when a trial its
    # own test would refuse is refused: the same trials are published,
    # with the same intervals)
    expect_identical(programs$status, all$status, info = info)
    expect_equal(programs$lower, all$lower, info = info)
    expect_equal(programs$upper, all$upper, info = info)
    attacked <- attacked + c(a_programs, a_all)
    expect_true(attr(audit_table(sens, programs$status != "published"), "passed"), info = info)
  }
  # (respondents that broke trials by their relation bounds alone are left
  # out: fewer attacks, but some, for the comparison to mean anything)
  expect_gt(attacked[["programs"]], 0)
  expect_lt(attacked[["programs"]], attacked[["all"]])
})

test_that("a test of whether some respondent breaks a pattern needs the undominated ones only: the same verdict", {
  ns <- asNamespace("sdcRisk")
  sens <- acs_bench_table(c("sex", "age", "edu", "race"))
  prep <- ns$table_problem(sens, NULL, NULL, 10, arg = "x")
  resp <- ns$table_respondents(sens, prep, "respondents", "ignore")
  # patterns: the outsider's (some respondents break it), the default's
  # (none do), and the default's without one secondary cell at a time
  base <- protect_table(sens)$status != "published"
  sec <- which(base & !prep$sensitive)
  set.seed(3)
  pats <- c(list(protect_table(sens, attacker = "outsider")$status != "published", base),
            lapply(sec[sample.int(length(sec), min(3, length(sec)))], function(j) replace(base, j, FALSE)))
  dropped <- 0
  verdicts <- logical()
  for (k in seq_along(pats)) {
    supp <- pats[[k]]
    info <- paste("pattern", k)
    outer <- ns$shared_outsider_audit(prep, supp, which(supp), call = NULL)$outer
    all <- ns$respondent_breaches(prep, supp, resp, outer, exact = FALSE, call = NULL, undominated = FALSE)
    for (rel in c(FALSE, TRUE)) {
      a <- ns$respondent_breaches(prep, supp, resp, outer, exact = FALSE, call = NULL, first = TRUE,
                                  relations_only = rel, undominated = TRUE)
      b <- ns$respondent_breaches(prep, supp, resp, outer, exact = FALSE, call = NULL, first = TRUE,
                                  relations_only = rel, undominated = FALSE)
      expect_identical(nrow(a$breaches) > 0, nrow(b$breaches) > 0, info = paste(info, rel))
    }
    expect_identical(nrow(all$breaches) > 0,
                     nrow(ns$respondent_breaches(prep, supp, resp, outer, exact = FALSE, call = NULL,
                                                 first = TRUE)$breaches) > 0, info = info)
    verdicts <- c(verdicts, nrow(all$breaches) > 0)
    # every group left out is dominated by one kept: the same cells, none
    # alone, the same upper bounds, lower bounds at least as high; and
    # when it breaks a cell, so does the one that dominates it
    groups <- seq_len(ns$n_groups(resp))
    kept <- ns$undominated_groups(resp, prep, groups)
    out <- setdiff(groups, kept)
    dropped <- dropped + length(out)
    for (g in out) {
      k <- ns$respondent_knowledge(resp, prep, g)
      dom <- Filter(function(h) {
        kh <- ns$respondent_knowledge(resp, prep, h)
        h <= resp$n_single && identical(kh$cells, k$cells) && !any(kh$alone) && identical(kh$hi, k$hi) &&
          all(kh$lo >= k$lo)
      }, kept)
      expect_gt(length(dom), 0)
      if (g %in% all$breaches$group) expect_true(any(dom %in% all$breaches$group), info = info)
    }
  }
  # (both verdicts occur, and groups are left out, for the comparison to mean anything)
  expect_true(any(verdicts) && !all(verdicts))
  expect_gt(dropped, 0)
  # the dominators, found once per class among the contributors of its
  # least populated cell, are those of every contributor compared with
  # every other (a fresh memo: respondent_dominators() finds each class
  # when first asked for)
  resp2 <- ns$table_respondents(sens, prep, "respondents", "ignore")
  m <- resp2$n_single
  ks <- lapply(seq_len(m), function(g) ns$respondent_knowledge(resp2, prep, g))
  sig <- vapply(ks, function(k) if (any(k$alone)) paste0("alone", runif(1)) else paste(k$cells, collapse = ","),
                character(1))
  brute <- integer(m)
  for (cls in split(seq_len(m), sig)) {
    if (length(cls) < 2L) next
    best <- cls[which.max(vapply(ks[cls], function(k) sum(k$lo), numeric(1)))]
    kb <- ks[[best]]
    sv <- prep$sensitive[kb$cells]
    if (any(kb$lo[sv] > prep$value[kb$cells[sv]] - prep$level[kb$cells[sv]])) next
    for (h in setdiff(cls, best)) {
      if (identical(ks[[h]]$hi, kb$hi) && all(ks[[h]]$lo <= kb$lo)) brute[h] <- best
    }
  }
  set.seed(5)
  ask <- sample.int(m)
  expect_identical(ns$respondent_dominators(resp2, prep, ask), brute[ask])
  expect_gt(sum(brute > 0), m / 2)
})

test_that("a respondents' round attacks again only the respondents and cells of the last round's breaches: the same pattern", {
  # (a round only adds suppressions, which only widens every attacker's
  # intervals: a respondent that broke no cell breaks none after it)
  calls <- new.env()
  calls$out <- list()
  record <- function(among, r) calls$out[[length(calls$out) + 1L]] <- list(among = among, groups = r$n_groups)
  suppressMessages(trace("respondent_audit", exit = bquote(.(record)(among, returnValue())),
                         where = asNamespace("sdcRisk"), print = FALSE))
  withr::defer(suppressMessages(untrace("respondent_audit", where = asNamespace("sdcRisk"))))
  attacked <- c(last = 0, all = 0)
  later_rounds <- 0
  for (seed in c(10, 24, 1, 2, 3, 5, 7)) {
    tb <- pretest_table(seed)
    sens <- tb$sens
    info <- paste("table", seed)
    calls$out <- list()
    last <- protect_table(sens)
    rounds_last <- calls$out
    calls$out <- list()
    all <- withr::with_options(list(sdcRisk.respondent_rounds_all = TRUE), protect_table(sens))
    rounds_all <- calls$out
    expect_identical(last$status, all$status, info = info)
    expect_equal(last$lower, all$lower, info = info)
    expect_equal(last$upper, all$upper, info = info)
    expect_length(rounds_last, length(rounds_all))
    # the first round attacks with every respondent, the later ones with
    # those of the last round's breaches
    expect_null(rounds_last[[1]]$among)
    later <- seq_along(rounds_last)[-1]
    for (k in later) {
      expect_false(is.null(rounds_last[[k]]$among), info = info)
      expect_lte(rounds_last[[k]]$groups, rounds_all[[k]]$groups)
      attacked <- attacked + c(rounds_last[[k]]$groups, rounds_all[[k]]$groups)
    }
    later_rounds <- later_rounds + length(later)
    s <- last$status != "published"
    expect_true(attr(audit_table(sens, s), "passed"), info = info)
    # (the independent reference on the tables where it takes seconds)
    if (seed %in% c(1, 2, 5)) {
      expect_equal(nrow(reference_breaches(tb$d, sens, s, audit_levels(sens), firm = tb$firm)), 0, info = info)
    }
  }
  expect_gt(later_rounds, 0)
  expect_lt(attacked[["last"]], attacked[["all"]])
})

test_that("the clean-up's screen refuses up front only publications that break: the same pattern, fewer trials", {
  # (a breach of the pattern the clean-up starts from without a candidate
  # holds at every later pattern, which only publishes more cells)
  ns <- asNamespace("sdcRisk")
  calls <- new.env()
  calls$screens <- list()
  calls$trials <- 0L
  record <- function(prep, supp, resp, cand, r) {
    calls$screens[[length(calls$screens) + 1L]] <- list(supp = supp, resp = resp, cand = cand, r = r)
  }
  count <- function() calls$trials <- calls$trials + 1L
  suppressMessages({
    trace("respondent_screen", exit = bquote(.(record)(prep, supp, resp, cand, returnValue())),
          where = ns, print = FALSE)
    trace("trial_verdict", tracer = bquote(.(count)()), where = ns, print = FALSE)
  })
  withr::defer(suppressMessages({
    untrace("respondent_screen", where = ns)
    untrace("trial_verdict", where = ns)
  }))
  trials <- c(with = 0L, without = 0L)
  refused <- c(outsider = 0L, respondents = 0L)
  set.seed(11)
  for (seed in c(10, 24, 1, 2, 3, 5, 7)) {
    tb <- pretest_table(seed)
    sens <- tb$sens
    info <- paste("table", seed)
    calls$screens <- list()
    calls$trials <- 0L
    with <- protect_table(sens)
    screens <- calls$screens
    trials[["with"]] <- trials[["with"]] + calls$trials
    calls$trials <- 0L
    without <- withr::with_options(list(sdcRisk.respondent_screen = FALSE), protect_table(sens))
    trials[["without"]] <- trials[["without"]] + calls$trials
    # (the trials the screen refuses are those the clean-up's own tests
    # refuse: the same cells are published, with the same intervals)
    expect_identical(with$status, without$status, info = info)
    expect_equal(with$lower, without$lower, info = info)
    expect_equal(with$upper, without$upper, info = info)
    expect_true(attr(audit_table(sens, with$status != "published"), "passed"), info = info)
    # every refusal is a breach the exact audit finds in the pattern the
    # clean-up started from without the candidate (up to three a table),
    # by the respondent named when the outsider's intervals hold
    for (sc in screens) {
      hit <- which(sc$r$refused)
      refused <- refused + c(sum(is.na(sc$r$by[hit])), sum(!is.na(sc$r$by[hit])))
      for (k in hit[sample.int(length(hit), min(3L, length(hit)))]) {
        s <- replace(sc$supp, sc$cand[k], FALSE)
        a <- audit_table(sens, s)
        expect_false(attr(a, "passed"), info = paste(info, "candidate", sc$cand[k]))
        if (!is.na(sc$r$by[k]) && attr(audit_table(sens, s, attacker = "outsider"), "passed")) {
          expect_true(sc$resp$labels[sc$r$by[k]] %in% attr(a, "breaches")$respondent,
                      info = paste(info, "candidate", sc$cand[k]))
        }
      }
    }
  }
  # (both kinds of refusal occur, and the screen spares trials, for the
  # comparison to mean anything)
  expect_gt(refused[["outsider"]], 0)
  expect_gt(refused[["respondents"]], 0)
  expect_lt(trials[["with"]], trials[["without"]])
})
