#' Protect a table by secondary cell suppression
#'
#' Chooses cells to suppress besides the sensitive ones so that no sensitive
#' cell can be recovered, or estimated more closely than its protection
#' level, from the published cells, the table's additive relations (at every
#' level of every hierarchy) and a priori bounds; and proves it with the
#' audit of [audit_table()]. The returned pattern always passes its own
#' audit: otherwise the function stops with an error of class
#' `sdcRisk_error_unprotectable` naming the cell.
#'
#' The heuristic scales to tables of \eqn{10^4} to \eqn{10^5} cells:
#' 1. Singletons: every relation (a margin and the cells it adds up) holding
#'    exactly one suppressed cell would give it away by subtraction, so the
#'    cheapest published cell of such a relation is suppressed too, cells
#'    closing several open relations at once and opening few new ones being
#'    preferred (cost times the square of one plus the number of relations
#'    it would open, divided by the number it closes); repeated until no
#'    relation holds a single suppressed cell. This is what keeps sensitive cells from exact
#'    disclosure, as the hypercube and singleton steps of tau-ARGUS and
#'    sdcTable do.
#' 2. Audit: every sensitive cell not yet shown protected, by linear
#'    programming over its connected set of suppressed cells only, an optimal
#'    table of one program serving as witness for every cell it takes far
#'    enough (see `intervals = "none"` in [audit_table()]). Suppressing more
#'    cells only widens intervals, so a cell that passes once is never solved
#'    again until the final certificate.
#' 3. For each cell that fails, the cheapest published cell sharing a
#'    relation with it whose value can absorb the protection level (or, if
#'    none can, the cheapest such cell; if the cell's relations are all
#'    suppressed, the cheapest published cell of a relation of its connected
#'    set) is suppressed; back to 1.
#'
#' Each round suppresses at least one more cell, so the loop ends. The cost of
#' suppressing a cell is its absolute value (`cost = "value"`, the total
#' value lost) or 1 (`cost = "cells"`, ties broken by smaller value, so
#' detailed cells go before margins). The heuristic does not seek the optimum
#' (a mixed integer program, Fischetti and Salazar-González 2001); it is
#' built to be fast and always audited.
#'
#' Frequency tables are protected the same way: make the table of a column
#' of ones with [rule_frequency()] (see the examples).
#'
#' @inheritParams audit_table
#' @param cost What suppression loses: `"value"` (the sum of the suppressed
#'   cells' absolute values) or `"cells"` (their number).
#' @returns An object of class `sdc_protection`: the table as a data frame,
#'   one row per cell, with the `by` columns, `level`, `total`, `status`
#'   (factor: `"published"`, `"primary"` or `"secondary"`), `reason` (the
#'   rules that flag a primary cell; for a secondary cell the step that chose
#'   it and the cell it protects), `protection` (the level required on each
#'   side, 0 for non-sensitive cells), `lower` and `upper` (the audit's
#'   feasibility interval of every suppressed cell with `intervals =
#'   "suppressed"`, `NA` for published cells) and `protected` (`TRUE` for
#'   every sensitive cell, `NA` otherwise). Attributes `by`, `value`, `cost`
#'   and `stats` (rounds, linear programs solved, seconds).
#' @references Hundepool, A. et al. (2012). *Statistical Disclosure
#'   Control*, Section 4.4. Wiley.
#'
#'   Fischetti, M. and Salazar-González, J. J. (2001). Solving the cell
#'   suppression problem on tabular data with linear constraints.
#'   *Management Science* 47(7), 1008-1027.
#'
#'   Langsrud, Ø. (2024). Secondary cell suppression by Gaussian elimination:
#'   an algorithm suitable for handling issues with zeros and singletons.
#'   In *Privacy in Statistical Databases*, LNCS 14915. Springer.
#' @family tabular
#' @export
#' @examples
#' set.seed(3)
#' firms <- data.frame(firm = 1:80,
#'                     sector = sample(c("a", "b", "c", "d"), 80, TRUE),
#'                     area = sample(c("x", "y", "z"), 80, TRUE),
#'                     sales = round(rlnorm(80, 5, 1.5)))
#' sens <- cell_sensitivity(firms, c("sector", "area"), "sales",
#'   rules = list(rule_frequency(3), rule_p(15)), contributor = "firm")
#' prot <- protect_table(sens)
#' prot
#' plot(prot)
#'
#' # a frequency table: counts of firms, frequency rule
#' firms$one <- 1
#' counts <- cell_sensitivity(firms, c("sector", "area"), "one", rule_frequency(3))
#' protect_table(counts, cost = "cells")
protect_table <- function(x, ..., cost = c("value", "cells"), lower = NULL, upper = NULL,
                          freq_protection = 10, intervals = c("suppressed", "sensitive", "none")) {
  rlang::check_dots_empty()
  check_sensitivity_table(x)
  cost <- check_choice(cost)
  intervals <- check_choice(intervals)
  start <- proc.time()[["elapsed"]]
  prep <- table_problem(x, lower, upper, freq_protection)
  w <- suppression_cost(prep$value, cost)
  labels <- cell_labels(x)
  primary <- prep$sensitive
  supp <- primary
  reason <- ifelse(primary, x$rules, "")
  passed <- !primary
  rounds <- 0L
  n_lp <- 0L
  # step 1: singletons; or, as an experiment (internal option
  # sdcRisk.elimination = TRUE), elimination, falling back to singletons on a
  # table too dense for it. The elimination finds fewer suppressions against
  # exact disclosure but leaves more work to step 3 on the bench tables (see
  # the suppression section of bench/README.md), so it is not the default.
  elim <- if (any(primary) && isTRUE(getOption("sdcRisk.elimination", FALSE))) {
    gauss_step(prep$structure, primary, w, labels)
  }
  singletons <- is.null(elim)
  if (!singletons) {
    reason[elim$cells] <- elim$reason
    supp[elim$cells] <- TRUE
  }
  repeat {
    rounds <- rounds + 1L
    if (singletons) {
      closed <- close_singletons(prep$structure, supp, w, labels)
      reason[closed$cells] <- closed$reason
      supp[closed$cells] <- TRUE
    }
    todo <- which(primary & !passed)
    res <- audit_cells(prep, supp, todo, exact = FALSE)
    n_lp <- n_lp + res$n_lp
    ok <- protection_met(prep, todo, res$lower, res$upper)
    passed[todo[ok]] <- TRUE
    failing <- todo[!ok]
    if (!length(failing)) break
    grown <- widen_pattern(prep, supp, w, failing, labels, call = rlang::current_env())
    reason[grown$cells] <- grown$reason
    supp[grown$cells] <- TRUE
  }
  targets <- which(supp & (primary | intervals == "suppressed"))
  final <- audit_cells(prep, supp, targets, exact = intervals != "none")
  n_lp <- n_lp + final$n_lp
  cert <- new_sdc_audit(x, prep, supp, targets, final)
  if (intervals == "none") final$lower[] <- final$upper[] <- NA_real_
  if (!isTRUE(attr(cert, "passed"))) {
    # cannot happen: a cell that passed keeps passing when more are suppressed
    abort_sdc("Internal error: the final audit failed.", "internal")
  }
  stats <- list(rounds = rounds, n_lp = n_lp, seconds = proc.time()[["elapsed"]] - start)
  new_sdc_protection(x, prep, supp, reason, targets, final, cost, stats)
}

new_sdc_protection <- function(x, prep, supp, reason, targets, final, cost, stats) {
  by <- attr(x, "by")
  out <- as.data.frame(x)[c(by, "level", "total")]
  status <- ifelse(prep$sensitive, "primary", ifelse(supp, "secondary", "published"))
  out$status <- factor(status, levels = c("published", "primary", "secondary"))
  out$reason <- reason
  out$protection <- ifelse(prep$sensitive, prep$level, 0)
  out$lower <- NA_real_
  out$upper <- NA_real_
  out$lower[targets] <- final$lower
  out$upper[targets] <- final$upper
  out$protected <- ifelse(prep$sensitive, TRUE, NA)
  structure(out, class = c("sdc_protection", "data.frame"), by = by, value = attr(x, "value"),
            cost = cost, stats = stats, total_label = attr(x, "options")$total_label)
}

suppression_cost <- function(value, cost) {
  a <- abs(value)
  scale <- max(a, 1)
  # ties: smaller cells first
  if (cost == "cells") 1 + 1e-3 * a / scale else a + 1e-9 * scale
}

cell_labels <- function(x) {
  by <- attr(x, "by")
  do.call(paste, c(lapply(by, function(b) as.character(x[[b]])), sep = " x "))
}

# The inner cells of the table (cells that add up no others) below each
# cell, as incidences (inner, cell): the matrix X of y = X' z.
inner_incidence <- function(st) {
  parent_of_rel <- integer(st$nrel)
  parent_of_rel[st$rel[st$coef < 0]] <- st$cell[st$coef < 0]
  up <- st$coef > 0
  edges <- split(parent_of_rel[st$rel[up]], factor(st$cell[up], levels = seq_len(st$ncell)))
  inner <- setdiff(seq_len(st$ncell), st$cell[st$coef < 0])
  n <- length(inner)
  i <- seq_len(n)
  c_ <- inner
  all_i <- i
  all_c <- c_
  seen <- i + (c_ - 1) * n
  repeat {
    nxt <- edges[c_]
    k <- lengths(nxt)
    if (!sum(k)) break
    i <- rep(i, k)
    c_ <- unlist(nxt, use.names = FALSE)
    key <- i + (c_ - 1) * n
    new <- !duplicated(key) & !(key %in% seen)
    i <- i[new]
    c_ <- c_[new]
    seen <- c(seen, key[new])
    all_i <- c(all_i, i)
    all_c <- c(all_c, c_)
  }
  list(inner = all_i, cell = all_c, n_inner = n)
}

# Step 1 by Gaussian elimination (Langsrud 2024): publish the cells in
# decreasing order of cost unless publishing one would let a primary cell be
# computed exactly from the published cells and additivity; those are
# suppressed. NULL when the elimination outgrows its work limit (entry
# operations; the internal option sdcRisk.elimination_work, 0 to turn the
# step off), which the caller meets with the singleton step.
gauss_step <- function(st, primary, w, labels,
                       max_work = getOption("sdcRisk.elimination_work", 2e10)) {
  X <- inner_incidence(st)
  prim <- which(primary)
  order <- which(!primary)
  order <- order[order(-w[order], order)]
  res <- cpp_gauss_candidates(X$inner, X$cell, X$n_inner, st$ncell, prim, order, max_work)
  if (!res$completed) return(NULL)
  hit <- res$suppress > 0
  list(cells = order[hit], reason = paste("elimination:", labels[prim[res$suppress[hit]]]))
}

# Step 1 (fallback): suppress a published cell in every relation holding a single
# suppressed cell, until none is left.
close_singletons <- function(st, supp, w, labels) {
  cells <- integer(0)
  reason <- character(0)
  repeat {
    count <- tabulate(st$rel[supp[st$cell]], st$nrel)
    single <- count == 1L
    if (!any(single)) break
    # a cell added to a relation with no suppressed cell opens a new singleton
    opens <- tabulate(st$cell[count[st$rel] == 0L], st$ncell)
    alone <- single[st$rel]
    # the suppressed cell each open relation would give away
    lonely <- st$cell[alone & supp[st$cell]]
    names(lonely) <- st$rel[alone & supp[st$cell]]
    cand <- which(alone & !supp[st$cell])
    cc <- st$cell[cand]
    rr <- st$rel[cand]
    score <- w[cc] * (1 + opens[cc])^2 / tabulate(cc, st$ncell)[cc]
    o <- order(rr, score, cc)
    first <- o[!duplicated(rr[o])]
    # accept the best choices first; a relation already closed by an
    # accepted cell needs no cell of its own
    first <- first[order(score[first], cc[first])]
    open <- single
    for (k in first) {
      if (!open[rr[k]] || supp[cc[k]]) next
      supp[cc[k]] <- TRUE
      open[st$cell_rels[[cc[k]]]] <- FALSE
      cells <- c(cells, cc[k])
      reason <- c(reason, paste("singleton:", labels[lonely[[as.character(rr[k])]]]))
    }
  }
  list(cells = cells, reason = reason)
}

# Step 3: one more suppression next to each cell that fails its audit.
widen_pattern <- function(prep, supp, w, failing, labels, call) {
  st <- prep$structure
  cells <- integer(0)
  reason <- character(0)
  capacity <- pmax(prep$value - prep$lower, prep$upper - prep$value)
  for (f in failing) {
    rels <- st$cell_rels[[f]]
    cand <- unique(st$cell[unlist(st$members[rels])])
    cand <- cand[!supp[cand]]
    if (!length(cand)) {
      # every relation of the cell is suppressed: reach further, through the
      # relations of its connected set of suppressed cells
      is_s <- supp[st$cell]
      comp <- cpp_relation_components(st$rel[is_s], st$cell[is_s], st$nrel, st$ncell)
      mates <- which(supp & comp == comp[f])
      cand <- unique(st$cell[unlist(st$members[unique(unlist(st$cell_rels[mates]))])])
      cand <- cand[!supp[cand]]
    }
    if (!length(cand)) {
      abort_sdc(c(
        "Cell {.val {labels[f]}} cannot be protected.",
        "x" = "It needs {format(prep$level[f])} on each side of {format(prep$value[f])}, and suppressing every related cell does not give it.",
        "i" = "Check the bounds {.arg lower}/{.arg upper} and the protection levels of the rules."
      ), "unprotectable", call = call)
    }
    able <- capacity[cand] >= prep$level[f]
    pick <- cand[order(!able, w[cand], cand)][1]
    supp[pick] <- TRUE
    cells <- c(cells, pick)
    reason <- c(reason, paste("audit:", labels[f]))
  }
  list(cells = cells, reason = reason)
}

#' @export
format.sdc_protection <- function(x, n = 10, ...) {
  st <- attr(x, "stats")
  status <- x$status
  lost <- sum(abs(x$total[status != "published"]))
  df <- as.data.frame(unclass(x))
  shown <- df[status != "published", , drop = FALSE]
  c(
    sprintf("<sdc_protection> %d cell%s of %s by %s", nrow(x), if (nrow(x) == 1) "" else "s",
            attr(x, "value"), paste(attr(x, "by"), collapse = " x ")),
    sprintf("Suppressed: %d primary, %d secondary (%s of the value); cost = \"%s\"",
            sum(status == "primary"), sum(status == "secondary"),
            format(lost, big.mark = ",", scientific = FALSE), attr(x, "cost")),
    sprintf("Audit passed: every sensitive cell protected (%d rounds, %d linear programs, %.2f s)",
            st$rounds, st$n_lp, st$seconds),
    utils::capture.output(print(utils::head(shown, n), row.names = FALSE)),
    if (nrow(shown) > n) sprintf("# ... %d more suppressed cells", nrow(shown) - n)
  )
}

#' @export
print.sdc_protection <- function(x, n = 10, ...) {
  cat(format(x, n = n, ...), sep = "\n")
  invisible(x)
}

#' Plot a suppression pattern
#'
#' Draws the two-way table of `rows` by `cols` (the other `by` variables at
#' their totals), margins included, with each published cell's total and
#' the primary and secondary suppressions filled. Base graphics only.
#'
#' @param x An `sdc_protection` object from [protect_table()].
#' @param rows,cols `by` variables shown in rows and columns (`cols = NULL`
#'   for a one-way table).
#' @param col Fill colours of published, primary and secondary cells.
#' @param digits Significant digits of the totals shown.
#' @param main Title.
#' @param ... Further graphical parameters passed to [graphics::plot.default()].
#' @returns `x`, invisibly.
#' @family tabular
#' @export
#' @examples
#' set.seed(2)
#' d <- data.frame(sector = sample(c("a", "b", "c"), 40, TRUE),
#'                 area = sample(c("x", "y"), 40, TRUE),
#'                 sales = round(rlnorm(40, 5, 1.2)))
#' plot(protect_table(cell_sensitivity(d, c("sector", "area"), "sales", rule_p(15))))
plot.sdc_protection <- function(x, rows = attr(x, "by")[1],
                                cols = if (length(attr(x, "by")) > 1) attr(x, "by")[2],
                                col = c(published = "grey95", primary = "#E06666",
                                        secondary = "#F6B26B"),
                                digits = 4, main = NULL, ...) {
  by <- attr(x, "by")
  sub <- table_slice(x, by, rows, cols, attr(x, "total_label"))
  plot_table_grid(sub, x, rows, cols,
    fill = col[as.character(sub$status)],
    labels = ifelse(sub$status == "published", format(signif(sub$total, digits), big.mark = ",", trim = TRUE),
                    ifelse(sub$status == "primary", "X", "x")),
    legend_fill = col, legend = names(col),
    main = main %||% paste("Suppression pattern of", attr(x, "value")), ...
  )
  invisible(x)
}
