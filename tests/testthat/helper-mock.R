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
