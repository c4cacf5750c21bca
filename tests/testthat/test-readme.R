# The README's R code runs as written (issue 37: its database block did
# not). README.md is beside the tests in the source tree and, under R CMD
# check, in the unpacked sources (00_pkg_src) beside the check's tests.
readme_path <- function() {
  cand <- c(test_path("..", "..", "README.md"), test_path("..", "..", "00_pkg_src", "sdcRisk", "README.md"))
  hit <- cand[file.exists(cand)]
  if (!length(hit)) {
    if (strict_mode()) testthat::fail("README.md not found beside the tests nor in 00_pkg_src (SDCRISK_STRICT=true)")
    testthat::skip("README.md is not beside the tests")
  }
  hit[1]
}

# The ```r blocks of a markdown file, each a character vector of lines.
r_blocks <- function(lines) {
  starts <- which(lines == "```r")
  ends <- which(lines == "```")
  lapply(starts, function(s) lines[seq.int(s + 1L, min(ends[ends > s]) - 1L)])
}

test_that("every R block of the README runs as written, in order, in a fresh session's state", {
  skip_if_not_installed("sdcMicro")
  skip_if_not_installed("RSQLite")
  skip_if_not_installed("dbplyr")
  skip_if_not_installed("rmarkdown")
  lines <- readLines(readme_path(), warn = FALSE)
  blocks <- r_blocks(lines)
  expect_gte(length(blocks), 5)
  withr::local_dir(withr::local_tempdir())
  env <- new.env(parent = globalenv())
  # the app needs a browser; everything else runs as printed
  env$run_app <- function(...) invisible()
  for (i in seq_along(blocks)) {
    code <- paste(blocks[[i]], collapse = "\n")
    out <- tryCatch({
      utils::capture.output(suppressWarnings(suppressMessages(eval(parse(text = code), env))))
      NULL
    }, error = function(e) conditionMessage(e))
    expect_null(out, label = sprintf("README block %d (%s)", i, blocks[[i]][1]))
  }
  # what the blocks promise
  expect_s3_class(env$db_rel, "sdc_release_db")
  expect_lte(env$db_rel$certificate$risk, 0.2)
  expect_true(file.exists("review.html"))
  expect_false(file.exists("census.sqlite"))
})
