# A short tour of the release procedure on the built-in synthetic Maryland
# PUMS (Nayak, Zhang & You 2016, Section 7): find the risky cells, release
# with a proven bound on identification risk, and check the release.
library(sdcRisk)
keys <- c("sex", "age", "race", "marital", "puma")

cat("\n== 1. Who can be re-identified in the original data?\n")
cf <- cell_frequencies(pums_md, keys)
print(cf)
print(summary(cf))

cat("\n== 2. Release: no intruder's match may be correct with probability above 0.2\n")
cat("   (Goal 3: every cell, every number of matches; sex and age group never change)\n")
set.seed(2016)
rel <- ifpr(
  pums_md, keys, xi = 0.2,
  partition = list(sex = "keep", age = c(0, 18, 25, 35, 45, 55, 65, Inf)),
  on_infeasible = "merge"
)
print(rel)

cat("\n== 3. The certificate, checked again from the plan alone\n")
print(max_match_risk(rel$plan, "all_matches"))
stopifnot(rel$certificate$risk <= 0.2)

cat("\n== 4. What changed\n")
print(cell_frequencies(rel$data, keys))
print(rbind(original = table(pums_md$marital), released = table(rel$data$marital)))
# The folder the quick start was run from (or the working directory).
args <- commandArgs(trailingOnly = TRUE)
out <- file.path(if (length(args)) args[1] else getwd(), "pums_md_released.csv")
utils::write.csv(rel$data, out, row.names = FALSE)
cat("\nReleased data written to", normalizePath(out), "\n")
