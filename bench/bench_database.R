# Benchmark of the database path (issue 12), in one run on the same data:
# census-like records (bench/utils.R) in SQLite (a file) and in PostgreSQL (a
# throwaway cluster started here, as in the tests), and
#   * the database's own GROUP BY on the keys (the floor for the counts),
#   * cell_frequencies() on the table (the same GROUP BY, collected),
#   * the plan and its exact certificate from the counts (R only),
#   * the draw of the moves (R only) and the release written by the database,
#   * the whole ifpr() on the table, with the R process's peak memory,
# beside the whole in-memory ifpr() on the same records.
# Run from the package root after installing the package:
#   Rscript bench/bench_database.R       (writes bench/results-database.md)
# SDCRISK_BENCH_SIZES (default 1e6,1e7) sets the sizes; each step runs once
# (a 10^7 release takes minutes per backend on a shared 2-core machine).
# SDCRISK_BENCH_BACKENDS (default SQLite,PostgreSQL) the backends,
# SDCRISK_BENCH_IN_MEMORY=false leaves out the in-memory ifpr(), and
# SDCRISK_BENCH_OUT (default bench/results-database.md) the results file.

suppressPackageStartupMessages({
  library(sdcRisk)
  library(DBI)
})
source(file.path("bench", "utils.R"))
`%||%` <- function(x, y) if (is.null(x)) y else x
source(file.path("tests", "testthat", "helper-postgres.R"))

sizes <- as.numeric(strsplit(Sys.getenv("SDCRISK_BENCH_SIZES", "1e6,1e7"), ",")[[1]])
keys <- c("sex", "age", "race", "marital", "area")
xi <- 0.3
partition <- list(sex = "keep")
ns <- asNamespace("sdcRisk")

rows <- list()
add <- function(n, backend, task, res) {
  rows[[length(rows) + 1]] <<- data.frame(
    records = format(n, big.mark = ",", scientific = FALSE), backend = backend, task = task,
    seconds = res[["seconds"]], peak_mb = res[["mb"]]
  )
  message(sprintf("  %-10s %-55s %8.2f s %7.0f MB", backend, task, res[["seconds"]], res[["mb"]]))
}

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

tryCatch(for (n in sizes) {
  message("n = ", n)
  df <- make_census(n)
  df[] <- lapply(df, function(x) if (is.factor(x)) as.character(x) else x)
  set.seed(7)
  df$pid <- sample.int(n)
  cf_mem <- cell_frequencies(df, keys)
  message("  cells: ", nrow(cf_mem$cells), ", singletons ", cf_mem$n_singletons)
  set.seed(1)
  if (!identical(Sys.getenv("SDCRISK_BENCH_IN_MEMORY"), "false")) {
    add(n, "in memory", "whole ifpr() on a data frame", measure(function() ifpr(df, keys, xi, partition = partition)))
  }

  for (b in intersect(names(backends), strsplit(Sys.getenv("SDCRISK_BENCH_BACKENDS", "SQLite,PostgreSQL"), ",")[[1]])) {
    con <- backends[[b]]
    for (t in c("persons", "released")) if (dbExistsTable(con, t)) dbRemoveTable(con, t)
    load <- system.time(dbWriteTable(con, "persons", df))[["elapsed"]]
    message(sprintf("  %-10s loading the table (not timed below): %.1f s", b, load))
    tb <- dplyr::tbl(con, "persons")
    group_sql <- paste0("SELECT ", paste(keys, collapse = ", "), ", COUNT(*) AS n FROM persons GROUP BY ",
      paste(keys, collapse = ", "))
    add(n, b, "database GROUP BY keys (dbGetQuery)", measure(function() dbGetQuery(con, group_sql)))
    add(n, b, "id check (COUNT; GROUP BY id)", measure(function() ns$check_db_id(tb, "pid", keys)))
    add(n, b, "cell_frequencies() on the table", measure(function() cell_frequencies(tb, keys)))
    cf <- cell_frequencies(tb, keys)
    stopifnot(identical(cf$cells, cf_mem$cells))
    add(n, b, "plan and exact certificate from the counts", measure(function() {
      ns$ifpr_design(cf, keys, keys, xi, "all_matches", partition, "tiered", "exact", "error", FALSE)
    }))
    d <- ns$ifpr_design(cf, keys, keys, xi, "all_matches", partition, "tiered", "exact", "error", FALSE)
    set.seed(1)
    add(n, b, "draw of the moves (R)", measure(function() ns$draw_moves(d$plan)))
    set.seed(1)
    moves <- ns$draw_moves(d$plan)
    message("  moves: ", nrow(moves))
    up <- cf$cells[moves$cell, keys]
    up$sdc_rank__ <- moves$rank
    up <- cbind(up, stats::setNames(cf$cells[moves$new_cell, keys], paste0("sdc_new__", seq_along(keys))))
    up$sdc_moved__ <- 1L
    add(n, b, "of which: upload of the moves (dbWriteTable)", measure(function() dbWriteTable(con, "moves_upload", up)))
    dbRemoveTable(con, "moves_upload")
    add(n, b, "release written by the database (upload, one statement)", measure(function() {
      ns$write_release_db(tb, con, keys, "pid", moves, cf, "released", TRUE, "exclude")
    }))
    dbRemoveTable(con, "released")
    set.seed(1)
    add(n, b, "whole ifpr() on the table", measure(function() {
      ifpr(tb, keys, xi, partition = partition, id = "pid", name = "released", overwrite = TRUE)
    }))
    dbRemoveTable(con, "released")
    dbRemoveTable(con, "persons")
  }
  rm(df, cf_mem)
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
    "Each step once; seconds of elapsed time; peak MB is the rise of the R process's resident set during the call (the database servers' memory is not counted).",
    ""),
  Sys.getenv("SDCRISK_BENCH_OUT", file.path("bench", "results-database.md")),
  digits = c(seconds = 2, peak_mb = 0)
)
