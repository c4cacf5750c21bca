// The entry points of the core on a plan. `plan` is the list engine_plan()
// builds in R (its kind chosen there and read once by make_engine_plan());
// cell ids are 1-based here and in the results. Each runs through
// run_engine(), which turns the core's exceptions into sdcRisk_core_error.
#include <Rcpp.h>

#include <string>
#include <vector>

#include "glue.h"
#include "sdcRisk/risk.hpp"

using sdcRisk_glue::make_engine_plan;
using sdcRisk_glue::run_engine;
using sdcRisk_glue::zero_based;

// Exact R_j(a, t), P(S_j = a | T), P(S_j = 0 | T) and gamma(j, t) of target
// cells for values of a (eq. 2.8, 4.3; for a per-variable plan gamma only
// when asked).
// [[Rcpp::export]]
SEXP cpp_cell_risk(const Rcpp::List& plan, const Rcpp::IntegerVector& targets, const Rcpp::IntegerVector& a,
                   bool gamma) {
  return run_engine([&] {
    const std::vector<int> tg = zero_based(targets), av(a.begin(), a.end());
    return sdcRisk_glue::wrap_table(make_engine_plan(plan)->cell_risk(tg, av, gamma));
  });
}

// The maximum of R_j(a, t) over what a goal covers, with its cell and a.
// [[Rcpp::export]]
SEXP cpp_max_risk(const Rcpp::List& plan, const std::string& goal) {
  return run_engine([&] { return sdcRisk_glue::wrap_max(make_engine_plan(plan)->max_risk(sdcRisk::parse_goal(goal))); });
}

// Exact calibration of the IFPR blocks' theta (sdcRisk::calibrate_ifpr).
// [[Rcpp::export]]
SEXP cpp_calibrate_ifpr(const Rcpp::List& plan, const std::string& goal, double target) {
  return run_engine([&] { return make_engine_plan(plan)->calibrate(sdcRisk::parse_goal(goal), target); });
}

// Expected records changed and distance moved on each key of a block plan
// (sdcRisk::block_key_damage): `codes` a list of 1-based category codes per
// key, `values` a list of the cells' values (NULL for an unordered key).
// [[Rcpp::export]]
SEXP cpp_key_damage(const Rcpp::List& plan, const Rcpp::List& codes, const Rcpp::List& values) {
  return run_engine([&] {
    std::vector<std::vector<int>> cd;
    std::vector<std::vector<double>> vl;
    for (R_xlen_t k = 0; k < codes.size(); ++k) {
      cd.push_back(zero_based(Rcpp::IntegerVector(codes[k])));
      if (Rf_isNull(values[k])) vl.emplace_back();
      else vl.push_back(Rcpp::as<std::vector<double>>(values[k]));
    }
    const sdcRisk::KeyDamage d = make_engine_plan(plan)->key_damage(cd, vl);
    return Rcpp::List::create(Rcpp::Named("changed") = Rcpp::wrap(d.changed),
                              Rcpp::Named("distance") = Rcpp::wrap(d.distance));
  });
}

// The released cell (block plan: an integer vector) or categories
// (per-variable plan: a matrix, one column per perturbed key) of every
// record, NA for records in no cell. One uniform of R's generator per
// record in a block (per record and perturbed key), in record order.
// [[Rcpp::export]]
SEXP cpp_draw(const Rcpp::List& plan, const Rcpp::IntegerVector& cell_id) {
  return run_engine([&] { return make_engine_plan(plan)->draw(cell_id); });
}

// The records a draw changes and their released cells (block plans).
// [[Rcpp::export]]
SEXP cpp_draw_changes(const Rcpp::List& plan, const Rcpp::IntegerVector& cell_id) {
  return run_engine([&] { return make_engine_plan(plan)->draw_changes(cell_id); });
}

// E(S_i | T) and V(S_i | T) (eq. 3.3, 3.6, 6.1) of every cell.
// [[Rcpp::export]]
SEXP cpp_moments(const Rcpp::List& plan) {
  return run_engine([&] { return make_engine_plan(plan)->moments(); });
}

// Expected changed records, total perturbation variance (eq. 6.3), and the
// probability that a unit of each cell keeps its cell.
// [[Rcpp::export]]
SEXP cpp_cost(const Rcpp::List& plan, bool stay) {
  return run_engine([&] { return make_engine_plan(plan)->cost(stay); });
}

// V(S_D | T) of the categories of one key, with the eq. 6.7 bound where
// there is one: `category` (1-based, one per cell) for a block plan, `var`
// (1-based perturbed variable) for a per-variable plan.
// [[Rcpp::export]]
SEXP cpp_category_moments(const Rcpp::List& plan, const Rcpp::IntegerVector& category, int n_cat, int var) {
  return run_engine([&] { return make_engine_plan(plan)->category_moments(zero_based(category), n_cat, var - 1); });
}

// Expected transitions of one variable of a block plan (rows: from,
// columns: to); `category` 1-based, one per cell.
// [[Rcpp::export]]
SEXP cpp_category_transitions(const Rcpp::List& plan, const Rcpp::IntegerVector& category, int n_cat) {
  return run_engine([&] { return make_engine_plan(plan)->category_transitions(zero_based(category), n_cat); });
}

// The transition matrix of block `block` (1-based) of a block plan.
// [[Rcpp::export]]
SEXP cpp_block_matrix(const Rcpp::List& plan, int block) {
  return run_engine([&] { return make_engine_plan(plan)->block_matrix(block - 1); });
}

// Monte Carlo replications of a release on cells and counts: per cell the
// sums of the powers 1..4 of S - T, the sums of B's correct-match
// probability and of its square, and the units moved. `target` is a 1-based
// cell id or NA.
// [[Rcpp::export]]
SEXP cpp_simulate(const Rcpp::List& plan, int reps, int target) {
  return run_engine([&] { return make_engine_plan(plan)->simulate(reps, target == NA_INTEGER ? -1 : target - 1); });
}
