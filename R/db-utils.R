# What the release inside a database needs from the database beyond dplyr
# verbs, the same on every backend: the packages, quoted names, the output
# table's name, which tables a lazy query reads, one transaction around
# everything the release writes, and fresh names for its working tables.
# What differs between backends is a method of the dialect (db-dialect.R).

# DBI, dplyr and dbplyr (Suggests) must be installed to work on a database
# table: rlang's check (which offers to install them when R is
# interactive), its error with the class of the package's errors.
check_db_packages <- function(pkgs = c("DBI", "dplyr", "dbplyr"), call = rlang::caller_env()) {
  tryCatch(
    rlang::check_installed(pkgs, reason = "to work on a database table.", call = call),
    rlib_error_package_not_found = function(e) {
      missing <- e$pkg %||% pkgs
      abort_sdc(c(
        "Working on a database table needs the package{?s} {.pkg {missing}}.",
        "i" = "Install {?it/them} with {.code install.packages(c({paste0('\"', missing, '\"', collapse = ', ')}))}."
      ), "db_packages", call = call, parent = e)
    }
  )
  invisible()
}

db_colnames <- function(data) colnames(data)

# A stand-in with the table's column names, for the checks that look at
# names(data) only.
db_names_only <- function(data) {
  cols <- db_colnames(data)
  stats::setNames(vector("list", length(cols)), cols)
}

# The source of a lazy table as SQL, `(query) d`.
db_source_sql <- function(data) paste0("(", as.character(dbplyr::sql_render(data)), ") d")

# The name of a plain table (dplyr::tbl(con, "name"), no query on it); NULL
# for anything else.
db_plain_table <- function(data) {
  name <- tryCatch(dbplyr::remote_name(data), error = function(e) NULL)
  if (!inherits(name, "ident") || length(name) != 1 || !nzchar(name)) return(NULL)
  as.character(name)
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

# ---------------------------------------------------------------------------
# The tables a lazy query reads, found three ways, each conservative:
# the tables named in dbplyr's lazy query tree, the tables the database
# itself says the query's plan opens (db_plan_tables(); views are expanded
# to their tables there), and every identifier of the query's SQL (raw SQL
# included). A name that occurs in any of them is taken as read. `unknown`
# is TRUE when the database's plan opens something it does not name.
db_source_tables <- function(db, data) {
  sql <- as.character(dbplyr::sql_render(data))
  tree <- lazy_query_tables(data$lazy_query)
  plan <- db_plan_tables(db, sql)
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

# ---------------------------------------------------------------------------
# One transaction around the release. When the connection already has one
# open (the user's), a savepoint inside it instead, so that the user's
# transaction is neither committed nor lost (db_use_savepoint(),
# db_transaction() and db_isolate() of db-dialect.R).

db_begin <- function(db) {
  if (db_use_savepoint(db)) {
    DBI::dbExecute(db$con, "SAVEPOINT sdc_release")
    return(list(db = db, savepoint = TRUE))
  }
  db_transaction(db, "begin")
  db_isolate(db)
  list(db = db, savepoint = FALSE)
}

db_commit <- function(tx) {
  if (tx$savepoint) {
    DBI::dbExecute(tx$db$con, "RELEASE SAVEPOINT sdc_release")
  } else {
    db_transaction(tx$db, "commit")
  }
  invisible()
}

# Undo everything since db_begin(); a connection that is gone has been
# rolled back by the database already (its driver's complaints are moot).
db_rollback <- function(tx) {
  suppressWarnings(try(silent = TRUE, {
    if (tx$savepoint) {
      DBI::dbExecute(tx$db$con, "ROLLBACK TO SAVEPOINT sdc_release")
      DBI::dbExecute(tx$db$con, "RELEASE SAVEPOINT sdc_release")
    } else {
      db_transaction(tx$db, "rollback")
    }
  }))
  invisible()
}

# The end of each step of the release: the progress shown to the user
# moves on, and a test hook is called with the step's name and the
# connection, so that tests can make a release fail (or be interrupted) at
# any point.
db_step_hook <- function(step, db, n_moves = NULL) {
  db_progress_next(step, n_moves)
  hook <- getOption("sdcRisk.db_step_hook")
  if (is.function(hook)) hook(step, db$con)
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

db_fresh_name <- function(db, role, schema = NA_character_) {
  repeat {
    # no random numbers: the user's stream stays as the release left it
    name <- sprintf("sdc_tmp_%d_%d_%s", Sys.getpid(), db_counter(), role)
    if (!db_name_taken(db, list(schema = schema, table = name))) return(name)
  }
}

db_index <- function(con, table, cols, unique = FALSE) {
  DBI::dbExecute(con, sprintf(
    "CREATE %sINDEX %s ON %s (%s)", if (unique) "UNIQUE " else "",
    db_quote(con, paste0(table, "_i")), db_quote(con, table), paste(db_quote(con, cols), collapse = ", ")
  ))
}

db_drop <- function(con, name) {
  DBI::dbExecute(con, paste("DROP TABLE", db_quote(con, name)))
  invisible()
}
