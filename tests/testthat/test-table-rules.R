# Plausibility warnings of the rule constructors: valid input that is rarely
# meant gives a classed warning, and the rule is still made as written.

test_that("a percentage below 1 warns (a user meaning 10% wrote 0.1)", {
  for (make in list(function() rule_p(0.1), function() rule_pq(0.1, 50),
                    function() rule_pq(0.1, 0.5), function() rule_nk(2, 0.85))) {
    w <- expect_warning(r <- make(), class = "sdcRisk_warning_percent")
    expect_s3_class(r, "sdc_rule")
    expect_true(w$value < 1)
  }
  expect_identical(rule_p(0.1)$params$p, 0.1) |> suppressWarnings()
  w <- tryCatch(rule_p(0.5), warning = function(w) w)
  expect_identical(w$arg, "p")
  expect_s3_class(w, "sdcRisk_warning")
  # 1% and more are taken as meant
  expect_no_warning(rule_p(1))
  expect_no_warning(rule_p(10))
  expect_no_warning(rule_pq(5, 50))
  expect_no_warning(rule_nk(1, 60))
})

test_that("rule_nk() with arguments that look swapped warns", {
  w <- expect_warning(r <- rule_nk(60, 1), class = "sdcRisk_warning_rule_nk")
  expect_identical(c(w$n, w$k), c(60, 1))
  expect_identical(r$params$n, 60L)
  expect_warning(rule_nk(85, 2), class = "sdcRisk_warning_rule_nk")
  expect_warning(rule_nk(10, 5), class = "sdcRisk_warning_rule_nk")
  # the usual rules, and large n with a larger share, are quiet
  for (nk in list(c(1, 60), c(2, 85), c(3, 90), c(5, 3), c(9, 5), c(10, 90), c(20, 95))) {
    expect_no_warning(rule_nk(nk[1], nk[2]))
  }
})

test_that("plausibility warnings are worded", {
  local_edition(3)
  expect_snapshot({
    r <- rule_p(0.1)
    r <- rule_nk(60, 1)
  })
})
