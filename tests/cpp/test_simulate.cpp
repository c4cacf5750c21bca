// Standalone test of the release simulator, without R:
//   g++ -std=c++17 -O2 -I../../inst/include test_simulate.cpp -o build/test_simulate
// The binomial draw is checked for exactness on a stratified grid of
// uniforms (each value's share of the grid equals its probability within
// the grid's resolution), in both regimes (inversion from 0 and chop-down
// from the mode), and a replication keeps the total count of every block.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "testutil.hpp"

namespace {

using testutil::check;
using testutil::Grid;

struct Lcg : testutil::Lcg {
  Lcg() : testutil::Lcg(777) {}
};

double binom_pmf(int n, int k, double p) {
  return std::exp(std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0) +
                  k * std::log(p) + (n - k) * std::log1p(-p));
}

void check_binomial(int n, double p) {
  const std::int64_t N = 200000;
  Grid g(N);
  std::vector<double> freq(n + 1, 0.0);
  for (std::int64_t i = 0; i < N; ++i) {
    const std::int64_t k = sdcRisk::binomial_draw(n, p, g);
    if (k < 0 || k > n) {
      check(false, "binomial draw out of range");
      return;
    }
    freq[k] += 1.0 / N;
  }
  double worst = 0.0;
  for (int k = 0; k <= n; ++k) worst = std::max(worst, std::fabs(freq[k] - binom_pmf(n, k, p)));
  char what[120];
  std::snprintf(what, sizeof what, "binomial(%d, %g) exact on a grid (worst %g)", n, p, worst);
  check(worst <= 2.0 / N, what);
}

}  // namespace

int main() {
  // inversion from 0 (mean < 30), the p > 1/2 reflection, chop-down (mean >= 30)
  check_binomial(2, 0.8284);
  check_binomial(205, 1.656854 / 205);
  check_binomial(40, 0.7);
  check_binomial(500, 0.3);
  check_binomial(100000, 0.5);
  check_binomial(1, 1.0);

  // one IFPR block and one matrix block: every replication keeps block totals
  const testutil::BlockPlan bp{{2, 5, 3, 7, 4, 9}, {0, 3, 5}, {0, 1, 2, 3, 4}, {1.5, std::nan("")}, {0.7, 0.3, 0.2, 0.8},
                               {-1, 0}};
  const sdcRisk::PlanView plan = bp.view();
  sdcRisk::ReleaseSimulator sim(plan, 0);
  Lcg rng;
  bool totals = true, cm_ok = true;
  for (int r = 0; r < 2000; ++r) {
    std::int64_t moved = 0;
    const double cm = sim.replicate(rng, moved);
    const auto& s = sim.counts();
    totals = totals && s[0] + s[1] + s[2] == 10 && s[3] + s[4] == 11;
    cm_ok = cm_ok && (cm == 0.0 || (s[0] >= 1 && cm == 1.0 / s[0]));
  }
  check(totals, "replications keep every block's total");
  check(cm_ok, "correct-match probability is 0 or 1 / S_j");
  sdcRisk::SimulationOptions opt;
  opt.reps = 10;
  Lcg rng2;
  auto sums = sdcRisk::simulate_release(plan, opt, rng2, []() {});
  check(sums.s2[5] == 0.0, "a cell in no block never changes");

  return testutil::report("test_simulate");
}
