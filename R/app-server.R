# The server of run_app(). Every step is R code that the app evaluates in the
# session's workspace and records for the script, so the script repeats
# exactly what the app did.

app_server <- function(data, data_name) {
  force(data)
  force(data_name)
  function(input, output, session) {
    work <- new.env(parent = globalenv())
    rv <- shiny::reactiveValues(
      data = NULL, data_code = NULL, data_label = NULL, keys = character(0), cells = NULL, cells_code = NULL,
      release = NULL, release_code = NULL, seed = NULL, risk = NULL, utility = NULL,
      cert = NULL, cert_known = NULL, cert_changes = NULL, cert_code = NULL, cert_obj = FALSE,
      sens = NULL, prot = NULL, audit = NULL, tables_code = NULL, protect_code = NULL,
      messages = list()
    )
    server_data(input, output, session, rv, work, data, data_name)
    server_release(input, output, session, rv, work)
    server_certify(input, output, session, rv, work)
    server_tables(input, output, session, rv, work)
    server_downloads(input, output, session, rv, work)
  }
}

# ---- running code, showing errors -------------------------------------------

# Evaluates the code (a character vector) in the workspace; an error becomes
# a notification and an inline message of `page`, never a crash. Returns TRUE
# when the code ran.
app_run <- function(code, work, rv, page, session = shiny::getDefaultReactiveDomain()) {
  app_message(rv, page, NULL)
  ok <- tryCatch({
    withCallingHandlers(
      eval(parse(text = code, keep.source = FALSE), envir = work),
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
  ok
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

# Code for a value: the shortest deparse that gives back exactly the same value.
app_dq <- function(x) {
  for (control in list(c("keepNA", "keepInteger", "niceNames"), c("keepNA", "keepInteger", "niceNames", "digits17"))) {
    code <- paste(deparse(x, width.cutoff = 500L, control = control), collapse = "")
    if (identical(eval(parse(text = code), baseenv()), x)) return(code)
  }
  code
}

# ---- Data ---------------------------------------------------------------------

server_data <- function(input, output, session, rv, work, data, data_name) {
  output$data_message <- app_render_message(rv, "data")

  shiny::observeEvent(list(input$data_source, input$data_file, input$data_sep), {
    src <- input$data_source
    if (identical(src, "pums_md")) {
      code <- "data <- sdcRisk::pums_md"
      if (app_run(code, work, rv, "data")) app_set_data(rv, work, code, "pums_md (synthetic Maryland PUMS)")
    } else if (identical(src, "given")) {
      work$data <- data
      app_message(rv, "data", NULL)
      app_set_data(rv, work, sprintf("data <- %s  # the data frame given to run_app()", data_name %||% "data"),
                   sprintf("the data frame %s", data_name %||% ""))
    } else if (identical(src, "upload")) {
      f <- input$data_file
      if (is.null(f)) return()
      read <- app_read_code(f$name, f$datapath, input$data_sep)
      if (!is.null(read$error)) return(app_fail(rv, "data", app_keep_note(read$error, rv)))
      if (!app_run(read$eval, work, rv, "data")) return()
      problem <- app_check_table(work$data, f$name)
      if (!is.null(problem)) {
        if (!is.null(rv$data)) work$data <- shiny::isolate(rv$data) else rm("data", envir = work)
        return(app_fail(rv, "data", app_keep_note(problem, rv)))
      }
      app_set_data(rv, work, read$script, f$name)
    }
  }, ignoreNULL = FALSE)

  output$data_info <- shiny::renderText({
    d <- rv$data
    if (is.null(d)) return("No data loaded.")
    sprintf("%s: %s records, %s columns.", rv$data_label, format(nrow(d), big.mark = ","), ncol(d))
  })
  output$data_head <- shiny::renderTable(utils::head(rv$data, 6), striped = TRUE, spacing = "xs")

  shiny::observeEvent(list(input$keys, input$na), {
    keys <- input$keys
    d <- rv$data
    rv$keys <- keys %||% character(0)
    rv$cells <- NULL
    rv$cells_code <- NULL
    if (is.null(d) || !length(keys)) return()
    code <- sprintf("keys <- %s\ncells <- sdcRisk::cell_frequencies(data, keys, na = %s)", app_dq(keys), app_dq(input$na))
    warn <- app_key_warning(d, keys)
    if (app_run(code, work, rv, "data")) {
      rv$cells <- work$cells
      rv$cells_code <- code
      if (!is.null(warn)) {
        app_message(rv, "data", warn, type = "warning")
        shiny::showNotification(warn, type = "warning", duration = 20)
      }
    }
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

app_set_data <- function(rv, work, code, label) {
  d <- work$data
  rv$data <- d
  rv$data_code <- code
  rv$data_label <- label
  rv$release <- NULL
  rv$release_code <- NULL
  rv$sens <- NULL
  rv$prot <- NULL
  rv$tables_code <- NULL
  rv$protect_code <- NULL
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

# The code that reads an upload: `eval` reads the uploaded copy, `script`
# names the file as the user knows it. NULL code and an error text when the
# file cannot be a table.
app_read_code <- function(name, path, sep = ",") {
  ext <- tolower(app_file_ext(name))
  if (!ext %in% c("csv", "txt", "tsv", "rds")) {
    return(list(error = sprintf("%s is not a table this app reads: upload a CSV file (.csv, .txt, .tsv) or an R data file (.rds) holding a data frame.", name)))
  }
  size <- file.size(path)
  if (is.na(size) || size == 0) return(list(error = sprintf("The file %s is empty.", name)))
  if (ext == "rds") {
    obj <- tryCatch(readRDS(path), error = function(e) e)
    if (inherits(obj, "error")) return(list(error = sprintf("%s is not an R data file that readRDS() can read (%s).", name, conditionMessage(obj))))
    if (inherits(obj, "sdcMicroObj")) return(list(error = sprintf("%s holds an sdcMicroObj: certify it on the page 'Certify a PRAM'.", name)))
    if (!is.data.frame(obj)) return(list(error = sprintf("%s holds %s, not a data frame.", name, class(obj)[1])))
    tmpl <- "data <- readRDS(%s)"
  } else {
    head <- readBin(path, "raw", min(size, 8192))
    if (any(head == as.raw(0))) return(list(error = sprintf("%s is not a text table: it looks like a binary file.", name)))
    tmpl <- paste0("data <- utils::read.csv(%s, sep = ", app_dq(sep), ", check.names = FALSE, stringsAsFactors = TRUE, na.strings = c(\"\", \"NA\"))")
  }
  list(eval = sprintf(tmpl, app_dq(path)), script = sprintf(tmpl, app_dq(name)))
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
                   name, substr(names(d)[1], 1, 40)))
  }
  NULL
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

# ---- Microdata release --------------------------------------------------------

server_release <- function(input, output, session, rv, work) {
  output$release_message <- app_render_message(rv, "release")

  output$partition_ui <- shiny::renderUI({
    keys <- rv$keys
    d <- shiny::isolate(rv$data)
    if (!length(keys) || is.null(d)) return(app_help("Choose keys on the Data page first."))
    lapply(seq_along(keys), function(i) {
      k <- keys[i]
      numeric_key <- is.numeric(d[[k]])
      shiny::div(
        shiny::selectInput(paste0("part_", i), k, c("changes freely" = "free", "never changes" = "keep", "changes within groups" = "group")),
        shiny::conditionalPanel(sprintf("input.part_%d == 'group'", i),
          shiny::textInput(paste0("part_groups_", i), if (numeric_key) "breaks, e.g. 0, 18, 65, Inf" else "groups, e.g. a, b | c | d, e"))
      )
    })
  })

  shiny::observeEvent(input$release_go, {
    if (is.null(rv$data) || !length(rv$keys)) return(app_fail(rv, "release", "Load data and choose the key variables on the Data page first."))
    xi <- input$xi
    if (!is.numeric(xi) || length(xi) != 1L || is.na(xi) || xi <= 0 || xi >= 1) {
      return(app_fail(rv, "release", sprintf("\u03be must be a number strictly between 0 and 1 (a probability); %s was given.", if (is.null(xi) || is.na(xi)) "nothing" else format(xi))))
    }
    seed <- input$seed
    if (!is.numeric(seed) || is.na(seed) || seed != round(seed)) return(app_fail(rv, "release", "The seed must be a whole number."))
    partition <- app_partition(input, rv$keys, rv$data)
    if (is.character(partition)) return(app_fail(rv, "release", partition))
    args <- c(
      sprintf("keys = %s", app_dq(rv$keys)),
      sprintf("xi = %s", app_dq(xi)),
      sprintf("goal = %s", app_dq(input$goal)),
      if (length(partition)) sprintf("partition = %s", app_dq(partition)),
      sprintf("method = %s", app_dq(input$method)),
      sprintf("calibrate = %s", app_dq(input$calibrate)),
      sprintf("on_infeasible = %s", app_dq(input$on_infeasible)),
      sprintf("na = %s", app_dq(input$na)),
      if (identical(input$release_known, "all")) "known = TRUE"
    )
    utility_vars <- c(as.list(rv$keys), if (length(rv$keys) > 1L) list(rv$keys))
    code <- c(
      sprintf("set.seed(%s)", app_dq(as.integer(seed))),
      paste0("release <- sdcRisk::ifpr(data,\n  ", paste(args, collapse = ",\n  "), "\n)"),
      "risk <- sdcRisk::release_risk(release)",
      sprintf("utility <- sdcRisk::release_utility(release, %s)", app_dq(utility_vars))
    )
    rv$release <- NULL
    shiny::withProgress(message = "Releasing", value = 0.1, detail = "design, exact certificate and draw (ifpr)", {
      ok <- app_run(code[1:2], work, rv, "release")
      if (ok) {
        shiny::incProgress(0.5, detail = "release risk and utility")
        ok <- app_run(code[3:4], work, rv, "release")
      }
    })
    if (!ok) return()
    rv$release <- work$release
    rv$risk <- work$risk
    rv$utility <- work$utility
    rv$seed <- as.integer(seed)
    rv$release_code <- code
    shiny::showNotification(sprintf("Released: exact maximum risk %s.", format(signif(work$release$certificate$risk, 6))), type = "message", duration = 5)
  })

  cert <- shiny::reactive(rv$release$certificate)
  output$cert_value <- shiny::renderText(if (is.null(cert())) "\u2013" else format(signif(cert()$risk, 6)))
  output$cert_xi <- shiny::renderText(if (is.null(cert())) "\u2013" else format(cert()$xi))
  output$cert_changed <- shiny::renderText({
    c <- cert()
    if (is.null(c)) return("\u2013")
    sprintf("%s (%.1f%%)", format(c$records_changed, big.mark = ","), 100 * c$records_changed / c$n_records)
  })
  output$cert_words <- shiny::renderUI({
    rel <- rv$release
    if (is.null(rel)) return(app_help("Set \u03be and the design, then press Release."))
    app_certificate_words(rel)
  })
  output$release_summary <- shiny::renderPrint(if (!is.null(rv$release)) print(summary(rv$release)))
  output$release_plot <- shiny::renderPlot(if (!is.null(rv$release)) graphics::plot(rv$release))
  output$risk_table <- shiny::renderTable(rv$risk$table, striped = TRUE, spacing = "xs", digits = 4)
  output$risk_changes <- shiny::renderTable(rv$risk$changes, striped = TRUE, spacing = "xs", digits = 2)
  output$risk_plot <- shiny::renderPlot(if (!is.null(rv$risk)) suppressWarnings(graphics::plot(rv$risk)))
  output$utility_tvd <- shiny::renderTable(rv$utility$tvd, striped = TRUE, spacing = "xs", digits = 5)
  output$utility_plot <- shiny::renderPlot(if (!is.null(rv$utility)) graphics::plot(rv$utility))
  output$utility_tvd_plot <- shiny::renderPlot(if (!is.null(rv$utility)) graphics::plot(rv$utility, which = "tvd"))
}

app_certificate_words <- function(rel) {
  c <- rel$certificate
  keys <- rel$keys
  where <- paste(paste(names(c$cell_keys), vapply(c$cell_keys, function(v) as.character(v[1]), ""), sep = " = "), collapse = ", ")
  goal <- switch(c$goal, all_matches = "whatever the number of released records that match",
                 unique_matches = "when exactly one released record matches",
                 sample_uniques = "for persons alone in their cell, when exactly one released record matches")
  shiny::div(class = "sdc-words", id = "cert_words_text",
    shiny::p(sprintf("No intruder who knows the %s of a person, and picks one of the released records that match them, is right with probability above %s, %s.",
                     paste(keys, collapse = ", "), format(c$xi), goal)),
    shiny::p(sprintf("This is proven, not estimated: the exact maximum of R_j(a, t) is %s, attained in the cell %s (%s record%s) when %s released record%s.",
                     format(signif(c$risk, 6)), where, c$count, if (c$count == 1) "" else "s", c$a, if (c$a == 1) " matches" else "s match")),
    if (!is.null(c$known)) shiny::p(sprintf("For intruders who know only some keys the worst is %s (%s).",
                                            format(signif(max(c$known$risk), 6)), c$known$known[which.max(c$known$risk)]))
  )
}

# The partition list ifpr() takes, from the inputs; a character string on error.
app_partition <- function(input, keys, d) {
  out <- list()
  for (i in seq_along(keys)) {
    rule <- input[[paste0("part_", i)]] %||% "free"
    k <- keys[i]
    if (rule == "keep") out[[k]] <- "keep"
    if (rule == "group") {
      txt <- trimws(input[[paste0("part_groups_", i)]] %||% "")
      if (!nzchar(txt)) return(sprintf("Give the groups of %s, or let it change freely.", k))
      if (is.numeric(d[[k]])) {
        b <- suppressWarnings(as.numeric(trimws(strsplit(txt, ",", fixed = TRUE)[[1]])))
        if (anyNA(b) || length(b) < 2L) return(sprintf("The breaks of %s must be numbers separated by commas, such as 0, 18, 65, Inf; got '%s'.", k, txt))
        out[[k]] <- b
      } else {
        groups <- lapply(strsplit(txt, "|", fixed = TRUE)[[1]], function(g) trimws(strsplit(g, ",", fixed = TRUE)[[1]]))
        out[[k]] <- groups
      }
    }
  }
  out
}

# ---- Certify a PRAM -----------------------------------------------------------

server_certify <- function(input, output, session, rv, work) {
  output$cert_message <- app_render_message(rv, "certify")

  shiny::observeEvent(input$cert_go, {
    goal <- input$cert_goal
    known <- switch(input$cert_known_mode, none = NULL, all = TRUE, some = {
      if (!length(input$cert_known)) return(app_fail(rv, "certify", "Choose the keys the intruder knows, or another option."))
      list(input$cert_known)
    })
    if (identical(input$cert_source, "sdcmicro")) {
      f <- input$cert_obj
      if (is.null(f)) return(app_fail(rv, "certify", "Upload the sdcMicroObj saved with saveRDS()."))
      if (!requireNamespace("sdcMicro", quietly = TRUE)) return(app_fail(rv, "certify", "Certifying an sdcMicroObj needs the package sdcMicro: install.packages(\"sdcMicro\")."))
      obj <- tryCatch(readRDS(f$datapath), error = function(e) e)
      if (!inherits(obj, "sdcMicroObj")) {
        return(app_fail(rv, "certify", sprintf("%s does not hold an sdcMicroObj (%s).", f$name,
                                               if (inherits(obj, "error")) "not an R data file" else paste("it holds", class(obj)[1]))))
      }
      read <- list(eval = sprintf("obj <- readRDS(%s)", app_dq(f$datapath)), script = sprintf("obj <- readRDS(%s)", app_dq(f$name)))
      step <- c(sprintf("obj <- sdcRisk::pram_certify(obj, goal = %s)", app_dq(goal)),
                if (!is.null(known)) sprintf("known <- sdcRisk::max_match_risk_known(obj, goal = %s, subsets = %s)", app_dq(goal), if (isTRUE(known)) "NULL" else app_dq(known)))
    } else {
      if (is.null(rv$data) || !length(rv$keys)) return(app_fail(rv, "certify", "Load the original data and choose the keys on the Data page first."))
      f <- input$cert_matrices
      if (is.null(f)) return(app_fail(rv, "certify", "Upload the transition matrices."))
      read <- app_matrices_code(f)
      if (!is.null(read$error)) return(app_fail(rv, "certify", read$error))
      step <- c(
        sprintf("plan <- sdcRisk::pram_plan_vars(sdcRisk::cell_frequencies(data, %s, na = %s), matrices, orientation = %s)",
                app_dq(rv$keys), app_dq(input$na), app_dq(input$cert_orientation)),
        sprintf("certificate <- sdcRisk::max_match_risk(plan, goal = %s)", app_dq(goal)),
        if (!is.null(known)) sprintf("known <- sdcRisk::max_match_risk_known(plan, goal = %s, subsets = %s)", app_dq(goal), if (isTRUE(known)) "NULL" else app_dq(known))
      )
    }
    if (exists("known", envir = work, inherits = FALSE)) rm("known", envir = work)
    rv$cert <- NULL
    ok <- FALSE
    shiny::withProgress(message = "Certifying", value = 0.2, detail = "exact maximum risk", {
      ok <- app_run(c(read$eval, step), work, rv, "certify")
    })
    if (!ok) return()
    is_obj <- identical(input$cert_source, "sdcmicro")
    rv$cert_obj <- is_obj
    rv$cert <- if (is_obj) work$obj@risk$pram else work$certificate
    rv$cert_known <- if (!is.null(known)) work$known
    rv$cert_code <- c(read$script, step)
    rv$cert_changes <- if (is_obj) app_obj_changes(work$obj) else app_released_changes(input$cert_released, rv$data, work$plan$vars)
  })

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

# Reading matrices: one .rds (a named list) or CSV files named after their variable.
app_matrices_code <- function(f) {
  ext <- tolower(app_file_ext(f$name))
  if (any(f$size == 0)) return(list(error = sprintf("The file %s is empty.", f$name[f$size == 0][1])))
  if (length(ext) == 1L && ext == "rds") {
    m <- tryCatch(readRDS(f$datapath), error = function(e) e)
    if (!is.list(m) || is.null(names(m)) || inherits(m, "error")) {
      return(list(error = sprintf("%s must hold a named list of matrices, one per perturbed key.", f$name)))
    }
    return(list(eval = sprintf("matrices <- readRDS(%s)", app_dq(f$datapath)),
                script = sprintf("matrices <- readRDS(%s)", app_dq(f$name))))
  }
  if (!all(ext == "csv")) return(list(error = "Upload one .rds file holding a named list of matrices, or one CSV file per variable."))
  vars <- sub("\\.[[:alnum:]]+$", "", f$name)
  one <- "%s = as.matrix(utils::read.csv(%s, row.names = 1, check.names = FALSE))"
  list(
    eval = sprintf("matrices <- list(%s)", paste(sprintf(one, app_dq_name(vars), vapply(f$datapath, app_dq, "")), collapse = ", ")),
    script = sprintf("matrices <- list(\n  %s\n)", paste(sprintf(one, app_dq_name(vars), vapply(f$name, app_dq, "")), collapse = ",\n  "))
  )
}

app_dq_name <- function(x) ifelse(make.names(x) == x, x, paste0("`", x, "`"))

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

# ---- Tables -------------------------------------------------------------------

server_tables <- function(input, output, session, rv, work) {
  output$tab_message <- app_render_message(rv, "tables")

  output$tab_hierarchy_ui <- shiny::renderUI({
    by <- input$tab_by
    d <- rv$data
    if (!length(by) || is.null(d)) return(NULL)
    others <- names(d)
    lapply(seq_along(by), function(i) {
      shiny::selectizeInput(paste0("tab_hier_", i), sprintf("Coarser levels of %s (columns, finest first; optional)", by[i]),
                            choices = setdiff(others, by[i]), multiple = TRUE)
    })
  })

  shiny::observeEvent(input$tab_sens_go, {
    d <- rv$data
    if (is.null(d)) return(app_fail(rv, "tables", "Load the records on the Data page first."))
    by <- input$tab_by
    if (!length(by)) return(app_fail(rv, "tables", "Choose the classification variables."))
    if (!nzchar(input$tab_value %||% "")) return(app_fail(rv, "tables", "Choose the value variable (a numeric column)."))
    rules <- app_rules_code(input)
    if (!length(rules)) return(app_fail(rv, "tables", "Choose at least one rule."))
    hier <- list()
    for (i in seq_along(by)) {
      cols <- input[[paste0("tab_hier_", i)]]
      if (length(cols)) {
        problem <- app_check_hierarchy(d, by[i], cols)
        if (!is.null(problem)) return(app_fail(rv, "tables", problem))
        hier[[by[i]]] <- sprintf("unique(data[%s])", app_dq(c(by[i], cols)))
      }
    }
    args <- c(
      "data",
      sprintf("by = %s", app_dq(by)),
      sprintf("value = %s", app_dq(input$tab_value)),
      sprintf("rules = list(%s)", paste(rules, collapse = ", ")),
      if (nzchar(input$tab_contributor %||% "")) sprintf("contributor = %s", app_dq(input$tab_contributor)),
      if (nzchar(input$tab_weight %||% "")) sprintf("weight = %s", app_dq(input$tab_weight)),
      if (length(hier)) sprintf("hierarchy = list(%s)", paste(sprintf("%s = %s", app_dq_name(names(hier)), unlist(hier)), collapse = ", "))
    )
    code <- paste0("sens <- sdcRisk::cell_sensitivity(", paste(args, collapse = ", "), ")")
    rv$sens <- NULL
    rv$prot <- NULL
    rv$protect_code <- NULL
    shiny::withProgress(message = "Finding sensitive cells", value = 0.3, {
      ok <- app_run(code, work, rv, "tables")
    })
    if (!ok) return()
    rv$sens <- work$sens
    rv$tables_code <- code
    shiny::updateTabsetPanel(session, "tab_tabs", selected = "Sensitive cells")
  })

  shiny::observeEvent(input$tab_protect_go, {
    if (is.null(rv$sens)) return(app_fail(rv, "tables", "Find the sensitive cells first."))
    code <- c(sprintf("prot <- sdcRisk::protect_table(sens, cost = %s, method = %s)", app_dq(input$tab_cost), app_dq(input$tab_method)),
              "audit <- sdcRisk::audit_table(sens, prot$status != \"published\")")
    shiny::withProgress(message = "Protecting the table", value = 0.2, detail = "secondary suppression and its LP audit", {
      ok <- app_run(code, work, rv, "tables")
    })
    if (!ok) return()
    rv$prot <- work$prot
    rv$audit <- work$audit
    rv$protect_code <- code
    shiny::updateTabsetPanel(session, "tab_tabs", selected = "Pattern")
  })

  output$tab_words <- shiny::renderUI({
    s <- rv$sens
    if (is.null(s)) return(app_help("Choose the table and rules, then press Find sensitive cells."))
    p <- rv$prot
    shiny::div(class = "sdc-words", id = "tab_words_text",
      shiny::p(sprintf("%s cells (with all margins), %s of them sensitive.", format(nrow(s), big.mark = ","), sum(s$sensitive))),
      if (!is.null(p)) shiny::p(sprintf("Protected: %s primary and %s secondary suppressions.", sum(p$status == "primary"), sum(p$status == "secondary")))
    )
  })
  output$tab_sens_summary <- shiny::renderPrint(if (!is.null(rv$sens)) print(summary(rv$sens)))
  output$tab_sens_table <- shiny::renderTable({
    s <- rv$sens
    if (is.null(s)) return(NULL)
    s <- as.data.frame(unclass(s))[s$sensitive, , drop = FALSE]
    s[, intersect(c(attr(rv$sens, "by") %||% names(s)[1], "level", "n_contributors", "total", "x1", "x2", "rules"), names(s)), drop = FALSE]
  }, striped = TRUE, spacing = "xs")
  output$tab_plot <- shiny::renderPlot({
    if (!is.null(rv$prot)) graphics::plot(rv$prot) else if (!is.null(rv$sens)) graphics::plot(rv$sens)
  })
  output$tab_audit_words <- shiny::renderUI({
    a <- rv$audit
    if (is.null(a)) return(app_help("Protect the table to see its audit."))
    shiny::div(class = "sdc-words", id = "audit_words_text",
      shiny::p(if (isTRUE(attr(a, "passed"))) "Audit passed: every sensitive cell keeps at least its protection level on each side, whatever an attacker deduces from the published cells and the table's sums." else "Audit FAILED: some sensitive cells are not protected."),
      shiny::p(sprintf("%s linear programs solved.", attr(a, "n_lp") %||% NA))
    )
  })
  output$tab_audit_table <- shiny::renderTable(as.data.frame(unclass(rv$audit)), striped = TRUE, spacing = "xs")
}

app_rules_code <- function(input) {
  r <- input$tab_rules
  c(
    if ("frequency" %in% r) sprintf("sdcRisk::rule_frequency(%s)", app_dq(input$tab_freq_n)),
    if ("nk" %in% r) sprintf("sdcRisk::rule_nk(%s, %s)", app_dq(input$tab_nk_n), app_dq(input$tab_nk_k)),
    if ("p" %in% r) sprintf("sdcRisk::rule_p(%s)", app_dq(input$tab_p)),
    if ("pq" %in% r) sprintf("sdcRisk::rule_pq(%s, %s)", app_dq(input$tab_pq_p), app_dq(input$tab_pq_q)),
    if ("zero" %in% r) "sdcRisk::rule_zero()"
  )
}

# A hierarchy must nest: each code in exactly one group at every coarser
# level, or the table's cells would not add up to its margins.
app_check_hierarchy <- function(d, var, cols) {
  levels <- c(var, cols)
  for (j in seq_along(cols)) {
    finer <- levels[j]
    m <- unique(d[c(finer, cols[j])])
    dup <- m[[finer]][duplicated(m[[finer]])]
    if (length(dup)) {
      parents <- unique(as.character(m[[cols[j]]][m[[finer]] == dup[1]]))
      return(sprintf("The table would not be additive: %s = %s falls under %s groups of %s (%s). Each code must belong to exactly one group at every coarser level.",
                     finer, dup[1], length(parents), cols[j], paste(parents, collapse = ", ")))
    }
  }
  NULL
}

# ---- Downloads and the script -------------------------------------------------

server_downloads <- function(input, output, session, rv, work) {
  script <- shiny::reactive(app_script(shiny::reactiveValuesToList(rv)))
  output$script_preview <- shiny::renderText(paste(script(), collapse = "\n"))

  output$dl_released_info <- shiny::renderText(if (is.null(rv$release)) "No release yet (page Microdata release)." else
    sprintf("%s records; written by utils::write.csv(release$data, ...).", format(nrow(rv$release$data), big.mark = ",")))
  output$dl_table_info <- shiny::renderText(if (is.null(rv$prot)) "No protected table yet (page Tables)." else
    sprintf("%s cells with their status (published, primary, secondary) and audit intervals.", nrow(rv$prot)))

  output$dl_released <- shiny::downloadHandler(
    filename = "released.csv",
    content = function(file) {
      if (is.null(rv$release)) {
        shiny::showNotification("No release yet: make one on the page Microdata release.", type = "error")
        stop("no release")
      }
      utils::write.csv(rv$release$data, file, row.names = FALSE)
    }
  )
  output$dl_table <- shiny::downloadHandler(
    filename = "protected-table.csv",
    content = function(file) {
      if (is.null(rv$prot)) {
        shiny::showNotification("No protected table yet: protect one on the page Tables.", type = "error")
        stop("no table")
      }
      utils::write.csv(rv$prot, file, row.names = FALSE)
    }
  )
  output$dl_script <- shiny::downloadHandler(
    filename = "sdcRisk-session.R",
    content = function(file) writeLines(script(), file)
  )
  output$dl_report <- shiny::downloadHandler(
    filename = "disclosure-review.html",
    content = function(file) {
      what <- input$report_of
      x <- switch(what, release = rv$release, certify = if (isTRUE(rv$cert_obj)) work$obj, tables = rv$prot)
      if (is.null(x)) {
        msg <- switch(what, release = "No release yet: make one on the page Microdata release.",
                      certify = "The report covers a certified sdcMicroObj: certify one on the page Certify a PRAM.",
                      tables = "No protected table yet: protect one on the page Tables.")
        shiny::showNotification(msg, type = "error", duration = 15)
        stop(msg)
      }
      shiny::withProgress(message = "Writing the report", value = 0.3, {
        res <- tryCatch({
          if (what == "tables") {
            release_report(x, file, code = script(), sensitivity = rv$sens)
          } else if (what == "release") {
            release_report(x, file, seed = rv$seed, code = script())
          } else {
            release_report(x, file, code = script())
          }
        }, error = function(e) e)
      })
      if (inherits(res, "error")) {
        shiny::showNotification(paste("The report failed:", app_condition_text(res)), type = "error", duration = 20)
        stop(res)
      }
    }
  )
}

app_script <- function(s) {
  header <- c(
    sprintf("# R script of an sdcRisk app session, %s (sdcRisk %s, %s).", format(Sys.time(), "%Y-%m-%d %H:%M"),
            utils::packageVersion("sdcRisk"), R.version.string),
    "# It repeats what was done in the app: same data, same arguments, same seed.",
    "# Run it in the folder that holds the uploaded files; it writes the files the app offered.",
    ""
  )
  if (is.null(s$data_code)) return(c(header, "# No data loaded yet."))
  out <- c(header, "## Data", s$data_code, s$cells_code, "")
  if (!is.null(s$release_code)) {
    out <- c(out, "## Microdata release", s$release_code,
             "utils::write.csv(release$data, \"released.csv\", row.names = FALSE)", "")
  }
  if (!is.null(s$cert_code)) out <- c(out, "## Certificate of a PRAM", s$cert_code, "")
  if (!is.null(s$tables_code)) {
    out <- c(out, "## Table", s$tables_code)
    if (!is.null(s$protect_code)) {
      out <- c(out, s$protect_code, "utils::write.csv(prot, \"protected-table.csv\", row.names = FALSE)")
    }
    out <- c(out, "")
  }
  out
}

app_file_ext <- function(x) {
  m <- regexpr("\\.[[:alnum:]]+$", x)
  ifelse(m > 0, substring(x, m + 1L), "")
}
