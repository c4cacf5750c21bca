# Data where it lives: cell counts, the IFPR plan with its certificate, and
# the release, computed inside a database through dplyr verbs (dbplyr), so
# that the records never come into R. Only the table of nonempty cells comes
# back; only a small table of moves goes out. ifpr() on a lazy table, in
# one transaction: the id check, the counts (db-cells.R), the design in R
# (as for a data frame), the moves and the moved records (db-movers.R), the
# released table written under a fresh name and renamed. What differs
# between databases is a method of the dialect (db-dialect.R).

#' @param id For a database table: the name of a column that identifies the
#'   records (unique, never missing). Each cell's records are ranked by it,
#'   and the ranks that move are drawn uniformly at random in R, so knowing
#'   the ids tells nothing about which records moved. The release checks
#'   both in one pass over the records before anything is drawn, except
#'   when `data` is a table itself (not a query) whose `id` the database
#'   keeps unique and never missing (a primary key, or a `NOT NULL` column
#'   with a unique index on it alone; on SQLite an `INTEGER PRIMARY KEY`):
#'   then the database's own guarantee is read from its catalogue.
#' @param name For a database table: the table the release is written to, in
#'   the same database: a string, `DBI::Id(schema = , table = )` or
#'   `dbplyr::in_schema()`. It may not be a table that `data` reads (in any
#'   schema, whatever the case of its name).
#' @param overwrite For a database table: replace an existing table called
#'   `name`? Never done unless `TRUE`, and then only once the new table is
#'   complete.
#' @section Database tables:
#'   For a lazy database table (`dplyr::tbl(con, "persons")`, packages DBI,
#'   dplyr and dbplyr), the counts are computed in the database (one `GROUP
#'   BY`); the plan and its certificate are computed in R from the counts
#'   alone, and are the same as for the same data in memory. R then draws,
#'   from the counts and with R's generator (so `set.seed()` reproduces the
#'   release), how many records of each blocked cell move, to which cells,
#'   and which ones (their ranks in the cell, ordered by `id`); only these
#'   moves are uploaded (on PostgreSQL with integer ids, R names the moved
#'   records of cells of up to 3 records from the ids it read with the
#'   counts, and uploads those). The database ranks the records of the
#'   larger cells with a move only, by `id`, and writes the released table
#'   with the keys of the moved records rewritten. Everything is one transaction: the released
#'   table is written under a fresh name and renamed to `name` (replacing
#'   the old table when `overwrite = TRUE`) just before the commit, so a
#'   release that fails at any point, a lost connection included, leaves
#'   every table as it was. A `name` that the query of `data` reads is
#'   refused (error class `sdcRisk_error_db_source_table`). The result's
#'   `data` is the lazy released table, `original` the table it was made
#'   from, and `moves` lists every moved record's cell, rank and new cell;
#'   [release_risk()] and [release_utility()] evaluate it from counts made by
#'   the database. When R is interactive, each step of the release (the id
#'   check, the counts, the design, the upload of the moves, the moved
#'   records, the write, the rename, the commit) is shown as a cli progress
#'   step; tests and scripts stay silent. An interrupt (Esc, Ctrl-C) stops
#'   the release between two statements of the database and rolls it back,
#'   so nothing is changed (a statement that is running finishes first,
#'   unless the driver lets R cancel it). See `vignette("database", package
#'   = "sdcRisk")`.
#' @rdname ifpr
#' @order 3
#' @export
ifpr.tbl_lazy <- function(data, keys, xi,
                          goal = c("all_matches", "unique_matches", "sample_uniques"),
                          partition = NULL, also = NULL, method = c("tiered", "nayak", "optimal"),
                          calibrate = c("exact", "bound"), on_infeasible = c("error", "merge"),
                          ..., na = c("exclude", "category"), split = FALSE, known = NULL,
                          damage = c("keys", "records", "variance", "distance"), weights = NULL, ordered = NULL,
                          id, name, overwrite = FALSE, population = NULL, target_in_file = c("known", "unknown")) {
  rlang::check_dots_empty()
  check_db_packages()
  target_in_file <- check_target_in_file(target_in_file, population)
  cols <- db_names_only(data)
  check_names_in(keys, cols)
  goal <- check_choice(goal)
  method <- check_choice(method)
  design <- list(damage = if (!missing(damage)) check_choice(damage), weights = weights, ordered = ordered)
  check_design_args(method, design)
  calibrate <- check_choice(calibrate)
  on_infeasible <- check_choice(on_infeasible)
  na <- check_choice(na)
  check_ifpr_common(cols, keys, xi, also, goal, method, split)
  vars <- c(keys, also)
  db <- db_dialect(dbplyr::remote_con(data))
  target <- check_db_output(db, name, overwrite, data)
  check_db_id_arg(data, id, vars)

  # one transaction from the id check to the rename of the released table
  db_progress_start(target)
  tx <- db_begin(db)
  committed <- FALSE
  on.exit(if (!committed) db_rollback(tx), add = TRUE)
  restore <- function() invisible()
  # (settings restored before the rollback or the commit)
  on.exit(restore(), add = TRUE, after = FALSE)
  db_failure_classed({
    restore <- db_tune(db)
    db_step_hook("begin", db)
    ids <- check_db_id(db, data, id)
    db_step_hook("id_checked", db)
    naming <- count_cells_release(db, data, vars, id, na, int32 = ids$int32)
    db_step_hook("counted", db)
  })
  smp <- sample_of(naming$cells, population, target_in_file)
  d <- ifpr_design(naming$cells, vars, keys, xi, goal, partition, method, calibrate, on_infeasible, split,
    known = known, bound = if (!is.null(smp)) pmin(1, xi / smp$weight), design = design
  )
  d <- ifpr_sample_certificate(d, smp, goal, xi, known_subsets(known, vars))
  moves <- draw_moves(d$plan)
  db_failure_classed({
    db_step_hook("drawn", db, n_moves = nrow(moves))
    write_release_db(db, data, naming, vars, id, moves, target, overwrite)
    db_step_hook("commit", db)
    restore()
    restore <- function() invisible()
  })
  db_failure_classed(db_commit(tx), committing = TRUE)
  committed <- TRUE
  db_progress_done()

  new_sdc_release_db(
    data = db_target_tbl(db$con, target), design = d, cells = naming$cells, moves = moves,
    keys = keys, also = also, xi = xi, goal = goal, method = method, calibrate = calibrate,
    partition = partition, id = id, table = db_target_label(target), original = data, sample = smp
  )
}

# A release written to a database: the parts of every IFPR release
# (ifpr_release_parts() of release-ifpr.R, from the design and the counts;
# the realised changes from the moves, there being no record-level vector
# of released cells), the moves, the record identifier, the released
# table's name and the original lazy table. Its class specialises
# sdc_release: every method of a release in memory that reads only these
# parts serves it too.
new_sdc_release_db <- function(data, design, cells, moves, keys, also, xi, goal, method, calibrate,
                               partition, id, table, original, sample = NULL) {
  counts <- cells$cells$count
  s_new <- counts - tabulate(moves$cell, length(counts)) + tabulate(moves$new_cell, length(counts))
  parts <- ifpr_release_parts(design, cells, keys, also, xi, goal, method, calibrate, partition,
    records_changed = nrow(moves), s_new = s_new, sample = sample
  )
  structure(
    c(list(data = data), parts, list(moves = moves, id = id, table = table, original = original)),
    class = c("sdc_release_db", "sdc_release", "sdc_release_any")
  )
}

# A release in a database: its cells (counted by the database, no record
# ids), its plan, and the moves, each a cell of a block, a rank within that
# cell's records and another cell of the same block.
#' @export
validate_release.sdc_release_db <- function(x, arg = "release", call = rlang::caller_env()) {
  hint <- "Use the object {.fn ifpr} returned, unmodified."
  if (!inherits(x$data, "tbl_lazy") || !inherits(x$original, "tbl_lazy")) {
    abort_invalid(arg, "its {.field data} and {.field original} must be database tables", hint, call)
  }
  validate_release_parts(x, arg, hint, call)
  counts <- x$cells$cells$count
  mv <- x$moves
  block_of <- plan_block_of(x$plan)
  ok <- is.data.frame(mv) && all(c("cell", "rank", "new_cell") %in% names(mv)) &&
    is.numeric(mv$cell) && is.numeric(mv$rank) && is.numeric(mv$new_cell) &&
    !anyNA(mv$cell) && !anyNA(mv$rank) && !anyNA(mv$new_cell) &&
    all(mv$cell >= 1 & mv$cell <= length(counts) & mv$new_cell >= 1 & mv$new_cell <= length(counts))
  ok <- ok && all(mv$rank >= 1 & mv$rank <= counts[mv$cell]) &&
    !anyDuplicated(data.frame(mv$cell, mv$rank)) &&
    all(!is.na(block_of[mv$cell]) & block_of[mv$cell] == block_of[mv$new_cell] & mv$cell != mv$new_cell)
  if (!ok) {
    abort_invalid(arg, "its {.field moves} must each take a ranked record of a cell to another cell of its block", hint, call)
  }
  invisible(x)
}

#' @export
format.sdc_release_db <- function(x, ...) {
  c(
    NextMethod(),
    wrap_lines(paste0("Released table: ", x$table, " (in the database; ", n_of(nrow(x$moves), "record"), " moved)"))
  )
}

# The progress of the database release: a cli progress step per step of
# the release, shown only when R is interactive (silent in tests and
# scripts). Each step begins where db_step_hook() reports the end of the
# previous one; the steps end with the release (or its error). The release
# is interruptible between statements (an interrupt rolls the transaction
# back, so nothing is changed); within a statement, as far as the driver
# lets R interrupt it.
db_progress_state <- new.env(parent = emptyenv())

db_progress_start <- function(target, .envir = parent.frame()) {
  db_progress_state$envir <- NULL
  if (!rlang::is_interactive()) return(invisible())
  db_progress_state$envir <- .envir
  db_progress_state$label <- db_target_label(target)
  db_progress_state$n_moves <- NA
  cli::cli_progress_step("Checking {.arg id} (unique, never missing) in the database", .envir = .envir)
  invisible()
}

db_progress_messages <- c(
  id_checked = "Counting the cells in the database",
  counted = "Designing the plan, its certificate and the moves",
  drawn = "Uploading {n_moves} move{?s}",
  uploaded = "Finding the moved records",
  movers = "Writing the released table",
  written = "Naming it {.val {label}}",
  renamed = "Committing"
)

db_progress_next <- function(step, n_moves = NULL) {
  envir <- db_progress_state$envir
  if (is.null(envir) || !step %in% names(db_progress_messages)) return(invisible())
  if (!is.null(n_moves)) db_progress_state$n_moves <- n_moves
  if (step == "drawn" && identical(db_progress_state$n_moves, 0L)) step <- "movers"
  msg <- db_progress_messages[[step]]
  vals <- list(n_moves = db_progress_state$n_moves, label = db_progress_state$label)
  text <- cli::format_inline(msg, .envir = list2env(vals))
  cli::cli_progress_step(gsub("}", "}}", gsub("{", "{{", text, fixed = TRUE), fixed = TRUE), .envir = envir)
  invisible()
}

db_progress_done <- function() {
  envir <- db_progress_state$envir
  db_progress_state$envir <- NULL
  if (!is.null(envir)) cli::cli_progress_done(.envir = envir)
  invisible()
}

# Errors of the database (a failed statement, a lost connection) while the
# release runs: classed, with the database's error as parent. The
# transaction is rolled back by the caller, so nothing was changed.
db_failure_classed <- function(expr, committing = FALSE, call = rlang::caller_env()) {
  withCallingHandlers(expr, error = function(e) {
    if (inherits(e, "sdcRisk_error")) return()
    abort_sdc(c(
      if (committing) {
        "The commit of the release failed: the database may or may not have written it."
      } else {
        "The release inside the database failed; nothing was written or changed."
      },
      "x" = "The database said: {conditionMessage(e)}",
      "i" = if (committing) "Check whether the table exists before running the release again."
    ), "db_write", call = call, parent = e)
  })
}

# `name` and `overwrite`: the output table may not exist (unless
# `overwrite`) and may not be any table the source query reads, in any
# schema and whatever the case of its name. Returns the target.
check_db_output <- function(db, name, overwrite, data, call = rlang::caller_env()) {
  if (missing(name)) {
    abort_sdc(c(
      "{.arg name} must be the name of the table to write the release to.",
      "x" = "It is missing."
    ), "argument", call = call)
  }
  target <- db_target(name, call = call)
  if (!isTRUE(overwrite) && !isFALSE(overwrite)) {
    abort_sdc(c(
      "{.arg overwrite} must be {.code TRUE} or {.code FALSE}.",
      "x" = "It is {show_value(overwrite)}."
    ), "argument", call = call)
  }
  if (!is.na(target$schema) && !db_schema_exists(db, target$schema)) {
    abort_sdc(c(
      "{.arg name} must be a table of a schema of the database.",
      "x" = "There is no schema {.val {target$schema}}."
    ), "argument", call = call)
  }
  src <- db_source_tables(db, data)
  hit <- src$tables[tolower(src$tables) == tolower(target$table)]
  if (length(hit) > 0 || src$unknown) {
    abort_sdc(c(
      "{.arg name} must not be a table that {.arg data} reads.",
      "x" = if (length(hit) > 0) {
        "The query of {.arg data} reads or names {.val {hit[1]}}, and {.arg name} is {.val {db_target_label(target)}}."
      } else {
        "The database's plan of the query of {.arg data} opens a table it does not name, so it may be {.val {db_target_label(target)}}."
      },
      "i" = "Write the release to a new table."
    ), c("db_source_table", "db_table_exists"), call = call)
  }
  if (!overwrite && db_relation_exists(db, target)) {
    abort_sdc(c(
      "A table called {.val {db_target_label(target)}} already exists.",
      "i" = "Choose another {.arg name}, or use {.code overwrite = TRUE} to replace it."
    ), "db_table_exists", call = call)
  }
  target
}

# The record identifier: a column, not a key.
check_db_id_arg <- function(data, id, vars, call = rlang::caller_env()) {
  if (missing(id) || !is.character(id) || length(id) != 1 || is.na(id) || id == "") {
    abort_sdc(c(
      "{.arg id} must name the column that identifies the records.",
      "x" = if (missing(id)) "It is missing." else "It is {show_value(id)}.",
      "i" = "Each cell's records are ranked by it; it must be unique and never missing."
    ), "db_id", call = call)
  }
  if (!id %in% db_colnames(data)) {
    abort_sdc(c(
      "{.arg id} must be a column of the table.",
      "x" = "Not found: {.val {id}}."
    ), "db_id", call = call)
  }
  if (id %in% vars) {
    abort_sdc(c(
      "{.arg id} must not be a key or {.arg also} variable: it would change in the release.",
      "x" = "{.val {id}} is one of them."
    ), "db_id", call = call)
  }
  invisible()
}

# The record identifier is never missing and unique: checked by the
# database in one pass, before anything is drawn or written
# (db_id_summary() of db-dialect.R). A plain table whose id column the
# database itself keeps unique and never missing (db_id_declared()) needs
# no pass: the check is skipped there. Returns `int32`: whether the pass
# found every id stored as an integer between -(2^31 - 1) and 2^31 - 1
# (SQLite only; FALSE where not checked).
check_db_id <- function(db, data, id, call = rlang::caller_env()) {
  if (db_id_declared(db, data, id)) return(invisible(list(int32 = FALSE)))
  s <- db_id_summary(db, data, id)
  num <- function(x) {
    x <- as.numeric(x %||% 0)
    x[is.na(x)] <- 0
    x
  }
  n <- num(s$n)
  n_missing <- num(s$n_missing)
  if (n_missing > 0) {
    abort_sdc(c(
      "{.arg id} must never be missing.",
      "x" = "Column {.val {id}} is missing in {fmt_int(n_missing)} of {fmt_int(n)} records."
    ), "db_id", call = call)
  }
  n_distinct <- num(s$n_distinct)
  if (n_distinct < n) {
    abort_sdc(c(
      "{.arg id} must identify the records: no value may repeat.",
      "x" = "Column {.val {id}} has {fmt_int(n_distinct)} distinct values in {fmt_int(n)} records."
    ), "db_id", call = call)
  }
  invisible(list(int32 = n > 0 && num(s[["n_int32"]]) == n))
}

# Does the database guarantee that `id` is unique and never missing in
# `data`? Only for a plain table (dplyr::tbl(con, "name"), no query on it),
# read from the catalogue (db_id_unique() of db-dialect.R), never from the
# records. Anything else (queries, other backends, catalogue errors)
# answers FALSE, and the ids are checked by a pass over the records.
db_id_declared <- function(db, data, id) {
  name <- db_plain_table(data)
  if (is.null(name)) return(FALSE)
  tryCatch(db_id_unique(db, name, id), error = function(e) FALSE)
}

# Write the released table, inside the caller's transaction: the moved
# records are found (release_movers() of db-movers.R) and the database
# writes the table with their keys rewritten (a join on their names),
# under a fresh name, renamed to the target at the end (dropping the old
# one only with `overwrite`).
write_release_db <- function(db, data, naming, vars, id, moves, target, overwrite,
                             call = rlang::caller_env()) {
  con <- db$con
  schema <- if (is.na(target$schema)) db_default_schema(db) else target$schema
  fresh <- list(schema = schema, table = db_fresh_name(db, "out", schema))
  movers <- NULL
  if (nrow(moves) > 0) {
    movers <- release_movers(db, naming, moves, vars, id, call = call)
    db_step_hook("movers", db)
  }
  out <- release_out_sql(db, naming, db_colnames(data), vars, movers)
  DBI::dbExecute(con, dbplyr::sql_query_save(con, dbplyr::sql(out),
    dbplyr::ident_q(db_target_sql(con, fresh)),
    temporary = FALSE
  ))
  db_step_hook("written", db)
  for (tmp in c(movers$tables, naming$table)) db_drop(con, tmp)
  db_swap(db, fresh, target, overwrite, call = call)
  invisible()
}

# Replace the target by the fresh table, inside the caller's transaction:
# drop the old table (only with `overwrite`) and rename the fresh one.
db_swap <- function(db, fresh, target, overwrite, call = rlang::caller_env()) {
  con <- db$con
  if (db_relation_exists(db, target)) {
    if (!overwrite) {
      abort_sdc(c(
        "A table called {.val {db_target_label(target)}} already exists.",
        "x" = "It was created while the release was made; nothing was written.",
        "i" = "Choose another {.arg name}, or use {.code overwrite = TRUE} to replace it."
      ), "db_table_exists", call = call)
    }
    DBI::dbExecute(con, paste("DROP TABLE", db_target_sql(con, target)))
    db_step_hook("dropped", db)
  }
  DBI::dbExecute(con, paste("ALTER TABLE", db_target_sql(con, fresh), "RENAME TO", db_quote(con, target$table)))
  db_step_hook("renamed", db)
  invisible()
}
