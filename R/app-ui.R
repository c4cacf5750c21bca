# The pages of run_app(): what the browser shows. Everything the page sends back
# is checked on the server (R/app-inputs.R).

app_ui <- function(has_data = FALSE, allow_rds = FALSE) {
  theme <- bslib::bs_theme(version = 5, primary = "#2c5f8a")
  bslib::page_navbar(
    title = "sdcRisk",
    id = "page",
    theme = theme,
    header = shiny::tags$head(shiny::tags$style(shiny::HTML(app_css))),
    shiny::tabPanel("Data", value = "data", ui_data(has_data, allow_rds)),
    shiny::tabPanel("Microdata release", value = "release", ui_release()),
    shiny::tabPanel("Certify a PRAM", value = "certify", ui_certify(allow_rds)),
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

ui_data <- function(has_data, allow_rds = FALSE) {
  sources <- c("The synthetic Maryland PUMS (pums_md)" = "pums_md", "Upload a file" = "upload")
  if (has_data) sources <- c("The data frame given to run_app()" = "given", sources)
  shiny::fluidRow(
    shiny::column(4, shiny::div(class = "sdc-sidebar",
      shiny::radioButtons("data_source", "Data", sources, selected = sources[[1]]),
      shiny::conditionalPanel("input.data_source == 'upload'",
        shiny::fileInput("data_file", if (allow_rds) "CSV or RDS file" else "CSV file",
                         accept = c(".csv", ".txt", ".tsv", if (allow_rds) ".rds")),
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

ui_certify <- function(allow_rds = FALSE) {
  shiny::fluidRow(
    shiny::column(4, shiny::div(class = "sdc-sidebar",
      shiny::radioButtons("cert_source", "The PRAM", c(
        "an sdcMicroObj after sdcMicro::pram(), saved with saveRDS()" = "sdcmicro",
        "per-variable transition matrices, for the data and keys of the Data page" = "matrices")),
      shiny::conditionalPanel("input.cert_source == 'sdcmicro'",
        if (allow_rds) shiny::fileInput("cert_obj", "sdcMicroObj (.rds)", accept = ".rds") else ui_no_rds()),
      shiny::conditionalPanel("input.cert_source == 'matrices'",
        shiny::fileInput("cert_matrices", if (allow_rds) "Matrices: one CSV per variable (file named after it) or one .rds list" else
                           "Matrices: one CSV per variable (file named after it)", multiple = TRUE, accept = c(".csv", if (allow_rds) ".rds")),
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

# Why the app reads no sdcMicroObj here, and how to give it one.
ui_no_rds <- function() {
  app_help("This app reads no .rds files: an .rds file can run code when it is read (CVE-2024-27322, R before 4.4),",
           " so they are read only by an app started on this computer with run_app(allow_rds = TRUE).",
           " Write the object as CSV files instead (the original data, one matrix per perturbed key,",
           " the released data: vignette(\"app\", package = \"sdcRisk\")), load the original data on the Data page",
           " and certify the matrices (rows are the original categories).")
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

