# The clean-up pass of protect_table(): secondary cells that no witness
# table needs are published again, the most expensive first.
#
# Every side of every sensitive cell is proved by one witness table (a
# deviation of the table that keeps every relation and bound, moves only
# suppressed cells and moves the cell by its protection level). A pattern
# stays protected when a cell that no side's witness moves is published, so
# the pass (1) looks again for each side's witness among the suppressed
# cells only, now pricing them at their suppression cost so that witnesses
# avoid expensive cells, (2) publishes every secondary cell no witness
# moves, and (3) for each remaining secondary cell, the most expensive
# first, looks for new witnesses without it for the sides that use it, and
# publishes it when all are found. No cell is ever added, every witness is
# checked to add up and keep the bounds (witness_ok()), and the final audit
# decides as always.

cleanup_pattern <- function(search, todo, call) {
  prep <- search$prep
  sides <- protection_sides(search, todo, call)
  if (!nrow(sides)) return(search)
  # (1) each side's witness, priced
  ref <- vector("list", nrow(sides))
  for (s in seq_len(nrow(sides))) {
    ref[[s]] <- side_witness(search, sides[s, ], exclude = 0L) %||% current_witness(search, sides[s, ])
  }
  secondary <- function() which(search$supp & !prep$sensitive)
  use <- witness_use(ref, prep$structure$ncell)
  # (2) free what no witness moves
  drop <- secondary()[use[secondary()] == 0]
  publish(search, drop)
  # (3) the rest, most expensive first
  cand <- secondary()
  cand <- cand[order(-search$w[cand], cand)]
  for (j in cand) {
    affected <- which(vapply(ref, function(r) any(r$cells == j), logical(1)))
    new <- lapply(affected, function(s) side_witness(search, sides[s, ], exclude = j))
    if (all(!vapply(new, is.null, logical(1)))) {
      ref[affected] <- new
      publish(search, j)
    }
  }
  # the covers, from the witnesses kept
  search$wits <- list()
  search$wit_up[] <- search$wit_dn[] <- 0L
  search$cover_up[] <- search$cover_dn[] <- 0
  for (s in seq_along(ref)) record_witness(search, ref[[s]], sides$cell[s])
  search
}

# Every side (cell, dir, t) of the sensitive cells `todo` that needs a witness.
protection_sides <- function(search, todo, call) {
  out <- lapply(todo, function(i) {
    t <- protection_targets(search, i, call)
    data.frame(cell = i, dir = c(1, -1), t = unname(t))[t > 0, , drop = FALSE]
  })
  do.call(rbind, c(list(data.frame(cell = integer(), dir = numeric(), t = numeric())), out))
}

# The witness the heuristic recorded for a side, as list(cells, y) moving the
# cell in direction dir.
current_witness <- function(search, side) {
  r <- if (side$dir > 0) search$wit_up[side$cell] else search$wit_dn[side$cell]
  w <- search$wits[[abs(r)]]
  list(cells = w$cells, y = sign(r) * w$y)
}

# A witness for the side among the suppressed cells of its search box, other
# than `exclude`, priced so as to avoid expensive cells; NULL if none.
side_witness <- function(search, side, exclude) {
  i <- side$cell
  box <- search_box(search, i, side$t, search$box)$cells
  cells <- box[search$supp[box] & box != exclude]
  if (!i %in% cells) return(NULL)
  y <- deviation_lp(search, i, cells, side$t, side$dir, symmetric = FALSE, priced = TRUE)
  if (is.null(y)) return(NULL)
  # deviation_lp() returns the deviation itself (dir already applied)
  y
}

# How many witnesses move each cell.
witness_use <- function(ref, n) {
  tabulate(unlist(lapply(ref, `[[`, "cells")), n)
}

publish <- function(search, cells) {
  search$supp[cells] <- FALSE
  search$reason[cells] <- ""
  invisible(search)
}
