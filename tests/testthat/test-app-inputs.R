# The checks of every value the page sends, and of who may upload .rds
# files.

test_that("a choice must be one string the page offered", {
  expect_identical(sdcRisk:::app_in_choice("tiered", c("tiered", "nayak"), "The method"), "tiered")
  bad <- c(as.list(hostile_names()), hostile_values(), list(NULL, "Tiered", c(a = "tiered"), list("tiered")))
  for (v in bad) {
    expect_error(sdcRisk:::app_in_choice(v, c("tiered", "nayak"), "The method"),
                 "The method must be one of the choices on the page", class = "sdcRisk_app_input")
  }
})

test_that("columns must be distinct columns the page offered", {
  cols <- c("sex", "age", unname(hostile_names()))
  expect_identical(sdcRisk:::app_in_columns(NULL, cols, "Keys"), character(0))
  expect_identical(sdcRisk:::app_in_columns(cols, cols, "Keys"), cols)
  expect_error(sdcRisk:::app_in_columns("nope", cols, "Keys"), "\"nope\" is not a column the page offered", class = "sdcRisk_app_input")
  expect_error(sdcRisk:::app_in_columns(c("sex", "sex"), cols, "Keys"), "names \"sex\" twice", class = "sdcRisk_app_input")
  expect_error(sdcRisk:::app_in_columns(c("sex", "age"), cols, "Keys", max = 1), "at most 1", class = "sdcRisk_app_input")
  for (v in c(hostile_values()[c("named_list", "list", "named", "number", "flag", "na", "matrix", "nested")], list(""))) {
    expect_error(sdcRisk:::app_in_columns(v, cols, "Keys"), class = "sdcRisk_app_input")
  }
  expect_identical(sdcRisk:::app_in_column("", cols, "The weight"), "")
  expect_identical(sdcRisk:::app_in_column("age", cols, "The weight"), "age")
  expect_error(sdcRisk:::app_in_column(NULL, cols, "The value", none = FALSE), "Choose The value", class = "sdcRisk_app_input")
})

test_that("numbers and text are checked, and the message shows what was sent, escaped", {
  expect_identical(sdcRisk:::app_in_number(0.3, "xi"), 0.3)
  expect_identical(sdcRisk:::app_in_number(20, "The seed", whole = TRUE), 20L)
  expect_error(sdcRisk:::app_in_number(NA, "The seed"), "the page sent nothing", class = "sdcRisk_app_input")
  expect_error(sdcRisk:::app_in_number(1.5, "The seed", whole = TRUE), "whole number", class = "sdcRisk_app_input")
  expect_error(sdcRisk:::app_in_number(3e9, "The seed", whole = TRUE), "whole number", class = "sdcRisk_app_input")
  for (v in list(Inf, "3", list(3), c(1, 2), c(a = 3), NULL)) {
    expect_error(sdcRisk:::app_in_number(v, "The n"), "The n must be a number", class = "sdcRisk_app_input")
  }
  expect_identical(sdcRisk:::app_in_string(NULL, "The groups", empty = TRUE), "")
  expect_identical(sdcRisk:::app_in_string("a, b | c", "The groups"), "a, b | c")
  for (v in hostile_invisible()) {
    e <- expect_error(sdcRisk:::app_in_string(v, "The groups"), "control or invisible character", class = "sdcRisk_app_input")
    expect_false(grepl("[^\x20-\x7e]", conditionMessage(e)))
  }
  expect_error(sdcRisk:::app_in_string(list("a"), "The groups"), "one piece of text; the page sent a list", class = "sdcRisk_app_input")
})

test_that("control and invisible characters are found, other characters are not", {
  bad <- c(1:31, 0x7f, 0x80, 0x9f, 0xad, 0x61c, 0x180e, 0x200b, 0x200e, 0x200f, 0x2028, 0x2029, 0x202a, 0x202e,
           0x2060, 0x2066, 0x2069, 0xfeff, 0xfff9, 0xe0001, 0xe007f, 0xfffe, 0x1ffff)
  good <- c(0x20, 0x41, 0x7e, 0xa0, 0xe9, 0x3b1, 0x5d0, 0x627, 0x6f22, 0x1f600, 0x1d400)
  expect_true(all(sdcRisk:::app_bad_chars(paste0("a", intToUtf8(bad, multiple = TRUE), "b"))))
  expect_false(any(sdcRisk:::app_bad_chars(paste0("a", intToUtf8(good, multiple = TRUE), "b"))))
  expect_false(any(sdcRisk:::app_bad_chars(hostile_names())))
  expect_true(all(sdcRisk:::app_bad_chars(hostile_invisible())))
  latin1 <- "caf\xe9"
  Encoding(latin1) <- "latin1"
  expect_false(sdcRisk:::app_bad_chars(latin1))
  bytes <- "caf\xe9"
  Encoding(bytes) <- "bytes"
  expect_true(sdcRisk:::app_bad_chars(bytes))
})

test_that("uploads are Shiny's files under plain names; a forged value cannot name another file", {
  dir <- withr::local_tempdir()
  f <- file.path(dir, "a.csv")
  writeLines("x,y\n1,2", f)
  up <- upload_value(f, "a.csv")
  expect_identical(sdcRisk:::app_in_files(up, "The data file")$name, "a.csv")
  expect_null(sdcRisk:::app_in_files(NULL, "The data file"))
  forged <- list(up[c("name", "datapath")], data.frame(name = "a.csv", datapath = "/etc/passwd"),
                 data.frame(name = "a.csv", datapath = f), data.frame(name = "a.csv", datapath = tempdir()),
                 data.frame(name = "a.csv", datapath = file.path(dirname(up$datapath), "..", basename(f))))
  forged[[1]]$datapath <- "/etc/passwd"
  for (v in forged) {
    expect_error(sdcRisk:::app_in_files(v, "The data file"), "not a file uploaded to this app", class = "sdcRisk_app_input")
  }
  for (name in c(hostile_invisible(), "../a.csv", "a\\b.csv", "~a.csv", "")) {
    v <- up
    v$name <- name
    expect_error(sdcRisk:::app_in_files(v, "The data file"), "cannot be used|not an upload", class = "sdcRisk_app_input")
  }
  for (v in c(hostile_values(), list("a.csv", list(name = "a.csv", datapath = up$datapath)))) {
    expect_error(sdcRisk:::app_in_files(v, "The data file"), "not an upload", class = "sdcRisk_app_input")
  }
  two <- upload_value(c(f, f), c("a.csv", "b.csv"))
  expect_error(sdcRisk:::app_in_files(two, "The data file"), "not an upload", class = "sdcRisk_app_input")
  expect_identical(sdcRisk:::app_in_files(two, "The matrices", multiple = TRUE)$name, c("a.csv", "b.csv"))
  # payloads are legal file names
  named <- upload_value(f, paste0(hostile_names()[["backtick"]], ".csv"))
  expect_identical(sdcRisk:::app_in_files(named, "The data file")$name, paste0(hostile_names()[["backtick"]], ".csv"))
})

test_that(".rds uploads: only when allowed, and only for a browser on this computer", {
  allowed <- function(...) isTRUE(sdcRisk:::app_rds_allowed(...))
  reason <- function(...) attr(sdcRisk:::app_rds_allowed(...), "reason")
  expect_false(allowed(FALSE, list(REMOTE_ADDR = "127.0.0.1"), env = character(0)))
  expect_identical(reason(FALSE, NULL, env = character(0)), "off")
  expect_true(allowed(TRUE, list(REMOTE_ADDR = "127.0.0.1"), env = character(0)))
  expect_true(allowed(TRUE, list(REMOTE_ADDR = "::1"), env = character(0)))
  expect_true(allowed(TRUE, NULL, env = character(0)))
  expect_identical(reason(TRUE, list(REMOTE_ADDR = "192.168.1.20"), env = character(0)), "served")
  expect_identical(reason(TRUE, list(REMOTE_ADDR = "127.0.0.1", HTTP_X_FORWARDED_FOR = "10.1.1.1"), env = character(0)), "served")
  expect_identical(reason(TRUE, list(REMOTE_ADDR = "127.0.0.1"), env = c(SHINY_SERVER_VERSION = "1.5.20")), "served")
  expect_identical(reason(TRUE, list(REMOTE_ADDR = "127.0.0.1"), env = c(RSTUDIO_PRODUCT = "CONNECT")), "served")
  expect_identical(reason(TRUE, list(REMOTE_ADDR = "127.0.0.1"), env = c(R_CONFIG_ACTIVE = "shinyapps")), "served")
  expect_true(allowed(TRUE, list(REMOTE_ADDR = "127.0.0.1"), env = c(SHINY_PORT = "")))
  expect_true(sdcRisk:::app_is_loopback("127.0.0.1"))
  expect_true(sdcRisk:::app_is_loopback("localhost"))
  for (h in list("0.0.0.0", "192.168.1.2", "::", "", NA, NULL, c("127.0.0.1", "0.0.0.0"), "127.0.0.1.evil.com")) {
    expect_false(sdcRisk:::app_is_loopback(h))
  }
})

test_that("run_app() refuses allow_rds for an app served to other computers, before it starts", {
  skip_if_not_installed("shiny")
  skip_if_not_installed("bslib")
  expect_error(run_app(allow_rds = TRUE, host = "0.0.0.0", launch.browser = FALSE), class = "sdcRisk_error_allow_rds")
  expect_snapshot(error = TRUE, run_app(allow_rds = TRUE, host = "0.0.0.0", launch.browser = FALSE))
  expect_error(run_app(allow_rds = NA), class = "sdcRisk_error_argument")
  expect_error(sdc_app(allow_rds = "yes"), class = "sdcRisk_error_argument")
  expect_s3_class(sdc_app(allow_rds = TRUE), "shiny.appobj")
  # the script names the given data frame by its name, or through get()
  expect_identical(sdcRisk:::app_data_name("my data"), as.name("my data"))
  expect_identical(sdcRisk:::app_data_name("donn\u00e9es"), call("get", "donn\u00e9es"))
  expect_identical(sdcRisk:::app_data_name(quote(pums_md[1:10, ])), quote(pums_md[1:10, ]))
  expect_error(sdcRisk:::app_data_name(list("x")), class = "sdcRisk_error_argument")
})
