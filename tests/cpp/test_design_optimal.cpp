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
// `outside` false: the cells in blocks only.
double enumerated_ratio(const sdcRisk::PlanView& plan, const std::vector<double>& bound, sdcRisk::Goal goal,
                        bool outside = true) {
  std::vector<int> block_of, pos_of;
  sdcRisk::locate_cells(plan, block_of, pos_of);
  double best = 0.0;
  for (int j = 0; j < plan.n_cells; ++j) {
    const int t = plan.counts[j];
    if (block_of[j] < 0) {
      if (!outside) continue;
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

// The largest R_t(a, t) / bound_t by the core's certificate with per-cell
// weights (risk.hpp max_risk(), as ifpr_design() certifies per-cell
// bounds): with w_t = b_min / b_t its maximum is b_min times the ratio.
double weighted_ratio(const sdcRisk::PlanView& plan, const std::vector<double>& bound, sdcRisk::Goal goal) {
  const double bmin = *std::min_element(bound.begin(), bound.end());
  std::vector<double> w;
  for (double b : bound) w.push_back(bmin / b);
  const sdcRisk::MaxRisk mx = sdcRisk::max_risk(plan, goal, w, [] {});
  return std::isnan(mx.value) ? 0.0 : mx.value / bmin;
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
      const double e = enumerated_ratio(plan, bound, goal);
      check(testutil::close(weighted_ratio(plan, bound, goal), e, 1e-11),
            "weighted certificate equals enumeration, rep " + std::to_string(rep));
      // the design's check of one block at a time, over the blocks
      double blocks = 0.0;
      for (int b = 0; b < plan.n_blocks; ++b)
        blocks = std::max(blocks, sdcRisk::block_bound_check(plan, b, bound.data(), goal).ratio);
      check(testutil::close(blocks, enumerated_ratio(plan, bound, goal, false), 1e-11),
            "block check equals enumeration, rep " + std::to_string(rep));
    }
  }
}

// A set of cells on two keys (codes 0..3 and 0..2) with small counts.
struct RandomSet {
  std::vector<int> counts, k1, k2;
  std::vector<double> bound;
  std::vector<char> need;
  sdcRisk::KeySpace ks;
  RandomSet(Lcg& rng, int n, double xi) {
    for (int i = 0; i < n; ++i) {
      counts.push_back(1 + rng.below(4));
      k1.push_back(i % 4);
      k2.push_back(i / 4);
      bound.push_back(xi);
      need.push_back(counts.back() * xi < 1);
    }
    ks.n_cells = n;
    ks.codes = {k1.data(), k2.data()};
    ks.value = {nullptr, nullptr};
  }
};

// A fitted block as a one-block plan: its matrix (IFPR or explicit).
testutil::BlockPlan as_plan(const RandomSet& rs, const sdcRisk::FittedBlock& fb) {
  testutil::BlockPlan bp;
  const int m = static_cast<int>(fb.cells.size());
  for (int c : fb.cells) bp.counts.push_back(rs.counts[c]);
  bp.start = {0, m};
  for (int i = 0; i < m; ++i) bp.cells.push_back(i);
  bp.theta = {fb.theta};
  bp.mstart = {fb.matrix.empty() ? -1 : 0};
  bp.mat = fb.matrix;
  return bp;
}

// Every block of a design meets its cells' bounds (by enumeration), keeps
// the counts (unbiased, eq. 3.3), never makes a move likelier than staying,
// and every cell needing protection is in exactly one block.
void check_design(const RandomSet& rs, const sdcRisk::SetDesign& d, const std::string& what) {
  std::vector<int> seen(rs.counts.size(), 0);
  for (const auto& fb : d.blocks) {
    const testutil::BlockPlan bp = as_plan(rs, fb);
    const sdcRisk::PlanView v = bp.view();
    std::vector<double> bnd;
    for (int c : fb.cells) {
      ++seen[c];
      bnd.push_back(rs.bound[c]);
    }
    // enumeration where the outcomes are few, else the check tested above
    double outcomes = 1.0;
    for (int c : bp.counts) outcomes *= std::pow(static_cast<double>(bp.counts.size()), c);
    const double ratio = outcomes <= 2e4 ? enumerated_ratio(v, bnd, sdcRisk::Goal::AllMatches)
                                         : weighted_ratio(v, bnd, sdcRisk::Goal::AllMatches);
    check(ratio <= 1.0, what + ": a block meets its bounds");
    const int m = v.block_size(0);
    for (int j = 0; j < m; ++j) {
      double mean = 0.0;
      for (int c = 0; c < m; ++c) mean += v.counts[c] * v.p(0, j, c);
      check(std::fabs(mean - v.counts[j]) < 1e-9, what + ": E S = T");
      for (int i = 0; i < m; ++i) check(v.p(0, i, j) <= v.p(0, j, j) + 1e-12, what + ": p_ij <= p_jj");
    }
  }
  for (std::size_t c = 0; c < rs.counts.size(); ++c) {
    check(seen[c] <= 1, what + ": a cell in two blocks");
    if (rs.need[c]) check(seen[c] == 1, what + ": a cell needing protection in no block");
  }
}

void test_designer() {
  Lcg rng(11);
  int matrix_blocks = 0;
  for (int rep = 0; rep < 12; ++rep) {
    const double xi = rep % 2 ? 0.3 : 0.2;
    RandomSet rs(rng, 9 + rng.below(2), xi);
    for (int exhaustive : {0, 10}) {
      sdcRisk::DesignOptions opt;
      opt.weight = {1.0, 1.0};
      opt.exhaustive_cells = exhaustive;
      sdcRisk::SetDesigner designer(rs.counts, rs.bound, rs.need, rs.ks, opt);
      const sdcRisk::SetDesign d = designer.run([] {});
      const std::string what = "rep " + std::to_string(rep) + (exhaustive ? " exhaustive" : " heuristic");
      if (!d.lacks.empty()) continue;
      check_design(rs, d, what);
      for (const auto& fb : d.blocks) matrix_blocks += !fb.matrix.empty();
    }
  }
  check(matrix_blocks > 0, "some designs use gravity flows");
}

}  // namespace

int main() {
  test_bound_check();
  test_designer();
  return testutil::report("test_design_optimal");
}
