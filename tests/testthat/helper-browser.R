# A small driver of a real browser for the app's tests: Debian's Chromium,
# headless, spoken to over the Chrome DevTools Protocol through a pipe
# (--remote-debugging-pipe: JSON messages separated by NUL on fds 3 and 4,
# turned into lines by `tr` so that processx can read them). It needs only
# processx and jsonlite, which Debian ships; shinytest2/chromote from CRAN
# would replace rlang, testthat, cli and some 15 other packages with newer
# versions than Debian's.
#
# Also used by tools/app-screenshots.R (the vignette's pictures).

browser_binary <- function() {
  cands <- c(Sys.getenv("CHROMOTE_CHROME", ""), Sys.which(c("chromium", "chromium-browser", "google-chrome")))
  cands <- cands[nzchar(cands) & file.exists(cands)]
  if (length(cands)) unname(cands[1]) else ""
}

skip_if_no_browser <- function() {
  ok <- nzchar(browser_binary())
  if (!ok && identical(Sys.getenv("SDCRISK_STRICT"), "true")) {
    testthat::fail("Chromium is not installed (Debian package chromium; SDCRISK_STRICT=true: required in CI)")
  }
  testthat::skip_if_not(ok, "Chromium is not installed")
  invisible(TRUE)
}

# Processes whose command line names `marker` (a unique profile directory):
# what would be left behind if the browser were not cleaned up.
browser_processes <- function(marker) {
  pids <- list.files("/proc", pattern = "^[0-9]+$")
  hit <- vapply(pids, function(p) {
    cmd <- tryCatch(suppressWarnings(readBin(file.path("/proc", p, "cmdline"), "raw", 65536L)), error = function(e) raw())
    length(cmd) > 0L && grepl(marker, rawToChar(cmd[cmd != as.raw(0)]), fixed = TRUE)
  }, logical(1))
  as.integer(pids[hit])
}

browser_start <- function(width = 1280, height = 900) {
  profile <- tempfile("sdcRisk-chromium-")
  dir.create(profile)
  args <- c("--headless=new", "--no-sandbox", "--remote-debugging-pipe", "--disable-gpu",
            "--no-first-run", "--no-default-browser-check", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--disable-extensions",
            "--disable-dev-shm-usage", "--mute-audio", paste0("--user-data-dir=", profile),
            sprintf("--window-size=%d,%d", width, height), "about:blank")
  cmd <- paste("exec", shQuote(browser_binary()), paste(shQuote(args), collapse = " "),
               "3< <(exec stdbuf -o0 tr '\\n' '\\0') 4> >(exec stdbuf -o0 tr '\\0' '\\n')")
  proc <- processx::process$new("bash", c("-c", cmd), stdin = "|", stdout = "|",
                                stderr = file.path(profile, "stderr.log"), cleanup_tree = TRUE)
  b <- new.env()
  b$proc <- proc
  b$profile <- profile
  b$id <- 0L
  b$session <- NULL
  b$events <- list()
  target <- browser_send(b, "Target.createTarget", list(url = "about:blank"), browser = TRUE)
  att <- browser_send(b, "Target.attachToTarget", list(targetId = target$targetId, flatten = TRUE), browser = TRUE)
  b$session <- att$sessionId
  browser_send(b, "Page.enable")
  browser_send(b, "Runtime.enable")
  browser_send(b, "Emulation.setDeviceMetricsOverride",
               list(width = width, height = height, deviceScaleFactor = 1, mobile = FALSE))
  b
}

browser_send <- function(b, method, params = NULL, browser = FALSE, timeout = 60) {
  b$id <- b$id + 1L
  msg <- list(id = b$id, method = method, params = params %||% structure(list(), names = character(0)))
  if (!browser && !is.null(b$session)) msg$sessionId <- b$session
  b$proc$write_input(paste0(jsonlite::toJSON(msg, auto_unbox = TRUE, null = "null"), "\n"))
  deadline <- Sys.time() + timeout
  repeat {
    left <- as.numeric(difftime(deadline, Sys.time(), units = "secs"))
    if (left <= 0) stop("no answer from the browser to ", method)
    if (!b$proc$is_alive()) stop("the browser stopped: ", paste(utils::tail(readLines(file.path(b$profile, "stderr.log")), 5), collapse = "\n"))
    b$proc$poll_io(as.integer(min(left, 1) * 1000))
    for (line in b$proc$read_output_lines()) {
      m <- jsonlite::fromJSON(line, simplifyVector = FALSE)
      if (identical(m$id, b$id)) {
        if (!is.null(m$error)) stop(method, ": ", m$error$message)
        return(m$result)
      }
      if (is.null(m$id)) b$events[[length(b$events) + 1L]] <- m
    }
  }
}

browser_close <- function(b) {
  try(browser_send(b, "Browser.close", browser = TRUE, timeout = 5), silent = TRUE)
  deadline <- Sys.time() + 5
  while (b$proc$is_alive() && Sys.time() < deadline) Sys.sleep(0.1)
  b$proc$kill_tree()
  deadline <- Sys.time() + 5
  while (length(browser_processes(b$profile)) && Sys.time() < deadline) Sys.sleep(0.2)
  left <- browser_processes(b$profile)
  unlink(b$profile, recursive = TRUE)
  left
}

browser_go <- function(b, url) {
  browser_send(b, "Page.navigate", list(url = url))
  browser_wait(b, "document.readyState === 'complete' && window.Shiny !== undefined && Shiny.shinyapp !== undefined && Shiny.shinyapp.isConnected()", timeout = 60)
}

# Evaluates JavaScript in the page and returns its value.
browser_js <- function(b, expr) {
  r <- browser_send(b, "Runtime.evaluate", list(expression = expr, returnByValue = TRUE, awaitPromise = TRUE))
  if (!is.null(r$exceptionDetails)) stop("JavaScript error in ", expr, ": ", r$exceptionDetails$exception$description %||% r$exceptionDetails$text)
  r$result$value
}

browser_wait <- function(b, condition, timeout = 60) {
  deadline <- Sys.time() + timeout
  repeat {
    ok <- tryCatch(isTRUE(browser_js(b, condition)), error = function(e) FALSE)
    if (ok) return(invisible(TRUE))
    if (Sys.time() > deadline) stop("timed out waiting for: ", condition)
    Sys.sleep(0.25)
  }
}

# Waits until Shiny has finished computing (busy, then idle twice in a row).
browser_idle <- function(b, timeout = 120) {
  Sys.sleep(0.5)
  browser_wait(b, "!document.documentElement.classList.contains('shiny-busy')", timeout)
  Sys.sleep(0.3)
  browser_wait(b, "!document.documentElement.classList.contains('shiny-busy')", timeout)
}

browser_text <- function(b, selector) {
  browser_js(b, sprintf("(function(){var e = document.querySelector(%s); return e ? e.innerText : null;})()", jsonlite::toJSON(selector, auto_unbox = TRUE)))
}

browser_click <- function(b, selector) {
  browser_js(b, sprintf("document.querySelector(%s).click()", jsonlite::toJSON(selector, auto_unbox = TRUE)))
  invisible()
}

# Sets an input the way its widget does: selectize through its API, others
# by value and a change event.
browser_set <- function(b, id, value) {
  v <- jsonlite::toJSON(value, auto_unbox = length(value) == 1L)
  js <- sprintf("(function(){var e = document.getElementById(%s);
    if (e.selectize) { e.selectize.setValue(%s); return true; }
    if (e.type === 'radio' || e.classList.contains('shiny-input-radiogroup')) {
      var r = e.querySelector('input[value=\"' + %s + '\"]'); r.click(); return true; }
    $(e).val(%s).trigger('change'); return true; })()",
    jsonlite::toJSON(id, auto_unbox = TRUE), v, v, v)
  browser_js(b, js)
  invisible()
}

# Chooses the keys on the Data page and waits until the app has counted
# their cells (after the app's own default choice has arrived).
browser_keys <- function(b, keys, data = "pums_md") {
  browser_wait(b, sprintf("document.getElementById('data_info').innerText.indexOf(%s) === 0", jsonlite::toJSON(data, auto_unbox = TRUE)), 120)
  Sys.sleep(0.5)
  browser_idle(b)
  browser_set(b, "keys", keys)
  browser_wait(b, sprintf("document.getElementById('cells_words_text') !== null && document.getElementById('cells_words_text').innerText.indexOf(%s) >= 0",
                          jsonlite::toJSON(paste0("Keys: ", paste(keys, collapse = ", "), "."), auto_unbox = TRUE)), 120)
}

browser_show_tab <- function(b, value) {
  browser_js(b, sprintf("document.querySelector('a[data-value=\"%s\"]').click()", value))
  Sys.sleep(0.5)
}

browser_upload <- function(b, selector, files) {
  doc <- browser_send(b, "DOM.getDocument", list(depth = 0))
  node <- browser_send(b, "DOM.querySelector", list(nodeId = doc$root$nodeId, selector = selector))
  browser_send(b, "DOM.setFileInputFiles", list(files = as.list(normalizePath(files)), nodeId = node$nodeId))
  invisible()
}

# Clicks a download link and returns the path of the file the browser saved.
browser_download <- function(b, id, dir, timeout = 120) {
  dir.create(dir, showWarnings = FALSE, recursive = TRUE)
  browser_send(b, "Browser.setDownloadBehavior", list(behavior = "allow", downloadPath = normalizePath(dir)), browser = TRUE)
  before <- list.files(dir)
  browser_wait(b, sprintf("document.getElementById('%s').getAttribute('href') !== null && document.getElementById('%s').getAttribute('href') !== ''", id, id))
  browser_click(b, paste0("#", id))
  deadline <- Sys.time() + timeout
  repeat {
    new <- setdiff(list.files(dir), before)
    done <- new[!grepl("\\.crdownload$", new)]
    if (length(done) && !length(grep("\\.crdownload$", list.files(dir)))) {
      f <- file.path(dir, done[1])
      s1 <- file.size(f)
      Sys.sleep(0.3)
      if (identical(s1, file.size(f))) return(f)
    }
    if (Sys.time() > deadline) stop("the download of ", id, " did not finish")
    Sys.sleep(0.25)
  }
}

browser_screenshot <- function(b, file, height = NULL, width = 1280) {
  m <- browser_send(b, "Page.getLayoutMetrics")
  size <- m$cssContentSize %||% m$contentSize
  w <- width
  h <- height %||% min(ceiling(size$height), 6000)
  browser_send(b, "Emulation.setDeviceMetricsOverride", list(width = w, height = h, deviceScaleFactor = 1, mobile = FALSE))
  Sys.sleep(0.5)
  jpeg <- grepl("\\.jpe?g$", file)
  shot <- browser_send(b, "Page.captureScreenshot", if (jpeg) list(format = "jpeg", quality = 55) else list(format = "png"))
  browser_send(b, "Emulation.setDeviceMetricsOverride", list(width = w, height = 900, deviceScaleFactor = 1, mobile = FALSE))
  writeBin(jsonlite::base64_dec(shot$data), file)
  invisible(file)
}

# The app, served by a background R process: the installed sdcRisk (as in
# R CMD check), or the source tree under pkgload::load_all().
# `allow_rds` starts it with .rds uploads allowed; `sentinel` names the file
# (environment variable SDCRISK_SENTINEL) that the payloads of the hostile
# tests would create, and the app runs in its folder.
app_start <- function(data_rds = NULL, allow_rds = FALSE, sentinel = NULL) {
  port <- httpuv::randomPort()
  dev <- requireNamespace("pkgload", quietly = TRUE) && isTRUE(pkgload::is_dev_package("sdcRisk"))
  path <- if (dev) pkgload::pkg_path(getNamespaceInfo("sdcRisk", "path")) else ""
  env <- c(callr::rcmd_safe_env(), if (!is.null(sentinel)) c(SDCRISK_SENTINEL = sentinel))
  proc <- callr::r_bg(function(path, port, data_rds, allow_rds) {
    if (nzchar(path)) pkgload::load_all(path, quiet = TRUE) else library(sdcRisk)
    data <- if (!is.null(data_rds)) readRDS(data_rds)
    app <- sdcRisk::sdc_app(data, data_name = if (!is.null(data)) "my_data", allow_rds = allow_rds)
    shiny::runApp(app, port = port, launch.browser = FALSE, host = "127.0.0.1")
  }, args = list(path = path, port = port, data_rds = data_rds, allow_rds = allow_rds), supervise = TRUE,
  stdout = "|", stderr = "2>&1", env = env, wd = if (!is.null(sentinel)) dirname(sentinel) else ".")
  url <- sprintf("http://127.0.0.1:%d/", port)
  deadline <- Sys.time() + 90
  repeat {
    up <- app_answers(url)
    if (up) break
    if (!proc$is_alive()) stop("the app did not start: ", paste(proc$read_all_output_lines(), collapse = "\n"))
    if (Sys.time() > deadline) stop("the app did not answer on ", url)
    Sys.sleep(0.5)
  }
  list(proc = proc, url = url, dev = dev, path = path)
}

app_answers <- function(url) {
  con <- url(url)
  on.exit(close(con))
  tryCatch(length(suppressWarnings(readLines(con, warn = FALSE))) > 0, error = function(e) FALSE)
}

# Runs a script as a user would, with sdcRisk from where the tests load it.
run_script <- function(script, dir, app) {
  callr::r(function(script, dir, path) {
    if (nzchar(path)) pkgload::load_all(path, quiet = TRUE)
    setwd(dir)
    source(script, local = new.env())
    invisible()
  }, args = list(script = normalizePath(script), dir = normalizePath(dir), path = app$path))
}

# Screenshots for a person to look at: kept only when SDCRISK_SCREENSHOTS
# names a folder (never in the package).
shot <- function(b, name) {
  dir <- Sys.getenv("SDCRISK_SCREENSHOTS", "")
  if (!nzchar(dir)) return(invisible())
  dir.create(dir, showWarnings = FALSE, recursive = TRUE)
  browser_screenshot(b, file.path(dir, paste0(name, ".png")))
}
