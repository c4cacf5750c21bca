# The one interface of every kind of plan: a block plan (`pram_plan`,
# plan-blocks.R) and a per-variable plan (`pram_plan_vars`, plan-vars.R),
# both `pram_plan_any`. engine_plan() is the only producer of the core's
# input; what a plan does is a method of its class (see utils-core.R for the
# whole picture).

# The plan as the core reads it: validated whole, every time. A caller
# that makes several core calls on one plan makes it once and passes it on
# (the `ep` arguments below).
engine_plan <- function(plan, arg = "plan", call = rlang::caller_env()) UseMethod("engine_plan")

#' @export
engine_plan.default <- function(plan, arg = "plan", call = rlang::caller_env()) {
  abort_not_plan(plan, arg, call)
}

# The engine plan `ep` of `plan` for an intruder who matches on the keys
# `known` only (all keys: `ep` itself).
engine_known <- function(plan, ep, known) UseMethod("engine_known")

# The engine plan `ep` whose certificate is the maximum of w_j R_j(a, t)
# (the core's per-cell weights, risk.hpp): `weight` NULL (every weight 1,
# `ep` itself) or one number in (0, 1] per cell. The weights come from the
# package's own computations (sample_weights(), per-cell bounds), so a
# broken one is a bug.
engine_weighted <- function(ep, weight, call = rlang::caller_env()) {
  if (is.null(weight)) return(ep)
  if (!is.double(weight) || length(weight) != length(ep$counts) || anyNA(weight) || any(weight <= 0 | weight > 1)) {
    abort_sdc(c(
      "Internal error: per-cell weights must be one number in (0, 1] per cell.",
      "i" = "This is a bug in sdcRisk; please report it with the call that raised it."
    ), "internal", call = call)
  }
  ep$weight <- weight
  ep
}

abort_not_plan <- function(plan, arg, call) {
  abort_sdc(c(
    "{.arg {arg}} must be a PRAM plan from {.fn pram_plan}, {.fn pram_plan_vars} or {.fn ifpr}.",
    "x" = "It is {.obj_type_friendly {plan}}."
  ), "argument", call = call, arg = arg)
}

# The plan of a plan, of a release, or of the release an sdcMicroObj holds.
as_plan <- function(x, arg = "plan", call = rlang::caller_env()) UseMethod("as_plan")

#' @export
as_plan.default <- function(x, arg = "plan", call = rlang::caller_env()) abort_not_plan(x, arg, call)

#' @export
as_plan.pram_plan_any <- function(x, arg = "plan", call = rlang::caller_env()) x

#' @export
as_plan.sdc_release_any <- function(x, arg = "plan", call = rlang::caller_env()) {
  as_release(x, arg = arg, call = call)$plan
}

#' @export
as_plan.sdcMicroObj <- function(x, arg = "plan", call = rlang::caller_env()) {
  sdcmicro_release(x, arg = arg, call = call)$plan
}

# Generics of plans; their methods are in plan-blocks.R and plan-vars.R.

# "blocks" or "vars".
plan_kind <- function(plan) UseMethod("plan_kind")
# The plan, checked whole (validate_pram_plan(), validate_pram_plan_vars()).
validate_plan <- function(plan, arg = "plan", call = rlang::caller_env()) UseMethod("validate_plan")
# The block of every cell, or of the cells `cells` only (NA outside blocks
# and for per-variable plans). For a few cells (the cell of a certificate)
# the lookup avoids a vector over every cell: at 4.3 million cells that
# vector costs a fifth of the certificate's time (bench/README.md, issue 31).
plan_block_of <- function(plan, cells = NULL) UseMethod("plan_block_of")
# Which cells' units can move.
plan_movable <- function(plan, ep = NULL) UseMethod("plan_movable")
# Upper bound of P(S_j = 0 | T) for each cell (eq. 4.10 for IFPR), NA where
# there is none.
plan_empty_bound <- function(plan) UseMethod("plan_empty_bound")
# V(S_D | T), the eq. 6.7 bound and the original counts of the categories D
# of key v: a data frame (category, original, perturbation_var, bound_var).
plan_category_moments <- function(plan, v, call = rlang::caller_env()) UseMethod("plan_category_moments")
# Writes what plan_draw() drew into the records of `data`.
plan_write <- function(plan, data, cell_id, drawn) UseMethod("plan_write")
# Draws and writes the released keys of the records of `data` (whose cells
# are `cell_id`): plan_write() of plan_draw() unless a kind does it in one
# step.
plan_apply_draws <- function(plan, data, cell_id, ep) UseMethod("plan_apply_draws")
#' @export
plan_apply_draws.default <- function(plan, data, cell_id, ep) {
  plan_write(plan, data, cell_id, plan_draw(plan, cell_id, ep = ep))
}

# Methods shared by every kind, through the core.

# Expected changed records, total perturbation variance, and the
# probability that a unit of each cell keeps its cell.
plan_cost <- function(plan, ep = engine_plan(plan, call = call), call = rlang::caller_env(), stay = TRUE) {
  core_call(cpp_cost, ep, stay, call = call)
}

# E(S_i | T) and V(S_i | T) of every cell (eq. 3.3, 3.6, 6.1).
plan_moments <- function(plan, ep = engine_plan(plan, call = call), call = rlang::caller_env()) {
  core_call(cpp_moments, ep, call = call)
}

# P(S_j = 0 | T) of the cells `cells`.
plan_p_empty <- function(plan, cells, ep = engine_plan(plan, call = call), call = rlang::caller_env()) {
  if (length(cells) == 0) return(numeric())
  exp(core_call(cpp_cell_risk, ep, as.integer(cells), 1L, FALSE, call = call)$log_p_empty)
}

# The released cell (block plans) or categories (per-variable plans) of
# every record whose cell is `cell_id`.
plan_draw <- function(plan, cell_id, ep = engine_plan(plan, call = call), call = rlang::caller_env(),
                      progress = NULL) {
  core_call(cpp_draw, ep, cell_id, progress = progress, call = call)
}

