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
#include "sdcRisk/risk_vars.hpp"

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

// Owns 0-based copies of a per-variable plan and exposes a VarsPlanView.
struct VarsPlanHolder {
  InterruptHookGuard interrupt_guard;
  std::vector<int> counts, stratum;
  std::vector<std::vector<int>> codes;
  std::vector<std::vector<double>> mats;
  sdcRisk::VarsPlanView view;

  explicit VarsPlanHolder(const Rcpp::List& plan) {
    Rcpp::IntegerVector cnt = plan["counts"], st = plan["stratum"], nl = plan["n_levels"], vk = plan["var_of_key"];
    Rcpp::LogicalVector kn = plan["known"];
    Rcpp::List cd = plan["codes"], mt = plan["matrices"];
    const int n_strata = Rcpp::as<int>(plan["n_strata"]), n_vars = Rcpp::as<int>(plan["n_vars"]);
    const R_xlen_t nk = cd.size();
    if (nl.size() != nk || vk.size() != nk || kn.size() != nk || st.size() != cnt.size() ||
        mt.size() != static_cast<R_xlen_t>(n_strata) * n_vars)
      Rcpp::stop("internal error: malformed per-variable plan");
    counts.assign(cnt.begin(), cnt.end());
    stratum.resize(st.size());
    for (R_xlen_t i = 0; i < st.size(); ++i) stratum[i] = st[i] - 1;
    view.n_cells = static_cast<int>(counts.size());
    view.n_keys = static_cast<int>(nk);
    codes.resize(nk);
    for (R_xlen_t k = 0; k < nk; ++k) {
      Rcpp::IntegerVector c = cd[k];
      if (c.size() != cnt.size()) Rcpp::stop("internal error: malformed per-variable plan");
      codes[k].resize(c.size());
      for (R_xlen_t i = 0; i < c.size(); ++i) codes[k][i] = c[i] == NA_INTEGER ? -1 : c[i] - 1;
      view.codes.push_back(codes[k].data());
      view.n_levels.push_back(nl[k]);
      view.var_of_key.push_back(vk[k] - 1);
      view.known.push_back(kn[k] == TRUE ? 1 : 0);
    }
    for (R_xlen_t m = 0; m < mt.size(); ++m) {
      Rcpp::NumericVector x = mt[m];
      mats.emplace_back(x.begin(), x.end());
    }
    for (R_xlen_t m = 0; m < mt.size(); ++m) {
      const int u = static_cast<int>(m % n_vars);
      int k = -1;
      for (R_xlen_t kk = 0; kk < nk; ++kk)
        if (vk[kk] - 1 == u) k = static_cast<int>(kk);
      if (k < 0 || static_cast<R_xlen_t>(mats[m].size()) != static_cast<R_xlen_t>(nl[k]) * nl[k])
        Rcpp::stop("internal error: malformed per-variable plan");
      view.matrices.push_back(mats[m].data());
    }
    view.counts = counts.data();
    view.stratum = stratum.data();
    view.n_strata = n_strata;
    view.n_vars = n_vars;
  }
};

inline auto interrupt_callback() {
  return []() { Rcpp::checkUserInterrupt(); };
}

}  // namespace sdcRisk_glue

#endif  // SDCRISK_GLUE_H
