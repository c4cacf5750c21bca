# Classed errors: every user-facing error of the package has class
# c("sdcRisk_error_<what>", "sdcRisk_error") and names the argument at fault.
abort_sdc <- function(message, what, call = rlang::caller_env(), ...,
                      .envir = parent.frame()) {
  cli::cli_abort(
    message,
    class = c(paste0("sdcRisk_error_", what), "sdcRisk_error"),
    call = call,
    ...,
    .envir = .envir
  )
}

# Short display of a value for error messages.
show_value <- function(x, n = 5) {
  if (is.null(x)) return("NULL")
  if (is.character(x)) x <- encodeString(x, quote = "\"")
  out <- paste(utils::head(format(x, digits = 15), n), collapse = ", ")
  if (length(x) > n) out <- paste0(out, ", ...")
  if (length(x) != 1) out <- paste0("c(", out, ")")
  out
}

check_data_frame <- function(data, arg = rlang::caller_arg(data),
                             call = rlang::caller_env()) {
  if (!is.data.frame(data)) {
    abort_sdc(c(
      "{.arg {arg}} must be a data frame.",
      "x" = "It is {.obj_type_friendly {data}}."
    ), "not_data_frame", call = call)
  }
  if (nrow(data) == 0) {
    abort_sdc(c(
      "{.arg {arg}} has no rows.",
      "i" = "There is nothing to cross-classify or perturb."
    ), "empty_data", call = call)
  }
  invisible(data)
}

check_names_in <- function(x, data, arg = rlang::caller_arg(x), what = "key",
                           call = rlang::caller_env()) {
  if (!is.character(x) || length(x) == 0 || anyNA(x) || any(x == "")) {
    abort_sdc(c(
      "{.arg {arg}} must name at least one column of the data.",
      "x" = "It is {show_value(x)}."
    ), "keys", call = call)
  }
  if (anyDuplicated(x)) {
    abort_sdc(c(
      "{.arg {arg}} names a column twice.",
      "x" = "Duplicated: {.val {unique(x[duplicated(x)])}}."
    ), "keys", call = call)
  }
  missing <- setdiff(x, names(data))
  if (length(missing) > 0) {
    abort_sdc(c(
      "Every {what} in {.arg {arg}} must be a column of the data.",
      "x" = "Not found: {.val {missing}}.",
      "i" = "The data has columns {.val {utils::head(names(data), 20)}}."
    ), "unknown_key", call = call)
  }
  invisible(x)
}

check_probability <- function(x, arg = rlang::caller_arg(x), open = TRUE,
                              call = rlang::caller_env()) {
  ok <- is.numeric(x) && length(x) == 1 && !is.na(x) &&
    (if (open) x > 0 && x < 1 else x >= 0 && x <= 1)
  if (!ok) {
    abort_sdc(c(
      "{.arg {arg}} must be a single number in {if (open) '(0, 1)' else '[0, 1]'}.",
      "x" = "It is {show_value(x)}."
    ), if (arg == "xi") "xi" else "argument", call = call)
  }
  invisible(x)
}

check_count <- function(x, arg = rlang::caller_arg(x), min = 1,
                        call = rlang::caller_env()) {
  ok <- is.numeric(x) && length(x) >= 1 && !anyNA(x) && all(is.finite(x)) &&
    all(x == round(x)) && all(x >= min)
  if (!ok) {
    abort_sdc(c(
      "{.arg {arg}} must contain whole numbers of at least {min}.",
      "x" = "It is {show_value(x)}."
    ), "argument", call = call)
  }
  invisible(x)
}
