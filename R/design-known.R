# The design for intruders who know fewer keys, ifpr(known =) (issue 35,
# item 2).
#
# An intruder who knows only the keys S of his target sees the cells that
# share their S-values as one: his "cell" is the S-projection D, and a move
# between two cells of D is no move at all for him (risk_known.hpp). A block
# whose cells differ only in keys outside S protects nobody from him: the
# units of D stay in D, and R_D(a, t) stays 1 / T_D at a = T_D. What he needs
# is the necessary condition below, met by blocks that cross D.
#
# Necessary condition (Goal 3). A unit of cell j in D lands in D with
# probability alpha_D(j), and sum_a a R_D(a, t) P(S_D = a) = alpha_D(j) (as
# for one cell, design-optimal.R damage_lower()); R_D(a, t) <= b_j for every
# a and E S_D = T_D (unbiased) give alpha_D(j) <= b_j T_D. So when T_D < 1 /
# b_j, the units of j must leave D, in S-values, with probability at least
# 1 - b_j T_D. In an IFPR block of m cells whose cells lie in other
# S-projections than j's, alpha_D(j) = p_jj <= b_j T_j <= b_j T_D, which the
# design for the full-key intruder already makes true; a partner in D makes
# it larger by theta / ((m - 1) T_j).
#
# So the design is repaired, never replaced:
# 1. The design as for the full-key intruder alone (today's, unchanged),
#    certified for every declared intruder exactly. If every one is met,
#    that is the release, bit for bit.
# 2. Otherwise, for each intruder S whose maximum is above his bound, the
#    cells whose own R_D(a, t) breaks it are found exactly
#    (known_failures()), and every cell of their S-projections D is marked:
#    two marked cells of one D must not share a block (the tiered design,
#    avoid_blocks(); the least-damage design, whose search runs in the
#    core, is steered by costlier moves in the keys such an intruder does
#    not know instead, known_avoid()). A tier whose cells cannot be
#    separated is padded with cells of other S-projections, as a short tier
#    is padded today.
# 3. From the second round on, the cells of the S-projections still above
#    their bound also get tighter bounds of their own (by the excess found,
#    known_tighten()): their blocks move more units out of D.
# Each round's plan is certified again exactly, for the full-key intruder
# against the original bounds and for every declared intruder; the first
# plan that meets them all is the release; after `known_repair_rounds`
# rounds, or when a round cannot be built, ifpr() stops with the
# certificate error of step 1. The rule cannot lose a release that step 1
# makes, and nothing above a bound is ever returned.

# Rounds of repair (step 2 once, then step 3). On 400 random small files
# (the generator of tests/testthat/test-design-known.R, both methods, every
# goal, known = TRUE), 15 designs needed a repair: 4 were met in round 1, 9
# in round 2, 1 in round 4, and 1 (the least-damage design at xi = 0.15,
# also with its tiered fallback) in none.
known_repair_rounds <- 6L

# Each round tightens a failing S-projection's bounds by about the excess
# found, within these factors.
known_tighten_range <- c(0.25, 0.97)

# The cells `ids` of a partition set: the rows of `avoid` they hold (NULL
# when none of them is to be kept apart: the set's design stays as it was).
avoid_subset <- function(avoid, ids) {
  if (is.null(avoid$group) || all(is.na(avoid$group[ids, ]))) return(NULL)
  list(group = avoid$group[ids, , drop = FALSE], rank = avoid$rank[ids])
}

# Blocks of one tier whose marked cells lie in different S-projections for
# every intruder (the columns of `group`: an S-projection id, NA for a cell
# that need not be kept apart). `pool`: the tier's positions in the order to
# follow; `m`: the least block size; `cand`: the cells that may pad a block
# (those the tiered design pads a short tier with), best first. Cells are
# placed first-fit along the pool; a block left short gives its cells to
# full blocks they can share, else is padded with candidates that keep it
# apart, else its cells join full blocks anyway (the certificate judges).
# Returns the blocks (positions) and the cells left (`rest`) for the tiered
# design's own way with a short tier.
avoid_blocks <- function(pool, m, cand, group) {
  k <- ncol(group)
  tags_of <- function(p) {
    v <- group[p, ]
    (seq_len(k) * 1e10 + v)[!is.na(v)]
  }
  blocks <- list()
  used <- list()
  open <- integer()
  for (p in pool) {
    tg <- tags_of(p)
    hit <- NA_integer_
    for (g in utils::head(open, 64L)) {
      if (!any(tg %in% used[[g]])) {
        hit <- g
        break
      }
    }
    if (is.na(hit)) {
      hit <- length(blocks) + 1L
      blocks[[hit]] <- integer()
      used[[hit]] <- numeric()
      open <- c(open, hit)
    }
    blocks[[hit]] <- c(blocks[[hit]], p)
    used[[hit]] <- c(used[[hit]], tg)
    if (length(blocks[[hit]]) >= m) open <- setdiff(open, hit)
  }
  size <- lengths(blocks)
  full <- size >= m
  taken <- logical(length(cand))
  rest <- integer()
  out <- blocks[full]
  out_used <- used[full]
  for (g in which(!full)) {
    left <- integer()
    # join full blocks that keep the cell apart, the smallest first, up to
    # 2 m - 1 cells (the sizes of a tier cut into blocks)
    for (p in blocks[[g]]) {
      tg <- tags_of(p)
      fits <- which(lengths(out) < 2L * m - 1L & vapply(out_used, function(u) !any(tg %in% u), logical(1)))
      if (length(fits) == 0) {
        left <- c(left, p)
        next
      }
      h <- fits[order(lengths(out)[fits])[1]]
      out[[h]] <- c(out[[h]], p)
      out_used[[h]] <- c(out_used[[h]], tg)
    }
    if (length(left) == 0) next
    # pad with candidates of other S-projections
    u <- unlist(lapply(left, tags_of))
    pads <- integer()
    for (i in which(!taken)) {
      if (length(pads) >= m - length(left)) break
      tg <- tags_of(cand[i])
      if (any(tg %in% u)) next
      pads <- c(pads, i)
      u <- c(u, tg)
    }
    if (length(left) + length(pads) >= m) {
      taken[pads] <- TRUE
      out[[length(out) + 1L]] <- c(left, cand[pads])
      out_used[[length(out)]] <- u
    } else if (length(out) > 0) {
      for (p in left) {
        h <- order(lengths(out))[1]
        out[[h]] <- c(out[[h]], p)
        out_used[[h]] <- c(out_used[[h]], tags_of(p))
      }
    } else {
      rest <- c(rest, left)
    }
  }
  list(blocks = out, rest = rest)
}

# The cells of the declared intruder `known` whose own risk is above their
# bound on a plan: each target cell of an S-projection that meets a block
# (elsewhere R_D = 1 / T_D at a = T_D, met by the full-key design), over
# the values of a its goal covers (Goal 3: a < 1 / b suffices, R <= 1 / a).
# Returns the S-projection of every cell (`set`) and, per S-projection
# above its bound, its worst ratio R / b (`ratio`, named by S-projection).
known_failures <- function(plan, ep, goal, known, bound, call = rlang::caller_env()) {
  counts <- plan$cells$cells$count
  set <- known_sets(plan$cells, known)
  ek <- engine_known(plan, ep, known)
  targets <- which(set %in% set[plan$block_cells])
  if (goal == "sample_uniques") targets <- targets[counts[targets] == 1]
  ratio <- numeric()
  if (length(targets) > 0) {
    A <- if (goal == "all_matches") min(ceiling(1 / min(bound[targets])), sum(as.numeric(counts))) else 1
    res <- core_call(cpp_cell_risk, ek, as.integer(targets), seq_len(A), FALSE, call = call)
    risk <- matrix(res$risk, nrow = A)
    risk[is.nan(risk)] <- NA_real_
    worst <- suppressWarnings(apply(risk, 2, max, na.rm = TRUE))
    r <- worst / bound[targets]
    bad <- is.finite(r) & r > 1
    if (any(bad)) {
      ratio <- tapply(r[bad], set[targets][bad], max)
      ratio <- stats::setNames(as.vector(ratio), names(ratio))
    }
  }
  list(known = known, set = set, ratio = ratio)
}

# What the design avoids, from the failures of this round added to those of
# earlier rounds (`avoid`, or NULL): per intruder one column of `group`, the
# S-projection of every cell of a failing S-projection (NA elsewhere); the
# order in which tiers are cut (`rank`: the keys every such intruder knows
# varying fastest, so that neighbours differ in a key he sees); and for the
# least-damage design the key weights of its core, raised for the keys one
# of them does not know, so that its blocks prefer moves he sees.
known_avoid <- function(cells, avoid, failures, weights = NULL) {
  group <- avoid$group %||% matrix(NA_integer_, nrow(cells$cells), 0)
  names_now <- colnames(group) %||% character()
  for (f in failures) {
    if (length(f$ratio) == 0) next
    nm <- paste(f$known, collapse = "\r")
    col <- ifelse(f$set %in% as.integer(names(f$ratio)), f$set, NA_integer_)
    j <- match(nm, names_now)
    if (is.na(j)) {
      group <- cbind(group, col)
      names_now <- c(names_now, nm)
      colnames(group) <- names_now
    } else {
      group[!is.na(col), j] <- col[!is.na(col)]
    }
  }
  sets <- strsplit(names_now, "\r", fixed = TRUE)
  common <- Reduce(intersect, sets, cells$keys)
  codes <- cell_codes(cells)
  o <- do.call(order, c(unname(codes[c(setdiff(cells$keys, common), common)]), list(method = "radix")))
  rank <- integer(length(o))
  rank[o] <- seq_along(o)
  w <- weights
  if (!is.null(w) && length(common) > 0 && length(common) < length(cells$keys)) {
    w[!cells$keys %in% common] <- w[!cells$keys %in% common] + sum(w)
  }
  list(group = group, rank = rank, weights = w, common = common)
}

# Tighter design bounds for the cells of the S-projections still above
# their bound: each bound times about 1 / (the worst ratio of its
# S-projections), within `known_tighten_range` (once per round, however many
# intruders a cell fails).
known_tighten <- function(dbound, failures) {
  fac <- rep(1, length(dbound))
  for (f in failures) {
    if (length(f$ratio) == 0) next
    r <- pmin(known_tighten_range[2], pmax(known_tighten_range[1], 0.98 / f$ratio))
    hit <- match(f$set, as.integer(names(f$ratio)))
    at <- !is.na(hit)
    fac[at] <- pmin(fac[at], r[hit[at]])
  }
  dbound * fac
}

# Whether a known-keys certificate (plan_max_risk_known()) meets `ref`.
known_met <- function(kr, ref) is.na(kr$risk[1]) || kr$risk[1] <= ref

# Steps 2-3 above: `build(dbound, avoid)` designs, calibrates and certifies
# the full-key intruder (a list with plan, ep, mx, or NULL when it cannot);
# `first` is the design of step 1 with its known-keys certificate `kr`.
# Returns the first repaired design that meets every declared intruder
# (with `kr` and `rounds`), or NULL.
#
# The least-damage design (`method` "optimal") searches in its core, which
# sees no S-projections, and only among PRAMs with p_jj >= p_ij, which may
# hold no tighter bound. When its rounds fail, the repair starts again from
# `first` with the partition sets that hold failing S-projections designed
# by the tiered design, blocks apart (`tiered`), for as many rounds more.
known_repair <- function(first, kr, build, cells, goal, subsets, bound, ref, weight, opts = NULL,
                         method = "tiered", call = rlang::caller_env()) {
  run <- function(tiered) {
    known_repair_rounds_run(first, kr, build, cells, goal, subsets, bound, ref, weight, opts, tiered, call)
  }
  out <- run(rep(method != "optimal", length(bound)))
  if (is.null(out$design) && method == "optimal" && any(out$marked)) out <- run(out$marked)
  out$design
}

# The rounds of the repair with the cells `tiered` (of partition sets to
# design by the tiered design): the design (or NULL) and the cells of every
# S-projection found failing (`marked`).
known_repair_rounds_run <- function(first, kr, build, cells, goal, subsets, bound, ref, weight, opts, tiered,
                                    call) {
  cur <- first
  avoid <- NULL
  dbound <- bound
  marked <- rep(FALSE, length(bound))
  fail <- function() list(design = NULL, marked = marked)
  for (round in seq_len(known_repair_rounds)) {
    failing <- subsets[vapply(subsets, function(k) {
      any(kr$known == paste(k, collapse = ", ") & !is.na(kr$risk) & kr$risk > ref)
    }, logical(1))]
    failures <- lapply(failing, function(k) known_failures(cur$plan, cur$ep, goal, k, bound, call = call))
    if (all(lengths(lapply(failures, `[[`, "ratio")) == 0)) return(fail())
    marked <- marked | known_marked(failures)
    avoid <- known_avoid(cells, avoid, failures, weights = opts$core$weights)
    avoid$tiered <- tiered
    nxt <- NULL
    if (round == 1) {
      nxt <- build(dbound, avoid)
    } else {
      # tighter bounds; a design that cannot hold them backs off halfway
      # (geometrically) towards the bounds of the last round, twice
      target <- known_tighten(dbound, failures)
      for (try in 1:3) {
        nxt <- build(target, avoid)
        if (!is.null(nxt)) break
        target <- sqrt(target * dbound)
      }
      dbound <- target
    }
    if (is.null(nxt) || (!is.na(nxt$mx$risk) && nxt$mx$risk > ref)) return(fail())
    kr <- plan_max_risk_known(nxt$plan, goal, subsets, nxt$ep, call = call, weight = weight)
    cur <- nxt
    if (known_met(kr, ref)) return(list(design = c(cur, list(kr = kr, rounds = round)), marked = marked))
  }
  fail()
}

# The cells of the failing S-projections of `failures`.
known_marked <- function(failures) {
  Reduce(`|`, lapply(failures, function(f) f$set %in% as.integer(names(f$ratio))))
}
