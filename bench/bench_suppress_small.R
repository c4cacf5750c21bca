# Speed on small tables, repeated: protect_table() (the default, attacker
# = "respondents", and attacker = "outsider") beside GaussSuppression's
# interval mode (SuppressDominantCells(protectionIntervals = TRUE,
# lpPackage = "lpSolve")) on the real tables R1-R4 of bench_suppress.R
# (2019 ACS excerpt, ../shared/data/acs2019; 72 to 270 cells) and larger
# ones of the same records (R5, R6: 577 and 668 cells; R7, 965 cells: R6's
# variables over the records of the first 12 PUMAs; R8, 841 cells: R5's
# over the same 12 PUMAs), p% rule p = 10; and nine more of the same
# records, S1-S9 (170 to 819 cells; marital status too; S5 and S6 under
# the (1, 80) dominance rule, GaussSuppression's n = 1, k = 80), so that
# the tables up to 1,000 cells are not only R1-R8. bench_suppress.R times
# each tool once, in a process that has run larger tables before; on
# this machine one timing moves by a quarter from process to process, so
# this script measures the tables in several fresh R processes
# (SDCRISK_BENCH_PROCS, default 5), twice: each table alone in its
# processes, and all the tables in turn in each process (as a user who
# protects several tables in one session; R4 last). In each process:
#   first  the first call of each tool on the table in the process (the
#          tools in turn, the first tool alternating between processes),
#   warm   the median of SDCRISK_BENCH_REPS (default 5) calls of each,
#          alternated, each after a garbage collection (system.time()).
# The ratios are sdcRisk's seconds over GaussSuppression's in the same
# process; the table gives their range over the processes.
#   Rscript bench/bench_suppress_small.R   (writes
#     bench/results-suppress-small.md, or SDCRISK_BENCH_OUT)
# GaussSuppression, SSBtools and lpSolve are bench-only packages (never
# dependencies of sdcRisk), installed if missing into SDCRISK_BENCH_LIB
# when set; sdcRisk is loaded from SDCRISK_BENCH_LIB too (R CMD INSTALL -l
# it there), else the installed one. SDCRISK_BENCH_TABLES selects tables
# (default R1,R2,R3,R4; R5-R8 take seconds each, run them with
# SDCRISK_BENCH_PROCS=2 SDCRISK_BENCH_REPS=1 and SDCRISK_BENCH_OUT=
# bench/results-suppress-small-larger.md; S1-S9 with SDCRISK_BENCH_OUT=
# bench/results-suppress-small-more.md).

args <- commandArgs(trailingOnly = TRUE)
lib <- Sys.getenv("SDCRISK_BENCH_LIB", "")
if (nzchar(lib)) .libPaths(c(lib, .libPaths()))
tables <- strsplit(Sys.getenv("SDCRISK_BENCH_TABLES", "R1,R2,R3,R4"), ",")[[1]]
reps <- as.integer(Sys.getenv("SDCRISK_BENCH_REPS", "5"))
procs <- as.integer(Sys.getenv("SDCRISK_BENCH_PROCS", "5"))
# (R5-R8, of 577, 668, 965 and 841 cells, not in bench_suppress.R: the
# larger small tables; SDCRISK_BENCH_TABLES=R5,R6,R7,R8)
dims <- list(R1 = c("sex", "age", "race"), R2 = c("age", "race", "edu"), R3 = c("age", "race", "puma"),
             R4 = c("sex", "age", "edu", "race"), R5 = c("sex", "age", "race", "puma"),
             R6 = c("age", "race", "edu", "puma"), R7 = c("age", "race", "edu", "puma"),
             R8 = c("sex", "age", "race", "puma"),
             S1 = c("sex", "age", "edu", "puma"), S2 = c("age", "race", "msp"), S3 = c("sex", "race", "edu", "puma"),
             S4 = c("age", "msp", "puma"), S5 = c("age", "race", "edu", "puma"), S6 = c("sex", "age", "race", "puma"),
             S7 = c("age", "edu", "msp", "sex"), S8 = c("race", "edu", "puma"), S9 = c("age", "race", "edu", "puma"))
# (the PUMAs of each table's records, 8 unless said)
pumas <- c(R7 = 12, R8 = 12, S1 = 6, S2 = 20, S4 = 12, S7 = 20, S8 = 20, S9 = 10)
# (the tables under the (1, 80) dominance rule; the others under p% = 10)
dominance <- c("S5", "S6")

if (!all(tables %in% names(dims))) {
  stop("SDCRISK_BENCH_TABLES: unknown tables ", paste(setdiff(tables, names(dims)), collapse = ", "),
       "; known: ", paste(names(dims), collapse = ", "))
}
source(file.path("bench", "utils.R"))

# ---- one process: every table, first calls then warm medians ----
child <- function(out, k, tables) {
  suppressPackageStartupMessages({
    library(sdcRisk)
    library(GaussSuppression)
  })
  res <- list()
  for (tb in tables) {
    d <- make_acs(if (tb %in% names(pumas)) pumas[[tb]] else 8)
    dv <- dims[[tb]]
    nk <- tb %in% dominance
    sens <- acs_sensitivity(d, dv, nk)
    tools <- list(
      default = function() protect_table(sens, intervals = "suppressed"),
      outsider = function() protect_table(sens, intervals = "suppressed", attacker = "outsider"),
      gauss = function() gauss_interval(d, dv, nk)
    )
    # (the first tool alternates between processes)
    ord <- if (k %% 2 == 1) names(tools) else rev(names(tools))
    first <- vapply(ord, function(t) system.time(tools[[t]]())[["elapsed"]], numeric(1))[names(tools)]
    warm <- matrix(NA_real_, reps, length(tools), dimnames = list(NULL, names(tools)))
    for (r in seq_len(reps)) for (t in ord) warm[r, t] <- system.time(tools[[t]]())[["elapsed"]]
    res[[tb]] <- list(cells = nrow(sens), first = first, warm = apply(warm, 2, stats::median))
  }
  saveRDS(res, out)
}

if (length(args) == 4 && args[1] == "--child") {
  child(args[2], as.integer(args[3]), strsplit(args[4], ",")[[1]])
  quit(save = "no")
}

# ---- the parent: bench-only packages, the processes, the table ----
gauss_bench_setup(lib, attach = FALSE)
me <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
run_processes <- function(tabs) {
  lapply(seq_len(procs), function(k) {
    out <- tempfile(fileext = ".rds")
    message(paste(tabs, collapse = ","), ": process ", k, " of ", procs)
    st <- system2(file.path(R.home("bin"), "Rscript"), c(me, "--child", out, k, paste(tabs, collapse = ",")))
    if (st != 0 || !file.exists(out)) stop("process ", k, " failed")
    readRDS(out)
  })
}
rng <- function(x, digits = 2) {
  r <- range(x)
  if (round(r[1], digits) == round(r[2], digits)) format(round(r[1], digits), nsmall = digits) else
    paste0(format(round(r[1], digits), nsmall = digits), "-", format(round(r[2], digits), nsmall = digits))
}
table_rows <- function(runs, tabs) {
  rows <- lapply(tabs, function(tb) {
    get <- function(what, tool) vapply(runs, function(r) r[[tb]][[what]][[tool]], numeric(1))
    data.frame(
      table = sprintf("%s (%d cells)", tb, runs[[1]][[tb]]$cells),
      gauss_warm = rng(get("warm", "gauss")), default_warm = rng(get("warm", "default")),
      ratio_default = rng(get("warm", "default") / get("warm", "gauss")),
      ratio_outsider = rng(get("warm", "outsider") / get("warm", "gauss")),
      gauss_first = rng(get("first", "gauss")), default_first = rng(get("first", "default")),
      ratio_default_first = rng(get("first", "default") / get("first", "gauss")),
      ratio_outsider_first = rng(get("first", "outsider") / get("first", "gauss"))
    )
  })
  tab <- do.call(rbind, rows)
  c("| table | GaussSuppression s (warm) | default s (warm) | default / Gauss (warm) | outsider / Gauss (warm) | GaussSuppression s (first) | default s (first) | default / Gauss (first) | outsider / Gauss (first) |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    apply(tab, 1, function(r) paste0("| ", paste(r, collapse = " | "), " |")))
}
alone <- lapply(tables, run_processes)
alone_runs <- lapply(seq_len(procs), function(k) do.call(c, lapply(alone, `[[`, k)))
turn_runs <- run_processes(tables)
info <- sprintf("Run on %s: %s; %s; sdcRisk %s, highs %s, GaussSuppression %s, lpSolve %s.", format(Sys.Date()),
                Sys.getenv("SDCRISK_BENCH_MACHINE", "this machine"), R.version.string,
                utils::packageVersion("sdcRisk"), utils::packageVersion("highs"),
                utils::packageVersion("GaussSuppression"), utils::packageVersion("lpSolve"))
md <- c(info,
        sprintf(paste("%d fresh R processes; in each, the first call of each tool on the table, then the median of",
                      "%d alternated calls (each after a garbage collection). Seconds elapsed; ratios are",
                      "sdcRisk's over GaussSuppression's interval mode (lpSolve) in the same process, as",
                      "ranges over the processes (below 1: sdcRisk faster)."), procs, reps),
        "",
        "Each table alone in its processes:",
        "",
        table_rows(alone_runs, tables),
        "",
        sprintf("The tables in turn (%s) in each process:", paste(tables, collapse = ", ")),
        "",
        table_rows(turn_runs, tables))
out <- Sys.getenv("SDCRISK_BENCH_OUT", file.path("bench", "results-suppress-small.md"))
writeLines(md, out)
cat(md, sep = "\n")
