#' Audit a cell suppression pattern
#'
#' Computes, for every suppressed cell of a table, the exact interval of
#' values an attacker can deduce from everything published, and checks that
#' every sensitive cell is suppressed and meets its protection levels. The
#' attacker knows every published cell, that each cell at every level of
#' every hierarchy is the sum of the cells below it, and a priori bounds on
#' every cell; the interval of a suppressed cell is then the minimum and the
#' maximum of that cell over the polyhedron of consistent tables, two linear
#' programs (Hundepool et al. 2012, Section 4.4.2; de Wolf 2002), solved with
#' HiGHS (Huangfu and Hall 2018) through the \pkg{highs} package. The
#' programs split into independent problems, one per connected set of
#' suppressed cells linked by the table's relations, which keeps each one
#' small; the programs of one set differ only in their objective and are
#' solved by the simplex method from the previous optimal basis (on sets of
#' 5,000 cells and more, HiGHS' interior point method solves the first
#' program and those that take many cells at once). Every optimal table
#' a program returns is a consistent table for all cells at once: an end of
#' an interval that one of them already reaches, when it equals the bound
#' that the relations imply (each relation bounds each of its cells by the
#' bounds of the others, propagated from relation to relation), is exact
#' without a program of its own, which saves most programs on large
#' patterns; programs that maximise (minimise) a weighted sum of cells that
#' share no relation find such tables for many cells at once. With
#' `intervals = "none"` and the outsider alone, on connected sets of 5,000
#' suppressed cells and more, small programs first look for such tables
#' among the suppressed cells near each sensitive cell (a box of cells as
#' in [protect_table()], enlarged on sets of 20,000 cells and more for the
#' cells still undecided; the published cells fixed): any table they find
#' is consistent with the whole table, and only the cells they leave
#' undecided get programs over their whole connected set.
#'
#' Protection levels (the amount by which a sensitive cell's value must stay
#' uncertain upwards and downwards): for a rule of the PTN framework
#' (`rule_p()`, `rule_pq()`, `rule_nk()`, `rule_ptn()`), the cell's PTN
#' sensitivity \eqn{S} of that rule, in the units of the table (Gray 2018,
#' Section 2: \eqn{S} is the extra uncertainty the cell total needs). For the
#' p% rule this is the classic upper protection level
#' \eqn{p/100\,x_1 - (X - x_1 - x_2)}, for the (n, k) rule
#' \eqn{(100/k)(x_1 + \dots + x_n) - X} and for the pq rule
#' \eqn{p/100\,x_1 - q/100\,(X - x_1 - x_2)} (Hundepool et al. 2012, Section
#' 4.3.3; Cox 2001). The same level is required on both sides (the symmetric
#' convention of tau-ARGUS; with asymmetric PTN rules \eqn{S} is the larger
#' side, so the requirement is conservative). A cell flagged by the frequency
#' rule needs `freq_protection` percent of its value on both sides (a
#' documented choice, as tau-ARGUS' frequency rule protection percentage); a
#' cell flagged by the zero rule only needs not to be disclosed exactly. In
#' every case the interval of a sensitive cell must have positive width. A
#' cell flagged by several rules takes the largest level. A cell is never
#' required to be uncertain beyond its a priori bounds (with non-negative
#' values, a level larger than the cell's value asks for a lower end of 0).
#'
#' Cells absent from `x` (no contributor) are published zeros. A priori
#' bounds: `lower` defaults to the `lower_bound` column of `x` (from the
#' `lower` bounds given to [cell_sensitivity()]) or \eqn{-\infty}, raised to 0
#' when every cell total is non-negative and `x` was made with
#' `negative = "error"` (give `lower = -Inf` when contributions may be
#' negative while every total is not); `upper` defaults to the `upper_bound`
#' column or \eqn{+\infty}. Comparisons allow a relative tolerance of
#' \eqn{10^{-7}} for the floating-point solver.
#'
#' @section Respondents as attackers:
#' With `attacker = "respondents"` (the default) the pattern must also
#' withstand every respondent of the table (Hundepool et al. 2012, Section
#' 4.2.2, the "singleton" problem of tau-ARGUS and of GaussSuppression's
#' `singletonMethod`). A respondent (a contributor: a value of the
#' `contributor` column of [cell_sensitivity()], with all its records in all
#' cells; without it, each record) knows its own contribution \eqn{x_a(c)}
#' to every cell \eqn{c} it is in, so it knows that the cell is
#' \eqn{x_a(c)} plus the rest, and that the rest lies within the other
#' contributors' a priori bounds: at least 0 when every contribution of the
#' table is non-negative, within the sums of their records' `lower` and
#' `upper` bounds when [cell_sensitivity()] had them. A respondent alone in
#' a cell knows the cell (in a frequency table, a person alone in a cell
#' knows that it is 1). Its linear programs are the outsider's with these
#' bounds added, and each sensitive cell must keep, within them, the same
#' protection as against the outsider (the interval contract above, its a
#' priori bounds now the respondent's own); a cell that a respondent knows
#' from its own data alone is not checked against it (no pattern can hide
#' it), nor is a cell the outsider already narrows too far (the outsider's
#' audit reports it). Besides each respondent alone, the coalitions the rules name: the
#' \eqn{n - 1} largest contributors after the largest of a cell flagged by
#' `rule_nk(n, k)` (\eqn{n \ge 3}; for \eqn{n = 2} the second largest, a
#' respondent alone), the suspect set of a PTN rule with \eqn{n_s \ge 2}
#' (for the p% and pq rules the suspect is the second largest contributor,
#' a respondent alone). Respondents are assumed to know their weighted
#' contributions.
#'
#' Zero contributions (`zero_contributions`): a contributor all of whose
#' records in a cell are 0 (with negative values, records that cancel are
#' not a zero contribution) is, by default (`"ignore"`), not counted when
#' deciding who is alone in the cell: a contributor whose co-contributors
#' all contribute 0 is taken to know the cell exactly. That is what a
#' statistical office would assume: the zeros are often structural (a firm
#' with no activity in that cell) and known to the other respondents, and
#' assuming less knowledge than the respondent may have would publish a
#' pattern that it can break. `"count"` counts them as contributors like any
#' other, so such a respondent only knows that the cell is its contribution
#' plus a non-negative rest; patterns are then smaller, and safe only if the
#' respondents cannot know that the others contributed nothing.
#'
#' Only a respondent whose knowledge of some suppressed cell falls strictly
#' inside the outsider's exact interval of that cell changes the attacker's
#' problem (knowledge the interval already implies changes nothing), so the
#' respondent audit first computes the outsider's interval of every
#' suppressed cell, then solves programs only for those respondents, only on
#' the connected sets of suppressed cells their knowledge narrows, and once
#' for respondents whose knowledge there is the same. `attacker =
#' "outsider"` restores the outsider's audit alone (the contract of
#' earlier versions, e.g. to compare with tools that do not model
#' respondents). A table with no sensitive cell passes either audit
#' (nothing to protect). The respondent audit needs the contributions that
#' [cell_sensitivity()] keeps with its table: a subset or edited table is
#' an error of class `sdcRisk_error_no_contributions`.
#'
#' @param x An `sdc_sensitivity` table from [cell_sensitivity()], with all
#'   its margins.
#' @param suppressed The pattern: a logical vector with one value per row of
#'   `x`, a data frame whose `by` columns name the suppressed cells (with
#'   the total label for margins), e.g. read in from sdcTable or tau-ARGUS,
#'   the result of [protect_table()] on `x` (its secondary and primary
#'   cells), or an earlier `sdc_audit` (its suppressed cells). A
#'   [protect_table()] result brings its witness tables (attribute
#'   `witnesses`): each is checked against `x` (every relation through the
#'   cells it moves adds up, every bound is kept, only suppressed cells
#'   move) and, when it passes, serves as a table the attacker cannot rule
#'   out. With `intervals = "none"` and `attacker = "outsider"` (the
#'   decision, which these tables settle) the cells they move far enough
#'   need no program, usually none at all; otherwise they are not used (the
#'   respondent audit needs the outsider's exact intervals). A table that
#'   fails the check is not used: the verdict is that of the pattern alone,
#'   only reached with fewer programs.
#' @param ... Must be empty.
#' @param lower,upper A priori bounds on the cell totals: one number, one
#'   number per row of `x`, or `NULL` (the default): the columns
#'   `lower_bound` and `upper_bound` of `x` when it has them, else 0 below
#'   for a table of non-negative values (as [cell_sensitivity()] checks
#'   them by default) and `-Inf` otherwise, and `Inf` above. Every bound
#'   must contain its cell's total.
#' @param freq_protection Protection level, in percent of the cell value, of
#'   cells flagged by the frequency rule.
#' @param intervals Which suppressed cells get their exact interval:
#'   `"suppressed"` (all), `"sensitive"` (sensitive cells only, faster) or
#'   `"none"` (fastest: protection is decided exactly but no interval is
#'   reported; one optimal table of a linear program is a witness for every
#'   sensitive cell it takes far enough, so most cells need no program of
#'   their own).
#' @param attacker `"respondents"` (the default): the outsider and every
#'   respondent and coalition of respondents of the table (see
#'   "Respondents as attackers"); `"outsider"`: the outside attacker alone.
#' @param zero_contributions How zero contributions count when deciding
#'   whether a respondent is alone in a cell: `"ignore"` (the default: a
#'   respondent whose co-contributors all contribute 0 knows the cell) or
#'   `"count"` (they are contributors like any other). See "Respondents as
#'   attackers".
#' @returns An object of class `sdc_audit`: a data frame with one row per
#'   suppressed or sensitive cell, with the `by` columns, `level`, `total`,
#'   `suppressed`, `sensitive`, `protection` (the level required on each
#'   side), `lower` and `upper` (the feasibility interval; `NA` for published
#'   cells, and for non-sensitive cells with `intervals = "sensitive"`) and
#'   `protected` (`NA` for non-sensitive cells). Attribute `passed` is `TRUE`
#'   when every sensitive cell is protected (against every attacker);
#'   `n_lp` counts the linear programs solved; `attacker` is the attacker
#'   argument; `breaches` (with `attacker = "respondents"`) is a data frame
#'   of the breaches by respondent, one row per (respondent, sensitive cell)
#'   pair that breaks the pattern: `respondent` (its id, or the ids of a
#'   coalition joined by `" + "`), the cell's `by` columns, `total`,
#'   `protection`, the respondent's interval `lower`, `upper` and the
#'   interval it must at least be, `required_lower`, `required_upper` (a
#'   cell a respondent breaks has `protected = FALSE`);
#'   `respondents_checked` counts the respondents and coalitions whose
#'   knowledge narrows some suppressed cell; `witnesses` (when `suppressed`
#'   brought witness tables) is `c(given, valid)`, how many were given and
#'   how many passed the check.
#' @references Hundepool, A. et al. (2012). *Statistical Disclosure
#'   Control*, Sections 4.3 and 4.4. Wiley.
#'
#'   de Wolf, P.-P. (2002). HiTaS: a heuristic approach to cell suppression
#'   in hierarchical tables. In *Inference Control in Statistical Databases*,
#'   LNCS 2316, 74-82. Springer.
#'
#'   Gray, D. (2018). Precision threshold and noise: an alternative
#'   framework of sensitivity measures. In *Privacy in Statistical Databases*,
#'   LNCS 11126, 15-27. Springer.
#'
#'   Huangfu, Q. and Hall, J. A. J. (2018). Parallelizing the dual revised
#'   simplex method. *Mathematical Programming Computation* 10(1), 119-142.
#' @family tabular
#' @export
#' @examples
#' set.seed(3)
#' firms <- data.frame(sector = sample(c("a", "b", "c"), 40, TRUE),
#'                     area = sample(c("x", "y", "z"), 40, TRUE),
#'                     sales = round(rlnorm(40, 5, 1.2)))
#' sens <- cell_sensitivity(firms, c("sector", "area"), "sales", rule_p(15))
#' # suppressing only the sensitive cells: recovered by subtraction
#' audit_table(sens, sens$sensitive)
#' # the pattern chosen by protect_table() passes
#' prot <- protect_table(sens)
#' audit_table(sens, prot$status != "published")
#' # given the protection itself, its witness tables are checked and
#' # decide the outsider's audit without a linear program
#' audit_table(sens, prot, intervals = "none", attacker = "outsider")
#'
#' # a respondent alone in a suppressed cell knows it: the outsider's
#' # pattern can fail the respondent audit
#' out <- protect_table(sens, attacker = "outsider")
#' summary(audit_table(sens, out$status != "published"))
audit_table <- function(x, suppressed, ..., lower = NULL, upper = NULL, freq_protection = 10,
                        intervals = c("suppressed", "sensitive", "none"),
                        attacker = c("respondents", "outsider"),
                        zero_contributions = c("ignore", "count")) {
  rlang::check_dots_empty()
  check_sensitivity_table(x)
  intervals <- check_choice(intervals)
  attacker <- check_choice(attacker)
  zero_contributions <- check_choice(zero_contributions)
  supp <- suppression_vector(x, suppressed)
  witnesses <- pattern_witness_frame(x, suppressed)
  prep <- table_problem(x, lower, upper, freq_protection, arg = "x")
  resp <- table_respondents(x, prep, attacker, zero_contributions)
  targets <- which(supp & (prep$sensitive | intervals == "suppressed"))
  au <- audit_attackers(prep, supp, targets, resp, exact = intervals != "none", call = rlang::current_env(),
                        witnesses = witnesses)
  new_sdc_audit(x, prep, supp, targets, au$res, show = intervals != "none",
                respondents = audit_respondents(x, prep, resp, au$ra, attacker))
}

# The outsider's audit of the `targets` of pattern `supp` (audit_cells()),
# and with respondents `resp` their breaches (decided_breaches()), for
# audit_table() and audit_tables(): the respondents' audit needs the
# outsider's exact interval of every suppressed cell, computed once, and the
# outsider's audit reads its own from them. Returns list(res, ra), `ra`
# NULL without respondents; res$n_lp counts the outsider's programs, ra$n_lp
# the respondents'.
audit_attackers <- function(prep, supp, targets, resp, exact, call, witnesses = NULL) {
  if (is.null(resp)) {
    return(list(res = audit_cells(prep, supp, targets, exact = exact, call = call, witnesses = witnesses),
                ra = NULL))
  }
  # (the respondents' audit needs the outsider's exact intervals, which the
  # witness tables do not settle: audit_cells() uses them for the decision)
  sh <- shared_outsider_audit(prep, supp, targets, call = call)
  list(res = sh$res, ra = decided_breaches(prep, supp, resp, sh$outer, exact = exact, call = call))
}

# The outsider's exact intervals of every suppressed cell of `supp` (one
# audit_cells() over them, which the respondents' audit reads as `outer`),
# and those of the `targets` as audit_cells() would return them (with the
# programs solved). Returns list(res, outer).
shared_outsider_audit <- function(prep, supp, targets, call) {
  all_supp <- which(supp)
  o <- audit_cells(prep, supp, all_supp, exact = TRUE, call = call)
  outer <- list(lower = rep(NA_real_, length(supp)), upper = rep(NA_real_, length(supp)))
  outer$lower[all_supp] <- o$lower
  outer$upper[all_supp] <- o$upper
  list(res = list(lower = outer$lower[targets], upper = outer$upper[targets], n_lp = o$n_lp), outer = outer)
}

# The breaches by respondent of pattern `supp` (respondent_breaches()),
# decided first from witness tables (exact = FALSE: a program only where no
# witness moves a sensitive cell as far as its level, the decision exact),
# then, with `exact` and only when some respondent breaks the pattern, again
# with exact intervals on the cells broken: the breaches report exact
# intervals, and a pattern no respondent breaks costs no exact intervals.
decided_breaches <- function(prep, supp, resp, outer, exact, call) {
  ra <- respondent_breaches(prep, supp, resp, outer, exact = FALSE, call = call)
  if (!exact || !nrow(ra$breaches)) return(ra)
  ex <- respondent_breaches(prep, supp, resp, outer, exact = TRUE, call = call,
                            only = unique(ra$breaches$cell))
  ex$n_lp <- ex$n_lp + ra$n_lp
  ex$n_groups <- ra$n_groups
  ex
}

# The respondent side of an audit, as new_sdc_audit() stores it:
# list(attacker, n_groups, breaches) (breaches: breach_table()).
audit_respondents <- function(x, prep, resp, ra, attacker, map = seq_len(nrow(x))) {
  if (is.null(ra)) return(list(attacker = attacker, n_groups = 0L, n_lp = 0L, breaches = NULL))
  list(attacker = attacker, n_groups = ra$n_groups, n_lp = ra$n_lp,
       breaches = breach_table(x, prep, resp, ra$breaches, map))
}

new_sdc_audit <- function(x, prep, supp, targets, res, show = TRUE,
                          respondents = list(attacker = "outsider", n_groups = 0L, n_lp = 0L,
                                             breaches = NULL)) {
  n <- nrow(x)
  lo <- hi <- rep(NA_real_, n)
  lo[targets] <- res$lower
  hi[targets] <- res$upper
  protected <- rep(NA, n)
  sens <- prep$sensitive
  protected[sens] <- supp[sens] & protection_met(prep, which(sens), lo[sens], hi[sens])
  br <- respondents$breaches
  if (!is.null(br) && nrow(br)) {
    key <- function(d) do.call(paste, c(lapply(attr(x, "by"), function(b) as.character(d[[b]])), sep = "\r"))
    protected[which(key(as.data.frame(x)) %in% key(br))] <- FALSE
  }
  if (!show) lo[] <- hi[] <- NA_real_
  keep <- supp | sens
  by <- attr(x, "by")
  out <- as.data.frame(x)[keep, c(by, "level", "total"), drop = FALSE]
  out$suppressed <- supp[keep]
  out$sensitive <- sens[keep]
  out$protection <- ifelse(sens, prep$level, NA_real_)[keep]
  out$lower <- lo[keep]
  out$upper <- hi[keep]
  out$protected <- protected[keep]
  rownames(out) <- NULL
  structure(out, class = c("sdc_audit", "data.frame"), by = by, value = attr(x, "value"),
            passed = all(protected[sens]), n_lp = res$n_lp + respondents$n_lp,
            attacker = respondents$attacker, respondents_checked = respondents$n_groups,
            breaches = br, witnesses = res$witnesses)
}

# The line on the witness tables that came with the pattern, if any.
witness_line <- function(w) {
  if (!is.numeric(w) || !all(c("given", "valid") %in% names(w))) return(character())
  sprintf("Witness tables of the pattern: %s checked, %s valid (each keeps every relation and bound and moves suppressed cells only).",
          format(w[["given"]], big.mark = ","), format(w[["valid"]], big.mark = ","))
}

# What is wrong with the frame of a table result (protection or audit):
# columns of one length, `by` columns factors without missing codes; NULL
# when nothing.
table_frame_problem <- function(x, by) {
  if (!all(lengths(unclass(x)) == nrow(x))) return("its columns and rows differ in length")
  ok <- vapply(by, function(b) is.factor(x[[b]]) && !anyNA(as.integer(x[[b]])), logical(1))
  if (!all(ok)) return(paste0("the ", paste(by[!ok], collapse = ", "), " column must be a factor without missing values"))
  NULL
}

# An sdc_audit object that a user may have edited: the columns its methods
# read, and the verdict `passed` consistent with them.
validate_sdc_audit <- function(x, arg = rlang::caller_arg(x), call = rlang::caller_env()) {
  by <- attr(x, "by")
  need <- c(by, "level", "total", "suppressed", "sensitive", "protection", "lower", "upper",
            "protected")
  lgl <- function(v, na = FALSE) is.logical(v) && (na || !anyNA(v))
  problem <- if (!inherits(x, "sdc_audit") || !is.data.frame(x)) {
    "it is not a data frame of class {.cls sdc_audit}"
  } else if (!is.character(by) || !length(by) || !lgl(attr(x, "passed")) ||
             length(attr(x, "passed")) != 1 || !is.numeric(attr(x, "n_lp"))) {
    "its attributes {.field by}, {.field passed} and {.field n_lp} are missing or wrong"
  } else if (length(miss <- setdiff(need, names(x)))) {
    paste0("column", if (length(miss) > 1) "s", " ", paste(miss, collapse = ", "), " missing")
  } else if (!is.null(bad <- table_frame_problem(x, by))) {
    bad
  } else if (!lgl(x$suppressed) || !lgl(x$sensitive) || !lgl(x$protected, na = TRUE) ||
             !is.numeric(x$total) || !all(is.finite(x$total)) || !is.numeric(x$lower) ||
             !is.numeric(x$upper) || !is.numeric(x$protection)) {
    "{.field suppressed}, {.field sensitive}, {.field protected} or the numeric columns have wrong values"
  } else if (!is.null(attr(x, "breaches")) &&
             (!is.data.frame(attr(x, "breaches")) ||
              !all(c("respondent", by, "lower", "upper") %in% names(attr(x, "breaches"))))) {
    "its attribute {.field breaches} is not a table of breaches by respondent"
  } else if (!identical(x$sensitive, !is.na(x$protected)) ||
             !identical(attr(x, "passed"), all(x$protected[x$sensitive]))) {
    "{.field protected} disagrees with {.field sensitive} or with the verdict {.field passed}"
  }
  if (!is.null(problem)) {
    abort_invalid(arg, problem, "Use the object {.fn audit_table} returned, or call it again.", call)
  }
  invisible(x)
}

#' @export
format.sdc_audit <- function(x, n = 10, ...) {
  validate_sdc_audit(x)
  fail <- which(x$sensitive & !x$protected)
  df <- as.data.frame(unclass(x))
  shown <- if (length(fail)) df[fail, , drop = FALSE] else df
  body <- if (nrow(shown)) protection_table_lines(utils::head(shown, n))
  c(wrap_lines(c(
      sprintf("<sdc_audit> %s of %s, %s; %s",
              plural(sum(x$suppressed), "suppressed cell"), attr(x, "value"),
              paste(format(sum(x$sensitive), big.mark = ","), "sensitive"),
              plural(attr(x, "n_lp"), "linear program")),
      if (!nrow(x)) "No cell is sensitive or suppressed: nothing to audit." else
        if (attr(x, "passed")) "Every sensitive cell is protected." else
        sprintf("NOT PROTECTED: %s (shown below).", plural(length(fail), "sensitive cell")),
      attacker_line(x), witness_line(attr(x, "witnesses")))),
    body$lines,
    wrap_lines(c(
      if (nrow(shown) > n) sprintf("# ... %d more rows", nrow(shown) - n),
      if (length(body$dropped)) sprintf("# %s not shown; as.data.frame() gives all columns",
                                        paste(body$dropped, collapse = ", ")))),
    breach_lines(attr(x, "breaches"), n))
}

# Who the audit took as attacker, in one line.
attacker_line <- function(x) {
  if (!identical(attr(x, "attacker"), "respondents")) return("Attacker: an outsider.")
  br <- attr(x, "breaches")
  nb <- if (is.null(br)) 0L else nrow(br)
  nk <- attr(x, "respondents_checked") %||% 0L
  sprintf("Attackers: an outsider and every respondent (%s know%s more than the outsider about a suppressed cell)%s",
          format(nk, big.mark = ","), if (nk == 1) "s" else "",
          if (nb) sprintf("; %s break the pattern.", plural(nb, "(respondent, cell) pair")) else ".")
}

# The breaches by respondent, at most n, as lines.
breach_lines <- function(br, n) {
  if (is.null(br) || !nrow(br)) return(character())
  c("Breaches by respondent (the respondent's interval against the interval required):",
    protection_table_lines(utils::head(br, n))$lines,
    if (nrow(br) > n) sprintf("# ... %d more breaches; attr(x, \"breaches\") gives all", nrow(br) - n))
}

#' @export
summary.sdc_audit <- function(object, ...) {
  validate_sdc_audit(object)
  sens <- object$sensitive
  fail <- object[sens & !object$protected, c(attr(object, "by"), "total", "protection", "lower", "upper"),
                 drop = FALSE]
  structure(list(
    value = attr(object, "value"), by = attr(object, "by"), passed = attr(object, "passed"),
    n_suppressed = sum(object$suppressed), n_sensitive = sum(sens),
    n_protected = sum(object$protected[sens]), n_lp = attr(object, "n_lp"),
    exact = any(!is.na(object$lower)),
    failing = as.data.frame(unclass(fail)),
    attacker = attr(object, "attacker") %||% "outsider",
    breaches = attr(object, "breaches"), witnesses = attr(object, "witnesses")
  ), class = "summary.sdc_audit")
}

#' @export
format.summary.sdc_audit <- function(x, ...) {
  c(
    sprintf("Audit of a suppression pattern of %s by %s", x$value, paste(x$by, collapse = " x ")),
    sprintf("%s, %s sensitive; %s protected", plural(x$n_suppressed, "suppressed cell"),
            format(x$n_sensitive, big.mark = ","), format(x$n_protected, big.mark = ",")),
    if (x$n_sensitive == 0) "Verdict: no sensitive cell, nothing to protect." else
      if (x$passed) "Verdict: PASSED, every sensitive cell is protected." else
      sprintf("Verdict: FAILED, %s narrower than required.", plural(nrow(x$failing), "sensitive cell")),
    sprintf("%s (%s)", plural(x$n_lp, "linear program"),
            if (x$exact) "exact intervals" else "protection decided, intervals not reported"),
    if (identical(x$attacker, "respondents")) {
      nb <- if (is.null(x$breaches)) 0L else nrow(x$breaches)
      sprintf("Respondent audit: %s", if (nb) sprintf("%s break%s the pattern", plural(nb, "(respondent, cell) pair"), if (nb == 1) "s" else "") else
        "no respondent narrows a sensitive cell below its protection")
    } else "Outsider audit only (attacker = \"outsider\")",
    witness_line(x$witnesses),
    if (nrow(x$failing)) c("Cells not protected:", protection_table_lines(utils::head(x$failing, 10))$lines),
    breach_lines(x$breaches, 10)
  )
}

#' @export
print.summary.sdc_audit <- function(x, ...) {
  cat(format(x, ...), sep = "\n")
  invisible(x)
}

#' @export
print.sdc_audit <- function(x, n = 10, ...) {
  cat(format(x, n = n, ...), sep = "\n")
  invisible(x)
}

check_sensitivity_table <- function(x, arg = rlang::caller_arg(x), call = rlang::caller_env()) {
  validate_sdc_sensitivity(x, arg = arg, call = call)
}

# A suppression pattern as a logical vector over the rows of `x`.
suppression_vector <- function(x, suppressed, call = rlang::caller_env()) {
  by <- attr(x, "by")
  # a protect_table() result (status) or an audit (suppressed): their rows
  # are cells, not all of them suppressed
  if (inherits(suppressed, "sdc_protection")) {
    validate_sdc_protection(suppressed, arg = "suppressed", call = call)
    if (nrow(suppressed) != nrow(x) || !identical(attr(suppressed, "by"), by) ||
        !all(vapply(by, function(b) identical(as.character(suppressed[[b]]), as.character(x[[b]])), logical(1)))) {
      abort_sdc(c(
        "{.arg suppressed} must be the protection of {.arg x} itself.",
        "x" = "Its cells are not the rows of {.arg x}, in order.",
        "i" = "Pass the pattern of {.fn protect_table} on this table, or a logical vector or data frame of cells."
      ), "pattern", call = call, arg = "suppressed")
    }
    return(suppressed$status != "published")
  }
  if (inherits(suppressed, "sdc_audit") && is.logical(suppressed$suppressed) && !anyNA(suppressed$suppressed)) {
    suppressed <- as.data.frame(unclass(suppressed))[suppressed$suppressed, by, drop = FALSE]
  }
  if (is.data.frame(suppressed)) {
    if (!all(by %in% names(suppressed))) {
      abort_sdc(c(
        "{.arg suppressed} must have a column for every {.arg by} variable.",
        "x" = "Missing: {.val {setdiff(by, names(suppressed))}}."
      ), "pattern", call = call, arg = "suppressed")
    }
    key <- function(d) do.call(paste, c(lapply(by, function(b) as.character(d[[b]])), sep = "\r"))
    pos <- match(key(suppressed), key(x))
    if (anyNA(pos)) {
      bad <- suppressed[is.na(pos), by, drop = FALSE][1, ]
      abort_sdc(c(
        "Every row of {.arg suppressed} must be a cell of the table.",
        "x" = "{sum(is.na(pos))} row{?s} match{?es/} no cell, e.g. {.val {paste(unlist(lapply(bad, as.character)), collapse = ' x ')}}.",
        "i" = "Margins are labelled {.val {attr(x, 'options')$total_label}}."
      ), "pattern", call = call, arg = "suppressed")
    }
    out <- logical(nrow(x))
    out[pos] <- TRUE
    return(out)
  }
  if (!is.logical(suppressed) || length(suppressed) != nrow(x) || anyNA(suppressed)) {
    abort_sdc(c(
      "{.arg suppressed} must be a logical vector with one value per cell, or a data frame of cells.",
      "x" = "It is {.obj_type_friendly {suppressed}} of length {length(suppressed)}; the table has {nrow(x)} cells."
    ), "pattern", call = call, arg = "suppressed")
  }
  suppressed
}

# Everything the audit needs: relations, values, bounds, protection levels.
table_problem <- function(x, lower, upper, freq_protection, arg = "x", call = rlang::caller_env()) {
  if (!is.numeric(freq_protection) || length(freq_protection) != 1 || is.na(freq_protection) ||
      freq_protection < 0) {
    abort_sdc(c("{.arg freq_protection} must be a single non-negative percentage.",
                "x" = "It is {show_value(freq_protection)}."), "argument", call = call,
              arg = "freq_protection", value = freq_protection)
  }
  value <- as.numeric(x$total)
  bounds <- cell_bounds(x, lower, upper, call)
  list(structure = table_structure(x, arg, call), value = value, lower = bounds$lower,
       upper = bounds$upper, level = protection_levels(x, freq_protection),
       sensitive = x$sensitive, tol = audit_tolerance * (1 + abs(value)), abs_total = sum(abs(value)),
       lp_cache = new.env(parent = emptyenv()), sp_memo = new.env(parent = emptyenv()),
       core_memo = new.env(parent = emptyenv()))
}

protection_levels <- function(x, freq_protection) {
  lev <- numeric(nrow(x))
  for (r in attr(x, "rules")) {
    flag <- x[[paste0("sensitive_", r$name)]]
    add <- switch(r$type,
      frequency = freq_protection / 100 * abs(x$total),
      zero = numeric(nrow(x)),
      x[[paste0("S_", r$name)]]
    )
    lev[flag] <- pmax(lev[flag], add[flag])
  }
  lev
}

cell_bounds <- function(x, lower, upper, call) {
  n <- nrow(x)
  one <- function(b, arg) {
    if (!is.numeric(b) || !(length(b) %in% c(1, n)) || anyNA(b)) {
      abort_sdc(c(
        "{.arg {arg}} must be one number or one number per cell.",
        "x" = "It is {.obj_type_friendly {b}} of length {length(b)}; the table has {n} cells."
      ), "bounds", call = call, arg = arg)
    }
    rep_len(as.numeric(b), n)
  }
  nonneg <- all(x$total >= 0) && identical(attr(x, "options")$negative, "error")
  lo <- if (!is.null(lower)) one(lower, "lower") else {
    b <- if (!is.null(x$lower_bound)) x$lower_bound else rep(-Inf, n)
    if (nonneg) pmax(b, 0) else b
  }
  hi <- if (!is.null(upper)) one(upper, "upper") else
    if (!is.null(x$upper_bound)) x$upper_bound else rep(Inf, n)
  bad <- which(lo > x$total | hi < x$total)
  if (length(bad)) {
    abort_sdc(c(
      "The bounds must contain every cell total.",
      "x" = "{length(bad)} cell{?s} lie{?s/} outside {.arg lower}/{.arg upper}, e.g. row{?s} {utils::head(bad, 5)}."
    ), "bounds", call = call, arg = if (!is.null(lower)) "lower" else if (!is.null(upper)) "upper" else "x")
  }
  list(lower = lo, upper = hi)
}

# The parent of every category of every `by` variable, as a code (level
# number; NA for the total, the top of every hierarchy). An edited hierarchy
# whose parents are not categories, or do not lead up to the total, is an
# error: its relations would be missing.
category_parents <- function(x, arg = "x", call = rlang::caller_env()) {
  opts <- attr(x, "options")
  total <- opts$total_label
  lapply(attr(x, "by"), function(b) {
    labs <- levels(x[[b]])
    h <- opts$hierarchy[[b]]
    top <- labs %in% total
    par <- if (is.null(h)) ifelse(top, NA, total) else
      if (is.character(h) && !is.null(names(h))) unname(h[labs]) else rep(NA_character_, length(labs))
    code <- match(par, labs)
    # every category but the total reaches the total within length(labs) steps
    u <- seq_along(labs)
    for (k in seq_along(labs)) u <- ifelse(is.na(u) | top[pmax(u, 1L)], u, code[u])
    if (any(is.na(code) & !top) || any(!is.na(code[top])) || any(is.na(u) | !top[pmax(u, 1L)])) {
      bad <- labs[(is.na(code) & !top) | is.na(u) | !top[pmax(u, 1L)]][1]
      abort_sdc(c(
        "{.arg {arg}} has been modified: the hierarchy of {.var {b}} is broken.",
        "x" = "Category {.val {bad}} has no chain of parents up to {.val {total}}.",
        "i" = "Use the table {.fn cell_sensitivity} returned, or call it again."
      ), c("hierarchy", "invalid_object"), call = call, arg = arg)
    }
    code
  })
}

# The additive relations of the table as incidences (relation, cell, coef):
# for every variable and every cell at a level with a parent, parent cell
# = sum of its children (coef -1 for the parent, +1 for the children).
# Every margin must be there, and the cells must add up (cells absent from
# the table are zeros).
table_structure <- function(x, arg = "x", call = rlang::caller_env()) {
  by <- attr(x, "by")
  n <- nrow(x)
  codes <- matrix(vapply(by, function(b) as.integer(x[[b]]), integer(n)), nrow = n)
  key <- function(m) do.call(paste, c(lapply(seq_len(ncol(m)), function(j) m[, j]), sep = "."))
  keys <- key(codes)
  rel <- cell <- coef <- vector("list", length(by))
  offset <- 0L
  pcodes <- category_parents(x, arg, call)
  for (j in seq_along(by)) {
    pcode <- pcodes[[j]]
    child <- which(!is.na(pcode[codes[, j]]))
    up <- codes[child, , drop = FALSE]
    up[, j] <- pcode[codes[child, j]]
    p <- match(key(up), keys)
    if (anyNA(p)) {
      abort_sdc(c(
        "{.arg {arg}} must hold the whole table with all its margins.",
        "x" = "{sum(is.na(p))} cell{?s} {?has/have} no margin cell in the table, e.g. row {child[is.na(p)][1]}.",
        "i" = "Audit the unsubsetted result of {.fn cell_sensitivity}."
      ), "incomplete_table", call = call, arg = arg)
    }
    parents <- unique(p)
    r <- match(p, parents)
    rel[[j]] <- offset + c(r, seq_along(parents))
    cell[[j]] <- c(child, parents)
    coef[[j]] <- c(rep(1, length(child)), rep(-1, length(parents)))
    offset <- offset + length(parents)
  }
  rel <- unlist(rel)
  cell <- unlist(cell)
  coef <- unlist(coef)
  check_additive(x, rel, cell, coef, offset, arg, call)
  list(rel = rel, cell = cell, coef = coef, nrel = offset, ncell = n,
       codes = codes, parents = pcodes,
       cell_trips = split(seq_along(cell), factor(cell, levels = seq_len(n))))
}

# Does every margin equal the sum of the cells below it (to rounding)?
check_additive <- function(x, rel, cell, coef, nrel, arg, call) {
  v <- as.numeric(x$total)
  resid <- tabulate_sum(rel, coef * v[cell], nrel)
  scale <- tabulate_sum(rel, abs(v[cell]), nrel)
  bad <- which(abs(resid) > additivity_tolerance * (1 + scale))
  if (length(bad)) {
    margin <- cell[rel == bad[1] & coef < 0][1]
    abort_sdc(c(
      "{.arg {arg}} is not additive: {length(bad)} margin{?s} differ{?s/} from the sum of {?its/their} cells.",
      "x" = "Row {margin} ({cell_labels(x)[margin]}) totals {format(v[margin], big.mark = ',')}; its cells add up to {format(v[margin] + resid[bad[1]], big.mark = ',')}.",
      "i" = "A row was dropped or a total edited: use the table {.fn cell_sensitivity} returned."
    ), c("not_additive", "invalid_object"), call = call, arg = arg)
  }
}

# Does each cell in `cells` (with intervals lo, hi) meet its protection?
# `lower`, `upper`: the cells' a priori bounds (prep's unless given: a
# respondent's knowledge narrows them).
protection_met <- function(prep, cells, lo, hi, lower = prep$lower[cells], upper = prep$upper[cells]) {
  req <- protection_required(prep, cells, lower, upper)
  tol <- prep$tol[cells]
  !is.na(lo) & !is.na(hi) & hi >= req$hi - tol & lo <= req$lo + tol & hi - lo > tol
}

# The ends each cell's interval must reach, list(lo, hi): its protection
# level on each side, but no further than its a priori bounds `lower`,
# `upper` (a cell need not be uncertain beyond them).
protection_required <- function(prep, cells, lower = prep$lower[cells], upper = prep$upper[cells]) {
  v <- prep$value[cells]
  lev <- prep$level[cells]
  list(lo = pmax(v - lev, lower), hi = pmin(v + lev, upper))
}

# Intervals of the suppressed cells `targets` under pattern `supp`, each over
# its connected set of suppressed cells only (see component_intervals():
# `exact = TRUE` gives exact intervals, `exact = FALSE` decides protection
# only, with inner bounds where a witness table suffices; with
# `first_breach` as well, it stops at the first target it finds
# unprotected, whose interval is then an outer bound that proves it, the
# targets not reached NA: whether the pattern protects them all, no more).
# `same_pattern`: the last audit through `prep` was of the same `supp`.
# `seeds` (with `exact = FALSE`): witness tables' extremes of the targets
# (respondent_seeds(), outsider_seeds()) in place of those of `witnesses`.
# The suppressed cells of pattern `supp` split into the components of the
# attacker's problem (relations linking suppressed cells): the published
# part of every relation (`pubsum`), the suppressed triplets (`sr`, `sc`,
# `sv`), the component of every cell and the
# triplets and cells of each component. Shared by the outsider's audit and
# the respondents'. The last pattern's is kept (`prep$sp_memo`, keyed by the
# pattern and the values): a trial of the respondents' clean-up asks for it
# twice (the respondents' relation tests and the outsider's programs).
suppressed_components <- function(prep, supp, call) {
  memo <- prep$sp_memo
  if (!is.null(memo) && identical(memo$supp, supp) && identical(memo$value, prep$value)) return(memo$sp)
  sp <- split_components(prep, supp, call)
  if (!is.null(memo)) {
    memo$supp <- supp
    memo$value <- prep$value
    memo$sp <- sp
  }
  sp
}

# suppressed_components() without the memo.
split_components <- function(prep, supp, call) {
  st <- prep$structure
  is_s <- supp[st$cell]
  pubsum <- tabulate_sum(st$rel[!is_s], st$coef[!is_s] * prep$value[st$cell[!is_s]], st$nrel)
  sr <- st$rel[is_s]
  sc <- st$cell[is_s]
  comp <- core_call(cpp_relation_components, sr, sc, st$nrel, st$ncell, call = call)
  list(pubsum = pubsum, sr = sr, sc = sc, sv = st$coef[is_s], comp = comp,
       trip_by_comp = split(seq_along(sc), comp[sc]), supp_by_comp = split(which(supp), comp[supp]))
}

# The attacker's program over the suppressed cells `vars` (a component, or
# any set closed under the relations of the triplets `trip`) of the split
# `sp` (suppressed_components()): the relations of those triplets with the
# published part on the right-hand side, and the a priori bounds of `prep`.
suppressed_lp <- function(sp, prep, vars, trip) {
  rels <- unique(sp$sr[trip])
  list(vars = vars,
       mat = triplet_matrix(i = match(sp$sr[trip], rels), j = match(sp$sc[trip], vars), v = sp$sv[trip],
                            nrow = length(rels), ncol = length(vars)),
       rhs = -sp$pubsum[rels], lower = prep$lower[vars], upper = prep$upper[vars])
}

# The outsider's intervals of the cells `targets` of pattern `supp`, by
# component (component_intervals()): exact, or with `exact = FALSE` the
# protection decided. `outer_upper` (with `exact`, flags over `targets`):
# upper ends that need only an outer bound, their relation bounds.
audit_cells <- function(prep, supp, targets, exact = TRUE, call = rlang::caller_env(), witnesses = NULL,
                        first_breach = FALSE, same_pattern = FALSE, seeds = NULL, outer_upper = NULL) {
  st <- prep$structure
  lo <- hi <- rep(NA_real_, length(targets))
  # witness tables given with the pattern, each checked before it counts,
  # for the decision (exact intervals reach them only where they reach a
  # relation bound: as many programs, measured, and other orders of them)
  seeds <- if (!exact) seeds %||% witness_seeds(prep, supp, witnesses)
  if (!length(targets)) return(list(lower = lo, upper = hi, n_lp = 0L, witnesses = seeds$count))
  # one step per end of each target's interval
  tick <- table_progress("Auditing the suppressed cells", 2 * length(targets))
  # the solvers of a pattern that publishes a cell `supp` suppresses are
  # of no more use (`same_pattern`: the last audit's pattern was `supp`,
  # whose solvers and their tables serve again; a pattern within the
  # cached one has its components' programs solved as the cached solvers'
  # programs, cached_program())
  if (!is.null(prep$lp_cache) && !same_pattern && !sub_pattern(prep$lp_cache, supp)) reset_lp_cache(prep, supp)
  sp <- suppressed_components(prep, supp, call)
  comp <- sp$comp
  trip_by_comp <- sp$trip_by_comp
  supp_by_comp <- sp$supp_by_comp
  n_lp <- 0L
  # protection decided (not measured): on large components, witness tables
  # of small programs around each target first (local_witnesses(); the
  # option sdcRisk.audit_local, undocumented, lets the tests compare the
  # path without them)
  local <- if (!exact && !is.null(st$codes) && getOption("sdcRisk.audit_local", TRUE)) {
    local_witness_search(prep, supp)
  }
  for (cc in unique(comp[targets])) {
    vars <- supp_by_comp[[as.character(cc)]]
    trip <- trip_by_comp[[as.character(cc)]]
    mine <- which(comp[targets] == cc)
    if (is.null(trip)) {
      lo[mine] <- prep$lower[targets[mine]]
      hi[mine] <- prep$upper[targets[mine]]
      tick(2 * length(mine))
      next
    }
    lp <- cached_program(suppressed_lp(sp, prep, vars, trip), prep)
    pos <- match(targets[mine], lp$vars)
    res <- component_intervals(lp, pos, targets[mine], prep, exact, call, tick, local = local,
                               seeds = seeds, first_breach = first_breach,
                               outer_upper = if (!is.null(outer_upper)) outer_upper[mine])
    lo[mine] <- res$lower
    hi[mine] <- res$upper
    n_lp <- n_lp + res$n_lp
    if (isTRUE(res$breached)) break
  }
  tick(done = TRUE)
  list(lower = lo, upper = hi, n_lp = n_lp, witnesses = seeds$count)
}

# The witness tables given with a pattern (`witnesses`: the attribute
# "witnesses" of a protection, see witness_frame()) that prove something:
# those that move suppressed cells only, each cell once, and keep every
# relation and bound of the audited table (witness_ok(), the check of the
# heuristic's own tables; their mirror images too when they do). A table
# that fails is not used, so that a witness can only save programs, never
# decide a cell. Returns list(hi, lo, count): per cell of the table the
# largest and smallest value of the accepted tables (-Inf and Inf where
# none moves it), and c(given, valid) (NULL when none was given).
witness_seeds <- function(prep, supp, witnesses) {
  if (is.null(witnesses) || !nrow(witnesses)) return(NULL)
  n <- prep$structure$ncell
  probe <- list(prep = prep)
  by_wit <- split(seq_len(nrow(witnesses)), witnesses$witness)
  cells <- list()
  vals <- list()
  valid <- 0L
  for (idx in by_wit) {
    k <- witnesses$row[idx]
    y <- witnesses$change[idx]
    if (anyDuplicated(k) || !all(supp[k])) next
    used <- FALSE
    for (y_s in list(y, -y)) {
      if (!witness_ok(probe, k, y_s)) next
      cells[[length(cells) + 1L]] <- k
      vals[[length(vals) + 1L]] <- prep$value[k] + y_s
      used <- TRUE
    }
    valid <- valid + used
  }
  cells <- unlist(cells)
  vals <- unlist(vals)
  hi <- rep(-Inf, n)
  lo <- rep(Inf, n)
  if (length(cells)) {
    top <- group_extreme(vals, cells, largest = TRUE)
    hi[top$group] <- top$value
    bottom <- group_extreme(vals, cells)
    lo[bottom$group] <- bottom$value
  }
  list(hi = hi, lo = lo, count = c(given = length(by_wit), valid = valid))
}

# The witness tables that come with `suppressed` (audit_table()): the
# attribute "witnesses" of a protect_table() result, checked for shape (a
# damaged one is an error; its tables are checked one by one when used);
# NULL for any other pattern.
pattern_witness_frame <- function(x, suppressed, call = rlang::caller_env()) {
  if (!inherits(suppressed, "sdc_protection")) return(NULL)
  w <- attr(suppressed, "witnesses")
  if (is.null(w)) return(NULL)
  ok <- is.data.frame(w) && all(c("witness", "row", "change") %in% names(w)) &&
    is.numeric(w$witness) && is.numeric(w$row) && is.numeric(w$change) &&
    !anyNA(w$witness) && !anyNA(w$row) && all(w$row == round(w$row)) &&
    all(w$row >= 1 & w$row <= nrow(x)) && all(is.finite(w$change))
  if (!ok) {
    abort_sdc(c(
      "The witness tables of {.arg suppressed} are damaged.",
      "x" = "Its attribute {.field witnesses} must be a data frame of {.field witness}, {.field row} (a row of {.arg x}) and {.field change} (finite), as {.fn protect_table} makes it.",
      "i" = "Pass the pattern alone, {.code suppressed$status != \"published\"}, to audit it without them."
    ), "pattern", call = call, arg = "suppressed")
  }
  w$row <- as.integer(w$row)
  w
}

# Bounds on every variable of a component implied by the relations and the
# a priori bounds, by propagation: each relation bounds each of its cells
# given the others' current bounds, and the tightened bounds are used again
# (a suppressed margin bounded by its own margin bounds its cells in the
# next pass), for at most `passes` passes or until nothing moves. Every
# bound is valid after any pass (outer bounds of the cell's interval). Most
# cells reach one of them, so a table that attains it proves the bound
# exact without a program of its own. In the core (relation_bounds() of
# table_components.hpp): one pass sums, for each relation, the extremes of
# its cells at their current bounds (infinities counted apart) and bounds
# each cell by the relation's right-hand side less the others' sum.
relation_bounds <- function(lp, passes = audit_relation_passes) {
  m <- lp$mat
  core_call(cpp_relation_bounds, m$i, m$j, m$v, m$nrow, m$ncol, as.double(lp$rhs),
            as.double(lp$lower), as.double(lp$upper), as.integer(passes), relation_bound_moved)
}

# Does pattern `supp` leave a sensitive cell whose relation bounds
# (relation_bounds(), outer bounds of its interval) fall short of its
# protection? Only the components of the suppressed cells in the relations
# of the cells `near` are read (those a change at `near` can touch). No
# program: TRUE proves the pattern unprotected, FALSE proves nothing. In the
# core (relation_breach_near() of table_components.hpp: the components
# found from `near` alone, their programs and bounds as the audit builds
# them, bit for bit; the split of the whole pattern in R for each trial of
# the clean-ups took a twentieth of the default's time on R4 of the
# bench). The option sdcRisk.relation_breach_core (undocumented) lets the
# tests compare it with relation_breach_in_r().
relation_breach <- function(prep, supp, near, call) {
  if (!getOption("sdcRisk.relation_breach_core", TRUE)) return(relation_breach_in_r(prep, supp, near, call))
  core_call(cpp_relation_breach_near, relation_index_of(prep),
            as.double(prep$value), supp, prep$sensitive, as.double(prep$lower), as.double(prep$upper),
            as.double(prep$tol), as.double(prep$level), as.integer(near), as.integer(audit_relation_passes),
            relation_bound_moved, call = call)
}

# relation_breach() in R: the components' programs as the audit builds them
# (suppressed_components(), suppressed_lp()), for the tests to compare.
relation_breach_in_r <- function(prep, supp, near, call) {
  st <- prep$structure
  rels <- unique(st$rel[unlist(st$cell_trips[near], use.names = FALSE)])
  touched <- unique(st$cell[st$rel %in% rels])
  touched <- touched[supp[touched]]
  if (!length(touched)) return(FALSE)
  sp <- suppressed_components(prep, supp, call)
  for (cc in unique(sp$comp[touched])) {
    vars <- sp$supp_by_comp[[as.character(cc)]]
    sens <- prep$sensitive[vars]
    if (!any(sens)) next
    trip <- sp$trip_by_comp[[as.character(cc)]]
    if (is.null(trip)) next
    rb <- relation_bounds(suppressed_lp(sp, prep, vars, trip))
    if (!all(protection_met(prep, vars[sens], rb$lower[sens], rb$upper[sens]))) return(TRUE)
  }
  FALSE
}

# Intervals of the targets at positions `pos` of one component. Every table
# a program returns is a witness for all targets at once: a target whose
# value in some witness reaches its bound from relation_bounds() has that
# bound as its exact end; `exact = FALSE` (protection decided, not
# measured) also accepts a witness beyond the required level, as an inner
# bound. Only the remaining ends get programs of their own. For each
# direction, batch programs first (batch_witnesses()), then every end
# (settle_ends()). The solver is chosen once, by the component's size:
# HiGHS' simplex from the previous basis (simplex_component_solver()) or,
# from `ipm_cols` cells, its interior point method
# (ipm_component_solver(); the option `sdcRisk.audit_ipm_cols`,
# undocumented, lets the tests take that path on small tables).
# `outer_upper` (flags over the targets, with `exact` and without `seeds`,
# `local` or `first_breach`): upper ends returned as their relation
# bounds, outer bounds of the exact ones, without a program.
component_intervals <- function(lp, pos, cells, prep, exact, call, tick = function(n = 1, done = FALSE) NULL,
                                ipm_cols = getOption("sdcRisk.audit_ipm_cols", audit_ipm_cols),
                                local = NULL, seeds = NULL, first_breach = FALSE, outer_upper = NULL) {
  # (on the 11,724-cell bench table, whose components the simplex solves,
  # the small programs took 4.5 s where the component's took 2.3; on the
  # 9,670-cell component of the 10^4-cell large table, 23 s against 43 by
  # the interior point method)
  local <- if (lp$mat$ncol >= ipm_cols) local
  seeded <- NULL
  if (!is.null(local) || !is.null(seeds)) {
    # every end the given witness tables or the small programs settle needs
    # nothing of the component's, not even its solver (the interior point
    # solver starts from no earlier bounds, so the ends are those it would
    # start from)
    ends <- new_interval_ends(lp, pos, cells, prep, exact)
    if (first_breach) {
      bad <- !protection_met(prep, cells, ends$lb, ends$ub)
      if (any(bad)) return(breach_intervals(ends, bad))
    }
    seed_ends(ends, seeds)
    if (!is.null(local)) {
      local_witnesses(ends, local, if (lp$mat$ncol >= audit_local_grow_cols) audit_local_box_max else local$box)
    }
    done <- witnessed_intervals(ends, tick)
    if (!is.null(done)) return(done)
    seeded <- ends
  }
  if (!is.null(local)) {
    solver <- ipm_component_solver(lp, prep, call)
  } else {
    # (first_breach: relation bounds already short of a protection end the
    # audit before a solver is built; on R4 of the bench 55 of the 82
    # trials of the respondents' clean-up end there)
    pre <- NULL
    if (first_breach && is.null(seeds)) {
      pre <- new_interval_ends(lp, pos, cells, prep, exact)
      bad <- !protection_met(prep, cells, pre$lb, pre$ub)
      if (any(bad)) return(breach_intervals(pre, bad))
    }
    solver <- if (lp$mat$ncol >= ipm_cols) ipm_component_solver(lp, prep, call) else
      shared_simplex_solver(lp, prep, call)
    ends <- new_interval_ends(lp, pos, cells, prep, exact, solver, rb = (pre %||% seeded)$rb)
    if (first_breach) {
      bad <- !protection_met(prep, cells, ends$lb, ends$ub)
      if (any(bad)) return(breach_intervals(ends, bad))
    }
    seed_ends(ends, seeds)
  }
  ends$first_breach <- first_breach
  if (any(outer_upper)) {
    # (upper ends that only need an outer bound: their relation bounds,
    # no program)
    ends$need_hi[outer_upper] <- -Inf
  }
  # the optimal tables of earlier programs of the same component (another
  # attacker's, sharing the solver) that keep this one's bounds are witnesses
  # here too
  if (!is.null(solver$tables)) {
    shared_witnesses(ends, solver, lp, prep, call)
    combined_witnesses(ends, solver, lp, prep, call)
  }
  for (upward in c(TRUE, FALSE)) {
    batch_witnesses(ends, solver, lp, upward)
    settle_ends(ends, solver, lp, upward, tick)
    if (isTRUE(ends$breached)) return(list(lower = ends$lo, upper = ends$hi, n_lp = ends$n_lp, breached = TRUE))
  }
  if (!exact) widen_flat_intervals(ends, solver, lp)
  if (any(outer_upper)) ends$hi[outer_upper] <- ends$ub[outer_upper]
  list(lower = ends$lo, upper = ends$hi, n_lp = ends$n_lp)
}

# With `first_breach`, when the relation bounds of some targets (outer
# bounds of their intervals) already fall short of their protection (`bad`),
# no program can protect them: component_intervals() returns those bounds
# for them, NA for the others.
breach_intervals <- function(ends, bad) {
  list(lower = ifelse(bad, ends$lb, NA_real_), upper = ifelse(bad, ends$ub, NA_real_), n_lp = ends$n_lp,
       breached = TRUE)
}

# The given witness tables' extremes and the published table as witnesses
# for the targets in `ends`. `seeds`: list(hi, lo) over every cell of the
# table (witness_seeds()), or list(cells, hi, lo) over some cells
# (respondent_seeds()).
seed_ends <- function(ends, seeds) {
  if (is.null(seeds)) return(invisible(ends))
  at <- if (is.null(seeds$cells)) ends$cells else match(ends$cells, seeds$cells)
  ends$seen_hi <- pmax(ends$seen_hi, ends$v, seeds$hi[at], na.rm = TRUE)
  ends$seen_lo <- pmin(ends$seen_lo, ends$v, seeds$lo[at], na.rm = TRUE)
  invisible(ends)
}

# The intervals of the targets in `ends` when the witnesses seen settle
# every end and leave no interval flat but at its relation bounds (another
# flat one needs its exact ends: widen_flat_intervals()), as
# component_intervals() returns them; NULL otherwise.
witnessed_intervals <- function(ends, tick) {
  if (any(open_ends(ends, TRUE)) || any(open_ends(ends, FALSE))) return(NULL)
  all <- seq_along(ends$pos)
  hi <- witnessed_end(ends, all, TRUE)
  lo <- witnessed_end(ends, all, FALSE)
  # (a flat interval both of whose ends are its relation bounds is exact)
  if (any(hi - lo <= ends$tol & (hi < ends$ub - ends$tol | lo > ends$lb + ends$tol))) return(NULL)
  tick(2 * length(all))
  list(lower = lo, upper = hi, n_lp = ends$n_lp)
}

# The search state of local_witnesses() for pattern `supp`: the
# heuristic's boxes and witness programs (R/table-suppress.R) with every
# cell of the pattern free and the a priori bounds of `prep`.
local_witness_search <- function(prep, supp) {
  search <- new_protection_search(prep, rep(1, prep$structure$ncell), NULL, audit_local_box)
  search$supp <- supp
  search
}

# With the protection decided rather than measured (exact = FALSE): for
# every end no witness has settled yet, one program of the protection
# search (deviation_lp()) over the suppressed cells of a box around its
# cell (search_box(), at most local$box cells; after a pass over every
# end, the open ones again in boxes enlarged as the heuristic enlarges its
# own, up to `max_budget`) for a table that moves
# the cell as far as the end needs, the published cells fixed. Its table
# (and its mirror image, when that keeps the bounds) is a witness for every
# target it moves (witness_ok() checks it against every relation of the
# cells it moves, and the bounds); an end it does not settle is left to the
# component's programs. The published table itself is a witness too.
local_witnesses <- function(ends, search, max_budget = search$box) {
  v <- ends$v
  ends$seen_hi <- pmax(ends$seen_hi, v)
  ends$seen_lo <- pmin(ends$seen_lo, v)
  see <- function(y) {
    at <- match(y$cells, ends$cells, nomatch = 0L)
    k <- at[at > 0]
    val <- search$prep$value[y$cells[at > 0]] + y$y[at > 0]
    env_set(ends, "seen_hi", k, pmax(ends$seen_hi[k], val))
    env_set(ends, "seen_lo", k, pmin(ends$seen_lo[k], val))
  }
  # ends whose box left nothing out at a smaller budget (no larger box helps)
  whole <- list(up = logical(length(v)), down = logical(length(v)))
  budget <- search$box
  repeat {
    for (upward in c(TRUE, FALSE)) {
      side <- if (upward) "up" else "down"
      for (k in which(!whole[[side]])) {
        if (upward && ends$seen_hi[k] >= ends$need_hi[k]) next
        if (!upward && ends$seen_lo[k] <= ends$need_lo[k]) next
        i <- ends$cells[k]
        t <- if (upward) ends$need_hi[k] - v[k] else v[k] - ends$need_lo[k]
        if (!is.finite(t)) next
        box <- search_box(search, i, t, budget)
        whole[[side]][k] <- box$whole
        y <- deviation_lp(search, i, box$cells[search$supp[box$cells]], t, if (upward) 1 else -1,
                          symmetric = FALSE)
        ends$n_lp <- ends$n_lp + 1L
        if (is.null(y)) next
        see(y)
        if (witness_ok(search, y$cells, -y$y)) see(list(cells = y$cells, y = -y$y))
      }
    }
    # the ends still open get a larger box, as the heuristic's do
    budget <- budget * suppress_box_growth
    if (budget > max_budget) break
  }
  invisible(ends)
}

# The tables of earlier programs of the component (solver$tables(), a list
# of them, all within the bounds the solver was made with, solver$base) as
# witnesses for the targets in `ends`: those within the bounds of `lp` on
# every column whose bounds differ from the base ones (the others they
# keep), and the others moved toward the published table until they are
# (when the published table keeps those bounds, as it keeps a respondent's
# knowledge: every table between two tables of the polytope is one of it);
# with one such column, also tables between one table above its bounds and
# one below (a respondent alone in a cell knows it exactly: the published
# table is then the only point of a single table's segment that keeps it).
# On the 3,049-cell bench table 1 the outsider's tables broke the knowledge
# of most respondents, whose programs were nine tenths of protect_table()'s
# 40,404; with both, it solves 7,372. The core reads the tables where they
# are (table_extremes()).
shared_witnesses <- function(ends, solver, lp, prep, call) {
  ex <- shared_extremes(solver, lp, prep, ends$pos, ends$need_hi, ends$need_lo, call)
  if (is.null(ex)) return(invisible(ends))
  # (extremes of -Inf and Inf where no table counts)
  ends$seen_hi <- pmax(ends$seen_hi, ex$max)
  ends$seen_lo <- pmin(ends$seen_lo, ex$min)
  invisible(ends)
}

# The convex combinations of the solver's tables and the published table
# that keep the bounds of `lp` as witnesses for the targets in `ends` whose
# ends no table settles alone (combined_extremes()).
combined_witnesses <- function(ends, solver, lp, prep, call) {
  ex <- combined_extremes(solver, lp, prep, ends$pos, ends$need_hi, ends$need_lo, ends$seen_hi,
                          ends$seen_lo, call)
  if (is.null(ex)) return(invisible(ends))
  ends$seen_hi <- ex$max
  ends$seen_lo <- ex$min
  invisible(ends)
}

# The extremes list(max, min) of the targets at positions `pos` of `lp`,
# from the extremes seen so far (`seen_hi`, `seen_lo`), over the convex
# combinations of the solver's tables (all within its first bounds,
# solver$base) and the published table that keep the bounds of `lp` on the
# columns whose bounds differ from the base ones (a respondent's
# knowledge): for each target short of `need_hi` (or above `need_lo`), the
# best combination for it, by a program with one row per such column and
# one weight per table (cpp_combination_extremes(): hull_maximum() of
# table_hull.hpp), whose table is then a witness for every target. A table
# that moves a known cell up and one that moves it down, weighted so that
# the moves cancel, keep a respondent's knowledge exactly where each alone
# breaks it (shared_extremes() finds those pairs for one known cell only).
# With `all_or_none`, up to the first target whose best combination falls
# short (`settled`: whether every target reached its needs). NULL when no
# column's bounds changed, the published table breaks the bounds, or the
# solver has no table. Its programs share one simplex (HullProgram in
# the core): each starts from the basis the last one ended at, and stops
# once its end reaches its need (on the 736-cell table of
# bench_suppress_sweep.R, 213 -> 82 ms for its 464 calls). The option
# sdcRisk.audit_combinations (undocumented) lets the tests leave it out,
# sdcRisk.hull_warm = FALSE solve each program from scratch.
combined_extremes <- function(solver, lp, prep, pos, need_hi, need_lo, seen_hi, seen_lo, call,
                              all_or_none = FALSE) {
  if (!getOption("sdcRisk.audit_combinations", TRUE)) return(NULL)
  tabs <- solver$tables()
  if (!length(tabs)) return(NULL)
  base <- solver$base
  changed <- which(lp$lower != base$lower | lp$upper != base$upper)
  if (!length(changed)) return(NULL)
  tol <- prep$tol[lp$vars[changed]]
  v <- prep$value[lp$vars]
  if (!all(v[changed] >= lp$lower[changed] - tol & v[changed] <= lp$upper[changed] + tol)) return(NULL)
  # (the newest audit_combination_tables: the programs of a clean-up's
  # later trials, whose cells the clean-up's earlier trials published
  # fixed (cached_program()), are programs of every table of the solver
  # with dozens of cells held, most of which the oldest tables move)
  k <- audit_combination_tables
  if (length(tabs) > k) tabs <- tabs[seq.int(length(tabs) - k + 1L, length(tabs))]
  core_call(cpp_combination_extremes, tabs, pos, changed, lp$lower[changed], lp$upper[changed], tol, v,
            need_hi, need_lo, seen_hi, seen_lo, all_or_none, getOption("sdcRisk.hull_warm", TRUE),
            call = call)
}

# The extremes list(max, min) of the targets at positions `pos` of `lp`
# over the tables of the solver that keep (or, moved toward the published
# table, keep) the bounds of `lp`, as shared_witnesses() describes; read
# until every target reaches `need_hi` and `need_lo`. NULL when the solver
# has no table.
shared_extremes <- function(solver, lp, prep, pos, need_hi, need_lo, call) {
  tabs <- solver$tables()
  if (!length(tabs)) return(NULL)
  base <- solver$base
  changed <- which(lp$lower != base$lower | lp$upper != base$upper)
  tol <- prep$tol[lp$vars[changed]]
  v <- prep$value[lp$vars]
  center <- if (all(v[changed] >= lp$lower[changed] - tol & v[changed] <= lp$upper[changed] + tol)) v else
    numeric()
  core_call(cpp_table_extremes, tabs, pos, changed, lp$lower[changed], lp$upper[changed],
            tol, center, need_hi, need_lo, call = call)
}

# The state of one component's intervals, shared by the steps of
# component_intervals(): per target its relation bounds (`ub`, `lb`), the
# values a witness must reach to settle its ends (`need_hi`, `need_lo`), the
# extremes seen in witness tables so far (`seen_hi`, `seen_lo`), its
# interval (`hi`, `lo`); the programs solved
# (`n_lp`) and batches run (`batch`); and the relation bounds of every
# column (`rb`). `rb`: relation_bounds(lp), when already computed.
new_interval_ends <- function(lp, pos, cells, prep, exact, solver = NULL, rb = NULL) {
  # a shared solver's programs within its first bounds start the
  # propagation from the relation bounds of those (valid for a smaller
  # polytope too, and most of them already settled)
  base_rb <- if (!is.null(solver$base_bounds) && solver$inside()) solver$base_bounds()
  if (!is.null(base_rb)) {
    lp_start <- lp
    lp_start$lower <- pmax(lp$lower, base_rb$lower)
    lp_start$upper <- pmin(lp$upper, base_rb$upper)
    rb <- relation_bounds(lp_start)
  } else {
    rb <- rb %||% relation_bounds(lp)
    if (!is.null(solver$base_bounds)) solver$base_bounds(rb)
  }
  ends <- new.env(parent = emptyenv())
  ends$rb <- rb
  ends$pos <- pos
  ends$cells <- cells
  ends$v <- prep$value[cells]
  ends$tol <- prep$tol[cells]
  ends$ub <- rb$upper[pos]
  ends$lb <- rb$lower[pos]
  # what protection_met() requires of each end
  req <- protection_required(prep, cells)
  ends$req_hi <- req$hi
  ends$req_lo <- req$lo
  if (exact) {
    ends$need_hi <- ends$ub - ends$tol
    ends$need_lo <- ends$lb + ends$tol
  } else {
    ends$need_hi <- pmin(pmin(ends$v + prep$level[cells], prep$upper[cells]) - ends$tol, ends$ub - ends$tol)
    ends$need_lo <- pmax(pmax(ends$v - prep$level[cells], prep$lower[cells]) + ends$tol, ends$lb + ends$tol)
  }
  ends$seen_hi <- rep(-Inf, length(pos))
  ends$seen_lo <- rep(Inf, length(pos))
  ends$hi <- ends$lo <- rep(NA_real_, length(pos))
  # (ends a program measured: exact)
  ends$lp_hi <- ends$lp_lo <- logical(length(pos))
  ends$n_lp <- 0L
  ends$batch <- 0
  ends
}

# A program's optimal table as a witness for every target (none when the
# program had no optimum).
add_witness <- function(ends, r) {
  if (is.null(r$solution)) return(invisible(ends))
  y <- r$solution[ends$pos]
  ends$seen_hi <- pmax(ends$seen_hi, y)
  ends$seen_lo <- pmin(ends$seen_lo, y)
  invisible(ends)
}

# Which targets no witness has settled yet in direction `upward`.
open_ends <- function(ends, upward) {
  if (upward) ends$seen_hi < ends$need_hi else ends$seen_lo > ends$need_lo
}

# Batch programs, each maximising (minimising) a weighted sum of open ends
# that share no relation (a greedy packing in a fixed pseudo-random order,
# another each batch): the ends of one relation cannot all reach their
# bounds in one table, while ends of a packing often can. On the 19,229
# suppressed cells of the 106,636-cell bench table every end sampled
# reached its relation bound, and 26 batches left 186 of 19,229 upper ends
# open, where batches over every open end left 9,120 after 40. Batches go
# on while each settles enough ends to pay for itself (the thresholds in
# table-policy.R: a batch by the interior point method costs as much as
# several single programs by the simplex from a near vertex).
batch_witnesses <- function(ends, solver, lp, upward) {
  repeat {
    open <- open_ends(ends, upward)
    if (sum(open) < audit_batch_min_open) break
    ends$batch <- ends$batch + 1
    pick <- relation_packing(which(open), ends$pos, lp$mat, ends$batch)
    obj <- numeric(lp$mat$ncol)
    obj[ends$pos[pick]] <- 1 / (1 + abs(ends$v[pick]))
    add_witness(ends, solver$batch(obj, upward, ends$cells[1]))
    ends$n_lp <- ends$n_lp + 1L
    settled <- sum(open) - sum(open_ends(ends, upward))
    pays <- max(if (solver$large) audit_batch_settle_ipm else audit_batch_settle_simplex,
                audit_batch_settle_share * sum(open))
    if (settled < pays) break
  }
}

# Every target's end in direction `upward`: from the witnesses when they
# settle it, from a twin's end measured before (twin_end()), otherwise by
# a program of its own (whose table is a witness for the targets after
# it). The targets are taken in order; those up to the next open one are
# settled together by the witnesses seen so far.
settle_ends <- function(ends, solver, lp, upward, tick) {
  n <- length(ends$pos)
  # (whether the twins serve, found with the first program needed; the
  # option sdcRisk.audit_twins = FALSE, undocumented, lets the tests solve
  # every program)
  twins <- NULL
  k <- 1L
  while (k <= n) {
    rest <- k:n
    open <- if (upward) ends$seen_hi[rest] < ends$need_hi[rest] else ends$seen_lo[rest] > ends$need_lo[rest]
    nxt <- if (any(open)) rest[which.max(open)] else n + 1L
    if (nxt > k) {
      done <- k:(nxt - 1L)
      end <- witnessed_end(ends, done, upward)
      if (upward) ends$hi[done] <- end else ends$lo[done] <- end
      tick(length(done))
    }
    if (nxt > n) break
    twins <- twins %||% (getOption("sdcRisk.audit_twins", TRUE) && !is.null(lp_twins(ends, lp, solver)))
    value <- if (twins) twin_end(ends, ends$pos[nxt], upward) else NA_real_
    if (is.na(value)) {
      r <- solver$single(unit_objective(lp, ends$pos[nxt]), upward, ends$cells[nxt])
      ends$n_lp <- ends$n_lp + 1L
      add_witness(ends, r)
      value <- r$value
      if (twins) learn_twin_end(ends, ends$pos[nxt], upward, value)
    }
    if (upward) ends$hi[nxt] <- value else ends$lo[nxt] <- value
    if (upward) ends$lp_hi[nxt] <- TRUE else ends$lp_lo[nxt] <- TRUE
    tick()
    # (first_breach: an exact end short of the protection ends the audit)
    if (isTRUE(ends$first_breach) && isTRUE(if (upward) value < ends$req_hi[nxt] - ends$tol[nxt] else
      value > ends$req_lo[nxt] + ends$tol[nxt])) {
      ends$breached <- TRUE
      return(invisible(ends))
    }
    k <- nxt + 1L
  }
}

# The twin columns of `lp` (program_twins(), the solver's when it keeps
# them; cpp_twin_columns(): a relation with two
# suppressed cells ties them, x2 = (rhs - v1 x1) / v2 on every table of
# every program of the component, whatever the bounds of its cells; chains
# of such relations tie classes of cells, each cell a + b x[root]), found
# once per `ends`, with the extremes of each class's root measured so far
# (`hi`, `lo`, NA until a program of one of its cells measures them). NULL
# when no two cells are twins. One program then settles an end of every
# cell of its class: on the 736-cell table of bench_suppress_sweep.R the
# 348 suppressed cells of the final pattern form 126 classes.
lp_twins <- function(ends, lp, solver) {
  if (is.null(ends$twins)) {
    tw <- if (is.null(solver$twins)) program_twins(lp) else solver$twins()
    ends$twins <- if (any(tw$size[ends$pos] > 1L)) {
      c(tw, list(hi = rep(NA_real_, length(tw$root)), lo = rep(NA_real_, length(tw$root))))
    } else {
      FALSE
    }
  }
  if (!isFALSE(ends$twins)) ends$twins
}

# The twin columns of a component's program `lp` (cpp_twin_columns():
# list(root, a, b, size) over its columns).
program_twins <- function(lp) {
  m <- lp$mat
  core_call(cpp_twin_columns, m$i, m$j, as.double(m$v), as.double(lp$rhs), m$nrow, m$ncol)
}

# The end in direction `upward` of column j that a twin's program measured
# (the same end of its root, b > 0, or the other, b < 0), NA when none has.
twin_end <- function(ends, j, upward) {
  twins <- ends$twins
  if (twins$size[j] < 2L) return(NA_real_)
  b <- twins$b[j]
  root <- twins$root[j]
  ext <- if (upward == (b > 0)) twins$hi[root] else twins$lo[root]
  twins$a[j] + b * ext
}

# Records the end `value` of column j in direction `upward`, measured by
# its program, as the end of its root that it gives (twin_end()).
learn_twin_end <- function(ends, j, upward, value) {
  twins <- ends$twins
  if (twins$size[j] < 2L || is.na(value)) return(invisible(NULL))
  b <- twins$b[j]
  ext <- (value - twins$a[j]) / b
  if (upward == (b > 0)) ends$twins$hi[twins$root[j]] <- ext else ends$twins$lo[twins$root[j]] <- ext
  invisible(NULL)
}

# The ends of targets k that the witnesses settle: exact at the relation
# bound when reached, otherwise an inner bound.
witnessed_end <- function(ends, k, upward) {
  if (upward) {
    ifelse(ends$seen_hi[k] >= ends$ub[k] - ends$tol[k], ends$ub[k], ends$seen_hi[k])
  } else {
    ifelse(ends$seen_lo[k] <= ends$lb[k] + ends$tol[k], ends$lb[k], ends$seen_lo[k])
  }
}

# With `exact = FALSE`, the exact ends of every interval that the levels
# alone do not force to a positive width. An end a program measured, or
# that a witness settled at its relation bound (witnessed_end()), is exact
# already (within the tolerance) and gets no program: on R4 of the bench,
# the respondents' first round measured 23 cells again that their relation
# bounds pinned, 46 of its 62 programs.
widen_flat_intervals <- function(ends, solver, lp) {
  for (k in which(ends$hi - ends$lo <= ends$tol)) {
    obj <- unit_objective(lp, ends$pos[k])
    if (!ends$lp_lo[k] && ends$lo[k] > ends$lb[k] + ends$tol[k]) {
      ends$lo[k] <- solver$single(obj, FALSE, ends$cells[k])$value
      ends$n_lp <- ends$n_lp + 1L
    }
    if (!ends$lp_hi[k] && ends$hi[k] < ends$ub[k] - ends$tol[k]) {
      ends$hi[k] <- solver$single(obj, TRUE, ends$cells[k])$value
      ends$n_lp <- ends$n_lp + 1L
    }
  }
}

# The objective of the program of one cell (column j).
unit_objective <- function(lp, j) {
  obj <- numeric(lp$mat$ncol)
  obj[j] <- 1
  obj
}

# The solver of a small component: every program by HiGHS' primal simplex
# from the previous optimal basis (lp_session(); the programs of a
# component differ only in their objective), a program the session fails
# (numerical trouble from the previous basis) from scratch by
# component_program(). The batch programs get finite bounds
# (finite_bounds(): a table of the smaller polytope is still a witness), so
# that an unbounded direction cannot hide the others. `carried`: tables of
# the component found before (pooled_tables(), within the bounds of `lp`),
# its first tables. Returns list(large, single, batch, base, tables,
# own_tables, rebound): `single` and `batch` each a function(obj, maximize,
# cell) returning list(status, value, solution); `tables()` the optimal
# tables so far (a list, within `base`), `own_tables()` those of its own
# programs (not carried), and `rebound(lp)` for shared_simplex_solver().
simplex_component_solver <- function(lp, prep, call, carried = list()) {
  box <- finite_bounds(lp, prep)
  single_lp <- lp_session(lp$mat, lp$rhs, lp$rhs, lp$lower, lp$upper)
  batch_lp <- NULL
  # the optimal tables solved within the first bounds (`base`), as
  # shared_witnesses() reads them
  base <- list(lower = lp$lower, upper = lp$upper)
  tables <- carried
  n_carried <- length(carried)
  base_rb <- NULL
  inside <- TRUE
  solve_in <- function(session, obj, maximize, cell) {
    r <- session$extreme(obj, maximize)
    if (!r$status %in% c("optimal", "unbounded")) r <- component_program(lp, obj, maximize, cell, call)
    if (inside && !is.null(r$solution) && (length(tables) + 1) * length(r$solution) <= audit_shared_values) {
      tables[[length(tables) + 1L]] <<- as.double(r$solution)
    }
    r
  }
  twins <- NULL
  list(large = FALSE, base = base,
       tables = function() tables,
       # the program's twin columns (program_twins()), found once
       twins = function() twins %||% (twins <<- program_twins(lp)),
       own_tables = function() tables[seq_along(tables) > n_carried],
       # the relation bounds of the first bounds (new_interval_ends()), valid
       # for every program of the solver whose bounds are within them
       base_bounds = function(rb = NULL) {
         if (!is.null(rb) && is.null(base_rb)) base_rb <<- rb
         base_rb
       },
       inside = function() inside,
       single = function(obj, maximize, cell) solve_in(single_lp, obj, maximize, cell),
       batch = function(obj, maximize, cell) {
         batch_lp <<- batch_lp %||% lp_session(lp$mat, lp$rhs, lp$rhs, box$lower, box$upper,
                                               method = "simplex")
         solve_in(batch_lp, obj, maximize, cell)
       },
       # the same component's programs with the bounds of `new` (its matrix
       # and right-hand side the same): from here on, from the last bases
       rebound = function(new) {
         lp <<- new
         inside <<- all(new$lower >= base$lower & new$upper <= base$upper)
         box <<- finite_bounds(new, prep)
         single_lp$set_bounds(new$lower, new$upper)
         if (!is.null(batch_lp)) batch_lp$set_bounds(box$lower, box$upper)
         invisible(NULL)
       })
}

# The simplex solver of a component (simplex_component_solver()), shared by
# every audit of the same pattern through the cache `prep$lp_cache` (an
# environment, which copies of `prep` share): audit_cells() empties it and
# fills it with the solver of each component of the outsider's audit; the
# respondents' programs of that component (the outsider's with a few bounds
# tightened, lp$vars the same suppressed cells) then start from the
# outsider's last bases instead of from scratch. The cells of a component
# decide its program: its relations are those of its cells, and every other
# cell of them is published. Each solver is kept with its program (`lp`:
# vars, mat, rhs) and, in `.owner`, as the solver of each of its cells
# (cached_program()).
shared_simplex_solver <- function(lp, prep, call) {
  cache <- prep$lp_cache
  if (is.null(cache) || is.null(lp$vars)) return(simplex_component_solver(lp, prep, call))
  hit <- cached_solver(lp, prep)
  if (!is.null(hit)) {
    hit$rebound(lp)
    return(hit)
  }
  solver <- simplex_component_solver(lp, prep, call, carried = pooled_tables(prep, lp))
  assign(as.character(lp$vars[1]), list(vars = lp$vars, solver = solver, lp = lp[c("vars", "mat", "rhs")]),
         envir = cache)
  # (which solver holds each cell: cached_program())
  if (is.null(cache$.owner)) cache$.owner <- integer(length(prep$value))
  cache$.owner[lp$vars] <- lp$vars[1]
  solver
}

# The program of the component of `lp` (its cells lp$vars, its bounds) as
# the program of a cached solver whose cells hold them, the solver's other
# cells fixed at their values; `lp` itself when no solver's cells hold
# them. A solver's program is the program of a component W of some
# pattern: the relations through W's cells, every other cell of them at its
# value. A component V of a pattern that suppresses no cell of V's
# relations outside V (it is a component) lies in W's relations with its
# published cells at their values; W's other cells are published now, or
# suppressed in another component of the pattern, which no relation
# through V's cells holds: fixed at their values, W's program is V's
# program (beside independent ones), and its solver's session, bases and
# tables serve V's programs (the clean-up's trials publish one cell of a
# component after another: on the 668-cell ACS table of
# bench_suppress_small.R each trial built its component's solver from
# scratch). The tables of W's earlier programs that move those cells are
# no tables of V's, but combinations of them may be (combined_extremes()).
cached_program <- function(lp, prep) {
  cache <- prep$lp_cache
  if (is.null(cache) || is.null(cache$.owner) || is.null(lp$vars) || is.null(lp$mat) ||
      !getOption("sdcRisk.audit_subpatterns", TRUE)) {
    return(lp)
  }
  key <- cache$.owner[lp$vars[1]]
  if (is.na(key) || key == 0L) return(lp)
  e <- cache[[as.character(key)]]
  # (the same cells: the solver's own program; a solver of many more cells
  # would solve larger programs than the component's own)
  if (is.null(e$lp) || identical(e$vars, lp$vars) ||
      length(lp$vars) < audit_subpattern_share * length(e$vars)) {
    return(lp)
  }
  at <- match(lp$vars, e$vars)
  if (anyNA(at)) return(lp)
  out <- e$lp
  out$lower <- out$upper <- prep$value[e$vars]
  out$lower[at] <- lp$lower
  out$upper[at] <- lp$upper
  out
}

# Whether pattern `supp` suppresses no cell that the pattern of the cache's
# solvers (reset_lp_cache()) publishes: its components then lie in those
# solvers' components (cached_program()).
sub_pattern <- function(cache, supp) {
  old <- cache$.supp
  getOption("sdcRisk.audit_subpatterns", TRUE) && !is.null(old) && length(old) == length(supp) &&
    !any(supp & !old)
}

# The cache of component solvers (shared_simplex_solver()) emptied for
# pattern `supp` (kept as `.supp`, for sub_pattern()), the optimal tables
# its solvers found kept in its pool
# (`.pool`: a list of list(vars, x), the tables of one solver as the
# columns of x over its cells `vars`, oldest first; the newest
# audit_pool_values values) for the components of later patterns: a table
# of one pattern is a table of every pattern that suppresses the cells it
# moves, and the respondents' clean-up tries patterns one published cell
# apart (on the 668-cell ACS table of bench_suppress_small.R, 4,239 ->
# 3,334 programs, 9.6 -> 8.9 s). The option sdcRisk.audit_pool
# (undocumented) lets the tests leave it out.
reset_lp_cache <- function(prep, supp = NULL) {
  cache <- prep$lp_cache
  pool <- NULL
  if (getOption("sdcRisk.audit_pool", TRUE) && audit_pool_values >= 1) {
    pool <- cache$.pool
    for (nm in ls(cache)) {
      e <- cache[[nm]]
      tabs <- if (!is.null(e$solver$own_tables)) e$solver$own_tables()
      if (length(tabs)) {
        pool[[length(pool) + 1L]] <- list(vars = e$vars, x = matrix(unlist(tabs, use.names = FALSE), length(e$vars)))
      }
    }
    # (the newest chunks whose values fit, and of the first that does not,
    # its newest tables)
    size <- rev(cumsum(rev(vapply(pool, function(ch) length(ch$x), numeric(1)))))
    over <- which(size > audit_pool_values)
    if (length(over)) {
      k <- max(over)
      ch <- pool[[k]]
      fit <- floor((audit_pool_values - (size[k] - length(ch$x))) / nrow(ch$x))
      ch$x <- ch$x[, seq_len(fit) + ncol(ch$x) - fit, drop = FALSE]
      pool <- c(if (fit > 0) list(ch), pool[-seq_len(k)])
    }
  }
  rm(list = ls(cache, all.names = TRUE), envir = cache)
  cache$.pool <- pool
  cache$.supp <- supp
  invisible(prep)
}

# The tables of the pool of `prep`'s cache (reset_lp_cache()) that are
# tables of the component of `lp`: restricted to its cells (`lp$vars`),
# those that move one of them and still add up (witness_adds_up(): a table
# that moved a cell of the component and a cell of another in one
# relation does not) and keep the bounds of `lp`; as full columns of `lp`,
# newest first, within the solver's share of audit_shared_values (in the
# core: cpp_pooled_tables()).
pooled_tables <- function(prep, lp) {
  pool <- prep$lp_cache$.pool
  if (!length(pool)) return(list())
  core_call(cpp_pooled_tables, relation_index_of(prep), pool, as.integer(lp$vars), as.double(lp$lower),
            as.double(lp$upper), prep$value, as.double(prep$lower), as.double(prep$upper), prep$tol,
            audit_tolerance, as.integer(max(floor(audit_shared_values / length(lp$vars)) - 1, 0)))
}

# The solver of the component of `lp` in the cache of `prep`, as it is
# (not rebound to the bounds of `lp`), or NULL.
cached_solver <- function(lp, prep) {
  cache <- prep$lp_cache
  if (is.null(cache) || is.null(lp$vars)) return(NULL)
  # (the components of one pattern are disjoint: the first cell names one,
  # and the cells themselves are compared)
  hit <- cache[[as.character(lp$vars[1])]]
  if (!is.null(hit) && identical(hit$vars, lp$vars)) hit$solver
}

# The solver of a large component (audit_ipm_cols cells and more), as
# simplex_component_solver() returns it. Every program gets the finite
# bounds: the interior point method declared the program of a bounded cell
# of the 106,636-cell bench table infeasible with infinite bounds, and
# solves it with finite ones. The batch programs by HiGHS' interior point
# method each; the single programs by one session whose first program the
# interior point method solves and the next ones the simplex from the vertex
# it ends at, within an iteration limit (audit_iterations): a single
# program by the simplex took 0.1 to 11 s there, and one more than 3
# minutes, about what the interior point method costs from scratch, which
# solves a program past the limit instead. An optimum at which no added
# bound is active is an optimum of the program without them (the added
# bounds have zero multipliers, so the others prove optimality); a single
# program optimal at one is solved again without them (component_program()).
ipm_component_solver <- function(lp, prep, call) {
  box <- finite_bounds(lp, prep)
  single_lp <- lp_session(lp$mat, lp$rhs, lp$rhs, box$lower, box$upper, method = "ipm_first",
                          iterations = max(audit_iterations, lp$mat$ncol))
  batch_lp <- NULL
  # (a batch only needs a table, and any table of the bounded program is
  # one of the table's: its added bounds are not checked)
  accept <- function(r, check_added) {
    r$status == "optimal" && !(check_added && at_added_bound(box, r$solution))
  }
  solve_in <- function(session, obj, maximize, cell, check_added) {
    r <- session$extreme(obj, maximize)
    if (r$status == "unbounded" || accept(r, check_added)) return(r)
    # the iteration limit, or numerical trouble from the previous basis: once
    # more from scratch, at last without the added bounds
    if (r$status != "optimal") {
      r <- solve_lp(obj, lp$mat, rep("==", lp$mat$nrow), lp$rhs, box$lower, box$upper,
                    maximize = maximize, presolve = TRUE, solver = "ipm")
      if (accept(r, check_added)) return(r)
    }
    component_program(lp, obj, maximize, cell, call)
  }
  list(large = TRUE,
       single = function(obj, maximize, cell) solve_in(single_lp, obj, maximize, cell, TRUE),
       batch = function(obj, maximize, cell) {
         batch_lp <<- batch_lp %||% lp_session(lp$mat, lp$rhs, lp$rhs, box$lower, box$upper,
                                               method = "ipm")
         solve_in(batch_lp, obj, maximize, cell, FALSE)
       })
}

# Finite bounds for a component's programs: every cell within
# audit_bound_factor times the whole table's absolute value (plus 1), with
# which bounds were added (`added_lo`, `added_hi`) and that value (`big`).
finite_bounds <- function(lp, prep) {
  # (the sum kept with the problem: a sum over every cell for every
  # respondent's program took 2% of the time on bench table 1)
  big <- audit_bound_factor * (prep$abs_total %||% sum(abs(prep$value))) + 1
  list(lower = pmax(lp$lower, -big), upper = pmin(lp$upper, big), big = big,
       added_lo = lp$lower < -big, added_hi = lp$upper > big)
}

# Does the table y reach a bound that finite_bounds() added?
at_added_bound <- function(box, y) {
  near <- box$big - audit_added_bound_near * (1 + box$big)
  any(box$added_lo & y <= -near) || any(box$added_hi & y >= near)
}

# One program of a component from scratch, with HiGHS' presolve and the
# component's own bounds (the last resort of both solvers): its optimum or
# an infinite end; no optimum means data inconsistent with the relations,
# or a failing solver, and is an error.
component_program <- function(lp, obj, maximize, cell, call) {
  r <- solve_lp(obj, lp$mat, rep("==", lp$mat$nrow), lp$rhs, lp$lower, lp$upper,
                maximize = maximize, presolve = TRUE)
  if (r$status == "infeasible_or_unbounded") r$status <- "unbounded"
  if (r$status == "unbounded") r$value <- if (maximize) Inf else -Inf
  if (r$status %in% c("optimal", "unbounded")) return(r)
  audit_solver_failure(r$status, cell, call)
}

# A greedy packing of the ends `open` (positions of targets, whose
# columns are `pos` in the component's program `mat`): ends taken in a
# pseudo-random order that depends on the number of the `batch` alone (R's
# random numbers are not touched), each kept when it shares no relation
# with one kept before. Returns the kept positions. In the core
# (relation_packing() of table_components.hpp): the order is a
# multiplicative hash of (position, batch) modulo 2^32.
relation_packing <- function(open, pos, mat, batch, call = rlang::caller_env()) {
  if (length(open) <= 1L) return(open)
  core_call(cpp_relation_packing, open, pos, mat$i, mat$j, mat$nrow, mat$ncol, as.double(batch),
            call = call)
}

# A progress bar over `total` steps of a long computation of the table side
# (protect_table(), protect_tables(), audit_table(), audit_tables()), shown
# only when R is interactive, so that tests and scripts stay silent. Returns
# the function that advances it by n steps (or ends it, `done = TRUE`;
# cli also ends it when the caller returns). The loops it counts are R loops, so a user interrupt
# stops them between two linear programs.
table_progress <- function(name, total, .envir = parent.frame()) {
  if (total <= 0 || !rlang::is_interactive()) return(function(n = 1, done = FALSE) invisible())
  id <- cli::cli_progress_bar(name, total = total, clear = TRUE, .envir = .envir)
  function(n = 1, done = FALSE) {
    if (done) cli::cli_progress_done(id = id, .envir = .envir) else
      cli::cli_progress_update(inc = n, id = id, .envir = .envir)
  }
}

# A sparse matrix (slam's triplet form, which highs reads) from (i, j, v)
# triplets with no (i, j) twice;
# slam::simple_triplet_matrix() would spend most of a small program's time
# checking that.
triplet_matrix <- function(i, j, v, nrow, ncol) {
  structure(list(i = as.integer(i), j = as.integer(j), v = as.numeric(v), nrow = as.integer(nrow),
                 ncol = as.integer(ncol), dimnames = NULL), class = "simple_triplet_matrix")
}

# No optimum for the interval of a cell: no table fits the published cells
# (the data contradict the relations or bounds), or the solver failed.
audit_solver_failure <- function(status, cell, call) {
  if (status == "infeasible") {
    abort_sdc(c(
      "The published cells are inconsistent with the table's relations and bounds.",
      "x" = "No table fits them when bounding the cell in row {cell}.",
      "i" = "Check that the totals add up and that {.arg lower}/{.arg upper} contain them."
    ), "audit_infeasible", call = call, arg = "x")
  }
  abort_sdc(c(
    "The linear program bounding the cell in row {cell} failed in the solver (HiGHS status {.val {status}}).",
    "i" = "No audit is returned; please report this table."
  ), "solver", call = call, arg = "x")
}
