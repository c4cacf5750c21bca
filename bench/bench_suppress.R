# Head to head, secondary cell suppression: protect_table() beside
# GaussSuppression::SuppressDominantCells() with and without interval
# protection, and sdcTable::protectTable() (SIMPLEHEURISTIC and GAUSS), on
# the same tables under the p% rule (p = 10, records as contributors):
#   1-7  synthetic 2- and 3-way tables with margins of 10^5 and 10^6
#        records, one hierarchical (both classifications grouped), up to
#        106,636 cells;
#   R1-R4 real tables from the 2019 ACS excerpt (../shared/data/acs2019,
#        personal income by sex, age group, race group, education group
#        and PUMA; 58 to 700 cells), small enough for the true optimum;
#   L    linked tables: a x b and a x c of table 1's records, protected
#        together (protect_tables() against SuppressLinkedTables()).
# For every tool: primary and secondary suppressions, suppressed total
# value, seconds, and our exact audit (audit_table()) of its pattern, twice:
# against the outside attacker (attacker = "outsider": are all sensitive
# cells protected, with the protection levels of ?audit_table, the p% rule's
# upper protection level on both sides, the same as GaussSuppression's
# protectionIntervals = TRUE?) and against the table's own respondents
# (attacker = "respondents": a contributor knows its own contributions, the
# only contributor of a cell knows the cell). sdcRisk's rows: the default
# protect_table() (safe from both) and protect_table(attacker = "outsider").
# GaussSuppression runs with SuppressDominantCells()'s own singleton
# handling (its dominanceSpec: singleton = SingletonUniqueContributor,
# singletonMethod = "numttHTT"), in its default mode and in interval mode.
#   Rscript bench/bench_suppress.R        (writes bench/results-suppress.md,
#                                          or SDCRISK_BENCH_OUT)
# Bench-only packages (never dependencies of sdcRisk): GaussSuppression,
# SSBtools, lpSolve (Debian r-cran-lpsolve), sdcTable, sdcHierarchies;
# installed if missing into SDCRISK_BENCH_LIB when set. sdcRisk is loaded
# from SDCRISK_BENCH_LIB too (R CMD INSTALL -l it there) or with pkgload.
# SDCRISK_BENCH_TABLES selects tables (default all: 1,...,7,R1,...,R4,L);
# SDCRISK_BENCH_LIMIT stops the other tools after that many seconds
# (default 120, R's elapsed-time limit); sdcRisk runs to the end, its
# optimal method with time_limit = SDCRISK_BENCH_OPT_LIMIT (default the same) on tables of at most
# SDCRISK_BENCH_OPT_CELLS cells (default 1,000). With SDCRISK_BENCH_ABLATION
# = "true", the runs without the improvement and without the clean-up pass
# too, on tables of at most 3,500 cells (where cleanup = "auto" and
# improve = "auto" act).
# The machine is shared: elapsed seconds are reported with the CPU seconds
# of the R process beside them (children excluded), so that a loaded run
# can be read.

lib <- Sys.getenv("SDCRISK_BENCH_LIB", "")
if (nzchar(lib)) .libPaths(c(lib, .libPaths()))
need <- c("sdcTable", "GaussSuppression", "sdcHierarchies", "lpSolve")
miss <- need[!vapply(need, requireNamespace, logical(1), quietly = TRUE)]
if (length(miss) && Sys.getenv("SDCRISK_BENCH_NO_INSTALL") == "") {
  install.packages(miss, lib = if (nzchar(lib)) lib else .libPaths()[1], Ncpus = 1L)
}
if (nzchar(lib) && dir.exists(file.path(lib, "sdcRisk"))) {
  suppressPackageStartupMessages(library(sdcRisk, lib.loc = lib))
} else {
  pkgload::load_all(".", quiet = TRUE)
}
source(file.path("bench", "utils.R"))
limit <- as.numeric(Sys.getenv("SDCRISK_BENCH_LIMIT", "120"))
opt_cells <- as.numeric(Sys.getenv("SDCRISK_BENCH_OPT_CELLS", "1000"))
opt_limit <- as.numeric(Sys.getenv("SDCRISK_BENCH_OPT_LIMIT", limit))
# SDCRISK_BENCH_TOOLS: a regular expression; only the other tools whose row
# name matches it are run (default all); SDCRISK_BENCH_SDCRISK = "false"
# leaves out sdcRisk's rows (a second run of one slow tool, say).
tools_re <- Sys.getenv("SDCRISK_BENCH_TOOLS", ".")
with_sdcrisk <- !identical(tolower(Sys.getenv("SDCRISK_BENCH_SDCRISK", "true")), "false")

# Sizes of the categories of `a` are skewed (some rare), so that even 10^6
# records leave sensitive cells; `a` groups into 20 groups of 10 (`ga`, also
# the third variable of the 3-way tables) and `b` into 3 for the hierarchical
# table.
make_tables <- function(n, seed = 3) {
  set.seed(seed)
  a <- sample(200, n, TRUE, prob = rgamma(200, 0.7))
  b <- sample(15, n, TRUE)
  data.frame(
    a = sprintf("A%03d", a), b = sprintf("B%02d", b), c = sprintf("C%02d", sample(8, n, TRUE)),
    ga = sprintf("GA%02d", (a - 1) %/% 10 + 1), gb = sprintf("GB%d", (b - 1) %/% 5 + 1),
    v = round(rlnorm(n, 6, 1.8))
  )
}

# Larger 3-way tables of uniform categories: the table of bench_versus.R
# (40 x 25 x 10, 11,724 cells with margins) and one of 106,636 cells
# (50 x 40 x 50).
make_cube <- function(n, sizes, seed) {
  set.seed(seed)
  data.frame(a = sprintf("A%02d", sample(sizes[1], n, TRUE)), b = sprintf("B%02d", sample(sizes[2], n, TRUE)),
             c = sprintf("C%02d", sample(sizes[3], n, TRUE)), v = round(rlnorm(n, 6, 1.8)))
}

# (the real tables' records: make_acs() of bench/utils.R)

specs <- list(
  "1" = list(n = 1e5, dims = c("a", "b")),
  "2" = list(n = 1e6, dims = c("a", "b")),
  "3" = list(n = 1e5, dims = c("b", "c", "ga")),
  "4" = list(n = 1e6, dims = c("b", "c", "ga")),
  "5" = list(n = 1e5, dims = c("a", "b"), hier = TRUE),
  "6" = list(n = 1e5, dims = c("a", "b", "c"), cube = c(40, 25, 10), seed = 3),
  "7" = list(n = 1e6, dims = c("a", "b", "c"), cube = c(50, 40, 50), seed = 4),
  R1 = list(acs = TRUE, dims = c("sex", "age", "race")),
  R2 = list(acs = TRUE, dims = c("age", "race", "edu")),
  R3 = list(acs = TRUE, dims = c("age", "race", "puma")),
  R4 = list(acs = TRUE, dims = c("sex", "age", "edu", "race")),
  L = list(n = 1e5, linked = list(c("a", "b"), c("a", "c")))
)
pick <- strsplit(Sys.getenv("SDCRISK_BENCH_TABLES", paste(names(specs), collapse = ",")), ",")[[1]]
specs <- specs[pick]
groups <- c(a = "ga", b = "gb")

cell_key <- function(df, dims) do.call(paste, c(lapply(dims, function(v) as.character(df[[v]])), sep = "|"))

hierarchy_of <- function(d, spec) {
  if (!isTRUE(spec$hier)) return(NULL)
  lapply(c(a = "a", b = "b"), function(v) {
    m <- unique(d[c(v, groups[[v]])])
    stats::setNames(m[[2]], m[[1]])
  })
}

# Each tool returns the suppressed cells as a data frame of labels (a list
# of them for linked tables).
sdcrisk_pattern <- function(p, dims) as.data.frame(p)[p$status != "published", dims, drop = FALSE]

run_gauss <- function(d, spec, intervals, lp = "lpSolve") {
  dv <- if (isTRUE(spec$hier)) c("a", "ga", "b", "gb") else spec$dims
  args <- list(d, numVar = "v", dimVar = dv, pPercent = 10, printInc = FALSE)
  if (intervals) args <- c(args, list(protectionIntervals = TRUE, lpPackage = lp))
  out <- as.data.frame(do.call(GaussSuppression::SuppressDominantCells, args))
  if (isTRUE(spec$hier)) {
    for (v in c("a", "b")) {
      g <- groups[[v]]
      if (g %in% names(out)) out[[v]] <- ifelse(out[[v]] == "Total" & out[[g]] != "Total", out[[g]], out[[v]])
    }
  }
  out[out$suppressed, spec$dims, drop = FALSE]
}

sdctable_dims <- function(d, spec) {
  out <- lapply(spec$dims, function(v) {
    if (isTRUE(spec$hier) && v %in% names(groups)) {
      m <- unique(d[c(v, groups[[v]])])
      h <- sdcHierarchies::hier_create(root = "Total", nodes = sort(unique(m[[2]])))
      for (g in sort(unique(m[[2]]))) h <- sdcHierarchies::hier_add(h, root = g, nodes = sort(m[[1]][m[[2]] == g]))
      h
    } else {
      sdcHierarchies::hier_create(root = "Total", nodes = sort(unique(d[[v]])))
    }
  })
  stats::setNames(out, spec$dims)
}

run_sdctable <- function(d, spec, method) {
  prob <- sdcTable::makeProblem(data = d[c(spec$dims, "v")], dimList = sdctable_dims(d, spec), numVarInd = "v")
  prob <- sdcTable::primarySuppression(prob, type = "p", p = 10, numVarName = "v")
  res <- sdcTable::protectTable(prob, method = method)
  fd <- as.data.frame(sdcTable::getInfo(res, type = "finalData"))
  fd[fd$sdcStatus %in% c("u", "x"), spec$dims]
}

# Runs `f` under R's elapsed-time limit (for the other tools); returns the
# result or the error, with elapsed and CPU seconds.
timed <- function(f, limit = Inf) {
  cpu0 <- sum(proc.time()[c("user.self", "sys.self")])
  t0 <- proc.time()[["elapsed"]]
  res <- tryCatch({
    setTimeLimit(elapsed = limit, transient = TRUE)
    on.exit(setTimeLimit(elapsed = Inf))
    f()
  }, error = function(e) e)
  setTimeLimit(elapsed = Inf)
  list(res = res, seconds = proc.time()[["elapsed"]] - t0,
       cpu = sum(proc.time()[c("user.self", "sys.self")]) - cpu0)
}

# Each row is also written to the log as it is made (a long run can be read
# before it ends).
emit <- function(row) {
  message("ROW\t", paste(vapply(row, function(z) as.character(z[1]), ""), collapse = "\t"))
  row
}

# `audit`: the outsider's audit text, `audit_resp` the respondents' (""
# when not audited).
row_of <- function(label, tool, run, supp = NULL, sens = NULL, audit = "", note = "", audit_resp = "") {
  emit(row_of_run(label, tool, run, supp, sens, audit, note, audit_resp))
}

row_of_run <- function(label, tool, run, supp, sens, audit, note, audit_resp = "") {
  if (inherits(run$res, "error")) {
    return(data.frame(table = label, tool = tool, suppressed = NA, secondary = NA, value_pct = NA,
                      seconds = run$seconds, cpu = run$cpu,
                      audit_outsider = paste("no pattern:", conditionMessage(run$res)),
                      audit_respondents = "", note = note))
  }
  data.frame(table = label, tool = tool, suppressed = sum(supp), secondary = sum(supp & !sens$sensitive),
             value_pct = 100 * sum(abs(sens$total[supp])) / sum(abs(sens$total)),
             seconds = run$seconds, cpu = run$cpu, audit_outsider = audit %||% "",
             audit_respondents = audit_resp %||% "", note = note)
}

`%||%` <- function(a, b) if (is.null(a)) b else a

audit_text <- function(aud) {
  auds <- if (inherits(aud, "sdc_audit_set")) aud else list(aud)
  prot <- unlist(lapply(auds, function(a) a$protected[a$sensitive]))
  pairs <- sum(vapply(auds, function(a) NROW(attr(a, "breaches")), integer(1)))
  sprintf("%s: %d of %d sensitive cells protected%s", if (isTRUE(attr(aud, "passed"))) "passes" else "FAILS",
          sum(prot), length(prot),
          if (pairs) sprintf(" (%d respondent-cell pairs break)", pairs) else "")
}

# sdcRisk's rows of one table: the default pattern (safe from the outsider
# and the respondents; the outsider's part proved by its witness tables),
# its exact certificate (outsider and respondents), the outsider's pattern,
# (SDCRISK_BENCH_ABLATION) the pattern without improvement and without
# clean-up, and the optimal one. `audit_of(supp)` returns both audits' texts.
sdcrisk_rows <- function(sens, spec, label, big, audit_of) {
  rows <- list()
  add <- function(tool, r, supp, a = NULL, note = "", aud = NULL) {
    if (is.null(aud) && !is.null(supp) && !inherits(r$res, "error") && !big) aud <- audit_of(supp)
    rows[[length(rows) + 1]] <<- row_of(label, tool, r, supp, sens, aud$outsider %||% a %||% "", note,
                                        aud$respondents %||% "")
  }
  message("  sdcRisk")
  # the default intervals (every suppressed cell's exact interval, whose
  # final audit lets the respondents' clean-up publish every secondary cell
  # it can) on tables of up to 50,000 cells; above, intervals = "none"
  # (the outsider's audit by the witness tables, whose cells then stay)
  ivl <- if (big) "none" else "suppressed"
  r <- timed(function() protect_table(sens, intervals = ivl))
  supp <- r$res$status != "published"
  add(sprintf("sdcRisk protect_table(%s) (attacker = \"respondents\", the default)",
              if (big) "intervals = \"none\"" else ""), r, supp, a = "proved by its witness tables")
  r <- timed(function() {
    list(out = audit_table(sens, supp, attacker = "outsider"), resp = audit_table(sens, supp))
  })
  add("sdcRisk exact certificate: audit_table() of that pattern", r, supp,
      aud = if (!inherits(r$res, "error")) list(outsider = audit_text(r$res$out),
                                                respondents = audit_text(r$res$resp)),
      note = "every suppressed cell's exact interval; both attackers")
  r <- timed(function() protect_table(sens, intervals = ivl, attacker = "outsider"))
  add(sprintf("sdcRisk protect_table(%sattacker = \"outsider\")", if (big) "intervals = \"none\", " else ""),
      r, r$res$status != "published",
      a = "proved by its witness tables")
  if (nrow(sens) <= 3500 && identical(Sys.getenv("SDCRISK_BENCH_ABLATION"), "true")) {
    # (cleanup = "auto" and improve = "auto" act on tables of at most 3,500
    # cells only)
    r <- timed(function() protect_table(sens, intervals = "none", cleanup = TRUE, improve = FALSE))
    add("sdcRisk protect_table(improve = FALSE)", r, r$res$status != "published", note = "clean-up, no improvement")
    r <- timed(function() protect_table(sens, intervals = "none", cleanup = FALSE, improve = FALSE))
    add("sdcRisk protect_table(cleanup = FALSE, improve = FALSE)", r, r$res$status != "published",
        note = "the heuristic alone")
  }
  if (nrow(sens) <= opt_cells) {
    for (att in c("outsider", "respondents")) {
      r <- timed(function() protect_table(sens, method = "optimal", time_limit = opt_limit, attacker = att))
      st <- attr(r$res, "stats")
      # the proved lower bound is on the cost of the secondary cells (the
      # sensitive ones are suppressed in every pattern), against the same
      # attacker as the pattern
      lb <- 100 * (st$lower_bound + sum(abs(sens$total[sens$sensitive]))) / sum(abs(sens$total))
      add(sprintf("sdcRisk protect_table(method = \"optimal\", attacker = \"%s\")", att), r,
          r$res$status != "published",
          note = if (isTRUE(st$optimal)) "optimal (proved)" else
            sprintf("not proved in %g s; no pattern below %.4f%% of the value", opt_limit, lb))
    }
  }
  rows
}

bench_table <- function(id, spec) {
  d <- if (isTRUE(spec$acs)) make_acs() else if (is.null(spec$cube)) make_tables(spec$n) else
    make_cube(spec$n, spec$cube, spec$seed)
  sens <- cell_sensitivity(d, spec$dims, "v", rule_p(10), hierarchy = hierarchy_of(d, spec))
  label <- sprintf("%s: %s%d-way, %s cells, %d sensitive", id, if (isTRUE(spec$hier)) "hierarchical " else "",
                   length(spec$dims), format(nrow(sens), big.mark = ","), sum(sens$sensitive))
  message(label)
  rows <- list()
  big <- nrow(sens) > 50000
  audit_of <- function(supp) {
    list(outsider = audit_text(audit_table(sens, supp, intervals = "none", attacker = "outsider")),
         respondents = audit_text(audit_table(sens, supp, intervals = "none", attacker = "respondents")))
  }
  supp_of <- function(pattern) cell_key(as.data.frame(sens), spec$dims) %in% cell_key(pattern, spec$dims)
  # sdcRisk: the pattern (proved by witness tables), then the exact certificate
  if (with_sdcrisk) rows <- sdcrisk_rows(sens, spec, label, big, audit_of)
  others <- list(
    "GaussSuppression, default (exact disclosure)" = function() run_gauss(d, spec, FALSE),
    "GaussSuppression, protectionIntervals (lpSolve)" = function() run_gauss(d, spec, TRUE, "lpSolve"),
    "sdcTable SIMPLEHEURISTIC" = function() run_sdctable(d, spec, "SIMPLEHEURISTIC"),
    "sdcTable GAUSS" = function() run_sdctable(d, spec, "GAUSS")
  )
  if (requireNamespace("highs", quietly = TRUE)) {
    others <- append(others, list("GaussSuppression, protectionIntervals (highs)" =
                                    function() run_gauss(d, spec, TRUE, "highs")), 2)
  }
  if (nrow(sens) > 20000) others <- others[!startsWith(names(others), "sdcTable")]
  others <- others[grepl(tools_re, names(others))]
  for (tool in names(others)) {
    message("  ", tool)
    r <- timed(others[[tool]], limit)
    s2 <- if (!inherits(r$res, "error")) supp_of(r$res)
    aud <- if (!is.null(s2) && !big) audit_of(s2) else if (!is.null(s2)) list(outsider = "not audited")
    rows[[length(rows) + 1]] <- row_of(label, tool, r, s2, sens, aud$outsider, audit_resp = aud$respondents)
    if (grepl("protectionIntervals \\(lpSolve\\)", tool) && !is.null(s2)) {
      # GaussSuppression's interval pattern, kept for the value comparison
      # and the test fixture (SDCRISK_BENCH_PATTERNS: a directory)
      pdir <- Sys.getenv("SDCRISK_BENCH_PATTERNS", "")
      if (nzchar(pdir)) saveRDS(r$res, file.path(pdir, sprintf("gauss-interval-%s.rds", id)))
    }
  }
  do.call(rbind, rows)
}

bench_linked <- function(id, spec) {
  d <- make_tables(spec$n)
  tabs <- lapply(spec$linked, function(dims) cell_sensitivity(d, dims, "v", rule_p(10)))
  ncell <- sum(vapply(tabs, nrow, integer(1)))
  label <- sprintf("%s: linked a x b and a x c, %s cells, %d sensitive", id, format(ncell, big.mark = ","),
                   sum(vapply(tabs, function(x) sum(x$sensitive), integer(1))))
  message(label)
  value <- function(supps) {
    # distinct cells: the union of both tables, shared cells once
    keys <- unlist(lapply(tabs, sdcRisk:::linked_keys))
    tot <- unlist(lapply(tabs, function(x) x$total))
    s <- unlist(supps)
    100 * sum(abs(tot[!duplicated(keys) & keys %in% keys[s]])) / sum(abs(tot[!duplicated(keys)]))
  }
  row <- function(tool, r, supps) emit(linked_row(tool, r, supps))
  linked_row <- function(tool, r, supps) {
    if (inherits(r$res, "error")) {
      return(data.frame(table = label, tool = tool, suppressed = NA, secondary = NA, value_pct = NA,
                        seconds = r$seconds, cpu = r$cpu,
                        audit_outsider = paste("no pattern:", conditionMessage(r$res)),
                        audit_respondents = "", note = ""))
    }
    sens <- unlist(lapply(tabs, function(x) x$sensitive))
    aud <- audit_tables(tabs, supps, intervals = "none", attacker = "outsider")
    aud_r <- audit_tables(tabs, supps, intervals = "none", attacker = "respondents")
    data.frame(table = label, tool = tool, suppressed = sum(unlist(supps)),
               secondary = sum(unlist(supps) & !sens), value_pct = value(supps),
               seconds = r$seconds, cpu = r$cpu, audit_outsider = audit_text(aud),
               audit_respondents = audit_text(aud_r), note = "counts per table, summed")
  }
  rows <- list()
  if (with_sdcrisk) {
    r <- timed(function() protect_tables(tabs))
    rows[[1]] <- row("sdcRisk protect_tables()", r, lapply(r$res, function(p) p$status != "published"))
    r <- timed(function() protect_tables(tabs, attacker = "outsider"))
    rows[[length(rows) + 1]] <- row("sdcRisk protect_tables(attacker = \"outsider\")", r,
                                    lapply(r$res, function(p) p$status != "published"))
    alone <- timed(function() lapply(tabs, function(x) protect_table(x)))
    rows[[length(rows) + 1]] <- row("sdcRisk protect_table() on each table alone", alone,
                                    lapply(alone$res, function(p) p$status != "published"))
  }
  for (ivl in c(FALSE, TRUE)) {
    tool <- sprintf("GaussSuppression SuppressLinkedTables(\"super-consistent\")%s",
                    if (ivl) ", protectionIntervals (lpSolve)" else "")
    message("  ", tool)
    r <- timed(function() {
      args <- list(data = d, fun = GaussSuppression::SuppressDominantCells, numVar = "v", pPercent = 10,
                   withinArg = lapply(spec$linked, function(dims) list(dimVar = dims)),
                   linkedGauss = "super-consistent", printInc = FALSE)
      if (ivl) args <- c(args, list(protectionIntervals = TRUE, lpPackage = "lpSolve"))
      do.call(GaussSuppression::SuppressLinkedTables, args)
    }, limit)
    supps <- if (!inherits(r$res, "error")) lapply(seq_along(tabs), function(k) {
      out <- as.data.frame(r$res[[k]])
      cell_key(as.data.frame(tabs[[k]]), spec$linked[[k]]) %in% cell_key(out[out$suppressed, ], spec$linked[[k]])
    })
    rows[[length(rows) + 1]] <- row(tool, r, supps)
  }
  do.call(rbind, rows)
}

rows <- lapply(names(specs), function(id) {
  if (!is.null(specs[[id]]$linked)) bench_linked(id, specs[[id]]) else bench_table(id, specs[[id]])
})
tab <- do.call(rbind, rows)
ver <- function(p) if (requireNamespace(p, quietly = TRUE)) as.character(packageVersion(p)) else "(not installed)"
header <- c(
  machine_line(sprintf("sdcRisk %s, highs %s, sdcTable %s, GaussSuppression %s, SSBtools %s, lpSolve %s",
                       ver("sdcRisk"), ver("highs"), ver("sdcTable"), ver("GaussSuppression"),
                       ver("SSBtools"), ver("lpSolve"))),
  sprintf(paste("One run per tool and table; other tools stopped at %g s (R's elapsed-time limit); seconds elapsed,",
                "cpu = CPU seconds of the R process; value %% = suppressed share of the sum of all cells (margins",
                "included); audit outsider / respondents = sdcRisk's audit_table(attacker = \"outsider\") and",
                "audit_table(attacker = \"respondents\") of the tool's pattern against the p%% rule's protection levels.",
                "GaussSuppression with SuppressDominantCells()' own singleton handling (singletonMethod = \"numttHTT\")."),
          limit),
  ""
)
write_results(tab, header, Sys.getenv("SDCRISK_BENCH_OUT", file.path("bench", "results-suppress.md")),
              digits = c(seconds = 2, cpu = 2, value_pct = 3))
