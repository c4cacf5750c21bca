# The moment estimator of a per-variable plan (estimate_table()).
#
# Within a stratum s the transition matrix of the cells is the Kronecker
# product of the keys' matrices P_v (the keys that are not perturbed stay),
# so its inverse is the Kronecker product of the Q_v = P_v^-1 and, for a row
# of the table with key values d, h_d(z) = prod over the perturbed keys v of
# `by` of Q_v[d_v, z_v] times the indicators of the other keys of `by` (a
# key outside `by` contributes sum_l Q_v[l, z_v] = 1, as the columns of P_v
# sum to 1). The sums over z of M h_d and M h_d^2 are computed one key at a
# time: the aggregated rows are spread over the categories d_v of key v with
# the factor Q_v[d_v, z_v] (or its square) and summed again, so no table
# larger than the rows times the categories of one key is formed.

# The inverse of every perturbed key's matrix of `by` in every stratum: for
# key v, an array [d, z, s].
vars_inverses <- function(pub, vars, call) {
  p <- pub$plan
  out <- lapply(vars, function(v) {
    mats <- lapply(seq_along(p$matrices), function(s) {
      m <- p$matrices[[s]][[v]]
      if (rcond(m) < estimate_singular_tol) abort_singular_var(v, s, pub, call)
      solve(m)
    })
    array(unlist(mats), c(dim(mats[[1]]), length(mats)))
  })
  names(out) <- vars
  out
}

abort_singular_var <- function(v, s, pub, call) {
  strata <- pub$plan$strata
  where <- if (length(strata)) paste0(" in stratum ", s) else ""
  msg <- c(
    "The transition matrix of key {.var {v}}{where} of the publication is singular.",
    x = "The released records cannot tell some of its categories apart: no unbiased estimator exists.",
    i = "Estimate without {.var {v}} in {.arg by}, or ask the agency for another plan."
  )
  abort_sdc(msg, "singular_block", call = call, arg = "publication")
}

# The stratum of every aggregated row in a cell (NA outside the cells),
# checked against the publication's strata and their numbers of records.
vars_strata <- function(pub, agg, call) {
  p <- pub$plan
  if (length(p$strata) == 0) {
    s <- ifelse(agg$in_cell, 1L, NA_integer_)
  } else {
    sk <- match(p$strata, names(agg$codes))
    ids <- shared_ids(list(agg$codes[sk], p$strata_cells$codes), agg$nlevels[sk])
    s <- match(ids$ids[[1]], ids$ids[[2]])
    s[!agg$in_cell] <- NA_integer_
    if (any(agg$in_cell & is.na(s))) {
      abort_mismatch("data", "some records are in strata the publication does not have",
                     "{fmt_int(sum(agg$count[agg$in_cell & is.na(s)]))} records.",
                     "Give the released file as it was published.", call)
    }
  }
  check_released_parts(sum_by(as.numeric(agg$count), s, length(p$strata_cells$records)), p$strata_cells$records,
                       "stratum", "data", call)
  s
}

#' @export
estimate_sums.sdc_publication_vars <- function(pub, rec, by_keys, call = rlang::caller_env(), ...) {
  agg <- aggregate_released(rec$codes, pub, rec$g, rec$n_groups, rec$w, rec$y)
  s <- vars_strata(pub, agg, call)
  vars <- by_keys[by_keys %in% pub$plan$vars]
  kk <- match(by_keys, names(agg$codes))
  nl <- agg$nlevels[kk]
  direct <- is.na(s) | length(vars) == 0
  inverses <- if (!all(direct)) vars_inverses(pub, vars, call)
  moved <- if (!all(direct)) vars_spread(agg, s, !direct, by_keys, vars, inverses)
  dk <- shared_ids(list(lapply(agg$codes[kk], `[`, direct), moved$codes), nl, n = c(sum(direct), length(moved$g)))
  pieces <- list(
    list(d = dk$ids[[1]], g = agg$g[direct], lin = agg$lin[direct, , drop = FALSE],
         quad = 0 * agg$quad[direct, , drop = FALSE]),
    if (!is.null(moved)) list(d = dk$ids[[2]], g = moved$g, lin = moved$lin, quad = moved$sq - moved$lin_q)
  )
  out <- combine_sums(pieces, dk$n, agg$n_groups)
  out$d_codes <- dk$codes
  out$perturbed <- !is.null(moved)
  out$ml_systems <- function(d, g) vars_ml_systems(pub, agg, s, by_keys, vars, dk$codes, d, g)
  out$plug_var <- function(col, lin_col) {
    if (is.null(moved)) return(list(outside = numeric(length(out$d)), own = numeric(length(out$d))))
    v <- vars_plug_var(pub, vars, inverses, moved, col, dk$ids[[2]], out)
    # one unit of the row's value: the mean variance of one record times
    # sum c^2 / sum c over the records of the row's group
    c <- record_c(rec)
    s <- if (rec$n_groups == 1L) cbind(sum(c), sum(c^2)) else sum_by(cbind(c, c^2), rec$g, rec$n_groups)
    list(outside = v$outside, own = v$own * ifelse(s[, 1] > 0, s[, 2] / s[, 1], 0)[out$g])
  }
  out
}

# The systems of the maximum likelihood estimator for the rows (d, g): for
# every stratum, the records in cells with the unperturbed keys of `by` of
# d and group g, over the combinations of the perturbed keys of `by` (the
# first varying fastest), with the Kronecker product of their matrices.
vars_ml_systems <- function(pub, agg, s, by_keys, vars, d_codes, d, g) {
  if (length(vars) == 0) return(list())
  pv <- match(vars, by_keys)
  pu <- setdiff(seq_along(by_keys), pv)
  k <- vapply(pub$keys[match(vars, vapply(pub$keys, `[[`, "", "name"))], function(x) length(x$categories), 1L)
  radix <- cumprod(c(1, k))[seq_along(k)]
  state_of <- function(codes) 1 + Reduce(`+`, Map(function(x, r) (x - 1) * r, codes, radix), 0)
  row_u <- do.call(paste, c(lapply(pu, function(j) d_codes[[j]][d]), list(g)))
  row_state <- state_of(lapply(pv, function(j) d_codes[[j]][d]))
  inside <- which(!is.na(s))
  agg_u <- do.call(paste, c(lapply(by_keys[pu], function(v) agg$codes[[v]][inside]), list(agg$g[inside])))
  agg_state <- state_of(lapply(vars, function(v) agg$codes[[v]][inside]))
  mom <- cbind(agg$lin, agg$quad)[inside, , drop = FALSE]
  keys <- unique(data.frame(u = agg_u, s = s[inside])[agg_u %in% row_u, ])
  lapply(seq_len(nrow(keys)), function(i) {
    at <- which(agg_u == keys$u[i] & s[inside] == keys$s[i])
    rows <- which(row_u == keys$u[i])
    m <- pub$plan$matrices[[keys$s[i]]]
    p <- Reduce(kronecker, rev(lapply(vars, function(v) m[[v]])))
    ml_system_parts(p, agg_state[at], mom[at, , drop = FALSE], rows,
                    lapply(rows, function(r) as.numeric(seq_len(prod(k)) == row_state[r])))
  })
}

# The rows `rows` of agg, by stratum, keys of `by` and group, spread key by
# key over the original categories of the perturbed keys `vars`: the sums
# lin (of agg$lin times h_d), lin_q and sq (of agg$quad times h_d and h_d^2)
# of every (stratum, d, group).
vars_spread <- function(agg, s, rows, by_keys, vars, inverses) {
  codes <- lapply(agg$codes[by_keys], `[`, rows)
  nl <- agg$nlevels[match(by_keys, names(agg$codes))]
  state <- list(s = s[rows], codes = codes, g = agg$g[rows], lin = agg$lin[rows, , drop = FALSE],
                lin_q = agg$quad[rows, , drop = FALSE], sq = agg$quad[rows, , drop = FALSE])
  state <- vars_collapse(state, nl, agg$n_groups)
  for (v in vars) state <- vars_spread_key(state, v, inverses[[v]], nl, agg$n_groups)
  state
}

# One key v of vars_spread(): every row of the state spread over the
# categories d of v with the factor q[d, z, s] (z its category of v, s its
# stratum), sq with its square, and summed again.
vars_spread_key <- function(state, v, q, nl, n_groups) {
  k <- dim(q)[1]
  n <- length(state$g)
  r <- rep(seq_len(n), each = k)
  d <- rep.int(seq_len(k), n)
  f <- q[cbind(d, state$codes[[v]][r], state$s[r])]
  state$codes <- lapply(state$codes, `[`, r)
  state$codes[[v]] <- d
  state$s <- state$s[r]
  state$g <- state$g[r]
  state$lin <- state$lin[r, , drop = FALSE] * f
  state$lin_q <- state$lin_q[r, , drop = FALSE] * f
  state$sq <- state$sq[r, , drop = FALSE] * f^2
  vars_collapse(state, nl, n_groups)
}

# Sum the rows of a spread state that share stratum, codes and group.
vars_collapse <- function(state, nl, n_groups) {
  cols <- c(list(state$s), unname(state$codes), list(state$g))
  ids <- shared_ids(list(cols), c(max(state$s), nl, n_groups))
  id <- ids$ids[[1]]
  codes <- ids$codes[1 + seq_along(state$codes)]
  names(codes) <- names(state$codes)
  list(s = ids$codes[[1]], codes = codes, g = ids$codes[[length(ids$codes)]],
       lin = sum_by(state$lin, id, ids$n), lin_q = sum_by(state$lin_q, id, ids$n), sq = sum_by(state$sq, id, ids$n))
}

# The two parts of every row's variance function (plug_variance()):
# `outside`, the variance that the records outside the row's cells add to
# its estimate given the original file, with the original sums of c^2 (the
# column `col` of the moments) of every (stratum, d', group) taken at their
# moment estimates, cut at 0: within a stratum, the sum over d' != d of
# C2(d') prod over the perturbed keys v of `by` of G_v[d_v, d'_v], with
# G_v[d, x] = E[Q_v[d, Z]^2 | x] = ((Q_v * Q_v) P_v)[d, x], spread key by
# key as in vars_spread(); and `own`, the mean variance of one record of
# the row, prod_v G_v[d_v, d_v] - 1 within a stratum (the same for every
# cell of the row, as the keys are perturbed independently and a key
# outside `by` adds a factor 1), the strata in which the row has cells
# weighed by their numbers of records.
vars_plug_var <- function(pub, vars, inverses, moved, col, d_moved, out) {
  p <- pub$plan
  ns <- length(p$matrices)
  G <- lapply(vars, function(v) {
    arr <- inverses[[v]]
    for (s in seq_len(ns)) arr[, , s] <- arr[, , s]^2 %*% p$matrices[[s]][[v]]
    arr
  })
  names(G) <- vars
  c2 <- matrix(pmax(moved$lin_q[, col], 0))
  nl <- vapply(moved$codes, max, 1L)
  ng <- max(moved$g)
  state <- list(s = moved$s, codes = moved$codes, g = moved$g, lin = c2, lin_q = c2, sq = c2)
  for (v in vars) state <- vars_spread_key(state, v, G[[v]], nl, ng)
  # each spread row is a (stratum, d, group) of the moved rows (which span
  # every category of the perturbed keys): its sum less the row's own C2,
  # summed over the strata by the table's rows (d, g)
  ids <- shared_ids(list(c(list(moved$s), unname(moved$codes), list(moved$g)),
                         c(list(state$s), unname(state$codes), list(state$g))), c(ns, nl, ng))
  m <- match(ids$ids[[2]], ids$ids[[1]])
  keep <- !is.na(m)
  m <- m[keep]
  # the row's own cells: C2(d) prod_v G_v[d_v, d_v]
  own <- Reduce(`*`, lapply(vars, function(v) G[[v]][cbind(moved$codes[[v]][m], moved$codes[[v]][m], moved$s[m])]), 1)
  v <- state$lin[keep, 1] - c2[m, 1] * own
  rows <- shared_ids(list(list(d_moved[m], moved$g[m]), list(out$d, out$g)), c(max(d_moved, out$d), ng))
  tot <- sum_by(v, rows$ids[[1]], rows$n)
  outside <- tot[rows$ids[[2]]]
  outside[!rows$ids[[2]] %in% rows$ids[[1]]] <- 0
  # one record of the row: prod_v G_v[d_v, d_v] - 1 of each (stratum, d)
  pairs <- shared_ids(list(list(moved$s[m], d_moved[m])), c(ns, max(d_moved)))
  first <- match(seq_len(pairs$n), pairs$ids[[1]])
  n_s <- as.numeric(p$strata_cells$records)[pairs$codes[[1]]]
  n_d <- max(d_moved, out$d)
  unit <- sum_by(n_s * pmax(own[first] - 1, 0), pairs$codes[[2]], n_d) / sum_by(n_s, pairs$codes[[2]], n_d)
  unit[!is.finite(unit)] <- 0
  list(outside = outside, own = unit[out$d])
}
