# Partition sets (Nayak, Zhang & You 2016, Section 5, Step 3) and IFPR block
# design within a set (Step 4 and the tiered generalization).

# ---------------------------------------------------------------------------
# Partition

# The group of every cell for each partition variable, as a data frame of
# integer group indices (columns in the order of `partition`) with the group
# labels as an attribute. Variables not named in `partition` change freely.
partition_groups <- function(cells, vars, partition, call = rlang::caller_env()) {
  if (is.null(partition) || length(partition) == 0) {
    return(structure(data.frame(row.names = seq_len(nrow(cells))), labels = list()))
  }
  if (!is.list(partition) || is.null(names(partition)) || any(names(partition) == "") ||
    anyDuplicated(names(partition))) {
    abort_sdc(c(
      "{.arg partition} must be a list named by variables, such as {.code list(sex = \"keep\", age = c(0, 18, 65, Inf))}.",
      "x" = "It is {.obj_type_friendly {partition}}{if (is.list(partition)) ' without unique names' else ''}."
    ), "partition", call = call, arg = "partition")
  }
  unknown <- setdiff(names(partition), vars)
  if (length(unknown) > 0) {
    abort_sdc(c(
      "Every variable named in {.arg partition} must be one of {.arg keys} or {.arg also}.",
      "x" = "Not among them: {.val {unknown}}.",
      "i" = "The perturbed variables are {.val {vars}}."
    ), "unknown_key", call = call, arg = "partition")
  }
  out <- list()
  labels <- list()
  for (v in names(partition)) {
    g <- partition_variable(cells[[v]], partition[[v]], v, call)
    out[[v]] <- g$index
    labels[[v]] <- g$labels
  }
  keep <- names(partition)[vapply(partition, identical, logical(1), "keep")]
  structure(as.data.frame(out, optional = TRUE), labels = labels, keep = keep)
}

# Group index and labels of one variable's values under one partition rule.
partition_variable <- function(x, spec, v, call) {
  if (identical(spec, "keep")) {
    # labels of the distinct values only (x has one value per cell, millions
    # at census scale): the groups are those of as.character(x)
    codes <- if (is.factor(x)) as.integer(x) else x
    u <- unique(codes)
    lab_u <- if (is.factor(x)) levels(x)[u] else as.character(u)
    lab <- sort(unique(lab_u), na.last = TRUE, method = "radix")
    return(list(index = match(lab_u, lab)[match(codes, u)], labels = lab))
  }
  key <- if (is.factor(x)) as.character(x) else x
  if (is.numeric(spec) && is.null(names(spec)) && is.numeric(x) && !is.factor(x)) {
    br <- sort(unique(spec))
    idx <- findInterval(x, br, rightmost.closed = FALSE)
    bad <- is.na(x) | idx < 1 | idx >= length(br)
    if (any(bad)) {
      abort_sdc(c(
        "The breaks of {.arg partition}${.field {v}} must cover every value of {.var {v}}.",
        "x" = "Not covered: {show_value(sort(unique(x[bad])))}.",
        "i" = "Groups are [b_k, b_(k+1)); add {.code -Inf} or {.code Inf} as an outer break."
      ), "partition", call = call, arg = "partition")
    }
    lab <- paste0("[", format(br[-length(br)], trim = TRUE), ",", format(br[-1], trim = TRUE), ")")
    return(list(index = idx, labels = lab))
  }
  if (is.list(spec)) {
    sets <- lapply(spec, as.character)
    lab <- if (is.null(names(spec))) as.character(seq_along(sets)) else names(spec)
    member <- rep(seq_along(sets), lengths(sets))
    values <- unlist(sets, use.names = FALSE)
    if (anyDuplicated(values)) {
      abort_sdc(c(
        "Each value may appear in one level set of {.arg partition}${.field {v}} only.",
        "x" = "In more than one: {.val {unique(values[duplicated(values)])}}."
      ), "partition", call = call, arg = "partition")
    }
    idx <- member[match(as.character(key), values)]
  } else if (is.atomic(spec) && !is.null(names(spec))) {
    lab <- unique(as.character(spec))
    idx <- match(as.character(spec), lab)[match(as.character(key), names(spec))]
  } else {
    abort_partition_spec(spec, x, v, call)
  }
  if (anyNA(idx)) {
    miss <- sort(unique(as.character(key[is.na(idx)])), na.last = TRUE)
    abort_sdc(c(
      "The mapping in {.arg partition}${.field {v}} misses {if (length(miss) == 1) 'a value' else 'values'} of {.var {v}}.",
      "x" = "Not mapped: {.val {miss}}.",
      "i" = "Every value in the data must belong to one group."
    ), "partition", call = call, arg = "partition")
  }
  list(index = idx, labels = lab)
}

# A rule partition_variable() cannot read: the value shown, "keep" suggested
# for a misspelling of it (issue 37: "kep" was reported as "a string"),
# and breaks for a variable that is not numeric named as such.
abort_partition_spec <- function(spec, x, v, call) {
  word <- is.character(spec) && length(spec) == 1L && !is.na(spec)
  abort_sdc(c(
    "{.arg partition}${.field {v}} must be {.val keep}, a named vector mapping values to groups, a list of level sets, or breaks for a numeric variable.",
    "x" = if (word) "It is the string {.val {spec}}." else "It is {.obj_type_friendly {spec}}.",
    "i" = if (word && utils::adist(tolower(spec), "keep") <= 2) {
      "Did you mean {.val keep}?"
    } else if (is.numeric(spec) && is.null(names(spec))) {
      "Breaks need a numeric variable, and {.var {v}} is {.obj_type_friendly {x}}: map its values to groups with a named vector or a list of level sets."
    }
  ), "partition", call = call, arg = "partition")
}

# Set id of every cell and one row per set with its group labels.
partition_sets <- function(groups) {
  if (ncol(groups) == 0) {
    return(list(set_of_cell = rep(1L, nrow(groups)), sets = data.frame(set = 1L, label = "(all records)")))
  }
  cf <- cell_frequencies(groups, names(groups))
  labels <- attr(groups, "labels")
  lab <- do.call(paste, c(lapply(names(groups), function(v) {
    paste0(v, " ", labels[[v]][cf$cells[[v]]])
  }), sep = ", "))
  sets <- data.frame(set = seq_len(nrow(cf$cells)), label = lab)
  attr(sets, "keep") <- match(attr(groups, "keep"), names(groups))
  sets$coords <- lapply(seq_len(nrow(cf$cells)), function(s) {
    matrix(vapply(names(groups), function(v) cf$cells[[v]][s], numeric(1)), nrow = 1)
  })
  list(set_of_cell = cf$cell_id, sets = sets)
}

# ---------------------------------------------------------------------------
# Block design within one partition set

# Which cells a goal needs protected: those whose risk outside every block
# exceeds their bound (xi, or one bound per cell). Goal 3 (every a): R = 1 / T
# at a = T, so T * bound < 1. Goals 1 and 2 (a = 1 only): only singletons
# have a unique match when unperturbed, with risk 1.
needs_protection <- function(counts, bound, goal) {
  if (goal == "all_matches") counts * bound < 1 else counts == 1 & bound < 1
}

# Sizes of floor(n / size) contiguous blocks of as equal size as possible,
# each with at least `size` cells. Designs are kept flat: the cells of all
# blocks in block order, and the block sizes.
chunk_sizes <- function(n, size) {
  k <- max(1L, n %/% size)
  as.integer(n %/% k + (seq_len(k) <= n %% k))
}

no_blocks <- function() list(cells = integer(), sizes = integer(), theta = numeric())

# Nayak et al.'s Step 4: one theta for every block; blocks of all singleton
# (Goal 1) or singleton and doubleton (Goals 2, 3) cells of the set, padded
# with the smallest cells of larger count up to m0, optionally split into
# blocks of at least m0 cells. With a bound per cell, theta is that of the
# smallest bound of those cells, and a cell with bound 1 needs nothing.
design_nayak <- function(ids, counts, bound, goal, split) {
  need <- (if (goal == "sample_uniques") counts == 1 else counts <= 2) & bound < 1
  if (!any(need)) return(no_blocks())
  d <- ifpr_theta(min(bound[need]), goal)
  m0 <- d$block_size
  block <- ids[need][order(counts[need], ids[need])]
  short <- m0 - length(block)
  if (short > 0) {
    pad <- which(!need)
    pad <- pad[order(counts[pad], ids[pad])]
    if (length(pad) < short) {
      return(list(lacks = sprintf(
        "%d cell%s of count %s need a block of at least %d cells; the set has %d other cell%s",
        sum(need), if (sum(need) == 1) "" else "s", if (goal == "sample_uniques") "1" else "1 or 2",
        m0, length(pad), if (length(pad) == 1) "" else "s"
      )))
    }
    block <- c(block, ids[pad[seq_len(short)]])
  }
  sizes <- if (split) chunk_sizes(length(block), m0) else length(block)
  list(cells = block, sizes = sizes, theta = rep(d$theta, length(sizes)))
}

# The tiered design, for any xi in (0, 1) and every goal. Cells needing
# protection are taken by count f, smallest first. A block whose cells all
# have count >= f may use theta up to f; theta_f solves psi(f, theta) = xi
# (Ghatak et al.), so every cell of count f in it has R_j(1, t) <= xi
# (eq. 4.12), and with at least ceiling(f / (f - theta_f)) cells the risk is
# largest at a = 1 (beta_j >= beta_i; Ghatak et al., Theorem 3.1). Cells of
# count f form blocks of that minimum size; a tier with too few cells is
# padded with cells of larger count c for which psi(c, theta_f) <= xi (psi is
# not monotone in T, so every count is checked), taking cells that need
# protection themselves first, then the smallest safe ones; failing that, its
# cells join blocks already made in the set (join_block()).
#
# `bound` holds the bound of every cell (xi for all of them in the plain
# case). A tier of count f with cells of several bounds is taken bound by
# bound, smallest first, each part a tier of its own with xi its bound; it
# may be padded with cells of count f and a larger bound too. With one bound
# for every cell this is the design above, step for step.
design_tiered <- function(ids, counts, bound, goal, avoid = NULL) {
  need <- needs_protection(counts, bound, goal)
  assigned <- logical(length(ids))
  pos <- list() # positions within the set, block after block
  sizes <- integer()
  theta <- numeric()
  smallest <- integer() # smallest count of each block
  joined <- list(pos = integer(), block = integer())
  min_size <- function(f, th) {
    if (goal == "all_matches") pmax(2, core_call(cpp_design, "ceiling", f / (f - th), numeric())) else rep(2, length(f))
  }
  ids_sorted <- !is.unsorted(ids)
  for (tier in tier_pools(need, counts, bound)) {
    f <- tier$f
    xi <- tier$xi
    pool <- tier$pos[!assigned[tier$pos]]
    if (length(pool) == 0) next
    th <- core_call(cpp_design, "theta_psi", xi, f)
    m <- min_size(f, th)
    if (!ids_sorted) pool <- pool[order(ids[pool])]
    if (!is.null(avoid) && !all(is.na(avoid$group[pool, ]))) {
      # intruders who know fewer keys (design-known.R): blocks whose cells
      # such an intruder can tell apart, padded where the tier cannot
      cand <- which(!assigned & (counts > f | (counts == f & bound > xi)))
      if (goal != "sample_uniques") {
        cand <- cand[core_call(cpp_design, "psi", counts[cand], rep(th, length(cand))) <= bound[cand]]
      }
      cand <- cand[order(!need[cand], counts[cand], avoid$rank[cand])]
      tb <- avoid_blocks(pool[order(avoid$rank[pool])], m, cand, avoid$group)
      for (b in tb$blocks) {
        assigned[b] <- TRUE
        pos[[length(pos) + 1]] <- b
        sizes <- c(sizes, length(b))
        theta <- c(theta, th)
        smallest <- c(smallest, f)
      }
      pool <- tb$rest
      if (length(pool) == 0) next
    }
    if (length(pool) >= m) {
      new_pos <- pool
      new_sizes <- chunk_sizes(length(pool), m)
    } else {
      cand <- which(!assigned & (counts > f | (counts == f & bound > xi)))
      if (goal != "sample_uniques") {
        # a padding cell of count c keeps R(1) <= psi(c, theta_f): must be
        # within its bound
        cand <- cand[core_call(cpp_design, "psi", counts[cand], rep(th, length(cand))) <= bound[cand]]
      }
      cand <- cand[order(!need[cand], counts[cand], ids[cand])]
      short <- m - length(pool)
      if (length(cand) >= short) {
        new_pos <- c(pool, cand[seq_len(short)])
        new_sizes <- length(new_pos)
      } else {
        # too few cells left: join blocks already made in this set
        j <- join_blocks(pool, counts, bound, sizes, theta, smallest, joined, min_size)
        if (!is.null(j$lacks)) {
          return(list(lacks = sprintf(
            "a cell of count %d needs a block of at least %s cells with count >= %d and psi(T, %.4g) <= xi, or a block to join; the set has %d more cell%s and no such block",
            f, fmt_int(m), f, th, length(cand), if (length(cand) == 1) "" else "s"
          )))
        }
        theta <- j$theta
        joined <- j$joined
        assigned[pool] <- TRUE
        next
      }
    }
    assigned[new_pos] <- TRUE
    pos[[length(pos) + 1]] <- new_pos
    sizes <- c(sizes, new_sizes)
    theta <- c(theta, rep(th, length(new_sizes)))
    smallest <- c(smallest, rep(f, length(new_sizes)))
  }
  if (length(sizes) == 0) return(no_blocks())
  all_pos <- c(unlist(pos), joined$pos)
  block <- c(rep.int(seq_along(sizes), sizes), joined$block)
  # without joined cells the blocks are in order already
  if (length(joined$block) > 0) all_pos <- all_pos[order(block, method = "radix")]
  list(cells = ids[all_pos], sizes = tabulate(block, length(sizes)), theta = theta)
}

# The tiers of the tiered design: the positions of the cells needing
# protection by count f, each tier in order of position (one stable radix
# sort instead of a pass over the set per tier, counts needing protection
# being small), and within a count by bound, smallest first: a list of
# (f, xi, pos).
tier_pools <- function(need, counts, bound) {
  need_pos <- which(need)
  need_pos <- need_pos[order(counts[need_pos], method = "radix")]
  tier_size <- tabulate(counts[need_pos])
  tier_end <- cumsum(tier_size)
  out <- list()
  for (f in which(tier_size > 0)) {
    tier <- need_pos[seq.int(tier_end[f] - tier_size[f] + 1L, tier_end[f])]
    b <- bound[tier]
    for (xi in sort(unique(b))) out[[length(out) + 1]] <- list(f = f, xi = xi, pos = tier[b == xi])
  }
  out
}

# The cells of `pool` join blocks already made (join_block()), one after
# another: the blocks' theta and the joined cells with their blocks, or
# `lacks` when a cell finds no block.
join_blocks <- function(pool, counts, bound, sizes, theta, smallest, joined, min_size) {
  for (p in pool) {
    cur <- sizes + tabulate(joined$block, length(sizes))
    j <- join_block(cur, theta, smallest, counts[p], bound[p], min_size)
    if (is.na(j)) return(list(lacks = TRUE))
    theta[j] <- max(theta[j], core_call(cpp_design, "theta_psi", bound[p], counts[p]))
    joined$pos <- c(joined$pos, p)
    joined$block <- c(joined$block, j)
  }
  list(theta = theta, joined = joined)
}

# The existing block a cell of count c joins: theta may rise to the value
# psi(c, .) = xi needs, but must stay below the block's smallest count f and,
# for Goal 3, keep the block at least ceiling(f / (f - theta)) cells (Ghatak
# et al., Theorem 3.1). Raising theta only lowers psi for the other cells.
# The block that needs the smallest rise wins, then the smaller block, then
# the first.
join_block <- function(size, theta, smallest, c, xi, min_size) {
  if (length(size) == 0) return(NA_integer_)
  th <- pmax(theta, core_call(cpp_design, "theta_psi", xi, c))
  ok <- th < smallest & c >= smallest & size + 1 >= min_size(smallest, th)
  if (!any(ok)) return(NA_integer_)
  cand <- which(ok)
  cand[order(th[cand] - theta[cand], size[cand], cand)[1]]
}

# The blocks of one set. `opts`: what the least-damage design reads
# (optimal_options()).
design_set <- function(ids, counts, bound, goal, method, split, opts = NULL, avoid = NULL) {
  switch(method,
    nayak = design_nayak(ids, counts, bound, goal, split),
    optimal = design_optimal(ids, counts, bound, goal, opts),
    design_tiered(ids, counts, bound, goal, avoid)
  )
}

# ---------------------------------------------------------------------------
# Design over all partition sets, merging infeasible ones when asked.

# `bound`: the risk bound of every cell (rep(xi, cells) in the plain case).
# `avoid`: NULL, or what the tiered design avoids for intruders who know
# fewer keys (known_avoid(), design-known.R), over all cells.
design_release <- function(cf, set_of_cell, sets, bound, goal, method, split, on_infeasible,
                           opts = NULL, call = rlang::caller_env(), avoid = NULL) {
  counts <- cf$cells$count
  members <- split(seq_along(counts), set_factor(set_of_cell, sets$set))
  original <- members
  n_sets <- nrow(sets)
  # merges, filled in order (no data frame grown row by row)
  m_set <- integer()
  m_into <- integer()
  m_reason <- character()
  alive <- rep(TRUE, n_sets)
  design <- vector("list", n_sets)
  run <- function(s) {
    ids <- members[[s]]
    # a set the least-damage design could not repair for an intruder who
    # knows fewer keys is designed by the tiered design (design-known.R)
    m <- if (method == "optimal" && any(avoid$tiered[ids])) "tiered" else method
    design_set(ids, counts[ids], bound[ids], goal, m, split, opts, avoid = avoid_subset(avoid, ids))
  }
  for (s in seq_len(n_sets)) design[[s]] <- run(s)
  lacking <- vapply(design, function(d) !is.null(d$lacks), logical(1))
  # every set's coordinate rows (one per original set), and their owner
  # (no partition: one set, and no coordinates)
  rows <- if (is.null(sets$coords)) matrix(1, n_sets, 1) else do.call(rbind, sets$coords)
  owner <- seq_len(n_sets)
  rows_of <- as.list(seq_len(n_sets))
  keep <- attr(sets, "keep")
  lines <- if (on_infeasible == "merge") set_lines(rows)
  n_alive <- n_sets
  repeat {
    bad <- which(alive & lacking)
    if (length(bad) == 0) break
    if (on_infeasible == "error" || n_alive == 1) {
      lines <- paste0("Set ", bad, " (", sets$label[bad], "): ", vapply(design[bad], `[[`, "", "lacks"))
      abort_sdc(c(
        "{length(bad)} partition set{?s} cannot hold the blocks {?it needs/they need}.",
        stats::setNames(utils::head(lines, 10), rep("x", min(10, length(lines)))),
        if (length(lines) > 10) c("x" = paste0("... and ", length(lines) - 10, " more.")),
        "i" = if (n_alive == 1) {
          "Even all records together are too few: use a larger xi, or another goal."
        } else {
          "Use {.code on_infeasible = \"merge\"} to merge such sets with their most similar set, or coarsen {.arg partition}."
        }
      ), "infeasible", call = call, arg = if (n_alive == 1) "xi" else "partition")
    }
    s <- bad[1]
    t <- nearest_owner(s, rows, owner, rows_of[[s]], members, keep, lines)
    if (is.na(t)) {
      abort_sdc(c(
        "Partition set {s} ({sets$label[s]}) cannot hold the blocks it needs, and no set agrees with it on every {.val keep} variable.",
        "x" = "Set {s}: {design[[s]]$lacks}.",
        "i" = "Merging would change a kept variable: use a larger xi, or keep fewer variables in {.arg partition}."
      ), "infeasible", call = call, arg = "partition")
    }
    members[[t]] <- c(members[[t]], members[[s]])
    members[[s]] <- integer()
    owner[rows_of[[s]]] <- t
    rows_of[[t]] <- c(rows_of[[t]], rows_of[[s]])
    rows_of[s] <- list(integer())
    alive[s] <- FALSE
    n_alive <- n_alive - 1L
    m_set <- c(m_set, s)
    m_into <- c(m_into, t)
    m_reason <- c(m_reason, design[[s]]$lacks)
    design[[s]] <- no_blocks()
    lacking[s] <- FALSE
    design[[t]] <- run(t)
    lacking[t] <- !is.null(design[[t]]$lacks)
  }
  merges <- data.frame(set = m_set, merged_into = m_into, reason = m_reason)
  list(design = design, members = members, original = original, alive = alive, merges = merges)
}

# The set of every cell as a factor with one level per set: set ids
# 1..n are the factor's codes already (factor() would match 4 million ids
# against the levels).
set_factor <- function(set_of_cell, set) {
  if (is.integer(set_of_cell) && identical(set, seq_along(set)) && !anyNA(set_of_cell) &&
    all(core_call(cpp_int_range, set_of_cell) %in% c(set, NA_integer_))) {
    return(structure(set_of_cell, levels = as.character(set), class = "factor"))
  }
  factor(set_of_cell, levels = set)
}

# The set an infeasible set merges into: among the other live sets that agree
# with it on every "keep" variable, the one that differs in the fewest
# partition variables; then the one closest in group order on those
# variables (adjacent age groups before distant ones); then the one with more
# cells; then the lowest set number. NA when no set agrees on the kept
# variables (merging would change one).
nearest_set <- function(s, sets, alive, sizes) {
  rows <- do.call(rbind, sets$coords)
  owner <- rep.int(seq_len(nrow(sets)), vapply(sets$coords, nrow, integer(1)))
  # rows of dead sets belong to no candidate
  owner[!alive[owner] & owner != s] <- 0L
  members <- lapply(sizes, seq_len)
  nearest_owner(s, rows, owner, which(owner == s), members, attr(sets, "keep"), set_lines(rows))
}

# For each partition variable v, the coordinate rows ordered by their line
# (the values of the other variables) and then by v: the sets that differ
# from a row in v alone are its neighbours in this order, the nearest in
# group order first.
set_lines <- function(rows) {
  # 1 + the largest distance in group order: (differing variables, distance)
  # compare as one number, differing * span + distance
  span <- 1 + sum(apply(rows, 2, function(v) diff(range(v))))
  out <- lapply(seq_len(ncol(rows)), function(v) {
    other <- rows[, -v, drop = FALSE]
    line <- if (ncol(other) == 0) rep(1L, nrow(rows)) else {
      key <- do.call(paste, c(as.data.frame(other), sep = "\r"))
      match(key, unique(key))
    }
    ord <- order(line, rows[, v])
    pos <- integer(nrow(rows))
    pos[ord] <- seq_along(ord)
    list(line = line, ord = ord, pos = pos)
  })
  structure(out, span = span)
}

# The same from the coordinate rows of all sets (`owner`: the live set that
# holds each row, 0 for none; `mine`: the rows of set s). Differing
# variables and distance in group order are compared as one number. Sets
# that differ in one variable are the next rows of other sets on the lines
# of the rows of s (time proportional to the rows of s, not to all sets);
# only when there is none are all rows compared (vectorised).
nearest_owner <- function(s, rows, owner, mine, members, keep, lines) {
  span <- attr(lines, "span")
  free <- setdiff(seq_len(ncol(rows)), keep)
  n <- nrow(rows)
  cand <- integer()
  key <- numeric()
  for (v in free) {
    ln <- lines[[v]]
    for (step in c(-1L, 1L)) {
      # the next row on the line of each row of s; a row of s followed by
      # another row of s is covered by the walk from the last of the run
      q <- ln$pos[mine] + step
      ok <- q >= 1L & q <= n
      r <- mine[ok]
      q <- q[ok]
      same <- ln$line[ln$ord[q]] == ln$line[r]
      r <- r[same]
      q <- q[same]
      nb_owner <- owner[ln$ord[q]]
      hit <- nb_owner != s & nb_owner > 0L
      cand <- c(cand, nb_owner[hit])
      key <- c(key, span + abs(rows[ln$ord[q[hit]], v] - rows[r[hit], v]))
      # rows of dead sets (owner 0): walk on past them
      for (i in which(nb_owner == 0L)) {
        qq <- q[i]
        while (qq >= 1L && qq <= n && ln$line[ln$ord[qq]] == ln$line[r[i]] && owner[ln$ord[qq]] %in% c(0L, s)) qq <- qq + step
        if (qq >= 1L && qq <= n && ln$line[ln$ord[qq]] == ln$line[r[i]]) {
          cand <- c(cand, owner[ln$ord[qq]])
          key <- c(key, span + abs(rows[ln$ord[qq], v] - rows[r[i], v]))
        }
      }
    }
  }
  if (length(cand) == 0) {
    # no set differs in one variable: compare every row with every row of s
    a <- rows[mine, , drop = FALSE]
    idx <- which(owner != s & owner > 0L)
    if (length(keep) > 0 && length(idx) > 0) {
      agree <- rowSums(rows[idx, keep, drop = FALSE] != rep(a[1, keep], each = length(idx))) == 0
      idx <- idx[agree]
    }
    if (length(idx) == 0) return(NA_integer_)
    b <- rows[idx, , drop = FALSE]
    key <- rep(Inf, length(idx))
    for (i in seq_len(nrow(a))) {
      ai <- rep(a[i, ], each = length(idx))
      key <- pmin(key, rowSums(b != ai) * span + rowSums(abs(b - ai)))
    }
    cand <- owner[idx]
  }
  o <- order(cand, key)
  first <- o[!duplicated(cand[o])]
  t <- cand[first]
  t[order(key[first], -lengths(members[t]), t)[1]]
}
