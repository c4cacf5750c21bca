# estimate_table() for per-variable plans (one matrix per perturbed key and
# stratum): brute force over every release of a tiny file, and the inverse
# of the dense Kronecker product over all combinations of the categories.

random_stochastic_matrix <- function(k) {
  m <- matrix(stats::runif(k * k), k) + diag(2, k)
  sweep(m, 2, colSums(m), "/")
}

test_that("brute force: per-variable plans with strata give unbiased estimates and variance estimates", {
  df <- data.frame(
    a = c("x", "y", "x", "y", "x"), b = c("m", "m", "n", "n", "m"), s = c("S", "S", "T", "T", "T"),
    g = c(1, 2, 2, 1, 1), y = c(2, 7, 1, 4, 3), w = c(1, 2, 1.5, 1, 3)
  )
  df$a[5] <- NA # never perturbed (na = "exclude")
  set.seed(4)
  cf <- cell_frequencies(df, c("a", "b", "s"))
  mats <- list("s=S" = list(a = random_stochastic_matrix(2), b = random_stochastic_matrix(2)),
               "s=T" = list(a = random_stochastic_matrix(2), b = random_stochastic_matrix(2)))
  plan <- pram_plan_vars(cf, mats, strata = "s")
  released <- pram_apply(df, c("a", "b", "s"), plan)
  pub <- publish_plan(plan, released = released)
  rel <- all_releases_vars(df, plan)
  expect_equal(sum(vapply(rel, `[[`, 0, "prob")), 1, tolerance = 1e-12)
  cases <- list(
    list(by = c("a", "g"), args = list(), fun = nrow),
    list(by = c("b", "s"), args = list(weights = "w"), fun = function(d) sum(d$w)),
    list(by = c("a", "b"), args = list(value = "y", stat = "total", weights = "w"), fun = function(d) sum(d$w * d$y))
  )
  for (case in cases) {
    m <- do.call(exact_moments, c(list(rel, pub, by = case$by), case$args))
    truth <- original_stat(df, m$table, case$by, case$fun)
    truth[is.na(truth)] <- 0
    expect_equal(m$mean, unname(truth), tolerance = 1e-10, info = paste(case$by, collapse = ","))
    expect_equal(m$mean_var, m$var, tolerance = 1e-10, info = paste(case$by, collapse = ","))
  }
})

# Dense reference: the inverse of the Kronecker product over every
# combination of the perturbed keys' categories, stratum by stratum, applied
# record by record for every row of `est`.
dense_vars_estimate <- function(plan, released, est, by, c1, c2) {
  vars <- plan$vars
  lev <- plan$levels
  combos <- expand.grid(lapply(lev[vars], seq_along))
  cell <- plan$cells$cell_id
  s <- plan$stratum_of_cell[cell]
  z <- lapply(vars, function(v) match(as.character(released[[v]]), lev[[v]]))
  zi <- match(do.call(paste, z), do.call(paste, combos))
  # expand.grid varies its first column fastest, as the last factor of a
  # Kronecker product
  inv <- lapply(plan$matrices, function(m) solve(Reduce(kronecker, rev(lapply(vars, function(v) m[[v]])))))
  t(vapply(seq_len(nrow(est)), function(i) {
    f <- rep(1, nrow(combos))
    sel <- !is.na(cell)
    for (v in by) {
      if (v %in% vars) f <- f * (lev[[v]][combos[[v]]] == as.character(est[[v]][i]))
      else sel <- sel & as.character(released[[v]]) == as.character(est[[v]][i])
    }
    sel <- which(sel)
    h <- vapply(sel, function(r) sum(inv[[s[r]]][, zi[r]] * f), 0)
    c(sum(c1[sel] * h), sum(c2[sel] * (h^2 - h)))
  }, numeric(2)))
}

# A file of keys a, b and stratum s, released by a per-variable plan of
# random matrices for a and b within s.
stratified_release <- function(n, w_max) {
  df <- data.frame(a = sample(c("p", "q", "r"), n, TRUE), b = sample(1:4, n, TRUE),
                   s = sample(c("u", "v"), n, TRUE), y = stats::rnorm(n), w = stats::runif(n, 1, w_max))
  cf <- cell_frequencies(df, c("a", "b", "s"))
  mats <- lapply(1:2, function(i) list(a = random_stochastic_matrix(3), b = random_stochastic_matrix(4)))
  names(mats) <- pram_strata(cf, "s")$label
  plan <- pram_plan_vars(cf, mats, strata = "s")
  released <- pram_apply(df, c("a", "b", "s"), plan)
  list(plan = plan, released = released, pub = publish_plan(plan, released = released))
}

test_that("per-variable estimates equal the inverse of the dense Kronecker product", {
  for (seed in 1:3) {
    set.seed(seed)
    sr <- stratified_release(400, 2)
    plan <- sr$plan
    released <- sr$released
    pub <- sr$pub
    for (by in list(c("a", "b"), c("b", "s"), "a")) {
      est <- estimate_table(released, pub, by = by, value = "y", stat = "total", weights = "w", estimator = "moment")
      ref <- dense_vars_estimate(plan, released, est, by, released$w * released$y, (released$w * released$y)^2)
      expect_equal(est$estimate, ref[, 1], tolerance = 1e-9, info = paste("seed", seed))
      expect_equal(attr(est, "variance"), ref[, 2], tolerance = 1e-9, info = paste("seed", seed))
    }
  }
})

test_that("a per-variable release of the ACS fixture: margins of one key match the key's own inverse", {
  ma <- load_acs("ma2019", values = TRUE)
  set.seed(11)
  rel <- pram_release(ma, c("SEX", "RAC1P", "MSP"), vars = "RAC1P", strata = "SEX", pd = 0.8)
  pub <- publish_plan(rel)
  est <- estimate_table(rel$data, pub, by = "RAC1P", estimator = "moment")
  # one key, two strata: Q of each stratum applied to its released counts
  expected <- 0
  for (s in seq_along(pub$plan$matrices)) {
    in_s <- as.character(rel$data$SEX) == pub$keys[[1]]$categories[pub$plan$strata_cells$codes$SEX[s]]
    counts <- tabulate(match(as.character(rel$data$RAC1P[in_s]), pub$keys[[2]]$categories), length(pub$keys[[2]]$categories))
    expected <- expected + drop(solve(pub$plan$matrices[[s]]$RAC1P) %*% counts)
  }
  expect_equal(est$estimate, expected, tolerance = 1e-9)
})

test_that("per-variable plans: strata and matrices checked", {
  set.seed(3)
  d <- pums_md[1:1000, ]
  rel <- pram_release(d, c("sex", "race", "marital"), vars = "race", strata = "sex")
  pub <- publish_plan(rel)
  moved <- rel$data
  # a record moved to the other stratum (sex is not perturbed), with margins
  # that hide it: the strata's numbers of records show it
  moved$sex[1] <- if (moved$sex[1] == "Male") "Female" else "Male"
  expect_error(estimate_table(moved, pub, by = "race"), class = "sdcRisk_error_publication_mismatch")
  expect_snapshot(error = TRUE, estimate_table(moved, with_margins(pub, moved), by = "race"))
  # a stratum the publication does not have
  tiny <- data.frame(k = c("a", "b", "a", "b", "a"), s1 = c("x", "x", "y", "y", "x"), s2 = c(1, 1, 1, 2, 2))
  cf <- cell_frequencies(tiny, c("k", "s1", "s2"))
  labels <- pram_strata(cf, c("s1", "s2"))$label
  mats <- stats::setNames(rep(list(list(k = matrix(c(0.8, 0.2, 0.3, 0.7), 2))), length(labels)), labels)
  plan <- pram_plan_vars(cf, mats, strata = c("s1", "s2"))
  released <- pram_apply(tiny, c("k", "s1", "s2"), plan)
  pub2 <- publish_plan(plan, released = released)
  released$s2[5] <- 1 # (x, 2) becomes (x, 1), present; (y, 2) becomes (x, 2)
  released$s1[4] <- "x"
  expect_error(estimate_table(released, with_margins(pub2, released), by = "k"),
               class = "sdcRisk_error_publication_mismatch")
  released$s1[3] <- "z"
  expect_error(estimate_table(released, pub2, by = "k"), class = "sdcRisk_error_publication_mismatch")
  bad <- pub
  bad$plan$matrices[[1]]$race[, 2] <- bad$plan$matrices[[1]]$race[, 1]
  expect_error(estimate_table(rel$data, bad, by = "race"), class = "sdcRisk_error_singular_block")
  # race not in by: its matrices do not matter
  expect_identical(estimate_table(rel$data, bad, by = "marital")$estimator, rep("exact", 5))
})

test_that("the variance function of a row (of its interval) equals the dense Kronecker product's with the moment estimates cut at 0", {
  for (seed in 1:3) {
    set.seed(seed)
    n <- 60
    sr <- stratified_release(n, 3)
    plan <- sr$plan
    released <- sr$released
    pub <- sr$pub
    vars <- plan$vars
    lev <- plan$levels
    for (by in list(c("a", "b"), c("a", "b", "s"), "a", c("b", "s"))) {
      rec <- list(codes = released_codes(pub, released), g = rep(1L, n), n_groups = 1L, w = released$w, y = NULL)
      sums <- estimate_sums(pub, rec, by)
      rows <- as.data.frame(lapply(seq_along(by), function(j) {
        k <- pub$keys[[match(by[j], vapply(pub$keys, `[[`, "", "name"))]]
        k$categories[sums$d_codes[[j]][sums$d]]
      }), col.names = by)
      parts <- sums$plug_var(1L, 1L)
      plug <- parts$outside
      pv <- intersect(by, vars)
      # one record of the row: the variance of h(Z) given a cell x of the
      # row (the same for each of them) of the Kronecker product of every
      # perturbed key, the strata weighed by their records
      own_ref <- vapply(seq_len(nrow(rows)), function(i) {
        combos <- expand.grid(lapply(lev[vars], seq_along))
        f <- rep(1, nrow(combos))
        for (v in pv) f <- f * (lev[[v]][combos[[v]]] == as.character(rows[[v]][i]))
        there <- if ("s" %in% by) c("u", "v") == as.character(rows$s[i]) else c(TRUE, TRUE)
        gs <- vapply(1:2, function(st) {
          p <- Reduce(kronecker, rev(lapply(vars, function(v) plan$matrices[[st]][[v]])))
          h <- solve(t(p), f)
          g <- drop(crossprod(p, h^2 - h))[f == 1]
          expect_equal(g, rep(g[1], length(g)), tolerance = 1e-9)
          g[1]
        }, 0)
        sizes <- as.numeric(table(factor(released$s, c("u", "v"))))
        sum((sizes * gs)[there]) / sum(sizes[there])
      }, 0)
      # one unit of a weighted count: one record's times sum w^2 / sum w
      expect_equal(parts$own, own_ref * sum(released$w^2) / sum(released$w), tolerance = 1e-9,
                   info = paste("seed", seed, paste(by, collapse = ",")))
      ref <- vapply(seq_len(nrow(rows)), function(i) {
        sum(vapply(1:2, function(st) {
          if ("s" %in% by && c("u", "v")[st] != rows$s[i]) return(0)
          # the perturbed keys of `by`, their Kronecker product (the first
          # key varying fastest) and the released sums of w^2 over them
          combos <- expand.grid(lapply(lev[pv], seq_along))
          p <- Reduce(kronecker, rev(lapply(pv, function(v) plan$matrices[[st]][[v]])))
          at <- released$s == c("u", "v")[st]
          zi <- match(do.call(paste, lapply(pv, function(v) match(as.character(released[[v]][at]), lev[[v]]))),
                      do.call(paste, combos))
          s2 <- vapply(seq_len(nrow(combos)), function(j) sum(released$w[at][zi == j]^2), 0)
          c2 <- pmax(drop(solve(p, s2)), 0)
          f <- rep(1, nrow(combos))
          for (v in pv) f <- f * (lev[[v]][combos[[v]]] == as.character(rows[[v]][i]))
          h <- solve(t(p), f)
          # the records outside the row's cells
          sum((c2 * drop(crossprod(p, h^2 - h)))[f == 0])
        }, 0))
      }, 0)
      expect_equal(plug, ref, tolerance = 1e-9, info = paste("seed", seed, paste(by, collapse = ",")))
    }
  }
})
