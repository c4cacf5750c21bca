// Standalone test of the per-variable plan algebra and of the block plan
// algebra, without R:
//   g++ -std=c++17 -O2 -I../../inst/include test_plan_vars.cpp -o build/test_plan_vars
// Two perturbed variables (3 and 2 categories) and one fixed key (2 values,
// one stratum each): E(S_j | T) and V(S_j | T) from the contraction against
// the explicit Kronecker sums; the inverse-CDF draw on a stratified grid of
// uniforms against the matrix column; block moments of an IFPR block against
// its explicit matrix.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "testutil.hpp"

namespace {

using testutil::check;
using testutil::Grid;

}  // namespace

int main() {
  // cells: (a, b, g) with a in 0..2, b in 0..1, g the fixed key = stratum
  const std::vector<int> a = {0, 1, 2, 0, 2, 1, 0};
  const std::vector<int> b = {0, 0, 1, 1, 0, 1, 0};
  const std::vector<int> g = {0, 0, 0, 0, 1, 1, 1};
  const std::vector<int> counts = {3, 1, 2, 5, 1, 4, 2};
  const int n = static_cast<int>(counts.size());
  std::vector<int> code(a);  // variable-major codes of the targets (the cells)
  code.insert(code.end(), b.begin(), b.end());
  // stratum 0: Pa0, Pb0; stratum 1: Pa1, Pb1 (column-major, columns sum to 1)
  const std::vector<double> mats = {0.7, 0.2, 0.1, 0.1, 0.8, 0.1, 0.0, 0.3, 0.7,  // Pa0
                                    0.9, 0.1, 0.4, 0.6,                           // Pb0
                                    0.5, 0.25, 0.25, 0.2, 0.6, 0.2, 0.1, 0.1, 0.8,  // Pa1
                                    0.75, 0.25, 0.3, 0.7};                        // Pb1
  const std::vector<std::int64_t> start = {0, 9, 13, 22};
  // keys: a (perturbed, variable 0), b (perturbed, variable 1), g (fixed,
  // the stratum)
  sdcRisk::VarsPlanView view;
  view.n_cells = n;
  view.counts = counts.data();
  view.n_keys = 3;
  view.codes = {a.data(), b.data(), g.data()};
  view.n_levels = {3, 2, 2};
  view.var_of_key = {0, 1, -1};
  view.n_vars = 2;
  view.n_strata = 2;
  view.stratum = g.data();
  for (int m = 0; m < 4; ++m) view.matrices.push_back(mats.data() + start[m]);
  view.known = {1, 1, 1};
  const sdcRisk::VarsIndex plan(view);
  check(plan.group(0) == 0 && plan.group(4) == 1, "groups from the unperturbed key");

  const auto e = sdcRisk::vars_power_sums(plan, n, g.data(), code.data(), 1);
  const auto q = sdcRisk::vars_power_sums(plan, n, g.data(), code.data(), 2);
  for (int j = 0; j < n; ++j) {
    double e_ref = 0.0, q_ref = 0.0;
    for (int i = 0; i < n; ++i) {
      if (g[i] != g[j]) continue;
      const double al = plan.p(g[i], 0, a[j], a[i]) * plan.p(g[i], 1, b[j], b[i]);
      e_ref += counts[i] * al;
      q_ref += counts[i] * al * al;
    }
    check(std::fabs(e[j] - e_ref) < 1e-13, "E(S_j | T) by contraction");
    check(std::fabs(q[j] - q_ref) < 1e-13, "sum T alpha^2 by contraction");
  }

  // inverse CDF: on a grid of uniforms, each category's share is its
  // probability within the grid's resolution
  sdcRisk::VarsSampler sampler(plan);
  const int N = 100000;
  Grid grid(N);
  std::vector<double> freq(3, 0.0);
  for (int i = 0; i < N; ++i) freq[sampler.draw(1, 0, 2, grid.uniform())] += 1.0;
  for (int r = 0; r < 3; ++r) check(std::fabs(freq[r] / N - plan.p(1, 0, r, 2)) < 2.0 / N, "inverse-CDF draw");

  // an IFPR block of 3 cells with theta = 0.5 against its explicit matrix
  const testutil::BlockPlan ifpr{{5, 1, 2}, {0, 3}, {0, 1, 2}, {0.5}, {}, {-1}};
  const std::vector<int>& bc = ifpr.counts;
  const sdcRisk::PlanView bp = ifpr.view();
  const auto mom = sdcRisk::block_moments(bp);
  const auto cost = sdcRisk::block_cost(bp);
  double changed = 0.0, total = 0.0;
  for (int i = 0; i < 3; ++i) {
    double e_ref = 0.0, v_ref = 0.0;
    for (int k = 0; k < 3; ++k) {
      e_ref += bp.p(0, i, k) * bc[k];
      v_ref += bc[k] * bp.p(0, i, k) * (1.0 - bp.p(0, i, k));
    }
    check(std::fabs(mom.mean[i] - e_ref) < 1e-13, "IFPR E(S | T) = T");
    check(std::fabs(mom.var[i] - v_ref) < 1e-13, "IFPR eq. 6.1 against eq. 3.6");
    changed += bc[i] * (1.0 - bp.p(0, i, i));
    total += v_ref;
  }
  check(std::fabs(cost.changed - changed) < 1e-13, "expected changed records");
  check(std::fabs(cost.variance - total) < 1e-13, "eq. 6.3 total variance");

  return testutil::report("test_plan_vars");
}
