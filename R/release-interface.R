# The one interface of every kind of release: `sdc_release` (ifpr() on a
# data frame, release-ifpr.R), `sdc_release_db` (ifpr() on a database
# table, db-release.R), `sdc_pram_release` (pram_release(), release-pram.R),
# all `sdc_release_any`, and an sdcMicroObj after sdcMicro::pram(). What a
# release holds is a method of its class.

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

# What every release holds: its cells and a valid plan made for them, and
# for a release made for a sample, one weight t_j / F_j in (0, 1] per cell.
validate_release_parts <- function(x, arg, hint, call) {
  validate_sdc_cells(x$cells, paste0(arg, "$cells"), call = call)
  validate_plan(x$plan, paste0(arg, "$plan"), call = call)
  if (!identical(x$plan$cells$cells$count, x$cells$cells$count)) {
    abort_invalid(arg, "its {.field plan} was made for other cells", hint, call)
  }
  w <- x$sample$weight
  if (!is.null(x$sample) && (!inherits(x$sample, "sdc_sample") || !is.double(w) ||
    length(w) != length(x$cells$cells$count) || anyNA(w) || any(w <= 0 | w > 1))) {
    abort_invalid(arg, "its {.field sample} must hold one weight in (0, 1] per cell", hint, call)
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
