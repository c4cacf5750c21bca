# The app's steps as calls: app_lang() makes the call of a value,
# app_deparse() writes it, and the script is checked by parsing it back
# (never by running it). Each value must come back exactly, whatever its
# strings and names hold.

# The strings the writer must survive: payloads, every control character,
# bidi and other invisible characters, non-ASCII, and names that are
# empty, reserved or look like syntax.
writer_strings <- function() {
  c(hostile_names(), hostile_invisible(),
    controls = intToUtf8(c(1:31, 127), multiple = FALSE), c1 = intToUtf8(0x80:0x9f),
    bidi = intToUtf8(c(0x202a:0x202e, 0x2066:0x2069, 0x200e, 0x200f, 0x061c)),
    tags = intToUtf8(c(0xe0001, 0xe0041, 0xe007f)), separators = "a\u2028b\u2029c",
    astral = "\U0001d400\U0010fffd", backslashes = "\\\\\\", quotes = "\"'`", escapes = "\\n\\u{202e}\\x41",
    empty = "", space = " ", na_text = "NA", null = "NULL", true = "TRUE", dots = "...", dot1 = "..1", dot = ".",
    reserved = "function", inf = "Inf", digit = "1a", dotdigit = ".2", underscore = "_x", recursive = "recursive",
    use_names = "use.names", hash = "# not a comment", long = strrep("ab`\"", 300))
}

# `x` comes back exactly: its call evaluates to it, and the code of the
# call parses back to the same call (no evaluation of the code).
expect_round_trip <- function(x, label) {
  lang <- sdcRisk:::app_lang(x)
  code <- sdcRisk:::app_deparse(lang)
  back <- parse(text = code, keep.source = FALSE)
  expect(length(back) == 1L && identical(back[[1]], lang), paste0(label, ": parsed back differently: ", code))
  expect(identical(eval(lang, baseenv()), x), paste0(label, ": evaluates to another value: ", code))
  expect(!grepl("[^\x20-\x7e\n]", code, useBytes = TRUE), paste0(label, ": not ASCII: ", code))
}

test_that("strings with any character come back exactly, as values and as names", {
  s <- writer_strings()
  for (i in seq_along(s)) {
    label <- names(s)[i]
    expect_round_trip(s[[i]], label)
    expect_round_trip(c(s[[i]], "b"), paste(label, "in a vector"))
    expect_round_trip(structure(list(1, "b"), names = c(s[[i]], "plain")), paste(label, "as a list name"))
    expect_round_trip(structure(list(1), names = s[[i]]), paste(label, "as the only name"))
    expect_round_trip(structure(c(1, 2), names = c(s[[i]], "b")), paste(label, "as a vector name"))
    expect_round_trip(structure(list(list(c(s[[i]], "x"))), names = s[[i]]), paste(label, "nested"))
  }
  # all at once, and names that are NA
  expect_round_trip(structure(as.list(seq_along(s)), names = unname(s)), "all names")
  expect_round_trip(structure(list(1, 2), names = c(NA, "a")), "NA name")
})

test_that("numbers, missing values and empty vectors come back exactly", {
  values <- list(0.3, 1 / 3, -1.5, 0, -0, 1e-300, 5e-324, .Machine$double.xmax, -.Machine$double.xmax, 2^60,
                 Inf, -Inf, NaN, NA, NA_real_, NA_integer_, NA_character_, TRUE, FALSE, 7L, -7L,
                 .Machine$integer.max, -.Machine$integer.max, c(0, 18, Inf), c(NA, 1L), c(NA, "a"),
                 character(0), integer(0), double(0), logical(0), list(), NULL, list(NULL, list()),
                 list(sex = "keep", age = c(0, 18, 65, Inf)), list(list(c("a", "b"), "c")))
  for (i in seq_along(values)) expect_round_trip(values[[i]], paste("value", i))
  set.seed(36)
  x <- c(stats::rnorm(300) * 10^sample(-300:300, 300, TRUE), stats::runif(100), -stats::rexp(100))
  for (i in seq_along(x)) expect_round_trip(x[i], sprintf("double %d of seed 36: %a", i, x[i]))
  # -0 keeps its sign
  expect_identical(1 / eval(sdcRisk:::app_lang(-0)), -Inf)
})

test_that("random strings of hostile characters come back exactly (seeded)", {
  pool <- c(0x01:0x1f, 0x20, 0x22, 0x27, 0x5c, 0x60, 0x7b, 0x7d, 0x7f, 0x85, 0xa0, 0xad, 0xe9, 0x200b,
            0x202e, 0x2066, 0x2028, 0x6f22, 0xfeff, 0x1f600, 0xe0041, 0x61, 0x3d, 0x28, 0x29, 0x3b)
  for (seed in 1:3) {
    set.seed(seed)
    s <- vapply(1:60, function(i) intToUtf8(sample(pool, sample(0:12, 1), TRUE)), "")
    expect_round_trip(s, paste("strings of seed", seed))
    expect_round_trip(structure(as.list(seq_along(s)), names = s), paste("names of seed", seed))
  }
})

test_that("R 4.2's deparse() is not trusted with names; the app's writer is", {
  x <- list(`a"b` = 1)
  base <- paste(deparse(x), collapse = "")
  back <- tryCatch(parse(text = base, keep.source = FALSE), error = function(e) NULL)
  # on R < 4.3 the code of deparse() does not even parse; the app's does
  if (getRversion() < "4.3.0") expect_null(back)
  expect_round_trip(x, "a quote in a list name")
})

test_that("the calls of a step are written as R code a person can read", {
  call <- sdcRisk:::app_assign("release", sdcRisk:::app_call(quote(sdcRisk::ifpr), .first = list(quote(data)),
    keys = c("sex", "age"), xi = 0.3, partition = list(sex = "keep", age = c(0, 18, Inf))))
  expect_identical(sdcRisk:::app_deparse(call),
    "release <- sdcRisk::ifpr(data, keys = c(\"sex\", \"age\"), xi = 0.3, partition = list(sex = \"keep\", age = c(0, 18, Inf)))")
  hier <- call("unique", call("[", quote(data), sdcRisk:::app_lang(c("nace", "section"))))
  expect_identical(sdcRisk:::app_deparse(hier), "unique(data[c(\"nace\", \"section\")])")
  expect_identical(sdcRisk:::app_deparse(quote(audit <- sdcRisk::audit_table(sens, prot$status != "published"))),
                   "audit <- sdcRisk::audit_table(sens, prot$status != \"published\")")
  # a name that cannot be a tag is kept in structure(), as a string
  x <- sdcRisk:::app_named_call("list", list(1, 2), c("\u00e9", "a`b"))
  expect_identical(sdcRisk:::app_deparse(x), "structure(list(1, 2), names = c(\"\\u{00e9}\", \"a`b\"))")
  expect_identical(sdcRisk:::app_deparse(sdcRisk:::app_lang(list(`a\`b` = 1))), "list(`a\\`b` = 1)")
  # long calls: one argument per line, and still the same call
  long <- sdcRisk:::app_call(quote(f), a = strrep("x", 80), b = strrep("y", 80))
  code <- sdcRisk:::app_deparse(long)
  expect_match(code, "^f\\(\n  a = \"x+\",\n  b = \"y+\"\n\\)$")
  expect_identical(parse(text = code, keep.source = FALSE)[[1]], long)
})

test_that("a script is offered only when it parses back to the calls the app ran, and is never run to check it", {
  sentinel <- local_sentinel()
  step <- sdcRisk:::app_assign("keys", sdcRisk:::app_lang(unname(hostile_names())))
  entries <- list("## Data", quote(data <- sdcRisk::pums_md), step)
  lines <- sdcRisk:::app_script_lines(entries)
  expect_true(sdcRisk:::app_script_check(lines, entries))
  # a script that would run a payload, or differs in one value, is refused
  expect_false(sdcRisk:::app_script_check(c(lines, sentinel_code), entries))
  expect_false(sdcRisk:::app_script_check(sub("sex", "sax", lines), entries))
  expect_false(sdcRisk:::app_script_check(c(lines[-3], paste0("keys <- ", sentinel_code)), entries))
  expect_false(sdcRisk:::app_script_check("data <- (", entries))
  expect_false(file.exists(sentinel))
  # and the sentinel works: the payload, run, creates it
  eval(str2lang(sentinel_code))
  expect_true(file.exists(sentinel))
})

test_that("values the writer cannot write exactly are refused, not approximated", {
  expect_error(sdcRisk:::app_lang(factor("a")), class = "sdcRisk_error_internal")
  expect_error(sdcRisk:::app_lang(matrix(1:4, 2)), class = "sdcRisk_error_internal")
  expect_error(sdcRisk:::app_lang(quote(x)), class = "sdcRisk_error_internal")
  expect_error(sdcRisk:::app_lang(1i), class = "sdcRisk_error_internal")
  bytes <- "\xff\xfe"
  Encoding(bytes) <- "bytes"
  expect_error(sdcRisk:::app_lang(bytes), class = "sdcRisk_error_internal")
  expect_error(sdcRisk:::app_write_name("\u00e9"), class = "sdcRisk_error_internal")
})

test_that("the script writes the publication after the released file exactly when the release has one (issue 33)", {
  release <- list(quote(set.seed(33)), quote(release <- sdcRisk::ifpr(data, keys = "sex", xi = 0.3)))
  publish <- list(quote(sdcRisk::publish_plan(release, "publication.json")))
  s <- list(data_code = list(quote(data <- sdcRisk::pums_md)), release_code = release, publish_code = publish)
  with_pub <- sdcRisk:::app_script(s)
  expect_true(with_pub$ok)
  parsed <- as.list(parse(text = with_pub$lines, keep.source = FALSE))
  # the released file, then its publication, as the Downloads page offers them
  expect_identical(tail(parsed, 2), list(quote(utils::write.csv(release$data, "released.csv", row.names = FALSE)),
                                         publish[[1]]))
  expect_identical(sum(grepl("publish_plan", with_pub$lines, fixed = TRUE)), 1L)
  # a release without a publication: the same script without that line
  without <- sdcRisk:::app_script(s[c("data_code", "release_code")])
  expect_true(without$ok)
  expect_identical(setdiff(with_pub$lines[-1], without$lines[-1]), "sdcRisk::publish_plan(release, \"publication.json\")")
  expect_false(any(grepl("publish_plan", without$lines, fixed = TRUE)))
  # no release, no publication, whatever the fields hold
  expect_false(any(grepl("publish_plan", sdcRisk:::app_script(s[c("data_code", "publish_code")])$lines, fixed = TRUE)))
})
