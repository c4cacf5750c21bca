# The app's steps as R calls. Every step is a call (a language object) that
# holds its values; the app evaluates that call, and writes it into the
# script with app_deparse(). No step is ever text that is parsed, so no
# string from the page (a column name, a file name, a choice) can become
# code, whatever it contains.
#
# Values enter calls through app_lang(), which writes them as the parser
# reads their code (c(), list(), -1), so the script parses back to the very
# calls the app evaluated: app_script_check() compares them, without
# evaluating anything. app_deparse() writes strings in ASCII with escapes
# (\n, \u{202e}), so no byte of the script depends on the locale and no
# control or bidi character can hide code in it (R 4.2's deparse() does not
# escape `"` in the names of a list, nor bidi characters).

# The call that gives back exactly `x` (NULL, logical, integer, double or
# character vectors and lists of them, with names and no other attribute).
app_lang <- function(x) {
  if (is.null(x)) return(NULL)
  if (is.object(x) || length(setdiff(names(attributes(x)), "names")) ||
      !(is.list(x) || typeof(x) %in% c("logical", "integer", "double", "character"))) {
    app_cannot_write(x)
  }
  nms <- names(x)
  if (is.list(x)) return(app_named_call("list", lapply(unname(x), app_lang), nms))
  if (length(x) == 1L && is.null(nms)) return(app_scalar(x))
  if (length(x) == 0L && is.null(nms)) return(call(typeof(x), 0))
  app_named_call("c", lapply(seq_along(x), function(i) app_scalar(x[[i]])), nms)
}

# One value: a constant, or `-` of one (the parser reads -1 as a call).
app_scalar <- function(x) {
  if (is.character(x)) {
    x <- enc2utf8(x)
    if (!is.na(x) && !validUTF8(x)) app_cannot_write(x)
    return(x)
  }
  if (is.na(x) || is.logical(x)) return(x)
  if (x < 0 || (x == 0 && 1 / x < 0)) return(call("-", -x))
  x
}

# f(...) with `names`: tags when every name can be one (ASCII, not empty,
# not an argument of c()), else structure(f(...), names = c(...)), which
# keeps any name (empty, NA, non-ASCII, control characters) exactly.
app_named_call <- function(f, args, nms = NULL) {
  cl <- as.call(c(list(as.name(f)), args))
  if (is.null(nms)) return(cl)
  tag_ok <- !is.na(nms) & (!nzchar(nms) | app_ascii_printable(nms))
  if (f == "c") tag_ok <- tag_ok & !nms %in% c("recursive", "use.names")
  if (all(tag_ok) && any(nzchar(nms))) {
    names(cl) <- c("", nms)
    return(cl)
  }
  call("structure", cl, names = app_lang(unname(nms)))
}

app_cannot_write <- function(x) {
  abort_sdc(c(
    "The app cannot write this value into its script.",
    "x" = "It is {.obj_type_friendly {x}}."
  ), "internal", call = NULL)
}

app_ascii_printable <- function(x) {
  x <- enc2utf8(x)
  validUTF8(x) & !grepl("[^\x20-\x7e]", x, perl = TRUE, useBytes = TRUE)
}

# The names R reads without backticks; the reserved words and `...`, `..1`
# are not among them.
app_syntactic <- function(x) {
  grepl("^((([A-Za-z]|[.][A-Za-z._])[A-Za-z0-9._]*)|[.])$", x, perl = TRUE) &
    !grepl("^[.][.]([.]|[0-9]+)$", x) &
    !x %in% c("if", "else", "repeat", "while", "function", "for", "in", "next", "break", "TRUE", "FALSE",
              "NULL", "Inf", "NaN", "NA", "NA_integer_", "NA_real_", "NA_character_", "NA_complex_")
}

# ---- writing calls ----------------------------------------------------------

# The code of a call the app built, on one line when it fits in 120
# characters, else one argument per line. Anything else (the expression
# given as `data` to run_app()) is written by deparse(); the whole script is
# parsed back and compared with the calls before it is offered.
app_deparse <- function(x, indent = 0L) {
  if (is.null(x)) return("NULL")
  if (is.symbol(x)) return(app_write_name(as.character(x)))
  if (is.call(x)) return(app_deparse_call(x, indent))
  if (is.atomic(x) && length(x) == 1L && is.null(attributes(x))) return(app_write_scalar(x))
  app_deparse_base(x)
}

app_deparse_base <- function(x) {
  paste(deparse(x, width.cutoff = 500L, backtick = TRUE,
                control = c("keepNA", "keepInteger", "niceNames", "showAttributes")), collapse = "\n")
}

app_deparse_call <- function(x, indent) {
  fun <- x[[1L]]
  args <- as.list(x)[-1L]
  tags <- names(args) %||% rep("", length(args))
  missing_arg <- vapply(args, function(a) identical(a, quote(expr = )), NA)
  if (any(missing_arg) || any(is.na(tags))) return(app_deparse_base(x))
  f <- if (is.symbol(fun)) as.character(fun) else ""
  simple <- function(a) is.symbol(a) || (is.atomic(a) && length(a) == 1L)
  if (all(!nzchar(tags))) {
    if (f == "<-" && length(args) == 2L && (is.symbol(args[[1L]]) || app_is_element(args[[1L]]))) {
      return(paste(app_deparse(args[[1L]]), "<-", app_deparse(args[[2L]], indent)))
    }
    if (app_is_element(x)) return(paste0(app_deparse(args[[1L]]), "[[", app_deparse(args[[2L]]), "]]"))
    if (f %in% c("::", "$") && length(args) == 2L && all(vapply(args, is.symbol, NA))) {
      return(paste0(app_write_name(as.character(args[[1L]])), f, app_write_name(as.character(args[[2L]]))))
    }
    if (f == "-" && length(args) == 1L && is.numeric(args[[1L]]) && length(args[[1L]]) == 1L) {
      return(paste0("-", app_deparse(args[[1L]])))
    }
    if (f %in% c("!=", "==") && length(args) == 2L && all(vapply(args, function(a) simple(a) || app_is_dollar(a), NA))) {
      return(paste(app_deparse(args[[1L]]), f, app_deparse(args[[2L]])))
    }
    if (f == "[" && length(args) == 2L && is.symbol(args[[1L]])) {
      return(paste0(app_deparse(args[[1L]]), "[", app_deparse(args[[2L]], indent), "]"))
    }
  }
  head <- if (is.symbol(fun) && app_syntactic(f)) f else if (app_is_namespaced(fun)) app_deparse(fun) else return(app_deparse_base(x))
  written <- vapply(seq_along(args), function(i) {
    value <- app_deparse(args[[i]], indent + 2L)
    if (nzchar(tags[i])) paste(app_write_name(tags[i]), "=", value) else value
  }, "")
  one <- paste0(head, "(", paste(written, collapse = ", "), ")")
  if (!grepl("\n", one, fixed = TRUE) && indent + nchar(one, "bytes") <= 120L) return(one)
  pad <- strrep(" ", indent + 2L)
  paste0(head, "(\n", pad, paste(written, collapse = paste0(",\n", pad)), "\n", strrep(" ", indent), ")")
}

app_is_namespaced <- function(x) {
  is.call(x) && identical(x[[1L]], as.name("::")) && length(x) == 3L && is.symbol(x[[2L]]) && is.symbol(x[[3L]])
}

# x[["name"]]
app_is_element <- function(x) {
  is.call(x) && identical(x[[1L]], as.name("[[")) && length(x) == 3L && is.symbol(x[[2L]]) &&
    is.character(x[[3L]]) && length(x[[3L]]) == 1L && is.null(names(x))
}

app_is_dollar <- function(x) {
  is.call(x) && identical(x[[1L]], as.name("$")) && length(x) == 3L && is.symbol(x[[2L]]) && is.symbol(x[[3L]])
}

# A name: bare when syntactic, else in backticks (only ASCII names come
# here: app_named_call() puts the others in structure(), as strings).
app_write_name <- function(x) {
  if (app_syntactic(x)) return(x)
  if (!nzchar(x) || !app_ascii_printable(x)) app_cannot_write(x)
  paste0("`", app_escape(x, "`"), "`")
}

app_write_scalar <- function(x) {
  if (is.character(x)) return(if (is.na(x)) "NA_character_" else paste0("\"", app_escape(x, "\""), "\""))
  if (is.logical(x)) return(if (is.na(x)) "NA" else if (x) "TRUE" else "FALSE")
  if (is.integer(x)) return(if (is.na(x)) "NA_integer_" else paste0(x, "L"))
  if (!is.double(x)) app_cannot_write(x)
  if (is.nan(x)) return("NaN")
  if (is.na(x)) return("NA_real_")
  if (is.infinite(x)) return(if (x > 0) "Inf" else "-Inf")
  # the shortest decimal that reads back as the same double, else its
  # exact hexadecimal form (C99, which R's parser reads)
  for (digits in 15:17) {
    s <- sprintf("%.*g", digits, x)
    if (identical(as.numeric(s), x)) return(s)
  }
  sprintf("%a", x)
}

# The inside of a string or backtick name: backslashes and the quote
# escaped, \n \r \t as such, every other character outside printable ASCII
# as \u{...} (the script is ASCII; invisible characters become visible).
app_escape <- function(x, quote) {
  x <- enc2utf8(x)
  if (!validUTF8(x)) app_cannot_write(x)
  cp <- utf8ToInt(x)
  out <- intToUtf8(cp, multiple = TRUE)
  special <- c("\\" = "\\\\", "\n" = "\\n", "\r" = "\\r", "\t" = "\\t")
  special[quote] <- paste0("\\", quote)
  hit <- out %in% names(special)
  out[hit] <- special[out[hit]]
  other <- !hit & (cp < 0x20 | cp > 0x7e)
  if (any(other) && quote == "`") app_cannot_write(x)
  out[other] <- ifelse(cp[other] <= 0xFFFF, sprintf("\\u{%04x}", cp[other]), sprintf("\\U{%08x}", cp[other]))
  paste(out, collapse = "")
}

# ---- the script ---------------------------------------------------------------

# The script's lines from its entries (calls, and comment lines that hold
# no text from the page), and whether it parses back to exactly those calls.
app_script_lines <- function(entries) {
  unlist(lapply(entries, function(e) {
    if (is.character(e)) e else strsplit(app_deparse(e), "\n", fixed = TRUE)[[1L]]
  }), use.names = FALSE)
}

app_script_check <- function(lines, entries) {
  calls <- Filter(Negate(is.character), entries)
  parsed <- tryCatch(parse(text = lines, keep.source = FALSE, encoding = "UTF-8"), error = function(e) NULL)
  !is.null(parsed) && length(parsed) == length(calls) &&
    all(vapply(seq_along(calls), function(i) identical(parsed[[i]], calls[[i]]), NA))
}
