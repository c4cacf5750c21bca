# The heuristic's pattern by parts of a hierarchy (issue 32, item 3): on a
# large hierarchical table, the sensitive cells under the top groups of one
# hierarchical variable (e.g. the two supergroups of `a`) are protected
# part by part, each part from the same state (the suppressions before the
# parts), independently, so that the parts can run on several cores
# (`cores` of protect_table()); their suppressions and witness tables are
# then merged in the order of the parts, and the cells at that variable's
# total are protected last, on the merged pattern.
#
# The merged pattern is protected: a witness table stays a table that
# keeps every relation and bound whatever else is suppressed, and every
# cell it moves is suppressed in its part, so in the union. The parts do
# not see each other's suppressions, so they may suppress a little more
# than one pass over all cells (measured in bench/README.md); the pattern
# does not depend on the number of cores, since every part starts from the
# same state whether the parts run one after the other or side by side.

# The parts of the sensitive cells `todo` (in their order): NULL unless
# the table has at least suppress_part_cells cells and a variable with a
# hierarchy below its top groups (categories under the total that have
# categories under them). Of those variables, the one whose top groups,
# in suppress_parts contiguous parts of about as many sensitive cells,
# leave the smallest part largest. Returns list(parts, last): `parts` the
# cells of each part, `last` the cells at that variable's total.
pattern_parts <- function(search, todo, cores) {
  st <- search$prep$structure
  if (cores < 2L || is.null(st$codes) || st$ncell < suppress_part_cells || suppress_parts < 2L) return(NULL)
  best <- NULL
  for (j in seq_along(st$parents)) {
    top <- top_groups(st$parents[[j]])
    g <- top[st$codes[todo, j]]
    groups <- sort(unique(g[!is.na(g)]))
    # (a flat variable's top groups are its categories: boxes cross them)
    parent <- st$parents[[j]]
    deep <- any(!is.na(parent) & !(parent %in% which(is.na(parent))))
    if (!deep || length(groups) < suppress_parts) next
    size <- tabulate(match(g, groups), length(groups))
    part_of <- part_split(size, suppress_parts)
    smallest <- min(vapply(seq_len(suppress_parts), function(k) sum(size[part_of == k]), numeric(1)))
    if (is.null(best) || smallest > best$smallest) {
      best <- list(smallest = smallest, part = part_of[match(g, groups)])
    }
  }
  if (is.null(best) || best$smallest == 0) return(NULL)
  list(parts = lapply(seq_len(suppress_parts), function(k) todo[which(best$part == k)]),
       last = todo[is.na(best$part)])
}

# The top group (the category just under the total) of every category of a
# variable, from the parent codes (NA for the total itself).
top_groups <- function(parent) {
  root <- is.na(parent)
  top <- ifelse(root, NA_integer_, seq_along(parent))
  # climb until the parent is the total (at most as many steps as categories)
  for (k in seq_along(parent)) {
    up <- !is.na(top) & !root[parent[pmax(top, 1L)]]
    up[is.na(up)] <- FALSE
    if (!any(up)) break
    top[up] <- parent[top[up]]
  }
  top
}

# Contiguous parts of groups with sizes `size`: k parts of about equal sum
# (each group in the part where its cumulated size midpoint falls).
part_split <- function(size, k) {
  mid <- cumsum(size) - size / 2
  pmin(pmax(ceiling(mid / sum(size) * k), 1L), k)
}

# Protects the cells of `parts` (pattern_parts()) part by part from the
# current state of `search`, on up to `cores` cores (forked processes
# beside this one; one process where forking is not available), then
# merges the parts into `search`. An error in a part (a cell that cannot
# be protected) is raised as is.
protect_parts <- function(search, parts, cores, call, tick) {
  run <- function(k, tick) {
    s <- part_state(search)
    protect_cells(s, parts[[k]], call, tick)
    part_delta(search, s)
  }
  res <- if (cores > 1L && .Platform$OS.type != "windows") {
    run_forked(seq_along(parts), cores, run, tick, size = lengths(parts))
  } else {
    lapply(seq_along(parts), run, tick = tick)
  }
  for (r in res) {
    if (inherits(r, "try-error")) {
      cnd <- attr(r, "condition")
      if (inherits(cnd, "condition")) stop(cnd)
    }
    if (!is.list(r) || is.null(r$n_lp)) {
      abort_sdc(c(
        "A worker of {.fn protect_table} ended without its part of the pattern.",
        "x" = "The process may have run out of memory.",
        "i" = "Use fewer {.arg cores}."
      ), "worker", call = call)
    }
  }
  for (r in res) merge_part(search, r)
  invisible(search)
}

# run(k, tick) for every k of `ids`, `cores` at a time: the first of each
# batch in this process (which updates the progress bar), the others in
# forked processes started just before it, so that every run starts from
# the state at the batch's start and this process works instead of waiting
# (one process fewer holding its own copy of the memory it touches; on
# the 764,158-cell table of bench_suppress_large.R each part's process
# held about 2.5 GB of its own). `size[k]` is k's number of progress
# ticks. A forked run's error comes back as its "try-error"; a forked
# process that ends without a result gives NULL. The forked processes are
# stopped if this process's run fails.
run_forked <- function(ids, cores, run, tick, size) {
  res <- vector("list", length(ids))
  jobs <- list()
  # (the jobs not yet collected when this ends, by an error or interrupt)
  on.exit(stop_forked(jobs))
  for (batch in split(seq_along(ids), ceiling(seq_along(ids) / cores))) {
    # (before the fork, R's garbage collected and the C library's free
    # pages handed back: what this process holds then is held once, shared
    # with the forked ones, and then grows in each of them; fork_release())
    if (length(batch) > 1L) fork_release()
    jobs <- lapply(batch[-1], function(b) {
      parallel::mcparallel(run(ids[[b]], function(...) invisible()), mc.set.seed = FALSE, silent = TRUE)
    })
    res[[batch[1]]] <- run(ids[[batch[1]]], tick)
    if (length(jobs)) {
      # (a process without a result: NULL here, a classed error for the caller)
      got <- suppressWarnings(parallel::mccollect(jobs, wait = TRUE))
      for (b in seq_along(jobs)) res[batch[b + 1L]] <- list(got[[as.character(jobs[[b]]$pid)]])
      jobs <- list()
      tick(sum(size[ids[batch[-1]]]))
    }
  }
  res
}

# The memory this process no longer uses, handed back before a fork: a
# full garbage collection, then the C library's free pages
# (cpp_release_free_memory()). On the 764,158-cell table of
# bench_suppress_large.R the main process held 5.7 GB when it forked, and
# 3.1 GB with this (the rest the records' aggregation and the set-up,
# freed but kept); see bench/README.md.
fork_release <- function() {
  invisible(gc(verbose = FALSE, full = TRUE))
  cpp_release_free_memory()
  invisible()
}

# Stops forked processes (parallel::mcparallel() jobs) and collects them,
# so that none is left running or unreaped.
stop_forked <- function(jobs) {
  if (!length(jobs)) return(invisible())
  for (j in jobs) tools::pskill(j$pid, tools::SIGKILL)
  suppressWarnings(parallel::mccollect(jobs, wait = TRUE))
  invisible()
}

# A copy of the search state for one part: the same vectors (copied on
# their first change), a fresh cache of boxes and no kept solver model, so
# that every part starts the same way in a process of its own or not.
part_state <- function(search) {
  s <- new.env(parent = emptyenv())
  for (nm in ls(search, all.names = TRUE)) assign(nm, get(nm, envir = search), envir = s)
  s$whole_boxes <- new.env(parent = emptyenv())
  s$dev_session <- NULL
  s$dev_ray <- NULL
  s
}

# What a part added to the state `search` it started from: its suppressed
# cells and their reasons, its witness tables, the covers it raised (with
# their witnesses numbered from 1 within the part) and its programs.
part_delta <- function(search, s) {
  k0 <- length(search$wits)
  new <- which(s$supp & !search$supp)
  up <- which(s$wit_up != search$wit_up)
  dn <- which(s$wit_dn != search$wit_dn)
  renumber <- function(id) sign(id) * (abs(id) - k0)
  list(new = new, reason = s$reason[new], wits = s$wits[seq_along(s$wits) > k0],
       up = up, cover_up = s$cover_up[up], wit_up = renumber(s$wit_up[up]),
       dn = dn, cover_dn = s$cover_dn[dn], wit_dn = renumber(s$wit_dn[dn]),
       n_lp = s$n_lp - search$n_lp)
}

# Adds a part (part_delta()) to the state `search`: its suppressions (a
# cell an earlier part suppressed keeps that part's reason), its witness
# tables after those already there, and each cover where it is larger.
merge_part <- function(search, d) {
  fresh <- !search$supp[d$new]
  env_set(search, "reason", d$new[fresh], d$reason[fresh])
  env_set(search, "supp", d$new, TRUE)
  k <- length(search$wits)
  search$wits <- c(search$wits, d$wits)
  cover <- function(side, idx, value, id) {
    take <- value > search[[paste0("cover_", side)]][idx]
    env_set(search, paste0("cover_", side), idx[take], value[take])
    env_set(search, paste0("wit_", side), idx[take], sign(id[take]) * (abs(id[take]) + k))
  }
  cover("up", d$up, d$cover_up, d$wit_up)
  cover("dn", d$dn, d$cover_dn, d$wit_dn)
  search$n_lp <- search$n_lp + d$n_lp
  invisible(search)
}
