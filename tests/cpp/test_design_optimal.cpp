// Standalone test of the least-damage design's core (design_optimal.hpp),
// without R:
//   g++ -std=c++17 -O2 -I../../inst/include test_design_optimal.cpp -o build/t && build/t
// Every exact check against enumeration of every perturbation outcome.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "testutil.hpp"

namespace {

using testutil::check;
using testutil::Lcg;

// The largest R_t(a) / bound_t over every cell of the plan and every a the
// goal covers up to ceil(1 / bound_t) (beyond, R <= 1 / a <= bound_t), by
// enumeration (cells outside blocks: R = 1 / T at a = T).
double enumerated_ratio(const sdcRisk::PlanView& plan, const std::vector<double>& bound, sdcRisk::Goal goal) {
  std::vector<int> block_of, pos_of;
  sdcRisk::locate_cells(plan, block_of, pos_of);
  double best = 0.0;
  for (int j = 0; j < plan.n_cells; ++j) {
    const int t = plan.counts[j];
    if (block_of[j] < 0) {
      if (goal == sdcRisk::Goal::AllMatches) best = std::max(best, 1.0 / t / bound[j]);
      else if (t == 1) best = std::max(best, 1.0 / bound[j]);
      continue;
    }
    if (goal == sdcRisk::Goal::SampleUniques && t != 1) continue;
    std::vector<double> total, joint;
    testutil::enumerate(plan, block_of[j], pos_of[j], total, joint);
    const int n = static_cast<int>(total.size()) - 1;
    const int A = goal == sdcRisk::Goal::AllMatches ? std::min(n, static_cast<int>(std::ceil(1 / bound[j]))) : 1;
    for (int a = 1; a <= A; ++a)
      if (total[a] > 0) best = std::max(best, joint[a] / total[a] / a / bound[j]);
  }
  return best;
}

// A random plan of a few small cells: an IFPR block, a matrix block and
// cells outside blocks.
testutil::BlockPlan random_plan(Lcg& rng) {
  testutil::BlockPlan bp;
  const int m1 = 2 + rng.below(3), m2 = 2 + rng.below(2), out = 1 + rng.below(2);
  for (int c = 0; c < m1 + m2 + out; ++c) bp.counts.push_back(1 + rng.below(3));
  bp.start = {0, m1, m1 + m2};
  for (int c = 0; c < m1 + m2; ++c) bp.cells.push_back(c);
  int tmin = 99;
  for (int c = 0; c < m1; ++c) tmin = std::min(tmin, bp.counts[c]);
  bp.theta = {tmin * rng.uniform(), std::nan("")};
  bp.mat = testutil::random_matrix(rng, m2, true);
  bp.mstart = {-1, 0};
  return bp;
}

void test_bound_check() {
  Lcg rng(7);
  const sdcRisk::Goal goals[] = {sdcRisk::Goal::AllMatches, sdcRisk::Goal::UniqueMatches,
                                 sdcRisk::Goal::SampleUniques};
  for (int rep = 0; rep < 60; ++rep) {
    const testutil::BlockPlan bp = random_plan(rng);
    const sdcRisk::PlanView plan = bp.view();
    std::vector<double> bound(bp.counts.size());
    for (double& b : bound) b = 0.15 + 0.85 * rng.uniform();
    for (sdcRisk::Goal goal : goals) {
      const sdcRisk::BoundCheck c = sdcRisk::plan_bound_check(plan, bound.data(), goal, [] {});
      const double e = enumerated_ratio(plan, bound, goal);
      check(testutil::close(c.ratio, e, 1e-11), "bound check equals enumeration, rep " + std::to_string(rep));
    }
  }
}

}  // namespace

int main() {
  test_bound_check();
  return testutil::report("test_design_optimal");
}
