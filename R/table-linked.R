#' Protect or audit linked tables
#'
#' Agencies publish several tables of one magnitude from the same records
#' (turnover by industry x region and by industry x size class, say). Their
#' cells overlap: the industry margins, the grand total. An attacker who
#' knows every published cell of every table and all their relations learns
#' more than from each table alone, so the tables are protected together
#' (the "linked tables" of tau-ARGUS, the "super-consistent" tables of
#' GaussSuppression's `SuppressLinkedTables()`).
#'
#' `protect_tables()` makes one problem of all the tables: a cell is the same
#' cell in every table where it has the same categories of the same
#' variables (the others totalled), e.g. industry A at the total of region
#' in the first table and at the total of size class in the second. Its
#' relations are the union of the tables' relations; a cell sensitive in one
#' table is sensitive in all (with the largest protection level of any),
#' and its a priori bounds are the tightest of any table. The heuristic of
#' [protect_table()] (with every cell of the problem in its search box) and
#' its clean-up choose one pattern, audited over the union as always, and
#' each table gets its own result, with the same status for each shared
#' cell.
#'
#' `audit_tables()` audits given patterns, one per table, over the union of
#' the relations. A shared cell published in any table is known to the
#' attacker, so it counts as published everywhere.
#'
#' The tables must come from the same records and the same `value`
#' ([cell_sensitivity()] with the same data): a shared cell whose totals
#' differ between tables is an error of class
#' `sdcRisk_error_linked_mismatch`.
#'
#' @param tables A list of `sdc_sensitivity` tables from [cell_sensitivity()]
#'   on the same records and `value` (names, when given, name the results).
#' @param suppressed A list with one pattern per table, each as for
#'   [audit_table()] (the protections of `protect_tables()` among them;
#'   their witness tables, each of one table, are not used for the linked
#'   audit).
#' @param lower,upper `NULL`, or a list with one entry per table, each as
#'   for [audit_table()].
#' @inheritParams protect_table
#' @returns `protect_tables()`: an object of class `sdc_protection_set`, a
#'   list of one `sdc_protection` per table (see [protect_table()]), with
#'   attributes `stats` (of the joint problem) and `cells` (the number of
#'   distinct cells) and `shared` (of cells in more than one table).
#'   `audit_tables()`: an object of class `sdc_audit_set`, a list of one
#'   `sdc_audit` per table (intervals over the union of the relations), with
#'   attribute `passed` (every sensitive cell of every table protected).
#' @references Hundepool, A. et al. (2012). *Statistical Disclosure
#'   Control*, Section 4.4.4 (linked tables). Wiley.
#'
#'   de Wolf, P.-P. and Giessing, S. (2009). Adjusting the tau-ARGUS modular
#'   approach to deal with linked tables. *Data & Knowledge Engineering*
#'   68(11), 1160-1174.
#' @family tabular
#' @export
#' @examples
#' set.seed(5)
#' firms <- data.frame(industry = sample(c("A", "B", "C"), 120, TRUE),
#'                     region = sample(c("north", "south"), 120, TRUE),
#'                     size = sample(c("small", "large"), 120, TRUE, prob = c(0.8, 0.2)),
#'                     turnover = round(rlnorm(120, 5, 1.5)))
#' by_region <- cell_sensitivity(firms, c("industry", "region"), "turnover", rule_p(15))
#' by_size <- cell_sensitivity(firms, c("industry", "size"), "turnover", rule_p(15))
#' prot <- protect_tables(list(region = by_region, size = by_size))
#' prot
#' # each table protected alone can be attacked through the other
#' alone <- list(protect_table(by_region), protect_table(by_size))
#' audit_tables(list(by_region, by_size), lapply(alone, function(p) p$status != "published"))
protect_tables <- function(tables, ..., cost = c("value", "cells"), lower = NULL, upper = NULL,
                           freq_protection = 10, intervals = c("suppressed", "sensitive", "none"),
                           method = c("heuristic", "optimal"), time_limit = 60, cleanup = "auto",
                           improve = "auto", attacker = c("respondents", "outsider"),
                           zero_contributions = c("ignore", "count")) {
  rlang::check_dots_empty()
  cost <- check_choice(cost)
  intervals <- check_choice(intervals)
  method <- check_choice(method)
  attacker <- check_choice(attacker)
  zero_contributions <- check_choice(zero_contributions)
  check_number(time_limit, min = 1)
  lp <- linked_problem(tables, lower, upper, freq_protection, call = rlang::current_env())
  resp <- linked_respondents(lp, attacker, zero_contributions, call = rlang::current_env())
  cleanup <- check_cleanup(cleanup, lp$prep$structure$ncell)
  improve <- check_cleanup(improve, lp$prep$structure$ncell, max_cells = improve_auto_cells)
  if (method == "optimal" && lp$prep$structure$ncell > optimal_max_cells) {
    abort_sdc(c(
      "{.code method = \"optimal\"} is for problems of at most {format(optimal_max_cells, big.mark = ',')} cells.",
      "x" = "These tables have {format(lp$prep$structure$ncell, big.mark = ',')} distinct cells.",
      "i" = "Use the default {.code method = \"heuristic\"}."
    ), "argument", call = rlang::current_env(), arg = "method")
  }
  res <- protection_pattern(lp$prep, cost, lp$labels, lp$reasons, Inf, method, time_limit, cleanup,
                            intervals, improve = improve, call = rlang::current_env(),
                            respondents = resp)
  lower_all <- upper_all <- rep(NA_real_, lp$prep$structure$ncell)
  lower_all[res$targets] <- res$final$lower
  upper_all[res$targets] <- res$final$upper
  out <- lapply(seq_along(lp$tables), function(k) {
    m <- lp$map[[k]]
    prep_k <- lp$preps[[k]]
    prep_k$sensitive <- lp$prep$sensitive[m]
    prep_k$level <- lp$prep$level[m]
    targets <- which(!is.na(match(m, res$targets)))
    final <- list(lower = lower_all[m[targets]], upper = upper_all[m[targets]])
    new_sdc_protection(lp$tables[[k]], prep_k, res$supp[m], res$reason[m], targets, final, cost,
                       res$stats, res$witnesses, map = m)
  })
  names(out) <- names(lp$tables)
  structure(out, class = "sdc_protection_set", stats = res$stats,
            cells = lp$prep$structure$ncell, shared = lp$shared)
}

#' @rdname protect_tables
#' @export
audit_tables <- function(tables, suppressed, ..., lower = NULL, upper = NULL, freq_protection = 10,
                         intervals = c("suppressed", "sensitive", "none"),
                         attacker = c("respondents", "outsider"),
                         zero_contributions = c("ignore", "count")) {
  rlang::check_dots_empty()
  intervals <- check_choice(intervals)
  attacker <- check_choice(attacker)
  zero_contributions <- check_choice(zero_contributions)
  lp <- linked_problem(tables, lower, upper, freq_protection, call = rlang::current_env())
  resp <- linked_respondents(lp, attacker, zero_contributions, call = rlang::current_env())
  if (!is.list(suppressed) || is.data.frame(suppressed) || length(suppressed) != length(lp$tables)) {
    abort_sdc(c(
      "{.arg suppressed} must be a list with one pattern per table.",
      "x" = "It is {.obj_type_friendly {suppressed}} of length {length(suppressed)}; there are {length(lp$tables)} tables."
    ), "pattern", call = rlang::current_env(), arg = "suppressed")
  }
  n <- lp$prep$structure$ncell
  pats <- lapply(seq_along(lp$tables), function(k) {
    suppression_vector(lp$tables[[k]], suppressed[[k]], call = rlang::current_env())
  })
  # a cell published in any table is known
  published <- logical(n)
  for (k in seq_along(pats)) published[lp$map[[k]][!pats[[k]]]] <- TRUE
  supp <- !published
  targets <- which(supp & (lp$prep$sensitive | intervals == "suppressed"))
  au <- audit_attackers(lp$prep, supp, targets, resp, exact = intervals != "none", call = rlang::current_env())
  res <- au$res
  ra <- au$ra
  lo <- hi <- rep(NA_real_, n)
  lo[targets] <- res$lower
  hi[targets] <- res$upper
  out <- lapply(seq_along(lp$tables), function(k) {
    m <- lp$map[[k]]
    prep_k <- lp$preps[[k]]
    prep_k$sensitive <- lp$prep$sensitive[m]
    prep_k$level <- lp$prep$level[m]
    prep_k$lower <- lp$prep$lower[m]
    prep_k$upper <- lp$prep$upper[m]
    tk <- which(supp[m] & !is.na(lo[m]))
    a <- new_sdc_audit(lp$tables[[k]], prep_k, supp[m], tk,
                       list(lower = lo[m][tk], upper = hi[m][tk], n_lp = res$n_lp),
                       show = intervals != "none",
                       respondents = audit_respondents(lp$tables[[k]], lp$prep, resp, ra, attacker, m))
    a
  })
  names(out) <- names(lp$tables)
  passed <- all(vapply(out, function(a) isTRUE(attr(a, "passed")), logical(1)))
  structure(out, class = "sdc_audit_set", passed = passed, n_lp = res$n_lp + (ra$n_lp %||% 0L),
            cells = n, shared = lp$shared)
}

# The linked tables as one problem: prep (as table_problem() makes for one
# table) over the distinct cells, with `map[[k]]` the problem's cell of each
# row of table k, the tables' own preps, cell labels and reasons.
linked_problem <- function(tables, lower, upper, freq_protection, call) {
  tables <- checked_linked_tables(tables, call)
  nt <- length(tables)
  lower <- linked_bounds(lower, nt, "lower", call)
  upper <- linked_bounds(upper, nt, "upper", call)
  preps <- lapply(seq_len(nt), function(k) {
    table_problem(tables[[k]], lower[[k]], upper[[k]], freq_protection, arg = sprintf("tables[[%d]]", k),
                  call = call)
  })
  keys <- lapply(tables, linked_keys)
  all_keys <- unique(unlist(keys))
  map <- lapply(keys, match, table = all_keys)
  idx <- unlist(map)
  check_linked_totals(tables, preps, map, all_keys, call)
  first <- match(seq_along(all_keys), idx)
  prep <- linked_prep(preps, map, first, call)
  labels <- unlist(lapply(seq_len(nt), function(k) paste0(names(tables)[k], ": ", cell_labels(tables[[k]]))))[first]
  reasons <- character(length(all_keys))
  rules <- unlist(lapply(tables, function(x) x$rules))
  for (j in which(prep$sensitive)) reasons[j] <- paste(unique(setdiff(rules[idx == j], "")), collapse = ", ")
  list(prep = prep, preps = preps, map = map, tables = tables, labels = labels, reasons = reasons,
       shared = sum(tabulate(idx, length(all_keys)) > 1))
}

# The list of linked tables, named ("table 1", ... where a name is missing),
# each a valid sdc_sensitivity table, all of the same value over the same
# records.
checked_linked_tables <- function(tables, call) {
  if (!is.list(tables) || is.data.frame(tables) || length(tables) < 1) {
    abort_sdc(c("{.arg tables} must be a list of tables from {.fn cell_sensitivity}.",
                "x" = "It is {.obj_type_friendly {tables}}."), "not_sensitivity", call = call,
              arg = "tables")
  }
  nt <- length(tables)
  if (is.null(names(tables))) names(tables) <- paste("table", seq_len(nt))
  names(tables)[names(tables) == ""] <- paste("table", which(names(tables) == ""))
  for (k in seq_len(nt)) validate_sdc_sensitivity(tables[[k]], arg = sprintf("tables[[%d]]", k), call = call)
  values <- vapply(tables, function(x) attr(x, "value"), character(1))
  records <- vapply(tables, function(x) as.numeric(attr(x, "n_records") %||% NA), numeric(1))
  if (length(unique(values)) > 1 || length(unique(records)) > 1) {
    abort_sdc(c(
      "Linked tables must total the same {.arg value} over the same records.",
      "x" = "They total {.val {values}} over {records} records."
    ), "linked_mismatch", call = call, arg = "tables")
  }
  tables
}

# `lower` or `upper` of linked tables: NULL, or a list with one entry per
# table.
linked_bounds <- function(b, nt, arg, call) {
  if (is.null(b)) return(vector("list", nt))
  if (!is.list(b) || length(b) != nt) {
    abort_sdc(c("{.arg {arg}} must be {.code NULL} or a list with one entry per table.",
                "x" = "It is {.obj_type_friendly {b}} of length {length(b)}."), "bounds", call = call,
              arg = arg)
  }
  b
}

# Every table must give a shared cell the same total (up to rounding).
check_linked_totals <- function(tables, preps, map, all_keys, call) {
  n <- length(all_keys)
  idx <- unlist(map)
  value <- unlist(lapply(preps, `[[`, "value"))
  lo_v <- tabulate_extreme(idx, value, n, min)
  hi_v <- tabulate_extreme(idx, value, n, max)
  bad <- which(hi_v - lo_v > additivity_tolerance * (1 + abs(hi_v)))
  if (length(bad)) {
    which_tables <- names(tables)[vapply(map, function(m) bad[1] %in% m, logical(1))]
    abort_sdc(c(
      "Linked tables must agree on their shared cells.",
      "x" = "{length(bad)} shared cell{?s} differ{?s/}, e.g. {.val {all_keys[bad[1]]}}: totals {format(lo_v[bad[1]], big.mark = ',')} and {format(hi_v[bad[1]], big.mark = ',')} in {.val {which_tables}}.",
      "i" = "Make every table with {.fn cell_sensitivity} from the same records."
    ), "linked_mismatch", call = call, arg = "tables")
  }
  invisible()
}

# The union of the tables' problems over the distinct cells (`first`: the
# first row of each in the tables stacked): the relations of every table,
# the tightest bounds of any, sensitive in any, the largest level.
linked_prep <- function(preps, map, first, call) {
  nt <- length(preps)
  n <- length(first)
  idx <- unlist(map)
  v <- unlist(lapply(preps, `[[`, "value"))[first]
  lower_all <- tabulate_extreme(idx, unlist(lapply(preps, `[[`, "lower")), n, max)
  upper_all <- tabulate_extreme(idx, unlist(lapply(preps, `[[`, "upper")), n, min)
  if (any(lower_all > v | upper_all < v)) {
    abort_sdc(c("The bounds of the linked tables must contain every shared cell's total.",
                "x" = "The tightest bounds of some cell exclude its total."), "bounds", call = call)
  }
  offsets <- cumsum(c(0L, vapply(preps, function(p) p$structure$nrel, integer(1))))
  rel <- unlist(lapply(seq_len(nt), function(k) preps[[k]]$structure$rel + offsets[k]))
  cell <- unlist(lapply(seq_len(nt), function(k) map[[k]][preps[[k]]$structure$cell]))
  coef <- unlist(lapply(preps, function(p) p$structure$coef))
  relations <- list(rel = rel, cell = cell, coef = coef, nrel = offsets[nt + 1], ncell = n,
                    cell_trips = split(seq_along(cell), factor(cell, levels = seq_len(n))))
  sensitive <- tabulate_extreme(idx, as.numeric(unlist(lapply(preps, `[[`, "sensitive"))), n, max) > 0
  level <- tabulate_extreme(idx, unlist(lapply(preps, `[[`, "level")), n, max)
  list(structure = relations, value = v, lower = lower_all, upper = upper_all,
       level = level, sensitive = sensitive, tol = audit_tolerance * (1 + abs(v)), abs_total = sum(abs(v)),
       lp_cache = new.env(parent = emptyenv()), sp_memo = new.env(parent = emptyenv()),
       core_memo = new.env(parent = emptyenv()))
}

# The identity of every cell of a table across tables: the categories of the
# variables it is not totalled in, "variable=category" in the order of the
# variables' names.
linked_keys <- function(x) {
  by <- sort(attr(x, "by"))
  total <- attr(x, "options")$total_label
  parts <- lapply(by, function(b) {
    lab <- as.character(x[[b]])
    ifelse(lab == total & !is.na(lab), "", paste0(b, "=", lab))
  })
  key <- do.call(paste, c(parts, sep = "\r"))
  key <- gsub("\r+", "\r", key)
  key <- gsub("^\r|\r$", "", key)
  ifelse(key == "", "(grand total)", key)
}

# min or max of `v` per group `g` (1..n).
tabulate_extreme <- function(g, v, n, f) {
  out <- rep(if (identical(f, min)) Inf else -Inf, n)
  r <- vapply(split(v, factor(g, levels = seq_len(n))), function(z) if (length(z)) f(z) else NA_real_, 0)
  ifelse(is.na(r), out, r)
}

#' @export
format.sdc_protection_set <- function(x, n = 5, ...) {
  st <- attr(x, "stats")
  lines <- c(
    sprintf("<sdc_protection_set> %s protected together: %s, %s in more than one table",
            plural(length(x), "linked table"), plural(attr(x, "cells"), "distinct cell"),
            format(attr(x, "shared"), big.mark = ",")),
    sprintf("Audit passed over the union of their relations (%s, %.2f s)",
            plural(st$n_lp, "linear program"), st$seconds))
  for (k in seq_along(x)) lines <- c(lines, "", paste0("$", names(x)[k]), format(x[[k]], n = n))
  lines
}

#' @export
print.sdc_protection_set <- function(x, n = 5, ...) {
  cat(format(x, n = n, ...), sep = "\n")
  invisible(x)
}

#' @export
format.sdc_audit_set <- function(x, n = 5, ...) {
  lines <- c(
    sprintf("<sdc_audit_set> %s audited together (%s, %s shared); %s",
            plural(length(x), "linked table"), plural(attr(x, "cells"), "distinct cell"),
            format(attr(x, "shared"), big.mark = ","), plural(attr(x, "n_lp"), "linear program")),
    if (isTRUE(attr(x, "passed"))) "Every sensitive cell of every table is protected." else
      "NOT PROTECTED: some sensitive cells can be narrowed below their protection level (see below).")
  for (k in seq_along(x)) lines <- c(lines, "", paste0("$", names(x)[k]), format(x[[k]], n = n))
  lines
}

#' @export
print.sdc_audit_set <- function(x, n = 5, ...) {
  cat(format(x, n = n, ...), sep = "\n")
  invisible(x)
}
