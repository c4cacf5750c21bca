#' Exact correct-match risk of cells under a PRAM plan
#'
#' An intruder knows that the target unit \eqn{B} is in the original data and
#' that its key values put it in cell \eqn{c_j}. In the released data he finds
#' \eqn{S_j = a} records in \eqn{c_j} and picks one at random. `match_risk()`
#' computes, exactly, the probability that he picks \eqn{B},
#' \deqn{R_j(a, t) = P(CM | X_B = c_j, S_j = a, T = t)}
#' (Nayak, Zhang and You 2016, eq. 2.8 and 4.3), together with
#' \eqn{P(S_j = a | T = t)}, the probability \eqn{P(S_j = 0 | T = t)} that the
#' cell is empty in the release (eq. 4.9 for IFPR, in general
#' \eqn{(1 - \alpha_j) \prod_i (1 - \alpha_i)^{T_i^*}}) and the unconditional
#' correct-match probability
#' \eqn{\gamma(j, t) = P(CM | X_B = c_j, T = t) = \sum_a R_j(a, t) P(S_j = a | T = t)}
#' (Remark 2.1).
#'
#' The number of units other than \eqn{B} that land in \eqn{c_j} is a sum of
#' independent binomials, one per source cell of \eqn{c_j}'s block; cells with
#' the same transition probability merge into one binomial, so an IFPR block
#' costs about (distinct counts)\eqn{^2 \times A^2} operations, \eqn{A} the
#' largest `a`, and a matrix block about \eqn{m^2 A} per target. The mass
#' functions are kept in log space with a common factor taken out, so that
#' risks stay accurate where the probabilities underflow a double (counts up
#' to \eqn{10^7}); \eqn{\gamma} is computed by adaptive Gauss-Legendre
#' quadrature of \eqn{\alpha_j \int_0^1 \prod_i (1 - \alpha_i u)^{T_i^*} du} to a
#' relative accuracy of about \eqn{10^{-13}}.
#'
#' @section Per-variable plans and partial-key intruders: On a
#'   [pram_plan_vars()] plan (the PRAM of `sdcMicro::pram()` and mu-ARGUS), a
#'   unit of cell \eqn{c_i} lands in \eqn{c_j} with probability
#'   \eqn{\alpha(j, i) = \prod_v P_v[j_v, i_v]} (0 if the cells differ in a
#'   key that is not perturbed); the risks are computed from these products,
#'   one pass over the cells of the target's stratum per target, never from a
#'   matrix over the cells. The distribution of \eqn{S_j} is accumulated from
#'   nonnegative terms only, so its relative error stays below about
#'   \eqn{10^{-10}} for \eqn{10^5} cells; where underflow would lose an
#'   event of positive probability, the target is recomputed in log space.
#'   Transition probabilities whose products fall below the smallest double
#'   (about \eqn{10^{-308}}) are refused with an error of class
#'   `sdcRisk_error_underflow`, never rounded to impossible events.
#'
#'   With `known`, the intruder matches only on those keys: for a target in
#'   cell \eqn{c_j}, \eqn{D} is the set of cells sharing \eqn{c_j}'s values of
#'   `known` and \eqn{S_D} the number of released records in \eqn{D}; the
#'   risk is \eqn{R_D(a, t) = P(Z_B \in D | S_D = a) / a}, computed exactly
#'   the same way (each unit lands in \eqn{D} with its own probability) for
#'   every plan type. A release safe for an intruder who knows every key need
#'   not be safe for one who knows fewer: two units that PRAM only swaps
#'   between cells the intruder cannot tell apart keep the risk
#'   \eqn{1 / T_D}. [max_match_risk_known()] checks every subset of the keys.
#' @section Sample releases:
#'   Most released files are samples: \eqn{t_j} of the \eqn{F_j} units of
#'   cell \eqn{c_j} of a population. With `target_in_file = "unknown"` the
#'   intruder does not know whether his target is in the file: he draws it
#'   from the \eqn{F_j} population units of its cell. It is one of the
#'   \eqn{t_j} sampled units, which the plan treats alike, with probability
#'   \eqn{t_j / F_j}, and otherwise no match is correct, so his risk is
#'   exactly
#'   \deqn{P(CM | X_B = c_j, S_j = a) = (t_j / F_j) R_j(a, t)}
#'   for every \eqn{a}, whatever the sampling design (Nayak, Zhang and You
#'   2016, Section 8: "the probability of a typical intruder's match being
#'   correct would be much smaller than \eqn{\xi}"). Without
#'   perturbation it is \eqn{1 / F_j} at \eqn{a = t_j}. `population` gives
#'   the \eqn{F_j}: the population counts by the keys (exact), or a
#'   [population_model()] of them given the sample (an estimate, labelled
#'   as such, with its model). The maximum is then that of
#'   \eqn{w_j R_j(a, t)}, \eqn{w_j = t_j / F_j}, over the goal, computed
#'   exactly by the same search with every bound multiplied by its cell's
#'   weight. For an intruder who knows some keys only, \eqn{w_j} is that of
#'   the target's own cell; a target drawn from all population units that
#'   share the known keys has a risk that averages these over the cells of
#'   \eqn{D}, so it is covered too.
#' @param plan A `pram_plan`, a `pram_plan_vars`, or an `sdcMicroObj` after
#'   `sdcMicro::pram()` on key variables (its release is read as in
#'   [pram_certify()]).
#' @param population `NULL`, or the population the file was sampled from:
#'   its counts by the keys (a data frame, an `sdc_cells` or a lazy database
#'   table with a column for every key and `count`; rows with the same keys
#'   add up; every cell of the file must be in it with at least its count),
#'   or a [population_model()] that estimates them.
#' @param target_in_file Does the intruder know that his target is in the
#'   file? `"known"` (the default: the conservative case of the paper) or
#'   `"unknown"` (then `population` is needed; see the section on sample
#'   releases).
#' @param cells Cell ids (rows of `plan$cells$cells`); `NULL` for all cells.
#' @param a Values of \eqn{S_j} (whole numbers \eqn{\ge 1}).
#' @param known `NULL` (the intruder knows every key) or the keys the
#'   intruder matches on.
#' @returns A data frame with one row per cell and value of `a`:
#'   `cell`, `block` (`NA` outside blocks), `count` (\eqn{T_j}), `a`,
#'   `risk` (\eqn{R_j(a, t)}; `NA` where \eqn{P(S_j = a | T) = 0}, the event
#'   being impossible), `prob` (\eqn{P(S_j = a | T)}; may underflow to 0
#'   while `log_prob` stays finite), `log_prob`, `p_empty`
#'   (\eqn{P(S_j = 0 | T)}) and `gamma` (\eqn{\gamma(j, t)}); with a partial
#'   `known`, these are the quantities of \eqn{D} and a column `count_known`
#'   gives \eqn{T_D}, the original records in \eqn{D}. For a
#'   `pram_plan_vars`, `block` is `NA`. A cell outside
#'   every block keeps \eqn{S_j = T_j}: its risk is \eqn{1 / T_j} at
#'   \eqn{a = T_j} and `NA` elsewhere. With `target_in_file = "unknown"`,
#'   `risk` and `gamma` are those of a target who may not be in the file
#'   (times \eqn{t_j / F_j}), and the columns `risk_in_file` (the risk of a
#'   target known to be in the file), `p_in_file` (\eqn{t_j / F_j}, or its
#'   estimate \eqn{t_j E[1 / F_j | t_j]}) and `population` (\eqn{F_j}, or
#'   its estimate) are added; the attribute `sample` describes the
#'   population or model.
#' @seealso [max_match_risk()] for the maximum over a goal.
#' @family risk
#' @export
#' @examples
#' # Three singleton cells in one IFPR block with theta = 0.8: the risk
#' # when all three units land in the target cell is 1/3, above psi(1, 0.8)
#' df <- data.frame(k = c("a", "b", "c"))
#' plan <- pram_plan(cell_frequencies(df, "k"), list(1:3), theta = 0.8)
#' match_risk(plan, cells = 1, a = 1:3)
#' psi(1, 0.8)
match_risk <- function(plan, cells = NULL, a = 1, known = NULL, population = NULL,
                       target_in_file = c("known", "unknown")) {
  plan <- as_plan(plan)
  ep <- engine_plan(plan)
  ncell <- nrow(plan$cells$cells)
  if (is.null(cells)) cells <- seq_len(ncell)
  check_cell_ids(cells, ncell)
  check_count(a, min = 1)
  check_count_int(a)
  known <- check_known(known, plan$cells$keys)
  smp <- sample_of(plan$cells, population, target_in_file)
  ep <- engine_known(plan, ep, known)
  cells <- as.integer(cells)
  a <- as.integer(a)
  # S_j never exceeds the number of records: a larger a is an impossible
  # event (risk NA, probability 0), not a convolution up to a
  impossible <- a > sum(as.numeric(plan$cells$cells$count))
  res <- core_call(cpp_cell_risk, ep, cells, replace(a, impossible, 1L), TRUE)
  res$risk[rep(impossible, times = length(cells))] <- NA_real_
  res$log_prob[rep(impossible, times = length(cells))] <- -Inf
  na <- length(a)
  counts <- plan$cells$cells$count
  risk <- res$risk
  risk[is.nan(risk)] <- NA_real_
  out <- data.frame(
    cell = rep(cells, each = na),
    block = rep(plan_block_of(plan)[cells], each = na),
    count = rep(counts[cells], each = na),
    a = rep(a, times = length(cells)),
    risk = risk,
    prob = exp(res$log_prob),
    log_prob = res$log_prob,
    p_empty = rep(exp(res$log_p_empty), each = na),
    gamma = rep(res$gamma, each = na)
  )
  if (length(known) < length(plan$cells$keys)) {
    out$count_known <- rep(known_counts(plan$cells, known)[cells], each = na)
  }
  sample_rows(out, smp, cells)
}

#' Exact maximum correct-match risk of a plan over a disclosure control goal
#'
#' Computes the largest \eqn{R_j(a, t)} (see [match_risk()]) over the cells
#' and values of \eqn{a} that a goal of Nayak, Zhang and You (2016, Section
#' 4.2) covers, counting only events of positive probability:
#' * `"all_matches"` (Goal 3, eq. 2.8): every cell and every \eqn{a \ge 1};
#' * `"unique_matches"` (Goal 2, eq. 4.14): every cell, \eqn{a = 1};
#' * `"sample_uniques"` (Goal 1, eq. 4.13): cells with \eqn{t_j = 1},
#'   \eqn{a = 1}.
#'
#' Cells outside every block count too: such a cell keeps \eqn{S_j = T_j}, so
#' it has \eqn{R_j(T_j, t) = 1 / T_j} and, under Goals 1 and 2, a risk of 1 if
#' it is a singleton. The search over \eqn{a} for Goal 3 is exact, not cut off:
#' it uses \eqn{R_j(a, t) \le 1 / a} and \eqn{R_j(a, t) \le 1 / t_j} (the units
#' of \eqn{c_j} are exchangeable and at most \eqn{a} of them can stay in it),
#' so a cell or a value of \eqn{a} is skipped only when it cannot exceed the
#' maximum found so far.
#'
#' @section Per-variable plans and partial-key intruders: On a
#'   [pram_plan_vars()] plan (the PRAM of `sdcMicro::pram()` and mu-ARGUS), a
#'   unit of cell \eqn{c_i} lands in \eqn{c_j} with probability
#'   \eqn{\alpha(j, i) = \prod_v P_v[j_v, i_v]} (0 if the cells differ in a
#'   key that is not perturbed); the risks are computed from these products,
#'   one pass over the cells of the target's stratum per target, never from a
#'   matrix over the cells. The distribution of \eqn{S_j} is accumulated from
#'   nonnegative terms only, so its relative error stays below about
#'   \eqn{10^{-10}} for \eqn{10^5} cells; where underflow would lose an
#'   event of positive probability, the target is recomputed in log space.
#'   Transition probabilities whose products fall below the smallest double
#'   (about \eqn{10^{-308}}) are refused with an error of class
#'   `sdcRisk_error_underflow`, never rounded to impossible events.
#'
#'   With `known`, the intruder matches only on those keys: for a target in
#'   cell \eqn{c_j}, \eqn{D} is the set of cells sharing \eqn{c_j}'s values of
#'   `known` and \eqn{S_D} the number of released records in \eqn{D}; the
#'   risk is \eqn{R_D(a, t) = P(Z_B \in D | S_D = a) / a}, computed exactly
#'   the same way (each unit lands in \eqn{D} with its own probability) for
#'   every plan type. A release safe for an intruder who knows every key need
#'   not be safe for one who knows fewer: two units that PRAM only swaps
#'   between cells the intruder cannot tell apart keep the risk
#'   \eqn{1 / T_D}. [max_match_risk_known()] checks every subset of the keys.
#' @param plan A `pram_plan`, a `pram_plan_vars`, or an `sdcMicroObj` after
#'   `sdcMicro::pram()` on key variables (its release is read as in
#'   [pram_certify()]).
#' @section Sample releases:
#'   Most released files are samples: \eqn{t_j} of the \eqn{F_j} units of
#'   cell \eqn{c_j} of a population. With `target_in_file = "unknown"` the
#'   intruder does not know whether his target is in the file: he draws it
#'   from the \eqn{F_j} population units of its cell. It is one of the
#'   \eqn{t_j} sampled units, which the plan treats alike, with probability
#'   \eqn{t_j / F_j}, and otherwise no match is correct, so his risk is
#'   exactly
#'   \deqn{P(CM | X_B = c_j, S_j = a) = (t_j / F_j) R_j(a, t)}
#'   for every \eqn{a}, whatever the sampling design (Nayak, Zhang and You
#'   2016, Section 8: "the probability of a typical intruder's match being
#'   correct would be much smaller than \eqn{\xi}"). Without
#'   perturbation it is \eqn{1 / F_j} at \eqn{a = t_j}. `population` gives
#'   the \eqn{F_j}: the population counts by the keys (exact), or a
#'   [population_model()] of them given the sample (an estimate, labelled
#'   as such, with its model). The maximum is then that of
#'   \eqn{w_j R_j(a, t)}, \eqn{w_j = t_j / F_j}, over the goal, computed
#'   exactly by the same search with every bound multiplied by its cell's
#'   weight. For an intruder who knows some keys only, \eqn{w_j} is that of
#'   the target's own cell; a target drawn from all population units that
#'   share the known keys has a risk that averages these over the cells of
#'   \eqn{D}, so it is covered too.
#' @param goal `"all_matches"`, `"unique_matches"` or `"sample_uniques"`.
#' @param known `NULL` (the intruder knows every key) or the keys the
#'   intruder matches on.
#' @inheritParams match_risk
#' @returns An object of class `sdc_max_risk`: a list with `goal`, `risk` (the
#'   exact maximum; `NA` if the goal covers no possible event), `cell`, `a`,
#'   `count` (\eqn{T} of the arg-max cell), `block`, `keys` (the arg-max
#'   cell's key values), `known` (the keys the intruder matches on),
#'   `count_known` (\eqn{T_D} of the arg-max cell under a partial `known`),
#'   `targets_evaluated` and `target_in_file`; for a target who may not be
#'   in the file also `sample` (the population or model), and at the
#'   arg-max cell `p_in_file`, `population` and `risk_in_file`.
#' @family risk
#' @export
#' @examples
#' df <- data.frame(k = rep(letters[1:8], c(1, 1, 1, 2, 2, 3, 5, 9)))
#' cf <- cell_frequencies(df, "k")
#' plan <- pram_plan(cf, list(1:6), theta = 0.8)
#' max_match_risk(plan, "all_matches")
#' max_match_risk(plan, "sample_uniques")
max_match_risk <- function(plan, goal = c("all_matches", "unique_matches", "sample_uniques"),
                           known = NULL, population = NULL, target_in_file = c("known", "unknown")) {
  plan <- as_plan(plan)
  ep <- engine_plan(plan)
  goal <- check_choice(goal)
  known <- check_known(known, plan$cells$keys)
  smp <- sample_of(plan$cells, population, target_in_file)
  bar <- progress_bar("Exact maximum risk")
  mx <- plan_max_risk(plan, goal, known, ep, progress = progress_part(bar), weight = smp$weight)
  add_sample(mx, smp)
}

# The exact maximum for the keys `known` (checked), from the engine plan of
# `plan`: an sdc_max_risk object. `weight`: NULL, or per-cell weights w_j in
# (0, 1], and the maximum is that of w_j R_j(a, t) (engine_weighted()).
plan_max_risk <- function(plan, goal, known, ep, call = rlang::caller_env(), progress = NULL, weight = NULL) {
  partial <- length(known) < length(plan$cells$keys)
  ep <- engine_weighted(engine_known(plan, ep, known), weight, call = call)
  res <- core_call(cpp_max_risk, ep, goal, progress = progress, call = call)
  value <- if (is.nan(res$value)) NA_real_ else res$value
  cell <- res$cell
  structure(
    list(
      goal = goal,
      risk = value,
      cell = cell,
      a = res$a,
      count = if (is.na(cell)) NA_integer_ else plan$cells$cells$count[cell],
      block = if (is.na(cell)) NA_integer_ else plan_block_of(plan, cell),
      keys = if (is.na(cell)) NULL else plan$cells$cells[cell, plan$cells$keys, drop = FALSE],
      known = known,
      count_known = if (is.na(cell) || !partial) NULL else known_counts(plan$cells, known)[cell],
      targets_evaluated = res$targets_evaluated,
      plan_type = plan_kind(plan)
    ),
    class = "sdc_max_risk"
  )
}

goal_label <- function(goal) {
  switch(goal,
    all_matches = "all matches (Goal 3: every a >= 1, every cell)",
    unique_matches = "unique matches (Goal 2: a = 1, every cell)",
    sample_uniques = "sample uniques (Goal 1: a = 1, cells with T = 1)"
  )
}

#' @export
format.sdc_max_risk <- function(x, ...) {
  where <- if (!is.null(x$count_known)) {
    paste0(", T_D = ", x$count_known, " for an intruder who knows ", paste(x$known, collapse = ", "))
  } else if (is.na(x$block)) {
    if (isTRUE(x$plan_type == "vars")) "" else ", in no block"
  } else {
    paste0(", block ", x$block)
  }
  risk_lines(paste(risk_kind(x$sample), "maximum correct-match risk"), x, x$keys, goal = x$goal, where = where)
}

# The lines of an exact maximum wherever one is printed (max_match_risk(),
# the certificates of ifpr(), pram_release() and pram_certify()), each
# within PRINT_WIDTH columns: `head` with R (and xi), then indented the
# goal, the sample case, the arg-max cell with T and a, its keys on lines
# of their own, the figures of a sample's cell and the records left outside.
# `x`: risk, cell, count, a, sample (and the sample cell's figures).
risk_lines <- function(head, x, keys, xi = NULL, goal = NULL, known = "", where = "", n_excluded = 0) {
  found <- !is.na(x$risk)
  first <- if (!found) {
    paste0(head, ": none; no cell and value of a that the goal covers can occur")
  } else {
    paste0(head, ": R = ", format(x$risk, digits = 6), if (!is.null(xi)) paste0(" <= xi = ", format(xi)))
  }
  wrap_lines(c(
    first,
    if (!is.null(goal)) paste0("  goal: ", goal_label(goal), known),
    if (!is.null(x$sample)) paste0("  ", sample_line(x$sample)),
    if (found) c(sprintf("  at cell %d (T = %d%s), a = %d:", x$cell, x$count, where, x$a), key_lines(keys)),
    sample_cell_line(x),
    outside_certificate_text(n_excluded)
  ))
}

#' @export
print.sdc_max_risk <- function(x, ...) {
  writeLines(format(x, ...))
  invisible(x)
}

# T_D: the number of original records sharing each cell's values of `known`.
known_counts <- function(cells, known) {
  d <- known_sets(cells, known)
  as.vector(rowsum(cells$cells$count, d, reorder = TRUE))[d]
}

# The set D (an integer id) of every cell: cells with the same values of `known`.
known_sets <- function(cells, known) {
  codes <- cell_codes(cells)[known]
  id <- do.call(paste, c(unname(codes), sep = "\r"))
  match(id, unique(id))
}

#' Exact maximum risk for intruders who know any subset of the keys
#'
#' Certifies a release against every intruder at once: for each nonempty
#' subset of the keys (or the subsets given), the exact maximum of
#' \eqn{R_D(a, t)} over the goal (see [max_match_risk()] and its `known`
#' argument). A release certified for an intruder who knows every key is not
#' automatically safe for one who knows fewer: units that PRAM moves only
#' between cells the intruder cannot tell apart keep their original risk
#' \eqn{1 / T_D}.
#'
#' @inheritParams max_match_risk
#' @param subsets `NULL` for every nonempty subset of the keys, or a list of
#'   character vectors of keys.
#' @inheritParams match_risk
#' @returns An object of class `sdc_max_risk_known`: a data frame with one row
#'   per subset, the worst first: `known` (the keys, comma-separated),
#'   `n_known`, `risk`, `cell`, `a` and `count_known` (\eqn{T_D} of the
#'   arg-max cell); for a target who may not be in the file, `risk` is that
#'   of such a target (see [max_match_risk()]) and `p_in_file` gives the
#'   arg-max cell's \eqn{t_j / F_j}. Its attribute `goal` holds the goal and
#'   `sample` the population or model.
#' @family risk
#' @export
#' @examples
#' # PRAM that surely swaps two singletons that differ only in y: safe for an
#' # intruder who knows x and y, not for one who knows only x
#' df <- data.frame(x = c("a", "a", "b", "b", "b"), y = c("u", "v", "u", "v", "v"))
#' cf <- cell_frequencies(df, c("x", "y"))
#' plan <- pram_plan_vars(cf, list(y = matrix(c(0, 1, 1, 0), 2)))
#' max_match_risk_known(plan)
max_match_risk_known <- function(plan, goal = c("all_matches", "unique_matches", "sample_uniques"),
                                 subsets = NULL, population = NULL, target_in_file = c("known", "unknown")) {
  plan <- as_plan(plan)
  ep <- engine_plan(plan)
  goal <- check_choice(goal)
  keys <- plan$cells$keys
  if (is.null(subsets)) {
    subsets <- unlist(lapply(seq_along(keys), function(k) {
      utils::combn(keys, k, simplify = FALSE)
    }), recursive = FALSE)
  }
  if (!is.list(subsets) || length(subsets) == 0) {
    abort_sdc(c(
      "{.arg subsets} must be {.code NULL} or a list of character vectors of keys.",
      "x" = "It is {.obj_type_friendly {subsets}}."
    ), "known", arg = "subsets")
  }
  call <- rlang::current_env()
  subsets <- lapply(subsets, check_known, keys = keys, call = call, arg = "subsets")
  smp <- sample_of(plan$cells, population, target_in_file, call = call)
  plan_max_risk_known(plan, goal, subsets, ep, smp, call = call)
}

# The exact maximum for every set of known keys in `subsets` (checked), with
# the sample case `smp` (sample_of()): an sdc_max_risk_known object.
# `weight`: the core's per-cell weights (those of `smp`, or per-cell bounds').
plan_max_risk_known <- function(plan, goal, subsets, ep, smp = NULL, call = rlang::caller_env(),
                                weight = smp$weight) {
  bar <- progress_bar("Exact maximum risk for each set of known keys")
  n_sets <- length(subsets)
  rows <- lapply(seq_len(n_sets), function(i) {
    k <- subsets[[i]]
    mx <- plan_max_risk(plan, goal, k, ep, call = call, weight = weight,
                        progress = progress_part(bar, (i - 1) / n_sets, i / n_sets, paste(k, collapse = ", ")))
    row <- data.frame(
      known = paste(k, collapse = ", "),
      n_known = length(k),
      risk = mx$risk,
      cell = mx$cell,
      a = mx$a,
      count_known = if (is.na(mx$cell)) NA_integer_ else known_counts(plan$cells, k)[mx$cell]
    )
    if (!is.null(smp)) row$p_in_file <- if (is.na(mx$cell)) NA_real_ else smp$weight[mx$cell]
    row
  })
  out <- do.call(rbind, rows)
  out <- out[order(-out$risk, out$n_known, na.last = TRUE), , drop = FALSE]
  rownames(out) <- NULL
  structure(out, goal = goal, sample = sample_summary(smp), class = c("sdc_max_risk_known", "data.frame"))
}

#' @export
format.sdc_max_risk_known <- function(x, ...) {
  worst <- x[1, ]
  smp <- attr(x, "sample")
  wrap_lines(c(
    paste0(risk_kind(smp), " maximum correct-match risk for ", nrow(x), " sets of known keys"),
    paste0("  goal: ", goal_label(attr(x, "goal"))),
    if (!is.null(smp)) paste0("  ", sample_line(smp)),
    if (is.na(worst$risk)) {
      "no cell and value of a that the goal covers can occur"
    } else {
      sprintf("worst: R = %s when the intruder knows %s (cell %d, a = %d, T_D = %d)",
              format(worst$risk, digits = 6), worst$known, worst$cell, worst$a, worst$count_known)
    }
  ))
}

#' @export
print.sdc_max_risk_known <- function(x, ...) {
  writeLines(format(x, ...))
  df <- as.data.frame(unclass(x), stringsAsFactors = FALSE)
  attr(df, "goal") <- NULL
  attr(df, "sample") <- NULL
  # risks from 1 down to 1e-5 in one column: fixed notation, not 1.00000e+00
  for (v in intersect(c("risk", "p_in_file"), names(df))) df[[v]] <- fmt_prob(df[[v]])
  print(df, row.names = FALSE)
  invisible(x)
}
