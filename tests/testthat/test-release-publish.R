# publish_plan() and read_plan(): what a data user gets beside the released
# file, written and read back as RDS and JSON.

ifpr_release <- function(n = 3000, seed = 1) {
  set.seed(seed)
  ifpr(pums_md[seq_len(n), ], c("sex", "age", "race"), xi = 0.3)
}

expect_round_trip <- function(pub, ...) {
  for (ext in c(".rds", ".json")) {
    f <- withr::local_tempfile(fileext = ext)
    expect_identical(publish_plan(..., file = f), pub)
    expect_identical(read_plan(f), pub, info = ext)
  }
}

test_that("an IFPR release publishes its block cells with their counts and theta, and reads back identical", {
  skip_if_not_installed("jsonlite")
  skip_if_not_installed("withr")
  rel <- ifpr_release()
  pub <- publish_plan(rel)
  expect_s3_class(pub, c("sdc_publication_blocks", "sdc_publication"))
  plan <- rel$plan
  cells <- plan$cells$cells[plan$block_cells, ]
  expect_identical(pub$plan$theta, plan$theta)
  expect_identical(pub$plan$size, diff(plan$block_start))
  expect_identical(pub$plan$cells$count, cells$count)
  # the codes name the cells' categories
  for (k in pub$keys) {
    expect_identical(k$categories[pub$plan$cells$codes[[k$name]]], as.character(cells[[k$name]]))
    expect_true(k$perturbed)
  }
  expect_identical(pub$records$n, 3000)
  expect_identical(pub$records$margins$race$counts, as.numeric(table(rel$data$race)))
  expect_identical(pub$certificate$risk, rel$certificate$risk)
  expect_identical(pub$certificate$xi, 0.3)
  expect_round_trip(pub, rel)
})

test_that("the published block plan gives back the transition matrix of every block", {
  rel <- ifpr_release()
  pub <- publish_plan(rel)
  p <- pub$plan
  start <- c(0, cumsum(p$size))
  for (b in c(1, 7, length(p$size))) {
    cells <- start[b] + seq_len(p$size[b])
    t <- p$cells$count[cells]
    m <- p$size[b]
    # Section 3.3: p_ii = 1 - theta / T_i, p_ji = theta / ((m - 1) T_i)
    expected <- matrix(rep(p$theta[b] / ((m - 1) * t), each = m), m)
    diag(expected) <- 1 - p$theta[b] / t
    expect_equal(unname(pram_matrix(rel$plan, b)), expected, tolerance = 1e-14)
  }
})

test_that("publication holds nothing of the records: no field as long as the data, no seed", {
  rel <- ifpr_release()
  pub <- publish_plan(rel)
  expect_named(unclass(pub), c("format", "version", "kind", "keys", "na", "records", "plan", "certificate", "made_with"))
  lengths_all <- rapply(unclass(pub), length, how = "unlist")
  expect_lt(max(lengths_all), nrow(rel$data))
  expect_false(any(grepl("seed|cell_id|new_cell", names(rapply(unclass(pub), function(x) 0, how = "unlist")))))
})

test_that("per-variable releases, with and without strata, publish their matrices and read back identical", {
  skip_if_not_installed("jsonlite")
  skip_if_not_installed("withr")
  set.seed(3)
  d <- pums_md[1:2000, ]
  for (strata in list(NULL, "sex")) {
    rel <- pram_release(d, c("sex", "race", "marital"), vars = c("race", "marital"), strata = strata)
    pub <- publish_plan(rel)
    expect_s3_class(pub, "sdc_publication_vars")
    expect_identical(pub$plan$vars, c("race", "marital"))
    expect_identical(pub$plan$strata, strata %||% character())
    expect_identical(length(pub$plan$matrices), length(rel$plan$matrices))
    expect_equal(pub$plan$matrices[[1]]$race, unname(rel$plan$matrices[[1]]$race))
    expect_identical(sum(pub$plan$strata_cells$records), 2000)
    expect_identical(vapply(pub$keys, `[[`, TRUE, "perturbed"), c(FALSE, TRUE, TRUE))
    expect_round_trip(pub, rel)
  }
})

test_that("a plan with matrix blocks and missing categories publishes with its released data", {
  skip_if_not_installed("jsonlite")
  skip_if_not_installed("withr")
  df <- data.frame(k = c("a", "a", "b", NA, "c", "c", "c", "d"), m = c(1, 2, 1, 2, 1, 2, 2, 1))
  cf <- cell_frequencies(df, c("k", "m"), na = "category")
  p2 <- matrix(c(0.7, 0.3, 0.4, 0.6), 2)
  plan <- pram_plan(cf, list(1:2, 3:5), theta = c(NA, 1), matrix = list(p2, NULL))
  set.seed(1)
  released <- pram_apply(df, c("k", "m"), plan)
  pub <- publish_plan(plan, released = released)
  expect_identical(pub$keys[[1]]$categories, c("a", "b", "c", "d", NA))
  expect_identical(pub$plan$matrices[[1]], unname(p2))
  expect_null(pub$plan$matrices[[2]])
  expect_identical(pub$certificate$goal, "all_matches")
  expect_round_trip(pub, plan, released = released)
})

test_that("the JSON file has the fields its schema requires", {
  skip_if_not_installed("jsonlite")
  skip_if_not_installed("withr")
  schema <- jsonlite::fromJSON(system.file("schema", "sdc-publication-1.schema.json", package = "sdcRisk"),
                               simplifyVector = FALSE)
  f <- withr::local_tempfile(fileext = ".json")
  publish_plan(ifpr_release(), f)
  x <- jsonlite::fromJSON(f, simplifyVector = FALSE)
  expect_setequal(names(x), names(schema$properties))
  expect_true(all(unlist(schema$required) %in% names(x)))
  expect_true(all(unlist(schema$properties$records$required) %in% names(x$records)))
  blocks <- schema$properties$plan$oneOf[[1]]
  expect_setequal(names(x$plan), names(blocks$properties))
  expect_true(all(unlist(schema$properties$certificate$required) %in% names(x$certificate)))
  # numbers with 17 significant digits: theta comes back bit for bit
  expect_identical(vapply(x$plan$theta, as.numeric, 0), publish_plan(ifpr_release())$plan$theta)
})

test_that("an edited publication is refused, naming what is broken", {
  skip_if_not_installed("withr")
  pub <- publish_plan(ifpr_release())
  bad <- pub
  bad$plan$theta[1] <- 5
  expect_error(print(bad), class = "sdcRisk_error_publication")
  bad <- pub
  bad$plan$cells$codes$race[1] <- 99L
  expect_error(print(bad), class = "sdcRisk_error_publication")
  bad <- pub
  bad$records$margins$sex$counts[1] <- 0
  expect_error(print(bad), class = "sdcRisk_error_publication")
  bad <- pub
  bad$plan$cells$codes$age[2] <- bad$plan$cells$codes$age[1]
  bad$plan$cells$codes$sex[2] <- bad$plan$cells$codes$sex[1]
  bad$plan$cells$codes$race[2] <- bad$plan$cells$codes$race[1]
  expect_error(print(bad), class = "sdcRisk_error_publication")
  expect_snapshot(error = TRUE, print(bad))
  f <- withr::local_tempfile(fileext = ".rds")
  saveRDS(list(format = "sdcRisk-publication", version = 1L, kind = "blocks"), f)
  expect_error(read_plan(f), class = "sdcRisk_error_publication")
  set.seed(3)
  rel <- pram_release(pums_md[1:500, ], c("sex", "race"), vars = "race", strata = "sex")
  vp <- publish_plan(rel)
  vp$plan$matrices[[1]]$race[1, 1] <- 0.5
  expect_error(print(vp), class = "sdcRisk_error_publication")
})

test_that("read_plan() refuses what is not a publication file", {
  skip_if_not_installed("withr")
  expect_error(read_plan("plan.txt"), class = "sdcRisk_error_argument")
  expect_error(read_plan(c("a.rds", "b.rds")), class = "sdcRisk_error_argument")
  expect_error(read_plan(tempfile(fileext = ".rds")), class = "sdcRisk_error_argument")
  f <- withr::local_tempfile(fileext = ".rds")
  saveRDS(list(a = 1), f)
  expect_error(read_plan(f), class = "sdcRisk_error_publication")
  j <- withr::local_tempfile(fileext = ".json")
  writeLines("{not json", j)
  expect_error(read_plan(j), class = "sdcRisk_error_publication")
  expect_error(publish_plan(ifpr_release(), file = "x.csv"), class = "sdcRisk_error_argument")
  expect_error(publish_plan(ifpr_release(), released = pums_md), class = "sdcRisk_error_argument")
  expect_error(publish_plan(pums_md), class = "sdcRisk_error_argument")
})

test_that("a publication prints what it holds", {
  set.seed(3)
  rel <- pram_release(pums_md[1:500, ], c("sex", "race"), vars = "race", strata = "sex")
  pub <- publish_plan(rel)
  pub$made_with <- "sdcRisk (version)"
  expect_snapshot(print(pub))
  pub <- publish_plan(ifpr_release())
  pub$made_with <- "sdcRisk (version)"
  expect_snapshot(print(pub))
})

test_that("a publication says whether its risk is exact or estimated, and for which target", {
  d <- pums_md[1:3000, ]
  keys <- c("sex", "race", "marital")
  set.seed(4)
  rel <- pram_release(d, keys, vars = c("race", "marital"), pd = 0.8)
  pub <- publish_plan(rel)
  expect_identical(pub$certificate$risk_kind, "exact")
  expect_identical(pub$certificate$target, "for a target known to be in the file")
  set.seed(4)
  est <- pram_release(d, keys, vars = c("race", "marital"), pd = 0.8,
                      population = population_model("negbin", fraction = 0.05), target_in_file = "unknown")
  pub_est <- publish_plan(est)
  expect_identical(pub_est$certificate$risk_kind, "estimated")
  expect_match(pub_est$certificate$target, "may not be in the file (estimated", fixed = TRUE)
  expect_equal(pub_est$certificate$risk, est$certificate$risk)
  shown <- paste(format(pub_est), collapse = " ")
  expect_match(shown, "estimated maximum risk", fixed = TRUE)
  expect_no_match(shown, "exact maximum risk", fixed = TRUE)
  # the JSON file keeps both, and a hand-edited label is refused
  f <- withr::local_tempfile(fileext = ".json")
  publish_plan(est, f)
  expect_identical(read_plan(f), pub_est)
  bad <- pub_est
  bad$certificate$risk_kind <- "certain"
  expect_error(estimate_table(est$data, bad, by = "race"), class = "sdcRisk_error_publication")
})

test_that("a publication checked once is not checked again, but an edited one is", {
  set.seed(1)
  rel <- ifpr(pums_md[1:3000, ], c("sex", "age", "race"), xi = 0.3)
  pub <- publish_plan(rel)
  # publish_plan() checked it deeply
  expect_true(publication_checked[[rlang::hash(pub)]])
  rm(list = ls(publication_checked), envir = publication_checked)
  expect_silent(validate_sdc_publication(pub, deep = FALSE))
  expect_false(publication_checked[[rlang::hash(pub)]])
  expect_silent(validate_sdc_publication(pub))
  expect_true(publication_checked[[rlang::hash(pub)]])
  expect_silent(validate_sdc_publication(pub, deep = FALSE))
  expect_true(publication_checked[[rlang::hash(pub)]])
  bad <- pub
  bad$plan$theta[1] <- -1
  expect_error(validate_sdc_publication(bad, deep = FALSE), class = "sdcRisk_error_publication")
  expect_error(estimate_table(rel$data, bad, by = "race"), class = "sdcRisk_error_publication")
  expect_null(publication_checked[[rlang::hash(bad)]])
  expect_s3_class(estimate_table(rel$data, pub, by = "race"), "sdc_estimate")
})
