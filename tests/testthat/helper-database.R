# Shared by the database tests (test-db-*.R, test-contract-database.R):
# data, connections to SQLite, to the PostgreSQL server of
# helper-postgres.R and to a backend the package does not know, fresh table
# names, the release the moves prescribe (brute force), two releases
# compared, and a full picture of a database's tables to compare before and
# after a release.

# Census-like records: sparse combinations of four keys, a non-key value and
# a record id unrelated to the row order.
db_people <- function(n, seed, na_keys = FALSE) {
  set.seed(seed)
  df <- data.frame(
    sex = sample(c("F", "M"), n, TRUE),
    age = as.integer(pmin(95, stats::rgamma(n, 3, 0.08))),
    region = sample(sprintf("r%02d", 1:12), n, TRUE, prob = stats::rgamma(12, 1)),
    status = sample(c("a", "b", "c"), n, TRUE, prob = c(0.7, 0.25, 0.05)),
    income = round(stats::rlnorm(n, 10), 2),
    stringsAsFactors = FALSE
  )
  df$pid <- sample.int(10L * n, n)
  if (na_keys) {
    df$region[sample(n, n %/% 50)] <- NA
    df$status[sample(n, n %/% 50)] <- NA
  }
  df
}

db_keys <- c("sex", "age", "region", "status")

# A connection to a fresh database of the backend, closed at the end of the
# calling test; on PostgreSQL, one server for the run, tables dropped.
local_db <- function(backend, env = parent.frame()) {
  if (backend == "SQLite") {
    if (!pg_required()) {
      testthat::skip_if_not_installed("RSQLite")
      testthat::skip_if_not_installed("dbplyr")
    }
    con <- DBI::dbConnect(RSQLite::SQLite(), ":memory:")
    withr::defer(DBI::dbDisconnect(con), envir = env)
    return(con)
  }
  # dbplyr warns that RPostgreSQL uses its old interface (it works)
  withr::local_options(list(rlib_warning_verbosity = "quiet"), .local_envir = env)
  skip_or_fail_without_postgres()$con
}

# A connection to a DBI backend the package has no methods for: a class of
# its own (not a subclass of any driver's) that forwards every call to an
# in-memory SQLite database and logs what it is sent
# (other_db_statements()), so that a release runs through the default
# methods of its dialect. Closed at the end of the calling test.
local_other_db <- function(env = parent.frame()) {
  if (!pg_required()) {
    testthat::skip_if_not_installed("RSQLite")
    testthat::skip_if_not_installed("dbplyr")
  }
  inner <- DBI::dbConnect(RSQLite::SQLite(), ":memory:")
  withr::defer(DBI::dbDisconnect(inner), envir = env)
  other_db_class()(inner = inner, log = new.env())
}

other_db_statements <- function(con) con@log$sent %||% character()

other_db_class <- local({
  generator <- NULL
  function() {
    if (!is.null(generator)) return(generator)
    # (DBI need not be attached: its generics are found from here)
    where <- new.env(parent = asNamespace("DBI"))
    generator <<- methods::setClass("sdcOtherConnection", contains = "DBIConnection",
      slots = c(inner = "DBIConnection", log = "environment"), where = where
    )
    sent <- function(conn, what) conn@log$sent <- c(conn@log$sent, what)
    # (methods with the generics' arguments: each forwards to SQLite)
    for (f in c("dbGetQuery", "dbExecute", "dbSendQuery", "dbSendStatement")) {
      methods::setMethod(f, c("sdcOtherConnection", "character"), local({
        fn <- getExportedValue("DBI", f)
        function(conn, statement, ...) {
          sent(conn, as.character(statement))
          fn(conn@inner, statement, ...)
        }
      }), where = where)
    }
    for (f in c("dbExistsTable", "dbRemoveTable", "dbListFields")) {
      methods::setMethod(f, "sdcOtherConnection", local({
        fn <- getExportedValue("DBI", f)
        function(conn, name, ...) fn(conn@inner, name, ...)
      }), where = where)
    }
    methods::setMethod("dbWriteTable", "sdcOtherConnection", function(conn, name, value, ...) {
      DBI::dbWriteTable(conn@inner, name, value, ...)
    }, where = where)
    for (f in c("dbBegin", "dbCommit", "dbRollback")) {
      methods::setMethod(f, "sdcOtherConnection", local({
        fn <- getExportedValue("DBI", f)
        op <- f
        function(conn, ...) {
          sent(conn, op)
          fn(conn@inner, ...)
        }
      }), where = where)
    }
    methods::setMethod("dbIsValid", "sdcOtherConnection", function(dbObj, ...) DBI::dbIsValid(dbObj@inner), where = where)
    # dbplyr's current interface, with its SQL of no particular database
    registerS3method("dbplyr_edition", "sdcOtherConnection", function(con) 2L, envir = asNamespace("dbplyr"))
    generator
  }
})

db_table_counter <- local({
  i <- 0L
  function() {
    i <<- i + 1L
    i
  }
})

# A fresh table name, dropped at the end of the calling test.
local_name <- function(con, prefix = "t", env = parent.frame()) {
  name <- sprintf("sdc_test_%s_%d_%d", prefix, Sys.getpid(), db_table_counter())
  withr::defer(if (DBI::dbExistsTable(con, name)) DBI::dbRemoveTable(con, name), envir = env)
  name
}

local_table <- function(con, df, env = parent.frame()) {
  name <- local_name(con, "in", env = env)
  DBI::dbWriteTable(con, name, df, row.names = FALSE)
  dplyr::tbl(con, name)
}

# One string per row naming its combination of `keys` (NA apart from any
# value), to match records and cells.
key_str <- function(d, keys = db_keys) {
  do.call(paste, c(lapply(d[keys], function(x) ifelse(is.na(x), "\001NA", as.character(x))), sep = "\r"))
}

# The certificate without the realised changes (which depend on the draw).
certificate_of_plan <- function(cert) {
  cert[setdiff(names(cert), c("records_changed", "cells_changed"))]
}

by_id <- function(d, id) {
  d <- as.data.frame(d, stringsAsFactors = FALSE)
  d <- d[order(d[[id]]), , drop = FALSE]
  rownames(d) <- NULL
  d
}


# Releases of `a` and `b` (lazy tables of the same records, in one database
# or two) from the same seed: the same moves and the same released table.
# Returns both releases; their output tables are dropped at the end of the
# calling test.
expect_same_release <- function(a, b, seed, xi = 0.3, env = parent.frame()) {
  rel <- lapply(list(a, b), function(tb) {
    out <- local_name(dbplyr::remote_con(tb), "same", env = env)
    set.seed(seed)
    ifpr(tb, db_keys, xi = xi, id = "pid", name = out)
  })
  testthat::expect_identical(rel[[1]]$moves, rel[[2]]$moves)
  testthat::expect_identical(by_id(dplyr::collect(rel[[1]]$data), "pid"), by_id(dplyr::collect(rel[[2]]$data), "pid"))
  invisible(rel)
}

# What the release must be, computed by brute force in R from the original
# records and the drawn moves: rank each cell's records by id, and give the
# records whose (cell, rank) moved the keys of their new cell.
expected_release <- function(df, rel, id) {
  keys <- rel$cells$keys
  cells <- rel$cells$cells
  cell <- match(key_str(df, keys), key_str(cells, keys))
  if (rel$cells$na == "exclude") cell[!stats::complete.cases(df[keys])] <- NA
  o <- order(cell, df[[id]], na.last = TRUE)
  rank <- integer(nrow(df))
  rank[o] <- sequence(rle(cell[o])$lengths)
  mv <- match(paste(cell, rank), paste(rel$moves$cell, rel$moves$rank))
  moved <- which(!is.na(cell) & !is.na(mv))
  out <- df
  for (k in keys) out[[k]][moved] <- cells[[k]][rel$moves$new_cell[mv[moved]]]
  list(data = out, cell = cell, moved = moved)
}

# A SQLite database in a file (it outlives a connection closed in the middle
# of a release), with its path; removed at the end of the calling test.
local_sqlite_file <- function(env = parent.frame()) {
  if (!pg_required()) testthat::skip_if_not_installed("RSQLite")
  path <- withr::local_tempfile(fileext = ".sqlite", .local_envir = env)
  con <- DBI::dbConnect(RSQLite::SQLite(), path)
  withr::defer(if (DBI::dbIsValid(con)) DBI::dbDisconnect(con), envir = env)
  list(con = con, path = path, reconnect = function() {
    new <- DBI::dbConnect(RSQLite::SQLite(), path)
    withr::defer(if (DBI::dbIsValid(new)) DBI::dbDisconnect(new), envir = env)
    new
  })
}

# A new connection to the PostgreSQL server of the run (its own session),
# closed at the end of the calling test.
local_pg_connection <- function(env = parent.frame()) {
  s <- skip_or_fail_without_postgres()
  withr::local_options(list(rlib_warning_verbosity = "quiet"), .local_envir = env)
  con <- DBI::dbConnect(RPostgreSQL::PostgreSQL(), host = "localhost", port = s$port, user = "postgres", dbname = "postgres")
  withr::defer(try(DBI::dbDisconnect(con), silent = TRUE), envir = env)
  con
}

# Every relation of the database that a user could see or lose (tables,
# views, indexes, in every schema, temporary ones of this connection
# included), with kind, and the full contents of every table in a fixed
# order: two states are identical only if nothing was created, dropped or
# changed.
db_user_state <- function(con) {
  if (inherits(con, "SQLiteConnection")) {
    dbs <- DBI::dbGetQuery(con, "PRAGMA database_list")$name
    rel <- do.call(rbind, lapply(dbs, function(db) {
      master <- if (db == "temp") "sqlite_temp_master" else paste0(DBI::dbQuoteIdentifier(con, db), ".sqlite_master")
      r <- DBI::dbGetQuery(con, paste("SELECT type, name FROM", master, "WHERE name NOT LIKE 'sqlite_%'"))
      if (nrow(r) > 0) r$schema <- db else r$schema <- character()
      r
    }))
  } else {
    rel <- DBI::dbGetQuery(con, paste(
      "SELECT c.relkind::text AS type, c.relname AS name, n.nspname AS schema FROM pg_class c",
      "JOIN pg_namespace n ON n.oid = c.relnamespace",
      "WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'",
      "AND (n.nspname NOT LIKE 'pg_temp%' OR n.oid = pg_my_temp_schema())"
    ))
  }
  rel <- rel[order(rel$schema, rel$name, rel$type), c("schema", "name", "type")]
  rownames(rel) <- NULL
  tables <- rel[rel$type %in% c("table", "r"), , drop = FALSE]
  contents <- lapply(seq_len(nrow(tables)), function(i) {
    d <- DBI::dbGetQuery(con, paste(
      "SELECT * FROM", paste(DBI::dbQuoteIdentifier(con, c(tables$schema[i], tables$name[i])), collapse = ".")
    ))
    d <- d[do.call(order, unname(as.list(d))), , drop = FALSE]
    rownames(d) <- NULL
    d
  })
  names(contents) <- paste(tables$schema, tables$name, sep = ".")
  list(relations = rel, contents = contents)
}

# Relations a release left behind: its working tables start with sdc_tmp_.
db_leftovers <- function(con) {
  st <- db_user_state(con)$relations
  st$name[grepl("^sdc_tmp_", st$name)]
}
