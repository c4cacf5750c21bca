# A short tour of the release procedure on the built-in synthetic Maryland
# PUMS (Nayak, Zhang & You 2016, Section 7): find the risky cells, perturb
# them with inverse-frequency PRAM, and prove the risk bound on the release.
library(sdcRisk)
set.seed(2016)
keys <- c("sex", "age", "race", "marital", "puma")

cat("\n== 1. Who can be re-identified in the original data?\n")
cf <- cell_frequencies(pums_md, keys)
print(cf)
print(summary(cf))

cat("\n== 2. Design: Goal 3 (every match, every a) with xi = 0.395\n")
design <- ifpr_theta(0.395, "all_matches")
print(design)

# Blocks: the singleton and doubleton cells within each sex x age-group set,
# so that sex and the age group never change (Section 5, Step 3).
age_group <- cut(cf$cells$age, c(-1, 17, 24, 34, 44, 54, 64, Inf))
set_id <- interaction(cf$cells$sex, age_group, drop = TRUE)
risky <- cf$cells$count <= 2
blocks <- split(which(risky), set_id[risky], drop = TRUE)
plan <- pram_plan(cf, unname(blocks), theta = design$theta)
print(plan)

cat("\n== 3. Certificate: the exact maximum risk on this plan\n")
certificate <- max_match_risk(plan, "all_matches")
print(certificate)
stopifnot(certificate$risk <= 0.395)

cat("\n== 4. Release\n")
released <- pram_apply(pums_md, keys, plan)
changed <- rowSums(as.matrix(released[keys]) != as.matrix(pums_md[keys])) > 0
cat(sprintf("%d of %d records changed (%.1f%%); other columns identical: %s\n",
  sum(changed), nrow(pums_md), 100 * mean(changed),
  identical(released[setdiff(names(pums_md), keys)], pums_md[setdiff(names(pums_md), keys)])))
print(cell_frequencies(released, keys))
