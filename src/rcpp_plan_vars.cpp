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

}  // namespace

// New category codes (1-based, NA for records in no cell) of every record,
// one column per perturbed variable.
// [[Rcpp::export]]
Rcpp::IntegerMatrix cpp_vars_draw(const Rcpp::List& plan, const Rcpp::IntegerVector& cell_id) {
  sdcRisk_glue::VarsPlanHolder holder(plan);
  const sdcRisk::VarsIndex ix(holder.view);
  const std::size_t n = cell_id.size();
  std::vector<int> cells(n);
  for (std::size_t i = 0; i < n; ++i) cells[i] = cell_id[i] == NA_INTEGER ? -1 : cell_id[i] - 1;
  RUniform rng;
  std::vector<int> out;
  try {
    out = sdcRisk::vars_draw(ix, cells.data(), n, rng, sdcRisk_glue::interrupt_callback());
  } catch (const std::invalid_argument& e) {
    Rcpp::stop(std::string("internal error: ") + e.what());
  }
  Rcpp::IntegerMatrix res(static_cast<int>(n), ix.n_vars());
  for (std::size_t i = 0; i < out.size(); ++i) res[i] = out[i] < 0 ? NA_INTEGER : out[i] + 1;
  return res;
}

// E(S_j | T) and V(S_j | T) (eq. 3.6) of every cell of the plan.
// [[Rcpp::export]]
Rcpp::List cpp_vars_moments(const Rcpp::List& plan) {
  sdcRisk_glue::VarsPlanHolder holder(plan);
  sdcRisk::VarsCellMoments m;
  try {
    const sdcRisk::VarsIndex ix(holder.view);
    m = sdcRisk::vars_cell_moments(ix);
  } catch (const std::invalid_argument& err) {
    Rcpp::stop(std::string("internal error: ") + err.what());
  }
  return Rcpp::List::create(Rcpp::Named("mean") = Rcpp::wrap(m.mean), Rcpp::Named("var") = Rcpp::wrap(m.var));
}

// E(S_D | T) and V(S_D | T) for every category D of perturbed variable v
// (1-based).
// [[Rcpp::export]]
Rcpp::List cpp_vars_category_moments(const Rcpp::List& plan, int v) {
  sdcRisk_glue::VarsPlanHolder holder(plan);
  const sdcRisk::VarsIndex ix(holder.view);
  std::vector<double> mean, var;
  sdcRisk::vars_category_moments(ix, v - 1, mean, var);
  return Rcpp::List::create(Rcpp::Named("mean") = Rcpp::wrap(mean), Rcpp::Named("var") = Rcpp::wrap(var));
}

// Expected changed records, total perturbation variance, and the
// probability that a unit of each cell keeps its cell.
// [[Rcpp::export]]
Rcpp::List cpp_vars_cost(const Rcpp::List& plan) {
  sdcRisk_glue::VarsPlanHolder holder(plan);
  const sdcRisk::VarsIndex ix(holder.view);
  const sdcRisk::PlanCost cost = sdcRisk::vars_cost(ix);
  return Rcpp::List::create(Rcpp::Named("changed") = cost.changed, Rcpp::Named("variance") = cost.variance,
                            Rcpp::Named("stay") = Rcpp::wrap(sdcRisk::vars_stay(ix)));
}

// Monte Carlo replications of a per-variable release, summed as
// cpp_simulate_release() sums them. `target` is a 1-based cell id or NA.
// [[Rcpp::export]]
Rcpp::List cpp_vars_simulate(const Rcpp::List& plan, int reps, int target) {
  sdcRisk_glue::VarsPlanHolder holder(plan);
  const sdcRisk::VarsIndex ix(holder.view);
  RUniform rng;
  sdcRisk::VarsSimulation res;
  try {
    res = sdcRisk::vars_simulate(ix, reps, target == NA_INTEGER ? -1 : target - 1, rng,
                                 sdcRisk_glue::interrupt_callback());
  } catch (const std::invalid_argument& e) {
    Rcpp::stop(std::string("internal error: ") + e.what());
  }
  return Rcpp::List::create(
      Rcpp::Named("s1") = Rcpp::wrap(res.s1), Rcpp::Named("s2") = Rcpp::wrap(res.s2),
      Rcpp::Named("s3") = Rcpp::wrap(res.s3), Rcpp::Named("s4") = Rcpp::wrap(res.s4),
      Rcpp::Named("cm_sum") = res.cm_sum, Rcpp::Named("cm_sq") = res.cm_sq, Rcpp::Named("moved") = res.moved);
}
