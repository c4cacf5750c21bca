# Helpers of the tests of estimate_table() and estimate_glm(): brute-force
# expectations over every release of a tiny file.

# The publication of another release of the same plan: only the released
# margins differ.
with_margins <- function(pub, data) {
  for (k in seq_along(pub$keys)) {
    key <- pub$keys[[k]]
    code <- match(as.character(data[[key$name]]), key$categories)
    pub$records$margins[[k]] <- list(counts = as.numeric(tabulate(code, length(key$categories))),
                                     other = as.numeric(sum(is.na(code))))
  }
  pub
}

# The exact expectation of the moment estimates and of their variance
# estimates, and the exact variance of the estimates, over every release.
exact_moments <- function(releases, pub, ...) {
  # a negative variance estimate (a warning) is expected in some releases
  quiet <- function(expr) {
    withCallingHandlers(expr, sdcRisk_warning_variance_negative = function(w) invokeRestart("muffleWarning"))
  }
  est <- lapply(releases, function(r) {
    quiet(estimate_table(r$data, with_margins(pub, r$data), ..., estimator = "moment"))
  })
  prob <- vapply(releases, `[[`, 0, "prob")
  e <- sapply(est, `[[`, "estimate")
  # the unbiased variance estimates, before negative ones are shown as 0
  v <- sapply(est, attr, "variance")
  mean_est <- drop(e %*% prob)
  list(
    table = est[[1]], mean = mean_est, var = drop(((e - mean_est)^2) %*% prob), mean_var = drop(v %*% prob),
    total_prob = sum(prob)
  )
}

# The statistic of the original file, by the rows of `est`.
original_stat <- function(df, est, by, fun) {
  key <- function(d) do.call(paste, c(lapply(d[by], as.character), sep = "|"))
  split_rows <- split(df, factor(key(df), levels = unique(key(est))))
  vapply(split_rows, fun, 0)[key(est)]
}

# The full transition matrix over the cells of a block plan (dense; tiny
# plans only).
dense_p <- function(plan) {
  n <- nrow(plan$cells$cells)
  p <- diag(n)
  sizes <- diff(plan$block_start)
  for (b in seq_along(sizes)) {
    cells <- plan$block_cells[plan$block_start[b] + seq_len(sizes[b])]
    p[cells, cells] <- unname(pram_matrix(plan, b))
  }
  p
}

# Every release of `df` under `plan`, with its probability: a list of
# (released data, probability). Records outside the blocks never move.
all_releases <- function(df, keys, plan) {
  p <- dense_p(plan)
  cells <- plan$cells
  moving <- which(cells$cell_id %in% plan$block_cells)
  options <- lapply(moving, function(r) which(p[, cells$cell_id[r]] > 0))
  grid <- expand.grid(options)
  lapply(seq_len(nrow(grid)), function(i) {
    to <- unlist(grid[i, ])
    out <- df
    for (k in keys) out[[k]][moving] <- cells$cells[[k]][to]
    list(data = out, prob = prod(p[cbind(to, cells$cell_id[moving])]))
  })
}

# Every release of `df` under a per-variable plan, with its probability.
all_releases_vars <- function(df, plan) {
  cells <- plan$cells
  moving <- which(!is.na(cells$cell_id))
  vars <- plan$vars
  k <- lengths(plan$levels[vars])
  combos <- as.matrix(expand.grid(lapply(k, seq_len)))
  per_record <- lapply(moving, function(r) {
    cell <- cells$cell_id[r]
    m <- plan$matrices[[plan$stratum_of_cell[cell]]]
    prob <- apply(combos, 1, function(z) prod(vapply(seq_along(vars), function(j) {
      m[[vars[j]]][z[j], plan$codes[[vars[j]]][cell]]
    }, 0)))
    which_nonzero <- which(prob > 0)
    list(z = combos[which_nonzero, , drop = FALSE], p = prob[which_nonzero])
  })
  grid <- expand.grid(lapply(per_record, function(x) seq_along(x$p)))
  lapply(seq_len(nrow(grid)), function(i) {
    out <- df
    prob <- 1
    for (j in seq_along(moving)) {
      pick <- grid[i, j]
      prob <- prob * per_record[[j]]$p[pick]
      for (v in seq_along(vars)) out[[vars[v]]][moving[j]] <- plan$levels[[vars[v]]][per_record[[j]]$z[pick, v]]
    }
    list(data = out, prob = prob)
  })
}

# ---- Monte Carlo over draws of the same plan (test-estimate-coverage.R and
# bench/bench_estimate.R, which sources this file) ----------------------------

# An estimand of estimate_table(): its rows (the `by` values), estimates,
# standard errors, limits and estimator in a released file; the original
# file's value of each row (NA for rows of fewer than `min_count` original
# records, for which a normal interval is not meant) and its number of
# original records.
table_est <- function(family, by, ..., truth_fun, min_count = 20, name = paste(by, collapse = " x ")) {
  args <- list(...)
  key_of <- function(d) do.call(paste, c(lapply(d[by], as.character), sep = " x "))
  list(
    name = name, family = family,
    estimate = function(released, pub) {
      e <- suppressWarnings(do.call(estimate_table, c(list(released, pub, by = by), args)))
      data.frame(row = key_of(e), estimate = e$estimate, se = e$se, lower = e$lower, upper = e$upper,
                 estimator = e$estimator, outside = e$outside)
    },
    truth = function(data) {
      key <- key_of(data)
      out <- vapply(split(data, key), truth_fun, 0)
      out[table(key)[names(out)] < min_count] <- NA
      out
    },
    records = function(data) table(key_of(data))
  )
}

# An estimand of estimate_glm(): its coefficients with Wald intervals of
# the perturbation's standard error; the original file's glm() fit.
glm_est <- function(formula, family, name = deparse(formula)) {
  z <- stats::qnorm(0.975)
  list(
    name = name, family = "model",
    estimate = function(released, pub) {
      f <- estimate_glm(formula, released, pub, family = family)
      se <- sqrt(pmax(diag(vcov(f, "perturbation")), 0))
      data.frame(row = names(coef(f)), estimate = unname(coef(f)), se = unname(se),
                 lower = unname(coef(f) - z * se), upper = unname(coef(f) + z * se), estimator = "corrected",
                 outside = FALSE)
    },
    truth = function(data) {
      stats::coef(stats::glm(formula, data, family = family, control = stats::glm.control(epsilon = 1e-12)))
    },
    records = function(data) NULL
  )
}

# Draw `plan` `reps` times from `seed` and collect, for every estimand and
# row of every draw: the estimate, its standard error, limits and
# estimator, the original file's value (NA where left out), its number of
# original records (NA for a coefficient) and whether it is covered (not
# where the row has no estimate).
mc_draws <- function(data, keys, plan, pub, estimands, reps, seed) {
  set.seed(seed)
  truth <- lapply(estimands, function(e) e$truth(data))
  sizes <- lapply(estimands, function(e) e$records(data))
  draws <- lapply(seq_len(reps), function(r) {
    released <- pram_apply(data, keys, plan)
    p <- with_margins(pub, released)
    do.call(rbind, lapply(seq_along(estimands), function(i) {
      out <- estimands[[i]]$estimate(released, p)
      out$estimand <- estimands[[i]]$name
      out$family <- estimands[[i]]$family
      out$truth <- unname(truth[[i]][out$row])
      out$records <- if (is.null(sizes[[i]])) NA_real_ else as.numeric(sizes[[i]][out$row])
      out$id <- paste(i, out$row)
      out$draw <- r
      out
    }))
  })
  all <- do.call(rbind, draws)
  all$records[is.na(all$records) & all$family != "model"] <- 0
  all$covered <- all$lower <= all$truth & all$truth <= all$upper
  # a row the release cannot estimate (NA, with a warning) gives its user
  # no interval: it covers nothing
  all$covered[is.na(all$lower) & !is.na(all$truth)] <- FALSE
  all
}
