# What every backend needs (db-utils.R): the packages, checked by rlang.

test_that("a database table without DBI, dplyr or dbplyr is a classed error naming the package", {
  e <- tryCatch(check_db_packages(c("DBI", "sdcRiskNoSuchPackage")), error = identity)
  expect_s3_class(e, "sdcRisk_error_db_packages")
  expect_s3_class(e, "sdcRisk_error")
  expect_s3_class(e, "rlib_error_package_not_found")
  expect_identical(e$pkg, "sdcRiskNoSuchPackage")
  expect_match(conditionMessage(e), "sdcRiskNoSuchPackage.*required to work on a database table")
  expect_null(check_db_packages("DBI"))
})
