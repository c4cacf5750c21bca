// Standalone test of the per-variable and partial-key risk engines, without R:
//   g++ -std=c++17 -O2 -I../../inst/include test_risk_vars.cpp -o build/test_risk_vars && build/test_risk_vars
// A per-variable plan that perturbs one key of a table in which every
// combination occurs is the block plan with one explicit block per value of
// the other key; both engines must agree, for all keys known and for the
// perturbed key alone.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "sdcRisk/sdcRisk.hpp"

namespace {

int failures = 0;
void check(bool ok, const char* what) {
  if (!ok) {
    ++failures;
    std::printf("FAIL: %s\n", what);
  }
}

bool close(double x, double y) {
  if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
  if (x == y) return true;
  return std::fabs(x - y) <= 1e-10 * std::max(std::fabs(x), std::fabs(y));
}

}  // namespace

int main() {
  // cells of x (3 levels, slowest) by y (2 levels): (x, y) = (0,0), (0,1), (1,0), ...
  std::vector<int> counts = {1, 3, 2, 1, 4, 1};
  std::vector<int> cx = {0, 0, 1, 1, 2, 2}, cy = {0, 1, 0, 1, 0, 1};
  // P_x, column-stochastic (p[r + 3 c] = P(x' = r | x = c))
  std::vector<double> px = {0.7, 0.2, 0.1, 0.15, 0.8, 0.05, 0.0, 0.3, 0.7};
  std::vector<int> stratum(6, 0);
  sdcRisk::VarsPlanView vp;
  vp.n_cells = 6;
  vp.counts = counts.data();
  vp.n_keys = 2;
  vp.codes = {cx.data(), cy.data()};
  vp.n_levels = {3, 2};
  vp.var_of_key = {0, -1};
  vp.n_vars = 1;
  vp.n_strata = 1;
  vp.stratum = stratum.data();
  vp.matrices = {px.data()};
  vp.known = {1, 1};

  // the same plan as blocks: cells {0, 2, 4} (y = 0) and {1, 3, 5} (y = 1)
  std::vector<int> start = {0, 3, 6}, cells = {0, 2, 4, 1, 3, 5};
  std::vector<double> theta = {std::nan(""), std::nan("")};
  std::vector<double> mat(px);
  mat.insert(mat.end(), px.begin(), px.end());
  std::vector<std::int64_t> mstart = {0, 9};
  sdcRisk::PlanView bp;
  bp.n_cells = 6;
  bp.counts = counts.data();
  bp.n_blocks = 2;
  bp.block_start = start.data();
  bp.block_cells = cells.data();
  bp.theta = theta.data();
  bp.matrix = mat.data();
  bp.matrix_start = mstart.data();

  std::vector<int> targets = {0, 1, 2, 3, 4, 5}, a;
  for (int k = 1; k <= 12; ++k) a.push_back(k);
  auto none = [] {};
  const auto rv = sdcRisk::vars_cell_risk(vp, targets, a, true, none);
  const auto rb = sdcRisk::cell_risk(bp, targets, a, none);
  bool same = true;
  for (std::size_t i = 0; i < rv.risk.size(); ++i)
    same = same && close(rv.risk[i], rb.risk[i]) && close(rv.log_prob[i], rb.log_prob[i]);
  for (std::size_t t = 0; t < targets.size(); ++t) same = same && close(rv.gamma[t], rb.gamma[t]);
  check(same, "per-variable plan equals its block plan (all keys known)");
  for (auto goal : {sdcRisk::Goal::AllMatches, sdcRisk::Goal::UniqueMatches, sdcRisk::Goal::SampleUniques}) {
    const auto mv = sdcRisk::vars_max_risk(vp, goal, none);
    const auto mb = sdcRisk::max_risk(bp, goal, none);
    check(close(mv.value, mb.value), "per-variable certificate equals the block certificate");
  }

  // an intruder who knows only x: D = cells with the target's x
  vp.known = {1, 0};
  std::vector<int> set_of = {0, 0, 1, 1, 2, 2};
  const auto kv = sdcRisk::vars_cell_risk(vp, targets, a, true, none);
  const auto kb = sdcRisk::block_known_cell_risk(bp, set_of, targets, a, none);
  same = true;
  for (std::size_t i = 0; i < kv.risk.size(); ++i)
    same = same && close(kv.risk[i], kb.risk[i]) && close(kv.log_prob[i], kb.log_prob[i]);
  check(same, "partial-key risk: per-variable engine equals block engine");
  const auto mkv = sdcRisk::vars_max_risk(vp, sdcRisk::Goal::AllMatches, none);
  const auto mkb = sdcRisk::block_known_max_risk(bp, set_of, sdcRisk::Goal::AllMatches, none);
  check(close(mkv.value, mkb.value), "partial-key certificate: both engines agree");

  // the search range cannot overflow on a tiny risk at a = 1 (issue 13, 2.13)
  check(sdcRisk::detail::search_limit(1e-25, 5) == 5, "search limit capped at max_s");
  check(sdcRisk::detail::search_limit(0.3, 100) == 3, "search limit 1 / best");

  if (failures == 0) std::printf("all per-variable risk tests passed\n");
  return failures == 0 ? 0 : 1;
}
