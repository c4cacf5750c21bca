# estimate_table(): the moment estimator and its variance estimate, against
# brute force (every possible release of a tiny file, with its probability)
# and against a dense reference (the inverse of the whole transition matrix,
# record by record).

# A tiny file with keys a, b, a non-key group g, a value y and a weight w.
tiny_file <- function() {
  data.frame(
    a = c("p", "p", "q", "q", "r", "r", "r", "r"),
    b = c(1, 2, 1, 2, 1, 2, 2, 2),
    g = c("u", "v", "u", "v", "v", "u", "v", "u"),
    y = c(3, 5, 1, 8, 4, 6, 7, 2),
    w = c(1, 2, 1.5, 3, 2, 1, 1, 2.5)
  )
}

test_that("brute force: the estimates and their variance estimates are unbiased over every release (IFPR and matrix blocks)", {
  df <- tiny_file()
  cf <- cell_frequencies(df, c("a", "b"))
  # cells (p,1), (p,2), (q,1), (q,2), (r,1) of one record and (r,2) of three:
  # an IFPR block of three cells and a block given by a matrix; 3^3 x 2^2
  # releases
  pm <- matrix(c(0.7, 0.3, 0.2, 0.8), 2)
  plan <- pram_plan(cf, list(1:3, 4:5), theta = c(0.8, NA), matrix = list(NULL, pm))
  released <- pram_apply(df, c("a", "b"), plan)
  pub <- publish_plan(plan, released = released)
  rel <- all_releases(df, c("a", "b"), plan)
  expect_equal(sum(vapply(rel, `[[`, 0, "prob")), 1, tolerance = 1e-12)
  cases <- list(
    list(by = c("a", "g"), args = list(), fun = nrow),
    list(by = "b", args = list(weights = "w"), fun = function(d) sum(d$w)),
    list(by = "a", args = list(value = "y", stat = "total"), fun = function(d) sum(d$y)),
    list(by = c("b", "g"), args = list(value = "y", stat = "total", weights = "w"), fun = function(d) sum(d$w * d$y))
  )
  for (case in cases) {
    m <- do.call(exact_moments, c(list(rel, pub, by = case$by), case$args))
    truth <- original_stat(df, m$table, case$by, case$fun)
    expect_equal(m$mean, unname(truth), tolerance = 1e-10, info = paste(case$by, collapse = ","))
    expect_equal(m$mean_var, m$var, tolerance = 1e-10, info = paste(case$by, collapse = ","))
  }
})

# Dense reference: h = Q' 1_D record by record, with Q the inverse of the
# whole transition matrix.
dense_estimate <- function(plan, released, keys, by, c1, c2) {
  q <- solve(dense_p(plan))
  cells <- plan$cells$cells
  z <- match(do.call(paste, released[keys]), do.call(paste, cells[keys]))
  key_of <- function(d) do.call(paste, c(lapply(d[by], as.character), sep = "|"))
  rows <- sort(unique(key_of(cells)))
  t(vapply(rows, function(r) {
    f <- as.numeric(key_of(cells) == r)
    h <- drop(crossprod(q, f))[z]
    c(estimate = sum(c1 * h), var = sum(c2 * (h^2 - h)))
  }, numeric(2)))
}

# IFPR blocks of `size` cells of at most `max_count` records, each at the
# largest theta below its smallest count (at most 0.9); and the block of one
# singleton and three doubletons at theta 0.75, where a = 0 for the
# singleton (theta m / (m - 1) = 1) while the matrix is regular.
small_blocks <- function(tt, max_count = 4, size = 4) {
  small <- which(tt <= max_count)
  nb <- length(small) %/% size
  blocks <- unname(split(small[seq_len(size * nb)], rep(seq_len(nb), each = size)))
  list(blocks = blocks, theta = unname(vapply(blocks, function(b) min(tt[b], 0.9), 0)))
}
a_zero_block <- function(tt) list(blocks = list(c(which(tt == 1)[1], which(tt >= 2)[1:3])), theta = 0.75)

test_that("the closed form of IFPR blocks equals the inverse of the dense matrix, a_z = 0 included", {
  for (seed in 1:6) {
    set.seed(seed)
    n <- 300
    df <- data.frame(a = sample(letters[1:6], n, TRUE, prob = (6:1)^2), b = sample(1:4, n, TRUE),
                     y = stats::rnorm(n), w = stats::runif(n, 1, 3))
    cf <- cell_frequencies(df, c("a", "b"))
    bl <- if (seed == 1) a_zero_block(cf$cells$count) else small_blocks(cf$cells$count)
    plan <- pram_plan(cf, bl$blocks, theta = bl$theta)
    released <- pram_apply(df, c("a", "b"), plan)
    pub <- publish_plan(plan, released = released)
    for (by in list("a", "b", c("a", "b"))) {
      est <- estimate_table(released, pub, by = by, value = "y", stat = "total", weights = "w", estimator = "moment")
      ref <- dense_estimate(plan, released, c("a", "b"), by, released$w * released$y, (released$w * released$y)^2)
      expect_equal(est$estimate, unname(ref[, "estimate"]), tolerance = 1e-9, info = paste("seed", seed))
      expect_equal(attr(est, "variance"), unname(ref[, "var"]), tolerance = 1e-9, info = paste("seed", seed))
    }
  }
})

test_that("tables of a key by a non-key (few groups, and groups spread wider than a block's records) equal the dense inverse group by group", {
  # the core sums each block's groups side by side when they span few
  # values, after a sort by group otherwise; either way the sums of each
  # group are those of the dense inverse over the records of the group
  set.seed(21)
  n <- 600
  df <- data.frame(a = sample(letters[1:6], n, TRUE, prob = (6:1)^2), b = sample(1:4, n, TRUE),
                   y = stats::rnorm(n), w = stats::runif(n, 1, 3), few = sample(1:3, n, TRUE),
                   many = sample(1:200, n, TRUE))
  cf <- cell_frequencies(df, c("a", "b"))
  bl <- small_blocks(cf$cells$count, max_count = 12, size = 3)
  plan <- pram_plan(cf, bl$blocks, theta = bl$theta)
  released <- pram_apply(df, c("a", "b"), plan)
  pub <- publish_plan(plan, released = released)
  for (gcol in c("few", "many")) {
    est <- estimate_table(released, pub, by = c("a", gcol), value = "y", stat = "total", weights = "w")
    expect_gt(nrow(est), 10)
    for (v in unique(est[[gcol]])) {
      at <- released[[gcol]] == v
      ref <- dense_estimate(plan, released, c("a", "b"), "a", released$w * released$y * at,
                            (released$w * released$y)^2 * at)
      rows <- which(est[[gcol]] == v)
      expect_equal(est$estimate[rows], unname(ref[est$a[rows], "estimate"]), tolerance = 1e-9, info = paste(gcol, v))
      expect_equal(attr(est, "variance")[rows], unname(ref[est$a[rows], "var"]), tolerance = 1e-9, info = paste(gcol, v))
      # rows left out have nothing to sum
      expect_true(all(abs(ref[setdiff(rownames(ref), est$a[rows]), "estimate"]) < 1e-9), info = paste(gcol, v))
    }
  }
})

test_that("unweighted counts by keys of a block plan are exact; means by keys divide by the exact count", {
  set.seed(1)
  rel <- ifpr(pums_md[1:4000, ], c("sex", "age", "race"), xi = 0.3)
  pub <- publish_plan(rel)
  est <- estimate_table(rel$data, pub, by = "race")
  expect_identical(est$estimator, rep("exact", nrow(est)))
  expect_identical(est$estimate, as.numeric(table(pums_md$race[1:4000]))[match(est$race, levels(pums_md$race))])
  expect_identical(est$se, rep(0, nrow(est)))
  m <- estimate_table(rel$data, pub, by = "race", value = "weight", stat = "mean", estimator = "moment")
  tot <- estimate_table(rel$data, pub, by = "race", value = "weight", stat = "total", estimator = "moment")
  expect_equal(m$estimate, tot$estimate / est$estimate)
  expect_equal(m$se, tot$se / est$estimate)
  # a rare race's mean is outside the range of the weights: maximum
  # likelihood for it, the moment estimator for the others
  # (one of them cannot be estimated: the fit leaves it no released record)
  expect_warning(auto <- estimate_table(rel$data, pub, by = "race", value = "weight", stat = "mean", estimator = "auto"),
                 class = "sdcRisk_warning_not_estimable")
  out <- m$estimate < min(pums_md$weight[1:4000]) | m$estimate > max(pums_md$weight[1:4000])
  expect_true(any(out))
  expect_identical(auto$estimator, ifelse(out, "ml", "moment"))
  expect_identical(auto$outside, out)
  # the default keeps the moment estimate and flags the rows outside
  expect_identical(m$outside, out)
  expect_identical(m$estimator, rep("moment", nrow(m)))
  expect_identical(auto$estimate[!out], m$estimate[!out])
  inside <- auto$estimate >= min(pums_md$weight[1:4000]) & auto$estimate <= max(pums_md$weight[1:4000])
  expect_true(all(inside | is.na(auto$estimate)))
  expect_true(any(is.na(auto$estimate)))
  expect_true(all(is.na(auto$lower[is.na(auto$estimate)]) & is.na(auto$upper[is.na(auto$estimate)])))
  # no key in by: nothing is perturbed
  ed <- estimate_table(rel$data, pub, by = "education", value = "weight", stat = "mean")
  expect_identical(ed$estimator, rep("exact", nrow(ed)))
  expect_equal(ed$estimate, as.vector(tapply(pums_md$weight[1:4000], pums_md$education[1:4000], mean)))
})

test_that("bad input is a classed error that says what is wrong, never an estimate", {
  set.seed(1)
  rel <- ifpr(pums_md[1:3000, ], c("sex", "age", "race"), xi = 0.3)
  pub <- publish_plan(rel)
  d <- rel$data
  expect_error(estimate_table(d, pub, by = "nothing"), class = "sdcRisk_error_unknown_key")
  expect_error(estimate_table(d, pub, by = 3), class = "sdcRisk_error_by")
  expect_error(estimate_table(d, pub, by = "estimate"), class = "sdcRisk_error_unknown_key")
  d2 <- d
  d2$estimate <- 1
  expect_error(estimate_table(d2, pub, by = "estimate"), class = "sdcRisk_error_by")
  expect_error(estimate_table(d, pub, by = "race", value = "puma", stat = "mean"), class = "sdcRisk_error_value_type")
  expect_error(estimate_table(d, pub, by = "race", value = "age", stat = "mean"), class = "sdcRisk_error_value_type")
  expect_error(estimate_table(d, pub, by = "race", stat = "mean"), class = "sdcRisk_error_value_type")
  expect_error(estimate_table(d, pub, by = "race", value = "weight"), class = "sdcRisk_error_argument")
  expect_error(estimate_table(d, pub, by = "race", value = "weight", stat = "proportion"), class = "sdcRisk_error_value_type")
  d2 <- d
  d2$weight[5] <- NA
  expect_error(estimate_table(d2, pub, by = "race", weights = "weight"), class = "sdcRisk_error_weight")
  expect_error(estimate_table(d2, pub, by = "race", value = "weight", stat = "mean"), class = "sdcRisk_error_missing_value")
  # a value missing in every record, even with na_rm
  d3 <- d
  d3$none <- NA_real_
  expect_error(estimate_table(d3, pub, by = "race", value = "none", stat = "total", na_rm = TRUE),
               class = "sdcRisk_error_missing_value")
  d2$weight[5] <- -1
  expect_error(estimate_table(d2, pub, by = "race", weights = "weight"), class = "sdcRisk_error_weight")
  expect_error(estimate_table(d, pub, by = "race", weights = "race"), class = "sdcRisk_error_weight")
  expect_error(estimate_table(d, pub, by = "race", sampling_var = 1:2), class = "sdcRisk_error_argument")
  expect_error(estimate_table(d, rel, by = "race"), class = "sdcRisk_error_publication")
  expect_error(estimate_table(d, pub, by = "race", stat = "median"), class = "sdcRisk_error_argument")
})

test_that("a file other than the published one is refused: keys, categories, records", {
  set.seed(1)
  rel <- ifpr(pums_md[1:3000, ], c("sex", "age", "race"), xi = 0.3)
  pub <- publish_plan(rel)
  d <- rel$data
  expect_error(estimate_table(d[-1], pub, by = "race"), class = "sdcRisk_error_publication_mismatch")
  expect_error(estimate_table(d[-5, ], pub, by = "race"), class = "sdcRisk_error_publication_mismatch")
  d2 <- d
  d2$race <- as.character(d2$race)
  d2$race[1] <- "Martian"
  expect_snapshot(error = TRUE, estimate_table(d2, pub, by = "race"))
  d2 <- d
  d2$age[d2$age == 40][1] <- 41L
  expect_snapshot(error = TRUE, estimate_table(d2, pub, by = "race"))
  # the same categories of every key, records moved between blocks: two
  # records swap their ages (every key's counts stay), and the blocks then
  # hold other numbers of records than published
  codes <- released_codes(pub, d)
  block <- rep.int(seq_along(pub$plan$size), pub$plan$size)
  rb <- block[released_block_cells(pub, codes, character(), NULL)$cell]
  i <- which(!is.na(rb))[1]
  j <- which(d$age != d$age[i] & (is.na(rb) | rb != rb[i]))[1]
  d3 <- d
  d3$age[c(i, j)] <- d$age[c(j, i)]
  expect_error(estimate_table(d3, pub, by = "race"), "block [0-9]+ has", class = "sdcRisk_error_publication_mismatch")
  expect_error(released_block_cells_classified(pub, released_codes(pub, d3), character(), NULL), "block [0-9]+ has",
               class = "sdcRisk_error_publication_mismatch")
  # another release of another file with the same keys
  set.seed(2)
  other <- ifpr(pums_md[3001:6000, ], c("sex", "age", "race"), xi = 0.3)
  expect_error(estimate_table(other$data, pub, by = "race"), class = "sdcRisk_error_publication_mismatch")
  # read back from CSV: types change, the estimates do not
  f <- withr::local_tempfile(fileext = ".csv")
  utils::write.csv(d, f, row.names = FALSE)
  csv <- utils::read.csv(f)
  a <- estimate_table(d, pub, by = c("race", "sex"), value = "weight", stat = "total")
  b <- estimate_table(csv, pub, by = c("race", "sex"), value = "weight", stat = "total")
  expect_equal(b$estimate, a$estimate)
  expect_equal(b$se, a$se)
  expect_type(b$race, "character")
  expect_identical(b$race, as.character(a$race))
})

test_that("a singular block is an error, not an estimate", {
  df <- data.frame(k = c("a", "b", "c", "d", "e", "f", "f"), y = 1:7)
  cf <- cell_frequencies(df, "k")
  # five singletons at theta = 0.8: every column of the block is the same
  plan <- pram_plan(cf, list(1:5), theta = 0.8)
  released <- pram_apply(df, "k", plan)
  pub <- publish_plan(plan, released = released)
  expect_error(estimate_table(released, pub, by = "k"), class = "sdcRisk_error_singular_block")
  expect_snapshot(error = TRUE, estimate_table(released, pub, by = "k", value = "y", stat = "total"))
  # a matrix block with two equal columns
  plan <- pram_plan(cf, list(1:2), matrix = list(matrix(0.5, 2, 2)))
  released <- pram_apply(df, "k", plan)
  pub <- publish_plan(plan, released = released)
  expect_error(estimate_table(released, pub, by = "k"), class = "sdcRisk_error_singular_block")
  # no key in by: the block does not matter
  expect_equal(estimate_table(released, pub, value = "y", stat = "total")$estimate, 28)
})

test_that("sampling variance adds to the perturbation variance", {
  set.seed(1)
  rel <- ifpr(pums_md[1:3000, ], c("sex", "age", "race"), xi = 0.3)
  pub <- publish_plan(rel)
  est <- estimate_table(rel$data, pub, by = "sex", value = "weight", stat = "total")
  sv <- data.frame(sex = rev(est$sex), var = c(4e6, 9e6))
  tot <- estimate_table(rel$data, pub, by = "sex", value = "weight", stat = "total", sampling_var = sv)
  expect_equal(tot$se_sampling, sqrt(c(9e6, 4e6)))
  expect_equal(tot$se_total, sqrt(est$se^2 + c(9e6, 4e6)))
  # the interval's variance function adds the sampling variance to what the
  # records outside the row add, and keeps the row's own variance
  z <- stats::qnorm(0.975)
  parts <- function(x) {
    own <- 2 * ((x$lower + x$upper) / 2 - x$estimate) / z^2
    half <- (x$upper - x$lower) / 2
    list(own = own, outside = (half^2 - z^4 * own^2 / 4) / z^2 - own * x$estimate)
  }
  expect_equal(parts(tot)$own, parts(est)$own)
  expect_equal(parts(tot)$outside - parts(est)$outside, c(9e6, 4e6))
  tot2 <- estimate_table(rel$data, pub, by = "sex", value = "weight", stat = "total", sampling_var = c(9e6, 4e6))
  expect_identical(tot2, tot)
  expect_snapshot(print(tot))
})

test_that("the one pass over the records finds the block cells and sums of the cross-classification", {
  # released_block_cells() looks the records' cells up among the block cells
  # (a bitmap of their indexes, or a hash table when the indexes are
  # sparse); released_block_cells_classified() cross-classifies records and
  # block cells together. Both must give every record the same block cell
  # and the same key values d.
  set.seed(11)
  check_paths <- function(df, keys, by_sets) {
    rel <- ifpr(df, keys, 0.4)
    pub <- publish_plan(rel)
    codes <- released_codes(pub, rel$data)
    for (by in by_sets) {
      b <- released_block_cells_classified(pub, codes, by, NULL)
      a <- released_block_cells(pub, codes, by, NULL)
      expect_identical(a$cell, b$cell)
      expect_identical(a$n_d, b$n_d)
      # a record in a block cell has its cell's d (d_rec NA when `by` has a key)
      if (length(by) > 0) expect_true(all(is.na(a$d_rec[!is.na(a$cell)])))
      a_rec <- ifelse(is.na(a$cell), a$d_rec, a$d_cell[a$cell])
      # the same partition of records and cells by d, and the same codes
      expect_identical(lapply(a$d_codes, `[`, a_rec), lapply(b$d_codes, `[`, b$d_rec))
      expect_identical(lapply(a$d_codes, `[`, a$d_cell), lapply(b$d_codes, `[`, b$d_cell))
      # d numbers the key values in the order of their codes
      if (length(by) > 0) {
        o <- do.call(order, unname(a$d_codes))
        expect_identical(o, seq_len(a$n_d))
        expect_false(anyDuplicated(do.call(paste, unname(a$d_codes))) > 0)
      } else {
        expect_identical(a$n_d, 1L)
      }
    }
    list(pub = pub, data = rel$data)
  }
  # dense indexes (the bitmap) with missing keys
  n <- 400
  df <- data.frame(a = factor(sample(letters[1:4], n, TRUE)), b = sample(1:6, n, TRUE),
                   c = factor(sample(c("x", "y", NA), n, TRUE)))
  check_paths(df, c("a", "b", "c"), list(character(), "a", c("b", "c"), c("a", "b", "c"), c("c", "a", "b")))
  # sparse indexes (the hash table): many combinations, few records
  df <- data.frame(a = sample(sprintf("a%03d", 1:300), n, TRUE), b = sample(sprintf("b%03d", 1:300), n, TRUE),
                   c = sample(1:2, n, TRUE))
  df$a[1:300] <- "a001"
  df$b[1:300] <- sprintf("b%03d", rep(1:3, 100))
  rel <- check_paths(df, c("a", "b", "c"), list("a", c("a", "b", "c")))
  pub <- rel$pub
  p <- pub$plan
  expect_gt(prod(vapply(pub$keys, function(k) length(k$categories) + 1, 1)), 16 * (n + length(p$cells$count)))
  # a cell listed twice is found by both look-ups
  codes <- released_codes(pub, rel$data)
  ext <- extended_codes(codes, pub)
  twice <- lapply(p$cells$codes, function(x) c(x, x[2]))
  m <- core_call(cpp_match_block_cells, ext$codes, twice, as.integer(ext$nlevels), NULL)
  expect_identical(m$duplicate, length(p$cells$count) + 1)
  m <- core_call(cpp_match_block_cells, lapply(ext$codes, `[`, 1:2), twice, as.integer(ext$nlevels), NULL)
  expect_identical(m$duplicate, length(p$cells$count) + 1)
})

test_that("IFPR sums by cell equal the sums over the records", {
  # with every record in group 1 the core sums the records by cell first;
  # in any other group it sums record by record: the same targets
  set.seed(12)
  n <- 3000
  df <- data.frame(a = factor(sample(letters[1:5], n, TRUE, prob = c(50, 20, 5, 1, 1))),
                   b = sample(1:8, n, TRUE), y = rnorm(n), w = runif(n, 1, 3))
  rel <- ifpr(df, c("a", "b"), 0.3)
  pub <- publish_plan(rel)
  p <- pub$plan
  bc <- released_block_cells(pub, released_codes(pub, rel$data), "a", NULL)
  run <- function(g) {
    core_call(cpp_ifpr_sums, c(0L, cumsum(p$size)), as.numeric(p$theta), p$cells$count, bc$d_cell,
              max(bc$d_cell), estimate_singular_tol, bc$cell, g, rel$data$w, rel$data$y)
  }
  one <- run(rep(1L, n))
  two <- run(rep(2L, n))
  expect_gt(length(one$d), 0)
  expect_identical(one$block, two$block)
  expect_identical(one$d, two$d)
  expect_identical(two$g, rep(2L, length(two$g)))
  expect_equal(one$lin, two$lin, tolerance = 1e-12)
  expect_equal(one$quad, two$quad, tolerance = 1e-12)
})

# The variance of the unweighted count of every row given the original file
# from the dense matrix: h = Q' 1_D, sum over every cell x of T_x sum_z
# P[z, x] (h(z)^2 - h(z)).
dense_count_var <- function(plan, keys, by) {
  p <- dense_p(plan)
  q <- solve(p)
  cells <- plan$cells$cells
  key_of <- function(d) do.call(paste, c(lapply(d[by], as.character), sep = "|"))
  rows <- sort(unique(key_of(cells)))
  out <- vapply(rows, function(r) {
    f <- as.numeric(key_of(cells) == r)
    h <- drop(crossprod(q, f))
    g <- drop(crossprod(p, h^2 - h))
    c(total = sum(cells$count * g), own = sum(cells$count * f * g), n = sum(cells$count * f))
  }, numeric(3))
  list(outside = out["total", ] - out["own", ], own = ifelse(out["n", ] > 0, out["own", ] / out["n", ], 0))
}

sums_of <- function(pub, released, by) {
  rec <- list(codes = released_codes(pub, released), g = rep(1L, nrow(released)), n_groups = 1L, w = NULL, y = NULL)
  sums <- estimate_sums(pub, rec, by)
  sums$label <- do.call(paste, c(lapply(seq_along(by), function(j) {
    k <- pub$keys[[match(by[j], vapply(pub$keys, `[[`, "", "name"))]]
    k$categories[sums$d_codes[[j]][sums$d]]
  }), sep = "|"))
  sums
}

# The two parts of the variance function of every row (d, g) from the
# dense matrices: g_d(x) = sum_z P[z, x] (h(z)^2 - h(z)), h = Q' 1_D, for
# every cell x; the mean c and c^2 of group g over the released records of
# every block (records stay in their block); `outside` sums T_x g_d(x)
# times the mean c^2 of x's block over the cells outside D, `own` the same
# over D (g_d cut at 0) divided by the row's value taken likewise (T_x
# times the mean c), plus the records of the row outside the blocks.
dense_plug_ref <- function(plan, released, keys, by, c, grp) {
  p <- dense_p(plan)
  q <- solve(p)
  cells <- plan$cells$cells
  tt <- cells$count
  sizes <- diff(plan$block_start)
  cell_block <- rep(NA_integer_, nrow(cells))
  for (b in seq_along(sizes)) cell_block[plan$block_cells[plan$block_start[b] + seq_len(sizes[b])]] <- b
  key_of <- function(d) do.call(paste, c(lapply(d[by], as.character), sep = "|"))
  rb <- cell_block[match(do.call(paste, released[keys]), do.call(paste, cells[keys]))]
  n_b <- tabulate(rb, length(sizes))
  rows <- unique(data.frame(d = key_of(released), g = grp))
  out <- t(vapply(seq_len(nrow(rows)), function(i) {
    f <- key_of(cells) == rows$d[i]
    h <- drop(crossprod(q, f))
    gx <- drop(crossprod(p, h^2 - h))
    mine <- grp == rows$g[i]
    k <- vapply(cell_block, function(b) {
      if (is.na(b)) return(c(0, 0))
      at <- mine & !is.na(rb) & rb == b
      c(sum(c[at]), sum(c[at]^2)) / n_b[b]
    }, numeric(2))
    direct <- sum(c[mine & is.na(rb) & key_of(released) == rows$d[i]])
    value <- sum((tt * k[1, ])[f]) + direct
    own <- sum((tt * pmax(gx, 0) * k[2, ])[f])
    c(outside = sum((tt * gx * k[2, ])[!f]), own = if (value > 0) own / value else 0)
  }, numeric(2)))
  cbind(rows, out)
}

test_that("the variance function of the intervals is the count's variance from the published counts and each block's records, IFPR (a_z = 0 included) and matrix blocks", {
  for (seed in 1:4) {
    set.seed(seed)
    n <- 300
    df <- data.frame(a = sample(letters[1:6], n, TRUE, prob = (6:1)^2), b = sample(1:4, n, TRUE),
                     e = sample(c("x", "y", "z"), n, TRUE, prob = c(0.6, 0.3, 0.1)), w = stats::runif(n, 1, 3))
    cf <- cell_frequencies(df, c("a", "b"))
    tt <- cf$cells$count
    bl <- if (seed == 1) a_zero_block(tt) else small_blocks(tt)
    # a block given by a matrix, beside the IFPR blocks
    big <- setdiff(order(-tt), unlist(bl$blocks))[1:3]
    blocks <- c(bl$blocks, list(big))
    theta <- c(bl$theta, NA)
    matrix <- c(rep(list(NULL), length(bl$blocks)), list(matrix(c(0.8, 0.1, 0.1, 0.2, 0.7, 0.1, 0.05, 0.15, 0.8), 3)))
    plan <- pram_plan(cf, blocks, theta = theta, matrix = matrix)
    released <- pram_apply(df, c("a", "b"), plan)
    pub <- publish_plan(plan, released = released)
    for (by in list("a", "b", c("a", "b"))) {
      # no group, three groups, and 100 groups of three records
      for (grouped in c("none", "e", "many")) {
        grp <- switch(grouped, none = rep("all", n), e = released$e, many = as.character(seq_len(n) %% 100))
        gf <- factor(grp)
        for (c in list(rep(1, n), released$w)) {
          # c the weight of every record (all 1: no weights)
          w <- if (length(unique(c)) > 1) c
          rec <- list(codes = released_codes(pub, released), g = as.integer(gf), n_groups = nlevels(gf), w = w, y = NULL)
          sums <- estimate_sums(pub, rec, by)
          plug <- sums$plug_var(1L, 1L)
          label <- do.call(paste, c(lapply(seq_along(by), function(j) {
            k <- pub$keys[[match(by[j], vapply(pub$keys, `[[`, "", "name"))]]
            k$categories[sums$d_codes[[j]][sums$d]]
          }), sep = "|"))
          ref <- dense_plug_ref(plan, released, c("a", "b"), by, c, grp)
          at <- match(paste(ref$d, ref$g), paste(label, levels(gf)[sums$g]))
          info <- paste("seed", seed, paste(by, collapse = ","), grouped, length(unique(c)))
          expect_false(anyNA(at), info = info)
          expect_equal(plug$outside[at], ref$outside, tolerance = 1e-9, info = info)
          expect_equal(plug$own[at], ref$own, tolerance = 1e-9, info = info)
          expect_true(all(ref$outside >= -1e-9) && all(ref$own >= 0))
          if (grouped == "none" && length(unique(c)) == 1) {
            # unweighted and one group: the count's variance from the
            # published counts
            dense <- dense_count_var(plan, c("a", "b"), by)
            at <- match(names(dense$own), label)
            expect_equal(plug$outside[at], unname(dense$outside), tolerance = 1e-9, info = info)
            expect_equal(plug$own[at], unname(dense$own), tolerance = 1e-9, info = info)
          }
        }
      }
    }
  }
})

test_that("the intervals of counts invert the test with the variance as a function of the truth", {
  set.seed(2)
  rel <- ifpr(pums_md[1:4000, ], c("sex", "age", "race", "marital"), xi = 0.3, partition = list(sex = "keep"))
  pub <- publish_plan(rel)
  est <- estimate_table(rel$data, pub, by = c("race", "marital"), weights = "weight")
  z <- stats::qnorm(0.975)
  d <- rel$data
  rec <- list(codes = released_codes(pub, d), g = rep(1L, nrow(d)), n_groups = 1L, w = d$weight, y = NULL)
  sums <- estimate_sums(pub, rec, c("race", "marital"))
  v <- sums$plug_var(1L, 1L)
  own <- v$own
  # rows in the order of the table (sums$d follows the categories' codes)
  o <- do.call(order, unname(lapply(sums$d_codes, function(x) x[sums$d])))
  own <- own[o]
  # what the records outside add: from the original sums, not the draw
  outside <- v$outside[o]
  # both limits t solve (estimate - t)^2 = z^2 (outside + own t)
  for (lim in list(est$lower, est$upper)) {
    expect_equal((est$estimate - lim)^2, z^2 * (outside + own * lim), tolerance = 1e-8)
  }
  # the estimate lies inside where its own variance v(estimate) is
  # positive; a negative estimate with v(estimate) < 0 gets limits above it
  inside <- outside + own * est$estimate > 0
  expect_true(all((est$lower < est$estimate & est$estimate < est$upper)[inside]))
  expect_true(all(est$lower[!inside] >= est$estimate[!inside]))
  # the interval leans towards larger values (a larger count varies more)
  expect_true(all(est$upper - est$estimate > est$estimate - est$lower))
  # means keep the normal interval of se
  m <- estimate_table(rel$data, pub, by = "race", value = "weight", stat = "mean")
  expect_equal(m$upper - m$lower, 2 * z * m$se)
})

test_that("the one pass over the records of a table by keys gives the sums of the general path", {
  # sdcRisk::key_sums(): records summed by block cell and by d in one pass,
  # the IFPR targets summed by d; against the pieces summed apart
  for (seed in 1:3) {
    set.seed(seed)
    n <- 2000
    df <- data.frame(a = sample(letters[1:6], n, TRUE, prob = (6:1)^2), b = sample(1:5, n, TRUE),
                     c = factor(sample(c("x", "y", NA), n, TRUE, prob = c(0.6, 0.35, 0.05))),
                     w = stats::runif(n, 1, 3), y = stats::rnorm(n, 10))
    df$y[sample(n, 30)] <- NA
    rel <- ifpr(df, c("a", "b", "c"), 0.3)
    pub <- publish_plan(rel)
    codes <- released_codes(pub, rel$data)
    for (by in list("a", c("a", "c"), c("a", "b", "c"), c("c", "b"))) {
      for (wy in list(list(w = NULL, y = NULL), list(w = rel$data$w, y = NULL), list(w = rel$data$w, y = rel$data$y))) {
        rec <- list(codes = codes, g = rep(1L, n), n_groups = 1L, w = wy$w, y = wy$y)
        # (the variance function's parts from the core's pass, or from the
        # cells' moments it gives)
        one <- estimate_sums(pub, rec, by, one_pass = TRUE, plug = TRUE)
        one_late <- estimate_sums(pub, rec, by, one_pass = TRUE, plug = FALSE)
        gen <- estimate_sums(pub, rec, by, one_pass = FALSE)
        info <- paste(seed, paste(by, collapse = ","), length(wy))
        expect_identical(one$d, gen$d, info = info)
        expect_identical(one$g, gen$g, info = info)
        for (part in c("lin", "quad", "direct_lin")) {
          expect_equal(unname(one[[part]]), unname(gen[[part]]), tolerance = 1e-12, info = paste(info, part))
        }
        cols <- if (is.null(wy$y)) c(1L, 1L) else c(3L, 2L)
        expect_equal(one$plug_var(cols[1], cols[2]), gen$plug_var(cols[1], cols[2]), tolerance = 1e-12, info = info)
        expect_equal(one_late$plug_var(cols[1], cols[2]), gen$plug_var(cols[1], cols[2]), tolerance = 1e-12, info = info)
        if (is.null(wy$w)) expect_identical(one$exact_count(), gen$exact_count(), info = info)
      }
    }
  }
  # the rows of a table by keys are in the order of their codes
  est <- estimate_table(rel$data, pub, by = c("c", "b"), weights = "w")
  expect_identical(est[c("c", "b")], est[do.call(order, unname(lapply(est[c("c", "b")], as.integer))), c("c", "b")],
                   ignore_attr = TRUE)
})

test_that("released key codes through a table equal those of match()", {
  # factors through the table of their levels, integers through a table over
  # the categories' range (released_key_codes())
  key <- list(name = "k", type = "integer", categories = c("-2", "0", "3", "7", NA))
  x <- c(7L, -2L, NA, 3L, 0L, 3L)
  expect_identical(released_key_codes(x, key, "category", "data", NULL), c(4L, 1L, 5L, 3L, 2L, 3L))
  # a value the plan does not have
  expect_error(released_key_codes(c(x, 5L), key, "category", "data", NULL), class = "sdcRisk_error_publication_mismatch")
  expect_error(released_key_codes(c(x, 100000L), key, "category", "data", NULL),
               class = "sdcRisk_error_publication_mismatch")
  # NA not a category: missing stays missing where na is not a category
  key2 <- list(name = "k", type = "integer", categories = c("-2", "0", "3", "7"))
  expect_identical(released_key_codes(x, key2, "omit", "data", NULL), c(4L, 1L, NA, 3L, 2L, 3L))
  # far-apart categories: match()
  key3 <- list(name = "k", type = "integer", categories = c("1", "100000000"))
  expect_identical(released_key_codes(c(100000000L, 1L), key3, "omit", "data", NULL), c(2L, 1L))
  # a factor: its levels in another order, an unused level, NA
  keyf <- list(name = "f", type = "character", categories = c("a", "b", "c", NA))
  f <- factor(c("c", NA, "a", "b", "a"), levels = c("b", "z", "a", "c"))
  expect_identical(released_key_codes(f, keyf, "category", "data", NULL), c(3L, 4L, 1L, 2L, 1L))
  expect_error(released_key_codes(factor(c("a", "z")), keyf, "category", "data", NULL),
               class = "sdcRisk_error_publication_mismatch")
})
