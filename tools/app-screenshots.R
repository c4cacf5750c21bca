# Makes the screenshots of vignettes/app.Rmd and README.md: the app in
# Debian's headless Chromium, driven as in tests/testthat/test-app.R.
# Run from the package root:  Rscript tools/app-screenshots.R
# (needs shiny, bslib, callr, processx, jsonlite, httpuv, pkgload, chromium).
pkgload::load_all(".", quiet = TRUE)
`%||%` <- rlang::`%||%`
source("tests/testthat/helper-browser.R")
app <- app_start()
b <- browser_start(width = 1000, height = 820)
on.exit({ browser_close(b); app$proc$kill_tree() })
browser_go(b, app$url)
browser_keys(b, c("sex", "age", "race", "marital", "puma"))
browser_screenshot(b, "vignettes/app-data.jpg", height = 760, width = 1000)

browser_show_tab(b, "release")
browser_set(b, "xi", 0.3)
browser_click(b, "#release_go")
browser_wait(b, "document.getElementById('cert_words_text') !== null", 180)
browser_idle(b)
browser_screenshot(b, "vignettes/app-release.jpg", height = 820, width = 1000)

set.seed(3)
firms <- data.frame(firm = 1:120, sector = sample(c("a", "b", "c", "d"), 120, TRUE),
                    area = sample(c("x", "y", "z"), 120, TRUE), sales = round(rlnorm(120, 5, 1.5)))
f <- file.path(tempdir(), "firms.csv")
utils::write.csv(firms, f, row.names = FALSE)
browser_show_tab(b, "data")
browser_set(b, "data_source", "upload")
browser_upload(b, "#data_file", f)
browser_wait(b, "document.getElementById('data_info').innerText.indexOf('firms.csv') >= 0")
browser_show_tab(b, "tables")
browser_set(b, "tab_by", c("sector", "area"))
browser_set(b, "tab_value", "sales")
browser_set(b, "tab_contributor", "firm")
browser_set(b, "tab_p", 15)
browser_click(b, "#tab_sens_go")
browser_wait(b, "document.getElementById('tab_words_text') !== null", 120)
browser_click(b, "#tab_protect_go")
browser_wait(b, "document.getElementById('tab_words_text').innerText.indexOf('Protected') >= 0", 180)
browser_idle(b)
browser_screenshot(b, "vignettes/app-tables.jpg", height = 700, width = 1000)
cat("written:", list.files("vignettes", "^app-.*jpg$"), "\n")
