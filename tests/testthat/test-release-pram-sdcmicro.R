sdc_keys <- c("sex", "race", "marital")

sdc_pram_obj <- function(n = 1500, seed = 1, ...) {
  d <- pums_md[seq_len(n), c(sdc_keys, "puma")]
  obj <- sdcMicro::createSdcObj(d, keyVars = sdc_keys)
  set.seed(seed)
  suppressWarnings(sdcMicro::pram(obj, ...))
}

test_that("the plan of an sdcMicroObj holds sdcMicro's matrices, transposed, and its original counts", {
  skip_if_not_installed("sdcMicro")
  obj <- sdc_pram_obj(variables = c("race", "marital"))
  rel <- sdcRisk:::sdcmicro_release(obj)
  expect_s3_class(rel$plan, "pram_plan_vars")
  expect_identical(rel$vars, c("race", "marital"))
  for (v in rel$vars) {
    rs <- obj@pram$params[[v]]$Rs
    expect_equal(t(rel$plan$matrices[[1]][[v]]), rs, tolerance = 1e-12, ignore_attr = TRUE)
    expect_identical(rel$plan$levels[[v]], rownames(rs))
  }
  # original counts: the cells of the data before pram()
  ref <- cell_frequencies(obj@origData, sdc_keys)
  expect_identical(rel$cells$cells$count, ref$cells$count)
  # released categories: the object's perturbed keys
  after <- obj@manipKeyVars
  expect_identical(rel$plan$levels$race[rel$new_codes[, "race"]], as.character(after$race))
  moved <- sum(as.character(after$race) != as.character(obj@origData$race) |
    as.character(after$marital) != as.character(obj@origData$marital))
  expect_identical(sum(is.na(rel$new_cell) | rel$new_cell != rel$cells$cell_id), moved)
})

test_that("a release drawn within strata by sdcMicro 5.8 cannot be certified: classed error", {
  skip_if_not_installed("sdcMicro")
  obj <- sdc_pram_obj(variables = c("race", "marital"), strata_variables = "sex")
  expect_error(sdcRisk:::sdcmicro_release(obj), class = "sdcRisk_error_sdcmicro_strata")
  expect_snapshot(error = TRUE, pram_certify(obj))
  # a pd given as a matrix is the same in every stratum: certifiable
  lev <- levels(droplevels(pums_md$marital[1:1500]))
  pd <- matrix(0.05, length(lev), length(lev), dimnames = list(lev, lev))
  diag(pd) <- 1 - 0.05 * (length(lev) - 1)
  obj2 <- sdc_pram_obj(variables = "marital", strata_variables = "sex", pd = pd)
  rel <- sdcRisk:::sdcmicro_release(obj2)
  expect_equal(t(rel$plan$matrices[[1]]$marital), pd, ignore_attr = TRUE)
})

test_that("an sdcMicroObj without pram() on keys is refused", {
  skip_if_not_installed("sdcMicro")
  obj <- sdcMicro::createSdcObj(pums_md[1:300, sdc_keys], keyVars = sdc_keys)
  expect_error(sdcRisk:::sdcmicro_release(obj), class = "sdcRisk_error_sdcmicro_no_pram")
  expect_error(pram_certify(list()), class = "sdcRisk_error_argument")
})

test_that("sdcMicro round trip: the certificate in obj@risk$pram is the exact risk of the plan sdcMicro used", {
  skip_if_not_installed("sdcMicro")
  obj <- sdc_pram_obj(n = 1000, variables = c("race", "marital"))
  out <- pram_certify(obj)
  expect_true(inherits(out, "sdcMicroObj"))
  cert <- out@risk$pram
  # the same plan built by hand from sdcMicro's printed matrices
  cf <- cell_frequencies(obj@origData, sdc_keys)
  mats <- lapply(c(race = "race", marital = "marital"), function(v) obj@pram$params[[v]]$Rs)
  plan <- pram_plan_vars(cf, mats, orientation = "rows")
  ref <- max_match_risk(plan)
  expect_equal(cert$risk, ref$risk)
  expect_identical(cert$cell, ref$cell)
  expect_equal(max_match_risk(obj)$risk, ref$risk)
  expect_equal(match_risk(obj, cells = 1:5)$risk, match_risk(plan, cells = 1:5)$risk)
  # sdcMicro's own slots are untouched
  expect_identical(out@manipKeyVars, obj@manipKeyVars)
  expect_identical(out@risk$global, obj@risk$global)
  # evaluation functions take the object
  expect_s3_class(release_risk(obj), "sdc_release_risk")
  expect_s3_class(release_utility(obj, c("race", "marital")), "sdc_utility")
  set.seed(1)
  sim <- simulate_release(obj, reps = 50)
  expect_equal(sim$cells$exact_share * sim$n, sdcRisk:::plan_moments(plan)$mean)
})

test_that("the certificate stored by pram_certify() prints as a certificate, not a raw list", {
  skip_if_not_installed("sdcMicro")
  set.seed(3)
  df <- data.frame(a = factor(sample(c("x", "y", "z"), 300, TRUE)),
                   b = factor(sample(c("u", "v"), 300, TRUE)), c = sample(1:20, 300, TRUE))
  obj <- suppressWarnings(sdcMicro::createSdcObj(df, keyVars = c("a", "b", "c")))
  obj <- suppressWarnings(sdcMicro::pram(obj, variables = "a"))
  obj <- pram_certify(obj)
  cert <- obj@risk$pram
  expect_s3_class(cert, "sdc_pram_certificate")
  out <- capture.output(print(cert))
  expect_match(out[1], "<sdc_pram_certificate> of a per-variable PRAM of a")
  expect_match(out[2], "Certificate \\(exact maximum risk")
  expect_equal(cert$risk, max_match_risk(obj)$risk)
})

test_that("pram_certify() for a sample: weights of the object's data, and the certificate says it is an estimate", {
  skip_if_not_installed("sdcMicro")
  d <- pums_md[seq_len(1500), c(sdc_keys, "puma")]
  d$w <- stats::runif(1500, 20, 60)
  obj <- sdcMicro::createSdcObj(d, keyVars = sdc_keys, weightVar = "w")
  set.seed(2)
  obj <- suppressWarnings(sdcMicro::pram(obj, variables = c("race", "marital")))
  obj <- pram_certify(obj, population = population_model("negbin", weights = "w"), target_in_file = "unknown")
  cert <- obj@risk$pram
  want <- max_match_risk(obj, population = population_model("negbin", weights = d$w), target_in_file = "unknown")
  expect_identical(cert$risk, want$risk)
  expect_identical(cert$target_in_file, "unknown")
  expect_false(cert$sample$exact)
  expect_lt(cert$risk, pram_certify(obj)@risk$pram$risk)
  # the certificate and the lines under it (one line before issue 37, item 9)
  expect_match(certificate_text(format(cert)), "estimated maximum risk.*may not be in the file.*negative binomial")
})

test_that("sdcMicro::pram() on a data frame: a classed error whose code certifies it as pram_certify() would (issue 37)", {
  skip_if_not_installed("sdcMicro")
  d <- pums_md[1:1500, sdc_keys]
  set.seed(11)
  pr <- suppressWarnings(sdcMicro::pram(d, variables = c("race", "marital")))
  expect_s3_class(pr, "pram")
  cnd <- expect_error(pram_certify(pr), class = "sdcRisk_error_sdcmicro_pram_data_frame")
  expect_error(max_match_risk(pr), class = "sdcRisk_error")
  # the message's code, run as written, gives the risk pram_certify() gives
  # for the same draw made on an sdcMicroObj
  msg <- cli::ansi_strip(conditionMessage(cnd))
  code <- regmatches(msg, gregexpr("`[^`]+`", msg))[[1]]
  code <- gsub("`", "", code[grepl("<-|^`max_match_risk\\(pram", code)])
  expect_length(code, 4)
  env <- new.env()
  assign("obj", pr, envir = env)
  res <- NULL
  for (line in code) res <- eval(parse(text = line), envir = env)
  obj <- sdcMicro::createSdcObj(d, keyVars = sdc_keys)
  set.seed(11)
  obj <- pram_certify(suppressWarnings(sdcMicro::pram(obj, variables = c("race", "marital"))))
  expect_identical(sort(get("keys", env)), sort(sdc_keys))
  expect_equal(res$risk, obj@risk$pram$risk)
  expect_identical(res$keys, obj@risk$pram$cell_keys)
  expect_snapshot(pram_certify(pr), error = TRUE)
})

test_that("pram_certify() refuses sdcMicro's person-level PRAM of a household variable unless told (issue 37)", {
  td <- sdcmicro_testdata()
  for (v in c("urbrur", "water", "sex", "hhcivil")) td[[v]] <- factor(td[[v]])
  keys <- c("urbrur", "water", "sex", "hhcivil")
  obj <- sdcMicro::createSdcObj(td, keyVars = keys, hhId = "ori_hid")
  set.seed(2)
  pr <- suppressWarnings(sdcMicro::pram(obj, variables = c("water", "sex")))
  cnd <- expect_error(pram_certify(pr), class = "sdcRisk_error_households")
  expect_match(cli::ansi_strip(conditionMessage(cnd)), "\"water\"", fixed = TRUE)
  expect_snapshot(error = TRUE, pram_certify(pr))
  # the opt-out certifies persons, as without hhId, and says so
  cert <- pram_certify(pr, households = "ignore")@risk$pram
  obj0 <- sdcMicro::createSdcObj(td, keyVars = keys)
  set.seed(2)
  pr0 <- suppressWarnings(sdcMicro::pram(obj0, variables = c("water", "sex")))
  expect_identical(pr@manipKeyVars, pr0@manipKeyVars)
  expect_identical(cert$risk, pram_certify(pr0)@risk$pram$risk)
  expect_identical(cert$households$perturbed, "water")
  expect_match(gsub("\\s+", " ", paste(format(cert), collapse = " ")), "household-level water changed person by person", fixed = TRUE)
  # person-level variables only: certified, with what the certificate covers
  set.seed(2)
  pr2 <- suppressWarnings(sdcMicro::pram(obj, variables = c("sex", "hhcivil")))
  cert2 <- pram_certify(pr2)@risk$pram
  expect_length(cert2$households$perturbed, 0)
  expect_match(paste(format(cert2), collapse = " "), "persons are the targets", fixed = TRUE)
})

test_that("with sdcMicro's seed, pram_release() draws the first variable's matrix as sdcMicro::pram() does, not the next (issue 37, pram-risk vignette)", {
  skip_if_not_installed("sdcMicro")
  vars <- c("race", "marital")
  obj <- sdc_pram_obj(seed = 4, variables = vars)
  set.seed(4)
  rel <- pram_release(pums_md[seq_len(1500), c(sdc_keys, "puma")], sdc_keys, vars = vars)
  diff <- vapply(vars, function(v) max(abs(t(rel$plan$matrices[[1]][[v]]) - unclass(obj@pram$params[[v]]$Rs))), 1)
  # sdcMicro draws the records' new race before the matrix of marital
  expect_lt(diff[["race"]], 1e-12)
  expect_gt(diff[["marital"]], 1e-3)
})
