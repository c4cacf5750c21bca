# The moves and the moved records (db-movers.R): the IFPR law of the drawn
# moves, and every way of finding the moved records (by rowid or by id on
# SQLite; named in R from the counts, or ranked by the database, elsewhere)
# against brute force.

test_that("the moves follow the IFPR law: unbiased counts, exact variance, uniform ranks", {
  # cells of counts 1-4 in blocks of 2 to 5 cells, theta below each block's min
  counts <- c(1, 1, 2, 3, 1, 2, 2, 4, 3, 1, 1, 1, 4, 4, 2, 3, 1)
  cf <- cell_frequencies(data_with_counts(counts), "k")
  blocks <- list(1:2, 3:5, 6:9, 10:14, 15:17)
  theta <- c(0.9, 0.6, 1.5, 0.8, 0.4)
  plan <- pram_plan(cf, blocks, theta = theta)
  # exact E(S_j) = T_j and V(S_j) = sum_i T_i p_ji (1 - p_ji) (eq. 3.3, 3.6)
  v <- numeric(length(counts))
  for (b in seq_along(blocks)) {
    p <- pram_matrix(plan, b)
    v[blocks[[b]]] <- as.vector((p * (1 - p)) %*% counts[blocks[[b]]])
  }
  seed <- 77
  set.seed(seed)
  reps <- 4000
  s <- matrix(0, reps, length(counts))
  rank_t3 <- integer()
  ranks_ok <- TRUE
  for (r in seq_len(reps)) {
    mv <- draw_moves(plan)
    s[r, ] <- counts - tabulate(mv$cell, length(counts)) + tabulate(mv$new_cell, length(counts))
    rank_t3 <- c(rank_t3, mv$rank[counts[mv$cell] == 3])
    ranks_ok <- ranks_ok && all(mv$rank >= 1 & mv$rank <= counts[mv$cell]) &&
      !anyDuplicated(paste(mv$cell, mv$rank))
  }
  expect_true(ranks_ok)
  z <- (colMeans(s) - counts) / sqrt(v / reps)
  # two-sided, 0.1% family-wise
  expect_lt(max(abs(z)), stats::qnorm(1 - 0.001 / (2 * length(counts))), label = paste("max |z|, seed", seed))
  q <- rowSums(sweep(s, 2, counts)^2 / rep(v, each = reps))
  expect_lt(abs(mean(q) - length(counts)) / (stats::sd(q) / sqrt(reps)), 4, label = paste("variance z, seed", seed))
  # which record of a cell moves is uniform over its ranks
  chi <- suppressWarnings(stats::chisq.test(tabulate(rank_t3, 3)))
  expect_gt(chi$p.value, 0.001, label = paste("rank uniformity p, seed", seed))
})

for (backend in c("SQLite", "PostgreSQL")) {
  test_that(paste0(backend, ": ids from the counts (cells of up to 3) and from ranking the larger cells give the release the moves prescribe"), {
    con <- local_db(backend)
    base <- db_people(3000, seed = 36, na_keys = TRUE)
    # integer ids (cells of up to 3 records from the counts), and double and
    # text ids (up to 2; rank 2 of 3 by the ranking pass); xi = 0.1 blocks
    # cells of up to 9 records, all by the ranking pass
    ids <- list(
      integer = base$pid, double = base$pid + 0.5,
      text = sprintf("id%08d", base$pid)
    )
    for (kind in names(ids)) {
      for (xi in c(0.3, 0.1)) {
        for (na in c("exclude", "category")) {
          df <- base
          df$pid <- ids[[kind]]
          tb <- local_table(con, df)
          out <- local_name(con, "out")
          set.seed(11)
          rel <- ifpr(tb, db_keys, xi = xi, id = "pid", name = out, na = na)
          counts <- rel$cells$cells$count
          info <- paste(kind, xi, na)
          if (xi == 0.1) expect_true(any(counts[rel$moves$cell] > 3), info = info)
          got <- by_id(dplyr::collect(rel$data), "pid")
          expect_identical(got, by_id(expected_release(df, rel, "pid")$data, "pid"), info = info)
          expect_identical(certificate_of_plan(rel$certificate), certificate_of_plan(ifpr(df, db_keys, xi = xi, na = na)$certificate), info = info)
        }
      }
    }
  })
}

test_that("PostgreSQL: R names the moved records of cells of up to 3 records from the ids read with the counts", {
  con <- local_db("PostgreSQL")
  df <- db_people(2000, seed = 43)
  tb <- local_table(con, df)
  counted <- count_cells_release(db_dialect(con), tb, db_keys, "pid", "exclude")
  DBI::dbExecute(con, paste("DROP TABLE", db_quote(con, counted$table)))
  cells <- counted$cells$cells
  # brute force: each cell's ids in order
  ok <- stats::complete.cases(df[db_keys])
  sorted <- lapply(split(df$pid[ok], factor(key_str(df[ok, ]), levels = key_str(cells))), sort)
  expect_identical(lengths(sorted, use.names = FALSE), as.integer(cells$count))
  small <- which(cells$count <= 3)
  expect_true(all(c(1, 2, 3) %in% cells$count[small]))
  nth <- function(r) vapply(sorted[small], function(x) if (length(x) >= r) x[[r]] else NA_integer_, integer(1), USE.NAMES = FALSE)
  expect_identical(as.integer(counted$ids$sdc_lo[small]), nth(1))
  expect_identical(as.integer(counted$ids$sdc_mid[small][cells$count[small] == 3]), nth(2)[cells$count[small] == 3])
  expect_identical(as.integer(counted$ids$sdc_hi[small][cells$count[small] >= 2]), vapply(sorted[small][cells$count[small] >= 2], max, integer(1), USE.NAMES = FALSE))
  # every rank of every small cell: its id
  moves <- data.frame(cell = rep(small, cells$count[small]), rank = sequence(cells$count[small]))
  expect_identical(moves_ids(moves, cells$count, counted$ids), unlist(sorted[small], use.names = FALSE))
  # an id that is not there is an error, not a silent move
  gone <- counted$ids
  gone$sdc_lo[small[1]] <- NA
  expect_error(moves_ids(moves, cells$count, gone), class = "sdcRisk_error_db_changed")
  # ids R would not read exactly (bigint, double, text) are named by the
  # database, with the same release; smallint ids by R
  for (type in c("smallint", "bigint", "double precision", "text")) {
    name <- local_name(con, "typed")
    d2 <- df[df$pid <= 32767L, ]
    DBI::dbExecute(con, sprintf(
      "CREATE TABLE %s (sex text, age integer, region text, status text, income double precision, pid %s)", name, type
    ))
    DBI::dbWriteTable(con, name, d2, append = TRUE, row.names = FALSE)
    tb2 <- dplyr::tbl(con, name)
    c2 <- count_cells_release(db_dialect(con), tb2, db_keys, "pid", "exclude")
    DBI::dbExecute(con, paste("DROP TABLE", db_quote(con, c2$table)))
    expect_identical(is.null(c2$ids), type != "smallint", info = type)
    out <- local_name(con, "out")
    set.seed(12)
    rel <- ifpr(tb2, db_keys, xi = 0.3, id = "pid", name = out)
    expect_gt(nrow(rel$moves), 0)
    got <- by_id(dplyr::collect(rel$data), "pid")
    want <- d2
    if (type == "text") want$pid <- as.character(want$pid)
    want <- by_id(expected_release(want, rel, "pid")$data, "pid")
    expect_identical(lapply(got, as.character), lapply(want, as.character), info = type)
  }
})

test_that("SQLite: moved records named by rowid where the table allows it, by id otherwise, with the same release", {
  con <- local_db("SQLite")
  db <- db_dialect(con)
  base <- db_people(2500, seed = 41)
  # ids in random order, negative ones and the largest of 32 bits
  base$pid <- sample(c(-2147483647L, 2147483647L, sample(-50000:50000, nrow(base) - 2)))
  cols <- "sex TEXT, age INTEGER, region TEXT, status TEXT, income DOUBLE PRECISION, pid INTEGER"
  test_env <- environment()
  make <- function(def = cols, suffix = "", df = base, after = NULL) {
    name <- local_name(con, "rid", env = test_env)
    DBI::dbExecute(con, sprintf("CREATE TABLE %s (%s)%s", name, def, suffix))
    DBI::dbWriteTable(con, name, df, append = TRUE, row.names = FALSE)
    for (e in after) DBI::dbExecute(con, sprintf(e, name))
    dplyr::tbl(con, name)
  }
  release <- function(tb, df, by_rowid) {
    ids <- check_db_id(db, tb, "pid")
    counted <- count_cells_release(db, tb, db_keys, "pid", "exclude", int32 = ids$int32)
    DBI::dbExecute(con, paste("DROP TABLE", db_quote(con, counted$table)))
    expect_identical(inherits(counted, "db_naming_rowid"), by_rowid)
    out <- local_name(con, "out", env = test_env)
    set.seed(19)
    rel <- ifpr(tb, db_keys, xi = 0.2, id = "pid", name = out)
    expect_gt(nrow(rel$moves), 0)
    expect_true(any(rel$cells$cells$count[rel$moves$cell] > 3))
    got <- by_id(dplyr::collect(rel$data), "pid")
    expect_identical(got, by_id(expected_release(df, rel, "pid")$data, "pid"))
    got
  }
  # rowids with gaps (deleted records) in another order than the ids
  gone <- sort(sample(nrow(base), 300))
  kept <- base[-gone, ]
  plain <- release(make(after = sprintf("DELETE FROM %%1$s WHERE rowid IN (%s)", paste(gone, collapse = ", "))), kept, TRUE)
  # by id: a column named rowid hides the rowid; a table WITHOUT ROWID;
  # rowids beyond 2^31 - 1; an id stored as a real; a query on the table
  with_col <- kept
  with_col$rowid <- seq_len(nrow(kept))
  expect_identical(release(make(paste(cols, ", rowid INTEGER"), df = with_col), with_col, FALSE)[names(plain)], plain)
  expect_identical(release(make(paste0(sub("pid INTEGER", "pid INTEGER PRIMARY KEY", cols)), " WITHOUT ROWID", df = kept), kept, FALSE), plain)
  far <- make(df = kept, after = "UPDATE %1$s SET rowid = rowid + 3000000000")
  expect_identical(release(far, kept, FALSE), plain)
  real <- kept
  real$pid <- as.numeric(real$pid)
  real_tb <- make(sub("pid INTEGER", "pid", cols), df = real, after = "UPDATE %1$s SET pid = pid + 0.5 WHERE rowid = 1")
  real$pid[1] <- real$pid[1] + 0.5
  expect_identical(check_db_id(db, real_tb, "pid")$int32, FALSE)
  release(real_tb, real, FALSE)
  plain_tb <- make(df = kept)
  expect_identical(check_db_id(db, plain_tb, "pid")$int32, TRUE)
  expect_null(db_rowid_source(db, dplyr::filter(plain_tb, age >= 0)))
  expect_identical(release(dplyr::filter(plain_tb, age >= 0), kept, FALSE), plain)
})

test_that("PostgreSQL: cells named by their smallest id work with negative ids and ids at the limits of 32 bits", {
  con <- local_db("PostgreSQL")
  df <- db_people(3000, seed = 29, na_keys = TRUE)
  set.seed(5)
  # the extremes of R's integers and negative ids, in random order; the
  # sum of three ids of a cell exceeds 32 bits
  df$pid <- sample(c(-2147483647L, 2147483647L, 2147483646L, -2147483646L,
                     sample(c(-2000000000:-1999990000, 2000000000:2000010000), nrow(df) - 4)))
  tb <- local_table(con, df)
  counted <- count_cells_release(db_dialect(con), tb, db_keys, "pid", "exclude")
  DBI::dbExecute(con, paste("DROP TABLE", db_quote(con, counted$table)))
  expect_identical(counted$cell_col, "sdc_lo")
  ok <- stats::complete.cases(df[db_keys])
  cells <- counted$cells$cells
  lo <- vapply(split(df$pid[ok], factor(key_str(df[ok, ]), levels = key_str(cells))), min, integer(1), USE.NAMES = FALSE)
  expect_identical(counted$db_cell, lo)
  # xi = 0.3 moves records of cells of up to 3 records (named by R), xi =
  # 0.1 also of larger cells (ranked by the database)
  for (xi in c(0.3, 0.1)) {
    for (na in c("exclude", "category")) {
      out <- local_name(con, "out")
      set.seed(8)
      rel <- ifpr(tb, db_keys, xi = xi, id = "pid", name = out, na = na)
      info <- paste(xi, na)
      n_from <- rel$cells$cells$count[rel$moves$cell]
      expect_true(any(n_from <= 3), info = info)
      if (xi == 0.1) expect_true(any(n_from > 3), info = info)
      got <- by_id(dplyr::collect(rel$data), "pid")
      want <- by_id(expected_release(df, rel, "pid")$data, "pid")
      expect_identical(got, want, info = info)
    }
  }
})
