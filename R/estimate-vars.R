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
estimate_sums.sdc_publication_vars <- function(pub, rec, by_keys, call = rlang::caller_env()) {
  agg <- aggregate_released(rec$codes, pub, rec$g, rec$n_groups, rec$w, rec$y)
  s <- vars_strata(pub, agg, call)
  vars <- by_keys[by_keys %in% pub$plan$vars]
  kk <- match(by_keys, names(agg$codes))
  nl <- agg$nlevels[kk]
  direct <- is.na(s) | length(vars) == 0
  moved <- if (!all(direct)) vars_spread(agg, s, !direct, by_keys, vars, vars_inverses(pub, vars, call))
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
  for (v in vars) {
    q <- inverses[[v]]
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
    state <- vars_collapse(state, nl, agg$n_groups)
  }
  state
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
