# Evaluation of per-variable PRAM releases: pram_release() objects and the
# releases sdcMicroObj objects hold after sdcMicro::pram(). The exact values
# come from the C++ core (plan_vars.hpp); nothing quadratic in the cells is
# formed.

is_vars_release <- function(x) inherits(x, c("sdc_pram_release", "sdcMicroObj"))

as_vars_release <- function(x, call = rlang::caller_env()) {
  if (inherits(x, "sdcMicroObj")) sdcmicro_release(x, call = call) else x
}

# release_risk() of a per-variable release: the units whose cell could
# change are those of cells of count 1 or 2 and of every cell whose units
# move with positive probability.
release_risk_vars <- function(release) {
  cells <- release$cells
  counts <- cells$cells$count
  old <- cells$cell_id
  new <- release$new_cell
  s_new <- tabulate(new, nbins = length(counts))
  plan <- release$plan
  stay <- cpp_vars_cost(vars_plan_cpp(plan))$stay
  unit <- which(!is.na(old) & (counts[old] <= 2 | stay[old] < 1))
  tau <- counts[old[unit]]
  tau_star <- s_new[old[unit]]
  stayed <- !is.na(new[unit]) & new[unit] == old[unit]
  p <- ifelse(stayed, 1 / pmax(tau_star, 1), 0)
  movable <- which(stay < 1)
  p_empty <- numeric(length(counts))
  if (length(movable) > 0) p_empty[movable] <- match_risk(plan, cells = movable, a = 1)$p_empty
  cert <- release$certificate
  if (is.na(cert$goal)) {
    # an sdcMicroObj's release: certify it now
    mx <- max_match_risk(plan)
    cert[c("goal", "risk", "cell", "a", "count", "cell_keys")] <- mx[c("goal", "risk", "cell", "a", "count", "keys")]
  }
  cert$xi <- NA_real_
  structure(
    list(
      table = risk_table(p, cut_count(tau, c("1", "2", "3+")), cut_count(tau_star, c("0", "1", "2", "3+"))),
      changes = change_rows(counts, old, unit, tau, stayed, s_new, 1 - stay, p_empty,
                            rep(NA_real_, length(counts))),
      uniques = data.frame(
        cells = c("singleton", "doubleton"),
        units_before = c(sum(counts == 1), 2 * sum(counts == 2)),
        units_after = c(sum(s_new == 1), 2 * sum(s_new == 2))
      ),
      certificate = cert
    ),
    class = "sdc_release_risk"
  )
}

# The variance table of release_utility() for one variable of a per-variable
# release: V(S_D | T) of every category D (eq. 3.6 on the margin), 0 for a
# variable that is not perturbed. There is no eq. 6.7 bound: NA.
variance_table_vars <- function(release, v) {
  plan <- release$plan
  cf <- release$cells
  counts <- cf$cells$count
  lev <- plan$levels[[v]]
  o <- tabulate_sum(plan$codes[[v]], counts, length(lev))
  var <- if (v %in% plan$vars) {
    cpp_vars_category_moments(vars_plan_cpp(plan), match(v, plan$vars))$var
  } else {
    numeric(length(lev))
  }
  n <- cf$n_records
  data.frame(
    category = lev,
    original = o,
    perturbation_var = var,
    bound_var = NA_real_,
    sampling_var = n * (o / n) * (1 - o / n)
  )
}

# simulate_release() of a per-variable plan: the units are drawn one by one
# (linear in the records per replication) and counted in the plan's cells.
simulate_release_vars <- function(plan, reps, target) {
  pc <- vars_plan_cpp(plan)
  sums <- cpp_vars_simulate(pc, as.integer(reps), if (is.null(target)) NA_integer_ else as.integer(target))
  exact <- cpp_vars_moments(pc)
  counts <- plan$cells$cells$count
  n <- sum(counts)
  stay <- cpp_vars_cost(pc)$stay
  # the cells whose units can move play the role of the cells in blocks
  block <- ifelse(stay < 1, 1L, NA_integer_)
  tg <- NULL
  if (!is.null(target)) {
    target <- as.integer(target)
    mean_cm <- sums$cm_sum / reps
    var_cm <- if (reps > 1) max(sums$cm_sq - sums$cm_sum^2 / reps, 0) / (reps - 1) else NA_real_
    tg <- list(
      cell = target, count = counts[target], block = block[target], mean_cm = mean_cm,
      se_cm = sqrt(var_cm / reps), exact_gamma = match_risk(plan, target)$gamma[1]
    )
  }
  new_sdc_simulation(
    cells = simulation_table(sums, exact, counts, block, reps, n),
    target = tg,
    reps = as.integer(reps),
    n = n,
    moved = sums$moved / reps
  )
}
