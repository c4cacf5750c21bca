#' PTN sensitivity of one cell
#'
#' Computes the precision threshold and noise (PTN) sensitivity of Gray
#' (2018) for the respondents of one cell: the maximum over disjoint target
#' sets \eqn{T} (\eqn{|T| = n_t}) and suspect sets \eqn{S} (\eqn{|S| = n_s})
#' of
#' \deqn{S(T, S) = \sum_{t \in T} PT(t) - \sum_{s \in S} SN(s) - \sum_{r \notin T \cup S} N(r)}
#' (eq. 3-7), with the maximizing sets. The cell is sensitive when
#' \eqn{S > 0}.
#'
#' For \eqn{n_t = n_s = 1} the maximum comes from Theorem 1: with target
#' function \eqn{f_t = PT + N} and suspect function \eqn{f_s = N - SN}, only
#' the two best respondents by each need checking. For other \eqn{n_t, n_s}
#' (the paper gives no algorithm) an exact \eqn{O(n \log n)} algorithm is
#' used: since \eqn{S(T, S) = \sum_T f_t + \sum_S f_s - \sum_r N} (eq. 13)
#' and exchanging a target \eqn{t} with a suspect \eqn{s} changes it by
#' \eqn{d(s) - d(t)}, \eqn{d = f_t - f_s}, some optimal pair has every target
#' before every suspect in the order of decreasing \eqn{d}; for each split of
#' that order, the best targets are the \eqn{n_t} largest \eqn{f_t} before it
#' and the best suspects the \eqn{n_s} largest \eqn{f_s} after it, found for
#' all splits in two heap sweeps.
#'
#' Upper sensitivity \eqn{\bar S} uses the upper precision threshold with the
#' lower noise and lower self-noise (an attacker's upper estimate of
#' \eqn{x_t} subtracts lower bounds of the others); lower sensitivity
#' \eqn{\underline S} uses the lower threshold with the upper noises (eq. 3-4).
#' Give `list(upper = , lower = )` for any of `pt`, `noise`, `self_noise` to
#' get both; plain vectors mean the symmetric case, where both coincide.
#'
#' A cell with fewer than \eqn{n_t + n_s} respondents is completed with
#' respondents whose PT, N and SN are 0, as the textbook formulas set
#' \eqn{x_k = 0} beyond the number of contributors (a single contributor is
#' sensitive under the p% rule). Their ids are `NA`. Ties are broken in favour
#' of the respondent that comes first.
#'
#' @param pt Precision thresholds \eqn{PT(r)}: a numeric vector with one value
#'   per respondent, or `list(upper = , lower = )` of two such vectors.
#' @param noise Noise \eqn{N(r)} (same form; `lower` is the lower noise
#'   \eqn{x_r - LB(x_r)}, `upper` the upper noise \eqn{UB(x_r) - x_r}).
#' @param self_noise Self-noise \eqn{SN(r)} (same form); 0 for self-aware
#'   respondents. Length-one values are recycled.
#' @param nt,ns Sizes of the target and suspect sets (\eqn{n_t \ge 1},
#'   \eqn{n_s \ge 0}).
#' @returns An object of class `sdc_ptn`, a list with `S` (the cell
#'   sensitivity, the larger of `S_upper` and `S_lower`), `S_upper`,
#'   `S_lower` (equal to `S_upper` in the symmetric case), `sensitive`
#'   (`S > 0`), `target` and `suspect` (indices of a maximal pair for the side
#'   giving `S`), `side`, `upper` and `lower` (each `list(S, target,
#'   suspect)`), `nt`, `ns`, `n` and `symmetric`.
#' @references Gray, D. (2018). Precision threshold and noise: an alternative
#'   framework of sensitivity measures. In *Privacy in Statistical Databases*,
#'   LNCS 11126, 15-27. Springer.
#' @family tabular
#' @export
#' @examples
#' # Gray (2018), Section 3.1: p% rule (p = 10%) with the revenue ranges of
#' # Table 1 as lower bounds: S = 150, sensitive (Table 2)
#' x <- c(5000, 1100, 750, 500, 300)
#' lb <- c(5000, 1000, 500, 500, 0)
#' ptn_sensitivity(pt = 0.1 * x, noise = x - lb)
#' # without the ranges the p% rule says safe
#' ptn_sensitivity(pt = 0.1 * x, noise = x)
#' # two colluding suspects against every pair of targets
#' set.seed(1)
#' y <- rexp(8)
#' ptn_sensitivity(0.1 * y, y, nt = 2, ns = 2)
ptn_sensitivity <- function(pt, noise, self_noise = 0, nt = 1, ns = 1) {
  check_nt_ns(nt, ns)
  vars <- list(pt = ptn_vector(pt), noise = ptn_vector(noise),
               self_noise = ptn_vector(self_noise))
  n <- check_ptn_lengths(vars)
  vars <- lapply(vars, function(v) lapply(v, function(z) rep_len(as.numeric(z), n)))
  symmetric <- all(vapply(vars, function(v) identical(v$upper, v$lower), logical(1)))
  opts <- list(nt = as.integer(nt), ns = as.integer(ns), algorithm = "auto")
  upper <- core_call(cpp_ptn_sensitivity, vars$pt$upper, vars$noise$lower, vars$self_noise$lower, opts)
  lower <- if (symmetric) upper else
    core_call(cpp_ptn_sensitivity, vars$pt$lower, vars$noise$upper, vars$self_noise$upper, opts)
  side <- if (upper$S >= lower$S) "upper" else "lower"
  best <- if (side == "upper") upper else lower
  new_sdc_ptn(best, upper, lower, side, nt, ns, n, symmetric)
}

new_sdc_ptn <- function(best, upper, lower, side, nt, ns, n, symmetric) {
  structure(list(
    S = best$S, S_upper = upper$S, S_lower = lower$S, sensitive = best$S > 0,
    target = best$target, suspect = best$suspect, side = side,
    upper = upper, lower = lower, nt = as.integer(nt), ns = as.integer(ns),
    n = n, symmetric = symmetric
  ), class = "sdc_ptn")
}

ptn_vector <- function(x, arg = rlang::caller_arg(x), call = rlang::caller_env()) {
  force(arg)
  one_ok <- function(v) is.numeric(v) && !anyNA(v) && all(is.finite(v))
  if (is.list(x)) {
    if (!setequal(names(x), c("upper", "lower")) || length(x) != 2) {
      abort_sdc(c(
        "{.arg {arg}} must be a numeric vector or {.code list(upper = , lower = )}.",
        "x" = "It is a list with names {.val {names(x)}}."
      ), "ptn_input", call = call)
    }
    x <- list(upper = x$upper, lower = x$lower)
  } else {
    x <- list(upper = x, lower = x)
  }
  for (v in x) {
    if (!one_ok(v)) {
      abort_sdc(c(
        "{.arg {arg}} must contain finite numbers only.",
        "x" = if (is.numeric(v)) "It contains {sum(!is.finite(v))} missing or infinite value{?s}." else
          "It is {.obj_type_friendly {v}}."
      ), "ptn_input", call = call)
    }
  }
  x
}

#' @export
format.sdc_ptn <- function(x, digits = 6, ...) {
  ids <- function(v) if (length(v) == 0) "none" else paste(ifelse(is.na(v), "(none)", v), collapse = ", ")
  out <- c(
    sprintf("<sdc_ptn> PTN sensitivity S^%d_%d of a cell with %d respondent%s",
            x$nt, x$ns, x$n, if (x$n == 1) "" else "s"),
    sprintf("S = %s: %s", format(x$S, digits = digits),
            if (x$sensitive) "sensitive" else "safe")
  )
  if (!x$symmetric) {
    out <- c(out, sprintf("upper S = %s, lower S = %s",
                          format(x$S_upper, digits = digits), format(x$S_lower, digits = digits)))
  }
  c(out, sprintf("maximal %stargets: %s; suspects: %s",
                 if (x$symmetric) "" else paste0("(", x$side, ") "),
                 ids(x$target), ids(x$suspect)))
}

#' @export
print.sdc_ptn <- function(x, ...) {
  cat(format(x, ...), sep = "\n")
  invisible(x)
}

#' Primary sensitivity of the cells of a magnitude table
#'
#' Builds the magnitude table of `value` over the cross-classification of the
#' `by` variables together with every margin and the grand total (a table of
#' \eqn{d} variables has all \eqn{2^d} levels of aggregation), aggregates the
#' records to contributors, applies every rule to every cell and returns one
#' row per cell.
#'
#' A contributor with several records in a cell (or in the cells under a
#' margin) is one respondent whose contribution is the sum of its records, as
#' holdings are in tau-ARGUS; without `contributor` every record is a
#' contributor of its own. The work is done in compiled code: records are
#' aggregated per level by hashing, and per cell only the few best
#' respondents by the target and suspect functions of each PTN rule (Gray
#' 2018, Theorem 1 and Section 4; see [ptn_sensitivity()]) and the `largest`
#' contributions are kept, so no cell is ever sorted.
#'
#' Special cases (Gray 2018, Section 3), see [rules] for how the classic
#' rules use them:
#' * `negative = "abs"`: contributions enter the classic rules in absolute
#'   value (Section 3.2). With the default `"error"`, negative values are an
#'   error when a rule assumes non-negative contributions (`rule_p()`,
#'   `rule_pq()`, `rule_nk()`). The absolute value is taken of a
#'   contributor's net contribution to the cell.
#' * `waiver`: a logical column; a contributor waived when all its records
#'   say so. Its precision threshold is 0 but it still gives noise
#'   (Section 3.3).
#' * `weight`: sampling weights \eqn{w \ge 1}; a record contributes
#'   \eqn{x = w y}. With `weights_known = TRUE` the rules apply to \eqn{x};
#'   with `FALSE` respondents know only \eqn{w \ge 1} (Section 3.4).
#'   Contributor counts (frequency rule) are unweighted.
#' * `lower`, `upper`: columns of known bounds on each record's (weighted)
#'   contribution, e.g. the class limits of published distribution counts;
#'   `NA` means no bound is known for that record. A contributor's bounds are
#'   the sums of its records' bounds (Section 3.1).
#'
#' Missing values are never dropped silently: `NA` in `value`, `contributor`,
#' `weight` or `waiver` is an error (impute or remove such records first);
#' `NA` in a `by` variable is an error unless `na = "category"`, which makes
#' it a category of its own.
#'
#' @param data A data frame with one row per record.
#' @param by Character vector: the classification variables of the table.
#' @param value Name of the numeric column to total.
#' @param rules A rule (see [rules]) or a list of rules; list names, when
#'   given, name the output columns (default names like `p10`, `nk1_60`).
#' @param contributor Name of the column identifying contributors
#'   (enterprises), or `NULL`.
#' @param weight Name of a column of sampling weights, or `NULL`.
#' @param ... Must be empty.
#' @param waiver,lower,upper Names of columns (see Details), or `NULL`.
#' @param negative `"error"` or `"abs"`.
#' @param weights_known Do respondents know the sampling weights?
#' @param na Treatment of `NA` in `by`: `"error"` or `"category"`.
#' @param total_label Label of the total category in the `by` columns.
#' @param largest How many of the largest contributions to report (at least
#'   the `n` of every dominance rule).
#' @param hierarchy `NULL`, or a named list giving for some `by` variables
#'   their hierarchy: a named vector (names the detailed codes, values their
#'   parents) or a data frame whose first column holds the detailed codes and
#'   whose next columns hold coarser and coarser groups (e.g. 4-digit, then
#'   2-digit industry). The table then has margins at every level of every
#'   hierarchy (the `level` column names the level of each variable).
#' @returns A data frame of class `sdc_sensitivity`, one row per cell,
#'   ordered by the `by` variables (totals last): the `by` columns (factors
#'   whose last level is `total_label`), `level` (the `by` variables not
#'   totalled, joined by `":"`, or `"(total)"`), `n_contributors`, `total`
#'   (the signed weighted total), `x1`, `x2`, ... (the largest contributions,
#'   in absolute value with `negative = "abs"`, `NA` beyond the number of
#'   contributors), then for each rule `S_<rule>` (PTN rules: the PTN
#'   sensitivity, the larger of upper and lower), `sensitive_<rule>`,
#'   `target_<rule>` and `suspect_<rule>` (ids of a maximal target and suspect
#'   set, joined by `", "`; contributor values, or record numbers without
#'   `contributor`), and finally `sensitive` (any rule) and `rules` (the rules
#'   that flag the cell); with `lower` or `upper`, also `lower_bound` and
#'   `upper_bound`, the known bounds on the cell total (sums of its
#'   contributors' bounds) that [audit_table()] uses.
#' @references Gray, D. (2018). Precision threshold and noise: an alternative
#'   framework of sensitivity measures. In *Privacy in Statistical Databases*,
#'   LNCS 11126, 15-27. Springer.
#'
#'   Hundepool, A. et al. (2012). *Statistical Disclosure Control*, Section
#'   4.2. Wiley.
#' @family tabular
#' @export
#' @examples
#' set.seed(1)
#' firms <- data.frame(
#'   firm = 1:60,
#'   industry = sample(c("A", "B", "C"), 60, TRUE),
#'   region = sample(c("north", "south"), 60, TRUE),
#'   turnover = round(rlnorm(60, 6, 1.5))
#' )
#' sens <- cell_sensitivity(firms, c("industry", "region"), "turnover",
#'   rules = list(rule_frequency(3), rule_nk(1, 60), rule_p(10)),
#'   contributor = "firm")
#' sens
#' summary(sens)
#' plot(sens)
cell_sensitivity <- function(data, by, value, rules, contributor = NULL, weight = NULL, ...,
                             waiver = NULL, lower = NULL, upper = NULL,
                             negative = c("error", "abs"), weights_known = TRUE,
                             na = c("error", "category"), total_label = "Total",
                             largest = 2, hierarchy = NULL) {
  rlang::check_dots_empty()
  check_data_frame(data)
  check_names_in(by, data, what = "classification variable")
  reserved <- grepl("^(level|n_contributors|total|sensitive|rules|x[0-9]+|(S|sensitive|target|suspect)_.*)$", by)
  if (any(reserved)) {
    abort_sdc(c(
      "{.arg by} variables cannot be named like output columns.",
      "x" = "Reserved: {.val {by[reserved]}}.",
      "i" = "Rename these columns of {.arg data}."
    ), "keys")
  }
  negative <- check_choice(negative)
  na <- check_choice(na)
  rules <- check_rules(rules)
  check_flag(weights_known)
  check_count(largest, min = 1, max = max_contributors)
  check_scalar(largest)
  if (!is.character(total_label) || length(total_label) != 1 || is.na(total_label)) {
    abort_sdc(c("{.arg total_label} must be a single string.",
                "x" = "It is {show_value(total_label)}."), "argument")
  }
  rec <- tabular_records(data, by, value, contributor, weight, waiver, lower, upper,
                         negative, weights_known, rules, na, total_label)
  k_largest <- max(c(largest, unlist(lapply(rules, function(r) if (r$type == "nk") r$params$n))))
  opts <- list(negative = negative, weights_known = weights_known,
               call = rlang::current_env())
  nby <- length(by)
  hier <- table_hierarchy(hierarchy, rec, total_label)
  rec$labels <- lapply(hier, `[[`, "labels")
  # every level of every hierarchy (0 = totalled); without hierarchies the
  # 2^d margins of the table
  depths <- expand.grid(lapply(hier, function(h) seq_along(h$maps) - 1L), KEEP.OUT.ATTRS = FALSE)
  levels_out <- lapply(seq_len(nrow(depths)), function(i) {
    depth <- unlist(depths[i, ], use.names = FALSE)
    kept <- which(depth > 0)
    rec_i <- hierarchy_level(rec, hier, depth)
    sensitivity_level(rec_i, kept, rules, opts, k_largest)
  })
  # (the contributions leave the levels, and are joined field by field, so
  # that they are held about once, not twice: 64 per record on a 4-way
  # table with two 3-level hierarchies)
  parts <- new.env(parent = emptyenv())
  parts$levels <- lapply(levels_out, attr, "contributions")
  parts$nrow <- vapply(levels_out, nrow, integer(1))
  levels_out <- lapply(levels_out, `attr<-`, "contributions", NULL)
  contributions <- level_contributions(parts, rec)
  out <- do.call(rbind, levels_out)
  for (j in seq_len(nby)) {
    # totals (code 0) sort after the categories
    codes <- out[[j]]
    labels <- rec$labels[[j]]
    codes[codes == 0L] <- length(labels) + 1L
    out[[j]] <- codes
  }
  o <- do.call(order, unname(as.list(out[seq_len(nby)])))
  out <- out[o, , drop = FALSE]
  contributions$cell <- match(contributions$cell, o)
  for (j in seq_len(nby)) {
    labels <- c(rec$labels[[j]], total_label)
    out[[j]] <- factor(labels[out[[j]]], levels = labels, exclude = NULL)
  }
  names(out)[seq_len(nby)] <- by
  rownames(out) <- NULL
  new_sdc_sensitivity(out, by = by, value = value, rules = rules,
                      n_records = nrow(data), options = c(opts[1:2], list(
                        contributor = contributor, weight = weight, waiver = waiver,
                        lower = lower, upper = upper, na = na, total_label = total_label),
                        if (!is.null(hierarchy)) list(hierarchy = hierarchy_parents(hier, total_label),
                                                      n_levels = nrow(depths))),
                      contributions = contributions)
}

new_sdc_sensitivity <- function(df, by, value, rules, n_records, options, contributions = NULL) {
  structure(df, class = c("sdc_sensitivity", "data.frame"), by = by, value = value,
            rules = rules, n_records = n_records, options = options,
            contributions = contributions)
}

# The contributions of every contributor to every cell it is in, at every
# level (what a respondent knows, for the respondent audit of
# audit_table()): a list with, per (cell, contributor) pair, `cell` (row of
# the table), `contributor` (code: index into `ids`, or the record number
# without `contributor`), `x` (its weighted contribution, signed), `zero`
# (every record of it in the cell is 0), `lower`, `upper` (the sums of its
# records' known bounds), and `ids` (the contributor ids as strings, NULL
# without `contributor`). The cells are numbered across the levels in
# the levels in the order of their rows, before cell_sensitivity() sorts
# them. Without known bounds `lower` and `upper` are one number each (-Inf
# and Inf; table_contributions() gives every pair its own). `parts` (an
# environment, emptied here) holds each level's contributions (`levels`)
# and its number of cells (`nrow`): each field is joined, then dropped from
# the levels, so that the contributions are never held twice.
level_contributions <- function(parts, rec) {
  offsets <- cumsum(c(0L, parts$nrow))
  out <- list()
  for (nm in c("cell", "contributor", "x", "zero", "lower", "upper")) {
    if (nm %in% c("lower", "upper") && length(rec[[nm]]) == 1) {
      out[[nm]] <- rec[[nm]]
    } else if (nm == "cell") {
      out$cell <- unlist(lapply(seq_along(parts$levels), function(i) parts$levels[[i]]$cell + offsets[i]),
                         use.names = FALSE)
    } else {
      out[[nm]] <- unlist(lapply(parts$levels, `[[`, nm), use.names = FALSE)
    }
    parts$levels <- lapply(parts$levels, function(p) {
      p[[nm]] <- NULL
      p
    })
  }
  out$ids <- rec$contributor_ids
  out
}

# The columns the methods of an sdc_sensitivity table read.
sensitivity_columns <- function(by, rules) {
  rule_names <- vapply(rules, function(r) r$name, character(1))
  ptn <- rule_names[vapply(rules, rule_is_ptn, logical(1))]
  c(by, "level", "n_contributors", "total", "sensitive", "rules", paste0("sensitive_", rule_names),
    if (length(ptn)) paste0("S_", ptn))
}

# An sdc_sensitivity table that a user may have edited: its attributes, the
# columns the suppression code reads (types, no missing or infinite value),
# one row per cell, and `sensitive` TRUE wherever a rule flags the cell (it
# may be TRUE elsewhere: a cell marked sensitive by hand). Whether the cells
# add up and every margin is there is checked with the relations, by
# table_problem().
validate_sdc_sensitivity <- function(x, arg = rlang::caller_arg(x), call = rlang::caller_env()) {
  if (!inherits(x, "sdc_sensitivity")) {
    abort_sdc(c(
      "{.arg {arg}} must be a table from {.fn cell_sensitivity}.",
      "x" = "It is {.obj_type_friendly {x}}."
    ), "not_sensitivity", call = call, arg = arg)
  }
  broken <- function(what) {
    abort_invalid(arg, what, "Use the table {.fn cell_sensitivity} returned, or call it again.", call,
                  .envir = parent.frame())
  }
  by <- attr(x, "by")
  rules <- attr(x, "rules")
  opts <- attr(x, "options")
  if (!is.data.frame(x) || !is.character(by) || !length(by) || anyNA(by) ||
      !is.list(rules) || !all(vapply(rules, inherits, logical(1), "sdc_rule")) ||
      !is.list(opts) || !is.character(opts$total_label) || length(opts$total_label) != 1) {
    broken("its attributes {.field by}, {.field rules} and {.field options} are missing or wrong")
  }
  rule_names <- vapply(rules, function(r) r$name, character(1))
  ptn <- rule_names[vapply(rules, rule_is_ptn, logical(1))]
  miss <- setdiff(sensitivity_columns(by, rules), names(x))
  if (length(miss)) broken("column{?s} {.field {miss}} {?is/are} missing")
  if (nrow(x) == 0) broken("it has no cells")
  if (!all(lengths(unclass(x)) == nrow(x))) broken("its columns and rows differ in length")
  for (b in by) {
    if (!is.factor(x[[b]]) || !opts$total_label %in% levels(x[[b]])) {
      broken("{.field {b}} must be a factor with the level {.val {opts$total_label}}")
    }
  }
  num <- c("total", if (length(ptn)) paste0("S_", ptn))
  for (cl in num) {
    v <- x[[cl]]
    if (!is.numeric(v) || !all(is.finite(v))) {
      bad <- if (is.numeric(v)) which(!is.finite(v)) else integer()
      broken("{.field {cl}} must be finite numbers{if (length(bad)) paste0(' (row ', bad[1], ' is ', format(v[bad[1]]), ')') else ''}")
    }
  }
  for (cl in c("sensitive", paste0("sensitive_", rule_names))) {
    v <- x[[cl]]
    if (!is.logical(v) || anyNA(v)) broken("{.field {cl}} must be TRUE or FALSE in every row")
  }
  flagged <- Reduce(`|`, lapply(paste0("sensitive_", rule_names), function(cl) x[[cl]]), FALSE)
  if (any(flagged & !x$sensitive)) {
    broken("{sum(flagged & !x$sensitive)} cell{?s} flagged by a rule {?is/are} not marked {.field sensitive}, e.g. row {which(flagged & !x$sensitive)[1]}")
  }
  for (cl in intersect(c("lower_bound", "upper_bound"), names(x))) {
    v <- x[[cl]]
    if (!is.numeric(v) || anyNA(v)) broken("{.field {cl}} must be numbers (infinite for no bound)")
  }
  codes <- lapply(by, function(b) as.integer(x[[b]]))
  if (any(vapply(codes, anyNA, logical(1)))) broken("a {.arg by} column has missing values")
  key <- do.call(paste, c(codes, sep = "."))
  if (anyDuplicated(key)) broken("the cell in row {anyDuplicated(key)} appears twice")
  category_parents(x, arg, call)
  invisible(x)
}

# Validate and code the record-level inputs, one column at a time (the
# errors come in this order: value, weight, signs, waiver, bounds, `by`,
# contributor).
tabular_records <- function(data, by, value, contributor, weight, waiver, lower, upper,
                            negative, weights_known, rules, na, total_label,
                            call = rlang::caller_env()) {
  v <- record_values(data, value, call)
  n <- length(v)
  x <- record_weights(data, weight, weights_known, n, call) * v
  check_record_signs(x, v, value, rules, negative, call)
  wv <- record_waivers(data, waiver, n, call)
  lo <- bound_column(record_column(data, lower, "lower", call), lower, "lower", -Inf, call)
  hi <- bound_column(record_column(data, upper, "upper", call), upper, "upper", Inf, call)
  if (any(lo > x | hi < x)) {
    bad <- which(lo > x | hi < x)
    abort_sdc(c(
      "Known bounds must contain the contributions.",
      "x" = "{length(bad)} record{?s} lie{?s/} outside {.arg lower}/{.arg upper}, e.g. row{?s} {utils::head(bad, 5)}."
    ), "bounds", call = call)
  }
  coded <- record_codes(data, by, na, total_label, call)
  contrib <- record_contributors(data, contributor, call)
  list(n = n, codes = lapply(coded$coded, `[[`, "codes"),
       nlevels = vapply(coded$coded, `[[`, integer(1), "nlevels"), labels = coded$labels,
       by = by, x = x, y = v, lower = lo, upper = hi, waiver = wv,
       contributor = contrib$codes, contributor_ids = contrib$ids)
}

# The column of `data` that argument `arg` names, or NULL when `name` is
# NULL.
record_column <- function(data, name, arg, call) {
  if (is.null(name)) return(NULL)
  if (!is.character(name) || length(name) != 1 || is.na(name)) {
    abort_sdc(c("{.arg {arg}} must name one column of the data.",
                "x" = "It is {show_value(name)}."), "keys", call = call)
  }
  check_names_in(name, data, arg = arg, what = "column", call = call)
  data[[name]]
}

# The `value` column: finite numbers, no missing value.
record_values <- function(data, value, call) {
  v <- record_column(data, value, "value", call)
  if (is.null(v)) abort_sdc("{.arg value} must name one column of the data.", "keys", call = call)
  if (!is.numeric(v)) {
    abort_sdc(c("Column {.var {value}} ({.arg value}) must be numeric.",
                "x" = "It is {.obj_type_friendly {v}}."), "value_type", call = call)
  }
  no_na(v, value, "value", call)
  if (!all(is.finite(v))) {
    abort_sdc(c("Column {.var {value}} ({.arg value}) must be finite.",
                "x" = "It has {sum(!is.finite(v))} infinite value{?s}."), "value_type", call = call)
  }
  as.numeric(v)
}

# The sampling weights (1 without `weight`): positive, and at least 1 when
# respondents do not know them (Gray 2018, Section 3.4).
record_weights <- function(data, weight, weights_known, n, call) {
  w <- record_column(data, weight, "weight", call)
  if (is.null(w)) return(rep(1, n))
  no_na(w, weight, "weight", call)
  low <- if (weights_known) 0 else 1
  if (!is.numeric(w) || !all(is.finite(w)) || any(if (weights_known) w <= 0 else w < 1)) {
    abort_sdc(c(
      "Column {.var {weight}} ({.arg weight}) must hold finite weights {if (weights_known) '> 0' else '>= 1'}.",
      "x" = "Found {show_value(utils::head(w[!is.finite(w) | w < low | (weights_known & w <= 0)], 5))}.",
      "i" = if (!weights_known) "Weights unknown to respondents are assumed to be at least 1 (Gray 2018, Section 3.4)."
    ), "weight", call = call)
  }
  w
}

# Negative (weighted) contributions `x` are an error with negative = "error"
# when a rule assumes non-negative ones.
check_record_signs <- function(x, v, value, rules, negative, call) {
  if (negative != "error" || !any(x < 0)) return(invisible())
  needs <- names(rules)[vapply(rules, rule_needs_nonnegative, logical(1))]
  if (!length(needs)) return(invisible())
  examples <- paste(format(utils::head(v[x < 0], 3), trim = TRUE), collapse = ", ")
  abort_sdc(c(
    "Column {.var {value}} ({.arg value}) has negative contributions.",
    "x" = "{sum(x < 0)} record{?s} {?is/are} negative, e.g. {examples}; rule{?s} {.val {needs}} assume{?s/} non-negative contributions.",
    "i" = "Use {.code negative = \"abs\"} to apply the rules to absolute values (Gray 2018, Section 3.2)."
  ), "negative_values", call = call)
}

# The waivers as 0/1 (0 without `waiver`).
record_waivers <- function(data, waiver, n, call) {
  wv <- record_column(data, waiver, "waiver", call)
  if (is.null(wv)) return(rep(0, n))
  if (!is.logical(wv)) {
    abort_sdc(c("Column {.var {waiver}} ({.arg waiver}) must be logical.",
                "x" = "It is {.obj_type_friendly {wv}}."), "waiver", call = call)
  }
  no_na(wv, waiver, "waiver", call)
  as.numeric(wv)
}

# The `by` variables coded (code_key()), with their category labels, none
# of which may be the total's label. Returns list(coded, labels).
record_codes <- function(data, by, na, total_label, call) {
  coded <- lapply(by, function(b) {
    z <- data[[b]]
    if (na == "error" && anyNA(z)) {
      abort_sdc(c(
        "Classification variable {.var {b}} ({.arg by}) has missing values.",
        "x" = "{sum(is.na(z))} record{?s} {?has/have} {.val NA}.",
        "i" = "Recode them, or use {.code na = \"category\"} to make {.val NA} a category of its own."
      ), "missing_value", call = call)
    }
    code_key(z, b, na == "category", call = call)
  })
  labels <- lapply(coded, function(cd) as.character(cd$values))
  for (j in seq_along(by)) {
    if (total_label %in% labels[[j]]) {
      abort_sdc(c(
        "{.arg total_label} must differ from every category.",
        "x" = "{.var {by[j]}} has a category {.val {total_label}}.",
        "i" = "Choose another {.arg total_label}."
      ), "total_label", call = call)
    }
  }
  list(coded = coded, labels = labels)
}

# The contributors as codes 1, 2, ... in order of appearance, with their ids
# as strings; NULL for both without `contributor`.
record_contributors <- function(data, contributor, call) {
  cv <- record_column(data, contributor, "contributor", call)
  if (is.null(cv)) return(list(codes = NULL, ids = NULL))
  no_na(cv, contributor, "contributor", call)
  ids <- unique(cv)
  list(codes = match(cv, ids), ids = as.character(ids))
}

no_na <- function(z, name, arg, call) {
  if (anyNA(z)) {
    abort_sdc(c(
      "Column {.var {name}} ({.arg {arg}}) has missing values.",
      "x" = "{sum(is.na(z))} record{?s} {?has/have} {.val NA}, e.g. row{?s} {utils::head(which(is.na(z)), 5)}.",
      "i" = "Missing values are never dropped silently: impute or remove these records first."
    ), "missing_value", call = call)
  }
}

bound_column <- function(z, name, arg, default, call) {
  if (is.null(z)) return(default)
  if (!is.numeric(z)) {
    abort_sdc(c("Column {.var {name}} ({.arg {arg}}) must be numeric.",
                "x" = "It is {.obj_type_friendly {z}}."), "bounds", call = call)
  }
  z <- as.numeric(z)
  z[is.na(z)] <- default
  z
}

# One level of aggregation: the cells of the `by` variables in `kept`.
sensitivity_level <- function(rec, kept, rules, opts, k_largest) {
  sums_in <- list(rec$x, rec$y, rep_len(rec$lower, rec$n), rep_len(rec$upper, rec$n), rec$waiver,
                  abs(rec$x))
  agg <- core_call(cpp_contributor_cells, rec$codes[kept], rec$nlevels[kept], rec$contributor,
                               sums_in, rec$n)
  ncell <- agg$ncell
  cell <- agg$cell
  value <- agg$sums[[1]]
  y <- agg$sums[[2]]
  absolute <- opts$negative == "abs"
  d <- data.frame(
    x = if (absolute) abs(value) else value,
    value = value,
    y = if (absolute) abs(y) else y,
    w = ifelse(y != 0, value / y, 1),
    lower = agg$sums[[3]],
    upper = agg$sums[[4]],
    waiver = agg$sums[[5]] == agg$records,
    records = agg$records
  )
  ids <- if (is.null(rec$contributor)) as.character(agg$contributor) else
    rec$contributor_ids[agg$contributor]
  nby <- length(rec$codes)
  out <- vector("list", nby)
  for (j in seq_len(nby)) out[[j]] <- integer(ncell)
  for (j in seq_along(kept)) out[[kept[j]]] <- agg$codes[[j]]
  names(out) <- rec$by
  out <- as.data.frame(out, optional = TRUE)
  out$level <- if (length(kept)) paste((rec$level_names %||% rec$by)[kept], collapse = ":") else "(total)"
  n_contrib <- tabulate(cell, ncell)
  out$n_contributors <- n_contrib
  out$total <- as.numeric(rowsum(value, cell, reorder = TRUE))
  top <- core_call(cpp_cell_largest, cell, d$x, ncell, k_largest)
  for (j in seq_len(k_largest)) out[[paste0("x", j)]] <- top$value[, j]
  flagged <- matrix(FALSE, ncell, length(rules))
  for (i in seq_along(rules)) {
    res <- apply_rule(rules[[i]], d, cell, ncell, n_contrib, out$total, ids, opts)
    nm <- rules[[i]]$name
    if (rule_is_ptn(rules[[i]])) out[[paste0("S_", nm)]] <- res$S
    out[[paste0("sensitive_", nm)]] <- res$sensitive
    if (!is.null(res$target)) out[[paste0("target_", nm)]] <- res$target
    if (!is.null(res$suspect)) out[[paste0("suspect_", nm)]] <- res$suspect
    flagged[, i] <- res$sensitive
  }
  out$sensitive <- rowSums(flagged) > 0
  out$rules <- apply_names(flagged, names(rules))
  # known bounds on the cell totals, for the audit of a suppression pattern
  if (length(rec$lower) > 1) out$lower_bound <- as.numeric(rowsum(d$lower, cell, reorder = TRUE))
  if (length(rec$upper) > 1) out$upper_bound <- as.numeric(rowsum(d$upper, cell, reorder = TRUE))
  # without known bounds every contributor's are -Inf and Inf: one number
  # each (level_contributions())
  attr(out, "contributions") <- list(cell = cell, contributor = agg$contributor, x = value,
                                     zero = agg$sums[[6]] == 0,
                                     lower = if (length(rec$lower) > 1) d$lower else rec$lower,
                                     upper = if (length(rec$upper) > 1) d$upper else rec$upper)
  out
}

apply_names <- function(flagged, nm) {
  out <- character(nrow(flagged))
  for (i in seq_along(nm)) {
    add <- flagged[, i]
    out[add] <- ifelse(out[add] == "", nm[i], paste(out[add], nm[i], sep = ", "))
  }
  out
}

apply_rule <- function(rule, d, cell, ncell, n_contrib, total, ids, opts) {
  par <- rule$params
  if (rule$type == "frequency") {
    unsafe <- if (par$convention == "below") n_contrib < par$n else n_contrib <= par$n
    return(list(sensitive = n_contrib > 0 & unsafe))
  }
  if (rule$type == "zero") {
    return(list(sensitive = n_contrib > 0 & total == 0))
  }
  vars <- rule_ptn_vars(rule, d, opts)
  nt <- par$nt
  ns <- par$ns
  copts <- list(ncell = ncell, nt = nt, ns = ns)
  best <- NULL
  for (side in vars$sides) {
    r <- core_call(cpp_ptn_cells, cell, side$pt, side$noise, side$self_noise, copts)
    r$S <- r$S / vars$scale
    if (is.null(best)) {
      best <- r
    } else {
      better <- r$S > best$S
      best$S[better] <- r$S[better]
      best$target[better, ] <- r$target[better, , drop = FALSE]
      best$suspect[better, ] <- r$suspect[better, , drop = FALSE]
    }
  }
  list(S = best$S, sensitive = best$S > 0,
       target = join_ids(best$target, ids),
       suspect = if (ns > 0) join_ids(best$suspect, ids))
}

# Ids of the rows in each line of `m`, joined by ", "; NA (phantom) dropped.
join_ids <- function(m, ids) {
  if (ncol(m) == 1L) return(ids[m[, 1]])
  parts <- lapply(seq_len(ncol(m)), function(j) ids[m[, j]])
  out <- parts[[1]]
  for (j in seq_along(parts)[-1]) {
    p <- parts[[j]]
    out <- ifelse(is.na(out), p, ifelse(is.na(p), out, paste(out, p, sep = ", ")))
  }
  out
}

rule_columns <- function(x) {
  vapply(attr(x, "rules"), function(r) paste0("sensitive_", r$name), character(1))
}

#' @export
format.sdc_sensitivity <- function(x, n = 10, ...) {
  validate_sdc_sensitivity(x)
  rules <- attr(x, "rules")
  by <- attr(x, "by")
  head_lines <- c(
    sprintf("<sdc_sensitivity> %d cell%s of %s by %s (%d levels of aggregation), %d records",
            nrow(x), if (nrow(x) == 1) "" else "s", attr(x, "value"), paste(by, collapse = " x "), attr(x, "options")$n_levels %||% 2^length(by),
            attr(x, "n_records")),
    sprintf("Rules: %s", paste(vapply(rules, function(r) r$name, character(1)), collapse = ", ")),
    sprintf("Sensitive cells: %d of %d", sum(x$sensitive), nrow(x))
  )
  df <- as.data.frame(x)
  s_cols <- grep("^S_", names(df), value = TRUE)
  shown <- utils::head(df[c(by, "n_contributors", "total", s_cols, "rules")], n)
  shown[s_cols] <- lapply(shown[s_cols], fmt_column)
  # S columns that do not fit are left out and named, the rules kept beside
  # their cell
  body <- table_lines(shown, optional = s_cols)
  more <- c(
    if (nrow(x) > n) sprintf("... %d more cells", nrow(x) - n),
    if (length(body$dropped)) sprintf("%s not shown", paste(body$dropped, collapse = ", "))
  )
  if (length(more)) more <- paste0("# ", paste(more, collapse = "; "), "; as.data.frame() gives all columns")
  c(wrap_lines(head_lines), body$lines, wrap_lines(more))
}

#' @export
print.sdc_sensitivity <- function(x, n = 10, ...) {
  cat(format(x, n = n, ...), sep = "\n")
  invisible(x)
}

#' @export
`[.sdc_sensitivity` <- function(x, ...) {
  out <- NextMethod()
  if (!is.data.frame(out)) return(out)
  # the contributions name rows of the whole table: a subset has none
  attr(out, "contributions") <- NULL
  keep <- c("by", "value", "rules", "n_records", "options")
  if (all(sensitivity_columns(attr(x, "by"), attr(x, "rules")) %in% names(out))) {
    for (a in keep) attr(out, a) <- attr(x, a)
    class(out) <- class(x)
  } else {
    class(out) <- "data.frame"
  }
  out
}

#' @export
as.data.frame.sdc_sensitivity <- function(x, ...) {
  attr(x, "by") <- NULL
  attr(x, "value") <- NULL
  attr(x, "rules") <- NULL
  attr(x, "n_records") <- NULL
  attr(x, "options") <- NULL
  class(x) <- "data.frame"
  x
}

#' @export
summary.sdc_sensitivity <- function(object, ...) {
  validate_sdc_sensitivity(object)
  cols <- rule_columns(object)
  by_rule <- vapply(cols, function(cl) sum(object[[cl]]), numeric(1))
  names(by_rule) <- names(attr(object, "rules"))
  level_tab <- tapply(object$sensitive, factor(object$level, levels = unique(object$level)),
                      function(z) c(cells = length(z), sensitive = sum(z)))
  by_level <- data.frame(level = names(level_tab),
                         cells = vapply(level_tab, `[[`, numeric(1), 1),
                         sensitive = vapply(level_tab, `[[`, numeric(1), 2),
                         row.names = NULL)
  structure(list(n_cells = nrow(object), n_sensitive = sum(object$sensitive),
                 by_rule = by_rule, by_level = by_level,
                 value = attr(object, "value"), by = attr(object, "by")),
            class = "summary.sdc_sensitivity")
}

#' @export
format.summary.sdc_sensitivity <- function(x, ...) {
  c(
    sprintf("Primary sensitivity of %s by %s", x$value, paste(x$by, collapse = " x ")),
    sprintf("%d of %d cells sensitive (%.1f%%)", x$n_sensitive, x$n_cells,
            100 * x$n_sensitive / max(x$n_cells, 1)),
    "Sensitive cells by rule:",
    sprintf("  %-12s %d", names(x$by_rule), x$by_rule),
    "By level of aggregation:",
    sprintf("  %-24s %d of %d", x$by_level$level, x$by_level$sensitive, x$by_level$cells)
  )
}

#' @export
print.summary.sdc_sensitivity <- function(x, ...) {
  cat(format(x, ...), sep = "\n")
  invisible(x)
}

#' Plot a table with its sensitive cells marked
#'
#' Draws the two-way table of `rows` by `cols` (the other `by` variables at
#' their totals), margins included, with each cell's total, and fills the
#' sensitive cells. Base graphics only.
#'
#' @param x An `sdc_sensitivity` object from [cell_sensitivity()].
#' @param rows,cols `by` variables shown in rows and columns (`cols = NULL`
#'   for a one-way table).
#' @param col_sensitive,col_safe Fill colours.
#' @param digits `NULL` (the default) to show whole totals exactly and
#'   others to 6 significant digits of the largest (in fixed notation), or
#'   a number of significant digits to round them to.
#' @param main Title; by default names the table's value.
#' @param ... Further graphical parameters passed to [graphics::plot.default()].
#' @returns `x`, invisibly.
#' @family tabular
#' @export
#' @examples
#' set.seed(2)
#' d <- data.frame(sector = sample(c("a", "b", "c"), 40, TRUE),
#'                 area = sample(c("x", "y"), 40, TRUE),
#'                 sales = round(rlnorm(40, 5, 1.2)))
#' plot(cell_sensitivity(d, c("sector", "area"), "sales", rule_p(15)))
plot.sdc_sensitivity <- function(x, rows = attr(x, "by")[1],
                                 cols = if (length(attr(x, "by")) > 1) attr(x, "by")[2],
                                 col_sensitive = "#E06666", col_safe = "grey95",
                                 digits = NULL, main = NULL, ...) {
  validate_sdc_sensitivity(x)
  by <- attr(x, "by")
  sub <- table_slice(x, by, rows, cols, attr(x, "options")$total_label)
  plot_table_grid(sub, x, rows, cols,
    fill = ifelse(sub$sensitive, col_sensitive, col_safe),
    labels = format_total(if (is.null(digits)) sub$total else signif(sub$total, digits)),
    legend_fill = c(col_sensitive, col_safe), legend = c("sensitive", "safe"),
    main = main %||% paste("Sensitive cells of", attr(x, "value")), ...
  )
  invisible(x)
}

# The cells of a table shown in a rows x cols grid: every other `by`
# variable at its total.
table_slice <- function(x, by, rows, cols, total_label, call = rlang::caller_env()) {
  shown <- c(rows, cols)
  if (!is.character(shown) || !all(shown %in% by) || anyDuplicated(shown) || length(rows) != 1) {
    abort_sdc(c("{.arg rows} and {.arg cols} must be distinct {.arg by} variables.",
                "x" = "They are {show_value(shown)}; {.arg by} is {show_value(by)}."), "argument", call = call)
  }
  keep <- rep(TRUE, nrow(x))
  for (o in setdiff(by, shown)) keep <- keep & x[[o]] == total_label
  as.data.frame(unclass(x))[keep, , drop = FALSE]
}

# Draws the cells `sub` of table `x` as a grid of coloured, labelled boxes
# (plot() of sensitivity and protection results).
plot_table_grid <- function(sub, x, rows, cols, fill, labels, legend_fill, legend, main, ...) {
  rlev <- levels(x[[rows]])
  clev <- if (is.null(cols)) "" else levels(x[[cols]])
  nr <- length(rlev)
  nc <- length(clev)
  graphics::plot.default(NA, xlim = c(0, nc + 1), ylim = c(0, nr + 1), axes = FALSE,
                         xlab = if (is.null(cols)) "" else cols, ylab = rows, main = main, ...)
  i <- match(as.character(sub[[rows]]), rlev)
  j <- if (is.null(cols)) rep(1L, nrow(sub)) else match(as.character(sub[[cols]]), clev)
  yy <- nr + 1 - i
  graphics::rect(j, yy - 0.5, j + 1, yy + 0.5, col = fill, border = "grey60")
  graphics::text(j + 0.5, yy, labels, cex = 0.8)
  graphics::text(0.9, nr + 1 - seq_len(nr), rlev, adj = 1, cex = 0.8, xpd = TRUE)
  if (!is.null(cols)) graphics::text(seq_len(nc) + 0.5, nr + 0.75, clev, cex = 0.8, xpd = TRUE)
  graphics::legend("bottomright", fill = legend_fill, bty = "n", cex = 0.8, legend = legend,
                   inset = c(0, -0.02), xpd = TRUE, horiz = TRUE)
}

`%||%` <- function(a, b) if (is.null(a)) b else a
