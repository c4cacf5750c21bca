# Linear and mixed integer programs of the table side (protect_table(),
# audit_table()), solved by HiGHS (Huangfu and Hall 2018) through the CRAN
# package highs. One place reads the solver's statuses. HiGHS was chosen
# over GLPK (Rglpk, used before) because it re-solves a program whose
# objective changed from the previous optimal basis (the audit's programs
# over one set of suppressed cells differ only in their objective: 24 ms
# against 270 ms per program on the 11,724-cell bench table, measured in one
# run), and because its branch and cut solves the optimal method's master
# programs where GLPK stalls.

# HiGHS model statuses (HighsModelStatus)
highs_status <- function(code) {
  switch(as.character(code), "7" = "optimal", "8" = "infeasible", "9" = "infeasible_or_unbounded",
         "10" = "unbounded", "13" = "time_limit", "14" = "iteration_limit", "16" = "solution_limit",
         "failed")
}

highs_options <- function(...) {
  list(threads = 1L, log_to_console = FALSE, output_flag = FALSE, ...)
}

# A HiGHS solver for a model (through highs' exported low-level functions:
# its closures query every option on each run, a fifth of the time of a
# warm re-solve).
highs_new <- function(model, options) {
  solver <- highs::hi_new_solver(model)
  highs::hi_solver_set_options(solver, options)
  solver
}

# Solve min obj'x (max with `maximize`) s.t. mat x (dir) rhs,
# lower <= x <= upper, the columns in `integer` integer. `mat` is a triplet_matrix(). `start`: a feasible
# solution to start a mixed integer program from. Returns a list with
# `status` ("optimal", "feasible" (a mixed integer program stopped at its
# time limit with a solution), "infeasible", "unbounded",
# "infeasible_or_unbounded" or "failed"), `value`, `solution` (NULL unless
# optimal or feasible) and `bound` (the dual bound of a mixed integer
# program). `solver`: HiGHS' choice unless given ("ipm", "simplex").
solve_lp <- function(obj, mat, dir, rhs, lower, upper, maximize = FALSE, integer = NULL,
                     time_limit = Inf, presolve = FALSE, start = NULL, mip_nodes = NULL,
                     solver = NULL) {
  n <- length(obj)
  big <- highs_infinity()
  types <- rep("C", n)
  types[integer] <- "I"
  lhs <- ifelse(dir == "<=", -big, rhs)
  rhs <- ifelse(dir == ">=", big, rhs)
  model <- highs::highs_model(L = obj, lower = pmax(lower, -big), upper = pmin(upper, big),
                              A = if (length(dir)) mat, lhs = if (length(dir)) lhs,
                              rhs = if (length(dir)) rhs, types = types, maximum = maximize)
  opts <- highs_options(presolve = if (presolve || length(integer)) "on" else "off")
  # ("ipm": HiGHS' interior point method, for a linear program)
  if (!is.null(solver)) opts$solver <- solver
  if (is.finite(time_limit)) opts$time_limit <- max(time_limit, 0.01)
  # (the optimum within optimal_mip_gap of its bound, not HiGHS' default
  # 10^-4: the suppression costs break ties by far smaller shares)
  if (length(integer)) opts$mip_rel_gap <- optimal_mip_gap
  # (a node limit reached ends as HiGHS' solution limit)
  if (!is.null(mip_nodes)) opts$mip_max_nodes <- as.integer(mip_nodes)
  solver <- highs_new(model, opts)
  if (!is.null(start)) {
    highs::hi_solver_set_solution(solver, col_value = as.numeric(start), row_value = numeric(0),
                                  col_dual = numeric(0), row_dual = numeric(0),
                                  value_valid = TRUE, dual_valid = FALSE)
  }
  highs::hi_solver_run(solver)
  status <- highs_status(highs::hi_solver_status(solver))
  info <- highs::hi_solver_info(solver)
  if (status %in% c("time_limit", "iteration_limit", "solution_limit")) {
    status <- if (length(integer) && identical(info$primal_solution_status, "Feasible")) "feasible" else "failed"
  }
  ok <- status %in% c("optimal", "feasible")
  list(status = status, value = if (ok) info$objective_function_value else NA_real_,
       solution = if (ok) highs::hi_solver_get_solution(solver)$col_value,
       bound = if (length(integer)) info$mip_dual_bound else NA_real_)
}

highs_infinity <- function() 1e30

# A linear program solved again and again with new objectives, from the
# previous optimal basis (HiGHS' primal simplex; the feasible set never
# changes, so each basis stays feasible). `extreme(obj, maximize)` returns
# list(status, value, solution) as solve_lp() does; `obj` a full vector;
# with `duals`, also `row_dual`, HiGHS' dual values of the rows at an
# optimum (of the program as it is solved, a maximisation).
# `method`: "simplex" (every program by the primal simplex), "ipm" (every
# program by HiGHS' interior point method with presolve and crossover to an
# optimal vertex: no warm start, but on programs of ten thousand columns and
# more it solves an objective far from the previous one in seconds where
# the simplex takes minutes) or "ipm_first" (the first program by the
# interior point method, the next ones by the primal simplex from the
# vertex it ends at: a cold start by the simplex took 35-39 s on the 19,229
# suppressed cells of the 106,636-cell bench table, the interior point
# method 8 s).
# `iterations`: a limit on the simplex iterations of each program after the
# first (a program stopped there ends with a status other than "optimal",
# and the caller solves it otherwise). `set_bounds(lower, upper)` changes
# the bounds of the columns for the programs after it (the respondents'
# programs of a component are the outsider's with a few bounds tightened:
# from the outsider's last basis they take a few iterations where a cold
# start takes thousands). `set_rows(lhs, rhs)` changes the bounds of the
# rows the same way. `strategy`: HiGHS' simplex strategy, the primal simplex
# (4) by default; the heuristic's witness programs and the optimal method's
# dual programs, whose bounds or right-hand sides change with the
# objective, use the dual simplex (1): on the bench table R4 the primal
# took twice as long on them. `warm = FALSE`: every program starts from
# HiGHS' slack basis instead of the last optimal one (the model is kept):
# the heuristic's witness programs, whose bounds and objective change
# together, took about as many iterations either way, but each far longer
# from the kept basis (deviation_warm).
lp_session <- function(mat, lhs, rhs, lower, upper, method = c("simplex", "ipm", "ipm_first"),
                       iterations = NULL, strategy = 4L, warm = TRUE) {
  method <- match.arg(method)
  big <- highs_infinity()
  n <- mat$ncol
  model <- highs::highs_model(L = numeric(n), lower = pmax(lower, -big), upper = pmin(upper, big),
                              A = mat, lhs = pmax(lhs, -big), rhs = pmin(rhs, big), maximum = TRUE)
  simplex <- highs_options(presolve = "off", solver = "simplex", simplex_strategy = strategy)
  if (!is.null(iterations)) simplex$simplex_iteration_limit <- as.integer(iterations)
  ipm <- highs_options(presolve = "on", solver = "ipm", run_crossover = "on")
  # primal simplex (4): after a change of objective the basis stays primal
  # feasible
  solver <- highs_new(model, if (method == "simplex") simplex else ipm)
  current <- numeric(n)
  n_lp <- 0L
  # bounds that change only where they differ from the current ones, by
  # `change(solver, idx, lower, upper)` (0-based idx)
  bounds_state <- function(lower, upper, change) {
    now_lo <- pmax(lower, -big)
    now_up <- pmin(upper, big)
    function(lower, upper) {
      lower <- pmax(lower, -big)
      upper <- pmin(upper, big)
      idx <- which(lower != now_lo | upper != now_up)
      if (length(idx)) {
        change(solver, idx - 1L, lower[idx], upper[idx])
        now_lo[idx] <<- lower[idx]
        now_up[idx] <<- upper[idx]
      }
      invisible(length(idx))
    }
  }
  # new bounds on the columns (the matrix and the row bounds stay): the next
  # program starts from the last optimal basis, which the primal simplex
  # makes feasible again when a bound cuts it off
  set_bounds <- bounds_state(lower, upper, highs::hi_solver_change_variable_bounds)
  # new bounds on the rows, the same way
  set_rows <- bounds_state(lhs, rhs, highs::hi_solver_change_constraint_bounds)
  extreme <- function(obj, maximize, duals = FALSE) {
    obj <- if (maximize) obj else -obj
    change <- which(obj != current)
    if (length(change)) highs::hi_solver_set_objective(solver, change - 1L, obj[change])
    current[change] <<- obj[change]
    if (!warm && n_lp > 0L) highs::hi_solver_clear_basis(solver)
    highs::hi_solver_run(solver)
    n_lp <<- n_lp + 1L
    if (method == "ipm_first" && n_lp == 1L) highs::hi_solver_set_options(solver, simplex)
    # (HiGHS' model status alone, and the value from the solution: highs'
    # wrapper of the whole information took three times as long, some 250
    # times a table on R4 of the bench)
    status <- highs_status(highs::hi_solver_status(solver))
    # (without presolve the simplex tells infeasible from unbounded; the
    # interior point method's presolve may not: the caller then solves again)
    if (status == "infeasible_or_unbounded") status <- if (method == "simplex") "unbounded" else "failed"
    sol <- if (status == "optimal") highs::hi_solver_get_solution(solver)
    value <- switch(status,
      optimal = sum(current * sol$col_value),
      unbounded = Inf,
      NA_real_)
    list(status = status, value = if (maximize) value else -value, solution = sol$col_value,
         row_dual = if (duals) sol$row_dual)
  }
  # after an infeasible program: HiGHS' dual ray (one number per row), a
  # certificate that no column values within the bounds keep the rows; NULL
  # when HiGHS has none
  dual_ray <- function() {
    r <- highs::hi_solver_get_dual_ray(solver)
    if (isTRUE(r$has_dual_ray) && length(r$dual_ray) == mat$nrow && all(is.finite(r$dual_ray))) r$dual_ray
  }
  # (the simplex iterations of the last program: how far it started from
  # its optimum)
  last_iterations <- function() highs::hi_solver_info(solver)$simplex_iteration_count
  list(extreme = extreme, n_lp = function() n_lp, set_bounds = set_bounds, set_rows = set_rows,
       dual_ray = dual_ray, last_iterations = last_iterations)
}
