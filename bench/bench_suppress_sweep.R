# Speed on many small tables, not chosen by us: protect_table() (the
# default, attacker = "respondents") beside GaussSuppression's interval
# mode (SuppressDominantCells(protectionIntervals = TRUE, lpPackage =
# "lpSolve")) on tables of 100 to 1,000 cells drawn at random from the
# 2019 ACS excerpt of bench_suppress.R (make_acs() of bench/utils.R, the
# records of the first 30 PUMAs): two to four of sex, age, race,
# education, marital status and PUMA, the records of 4 to 30 PUMAs, the p%
# rule p = 10 (two tables in three) or the (1, 80) dominance rule
# (GaussSuppression's n = 1, k = 80). bench_suppress_small.R times the
# bench's named tables R1-R8 and S1-S9 in fresh processes; this script
# asks whether what holds there holds on tables we did not pick (issue 32,
# item 3: no slower than GaussSuppression's interval mode up to 1,000
# cells). One R process, the tables in turn; for each, the first call of
# each tool (the first tool alternating from table to table), then the
# median of SDCRISK_BENCH_REPS (default 2) alternated calls, each after a
# garbage collection. Also the suppressed value of both patterns (the
# default's is respondent-safe; GaussSuppression's need not be). A table
# found slower (either ratio above 1) is timed again at the end:
# SDCRISK_BENCH_RECHECK (default 7) more pairs of alternated calls, each
# pair's ratio kept, the median of the pairs reported (two calls of one
# table apart can differ by a third on a shared VM, more than the gaps in
# question).
#   Rscript bench/bench_suppress_sweep.R   (writes
#     bench/results-suppress-sweep.md, or SDCRISK_BENCH_OUT)
# SDCRISK_BENCH_SEED (default 1) and SDCRISK_BENCH_N (default 40, the
# number of tables) choose the tables. GaussSuppression, SSBtools and
# lpSolve are bench-only packages (never dependencies of sdcRisk),
# installed if missing into SDCRISK_BENCH_LIB when set; sdcRisk is loaded
# from SDCRISK_BENCH_LIB too (R CMD INSTALL -l it there), else the
# installed one.

lib <- Sys.getenv("SDCRISK_BENCH_LIB", "")
if (nzchar(lib)) .libPaths(c(lib, .libPaths()))
reps <- as.integer(Sys.getenv("SDCRISK_BENCH_REPS", "2"))
recheck <- as.integer(Sys.getenv("SDCRISK_BENCH_RECHECK", "7"))
seed <- as.integer(Sys.getenv("SDCRISK_BENCH_SEED", "1"))
n_tables <- as.integer(Sys.getenv("SDCRISK_BENCH_N", "40"))
source(file.path("bench", "utils.R"))
gauss_bench_setup(lib)

base <- make_acs(30)
rows <- list()
# (each table's tools, for the recheck)
tools_of <- list()
for (tb in sweep_tables(base, seed, n_tables)) {
  dv <- tb$dv
  np <- tb$np
  nk <- tb$nk
  d <- tb$d
  sens <- tb$sens
  # (each table's own data in its closures: the recheck calls them later)
  tools <- local({
    sens <- sens
    d <- d
    dv <- dv
    nk <- nk
    list(
      default = function() protect_table(sens, intervals = "suppressed"),
      gauss = function() gauss_interval(d, dv, nk)
    )
  })
  ord <- if (length(rows) %% 2 == 0) names(tools) else rev(names(tools))
  res <- list()
  first <- vapply(ord, function(t) system.time(res[[t]] <<- tools[[t]]())[["elapsed"]], numeric(1))[names(tools)]
  warm <- matrix(NA_real_, reps, 2, dimnames = list(NULL, names(tools)))
  for (r in seq_len(reps)) for (t in ord) {
    invisible(gc())
    warm[r, t] <- system.time(tools[[t]]())[["elapsed"]]
  }
  warm <- apply(warm, 2, stats::median)
  p <- res$default
  g <- res$gauss
  rows[[length(rows) + 1L]] <- data.frame(
    table = paste(dv, collapse = " x "), pumas = np, rule = if (nk) "(1, 80)" else "p% 10",
    cells = nrow(sens), sensitive = sum(sens$sensitive),
    gauss_s = warm[["gauss"]], default_s = warm[["default"]], ratio = warm[["default"]] / warm[["gauss"]],
    ratio_first = first[["default"]] / first[["gauss"]],
    value_ratio = sum(abs(p$total[p$status != "published"])) / sum(abs(g$v[g$suppressed]))
  )
  tools_of[[length(rows)]] <- tools
  message(sprintf("%2d %-28s %2d PUMAs %4d cells: default / Gauss %.2f (first %.2f)", length(rows),
                  rows[[length(rows)]]$table, np, nrow(sens), rows[[length(rows)]]$ratio,
                  rows[[length(rows)]]$ratio_first))
}
tab <- do.call(rbind, rows)
# the tables found slower, timed again: `recheck` pairs of alternated calls
slower <- tab$ratio > 1 | tab$ratio_first > 1
tab$recheck <- NA_real_
tab$recheck_lo <- tab$recheck_hi <- NA_real_
for (k in which(slower & recheck > 0)) {
  tools <- tools_of[[k]]
  pair <- vapply(seq_len(recheck), function(r) {
    ord <- if (r %% 2) names(tools) else rev(names(tools))
    t <- vapply(ord, function(nm) {
      invisible(gc())
      system.time(tools[[nm]]())[["elapsed"]]
    }, numeric(1))
    t[["default"]] / t[["gauss"]]
  }, numeric(1))
  tab$recheck[k] <- stats::median(pair)
  tab$recheck_lo[k] <- min(pair)
  tab$recheck_hi[k] <- max(pair)
  message(sprintf("recheck %2d %-28s: median of %d pairs %.2f (%.2f to %.2f)", k, tab$table[k], recheck,
                  tab$recheck[k], tab$recheck_lo[k], tab$recheck_hi[k]))
}
info <- sprintf("Run on %s: %s; %s; sdcRisk %s, highs %s, GaussSuppression %s, lpSolve %s.", format(Sys.Date()),
                Sys.getenv("SDCRISK_BENCH_MACHINE", "this machine"), R.version.string,
                utils::packageVersion("sdcRisk"), utils::packageVersion("highs"),
                utils::packageVersion("GaussSuppression"), utils::packageVersion("lpSolve"))
still <- slower & !is.na(tab$recheck) & tab$recheck > 1
f2 <- function(x) formatC(x, format = "f", digits = 2)
recheck_cell <- ifelse(is.na(tab$recheck), "",
                       sprintf("%s (%s-%s)%s", f2(tab$recheck), f2(tab$recheck_lo), f2(tab$recheck_hi),
                               ifelse(still, " **slower**", "")))
md <- c(info,
        sprintf(paste("%d tables of 100 to 1,000 cells drawn with seed %d; one R process, the tables in turn.",
                      "Seconds elapsed, the median of %d alternated warm calls; the ratios are the default's",
                      "over GaussSuppression's interval mode (below 1: sdcRisk faster), warm and on the first",
                      "calls; value: the default's suppressed value over GaussSuppression's (the default's",
                      "pattern is respondent-safe, GaussSuppression's need not be)."), nrow(tab), seed, reps),
        "",
        sprintf(paste("The default is slower (a ratio above 1, warm or first) on %d of %d tables;",
                      "warm ratios %s to %s, median %s."), sum(slower), nrow(tab), f2(min(tab$ratio)),
                f2(max(tab$ratio)), f2(stats::median(tab$ratio))),
        if (recheck > 0 && any(slower)) {
          c("", sprintf(paste("Timed again (%d pairs of alternated calls each, at the end of the run; recheck:",
                              "the median of the pairs' ratios, their range in brackets), the default is",
                              "slower on %d of those %d."), recheck, sum(still), sum(slower)))
        },
        "",
        "| table | PUMAs | rule | cells | sensitive | GaussSuppression s | default s | default / Gauss | first calls | recheck | value / Gauss |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        sprintf("| %s | %d | %s | %d | %d | %s | %s | %s%s | %s | %s | %s |", tab$table, tab$pumas, tab$rule, tab$cells,
                tab$sensitive, f2(tab$gauss_s), f2(tab$default_s), f2(tab$ratio), ifelse(slower, " **slower**", ""),
                f2(tab$ratio_first), recheck_cell, formatC(tab$value_ratio, format = "f", digits = 3)))
out <- Sys.getenv("SDCRISK_BENCH_OUT", file.path("bench", "results-suppress-sweep.md"))
writeLines(md, out)
cat(md, sep = "\n")
