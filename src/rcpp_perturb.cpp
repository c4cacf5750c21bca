#include <Rcpp.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "glue.h"
#include "sdcRisk/perturb.hpp"

namespace {
// The core's random number interface, answered by R's generator.
struct RUniform {
  double uniform() { return R::unif_rand(); }
};
}  // namespace

// New cell (1-based, NA kept) of every record under a plan.
// [[Rcpp::export]]
Rcpp::IntegerVector cpp_pram_draw(const Rcpp::List& plan, const Rcpp::IntegerVector& cell_id) {
  sdcRisk_glue::PlanHolder holder(plan);
  const std::size_t n = cell_id.size();
  std::vector<int> cells(n);
  for (std::size_t i = 0; i < n; ++i) cells[i] = cell_id[i] == NA_INTEGER ? -1 : cell_id[i] - 1;
  RUniform rng;
  std::vector<int> out;
  try {
    out = sdcRisk::pram_draw(holder.view, cells.data(), n, rng, sdcRisk_glue::interrupt_callback());
  } catch (const std::invalid_argument& e) {
    Rcpp::stop(std::string("internal error: ") + e.what());
  }
  Rcpp::IntegerVector res(n);
  for (std::size_t i = 0; i < n; ++i) res[i] = out[i] < 0 ? NA_INTEGER : out[i] + 1;
  return res;
}
