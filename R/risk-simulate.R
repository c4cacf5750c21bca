#' Simulate repeated releases under a PRAM plan
#'
#' `simulate_release()` perturbs the data `reps` times with `plan` and sets
#' the Monte Carlo means beside their exact values, the check of Ghatak et
#' al. (2018, Section 4): per cell, the mean of the released share
#' \eqn{S_i / n} and the mean squared error of \eqn{S_i / n} against
#' \eqn{T_i / n}, and, for a target unit, the mean correct-match probability.
#'
#' Exact values: \eqn{E(S | T) = P T} (\eqn{= T} for an unbiased plan, eq.
#' 3.3) and the mean squared error
#' \eqn{(v_{ii} + (E S_i - T_i)^2) / n^2}, with \eqn{v_{ii}} from eq. 6.1 of
#' Nayak, Zhang and You (2016) for an IFPR block,
#' \deqn{v_{ii} = \theta (2 - \theta / T_i) - \frac{\theta^2}{(m - 1)^2} \sum_{j \ne i} 1 / T_j,}
#' and the diagonal of eq. 3.6, \eqn{v_{ii} = \sum_k T_k p_{ik} (1 - p_{ik})},
#' for a matrix block; 0 for a cell in no block. The intruder's target unit
#' \eqn{B} is one fixed unit of cell `target`; in each replication he picks
#' one of the \eqn{S_j} released records of that cell at random, so his
#' match is correct with probability \eqn{1 / S_j} if \eqn{B} stayed in
#' \eqn{c_j} and 0 otherwise. Its mean over the replications estimates
#' \eqn{\gamma(j, t)} of [match_risk()] (Remark 2.1).
#'
#' The simulation works on cells and counts, never on records: given
#' \eqn{T}, the \eqn{T_i} units of cell \eqn{c_i} spread over the cells of
#' its block by a multinomial with the probabilities of column \eqn{i} of the
#' block's matrix. In an IFPR block the number leaving \eqn{c_i} is
#' \eqn{\mathrm{Binomial}(T_i, \theta / T_i)}, of mean \eqn{\theta}, and each
#' leaver goes to one of the other \eqn{m - 1} cells with equal
#' probabilities; a matrix column is drawn by sequential conditional
#' binomials. The target unit is drawn on its own (it stays with probability
#' \eqn{p_{jj}}), then the other \eqn{T_j - 1} units of its cell. Each
#' binomial takes one uniform from R's generator and inverts its distribution
#' function, summed from 0 when its mean is below 30 (so an IFPR cell costs
#' \eqn{O(\theta)}) and otherwise outward from the mode; blocks and cells are
#' drawn in plan order, so `set.seed()` reproduces the result. A
#' replication costs time linear in the number of cells in blocks (plus the
#' units that move), independent of the number of records.
#'
#' @param data The data frame the plan's cells were computed from, or an
#'   `sdcMicroObj` after `sdcMicro::pram()` (its release is read as in
#'   [pram_certify()]; then give neither `keys` nor `plan`).
#' @param keys The plan's key variables, in the same order.
#' @param plan A `pram_plan` or a `pram_plan_vars` (for a per-variable plan
#'   the units are drawn one by one, linear in the records per replication;
#'   the cells whose units can move are reported as block 1).
#' @param ... Must be empty.
#' @param reps Number of replications, a whole number \eqn{\ge 1}.
#' @param target Cell id of the intruder's target unit, or `NULL` for none.
#' @returns An object of class `sdc_simulation`, a list with
#'   * `cells`: a data frame with one row per cell: `cell`, `count`
#'     (\eqn{T_i}), `block` (`NA` outside blocks), `mean_share` (mean of
#'     \eqn{S_i / n}), `se_mean_share` (its Monte Carlo standard error),
#'     `exact_share` (\eqn{E(S_i) / n}), `mse` (mean of
#'     \eqn{(S_i - T_i)^2 / n^2}), `se_mse`, `exact_mse`, `var_count` (the
#'     empirical variance of \eqn{S_i}), `se_var_count` (its large-sample
#'     standard error) and `exact_var` (\eqn{v_{ii}});
#'   * `target`: `NULL`, or a list with `cell`, `count`, `block`, `mean_cm`
#'     (mean correct-match probability), `se_cm` and `exact_gamma`;
#'   * `reps`, `n` (records in the cross-classification) and `moved` (mean
#'     number of units changing cell per release).
#'
#'   Standard errors are `NA` when `reps` is 1.
#' @references Nayak, T. K., Zhang, C. and You, J. (2016), eq. 3.3, 3.6 and
#'   6.1; Ghatak, D. et al. (2018), Section 4 (Simulation Results).
#' @seealso [match_risk()] for \eqn{\gamma(j, t)}, [pram_apply()] for one
#'   release of the records.
#' @family evaluation
#' @export
#' @examples
#' # Ghatak et al. (2018), Section 4: n = 2000, eight categories, the six
#' # rarest in one IFPR block with theta* for xi = 0.1 and T_1 = 2
#' df <- data.frame(k = rep(1:8, c(2, 205, 431, 106, 230, 221, 611, 194)))
#' cf <- cell_frequencies(df, "k")
#' plan <- pram_plan(cf, list(c(1, 2, 4, 5, 6, 8)),
#'   theta = ifpr_theta_ghatak(0.1, 2)$theta
#' )
#' set.seed(1)
#' sim <- simulate_release(df, "k", plan, reps = 1000, target = 1)
#' sim
#' summary(sim)
#' plot(sim)
simulate_release <- function(data, ...) UseMethod("simulate_release")

#' @rdname simulate_release
#' @export
simulate_release.default <- function(data, keys, plan, reps, target = NULL, ...) {
  rlang::check_dots_empty()
  check_data_frame(data)
  ep <- engine_plan(plan)
  check_plan_keys(keys, plan)
  check_plan_data(data, plan)
  simulate_plan(plan, reps, target, ep)
}

#' @rdname simulate_release
#' @export
simulate_release.sdcMicroObj <- function(data, reps, target = NULL, ...) {
  rlang::check_dots_empty()
  simulate_plan(as_plan(data, arg = "data"), reps, target)
}

# The replications and their exact counterparts, for any kind of plan. The
# cells whose units can move play the role of the cells in blocks (for a
# per-variable plan, they form one "block").
simulate_plan <- function(plan, reps, target, ep = engine_plan(plan, call = call), call = rlang::caller_env()) {
  check_reps(reps, call = call)
  ncell <- nrow(plan$cells$cells)
  if (!is.null(target)) check_target(target, ncell, call = call)
  bar <- progress_bar(paste("Simulating", fmt_int(reps), "releases"))
  sums <- core_call(cpp_simulate, ep, as.integer(reps), if (is.null(target)) NA_integer_ else as.integer(target),
                    progress = progress_part(bar),
                    call = call)
  exact <- core_call(cpp_moments, ep, call = call)
  counts <- plan$cells$cells$count
  n <- sum(counts)
  block <- plan_block_of(plan)
  block[is.na(block) & plan_movable(plan, ep)] <- 1L
  new_sdc_simulation(
    cells = simulation_table(sums, exact, counts, block, reps, n),
    target = if (is.null(target)) NULL else simulation_target(plan, as.integer(target), block, sums, reps),
    reps = as.integer(reps),
    n = n,
    moved = sums$moved / reps
  )
}

new_sdc_simulation <- function(cells, target, reps, n, moved) {
  structure(
    list(cells = cells, target = target, reps = reps, n = n, moved = moved),
    class = "sdc_simulation"
  )
}

simulation_table <- function(sums, exact, counts, block, reps, n) {
  r <- reps
  mu <- sums$s1 / r
  # sample variances about the mean; NA with a single replication
  var_d <- if (r > 1) pmax(sums$s2 - sums$s1^2 / r, 0) / (r - 1) else NA_real_
  var_d2 <- if (r > 1) pmax(sums$s4 - sums$s2^2 / r, 0) / (r - 1) else NA_real_
  m2 <- pmax(sums$s2 / r - mu^2, 0)
  m4 <- sums$s4 / r - 4 * mu * sums$s3 / r + 6 * mu^2 * sums$s2 / r - 3 * mu^4
  data.frame(
    cell = seq_along(counts),
    count = counts,
    block = block,
    mean_share = (counts + mu) / n,
    se_mean_share = sqrt(var_d / r) / n,
    exact_share = exact$mean / n,
    mse = sums$s2 / r / n^2,
    se_mse = sqrt(var_d2 / r) / n^2,
    exact_mse = (exact$var + (exact$mean - counts)^2) / n^2,
    var_count = var_d,
    se_var_count = if (r > 1) sqrt(pmax(m4 - m2^2, 0) / r) else NA_real_,
    exact_var = exact$var
  )
}

simulation_target <- function(plan, target, block, sums, reps) {
  mean_cm <- sums$cm_sum / reps
  var_cm <- if (reps > 1) max(sums$cm_sq - sums$cm_sum^2 / reps, 0) / (reps - 1) else NA_real_
  list(
    cell = target,
    count = plan$cells$cells$count[target],
    block = block[target],
    mean_cm = mean_cm,
    se_cm = sqrt(var_cm / reps),
    exact_gamma = match_risk(plan, target)$gamma[1]
  )
}

# |simulated - exact| / se, NA where the se is 0 or NA (cells in no block)
z_score <- function(sim, exact, se) ifelse(is.na(se) | se == 0, NA_real_, (sim - exact) / se)

#' @export
format.sdc_simulation <- function(x, ..., n = 10) {
  tab <- x$cells[!is.na(x$cells$block), , drop = FALSE]
  head <- paste0(
    "<sdc_simulation>: ", n_of(x$reps, "release"), " of ", n_of(x$n, "record"), "; ",
    fmt_int(nrow(tab)), " cells in blocks, ", format(x$moved, digits = 4),
    " units change cell per release"
  )
  out <- head
  if (nrow(tab) > 0) {
    shown <- utils::head(tab, n)
    body <- data.frame(
      cell = shown$cell,
      T = shown$count,
      share = sprintf("%.4g (%.2g)", shown$mean_share, shown$se_mean_share),
      exact_share = sprintf("%.4g", shown$exact_share),
      mse = sprintf("%.4g (%.2g)", shown$mse, shown$se_mse),
      exact_mse = sprintf("%.4g", shown$exact_mse),
      z_mse = sprintf("%.2f", z_score(shown$mse, shown$exact_mse, shown$se_mse))
    )
    out <- c(out, "Per cell: simulated (Monte Carlo se) and exact", utils::capture.output(print(body, row.names = FALSE)))
    if (nrow(tab) > n) out <- c(out, paste0("... and ", fmt_int(nrow(tab) - n), " more cells in blocks"))
  }
  c(out, format_simulation_target(x$target))
}

format_simulation_target <- function(tg) {
  if (is.null(tg)) return(character(0))
  sprintf(
    "Target unit in cell %d (T = %d%s): mean correct-match probability %.6g (se %.2g), exact gamma %.6g",
    tg$cell, tg$count, if (is.na(tg$block)) ", in no block" else paste0(", block ", tg$block),
    tg$mean_cm, tg$se_cm, tg$exact_gamma
  )
}

#' @export
print.sdc_simulation <- function(x, ...) {
  writeLines(format(x, ...))
  invisible(x)
}

#' @export
as.data.frame.sdc_simulation <- function(x, ...) x$cells

#' @export
summary.sdc_simulation <- function(object, ...) {
  tab <- object$cells[!is.na(object$cells$block), , drop = FALSE]
  z_share <- z_score(tab$mean_share, tab$exact_share, tab$se_mean_share)
  z_mse <- z_score(tab$mse, tab$exact_mse, tab$se_mse)
  tg <- object$target
  structure(
    list(
      reps = object$reps,
      n = object$n,
      cells_in_blocks = nrow(tab),
      moved = object$moved,
      max_abs_z_share = if (all(is.na(z_share))) NA_real_ else max(abs(z_share), na.rm = TRUE),
      max_abs_z_mse = if (all(is.na(z_mse))) NA_real_ else max(abs(z_mse), na.rm = TRUE),
      total_mse = sum(object$cells$mse),
      total_exact_mse = sum(object$cells$exact_mse),
      target = tg,
      z_cm = if (is.null(tg)) NA_real_ else z_score(tg$mean_cm, tg$exact_gamma, tg$se_cm)
    ),
    class = "summary.sdc_simulation"
  )
}

#' @export
format.summary.sdc_simulation <- function(x, ...) {
  c(
    paste0("Simulation of ", n_of(x$reps, "release"), " of ", n_of(x$n, "record"),
      " (", fmt_int(x$cells_in_blocks), " cells in blocks; ",
      format(x$moved, digits = 4), " units change cell per release)"),
    sprintf("Largest |simulated - exact| / se over cells in blocks: share %.2f, MSE %.2f",
      x$max_abs_z_share, x$max_abs_z_mse),
    sprintf("Sum of the MSE over cells: simulated %.4g, exact %.4g", x$total_mse, x$total_exact_mse),
    if (!is.null(x$target)) {
      c(format_simulation_target(x$target),
        sprintf("  |simulated - exact| / se = %.2f", abs(x$z_cm)))
    }
  )
}

#' @export
print.summary.sdc_simulation <- function(x, ...) {
  writeLines(format(x, ...))
  invisible(x)
}

#' @export
plot.sdc_simulation <- function(x, ...) {
  tab <- x$cells[!is.na(x$cells$block), , drop = FALSE]
  panels <- (nrow(tab) > 0) + !is.null(x$target)
  if (panels == 0) return(invisible(x))
  old <- graphics::par(mfrow = c(1, panels))
  on.exit(graphics::par(old))
  if (nrow(tab) > 0) {
    se <- ifelse(is.na(tab$se_mse), 0, tab$se_mse)
    lo <- tab$mse - 2 * se
    hi <- tab$mse + 2 * se
    lim <- range(c(tab$exact_mse, lo, hi))
    graphics::plot(tab$exact_mse, tab$mse, xlim = lim, ylim = lim, pch = 19,
      xlab = "exact MSE of S/n (eq. 6.1 / 3.6)", ylab = "simulated MSE of S/n",
      main = paste0("Per cell, ", fmt_int(x$reps), " releases (+/- 2 se)"), ...)
    graphics::segments(tab$exact_mse, lo, tab$exact_mse, hi)
    graphics::abline(0, 1, lty = 2)
  }
  tg <- x$target
  if (!is.null(tg)) {
    se <- if (is.na(tg$se_cm)) 0 else tg$se_cm
    lim <- range(c(tg$exact_gamma, tg$mean_cm - 2 * se, tg$mean_cm + 2 * se, 0))
    graphics::plot(1, tg$mean_cm, xlim = c(0.5, 1.5), ylim = lim, pch = 19, xaxt = "n",
      xlab = paste0("target in cell ", tg$cell, " (T = ", tg$count, ")"),
      ylab = "correct-match probability", main = "Target unit (+/- 2 se)")
    graphics::segments(1, tg$mean_cm - 2 * se, 1, tg$mean_cm + 2 * se)
    graphics::abline(h = tg$exact_gamma, lty = 2)
    graphics::legend("bottomright", c("simulated mean", "exact gamma"), pch = c(19, NA),
      lty = c(NA, 2), bty = "n")
  }
  invisible(x)
}
