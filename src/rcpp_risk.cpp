#include <Rcpp.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "glue.h"
#include "sdcRisk/risk.hpp"
#include "sdcRisk/risk_known.hpp"
#include "sdcRisk/risk_vars.hpp"

// Exact R_j(a, t), P(S_j = a | T), P(S_j = 0 | T) and gamma(j, t) for target
// cells (1-based) and values of a.
// [[Rcpp::export]]
Rcpp::List cpp_cell_risk(const Rcpp::List& plan, const Rcpp::IntegerVector& targets,
                         const Rcpp::IntegerVector& a) {
  sdcRisk_glue::PlanHolder holder(plan);
  std::vector<int> tg(targets.size());
  for (R_xlen_t i = 0; i < targets.size(); ++i) tg[i] = targets[i] - 1;
  std::vector<int> av(a.begin(), a.end());
  sdcRisk::CellRiskTable res;
  try {
    res = sdcRisk::cell_risk(holder.view, tg, av, sdcRisk_glue::interrupt_callback());
  } catch (const std::invalid_argument& e) {
    Rcpp::stop(std::string("internal error: ") + e.what());
  }
  return Rcpp::List::create(Rcpp::Named("risk") = Rcpp::wrap(res.risk),
                            Rcpp::Named("log_prob") = Rcpp::wrap(res.log_prob),
                            Rcpp::Named("log_p_empty") = Rcpp::wrap(res.log_p_empty),
                            Rcpp::Named("gamma") = Rcpp::wrap(res.gamma));
}

// The maximum of R_j(a, t) over what a goal covers, with its cell (1-based) and a.
// [[Rcpp::export]]
Rcpp::List cpp_max_risk(const Rcpp::List& plan, const std::string& goal) {
  sdcRisk_glue::PlanHolder holder(plan);
  sdcRisk::MaxRisk res;
  try {
    res = sdcRisk::max_risk(holder.view, sdcRisk::parse_goal(goal), sdcRisk_glue::interrupt_callback());
  } catch (const std::invalid_argument& e) {
    Rcpp::stop(std::string("internal error: ") + e.what());
  }
  return Rcpp::List::create(Rcpp::Named("value") = res.value,
                            Rcpp::Named("cell") = res.cell < 0 ? NA_INTEGER : res.cell + 1,
                            Rcpp::Named("a") = res.a < 0 ? NA_INTEGER : res.a,
                            Rcpp::Named("targets_evaluated") = static_cast<double>(res.targets_evaluated));
}

// Exact calibration of the IFPR blocks' theta (see sdcRisk::calibrate_ifpr).
// [[Rcpp::export]]
Rcpp::NumericVector cpp_calibrate_ifpr(const Rcpp::List& plan, const std::string& goal, double target) {
  sdcRisk_glue::PlanHolder holder(plan);
  std::vector<double> th;
  try {
    th = sdcRisk::calibrate_ifpr(holder.view, sdcRisk::parse_goal(goal), target, sdcRisk_glue::interrupt_callback());
  } catch (const std::invalid_argument& e) {
    Rcpp::stop(std::string("internal error: ") + e.what());
  }
  return Rcpp::wrap(th);
}

using sdcRisk_glue::VarsPlanHolder;

// Exact R_D(a, t), P(S_D = a), P(S_D = 0) and gamma for a per-variable plan.
// [[Rcpp::export]]
Rcpp::List cpp_vars_cell_risk(const Rcpp::List& plan, const Rcpp::IntegerVector& targets,
                              const Rcpp::IntegerVector& a, bool gamma) {
  VarsPlanHolder holder(plan);
  std::vector<int> tg(targets.size());
  for (R_xlen_t i = 0; i < targets.size(); ++i) tg[i] = targets[i] - 1;
  std::vector<int> av(a.begin(), a.end());
  sdcRisk::CellRiskTable res;
  try {
    res = sdcRisk::vars_cell_risk(holder.view, tg, av, gamma, sdcRisk_glue::interrupt_callback());
  } catch (const std::domain_error& e) {
    Rcpp::stop(std::string("sdcRisk_underflow: ") + e.what());
  } catch (const std::invalid_argument& e) {
    Rcpp::stop(std::string("internal error: ") + e.what());
  }
  return Rcpp::List::create(Rcpp::Named("risk") = Rcpp::wrap(res.risk),
                            Rcpp::Named("log_prob") = Rcpp::wrap(res.log_prob),
                            Rcpp::Named("log_p_empty") = Rcpp::wrap(res.log_p_empty),
                            Rcpp::Named("gamma") = Rcpp::wrap(res.gamma));
}

// The maximum of R_D(a, t) over what a goal covers, for a per-variable plan.
// [[Rcpp::export]]
Rcpp::List cpp_vars_max_risk(const Rcpp::List& plan, const std::string& goal) {
  VarsPlanHolder holder(plan);
  sdcRisk::MaxRisk res;
  try {
    res = sdcRisk::vars_max_risk(holder.view, sdcRisk::parse_goal(goal), sdcRisk_glue::interrupt_callback());
  } catch (const std::domain_error& e) {
    Rcpp::stop(std::string("sdcRisk_underflow: ") + e.what());
  } catch (const std::invalid_argument& e) {
    Rcpp::stop(std::string("internal error: ") + e.what());
  }
  return Rcpp::List::create(Rcpp::Named("value") = res.value,
                            Rcpp::Named("cell") = res.cell < 0 ? NA_INTEGER : res.cell + 1,
                            Rcpp::Named("a") = res.a < 0 ? NA_INTEGER : res.a,
                            Rcpp::Named("targets_evaluated") = static_cast<double>(res.targets_evaluated));
}

namespace {
std::vector<int> known_sets(const Rcpp::List& plan, int n_cells) {
  Rcpp::IntegerVector ks = plan["known_set"];
  if (ks.size() != n_cells) Rcpp::stop("internal error: malformed known sets");
  std::vector<int> out(ks.size());
  for (R_xlen_t i = 0; i < ks.size(); ++i) out[i] = ks[i] - 1;
  return out;
}
}  // namespace

// Exact R_D(a, t) of a block plan for an intruder who knows only some keys.
// [[Rcpp::export]]
Rcpp::List cpp_block_known_cell_risk(const Rcpp::List& plan, const Rcpp::IntegerVector& targets,
                                     const Rcpp::IntegerVector& a) {
  sdcRisk_glue::PlanHolder holder(plan);
  const std::vector<int> sets = known_sets(plan, holder.view.n_cells);
  std::vector<int> tg(targets.size());
  for (R_xlen_t i = 0; i < targets.size(); ++i) tg[i] = targets[i] - 1;
  std::vector<int> av(a.begin(), a.end());
  sdcRisk::CellRiskTable res;
  try {
    res = sdcRisk::block_known_cell_risk(holder.view, sets, tg, av, sdcRisk_glue::interrupt_callback());
  } catch (const std::invalid_argument& e) {
    Rcpp::stop(std::string("internal error: ") + e.what());
  }
  return Rcpp::List::create(Rcpp::Named("risk") = Rcpp::wrap(res.risk),
                            Rcpp::Named("log_prob") = Rcpp::wrap(res.log_prob),
                            Rcpp::Named("log_p_empty") = Rcpp::wrap(res.log_p_empty),
                            Rcpp::Named("gamma") = Rcpp::wrap(res.gamma));
}

// The maximum of R_D(a, t) of a block plan for an intruder who knows only some keys.
// [[Rcpp::export]]
Rcpp::List cpp_block_known_max_risk(const Rcpp::List& plan, const std::string& goal) {
  sdcRisk_glue::PlanHolder holder(plan);
  const std::vector<int> sets = known_sets(plan, holder.view.n_cells);
  sdcRisk::MaxRisk res;
  try {
    res = sdcRisk::block_known_max_risk(holder.view, sets, sdcRisk::parse_goal(goal),
                                        sdcRisk_glue::interrupt_callback());
  } catch (const std::invalid_argument& e) {
    Rcpp::stop(std::string("internal error: ") + e.what());
  }
  return Rcpp::List::create(Rcpp::Named("value") = res.value,
                            Rcpp::Named("cell") = res.cell < 0 ? NA_INTEGER : res.cell + 1,
                            Rcpp::Named("a") = res.a < 0 ? NA_INTEGER : res.a,
                            Rcpp::Named("targets_evaluated") = static_cast<double>(res.targets_evaluated));
}
