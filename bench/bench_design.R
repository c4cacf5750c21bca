# The frontier of least damage (issue 35, item 4, and its Goals): exact
# maximum risk against the damage of a release, for three designs, on
# pums_md and the two ACS excerpts of the tests, under Goal 3
# ("all_matches", the default), at xi = 0.1, 0.2 and 0.3, seed 1:
#   - today's tiered design with exact calibration: ifpr(d, keys, xi);
#   - the least-damage design: ifpr(d, keys, xi, method = "optimal")
#     (damage = "keys", the default);
#   - sdcMicro::pram() of every key over a grid of pd (alpha = 0.5, its
#     default), certified exactly by pram_certify().
# The Goals are judged at xi = 0.1, 0.2, 0.3; the figure adds xi = 0.05 and
# 0.5. For each release: the exact maximum risk (its certificate), the expected
# key values and records changed (pram_damage()), the records actually
# changed, the optimal design's lower bound under Goal 3
# (certificate$design$lower) and the CPU seconds of the call (certificate
# included; for sdcMicro, pram() plus pram_certify()).
# The ACS excerpts are used as the Goals test of test-release-ifpr.R uses
# them: keys SEX, AGEP (single years), RAC1P, MSP, PUMA.
# Run from the package root after installing the package:
#   Rscript bench/bench_design.R    (writes bench/results-design.md and
#                                    bench/frontier.png)
# SDCRISK_BENCH_PD sets the grid of pd (comma-separated), SDCRISK_BENCH_REPS
# the runs of each ifpr() call timed (median; the release is the first),
# SDCRISK_BENCH_DESIGN_SIZES the sizes of the census generator of
# bench_core.R for the speed goal (comma-separated; 0 for none).

suppressPackageStartupMessages({
  library(sdcRisk)
  library(sdcMicro)
})
source(file.path("bench", "utils.R"))

xis <- c(0.1, 0.2, 0.3)
frontier_xis <- c(0.05, xis, 0.5)
env_numbers <- function(name, default) as.numeric(strsplit(Sys.getenv(name, default), ",")[[1]])
pds <- env_numbers("SDCRISK_BENCH_PD", "0.3,0.5,0.7,0.8,0.9,0.95,0.99")
reps <- as.integer(Sys.getenv("SDCRISK_BENCH_REPS", "3"))
sizes <- setdiff(env_numbers("SDCRISK_BENCH_DESIGN_SIZES", "1e6"), 0)
acs <- function(name) readRDS(file.path("tests", "testthat", "fixtures", "acs2019", paste0(name, ".rds")))
acs_keys <- c("SEX", "AGEP", "RAC1P", "MSP", "PUMA")
files <- list(
  pums_md = list(data = pums_md, keys = c("sex", "age", "race", "marital", "puma")),
  ma2019 = list(data = acs("ma2019"), keys = acs_keys),
  national2019 = list(data = acs("national2019"), keys = acs_keys)
)

# CPU seconds (user + system) and elapsed seconds of one evaluation, and
# its value
cpu <- function(expr) {
  invisible(gc())
  p <- proc.time()
  value <- force(expr)
  q <- proc.time() - p
  list(value = value, seconds = q[["user.self"]] + q[["sys.self"]], elapsed = q[["elapsed"]])
}
# the release of the first run (seed 1), with the median seconds of `reps`
# runs
timed_ifpr <- function(...) {
  runs <- lapply(seq_len(reps), function(i) {
    set.seed(1)
    cpu(ifpr(...))
  })
  list(value = runs[[1]]$value, seconds = stats::median(vapply(runs, `[[`, 0, "seconds")),
       elapsed = stats::median(vapply(runs, `[[`, 0, "elapsed")))
}
records_changed <- function(before, after, keys) {
  differs <- Reduce(`|`, lapply(keys, function(k) as.character(before[[k]]) != as.character(after[[k]])))
  sum(differs)
}
row_of <- function(file, method, parameter, risk, damage, changed, run, lower = NULL) {
  data.frame(
    file = file, method = method, parameter = parameter, max_risk = risk,
    expected_keys = damage$keys, expected_records = damage$records, records_changed = changed,
    keys_per_record = damage$keys / damage$records,
    lower_records = if (is.null(lower)) NA_real_ else lower[["records"]],
    lower_keys = if (is.null(lower)) NA_real_ else lower[["keys"]],
    cpu_seconds = run$seconds, elapsed_seconds = run$elapsed
  )
}

ifpr_rows <- function(name, d, keys) {
  rows <- list()
  for (xi in frontier_xis) {
    for (method in c("tiered", "optimal")) {
      message(name, ": ifpr ", method, " xi = ", xi)
      run <- timed_ifpr(d, keys, xi, method = method)
      rel <- run$value
      cert <- rel$certificate
      rows[[length(rows) + 1]] <- row_of(name, method, paste0("xi = ", xi), cert$risk, pram_damage(rel),
                                         cert$records_changed, run, cert$design$lower)
    }
  }
  rows
}

pram_rows <- function(name, d, keys) {
  # sdcMicro's PRAM takes factors; the keys as factors change no cell
  x <- d[keys]
  for (k in keys) x[[k]] <- factor(x[[k]])
  rows <- list()
  for (pd in pds) {
    message(name, ": sdcMicro::pram pd = ", pd)
    obj <- sdcMicro::createSdcObj(x, keyVars = keys)
    set.seed(1)
    run <- cpu(pram_certify(suppressWarnings(sdcMicro::pram(obj, variables = keys, pd = pd))))
    obj <- run$value
    after <- sdcMicro::extractManipData(obj)
    rows[[length(rows) + 1]] <- row_of(name, "sdcMicro::pram", paste0("pd = ", pd), obj@risk$pram$risk,
                                       pram_damage(obj), records_changed(x, after, keys), run)
  }
  rows
}

total <- cpu({
  rows <- list()
  for (name in names(files)) {
    f <- files[[name]]
    rows <- c(rows, ifpr_rows(name, f$data, f$keys), pram_rows(name, f$data, f$keys))
  }
  NULL
})
res <- do.call(rbind, rows)
res$n <- vapply(res$file, function(f) nrow(files[[f]]$data), numeric(1))
res$parameter_xi <- suppressWarnings(as.numeric(sub("^xi = ", "", res$parameter)))

# ---- the Goals: optimal against tiered, same file, xi, seed ----------------------------

at_goal_xi <- res$parameter %in% paste0("xi = ", xis)
tiered <- res[res$method == "tiered" & at_goal_xi, ]
optimal <- res[res$method == "optimal" & at_goal_xi, ]
goals <- data.frame(
  file = optimal$file, xi = sub("xi = ", "", optimal$parameter),
  keys_tiered = tiered$expected_keys, keys_optimal = optimal$expected_keys,
  keys_ratio = optimal$expected_keys / tiered$expected_keys,
  records_tiered = tiered$expected_records, records_optimal = optimal$expected_records,
  records_ratio = optimal$expected_records / tiered$expected_records,
  realised_records_ratio = optimal$records_changed / tiered$records_changed,
  optimal_over_lower_records = optimal$expected_records / optimal$lower_records,
  optimal_over_lower_keys = optimal$expected_keys / optimal$lower_keys,
  # no unbiased PRAM meeting xi changes fewer key values than the lower
  # bound: the best ratio to today's that any design can reach
  best_possible_keys_ratio = optimal$lower_keys / tiered$expected_keys,
  risk_tiered = tiered$max_risk, risk_optimal = optimal$max_risk
)
goals$keys_goal_met <- ifelse(goals$keys_ratio <= 0.45, "yes", "no")
goals$records_goal_met <- ifelse(goals$records_ratio <= 1, "yes", "no")
speed <- optimal[optimal$file == "pums_md", c("parameter", "cpu_seconds", "elapsed_seconds")]
speed$goal_met <- ifelse(speed$cpu_seconds <= 30, "yes", "no")

# ---- speed on the census generator of bench_core.R ---------------------------------------

census_rows <- lapply(sizes, function(n) {
  message("census ", n)
  df <- make_census(n)[c("sex", "age", "race", "marital", "area")]
  k <- names(df)
  one <- function(method) {
    set.seed(1)
    run <- cpu(ifpr(df, k, 0.3, method = method))
    c(run$seconds, run$elapsed, pram_damage(run$value)$keys, run$value$certificate$risk)
  }
  tiered <- one("tiered")
  optimal <- one("optimal")
  data.frame(records = n, cells = nrow(cell_frequencies(df, k)$cells), xi = 0.3,
             tiered_cpu_seconds = tiered[1], optimal_cpu_seconds = optimal[1], optimal_elapsed_seconds = optimal[2],
             keys_ratio = optimal[3] / tiered[3], risk_optimal = optimal[4],
             goal_seconds = if (n <= 1e6) 300 else 1800)
})

# ---- the frontier figure ------------------------------------------------------------------

png(file.path("bench", "frontier.png"), width = 1500, height = 560, res = 110)
op <- par(mfrow = c(1, 3), mar = c(4.2, 4.2, 2.2, 0.8))
styles <- list(tiered = c(pch = 19, col = "grey30"), optimal = c(pch = 17, col = "firebrick"),
               "sdcMicro::pram" = c(pch = 1, col = "steelblue"))
for (name in names(files)) {
  r <- res[res$file == name, ]
  plot(r$max_risk, r$expected_keys, type = "n", xlim = c(0, 1.05), ylim = c(0, max(r$expected_keys) * 1.08),
       xlab = "exact maximum risk (Goal 3)", ylab = "expected key values changed", yaxt = "n",
       main = sprintf("%s (%s records)", name, format(r$n[1], big.mark = ",")))
  at <- pretty(c(0, r$expected_keys))
  axis(2, at = at, labels = format(at, big.mark = ",", scientific = FALSE, trim = TRUE))
  # below this no unbiased PRAM meeting the risk can go (Goal 3)
  lb <- r[r$method == "optimal", ]
  lines(lb$parameter_xi, lb$lower_keys, col = "grey50", lty = 2, lwd = 1.5)
  for (m in names(styles)) {
    s <- r[r$method == m, ]
    s <- s[order(s$max_risk), ]
    lines(s$max_risk, s$expected_keys, col = styles[[m]][["col"]], lty = 3)
    points(s$max_risk, s$expected_keys, pch = as.numeric(styles[[m]][["pch"]]), col = styles[[m]][["col"]])
    text(s$max_risk, s$expected_keys, sub(".* = ", "", s$parameter), pos = if (m == "sdcMicro::pram") 2 else 4,
         cex = 0.75, col = styles[[m]][["col"]])
  }
  abline(v = xis, col = "grey85", lty = 2)
  if (name == names(files)[1]) {
    legend("topright", c("tiered (xi)", "optimal (xi)", "sdcMicro::pram() of every key (pd)",
                         "lower bound, any unbiased PRAM"),
           pch = c(19, 17, 1, NA), lty = c(NA, NA, NA, 2), col = c(vapply(styles, `[[`, "", "col"), "grey50"),
           bty = "n", cex = 0.85)
  }
}
par(op)
invisible(dev.off())

# ---- results ---------------------------------------------------------------------------------

fmt <- function(x, d) ifelse(is.na(x), "", formatC(x, format = "f", digits = d, big.mark = ","))
md_table <- function(df) {
  c(paste0("| ", paste(gsub("_", " ", names(df)), collapse = " | "), " |"),
    paste0("|", paste(ifelse(vapply(df, function(x) all(grepl("^[-0-9.,]*$", x)), logical(1)), "---:", "---"),
                      collapse = "|"), "|"),
    apply(df, 1, function(r) paste0("| ", paste(trimws(r), collapse = " | "), " |")))
}
all_tab <- data.frame(
  file = res$file, method = res$method, parameter = res$parameter, max_risk = fmt(res$max_risk, 6),
  expected_keys = fmt(res$expected_keys, 1), expected_records = fmt(res$expected_records, 1),
  records_changed = fmt(res$records_changed, 0), keys_per_record = fmt(res$keys_per_record, 2),
  lower_records = fmt(res$lower_records, 1), lower_keys = fmt(res$lower_keys, 1),
  cpu_seconds = fmt(res$cpu_seconds, 2), elapsed_seconds = fmt(res$elapsed_seconds, 2)
)
goal_tab <- data.frame(
  file = goals$file, xi = goals$xi, keys_tiered = fmt(goals$keys_tiered, 1), keys_optimal = fmt(goals$keys_optimal, 1),
  keys_ratio = fmt(goals$keys_ratio, 3), goal_0.45 = goals$keys_goal_met,
  records_tiered = fmt(goals$records_tiered, 1), records_optimal = fmt(goals$records_optimal, 1),
  records_ratio = fmt(goals$records_ratio, 3), never_more = goals$records_goal_met,
  realised_records_ratio = fmt(goals$realised_records_ratio, 3),
  optimal_over_lower_records = fmt(goals$optimal_over_lower_records, 3),
  optimal_over_lower_keys = fmt(goals$optimal_over_lower_keys, 3),
  best_possible_keys_ratio = fmt(goals$best_possible_keys_ratio, 3),
  risk_tiered = fmt(goals$risk_tiered, 6), risk_optimal = fmt(goals$risk_optimal, 6)
)
speed_tab <- data.frame(release = paste("pums_md, optimal,", speed$parameter),
                        cpu_seconds = fmt(speed$cpu_seconds, 2), elapsed_seconds = fmt(speed$elapsed_seconds, 2),
                        goal_30_s = speed$goal_met)
census <- do.call(rbind, census_rows)
census_tab <- if (!is.null(census)) {
  data.frame(records = fmt(census$records, 0), cells = fmt(census$cells, 0), xi = census$xi,
             tiered_cpu_seconds = fmt(census$tiered_cpu_seconds, 2),
             optimal_cpu_seconds = fmt(census$optimal_cpu_seconds, 2),
             optimal_elapsed_seconds = fmt(census$optimal_elapsed_seconds, 2),
             goal_seconds = fmt(census$goal_seconds, 0),
             goal_met = ifelse(census$optimal_cpu_seconds <= census$goal_seconds, "yes", "no"),
             keys_ratio = fmt(census$keys_ratio, 3), risk_optimal = fmt(census$risk_optimal, 6))
}
out <- c(
  "# Least damage (issue 35): the frontier",
  "",
  paste("Written by `bench/bench_design.R`.", machine_line(paste0(
    "sdcRisk ", packageVersion("sdcRisk"), ", sdcMicro ", packageVersion("sdcMicro")))),
  sprintf(paste("Goal 3 (all_matches), seed 1, exact calibration for the tiered design; the whole run took %.0f CPU",
                "seconds (%.0f s elapsed, run with `nice` beside other jobs on the 2 cores); each ifpr() timed as the median",
                "of %d runs, sdcMicro's pram() with pram_certify() once."), total$seconds, total$elapsed, reps),
  "",
  "## The Goals: optimal against tiered (ratios of expected damage, `pram_damage()`)",
  "",
  md_table(goal_tab),
  "",
  "## Speed on pums_md (goal: at most 30 s)",
  "",
  md_table(speed_tab),
  "",
  if (!is.null(census_tab)) c(
    "## Speed on the census generator of `bench_core.R` (keys sex, age, race, marital, area; one run each)",
    "",
    md_table(census_tab),
    ""
  ),
  "## Every release",
  "",
  "Expected key values and records changed are `pram_damage()`'s; records changed are those of the drawn release;",
  "the lower bound (Goal 3, `certificate$design$lower`) holds for any unbiased PRAM meeting xi.",
  "sdcMicro::pram() perturbs every key (alpha = 0.5), certified by `pram_certify()`.",
  "",
  md_table(all_tab),
  "",
  "![frontier](frontier.png)"
)
writeLines(out, file.path("bench", "results-design.md"))
cat(out, sep = "\n")
