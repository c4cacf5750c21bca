#' Per-variable PRAM release with a certificate
#'
#' `pram_release()` perturbs each key of `vars` with its own transition
#' matrix, within the strata of the keys `strata` if any, the way
#' `sdcMicro::pram()` and mu-ARGUS do, but records every matrix it used (one
#' per variable and stratum) and certifies the release with the exact
#' maximum correct-match risk of [max_match_risk()]. This is the way out
#' when sdcMicro's release cannot be certified from the `sdcMicroObj`
#' (`strata_variables` in sdcMicro 5.8 keeps only the last stratum's
#' matrix).
#'
#' `pram_release()` takes a data frame and knows no households: every
#' record is perturbed on its own and the certificate is per person. For
#' persons in households, do not give it household-level variables (one
#' value per household) or the relationship to the head in `vars`: release
#' those in a household-level file, as the section on households of
#' [ifpr()] explains (where `ifpr()` and [pram_certify()] on an
#' `sdcMicroObj` with `hhId` refuse them).
#'
#' Without `matrices`, each variable gets, in each stratum, the invariant
#' matrix of Gouweleeuw et al. (1998) built from the variable's category
#' frequencies among the stratum's records, [pram_matrix_invariant()] with
#' `pd` and `alpha` (variables in the order of `vars`, strata in order, so
#' `set.seed()` reproduces the random diagonals).
#'
#' The draw is made in the C++ core with R's generator: one uniform per
#' record and perturbed variable, in record order and then variable order,
#' turned into the new category by the inverse of the cumulative
#' distribution of the record's column. Linear in the records;
#' `set.seed()` reproduces the release on every platform.
#'
#' @param data A data frame with one row per record.
#' @param keys The key variables an intruder matches on.
#' @param vars The keys to perturb (default: all keys not in `strata`).
#' @param strata Keys (not perturbed) within whose categories the matrices
#'   are built, or `NULL`.
#' @param pd,alpha Parameters of [pram_matrix_invariant()]: one number for
#'   every variable, or a list (or vector) named by the variables of `vars`
#'   with one element each (for `pd`, one number or one per category).
#' @param matrices Instead of `pd` and `alpha`, the matrices themselves, as
#'   [pram_plan_vars()] takes them.
#' @param goal The goal of the certificate, as in [max_match_risk()].
#' @param known The keys the intruder matches on, as in [max_match_risk()]
#'   (`NULL`: all keys).
#' @param population,target_in_file For a sample release: the population the
#'   file was sampled from (its counts by the keys, or a
#'   [population_model()]; sampling weights may name a column of `data`)
#'   and whether the intruder knows that his target is in the file
#'   (`"known"`, the default) or not (`"unknown"`); see [match_risk()]. With
#'   `"unknown"` the certificate is the maximum of \eqn{(t_j / F_j) R_j(a,
#'   t)} and says so.
#' @param na How records with a missing key are treated, as in
#'   [cell_frequencies()]. With `"exclude"` they are released unchanged. With
#'   `"category"`, `NA` is the last category of each key and its matrices: its
#'   row and column decide how records move into and out of the missing
#'   category. To keep missing values where they are, give `matrices` whose
#'   `NA` column has 1 on the diagonal and whose `NA` row is 0 elsewhere.
#' @returns An object of class `sdc_pram_release`: a list with `data` (the
#'   released data: only the columns `vars` of records in a cell change),
#'   `plan` (the `pram_plan_vars`, holding every matrix), `cells`,
#'   `new_codes` (the released category of every record and perturbed
#'   variable), `new_cell` (the original cell each released record falls
#'   in, `NA` if that cell was empty), `keys`, `vars`, `strata` and
#'   `certificate` (goal, exact maximum risk with its cell and `a`, records
#'   changed, expected changed records and total perturbation variance; for
#'   a sample, `target_in_file` and `sample`, the population or model), and
#'   for a sample `sample` (the weights \eqn{t_j / F_j} of the cells).
#' @family per-variable PRAM
#' @export
#' @examples
#' set.seed(1)
#' keys <- c("sex", "race", "marital")
#' rel <- pram_release(pums_md[1:2000, ], keys, vars = c("race", "marital"),
#'   strata = "sex", pd = 0.8, alpha = 0.5)
#' rel
#' rel$certificate$risk
pram_release <- function(data, keys, vars = setdiff(keys, strata), strata = NULL,
                         pd = 0.8, alpha = 0.5, matrices = NULL,
                         goal = c("all_matches", "unique_matches", "sample_uniques"),
                         known = NULL, na = c("exclude", "category"), population = NULL,
                         target_in_file = c("known", "unknown")) {
  check_data_frame(data)
  check_names_in(keys, data)
  goal <- check_choice(goal)
  na <- check_choice(na)
  check_pram_vars(vars, strata, keys)
  known <- check_known(known, keys)
  cf <- cell_frequencies(data, keys, na = na)
  smp <- sample_of(cf, population, target_in_file, data = data)
  if (is.null(matrices)) matrices <- invariant_matrices(cf, vars, strata, pd, alpha)
  plan <- pram_plan_vars(cf, matrices, strata = strata)
  ep <- engine_plan(plan)
  codes <- plan_draw(plan, cf$cell_id, ep = ep)
  colnames(codes) <- vars
  released <- write_codes(data, cf, vars, codes)
  new_cell <- released_cell(cf, vars, codes)
  bar <- progress_bar("pram_release(): exact maximum risk")
  mx <- plan_max_risk(plan, goal, known, ep, progress = progress_part(bar), weight = smp$weight)
  new_sdc_pram_release(released, plan, cf, codes, new_cell, keys, vars, strata, add_sample(mx, smp), ep = ep,
                       sample = smp)
}

new_sdc_pram_release <- function(data, plan, cells, codes, new_cell, keys, vars, strata, max_risk,
                                 ep = engine_plan(plan), sample = NULL) {
  cost <- plan_cost(plan, ep = ep, stay = FALSE)
  old <- cells$cell_id
  moved <- !is.na(old) & (is.na(new_cell) | new_cell != old)
  certificate <- structure(list(
    goal = max_risk$goal,
    known = max_risk$known,
    risk = max_risk$risk,
    cell = max_risk$cell,
    a = max_risk$a,
    count = max_risk$count,
    cell_keys = max_risk$keys,
    method = "per-variable PRAM",
    vars = vars,
    records_changed = sum(moved),
    n_excluded = cells$n_excluded %||% 0,
    expected_changed = cost$changed,
    total_variance = cost$variance
  ), class = "sdc_pram_certificate")
  certificate <- certificate_sample(certificate, max_risk)
  structure(
    list(data = data, plan = plan, cells = cells, new_codes = codes, new_cell = new_cell,
         keys = keys, vars = vars, strata = strata %||% character(0), certificate = certificate,
         sample = sample),
    class = c("sdc_pram_release", "sdc_release_any")
  )
}

# A per-variable release: data, cells, plan, released categories and cells
# agree in their numbers of records, categories are in range, and the plan
# is valid for the cells.
#' @export
validate_release.sdc_pram_release <- function(x, arg = "release", call = rlang::caller_env()) {
  hint <- "Use the object {.fn pram_release} returned, unmodified."
  if (!is.list(x) || !is.data.frame(x$data) || !inherits(x$cells, "sdc_cells") ||
    !inherits(x$plan, "pram_plan_vars")) {
    abort_invalid(arg, "its {.field data}, {.field cells} or {.field plan} are missing", hint, call)
  }
  validate_release_parts(x, arg, hint, call)
  counts <- x$cells$cells$count
  if (!identical(x$vars, x$plan$vars)) abort_invalid(arg, "its {.field plan} perturbs other variables", hint, call)
  n <- nrow(x$data)
  codes <- x$new_codes
  if (n != x$cells$n_records || length(x$cells$cell_id) != n || length(x$new_cell) != n ||
    !is.matrix(codes) || nrow(codes) != n) {
    abort_sdc(c(
      "{.arg {arg}} does not hang together: its data, its cells and its released categories have different numbers of records.",
      "i" = hint
    ), "release_mismatch", call = call, arg = arg)
  }
  k <- lengths(x$plan$levels[x$vars])
  inside <- !is.na(x$cells$cell_id)
  ok <- is.integer(codes) && ncol(codes) == length(x$vars) &&
    all(vapply(seq_along(k), function(j) {
      cj <- codes[, j]
      identical(is.na(cj), !inside) && all(cj[inside] >= 1L & cj[inside] <= k[j])
    }, logical(1)))
  if (!ok) abort_invalid(arg, "its {.field new_codes} must hold a category of every perturbed key for every record in a cell", hint, call)
  nc <- x$new_cell
  if (!is.integer(nc) || is.object(nc) || any(nc < 1L | nc > length(counts), na.rm = TRUE) || any(!is.na(nc[!inside]))) {
    abort_invalid(arg, "its {.field new_cell} must be a cell id or NA for every record", hint, call)
  }
  x$also <- NULL
  check_release_columns(x, arg, hint, call)
  invisible(x)
}

check_pram_vars <- function(vars, strata, keys, call = rlang::caller_env()) {
  if (!is.character(vars) || length(vars) == 0 || anyNA(vars) || !all(vars %in% keys)) {
    abort_sdc(c(
      "{.arg vars} must name at least one key to perturb.",
      "x" = "It is {show_value(vars)}; the keys are {.val {keys}}."
    ), "argument", call = call, arg = "vars")
  }
  strata <- check_strata(strata, keys, call = call)
  both <- intersect(vars, strata)
  if (length(both) > 0) {
    abort_sdc(c(
      "A key cannot be both perturbed and a stratum.",
      "x" = "In both {.arg vars} and {.arg strata}: {.val {both}}."
    ), "strata", call = call, arg = "vars")
  }
  invisible()
}

# The parameter of variable v: one value for all, or one per variable.
param_of <- function(x, v, vars, arg, call = rlang::caller_env()) {
  if (is.list(x) || (!is.null(names(x)) && all(names(x) %in% vars))) {
    if (!v %in% names(x)) {
      abort_sdc(c(
        "{.arg {arg}} must give a value for every variable of {.arg vars}.",
        "x" = "No value for {.val {v}}."
      ), "argument", call = call, arg = arg)
    }
    return(x[[v]])
  }
  x
}

# Invariant matrices (Gouweleeuw et al. 1998) per variable and stratum, from
# the category frequencies of the stratum's records; variables outer, strata
# inner, as sdcMicro draws them.
invariant_matrices <- function(cf, vars, strata, pd, alpha, call = rlang::caller_env()) {
  st <- cell_strata(cf, strata)
  counts <- cf$cells$count
  codes <- cell_codes(cf)
  levels <- key_levels(cf, call = call)
  per_var <- lapply(vars, function(v) {
    k <- length(levels[[v]])
    lapply(seq_along(st$labels), function(s) {
      sel <- st$stratum_of_cell == s
      freq <- stats::setNames(tabulate_sum(codes[[v]][sel], counts[sel], k), levels[[v]])
      pram_matrix_invariant(freq, param_of(pd, v, vars, "pd", call), param_of(alpha, v, vars, "alpha", call))
    })
  })
  names(per_var) <- vars
  if (length(strata) == 0) return(lapply(per_var, `[[`, 1L))
  out <- lapply(seq_along(st$labels), function(s) lapply(per_var, `[[`, s))
  names(out) <- st$labels
  out
}

# The categories cell_frequencies() used for key v, in its order.
vars_categories <- function(cf, v) cf$source$values[[match(v, cf$keys)]]



# Write the released categories of the perturbed keys into the records,
# keeping every attribute of the columns.
write_codes <- function(data, cf, vars, codes, cell_id = cf$cell_id) {
  inside <- which(!is.na(cell_id))
  for (v in vars) {
    lev <- vars_categories(cf, v)
    x <- data[[v]]
    new <- codes[inside, v]
    if (is.factor(x)) {
      attrs <- attributes(x)
      y <- as.integer(x)
      y[inside] <- new
      attributes(y) <- attrs
      x <- y
    } else {
      x[inside] <- lev[new]
    }
    data[[v]] <- x
  }
  data
}

# The original cell that each released record falls in (NA if that
# combination was empty, or the record is in no cell).
released_cell <- function(cf, vars, codes) {
  keys <- cf$keys
  cc <- cell_codes(cf)
  old <- cf$cell_id
  rec_codes <- lapply(keys, function(k) {
    if (k %in% vars) codes[, k] else cc[[k]][old]
  })
  key_cells <- do.call(paste, c(unname(cc), sep = "\r"))
  key_recs <- do.call(paste, c(rec_codes, sep = "\r"))
  out <- match(key_recs, key_cells)
  out[is.na(old)] <- NA_integer_
  out
}

# The certificate lines of a per-variable PRAM release (pram_release(),
# pram_certify()).
pram_certificate_line <- function(cert) {
  known <- if (!is.null(cert$known) && length(cert$known) < length(cert$cell_keys)) {
    paste0("; intruder knows ", paste(cert$known, collapse = ", "))
  } else ""
  risk_lines(paste0("Certificate (", tolower(risk_kind(cert$sample)), " maximum risk)"), cert, cert$cell_keys,
             goal = cert$goal, known = known, n_excluded = cert$n_excluded)
}

#' @export
format.sdc_pram_certificate <- function(x, ...) {
  wrap_lines(c(
    paste0("<sdc_pram_certificate> of a per-variable PRAM of ", paste(x$vars, collapse = ", ")),
    pram_certificate_line(x),
    households_line(x$households),
    sprintf("Expected changed records %.1f; total perturbation variance %.1f",
            x$expected_changed, x$total_variance)
  ))
}

#' @export
print.sdc_pram_certificate <- function(x, ...) {
  writeLines(format(x, ...))
  invisible(x)
}

#' @export
format.sdc_pram_release <- function(x, ...) {
  x <- as_release(x, arg = "x", call = rlang::current_env())
  cert <- x$certificate
  n <- x$cells$n_records
  wrap_lines(c(
    paste0("<sdc_pram_release>: ", n_of(n, "record"), "; keys ", paste(x$keys, collapse = ", ")),
    paste0("Per-variable PRAM of ", paste(x$vars, collapse = ", "),
           if (length(x$strata)) paste0(" within strata of ", paste(x$strata, collapse = " x "),
                                        " (", fmt_int(length(x$plan$matrices)), " strata)") else ""),
    pram_certificate_line(cert),
    sprintf("Changed: %s records (%.2f%%; expected %.1f)",
            fmt_int(cert$records_changed), 100 * cert$records_changed / n, cert$expected_changed),
    sprintf("Total perturbation variance %.1f", cert$total_variance),
    missing_key_line(x$cells)
  ))
}

#' @export
print.sdc_pram_release <- function(x, ...) {
  writeLines(format(x, ...))
  invisible(x)
}

#' @export
summary.sdc_pram_release <- function(object, ...) {
  object <- as_release(object, arg = "object")
  plan <- object$plan
  cells <- object$cells
  counts <- cells$cells$count
  old <- cells$cell_id
  inside <- !is.na(old)
  vars <- data.frame(
    variable = plan$vars,
    categories = lengths(plan$levels[plan$vars]),
    changed = vapply(plan$vars, function(v) {
      sum(object$new_codes[inside, v] != plan$codes[[v]][old[inside]])
    }, numeric(1)),
    # each unit keeps its category of v with the diagonal entry of its
    # stratum's matrix: expected changes sum T_i (1 - P_v[i_v, i_v])
    expected_changed = vapply(plan$vars, function(v) {
      keep <- vars_keep_probability(plan, v)
      sum(counts * (1 - keep))
    }, numeric(1)),
    smallest_keep = vapply(plan$vars, function(v) min(vars_keep_probability(plan, v)), numeric(1)),
    row.names = NULL
  )
  structure(
    list(certificate = object$certificate, n_records = cells$n_records, keys = object$keys,
         strata = object$strata, n_strata = length(plan$matrices), vars = vars,
         records_changed = object$certificate$records_changed,
         missing = missing_key_line(cells)),
    class = "summary.sdc_pram_release"
  )
}

# The probability that a unit of each cell keeps its category of variable v
# (the diagonal entry of its stratum's matrix at the cell's category).
vars_keep_probability <- function(plan, v) {
  code <- plan$codes[[v]]
  diag_of <- vapply(plan$matrices, function(ms) diag(ms[[v]]), numeric(length(plan$levels[[v]])))
  diag_of <- matrix(diag_of, nrow = length(plan$levels[[v]]))
  diag_of[cbind(code, plan$stratum_of_cell)]
}

#' @export
format.summary.sdc_pram_release <- function(x, ...) {
  cert <- x$certificate
  v <- x$vars
  tab <- data.frame(
    variable = v$variable,
    categories = v$categories,
    changed = fmt_int(v$changed),
    `changed %` = sprintf("%.2f", 100 * v$changed / x$n_records),
    expected = sprintf("%.1f", v$expected_changed),
    `least P(keep)` = format(v$smallest_keep, digits = 4),
    check.names = FALSE
  )
  c(
    wrap_lines(c(
      paste0("Per-variable PRAM of ", n_of(x$n_records, "record"), "; keys ", paste(x$keys, collapse = ", "),
             if (length(x$strata)) paste0("; matrices per stratum of ", paste(x$strata, collapse = " x "),
                                          " (", fmt_int(x$n_strata), " strata)") else ""),
      pram_certificate_line(cert),
      "Perturbed variables: records changed, observed and expected; least P(keep), the smallest probability of keeping a category:"
    )),
    table_lines(tab)$lines,
    wrap_lines(c(
      sprintf("Records changed in any variable: %s (%.2f%%; expected %.1f)",
              fmt_int(x$records_changed), 100 * x$records_changed / x$n_records, cert$expected_changed),
      sprintf("Total perturbation variance %.1f", cert$total_variance),
      x$missing
    ))
  )
}

#' @export
print.summary.sdc_pram_release <- function(x, ...) {
  writeLines(format(x, ...))
  invisible(x)
}
