# Independent reference for the certificate, from the returned plan and the
# original counts only: for every IFPR block and every distinct count f in
# it, the distribution of the other units landing in a cell of count f is
# convolved cell by cell from R's dbinom(), and R(a) = (1/a) P(B stays, a - 1
# others) / P(S = a) (eq. 4.3); for a matrix block the same for every cell,
# each source cell landing with its entry of the block's matrix. Cells
# outside blocks have R = 1/T at a = T (Goal 3) or 1 at a = 1 if singletons
# (Goals 1-2). The search over a runs to 1 / (the largest risk of the cells
# outside blocks), beyond which R <= 1/a cannot reach the maximum.
reference_max_risk <- function(plan, goal) {
  counts <- plan$cells$cells$count
  sizes <- diff(plan$block_start)
  block_of <- rep(NA_integer_, length(counts))
  block_of[plan$block_cells] <- rep(seq_along(sizes), sizes)
  outside <- counts[is.na(block_of)]
  risks <- if (goal == "all_matches") 1 / outside else rep(1, sum(outside == 1))
  m0 <- if (length(risks)) max(risks) else 0
  seen <- new.env()
  for (b in seq_along(sizes)) {
    ids <- plan$block_cells[plan$block_start[b] + seq_len(sizes[b])]
    t <- counts[ids]
    th <- plan$theta[b]
    m <- sizes[b]
    if (is.na(th)) {
      # a matrix block: every cell j, the sources landing with p[j, c]
      p <- pram_matrix(plan, b)
      targets <- seq_len(m)
      if (goal == "sample_uniques") targets <- targets[t == 1]
      for (j in targets) {
        parts <- lapply(seq_len(m), function(c) c(t[c] - (c == j), p[j, c]))
        risks <- c(risks, reference_risks(parts, p[j, j], sum(t), m0, goal))
      }
      next
    }
    t <- sort(t)
    sig <- paste(m, format(th, digits = 17), paste(t, collapse = ","))
    if (!is.null(seen[[sig]])) next
    seen[[sig]] <- TRUE
    targets <- unique(t)
    if (goal == "sample_uniques") targets <- targets[targets == 1]
    for (f in targets) {
      others <- t[-match(f, t)]
      parts <- c(list(c(f - 1, 1 - th / f)), lapply(others, function(ti) c(ti, th / ((m - 1) * ti))))
      risks <- c(risks, reference_risks(parts, 1 - th / f, sum(t), m0, goal))
    }
  }
  if (all(is.na(risks))) NA_real_ else max(risks, na.rm = TRUE)
}

# R(a) of a target that stays with probability `stay` while the other units
# land in its cell as the binomials `parts` (c(n, p) each), for the a the
# goal covers up to 1 / m0 (or the block's units).
reference_risks <- function(parts, stay, units, m0, goal) {
  A <- if (goal == "all_matches") min(units, if (m0 > 0) floor(1 / m0) + 1 else units) else 1
  y <- c(1, numeric(A))
  for (p in parts) {
    if (p[1] == 0 || p[2] == 0) next
    pb <- dbinom(0:min(A, p[1]), p[1], p[2])
    z <- numeric(A + 1)
    for (k in seq_along(pb)) z[k:(A + 1)] <- z[k:(A + 1)] + pb[k] * y[1:(A + 2 - k)]
    y <- z
  }
  a <- seq_len(A)
  num <- stay * y[a]
  den <- num + (1 - stay) * c(y[-1], 0)[a]
  ifelse(den > 0, num / den / a, NA)
}

# Everything a release must satisfy, checked from the outside.
expect_valid_release <- function(rel, data, keys, xi, goal, partition = NULL, also = NULL, info = "") {
  cert <- rel$certificate
  if (!is.na(cert$risk)) expect_lte(cert$risk, xi)
  expect_equal(cert$risk, reference_max_risk(rel$plan, goal), tolerance = 1e-9, info = info)
  expect_true(all(pram_unbiased(rel$plan)$unbiased), info = info)
  vars <- c(keys, also)
  out <- rel$data
  expect_identical(dim(out), dim(data))
  expect_identical(out[setdiff(names(data), vars)], data[setdiff(names(data), vars)], info = info)
  in_block <- !is.na(rel$cells$cell_id) & rel$cells$cell_id %in% rel$plan$block_cells
  same <- Reduce(`&`, lapply(vars, function(v) (is.na(out[[v]]) & is.na(data[[v]])) | (!is.na(out[[v]]) & !is.na(data[[v]]) & out[[v]] == data[[v]])))
  expect_true(all(same[!in_block]), info = info)
  # no record leaves its partition set (after merges) or changes a kept variable
  final <- rel$sets$set
  for (k in seq_len(nrow(rel$merges))) final[final == rel$merges$set[k]] <- rel$merges$merged_into[k]
  set_after_merges <- final[rel$set_of_cell]
  inside <- !is.na(rel$cells$cell_id)
  expect_identical(set_after_merges[rel$new_cell[inside]], set_after_merges[rel$cells$cell_id[inside]], info = info)
  for (v in names(partition)) {
    spec <- partition[[v]]
    if (identical(spec, "keep")) {
      expect_identical(out[[v]], data[[v]], info = info)
    } else if (nrow(rel$merges) == 0) {
      if (is.numeric(spec)) {
        expect_identical(findInterval(out[[v]], spec), findInterval(data[[v]], spec), info = info)
      } else if (is.list(spec)) {
        grp <- function(x) vapply(as.character(x), function(z) which(vapply(spec, function(s) z %in% s, logical(1))), integer(1), USE.NAMES = FALSE)
        expect_identical(grp(out[[v]]), grp(data[[v]]), info = info)
      } else {
        expect_identical(unname(spec[as.character(out[[v]])]), unname(spec[as.character(data[[v]])]), info = info)
      }
    }
  }
  # the set of key combinations can only shrink (Step 2: no new combinations)
  combo <- function(d) do.call(paste, c(d[vars], sep = "\r"))
  expect_true(all(combo(out) %in% combo(data)), info = info)
}

acs_partition <- list(SEX = "keep", AGEP = c(0, 18, 25, 35, 45, 55, 65, Inf))
acs_keys <- c("SEX", "AGEP", "RAC1P", "MSP", "PUMA")
xis <- c(0.5, 0.4, 0.35, 0.3, 0.2, 0.1, 0.05)

test_that("ifpr meets every bound on the real ACS excerpts, for every goal and method", {
  ma <- load_acs("ma2019")
  for (xi in xis) {
    for (goal in c("all_matches", "unique_matches", "sample_uniques")) {
      methods <- if (goal == "sample_uniques" || xi > 1 / 3) c("tiered", "nayak") else "tiered"
      for (method in methods) {
        info <- paste("ma2019", xi, goal, method)
        set.seed(round(xi * 1000))
        rel <- ifpr(ma, acs_keys, xi, goal = goal, method = method, partition = acs_partition,
                    on_infeasible = "merge")
        expect_valid_release(rel, ma, acs_keys, xi, goal, acs_partition, info = info)
      }
    }
  }
})

test_that("ifpr meets every bound on the national ACS excerpt", {
  nat <- load_acs("national2019")
  race <- list(white = "1", black = "2", other = as.character(3:9))
  part <- c(acs_partition, list(RAC1P = race))
  for (xi in c(0.4, 0.2, 0.05)) {
    for (goal in c("all_matches", "unique_matches")) {
      for (calibrate in c("exact", "bound")) {
        info <- paste("national2019", xi, goal, calibrate)
        set.seed(7)
        rel <- ifpr(nat, acs_keys, xi, goal = goal, partition = part, calibrate = calibrate,
                    on_infeasible = "merge")
        expect_valid_release(rel, nat, acs_keys, xi, goal, part, info = info)
      }
    }
  }
})

test_that("ifpr meets every bound on sdcMicro's testdata", {
  td <- sdcmicro_testdata()
  keys <- c("urbrur", "roof", "walls", "water", "electcon", "relat", "sex")
  for (xi in xis) {
    for (goal in c("all_matches", "sample_uniques")) {
      methods <- if (goal == "sample_uniques" || xi > 1 / 3) c("tiered", "nayak") else "tiered"
      for (method in methods) {
        info <- paste("testdata", xi, goal, method)
        set.seed(3)
        rel <- ifpr(td, keys, xi, goal = goal, method = method, partition = list(urbrur = "keep"),
                    on_infeasible = "merge")
        expect_valid_release(rel, td, keys, xi, goal, list(urbrur = "keep"), info = info)
      }
    }
  }
})

test_that("ifpr meets every bound on synthetic data, with variables perturbed jointly", {
  set.seed(10)
  n <- 3000
  df <- data.frame(
    sex = factor(sample(c("F", "M"), n, TRUE)),
    age = sample(0:90, n, TRUE),
    area = sample(sprintf("A%02d", 1:30), n, TRUE),
    edu = factor(sample(c("low", "mid", "high"), n, TRUE)),
    income = rlnorm(n, 10)
  )
  keys <- c("sex", "age", "area")
  part <- list(sex = "keep", age = c(0, 18, 65, Inf))
  for (xi in xis) {
    info <- paste("synthetic", xi)
    rel <- ifpr(df, keys, xi, partition = part, also = "edu", on_infeasible = "merge")
    expect_valid_release(rel, df, keys, xi, "all_matches", part, also = "edu", info = info)
  }
})

test_that("exact calibration never costs more than the bound, and saves on real data", {
  ma <- load_acs("ma2019")
  saved <- 0
  for (xi in c(0.4, 0.3, 0.2, 0.1)) {
    for (goal in c("all_matches", "unique_matches", "sample_uniques")) {
      set.seed(1)
      ex <- ifpr(ma, acs_keys, xi, goal = goal, partition = acs_partition, on_infeasible = "merge")
      set.seed(1)
      bd <- ifpr(ma, acs_keys, xi, goal = goal, partition = acs_partition, on_infeasible = "merge",
                 calibrate = "bound")
      info <- paste(xi, goal)
      expect_identical(ex$plan$block_cells, bd$plan$block_cells, info = info)
      expect_true(all(ex$plan$theta <= bd$plan$theta), info = info)
      expect_lte(ex$certificate$expected_changed, ex$certificate$expected_changed_bound)
      expect_lte(ex$certificate$total_variance, ex$certificate$total_variance_bound * (1 + 1e-12))
      expect_equal(bd$certificate$expected_changed, ex$certificate$expected_changed_bound)
      saved <- saved + (ex$certificate$expected_changed_bound - ex$certificate$expected_changed)
    }
  }
  expect_gt(saved, 1)
})

test_that("method = 'nayak' with xi = 0.395 reproduces Section 7: theta 0.8, blocks of at least 5", {
  keys <- c("sex", "age", "race", "marital", "puma")
  race <- c(White = "white", Black = "black")
  other <- setdiff(levels(pums_md$race), names(race))
  race <- c(race, stats::setNames(rep("other", length(other)), other))
  part <- list(sex = "keep", age = c(0, 18, 25, 35, 45, 55, 65, Inf), race = race)
  set.seed(2016)
  rel <- ifpr(pums_md, keys, 0.395, method = "nayak", calibrate = "bound", partition = part)
  expect_equal(round(unique(rel$plan$theta), 2), 0.8)
  expect_gte(min(diff(rel$plan$block_start)), 5L)
  expect_identical(sum(is.na(rel$sets$merged_into)), 42L)
  # every singleton and doubleton cell is in a block, nothing else
  counts <- rel$cells$cells$count
  expect_setequal(rel$plan$block_cells, which(counts <= 2))
  expect_lte(rel$certificate$risk, 0.395)
  # and for split = TRUE, blocks of 5 to 9 cells
  rel2 <- ifpr(pums_md, keys, 0.395, method = "nayak", calibrate = "bound", partition = part, split = TRUE)
  expect_true(all(diff(rel2$plan$block_start) %in% 5:9))
  expect_lte(rel2$certificate$risk, 0.395)
})

test_that("method = 'nayak' below 1/3 points to method = 'tiered'", {
  df <- data.frame(k = rep(1:20, c(rep(1, 10), rep(5, 10))))
  expect_error(ifpr(df, "k", 0.3, method = "nayak"), class = "sdcRisk_error_infeasible")
  expect_snapshot(error = TRUE, ifpr(df, "k", 0.3, method = "nayak"))
  expect_s3_class(ifpr(df, "k", 0.3, goal = "sample_uniques", method = "nayak"), "sdc_release")
})

test_that("infeasible partition sets: an error by default, merged with a report when asked", {
  # ages 80+ hold only two singleton cells: too few for a block of 5 at xi = 0.3
  df <- data.frame(
    sex = rep(c("F", "M"), 50),
    age = c(rep(c(20, 21, 22, 23, 24, 40, 41, 42, 43, 44), each = 9), c(81, 82), 30:37)
  )
  keys <- c("sex", "age")
  part <- list(age = c(0, 35, 80, Inf))
  expect_error(ifpr(df, keys, 0.3, partition = part), class = "sdcRisk_error_infeasible")
  expect_snapshot(error = TRUE, ifpr(df, keys, 0.3, partition = part))
  set.seed(1)
  rel <- ifpr(df, keys, 0.3, partition = part, on_infeasible = "merge")
  expect_identical(nrow(rel$merges), 1L)
  # the 80+ set merges into the adjacent 35-80 set, not the distant 0-35 one
  expect_identical(rel$sets$label[rel$merges$set], "age [80,Inf)")
  expect_identical(rel$sets$label[rel$merges$merged_into], "age [35,80)")
  expect_lte(rel$certificate$risk, 0.3)
  expect_output(print(summary(rel)), "Merges")
  expect_valid_release(rel, df, keys, 0.3, "all_matches", part, info = "merge")
  # a merge that would change a kept variable is refused
  df2 <- rbind(df, data.frame(sex = "X", age = 50))
  expect_error(
    ifpr(df2, keys, 0.3, partition = list(sex = "keep", age = c(0, 35, 80, Inf)), on_infeasible = "merge"),
    class = "sdcRisk_error_infeasible"
  )
})

test_that("the nearest set is the one differing least, adjacent groups first", {
  sets <- data.frame(set = 1:4)
  sets$coords <- list(matrix(c(1, 1), 1), matrix(c(1, 2), 1), matrix(c(1, 4), 1), matrix(c(2, 1), 1))
  expect_identical(sdcRisk:::nearest_set(2, sets, rep(TRUE, 4), c(5, 5, 50, 50)), 1L)
  expect_identical(sdcRisk:::nearest_set(1, sets, rep(TRUE, 4), c(5, 5, 50, 50)), 4L)
  expect_identical(sdcRisk:::nearest_set(3, sets, c(TRUE, FALSE, TRUE, TRUE), c(5, 5, 50, 50)), 1L)
})

test_that("set.seed reproduces a release exactly", {
  keys <- c("sex", "age", "race", "marital", "puma")
  set.seed(5)
  a <- ifpr(pums_md, keys, 0.2, partition = list(sex = "keep"))
  set.seed(5)
  b <- ifpr(pums_md, keys, 0.2, partition = list(sex = "keep"))
  expect_identical(a$data, b$data)
  expect_identical(a$certificate, b$certificate)
})

test_that("print and summary give the certificate in a few lines", {
  keys <- c("sex", "age", "race", "marital", "puma")
  set.seed(5)
  rel <- ifpr(pums_md, keys, 0.3, partition = list(sex = "keep", age = c(0, 18, 65, Inf)))
  out <- format(rel)
  # 10 lines since issue 37 (item 9): the cell and its keys have lines of
  # their own, every line within 80 columns
  expect_lte(length(out), 10)
  expect_match(out[3], "Certificate \\(exact maximum risk\\): R = ")
  expect_output(print(rel), "Exact calibration saved")
  expect_output(print(summary(rel)), "Partition sets")
})

test_that("bad input to ifpr gets classed errors naming the argument", {
  df <- data.frame(a = rep(1:5, 1:5), b = rep(c("x", "y"), length.out = 15), v = 1:15)
  expect_error(ifpr(df, "zz", 0.3), class = "sdcRisk_error_unknown_key")
  expect_error(ifpr(df, "a", 0), class = "sdcRisk_error_xi")
  expect_error(ifpr(df, "a", 1), class = "sdcRisk_error_xi")
  expect_error(ifpr(df, "a", c(0.2, 0.3)), class = "sdcRisk_error_xi")
  expect_error(ifpr(df, "a", 0.3, also = "a"), class = "sdcRisk_error_also")
  expect_error(ifpr(df, "a", 0.3, also = "nope"), class = "sdcRisk_error_unknown_key")
  expect_error(ifpr(df, "a", 0.3, partition = list(zz = "keep")), class = "sdcRisk_error_unknown_key")
  expect_error(ifpr(df, c("a", "b"), 0.3, partition = list(a = "keep", b = "keep")), class = "sdcRisk_error_partition")
  expect_error(ifpr(df, c("a", "b"), 0.3, partition = list(b = c(x = "g1"))), class = "sdcRisk_error_partition")
  expect_error(ifpr(df, c("a", "b"), 0.3, partition = list(a = c(2, 4))), class = "sdcRisk_error_partition")
  expect_error(ifpr(df, c("a", "b"), 0.3, partition = list(b = list(c("x", "y"), "y"))), class = "sdcRisk_error_partition")
  expect_error(ifpr(df, c("a", "b"), 0.3, partition = list("keep")), class = "sdcRisk_error_partition")
  expect_error(ifpr(df, "a", 0.3, goal = "all"))
  expect_error(ifpr(df, "a", 0.3, bogus = 1))
  expect_error(ifpr(as.list(df), "a", 0.3), class = "sdcRisk_error_not_data_frame")
  expect_snapshot(error = TRUE, ifpr(df, c("a", "b"), 0.3, partition = list(b = c(x = "g1"))))
  expect_snapshot(error = TRUE, ifpr(df, "a", 0.3, also = "a"))
  expect_snapshot(error = TRUE, ifpr(df, c("a", "b"), 0.3, partition = list(a = "keep", b = "keep")))
})

test_that("ifpr(known =) certifies intruders who know fewer keys, exactly as max_match_risk(known =)", {
  set.seed(11)
  keys <- c("sex", "age", "race", "marital")
  d <- pums_md[sample(nrow(pums_md), 2000), ]
  rel <- ifpr(d, keys, xi = 0.3, known = TRUE, partition = list(sex = "keep"), on_infeasible = "merge")
  kr <- rel$certificate$known
  expect_s3_class(kr, "sdc_max_risk_known")
  expect_equal(nrow(kr), 2^length(keys) - 1)
  expect_true(all(kr$risk <= 0.3 + 1e-12, na.rm = TRUE))
  for (i in c(1, nrow(kr), 5)) {
    k <- strsplit(kr$known[i], ", ")[[1]]
    expect_equal(kr$risk[i], max_match_risk(rel$plan, known = k)$risk)
  }
  # the known sets do not change the release itself
  set.seed(11)
  d2 <- pums_md[sample(nrow(pums_md), 2000), ]
  rel0 <- ifpr(d2, keys, xi = 0.3, partition = list(sex = "keep"), on_infeasible = "merge")
  expect_identical(rel0$data, rel$data)
  expect_null(rel0$certificate$known)
  one <- ifpr(d, keys, xi = 0.3, known = c("age", "race"), partition = list(sex = "keep"),
    on_infeasible = "merge")
  expect_equal(nrow(one$certificate$known), 1)
  expect_match(format(one), "Also certified for intruders who know fewer keys", all = FALSE)
})

test_that("ifpr(known =) rejects keys that are not keys", {
  df <- data.frame(x = rep(c("a", "b", "c"), c(1, 1, 5)), y = rep(1:2, c(4, 3)))
  expect_error(ifpr(df, c("x", "y"), 0.4, known = "z"), class = "sdcRisk_error_known")
  expect_error(ifpr(df, c("x", "y"), 0.4, known = 3), class = "sdcRisk_error_known")
  expect_error(ifpr(df, c("x", "y"), 0.4, known = list()), class = "sdcRisk_error_known")
  # a set that names no key (NULL would otherwise read as every key)
  for (bad in list(list(NULL), list("x", character()), character())) {
    expect_error(ifpr(df, c("x", "y"), 0.4, known = bad), class = "sdcRisk_error_known", regexp = "`known`")
  }
  expect_error(ifpr(df, c("x", "y"), 0.4, known = list("x", NULL)), "Set 2 names no key", class = "sdcRisk_error_known")
})

test_that("ifpr(known =) returns nothing above xi when no repair meets the intruder: the certificate error names `known`", {
  cells <- data.frame(
    x = c("a", "b", "d", "a", "b", "c", "a", "b", "c", "d", "a", "b", "c", "d"),
    y = rep(c("A", "A", "A", "B", "B", "B", "A", "A", "A", "A", "B", "B", "B", "B")),
    z = rep(c("p", "q"), c(6, 8)),
    n = c(8, 1, 1, 2, 8, 3, 3, 3, 2, 1, 2, 2, 1, 1)
  )
  d <- cells[rep(seq_len(nrow(cells)), cells$n), c("x", "y", "z")]
  e <- tryCatch(ifpr(d, c("x", "y", "z"), 0.15, method = "optimal", known = list("x")), error = function(e) e)
  expect_s3_class(e, "sdcRisk_error_certificate")
  expect_identical(e$arg, "known")
  expect_match(conditionMessage(e), "knows only \"x\"")
  expect_match(conditionMessage(e), "No release is returned")
})

test_that("records with a missing key are counted out loud; the missing category can be kept apart", {
  keys <- c("sex", "age", "race", "marital", "puma")
  d <- pums_md[1:4000, ]
  d$race[1:7] <- NA
  set.seed(1)
  rel <- ifpr(d, keys, xi = 0.3)
  expect_true(any(grepl("Not perturbed: 7 records with a missing key value", format(rel))))
  expect_output(print(summary(rel)), "Not perturbed: 7 records")
  expect_identical(rel$data[1:7, ], d[1:7, ])
  # na = "category": records can move into and out of NA, which the print says
  set.seed(1)
  cat_rel <- ifpr(d, keys, xi = 0.3, na = "category")
  expect_true(any(grepl("move into and out of it", format(cat_rel))))
  # ... unless a partition puts NA in a group of its own
  set.seed(1)
  kept <- ifpr(d, keys, xi = 0.3, na = "category",
               partition = list(race = list(known = levels(d$race), missing = NA)))
  expect_identical(which(is.na(kept$data$race)), 1:7)
  expect_lte(kept$certificate$risk, 0.3)
  # no missing value: no such line
  set.seed(1)
  full <- ifpr(pums_md[1:4000, ], keys, xi = 0.3)
  expect_false(any(grepl("missing key", format(full))))
})

test_that("summary() lists the sets to which others were merged only when some were", {
  keys <- c("sex", "age", "race", "marital", "puma")
  set.seed(1)
  rel <- ifpr(pums_md[1:3000, ], keys, xi = 0.3, partition = list(sex = "keep"))
  out <- utils::capture.output(print(summary(rel)))
  expect_false(any(grepl("merged_into", out)))
  expect_false(any(grepl("^ +NA$", out)))
})

# What identifies a plan and its draws: its blocks, their cells and sizes,
# theta (summed with weights, compared bit for bit) and the released cells.
plan_fingerprint <- function(rel) {
  p <- rel$plan
  list(
    blocks = as.numeric(length(p$theta)),
    cells = sum(as.numeric(p$block_cells) * seq_along(p$block_cells)),
    sizes = sum(as.numeric(p$block_start) * seq_along(p$block_start)),
    theta = sum(p$theta * seq_along(p$theta)),
    released = sum(as.numeric(rel$new_cell) * seq_along(rel$new_cell), na.rm = TRUE)
  )
}

test_that("today's tiered and Nayak designs give the same plans and releases for the same seed, bit for bit", {
  ma <- load_acs("ma2019")
  # fingerprints of the releases made before per-cell bounds (commit c945d6c)
  cases <- list(
    list(0.1, "all_matches", "tiered", NULL, FALSE, list(456, 4844904472, 221351791, 0x1.ed024a8144757p+17, 34788254376)),
    list(0.3, "all_matches", "tiered", acs_partition, FALSE, list(515, 3539426557, 178828791, 0x1.a46742e1fe81ap+16, 34787017070)),
    list(0.3, "unique_matches", "tiered", acs_partition, FALSE, list(645, 1510271829, 180520893, 0x1.3362f3ccfec4cp+17, 34788845758)),
    list(0.5, "all_matches", "nayak", NULL, TRUE, list(569, 2447760926, 185355164, 0x1.9a73b2ea410b4p+15, 34807002403)),
    list(0.3, "sample_uniques", "nayak", acs_partition, FALSE, list(14, 1510271829, 93159, 0x1.3cb332e86a0bdp+6, 34784443661))
  )
  for (cs in cases) {
    info <- paste(cs[[1]], cs[[2]], cs[[3]])
    set.seed(1)
    rel <- ifpr(ma, acs_keys, cs[[1]], goal = cs[[2]], method = cs[[3]], partition = cs[[4]], split = cs[[5]],
      on_infeasible = "merge")
    expect_identical(unname(plan_fingerprint(rel)), lapply(cs[[6]], as.numeric), info = info)
    # one bound per cell, all equal to xi: the same plan
    cf <- cell_frequencies(ma, acs_keys)
    d <- sdcRisk:::ifpr_design(cf, acs_keys, acs_keys, cs[[1]], cs[[2]], cs[[4]], cs[[3]], "exact", "merge",
      cs[[5]], bound = rep(cs[[1]], nrow(cf$cells)))
    expect_identical(d$plan[c("block_start", "block_cells", "theta")], rel$plan[c("block_start", "block_cells", "theta")],
      info = info)
  }
})

test_that("method = 'optimal' meets every bound, exactly, on the ACS excerpt for every goal", {
  ma <- load_acs("ma2019")
  for (xi in c(0.3, 0.1)) {
    for (goal in c("all_matches", "unique_matches", "sample_uniques")) {
      for (part in list(NULL, acs_partition)) {
        info <- paste("optimal", xi, goal, is.null(part))
        set.seed(1)
        rel <- ifpr(ma, acs_keys, xi, goal = goal, method = "optimal", partition = part, on_infeasible = "merge")
        expect_valid_release(rel, ma, acs_keys, xi, goal, partition = part, info = info)
        expect_identical(rel$certificate$method, "optimal")
      }
    }
  }
})

test_that("method = 'optimal' changes fewer key values than the tiered design and no more records", {
  ma <- load_acs("ma2019")
  for (xi in c(0.1, 0.2, 0.3)) {
    set.seed(1)
    tiered <- pram_damage(ifpr(ma, acs_keys, xi))
    set.seed(1)
    rel <- ifpr(ma, acs_keys, xi, method = "optimal")
    opt <- pram_damage(rel)
    # measured (bench/README.md): 0.49 to 0.56 of the key values changed
    expect_lt(opt$keys, 0.57 * tiered$keys)
    expect_lte(opt$records, tiered$records)
    expect_equal(rel$certificate$design$value, opt$keys)
  }
})

test_that("method = 'optimal' minimises the damage asked for: records, variance, weighted keys, distance", {
  nat <- load_acs("national2019")[1:8000, ]
  set.seed(1)
  by_keys <- ifpr(nat, acs_keys, 0.2, method = "optimal")
  w <- c(PUMA = 0.2, MSP = 3)
  set.seed(1)
  by_weights <- ifpr(nat, acs_keys, 0.2, method = "optimal", weights = w)
  expect_lt(pram_damage(by_weights, weights = w)$keys, pram_damage(by_keys, weights = w)$keys)
  set.seed(1)
  by_distance <- ifpr(nat, acs_keys, 0.2, method = "optimal", damage = "distance", ordered = "AGEP")
  expect_lt(pram_damage(by_distance, ordered = "AGEP")$distance, pram_damage(by_keys, ordered = "AGEP")$distance)
  set.seed(1)
  by_records <- ifpr(nat, acs_keys, 0.2, method = "optimal", damage = "records")
  expect_lte(pram_damage(by_records)$records, pram_damage(by_keys)$records)
  set.seed(1)
  by_variance <- ifpr(nat, acs_keys, 0.2, method = "optimal", damage = "variance")
  expect_lte(pram_damage(by_variance)$variance, pram_damage(by_keys)$variance)
  for (rel in list(by_weights, by_distance, by_records, by_variance)) expect_lte(rel$certificate$risk, 0.2)
  expect_output(print(by_distance), "Least-damage design \\(distance\\)")
})

test_that("the least-damage design's arguments get classed errors naming them", {
  df <- data.frame(a = rep(1:6, 1:6), b = factor(rep(c("x", "y", "z"), 7)))
  expect_error(ifpr(df, c("a", "b"), 0.3, method = "optimal", damage = "money"), class = "sdcRisk_error_argument")
  expect_error(ifpr(df, c("a", "b"), 0.3, method = "optimal", weights = c(a = -1)), class = "sdcRisk_error_weights")
  expect_error(ifpr(df, c("a", "b"), 0.3, method = "optimal", weights = c(a = NA)), class = "sdcRisk_error_weights")
  expect_error(ifpr(df, c("a", "b"), 0.3, method = "optimal", damage = "distance", ordered = "b"),
    class = "sdcRisk_error_ordered")
  expect_error(ifpr(df, c("a", "b"), 0.3, damage = "records"), class = "sdcRisk_error_argument")
  expect_error(ifpr(df, c("a", "b"), 0.3, weights = c(a = 2)), class = "sdcRisk_error_argument")
  # a bound no design can reach: all 21 records are too few for xi = 0.04
  expect_error(ifpr(df, c("a", "b"), 0.04, method = "optimal"), class = "sdcRisk_error_infeasible")
  expect_snapshot(error = TRUE, ifpr(df, c("a", "b"), 0.3, weights = c(a = 2)))
  expect_snapshot(error = TRUE, ifpr(df, c("a", "b"), 0.04, method = "optimal"))
})

test_that("the certificate line says that records with a missing key are outside it (issue 37)", {
  keys <- c("sex", "age", "race")
  d <- pums_md[1:3000, ]
  d$race[1:7] <- NA
  set.seed(2)
  rel <- ifpr(d, keys, xi = 0.3)
  # the certificate's lines (one line before the layout of item 9 of issue 37)
  line <- certificate_text(format(rel))
  expect_match(line, "records with complete keys only: 7 records with a missing key are outside the certificate", fixed = TRUE)
  expect_identical(rel$certificate$n_excluded, 7)
  expect_true(any(grepl("outside the certificate", format(rel$certificate), fixed = TRUE)))
  d$race[2:7] <- d$race[8]
  set.seed(2)
  one <- ifpr(d, keys, xi = 0.3)
  expect_match(certificate_text(format(one)), "1 record with a missing key is outside", fixed = TRUE)
  # nothing is said when every key is known, nor when NA is a category the certificate covers
  set.seed(2)
  expect_no_match(format(ifpr(pums_md[1:3000, ], keys, xi = 0.3)), "outside the certificate", fixed = TRUE)
  set.seed(2)
  expect_no_match(format(ifpr(d, keys, xi = 0.3, na = "category")), "outside the certificate", fixed = TRUE)
  # a per-variable PRAM release says the same
  set.seed(2)
  pr <- pram_release(d, keys, vars = "race", pd = 0.8)
  expect_match(certificate_text(format(pr)), "1 record with a missing key is outside", fixed = TRUE)
})

test_that("a release, its certificate and summary print within 80 columns, the cell's keys on a line of their own (issue 37)", {
  keys <- c("sex", "age", "race", "marital", "puma")
  d <- pums_md[1:4000, ]
  d$race[1:3] <- NA
  set.seed(3)
  rel <- ifpr(d, keys, xi = 0.3, partition = list(sex = "keep"), known = list(c("sex", "age")))
  for (out in list(format(rel), format(rel$certificate), utils::capture.output(print(summary(rel))))) {
    expect_true(all(nchar(out) <= 80), info = out[nchar(out) > 80][1])
  }
  out <- format(rel)
  cert <- rel$certificate
  # the goal, the certificate's head, its cell, and the cell's keys alone
  expect_identical(out[2], "Goal: all matches (Goal 3: every a >= 1, every cell)")
  expect_identical(out[3], sprintf("Certificate (exact maximum risk): R = %s <= xi = 0.3", format(cert$risk, digits = 6)))
  expect_identical(out[4], sprintf("  at cell %d (T = %d), a = %d:", cert$cell, cert$count, cert$a))
  keys_text <- paste(paste(names(cert$cell_keys), "=", vapply(cert$cell_keys, format, "")), collapse = ", ")
  kl <- out[-(1:4)]
  kl <- kl[seq_len(which(!startsWith(kl, "    "))[1] - 1)]
  expect_identical(gsub(" +", " ", trimws(paste(kl, collapse = " "))), keys_text)
  expect_match(certificate_text(out), "3 records with a missing key are outside the certificate", fixed = TRUE)
})

test_that("ifpr_design(bound =): per-cell bounds calibrate and certify R_j(a, t) <= bound[j]; bounds xi change nothing", {
  d <- readRDS(test_path("fixtures", "acs2019", "ma2019.rds"))[1:3000, ]
  d$AGEP <- cut(d$AGEP, c(seq(0, 80, 10), Inf), right = FALSE)
  keys <- c("SEX", "AGEP", "RAC1P", "MSP", "PUMA")
  cf <- cell_frequencies(d, keys)
  design <- function(bound) {
    sdcRisk:::ifpr_design(cf, keys, keys, 0.3, "all_matches", list(SEX = "keep"), "tiered", "exact", "error",
                          FALSE, known = list("PUMA"), bound = bound)
  }
  plain <- design(NULL)
  same <- design(rep(0.3, nrow(cf$cells)))
  expect_identical(same$plan, plain$plan)
  expect_identical(same$mx$risk, plain$mx$risk)
  expect_identical(same$known, plain$known)
  # bounds between xi and 1: the design protects only the cells above their
  # own bound, fewer records are expected to change, and every cell meets
  # its bound
  set.seed(2)
  bound <- pmin(1, 0.3 / stats::runif(nrow(cf$cells), 0.05, 1))
  loose <- design(bound)
  need <- sdcRisk:::needs_protection(cf$cells$count, bound, "all_matches")
  expect_true(all(which(need) %in% loose$plan$block_cells))
  expect_lt(sdcRisk:::plan_cost(loose$plan, stay = FALSE)$changed, sdcRisk:::plan_cost(plain$plan, stay = FALSE)$changed)
  in_blocks <- loose$plan$block_cells
  mr <- match_risk(loose$plan, in_blocks, a = 1:12)
  worst <- tapply(mr$risk, mr$cell, max, na.rm = TRUE)
  expect_true(all(worst <= bound[as.integer(names(worst))] * (1 + 1e-12)))
  expect_lte(loose$mx$risk, 0.3)
})

# A 1,500-person sample of the Massachusetts excerpt (ages in decades) and
# the excerpt's counts as its population.
ma_sample <- function() {
  pop <- readRDS(test_path("fixtures", "acs2019", "ma2019.rds"))
  pop$AGEP <- cut(pop$AGEP, c(seq(0, 80, 10), Inf), right = FALSE)
  keys <- c("SEX", "AGEP", "RAC1P", "MSP", "PUMA")
  set.seed(8)
  list(d = pop[sample(nrow(pop), 1500), ], keys = keys, counts = cell_frequencies(pop, keys)$cells)
}

test_that("ifpr() for a sample certifies the risk of a target who may not be in the file, with less damage", {
  smp <- ma_sample()
  d <- smp$d
  keys <- smp$keys
  counts <- smp$counts
  set.seed(9)
  in_file <- ifpr(d, keys, xi = 0.2)
  set.seed(9)
  rel <- ifpr(d, keys, xi = 0.2, population = counts, target_in_file = "unknown")
  cert <- rel$certificate
  expect_lte(cert$risk, 0.2)
  expect_identical(cert$risk, max_match_risk(rel$plan, population = counts, target_in_file = "unknown")$risk)
  expect_identical(cert$target_in_file, "unknown")
  # blocks for the cells the population leaves above their bound only (the
  # design takes min(1, xi F / t) per cell), so fewer cells in blocks and
  # fewer records changed (a fifth of the population is in the file here;
  # bench/bench_sample.R measures 5%)
  bound <- pmin(1, 0.2 / rel$sample$weight)
  need <- sdcRisk:::needs_protection(rel$cells$cells$count, bound, "all_matches")
  expect_true(all(which(need) %in% rel$plan$block_cells))
  expect_lt(length(rel$plan$block_cells), length(in_file$plan$block_cells))
  expect_lt(cert$expected_changed, in_file$certificate$expected_changed)
  expect_lt(cert$records_changed, in_file$certificate$records_changed)
  # release_risk() keeps the release's sample case
  expect_identical(release_risk(rel)$certificate$risk, cert$risk)
  # an estimate from a model, labelled as such
  set.seed(9)
  est <- ifpr(d, keys, xi = 0.2, population = population_model("negbin", fraction = 1500 / sum(counts$count)),
              target_in_file = "unknown", known = list("PUMA"))
  expect_false(est$certificate$sample$exact)
  expect_lte(est$certificate$risk, 0.2)
  expect_identical(attr(est$certificate$known, "sample")$exact, FALSE)
  expect_snapshot({
    rel
    summary(rel)
    est$certificate
  })
})

test_that("method = 'optimal' for a sample meets every cell's bound min(1, xi F / t), exactly", {
  smp <- ma_sample()
  d <- smp$d
  keys <- smp$keys
  counts <- smp$counts
  set.seed(9)
  rel <- ifpr(d, keys, xi = 0.2, method = "optimal", population = counts, target_in_file = "unknown")
  expect_lte(rel$certificate$risk, 0.2)
  expect_identical(rel$certificate$risk, max_match_risk(rel$plan, population = counts, target_in_file = "unknown")$risk)
  # every cell against its own bound, cell by cell from the core's match_risk()
  bound <- pmin(1, 0.2 / rel$sample$weight)
  mr <- match_risk(rel$plan, rel$plan$block_cells, a = 1:5)
  worst <- tapply(mr$risk, mr$cell, max, na.rm = TRUE)
  expect_true(all(worst <= bound[as.integer(names(worst))] * (1 + 1e-9)))
  # it protects only the cells above their bound, and changes fewer key
  # values than the optimal design for the file alone
  need <- sdcRisk:::needs_protection(rel$cells$cells$count, bound, "all_matches")
  expect_true(all(which(need) %in% rel$plan$block_cells))
  set.seed(9)
  in_file <- ifpr(d, keys, xi = 0.2, method = "optimal")
  expect_lt(pram_damage(rel)$keys, pram_damage(in_file)$keys)
})

test_that("a misspelt partition rule shows the value and suggests \"keep\" (issue 37)", {
  d <- pums_md[1:500, ]
  cnd <- expect_error(ifpr(d, c("sex", "age"), 0.3, partition = list(sex = "kep")), class = "sdcRisk_error_partition")
  msg <- cli::ansi_strip(conditionMessage(cnd))
  expect_match(msg, "It is the string \"kep\".", fixed = TRUE)
  expect_match(msg, "Did you mean \"keep\"?", fixed = TRUE)
  # a word far from "keep" gets no suggestion; breaks on a factor say why
  far <- expect_error(ifpr(d, c("sex", "age"), 0.3, partition = list(sex = "fixed")), class = "sdcRisk_error_partition")
  expect_no_match(cli::ansi_strip(conditionMessage(far)), "Did you mean")
  expect_snapshot(error = TRUE, {
    ifpr(d, c("sex", "age"), 0.3, partition = list(sex = "Keep "))
    ifpr(d, c("sex", "age"), 0.3, partition = list(sex = c(0, 1, 2)))
  })
})
