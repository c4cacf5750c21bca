# Linear and mixed integer programs of the table side (protect_table(),
# audit_table()), through one function so that every caller reads the same
# statuses.

# Solve min/max obj'x s.t. mat x (dir) rhs, lower <= x <= upper, the columns
# in `integer` binary or integer. `mat` is a triplet_matrix(). Returns a list
# with `status` ("optimal", "feasible" (a MIP stopped at its time limit with
# a solution), "infeasible", "unbounded" or "failed"), `value` and
# `solution` (NULL unless optimal or feasible).
solve_lp <- function(obj, mat, dir, rhs, lower, upper, max = FALSE, integer = NULL,
                     time_limit = Inf, presolve = FALSE) {
  n <- length(obj)
  types <- NULL
  if (length(integer)) {
    types <- rep("C", n)
    types[integer] <- ifelse(lower[integer] >= 0 & upper[integer] <= 1, "B", "I")
  }
  ctrl <- list(canonicalize_status = FALSE, presolve = presolve || length(integer) > 0)
  if (is.finite(time_limit)) {
    ctrl$tm_limit <- as.integer(min(max(1000 * time_limit, 1), .Machine$integer.max))
  }
  # Rglpk treats columns absent from the bounds as [0, Inf)
  r <- Rglpk::Rglpk_solve_LP(obj, mat, dir, rhs, types = types, max = max,
                             bounds = list(lower = list(ind = seq_len(n), val = lower),
                                           upper = list(ind = seq_len(n), val = upper)),
                             control = ctrl)
  # GLPK statuses (glp_get_status / glp_mip_status): 5 optimal, 2 feasible,
  # 3 and 4 infeasible, 6 unbounded, 1 undefined
  status <- switch(as.character(r$status), "5" = "optimal", "2" = "feasible", "3" = ,
                   "4" = "infeasible", "6" = "unbounded", "failed")
  if (status == "feasible" && !length(integer)) status <- "failed"
  ok <- status %in% c("optimal", "feasible")
  list(status = status, value = if (ok) r$optimum else NA_real_,
       solution = if (ok) r$solution)
}
