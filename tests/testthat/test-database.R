# The database path against the in-memory path on the same data, on SQLite
# (every run) and on a real PostgreSQL server started by helper-postgres.R
# (CI; skipped elsewhere when PostgreSQL is missing).

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

# What the release must be, computed by brute force in R from the original
# records and the drawn moves: rank each cell's records by id, and give the
# records whose (cell, rank) moved the keys of their new cell.
expected_release <- function(df, rel, id) {
  keys <- rel$cells$keys
  cells <- rel$cells$cells
  key_str <- function(d) {
    do.call(paste, c(lapply(d[keys], function(x) ifelse(is.na(x), "\001NA", as.character(x))), sep = "\r"))
  }
  cell <- match(key_str(df), key_str(cells))
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

by_id <- function(d, id) {
  d <- as.data.frame(d, stringsAsFactors = FALSE)
  d <- d[order(d[[id]]), , drop = FALSE]
  rownames(d) <- NULL
  d
}

certificate_of_plan <- function(cert) {
  cert[setdiff(names(cert), c("records_changed", "cells_changed"))]
}

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
      key_str <- function(d) do.call(paste, c(d[db_keys], sep = "\r"))
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
    key_str <- function(d) do.call(paste, c(d[db_keys], sep = "\r"))
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

  test_that(paste0(backend, ": the same seed gives the same release; a bad id or an existing table stops before writing"), {
    con <- local_db(backend)
    df <- db_people(1500, seed = 3)
    tb <- local_table(con, df)
    a <- local_name(con, "a")
    b <- local_name(con, "b")
    set.seed(42)
    ra <- ifpr(tb, db_keys, xi = 0.3, id = "pid", name = a)
    set.seed(42)
    rb <- ifpr(tb, db_keys, xi = 0.3, id = "pid", name = b)
    expect_identical(by_id(dplyr::collect(ra$data), "pid"), by_id(dplyr::collect(rb$data), "pid"))
    expect_identical(ra$moves, rb$moves)

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
  released <- list()
  for (con in list(lite, pg)) {
    tb <- local_table(con, df)
    out <- local_name(con, "same")
    set.seed(2024)
    rel <- ifpr(tb, db_keys, xi = 0.25, id = "pid", name = out)
    released[[length(released) + 1]] <- list(rel = rel, data = by_id(dplyr::collect(rel$data), "pid"))
  }
  expect_identical(released[[1]]$data, released[[2]]$data)
  expect_identical(released[[1]]$rel$moves, released[[2]]$rel$moves)
  expect_identical(released[[1]]$rel$certificate, released[[2]]$rel$certificate)
  expect_gt(nrow(released[[1]]$rel$moves), 0)
})

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
