# The moment estimator of a block plan, block by block (estimate_table()).
#
# The records of a released file are aggregated by released cell z and group
# g (a combination of the non-key `by` variables): M(z, g) = sum of c over
# them, for each column c of moments (weights, weighted values, their
# squares). For a row of the table, the keys of `by` taking values d (the
# cells D with those values), the estimate and its variance estimate are
#   sum_z M(z, g) h_d(z)  and  sum_z M2(z, g) (h_d(z)^2 - h_d(z)),
# h_d = Q' 1_D, Q the inverse of the transition matrix P (see
# ?estimate_table for why). Q is block diagonal: a cell outside the blocks
# has h_d(z) = 1 if z in D, 0 otherwise, and contributes no variance. An
# IFPR block is a diagonal matrix plus a matrix of rank one, so its h_d
# has a closed form and the sums above are a few sums over its cells
# (linear in the block's size, never a matrix over its cells); a block given
# by a matrix is inverted.

# Below this, the determinant-like quantities of an IFPR block (its
# diagonal a_z and the denominator of the rank-one update) are taken as
# zero: the block's matrix is singular and no unbiased estimator exists.
# An IFPR block whose columns are almost equal gives a_z near 1e-3 at worst
# in the designs of ifpr() (bench/README.md); 1e-10 is far below any design
# and far above rounding.
estimate_singular_tol <- 1e-10

# What the estimator needs of each block cell and each block, checked for
# singularity: block, original count, and for IFPR blocks (P = A + c 1 v',
# A = diag(a), v = 1 / T, c = theta / (m - 1), a = 1 - c m v) the cell k of
# smallest |a| of each block, alpha = 1 / a and w = v / a of the others,
# V' = sum of w over them and den = a_k (1 + c V') + c v_k; the inverse of
# each matrix block.
block_parts <- function(pub, call = rlang::caller_env()) {
  p <- pub$plan
  nb <- length(p$size)
  block <- rep.int(seq_len(nb), p$size)
  t <- p$cells$count
  ifpr_b <- !is.na(p$theta)
  cb <- ifelse(ifpr_b, p$theta / (p$size - 1), 0)
  v <- 1 / t
  a <- 1 - cb[block] * p$size[block] * v
  ord <- order(block, abs(a))
  first <- ord[!duplicated(block[ord])]
  k_of <- integer(nb)
  k_of[block[first]] <- first
  is_k <- logical(length(t))
  is_k[first] <- TRUE
  ifpr <- ifpr_b[block]
  alpha <- ifelse(is_k | !ifpr, 0, 1 / a)
  w <- v * alpha
  vp <- tabulate_sum(block, w, nb)
  den <- a[k_of] * (1 + cb * vp) + cb * v[k_of]
  bad <- ifpr_b & (abs(den) < estimate_singular_tol |
    tabulate_sum(block, as.numeric(ifpr & !is_k & abs(a) < estimate_singular_tol), nb) > 0)
  inverse <- lapply(seq_len(nb), function(b) if (!ifpr_b[b]) block_inverse(p$matrices[[b]], b, call))
  if (any(bad)) abort_singular(which(bad), p, call)
  list(block = block, count = t, ifpr = ifpr, ifpr_b = ifpr_b, c = cb, a = a, v = v, is_k = is_k, k_of = k_of,
       alpha = alpha, w = w, vp = vp, den = den, inverse = inverse)
}

block_inverse <- function(p, b, call) {
  if (rcond(p) < estimate_singular_tol) abort_singular(b, NULL, call)
  solve(p)
}

abort_singular <- function(blocks, p, call) {
  what <- if (length(blocks) == 1) "block" else "blocks"
  msg <- c(
    "The transition matrix of {what} {show_value(blocks)} of the publication is singular.",
    x = "The released records cannot tell some of its cells apart: no unbiased estimator exists.",
    i = paste("An IFPR block is singular when theta m / (m - 1) equals the count of two of its cells",
              "(their records then move alike)."),
    i = "Estimate for groups that hold the whole block (fewer keys in {.arg by}), or ask the agency for another plan."
  )
  abort_sdc(msg, "singular_block", call = call, arg = "publication")
}

# The sums of the table's rows for a block plan: `agg` from
# aggregate_released(), `by_keys` the keys of `by`. Returns d (the ids of
# the rows' key values, with `d_codes` the codes of each id), g, and the
# matrices `lin` (estimates of the columns of agg$lin) and `quad` (variance
# estimates, from the columns of agg$quad).
#' @export
estimate_sums.sdc_publication_blocks <- function(pub, agg, by_keys, call = rlang::caller_env()) {
  # without a key in `by`, no estimand depends on the perturbation
  parts <- if (length(by_keys) > 0) block_parts(pub, call = call)
  kk <- match(by_keys, names(agg$codes))
  p <- pub$plan
  # the block cell of every aggregated row (NA: outside the blocks)
  all_keys <- seq_along(agg$codes)
  ids <- shared_ids(list(agg$codes[all_keys], p$cells$codes[all_keys]), agg$nlevels)
  cell <- match(ids$ids[[1]], ids$ids[[2]])
  cell[!agg$in_cell] <- NA_integer_
  block_total <- tabulate_sum(rep.int(seq_along(p$size), p$size), p$cells$count, length(p$size))
  check_released_parts(agg, rep.int(seq_along(p$size), p$size)[cell], block_total, "block", "data", call)
  # records outside the blocks, and all records when `by` has no key, count
  # as they are
  cell[!agg$in_cell | length(by_keys) == 0] <- NA_integer_
  # the key values d of `by` of every row and every block cell
  dk <- shared_ids(list(agg$codes[kk], p$cells$codes[kk]), agg$nlevels[kk],
                   n = c(length(agg$g), length(p$cells$count)))
  d_row <- dk$ids[[1]]
  d_cell <- dk$ids[[2]]
  direct <- is.na(cell)
  pieces <- list(
    list(d = d_row[direct], g = agg$g[direct], lin = agg$lin[direct, , drop = FALSE],
         quad = 0 * agg$quad[direct, , drop = FALSE]),
    if (!all(direct)) ifpr_block_sums(parts, cell, d_cell, agg),
    if (!all(direct)) matrix_block_sums(parts, cell, d_cell, agg)
  )
  out <- combine_sums(pieces, dk$n, agg$n_groups)
  out$d_codes <- dk$codes
  out$perturbed <- !all(direct)
  out$exact_count <- function() exact_block_counts(out, p$cells$count, d_cell, d_row, direct, agg)
  out
}

estimate_sums <- function(pub, agg, by_keys, call = rlang::caller_env()) UseMethod("estimate_sums")

# Sum pieces (d, g, lin, quad) by (d, g).
combine_sums <- function(pieces, n_d, n_groups) {
  pieces <- pieces[vapply(pieces, function(x) !is.null(x) && length(x$d) > 0, logical(1))]
  d <- unlist(lapply(pieces, `[[`, "d"))
  g <- unlist(lapply(pieces, `[[`, "g"))
  ids <- shared_ids(list(list(d, g)), c(n_d, n_groups))
  id <- ids$ids[[1]]
  list(
    d = ids$codes[[1]], g = ids$codes[[2]],
    lin = sum_by(do.call(rbind, lapply(pieces, `[[`, "lin")), id, ids$n),
    quad = sum_by(do.call(rbind, lapply(pieces, `[[`, "quad")), id, ids$n)
  )
}

# IFPR blocks, in closed form. With k the cell of smallest |a| of block b,
# h_d solves P' h = 1_D: for z != k, h_d(z) = 1_D(z) alpha_z - c w_z s_d, and
# h_d(k) = s_d (1 + c V') - F'_d, where F'_d = sum of alpha over the cells
# of D other than k and s_d = (1_D(k) + a_k F'_d) / den (no division by
# a_k, which may be zero). The sums over z of M h_d and M h_d^2 are then sums
# over the cells of D (A1, A2, A3), over the block (B1, B2) and the term of
# cell k, for every (b, g, d).
ifpr_block_sums <- function(parts, cell, d_cell, agg) {
  rows <- which(!is.na(cell) & parts$ifpr[cell])
  if (length(rows) == 0) return(NULL)
  x <- cell[rows]
  b <- parts$block[x]
  g <- agg$g[rows]
  nb <- length(parts$den)
  # (b, d) of the block cells: F'_d, s_d and h_d(k)
  bc <- which(parts$ifpr)
  bd <- shared_ids(list(list(parts$block[bc], d_cell[bc])), c(nb, max(d_cell)))
  bd_b <- bd$codes[[1]]
  bd_d <- bd$codes[[2]]
  fp <- tabulate_sum(bd$ids[[1]], parts$alpha[bc], bd$n)
  kd <- d_cell[parts$k_of[bd_b]]
  s <- ((bd_d == kd) + parts$a[parts$k_of[bd_b]] * fp) / parts$den[bd_b]
  hk <- s * (1 + parts$c[bd_b] * parts$vp[bd_b]) - fp
  # (b, g) of the rows: B1 = sum M w, B2 = sum M2 w^2 (z != k), M of cell k
  bg <- shared_ids(list(list(b, g)), c(nb, agg$n_groups))
  bg_id <- bg$ids[[1]]
  lin <- agg$lin[rows, , drop = FALSE]
  quad <- agg$quad[rows, , drop = FALSE]
  is_k <- parts$is_k[x]
  al <- parts$alpha[x]
  w <- parts$w[x]
  B1 <- sum_by(lin * w, bg_id, bg$n)
  B1q <- sum_by(quad * w, bg_id, bg$n)
  B2q <- sum_by(quad * w^2, bg_id, bg$n)
  Mk <- sum_by(lin * is_k, bg_id, bg$n)
  Mkq <- sum_by(quad * is_k, bg_id, bg$n)
  # targets: every d of block b for every g of block b
  ord <- order(bd_b)
  nd_b <- tabulate(bd_b, nb)
  start <- cumsum(nd_b) - nd_b
  tg <- rep.int(seq_len(bg$n), nd_b[bg$codes[[1]]])
  td <- ord[sequence(nd_b[bg$codes[[1]]], from = start[bg$codes[[1]]] + 1L)]
  # (b, g, d) sums over the rows of cells other than k: A1, A2, A3
  key <- shared_ids(list(list(b, g, d_cell[x]), list(bd_b[td], bg$codes[[2]][tg], bd_d[td])),
                    c(nb, agg$n_groups, max(d_cell)))
  A1 <- sum_by(lin * al, key$ids[[1]], key$n)[key$ids[[2]], , drop = FALSE]
  A1q <- sum_by(quad * al, key$ids[[1]], key$n)[key$ids[[2]], , drop = FALSE]
  A2q <- sum_by(quad * al^2, key$ids[[1]], key$n)[key$ids[[2]], , drop = FALSE]
  A3q <- sum_by(quad * al * w, key$ids[[1]], key$n)[key$ids[[2]], , drop = FALSE]
  cs <- parts$c[bd_b[td]] * s[td]
  h <- hk[td]
  lin_t <- A1 - cs * B1[tg, , drop = FALSE] + h * Mk[tg, , drop = FALSE]
  lin_q <- A1q - cs * B1q[tg, , drop = FALSE] + h * Mkq[tg, , drop = FALSE]
  sq_q <- A2q - 2 * cs * A3q + cs^2 * B2q[tg, , drop = FALSE] + h^2 * Mkq[tg, , drop = FALSE]
  list(d = bd_d[td], g = bg$codes[[2]][tg], lin = lin_t, quad = sq_q - lin_q)
}

# Blocks given by a matrix: h_d(z) = sum over the cells x of D of Q[x, z],
# explicitly for every cell z of the block and every d of its cells.
matrix_block_sums <- function(parts, cell, d_cell, agg) {
  mb <- which(!parts$ifpr_b)
  rows <- which(!is.na(cell) & !parts$ifpr[cell])
  if (length(rows) == 0) return(NULL)
  start <- c(0L, cumsum(tabulate(parts$block, length(parts$den))))
  pairs <- do.call(rbind, lapply(mb, function(b) {
    cells <- start[b] + seq_len(start[b + 1L] - start[b])
    ds <- unique(d_cell[cells])
    ind <- outer(d_cell[cells], ds, `==`) * 1
    h <- crossprod(parts$inverse[[b]], ind)
    data.frame(cell = rep(cells, length(ds)), d = rep(ds, each = length(cells)), h = as.vector(h))
  }))
  pairs <- pairs[order(pairs$cell), ]
  n_of <- tabulate(pairs$cell, length(parts$block))
  first <- cumsum(n_of) - n_of
  x <- cell[rows]
  r <- rep.int(rows, n_of[x])
  pos <- sequence(n_of[x], from = first[x] + 1L)
  h <- pairs$h[pos]
  lin <- agg$lin[r, , drop = FALSE] * h
  quad <- agg$quad[r, , drop = FALSE] * (h^2 - h)
  list(d = pairs$d[pos], g = agg$g[r], lin = lin, quad = quad)
}

# The count of records of every row whose records are all unweighted and
# whose groups are keys only: exact for a block plan, whose block cells'
# counts are published (cells outside the blocks are released unchanged).
exact_block_counts <- function(out, counts, d_cell, d_row, direct, agg) {
  n_d <- max(c(out$d, d_cell, d_row), 1L)
  exact <- tabulate_sum(d_row[direct], agg$lin[direct, 1], n_d) + tabulate_sum(d_cell, counts, n_d)
  exact[out$d]
}

