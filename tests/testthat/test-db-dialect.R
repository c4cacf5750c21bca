# What differs between backends (db-dialect.R): the catalogue's guarantee
# of an id, the id check's query, and the default methods that serve a DBI
# backend the package does not know.

for (backend in c("SQLite", "PostgreSQL")) {
  test_that(paste0(backend, ": an id the database keeps unique and never missing is trusted, anything else is checked"), {
    con <- local_db(backend)
    df <- db_people(400, seed = 8)
    cols <- "sex TEXT, age INTEGER, region TEXT, status TEXT, income DOUBLE PRECISION"
    test_env <- environment()
    declared <- function(def, extra = NULL) {
      name <- local_name(con, "decl", env = test_env)
      DBI::dbExecute(con, sprintf("CREATE TABLE %s (%s, %s)", name, cols, def))
      for (e in extra) DBI::dbExecute(con, sprintf(e, name))
      DBI::dbWriteTable(con, name, df, append = TRUE, row.names = FALSE)
      dplyr::tbl(con, name)
    }
    db <- db_dialect(con)
    pk <- declared("pid INTEGER PRIMARY KEY")
    expect_true(db_id_declared(db, pk, "pid"))
    expect_true(db_id_declared(db, declared("pid INTEGER NOT NULL UNIQUE"), "pid"))
    expect_true(db_id_declared(db, declared("pid INTEGER NOT NULL", "CREATE UNIQUE INDEX %1$s_u ON %1$s (pid)"), "pid"))
    expect_false(db_id_declared(db, declared("pid INTEGER UNIQUE"), "pid")) # NULL allowed
    expect_false(db_id_declared(db, declared("pid INTEGER"), "pid"))
    expect_false(db_id_declared(db, declared("pid INTEGER NOT NULL, PRIMARY KEY (pid, sex)"), "pid"))
    expect_false(db_id_declared(db, declared("pid INTEGER NOT NULL",
      "CREATE UNIQUE INDEX %1$s_p ON %1$s (pid) WHERE age > 10"), "pid"))
    expect_false(db_id_declared(db, dplyr::filter(pk, age > 10), "pid")) # a query, not the table
    expect_false(db_id_declared(db, pk, "age"))
    if (backend == "SQLite") {
      # DESC makes an ordinary key, which SQLite lets be NULL
      expect_false(db_id_declared(db, declared("pid INTEGER PRIMARY KEY DESC"), "pid"))
      expect_false(db_id_declared(db, declared("pid TEXT PRIMARY KEY"), "pid"))
    }
    # the release from a declared table is the release from an undeclared one
    released <- expect_same_release(pk, local_table(con, df), seed = 5)
    expect_gt(nrow(released[[1]]$moves), 0)
  })
}

test_that("PostgreSQL: the id check of an undeclared id passes without a warning", {
  con <- local_db("PostgreSQL")
  tb <- local_table(con, db_people(500, seed = 3))
  # (local_db() quietens rlang's warnings, which hid one here; dbplyr's
  # note on RPostgreSQL's interface is not the package's)
  withr::local_options(list(rlib_warning_verbosity = "default"))
  seen <- character()
  got <- withCallingHandlers(check_db_id(db_dialect(con), tb, "pid"), warning = function(w) {
    seen <<- c(seen, conditionMessage(w))
    invokeRestart("muffleWarning")
  })
  expect_identical(grep("old dbplyr interface", seen, value = TRUE, invert = TRUE), character())
  expect_false(got$int32)
})

test_that("a DBI backend without methods of its own gets the default methods, and the release the moves prescribe", {
  con <- local_other_db()
  lite <- local_db("SQLite")
  expect_identical(class(db_dialect(con)), "sdc_db")
  expect_identical(class(db_dialect(lite)), c("sdc_db_sqlite", "sdc_db"))
  base <- db_people(3000, seed = 36, na_keys = TRUE)
  # integer ids of 32 bits (named in R) and text ids (ranked by the
  # database); xi = 0.1 moves records of cells of more than 3 records too
  ids <- list(integer = base$pid, text = sprintf("id%08d", base$pid))
  for (kind in names(ids)) {
    df <- base
    df$pid <- ids[[kind]]
    tb <- local_table(con, df)
    # (written before the seed is set: RSQLite draws its savepoints' names)
    tb_lite <- local_table(lite, df)
    for (xi in c(0.3, 0.1)) {
      info <- paste(kind, xi)
      con@log$sent <- NULL
      # the release SQLite writes for the same seed
      rel <- expect_same_release(tb, tb_lite, seed = 11, xi = xi)[[1]]
      sent <- other_db_statements(con)
      # DBI's transaction, and nothing of SQLite's own (savepoints, pragmas,
      # plans, rowids) nor PostgreSQL's
      expect_true(all(c("dbBegin", "dbCommit") %in% sent), info = info)
      expect_false(any(grepl("SAVEPOINT|PRAGMA|EXPLAIN|rowid|ANALYZE|SET ", sent)), info = info)
      counts <- grep("^CREATE TEMPORARY TABLE \"sdc_tmp_[0-9_]+counts\"", sent, value = TRUE)
      expect_length(counts, 1)
      expect_identical(grepl("ROW_NUMBER() OVER ()", counts, fixed = TRUE), kind == "text", info = info)
      if (xi == 0.1) expect_true(any(rel$cells$cells$count[rel$moves$cell] > 3), info = info)
      got <- by_id(dplyr::collect(rel$data), "pid")
      expect_identical(got, by_id(expected_release(df, rel, "pid")$data, "pid"), info = info)
    }
  }
  expect_length(db_leftovers(con@inner), 0)
})
