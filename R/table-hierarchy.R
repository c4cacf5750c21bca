# Hierarchical classification variables for cell_sensitivity(): each `by`
# variable has a list of levels (totalled, detailed, parent, grandparent, ...)
# and the table has a margin for every combination of levels.

# For each `by` variable: `labels` (every category at every level, detailed
# first; the total is added by the caller), `maps` (one per level: NULL for
# the total, then integer vectors taking a detailed code to the code of its
# group at that level) and `names` (the level names used in `level`).
table_hierarchy <- function(hierarchy, rec, total_label, call = rlang::caller_env()) {
  by <- rec$by
  if (!is.null(hierarchy) &&
      (!is.list(hierarchy) || is.data.frame(hierarchy) || is.null(names(hierarchy)) ||
       !all(names(hierarchy) %in% by) || anyDuplicated(names(hierarchy)))) {
    abort_sdc(c(
      "{.arg hierarchy} must be a list named by {.arg by} variables.",
      "x" = "It is {.obj_type_friendly {hierarchy}} with names {.val {names(hierarchy)}}.",
      "i" = "E.g. {.code list(industry = c(A1 = \"A\", A2 = \"A\", B1 = \"B\"))}."
    ), "hierarchy", call = call)
  }
  out <- lapply(seq_along(by), function(j) {
    detail <- rec$labels[[j]]
    ident <- seq_along(detail)
    spec <- hierarchy[[by[j]]]
    if (is.null(spec)) return(list(labels = detail, maps = list(NULL, ident), names = by[j]))
    levels <- hierarchy_columns(spec, by[j], call)
    maps <- list(NULL, ident)
    labels <- detail
    current <- detail
    # the position in `current` of the group of every detailed category
    pos <- ident
    for (k in seq_along(levels$parents)) {
      child <- levels$children[[k]]
      parent <- levels$parents[[k]]
      missing <- setdiff(current, child)
      if (length(missing)) {
        abort_sdc(c(
          "The hierarchy of {.var {by[j]}} must give a parent to every category.",
          "x" = "No parent at level {.val {levels$names[k + 1]}} for {.val {utils::head(missing, 5)}}."
        ), "hierarchy", call = call)
      }
      up <- parent[match(current, child)]
      grp <- unique(up)
      clash <- intersect(grp, c(labels, total_label))
      if (length(clash)) {
        abort_sdc(c(
          "Every category of {.var {by[j]}} must have one label at one level of its hierarchy.",
          "x" = "Label{?s} {.val {clash}} appear{?s/} at two levels, or {?is/are} {.arg total_label}.",
          "i" = "Rename the groups, e.g. with a prefix per level."
        ), "hierarchy", call = call)
      }
      # (indexed by position, not by code: from the second step up the
      # codes of `current` start after the detailed ones)
      pos <- match(up, grp)[pos]
      maps[[length(maps) + 1]] <- length(labels) + pos
      labels <- c(labels, grp)
      current <- grp
    }
    list(labels = labels, maps = maps, names = c(by[j], levels$names[-1]))
  })
  stats::setNames(out, by)
}

# A hierarchy given as a named vector or a data frame, as lists of child and
# parent labels per step up, with the level names.
hierarchy_columns <- function(spec, name, call) {
  if (is.data.frame(spec)) {
    cols <- lapply(spec, as.character)
    nm <- names(spec)
  } else if (is.atomic(spec) && !is.null(names(spec))) {
    cols <- list(names(spec), as.character(unname(spec)))
    nm <- c(name, paste0(name, "_group"))
  } else {
    cols <- NULL
  }
  if (is.null(cols) || length(cols) < 2 || anyNA(unlist(cols))) {
    abort_sdc(c(
      "The hierarchy of {.var {name}} must be a named vector or a data frame of two or more columns without {.val NA}.",
      "x" = "It is {.obj_type_friendly {spec}}."
    ), "hierarchy", call = call)
  }
  children <- parents <- list()
  for (k in seq_len(length(cols) - 1)) {
    pairs <- unique(data.frame(child = cols[[k]], parent = cols[[k + 1]]))
    if (anyDuplicated(pairs$child)) {
      abort_sdc(c(
        "Every category of {.var {name}} must have a single parent.",
        "x" = "{.val {utils::head(unique(pairs$child[duplicated(pairs$child)]), 5)}} {?has/have} several at level {.val {nm[k + 1]}}."
      ), "hierarchy", call = call)
    }
    children[[k]] <- pairs$child
    parents[[k]] <- pairs$parent
  }
  list(children = children, parents = parents, names = nm)
}

# The records coded at one level of every hierarchy (`depth` 0 = totalled).
hierarchy_level <- function(rec, hier, depth) {
  rec$level_names <- character(length(hier))
  for (j in seq_along(hier)) {
    rec$nlevels[j] <- length(hier[[j]]$labels)
    if (depth[j] == 0) next
    rec$level_names[j] <- hier[[j]]$names[depth[j]]
    if (depth[j] > 1) rec$codes[[j]] <- hier[[j]]$maps[[depth[j] + 1]][as.integer(rec$codes[[j]])]
  }
  rec
}

# The parent of every category (the total for the top level), per variable:
# what protect_table() needs to write the additive relations of the table.
hierarchy_parents <- function(hier, total_label) {
  lapply(hier, function(h) {
    parent <- rep(total_label, length(h$labels))
    for (k in seq_along(h$maps)[-(1:2)]) {
      below <- h$maps[[k - 1]]
      above <- h$maps[[k]]
      parent[below] <- h$labels[above]
    }
    stats::setNames(parent, h$labels)
  })
}
