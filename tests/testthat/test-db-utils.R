# What every backend needs (db-utils.R): the packages, checked by rlang.

test_that("a database table without DBI, dplyr or dbplyr is a classed error naming the package", {
  e <- tryCatch(check_db_packages(c("DBI", "sdcRiskNoSuchPackage")), error = identity)
  expect_s3_class(e, "sdcRisk_error_db_packages")
  expect_s3_class(e, "sdcRisk_error")
  # rlang's error (which offers an install when R is interactive) is the parent
  expect_s3_class(e$parent, "rlib_error_package_not_found")
  expect_identical(e$parent$pkg, "sdcRiskNoSuchPackage")
  expect_match(conditionMessage(e$parent), "sdcRiskNoSuchPackage.*required to work on a database table")
  expect_match(conditionMessage(e), "needs the package sdcRiskNoSuchPackage", fixed = TRUE)
  expect_null(check_db_packages("DBI"))
})
