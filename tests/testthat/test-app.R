# The app: its checks without a browser, then as a person uses it, in
# Debian's Chromium (tests/testthat/helper-browser.R).

test_that("run_app() says how to install missing packages", {
  expect_error(sdcRisk:::app_check_packages(c("shiny", "sdcRiskNoSuchPackage")),
               class = "sdcRisk_error_missing_package")
  e <- tryCatch(sdcRisk:::app_check_packages("sdcRiskNoSuchPackage"), error = function(e) e)
  expect_match(conditionMessage(e), "install.packages(c(\"sdcRiskNoSuchPackage\"))", fixed = TRUE)
  expect_match(conditionMessage(e), "r-cran-sdcrisknosuchpackage", fixed = TRUE)
  skip_if_not_installed("shiny")
  skip_if_not_installed("bslib")
  expect_error(sdc_app(1:3), class = "sdcRisk_error_not_data_frame")
  expect_error(run_app(extra = 1))
  expect_s3_class(sdc_app(pums_md[1:10, ]), "shiny.appobj")
})

test_that("uploads that are not tables get a message naming the problem", {
  dir <- withr::local_tempdir()
  empty <- file.path(dir, "empty.csv")
  file.create(empty)
  expect_match(sdcRisk:::app_read_code("empty.csv", empty)$error, "is empty")
  bin <- file.path(dir, "b.csv")
  writeBin(as.raw(c(137, 80, 78, 71, 0, 0, 1)), bin)
  expect_match(sdcRisk:::app_read_code("b.csv", bin)$error, "binary")
  expect_match(sdcRisk:::app_read_code("photo.png", bin)$error, "not a table")
  rds <- file.path(dir, "l.rds")
  saveRDS(list(1, 2), rds)
  expect_match(sdcRisk:::app_read_code("l.rds", rds, rds = TRUE)$error, "holds list, not a data frame")
  writeLines(c("just some words", "and more words", "and a last line"), empty)
  code <- sdcRisk:::app_read_code("w.csv", empty)
  expect_null(code$error)
  expect_match(sdcRisk:::app_deparse(code$script), "utils::read.csv(\"w.csv\"", fixed = TRUE)
  env <- new.env()
  eval(code$eval, env)
  expect_match(sdcRisk:::app_check_table(env$data, "w.csv"), "single column")
})

test_that("a key with 10^5 distinct values and a hierarchy that does not nest are named", {
  d <- data.frame(id = seq_len(1e5), sex = rep(c("F", "M"), 5e4))
  expect_match(sdcRisk:::app_key_warning(d, c("sex", "id")), "Key id has 100,000 distinct values")
  expect_null(sdcRisk:::app_key_warning(pums_md, c("sex", "age", "puma")))
  firms <- data.frame(nace = c("A1", "A2", "B1", "A1"), section = c("A", "A", "B", "B"))
  expect_match(sdcRisk:::app_check_hierarchy(firms, "nace", "section"), "not be additive: nace = A1 falls under 2 groups")
  expect_null(sdcRisk:::app_check_hierarchy(firms[1:3, ], "nace", "section"))
})

test_that("the script's code gives back exactly the values the app used", {
  for (x in list(0.3, 1 / 3, c(0, 18, Inf), list(sex = "keep", age = c(0, 18, 65, Inf)), 7L, "a\"b")) {
    expect_identical(eval(parse(text = sdcRisk:::app_dq(x))), x)
  }
})

# ---- in the browser -----------------------------------------------------------

local_app_browser <- function(env = parent.frame(), data_rds = NULL, allow_rds = FALSE, sentinel = NULL) {
  skip_if_not_installed("shiny")
  skip_if_not_installed("bslib")
  skip_if_not_installed("callr")
  skip_if_not_installed("processx")
  skip_if_not_installed("jsonlite")
  skip_if_not_installed("httpuv")
  skip_if_no_browser()
  app <- app_start(data_rds, allow_rds = allow_rds, sentinel = sentinel)
  withr::defer(app$proc$kill_tree(), envir = env)
  b <- browser_start()
  withr::defer({
    left <- browser_close(b)
    testthat::expect_length(left, 0)
  }, envir = env)
  browser_go(b, app$url)
  list(app = app, b = b)
}

expect_alive <- function(b) {
  expect_true(browser_js(b, "Shiny.shinyapp.isConnected()"))
  expect_false(browser_js(b, "document.getElementById('shiny-disconnected-overlay') !== null"))
}

# Records the messages of every progress indicator shown from now on.
watch_progress <- function(b) {
  browser_js(b, "window.sdcProgress = [];
    if (!window.sdcProgressObserver) {
      window.sdcProgressObserver = new MutationObserver(function() {
        document.querySelectorAll('.shiny-progress-notification .progress-message').forEach(function(e) {
          if (e.innerText && window.sdcProgress.indexOf(e.innerText) < 0) window.sdcProgress.push(e.innerText);
        });
      });
      window.sdcProgressObserver.observe(document.body, {childList: true, subtree: true, characterData: true});
    }
    true")
}

alert_text <- function(b, page) {
  browser_wait(b, sprintf("document.getElementById('%s_alert') !== null", page), 60)
  browser_text(b, paste0("#", page, "_alert"))
}

test_that("in the browser: pums_md, five keys, a release at xi = 0.3, its CSV and a script that repeats it", {
  s <- local_app_browser()
  b <- s$b
  keys <- c("sex", "age", "race", "marital", "puma")
  browser_set(b, "data_source", "pums_md")
  browser_keys(b, keys)
  expect_match(browser_text(b, "#cells_words_text"), "25,469 nonempty cells: 13,641 singletons")
  shot(b, "1-data")

  browser_show_tab(b, "release")
  browser_set(b, "xi", 0.3)
  browser_set(b, "seed", 20)
  watch_progress(b)
  browser_click(b, "#release_go")
  browser_wait(b, "document.getElementById('cert_words_text') !== null", 180)
  browser_idle(b)
  # the page said it was working while ifpr() ran
  expect_true("Releasing" %in% unlist(browser_js(b, "window.sdcProgress")))
  cert <- as.numeric(browser_text(b, "#cert_value"))
  expect_lte(cert, 0.3)
  expect_match(browser_text(b, "#cert_words_text"), "right with probability above 0.3")
  shot(b, "2-release")
  browser_click(b, "a[data-value='Release risk']")
  browser_idle(b)
  shot(b, "2b-release-risk")

  browser_show_tab(b, "downloads")
  dl <- withr::local_tempdir()
  csv <- browser_download(b, "dl_released", file.path(dl, "app"))
  script <- browser_download(b, "dl_script", file.path(dl, "app"))
  shot(b, "5-downloads")
  released <- utils::read.csv(csv, stringsAsFactors = FALSE)
  expect_equal(nrow(released), 59033)
  expect_identical(names(released), names(pums_md))
  original <- as.data.frame(lapply(pums_md, function(v) if (is.factor(v)) as.character(v) else v), stringsAsFactors = FALSE)
  others <- setdiff(names(pums_md), keys)
  expect_identical(released[others], original[others])
  changed <- rowSums(released[keys] != original[keys]) > 0
  expect_gt(sum(changed), 1000)

  # the script repeats the release exactly, seed and all
  run <- file.path(dl, "script")
  dir.create(run)
  run_script(script, run, s$app)
  expect_identical(readLines(file.path(run, "released.csv")), readLines(csv))
  set.seed(20)
  rel <- ifpr(pums_md, keys, xi = 0.3)
  expect_equal(cert, signif(rel$certificate$risk, 6))

  report <- browser_download(b, "dl_report", file.path(dl, "app"))
  html <- paste(readLines(report, warn = FALSE), collapse = "\n")
  expect_match(html, sprintf("R = %s</strong> &lt;= xi = 0.3", format(signif(rel$certificate$risk, 10))), fixed = TRUE)
  expect_match(html, "Seed: <strong>20</strong>", fixed = TRUE)
  expect_alive(b)
})

test_that("in the browser: the least-damage design with a distance on age; the page states its damage, the script repeats it (issue 35)", {
  s <- local_app_browser()
  b <- s$b
  keys <- c("sex", "age", "race")
  browser_set(b, "data_source", "pums_md")
  browser_keys(b, keys)
  browser_show_tab(b, "release")
  shown <- function(id) sprintf("(function(){var e = document.getElementById('%s'); return e !== null && e.closest('[data-display-if]').style.display !== 'none';})()", id)
  # the damage is offered with the least-damage design only, the calibration without it
  expect_false(browser_js(b, shown("damage")))
  expect_true(browser_js(b, shown("calibrate")))
  browser_set(b, "method", "optimal")
  browser_wait(b, shown("damage"))
  expect_false(browser_js(b, shown("calibrate")))
  browser_set(b, "damage", "distance")
  # the ordered keys: age only, offered checked
  browser_wait(b, "document.querySelector('#ordered input[value=\"age\"]') !== null")
  expect_true(browser_js(b, "document.querySelector('#ordered input[value=\"age\"]').checked"))
  expect_false(browser_js(b, "document.querySelector('#ordered input[value=\"race\"]') !== null"))
  # a weight per key, 1 by default
  expect_true(browser_js(b, paste0(shown("weight_2"), " && document.getElementById('weight_2').value === '1'")))
  browser_set(b, "xi", 0.2)
  browser_set(b, "seed", 35)
  browser_click(b, "#release_go")
  browser_wait(b, "document.getElementById('cert_design_text') !== null", 180)
  browser_idle(b)
  expect_match(browser_text(b, "#cert_design_text"), "The design minimises the distance on the ordered keys")
  shot(b, "2c-release-optimal")
  set.seed(35)
  rel <- ifpr(pums_md, keys, xi = 0.2, method = "optimal", damage = "distance", ordered = "age")
  expect_equal(as.numeric(browser_text(b, "#cert_value")), signif(rel$certificate$risk, 6))
  expect_match(browser_text(b, "#cert_design_text"),
               format(round(rel$certificate$design$lower[["records"]], 1), big.mark = ",", nsmall = 1), fixed = TRUE)

  browser_show_tab(b, "downloads")
  dl <- withr::local_tempdir()
  csv <- browser_download(b, "dl_released", file.path(dl, "app"))
  script <- browser_download(b, "dl_script", file.path(dl, "app"))
  code <- readLines(script)
  expect_true(any(grepl("method = \"optimal\"", code, fixed = TRUE)))
  expect_true(any(grepl("damage = \"distance\"", code, fixed = TRUE)))
  expect_true(any(grepl("ordered = \"age\"", code, fixed = TRUE)))
  run <- file.path(dl, "script")
  dir.create(run)
  run_script(script, run, s$app)
  expect_identical(readLines(file.path(run, "released.csv")), readLines(csv))
  expect_alive(b)
})

test_that("in the browser: a table with a hierarchy and three rules, protected; its flagged CSV and a script that repeats it", {
  s <- local_app_browser()
  b <- s$b
  set.seed(3)
  firms <- data.frame(firm = 1:90, nace = sample(c("A1", "A2", "A3", "B1", "B2"), 90, TRUE),
                      area = sample(c("x", "y", "z"), 90, TRUE), sales = round(rlnorm(90, 5, 1.5)))
  firms$section <- paste("section", substr(firms$nace, 1, 1))
  dir <- withr::local_tempdir()
  f <- file.path(dir, "firms.csv")
  utils::write.csv(firms, f, row.names = FALSE)
  browser_set(b, "data_source", "upload")
  browser_upload(b, "#data_file", f)
  browser_wait(b, "document.getElementById('data_info').innerText.indexOf('firms.csv: 90 records') >= 0")

  browser_show_tab(b, "tables")
  browser_set(b, "tab_by", c("nace", "area"))
  browser_wait(b, "document.getElementById('tab_hier_1') !== null")
  browser_set(b, "tab_hier_1", "section")
  browser_set(b, "tab_value", "sales")
  browser_set(b, "tab_contributor", "firm")
  browser_js(b, "['frequency', 'nk', 'p'].forEach(function(r) { $('#tab_rules input[value=\"' + r + '\"]').prop('checked', true); }); $('#tab_rules input').first().trigger('change'); true")
  browser_set(b, "tab_p", 15)
  watch_progress(b)
  browser_click(b, "#tab_sens_go")
  browser_wait(b, "document.getElementById('tab_words_text') !== null", 120)
  browser_idle(b)
  shot(b, "4a-tables-sensitivity")
  browser_click(b, "#tab_protect_go")
  browser_wait(b, "document.getElementById('tab_words_text').innerText.indexOf('Protected') >= 0", 180)
  browser_idle(b)
  expect_true("Protecting the table" %in% unlist(browser_js(b, "window.sdcProgress")))
  shot(b, "4b-tables-pattern")
  browser_click(b, "a[data-value='Audit']")
  browser_wait(b, "document.getElementById('audit_words_text') !== null")
  expect_match(browser_text(b, "#audit_words_text"), "Audit passed")
  shot(b, "4c-tables-audit")

  browser_show_tab(b, "downloads")
  out <- browser_download(b, "dl_table", file.path(dir, "dl"))
  script <- browser_download(b, "dl_script", file.path(dir, "dl"))
  browser_set(b, "report_of", "tables")
  report <- browser_download(b, "dl_report", file.path(dir, "dl"))
  html <- paste(readLines(report, warn = FALSE), collapse = "\n")
  expect_match(html, "Re-run of <code>audit_table()</code> on the pattern: passed", fixed = TRUE)
  expect_match(html, "section:area", fixed = TRUE)
  flagged <- utils::read.csv(out, stringsAsFactors = FALSE)
  data <- utils::read.csv(f, check.names = FALSE, stringsAsFactors = TRUE, na.strings = c("", "NA"))
  sens <- cell_sensitivity(data, by = c("nace", "area"), value = "sales",
                           rules = list(rule_frequency(3), rule_nk(1, 80), rule_p(15)), contributor = "firm",
                           hierarchy = list(nace = unique(data.frame(nace = firms$nace, section = firms$section))))
  prot <- protect_table(sens)
  expect_identical(flagged$status, as.character(prot$status))
  expect_identical(flagged$level, prot$level)
  # margins at every level of the hierarchy: sections, and sections by area
  expect_true(all(c("section", "section:area", "nace:area") %in% flagged$level))
  expect_true(all(flagged$protected[flagged$status == "primary"]))
  expect_gt(sum(flagged$status == "primary"), 0)
  expect_gt(sum(flagged$status == "secondary"), 0)

  # the script, run where the upload is, writes the same flagged table
  run <- file.path(dir, "script")
  dir.create(run)
  file.copy(f, run)
  run_script(script, run, s$app)
  expect_identical(readLines(file.path(run, "protected-table.csv")), readLines(out))
  expect_alive(b)
})

test_that("in the browser: the data frame of the R session that started the app, released; the script repeats it", {
  my_data <- pums_md[1:3000, c("sex", "age", "race", "marital", "weight")]
  dir <- withr::local_tempdir()
  rds <- file.path(dir, "my_data.rds")
  saveRDS(my_data, rds)
  s <- local_app_browser(data_rds = rds)
  b <- s$b
  keys <- c("sex", "race", "marital")
  expect_true(browser_js(b, "document.querySelector('#data_source input[value=\"given\"]').checked"))
  browser_keys(b, keys, data = "the data frame my_data")
  cf <- cell_frequencies(my_data, keys)
  expect_match(browser_text(b, "#data_info"), "the data frame my_data: 3,000 records, 5 columns", fixed = TRUE)
  expect_match(browser_text(b, "#cells_words_text"), sprintf("%s nonempty cells: %s singletons", nrow(cf$cells), cf$n_singletons), fixed = TRUE)

  browser_show_tab(b, "release")
  browser_set(b, "xi", 0.4)
  browser_set(b, "seed", 7)
  browser_click(b, "#release_go")
  browser_wait(b, "document.getElementById('cert_words_text') !== null", 180)
  browser_idle(b)
  set.seed(7)
  rel <- ifpr(my_data, keys, xi = 0.4)
  expect_equal(as.numeric(browser_text(b, "#cert_value")), signif(rel$certificate$risk, 6))

  browser_show_tab(b, "downloads")
  csv <- browser_download(b, "dl_released", file.path(dir, "app"))
  script <- browser_download(b, "dl_script", file.path(dir, "app"))
  code <- readLines(script)
  expect_true(any(grepl("^data <- my_data", code)))
  released <- utils::read.csv(csv, stringsAsFactors = TRUE)
  expect_identical(as.character(released$race), as.character(rel$data$race))
  expect_identical(released$age, my_data$age)

  # run by the user in a session that has my_data, the script gives the same file
  run <- file.path(dir, "script")
  dir.create(run)
  callr::r(function(script, dir, path, rds) {
    if (nzchar(path)) pkgload::load_all(path, quiet = TRUE)
    setwd(dir)
    e <- new.env()
    e$my_data <- readRDS(rds)
    source(script, local = e)
    invisible()
  }, args = list(script = normalizePath(script), dir = normalizePath(run), path = s$app$path, rds = rds))
  expect_identical(readLines(file.path(run, "released.csv")), readLines(csv))
  expect_alive(b)
})

test_that("in the browser: bad input gets a message and the app goes on working", {
  s <- local_app_browser()
  b <- s$b
  dir <- withr::local_tempdir()
  browser_set(b, "data_source", "upload")

  empty <- file.path(dir, "empty.csv")
  file.create(empty)
  browser_upload(b, "#data_file", empty)
  expect_match(alert_text(b, "data"), "The file empty.csv is empty")
  expect_alive(b)

  png <- file.path(dir, "picture.png")
  writeBin(as.raw(c(137, 80, 78, 71, 13, 10, 26, 10, 0, 0)), png)
  browser_upload(b, "#data_file", png)
  browser_wait(b, "document.getElementById('data_alert').innerText.indexOf('picture.png') >= 0")
  expect_match(browser_text(b, "#data_alert"), "picture.png is not a table")
  shot(b, "6-bad-upload")
  expect_alive(b)

  many <- file.path(dir, "many.csv")
  utils::write.csv(data.frame(id = seq_len(1e5), sex = rep(c("F", "M"), 5e4)), many, row.names = FALSE)
  browser_upload(b, "#data_file", many)
  browser_wait(b, "document.getElementById('data_info').innerText.indexOf('many.csv: 100,000 records') >= 0", 120)
  browser_keys(b, c("sex", "id"), data = "many.csv")
  browser_wait(b, "document.getElementById('data_alert') !== null && document.getElementById('data_alert').innerText.indexOf('100,000 distinct') >= 0", 120)
  expect_match(browser_text(b, "#data_alert"), "Key id has 100,000 distinct values")
  expect_alive(b)

  # hierarchy that does not nest: the table would not add up
  firms <- data.frame(nace = c("A1", "A2", "B1", "A1", "B2"), section = c("A", "A", "B", "B", "B"),
                      sales = c(10, 20, 30, 40, 50))
  ff <- file.path(dir, "nace.csv")
  utils::write.csv(firms, ff, row.names = FALSE)
  browser_upload(b, "#data_file", ff)
  browser_wait(b, "document.getElementById('data_info').innerText.indexOf('nace.csv') >= 0")
  browser_show_tab(b, "tables")
  browser_set(b, "tab_by", "nace")
  browser_wait(b, "document.getElementById('tab_hier_1') !== null")
  browser_set(b, "tab_hier_1", "section")
  browser_set(b, "tab_value", "sales")
  browser_click(b, "#tab_sens_go")
  expect_match(alert_text(b, "tables"), "not be additive: nace = A1 falls under 2 groups of section")
  expect_alive(b)

  # xi outside (0, 1), then a good release: the app still works
  browser_show_tab(b, "data")
  browser_set(b, "data_source", "pums_md")
  browser_keys(b, c("sex", "race", "marital"))
  browser_show_tab(b, "release")
  browser_set(b, "xi", 1.5)
  browser_click(b, "#release_go")
  expect_match(alert_text(b, "release"), "strictly between 0 and 1 (a probability); 1.5 was given", fixed = TRUE)
  shot(b, "6-bad-xi")
  expect_alive(b)
  browser_set(b, "xi", 0.5)
  browser_click(b, "#release_go")
  browser_wait(b, "document.getElementById('cert_words_text') !== null", 120)
  expect_lte(as.numeric(browser_text(b, "#cert_value")), 0.5)
  expect_false(browser_js(b, "document.getElementById('release_alert') !== null"))
  expect_alive(b)
})

test_that("in the browser: an sdcMicroObj after sdcMicro::pram() is certified exactly", {
  skip_if_not_installed("sdcMicro")
  s <- local_app_browser(allow_rds = TRUE)
  b <- s$b
  keys <- c("sex", "race", "marital")
  obj <- sdcMicro::createSdcObj(pums_md[1:3000, c(keys, "age")], keyVars = keys)
  set.seed(4)
  obj <- suppressWarnings(sdcMicro::pram(obj, variables = c("race", "marital")))
  dir <- withr::local_tempdir()
  f <- file.path(dir, "obj.rds")
  saveRDS(obj, f)
  certified <- pram_certify(obj)
  partial <- max_match_risk(obj, known = c("sex", "marital"))

  browser_show_tab(b, "certify")
  browser_set(b, "cert_source", "sdcmicro")
  browser_upload(b, "#cert_obj", f)
  browser_wait(b, "document.querySelector('#cert_obj_progress .progress-bar') !== null && document.querySelector('#cert_obj_progress .progress-bar').innerText.indexOf('complete') >= 0", 60)
  browser_set(b, "cert_known_mode", "some")
  browser_set(b, "cert_known", c("sex", "marital"))
  browser_click(b, "#cert_go")
  browser_wait(b, "document.getElementById('pram_words_text') !== null", 180)
  browser_idle(b)
  expect_equal(as.numeric(browser_text(b, "#pram_value")), signif(certified@risk$pram$risk, 6))
  known_table <- browser_text(b, "#pram_known")
  expect_match(known_table, "sex, marital")
  expect_match(known_table, format(round(partial$risk, 5), nsmall = 5), fixed = TRUE)
  shot(b, "3-certify")
  expect_alive(b)
})

test_that("in the browser: per-variable matrices uploaded as CSV files are certified exactly", {
  s <- local_app_browser()
  b <- s$b
  keys <- c("sex", "race", "marital")
  make <- function(levels, keep) {
    k <- length(levels)
    m <- matrix((1 - keep) / (k - 1), k, k, dimnames = list(levels, levels))
    diag(m) <- keep
    m
  }
  mats <- list(race = make(levels(pums_md$race), 0.9), marital = make(levels(pums_md$marital), 0.8))
  dir <- withr::local_tempdir()
  files <- file.path(dir, paste0(names(mats), ".csv"))
  for (i in seq_along(mats)) utils::write.csv(mats[[i]], files[i])
  # the matrices as the CSV files give them back (15 significant digits)
  back <- lapply(files, function(f) as.matrix(utils::read.csv(f, row.names = 1, check.names = FALSE)))
  names(back) <- names(mats)
  expect_equal(back, mats, tolerance = 1e-14)
  plan <- pram_plan_vars(cell_frequencies(pums_md, keys), back, orientation = "rows")
  exact <- max_match_risk(plan)

  browser_set(b, "data_source", "pums_md")
  browser_keys(b, keys)
  browser_show_tab(b, "certify")
  browser_set(b, "cert_source", "matrices")
  browser_upload(b, "#cert_matrices", files)
  browser_wait(b, "document.querySelector('#cert_matrices_progress .progress-bar') !== null && document.querySelector('#cert_matrices_progress .progress-bar').innerText.indexOf('complete') >= 0", 60)
  browser_click(b, "#cert_go")
  browser_wait(b, "document.getElementById('pram_words_text') !== null", 180)
  expect_equal(as.numeric(browser_text(b, "#pram_value")), signif(exact$risk, 6))

  browser_show_tab(b, "downloads")
  script <- browser_download(b, "dl_script", file.path(dir, "dl"))
  code <- readLines(script)
  expect_true(any(grepl("race = as.matrix(utils::read.csv(\"race.csv\"", code, fixed = TRUE)))
  file.copy(files, file.path(dir, "dl"))
  env <- callr::r(function(script, dir, path) {
    if (nzchar(path)) pkgload::load_all(path, quiet = TRUE)
    setwd(dir)
    e <- new.env()
    source(script, local = e)
    e$certificate$risk
  }, args = list(script = script, dir = file.path(dir, "dl"), path = s$app$path))
  expect_identical(env, exact$risk)
  expect_alive(b)
})

# ---- an sdcMicroObj as CSV files ----------------------------------------------

test_that("an sdcMicroObj written as CSV files (vignette('app')) is certified as pram_certify() certifies the object", {
  skip_if_not_installed("shiny")
  skip_if_not_installed("sdcMicro")
  keys <- c("sex", "race", "marital")
  obj <- sdcMicro::createSdcObj(pums_md[1:3000, c(keys, "age")], keyVars = keys)
  set.seed(4)
  obj <- suppressWarnings(sdcMicro::pram(obj, variables = c("race", "marital")))
  certified <- pram_certify(obj, known = NULL)@risk$pram
  partial <- max_match_risk_known(obj, subsets = list(c("sex", "marital")))
  # the files, as the vignette writes them (absent categories of race stay in its matrix)
  dir <- withr::local_tempdir()
  withr::with_dir(dir, {
    utils::write.csv(obj@origData, "original.csv", row.names = FALSE)
    for (v in names(obj@pram$params)) utils::write.csv(obj@pram$params[[v]]$Rs, paste0(v, ".csv"))
    utils::write.csv(sdcMicro::extractManipData(obj), "released.csv", row.names = FALSE)
  })
  expect_gt(nrow(obj@pram$params$race$Rs), length(unique(pums_md$race[1:3000])))
  shiny::testServer(sdcRisk:::app_server(NULL, NULL, FALSE), {
    session$setInputs(data_source = "upload", data_sep = ",", na = "exclude",
                      data_file = upload_value(file.path(dir, "original.csv")))
    session$setInputs(keys = keys)
    session$setInputs(cert_source = "matrices", cert_orientation = "rows", cert_goal = "all_matches",
                      cert_known_mode = "some", cert_known = c("sex", "marital"),
                      cert_matrices = upload_value(file.path(dir, c("race.csv", "marital.csv"))),
                      cert_released = upload_value(file.path(dir, "released.csv")), cert_go = 1)
    expect_null(rv$messages$certify)
    expect_identical(rv$cert$risk, certified$risk)
    expect_identical(rv$cert$count, certified$count)
    expect_identical(rv$cert_known$risk, partial$risk)
    changes <- obj@pram$summary
    expect_identical(as.numeric(rv$cert_changes$records_changed), as.numeric(changes$nrChanges[match(rv$cert_changes$variable, changes$variable)]))
    script <- readLines(output$dl_script)
    expect_true(any(grepl("plan_data[[\"race\"]] <- factor(", script, fixed = TRUE)))
    expect_false(any(grepl("plan_data[[\"marital\"]]", script, fixed = TRUE)))
  })
})

test_that("the Downloads page offers the publication of the current release, which reads back as publish_plan() of it (issue 33)", {
  skip_if_not_installed("shiny")
  skip_if_not_installed("jsonlite")
  people <- pums_md[1:3000, c("sex", "age", "race", "marital", "weight")]
  # the download, as a .json file for read_plan()
  as_json <- function(path) {
    f <- withr::local_tempfile(fileext = ".json", .local_envir = parent.frame(2))
    file.copy(path, f)
    f
  }
  shiny::testServer(sdcRisk:::app_server(people, quote(people), FALSE), {
    session$setInputs(data_source = "given", data_sep = ",", na = "exclude", keys = c("sex", "age", "race"))
    # no release yet: a message, no file, as for the released data
    expect_identical(output$dl_publication_info, output$dl_released_info)
    expect_match(output$dl_publication_info, "No release yet", fixed = TRUE)
    expect_error(output$dl_publication, "No release yet: make one on the page Microdata release")
    expect_error(output$dl_released, "No release yet: make one on the page Microdata release")
    session$setInputs(xi = 0.3, seed = 33, goal = "all_matches", method = "tiered", calibrate = "exact",
                      on_infeasible = "error", release_known = "none", part_1 = "keep", release_go = 1)
    expect_null(rv$messages$release)
    expect_match(output$dl_publication_info, "publish_plan(release, ...)", fixed = TRUE)
    pub <- read_plan(as_json(output$dl_publication))
    expect_identical(pub, publish_plan(rv$release))
    expect_identical(pub$certificate$risk, rv$release$certificate$risk)
    expect_identical(pub$keys[[1]]$perturbed, TRUE)
    # a new release replaces it; new data take it away
    session$setInputs(xi = 0.2, release_go = 2)
    expect_identical(read_plan(as_json(output$dl_publication)), publish_plan(rv$release))
    expect_identical(read_plan(as_json(output$dl_publication))$certificate$xi, 0.2)
    session$setInputs(data_source = "pums_md")
    expect_null(rv$release)
    expect_error(output$dl_publication, "No release yet: make one on the page Microdata release")
    expect_false(any(grepl("publish_plan", readLines(output$dl_script), fixed = TRUE)))
  })
})

test_that("the script the app offers writes the publication the Downloads page offers, and none when there is none (issue 33)", {
  skip_if_not_installed("shiny")
  skip_if_not_installed("jsonlite")
  people <- pums_md[1:3000, c("sex", "age", "race", "marital", "weight")]
  dir <- withr::local_tempdir()
  release_inputs <- function(session) {
    session$setInputs(data_source = "given", data_sep = ",", na = "exclude", keys = c("sex", "age", "race"))
    session$setInputs(xi = 0.3, seed = 33, goal = "all_matches", method = "tiered", calibrate = "exact",
                      on_infeasible = "error", release_known = "none", part_1 = "keep", release_go = 1)
  }
  shiny::testServer(sdcRisk:::app_server(people, quote(people), FALSE), {
    release_inputs(session)
    expect_null(rv$messages$release)
    offered <- file.path(dir, "offered.json")
    file.copy(output$dl_publication, offered)
    script <- readLines(output$dl_script)
    expect_identical(sum(script == "sdcRisk::publish_plan(release, \"publication.json\")"), 1L)
    # run where the user runs it (a session holding `people`), the script
    # writes the released file and a publication equal to the one offered
    run <- file.path(dir, "run")
    dir.create(run)
    env <- new.env(parent = globalenv())
    env$people <- people
    withr::with_dir(run, source(textConnection(script), local = env))
    expect_identical(read_plan(file.path(run, "publication.json")), read_plan(offered))
    expect_identical(read_plan(offered), publish_plan(rv$release))
    expect_identical(utils::read.csv(file.path(run, "released.csv")), utils::read.csv(output$dl_released))
  })
  # a release that has no publication: the page says why, offers no file,
  # and the script does not write one
  local_package_function("publish_plan", function(...) stop("no publication here"))
  shiny::testServer(sdcRisk:::app_server(people, quote(people), FALSE), {
    release_inputs(session)
    expect_null(rv$messages$release)
    expect_false(is.null(rv$release))
    expect_match(output$dl_publication_info, "This release has no publication: no publication here", fixed = TRUE)
    expect_error(output$dl_publication, "This release has no publication")
    script <- readLines(output$dl_script)
    expect_true(any(grepl("released.csv", script, fixed = TRUE)))
    expect_false(any(grepl("publish_plan", script, fixed = TRUE)))
  })
})

# ---- attacked in the browser (issue 36) ----------------------------------------

test_that("in the browser: the four attacks of issue 36 run nothing, in the app or the script; forged inputs get messages", {
  sentinel <- local_sentinel()
  s <- local_app_browser(sentinel = sentinel)
  b <- s$b
  d <- hostile_data()
  h <- names(d)
  dir <- withr::local_tempdir()
  data_file <- paste0(hostile_names()[["string"]], ".csv")
  utils::write.csv(d, file.path(dir, data_file), row.names = FALSE)
  # 1: a matrix file named `sex` = if (file.create(...)) `a.csv after its key
  mat_file <- paste0(h[1], ".csv")
  utils::write.csv(transition(c("A1", "A2", "B1", "B2"), 0.8), file.path(dir, mat_file))

  browser_set(b, "data_source", "upload")
  browser_upload(b, "#data_file", file.path(dir, data_file))
  browser_keys(b, h[1:3], data = data_file)
  # 3: the key with a quote never changes
  browser_show_tab(b, "release")
  browser_wait(b, "document.getElementById('part_2') !== null")
  browser_set(b, "part_2", "keep")
  browser_set(b, "xi", 0.5)
  browser_set(b, "seed", 36)
  browser_click(b, "#release_go")
  browser_wait(b, "document.getElementById('cert_words_text') !== null", 180)
  browser_idle(b)
  expect_lte(as.numeric(browser_text(b, "#cert_value")), 0.5)
  browser_show_tab(b, "certify")
  browser_set(b, "cert_source", "matrices")
  browser_upload(b, "#cert_matrices", file.path(dir, mat_file))
  browser_wait(b, "document.querySelector('#cert_matrices_progress .progress-bar') !== null && document.querySelector('#cert_matrices_progress .progress-bar').innerText.indexOf('complete') >= 0", 60)
  browser_click(b, "#cert_go")
  browser_wait(b, "document.getElementById('pram_words_text') !== null", 180)
  # 2: the backtick column as a classification variable with a coarser level
  browser_show_tab(b, "tables")
  browser_set(b, "tab_by", h[1])
  browser_wait(b, "document.getElementById('tab_hier_1') !== null")
  browser_set(b, "tab_hier_1", h[6])
  browser_set(b, "tab_value", h[7])
  browser_set(b, "tab_contributor", h[8])
  browser_click(b, "#tab_sens_go")
  browser_wait(b, "document.getElementById('tab_words_text') !== null", 120)
  browser_click(b, "#tab_protect_go")
  browser_wait(b, "document.getElementById('tab_words_text').innerText.indexOf('Protected') >= 0", 180)
  browser_idle(b)
  for (page in c("data", "release", "certify", "tables")) expect_false(browser_js(b, sprintf("document.getElementById('%s_alert') !== null", page)))
  # the page shows the names as text: no markup of a column name ran
  expect_true(browser_js(b, "window.sdcPwned === undefined"))

  browser_show_tab(b, "downloads")
  dl <- file.path(dir, "dl")
  released <- browser_download(b, "dl_released", dl)
  table <- browser_download(b, "dl_table", dl)
  script <- browser_download(b, "dl_script", dl)
  expect_false(file.exists(sentinel))
  # 4 (the script): run where the uploads are, it writes the same files and runs no payload
  run <- file.path(dir, "run")
  dir.create(run)
  file.copy(file.path(dir, c(data_file, mat_file)), run)
  run_script_sentinel(script, run, sentinel, s$app$path)
  expect_false(file.exists(sentinel))
  expect_identical(readLines(file.path(run, "released.csv")), readLines(released))
  expect_identical(readLines(file.path(run, "protected-table.csv")), readLines(table))

  # forged inputs: a named list, a choice not offered, the level that is not a
  # column and the bidi file name that ended the session, .rds files
  forge <- function(id, value) {
    browser_js(b, sprintf("Shiny.setInputValue(%s, %s); true", jsonlite::toJSON(id, auto_unbox = TRUE), value))
  }
  browser_show_tab(b, "tables")
  forge("tab_hier_1", "['no such column']")
  forge("tab_by", jsonlite::toJSON(h[1]))
  browser_click(b, "#tab_sens_go")
  expect_match(alert_text(b, "tables"), "\"no such column\" is not a column the page offered", fixed = TRUE)
  expect_alive(b)
  browser_show_tab(b, "data")
  bidi <- file.path(dir, "a\u202e.csv")
  file.copy(file.path(dir, data_file), bidi)
  browser_upload(b, "#data_file", bidi)
  browser_wait(b, "document.getElementById('data_alert') !== null && document.getElementById('data_alert').innerText.indexOf('cannot be used') >= 0")
  expect_match(browser_text(b, "#data_alert"), "The file name \"a\\u{202e}.csv\" cannot be used", fixed = TRUE)
  expect_alive(b)
  promise <- write_promise_rds(file.path(dir, "data.rds"))
  browser_upload(b, "#data_file", promise)
  browser_wait(b, "document.getElementById('data_alert') !== null && document.getElementById('data_alert').innerText.indexOf('data.rds') >= 0")
  expect_match(browser_text(b, "#data_alert"), "CVE-2024-27322", fixed = TRUE)
  browser_show_tab(b, "certify")
  browser_upload(b, "#cert_matrices", promise)
  browser_wait(b, "document.querySelector('#cert_matrices_progress .progress-bar').innerText.indexOf('complete') >= 0", 60)
  browser_click(b, "#cert_go")
  expect_match(alert_text(b, "certify"), "data.rds is an R data file (.rds), refused", fixed = TRUE)
  browser_show_tab(b, "release")
  forge("goal", "'all_matches\"); file.create(\"x'")
  browser_click(b, "#release_go")
  expect_match(alert_text(b, "release"), "The goal must be one of the choices on the page", fixed = TRUE)
  expect_alive(b)
  browser_show_tab(b, "data")
  forge("keys", "{a: 'x'}")
  browser_wait(b, "document.getElementById('data_alert') !== null && document.getElementById('data_alert').innerText.indexOf('Key variables') >= 0")
  expect_match(browser_text(b, "#data_alert"), "Key variables must be column names; the page sent a list with names.", fixed = TRUE)
  expect_alive(b)
  expect_false(file.exists(sentinel))
  expect_true(browser_js(b, "window.sdcPwned === undefined"))
  # and the app still answers: the data page still counts the cells
  browser_show_tab(b, "data")
  browser_set(b, "keys", h[2:3])
  browser_wait(b, sprintf("document.getElementById('cells_words_text') !== null && document.getElementById('cells_words_text').innerText.indexOf(%s) >= 0",
                          jsonlite::toJSON(paste0("Keys: ", paste(h[2:3], collapse = ", "), "."), auto_unbox = TRUE)), 60)
  expect_alive(b)
})
