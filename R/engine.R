# The one way into the C++ core, and the generics that give every kind of
# plan and release one interface.
#
# Plans: a block plan (`pram_plan`, from pram_plan() and ifpr()) and a
# per-variable plan (`pram_plan_vars`, from pram_plan_vars(),
# pram_release() and sdcMicro objects); both inherit from `pram_plan_any`.
# engine_plan() is the only producer of the core's input: its method for
# each kind validates the whole object (validate_pram_plan(),
# validate_pram_plan_vars()) and returns the list that
# sdcRisk_glue::make_engine_plan() reads, its kind named once. The core's
# answers come back through core_call(). What a plan does (its cost, its
# draw, where its cells can move, the variances of its categories) is a
# method of the plan (plan.R, plan-vars.R).
#
# Releases: `sdc_release` (ifpr() on a data frame), `sdc_release_db`
# (ifpr() on a database table), `sdc_pram_release` (pram_release()), all
# `sdc_release_any`, and an sdcMicroObj after sdcMicro::pram(). as_release()
# turns any of them into a validated release of the package; as_plan() gives
# the plan of a plan, a release or an sdcMicroObj. What a release holds (its
# units' cells, its distributions) is a method of the release.

# Calls a cpp_*() entry point. The glue returns an object of class
# "sdcRisk_core_error" for an exception of the core (run_engine() in
# src/glue.h); that, and any error the Rcpp layer raises before the core
# runs, becomes a classed error here.
#
# `progress`: NULL, or a function of the share of the work done (from
# progress_part()) that the core's long loops call through the glue's
# ProgressCallback while this call runs.
core_call <- function(fun, ..., progress = NULL, call = rlang::caller_env()) {
  # the arguments first: their errors (engine_plan()'s checks) are the
  # user's, not the core's
  args <- list(...)
  if (!is.null(progress)) {
    old <- the_progress$update
    the_progress$update <- progress
    on.exit(the_progress$update <- old, add = TRUE)
  }
  res <- tryCatch(do.call(fun, args), error = function(e) {
    structure(list(kind = "internal", message = conditionMessage(e)), class = "sdcRisk_core_error")
  })
  if (inherits(res, "sdcRisk_core_error")) abort_core(res, call)
  res
}

# ---- progress ----------------------------------------------------------------

# Progress bars of long work (the per-variable certificate, ifpr() on
# millions of records, simulate_release()): a cli progress bar when R is
# interactive, never in scripts and tests; option `sdcRisk.progress`
# (TRUE / FALSE) overrides that. cli draws a bar only once the work has
# lasted `cli.progress_show_after` (2 s), so short calls show nothing. The
# core reports the share of its work done through the glue
# (src/glue.h: ProgressCallback), which also checks for a user interrupt.
the_progress <- new.env(parent = emptyenv())

progress_wanted <- function() {
  opt <- getOption("sdcRisk.progress")
  if (is.null(opt)) interactive() else isTRUE(opt)
}

# A bar over [0, 1] owned by the frame `.envir` (cli closes it when that
# frame returns); NULL when no bar is wanted.
progress_bar <- function(label, .envir = parent.frame()) {
  if (!progress_wanted()) return(NULL)
  list(id = cli::cli_progress_bar(label, total = 100, .envir = .envir), envir = .envir)
}

# Moves the bar to `fraction` (and shows `status`, if given).
progress_set <- function(bar, fraction, status = NULL) {
  if (is.null(bar)) return(invisible())
  cli::cli_progress_update(set = round(100 * min(1, max(0, fraction))), status = status, id = bar$id,
                           .envir = bar$envir)
  invisible()
}

# The function core_call(progress =) passes to the core for one step of
# the work that fills [from, to] of the bar; NULL without a bar.
progress_part <- function(bar, from = 0, to = 1, status = NULL) {
  if (is.null(bar)) return(NULL)
  progress_set(bar, from, status)
  function(fraction) progress_set(bar, from + (to - from) * fraction)
}

abort_core <- function(err, call) {
  if (identical(err$kind, "underflow")) {
    abort_sdc(c(
      "The plan's transition probabilities are too small to compute with.",
      "x" = "A product of probabilities of one unit's move falls below the smallest double (about 1e-308).",
      "i" = "Set such probabilities to 0 if the moves are meant to be impossible."
    ), "underflow", call = call, core_message = err$message)
  }
  if (identical(err$kind, "memory")) {
    abort_sdc(c(
      "Not enough memory for this computation.",
      "i" = "Free memory (other objects, other programs) or work on a part of the data at a time."
    ), "memory", call = call, core_message = err$message)
  }
  abort_sdc(c(
    "Internal error in the compiled core: {err$message}",
    "i" = "This is a bug in sdcRisk; please report it with the call that raised it."
  ), "internal", call = call, core_message = err$message)
}

# ---- plans ------------------------------------------------------------------

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

# Generics of plans; their methods are in plan.R and plan-vars.R.

# "blocks" or "vars".
plan_kind <- function(plan) UseMethod("plan_kind")
# The plan, checked whole (validate_pram_plan(), validate_pram_plan_vars()).
validate_plan <- function(plan, arg = "plan", call = rlang::caller_env()) UseMethod("validate_plan")
# The block of every cell (NA outside blocks and for per-variable plans).
plan_block_of <- function(plan) UseMethod("plan_block_of")
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

# ---- releases -------------------------------------------------------------------

# A release of the package, validated: the object itself, or the release an
# sdcMicroObj holds after sdcMicro::pram().
as_release <- function(x, arg = "release", call = rlang::caller_env()) UseMethod("as_release")

#' @export
as_release.default <- function(x, arg = "release", call = rlang::caller_env()) {
  abort_sdc(c(
    "{.arg {arg}} must be a release from {.fn ifpr} or {.fn pram_release}, or an {.cls sdcMicroObj} after {.fn sdcMicro::pram}.",
    "x" = "It is {.obj_type_friendly {x}}."
  ), "argument", call = call, arg = arg)
}

#' @export
as_release.sdc_release_any <- function(x, arg = "release", call = rlang::caller_env()) {
  validate_release(x, arg = arg, call = call)
}

#' @export
as_release.sdcMicroObj <- function(x, arg = "release", call = rlang::caller_env()) {
  sdcmicro_release(x, arg = arg, call = call)
}

# Every part of a release that the package reads, checked (methods beside
# each release's constructor).
validate_release <- function(x, arg = "release", call = rlang::caller_env()) UseMethod("validate_release")

# The units whose cell could change, at least (every record for a release
# in memory): `old` (original cell), `new` (released cell, NA where it was
# empty), and `s_new`, the released count of every cell.
release_units <- function(release) UseMethod("release_units")

# Distributions of single variables and of combinations in the original
# and released data: a list with `distributions` (one data frame per
# variable of `singles`) and `tvd` (one row per combination).
release_distributions <- function(release, combos, singles) UseMethod("release_distributions")

# What every release holds: its cells and a valid plan made for them.
validate_release_parts <- function(x, arg, hint, call) {
  validate_sdc_cells(x$cells, paste0(arg, "$cells"), call = call)
  validate_plan(x$plan, paste0(arg, "$plan"), call = call)
  if (!identical(x$plan$cells$cells$count, x$cells$cells$count)) {
    abort_invalid(arg, "its {.field plan} was made for other cells", hint, call)
  }
  invisible(x)
}

# Errors about an edited object: its class and the part found broken.
abort_invalid <- function(arg, what, hint, call, .envir = parent.frame()) {
  abort_sdc(c(
    paste0("{.arg {arg}} has been modified: ", what, "."),
    "i" = hint
  ), "invalid_object", call = call, arg = arg, .envir = .envir)
}
