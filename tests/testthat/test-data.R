# pums_md stands in for the 2013 Maryland PUMS of Nayak, Zhang and You
# (2016), Section 7; the published numbers it must reproduce are tests.

test_that("pums_md has the size and key variables of Nayak et al. Section 7", {
  expect_s3_class(pums_md, "data.frame")
  expect_identical(nrow(pums_md), 59033L)
  expect_named(pums_md, c("sex", "age", "race", "marital", "puma", "worker",
                          "education", "weight"))
  # Section 7: sex (2), age (92), race (9), marital status (5), PUMA (44)
  expect_identical(nlevels(pums_md$sex), 2L)
  expect_type(pums_md$age, "integer")
  expect_identical(sort(unique(pums_md$age)), 0:91)
  expect_identical(nlevels(pums_md$race), 9L)
  expect_identical(nlevels(pums_md$marital), 5L)
  expect_identical(nlevels(pums_md$puma), 44L)
  expect_true(all(grepl("^24-[0-9]{5}$", levels(pums_md$puma))))
  expect_false(anyNA(pums_md))
})

test_that("pums_md has the race counts of Nayak et al. Table 5", {
  table5 <- c(
    "White" = 37201, "Black" = 15239, "American Indian alone" = 97,
    "Alaska Native alone" = 1, "American Indian & Alaska Native" = 42,
    "Asian" = 3461, "Native Hawaiian & other Pacific Islander" = 20,
    "Some other race alone" = 1349, "Two or more races" = 1623
  )
  expect_s3_class(pums_md$race, "factor")
  expect_identical(levels(pums_md$race), names(table5))
  expect_identical(c(table(pums_md$race)), vapply(table5, as.integer, 1L))
})

test_that("pums_md has the marital status counts of Nayak et al. Table 4", {
  table4 <- c("Married" = 24688, "Widowed" = 3156, "Divorced" = 4742,
              "Separated" = 1040, "Never married" = 25407)
  expect_s3_class(pums_md$marital, "factor")
  expect_identical(levels(pums_md$marital), names(table4))
  expect_identical(c(table(pums_md$marital)), vapply(table4, as.integer, 1L))
})

test_that("pums_md key cells are as sparse as in Nayak et al. Section 7", {
  # 25,406 nonempty cells, 13,662 singletons, 4,777 doubletons
  keys <- c("sex", "age", "race", "marital", "puma")
  counts <- table(do.call(paste, pums_md[keys]))
  expect_lt(abs(length(counts) / 25406 - 1), 0.03)
  expect_lt(abs(sum(counts == 1) / 13662 - 1), 0.03)
  expect_lt(abs(sum(counts == 2) / 4777 - 1), 0.03)

  cf <- cell_frequencies(pums_md, keys)
  expect_identical(nrow(cf$cells), length(counts))
  expect_identical(cf$n_singletons, sum(counts == 1))
  expect_identical(cf$n_doubletons, sum(counts == 2))
})

test_that("pums_md PUMAs are unequal and differ in race", {
  size <- c(table(pums_md$puma))
  expect_true(all(size >= 900 & size <= 2200))
  expect_gt(max(size) / min(size), 1.5)
  black <- tapply(pums_md$race == "Black", pums_md$puma, mean)
  expect_gt(sum(black > 0.5), 3)   # some PUMAs mostly Black
  expect_gt(sum(black < 0.1), 10)  # many mostly White
})

test_that("pums_md respects age: marital status, worker and education", {
  age <- pums_md$age
  expect_true(all(pums_md$marital[age < 15] == "Never married"))
  expect_true(all(pums_md$worker[age < 16] == "Not applicable"))
  expect_gt(mean(pums_md$worker[age >= 25 & age < 55] != "Not applicable"),
            0.7)
  # married persons are mostly middle-aged, widowed ones old
  expect_gt(mean(pums_md$marital[age >= 35 & age < 65] == "Married"), 0.4)
  expect_gt(median(age[pums_md$marital == "Widowed"]), 65)

  edu <- pums_md$education
  expect_s3_class(edu, "ordered")
  expect_identical(levels(edu), c(
    "Grade 6 or less", "Grade 7-12, no diploma", "High school diploma",
    "Some college, no degree", "Associate degree", "Bachelor's degree",
    "Master's or professional degree", "Doctorate degree"
  ))
  youngest <- c(0, 12, 17, 18, 19, 21, 23, 26)
  expect_true(all(age >= youngest[as.integer(edu)]))
  expect_true(all(edu[age < 12] == "Grade 6 or less"))
})

test_that("pums_md worker and weight columns have the documented form", {
  expect_s3_class(pums_md$worker, "factor")
  expect_identical(nlevels(pums_md$worker), 9L)
  expect_identical(levels(pums_md$worker)[1], "Not applicable")
  expect_type(pums_md$weight, "integer")
  expect_true(all(pums_md$weight > 0))
  expect_lt(abs(sum(pums_md$weight) / 5.93e6 - 1), 0.01)
})
