# Printing: lines that fit 80 columns and numbers in fixed notation (issue
# 37: certificate lines of 190 characters scrolled the vignettes sideways
# and hid the cell; bounds printed as 1.164153e-10 and risks as
# 1.00000e+00; tables wrapped their last column into a second block).

# The width printed prose is wrapped to: that of the vignettes and of
# testthat's snapshots, so that print() gives the same lines everywhere.
PRINT_WIDTH <- 80L

# Each line wrapped at spaces to `width` columns, its continuation lines
# indented 4 more than its own leading spaces. The spaces around "=",
# "<=", ">=", "/" and "|" never break, so "sex = Male" and "T / F" stay on
# one line.
wrap_lines <- function(x, width = PRINT_WIDTH) {
  unlist(lapply(x, wrap_line, width = width), use.names = FALSE)
}

wrap_line <- function(line, width) {
  if (is.na(line) || nchar(line) <= width) return(line)
  lead <- nchar(line) - nchar(sub("^ +", "", line))
  glued <- gsub(" (=|<=|>=|/|\\|) ", "\001\\1\001", substring(line, lead + 1))
  words <- strsplit(glued, " ", fixed = TRUE)[[1]]
  out <- character()
  cur <- ""
  indent <- strrep(" ", lead)
  for (w in words) {
    if (nzchar(cur) && nchar(indent) + nchar(cur) + 1 + nchar(w) > width) {
      out <- c(out, paste0(indent, cur))
      indent <- strrep(" ", lead + 4)
      cur <- w
    } else {
      cur <- if (nzchar(cur)) paste(cur, w) else w
    }
  }
  gsub("\001", " ", c(out, paste0(indent, cur)), fixed = TRUE)
}

# "name = value" pieces of a cell's keys, wrapped as one line under `indent`
# spaces, a piece never split.
key_lines <- function(keys, indent = 4L, width = PRINT_WIDTH) {
  pieces <- paste0(names(keys), " = ", vapply(keys, function(v) format(v), ""))
  # the spaces inside a piece ("marital = Never married") made unbreakable
  pieces <- gsub(" ", "\001", pieces, fixed = TRUE)
  out <- wrap_lines(paste0(strrep(" ", indent), paste(pieces, collapse = ", ")), width)
  gsub("\001", " ", out, fixed = TRUE)
}

# A column of numbers in fixed notation, never scientific: enough decimals
# for `digits` significant digits of its largest value (at most 4), none
# when every value is whole; values below 1e-9 of the largest (a linear
# program's rounding, 1.164153e-10 for 0) print as 0, unless `exact` (data,
# not a solver's results: a cell of 2 beside a total of 1.6e10 is 2).
fmt_column <- function(x, digits = 6L, big.mark = "", exact = FALSE) {
  big <- suppressWarnings(max(abs(x), na.rm = TRUE))
  if (!is.finite(big) || big == 0) return(ifelse(is.na(x), "NA", formatC(0, format = "d")))
  if (!exact) x[!is.na(x) & abs(x) < big * 1e-9] <- 0
  whole <- all(is.na(x) | abs(x - round(x)) < big * 1e-12)
  dec <- if (whole) 0L else min(4L, max(0L, digits - (floor(log10(big)) + 1L)))
  out <- formatC(x, format = "f", digits = dec, big.mark = big.mark)
  zero <- formatC(0, format = "f", digits = dec)
  out[out == paste0("-", zero)] <- zero
  out[is.na(x)] <- "NA"
  out
}

# Probabilities each to `digits` significant digits in fixed notation: 1,
# 0.3, 0.000407664 (never 1.00000e+00 beside a small one).
fmt_prob <- function(x, digits = 6L) {
  out <- formatC(signif(x, digits), digits = digits, format = "fg")
  out <- trimws(out)
  out[is.na(x)] <- "NA"
  out
}

# The lines of a data frame printed without row names in at most `width`
# columns: the columns of `optional` are left out, the last first, until it
# fits, rather than wrapped into a second block. Returns the lines and the
# names left out.
table_lines <- function(df, optional = character(), width = PRINT_WIDTH) {
  old <- options(width = 10000L)
  on.exit(options(old))
  dropped <- character()
  repeat {
    out <- utils::capture.output(print(df, row.names = FALSE, right = TRUE))
    left <- rev(intersect(optional, names(df)))
    if (max(nchar(out)) <= width || !length(left)) break
    dropped <- c(left[1], dropped)
    df[[left[1]]] <- NULL
  }
  list(lines = out, dropped = dropped)
}
