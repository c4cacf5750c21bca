# The contract of the release inside a database (issue 19), on SQLite and
# PostgreSQL: for every kind of source query (a table, a filter, raw SQL, a
# join) x every output name (each table the query reads, in several cases
# and as a string, DBI::Id() or in_schema(); an unrelated existing table; a
# new one) x overwrite TRUE and FALSE, the release is either refused with a
# classed error or completed; a release that fails at any step, by an error
# or by losing its connection, is refused with a classed error. Afterwards
# every table of the user is exactly as before (the list of relations and
# the full contents of every table), but for the output of a completed
# release, and no working table is left behind. A release interrupted (by
# the user's Ctrl-C) at any step leaves everything as it was too.

contract_people <- function() {
  df <- db_people(300, seed = 90)
  df$pid <- df$pid + 0L
  df
}

contract_tables <- c(persons = "ct_persons", other = "ct_other", old = "ct_released_old", new = "ct_brand_new")

contract_setup <- function(con, env = parent.frame()) {
  df <- contract_people()
  for (t in contract_tables) if (DBI::dbExistsTable(con, t)) DBI::dbRemoveTable(con, t)
  DBI::dbWriteTable(con, contract_tables[["persons"]], df, row.names = FALSE)
  DBI::dbWriteTable(con, contract_tables[["other"]], data.frame(pid = df$pid, weight = seq_len(nrow(df)) / 7), row.names = FALSE)
  DBI::dbWriteTable(con, contract_tables[["old"]], data.frame(a = 1:3, b = c("x", "y", "z")), row.names = FALSE)
  withr::defer(suppressWarnings(for (t in contract_tables) try(if (DBI::dbExistsTable(con, t)) DBI::dbRemoveTable(con, t), silent = TRUE)), envir = env)
  df
}

contract_sources <- function(con) {
  p <- contract_tables[["persons"]]
  list(
    table = list(tbl = dplyr::tbl(con, p), reads = p),
    filter = list(tbl = dplyr::filter(dplyr::tbl(con, p), pid > 10L), reads = p),
    sql = list(tbl = dplyr::tbl(con, dbplyr::sql(paste("SELECT * FROM", p))), reads = p),
    join = list(
      tbl = dplyr::left_join(dplyr::tbl(con, p), dplyr::tbl(con, contract_tables[["other"]]), by = "pid"),
      reads = c(p, contract_tables[["other"]])
    )
  )
}

# Output names: each table read, in three cases, as a string, and upper
# case as DBI::Id() and in_schema(); the unrelated existing table in two
# cases; a new table.
contract_names <- function(reads, schema) {
  out <- list()
  for (t in reads) {
    out <- c(out, list(t, toupper(t), tools::toTitleCase(t), DBI::Id(table = toupper(t)), dbplyr::in_schema(schema, t)))
  }
  c(out, list(contract_tables[["old"]], toupper(contract_tables[["old"]]), contract_tables[["new"]]))
}

name_table <- function(nm) db_target(nm)$table

for (backend in c("SQLite", "PostgreSQL")) {
  test_that(paste0(backend, ": every source x output name x overwrite is refused with a classed error or completed, nothing else changes"), {
    con <- if (backend == "SQLite") local_sqlite_file()$con else local_pg_connection()
    df <- contract_setup(con)
    schema <- if (backend == "SQLite") "main" else "public"
    before <- db_user_state(con)
    outcomes <- character()
    for (s in names(contract_sources(con))) {
      src <- contract_sources(con)[[s]]
      for (nm in contract_names(src$reads, schema)) {
        for (ow in c(TRUE, FALSE)) {
          tab <- name_table(nm)
          info <- paste(backend, s, tab, class(nm)[1], "overwrite", ow)
          reads_it <- tolower(tab) %in% tolower(src$reads)
          existing <- before$relations$name[before$relations$schema == schema]
          exists <- if (backend == "SQLite") tolower(tab) %in% tolower(existing) else tab %in% existing
          set.seed(3)
          res <- tryCatch(ifpr(src$tbl, db_keys, xi = 0.3, id = "pid", name = nm, overwrite = ow), error = identity)
          if (reads_it) {
            expect_s3_class(res, "sdcRisk_error_db_source_table")
            outcome <- "refused: reads it"
          } else if (exists && !ow) {
            expect_s3_class(res, "sdcRisk_error_db_table_exists")
            outcome <- "refused: exists"
          } else {
            expect_s3_class(res, "sdc_release_db")
            outcome <- "completed"
            got <- by_id(dplyr::collect(res$data), "pid")
            want <- by_id(expected_release(dplyr::collect(src$tbl), res, "pid")$data, "pid")
            expect_identical(got, want, info = info)
            # the output replaced what was there; everything else is as before
            after <- db_user_state(con)
            keep <- tolower(after$relations$name) != tolower(tab)
            expect_identical(after$relations[keep, ], before$relations[tolower(before$relations$name) != tolower(tab), ],
              ignore_attr = TRUE, info = info)
            others <- !grepl(paste0("\\.", tab, "$"), names(before$contents), ignore.case = TRUE)
            expect_identical(after$contents[names(before$contents)[others]], before$contents[others], info = info)
            DBI::dbExecute(con, paste("DROP TABLE", db_target_sql(con, db_target(nm))))
            if (tolower(tab) == contract_tables[["old"]] && (backend == "SQLite" || tab == contract_tables[["old"]])) {
              DBI::dbWriteTable(con, contract_tables[["old"]], before$contents[[paste0(schema, ".", contract_tables[["old"]])]], row.names = FALSE)
            }
          }
          if (!inherits(res, "sdc_release_db")) expect_s3_class(res, "sdcRisk_error")
          expect_identical(db_user_state(con), before, info = info)
          outcomes <- c(outcomes, outcome)
        }
      }
    }
    # every kind of outcome was reached
    expect_setequal(unique(outcomes), c("refused: reads it", "refused: exists", "completed"))
    expect_length(db_leftovers(con), 0)
  })

  test_that(paste0(backend, ": a release that fails at any step, by an error, an interrupt or a lost connection, changes nothing"), {
    steps <- c("begin", "id_checked", "counted", "drawn", "uploaded", "movers", "written", "dropped", "renamed", "commit")
    reached <- character()
    for (mode in c("error", "interrupt", "lost")) {
      for (ow in c(TRUE, FALSE)) {
        for (step in steps) {
          if (step == "dropped" && !ow) next
          local({
            iteration <- environment()
            if (backend == "SQLite") {
              db <- local_sqlite_file()
              con <- db$con
              reconnect <- db$reconnect
            } else {
              con <- local_pg_connection()
              reconnect <- function() local_pg_connection(env = iteration)
              pid <- DBI::dbGetQuery(con, "SELECT pg_backend_pid() AS p")$p
              admin <- local_pg_connection()
            }
            contract_setup(con)
            before <- db_user_state(con)
            target <- if (ow) contract_tables[["old"]] else contract_tables[["new"]]
            info <- paste(backend, mode, "overwrite", ow, "fails at", step)
            withr::local_options(sdcRisk.db_step_hook = function(s, con) {
              if (s != step) return()
              reached <<- c(reached, s)
              if (mode == "error") stop("injected failure at ", s)
              if (mode == "interrupt") rlang::interrupt()
              if (backend == "SQLite") {
                suppressWarnings(DBI::dbDisconnect(con))
              } else {
                DBI::dbGetQuery(admin, paste0("SELECT pg_terminate_backend(", pid, ") AS t"))
              }
            })
            set.seed(4)
            # (RPostgreSQL warns about each statement it cannot send on a lost connection)
            res <- tryCatch(
              suppressWarnings(ifpr(dplyr::tbl(con, contract_tables[["persons"]]), db_keys, xi = 0.3, id = "pid", name = target, overwrite = ow)),
              error = identity, interrupt = identity
            )
            withr::local_options(sdcRisk.db_step_hook = NULL)
            if (mode == "interrupt") {
              expect_s3_class(res, "interrupt")
            } else {
              expect_true(inherits(res, "sdcRisk_error_db_write"), info = paste(info, conditionMessage(res)))
            }
            check <- if (mode == "lost") reconnect() else con
            expect_identical(db_user_state(check), before, info = info)
            expect_length(db_leftovers(check), 0)
            if (mode == "lost" && backend == "PostgreSQL") contract_setup(check)
          })
        }
      }
    }
    # the hook was reached at every step in both modes
    expect_setequal(unique(reached), steps)
  })
}
