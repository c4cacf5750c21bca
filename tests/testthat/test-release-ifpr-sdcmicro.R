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

# Households (issue 37, item 5): sdcMicro's testdata holds 4,580 persons in
# 1,000 households (ori_hid); water, walls, roof, electcon and urbrur are
# household-level, relat = 1 is the head of every household.
hh_testdata <- function() {
  td <- sdcmicro_testdata()
  for (v in c("urbrur", "roof", "walls", "water", "electcon", "relat", "sex", "hhcivil")) td[[v]] <- factor(td[[v]])
  td
}

# Brute force: household-level variables have one value in every household,
# and every household has exactly one head.
hh_consistent <- function(data, hh, level) {
  one <- vapply(level, function(v) all(tapply(as.character(data[[v]]), hh, function(x) length(unique(x))) == 1),
                logical(1))
  c(one, heads = all(tapply(as.character(data$relat) == "1", hh, sum) == 1))
}

test_that("ifpr() refuses a person-level PRAM of household variables of an sdcMicroObj with hhId (issue 37)", {
  td <- hh_testdata()
  keys <- c("urbrur", "roof", "walls", "water", "electcon", "relat", "sex")
  obj <- sdcMicro::createSdcObj(td, keyVars = keys, w = "sampling_weight", hhId = "ori_hid")
  set.seed(4)
  cnd <- expect_error(ifpr(obj, xi = 0.3, partition = list(urbrur = "keep"), on_infeasible = "merge"),
                      class = "sdcRisk_error_households")
  msg <- cli::ansi_strip(conditionMessage(cnd))
  # urbrur is household-level but kept: not named; relat = 1 is the head
  for (v in c("roof", "walls", "water", "electcon")) expect_match(msg, v, fixed = TRUE)
  expect_no_match(msg, "urbrur", fixed = TRUE)
  expect_match(msg, "relat = 1", fixed = TRUE)
  expect_snapshot(error = TRUE, {
    set.seed(4)
    ifpr(obj, xi = 0.3, partition = list(urbrur = "keep"), on_infeasible = "merge")
  })
  # the same keys without hhId: released as before
  obj0 <- sdcMicro::createSdcObj(td, keyVars = keys, w = "sampling_weight")
  set.seed(4)
  expect_s4_class(ifpr(obj0, xi = 0.3, partition = list(urbrur = "keep"), on_infeasible = "merge"), "sdcMicroObj")
  # a household-level PRAM variable given as `also` is refused too
  obj2 <- sdcMicro::createSdcObj(td, keyVars = c("sex", "hhcivil"), pramVars = "walls", hhId = "ori_hid")
  set.seed(1)
  cnd <- expect_error(ifpr(obj2, xi = 0.3, also = "walls", on_infeasible = "merge"),
                      class = "sdcRisk_error_households")
  expect_match(cli::ansi_strip(conditionMessage(cnd)), "walls", fixed = TRUE)
})

test_that("household variables and roles are found as a brute force finds them", {
  td <- hh_testdata()
  obj <- sdcMicro::createSdcObj(td, keyVars = c("urbrur", "water", "relat", "sex", "hhcivil"), hhId = "ori_hid")
  vars <- c("urbrur", "water", "relat", "sex", "hhcivil")
  hh <- sdcRisk:::sdcmicro_households(obj, td, vars, "error")
  ok <- hh_consistent(td, td$ori_hid, vars)
  expect_identical(hh$level, vars[ok[vars]])
  expect_identical(hh$level, c("urbrur", "water"))
  expect_identical(hh$roles, list(relat = "1"))
  expect_identical(hh$n, length(unique(td$ori_hid)))
  # households of one person say nothing: no variable is household-level
  single <- sdcMicro::createSdcObj(td, keyVars = vars, hhId = "ori_hid")
  single@origData$ori_hid <- seq_len(nrow(td))
  expect_length(sdcRisk:::sdcmicro_households(single, td, vars, "error")$level, 0)
})

test_that("a release returned for an sdcMicroObj with hhId keeps every household consistent", {
  td <- hh_testdata()
  keys <- c("urbrur", "relat", "sex", "hhcivil")
  obj <- sdcMicro::createSdcObj(td, keyVars = keys, hhId = "ori_hid")
  for (seed in 1:3) {
    set.seed(seed)
    # the head stays a group of its own: other relations may still change
    out <- ifpr(obj, xi = 0.3, on_infeasible = "merge", partition = list(
      urbrur = "keep", relat = list(head = "1", other = as.character(2:9))
    ))
    after <- as.data.frame(out@manipKeyVars)
    expect_true(all(hh_consistent(after, td$ori_hid, "urbrur")), label = paste("seed", seed))
    expect_true(any(after$sex != td$sex | after$relat != td$relat), label = paste("seed", seed))
  }
  cert <- out@risk$ifpr
  expect_identical(cert$households$policy, "error")
  expect_length(cert$households$perturbed, 0)
  txt <- gsub("\\s+", " ", paste(format(cert), collapse = " "))
  expect_match(txt, "Households (ori_hid, 1,000): no household-level variable or head changes", fixed = TRUE)
  expect_match(txt, "persons are the targets")
})

test_that("households = \"ignore\" perturbs person by person, as without hhId, and the certificate says so", {
  td <- hh_testdata()
  keys <- c("urbrur", "roof", "walls", "water", "electcon", "relat", "sex")
  obj <- sdcMicro::createSdcObj(td, keyVars = keys, w = "sampling_weight", hhId = "ori_hid")
  obj0 <- sdcMicro::createSdcObj(td, keyVars = keys, w = "sampling_weight")
  expect_error(ifpr(obj, xi = 0.3, households = "none"), class = "sdcRisk_error_argument")
  set.seed(4)
  out <- ifpr(obj, xi = 0.3, partition = list(urbrur = "keep"), on_infeasible = "merge", households = "ignore")
  set.seed(4)
  out0 <- ifpr(obj0, xi = 0.3, partition = list(urbrur = "keep"), on_infeasible = "merge")
  expect_identical(out@manipKeyVars, out0@manipKeyVars)
  # the consequence: households that disagree, or lost or doubled their head
  ok <- hh_consistent(as.data.frame(out@manipKeyVars), td$ori_hid, c("roof", "walls", "water", "electcon"))
  expect_false(all(ok))
  cert <- out@risk$ifpr
  expect_identical(cert$households$perturbed, c("roof", "walls", "water", "electcon"))
  expect_identical(cert$households$roles, list(relat = "1"))
  expect_identical(cert$risk, out0@risk$ifpr$risk)
  txt <- gsub("\\s+", " ", paste(format(cert), collapse = " "))
  expect_match(txt, "ignored (households = \"ignore\"): household-level roof, walls, water, electcon", fixed = TRUE)
  expect_match(txt, "relat = 1 (one per household) may be lost or doubled", fixed = TRUE)
  expect_match(txt, "an intruder who knows a household's composition is not covered", fixed = TRUE)
})
