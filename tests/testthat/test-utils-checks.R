# The argument checks of R/utils-checks.R and the help page ?sdcRisk_errors.

test_that("each check raises the class its caller passes, by default today's class", {
  f <- function(x) check_probability(x)
  g <- function(x) check_probability(x, class = "xi")
  expect_error(f(2), class = "sdcRisk_error_argument")
  expect_error(g(2), class = "sdcRisk_error_xi")
  # the argument's name no longer chooses the class
  h <- function(xi) check_probability(xi)
  expect_error(h(2), class = "sdcRisk_error_argument")
  expect_error(check_count(0, class = "rule_parameter"), class = "sdcRisk_error_rule_parameter")
  expect_error(check_flag(NA, class = "waiver"), class = "sdcRisk_error_waiver")
  expect_error(check_positive_numbers(-1, "theta"), class = "sdcRisk_error_argument")
  expect_error(check_positive_numbers(-1, "theta", class = "theta"), class = "sdcRisk_error_theta")
  expect_error(psi(2, -1), class = "sdcRisk_error_theta")
  expect_error(check_data_frame(1), class = "sdcRisk_error_not_data_frame")
  expect_error(check_data_frame(1, class = "argument"), class = "sdcRisk_error_argument")
  expect_error(check_names_in(1, data.frame(a = 1)), class = "sdcRisk_error_keys")
  expect_error(check_percent(200, TRUE), class = "sdcRisk_error_rule_parameter")
  expect_error(check_xi_vector(0), class = "sdcRisk_error_xi")
})

test_that("checks accept what they should and reject what they should", {
  expect_silent(check_count(c(1, 2^31 - 1)))
  expect_error(check_count(2^31), class = "sdcRisk_error_argument")
  expect_error(check_count(5, max = 4), class = "sdcRisk_error_argument")
  expect_error(check_count(NA), class = "sdcRisk_error_argument")
  expect_error(check_count(1.5), class = "sdcRisk_error_argument")
  expect_error(check_count(numeric()), class = "sdcRisk_error_argument")
  expect_silent(check_number(0, min = 0))
  for (bad in list("a", NA_real_, NaN, Inf, c(1, 2), numeric(), -1)) {
    expect_error(check_number(bad, min = 0), class = "sdcRisk_error_argument")
  }
  expect_silent(check_flag(TRUE))
  for (bad in list(NA, "TRUE", 1, c(TRUE, FALSE), logical())) {
    expect_error(check_flag(bad), class = "sdcRisk_error_argument")
  }
  expect_silent(check_string("a"))
  expect_error(check_string(NA_character_), class = "sdcRisk_error_argument")
  expect_silent(check_probability(0, open = FALSE))
  expect_error(check_probability(0), class = "sdcRisk_error_argument")
  expect_error(check_cell_ids(c(1, 4), 3), class = "sdcRisk_error_argument")
  expect_silent(check_cell_ids(c(1, 3), 3))
  expect_error(check_names_free(c("a", "count"), c("count", "cell")), class = "sdcRisk_error_key_name")
  expect_silent(check_names_free(c("a", "counts"), c("count", "cell")))
})

test_that("check_choice() takes the caller's choices and gives classed errors", {
  f <- function(goal = c("one", "two")) check_choice(goal)
  expect_identical(f(), "one")
  expect_identical(f("two"), "two")
  for (bad in list(character(), NA_character_, "three", 1, c("one", "two", "one"), NULL)) {
    expect_error(f(bad), class = "sdcRisk_error_argument")
  }
  expect_identical(check_choice("b", c("a", "b")), "b")
  expect_snapshot(error = TRUE, f("tw"))
})

test_that("argument errors carry the argument's name and value", {
  e <- tryCatch(ifpr_theta(1.5), sdcRisk_error_xi = function(e) e)
  expect_identical(e$arg, "xi")
  expect_identical(e$value, 1.5)
  e <- tryCatch(match_risk(pram_plan(cell_frequencies(data.frame(k = c("a", "b")), "k"), list(1:2), theta = 0.5), a = 0),
    sdcRisk_error = function(e) e
  )
  expect_s3_class(e, "sdcRisk_error_argument")
  expect_identical(e$arg, "a")
  expect_identical(e$value, 0)
  cf <- cell_frequencies(data.frame(k = c("a", "b")), "k")
  plan <- pram_plan(cf, list(1:2), theta = 0.5)
  plan$block_cells[1] <- 9L
  e <- tryCatch(max_match_risk(plan), sdcRisk_error = function(e) e)
  expect_s3_class(e, "sdcRisk_error_invalid_object")
  expect_identical(e$arg, "plan")
})

# Every class of error the package can raise, read from its functions: the
# class given to abort_sdc() or to its wrapper abort_population() (a string,
# or any string in the expression that computes it; the wrapper's default
# "population" when none is given), the default `class` of every check_*()
# and the `class` given to a check_*() where it is called. An `if` in such
# an expression contributes its branches, not its condition.
raised_classes <- function() {
  ns <- asNamespace("sdcRisk")
  out <- character()
  strings_in <- function(e) {
    if (is.character(e)) return(e)
    if (is.call(e) && identical(e[[1]], as.name("if"))) return(unlist(lapply(as.list(e)[-(1:2)], strings_in)))
    if (is.call(e)) return(unlist(lapply(as.list(e)[-1], strings_in)))
    character()
  }
  walk <- function(e) {
    if (!is.call(e)) return()
    if (identical(e[[1]], as.name("abort_sdc")) || identical(e[[1]], as.name("abort_population"))) {
      a <- as.list(e)[-1]
      nm <- names(a) %||% rep("", length(a))
      positional <- which(nm == "")
      w <- if ("what" %in% nm) a[["what"]] else if (length(positional) >= 2) a[positional[2]][[1]] else "population"
      out <<- c(out, strings_in(w))
    }
    if (is.name(e[[1]]) && startsWith(as.character(e[[1]]), "check_") && "class" %in% names(e)) {
      out <<- c(out, strings_in(e[["class"]]))
    }
    for (x in as.list(e)) if (!missing(x)) walk(x)
  }
  for (f in ls(ns, all.names = TRUE)) {
    fn <- get(f, ns)
    if (!is.function(fn)) next
    walk(body(fn))
    if (startsWith(f, "check_") && is.character(formals(fn)$class)) out <- c(out, formals(fn)$class)
  }
  sort(unique(out))
}

test_that("?sdcRisk_errors lists every error class the package raises", {
  rd <- tools::Rd_db("sdcRisk")[["sdcRisk_errors.Rd"]]
  skip_if(is.null(rd), "help pages not installed")
  text <- paste(capture.output(tools::Rd2txt(rd, options = list(underline_titles = FALSE))), collapse = "\n")
  documented <- unique(regmatches(text, gregexpr("sdcRisk_error_[a-z_]+", text))[[1]])
  raised <- paste0("sdcRisk_error_", raised_classes())
  expect_true(length(raised) >= 25)
  expect_identical(setdiff(raised, documented), character())
  expect_identical(setdiff(documented, raised), character())
})

test_that("a key with many distinct values for its records warns: income and a 5,000-value integer (issue 37)", {
  set.seed(37)
  n <- 20000
  d <- data.frame(sex = sample(c("F", "M"), n, TRUE),
                  # an income in steps of $5: over half as many values as records
                  income = 5 * sample.int(14000, n, TRUE),
                  code5000 = sample.int(5000, n, TRUE),
                  code500 = sample.int(500, n, TRUE))
  expect_lt(length(unique(d$income)) / n, 0.8) # the old rule's threshold
  w <- tryCatch(cell_frequencies(d, c("sex", "income")), sdcRisk_warning = function(w) w)
  expect_s3_class(w, "sdcRisk_warning_key_distinct")
  expect_match(conditionMessage(w), "income")
  expect_warning(cell_frequencies(d, c("sex", "code5000")), class = "sdcRisk_warning_key_distinct")
  # 500 values, and the package's own keys, are what keys look like: silent
  expect_no_warning(cell_frequencies(d, c("sex", "code500")))
  expect_no_warning(cell_frequencies(pums_md, c("sex", "age", "race", "marital", "puma")))
  # the rule itself, at its edges
  expect_identical(sdcRisk:::key_too_distinct(c(1000, 1001, 1001, 40, 49), c(1e4, 1e4, 20020, 50, 49)),
                   c(FALSE, TRUE, FALSE, TRUE, FALSE))
})
