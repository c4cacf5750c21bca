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


# "Run on <date>: <cpu>, <cores>, <memory>; <R>; <versions>."
machine_line <- function(versions) {
  cpu <- sub(".*: ", "", grep("model name", readLines("/proc/cpuinfo"), value = TRUE)[1])
  mem <- as.numeric(gsub("[^0-9]", "", grep("MemTotal", readLines("/proc/meminfo"), value = TRUE))) / 2^20
  sprintf("Run on %s: %s, %d cores, %.0f GiB; %s; %s.", format(Sys.Date()), cpu,
          parallel::detectCores(), mem, R.version.string, versions)
}

# Write the results table (a data frame of character-ready columns) as
# markdown under the header lines, to `file` and to the console.
write_results <- function(tab, header, file, digits = c(seconds = 3, peak_mb = 0, ratio = 2)) {
  fmt <- function(x, d) ifelse(is.na(x), "", formatC(x, format = "f", digits = d))
  for (col in names(digits)) tab[[col]] <- fmt(tab[[col]], digits[[col]])
  md <- c(
    paste0("| ", paste(gsub("_", " ", names(tab)), collapse = " | "), " |"),
    paste0("|", paste(ifelse(vapply(tab, is.numeric, logical(1)) | names(tab) %in% c("records", names(digits)), "---:", "---"), collapse = "|"), "|"),
    do.call(sprintf, c(list(paste0("| ", paste(rep("%s", ncol(tab)), collapse = " | "), " |")), unname(as.list(tab))))
  )
  writeLines(c(header, md), file)
  cat(c(header, md), sep = "\n")
}

# The 2019 ACS excerpt of the real tables R1-R4 (bench_suppress.R,
# bench_suppress_small.R): persons with income of eight PUMAs, the
# classifications grouped (marital status, `msp`, for the tables S1-S9 of
# bench_suppress_small.R).
make_acs <- function(pumas = 8) {
  f <- file.path("..", "shared", "data", "acs2019", "national2019.csv")
  if (!file.exists(f)) f <- file.path(Sys.getenv("SDCRISK_SHARED", "/work/shared"), "data", "acs2019", "national2019.csv")
  d <- utils::read.csv(f, na.strings = "N")
  d <- d[!is.na(d$PINCP) & d$PINCP > 0, ]
  d <- d[d$PUMA %in% unique(d$PUMA)[seq_len(pumas)], ]
  data.frame(sex = paste0("s", d$SEX),
             age = as.character(cut(d$AGEP, c(0, 30, 45, 60, 200), labels = c("a15", "a30", "a45", "a60"))),
             race = paste0("r", pmin(d$RAC1P, 4)), edu = paste0("e", pmin(d$EDU, 8) %/% 3),
             puma = as.character(d$PUMA), msp = paste0("m", ifelse(is.na(d$MSP), 0, d$MSP)), v = d$PINCP)
}

# The rule of a small ACS table for both tools, kept in step: the p% rule
# (p = 10), or with `dominance` the (1, 80) rule (GaussSuppression's n = 1,
# k = 80). acs_sensitivity() gives sdcRisk's cell_sensitivity(),
# gauss_interval() GaussSuppression's interval mode (lpSolve) on the same
# records, its printing captured.
acs_sensitivity <- function(d, dv, dominance = FALSE) {
  sdcRisk::cell_sensitivity(d, dv, "v", if (dominance) sdcRisk::rule_nk(1, 80) else sdcRisk::rule_p(10))
}

gauss_interval <- function(d, dv, dominance = FALSE) {
  rule_args <- if (dominance) list(n = 1, k = 80) else list(pPercent = 10)
  utils::capture.output(r <- do.call(GaussSuppression::SuppressDominantCells,
                                     c(list(d, numVar = "v", dimVar = dv), rule_args,
                                       list(printInc = FALSE, protectionIntervals = TRUE, lpPackage = "lpSolve"))))
  r
}

# The sweep's tables (bench_suppress_sweep.R, bench_suppress_sweep_value.R):
# `n` tables of 100 to 1,000 cells with at least one sensitive cell, drawn
# with `seed` from the ACS records `base` (make_acs(30)): 2 to 4 of the
# classifications, a number of PUMAs, the p% rule or (one in three) the
# (1, 80) rule. Returns a list of list(dv, np, nk, d, sens), `nk` TRUE for
# the dominance rule, `d` the records, `sens` their cell_sensitivity().
sweep_tables <- function(base, seed, n = 40, max_tries = 2000L) {
  vars <- c("sex", "age", "race", "edu", "msp", "puma")
  set.seed(seed)
  out <- list()
  tries <- 0L
  while (length(out) < n && tries < max_tries) {
    tries <- tries + 1L
    dv <- sample(vars, sample(2:4, 1))
    np <- if ("puma" %in% dv) sample(c(4, 6, 8, 10, 12, 16, 20, 25), 1) else sample(c(8, 20, 30), 1)
    nk <- sample(c(FALSE, FALSE, TRUE), 1)
    d <- base[base$puma %in% unique(base$puma)[seq_len(np)], ]
    sens <- acs_sensitivity(d, dv, nk)
    if (nrow(sens) < 100 || nrow(sens) > 1000 || !any(sens$sensitive)) next
    out[[length(out) + 1L]] <- list(dv = dv, np = np, nk = nk, d = d, sens = sens)
  }
  out
}

# The bench-only packages of the comparisons with GaussSuppression
# (bench_suppress_small.R and the sweep scripts; never dependencies of
# sdcRisk), installed when missing into `lib` (SDCRISK_BENCH_LIB) when set,
# else into the first library; with `attach`, sdcRisk and GaussSuppression
# then attached.
gauss_bench_setup <- function(lib = "", attach = TRUE) {
  need <- c("GaussSuppression", "lpSolve")
  miss <- need[!vapply(need, requireNamespace, logical(1), quietly = TRUE)]
  if (length(miss)) utils::install.packages(miss, lib = if (nzchar(lib)) lib else .libPaths()[1], Ncpus = 1L)
  if (attach) {
    suppressPackageStartupMessages({
      library(sdcRisk)
      library(GaussSuppression)
    })
  }
  invisible(miss)
}
