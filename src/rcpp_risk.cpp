#include <Rcpp.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "glue.h"
#include "sdcRisk/risk.hpp"
#include "sdcRisk/risk_known.hpp"
#include "sdcRisk/risk_vars.hpp"

using sdcRisk_glue::VarsPlanHolder;

namespace {

// Runs an engine call; a broken internal assumption becomes an R error, and
// an underflow (per-variable products below the smallest double) an error
// the R wrapper turns into sdcRisk_error_underflow.
template <class F>
auto run_engine(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::domain_error& e) {
    Rcpp::stop(std::string("sdcRisk_underflow: ") + e.what());
  } catch (const std::invalid_argument& e) {
    Rcpp::stop(std::string("internal error: ") + e.what());
  }
}

std::vector<int> zero_based(const Rcpp::IntegerVector& x) {
  std::vector<int> out(x.size());
  for (R_xlen_t i = 0; i < x.size(); ++i) out[i] = x[i] - 1;
  return out;
}

Rcpp::List wrap_table(const sdcRisk::CellRiskTable& res) {
  return Rcpp::List::create(Rcpp::Named("risk") = Rcpp::wrap(res.risk),
                            Rcpp::Named("log_prob") = Rcpp::wrap(res.log_prob),
                            Rcpp::Named("log_p_empty") = Rcpp::wrap(res.log_p_empty),
                            Rcpp::Named("gamma") = Rcpp::wrap(res.gamma));
}

Rcpp::List wrap_max(const sdcRisk::MaxRisk& res) {
  return Rcpp::List::create(Rcpp::Named("value") = res.value,
                            Rcpp::Named("cell") = res.cell < 0 ? NA_INTEGER : res.cell + 1,
                            Rcpp::Named("a") = res.a < 0 ? NA_INTEGER : res.a,
                            Rcpp::Named("targets_evaluated") = static_cast<double>(res.targets_evaluated));
}

std::vector<int> known_sets(const Rcpp::List& plan, int n_cells) {
  Rcpp::IntegerVector ks = plan["known_set"];
  if (ks.size() != n_cells) Rcpp::stop("internal error: malformed known sets");
  return zero_based(ks);
}

}  // namespace

// Exact R_j(a, t), P(S_j = a | T), P(S_j = 0 | T) and gamma(j, t) for target
// cells (1-based) and values of a.
// [[Rcpp::export]]
Rcpp::List cpp_cell_risk(const Rcpp::List& plan, const Rcpp::IntegerVector& targets,
                         const Rcpp::IntegerVector& a) {
  sdcRisk_glue::PlanHolder holder(plan);
  const std::vector<int> tg = zero_based(targets), av(a.begin(), a.end());
  return wrap_table(run_engine([&] {
    return sdcRisk::cell_risk(holder.view, tg, av, sdcRisk_glue::interrupt_callback());
  }));
}

// The maximum of R_j(a, t) over what a goal covers, with its cell (1-based) and a.
// [[Rcpp::export]]
Rcpp::List cpp_max_risk(const Rcpp::List& plan, const std::string& goal) {
  sdcRisk_glue::PlanHolder holder(plan);
  return wrap_max(run_engine([&] {
    return sdcRisk::max_risk(holder.view, sdcRisk::parse_goal(goal), sdcRisk_glue::interrupt_callback());
  }));
}

// Exact calibration of the IFPR blocks' theta (see sdcRisk::calibrate_ifpr).
// [[Rcpp::export]]
Rcpp::NumericVector cpp_calibrate_ifpr(const Rcpp::List& plan, const std::string& goal, double target) {
  sdcRisk_glue::PlanHolder holder(plan);
  return Rcpp::wrap(run_engine([&] {
    return sdcRisk::calibrate_ifpr(holder.view, sdcRisk::parse_goal(goal), target,
                                   sdcRisk_glue::interrupt_callback());
  }));
}

// Exact R_D(a, t), P(S_D = a), P(S_D = 0) and gamma for a per-variable plan.
// [[Rcpp::export]]
Rcpp::List cpp_vars_cell_risk(const Rcpp::List& plan, const Rcpp::IntegerVector& targets,
                              const Rcpp::IntegerVector& a, bool gamma) {
  VarsPlanHolder holder(plan);
  const std::vector<int> tg = zero_based(targets), av(a.begin(), a.end());
  return wrap_table(run_engine([&] {
    return sdcRisk::vars_cell_risk(holder.view, tg, av, gamma, sdcRisk_glue::interrupt_callback());
  }));
}

// The maximum of R_D(a, t) over what a goal covers, for a per-variable plan.
// [[Rcpp::export]]
Rcpp::List cpp_vars_max_risk(const Rcpp::List& plan, const std::string& goal) {
  VarsPlanHolder holder(plan);
  return wrap_max(run_engine([&] {
    return sdcRisk::vars_max_risk(holder.view, sdcRisk::parse_goal(goal), sdcRisk_glue::interrupt_callback());
  }));
}

// Exact R_D(a, t) of a block plan for an intruder who knows only some keys.
// [[Rcpp::export]]
Rcpp::List cpp_block_known_cell_risk(const Rcpp::List& plan, const Rcpp::IntegerVector& targets,
                                     const Rcpp::IntegerVector& a) {
  sdcRisk_glue::PlanHolder holder(plan);
  const std::vector<int> sets = known_sets(plan, holder.view.n_cells);
  const std::vector<int> tg = zero_based(targets), av(a.begin(), a.end());
  return wrap_table(run_engine([&] {
    return sdcRisk::block_known_cell_risk(holder.view, sets, tg, av, sdcRisk_glue::interrupt_callback());
  }));
}

// The maximum of R_D(a, t) of a block plan for an intruder who knows only some keys.
// [[Rcpp::export]]
Rcpp::List cpp_block_known_max_risk(const Rcpp::List& plan, const std::string& goal) {
  sdcRisk_glue::PlanHolder holder(plan);
  const std::vector<int> sets = known_sets(plan, holder.view.n_cells);
  return wrap_max(run_engine([&] {
    return sdcRisk::block_known_max_risk(holder.view, sets, sdcRisk::parse_goal(goal),
                                         sdcRisk_glue::interrupt_callback());
  }));
}
