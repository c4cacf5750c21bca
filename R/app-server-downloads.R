# ---- Downloads and the script -------------------------------------------------

server_downloads <- function(input, output, session, rv, work) {
  # on the steps only (not on messages and results)
  script <- shiny::reactive(app_script(lapply(stats::setNames(nm = app_code_fields), function(f) rv[[f]])))
  output$script_preview <- shiny::renderText({
    s <- script()
    if (s$ok) paste(s$lines, collapse = "\n") else app_script_refused
  })

  output$dl_released_info <- shiny::renderText(if (is.null(rv$release)) "No release yet (page Microdata release)." else
    sprintf("%s records; written by utils::write.csv(release$data, ...).", format(nrow(rv$release$data), big.mark = ",")))
  output$dl_publication_info <- shiny::renderText(if (is.null(rv$release)) "No release yet (page Microdata release)." else
    if (is.null(rv$publication)) paste("This release has no publication:", rv$publication_error) else
    "What data users need beside the released file (keys, blocks and theta, certificate; none of the records); written by publish_plan(release, ...), read with read_plan() and estimate_table().")
  output$dl_table_info <- shiny::renderText(if (is.null(rv$prot)) "No protected table yet (page Tables)." else
    sprintf("%s cells with their status (published, primary, secondary) and audit intervals.", nrow(rv$prot)))

  output$dl_released <- shiny::downloadHandler(
    filename = "released.csv",
    content = function(file) {
      if (is.null(rv$release)) app_download_fail("No release yet: make one on the page Microdata release.")
      utils::write.csv(rv$release$data, file, row.names = FALSE)
    }
  )
  # the publication made with the release (app_set_publication()), never an
  # input: the file name is fixed and JSON is chosen by the extension of a
  # file the app names; the script writes the same file
  output$dl_publication <- shiny::downloadHandler(
    filename = "publication.json",
    content = function(file) {
      if (is.null(rv$release)) app_download_fail("No release yet: make one on the page Microdata release.")
      if (is.null(rv$publication)) app_download_fail(paste("This release has no publication:", rv$publication_error), duration = 20)
      tmp <- tempfile("sdcRisk-publication-", fileext = ".json")
      on.exit(unlink(tmp), add = TRUE)
      res <- tryCatch(write_publication(rv$publication, tmp), error = function(e) e)
      if (inherits(res, "error")) app_download_fail(paste("The publication failed:", app_condition_text(res)), duration = 20)
      file.copy(tmp, file, overwrite = TRUE)
    }
  )
  output$dl_table <- shiny::downloadHandler(
    filename = "protected-table.csv",
    content = function(file) {
      if (is.null(rv$prot)) app_download_fail("No protected table yet: protect one on the page Tables.")
      utils::write.csv(rv$prot, file, row.names = FALSE)
    }
  )
  output$dl_script <- shiny::downloadHandler(
    filename = "sdcRisk-session.R",
    content = function(file) {
      s <- script()
      if (!s$ok) app_download_fail(app_script_refused)
      writeLines(s$lines, file)
    }
  )
  output$dl_report <- shiny::downloadHandler(
    filename = "disclosure-review.html",
    content = function(file) app_report(input, rv, work, script(), file)
  )
}

app_code_fields <- c("data_code", "cells_code", "release_code", "publish_code", "cert_code", "tables_code", "protect_code")

app_script_refused <- "The script of this session cannot be offered: written out, it would not repeat exactly what the app did (a value the script cannot write). Please report this as a bug."

# A download that cannot be made: a notification, and no file.
app_download_fail <- function(msg, duration = 15) {
  shiny::showNotification(msg, type = "error", duration = duration)
  stop(msg, call. = FALSE)
}

app_report <- function(input, rv, work, script, file) {
  what <- tryCatch(app_in_choice(input$report_of, c("release", "certify", "tables"), "The report"),
                   sdcRisk_app_input = function(e) app_download_fail(conditionMessage(e)))
  x <- switch(what, release = rv$release, certify = if (isTRUE(rv$cert_obj)) work$obj, tables = rv$prot)
  if (is.null(x)) {
    app_download_fail(switch(what, release = "No release yet: make one on the page Microdata release.",
                             certify = "The report covers a certified sdcMicroObj: certify one on the page Certify a PRAM.",
                             tables = "No protected table yet: protect one on the page Tables."))
  }
  # never the report's own code of the object (report_deparse()): only the
  # session's script, checked
  code <- if (script$ok) script$lines else "# The script of this session could not be written exactly: it is not shown."
  res <- NULL
  shiny::withProgress(message = "Writing the report", value = 0.3, {
    res <- tryCatch({
      if (what == "tables") {
        release_report(x, file, code = code, sensitivity = rv$sens)
      } else if (what == "release") {
        release_report(x, file, seed = rv$seed, code = code)
      } else {
        release_report(x, file, code = code)
      }
    }, error = function(e) e)
  })
  if (inherits(res, "error")) app_download_fail(paste("The report failed:", app_condition_text(res)), duration = 20)
  invisible(file)
}

# The script of the session: its lines, and whether they parse back to
# exactly the calls the app evaluated (else it is not offered).
app_script <- function(s) {
  header <- c(
    sprintf("# R script of an sdcRisk app session, %s (sdcRisk %s, %s).", format(Sys.time(), "%Y-%m-%d %H:%M"),
            utils::packageVersion("sdcRisk"), R.version.string),
    "# It repeats what was done in the app: same data, same arguments, same seed.",
    "# Run it in the folder that holds the uploaded files; it writes the files the app offered.",
    ""
  )
  if (is.null(s$data_code)) return(list(lines = c(header, "# No data loaded yet."), ok = TRUE))
  entries <- c(list("## Data"), s$data_code, s$cells_code, list(""))
  if (!is.null(s$release_code)) {
    # publish_code: the publication, when the release has one (as the
    # Downloads page offers it)
    entries <- c(entries, list("## Microdata release"), s$release_code,
                 list(quote(utils::write.csv(release$data, "released.csv", row.names = FALSE))), s$publish_code, list(""))
  }
  if (!is.null(s$cert_code)) entries <- c(entries, list("## Certificate of a PRAM"), s$cert_code, list(""))
  if (!is.null(s$tables_code)) {
    entries <- c(entries, list("## Table"), s$tables_code)
    if (!is.null(s$protect_code)) {
      entries <- c(entries, s$protect_code, list(quote(utils::write.csv(prot, "protected-table.csv", row.names = FALSE))))
    }
    entries <- c(entries, list(""))
  }
  lines <- tryCatch(c(header, app_script_lines(entries)), error = function(e) NULL)
  list(lines = lines, ok = !is.null(lines) && app_script_check(lines, entries))
}
