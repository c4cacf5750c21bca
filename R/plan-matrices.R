#' Transition matrices for per-variable PRAM
#'
#' Builders of the one-variable matrices that agencies use with
#' per-variable PRAM, returned in the package convention
#' \eqn{p_{rc} = P(Z = r | X = c)} (columns sum to 1), with the categories as
#' dimnames, ready for [pram_plan_vars()] or [pram_release()].
#'
#' * `pram_matrix_invariant()`: the invariant PRAM of Gouweleeuw et al.
#'   (1998), as `sdcMicro::pram()` builds it. A basic matrix \eqn{P} keeps
#'   category \eqn{c} with probability \eqn{d_c} and moves it to each other
#'   category with probability \eqn{(1 - d_c) / (L - 1)}; with the category
#'   shares \eqn{\pi}, \eqn{Q} is the matrix of the reverse transitions,
#'   \eqn{Q_{kj} = P_{jk} \pi_j / \sum_i \pi_i P_{ik}} (rows: original
#'   category, as in the paper), and \eqn{R = \alpha P Q + (1 - \alpha) I} is
#'   invariant: the expected released frequencies are the original ones
#'   (\eqn{\pi' R = \pi'}). As in sdcMicro 5.8, a single `pd` draws the
#'   diagonal \eqn{d_c} uniformly from \eqn{[pd, 1]} with R's generator (one
#'   `runif(L, pd, 1)`, so `set.seed()` reproduces sdcMicro's matrix); `pd`
#'   with one value per category fixes the diagonal.
#' * `pram_matrix_argus()`: mu-ARGUS's PRAM specification: a category is kept
#'   with probability `retention`, and the rest, \eqn{1 - p}, is spread
#'   equally over its `bandwidth - 1` nearest categories in the category
#'   order (the window of `bandwidth` consecutive categories centred on it,
#'   shifted inward at the ends so that every category has the same number
#'   of neighbours; with an even bandwidth the window reaches one category
#'   further up than down). `bandwidth = L` spreads over all categories.
#'
#' @param freq Frequencies of the categories: a named numeric vector of
#'   counts, or a factor or vector of values whose `table()` gives them (the
#'   levels of a factor are the categories, in their order).
#' @param pd Smallest probability of keeping a category (one number in
#'   \eqn{[0, 1]}: diagonals drawn uniformly from \eqn{[pd, 1]}), or one
#'   probability per category (the diagonal itself).
#' @param alpha Weight \eqn{\alpha \in [0, 1]} of the invariant part:
#'   \eqn{R = \alpha P Q + (1 - \alpha) I}.
#' @param categories Number of categories, or their names (a character
#'   vector).
#' @param retention Probability \eqn{p \in [0, 1]} of keeping the category:
#'   one number, or one per category.
#' @param bandwidth Width of the band around the diagonal, counting the
#'   category itself: a whole number from 2 to the number of categories.
#' @returns A column-stochastic square matrix with the categories as row
#'   and column names. Transpose it (`t()`) to compare with sdcMicro's
#'   printed matrices, whose rows are the original category.
#' @references Gouweleeuw, J. M., Kooiman, P., Willenborg, L. C. R. J. and
#'   de Wolf, P.-P. (1998). Post randomisation for statistical disclosure
#'   control: theory and implementation. Journal of Official Statistics 14,
#'   463-478 (the invariant matrix, Section 3). Hundepool, A. et al.,
#'   mu-ARGUS user's manual (PRAM specification).
#' @family per-variable PRAM
#' @export
#' @examples
#' set.seed(1)
#' marital <- factor(sample(c("married", "single", "widowed"), 200, TRUE, c(6, 3, 1)))
#' p <- pram_matrix_invariant(marital, pd = 0.8, alpha = 0.5)
#' round(p, 3)
#' colSums(p)
#' # invariant: expected released frequencies equal the original ones
#' drop(p %*% table(marital)) - table(marital)
#' pram_matrix_argus(5, retention = 0.9, bandwidth = 3)
pram_matrix_invariant <- function(freq, pd = 0.8, alpha = 0.5) {
  freq <- normalize_freq(freq)
  L <- length(freq)
  check_probability(alpha, open = FALSE)
  if (!is.numeric(pd) || !(length(pd) %in% c(1L, L)) || anyNA(pd) || any(pd < 0 | pd > 1)) {
    abort_sdc(c(
      "{.arg pd} must be one probability, or one per category ({L}).",
      "x" = "It is {show_value(pd)}."
    ), "argument", arg = "pd")
  }
  # sdcMicro 5.8 (calcTransitionMatrix): random diagonal in [pd, 1]
  d <- if (length(pd) == 1 && L > 0) stats::runif(L, min = pd, max = 1) else pd
  if (L == 1) {
    return(matrix(1, 1, 1, dimnames = list(names(freq), names(freq))))
  }
  # basic matrix, rows = original category
  P <- matrix((1 - d) / (L - 1), L, L)
  diag(P) <- d
  pi <- freq / sum(freq)
  s <- colSums(pi * P) # s_k = sum_j pi_j P[j, k]
  Q <- t(P * pi) / ifelse(s > 0, s, 1) # Q[k, j] = P[j, k] pi_j / s_k
  Q[s == 0, ] <- diag(L)[s == 0, ]
  R <- alpha * (P %*% Q) + (1 - alpha) * diag(L)
  out <- t(R) # package convention: columns = original category
  out <- sweep(out, 2, colSums(out), "/")
  dimnames(out) <- list(names(freq), names(freq))
  out
}

#' @rdname pram_matrix_invariant
#' @export
pram_matrix_argus <- function(categories, retention, bandwidth = NULL) {
  lev <- if (is.character(categories)) categories else {
    if (!is_numbers(categories, 1, 1e6, whole = TRUE, n = 1)) {
      abort_value("{.arg categories} must be the category labels or their number (one whole number).",
        categories, "argument", rlang::current_env(), "categories")
    }
    as.character(seq_len(categories))
  }
  L <- length(lev)
  if (!is.numeric(retention) || !(length(retention) %in% c(1L, L)) || anyNA(retention) ||
    any(retention < 0 | retention > 1)) {
    abort_sdc(c(
      "{.arg retention} must be one probability, or one per category ({L}).",
      "x" = "It is {show_value(retention)}."
    ), "argument", arg = "retention")
  }
  bandwidth <- bandwidth %||% L
  if (L == 1) return(matrix(1, 1, 1, dimnames = list(lev, lev)))
  if (!is.numeric(bandwidth) || length(bandwidth) != 1 || is.na(bandwidth) ||
    bandwidth != round(bandwidth) || bandwidth < 2 || bandwidth > L) {
    abort_sdc(c(
      "{.arg bandwidth} must be one whole number from 2 to the number of categories ({L}).",
      "x" = "It is {show_value(bandwidth)}."
    ), "argument", arg = "bandwidth")
  }
  p <- rep_len(retention, L)
  out <- matrix(0, L, L, dimnames = list(lev, lev))
  below <- (bandwidth - 1) %/% 2
  for (c in seq_len(L)) {
    lo <- min(max(1, c - below), L - bandwidth + 1)
    band <- setdiff(seq.int(lo, length.out = bandwidth), c)
    out[band, c] <- (1 - p[c]) / (bandwidth - 1)
    out[c, c] <- p[c]
  }
  out
}

normalize_freq <- function(freq, call = rlang::caller_env()) {
  if (is.factor(freq) || is.character(freq) || is.logical(freq) ||
    (is.numeric(freq) && is.null(names(freq)))) {
    freq <- table(freq)
  }
  if (inherits(freq, "table")) freq <- stats::setNames(as.numeric(freq), names(freq))
  if (!is.numeric(freq) || length(freq) == 0 || anyNA(freq) || any(freq < 0) || sum(freq) <= 0) {
    abort_sdc(c(
      "{.arg freq} must be category counts (a named numeric vector) or the values of a variable.",
      "x" = "It is {show_value(freq)}."
    ), "argument", call = call, arg = "freq")
  }
  freq
}
