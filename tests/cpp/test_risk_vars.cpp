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

#include "testutil.hpp"

namespace {

using testutil::check;
using testutil::close;

}  // namespace

int main() {
  // cells of x (3 levels, slowest) by y (2 levels): (x, y) = (0,0), (0,1), (1,0), ...
  testutil::VarsPlan plan;
  plan.counts = {1, 3, 2, 1, 4, 1};
  plan.codes = {{0, 0, 1, 1, 2, 2}, {0, 1, 0, 1, 0, 1}};
  // P_x, column-stochastic (p[r + 3 c] = P(x' = r | x = c))
  const std::vector<double> px = {0.7, 0.2, 0.1, 0.15, 0.8, 0.05, 0.0, 0.3, 0.7};
  plan.stratum.assign(6, 0);
  plan.n_levels = {3, 2};
  plan.var_of_key = {0, -1};
  plan.n_vars = 1;
  plan.matrices = {px};
  plan.known = {1, 1};
  sdcRisk::VarsPlanView vp = plan.view();

  // the same plan as blocks: cells {0, 2, 4} (y = 0) and {1, 3, 5} (y = 1)
  testutil::BlockPlan blocks{plan.counts, {0, 3, 6}, {0, 2, 4, 1, 3, 5}, {std::nan(""), std::nan("")}, px, {0, 9}};
  blocks.mat.insert(blocks.mat.end(), px.begin(), px.end());
  const sdcRisk::PlanView bp = blocks.view();

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

  // a product of transition probabilities below the smallest double is
  // refused with the core's underflow type (a std::domain_error), never
  // rounded to an impossible event
  {
    testutil::VarsPlan tiny;
    tiny.counts = {1, 1};
    tiny.codes = {{0, 1}, {0, 1}};
    tiny.stratum = {0, 0};
    tiny.n_levels = {2, 2};
    tiny.var_of_key = {0, 1};
    tiny.n_vars = 2;
    const std::vector<double> m = {1.0 - 1e-200, 1e-200, 1e-200, 1.0 - 1e-200};
    tiny.matrices = {m, m};
    tiny.known = {1, 1};
    const sdcRisk::VarsPlanView tv = tiny.view();
    auto run = [&] { sdcRisk::vars_max_risk(tv, sdcRisk::Goal::AllMatches, none); };
    check(testutil::throws<sdcRisk::underflow_error>(run), "underflow: sdcRisk::underflow_error");
    check(testutil::throws<std::domain_error>(run), "underflow: a std::domain_error");
  }

  return testutil::report("test_risk_vars");
}
