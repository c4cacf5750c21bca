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

namespace {

// Owns 0-based copies of a per-variable plan and exposes a VarsPlanView.
struct VarsPlanHolder {
  sdcRisk_glue::InterruptHookGuard interrupt_guard;
  std::vector<int> counts, stratum;
  std::vector<std::vector<int>> codes;
  std::vector<std::vector<double>> mats;
  sdcRisk::VarsPlanView view;

  explicit VarsPlanHolder(const Rcpp::List& plan) {
    Rcpp::IntegerVector cnt = plan["counts"], st = plan["stratum"], nl = plan["n_levels"], vk = plan["var_of_key"];
    Rcpp::LogicalVector kn = plan["known"];
    Rcpp::List cd = plan["codes"], mt = plan["matrices"];
    const int n_strata = Rcpp::as<int>(plan["n_strata"]), n_vars = Rcpp::as<int>(plan["n_vars"]);
    const R_xlen_t nk = cd.size();
    if (nl.size() != nk || vk.size() != nk || kn.size() != nk || st.size() != cnt.size() ||
        mt.size() != static_cast<R_xlen_t>(n_strata) * n_vars)
      Rcpp::stop("internal error: malformed per-variable plan");
    counts.assign(cnt.begin(), cnt.end());
    stratum.resize(st.size());
    for (R_xlen_t i = 0; i < st.size(); ++i) stratum[i] = st[i] - 1;
    view.n_cells = static_cast<int>(counts.size());
    view.n_keys = static_cast<int>(nk);
    codes.resize(nk);
    for (R_xlen_t k = 0; k < nk; ++k) {
      Rcpp::IntegerVector c = cd[k];
      if (c.size() != cnt.size()) Rcpp::stop("internal error: malformed per-variable plan");
      codes[k].resize(c.size());
      for (R_xlen_t i = 0; i < c.size(); ++i) codes[k][i] = c[i] == NA_INTEGER ? -1 : c[i] - 1;
      view.codes.push_back(codes[k].data());
      view.n_levels.push_back(nl[k]);
      view.var_of_key.push_back(vk[k] - 1);
      view.known.push_back(kn[k] == TRUE ? 1 : 0);
    }
    for (R_xlen_t m = 0; m < mt.size(); ++m) {
      Rcpp::NumericVector x = mt[m];
      mats.emplace_back(x.begin(), x.end());
    }
    for (R_xlen_t m = 0; m < mt.size(); ++m) {
      const int u = static_cast<int>(m % n_vars);
      int k = -1;
      for (R_xlen_t kk = 0; kk < nk; ++kk)
        if (vk[kk] - 1 == u) k = static_cast<int>(kk);
      if (k < 0 || static_cast<R_xlen_t>(mats[m].size()) != static_cast<R_xlen_t>(nl[k]) * nl[k])
        Rcpp::stop("internal error: malformed per-variable plan");
      view.matrices.push_back(mats[m].data());
    }
    view.counts = counts.data();
    view.stratum = stratum.data();
    view.n_strata = n_strata;
    view.n_vars = n_vars;
  }
};

}  // namespace

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
