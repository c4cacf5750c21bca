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

validate_pram_plan <- function(plan, call = rlang::caller_env()) {
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
    ), "block", call = call)
  }
  if (anyNA(ids) || any(ids < 1L | ids > ncell)) {
    bad <- unique(ids[is.na(ids) | ids < 1L | ids > ncell])
    abort_sdc(c(
      "{.arg blocks} must contain cell ids between 1 and {fmt_int(ncell)}.",
      "x" = "Found {show_value(bad)}."
    ), "block", call = call)
  }
  if (anyDuplicated(ids)) {
    dup <- unique(ids[duplicated(ids)])
    abort_sdc(c(
      "Blocks must be disjoint: no cell may be in two blocks of {.arg blocks}.",
      "x" = "Cell id{if (length(dup) > 1) 's' else ''} {show_value(dup)} appear{if (length(dup) > 1) '' else 's'} more than once."
    ), "block_overlap", call = call)
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
    ), "theta", call = call)
  }
  plan
}

show_blocks <- function(b) paste0(if (length(b) == 1) "Block " else "Blocks ", show_value(b))

normalize_blocks <- function(blocks, ncell, call = rlang::caller_env()) {
  if (is.list(blocks)) {
    ok <- vapply(blocks, function(b) is.numeric(b) && all(is.na(b) | b == round(b)), logical(1))
    if (!all(ok)) {
      abort_sdc(c(
        "Every element of {.arg blocks} must be a vector of cell ids.",
        "x" = "Not so: element{if (sum(!ok) > 1) 's' else ''} {show_value(which(!ok))}."
      ), "block", call = call)
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
  ), "block", call = call)
}

normalize_theta <- function(theta, nb, call = rlang::caller_env()) {
  if (is.null(theta)) return(rep(NA_real_, nb))
  if (!is.numeric(theta) || !(length(theta) %in% c(1L, nb)) || any(is.infinite(theta))) {
    abort_sdc(c(
      "{.arg theta} must be one number or one per block ({nb}).",
      "x" = "It is {show_value(theta)}."
    ), "theta", call = call)
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
    ), "matrix", call = call)
  }
  matrix
}

# The plan as the C++ glue reads it.
plan_cpp <- function(plan) {
  list(
    counts = plan$cells$cells$count,
    block_start = plan$block_start,
    block_cells = plan$block_cells,
    theta = plan$theta,
    matrix = plan$matrix,
    matrix_start = plan$matrix_start
  )
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
pram_matrix <- function(plan, block) {
  check_pram_plan(plan)
  block_matrix(plan, check_block_index(plan, block))
}

# The matrix of block `block` of a checked plan.
block_matrix <- function(plan, block) {
  ids <- plan_block_cells(plan, block)
  # the transition probabilities of the core (PlanView::p)
  p <- cpp_block_matrix(plan_cpp(plan), block)
  dimnames(p) <- list(ids, ids)
  p
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
pram_unbiased <- function(plan, tol = 1e-9) {
  check_pram_plan(plan)
  check_number(tol, min = 0)
  nb <- length(plan$theta)
  # E(S | T) = P T from the core, compared with T cell by cell
  gap <- abs(cpp_block_moments(plan_cpp(plan))$mean - plan$cells$cells$count)
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
