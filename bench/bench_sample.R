# Sample releases (issue 34): the certificate of a target who may not be in
# the file, beside what agencies use, in one run:
#   1. The census generator of bench_core.R as a population of 10^7 persons
#      (SDCRISK_BENCH_SIZES), a 5% simple random sample released by ifpr()
#      at xi = 0.2: records and key values changed by today's design
#      (target known to be in the file) and by the sample-aware one
#      (population counts known), with the tiered design and with the
#      least-damage one (method = "optimal"); the time of the sample certificate
#      (max_match_risk(population =), joining the population counts to the
#      sample's cells) and of the whole sample-aware ifpr() in CPU seconds of
#      one grouping of the population, dt[, .N, by = keys] on one thread.
#   2. pums_md and the ACS excerpts as populations, samples of 5% and 10%
#      with sampling weights: the package's risk without PRAM (at a = t)
#      beside sdcMicro::measure_risk()'s individual risk under the same
#      negative binomial model and weights, and beside the truth 1 / F; the
#      log-linear estimate; the certificate after PRAM (sdcMicro has none).
#   3. Monte Carlo: the Massachusetts excerpt as the population, a 10%
#      sample released by IFPR, 20,000 releases with a target drawn from the
#      population each time, against the exact (t / F) R_j(a, t).
# Run from the package root after installing the package:
#   Rscript bench/bench_sample.R          (writes bench/results-sample.md)
# SDCRISK_BENCH_SAMPLE_SECTIONS (default "1,2,3") runs some sections only;
# the results of a partial run go to bench/results-sample-partial.md.

suppressPackageStartupMessages({
  library(sdcRisk)
  library(data.table)
})
setDTthreads(1L)
source(file.path("bench", "utils.R"))

size <- max(as.numeric(strsplit(Sys.getenv("SDCRISK_BENCH_SIZES", "1e7"), ",")[[1]]))
reps <- as.integer(Sys.getenv("SDCRISK_BENCH_REPS", "3"))
mc_reps <- as.integer(Sys.getenv("SDCRISK_BENCH_MC_REPS", "20000"))
sections <- as.integer(strsplit(Sys.getenv("SDCRISK_BENCH_SAMPLE_SECTIONS", "1,2,3"), ",")[[1]])
out <- character()
say <- function(...) {
  line <- paste0(...)
  out <<- c(out, line)
  cat(line, "\n", sep = "")
}
say_table <- function(df) {
  lines <- c(paste0("| ", paste(gsub("_", " ", names(df)), collapse = " | "), " |"),
             paste0("|", paste(rep("---", ncol(df)), collapse = "|"), "|"),
             apply(df, 1, function(r) paste0("| ", paste(trimws(r), collapse = " | "), " |")))
  for (l in lines) say(l)
}
cpu_of <- function(f) {
  t <- vapply(seq_len(reps), function(i) {
    invisible(gc())
    p <- proc.time()
    f()
    q <- proc.time() - p
    q[["user.self"]] + q[["sys.self"]]
  }, numeric(1))
  stats::median(t)
}
changed_values <- function(before, after, keys) {
  sum(vapply(keys, function(k) sum(as.character(before[[k]]) != as.character(after[[k]])), numeric(1)))
}

# the ACS excerpts with age in five-year groups (sections 2 and 3)
acs <- function(file) {
  d <- readRDS(file.path("tests", "testthat", "fixtures", "acs2019", file))
  d$AGEP <- cut(d$AGEP, c(seq(0, 80, 5), Inf), right = FALSE)
  d
}

# ---- 1. the census population -------------------------------------------------------
if (1 %in% sections) {
  keys <- c("sex", "age", "race", "marital", "area")
  xi <- 0.2
  message("population of ", size)
  pop <- make_census(size)[keys]
  dt <- as.data.table(pop)
  counts <- as.data.frame(dt[, .(count = .N), by = keys])
  set.seed(34)
  smp <- pop[sort(sample(nrow(pop), round(0.05 * nrow(pop)))), ]
  message("sample of ", nrow(smp), "; population cells ", nrow(counts))
  set.seed(1)
  in_file <- ifpr(smp, keys, xi, partition = list(sex = "keep"))
  set.seed(1)
  aware <- ifpr(smp, keys, xi, partition = list(sex = "keep"), population = counts, target_in_file = "unknown")
  set.seed(1)
  aware_opt <- ifpr(smp, keys, xi, partition = list(sex = "keep"), population = counts,
                    target_in_file = "unknown", method = "optimal")
  designs <- list(in_file, aware, aware_opt)
  damage <- data.frame(
    design = c("today's: target known to be in the file", "sample-aware: population counts known (tiered)",
               "sample-aware: population counts known (method = \"optimal\")"),
    certified_risk = format(vapply(designs, function(r) r$certificate$risk, numeric(1)), digits = 4),
    blocks = vapply(designs, function(r) length(r$plan$theta), numeric(1)),
    blocks_theta_0 = vapply(designs, function(r) sum(r$plan$theta == 0, na.rm = TRUE), numeric(1)),
    cells_in_blocks = vapply(designs, function(r) length(r$plan$block_cells), numeric(1)),
    records_changed = vapply(designs, function(r) r$certificate$records_changed, numeric(1)),
    key_values_changed = vapply(designs, function(r) changed_values(smp, r$data, keys), numeric(1)),
    expected_changed = round(vapply(designs, function(r) r$certificate$expected_changed, numeric(1)), 1)
  )
  damage$share_of_today <- sprintf("%.3f", damage$records_changed / damage$records_changed[1])
  # what the design side (per-cell bounds in the designs, issue 35's branch)
  # will add: a cell of the sample needs protection only if F < 1 / xi,
  # against t < 1 / xi today; the records of such cells bound what any
  # design must change
  f_cells <- in_file$cells$cells$count
  big_f <- sdcRisk:::population_counts(in_file$cells, counts)
  whole <- big_f == f_cells & f_cells * xi < 1  # the whole population is sampled: bound xi, as today
  need <- data.frame(
    rule = c("today: t < 1 / xi", "sample: F < 1 / xi (bound min(1, xi F / t))",
             "of which F = t (bound xi, as today)"),
    cells_needing_protection = c(sum(f_cells * xi < 1), sum(big_f * xi < 1), sum(whole)),
    records_in_them = c(sum(f_cells[f_cells * xi < 1]), sum(f_cells[big_f * xi < 1]), sum(f_cells[whole]))
  )
  need$share_of_today <- sprintf("%.3f", need$records_in_them / need$records_in_them[1])
  # and what they would change: the tiered rule gives a cell of count t and
  # bound b the theta solving psi(t, theta) = b, the expected number of its
  # units that move; summed before the padding of blocks, as an estimate of
  # the effect of the design side (today's sum beside today's plan checks it)
  theta_of <- function(bound, t) sdcRisk:::core_call(sdcRisk:::cpp_design, "theta_psi", pmin(bound, 1 - 1e-12), t)
  bound_sample <- pmin(1, xi * big_f / f_cells)
  need$expected_changed_tiered_rule <- round(c(
    sum(theta_of(rep(xi, sum(f_cells * xi < 1)), f_cells[f_cells * xi < 1])),
    sum(theta_of(bound_sample[big_f * xi < 1], f_cells[big_f * xi < 1])),
    sum(theta_of(rep(xi, sum(whole)), f_cells[whole]))
  ), 1)
  need$expected_share <- sprintf("%.3f", need$expected_changed_tiered_rule / need$expected_changed_tiered_rule[1])
  # what no design can go below: under Goal 3 a unit of cell t stays with
  # probability at most b_t t in any unbiased PRAM meeting the bound b_t
  # (certificate$design$lower of method = "optimal"; ?ifpr), against
  # today's expected changes
  lower <- data.frame(
    bounds = c("today's: xi for every cell", "sample: min(1, xi F / t), as computed here",
               "sample: certificate$design$lower of the optimal release"),
    records_at_least = round(c(
      sdcRisk:::damage_lower(f_cells, rep(xi, length(f_cells)), "all_matches", 1)[["records"]],
      sdcRisk:::damage_lower(f_cells, bound_sample, "all_matches", 1)[["records"]],
      aware_opt$certificate$design$lower[["records"]]
    ), 1)
  )
  lower$share_of_today_expected <- sprintf("%.3f", lower$records_at_least / in_file$certificate$expected_changed)

  group_cpu <- cpu_of(function() dt[, .N, by = keys])
  cert_cpu <- cpu_of(function() max_match_risk(aware$plan, population = counts, target_in_file = "unknown"))
  ifpr_cpu <- cpu_of(function() {
    ifpr(smp, keys, xi, partition = list(sex = "keep"), population = counts, target_in_file = "unknown")
  })
  optimal_cpu <- cpu_of(function() {
    ifpr(smp, keys, xi, partition = list(sex = "keep"), population = counts, target_in_file = "unknown",
         method = "optimal")
  })
  in_file_cpu <- cpu_of(function() ifpr(smp, keys, xi, partition = list(sex = "keep")))
  timing <- data.frame(
    task = c("one grouping of the population: dt[, .N, by = keys]",
             "sample certificate: max_match_risk(population = counts, target_in_file = \"unknown\")",
             "sample-aware ifpr() of the sample, certificate included",
             "sample-aware ifpr(method = \"optimal\") of the sample, certificate included",
             "today's ifpr() of the sample"),
    cpu_seconds = sprintf("%.3f", c(group_cpu, cert_cpu, ifpr_cpu, optimal_cpu, in_file_cpu)),
    groupings = sprintf("%.2f", c(1, cert_cpu, ifpr_cpu, optimal_cpu, in_file_cpu) / c(1, rep(group_cpu, 4)))
  )
  rm(dt, pop)
  invisible(gc())
}

# ---- 2. beside sdcMicro's individual risk -----------------------------------------------
if (2 %in% sections) {

  # the risk without PRAM at a = t of every record's cell (a plan that moves
  # nothing), for a population given as counts or as a model
  unperturbed <- function(d, k, population) {
    cf <- cell_frequencies(d, k)
    mr <- match_risk(pram_plan(cf, list()), a = seq_len(max(cf$cells$count)), population = population,
                     target_in_file = "unknown")
    mr$risk[mr$a == mr$count][cf$cell_id]
  }
  populations <- list(
    list(name = "pums_md", data = pums_md, keys = c("sex", "age", "race", "marital", "puma"), fraction = 0.05),
    list(name = "ACS Massachusetts excerpt", data = acs("ma2019.rds"), keys = c("SEX", "AGEP", "RAC1P", "MSP", "PUMA"),
         fraction = 0.1),
    list(name = "ACS national excerpt", data = acs("national2019.rds"), keys = c("SEX", "AGEP", "RAC1P", "MSP", "PUMA"),
         fraction = 0.1)
  )
  versus <- list()
  pram_rows <- list()
  for (p in populations) {
    message(p$name)
    set.seed(7)
    k <- p$keys
    d <- p$data[sample(nrow(p$data), round(p$fraction * nrow(p$data))), k]
    # unequal sampling weights around N / n, as a survey's
    d$w <- nrow(p$data) / nrow(d) * stats::runif(nrow(d), 0.7, 1.3)
    cf <- cell_frequencies(d, k)
    f <- cf$cells$count[cf$cell_id]
    pop_counts <- cell_frequencies(p$data, k)$cells
    ours <- unperturbed(d, k, population_model("negbin", weights = d$w))
    theirs <- sdcMicro::measure_risk(d, keyVars = k, w = "w")$Res[, "risk"]
    truth <- unperturbed(d, k, pop_counts)
    loglin <- unperturbed(d, k, population_model("loglinear", weights = d$w))
    small <- f <= 2
    versus[[length(versus) + 1]] <- data.frame(
      population = p$name, sample = nrow(d), records_t_le_2 = sum(small),
      max_abs_diff_t_le_2 = format(max(abs(ours[small] - theirs[small])), digits = 3),
      max_rel_diff_t_ge_3 = if (any(!small)) format(max(abs(ours[!small] / theirs[!small] - 1)), digits = 3) else "-",
      sum_ours = format(sum(ours), digits = 6), sum_sdcMicro = format(sum(theirs), digits = 6),
      sum_loglinear = format(sum(loglin), digits = 6), sum_truth_1_over_F = format(sum(truth), digits = 6)
    )
    # after PRAM: sdcMicro's invariant PRAM of three keys, certified
    set.seed(8)
    vars <- k[2:4]
    rel <- pram_release(d, k, vars = vars, pd = 0.8, population = pop_counts, target_in_file = "unknown")
    set.seed(8)
    rel_est <- pram_release(d, k, vars = vars, pd = 0.8, population = population_model("negbin", weights = "w"),
                            target_in_file = "unknown")
    pram_rows[[length(pram_rows) + 1]] <- data.frame(
      population = p$name, perturbed = paste(vars, collapse = ", "),
      in_file = format(max_match_risk(rel$plan)$risk, digits = 4),
      sample_exact = format(rel$certificate$risk, digits = 4),
      sample_negbin_estimate = format(rel_est$certificate$risk, digits = 4),
      sdcMicro = "none (its risk measures ignore PRAM)"
    )
  }
}

# ---- 3. Monte Carlo on the Massachusetts excerpt as a population ------------------------
if (3 %in% sections) {

  message("Monte Carlo")
  pop <- acs("ma2019.rds")
  k <- c("SEX", "AGEP", "RAC1P", "MSP", "PUMA")
  set.seed(11)
  in_smp <- sort(sample(nrow(pop), round(0.1 * nrow(pop))))
  rel <- ifpr(pop[in_smp, ], k, xi = 0.3, calibrate = "bound")
  cf <- rel$cells
  key_of <- function(x) do.call(paste, c(lapply(k, function(v) as.character(x[[v]])), sep = "|"))
  unit_cell <- match(key_of(pop), key_of(cf$cells))
  targets <- rel$plan$block_cells
  targets <- targets[tabulate(unit_cell, nrow(cf$cells))[targets] > cf$cells$count[targets]][1:40]
  units_of <- lapply(targets, function(j) which(unit_cell == j))
  A <- 10
  hits <- seen <- matrix(0, length(targets), A)
  ep <- sdcRisk:::engine_plan(rel$plan)
  for (r in seq_len(mc_reps)) {
    nc <- sdcRisk:::plan_draw(rel$plan, cf$cell_id, ep = ep)
    s <- tabulate(nc, nrow(cf$cells))[targets]
    for (i in seq_along(targets)) {
      if (s[i] < 1 || s[i] > A) next
      b <- units_of[[i]][sample.int(length(units_of[[i]]), 1)]
      at <- match(b, in_smp)
      # the intruder picks one of the s records at random
      hit <- !is.na(at) && nc[at] == targets[i] && stats::runif(1) < 1 / s[i]
      hits[i, s[i]] <- hits[i, s[i]] + hit
      seen[i, s[i]] <- seen[i, s[i]] + 1
    }
  }
  counts_ma <- cell_frequencies(pop, k)$cells
  exact <- match_risk(rel$plan, targets, a = seq_len(A), population = counts_ma, target_in_file = "unknown")
  est <- as.vector(t(hits / pmax(seen, 1)))
  n <- as.vector(t(seen))
  ok <- n >= 200 & !is.na(exact$risk)
  z <- (est[ok] - exact$risk[ok]) / sqrt(exact$risk[ok] * (1 - exact$risk[ok]) / n[ok])
  mc <- data.frame(
    cells = length(targets), releases = mc_reps, pairs_cell_a = sum(ok),
    mean_exact = format(mean(exact$risk[ok]), digits = 4), mean_simulated = format(mean(est[ok]), digits = 4),
    max_abs_z = format(max(abs(z)), digits = 3), share_abs_z_gt_3 = format(mean(abs(z) > 3), digits = 3),
    chi2_over_df = format(sum(z^2) / sum(ok), digits = 3)
  )
}

# ---- results -------------------------------------------------------------------

say(machine_line(sprintf("sdcRisk %s, data.table %s (%d thread), sdcMicro %s", packageVersion("sdcRisk"),
                         packageVersion("data.table"), getDTthreads(), packageVersion("sdcMicro"))))
say("")
if (1 %in% sections) {
  say(sprintf("## 1. A 5%% sample of a census of %s persons (the generator of bench_core.R), xi = %s, sex kept",
              format(size, big.mark = ",", scientific = FALSE), xi))
  say("")
  say(sprintf("Sample: %s records in %s cells; population counts: %s cells.", format(nrow(smp), big.mark = ","),
              format(nrow(in_file$cells$cells), big.mark = ","), format(nrow(counts), big.mark = ",")))
  say("")
  say_table(damage)
  say("")
  say("Cells that need protection at all (a design with per-cell bounds leaves the others out of its blocks), and the expected changes of the tiered rule (each cell's theta solving psi(t, theta) = its bound, summed before block padding; today's row is checked by today's plan above):")
  say("")
  say_table(need)
  say("")
  say("The least any unbiased PRAM meeting the bounds can change (Goal 3, expected records; a unit of cell t stays with probability at most b_t t, the proof on damage_lower() in R/design-optimal.R), as a share of today's expected changes:")
  say("")
  say_table(lower)
  say("")
  say(sprintf("CPU seconds, median of %d; groupings = CPU seconds / those of one grouping of the population in the same run.", reps))
  say("")
  say_table(timing)
  say("")
}
if (2 %in% sections) {
  say("## 2. Beside sdcMicro's individual risk (no PRAM; negative binomial model, the same sampling weights)")
  say("")
  say("Per record: the package's estimated risk at a = t, t E[1 / F | t] R(t, t) = E[1 / F | t], beside sdcMicro::measure_risk()'s individual risk; sums over the records beside the log-linear estimate (all two-way interactions) and the truth, 1 / F from the population counts.")
  say("")
  say_table(do.call(rbind, versus))
  say("")
  say("Certified maximum after PRAM of three keys (pram_release(pd = 0.8)): for a target known to be in the file, for a target who may not be (exact, population counts), and its negative binomial estimate.")
  say("")
  say_table(do.call(rbind, pram_rows))
  say("")
}
if (3 %in% sections) {
  say("## 3. Monte Carlo: the Massachusetts excerpt as the population, a 10% sample released by IFPR (xi = 0.3, bound calibration)")
  say("")
  say("Releases drawn again and again; each time a target is drawn from the population units of each of 40 cells, and the intruder picks one of the S_j released records of its cell; P(correct | S_j = a) for every (cell, a) seen at least 200 times, beside the exact (t / F) R_j(a, t); z = (simulated - exact) / binomial standard error.")
  say("")
  say_table(mc)
}
all_sections <- all(1:3 %in% sections)
writeLines(out, file.path("bench", if (all_sections) "results-sample.md" else "results-sample-partial.md"))
