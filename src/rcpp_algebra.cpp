#include <Rcpp.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "glue.h"
#include "sdcRisk/algebra.hpp"

// E(S_i | T) and V(S_i | T) of every cell under a block plan.
// [[Rcpp::export]]
Rcpp::List cpp_block_moments(const Rcpp::List& plan) {
  sdcRisk_glue::PlanHolder holder(plan);
  const sdcRisk::CellMoments m = sdcRisk::block_moments(holder.view);
  return Rcpp::List::create(Rcpp::Named("mean") = Rcpp::wrap(m.mean), Rcpp::Named("var") = Rcpp::wrap(m.var));
}

// Expected changed records, total variance (eq. 6.3), and p_ii of every cell.
// [[Rcpp::export]]
Rcpp::List cpp_block_cost(const Rcpp::List& plan) {
  sdcRisk_glue::PlanHolder holder(plan);
  const sdcRisk::BlockCost c = sdcRisk::block_cost(holder.view);
  return Rcpp::List::create(Rcpp::Named("changed") = c.changed, Rcpp::Named("variance") = c.variance,
                            Rcpp::Named("stay") = Rcpp::wrap(sdcRisk::block_stay(holder.view)));
}

// V(S_D | T) and the eq. 6.7 bound for the categories of one variable;
// `category` is 1-based, one per cell.
// [[Rcpp::export]]
Rcpp::List cpp_block_category_moments(const Rcpp::List& plan, const Rcpp::IntegerVector& category, int n_cat) {
  sdcRisk_glue::PlanHolder holder(plan);
  std::vector<int> cat(category.size());
  for (R_xlen_t i = 0; i < category.size(); ++i) cat[i] = category[i] - 1;
  sdcRisk::CategoryMoments m;
  try {
    m = sdcRisk::block_category_moments(holder.view, cat.data(), n_cat);
  } catch (const std::invalid_argument& e) {
    Rcpp::stop(std::string("internal error: ") + e.what());
  }
  return Rcpp::List::create(Rcpp::Named("var") = Rcpp::wrap(m.var), Rcpp::Named("bound") = Rcpp::wrap(m.bound));
}

// Expected transitions of one variable (rows: from, columns: to); `category`
// 1-based, one per cell.
// [[Rcpp::export]]
Rcpp::NumericMatrix cpp_block_category_transitions(const Rcpp::List& plan, const Rcpp::IntegerVector& category,
                                                   int n_cat) {
  sdcRisk_glue::PlanHolder holder(plan);
  std::vector<int> cat(category.size());
  for (R_xlen_t i = 0; i < category.size(); ++i) cat[i] = category[i] - 1;
  std::vector<double> t;
  try {
    t = sdcRisk::block_category_transitions(holder.view, cat.data(), n_cat);
  } catch (const std::invalid_argument& e) {
    Rcpp::stop(std::string("internal error: ") + e.what());
  }
  Rcpp::NumericMatrix out(n_cat, n_cat);
  for (int x = 0; x < n_cat; ++x)
    for (int y = 0; y < n_cat; ++y) out(x, y) = t[static_cast<std::size_t>(x) * n_cat + y];
  return out;
}

// The transition matrix of block `block` (1-based).
// [[Rcpp::export]]
Rcpp::NumericMatrix cpp_block_matrix(const Rcpp::List& plan, int block) {
  sdcRisk_glue::PlanHolder holder(plan);
  if (block < 1 || block > holder.view.n_blocks) Rcpp::stop("internal error: block out of range");
  const int m = holder.view.block_size(block - 1);
  const std::vector<double> p = sdcRisk::block_matrix(holder.view, block - 1);
  Rcpp::NumericMatrix out(m, m);
  std::copy(p.begin(), p.end(), out.begin());
  return out;
}
