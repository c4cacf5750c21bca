# Makes the screenshots of vignettes/app.Rmd and README.md: the app in
# Debian's headless Chromium, driven as in tests/testthat/test-app.R.
# Run from the package root:
#   Rscript tools/app-screenshots.R           # the vignette's three JPEGs
#   Rscript tools/app-screenshots.R DIR       # also a full-page PNG of every page
#                                             # (and of a bad-input message) in DIR
# (needs shiny, bslib, callr, processx, jsonlite, httpuv, pkgload, sdcMicro
# for the Certify page, and chromium).
pkgload::load_all(".", quiet = TRUE)
`%||%` <- rlang::`%||%`
source("tests/testthat/helper-browser.R")
pages <- commandArgs(TRUE)[1]
page_shot <- function(b, name) {
  if (is.na(pages)) return(invisible())
  dir.create(pages, showWarnings = FALSE, recursive = TRUE)
  browser_screenshot(b, file.path(pages, paste0(name, ".png")), width = 1000)
}
app <- app_start(allow_rds = TRUE)  # the Certify page reads an sdcMicroObj saved with saveRDS()
b <- browser_start(width = 1000, height = 820)
on.exit({ browser_close(b); app$proc$kill_tree() })
browser_go(b, app$url)

# Data: pums_md and its five keys
browser_keys(b, c("sex", "age", "race", "marital", "puma"))
browser_screenshot(b, "vignettes/app-data.jpg", height = 760, width = 1000)
page_shot(b, "1-data")

# Microdata release at xi = 0.3, age changing only within groups
browser_show_tab(b, "release")
browser_set(b, "xi", 0.3)
browser_set(b, "part_2", "group")
browser_set(b, "part_groups_2", "0, 18, 35, 50, 65, Inf")
browser_click(b, "#release_go")
browser_wait(b, "document.getElementById('cert_words_text') !== null", 180)
browser_idle(b)
browser_screenshot(b, "vignettes/app-release.jpg", height = 820, width = 1000)
page_shot(b, "2-release")

# Certify a PRAM run by sdcMicro, also for intruders who know sex and marital
keys <- c("sex", "race", "marital")
obj <- sdcMicro::createSdcObj(pums_md[1:3000, c(keys, "age")], keyVars = keys)
set.seed(4)
obj <- suppressWarnings(sdcMicro::pram(obj, variables = c("race", "marital")))
f_obj <- file.path(tempdir(), "pram-obj.rds")
saveRDS(obj, f_obj)
browser_show_tab(b, "certify")
browser_set(b, "cert_source", "sdcmicro")
browser_upload(b, "#cert_obj", f_obj)
browser_wait(b, "document.querySelector('#cert_obj_progress .progress-bar') !== null && document.querySelector('#cert_obj_progress .progress-bar').innerText.indexOf('complete') >= 0", 60)
browser_set(b, "cert_known_mode", "some")
browser_set(b, "cert_known", c("sex", "marital"))
browser_click(b, "#cert_go")
browser_wait(b, "document.getElementById('pram_words_text') !== null", 180)
browser_idle(b)
page_shot(b, "3-certify")

# Downloads of the release and the certificate (a new data set would clear the release)
browser_show_tab(b, "downloads")
browser_idle(b)
page_shot(b, "5-downloads")

# Tables: firms' sales by industry (with its sections) and area
set.seed(3)
firms <- data.frame(firm = 1:90, nace = sample(c("A1", "A2", "A3", "B1", "B2"), 90, TRUE),
                    area = sample(c("x", "y", "z"), 90, TRUE), sales = round(rlnorm(90, 5, 1.5)))
firms$section <- paste("section", substr(firms$nace, 1, 1))
f <- file.path(tempdir(), "firms.csv")
utils::write.csv(firms, f, row.names = FALSE)
browser_show_tab(b, "data")
browser_set(b, "data_source", "upload")
browser_upload(b, "#data_file", f)
browser_wait(b, "document.getElementById('data_info').innerText.indexOf('firms.csv') >= 0")
browser_show_tab(b, "tables")
browser_set(b, "tab_by", c("nace", "area"))
browser_wait(b, "document.getElementById('tab_hier_1') !== null")
browser_set(b, "tab_hier_1", "section")
browser_set(b, "tab_value", "sales")
browser_set(b, "tab_contributor", "firm")
browser_set(b, "tab_p", 15)
browser_click(b, "#tab_sens_go")
browser_wait(b, "document.getElementById('tab_words_text') !== null", 120)
browser_click(b, "#tab_protect_go")
browser_wait(b, "document.getElementById('tab_words_text').innerText.indexOf('Protected') >= 0", 180)
browser_idle(b)
browser_screenshot(b, "vignettes/app-tables.jpg", height = 700, width = 1000)
page_shot(b, "4-tables")
if (!is.na(pages)) {
  browser_show_tab(b, "downloads")
  browser_idle(b)
  page_shot(b, "5b-downloads-table")
}

# Bad input: an upload that is not a table
if (!is.na(pages)) {
  png <- file.path(tempdir(), "picture.png")
  writeBin(as.raw(c(137, 80, 78, 71, 13, 10, 26, 10, 0, 0)), png)
  browser_show_tab(b, "data")
  browser_upload(b, "#data_file", png)
  browser_wait(b, "document.getElementById('data_alert') !== null && document.getElementById('data_alert').innerText.indexOf('picture.png') >= 0")
  browser_idle(b)
  page_shot(b, "6-bad-input")
}
cat("written:", list.files("vignettes", "^app-.*jpg$"), if (!is.na(pages)) list.files(pages, "png$"), "\n")
