# The numerical core is plain C++17 that compiles and runs without R: build
# each standalone test program in tests/cpp against the installed headers.
test_that("the C++ core includes no R header", {
  inc <- system.file("include", "sdcRisk", package = "sdcRisk")
  skip_if(!nzchar(inc), "headers not installed")
  src <- unlist(lapply(list.files(inc, full.names = TRUE), readLines))
  expect_false(any(grepl("Rcpp|R\\.h|Rinternals|Rmath", src)))
})

# Builds every program in tests/cpp with `flags` (preconditions on:
# SDCRISK_DEBUG) and runs it with `env`; a failed build or a nonzero exit
# status fails the test, with the program's output.
run_cpp_tests <- function(flags, env = character()) {
  cpp_dir <- normalizePath(file.path(testthat::test_path(), "..", "cpp"), mustWork = FALSE)
  skip_if(!dir.exists(cpp_dir), "tests/cpp not available")
  cxx <- Sys.which("g++")
  skip_if(!nzchar(cxx), "no C++ compiler")
  inc <- system.file("include", package = "sdcRisk")
  out_dir <- withr::local_tempdir()
  files <- list.files(cpp_dir, pattern = "\\.cpp$", full.names = TRUE)
  expect_true(length(files) >= 4)
  for (f in files) {
    exe <- file.path(out_dir, sub("\\.cpp$", "", basename(f)))
    build <- system2(cxx, c("-std=c++17", flags, "-DSDCRISK_DEBUG", "-I", shQuote(inc), shQuote(f), "-o", shQuote(exe)),
      stdout = TRUE, stderr = TRUE
    )
    expect_true(file.exists(exe), info = paste(c(basename(f), build), collapse = "\n"))
    res <- system2(exe, stdout = TRUE, stderr = TRUE, env = env)
    status <- attr(res, "status")
    expect_true(is.null(status) || status == 0, info = paste(c(basename(f), res), collapse = "\n"))
  }
}

test_that("the C++ core passes its standalone tests without R", {
  skip_on_cran()
  run_cpp_tests("-O1")
})

# The same programs under AddressSanitizer (with LeakSanitizer) and
# UndefinedBehaviorSanitizer; any report aborts the program. A canary with
# one defect of each kind proves first that the sanitizers report here.
sanitizer_flags <- c("-O1", "-g", "-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=all")
sanitizer_env <- c(
  "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=23",
  "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=23"
)

test_that("the sanitizers report a heap overflow, a leak and undefined behaviour", {
  skip_on_cran()
  cxx <- Sys.which("g++")
  skip_if(!nzchar(cxx), "no C++ compiler")
  dir <- withr::local_tempdir()
  src <- file.path(dir, "canary.cpp")
  writeLines(c(
    "#include <climits>",
    "#include <cstring>",
    "int main(int argc, char** argv) {",
    "  volatile int big = INT_MAX;",
    "  int* v = new int[argc + 3];",
    "  if (std::strcmp(argv[1], \"overflow\") == 0) v[argc + 3] = 1;",
    "  if (std::strcmp(argv[1], \"ub\") == 0) {",
    "    volatile int sum = big + argc;",
    "    v[0] = sum;",
    "  }",
    "  if (std::strcmp(argv[1], \"leak\") != 0) delete[] v;",
    "  v = nullptr;",
    "  return 0;",
    "}"
  ), src)
  exe <- file.path(dir, "canary")
  build <- system2(cxx, c(sanitizer_flags, shQuote(src), "-o", shQuote(exe)), stdout = TRUE, stderr = TRUE)
  # a machine without the sanitizer runtimes skips, except in CI
  if (!file.exists(exe) && !identical(Sys.getenv("CI"), "true")) {
    skip(paste(c("cannot build with sanitizers:", build), collapse = "\n"))
  }
  expect_true(file.exists(exe), info = paste(build, collapse = "\n"))
  run <- function(what) {
    out <- suppressWarnings(system2(exe, what, stdout = TRUE, stderr = TRUE, env = sanitizer_env))
    list(status = attr(out, "status") %||% 0L, out = paste(out, collapse = "\n"))
  }
  clean <- run("none")
  expect_equal(clean$status, 0L, info = clean$out)
  overflow <- run("overflow")
  expect_equal(overflow$status, 23L, info = overflow$out)
  expect_match(overflow$out, "heap-buffer-overflow")
  leak <- run("leak")
  expect_equal(leak$status, 23L, info = leak$out)
  expect_match(leak$out, "LeakSanitizer: detected memory leaks")
  ub <- run("ub")
  expect_equal(ub$status, 23L, info = ub$out)
  expect_match(ub$out, "signed integer overflow")
})

test_that("the C++ core passes its standalone tests under ASan and UBSan", {
  skip_on_cran()
  cxx <- Sys.which("g++")
  skip_if(!nzchar(cxx), "no C++ compiler")
  probe <- withr::local_tempfile(fileext = ".cpp")
  writeLines("int main() { return 0; }", probe)
  probe_exe <- sub("\\.cpp$", "", probe)
  build <- system2(cxx, c(sanitizer_flags, shQuote(probe), "-o", shQuote(probe_exe)), stdout = TRUE, stderr = TRUE)
  if (!file.exists(probe_exe) && !identical(Sys.getenv("CI"), "true")) {
    skip(paste(c("cannot build with sanitizers:", build), collapse = "\n"))
  }
  run_cpp_tests(sanitizer_flags, env = sanitizer_env)
})
