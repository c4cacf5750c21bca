# The least-damage design, ifpr(method = "optimal"): which cells share a
# block and the transition inside each block, chosen to damage the data
# least (pram_damage()'s measures) while every cell meets its bound exactly.
# The search runs in the core (sdcRisk::SetDesigner, design_optimal.hpp),
# once per partition set; this file prepares what it reads and takes its
# blocks back.

# Sets of at most this many cells are searched exhaustively (every
# collection of disjoint blocks): 3^10 = 59,049 subset pairs and 2^10 block
# fits take a few milliseconds; at 14 cells it would be seconds.
optimal_exhaustive_cells <- 10L

# The largest block the design forms. The smallest block that meets a bound
# has about 1 / xi cells of count 1 (11 at xi = 0.1), and runs of one count
# are cut into blocks of at most twice that; 64 covers xi down to 0.03.
optimal_max_block <- 64L

# What the design reads besides the counts and bounds, made once per
# release: every cell's codes, the values of the ordered keys, the weights,
# and the options of the core. `args`: the damage, weights and ordered keys
# of ifpr(), the damage matched already.
optimal_options <- function(cells, goal, args, call = rlang::caller_env()) {
  w <- check_key_weights(args$weights, cells$keys, call = call)
  ordered <- check_ordered_keys(args$ordered, cells, call = call)
  list(
    codes = unname(cell_codes(cells)),
    values = lapply(cells$keys, function(k) if (k %in% ordered) key_values(cells$cells[[k]])),
    core = list(goal = goal, damage = args$damage, weights = unname(w), exhaustive_cells = optimal_exhaustive_cells,
                max_block = optimal_max_block),
    damage = args$damage, weights = w, ordered = ordered
  )
}

# The least-damage blocks of one partition set (cells `ids`): as
# design_tiered(), plus the matrices of blocks given by a matrix (theta NA)
# and each block's damage; or `lacks`.
design_optimal <- function(ids, counts, bound, goal, opts) {
  need <- needs_protection(counts, bound, goal)
  if (!any(need)) return(no_blocks())
  values <- lapply(opts$values, function(v) if (!is.null(v)) v[ids])
  res <- core_call(cpp_design_optimal, as.integer(counts), as.numeric(bound), need,
                   lapply(opts$codes, `[`, ids), values, opts$core)
  if (!is.null(res$lacks)) return(list(lacks = res$lacks))
  list(cells = ids[res$cells], sizes = res$sizes, theta = res$theta, matrix = res$matrix, damage = res$damage)
}

# The damage, weights and ordered keys of ifpr(): only the least-damage
# design reads them.
check_design_args <- function(method, args, call = rlang::caller_env()) {
  if (method == "optimal") return(invisible())
  given <- c(damage = !is.null(args$damage), weights = !is.null(args$weights), ordered = !is.null(args$ordered))
  if (any(given)) {
    abort_sdc(c(
      "{.arg {names(given)[given][1]}} is read by {.code method = \"optimal\"} only.",
      "x" = "{.arg method} is {.val {method}}.",
      "i" = "Use {.code method = \"optimal\"} to choose the damage to minimise, or leave it out."
    ), "argument", call = call, arg = names(given)[given][1])
  }
  invisible()
}

# What the least-damage design achieved, for the certificate: the measure
# it minimised, the expected damage of the final plan in every measure
# (pram_damage()), and lower bounds on records and keys (damage_lower()).
design_summary <- function(plan, ep, opts, bound) {
  cost <- plan_cost(plan, ep = ep, stay = FALSE)
  d <- plan_key_damage(plan, ep, opts$ordered)
  w <- opts$weights
  values <- c(records = cost$changed, keys = sum(w * d$changed), distance = sum(w * d$distance),
              variance = cost$variance)
  list(damage = opts$damage, value = values[[opts$damage]], values = values, weights = w, ordered = opts$ordered,
       lower = damage_lower(plan$cells$cells$count, bound, opts$core$goal, w))
}

# Lower bounds on the expected records and key values changed by any
# unbiased PRAM whose every cell t meets R_t(a, t) <= b_t for every a (Goal
# 3; NA for the other goals, which bound a = 1 only). Proof: the target of
# cell t stays with probability p_tt, and by eq. 4.1-4.3
#   sum_a a R_t(a, t) P(S_t = a) = p_tt sum_a P(Y = a - 1) = p_tt,
# while the bound and unbiasedness (E S_t = T_t) give
#   sum_a a R_t(a, t) P(S_t = a) <= b_t E S_t = b_t T_t.
# So p_tt <= b_t T_t: cell t loses at least T_t (1 - b_t T_t) records in
# expectation, whatever the blocks and matrices. A record that changes
# changes at least one key, so key values changed are at least min(w) times
# records changed.
damage_lower <- function(counts, bound, goal, weights) {
  if (goal != "all_matches") return(c(records = NA_real_, keys = NA_real_))
  records <- sum(counts * pmax(0, 1 - bound * counts))
  c(records = records, keys = min(weights) * records)
}

# The certificate's line on the design.
design_line <- function(design) {
  v <- design$values
  sprintf("Least-damage design (%s): expected %s key values changed, %.3f per changed record; variance %s%s",
          design$damage, format(v[["keys"]], digits = 6), v[["keys"]] / max(v[["records"]], 1e-300),
          format(v[["variance"]], digits = 6),
          if (is.null(design$lower) || is.na(design$lower[["records"]])) "" else {
            sprintf("; any design changes at least %s records and %s key values (lower bound)",
                    format(design$lower[["records"]], digits = 6), format(design$lower[["keys"]], digits = 6))
          })
}
