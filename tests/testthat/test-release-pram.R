# Brute-force references on tiny tables: the full transition matrix over the
# plan's cells, alpha(j, i) = prod_v P_v[j_v, i_v] within a group of cells
# that agree on every unperturbed key, formed explicitly.

random_stochastic <- function(k, zeros = FALSE) {
  m <- matrix(stats::runif(k * k), k)
  if (zeros) m[stats::runif(k * k) < 0.3 & row(m) != col(m)] <- 0
  sweep(m, 2, colSums(m), "/")
}

tiny_vars_plan <- function(seed, strata = TRUE, zeros = FALSE) {
  set.seed(seed)
  n <- sample(20:60, 1)
  df <- data.frame(
    a = factor(sample(c("p", "q", "r"), n, TRUE)),
    b = sample(1:4, n, TRUE),
    s = sample(c("x", "y"), n, TRUE),
    k = sample(c(TRUE, FALSE), n, TRUE)
  )
  cf <- cell_frequencies(df, c("a", "b", "s", "k"))
  mats1 <- function() list(a = random_stochastic(3, zeros), b = random_stochastic(4, zeros))
  if (strata) {
    labels <- pram_strata(cf, "s")$label
    matrices <- stats::setNames(lapply(labels, function(l) mats1()), labels)
    plan <- pram_plan_vars(cf, matrices, strata = "s")
  } else {
    plan <- pram_plan_vars(cf, mats1())
  }
  list(data = df, cells = cf, plan = plan)
}

brute_alpha <- function(plan) {
  tab <- plan$cells$cells
  n <- nrow(tab)
  fixed <- setdiff(plan$cells$keys, plan$vars)
  grp <- do.call(paste, c(lapply(tab[fixed], as.character), sep = "|"))
  A <- matrix(0, n, n)
  for (i in seq_len(n)) for (j in seq_len(n)) {
    if (grp[i] != grp[j]) next
    m <- plan$matrices[[plan$stratum_of_cell[i]]]
    A[j, i] <- prod(vapply(plan$vars, function(v) m[[v]][plan$codes[[v]][j], plan$codes[[v]][i]], 0))
  }
  A
}

test_that("E(S | T) and V(S | T) of a per-variable plan match the explicit matrix (eq. 3.6)", {
  for (seed in 1:6) {
    tp <- tiny_vars_plan(seed, strata = seed %% 2 == 0, zeros = seed > 3)
    plan <- tp$plan
    A <- brute_alpha(plan)
    t <- plan$cells$cells$count
    m <- sdcRisk:::plan_moments(plan)
    expect_equal(m$mean, drop(A %*% t), tolerance = 1e-12, info = paste("seed", seed))
    expect_equal(m$var, drop((A * (1 - A)) %*% t), tolerance = 1e-12, info = paste("seed", seed))
  }
})

test_that("costs of a per-variable plan: expected changed records and total variance over all cells", {
  for (seed in 1:4) {
    tp <- tiny_vars_plan(seed, strata = seed %% 2 == 1)
    plan <- tp$plan
    t <- plan$cells$cells$count
    # every cell of the full cross-classification, empty ones included
    changed <- 0
    total_var <- 0
    for (i in seq_along(t)) {
      m <- plan$matrices[[plan$stratum_of_cell[i]]]
      ia <- plan$codes$a[i]
      ib <- plan$codes$b[i]
      alpha_all <- outer(m$a[, ia], m$b[, ib]) # every target (a, b) of the group
      changed <- changed + t[i] * (1 - m$a[ia, ia] * m$b[ib, ib])
      total_var <- total_var + sum(t[i] * alpha_all * (1 - alpha_all))
    }
    cost <- sdcRisk:::plan_cost(plan)
    expect_equal(cost$changed, changed, tolerance = 1e-12)
    expect_equal(cost$variance, total_var, tolerance = 1e-12)
  }
})

test_that("the draw is reproducible with set.seed(), linear, and follows the matrices", {
  tp <- tiny_vars_plan(11, strata = TRUE)
  plan <- tp$plan
  set.seed(4)
  d1 <- pram_draw(plan)
  set.seed(4)
  d2 <- pram_draw(plan)
  expect_identical(d1, d2)
  expect_identical(dim(d1), c(nrow(tp$data), 2L))
  # one uniform per record and variable, inverse CDF of the record's column
  set.seed(4)
  u <- matrix(stats::runif(2 * nrow(tp$data)), ncol = 2, byrow = TRUE)
  cell <- tp$cells$cell_id
  ref <- vapply(1:2, function(v) {
    vapply(seq_along(cell), function(r) {
      m <- plan$matrices[[plan$stratum_of_cell[cell[r]]]][[plan$vars[v]]]
      col <- m[, plan$codes[[plan$vars[v]]][cell[r]]]
      which(u[r, v] < cumsum(col))[1]
    }, integer(1))
  }, integer(nrow(tp$data)))
  expect_equal(unname(d1), ref)
})

test_that("pram_apply() on a per-variable plan changes only the perturbed keys", {
  tp <- tiny_vars_plan(12, strata = FALSE)
  set.seed(1)
  out <- pram_apply(tp$data, c("a", "b", "s", "k"), tp$plan)
  expect_identical(out$s, tp$data$s)
  expect_identical(out$k, tp$data$k)
  expect_identical(levels(out$a), levels(tp$data$a))
  expect_type(out$b, "integer")
  set.seed(1)
  codes <- pram_draw(tp$plan)
  expect_identical(as.integer(out$a), codes[, "a"])
})

test_that("released frequencies of a large release agree with E(S | T)", {
  set.seed(8)
  n <- 20000
  df <- data.frame(a = factor(sample(c("p", "q", "r"), n, TRUE, c(5, 3, 1))), b = sample(1:3, n, TRUE))
  cf <- cell_frequencies(df, c("a", "b"))
  plan <- pram_plan_vars(cf, list(a = pram_matrix_argus(c("p", "q", "r"), 0.8), b = random_stochastic(3)))
  ex <- sdcRisk:::plan_moments(plan)
  set.seed(9)
  out <- pram_apply(df, c("a", "b"), plan)
  s <- tabulate(cell_frequencies(rbind(df[1, ], out), c("a", "b"))$cell_id[-1], nrow(cf$cells))
  z <- (s - ex$mean) / sqrt(ex$var)
  expect_true(all(abs(z) < 5), info = paste(round(z, 2), collapse = " "))
})

test_that("category moments of one perturbed variable (release_utility) match the explicit sums", {
  tp <- tiny_vars_plan(21, strata = TRUE)
  plan <- tp$plan
  t <- plan$cells$cells$count
  got <- sdcRisk:::core_call(sdcRisk:::cpp_category_moments, sdcRisk:::engine_plan(plan), integer(), 4L, 2L)
  q <- vapply(seq_along(t), function(i) plan$matrices[[plan$stratum_of_cell[i]]]$b[, plan$codes$b[i]], numeric(4))
  expect_equal(got$mean, drop(q %*% t), ignore_attr = TRUE)
  expect_equal(got$var, drop((q * (1 - q)) %*% t), ignore_attr = TRUE)
})

test_that("simulate_release() on a per-variable plan agrees with the exact moments", {
  tp <- tiny_vars_plan(31, strata = TRUE)
  set.seed(2)
  sim <- simulate_release(tp$data, c("a", "b", "s", "k"), tp$plan, reps = 3000)
  tab <- sim$cells
  A <- brute_alpha(tp$plan)
  t <- tp$plan$cells$cells$count
  expect_equal(tab$exact_share * sim$n, drop(A %*% t), tolerance = 1e-12)
  z <- (tab$mean_share - tab$exact_share) / tab$se_mean_share
  expect_true(all(abs(z[is.finite(z)]) < 5))
  expect_equal(sim$moved, sum(t * (1 - diag(A))), tolerance = 0.05)
})

# Brute-force R_j(a, t) (eq. 4.3): B stays with alpha(j, j); the other units
# of every cell land in c_j independently, so Y = S_j - [B stays] is a sum
# of Bernoulli counts whose distribution is convolved exactly.
brute_max_risk <- function(plan) {
  A <- brute_alpha(plan)
  t <- plan$cells$cells$count
  best <- -Inf
  for (j in seq_along(t)) {
    pmf <- 1
    for (i in seq_along(t)) {
      n_units <- t[i] - (i == j)
      for (u in seq_len(n_units)) pmf <- c(pmf * (1 - A[j, i]), 0) + c(0, pmf * A[j, i])
    }
    stay <- A[j, j]
    for (a in seq_len(length(pmf))) {
      p_a <- stay * pmf[a] + (1 - stay) * (if (a + 1 <= length(pmf)) pmf[a + 1] else 0)
      if (p_a > 0) best <- max(best, stay * pmf[a] / (a * p_a))
    }
  }
  best
}

test_that("pram_release() certifies its release with the exact maximum risk (brute force)", {
  for (seed in 1:3) {
    set.seed(seed)
    n <- 30
    df <- data.frame(a = factor(sample(c("p", "q", "r"), n, TRUE)), b = sample(1:3, n, TRUE),
                     s = sample(c("x", "y"), n, TRUE))
    set.seed(seed)
    rel <- pram_release(df, c("a", "b", "s"), vars = c("a", "b"), strata = "s", pd = 0.6, alpha = 0.7)
    expect_s3_class(rel, "sdc_pram_release")
    expect_equal(rel$certificate$risk, brute_max_risk(rel$plan), tolerance = 1e-9, info = paste("seed", seed))
    # every matrix is recorded, per stratum and variable
    expect_identical(rel$plan$stratum_labels, pram_strata(rel$cells, "s")$label)
    expect_length(rel$plan$matrices, 2)
    # only the perturbed keys change, and the recorded codes are the release
    expect_identical(rel$data$s, df$s)
    expect_identical(as.integer(rel$data$a), unname(rel$new_codes[, "a"]))
    expect_identical(sum(rel$data$a != df$a | rel$data$b != df$b), rel$certificate$records_changed)
  }
})

test_that("pram_release() is reproducible with set.seed()", {
  keys <- c("sex", "race", "marital")
  set.seed(7)
  r1 <- pram_release(pums_md[1:500, ], keys, vars = c("race", "marital"), strata = "sex")
  set.seed(7)
  r2 <- pram_release(pums_md[1:500, ], keys, vars = c("race", "marital"), strata = "sex")
  expect_identical(r1$data, r2$data)
  expect_identical(r1$plan$matrices, r2$plan$matrices)
  expect_snapshot(print(r1))
})

test_that("release_risk() and release_utility() on a per-variable release", {
  keys <- c("sex", "race", "marital")
  set.seed(3)
  rel <- pram_release(pums_md[1:800, ], keys, vars = c("race", "marital"), pd = 0.7)
  rr <- release_risk(rel)
  expect_s3_class(rr, "sdc_release_risk")
  all_row <- rr$table[rr$table$tau == "all" & rr$table$tau_star == "all", ]
  # the empirical mean correct-match probability over the units at risk
  cells <- rel$cells
  s_new <- tabulate(rel$new_cell, nrow(cells$cells))
  stay <- sdcRisk:::plan_cost(rel$plan)$stay
  old <- cells$cell_id
  unit <- which(cells$cells$count[old] <= 2 | stay[old] < 1)
  p <- ifelse(!is.na(rel$new_cell[unit]) & rel$new_cell[unit] == old[unit], 1 / pmax(s_new[old[unit]], 1), 0)
  expect_equal(all_row$mean, mean(p))
  expect_equal(rr$certificate$risk, rel$certificate$risk)
  u <- release_utility(rel, list("race", "marital", c("race", "marital")))
  v <- u$variance$marital
  t <- rel$plan$cells$cells$count
  q <- vapply(seq_along(t), function(i) rel$plan$matrices[[1]]$marital[, rel$plan$codes$marital[i]], numeric(length(rel$plan$levels$marital)))
  expect_equal(v$perturbation_var, drop((q * (1 - q)) %*% t), ignore_attr = TRUE)
  expect_equal(u$variance$race$original, as.vector(table(factor(pums_md$race[1:800], levels = rel$plan$levels$race))))
})

test_that("pram_release() certifies for an intruder who knows only some keys", {
  keys <- c("sex", "race", "marital")
  set.seed(5)
  rel <- pram_release(pums_md[1:600, ], keys, vars = c("race", "marital"), known = c("sex", "race"))
  expect_identical(rel$certificate$known, c("sex", "race"))
  expect_equal(rel$certificate$risk, max_match_risk(rel$plan, known = c("sex", "race"))$risk)
  expect_error(pram_release(pums_md[1:600, ], keys, vars = "race", known = "age"), class = "sdcRisk_error_known")
})

test_that("moments and costs of a per-variable plan on one key equal those of the block-diagonal explicit plan", {
  set.seed(13)
  # every (a, b) combination occurs, so each b-group is a block over all of a's categories
  df <- data.frame(a = rep(c("p", "q", "r", "s"), 6), b = rep(1:3, each = 8))
  df <- df[c(seq_len(nrow(df)), sample(nrow(df), 30, TRUE)), ]
  cf <- cell_frequencies(df, c("a", "b"))
  pa <- random_stochastic(4)
  dimnames(pa) <- list(c("p", "q", "r", "s"), c("p", "q", "r", "s"))
  vplan <- pram_plan_vars(cf, list(a = pa))
  blocks <- split(seq_len(nrow(cf$cells)), cf$cells$b)
  bplan <- pram_plan(cf, unname(blocks), matrix = lapply(blocks, function(ids) {
    unname(pa[as.character(cf$cells$a[ids]), as.character(cf$cells$a[ids])])
  }))
  vm <- sdcRisk:::plan_moments(vplan)
  bm <- sdcRisk:::plan_moments(bplan)
  expect_equal(vm$mean, bm$mean, tolerance = 1e-13)
  expect_equal(vm$var, bm$var, tolerance = 1e-13)
  vc <- sdcRisk:::plan_cost(vplan)
  bc <- sdcRisk:::plan_cost(bplan)
  expect_equal(c(vc$changed, vc$variance), c(bc$changed, bc$variance), tolerance = 1e-13)
  cat_a <- match(cf$cells$a, c("p", "q", "r", "s"))
  expect_equal(
    sdcRisk:::plan_category_moments(vplan, "a")$perturbation_var,
    sdcRisk:::plan_category_moments(bplan, "a")$perturbation_var,
    tolerance = 1e-13
  )
})

test_that("a per-variable release's certificate prints as a certificate", {
  set.seed(4)
  df <- data.frame(a = sample(c("x", "y", "z"), 200, TRUE), b = sample(1:5, 200, TRUE))
  rel <- pram_release(df, c("a", "b"), vars = "a", pd = 0.8)
  expect_s3_class(rel$certificate, "sdc_pram_certificate")
  expect_match(capture.output(print(rel$certificate))[1], "per-variable PRAM of a")
  expect_equal(rel$certificate$risk, max_match_risk(rel$plan)$risk)
})

test_that("a per-variable release, its summary and certificate print within 80 columns (issue 37)", {
  keys <- c("sex", "age", "race", "marital", "puma")
  set.seed(4)
  rel <- pram_release(pums_md[1:3000, ], keys, vars = c("race", "marital"), pd = 0.8,
                      population = cell_frequencies(pums_md, keys), target_in_file = "unknown")
  outs <- list(format(rel), format(summary(rel)), format(rel$certificate))
  for (out in outs) expect_true(all(nchar(out) <= 80), info = out[nchar(out) > 80][1])
  cert <- rel$certificate
  # the cell with T and a on a line, its keys under it
  at <- grep("^  at cell ", outs[[1]])
  expect_identical(outs[[1]][at], sprintf("  at cell %d (T = %d), a = %d:", cert$cell, cert$count, cert$a))
  expect_match(outs[[1]][at + 1], paste0("^    sex = ", format(cert$cell_keys$sex), ", age = "))
  expect_match(certificate_text(outs[[1]]), "for a target who may not be in the file (population counts known", fixed = TRUE)
})

test_that("pram_release() checks strata as pram_plan_vars() does", {
  df <- data.frame(a = c("x", "y", "y", "z"), b = c(1, 1, 2, 2))
  expect_error(pram_release(df, c("a", "b"), vars = "a", strata = "zz"), class = "sdcRisk_error_strata")
  expect_error(pram_release(df, c("a", "b"), vars = "a", strata = c("b", "b")), class = "sdcRisk_error_strata")
  expect_error(pram_release(df, c("a", "b"), vars = c("a", "b"), strata = "b"), class = "sdcRisk_error_strata")
})

test_that("summary() of a per-variable release counts changes per variable, observed and expected", {
  keys <- c("sex", "race", "marital")
  d <- pums_md[1:3000, keys]
  set.seed(4)
  rel <- pram_release(d, keys, vars = c("race", "marital"), strata = "sex", pd = 0.7)
  s <- summary(rel)
  expect_s3_class(s, "summary.sdc_pram_release")
  # observed: records whose released value differs from the original one
  expect_equal(s$vars$changed, c(sum(rel$data$race != d$race), sum(rel$data$marital != d$marital)))
  # expected: the diagonal of each stratum's matrix, by brute force over records
  for (v in c("race", "marital")) {
    keep <- vapply(seq_len(nrow(d)), function(i) {
      st <- match(paste0("sex=", d$sex[i]), rel$plan$stratum_labels)
      p <- rel$plan$matrices[[st]][[v]]
      p[as.character(d[[v]][i]), as.character(d[[v]][i])]
    }, numeric(1))
    expect_equal(s$vars$expected_changed[s$vars$variable == v], sum(1 - keep))
    expect_equal(s$vars$smallest_keep[s$vars$variable == v], min(keep))
  }
  out <- format(s)
  expect_true(any(grepl("Perturbed variables", out)))
  expect_true(any(grepl("race", out) & grepl("marital", out[grepl("marital", out)][1])))
  expect_output(print(s), "Records changed in any variable")
})

test_that("one perturbed variable: its expected changes are the release's", {
  keys <- c("sex", "race")
  set.seed(2)
  rel <- pram_release(pums_md[1:2000, ], keys, vars = "race", pd = 0.8)
  expect_equal(summary(rel)$vars$expected_changed, rel$certificate$expected_changed)
})

test_that("plot() of a per-variable release draws the risk curves with the certified maximum", {
  keys <- c("sex", "race", "marital")
  set.seed(1)
  rel <- pram_release(pums_md[1:2000, ], keys, vars = c("race", "marital"), pd = 0.8)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_invisible(out <- plot(rel))
  expect_identical(out, rel)
  expect_invisible(plot(rel, n = 2, a_max = 4))
})

test_that("release_risk() of a per-variable release has no xi to print, and no group of 30 units gives NA", {
  keys <- c("sex", "race", "marital")
  set.seed(1)
  rel <- pram_release(pums_md[1:2000, ], keys, vars = c("race", "marital"), pd = 0.8)
  rr <- release_risk(rel)
  expect_false(any(grepl("xi = NA", format(rr))))
  expect_output(print(summary(rr)), "Certified maximum risk")
  expect_false(any(grepl("xi = NA", utils::capture.output(print(summary(rr))))))
  tiny <- pram_release(pums_md[1:25, ], keys, vars = "race", pd = 0.8)
  s <- expect_no_warning(summary(release_risk(tiny)))
  expect_true(is.na(s$largest_empirical))
  expect_output(print(s), "no group has 30 units")
})

test_that("pram_release() for a sample certifies the risk of a target who may not be in the file, and says so", {
  set.seed(3)
  pop <- pums_md[, c("sex", "race", "marital")]
  d <- pop[sample(nrow(pop), 3000), ]
  d$w <- nrow(pop) / nrow(d)
  counts <- cell_frequencies(pop, c("sex", "race", "marital"))
  set.seed(4)
  rel <- pram_release(d, c("sex", "race", "marital"), vars = c("race", "marital"), pd = 0.8,
                      population = counts, target_in_file = "unknown")
  want <- max_match_risk(rel$plan, population = counts, target_in_file = "unknown")
  expect_identical(rel$certificate$risk, want$risk)
  expect_identical(rel$certificate$target_in_file, "unknown")
  expect_true(rel$certificate$risk < max_match_risk(rel$plan)$risk)
  # the same draws as the release for a target known to be in the file
  set.seed(4)
  in_file <- pram_release(d, c("sex", "race", "marital"), vars = c("race", "marital"), pd = 0.8)
  expect_identical(in_file$data, rel$data)
  expect_null(in_file$certificate$sample)
  # an estimate from the weights column, labelled as such
  set.seed(4)
  est <- pram_release(d, c("sex", "race", "marital"), vars = c("race", "marital"), pd = 0.8,
                      population = population_model("negbin", weights = "w"), target_in_file = "unknown")
  expect_false(est$certificate$sample$exact)
  expect_snapshot({
    rel
    est$certificate
    summary(rel)
  })
})
