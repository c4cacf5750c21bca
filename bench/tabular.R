# Timing of cell_sensitivity(): 10^6 records, 3-way table with all margins.
# Run with: Rscript bench/tabular.R (after installing the package).
library(sdcRisk)
set.seed(1)
n <- 1e6
d <- data.frame(
  a = sample(50, n, TRUE), b = sample(letters[1:20], n, TRUE), c = sample(30, n, TRUE),
  firm = sample(2e5, n, TRUE), v = round(rlnorm(n, 5, 2))
)
rules <- list(rule_frequency(3), rule_nk(2, 85), rule_p(10), rule_pq(10, 50))
print(system.time(s <- cell_sensitivity(d, c("a", "b", "c"), "v", rules, contributor = "firm")))
print(system.time(cell_sensitivity(d, c("a", "b", "c"), "v", list(rule_nk(2, 85), rule_p(10)))))
print(system.time(cell_sensitivity(d, c("a", "b", "c"), "v",
  rule_ptn(function(z) 0.1 * z$x, function(z) z$x, nt = 2, ns = 2))))
cat(nrow(s), "cells\n")
# Results on the development machine (2 cores, R 4.2.2):
#   4 rules with contributors: 3.8 s elapsed; 2 rules, records as
#   contributors: 1.5 s; PTN rule nt = ns = 2: 1.6 s; 33201 cells.
