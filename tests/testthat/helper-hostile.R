# Hostile input for the app's tests (test-app-hostile.R, test-app.R,
# test-app-calls.R): strings that would run R code if the app ever built
# code from text, and the sentinel file that code would create.

# What every payload runs: it creates the file named by the environment
# variable SDCRISK_SENTINEL (set in the test and in every process it
# starts), so no payload needs a path (a file name cannot hold a slash).
sentinel_code <- "file.create(Sys.getenv(\"SDCRISK_SENTINEL\"))"

# A sentinel path of its own for a test, in the environment variable.
local_sentinel <- function(env = parent.frame()) {
  dir <- withr::local_tempdir(.local_envir = env)
  path <- file.path(dir, "PAYLOAD-RAN")
  withr::local_envvar(SDCRISK_SENTINEL = path, .local_envir = env)
  path
}

# Printable payloads, each breaking out of one way of writing code as text;
# all are legal column and file names.
hostile_names <- function() {
  p <- sentinel_code
  c(
    backtick = paste0("sex` = if (", p, ") `a"),     # a name in backticks (issue 36, 1 and 2)
    quote = paste0("a\" = ", p, ", \"b"),             # a list name deparse() leaves as is (3)
    string = paste0("x\"); ", p, "; (\""),
    single = paste0("x'); ", gsub("\"", "'", p), "; ('"),
    glue = paste0("{", p, "}"),                        # cli and glue interpolate braces
    knitr = paste0("`r ", p, "`"),                     # inline code of R Markdown
    backslash = paste0("\\\\\"); ", p, " #"),
    html = "<img src=x onerror=\"window.sdcPwned = 1\">",
    unicode = "\u00e9t\u00e9 \u6f22\u5b57 \U0001f600",
    dots = "..."
  )
}

# Payloads with control or invisible characters: refused as names.
hostile_invisible <- function() {
  c(newline = paste0("x\n", sentinel_code, "\n"), bidi = paste0("a\u202e", sentinel_code, "\u2066b"),
    zero_width = "a\u200bb", escape = "a\u001b[31mb", bom = "\ufeffa", c1 = "a\u0085b")
}

# Values a browser can send as any input (Shiny.setInputValue()), besides
# the strings.
hostile_values <- function() {
  list(named_list = list(a = "sex"), list = list("sex"), named = c(a = "sex"), number = 1, flag = TRUE,
       two = c("sex", "age"), na = NA, empty = character(0), matrix = matrix("sex"), nested = list(list("sex")))
}

# A small table whose column names are the payloads: industries (the
# backtick) under sections (the single quote), three more keys, sales of
# firms.
hostile_data <- function() {
  set.seed(36)
  n <- 300
  nace <- sample(c("A1", "A2", "B1", "B2"), n, TRUE)
  d <- data.frame(backtick = nace, quote = sample(c("A", "B", "C"), n, TRUE), glue = sample(1:3, n, TRUE),
                  unicode = sample(c("x", "y"), n, TRUE), string = sample(c("x", "y", "z"), n, TRUE),
                  single = paste("section", substr(nace, 1, 1)), knitr = round(stats::rlnorm(n, 5, 1.5)),
                  backslash = seq_len(n), html = "note", dots = sample(1:2, n, TRUE))
  names(d) <- hostile_names()[names(d)]
  d
}

# A PRAM matrix that keeps a category with probability `keep`.
transition <- function(levels, keep) {
  k <- length(levels)
  m <- matrix((1 - keep) / (k - 1), k, k, dimnames = list(levels, levels))
  diag(m) <- keep
  m
}

# An input value as Shiny makes it for uploaded files: copies in a folder
# of their own under tempdir(), named 0.csv, 1.csv, ...
upload_value <- function(paths, names = basename(paths)) {
  dir <- file.path(tempdir(), paste0(basename(tempfile("")), "0123abcd"))
  dir.create(dir)
  ext <- ifelse(grepl("\\.[[:alnum:]]+$", names), sub("^.*(\\.[[:alnum:]]+)$", "\\1", names), "")
  target <- file.path(dir, paste0(seq_along(paths) - 1L, ext))
  stopifnot(all(file.copy(paths, target)))
  data.frame(name = names, size = file.size(target), type = "text/csv", datapath = target, stringsAsFactors = FALSE)
}

# An .rds file that holds an unevaluated promise as its object
# (CVE-2024-27322): readRDS() returns the promise, and R runs its code when
# the object is first used. R 4.2's saveRDS() cannot write one, so an
# environment with a delayedAssign()ed binding is serialized (as text) and
# its promise cut out as the whole object: PROMSXP with a tag (1029), the
# global environment (253), no value yet (252), then the code; the last
# three items close the environment's frame, hash table and attributes.
write_promise_rds <- function(file) {
  e <- new.env(hash = FALSE, parent = emptyenv())
  delayedAssign("p", file.create(Sys.getenv("SDCRISK_SENTINEL")), eval.env = globalenv(), assign.env = e)
  lines <- strsplit(rawToChar(serialize(e, NULL, ascii = TRUE)), "\n", fixed = TRUE)[[1]]
  start <- match("1029", lines)
  n <- length(lines)
  stopifnot(identical(lines[start + 1:2], c("253", "252")), identical(lines[(n - 2):n], rep("254", 3)))
  con <- gzfile(file, "wb")
  writeLines(c(lines[1:6], lines[start:(n - 3)]), con)
  close(con)
  invisible(file)
}

# Runs the exported script in a new R process, in `dir`, with the sentinel
# variable set; `path` loads the package's sources when the tests use them.
run_script_sentinel <- function(script, dir, sentinel, path = "", before = NULL) {
  callr::r(function(script, dir, path, before) {
    if (nzchar(path)) pkgload::load_all(path, quiet = TRUE) else library(sdcRisk)
    setwd(dir)
    e <- new.env()
    if (!is.null(before)) list2env(readRDS(before), e)
    source(script, local = e)
    invisible()
  }, args = list(script = normalizePath(script), dir = normalizePath(dir), path = path, before = before),
  env = c(callr::rcmd_safe_env(), SDCRISK_SENTINEL = sentinel))
}

# Where the tests load sdcRisk from: the source tree under pkgload, or "".
sdcrisk_source_path <- function() {
  dev <- requireNamespace("pkgload", quietly = TRUE) && isTRUE(pkgload::is_dev_package("sdcRisk"))
  if (dev) pkgload::pkg_path(getNamespaceInfo("sdcRisk", "path")) else ""
}
