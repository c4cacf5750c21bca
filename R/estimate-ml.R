# The maximum likelihood estimator where the moment estimator leaves the
# parameter space (estimate_table(), estimator = "auto" or "ml").
#
# The released records of one system (an IFPR or matrix block and a group
# of the non-key `by` columns; for a per-variable plan a stratum, the
# unperturbed keys of `by` and a group, over the combinations of the
# perturbed keys of `by`) are a sum of multinomials given the original
# counts N of its states: E(M) = P N. The multinomial likelihood
# sum_z M_z log (P N)_z, maximized over N >= 0 with sum N = sum M, is
# maximized by the moment estimator Q M when that is non-negative (van den
# Hout and van der Heijden 2002), and otherwise by EM,
#   N <- N * P' (M / (P N)),
# here accelerated by SQUAREM (Varadhan and Roland 2008), which keeps EM's
# fixed point. Weighted counts and amounts (w y >= 0) enter as if they were
# counts. Its standard error is the delta method's given the original file:
# N solves sum_z M_z P[z, x] / (P N)_z = 1 for the states x with N_x > 0,
# so dN/dM = (P_S' D(M / lambda^2) P_S)^-1 P_S' D(1 / lambda), lambda = P N
# (which is Q when every state is free: the moment estimator's variance in
# the interior), and the covariance of M given the original file is
# sum_x K_x (D(P_x) - P_x P_x'), K_x the sum of squared weights (or amounts)
# of state x, estimated by N_x times their ratio to the weights (amounts) in
# the system.

# Systems larger than this are left to the moment estimator (with a
# warning): the delta method needs a dense matrix over the states, and EM a
# product with it per iteration; 2,000 states take a few seconds.
estimate_ml_max_states <- 2000L

# EM steps at most, and the relative change of the log-likelihood below
# which it stops.
estimate_ml_max_iter <- 5000L
estimate_ml_tol <- 1e-12

# The ML fit of one system: N >= 0 (sum N = sum M) maximizing the
# multinomial log-likelihood of M under E(M) = P N, by EM accelerated by
# SQUAREM (step lengths alpha <= -1, reset to an EM step when the
# likelihood falls).
ml_fit <- function(p, m) {
  n <- sum(m)
  k <- ncol(p)
  if (n <= 0) return(rep(0, k))
  pos <- m > 0
  mp <- m[pos]
  pp <- p[pos, , drop = FALSE]
  # only the released states with records enter the likelihood
  loglik <- function(x) sum(mp * log(drop(pp %*% x)))
  em <- function(x) x * drop(crossprod(pp, mp / drop(pp %*% x)))
  x <- rep(n / k, k)
  ll <- loglik(x)
  for (i in seq_len(estimate_ml_max_iter)) {
    x1 <- em(x)
    x2 <- em(x1)
    r <- x1 - x
    v <- x2 - x1 - r
    sv <- sum(v^2)
    alpha <- if (sv > 0) min(-1, -sqrt(sum(r^2) / sv)) else -1
    xa <- x - 2 * alpha * r + alpha^2 * v
    xa[xa < 0] <- 0
    xa <- em(xa * (n / sum(xa)))
    ll_a <- loglik(xa)
    ll_2 <- loglik(x2)
    if (!is.finite(ll_a) || ll_a < ll_2) {
      xa <- x2
      ll_a <- ll_2
    }
    done <- abs(ll_a - ll) <= estimate_ml_tol * max(1, abs(ll))
    x <- xa
    ll <- ll_a
    if (done) break
  }
  # states whose count EM drives to zero are at the boundary
  x[x < 1e-9 * n] <- 0
  x * (n / sum(x))
}

# dN/dM at the fit: zero rows for the states at the boundary.
ml_jacobian <- function(p, m, x) {
  k <- ncol(p)
  s <- which(x > 0)
  jac <- matrix(0, k, nrow(p))
  if (length(s) == 0) return(jac)
  lam <- drop(p %*% x)
  ps <- p[, s, drop = FALSE]
  inv_lam <- ifelse(lam > 0, 1 / lam, 0)
  h <- crossprod(ps, ps * (m * inv_lam^2))
  jac[s, ] <- solve(h, t(ps * inv_lam))
  jac
}

# Covariance of M given the original file with weights (amounts) K of the
# states: sum_x K_x (D(P_x) - P_x P_x').
ml_released_cov <- function(p, k1, k2 = k1) {
  diag(drop(p %*% k1), nrow(p)) - p %*% (t(p) * k2)
}

# The ML estimates and variances of the rows `rows` (indices of sums) for
# one statistic, from the systems of the publication's kind. Returns a list
# with `estimate`, `var` and `count` for those rows, and `kept`: the rows
# whose systems are too large (their moment estimate stays).
estimate_ml <- function(sums, spec, rows, call) {
  systems <- sums$ml_systems(sums$d[rows], sums$g[rows])
  too_large <- vapply(systems, function(s) ncol(s$p) > estimate_ml_max_states, logical(1))
  amounts <- ml_amounts(spec)
  fits <- lapply(systems[!too_large], ml_system, amounts = amounts)
  out <- ml_rows(fits, systems[!too_large], rows, sums, amounts, spec)
  out$kept <- logical(length(rows))
  if (any(too_large)) {
    bad <- unique(unlist(lapply(systems[too_large], `[[`, "rows")))
    out$kept[bad] <- TRUE
    warn_sdc(c("{length(bad)} row{?s} outside the parameter space keep their moment estimate.",
               "i" = "Their systems have more than {fmt_int(estimate_ml_max_states)} states, too many for the maximum likelihood estimator."),
             "ml_too_large", call = call)
  }
  out
}

# A system of the maximum likelihood estimator: its transition matrix `p`,
# the sums of its records' moments (cpp_group_moments(): w, w^2, or w, w y,
# w^2, w^2 y, w^2 y^2) by released state (`state` the state of every row of
# `mom`), and the rows of the table it serves with the indicator `f` of
# each row's states.
ml_system_parts <- function(p, state, mom, rows, f) {
  list(p = p, mom = sum_by(mom, state, ncol(p)), rows = rows, f = f)
}

# The non-negative amounts the likelihood is fitted to, as linear
# combinations of the moments: a count fits w; a total of a non-negative
# value fits w y; a mean fits a = w (y - lo) and b = w (hi - y), lo and hi
# the range of the value, and is lo + (hi - lo) A / (A + B), inside the
# range whatever the fits. `lin` maps the first moments (w, w y) to the
# amounts, `quad` the second moments (w^2, w^2 y, w^2 y^2) to the products
# of amounts (a^2, b^2, a b).
ml_amounts <- function(spec) {
  if (is.null(spec$y)) return(list(lin = matrix(1), quad = list(matrix(1))))
  if (spec$stat == "total") return(list(lin = matrix(c(0, 1), 2), quad = list(c(0, 0, 1))))
  lo <- min(spec$y, na.rm = TRUE)
  hi <- max(spec$y, na.rm = TRUE)
  list(
    lin = cbind(a = c(-lo, 1), b = c(hi, -1)),
    quad = list(c(lo^2, -2 * lo, 1), c(hi^2, -2 * hi, 1), c(-lo * hi, hi + lo, -1)),
    lo = lo, hi = hi
  )
}

# One system's ML fits of its amounts, their Jacobians and the covariances
# of its released amounts given the original file (the squared amounts of
# a state estimated from its fitted amount and their ratio in the system).
ml_system <- function(s, amounts) {
  nl <- ncol(amounts$lin)
  first <- s$mom[, seq_len(nrow(amounts$lin)), drop = FALSE] %*% amounts$lin
  second <- s$mom[, nrow(amounts$lin) + seq_along(amounts$quad[[1]]), drop = FALSE]
  ratio <- function(num, den) if (den > 0) num / den else 0
  fit <- lapply(seq_len(nl), function(j) ml_fit(s$p, first[, j]))
  jac <- lapply(seq_len(nl), function(j) ml_jacobian(s$p, first[, j], fit[[j]]))
  # products of amounts: a^2, then b^2 and a b for a mean
  pairs <- if (nl == 1) list(c(1, 1)) else list(c(1, 1), c(2, 2), c(1, 2))
  cov <- lapply(seq_along(pairs), function(i) {
    j <- pairs[[i]][1]
    k_x <- fit[[j]] * ratio(sum(second %*% amounts$quad[[i]]), sum(first[, j]))
    ml_released_cov(s$p, k_x)
  })
  list(fit = fit, jac = jac, cov = cov)
}

# The rows' ML estimates: the direct records plus, for every system of a
# row, the fitted amounts of the row's states; their variances and
# covariance by the delta method.
ml_rows <- function(fits, systems, rows, sums, amounts, spec) {
  nl <- ncol(amounts$lin)
  total <- sums$direct_lin[rows, seq_len(nrow(amounts$lin)), drop = FALSE] %*% amounts$lin
  v <- matrix(0, length(rows), if (nl == 1) 1 else 3)
  for (i in seq_along(fits)) {
    f <- fits[[i]]
    s <- systems[[i]]
    for (j in seq_along(s$rows)) {
      r <- s$rows[j]
      ind <- s$f[[j]]
      grad <- lapply(f$jac, function(jac) drop(crossprod(ind, jac)))
      total[r, ] <- total[r, ] + vapply(f$fit, function(x) sum(ind * x), 0)
      v[r, 1] <- v[r, 1] + sum(grad[[1]] * drop(f$cov[[1]] %*% grad[[1]]))
      if (nl == 2) {
        v[r, 2] <- v[r, 2] + sum(grad[[2]] * drop(f$cov[[2]] %*% grad[[2]]))
        v[r, 3] <- v[r, 3] + sum(grad[[1]] * drop(f$cov[[3]] %*% grad[[2]]))
      }
    }
  }
  ml_stat(total, v, amounts, spec)
}

# The statistic from the fitted amounts.
ml_stat <- function(total, v, amounts, spec) {
  if (ncol(total) == 1) {
    scale <- if (spec$stat == "proportion" && is.null(spec$y)) spec$n_total else 1
    count <- if (is.null(spec$y)) total[, 1] else rep(NA_real_, nrow(total))
    return(list(estimate = total[, 1] / scale, var = v[, 1] / scale^2, count = count))
  }
  a <- total[, 1]
  b <- total[, 2]
  width <- amounts$hi - amounts$lo
  s <- a + b
  # d/da and d/db of lo + width a / (a + b)
  ga <- width * b / s^2
  gb <- -width * a / s^2
  list(estimate = amounts$lo + width * a / s, var = ga^2 * v[, 1] + gb^2 * v[, 2] + 2 * ga * gb * v[, 3],
       count = s / width)
}

# Rows whose moment estimate is outside the parameter space: a negative
# count; a negative total of a non-negative value; a mean whose count is
# not positive or that lies outside the range of the value.
outside_parameter_space <- function(res, spec) {
  if (is.null(spec$y)) {
    # (which() leaves NA out)
    return(which(res$count < 0))
  } else {
    lo <- min(spec$y, na.rm = TRUE)
    hi <- max(spec$y, na.rm = TRUE)
    bad <- if (spec$stat == "total") {
      lo >= 0 & res$estimate < 0
    } else {
      res$count <= 0 | res$estimate < lo | res$estimate > hi
    }
  }
  which(bad & !is.na(bad))
}
