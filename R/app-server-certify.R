# ---- Certify a PRAM -----------------------------------------------------------

server_certify <- function(input, output, session, rv, work, rds) {
  output$cert_message <- app_render_message(rv, "certify")

  shiny::observeEvent(input$cert_go, app_guard(rv, "certify", app_certify(input, rv, work, rds)))

  output$pram_value <- shiny::renderText(if (is.null(rv$cert)) "\u2013" else format(signif(rv$cert$risk, 6)))
  output$pram_words <- shiny::renderUI({
    c <- rv$cert
    if (is.null(c)) return(app_help("Upload the PRAM and press Certify."))
    keys <- c$keys %||% c$cell_keys
    where <- if (is.data.frame(keys)) paste(paste(names(keys), vapply(keys, function(v) as.character(v[1]), ""), sep = " = "), collapse = ", ") else paste0("cell ", c$cell)
    shiny::div(class = "sdc-words", id = "pram_words_text",
      shiny::p(sprintf("The exact maximum probability that an intruder's match is correct is %s, attained in the cell %s (%s record%s) when %s released record%s.",
                       format(signif(c$risk, 6)), where, c$count, if (isTRUE(c$count == 1)) "" else "s", c$a, if (isTRUE(c$a == 1)) " matches" else "s match")),
      if (isTRUE(c$risk >= 0.5)) shiny::p(shiny::strong("This PRAM leaves some persons with at least an even chance of being identified."))
    )
  })
  output$pram_known <- shiny::renderTable(as.data.frame(rv$cert_known), striped = TRUE, spacing = "xs", digits = 5)
  output$pram_changes <- shiny::renderTable(rv$cert_changes, striped = TRUE, spacing = "xs")
}

app_certify <- function(input, rv, work, rds) {
  goal <- app_in_choice(input$cert_goal, app_goals, "The goal")
  mode <- app_in_choice(input$cert_known_mode, c("none", "some", "all"), "Intruders who know only some keys")
  known <- NULL
  if (mode == "all") known <- TRUE
  if (mode == "some") {
    known <- app_in_columns(input$cert_known, names(rv$data), "The keys the intruder knows")
    if (!length(known)) return(app_fail(rv, "certify", "Choose the keys the intruder knows, or another option."))
    known <- list(known)
  }
  source <- app_in_choice(input$cert_source, c("sdcmicro", "matrices"), "The PRAM")
  read <- if (source == "sdcmicro") app_certify_obj(input, rds) else app_certify_matrices(input, rv, rds)
  if (!is.null(read$error)) return(app_fail(rv, "certify", read$error))
  released <- if (source == "matrices") app_in_files(input$cert_released, "The released file")
  if (exists("known", envir = work, inherits = FALSE)) rm("known", envir = work)
  rv$cert <- NULL
  ok <- FALSE
  steps <- list()
  shiny::withProgress(message = "Certifying", value = 0.2, detail = "exact maximum risk", {
    ok <- app_run(list(read$eval), work, rv, "certify")
    if (ok) {
      steps <- app_certify_steps(read, goal, known, work$matrices, rv$data)
      ok <- app_run(steps, work, rv, "certify")
    }
  })
  if (!ok) return()
  rv$cert_obj <- source == "sdcmicro"
  rv$cert <- if (source == "sdcmicro") work$obj@risk$pram else work$certificate
  rv$cert_known <- if (!is.null(known)) work$known
  rv$cert_code <- c(list(read$script), steps)
  rv$cert_changes <- if (source == "sdcmicro") app_obj_changes(work$obj) else app_released_changes(released, rv$data, work$plan$vars)
}

# The steps after reading: the plan of the matrices (with the categories of
# a matrix that the data lack, when the key is a factor: a category no
# record has can still be released), the certificate, the intruders who
# know only some keys.
app_certify_steps <- function(read, goal, known, matrices, d) {
  on <- quote(obj)
  steps <- list()
  if (is.null(read$orientation)) {
    steps <- list(app_assign("obj", app_call(quote(sdcRisk::pram_certify), goal = goal, .first = list(on))))
  } else {
    on <- quote(plan)
    levels <- app_level_steps(matrices, d)
    cells <- app_call(quote(sdcRisk::cell_frequencies), read$keys, na = read$na,
                      .first = list(if (length(levels)) quote(plan_data) else quote(data)))
    steps <- c(levels, list(
      app_assign("plan", app_call(quote(sdcRisk::pram_plan_vars), orientation = read$orientation, .first = list(cells, quote(matrices)))),
      app_assign("certificate", app_call(quote(sdcRisk::max_match_risk), goal = goal, .first = list(on)))
    ))
  }
  if (!is.null(known)) {
    steps <- c(steps, list(app_assign("known", app_call(quote(sdcRisk::max_match_risk_known), goal = goal,
                                                        subsets = if (isTRUE(known)) app_null else known, .first = list(on)))))
  }
  steps
}

app_level_steps <- function(matrices, d) {
  steps <- list()
  for (v in intersect(names(matrices), names(d))) {
    x <- d[[v]]
    m <- matrices[[v]]
    extra <- setdiff(union(rownames(m), colnames(m)), levels(x))
    if (!is.factor(x) || !length(extra)) next
    element <- call("[[", quote(plan_data), v)
    steps <- c(steps, list(call("<-", element, app_call(quote(factor), element, levels = c(levels(x), extra)))))
  }
  if (length(steps)) c(list(quote(plan_data <- data)), steps) else list()
}

# Reading an sdcMicroObj: an .rds file, only when this session may read them.
app_certify_obj <- function(input, rds) {
  f <- app_in_files(input$cert_obj, "The sdcMicroObj file")
  if (is.null(f)) return(list(error = "Upload the sdcMicroObj saved with saveRDS()."))
  if (!isTRUE(rds)) {
    return(list(error = app_rds_refused(f$name, rds, "Write the object as CSV files (the original data, one matrix per perturbed key: vignette(\"app\", package = \"sdcRisk\")) and certify them as transition matrices.")))
  }
  if (!requireNamespace("sdcMicro", quietly = TRUE)) return(list(error = "Certifying an sdcMicroObj needs the package sdcMicro: install.packages(\"sdcMicro\")."))
  obj <- tryCatch(readRDS(f$datapath), error = function(e) e)
  if (!inherits(obj, "sdcMicroObj")) {
    return(list(error = sprintf("%s does not hold an sdcMicroObj (%s).", f$name,
                                if (inherits(obj, "error")) "not an R data file" else paste("it holds", class(obj)[1]))))
  }
  list(eval = app_assign("obj", call("readRDS", f$datapath)), script = app_assign("obj", call("readRDS", f$name)))
}

# Reading matrices for the data and keys of the Data page.
app_certify_matrices <- function(input, rv, rds) {
  if (is.null(rv$data) || !length(rv$keys)) return(list(error = "Load the original data and choose the keys on the Data page first."))
  f <- app_in_files(input$cert_matrices, "The matrices", multiple = TRUE)
  if (is.null(f)) return(list(error = "Upload the transition matrices."))
  orientation <- app_in_choice(input$cert_orientation, c("rows", "columns"), "The orientation of the matrices")
  na <- app_in_choice(input$na, c("exclude", "category"), "Missing key values")
  read <- app_matrices_code(f, rv$keys, rds)
  if (is.null(read$error)) read[c("orientation", "na", "keys")] <- list(orientation, na, rv$keys)
  read
}

# Reading matrices: CSV files named after their variable (a key), or one
# .rds file holding a named list when this session may read them.
app_matrices_code <- function(f, keys, rds = FALSE) {
  ext <- tolower(app_file_ext(f$name))
  if (any(f$size == 0)) return(list(error = sprintf("The file %s is empty.", f$name[f$size == 0][1])))
  if (length(ext) == 1L && ext == "rds") {
    if (!isTRUE(rds)) return(list(error = app_rds_refused(f$name, rds, "Upload one CSV file per variable, named after it, instead.")))
    m <- tryCatch(readRDS(f$datapath), error = function(e) e)
    if (!is.list(m) || is.null(names(m)) || inherits(m, "error")) {
      return(list(error = sprintf("%s must hold a named list of matrices, one per perturbed key.", f$name)))
    }
    return(list(eval = app_assign("matrices", call("readRDS", f$datapath)),
                script = app_assign("matrices", call("readRDS", f$name))))
  }
  if (!all(ext == "csv")) return(list(error = sprintf("Upload one CSV file per variable%s.", if (isTRUE(rds)) ", or one .rds file holding a named list of matrices" else "")))
  vars <- sub("\\.[[:alnum:]]+$", "", f$name)
  unknown <- vars[!vars %in% keys]
  if (length(unknown)) {
    return(list(error = sprintf("The matrix file of %s is named after no key of the Data page: name each file after its key (%s).",
                                app_show(unknown[1]), paste0(keys, ".csv", collapse = ", "))))
  }
  if (anyDuplicated(vars)) return(list(error = sprintf("Two matrix files are named after %s.", app_show(vars[duplicated(vars)][1]))))
  one <- function(file) call("as.matrix", app_call(quote(utils::read.csv), file, row.names = 1, check.names = FALSE))
  list(eval = app_assign("matrices", app_named_call("list", lapply(f$datapath, one), vars)),
       script = app_assign("matrices", app_named_call("list", lapply(f$name, one), vars)))
}

app_obj_changes <- function(obj) {
  p <- obj@pram$summary
  if (is.null(p)) return(NULL)
  data.frame(variable = p$variable, records_changed = p$nrChanges, percent = round(p$percChanges, 2))
}

app_released_changes <- function(f, data, vars) {
  if (is.null(f)) return(NULL)
  rel <- tryCatch(utils::read.csv(f$datapath, check.names = FALSE, stringsAsFactors = FALSE), error = function(e) NULL)
  if (is.null(rel) || nrow(rel) != nrow(data) || !all(vars %in% names(rel))) {
    shiny::showNotification("The released file does not have the records and variables of the original data in the same order; changes are not counted.", type = "warning")
    return(NULL)
  }
  n <- vapply(vars, function(v) sum(as.character(rel[[v]]) != as.character(data[[v]]), na.rm = TRUE), numeric(1))
  data.frame(variable = vars, records_changed = n, percent = round(100 * n / nrow(data), 2))
}
