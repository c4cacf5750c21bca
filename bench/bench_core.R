# Benchmark of the microdata engine, in one run on the same synthetic data:
#   cell_frequencies() and pram_apply() at 1e5, 1e6 and 1e7 records with five
#   categorical keys, beside data.table's dt[, .N, by = keys], and the exact
#   certificate max_match_risk() over every cell of the tables.
# Run from the package root after installing the package:
#   Rscript bench/bench_core.R            (writes bench/results-core.md)
# Medians of several repetitions, the tools alternating; peak memory is the
# rise of the process's resident set size during a call (Linux VmHWM, reset
# before each call), so it counts C++ allocations as well as R's.
# data.table runs on one thread, as sdcRisk does; the ratios are of CPU
# seconds (user + system of the process), which the other work on a shared
# machine disturbs less than wall seconds (both are reported).

if (!requireNamespace("data.table", quietly = TRUE)) install.packages("data.table")
suppressPackageStartupMessages({
  library(sdcRisk)
  library(data.table)
})
setDTthreads(1L)

sizes <- as.numeric(strsplit(Sys.getenv("SDCRISK_BENCH_SIZES", "1e5,1e6,1e7"), ",")[[1]])
reps <- as.integer(Sys.getenv("SDCRISK_BENCH_REPS", "5"))
keys <- c("sex", "age", "race", "marital", "area")

source(file.path("bench", "utils.R"))

# seconds, peak MB and CPU seconds of one evaluation; medians over `reps`,
# the tools alternating
measure_cpu <- function(f) {
  cpu <- NULL
  res <- measure(function() {
    cpu0 <- proc.time() # the call alone, not measure()'s gc()
    out <- f()
    cpu <<- proc.time() - cpu0
    out
  })
  c(res, cpu = cpu[["user.self"]] + cpu[["sys.self"]])
}
compare <- function(fs) {
  out <- lapply(fs, function(f) matrix(NA_real_, reps, 3))
  for (r in seq_len(reps)) {
    for (k in seq_along(fs)) out[[k]][r, ] <- measure_cpu(fs[[k]])
  }
  t(vapply(out, function(m) c(seconds = median(m[, 1]), mb = median(m[, 2]), cpu = median(m[, 3])), numeric(3)))
}

rows <- list()
add <- function(n, task, tool, res, ref = NULL) {
  rows[[length(rows) + 1]] <<- data.frame(
    records = format(n, big.mark = ",", scientific = FALSE), task = task, tool = tool,
    seconds = res[["seconds"]], cpu_seconds = res[["cpu"]], peak_mb = res[["mb"]],
    ratio = if (is.null(ref)) NA_real_ else res[["cpu"]] / ref[["cpu"]]
  )
}

for (n in sizes) {
  message("n = ", n)
  df <- make_census(n)
  dt <- as.data.table(df)
  cf <- cell_frequencies(df, keys)
  message("  cells: ", nrow(cf$cells), ", singletons ", cf$n_singletons, ", doubletons ", cf$n_doubletons)

  res <- compare(list(
    ours = function() cell_frequencies(df, keys),
    dt = function() dt[, .N, by = keys]
  ))
  add(n, "cell frequencies", "data.table dt[, .N, by = keys]", res["dt", ])
  add(n, "cell frequencies", "sdcRisk cell_frequencies()", res["ours", ], res["dt", ])

  # an IFPR plan: singleton and doubleton cells within each sex, theta = 0.8,
  # blocks of about 1000 cells
  risky <- which(cf$cells$count <= 2)
  grp <- paste(cf$cells$sex[risky], ceiling(seq_along(risky) / 1000))
  plan <- pram_plan(cf, unname(split(risky, grp)), theta = 0.8)
  res <- compare(list(
    ours = function() pram_apply(df, keys, plan),
    dt = function() dt[, .N, by = keys]
  ))
  add(n, "perturbation", "data.table dt[, .N, by = keys]", res["dt", ])
  add(n, "perturbation", "sdcRisk pram_apply()", res["ours", ], res["dt", ])

  res <- compare(list(
    ours = function() max_match_risk(plan, "all_matches"),
    dt = function() dt[, .N, by = keys]
  ))
  add(n, "exact certificate, every cell and a", "data.table dt[, .N, by = keys]", res["dt", ])
  add(n, "exact certificate, every cell and a", "sdcRisk max_match_risk()", res["ours", ], res["dt", ])
  if (n >= 1e6) {
    # the whole release: cross-classification, tiered design with exact
    # calibration, certificate, draws and writing the keys back
    res <- compare(list(
      ours = function() ifpr(df, keys, 0.3, partition = list(sex = "keep")),
      dt = function() dt[, .N, by = keys]
    ))
    add(n, "whole release ifpr(xi = 0.3)", "data.table dt[, .N, by = keys]", res["dt", ])
    add(n, "whole release ifpr(xi = 0.3)", "sdcRisk ifpr()", res["ours", ], res["dt", ])
    rel <- ifpr(df, keys, 0.3, partition = list(sex = "keep"))
    res <- compare(list(
      ours = function() max_match_risk(rel$plan, "all_matches"),
      dt = function() dt[, .N, by = keys]
    ))
    add(n, "certificate of the ifpr() plan", "data.table dt[, .N, by = keys]", res["dt", ])
    add(n, "certificate of the ifpr() plan", "sdcRisk max_match_risk()", res["ours", ], res["dt", ])
    message("  ifpr blocks: ", length(rel$plan$theta))
    rm(rel)
  }
  rm(df, dt, cf, plan)
  invisible(gc())
}

tab <- do.call(rbind, rows)
header <- c(
  machine_line(sprintf("sdcRisk %s, data.table %s (%d threads)",
    packageVersion("sdcRisk"), packageVersion("data.table"), getDTthreads())),
  sprintf("Median of %d repetitions per tool, tools alternating; ratio = sdcRisk CPU seconds / data.table CPU seconds (one thread each) in the same run.", reps),
  ""
)
write_results(tab, header, file.path("bench", "results-core.md"),
              digits = c(seconds = 3, cpu_seconds = 3, peak_mb = 0, ratio = 2))
