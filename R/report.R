#' A disclosure-review report of a release
#'
#' Writes a self-contained HTML file (images embedded, no other file needed)
#' that documents a release for a disclosure review board: what was released,
#' the key variables and the intruder model, the exact certificate and where
#' it is attained, what it costs (the expected damage of [pram_damage()]:
#' records and key values changed, distance, variance; for
#' `ifpr(method = "optimal")` under Goal 3 also the lower bound of any
#' unbiased PRAM that meets the bound, and the design's ratio to it), the
#' design (partition, blocks, theta or the transition
#' matrices), what changed, the release risk and utility tables with their
#' plots (for tables: the suppression pattern and its audit), what is
#' published for the users of the released file, the package version, the
#' seed and the code that reproduces the release.
#'
#' The utility section plots the original against the released distribution
#' of every variable compared alone, and tables it up to 30 categories; for a
#' longer one (ages, areas) it says so and gives the call that makes the
#' table. Categories are in the key's order (factor levels, or numeric order
#' for a numeric key). The reproduction code sets the `seed` given, and the
#' code of a protected table names every rule with its parameters. Progress
#' is shown as cli progress steps (messages: wrap the call in
#' [suppressMessages()] to silence them).
#'
#' Every number in the report is read from `x` or computed from it by the
#' package's exported functions ([release_risk()], [release_utility()],
#' [max_match_risk_known()]); nothing is estimated that the object does not
#' label an estimate. A release certified for a sample (`target_in_file =
#' "unknown"`) is reported as such: the intruder who does not know whether
#' his target is in the file, the population counts or the
#' [population_model()] of them (its risks called estimates throughout),
#' the arg-max cell's population and probability of being in the file, and
#' the code with `population = POPULATION_COUNTS` (or the model) to fill in.
#'
#' @param x What was released: an `sdc_release` from [ifpr()], an
#'   `sdc_pram_release` from [pram_release()], an `sdcMicroObj` certified by
#'   [pram_certify()], or an `sdc_protection` from [protect_table()].
#' @param file Path of the HTML file to write. An existing file is replaced
#'   only when the report has been rendered completely.
#' @param ... Passed on to methods; must be empty.
#' @param title Title of the report.
#' @param seed The seed given to [set.seed()] before the release was drawn,
#'   if known: it is printed with the code, which a release cannot
#'   reproduce without it.
#' @param code The R code that made `x`, as a character vector (the app
#'   passes the script it exports). By default the report writes the call
#'   that makes the same release from the object's recorded arguments.
#' @param utility For microdata: the variables whose distributions are
#'   compared, as [release_utility()] takes them. By default each key (and
#'   each `also` or perturbed variable) alone and all keys together.
#' @param known For microdata: intruders who know only some keys, `NULL`
#'   (none beyond what the certificate already holds), `TRUE` (every
#'   nonempty subset of the keys) or a list of character vectors of keys;
#'   their exact maximum risks come from [max_match_risk_known()].
#' @param publication For microdata: `NULL` (the default: the report shows
#'   the code that writes the publication, and writes no file but `file`),
#'   or a path ending in `.json` (or `.rds`) to which [publish_plan()]
#'   writes the publication of `x`, once the report has been written. The
#'   report then names this file and its MD5 checksum, so that a review
#'   board approves the very file published beside the released data.
#' @param sensitivity For a protected table: the `sdc_sensitivity` it was
#'   made from, if at hand; the report then also lists the rules that flag
#'   each cell and re-runs [audit_table()] on the pattern.
#'
#' @returns The path of the report (invisibly).
#'
#' @section The publication:
#' A released file is analysed correctly only with its plan. The report of
#' a microdata release has a section "Publication for data users" that
#' says what [publish_plan()] of the release holds (the keys and their
#' categories, which of them are perturbed, the blocks with their
#' \eqn{\theta} or the transition matrices, the goal, \eqn{\xi} and the
#' certificate; none of the records, nor the seed), why publishing it keeps
#' the certificate (see [publish_plan()]), what it reveals (for IFPR plans:
#' the block cells and their counts), and how a data user reads it: the
#' code with [read_plan()] and [estimate_table()]. The report writes no
#' file but `file` unless `publication` names one: by default it shows the
#' code that writes the publication, so that what is published is a
#' deliberate step of the agency. A release whose plan [publish_plan()]
#' cannot publish is still reported; the section then says why.
#'
#' @section Methods:
#' One method per kind of release: `sdc_release`, `sdc_pram_release`,
#' `sdcMicroObj` and `sdc_protection`. Each gathers the content of the
#' report; one template (`system.file("report", "release-report.Rmd",
#' package = "sdcRisk")`) renders it with rmarkdown, which needs pandoc.
#'
#' @references Nayak, T. K., Zhang, C. and You, J. (2016). Measuring
#'   identification risk in microdata release and its control by
#'   post-randomization. U.S. Census Bureau, Research Report Series
#'   (Disclosure Avoidance #2016-02), Sections 4-7.
#'
#' @family app and report
#' @export
#' @examples
#' if (rmarkdown::pandoc_available()) {
#'   set.seed(1)
#'   rel <- ifpr(pums_md[1:3000, ], c("sex", "age", "race"), xi = 0.3)
#'   out <- release_report(rel, tempfile(fileext = ".html"), seed = 1)
#'   file.exists(out)
#' }
release_report <- function(x, file, ...) {
  UseMethod("release_report")
}

#' @rdname release_report
#' @export
release_report.default <- function(x, file, ...) {
  abort_sdc(c(
    "{.arg x} must be a release, a certified {.cls sdcMicroObj} or a protected table.",
    "x" = "It is {.obj_type_friendly {x}}.",
    "i" = "Make one with {.fn ifpr}, {.fn pram_release}, {.fn pram_certify} or {.fn protect_table}."
  ), "argument", arg = "x")
}

#' @rdname release_report
#' @export
release_report.sdc_release <- function(x, file, ..., title = "Disclosure review: IFPR release",
                                       seed = NULL, code = NULL, utility = NULL, known = NULL,
                                       publication = NULL) {
  rlang::check_dots_empty()
  report_check_args(file, seed, code)
  pub <- report_publication(x, publication, file, "release")
  on.exit(unlink(pub$tmp), add = TRUE)
  cert <- x$certificate
  keys <- x$keys
  vars <- c(keys, x$also)
  utility <- utility %||% report_default_utility(vars, keys)
  report_step("Computing the risk and utility tables")
  rr <- release_risk(x)
  u <- release_utility(x, utility)
  kn <- report_known(x$plan, cert$goal, known, x$sample)
  dmg <- pram_damage(x, weights = cert$design$weights, ordered = cert$design$ordered)
  sections <- list(
    report_section("What was released",
      report_text(report_released_text(x$data, keys, x$also, x$cells, "inverse-frequency post-randomization (IFPR, `ifpr()`)")),
      report_table(report_changed_by_var(x$data, x$cells, vars), "Records whose value changed, by variable (all other columns are released unchanged).")
    ),
    report_section("Intruder model and guarantee",
      report_text(report_intruder_text(keys, cert$goal, cert$xi, cert$sample))
    ),
    report_section("The certificate",
      report_text(report_certificate_text(cert$risk, cert$xi, cert$a, cert$count, cert$cell, cert$n_excluded, cert$sample)),
      report_cell_table(cert),
      if (!is.null(cert$known)) report_table(as.data.frame(cert$known), report_known_caption(cert$known, "certified by `ifpr(known = )`")),
      if (!is.null(kn)) report_table(as.data.frame(kn), report_known_caption(kn, "`max_match_risk_known()`")),
      report_plot(function() graphics::plot(x), "Exact R_j(a, t) against a for the riskiest cells, with the bound xi."),
      report_text(report_damage_text(dmg, cert$design, cert$goal)),
      report_table(report_damage_table(dmg, cert$design), report_damage_caption(cert$design))
    ),
    report_section("Design",
      report_text(report_design_text(x)),
      report_table(report_partition_table(x$partition, vars), "Partition: how each variable may change."),
      report_table(x$sets, "Partition sets (records never leave their set)."),
      if (nrow(x$merges) > 0) report_table(x$merges, "Partition sets merged to make the design feasible."),
      report_table(report_block_sizes(summary(x)$blocks), "IFPR blocks by number of cells, with their range of theta.")
    ),
    report_section("What changed",
      report_text(report_changes_text(cert))
    ),
    report_section("Release risk (empirical)",
      report_text(report_empirical_text()),
      report_table(rr$table, report_risk_caption(rr)),
      report_table(rr$changes, "Units whose cell changed and cells emptied, with their exact expected values."),
      report_table(rr$uniques, "Units in singleton and doubleton cells before and after."),
      report_plot(function() graphics::plot(rr), REPORT_EMPIRICAL_CAPTION)
    ),
    report_utility_section(u),
    pub$section,
    report_reproduce_section(seed, code %||% report_code_ifpr(x, seed))
  )
  report_render(sections, file, title, pub)
}

#' @rdname release_report
#' @export
release_report.sdc_pram_release <- function(x, file, ..., title = "Disclosure review: per-variable PRAM release",
                                            seed = NULL, code = NULL, utility = NULL, known = NULL,
                                       publication = NULL) {
  rlang::check_dots_empty()
  report_check_args(file, seed, code)
  pub <- report_publication(x, publication, file, "release")
  on.exit(unlink(pub$tmp), add = TRUE)
  cert <- x$certificate
  utility <- utility %||% report_default_utility(x$vars, x$keys)
  report_step("Computing the risk and utility tables")
  rr <- release_risk(x)
  u <- release_utility(x, utility)
  kn <- report_known(x$plan, cert$goal, known, x$sample)
  dmg <- pram_damage(x)
  sections <- list(
    report_section("What was released",
      report_text(report_released_text(x$data, x$keys, NULL, x$cells, "per-variable PRAM (`pram_release()`)")),
      report_table(report_changed_by_var(x$data, x$cells, x$vars), "Records whose value changed, by perturbed variable (all other columns are released unchanged).")
    ),
    report_section("Intruder model and guarantee",
      report_text(report_intruder_text(cert$known %||% x$keys, cert$goal, NULL, cert$sample))
    ),
    report_section("The certificate",
      report_text(report_certificate_text(cert$risk, NULL, cert$a, cert$count, cert$cell, cert$n_excluded, cert$sample)),
      report_cell_table(cert),
      if (!is.null(kn)) report_table(as.data.frame(kn), report_known_caption(kn, "`max_match_risk_known()`")),
      report_text(report_damage_text(dmg)),
      report_table(report_damage_table(dmg), report_damage_caption())
    ),
    report_section("Design",
      report_text(sprintf("Each of %s is perturbed on its own with a transition matrix%s; the other keys never change. The matrices are written with one column per original category (columns sum to 1).",
                          report_list(x$vars), if (length(x$strata)) paste0(" in each stratum of ", report_list(x$strata)) else "")),
      report_matrix_blocks(x$plan)
    ),
    report_section("What changed",
      report_text(sprintf("%s of %s records changed (%s); %s were expected. Total perturbation variance (eq. 6.3): %s.",
                          report_num(cert$records_changed), report_num(nrow(x$data)),
                          report_pct(cert$records_changed / nrow(x$data)),
                          report_num(cert$expected_changed), report_num(cert$total_variance)))
    ),
    report_section("Release risk (empirical)",
      report_text(report_empirical_text()),
      report_table(rr$table, report_risk_caption(rr)),
      report_table(rr$changes, "Units whose cell changed and cells emptied, with their exact expected values."),
      report_plot(function() graphics::plot(rr), REPORT_EMPIRICAL_CAPTION)
    ),
    report_utility_section(u),
    pub$section,
    report_reproduce_section(seed, code %||% report_code_pram(x, seed))
  )
  report_render(sections, file, title, pub)
}

#' @rdname release_report
#' @export
release_report.sdcMicroObj <- function(x, file, ..., title = "Disclosure review: PRAM of an sdcMicro object",
                                       seed = NULL, code = NULL, utility = NULL, known = NULL,
                                       publication = NULL) {
  rlang::check_dots_empty()
  report_check_args(file, seed, code)
  cert <- x@risk$pram
  if (is.null(cert)) {
    abort_sdc(c(
      "{.arg x} holds no certificate.",
      "i" = "Run {.code x <- pram_certify(x)} first."
    ), "argument", arg = "x")
  }
  pub <- report_publication(x, publication, file, "obj")
  on.exit(unlink(pub$tmp), add = TRUE)
  orig <- x@origData
  manip <- x@manipKeyVars
  keys <- names(manip)
  vars <- cert$vars %||% cert$variables
  released <- orig
  released[keys] <- manip
  utility <- utility %||% report_default_utility(vars, keys)
  report_step("Computing the risk and utility tables")
  rr <- release_risk(x)
  u <- release_utility(x, utility)
  kn <- report_known(x, cert$goal, known)
  dmg <- pram_damage(x)
  changed <- data.frame(
    variable = vars,
    records_changed = vapply(vars, function(v) sum(as.character(orig[[v]]) != as.character(manip[[v]]), na.rm = TRUE), numeric(1)),
    row.names = NULL
  )
  sections <- list(
    report_section("What was released",
      report_text(sprintf("The key variables %s of %s records of an `sdcMicroObj`, after `sdcMicro::pram()` on %s, certified by `pram_certify()`.",
                          report_list(keys), report_num(nrow(orig)), report_list(vars))),
      report_table(changed, "Records whose value changed, by perturbed variable.")
    ),
    report_section("Intruder model and guarantee",
      report_text(report_intruder_text(cert$known %||% keys, cert$goal, NULL, cert$sample))
    ),
    report_section("The certificate",
      report_text(report_certificate_text(cert$risk, NULL, cert$a, cert$count, cert$cell, cert$n_excluded, cert$sample)),
      if (!is.null(cert$households)) report_text(paste0(households_text(cert$households), ".")),
      if (!is.null(cert$cell_keys)) report_cell_table(cert),
      if (!is.null(kn)) report_table(as.data.frame(kn), report_known_caption(kn, "`max_match_risk_known()`")),
      report_text(report_damage_text(dmg)),
      report_table(report_damage_table(dmg), report_damage_caption())
    ),
    report_section("Design",
      report_text("The transition matrices sdcMicro stored in the object (one row per original category, as sdcMicro prints them)."),
      report_sdcmicro_matrices(x, vars)
    ),
    report_section("Release risk (empirical)",
      report_text(report_empirical_text()),
      report_table(rr$table, report_risk_caption(rr)),
      report_plot(function() graphics::plot(rr), REPORT_EMPIRICAL_CAPTION)
    ),
    report_utility_section(u),
    pub$section,
    report_reproduce_section(seed, code %||% c(
      "# the object as it was before sdcMicro::pram(), then:",
      if (!is.null(seed)) report_seed_line(seed),
      sprintf("obj <- sdcMicro::pram(obj, variables = %s)", report_deparse(vars)),
      sprintf("obj <- sdcRisk::pram_certify(obj, goal = %s%s%s)", report_deparse(cert$goal),
              if (identical(cert$households$policy, "ignore")) ", households = \"ignore\"" else "",
              paste0(paste0(",\n  ", report_population_args(cert)), collapse = ""))
    ))
  )
  report_render(sections, file, title, pub)
}

#' @rdname release_report
#' @export
release_report.sdc_protection <- function(x, file, ..., title = "Disclosure review: protected table",
                                          code = NULL, sensitivity = NULL) {
  rlang::check_dots_empty()
  report_check_args(file, NULL, code)
  by <- attr(x, "by")
  stats <- attr(x, "stats")
  df <- as.data.frame(unclass(x), stringsAsFactors = FALSE)
  status <- table(factor(df$status, c("published", "primary", "secondary")))
  sens_rows <- df$status == "primary"
  audit <- NULL
  if (!is.null(sensitivity)) {
    if (!inherits(sensitivity, "sdc_sensitivity") || nrow(sensitivity) != nrow(df)) {
      abort_sdc(c(
        "{.arg sensitivity} must be the {.cls sdc_sensitivity} table {.arg x} was made from.",
        "x" = "It is {.obj_type_friendly {sensitivity}} with {nrow(sensitivity) %||% 0} row{?s}; {.arg x} has {nrow(df)}."
      ), "argument", arg = "sensitivity")
    }
    audit <- audit_table(sensitivity, df$status != "published",
                         attacker = stats$attacker %||% "outsider")
  }
  report_step("Auditing the table")
  suppressed <- df[df$status != "published", intersect(c(by, "level", "total", "status", "reason", "protection", "lower", "upper", "protected"), names(df)), drop = FALSE]
  all_protected <- all(df$protected[sens_rows] %in% TRUE)
  sections <- list(
    report_section("What is published",
      report_text(sprintf("A magnitude table of `%s` by %s with all its margins: %s cells, of which %s are published, %s suppressed as sensitive (primary) and %s suppressed to protect them (secondary). Suppression cost: %s.",
                          attr(x, "value"), report_list(by), report_num(nrow(df)), report_num(status[["published"]]),
                          report_num(status[["primary"]]), report_num(status[["secondary"]]),
                          attr(x, "cost") %||% "value")),
      report_table(report_status_by_level(df), "Cells by level of aggregation and status.")
    ),
    report_section("The audit",
      report_text(sprintf(paste(
        "An attacker knows every published cell, that each cell at every level is the sum of the cells below it, and a priori bounds on every cell.",
        "The audit computes by linear programming the exact interval of every suppressed cell that is consistent with all of this, and checks that every sensitive cell keeps at least its protection level on each side.",
        "Result: %s."),
        if (all_protected) "**every sensitive cell is protected**" else "**some sensitive cells are NOT protected**")),
      report_table(suppressed, "Suppressed cells: why, the protection required on each side, the interval an attacker can deduce, and whether it suffices."),
      if (!is.null(audit)) report_text(sprintf("Re-run of `audit_table()` on the pattern: %s (%s linear programs).",
                                               if (isTRUE(attr(audit, "passed"))) "passed" else "FAILED", report_num(attr(audit, "n_lp") %||% NA))),
      report_plot(function() graphics::plot(x), "The pattern: published cells with their totals, primary and secondary suppressions.")
    ),
    report_section("How it was made",
      report_text(sprintf("`protect_table()` with method %s: %s linear programs in %s seconds%s.",
                          stats$method %||% "heuristic", report_num(stats$n_lp %||% NA),
                          format(signif(stats$seconds %||% NA, 3)),
                          if (isTRUE(stats$method == "optimal")) sprintf("; optimality proven: %s", stats$optimal) else ""))
    ),
    report_reproduce_section(NA, code %||% report_code_table(x, sensitivity))
  )
  report_render(sections, file, title)
}

# ---- content blocks ---------------------------------------------------------

report_section <- function(title, ...) {
  blocks <- list()
  for (b in list(...)) {
    if (is.null(b)) next
    if (is.null(b$type)) blocks <- c(blocks, b) else blocks[[length(blocks) + 1L]] <- b
  }
  list(title = title, blocks = blocks)
}
report_text <- function(text) list(type = "text", text = paste(text, collapse = "\n\n"))
report_table <- function(data, caption) list(type = "table", data = as.data.frame(data), caption = caption)
report_plot <- function(fun, caption, width = 7, height = 4.5) {
  list(type = "plot", fun = fun, caption = caption, width = width, height = height)
}
# `lang`: "r" for the code that remakes the release (which the tests
# extract as <pre class="r">), "{.r .publication}" for the code that
# writes and reads the publication, "" for text shown as is.
report_code <- function(code, lang = "r") list(type = "code", code = paste(code, collapse = "\n"), lang = lang)

report_check_args <- function(file, seed, code, call = rlang::caller_env()) {
  if (!is.character(file) || length(file) != 1L || is.na(file) || !nzchar(file)) {
    abort_sdc("{.arg file} must be one path.", "argument", call = call, arg = "file")
  }
  if (!is.null(seed) && (!is.numeric(seed) || length(seed) != 1L || is.na(seed))) {
    abort_sdc("{.arg seed} must be one number or {.code NULL}.", "argument", call = call, arg = "seed")
  }
  if (!is.null(code) && !is.character(code)) {
    abort_sdc("{.arg code} must be a character vector or {.code NULL}.", "argument", call = call, arg = "code")
  }
  invisible()
}

report_num <- function(x) {
  if (length(x) != 1L || is.na(x)) return("NA")
  if (x == round(x)) formatC(x, format = "d", big.mark = ",") else format(signif(x, 6), big.mark = ",")
}
report_pct <- function(x) sprintf("%.2f%%", 100 * x)
report_list <- function(x) {
  x <- paste0("`", x, "`")
  if (length(x) <= 1L) return(x)
  paste(paste(x[-length(x)], collapse = ", "), "and", x[length(x)])
}
# An argument's value as R code, with the app's deparser (R/app-calls.R):
# every double in the shortest form that reads back as the same number
# (0.1965, not digits17's 0.19650000000000001), strings escaped to ASCII,
# long calls broken under the argument's 2-space indent. Values it does not
# write (a matrix with its dimnames) fall back to base deparse().
report_deparse <- function(x) {
  tryCatch(app_deparse(app_lang(x), indent = 2L), sdcRisk_error_internal = function(e) {
    paste(deparse(x, width.cutoff = 500L,
                  control = c("keepNA", "keepInteger", "niceNames", "showAttributes", "digits17")), collapse = "")
  })
}

report_goal_text <- function(goal) {
  switch(goal,
    all_matches = "every cell and every number a >= 1 of matching released records (Goal 3)",
    unique_matches = "every cell when exactly one released record matches (Goal 2, a = 1)",
    sample_uniques = "cells with one record in the original data when exactly one released record matches (Goal 1)",
    goal
  )
}

report_released_text <- function(data, keys, also, cells, how) {
  c(
    sprintf("%s records with %s columns (%s). Key variables (what an intruder may know of a person): %s%s, perturbed by %s.",
            report_num(nrow(data)), length(data), report_list(names(data)), report_list(keys),
            if (length(also)) paste0("; perturbed jointly with them: ", report_list(also)) else "", how),
    sprintf("Records with a missing key: %s (%s).", report_num(cells$n_excluded),
            if (identical(cells$na, "category")) "treated as a category of its own" else "never perturbed, matched by no cell")
  )
}

report_intruder_text <- function(keys, goal, xi, sample = NULL) {
  c(
    sprintf("An intruder knows the values of %s of a target person in the original data, looks for them among the released records, and picks one of the matching records at random. R_j(a, t) is the exact probability that the pick is the target when the target's cell is c_j and a released records match (Nayak, Zhang and You 2016, eq. 4.3-4.4).", report_list(keys)),
    if (!is.null(sample)) {
      sprintf("The released file is a sample of a population, and the intruder does not know whether his target is in it: he draws the target from the F_j population units of its cell, of which t_j are in the file, so his probability of a correct match is exactly (t_j / F_j) R_j(a, t) (Nayak, Zhang and You 2016, Section 8; `?match_risk`). F_j: %s.%s",
              sample$label, if (isTRUE(sample$exact)) "" else " Every risk below is therefore an **estimate** under that model, not an exact value.")
    },
    sprintf("The guarantee covers %s%s.", report_goal_text(goal),
            if (!is.null(xi)) sprintf(": no such probability exceeds **xi = %s**", format(xi)) else "")
  )
}

# The empirical section says what its numbers are: one realization, whose
# means scatter around expectations that the certificate bounds exactly.
report_empirical_text <- function() {
  c(
    "For every unit of the original data whose cell could change, the probability that an intruder who knows its keys and picks one of the matching released records finds it (Nayak, Zhang and You 2016, Section 7.1, Table 3), in **this one release**: one realization of the random perturbation.",
    "The certificate above is of another kind: an exact probability over the perturbation. R_j(a, t) is the expected correct-match probability of a unit of cell j when a released records match, so the means below are, in expectation, mixtures of the R_j(a, t), and those expectations never exceed the certificate. One release scatters around them: where the maximum is attained, one release shows a mean above it about as often as below. A mean above the certificate by a few standard errors is therefore what the certificate allows, not a failure of it.",
    "The standard errors are cluster-robust: the records of one IFPR block are drawn jointly, so a block (outside blocks, an original cell) counts as one cluster (`clusters`), not each unit."
  )
}
# A distribution longer than this is plotted, not tabled: a table of 91 ages
# or 24 PUMAs by 7 columns is pages long, and the plot shows the same.
REPORT_MAX_TABLE_CATEGORIES <- 30L
REPORT_EMPIRICAL_CAPTION <- "Mean probability of a correct match in this release (one realization), with +/- 2 cluster-robust standard errors; the dashed line is the certificate, the exact maximum of the expected risk, which one release's means may cross."

report_certificate_text <- function(risk, xi, a, count, cell, n_excluded = 0, sample = NULL) {
  verdict <- if (is.null(xi)) "" else if (isTRUE(risk <= xi)) sprintf(" <= xi = %s", format(xi)) else sprintf(" > xi = %s", format(xi))
  c(sprintf("The %s maximum risk%s is **R = %s**%s, attained at cell %s (%s record%s in the original data) when a = %s released record%s.",
            tolower(risk_kind(sample)), if (is.null(sample)) "" else " of a target who may not be in the file",
            format(signif(risk, 10)), verdict, cell, report_num(count), if (isTRUE(count == 1)) "" else "s",
            a, if (isTRUE(a == 1)) " matches" else "s match"),
    if (isTRUE(n_excluded > 0)) sprintf("The certificate covers the records with complete keys only: **%s record%s with a missing key %s outside it**, released unchanged and matched by no cell.",
                                        report_num(n_excluded), if (n_excluded == 1) "" else "s", if (n_excluded == 1) "is" else "are"),
    "R is computed from the design, not estimated from the draw: it is a probability over the random perturbation, the expected chance of a correct match given the number of matching records, and it holds for every release the design can draw. A single release realizes it only in expectation (see the empirical section).")
}

# The cell and a where a certificate's maximum is attained (with, for a
# sample, the cell's population, probability of being in the file and
# in-file risk).
report_cell_table <- function(cert) {
  tab <- cbind(cell = cert$cell, cert$cell_keys, count = cert$count, a = cert$a, risk = cert$risk)
  if (!is.null(cert$sample)) {
    tab <- cbind(tab, population = cert$population, p_in_file = cert$p_in_file, risk_in_file = cert$risk_in_file)
  }
  report_table(tab, paste0("The cell and number of matches a where the ", tolower(risk_kind(cert$sample)),
                           " maximum is attained", if (!is.null(cert$sample)) " (population: F, or its estimate)", "."))
}

report_design_text <- function(x) {
  cert <- x$certificate
  if (!is.null(cert$design)) {
    return(sprintf("Method `optimal` (least damage, `damage = \"%s\"`): %s blocks over %s cells (%s records), each fitted so that its cells meet the bound exactly (IFPR with theta from %s to %s, or a matrix of symmetric flows); which cells share a block was chosen to make the damage least. Cells outside every block are released unchanged (their risk 1/T is part of the certificate). Exact calibration does not apply: every block meets the bound exactly already.",
                   cert$design$damage, report_num(cert$blocks), report_num(cert$cells_in_blocks),
                   report_num(cert$records_in_blocks), format(signif(cert$theta_range[1], 4)),
                   format(signif(cert$theta_range[2], 4))))
  }
  sprintf("Method `%s`, calibration `%s`: %s IFPR blocks over %s cells (%s records); theta from %s to %s. Cells outside every block are released unchanged (their risk 1/T is part of the certificate). Exact calibration saved %s expected changed records against the bound's theta (%s instead of %s).",
          cert$method, cert$calibrate, report_num(cert$blocks), report_num(cert$cells_in_blocks),
          report_num(cert$records_in_blocks), format(signif(cert$theta_range[1], 4)), format(signif(cert$theta_range[2], 4)),
          report_num(round(cert$expected_changed_bound - cert$expected_changed, 1)),
          report_num(round(cert$expected_changed, 1)), report_num(round(cert$expected_changed_bound, 1)))
}

# The damage of the design beside its certificate (issue 35): the expected
# damage of the plan in every measure of pram_damage() and, for the
# least-damage design under Goal 3, the lower bound of any unbiased PRAM
# that meets the bound, and the gap to it.
report_damage_text <- function(dmg, design = NULL, goal = NULL) {
  lower <- design$lower
  has_lower <- !is.null(lower) && !is.na(lower[["records"]])
  c(
    sprintf("What the certificate costs: in expectation %s of %s records change cell (%s) and %s key values change (%s per changed record), computed exactly from the design by `pram_damage()`.%s",
            report_num(round(dmg$records, 1)), report_num(dmg$n_records), report_pct(dmg$records / max(dmg$n_records, 1)),
            report_num(round(dmg$keys, 1)), format(round(dmg$keys / max(dmg$records, 1e-300), 3), nsmall = 3),
            if (is.null(design)) "" else sprintf(" The design was chosen to make the %s least.", report_damage_name(design$damage))),
    "The measures: *records changed*, records whose cell changes; *key values changed*, a move to a cell that differs in one key counts 1, in three keys 3 (each key weighted as given); *distance*, the same with an ordered key (age) counting how far its value moves, one year 1, forty years 40; *variance*, the total perturbation variance of the cell counts (eq. 3.6, eq. 6.3 for IFPR blocks), what an analyst's counts pay.",
    if (has_lower) {
      sprintf("No design can do much better: under Goal 3 a unit of cell t stays in its cell with probability at most b_t T_t, b_t the cell's bound (xi, or for a sample release its own bound), since sum_a a R_t(a, t) P(S_t = a) is that probability and E(S_t) = T_t; so every unbiased PRAM that meets the bound changes at least **%s records** in expectation, and at least %s key values (at least one, weighted, per changed record). This design changes %s times as many records (%s above the bound) and %s times as many key values.",
              report_num(round(lower[["records"]], 1)), report_num(round(lower[["keys"]], 1)),
              format(round(dmg$records / max(lower[["records"]], 1e-300), 3), nsmall = 3),
              report_num(round(dmg$records - lower[["records"]], 1)),
              format(round(dmg$keys / max(lower[["keys"]], 1e-300), 3), nsmall = 3))
    } else if (!is.null(design)) {
      sprintf("No lower bound is stated under %s: it holds for Goal 3, whose certificate bounds every number of matches.", report_goal_name(goal))
    }
  )
}

report_damage_name <- function(damage) {
  switch(damage, keys = "key values changed", records = "records changed", variance = "variance of the cell counts",
         distance = "distance on the ordered keys")
}

report_goal_name <- function(goal) {
  switch(goal, all_matches = "Goal 3", unique_matches = "Goal 2", sample_uniques = "Goal 1", goal)
}

report_damage_table <- function(dmg, design = NULL) {
  ordered <- dmg$by_key$key[dmg$by_key$ordered]
  tab <- data.frame(
    measure = c("records changed", "key values changed", paste0("distance", if (length(ordered)) paste0(" (ordered: ", paste(ordered, collapse = ", "), ")") else " (no ordered key)"),
                "variance of the cell counts (eq. 6.3)"),
    expected = round(c(dmg$records, dmg$keys, dmg$distance, dmg$variance), 1),
    stringsAsFactors = FALSE
  )
  if (!is.null(design)) tab$minimised <- ifelse(c("records", "keys", "distance", "variance") == design$damage, "yes", "")
  lower <- design$lower
  if (!is.null(lower) && !is.na(lower[["records"]])) {
    tab$lower_bound <- round(c(lower[["records"]], lower[["keys"]], NA, NA), 1)
    tab$ratio <- round(tab$expected / tab$lower_bound, 3)
  }
  tab
}

report_damage_caption <- function(design = NULL) {
  paste0("Expected damage of the design (`pram_damage()`)",
         if (!is.null(design$lower) && !is.na(design$lower[["records"]])) ", with the lower bound of any unbiased PRAM that meets xi (Goal 3) and the design's ratio to it" else "",
         ".")
}

report_changes_text <- function(cert) {
  sprintf("%s of %s records changed cell (%s; %s expected), and %s cells changed count. Total perturbation variance (eq. 6.3): %s (%s with the bound's theta).",
          report_num(cert$records_changed), report_num(cert$n_records), report_pct(cert$records_changed / cert$n_records),
          report_num(round(cert$expected_changed, 1)), report_num(cert$cells_changed),
          report_num(round(cert$total_variance, 1)), report_num(round(cert$total_variance_bound, 1)))
}

report_partition_table <- function(partition, vars) {
  rule <- vapply(vars, function(v) {
    r <- partition[[v]]
    if (is.null(r)) "changes freely"
    else if (is.character(r) && length(r) == 1L && identical(r, "keep")) "never changes"
    else if (is.numeric(r)) paste0("within groups with breaks ", paste(format(r, trim = TRUE), collapse = ", "))
    else if (is.list(r)) paste0("within the level sets ", paste(vapply(r, function(s) paste0("{", paste(s, collapse = ", "), "}"), ""), collapse = " "))
    else paste0("within groups ", paste(unique(r), collapse = ", "))
  }, character(1))
  data.frame(variable = vars, rule = rule, row.names = NULL)
}

report_status_by_level <- function(df) {
  tab <- table(factor(df$level, unique(df$level)), factor(df$status, c("published", "primary", "secondary")))
  data.frame(level = rownames(tab), published = tab[, 1], primary = tab[, 2], secondary = tab[, 3], row.names = NULL)
}

report_block_sizes <- function(blocks) {
  if (is.null(blocks) || nrow(blocks) == 0L) return(data.frame(cells = integer(0), blocks = integer(0)))
  sp <- split(blocks$theta, blocks$cells)
  data.frame(cells = as.integer(names(sp)), blocks = lengths(sp),
             theta_min = vapply(sp, min, 0), theta_max = vapply(sp, max, 0), row.names = NULL)
}

report_changed_by_var <- function(released, cells, vars) {
  orig_id <- cells$cell_id
  n <- vapply(vars, function(v) {
    orig <- cells$cells[[v]][orig_id]
    now <- released[[v]]
    same <- (is.na(orig) & is.na(now)) | (!is.na(orig) & !is.na(now) & as.character(orig) == as.character(now))
    sum(!is.na(orig_id) & !same)
  }, numeric(1))
  data.frame(variable = vars, records_changed = n, percent = round(100 * n / length(orig_id), 2), row.names = NULL)
}

report_default_utility <- function(vars, keys) {
  out <- as.list(unique(vars))
  if (length(keys) > 1L) out <- c(out, list(keys))
  out
}

# The known-key table the report asks for, for the release's sample case
# `smp` (its per-cell weights) if it has one.
report_known <- function(plan, goal, known, smp = NULL) {
  if (is.null(known) || isFALSE(known)) return(NULL)
  if (is.null(smp)) return(max_match_risk_known(plan, goal, subsets = if (isTRUE(known)) NULL else known))
  keys <- plan$cells$keys
  subsets <- if (isTRUE(known)) known_subsets(TRUE, keys) else lapply(known, check_known, keys = keys)
  plan_max_risk_known(plan, goal, subsets, engine_plan(plan), smp)
}

# The caption of release_risk()'s table: for a sample, each unit's
# probability is that of a target drawn from the population of its cell.
report_risk_caption <- function(rr) {
  smp <- rr$certificate$sample
  paste0("Mean probability of a correct match",
         if (!is.null(smp)) paste0(" of a target drawn from the population of each unit's cell (each unit's probability times t / F", if (isTRUE(smp$exact)) "" else ", estimated", ")"),
         " by original frequency tau and released frequency tau*.")
}

# The arguments that remake a certificate's sample case, as code: the
# population counts are data the report does not hold (the placeholder
# POPULATION_COUNTS, as SEED for the seed), a model is written out
# (SAMPLING_WEIGHTS where its weights were a vector).
report_population_args <- function(cert) {
  smp <- cert$sample
  if (is.null(smp)) return(NULL)
  m <- smp$model
  population <- if (is.null(m)) {
    "POPULATION_COUNTS"
  } else {
    sprintf("population_model(%s)", paste(c(
      report_deparse(m$method),
      if (is.character(m$weights)) sprintf("weights = %s", report_deparse(m$weights)),
      if (is.numeric(m$weights)) "weights = SAMPLING_WEIGHTS",
      if (!is.null(m$fraction)) sprintf("fraction = %s", report_deparse(m$fraction)),
      if (m$method == "loglinear") sprintf("margins = %s", report_deparse(m$margins))
    ), collapse = ", "))
  }
  c("target_in_file = \"unknown\"", paste0("population = ", population))
}

# The caption of a table of maxima for intruders who know some keys.
report_known_caption <- function(kn, how) {
  smp <- attr(kn, "sample")
  paste0(risk_kind(smp), " maximum risk for intruders who know only some keys, ", sample_line(smp), " (", how, ").")
}

# Every single variable's distribution is plotted (plot(u) draws only the
# first, which was `sex`, the one key that cannot change: issue 37) and
# tabled up to REPORT_MAX_TABLE_CATEGORIES categories; a longer table is
# not dropped silently: the report says where to get it.
report_utility_section <- function(u) {
  dists <- u$distributions
  long <- names(dists)[vapply(dists, nrow, 1L) > REPORT_MAX_TABLE_CATEGORIES]
  dist_blocks <- lapply(names(dists), function(v) {
    uv <- u
    uv$distributions <- dists[v]
    list(
      report_plot(function() graphics::plot(uv), sprintf("Original against released relative frequencies of `%s`.", v),
                  width = min(14, max(7, 0.12 * nrow(dists[[v]]))),
                  height = max(5, 3.5 + 0.1 * max(nchar(dists[[v]]$category), na.rm = TRUE))),
      if (v %in% long) {
        report_text(sprintf("`%s` has %s categories: its distribution is shown as the plot above; the table is `release_utility(x, \"%s\")$distributions$%s`.",
                            v, report_num(nrow(dists[[v]])), v, v))
      } else {
        report_table(dists[[v]], sprintf("Distribution of `%s`.", v))
      }
    )
  })
  blocks <- c(
    list(report_text("Original and released distributions (Nayak, Zhang and You 2016, Sections 6 and 7.2): total variation distance of each combination of variables (eq. 7.1), the distribution of each variable with the sampling standard deviation, and the exact perturbation variance of each category's count against the sampling variance.")),
    list(report_table(u$tvd, "Total variation distance between original and released joint distributions.")),
    list(report_plot(function() graphics::plot(u, which = "tvd"), "Total variation distance by combination.")),
    unlist(lapply(dist_blocks, Filter, f = Negate(is.null)), recursive = FALSE),
    lapply(names(u$variance), function(v) report_table(u$variance[[v]], sprintf("Perturbation variance of the counts of `%s` (eq. 3.6) against sampling variance.", v)))
  )
  do.call(report_section, c(list("Utility"), blocks))
}

report_matrix_blocks <- function(plan) {
  out <- list()
  mats <- plan$matrices
  labels <- plan$stratum_labels %||% names(mats)
  shown <- seq_len(min(length(mats), 6L))
  for (s in shown) {
    for (v in names(mats[[s]])) {
      m <- mats[[s]][[v]]
      caption <- sprintf("Transition matrix of `%s`%s: column = original category, row = released category.",
                         v, if (length(mats) > 1L) sprintf(" in stratum %s", labels[s]) else "")
      out[[length(out) + 1L]] <- report_table(data.frame(released = rownames(m), round(m, 6), check.names = FALSE, row.names = NULL), caption)
    }
  }
  if (length(mats) > length(shown)) {
    out[[length(out) + 1L]] <- report_text(sprintf("(%s more strata not shown; every matrix is in `x$plan$matrices`.)", length(mats) - length(shown)))
  }
  do.call(report_section, c(list("Transition matrices"), out))$blocks
}

report_sdcmicro_matrices <- function(x, vars) {
  p <- x@pram
  tm <- p$params
  out <- list()
  for (v in vars) {
    m <- NULL
    if (is.list(tm) && !is.null(tm[[v]])) m <- tm[[v]]
    if (is.list(m) && !is.null(m$Rs)) m <- m$Rs
    if (is.matrix(m)) {
      out[[length(out) + 1L]] <- report_table(data.frame(original = rownames(m), round(unclass(m), 6), check.names = FALSE, row.names = NULL),
                                              sprintf("Transition matrix of `%s` (row = original category).", v))
    }
  }
  if (!length(out)) out <- list(report_text("The object's pram slot holds no matrices in a form this report reads; see `x@pram`."))
  do.call(report_section, c(list("m"), out))$blocks
}

report_reproduce_section <- function(seed, code) {
  report_section("How to reproduce",
    report_text(c(
      if (identical(seed, NA)) NULL
      else if (is.null(seed)) "The seed given to `set.seed()` before the release was drawn was not recorded with this report: the code reproduces the design and the certificate; the same draw needs the same seed." else sprintf("Seed: **%s** (`set.seed(%s)` before the release was drawn).", format(seed), format(seed)),
      sprintf("sdcRisk %s, %s, %s; report written %s.", utils::packageVersion("sdcRisk"), R.version.string,
              R.version$platform, format(Sys.time(), "%Y-%m-%d %H:%M %Z"))
    )),
    report_code(code)
  )
}

report_code_ifpr <- function(x, seed = NULL) {
  cert <- x$certificate
  args <- c(
    sprintf("keys = %s", report_deparse(x$keys)),
    sprintf("xi = %s", report_deparse(cert$xi)),
    sprintf("goal = %s", report_deparse(cert$goal)),
    if (!is.null(x$partition)) sprintf("partition = %s", report_deparse(x$partition)),
    if (!is.null(x$also)) sprintf("also = %s", report_deparse(x$also)),
    sprintf("method = %s", report_deparse(cert$method)),
    sprintf("calibrate = %s", report_deparse(cert$calibrate)),
    sprintf("on_infeasible = %s", report_deparse(if (nrow(x$merges) > 0) "merge" else "error")),
    sprintf("na = %s", report_deparse(x$cells$na)),
    if (!is.null(cert$known)) sprintf("known = %s", report_deparse(lapply(strsplit(cert$known$known, ", ", fixed = TRUE), identity))),
    report_design_args(cert$design),
    report_population_args(cert)
  )
  c("library(sdcRisk)", "# data: the original data frame", report_seed_line(seed),
    paste0("release <- ifpr(data,\n  ", paste(args, collapse = ",\n  "), "\n)"))
}

# The least-damage design's arguments, as code: the damage, the weights
# when a key does not cost 1, the ordered keys when there are any.
report_design_args <- function(design) {
  if (is.null(design)) return(NULL)
  c(sprintf("damage = %s", report_deparse(design$damage)),
    if (any(design$weights != 1)) sprintf("weights = %s", report_deparse(design$weights[design$weights != 1])),
    if (length(design$ordered)) sprintf("ordered = %s", report_deparse(design$ordered)))
}

# The set.seed() line of the code: the seed given to release_report(), or a
# placeholder that says what goes there (issue 37: the seed was given and
# the code still said SEED).
report_seed_line <- function(seed, note = NULL) {
  if (is.null(seed)) {
    return(paste0("set.seed(SEED)  # the seed used for the release", if (!is.null(note)) paste0(" (", note, ")")))
  }
  paste0("set.seed(", report_deparse(seed), ")  # the seed given to release_report()")
}

report_code_pram <- function(x, seed = NULL) {
  mats <- x$plan$matrices
  m <- if (length(x$strata)) {
    stats::setNames(mats, x$plan$stratum_labels %||% names(mats))
  } else {
    mats[[1]]
  }
  c("library(sdcRisk)", "# data: the original data frame",
    sprintf("matrices <- %s", report_deparse(m)),
    report_seed_line(seed, "the draw is the same with the same pd and alpha"),
    sprintf("release <- pram_release(data, keys = %s, vars = %s, strata = %s, matrices = matrices, goal = %s%s)",
            report_deparse(x$keys), report_deparse(x$vars), report_deparse(if (length(x$strata)) x$strata else NULL),
            report_deparse(x$certificate$goal),
            paste0(paste0(",\n  ", report_population_args(x$certificate)), collapse = "")))
}

# The code of a protected table: cell_sensitivity() with the table's `by`,
# `value` and every rule with its parameters (issue 37: the report printed
# `rules = ...`), then protect_table().
report_code_table <- function(x, sensitivity = NULL) {
  rules <- attr(sensitivity, "rules") %||% attr(x, "rules")
  rules_code <- if (is.null(rules)) {
    "...  # the rules the table was made with"
  } else {
    paste0("list(", paste(vapply(rules, report_rule_call, ""), collapse = ", "), ")")
  }
  stats <- attr(x, "stats")
  c(sprintf("sens <- sdcRisk::cell_sensitivity(data, by = %s, value = %s,\n  rules = %s%s)",
            report_deparse(attr(x, "by")), report_deparse(attr(x, "value")), rules_code,
            report_sensitivity_options(attr(sensitivity, "options"))),
    sprintf("prot <- sdcRisk::protect_table(sens, cost = %s, method = %s)",
            report_deparse(attr(x, "cost") %||% "value"), report_deparse(stats$method %||% "heuristic")))
}

# The options of cell_sensitivity() that differ from its defaults, as
# arguments (none when the sensitivity table is not at hand).
report_sensitivity_options <- function(opts) {
  if (is.null(opts)) return("")
  defaults <- list(negative = "error", weights_known = TRUE, na = "error", total_label = "Total")
  given <- c(Filter(is.character, opts[c("contributor", "weight", "waiver", "lower", "upper")]),
             Filter(Negate(is.null), Map(function(v, d) if (!identical(v, d)) v, opts[names(defaults)], defaults)))
  out <- paste0(vapply(names(given), function(a) paste0(",\n  ", a, " = ", report_deparse(given[[a]])), ""), collapse = "")
  if (!is.null(opts$hierarchy)) out <- paste0(out, ",\n  hierarchy = HIERARCHY  # the hierarchy the table was made with")
  out
}

# A rule as the call of its constructor with every parameter it takes.
report_rule_call <- function(rule) {
  ctor <- paste0("rule_", rule$type)
  args <- rule$params[intersect(names(formals(getExportedValue("sdcRisk", ctor))), names(rule$params))]
  args <- vapply(names(args), function(a) paste0(a, " = ", report_deparse(args[[a]])), "")
  paste0(ctor, "(", paste(args, collapse = ", "), ")")
}

# ---- the publication --------------------------------------------------------

# What is published for the data users beside the released file: the
# report's section and, when the user named a file in `publication`, the
# file publish_plan() writes: first to `tmp`, which report_render() copies
# to `file` once the report that reviews it is written. Without
# `publication` nothing is written, and a release publish_plan() refuses
# is still reported (the section says why).
report_publication <- function(x, publication, file, name, call = rlang::caller_env()) {
  if (is.null(publication)) {
    pub <- tryCatch(publish_plan(x), sdcRisk_error = function(e) e)
    return(list(section = report_publication_section(pub, name, NULL)))
  }
  ok <- is.character(publication) && length(publication) == 1L && !is.na(publication) &&
    grepl("[.](json|rds)$", publication, ignore.case = TRUE)
  if (!ok || identical(normalizePath(publication, mustWork = FALSE), normalizePath(file, mustWork = FALSE))) {
    abort_sdc(c("{.arg publication} must be {.code NULL} or one path ending in {.file .json} or {.file .rds}, other than {.arg file}.",
                "x" = "It is {show_value(publication)}."), "argument", call = call, arg = "publication")
  }
  tmp <- tempfile("sdcRisk-publication-", fileext = tolower(sub(".*([.][^.]+)$", "\\1", publication)))
  pub <- publish_plan(x, tmp)
  written <- list(file = basename(publication), md5 = unname(tools::md5sum(tmp)))
  list(section = report_publication_section(pub, name, written), tmp = tmp, file = publication)
}

# The section: what publish_plan() of the release holds, why publishing it
# keeps the certificate and what it reveals, the agency's code (unless the
# file was `written`) and the data user's; or why there is no publication.
report_publication_section <- function(pub, name, written) {
  title <- "Publication for data users"
  if (inherits(pub, "error")) {
    return(report_section(title,
      report_text("**No publication can be made of this release**: `publish_plan()` refused it (below), so the users of the released file cannot compute estimates corrected for the perturbation with `estimate_table()` or `estimate_glm()`."),
      report_code(cli::ansi_strip(conditionMessage(pub)), lang = "")
    ))
  }
  json <- written$file %||% "publication.json"
  report_section(title,
    report_text(c(
      "Beside the released file, the agency publishes the plan of the release (`publish_plan()`, `?publish_plan`), so that its users can compute estimates corrected for the perturbation, with their standard errors (`estimate_table()`, `estimate_glm()`). It holds the keys and their categories (below), the released count of every category of every key (to recognise the file), and:",
      report_publication_plan_text(pub),
      sprintf("Not published: the seed, the original cell of any record%s and everything else the release object holds.",
              if (pub$kind == "blocks") ", the cells outside the blocks" else ""),
      "Publishing it keeps the certificate: the certificate bounds the probability of a correct match given the original frequencies, which holds even for an intruder who knows them (Nayak, Zhang and You 2016, below eq. 2.8), and every published field is a function of those frequencies and the transition probabilities, or can be read in the released file.",
      report_publication_reveals(pub),
      if (is.null(written)) {
        sprintf("This report wrote no publication: the agency writes it with the code below (or `release_report(..., publication = \"%s\")`) and publishes it beside the released file.", json)
      } else {
        sprintf("Written with this report: **`%s`** (MD5 `%s`), the file to publish beside the released file.", written$file, written$md5)
      }
    )),
    report_table(report_publication_keys(pub), "The keys as published: their categories, and whether the release perturbed them."),
    if (is.null(written)) report_code(c("library(sdcRisk)", sprintf("publish_plan(%s, %s)", name, report_deparse(json))), lang = "{.r .publication}"),
    report_text("A data user reads it with the released file, and gets estimates with standard errors:"),
    report_code(report_publication_user_code(pub, json), lang = "{.r .publication}")
  )
}

# The plan and the certificate as published, as a markdown list (names in
# code spans, as everywhere in the report).
report_publication_plan_text <- function(pub) {
  p <- pub$plan
  cert <- pub$certificate
  plan <- if (pub$kind == "blocks") {
    ifpr <- !is.na(p$theta)
    sprintf("- a block plan: %s blocks over %s cells (%s records), %s of them IFPR blocks with their theta%s, %s with a transition matrix;",
            report_num(length(p$theta)), report_num(sum(p$size)), report_num(sum(p$cells$count)), report_num(sum(ifpr)),
            if (any(ifpr)) sprintf(" (%s to %s)", format(signif(min(p$theta[ifpr]), 4)), format(signif(max(p$theta[ifpr]), 4))) else "",
            report_num(sum(!ifpr)))
  } else {
    sprintf("- a per-variable plan: %s perturbed%s, with one transition matrix per perturbed key%s;", report_list(p$vars),
            if (length(p$strata)) sprintf(" within %s strata of %s", report_num(length(p$strata_cells$records)), report_list(p$strata)) else "",
            if (length(p$strata)) " and stratum" else "")
  }
  paste0(plan, "\n", sprintf("- the certificate: goal `%s`%s, maximum risk %s (as certified above).", cert$goal,
                             if (!is.na(cert$xi)) sprintf(", xi = %s", format(cert$xi)) else "", format(signif(cert$risk, 10))))
}

# What the publication tells beyond the released file (?publish_plan,
# "Why publishing keeps the certificate").
report_publication_reveals <- function(pub) {
  if (pub$kind == "vars") {
    return("It publishes no cell count: the matrices, and the strata (combinations of keys that are not perturbed) with their numbers of records, which can be counted in the released file.")
  }
  count <- pub$plan$cells$count
  sprintf("What it reveals: the original count of each of its %s block cells (IFPR's transition probabilities are made of them), so it tells anyone that each of these combinations of keys occurs in the original data; %s of them hold exactly one record. An agency that must also hide whether a combination occurs at all (response knowledge) should weigh this before publishing.",
          report_num(length(count)), report_num(sum(count == 1)))
}

report_publication_keys <- function(pub) {
  shown <- function(x) {
    x[is.na(x)] <- "NA"
    if (length(x) > 12L) paste(c(utils::head(x, 12L), "..."), collapse = ", ") else paste(x, collapse = ", ")
  }
  data.frame(
    key = vapply(pub$keys, `[[`, "", "name"),
    type = vapply(pub$keys, `[[`, "", "type"),
    perturbed = ifelse(vapply(pub$keys, `[[`, TRUE, "perturbed"), "yes", "no"),
    categories = vapply(pub$keys, function(k) length(k$categories), 1L),
    values = vapply(pub$keys, function(k) shown(k$categories), ""),
    row.names = NULL
  )
}

# The data user's code: the released CSV and the publication, and a table
# of the first two keys (a perturbed one first).
report_publication_user_code <- function(pub, json) {
  keys <- vapply(pub$keys, `[[`, "", "name")
  perturbed <- vapply(pub$keys, `[[`, TRUE, "perturbed")
  by <- utils::head(unique(c(keys[perturbed][1], keys)), 2L)
  c("library(sdcRisk)",
    "released <- read.csv(\"released.csv\")  # the released file",
    sprintf("publication <- read_plan(%s)", report_deparse(json)),
    "# counts corrected for the perturbation, with standard errors; see ?estimate_table for",
    "# totals, means and proportions of other variables, and ?estimate_glm for models",
    sprintf("estimate_table(released, publication, by = %s)", report_deparse(by)))
}

# ---- rendering --------------------------------------------------------------

report_render <- function(sections, file, title, pub = NULL, call = rlang::caller_env()) {
  for (pkg in c("rmarkdown", "knitr")) {
    if (!requireNamespace(pkg, quietly = TRUE)) {
      abort_sdc(c(
        "{.fn release_report} needs the package {.pkg {pkg}}.",
        "i" = "Install it with {.code install.packages(\"{pkg}\")} (Debian: {.code apt-get install r-cran-{tolower(pkg)}})."
      ), "missing_package", call = call)
    }
  }
  if (!rmarkdown::pandoc_available("1.12.3")) {
    abort_sdc(c(
      "{.fn release_report} needs pandoc to write HTML.",
      "i" = "Install it (Debian: {.code apt-get install pandoc})."
    ), "missing_package", call = call)
  }
  report_step("Drawing the plots and writing the HTML (pandoc)", .envir = parent.frame())
  work <- tempfile("sdcRisk-report-")
  dir.create(work)
  on.exit(unlink(work, recursive = TRUE), add = TRUE)
  template <- system.file("report", "release-report.Rmd", package = "sdcRisk", mustWork = TRUE)
  rmd <- file.path(work, "release-report.Rmd")
  file.copy(template, rmd)
  out <- rmarkdown::render(rmd, output_file = "report.html", output_dir = work, intermediates_dir = work,
                           params = list(title = title, sections = sections),
                           envir = new.env(parent = globalenv()), quiet = TRUE)
  # written in full before it replaces anything the user named
  if (!file.copy(out, file, overwrite = TRUE)) {
    abort_sdc("Cannot write the report to {.file {file}}.", "argument", call = call, arg = "file")
  }
  # the publication the user named, once the report that reviews it is there
  if (!is.null(pub$tmp) && !file.copy(pub$tmp, pub$file, overwrite = TRUE)) {
    abort_sdc("Cannot write the publication to {.file {pub$file}}.", "argument", call = call, arg = "publication")
  }
  invisible(normalizePath(file))
}

# A progress step (a cli message: suppressMessages() silences it), in the
# frame of the method, so that each step ends the one before.
report_step <- function(msg, .envir = parent.frame()) {
  cli::cli_progress_step(msg, .envir = .envir)
}

# Called by the template: one section's blocks as markdown and HTML.
report_emit <- function(section) {
  cat("\n\n## ", section$title, "\n\n", sep = "")
  for (b in section$blocks) {
    switch(b$type,
      text = cat(b$text, "\n\n", sep = ""),
      table = cat(report_raw_html(report_html_table(b$data, b$caption)), sep = ""),
      plot = cat(report_raw_html(report_plot_html(b)), sep = ""),
      code = cat("```", b$lang, "\n", b$code, "\n```\n\n", sep = "")
    )
  }
  invisible()
}

report_html_table <- function(data, caption) {
  if (nrow(data) == 0L) return(paste0("<p><em>", report_caption(caption), " (none)</em></p>"))
  shown <- utils::head(data, 200L)
  cols <- lapply(shown, function(col) {
    if (is.numeric(col)) {
      out <- ifelse(is.na(col), "NA", ifelse(col == round(col) & abs(col) < 1e15,
                                            formatC(col, format = "d", big.mark = ","),
                                            format(signif(col, 6), scientific = FALSE, drop0trailing = TRUE, trim = TRUE)))
      out[is.na(col)] <- "NA"
      out
    } else {
      ifelse(is.na(col), "NA", as.character(col))
    }
  })
  num <- vapply(shown, is.numeric, logical(1))
  head <- paste0("<th", ifelse(num, ' style="text-align:right"', ""), ">", report_escape(names(shown)), "</th>", collapse = "")
  rows <- vapply(seq_len(nrow(shown)), function(i) {
    paste0("<tr>", paste0("<td", ifelse(num, ' style="text-align:right"', ""), ">",
                          report_escape(vapply(cols, `[`, "", i)), "</td>", collapse = ""), "</tr>")
  }, "")
  more <- if (nrow(data) > nrow(shown)) sprintf("<p><em>First %s of %s rows.</em></p>", nrow(shown), report_num(nrow(data))) else ""
  paste0('<table class="table table-sm table-striped"><caption>', report_caption(caption), "</caption><thead><tr>",
         head, "</tr></thead><tbody>", paste(rows, collapse = ""), "</tbody></table>", more)
}

# HTML that pandoc passes through without parsing it as markdown (captions'
# `code` is made HTML by report_caption()): parsing the tables as markdown
# took pandoc 35 to 40 s of a report on pums_md, and under a second now
# (issue 37).
report_raw_html <- function(html) paste0("\n```{=html}\n", html, "\n```\n\n")

# A caption: escaped, with markdown's `code` as <code> (the raw HTML is not
# read as markdown).
report_caption <- function(x) gsub("`([^`]*)`", "<code>\\1</code>", report_escape(x))

report_escape <- function(x) {
  x <- gsub("&", "&amp;", x, fixed = TRUE)
  x <- gsub("<", "&lt;", x, fixed = TRUE)
  gsub(">", "&gt;", x, fixed = TRUE)
}

# The plot as a PNG file beside the document (knitr renders in its
# directory), which pandoc embeds when it makes the file self-contained.
report_plot_html <- function(b) {
  png_file <- basename(tempfile("figure-", tmpdir = ".", fileext = ".png"))
  grDevices::png(png_file, width = b$width, height = b$height, units = "in", res = 96)
  ok <- tryCatch({
    suppressWarnings(b$fun())
    TRUE
  }, error = function(e) conditionMessage(e), finally = grDevices::dev.off())
  if (!isTRUE(ok)) return(paste0("<p><em>Plot not drawn: ", report_escape(ok), "</em></p>"))
  paste0('<figure><img alt="', report_escape(b$caption), '" src="', png_file,
         '" style="max-width:100%"><figcaption>', report_caption(b$caption), "</figcaption></figure>")
}
