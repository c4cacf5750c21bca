# Suppressed value on the sweep's tables (issue 32, item 2: never more value
# than GaussSuppression's interval mode with the same protection levels):
# the tables of bench_suppress_sweep.R (sweep_tables() of bench/utils.R,
# the same draws for the same seeds), and for each the suppressed value
# (margins included) of protect_table() against the outside attacker
# (attacker = "outsider", the attacker GaussSuppression's interval mode
# protects against) and of the default (attacker = "respondents"), each
# over the value of GaussSuppression's interval pattern
# (SuppressDominantCells(protectionIntervals = TRUE, lpPackage =
# "lpSolve")), both with protect_table()'s other defaults (intervals =
# "suppressed"). No timing: the machine may be busy.
#   Rscript bench/bench_suppress_sweep_value.R   (writes
#     bench/results-suppress-sweep-value.md, or SDCRISK_BENCH_OUT)
# SDCRISK_BENCH_SEEDS (default "1,2", the seeds of the two sweeps) and
# SDCRISK_BENCH_N (default 40) choose the tables; SDCRISK_BENCH_LIB as in
# bench_suppress_sweep.R.

lib <- Sys.getenv("SDCRISK_BENCH_LIB", "")
if (nzchar(lib)) .libPaths(c(lib, .libPaths()))
seeds <- as.integer(strsplit(Sys.getenv("SDCRISK_BENCH_SEEDS", "1,2"), ",")[[1]])
n_tables <- as.integer(Sys.getenv("SDCRISK_BENCH_N", "40"))
source(file.path("bench", "utils.R"))
gauss_bench_setup(lib)

base <- make_acs(30)
value_of <- function(p) sum(abs(p$total[p$status != "published"]))
rows <- list()
for (seed in seeds) {
  tabs <- sweep_tables(base, seed, n_tables)
  for (k in seq_along(tabs)) {
    tb <- tabs[[k]]
    g <- gauss_interval(tb$d, tb$dv, tb$nk)
    vg <- sum(abs(g$v[g$suppressed]))
    outsider <- protect_table(tb$sens, attacker = "outsider")
    default <- protect_table(tb$sens)
    rows[[length(rows) + 1L]] <- data.frame(
      seed = seed, k = k, table = paste(tb$dv, collapse = " x "), pumas = tb$np,
      rule = if (tb$nk) "(1, 80)" else "p% 10", cells = nrow(tb$sens), sensitive = sum(tb$sens$sensitive),
      outsider = value_of(outsider) / vg, default = value_of(default) / vg
    )
    message(sprintf("seed %d %2d %-28s %2d PUMAs %4d cells: value / Gauss outsider %.4f, default %.4f", seed, k,
                    rows[[length(rows)]]$table, tb$np, nrow(tb$sens), rows[[length(rows)]]$outsider,
                    rows[[length(rows)]]$default))
  }
}
tab <- do.call(rbind, rows)
above <- tab$outsider > 1
f4 <- function(x) formatC(x, format = "f", digits = 4)
info <- sprintf("Run on %s: %s; sdcRisk %s, highs %s, GaussSuppression %s, lpSolve %s.", format(Sys.Date()),
                R.version.string, utils::packageVersion("sdcRisk"), utils::packageVersion("highs"),
                utils::packageVersion("GaussSuppression"), utils::packageVersion("lpSolve"))
md <- c(info,
        sprintf(paste("The %d tables of bench_suppress_sweep.R with seeds %s; suppressed value (margins included)",
                      "over GaussSuppression's interval pattern, for protect_table() against the outsider",
                      "(the attacker GaussSuppression's interval mode protects against) and for the default",
                      "(respondent-safe)."), nrow(tab), paste(seeds, collapse = " and ")),
        "",
        sprintf(paste("Against the outsider: above GaussSuppression's value on %d of %d tables (at most %s),",
                      "equal on %d, below on %d (median %s). The default: above on %d (at most %s)."),
                sum(above), nrow(tab), f4(max(tab$outsider)), sum(abs(tab$outsider - 1) < 1e-9),
                sum(tab$outsider < 1 - 1e-9), f4(stats::median(tab$outsider)), sum(tab$default > 1 + 1e-9),
                f4(max(tab$default))),
        "",
        "| seed | # | table | PUMAs | rule | cells | sensitive | outsider value / Gauss | default value / Gauss |",
        "|---:|---:|---|---:|---|---:|---:|---:|---:|",
        sprintf("| %d | %d | %s | %d | %s | %d | %d | %s%s | %s |", tab$seed, tab$k, tab$table, tab$pumas, tab$rule,
                tab$cells, tab$sensitive, f4(tab$outsider), ifelse(above, " **above**", ""), f4(tab$default)))
out <- Sys.getenv("SDCRISK_BENCH_OUT", file.path("bench", "results-suppress-sweep-value.md"))
writeLines(md, out)
cat(md, sep = "\n")
