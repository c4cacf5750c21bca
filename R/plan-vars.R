#' Build a per-variable PRAM plan (the PRAM of sdcMicro and mu-ARGUS)
#'
#' The PRAM that agencies run with `sdcMicro::pram()` or mu-ARGUS perturbs
#' each key variable \eqn{v} on its own, with a \eqn{k_v \times k_v}
#' transition matrix \eqn{P_v}, independently across variables and records,
#' optionally with a different matrix in every stratum of other variables
#' (sdcMicro's `strata_variables`); the other keys never change. On the
#' cross-classification this is the Kronecker product of the \eqn{P_v}: a unit
#' of cell \eqn{c_i} lands in cell \eqn{c_j} with probability
#' \eqn{\alpha(j, i) = \prod_v P_v[j_v, i_v]} when \eqn{c_i} and \eqn{c_j}
#' agree on every key that is not perturbed, and 0 otherwise (Gouweleeuw et
#' al. 1998; Nayak, Zhang and You 2016, Section 3.2). The plan stores only the
#' per-variable matrices: nothing quadratic in the number of cells is formed.
#'
#' @section Conventions: The package writes transition matrices as
#'   \eqn{p_{ij} = P(Z = c_i | X = c_j)}: column \eqn{j} is the original
#'   category and sums to 1 (`orientation = "columns"`, as in [pram_plan()]).
#'   sdcMicro prints and stores them the other way round, one row per
#'   original category, rows summing to 1: give those with
#'   `orientation = "rows"`; they are transposed on input. A matrix whose rows
#'   sum to 1 but not its columns is refused under `"columns"` with a hint.
#'   Sums must be 1 within `1e-12` (they are then rescaled to 1 exactly);
#'   entries lie in \[0, 1\].
#'
#'   Each matrix has one row and one column per category of its key, the
#'   categories [cell_frequencies()] uses for it (the levels of a factor, the
#'   sorted distinct values of other keys, `NA` last under
#'   `na = "category"`), in that order. If the matrix has row or column
#'   names, they must name those categories (in any order) and are used to
#'   reorder it.
#'
#' @section Strata: With `strata`, a few keys that are not perturbed, every
#'   combination of their values that occurs in the cells (a stratum) has its
#'   own matrices. `matrices` is then a list with one element per stratum,
#'   each a named list of matrices as without strata, and named by the
#'   stratum's values as `"sex=F, region=north"` (the keys in the order of
#'   `strata`, values as `as.character()` writes them, `NA` for a missing
#'   category). [pram_strata()] lists the strata and their names. Every
#'   stratum must have matrices for the same variables.
#'
#' @param cells An `sdc_cells` object from [cell_frequencies()].
#' @param matrices A named list of square matrices, one per perturbed key
#'   (names are keys of `cells`); with `strata`, a named list of such lists,
#'   one per stratum (see Strata).
#' @param strata `NULL`, or a character vector of keys of `cells`, none of
#'   them perturbed, whose combinations carry their own matrices.
#' @param orientation `"columns"` (package convention, columns sum to 1) or
#'   `"rows"` (sdcMicro's convention, row = original category).
#'
#' @returns An object of class `c("pram_plan_vars", "pram_plan_any")`: a list
#'   with `cells`, `vars` (perturbed keys), `strata` (`character(0)` if
#'   none), `matrices` (a list over strata of named lists of
#'   column-stochastic matrices in the package convention, categories in
#'   [cell_frequencies()] order, row and column names the categories),
#'   `stratum_of_cell` (for every cell, its index in `matrices`),
#'   `stratum_labels`, `codes` (the category code of every cell in every
#'   key, a list of integer vectors) and `levels` (the categories of every
#'   key, as character).
#'
#' @references Gouweleeuw, J. M., Kooiman, P., Willenborg, L. C. R. J. and
#'   de Wolf, P.-P. (1998). Post randomisation for statistical disclosure
#'   control: theory and implementation. *Journal of Official Statistics*
#'   14(4), 463-478.
#'
#'   Nayak, T. K., Zhang, C. and You, J. (2016). Measuring identification risk
#'   in microdata release and its control by post-randomization. U.S. Census
#'   Bureau, Research Report Series (Disclosure Avoidance #2016-02).
#' @seealso [match_risk()] and [max_match_risk()] compute the exact risk of
#'   such a plan.
#' @family plans
#' @export
#' @examples
#' set.seed(1)
#' df <- data.frame(
#'   sex = sample(c("F", "M"), 60, TRUE),
#'   age = sample(c("young", "middle", "old"), 60, TRUE),
#'   region = sample(c("north", "south"), 60, TRUE)
#' )
#' cf <- cell_frequencies(df, c("sex", "age", "region"))
#' # age keeps its category with probability 0.8, as sdcMicro prints it
#' # (one row per original category)
#' p_age <- matrix(0.1, 3, 3, dimnames = list(c("middle", "old", "young"),
#'                                            c("middle", "old", "young")))
#' diag(p_age) <- 0.8
#' plan <- pram_plan_vars(cf, list(age = p_age), orientation = "rows")
#' plan
#'
#' # a different matrix in each region
#' p2 <- p_age
#' diag(p2) <- 0.9
#' p2[p2 == 0.1] <- 0.05
#' pram_strata(cf, "region")
#' plan_s <- pram_plan_vars(cf, list("region=north" = list(age = p_age),
#'                                   "region=south" = list(age = p2)),
#'                          strata = "region", orientation = "rows")
#' plan_s
pram_plan_vars <- function(cells, matrices, strata = NULL,
                           orientation = c("columns", "rows")) {
  check_sdc_cells(cells)
  orientation <- check_choice(orientation)
  keys <- cells$keys
  strata <- check_strata(strata, keys)
  call <- rlang::current_env()
  levels <- key_levels(cells, call = call)
  st <- cell_strata(cells, strata)
  if (length(strata) == 0) {
    per_stratum <- list(matrices)
    if (!is.list(matrices) || is.null(names(matrices)) || !all(names(matrices) %in% keys)) {
      if (is.list(matrices) && length(matrices) > 0 && all(vapply(matrices, is.list, logical(1)))) {
        abort_sdc(c(
          "{.arg matrices} is a list of lists, as for strata, but {.arg strata} is {.code NULL}.",
          "i" = "Give {.arg strata}, or one named list of matrices."
        ), "matrix", arg = "matrices")
      }
    }
  } else {
    per_stratum <- match_strata_matrices(matrices, st$labels)
  }
  vars <- check_matrix_names(per_stratum, keys, strata, st$labels)
  mats <- lapply(seq_along(per_stratum), function(s) {
    where <- if (length(strata) == 0) NULL else st$labels[s]
    out <- lapply(vars, function(v) {
      normalize_var_matrix(per_stratum[[s]][[v]], v, levels[[v]], orientation, where, call = call)
    })
    names(out) <- vars
    out
  })
  new_pram_plan_vars(cells, vars, strata, mats, st$stratum_of_cell, st$labels, levels)
}

new_pram_plan_vars <- function(cells, vars, strata, matrices, stratum_of_cell,
                               stratum_labels, levels) {
  structure(
    list(
      cells = cells,
      vars = vars,
      strata = strata,
      matrices = matrices,
      stratum_of_cell = as.integer(stratum_of_cell),
      stratum_labels = stratum_labels,
      codes = cell_codes(cells),
      levels = levels
    ),
    class = c("pram_plan_vars", "pram_plan_any")
  )
}

# Every part of a per-variable plan the core reads, whatever edits were
# made to it: the cells; the perturbed keys and strata; the categories,
# codes and stratum of every cell as the cells give them (so an edited code
# or stratum that is still in range is caught too); per stratum one square
# matrix per perturbed key with finite entries in [0, 1] and columns summing
# to 1; the cell of every record. Linear in the cells plus
# the size of the matrices. An error here is sdcRisk_error_invalid_object.
validate_pram_plan_vars <- function(plan, arg = "plan", call = rlang::caller_env(), records = TRUE) {
  hint <- "Build the plan again with {.fn pram_plan_vars} (or {.fn pram_release})."
  broken <- function(what) abort_invalid(arg, what, hint, call)
  if (!is.list(plan) || !inherits(plan$cells, "sdc_cells")) broken("its {.field cells} are not an {.cls sdc_cells} object")
  validate_sdc_cells(plan$cells, paste0(arg, "$cells"), call = call, records = records)
  cells <- plan$cells
  keys <- cells$keys
  if (is.null(cells$source$values)) broken("its {.field cells} do not record the categories of their keys")
  if (!is.character(plan$vars) || length(plan$vars) == 0 || anyNA(plan$vars) || !all(plan$vars %in% keys) ||
    anyDuplicated(plan$vars) || !identical(plan$vars, keys[keys %in% plan$vars])) {
    broken("its {.field vars} are not distinct keys in the order of the keys")
  }
  if (!is.character(plan$strata) || anyNA(plan$strata) || anyDuplicated(plan$strata) ||
    !all(plan$strata %in% setdiff(keys, plan$vars))) {
    broken("its {.field strata} are not keys outside {.field vars}")
  }
  if (!identical(plan$levels, key_levels(cells))) broken("its {.field levels} are not the categories of the keys")
  if (!identical(plan$codes, cell_codes(cells))) broken("its {.field codes} are not the categories of the cells")
  st <- cell_strata(cells, plan$strata)
  if (!identical(plan$stratum_of_cell, st$stratum_of_cell) || !identical(plan$stratum_labels, st$labels)) {
    broken("its {.field stratum_of_cell} or {.field stratum_labels} are not the strata of the cells")
  }
  if (!is.list(plan$matrices) || length(plan$matrices) != length(st$labels)) {
    broken(paste0("its {.field matrices} must hold one list per stratum (", length(st$labels), ")"))
  }
  k <- lengths(plan$levels)
  for (m in plan$matrices) {
    if (!is.list(m) || !all(plan$vars %in% names(m))) broken("a stratum lacks the matrix of a perturbed key")
    for (v in plan$vars) {
      p <- m[[v]]
      if (!is.numeric(p) || !is.matrix(p) || any(dim(p) != k[[v]]) || !all(is.finite(p)) || any(p < 0 | p > 1) ||
        any(abs(colSums(p) - 1) > 1e-9)) {
        broken(paste0("the matrix of key {.val ", v, "} is not a column-stochastic ", k[[v]], " x ", k[[v]], " matrix"))
      }
    }
  }
  invisible(plan)
}

#' @export
engine_plan.pram_plan_vars <- function(plan, arg = "plan", call = rlang::caller_env()) {
  # the core reads the cells' counts and codes, not the records' cells
  validate_pram_plan_vars(plan, arg = arg, call = call, records = FALSE)
  keys <- plan$cells$keys
  list(
    kind = "vars",
    counts = plan$cells$cells$count,
    codes = unname(plan$codes),
    n_levels = unname(lengths(plan$levels)),
    var_of_key = match(keys, plan$vars, nomatch = 0L),
    stratum = plan$stratum_of_cell,
    n_strata = length(plan$matrices),
    n_vars = length(plan$vars),
    matrices = unlist(lapply(plan$matrices, function(ms) {
      lapply(plan$vars, function(v) as.numeric(ms[[v]]))
    }), recursive = FALSE),
    known = rep(TRUE, length(keys))
  )
}

#' @export
engine_known.pram_plan_vars <- function(plan, ep, known) {
  ep$known <- plan$cells$keys %in% known
  ep
}

#' @export
plan_kind.pram_plan_vars <- function(plan) "vars"

#' @export
validate_plan.pram_plan_vars <- function(plan, arg = "plan", call = rlang::caller_env()) {
  validate_pram_plan_vars(plan, arg = arg, call = call)
}

#' @export
plan_block_of.pram_plan_vars <- function(plan, cells = NULL) {
  rep(NA_integer_, if (is.null(cells)) nrow(plan$cells$cells) else length(cells))
}

#' @export
plan_movable.pram_plan_vars <- function(plan, ep = NULL) plan_cost(plan, ep = ep %||% engine_plan(plan))$stay < 1

#' @export
plan_empty_bound.pram_plan_vars <- function(plan) rep(NA_real_, nrow(plan$cells$cells))

# V(S_D | T) of every category D of key v (eq. 3.6 on the margin), 0 for a
# key that is not perturbed; there is no eq. 6.7 bound.
#' @export
plan_category_moments.pram_plan_vars <- function(plan, v, call = rlang::caller_env()) {
  lev <- plan$levels[[v]]
  var <- if (v %in% plan$vars) {
    core_call(cpp_category_moments, engine_plan(plan, call = call), integer(), length(lev),
              match(v, plan$vars), call = call)$var
  } else {
    numeric(length(lev))
  }
  data.frame(
    category = lev,
    original = tabulate_sum(plan$codes[[v]], plan$cells$cells$count, length(lev)),
    perturbation_var = var,
    bound_var = NA_real_
  )
}

#' @export
plan_write.pram_plan_vars <- function(plan, data, cell_id, drawn) {
  colnames(drawn) <- plan$vars
  write_codes(data, plan$cells, plan$vars, drawn, cell_id)
}

#' The strata of a cross-classification
#'
#' Lists the combinations of the values of `strata` that occur in the
#' nonempty cells, with the names [pram_plan_vars()] expects for them.
#'
#' @param cells An `sdc_cells` object from [cell_frequencies()].
#' @param strata A character vector of keys of `cells`.
#' @returns A data frame with one row per stratum: the strata keys, `label`
#'   (the name of the stratum), `cells` and `records`.
#' @family plans
#' @export
#' @examples
#' df <- data.frame(sex = c("F", "M", "M"), area = c(1, 1, 2), age = c(20, 30, 40))
#' pram_strata(cell_frequencies(df, c("sex", "area", "age")), c("sex", "area"))
pram_strata <- function(cells, strata) {
  check_sdc_cells(cells)
  strata <- check_strata(strata, cells$keys)
  if (length(strata) == 0) {
    abort_sdc("{.arg strata} must name at least one key.", "strata", arg = "strata")
  }
  st <- cell_strata(cells, strata)
  first <- match(seq_along(st$labels), st$stratum_of_cell)
  out <- cells$cells[first, strata, drop = FALSE]
  rownames(out) <- NULL
  out$label <- st$labels
  out$cells <- tabulate(st$stratum_of_cell, length(st$labels))
  out$records <- as.vector(rowsum(cells$cells$count, st$stratum_of_cell, reorder = TRUE))
  out
}

check_strata <- function(strata, keys, call = rlang::caller_env()) {
  if (is.null(strata)) return(character(0))
  if (!is.character(strata) || anyNA(strata) || anyDuplicated(strata) ||
    !all(strata %in% keys)) {
    abort_sdc(c(
      "{.arg strata} must be {.code NULL} or distinct keys of the cells.",
      "x" = "It is {show_value(strata)}.",
      "i" = "The keys are {.val {keys}}."
    ), "strata", call = call, arg = "strata")
  }
  strata
}

# The categories of every key, as character, in the order of the cell codes.
key_levels <- function(cells, call = rlang::caller_env()) {
  vals <- cells$source$values
  if (is.null(vals)) {
    abort_sdc(c(
      "{.arg cells} does not record the categories of its keys.",
      "i" = "Make it again with {.fn cell_frequencies} on a data frame (cells counted in a database do not record them)."
    ), "argument", call = call, arg = "cells")
  }
  out <- lapply(vals, function(v) {
    lab <- if (is.factor(v)) levels(v)[as.integer(v)] else as.character(v)
    lab[is.na(v)] <- "NA"
    lab
  })
  names(out) <- cells$keys
  out
}

# The category code (1-based) of every cell in every key.
cell_codes <- function(cells) {
  vals <- cells$source$values
  out <- lapply(seq_along(cells$keys), function(k) {
    x <- cells$cells[[cells$keys[k]]]
    v <- vals[[k]]
    code <- if (is.factor(x)) as.integer(x) else match(x, v)
    if (anyNA(code)) code[is.na(code)] <- length(v) # NA (or NaN) category, last
    as.integer(code)
  })
  names(out) <- cells$keys
  out
}

stratum_label <- function(df) {
  parts <- lapply(names(df), function(k) {
    x <- df[[k]]
    lab <- as.character(x)
    lab[is.na(x)] <- "NA"
    paste0(k, "=", lab)
  })
  do.call(paste, c(parts, sep = ", "))
}

# Stratum of every cell (1-based, strata numbered in the order of the cells)
# and the strata's labels.
cell_strata <- function(cells, strata) {
  ncell <- nrow(cells$cells)
  if (length(strata) == 0) {
    return(list(stratum_of_cell = rep(1L, ncell), labels = ""))
  }
  lab <- stratum_label(cells$cells[strata])
  labels <- unique(lab)
  list(stratum_of_cell = match(lab, labels), labels = labels)
}

match_strata_matrices <- function(matrices, labels, call = rlang::caller_env()) {
  if (!is.list(matrices) || is.null(names(matrices)) || anyNA(names(matrices)) ||
    !all(vapply(matrices, is.list, logical(1)))) {
    abort_sdc(c(
      "With {.arg strata}, {.arg matrices} must be a list of named lists of matrices, one per stratum, named by the stratum.",
      "x" = "It is {.obj_type_friendly {matrices}}{if (is.list(matrices) && !is.null(names(matrices))) paste0(' with names ', show_value(names(matrices))) else ''}.",
      "i" = "The strata are named {show_value(labels)}; see {.fn pram_strata}."
    ), "matrix", call = call, arg = "strata")
  }
  nm <- names(matrices)
  if (anyDuplicated(nm)) {
    abort_sdc(c(
      "{.arg matrices} names a stratum twice.",
      "x" = "Duplicated: {show_value(unique(nm[duplicated(nm)]))}."
    ), "matrix", call = call, arg = "matrices")
  }
  missing <- setdiff(labels, nm)
  unknown <- setdiff(nm, labels)
  if (length(missing) > 0 || length(unknown) > 0) {
    abort_sdc(c(
      "{.arg matrices} must have one element per stratum that occurs in the cells, named by the stratum.",
      "x" = if (length(missing) > 0) "No matrices for {show_value(missing)}.",
      "x" = if (length(unknown) > 0) "No stratum {show_value(unknown)} in the cells.",
      "i" = "The strata are named {show_value(labels)}; see {.fn pram_strata}."
    ), "matrix", call = call, arg = "matrices")
  }
  matrices[labels]
}

check_matrix_names <- function(per_stratum, keys, strata, labels, call = rlang::caller_env()) {
  vars <- NULL
  for (s in seq_along(per_stratum)) {
    m <- per_stratum[[s]]
    where <- if (length(strata) == 0) "" else paste0(" (stratum ", labels[s], ")")
    nm <- names(m)
    if (!is.list(m) || length(m) == 0 || is.null(nm) || anyNA(nm) || any(nm == "") ||
      anyDuplicated(nm)) {
      abort_sdc(c(
        "{.arg matrices}{where} must be a list of matrices named by the keys they perturb.",
        "x" = "It is {.obj_type_friendly {m}}{if (!is.null(nm)) paste0(' with names ', show_value(nm)) else ''}."
      ), "matrix", call = call, arg = "matrices")
    }
    bad <- setdiff(nm, keys)
    if (length(bad) > 0) {
      abort_sdc(c(
        "{.arg matrices}{where} must be named by keys of the cells.",
        "x" = "Not keys: {show_value(bad)}.",
        "i" = "The keys are {.val {keys}}."
      ), "matrix", call = call, arg = "matrices")
    }
    both <- intersect(nm, strata)
    if (length(both) > 0) {
      abort_sdc(c(
        "A key cannot be both perturbed and a stratum.",
        "x" = "{.arg matrices} perturbs {show_value(both)}, which {.arg strata} names too."
      ), "strata", call = call, arg = "matrices")
    }
    this <- keys[keys %in% nm]
    if (is.null(vars)) {
      vars <- this
    } else if (!identical(vars, this)) {
      abort_sdc(c(
        "Every stratum must perturb the same keys.",
        "x" = "Stratum {labels[1]} perturbs {show_value(vars)}; stratum {labels[s]} perturbs {show_value(this)}."
      ), "matrix", call = call)
    }
  }
  vars
}

# One variable's matrix: checked, reordered by its names, in the package
# convention (columns = original category, summing to 1 exactly).
normalize_var_matrix <- function(p, var, levels, orientation, where = NULL,
                                 call = rlang::caller_env()) {
  k <- length(levels)
  what <- paste0("The matrix of ", var, if (!is.null(where)) paste0(" in stratum ", where) else "")
  if (is.data.frame(p)) p <- as.matrix(p)
  if (inherits(p, "table")) p <- unclass(p)
  if (!is.matrix(p) || !is.numeric(p) || !identical(dim(p), c(k, k))) {
    abort_sdc(c(
      "{what} must be a numeric {k} x {k} matrix, one row and column per category of {.var {var}}.",
      "x" = "It is {.obj_type_friendly {p}}{if (is.matrix(p)) paste0(' of size ', nrow(p), ' x ', ncol(p)) else ''}.",
      "i" = "The categories are {show_value(levels, 10)}."
    ), "matrix", call = call)
  }
  p <- reorder_by_names(p, levels, what, call)
  if (anyNA(p) || any(p < 0 | p > 1)) {
    abort_sdc(c(
      "{what} must have entries in [0, 1].",
      "x" = "Found {show_value(p[is.na(p) | p < 0 | p > 1])}."
    ), "matrix", call = call)
  }
  if (orientation == "rows") p <- t(p)
  cs <- colSums(p)
  if (any(abs(cs - 1) > 1e-12)) {
    bad <- which(abs(cs - 1) > 1e-12)
    rows_ok <- all(abs(rowSums(p) - 1) <= 1e-12)
    abort_sdc(c(
      if (orientation == "columns") {
        "{what} must have columns summing to 1: p[i, j] = P(Z = c_i | X = c_j)."
      } else {
        "{what} must have rows summing to 1 (row = original category)."
      },
      "x" = "{if (orientation == 'columns') 'Column' else 'Row'} sums: {show_value(cs[bad])} ({if (orientation == 'columns') 'column' else 'row'}{if (length(bad) > 1) 's' else ''} {show_value(levels[bad])}).",
      "i" = if (rows_ok && orientation == "columns") "Its rows sum to 1: use {.code orientation = \"rows\"} (sdcMicro's convention).",
      "i" = if (rows_ok && orientation == "rows") "Its columns sum to 1: use {.code orientation = \"columns\"}."
    ), "matrix", call = call)
  }
  p <- sweep(p, 2, cs, "/")
  dimnames(p) <- list(levels, levels)
  p
}

reorder_by_names <- function(p, levels, what, call) {
  rn <- rownames(p)
  cn <- colnames(p)
  if (is.null(rn) && is.null(cn)) return(p)
  check <- function(nm, side) {
    if (is.null(nm)) return(seq_along(levels))
    idx <- match(levels, nm)
    if (anyNA(idx) || anyDuplicated(nm)) {
      abort_sdc(c(
        "The {side} names of {tolower(substr(what, 1, 1))}{substr(what, 2, nchar(what))} must be its key's categories.",
        "x" = "They are {show_value(nm, 10)}.",
        "i" = "The categories are {show_value(levels, 10)}."
      ), "matrix", call = call)
    }
    idx
  }
  ri <- check(rn, "row")
  ci <- check(cn, "column")
  p[ri, ci, drop = FALSE]
}

#' @export
format.pram_plan_vars <- function(x, ...) {
  validate_pram_plan_vars(x, arg = "x", call = rlang::current_env())
  counts <- x$cells$cells$count
  ns <- length(x$matrices)
  kinds <- vapply(x$vars, function(v) paste0(v, " (", length(x$levels[[v]]), ")"), "")
  kept <- setdiff(x$cells$keys, c(x$vars, x$strata))
  c(
    paste0(
      "<pram_plan_vars>: per-variable PRAM over ", n_of(length(counts), "cell"),
      " (", n_of(sum(counts), "record"), ")"
    ),
    paste0("perturbed: ", paste(kinds, collapse = ", ")),
    if (length(x$strata) > 0) {
      paste0("strata: ", paste(x$strata, collapse = " x "), " (", fmt_int(ns), if (ns == 1) " stratum" else " strata", ", a matrix per variable and stratum)")
    },
    if (length(kept) > 0) paste0("unchanged: ", paste(kept, collapse = ", "))
  )
}

#' @export
print.pram_plan_vars <- function(x, ...) {
  writeLines(format(x, ...))
  invisible(x)
}
