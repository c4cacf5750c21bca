# The release page offers the least-damage design (issue 35, item 4):
# method, damage and ordered keys go from the page, checked, into ifpr()
# and into the script; the certificate's words state the design's damage.

release_inputs <- function(...) {
  utils::modifyList(list(
    xi = 0.3, goal = "all_matches", method = "tiered", calibrate = "exact", on_infeasible = "error",
    release_known = "none", seed = 35, na = "exclude"
  ), list(...))
}

# The ifpr() call among the steps of the release.
release_call <- function(code) code[[2]][[3]]

test_that("the least-damage design is chosen on the page, with its damage and ordered keys, and the script repeats it", {
  skip_if_not_installed("shiny")
  people <- pums_md[1:3000, c("sex", "age", "race", "marital", "weight")]
  shiny::testServer(sdcRisk:::app_server(people, quote(people), FALSE), {
    session$setInputs(data_source = "given", data_sep = ",", na = "exclude", keys = c("sex", "age", "race", "marital"))
    # only the numeric key can be ordered
    offered <- as.character(output$ordered_ui$html)
    expect_match(offered, "value=\"age\"", fixed = TRUE)
    expect_no_match(offered, "value=\"race\"", fixed = TRUE)
    do.call(session$setInputs, release_inputs(method = "optimal", damage = "distance", ordered = "age", release_go = 1))
    expect_null(rv$messages$release)
    cert <- rv$release$certificate
    expect_identical(cert$method, "optimal")
    expect_identical(cert$design$damage, "distance")
    expect_identical(cert$design$ordered, "age")
    expect_lte(cert$risk, 0.3)
    # the call the app ran, and the same call typed by hand
    cl <- release_call(rv$release_code)
    expect_identical(cl$method, "optimal")
    expect_identical(cl$damage, "distance")
    expect_identical(cl$ordered, "age")
    expect_null(cl$calibrate)
    set.seed(35)
    by_hand <- ifpr(people, c("sex", "age", "race", "marital"), xi = 0.3, goal = "all_matches", method = "optimal",
                    on_infeasible = "error", na = "exclude", damage = "distance", ordered = "age")
    expect_identical(rv$release$data, by_hand$data)
    expect_identical(cert$design, by_hand$certificate$design)
    # the script says so, and parses back to the calls the app ran
    s <- app_script(lapply(stats::setNames(nm = app_code_fields), function(f) rv[[f]]))
    expect_true(s$ok)
    expect_true(any(grepl("method = \"optimal\"", s$lines, fixed = TRUE)))
    expect_true(any(grepl("damage = \"distance\"", s$lines, fixed = TRUE)))
    expect_true(any(grepl("ordered = \"age\"", s$lines, fixed = TRUE)))
    # the certificate's words state the damage and the lower bound
    words <- as.character(output$cert_words$html)
    expect_match(words, "minimises the distance on the ordered keys", fixed = TRUE)
    expect_match(words, format(round(cert$design$lower[["records"]], 1), big.mark = ",", nsmall = 1), fixed = TRUE)

    expect_null(cl$weights)
    # a key that costs more: its weight reaches ifpr() and the script; with
    # the records as damage, no weight is read
    session$setInputs(damage = "keys", weight_2 = 2, weight_4 = 0.5, release_go = 2)
    expect_null(rv$messages$release)
    cl <- release_call(rv$release_code)
    expect_identical(cl$weights, quote(c(age = 2, marital = 0.5)))
    expect_identical(rv$release$certificate$design$weights, c(sex = 1, age = 2, race = 1, marital = 0.5))
    set.seed(35)
    by_hand <- ifpr(people, c("sex", "age", "race", "marital"), xi = 0.3, goal = "all_matches", method = "optimal",
                    on_infeasible = "error", na = "exclude", damage = "keys", weights = c(age = 2, marital = 0.5))
    expect_identical(rv$release$data, by_hand$data)
    s <- app_script(lapply(stats::setNames(nm = app_code_fields), function(f) rv[[f]]))
    expect_true(s$ok)
    expect_true(any(grepl("weights = c(age = 2, marital = 0.5)", s$lines, fixed = TRUE)))

    # another damage: ordered keys and weights are not read, the script has neither
    session$setInputs(damage = "records", release_go = 3)
    expect_null(rv$messages$release)
    cl <- release_call(rv$release_code)
    expect_identical(cl$damage, "records")
    expect_null(cl$ordered)
    expect_null(cl$weights)
    expect_identical(rv$release$certificate$design$damage, "records")
    expect_identical(rv$release$certificate$design$ordered, character())

    # the tiered design: no damage, the calibration instead
    session$setInputs(method = "tiered", damage = "distance", release_go = 4)
    expect_null(rv$messages$release)
    cl <- release_call(rv$release_code)
    expect_identical(cl$method, "tiered")
    expect_identical(cl$calibrate, "exact")
    expect_null(cl$damage)
    expect_null(cl$ordered)
    expect_null(cl$weights)
    expect_null(rv$release$certificate$design)
    expect_no_match(as.character(output$cert_words$html), "cert_design_text", fixed = TRUE)
  })
})

test_that("a damage or ordered key the page did not offer gets a message, and nothing is released", {
  skip_if_not_installed("shiny")
  people <- pums_md[1:3000, c("sex", "age", "race", "marital", "weight")]
  shiny::testServer(sdcRisk:::app_server(people, quote(people), FALSE), {
    session$setInputs(data_source = "given", data_sep = ",", na = "exclude", keys = c("sex", "age", "race"))
    clicks <- 0
    bad <- list(
      damage = list("bogus", c("keys", "records"), list("keys"), NA_character_, character(0), 1),
      ordered = list("race", "weight", "marital", c("age", "age"), list("age"), 1, NA_character_),
      weight_2 = list(-1, "1", NA_real_, Inf, c(1, 2), list(1), TRUE)
    )
    what <- c(damage = "The damage to make least", ordered = "Ordered keys", weight_2 = "The weight of age")
    for (id in names(bad)) {
      for (v in bad[[id]]) {
        rv$messages <- list()
        rv$release <- NULL
        args <- release_inputs(method = "optimal", damage = "distance", ordered = "age", release_go = (clicks <- clicks + 1))
        args[id] <- list(v)
        do.call(session$setInputs, args)
        session$setInputs(weight_2 = 1)
        expect_match(rv$messages$release$text, what[[id]], fixed = TRUE)
        expect_null(rv$release)
      }
    }
    # a forged method is refused too
    rv$messages <- list()
    session$setInputs(method = "optimal; stop()", release_go = (clicks <- clicks + 1))
    expect_match(rv$messages$release$text, "The method must be one of the choices")
    # and the session goes on
    do.call(session$setInputs, release_inputs(method = "optimal", damage = "keys", release_go = (clicks <- clicks + 1)))
    expect_null(rv$messages$release)
    expect_identical(rv$release$certificate$design$damage, "keys")
  })
})

test_that("the design's words: the damage minimised, every measure, the lower bound under Goal 3 only", {
  design <- list(damage = "keys", values = c(records = 1000, keys = 1200, distance = 1300, variance = 1500),
                 lower = c(records = 800, keys = 800))
  w <- app_design_words(design)
  expect_match(w, "minimises the key values changed: in expectation 1,000.0 records change and 1,200.0 key values (1.20 per changed record), and the variance of the cell counts is 1,500.0.", fixed = TRUE)
  expect_match(w, "fewer than 800.0 records (this design: 1.250 times that)", fixed = TRUE)
  design$lower <- c(records = NA_real_, keys = NA_real_)
  expect_no_match(app_design_words(design), "fewer than", fixed = TRUE)
  design$damage <- "distance"
  expect_match(app_design_words(design), ", 1,300.0 in distance,", fixed = TRUE)
})
