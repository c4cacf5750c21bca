#' The bound psi(T, theta) on the unique-match risk under IFPR
#'
#' For a cell of count \eqn{T} in an IFPR block with parameter \eqn{\theta},
#' the probability that a unique match is correct satisfies
#' \eqn{R_1(1, t) \le \psi(T, \theta) = (T - \theta) / (T (T - \theta) + \theta^2)}
#' whatever the other cells of the block (Nayak, Zhang and You 2016,
#' eq. 4.12). \eqn{\psi} is strictly decreasing in \eqn{\theta} on
#' \eqn{[0, T]}, from \eqn{1 / T} to 0, and not monotone in \eqn{T}:
#' \eqn{\psi(1, \theta) \ge \psi(2, \theta)} if and only if
#' \eqn{\theta \le 2/3}.
#'
#' @param t Cell counts (\eqn{\ge 1}).
#' @param theta IFPR parameters, \eqn{0 \le \theta \le T}. Recycled with `t`.
#' @returns A numeric vector.
#' @family design
#' @export
#' @examples
#' psi(1, 2/3); psi(2, 2/3) # both 3/7
#' psi(1:5, 0.8)
psi <- function(t, theta) {
  check_positive_numbers(t, "t", min = 1)
  check_positive_numbers(theta, "theta", min = 0, class = "theta")
  n <- max(length(t), length(theta))
  t <- rep_len(as.numeric(t), n)
  theta <- rep_len(as.numeric(theta), n)
  if (any(theta > t)) {
    bad <- which(theta > t)[1]
    abort_sdc(c(
      "{.arg theta} must not exceed {.arg t}.",
      "x" = "Element {bad}: theta = {theta[bad]}, t = {t[bad]}."
    ), "theta", arg = "theta")
  }
  core_call(cpp_design, "psi", t, theta)
}

#' IFPR parameter and minimum block size for a risk bound (Nayak et al.)
#'
#' The IFPR design of Nayak, Zhang and You (2016, Section 4.2, Tables 1-2)
#' with one \eqn{\theta \in (0, 1)} for all blocks:
#' * `"sample_uniques"` (Goal 1): \eqn{\theta} solves \eqn{\psi(1, \theta) = \xi};
#'   any \eqn{\xi \in (0, 1)}; blocks need at least 2 cells.
#' * `"unique_matches"` (Goal 2): \eqn{\theta_0} solves
#'   \eqn{h(\theta) = \max_T \psi(T, \theta) = \xi}, which needs
#'   \eqn{\xi > 1/3}; blocks need at least 2 cells.
#' * `"all_matches"` (Goal 3): the same \eqn{\theta_0}, and blocks of at least
#'   \eqn{m_0 = \lceil 1 / (1 - \theta_0) \rceil} cells so that the risk is
#'   largest at \eqn{a = 1} (Proposition 4.1).
#'
#' Block sizes are computed so that a ratio that floating point puts a hair
#' above an integer counts as that integer (\eqn{1 / (1 - 0.8)} gives 5, not
#' 6).
#'
#' @param xi Risk bounds in (0, 1).
#' @param goal The disclosure control goal.
#' @returns A data frame with `xi`, `goal`, `theta` and `block_size` (the
#'   minimum number of cells per block).
#' @seealso [ifpr_theta_ghatak()] for any \eqn{\xi} with blocks of cells of
#'   count at least \eqn{T_1}.
#' @family design
#' @export
#' @examples
#' ifpr_theta(0.395, "all_matches") # theta 0.8, blocks of 5 (Section 7)
#' ifpr_theta(c(0.789, 0.429, 0.35), "all_matches")
#' ifpr_theta(0.2, "sample_uniques")
ifpr_theta <- function(xi, goal = c("all_matches", "unique_matches", "sample_uniques")) {
  goal <- check_choice(goal)
  check_xi_vector(xi)
  if (goal == "sample_uniques") {
    theta <- core_call(cpp_design, "theta_psi", xi, 1)
    size <- rep(2, length(xi))
  } else {
    if (any(xi <= 1 / 3)) {
      abort_sdc(c(
        "No IFPR parameter in [0, 1) reaches {.arg xi} = {show_value(xi[xi <= 1/3])} for goal {.val {goal}}.",
        "x" = "With theta <= 1, cells of count 1 or 2 keep a risk of at least h(1) = 1/3 (Nayak, Zhang and You 2016, Section 4.2).",
        "i" = "Use {.fn ifpr_theta_ghatak} (theta above 1 with blocks of larger cells) or {.code ifpr(method = \"tiered\")}."
      ), "infeasible", arg = "xi")
    }
    theta <- core_call(cpp_design, "theta_h", xi, numeric(0))
    size <- if (goal == "all_matches") pmax(2, core_call(cpp_design, "ceiling", 1 / (1 - theta), numeric(0))) else rep(2, length(xi))
  }
  data.frame(xi = xi, goal = goal, theta = theta, block_size = block_size_int(size, xi))
}

#' IFPR parameter and minimum block size for any risk bound (Ghatak et al.)
#'
#' Ghatak et al. (2018) let \eqn{\theta} exceed 1: in a block whose cells all
#' have count at least \eqn{T_1}, a cell of count \eqn{T_1} reaches any
#' \eqn{\xi \in (0, 1)} with \eqn{\theta^*(\xi, T_1) \in (0, T_1)} solving
#' \eqn{\psi(T_1, \theta) = \xi}, and the risk is largest at \eqn{a = 1}
#' (their Theorem 3.1) when the block has at least
#' \eqn{K_1(\xi, T_1) = \lceil T_1 / (T_1 - \theta^*) \rceil} cells (their
#' Table 1). When \eqn{1 / T_1 \le \xi} the cell needs no perturbation:
#' \eqn{\theta^* = 0} and \eqn{K_1 = 2}, the smallest block.
#'
#' @param xi Risk bounds in (0, 1).
#' @param t1 Smallest cell count of the block (whole numbers \eqn{\ge 1}).
#'   Recycled with `xi`.
#' @returns A data frame with `xi`, `t1`, `theta` and `block_size`.
#' @family design
#' @export
#' @examples
#' ifpr_theta_ghatak(0.1, 2) # theta* = 1.656854, blocks of 6 (Section 4)
#' # Ghatak et al. Table 1
#' tab <- expand.grid(t1 = 1:10, xi = c(0.1, 0.125, 0.15, 0.175, 0.2, 0.25, 0.3))
#' k1 <- ifpr_theta_ghatak(tab$xi, tab$t1)$block_size
#' matrix(k1, 10, dimnames = list(T1 = 1:10, xi = unique(tab$xi)))
ifpr_theta_ghatak <- function(xi, t1) {
  check_xi_vector(xi)
  check_count(t1, min = 1)
  n <- max(length(xi), length(t1))
  xi <- rep_len(as.numeric(xi), n)
  t1 <- rep_len(as.numeric(t1), n)
  theta <- core_call(cpp_design, "theta_psi", xi, t1)
  size <- ifelse(theta > 0, pmax(2, core_call(cpp_design, "ceiling", t1 / (t1 - theta), numeric(0))), 2)
  data.frame(xi = xi, t1 = t1, theta = theta, block_size = block_size_int(size, xi))
}

# Block sizes as integers; a bound so close to its limit that blocks would
# need more cells than any table has (more than the largest integer) is an
# error, not NA.
block_size_int <- function(size, xi, call = rlang::caller_env()) {
  bad <- is.na(size) | size > int_max
  if (any(bad)) {
    abort_sdc(c(
      "No usable block size for {.arg xi} = {show_value(xi[bad])}.",
      "x" = "Blocks would need more than {fmt_int(int_max)} cells: theta is too close to its limit.",
      "i" = "Use a larger {.arg xi}."
    ), "infeasible", call = call, arg = "xi")
  }
  as.integer(size)
}
