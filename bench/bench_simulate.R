# simulate_release(): 1000 releases of a 10^5-record data set, beside the
# same number of record-level releases with pram_draw() in the same run.
#   Rscript bench/bench_simulate.R
library(sdcRisk)
set.seed(1)
n <- 1e5
df <- data.frame(
  sex = sample(c("F", "M"), n, TRUE), age = sample(0:99, n, TRUE),
  area = sample(sprintf("a%03d", 1:200), n, TRUE)
)
keys <- c("sex", "age", "area")
cf <- cell_frequencies(df, keys)
risky <- which(cf$cells$count <= 2)
plan <- pram_plan(cf, unname(split(risky, ceiling(seq_along(risky) / 500))), theta = 0.8)
t_sim <- system.time(sim <- simulate_release(df, keys, plan, reps = 1000, target = risky[1]))[["elapsed"]]
t_rec <- system.time(for (r in 1:1000) pram_draw(plan))[["elapsed"]]
cat(sprintf("| 10^5 records, %d cells (%d in blocks), 1000 releases | simulate_release() %.2f s | 1000 x pram_draw() %.2f s | ratio %.2f |\n",
  nrow(cf$cells), length(risky), t_sim, t_rec, t_sim / t_rec))
