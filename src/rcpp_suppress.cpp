// R glue for the suppression core (inst/include/sdcRisk/suppress.hpp).
#include <Rcpp.h>

#include <string>
#include <vector>

#include "sdcRisk/suppress.hpp"

// Components of the graph linking the nodes of each relation; 1-based
// relations and nodes in, 1-based component labels out.
// [[Rcpp::export]]
Rcpp::IntegerVector cpp_relation_components(const Rcpp::IntegerVector& relation,
                                            const Rcpp::IntegerVector& node, int n_relation,
                                            int n_node) {
  std::vector<int> r(relation.begin(), relation.end()), v(node.begin(), node.end());
  for (auto& x : r) --x;
  for (auto& x : v) --x;
  std::vector<int> comp;
  try {
    comp = sdcRisk::relation_components(r, v, n_relation, n_node);
  } catch (const std::invalid_argument& e) {
    Rcpp::stop(std::string("internal error: ") + e.what());
  }
  Rcpp::IntegerVector out(comp.size());
  for (std::size_t i = 0; i < comp.size(); ++i) out[i] = comp[i] + 1;
  return out;
}

// Candidate step by Gaussian elimination (sdcRisk::gauss_candidates()): X
// given as incidences (inner cell, cell), 1-based; `primary` and `order`
// 1-based cells. Returns whether it completed within `max_work` and, for
// each cell of `order`, 0 (published) or the position in `primary` of the
// cell its publication would disclose (suppressed).
// [[Rcpp::export]]
Rcpp::List cpp_gauss_candidates(const Rcpp::IntegerVector& inner, const Rcpp::IntegerVector& cell,
                                int n_inner, int n_cell, const Rcpp::IntegerVector& primary,
                                const Rcpp::IntegerVector& order, double max_work) {
  if (inner.size() != cell.size()) Rcpp::stop("internal error: incidence lengths differ");
  std::vector<int> start(static_cast<std::size_t>(n_cell) + 1, 0);
  for (R_xlen_t k = 0; k < cell.size(); ++k) {
    if (cell[k] < 1 || cell[k] > n_cell) Rcpp::stop("internal error: cell out of range");
    ++start[cell[k]];
  }
  for (int j = 0; j < n_cell; ++j) start[j + 1] += start[j];
  std::vector<int> fill(start.begin(), start.end() - 1), row(static_cast<std::size_t>(cell.size()));
  for (R_xlen_t k = 0; k < cell.size(); ++k) row[fill[cell[k] - 1]++] = inner[k] - 1;
  std::vector<int> prim(primary.begin(), primary.end()), ord(order.begin(), order.end());
  for (auto& x : prim) --x;
  for (auto& x : ord) --x;
  sdcRisk::GaussResult res;
  try {
    res = sdcRisk::gauss_candidates(n_inner, start, row, prim, ord, max_work,
                                    []() { Rcpp::checkUserInterrupt(); });
  } catch (const std::invalid_argument& e) {
    Rcpp::stop(std::string("internal error: ") + e.what());
  }
  Rcpp::IntegerVector supp(res.suppress.begin(), res.suppress.end());
  return Rcpp::List::create(Rcpp::Named("completed") = res.completed,
                            Rcpp::Named("suppress") = supp);
}
