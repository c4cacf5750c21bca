#' A model of the population counts of a sample
#'
#' When the population counts \eqn{F_j} of a sample's cells are unknown (a
#' survey, not a census or a register), the risk of a target who may not be
#' in the file, \eqn{(t_j / F_j) R_j(a, t)} (see the section on sample
#' releases of [match_risk()]), is estimated by its expectation given the
#' sample counts under a model of \eqn{F_j} given \eqn{t_j}:
#' \eqn{t_j E[1 / F_j | t_j] R_j(a, t)}. Without perturbation its value at
#' \eqn{a = t_j} is \eqn{E[1 / F_j | t_j]}, the individual risk of
#' sdcMicro's `measure_risk()`. Every risk computed from a model is printed
#' as an estimate, with its model.
#'
#' @section Models:
#' * `"negbin"`: the negative binomial (Poisson-gamma) model of Benedetti
#'   and Franconi (1998) behind sdcMicro's individual risk: \eqn{F_j = t_j +
#'   Y}, \eqn{Y \sim NegBin(t_j, p_j)}, \eqn{p_j = t_j / \hat F_j}, where
#'   \eqn{\hat F_j} is the sum of the sampling weights of the records of
#'   cell \eqn{j} (or \eqn{t_j} / `fraction`). Then
#'   \deqn{E[1 / F_j | t_j] = (p_j / t_j) \int_0^\infty e^{-s} / (p_j + (1 - p_j) e^{-s / t_j}) ds,}
#'   computed to about \eqn{10^{-13}}; it is sdcMicro's closed form at
#'   \eqn{t_j = 1, 2}, and its default approximation \eqn{p_j / (t_j - 1 +
#'   p_j)} at larger \eqn{t_j} differs from it by a few percent (1.8% to
#'   3.1% at most on samples of `pums_md` and the ACS excerpts,
#'   `bench/bench_sample.R`). \eqn{E[F_j | t_j] = \hat F_j}.
#' * `"loglinear"`: the Poisson log-linear model of Skinner and Shlomo
#'   (2008): the sample counts of every combination of the keys' categories
#'   are independent Poisson(\eqn{\pi \mu_j}) with \eqn{\log \mu_j} a
#'   hierarchical log-linear model (`margins`: 1 for main effects only, 2
#'   for all two-way interactions, the default, or a list of sets of keys),
#'   fitted by iterative proportional fitting ([stats::loglin()]) to the
#'   sample's table until every fitted margin is within 0.01 records of the
#'   sample's (at most 1,000 sweeps; sparse tables converge slowly); the units outside the sample are Poisson(\eqn{\lambda_j
#'   = (1 - \pi) \hat\mu_j}) and
#'   \deqn{E[1 / F_j | t_j] = (1 / t_j) \int_0^\infty e^{-s} \exp(-\lambda_j (1 - e^{-s / t_j})) ds.}
#'   The sampling fraction \eqn{\pi} is `fraction`, or the records in cells
#'   over the sum of their weights. The table of every combination must have
#'   at most \eqn{10^7} cells, and the fit must converge.
#'
#' @param method `"negbin"` or `"loglinear"`.
#' @param weights Sampling weights: a numeric vector with one weight per
#'   record of the data the file was made from, or the name of a column of
#'   that data (for the functions that take the data). Finite and positive;
#'   for `"negbin"`, the weights of a cell's records must add up to at least
#'   its count.
#' @param fraction Instead of `weights`: the sampling fraction, a number in
#'   (0, 1].
#' @param margins For `"loglinear"`: 1, 2 or a list of character vectors of
#'   keys (the margins the model fits).
#' @returns An object of class `sdc_population_model`, to give as
#'   `population` to [match_risk()], [max_match_risk()],
#'   [max_match_risk_known()], [release_risk()], [pram_release()],
#'   [pram_certify()] and [ifpr()] with `target_in_file = "unknown"`.
#' @references Benedetti, R. and Franconi, L. (1998). Statistical and
#'   technological solutions for controlled data dissemination. Pre-proceedings
#'   of New Techniques and Technologies for Statistics, 1, 225-232.
#'
#'   Skinner, C. J. and Shlomo, N. (2008). Assessing identification risk in
#'   survey microdata using log-linear models. Journal of the American
#'   Statistical Association, 103, 989-1001.
#'
#'   Nayak, T. K., Zhang, C. and You, J. (2016), Sections 2.1 and 8.
#' @family risk
#' @export
#' @examples
#' set.seed(1)
#' keys <- c("sex", "race", "marital")
#' sample_md <- pums_md[sample(nrow(pums_md), 2000), keys]
#' cf <- cell_frequencies(sample_md, keys)
#' plan <- pram_plan(cf, list(which(cf$cells$count <= 2)), theta = 0.5)
#' # a 2000-record sample of the 59,033 persons of pums_md
#' model <- population_model("negbin", fraction = 2000 / nrow(pums_md))
#' max_match_risk(plan, population = model, target_in_file = "unknown")
population_model <- function(method = c("negbin", "loglinear"), weights = NULL, fraction = NULL, margins = 2) {
  method <- check_choice(method)
  if (is.null(weights) == is.null(fraction)) {
    abort_sdc(c(
      "A population model needs the sampling weights or the sampling fraction: give one of {.arg weights} and {.arg fraction}.",
      "x" = if (is.null(weights)) "Neither is given." else "Both are given."
    ), "population_model", arg = if (is.null(weights)) "weights" else "fraction")
  }
  if (!is.null(fraction)) {
    if (!is_numbers(fraction, 0, 1, n = 1, open_min = TRUE)) {
      abort_value("{.arg fraction} must be a single number in (0, 1].", fraction, "population_model",
                  rlang::current_env(), "fraction")
    }
  } else if (!(is.character(weights) && length(weights) == 1 && !is.na(weights))) {
    check_sampling_weights(weights, NULL)
  }
  if (method == "loglinear") check_margins(margins)
  structure(list(method = method, weights = weights, fraction = fraction, margins = margins),
            class = "sdc_population_model")
}

#' @export
format.sdc_population_model <- function(x, ...) {
  c(paste0("<sdc_population_model> ", model_label(x)),
    "Risks computed with it are estimates of the risk of a target who may not be in the file.")
}

#' @export
print.sdc_population_model <- function(x, ...) {
  writeLines(format(x, ...))
  invisible(x)
}

# The model and its inputs, as certificates print them.
model_label <- function(model) {
  what <- if (model$method == "negbin") {
    "negative binomial model of F given the sample counts (Benedetti and Franconi; sdcMicro's individual risk)"
  } else {
    margins <- if (is.list(model$margins)) {
      paste(vapply(model$margins, paste, "", collapse = " x "), collapse = ", ")
    } else if (model$margins == 1) "main effects" else "all two-way interactions"
    paste0("Poisson log-linear model of F (Skinner and Shlomo 2008; ", margins, ")")
  }
  inputs <- if (!is.null(model$fraction)) {
    paste0("sampling fraction ", format(model$fraction, digits = 4))
  } else if (is.character(model$weights)) {
    paste0("sampling weights ", model$weights)
  } else {
    "sampling weights"
  }
  paste0(what, ", ", inputs)
}

# Sampling weights: finite positive numbers, one per record (`n`, if given).
check_sampling_weights <- function(w, n, call = rlang::caller_env(), arg = "weights") {
  if (!is_numbers(w, 0, open_min = TRUE) || length(w) == 0 || (!is.null(n) && length(w) != n)) {
    bad <- if (is.numeric(w)) w[is.na(w) | !is.finite(w) | w <= 0] else w
    abort_sdc(c(
      "{.arg {arg}} must be finite positive sampling weights{if (!is.null(n)) paste0(', one per record (', fmt_int(n), ')') else ''}.",
      "x" = if (is.numeric(w) && length(bad) > 0) "Found {show_value(bad)}." else "It is {.obj_type_friendly {w}} of length {length(w)}."
    ), "sampling_weights", call = call, arg = arg)
  }
  invisible(w)
}

check_margins <- function(margins, call = rlang::caller_env()) {
  ok <- (is.numeric(margins) && length(margins) == 1 && margins %in% 1:2) ||
    (is.list(margins) && length(margins) > 0 && all(vapply(margins, function(m) is.character(m) && length(m) > 0 && !anyNA(m), TRUE)))
  if (!ok) {
    abort_sdc(c(
      "{.arg margins} must be 1, 2 or a list of character vectors of keys.",
      "x" = "It is {show_value(margins)}."
    ), "population_model", call = call, arg = "margins")
  }
  invisible(margins)
}

# ---- estimates ------------------------------------------------------------------

# The sample case of `cells` under a population model: the estimated
# weights t_j E[1 / F_j | t_j] and E[F_j | t_j] (see sample_of()).
model_sample <- function(cells, model, data = NULL, call = rlang::caller_env()) {
  f <- as.numeric(cells$cells$count)
  est <- if (model$method == "negbin") {
    negbin_estimates(cells, model, data, call)
  } else {
    loglinear_estimates(cells, model, data, call)
  }
  new_sdc_sample(weight = pmin(1, f * est$inverse), population = est$population, exact = FALSE,
                 label = paste0("estimated: ", model_label(model)), model = model)
}

# The weights of the records of the cells (in cells), as given or from the
# column of `data` the model names.
sample_record_weights <- function(cells, model, data, call) {
  w <- model$weights
  if (is.character(w)) {
    if (!is.data.frame(data) || !w %in% names(data)) {
      abort_population(c(
        "The sampling weights {.val {w}} of {.arg population} must be a column of the data.",
        "x" = if (is.data.frame(data)) "The data has no column {.val {w}}." else "This function has no data, only cells.",
        "i" = "Give the weights as a numeric vector, one per record."
      ), "sampling_weights", call = call)
    }
    w <- data[[w]]
  }
  check_sampling_weights(w, cells$n_records, call = call, arg = "population$weights")
  if (length(cells$cell_id) != cells$n_records) {
    abort_population(c(
      "Sampling weights need the cell of every record, which these cells do not keep.",
      "i" = "Make the cells with {.fn cell_frequencies} on a data frame, or give {.arg fraction} instead of weights."
    ), "sampling_weights", call = call)
  }
  w
}

# Negative binomial: F-hat_j (the weights' sums) and E[1 / F_j | t_j].
negbin_estimates <- function(cells, model, data, call) {
  f <- as.numeric(cells$cells$count)
  if (!is.null(model$fraction)) {
    # p_j = fraction for every cell: one evaluation per distinct count
    u <- sort(unique(f))
    inverse <- core_call(cpp_population, "negbin", u, rep(model$fraction, length(u)), call = call)[match(f, u)]
    return(list(inverse = inverse, population = f / model$fraction))
  }
  w <- sample_record_weights(cells, model, data, call)
  inside <- !is.na(cells$cell_id)
  big_f <- tabulate_sum(cells$cell_id[inside], w[inside], length(f))
  short <- which(big_f < f * (1 - 1e-12))
  if (length(short) > 0) {
    abort_population(c(
      "The sampling weights of {.arg population} add up to less than the sample count in some cells.",
      "x" = "{n_of(length(short), 'cell')}, such as cell {short[1]}: weights sum to {format(big_f[short[1]], digits = 6)}, count {f[short[1]]}.",
      "i" = "Sampling weights estimate how many population units each record stands for: at least 1."
    ), "sampling_weights", call = call)
  }
  big_f <- pmax(big_f, f)
  list(inverse = core_call(cpp_population, "negbin", f, f / big_f, call = call), population = big_f)
}

# The largest table of every combination of the keys' categories that the
# log-linear model fits (doubles: 80 MB, and loglin() holds a few copies);
# beyond it a model of so many cells is not what the fit is for.
loglinear_max_cells <- 1e7

# Poisson log-linear model: mu-hat_j from the fit to the sample's table,
# lambda_j = (1 - pi) mu-hat_j, E[1 / F_j | t_j] and E[F_j | t_j].
loglinear_estimates <- function(cells, model, data, call) {
  keys <- cells$keys
  tab <- cells$cells
  f <- as.numeric(tab$count)
  inside <- !is.na(cells$cell_id)
  fraction <- model$fraction %||% {
    w <- sample_record_weights(cells, model, data, call)
    min(1, sum(inside) / sum(w[inside]))
  }
  codes <- lapply(keys, function(k) match(tab[[k]], unique(tab[[k]])))
  dims <- vapply(codes, max, integer(1))
  if (prod(as.numeric(dims)) > loglinear_max_cells) {
    abort_population(c(
      "The log-linear model's table is too large: {fmt_int(prod(as.numeric(dims)))} combinations of the keys' categories.",
      "i" = "At most {fmt_int(loglinear_max_cells)}: group categories, or use {.code population_model(\"negbin\")}."
    ), "population_model", call = call)
  }
  index <- 1 + Reduce(`+`, Map(function(cd, stride) (cd - 1) * stride, codes, cumprod(c(1, dims))[seq_along(dims)]))
  table <- array(0, dim = dims, dimnames = stats::setNames(vector("list", length(keys)), keys))
  table[index] <- f
  fitted <- loglinear_fit(table, loglinear_margins(model$margins, keys, call), call)[index]
  lambda <- (1 - fraction) * fitted / fraction
  list(inverse = core_call(cpp_population, "poisson", f, lambda, call = call), population = f + lambda)
}

# The margins of the model as loglin() takes them (key numbers).
loglinear_margins <- function(margins, keys, call) {
  if (is.list(margins)) {
    bad <- setdiff(unlist(margins), keys)
    if (length(bad) > 0) {
      abort_population(c(
        "The {.arg margins} of the log-linear model must name keys.",
        "x" = "Not keys: {.val {bad}}."
      ), "population_model", call = call)
    }
    return(lapply(margins, match, keys))
  }
  k <- length(keys)
  if (margins == 1 || k == 1) return(as.list(seq_len(k)))
  utils::combn(k, 2, simplify = FALSE)
}

# Iterative proportional fitting stops when every fitted margin is within
# `eps` records of the sample's, and fails beyond `iter` sweeps. On sparse
# samples (pums_md at 5%, all two-way margins) IPF converges slowly toward
# fitted zeros: 374 sweeps (8 s) to 0.01, 3,730 (80 s) to 0.001, while the
# estimated risks move by far less than their model error; 0.01 records is
# the tolerance, and 1,000 sweeps the budget.
loglinear_ipf <- list(eps = 0.01, iter = 1000L)

# The fitted expected counts of the log-linear model; a fit that does not
# converge is an error, not an estimate.
loglinear_fit <- function(table, margins, call) {
  fit <- withCallingHandlers(
    stats::loglin(table, margins, fit = TRUE, eps = loglinear_ipf$eps, iter = loglinear_ipf$iter, print = FALSE),
    warning = function(w) {
      abort_population(c(
        "The log-linear model of the population did not converge.",
        "x" = "{conditionMessage(w)} (iterative proportional fitting, {fmt_int(loglinear_ipf$iter)} sweeps, margins to {loglinear_ipf$eps} records).",
        "i" = "Fit fewer margins ({.code margins = 1}), group categories, or use {.code population_model(\"negbin\")}."
      ), "population_model", call = call)
    }
  )
  fit$fit
}
