# The data user's side (issue 33): estimate_table() and estimate_glm() on
# released files.
#   Rscript bench/bench_estimate.R
# Part "coverage": the Monte Carlo study over draws of the same plan
# (SDCRISK_BENCH_DRAWS draws of each, default 1000; SDCRISK_BENCH_STUDIES
# chooses among "ma2019", "national2019" and "pums_md", default all three:
# a draw takes about 0.8, 3.3 and 1.3 CPU seconds), on the ACS excerpts of the test fixtures
# (an IFPR release of the Massachusetts file, a stratified per-variable
# release of the national file) and pums_md (an IFPR release): for every
# row of every estimand, the original file's value, the mean estimate, the
# standard deviation over draws, the mean standard error, the coverage of
# the 95% interval and the share of draws in which the row was estimated
# by maximum likelihood (the default estimator; the run recorded in
# bench/results-estimate-coverage.md was made when the default was "auto",
# it is "moment" now, which is never "ml"). Writes
# bench/results-estimate-coverage.md.
# Part "speed": estimate_table() at SDCRISK_BENCH_SIZES (default 1e6,1e7)
# records of the synthetic census of bench/utils.R released by ifpr(),
# beside data.table's dt[, .N, by = keys] on one thread, CPU seconds of
# each call in the same run, medians of SDCRISK_BENCH_REPS (default 5)
# alternating repetitions, peak memory. Writes
# bench/results-estimate-speed.md.
# SDCRISK_BENCH_PART chooses "coverage", "speed" or "both" (default), or
# "report" (the coverage table of the draws kept by earlier runs).

# sdcRisk installed, or the source tree loaded with pkgload when it is not
if (requireNamespace("sdcRisk", quietly = TRUE)) {
  suppressPackageStartupMessages(library(sdcRisk))
} else {
  pkgload::load_all(".", quiet = TRUE)
}
suppressPackageStartupMessages(library(data.table))
setDTthreads(1L)
source(file.path("bench", "utils.R"))
# table_est(), glm_est(), mc_draws(), with_margins(): the machinery of the
# coverage test, with every row kept here (min_count = 0)
source(file.path("tests", "testthat", "helper-estimate.R"))

part <- Sys.getenv("SDCRISK_BENCH_PART", "both")
draws <- as.integer(Sys.getenv("SDCRISK_BENCH_DRAWS", "1000"))
studies <- strsplit(Sys.getenv("SDCRISK_BENCH_STUDIES", "ma2019,national2019,pums_md"), ",")[[1]]
sizes <- as.numeric(strsplit(Sys.getenv("SDCRISK_BENCH_SIZES", "1e6,1e7"), ",")[[1]])
reps <- as.integer(Sys.getenv("SDCRISK_BENCH_REPS", "5"))

fixture <- function(name) {
  dir <- file.path("tests", "testthat", "fixtures", "acs2019")
  cbind(readRDS(file.path(dir, paste0(name, ".rds"))), readRDS(file.path(dir, paste0(name, "_values.rds"))))
}

# ---- coverage ----------------------------------------------------------------

coverage_studies <- function() {
  ma <- fixture("ma2019")
  ma$BACH <- !is.na(ma$EDU) & ma$EDU >= 9
  keys_ma <- c("SEX", "AGEP", "RAC1P", "MSP", "PUMA")
  set.seed(1)
  rel_ma <- ifpr(ma, keys_ma, xi = 0.3, partition = list(SEX = "keep"))
  nat <- fixture("national2019")
  nat$BACH <- !is.na(nat$EDU) & nat$EDU >= 9
  keys_nat <- c("SEX", "RAC1P", "MSP")
  set.seed(3)
  rel_nat <- pram_release(nat, keys_nat, vars = c("RAC1P", "MSP"), strata = "SEX", pd = 0.85, alpha = 0.5)
  md <- pums_md
  md$degree <- md$education >= "Bachelor's degree"
  keys_md <- c("sex", "age", "race", "marital", "puma")
  set.seed(5)
  rel_md <- ifpr(md, keys_md, xi = 0.3, partition = list(sex = "keep"))
  wsum <- function(w) function(d) sum(d[[w]])
  tab <- function(name, family, by, ...) table_est(family, by, ..., min_count = 0, name = name)
  list(
    ma2019 = list(name = "ma2019, IFPR xi = 0.3 (sex kept)", data = ma, keys = keys_ma, release = rel_ma, seed = 11,
         draws = draws, estimands = list(
      tab("weighted count MSP x SEX", "key x key", c("MSP", "SEX"), weights = "PWGTP", truth_fun = wsum("PWGTP")),
      tab("weighted count RAC1P", "key x key", "RAC1P", weights = "PWGTP", truth_fun = wsum("PWGTP")),
      tab("mean PINCP by MSP", "key x non-key", "MSP", value = "PINCP", stat = "mean", na_rm = TRUE,
          truth_fun = function(d) mean(d$PINCP, na.rm = TRUE)),
      tab("share bachelor+ by MSP", "key x non-key", "MSP", value = "BACH", stat = "proportion",
          truth_fun = function(d) mean(d$BACH)),
      tab("count RAC1P x EDU", "key x non-key", c("RAC1P", "EDU"), truth_fun = nrow),
      glm_est(BACH ~ SEX + I(MSP == "1") + I(AGEP >= 65), binomial(), name = "logit bachelor+ ~ SEX + married + 65+")
    )),
    national2019 = list(name = "national2019, per-variable PRAM of RAC1P and MSP within SEX", data = nat, keys = keys_nat,
         release = rel_nat, seed = 12, draws = draws, estimands = list(
      tab("count RAC1P x MSP", "key x key", c("RAC1P", "MSP"), truth_fun = nrow),
      tab("weighted mean PINCP by RAC1P", "key x non-key", "RAC1P", value = "PINCP", stat = "mean",
          na_rm = TRUE, weights = "PWGTP", truth_fun = function(d) stats::weighted.mean(d$PINCP, d$PWGTP, na.rm = TRUE)),
      tab("share bachelor+ by MSP", "key x non-key", "MSP", value = "BACH", stat = "proportion",
          truth_fun = function(d) mean(d$BACH)),
      glm_est(BACH ~ I(RAC1P == 1) + I(MSP == "1") + SEX, binomial(), name = "logit bachelor+ ~ white + married + SEX")
    )),
    pums_md = list(name = "pums_md, IFPR xi = 0.3 (sex kept)", data = md, keys = keys_md, release = rel_md, seed = 13,
         draws = draws, estimands = list(
      tab("weighted count race x marital", "key x key", c("race", "marital"), weights = "weight",
          truth_fun = wsum("weight")),
      tab("share bachelor+ by marital", "key x non-key", "marital", value = "degree", stat = "proportion",
          truth_fun = function(d) mean(d$degree)),
      tab("mean weight by race", "key x non-key", "race", value = "weight", stat = "mean",
          truth_fun = function(d) mean(d$weight)),
      glm_est(degree ~ I(race == "White") + I(marital == "Married"), binomial(), name = "logit bachelor+ ~ white + married")
    ))
  )
}

# Each study's draws are also kept in bench/coverage-<study>.rds (not
# committed) as soon as they are done, so that a run cut short keeps them.
run_coverage <- function() {
  do.call(rbind, lapply(coverage_studies()[studies], function(s) {
    message(s$name)
    t0 <- proc.time()
    d <- mc_draws(s$data, s$keys, s$release$plan, publish_plan(s$release), s$estimands, s$draws, s$seed)
    message("  ", round((proc.time() - t0)[["elapsed"]]), " s")
    d$study <- s$name
    saveRDS(d, file.path("bench", paste0("coverage-", sub(",.*", "", s$name), ".rds")))
    d
  }))
}

# Pooled coverage of a study's family of estimands: the mean over draws of
# the share of its rows covered, with the Monte Carlo standard error of
# that mean (rows of one draw may be correlated); `min_records` keeps the
# rows of at least that many original records (models: every coefficient).
pooled <- function(d, min_records) {
  d <- d[!is.na(d$truth) & !is.na(d$covered) & (is.na(d$records) | d$records >= min_records), ]
  keys <- unique(d[c("study", "family")])
  do.call(rbind, lapply(seq_len(nrow(keys)), function(i) {
    x <- d[d$study == keys$study[i] & d$family == keys$family[i], ]
    per_draw <- tapply(x$covered, x$draw, mean)
    by_row <- tapply(x$covered, x$id, mean)
    data.frame(study = keys$study[i], family = keys$family[i], rows = length(by_row),
               coverage = 100 * mean(per_draw), mc_se = 100 * stats::sd(per_draw) / sqrt(length(per_draw)),
               lowest_row = 100 * min(by_row), rows_below_90 = sum(by_row < 0.9))
  }))
}

# One line per row of every estimand: original records, truth, mean
# estimate, Monte Carlo SD, mean SE, coverage, share of draws by maximum
# likelihood, bias in Monte Carlo standard errors of the mean.
by_row <- function(d) {
  do.call(rbind, lapply(split(d, paste(d$study, d$id)), function(x) {
    sd <- stats::sd(x$estimate, na.rm = TRUE)
    data.frame(study = x$study[1], estimand = x$estimand[1], row = x$row[1], records = x$records[1],
               truth = x$truth[1], mean = mean(x$estimate, na.rm = TRUE), mc_sd = sd,
               mean_se = mean(x$se, na.rm = TRUE), coverage = 100 * mean(x$covered, na.rm = TRUE),
               ml = 100 * mean(x$estimator == "ml"),
               bias_z = (mean(x$estimate, na.rm = TRUE) - x$truth[1]) / (sd / sqrt(sum(!is.na(x$estimate)))))
  }))
}

coverage_report <- function(d) {
  fmt <- function(tab) {
    num <- vapply(tab, is.numeric, logical(1))
    tab[num] <- lapply(tab[num], function(x) formatC(x, format = "f", digits = 2, big.mark = ","))
    c(paste0("| ", paste(names(tab), collapse = " | "), " |"), paste0("|", paste(rep("---", ncol(tab)), collapse = "|"), "|"),
      apply(tab, 1, function(r) paste0("| ", paste(r, collapse = " | "), " |")))
  }
  c(
    machine_line(paste0("sdcRisk ", utils::packageVersion("sdcRisk"))),
    sprintf("Draws: %s. 95%% intervals (lower, upper) of estimate_table() (the moment estimator, its default) and Wald intervals of estimate_glm() with the perturbation's standard error; the truth is the original file's value.",
            paste(tapply(d$draw, d$study, max), names(tapply(d$draw, d$study, max)), sep = " of ", collapse = ", ")),
    "", "Pooled coverage (%), every row:", "", fmt(pooled(d, 0)),
    "", "Pooled coverage (%), rows of at least 20 original records (and every model coefficient):", "",
    fmt(pooled(d, 20)),
    "", "Every row (coverage and ml in %, bias in Monte Carlo standard errors of the mean):", "",
    fmt(by_row(d))
  )
}

# ---- speed ---------------------------------------------------------------------

# seconds, peak MB (bench/utils.R's measure()) and CPU seconds of the call
# alone (user and system)
with_cpu <- function(f) {
  spent <- 0
  res <- measure(function() {
    t <- system.time(out <- f())
    spent <<- t[["user.self"]] + t[["sys.self"]]
    out
  })
  c(res, cpu = spent)
}

run_speed <- function() {
  keys <- c("sex", "age", "race", "marital", "area")
  rows <- list()
  for (n in sizes) {
    message("n = ", n)
    df <- make_census(n)
    df$educ <- factor(sample(paste0("e", 1:8), n, TRUE))
    df$w <- stats::runif(n, 50, 150)
    df$high <- df$income > 40000
    set.seed(1)
    rel <- ifpr(df, keys, 0.3, partition = list(sex = "keep"))
    pub <- publish_plan(rel)
    released <- rel$data
    rm(rel, df)
    invisible(gc())
    dt <- as.data.table(released)
    tasks <- list(
      "count by race x marital (keys)" = function() estimate_table(released, pub, by = c("race", "marital")),
      "mean of income by race (non-key by key)" = function() {
        estimate_table(released, pub, by = "race", value = "income", stat = "mean")
      },
      "proportion income > 40,000 by marital" = function() {
        estimate_table(released, pub, by = "marital", value = "high", stat = "proportion")
      },
      "weighted mean of income by race x educ" = function() {
        estimate_table(released, pub, by = c("race", "educ"), value = "income", stat = "mean", weights = "w")
      },
      # the moment estimator: with estimator = "auto" a third of these
      # rows (cells of one or two records) leave the parameter space and
      # go to maximum likelihood, row by row, which takes minutes (29 CPU
      # seconds for 30,874 such rows at 2 x 10^5 records, against 0.15 for
      # the moment estimates; bench/README.md)
      "weighted count by every key (moment)" = function() {
        estimate_table(released, pub, by = keys, weights = "w", estimator = "moment")
      }
    )
    for (task in names(tasks)) {
      m <- matrix(NA_real_, reps, 6)
      table_rows <- NA_integer_
      for (r in seq_len(reps)) {
        m[r, 1:3] <- with_cpu(function() dt[, .N, by = keys])
        m[r, 4:6] <- with_cpu(function() {
          out <- tasks[[task]]()
          table_rows <<- nrow(out)
          out
        })
      }
      med <- apply(m, 2, stats::median)
      rows[[length(rows) + 1]] <- data.frame(
        records = format(n, big.mark = ",", scientific = FALSE), task = task,
        rows = format(table_rows, big.mark = ","),
        seconds = med[4], cpu_seconds = med[6], peak_mb = med[5], dt_cpu_seconds = med[3], dt_peak_mb = med[2],
        ratio = stats::median(m[, 6] / m[, 3])
      )
    }
  }
  do.call(rbind, rows)
}

if (part %in% c("coverage", "both", "report")) {
  # "report": the table from the draws kept in bench/coverage-*.rds by
  # earlier runs (of different studies, possibly with different numbers of
  # draws)
  d <- if (part == "report") {
    do.call(rbind, lapply(Sys.glob(file.path("bench", "coverage-*.rds")), readRDS))
  } else {
    run_coverage()
  }
  report <- coverage_report(d)
  writeLines(report, file.path("bench", "results-estimate-coverage.md"))
  cat(report[1:30], sep = "\n")
}
if (part %in% c("speed", "both")) {
  speed <- run_speed()
  header <- c(
    machine_line(paste0("sdcRisk ", utils::packageVersion("sdcRisk"), ", data.table ",
                        utils::packageVersion("data.table"), " (1 thread)")),
    sprintf("Medians of %d repetitions, alternating with dt[, .N, by = keys]; ratio = median over repetitions of estimate_table() CPU seconds / data.table CPU seconds.", reps),
    ""
  )
  write_results(speed, header, file.path("bench", "results-estimate-speed.md"),
                digits = c(seconds = 2, cpu_seconds = 2, peak_mb = 0, dt_cpu_seconds = 2, dt_peak_mb = 0, ratio = 2))
}
