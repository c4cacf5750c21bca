library(testthat)
library(sdcRisk)

test_check("sdcRisk")
