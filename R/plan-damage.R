#' Expected damage of a PRAM plan: records, key values, distance, variance
#'
#' What a release costs in data quality, in the four measures a least-damage
#' design ([ifpr()] with `method = "optimal"`) can minimise, computed
#' exactly from the plan (expectations given the original counts \eqn{T}):
#' * `records`: the expected number of records whose cell changes,
#'   \eqn{\sum_j T_j (1 - p_{jj})};
#' * `keys`: the expected number of key values changed, each weighted by
#'   `weights` (a move to a cell that differs in one key costs 1, in three
#'   keys 3): \eqn{\sum_j \sum_{i \ne j} T_j p_{ij} \sum_k w_k 1[x_{ik} \ne x_{jk}]};
#' * `distance`: the same with \eqn{|x_{ik} - x_{jk}|} in place of
#'   \eqn{1[x_{ik} \ne x_{jk}]} for the keys named in `ordered` (age moved
#'   by one year costs 1, by forty years 40; a missing value is one unit
#'   from any value);
#' * `variance`: the total perturbation variance of the cell counts,
#'   \eqn{\sum_i V(S_i | T) = \sum_j T_j (1 - \sum_i p_{ij}^2)} (eq. 3.6; for
#'   an IFPR block eq. 6.3 of Nayak, Zhang and You 2016).
#'
#' For a block plan, IFPR blocks cost \eqn{O(m \log m)} per key and block of
#' \eqn{m} cells (no matrix is formed) and matrix blocks \eqn{O(m^2)}; for a
#' per-variable plan (`sdcMicro::pram()`, mu-ARGUS) each key's expected
#' changes come from its own matrix in each stratum.
#'
#' @param plan A `pram_plan`, a `pram_plan_vars`, a release from [ifpr()] or
#'   [pram_release()], or an `sdcMicroObj` after `sdcMicro::pram()`.
#' @param weights The cost of a change of each key: `NULL` (1 for every key),
#'   or a named vector of nonnegative numbers (keys not named cost 1), or an
#'   unnamed one with one number per key, in the order of the keys.
#' @param ordered Keys whose values have an order (numbers, or ordered
#'   factors by the position of their levels), for the measure `distance`.
#' @returns An object of class `sdc_damage`: a list with `records`, `keys`,
#'   `distance` and `variance` (numbers), `by_key` (a data frame with, for
#'   every key, its `weight`, whether it is `ordered`, the expected records
#'   in which it `changed` and the expected `distance` it moves) and
#'   `n_records`.
#' @references Nayak, T. K., Zhang, C. and You, J. (2016), eq. 3.6 and 6.3.
#' @family evaluation
#' @export
#' @examples
#' set.seed(1)
#' keys <- c("sex", "age", "race", "marital", "puma")
#' rel <- ifpr(pums_md, keys, 0.3)
#' pram_damage(rel, ordered = "age")
#' pram_damage(rel, weights = c(puma = 0.5))$keys
pram_damage <- function(plan, weights = NULL, ordered = NULL) {
  plan <- as_plan(plan)
  ep <- engine_plan(plan)
  keys <- plan$cells$keys
  w <- check_key_weights(weights, keys)
  ordered <- check_ordered_keys(ordered, plan$cells)
  cost <- plan_cost(plan, ep = ep, stay = FALSE)
  d <- plan_key_damage(plan, ep, ordered)
  by_key <- data.frame(key = keys, weight = unname(w), ordered = keys %in% ordered, changed = d$changed,
                       distance = d$distance)
  new_sdc_damage(cost$changed, sum(w * d$changed), sum(w * d$distance), cost$variance, by_key,
                 plan$cells$n_records)
}

new_sdc_damage <- function(records, keys, distance, variance, by_key, n_records) {
  structure(list(records = records, keys = keys, distance = distance, variance = variance, by_key = by_key,
                 n_records = n_records), class = "sdc_damage")
}

# The damage measures a design can minimise, in the order of ifpr()'s
# `damage` choices.
damage_measures <- c("keys", "records", "variance", "distance")

# The weight of every key, named by the keys: 1 unless `weights` says.
check_key_weights <- function(weights, keys, call = rlang::caller_env()) {
  out <- stats::setNames(rep(1, length(keys)), keys)
  if (is.null(weights)) return(out)
  bad <- !is.numeric(weights) || length(weights) == 0 || anyNA(weights) || any(!is.finite(weights)) ||
    any(weights < 0)
  if (!bad && is.null(names(weights)) && length(weights) != length(keys)) bad <- TRUE
  if (bad) {
    abort_sdc(c(
      "{.arg weights} must hold nonnegative numbers, named by keys or one per key.",
      "x" = "It is {show_value(weights)}.",
      "i" = "The keys are {.val {keys}}."
    ), "weights", call = call, arg = "weights")
  }
  if (is.null(names(weights))) return(stats::setNames(as.numeric(weights), keys))
  unknown <- setdiff(names(weights), keys)
  if (length(unknown) > 0 || anyDuplicated(names(weights))) {
    abort_sdc(c(
      "The names of {.arg weights} must be distinct keys.",
      "x" = if (length(unknown)) "Not keys: {.val {unknown}}." else "A key is named twice.",
      "i" = "The keys are {.val {keys}}."
    ), "weights", call = call, arg = "weights")
  }
  out[names(weights)] <- as.numeric(weights)
  out
}

# The keys of `ordered`, checked: keys of the cells whose values have an
# order (numbers or ordered factors).
check_ordered_keys <- function(ordered, cells, call = rlang::caller_env()) {
  if (is.null(ordered)) return(character())
  keys <- cells$keys
  if (!is.character(ordered) || anyNA(ordered) || !all(ordered %in% keys)) {
    abort_sdc(c(
      "{.arg ordered} must name keys.",
      "x" = "It is {show_value(ordered)}.",
      "i" = "The keys are {.val {keys}}."
    ), "ordered", call = call, arg = "ordered")
  }
  unordered <- ordered[!vapply(ordered, function(k) has_order(cells$cells[[k]]), logical(1))]
  if (length(unordered) > 0) {
    abort_sdc(c(
      "A distance needs keys whose values have an order: numbers or ordered factors.",
      "x" = "{.val {unordered}} {if (length(unordered) == 1) 'is' else 'are'} not ordered.",
      "i" = "Leave {if (length(unordered) == 1) 'it' else 'them'} out of {.arg ordered} (a change then costs its weight), or make {if (length(unordered) == 1) 'it an ordered factor' else 'them ordered factors'}."
    ), "ordered", call = call, arg = "ordered")
  }
  keys[keys %in% ordered]
}

has_order <- function(x) (is.numeric(x) && !is.factor(x)) || is.ordered(x)

# The number every cell has on an ordered key (NA where missing).
key_values <- function(x) if (is.factor(x)) as.numeric(as.integer(x)) else as.numeric(x)

# Expected records changed and distance moved on each key: list(changed,
# distance), one number per key of the plan.
plan_key_damage <- function(plan, ep, ordered) UseMethod("plan_key_damage")

#' @export
plan_key_damage.pram_plan <- function(plan, ep, ordered) {
  cells <- plan$cells
  values <- lapply(cells$keys, function(k) if (k %in% ordered) key_values(cells$cells[[k]]))
  core_call(cpp_key_damage, ep, unname(cell_codes(cells)), values)
}

# Per-variable plans: a unit of a cell with category x of key v moves to y
# with probability P_v[y, x] in its stratum, whatever its other keys.
#' @export
plan_key_damage.pram_plan_vars <- function(plan, ep, ordered) {
  cells <- plan$cells
  counts <- cells$cells$count
  out <- list(changed = numeric(length(cells$keys)), distance = numeric(length(cells$keys)))
  for (k in seq_along(cells$keys)) {
    v <- cells$keys[k]
    if (!v %in% plan$vars) next
    code <- plan$codes[[v]]
    lev <- plan$levels[[v]]
    val <- if (v %in% ordered) level_values(lev, cells$cells[[v]])
    for (s in seq_along(plan$matrices)) {
      p <- plan$matrices[[s]][[v]]
      in_s <- plan$stratum_of_cell == s
      move <- 1 - diag(p)
      dist <- if (is.null(val)) move else colSums(p * level_distance(val))
      out$changed[k] <- out$changed[k] + sum(counts[in_s] * move[code[in_s]])
      out$distance[k] <- out$distance[k] + sum(counts[in_s] * dist[code[in_s]])
    }
  }
  out
}

# The numbers of the categories of an ordered key (levels of a per-variable
# plan, NA last when it is a category of its own).
level_values <- function(lev, x) {
  if (is.factor(x)) return(as.numeric(match(lev, levels(x))))
  suppressWarnings(as.numeric(lev))
}

# |x_y - x_x| between categories, 1 where one is missing and the other not.
level_distance <- function(val) {
  d <- abs(outer(val, val, "-"))
  na <- outer(is.na(val), is.na(val), "|")
  d[na] <- 1
  d[outer(is.na(val), is.na(val), "&")] <- 0
  d
}

#' @export
format.sdc_damage <- function(x, ...) {
  n <- x$n_records
  bk <- x$by_key
  c(
    sprintf("Expected damage of %s:", n_of(n, "record")),
    sprintf("  records changed      %12s (%.2f%%)", format(x$records, digits = 6), 100 * x$records / max(n, 1)),
    sprintf("  key values changed   %12s (%.3f per changed record)", format(x$keys, digits = 6),
            x$keys / max(x$records, 1e-300)),
    sprintf("  distance             %12s%s", format(x$distance, digits = 6),
            if (any(bk$ordered)) paste0(" (ordered: ", paste(bk$key[bk$ordered], collapse = ", "), ")") else ""),
    sprintf("  variance (eq. 6.3)   %12s", format(x$variance, digits = 6)),
    sprintf("  %-10s changed %10s, distance %10s, weight %s", bk$key, format(bk$changed, digits = 5),
            format(bk$distance, digits = 5), format(bk$weight))
  )
}

#' @export
print.sdc_damage <- function(x, ...) {
  writeLines(format(x, ...))
  invisible(x)
}

#' @export
as.data.frame.sdc_damage <- function(x, ...) {
  data.frame(records = x$records, keys = x$keys, distance = x$distance, variance = x$variance)
}
