# The app attacked through every input (issue 36), on its server
# (shiny::testServer(); the page itself in test-app.R): payloads in every
# text input, column name, file name and choice, values of the wrong kind,
# and an .rds file holding a promise. No payload may run (a sentinel file
# stays absent), in the app or in the exported script; every bad value gets
# a message on its page, and the session keeps working.

# The inputs as the page sets them when it starts.
app_test_inputs <- function(...) {
  utils::modifyList(list(
    data_source = "given", data_sep = ",", na = "exclude", keys = NULL,
    xi = 0.3, goal = "all_matches", method = "tiered", calibrate = "exact", on_infeasible = "error",
    release_known = "none", seed = 1,
    cert_source = "sdcmicro", cert_orientation = "rows", cert_goal = "all_matches", cert_known_mode = "none",
    tab_by = NULL, tab_value = "", tab_contributor = "", tab_weight = "", tab_rules = c("frequency", "p"),
    tab_freq_n = 3, tab_nk_n = 1, tab_nk_k = 80, tab_p = 10, tab_pq_p = 10, tab_pq_q = 50,
    tab_cost = "value", tab_method = "heuristic", report_of = "release"
  ), list(...))
}

expect_page_message <- function(rv, page, label) {
  msg <- shiny::isolate(rv$messages[[page]])
  expect(!is.null(msg) && nzchar(msg$text), paste0(label, ": no message on the page ", page))
}

test_that("payload column and file names go through every page, and the script repeats the session exactly without running them", {
  skip_if_not_installed("shiny")
  skip_if_not_installed("callr")
  sentinel <- local_sentinel()
  d <- hostile_data()
  h <- names(d)
  keys <- h[1:4]
  dir <- withr::local_tempdir()
  data_name <- paste0(hostile_names()[["string"]], ".csv")
  utils::write.csv(d, file.path(dir, data_name), row.names = FALSE)
  # matrices named after the keys: `sex` = if (...) `a.csv (issue 36, 1)
  mat_names <- paste0(keys[1:2], ".csv")
  utils::write.csv(transition(c("A1", "A2", "B1", "B2"), 0.8), file.path(dir, mat_names[1]))
  utils::write.csv(transition(c("A", "B", "C"), 0.7), file.path(dir, mat_names[2]))
  state <- NULL
  shiny::testServer(sdcRisk:::app_server(NULL, NULL, FALSE), {
    do.call(session$setInputs, app_test_inputs(data_source = "pums_md"))
    session$setInputs(data_source = "upload", data_file = upload_value(file.path(dir, data_name), data_name))
    expect_identical(rv$data_label, data_name)
    expect_identical(names(rv$data), h)
    session$setInputs(keys = keys)
    expect_identical(rv$cells$keys, keys)
    # the backtick key never changes (issue 36, 2), the quote key changes within groups (3)
    session$setInputs(part_1 = "keep", part_2 = "group", part_groups_2 = "A, B | C", xi = 0.5, seed = 36,
                      release_known = "all", release_go = 1)
    expect_null(rv$messages$release)
    expect_lte(rv$release$certificate$risk, 0.5)
    expect_identical(as.character(rv$release$data[[h[1]]]), d[[h[1]]])
    session$setInputs(cert_source = "matrices", cert_matrices = upload_value(file.path(dir, mat_names), mat_names),
                      cert_known_mode = "some", cert_known = keys[c(1, 3)], cert_go = 1)
    expect_null(rv$messages$certify)
    # a table of the backtick column with a coarser level (issue 36, 2), by the non-ASCII key
    session$setInputs(tab_by = c(h[1], h[4]), tab_hier_1 = h[6], tab_value = h[7], tab_contributor = h[8],
                      tab_rules = c("frequency", "nk", "p"), tab_sens_go = 1)
    expect_null(rv$messages$tables)
    session$setInputs(tab_protect_go = 1)
    expect_null(rv$messages$tables)
    expect_true(all(c(h[6], paste0(h[6], ":", h[4])) %in% rv$prot$level))
    script <- output$dl_script
    state <<- list(script = readLines(script), release = rv$release, cert = rv$cert, known = rv$cert_known,
                   prot = rv$prot, calls = c(rv$data_code, rv$cells_code, rv$release_code, rv$cert_code,
                                             rv$tables_code, rv$protect_code))
  })
  expect_false(file.exists(sentinel))
  # the script: ASCII, and parsed back (not run) it is the very calls the app ran
  expect_false(any(grepl("[^\x20-\x7e]", state$script, useBytes = TRUE)))
  parsed <- parse(text = state$script, keep.source = FALSE)
  # and its two write.csv() and the publication the Downloads page offers
  writes <- vapply(as.list(parsed), function(e) {
    is.call(e) && (identical(e[[1]], quote(utils::write.csv)) || identical(e[[1]], quote(sdcRisk::publish_plan)))
  }, logical(1))
  expect_identical(sum(writes), 3L)
  expect_identical(length(parsed), length(state$calls) + 3L)
  calls <- as.list(parsed)[!writes]
  expect_true(all(mapply(identical, calls, state$calls)))
  # run in a new R process where the files are: no payload runs, and it
  # repeats the session exactly
  run <- file.path(dir, "run")
  dir.create(run)
  file.copy(file.path(dir, c(data_name, mat_names)), run)
  writeLines(state$script, file.path(run, "session.R"))
  got <- callr::r(function(dir, path) {
    if (nzchar(path)) pkgload::load_all(path, quiet = TRUE) else library(sdcRisk)
    setwd(dir)
    e <- new.env()
    source("session.R", local = e)
    mget(c("release", "certificate", "known", "prot"), envir = e)
  }, args = list(dir = run, path = sdcrisk_source_path()),
  env = c(callr::rcmd_safe_env(), SDCRISK_SENTINEL = sentinel))
  expect_false(file.exists(sentinel))
  expect_identical(got$release$data, state$release$data)
  expect_identical(got$release$certificate, state$release$certificate)
  expect_identical(got$certificate$risk, state$cert$risk)
  expect_identical(got$known, state$known)
  no_time <- function(p) {
    attr(p, "stats")$seconds <- NULL
    p
  }
  expect_identical(no_time(got$prot), no_time(state$prot))
  expect_identical(utils::read.csv(file.path(run, "released.csv"), check.names = FALSE)[[h[2]]],
                   as.character(state$release$data[[h[2]]]))
})

test_that("every input refuses values the page did not offer with a message; the session goes on", {
  skip_if_not_installed("shiny")
  sentinel <- local_sentinel()
  dir <- withr::local_tempdir()
  d <- pums_md[1:400, c("sex", "age", "race", "marital", "puma", "weight")]
  f <- file.path(dir, "race.csv")
  utils::write.csv(transition(levels(d$race), 0.9), f)
  bad <- c(as.list(hostile_names()), as.list(hostile_invisible()[c("newline", "bidi")]),
           hostile_values()[c("named_list", "list", "named", "number", "two", "na", "empty", "nested")])
  # values that are right for some inputs: one number, no columns, two columns
  valid_for <- list(number = c("seed", "weight_1", "tab_freq_n", "tab_nk_n", "tab_nk_k", "tab_p", "tab_pq_p", "tab_pq_q"),
                    empty = c("keys", "tab_hier_1", "tab_contributor", "tab_weight", "ordered"), two = c("keys", "cert_known", "tab_by", "tab_hier_1"))
  # each input with the button that makes the app read it, the page of its
  # message, and the other inputs it needs to be read
  cases <- list(
    list(ids = c("data_source", "keys", "na"), page = "data"),
    list(ids = c("xi", "seed", "goal", "method", "calibrate", "on_infeasible", "release_known", "part_1", "part_groups_1"),
         go = "release_go", page = "release", set = list(part_1 = "group", part_groups_1 = "Male | Female")),
    # the least-damage design's inputs, read when the page shows them (issue 35)
    list(ids = c("damage", "ordered", "weight_1"), go = "release_go", page = "release", set = list(method = "optimal", damage = "distance")),
    list(ids = c("cert_source", "cert_goal", "cert_known_mode", "cert_known", "cert_orientation", "cert_matrices", "cert_released"),
         go = "cert_go", page = "certify",
         set = list(cert_source = "matrices", cert_known_mode = "some", cert_known = "sex", cert_matrices = upload_value(f))),
    list(ids = "cert_obj", go = "cert_go", page = "certify", set = list(cert_source = "sdcmicro"), control = FALSE),
    list(ids = c("tab_by", "tab_hier_1", "tab_value", "tab_contributor", "tab_weight", "tab_rules", "tab_freq_n", "tab_nk_n",
                 "tab_nk_k", "tab_p", "tab_pq_p", "tab_pq_q"),
         go = "tab_sens_go", page = "tables", set = list(tab_by = "race", tab_value = "weight",
                                                          tab_rules = c("frequency", "nk", "p", "pq", "zero"))),
    list(ids = c("tab_cost", "tab_method"), go = "tab_protect_go", page = "tables")
  )
  shiny::testServer(sdcRisk:::app_server(d, quote(people), FALSE), {
    do.call(session$setInputs, app_test_inputs(keys = c("sex", "race", "marital")))
    clicks <- 0
    for (case in cases) {
      good <- utils::modifyList(app_test_inputs(keys = c("sex", "race", "marital")), case$set %||% list())
      do.call(session$setInputs, good)
      if (identical(case$go, "tab_protect_go")) session$setInputs(tab_by = "race", tab_value = "weight", tab_sens_go = (clicks <- clicks + 1))
      # the good inputs give no message: every message below is the bad value's
      rv$messages <- list()
      if (!is.null(case$go) && !isFALSE(case$control)) {
        do.call(session$setInputs, stats::setNames(list(clicks <- clicks + 1), case$go))
        expect_null(rv$messages[[case$page]]$text)
      }
      for (id in case$ids) {
        for (i in seq_along(bad)) {
          if (id %in% valid_for[[names(bad)[i]]]) next
          rv$messages <- list()
          args <- stats::setNames(list(bad[[i]]), id)
          if (!is.null(case$go)) args[[case$go]] <- (clicks <- clicks + 1)
          do.call(session$setInputs, args)
          expect_page_message(rv, case$page, sprintf("%s = %s", id, names(bad)[i]))
        }
        do.call(session$setInputs, stats::setNames(list(good[[id]]), id))
      }
    }
    expect_false(file.exists(sentinel))
    # the session still answers: the keys, a release, a table
    do.call(session$setInputs, app_test_inputs(keys = c("sex", "race", "marital"), xi = 0.5))
    session$setInputs(release_go = (clicks <- clicks + 1))
    expect_null(rv$messages$release)
    expect_lte(rv$release$certificate$risk, 0.5)
    session$setInputs(tab_by = c("race", "sex"), tab_value = "weight", tab_sens_go = (clicks <- clicks + 1))
    expect_null(rv$messages$tables$text)
    expect_s3_class(rv$sens, "sdc_sensitivity")
    # a report of a value the page did not offer: no file, a message
    for (v in bad) {
      session$setInputs(report_of = v)
      expect_error(output$dl_report, "must be one of the choices")
    }
  })
  expect_false(file.exists(sentinel))
})

test_that("the two inputs that ended the session (issue 36) get a message: a level that is not a column, a bidi file name", {
  skip_if_not_installed("shiny")
  dir <- withr::local_tempdir()
  f <- file.path(dir, "a.csv")
  utils::write.csv(data.frame(nace = c("A1", "A2", "B1"), section = c("A", "A", "B"), sales = 1:3), f, row.names = FALSE)
  shiny::testServer(sdcRisk:::app_server(NULL, NULL, FALSE), {
    do.call(session$setInputs, app_test_inputs(data_source = "upload"))
    session$setInputs(data_file = upload_value(f, "nace.csv"))
    session$setInputs(tab_by = "nace", tab_hier_1 = "no such column", tab_value = "sales", tab_sens_go = 1)
    expect_match(rv$messages$tables$text, "The coarser levels of nace: \"no such column\" is not a column the page offered", fixed = TRUE)
    session$setInputs(data_file = upload_value(f, "a\u202e.csv"))
    expect_match(rv$messages$data$text, "The file name \"a\\u{202e}.csv\" cannot be used", fixed = TRUE)
    expect_identical(rv$data_label, "nace.csv")
    session$setInputs(tab_hier_1 = "section", tab_sens_go = 2)
    expect_null(rv$messages$tables)
    expect_s3_class(rv$sens, "sdc_sensitivity")
  })
})

test_that("an .rds file holding a promise is never read: data, matrices, sdcMicroObj", {
  skip_if_not_installed("shiny")
  skip_if_not_installed("callr")
  sentinel <- local_sentinel()
  dir <- withr::local_tempdir()
  promise_rds <- write_promise_rds(file.path(dir, "data.rds"))
  # the file is live: read and used in an R process, it runs its code
  callr::r(function(f) {
    x <- readRDS(f)
    is.data.frame(x)
  }, args = list(f = promise_rds), env = c(callr::rcmd_safe_env(), SDCRISK_SENTINEL = sentinel))
  expect_true(file.exists(sentinel))
  unlink(sentinel)
  refused <- "refused: this app reads .rds files only when started with run_app(allow_rds = TRUE) on this computer, because reading an .rds file can run code hidden in it (CVE-2024-27322"
  shiny::testServer(sdcRisk:::app_server(NULL, NULL, FALSE), {
    do.call(session$setInputs, app_test_inputs(data_source = "pums_md", keys = c("sex", "race")))
    session$setInputs(data_source = "upload", data_file = upload_value(promise_rds, "data.rds"))
    expect_match(rv$messages$data$text, paste("data.rds is an R data file (.rds),", refused), fixed = TRUE)
    session$setInputs(cert_source = "sdcmicro", cert_obj = upload_value(promise_rds, "obj.rds"), cert_go = 1)
    expect_match(rv$messages$certify$text, paste("obj.rds is an R data file (.rds),", refused), fixed = TRUE)
    session$setInputs(cert_source = "matrices", cert_matrices = upload_value(promise_rds, "race.rds"), cert_go = 2)
    expect_match(rv$messages$certify$text, paste("race.rds is an R data file (.rds),", refused), fixed = TRUE)
    expect_identical(rv$data_label, "pums_md (synthetic Maryland PUMS)")
    expect_identical(rv$cells$keys, c("sex", "race"))
  })
  expect_false(file.exists(sentinel))
  # allowed, but the app is on a Shiny server: still refused
  withr::local_envvar(SHINY_PORT = "3838")
  shiny::testServer(sdcRisk:::app_server(NULL, NULL, TRUE), {
    do.call(session$setInputs, app_test_inputs(data_source = "upload", data_file = upload_value(promise_rds, "data.rds")))
    expect_match(rv$messages$data$text, "refused: this app is served to other computers, and then it never reads .rds files", fixed = TRUE)
  })
  expect_false(file.exists(sentinel))
})

test_that("with allow_rds on this computer, an honest .rds data frame is read as before", {
  skip_if_not_installed("shiny")
  dir <- withr::local_tempdir()
  f <- file.path(dir, "people.rds")
  saveRDS(pums_md[1:50, c("sex", "age")], f)
  shiny::testServer(sdcRisk:::app_server(NULL, NULL, TRUE), {
    do.call(session$setInputs, app_test_inputs(data_source = "upload", data_file = upload_value(f, "people.rds")))
    expect_null(rv$messages$data)
    expect_identical(rv$data, pums_md[1:50, c("sex", "age")])
    expect_identical(rv$data_code, list(quote(data <- readRDS("people.rds"))))
  })
})
