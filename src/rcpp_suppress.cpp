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
