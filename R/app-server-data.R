# ---- Data ---------------------------------------------------------------------

server_data <- function(input, output, session, rv, work, data, data_name, rds) {
  output$data_message <- app_render_message(rv, "data")
  sources <- c(if (!is.null(data)) "given", "pums_md", "upload")

  shiny::observeEvent(list(input$data_source, input$data_file, input$data_sep), {
    app_guard(rv, "data", app_load_data(input, rv, work, data, data_name, sources, rds))
  }, ignoreNULL = FALSE)

  output$data_info <- shiny::renderText({
    d <- rv$data
    if (is.null(d)) return("No data loaded.")
    sprintf("%s: %s records, %s columns.", rv$data_label, format(nrow(d), big.mark = ","), ncol(d))
  })
  output$data_head <- shiny::renderTable(utils::head(rv$data, 6), striped = TRUE, spacing = "xs")

  shiny::observeEvent(list(input$keys, input$na), {
    app_guard(rv, "data", app_count_cells(input, rv, work))
  }, ignoreNULL = FALSE)

  output$cells_words <- shiny::renderUI({
    cf <- rv$cells
    if (is.null(cf)) return(app_help("Choose the key variables to see their cells."))
    app_cells_words(cf)
  })
  output$cells_table <- shiny::renderTable({
    cf <- rv$cells
    if (is.null(cf)) return(NULL)
    s <- summary(cf)$distribution
    s[] <- lapply(s, function(v) if (is.numeric(v) && all(v == round(v))) as.integer(v) else v)
    s
  }, striped = TRUE, spacing = "xs")
}

app_load_data <- function(input, rv, work, data, data_name, sources, rds) {
  src <- app_in_choice(input$data_source, sources, "The data source")
  if (src == "pums_md") {
    step <- quote(data <- sdcRisk::pums_md)
    if (app_run(list(step), work, rv, "data")) app_set_data(rv, work, list(step), "pums_md (synthetic Maryland PUMS)")
  } else if (src == "given") {
    work$data <- data
    app_message(rv, "data", NULL)
    app_set_data(rv, work, list("# the data frame given to run_app()", app_assign("data", data_name)),
                 sprintf("the data frame %s", app_deparse(data_name)))
  } else {
    f <- app_in_files(input$data_file, "The data file")
    if (is.null(f)) return()
    sep <- app_in_choice(input$data_sep, c(",", ";", "\t"), "The CSV separator")
    read <- app_read_code(f$name, f$datapath, sep, rds)
    if (!is.null(read$error)) return(app_fail(rv, "data", app_keep_note(read$error, rv)))
    if (!app_run(list(read$eval), work, rv, "data")) return()
    problem <- app_check_table(work$data, f$name)
    if (!is.null(problem)) {
      if (!is.null(rv$data)) work$data <- shiny::isolate(rv$data) else rm("data", envir = work)
      return(app_fail(rv, "data", app_keep_note(problem, rv)))
    }
    app_set_data(rv, work, list(read$script), f$name)
  }
}

app_count_cells <- function(input, rv, work) {
  d <- rv$data
  rv$cells <- NULL
  rv$cells_code <- NULL
  keys <- tryCatch(app_in_columns(input$keys, names(d), "Key variables"), sdcRisk_app_input = function(e) {
    rv$keys <- character(0)
    stop(e)
  })
  rv$keys <- keys
  na <- app_in_choice(input$na, c("exclude", "category"), "Missing key values")
  if (is.null(d) || !length(keys)) return()
  steps <- list(
    app_assign("keys", app_lang(keys)),
    app_assign("cells", app_call(quote(sdcRisk::cell_frequencies), na = na, .first = list(quote(data), quote(keys))))
  )
  warn <- app_key_warning(d, keys)
  if (app_run(steps, work, rv, "data")) {
    rv$cells <- work$cells
    rv$cells_code <- steps
    if (!is.null(warn)) {
      app_message(rv, "data", warn, type = "warning")
      shiny::showNotification(warn, type = "warning", duration = 20)
    }
  }
}

app_set_data <- function(rv, work, code, label) {
  d <- work$data
  rv$data <- d
  rv$data_code <- code
  rv$data_label <- label
  rv$release <- NULL
  rv$release_code <- NULL
  rv$publication <- NULL
  rv$publication_error <- NULL
  rv$publish_code <- NULL
  rv$sens <- NULL
  rv$prot <- NULL
  rv$tables_code <- NULL
  rv$protect_code <- NULL
  # a certificate of matrices was computed on the data it replaces: the
  # script could not repeat it
  if (!isTRUE(shiny::isolate(rv$cert_obj))) {
    rv$cert <- NULL
    rv$cert_known <- NULL
    rv$cert_changes <- NULL
    rv$cert_code <- NULL
  }
  cols <- names(d)
  session <- shiny::getDefaultReactiveDomain()
  default_keys <- intersect(c("sex", "age", "race", "marital", "puma"), cols)
  if (!identical(label, "pums_md (synthetic Maryland PUMS)")) default_keys <- character(0)
  shiny::updateSelectizeInput(session, "keys", choices = cols, selected = default_keys)
  shiny::updateSelectizeInput(session, "cert_known", choices = cols)
  shiny::updateSelectizeInput(session, "tab_by", choices = cols, selected = character(0))
  num <- cols[vapply(d, is.numeric, logical(1))]
  shiny::updateSelectInput(session, "tab_value", choices = num)
  shiny::updateSelectInput(session, "tab_contributor", choices = c("(each record)" = "", cols))
  shiny::updateSelectInput(session, "tab_weight", choices = c("(none)" = "", num))
}

# The call that reads an upload: `eval` reads the uploaded copy, `script`
# names the file as the user knows it. An error text instead when the file
# cannot be a table, or is an .rds file this session may not read.
app_read_code <- function(name, path, sep = ",", rds = FALSE) {
  ext <- tolower(app_file_ext(name))
  if (!ext %in% c("csv", "txt", "tsv", "rds")) {
    return(list(error = sprintf("%s is not a table this app reads: upload a CSV file (.csv, .txt, .tsv)%s.", name,
                                if (isTRUE(rds)) " or an R data file (.rds) holding a data frame" else "")))
  }
  size <- file.size(path)
  if (is.na(size) || size == 0) return(list(error = sprintf("The file %s is empty.", name)))
  if (ext == "rds") {
    if (!isTRUE(rds)) {
      return(list(error = app_rds_refused(name, rds, "Save the data as a CSV file (utils::write.csv(data, \"data.csv\", row.names = FALSE)) and upload that.")))
    }
    obj <- tryCatch(readRDS(path), error = function(e) e)
    if (inherits(obj, "error")) return(list(error = sprintf("%s is not an R data file that readRDS() can read (%s).", name, conditionMessage(obj))))
    if (inherits(obj, "sdcMicroObj")) return(list(error = sprintf("%s holds an sdcMicroObj: certify it on the page 'Certify a PRAM'.", name)))
    if (!is.data.frame(obj)) return(list(error = sprintf("%s holds %s, not a data frame.", name, class(obj)[1])))
    read <- function(file) app_assign("data", call("readRDS", file))
  } else {
    head <- readBin(path, "raw", min(size, 8192))
    if (any(head == as.raw(0))) return(list(error = sprintf("%s is not a text table: it looks like a binary file.", name)))
    read <- function(file) {
      app_assign("data", app_call(quote(utils::read.csv), file, sep = sep, check.names = FALSE,
                                  stringsAsFactors = TRUE, na.strings = c("", "NA")))
    }
  }
  list(eval = read(path), script = read(name))
}

app_keep_note <- function(text, rv) {
  label <- shiny::isolate(rv$data_label)
  if (is.null(label)) text else paste0(text, "\nThe data in use are still ", label, ".")
}

app_check_table <- function(d, name) {
  if (!is.data.frame(d)) return(sprintf("%s could not be read as a table.", name))
  if (nrow(d) == 0L) return(sprintf("%s has no records (a header%s but no rows).", name, if (ncol(d)) "" else " at most"))
  if (ncol(d) < 2L) {
    return(sprintf("%s was read as a single column (%s): it is not a table with this separator. Choose the separator, or upload a CSV file with one column per variable.",
                   name, app_show(names(d)[1])))
  }
  app_check_names(d, name)
}

app_key_warning <- function(d, keys) {
  n <- nrow(d)
  distinct <- vapply(keys, function(k) length(unique(d[[k]])), numeric(1))
  bad <- keys[distinct > 1000 & distinct > 0.05 * n]
  if (!length(bad)) return(NULL)
  sprintf("Key %s has %s distinct values among %s records: nearly every record is unique in it alone, so a release would have to change nearly every record. Keys are variables an intruder knows in categories (age in years, an area): group it first (e.g. into classes with cut()) or leave it out.",
          bad[1], formatC(distinct[[bad[1]]], format = "d", big.mark = ","), formatC(n, format = "d", big.mark = ","))
}

app_cells_words <- function(cf) {
  n <- cf$n_records - cf$n_excluded
  ncell <- nrow(cf$cells)
  max_risk <- if (ncell) 1 / min(cf$cells$count) else NA
  shiny::div(class = "sdc-words", id = "cells_words_text",
    shiny::p(sprintf("Keys: %s.", paste(cf$keys, collapse = ", "))),
    shiny::p(sprintf("%s nonempty cells: %s singletons (%s records) and %s doubletons (%s records).",
                     format(ncell, big.mark = ","), format(cf$n_singletons, big.mark = ","),
                     format(cf$n_singletons, big.mark = ","), format(cf$n_doubletons, big.mark = ","),
                     format(2 * cf$n_doubletons, big.mark = ","))),
    shiny::p(shiny::strong("Released unchanged: "),
             sprintf("an intruder who knows a person's keys finds the person's record with probability 1/T, T the count of the cell. The largest is %s; %s persons (%s) would be found for certain and %s with probability 1/2. Targeting every person, the intruder would be right %s times (one per cell, %s of the records).",
                     format(signif(max_risk, 4)), format(cf$n_singletons, big.mark = ","),
                     sprintf("%.1f%%", 100 * cf$n_singletons / max(n, 1)), format(2 * cf$n_doubletons, big.mark = ","),
                     format(ncell, big.mark = ","), sprintf("%.1f%%", 100 * ncell / max(n, 1)))),
    if (cf$n_excluded > 0) shiny::p(sprintf("%s records with a missing key are left out of the cells and never changed.", format(cf$n_excluded, big.mark = ",")))
  )
}
