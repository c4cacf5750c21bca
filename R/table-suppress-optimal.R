# method = "optimal" of protect_table(): the pattern of least cost, by the
# cut generation of Fischetti and Salazar-Gonzalez (2001).
#
# A pattern x (x_j = 1: cell j suppressed) protects side `dir` of sensitive
# cell i by t when some deviation y of the table (a table minus the true
# one) keeps every relation (M y = 0), moves only suppressed cells within
# their bounds (-cap_dn_j x_j <= y_j <= cap_up_j x_j) and has dir y_i >= t.
# By LP duality the largest dir y_i equals
#   min over lambda of  sum_j (a_j cap_up_j + b_j cap_dn_j) x_j,
#   a - b = dir e_i - M' lambda, a, b >= 0,
# so every lambda gives a necessary condition on the pattern, linear in x
# (a capacity constraint):  sum_j (a_j cap_up_j + b_j cap_dn_j) / t x_j >= 1,
# whose coefficients may be cut to 1 since x is 0/1 (infinite capacities
# included). The master program minimises the cost of x subject to the
# constraints found so far; the dual program at the master's solution
# either proves every side protected or gives a violated constraint. The
# master is a relaxation, so its optimum, once it protects every side, is
# the optimal pattern. The heuristic's pattern bounds the master's cost and
# is returned when the master cannot beat it in the time allowed.

# Separation is cheap where it can be: a 0/1 pattern protects a side when
# some witness table moves only its suppressed cells, so the witnesses the
# heuristic and the earlier rounds found are tried first (no program), then
# a program over the suppressed cells alone; the dual program over the
# whole table, which gives the cut, runs only for the sides these leave
# unprotected.
#
# Returns list(supp, optimal, lower_bound, n_lp); `supp` NULL when the
# heuristic's pattern `incumbent` is at least as cheap as anything found.
# `lp_budget` (dual programs), `mip_nodes` (branch and bound nodes of each
# master program) and `max_rounds` (integer master programs) bound the work
# deterministically; `time_limit` (seconds) does not; `stall_rounds` ends
# the search, with the incumbent, after that many rounds in a row whose
# master pattern leaves at least the share `stall_share` of the sides
# unprotected (stalled rounds; 1: every side). `quick_cuts`: the
# constraints of 0/1 patterns from the program over their suppressed cells
# (side_separation()) rather than capacity_cut()'s over the whole table.
# `relax_rounds`: rounds
# of the linear relaxation before the integer master programs. `partners`:
# the master program has the partner rows (partner_rows()). `repair`: NULL,
# or how master patterns that leave sides unprotected are repaired into
# incumbents (repair_plan()).
optimal_pattern <- function(search, todo, incumbent, time_limit, call, lp_budget = Inf,
                            mip_nodes = NULL, relax_rounds = 0, max_rounds = Inf,
                            respondents = NULL, quick_cuts = FALSE, stall_rounds = Inf, stall_share = 1,
                            partners = FALSE, repair = NULL) {
  cg <- new_cut_generation(search, todo, incumbent, time_limit, lp_budget, mip_nodes, call)
  if (partners) cg$partners <- partner_rows(search$prep)
  cg$todo <- todo
  cg$quick_cuts <- quick_cuts
  cg$repair <- repair
  if (relax_rounds > 0 && !relaxed_cuts(cg, relax_rounds)) return(cut_result(cg))
  rounds <- 0
  stalled <- 0
  repeat {
    rounds <- rounds + 1
    if (cg$left() <= 0 || rounds > max_rounds) return(cut_result(cg))
    # (the constraints found before this round: none at the first master)
    earlier <- length(cg$cuts)
    r <- master_program(cg, integer = TRUE)
    # a master stopped by the time limit still proves its dual bound: no
    # pattern of cost at most the incumbent's meets its constraints for less
    if (isTRUE(is.finite(r$bound))) cg$lower_bound <- max(cg$lower_bound, min(r$bound, cg$best_cost))
    # (an infeasible master can only come from rounding: the heuristic's
    # pattern meets every constraint)
    if (!r$status %in% c("optimal", "feasible")) return(cut_result(cg))
    if (r$status == "optimal") cg$lower_bound <- max(cg$lower_bound, r$value)
    x <- round(r$solution)
    # a round that would end the search as the last stalled one ends it
    # before its programs when the relation bounds of x prove enough sides
    # unprotected (each of them then gets a constraint, and the search ends
    # with the incumbent all the same: stall_ahead())
    # (the round's master pattern, which leaves sides unprotected, is
    # repaired before a stalled round ends the search too)
    if (stalled + 1 >= stall_rounds && stall_ahead(cg, x, call, stall_share)) {
      try_repair(cg, x, earlier)
      return(cut_result(cg))
    }
    found <- separate_pattern(cg, x)
    if (is.na(found)) return(cut_result(cg))
    # (stalled rounds in a row: the master pattern leaves at least the share
    # stall_share of the sides unprotected)
    stalled <- if (found > 0L && found >= stall_share * nrow(cg$sides)) stalled + 1 else 0
    if (stalled >= stall_rounds) {
      try_repair(cg, x, earlier)
      return(cut_result(cg))
    }
    if (found == 0L && !is.null(respondents)) found <- respondent_cuts(cg, x, respondents, call)
    if (is.na(found)) return(cut_result(cg))
    # (a master pattern that leaves sides unprotected, repaired by the
    # heuristic: a cheaper incumbent bounds the next masters)
    if (found > 0L) try_repair(cg, x, earlier)
    if (found == 0L) return(cut_result(cg, x, optimal = r$status == "optimal"))
  }
}

# Separation against the respondents at the 0/1 pattern x, which protects
# every side against the outsider: their audit (respondent_audit()), and for
# every (respondent, sensitive cell) pair that breaks x, the capacity
# constraints of the cell's sides in the respondent's problem (the
# outsider's with the bounds the respondent knows, capacity_cut() on the
# search of respondent_search(); its protection the outsider's level within
# what it knows, as the audit requires). Each is valid for every pattern
# safe from that respondent, so the master stays a relaxation of the
# respondent-safe patterns (the incumbent must be one). Returns the number
# added: 0 when no respondent breaks x; NA when the time ran out, a program
# failed, or a breach gave no constraint (the audit's tolerance against
# the cut's).
respondent_cuts <- function(cg, x, respondents, call) {
  search <- cg$search
  prep <- search$prep
  a <- respondent_audit(prep, x > 0.5, respondents, exact = FALSE, call = call)
  cg$n_lp <- cg$n_lp + a$n_lp
  b <- a$breaches
  if (!nrow(b)) return(0L)
  found <- 0L
  for (k in seq_len(nrow(b))) {
    if (cg$left() <= 0) return(NA_integer_)
    sub <- respondent_search(prep, search, respondent_knowledge(respondents, prep, b$group[k]))
    i <- b$cell[k]
    t <- tryCatch(protection_targets(sub, i, call), sdcRisk_error_unprotectable = function(e) NULL)
    if (is.null(t)) return(NA_integer_)
    for (dir in c(1, -1)) {
      ti <- t[[if (dir > 0) "up" else "down"]]
      if (ti <= 0) next
      cut <- capacity_cut(sub, i, dir, ti, x)
      cg$n_lp <- cg$n_lp + 1L
      if (identical(cut, "failed")) return(NA_integer_)
      if (!is.null(cut)) {
        cg$cuts[[length(cg$cuts) + 1L]] <- cut
        found <- found + 1L
      }
    }
  }
  if (found == 0L) NA_integer_ else found
}

# The state of the cut generation, shared by its steps: the sides to
# protect, the costs `w` (sensitive cells free), the sensitive cells
# `fixed` in every pattern, the incumbent and its cost, the constraints
# found (`cuts`), the witnesses known for each side (cells moved; the
# heuristic's first), the programs solved (`n_lp`, of which `n_dual` dual
# programs), the proved lower bound and the time left (`left()`).
new_cut_generation <- function(search, todo, incumbent, time_limit, lp_budget, mip_nodes, call) {
  start <- proc.time()[["elapsed"]]
  cg <- new.env(parent = emptyenv())
  cg$left <- function() time_limit - (proc.time()[["elapsed"]] - start)
  cg$search <- search
  cg$sides <- protection_sides(search, todo, call)
  cg$w <- ifelse(search$prep$sensitive, 0, search$w)
  cg$fixed <- search$prep$sensitive
  cg$incumbent <- incumbent
  cg$best_cost <- sum(cg$w[incumbent])
  cg$cuts <- list()
  cg$n_lp <- 0L
  cg$n_dual <- 0L
  cg$lp_budget <- lp_budget
  cg$mip_nodes <- mip_nodes
  cg$lower_bound <- 0
  cg$call <- call
  cg$n_repair_lp <- 0L
  cg$repair_misses <- 0L
  cg$known <- lapply(seq_len(nrow(cg$sides)), function(s) list(current_witness(search, side_at(cg$sides, s))$cells))
  cg
}

# What optimal_pattern() returns: the pattern x when it costs less than the
# incumbent (NULL otherwise), else the best repaired pattern's search
# (`search`, NULL when no repair beat the incumbent it started from;
# finished by finish_repair()), whether it is proved optimal, the lower
# bound and the programs solved.
cut_result <- function(cg, x = NULL, optimal = FALSE) {
  better <- !is.null(x) && sum(cg$w[x > 0.5]) < cg$best_cost
  repaired <- if (!better && !is.null(cg$repaired)) finish_repair(cg)
  list(supp = if (better) x > 0.5, search = repaired, optimal = optimal,
       lower_bound = cg$lower_bound, n_lp = cg$n_lp + cg$n_repair_lp)
}

# How master patterns are repaired (repair_incumbent()), for
# optimal_pattern()'s `repair`: with `passes` and `reprice` passes of the
# clean-up and the pair swaps (`pairs`) after the heuristic's witness
# tables; only master patterns that cost less than `share` times the
# incumbent; the best repaired pattern given the full clean-up and the
# pair swaps at the end (`finish`). The optimal method ("optimal") repairs
# every master pattern in full; the bounded improvement ("improve") makes
# one pass of each and finishes the best (table-policy.R,
# improve_repair_share: one pass found the same cost as the full clean-up
# on 9 of the 10 master patterns traced, in 40% of its time).
repair_plan <- function(kind = c("optimal", "improve")) {
  switch(match.arg(kind),
         optimal = list(passes = cleanup_max_passes, reprice = cleanup_reprice_passes, pairs = TRUE,
                        share = 1, finish = FALSE),
         improve = list(passes = 1L, reprice = 0L, pairs = FALSE, share = improve_repair_share,
                        finish = TRUE))
}

# The repair of the master pattern x when the plan cg$repair asks for one:
# not the first master (`earlier`, the constraints found before its round:
# none, and its pattern is the sensitive cells alone), not after
# optimal_repair_misses repairs in a row that did not pay, and only when x
# costs less than the plan's share of the incumbent.
try_repair <- function(cg, x, earlier) {
  plan <- cg$repair
  if (is.null(plan) || !earlier || cg$repair_misses >= optimal_repair_misses || cg$left() <= 0) {
    return(invisible(cg))
  }
  if (sum(cg$w[x > 0.5]) >= plan$share * cg$best_cost) return(invisible(cg))
  repair_incumbent(cg, x)
}

# The best repaired pattern's search (cg$repaired), finished: the full
# clean-up and the pair swaps when the plan asks for them (they only lower
# its cost), then every secondary cell named after the first sensitive cell
# whose witness table moves it ("protects ...", as the heuristic names
# them); a secondary cell that no witness moves is published (none is
# expected; the final audit checks the pattern in any case).
finish_repair <- function(cg) {
  r <- cg$repaired
  prep <- r$prep
  if (isTRUE(cg$repair$finish)) {
    before <- r$n_lp
    cleanup_passes(r, cg$todo, cg$call, cleanup_max_passes, cleanup_reprice_passes)
    pair_pass(r, cg$todo, cg$call)
    cg$n_repair_lp <- cg$n_repair_lp + r$n_lp - before
    r$n_lp <- before
  }
  moved <- integer()
  for (i in cg$todo) {
    ids <- abs(c(r$wit_up[i], r$wit_dn[i]))
    cells <- unique(unlist(lapply(r$wits[ids[ids > 0]], `[[`, "cells")))
    unnamed <- cells[r$supp[cells] & !prep$sensitive[cells] & r$reason[cells] == ""]
    env_set(r, "reason", unnamed, paste("protects", r$labels[i]))
    moved <- c(moved, cells)
  }
  publish(r, setdiff(which(r$supp & !prep$sensitive & r$reason == ""), moved))
  r
}

# The repair of the master pattern x, which leaves some sides unprotected:
# the heuristic's witness tables for every sensitive cell, its suppressed
# cells free (protect_cells()), then the clean-up's passes and pair swaps
# that the plan cg$repair asks for (repair_plan()). A master pattern is
# the least-cost pattern that meets the constraints found so far, so its
# repair is often far cheaper than the heuristic's pattern (on the seed-1
# sweep's 350-cell table, the third master's repair was 6% cheaper than
# the heuristic's and within 0.03% of the optimum proved in 622 s). When
# the repaired pattern costs less than the incumbent it becomes the
# incumbent (cg$repaired, its search, with its witness tables): the masters
# that follow are bounded by its cost. After optimal_repair_misses repairs in a row that did not, the
# rounds that follow are not repaired (each repair costs a heuristic).
repair_incumbent <- function(cg, x) {
  search <- cg$search
  prep <- search$prep
  r <- derived_search(search)
  r$reason[prep$sensitive] <- search$reason[prep$sensitive]
  r$supp[] <- x > 0.5 | prep$sensitive
  protect_cells(r, cg$todo, cg$call, function(...) NULL)
  plan <- cg$repair
  cleanup_passes(r, cg$todo, cg$call, plan$passes, plan$reprice)
  if (plan$pairs) pair_pass(r, cg$todo, cg$call)
  # (the repair's programs are counted once, in the cut generation's)
  cg$n_repair_lp <- cg$n_repair_lp + r$n_lp - search$n_lp
  r$n_lp <- search$n_lp
  cost <- sum(cg$w[r$supp])
  if (cost < cg$best_cost * (1 - optimal_repair_gain)) {
    cg$best_cost <- cost
    cg$incumbent <- r$supp
    cg$repaired <- r
    cg$repair_misses <- 0L
  } else {
    cg$repair_misses <- cg$repair_misses + 1L
  }
  invisible(cg)
}

# Rounds of the linear relaxation of the master program before the integer
# ones: cheap constraints for them. FALSE when the time or the budget ran
# out, or a program failed.
relaxed_cuts <- function(cg, rounds) {
  x <- as.numeric(cg$fixed)
  for (k in seq_len(rounds)) {
    found <- separate_pattern(cg, x)
    if (is.na(found)) return(FALSE)
    if (found == 0L) break
    r <- master_program(cg, integer = FALSE)
    if (r$status != "optimal") break
    cg$lower_bound <- r$value
    x <- r$solution
  }
  TRUE
}

# Separation at the pattern x (0/1 or fractional): for every side, a witness
# among its suppressed cells (0/1 x only, witness_protects()), else the dual
# program, whose violated constraint is added (at most one per side).
# Returns the number added; NA when the time or the budget ran out, or a
# program failed, before every side was checked.
separate_pattern <- function(cg, x) {
  found <- 0L
  binary <- all(x == 0 | x == 1)
  sides <- cg$sides
  for (s in seq_len(nrow(sides))) {
    if (cg$left() <= 0) return(NA_integer_)
    if (binary && known_protects(cg, s, x)) next
    sep <- if (binary && cg$quick_cuts) side_separation(cg, s, x)
    if (isTRUE(sep$protected)) next
    cut <- sep$cut
    # (fractional x, or a side the program over the suppressed cells could
    # not decide: a witness program, then the dual program over the whole
    # table)
    if (is.null(cut) && binary && !cg$quick_cuts && witness_protects(cg, s, x)) next
    if (cg$n_dual >= cg$lp_budget) return(NA_integer_)
    if (is.null(cut)) {
      cut <- capacity_cut(cg$search, sides$cell[s], sides$dir[s], sides$t[s], x)
      cg$n_lp <- cg$n_lp + 1L
    }
    cg$n_dual <- cg$n_dual + 1L
    if (identical(cut, "failed")) return(NA_integer_)
    if (!is.null(cut)) {
      cg$cuts[[length(cg$cuts) + 1L]] <- cut
      found <- found + 1L
    }
  }
  found
}

# Is the 0/1 pattern x shown to protect side s by a witness among its
# suppressed cells: one known already, or one a program finds (kept)?
witness_protects <- function(cg, s, x) {
  on <- x > 0.5
  if (known_protects(cg, s, x)) return(TRUE)
  sides <- cg$sides
  y <- deviation_lp(cg$search, sides$cell[s], which(on), sides$t[s], sides$dir[s], symmetric = FALSE)
  cg$n_lp <- cg$n_lp + 1L
  if (is.null(y)) return(FALSE)
  cg$known[[s]][[length(cg$known[[s]]) + 1L]] <- y$cells
  TRUE
}

# Does a witness known for side s move only cells the 0/1 pattern x
# suppresses?
known_protects <- function(cg, s, x) {
  on <- x > 0.5
  any(vapply(cg$known[[s]], function(cells) all(on[cells]), logical(1)))
}

# Side s at the 0/1 pattern x, by one program over x's suppressed cells:
# the largest move of the side's cell that keeps every relation and bound
# (the rises and falls of deviation_model(); all sides of one pattern
# share the program, whose objective alone changes, from the last basis).
# When it reaches the side's target t, its table is a witness (kept, as
# witness_protects() keeps one); otherwise HiGHS' dual values of the
# relations, lambda, are an optimal solution of capacity_cut()'s dual
# program at x (the cells x does not suppress cost nothing there), so the
# constraint they give is as violated at x as capacity_cut()'s, without
# the program over the whole table: d = dir e_i - M' lambda, and cell j's
# coefficient (d_j+ cap_up_j + d_j- cap_dn_j) / t, at most 1. (The dual
# program may choose another optimal lambda, whose coefficients outside x
# differ: on R4 of bench_suppress.R the optimal method needed 58 master
# programs with these constraints against 23 with its own, so only the
# bounded improvement uses them.) The constraint is used only when its
# value at x equals the program's (strong duality, which checks the
# signs); otherwise, or when the program fails, list(protected = FALSE,
# cut = NULL) and the caller solves the dual program. Returns
# list(protected, cut).
side_separation <- function(cg, s, x) {
  search <- cg$search
  st <- search$prep$structure
  on <- which(x > 0.5)
  sess <- cg$sep_session
  if (is.null(sess) || !identical(sess$scope, on)) {
    mat <- deviation_model(st, on)
    if (!mat$nrow) return(list(protected = FALSE, cut = NULL))
    k <- length(on)
    sess <- list(scope = on, rels = mat$rels, moved = list(),
                 lp = lp_session(mat, numeric(mat$nrow), numeric(mat$nrow), numeric(2 * k),
                                 c(search$cap_up[on], search$cap_dn[on])))
    cg$sep_session <- sess
  }
  side <- side_at(cg$sides, s)
  i <- side$cell
  # (the other side of the cell solved at this pattern with no move: the
  # mirror image of its multipliers bounds this side's move by 0 too, the
  # least any side can have, so they are optimal here and their constraint
  # is as violated at x as the program's would be: no program. At the
  # improvement's first pattern, the sensitive cells alone, most cells
  # cannot move: on R4 of the bench 44 of its 88 programs)
  g_other <- sess$moved[[as.character(i)]]
  if (!is.null(g_other)) {
    cut <- multiplier_cut(search, side, -g_other, on, value = 0)
    if (!is.null(cut) && cut$bound < side$t * (1 - optimal_cut_tolerance)) {
      return(list(protected = FALSE, cut = cut$cut))
    }
  }
  k <- length(on)
  ii <- match(i, on)
  obj <- numeric(2 * k)
  obj[ii] <- side$dir
  obj[k + ii] <- -side$dir
  r <- sess$lp$extreme(obj, maximize = TRUE, duals = TRUE)
  cg$n_lp <- cg$n_lp + 1L
  t <- side$t
  if (r$status == "unbounded") return(list(protected = TRUE, cut = NULL))
  if (r$status != "optimal") return(list(protected = FALSE, cut = NULL))
  if (r$value >= t * (1 - optimal_cut_tolerance)) {
    y <- r$solution[seq_len(k)] - r$solution[k + seq_len(k)]
    w <- checked_witness(search, on, y, i)
    if (!is.null(w)) cg$known[[s]][[length(cg$known[[s]]) + 1L]] <- w$cells
    return(list(protected = TRUE, cut = NULL))
  }
  lambda <- numeric(st$nrel)
  lambda[sess$rels] <- r$row_dual
  g <- tabulate_sum(st$cell, st$coef * lambda[st$rel], st$ncell)
  for (sgn in c(1, -1)) {
    cut <- multiplier_cut(search, side, sgn * g, on, r$value)
    if (is.null(cut)) next
    if (abs(r$value) <= 1e-6) {
      sess$moved[[as.character(i)]] <- sgn * g
      cg$sep_session <- sess
    }
    return(list(protected = FALSE, cut = cut$cut))
  }
  list(protected = FALSE, cut = NULL)
}

# The capacity constraint of side (i, dir) from the relations' multipliers
# lambda, given as g = M' lambda (one number per cell): d = dir e_i - g,
# and cell j's coefficient (d_j+ cap_up_j + d_j- cap_dn_j) / t, at most 1.
# For any multipliers, the sum of the numerators over the suppressed cells
# `on` bounds the side's move (the relations priced out, the capacities
# kept); the constraint is returned only when that bound equals `value`, the
# side's largest move (strong duality: the multipliers are optimal, which
# checks their signs too); NULL otherwise. Returns list(cut, bound).
multiplier_cut <- function(search, side, g, on, value) {
  i <- side$cell
  t <- side$t
  d <- -g
  d[i] <- d[i] + side$dir
  # (d_j+ cap_up_j + d_j- cap_dn_j, 0 where d_j is within the multiplier
  # tolerance: an infinite capacity times 0 counts nothing)
  raw <- numeric(length(d))
  pos <- d > optimal_cut_multiplier
  raw[pos] <- d[pos] * search$cap_up[pos]
  neg <- -d > optimal_cut_multiplier
  raw[neg] <- -d[neg] * search$cap_dn[neg]
  at_x <- sum(raw[on])
  if (!is.finite(at_x) || abs(at_x - value) > 1e-6 * (1 + abs(value))) return(NULL)
  coef <- pmin(raw / t, 1)
  keep <- coef > optimal_cut_coef
  list(cut = list(j = which(keep), v = coef[keep]), bound = at_x)
}

# The master program over the constraints found: the least cost of a
# pattern (its linear relaxation unless `integer`), at most the incumbent's
# cost, with the sensitive cells fixed; the integer program starts from the
# incumbent.
master_program <- function(cg, integer) {
  n <- cg$search$prep$structure$ncell
  k <- length(cg$cuts)
  # (no constraint yet and every other cell costing something: the sensitive
  # cells alone, free, are the one optimum, without a program)
  if (!k && all(cg$w[!cg$fixed] > 0)) {
    return(list(status = "optimal", value = 0, solution = as.numeric(cg$fixed), bound = 0))
  }
  # the incumbent bounds the cost; a tolerance keeps it feasible itself
  cuts <- master_matrix(cg$cuts, n)
  pr <- cg$partners
  np <- if (is.null(pr)) 0L else pr$nrow
  mat <- triplet_matrix(c(cuts$i, k + pr$i, rep.int(k + np + 1L, n)), c(cuts$j, pr$j, seq_len(n)),
                        c(cuts$v, pr$v, cg$w), k + np + 1L, n)
  r <- solve_lp(cg$w, mat, c(rep(">=", k + np), "<="),
                c(rep(1, k), rep(0, np), cg$best_cost * (1 + optimal_cost_slack)),
                lower = as.numeric(cg$fixed), upper = rep(1, n),
                integer = if (integer) seq_len(n), time_limit = max(cg$left(), optimal_min_seconds),
                start = if (integer) as.numeric(cg$incumbent),
                mip_nodes = if (integer) cg$mip_nodes)
  cg$n_lp <- cg$n_lp + 1L
  r
}

# The capacity constraint of side (i, dir) violated by the pattern x (0/1 or
# fractional), as list(j, v) of sum v_j x_j >= 1, or NULL when x
# protects the side, or "failed" when the solver fails. Solves the dual
# program of the attacker's problem, with capacities scaled by the target t.
capacity_cut <- function(search, i, dir, t, x) {
  st <- search$prep$structure
  n <- st$ncell
  nr <- st$nrel
  up <- search$cap_up / t
  dn <- search$cap_dn / t
  # variables: lambda (nr, free), a (n), b (n); rows: cells
  # (M' lambda)_j + a_j - b_j = dir [j == i]
  mat <- function() {
    triplet_matrix(c(st$cell, seq_len(n), seq_len(n)), c(st$rel, nr + seq_len(n), nr + n + seq_len(n)),
                   c(st$coef, rep(1, n), rep(-1, n)), n, nr + 2 * n)
  }
  cost <- function(cap) ifelse(x > 0, cap * x, 0)
  ca <- cost(up)
  cb <- cost(dn)
  # an infinite capacity of a (partly) suppressed cell admits no price
  ub <- c(rep(Inf, nr), ifelse(is.finite(ca), Inf, 0), ifelse(is.finite(cb), Inf, 0))
  ca[!is.finite(ca)] <- 0
  cb[!is.finite(cb)] <- 0
  rhs <- numeric(n)
  rhs[i] <- dir
  obj <- c(numeric(nr), ca, cb)
  lower <- c(rep(-Inf, nr), numeric(2 * n))
  # the matrix is the table's: one model per search, each program from the
  # previous one's basis (a program the session fails is built on its own)
  if (is.null(search$cut_session)) {
    search$cut_session <- lp_session(mat(), rhs, rhs, lower, ub, strategy = 1L)
  }
  s <- search$cut_session
  s$set_rows(rhs, rhs)
  s$set_bounds(lower, ub)
  r <- s$extreme(obj, maximize = FALSE)
  if (!r$status %in% c("optimal", "infeasible", "unbounded")) {
    r <- solve_lp(obj, mat(), rep("==", n), rhs, lower = lower, upper = ub)
  }
  # infeasible dual: unbounded attacker, the side is protected
  if (r$status %in% c("infeasible", "unbounded")) return(NULL)
  # numerical trouble: the caller keeps the heuristic's pattern
  if (r$status != "optimal") return("failed")
  if (r$value >= 1 - optimal_cut_tolerance) return(NULL)
  a <- r$solution[nr + seq_len(n)]
  b <- r$solution[nr + n + seq_len(n)]
  coef <- pmin(ifelse(a > optimal_cut_multiplier, a * up, 0) +
                 ifelse(b > optimal_cut_multiplier, b * dn, 0), 1)
  keep <- coef > optimal_cut_coef
  list(j = which(keep), v = coef[keep])
}

master_matrix <- function(cuts, n) {
  list(i = rep.int(seq_along(cuts), vapply(cuts, function(cut) length(cut$j), integer(1))),
       j = as.integer(unlist(lapply(cuts, `[[`, "j"))), v = as.numeric(unlist(lapply(cuts, `[[`, "v"))))
}

# The bounded improvement of protect_table(improve = TRUE): the cut
# generation of optimal_pattern() started from the heuristic's (cleaned)
# pattern as incumbent, with a fixed budget of work (table-policy.R: at
# most 8 integer master programs of at most 500 branch-and-bound nodes each,
# and 4 dual programs per side of a sensitive cell), so that the result does
# not depend on the machine's speed. A pattern it returns passes every side's
# exact separation; its witness tables are then found as for the optimal
# method, and it is kept only when it costs less than the heuristic's
# (witness_search() may add cells when a program fails numerically).
# With `repair` (against the outsider, with the clean-up) on tables of at
# most improve_repair_cells cells, the master programs have the partner
# rows and master patterns are repaired (repair_plan("improve")); the best
# repaired pattern, with its witness tables, is returned when no master
# pattern beats it. Returns list(search, n_lp): `search` NULL when nothing
# cheaper was found.
improve_pattern <- function(prep, search, todo, call, repair = FALSE) {
  n_sides <- sum(vapply(todo, function(i) sum(protection_targets(search, i, call) > 0), numeric(1)))
  # (against the outsider, with the clean-up, on tables of at most
  # improve_repair_cells cells: the partner rows and repaired master
  # patterns, repair_plan("improve"))
  repair <- repair && prep$structure$ncell <= improve_repair_cells
  opt <- optimal_pattern(search, todo, search$supp, Inf, call = call,
                         lp_budget = improve_duals_per_side * n_sides, mip_nodes = improve_mip_nodes,
                         relax_rounds = 0, max_rounds = improve_masters, quick_cuts = TRUE,
                         stall_rounds = improve_stall_rounds, stall_share = improve_stall_share,
                         partners = repair, repair = if (repair) repair_plan("improve"))
  # (a repaired pattern, with its witness tables, cheaper than the heuristic's)
  if (is.null(opt$supp) && !is.null(opt$search)) return(list(search = opt$search, n_lp = opt$n_lp))
  if (is.null(opt$supp)) return(list(search = NULL, n_lp = opt$n_lp))
  found <- witness_search(prep, search, opt$supp, todo, call = call, relabel = TRUE)
  # a new cell that no witness table moves is not needed (none is expected)
  publish(found, which(found$supp & !prep$sensitive & found$reason == ""))
  secondary_cost <- function(s) sum(s$w[s$supp & !prep$sensitive])
  if (secondary_cost(found) >= secondary_cost(search)) return(list(search = NULL, n_lp = opt$n_lp))
  list(search = found, n_lp = opt$n_lp)
}

# Is the 0/1 pattern x shown, without a program, to leave at least the
# share `share` of the sides of cg unprotected (so that separate_pattern()
# would find a constraint for each of them, a stalled round)? The sides
# that no known witness among its suppressed cells protects and that the
# relation bounds of x prove short (sides_unprotected()) are that many.
# (On the bench tables R1-R4 the improvement's second round is such a
# round, under both attackers: its programs were half of the
# improvement's.)
stall_ahead <- function(cg, x, call, share = 1) {
  n <- nrow(cg$sides)
  if (!n) return(FALSE)
  open <- !vapply(seq_len(n), function(s) known_protects(cg, s, x), logical(1))
  need <- share * n
  sum(open) >= need && sum(open & sides_unprotected(cg, x, call)) >= need
}

# The sides of cg that the 0/1 pattern x is proved to leave unprotected by
# its relation bounds (relation_bounds(): outer bounds of each interval, no
# program): the largest move of the side's cell they allow falls short of
# its target by more than the cell's tolerance.
sides_unprotected <- function(cg, x, call) {
  prep <- cg$search$prep
  sides <- cg$sides
  supp <- x > 0.5
  lo <- prep$lower
  hi <- prep$upper
  sp <- suppressed_components(prep, supp, call)
  for (cc in unique(sp$comp[sides$cell])) {
    trip <- sp$trip_by_comp[[as.character(cc)]]
    if (is.null(trip)) next
    vars <- sp$supp_by_comp[[as.character(cc)]]
    rb <- relation_bounds(suppressed_lp(sp, prep, vars, trip))
    lo[vars] <- rb$lower
    hi[vars] <- rb$upper
  }
  i <- sides$cell
  room <- ifelse(sides$dir > 0, hi[i] - prep$value[i], prep$value[i] - lo[i])
  room < sides$t * (1 - optimal_cut_tolerance) - prep$tol[i]
}

# The partner rows of the master program: a cell suppressed alone in one of
# its relations is known from the published cells of that relation, so no
# deviation of the table moves it; publishing it leaves every attacker's
# problem (the outsider's and every respondent's) the same and costs no
# more. So some optimal pattern suppresses, with every suppressed cell, at
# least one other cell of each of its relations:
#   x_j <= sum of x_k over the other cells k of relation r
# for every relation r of every cell j that is not sensitive (a sensitive
# cell's own sides ask for more). The capacity constraints alone let the
# master program's relaxation spread its cost over cells suppressed alone;
# with these rows the optimum of the seed-1 sweep's 353-cell table was
# proved in 7 s, where 900 s did not prove it (bench/README.md,
# thirty-seventh session). The optimal method has them, and the bounded
# improvement against the outsider where it repairs its master patterns
# (improve_pattern()); not the default's improvement against the
# respondents: there they lowered the value on 4 of the sweep's 80 tables
# but made its master programs slower (the default's time 1.4 times in
# all). Returns list(i, j, v, nrow) of rows ">= 0".
partner_rows <- function(prep) {
  st <- prep$structure
  nz <- st$coef != 0
  cell <- st$cell[nz]
  rel <- st$rel[nz]
  members <- lapply(split(cell, factor(rel, levels = seq_len(st$nrel))), unique)
  own <- unique(data.frame(cell = cell, rel = rel)[!prep$sensitive[cell], , drop = FALSE])
  size <- lengths(members)[own$rel]
  cols <- unlist(members[own$rel], use.names = FALSE)
  list(i = rep.int(seq_len(nrow(own)), size), j = cols,
       v = ifelse(cols == rep.int(own$cell, size), -1, 1), nrow = nrow(own))
}
