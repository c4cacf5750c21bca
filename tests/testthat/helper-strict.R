# In CI (.ci/run sets SDCRISK_STRICT=true) a test never skips because
# something it needs is missing: it fails and says what is missing, so that
# a dependency that could not be installed cannot hide behind a skip.
strict_mode <- function() identical(Sys.getenv("SDCRISK_STRICT"), "true")

# Shadows testthat::skip_if_not_installed() in the test files.
skip_if_not_installed <- function(pkg, minimum_version = NULL) {
  ok <- requireNamespace(pkg, quietly = TRUE)
  if (ok && !is.null(minimum_version)) ok <- utils::packageVersion(pkg) >= minimum_version
  msg <- paste0(pkg, if (!is.null(minimum_version)) paste0(" (>= ", minimum_version, ")"), " is not installed")
  if (!ok && strict_mode()) testthat::fail(paste0(msg, " (SDCRISK_STRICT=true: required in CI)"))
  testthat::skip_if_not(ok, msg)
  invisible(TRUE)
}

# The real ACS excerpts the tests use (key columns only), shipped in
# tests/testthat/fixtures/acs2019 (see the README there): "ma2019" or
# "national2019"; with `values = TRUE` also the non-key variables PINCP,
# EDU and PWGTP of the same records (`<name>_values.rds`).
load_acs <- function(name, values = FALSE) {
  keys <- readRDS(testthat::test_path("fixtures", "acs2019", paste0(name, ".rds")))
  if (!values) return(keys)
  cbind(keys, readRDS(testthat::test_path("fixtures", "acs2019", paste0(name, "_values.rds"))))
}

# sdcMicro's testdata, from sdcMicro itself (a test dependency).
sdcmicro_testdata <- function() {
  skip_if_not_installed("sdcMicro")
  env <- new.env()
  utils::data("testdata", package = "sdcMicro", envir = env)
  env$testdata
}

# A data frame with one key `k` whose cells have the given counts, in order.
data_with_counts <- function(counts) {
  data.frame(k = rep(seq_along(counts), counts))
}
