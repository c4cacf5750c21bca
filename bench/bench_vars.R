# Benchmark of the exact risk of per-variable PRAM (the PRAM of sdcMicro and
# mu-ARGUS), issues 10 and 20, in one run:
#   * pums_md (59,033 persons, 25,469 nonempty cells) with all five keys
#     perturbed per variable with sdcMicro-style invariant matrices
#     (pd = 0.8, alpha = 0.5; age 92 and PUMA 44 categories): the full
#     certificate, every nonempty cell and every a, and for an intruder who
#     knows sex, age and PUMA only;
#   * the census-like bench data without strata: age, race, marital status and
#     area perturbed (one invariant matrix each, area with one category per
#     2,000 persons), sex kept, from 10^4 records to the 10^7-record file
#     (4.3 million nonempty cells); also an intruder who knows sex, age and
#     area, and one who knows age and race;
#   * the same data with age, race and marital status perturbed within the
#     strata sex x area (a matrix per variable and stratum).
# Beside each unstratified certificate, the quadratic engine it replaced
# (one pass over the cells per target; sdcRisk as of main 2f7cd46, installed
# in the library SDCRISK_BENCH_OLD_LIB), in a child process of the same run,
# while its predicted time (quadratic in the cells) stays below
# SDCRISK_BENCH_OLD_MAX seconds (default 300).
# Run from the package root after installing the package:
#   SDCRISK_BENCH_OLD_LIB=/path/to/old/library Rscript bench/bench_vars.R
# SDCRISK_BENCH_OUT changes the output file (default bench/results-vars.md).
# The machine is shared, so CPU seconds (user + system of this process) are
# reported beside wall seconds.
suppressPackageStartupMessages(library(sdcRisk))
num_env <- function(name, default) as.numeric(strsplit(Sys.getenv(name, default), ",")[[1]])
sizes <- num_env("SDCRISK_BENCH_SIZES", "1e4,5e4,1e5,2.5e5,1e6,2.4e6,1e7")
strat_sizes <- num_env("SDCRISK_BENCH_STRATA_SIZES", "1e4,1e5,1e6,1e7")
reps <- as.integer(Sys.getenv("SDCRISK_BENCH_REPS", "3"))
old_lib <- Sys.getenv("SDCRISK_BENCH_OLD_LIB")
old_max <- as.numeric(Sys.getenv("SDCRISK_BENCH_OLD_MAX", "300"))
source(file.path("bench", "utils.R"))
source(file.path("bench", "vars_utils.R"))

rows <- list()
add <- function(data, records, cells, strata, task, res, risk, evaluated, old = NULL) {
  rows[[length(rows) + 1]] <<- data.frame(
    data = data, records = format(records, big.mark = ",", scientific = FALSE),
    cells = format(cells, big.mark = ",", scientific = FALSE), strata = strata, task = task,
    seconds = res[["seconds"]], cpu_seconds = res[["cpu"]], peak_mb = res[["mb"]],
    max_risk = formatC(risk, digits = 6, format = "f"), evaluated = format(evaluated, big.mark = ","),
    quadratic_cpu_seconds = if (is.null(old)) NA_real_ else old[["cpu"]],
    ratio = if (is.null(old)) NA_real_ else res[["cpu"]] / old[["cpu"]]
  )
}
median_measure <- function(f, r = reps) {
  m <- t(vapply(seq_len(r), function(i) {
    cpu <- NULL
    res <- measure(function() {
      cpu0 <- proc.time()
      out <- f()
      cpu <<- proc.time() - cpu0
      out
    })
    c(res, cpu = cpu[["user.self"]] + cpu[["sys.self"]])
  }, numeric(3)))
  c(seconds = median(m[, 1]), mb = median(m[, 2]), cpu = median(m[, 3]))
}

# The quadratic engine on the same plan, in a child process with the old
# library: its CPU and wall seconds and its maximum (checked against ours).
old_engine <- function(plan, known = NULL) {
  if (!nzchar(old_lib)) return(NULL)
  callr::r(function(plan, known) {
    suppressPackageStartupMessages(library(sdcRisk))
    cpu0 <- proc.time()
    t <- system.time(mx <- max_match_risk(plan, "all_matches", known = known))[["elapsed"]]
    cpu <- proc.time() - cpu0
    c(seconds = t, cpu = cpu[["user.self"]] + cpu[["sys.self"]], risk = mx$risk)
  }, list(plan = plan, known = known), libpath = c(old_lib, .libPaths()))
}
# predicted seconds of the quadratic engine from its last measurement
old_last <- list()
old_wanted <- function(key, cells) {
  last <- old_last[[key]]
  nzchar(old_lib) && (is.null(last) || last[["cpu"]] * (cells / last[["cells"]])^2 <= old_max)
}
old_record <- function(key, cells, old) {
  if (!is.null(old)) old_last[[key]] <<- c(cpu = old[["cpu"]], cells = cells)
}
certify <- function(data, n, cells, strata, task, plan, known = NULL, key = task) {
  res <- median_measure(function() max_match_risk(plan, "all_matches", known = known), if (cells > 2e6) 1 else reps)
  mx <- max_match_risk(plan, "all_matches", known = known)
  old <- NULL
  if (old_wanted(key, cells)) {
    old <- old_engine(plan, known)
    old_record(key, cells, old)
    if (!is.null(old) && !isTRUE(all.equal(old[["risk"]], mx$risk, tolerance = 1e-9))) {
      stop("the quadratic engine disagrees: ", old[["risk"]], " against ", mx$risk)
    }
  }
  add(data, n, cells, strata, task, res, mx$risk, mx$targets_evaluated, old)
  message(sprintf("  %s: %.2f s (cpu %.2f), %d targets evaluated, max risk %.6f%s", task, res[["seconds"]],
                  res[["cpu"]], mx$targets_evaluated, mx$risk,
                  if (is.null(old)) "" else sprintf("; quadratic engine cpu %.2f s", old[["cpu"]])))
}

# pums_md, all five keys perturbed
if (Sys.getenv("SDCRISK_BENCH_PUMS", "true") == "true") {
  keys <- c("sex", "age", "race", "marital", "puma")
  cf <- cell_frequencies(pums_md, keys)
  lev <- lapply(cf$source$values, function(v) if (is.factor(v)) levels(v) else as.character(v))
  names(lev) <- keys
  plan <- pram_plan_vars(cf, vars_matrices(pums_md, keys, lev))
  message("pums_md: ", nrow(cf$cells), " cells")
  certify("pums_md", nrow(pums_md), nrow(cf$cells), "none", "certificate, all keys perturbed", plan)
  certify("pums_md", nrow(pums_md), nrow(cf$cells), "none", "same, intruder knows sex, age, puma only", plan,
          known = c("sex", "age", "puma"))
}

keys <- c("sex", "age", "race", "marital", "area")
levels_of <- function(cf) {
  lev <- lapply(cf$source$values, function(v) if (is.factor(v)) levels(v) else as.character(v))
  names(lev) <- keys
  lev
}

# census-like data without strata: age, race, marital, area perturbed, sex kept
for (n in sizes) {
  message("unstratified, n = ", n)
  df <- make_census(n)
  cf <- cell_frequencies(df, keys)
  t_plan <- system.time(plan <- pram_plan_vars(cf, vars_matrices(df, c("age", "race", "marital", "area"), levels_of(cf))))
  message("  cells ", nrow(cf$cells), ", plan built in ", round(t_plan[["elapsed"]], 1), " s")
  rm(df)
  nc <- nrow(cf$cells)
  certify("census-like", n, nc, "none", "certificate, age, race, marital, area perturbed", plan, key = "all")
  certify("census-like", n, nc, "none", "same, intruder knows sex, age, area", plan,
          known = c("sex", "age", "area"), key = "saa")
  certify("census-like", n, nc, "none", "same, intruder knows age, race", plan, known = c("age", "race"), key = "ar")
  rm(plan, cf)
  invisible(gc())
}

# census-like data, age, race, marital perturbed within sex x area
for (n in strat_sizes) {
  message("stratified, n = ", n)
  df <- make_census(n)
  vars <- c("age", "race", "marital")
  cf <- cell_frequencies(df, keys)
  st <- pram_strata(cf, c("sex", "area"))
  lev <- levels_of(cf)
  by_stratum <- split(df[vars], paste0("sex=", df$sex, ", area=", df$area))
  mats <- lapply(st$label, function(l) vars_matrices(by_stratum[[l]], vars, lev))
  names(mats) <- st$label
  t_plan <- system.time(plan <- pram_plan_vars(cf, mats, strata = c("sex", "area")))[["elapsed"]]
  message("  cells ", nrow(cf$cells), ", strata ", nrow(st), ", plan built in ", round(t_plan, 1), " s")
  rm(mats, by_stratum, df)
  nc <- nrow(cf$cells)
  ns <- format(nrow(st), big.mark = ",")
  certify("census-like", n, nc, ns, "certificate, age, race, marital within sex x area", plan, key = "strata")
  certify("census-like", n, nc, ns, "same, intruder knows age, race, marital (not the strata)", plan,
          known = c("age", "race", "marital"), key = "strata-arm")
  rm(plan, cf)
  invisible(gc())
}

tab <- do.call(rbind, rows)
header <- c(
  machine_line(paste0("sdcRisk ", utils::packageVersion("sdcRisk"))),
  paste0(
    "Median of ", reps, " repetitions (1 above 2 million cells). Peak MB is the rise of the resident set during ",
    "the call. `quadratic cpu seconds`: the engine this one replaced (one pass over the cells per target), in a ",
    "child process of the same run, where its predicted time was below ", old_max, " s; `ratio` = cpu seconds / ",
    "quadratic cpu seconds. `evaluated`: targets evaluated exactly."
  ),
  ""
)
out <- Sys.getenv("SDCRISK_BENCH_OUT", file.path("bench", "results-vars.md"))
write_results(tab, header, out, digits = c(seconds = 3, cpu_seconds = 3, peak_mb = 0, quadratic_cpu_seconds = 2, ratio = 4))
