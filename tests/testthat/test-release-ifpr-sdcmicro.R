sdc_testdata <- function() {
  env <- new.env()
  utils::data("testdata", package = "sdcMicro", envir = env)
  env$testdata
}

test_that("ifpr() releases an sdcMicroObj: keys written back, pram slot, certificate, undo", {
  skip_if_not_installed("sdcMicro")
  suppressPackageStartupMessages(library(sdcMicro))
  td <- sdc_testdata()
  keys <- c("urbrur", "roof", "walls", "water", "electcon", "relat", "sex")
  td$roof <- factor(td$roof)
  obj <- createSdcObj(td, keyVars = keys, w = "sampling_weight")
  set.seed(4)
  out <- ifpr(obj, xi = 0.3, partition = list(urbrur = "keep"), on_infeasible = "merge")
  expect_s4_class(out, "sdcMicroObj")
  before <- obj@manipKeyVars
  after <- out@manipKeyVars
  expect_identical(names(after), names(before))
  expect_identical(levels(after$roof), levels(before$roof))
  expect_identical(after$urbrur, before$urbrur)
  expect_true(any(after$relat != before$relat | after$water != before$water))
  cert <- sdcMicro::get.sdcMicroObj(out, "risk")$ifpr
  expect_lte(cert$risk, 0.3)
  # the same release as ifpr() on the key variables themselves
  set.seed(4)
  rel <- ifpr(as.data.frame(before), keys, 0.3, partition = list(urbrur = "keep"), on_infeasible = "merge")
  expect_identical(as.data.frame(after)[keys], rel$data[keys])
  expect_identical(cert, rel$certificate)
  # sdcMicro's own printing and reporting of PRAM work
  expect_message(sdcMicro::print(out, "pram"), "Transition")
  pram <- sdcMicro::get.sdcMicroObj(out, "pram")
  expect_true(all(keys %in% pram$summary$variable))
  expect_equal(unname(rowSums(pram$params$relat$Rs)), rep(1, nrow(pram$params$relat$Rs)))
  tr <- pram$transitions$sex
  expect_identical(sum(tr$Frequency), nrow(td))
  rep_file <- withr::local_tempfile(fileext = ".html")
  expect_no_error(suppressMessages(sdcMicro::report(out, outdir = dirname(rep_file), filename = sub("\\.html$", "", basename(rep_file)))))
  # undolast() gives the object back
  back <- sdcMicro::undolast(out)
  expect_identical(back@manipKeyVars, obj@manipKeyVars)
})

test_that("the expected transition matrix of a variable is exact", {
  skip_if_not_installed("sdcMicro")
  df <- data.frame(a = c("x", "y", "z", "x", "x"), b = c(1, 1, 1, 2, 2))
  rel <- ifpr(df, c("a", "b"), 0.6, goal = "sample_uniques")
  m <- sdcRisk:::expected_transitions(rel, "a", c("x", "y", "z"))
  # brute force: per record, the probability of each new value of a
  cells <- rel$cells$cells
  exp_n <- matrix(0, 3, 3, dimnames = list(c("x", "y", "z"), c("x", "y", "z")))
  block <- sdcRisk:::plan_block_of(rel$plan)
  for (c in seq_len(nrow(cells))) {
    to <- rep(0, nrow(cells))
    if (is.na(block[c])) to[c] <- 1 else to[as.integer(colnames(pram_matrix(rel$plan, block[c])))] <- pram_matrix(rel$plan, block[c])[, as.character(c)]
    for (d in seq_len(nrow(cells))) exp_n[as.character(cells$a[c]), as.character(cells$a[d])] <- exp_n[as.character(cells$a[c]), as.character(cells$a[d])] + cells$count[c] * to[d]
  }
  expect_equal(m, exp_n / rowSums(exp_n))
})

test_that("bad keys for an sdcMicroObj get classed errors", {
  skip_if_not_installed("sdcMicro")
  suppressPackageStartupMessages(library(sdcMicro))
  td <- sdc_testdata()
  obj <- createSdcObj(td, keyVars = c("urbrur", "roof", "sex"), w = "sampling_weight")
  expect_error(ifpr(obj, keys = "expend", xi = 0.3), class = "sdcRisk_error_unknown_key")
  expect_error(ifpr(obj, xi = 0.3, also = "walls"), class = "sdcRisk_error_also")
})

test_that("ifpr() of an sdcMicroObj for a sample reads the object's weights", {
  skip_if_not_installed("sdcMicro")
  td <- sdc_testdata()
  keys <- c("urbrur", "roof", "walls", "water", "electcon", "relat", "sex")
  td$roof <- factor(td$roof)
  obj <- sdcMicro::createSdcObj(td, keyVars = keys, w = "sampling_weight")
  model <- population_model("negbin", weights = "sampling_weight")
  set.seed(4)
  out <- ifpr(obj, xi = 0.3, partition = list(urbrur = "keep"), on_infeasible = "merge",
              population = model, target_in_file = "unknown")
  cert <- sdcMicro::get.sdcMicroObj(out, "risk")$ifpr
  expect_lte(cert$risk, 0.3)
  expect_false(cert$sample$exact)
  set.seed(4)
  rel <- ifpr(as.data.frame(obj@manipKeyVars), keys, 0.3, partition = list(urbrur = "keep"), on_infeasible = "merge",
              population = population_model("negbin", weights = td$sampling_weight), target_in_file = "unknown")
  expect_identical(cert$risk, rel$certificate$risk)
})
