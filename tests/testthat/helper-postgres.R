# A throwaway PostgreSQL server for the database tests: a cluster initialised
# in a temporary directory, started on a free localhost port, stopped and
# deleted at the end of the test run. Under CI (CI=true or NOT_CRAN=true) a
# missing component fails the tests and says which one; elsewhere they skip.

pg_required <- function() {
  identical(tolower(Sys.getenv("CI")), "true") || identical(tolower(Sys.getenv("NOT_CRAN")), "true")
}

# The directory of initdb, pg_ctl and postgres: $SDCRISK_PG_BIN, the PATH, or
# Debian's /usr/lib/postgresql/<version>/bin (newest first).
pg_bin_dir <- function() {
  env <- Sys.getenv("SDCRISK_PG_BIN")
  if (nzchar(env)) return(env)
  on_path <- Sys.which("pg_ctl")
  if (nzchar(on_path) && nzchar(Sys.which("initdb"))) return(dirname(normalizePath(on_path)))
  dirs <- Sys.glob("/usr/lib/postgresql/*/bin")
  dirs <- dirs[file.exists(file.path(dirs, "initdb")) & file.exists(file.path(dirs, "pg_ctl"))]
  if (length(dirs) == 0) return("")
  ver <- suppressWarnings(as.numeric(basename(dirname(dirs))))
  dirs[order(-ver)][1]
}

pg_free_port <- function() {
  for (i in 1:50) {
    port <- sample(20000:60000, 1)
    ok <- tryCatch({
      s <- serverSocket(port)
      close(s)
      TRUE
    }, error = function(e) FALSE)
    if (ok) return(port)
  }
  stop("no free localhost port found")
}

# Run a server binary, as the user `postgres` when we are root (the server
# refuses to run as root).
pg_run <- function(bin, args, as_user) {
  if (is.null(as_user)) {
    out <- suppressWarnings(system2(bin, args, stdout = TRUE, stderr = TRUE))
  } else {
    out <- suppressWarnings(system2("runuser", c("-u", as_user, "--", bin, args), stdout = TRUE, stderr = TRUE))
  }
  status <- attr(out, "status") %||% 0L
  list(ok = status == 0L, output = paste(out, collapse = "\n"))
}

# Start the server; a list with `con` (a DBI connection) and `stop()`, or
# with `missing`, the component that is missing.
pg_start <- function() {
  for (pkg in c("DBI", "dplyr", "dbplyr", "RPostgreSQL")) {
    if (!requireNamespace(pkg, quietly = TRUE)) {
      return(list(missing = paste0("the R package ", pkg, " (Debian: r-cran-", tolower(pkg), ")")))
    }
  }
  bin <- pg_bin_dir()
  if (!nzchar(bin)) {
    return(list(missing = "the PostgreSQL server binaries initdb and pg_ctl (Debian: postgresql)"))
  }
  as_user <- NULL
  if (identical(Sys.info()[["effective_user"]], "root")) {
    if (!nzchar(Sys.which("runuser")) || system2("id", "postgres", stdout = FALSE, stderr = FALSE) != 0) {
      return(list(missing = "a non-root user 'postgres' and runuser, to run the server as root (Debian: postgresql creates the user)"))
    }
    as_user <- "postgres"
  }
  # R's own temporary directory is private to root: the server's user could
  # not enter it
  dir <- tempfile("sdcrisk-pg-", tmpdir = if (is.null(as_user)) tempdir() else "/tmp")
  dir.create(dir, mode = "0700")
  if (!is.null(as_user)) system2("chown", c(as_user, dir))
  data <- file.path(dir, "data")
  init <- pg_run(file.path(bin, "initdb"),
    c("-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "--no-locale", "-E", "UTF8"), as_user)
  if (!init$ok) {
    unlink(dir, recursive = TRUE)
    return(list(missing = paste0("a working initdb (", bin, "): ", init$output)))
  }
  port <- pg_free_port()
  opts <- paste("-p", port, "-k", dir, "-c listen_addresses=localhost -c fsync=off -c full_page_writes=off")
  start <- pg_run(file.path(bin, "pg_ctl"),
    c("-D", data, "-o", shQuote(opts), "-l", file.path(dir, "log"), "-w", "-t", "60", "start"), as_user)
  stop_server <- function() {
    pg_run(file.path(bin, "pg_ctl"), c("-D", data, "-m", "fast", "-w", "stop"), as_user)
    unlink(dir, recursive = TRUE)
  }
  if (!start$ok) {
    log <- tryCatch(paste(readLines(file.path(dir, "log")), collapse = "\n"), error = function(e) "")
    stop_server()
    return(list(missing = paste0("a PostgreSQL server that starts (pg_ctl): ", start$output, "\n", log)))
  }
  con <- tryCatch(
    DBI::dbConnect(RPostgreSQL::PostgreSQL(), host = "localhost", port = port, user = "postgres", dbname = "postgres"),
    error = function(e) e
  )
  if (inherits(con, "error")) {
    stop_server()
    return(list(missing = paste0("a connection to the server through RPostgreSQL: ", conditionMessage(con))))
  }
  list(con = con, port = port, stop = function() {
    try(DBI::dbDisconnect(con), silent = TRUE)
    stop_server()
  })
}

# The server of this test run, started at first use and stopped when the
# tests end.
pg_server <- local({
  server <- NULL
  function() {
    if (is.null(server)) {
      server <<- pg_start()
      if (!is.null(server$stop)) withr::defer(server$stop(), envir = testthat::teardown_env())
    }
    server
  }
})

# Skip (CRAN) or fail (CI) when the server is not available.
skip_or_fail_without_postgres <- function() {
  s <- pg_server()
  if (is.null(s$missing)) return(invisible(s))
  msg <- paste0("PostgreSQL tests cannot run: missing ", s$missing)
  if (pg_required()) stop(msg, call. = FALSE)
  testthat::skip(msg)
}
