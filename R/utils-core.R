# The one way into the C++ core (core_call(), its progress and its errors).
# The generics that give every kind of plan and release one interface are
# in plan-interface.R and release-interface.R; this header describes them.
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
# method of the plan (plan-blocks.R, plan-vars.R).
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
  # user's, not the core's (list() forces them; fun(...) then reads the
  # values)
  list(...)
  if (!is.null(progress)) {
    old <- the_progress$update
    the_progress$update <- progress
    on.exit(the_progress$update <- old, add = TRUE)
  }
  # (a calling handler rather than tryCatch(): the table side calls the core
  # some 2,000 times a table, and tryCatch() cost twice as much)
  res <- withCallingHandlers(fun(...), error = function(e) {
    abort_core(list(kind = "internal", message = conditionMessage(e)), call)
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


# The least (largest with `largest`) value of x in each group of g, the
# groups in increasing order: list(group, value).
group_extreme <- function(x, g, largest = FALSE) {
  o <- order(g, if (largest) -x else x)
  at <- o[!duplicated(g[o])]
  list(group = g[at], value = x[at])
}
