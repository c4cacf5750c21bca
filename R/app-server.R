# The server of run_app(). Every step is an R call (R/app-calls.R) that the
# app evaluates in the session's workspace and records for the script, so
# the script repeats exactly what the app did; every input is checked first
# (R/app-inputs.R). The pages: app-server-data.R, app-server-release.R,
# app-server-certify.R, app-server-tables.R, app-server-downloads.R.

app_server <- function(data, data_name, allow_rds = FALSE) {
  force(data)
  force(data_name)
  force(allow_rds)
  function(input, output, session) {
    work <- new.env(parent = globalenv())
    rv <- shiny::reactiveValues(
      data = NULL, data_code = NULL, data_label = NULL, keys = character(0), cells = NULL, cells_code = NULL,
      release = NULL, release_code = NULL, publication = NULL, publication_error = NULL, publish_code = NULL,
      seed = NULL, risk = NULL, utility = NULL,
      cert = NULL, cert_known = NULL, cert_changes = NULL, cert_code = NULL, cert_obj = FALSE,
      sens = NULL, prot = NULL, audit = NULL, tables_code = NULL, protect_code = NULL,
      messages = list()
    )
    rds <- app_rds_allowed(allow_rds, app_request(session))
    server_data(input, output, session, rv, work, data, data_name, rds)
    server_release(input, output, session, rv, work)
    server_certify(input, output, session, rv, work, rds)
    server_tables(input, output, session, rv, work)
    server_downloads(input, output, session, rv, work)
  }
}

# ---- .rds uploads ---------------------------------------------------------------

# Whether this session may read .rds uploads, and why not: only when the
# person who started the app allowed it, and only for a browser on the same
# computer (no proxy in between, not a Shiny server). readRDS() of a file
# holding a promise runs its code when the object is first used
# (CVE-2024-27322, R before 4.4), so an .rds file must come from someone
# trusted with running R code on this computer.
app_rds_allowed <- function(allow_rds, request = NULL, env = Sys.getenv()) {
  if (!isTRUE(allow_rds)) return(structure(FALSE, reason = "off"))
  served <- c("SHINY_SERVER_VERSION", "SHINY_PORT", "RSTUDIO_PRODUCT", "CONNECT_SERVER")
  remote <- if (is.null(request)) NULL else request[["REMOTE_ADDR"]]
  forwarded <- !is.null(request) && any(c("HTTP_X_FORWARDED_FOR", "HTTP_FORWARDED", "HTTP_X_REAL_IP") %in% names(request))
  local <- (is.null(remote) || app_is_loopback(remote)) && !forwarded &&
    !any(nzchar(env[intersect(served, names(env))])) && !identical(unname(env["R_CONFIG_ACTIVE"]), "shinyapps")
  if (!local) return(structure(FALSE, reason = "served"))
  TRUE
}

app_request <- function(session) {
  req <- tryCatch(suppressWarnings(session$request), error = function(e) NULL)
  if (is.environment(req)) req <- as.list(req, all.names = TRUE)
  if (is.list(req)) req else NULL
}

app_is_loopback <- function(host) {
  is.character(host) && length(host) == 1L && !is.na(host) &&
    (host %in% c("localhost", "::1", "::ffff:127.0.0.1") || grepl("^127\\.[0-9]+\\.[0-9]+\\.[0-9]+$", host))
}

# The message for an .rds upload that is refused.
app_rds_refused <- function(name, rds, instead) {
  why <- if (identical(attr(rds, "reason"), "served")) {
    "this app is served to other computers, and then it never reads .rds files"
  } else {
    "this app reads .rds files only when started with run_app(allow_rds = TRUE) on this computer"
  }
  sprintf("%s is an R data file (.rds), refused: %s, because reading an .rds file can run code hidden in it (CVE-2024-27322, R before 4.4). %s",
          name, why, instead)
}

# ---- running steps, showing errors ------------------------------------------------

# Runs an observer's work: a refused input or any error becomes a message on
# `page` and a notification, never the end of the session.
app_guard <- function(rv, page, expr, session = shiny::getDefaultReactiveDomain()) {
  tryCatch(expr,
    sdcRisk_app_input = function(e) app_fail(rv, page, conditionMessage(e), session),
    error = function(e) app_fail(rv, page, app_condition_text(e), session)
  )
  invisible()
}

# Evaluates the calls (a list of language objects the app built, never
# text) in the workspace; an error becomes a notification and an inline
# message of `page`. Returns TRUE when they ran.
app_run <- function(calls, work, rv, page, session = shiny::getDefaultReactiveDomain()) {
  app_message(rv, page, NULL)
  tryCatch({
    withCallingHandlers(
      for (cl in calls) eval(cl, work),
      warning = function(w) {
        shiny::showNotification(app_condition_text(w), type = "warning", duration = 10, session = session)
        invokeRestart("muffleWarning")
      }
    )
    TRUE
  }, error = function(e) {
    app_fail(rv, page, app_condition_text(e), session)
    FALSE
  })
}

app_fail <- function(rv, page, text, session = shiny::getDefaultReactiveDomain()) {
  shiny::showNotification(text, type = "error", duration = 20, session = session)
  app_message(rv, page, text)
  invisible(FALSE)
}

app_message <- function(rv, page, text, type = "danger") {
  msgs <- shiny::isolate(rv$messages)
  msgs[[page]] <- if (is.null(text)) NULL else list(text = text, type = type)
  rv$messages <- msgs
}

app_condition_text <- function(e) {
  text <- cli::ansi_strip(conditionMessage(e))
  gsub("\n[!x\u2716\u2139i\u2022*] ?", "\n", text)
}

app_render_message <- function(rv, page) {
  shiny::renderUI({
    m <- rv$messages[[page]]
    if (is.null(m)) return(NULL)
    shiny::div(class = paste0("alert alert-", m$type), id = paste0(page, "_alert"), role = "alert",
               lapply(strsplit(m$text, "\n", fixed = TRUE)[[1]], shiny::div))
  })
}

# The code of a value as the script writes it (and the app evaluates it).
app_dq <- function(x) app_deparse(app_lang(x))

# `lhs <- rhs`, a step of the script.
app_assign <- function(lhs, rhs) call("<-", as.name(lhs), rhs)

# f(first, name = value, ...): values as app_lang() writes them, calls as
# they are; NULL arguments are left out, app_null gives `name = NULL`.
app_call <- function(f, ..., .first = NULL) {
  args <- Filter(Negate(is.null), list(...))
  args <- lapply(args, function(a) if (inherits(a, "app_null")) NULL else if (is.language(a)) a else app_lang(a))
  as.call(c(list(f), .first, args))
}

app_null <- structure(list(), class = "app_null")
