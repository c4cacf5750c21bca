# The damage measures against sums over every pair of cells of the plan's
# full transition matrix (block plans) or over every combination of the
# keys' categories (per-variable plans).

# All four measures from the transition probabilities p(i <- j) of the
# cells, one pair at a time.
reference_damage <- function(counts, key_values, p, weights, ordered) {
  n <- length(counts)
  rec <- keys <- dist <- var <- 0
  for (j in seq_len(n)) {
    var <- var + counts[j] * (1 - sum(p[, j]^2))
    for (i in seq_len(n)) {
      if (i == j || p[i, j] == 0) next
      flow <- counts[j] * p[i, j]
      rec <- rec + flow
      for (k in names(weights)) {
        a <- key_values[[k]][i]
        b <- key_values[[k]][j]
        same <- (is.na(a) && is.na(b)) || (!is.na(a) && !is.na(b) && a == b)
        if (same) next
        keys <- keys + flow * weights[[k]]
        d <- if (k %in% ordered && !is.na(a) && !is.na(b)) abs(as.numeric(a) - as.numeric(b)) else 1
        dist <- dist + flow * weights[[k]] * d
      }
    }
  }
  c(records = rec, keys = keys, distance = dist, variance = var)
}

# The plan's transition matrix over all its cells.
full_matrix <- function(plan) {
  n <- nrow(plan$cells$cells)
  p <- diag(n)
  for (b in seq_along(plan$theta)) {
    ids <- as.integer(rownames(pram_matrix(plan, b)))
    p[ids, ids] <- pram_matrix(plan, b)
  }
  p
}

test_that("pram_damage equals sums over every pair of cells, for IFPR and matrix blocks", {
  for (seed in 1:15) {
    set.seed(seed)
    n <- sample(30:80, 1)
    df <- data.frame(
      age = sample(c(20:30, NA), n, TRUE),
      edu = factor(sample(c("low", "mid", "high"), n, TRUE), levels = c("low", "mid", "high"), ordered = TRUE),
      sex = sample(c("F", "M"), n, TRUE)
    )
    cf <- cell_frequencies(df, c("age", "edu", "sex"), na = "category")
    ids <- sample(nrow(cf$cells))
    nb <- length(ids) %/% 4
    blocks <- split(ids[seq_len(4 * nb)], rep(seq_len(nb), each = 4))
    counts <- cf$cells$count
    theta <- vapply(blocks, function(b) min(counts[b]) * stats::runif(1), numeric(1))
    mats <- lapply(seq_along(blocks), function(b) {
      if (b %% 2 == 0) return(NULL)
      theta[b] <<- NA
      m <- matrix(stats::rexp(16), 4)
      sweep(m, 2, colSums(m), "/")
    })
    plan <- pram_plan(cf, unname(blocks), theta = unname(theta), matrix = mats)
    w <- c(age = 0.5, edu = 2, sex = 1)
    d <- pram_damage(plan, weights = w, ordered = c("age", "edu"))
    ref <- reference_damage(counts, cf$cells[c("age", "edu", "sex")], full_matrix(plan), w, c("age", "edu"))
    expect_equal(unlist(as.data.frame(d)), ref, tolerance = 1e-10, info = paste("seed", seed))
    expect_equal(sum(d$by_key$weight * d$by_key$changed), d$keys, info = paste("seed", seed))
    # unordered, unit weights: the distance is the key values changed
    d1 <- pram_damage(plan)
    expect_equal(d1$distance, d1$keys)
    expect_equal(d1$keys, sum(d1$by_key$changed))
  }
})

test_that("pram_damage of a per-variable plan sums over every combination of categories", {
  set.seed(3)
  df <- data.frame(x = sample(1:4, 200, TRUE), g = sample(c("a", "b"), 200, TRUE), y = sample(c("u", "v", "w"), 200, TRUE))
  cf <- cell_frequencies(df, c("x", "g", "y"))
  rnd <- function(k) {
    m <- diag(k) * 5 + matrix(stats::runif(k * k), k)
    sweep(m, 2, colSums(m), "/")
  }
  px <- rnd(4)
  py <- rnd(3)
  dimnames(px) <- list(1:4, 1:4)
  dimnames(py) <- list(c("u", "v", "w"), c("u", "v", "w"))
  plan <- pram_plan_vars(cf, list(x = px, y = py))
  d <- pram_damage(plan, weights = c(x = 2), ordered = "x")
  cells <- cf$cells
  ref_keys <- ref_dist <- ref_rec <- 0
  for (j in seq_len(nrow(cells))) {
    cx <- cells$x[j]
    cy <- match(cells$y[j], c("u", "v", "w"))
    stay <- px[cx, cx] * py[cy, cy]
    ref_rec <- ref_rec + cells$count[j] * (1 - stay)
    ref_keys <- ref_keys + cells$count[j] * (2 * (1 - px[cx, cx]) + (1 - py[cy, cy]))
    ref_dist <- ref_dist + cells$count[j] * (2 * sum(px[, cx] * abs(1:4 - cx)) + (1 - py[cy, cy]))
  }
  expect_equal(d$keys, ref_keys, tolerance = 1e-12)
  expect_equal(d$distance, ref_dist, tolerance = 1e-12)
  expect_equal(d$records, ref_rec, tolerance = 1e-12)
  expect_equal(d$by_key$changed[d$by_key$key == "g"], 0)
})

test_that("pram_damage reads releases and prints its measures", {
  set.seed(1)
  rel <- ifpr(pums_md, c("sex", "age", "race", "marital", "puma"), 0.3)
  d <- pram_damage(rel, ordered = "age")
  expect_equal(d$records, rel$certificate$expected_changed)
  expect_equal(d$variance, rel$certificate$total_variance)
  expect_gt(d$distance, d$keys)
  expect_output(print(d), "key values changed")
})

test_that("bad weights and distances on unordered keys get classed errors naming the argument", {
  set.seed(1)
  rel <- ifpr(pums_md[1:3000, ], c("sex", "age", "race"), 0.3)
  expect_error(pram_damage(rel, weights = c(age = -1)), class = "sdcRisk_error_weights")
  expect_error(pram_damage(rel, weights = c(age = NA)), class = "sdcRisk_error_weights")
  expect_error(pram_damage(rel, weights = c(height = 1)), class = "sdcRisk_error_weights")
  expect_error(pram_damage(rel, weights = c(1, 2)), class = "sdcRisk_error_weights")
  expect_error(pram_damage(rel, weights = "1"), class = "sdcRisk_error_weights")
  expect_error(pram_damage(rel, ordered = "race"), class = "sdcRisk_error_ordered")
  expect_error(pram_damage(rel, ordered = "height"), class = "sdcRisk_error_ordered")
  expect_snapshot(error = TRUE, pram_damage(rel, ordered = c("race", "sex")))
  expect_snapshot(error = TRUE, pram_damage(rel, weights = c(age = -1)))
})
