# Argument checks: every validator of the package, in one place.
#
# Each `check_*()` takes the value, its name as the user wrote it (`arg`,
# from rlang::caller_arg()), the error class (`class`: the error gets class
# c("sdcRisk_error_<class>", "sdcRisk_error"); the classes are listed on the
# help page ?sdcRisk_errors) and the call to blame (`call`). The caller says
# the class: no class is chosen from the argument's name. They return the
# value invisibly (some return it converted, as documented above them), and
# error through abort_sdc(), naming the argument and showing the value.
#
# Written for this package in the manner of rlang's standalone type checks
# (rlang/R/standalone-types-check.R): a few predicates below, and one small
# checker per kind of argument whose message says what was expected.

# --- Predicates ----------------------------------------------------------

# Numbers (not NA or NaN) in [min, max] (bounds excluded when `open`), whole
# if `whole`, finite unless `finite = FALSE`; of length `n` when given.
is_numbers <- function(x, min = -Inf, max = Inf, whole = FALSE, n = NULL,
                       open_min = FALSE, open_max = FALSE, finite = TRUE) {
  if (!is.numeric(x) || is.object(x) || (!is.null(n) && length(x) != n) || anyNA(x)) return(FALSE)
  if (finite && !all(is.finite(x))) return(FALSE)
  if (whole && !all(x == trunc(x))) return(FALSE)
  if (any(if (open_min) x <= min else x < min)) return(FALSE)
  if (any(if (open_max) x >= max else x > max)) return(FALSE)
  TRUE
}

# The largest whole number the C++ core (32-bit int) takes.
int_max <- .Machine$integer.max

# Upper limit of the number of targets, suspects or largest contributions
# of a rule: beyond it the work and memory (one column or heap slot per
# contribution and cell) are out of proportion to any real table.
max_contributors <- 1000L

# Error naming what was expected (`message`, interpolated in the caller) and
# showing the value found.
# The condition carries the argument's name (`arg`) and the value (`value`).
abort_value <- function(message, x, class, call, arg) {
  env <- rlang::env(parent.frame(), .value = x)
  abort_sdc(c(message, "x" = "It is {show_value(.value)}."), class, call = call, arg = arg, value = x, .envir = env)
}

# --- Generic checks ------------------------------------------------------

check_data_frame <- function(data, arg = rlang::caller_arg(data),
                             call = rlang::caller_env(), class = "not_data_frame") {
  if (!is.data.frame(data)) {
    abort_sdc(c(
      "{.arg {arg}} must be a data frame.",
      "x" = "It is {.obj_type_friendly {data}}."
    ), class, call = call, arg = arg)
  }
  if (nrow(data) == 0) {
    abort_sdc(c(
      "{.arg {arg}} has no rows.",
      "i" = "There is nothing to cross-classify or perturb."
    ), "empty_data", call = call, arg = arg)
  }
  invisible(data)
}

check_names_in <- function(x, data, arg = rlang::caller_arg(x), what = "key",
                           call = rlang::caller_env(), class = "keys") {
  if (!is.character(x) || length(x) == 0 || anyNA(x) || any(x == "")) {
    abort_sdc(c(
      "{.arg {arg}} must name at least one column of the data.",
      "x" = "It is {show_value(x)}."
    ), class, call = call, arg = arg)
  }
  if (anyDuplicated(x)) {
    abort_sdc(c(
      "{.arg {arg}} names a column twice.",
      "x" = "Duplicated: {.val {unique(x[duplicated(x)])}}."
    ), class, call = call, arg = arg)
  }
  missing <- setdiff(x, names(data))
  if (length(missing) > 0) {
    abort_sdc(c(
      "Every {what} in {.arg {arg}} must be a column of the data.",
      "x" = "Not found: {.val {missing}}.",
      "i" = "The data has columns {.val {utils::head(names(data), 20)}}."
    ), "unknown_key", call = call, arg = arg)
  }
  invisible(x)
}

# Columns the package compares value by value: atomic vectors, no list or
# matrix columns.
check_atomic_columns <- function(data, vars, arg = rlang::caller_arg(vars),
                                 call = rlang::caller_env(), class = "argument") {
  bad <- vars[!vapply(vars, function(v) is.atomic(data[[v]]) && is.null(dim(data[[v]])), logical(1))]
  if (length(bad) > 0) {
    abort_sdc(c(
      "Every variable in {.arg {arg}} must be a column holding an atomic vector.",
      "x" = "Not so: {.val {bad}} ({.obj_type_friendly {data[[bad[1]]]}}{if (length(bad) > 1) ', ...' else ''})."
    ), class, call = call, arg = arg)
  }
  invisible(vars)
}

# Names the package gives to columns it adds beside the key columns:
# `count` in the cells of cell_frequencies(), `cell` in their data frame
# (as.data.frame()). (cell_sensitivity() checks its own output columns.)
cell_columns <- c("count", "cell")

check_names_free <- function(x, reserved, arg = rlang::caller_arg(x),
                             call = rlang::caller_env(), class = "key_name") {
  taken <- intersect(x, reserved)
  if (length(taken) > 0) {
    abort_sdc(c(
      "{.arg {arg}} must not name a column the package adds to its tables.",
      "x" = "Reserved: {.val {taken}}.",
      "i" = "Rename the column{if (length(taken) > 1) 's' else ''} of the data, e.g. {.code names(data)[names(data) == \"{taken[1]}\"] <- \"{taken[1]}_\"}."
    ), class, call = call, arg = arg)
  }
  invisible(x)
}

check_probability <- function(x, arg = rlang::caller_arg(x), open = TRUE,
                              call = rlang::caller_env(), class = "argument") {
  if (!is_numbers(x, 0, 1, n = 1, open_min = open, open_max = open)) {
    abort_value("{.arg {arg}} must be a single number in {if (open) '(0, 1)' else '[0, 1]'}.", x, class, call, arg)
  }
  invisible(x)
}

check_count <- function(x, arg = rlang::caller_arg(x), min = 1,
                        call = rlang::caller_env(), class = "argument", max = int_max) {
  if (!(is_numbers(x, min, whole = TRUE) && length(x) >= 1)) {
    abort_value("{.arg {arg}} must contain whole numbers of at least {min}.", x, class, call, arg)
  }
  if (any(x > max)) {
    abort_value("{.arg {arg}} must contain whole numbers between {min} and {fmt_int(max)}.", x[x > max], class, call, arg)
  }
  invisible(x)
}

check_scalar <- function(x, arg = rlang::caller_arg(x), call = rlang::caller_env(),
                         class = "argument") {
  if (length(x) != 1) {
    abort_sdc(c(
      "{.arg {arg}} must be a single number.",
      "x" = "It has length {length(x)}."
    ), class, call = call, arg = arg)
  }
  invisible(x)
}

# The numbers of targets and suspects of a PTN rule: single whole numbers,
# nt >= 1, ns >= 0, both at most max_contributors.
check_nt_ns <- function(nt, ns, call = rlang::caller_env(), class = "argument") {
  check_count(nt, min = 1, max = max_contributors, call = call, class = class)
  check_scalar(nt, call = call, class = class)
  check_count(ns, min = 0, max = max_contributors, call = call, class = class)
  check_scalar(ns, call = call, class = class)
  invisible()
}

# One finite number in [min, max].
check_number <- function(x, arg = rlang::caller_arg(x), min = -Inf, max = Inf,
                         call = rlang::caller_env(), class = "argument") {
  if (!is_numbers(x, min, max, n = 1)) {
    range <- if (is.finite(max)) paste0("in [", min, ", ", max, "]") else paste("of at least", min)
    abort_value("{.arg {arg}} must be a single finite number {range}.", x, class, call, arg)
  }
  invisible(x)
}

check_flag <- function(x, arg = rlang::caller_arg(x), call = rlang::caller_env(),
                       class = "argument") {
  if (!is.logical(x) || length(x) != 1 || is.na(x)) {
    abort_sdc(c("{.arg {arg}} must be {.code TRUE} or {.code FALSE}.",
                "x" = "It is {show_value(x)}."), class, call = call, arg = arg)
  }
  invisible(x)
}

check_string <- function(x, arg = rlang::caller_arg(x), call = rlang::caller_env(),
                         class = "argument") {
  if (!is.character(x) || length(x) != 1 || is.na(x)) {
    abort_sdc(c("{.arg {arg}} must be a single string.",
                "x" = "It is {show_value(x)}."), class, call = call, arg = arg)
  }
  invisible(x)
}

check_percent <- function(x, upper_open, arg = rlang::caller_arg(x),
                          call = rlang::caller_env(), class = "rule_parameter") {
  if (!is_numbers(x, 0, 100, n = 1, open_min = TRUE, open_max = upper_open)) {
    abort_value("{.arg {arg}} must be a single percentage in {if (upper_open) '(0, 100)' else '(0, 100]'}.", x, class, call, arg)
  }
  invisible(x)
}

check_xi_vector <- function(xi, call = rlang::caller_env(), arg = "xi", class = "xi") {
  if (!(is_numbers(xi, 0, 1, open_min = TRUE, open_max = TRUE) && length(xi) > 0)) {
    abort_value("{.arg {arg}} must contain risk bounds strictly between 0 and 1.", xi, class, call, arg)
  }
  invisible(xi)
}

check_positive_numbers <- function(x, arg, min = 0, call = rlang::caller_env(),
                                   class = "argument") {
  if (!(is_numbers(x, min) && length(x) > 0)) {
    abort_value("{.arg {arg}} must contain finite numbers of at least {min}.", x, class, call, arg)
  }
  invisible(x)
}

check_reps <- function(reps, call = rlang::caller_env(), arg = "reps", class = "argument") {
  if (!is_numbers(reps, 1, int_max, whole = TRUE, n = 1)) {
    abort_value("{.arg {arg}} must be one whole number of at least 1.", reps, class, call, arg)
  }
  invisible(reps)
}

# One string among the choices of the caller's formal argument (or
# `values`), like check_choice() (whose error for a zero-length or
# non-character value is an unclassed "subscript out of bounds"). Returns the
# choice; the default (the whole vector of choices) gives the first.
check_choice <- function(x, values = NULL, arg = rlang::caller_arg(x),
                         call = rlang::caller_env(), class = "argument") {
  if (is.null(values)) {
    fn <- sys.function(sys.parent())
    values <- eval(formals(fn)[[arg]], environment(fn))
  }
  if (identical(x, values)) return(values[[1]])
  if (!is.character(x) || length(x) != 1 || is.na(x) || !(x %in% values)) {
    near <- if (is.character(x) && length(x) == 1 && !is.na(x)) values[startsWith(values, x) | startsWith(x, values)] else character()
    abort_sdc(c(
      "{.arg {arg}} must be one of {.or {.val {values}}}.",
      "x" = "It is {show_value(x)}.",
      "i" = if (length(near) == 1) "Did you mean {.val {near}}?"
    ), class, call = call, arg = arg, value = x)
  }
  x
}

# --- Ids into an object --------------------------------------------------

check_cell_ids <- function(cells, ncell, arg = rlang::caller_arg(cells),
                           call = rlang::caller_env(), class = "argument") {
  if (!is_numbers(cells, 1, ncell, whole = TRUE)) {
    abort_value("{.arg {arg}} must contain cell ids between 1 and {fmt_int(ncell)}.", cells, class, call, arg)
  }
  invisible(cells)
}

check_target <- function(target, ncell, call = rlang::caller_env(), arg = "target",
                         class = "argument") {
  if (!is_numbers(target, 1, ncell, whole = TRUE, n = 1)) {
    abort_value("{.arg {arg}} must be one cell id between 1 and {fmt_int(ncell)}, or {.code NULL}.", target, class, call, arg)
  }
  invisible(target)
}

# Returns the block number as an integer.
check_block_index <- function(plan, block, call = rlang::caller_env(), arg = "block",
                              class = "argument") {
  nb <- length(plan$theta)
  if (!is_numbers(block, 1, nb, whole = TRUE, n = 1)) {
    abort_value("{.arg {arg}} must be one block number between 1 and {nb}.", block, class, call, arg)
  }
  as.integer(block)
}

# --- Objects of the package ----------------------------------------------
#
# An argument that must be an object of the package: its class here; the
# object itself is checked by the validator beside its constructor
# (validate_sdc_cells() in design-cells.R, validate_pram_plan() in plan-blocks.R, ...),
# which engine_plan() (all but the records' cells, which the core does not
# read) and as_release() run every time (R/plan-interface.R, R/release-interface.R): an
# edited object gives an error of class sdcRisk_error_invalid_object,
# never a crash.

check_sdc_cells <- function(cells, arg = rlang::caller_arg(cells),
                            call = rlang::caller_env(), class = "argument") {
  if (!inherits(cells, "sdc_cells")) {
    abort_sdc(c(
      "{.arg {arg}} must be an {.cls sdc_cells} object from {.fn cell_frequencies}.",
      "x" = "It is {.obj_type_friendly {cells}}."
    ), class, call = call, arg = arg)
  }
  validate_sdc_cells(cells, arg, call = call)
  invisible(cells)
}

# Values of a passed to C++ must fit an int.
check_count_int <- function(x, arg = rlang::caller_arg(x), call = rlang::caller_env()) {
  if (any(x > .Machine$integer.max)) {
    abort_sdc(c(
      "{.arg {arg}} must be at most {fmt_int(.Machine$integer.max)}.",
      "x" = "It is {show_value(x)}."
    ), "argument", call = call, arg = arg)
  }
  invisible(x)
}

# The keys the intruder matches on: NULL means all of them.
check_known <- function(known, keys, call = rlang::caller_env(), arg = "known") {
  if (is.null(known)) return(keys)
  if (!is.character(known) || length(known) == 0 || anyNA(known) || anyDuplicated(known) ||
    !all(known %in% keys)) {
    abort_sdc(c(
      "{.arg {arg}} must be {.code NULL} (all keys) or distinct keys of the plan.",
      "x" = "It is {show_value(known)}.",
      "i" = "The keys are {.val {keys}}."
    ), "known", call = call, arg = arg, value = known)
  }
  keys[keys %in% known]
}

# --- Checks of one function's combination of arguments -------------------

check_plan_keys <- function(keys, plan, call = rlang::caller_env()) {
  if (!identical(as.character(keys), plan$cells$keys)) {
    abort_sdc(c(
      "{.arg keys} must be the key variables the plan was built on, in the same order.",
      "x" = "{.arg keys} is {.val {keys}}; the plan's keys are {.val {plan$cells$keys}}."
    ), "plan_mismatch", call = call, arg = "keys")
  }
  invisible(keys)
}

# The cell of every record of `data` under the plan. Fast path: `data` has
# the plan's records in the plan's order, recognised by the categories of
# every key and a fingerprint of every record's codes (one sequential pass).
# Otherwise `data` is cross-classified again and must give the same cells
# with the same counts (any row order).
check_plan_data <- function(data, plan, call = rlang::caller_env()) {
  cells <- plan$cells
  keys <- cells$keys
  check_names_in(keys, data, arg = "keys", call = call)
  if (!is.null(cells$source) && nrow(data) == length(cells$cell_id)) {
    # factor codes are checked in the fingerprint's pass (a malformed factor
    # gives NA, and then the error of cell_frequencies() below)
    coded <- lapply(keys, function(k) {
      code_key(data[[k]], k, cells$na == "category", call = call, shift = FALSE, check = FALSE)
    })
    if (identical(key_source(coded, check_range = TRUE), cells$source)) {
      # the records' cells, which engine_plan() leaves unchecked
      validate_sdc_cells(cells, "plan$cells", call = call)
      return(cells$cell_id)
    }
  }
  cf <- cell_frequencies(data, keys, na = cells$na)
  same <- nrow(cf$cells) == nrow(cells$cells) &&
    identical(cf$cells$count, cells$cells$count) &&
    all(vapply(keys, function(k) identical(cf$cells[[k]], cells$cells[[k]]), logical(1)))
  if (!same) {
    abort_sdc(c(
      "{.arg plan} was built for other data.",
      "x" = "The data give {fmt_int(nrow(cf$cells))} cells ({fmt_int(sum(cf$cells$count))} records); the plan has {fmt_int(nrow(cells$cells))} cells ({fmt_int(sum(cells$cells$count))} records), or the cells differ.",
      "i" = "Build the plan from {.code cell_frequencies()} of this data."
    ), "plan_mismatch", call = call, arg = "plan")
  }
  cf$cell_id
}

# Checks that belong to the combination of blocks, theta and matrices.
check_block_parameters <- function(blocks, theta, matrix, call = rlang::caller_env()) {
  for (b in seq_along(blocks)) {
    p <- matrix[[b]]
    has_theta <- !is.na(theta[b])
    if (is.null(p) == !has_theta) {
      abort_sdc(c(
        "Block {b} needs exactly one of {.arg theta} and {.arg matrix}.",
        "x" = if (has_theta) "It has both." else "It has neither."
      ), if (has_theta) "matrix" else "theta", call = call, arg = "theta")
    }
    if (is.null(p)) next
    m <- length(blocks[[b]])
    if (!is.matrix(p) || !is.numeric(p) || !identical(dim(p), c(m, m))) {
      abort_sdc(c(
        "{.arg matrix} of block {b} must be a numeric {m} x {m} matrix (one row and column per cell).",
        "x" = "It is {.obj_type_friendly {p}}{if (is.matrix(p)) paste0(' of size ', nrow(p), ' x ', ncol(p)) else ''}."
      ), "matrix", call = call, arg = "matrix")
    }
    if (anyNA(p) || any(p < 0 | p > 1)) {
      abort_sdc(c(
        "{.arg matrix} of block {b} must have entries in [0, 1].",
        "x" = "Found {show_value(p[is.na(p) | p < 0 | p > 1])}."
      ), "matrix", call = call, arg = "matrix")
    }
    cs <- colSums(p)
    if (any(abs(cs - 1) > 1e-12)) {
      bad <- which(abs(cs - 1) > 1e-12)
      abort_sdc(c(
        "{.arg matrix} of block {b} must be column-stochastic: p[i, j] = P(Z = c_i | X = c_j).",
        "x" = "Column sums: {show_value(cs[bad])} (column{if (length(bad) > 1) 's' else ''} {show_value(bad)}).",
        "i" = "Did you give the transpose (rows summing to 1)?"
      ), "matrix", call = call, arg = "matrix")
    }
  }
}

check_also <- function(also, keys, data, call = rlang::caller_env()) {
  if (is.null(also)) return(invisible())
  check_names_in(also, data, arg = "also", what = "variable", call = call)
  both <- intersect(also, keys)
  if (length(both) > 0) {
    abort_sdc(c(
      "{.arg also} must not repeat a key variable.",
      "x" = "In both {.arg keys} and {.arg also}: {.val {both}}."
    ), "also", call = call, arg = "also")
  }
  invisible()
}


check_ptn_lengths <- function(vars, call = rlang::caller_env()) {
  lens <- unlist(lapply(vars, function(v) vapply(v, length, integer(1))))
  n <- max(lens)
  if (any(lens == 0L)) {
    abort_sdc(c(
      "{.arg pt} has no respondents.",
      "i" = "Give one value per respondent of the cell."
    ), "empty_data", call = call, arg = "pt")
  }
  if (any(!(lens %in% c(1L, n)))) {
    abort_sdc(c(
      "{.arg pt}, {.arg noise} and {.arg self_noise} must have one value per respondent.",
      "x" = "Their lengths are {.val {unique(lens)}}.",
      "i" = "Only a single number is recycled."
    ), "ptn_length", call = call, arg = "pt")
  }
  # every sum or difference of values the rules form is bounded by the sum
  # of their absolute values: finite, no sum overflows to Inf or NaN
  total <- sum(vapply(unlist(vars, recursive = FALSE), function(z) {
    sum(abs(z)) * (if (length(z) == 1L) n else 1)
  }, numeric(1)))
  if (!is.finite(total)) {
    abort_sdc(c(
      "{.arg pt}, {.arg noise} and {.arg self_noise} are too large to add up.",
      "x" = "The sum of their absolute values overflows a double (about {format(.Machine$double.xmax, digits = 3)}).",
      "i" = "Rescale the contributions, e.g. to thousands or millions."
    ), "ptn_input", call = call, arg = "pt")
  }
  n
}

check_rules <- function(rules, call = rlang::caller_env()) {
  if (inherits(rules, "sdc_rule")) rules <- list(rules)
  if (!is.list(rules) || length(rules) == 0 ||
      !all(vapply(rules, inherits, logical(1), "sdc_rule"))) {
    abort_sdc(c(
      "{.arg rules} must be a rule or a list of rules.",
      "x" = "It is {.obj_type_friendly {rules}}.",
      "i" = "Build rules with {.fn rule_p}, {.fn rule_nk}, {.fn rule_frequency}, ..."
    ), "rules", call = call, arg = "rules")
  }
  nm <- names(rules)
  default <- vapply(rules, `[[`, character(1), "name")
  if (is.null(nm)) nm <- default
  nm[is.na(nm) | nm == ""] <- default[is.na(nm) | nm == ""]
  if (anyDuplicated(nm)) {
    abort_sdc(c(
      "Every rule needs its own name.",
      "x" = "Duplicated: {.val {unique(nm[duplicated(nm)])}}.",
      "i" = "Name the rules in the list, e.g. {.code list(a = rule_ptn(...), b = rule_ptn(...))}."
    ), "rules", call = call)
  }
  for (i in seq_along(rules)) rules[[i]]$name <- nm[i]
  names(rules) <- nm
  rules
}

# Policy of warn_distinct_keys(): a key has too many distinct values for its
# records when it has nearly one per record (key_distinct_share_all), or
# when it has more than key_distinct_min values that are also more than
# key_distinct_share of its records: income (42,310 values in 59,033
# records, 72%) and a 5,000-value integer (8%) both passed the first rule
# alone silently (issue 37), while a US PUMA key (about 2,400 values) on a
# national file of millions stays silent. Chosen by hand; not measured.
# Data under key_distinct_min_records records are never warned about.
key_distinct_share_all <- 0.8
key_distinct_min <- 1000
key_distinct_share <- 0.05
key_distinct_min_records <- 50

key_too_distinct <- function(distinct, n_records) {
  n_records >= key_distinct_min_records &
    (distinct >= key_distinct_share_all * n_records |
       (distinct > key_distinct_min & distinct > key_distinct_share * n_records))
}
