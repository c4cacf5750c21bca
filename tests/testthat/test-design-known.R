# Reference: the exact maximum of R_D(a, t) of a whole tiny plan for an
# intruder who knows the keys `known`, by enumerating every outcome of every
# unit (units of cells outside blocks stay). D is the set of cells that
# share the target's known values; R_D(a, t) = P(the target lands in D,
# S_D = a) / (a P(S_D = a)).
brute_known_max <- function(plan, known, goal = "all_matches") {
  cells <- plan$cells$cells
  counts <- cells$count
  m <- length(counts)
  P <- diag(m)
  sizes <- diff(plan$block_start)
  for (b in seq_along(sizes)) {
    ids <- plan$block_cells[plan$block_start[b] + seq_len(sizes[b])]
    P[ids, ids] <- pram_matrix(plan, b)
  }
  units <- rep(seq_len(m), counts)
  support <- lapply(units, function(c) which(P[, c] > 0))
  stopifnot(prod(lengths(support)) <= 2e5)
  grid <- as.matrix(expand.grid(support, KEEP.OUT.ATTRS = FALSE))
  w <- rep(1, nrow(grid))
  for (u in seq_along(units)) w <- w * P[cbind(grid[, u], units[u])]
  set <- as.integer(interaction(cells[known], drop = TRUE))
  best <- -Inf
  for (j in seq_len(m)) {
    if (goal == "sample_uniques" && counts[j] != 1) next
    D <- which(set == set[j])
    B <- match(j, units)
    S <- rowSums(matrix(grid %in% D, nrow(grid)))
    stay <- grid[, B] %in% D
    a_values <- if (goal == "all_matches") seq_len(length(units)) else 1
    for (a in a_values) {
      p <- sum(w[S == a])
      if (p <= 1e-15) next
      best <- max(best, sum(w[S == a & stay]) / (a * p))
    }
  }
  best
}

# Every risk of a certificate at most xi (none: no event the goal covers).
known_ok <- function(x, xi) all(is.na(x$risk) | x$risk <= xi)

# A file of the given cell counts over keys x, y, z (one row per record).
known_file <- function(cells) {
  cells[rep(seq_len(nrow(cells)), cells$n), setdiff(names(cells), "n")]
}

test_that("ifpr(known =) repairs a design whose blocks an intruder who knows only x sees through", {
  # three singletons of x = "b" share a block of five with two cells of
  # other values: the intruder who knows only x sees 3 records of "b" that
  # mostly stay "b" (R = 0.264 > 0.25 today)
  cells <- data.frame(
    x = c("a", "b", "c", "b", "a", "b", "c", "a", "c"),
    y = c("A", "A", "A", "B", "A", "A", "A", "B", "B"),
    z = rep(c("p", "q"), c(4, 5)),
    n = c(8, 1, 8, 1, 8, 1, 8, 8, 3)
  )
  d <- known_file(cells)
  keys <- c("x", "y", "z")
  set.seed(1)
  old <- ifpr(d, keys, xi = 0.25)
  expect_gt(max_match_risk(old$plan, known = "x")$risk, 0.25)
  for (method in c("tiered", "optimal")) {
    set.seed(1)
    rel <- ifpr(d, keys, xi = 0.25, known = list("x"), method = method)
    kr <- max_match_risk_known(rel$plan, subsets = list("x"))
    expect_lte(kr$risk, 0.25)
    expect_equal(rel$certificate$known$risk, kr$risk)
    expect_lte(max_match_risk(rel$plan)$risk, 0.25)
    # an intruder not declared is not designed for, and the certificate
    # says nothing of him
    expect_identical(rel$certificate$known$known, "x")
  }
  # the release that met him is another plan than today's
  set.seed(1)
  rel <- ifpr(d, keys, xi = 0.25, known = list("x"))
  expect_false(identical(rel$plan$block_cells, old$plan$block_cells) && identical(rel$plan$theta, old$plan$theta))
})

test_that("a repaired least-damage design meets the intruder exactly as brute force says (tiny file)", {
  # eight records in four cells; today's design leaves the intruder who
  # knows only y at R = 0.419 > 0.4
  cells <- data.frame(x = c("b", "a", "b", "b"), y = c("A", "B", "B", "C"), n = c(3, 1, 1, 3))
  d <- known_file(cells)
  set.seed(1)
  old <- ifpr(d, c("x", "y"), xi = 0.4, method = "optimal")
  expect_gt(brute_known_max(old$plan, "y"), 0.4)
  expect_equal(max_match_risk(old$plan, known = "y")$risk, brute_known_max(old$plan, "y"), tolerance = 1e-10)
  set.seed(1)
  rel <- ifpr(d, c("x", "y"), xi = 0.4, method = "optimal", known = TRUE)
  for (k in list("x", "y", c("x", "y"))) {
    bf <- brute_known_max(rel$plan, k)
    expect_lte(bf, 0.4 + 1e-12)
    expect_equal(max_match_risk(rel$plan, known = k)$risk, bf, tolerance = 1e-10, info = paste(k, collapse = "+"))
  }
})

test_that("the brute-force reference agrees with max_match_risk(known =) on tiny plans", {
  cells <- data.frame(x = c("a", "a", "b", "b"), y = c("u", "v", "u", "v"), n = c(1, 2, 1, 2))
  cf <- cell_frequencies(known_file(cells), c("x", "y"))
  for (theta in c(0.3, 0.8)) {
    plan <- pram_plan(cf, list(c(1, 3), c(2, 4)), theta = theta)
    for (k in list("x", "y", c("x", "y"))) {
      expect_equal(max_match_risk(plan, known = k)$risk, brute_known_max(plan, k), tolerance = 1e-10,
                   info = paste(theta, paste(k, collapse = "+")))
    }
  }
})

test_that("ifpr(known =) keeps every release the design for the full-key intruder made, and certifies every repair (64 random files)", {
  gained <- 0
  for (seed in 1:64) {
    set.seed(seed)
    nx <- sample(2:4, 1)
    ny <- sample(2:4, 1)
    nz <- sample(1:3, 1)
    g <- expand.grid(x = letters[1:nx], y = LETTERS[1:ny], z = c("p", "q", "r")[1:nz], stringsAsFactors = FALSE)
    g$n <- sample(c(0, 1, 1, 1, 2, 3, 8), nrow(g), TRUE)
    d <- known_file(g[g$n > 0, ])
    keys <- c("x", "y", "z")
    xi <- sample(c(0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4), 1)
    goal <- sample(c("all_matches", "unique_matches", "sample_uniques"), 1)
    known <- if (seed %% 2 == 0) TRUE else list("x", "y", c("x", "z"))
    subsets <- if (isTRUE(known)) NULL else known
    for (method in c("tiered", "optimal")) {
      info <- paste("seed", seed, method, "xi", xi, goal)
      set.seed(seed)
      old <- tryCatch(ifpr(d, keys, xi, goal = goal, method = method, on_infeasible = "merge"),
                      sdcRisk_error = function(e) NULL)
      old_ok <- !is.null(old) && isTRUE(known_ok(max_match_risk_known(old$plan, goal, subsets = subsets), xi))
      set.seed(seed)
      new <- tryCatch(ifpr(d, keys, xi, goal = goal, method = method, on_infeasible = "merge", known = known),
                      sdcRisk_error = function(e) NULL)
      if (old_ok) {
        expect_false(is.null(new), info = info)
        # the same plan and release, bit for bit
        expect_identical(new$plan, old$plan, info = info)
        expect_identical(new$data, old$data, info = info)
      }
      if (!is.null(new)) {
        expect_true(known_ok(max_match_risk_known(new$plan, goal, subsets = subsets), xi), info = info)
        expect_true(known_ok(max_match_risk(new$plan, goal), xi), info = info)
        if (!old_ok && !is.null(old)) gained <- gained + 1
      }
    }
  }
  # the repair met intruders the design for the full-key intruder did not
  expect_gt(gained, 0)
})

test_that("avoid_blocks() keeps the cells of one S-projection apart, padding where the tier cannot", {
  # positions 1-4: two S-projections (1, 1, 2, 2); 5-6 free candidates
  group <- matrix(c(1L, 1L, 2L, 2L, NA, 3L), ncol = 1)
  tb <- sdcRisk:::avoid_blocks(1:4, 2, integer(), group)
  expect_length(tb$blocks, 2)
  expect_true(all(vapply(tb$blocks, function(b) !anyDuplicated(group[b, 1]), logical(1))))
  # one S-projection only: each cell padded with a candidate of another
  tb <- sdcRisk:::avoid_blocks(1:2, 2, 5:6, group)
  expect_length(tb$blocks, 2)
  expect_setequal(unlist(tb$blocks), c(1, 2, 5, 6))
  expect_length(tb$rest, 0)
  # no candidate: the cells are left to the tiered design's own way
  tb <- sdcRisk:::avoid_blocks(1:2, 2, integer(), group)
  expect_length(tb$blocks, 0)
  expect_identical(tb$rest, 1:2)
})

test_that("known_failures() finds the S-projections above their bound, with the certificate's worst ratio", {
  cells <- data.frame(
    x = c("a", "b", "c", "b", "a", "b", "c", "a", "c"),
    y = c("A", "A", "A", "B", "A", "A", "A", "B", "B"),
    z = rep(c("p", "q"), c(4, 5)),
    n = c(8, 1, 8, 1, 8, 1, 8, 8, 3)
  )
  set.seed(1)
  old <- ifpr(known_file(cells), c("x", "y", "z"), xi = 0.25)
  f <- sdcRisk:::known_failures(old$plan, sdcRisk:::engine_plan(old$plan), "all_matches", "x",
                                rep(0.25, nrow(old$cells$cells)))
  # only the S-projection x = "b" fails, by the ratio of the exact maximum
  failing <- unique(as.character(old$cells$cells$x[f$set %in% as.integer(names(f$ratio))]))
  expect_identical(failing, "b")
  expect_equal(max(f$ratio), max_match_risk(old$plan, known = "x")$risk / 0.25, tolerance = 1e-12)
  # one round's tighter bounds: only the cells of "b", by 0.98 / ratio
  db <- sdcRisk:::known_tighten(rep(0.25, nrow(old$cells$cells)), list(f))
  in_b <- old$cells$cells$x == "b"
  expect_equal(db[!in_b], rep(0.25, sum(!in_b)))
  expect_equal(db[in_b], rep(0.25 * 0.98 / max(f$ratio), sum(in_b)))
})
