// Standalone test of the certificate with per-cell weights (max over cells
// and a of w_j R_j(a, t), risk.hpp and risk_known.hpp), without R:
//   g++ -std=c++17 -O2 -I../../inst/include test_risk_weights.cpp -o build/test_risk_weights
// 1. Random block plans (IFPR blocks sharing designs, matrix blocks, cells
//    outside blocks) with random weights, ties among them and extreme
//    ones: max_risk() against the maximum over every cell and every a of
//    w_j times cell_risk() (itself tested against enumeration in
//    test_core), for every goal; the reported cell and a attain it.
// 2. The same for an intruder who knows only some keys (block_known_*),
//    cells grouped into sets at random.
// 3. Weights all 1 give the result without weights, bit for bit.
// 4. ifpr_block_max() and calibrate_ifpr() with weights: the calibrated
//    theta meets the weighted target, is at most the unweighted one, and
//    lower weights never need more theta.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "testutil.hpp"

namespace {

using testutil::BlockPlan;
using testutil::check;
using testutil::close;
using testutil::Lcg;

const sdcRisk::Goal kGoals[] = {sdcRisk::Goal::AllMatches, sdcRisk::Goal::UniqueMatches,
                                sdcRisk::Goal::SampleUniques};

// Random counts; IFPR blocks of 2-4 cells (every other one a copy of the
// design of the one before: same size, counts and theta), a matrix block,
// and cells left outside.
BlockPlan random_block_plan(Lcg& rng) {
  BlockPlan bp;
  bp.start = {0};
  const int n_ifpr = 1 + rng.below(3);
  for (int b = 0; b < n_ifpr; ++b) {
    const int m = 2 + rng.below(3);
    std::vector<int> cnt(m);
    for (int& c : cnt) c = 1 + rng.below(3);
    const double th = *std::min_element(cnt.begin(), cnt.end()) * (0.2 + 0.8 * rng.uniform());
    for (int copy = 0; copy < (rng.uniform() < 0.5 ? 2 : 1); ++copy) {
      for (int c : cnt) {
        bp.cells.push_back(static_cast<int>(bp.counts.size()));
        bp.counts.push_back(c);
      }
      bp.start.push_back(static_cast<int>(bp.cells.size()));
      bp.theta.push_back(th);
      bp.mstart.push_back(-1);
    }
  }
  if (rng.uniform() < 0.7) {
    const int m = 2 + rng.below(2);
    bp.mstart.push_back(0);
    bp.theta.push_back(std::nan(""));
    bp.mat = testutil::random_matrix(rng, m, true);
    for (int c = 0; c < m; ++c) {
      bp.cells.push_back(static_cast<int>(bp.counts.size()));
      bp.counts.push_back(1 + rng.below(3));
    }
    bp.start.push_back(static_cast<int>(bp.cells.size()));
  }
  for (int k = rng.below(3); k > 0; --k) bp.counts.push_back(1 + rng.below(4));
  return bp;
}

// Random weights in (0, 1]: some 1, some tiny, some shared by several cells.
std::vector<double> random_weights(Lcg& rng, int n) {
  std::vector<double> w(n);
  for (double& x : w) {
    const double u = rng.uniform();
    x = u < 0.2 ? 1.0 : u < 0.3 ? 1e-6 * rng.uniform() + 1e-9 : u < 0.5 ? 0.5 : rng.uniform() + 1e-12;
    x = std::min(1.0, x);
  }
  return w;
}

struct Reference {
  double value = std::nan("");
  std::vector<double> risk;  // w_j R_j(a, t) at j * A + a - 1
  int A = 0;
};

// The weighted maximum over every cell and every a the goal covers, from
// the per-cell risks of `table(targets, a)`.
template <class Table>
Reference exhaustive(const std::vector<int>& counts, const std::vector<double>& w, sdcRisk::Goal goal,
                     Table&& table) {
  Reference ref;
  for (int c : counts) ref.A += c;
  const int n = static_cast<int>(counts.size());
  std::vector<int> targets(n), a(ref.A);
  for (int j = 0; j < n; ++j) targets[j] = j;
  for (int k = 0; k < ref.A; ++k) a[k] = k + 1;
  const sdcRisk::CellRiskTable cr = table(targets, a);
  ref.risk.assign(cr.risk.size(), std::nan(""));
  for (int j = 0; j < n; ++j) {
    if (goal == sdcRisk::Goal::SampleUniques && counts[j] != 1) continue;
    const int top = goal == sdcRisk::Goal::AllMatches ? ref.A : 1;
    for (int k = 0; k < top; ++k) {
      const double r = cr.risk[static_cast<std::size_t>(j) * ref.A + k];
      if (std::isnan(r)) continue;
      const double x = sdcRisk::cell_weight(w, j) * r;
      ref.risk[static_cast<std::size_t>(j) * ref.A + k] = x;
      if (std::isnan(ref.value) || x > ref.value) ref.value = x;
    }
  }
  return ref;
}

// The certificate equals the reference, and its (cell, a) attains it.
void check_max(const sdcRisk::MaxRisk& mx, const Reference& ref, const std::string& what) {
  bool ok = close(mx.value, ref.value, 1e-12);
  if (ok && !std::isnan(ref.value)) {
    ok = mx.cell >= 0 && mx.a >= 1 && mx.a <= ref.A &&
         close(ref.risk[static_cast<std::size_t>(mx.cell) * ref.A + mx.a - 1], mx.value, 1e-12);
  }
  check(ok, what + ": weighted certificate equals the exhaustive maximum (" + std::to_string(mx.value) + " vs " +
                std::to_string(ref.value) + ")");
}

bool identical(const sdcRisk::MaxRisk& x, const sdcRisk::MaxRisk& y) {
  const bool same_value = (std::isnan(x.value) && std::isnan(y.value)) || x.value == y.value;
  return same_value && x.cell == y.cell && x.a == y.a && x.targets_evaluated == y.targets_evaluated;
}

// 1-3: block plans, and an intruder who knows some keys: cells grouped
// into sets D at random (cells of one set may lie in several blocks and
// outside them)
void test_block_plans() {
  auto none = [] {};
  for (int seed = 1; seed <= 200; ++seed) {
    Lcg rng(300 + seed);
    const BlockPlan bp = random_block_plan(rng);
    const sdcRisk::PlanView v = bp.view();
    const int n = v.n_cells;
    const std::vector<double> w = random_weights(rng, n), ones(n, 1.0);
    std::vector<int> set_of(n);
    const int n_sets = 1 + rng.below(std::max(1, n / 2));
    for (int& d : set_of) d = rng.below(n_sets);
    auto table = [&](const std::vector<int>& t, const std::vector<int>& a) { return sdcRisk::cell_risk(v, t, a, none); };
    auto known_table = [&](const std::vector<int>& t, const std::vector<int>& a) {
      return sdcRisk::block_known_cell_risk(v, set_of, t, a, none);
    };
    for (int g = 0; g < 3; ++g) {
      const std::string what = "seed " + std::to_string(seed) + " goal " + std::to_string(g);
      check_max(sdcRisk::max_risk(v, kGoals[g], w, none), exhaustive(bp.counts, w, kGoals[g], table), what);
      check(identical(sdcRisk::max_risk(v, kGoals[g], ones, none), sdcRisk::max_risk(v, kGoals[g], none)),
            what + ": weights 1 give the unweighted certificate bit for bit");
      check_max(sdcRisk::block_known_max_risk(v, set_of, kGoals[g], w, none),
                exhaustive(bp.counts, w, kGoals[g], known_table), what + " known");
      check(identical(sdcRisk::block_known_max_risk(v, set_of, kGoals[g], ones, none),
                      sdcRisk::block_known_max_risk(v, set_of, kGoals[g], none)),
            what + " known: weights 1 give the unweighted certificate bit for bit");
    }
  }
}

// Ties: equal weights report the smallest cell of a group, a heavier cell
// of the same count is reported instead.
void test_reported_cell() {
  auto none = [] {};
  const BlockPlan bp{{1, 1, 1, 2}, {0, 4}, {0, 1, 2, 3}, {0.9}, {}, {-1}};
  const sdcRisk::PlanView v = bp.view();
  const auto eq = sdcRisk::max_risk(v, sdcRisk::Goal::UniqueMatches, std::vector<double>{0.5, 0.5, 0.5, 0.1}, none);
  check(eq.cell == 0, "equal weights: the smallest cell is reported");
  const auto heavy = sdcRisk::max_risk(v, sdcRisk::Goal::UniqueMatches, std::vector<double>{0.5, 0.7, 0.5, 0.1}, none);
  check(heavy.cell == 1 && close(heavy.value, 0.7 / 0.5 * eq.value, 1e-14), "the heaviest cell is reported");
  check(testutil::throws([&] { sdcRisk::max_risk(v, sdcRisk::Goal::AllMatches, std::vector<double>{0.5, 0, 1, 1}, none); }),
        "a weight of 0 is refused");
  check(testutil::throws([&] { sdcRisk::max_risk(v, sdcRisk::Goal::AllMatches, std::vector<double>{1, 1}, none); }),
        "weights of the wrong length are refused");
}

// 4: calibration against the weighted target
void test_calibration() {
  auto none = [] {};
  for (int seed = 1; seed <= 60; ++seed) {
    Lcg rng(4000 + seed);
    BlockPlan bp = random_block_plan(rng);
    bp.mat.clear();  // IFPR blocks only: calibration leaves matrix blocks alone
    while (bp.mstart.size() > 0 && bp.mstart.back() >= 0) {
      bp.mstart.pop_back();
      bp.theta.pop_back();
      bp.start.pop_back();
    }
    for (std::size_t b = 0; b < bp.theta.size(); ++b) {  // theta at the top: the bound design
      int mn = 1 << 30;
      for (int k = bp.start[b]; k < bp.start[b + 1]; ++k) mn = std::min(mn, bp.counts[bp.cells[k]]);
      bp.theta[b] = mn;
    }
    const sdcRisk::PlanView v = bp.view();
    const int n = v.n_cells;
    std::vector<double> w = random_weights(rng, n), lower(w);
    for (double& x : lower) x *= 0.5;
    const double target = 0.2 + 0.5 * rng.uniform();
    for (int g = 0; g < 2; ++g) {
      const std::string what = "calibration seed " + std::to_string(seed) + " goal " + std::to_string(g);
      const std::vector<double> th_w = sdcRisk::calibrate_ifpr(v, kGoals[g], target, w, none);
      const std::vector<double> th_1 = sdcRisk::calibrate_ifpr(v, kGoals[g], target, none);
      const std::vector<double> th_low = sdcRisk::calibrate_ifpr(v, kGoals[g], target, lower, none);
      check(th_1 == sdcRisk::calibrate_ifpr(v, kGoals[g], target, std::vector<double>(n, 1.0), none),
            what + ": weights 1 calibrate as without weights");
      BlockPlan cal = bp;
      cal.theta = th_w;
      const sdcRisk::PlanView cv = cal.view();
      bool ok = true;
      for (std::size_t b = 0; b < th_w.size(); ++b) {
        ok = ok && th_w[b] <= bp.theta[b] && th_low[b] <= th_w[b] + 1e-9 * bp.theta[b];
        // where the bound design met the target, so does the calibrated one
        std::vector<std::pair<int, std::int64_t>> groups = sdcRisk::count_groups(v, static_cast<int>(b));
        const std::vector<double> gw = sdcRisk::group_weights(v, static_cast<int>(b), groups, w);
        const auto top = sdcRisk::ifpr_block_max(v.block_size(b), bp.theta[b], groups, kGoals[g], none, gw);
        const auto cal_max = sdcRisk::ifpr_block_max(v.block_size(b), th_w[b], groups, kGoals[g], none, gw);
        if (!(top.value > target)) ok = ok && !(cal_max.value > target);
        // the block maximum is the weighted maximum over its cells
        BlockPlan one;
        one.start = {0, v.block_size(b)};
        one.theta = {th_w[b]};
        one.mstart = {-1};
        std::vector<double> wb;
        for (int k = bp.start[b]; k < bp.start[b + 1]; ++k) {
          one.cells.push_back(static_cast<int>(one.counts.size()));
          one.counts.push_back(bp.counts[bp.cells[k]]);
          wb.push_back(w[bp.cells[k]]);
        }
        const auto full = sdcRisk::max_risk(one.view(), kGoals[g], wb, none);
        ok = ok && close(full.value, cal_max.value, 1e-14);
      }
      check(ok, what + ": calibrated theta meets the weighted target, below the unweighted and above lower weights'");
      check_max(sdcRisk::max_risk(cv, kGoals[g], w, none),
                exhaustive(cal.counts, w, kGoals[g],
                           [&](const std::vector<int>& t, const std::vector<int>& a) {
                             return sdcRisk::cell_risk(cv, t, a, none);
                           }),
                what + " calibrated plan");
    }
  }
}

}  // namespace

int main() {
  test_block_plans();
  test_reported_cell();
  test_calibration();
  return testutil::report("test_risk_weights");
}
