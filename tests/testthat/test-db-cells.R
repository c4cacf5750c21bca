# cell_frequencies() on a lazy table (db-cells.R): the database's counts
# against the counts in memory, on SQLite and on the PostgreSQL server of
# helper-postgres.R.

for (backend in c("SQLite", "PostgreSQL")) {
  test_that(paste0(backend, ": cell_frequencies() counts in the database as in memory"), {
    con <- local_db(backend)
    for (na in c("exclude", "category")) {
      df <- db_people(3000, seed = 11, na_keys = TRUE)
      tb <- local_table(con, df)
      cf_db <- cell_frequencies(tb, db_keys, na = na)
      cf_mem <- cell_frequencies(df, db_keys, na = na)
      expect_identical(cf_db$cells, cf_mem$cells)
      expect_identical(cf_db$n_records, cf_mem$n_records)
      expect_identical(cf_db$n_excluded, cf_mem$n_excluded)
      expect_identical(cf_db$n_singletons, cf_mem$n_singletons)
      expect_null(cf_db$cell_id)
    }
  })
}
