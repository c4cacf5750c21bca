# The clean-up pass of protect_table() (cleanup_pattern(),
# R/table-suppress-cleanup.R): repeated passes against a single one.

test_that("repeated clean-up passes never cost more than one, and every pattern passes the audit", {
  ns <- asNamespace("sdcRisk")
  one_pass <- function(sens) {
    # the heuristic and a single clean-up pass, by the package's own steps
    ps <- new_search(sens)
    search <- ps$search
    todo <- ps$todo
    for (i in todo) ns$protect_cell(search, i, call = environment())
    ns$cleanup_pattern(search, todo, call = environment())
    search$supp
  }
  checked <- 0
  for (seed in 1:8) {
    set.seed(seed)
    d <- skewed_firms(300, 12, 6)
    by <- if (seed %% 2) c("a", "b") else c("a", "b", "c")
    sens <- cell_sensitivity(d, by, "v", rule_p(10))
    if (!any(sens$sensitive)) next
    w <- abs(sens$total)
    once <- one_pass(sens)
    p <- protect_table(sens, intervals = "none", cleanup = TRUE, attacker = "outsider")
    again <- p$status != "published"
    expect_lte(sum(w[again]), sum(w[once]) + 1e-9, label = paste("seed", seed))
    expect_true(attr(audit_table(sens, again, intervals = "none", attacker = "outsider"), "passed"), info = paste("seed", seed))
    checked <- checked + 1
  }
  expect_gte(checked, 6)
})

test_that("a cell's failed trials leave the side that blocked it, tried first the next time", {
  ns <- asNamespace("sdcRisk")
  search <- new.env()
  search$blocker <- c(0L, 5L, 9L)
  expect_identical(ns$blocker_first(search, c(2L, 5L, 7L), 2L), c(5L, 2L, 7L))
  # a blocker no longer among the sides, or none: the order stays
  expect_identical(ns$blocker_first(search, c(2L, 5L, 7L), 3L), c(2L, 5L, 7L))
  expect_identical(ns$blocker_first(search, c(2L, 5L, 7L), 1L), c(2L, 5L, 7L))
  n_blocked <- 0
  for (seed in 1:6) {
    set.seed(seed)
    d <- skewed_firms(300, 12, 6)
    sens <- cell_sensitivity(d, c("a", "b"), "v", rule_p(10))
    if (!any(sens$sensitive)) next
    prep <- ns$table_problem(sens, NULL, NULL, 10, arg = "x")
    search <- ns$new_protection_search(prep, ns$suppression_cost(prep$value, "value"),
                                       ns$cell_labels(sens), 2000)
    todo <- which(prep$sensitive)
    for (i in todo) ns$protect_cell(search, i, call = environment())
    ns$cleanup_pattern(search, todo, call = environment())
    sides <- ns$protection_sides(search, todo, environment())
    b <- search$blocker
    # every blocker names a side, and only cells still suppressed were blocked for good
    expect_true(all(b >= 0 & b <= nrow(sides)), info = paste("seed", seed))
    n_blocked <- n_blocked + sum(b > 0)
    # a swap whose blocker alone costs as much as the cell is refused at
    # once, the pattern untouched
    for (j in which(b > 0 & search$supp & !prep$sensitive)) {
      before <- search$supp
      w <- ns$side_witness(search, sides[b[j], ], exclude = j, add = TRUE)
      own <- if (is.null(w)) Inf else sum(search$w[w$cells[!search$supp[w$cells]]])
      if (own < search$w[j]) next
      expect_null(ns$swap_witnesses(search, sides, c(b[j], setdiff(seq_len(nrow(sides)), b[j])), j))
      expect_identical(search$supp, before)
    }
  }
  expect_gt(n_blocked, 0)
})

# A clean-up's search on a random table of 300 records (p% rule, finite a
# priori bounds: every capacity finite) with the sensitive cells and a
# share of the others suppressed, and the sides to protect; NULL when no
# cell is sensitive.
swap_search <- function(seed, dims, share) {
  ns <- asNamespace("sdcRisk")
  set.seed(seed)
  d <- data.frame(a = sprintf("A%d", sample(6, 300, TRUE)), b = sprintf("B%d", sample(4, 300, TRUE)),
                  c = sprintf("C%d", sample(3, 300, TRUE)), v = round(rlnorm(300, 5, 1.5)))
  sens <- cell_sensitivity(d, dims, "v", rule_p(10))
  prep <- ns$table_problem(sens, NULL, 3 * sens$total, 10)
  search <- ns$new_protection_search(prep, ns$suppression_cost(prep$value, "value"), ns$cell_labels(sens), 2000)
  search$supp <- prep$sensitive | runif(nrow(sens)) < share
  todo <- which(prep$sensitive)
  if (!length(todo)) return(NULL)
  list(search = search, prep = prep, sides = ns$protection_sides(search, todo, environment()))
}

# The swap bound as the clean-up computed it in R before the core did
# (R/table-suppress-cleanup.R, swap_bound()): the tests' reference.
swap_bound_in_r <- function(search, side, j) {
  st <- search$prep$structure
  rel_trips <- split(seq_along(st$rel), factor(st$rel, levels = seq_len(st$nrel)))
  i <- side$cell
  slack <- 10 * 1e-7 * (1 + side$t)
  bound <- 0
  for (tr in st$cell_trips[[i]]) {
    trips <- rel_trips[[st$rel[tr]]]
    cs <- st$cell[trips]
    keep <- cs != i & cs != j
    cs <- cs[keep]
    rise <- -st$coef[tr] * st$coef[trips[keep]] * side$dir > 0
    cap <- search$cap_dn[cs]
    cap[rise] <- search$cap_up[cs[rise]]
    s <- search$supp[cs]
    if (sum(cap[s]) >= side$t - slack) next
    pub <- !s & cap > 0
    if (!any(pub)) return(Inf)
    bound <- max(bound, min(search$w[cs[pub]]))
  }
  bound
}

test_that("the swap bounds of several sides stop at the first that reaches the limit", {
  ns <- asNamespace("sdcRisk")
  expect_identical(ns$audit_tolerance, 1e-7)
  stopped <- 0
  for (seed in 1:8) {
    sw <- swap_search(seed, c("a", "b", "c"), 0.3)
    if (is.null(sw)) next
    search <- sw$search
    prep <- sw$prep
    sides <- sw$sides
    for (j in which(search$supp & !prep$sensitive)[1:5]) {
      if (is.na(j)) next
      each <- vapply(seq_len(nrow(sides)), function(s) swap_bound_in_r(search, ns$side_at(sides, s), j), 0)
      got <- ns$swap_bounds(search, sides, j, search$w[j])
      first <- which(each >= search$w[j])[1]
      expect_identical(got, each[seq_len(if (is.na(first)) length(each) else first)])
      stopped <- stopped + !is.na(first)
      expect_identical(ns$swap_bounds(search, sides, j, Inf), each)
    }
  }
  expect_gt(stopped, 3)
})

test_that("a swap's relation bound never exceeds the new cells of the cheapest witness (mixed integer program)", {
  ns <- asNamespace("sdcRisk")
  # the cheapest witness for side (i, dir, t) without cell j, by its new
  # cells' cost: y keeps every relation, y_i = dir * t, y_j = 0, every cell
  # within its capacities, a published cell moving only when its z is 1
  cheapest <- function(search, side, j) {
    st <- search$prep$structure
    n <- st$ncell
    pub <- which(!search$supp & seq_len(n) != j & seq_len(n) != side$cell)
    k <- length(pub)
    rows <- st$nrel
    i <- c(st$rel, rows + seq_len(k), rows + k + seq_len(k), rows + seq_len(k), rows + k + seq_len(k))
    jj <- c(st$cell, pub, pub, n + seq_len(k), n + seq_len(k))
    v <- c(st$coef, rep(1, k), rep(-1, k), -search$cap_up[pub], -search$cap_dn[pub])
    mat <- ns$triplet_matrix(i, jj, v, rows + 2 * k, n + k)
    lower <- c(-search$cap_dn, numeric(k))
    upper <- c(search$cap_up, rep(1, k))
    lower[j] <- upper[j] <- 0
    lower[side$cell] <- upper[side$cell] <- side$dir * side$t
    r <- ns$solve_lp(c(numeric(n), search$w[pub]), mat, c(rep("==", rows), rep("<=", 2 * k)),
                     numeric(rows + 2 * k), lower, upper, integer = n + seq_len(k))
    if (r$status == "infeasible") Inf else r$value
  }
  refused <- 0
  pairs <- 0
  for (seed in 1:6) {
    sw <- swap_search(seed, if (seed %% 2) c("a", "b") else c("a", "b", "c"), 0.25)
    if (is.null(sw)) next
    search <- sw$search
    prep <- sw$prep
    sides <- sw$sides
    secondary <- which(search$supp & !prep$sensitive)
    for (s in sample(nrow(sides), min(8, nrow(sides)))) {
      for (j in sample(secondary, min(5, length(secondary)))) {
        side <- ns$side_at(sides, s)
        bound <- ns$swap_bound(search, side, j)
        # (the core's bound is the loop over the side's relations in R, bit
        # for bit)
        expect_identical(bound, swap_bound_in_r(search, side, j))
        best <- cheapest(search, side, j)
        expect_true(bound <= best * (1 + 1e-9) + 1e-6, info = paste(seed, s, j, bound, best))
        pairs <- pairs + 1
        refused <- refused + (bound > 0)
      }
    }
  }
  expect_gt(pairs, 60)
  # (not vacuous: many pairs need a published cell)
  expect_gt(refused, 10)
})

# A random 5 x 6 x 3 table of 200 records under the frequency and p% rules.
small_cube <- function(seed) {
  set.seed(seed)
  d <- data.frame(a = sample(letters[1:5], 200, TRUE), b = sample(LETTERS[1:6], 200, TRUE),
                  c = sample(c("x", "y", "z"), 200, TRUE), v = round(rlnorm(200, 4, 1.5)))
  cell_sensitivity(d, c("a", "b", "c"), "v", list(rule_frequency(3), rule_p(15)))
}

test_that("the clean-up is repeated only after a pass whose swaps added cells; another pass then frees nothing", {
  ns <- asNamespace("sdcRisk")
  stopped <- 0
  for (seed in 1:30) {
    sens <- small_cube(seed)
    if (!any(sens$sensitive)) next
    ps <- new_search(sens)
    prep <- ps$prep
    search <- ps$search
    todo <- ps$todo
    cost <- function() sum(search$w[search$supp & !prep$sensitive])
    ns$heuristic_pattern(search, todo, TRUE, call = NULL)
    # the passes it ran: what each freed, the cells its swaps added
    gains <- search$cleanup_log$gain
    swaps <- search$cleanup_log$swap_added
    n <- length(gains)
    expect_true(n >= 1 && n <= 3)
    # every pass but the last lowered the cost and swapped cells in
    if (n > 1) expect_true(all(gains[-n] > 0 & swaps[-n] > 0))
    # and the last freed nothing or swapped nothing in (or was the third)
    expect_true(n == 3 || gains[n] <= 1e-9 * sum(abs(prep$value)) || swaps[n] == 0)
    # a last pass that lowered the cost but swapped nothing ended the
    # clean-up: one more pass (of the old rule) frees nothing here
    if (n < 3 && gains[n] > 0 && swaps[n] == 0) {
      before <- cost()
      ns$cleanup_pattern(search, todo, call = NULL)
      expect_equal(cost(), before)
      stopped <- stopped + 1
    }
    expect_true(attr(audit_table(sens, search$supp, intervals = "none", attacker = "outsider"), "passed"))
  }
  expect_gt(stopped, 5)
})

test_that("a witness from the pool is the cheapest valid table of a scan of the pool, scaled to the side's level", {
  ns <- asNamespace("sdcRisk")
  # the clean-up's pricing of a witness (deviation_lp() with `priced`)
  priced_cost <- function(search, w, t) {
    pr <- !search$prep$sensitive[w$cells]
    cap <- ifelse(w$y > 0, search$cap_up[w$cells], search$cap_dn[w$cells])
    sum((search$w[w$cells] * abs(w$y) / pmax(pmin(cap, t), 1e-9 * t))[pr])
  }
  found <- 0
  none <- 0
  for (seed in 1:6) {
    set.seed(seed)
    d <- skewed_firms(300, 12, 6)
    sens <- cell_sensitivity(d, c("a", "b", "c"), "v", rule_p(10))
    if (!any(sens$sensitive)) next
    ps <- new_search(sens)
    prep <- ps$prep
    search <- ps$search
    todo <- ps$todo
    ns$heuristic_pattern(search, todo, TRUE, call = NULL)
    pool <- search$pool$wits
    expect_gt(length(pool), 0)
    sides <- ns$protection_sides(search, todo, NULL)
    secondary <- which(search$supp & !prep$sensitive)
    for (s in sample.int(nrow(sides), min(nrow(sides), 25L))) {
      side <- ns$side_at(sides, s)
      # (no cell left out, one secondary cell, and the cell other than the
      # side's that most tables of the pool moving the side's cell move)
      near <- unlist(lapply(pool, function(p) if (side$cell %in% p$cells) setdiff(p$cells, side$cell)))
      busiest <- if (length(near)) as.integer(names(which.max(table(near))))
      for (j in c(0L, secondary[sample.int(length(secondary), min(1L, length(secondary)))], busiest)) {
        w <- ns$pool_witness(search, side, j)
        # the scan: tables that move only suppressed cells other than j, and
        # the side's cell at least its level in its direction
        best <- Inf
        for (p in pool) {
          k <- match(side$cell, p$cells)
          if (is.na(k) || any(p$cells == j) || !all(search$supp[p$cells])) next
          m <- side$dir * p$y[k]
          if (m < side$t) next
          best <- min(best, priced_cost(search, list(cells = p$cells, y = p$y * side$t / m), side$t))
        }
        if (is.infinite(best)) {
          expect_null(w)
          none <- none + 1
          next
        }
        expect_false(is.null(w))
        expect_true(all(search$supp[w$cells]) && !any(w$cells == j))
        expect_equal(w$y[w$cells == side$cell], side$dir * side$t)
        expect_true(ns$witness_ok(search, w$cells, w$y))
        expect_equal(priced_cost(search, w, side$t), best)
        found <- found + 1
      }
    }
  }
  expect_gt(found, 30)
  expect_gt(none, 10)
})

test_that("the pool saves the clean-up's programs; its patterns pass the audit and cost about the same", {
  ns <- asNamespace("sdcRisk")
  lp <- c(pool = 0, plain = 0)
  value <- c(pool = 0, plain = 0)
  for (seed in 1:12) {
    set.seed(seed)
    d <- skewed_firms(300, 12, 6)
    sens <- cell_sensitivity(d, c("a", "b", "c"), "v", rule_p(10))
    if (!any(sens$sensitive)) next
    for (with in names(lp)) {
      p <- withr::with_options(list(sdcRisk.cleanup_pool = with == "pool"),
                               protect_table(sens, attacker = "outsider", improve = FALSE))
      supp <- p$status != "published"
      expect_true(attr(audit_table(sens, supp, intervals = "none", attacker = "outsider"), "passed"))
      lp[with] <- lp[with] + attr(p, "stats")$n_lp
      value[with] <- value[with] + sum(abs(sens$total[supp]))
    }
  }
  # (on these tables the heuristic's and the audit's programs are most of
  # them; on the bench table R4 the pool saved a third of all)
  expect_lt(lp[["pool"]], lp[["plain"]])
  expect_lt(abs(value[["pool"]] / value[["plain"]] - 1), 0.02)
})

test_that("the clean-up makes one pass against the respondents, up to three against the outsider", {
  multi <- 0
  for (seed in 1:12) {
    sens <- small_cube(seed)
    if (!any(sens$sensitive)) next
    info <- paste("seed", seed)
    out <- protect_table(sens, attacker = "outsider", improve = FALSE)
    n_out <- attr(out, "stats")$cleanup_passes
    expect_true(n_out >= 1 && n_out <= 3, info = info)
    multi <- multi + (n_out > 1)
    resp <- protect_table(sens, improve = FALSE)
    expect_identical(attr(resp, "stats")$cleanup_passes, 1L, info = info)
    s <- resp$status != "published"
    expect_true(attr(audit_table(sens, s), "passed"), info = info)
    expect_true(attr(audit_table(sens, s, attacker = "outsider"), "passed"), info = info)
    # without the clean-up, no pass
    expect_identical(attr(protect_table(sens, cleanup = FALSE, improve = FALSE), "stats")$cleanup_passes, 0L,
                     info = info)
  }
  # the grid must hold tables where the outsider's clean-up repeats
  expect_gt(multi, 1)
  # a table without a sensitive cell has nothing to clean up
  d <- data.frame(a = rep(c("x", "y"), each = 10), b = rep(c("u", "v"), 10), v = 100 + 1:20)
  calm <- cell_sensitivity(d, c("a", "b"), "v", rule_p(10))
  expect_false(any(calm$sensitive))
  for (att in c("respondents", "outsider")) {
    expect_identical(attr(protect_table(calm, attacker = att), "stats")$cleanup_passes, 0L)
  }
})

test_that("a later clean-up pass starts from the witnesses kept, without pricing every side again", {
  ns <- asNamespace("sdcRisk")
  # the heuristic and one clean-up pass, then a second pass with or
  # without pricing every side's witness again
  two_passes <- function(sens, reprice) {
    ps <- new_search(sens)
    search <- ps$search
    for (i in ps$todo) ns$protect_cell(search, i, call = NULL)
    ns$cleanup_pattern(search, ps$todo, call = NULL)
    sides <- ns$protection_sides(search, ps$todo, call = NULL)
    n_lp <- search$n_lp
    kept <- ns$kept_witnesses(search, sides)
    # (the kept witnesses: one per side, each a valid table moving its
    # side's cell by its level in its direction, found without a program)
    expect_identical(search$n_lp, n_lp)
    expect_length(kept, nrow(sides))
    for (s in seq_along(kept)) {
      w <- kept[[s]]
      expect_true(ns$witness_ok(search, w$cells, w$y))
      expect_true(all(search$supp[w$cells]))
      expect_gte(sides$dir[s] * w$y[w$cells == sides$cell[s]], sides$t[s] * (1 - 1e-9))
    }
    ns$cleanup_pattern(search, ps$todo, call = NULL, reprice = reprice)
    list(supp = search$supp, n_lp = search$n_lp - n_lp)
  }
  compared <- lp_kept <- lp_again <- 0
  for (seed in 1:30) {
    sens <- small_cube(seed)
    if (!any(sens$sensitive)) next
    again <- two_passes(sens, reprice = TRUE)
    kept <- two_passes(sens, reprice = FALSE)
    expect_true(attr(audit_table(sens, kept$supp, intervals = "none", attacker = "outsider"), "passed"),
                info = paste("seed", seed))
    expect_lte(kept$n_lp, again$n_lp)
    # pricing again frees nothing more on these tables (the same pattern)
    expect_identical(kept$supp, again$supp, info = paste("seed", seed))
    compared <- compared + 1
    lp_kept <- lp_kept + kept$n_lp
    lp_again <- lp_again + again$n_lp
  }
  expect_gt(compared, 20)
  # (measured: 274 programs against 3,272)
  expect_lt(lp_kept, lp_again / 2)
})

test_that("a pair swap replaces two cells that no single swap can, and only for less", {
  ns <- asNamespace("sdcRisk")
  # the forward heuristic and its clean-up, with and without pair swaps
  cleaned <- function(sens, pairs) {
    ps <- new_search(sens)
    ns$heuristic_pattern(ps$search, ps$todo, TRUE, call = NULL)
    if (pairs) ns$pair_pass(ps$search, ps$todo, call = NULL)
    ps
  }
  cost <- function(ps) sum(ps$search$w[ps$search$supp & !ps$prep$sensitive])
  # W14 of the sweep: no single swap lowers the heuristic's pattern, one
  # pair of its most expensive cells does (by 8%)
  sens <- acs_sweep_table("W14")$sens
  a <- cleaned(sens, FALSE)
  b <- cleaned(sens, TRUE)
  expect_lt(cost(b), 0.95 * cost(a))
  # two cells of a's pattern that b publishes, replaced by cheaper ones
  gone <- which(a$search$supp & !b$search$supp)
  new <- which(b$search$supp & !a$search$supp)
  expect_gte(length(gone), 2)
  expect_lt(sum(b$search$w[new]), sum(a$search$w[gone]))
  for (ps in list(a, b)) {
    expect_true(attr(audit_table(sens, ps$search$supp, attacker = "outsider"), "passed"))
    # every kept witness moves suppressed cells only and keeps its side
    w <- ps$search$wits
    expect_true(all(vapply(w, function(x) all(ps$search$supp[x$cells]), logical(1))))
  }
  # on small random tables: never more than without them, always audited
  changed <- 0
  for (seed in 1:30) {
    sens <- small_cube(seed)
    if (!any(sens$sensitive)) next
    a <- cleaned(sens, FALSE)
    b <- cleaned(sens, TRUE)
    expect_lte(cost(b), cost(a) * (1 + 1e-12), label = paste("seed", seed))
    expect_true(attr(audit_table(sens, b$search$supp, intervals = "none", attacker = "outsider"), "passed"),
                info = paste("seed", seed))
    changed <- changed + (cost(b) < cost(a) * (1 - 1e-9))
  }
  expect_gt(changed, 0)
})

test_that("the backward pattern is kept only when it costs less, and the outsider's pattern never costs more with it", {
  # W17 of the sweep: the forward heuristic commits to expensive margins
  # (1.099 times GaussSuppression's value); the backward pattern, from every
  # cell suppressed, costs 10% less
  tb <- acs_sweep_table("W17")
  sens <- tb$sens
  p <- protect_table(sens, attacker = "outsider", improve = FALSE)
  expect_identical(attr(p, "stats")$start, "backward")
  q <- withr::with_options(list(sdcRisk.backward = FALSE),
                           protect_table(sens, attacker = "outsider", improve = FALSE))
  expect_identical(attr(q, "stats")$start, "forward")
  expect_lt(lost(p), 0.95 * lost(q))
  expect_true(attr(audit_table(sens, p$status != "published", attacker = "outsider"), "passed"))
  # every secondary cell of the backward pattern names the cell it protects
  sec <- p$status == "secondary"
  expect_true(all(grepl("^protects ", p$reason[sec])))
  # against the respondents (the default) no backward pattern
  expect_identical(attr(protect_table(sens, intervals = "none"), "stats")$start, "forward")
  # (and without the clean-up, no backward pattern either)
  expect_identical(attr(protect_table(sens, attacker = "outsider", cleanup = FALSE), "stats")$start, "forward")
  # random tables: the cheaper of the two, audited
  starts <- character()
  for (seed in 1:30) {
    sens <- small_cube(seed)
    if (!any(sens$sensitive)) next
    p <- protect_table(sens, attacker = "outsider", intervals = "none", improve = FALSE)
    q <- withr::with_options(list(sdcRisk.backward = FALSE),
                             protect_table(sens, attacker = "outsider", intervals = "none", improve = FALSE))
    expect_lte(lost(p), lost(q) * (1 + 1e-12), label = paste("seed", seed))
    expect_true(attr(audit_table(sens, p$status != "published", attacker = "outsider"), "passed"),
                info = paste("seed", seed))
    starts <- c(starts, attr(p, "stats")$start)
  }
  expect_true(all(starts %in% c("forward", "backward")))
})
