# Helpers of the tests of estimate_table() and estimate_glm(): brute-force
# expectations over every release of a tiny file.

# The publication of another release of the same plan: only the released
# margins differ.
with_margins <- function(pub, data) {
  for (k in seq_along(pub$keys)) {
    key <- pub$keys[[k]]
    code <- match(as.character(data[[key$name]]), key$categories)
    pub$records$margins[[k]] <- list(counts = as.numeric(tabulate(code, length(key$categories))),
                                     other = as.numeric(sum(is.na(code))))
  }
  pub
}

# The exact expectation of the estimates and of their variance estimates,
# and the exact variance of the estimates, over every release.
exact_moments <- function(releases, pub, ...) {
  # a negative variance estimate (a warning) is expected in some releases
  quiet <- function(expr) {
    withCallingHandlers(expr, sdcRisk_warning_variance_negative = function(w) invokeRestart("muffleWarning"))
  }
  est <- lapply(releases, function(r) quiet(estimate_table(r$data, with_margins(pub, r$data), ...)))
  prob <- vapply(releases, `[[`, 0, "prob")
  e <- sapply(est, `[[`, "estimate")
  # the unbiased variance estimates, before negative ones are shown as 0
  v <- sapply(est, attr, "variance")
  mean_est <- drop(e %*% prob)
  list(
    table = est[[1]], mean = mean_est, var = drop(((e - mean_est)^2) %*% prob), mean_var = drop(v %*% prob),
    total_prob = sum(prob)
  )
}

# The statistic of the original file, by the rows of `est`.
original_stat <- function(df, est, by, fun) {
  key <- function(d) do.call(paste, c(lapply(d[by], as.character), sep = "|"))
  split_rows <- split(df, factor(key(df), levels = unique(key(est))))
  vapply(split_rows, fun, 0)[key(est)]
}

