#' Regression on a released file, corrected for the perturbation
#'
#' Linear, logistic and Poisson regression in which perturbed keys appear as
#' covariates, in the response, or both, fitted from the released file and
#' its publication ([publish_plan()]) by a corrected estimating equation,
#' with standard errors, `summary()`, `coef()`, `vcov()` and `confint()` as
#' for [stats::glm()].
#'
#' @section The corrected estimating equation:
#' The fit the original file would give, \eqn{\beta_0}, solves
#' \eqn{\sum_r \psi_r(x_r; \beta) = 0}, \eqn{\psi_r(x; \beta) = w_r \phi_r(x)
#' (y_r(x) - \mu(\phi_r(x)' \beta))} for the canonical links (identity,
#' logit, log), \eqn{x_r} the record's original keys, \eqn{\phi_r(x)} its
#' covariates and \eqn{y_r(x)} its response, either of which may be made of
#' keys. With \eqn{Q = P^{-1}} and the released cell \eqn{z_r}, the
#' corrected score
#' \deqn{\psi^*_r(z_r; \beta) = \sum_x Q[x, z_r] \psi_r(x; \beta)}
#' has \eqn{E[\psi^*_r(z_r; \beta) \mid x_r] = \psi_r(x_r; \beta)} for every
#' \eqn{\beta} (the argument of [estimate_table()], Nakamura 1990; Akazawa,
#' Kinukawa and Nakamura 1998 for misclassified categorical covariates), so
#' the root \eqn{\hat\beta} of \eqn{\sum_r \psi^*_r = 0} estimates
#' \eqn{\beta_0} consistently. It is a weighted fit over every original key
#' value a record may have had (for a block plan the key values of its
#' block's cells, for a per-variable plan the categories of the perturbed
#' keys in the model), with the weights \eqn{w_r Q[x, z_r]}, some negative;
#' it is solved by Newton's method on the corrected log-likelihood. Keys
#' that are not in the formula do not matter.
#'
#' Why not EM over the perturbed categories (van den Hout and van der
#' Heijden 2002)? EM needs a model for the distribution of the keys given
#' the other covariates (for a continuous covariate, a model of its own),
#' and a wrong one biases \eqn{\hat\beta}; the corrected score needs none,
#' is unbiased for every \eqn{\beta} whatever the distribution of the
#' data, and gives its variance in closed form. Its price: it can be less
#' efficient than a correct likelihood, and with weights of both signs the
#' corrected log-likelihood need not be concave in small samples (the fit
#' then stops with an error rather than return a non-converged
#' \eqn{\hat\beta}).
#'
#' @section Standard errors:
#' With \eqn{A = -\partial \sum_r \psi^*_r / \partial \beta} (the corrected
#' information), `vcov(type = "perturbation")` is the perturbation's
#' variance given the original file, \eqn{A^{-1} B A^{-1}} with
#' \eqn{B = \sum_r [\psi^*_r \psi^{*\prime}_r - \sum_x Q[x, z_r] \psi_r(x)
#' \psi_r(x)']}, unbiased for \eqn{\sum_r Var(\psi^*_r \mid x_r)} (as in
#' [estimate_table()]); `type = "sampling"` is the robust (sandwich)
#' sampling variance of the fit to the original file, with the meat
#' \eqn{\sum_r \sum_x Q[x, z_r] \psi_r(x) \psi_r(x)'} estimated without bias
#' from the released file; `type = "total"` (the default of `vcov()`,
#' `summary()` and `confint()`) is their sum, \eqn{A^{-1} (\sum_r
#' \psi^*_r \psi^{*\prime}_r) A^{-1}}, the sandwich of the corrected
#' scores: sampling of the records (independently, with replacement, as
#' the robust variance of a glm assumes) and perturbation together. A
#' negative diagonal of the perturbation variance (possible, as for
#' [estimate_table()]) is reported as 0.
#'
#' @param formula A model formula, as for [stats::glm()]; keys of the
#'   publication may appear anywhere in it (also within functions such as
#'   `I(MSP == "3")` or `factor(RAC1P)`).
#' @param data The released file (every record, as released).
#' @param publication Its `sdc_publication` ([publish_plan()], [read_plan()]).
#' @param family `gaussian()`, `binomial()` or `poisson()`, with their
#'   canonical links (or their names as strings).
#' @param weights `NULL`, or the name of a column of non-negative weights the
#'   release did not perturb.
#' @returns An object of class `sdc_glm`: a list with `coefficients`,
#'   `vcov` (a list of the three matrices), `family`, `formula`, `nobs` and
#'   `iterations`.
#' @references Nakamura, T. (1990). Corrected score function for
#'   errors-in-variables models. *Biometrika* 77(1), 127-137.
#'
#'   Akazawa, K., Kinukawa, N. and Nakamura, T. (1998). A note on the
#'   corrected score function corrected for misclassification. *Journal of
#'   the Japan Statistical Society* 28(1), 115-123.
#'
#'   van den Hout, A. and van der Heijden, P. G. M. (2002). Randomized
#'   response, statistical disclosure control and misclassification: a
#'   review. *International Statistical Review* 70(2), 269-288.
#' @family estimation
#' @export
#' @examples
#' set.seed(1)
#' d <- pums_md[1:5000, ]
#' rel <- pram_release(d, c("sex", "race", "marital"), vars = c("race", "marital"), pd = 0.8)
#' pub <- publish_plan(rel)
#' # race has categories no record of these 5,000 has: a coefficient for each
#' # cannot be estimated, so the formula merges them (race as White or not)
#' fit <- estimate_glm(I(marital == "Married") ~ I(race == "White") + education, rel$data, pub,
#'                     family = binomial())
#' summary(fit)
#' confint(fit, type = "perturbation")
estimate_glm <- function(formula, data, publication, family = stats::gaussian(), weights = NULL) {
  call <- rlang::current_env()
  check_data_frame(data, call = call)
  validate_sdc_publication(publication, call = call, deep = FALSE)
  family <- check_family(family, call)
  if (!inherits(formula, "formula") || length(formula) != 3) {
    abort_sdc(c("{.arg formula} must be a two-sided model formula.", "x" = "It is {.obj_type_friendly {formula}}."),
              "model", call = call, arg = "formula")
  }
  key_names <- vapply(publication$keys, `[[`, "", "name")
  vars <- all.vars(formula)
  check_names_in(vars, data, arg = "formula", what = "variable", call = call)
  w <- if (is.null(weights)) rep(1, nrow(data)) else estimate_column(data, weights, "weights", key_names, call)
  if (anyNA(w) || any(!is.finite(w) | w < 0)) {
    abort_sdc("{.arg weights} must be finite and non-negative in every record.", "weight", call = call, arg = "weights")
  }
  codes <- released_codes(publication, data, call = call)
  model_keys <- intersect(key_names, vars)
  pairs <- model_pairs(publication, codes, model_keys, call)
  expanded <- expand_records(data, vars, pairs, publication, model_keys)
  fit <- fit_corrected(formula, expanded, w[pairs$record], pairs$record, pairs$h, family, call)
  structure(c(fit, list(family = family, formula = formula, publication_kind = publication$kind,
                        model_keys = model_keys)), class = "sdc_glm")
}

check_family <- function(family, call) {
  if (is.character(family) && length(family) == 1) {
    family <- switch(family, gaussian = stats::gaussian(), binomial = stats::binomial(),
                     poisson = stats::poisson(), family)
  }
  if (is.function(family)) family <- family()
  canonical <- list(gaussian = "identity", binomial = "logit", poisson = "log")
  if (!inherits(family, "family") || !family$family %in% names(canonical) ||
      family$link != canonical[[family$family]]) {
    abort_sdc(c("{.arg family} must be {.code gaussian()}, {.code binomial()} or {.code poisson()} with its canonical link.",
                "x" = "It is {if (inherits(family, 'family')) paste(family$family, family$link) else class(family)[1]}."),
              "model", call = call, arg = "family")
  }
  family
}

# The original key values each record may have had, with the weights
# Q[x, z_r] (summed over the keys outside the model): a list with `record`
# (the record of every pair), `codes` (for every model key, the code of its
# category in the pair) and `h`. Methods per kind of publication.
model_pairs <- function(pub, codes, model_keys, call) UseMethod("model_pairs")

#' @export
model_pairs.sdc_publication_blocks <- function(pub, codes, model_keys, call) {
  n <- length(codes[[1]])
  if (length(model_keys) == 0) return(list(record = seq_len(n), codes = list(), h = rep(1, n)))
  # the block cell of every record, the key values d of the model keys of
  # every record and block cell, and the pairs (block cell z, d) of every
  # block with their h_d(z)
  bc <- released_block_cells(pub, codes, model_keys, call)
  cell <- bc$cell
  d_cell <- bc$d_cell
  bp <- block_pairs(pub, d_cell, call)
  direct <- which(is.na(cell))
  moved <- which(!is.na(cell))
  n_of <- tabulate(bp$cell, length(d_cell))
  first <- cumsum(n_of) - n_of
  r <- rep.int(moved, n_of[cell[moved]])
  pos <- sequence(n_of[cell[moved]], from = first[cell[moved]] + 1L)
  d <- c(bc$d_rec[direct], bp$d[pos])
  codes_out <- lapply(bc$d_codes, function(x) x[d])
  names(codes_out) <- model_keys
  list(record = c(direct, r), h = c(rep(1, length(direct)), bp$h[pos]), codes = codes_out)
}

# h_d(z) for every cell z of every block and every d of its block's cells,
# sorted by cell: the closed form of IFPR blocks (sdcRisk::ifpr_sums()'s
# comment), the inverse of matrix blocks.
block_pairs <- function(pub, d_cell, call) {
  p <- pub$plan
  out <- lapply(seq_along(p$size), function(b) {
    cells <- sum(p$size[seq_len(b - 1)]) + seq_len(p$size[b])
    ds <- unique(d_cell[cells])
    q <- if (is.na(p$theta[b])) block_inverse(p$matrices[[b]], b, call) else ifpr_inverse(p, b, cells, call)
    h <- crossprod(q, outer(d_cell[cells], ds, `==`) * 1)
    list(cell = rep(cells, length(ds)), d = rep(ds, each = length(cells)), h = as.vector(h))
  })
  cell <- unlist(lapply(out, `[[`, "cell"))
  ord <- order(cell)
  list(cell = cell[ord], d = unlist(lapply(out, `[[`, "d"))[ord], h = unlist(lapply(out, `[[`, "h"))[ord])
}

# The inverse of an IFPR block's matrix, checked for singularity as the
# estimator of tables does.
ifpr_inverse <- function(p, b, cells, call) {
  pm <- block_dense_p(p, b)
  if (rcond(pm) < estimate_singular_tol) abort_singular(b, p, call)
  solve(pm)
}

#' @export
model_pairs.sdc_publication_vars <- function(pub, codes, model_keys, call) {
  n <- length(codes[[1]])
  vars <- intersect(pub$plan$vars, model_keys)
  agg_like <- list(codes = extended_codes(codes, pub)$codes, count = rep(1L, n),
                   in_cell = Reduce(`&`, lapply(codes, function(x) !is.na(x)), TRUE))
  if (pub$na == "category") agg_like$in_cell <- rep(TRUE, n)
  agg_like$nlevels <- extended_codes(codes, pub)$nlevels
  s <- vars_strata(pub, agg_like, call)
  moved <- which(!is.na(s))
  if (length(vars) == 0 || length(moved) == 0) {
    return(list(record = seq_len(n), h = rep(1, n), codes = lapply(agg_like$codes[model_keys], identity)))
  }
  inv <- vars_inverses(pub, vars, call)
  k <- vapply(inv, function(q) dim(q)[1], 1L)
  combos <- as.matrix(expand.grid(lapply(k, seq_len)))
  r <- rep(moved, each = nrow(combos))
  ci <- rep.int(seq_len(nrow(combos)), length(moved))
  h <- rep(1, length(r))
  out_codes <- lapply(agg_like$codes[model_keys], function(x) x[r])
  for (j in seq_along(vars)) {
    v <- vars[j]
    h <- h * inv[[v]][cbind(combos[ci, j], agg_like$codes[[v]][r], s[r])]
    out_codes[[v]] <- combos[ci, j]
  }
  direct <- which(is.na(s))
  list(record = c(direct, r), h = c(rep(1, length(direct)), h),
       codes = Map(function(a, b) c(a[direct], b), agg_like$codes[model_keys], out_codes))
}

# Expanded rows beyond which the model matrix is not formed: 20 million
# rows (about 160 MB a column); a model of keys with many categories on a
# large file would need more.
estimate_model_max_rows <- 2e7

# The records' model variables, one row per pair, the model keys set to
# the pair's categories (in the type of the released column).
expand_records <- function(data, vars, pairs, pub, model_keys, call = rlang::caller_env()) {
  if (length(pairs$record) > estimate_model_max_rows) {
    abort_sdc(c("The corrected fit would need {fmt_int(length(pairs$record))} rows, more than {fmt_int(estimate_model_max_rows)}.",
                "i" = "Use fewer or coarser keys in {.arg formula}."), "model", call = call, arg = "formula")
  }
  # column by column: `[.data.frame` would make a row name per row
  out <- lapply(data[vars], function(x) x[pairs$record])
  key_names <- vapply(pub$keys, `[[`, "", "name")
  for (v in model_keys) {
    key <- pub$keys[[match(v, key_names)]]
    # the code after the last category is a missing value (na = "exclude")
    out[[v]] <- category_values(pairs$codes[[v]], key$categories, data[[v]])
  }
  structure(out, class = "data.frame", row.names = c(NA_integer_, -length(pairs$record)))
}

# Newton's method on the corrected log-likelihood sum q l(y, mu), q = w h,
# and the three variances of the root (see ?estimate_glm).
fit_corrected <- function(formula, expanded, w, record, h, family, call) {
  mf <- stats::model.frame(formula, expanded, na.action = stats::na.pass)
  # a record with a missing model variable in any of its pairs is left out
  drop <- unique(record[!stats::complete.cases(mf)])
  keep <- !record %in% drop
  mf <- mf[keep, , drop = FALSE]
  y <- model_response(stats::model.response(mf), family, call)
  x <- stats::model.matrix(formula, mf)
  # a record's pairs with the same covariates and response are one pair
  # (the model may use only some of a key's categories, e.g. I(race == 1))
  cp <- collapse_pairs(x, y, h[keep], record[keep])
  x <- cp$x
  y <- cp$y
  h <- cp$h
  record <- cp$record
  w <- w[keep][cp$first]
  q <- w * h
  beta <- newton_corrected(x, y, q, family, call)
  eta <- drop(x %*% beta$beta)
  mu <- family$linkinv(eta)
  info <- crossprod(x, x * (q * family$mu.eta(eta)))
  score_pair <- x * (q * (y - mu))
  per_record <- rowsum(score_pair, record, reorder = FALSE)
  meat_total <- crossprod(per_record)
  meat_sampling <- crossprod(x, x * (h * (w * (y - mu))^2))
  bread <- solve(info)
  sandwich <- function(meat) {
    v <- bread %*% meat %*% bread
    dimnames(v) <- list(colnames(x), colnames(x))
    v
  }
  list(coefficients = stats::setNames(beta$beta, colnames(x)),
       vcov = list(total = sandwich(meat_total), perturbation = sandwich(meat_total - meat_sampling),
                   sampling = sandwich(meat_sampling)),
       nobs = length(unique(record)), iterations = beta$iterations)
}

model_response <- function(y, family, call) {
  if (is.logical(y)) y <- as.numeric(y)
  if (is.factor(y)) y <- as.numeric(y != levels(y)[1])
  if (!is.numeric(y) || !is.null(dim(y))) {
    abort_sdc("The response of {.arg formula} must be numeric, logical or a factor.", "model", call = call, arg = "formula")
  }
  if (family$family == "binomial" && any(y < 0 | y > 1)) {
    abort_sdc("For {.code binomial()}, the response must lie in [0, 1].", "model", call = call, arg = "formula")
  }
  if (family$family == "poisson" && any(y < 0)) {
    abort_sdc("For {.code poisson()}, the response must be non-negative.", "model", call = call, arg = "formula")
  }
  y
}

# The pairs of a record whose rows of the model matrix and response are the
# same, merged (their weights h added). Rows are told apart by their
# projection on the logarithms of the first primes, which are linearly
# independent over the rationals: rows of dummies and integers that differ
# project apart (no random numbers are drawn).
collapse_pairs <- function(x, y, h, record) {
  v <- drop(x %*% log(first_primes(ncol(x))))
  cols <- list(record, match(v, unique(v)), match(y, unique(y)))
  cc <- cross_classify_codes(cols, vapply(cols, max, 1L))
  first <- match(seq_along(cc$counts), cc$cell_id)
  list(x = x[first, , drop = FALSE], y = y[first], h = sum_by(h, cc$cell_id, length(cc$counts)),
       record = record[first], first = first)
}

first_primes <- function(n) {
  out <- integer()
  k <- 2L
  while (length(out) < n) {
    if (all(k %% out[out <= sqrt(k)] != 0L)) out <- c(out, k)
    k <- k + 1L
  }
  out
}

# Iterations of Newton's method at most, and the relative size of the last
# step at which it stops.
estimate_glm_max_iter <- 100L
estimate_glm_tol <- 1e-10

newton_corrected <- function(x, y, q, family, call) {
  loglik <- function(beta) {
    mu <- family$linkinv(drop(x %*% beta))
    l <- switch(family$family,
                gaussian = -(y - mu)^2 / 2,
                binomial = y * log(pmax(mu, 1e-300)) + (1 - y) * log(pmax(1 - mu, 1e-300)),
                poisson = y * log(pmax(mu, 1e-300)) - mu)
    sum(q * l)
  }
  beta <- numeric(ncol(x))
  ybar <- min(max(sum(q * y) / sum(q), 0.01), if (family$family == "binomial") 0.99 else Inf)
  if ("(Intercept)" %in% colnames(x)) beta[colnames(x) == "(Intercept)"] <- family$linkfun(ybar)
  ll <- loglik(beta)
  for (it in seq_len(estimate_glm_max_iter)) {
    eta <- drop(x %*% beta)
    mu <- family$linkinv(eta)
    info <- crossprod(x, x * (q * family$mu.eta(eta)))
    step <- tryCatch(solve(info, crossprod(x, q * (y - mu))), error = function(e) NULL)
    if (is.null(step)) abort_singular_information(info, x, q, call)
    step <- drop(step)
    t <- 1
    while (loglik(beta + t * step) < ll - 1e-12 * abs(ll) && t > 1e-8) t <- t / 2
    beta <- beta + t * step
    ll <- loglik(beta)
    if (max(abs(t * step)) <= estimate_glm_tol * (1 + max(abs(beta)))) {
      return(list(beta = beta, iterations = it))
    }
  }
  abort_not_fitted(paste("Newton's method did not converge in", estimate_glm_max_iter, "iterations"), call)
}

# The columns of the model matrix the released file cannot estimate: a
# dummy of a category that (by the corrected weights) no record has.
abort_singular_information <- function(info, x, q, call) {
  d <- diag(info)
  weight <- colSums(x * q)
  empty <- colnames(x)[d <= 1e-8 * max(d) | abs(weight) < 1]
  why <- if (length(empty)) {
    paste0("no record has ", paste(encodeString(utils::head(empty, 5), quote = "\""), collapse = ", "),
           " (estimated ", paste(format(utils::head(weight[empty], 5), digits = 2), collapse = ", "), ")")
  } else {
    "its corrected information matrix is singular (collinear covariates)"
  }
  abort_not_fitted(paste0(why, "; merge such categories in the formula, e.g. with I() or %in%"), call)
}

abort_not_fitted <- function(why, call) {
  abort_sdc(c("The corrected model cannot be fitted: {why}.",
              "i" = "With weights of both signs, the corrected likelihood may have no maximum in small samples; use fewer covariates or keys."),
            "model", call = call, arg = "formula")
}

#' @export
coef.sdc_glm <- function(object, ...) object$coefficients

#' @param object An `sdc_glm` from [estimate_glm()].
#' @param type `"total"` (sampling and perturbation), `"perturbation"` (given
#'   the original file) or `"sampling"`.
#' @param ... Unused.
#' @rdname estimate_glm
#' @export
vcov.sdc_glm <- function(object, type = c("total", "perturbation", "sampling"), ...) {
  type <- check_choice(type)
  object$vcov[[type]]
}

glm_se <- function(object, type) {
  v <- diag(vcov.sdc_glm(object, type))
  if (any(v < 0)) {
    warn_sdc("The perturbation variance estimate of {sum(v < 0)} coefficient{?s} is negative; reported as 0.",
             "variance_negative")
  }
  sqrt(pmax(v, 0))
}

#' @param parm Coefficients (names or numbers); all by default.
#' @param level Confidence level.
#' @rdname estimate_glm
#' @export
confint.sdc_glm <- function(object, parm, level = 0.95, type = c("total", "perturbation", "sampling"), ...) {
  type <- check_choice(type)
  cf <- coef(object)
  se <- glm_se(object, type)
  if (missing(parm)) parm <- names(cf)
  if (is.numeric(parm)) parm <- names(cf)[parm]
  z <- stats::qnorm(1 - (1 - level) / 2)
  out <- cbind(cf[parm] - z * se[parm], cf[parm] + z * se[parm])
  pct <- paste(format(100 * c((1 - level) / 2, 1 - (1 - level) / 2), trim = TRUE, scientific = FALSE, digits = 3), "%")
  dimnames(out) <- list(parm, pct)
  out
}

#' @rdname estimate_glm
#' @export
summary.sdc_glm <- function(object, type = c("total", "perturbation", "sampling"), ...) {
  type <- check_choice(type)
  cf <- coef(object)
  se <- glm_se(object, type)
  z <- cf / se
  tab <- cbind(Estimate = cf, `Std. Error` = se, `z value` = z, `Pr(>|z|)` = 2 * stats::pnorm(-abs(z)))
  structure(list(coefficients = tab, type = type, family = object$family, formula = object$formula,
                 nobs = object$nobs, iterations = object$iterations,
                 share = diag(object$vcov$perturbation) / diag(object$vcov$total)),
            class = "summary.sdc_glm")
}

#' @export
print.summary.sdc_glm <- function(x, ...) {
  cat("Corrected ", x$family$family, " regression of a released file (link ", x$family$link, ")\n", sep = "")
  cat("Formula: ", paste(deparse(x$formula), collapse = " "), "\n\n", sep = "")
  stats::printCoefmat(x$coefficients, P.values = TRUE, has.Pvalue = TRUE)
  cat("\nStandard errors: ", switch(x$type, total = "sampling and perturbation (sandwich of the corrected scores)",
                                   perturbation = "the perturbation's, given the original file",
                                   sampling = "sampling (robust)"), "\n", sep = "")
  cat("Share of the total variance due to the perturbation: ",
      paste(sprintf("%.0f%%", 100 * range(pmax(x$share, 0))), collapse = " to "), "\n", sep = "")
  cat(fmt_int(x$nobs), " records; Newton's method converged in ", x$iterations, " iterations\n", sep = "")
  invisible(x)
}

#' @export
print.sdc_glm <- function(x, ...) {
  cat("Corrected ", x$family$family, " regression of a released file\n", sep = "")
  cat("Formula: ", paste(deparse(x$formula), collapse = " "), "\n\nCoefficients:\n", sep = "")
  print(coef(x))
  invisible(x)
}

#' @export
nobs.sdc_glm <- function(object, ...) object$nobs

#' @export
formula.sdc_glm <- function(x, ...) x$formula

#' @export
family.sdc_glm <- function(object, ...) object$family
