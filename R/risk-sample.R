# Sample releases (issue 34): the risk when the intruder does not know
# whether his target is in the file.
#
# The released file is a sample of t_j units from the F_j units of cell c_j
# of a population. An intruder who knows that his target B is in the file
# has the risk R_j(a, t) of Nayak, Zhang and You (2016, eq. 2.8). One who
# does not draws B from the F_j population units of c_j (he cannot tell
# them apart: the keys are all he knows). With probability t_j / F_j, B is
# one of the t_j sampled units of c_j, which the plan treats alike (it
# depends on the sample only through its counts), so each of them is the
# released record picked with probability R_j(a, t) given S_j = a; otherwise
# B is not in the file and no match is correct. B's membership does not
# change the distribution of S_j (the file is what it is), so
#   P(CM | X_B = c_j, S_j = a) = (t_j / F_j) R_j(a, t)
# for every a, exactly, whatever the sampling design (the design decides
# which units are sampled, not which one the intruder targets). The same
# holds for an intruder who matches on some keys only (R_D(a, t) of a target
# of cell c_j). The certificate is then the core's maximum with per-cell
# weights w_j = t_j / F_j (engine_weighted()). Without PRAM the risk at
# a = t_j is (t_j / F_j) (1 / t_j) = 1 / F_j, the population uniqueness of
# the sample-unique literature, and sdcMicro's individual risk E[1 / F_j | t_j]
# when F_j is estimated from a model (population_model()).
#
# sample_of() is the one place that turns `population` into the weights:
# the known population counts here, a model's estimates in
# risk-sample-model.R; the result (an `sdc_sample`) travels with
# certificates and prints itself (sample_line()).

# Errors about `population` (class sdcRisk_error_<what>).
abort_population <- function(message, what = "population", call, arg = "population", .envir = parent.frame()) {
  abort_sdc(message, what, call = call, arg = arg, .envir = .envir)
}

# The intruder model: does the intruder know that his target is in the file?
# "known" (the conservative case of the paper) needs no population; "unknown"
# needs one, and a population makes sense only then.
check_target_in_file <- function(target_in_file, population, call = rlang::caller_env()) {
  target_in_file <- check_choice(target_in_file, c("known", "unknown"), arg = "target_in_file", call = call)
  if (target_in_file == "unknown" && is.null(population)) {
    abort_population(c(
      "{.code target_in_file = \"unknown\"} needs the population the file was sampled from.",
      "x" = "{.arg population} is {.code NULL}.",
      "i" = "Give the population counts by the keys (a data frame or database table with the keys and {.field count}), or a model of them from {.fn population_model}."
    ), call = call)
  }
  if (target_in_file == "known" && !is.null(population)) {
    abort_population(c(
      "{.arg population} plays no role when the intruder knows that his target is in the file.",
      "x" = "{.arg target_in_file} is {.val known} (the default, the conservative case).",
      "i" = "Set {.code target_in_file = \"unknown\"} for the risk of a target who may not be in the file, or leave {.arg population} out."
    ), call = call, arg = "target_in_file")
  }
  target_in_file
}

# The sample case of the cells `cells`: NULL when the intruder knows that
# the target is in the file, else an `sdc_sample` with, per cell, `weight`
# (w_j = t_j / F_j, the probability that a target of the cell is in the
# file, or its estimate) and `population` (F_j, or its estimate), whether
# they are `exact`, the `model` and a `label`. `data`: the records the cells
# were made of, where a model reads its sampling weights by column name.
sample_of <- function(cells, population, target_in_file, data = NULL, call = rlang::caller_env()) {
  target_in_file <- check_target_in_file(target_in_file, population, call = call)
  if (target_in_file == "known") return(NULL)
  if (inherits(population, "sdc_population_model")) {
    return(model_sample(cells, population, data = data, call = call))
  }
  f <- as.numeric(cells$cells$count)
  big_f <- population_counts(cells, population, call = call)
  new_sdc_sample(weight = f / big_f, population = big_f, exact = TRUE,
                 label = paste0("population counts known, ", fmt_int(attr(big_f, "total")), " units"))
}

new_sdc_sample <- function(weight, population, exact, label, model = NULL) {
  structure(list(weight = weight, population = population, exact = exact, label = label, model = model),
            class = "sdc_sample")
}

# How a certificate names the sample case, e.g. "for a target who may not be
# in the file (population counts given (123 units))".
sample_line <- function(s) {
  if (is.null(s)) return("for a target known to be in the file")
  paste0("for a target who may not be in the file (", s$label, ")")
}

# "Exact" or "Estimated": a risk computed from a model of F is an estimate.
risk_kind <- function(s) if (is.null(s) || isTRUE(s$exact)) "Exact" else "Estimated"

# The lines under a maximum for a sample: the arg-max cell's population and
# probability of being in the file, and its risk for an intruder who knows
# the target is in the file. NULL otherwise.
sample_cell_line <- function(x) {
  if (is.null(x$sample) || is.null(x$p_in_file)) return(NULL)
  pop <- format(x$population, digits = 6)
  p <- format(x$p_in_file, digits = 6)
  # the estimate's formula on a line of its own, so that wrapping never
  # splits "T E[1 / F | T]"
  what <- if (isTRUE(x$sample$exact)) {
    sprintf("  at that cell F = %s, P(target in file) = T / F = %s", pop, p)
  } else {
    c(sprintf("  at that cell E[F | T] = %s,", pop), sprintf("  estimated P(target in file) = T E[1 / F | T] = %s", p))
  }
  wrap_lines(c(what, sprintf("  risk if known to be in the file: %s", format(x$risk_in_file, digits = 6))))
}

# What a certificate keeps of the sample case: its description, not its
# per-cell vectors (millions of cells).
sample_summary <- function(s) {
  if (is.null(s)) return(NULL)
  s$weight <- NULL
  s$population <- NULL
  s
}

# The maximum of plan_max_risk(weight = s$weight) with the sample case: the
# cell's probability of being in the file, its population and its risk for
# an intruder who knows that the target is in the file.
add_sample <- function(mx, s) {
  mx$target_in_file <- if (is.null(s)) "known" else "unknown"
  mx$sample <- sample_summary(s)
  if (!is.null(s) && !is.na(mx$cell)) {
    mx$p_in_file <- s$weight[mx$cell]
    mx$population <- s$population[mx$cell]
    mx$risk_in_file <- mx$risk / mx$p_in_file
  }
  mx
}

# A certificate (a list) with the sample case of its maximum `mx`
# (add_sample()): nothing for a target known to be in the file.
certificate_sample <- function(cert, mx) {
  if (is.null(mx$sample)) return(cert)
  for (k in c("target_in_file", "sample", "p_in_file", "population", "risk_in_file")) cert[k] <- list(mx[[k]])
  cert
}

# The rows of match_risk() for a target who may not be in the file: the
# risks times the cells' weights, beside the in-file risk.
sample_rows <- function(out, s, cells) {
  if (is.null(s)) return(out)
  na <- nrow(out) / length(cells)
  w <- rep(s$weight[cells], each = na)
  out$risk_in_file <- out$risk
  out$risk <- w * out$risk
  out$gamma <- w * out$gamma
  out$p_in_file <- w
  out$population <- rep(s$population[cells], each = na)
  attr(out, "sample") <- sample_summary(s)
  out
}

# ---- known population counts ---------------------------------------------------

# The keys and `count` are columns of the population (`cols`, its names).
check_population_columns <- function(cols, keys, call) {
  missing <- setdiff(c(keys, "count"), cols)
  if (length(missing) == 0) return(invisible())
  abort_population(c(
    "{.arg population} must have a column for every key and a column {.field count}.",
    "x" = "Missing: {.val {missing}}.",
    "i" = "{.code cell_frequencies(population_records, keys)$cells} has this form."
  ), call = call)
}

# F_j of every cell of `cells` from the population counts (a data frame, an
# sdc_cells or a lazy database table with the keys and `count`); rows with
# the same keys add up. Checked: every category and every cell of the sample
# is in the population, and F_j >= t_j. The total of the counts is the
# attribute `total`.
population_counts <- function(cells, population, call = rlang::caller_env()) {
  keys <- cells$keys
  pop <- population_table(population, keys, call)
  tab <- cells$cells
  n <- nrow(tab)
  codes <- lapply(keys, function(k) population_codes(tab[[k]], pop[[k]], k, call))
  nlevels <- vapply(codes, `[[`, integer(1), "nlevels")
  if (prod(as.numeric(nlevels)) >= 2^62) {
    # (combinations beyond one 64-bit number: grouped as the cells are)
    codes <- population_grouped_codes(codes, nlevels)
    nlevels <- vapply(codes, `[[`, integer(1), "nlevels")
  }
  # one pass over the population's rows in the core, however many
  big_f <- core_call(cpp_population_counts, lapply(codes, `[[`, "sample"), lapply(codes, `[[`, "population"),
                     nlevels, as.numeric(pop$count), call = call)
  check_population_cells(cells, big_f, call)
  structure(big_f, total = sum(pop$count))
}

# Codes of the sample and the population over fewer keys: keys whose
# numbers of categories multiply beyond 2^60 are combined in groups by one
# cross-classification of both (rare: many keys of many categories).
population_grouped_codes <- function(codes, nlevels) {
  n <- length(codes[[1]]$sample)
  res <- cross_classify_codes(lapply(codes, function(x) c(x$sample, x$population)), nlevels)
  id <- res$cell_id
  list(list(sample = id[seq_len(n)], population = id[-seq_len(n)], nlevels = length(res$counts)))
}

# The population as a data frame of the keys and `count` (checked).
population_table <- function(population, keys, call) {
  if (inherits(population, "sdc_cells")) population <- population$cells
  if (inherits(population, "tbl_lazy")) {
    check_db_packages(call = call)
    population <- population_collect(population, keys, call)
  }
  if (!is.data.frame(population)) {
    abort_population(c(
      "{.arg population} must be the population counts by the keys (a data frame or a database table with the keys and {.field count}), or a model from {.fn population_model}.",
      "x" = "It is {.obj_type_friendly {population}}."
    ), call = call)
  }
  check_population_columns(names(population), keys, call)
  count <- population$count
  if (!is_numbers(count, 0, whole = TRUE)) {
    bad <- count[is.na(count) | !is.finite(count) | count < 0 | count != trunc(count)]
    abort_population(c(
      "The {.field count} column of {.arg population} must hold whole numbers of at least 0.",
      "x" = if (is.numeric(count)) "Found {show_value(bad)}." else "It is {.obj_type_friendly {count}}."
    ), call = call)
  }
  population
}

# A lazy table's keys and counts, read from the database.
population_collect <- function(population, keys, call) {
  check_population_columns(colnames(population), keys, call)
  as.data.frame(dplyr::collect(dplyr::select(population, dplyr::all_of(c(keys, "count")))))
}

# Codes of one key in the sample's cells and the population's rows, over the
# sample's categories (NA for a population value the sample does not have).
# Factors and strings compare as text, numbers as numbers, logicals as
# logicals; every category of the sample must be in the population.
population_codes <- function(x, y, key, call) {
  kind <- function(v) {
    if (is.factor(v) || is.character(v)) "text" else if (is.logical(v)) "logical" else if (is.numeric(v)) "number" else "other"
  }
  same_kind <- kind(x) == kind(y) && kind(x) != "other"
  if (same_kind && kind(x) == "text") x <- as.character(x)
  values <- unique(x)
  codes_y <- if (!same_kind) {
    integer()
  } else if (is.factor(y)) {
    # millions of population cells: match the levels, not the values
    match(levels(y), values)[unclass(y)]
  } else {
    match(if (is.character(values)) as.character(y) else y, values)
  }
  absent <- values[tabulate(codes_y, length(values)) == 0]
  if (!same_kind || length(absent) > 0) {
    abort_population(c(
      "The categories of key {.var {key}} in {.arg population} do not match the sample's.",
      "x" = if (same_kind) {
        "Categories of the sample that no row of the population has: {show_value(absent)}."
      } else {
        "In the sample it is {.obj_type_friendly {x}}, in the population {.obj_type_friendly {y}}."
      },
      "i" = "Code the keys of the sample and the population alike."
    ), "population_categories", call = call)
  }
  list(sample = match(x, values), population = codes_y, nlevels = length(values))
}

# Every cell of the sample is in the population, with at least its count.
check_population_cells <- function(cells, big_f, call) {
  f <- cells$cells$count
  absent <- which(big_f == 0)
  short <- which(big_f > 0 & big_f < f)
  if (length(absent) + length(short) == 0) return(invisible())
  missing <- length(absent) > 0
  bad <- if (missing) absent else short
  j <- utils::head(bad, 3)
  tab <- cells$cells[j, cells$keys, drop = FALSE]
  where <- vapply(seq_along(j), function(i) {
    paste0("(", paste0(cells$keys, " = ", vapply(tab[i, , drop = FALSE], format, ""), collapse = ", "), ")")
  }, "")
  abort_population(c(
    if (missing) "Cells of the sample are missing from {.arg population}." else "Population counts of {.arg population} are smaller than the sample's.",
    "x" = if (missing) {
      "{n_of(length(bad), 'cell')} of the sample without a population count, such as {where}."
    } else {
      "{n_of(length(bad), 'cell')} with F < t, such as {where}: F = {show_value(big_f[j])}, t = {show_value(f[j])}."
    },
    "i" = "The population must contain every unit of the sample."
  ), if (missing) "population_missing" else "population_counts", call = call)
}
