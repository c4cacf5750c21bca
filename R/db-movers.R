# The moves of the release inside a database and the records they move. R
# draws the moves from the counts (draw_moves(): three integers each, a
# cell, a rank among the cell's records ordered by id, and a new cell); the
# database finds the records, in one of four ways. Each way is a naming: how
# the counts table (count_cells_release() of db-cells.R) names the cells,
# and how the moved records are found (find_movers()). The dialect chooses
# it (db_cells_naming() of db-dialect.R):
#   db_naming_rowid    SQLite, a plain table with rowids of 31 bits and ids
#                      of 32: records named by their rowids, the cells by
#                      the rowids of the counts table
#   db_naming_sqlite   SQLite otherwise: records named by their ids
#   db_naming_in_r     other databases, integer ids of 32 bits: R names the
#                      moved records of cells of up to 3 records from the
#                      ids read with the counts; each cell named by its
#                      smallest id
#   db_naming_ranked   other databases, other ids: the cells numbered in
#                      the database, which finds every moved record
# A naming holds `src` (the source, as SQL aliased d), `record` (the SQL
# naming a record of d), `cell_col` (the column of the counts table naming
# a cell) and `integer` (records named by integers: the counts then hold
# their sum, which less both ends names rank 2 of 3). Once the cells are
# counted, also `cells` (the sdc_cells object), `db_cell` (each cell's name
# in the database), `table` (the counts table) and, for db_naming_in_r,
# `ids` (the ids of ranks 1, 2 and 3 of every cell of up to 3 records).

new_db_naming <- function(class, src, record, cell_col, integer) {
  structure(
    list(src = src, record = record, cell_col = cell_col, integer = integer),
    class = c(class, "db_naming")
  )
}

naming_rowid <- function(db, src, id) {
  new_db_naming(c("db_naming_rowid", "db_naming_sqlite"), src, "d.rowid", "rowid", integer = TRUE)
}

naming_sqlite <- function(db, src, id, integer) {
  new_db_naming("db_naming_sqlite", src, paste0("d.", db_quote(db$con, id)), "rowid", integer)
}

naming_in_r <- function(db, src, id) {
  new_db_naming("db_naming_in_r", src, paste0("d.", db_quote(db$con, id)), "sdc_lo", integer = TRUE)
}

naming_ranked <- function(db, src, id) {
  new_db_naming("db_naming_ranked", src, paste0("d.", db_quote(db$con, id)), "sdc_cell", integer = FALSE)
}

# The largest count of a cell whose records the counts table names: rank 1
# its smallest id, rank T its largest, and with integers rank 2 of 3 their
# sum less both.
naming_small <- function(naming) if (naming$integer) 3L else 2L

# ---------------------------------------------------------------------------
# The counts table of a naming: one GROUP BY of the source, with per cell
# the count, the smallest and largest record (and with integers the sum of
# the records).

counts_sql <- function(naming, db, vars, id) {
  q <- function(x) db_quote(db$con, x)
  by <- counts_order_sql(naming, paste0("d.", q(id)))
  grouped <- paste0(
    "SELECT ", paste0("d.", q(vars), " AS sdc_key_", seq_along(vars), collapse = ", "),
    ", COUNT(*) AS sdc_n, MIN(", by, ") AS sdc_lo, MAX(", by, ") AS sdc_hi",
    if (naming$integer) paste0(", SUM(", naming$record, ") AS sdc_sum"),
    " FROM ", naming$src, " GROUP BY ", paste0("d.", q(vars), collapse = ", ")
  )
  paste("CREATE TEMPORARY TABLE", q(naming$table), "AS", counts_numbered_sql(naming, grouped))
}

# What orders a cell's records by id and names the first and the last.
counts_order_sql <- function(naming, did) UseMethod("counts_order_sql")

#' @export
counts_order_sql.db_naming <- function(naming, did) did

# By rowid: the rowids of the records of the smallest and the largest id,
# as id and rowid packed in one integer of 63 bits ((id + 2^31) 2^31 +
# rowid: ids of 32 bits, rowids below 2^31).
#' @export
counts_order_sql.db_naming_rowid <- function(naming, did) {
  paste0("((", did, " + 2147483648) * 2147483648 + d.rowid)")
}

# A record named in the counts (k.sdc_lo, k.sdc_hi) as the record's name.
counts_record_sql <- function(naming, col) UseMethod("counts_record_sql")

#' @export
counts_record_sql.db_naming <- function(naming, col) col

#' @export
counts_record_sql.db_naming_rowid <- function(naming, col) paste0("(", col, " % 2147483648)")

# The counts table from the grouped counts: as they are (the cells named by
# the counts table's rowid on SQLite, by their smallest id in R), or
# numbered.
counts_numbered_sql <- function(naming, grouped) UseMethod("counts_numbered_sql")

#' @export
counts_numbered_sql.db_naming <- function(naming, grouped) grouped

#' @export
counts_numbered_sql.db_naming_ranked <- function(naming, grouped) {
  paste("SELECT CAST(ROW_NUMBER() OVER () AS INTEGER) AS sdc_cell, g.* FROM (", grouped, ") g")
}

# What the read of the counts takes besides the cells and their counts:
# SQL of more columns, and from what was read, the naming's `ids`.
counts_ids_sql <- function(naming) UseMethod("counts_ids_sql")

#' @export
counts_ids_sql.db_naming <- function(naming) ""

# In R: the ids of ranks 2 and 3 of the cells of up to 3 records (the
# middle id, the sum less both ends, is one of the cell's ids, so an
# integer); the smallest is the cell's name. About 2 s of R's time at 10^7
# records, against 5 to 9 s for the database's join of the moves to the
# counts.
#' @export
counts_ids_sql.db_naming_in_r <- function(naming) {
  paste0(
    ", CASE WHEN sdc_n BETWEEN 2 AND 3 THEN sdc_hi END AS sdc_hi,",
    " CASE WHEN sdc_n = 3 THEN CAST(sdc_sum - sdc_lo - sdc_hi AS INTEGER) END AS sdc_mid"
  )
}

# `extra`: the columns of counts_ids_sql(), `rows`: the rows read of every
# cell, in the cells' order.
counts_ids <- function(naming, cell, extra, rows) UseMethod("counts_ids")

#' @export
counts_ids.db_naming <- function(naming, cell, extra, rows) NULL

#' @export
counts_ids.db_naming_in_r <- function(naming, cell, extra, rows) {
  list(sdc_lo = cell[rows], sdc_mid = extra$sdc_mid[rows], sdc_hi = extra$sdc_hi[rows])
}

# ---------------------------------------------------------------------------
# The IFPR law, drawn from the counts (Nayak, Zhang and You 2016, Section
# 3.3): each unit of cell i of a block of m cells independently moves with
# probability theta / T_i, to each other cell of the block with probability
# theta / ((m - 1) T_i). So the number that move is Binomial(T_i, theta / T_i),
# each goes to one of the m - 1 other cells uniformly, and which units move is
# a uniformly random subset of the cell: their ranks are drawn here, with
# R's generator (sample.int() draws exactly uniform integers).
# Returns one row per moving unit: cell, rank (1..T_i), new_cell.
draw_moves <- function(plan) {
  sizes <- diff(plan$block_start)
  none <- data.frame(cell = integer(), rank = integer(), new_cell = integer())
  if (length(sizes) == 0) return(none)
  if (anyNA(plan$theta)) {
    abort_sdc(c(
      "The release inside a database supports IFPR blocks only.",
      "x" = "The plan has {sum(is.na(plan$theta))} block{?s} given by a matrix."
    ), "plan")
  }
  counts <- plan$cells$cells$count
  cells <- plan$block_cells
  block <- rep.int(seq_along(sizes), sizes)
  m <- sizes[block]
  t <- counts[cells]
  th <- plan$theta[block]
  k <- stats::rbinom(length(cells), t, pmin(1, th / t))
  if (sum(k) == 0) return(none)
  from <- rep.int(seq_along(cells), k)
  # a uniform other cell of the block: offset 1..m-1 from the cell's position
  offset <- integer(length(from))
  mm <- m[from]
  for (v in sort(unique(mm))) {
    sel <- which(mm == v)
    offset[sel] <- sample.int(v - 1L, length(sel), replace = TRUE)
  }
  pos <- (seq_along(cells) - plan$block_start[block])[from] # 1..m within the block
  dest_pos <- (pos - 1L + offset) %% mm + 1L
  dest <- cells[plan$block_start[block[from]] + dest_pos]
  data.frame(cell = cells[from], rank = draw_ranks(t, k), new_cell = as.integer(dest))
}

# For each cell, k[i] distinct ranks out of 1..t[i], a uniformly random
# subset, listed cell after cell. Only the set matters (the destinations are
# independent and identically distributed), so a cell whose every unit moves
# needs no draw, and cells where one unit moves draw together, per count.
draw_ranks <- function(t, k) {
  start <- cumsum(k) - k
  rank <- integer(sum(k))
  all <- which(k > 0 & k == t)
  rank[rep.int(start[all], k[all]) + sequence(k[all])] <- sequence(k[all])
  one <- which(k == 1 & t > 1)
  for (v in sort(unique(t[one]))) {
    sel <- one[t[one] == v]
    rank[start[sel] + 1L] <- sample.int(v, length(sel), replace = TRUE)
  }
  for (i in which(k > 1 & k < t)) rank[start[i] + seq_len(k[i])] <- sample.int(t[i], k[i])
  rank
}

# ---------------------------------------------------------------------------
# The moved records, as the temporary table `movers`: each record's name
# (`sdc_id`: its id, or its rowid) and its new cell (`sdc_new`) or, on
# SQLite, the keys of its new cell (`sdc_new_1`, ...). Returns the working
# tables made (the counts table aside) and the movers' table.
release_movers <- function(db, naming, moves, vars, id, call = rlang::caller_env()) {
  tables <- c(moves = db_fresh_name(db, "moves"), movers = db_fresh_name(db, "movers"))
  tables <- find_movers(naming, db, moves, vars, id, tables, call = call)
  db_analyze(db, tables[["movers"]])
  list(tables = unname(tables), movers = tables[["movers"]])
}

# One way of finding the moved records per naming: writes the table
# `tables$movers` (the other tables named in `tables` are free to use),
# checks that it holds one record per move, and returns the tables made.
find_movers <- function(naming, db, moves, vars, id, tables, call) UseMethod("find_movers")

# SQLite: the moves go up; the records of cells of up to naming_small()
# records are named by the counts, those of larger cells by ranking them.
# Each moved record's name and new keys are looked up once per record of
# the source: by rowid where the names are integers. The new keys are
# joined here, in the order of the moves, rather than looked up in the
# large counts table during the write (measured: slower at 10^7 records).
#' @export
find_movers.db_naming_sqlite <- function(naming, db, moves, vars, id, tables, call) {
  con <- db$con
  upload_moves(db, naming, tables[["moves"]], moves)
  db_step_hook("uploaded", db)
  ranked <- rank_big_cells(naming, db, moves, vars, id, tables)
  moved <- movers_union_sql(c(small_movers_sql(naming, db, tables), ranked$sql))
  mv <- db_quote(con, tables[["movers"]])
  new_cols <- paste0("sdc_new_", seq_along(vars))
  DBI::dbExecute(con, paste0(
    "CREATE TEMPORARY TABLE ", mv, " (sdc_id", if (naming$integer) " INTEGER PRIMARY KEY", ", ",
    paste(new_cols, collapse = ", "), ")"
  ))
  # in id order: appended to the end of the table's b-tree, not scattered
  DBI::dbExecute(con, paste0(
    "INSERT INTO ", mv, " SELECT w.sdc_id, ", paste0("k.sdc_key_", seq_along(vars), collapse = ", "),
    " FROM (", moved, ") w INNER JOIN ", db_quote(con, naming$table), " k ON k.", naming$cell_col,
    " = w.sdc_new ORDER BY w.sdc_id"
  ))
  if (!naming$integer) db_index(con, tables[["movers"]], c("sdc_id", new_cols), unique = TRUE)
  check_movers_found(movers_count(db, tables[["movers"]]), nrow(moves), call)
  ranked$tables
}

# In R: the moved records of cells of up to 3 records are named here and go
# up as the first movers; the moves of larger cells alone go up, for the
# database to rank their records.
#' @export
find_movers.db_naming_in_r <- function(naming, db, moves, vars, id, tables, call) {
  con <- db$con
  counts <- naming$cells$cells$count
  small <- counts[moves$cell] <= naming_small(naming)
  named <- moves_ids(moves[small, , drop = FALSE], counts, naming$ids, call = call)
  if (length(named) > 0) {
    db_upload_temp(db, tables[["movers"]], data.frame(sdc_id = named, sdc_new = naming$db_cell[moves$new_cell[small]]))
  } else {
    DBI::dbExecute(con, paste("CREATE TEMPORARY TABLE", db_quote(con, tables[["movers"]]), "(sdc_id INTEGER, sdc_new INTEGER)"))
  }
  big <- moves[!small, , drop = FALSE]
  if (nrow(big) == 0) {
    db_step_hook("uploaded", db)
    return(tables[names(tables) != "moves"])
  }
  upload_moves(db, naming, tables[["moves"]], big)
  db_step_hook("uploaded", db)
  ranked <- rank_big_cells(naming, db, big, vars, id, tables)
  # the records of the larger cells join those named by R (the count
  # inserted must match the moves of the larger cells)
  found <- as.numeric(DBI::dbExecute(con, paste(
    "INSERT INTO", db_quote(con, tables[["movers"]]), movers_union_sql(ranked$sql)
  )))
  check_movers_found(found, nrow(big), call)
  ranked$tables
}

# Ranked by the database: the moves go up; the records of cells of up to 2
# records are named by the counts, those of larger cells by ranking them;
# each moved record's id and the number of its new cell make a narrow table
# to hash (the write joins the new cells' keys from the counts).
#' @export
find_movers.db_naming_ranked <- function(naming, db, moves, vars, id, tables, call) {
  upload_moves(db, naming, tables[["moves"]], moves)
  db_step_hook("uploaded", db)
  ranked <- rank_big_cells(naming, db, moves, vars, id, tables)
  moved <- movers_union_sql(c(small_movers_sql(naming, db, tables), ranked$sql))
  DBI::dbExecute(db$con, paste("CREATE TEMPORARY TABLE", db_quote(db$con, tables[["movers"]]), "AS", moved))
  check_movers_found(movers_count(db, tables[["movers"]]), nrow(moves), call)
  ranked$tables
}

# The moves as a temporary table: the database's name of each cell, the
# rank in it of the record that moves, the name of its new cell.
upload_moves <- function(db, naming, table, moves) {
  cell <- naming$db_cell
  db_upload_temp(db, table, data.frame(
    sdc_cell = cell[moves$cell], sdc_rank = as.integer(moves$rank), sdc_new = cell[moves$new_cell]
  ))
}

# The moved records of the cells of up to naming_small() records, from the
# counts table: rank 1 is the smallest record, rank T the largest, and with
# integers rank 2 of 3 the sum less both (a join of the moves to the
# counts).
small_movers_sql <- function(naming, db, tables) {
  q <- function(x) db_quote(db$con, x)
  lo <- counts_record_sql(naming, "k.sdc_lo")
  hi <- counts_record_sql(naming, "k.sdc_hi")
  paste0(
    "SELECT CASE WHEN m.sdc_rank = 1 THEN ", lo, " WHEN m.sdc_rank = k.sdc_n THEN ", hi,
    if (naming$integer) paste0(" ELSE k.sdc_sum - ", lo, " - ", hi), " END AS sdc_id, m.sdc_new AS sdc_new",
    " FROM ", q(tables[["moves"]]), " m INNER JOIN ", q(naming$table), " k ON k.", naming$cell_col,
    " = m.sdc_cell WHERE k.sdc_n <= ", naming_small(naming)
  )
}

# The moved records of the larger cells (more than naming_small() records)
# with a move: the source joined to those cells only (their keys uploaded),
# each cell's records numbered by id, matched to the moves. A list with the
# SQL (NULL when no larger cell has a move) and `tables` with the cells'
# table added.
rank_big_cells <- function(naming, db, moves, vars, id, tables) {
  counts <- naming$cells$cells$count
  big <- unique(moves$cell[counts[moves$cell] > naming_small(naming)])
  if (length(big) == 0) {
    db_analyze(db, tables[["moves"]])
    return(list(tables = tables))
  }
  q <- function(x) db_quote(db$con, x)
  tables[["cells"]] <- db_fresh_name(db, "cells")
  match <- match_cells(db, naming, big, vars)
  db_upload_temp(db, tables[["cells"]], match$cells)
  db_index_ranking(db, tables, match$cells)
  db_analyze(db, tables[c("moves", "cells")])
  sql <- paste0(
    "SELECT s.sdc_id AS sdc_id, m.sdc_new AS sdc_new FROM (SELECT ", naming$record,
    " AS sdc_id, c.sdc_cell AS sdc_cell, ",
    "ROW_NUMBER() OVER (PARTITION BY c.sdc_cell ORDER BY d.", q(id), ") AS sdc_rank FROM ", naming$src,
    " INNER JOIN ", q(tables[["cells"]]), " c ON ", paste(match$on, collapse = " AND "),
    ") s INNER JOIN ", q(tables[["moves"]]), " m ON s.sdc_cell = m.sdc_cell AND s.sdc_rank = m.sdc_rank"
  )
  list(sql = sql, tables = tables)
}

# The cells `big` as a table of their keys, and the condition joining a
# record of the source (d) to its cell (c): each key matched by equality,
# or where one of them is NA by equality of the value with NA replaced by a
# constant and of an NA flag (hashable, unlike IS NOT DISTINCT FROM).
match_cells <- function(db, naming, big, vars) {
  cells <- data.frame(sdc_cell = naming$db_cell[big])
  on <- character(length(vars))
  for (k in seq_along(vars)) {
    v <- naming$cells$cells[[vars[k]]][big]
    kcol <- paste0("sdc_key_", k)
    dk <- paste0("d.", db_quote(db$con, vars[k]))
    if (anyNA(v)) {
      zero <- vector(typeof(v), 1)
      cells[[kcol]] <- ifelse(is.na(v), zero, v)
      cells[[paste0("sdc_na_", k)]] <- as.integer(is.na(v))
      on[k] <- sprintf(
        "COALESCE(%s, %s) = c.%s AND (CASE WHEN %s IS NULL THEN 1 ELSE 0 END) = c.sdc_na_%d",
        dk, DBI::dbQuoteLiteral(db$con, zero), kcol, dk, k
      )
    } else {
      cells[[kcol]] <- v
      on[k] <- sprintf("%s = c.%s", dk, kcol)
    }
  }
  list(cells = cells, on = on)
}

movers_union_sql <- function(parts) {
  paste0("SELECT u.sdc_id AS sdc_id, u.sdc_new AS sdc_new FROM (", paste(parts, collapse = " UNION ALL "), ") u")
}

movers_count <- function(db, table) {
  as.numeric(db_get(db$con, paste("SELECT COUNT(*) AS n FROM", db_quote(db$con, table)))$n)
}

check_movers_found <- function(found, n, call) {
  if (found != n) {
    abort_db_changed("{fmt_int(n)} moves were drawn, {fmt_int(found)} records found for them.", call = call)
  }
  invisible()
}

# The ids of the moved records of cells of up to 3 records, from the ids of
# ranks 1, 2 and 3 that count_cells_release() read (rank T is the largest).
moves_ids <- function(moves, counts, ids, call = rlang::caller_env()) {
  cl <- moves$cell
  r <- moves$rank
  n <- counts[cl]
  out <- ids$sdc_lo[cl]
  top <- r == n & r > 1L
  out[top] <- ids$sdc_hi[cl[top]]
  mid <- r > 1L & r < n
  out[mid] <- ids$sdc_mid[cl[mid]]
  out <- as.integer(out)
  if (anyNA(out)) {
    abort_db_changed("{fmt_int(sum(is.na(out)))} moved record{?s} without an id.", call = call)
  }
  out
}

# The source table changed between the counts and the moved records (the
# moves no longer match its records): nothing is written. `detail` is a
# cli string evaluated in the caller's frame.
abort_db_changed <- function(detail, call, .envir = parent.frame()) {
  abort_sdc(c(
    "The table changed while the release was made: the moves do not match its records.",
    "x" = detail,
    "i" = "Nothing was written; run the release again."
  ), "db_changed", call = call, .envir = .envir)
}

# ---------------------------------------------------------------------------
# The released table: every record of the source, the keys of the moved
# ones (a join on their names) replaced by the keys of their new cells;
# columns in their order. SQLite looks each record up in the movers'
# b-tree; elsewhere the database hashes the movers joined to their new
# cells' keys.
release_out_sql <- function(db, naming, cols, vars, movers) {
  q <- function(x) db_quote(db$con, x)
  if (is.null(movers)) return(paste0("SELECT ", paste0("d.", q(cols), collapse = ", "), " FROM ", naming$src))
  select <- vapply(cols, function(v) {
    k <- match(v, vars)
    if (is.na(k)) return(paste0("d.", q(v)))
    sprintf("CASE WHEN v.sdc_id IS NULL THEN d.%s ELSE v.sdc_new_%d END AS %s", q(v), k, q(v))
  }, "")
  paste0(
    "SELECT ", paste(select, collapse = ", "), " FROM ", naming$src, " LEFT JOIN ",
    movers_keys_sql(naming, db, movers$movers, vars), " v ON ", naming$record, " = v.sdc_id"
  )
}

# The moved records with the keys of their new cells (sdc_id, sdc_new_1, ...).
movers_keys_sql <- function(naming, db, movers, vars) UseMethod("movers_keys_sql")

#' @export
movers_keys_sql.db_naming <- function(naming, db, movers, vars) {
  q <- function(x) db_quote(db$con, x)
  paste0(
    "(SELECT m.sdc_id AS sdc_id, ", paste0("k.sdc_key_", seq_along(vars), " AS sdc_new_", seq_along(vars), collapse = ", "),
    " FROM ", q(movers), " m INNER JOIN ", q(naming$table), " k ON k.", naming$cell_col, " = m.sdc_new)"
  )
}

# (SQLite's movers hold the new keys already)
#' @export
movers_keys_sql.db_naming_sqlite <- function(naming, db, movers, vars) db_quote(db$con, movers)
