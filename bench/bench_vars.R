# Benchmark of the exact risk of per-variable PRAM (the PRAM of sdcMicro and
# mu-ARGUS), issue 10:
#   * pums_md (59,033 persons, 25,469 nonempty cells) with all five keys
#     perturbed per variable with sdcMicro-style invariant matrices
#     (pd = 0.8, alpha = 0.5; age 92 and PUMA 44 categories): the full
#     certificate, every nonempty cell and every a;
#   * the census-like bench data from 10^4 to 10^7 records with age, race and
#     marital status perturbed within the strata sex x area (a matrix per
#     variable and stratum, invariant for the stratum's frequencies).
# Run from the package root after installing the package:
#   Rscript bench/bench_vars.R            (writes bench/results-vars.md)
# SDCRISK_BENCH_OUT changes the output file. The machine is shared, so CPU
# seconds (user + system of this process) are reported beside wall seconds.
suppressPackageStartupMessages(library(sdcRisk))
sizes <- as.numeric(strsplit(Sys.getenv("SDCRISK_BENCH_SIZES", "1e4,1e5,1e6,1e7"), ",")[[1]])
reps <- as.integer(Sys.getenv("SDCRISK_BENCH_REPS", "3"))
source(file.path("bench", "utils.R"))
source(file.path("bench", "vars_utils.R"))

rows <- list()
add <- function(data, records, cells, strata, task, res, risk) {
  rows[[length(rows) + 1]] <<- data.frame(
    data = data, records = format(records, big.mark = ",", scientific = FALSE),
    cells = format(cells, big.mark = ",", scientific = FALSE), strata = strata, task = task,
    seconds = res[["seconds"]], cpu_seconds = res[["cpu"]], peak_mb = res[["mb"]], max_risk = formatC(risk, digits = 4, format = "f")
  )
}
median_measure <- function(f) {
  m <- t(vapply(seq_len(reps), function(r) {
    cpu0 <- proc.time()
    res <- measure(f)
    cpu <- proc.time() - cpu0
    c(res, cpu = cpu[["user.self"]] + cpu[["sys.self"]])
  }, numeric(3)))
  c(seconds = median(m[, 1]), mb = median(m[, 2]), cpu = median(m[, 3]))
}

# pums_md, all five keys perturbed
if (Sys.getenv("SDCRISK_BENCH_PUMS", "true") == "true") {
keys <- c("sex", "age", "race", "marital", "puma")
cf <- cell_frequencies(pums_md, keys)
lev <- lapply(cf$source$values, function(v) if (is.factor(v)) levels(v) else as.character(v))
names(lev) <- keys
plan <- pram_plan_vars(cf, vars_matrices(pums_md, keys, lev))
res <- median_measure(function() max_match_risk(plan, "all_matches"))
mx <- max_match_risk(plan, "all_matches")
add("pums_md", nrow(pums_md), nrow(cf$cells), "none", "certificate, all keys perturbed, every cell and a", res, mx$risk)
message("pums_md: ", round(res[["seconds"]], 2), " s, max risk ", mx$risk)
res <- median_measure(function() max_match_risk(plan, "all_matches", known = c("sex", "age", "puma")))
mk <- max_match_risk(plan, "all_matches", known = c("sex", "age", "puma"))
add("pums_md", nrow(pums_md), nrow(cf$cells), "none", "same, intruder knows sex, age, puma only", res, mk$risk)
}

# census-like data, age, race, marital perturbed within sex x area
for (n in sizes) {
  message("n = ", n)
  df <- make_census(n)
  keys <- c("sex", "age", "race", "marital", "area")
  vars <- c("age", "race", "marital")
  cf <- cell_frequencies(df, keys)
  st <- pram_strata(cf, c("sex", "area"))
  lev <- lapply(cf$source$values, function(v) if (is.factor(v)) levels(v) else as.character(v))
  names(lev) <- keys
  by_stratum <- split(df[vars], paste0("sex=", df$sex, ", area=", df$area))
  mats <- lapply(st$label, function(l) vars_matrices(by_stratum[[l]], vars, lev))
  names(mats) <- st$label
  t_plan <- system.time(plan <- pram_plan_vars(cf, mats, strata = c("sex", "area")))[["elapsed"]]
  message("  cells ", nrow(cf$cells), ", strata ", nrow(st), ", plan built in ", round(t_plan, 1), " s")
  res <- median_measure(function() max_match_risk(plan, "all_matches"))
  mx <- max_match_risk(plan, "all_matches")
  add("census-like", n, nrow(cf$cells), format(nrow(st), big.mark = ","),
      "certificate, age, race, marital within sex x area", res, mx$risk)
  message("  ", round(res[["seconds"]], 2), " s, max risk ", mx$risk)
  rm(plan, mats, by_stratum, df, cf)
  invisible(gc())
}

tab <- do.call(rbind, rows)
header <- c(
  machine_line(paste0("sdcRisk ", utils::packageVersion("sdcRisk"))),
  paste0("Median of ", reps, " repetitions. Peak MB is the rise of the resident set during the call."),
  ""
)
out <- Sys.getenv("SDCRISK_BENCH_OUT", file.path("bench", "results-vars.md"))
write_results(tab, header, out, digits = c(seconds = 3, cpu_seconds = 3, peak_mb = 0))
