make_people <- function(n = 300, seed = 1) {
  set.seed(seed)
  data.frame(
    id = seq_len(n),
    sex = factor(sample(c("F", "M"), n, TRUE)),
    age = sample(c(18:40, NA), n, TRUE, prob = c(rep(1, 23), 0.3)),
    area = sample(c("north", "south", "east", "west"), n, TRUE),
    income = round(rlnorm(n, 10), 2),
    note = I(as.list(seq_len(n))),
    stringsAsFactors = FALSE
  )
}

rare_plan <- function(df, keys, theta = 0.8) {
  cf <- cell_frequencies(df, keys)
  pram_plan(cf, list(which(cf$cells$count <= 2)), theta = theta)
}

test_that("pram_apply changes only the keys of records in blocks", {
  df <- make_people()
  attr(df$area, "label") <- "Region of residence"
  keys <- c("sex", "age", "area")
  plan <- rare_plan(df, keys)
  set.seed(11)
  out <- pram_apply(df, keys, plan)
  expect_identical(names(out), names(df))
  expect_identical(out[c("id", "income", "note")], df[c("id", "income", "note")])
  expect_identical(lapply(out, class), lapply(df, class))
  expect_identical(levels(out$sex), levels(df$sex))
  expect_identical(attributes(out$area), attributes(df$area))
  in_block <- !is.na(plan$cells$cell_id) & plan$cells$cell_id %in% plan$block_cells
  same <- function(x, y) (is.na(x) & is.na(y)) | (!is.na(x) & !is.na(y) & x == y)
  unchanged <- same(out$sex, df$sex) & same(out$age, df$age) & same(out$area, df$area)
  expect_true(all(unchanged[!in_block]))
  expect_true(any(!unchanged[in_block]))
  # records with a missing key are untouched
  expect_true(all(is.na(out$age[is.na(df$age)])))
  # no new combination of key values appears (Section 5, Step 2)
  combo <- function(d) do.call(paste, d[keys])
  expect_true(all(combo(out) %in% combo(df)))
})

test_that("set.seed reproduces a release exactly", {
  df <- make_people(500, seed = 2)
  keys <- c("sex", "age", "area")
  plan <- rare_plan(df, keys)
  set.seed(99)
  a <- pram_apply(df, keys, plan)
  set.seed(99)
  b <- pram_apply(df, keys, plan)
  set.seed(100)
  c <- pram_apply(df, keys, plan)
  expect_identical(a, b)
  expect_false(identical(a, c))
  set.seed(5)
  d1 <- pram_draw(plan)
  set.seed(5)
  expect_identical(pram_draw(plan), d1)
})

test_that("draws use one uniform per record in a block, by inverse CDF, in row order", {
  cf <- cell_frequencies(data_with_counts(c(1, 2, 1, 3)), "k")
  p <- matrix(c(0.2, 0.3, 0.5, 0, 0.1, 0.6, 0.3, 0, 0.25, 0.25, 0.5, 0, 0, 0, 0, 1), 4)
  plan <- pram_plan(cf, list(1:3), matrix = list(p[1:3, 1:3]))
  set.seed(42)
  drawn <- pram_draw(plan)
  set.seed(42)
  u <- runif(4) # records 1..4 are in the block (cells 1, 2, 2, 3); the rest are not
  cum <- apply(p[1:3, 1:3], 2, cumsum)
  expected <- vapply(1:4, function(r) {
    cell <- c(1, 2, 2, 3)[r]
    which(u[r] < cum[, cell])[1]
  }, numeric(1))
  expect_identical(drawn[1:4], as.integer(expected))
  expect_identical(drawn[5:7], c(4L, 4L, 4L))
  # and the next uniform is the one after them
  expect_identical(runif(1), {
    set.seed(42)
    invisible(runif(4))
    runif(1)
  })
})

test_that("perturbed counts are unbiased: the mean of S matches T", {
  counts <- c(1, 1, 2, 2, 3, 7)
  df <- data_with_counts(counts)
  cf <- cell_frequencies(df, "k")
  plan <- pram_plan(cf, list(1:6), theta = 0.9)
  set.seed(2024)
  reps <- 4000
  S <- vapply(seq_len(reps), function(r) tabulate(pram_draw(plan), 6), numeric(6))
  m <- rowMeans(S)
  se <- apply(S, 1, sd) / sqrt(reps)
  expect_true(all(abs(m - counts) <= 4 * se), info = paste(round((m - counts) / se, 2), collapse = " "))
  # and the IFPR variance of eq. 6.1
  th <- 0.9
  mm <- 6
  v11 <- th * (2 - th / counts) - th^2 / (mm - 1)^2 * (sum(1 / counts) - 1 / counts)
  expect_equal(apply(S, 1, var), v11, tolerance = 0.1)
})

test_that("pram_apply refuses a plan built for other data", {
  df <- make_people()
  keys <- c("sex", "age", "area")
  plan <- rare_plan(df, keys)
  expect_error(pram_apply(df[-1, ], keys, plan), class = "sdcRisk_error_plan_mismatch")
  expect_error(pram_apply(df, c("sex", "area", "age"), plan), class = "sdcRisk_error_plan_mismatch")
  expect_error(pram_apply(df, keys, "plan"), class = "sdcRisk_error_argument")
  expect_error(pram_apply(as.list(df), keys, plan), class = "sdcRisk_error_not_data_frame")
  other <- df
  other$area[1] <- "west"
  other$area[2] <- "east"
  if (!identical(cell_frequencies(other, keys)$cells, plan$cells$cells)) {
    expect_error(pram_apply(other, keys, plan), class = "sdcRisk_error_plan_mismatch")
  }
  # the same data in another row order is fine
  set.seed(1)
  perm <- sample(nrow(df))
  expect_silent(pram_apply(df[perm, ], keys, plan))
  expect_snapshot(error = TRUE, pram_apply(df[-1, ], keys, plan))
})

test_that("na = 'category' lets missing values take part like any category", {
  df <- data.frame(a = c(NA, 1, 2, 3, 3, 3), b = c("x", "x", "y", "y", "y", "y"))
  cf <- cell_frequencies(df, c("a", "b"), na = "category")
  plan <- pram_plan(cf, list(which(cf$cells$count == 1)), theta = 1)
  set.seed(3)
  out <- pram_apply(df, c("a", "b"), plan)
  expect_identical(out[4:6, ], df[4:6, ])
  expect_identical(sum(is.na(out$a)) <= 1, TRUE)
})

test_that("pram_apply() of a block plan draws only the changes, the same release as every record's draw", {
  set.seed(31)
  n <- 4000
  df <- data.frame(
    a = factor(sample(letters[1:6], n, TRUE)), b = sample(0:30, n, TRUE),
    c = sample(c("u", "v", "w"), n, TRUE), other = stats::runif(n), stringsAsFactors = FALSE
  )
  keys <- c("a", "b", "c")
  cf <- cell_frequencies(df, keys)
  small <- which(cf$cells$count <= 3)
  plan <- pram_plan(cf, unname(split(small, cf$cells$a[small])), theta = 0.7)
  set.seed(5)
  fast <- pram_apply(df, keys, plan)
  set.seed(5)
  drawn <- pram_draw(plan)
  full <- plan_write(plan, df, cf$cell_id, drawn)
  expect_identical(fast, full)
  expect_identical(fast$other, df$other)
  expect_gt(sum(drawn != cf$cell_id, na.rm = TRUE), 0)
  set.seed(5)
  ch <- core_call(cpp_draw_changes, engine_plan(plan), cf$cell_id)
  expect_identical(ch$at, changed_records(cf$cell_id, drawn))
  expect_identical(ch$to, drawn[ch$at])
  # blocks with a matrix (cumulative sums) and with theta in one plan
  b1 <- small[cf$cells$a[small] == "a"]
  m <- length(b1)
  p <- matrix(0.3 / (m - 1), m, m)
  diag(p) <- 0.7
  b2 <- small[cf$cells$a[small] == "b"]
  mixed <- pram_plan(cf, list(b1, b2), theta = c(NA, 0.9), matrix = list(p, NULL))
  set.seed(8)
  fast <- pram_apply(df, keys, mixed)
  set.seed(8)
  drawn <- pram_draw(mixed)
  expect_identical(fast, plan_write(mixed, df, cf$cell_id, drawn))
  moved <- which(drawn != cf$cell_id)
  expect_true(all(cf$cell_id[moved] %in% c(b1, b2)))
  expect_true(all((cf$cell_id[moved] %in% b1) == (drawn[moved] %in% b1)))
})

test_that("a malformed factor is refused by pram_apply() and cell_frequencies(), whose checks share the fingerprint's pass", {
  set.seed(2)
  df <- data.frame(a = factor(sample(c("x", "y", "z"), 200, TRUE)), b = sample(1:5, 200, TRUE))
  cf <- cell_frequencies(df, c("a", "b"))
  plan <- pram_plan(cf, list(1:4), theta = 0.5)
  for (code in c(4L, 0L, -2L)) {
    bad <- df
    codes <- unclass(bad$a)
    codes[7] <- code
    bad$a <- structure(codes, levels = levels(df$a), class = "factor")
    expect_error(pram_apply(bad, c("a", "b"), plan), class = "sdcRisk_error_key_type")
    expect_error(cell_frequencies(bad, c("a", "b")), class = "sdcRisk_error_key_type")
  }
  # NA codes are missing values, not malformed
  na <- df
  na$a[3] <- NA
  expect_error(pram_apply(na, c("a", "b"), plan), class = "sdcRisk_error_plan_mismatch")
})
