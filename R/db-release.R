# Data where it lives: cell counts, the IFPR plan with its certificate, and
# the release, computed inside a database through dplyr verbs (dbplyr), so
# that the records never come into R. Only the table of nonempty cells comes
# back; only a small table of moves goes out.

# (`:=` names the column of a count in check_db_id())
#' @importFrom rlang :=
NULL

is_db_table <- function(x) inherits(x, "tbl_lazy")

# DBI, dplyr and dbplyr (Suggests) must be installed to work on a database
# table.
check_db_packages <- function(call = rlang::caller_env()) {
  need <- c("DBI", "dplyr", "dbplyr")
  missing <- need[!vapply(need, requireNamespace, logical(1), quietly = TRUE)]
  if (length(missing) > 0) {
    abort_sdc(c(
      "Working on a database table needs the package{?s} {.pkg {missing}}.",
      "i" = "Install {?it/them} with {.code install.packages({deparse(missing)})}."
    ), "db_packages", call = call)
  }
  invisible()
}

db_colnames <- function(data) colnames(data)

# A stand-in with the table's column names, for the checks that look at
# names(data) only.
db_names_only <- function(data) {
  cols <- db_colnames(data)
  stats::setNames(vector("list", length(cols)), cols)
}

# The nonempty cells of `vars`, counted by the database (one GROUP BY), in
# the numbering of cell_frequencies() on the same data in memory.
cell_frequencies_db <- function(data, keys, na = c("exclude", "category"),
                                call = rlang::caller_env()) {
  check_db_packages(call = call)
  na <- check_choice(na, c("exclude", "category"), call = call)
  check_names_in(keys, db_names_only(data), call = call)
  check_names_free(keys, cell_columns, call = call)
  syms <- rlang::syms(keys)
  grouped <- dplyr::collect(dplyr::summarise(
    dplyr::group_by(data, !!!syms),
    sdc_count__ = dplyr::n(),
    .groups = "drop"
  ))
  cells_from_groups(grouped, keys, na, call = call)$cells
}

# The sdc_cells object of grouped counts (one row per combination of the
# keys, NA included, counts in `sdc_count__`), and for each cell the row of
# `grouped` it came from.
cells_from_groups <- function(grouped, keys, na, call = rlang::caller_env()) {
  grouped <- as.data.frame(grouped, stringsAsFactors = FALSE)
  # (compact row names: drivers may return them as a vector of millions,
  # which every subset below would copy and check)
  rownames(grouped) <- NULL
  rows <- seq_len(nrow(grouped))
  counts <- as.integer(grouped$sdc_count__)
  n_records <- sum(as.numeric(counts))
  has_na <- Reduce(`|`, lapply(keys, function(k) is.na(grouped[[k]])))
  n_excluded <- 0
  if (na == "exclude" && any(has_na)) {
    n_excluded <- sum(as.numeric(counts[has_na]))
    grouped <- grouped[!has_na, , drop = FALSE]
    counts <- counts[!has_na]
    rows <- rows[!has_na]
  }
  if (nrow(grouped) == 0) {
    abort_sdc(c(
      "No record has a value in every key of {.arg keys}.",
      "x" = if (n_records == 0) "The table has no rows." else "All {fmt_int(n_records)} records have a missing key value.",
      "i" = "Use {.code na = \"category\"} to treat {.val NA} as a category."
    ), if (n_records == 0) "empty_data" else "key_type", call = call)
  }
  # the in-memory numbering: lexicographic in each key's sorted categories
  coded <- lapply(keys, function(k) code_key(grouped[[k]], k, na == "category", call = call))
  warn_distinct_keys(keys, lapply(keys, function(k) length(unique(grouped[[k]]))), n_records, call = call)
  ord <- do.call(order, unname(lapply(coded, `[[`, "codes")))
  cells <- grouped[ord, keys, drop = FALSE]
  rownames(cells) <- NULL
  cells$count <- counts[ord]
  # the types of the in-memory counts: integer records (where they fit), double excluded
  as_count <- function(x) if (x <= .Machine$integer.max) as.integer(x) else x
  list(
    cells = new_sdc_cells(
      cells = cells,
      cell_id = NULL,
      keys = keys,
      na = na,
      n_records = as_count(n_records),
      n_excluded = as.numeric(n_excluded)
    ),
    rows = rows[ord]
  )
}

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
#' @export
ifpr.tbl_lazy <- function(data, keys, xi,
                          goal = c("all_matches", "unique_matches", "sample_uniques"),
                          partition = NULL, also = NULL, method = c("tiered", "nayak", "optimal"),
                          calibrate = c("exact", "bound"), on_infeasible = c("error", "merge"),
                          ..., na = c("exclude", "category"), split = FALSE, known = NULL,
                          damage = c("keys", "records", "variance", "distance"), weights = NULL, ordered = NULL,
                          id, name, overwrite = FALSE) {
  rlang::check_dots_empty()
  check_db_packages()
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
  con <- dbplyr::remote_con(data)
  target <- check_db_output(con, name, overwrite, data)
  check_db_id_arg(data, id, vars)

  # one transaction from the id check to the rename of the released table
  db_progress_start(target)
  tx <- db_begin(con)
  committed <- FALSE
  on.exit(if (!committed) db_rollback(tx), add = TRUE)
  restore <- function() invisible()
  # (settings restored before the rollback or the commit)
  on.exit(restore(), add = TRUE, after = FALSE)
  db_failure_classed({
    restore <- db_tune(con)
    db_step_hook("begin", con)
    ids <- check_db_id(data, id)
    db_step_hook("id_checked", con)
    counted <- count_cells_release(data, con, vars, id, na, rowid = ids$int32)
    cf <- counted$cells
    db_step_hook("counted", con)
  })
  d <- ifpr_design(cf, vars, keys, xi, goal, partition, method, calibrate, on_infeasible, split,
    known = known, design = design
  )
  moves <- draw_moves(d$plan)
  db_failure_classed({
    db_step_hook("drawn", con, n_moves = nrow(moves))
    write_release_db(data, con, vars, id, moves, counted, target, overwrite)
    db_step_hook("commit", con)
    restore()
    restore <- function() invisible()
  })
  db_failure_classed(db_commit(tx), committing = TRUE)
  committed <- TRUE
  db_progress_done()
  released <- db_target_tbl(con, target)

  rel <- new_sdc_release(
    data = released, plan = d$plan, plan_bound = d$plan_bound, cells = cf, new_cell = integer(),
    keys = keys, also = also, xi = xi, goal = goal, method = method, calibrate = calibrate,
    partition = partition, sets = d$ps$sets, des = d$des, max_risk = d$mx, set_of_cell = d$ps$set_of_cell,
    known_risk = d$known, bound = d$bound, design = d$design
  )
  # the realised changes, from the moves (new_sdc_release() reads them from
  # a record-level vector there is none of here)
  counts <- cf$cells$count
  s_new <- counts - tabulate(moves$cell, length(counts)) + tabulate(moves$new_cell, length(counts))
  rel$certificate$records_changed <- nrow(moves)
  rel$certificate$cells_changed <- sum(s_new != counts)
  rel$new_cell <- NULL
  rel$moves <- moves
  rel$id <- id
  rel$table <- db_target_label(target)
  rel$original <- data
  class(rel) <- c("sdc_release_db", class(rel))
  rel
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
check_db_output <- function(con, name, overwrite, data, call = rlang::caller_env()) {
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
  if (!is.na(target$schema) && !db_schema_exists(con, target$schema)) {
    abort_sdc(c(
      "{.arg name} must be a table of a schema of the database.",
      "x" = "There is no schema {.val {target$schema}}."
    ), "argument", call = call)
  }
  src <- db_source_tables(data, con)
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
  if (!overwrite && db_relation_exists(con, target)) {
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
# database in one pass, before anything is drawn or written. PostgreSQL
# counts distinct values by sorting them; SQLite would insert every value
# into a b-tree for COUNT(DISTINCT) (15 times slower at 10^6), so there, and
# elsewhere, the ids are grouped (missing ones form one group) and the
# groups counted.
#
# A plain table whose id column the database itself keeps unique and never
# missing (db_id_declared()) needs no pass: the check is skipped there.
# Returns `int32`: whether the pass found every id stored as an integer
# between -(2^31 - 1) and 2^31 - 1 (SQLite only; FALSE where not checked).
check_db_id <- function(data, id, call = rlang::caller_env()) {
  if (db_id_declared(data, id)) return(invisible(list(int32 = FALSE)))
  idsym <- rlang::sym(id)
  con <- dbplyr::remote_con(data)
  if (db_kind(con) == "postgres") {
    s <- dplyr::collect(dplyr::summarise(data,
      n = dplyr::n(),
      n_missing = sum(ifelse(is.na(!!idsym), 1L, 0L), na.rm = TRUE),
      n_distinct = dplyr::n_distinct(!!idsym)
    ))
  } else {
    n_col <- if (id == "sdc_n") "sdc_n_" else "sdc_n"
    nsym <- rlang::sym(n_col)
    per_id <- dplyr::summarise(dplyr::group_by(data, !!idsym), !!n_col := dplyr::n(), .groups = "drop")
    # SQLite: also how many ids are stored as integers of 32 bits (its
    # columns may mix types), for count_cells_release(rowid = TRUE); other
    # backends get the portable query alone
    qi <- db_quote(con, id)
    int32 <- if (db_kind(con) == "sqlite") {
      dplyr::sql(paste0(
        "SUM(CASE WHEN typeof(", qi, ") = 'integer' AND ", qi, " BETWEEN -2147483647 AND 2147483647 THEN ",
        db_quote(con, n_col), " ELSE 0 END)"
      ))
    }
    s <- dplyr::collect(dplyr::summarise(per_id,
      n_distinct = dplyr::n(),
      n = sum(!!nsym, na.rm = TRUE),
      n_missing = sum(ifelse(is.na(!!idsym), !!nsym, 0L), na.rm = TRUE),
      n_int32 = !!(int32 %||% 0L)
    ))
  }
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
# read from the catalogue, never from the records:
# * SQLite: `id` is the table's INTEGER PRIMARY KEY (an alias of the rowid,
#   which is never NULL; not when declared DESC, which SQLite makes an
#   ordinary key that allows NULL: it then has a "pk" index), or a column
#   declared NOT NULL with a unique index on it alone (not partial);
# * PostgreSQL: a column declared NOT NULL with a valid unique index
#   (primary key or UNIQUE) on it alone, not partial.
# Anything else (queries, other backends, catalogue errors) answers FALSE,
# and the ids are checked by a pass over the records.
db_id_declared <- function(data, id) {
  name <- tryCatch(dbplyr::remote_name(data), error = function(e) NULL)
  if (!inherits(name, "ident") || length(name) != 1 || !nzchar(name)) return(FALSE)
  name <- as.character(name)
  con <- dbplyr::remote_con(data)
  kind <- db_kind(con)
  tryCatch(
    {
      if (kind == "sqlite") {
        qn <- DBI::dbQuoteIdentifier(con, name)
        cols <- db_get(con, paste0("PRAGMA table_info(", qn, ")"))
        idx <- db_get(con, paste0("PRAGMA index_list(", qn, ")"))
        col <- cols[cols$name == id, , drop = FALSE]
        if (nrow(col) != 1) return(FALSE)
        if (sum(cols$pk > 0) == 1 && col$pk == 1 && toupper(col$type) == "INTEGER" &&
          !any(idx$origin == "pk")) {
          return(TRUE)
        }
        if (col$notnull != 1) return(FALSE)
        for (i in which(idx$unique == 1 & idx$partial == 0)) {
          info <- db_get(con, paste0("PRAGMA index_info(", DBI::dbQuoteIdentifier(con, idx$name[i]), ")"))
          if (nrow(info) == 1 && identical(info$name, id)) return(TRUE)
        }
        FALSE
      } else if (kind == "postgres") {
        qn <- as.character(DBI::dbQuoteIdentifier(con, name))
        sql <- paste0(
          "SELECT COUNT(*) AS n FROM pg_index i JOIN pg_attribute a",
          " ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]",
          " WHERE i.indrelid = to_regclass(", DBI::dbQuoteString(con, qn), ")",
          " AND i.indisunique AND i.indisvalid AND i.indnkeyatts = 1 AND i.indpred IS NULL",
          " AND i.indexprs IS NULL AND a.attnotnull AND a.attname = ", DBI::dbQuoteString(con, id)
        )
        isTRUE(as.numeric(db_get(con, sql)$n) > 0)
      } else {
        FALSE
      }
    },
    error = function(e) FALSE
  )
}

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

# Write the released table, inside the caller's transaction. The moved
# records are named (release_movers(): by R from the ids read with the
# counts, or by the database from the moves, three integers each: the
# database's number of the cell, the rank in it, the new cell), and the
# database writes the table with their keys rewritten (a join on id). The table is written under
# a fresh name and renamed to the target at the end (dropping the old one
# only with `overwrite`).
write_release_db <- function(data, con, vars, id, moves, counted, target, overwrite,
                             call = rlang::caller_env()) {
  src <- counted$src
  cols <- db_colnames(data)
  schema <- if (is.na(target$schema)) db_default_schema(con) else target$schema
  fresh <- list(schema = schema, table = db_fresh_name(con, "out", schema))
  movers <- NULL
  if (nrow(moves) > 0) {
    movers <- release_movers(con, src, vars, id, moves, counted, call = call)
    db_step_hook("movers", con)
  }
  DBI::dbExecute(con, dbplyr::sql_query_save(con, dbplyr::sql(release_out_sql(con, src, cols, vars, id, movers, counted)),
    dbplyr::ident_q(db_target_sql(con, fresh)),
    temporary = FALSE
  ))
  db_step_hook("written", con)
  for (tmp in c(movers$tables, counted$table)) db_drop(con, tmp)
  db_swap(con, fresh, target, overwrite, call = call)
  invisible()
}

db_source_sql <- function(data) paste0("(", as.character(dbplyr::sql_render(data)), ") d")

# The counts of the release, by the database in one GROUP BY kept as a
# temporary table with the database's name of each cell (SQLite: the
# rowid; integer ids of 32 bits elsewhere: the smallest id; else a
# number), and per cell the smallest, largest (and for integer ids the
# sum of the) ids: the ids of ranks 1 and T, and of rank 2 of 3, so that
# the moved records of cells of up to 3 records are found without reading
# the table again. Returns the sdc_cells object, each cell's name in the
# database, the table's name, and up to which count the shortcut holds.
count_cells_release <- function(data, con, vars, id, na, rowid = FALSE, call = rlang::caller_env()) {
  q <- function(x) db_quote(con, x)
  table_src <- if (isTRUE(rowid)) db_rowid_source(data, con)
  by_rowid <- !is.null(table_src)
  src <- table_src %||% db_source_sql(data)
  kind <- db_kind(con)
  id_type <- typeof(db_get(con, paste0("SELECT d.", q(id), " AS i FROM ", src, " WHERE 1 = 0"))$i)
  integer_id <- by_rowid || id_type == "integer"
  key_cols <- paste0("sdc_key_", seq_along(vars))
  did <- paste0("d.", q(id))
  # by rowid: per cell the rowids of the records of the smallest and the
  # largest id, as id and rowid packed in one integer of 63 bits
  # ((id + 2^31) 2^31 + rowid: ids of 32 bits, rowids below 2^31), and the
  # sum of the rowids
  packed <- paste0("((", did, " + 2147483648) * 2147483648 + d.rowid)")
  grouped <- paste0(
    "SELECT ", paste0("d.", q(vars), " AS ", key_cols, collapse = ", "),
    if (by_rowid) {
      paste0(", COUNT(*) AS sdc_n, MIN(", packed, ") AS sdc_lo, MAX(", packed, ") AS sdc_hi, SUM(d.rowid) AS sdc_sum")
    } else {
      paste0(
        ", COUNT(*) AS sdc_n, MIN(", did, ") AS sdc_lo, MAX(", did, ") AS sdc_hi",
        if (integer_id) paste0(", SUM(", did, ") AS sdc_sum")
      )
    },
    " FROM ", src, " GROUP BY ", paste0("d.", q(vars), collapse = ", ")
  )
  # other than SQLite, with ids that R reads exactly (integers of 32 bits):
  # the ids of ranks 1, 2 and 3 of the cells of up to 3 records are read
  # with the cells, so that R names the moved records of those cells
  # (release_movers()): about 2 s of R's time at 10^7 records, against 5 to
  # 9 s for the database's join of the moves to the counts. The middle id
  # (the sum less both ends) is one of the cell's ids, so an integer. Each
  # cell is then named by its smallest id (the ids are unique), which the
  # counts hold already: no numbering of the cells in the database.
  ids_in_r <- kind != "sqlite" && !by_rowid && integer_id
  table <- db_fresh_name(con, "counts")
  if (kind == "sqlite" || ids_in_r) {
    DBI::dbExecute(con, paste("CREATE TEMPORARY TABLE", q(table), "AS", grouped))
    cell_col <- if (ids_in_r) "sdc_lo" else "rowid"
  } else {
    DBI::dbExecute(con, paste(
      "CREATE TEMPORARY TABLE", q(table), "AS SELECT CAST(ROW_NUMBER() OVER () AS INTEGER) AS sdc_cell, g.* FROM (", grouped, ") g"
    ))
    cell_col <- "sdc_cell"
  }
  got <- db_get(con, paste0(
    "SELECT ", cell_col, " AS sdc_cell, ", paste(key_cols, collapse = ", "), ", sdc_n AS sdc_count__",
    if (ids_in_r) {
      paste0(
        ", CASE WHEN sdc_n BETWEEN 2 AND 3 THEN sdc_hi END AS sdc_hi,",
        " CASE WHEN sdc_n = 3 THEN CAST(sdc_sum - sdc_lo - sdc_hi AS INTEGER) END AS sdc_mid"
      )
    },
    " FROM ", q(table)
  ))
  if (ids_in_r) got$sdc_lo <- got$sdc_cell
  id_cols <- c("sdc_lo", "sdc_mid", "sdc_hi")
  ids <- if (ids_in_r) got[id_cols]
  got <- got[setdiff(names(got), id_cols)]
  names(got)[match(key_cols, names(got))] <- vars
  made <- cells_from_groups(got, vars, na, call = call)
  if (ids_in_r) ids <- lapply(ids, function(x) x[made$rows])
  list(
    cells = made$cells, db_cell = as.integer(got$sdc_cell[made$rows]), table = table, cell_col = cell_col,
    shortcut = if (integer_id) 3L else 2L, integer_id = integer_id, by_rowid = by_rowid, src = src, ids = ids
  )
}

# SQLite: the source as its table, `"name" d`, where the moved records can
# be named by their rowids: a plain table (no query on it) with rowids
# between 0 and 2^31 - 1 and no column that hides the rowid (rowid, oid,
# _rowid_); NULL otherwise (a WITHOUT ROWID table has no rowid: the query
# fails). The write then looks the movers up in rowid order, as the source
# is read, rather than in the order of the ids (measured: 2.6 times faster
# at 10^7 records with ids in random order).
db_rowid_source <- function(data, con) {
  if (db_kind(con) != "sqlite") return(NULL)
  name <- tryCatch(dbplyr::remote_name(data), error = function(e) NULL)
  if (!inherits(name, "ident") || length(name) != 1 || !nzchar(name)) return(NULL)
  qn <- as.character(DBI::dbQuoteIdentifier(con, as.character(name)))
  tryCatch(
    {
      cols <- db_get(con, paste0("PRAGMA table_info(", qn, ")"))
      if (nrow(cols) == 0 || any(tolower(cols$name) %in% c("rowid", "oid", "_rowid_"))) return(NULL)
      r <- db_get(con, paste0("SELECT MIN(rowid) AS lo, MAX(rowid) AS hi FROM ", qn))
      lo <- as.numeric(r$lo)
      hi <- as.numeric(r$hi)
      if (length(lo) != 1 || is.na(lo) || is.na(hi) || lo < 0 || hi > 2147483647) return(NULL)
      paste(qn, "d")
    },
    error = function(e) NULL
  )
}

# The moved records as a temporary table: their ids (by rowid: their rowids) and new cells
# (SQLite: their new keys). Cells of up to `shortcut` records take the ids
# from the counts (rank 1 the smallest id, rank T the largest, rank 2 of 3
# the sum less both): named by R where it read them with the cells
# (count_cells_release(), integer ids outside SQLite) and uploaded as they
# are, else by a join of the moves to the counts table; records of larger
# cells with a move are found by a join of the source to those cells only,
# and numbered in each cell by id.
release_movers <- function(con, src, vars, id, moves, counted, call = rlang::caller_env()) {
  q <- function(x) db_quote(con, x)
  kind <- db_kind(con)
  tables <- c(moves = db_fresh_name(con, "moves"), movers = db_fresh_name(con, "movers"))
  counts <- counted$cells$cells$count
  cell <- counted$db_cell
  mv <- q(tables[["movers"]])
  ids <- counted$ids
  if (!is.null(ids)) {
    # the moved records of cells of up to 3 records, named here: the
    # moves of larger cells alone go up for the database to rank
    small <- counts[moves$cell] <= counted$shortcut
    named <- moves_ids(moves[small, , drop = FALSE], counts, ids, call = call)
    if (length(named) > 0) {
      db_upload_temp(con, tables[["movers"]], data.frame(sdc_id = named, sdc_new = cell[moves$new_cell[small]]))
    } else {
      DBI::dbExecute(con, paste("CREATE TEMPORARY TABLE", mv, "(sdc_id INTEGER, sdc_new INTEGER)"))
    }
    moves <- moves[!small, , drop = FALSE]
  }
  if (nrow(moves) > 0) {
    db_upload_temp(con, tables[["moves"]], data.frame(
      sdc_cell = cell[moves$cell], sdc_rank = as.integer(moves$rank), sdc_new = cell[moves$new_cell]
    ))
  } else {
    tables <- tables[names(tables) != "moves"]
  }
  db_step_hook("uploaded", con)
  kc <- paste0("k.", counted$cell_col)
  mt <- if ("moves" %in% names(tables)) q(tables[["moves"]])
  ct <- q(counted$table)
  # (by rowid: the rowids unpacked from the counts, see count_cells_release())
  lo <- if (counted$by_rowid) "(k.sdc_lo % 2147483648)" else "k.sdc_lo"
  hi <- if (counted$by_rowid) "(k.sdc_hi % 2147483648)" else "k.sdc_hi"
  parts <- if (is.null(ids)) {
    paste0(
      "SELECT CASE WHEN m.sdc_rank = 1 THEN ", lo, " WHEN m.sdc_rank = k.sdc_n THEN ", hi,
      if (counted$shortcut >= 3) paste0(" ELSE k.sdc_sum - ", lo, " - ", hi), " END AS sdc_id, m.sdc_new AS sdc_new",
      " FROM ", mt, " m INNER JOIN ", ct, " k ON ", kc, " = m.sdc_cell WHERE k.sdc_n <= ", counted$shortcut
    )
  }
  big <- unique(moves$cell[counts[moves$cell] > counted$shortcut])
  if (length(big) > 0) {
    # the larger cells with a move: their keys, each matched by equality,
    # or where one of them is NA by equality of the value with NA replaced
    # by a constant and of an NA flag (hashable, unlike IS NOT DISTINCT FROM)
    tables[["cells"]] <- db_fresh_name(con, "cells")
    cells <- data.frame(sdc_cell = cell[big])
    on <- character(length(vars))
    for (k in seq_along(vars)) {
      v <- counted$cells$cells[[vars[k]]][big]
      kcol <- paste0("sdc_key_", k)
      dk <- paste0("d.", q(vars[k]))
      if (anyNA(v)) {
        zero <- vector(typeof(v), 1)
        cells[[kcol]] <- ifelse(is.na(v), zero, v)
        cells[[paste0("sdc_na_", k)]] <- as.integer(is.na(v))
        on[k] <- sprintf(
          "COALESCE(%s, %s) = c.%s AND (CASE WHEN %s IS NULL THEN 1 ELSE 0 END) = c.sdc_na_%d",
          dk, DBI::dbQuoteLiteral(con, zero), kcol, dk, k
        )
      } else {
        cells[[kcol]] <- v
        on[k] <- sprintf("%s = c.%s", dk, kcol)
      }
    }
    db_upload_temp(con, tables[["cells"]], cells)
    if (kind == "sqlite") {
      # SQLite joins by index lookups: a covering index, the key with the
      # most distinct values first (fewest comparisons per lookup)
      spread <- vapply(seq_along(vars), function(k) length(unique(cells[[paste0("sdc_key_", k)]])), numeric(1))
      db_index(con, tables[["cells"]], c(paste0("sdc_key_", order(-spread)), grep("^sdc_na_", names(cells), value = TRUE), "sdc_cell"))
      db_index(con, tables[["moves"]], c("sdc_cell", "sdc_rank", "sdc_new"))
    }
    db_analyze(con, tables[c("moves", "cells")])
    parts <- c(parts, paste0(
      "SELECT s.sdc_id AS sdc_id, m.sdc_new AS sdc_new FROM (SELECT ", if (counted$by_rowid) "d.rowid" else paste0("d.", q(id)),
      " AS sdc_id, c.sdc_cell AS sdc_cell, ",
      "ROW_NUMBER() OVER (PARTITION BY c.sdc_cell ORDER BY d.", q(id), ") AS sdc_rank FROM ", src,
      " INNER JOIN ", q(tables[["cells"]]), " c ON ", paste(on, collapse = " AND "),
      ") s INNER JOIN ", mt, " m ON s.sdc_cell = m.sdc_cell AND s.sdc_rank = m.sdc_rank"
    ))
  } else if (is.null(ids)) {
    db_analyze(con, tables[["moves"]])
  }
  moved <- paste0("SELECT u.sdc_id AS sdc_id, u.sdc_new AS sdc_new FROM (", paste(parts, collapse = " UNION ALL "), ") u")
  if (kind == "sqlite") {
    # each moved record's id and new keys, looked up once per record of the
    # source: by rowid where ids are integers. The new keys are joined here,
    # in the order of the moves, rather than looked up in the large counts
    # table during the write (measured: slower at 10^7 records)
    new_cols <- paste0("sdc_new_", seq_along(vars))
    DBI::dbExecute(con, paste0(
      "CREATE TEMPORARY TABLE ", mv, " (sdc_id", if (counted$integer_id) " INTEGER PRIMARY KEY", ", ",
      paste(new_cols, collapse = ", "), ")"
    ))
    # in id order: appended to the end of the table's b-tree, not scattered
    DBI::dbExecute(con, paste0(
      "INSERT INTO ", mv, " SELECT w.sdc_id, ", paste0("k.sdc_key_", seq_along(vars), collapse = ", "),
      " FROM (", moved, ") w INNER JOIN ", ct, " k ON ", kc, " = w.sdc_new ORDER BY w.sdc_id"
    ))
    if (!counted$integer_id) db_index(con, tables[["movers"]], c("sdc_id", new_cols), unique = TRUE)
  } else if (!is.null(ids)) {
    # the records of the larger cells join those named by R (the moves
    # left are those of the larger cells: the count inserted must match)
    found <- 0
    if (length(big) > 0) found <- as.numeric(DBI::dbExecute(con, paste("INSERT INTO", mv, moved)))
  } else {
    # each moved record's id and the number of its new cell: a narrow table
    # to hash; the write joins the new cells' keys from the counts
    DBI::dbExecute(con, paste("CREATE TEMPORARY TABLE", mv, "AS", moved))
  }
  if (is.null(ids)) found <- as.numeric(db_get(con, paste("SELECT COUNT(*) AS n FROM", mv))$n)
  if (found != nrow(moves)) {
    abort_db_changed("{fmt_int(nrow(moves))} moves were drawn, {fmt_int(found)} records found for them.",
                     call = call)
  }
  db_analyze(con, tables[["movers"]])
  list(tables = unname(tables), movers = tables[["movers"]])
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

db_index <- function(con, table, cols, unique = FALSE) {
  DBI::dbExecute(con, sprintf(
    "CREATE %sINDEX %s ON %s (%s)", if (unique) "UNIQUE " else "",
    db_quote(con, paste0(table, "_i")), db_quote(con, table), paste(db_quote(con, cols), collapse = ", ")
  ))
}

# Statistics of the working tables, so that PostgreSQL hashes them (the
# small side) rather than the source; SQLite needs none (index lookups).
db_analyze <- function(con, tables) {
  if (db_kind(con) == "postgres") for (t in tables) DBI::dbExecute(con, paste("ANALYZE", db_quote(con, t)))
  invisible()
}

# The released table: every record of the source, the keys of the moved
# ones (a join on id) replaced by the keys of their new cells; columns in
# their order. SQLite looks each record up in the movers' b-tree;
# PostgreSQL hashes the movers joined to their new cells' keys.
release_out_sql <- function(con, src, cols, vars, id, movers, counted) {
  q <- function(x) db_quote(con, x)
  if (is.null(movers)) return(paste0("SELECT ", paste0("d.", q(cols), collapse = ", "), " FROM ", src))
  select <- vapply(cols, function(v) {
    k <- match(v, vars)
    if (is.na(k)) return(paste0("d.", q(v)))
    sprintf("CASE WHEN v.sdc_id IS NULL THEN d.%s ELSE v.sdc_new_%d END AS %s", q(v), k, q(v))
  }, "")
  mv <- q(movers$movers)
  moved <- if (db_kind(con) == "sqlite") {
    mv
  } else {
    paste0(
      "(SELECT m.sdc_id AS sdc_id, ", paste0("k.sdc_key_", seq_along(vars), " AS sdc_new_", seq_along(vars), collapse = ", "),
      " FROM ", mv, " m INNER JOIN ", q(counted$table), " k ON k.", counted$cell_col, " = m.sdc_new)"
    )
  }
  on <- if (counted$by_rowid) "d.rowid" else paste0("d.", q(id))
  paste0("SELECT ", paste(select, collapse = ", "), " FROM ", src, " LEFT JOIN ", moved, " v ON ", on, " = v.sdc_id")
}

# Replace the target by the fresh table, inside the caller's transaction:
# drop the old table (only with `overwrite`) and rename the fresh one.
db_swap <- function(con, fresh, target, overwrite, call = rlang::caller_env()) {
  if (db_relation_exists(con, target)) {
    if (!overwrite) {
      abort_sdc(c(
        "A table called {.val {db_target_label(target)}} already exists.",
        "x" = "It was created while the release was made; nothing was written.",
        "i" = "Choose another {.arg name}, or use {.code overwrite = TRUE} to replace it."
      ), "db_table_exists", call = call)
    }
    DBI::dbExecute(con, paste("DROP TABLE", db_target_sql(con, target)))
    db_step_hook("dropped", con)
  }
  DBI::dbExecute(con, paste("ALTER TABLE", db_target_sql(con, fresh), "RENAME TO", db_quote(con, target$table)))
  db_step_hook("renamed", con)
  invisible()
}

# Settings that make the database choose the plans the release relies on;
# returns a function that restores them. PostgreSQL: hash joins (its
# estimate for a join on several keys assumes the keys independent and
# prefers sorting the whole table for a merge join), and no JIT compilation
# (those estimates make it compile for a second at 10^6 records). SQLite:
# room for the working tables (the counts) and their indexes in memory (its
# default temporary cache is 2 MB). Set for the whole transaction.
db_tune <- function(con) {
  kind <- db_kind(con)
  if (kind == "postgres") {
    settings <- c("enable_mergejoin", "enable_nestloop", "jit")
    old <- vapply(settings, function(s) {
      db_get(con, paste0("SELECT current_setting(", DBI::dbQuoteString(con, s), ") AS v"))$v
    }, "")
    for (s in settings) DBI::dbExecute(con, paste("SET LOCAL", s, "= off"))
    return(function() suppressWarnings(try(silent = TRUE, {
      for (s in settings) DBI::dbExecute(con, paste("SET LOCAL", s, "=", DBI::dbQuoteString(con, old[[s]])))
    })))
  }
  if (kind == "sqlite") {
    old <- db_get(con, "PRAGMA temp.cache_size")[[1]]
    DBI::dbExecute(con, "PRAGMA temp.cache_size = -262144")
    return(function() suppressWarnings(try(DBI::dbExecute(con, paste0("PRAGMA temp.cache_size = ", as.integer(old))), silent = TRUE)))
  }
  function() invisible()
}

#' @export
format.sdc_release_db <- function(x, ...) {
  c(
    NextMethod(),
    paste0("Released table: ", x$table, " (in the database; ", n_of(nrow(x$moves), "record"), " moved)")
  )
}

# ---------------------------------------------------------------------------
# Evaluation of a release written to a database, from counts: the database
# counts the original and the released tables, R compares.

# What release_risk() reads of a release in a database, for the units whose
# cell could change (cells of count 1 or 2, cells whose units can move) and
# only for them: their original and released cells, rebuilt from the counts
# and the moves (a unit is its cell and its rank there). The records of
# other cells never move. The released counts come from the moves.
#' @export
release_units.sdc_release_db <- function(release) {
  counts <- release$cells$cells$count
  inside <- which(counts <= 2 | plan_movable(release$plan))
  old <- rep.int(inside, counts[inside])
  start <- integer(length(counts))
  start[inside] <- cumsum(counts[inside]) - counts[inside]
  new <- old
  mv <- release$moves
  new[start[mv$cell] + mv$rank] <- mv$new_cell
  ncell <- length(counts)
  list(old = old, new = new,
       s_new = counts - tabulate(mv$cell, ncell) + tabulate(mv$new_cell, ncell))
}

# A release in a database: its cells (counted by the database, no record
# ids), its plan, and the moves, each a cell of a block, a rank within that
# cell's records and another cell of the same block.
#' @export
validate_release.sdc_release_db <- function(x, arg = "release", call = rlang::caller_env()) {
  hint <- "Use the object {.fn ifpr} returned, unmodified."
  if (!is_db_table(x$data) || !is_db_table(x$original)) {
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

# Counts of every combination of `vars` in a table, by the database; NA is a
# value like any other.
db_counts <- function(tbl, vars) {
  out <- dplyr::collect(dplyr::summarise(
    dplyr::group_by(tbl, !!!rlang::syms(vars)),
    sdc_count__ = dplyr::n(),
    .groups = "drop"
  ))
  out <- as.data.frame(out, stringsAsFactors = FALSE)
  # integers where they fit, as table() gives in memory
  cnt <- as.numeric(out$sdc_count__)
  out$sdc_count__ <- if (all(cnt <= .Machine$integer.max)) as.integer(cnt) else cnt
  out
}

# The distributions release_utility() compares, for a release in a
# database: the same tables as for a data frame (distribution_table() and
# tvd_row() of release-evaluate.R), from counts made by the database.
#' @export
release_distributions.sdc_release_db <- function(release, combos, singles) {
  n <- release$cells$n_records
  key_of <- function(d) do.call(paste, c(lapply(d, as.character), sep = "\r"))
  tvd_counts <- function(cv) {
    a <- db_counts(release$original, cv)
    b <- db_counts(release$data, cv)
    ka <- key_of(a[cv])
    kb <- key_of(b[cv])
    all <- unique(c(ka, kb))
    fa <- integer(length(all))
    fb <- integer(length(all))
    fa[match(ka, all)] <- a$sdc_count__
    fb[match(kb, all)] <- b$sdc_count__
    ncat <- prod(vapply(cv, function(v) {
      length(unique(c(as.character(a[[v]]), as.character(b[[v]]))))
    }, numeric(1)))
    data.frame(variables = paste(cv, collapse = ", "), tvd = sum(abs(fa - fb)) / (2 * n),
      cells = ncat, nonempty = length(all))
  }
  dist_counts <- function(v) {
    a <- db_counts(release$original, v)
    b <- db_counts(release$data, v)
    lev <- sort(unique(c(a[[v]], b[[v]])), na.last = TRUE)
    o <- a$sdc_count__[match(lev, a[[v]])]
    p <- b$sdc_count__[match(lev, b[[v]])]
    o[is.na(o)] <- 0L
    p[is.na(p)] <- 0L
    data.frame(
      category = as.character(lev), original = o, original_share = o / n,
      perturbed = p, perturbed_share = p / n, difference = o - p,
      sampling_sd = sqrt(n * (o / n) * (1 - o / n))
    )
  }
  list(
    distributions = stats::setNames(lapply(singles, dist_counts), singles),
    tvd = do.call(rbind, lapply(combos, tvd_counts)),
    n = n
  )
}
