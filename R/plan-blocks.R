#' Build a PRAM plan over the cells of a cross-classification
#'
#' A PRAM plan (Nayak, Zhang and You 2016, Section 3.3) divides some of the
#' nonempty cells into disjoint blocks. A unit of a cell in a block moves to
#' another cell of the same block with the probabilities of the block's
#' transition matrix; a unit of a cell in no block is never changed. Each
#' block has either
#' * an inverse-frequency (IFPR) parameter \eqn{\theta}: a unit of cell
#'   \eqn{c_i} stays with probability \eqn{p_{ii} = 1 - \theta / T_i} and moves
#'   to each other cell of the block with probability
#'   \eqn{p_{ji} = \theta / ((m - 1) T_i)}, \eqn{m} being the number of cells
#'   of the block. This PRAM is unbiased, \eqn{E(S | T) = T} (eq. 3.3), for any
#'   \eqn{0 \le \theta \le \min_i T_i}; \eqn{\theta} may exceed 1 (Ghatak et
#'   al. 2018) when every cell of the block has \eqn{T_i \ge \theta}; or
#' * an explicit column-stochastic \eqn{m \times m} matrix with
#'   \eqn{p_{ij} = P(Z = c_i | X = c_j)}, rows and columns in the order of the
#'   block's cells.
#'
#' IFPR blocks store only their cells and \eqn{\theta}: a plan never holds
#' anything quadratic in the number of cells of the table.
#'
#' @param cells An `sdc_cells` object from [cell_frequencies()].
#' @param blocks The blocks, as a list of integer vectors of cell ids (rows of
#'   `cells$cells`), or as a vector with one block label per cell (`NA` for
#'   cells in no block). Every block has at least two cells and no cell is in
#'   two blocks.
#' @param theta IFPR parameters: one number for all blocks, or one per block
#'   (`NA` for a block given by a matrix).
#' @param matrix Explicit transition matrices: a list with one element per
#'   block, a matrix or `NULL` (for an IFPR block). Columns must sum to 1
#'   within `1e-12`; they are then rescaled to sum to 1 exactly.
#'
#' @returns An object of class `pram_plan`.
#' @family plans
#' @export
#' @examples
#' set.seed(1)
#' df <- data.frame(a = sample(letters[1:6], 30, TRUE), b = sample(1:3, 30, TRUE))
#' cf <- cell_frequencies(df, c("a", "b"))
#' rare <- which(cf$cells$count <= 2)
#' plan <- pram_plan(cf, list(rare), theta = 0.8)
#' plan
#' pram_matrix(plan, 1)
#' pram_unbiased(plan)
pram_plan <- function(cells, blocks, theta = NULL, matrix = NULL) {
  check_sdc_cells(cells)
  blocks <- normalize_blocks(blocks, nrow(cells$cells))
  nb <- length(blocks)
  theta <- normalize_theta(theta, nb)
  matrix <- normalize_matrices(matrix, nb)
  check_block_parameters(blocks, theta, matrix)
  plan <- new_pram_plan(cells, blocks, theta, matrix)
  check_plan_blocks(plan)
  validate_pram_plan(plan)
}

new_pram_plan <- function(cells, blocks, theta, matrix) {
  sizes <- lengths(blocks)
  mats <- lapply(matrix, function(p) if (is.null(p)) NULL else sweep(p, 2, colSums(p), "/"))
  msize <- vapply(mats, function(p) if (is.null(p)) 0 else length(p), numeric(1))
  mstart <- c(0, cumsum(msize))[seq_len(length(blocks))]
  mstart[msize == 0] <- NA_real_
  structure(
    list(
      cells = cells,
      block_start = as.integer(c(0L, cumsum(sizes))),
      block_cells = as.integer(unlist(blocks, use.names = FALSE)),
      theta = as.numeric(theta),
      matrix = as.numeric(unlist(mats, use.names = FALSE)),
      matrix_start = as.numeric(mstart)
    ),
    class = c("pram_plan", "pram_plan_any")
  )
}

# The blocks of a new plan as the user gave them: at least two cells each,
# cell ids in range, disjoint, theta within [0, min T] of its block. Errors
# name the argument (`blocks`, `theta`).
check_plan_blocks <- function(plan, call = rlang::caller_env()) {
  nb <- length(plan$theta)
  ncell <- nrow(plan$cells$cells)
  counts <- plan$cells$cells$count
  sizes <- diff(plan$block_start)
  ids <- plan$block_cells
  if (any(sizes < 2)) {
    bad <- which(sizes < 2)
    abort_sdc(c(
      "Every block of {.arg blocks} must have at least two cells.",
      "x" = "{show_blocks(bad)} {if (length(bad) == 1) 'has' else 'have'} {show_value(sizes[bad])} cell{if (all(sizes[bad] == 1)) '' else 's'}."
    ), "block", call = call, arg = "blocks")
  }
  if (anyNA(ids) || any(ids < 1L | ids > ncell)) {
    bad <- unique(ids[is.na(ids) | ids < 1L | ids > ncell])
    abort_sdc(c(
      "{.arg blocks} must contain cell ids between 1 and {fmt_int(ncell)}.",
      "x" = "Found {show_value(bad)}."
    ), "block", call = call, arg = "blocks")
  }
  if (anyDuplicated(ids)) {
    dup <- unique(ids[duplicated(ids)])
    abort_sdc(c(
      "Blocks must be disjoint: no cell may be in two blocks of {.arg blocks}.",
      "x" = "Cell id{if (length(dup) > 1) 's' else ''} {show_value(dup)} appear{if (length(dup) > 1) '' else 's'} more than once."
    ), "block_overlap", call = call, arg = "blocks")
  }
  # theta <= min T of its block, checked cell by cell (linear, no loop over blocks)
  th <- rep.int(plan$theta, sizes)
  bad_cell <- which(!is.na(th) & (th < 0 | th > counts[ids]))
  if (length(bad_cell) > 0) {
    b <- findInterval(bad_cell[1] - 1, plan$block_start)
    tmin <- min(counts[plan_block_cells(plan, b)])
    abort_sdc(c(
      "{.arg theta} of block {b} must lie in [0, {tmin}], the smallest count of its cells.",
      "x" = "It is {format(plan$theta[b], digits = 15)}.",
      "i" = "With {.code theta > min(T)}, {.code p_ii = 1 - theta / T_i} would be negative."
    ), "theta", call = call, arg = "theta")
  }
  plan
}

# Every vector the core reads from a block plan, whatever edits were made
# to it: types, lengths, offsets, cell ids in range and in one block at
# most, theta finite and in [0, min T] of its block, matrix blocks one after
# another with finite entries in [0, 1] and columns summing to 1; the cell
# of every record (`records = FALSE`: not the records, see
# validate_sdc_cells()). Linear in the plan's size. An error
# here is sdcRisk_error_invalid_object.
validate_pram_plan <- function(plan, arg = "plan", call = rlang::caller_env(), records = TRUE) {
  hint <- "Build the plan again with {.fn pram_plan} (or {.fn ifpr})."
  broken <- function(what) abort_invalid(arg, what, hint, call)
  if (!is.list(plan) || !inherits(plan$cells, "sdc_cells")) broken("its {.field cells} are not an {.cls sdc_cells} object")
  validate_sdc_cells(plan$cells, paste0(arg, "$cells"), call = call, records = records)
  ncell <- nrow(plan$cells$cells)
  counts <- plan$cells$cells$count
  theta <- plan$theta
  nb <- length(theta)
  bs <- plan$block_start
  bc <- plan$block_cells
  ms <- plan$matrix_start
  mat <- plan$matrix
  if (!is.double(theta) || !is.integer(bs) || !is.integer(bc) || !is.double(ms) || !is.double(mat) ||
    is.object(theta) || is.object(bs) || is.object(bc)) {
    broken("{.field theta}, {.field matrix_start} and {.field matrix} must be double, {.field block_start} and {.field block_cells} integer")
  }
  if (length(bs) != nb + 1L || length(ms) != nb || anyNA(bs) || bs[1] != 0L ||
    bs[nb + 1L] != length(bc) || any(diff(bs) < 2L)) {
    broken("{.field block_start} must start at 0, rise by at least 2 per block and end at the number of block cells")
  }
  in_blocks <- if (anyNA(bc)) NULL else core_call(cpp_count_ids, bc, ncell, call = call)
  if (is.null(in_blocks) || max(0L, in_blocks) > 1L) {
    broken(paste0("{.field block_cells} must hold distinct cell ids between 1 and ", fmt_int(ncell)))
  }
  sizes <- diff(bs)
  is_matrix <- is.na(theta)
  if (any(is.infinite(theta)) || any(!is.na(ms[!is_matrix])) || anyNA(ms[is_matrix])) {
    broken("each block must have exactly one of a finite {.field theta} and a matrix ({.field matrix_start})")
  }
  b <- core_call(cpp_theta_outside, theta, bs, bc, counts, call = call) # one pass, no vectors of the block cells' length
  if (b > 0L) {
    broken(paste0("{.field theta} of block ", b, " is outside [0, the smallest count of its cells]"))
  }
  if (!any(is_matrix) && length(mat) > 0) broken("{.field matrix} must be empty in a plan without matrix blocks")
  if (any(is_matrix)) {
    start <- ms[is_matrix]
    m <- sizes[is_matrix]
    end <- start + as.numeric(m)^2
    if (any(start != trunc(start)) || any(start < c(0, end[-length(end)])) || end[length(end)] != length(mat) ||
      !all(is.finite(mat)) || any(mat < 0 | mat > 1)) {
      broken("the matrix blocks must lie one after another in {.field matrix}, with entries in [0, 1]")
    }
    # every column of every matrix block sums to 1
    entry <- unlist(lapply(seq_along(start), function(k) start[k] + seq_len(m[k]^2)), use.names = FALSE)
    column <- unlist(lapply(seq_along(start), function(k) rep(seq_len(m[k]), each = m[k]) + sum(m[seq_len(k - 1)])),
                     use.names = FALSE)
    if (length(entry) > 0 && any(abs(tabulate_sum(column, mat[entry], sum(m)) - 1) > 1e-9)) {
      broken("the columns of a matrix block must sum to 1")
    }
  }
  invisible(plan)
}

#' @export
engine_plan.pram_plan <- function(plan, arg = "plan", call = rlang::caller_env()) {
  # the core reads the cells' counts, not the records' cells
  validate_pram_plan(plan, arg = arg, call = call, records = FALSE)
  block_engine_list(plan)
}

# The list the core reads, of a block plan validated by the caller.
block_engine_list <- function(plan) {
  list(
    kind = "blocks",
    counts = plan$cells$cells$count,
    block_start = plan$block_start,
    block_cells = plan$block_cells,
    theta = plan$theta,
    matrix = plan$matrix,
    matrix_start = plan$matrix_start
  )
}

# An intruder who knows some keys only: the set of cells he cannot tell
# apart from each cell (risk_known.hpp).
#' @export
engine_known.pram_plan <- function(plan, ep, known) {
  if (length(known) < length(plan$cells$keys)) ep$known_set <- known_sets(plan$cells, known)
  ep
}

#' @export
plan_kind.pram_plan <- function(plan) "blocks"

#' @export
validate_plan.pram_plan <- function(plan, arg = "plan", call = rlang::caller_env()) {
  validate_pram_plan(plan, arg = arg, call = call)
}

#' @export
plan_block_of.pram_plan <- function(plan, cells = NULL) {
  if (!is.null(cells)) {
    # the position of each cell in the block list gives its block
    k <- match(cells, plan$block_cells)
    return(ifelse(is.na(k), NA_integer_, findInterval(k - 1L, plan$block_start)))
  }
  out <- rep(NA_integer_, nrow(plan$cells$cells))
  sizes <- diff(plan$block_start)
  out[plan$block_cells] <- rep.int(seq_along(sizes), sizes)
  out
}

#' @export
plan_movable.pram_plan <- function(plan, ep = NULL) !is.na(plan_block_of(plan))

# IFPR: eq. 4.10 bounds P(S_j = 0 | T) by (theta / T)^T e^-theta; none for
# matrix blocks.
#' @export
plan_empty_bound.pram_plan <- function(plan) {
  counts <- plan$cells$cells$count
  out <- rep(NA_real_, length(counts))
  block_of <- plan_block_of(plan)
  in_block <- which(!is.na(block_of))
  th <- plan$theta[block_of[in_block]]
  t <- counts[in_block]
  out[in_block] <- (th / t)^t * exp(-th)
  out
}

# Exact V(S_D | T) for every category D of variable v (eq. 3.6: the units
# of cell i land in D with probability q_i, independently, so
# V(S_D) = sum_i T_i q_i (1 - q_i)) and the bound 2 theta b_R (eq. 6.7).
#' @export
plan_category_moments.pram_plan <- function(plan, v, call = rlang::caller_env()) {
  cells <- plan$cells$cells
  value <- as.character(cells[[v]])
  # in the key's order: factor levels, or sorted as numbers for a numeric
  # key (as text, ages came 0, 1, 10, 100, 11: issue 37)
  lev <- if (is.factor(cells[[v]])) levels(cells[[v]]) else as.character(sort(unique(cells[[v]])))
  if (anyNA(value)) lev <- c(lev, NA) # the missing category of na = "category"
  mom <- core_call(cpp_category_moments, engine_plan(plan, call = call), match(value, lev), length(lev), 0L,
                   call = call)
  data.frame(
    category = lev,
    original = as.vector(tapply(cells$count, factor(value, levels = lev, exclude = NULL), sum, default = 0)),
    perturbation_var = mom$var,
    bound_var = mom$bound
  )
}

#' @export
plan_write.pram_plan <- function(plan, data, cell_id, drawn) {
  changed <- changed_records(cell_id, drawn)
  write_cells(data, plan$cells, changed, drawn[changed])
}

# Only the records that change come back from the core (no vector of every
# record's released cell); the same uniforms as plan_draw(), so the same
# release for the same seed.
#' @export
plan_apply_draws.pram_plan <- function(plan, data, cell_id, ep) {
  ch <- core_call(cpp_draw_changes, ep, cell_id)
  write_cells(data, plan$cells, ch$at, ch$to)
}

show_blocks <- function(b) paste0(if (length(b) == 1) "Block " else "Blocks ", show_value(b))

normalize_blocks <- function(blocks, ncell, call = rlang::caller_env()) {
  if (is.list(blocks)) {
    ok <- vapply(blocks, function(b) is.numeric(b) && all(is.na(b) | b == round(b)), logical(1))
    if (!all(ok)) {
      abort_sdc(c(
        "Every element of {.arg blocks} must be a vector of cell ids.",
        "x" = "Not so: element{if (sum(!ok) > 1) 's' else ''} {show_value(which(!ok))}."
      ), "block", call = call, arg = "blocks")
    }
    return(lapply(blocks, as.integer))
  }
  if (is.atomic(blocks) && length(blocks) == ncell) {
    f <- factor(blocks, exclude = NA)
    ids <- split(seq_len(ncell), f, drop = TRUE)
    return(unname(ids))
  }
  abort_sdc(c(
    "{.arg blocks} must be a list of cell-id vectors or one block label per cell.",
    "x" = "It is {.obj_type_friendly {blocks}} of length {length(blocks)}; there are {fmt_int(ncell)} cells."
  ), "block", call = call, arg = "blocks")
}

normalize_theta <- function(theta, nb, call = rlang::caller_env()) {
  if (is.null(theta)) return(rep(NA_real_, nb))
  if (!is.numeric(theta) || !(length(theta) %in% c(1L, nb)) || any(is.infinite(theta))) {
    abort_sdc(c(
      "{.arg theta} must be one number or one per block ({nb}).",
      "x" = "It is {show_value(theta)}."
    ), "theta", call = call, arg = "theta")
  }
  rep_len(as.numeric(theta), nb)
}

normalize_matrices <- function(matrix, nb, call = rlang::caller_env()) {
  if (is.null(matrix)) return(vector("list", nb))
  if (is.matrix(matrix) && nb == 1) matrix <- list(matrix)
  if (!is.list(matrix) || length(matrix) != nb) {
    abort_sdc(c(
      "{.arg matrix} must be a list with one element (a matrix or {.code NULL}) per block.",
      "x" = "It is {.obj_type_friendly {matrix}} of length {length(matrix)}; the number of blocks is {nb}."
    ), "matrix", call = call, arg = "matrix")
  }
  matrix
}

plan_block_cells <- function(plan, block) {
  plan$block_cells[seq.int(plan$block_start[block] + 1L, length.out = plan$block_start[block + 1L] - plan$block_start[block])]
}

#' Transition matrix of one block of a PRAM plan
#'
#' @param plan A `pram_plan`.
#' @param block The block number.
#' @returns The \eqn{m \times m} column-stochastic matrix
#'   \eqn{p_{ij} = P(Z = c_i | X = c_j)} of the block, with the block's cell
#'   ids as row and column names. For an IFPR block it is computed from
#'   \eqn{\theta} and the counts (Nayak, Zhang and You 2016, Section 3.3).
#' @family plans
#' @export
#' @examples
#' df <- data.frame(k = rep(c("a", "b", "c", "d"), c(1, 2, 2, 5)))
#' cf <- cell_frequencies(df, "k")
#' plan <- pram_plan(cf, list(1:4), theta = 0.5)
#' pram_matrix(plan, 1)
pram_matrix <- function(plan, block) UseMethod("pram_matrix")

#' @export
pram_matrix.default <- function(plan, block) abort_block_plan_only(plan, rlang::current_env())

#' @export
pram_matrix.pram_plan <- function(plan, block) {
  call <- rlang::current_env()
  ep <- engine_plan(plan, call = call)
  block <- check_block_index(plan, block, call = call)
  ids <- plan_block_cells(plan, block)
  # the transition probabilities of the core (PlanView::p)
  p <- core_call(cpp_block_matrix, ep, block, call = call)
  dimnames(p) <- list(ids, ids)
  p
}

# Functions of block plans only (the matrix of a block, unbiasedness per
# block): the error for any other object.
abort_block_plan_only <- function(plan, call) {
  abort_sdc(c(
    "{.arg plan} must be a {.cls pram_plan} object from {.fn pram_plan} or {.fn ifpr}.",
    "x" = "It is {.obj_type_friendly {plan}}."
  ), "argument", call = call, arg = "plan")
}

#' Check that a PRAM plan is unbiased
#'
#' Checks \eqn{P T = T} (Nayak, Zhang and You 2016, eq. 3.3) block by block:
#' then \eqn{E(S | T) = T} and the perturbed frequencies estimate the
#' original ones without bias. IFPR blocks are checked in time linear in the
#' block size, without forming their matrix.
#'
#' @param plan A `pram_plan`.
#' @param tol Largest absolute deviation \eqn{|(PT)_i - T_i|} accepted.
#' @returns A data frame with one row per block: `block`, `cells`, `type`
#'   (`"ifpr"` or `"matrix"`), `max_deviation` and `unbiased`.
#' @family plans
#' @export
#' @examples
#' df <- data.frame(k = rep(c("a", "b", "c"), c(1, 2, 4)))
#' cf <- cell_frequencies(df, "k")
#' pram_unbiased(pram_plan(cf, list(1:3), theta = 0.9))
#' # a matrix that keeps column sums but not the counts
#' p <- matrix(c(0.5, 0.5, 0, 0.5, 0.5, 0, 0, 0, 1), 3)
#' pram_unbiased(pram_plan(cf, list(1:3), matrix = list(p)))
pram_unbiased <- function(plan, tol = 1e-9) UseMethod("pram_unbiased")

#' @export
pram_unbiased.default <- function(plan, tol = 1e-9) abort_block_plan_only(plan, rlang::current_env())

#' @export
pram_unbiased.pram_plan <- function(plan, tol = 1e-9) {
  check_number(tol, min = 0)
  nb <- length(plan$theta)
  # E(S | T) = P T from the core, compared with T cell by cell
  gap <- abs(plan_moments(plan, call = rlang::current_env())$mean - plan$cells$cells$count)
  dev <- numeric(nb)
  if (nb > 0) {
    block <- rep.int(seq_len(nb), diff(plan$block_start))
    dev <- as.vector(tapply(gap[plan$block_cells], factor(block, levels = seq_len(nb)), max))
  }
  data.frame(
    block = seq_len(nb),
    cells = diff(plan$block_start),
    type = ifelse(is.na(plan$theta), "matrix", "ifpr"),
    max_deviation = dev,
    unbiased = dev <= tol
  )
}

#' @export
format.pram_plan <- function(x, ...) {
  validate_pram_plan(x, arg = "x", call = rlang::current_env())
  nb <- length(x$theta)
  counts <- x$cells$cells$count
  in_block <- x$block_cells
  n_ifpr <- sum(!is.na(x$theta))
  th <- unique(stats::na.omit(x$theta))
  th_txt <- if (length(th) == 0) {
    ""
  } else if (length(th) == 1) {
    paste0(", theta = ", format(th, digits = 4))
  } else {
    paste0(", theta ", format(min(th), digits = 4), " to ", format(max(th), digits = 4))
  }
  c(
    paste0(
      "<pram_plan>: ", n_of(nb, "block"), " over ", fmt_int(length(in_block)), " of ",
      n_of(length(counts), "cell"), " (", fmt_int(sum(counts[in_block])), " of ",
      n_of(sum(counts), "record"), ")"
    ),
    paste0(
      "IFPR blocks: ", fmt_int(n_ifpr), th_txt, "; matrix blocks: ", fmt_int(nb - n_ifpr),
      if (nb > 0) paste0("; block sizes ", min(diff(x$block_start)), " to ", max(diff(x$block_start))) else ""
    )
  )
}

#' @export
print.pram_plan <- function(x, ...) {
  writeLines(format(x, ...))
  invisible(x)
}

#' @export
as.data.frame.pram_plan <- function(x, ...) {
  sizes <- diff(x$block_start)
  block <- rep.int(seq_along(sizes), sizes)
  data.frame(
    block = block,
    position = sequence(sizes),
    cell = x$block_cells,
    count = x$cells$cells$count[x$block_cells],
    theta = x$theta[block],
    block_size = sizes[block]
  )
}
