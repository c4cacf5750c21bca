skip_if_no_pandoc <- function() {
  skip_if_not_installed("rmarkdown")
  skip_if_not_installed("knitr")
  ok <- rmarkdown::pandoc_available("1.12.3")
  if (!ok && strict_mode()) testthat::fail("pandoc is not installed (SDCRISK_STRICT=true: required in CI)")
  testthat::skip_if_not(ok, "pandoc is not installed")
}

report_html <- function(x, ...) {
  f <- withr::local_tempfile(fileext = ".html", .local_envir = parent.frame())
  out <- release_report(x, f, ...)
  expect_equal(normalizePath(out), normalizePath(f))
  paste(readLines(f, warn = FALSE), collapse = "\n")
}

# Self-contained: every image is embedded, nothing is fetched from elsewhere.
expect_self_contained <- function(html) {
  imgs <- regmatches(html, gregexpr("<img[^>]*src=\"[^\"]*", html))[[1]]
  expect_gt(length(imgs), 0)
  expect_true(all(grepl("src=\"data:image/", imgs)))
  expect_false(grepl("<script[^>]*src=\"http", html))
  expect_false(grepl("<link[^>]*href=\"http", html))
}

# The code block of "How to reproduce" (or of another class), as R code.
report_code_block <- function(html, class = "r") {
  blocks <- regmatches(html, gregexpr(sprintf("<pre class=\"%s\"><code>(.|\n)*?</code></pre>", class), html, perl = TRUE))[[1]]
  code <- gsub("<[^>]+>", "", blocks)
  gsub("&quot;", "\"", gsub("&lt;", "<", gsub("&gt;", ">", gsub("&amp;", "&", code, fixed = TRUE), fixed = TRUE), fixed = TRUE), fixed = TRUE)
}

# Contributions of 80 firms to the sales by sector and area.
report_firms <- function() {
  set.seed(3)
  data.frame(firm = 1:80, sector = sample(c("a", "b", "c", "d"), 80, TRUE),
             area = sample(c("x", "y", "z"), 80, TRUE), sales = round(rlnorm(80, 5, 1.5)))
}
report_firms_sensitivity <- function(firms) {
  cell_sensitivity(firms, c("sector", "area"), "sales", rules = list(rule_frequency(3), rule_p(15)), contributor = "firm")
}

test_that("release_report() documents an ifpr() release with its exact certificate", {
  skip_if_no_pandoc()
  set.seed(11)
  keys <- c("sex", "age", "race", "marital")
  rel <- ifpr(pums_md[1:4000, ], keys, xi = 0.25,
              partition = list(sex = "keep", age = c(0, 18, 45, 65, Inf)), on_infeasible = "merge")
  html <- report_html(rel, seed = 11)
  expect_self_contained(html)
  cert <- rel$certificate
  expect_match(html, sprintf("R = %s</strong> &lt;= xi = 0.25", format(signif(cert$risk, 10))), fixed = TRUE)
  expect_match(html, sprintf("attained at cell %s", cert$cell), fixed = TRUE)
  expect_match(html, format(cert$records_changed, big.mark = ","), fixed = TRUE)
  expect_match(html, "Seed: <strong>11</strong>", fixed = TRUE)
  expect_match(html, paste0("sdcRisk ", utils::packageVersion("sdcRisk")), fixed = TRUE)
  expect_match(html, "within groups with breaks 0, 18, 45, 65, Inf", fixed = TRUE)
  expect_match(html, "ifpr(data,", fixed = TRUE)
  # the design's blocks add up to the certificate's
  expect_match(html, sprintf("%s IFPR blocks", format(cert$blocks, big.mark = ",")), fixed = TRUE)
})

test_that("the code in an ifpr() report reproduces the release", {
  skip_if_no_pandoc()
  set.seed(5)
  d <- pums_md[1:3000, ]
  rel <- ifpr(d, c("sex", "age", "race"), xi = 0.3, partition = list(sex = "keep"))
  html <- report_html(rel, seed = 5)
  blocks <- regmatches(html, gregexpr("<pre class=\"r\"><code>(.|\n)*?</code></pre>", html, perl = TRUE))[[1]]
  expect_length(blocks, 1)
  code <- gsub("<[^>]+>", "", blocks)
  code <- gsub("&quot;", "\"", gsub("&lt;", "<", gsub("&gt;", ">", gsub("&amp;", "&", code, fixed = TRUE), fixed = TRUE), fixed = TRUE), fixed = TRUE)
  code <- sub("set.seed(SEED)", "set.seed(5)", code, fixed = TRUE)
  # xi as given, not digits17's 0.29999999999999999
  expect_match(code, "xi = 0.3,", fixed = TRUE)
  env <- new.env()
  env$data <- d
  eval(parse(text = code), env)
  expect_identical(env$release$data, rel$data)
  expect_identical(env$release$certificate$risk, rel$certificate$risk)
})

test_that("a report of a release certified for a sample says so, and its code remakes the release", {
  skip_if_no_pandoc()
  keys <- c("sex", "age", "race")
  set.seed(6)
  d <- pums_md[sample(nrow(pums_md), 3000), ]
  counts <- cell_frequencies(pums_md, keys)$cells
  set.seed(7)
  rel <- ifpr(d, keys, xi = 0.2, population = counts, target_in_file = "unknown")
  html <- report_html(rel, seed = 7, known = list("age"))
  cert <- rel$certificate
  expect_match(html, "does not know whether his target is in it", fixed = TRUE)
  expect_match(html, "population counts known, 59,033 units", fixed = TRUE)
  expect_match(html, sprintf("The exact maximum risk of a target who may not be in the file is <strong>R = %s</strong>",
                             format(signif(cert$risk, 10))), fixed = TRUE)
  expect_match(html, "who may not be in the file (population counts known, 59,033 units) (<code>max_match_risk_known()</code>)",
               fixed = TRUE)
  blocks <- regmatches(html, gregexpr("<pre class=\"r\"><code>(.|\n)*?</code></pre>", html, perl = TRUE))[[1]]
  code <- gsub("<[^>]+>", "", blocks)
  code <- gsub("&quot;", "\"", gsub("&lt;", "<", gsub("&gt;", ">", gsub("&amp;", "&", code, fixed = TRUE), fixed = TRUE), fixed = TRUE), fixed = TRUE)
  code <- sub("set.seed(SEED)", "set.seed(7)", code, fixed = TRUE)
  env <- new.env()
  env$data <- d
  env$POPULATION_COUNTS <- counts
  eval(parse(text = code), env)
  expect_identical(env$release$data, rel$data)
  expect_identical(env$release$certificate$risk, cert$risk)
  # an estimate says it is one
  set.seed(7)
  est <- pram_release(d, keys, vars = "race", pd = 0.8,
                      population = population_model("negbin", fraction = 0.05), target_in_file = "unknown")
  html <- report_html(est, seed = 7)
  expect_match(html, "Every risk below is therefore an <strong>estimate</strong>", fixed = TRUE)
  expect_match(html, "The estimated maximum risk of a target who may not be in the file", fixed = TRUE)
  expect_match(html, "population = population_model(&quot;negbin&quot;, fraction = 0.05", fixed = TRUE)
})

test_that("release_report() documents a pram_release() with its matrices and partial-key intruders", {
  skip_if_no_pandoc()
  set.seed(2)
  keys <- c("sex", "race", "marital")
  pr <- pram_release(pums_md[1:3000, ], keys, vars = c("race", "marital"), strata = "sex", pd = 0.8)
  html <- report_html(pr, seed = 2, known = list(c("race", "marital"), "sex"))
  expect_self_contained(html)
  expect_match(html, sprintf("R = %s</strong>, attained at cell %s", format(signif(pr$certificate$risk, 10)), pr$certificate$cell), fixed = TRUE)
  kn <- max_match_risk_known(pr$plan, subsets = list(c("race", "marital"), "sex"))
  expect_match(html, format(signif(kn$risk[1], 6), scientific = FALSE, drop0trailing = TRUE, trim = TRUE), fixed = TRUE)
  expect_match(html, "Transition matrix of <code>race</code> in stratum", fixed = TRUE)
  expect_match(html, "pram_release(data", fixed = TRUE)
})

test_that("release_report() documents a certified sdcMicroObj", {
  skip_if_no_pandoc()
  skip_if_not_installed("sdcMicro")
  keys <- c("sex", "race", "marital")
  obj <- sdcMicro::createSdcObj(pums_md[1:2000, c(keys, "age")], keyVars = keys)
  set.seed(1)
  obj <- suppressWarnings(sdcMicro::pram(obj, variables = c("race", "marital")))
  expect_error(release_report(obj, tempfile()), class = "sdcRisk_error_argument")
  obj <- pram_certify(obj)
  html <- report_html(obj, known = list("race", c("sex", "race")))
  expect_self_contained(html)
  expect_match(html, sprintf("R = %s</strong>", format(signif(obj@risk$pram$risk, 10))), fixed = TRUE)
  r_race <- max_match_risk(obj, known = "race")$risk
  expect_match(html, format(signif(r_race, 6), scientific = FALSE, drop0trailing = TRUE, trim = TRUE), fixed = TRUE)
  expect_match(html, "Transition matrix of <code>marital</code>", fixed = TRUE)
  expect_match(html, sprintf("in expectation %s of 2,000 records change cell", sdcRisk:::report_num(round(pram_damage(obj)$records, 1))),
               fixed = TRUE)
})

test_that("the report of an sdcMicroObj with households says what the certificate covers (issue 37)", {
  skip_if_no_pandoc()
  td <- sdcmicro_testdata()
  for (v in c("water", "sex", "hhcivil")) td[[v]] <- factor(td[[v]])
  obj <- sdcMicro::createSdcObj(td, keyVars = c("water", "sex", "hhcivil"), hhId = "ori_hid")
  set.seed(2)
  obj <- pram_certify(suppressWarnings(sdcMicro::pram(obj, variables = c("water", "sex"))), households = "ignore")
  html <- gsub("\\s+", " ", report_html(obj, seed = 2))
  expect_match(html, "Households (ori_hid, 1,000): ignored", fixed = TRUE)
  expect_match(html, "composition is not covered", fixed = TRUE)
  # the reproduction code certifies as it was certified
  expect_match(html, "households = &quot;ignore&quot;", fixed = TRUE)
})

test_that("release_report() documents a protected table and its audit", {
  skip_if_no_pandoc()
  firms <- report_firms()
  sens <- report_firms_sensitivity(firms)
  prot <- protect_table(sens)
  html <- report_html(prot, sensitivity = sens)
  expect_self_contained(html)
  expect_match(html, "<strong>every sensitive cell is protected</strong>", fixed = TRUE)
  expect_match(html, "Re-run of <code>audit_table()</code> on the pattern: passed", fixed = TRUE)
  n <- table(prot$status)
  expect_match(html, sprintf("%s suppressed as sensitive (primary) and %s suppressed", n[["primary"]], n[["secondary"]]), fixed = TRUE)
  expect_error(release_report(prot, tempfile(), sensitivity = sens[1:3, ]), class = "sdcRisk_error_argument")
})

test_that("release_report() refuses what it cannot document, and bad arguments", {
  expect_error(release_report(data.frame(a = 1), tempfile()), class = "sdcRisk_error_argument")
  set.seed(1)
  rel <- ifpr(pums_md[1:500, ], c("sex", "race"), xi = 0.5)
  expect_error(release_report(rel, c("a", "b")), class = "sdcRisk_error_argument")
  expect_error(release_report(rel, tempfile(), seed = "x"), class = "sdcRisk_error_argument")
  expect_error(release_report(rel, tempfile(), code = 1), class = "sdcRisk_error_argument")
  expect_error(release_report(rel, tempfile(), extra = 1))
})

test_that("the report's empirical risk is one realization, never a test the certificate failed (issue 37)", {
  skip_if_no_pandoc()
  set.seed(37)
  d <- pums_md[1:3000, ]
  d$race[1:5] <- NA
  rel <- ifpr(d, c("sex", "age", "race"), xi = 0.3, partition = list(sex = "keep"))
  html <- report_html(rel, seed = 37)
  has <- function(pattern, fixed = TRUE) grepl(pattern, html, fixed = fixed)
  # item 7: the certificate says whom it leaves out
  expect_true(has("<strong>5 records with a missing key are outside it</strong>"))
  expect_false(has("below the certificate up to their standard errors"))
  expect_true(has("in <strong>this one release</strong>: one realization"))
  expect_true(has("an exact probability over the perturbation"))
  expect_true(has("cluster-robust"))
  expect_true(has("not estimated from the draw"))
  expect_true(has("<th[^>]*>\\s*clusters\\s*</th>", fixed = FALSE))
})

test_that("report_deparse() writes arguments with the app's deparser: shortest numbers that read back", {
  rd <- sdcRisk:::report_deparse
  expect_identical(rd(0.3), "0.3")
  expect_identical(rd(0.1965), "0.1965")
  expect_identical(rd(c(0.1, 1 / 3)), "c(0.1, 0.3333333333333333)")
  expect_identical(rd(list(sex = "keep", age = c(0, 18, 65, Inf))), 'list(sex = "keep", age = c(0, 18, 65, Inf))')
  expect_identical(rd(NULL), "NULL")
  # every value reads back as itself, a long one broken over lines
  # under the argument's indent, a matrix with its dimnames by deparse()
  m <- matrix(c(0.9, 0.1, 0.2, 0.8), 2, dimnames = list(c("a", "b"), c("a", "b")))
  vals <- list(0.1965, 3L, -2.5, NA_character_, "say \"no\"\\", c(a = 1, b = 2), list(c("sex", "age"), "race"),
               list(sex = "keep", age = seq(0, 100, 1)), m, list(`a b` = 1), TRUE)
  for (i in seq_along(vals)) {
    out <- rd(vals[[i]])
    expect_identical(eval(parse(text = out)), vals[[i]], info = out)
  }
  long <- rd(list(sex = "keep", age = seq(0, 100, 1)))
  lines <- strsplit(long, "\n")[[1]]
  expect_gt(length(lines), 1)
  expect_true(all(startsWith(lines[-1], "  ")))
})

# ---- the publication for data users (issue 33, item 5) -------------------------

# The code blocks of the publication section, as R code.
publication_code <- function(html) report_code_block(html, "r publication")

test_that("the report of an IFPR release says what is published, and its code writes the publication a data user reads", {
  skip_if_no_pandoc()
  skip_if_not_installed("jsonlite")
  set.seed(33)
  rel <- ifpr(pums_md[1:3000, ], c("sex", "age", "race"), xi = 0.3, partition = list(sex = "keep"))
  pub <- publish_plan(rel)
  dir <- withr::local_tempdir()
  out <- release_report(rel, file.path(dir, "review.html"), seed = 33)
  # no file but the report: a write touches only what the user named
  expect_identical(list.files(dir, all.files = TRUE, no.. = TRUE), "review.html")
  html <- paste(readLines(out, warn = FALSE), collapse = "\n")
  has <- function(x) grepl(x, html, fixed = TRUE)
  expect_true(has("<h2>Publication for data users</h2>"))
  expect_true(has(sprintf("a block plan: %s blocks over %s cells (%s records), %s of them IFPR blocks",
                          length(pub$plan$theta), sum(pub$plan$size), format(sum(pub$plan$cells$count), big.mark = ","),
                          sum(!is.na(pub$plan$theta)))))
  expect_true(has(sprintf("%s of them hold exactly one record", sum(pub$plan$cells$count == 1))))
  expect_true(has("This report wrote no publication"))
  expect_true(has("<caption>The keys as published"))
  expect_true(has(paste(pub$keys[[3]]$categories[1:3], collapse = ", ")))
  # the release's own code is still the one block of class r
  expect_length(regmatches(html, gregexpr("<pre class=\"r\"><code>", html))[[1]], 1)
  code <- publication_code(html)
  expect_length(code, 2)
  expect_match(code[1], "publish_plan(release, \"publication.json\")", fixed = TRUE)
  # run as the agency and as a data user would, in the folder of the files
  utils::write.csv(rel$data, file.path(dir, "released.csv"), row.names = FALSE)
  env <- new.env()
  env$release <- rel
  withr::with_dir(dir, {
    eval(parse(text = code[1]), env)
    expect_identical(read_plan("publication.json"), pub)
    est <- eval(parse(text = code[2]), env)
  })
  # the same estimates from the CSV file as from the release (keys read back as text)
  ref <- estimate_table(rel$data, pub, by = c("sex", "age"))
  expect_identical(as.character(est$sex), as.character(ref$sex))
  expect_equal(est[c("estimate", "se")], ref[c("estimate", "se")], ignore_attr = TRUE, tolerance = 1e-12)
})

test_that("a publication named in the call is written once the report is, and reads back as publish_plan() of the release", {
  skip_if_no_pandoc()
  skip_if_not_installed("jsonlite")
  set.seed(34)
  pr <- pram_release(pums_md[1:2000, ], c("sex", "race", "marital"), vars = c("race", "marital"), strata = "sex")
  dir <- withr::local_tempdir()
  f <- file.path(dir, "plan-2026.json")
  out <- release_report(pr, file.path(dir, "review.html"), seed = 34, publication = f)
  expect_setequal(list.files(dir), c("review.html", "plan-2026.json"))
  expect_identical(read_plan(f), publish_plan(pr))
  html <- paste(readLines(out, warn = FALSE), collapse = "\n")
  has <- function(x) grepl(x, html, fixed = TRUE)
  expect_true(has("<h2>Publication for data users</h2>"))
  expect_true(has("a per-variable plan: <code>race</code> and <code>marital</code> perturbed within 2 strata of <code>sex</code>"))
  expect_true(has("It publishes no cell count"))
  expect_true(has(sprintf("<strong><code>plan-2026.json</code></strong> (MD5 <code>%s</code>)", unname(tools::md5sum(f)))))
  # the agency's code is not shown for a file written; the user's reads it
  code <- publication_code(html)
  expect_length(code, 1)
  expect_match(code, "publication <- read_plan(\"plan-2026.json\")", fixed = TRUE)
  expect_match(code, "by = c(\"race\", \"sex\")", fixed = TRUE)
  # the same for a certified sdcMicroObj, as RDS
  skip_if_not_installed("sdcMicro")
  obj <- sdcMicro::createSdcObj(pums_md[1:2000, c("sex", "race", "marital", "age")], keyVars = c("sex", "race", "marital"))
  set.seed(1)
  obj <- pram_certify(suppressWarnings(sdcMicro::pram(obj, variables = c("race", "marital"))))
  g <- file.path(dir, "obj.rds")
  release_report(obj, file.path(dir, "obj.html"), publication = g)
  expect_identical(read_plan(g), publish_plan(obj))
})

test_that("a bad publication argument writes nothing; a release publish_plan() refuses is reported, saying so", {
  skip_if_no_pandoc()
  set.seed(35)
  rel <- ifpr(pums_md[1:500, ], c("sex", "race"), xi = 0.5)
  dir <- withr::local_tempdir()
  report <- file.path(dir, "review.html")
  for (bad in list("plan.csv", c("a.json", "b.json"), NA_character_, 1, report)) {
    expect_error(release_report(rel, report, publication = bad), class = "sdcRisk_error_argument")
  }
  expect_length(list.files(dir), 0)
  # publish_plan() made to refuse the release (as for a release it cannot read)
  quietly <- function(x) invisible(utils::capture.output(suppressMessages(x)))
  quietly(trace("publish_plan", where = asNamespace("sdcRisk"), print = FALSE,
                tracer = quote(sdcRisk:::abort_sdc("A refusal for the test.", "publication"))))
  withr::defer(quietly(untrace("publish_plan", where = asNamespace("sdcRisk"))))
  out <- release_report(rel, report)
  html <- paste(readLines(out, warn = FALSE), collapse = "\n")
  expect_match(html, "<strong>No publication can be made of this release</strong>", fixed = TRUE)
  expect_match(html, "A refusal for the test.", fixed = TRUE)
  expect_match(html, "<h2>How to reproduce</h2>", fixed = TRUE)
  # asked for, the publication is not skipped: the error, and no new file
  unlink(report)
  expect_error(release_report(rel, report, publication = file.path(dir, "p.json")), class = "sdcRisk_error_publication")
  expect_length(list.files(dir), 0)
})

test_that("the report plots every key's distribution, says where a long one's table is, and prints the seed given (issue 37)", {
  skip_if_no_pandoc()
  set.seed(12)
  keys <- c("sex", "age", "race")
  rel <- ifpr(pums_md[1:4000, ], keys, xi = 0.3, partition = list(sex = "keep"))
  expect_message(html <- report_html(rel, seed = 12), "Drawing the plots", class = "cliMessage")
  expect_self_contained(html)
  # plot(u) drew only the first variable, sex, which cannot change
  for (v in keys) {
    expect_match(html, sprintf("<figcaption>Original against released relative frequencies of <code>%s</code>.</figcaption>", v), fixed = TRUE)
  }
  # race's long labels made "figure margins too large"
  expect_no_match(html, "Plot not drawn", fixed = TRUE)
  # age's table (more than 30 categories) is not dropped without a word
  n_age <- length(unique(pums_md$age[1:4000]))
  expect_match(html, sprintf("<code>age</code> has %s categories: its distribution is shown as the plot above", n_age), fixed = TRUE)
  expect_match(html, "Distribution of <code>race</code>.", fixed = TRUE)
  # the seed given is in the code, not a placeholder
  expect_match(html, "set.seed(12)  # the seed given to release_report()", fixed = TRUE)
  expect_no_match(html, "set.seed(SEED)", fixed = TRUE)
  # the age variance table in the key's order, not as text (0, 1, 10, ...)
  age_table <- regmatches(html, regexpr("counts of <code>age</code>.*?</table>", html))
  rows <- regmatches(age_table, gregexpr("<tr>\\s*<td[^>]*>[^<]*", age_table, perl = TRUE))[[1]]
  shown <- trimws(sub(".*>", "", rows))
  expect_identical(shown, as.character(sort(unique(pums_md$age[1:4000]))))
  # quiet when asked
  expect_silent(suppressMessages(release_report(rel, withr::local_tempfile(fileext = ".html"), seed = 12)))
})

test_that("the code of a table report has every rule with its parameters, and remakes the protection (issue 37)", {
  skip_if_no_pandoc()
  firms <- report_firms()
  sens <- report_firms_sensitivity(firms)
  prot <- protect_table(sens)
  for (s in list(sens, NULL)) {
    html <- report_html(prot, sensitivity = s)
    code <- report_code_block(html)
    expect_match(code, "rules = list(rule_frequency(n = 3, convention = \"below\"), rule_p(p = 15))", fixed = TRUE)
  }
  # with the sensitivity table at hand, its options too: the code runs as written
  html <- report_html(prot, sensitivity = sens)
  code <- report_code_block(html)
  expect_match(code, "contributor = \"firm\"", fixed = TRUE)
  env <- new.env()
  env$data <- firms
  eval(parse(text = code), env)
  expect_identical(env$prot$status, prot$status)
  expect_identical(env$prot$total, prot$total)
})

test_that("the report states the design's damage beside the certificate, and for the least-damage design the lower bound and the gap (issue 35)", {
  skip_if_no_pandoc()
  d <- pums_md[1:3000, ]
  keys <- c("sex", "age", "race", "marital")
  set.seed(35)
  rel <- ifpr(d, keys, xi = 0.2, method = "optimal", damage = "distance", ordered = "age", weights = c(marital = 0.5))
  html <- report_html(rel, seed = 35)
  dmg <- pram_damage(rel, weights = c(marital = 0.5), ordered = "age")
  lower <- rel$certificate$design$lower
  # the numbers are pram_damage()'s and the certificate's bound, written as the report writes numbers
  num <- function(x) format(round(x, 1), big.mark = ",", scientific = FALSE)
  expect_match(html, sprintf("in expectation %s of 3,000 records change cell", num(dmg$records)), fixed = TRUE)
  expect_match(html, sprintf("and %s key values change", num(dmg$keys)), fixed = TRUE)
  expect_match(html, "The design was chosen to make the distance on the ordered keys least.", fixed = TRUE)
  expect_match(html, sprintf("changes at least <strong>%s records</strong>", num(lower[["records"]])), fixed = TRUE)
  expect_match(html, sprintf("This design changes %s times as many records (%s above the bound)",
                             format(round(dmg$records / lower[["records"]], 3), nsmall = 3),
                             num(dmg$records - lower[["records"]])), fixed = TRUE)
  # the table: every measure, the one minimised, the bound and the ratio
  tab <- sdcRisk:::report_damage_table(dmg, rel$certificate$design)
  expect_identical(tab$expected, round(c(dmg$records, dmg$keys, dmg$distance, dmg$variance), 1))
  expect_identical(tab$minimised, c("", "", "yes", ""))
  expect_identical(tab$lower_bound, round(c(lower[["records"]], lower[["keys"]], NA, NA), 1))
  expect_match(html, "distance (ordered: age)", fixed = TRUE)
  expect_match(html, "with the lower bound of any unbiased PRAM that meets xi (Goal 3)", fixed = TRUE)
  expect_match(html, "Exact calibration does not apply", fixed = TRUE)
  # the bound is a bound: a design that met xi with fewer changes would contradict it
  expect_gte(dmg$records, lower[["records"]])
  # the code remakes the release with its damage, weights and ordered keys
  code <- report_code_block(html)
  expect_match(code, "damage = \"distance\"", fixed = TRUE)
  expect_match(code, "weights = c(marital = 0.5)", fixed = TRUE)
  expect_match(code, "ordered = \"age\"", fixed = TRUE)
  env <- new.env()
  env$data <- d
  eval(parse(text = code), env)
  expect_identical(env$release$data, rel$data)
  expect_identical(env$release$certificate$design, rel$certificate$design)

  # Goal 2: the damage, no bound, saying why
  set.seed(35)
  rel2 <- ifpr(d, keys, xi = 0.3, goal = "unique_matches", method = "optimal")
  html2 <- report_html(rel2, seed = 35)
  expect_match(html2, "No lower bound is stated under Goal 2", fixed = TRUE)
  expect_no_match(html2, "changes at least <strong>", fixed = TRUE)
  expect_match(html2, "The design was chosen to make the key values changed least.", fixed = TRUE)
  expect_null(sdcRisk:::report_damage_table(pram_damage(rel2), rel2$certificate$design)$lower_bound)
  # the tiered design: its damage, no design, no bound; its code has no damage
  set.seed(35)
  rel3 <- ifpr(d, keys, xi = 0.2)
  html3 <- report_html(rel3, seed = 35)
  expect_match(html3, sprintf("in expectation %s of 3,000 records change cell", num(pram_damage(rel3)$records)), fixed = TRUE)
  expect_no_match(html3, "The design was chosen", fixed = TRUE)
  expect_no_match(html3, "No lower bound", fixed = TRUE)
  expect_no_match(report_code_block(html3), "damage =", fixed = TRUE)
})

test_that("a per-variable PRAM's report states its damage too (issue 35)", {
  skip_if_no_pandoc()
  set.seed(8)
  rel <- pram_release(pums_md[1:3000, ], c("sex", "age", "race"), vars = "race", pd = 0.8)
  html <- report_html(rel, seed = 8)
  dmg <- pram_damage(rel)
  expect_match(html, sprintf("in expectation %s of 3,000 records change cell",
                             format(round(dmg$records, 1), big.mark = ",", scientific = FALSE)), fixed = TRUE)
  expect_match(html, "Expected damage of the design (<code>pram_damage()</code>).", fixed = TRUE)
})
