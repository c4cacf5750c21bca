# The cells of a table in a database, counted by the database (one GROUP
# BY), in the numbering of cell_frequencies() on the same data in memory:
# for cell_frequencies() on a lazy table and for the release, whose counts
# table also names each cell and the records the counts can name (the
# namings of db-movers.R).

# The nonempty cells of `vars`, counted by the database (one GROUP BY), in
# the numbering of cell_frequencies() on the same data in memory.
#' @export
cell_frequencies.tbl_lazy <- function(data, keys, na = c("exclude", "category")) {
  check_db_packages()
  na <- check_choice(na)
  check_names_in(keys, db_names_only(data))
  check_names_free(keys, cell_columns)
  syms <- rlang::syms(keys)
  grouped <- dplyr::collect(dplyr::summarise(
    dplyr::group_by(data, !!!syms),
    sdc_count__ = dplyr::n(),
    .groups = "drop"
  ))
  cells_from_groups(grouped, keys, na)$cells
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

# The counts of the release, by the database in one GROUP BY kept as a
# temporary table, in the naming the dialect chooses (db_cells_naming()):
# each cell's name in the database, and per cell its smallest and largest
# records (and with integers their sum), so that the moved records of cells
# of up to 2 or 3 records are found without reading the source again.
# `int32`: the id check found every id an integer of 32 bits. Returns the
# naming with the sdc_cells object (`cells`), each cell's name in the
# database (`db_cell`) and the counts table (`table`).
count_cells_release <- function(db, data, vars, id, na, int32 = FALSE, call = rlang::caller_env()) {
  con <- db$con
  naming <- db_cells_naming(db, data, id, int32)
  naming$table <- db_fresh_name(db, "counts")
  DBI::dbExecute(con, counts_sql(naming, db, vars, id))
  key_cols <- paste0("sdc_key_", seq_along(vars))
  got <- db_get(con, paste0(
    "SELECT ", naming$cell_col, " AS sdc_cell, ", paste(key_cols, collapse = ", "), ", sdc_n AS sdc_count__",
    counts_ids_sql(naming), " FROM ", db_quote(con, naming$table)
  ))
  main <- c("sdc_cell", key_cols, "sdc_count__")
  extra <- got[setdiff(names(got), main)]
  got <- got[main]
  names(got)[match(key_cols, names(got))] <- vars
  made <- cells_from_groups(got, vars, na, call = call)
  naming$cells <- made$cells
  naming$db_cell <- as.integer(got$sdc_cell[made$rows])
  naming$ids <- counts_ids(naming, got$sdc_cell, extra, made$rows)
  naming
}
