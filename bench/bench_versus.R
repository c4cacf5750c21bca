# Head to head with what users run today, in one run on the same data:
#   1. cell frequencies: cell_frequencies() against sdcMicro::freqCalc() and
#      data.table grouping;
#   2. perturbation: pram_apply() with an IFPR plan and the whole ifpr()
#      release against sdcMicro::pram() on the same key variables;
#   3. risk: the exact certificate max_match_risk() against
#      sdcMicro::measure_risk();
#   4. tables: cell_sensitivity() with the p% and (n, k) rules against
#      sdcTable::primarySuppression() with the same rules, on 2- and 3-way
#      tables with margins, checking that both mark the same cells.
# Installs sdcMicro, sdcTable and data.table if needed (most of their
# dependencies come prebuilt from Debian: see tools/install-deps.sh).
#   Rscript bench/bench_versus.R        (writes bench/results-versus.md)

need <- c("data.table", "sdcMicro", "sdcTable")
miss <- need[!vapply(need, requireNamespace, logical(1), quietly = TRUE)]
if (length(miss) && Sys.getenv("SDCRISK_BENCH_NO_INSTALL") == "") {
  # sdcTable's linear-programming back end needs GLPK; its other dependencies
  # come fastest from Debian (see tools/install-deps.sh)
  if ("sdcTable" %in% miss && Sys.info()[["user"]] == "root" && nzchar(Sys.which("apt-get"))) {
    system("apt-get install -y -qq --no-install-recommends libglpk-dev r-cran-slam r-cran-shinyjs r-cran-shinythemes r-cran-progressr")
  }
  install.packages(miss, Ncpus = 2L)
}
suppressPackageStartupMessages({
  library(sdcRisk)
  library(data.table)
})
setDTthreads(0L)
source(file.path("bench", "utils.R"))

sizes <- as.numeric(strsplit(Sys.getenv("SDCRISK_BENCH_SIZES", "1e4,1e5,1e6,1e7"), ",")[[1]])
reps <- as.integer(Sys.getenv("SDCRISK_BENCH_REPS", "3"))
keys <- c("sex", "age", "race", "marital", "area")

rows <- list()
add <- function(n, task, tool, res, ratio = NA_real_, note = "") {
  rows[[length(rows) + 1]] <<- data.frame(
    records = format(n, big.mark = ",", scientific = FALSE), task = task, tool = tool,
    seconds = res[["seconds"]], peak_mb = res[["mb"]], ratio = ratio, note = note
  )
}
ratio_row <- function(ours, theirs) ours[["seconds"]] / theirs[["seconds"]]

for (n in sizes) {
  message("n = ", n)
  df <- make_census(n)
  df$age <- factor(df$age) # sdcMicro's pram() perturbs factors only
  dt <- as.data.table(df)
  slow <- n >= 1e7 # sdcMicro's pram() takes minutes there: one repetition
  reps_here <- reps

  # 1. cell frequencies
  res <- compare(list(
    ours = function() cell_frequencies(df, keys),
    sdcmicro = function() sdcMicro::freqCalc(df, keyVars = keys),
    dt = function() dt[, .N, by = keys]
  ))
  add(n, "cell frequencies", "sdcRisk cell_frequencies()", res["ours", ])
  add(n, "cell frequencies", "sdcMicro freqCalc()", res["sdcmicro", ])
  add(n, "cell frequencies", "data.table dt[, .N, by = keys]", res["dt", ])
  rows[[length(rows) - 2]]$ratio <- ratio_row(res["ours", ], res["sdcmicro", ])
  rows[[length(rows) - 2]]$note <- sprintf("vs data.table: %.2f", ratio_row(res["ours", ], res["dt", ]))

  # 2. perturbation
  cf <- cell_frequencies(df, keys)
  risky <- which(cf$cells$count <= 2)
  grp <- paste(cf$cells$sex[risky], ceiling(seq_along(risky) / 1000))
  plan <- pram_plan(cf, unname(split(risky, grp)), theta = 0.8)
  if (slow) reps <- 1L
  res <- compare(list(
    ours = function() pram_apply(df, keys, plan),
    release = function() ifpr(df, keys, 0.3, partition = list(sex = "keep")),
    sdcmicro = function() sdcMicro::pram(df, variables = keys)
  ))
  reps <- reps_here
  add(n, "perturbation", "sdcRisk pram_apply() (IFPR plan)", res["ours", ])
  rows[[length(rows)]]$ratio <- ratio_row(res["ours", ], res["sdcmicro", ])
  add(n, "perturbation", "sdcRisk ifpr() (design, calibration, certificate, draws)", res["release", ])
  rows[[length(rows)]]$ratio <- ratio_row(res["release", ], res["sdcmicro", ])
  add(n, "perturbation", "sdcMicro pram()", res["sdcmicro", ],
      note = "each key separately, its own matrix; no risk guarantee")

  # 3. risk
  rel <- ifpr(df, keys, 0.3, partition = list(sex = "keep"))
  res <- compare(list(
    ours = function() max_match_risk(rel$plan, "all_matches"),
    sdcmicro = function() sdcMicro::measure_risk(df, keyVars = keys)
  ))
  add(n, "risk", "sdcRisk max_match_risk() (exact certificate of the release)", res["ours", ])
  rows[[length(rows)]]$ratio <- ratio_row(res["ours", ], res["sdcmicro", ])
  add(n, "risk", "sdcMicro measure_risk()", res["sdcmicro", ],
      note = "re-identification risk of unperturbed data; perturbation not accounted for")
  rm(df, dt, cf, plan, rel)
  invisible(gc())
}

# 4. tables: the same 2- and 3-way tables with margins in both packages
table_bench <- function(n, dims) {
  set.seed(3)
  d <- data.frame(
    a = sprintf("A%02d", sample(40, n, TRUE)),
    b = sprintf("B%02d", sample(25, n, TRUE)),
    c = sprintf("C%02d", sample(10, n, TRUE)),
    v = round(rlnorm(n, 6, 1.8))
  )
  d <- d[, c(dims, "v")]
  hier <- lapply(dims, function(v) sdcHierarchies::hier_create(root = "Total", nodes = sort(unique(d[[v]]))))
  names(hier) <- dims
  theirs <- function(type, ...) {
    prob <- sdcTable::makeProblem(data = d, dimList = hier, numVarInd = "v")
    prob <- sdcTable::primarySuppression(prob, type = type, numVarName = "v", ...)
    sdcTable::sdcProb2df(prob, dimCodes = "original")
  }
  ours <- function(rules) cell_sensitivity(d, dims, "v", rules)
  res <- compare(list(
    ours_p = function() ours(list(rule_p(10))),
    theirs_p = function() theirs("p", p = 10),
    ours_nk = function() ours(list(rule_nk(2, 85))),
    theirs_nk = function() theirs("nk", n = 2, k = 85)
  ))
  # agreement: the cells each marks sensitive
  key_ours <- function(s) {
    df <- as.data.frame(s)
    do.call(paste, c(lapply(dims, function(v) ifelse(as.character(df[[v]]) == "Total", "Total", as.character(df[[v]]))), sep = "|"))[df$sensitive]
  }
  key_theirs <- function(fd) {
    fd <- as.data.frame(fd)
    do.call(paste, c(lapply(dims, function(v) as.character(fd[[v]])), sep = "|"))[fd$sdcStatus == "u"]
  }
  agree <- function(o, t) {
    sprintf("same cells sensitive: %s (%d by sdcRisk, %d by sdcTable, of %d cells)",
      setequal(key_ours(o), key_theirs(t)), length(key_ours(o)), length(key_theirs(t)), nrow(as.data.frame(o)))
  }
  list(res = res,
       agree_p = agree(ours(list(rule_p(10))), theirs("p", p = 10)),
       agree_nk = agree(ours(list(rule_nk(2, 85))), theirs("nk", n = 2, k = 85)))
}

table_specs <- if (requireNamespace("sdcTable", quietly = TRUE)) {
  list(list(n = 1e5, dims = c("a", "b")), list(n = 1e5, dims = c("a", "b", "c")),
       list(n = 1e6, dims = c("a", "b", "c")))
} else {
  message("sdcTable is not installed: the table comparison is skipped")
  list()
}
for (spec in table_specs) {
  tb <- table_bench(spec$n, spec$dims)
  lab <- paste0(length(spec$dims), "-way table with margins")
  res <- tb$res
  add(spec$n, paste(lab, "p% rule (p = 10)"), "sdcRisk cell_sensitivity()", res["ours_p", ])
  rows[[length(rows)]]$ratio <- ratio_row(res["ours_p", ], res["theirs_p", ])
  rows[[length(rows)]]$note <- tb$agree_p
  add(spec$n, paste(lab, "p% rule (p = 10)"), "sdcTable primarySuppression()", res["theirs_p", ],
      note = "includes makeProblem()")
  add(spec$n, paste(lab, "(2, 85) rule"), "sdcRisk cell_sensitivity()", res["ours_nk", ])
  rows[[length(rows)]]$ratio <- ratio_row(res["ours_nk", ], res["theirs_nk", ])
  rows[[length(rows)]]$note <- tb$agree_nk
  add(spec$n, paste(lab, "(2, 85) rule"), "sdcTable primarySuppression()", res["theirs_nk", ],
      note = "includes makeProblem()")
}

tab <- do.call(rbind, rows)
header <- c(
  machine_line(sprintf("sdcRisk %s, sdcMicro %s, sdcTable %s, data.table %s",
    packageVersion("sdcRisk"), packageVersion("sdcMicro"),
    if (requireNamespace("sdcTable", quietly = TRUE)) as.character(packageVersion("sdcTable")) else "(not installed)",
    packageVersion("data.table"))),
  sprintf("Median of %d repetitions per tool (1 for the perturbation at 10^7 records), tools alternating; ratio = sdcRisk seconds / the other tool's seconds in the same run.", reps),
  ""
)
write_results(tab, header, file.path("bench", "results-versus.md"), digits = c(seconds = 3, peak_mb = 0, ratio = 3))
