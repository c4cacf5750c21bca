# Replaces the package's internal function `name` by `fun` for the rest of
# the calling test (a solver that fails, a session that stops early).
local_package_function <- function(name, fun, env = parent.frame()) {
  ns <- asNamespace("sdcRisk")
  real <- get(name, envir = ns)
  unlockBinding(name, ns)
  assign(name, fun, envir = ns)
  withr::defer({
    unlockBinding(name, ns)
    assign(name, real, envir = ns)
    lockBinding(name, ns)
  }, envir = env)
}

# Counts the calls of the package's internal function `name` for the rest
# of the calling test (trace(), untraced when the test ends); returns an
# environment whose `n` is the count so far.
local_call_count <- function(name, env = parent.frame()) {
  ns <- asNamespace("sdcRisk")
  calls <- new.env()
  calls$n <- 0
  suppressMessages(trace(name, tracer = function() calls$n <- calls$n + 1, where = ns, print = FALSE))
  withr::defer(suppressMessages(untrace(name, where = ns)), envir = env)
  calls
}
