# What the release inside a database needs from the database beyond dplyr
# verbs: which tables a lazy query reads, whether a table exists, one
# transaction around everything the release writes, temporary tables, and
# quoted names. SQLite and PostgreSQL (drivers RPostgreSQL and RPostgres) are
# known; other DBI backends get the portable subset.

db_kind <- function(con) {
  if (inherits(con, "SQLiteConnection")) return("sqlite")
  if (inherits(con, c("PostgreSQLConnection", "PqConnection"))) return("postgres")
  "other"
}

# A query's result; an error when the database could not run it (RPostgreSQL
# returns NULL with a warning instead).
db_get <- function(con, sql) {
  out <- DBI::dbGetQuery(con, sql)
  if (is.null(out)) stop("the database could not run: ", substr(sql, 1, 80), call. = FALSE)
  out
}

# Quoted identifiers, one string per element.
db_quote <- function(con, x) as.character(DBI::dbQuoteIdentifier(con, x))

# ---------------------------------------------------------------------------
# The output table: a name, DBI::Id(schema =, table =) or
# dbplyr::in_schema(). A list with `schema` (NA when not given) and `table`.

db_target <- function(name, call = rlang::caller_env()) {
  bad <- function(found) {
    abort_sdc(c(
      "{.arg name} must be the name of the table to write the release to.",
      "x" = found,
      "i" = "Give a string, {.code DBI::Id(schema = , table = )} or {.code dbplyr::in_schema()}."
    ), "argument", call = call)
  }
  ok_string <- function(x) is.character(x) && length(x) == 1 && !is.na(x) && nzchar(x)
  if (inherits(name, "Id")) {
    parts <- name@name
    if (!all(names(parts) %in% c("schema", "table")) || !ok_string(parts[["table"]] %||% NA_character_)) {
      bad("It is an {.cls Id} with parts {.val {names(parts)}}.")
    }
    schema <- if ("schema" %in% names(parts)) unname(parts[["schema"]]) else NA_character_
    return(list(schema = schema, table = unname(parts[["table"]])))
  }
  if (inherits(name, "dbplyr_schema")) {
    schema <- as.character(name$schema)
    table <- as.character(name$table)
    if (!ok_string(schema) || !ok_string(table)) bad("It is an {.fn in_schema} without a schema or table name.")
    return(list(schema = schema, table = table))
  }
  if (!ok_string(name)) bad("It is {show_value(name)}.")
  list(schema = NA_character_, table = unname(name))
}

db_target_label <- function(target) {
  if (is.na(target$schema)) target$table else paste0(target$schema, ".", target$table)
}

db_target_sql <- function(con, target) {
  if (is.na(target$schema)) db_quote(con, target$table) else paste(db_quote(con, c(target$schema, target$table)), collapse = ".")
}

# The lazy table of a target, for the result.
db_target_tbl <- function(con, target) {
  if (is.na(target$schema)) dplyr::tbl(con, target$table) else dplyr::tbl(con, dbplyr::in_schema(target$schema, target$table))
}

# The schema a name without one is created in (NA where unknown).
db_default_schema <- function(con) {
  switch(db_kind(con),
    sqlite = "main",
    postgres = db_get(con, "SELECT current_schema() AS s")$s[[1]],
    NA_character_
  )
}

# Does a table, view or index of this name exist in the target's schema?
# SQLite compares names without regard to case, as it resolves them.
db_relation_exists <- function(con, target) {
  kind <- db_kind(con)
  if (kind == "sqlite") {
    schema <- if (is.na(target$schema)) "main" else target$schema
    master <- if (tolower(schema) == "temp") "sqlite_temp_master" else paste0(db_quote(con, schema), ".sqlite_master")
    n <- db_get(con, paste0(
      "SELECT COUNT(*) AS n FROM ", master, " WHERE lower(name) = lower(",
      DBI::dbQuoteString(con, target$table), ")"
    ))$n
    return(n > 0)
  }
  if (kind == "postgres") {
    r <- db_get(con, paste0(
      "SELECT to_regclass(", DBI::dbQuoteString(con, db_target_sql(con, target)), ") IS NOT NULL AS e"
    ))$e
    return(isTRUE(as.logical(r)))
  }
  name <- if (is.na(target$schema)) target$table else DBI::Id(schema = target$schema, table = target$table)
  isTRUE(DBI::dbExistsTable(con, name))
}

# Does the target's schema exist? (An unknown schema is a bad `name`.)
db_schema_exists <- function(con, schema) {
  switch(db_kind(con),
    sqlite = tolower(schema) %in% tolower(db_get(con, "PRAGMA database_list")$name),
    postgres = db_get(con, paste0(
      "SELECT COUNT(*) AS n FROM pg_namespace WHERE nspname = ", DBI::dbQuoteString(con, schema)
    ))$n > 0,
    TRUE
  )
}

# ---------------------------------------------------------------------------
# The tables a lazy query reads, found three ways, each conservative:
# the tables named in dbplyr's lazy query tree, the tables the database
# itself says the query's plan opens (SQLite's EXPLAIN, PostgreSQL's EXPLAIN
# (FORMAT YAML); views are expanded to their tables there), and every
# identifier of the query's SQL (raw SQL included). A name that occurs in any
# of them is taken as read. `unknown` is TRUE when the database's plan opens
# something it does not name.
db_source_tables <- function(data, con) {
  sql <- as.character(dbplyr::sql_render(data))
  tree <- lazy_query_tables(data$lazy_query)
  plan <- switch(db_kind(con),
    sqlite = sqlite_tables_read(con, sql),
    postgres = postgres_tables_read(con, sql),
    list(tables = character(), unknown = FALSE)
  )
  list(
    tables = unique(c(tree, plan$tables, sql_identifiers(sql))),
    plan = plan$tables,
    unknown = plan$unknown
  )
}

# The table names at the leaves of dbplyr's lazy query tree (joins, set
# operations and subqueries included); raw SQL leaves give their
# identifiers.
lazy_query_tables <- function(lq) {
  found <- character()
  walk <- function(x) {
    if (inherits(x, "lazy_base_remote_query")) {
      b <- x$x
      found <<- c(found, if (inherits(b, "dbplyr_schema")) {
        as.character(b$table)
      } else if (inherits(b, "Id")) {
        unname(b@name)
      } else if (inherits(b, c("sql", "ident_q"))) {
        sql_identifiers(as.character(b))
      } else if (is.character(b)) {
        as.character(b)
      })
      return(invisible())
    }
    if (is.list(x)) for (el in x) walk(el)
    invisible()
  }
  walk(lq)
  unique(found)
}

# Every identifier of an SQL text: quoted ("x", `x`, [x]) or bare words
# that are not SQL keywords; string literals and comments skipped.
sql_identifiers <- function(sql) {
  sql <- paste(sql, collapse = "\n")
  pattern <- paste0(
    "'(?:[^']|'')*'", # string literal
    "|--[^\n]*|/\\*[\\s\\S]*?\\*/", # comments
    "|\"((?:[^\"]|\"\")*)\"", # "quoted"
    "|`((?:[^`]|``)*)`", # `quoted`
    "|\\[([^]]*)\\]", # [quoted]
    "|([A-Za-z_][A-Za-z0-9_$]*)" # bare word
  )
  m <- regmatches(sql, gregexpr(pattern, sql, perl = TRUE))[[1]]
  m <- m[!grepl("^('|--|/\\*)", m)]
  out <- ifelse(grepl("^\"", m), gsub("\"\"", "\"", substr(m, 2, nchar(m) - 1)),
    ifelse(grepl("^`", m), gsub("``", "`", substr(m, 2, nchar(m) - 1)),
      ifelse(grepl("^\\[", m), substr(m, 2, nchar(m) - 1), m)
    )
  )
  bare <- !grepl("^[\"`\\[]", m)
  out <- out[!(bare & toupper(out) %in% sql_keywords)]
  unique(out)
}

sql_keywords <- c(
  "ALL", "AND", "ANY", "AS", "ASC", "BETWEEN", "BY", "CASE", "CAST", "CROSS", "DESC", "DISTINCT",
  "ELSE", "END", "ESCAPE", "EXCEPT", "EXISTS", "FALSE", "FETCH", "FILTER", "FIRST", "FOLLOWING",
  "FROM", "FULL", "GLOB", "GROUP", "HAVING", "ILIKE", "IN", "INNER", "INTERSECT", "INTERVAL",
  "IS", "ISNULL", "JOIN", "LAST", "LATERAL", "LEFT", "LIKE", "LIMIT", "NATURAL", "NEXT",
  "NOT", "NOTNULL", "NULL", "NULLS", "OFFSET", "ON", "ONLY", "OR", "ORDER", "OUTER", "OVER",
  "PARTITION", "PRECEDING", "RANGE", "RECURSIVE", "REGEXP", "RIGHT", "ROW", "ROWS", "SELECT",
  "SIMILAR", "THEN", "TOP", "TRUE", "UNBOUNDED", "UNION", "USING", "VALUES", "WHEN", "WHERE",
  "WINDOW", "WITH", "CURRENT", "COLLATE", "DATE", "TIME", "TIMESTAMP", "MATERIALIZED"
)

# SQLite: the b-trees the query's bytecode opens (OpenRead and friends
# give a root page and a database number), named by each database's schema
# table. A virtual table or a root page that no schema lists is `unknown`.
sqlite_tables_read <- function(con, sql) {
  ops <- tryCatch(DBI::dbGetQuery(con, paste("EXPLAIN", sql)), error = function(e) NULL)
  if (is.null(ops)) return(list(tables = character(), unknown = TRUE))
  open <- ops[ops$opcode %in% c("OpenRead", "OpenWrite", "ReopenIdx"), , drop = FALSE]
  dbs <- db_get(con, "PRAGMA database_list")
  tables <- character()
  unknown <- any(ops$opcode == "VOpen")
  for (i in seq_len(nrow(open))) {
    db <- dbs$name[dbs$seq == open$p3[i]]
    if (length(db) != 1) {
      unknown <- TRUE
      next
    }
    master <- if (db == "temp") "sqlite_temp_master" else paste0(db_quote(con, db), ".sqlite_master")
    hit <- db_get(con, paste0("SELECT tbl_name FROM ", master, " WHERE rootpage = ", as.integer(open$p2[i])))
    if (nrow(hit) == 0) unknown <- TRUE
    tables <- c(tables, hit$tbl_name)
  }
  list(tables = unique(tables), unknown = unknown)
}

# PostgreSQL: the relations of the query's plan ("Relation Name"; views
# are expanded to the tables they read). YAML rather than JSON: the same
# fields, as text (RPostgreSQL does not know the type json), each string
# quoted and escaped as in JSON.
postgres_tables_read <- function(con, sql) {
  plan <- tryCatch(DBI::dbGetQuery(con, paste("EXPLAIN (FORMAT YAML)", sql))[[1]], error = function(e) NULL)
  if (is.null(plan)) return(list(tables = character(), unknown = TRUE))
  plan <- paste(plan, collapse = "\n")
  m <- regmatches(plan, gregexpr("Relation Name: \"((?:[^\"\\\\]|\\\\.)*)\"", plan, perl = TRUE))[[1]]
  names <- sub("^Relation Name: \"(.*)\"$", "\\1", m)
  names <- gsub("\\\\(.)", "\\1", names)
  list(tables = unique(names), unknown = FALSE)
}

# ---------------------------------------------------------------------------
# One transaction around the release. When the connection already has one
# open (the user's), a savepoint inside it instead, so that the user's
# transaction is neither committed nor lost. On PostgreSQL the transaction
# reads one snapshot (REPEATABLE READ): the id check, the counts and the
# release see the same records.

db_in_transaction <- function(con) {
  if (db_kind(con) != "postgres") return(FALSE)
  # in a transaction block, now() is its start and differs from the start
  # of this statement; outside one they are the same (PostgreSQL manual,
  # "Current Date/Time")
  !isTRUE(as.logical(db_get(con, "SELECT now() = statement_timestamp() AS t")$t))
}

db_begin <- function(con) {
  kind <- db_kind(con)
  # SQLite: a savepoint outside a transaction starts one, inside one nests
  if (kind == "sqlite" || db_in_transaction(con)) {
    DBI::dbExecute(con, "SAVEPOINT sdc_release")
    return(list(con = con, savepoint = TRUE, open = TRUE))
  }
  # RPostgreSQL's dbBegin() and dbCommit() report a failure by a warning
  # and FALSE (a lost connection at COMMIT would pass for success): plain
  # statements there
  if (inherits(con, "PostgreSQLConnection")) DBI::dbExecute(con, "BEGIN") else DBI::dbBegin(con)
  if (kind == "postgres") DBI::dbExecute(con, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
  list(con = con, savepoint = FALSE, open = TRUE)
}

db_commit <- function(tx) {
  if (tx$savepoint) {
    DBI::dbExecute(tx$con, "RELEASE SAVEPOINT sdc_release")
  } else if (inherits(tx$con, "PostgreSQLConnection")) {
    DBI::dbExecute(tx$con, "COMMIT")
  } else {
    DBI::dbCommit(tx$con)
  }
  invisible()
}

# Undo everything since db_begin(); a connection that is gone has been
# rolled back by the database already (its driver's complaints are moot).
db_rollback <- function(tx) {
  suppressWarnings(try(silent = TRUE, {
    if (tx$savepoint) {
      DBI::dbExecute(tx$con, "ROLLBACK TO SAVEPOINT sdc_release")
      DBI::dbExecute(tx$con, "RELEASE SAVEPOINT sdc_release")
    } else if (inherits(tx$con, "PostgreSQLConnection")) {
      DBI::dbExecute(tx$con, "ROLLBACK")
    } else {
      DBI::dbRollback(tx$con)
    }
  }))
  invisible()
}

# The end of each step of the release: the progress shown to the user
# moves on, and a test hook is called with the step's name and the
# connection, so that tests can make a release fail (or be interrupted) at
# any point.
db_step_hook <- function(step, con, n_moves = NULL) {
  db_progress_next(step, n_moves)
  hook <- getOption("sdcRisk.db_step_hook")
  if (is.function(hook)) hook(step, con)
  invisible()
}

# ---------------------------------------------------------------------------
# Working tables: temporary tables of the connection (gone with it, and
# created inside the release's transaction, so a killed R process leaves
# nothing behind), named with a recognisable prefix that no table of the
# database has.

db_counter <- local({
  i <- 0L
  function() {
    i <<- i + 1L
    i
  }
})

db_fresh_name <- function(con, role, schema = NA_character_) {
  repeat {
    # no random numbers: the user's stream stays as the release left it
    name <- sprintf("sdc_tmp_%d_%d_%s", Sys.getpid(), db_counter(), role)
    if (!db_relation_exists(con, list(schema = schema, table = name)) &&
      (db_kind(con) != "sqlite" || !db_relation_exists(con, list(schema = "temp", table = name)))) {
      return(name)
    }
  }
}

# Upload a data frame into a new temporary table.
db_upload_temp <- function(con, name, df) {
  if (inherits(con, "PostgreSQLConnection")) {
    # RPostgreSQL ignores `temporary`; its tables in the schema pg_temp are
    # temporary tables
    ok <- DBI::dbWriteTable(con, c("pg_temp", name), df, row.names = FALSE)
    if (!isTRUE(ok)) stop("could not upload the table ", name, call. = FALSE)
  } else {
    DBI::dbWriteTable(con, name, df, temporary = TRUE, row.names = FALSE)
  }
  invisible(name)
}

db_drop <- function(con, name) {
  DBI::dbExecute(con, paste("DROP TABLE", db_quote(con, name)))
  invisible()
}
