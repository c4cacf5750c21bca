# GaussSuppression's interval patterns of two tables of the bench's sweep
# (bench/bench_suppress_sweep.R, seed 1, tables 17 and 14), for the tests
# that compare protect_table() against the outsider with them without
# GaussSuppression installed: tests/testthat/fixtures/gauss/
# acs_sweep_intervals.csv, one row per suppressed cell, its `table` and its
# codes ("Total" for a margin).
#   W17: PUMA x sex x race group x education group, p% rule p = 10;
#   W14: PUMA x education group x race group, the (1, 80) dominance rule;
# both on the people with a positive personal income in the first 12 PUMAs
# of the national ACS excerpt (those of make_acs() in bench/utils.R).
# Run from the package's root, with GaussSuppression and lpSolve installed
# and the ACS excerpt of ../shared/data (SDCRISK_SHARED as in bench/utils.R):
#   Rscript data-raw/gauss-sweep-fixtures.R
source(file.path("bench", "utils.R"))
base <- make_acs(30)
d <- base[base$puma %in% unique(base$puma)[1:12], ]
tables <- list(W17 = list(dv = c("puma", "sex", "race", "edu"), nk = FALSE),
               W14 = list(dv = c("puma", "edu", "race"), nk = TRUE))
cols <- c("puma", "sex", "race", "edu")
out <- do.call(rbind, lapply(names(tables), function(id) {
  tb <- tables[[id]]
  g <- gauss_interval(d, tb$dv, tb$nk)
  g <- g[g$suppressed, , drop = FALSE]
  r <- data.frame(table = rep(id, nrow(g)))
  for (v in cols) r[[v]] <- if (v %in% tb$dv) as.character(g[[v]]) else ""
  r
}))
utils::write.csv(out, file.path("tests", "testthat", "fixtures", "gauss", "acs_sweep_intervals.csv"),
                 row.names = FALSE)
cat(sprintf("%s: %d cells\n", names(table(out$table)), table(out$table)), sep = "")
