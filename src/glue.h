// Shared pieces of the Rcpp glue: the plan as R hands it over, and the
// interrupt callback passed to long loops in the core.
#ifndef SDCRISK_GLUE_H
#define SDCRISK_GLUE_H

#include <Rcpp.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sdcRisk/logdist.hpp"
#include "sdcRisk/plan.hpp"

namespace sdcRisk_glue {

// While alive, lets the core's long inner loops (sdcRisk::interrupt_hook())
// check for a user interrupt.
struct InterruptHookGuard {
  InterruptHookGuard() { sdcRisk::interrupt_hook() = []() { Rcpp::checkUserInterrupt(); }; }
  ~InterruptHookGuard() { sdcRisk::interrupt_hook() = nullptr; }
  InterruptHookGuard(const InterruptHookGuard&) = delete;
  InterruptHookGuard& operator=(const InterruptHookGuard&) = delete;
};

// Owns 0-based copies of a plan's index vectors and exposes a PlanView.
struct PlanHolder {
  InterruptHookGuard interrupt_guard;
  std::vector<int> counts, block_start, block_cells;
  std::vector<double> theta, matrix;
  std::vector<std::int64_t> matrix_start;
  sdcRisk::PlanView view;

  explicit PlanHolder(const Rcpp::List& plan) {
    Rcpp::IntegerVector cnt = plan["counts"], bs = plan["block_start"], bc = plan["block_cells"];
    Rcpp::NumericVector th = plan["theta"], mat = plan["matrix"], ms = plan["matrix_start"];
    counts.assign(cnt.begin(), cnt.end());
    block_start.assign(bs.begin(), bs.end());
    block_cells.resize(bc.size());
    for (R_xlen_t i = 0; i < bc.size(); ++i) block_cells[i] = bc[i] - 1;
    theta.assign(th.begin(), th.end());
    matrix.assign(mat.begin(), mat.end());
    matrix_start.resize(ms.size());
    for (R_xlen_t i = 0; i < ms.size(); ++i)
      matrix_start[i] = Rcpp::NumericVector::is_na(ms[i]) ? -1 : static_cast<std::int64_t>(ms[i]);
    const int nb = static_cast<int>(theta.size());
    if (static_cast<int>(block_start.size()) != nb + 1 || static_cast<int>(matrix_start.size()) != nb)
      Rcpp::stop("internal error: malformed plan");
    view.n_cells = static_cast<int>(counts.size());
    view.counts = counts.data();
    view.n_blocks = nb;
    view.block_start = block_start.data();
    view.block_cells = block_cells.data();
    view.theta = theta.data();
    view.matrix = matrix.data();
    view.matrix_start = matrix_start.data();
  }
};

inline auto interrupt_callback() {
  return []() { Rcpp::checkUserInterrupt(); };
}

}  // namespace sdcRisk_glue

#endif  // SDCRISK_GLUE_H
