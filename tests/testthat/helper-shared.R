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

# Path to the project's shared real data (beside the checkout), or "" when it
# is absent: tests that need it skip then (fail in CI), so the package checks
# anywhere.
shared_path <- function(...) {
  roots <- c(
    Sys.getenv("SDCRISK_SHARED", ""),
    file.path(testthat::test_path(), "..", "..", "..", "shared"),
    file.path(testthat::test_path(), "..", "..", "..", "..", "shared")
  )
  for (r in roots[nzchar(roots)]) {
    p <- file.path(r, ...)
    if (file.exists(p)) return(normalizePath(p))
  }
  ""
}

skip_if_no_shared <- function(...) {
  p <- shared_path(...)
  if (!nzchar(p) && strict_mode()) {
    testthat::fail(paste0("shared data not available: ", file.path(...), " (SDCRISK_STRICT=true: required in CI)"))
  }
  testthat::skip_if(!nzchar(p), "shared data not available")
  p
}

# A data frame with one key `k` whose cells have the given counts, in order.
data_with_counts <- function(counts) {
  data.frame(k = rep(seq_along(counts), counts))
}
