# ifpr() on a lazy table (db-release.R): the database path against the
# in-memory path on the same data, on SQLite (every run) and on a real
# PostgreSQL server started by helper-postgres.R (CI; skipped elsewhere when
# PostgreSQL is missing).

for (backend in c("SQLite", "PostgreSQL")) {
  test_that(paste0(backend, ": ifpr() gives the in-memory plan and certificate, and the release the moves prescribe"), {
    con <- local_db(backend)
    for (seed in c(1, 2)) {
      df <- db_people(4000, seed = seed)
      tb <- local_table(con, df)
      out <- local_name(con, "out")
      set.seed(100 + seed)
      rel <- ifpr(tb, db_keys, xi = 0.3, id = "pid", name = out,
        partition = list(sex = "keep", age = c(0, 18, 40, 65, Inf)))
      mem <- ifpr(df, db_keys, xi = 0.3, partition = list(sex = "keep", age = c(0, 18, 40, 65, Inf)))
      expect_identical(rel$cells$cells, mem$cells$cells)
      expect_identical(rel$plan$block_start, mem$plan$block_start)
      expect_identical(rel$plan$block_cells, mem$plan$block_cells)
      expect_identical(rel$plan$theta, mem$plan$theta)
      expect_identical(certificate_of_plan(rel$certificate), certificate_of_plan(mem$certificate))
      expect_identical(rel$sets, mem$sets)
      expect_s3_class(rel, "sdc_release_db")
      expect_lte(rel$certificate$risk, 0.3)

      got <- by_id(dplyr::collect(rel$data), "pid")
      ref <- expected_release(df, rel, "pid")
      want <- by_id(ref$data, "pid")
      # same rows, same columns in the same order, same types
      expect_identical(names(got), names(df))
      expect_identical(got, want, info = paste("seed", seed))
      # only the keys of records of blocked cells changed, each within its block
      orig <- by_id(df, "pid")
      expect_identical(got[c("income", "pid")], orig[c("income", "pid")])
      changed <- which(Reduce(`|`, lapply(db_keys, function(k) got[[k]] != orig[[k]])))
      expect_identical(length(changed), nrow(rel$moves))
      expect_identical(rel$certificate$records_changed, nrow(rel$moves))
      block_of <- plan_block_of(rel$plan)
      expect_false(anyNA(block_of[rel$moves$cell]))
      expect_identical(block_of[rel$moves$cell], block_of[rel$moves$new_cell])
      expect_true(all(rel$moves$cell != rel$moves$new_cell))
      # the released counts, counted again by the database
      cf_new <- cell_frequencies(rel$data, db_keys)
      counts <- rel$cells$cells$count
      s_new <- counts - tabulate(rel$moves$cell, length(counts)) + tabulate(rel$moves$new_cell, length(counts))
      s_db <- cf_new$cells$count[match(key_str(rel$cells$cells), key_str(cf_new$cells))]
      s_db[is.na(s_db)] <- 0L
      expect_identical(s_db, as.integer(s_new))
      expect_identical(rel$certificate$cells_changed, sum(s_new != counts))
    }
  })

  test_that(paste0(backend, ": missing keys are never moved (na = \"exclude\") or form a category"), {
    con <- local_db(backend)
    df <- db_people(2500, seed = 5, na_keys = TRUE)
    tb <- local_table(con, df)
    for (na in c("exclude", "category")) {
      out <- local_name(con, "out")
      set.seed(9)
      rel <- ifpr(tb, db_keys, xi = 0.4, id = "pid", name = out, na = na)
      mem <- ifpr(df, db_keys, xi = 0.4, na = na)
      expect_identical(certificate_of_plan(rel$certificate), certificate_of_plan(mem$certificate))
      got <- by_id(dplyr::collect(rel$data), "pid")
      ref <- expected_release(df, rel, "pid")
      expect_identical(got, by_id(ref$data, "pid"), info = na)
      if (na == "exclude") {
        orig <- by_id(df, "pid")
        incomplete <- !stats::complete.cases(orig[db_keys])
        expect_identical(got[incomplete, ], orig[incomplete, ])
      } else {
        # NA cells take part: some record moved into or out of one
        na_cells <- which(!stats::complete.cases(rel$cells$cells[db_keys]))
        expect_true(any(c(rel$moves$cell, rel$moves$new_cell) %in% na_cells))
      }
    }
  })

  test_that(paste0(backend, ": the same seed gives the same release; a bad id or an existing table stops before writing"), {
    con <- local_db(backend)
    df <- db_people(1500, seed = 3)
    tb <- local_table(con, df)
    a <- expect_same_release(tb, tb, seed = 42)[[1]]$table

    # an existing table is kept unless overwrite = TRUE
    expect_error(ifpr(tb, db_keys, xi = 0.3, id = "pid", name = a), class = "sdcRisk_error_db_table_exists")
    expect_error(ifpr(tb, db_keys, xi = 0.3, id = "pid", name = dbplyr::remote_name(tb), overwrite = TRUE),
      class = "sdcRisk_error_db_table_exists")
    expect_identical(by_id(dplyr::collect(tb), "pid"), by_id(df, "pid"))
    set.seed(43)
    rc <- ifpr(tb, db_keys, xi = 0.3, id = "pid", name = a, overwrite = TRUE)
    expect_identical(by_id(dplyr::collect(rc$data), "pid"), by_id(expected_release(df, rc, "pid")$data, "pid"))

    bad_na <- df
    bad_na$pid[7] <- NA
    bad_dup <- df
    bad_dup$pid[8] <- bad_dup$pid[9]
    for (bad in list(bad_na, bad_dup)) {
      tbad <- local_table(con, bad)
      out <- local_name(con, "bad")
      expect_error(ifpr(tbad, db_keys, xi = 0.3, id = "pid", name = out), class = "sdcRisk_error_db_id")
      expect_false(DBI::dbExistsTable(con, out))
    }
    out <- local_name(con, "bad")
    expect_error(ifpr(tb, db_keys, xi = 0.3, name = out), class = "sdcRisk_error_db_id")
    expect_error(ifpr(tb, db_keys, xi = 0.3, id = "nope", name = out), class = "sdcRisk_error_db_id")
    expect_error(ifpr(tb, db_keys, xi = 0.3, id = "age", name = out), class = "sdcRisk_error_db_id")
    expect_error(ifpr(tb, c(db_keys, "nope"), xi = 0.3, id = "pid", name = out), class = "sdcRisk_error_unknown_key")
    expect_false(DBI::dbExistsTable(con, out))
  })
}

test_that("SQLite and PostgreSQL write the same released table for the same seed", {
  pg <- local_db("PostgreSQL")
  lite <- local_db("SQLite")
  df <- db_people(5000, seed = 21, na_keys = TRUE)
  released <- expect_same_release(local_table(lite, df), local_table(pg, df), seed = 2024, xi = 0.25)
  expect_identical(released[[1]]$certificate, released[[2]]$certificate)
  expect_gt(nrow(released[[1]]$moves), 0)
})

test_that("errors of the database path are worded as documented", {
  con <- local_db("SQLite")
  df <- db_people(300, seed = 4)
  tb <- local_table(con, df)
  df$pid[2] <- df$pid[1]
  df$pid[3] <- NA
  dup <- local_table(con, df[-3, ])
  miss <- local_table(con, df[-2, ])
  DBI::dbWriteTable(con, "taken", data.frame(x = 1))
  expect_snapshot(error = TRUE, {
    ifpr(tb, db_keys, xi = 0.3, name = "out")
    ifpr(tb, db_keys, xi = 0.3, id = "age", name = "out")
    ifpr(dup, db_keys, xi = 0.3, id = "pid", name = "out")
    ifpr(miss, db_keys, xi = 0.3, id = "pid", name = "out")
    ifpr(tb, db_keys, xi = 0.3, id = "pid", name = "taken")
    ifpr(tb, db_keys, xi = 0.3, id = "pid")
  })
})

# Issue 19: a release never destroys or changes a table it reads, and its
# working columns and tables never collide with the user's.
test_that("SQLite: ifpr() for a sample gives the in-memory plan and certificate of a target who may not be in the file", {
  con <- local_db("SQLite")
  df <- db_people(3000, seed = 5)
  tb <- local_table(con, df)
  cells <- cell_frequencies(df, db_keys)$cells
  pop <- transform(cells, count = count * 3L + 1L)
  set.seed(6)
  rel <- ifpr(tb, db_keys, xi = 0.2, id = "pid", name = local_name(con, "out"),
    population = pop, target_in_file = "unknown")
  mem <- ifpr(df, db_keys, xi = 0.2, population = pop, target_in_file = "unknown")
  expect_identical(rel$plan$theta, mem$plan$theta)
  expect_identical(certificate_of_plan(rel$certificate), certificate_of_plan(mem$certificate))
  expect_identical(rel$certificate$target_in_file, "unknown")
  expect_error(ifpr(tb, db_keys, xi = 0.2, id = "pid", name = local_name(con, "out2"), target_in_file = "unknown"),
               class = "sdcRisk_error_population")
})

for (backend in c("SQLite", "PostgreSQL")) {
  test_that(paste0(backend, ": a table the source query reads is refused as output, whatever its form or case"), {
    con <- local_db(backend)
    df <- db_people(400, seed = 31)
    persons <- local_name(con, "persons")
    other <- local_name(con, "other")
    view <- local_name(con, "view")
    DBI::dbWriteTable(con, persons, df, row.names = FALSE)
    DBI::dbWriteTable(con, other, data.frame(pid = df$pid, weight = 1), row.names = FALSE)
    DBI::dbExecute(con, paste("CREATE VIEW", DBI::dbQuoteIdentifier(con, view), "AS SELECT * FROM", DBI::dbQuoteIdentifier(con, persons)))
    withr::defer(DBI::dbExecute(con, paste("DROP VIEW", DBI::dbQuoteIdentifier(con, view))))
    schema <- if (backend == "SQLite") "main" else "public"
    before <- db_user_state(con)
    sources <- list(
      filter = dplyr::filter(dplyr::tbl(con, persons), pid > 10),
      sql = dplyr::tbl(con, dbplyr::sql(paste("SELECT * FROM", persons))),
      join = dplyr::left_join(dplyr::tbl(con, persons), dplyr::tbl(con, other), by = "pid"),
      view = dplyr::tbl(con, view),
      view_sql = dplyr::tbl(con, dbplyr::sql(paste("SELECT * FROM", view)))
    )
    names_of <- list(
      filter = persons, sql = toupper(persons), join = other, view = persons, view_sql = tools::toTitleCase(persons)
    )
    for (s in names(sources)) {
      for (nm in list(names_of[[s]], DBI::Id(table = toupper(names_of[[s]])), dbplyr::in_schema(schema, names_of[[s]]))) {
        for (ow in c(TRUE, FALSE)) {
          expect_error(
            ifpr(sources[[s]], db_keys, xi = 0.3, id = "pid", name = nm, overwrite = ow),
            class = "sdcRisk_error_db_source_table", info = paste(s, ow)
          )
        }
      }
    }
    expect_identical(db_user_state(con), before)
  })

  test_that(paste0(backend, ": columns named like working columns are released as they were"), {
    con <- local_db(backend)
    df <- db_people(1500, seed = 32)
    taken <- c("sdc_rank__", "sdc_moved__", "sdc_new__1", "sdc_id", "sdc_cell", "sdc_rank", "sdc_new_1", "sdc_key_1", "sdc_na_1", "sdc_n")
    for (v in taken) df[[v]] <- seq_len(nrow(df)) * 7L
    tb <- local_table(con, df)
    out <- local_name(con, "out")
    set.seed(77)
    rel <- ifpr(tb, db_keys, xi = 0.3, id = "pid", name = out)
    expect_gt(nrow(rel$moves), 0)
    got <- by_id(dplyr::collect(rel$data), "pid")
    expect_identical(names(got), names(df))
    expect_identical(got, by_id(expected_release(df, rel, "pid")$data, "pid"))
    expect_identical(got[taken], by_id(df, "pid")[taken])
    # an id called like a working column works too
    df2 <- df[setdiff(names(df), "sdc_id")]
    names(df2)[names(df2) == "pid"] <- "sdc_id"
    tb2 <- local_table(con, df2)
    out2 <- local_name(con, "out")
    set.seed(78)
    rel2 <- ifpr(tb2, db_keys, xi = 0.3, id = "sdc_id", name = out2)
    expect_identical(by_id(dplyr::collect(rel2$data), "sdc_id"), by_id(expected_release(df2, rel2, "sdc_id")$data, "sdc_id"))
  })

  test_that(paste0(backend, ": working tables are temporary, invisible to other sessions, and gone afterwards"), {
    con <- local_db(backend)
    df <- db_people(1200, seed = 33)
    tb <- local_table(con, df)
    out <- local_name(con, "out")
    seen <- list()
    withr::local_options(sdcRisk.db_step_hook = function(step, con) {
      if (step != "movers") return()
      if (backend == "PostgreSQL") {
        seen$here <<- DBI::dbGetQuery(con, "SELECT relname, relpersistence::text AS relpersistence FROM pg_class WHERE relname LIKE 'sdc_tmp_%' AND relkind = 'r'")
        other <- local_pg_connection()
        seen$other <<- DBI::dbGetQuery(other, "SELECT relname FROM pg_class WHERE relname LIKE 'sdc_tmp_%'")$relname
      } else {
        seen$here <<- DBI::dbGetQuery(con, "SELECT name AS relname, 't' AS relpersistence FROM sqlite_temp_master WHERE type = 'table' AND name LIKE 'sdc_tmp_%'")
        seen$main <<- DBI::dbGetQuery(con, "SELECT name FROM sqlite_master WHERE name LIKE 'sdc_tmp_%'")$name
      }
    })
    set.seed(5)
    rel <- ifpr(tb, db_keys, xi = 0.3, id = "pid", name = out)
    expect_gt(nrow(rel$moves), 0)
    # (PostgreSQL: R names the moved records of cells of up to 3 records and
    # uploads them as the movers; here no larger cell has a move, so no
    # moves go up)
    expect_setequal(
      sub("^sdc_tmp_[0-9]+_[0-9]+_", "", seen$here$relname),
      if (backend == "PostgreSQL") c("counts", "movers") else c("counts", "moves", "movers")
    )
    expect_true(all(seen$here$relpersistence == "t"))
    expect_length(seen$other, 0)
    expect_length(seen$main, 0)
    expect_length(db_leftovers(con), 0)
  })

  test_that(paste0(backend, ": a release inside the user's open transaction neither commits nor loses it"), {
    con <- local_db(backend)
    df <- db_people(800, seed = 34)
    tb <- local_table(con, df)
    scratch <- local_name(con, "scratch")
    DBI::dbWriteTable(con, scratch, data.frame(x = 1L))
    out <- local_name(con, "out")
    DBI::dbBegin(con)
    DBI::dbExecute(con, paste("INSERT INTO", scratch, "VALUES (2)"))
    set.seed(6)
    rel <- ifpr(tb, db_keys, xi = 0.3, id = "pid", name = out)
    expect_identical(nrow(dplyr::collect(rel$data)), nrow(df))
    # still the user's transaction: rolling it back undoes both
    DBI::dbRollback(con)
    expect_false(DBI::dbExistsTable(con, out))
    expect_identical(DBI::dbGetQuery(con, paste("SELECT x FROM", scratch))$x, 1L)
  })
}

test_that("the database release shows its steps only when R is interactive", {
  con <- local_db("SQLite")
  df <- db_people(500, seed = 35)
  tb <- local_table(con, df)
  set.seed(7)
  expect_silent(ifpr(tb, db_keys, xi = 0.3, id = "pid", name = local_name(con, "out")))
  withr::local_options(rlang_interactive = TRUE)
  set.seed(7)
  msgs <- testthat::capture_messages(ifpr(tb, db_keys, xi = 0.3, id = "pid", name = local_name(con, "out")))
  steps <- c("Checking `id`", "Counting the cells", "Designing the plan", "Uploading", "Finding the moved records",
    "Writing the released table", "Naming it", "Committing")
  for (step in steps) {
    expect_true(any(grepl(step, msgs, fixed = TRUE)), info = step)
  }
})
