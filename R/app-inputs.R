# Every value the page sends is checked on the server before it is used: a
# browser can send anything as any input (Shiny.setInputValue(): a named
# list where a string was expected, a choice the page never offered, a
# column that does not exist, a forged upload). A value that fails is
# refused with a message for the page (app_reject(), caught by app_guard()),
# and the session goes on.

# A refusal: an error of its own class, whose message is shown as it is.
app_reject <- function(...) {
  stop(structure(class = c("sdcRisk_app_input", "error", "condition"),
                 list(message = paste0(...), call = NULL)))
}

# A value for a message: short, quoted, every invisible character escaped.
app_show <- function(x) {
  if (is.null(x)) return("nothing")
  if (!is.atomic(x) || !is.null(names(x)) || !is.null(dim(x))) {
    return(sprintf("%s%s", if (is.list(x)) "a list" else class(x)[1], if (!is.null(names(x))) " with names" else ""))
  }
  if (length(x) != 1L) return(sprintf("%d values", length(x)))
  if (is.character(x) && !is.na(x)) {
    x <- if (validUTF8(x)) enc2utf8(x) else iconv(x, "", "UTF-8", sub = "?")
    if (nchar(x) > 60L) x <- paste0(substr(x, 1L, 60L), "...")
    return(paste0("\"", app_escape(x, "\""), "\""))
  }
  format(x)
}

# Characters a name may not hold: control characters (C0, DEL, C1), and
# the invisible format characters of Unicode (bidi overrides and isolates,
# zero-width characters, the byte order mark, line and paragraph
# separators, tags), which can make text read differently from what it is.
app_bad_chars <- function(x) {
  x <- enc2utf8(as.character(x))
  bad <- !validUTF8(x)
  ok <- which(!bad & !is.na(x))
  bad[ok] <- vapply(x[ok], function(s) {
    cp <- utf8ToInt(s)
    any(cp < 0x20 | (cp >= 0x7f & cp <= 0x9f) | cp == 0xad | (cp >= 0x600 & cp <= 0x605) | cp == 0x61c |
          cp == 0x6dd | cp == 0x70f | cp == 0x180e | (cp >= 0x200b & cp <= 0x200f) |
          (cp >= 0x2028 & cp <= 0x202e) | (cp >= 0x2060 & cp <= 0x206f) | cp == 0xfeff |
          (cp >= 0xfff9 & cp <= 0xfffb) | (cp >= 0xe0000 & cp <= 0xe007f) | (cp %% 0x10000) >= 0xfffe)
  }, NA)
  bad
}

# A string the page sent: one string, no names, no invisible characters.
app_in_string <- function(x, what, empty = FALSE) {
  if (is.null(x) && empty) return("")
  if (!is.character(x) || length(x) != 1L || !is.null(attributes(x)) || is.na(x)) {
    app_reject(sprintf("%s must be one piece of text; the page sent %s.", what, app_show(x)))
  }
  if (app_bad_chars(x)) app_reject(sprintf("%s holds a control or invisible character: %s.", what, app_show(x)))
  if (!empty && !nzchar(x)) app_reject(sprintf("Choose %s.", what))
  x
}

# One of the choices the page offered.
app_in_choice <- function(x, choices, what) {
  if (!is.character(x) || length(x) != 1L || !is.null(attributes(x)) || is.na(x) || !x %in% choices) {
    app_reject(sprintf("%s must be one of the choices on the page; the page sent %s.", what, app_show(x)))
  }
  x
}

# Columns of the data among those the page offered: NULL is none.
app_in_columns <- function(x, cols, what, max = Inf) {
  if (is.null(x)) return(character(0))
  if (!is.character(x) || !is.null(attributes(x)) || anyNA(x)) {
    app_reject(sprintf("%s must be column names; the page sent %s.", what, app_show(x)))
  }
  unknown <- x[!x %in% cols | !nzchar(x)]
  if (length(unknown)) app_reject(sprintf("%s: %s is not a column the page offered.", what, app_show(unknown[1])))
  if (anyDuplicated(x)) app_reject(sprintf("%s names %s twice.", what, app_show(x[duplicated(x)][1])))
  if (length(x) > max) app_reject(sprintf("%s: choose at most %d.", what, max))
  x
}

# One column or "" (none), among those offered.
app_in_column <- function(x, cols, what, none = TRUE) {
  empty <- is.null(x) || identical(x, "") || identical(x, character(0))
  if (empty && none) return("")
  if (empty) app_reject(sprintf("Choose %s.", what))
  app_in_columns(x, cols, what, max = 1L)
}

# A number the page sent (numericInput: NULL or NA when the box is empty).
app_in_number <- function(x, what, whole = FALSE) {
  if (!is.numeric(x) || length(x) != 1L || !is.null(attributes(x)) || !is.finite(x)) {
    nothing <- is.null(x) || (is.atomic(x) && length(x) == 1L && is.null(attributes(x)) && is.na(x))
    app_reject(sprintf("%s must be a number; the page sent %s.", what, if (nothing) "nothing" else app_show(x)))
  }
  if (whole && (x != round(x) || abs(x) > .Machine$integer.max)) {
    app_reject(sprintf("%s must be a whole number between -2147483647 and 2147483647; the page sent %s.", what, app_show(x)))
  }
  if (whole) as.integer(x) else as.double(x)
}

# A file input: the data frame Shiny makes of an upload (name, size, type,
# datapath), with plain file names and the files where Shiny put them (a
# folder of its own under tempdir()), so that a forged value cannot make
# the app read another file of the server.
app_in_files <- function(f, what, multiple = FALSE) {
  if (is.null(f)) return(NULL)
  ok <- is.data.frame(f) && all(c("name", "datapath") %in% names(f)) && nrow(f) >= 1L &&
    is.character(f$name) && is.character(f$datapath) && (multiple || nrow(f) == 1L)
  if (!ok) app_reject(sprintf("%s: the page sent %s, not an upload.", what, app_show(f)))
  for (i in seq_len(nrow(f))) {
    name <- f$name[i]
    if (is.na(name) || !nzchar(name) || app_bad_chars(name) || grepl("[/\\\\]", name) || grepl("^~", name)) {
      app_reject(sprintf("The file name %s cannot be used: rename the file (no control or invisible characters, no slashes) and upload it again.", app_show(name)))
    }
    if (!app_is_upload(f$datapath[i])) app_reject(sprintf("%s: %s is not a file uploaded to this app.", what, app_show(name)))
  }
  data.frame(name = enc2utf8(f$name), datapath = f$datapath, size = file.size(f$datapath), stringsAsFactors = FALSE)
}

app_is_upload <- function(path) {
  if (is.na(path) || !file.exists(path) || dir.exists(path)) return(FALSE)
  dir <- dirname(normalizePath(path))
  identical(dirname(dir), normalizePath(tempdir())) && grepl("^[0-9a-f]{8,}$", basename(dir)) &&
    grepl("^[0-9]+([.][^/]*)?$", basename(path))
}

app_file_ext <- function(x) {
  m <- regexpr("\\.[[:alnum:]]+$", x)
  ifelse(m > 0, substring(x, m + 1L), "")
}

# Column names of an uploaded table: text without control or invisible
# characters (they are shown on the page and written into the script).
app_check_names <- function(d, name) {
  nms <- names(d)
  bad <- which(is.na(nms) | app_bad_chars(nms))
  if (!length(bad)) return(NULL)
  sprintf("%s has a column name with a control or invisible character (column %d: %s): rename the column and upload the file again.",
          name, bad[1], app_show(nms[bad[1]]))
}
