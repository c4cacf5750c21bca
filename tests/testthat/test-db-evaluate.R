# release_risk() and release_utility() of a release in a database
# (db-evaluate.R), from counts made by the database, against the same
# release evaluated record by record in memory.

for (backend in c("SQLite", "PostgreSQL")) {
  test_that(paste0(backend, ": release_risk() and release_utility() from counts equal the record-level evaluation"), {
    con <- local_db(backend)
    df <- db_people(3000, seed = 8, na_keys = TRUE)
    tb <- local_table(con, df)
    out <- local_name(con, "out")
    set.seed(5)
    rel <- ifpr(tb, db_keys, xi = 0.3, id = "pid", name = out)
    # the same release as an in-memory release object: records in id order
    orig <- by_id(df, "pid")
    got <- by_id(dplyr::collect(rel$data), "pid")
    cf <- cell_frequencies(orig, db_keys)
    new_cell <- match(key_str(got), key_str(cf$cells))
    new_cell[is.na(cf$cell_id)] <- NA
    mem <- rel
    class(mem) <- c("sdc_release", "sdc_release_any")
    mem$data <- got
    mem$cells <- cf
    mem$new_cell <- new_cell
    expect_identical(release_risk(rel), release_risk(mem))
    vars <- list("sex", "age", "region", "income", c("sex", "region"), c("age", "status", "income"))
    expect_identical(release_utility(rel, vars), release_utility(mem, vars))
    expect_identical(release_utility(rel, db_keys), release_utility(mem, db_keys))
  })
}
