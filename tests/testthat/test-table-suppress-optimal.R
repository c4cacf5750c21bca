# method = "optimal" of protect_table(), and its bounded form after the
# heuristic (improve = TRUE), against two references: every
# suppression pattern of tiny tables (brute force, in order of cost), and on
# larger small tables the extended model (one witness table per side of each
# sensitive cell in a single mixed integer program, Fischetti and
# Salazar-Gonzalez 2001), which is exact for whole-number tables of small
# values where its big-M constants are small.

# The cheapest pattern that passes audit_table() against `attacker`, over
# every set of non-sensitive cells added to the sensitive ones; Inf when
# none does.
brute_optimum <- function(sens, w, attacker = "outsider") {
  free <- which(!sens$sensitive)
  masks <- 0:(2^length(free) - 1)
  bits <- outer(masks, seq_along(free) - 1, function(m, b) bitwAnd(m, 2^b) > 0)
  cost <- as.vector(bits %*% w[free]) + sum(w[sens$sensitive])
  for (k in order(cost)) {
    supp <- sens$sensitive
    supp[free[bits[k, ]]] <- TRUE
    if (attr(audit_table(sens, supp, intervals = "none", attacker = attacker), "passed")) return(cost[k])
  }
  Inf
}

# The extended model: x (cells) and, per side q of a sensitive cell, a
# deviation y_q = yp - ym keeping every relation, with yp, ym <= cap x.
extended_optimum <- function(sens, w) {
  prep <- sdcRisk:::table_problem(sens, NULL, NULL, 10)
  st <- prep$structure
  n <- st$ncell
  search <- list(prep = prep, cap_up = prep$upper - prep$value, cap_dn = prep$value - prep$lower)
  sides <- NULL
  for (i in which(prep$sensitive)) {
    t <- sdcRisk:::protection_targets(search, i, NULL)
    sides <- rbind(sides, data.frame(cell = i, dir = c(1, -1), t = unname(t))[t > 0, ])
  }
  big <- sum(abs(prep$value)) + max(sides$t)
  cu <- pmin(search$cap_up, big)
  cd <- pmin(search$cap_dn, big)
  k <- nrow(sides)
  nv <- n * (1 + 2 * k)
  A <- matrix(0, 0, nv)
  dir <- character()
  for (side in seq_len(k)) {
    off <- n + (side - 1) * 2 * n
    M <- matrix(0, st$nrel, nv)
    M[cbind(st$rel, off + st$cell)] <- st$coef
    M[cbind(st$rel, off + n + st$cell)] <- -st$coef
    C <- matrix(0, 2 * n, nv)
    C[cbind(1:n, off + 1:n)] <- 1
    C[cbind(1:n, 1:n)] <- -cu
    C[cbind(n + 1:n, off + n + 1:n)] <- 1
    C[cbind(n + 1:n, 1:n)] <- -cd
    A <- rbind(A, M, C)
    dir <- c(dir, rep("==", st$nrel), rep("<=", 2 * n))
  }
  lb <- numeric(nv)
  ub <- c(rep(1, n), rep(c(cu, cd), k))
  lb[1:n][prep$sensitive] <- 1
  for (side in seq_len(k)) {
    off <- n + (side - 1) * 2 * n
    at <- if (sides$dir[side] > 0) off + sides$cell[side] else off + n + sides$cell[side]
    other <- if (sides$dir[side] > 0) off + n + sides$cell[side] else off + sides$cell[side]
    lb[at] <- sides$t[side]
    ub[other] <- 0
  }
  r <- Rglpk::Rglpk_solve_LP(c(ifelse(prep$sensitive, 0, w), numeric(nv - n)), A, dir,
                             numeric(nrow(A)), types = c(rep("B", n), rep("C", nv - n)),
                             bounds = list(lower = list(ind = 1:nv, val = lb),
                                           upper = list(ind = 1:nv, val = ub)))
  stopifnot(r$status == 0)
  sum(w[r$solution[1:n] > 0.5])
}

# Replaces the package's solve_lp() for the rest of the calling test.
local_solver <- function(fun, env = parent.frame()) local_package_function("solve_lp", fun, env)

# The package's solve_lp() `real` with every integer program stopped early:
# with `status` "feasible" (the solution kept) or "failed" (none).
integer_programs_stopping <- function(real, status) {
  # (forced now: once the mock is in place, sdcRisk:::solve_lp is the mock)
  force(real)
  force(status)
  function(..., integer = NULL) {
    r <- real(..., integer = integer)
    if (length(integer)) {
      r$status <- status
      if (status == "failed") r$solution <- NULL
    }
    r
  }
}

# A 4 x 3 table of 60 records with sensitive cells under the frequency and
# p% rules, for the solvers that stop early.
stopping_table <- function() {
  set.seed(3)
  d <- data.frame(a = sample(letters[1:4], 60, TRUE), b = sample(LETTERS[1:3], 60, TRUE),
                  v = round(rlnorm(60, 5, 2)))
  cell_sensitivity(d, c("a", "b"), "v", list(rule_frequency(3), rule_p(15)))
}

test_that("the optimum equals brute force over every pattern of tiny tables", {
  checked <- 0
  tabs <- tiny_tables()
  for (name in names(tabs)) {
    sens <- tabs[[name]]
    for (cost in c("value", "cells")) {
      info <- paste(name, cost)
      w <- sdcRisk:::suppression_cost(sens$total, cost)
      opt <- protect_table(sens, cost = cost, method = "optimal", intervals = "none", attacker = "outsider")
      best <- brute_optimum(sens, w)
      expect_true(attr(opt, "stats")$optimal, info = info)
      expect_equal(lost(opt, w), best, tolerance = 1e-9, info = info)
      expect_lte(attr(opt, "stats")$lower_bound, best * (1 + 1e-6) + 1e-9)
      expect_true(attr(audit_table(sens, opt$status != "published", attacker = "outsider"), "passed"), info = info)
      checked <- checked + 1
    }
  }
  expect_gte(checked, 25)
})

test_that("against the respondents the optimum equals brute force over every pattern of tiny tables", {
  checked <- 0
  tabs <- tiny_tables()
  for (name in names(tabs)[seq(1, length(tabs), by = 2)]) {
    sens <- tabs[[name]]
    for (cost in c("value", "cells")) {
      info <- paste(name, cost)
      w <- sdcRisk:::suppression_cost(sens$total, cost)
      best <- brute_optimum(sens, w, attacker = "respondents")
      if (!is.finite(best)) {
        expect_error(protect_table(sens, cost = cost, method = "optimal", intervals = "none"),
                     class = "sdcRisk_error_unprotectable", info = info)
        next
      }
      opt <- protect_table(sens, cost = cost, method = "optimal", intervals = "none")
      expect_true(attr(opt, "stats")$optimal, info = info)
      expect_equal(lost(opt, w), best, tolerance = 1e-9, info = info)
      expect_lte(attr(opt, "stats")$lower_bound, best * (1 + 1e-6) + 1e-9)
      expect_true(attr(audit_table(sens, opt$status != "published"), "passed"), info = info)
      checked <- checked + 1
    }
  }
  expect_gte(checked, 10)
})

test_that("the optimum equals the extended model on small 2- and 3-way tables", {
  checked <- 0
  for (seed in 1:12) {
    set.seed(seed)
    three <- seed %% 2 == 0
    n <- 30
    d <- data.frame(a = sample(c("a", "b", "c"), n, TRUE), b = sample(c("x", "y"), n, TRUE),
                    c = sample(c("u", "v"), n, TRUE), v = sample(1:6, n, TRUE))
    by <- if (three) c("a", "b", "c") else c("a", "b")
    sens <- cell_sensitivity(d, by, "v", list(rule_frequency(3), rule_p(30)))
    if (!any(sens$sensitive)) next
    w <- sdcRisk:::suppression_cost(sens$total, "value")
    opt <- protect_table(sens, method = "optimal", intervals = "none", attacker = "outsider")
    expect_true(attr(opt, "stats")$optimal, info = paste("seed", seed))
    expect_equal(lost(opt, w), extended_optimum(sens, w), tolerance = 1e-9,
                 info = paste("seed", seed))
    checked <- checked + 1
  }
  expect_gte(checked, 8)
})

test_that("the optimum is never worse than the heuristic, and passes the audit (random tables)", {
  for (seed in 1:12) {
    set.seed(seed)
    n <- sample(40:120, 1)
    d <- random_firms(n, sample(2:5, 1), sample(2:4, 1))
    by <- if (seed %% 2) c("a", "b", "c") else c("a", "b")
    sens <- cell_sensitivity(d, by, "v", list(rule_frequency(3), rule_p(15)))
    info <- paste("seed", seed)
    for (cost in c("value", "cells")) {
      w <- sdcRisk:::suppression_cost(sens$total, cost)
      heur <- protect_table(sens, cost = cost, intervals = "none", attacker = "outsider")
      opt <- protect_table(sens, cost = cost, method = "optimal", intervals = "none", attacker = "outsider")
      expect_lte(lost(opt, w), lost(heur, w) * (1 + 1e-12), label = info)
      expect_gte(lost(opt, w), attr(opt, "stats")$lower_bound * (1 - 1e-6))
      expect_true(attr(audit_table(sens, opt$status != "published", attacker = "outsider"), "passed"), info = info)
    }
  }
})

test_that("large values do not break the optimum (a 3-way table with one sensitive cell)", {
  # the former extended model suppressed every margin here: its big-M of the
  # order of the table total made GLPK accept a pattern 14 times the optimum
  set.seed(7)
  n <- 3000
  d <- data.frame(s = sample(1:2, n, TRUE), p = sample(sprintf("P%d", 1:5), n, TRUE),
                  e = sample(1:2, n, TRUE, prob = c(0.02, 0.98)),
                  v = round(rlnorm(n, 10.5, 1)))
  d$v[1] <- 6e6
  sens <- cell_sensitivity(d, c("s", "p", "e"), "v", rule_p(25))
  expect_gte(sum(sens$sensitive), 1)
  heur <- protect_table(sens, intervals = "none", attacker = "outsider")
  opt <- protect_table(sens, method = "optimal", intervals = "none", attacker = "outsider")
  w <- sdcRisk:::suppression_cost(sens$total, "value")
  expect_true(attr(opt, "stats")$optimal)
  expect_lte(lost(opt, w), lost(heur, w))
  expect_false(any(opt$status[opt$level == "(total)"] == "secondary"))
})

test_that("no sensitive cell: the optimal method publishes everything, like the heuristic", {
  d <- data.frame(a = rep(c("x", "y"), each = 10), v = 1:20)
  sens <- cell_sensitivity(d, "a", "v", rule_p(10))
  expect_false(any(sens$sensitive))
  opt <- protect_table(sens, method = "optimal", attacker = "outsider")
  expect_true(all(opt$status == "published"))
  expect_true(attr(opt, "stats")$optimal)
})

test_that("a solver that stops early leaves the heuristic's pattern, marked not optimal", {
  sens <- stopping_table()
  heur <- protect_table(sens, intervals = "none", improve = FALSE, attacker = "outsider")
  real <- sdcRisk:::solve_lp
  for (status in c("feasible", "failed")) {
    # every integer program stops early (with or without a solution)
    local_solver(integer_programs_stopping(real, status))
    opt <- protect_table(sens, method = "optimal", intervals = "none", attacker = "outsider")
    expect_false(attr(opt, "stats")$optimal)
    w <- sdcRisk:::suppression_cost(sens$total, "value")
    # the better of the two patterns, never one unproved by the separation
    if (status == "failed") expect_identical(opt$status, heur$status)
    expect_lte(lost(opt, w), lost(heur, w))
    expect_true(attr(audit_table(sens, opt$status != "published", attacker = "outsider"), "passed"))
  }
})

test_that("a mixed integer program stopped by its node limit returns a feasible integer solution and a valid bound", {
  # a random set cover whose root node does not close the gap, so that one
  # node stops HiGHS with its best solution (the path of improve = TRUE,
  # whose masters have a node budget)
  set.seed(11)
  n <- 100
  m <- 150
  a <- matrix(rbinom(m * n, 1, 0.03), m, n)
  a[cbind(seq_len(m), sample(n, m, TRUE))] <- 1
  w <- runif(n, 1, 3)
  nz <- which(a != 0, arr.ind = TRUE)
  mat <- sdcRisk:::triplet_matrix(nz[, 1], nz[, 2], a[nz], m, n)
  r <- sdcRisk:::solve_lp(w, mat, rep(">=", m), rep(1, m), rep(0, n), rep(1, n),
                          integer = seq_len(n), mip_nodes = 1L)
  expect_true(r$status %in% c("feasible", "optimal"))
  x <- r$solution
  expect_length(x, n)
  expect_true(all(abs(x - round(x)) < 1e-6))
  expect_true(all(a %*% round(x) >= 1))
  expect_equal(r$value, sum(w * x), tolerance = 1e-9)
  expect_lte(r$bound, r$value + 1e-9)
  # a bound below the value says the search was cut short, and only then
  if (r$status == "feasible") expect_lt(r$bound, r$value - 1e-9)
})

test_that("a time-limited run's lower bound never exceeds the proved optimum", {
  # the master's dual bound counts once the time runs out; it must stay below
  # the cost of every pattern that passes the audit
  for (seed in 1:4) {
    set.seed(seed)
    n <- 150
    d <- random_firms(n, 6, 5)
    sens <- cell_sensitivity(d, c("a", "b", "c"), "v", list(rule_frequency(3), rule_p(15)))
    w <- sdcRisk:::suppression_cost(sens$total, "value")
    quick <- protect_table(sens, method = "optimal", intervals = "none", time_limit = 1, attacker = "outsider")
    full <- protect_table(sens, method = "optimal", intervals = "none", time_limit = 600, attacker = "outsider")
    info <- paste("seed", seed)
    expect_true(attr(full, "stats")$optimal, info = info)
    secondary <- function(p) sum(w[p$status != "published" & !sens$sensitive])
    expect_lte(attr(quick, "stats")$lower_bound, secondary(full) * (1 + 1e-6) + 1e-9, label = info)
    expect_lte(attr(quick, "stats")$lower_bound, secondary(quick) * (1 + 1e-6) + 1e-9, label = info)
    expect_true(attr(audit_table(sens, quick$status != "published", attacker = "outsider"), "passed"), info = info)
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
      opt <- protect_table(sens, cost = cost, method = "optimal", intervals = "none", attacker = "outsider")
      heur <- protect_table(sens, cost = cost, intervals = "none", attacker = "outsider")
      # every subset of the other cells, on top of the sensitive ones
      best <- Inf
      for (m in 0:(2^length(free) - 1)) {
        supp <- sens$sensitive
        supp[free[bitwAnd(m, 2^(seq_along(free) - 1)) > 0]] <- TRUE
        if (sum(w[supp]) >= best) next
        if (attr(audit_table(sens, supp, intervals = "none", attacker = "outsider"), "passed")) best <- sum(w[supp])
      }
      expect_true(isTRUE(attr(opt, "stats")$optimal), info = info)
      expect_equal(lost(opt, w), best, tolerance = 1e-9, info = info)
      expect_gte(lost(heur, w), best - 1e-9)
      expect_true(attr(audit_table(sens, opt$status != "published", attacker = "outsider"), "passed"), info = info)
      checked <- checked + 1
    }
  }
  expect_gte(checked, 10)
})

# improve = TRUE: the cut generation from the heuristic's pattern, with a
# fixed budget of work

test_that("the improvement lies between brute force and the heuristic on tiny tables", {
  tabs <- tiny_tables()
  expect_gte(length(tabs), 12)
  for (info in names(tabs)) {
    sens <- tabs[[info]]
    for (cost in c("value", "cells")) {
      w <- sdcRisk:::suppression_cost(sens$total, cost)
      plain <- protect_table(sens, cost = cost, intervals = "none", improve = FALSE, attacker = "outsider")
      imp <- protect_table(sens, cost = cost, improve = TRUE, attacker = "outsider")
      best <- brute_optimum(sens, w)
      expect_false(is.na(attr(imp, "stats")$improved), info = info)
      expect_lte(lost(imp, w), lost(plain, w) * (1 + 1e-12), label = paste(info, cost))
      expect_gte(lost(imp, w), best * (1 - 1e-9), label = paste(info, cost))
      # the exact intervals of the default audit, and an independent one
      expect_true(all(imp$protected[imp$status == "primary"]), info = info)
      expect_true(attr(audit_table(sens, imp$status != "published", attacker = "outsider"), "passed"), info = info)
    }
  }
})

# Random firm tables of 2 or 3 variables for the improvement's tests (NULL
# when no cell is sensitive).
improvement_table <- function(seed) {
  set.seed(seed)
  n <- sample(60:200, 1)
  d <- random_firms(n, sample(3:7, 1), sample(2:5, 1))
  by <- if (seed %% 2) c("a", "b", "c") else c("a", "b")
  sens <- cell_sensitivity(d, by, "v", list(rule_frequency(3), rule_p(15)))
  if (any(sens$sensitive)) sens
}

test_that("the improvement is never worse than the heuristic, audited and deterministic (random tables)", {
  n_better <- 0
  for (seed in 1:30) {
    sens <- improvement_table(seed)
    if (is.null(sens)) next
    info <- paste("seed", seed)
    w <- sdcRisk:::suppression_cost(sens$total, "value")
    plain <- protect_table(sens, intervals = "none", improve = FALSE, attacker = "outsider")
    imp <- protect_table(sens, attacker = "outsider")
    again <- protect_table(sens, attacker = "outsider")
    expect_identical(imp$status, again$status, info = info)
    expect_lte(lost(imp, w), lost(plain, w) * (1 + 1e-12), label = info)
    expect_true(attr(audit_table(sens, imp$status != "published", attacker = "outsider"), "passed"), info = info)
    better <- lost(imp, w) < lost(plain, w) * (1 - 1e-12)
    expect_identical(attr(imp, "stats")$improved, better, info = info)
    # every secondary cell names the sensitive cell whose witness moves it
    sec <- imp$reason[imp$status == "secondary"]
    expect_true(all(startsWith(sec, "protects ")), info = info)
    expect_true(all(sub("^protects ", "", sec) %in% sdcRisk:::cell_labels(sens)[sens$sensitive]),
                info = info)
    n_better <- n_better + better
  }
  # the new path does change patterns on some of these tables
  expect_gte(n_better, 1)
})

test_that("the improvement ends after two rounds that protect no side, the optimal method does not", {
  ns <- asNamespace("sdcRisk")
  sens <- stopping_table()
  prep <- ns$table_problem(sens, NULL, NULL, 10, arg = "x")
  search <- ns$new_protection_search(prep, ns$suppression_cost(prep$value, "value"), ns$cell_labels(sens), 2000)
  todo <- which(prep$sensitive)
  for (i in todo) ns$protect_cell(search, i, call = environment())
  n_sides <- nrow(ns$protection_sides(search, todo, environment()))
  expect_gte(n_sides, 2)
  # a separation that finds, round after round, the numbers of unprotected
  # sides in `found`, then none (the master's pattern protects every side)
  rounds <- 0
  found <- rep(n_sides, 3)
  # (the rounds decided without programs, stall_ahead(), are tested below)
  local_package_function("stall_ahead", function(cg, x, call, share = 1) FALSE)
  local_package_function("separate_pattern", function(cg, x) {
    rounds <<- rounds + 1
    if (rounds <= length(found)) as.integer(found[rounds]) else 0L
  })
  run <- function(stall) {
    rounds <<- 0
    ns$optimal_pattern(search, todo, search$supp, Inf, call = environment(), stall_rounds = stall)
  }
  # the improvement's rule: ended by the second such round, with the incumbent
  out <- run(ns$improve_stall_rounds)
  expect_identical(rounds, 2)
  expect_null(out$supp)
  # without it (the optimal method), on to the round that protects every side
  # (the mock adds no constraint: the master's pattern, the sensitive cells
  # alone, comes back as the cheaper one)
  out <- run(Inf)
  expect_identical(rounds, length(found) + 1)
  expect_identical(which(out$supp), todo)
  # a round that protects some side starts the count again (stall_share =
  # 1, every side unprotected: the optimal_pattern() default): all, some,
  # all, then none protects every side; never two "all" rounds in a row
  found <- c(n_sides, n_sides - 1, n_sides)
  out <- run(2)
  expect_identical(rounds, length(found) + 1)
  expect_identical(which(out$supp), todo)
  # and two in a row after it end the search there
  found <- c(n_sides, n_sides - 1, n_sides, n_sides, n_sides)
  out <- run(2)
  expect_identical(rounds, 4)
  expect_null(out$supp)
  # the improvement's share (improve_stall_share): a round that leaves at
  # least that share of the sides unprotected is stalled, one below it
  # starts the count again
  share <- ns$improve_stall_share
  expect_gt(share, 0)
  expect_lt(share, 1)
  at <- as.integer(ceiling(share * n_sides))
  below <- at - 1L
  # (a count below the share that still leaves some side unprotected)
  expect_gt(below, 0L)
  run_share <- function() {
    rounds <<- 0
    ns$optimal_pattern(search, todo, search$supp, Inf, call = environment(), stall_rounds = 2,
                       stall_share = share)
  }
  found <- c(n_sides, at)
  out <- run_share()
  expect_identical(rounds, 2)
  expect_null(out$supp)
  found <- c(n_sides, below, at)
  out <- run_share()
  expect_identical(rounds, length(found) + 1)
  expect_identical(which(out$supp), todo)
})

test_that("a round the relation bounds prove stalled ends the improvement before its programs, with the same pattern", {
  ns <- asNamespace("sdcRisk")
  fewer <- 0
  for (seed in 1:30) {
    sens <- improvement_table(seed)
    if (is.null(sens)) next
    info <- paste("seed", seed)
    for (att in c("outsider", "respondents")) {
      ahead <- protect_table(sens, attacker = att)
      every <- (function() {
        local_package_function("stall_ahead", function(cg, x, call, share = 1) FALSE)
        protect_table(sens, attacker = att)
      })()
      expect_identical(ahead$status, every$status, info = info)
      expect_identical(attr(ahead, "stats")$improved, attr(every, "stats")$improved, info = info)
      expect_lte(attr(ahead, "stats")$n_lp, attr(every, "stats")$n_lp)
      fewer <- fewer + (attr(ahead, "stats")$n_lp < attr(every, "stats")$n_lp)
    }
  }
  # the rule does end rounds on these tables
  expect_gte(fewer, 5)
})

test_that("sides_unprotected() proves only sides the exact audit leaves short of their targets", {
  ns <- asNamespace("sdcRisk")
  checked <- proven <- 0
  for (seed in 1:12) {
    set.seed(seed)
    d <- random_firms(sample(60:150, 1), sample(3:6, 1), sample(2:4, 1))
    sens <- cell_sensitivity(d, c("a", "b"), "v", list(rule_frequency(3), rule_p(15)))
    if (!any(sens$sensitive)) next
    prep <- ns$table_problem(sens, NULL, NULL, 10, arg = "x")
    search <- ns$new_protection_search(prep, ns$suppression_cost(prep$value, "value"), ns$cell_labels(sens), 2000)
    todo <- which(prep$sensitive)
    for (i in todo) ns$protect_cell(search, i, call = environment())
    cg <- ns$new_cut_generation(search, todo, prep$sensitive, Inf, Inf, NULL, environment())
    # patterns from the sensitive cells alone to all but a few cells
    for (share in c(0, 0.2, 0.5, 0.8)) {
      x <- as.numeric(prep$sensitive | runif(length(prep$value)) < share)
      u <- ns$sides_unprotected(cg, x, environment())
      a <- ns$audit_cells(prep, x > 0.5, cg$sides$cell, exact = TRUE, call = environment())
      room <- ifelse(cg$sides$dir > 0, a$upper - prep$value[cg$sides$cell], prep$value[cg$sides$cell] - a$lower)
      # proved short: the exact interval is short too
      expect_true(all(room[u] < cg$sides$t[u]), info = paste("seed", seed, "share", share))
      checked <- checked + length(u)
      proven <- proven + sum(u)
    }
  }
  expect_gt(proven, 20)
  expect_gt(checked - proven, 20)
})

test_that("a failing solver in the improvement leaves the heuristic's pattern", {
  sens <- stopping_table()
  plain <- protect_table(sens, intervals = "none", improve = FALSE, attacker = "outsider")
  local_solver(integer_programs_stopping(sdcRisk:::solve_lp, "failed"))
  imp <- protect_table(sens, intervals = "none", improve = TRUE, attacker = "outsider")
  expect_identical(imp$status, plain$status)
  expect_false(attr(imp, "stats")$improved)
})

test_that("improve takes TRUE, FALSE or \"auto\"", {
  d <- data.frame(a = rep(c("x", "y"), each = 3), v = c(1, 2, 300, 4, 5, 6))
  sens <- cell_sensitivity(d, "a", "v", rule_p(10))
  expect_error(protect_table(sens, improve = "yes", attacker = "outsider"), class = "sdcRisk_error_argument")
  expect_error(protect_table(sens, improve = NA, attacker = "outsider"), class = "sdcRisk_error_argument")
  expect_error(protect_tables(list(sens, sens), improve = 1, attacker = "outsider"), class = "sdcRisk_error_argument")
})

# side_separation(): the bounded improvement's constraints from the program
# over a pattern's suppressed cells (HiGHS' dual values), against
# capacity_cut()'s dual program over the whole table and brute force.

# The heuristic's search state of a table (its witnesses for every sensitive
# cell), as the improvement starts from it.
# (the sensitive cells in the table's order)
heuristic_search <- function(sens) {
  s <- new_search(sens)
  todo <- which(s$prep$sensitive)
  for (i in todo) asNamespace("sdcRisk")$protect_cell(s$search, i, call = environment())
  list(prep = s$prep, search = s$search, todo = todo)
}

test_that("side_separation() decides as the dual program and its constraint is valid for every protecting pattern (tiny tables)", {
  ns <- asNamespace("sdcRisk")
  tabs <- tiny_tables()
  n_cut <- 0
  n_prot <- 0
  for (name in names(tabs)[1:6]) {
    h <- heuristic_search(tabs[[name]])
    prep <- h$prep
    search <- h$search
    todo <- h$todo
    cg <- ns$new_cut_generation(search, todo, search$supp, Inf, Inf, NULL, environment())
    cg$quick_cuts <- TRUE
    free <- which(!prep$sensitive)
    masks <- 0:(2^length(free) - 1)
    if (length(masks) > 64) masks <- masks[unique(round(seq(1, length(masks), length.out = 64)))]
    bits <- outer(masks, seq_along(free) - 1, function(m, b) bitwAnd(m, 2^b) > 0)
    pattern <- function(k) {
      x <- as.numeric(prep$sensitive)
      x[free[bits[k, ]]] <- 1
      x
    }
    for (s in seq_len(nrow(cg$sides))) {
      side <- cg$sides[s, ]
      # which patterns protect the side, by the dual program over the whole table
      protects <- vapply(seq_along(masks), function(k) {
        is.null(ns$capacity_cut(search, side$cell, side$dir, side$t, pattern(k)))
      }, logical(1))
      for (k in seq_along(masks)[seq(1, length(masks), by = 3)]) {
        info <- paste(name, "side", s, "pattern", k)
        x <- pattern(k)
        sep <- ns$side_separation(cg, s, x)
        expect_identical(isTRUE(sep$protected), protects[k], info = info)
        if (protects[k]) {
          n_prot <- n_prot + 1
          next
        }
        expect_false(is.null(sep$cut), info = info)
        v <- numeric(length(x))
        v[sep$cut$j] <- sep$cut$v
        # violated at x, by as much as the dual program's constraint
        ref <- ns$capacity_cut(search, side$cell, side$dir, side$t, x)
        vr <- numeric(length(x))
        vr[ref$j] <- ref$v
        expect_lt(sum(v * x), 1, label = info)
        expect_equal(sum(v * x), sum(vr * x), tolerance = 1e-6, info = info)
        # met by every pattern that protects the side
        for (z in which(protects)) expect_gte(sum(v * pattern(z)), 1 - 1e-7, label = info)
        n_cut <- n_cut + 1
      }
    }
  }
  expect_gte(n_cut, 20)
  expect_gte(n_prot, 20)
})

test_that("side_separation() takes a side with no move from its other side's mirrored multipliers, as valid as the program's", {
  ns <- asNamespace("sdcRisk")
  tabs <- tiny_tables()
  n_mirror <- 0
  for (name in names(tabs)[1:6]) {
    h <- heuristic_search(tabs[[name]])
    prep <- h$prep
    search <- h$search
    todo <- h$todo
    free <- which(!prep$sensitive)
    masks <- 0:(2^length(free) - 1)
    if (length(masks) > 32) masks <- masks[unique(round(seq(1, length(masks), length.out = 32)))]
    pattern <- function(m) {
      x <- as.numeric(prep$sensitive)
      x[free[bitwAnd(m, 2^(seq_along(free) - 1)) > 0]] <- 1
      x
    }
    pats <- lapply(masks, pattern)
    for (x in pats) {
      # every side at one pattern in turn, as separate_pattern() takes them
      # (the other side of a cell first)
      cg <- ns$new_cut_generation(search, todo, search$supp, Inf, Inf, NULL, environment())
      cg$quick_cuts <- TRUE
      for (s in seq_len(nrow(cg$sides))) {
        side <- cg$sides[s, ]
        info <- paste(name, "side", s)
        before <- cg$n_lp
        sep <- ns$side_separation(cg, s, x)
        ref <- ns$capacity_cut(search, side$cell, side$dir, side$t, x)
        expect_identical(isTRUE(sep$protected), is.null(ref), info = info)
        if (is.null(ref)) next
        expect_false(is.null(sep$cut), info = info)
        if (cg$n_lp > before) next
        # no program: the mirrored multipliers' constraint is violated at x
        # by as much as the dual program's, and met by every pattern that
        # protects the side
        n_mirror <- n_mirror + 1
        v <- numeric(length(x))
        v[sep$cut$j] <- sep$cut$v
        vr <- numeric(length(x))
        vr[ref$j] <- ref$v
        expect_lt(sum(v * x), 1, label = info)
        expect_equal(sum(v * x), sum(vr * x), tolerance = 1e-6, info = info)
        for (z in pats) {
          if (is.null(ns$capacity_cut(search, side$cell, side$dir, side$t, z))) {
            expect_gte(sum(v * z), 1 - 1e-7, label = info)
          }
        }
      }
    }
  }
  expect_gte(n_mirror, 10)
})

test_that("the improvement's constraints keep the optimal method's own (method = \"optimal\" is unchanged)", {
  ns <- asNamespace("sdcRisk")
  calls <- local_call_count("side_separation")
  set.seed(4)
  d <- random_firms(150, 6, 4)
  sens <- cell_sensitivity(d, c("a", "b"), "v", list(rule_frequency(3), rule_p(15)))
  opt <- protect_table(sens, method = "optimal", attacker = "outsider")
  expect_equal(calls$n, 0)
  imp <- protect_table(sens, improve = TRUE, attacker = "outsider")
  expect_gt(calls$n, 0)
  expect_gte(lost(imp), lost(opt) * (1 - 1e-9))
})

test_that("the improvement's first master program, without constraints, is the sensitive cells alone", {
  ns <- asNamespace("sdcRisk")
  cg <- new.env()
  cg$search <- list(prep = list(structure = list(ncell = 4L)))
  cg$cuts <- list()
  cg$fixed <- c(TRUE, FALSE, TRUE, FALSE)
  cg$w <- c(0, 2, 0, 3)
  cg$n_lp <- 0L
  r <- ns$master_program(cg, integer = TRUE)
  expect_identical(r$solution, c(1, 0, 1, 0))
  expect_identical(r[c("status", "value", "bound")], list(status = "optimal", value = 0, bound = 0))
  # (no program was solved for it)
  expect_identical(cg$n_lp, 0L)
  # a secondary cell that costs nothing could be in an optimum too: HiGHS
  # decides
  cg$w <- c(0, 0, 0, 3)
  cg$best_cost <- 3
  cg$incumbent <- c(TRUE, TRUE, TRUE, FALSE)
  cg$left <- function() 10
  r <- ns$master_program(cg, integer = TRUE)
  expect_identical(cg$n_lp, 1L)
  expect_identical(r$status, "optimal")
  expect_equal(r$value, 0)
  expect_equal(r$solution[c(1, 3, 4)], c(1, 1, 0))
})

test_that("partner_rows(): a row is violated exactly when a secondary cell is suppressed alone in a relation, and publishing such cells changes no interval (tiny tables)", {
  ns <- asNamespace("sdcRisk")
  tabs <- tiny_tables()
  alone_seen <- 0
  for (name in names(tabs)) {
    sens <- tabs[[name]]
    prep <- ns$table_problem(sens, NULL, NULL, 10)
    st <- prep$structure
    rows <- ns$partner_rows(prep)
    own <- rows$j[rows$v < 0]
    expect_identical(length(own), rows$nrow, info = name)
    expect_false(any(prep$sensitive[own]), info = name)
    # one row per (secondary cell, relation) pair
    pairs <- unique(data.frame(cell = st$cell, rel = st$rel)[!prep$sensitive[st$cell], ])
    expect_identical(rows$nrow, nrow(pairs), info = name)
    set.seed(nchar(name) + rows$nrow)
    for (draw in 1:6) {
      supp <- prep$sensitive | stats::runif(st$ncell) < 0.4
      lhs <- vapply(split(rows$v * supp[rows$j], rows$i), sum, numeric(1))
      # cells suppressed alone in some relation, found from the relations
      n_supp <- tabulate(st$rel[supp[st$cell]], st$nrel)
      alone <- unique(st$cell[supp[st$cell] & n_supp[st$rel] == 1 & !prep$sensitive[st$cell]])
      expect_setequal(own[lhs < 0], alone)
      if (!length(alone)) next
      # publishing them (again until none is left) leaves every interval the same
      pub <- supp
      repeat {
        n_pub <- tabulate(st$rel[pub[st$cell]], st$nrel)
        drop <- unique(st$cell[pub[st$cell] & n_pub[st$rel] == 1 & !prep$sensitive[st$cell]])
        if (!length(drop)) break
        pub[drop] <- FALSE
      }
      a <- audit_table(sens, supp, attacker = "outsider", intervals = "suppressed")
      b <- audit_table(sens, pub, attacker = "outsider", intervals = "suppressed")
      # (an audit has a row per suppressed cell, in the table's order)
      full <- function(au, on, col) replace(rep(NA_real_, length(on)), on, au[[col]])
      for (col in c("lower", "upper")) {
        expect_equal(full(a, supp, col)[pub], full(b, pub, col)[pub], tolerance = 1e-9, info = name)
      }
      expect_identical(attr(a, "passed"), attr(b, "passed"))
      ra <- audit_table(sens, supp, attacker = "respondents", intervals = "none")
      rb <- audit_table(sens, pub, attacker = "respondents", intervals = "none")
      expect_identical(attr(ra, "passed"), attr(rb, "passed"))
      alone_seen <- alone_seen + 1
    }
  }
  expect_gte(alone_seen, 20)
})

test_that("with the partner rows the optimal method proves the optimum of the sweep's 218-cell table (W14)", {
  # (without them the capacity constraints alone took 452 s to prove the
  # same optimum, 58,289,410: bench/README.md, thirty-sixth session)
  tab <- acs_sweep_table("W14")
  heur <- protect_table(tab$sens, attacker = "outsider")
  opt <- protect_table(tab$sens, attacker = "outsider", method = "optimal", time_limit = 600)
  st <- attr(opt, "stats")
  expect_true(st$optimal)
  expect_equal(lost(opt), 58289410)
  expect_lte(st$lower_bound + sum(abs(tab$sens$total[tab$sens$sensitive])), lost(opt) * (1 + 1e-6))
  expect_lt(lost(opt), lost(heur))
  # the heuristic is within 5% of it (issue 32, item 2)
  expect_lt(lost(heur), 1.05 * lost(opt))
  expect_true(attr(audit_table(tab$sens, opt$status != "published", attacker = "outsider"), "passed"))
})

test_that("the optimal method's repaired master patterns are protected, cheaper than the heuristic's, and kept when its rounds run out (W14)", {
  ns <- asNamespace("sdcRisk")
  got <- new.env()
  suppressMessages(trace("exact_pattern_step", tracer = function() {
    f <- parent.frame()
    got$search <- f$search
    got$todo <- f$todo
  }, where = ns, print = FALSE))
  withr::defer(suppressMessages(untrace("exact_pattern_step", where = ns)))
  tab <- acs_sweep_table("W14")
  heur <- protect_table(tab$sens, attacker = "outsider")
  search <- got$search
  heur_cost <- sum(search$w[search$supp & !search$prep$sensitive])
  # three master programs: no proof, and the repairs of the second and third
  # master patterns (the first, without constraints, is the sensitive cells
  # alone, not repaired) beat the heuristic
  opt <- ns$optimal_pattern(search, got$todo, search$supp, Inf, call = NULL, max_rounds = 3,
                            partners = TRUE, repair = ns$repair_plan("optimal"))
  expect_false(opt$optimal)
  expect_null(opt$supp)
  rep <- opt$search
  expect_false(is.null(rep))
  rep_cost <- sum(rep$w[rep$supp & !search$prep$sensitive])
  expect_lt(rep_cost, heur_cost)
  expect_true(all(rep$supp[search$prep$sensitive]))
  # its witness tables protect every side: the exact audit passes
  expect_true(attr(audit_table(tab$sens, rep$supp, attacker = "outsider"), "passed"))
  expect_true(all(vapply(ns$pattern_witnesses(rep), function(w) all(rep$supp[w$cells]), logical(1))))
  # the heuristic's search is left as it was
  expect_identical(sum(search$w[search$supp & !search$prep$sensitive]), heur_cost)
  # without the repair the same rounds return nothing
  plain <- ns$optimal_pattern(search, got$todo, search$supp, Inf, call = NULL, max_rounds = 3,
                              partners = TRUE)
  expect_null(plain$supp)
  expect_null(plain$search)
  # protect_table() repairs against the outsider only (a repaired pattern
  # is not audited against the respondents)
  calls <- local_call_count("repair_incumbent")
  protect_table(stopping_table(), method = "optimal")
  expect_identical(calls$n, 0)
  full <- protect_table(tab$sens, attacker = "outsider", method = "optimal", time_limit = 600)
  expect_gt(calls$n, 0)
  expect_true(attr(full, "stats")$optimal)
  expect_equal(lost(full), 58289410)
})

test_that("against the outsider the improvement repairs its master patterns: the 350-cell sweep table within 5% of its optimum", {
  # the optimum of the seed-1 sweep's 350-cell table (race x age x PUMA x
  # education, 4 PUMAs, p% rule p = 10), proved by method = "optimal" in
  # 622 s (bench/README.md, thirty-seventh session); the improvement
  # without repairs stops at 431,670,520, 6.4% above it
  optimum <- 405685030
  calls <- local_call_count("repair_incumbent")
  for (id in c("W1", "W20")) {
    tab <- acs_sweep_table(id)
    expect_identical(nrow(tab$sens), 350L)
    n0 <- calls$n
    p <- protect_table(tab$sens, attacker = "outsider")
    expect_gt(calls$n, n0)
    st <- attr(p, "stats")
    expect_true(st$improved, info = id)
    # within 5% of the optimum (issue 32, item 2), never below it
    expect_lte(lost(p), 1.05 * optimum, label = id)
    expect_gte(lost(p), optimum)
    # protected: the final audit's intervals and an independent audit
    expect_true(all(p$protected[p$status == "primary"]), info = id)
    expect_true(attr(audit_table(tab$sens, p$status != "published", attacker = "outsider"), "passed"), info = id)
    # every secondary cell named after a sensitive cell whose witness moves it
    sec <- p$reason[p$status == "secondary"]
    expect_true(all(sub("^protects ", "", sec) %in% sdcRisk:::cell_labels(tab$sens)[tab$sens$sensitive]),
                info = id)
    # the pattern's witness tables move suppressed cells only, and the
    # audit of the protection accepts them
    wits <- attr(p, "witnesses")
    expect_gt(nrow(wits), 0)
    expect_true(all(p$status[wits$row] != "published"), info = id)
    expect_true(attr(audit_table(tab$sens, p, intervals = "none", attacker = "outsider"), "passed"), info = id)
    if (id == "W1") {
      # deterministic (a budget of programs, not of time)
      again <- protect_table(tab$sens, attacker = "outsider")
      expect_identical(again$status, p$status)
      w1 <- list(sens = tab$sens, lost = lost(p))
    }
  }
  # against the respondents (the default) the improvement does not repair:
  # a repaired pattern is not audited against them
  n0 <- calls$n
  protect_table(acs_sweep_table("W14")$sens)
  expect_identical(calls$n, n0)
  # without the repairs (as on tables above improve_repair_cells), the
  # improvement keeps the heuristic's pattern, 6.4% above the optimum
  local_package_function("improve_repair_cells", 0)
  plain <- protect_table(w1$sens, attacker = "outsider")
  expect_identical(calls$n, n0)
  expect_equal(lost(plain), 431670520)
  expect_lt(w1$lost, lost(plain))
})

test_that("the improvement repairs only master patterns well below the incumbent, and stops after misses", {
  ns <- asNamespace("sdcRisk")
  st <- new_search(stopping_table())
  prep <- st$prep
  search <- st$search
  todo <- st$todo
  for (i in todo) ns$protect_cell(search, i, call = environment())
  cg <- ns$new_cut_generation(search, todo, search$supp, Inf, Inf, NULL, environment())
  cg$todo <- todo
  cg$repair <- ns$repair_plan("improve")
  expect_identical(cg$repair$share, ns$improve_repair_share)
  repaired <- 0
  local_package_function("repair_incumbent", function(cg, x) {
    repaired <<- repaired + 1
    cg$repair_misses <- cg$repair_misses + 1L
  })
  cheap <- as.numeric(prep$sensitive)
  # the first master (no constraint before it) is not repaired
  ns$try_repair(cg, cheap, earlier = 0L)
  expect_identical(repaired, 0)
  # one that costs at least the share of the incumbent is not repaired
  dear <- as.numeric(search$supp)
  expect_gte(sum(cg$w[dear > 0.5]), ns$improve_repair_share * cg$best_cost)
  ns$try_repair(cg, dear, earlier = 3L)
  expect_identical(repaired, 0)
  # a cheaper one is, until optimal_repair_misses repairs in a row missed
  for (k in seq_len(ns$optimal_repair_misses + 2)) ns$try_repair(cg, cheap, earlier = 3L)
  expect_identical(repaired, as.numeric(ns$optimal_repair_misses))
  # no plan, no repair
  cg$repair <- NULL
  cg$repair_misses <- 0L
  ns$try_repair(cg, cheap, earlier = 3L)
  expect_identical(repaired, as.numeric(ns$optimal_repair_misses))
})
