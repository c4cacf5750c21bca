#include <Rcpp.h>

#include <stdexcept>
#include <string>

#include "glue.h"
#include "sdcRisk/simulate.hpp"

namespace {
// The core's random number interface, answered by R's generator.
struct RUniform {
  double uniform() { return R::unif_rand(); }
};
}  // namespace

// Monte Carlo replications of a release on cells and counts: per cell the
// sums of the powers 1..4 of S - T, and the sums of B's correct-match
// probability and of its square. `target` is a 1-based cell id or NA.
// [[Rcpp::export]]
Rcpp::List cpp_simulate_release(const Rcpp::List& plan, int reps, int target) {
  sdcRisk_glue::PlanHolder holder(plan);
  sdcRisk::SimulationOptions opt;
  opt.reps = reps;
  opt.target = target == NA_INTEGER ? -1 : target - 1;
  RUniform rng;
  sdcRisk::SimulationSums res;
  try {
    res = sdcRisk::simulate_release(holder.view, opt, rng, sdcRisk_glue::interrupt_callback());
  } catch (const std::invalid_argument& e) {
    Rcpp::stop(std::string("internal error: ") + e.what());
  }
  return Rcpp::List::create(
      Rcpp::Named("s1") = Rcpp::wrap(res.s1), Rcpp::Named("s2") = Rcpp::wrap(res.s2),
      Rcpp::Named("s3") = Rcpp::wrap(res.s3), Rcpp::Named("s4") = Rcpp::wrap(res.s4),
      Rcpp::Named("cm_sum") = res.cm_sum, Rcpp::Named("cm_sq") = res.cm_sq,
      Rcpp::Named("moved") = static_cast<double>(res.moved_out));
}
