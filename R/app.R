#' A browser app for the whole workflow
#'
#' `run_app()` starts a Shiny app for survey methodologists who would rather
#' point and click than write R: load data (a CSV file, `pums_md`, or the
#' data frame given as `data`), choose the key variables and see the cells
#' at risk and the risk of releasing the data unchanged; release the
#' microdata with [ifpr()] and read its exact certificate, [summary()],
#' release risk and utility; certify a PRAM run elsewhere (the per-variable
#' transition matrices as CSV files, which is also how an `sdcMicroObj` is
#' given to a shared app, or an `sdcMicroObj` saved with [saveRDS()] when
#' `.rds` files are allowed) for intruders who know all or only some keys;
#' find the sensitive cells of a magnitude table and protect it with
#' [protect_table()] and its audit; and download the released data, its
#' publication for data users ([publish_plan()], as JSON), the
#' protected table with its flags, a disclosure-review report
#' ([release_report()]) and the R script that reproduces exactly what was
#' done (same data, same arguments, same seed) and writes the same files,
#' the publication included.
#'
#' Each step of the app is an R call that holds its values (a language
#' object, never text): the app evaluates that call and writes it into the
#' script, so the script and the app cannot disagree. Before the script is
#' offered it is parsed back (never run) and compared with the calls the
#' app evaluated; a script that would differ is not offered. Errors (bad
#' files, a bound outside (0, 1), an infeasible design, a value the page
#' did not offer) appear as messages in the app, which goes on working.
#'
#' @section Files the app reads:
#' * Data: a CSV file (comma, semicolon or tab separated; `.csv`, `.txt`,
#'   `.tsv`) with the variable names in its first line, read by
#'   `utils::read.csv(file, sep = sep, check.names = FALSE,
#'   stringsAsFactors = TRUE, na.strings = c("", "NA"))`.
#' * Transition matrices (page *Certify a PRAM*): one CSV file per perturbed
#'   key, named after the key (`race.csv` for the key `race`), with the
#'   categories as row names (first column) and column names (first line),
#'   as `utils::write.csv(m, "race.csv")` writes a matrix `m` with
#'   dimnames; rows are the original categories (sdcMicro, mu-ARGUS) or the
#'   released ones, as chosen on the page.
#' * An `sdcMicroObj` after `sdcMicro::pram()` as CSV files: the original
#'   data (the object's data before `pram()`, loaded on the Data page with
#'   the object's key variables as keys), the matrix of each perturbed key
#'   (`obj@pram$params[[v]]$Rs`, rows the original categories) written as
#'   above, and optionally the released data
#'   (`sdcMicro::extractManipData(obj)`) to count the changes; the app
#'   then computes the certificate of [pram_certify()] exactly
#'   (`vignette("app")` shows the code that writes the files).
#' * `.rds` files (a data frame, a named list of matrices, an
#'   `sdcMicroObj`) only with `allow_rds = TRUE`: see Security.
#'
#' @section Security:
#' The app runs only its own code: no input, column name, file name or
#' uploaded CSV file can make it run R code, in the app or in the exported
#' script. Every value the page sends is checked on the server against what
#' the page offered (a browser can send anything); column and file names
#' with control or invisible characters (such as bidi overrides) are
#' refused with a message; uploads are read only from the folder where
#' Shiny put them.
#'
#' `.rds` files are different: an `.rds` file can hold an unevaluated
#' promise, whose code runs when the object is first used
#' (CVE-2024-27322, fixed in R 4.4.0; this holds for data frames, lists of
#' matrices and `sdcMicroObj`s alike). So the app reads no `.rds` upload
#' unless the person who starts it allows it with `allow_rds = TRUE`, which
#' `run_app()` refuses unless `host` is this computer (`127.0.0.1`,
#' `localhost` or `::1`), and which every session ignores when its browser
#' is not on this computer, comes through a proxy, or the app runs on a
#' Shiny server (Shiny Server, Posit Connect, shinyapps.io). Allow `.rds`
#' files only for files you would also `readRDS()` in your own R session.
#'
#' What is safe to serve to others (`sdc_app()` on a Shiny server, or
#' `run_app(host = "0.0.0.0")`): the app without `allow_rds`, to people
#' you would let see and release the data it offers (`pums_md`, the data
#' frame given as `data`, their own uploads). Each session has its own
#' workspace, but the app does not authenticate anyone, limit the size of
#' uploads beyond Shiny's `shiny.maxRequestSize` (5 MB by default), or
#' bound the computing time a session may take (an exact certificate for
#' many keys can take long): put it behind your server's authentication.
#' What is not safe: `allow_rds = TRUE` for anyone but yourself, and
#' running a downloaded script you did not check (a script from this app
#' only reads files and calls sdcRisk, but a file called a script may come
#' from elsewhere).
#'
#' @param data A data frame to offer on the Data page besides `pums_md` and
#'   uploads, or `NULL`.
#' @param ... Must be empty.
#' @param port The TCP port (see [shiny::runApp()]); `NULL` picks one.
#' @param launch.browser Open the app in a browser?
#' @param host The address to listen on; the default serves this computer
#'   only.
#' @param allow_rds Read uploaded `.rds` files (data, matrices,
#'   `sdcMicroObj`)? `FALSE` by default; `TRUE` only for an app on this
#'   computer (see Security).
#'
#' @returns Nothing useful: it runs until the app is stopped. `sdc_app()`
#'   returns the app object (for [shiny::runApp()] or a Shiny server).
#'
#' @section Packages:
#' shiny and bslib are suggested, not required: `run_app()` stops with an
#' error of class `sdcRisk_error_missing_package` that says how to install
#' them (`install.packages(c("shiny", "bslib"))`, or on Debian
#' `apt-get install r-cran-shiny r-cran-bslib`); in an interactive session
#' it first offers to install them ([rlang::check_installed()]). The report
#' needs rmarkdown and pandoc; certifying an `sdcMicroObj` needs sdcMicro.
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
                    host = getOption("shiny.host", "127.0.0.1"), allow_rds = FALSE) {
  rlang::check_dots_empty()
  check_flag(allow_rds)
  if (allow_rds && !app_is_loopback(host)) {
    abort_sdc(c(
      "{.arg allow_rds} = TRUE is refused for an app served to other computers.",
      "x" = "{.arg host} is {.val {host}}, not this computer (127.0.0.1, localhost or ::1).",
      "i" = "An .rds file can run code when it is read (CVE-2024-27322, R before 4.4); ask for CSV files instead."
    ), "allow_rds", arg = "allow_rds")
  }
  app <- app_object(data, if (!is.null(data)) substitute(data), allow_rds)
  shiny::runApp(app, port = port, launch.browser = launch.browser, host = host)
}

#' @rdname run_app
#' @param data_name How the script refers to `data`: a name (a string or a
#'   symbol) or an expression; by default the expression given as `data`.
#' @export
sdc_app <- function(data = NULL, data_name = NULL, allow_rds = FALSE) {
  check_flag(allow_rds)
  if (!is.null(data) && is.null(data_name)) data_name <- substitute(data)
  app_object(data, data_name, allow_rds)
}

app_object <- function(data, data_name, allow_rds, call = rlang::caller_env()) {
  app_check_packages(call = call)
  if (!is.null(data) && !is.data.frame(data)) {
    abort_sdc(c(
      "{.arg data} must be a data frame.",
      "x" = "It is {.obj_type_friendly {data}}."
    ), "not_data_frame", arg = "data", call = call)
  }
  data_name <- if (is.null(data)) NULL else app_data_name(data_name, call)
  shiny::shinyApp(app_ui(has_data = !is.null(data), allow_rds = allow_rds),
                  app_server(data, data_name, allow_rds))
}

# The expression for `data` in the script: a syntactic or ASCII name as
# such, any other string through get(), an expression as given when the
# script can write it exactly.
app_data_name <- function(x, call = rlang::caller_env()) {
  if (is.symbol(x)) x <- as.character(x)
  if (is.character(x) && length(x) == 1L && !is.na(x) && nzchar(x)) {
    return(if (app_ascii_printable(x)) as.name(x) else call("get", x))
  }
  if (is.language(x)) {
    code <- tryCatch(app_deparse(x), error = function(e) NULL)
    back <- if (!is.null(code)) tryCatch(parse(text = code, keep.source = FALSE), error = function(e) NULL)
    if (length(back) == 1L && identical(back[[1L]], x)) return(x)
  }
  abort_sdc(c(
    "{.arg data_name} must be a name or an expression the script can write.",
    "x" = "It is {.obj_type_friendly {x}}."
  ), "argument", arg = "data_name", call = call)
}

app_min_versions <- c(shiny = "1.7.0", bslib = "0.4.0")

# rlang::check_installed() (which offers to install the packages in an
# interactive session), with the package's class and a Debian hint.
app_check_packages <- function(pkgs = c("shiny", "bslib"), call = rlang::caller_env()) {
  missing <- tryCatch({
    rlang::check_installed(pkgs, version = unname(app_min_versions[pkgs]), reason = "for the app.", call = call)
    character(0)
  }, rlib_error_package_not_found = function(e) e$pkg %||% pkgs)
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
      shiny::selectInput("method", "Method", c("tiered (any \u03be, small blocks)" = "tiered", "Nayak et al. (\u03be > 1/3)" = "nayak",
                                               "least damage (optimal)" = "optimal")),
      shiny::conditionalPanel("input.method == 'optimal'",
        shiny::selectInput("damage", "Damage to make least", app_damage_choices),
        shiny::conditionalPanel("input.damage == 'distance'", shiny::uiOutput("ordered_ui")),
        shiny::conditionalPanel("input.damage == 'keys' || input.damage == 'distance'", shiny::uiOutput("weights_ui"))
      ),
      shiny::conditionalPanel("input.method != 'optimal'",
        shiny::selectInput("calibrate", "Calibration", c("exact (fewer changes)" = "exact", "bound" = "bound"))),
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
      shiny::tags$tr(shiny::tags$td(shiny::downloadButton("dl_publication", "Publication for data users (JSON)")),
                     shiny::tags$td(shiny::textOutput("dl_publication_info"))),
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


# The classes below belong in the list of R/utils-errors.R; they are
# documented here until that file (not this branch's) takes them.
#' @name sdcRisk_errors
#' @section Classes of the app and the report:
#' * `sdcRisk_error_missing_package`: a suggested package that [run_app()]
#'   or [release_report()] needs (shiny, bslib, rmarkdown, knitr) is not
#'   installed, or pandoc is missing; the message says how to install it.
#'   Field `package`: the missing packages (for [run_app()]).
#' * `sdcRisk_error_allow_rds`: [run_app()] was asked to read `.rds`
#'   uploads (`allow_rds = TRUE`) while serving other computers.
NULL
