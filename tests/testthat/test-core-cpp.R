# The numerical core is plain C++17 that compiles and runs without R: build
# each standalone test program in tests/cpp against the installed headers.
test_that("the C++ core includes no R header", {
  inc <- system.file("include", "sdcRisk", package = "sdcRisk")
  skip_if(!nzchar(inc), "headers not installed")
  src <- unlist(lapply(list.files(inc, full.names = TRUE), readLines))
  expect_false(any(grepl("Rcpp|R\\.h|Rinternals|Rmath", src)))
})

test_that("the C++ core passes its standalone tests without R", {
  skip_on_cran()
  cpp_dir <- normalizePath(file.path(testthat::test_path(), "..", "cpp"), mustWork = FALSE)
  skip_if(!dir.exists(cpp_dir), "tests/cpp not available")
  cxx <- Sys.which("g++")
  skip_if(!nzchar(cxx), "no C++ compiler")
  inc <- system.file("include", package = "sdcRisk")
  out_dir <- withr::local_tempdir()
  for (f in list.files(cpp_dir, pattern = "\\.cpp$", full.names = TRUE)) {
    exe <- file.path(out_dir, sub("\\.cpp$", "", basename(f)))
    build <- system2(cxx, c("-std=c++17", "-O1", "-I", shQuote(inc), shQuote(f), "-o", shQuote(exe)),
      stdout = TRUE, stderr = TRUE
    )
    expect_true(file.exists(exe), info = paste(c(basename(f), build), collapse = "\n"))
    res <- system2(exe, stdout = TRUE, stderr = TRUE)
    status <- attr(res, "status")
    expect_true(is.null(status) || status == 0, info = paste(c(basename(f), res), collapse = "\n"))
  }
})
