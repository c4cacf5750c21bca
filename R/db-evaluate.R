# Evaluation of a release written to a database, from counts: the database
# counts the original and the released tables, R compares
# (release_risk() and release_utility() of release-evaluate.R).

# What release_risk() reads of a release in a database, for the units whose
# cell could change (cells of count 1 or 2, cells whose units can move) and
# only for them: their original and released cells, rebuilt from the counts
# and the moves (a unit is its cell and its rank there). The records of
# other cells never move. The released counts come from the moves.
#' @export
release_units.sdc_release_db <- function(release) {
  counts <- release$cells$cells$count
  inside <- which(counts <= 2 | plan_movable(release$plan))
  old <- rep.int(inside, counts[inside])
  start <- integer(length(counts))
  start[inside] <- cumsum(counts[inside]) - counts[inside]
  new <- old
  mv <- release$moves
  new[start[mv$cell] + mv$rank] <- mv$new_cell
  ncell <- length(counts)
  list(old = old, new = new,
       s_new = counts - tabulate(mv$cell, ncell) + tabulate(mv$new_cell, ncell))
}

# Counts of every combination of `vars` in a table, by the database; NA is a
# value like any other.
db_counts <- function(tbl, vars) {
  out <- dplyr::collect(dplyr::summarise(
    dplyr::group_by(tbl, !!!rlang::syms(vars)),
    sdc_count__ = dplyr::n(),
    .groups = "drop"
  ))
  out <- as.data.frame(out, stringsAsFactors = FALSE)
  # integers where they fit, as table() gives in memory
  cnt <- as.numeric(out$sdc_count__)
  out$sdc_count__ <- if (all(cnt <= .Machine$integer.max)) as.integer(cnt) else cnt
  out
}

# The distributions release_utility() compares, for a release in a
# database: the same tables as for a data frame (distribution_table() and
# tvd_row() of release-evaluate.R), from counts made by the database.
#' @export
release_distributions.sdc_release_db <- function(release, combos, singles) {
  n <- release$cells$n_records
  key_of <- function(d) do.call(paste, c(lapply(d, as.character), sep = "\r"))
  tvd_counts <- function(cv) {
    a <- db_counts(release$original, cv)
    b <- db_counts(release$data, cv)
    ka <- key_of(a[cv])
    kb <- key_of(b[cv])
    all <- unique(c(ka, kb))
    fa <- integer(length(all))
    fb <- integer(length(all))
    fa[match(ka, all)] <- a$sdc_count__
    fb[match(kb, all)] <- b$sdc_count__
    ncat <- prod(vapply(cv, function(v) {
      length(unique(c(as.character(a[[v]]), as.character(b[[v]]))))
    }, numeric(1)))
    data.frame(variables = paste(cv, collapse = ", "), tvd = sum(abs(fa - fb)) / (2 * n),
      cells = ncat, nonempty = length(all))
  }
  dist_counts <- function(v) {
    a <- db_counts(release$original, v)
    b <- db_counts(release$data, v)
    lev <- sort(unique(c(a[[v]], b[[v]])), na.last = TRUE)
    o <- a$sdc_count__[match(lev, a[[v]])]
    p <- b$sdc_count__[match(lev, b[[v]])]
    o[is.na(o)] <- 0L
    p[is.na(p)] <- 0L
    data.frame(
      category = as.character(lev), original = o, original_share = o / n,
      perturbed = p, perturbed_share = p / n, difference = o - p,
      sampling_sd = sqrt(n * (o / n) * (1 - o / n))
    )
  }
  list(
    distributions = stats::setNames(lapply(singles, dist_counts), singles),
    tvd = do.call(rbind, lapply(combos, tvd_counts)),
    n = n
  )
}
