// R glue for the suppression core (inst/include/sdcRisk/table_components.hpp). The
// entry point runs through run_engine() (src/glue.h), where exceptions are caught.
#include <Rcpp.h>

#include <vector>

#include "glue.h"
#include "sdcRisk/table_components.hpp"

// Components of the graph linking the nodes of each relation; 1-based
// relations and nodes in, 1-based component labels out.
// [[Rcpp::export]]
SEXP cpp_relation_components(const Rcpp::IntegerVector& relation, const Rcpp::IntegerVector& node,
                             int n_relation, int n_node) {
  return sdcRisk_glue::run_engine([&] {
    const std::vector<int> comp = sdcRisk::relation_components(sdcRisk_glue::zero_based(relation),
                                                               sdcRisk_glue::zero_based(node), n_relation, n_node);
    return sdcRisk_glue::one_based(comp);
  });
}
