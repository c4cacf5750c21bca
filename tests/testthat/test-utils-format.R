# Printing within 80 columns and numbers in fixed notation (issue 37,
# item 9).

test_that("wrap_lines() fits every line in the width, keeps the words and never splits 'k = v'", {
  set.seed(37)
  words <- c("sex = Male", "age", "(T = 4),", "R = 0.25 <= xi = 0.25", "T / F", "E[F | T]",
             "records", "a", "certificate;", "puma = 24-00101,", strrep("z", 12))
  for (i in 1:200) {
    lead <- strrep(" ", sample(0:4, 1))
    line <- paste0(lead, paste(sample(words, sample(1:40, 1), TRUE), collapse = " "))
    out <- sdcRisk:::wrap_lines(line, width = 40)
    info <- paste("case", i, ":", line)
    expect_true(all(nchar(out) <= 40), info = info)
    # the words, in order, are those of the line
    expect_identical(strsplit(trimws(paste(trimws(out), collapse = " ")), " ")[[1]],
                     strsplit(trimws(line), " ")[[1]], info = info)
    expect_true(all(startsWith(out, lead)), info = info)
    if (length(out) > 1) expect_true(all(startsWith(out[-1], paste0(lead, "    "))), info = info)
    # "=" and "<=" and "/" and "|" stay between their operands
    expect_false(any(grepl("(=|/|\\|)$", trimws(out))), info = info)
  }
  expect_identical(sdcRisk:::wrap_lines(c("short", "also short")), c("short", "also short"))
})

test_that("fmt_column() prints fixed notation: no e-notation, linear-program zeros as 0", {
  expect_identical(sdcRisk:::fmt_column(c(1.164153e-10, 7618, 20382)), c("0", "7618", "20382"))
  expect_identical(sdcRisk:::fmt_column(c(4455.333333, 0, 118.6667)), c("4455.33", "0.00", "118.67"))
  expect_identical(sdcRisk:::fmt_column(c(47985.3669508889, NA), big.mark = ","), c("47,985.4", "NA"))
  expect_identical(sdcRisk:::fmt_column(c(-1e-12, 0.5)), c("0.0000", "0.5000"))
  set.seed(9)
  for (i in 1:100) {
    x <- signif(rlnorm(8, 0, 6), 8) * sample(c(-1, 1), 8, TRUE)
    out <- sdcRisk:::fmt_column(x)
    expect_false(any(grepl("e", out)), info = paste(x, collapse = ", "))
    # the largest value is shown to at least 4 significant digits
    big <- which.max(abs(x))
    expect_equal(as.numeric(out[big]), x[big], tolerance = 1e-4, info = paste(x, collapse = ", "))
  }
})

test_that("fmt_prob() prints risks from 1 to 1e-5 in fixed notation", {
  expect_identical(sdcRisk:::fmt_prob(c(1, 0.3, 0.000407664, 1 / 30000, NA)),
                   c("1", "0.3", "0.000407664", "0.0000333333", "NA"))
})

test_that("table_lines() leaves out optional columns, the last first, until the table fits", {
  df <- data.frame(key = c("a", "b"), s1 = strrep("1", 30), s2 = strrep("2", 30), rules = "p10, pq")
  out <- sdcRisk:::table_lines(df, optional = c("s1", "s2"), width = 60)
  expect_identical(out$dropped, "s2")
  expect_true(all(nchar(out$lines) <= 60))
  expect_length(out$lines, 3)
  expect_match(out$lines[1], "rules")
  all_in <- sdcRisk:::table_lines(df, optional = c("s1", "s2"), width = 200)
  expect_identical(all_in$dropped, character())
})

test_that("key_lines() never splits a key's value, even one with spaces", {
  keys <- list(sex = "Female", race = "American Indian & Alaska Native", marital = "Never married",
               puma = "24-00101")
  out <- sdcRisk:::key_lines(keys, indent = 6L)
  expect_true(all(nchar(out) <= 80))
  expect_length(out, 2)
  expect_true(all(startsWith(out, "      ")))
  pieces <- strsplit(gsub(" +", " ", trimws(paste(out, collapse = " "))), ", ", fixed = TRUE)[[1]]
  expect_identical(pieces, paste(names(keys), "=", unlist(keys)))
  # each line ends at the end of a piece
  expect_true(all(grepl("(,|24-00101)$", out)))
  expect_false(any(grepl("\001", out, fixed = TRUE)))
})
