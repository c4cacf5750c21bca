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

# What the estimator needs of the blocks given by a matrix: the block of
# every cell, whether it is an IFPR block, and the inverse of each matrix
# block (IFPR blocks are handled in closed form by the core).
block_parts <- function(pub, call = rlang::caller_env()) {
  p <- pub$plan
  nb <- length(p$size)
  ifpr_b <- !is.na(p$theta)
  block <- rep.int(seq_len(nb), p$size)
  inverse <- vector("list", nb)
  for (b in which(!ifpr_b)) inverse[[b]] <- block_inverse(p$matrices[[b]], b, call)
  list(block = block, ifpr_b = ifpr_b, ifpr = ifpr_b[block], inverse = inverse)
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

# The sums of the table's rows for a block plan: `rec` the records (their
# key codes, group g, weights w and values y), `by_keys` the keys of `by`.
# Returns d (the ids of the rows' key values, with `d_codes` the codes of
# each id), g, and the matrices `lin` (estimates of the moments w, w y) and
# `quad` (variance estimates, from the moments w^2, w^2 y, w^2 y^2).
#' @export
estimate_sums.sdc_publication_blocks <- function(pub, rec, by_keys, call = rlang::caller_env(), plug = FALSE,
                                                 one_pass = TRUE, ...) {
  p <- pub$plan
  bc <- released_block_cells(pub, rec$codes, by_keys, call)
  d_rec <- bc$d_rec
  d_cell <- bc$d_cell
  # records outside the blocks, and all records when `by` has no key, count
  # as they are; `none`: no record counts otherwise (the block cells hold
  # as many released records as published)
  none <- length(by_keys) == 0 || sum(p$cells$count) == 0
  cell <- if (!none) bc$cell else rep(NA_integer_, length(bc$cell))
  parts <- if (!none) block_parts(pub, call = call)
  cell_moments <- NULL
  key_plug <- NULL
  if (!none && one_pass && rec$n_groups == 1L && all(parts$ifpr_b)) {
    # keys alone and IFPR blocks: one pass over the records sums them by
    # block cell and by d, the rest works on the cells (sdcRisk::key_sums()),
    # with the variance function's parts when asked
    ks <- core_call(cpp_key_sums, c(0L, cumsum(p$size)), as.numeric(p$theta), p$cells$count, d_cell,
                    as.integer(bc$n_d), estimate_singular_tol, cell, d_rec, rec$w, rec$y, isTRUE(plug), call = call)
    if (length(ks$singular) > 0) abort_singular(ks$singular, p, call)
    out <- list(d = ks$d, g = rep.int(1L, length(ks$d)), lin = ks$lin, quad = ks$quad, direct_lin = ks$direct_lin)
    cell_moments <- ks$cell_moments
    key_plug <- ks$plug
  } else {
    pieces <- list(
      direct_sums(d_rec, rec, is.na(cell), bc$n_d, cell),
      if (!none) ifpr_block_sums(pub, parts, cell, d_cell, rec, call),
      if (!none) matrix_block_sums(parts, cell, d_cell, rec)
    )
    out <- combine_sums(pieces, bc$n_d, rec$n_groups)
  }
  out$d_codes <- bc$d_codes
  # rows numbered by d in the order of their key values
  out$d_sorted <- isTRUE(bc$d_sorted)
  out$perturbed <- !none
  out$exact_count <- function() exact_block_counts(out, p$cells$count, d_cell, bc$n_d)
  out$plug_var <- function(col, lin_col) {
    if (none) return(list(outside = numeric(length(out$d)), own = numeric(length(out$d))))
    # the core's parts are for c the weight, or the weighted value
    if (!is.null(key_plug) && col == if (is.null(rec$y)) 1L else 3L && lin_col == if (is.null(rec$y)) 1L else 2L) {
      return(plug_parts(key_plug$outside, key_plug$own, key_plug$count + out$direct_lin[, lin_col]))
    }
    block_plug_var(p, parts, cell, d_cell, bc$n_d, rec, out, col, lin_col, cell_moments)
  }
  out$ml_systems <- function(d, g) block_ml_systems(pub, cell, d_cell, rec, d, g)
  out
}

# The two parts of the variance function of every row (d, g) of the table
# (plug_variance()), from the block cells' original counts T (published):
# `outside`, what the records outside the row's cells D add, sum_x N_x(g)
# g_d(x) over the cells x of D's blocks outside D, and `own`, what one unit
# of the row's value adds, sum_x N_x(g) g_d(x) over D divided by the row's
# value; g_d(x) = E[q_d(Z) | x], q_d = h_d^2 - h_d the variance of h_d(Z)
# given x (plus 1 in D, where E[h_d(Z) | x] = 1), and N_x(g) the sum of c^2
# over the original records of group g in cell x. A record stays in its
# block, so the records of group g of every block are those of the
# released file: N_x(g) is taken as T_x times their mean c^2 over the
# block's records, and the row's value as the sum of T_x times their mean c
# (plus the records outside the blocks, which count as they are). c is the
# c of every record (record_c()); `col` and `lin_col` the columns of c^2
# among the moments of `quad` and of c among those of `lin` (whose records
# outside the blocks give that part).
block_plug_var <- function(p, parts, cell, d_cell, n_d, rec, out, col, lin_col, cell_moments = NULL) {
  n_rows <- length(out$d)
  if (rec$n_groups == 1L) {
    # one group: every slot with its block's means, summed by d (IFPR
    # blocks in the core)
    f <- block_cell_means(p, cell, rec, col, lin_col, cell_moments)
    v <- ifpr_plug_slots(p, parts, d_cell, n_d, f)
    sums <- if (is.null(v)) matrix(0, n_d, 3) else cbind(v$outside, v$own, v$count)
    mat <- matrix_plug_slots(p, parts, d_cell)
    if (!is.null(mat)) {
      sums <- sums + sum_by(cbind(mat$outside * f$k2[mat$block], mat$own * f$k2[mat$block],
                                  mat$count * f$k1[mat$block]), mat$d, n_d)
    }
    # (the rows are every d, in order, when no row lacks records)
    if (n_rows != n_d || is.unsorted(out$d)) sums <- sums[out$d, , drop = FALSE]
  } else {
    sl <- block_plug_slots(p, parts, d_cell, n_d)
    f <- block_group_means(parts$block[cell], rec$g, rec$n_groups, record_c(rec), length(p$size))
    # every (block, group) with records, once for each slot (block, d) of
    # its block: the (block, d, group) targets the sums of the estimates
    # have already (every d of a block is a row for every group in it)
    ns_b <- tabulate(sl$block, length(p$size))
    a <- ns_b[f$block]
    pair <- rep.int(seq_along(a), a)
    s <- order(sl$block)[sequence(a, from = c(0L, cumsum(ns_b))[f$block] + 1L)]
    row <- match_pairs(sl$d[s], f$g[pair], out$d, out$g, n_d, rec$n_groups)
    at <- !is.na(row)
    s <- s[at]
    pair <- pair[at]
    sums <- sum_by(cbind(sl$outside[s] * f$k2[pair], sl$own[s] * f$k2[pair], sl$count[s] * f$k1[pair]),
                   row[at], n_rows)
  }
  plug_parts(sums[, 1], sums[, 2], sums[, 3] + out$direct_lin[, lin_col])
}

# The variance function's parts of the rows: `outside`, and `own` per unit
# of the row's value `value` (0 where the value is not positive).
plug_parts <- function(outside, own, value) {
  own <- own / value
  own[which(!(value > 0))] <- 0
  list(outside = outside, own = own)
}

# The position of every pair (x1, x2) among the pairs (y1, y2), NA if
# absent; codes below n1 and n2 (one number per pair when their product
# is exact in a double, a cross-classification otherwise).
match_pairs <- function(x1, x2, y1, y2, n1, n2) {
  if (as.numeric(n1) * n2 <= 2^52) return(match((x1 - 1) * as.numeric(n2) + x2, (y1 - 1) * as.numeric(n2) + y2))
  ids <- shared_ids(list(list(x1, x2), list(y1, y2)), c(n1, n2))
  match(ids$ids[[1]], ids$ids[[2]])
}

# The parts of the count's variance by slot, a block and a d of its cells
# (the cells D): `outside`, sum_x T_x g_d(x) over the block's cells outside
# D; `own`, sum_x T_x max(g_d(x), 0) over D; `count`, sum_x T_x over D.
# IFPR blocks in closed form in the core (sdcRisk::ifpr_plug_var(), whose
# comment gives the formulas), linear in the cells; blocks given by a
# matrix densely.
block_plug_slots <- function(p, parts, d_cell, n_d) {
  parts_of <- list(ifpr_plug_slots(p, parts, d_cell, n_d), matrix_plug_slots(p, parts, d_cell))
  parts_of <- parts_of[!vapply(parts_of, is.null, TRUE)]
  if (length(parts_of) == 1) return(parts_of[[1]])
  lapply(stats::setNames(nm = c("block", "d", "outside", "own", "count")),
         function(k) unlist(lapply(parts_of, `[[`, k), use.names = FALSE))
}

# The slots of the IFPR blocks (NULL when there is none); with `k` (the
# blocks' means k1 and k2 of block_cell_means()), their sums by d instead:
# `outside` and `own` times the block's k2, `count` times its k1, n_d each.
ifpr_plug_slots <- function(p, parts, d_cell, n_d, k = NULL) {
  if (!any(parts$ifpr_b)) return(NULL)
  v <- core_call(cpp_ifpr_plug_var, c(0L, cumsum(p$size)), as.numeric(p$theta), p$cells$count, d_cell,
                 as.integer(n_d), estimate_singular_tol, k$k1, k$k2)
  if (length(v$singular) > 0) abort_singular(v$singular, p, rlang::caller_env())
  if (!is.null(k)) return(v[c("outside", "own", "count")])
  v[c("block", "d", "outside", "own", "count")]
}

# The slots of the blocks given by a matrix, densely (NULL when there is
# none).
matrix_plug_slots <- function(p, parts, d_cell) {
  if (all(parts$ifpr_b)) return(NULL)
  t <- as.numeric(p$cells$count)
  start <- c(0L, cumsum(p$size))
  mat <- lapply(which(!parts$ifpr_b), function(b) {
    cells <- start[b] + seq_len(p$size[b])
    ds <- unique(d_cell[cells])
    ind <- outer(d_cell[cells], ds, `==`) * 1
    h <- crossprod(parts$inverse[[b]], ind)
    gb <- crossprod(p$matrices[[b]], h^2 - h)
    list(block = rep(b, length(ds)), d = ds, outside = colSums(t[cells] * gb * (1 - ind)),
         own = colSums(t[cells] * pmax(gb, 0) * ind), count = colSums(t[cells] * ind))
  })
  lapply(stats::setNames(nm = c("block", "d", "outside", "own", "count")),
         function(k) unlist(lapply(mat, `[[`, k), use.names = FALSE))
}

# The mean c (k1) and c^2 (k2) of all the released records of every block
# (one group): the sums of c and c^2 by block cell (`cell` NA outside the
# blocks; the moments of cpp_group_moments() with the records' weights and
# values, `lin_col` and `col` of its lin and quad columns; `cell_moments`
# when they are known already) summed by block, over the block's records (its published count, which its released records
# match).
block_cell_means <- function(p, cell, rec, col, lin_col, cell_moments = NULL) {
  nb <- length(p$size)
  m <- cell_moments %||% core_call(cpp_group_moments, cell, length(p$cells$count), rec$w, rec$y)
  nl <- if (is.null(rec$y)) 1L else 2L
  # sums of c, c^2 and the published counts block by block
  m <- sum_by(cbind(m[, c(lin_col, nl + col), drop = FALSE], p$cells$count), rep.int(seq_len(nb), p$size), nb)
  n_b <- m[, 3]
  n_b[n_b == 0] <- Inf
  list(k1 = m[, 1] / n_b, k2 = m[, 2] / n_b)
}

# The mean c (k1) and c^2 (k2) of group g over all the released records of
# block B, for every (B, g) with records of the group (`block`, `g`; with
# one group, k1 and k2 by block). `rb` the block of every record, NA
# outside the blocks.
block_group_means <- function(rb, g, ng, c, nb) {
  n_b <- tabulate(rb, nb)
  if (ng == 1L) {
    m <- core_call(cpp_group_moments, rb, nb, c, NULL)
    return(list(k1 = ifelse(n_b > 0, m[, 1] / n_b, 0), k2 = ifelse(n_b > 0, m[, 2] / n_b, 0)))
  }
  if (as.numeric(nb) * ng <= max(estimate_dense_groups, length(rb))) {
    id <- (rb - 1L) * ng + g
    n <- nb * ng
    there <- which(tabulate(id, n) > 0)
    bg <- decode_mixed_radix(there, c(nb, ng))
  } else {
    cc <- cross_classify_codes(list(rb, g), c(nb, ng))
    id <- cc$cell_id
    n <- length(cc$counts)
    there <- which(tabulate(id, n) > 0)
    bg <- list(cc$codes[[1]][there], cc$codes[[2]][there])
  }
  m <- core_call(cpp_group_moments, id, n, c, NULL)[there, , drop = FALSE]
  list(block = bg[[1]], g = bg[[2]], k1 = m[, 1] / n_b[bg[[1]]], k2 = m[, 2] / n_b[bg[[1]]])
}

# The systems of the maximum likelihood estimator for the rows (d, g): each
# block that has a cell of d, with group g. For each, its dense transition
# matrix, the moments of its records by released cell and, for each of its
# rows, the indicator of the row's cells.
block_ml_systems <- function(pub, cell, d_cell, rec, d, g) {
  p <- pub$plan
  block <- rep.int(seq_along(p$size), p$size)
  start <- c(0L, cumsum(p$size))
  ng <- rec$n_groups
  cells_of_d <- split(seq_along(d_cell), factor(d_cell, seq_len(max(d_cell))))
  # system key (b - 1) ng + (g - 1)
  pairs <- do.call(rbind, lapply(seq_along(d), function(i) {
    bs <- unique(block[cells_of_d[[d[i]]]])
    if (length(bs)) data.frame(row = i, key = (bs - 1) * ng + g[i] - 1)
  }))
  if (is.null(pairs)) return(list())
  sel <- which(((block[cell] - 1) * ng + rec$g - 1) %in% pairs$key)
  cc <- cross_classify_codes(list(cell[sel], rec$g[sel]), c(length(d_cell), ng))
  mom <- core_call(cpp_group_moments, cc$cell_id, length(cc$counts), rec$w[sel], rec$y[sel])
  systems <- split(pairs$row, pairs$key)
  Map(function(rows, key) {
    b <- key %/% ng + 1
    cells <- start[b] + seq_len(p$size[b])
    at <- which(cc$codes[[2]] == key %% ng + 1 & block[cc$codes[[1]]] == b)
    ml_system_parts(block_dense_p(p, b), match(cc$codes[[1]][at], cells), mom[at, , drop = FALSE],
                    rows, lapply(rows, function(r) as.numeric(d_cell[cells] == d[r])))
  }, systems, as.numeric(names(systems)))
}

# The transition matrix of block b, dense (Section 3.3 for IFPR).
block_dense_p <- function(p, b) {
  if (is.na(p$theta[b])) return(p$matrices[[b]])
  t <- p$cells$count[sum(p$size[seq_len(b - 1)]) + seq_len(p$size[b])]
  m <- length(t)
  out <- matrix(rep(p$theta[b] / ((m - 1) * t), each = m), m)
  diag(out) <- 1 - p$theta[b] / t
  out
}

# The block cell of every released record (NA outside the blocks), and the
# key values d of `by_keys` of every record outside the blocks (`d_rec`, NA
# for a record in a block cell, whose d is its cell's; every record's when
# `by_keys` is empty) and of every block cell (`d_cell`), numbered 1..n_d
# in the order of their codes (a table's rows by d are in order), with
# `d_codes` the codes of each d. One pass over the
# records looks their cells up among the plan's block cells
# (sdcRisk::match_block_cells()), a second numbers their key values
# (sdcRisk::number_by_values()); checked: no cell twice in the blocks, as
# many records in each block as published.
released_block_cells <- function(pub, codes, by_keys, call) {
  p <- pub$plan
  ext <- extended_codes(codes, pub)
  if (prod(as.numeric(ext$nlevels)) > 2^62) return(released_block_cells_classified(pub, codes, by_keys, call))
  kk <- match(by_keys, names(codes))
  m <- core_call(cpp_match_block_cells, ext$codes, p$cells$codes, as.integer(ext$nlevels), as.integer(kk),
                 c(0L, cumsum(p$size)), p$cells$count, call = call)
  if (m$duplicate > 0) abort_block_twice(call)
  check_released_parts(m$block_released, m$block_published, "block", "data", call)
  names(m$d_codes) <- by_keys
  # with no key in `by`, every record has the one d
  d_rec <- if (length(kk) == 0) rep.int(1L, length(m$cell)) else m$d_rec
  list(cell = m$cell, d_rec = d_rec, d_cell = m$d_cell, d_codes = m$d_codes, n_d = as.integer(m$n_d),
       d_sorted = TRUE)
}

# The codes (1-based, one vector per key) of 1-based mixed-radix indexes,
# the first key most significant.
decode_mixed_radix <- function(index, nlevels) {
  if (length(nlevels) == 0) return(list())
  stride <- rev(cumprod(c(1, rev(as.numeric(nlevels))[-length(nlevels)])))
  if (prod(as.numeric(nlevels)) <= .Machine$integer.max) {
    # in integers, without the division of the last key (stride 1), the
    # remainder of the first (the index is below its product) and either
    # for keys of one level
    i0 <- as.integer(index) - 1L
    return(lapply(seq_along(nlevels), function(k) {
      if (nlevels[k] == 1) return(rep.int(1L, length(index)))
      x <- if (stride[k] == 1) i0 else i0 %/% as.integer(stride[k])
      if (k > 1) x <- x %% as.integer(nlevels[k])
      x + 1L
    }))
  }
  lapply(seq_along(nlevels), function(k) as.integer(((index - 1) %/% stride[k]) %% nlevels[k]) + 1L)
}

# The same through one cross-classification of the records and the block
# cells (keys whose combinations do not fit in one 64-bit index).
released_block_cells_classified <- function(pub, codes, by_keys, call) {
  rc <- released_cells(pub, codes, call)
  kk <- match(by_keys, names(codes))
  dk <- shared_ids(list(rc$codes[kk]), rc$nlevels[kk], n = length(rc$count))
  names(dk$codes) <- by_keys
  list(cell = rc$block_cell[rc$cell_id], d_rec = dk$ids[[1]][rc$cell_id],
       d_cell = dk$ids[[1]][rc$cell_of_block_cell], d_codes = dk$codes, n_d = dk$n)
}

abort_block_twice <- function(call) {
  abort_sdc("{.arg publication} is not a valid publication: a cell is in its blocks twice.", "publication",
            call = call, arg = "publication")
}

# The released cell (every key) of every record, and the block cell of every
# released cell (NA outside the blocks), checked: no cell twice in the
# blocks, as many records in each block as published.
released_cells <- function(pub, codes, call) {
  p <- pub$plan
  ext <- extended_codes(codes, pub)
  n <- length(ext$codes[[1]])
  nc <- length(p$cells$count)
  # the records and the block cells cross-classified together: one numbering
  # of the cells for both
  cc <- cross_classify_codes(lapply(seq_along(ext$codes), function(k) c(ext$codes[[k]], p$cells$codes[[k]])),
                             ext$nlevels)
  rec_cell <- cc$cell_id[seq_len(n)]
  cell_of_block_cell <- cc$cell_id[n + seq_len(nc)]
  if (anyDuplicated(cell_of_block_cell)) abort_block_twice(call)
  count <- cc$counts
  count[cell_of_block_cell] <- count[cell_of_block_cell] - 1L
  in_cell <- Reduce(`&`, lapply(seq_along(cc$codes), function(k) cc$codes[[k]] <= ext$categories[k]), TRUE)
  block_cell <- rep(NA_integer_, length(count))
  block_cell[cell_of_block_cell] <- seq_len(nc)
  block_cell[!in_cell] <- NA_integer_
  block <- rep.int(seq_along(p$size), p$size)
  check_released_parts(sum_by(as.numeric(count), block[block_cell], length(p$size)),
                       sum_by(p$cells$count, block, length(p$size)), "block", "data", call)
  codes <- cc$codes
  names(codes) <- names(ext$codes)
  list(cell_id = rec_cell, codes = codes, count = count, block_cell = block_cell,
       cell_of_block_cell = cell_of_block_cell, nlevels = ext$nlevels)
}

# The moments of the records `keep` by (d, g), and no variance: a piece of
# combine_sums(). With `cell` (NA exactly where `keep`) and one group, in
# the core without vectors over the records.
direct_sums <- function(d, rec, keep, n_d, cell = NULL) {
  ng <- rec$n_groups
  if (ng == 1L && !is.null(cell)) {
    # one group: the records outside the blocks (cell NA) summed by d in the
    # core, the d with records kept
    m <- core_call(cpp_direct_moments, d, as.integer(n_d), cell, rec$w, rec$y)
    lin_cols <- if (is.null(rec$y)) 1L else 1:2
    return(list(d = m$group, g = rep.int(1L, length(m$group)), lin = m$moments[, lin_cols, drop = FALSE],
                quad = 0 * m$moments[, -lin_cols, drop = FALSE]))
  }
  dense <- as.numeric(n_d) * ng <= max(estimate_dense_groups, length(d))
  if (dense) {
    id <- if (ng == 1L) d else (d - 1L) * ng + rec$g
    id[!keep] <- NA_integer_
    n <- n_d * ng
  } else {
    cc <- cross_classify_codes(list(ifelse(keep, d, NA_integer_), rec$g), c(n_d, ng))
    id <- cc$cell_id
    n <- length(cc$counts)
  }
  m <- moments_by(id, n, rec)
  there <- which(tabulate(id, n) > 0)
  if (dense) {
    dg <- decode_mixed_radix(there, c(n_d, ng))
    dd <- dg[[1]]
    gg <- dg[[2]]
  } else {
    dd <- cc$codes[[1]][there]
    gg <- cc$codes[[2]][there]
  }
  list(d = dd, g = gg, lin = m$lin[there, , drop = FALSE], quad = 0 * m$quad[there, , drop = FALSE])
}

# Groups counted in one array of sums rather than cross-classified: up to
# 2^20 groups (8 MB a column of sums), far more than any table's rows.
estimate_dense_groups <- 2^20

# The moments (cpp_group_moments()) of the records by group id: lin (w, w y)
# and quad (w^2, w^2 y, w^2 y^2).
moments_by <- function(id, n, rec) {
  mom <- core_call(cpp_group_moments, id, as.integer(n), rec$w, rec$y)
  lin_cols <- if (is.null(rec$y)) 1L else 1:2
  list(lin = mom[, lin_cols, drop = FALSE], quad = mom[, -lin_cols, drop = FALSE])
}

estimate_sums <- function(pub, rec, by_keys, call = rlang::caller_env(), ...) UseMethod("estimate_sums")

# Sum pieces (d, g, lin, quad) by (d, g); the first piece is the records
# that count as they are, whose sums are kept apart (`direct_lin`) for the
# maximum likelihood estimator.
combine_sums <- function(pieces, n_d, n_groups) {
  # (the direct piece first, kept even without rows)
  pieces <- pieces[!vapply(pieces, is.null, TRUE)]
  n_rows <- vapply(pieces, function(x) length(x$d), 1L)
  n_dg <- as.numeric(n_d) * n_groups
  if (n_dg <= max(estimate_dense_groups, sum(n_rows))) {
    # (d, g) numbered through an array, in the order of d then g, in the
    # core
    pieces <- lapply(pieces, function(x) {
      x$d <- as.integer(x$d)
      x$g <- as.integer(x$g)
      x$lin <- as_double_matrix(x$lin)
      x$quad <- as_double_matrix(x$quad)
      x
    })
    return(core_call(cpp_combine_rows, pieces, as.integer(n_d), as.integer(n_groups)))
  }
  d <- unlist(lapply(pieces, `[[`, "d"))
  g <- unlist(lapply(pieces, `[[`, "g"))
  ids <- shared_ids(list(list(d, g)), c(n_d, n_groups))
  id <- ids$ids[[1]]
  lin <- do.call(rbind, lapply(pieces, `[[`, "lin"))
  direct <- seq_len(n_rows[1])
  list(
    d = ids$codes[[1]], g = ids$codes[[2]],
    lin = sum_by(lin, id, ids$n),
    quad = sum_by(do.call(rbind, lapply(pieces, `[[`, "quad")), id, ids$n),
    direct_lin = sum_by(lin[direct, , drop = FALSE], id[direct], ids$n)
  )
}

# IFPR blocks, in closed form (sdcRisk::ifpr_sums() in the core, whose
# comment gives the formulas): for every (block, group, d) of the rows in
# IFPR blocks, the sums of M h_d and of M2 (h_d^2 - h_d).
ifpr_block_sums <- function(pub, parts, cell, d_cell, rec, call) {
  if (!any(parts$ifpr_b)) return(NULL)
  p <- pub$plan
  # records outside the blocks (cell NA) and in matrix blocks are skipped there
  res <- core_call(cpp_ifpr_sums, c(0L, cumsum(p$size)), as.numeric(p$theta), p$cells$count, d_cell,
                   max(d_cell), estimate_singular_tol, cell, rec$g, rec$w, rec$y, call = call)
  if (length(res$singular) > 0) abort_singular(res$singular, p, call)
  list(d = res$d, g = res$g, lin = res$lin, quad = res$quad)
}

# Blocks given by a matrix: h_d(z) = sum over the cells x of D of Q[x, z],
# explicitly for every cell z of the block and every d of its cells.
matrix_block_sums <- function(parts, cell, d_cell, rec) {
  mb <- which(!parts$ifpr_b)
  if (length(mb) == 0) return(NULL)
  keep <- !is.na(cell) & !parts$ifpr[cell]
  if (!any(keep, na.rm = TRUE)) return(NULL)
  # the records of matrix blocks by (cell, group)
  cc <- cross_classify_codes(list(ifelse(keep, cell, NA_integer_), rec$g), c(length(parts$block), rec$n_groups))
  m <- moments_by(cc$cell_id, length(cc$counts), rec)
  start <- c(0L, cumsum(tabulate(parts$block, length(parts$ifpr_b))))
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
  x <- cc$codes[[1]]
  r <- rep.int(seq_along(x), n_of[x])
  pos <- sequence(n_of[x], from = first[x] + 1L)
  h <- pairs$h[pos]
  list(d = pairs$d[pos], g = cc$codes[[2]][r], lin = m$lin[r, , drop = FALSE] * h,
       quad = m$quad[r, , drop = FALSE] * (h^2 - h))
}

# The count of records of every row whose records are all unweighted and
# whose groups are keys only: exact for a block plan, whose block cells'
# counts are published (cells outside the blocks are released unchanged).
exact_block_counts <- function(out, counts, d_cell, n_d) {
  out$direct_lin[, 1] + sum_by(as.numeric(counts), d_cell, n_d)[out$d]
}
