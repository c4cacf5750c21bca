#' Empirical identification risk of a release
#'
#' For every unit of the original data whose cell could change (cells of
#' count 1 or 2, and every cell in a block), the probability that an intruder
#' who knows the unit's key values and picks one of the matching released
#' records at random finds it: 0 if the unit's record changed cell, 1 /
#' \eqn{\tau^*} otherwise, where \eqn{\tau} and \eqn{\tau^*} are the
#' frequencies of the unit's true cell in the original and the released data
#' (Nayak, Zhang and You 2016, Section 7.1).
#'
#' @section Sample releases: With `target_in_file = "unknown"` and the
#'   `population` the file was sampled from (see [match_risk()]), the target
#'   is a unit of the population: a unit of the file stands for the
#'   \eqn{F_j} population units of its cell, of which \eqn{t_j} are in the
#'   file, so each unit's probability is multiplied by \eqn{t_j / F_j} (its
#'   estimate under a [population_model()]), and the certificate is the
#'   maximum of \eqn{(t_j / F_j) R_j(a, t)}. A release certified for a
#'   sample ([ifpr()], [pram_release()] with `population`) keeps its sample
#'   case without the arguments.
#' @param release An `sdc_release` from [ifpr()].
#' @inheritParams match_risk
#' @returns An object of class `sdc_release_risk`, a list with
#'   * `table`: mean correct-match probability by \eqn{\tau} (1, 2, "3+") and
#'     \eqn{\tau^*} (0, 1, 2, "3+"), with margins (`"all"`), the number of
#'     units, the number of independent clusters they fall in and a
#'     cluster-robust standard error of each mean (Table 3 of the paper,
#'     whose margins are weighted means over units). Units are not
#'     independent: the records of one IFPR block are drawn jointly, so the
#'     units of a block form one cluster; outside blocks (and for
#'     per-variable PRAM) each original cell is a cluster, and the weaker
#'     dependence between cells through records that move in is not
#'     accounted for;
#'   * `changes`: by original frequency, the units whose cell changed and the
#'     cells that became empty, in numbers and percentages, beside their
#'     exact expected values from the plan (\eqn{1 - p_{jj}} and
#'     \eqn{P(S_j = 0 | T)}) and the upper bound of eq. 4.10 for IFPR,
#'     \eqn{(\theta / T)^T e^{-\theta}} (35.95% and 7.19% for \eqn{\theta =
#'     0.8}, Section 4.1);
#'   * `uniques`: the numbers of units in singleton and doubleton cells before
#'     and after;
#'   * `certificate`: the exact maximum of \eqn{R_j(a, t)} the release was
#'     certified with.
#'
#' The table describes one realization of the perturbation. The certificate
#' is an exact probability over the perturbation: \eqn{R_j(a, t)} is the
#' expected correct-match probability of a unit of cell \eqn{j} given
#' \eqn{a} matches, so the empirical means are, in expectation, mixtures of
#' the \eqn{R_j(a, t)}, and their expectations lie below the certificate. A
#' single release scatters around these expectations: a mean above the
#' certificate (by a few standard errors or less) is what the certificate
#' allows, not a failure of it; where the maximum is attained, about half of
#' all releases show it.
#' @family evaluation
#' @export
#' @examples
#' set.seed(1)
#' keys <- c("sex", "age", "race", "marital", "puma")
#' rel <- ifpr(pums_md, keys, 0.395, method = "nayak", calibrate = "bound")
#' release_risk(rel)
release_risk <- function(release, population = NULL, target_in_file = c("known", "unknown")) {
  release <- as_release(release)
  plan <- release$plan
  ep <- engine_plan(plan)
  # a release made for a sample keeps its sample case unless asked otherwise
  own <- missing(target_in_file) && is.null(population)
  smp <- if (own) release$sample else sample_of(release$cells, population, target_in_file, data = release$data)
  counts <- release$cells$cells$count
  u <- release_units(release)
  old <- u$old
  new <- u$new
  s_new <- u$s_new
  movable <- plan_movable(plan, ep)
  unit <- which(!is.na(old) & (counts[old] <= 2 | movable[old]))
  tau <- counts[old[unit]]
  tau_star <- s_new[old[unit]]
  stayed <- !is.na(new[unit]) & new[unit] == old[unit]
  p <- ifelse(stayed, 1 / pmax(tau_star, 1), 0)
  # records of one block are drawn jointly: a block (else a cell) is a cluster
  block <- plan_block_of(plan)[old[unit]]
  cluster <- ifelse(is.na(block), -old[unit], block)
  # a target drawn from the population of the unit's cell is in the file
  # with probability t / F
  if (!is.null(smp)) p <- p * smp$weight[old[unit]]
  # the exact probabilities that a unit of each cell moves and that a cell
  # whose units can move empties
  p_empty <- numeric(length(counts))
  p_empty[movable] <- plan_p_empty(plan, which(movable), ep)
  structure(
    list(
      table = risk_table(p, cut_count(tau, c("1", "2", "3+")), cut_count(tau_star, c("0", "1", "2", "3+")), cluster),
      changes = change_rows(counts, old, unit, tau, stayed, s_new, 1 - plan_cost(plan, ep)$stay, p_empty,
                            plan_empty_bound(plan)),
      uniques = data.frame(
        cells = c("singleton", "doubleton"),
        units_before = c(sum(counts == 1), 2 * sum(counts == 2)),
        units_after = c(sum(s_new == 1), 2 * sum(s_new == 2))
      ),
      certificate = release_certificate(release, smp, ep, recertify = !own)
    ),
    class = "sdc_release_risk"
  )
}

# The certificate a release was made with; the release an sdcMicroObj holds
# has none yet, and with `recertify` one is made now for the sample case
# `smp` (NULL: a target known to be in the file).
release_certificate <- function(release, smp = NULL, ep = engine_plan(release$plan), recertify = FALSE) {
  cert <- release$certificate
  if (is.na(cert$goal %||% NA_character_) || recertify) {
    goal <- if (is.na(cert$goal %||% NA_character_)) "all_matches" else cert$goal
    # per-variable releases keep the keys their intruder knows (ifpr()'s
    # `known` holds the table of other intruders)
    keys <- if (is.character(cert$known)) cert$known else release$plan$cells$keys
    mx <- add_sample(plan_max_risk(release$plan, goal, keys, ep, weight = smp$weight), smp)
    cert[c("goal", "risk", "cell", "a", "count", "cell_keys")] <- mx[c("goal", "risk", "cell", "a", "count", "keys")]
    if (recertify) {
      cert$target_in_file <- mx$target_in_file
      cert["sample"] <- list(mx$sample)
    }
  }
  cert
}

#' @export
release_units.sdc_release_any <- function(release) {
  list(old = release$cells$cell_id, new = release$new_cell,
       s_new = tabulate(release$new_cell, nbins = nrow(release$cells$cells)))
}

# Group counts as "1", "2", "3+" (or "0", "1", "2", "3+").
cut_count <- function(x, labels) {
  start <- if (labels[1] == "0") 0 else 1
  idx <- pmin(x, start + length(labels) - 1) - start + 1
  factor(labels[idx], levels = labels)
}

# Mean correct-match probability by (tau, tau*) with margins; units, the
# clusters they fall in and the cluster-robust standard error of each mean.
risk_table <- function(p, tau_g, star_g, cluster = seq_along(p)) {
  cell <- function(sel) {
    n <- sum(sel)
    m <- if (n > 0) mean(p[sel]) else NA_real_
    c(units = n, clusters = length(unique(cluster[sel])), mean = m, se = cluster_se(p[sel], cluster[sel]))
  }
  rows <- c(levels(tau_g), "all")
  cols <- c(levels(star_g), "all")
  out <- expand.grid(tau_star = cols, tau = rows, stringsAsFactors = FALSE)[, c("tau", "tau_star")]
  vals <- t(vapply(seq_len(nrow(out)), function(i) {
    sel <- (out$tau[i] == "all" | tau_g == out$tau[i]) & (out$tau_star[i] == "all" | star_g == out$tau_star[i])
    cell(sel)
  }, numeric(4)))
  out <- cbind(out, as.data.frame(vals))
  out[out$units > 0 | out$tau == "all" | out$tau_star == "all", , drop = FALSE]
}

# Cluster-robust (sandwich) standard error of the mean of p: the squared
# sums of residuals by cluster, with the G / (G - 1) small-sample factor.
# With one unit per cluster it is sd(p) / sqrt(n); NA with fewer than two
# clusters, where nothing estimates the spread between them.
cluster_se <- function(p, cluster) {
  g <- length(unique(cluster))
  if (g < 2L) return(NA_real_)
  s <- rowsum(p - mean(p), cluster, reorder = FALSE)
  sqrt(g / (g - 1) * sum(s^2)) / length(p)
}

# Changes by original frequency, observed beside the exact probabilities
# that a unit of each cell moves and that the cell empties.
change_rows <- function(counts, old, unit, tau, stayed, s_new, p_move, p_empty, ub_empty) {
  grp <- cut_count(tau, c("1", "2", "3+"))
  cell_set <- unique(old[unit])
  cell_grp <- cut_count(counts[cell_set], c("1", "2", "3+"))
  lev <- levels(grp)[levels(grp) %in% unique(as.character(grp))]
  data.frame(
    tau = lev,
    units = vapply(lev, function(g) sum(grp == g), numeric(1)),
    units_changed = vapply(lev, function(g) sum(!stayed[grp == g]), numeric(1)),
    units_changed_pct = vapply(lev, function(g) 100 * mean(!stayed[grp == g]), numeric(1)),
    expected_changed_pct = vapply(lev, function(g) 100 * mean(p_move[old[unit][grp == g]]), numeric(1)),
    cells = vapply(lev, function(g) sum(cell_grp == g), numeric(1)),
    cells_emptied = vapply(lev, function(g) sum(s_new[cell_set[cell_grp == g]] == 0), numeric(1)),
    cells_emptied_pct = vapply(lev, function(g) 100 * mean(s_new[cell_set[cell_grp == g]] == 0), numeric(1)),
    expected_emptied_pct = vapply(lev, function(g) 100 * mean(p_empty[cell_set[cell_grp == g]]), numeric(1)),
    bound_emptied_pct = vapply(lev, function(g) 100 * mean(ub_empty[cell_set[cell_grp == g]]), numeric(1)),
    row.names = NULL
  )
}

# What the certificate's line is, wherever it is drawn beside realized means.
RISK_CERT_LABEL <- "certificate: max. of the expected risk"

#' @export
format.sdc_release_risk <- function(x, digits = 4, ...) {
  tab <- x$table
  rows <- unique(tab$tau)
  cols <- unique(tab$tau_star)
  m <- matrix("", length(rows), length(cols), dimnames = list(paste0("tau = ", rows), paste0("tau* = ", cols)))
  for (i in seq_len(nrow(tab))) {
    m[paste0("tau = ", tab$tau[i]), paste0("tau* = ", tab$tau_star[i])] <-
      if (is.na(tab$mean[i])) "-" else sprintf(paste0("%.", digits, "f (%s)"), tab$mean[i], fmt_int(tab$units[i]))
  }
  cert <- x$certificate
  ch <- x$changes
  smp <- cert$sample
  head <- c(
    "Empirical probability of a correct match in this release (one realization)",
    if (!is.null(smp)) {
      paste0("  of a target drawn from the population of a unit's cell (",
             if (isTRUE(smp$exact)) "times t / F" else "times the estimate of t / F", ")")
    },
    "  by original (tau) and released (tau*) frequency (units):"
  )
  tail <- c(
    sprintf("Certified %s maximum of %s: %s (goal: %s%s)%s",
      tolower(risk_kind(smp)), if (is.null(smp)) "R_j(a, t)" else "(t_j / F_j) R_j(a, t)",
      format(cert$risk, digits = 6), cert$goal,
      if (is.null(cert$xi) || is.na(cert$xi)) "" else paste0(", xi = ", format(cert$xi)),
      if (is.null(smp)) "" else paste0(", ", sample_line(smp))),
    "  (a bound on expected values over the perturbation: one release's means may lie above it)",
    "Changes by original frequency (observed | exact expected | eq. 4.10 bound):",
    sprintf("  tau = %s: %s of %s units changed (%.2f%% | %.2f%%); %s of %s cells emptied (%.2f%% | %.2f%% | %s)",
      ch$tau, fmt_int(ch$units_changed), fmt_int(ch$units), ch$units_changed_pct, ch$expected_changed_pct,
      fmt_int(ch$cells_emptied), fmt_int(ch$cells), ch$cells_emptied_pct, ch$expected_emptied_pct,
      ifelse(is.na(ch$bound_emptied_pct), "-", sprintf("%.2f%%", ch$bound_emptied_pct))),
    sprintf("Units in singleton + doubleton cells: %s before, %s after",
      fmt_int(sum(x$uniques$units_before)), fmt_int(sum(x$uniques$units_after)))
  )
  c(wrap_lines(head), utils::capture.output(print(noquote(m))), wrap_lines(tail))
}

#' @export
print.sdc_release_risk <- function(x, ...) {
  writeLines(format(x, ...))
  invisible(x)
}

#' @export
as.data.frame.sdc_release_risk <- function(x, ...) x$table

#' Data utility of a release: distributions, distances and variances
#'
#' Compares the original and released data (Nayak, Zhang and You 2016,
#' Sections 6 and 7.2):
#' * for each single variable, the original and perturbed frequency
#'   distributions with counts, relative frequencies, their difference
#'   (original minus perturbed) and the sampling standard deviation under
#'   simple random sampling, \eqn{\sqrt{n p (1 - p)}} (Tables 4 and 5);
#' * for each requested combination of variables, the total variation
#'   distance \eqn{TVD = \frac{1}{2n} \sum_i |f_i - \tilde f_i|} between the
#'   joint distributions (eq. 7.1, Table 6) and the number of cells (the
#'   product of the numbers of categories);
#' * for each category \eqn{D} of a perturbed variable, the exact conditional
#'   variance \eqn{V(S_D | T)} of its perturbed count given the original
#'   counts, from the plan (eq. 3.6; for an IFPR block eq. 6.5), the bound
#'   \eqn{2 \theta b_R} of eq. 6.7, and the sampling variance
#'   \eqn{n p (1 - p)}: perturbation variance is of lower order as the file
#'   grows with the probabilities fixed, but need not be small in a given
#'   file (compare the two columns).
#'
#' @param release An `sdc_release` from [ifpr()].
#' @param vars Variables of the data (keys or not): a character vector, each
#'   compared alone, or a list of character vectors, each a combination whose
#'   joint distribution is compared (single variables of the list also get
#'   their distributions and variances).
#' @returns An object of class `sdc_utility`: a list with `distributions`
#'   (one data frame per single variable), `tvd` (one row per combination) and
#'   `variance` (one data frame per perturbed single variable).
#' @family evaluation
#' @export
#' @examples
#' set.seed(1)
#' keys <- c("sex", "age", "race", "marital", "puma")
#' rel <- ifpr(pums_md, keys, 0.3, partition = list(sex = "keep"))
#' u <- release_utility(rel, list("marital", "race", c("race", "marital"), c("puma", "education")))
#' u
#' u$distributions$marital
release_utility <- function(release, vars) {
  release <- as_release(release)
  combos <- if (is.list(vars)) vars else as.list(vars)
  all_vars <- unique(unlist(combos))
  if (length(combos) == 0 || !is.character(all_vars)) {
    abort_sdc(c(
      "{.arg vars} must name variables of the data, as a character vector or a list of them.",
      "x" = "It is {.obj_type_friendly {vars}}."
    ), "argument", arg = "vars")
  }
  cols <- colnames(release$data)
  check_names_in(all_vars, stats::setNames(vector("list", length(cols)), cols), arg = "vars", what = "variable")
  singles <- unique(unlist(combos[lengths(combos) == 1]))
  if (!is.list(vars)) singles <- all_vars
  d <- release_distributions(release, combos, singles)
  perturbed <- intersect(singles, c(release$keys, release$also))
  n <- release$cells$n_records
  structure(
    list(
      distributions = d$distributions,
      tvd = d$tvd,
      variance = stats::setNames(lapply(perturbed, function(v) {
        out <- plan_category_moments(release$plan, v)
        o <- out$original
        out$sampling_var <- n * (o / n) * (1 - o / n)
        out
      }), perturbed),
      n = d$n
    ),
    class = "sdc_utility"
  )
}

#' @export
release_distributions.sdc_release_any <- function(release, combos, singles) {
  all_vars <- unique(unlist(combos))
  check_atomic_columns(release$data, all_vars, arg = "vars", call = rlang::caller_env())
  orig <- original_data(release, all_vars)
  pert <- release$data
  n <- nrow(pert)
  list(
    distributions = stats::setNames(lapply(singles, function(v) distribution_table(orig[[v]], pert[[v]], n)), singles),
    tvd = do.call(rbind, lapply(combos, function(cv) tvd_row(orig[cv], pert[cv], n))),
    n = n
  )
}

# The original values of the variables: keys and `also` from the cells of
# each record, everything else unchanged in the release.
original_data <- function(release, vars) {
  out <- release$data[vars]
  cells <- release$cells
  inside <- !is.na(cells$cell_id)
  for (v in intersect(vars, cells$keys)) {
    x <- out[[v]]
    x[inside] <- cells$cells[[v]][cells$cell_id[inside]]
    out[[v]] <- x
  }
  out
}

distribution_table <- function(x, y, n) {
  lev <- if (is.factor(x)) levels(x) else sort(unique(c(x, y)), na.last = TRUE)
  if (is.factor(x) && (anyNA(x) || anyNA(y))) lev <- c(lev, NA) # na = "category"
  fx <- factor(x, levels = lev, exclude = NULL)
  fy <- factor(y, levels = lev, exclude = NULL)
  o <- as.vector(table(fx, useNA = "no"))
  p <- as.vector(table(fy, useNA = "no"))
  data.frame(
    category = as.character(lev),
    original = o,
    original_share = o / n,
    perturbed = p,
    perturbed_share = p / n,
    difference = o - p,
    sampling_sd = sqrt(n * (o / n) * (1 - o / n))
  )
}

# Total variation distance between the joint distributions of the columns of
# `a` (original) and `b` (released), over the combinations that occur. Each
# record's combination is a mixed-radix number of per-column codes (NA a code
# of its own), renumbered densely whenever the radix would pass 2^50, so that
# the numbers stay exact doubles.
tvd_row <- function(a, b, n) {
  ja <- jb <- numeric(nrow(a))
  radix <- 1
  ncat <- 1
  for (v in names(a)) {
    x <- a[[v]]
    y <- b[[v]]
    if (is.factor(x) && is.factor(y) && identical(levels(x), levels(y))) {
      m <- nlevels(x) + 1L
      cx <- as.integer(x)
      cy <- as.integer(y)
      cx[is.na(cx)] <- m
      cy[is.na(cy)] <- m
    } else {
      x <- as.character(x)
      y <- as.character(y)
      u <- unique(c(x, y))
      m <- length(u)
      cx <- match(x, u)
      cy <- match(y, u)
    }
    ncat <- ncat * length(unique(c(unique(cx), unique(cy))))
    if (radix * m > 2^50) {
      u <- unique(c(ja, jb))
      ja <- match(ja, u) - 1
      jb <- match(jb, u) - 1
      radix <- as.numeric(length(u))
    }
    ja <- ja + (cx - 1) * radix
    jb <- jb + (cy - 1) * radix
    radix <- radix * m
  }
  all <- unique(c(ja, jb))
  fa <- tabulate(match(ja, all), length(all))
  fb <- tabulate(match(jb, all), length(all))
  data.frame(
    variables = paste(names(a), collapse = ", "),
    tvd = sum(abs(fa - fb)) / (2 * n),
    cells = ncat,
    nonempty = length(all)
  )
}

# Sums of x by index (1..n) as a vector of length n: sum_by(), in the
# argument order of tabulate().
tabulate_sum <- function(index, x, n) sum_by(x, index, n)

#' @export
format.sdc_utility <- function(x, ...) {
  out <- character()
  for (v in names(x$distributions)) {
    d <- x$distributions[[v]]
    out <- c(out, paste0("Distribution of ", v, " (original, perturbed, difference, sampling SD):"),
      sprintf("  %-30s %8s (%.4f) %8s (%.4f) %6s %8.2f", substr(d$category, 1, 30), fmt_int(d$original), d$original_share,
        fmt_int(d$perturbed), d$perturbed_share, fmt_int(d$difference), d$sampling_sd))
  }
  if (!is.null(x$tvd)) {
    out <- c(out, "Total variation distance between original and perturbed joint distributions:",
      sprintf("  %-40s TVD %.4f over %s cells", x$tvd$variables, x$tvd$tvd, fmt_int(x$tvd$cells)))
  }
  for (v in names(x$variance)) {
    d <- x$variance[[v]]
    out <- c(out, sprintf(
      "Perturbation variance of %s counts: at most %.3g (bound %.3g), against sampling variance up to %.3g",
      v, max(d$perturbation_var), max(d$bound_var), max(d$sampling_var)
    ))
  }
  out
}

#' @export
print.sdc_utility <- function(x, ...) {
  writeLines(format(x, ...))
  invisible(x)
}

#' @export
as.data.frame.sdc_utility <- function(x, ...) {
  do.call(rbind, lapply(names(x$distributions), function(v) cbind(variable = v, x$distributions[[v]])))
}

#' Plot a release, its empirical risk or its utility
#'
#' Base graphics, no other dependency.
#' * `plot(<sdc_release>)`: the exact \eqn{R_j(a, t)} against \eqn{a} for the
#'   `n` riskiest cells of the certificate's goal, with the bound \eqn{\xi}.
#' * `plot(<sdc_release_risk>)`: the empirical probability of a correct match
#'   by released frequency \eqn{\tau^*}, one line per original frequency
#'   \eqn{\tau}, with \eqn{\pm 2} cluster-robust standard errors, in one
#'   realization of the perturbation. The certificate, a bound on the
#'   expected values, is drawn as a dashed line labelled so: single
#'   realizations may lie above it (see [release_risk()]).
#' * `plot(<sdc_utility>)`: original against perturbed relative frequencies
#'   of the first variable (`which = "distribution"`) or the total variation
#'   distance of every combination (`which = "tvd"`).
#'
#' @param x The object to plot.
#' @param n Number of cells shown.
#' @param a_max Largest \eqn{a} shown.
#' @param which What to show for a utility object.
#' @param ... Passed on to the graphics functions.
#' @returns `x`, invisibly.
#' @family evaluation
#' @name plot-evaluation
#' @examples
#' set.seed(1)
#' keys <- c("sex", "age", "race", "marital", "puma")
#' rel <- ifpr(pums_md, keys, 0.3, partition = list(sex = "keep"))
#' plot(rel)
#' plot(release_risk(rel))
#' u <- release_utility(rel, list("marital", c("race", "marital"), c("puma", "worker")))
#' plot(u)
#' plot(u, which = "tvd")
NULL

#' @rdname plot-evaluation
#' @export
plot.sdc_release <- function(x, n = 5, a_max = NULL, ...) {
  x <- as_release(x, arg = "x")
  cert <- x$certificate
  plot_risk_curves(x$plan, unique(x$plan$block_cells), cert$xi, "xi", n,
    a_max %||% max(3, ceiling(2 / cert$xi)), "Exact correct-match risk of the riskiest cells", ...)
  invisible(x)
}

#' @rdname plot-evaluation
#' @export
plot.sdc_pram_release <- function(x, n = 5, a_max = NULL, ...) {
  x <- as_release(x, arg = "x")
  cert <- x$certificate
  plan <- x$plan
  counts <- plan$cells$cells$count
  # the certified worst cell and the smallest cells whose units can move
  # (at most 500 of them: each costs a pass over the cells)
  movable <- which(plan_movable(plan))
  small <- movable[order(counts[movable], movable)][seq_len(min(500, length(movable)))]
  cand <- unique(c(if (!is.na(cert$cell)) cert$cell, small))
  risk <- if (is.na(cert$risk)) 0.5 else cert$risk
  plot_risk_curves(plan, cand, cert$risk, "certified maximum", n,
    a_max %||% max(3, ceiling(2 / max(risk, 0.05))),
    "Exact correct-match risk of the riskiest small cells", ...)
  invisible(x)
}

# R_j(a, t) against a for the n riskiest of the candidate cells (by their
# risk at a = 1, one cell per distinct curve), with a horizontal line at
# `level`.
plot_risk_curves <- function(plan, cand, level, level_label, n, a_max, main, ...) {
  if (length(cand) == 0) {
    graphics::plot.new()
    graphics::title(main = "No cell is perturbed")
    return(invisible())
  }
  r1 <- match_risk(plan, cells = cand, a = 1)
  # cells of the same count in identical blocks share their risks
  key <- paste(r1$count, signif(r1$risk, 10), signif(r1$p_empty, 10))
  first <- !duplicated(key)
  rk <- ifelse(is.na(r1$risk), -Inf, r1$risk)
  top <- r1$cell[first][order(-rk[first])][seq_len(min(n, sum(first)))]
  mr <- match_risk(plan, cells = top, a = seq_len(a_max))
  ylim <- c(0, max(c(mr$risk, level), na.rm = TRUE))
  labels <- c(paste0("cell ", top, " (T = ", plan$cells$cells$count[top], ")"), level_label)
  # the legend goes in a right margin made wide enough for it: inside the
  # plot it covered the curves, which start high at a = 1 (issue 37)
  room <- max(graphics::strwidth(labels, units = "inches")) + 0.6
  old <- graphics::par(mar = c(5.1, 4.1, 4.1, 1.1 + room / graphics::par("csi")))
  on.exit(graphics::par(old))
  graphics::plot(NA, xlim = c(1, a_max), ylim = ylim, xlab = "a (released records matching the target)",
    ylab = "R_j(a, t)", main = main, xaxt = "n", ...)
  graphics::axis(1, at = unique(round(pretty(c(1, a_max)))))
  cols <- grDevices::hcl.colors(length(top), "Dark 3")
  for (i in seq_along(top)) {
    d <- mr[mr$cell == top[i], ]
    graphics::lines(d$a, d$risk, type = "b", pch = 19, col = cols[i])
  }
  if (!is.na(level)) graphics::abline(h = level, lty = 2, col = "red")
  leg <- graphics::legend("topleft", labels, inset = c(1.02, 0), xpd = TRUE,
    col = c(cols, "red"), lty = c(rep(1, length(top)), 2), pch = c(rep(19, length(top)), NA), bty = "n")
  invisible(leg)
}

#' @rdname plot-evaluation
#' @export
plot.sdc_release_risk <- function(x, ...) {
  tab <- x$table
  tab <- tab[tab$tau != "all" & tab$tau_star != "all" & tab$tau_star != "0", ]
  stars <- c("1", "2", "3+")
  ylim <- c(0, max(c(tab$mean + 2 * ifelse(is.na(tab$se), 0, tab$se), x$certificate$risk), na.rm = TRUE))
  graphics::plot(NA, xlim = c(0.8, 3.2), ylim = ylim, xaxt = "n", xlab = "tau* (released frequency)",
    ylab = "mean probability of a correct match", main = "Empirical risk in this release (one realization)", ...)
  graphics::axis(1, at = 1:3, labels = stars)
  taus <- unique(tab$tau)
  cols <- grDevices::hcl.colors(max(2, length(taus)), "Dark 3")
  for (i in seq_along(taus)) {
    d <- tab[tab$tau == taus[i], ]
    xpos <- match(d$tau_star, stars) + (i - 1) * 0.05
    graphics::lines(xpos, d$mean, type = "b", pch = 19, col = cols[i])
    # an error bar shorter than a thousandth of the axis cannot be drawn
    # (graphics warns of a zero-length arrow); its point says it all
    ok <- !is.na(d$se) & 4 * d$se > 1e-3 * diff(graphics::par("usr")[3:4])
    if (any(ok)) {
      graphics::arrows(xpos[ok], d$mean[ok] - 2 * d$se[ok], xpos[ok], d$mean[ok] + 2 * d$se[ok],
        angle = 90, code = 3, length = 0.03, col = cols[i])
    }
  }
  graphics::abline(h = x$certificate$risk, lty = 2, col = "red")
  graphics::legend("bottomleft", c(paste("tau =", taus), RISK_CERT_LABEL), col = c(cols[seq_along(taus)], "red"),
    lty = c(rep(1, length(taus)), 2), bty = "n")
  invisible(x)
}

#' @rdname plot-evaluation
#' @export
plot.sdc_utility <- function(x, which = c("distribution", "tvd"), ...) {
  which <- check_choice(which)
  if (which == "distribution" && length(x$distributions) > 0) {
    d <- x$distributions[[1]]
    m <- rbind(original = d$original_share, perturbed = d$perturbed_share)
    colnames(m) <- ifelse(is.na(d$category), "NA", d$category)
    # room below for the longest category label, above for the legend
    width <- max(graphics::strwidth(colnames(m), units = "inches", cex = graphics::par("cex.axis")))
    # at most half the device's height, so that long labels never fail
    # with "figure margins too large" (race in a report: issue 37)
    most <- 0.5 * graphics::par("din")[2] / graphics::par("csi")
    old <- graphics::par(mar = c(min(max(5, width / graphics::par("csi") + 2.5), 25, most), 4, 4, 1) + 0.1)
    on.exit(graphics::par(old))
    graphics::barplot(m, beside = TRUE, las = 2, ylab = "relative frequency",
      ylim = c(0, 1.15 * max(m)), col = c("grey35", "grey75"),
      main = paste("Distribution of", names(x$distributions)[1]), ...)
    graphics::legend("top", c("original", "perturbed"), fill = c("grey35", "grey75"), horiz = TRUE, bty = "n")
  } else {
    t <- x$tvd
    # room on the left for the longest label (it was cut: issue 37)
    width <- max(graphics::strwidth(t$variables, units = "inches", cex = graphics::par("cex.axis")))
    # and the title centred on the whole figure, not on the narrowed plot
    old <- graphics::par(mar = c(5, min(max(4, width / graphics::par("csi") + 1.5), 30), 2, 1) + 0.1, oma = c(0, 0, 2, 0))
    on.exit(graphics::par(old))
    graphics::barplot(t$tvd, names.arg = t$variables, horiz = TRUE, las = 1, xlab = "total variation distance", ...)
    graphics::title(main = "Original against perturbed joint distributions", outer = TRUE)
  }
  invisible(x)
}

# The largest non-missing value, NA (not -Inf with a warning) when none.
largest_or_na <- function(x) {
  x <- x[!is.na(x)]
  if (length(x) == 0) NA_real_ else max(x)
}

#' @export
summary.sdc_release_risk <- function(object, ...) {
  tab <- object$table
  margins <- tab[tab$tau == "all" | tab$tau_star == "all", c("tau", "tau_star", "units", "mean", "se")]
  structure(
    list(margins = margins, changes = object$changes, uniques = object$uniques,
         certified = object$certificate$risk, xi = object$certificate$xi,
         largest_empirical = largest_or_na(tab$mean[tab$units >= 30])),
    class = "summary.sdc_release_risk"
  )
}

#' @export
print.summary.sdc_release_risk <- function(x, ...) {
  cat(sprintf("Certified maximum risk %s%s, a bound on expected values; largest mean in this release (one realization) over groups of 30+ units %s\n",
    format(x$certified, digits = 5),
    if (is.null(x$xi) || is.na(x$xi)) "" else paste0(" (xi = ", format(x$xi), ")"),
    if (is.na(x$largest_empirical)) "none (no group has 30 units)" else format(x$largest_empirical, digits = 4)))
  cat("Margins of the empirical correct-match probability:\n")
  print(x$margins, row.names = FALSE, digits = 4)
  cat("Changes by original frequency:\n")
  print(x$changes[, c("tau", "units", "units_changed_pct", "expected_changed_pct", "cells_emptied_pct", "expected_emptied_pct")],
    row.names = FALSE, digits = 4)
  invisible(x)
}

#' @export
summary.sdc_utility <- function(object, ...) {
  dist <- do.call(rbind, lapply(names(object$distributions), function(v) {
    d <- object$distributions[[v]]
    data.frame(variable = v, categories = nrow(d), largest_abs_difference = max(abs(d$difference)),
               largest_difference_in_sd = max(abs(d$difference) / pmax(d$sampling_sd, 1e-300)))
  }))
  var <- do.call(rbind, lapply(names(object$variance), function(v) {
    d <- object$variance[[v]]
    ok <- d$sampling_var > 0
    data.frame(variable = v, largest_perturbation_var = max(d$perturbation_var),
               largest_ratio_to_sampling_var = if (any(ok)) max(d$perturbation_var[ok] / d$sampling_var[ok]) else NA_real_)
  }))
  structure(list(distributions = dist, tvd = object$tvd, variance = var), class = "summary.sdc_utility")
}

#' @export
print.summary.sdc_utility <- function(x, ...) {
  if (!is.null(x$distributions)) {
    cat("Marginal distributions (differences original - perturbed):\n")
    print(x$distributions, row.names = FALSE, digits = 4)
  }
  if (!is.null(x$tvd)) {
    cat("Total variation distances:\n")
    print(x$tvd, row.names = FALSE, digits = 4)
  }
  if (!is.null(x$variance)) {
    cat("Perturbation against sampling variance of category counts:\n")
    print(x$variance, row.names = FALSE, digits = 4)
  }
  invisible(x)
}
