# Head to head, secondary cell suppression: protect_table() beside
# sdcTable::protectTable() (SIMPLEHEURISTIC and GAUSS) and
# GaussSuppression::SuppressDominantCells() on the same tables (the p% rule,
# p = 10, records as contributors): 2- and 3-way tables with margins of 10^5
# and 10^6 records, and a hierarchical one (both classifications grouped one
# level up). For every tool: primary and secondary suppressions, suppressed
# total value, seconds, and our exact audit (audit_table()) of its pattern:
# are all sensitive cells protected, with the protection levels of
# ?audit_table (the p% rule's upper protection level on both sides)?
#   Rscript bench/bench_suppress.R        (writes bench/results-suppress.md,
#                                          or SDCRISK_BENCH_OUT)
# sdcTable and GaussSuppression are installed if missing, into
# SDCRISK_BENCH_LIB when set (they are never dependencies of sdcRisk).
# SDCRISK_BENCH_TABLES selects tables by number (default all: 1,...,7);
# SDCRISK_BENCH_LIMIT stops sdcTable and GaussSuppression after that many
# seconds (default 120); sdcRisk runs to the end.
# sdcRisk runs three times: protect_table(intervals = "none") (the pattern,
# proved by its witness tables), the same with a smaller search box (box =
# 500: faster, more suppression), and the default intervals = "suppressed"
# (the exact interval of every suppressed cell), the latter on tables of at
# most SDCRISK_BENCH_CERT_CELLS cells (default 20,000).

lib <- Sys.getenv("SDCRISK_BENCH_LIB", "")
if (nzchar(lib)) .libPaths(c(lib, .libPaths()))
need <- c("sdcTable", "GaussSuppression", "sdcHierarchies")
miss <- need[!vapply(need, requireNamespace, logical(1), quietly = TRUE)]
if (length(miss) && Sys.getenv("SDCRISK_BENCH_NO_INSTALL") == "") {
  install.packages(miss, lib = if (nzchar(lib)) lib else .libPaths()[1], Ncpus = 1L)
}
suppressPackageStartupMessages(library(sdcRisk))
source(file.path("bench", "utils.R"))

# Sizes of the categories of `a` are skewed (some rare), so that even 10^6
# records leave sensitive cells; `a` groups into 20 groups of 10 (`ga`, also
# the third variable of the 3-way tables) and `b` into 3 for the hierarchical
# table. Tables: 2-way a x b (200 x 15), 3-way b x c x ga (15 x 8 x 20), and
# the hierarchical a x b with both groupings.
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

specs <- list(
  list(n = 1e5, dims = c("a", "b"), hier = FALSE),
  list(n = 1e6, dims = c("a", "b"), hier = FALSE),
  list(n = 1e5, dims = c("b", "c", "ga"), hier = FALSE),
  list(n = 1e6, dims = c("b", "c", "ga"), hier = FALSE),
  list(n = 1e5, dims = c("a", "b"), hier = TRUE),
  list(n = 1e5, dims = c("a", "b", "c"), hier = FALSE, cube = c(40, 25, 10), seed = 3),
  list(n = 1e6, dims = c("a", "b", "c"), hier = FALSE, cube = c(50, 40, 50), seed = 4)
)
pick <- as.integer(strsplit(Sys.getenv("SDCRISK_BENCH_TABLES", "1,2,3,4,5,6,7"), ",")[[1]])
specs <- specs[pick]
groups <- c(a = "ga", b = "gb")

# key of a cell from its labels, totals as "Total"
cell_key <- function(df, dims) {
  do.call(paste, c(lapply(dims, function(v) as.character(df[[v]])), sep = "|"))
}

# every tool's run returns the suppressed cells as a data frame of labels
run_sdcrisk <- function(d, spec, intervals = "none", box = 2000) {
  hier <- if (spec$hier) lapply(c(a = "a", b = "b"), function(v) {
    m <- unique(d[c(v, groups[[v]])])
    stats::setNames(m[[2]], m[[1]])
  })
  s <- cell_sensitivity(d, spec$dims, "v", rule_p(10), hierarchy = hier)
  p <- protect_table(s, intervals = intervals, box = box)
  as.data.frame(p)[p$status != "published", spec$dims]
}

sdctable_dims <- function(d, spec) {
  out <- lapply(spec$dims, function(v) {
    if (spec$hier && v %in% names(groups)) {
      m <- unique(d[c(v, groups[[v]])])
      h <- sdcHierarchies::hier_create(root = "Total", nodes = sort(unique(m[[2]])))
      for (g in sort(unique(m[[2]]))) {
        h <- sdcHierarchies::hier_add(h, root = g, nodes = sort(m[[1]][m[[2]] == g]))
      }
      h
    } else {
      sdcHierarchies::hier_create(root = "Total", nodes = sort(unique(d[[v]])))
    }
  })
  stats::setNames(out, spec$dims)
}

run_sdctable <- function(d, spec, method) {
  prob <- sdcTable::makeProblem(data = d[c(spec$dims, "v")], dimList = sdctable_dims(d, spec),
                                numVarInd = "v")
  prob <- sdcTable::primarySuppression(prob, type = "p", p = 10, numVarName = "v")
  res <- sdcTable::protectTable(prob, method = method)
  fd <- as.data.frame(sdcTable::getInfo(res, type = "finalData"))
  fd[fd$sdcStatus %in% c("u", "x"), spec$dims]
}

run_gauss <- function(d, spec) {
  dv <- if (spec$hier) c("a", "ga", "b", "gb") else spec$dims
  out <- GaussSuppression::SuppressDominantCells(d, numVar = "v", dimVar = dv, pPercent = 10,
                                                 printInc = FALSE)
  out <- as.data.frame(out)
  if (spec$hier) {
    # nested variables come back as one column per hierarchy, named by the
    # finest level, or one per variable: use whichever is there
    for (v in c("a", "b")) {
      g <- groups[[v]]
      if (g %in% names(out)) {
        out[[v]] <- ifelse(out[[v]] == "Total" & out[[g]] != "Total", out[[g]], out[[v]])
      }
    }
  }
  out[out$suppressed, spec$dims]
}

rows <- list()
for (k in seq_along(specs)) {
  spec <- specs[[k]]
  message("table ", pick[k])
  d <- if (is.null(spec$cube)) make_tables(spec$n) else make_cube(spec$n, spec$cube, spec$seed)
  hier <- if (spec$hier) lapply(c(a = "a", b = "b"), function(v) {
    m <- unique(d[c(v, groups[[v]])])
    stats::setNames(m[[2]], m[[1]])
  })
  sens <- cell_sensitivity(d, spec$dims, "v", rule_p(10), hierarchy = hier)
  label <- sprintf("%s%d-way, %d cells, %d sensitive", if (spec$hier) "hierarchical " else "",
                   length(spec$dims), nrow(sens), sum(sens$sensitive))
  cert <- nrow(sens) <= as.numeric(Sys.getenv("SDCRISK_BENCH_CERT_CELLS", "20000"))
  tools <- list(
    "sdcRisk protect_table()" = function() run_sdcrisk(d, spec),
    "sdcRisk protect_table(box = 500)" = function() run_sdcrisk(d, spec, box = 500),
    "sdcRisk protect_table(), exact intervals" = if (cert) function() run_sdcrisk(d, spec, "suppressed"),
    "sdcTable SIMPLEHEURISTIC" = function() run_sdctable(d, spec, "SIMPLEHEURISTIC"),
    "sdcTable GAUSS" = function() run_sdctable(d, spec, "GAUSS"),
    "GaussSuppression SuppressDominantCells()" = function() run_gauss(d, spec)
  )
  big <- nrow(sens) > as.numeric(Sys.getenv("SDCRISK_BENCH_AUDIT_CELLS", "20000"))
  if (big) {
    # sdcTable did not finish the 11,724-cell table in its time limit (its
    # heuristics do not stop at R's time limit), so it is not run here
    for (tool in c("sdcTable SIMPLEHEURISTIC", "sdcTable GAUSS")) {
      rows[[length(rows) + 1]] <- data.frame(records = format(spec$n, big.mark = ",", scientific = FALSE),
        table = label, tool = tool, suppressed = NA, secondary = NA, value_pct = NA, seconds = NA,
        audit = "not run: no pattern for the 11,724-cell table within the limit")
    }
    tools <- tools[!startsWith(names(tools), "sdcTable")]
  }
  tools <- tools[!vapply(tools, is.null, logical(1))]
  for (tool in names(tools)) {
    message("  ", tool)
    pattern <- NULL
    limit <- if (startsWith(tool, "sdcRisk")) Inf else as.numeric(Sys.getenv("SDCRISK_BENCH_LIMIT", "120"))
    t <- system.time(pattern <- tryCatch({
      setTimeLimit(elapsed = limit, transient = TRUE)
      on.exit(setTimeLimit(elapsed = Inf))
      tools[[tool]]()
    }, error = function(e) e))[["elapsed"]]
    setTimeLimit(elapsed = Inf)
    if (inherits(pattern, "error")) {
      rows[[length(rows) + 1]] <- data.frame(records = format(spec$n, big.mark = ",", scientific = FALSE),
        table = label, tool = tool, suppressed = NA, secondary = NA, value_pct = NA,
        seconds = t, audit = paste("error:", conditionMessage(pattern)))
      next
    }
    supp <- cell_key(as.data.frame(sens), spec$dims) %in% cell_key(pattern, spec$dims)
    value_pct <- 100 * sum(abs(sens$total[supp])) / sum(abs(sens$total))
    if (big) {
      # one connected set of ~20,000 suppressed cells: each linear program of
      # the audit takes minutes with GLPK
      rows[[length(rows) + 1]] <- data.frame(
        records = format(spec$n, big.mark = ",", scientific = FALSE), table = label, tool = tool,
        suppressed = sum(supp), secondary = sum(supp & !sens$sensitive), value_pct = value_pct,
        seconds = t, audit = if (startsWith(tool, "sdcRisk")) "proved by its witness tables; LP audit not run" else
          "not audited (LP audit not run on this table)")
      next
    }
    aud <- audit_table(sens, supp, intervals = "none")
    prot <- aud$protected[aud$sensitive]
    rows[[length(rows) + 1]] <- data.frame(
      records = format(spec$n, big.mark = ",", scientific = FALSE), table = label, tool = tool,
      suppressed = sum(supp), secondary = sum(supp & !sens$sensitive),
      value_pct = value_pct,
      seconds = t,
      audit = sprintf("%s: %d of %d sensitive cells protected%s",
                      if (isTRUE(attr(aud, "passed"))) "passes" else "FAILS", sum(prot), length(prot),
                      if (sum(supp) != nrow(pattern)) sprintf(" (%d of its cells not in our table)",
                                                              nrow(pattern) - sum(supp)) else ""))
  }
}

tab <- do.call(rbind, rows)
ver <- function(p) if (requireNamespace(p, quietly = TRUE)) as.character(packageVersion(p)) else "(not installed)"
header <- c(
  machine_line(sprintf("sdcRisk %s, Rglpk %s, sdcTable %s, GaussSuppression %s, SSBtools %s",
                       ver("sdcRisk"), ver("Rglpk"), ver("sdcTable"), ver("GaussSuppression"), ver("SSBtools"))),
  "One run per tool and table; seconds include primary suppression (makeProblem() for sdcTable); value % = suppressed share of the sum of all cells (margins included); audit = sdcRisk's audit_table() of the tool's pattern against the p% rule's protection levels.",
  ""
)
write_results(tab, header, Sys.getenv("SDCRISK_BENCH_OUT", file.path("bench", "results-suppress.md")),
              digits = c(seconds = 2, value_pct = 2))
