# Shared by the benchmark scripts: synthetic census-like microdata, and
# timing with peak memory. Source from the package root.

# Census-like microdata: age x area x race with many rare combinations.
make_census <- function(n, seed = 1) {
  set.seed(seed)
  n_area <- max(50L, as.integer(n / 2000))
  area_size <- rgamma(n_area, 2)
  age <- pmin(99L, as.integer(rgamma(n, 3, 0.08)))
  data.frame(
    sex = factor(sample(c("F", "M"), n, TRUE)),
    age = age,
    race = factor(sample(paste0("r", 1:9), n, TRUE, prob = c(60, 25, 0.3, 0.01, 0.1, 6, 0.05, 3, 5.5))),
    marital = factor(ifelse(age < 16, "never", sample(c("married", "widowed", "divorced", "separated", "never"), n, TRUE,
      prob = c(45, 6, 10, 2, 37)
    ))),
    area = factor(sample(sprintf("a%05d", seq_len(n_area)), n, TRUE, prob = area_size)),
    income = round(rlnorm(n, 10), 2)
  )
}

rss_kb <- function(field) {
  l <- grep(paste0("^", field, ":"), readLines("/proc/self/status"), value = TRUE)
  as.numeric(gsub("[^0-9]", "", l))
}

# seconds and peak extra memory (MB) of one evaluation
measure <- function(f) {
  invisible(gc(full = TRUE))
  base <- rss_kb("VmRSS")
  try(writeLines("5", "/proc/self/clear_refs"), silent = TRUE)
  t <- system.time(res <- f())[["elapsed"]]
  peak <- rss_kb("VmHWM")
  rm(res)
  c(seconds = t, mb = max(0, peak - base) / 1024)
}

# alternate the tools, `reps` times each; medians
compare <- function(fs) {
  out <- lapply(fs, function(f) matrix(NA_real_, reps, 2))
  for (r in seq_len(reps)) {
    for (k in seq_along(fs)) out[[k]][r, ] <- measure(fs[[k]])
  }
  t(vapply(out, function(m) c(seconds = median(m[, 1]), mb = median(m[, 2])), numeric(2)))
}

