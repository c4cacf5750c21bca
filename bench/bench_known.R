# Benchmark of the exact maximum risk for intruders who know some keys
# (max_match_risk_known() with one subset), beside data.table's
# dt[, .N, by = keys] in the same run: CPU seconds (user + system).
#   pums_md (all 59,033 records), released with ifpr(xi = 0.3), every key
#   alone and two pairs; the census of bench_core.R at 10^6 records with its
#   plan (IFPR blocks of about 1000 singleton and doubleton cells within
#   each sex, theta = 0.8), one and two known keys.
# Run from the package root; SDCRISK_BENCH_LIB: the library to load sdcRisk
# from (default: the installed one); SDCRISK_BENCH_SIZES (default 1e6);
# SDCRISK_BENCH_LIMIT: CPU seconds after which a call is stopped (default 300).
lib <- Sys.getenv("SDCRISK_BENCH_LIB", "")
suppressPackageStartupMessages({
  if (nzchar(lib)) library(sdcRisk, lib.loc = lib) else library(sdcRisk)
  library(data.table)
})
setDTthreads(1L)
source(file.path("bench", "utils.R"))
limit <- as.numeric(Sys.getenv("SDCRISK_BENCH_LIMIT", "300"))
sizes <- as.numeric(strsplit(Sys.getenv("SDCRISK_BENCH_SIZES", "1e6"), ",")[[1]])
cpu <- function(expr) {
  t0 <- proc.time()
  force(expr)
  t <- proc.time() - t0
  t[["user.self"]] + t[["sys.self"]]
}
row <- function(data, known, secs, mx = NULL) {
  cat(sprintf("%-22s %-26s %8.2f  %s\n", data, known, secs,
              if (is.null(mx)) "" else sprintf("R = %.6g (cell %d, a = %d)", mx$risk, mx$cell, mx$a)))
}
run <- function(data, plan, df, keys, subsets) {
  dt <- as.data.table(df)
  row(data, "data.table .N by keys", cpu(dt[, .N, by = keys]))
  for (s in subsets) {
    mx <- NULL
    t0 <- proc.time()
    secs <- tryCatch({
      setTimeLimit(cpu = limit, transient = TRUE)
      cpu(mx <- max_match_risk_known(plan, subsets = list(s)))
    }, error = function(e) NA_real_, interrupt = function(e) NA_real_, finally = setTimeLimit())
    if (is.na(secs)) {
      t <- proc.time() - t0
      cat(sprintf("%-22s %-26s  > %.0f (stopped)\n", data, paste(s, collapse = "+"), t[["user.self"]] + t[["sys.self"]]))
    } else {
      row(data, paste(s, collapse = "+"), secs, mx)
    }
  }
}
keys <- c("sex", "age", "race", "marital", "puma")
set.seed(2)
r <- ifpr(pums_md, keys = keys, xi = 0.3)
run("pums_md 59,033", r$plan, pums_md, keys,
    list("sex", "age", "race", "marital", "puma", c("sex", "marital"), c("race", "puma")))
keys <- c("sex", "age", "race", "marital", "area")
for (n in sizes) {
  df <- make_census(n)
  cf <- cell_frequencies(df, keys)
  risky <- which(cf$cells$count <= 2)
  grp <- paste(cf$cells$sex[risky], ceiling(seq_along(risky) / 1000))
  plan <- pram_plan(cf, unname(split(risky, grp)), theta = 0.8)
  run(paste("census", format(n, big.mark = ",", scientific = FALSE)), plan, df, keys,
      list("sex", "race", "marital", c("sex", "race"), c("race", "marital")))
}
