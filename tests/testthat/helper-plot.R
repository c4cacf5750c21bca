# The strings a base-graphics plot draws (titles, axis and legend labels),
# read from the recorded display list of a null device.
plotted_strings <- function(expr) {
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  grDevices::dev.control("enable")
  force(expr)
  strs <- function(z) {
    if (is.character(z)) unname(z) else if (is.list(z) || is.pairlist(z)) unlist(lapply(as.list(z), strs)) else NULL
  }
  unique(strs(grDevices::recordPlot()[[1]]))
}
