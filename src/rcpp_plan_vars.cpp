#include <Rcpp.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "glue.h"
#include "sdcRisk/plan_vars.hpp"

namespace {

struct RUniform {
  double uniform() { return R::unif_rand(); }
};

// Owns 0-based copies of a per-variable plan as vars_plan_cpp() hands it
// over and exposes a VarsAlgebraView.
struct VarsAlgebraHolder {
  std::vector<int> counts, n_cat, code, group, stratum;
  std::vector<double> matrix;
  std::vector<std::int64_t> mat_start;
  sdcRisk::VarsAlgebraView view;

  explicit VarsAlgebraHolder(const Rcpp::List& plan) {
    Rcpp::IntegerVector cnt = plan["counts"], nc = plan["n_cat"], cd = plan["code"], gr = plan["group"],
                        st = plan["stratum"];
    Rcpp::NumericVector mat = plan["matrix"], ms = plan["mat_start"];
    const int n_strata = Rcpp::as<int>(plan["n_strata"]);
    counts.assign(cnt.begin(), cnt.end());
    n_cat.assign(nc.begin(), nc.end());
    code.resize(cd.size());
    for (R_xlen_t i = 0; i < cd.size(); ++i) code[i] = cd[i] - 1;
    group.resize(gr.size());
    for (R_xlen_t i = 0; i < gr.size(); ++i) group[i] = gr[i] - 1;
    stratum.resize(st.size());
    for (R_xlen_t i = 0; i < st.size(); ++i) stratum[i] = st[i] - 1;
    matrix.assign(mat.begin(), mat.end());
    mat_start.assign(ms.begin(), ms.end());
    const std::size_t nc_ = counts.size(), nv = n_cat.size();
    if (code.size() != nc_ * nv || group.size() != nc_ || stratum.size() != nc_ ||
        mat_start.size() != static_cast<std::size_t>(n_strata) * nv)
      Rcpp::stop("internal error: malformed per-variable plan");
    view.n_cells = static_cast<int>(nc_);
    view.counts = counts.data();
    view.n_vars = static_cast<int>(nv);
    view.n_cat = n_cat.data();
    view.code = code.data();
    view.group = group.data();
    view.stratum = stratum.data();
    view.n_strata = n_strata;
    view.matrix = matrix.data();
    view.mat_start = mat_start.data();
  }
};

}  // namespace

// New category codes (1-based, NA for records in no cell) of every record,
// one column per perturbed variable.
// [[Rcpp::export]]
Rcpp::IntegerMatrix cpp_vars_draw(const Rcpp::List& plan, const Rcpp::IntegerVector& cell_id) {
  VarsAlgebraHolder holder(plan);
  const std::size_t n = cell_id.size();
  std::vector<int> cells(n);
  for (std::size_t i = 0; i < n; ++i) cells[i] = cell_id[i] == NA_INTEGER ? -1 : cell_id[i] - 1;
  RUniform rng;
  std::vector<int> out;
  try {
    out = sdcRisk::vars_draw(holder.view, cells.data(), n, rng, sdcRisk_glue::interrupt_callback());
  } catch (const std::invalid_argument& e) {
    Rcpp::stop(std::string("internal error: ") + e.what());
  }
  Rcpp::IntegerMatrix res(static_cast<int>(n), holder.view.n_vars);
  for (std::size_t i = 0; i < out.size(); ++i) res[i] = out[i] < 0 ? NA_INTEGER : out[i] + 1;
  return res;
}

// E(S_j | T) and V(S_j | T) (eq. 3.6) of target cells given by their group
// (1-based) and their codes (1-based, variable-major).
// [[Rcpp::export]]
Rcpp::List cpp_vars_moments(const Rcpp::List& plan, const Rcpp::IntegerVector& t_group,
                            const Rcpp::IntegerVector& t_code) {
  VarsAlgebraHolder holder(plan);
  const int nt = static_cast<int>(t_group.size());
  std::vector<int> g(nt), cd(t_code.size());
  for (int j = 0; j < nt; ++j) g[j] = t_group[j] - 1;
  for (R_xlen_t i = 0; i < t_code.size(); ++i) cd[i] = t_code[i] - 1;
  std::vector<double> e, q;
  try {
    e = sdcRisk::vars_power_sums(holder.view, nt, g.data(), cd.data(), 1);
    q = sdcRisk::vars_power_sums(holder.view, nt, g.data(), cd.data(), 2);
  } catch (const std::invalid_argument& err) {
    Rcpp::stop(std::string("internal error: ") + err.what());
  }
  Rcpp::NumericVector var(nt);
  for (int j = 0; j < nt; ++j) var[j] = std::max(0.0, e[j] - q[j]);
  return Rcpp::List::create(Rcpp::Named("mean") = Rcpp::wrap(e), Rcpp::Named("var") = var);
}

// E(S_D | T) and V(S_D | T) for every category D of perturbed variable v
// (1-based).
// [[Rcpp::export]]
Rcpp::List cpp_vars_category_moments(const Rcpp::List& plan, int v) {
  VarsAlgebraHolder holder(plan);
  std::vector<double> mean, var;
  sdcRisk::vars_category_moments(holder.view, v - 1, mean, var);
  return Rcpp::List::create(Rcpp::Named("mean") = Rcpp::wrap(mean), Rcpp::Named("var") = Rcpp::wrap(var));
}

// Expected changed records, total perturbation variance, and the
// probability that a unit of each cell keeps its cell.
// [[Rcpp::export]]
Rcpp::List cpp_vars_cost(const Rcpp::List& plan) {
  VarsAlgebraHolder holder(plan);
  const sdcRisk::PlanCost cost = sdcRisk::vars_cost(holder.view);
  return Rcpp::List::create(Rcpp::Named("changed") = cost.changed, Rcpp::Named("variance") = cost.variance,
                            Rcpp::Named("stay") = Rcpp::wrap(sdcRisk::vars_stay(holder.view)));
}

// Monte Carlo replications of a per-variable release, summed as
// cpp_simulate_release() sums them. `target` is a 1-based cell id or NA.
// [[Rcpp::export]]
Rcpp::List cpp_vars_simulate(const Rcpp::List& plan, int reps, int target) {
  VarsAlgebraHolder holder(plan);
  RUniform rng;
  sdcRisk::VarsSimulation res;
  try {
    res = sdcRisk::vars_simulate(holder.view, reps, target == NA_INTEGER ? -1 : target - 1, rng,
                                 sdcRisk_glue::interrupt_callback());
  } catch (const std::invalid_argument& e) {
    Rcpp::stop(std::string("internal error: ") + e.what());
  }
  return Rcpp::List::create(
      Rcpp::Named("s1") = Rcpp::wrap(res.s1), Rcpp::Named("s2") = Rcpp::wrap(res.s2),
      Rcpp::Named("s3") = Rcpp::wrap(res.s3), Rcpp::Named("s4") = Rcpp::wrap(res.s4),
      Rcpp::Named("cm_sum") = res.cm_sum, Rcpp::Named("cm_sq") = res.cm_sq, Rcpp::Named("moved") = res.moved);
}
