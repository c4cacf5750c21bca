# Path to the project's shared real data (beside the checkout), or "" when it
# is absent: tests that need it skip then, so the package checks anywhere.
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
  testthat::skip_if(!nzchar(p), "shared data not available")
  p
}

# A data frame with one key `k` whose cells have the given counts, in order.
data_with_counts <- function(counts) {
  data.frame(k = rep(seq_along(counts), counts))
}
