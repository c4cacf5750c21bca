# The clean-up pass of protect_table(): secondary cells that no witness
# table needs are published again, the most expensive first.
#
# Every side of every sensitive cell is proved by one witness table (a
# deviation of the table that keeps every relation and bound, moves only
# suppressed cells and moves the cell by its protection level). A pattern
# stays protected when a cell that no side's witness moves is published, so
# the pass (1) looks again for each side's witness among the suppressed
# cells only, now pricing them at their suppression cost so that witnesses
# avoid expensive cells (the first pass; a later one, `reprice = FALSE`,
# starts from the witnesses the last one kept), (2) publishes every
# secondary cell no witness moves, and (3) for each remaining secondary cell, the most expensive
# first, looks for new witnesses without it for the sides that use it, and
# publishes it when all are found (no program when the relation bounds of
# the pattern without it already leave a sensitive cell unprotected; the
# side that failed the cell's last trial first; no program either when a
# table found earlier serves, pool_witness()); then (4) tries swaps: a
# secondary cell is published when the sides that use it find witnesses
# whose new cells cost less in all than it does (no program when the
# relations of a side already need published cells that cost as much,
# swap_bound()). After the passes, against the outsider, (5) tries pairs
# (pair_pass()): two of the most expensive secondary cells whose witnesses
# serve a common side are published together when the sides that use
# either find witnesses whose new cells cost less in all than the two.
# The cost only ever falls,
# every witness is checked to add up and keep the bounds (witness_ok()),
# and the final audit decides as always.

cleanup_pattern <- function(search, todo, call, reprice = TRUE, swaps = TRUE) {
  # (the cells the swaps of this pass add: heuristic_pattern() repeats only
  # a pass that added some)
  search$swap_added <- 0L
  sides <- protection_sides(search, todo, call)
  if (!nrow(sides)) return(search)
  # the side that last kept each cell from being published (its trials
  # try it first: a trial that fails again then takes one program), kept
  # across passes
  if (is.null(search$blocker)) search$blocker <- integer(search$prep$structure$ncell)
  # (the heuristic's witness tables start the pool of its trials)
  if (is.null(search$pool)) pool_add(search, search$wits)
  ref <- if (reprice) priced_witnesses(search, sides) else kept_witnesses(search, sides)
  publish_idle(search, ref)
  ref <- publish_one_by_one(search, sides, ref, call)
  # (without `swaps`, the backward pattern's first clean-up, publishing only:
  # backward_pattern())
  if (swaps) ref <- swap_secondary(search, sides, ref)
  record_covers(search, sides, ref)
}

# The covers of the sensitive cells from the witnesses `ref`, one per side
# of `sides`, which replace the search's.
record_covers <- function(search, sides, ref) {
  search$wits <- list()
  search$wit_up[] <- search$wit_dn[] <- 0L
  search$cover_up[] <- search$cover_dn[] <- 0
  mirror_ok <- witnesses_ok(search$prep, lapply(ref, mirror_image))
  for (s in seq_along(ref)) record_witness(search, ref[[s]], sides$cell[s], mirror_ok[s])
  search
}

# (5) The pair swaps after the clean-up's passes (against the outsider and
# with method = "optimal": search$pair_swaps): one round of swap_pairs()
# from the witnesses the passes kept, then, when it published cells, one
# more pass of the clean-up from its witnesses (what the pairs' new cells
# make unnecessary). Once, not in every pass: their programs move many
# sides each (on the 755-cell table of the sweep, pairs in every pass of
# both patterns took 60% of the time).
pair_pass <- function(search, todo, call) {
  sides <- protection_sides(search, todo, call)
  if (!nrow(sides)) return(invisible(search))
  search$swap_added <- 0L
  ref <- swap_pairs(search, sides, kept_witnesses(search, sides))
  record_covers(search, sides, ref)
  if (search$swap_added > 0L) cleanup_pattern(search, todo, call = call, reprice = FALSE)
  invisible(search)
}

# (1) Each side's witness, looked for again among the suppressed cells,
# priced so that it avoids expensive cells (the heuristic's own when none
# is found); a witness through sensitive cells alone costs nothing and
# stays. Returns the witnesses, one per side.
priced_witnesses <- function(search, sides) {
  ref <- kept_witnesses(search, sides)
  tick <- table_progress("Clean-up: witness tables", nrow(sides))
  for (s in seq_len(nrow(sides))) {
    tick()
    if (all(search$prep$sensitive[ref[[s]]$cells])) next
    ref[[s]] <- side_witness(search, side_at(sides, s), exclude = 0L) %||% ref[[s]]
  }
  tick(done = TRUE)
  ref
}

# (1') Each side's witness as the heuristic or the last pass kept it (a
# later pass's start, `reprice = FALSE`, and what (1) prices again).
kept_witnesses <- function(search, sides) {
  lapply(seq_len(nrow(sides)), function(s) current_witness(search, side_at(sides, s)))
}

# (2) Publish every secondary cell that no witness in `ref` moves.
publish_idle <- function(search, ref) {
  secondary <- secondary_cells(search)
  use <- witness_use(ref, search$prep$structure$ncell)
  publish(search, secondary[use[secondary] == 0])
}

# (3) Each secondary cell, the most expensive first, is published when every
# side whose witness moves it finds another witness without it. Returns the
# witnesses.
publish_one_by_one <- function(search, sides, ref, call) {
  cand <- costliest_first(search)
  # (in the cheap tail, only cells that no witness moves: no program)
  tail <- cheap_tail(search, cand, pass = TRUE)
  tick <- table_progress("Clean-up: publishing secondary cells", length(cand))
  use <- ref_use(ref)
  for (k in seq_along(cand)) {
    j <- cand[k]
    tick()
    affected <- sides_using(use, j)
    if (tail[k] && length(affected)) next
    # (no program when the relations alone show the pattern without j
    # unprotected)
    if (length(affected) && relation_breach(search$prep, replace(search$supp, j, FALSE), j, call)) next
    affected <- blocker_first(search, affected, j)
    found <- witnesses_without(search, sides, affected, j)
    if (!is.null(found)) {
      ref[affected] <- found
      use <- ref_use(ref)
      publish(search, j)
    }
  }
  tick(done = TRUE)
  ref
}

# New witnesses without cell j for the sides `affected`, among the
# suppressed cells, or NULL when one of them has none.
witnesses_without <- function(search, sides, affected, j) {
  out <- vector("list", length(affected))
  for (k in seq_along(affected)) {
    w <- side_witness(search, side_at(sides, affected[k]), exclude = j, pool = TRUE)
    if (is.null(w)) {
      search$blocker[j] <- affected[k]
      return(NULL)
    }
    out[[k]] <- w
  }
  out
}

# The sides `affected` with the one that last kept cell j suppressed
# (search$blocker) first. (Whether all of them find a witness does not
# depend on the order.)
blocker_first <- function(search, affected, j) {
  b <- search$blocker[j]
  if (b > 0L && b %in% affected) c(b, affected[affected != b]) else affected
}

# (4) Swaps: each secondary cell, the most expensive first, is published
# when the sides that use it find new witnesses whose new cells cost less
# in all than it does; the cells no witness needs any more are published
# after each swap. Returns the witnesses.
swap_secondary <- function(search, sides, ref) {
  cand <- costliest_first(search)
  tail <- cheap_tail(search, cand, pass = TRUE)
  tick <- table_progress("Clean-up: swaps", length(cand))
  use <- ref_use(ref)
  for (k in seq_along(cand)) {
    j <- cand[k]
    tick()
    if (!search$supp[j]) next
    affected <- sides_using(use, j)
    if (!length(affected)) {
      publish(search, j)
      next
    }
    if (tail[k]) next
    swap <- swap_witnesses(search, sides, affected, j)
    if (is.null(swap)) next
    ref <- apply_swap(search, sides, ref, affected, j, swap)
    use <- ref_use(ref)
  }
  tick(done = TRUE)
  ref
}

# A swap found for the cells j (one, or a pair), made: the sides `affected`
# take its witnesses, its new cells are named after the first side's cell
# (swap_witnesses() suppressed them), j is published, and so is every cell
# no witness moves any more. Returns the witnesses.
apply_swap <- function(search, sides, ref, affected, j, swap) {
  ref[affected] <- swap$witnesses
  search$swap_added <- search$swap_added + length(swap$added)
  publish(search, j)
  env_set(search, "reason", swap$added, paste("protects", search$labels[sides$cell[affected[1]]]))
  publish_idle(search, ref)
  ref
}

# New witnesses without cell j for the sides `affected`, published cells of
# their boxes allowed, whose new cells cost less in all than j: the cells
# they add are suppressed (and free for the next side's witness) and
# list(witnesses, added) returned; otherwise NULL, with nothing added.
swap_witnesses <- function(search, sides, affected, j) {
  # (no program when a side's relations alone show that its new cells cost
  # at least j: swap_bound())
  bounds <- swap_bounds(search, list(cell = sides$cell[affected], dir = sides$dir[affected], t = sides$t[affected]),
                        j, search$w[j])
  if (length(bounds) && bounds[length(bounds)] >= search$w[j]) {
    search$blocker[j] <- affected[length(bounds)]
    return(NULL)
  }
  added <- integer()
  out <- vector("list", length(affected))
  # the side that made j's last trial fail, alone first: when its own new
  # cells already cost as much as j, the swap is not tried (the cells the
  # others would add first could make it cheaper: the heuristic's choice,
  # which saves the programs of trials that fail again; it changed no
  # pattern of the bench tables measured, bench/README.md)
  b <- search$blocker[j]
  wb <- NULL
  if (b > 0L && b %in% affected && length(affected) > 1L) {
    wb <- side_witness(search, side_at(sides, b), exclude = j, add = TRUE, pool = TRUE)
    if (is.null(wb) || sum(search$w[wb$cells[!search$supp[wb$cells]]]) >= search$w[j]) return(NULL)
  }
  for (k in seq_along(affected)) {
    # (the blocker's witness again when nothing was added before it)
    w <- if (!is.null(wb) && affected[k] == b && !length(added)) wb else
      side_witness(search, side_at(sides, affected[k]), exclude = j, add = TRUE, pool = TRUE)
    extra <- if (!is.null(w)) setdiff(w$cells[!search$supp[w$cells]], added)
    if (is.null(w) || sum(search$w[c(added, extra)]) >= search$w[j]) {
      env_set(search, "supp", added, FALSE)
      search$blocker[j] <- affected[k]
      return(NULL)
    }
    out[[k]] <- w
    env_set(search, "supp", extra, TRUE)
    added <- c(added, extra)
  }
  list(witnesses = out, added = added)
}

# (5) Pair swaps: the pairs of the cleanup_pair_cells most expensive
# secondary cells whose witnesses serve a common side, the costliest first,
# each published together when the sides that use either find new
# witnesses without both whose new cells cost less in all than the two
# (a cell a single swap cannot replace can be, with its partner: on the
# 218-cell PUMA x education x race table of the sweep, where GaussSuppression
# chose nine cheap cells for four of the heuristic's, no single swap
# could); the cells no witness needs any more are published after each.
# No pool (its tables exclude one cell) and no blocker (single swaps keep
# theirs). Returns the witnesses.
swap_pairs <- function(search, sides, ref) {
  cand <- costliest_first(search)
  top <- cand[seq_len(min(cleanup_pair_cells, length(cand)))]
  if (length(top) < 2L) return(ref)
  pairs <- utils::combn(top, 2L)
  use <- ref_use(ref)
  tick <- table_progress("Clean-up: pair swaps", ncol(pairs))
  for (k in seq_len(ncol(pairs))) {
    tick()
    j <- pairs[, k]
    if (!all(search$supp[j])) next
    used <- lapply(j, function(jj) sides_using(use, jj))
    if (!length(intersect(used[[1]], used[[2]]))) next
    affected <- union(used[[1]], used[[2]])
    swap <- pair_witnesses(search, sides, affected, j)
    if (is.null(swap)) next
    ref <- apply_swap(search, sides, ref, affected, j, swap)
    use <- ref_use(ref)
  }
  tick(done = TRUE)
  ref
}

# New witnesses without the cells j (a pair) for the sides `affected`,
# published cells of their boxes allowed, whose new cells cost less in all
# than the cells j: as swap_witnesses() for one cell (the cells added are
# suppressed, list(witnesses, added) returned; otherwise NULL, with nothing
# added).
pair_witnesses <- function(search, sides, affected, j) {
  limit <- sum(search$w[j])
  # (no program when a side's relations alone show that its new cells cost
  # at least the two: swap_bound() without either cell, the other counted
  # as suppressed, bounds the new cells of every witness without both)
  # (the sides with the largest bounds first: a trial that fails stops at
  # its first side whose new cells cost too much)
  bound <- numeric(length(affected))
  for (jj in j) {
    b <- swap_bounds(search, list(cell = sides$cell[affected], dir = sides$dir[affected], t = sides$t[affected]),
                     jj, limit)
    if (length(b) && b[length(b)] >= limit) return(NULL)
    bound <- pmax(bound, b)
  }
  ord <- order(-bound, seq_along(affected))
  affected <- affected[ord]
  added <- integer()
  out <- vector("list", length(affected))
  for (k in seq_along(affected)) {
    w <- side_witness(search, side_at(sides, affected[k]), exclude = j, add = TRUE)
    extra <- if (!is.null(w)) setdiff(w$cells[!search$supp[w$cells]], added)
    if (is.null(w) || sum(search$w[c(added, extra)]) >= limit) {
      env_set(search, "supp", added, FALSE)
      return(NULL)
    }
    out[[k]] <- w
    env_set(search, "supp", extra, TRUE)
    added <- c(added, extra)
  }
  list(witnesses = out[order(ord)], added = added)
}

# A lower bound on the cost of the published cells that any witness for
# `side` without cell j must move (whatever its box: the swap's witnesses
# are within the side's search box, which the cells a trial adds may
# change). In each relation of the side's cell, the cells other than it and
# j must move by the side's level t in all, in the direction that offsets
# it. When the suppressed ones among them cannot, by their capacities in
# that direction, some published cell of the relation must move, costing
# at least the cheapest of those. The bound is the largest of these over
# the relations (Inf when such a relation has no published cell that can
# move that way: no witness at all), 0 when the suppressed cells suffice in
# every relation. (Their sum, when no published cell is in two of the
# relations, refused no more trials on R1-R4.) No program: a swap whose
# bound reaches j's cost fails whatever its programs would find
# (swap_witnesses() compares the cost of all the new cells with j's); on
# the bench table R4 this ended 71 of its 119 trials.
swap_bound <- function(search, side, j) {
  swap_bounds(search, side, j, Inf)
}

# swap_bound() of the sides `sides` (cell, dir, t; a data frame or a list
# of columns) in turn, in the core (sdcRisk::swap_bounds(); in R, the loop
# over each side's relations took a tenth of the outsider's time on R4 of
# the bench, some 3,500 calls a table); stops after the first bound that
# reaches `limit` and returns the bounds found, that one last.
swap_bounds <- function(search, sides, j, limit) {
  core_call(cpp_swap_bounds, relation_index_of(search$prep), search$cap_up, search$cap_dn, search$supp, search$w,
            as.integer(sides$cell), as.double(sides$dir), as.double(sides$t), as.integer(j),
            10 * audit_tolerance, as.double(limit))
}

# The secondary cells, and the same the most expensive first.
secondary_cells <- function(search) which(search$supp & !search$prep$sensitive)
costliest_first <- function(search) {
  cand <- secondary_cells(search)
  cand[order(-search$w[cand], cand)]
}

# Which candidates `cand` (costliest first) lie in the cheap tail whose
# trials are not run: the last ones, that together cost less than the
# share search$tail_share of all of them (against the respondents,
# cleanup_respondent_tail for their clean-up and, with `pass`,
# cleanup_respondent_pass_tail for the clean-up pass before their rounds,
# set by protection_pattern(); 0, none, otherwise; the options
# sdcRisk.cleanup_tail and sdcRisk.cleanup_pass_tail, undocumented, set
# them for the tests and the bench). Publishing every cell of the tail
# would save less than that share of the candidates' cost.
cheap_tail <- function(search, cand, pass = FALSE) {
  share <- if (pass) getOption("sdcRisk.cleanup_pass_tail", search$pass_tail_share %||% 0) else
    getOption("sdcRisk.cleanup_tail", search$tail_share %||% 0)
  if (!length(cand) || share <= 0) return(logical(length(cand)))
  w <- search$w[cand]
  rev(cumsum(rev(w))) < share * sum(w)
}

# The witnesses of `ref` (one per side) flattened: the cells they move and
# the side of each, for sides_using(); built again only when `ref` changes
# (flattened on every call, it took a thirtieth of the default's time on
# R4 of the bench).
ref_use <- function(ref) {
  cells <- lapply(ref, `[[`, "cells")
  list(cell = unlist(cells, use.names = FALSE), side = rep.int(seq_along(ref), lengths(cells)))
}

# A witness table's mirror image (list(cells, y) with -y).
mirror_image <- function(w) list(cells = w$cells, y = -w$y)

# The sides whose witness moves cell j (`use`: ref_use() of the witnesses),
# in the order of the sides.
sides_using <- function(use, j) unique(use$side[use$cell == j])

# Side s of `sides` (protection_sides()) as a list (cell, dir, t): a row
# of the data frame without `[.data.frame`, which the clean-up's trials
# would call thousands of times.
side_at <- function(sides, s) list(cell = sides$cell[s], dir = sides$dir[s], t = sides$t[s])

# Every side (cell, dir, t) of the sensitive cells `todo` that needs a witness.
protection_sides <- function(search, todo, call) {
  t <- as.vector(vapply(todo, function(i) unname(protection_targets(search, i, call)), numeric(2)))
  cell <- rep(todo, each = 2L)
  dir <- rep(c(1, -1), length(todo))
  keep <- t > 0
  data.frame(cell = cell[keep], dir = dir[keep], t = t[keep])
}

# The witness the heuristic recorded for a side, as list(cells, y) moving the
# cell in direction dir.
current_witness <- function(search, side) {
  r <- if (side$dir > 0) search$wit_up[side$cell] else search$wit_dn[side$cell]
  w <- search$wits[[abs(r)]]
  list(cells = w$cells, y = sign(r) * w$y)
}

# A witness for the side among the suppressed cells of its search box, other
# than `exclude` (a cell, or the cells of a pair swap), priced so as to
# avoid expensive cells; NULL if none. With
# `add`, published cells of the box may take part too (at their cost, the
# suppressed ones free). With `pool`, a table of the pool serves first
# (pool_witness(): it moves suppressed cells only, so a swap adds no cell
# for it).
side_witness <- function(search, side, exclude, add = FALSE, pool = FALSE) {
  # (the option sdcRisk.cleanup_pool, undocumented, lets the tests compare
  # the clean-up without the pool)
  if (pool && getOption("sdcRisk.cleanup_pool", TRUE)) {
    w <- pool_witness(search, side, exclude)
    if (!is.null(w)) return(w)
  }
  i <- side$cell
  box <- search_box(search, i, side$t, search$box)$cells
  cells <- box[(add | search$supp[box]) & if (length(exclude) == 1L) box != exclude else !box %in% exclude]
  if (!i %in% cells) return(NULL)
  y <- deviation_lp(search, i, cells, side$t, side$dir, symmetric = FALSE, priced = !add,
                    scope = if (add) box else cells)
  if (is.null(y)) return(NULL)
  # deviation_lp() returns the deviation itself (dir already applied)
  pool_add(search, list(y))
  y
}

# The pool of witness tables: every table the heuristic kept and every one
# the clean-up found, indexed by the sensitive cells each moves (cell, its
# move, the table). A trial of the clean-up looks there before it solves a
# program: a table of the pool that moves only suppressed cells other than
# the one tried, and moves the side's cell by at least its level in its
# direction, is a witness for the side once scaled down to that level (a
# deviation scaled by a factor in (0, 1] still adds up and keeps the
# bounds, which hold at 0). Of those, the one the clean-up's pricing
# (deviation_lp()) finds cheapest; it is checked again (witness_ok())
# before use. The trials' and swaps' tables then avoid expensive cells less
# surely than their priced programs would: on R1-R4 and tables 1, 2 and L
# of the bench the patterns stayed the same (R4 against the outsider: 678
# -> 448 programs), on 5 of 120 random tables they changed, to a value
# within 2% either way.
pool_add <- function(search, ws) {
  p <- search$pool
  if (is.null(p)) {
    p <- search$pool <- new.env(parent = emptyenv())
    p$wits <- list()
    p$ids <- p$moves <- vector("list", search$prep$structure$ncell)
    # (the tables flattened for the core, in buffers that double when full:
    # 0-based cells, moves, and the offset of each table, n_wits + 1 used;
    # `wits` keeps each table as found, the one pool_witness() returns)
    p$cell0 <- integer(64L)
    p$yflat <- numeric(64L)
    p$start <- integer(64L)
    p$n_entry <- 0L
  }
  if (!length(ws)) return(invisible(search))
  sens <- search$prep$sensitive
  wits <- p$wits
  ids <- p$ids
  moves <- p$moves
  p$wits <- p$ids <- p$moves <- NULL
  n0 <- length(wits)
  for (w in ws) {
    k <- length(wits) + 1L
    wits[[k]] <- w
    on <- which(sens[w$cells])
    for (h in on) {
      cell <- w$cells[h]
      ids[[cell]] <- c(ids[[cell]], k)
      moves[[cell]] <- c(moves[[cell]], w$y[h])
    }
  }
  p$wits <- wits
  p$ids <- ids
  p$moves <- moves
  cells <- lapply(ws, `[[`, "cells")
  n_new <- sum(lengths(cells))
  at <- p$n_entry + seq_len(n_new)
  grow <- function(v, n) if (n > length(v)) c(v, vector(typeof(v), max(n, 2L * length(v)) - length(v))) else v
  cell0 <- grow(p$cell0, p$n_entry + n_new)
  yflat <- grow(p$yflat, p$n_entry + n_new)
  start <- grow(p$start, length(wits) + 1L)
  p$cell0 <- p$yflat <- p$start <- NULL
  cell0[at] <- as.integer(unlist(cells, use.names = FALSE)) - 1L
  yflat[at] <- as.double(unlist(lapply(ws, `[[`, "y"), use.names = FALSE))
  start[n0 + 1L + seq_along(ws)] <- p$n_entry + cumsum(lengths(cells))
  p$cell0 <- cell0
  p$yflat <- yflat
  p$start <- start
  p$n_entry <- p$n_entry + n_new
  invisible(search)
}

# (the cheapest usable table in the core: pool_cheapest() of
# table_components.hpp, which prices every candidate as move_price() does
# and adds the costs as sum() does; in R, the loop over the candidates took
# a twentieth of the default's time on R4 of the bench, 2,300 candidates
# a table)
pool_witness <- function(search, side, exclude) {
  p <- search$pool
  if (is.null(p)) return(NULL)
  i <- side$cell
  mv <- side$dir * p$moves[[i]]
  ok <- mv >= side$t
  cand <- p$ids[[i]][ok]
  if (!length(cand)) return(NULL)
  scale <- side$t / mv[ok]
  h <- core_call(cpp_pool_cheapest, p$cell0, p$yflat, p$start, length(p$wits), p$n_entry, cand, scale,
                 search$supp, search$prep$sensitive, search$cap_up, search$cap_dn, search$w, side$t,
                 as.integer(exclude))
  if (h == 0L) return(NULL)
  w <- p$wits[[cand[h]]]
  best <- list(cells = w$cells, y = w$y * scale[h])
  if (!witness_ok(search, best$cells, best$y)) return(NULL)
  best
}

# How many witnesses move each cell.
witness_use <- function(ref, n) {
  tabulate(unlist(lapply(ref, `[[`, "cells")), n)
}

publish <- function(search, cells) {
  env_set(search, "supp", cells, FALSE)
  env_set(search, "reason", cells, "")
  invisible(search)
}
