// Standalone test of the microdata core, without R:
//   g++ -std=c++17 -O2 -I../../inst/include test_core.cpp -o build/test_core && build/test_core
// Exact risk against enumeration of every perturbation outcome, the
// cross-classification against direct counting, and draws with a
// deterministic generator plugged into the core's RNG interface.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "testutil.hpp"

namespace {

using testutil::check;
using testutil::enumerate;
using testutil::Lcg;

}  // namespace

int main() {
  // cross-classification of two keys
  std::vector<int> k1 = {1, 2, 1, 1, 0, 2}, k2 = {3, 1, 3, 2, 1, 1};
  auto tab = sdcRisk::cross_classify({k1.data(), k2.data()}, {2, 3}, 6, [] {});
  check(tab.counts == std::vector<int>({1, 2, 2}), "cell counts");
  check(tab.cell_of_record == std::vector<int>({1, 2, 1, 0, -1, 2}), "cell of record");
  check(tab.n_excluded == 1, "records left out");

  // risk: IFPR and matrix blocks against enumeration
  const testutil::BlockPlan bp{{1, 2, 1, 3, 5}, {0, 3, 5}, {0, 1, 2, 3, 4}, {0.8, std::nan("")}, {0.7, 0.3, 0.1, 0.9},
                               {-1, 0}};
  const std::vector<int>& counts = bp.counts;
  const std::vector<int>& start = bp.start;
  const std::vector<int>& cells = bp.cells;
  const sdcRisk::PlanView plan = bp.view();
  double best = 0.0;
  for (int b = 0; b < 2; ++b) {
    for (int j = 0; j < plan.block_size(b); ++j) {
      std::vector<double> total, joint;
      enumerate(plan, b, j, total, joint);
      const int cell = cells[start[b] + j];
      const int n = static_cast<int>(total.size()) - 1;
      std::vector<int> a(n);
      for (int i = 0; i < n; ++i) a[i] = i + 1;
      auto res = sdcRisk::cell_risk(plan, {cell}, a, [] {});
      for (int i = 1; i <= n; ++i) {
        if (total[i] > 0) {
          const double r = joint[i] / total[i] / i;
          best = std::max(best, r);
          check(std::fabs(res.risk[i - 1] - r) <= 1e-13, "risk equals enumeration");
          check(std::fabs(std::exp(res.log_prob[i - 1]) - total[i]) <= 1e-13, "P(S = a) equals enumeration");
        } else {
          check(std::isnan(res.risk[i - 1]), "impossible event has no risk");
        }
      }
      check(std::fabs(std::exp(res.log_p_empty[0]) - total[0]) <= 1e-13, "P(S = 0) equals enumeration");
    }
  }
  auto mx = sdcRisk::max_risk(plan, sdcRisk::Goal::AllMatches, [] {});
  check(std::fabs(mx.value - best) <= 1e-13, "maximum risk equals the enumerated maximum");

  // draws stay within their block and follow the column probabilities
  std::vector<int> rec;
  for (int c = 0; c < 5; ++c)
    for (int u = 0; u < counts[c]; ++u) rec.push_back(c);
  Lcg rng;
  std::vector<double> moved(5, 0.0), seen(5, 0.0);
  const int reps = 20000;
  for (int r = 0; r < reps; ++r) {
    auto out = sdcRisk::pram_draw(plan, rec.data(), rec.size(), rng, [] {});
    for (std::size_t i = 0; i < rec.size(); ++i) {
      const bool same_block = (rec[i] < 3) == (out[i] < 3);
      check(same_block, "no record leaves its block");
      seen[rec[i]] += 1;
      moved[rec[i]] += out[i] != rec[i];
    }
  }
  // a unit of cell 0 (T = 1, theta = 0.8) moves with probability 0.8
  check(std::fabs(moved[0] / seen[0] - 0.8) < 0.02, "IFPR move probability");
  check(std::fabs(moved[3] / seen[3] - 0.3) < 0.02, "matrix move probability");

  // a draw of millions of records reports its progress (progress.hpp):
  // rising fractions in (0, 1); the same draws as without a callback
  {
    std::vector<int> many;
    for (int r = 0; r < 400000; ++r) many.insert(many.end(), rec.begin(), rec.end());
    std::vector<double> fractions;
    auto progress = [&](double f) { fractions.push_back(f); };
    Lcg rng1, rng2;
    const auto with = sdcRisk::pram_draw(plan, many.data(), many.size(), rng1, progress);
    const auto without = sdcRisk::pram_draw(plan, many.data(), many.size(), rng2, [] {});
    check(with == without, "the progress callback does not change the draws");
    bool rising = !fractions.empty();
    for (std::size_t i = 0; i < fractions.size(); ++i)
      rising = rising && fractions[i] > 0 && fractions[i] < 1 && (i == 0 || fractions[i] > fractions[i - 1]);
    check(rising, "the draw reports rising fractions of its records");
  }

  // design rules
  check(std::fabs(sdcRisk::psi(1, 2.0 / 3) - 3.0 / 7) < 1e-15, "psi(1, 2/3) = 3/7");
  check(sdcRisk::ceiling_tolerant(1 / (1 - 0.8)) == 5, "block size 5 at theta = 0.8");
  check(std::fabs(sdcRisk::theta_for_psi(0.1, 2) - 1.656854) < 1e-6, "Ghatak theta*");

  return testutil::report("test_core");
}
