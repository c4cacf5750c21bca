# Benchmark of the release inside a database (issues 12 and 20), in one run
# on the same data: census-like records (bench/utils.R) in SQLite (a file)
# and in PostgreSQL (a throwaway cluster started here, as in the tests), and
#   * the database's own GROUP BY on the keys, collected by dbGetQuery() (the
#     reference: what counting the cells costs the database), run before and
#     after the release,
#   * the whole ifpr() on the table, step by step (the id check, the counts,
#     the design in R, the upload of the moves, the moved records, the write
#     of the released table, the rename), with the R process's peak memory,
# beside the whole in-memory ifpr() on the same records.
# Times are elapsed seconds and CPU seconds (R's process, which includes
# SQLite, plus the PostgreSQL backend's process read from /proc): the
# machine is shared, so the ratio to the GROUP BY of the same run is the
# figure to read, and the CPU ratio is the steadier one.
# Run from the package root after installing the package:
#   Rscript bench/bench_database.R       (writes bench/results-database.md)
# SDCRISK_BENCH_SIZES (default 1e6,1e7) sets the sizes;
# SDCRISK_BENCH_BACKENDS (default SQLite,PostgreSQL) the backends,
# SDCRISK_BENCH_IN_MEMORY=false leaves out the in-memory ifpr(),
# SDCRISK_BENCH_ID=plain leaves pid undeclared (default: the primary key),
# SDCRISK_BENCH_EXPLAIN=true prints the query plans of the release's
# statements, and SDCRISK_BENCH_OUT (default bench/results-database.md) the
# results file.

suppressPackageStartupMessages({
  library(sdcRisk)
  library(DBI)
})
source(file.path("bench", "utils.R"))
`%||%` <- function(x, y) if (is.null(x)) y else x
source(file.path("tests", "testthat", "helper-postgres.R"))
options(rlib_warning_verbosity = "quiet")

sizes <- as.numeric(strsplit(Sys.getenv("SDCRISK_BENCH_SIZES", "1e6,1e7"), ",")[[1]])
keys <- c("sex", "age", "race", "marital", "area")
xi <- 0.3
partition <- list(sex = "keep")
# SDCRISK_BENCH_ID = "key" (default): pid is the table's declared primary
# key; "plain": an undeclared column, which the release checks by a pass
id_declared <- Sys.getenv("SDCRISK_BENCH_ID", "key") != "plain"

pg <- pg_start()
if (!is.null(pg$missing)) stop("PostgreSQL: missing ", pg$missing)
DBI::dbExecute(pg$con, "SET work_mem = '256MB'")
sqlite_file <- tempfile(fileext = ".sqlite")
lite <- DBI::dbConnect(RSQLite::SQLite(), sqlite_file)
cleanup <- function() {
  DBI::dbDisconnect(lite)
  unlink(sqlite_file)
  pg$stop()
}
backends <- list(SQLite = lite, PostgreSQL = pg$con)
pg_version <- sub(" .*", "", sub("PostgreSQL ", "", dbGetQuery(pg$con, "SELECT version()")[[1]]))
pg_pid <- dbGetQuery(pg$con, "SELECT pg_backend_pid() AS p")$p

# elapsed seconds, CPU seconds of R (and SQLite in it) and of the
# PostgreSQL backend
clock <- function() {
  p <- proc.time()
  st <- strsplit(readLines(sprintf("/proc/%d/stat", pg_pid)), " ")[[1]]
  c(elapsed = p[["elapsed"]], cpu = p[["user.self"]] + p[["sys.self"]] + (as.numeric(st[14]) + as.numeric(st[15])) / 100)
}
timed <- function(f) {
  a <- clock()
  f()
  clock() - a
}

rows <- list()
add <- function(n, backend, task, t, ref = NULL, mb = NA) {
  ratio <- if (is.null(ref)) c(NA, NA) else t / ref
  rows[[length(rows) + 1]] <<- data.frame(
    records = format(n, big.mark = ",", scientific = FALSE), backend = backend, task = task,
    seconds = t[["elapsed"]], cpu_seconds = t[["cpu"]], ratio = ratio[[1]], cpu_ratio = ratio[[2]], peak_mb = mb
  )
  message(sprintf("  %-10s %-50s %8.2f s %8.2f cpu s", backend, task, t[["elapsed"]], t[["cpu"]]))
}

step_names <- c(
  begin = "checks of the arguments, source tables and output name",
  id_checked = "id check (unique, never missing)",
  counted = "counts: GROUP BY kept as a temporary table, collected",
  drawn = "plan, exact certificate and draw of the moves (R)",
  uploaded = "upload of the moves (PostgreSQL: of the moved records R named)",
  movers = "moved records (ids from the counts; larger cells ranked)",
  written = "released table written (join on rowid or id)",
  renamed = "working tables dropped, rename",
  commit = "commit"
)

tryCatch(for (n in sizes) {
  message("n = ", n)
  df <- make_census(n)
  df[] <- lapply(df, function(x) if (is.factor(x)) as.character(x) else x)
  set.seed(7)
  df$pid <- sample.int(n)
  if (!identical(Sys.getenv("SDCRISK_BENCH_IN_MEMORY"), "false")) {
    set.seed(1)
    add(n, "in memory", "whole ifpr() on a data frame", timed(function() ifpr(df, keys, xi, partition = partition)))
  }
  for (b in intersect(names(backends), strsplit(Sys.getenv("SDCRISK_BENCH_BACKENDS", "SQLite,PostgreSQL"), ",")[[1]])) {
    con <- backends[[b]]
    for (t in c("persons", "released")) if (dbExistsTable(con, t)) dbRemoveTable(con, t)
    load <- system.time(if (id_declared) {
      # pid declared as the primary key, as a table of persons has it (the
      # release then trusts the database for the id check); loaded in pid
      # order, which SQLite stores as the rowid
      types <- vapply(df, function(x) {
        if (is.character(x)) "TEXT" else if (is.integer(x)) "INTEGER" else if (b == "SQLite") "REAL" else "DOUBLE PRECISION"
      }, "")
      types[["pid"]] <- "INTEGER PRIMARY KEY"
      dbExecute(con, paste0("CREATE TABLE persons (", paste(names(df), types, collapse = ", "), ")"))
      dbWriteTable(con, "persons", df[order(df$pid), ], row.names = FALSE, append = TRUE)
    } else {
      dbWriteTable(con, "persons", df, row.names = FALSE)
    })[["elapsed"]]
    if (b == "PostgreSQL") dbExecute(con, "ANALYZE persons")
    message(sprintf("  %-10s loading the table (not timed below): %.1f s", b, load))
    tb <- dplyr::tbl(con, "persons")
    group_sql <- paste0("SELECT ", paste(keys, collapse = ", "), ", COUNT(*) AS n FROM persons GROUP BY ", paste(keys, collapse = ", "))
    g1 <- timed(function() dbGetQuery(con, group_sql))
    stamps <- list()
    options(sdcRisk.db_step_hook = function(step, con) stamps[[step]] <<- clock())
    set.seed(1)
    start <- clock()
    whole <- measure(function() ifpr(tb, keys, xi, partition = partition, id = "pid", name = "released", overwrite = TRUE))
    end <- clock()
    options(sdcRisk.db_step_hook = NULL)
    g2 <- timed(function() dbGetQuery(con, group_sql))
    ref <- (g1 + g2) / 2
    add(n, b, "database GROUP BY keys (dbGetQuery), before", g1)
    add(n, b, "database GROUP BY keys (dbGetQuery), after", g2)
    st <- do.call(rbind, c(list(start = start), stamps, list(end = end)))
    d <- apply(st, 2, diff)
    rownames(d) <- rownames(st)[-1]
    d["renamed", ] <- d["renamed", ] + (if ("dropped" %in% rownames(d)) d["dropped", ] else 0)
    for (s in intersect(names(step_names), rownames(d))) add(n, b, paste("  step:", step_names[[s]]), d[s, ], ref)
    add(n, b, "whole ifpr() on the table", end - start, ref, mb = whole[["mb"]])
    if (identical(Sys.getenv("SDCRISK_BENCH_EXPLAIN"), "true")) {
      # the statements of the release, with their plans
      ns <- asNamespace("sdcRisk")
      trace(DBI::dbExecute, quote(if (grepl("^(CREATE|INSERT)", statement)) {
        ex <- if (inherits(conn, "SQLiteConnection")) "EXPLAIN QUERY PLAN " else "EXPLAIN "
        sel <- sub("^[^(]*?\\sAS\\s+SELECT", "SELECT", sub("^INSERT INTO \\S+ ", "", statement), perl = TRUE)
        if (grepl("^SELECT", sel)) {
          message("---- ", substr(statement, 1, 2000))
          p <- DBI::dbGetQuery(conn, paste0(ex, sel))
          message(paste(if (inherits(conn, "SQLiteConnection")) p$detail else p[[1]], collapse = "\n"))
        }
      }), print = FALSE, where = asNamespace("DBI"))
      set.seed(1)
      ifpr(tb, keys, xi, partition = partition, id = "pid", name = "released", overwrite = TRUE)
      untrace(DBI::dbExecute, where = asNamespace("DBI"))
    }
    dbRemoveTable(con, "released")
    dbRemoveTable(con, "persons")
  }
  rm(df)
  invisible(gc())
}, error = function(e) {
  message("stopped: ", conditionMessage(e))
})

versions <- sprintf("sdcRisk %s, DBI %s, dbplyr %s, RSQLite %s (SQLite %s), RPostgreSQL %s, PostgreSQL %s",
  packageVersion("sdcRisk"), packageVersion("DBI"), packageVersion("dbplyr"), packageVersion("RSQLite"),
  RSQLite::rsqliteVersion()[[2]], packageVersion("RPostgreSQL"),
  pg_version)
cleanup()
write_results(
  do.call(rbind, rows),
  c(machine_line(versions),
    paste("Each step once; seconds of elapsed time; cpu seconds of R's process (SQLite runs inside it) and of the PostgreSQL",
      "backend; ratio and cpu ratio to the mean of the two GROUP BYs of the same backend in the same run;",
      "peak MB is the rise of the R process's resident set during the call (the PostgreSQL server's memory is not counted).",
      if (id_declared) "The id pid is the table's declared INTEGER PRIMARY KEY." else "The id pid is an undeclared column."),
    ""),
  Sys.getenv("SDCRISK_BENCH_OUT", file.path("bench", "results-database.md")),
  digits = c(seconds = 2, cpu_seconds = 2, ratio = 2, cpu_ratio = 2, peak_mb = 0)
)
