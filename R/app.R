#' A browser app for the whole workflow
#'
#' `run_app()` starts a Shiny app for survey methodologists who would rather
#' point and click than write R: load data (a CSV or RDS file, `pums_md`, or
#' the data frame given as `data`), choose the key variables and see the
#' cells at risk and the risk of releasing the data unchanged; release the
#' microdata with [ifpr()] and read its exact certificate, [summary()],
#' release risk and utility; certify a PRAM run elsewhere (an `sdcMicroObj`
#' saved with [saveRDS()], or the per-variable transition matrices) for
#' intruders who know all or only some keys; find the sensitive cells of a
#' magnitude table and protect it with [protect_table()] and its audit; and
#' download the released data, the protected table with its flags, a
#' disclosure-review report ([release_report()]) and the R script that
#' reproduces exactly what was done (same data, same arguments, same seed).
#'
#' The app runs each step by evaluating the very code it writes into the
#' script, so the script and the app cannot disagree. Errors (bad files, a
#' bound outside (0, 1), an infeasible design) appear as messages in the app,
#' which goes on working.
#'
#' @param data A data frame to offer on the Data page besides `pums_md` and
#'   uploads, or `NULL`.
#' @param ... Must be empty.
#' @param port The TCP port (see [shiny::runApp()]); `NULL` picks one.
#' @param launch.browser Open the app in a browser?
#' @param host The address to listen on; the default serves this computer
#'   only.
#'
#' @returns Nothing useful: it runs until the app is stopped. `sdc_app()`
#'   returns the app object (for [shiny::runApp()] or a Shiny server).
#'
#' @section Packages:
#' shiny and bslib are suggested, not required: `run_app()` stops with an
#' error of class `sdcRisk_error_missing_package` that says how to install
#' them (`install.packages(c("shiny", "bslib"))`, or on Debian
#' `apt-get install r-cran-shiny r-cran-bslib`). The report needs
#' rmarkdown and pandoc; certifying an `sdcMicroObj` needs sdcMicro.
#'
#' @family app and report
#' @export
#' @examples
#' if (interactive() && requireNamespace("shiny", quietly = TRUE) &&
#'     requireNamespace("bslib", quietly = TRUE)) {
#'   run_app()
#'   # or with a data frame of your own session
#'   set.seed(1)
#'   people <- data.frame(sex = sample(c("F", "M"), 500, TRUE),
#'                        age = sample(18:90, 500, TRUE))
#'   run_app(people)
#' }
run_app <- function(data = NULL, ..., port = getOption("shiny.port"),
                    launch.browser = getOption("shiny.launch.browser", interactive()),
                    host = getOption("shiny.host", "127.0.0.1")) {
  rlang::check_dots_empty()
  data_name <- if (is.null(data)) NULL else paste(deparse(substitute(data), width.cutoff = 200L), collapse = "")
  app <- sdc_app(data, data_name = data_name)
  shiny::runApp(app, port = port, launch.browser = launch.browser, host = host)
}

#' @rdname run_app
#' @param data_name How the script refers to `data` (by default the
#'   expression given as `data`).
#' @export
sdc_app <- function(data = NULL, data_name = NULL) {
  app_check_packages()
  if (!is.null(data) && !is.data.frame(data)) {
    abort_sdc(c(
      "{.arg data} must be a data frame.",
      "x" = "It is {.obj_type_friendly {data}}."
    ), "not_data_frame", arg = "data")
  }
  if (!is.null(data) && is.null(data_name)) {
    data_name <- paste(deparse(substitute(data), width.cutoff = 200L), collapse = "")
  }
  shiny::shinyApp(app_ui(has_data = !is.null(data)), app_server(data, data_name))
}

app_check_packages <- function(pkgs = c("shiny", "bslib"), call = rlang::caller_env()) {
  missing <- pkgs[!vapply(pkgs, requireNamespace, logical(1), quietly = TRUE)]
  if (length(missing)) {
    debs <- paste0("r-cran-", tolower(missing))
    abort_sdc(c(
      "The app needs the package{?s} {.pkg {missing}}.",
      "i" = "Install {?it/them} with {.code install.packages(c({paste0('\"', missing, '\"', collapse = ', ')}))},",
      " " = "or on Debian and Ubuntu with {.code apt-get install {debs}}."
    ), "missing_package", call = call, package = missing)
  }
  invisible(TRUE)
}

# ---- user interface ---------------------------------------------------------

app_ui <- function(has_data = FALSE) {
  theme <- bslib::bs_theme(version = 5, primary = "#2c5f8a")
  bslib::page_navbar(
    title = "sdcRisk",
    id = "page",
    theme = theme,
    header = shiny::tags$head(shiny::tags$style(shiny::HTML(app_css))),
    shiny::tabPanel("Data", value = "data", ui_data(has_data)),
    shiny::tabPanel("Microdata release", value = "release", ui_release()),
    shiny::tabPanel("Certify a PRAM", value = "certify", ui_certify()),
    shiny::tabPanel("Tables", value = "tables", ui_tables()),
    shiny::tabPanel("Downloads", value = "downloads", ui_downloads())
  )
}

app_css <- "
.sdc-note { color: #555; font-size: 0.92em; }
.sdc-words { font-size: 1.05em; margin: 0.5em 0 1em 0; }
.sdc-sidebar { background: #f4f6f8; border-radius: 6px; padding: 1em; }
pre.shiny-text-output { font-size: 0.85em; }
#script_preview { white-space: pre-wrap; word-break: break-word; }
.shiny-notification { width: 420px; }
#shiny-notification-panel { width: 440px; }
"

app_help <- function(...) shiny::p(class = "sdc-note", ...)

ui_data <- function(has_data) {
  sources <- c("The synthetic Maryland PUMS (pums_md)" = "pums_md", "Upload a file" = "upload")
  if (has_data) sources <- c("The data frame given to run_app()" = "given", sources)
  shiny::fluidRow(
    shiny::column(4, shiny::div(class = "sdc-sidebar",
      shiny::radioButtons("data_source", "Data", sources, selected = sources[[1]]),
      shiny::conditionalPanel("input.data_source == 'upload'",
        shiny::fileInput("data_file", "CSV or RDS file", accept = c(".csv", ".txt", ".tsv", ".rds")),
        shiny::radioButtons("data_sep", "CSV separator", c("comma" = ",", "semicolon" = ";", "tab" = "\t"), inline = TRUE)
      ),
      shiny::selectizeInput("keys", "Key variables (what an intruder knows)", choices = NULL, multiple = TRUE),
      shiny::radioButtons("na", "Missing key values", c(
        "records with a missing key are left out, never changed" = "exclude",
        "NA is a category of its own" = "category")),
      app_help("Keys are the variables an intruder could know about a person from elsewhere",
               " (sex, age, area...). The cells are their combinations.")
    )),
    shiny::column(8,
      shiny::uiOutput("data_message"),
      shiny::h4("The data"),
      shiny::textOutput("data_info"),
      shiny::tableOutput("data_head"),
      shiny::h4("Cells of the keys"),
      shiny::uiOutput("cells_words"),
      shiny::tableOutput("cells_table")
    )
  )
}

ui_release <- function() {
  shiny::fluidRow(
    shiny::column(4, shiny::div(class = "sdc-sidebar",
      shiny::numericInput("xi", "\u03be: largest allowed probability of a correct match", value = 0.3, min = 0.01, max = 0.99, step = 0.01),
      shiny::selectInput("goal", "Goal", c(
        "every cell, every number of matches (Goal 3)" = "all_matches",
        "every cell, unique matches (Goal 2)" = "unique_matches",
        "sample uniques (Goal 1)" = "sample_uniques")),
      shiny::selectInput("method", "Method", c("tiered (any \u03be, small blocks)" = "tiered", "Nayak et al. (\u03be > 1/3)" = "nayak")),
      shiny::selectInput("calibrate", "Calibration", c("exact (fewer changes)" = "exact", "bound" = "bound")),
      shiny::selectInput("on_infeasible", "A partition set too small for its blocks", c("is an error" = "error", "is merged with the most similar set" = "merge")),
      shiny::h6("Partition: how each key may change"),
      shiny::uiOutput("partition_ui"),
      shiny::radioButtons("release_known", "Also certify for intruders who know only some keys", c(
        "no (an intruder knows every key)" = "none", "every subset of the keys" = "all")),
      shiny::numericInput("seed", "Seed (set.seed)", value = 1, step = 1),
      shiny::actionButton("release_go", "Release", class = "btn-primary")
    )),
    shiny::column(8,
      shiny::uiOutput("release_message"),
      shiny::fluidRow(
        shiny::column(4, bslib::value_box("Certificate: exact maximum risk", shiny::textOutput("cert_value"))),
        shiny::column(4, bslib::value_box("Bound \u03be", shiny::textOutput("cert_xi"))),
        shiny::column(4, bslib::value_box("Records changed", shiny::textOutput("cert_changed")))
      ),
      shiny::uiOutput("cert_words"),
      shiny::tabsetPanel(id = "release_tabs",
        shiny::tabPanel("Summary", shiny::verbatimTextOutput("release_summary"),
                        shiny::plotOutput("release_plot", height = "380px")),
        shiny::tabPanel("Release risk", shiny::tableOutput("risk_table"), shiny::tableOutput("risk_changes"),
                        shiny::plotOutput("risk_plot", height = "380px")),
        shiny::tabPanel("Utility", shiny::tableOutput("utility_tvd"),
                        shiny::plotOutput("utility_plot", height = "380px"),
                        shiny::plotOutput("utility_tvd_plot", height = "320px"))
      )
    )
  )
}

ui_certify <- function() {
  shiny::fluidRow(
    shiny::column(4, shiny::div(class = "sdc-sidebar",
      shiny::radioButtons("cert_source", "The PRAM", c(
        "an sdcMicroObj after sdcMicro::pram(), saved with saveRDS()" = "sdcmicro",
        "per-variable transition matrices, for the data and keys of the Data page" = "matrices")),
      shiny::conditionalPanel("input.cert_source == 'sdcmicro'",
        shiny::fileInput("cert_obj", "sdcMicroObj (.rds)", accept = ".rds")),
      shiny::conditionalPanel("input.cert_source == 'matrices'",
        shiny::fileInput("cert_matrices", "Matrices: one CSV per variable (file named after it) or one .rds list", multiple = TRUE, accept = c(".csv", ".rds")),
        shiny::radioButtons("cert_orientation", "Matrices are written", c(
          "one row per original category (sdcMicro, mu-ARGUS)" = "rows",
          "one column per original category" = "columns")),
        shiny::fileInput("cert_released", "Released file (CSV, optional: to count the changes)", accept = ".csv")
      ),
      shiny::selectInput("cert_goal", "Goal", c(
        "every cell, every number of matches (Goal 3)" = "all_matches",
        "every cell, unique matches (Goal 2)" = "unique_matches",
        "sample uniques (Goal 1)" = "sample_uniques")),
      shiny::radioButtons("cert_known_mode", "Intruders who know only some keys", c(
        "none" = "none", "these keys:" = "some", "every subset of the keys (can take long)" = "all")),
      shiny::selectizeInput("cert_known", NULL, choices = NULL, multiple = TRUE),
      shiny::actionButton("cert_go", "Certify", class = "btn-primary")
    )),
    shiny::column(8,
      shiny::uiOutput("cert_message"),
      bslib::value_box("Exact maximum risk of the PRAM", shiny::textOutput("pram_value")),
      shiny::uiOutput("pram_words"),
      shiny::h5("Intruders who know only some keys"),
      shiny::tableOutput("pram_known"),
      shiny::h5("What changed"),
      shiny::tableOutput("pram_changes")
    )
  )
}

ui_tables <- function() {
  shiny::fluidRow(
    shiny::column(4, shiny::div(class = "sdc-sidebar",
      app_help("The table is made from the records of the Data page (one row per record or contributor)."),
      shiny::selectizeInput("tab_by", "Classification variables", choices = NULL, multiple = TRUE),
      shiny::uiOutput("tab_hierarchy_ui"),
      shiny::selectInput("tab_value", "Value variable (the magnitude)", choices = NULL),
      shiny::selectInput("tab_contributor", "Contributor (enterprise) id", choices = c("(each record)" = "")),
      shiny::selectInput("tab_weight", "Sampling weight", choices = c("(none)" = "")),
      shiny::checkboxGroupInput("tab_rules", "Rules", c("frequency" = "frequency", "dominance (n, k)" = "nk",
                                                        "p%" = "p", "pq" = "pq", "zero" = "zero"),
                                selected = c("frequency", "p")),
      shiny::fluidRow(
        shiny::column(4, shiny::numericInput("tab_freq_n", "freq. n", 3, min = 1, step = 1)),
        shiny::column(4, shiny::numericInput("tab_nk_n", "n", 1, min = 1, step = 1)),
        shiny::column(4, shiny::numericInput("tab_nk_k", "k %", 80, min = 1, max = 100))
      ),
      shiny::fluidRow(
        shiny::column(4, shiny::numericInput("tab_p", "p %", 10, min = 0.1)),
        shiny::column(4, shiny::numericInput("tab_pq_p", "pq: p", 10, min = 0.1)),
        shiny::column(4, shiny::numericInput("tab_pq_q", "pq: q", 50, min = 0.1, max = 100))
      ),
      shiny::actionButton("tab_sens_go", "Find sensitive cells", class = "btn-primary"),
      shiny::hr(),
      shiny::selectInput("tab_cost", "Suppression cost", c("value lost" = "value", "number of cells" = "cells")),
      shiny::selectInput("tab_method", "Method", c("heuristic (large tables)" = "heuristic", "optimal (small tables)" = "optimal")),
      shiny::actionButton("tab_protect_go", "Protect (secondary suppression + audit)", class = "btn-primary")
    )),
    shiny::column(8,
      shiny::uiOutput("tab_message"),
      shiny::uiOutput("tab_words"),
      shiny::tabsetPanel(id = "tab_tabs",
        shiny::tabPanel("Pattern", shiny::plotOutput("tab_plot", height = "560px")),
        shiny::tabPanel("Sensitive cells", shiny::verbatimTextOutput("tab_sens_summary"), shiny::tableOutput("tab_sens_table")),
        shiny::tabPanel("Audit", shiny::uiOutput("tab_audit_words"), shiny::tableOutput("tab_audit_table"))
      )
    )
  )
}

ui_downloads <- function() {
  shiny::fluidRow(shiny::column(8, offset = 2,
    shiny::h4("Downloads"),
    shiny::tags$table(class = "table",
      shiny::tags$tr(shiny::tags$td(shiny::downloadButton("dl_released", "Released data (CSV)")),
                     shiny::tags$td(shiny::textOutput("dl_released_info"))),
      shiny::tags$tr(shiny::tags$td(shiny::downloadButton("dl_table", "Protected table with flags (CSV)")),
                     shiny::tags$td(shiny::textOutput("dl_table_info"))),
      shiny::tags$tr(shiny::tags$td(shiny::downloadButton("dl_report", "Disclosure-review report (HTML)")),
                     shiny::tags$td(shiny::radioButtons("report_of", NULL, c("microdata release" = "release",
                                                                             "certified PRAM" = "certify",
                                                                             "protected table" = "tables"), inline = TRUE))),
      shiny::tags$tr(shiny::tags$td(shiny::downloadButton("dl_script", "R script of this session")),
                     shiny::tags$td("Reproduces exactly what was done: same data, same arguments, same seed."))
    ),
    shiny::h5("The script"),
    shiny::verbatimTextOutput("script_preview")
  ))
}

# The class below belongs in the list of R/utils-errors.R; it is documented
# here until that file (not this branch's) takes it.
#' @name sdcRisk_errors
#' @section Classes of the app and the report:
#' * `sdcRisk_error_missing_package`: a suggested package that [run_app()]
#'   or [release_report()] needs (shiny, bslib, rmarkdown, knitr) is not
#'   installed, or pandoc is missing; the message says how to install it.
#'   Field `package`: the missing packages (for [run_app()]).
NULL
