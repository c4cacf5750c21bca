#' Estimates with standard errors from a released file
#'
#' Counts, totals, means and proportions by groups of a file released by
#' post-randomization, corrected for the perturbation, with the standard
#' error the perturbation adds given the original file. Works from the
#' released file and its publication ([publish_plan()], [read_plan()]) only.
#'
#' @section Why naive tables are biased:
#' An unbiased PRAM such as IFPR keeps the expected count of every cell of
#' the keys (\eqn{E(S \mid T) = T}, Nayak, Zhang and You 2016, eq. 3.3), so a
#' table of keys by keys computed from the released file as if it were the
#' original is unbiased. Any statistic that joins a perturbed key with a
#' variable that is not a key is not: a record that moves takes its income,
#' education and weight to another cell.
#'
#' @section The estimator:
#' Each record \eqn{r} moved from its original cell \eqn{x_r} to its
#' released cell \eqn{z_r} with probability \eqn{P[z_r, x_r]},
#' independently (Section 3.1); all other columns are unchanged. Every
#' estimand here is a sum over the original records,
#' \eqn{\theta = \sum_r c_r f(x_r)}, with \eqn{c_r} made of columns that
#' were not perturbed (the weight, the value, the non-key groups of `by`)
#' and \eqn{f} the indicator of the key values of a row of the table. With
#' \eqn{Q = P^{-1}} and \eqn{h = Q' f},
#' \deqn{\hat\theta = \sum_r c_r h(z_r)}
#' is unbiased given the original file, because
#' \eqn{E[h(z_r) \mid x_r] = (Q P)' f (x_r) = f(x_r)}; it is the moment
#' estimator \eqn{P^{-1}} applied to the released table (van den Hout and
#' van der Heijden 2002), summed over the cells of the row. Its variance
#' given the original file, \eqn{\sum_r c_r^2 (\sum_z h(z)^2 P[z, x_r] -
#' f(x_r)^2)}, is estimated without bias by
#' \deqn{\hat V = \sum_r c_r^2 (h(z_r)^2 - h(z_r))}
#' (the same argument with \eqn{f^2 = f}: the expectation of
#' \eqn{h(z_r)^2 - (Q' f^2)(z_r)} is \eqn{\sum_z h(z)^2 P[z, x_r] -
#' f(x_r)^2}). `se` is \eqn{\sqrt{\hat V}}. \eqn{\hat V} can be negative in
#' rare cases (a small true variance estimated with error); it is then
#' reported as 0 with a warning. For unbiased PRAM the released counts have
#' the covariance \eqn{D_T - \sum_i T_i P_i P_i'} (eq. 3.6); \eqn{\hat V}
#' estimates the corresponding variance of any linear estimator from the
#' released file alone.
#'
#' \eqn{Q} is block diagonal: records of cells outside every block count as
#' they are; an IFPR block's inverse has a closed form (a diagonal matrix
#' and a matrix of rank one), so the estimator is linear in the records and
#' the cells, never a matrix over the cells of a block; a block given by a
#' matrix is inverted; a per-variable plan's inverse is the Kronecker
#' product of its matrices' inverses within each stratum, applied one key
#' of `by` at a time (keys not in `by` do not matter, as the columns of
#' their inverses sum to 1).
#'
#' A mean or a proportion within a row is a ratio \eqn{\hat t / \hat n}; its
#' variance is the delta method's, \eqn{(\hat V_{tt} - 2 R \hat V_{tn} + R^2
#' \hat V_{nn}) / \hat n^2}, with the covariances estimated as above. A
#' proportion of all records (`stat = "proportion"` without `value`)
#' divides by the number (or weight) of all records, which the perturbation
#' does not change.
#'
#' For a block plan the publication holds the original count of every block
#' cell (its transition probabilities are made of them): an unweighted
#' count by keys only is then known exactly (`estimator = "exact"`,
#' `se = 0`), and so is the denominator of an unweighted mean by keys only.
#'
#' @section Intervals:
#' For means and proportions within rows, `lower` and `upper` are the
#' normal interval \eqn{\hat\theta \pm z\,}`se`. For counts, proportions
#' of all records and totals of a non-negative value they invert a test
#' whose variance depends on the row's true value \eqn{t}:
#' \deqn{\{t : (\hat\theta - t)^2 \le z^2 (V_{out} + b\,t)\},}
#' whose limits are \eqn{\hat\theta + z^2 b / 2 \mp \sqrt{z^2 (V_{out} +
#' b \hat\theta) + z^4 b^2 / 4}}. \eqn{b\,t} is the variance that the
#' row's own records add and \eqn{V_{out}} the variance that the records
#' outside the row's cells add, both computed from the original file rather
#' than from the draw (\eqn{c} is the weight, or the weighted value). For a
#' block plan they come from the published original counts of the block
#' cells: the sum of \eqn{c^2} over a group's records in a cell is taken as
#' the cell's count times the mean \eqn{c^2} of the group's records over
#' all the records released in its block (a record never leaves its block),
#' and \eqn{b} is the row's own variance so computed divided by the row's
#' value computed likewise (counts times the mean \eqn{c}). For a
#' per-variable plan the sums of \eqn{c^2} are their moment estimates, cut
#' at 0, and \eqn{b} is the mean variance of one original record of the
#' row's cells times \eqn{\sum c^2 / \sum c} over the records of the
#' row's group. Sampling variance (`sampling_var`) adds to \eqn{V_{out}}.
#' Where no \eqn{t} passes the test (a negative estimate far below what
#' the row's variance allows), the limits are the normal interval of `se`.
#'
#' Why not the normal interval of `se`: the unbiased variance estimate
#' moves with the estimate. In a row of a few records, a draw in which its
#' records moved out gives a low estimate and a low variance estimate at
#' once, and the normal interval missed the truth in up to 47% of the draws
#' for rows of one record (`bench/README.md`); with these intervals every
#' row covered at least 90% and every family of estimands 95 \eqn{\pm}
#' 1.5%. For rows of many records the two intervals nearly agree (\eqn{b}
#' is small beside \eqn{\sqrt{V}}, and the variance from the original
#' file is close to its unbiased estimate). The interval of a negative estimate of a count can lie
#' above the estimate, since a count is not negative. `se` stays the
#' unbiased estimate of the perturbation's standard error.
#'
#' @section At the boundary:
#' The moment estimator can leave the parameter space: a negative count, a
#' negative total of a non-negative value, a mean whose count is not
#' positive or that lies outside the range of the value. Such rows are
#' flagged, never changed silently: the column `outside` is `TRUE` for
#' them, and printing the table adds a note.
#'
#' By default (`estimator = "moment"`) they keep the moment estimate,
#' because it is the estimate that meets the two checks every estimate here
#' is held to: it is unbiased given the original file, and its interval
#' covers. Measured over draws of the same plan (`bench/README.md`; 1,000
#' draws of an IFPR release of the Massachusetts ACS excerpt, 600 of
#' `pums_md`, at \eqn{\xi = 0.3}): no row that kept the moment estimator
#' was biased, while maximum likelihood, taking over in the draws where the
#' moment estimate was outside, made 30 of the 99 table rows of at least 20
#' records biased by more than 4 Monte Carlo standard errors (the weighted
#' count of widowed men in the excerpt, 77 records: mean estimate 10,504
#' against a true 7,948), because cutting a negative estimate to the
#' parameter space pulls small rows up. In a second run with the moment
#' estimator (400 draws each of the Massachusetts and national excerpts,
#' the latter a per-variable plan, and `pums_md`) no row was biased, and
#' the 95% intervals of rows of at least 20 records covered 94.8% to 95.3%
#' per family, the models' 94.5% to 95.9%; rows of one to ten records
#' covered down to 53% with the normal interval of `se`, which is why
#' counts and totals now have the intervals of the section "Intervals".
#' With them (400 draws of each study again) every row covers at least
#' 90% (the lowest 90.25%, a count of two persons) and every family
#' 94.5% to 95.9% (`bench/README.md`). Rows of a few records are
#' still hardly estimable from a file perturbed that much (ask for
#' coarser groups). A negative estimate of a count is the price of unbiasedness;
#' sums of rows stay unbiased.
#'
#' With `estimator = "auto"` the rows outside get the maximum likelihood
#' estimator instead, which stays in the parameter space and equals the
#' moment estimator inside it (van den Hout and van der Heijden 2002): for
#' each system of the row (a block and a group of the other `by` columns;
#' for a per-variable plan a stratum, the unperturbed keys and a group,
#' over the combinations of the perturbed keys of `by`), the multinomial
#' likelihood of its released counts, maximized by EM (accelerated by
#' SQUAREM, which keeps EM's fixed point); weighted counts and amounts
#' \eqn{w (y - \min y)} enter as if they were counts, and a mean is the
#' ratio of the two. Its standard error is the delta method's given the
#' original file (the derivative of the fixed point with respect to the
#' released counts, which is \eqn{Q} in the interior, times their
#' covariance given the original file with the fitted counts). At the
#' boundary the estimator is biased (above) and its delta-method standard
#' error, taken where some fitted counts are zero, too small (an interval
#' of \eqn{\pm 1.96} of it can have a length of almost zero): such rows are
#' marked `estimator = "ml"`, and their `lower` and `upper` are the moment
#' estimator's limits cut to the parameter space (\eqn{[0, \infty)} for
#' counts and totals, \eqn{[0, 1]} for proportions of all records, the
#' range of the value for means), which cover exactly when the moment
#' estimator's do, since the truth lies in the parameter space.
#' `estimator = "ml"` uses maximum likelihood for every row. Systems of
#' more than 2,000 states keep the moment estimate, with a warning. The fit
#' is one EM per row outside the space, so a table of many small rows takes
#' long (measured: 30,874 of the 88,111 rows of a weighted count by five
#' keys of 2 x 10^5 records, 29 CPU seconds against 0.15 for the moment
#' estimates); a message says so when more than 1,000 rows are refitted.
#'
#' @section Sampling variance:
#' `se` is the perturbation's standard error given the original file. If the
#' file is a sample, the total variance of the estimate is the sampling
#' variance of the estimate the original file would give plus the expected
#' perturbation variance (law of total variance); pass an estimate of the
#' first as `sampling_var` (for example from the `survey` package computed
#' on the released file, which approximates it: the perturbation changes
#' few records) and the result adds `se_sampling` and `se_total`, and its
#' confidence limits use `se_total`.
#'
#' @param data The released file: a data frame with every record and every
#'   key as released (read with the types of the original, e.g. a CSV read
#'   with `read.csv()`).
#' @param publication The `sdc_publication` of the release, from
#'   [publish_plan()] or [read_plan()].
#' @param by Columns whose combinations form the rows of the table: keys,
#'   other columns, or both; `NULL` for one row of all records.
#' @param value For `"total"` and `"mean"`, a numeric (or logical) column
#'   that the release did not perturb; for `"proportion"`, an optional
#'   logical (or 0/1) column: the share of its `TRUE` within each row.
#' @param stat `"count"` (of records, or of their weights), `"total"` of
#'   `value`, `"mean"` of `value`, or `"proportion"`: of `value` within each
#'   row, or without `value` the share of each row among all records.
#' @param weights `NULL`, or a column of non-negative survey weights that the
#'   release did not perturb.
#' @param na_rm With a `value` that has missing values: `FALSE` (an error) or
#'   `TRUE` (estimate over the records that have a value).
#' @param sampling_var `NULL`, or the sampling variance of every row: a
#'   numeric vector in the order of the rows, or a data frame with the `by`
#'   columns and a column `var`.
#' @param level Confidence level of `lower` and `upper`.
#' @param estimator `"moment"` (the default: unbiased, rows outside the
#'   parameter space flagged in `outside`), `"auto"` (the moment estimator,
#'   and maximum likelihood for the rows where it leaves the parameter
#'   space) or `"ml"` (maximum likelihood for every row); see the section
#'   "At the boundary".
#' @returns An object of class `c("sdc_estimate", "data.frame")`: the `by`
#'   columns (rows sorted by them), `estimate`, `se`, `lower`, `upper` (the
#'   interval at `level`, see the section "Intervals"), `estimator` (`"exact"`, `"moment"` or
#'   `"ml"`), `outside` (`TRUE` where the moment estimate lies outside the
#'   parameter space, whichever estimate is shown), and
#'   with `sampling_var` also `se_sampling` and `se_total`. Attribute
#'   `variance` holds the unbiased variance estimates as computed (negative
#'   ones included), for combining rows.
#' @references Nayak, T. K., Zhang, C. and You, J. (2016). Measuring
#'   identification risk in microdata release and its control by
#'   post-randomization. U.S. Census Bureau, Research Report Series
#'   (Disclosure Avoidance #2016-02), Sections 3 and 6.
#'
#'   van den Hout, A. and van der Heijden, P. G. M. (2002). Randomized
#'   response, statistical disclosure control and misclassification: a
#'   review. *International Statistical Review* 70(2), 269-288.
#'
#'   Varadhan, R. and Roland, C. (2008). Simple and globally convergent
#'   methods for accelerating the convergence of any EM algorithm.
#'   *Scandinavian Journal of Statistics* 35(2), 335-353.
#' @family estimation
#' @export
#' @examples
#' set.seed(1)
#' rel <- ifpr(pums_md, c("sex", "age", "race", "marital", "puma"), xi = 0.3,
#'   partition = list(sex = "keep"))
#' pub <- publish_plan(rel)
#' released <- rel$data
#' estimate_table(released, pub, by = "race", value = "weight", stat = "mean")
#' released$degree <- released$education >= "Bachelor's degree"
#' estimate_table(released, pub, by = "marital", value = "degree", stat = "proportion")
#' estimate_table(released, pub, by = c("race", "sex"), weights = "weight")
estimate_table <- function(data, publication, by = NULL, value = NULL,
                           stat = c("count", "total", "mean", "proportion"), weights = NULL,
                           na_rm = FALSE, sampling_var = NULL, level = 0.95,
                           estimator = c("moment", "auto", "ml")) {
  call <- rlang::current_env()
  check_data_frame(data, call = call)
  validate_sdc_publication(publication, call = call, deep = FALSE)
  stat <- check_choice(stat)
  estimator <- check_choice(estimator)
  check_flag(na_rm, call = call)
  check_probability(level, call = call)
  spec <- estimate_spec(data, publication, by, value, stat, weights, na_rm, call)
  codes <- released_codes(publication, data, call = call)
  grp <- column_groups(data, spec$by_other)
  rec <- list(codes = codes, g = grp$g, n_groups = grp$n, w = spec$w, y = spec$y)
  sums <- estimate_sums(publication, rec, spec$by_keys, call = call, plug = plug_wanted(spec))
  exact <- spec$exact_counts && !is.null(sums$exact_count)
  if (exact) sums <- exact_sums(sums)
  res <- estimate_stat(sums, spec, call)
  exact <- !sums$perturbed || (exact && spec$stat %in% c("count", "proportion") && is.null(spec$y))
  res$estimator <- rep(if (exact) "exact" else "moment", length(res$estimate))
  res$outside <- rep(FALSE, length(res$estimate))
  if (!exact) res$outside[outside_parameter_space(res, spec)] <- TRUE
  if (!exact) res$plug <- plug_variance(sums, spec, rec)
  if (!exact && estimator != "moment") res <- switch_to_ml(res, sums, spec, estimator, call)
  out <- estimate_frame(res, sums, spec, publication, data, grp)
  finish_estimate(out, spec, sampling_var, level, call)
}

# The checked arguments: the keys and the other columns of `by`, the
# weights and values as doubles (NULL when absent), and whether the counts
# of the rows can be exact (unweighted, keys only, no record left out).
estimate_spec <- function(data, pub, by, value, stat, weights, na_rm, call) {
  key_names <- vapply(pub$keys, `[[`, "", "name")
  if (!is.null(by)) {
    check_names_in(by, data, arg = "by", what = "column", call = call, class = "by")
    check_names_free(by, estimate_columns, arg = "by", call = call, class = "by")
    check_atomic_columns(data, by, arg = "by", call = call, class = "by")
  }
  by <- by %||% character()
  y <- estimate_value(data, value, stat, key_names, na_rm, call)
  w <- NULL
  if (!is.null(weights)) {
    w <- estimate_column(data, weights, "weights", key_names, call)
    if (anyNA(w) || !all_finite(w) || min(w, Inf) < 0) {
      bad <- w[is.na(w) | !is.finite(w) | w < 0]
      abort_sdc(c("{.arg weights} must be finite and non-negative in every record.",
                  "x" = "Column {.var {weights}} has {show_value(unique(bad))}."), "weight", call = call, arg = "weights")
    }
  }
  list(
    by = by, by_keys = by[by %in% key_names], by_other = by[!by %in% key_names], stat = stat, value = value,
    weights = weights, w = w, y = y, n_total = if (is.null(w)) nrow(data) else sum(w),
    exact_counts = is.null(w) && all(by %in% key_names) && (is.null(y) || !anyNA(y))
  )
}

# Whether the rows' intervals use a variance function of their true value
# (plug_variance()): counts, proportions of all records and totals of a
# non-negative value.
plug_wanted <- function(spec) {
  if (spec$stat == "mean" || (spec$stat == "proportion" && !is.null(spec$y))) return(FALSE)
  !(spec$stat == "total" && any(spec$y < 0, na.rm = TRUE))
}

# The c of every record in the variance function of plug_variance(): its
# weight (1 without weights) times its value (without a value, 1), 0 for a
# record whose value is missing (it counts nowhere).
record_c <- function(rec) {
  c1 <- rep_len((rec$w %||% 1) * (if (is.null(rec$y)) 1 else rec$y), length(rec$g))
  c1[is.na(c1)] <- 0
  c1
}

# Names of the columns estimate_table() adds.
estimate_columns <- c("estimate", "se", "lower", "upper", "estimator", "outside", "se_sampling", "se_total")

estimate_value <- function(data, value, stat, key_names, na_rm, call) {
  if (stat == "count") {
    if (!is.null(value)) {
      abort_sdc(c("{.arg value} is for {.val total}, {.val mean} and {.val proportion}.",
                  "i" = "A count counts records (or their {.arg weights})."), "argument", call = call, arg = "value")
    }
    return(NULL)
  }
  if (is.null(value)) {
    if (stat == "proportion") return(NULL)
    abort_sdc("{.arg value} must name the column whose {stat} is estimated.", "value_type", call = call, arg = "value")
  }
  y <- estimate_column(data, value, "value", key_names, call)
  if (stat == "proportion" && any(!is.na(y) & y != 0 & y != 1)) {
    abort_sdc(c("For a proportion, {.arg value} must be logical or 0/1.",
                "x" = "Column {.var {value}} has {show_value(utils::head(unique(y[!is.na(y) & y != 0 & y != 1])))}."),
              "value_type", call = call, arg = "value")
  }
  if (anyNA(y) && !na_rm) {
    abort_sdc(c("{.arg value} has missing values: {fmt_int(sum(is.na(y)))} record{?s}.",
                "i" = "Use {.code na_rm = TRUE} to estimate over the records that have a value."),
              "missing_value", call = call, arg = "value")
  }
  if (length(y) > 0 && all(is.na(y))) {
    abort_sdc(c("{.arg value} has no value: column {.var {value}} is missing in every record.",
                "i" = "Nothing can be estimated of it."), "missing_value", call = call, arg = "value")
  }
  if (if (anyNA(y)) any(is.infinite(y)) else !all_finite(y)) {
    abort_sdc("{.arg value} must be finite where it is not missing.", "value_type", call = call, arg = "value")
  }
  y
}

# Whether a numeric vector without missing values is finite everywhere (its
# smallest and largest value, without the vectors of any(is.finite()) or
# the copy range() makes).
all_finite <- function(x) length(x) == 0 || (is.finite(min(x)) && is.finite(max(x)))

# One numeric column that the release did not perturb, as a double vector.
estimate_column <- function(data, name, arg, key_names, call) {
  if (!is.character(name) || length(name) != 1 || is.na(name) || !name %in% names(data)) {
    abort_sdc(c("{.arg {arg}} must name one column of {.arg data}.", "x" = "It is {show_value(name)}."),
              if (arg == "weights") "weight" else "value_type", call = call, arg = arg)
  }
  if (name %in% key_names) {
    abort_sdc(c("{.arg {arg}} must be a column that the release did not perturb.",
                "x" = "{.var {name}} is a key of the publication."),
              if (arg == "weights") "weight" else "value_type", call = call, arg = arg)
  }
  x <- data[[name]]
  if (!(is.numeric(x) || is.logical(x)) || is.object(x) || !is.null(dim(x))) {
    abort_sdc(c("{.arg {arg}} must be a numeric or logical column.", "x" = "{.var {name}} is {.obj_type_friendly {x}}."),
              if (arg == "weights") "weight" else "value_type", call = call, arg = arg)
  }
  as.numeric(x)
}

# The groups of the columns of `by` that are not keys: one id per record
# (1 when there are none), and the value of every column in every group.
column_groups <- function(data, cols) {
  n <- nrow(data)
  if (length(cols) == 0) return(list(g = rep.int(1L, n), n = 1L, values = list(), codes = list()))
  coded <- lapply(cols, function(v) code_key(data[[v]], v, na_category = TRUE))
  cc <- if (length(cols) == 1) one_column_groups(coded[[1]])
  if (is.null(cc)) cc <- cross_classify_codes(lapply(coded, `[[`, "codes"), vapply(coded, `[[`, 1L, "nlevels"))
  values <- lapply(seq_along(cols), function(k) coded[[k]]$values[cc$codes[[k]]])
  names(values) <- cols
  names(cc$codes) <- cols
  list(g = cc$cell_id, n = length(cc$counts), values = values, codes = cc$codes)
}

# One column whose every code occurs: its codes are the groups (the
# cross-classification of one column, without its pass over the records).
# NULL when some code does not occur.
one_column_groups <- function(coded) {
  counts <- tabulate(coded$codes, coded$nlevels)
  if (!all(counts > 0L)) return(NULL)
  list(cell_id = as.integer(coded$codes), counts = counts, codes = list(seq_len(coded$nlevels)))
}

# Unweighted counts by keys of a block plan are exact: the estimate of the
# count column is replaced by the count and its variance and covariances
# by 0.
exact_sums <- function(sums) {
  sums$lin[, 1] <- sums$exact_count()
  sums$quad[, seq_len(min(2L, ncol(sums$quad)))] <- 0
  sums
}

# Rows outside the parameter space (estimator = "auto"), or every row
# (estimator = "ml"), get the maximum likelihood estimate and its standard
# error (estimate-ml.R); rows whose systems are too large keep theirs.
switch_to_ml <- function(res, sums, spec, estimator, call) {
  rows <- if (estimator == "ml") seq_along(res$estimate) else outside_parameter_space(res, spec)
  if (length(rows) == 0) return(res)
  if (length(rows) > 1000) {
    cli::cli_inform(c("i" = "Fitting maximum likelihood by EM for {fmt_int(length(rows))} row{?s}, one at a time; this can take long.",
                      " " = "{.code estimator = \"moment\"} keeps the (unbiased) moment estimates and flags them in {.field outside}."),
                    class = "sdcRisk_message_ml_rows")
  }
  ml <- estimate_ml(sums, spec, rows, call)
  ok <- !ml$kept
  none <- ok & is.na(ml$estimate)
  if (any(none)) {
    n_none <- sum(none)
    warn_sdc(c("The {spec$stat} of {n_none} row{?s} cannot be estimated (NA).",
               "x" = "The maximum likelihood fit leaves no released record in such a row.",
               "i" = "The released file holds too little evidence of such a row: ask for fewer keys in {.arg by}."),
             "not_estimable", call = call)
  }
  # the moment estimate and its variance stay for the confidence limits
  res$moment_estimate <- res$estimate
  res$moment_var <- res$var
  res$estimate[rows[ok]] <- ml$estimate[ok]
  res$var[rows[ok]] <- ml$var[ok]
  res$count[rows[ok]] <- ml$count[ok]
  res$estimator[rows[ok]] <- "ml"
  res
}

# The parameter space of the statistic: [lo, hi] for every row.
parameter_space <- function(spec) {
  if (is.null(spec$y)) return(c(0, if (spec$stat == "proportion") 1 else Inf))
  if (spec$stat == "total") return(c(0, Inf))
  range(spec$y, na.rm = TRUE)
}

# The statistic of every row and its variance estimate.
estimate_stat <- function(sums, spec, call) {
  L <- sums$lin
  V <- sums$quad
  if (is.null(spec$y)) {
    est <- L[, 1]
    var <- V[, 1]
    if (spec$stat == "proportion") {
      est <- est / spec$n_total
      var <- var / spec$n_total^2
    }
  } else if (spec$stat == "total") {
    est <- L[, 2]
    var <- V[, 3]
  } else {
    cnt <- L[, 1]
    ratio <- L[, 2] / cnt
    est <- ratio
    var <- (V[, 3] - 2 * ratio * V[, 2] + ratio^2 * V[, 1]) / cnt^2
  }
  list(estimate = est, var = var, count = L[, 1])
}

# The variance of every row's estimate as a function of its true value t,
# v(t) = outside + own t, for the statistics whose variance is one column
# of the moments (counts, proportions of all records, totals of a
# non-negative value; NULL for the others), from the sums' plug_var():
# `outside`, what the records outside the row's cells add, with the file's
# original sums of c^2 (c the weight, or the weighted value) in place of
# their unbiased estimates from the draw; `own`, what one unit of the row's
# value adds. For a block plan the original counts of the block cells are
# published, and the records of a group in a block are those released
# there (records stay in their block): a cell's sum of c^2 over the
# records of group g is taken as its count times their mean c^2 over the
# block's records (block_plug_var()); for a per-variable plan the sums of
# c^2 are the moment estimates, cut at 0, and one unit adds the mean
# variance of one record of the row times sum c^2 / sum c over the records
# of the row's group. The sums' plug_var(col, lin_col) takes the columns
# of c^2 and c among the moments (of `quad` and `lin`); every record's c is
# record_c().
plug_variance <- function(sums, spec, rec) {
  if (!plug_wanted(spec) || is.null(sums$plug_var)) return(NULL)
  out <- sums$plug_var(if (is.null(spec$y)) 1L else 3L, if (is.null(spec$y)) 1L else 2L)
  if (spec$stat == "proportion") out <- list(outside = out$outside / spec$n_total^2, own = out$own / spec$n_total)
  out
}

# The table: the `by` columns (keys in the type of the released file's
# column, categories in the publication's order), the estimates and their
# standard errors, rows sorted by the `by` columns.
estimate_frame <- function(res, sums, spec, pub, data, grp) {
  key_names <- vapply(pub$keys, `[[`, "", "name")
  # rows in the order of the categories: the publication's for keys, sorted
  # values for other columns (whatever the types the file was read with);
  # the codes of each column by key values d or by group g, and the rows'
  # d and g taken in that order (no copy when in order already)
  is_key <- spec$by %in% spec$by_keys
  level_codes <- lapply(spec$by, function(v) {
    if (v %in% spec$by_keys) sums$d_codes[[match(v, spec$by_keys)]] else grp$codes[[v]]
  })
  o <- row_order(level_codes, is_key, sums$d, sums$g, isTRUE(sums$d_sorted))
  pick <- function(x) if (is.null(o)) x else x[o]
  d <- pick(sums$d)
  g <- pick(sums$g)
  cols <- lapply(seq_along(spec$by), function(j) {
    v <- spec$by[j]
    if (!is_key[j]) return(grp$values[[v]][g])
    key <- pub$keys[[match(v, key_names)]]
    category_values(level_codes[[j]][d], key$categories, data[[v]])
  })
  names(cols) <- spec$by
  out <- c(cols, list(
    estimate = pick(unname(res$estimate)), var = pick(unname(res$var)), estimator = pick(res$estimator),
    outside = pick(res$outside), moment_var = pick(unname(res$moment_var %||% res$var)),
    outside_var = pick(unname(res$plug$outside %||% rep(NA_real_, length(res$estimate)))),
    own_var = pick(unname(res$plug$own %||% rep(NA_real_, length(res$estimate))))
  ))
  # the moment estimates apart only where maximum likelihood replaced some
  if (!is.null(res$moment_estimate)) out$moment_estimate <- pick(unname(res$moment_estimate))
  # a data frame of these columns as they are (automatic row names)
  structure(out, class = "data.frame", row.names = .set_row_names(length(out$estimate)))
}

# The order of the rows (d[i], g[i]) by the codes of the `by` columns, the
# first most significant (ties keep their order), or NULL when they are in
# order: `level_codes` the codes of each column by d (`is_key`) or by g. One
# mixed-radix index, summed from its part by d and its part by g, sorted
# when the codes' combinations fit in an integer. `d_sorted`: d numbers the
# key values in the order of their codes (released_block_cells()), so rows
# of keys alone in the order of d are in order.
row_order <- function(level_codes, is_key, d, g, d_sorted = FALSE) {
  if (length(level_codes) == 0) return(NULL)
  if (d_sorted && all(is_key) && !is.unsorted(d)) return(NULL)
  size <- vapply(level_codes, function(x) if (length(x) == 0 || anyNA(x)) NA_real_ else as.numeric(max(x)), 1)
  if (anyNA(size) || prod(size) > .Machine$integer.max ||
        any(vapply(level_codes, function(x) as.numeric(min(x, 1)), 1) < 1)) {
    codes <- lapply(seq_along(level_codes), function(j) level_codes[[j]][if (is_key[j]) d else g])
    o <- do.call(order, unname(codes))
    return(if (is.unsorted(o)) o)
  }
  stride <- rev(cumprod(c(1, rev(size)[-length(size)])))
  part <- function(js) {
    acc <- 0L
    for (j in js) acc <- acc + (as.integer(level_codes[[j]]) - 1L) * as.integer(stride[j])
    acc
  }
  index <- if (any(is_key)) part(which(is_key))[d] else 0L
  if (!all(is_key)) index <- index + part(which(!is_key))[g]
  if (!is.unsorted(index)) return(NULL)
  order(index, method = "radix")
}

# The categories of codes `code` (NA or beyond the categories: missing) as
# values of the type of the released column `x`.
category_values <- function(code, categories, x) {
  if (is.factor(x)) {
    # a factor made from its codes: the levels are the categories that are
    # not NA, in their order
    keep <- !is.na(categories)
    level_code <- cumsum(keep)
    level_code[!keep] <- NA_integer_
    return(structure(level_code[code], levels = categories[keep], class = "factor"))
  }
  # the categories converted once, then taken by code
  if (is.logical(x)) return(as.logical(categories)[code])
  if (is.integer(x)) return(as.integer(categories)[code])
  if (is.numeric(x)) return(as.numeric(categories)[code])
  categories[code]
}

# Standard errors, confidence limits and the sampling variance if given.
# `out` is worked on as a list (its columns replaced, never copied through
# the data frame's methods).
finish_estimate <- function(out, spec, sampling_var, level, call) {
  out <- unclass(out)
  var <- out$var
  # (the largest |var| from its extremes: no vector of 4 million |var|)
  scale <- suppressWarnings(max(1, abs(min(var, na.rm = TRUE)), abs(max(var, na.rm = TRUE))))
  n_neg <- sum(var < -1e-8 * scale, na.rm = TRUE)
  if (n_neg > 0) {
    warn_sdc(c("The variance estimate of {n_neg} row{?s} is negative; its {.field se} is reported as 0.",
               "i" = "The unbiased variance estimate can be negative when the perturbation variance is small against its estimation error."),
             "variance_negative", call = call)
  }
  out$se <- sqrt(pmax(var, 0))
  out$var <- NULL
  sv <- 0
  if (!is.null(sampling_var)) {
    sv <- align_sampling_var(sampling_var, structure(out, class = "data.frame"), spec$by, call)
    out$se_sampling <- sqrt(sv)
    out$se_total <- sqrt(out$se^2 + sv)
  }
  z <- stats::qnorm(1 - (1 - level) / 2)
  # maximum likelihood at the boundary is biased and its delta-method error
  # too small: the limits are the moment estimator's, cut to the parameter
  # space (which holds the truth, so they cover as often)
  ml <- if (is.null(out$moment_estimate)) integer() else which(out$estimator == "ml")
  center <- out$estimate
  if (length(ml) > 0) center[ml] <- out$moment_estimate[ml]
  # what the records outside the row add: from the original sums
  # (plug_variance()), not from the draw, whose variance estimate moves
  # with the estimate
  lim <- estimate_limits(center, out$moment_var, sv, out$outside_var, out$own_var, z)
  out$lower <- lim$lower
  out$upper <- lim$upper
  if (length(ml) > 0) {
    space <- parameter_space(spec)
    out$lower[ml] <- pmin(pmax(out$lower[ml], space[1]), space[2])
    out$upper[ml] <- pmax(pmin(out$upper[ml], space[2]), out$lower[ml])
  }
  if (anyNA(out$estimate)) {
    na <- which(is.na(out$estimate))
    out$lower[na] <- NA_real_
    out$upper[na] <- NA_real_
  }
  out$moment_estimate <- NULL
  out$moment_var <- NULL
  out$outside_var <- NULL
  out$own_var <- NULL
  first <- c(spec$by, "estimate", "se", "lower", "upper", "estimator", "outside")
  out <- out[c(first, setdiff(names(out), first))]
  structure(out, row.names = .set_row_names(length(out$estimate)), class = c("sdc_estimate", "data.frame"),
            stat = spec$stat, value = spec$value, weights = spec$weights, by = spec$by, level = level, variance = var)
}

# The confidence limits of every row (sdcRisk::score_limits() in the core,
# one pass): for the statistics with a variance function v(t) = outside +
# sv + own t of the row's true value t (plug_variance(); `outside` not NA),
# the values t that a test with that variance does not reject, (estimate -
# t)^2 <= z^2 v(t), whose limits are estimate + z^2 own / 2 -+ sqrt(z^2
# v(estimate) + z^4 own^2 / 4); the normal interval of the variance
# max(var, 0) + sv for the others, and where no t passes the test. `sv`:
# the sampling variance, one value or one per row.
estimate_limits <- function(estimate, var, sv, outside, own, z) {
  core_call(cpp_score_limits, as.numeric(estimate), as.numeric(var), as.numeric(sv), outside, own, z)
}

align_sampling_var <- function(sampling_var, out, by, call) {
  if (is.numeric(sampling_var) && is.null(dim(sampling_var)) && length(sampling_var) == nrow(out)) {
    sv <- sampling_var
  } else if (is.data.frame(sampling_var) && "var" %in% names(sampling_var) && all(by %in% names(sampling_var))) {
    key <- function(d) if (length(by)) do.call(paste, c(lapply(d[by], as.character), sep = "\r")) else rep("", nrow(d))
    sv <- sampling_var$var[match(key(out), key(sampling_var))]
  } else {
    abort_sdc(c(
      "{.arg sampling_var} must be one number per row of the table ({nrow(out)}), or a data frame with the {.arg by} columns and {.field var}.",
      "x" = "It is {.obj_type_friendly {sampling_var}}{if (is.null(dim(sampling_var))) paste0(' of length ', length(sampling_var)) else ''}."
    ), "argument", call = call, arg = "sampling_var")
  }
  if (anyNA(sv) || any(!is.finite(sv)) || any(sv < 0)) {
    abort_sdc(c("{.arg sampling_var} must give a finite, non-negative variance for every row of the table.",
                "x" = "Missing or invalid for {sum(is.na(sv) | !is.finite(sv) | sv < 0)} row{?s}."),
              "argument", call = call, arg = "sampling_var")
  }
  sv
}

#' @export
format.sdc_estimate <- function(x, ...) {
  stat <- attr(x, "stat")
  value <- attr(x, "value")
  by <- attr(x, "by")
  head <- paste0(
    "<sdc_estimate>: ", stat, if (!is.null(value)) paste0(" of ", value) else "",
    if (!is.null(attr(x, "weights"))) paste0(", weighted by ", attr(x, "weights")) else "",
    if (length(by)) paste0(", by ", paste(by, collapse = " x ")) else "",
    "; se: the perturbation's, given the original file",
    if ("se_total" %in% names(x)) "; se_total adds the sampling variance" else ""
  )
  df <- as.data.frame(unclass(x), stringsAsFactors = FALSE, optional = TRUE)
  c(head, utils::capture.output(print(df, digits = 4, row.names = FALSE)), outside_note(x))
}

# The note under a table with rows whose moment estimate lies outside the
# parameter space.
outside_note <- function(x) {
  if (!"outside" %in% names(x)) return(character())
  out <- !is.na(x$outside) & x$outside
  if (!any(out)) return(character())
  moment <- sum(out & x$estimator == "moment")
  paste0(
    "Note: the moment estimate of ", sum(out), if (sum(out) > 1) " rows lie" else " row lies",
    " outside the parameter space (`outside`)",
    if (moment > 0) paste0(
      "; kept, as it is unbiased (estimator = \"auto\" gives the maximum likelihood ",
      "estimate instead, in the parameter space but biased; see ?estimate_table)."
    ) else "; the maximum likelihood estimate is shown (biased; see ?estimate_table)."
  )
}

#' @export
print.sdc_estimate <- function(x, ...) {
  writeLines(format(x, ...))
  invisible(x)
}
