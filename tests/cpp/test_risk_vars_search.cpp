// Standalone test of the per-variable certificate (vars_max_risk(): bounds,
// then exact evaluation of the targets whose bound can beat the maximum),
// without R:
//   g++ -std=c++17 -O2 -I../../inst/include test_risk_vars_search.cpp -o build/test_risk_vars_search
// 1. Tiny random plans (2-3 keys, random matrices with zeros, strata, random
//    known subsets): every target's R_D(a, t), P(S_D = a) and P(S_D = 0)
//    against enumeration of every outcome of every unit, and the
//    certificate against the enumerated maximum, for every goal.
// 2. Larger random plans (hundreds of cells, counts up to 40, sdcMicro-like
//    and random matrices, some keys kept, strata, known subsets, strong
//    perturbation so that a >= 2 matters): the certificate against the
//    maximum over every target and every a evaluated exactly.
// 5. The same with per-cell weights (max of w_j R_D(a, t)): random, tied
//    and tiny weights, against every cell and a evaluated exactly; weights
//    1 give the unweighted certificate bit for bit.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "testutil.hpp"

namespace {

using testutil::check;
using testutil::close;
using testutil::Lcg;
using testutil::VarsPlan;

// A random plan on a random subset of the grid of `levels`.
VarsPlan random_plan(Lcg& rng, const std::vector<int>& levels, int max_count, double fill, int kind) {
  VarsPlan pl;
  const int nk = static_cast<int>(levels.size());
  pl.codes.assign(nk, {});
  pl.n_levels = levels;
  std::vector<int> code(nk, 0);
  while (true) {
    if (rng.uniform() < fill) {
      for (int k = 0; k < nk; ++k) pl.codes[k].push_back(code[k]);
      pl.counts.push_back(1 + rng.below(max_count));
    }
    int k = nk - 1;
    while (k >= 0 && code[k] == levels[k] - 1) code[k--] = 0;
    if (k < 0) break;
    ++code[k];
  }
  if (pl.counts.empty()) {
    for (int k = 0; k < nk; ++k) pl.codes[k].push_back(0);
    pl.counts.push_back(1);
  }
  // key 0 is kept and is the stratum half of the time; the others perturbed
  // (one of them kept now and then)
  const bool strata = rng.uniform() < 0.5;
  pl.var_of_key.assign(nk, -1);
  pl.n_vars = 0;
  for (int k = 1; k < nk; ++k)
    if (!(nk > 2 && k == nk - 1 && rng.uniform() < 0.25)) pl.var_of_key[k] = pl.n_vars++;
  if (!strata && rng.uniform() < 0.5) pl.var_of_key[0] = pl.n_vars++;
  pl.n_strata = strata ? levels[0] : 1;
  pl.stratum.resize(pl.counts.size());
  for (std::size_t i = 0; i < pl.counts.size(); ++i) pl.stratum[i] = strata ? pl.codes[0][i] : 0;
  for (int s = 0; s < pl.n_strata; ++s)
    for (int v = 0; v < pl.n_vars; ++v) {
      int k = 0;
      while (pl.var_of_key[k] != v) ++k;
      const int m = levels[k];
      switch (kind) {
        case 0: pl.matrices.push_back(testutil::random_matrix(rng, m, true)); break;
        case 1: pl.matrices.push_back(testutil::random_matrix(rng, m, false, true)); break;
        default: {
          // sdcMicro-like: diagonal plus a rank-one part (moves proportional
          // to a random "frequency" of the category landed in)
          std::vector<double> f(m), mat(static_cast<std::size_t>(m) * m);
          double tot = 0.0;
          for (int r = 0; r < m; ++r) tot += f[r] = 0.05 + rng.uniform();
          const double pd = kind == 3 ? 0.3 : 0.5 + 0.45 * rng.uniform();
          for (int c = 0; c < m; ++c) {
            double rest = 0.0;
            for (int r = 0; r < m; ++r)
              if (r != c) rest += f[r];
            for (int r = 0; r < m; ++r)
              mat[static_cast<std::size_t>(c) * m + r] = r == c ? pd : (1 - pd) * f[r] / rest;
          }
          pl.matrices.push_back(mat);
        }
      }
    }
  pl.known.assign(nk, 1);
  if (rng.uniform() < 0.4)
    for (int k = 0; k < nk; ++k) pl.known[k] = rng.uniform() < 0.6;
  return pl;
}

// alpha_D(i) for the target cell j and source cell i, from the definition.
double alpha_ref(const VarsPlan& pl, int j, int i) {
  const int nk = static_cast<int>(pl.codes.size());
  double a = 1.0;
  for (int k = 0; k < nk; ++k) {
    if (!pl.known[k]) continue;
    const int v = pl.var_of_key[k];
    if (v < 0) {
      if (pl.codes[k][i] != pl.codes[k][j]) return 0.0;
    } else {
      a *= pl.p(pl.stratum[i], v, pl.codes[k][j], pl.codes[k][i]);
    }
  }
  return a;
}

struct Enumerated {
  std::vector<double> risk, prob;  // a = 1..n
  double p_empty = 0.0;
};

// Every outcome of every unit (in D or not) for the target unit B of cell j.
Enumerated enumerate(const VarsPlan& pl, int j) {
  std::vector<double> al;
  int b = -1;
  for (std::size_t i = 0; i < pl.counts.size(); ++i)
    for (int u = 0; u < pl.counts[i]; ++u) {
      if (static_cast<int>(i) == j && b < 0) b = static_cast<int>(al.size());
      al.push_back(alpha_ref(pl, j, static_cast<int>(i)));
    }
  const int n = static_cast<int>(al.size());
  std::vector<double> total(n + 1, 0.0), joint(n + 1, 0.0);
  for (std::uint64_t m = 0; m < (std::uint64_t(1) << n); ++m) {
    double w = 1.0;
    int s = 0;
    for (int u = 0; u < n; ++u) {
      const bool in = m >> u & 1u;
      w *= in ? al[u] : 1.0 - al[u];
      s += in;
    }
    total[s] += w;
    if (m >> b & 1u) joint[s] += w;
  }
  Enumerated e;
  e.p_empty = total[0];
  for (int a = 1; a <= n; ++a) {
    e.prob.push_back(total[a]);
    e.risk.push_back(total[a] > 1e-300 ? joint[a] / total[a] / a : std::nan(""));
  }
  return e;
}

int total_units(const VarsPlan& pl) {
  int n = 0;
  for (int c : pl.counts) n += c;
  return n;
}

// The maximum over the goal of w_j R_D(a, t) (weights empty: 1) by
// evaluating every cell and every a exactly; `at(cell, a)` the weighted
// risk of (cell, a), NaN where impossible or beyond A.
struct Exhaustive {
  sdcRisk::MaxRisk best;
  std::vector<double> risk;
  int A = 0;
  double at(int cell, int a) const {
    return a < 1 || a > A ? std::nan("") : risk[static_cast<std::size_t>(cell) * A + a - 1];
  }
};

Exhaustive exhaustive_at(const VarsPlan& pl, sdcRisk::Goal goal, int A, const std::vector<double>& weight) {
  const sdcRisk::VarsPlanView v = pl.view();
  sdcRisk::VarsRisk eng(v);
  Exhaustive out;
  out.A = A;
  out.risk.assign(pl.counts.size() * static_cast<std::size_t>(A), std::nan(""));
  for (int j = 0; j < static_cast<int>(pl.counts.size()); ++j) {
    if (goal == sdcRisk::Goal::SampleUniques && pl.counts[j] != 1) continue;
    const sdcRisk::TargetRisk tr = eng.evaluate(j, goal == sdcRisk::Goal::AllMatches ? A : 1, false);
    const int top = goal == sdcRisk::Goal::AllMatches ? A : 1;
    for (int a = 1; a <= top; ++a) {
      const double r = sdcRisk::cell_weight(weight, j) * tr.risk[a - 1];
      if (std::isnan(r)) continue;
      out.risk[static_cast<std::size_t>(j) * A + a - 1] = r;
      if (std::isnan(out.best.value) || r > out.best.value) out.best.value = r;
    }
  }
  return out;
}

sdcRisk::MaxRisk exhaustive(const VarsPlan& pl, sdcRisk::Goal goal, int A) {
  return exhaustive_at(pl, goal, A, {}).best;
}

const sdcRisk::Goal kGoals[] = {sdcRisk::Goal::AllMatches, sdcRisk::Goal::UniqueMatches,
                                sdcRisk::Goal::SampleUniques};

// 1. tiny plans against enumeration
void test_tiny_plans_enumerated() {
  auto none = [] {};
  for (int seed = 1; seed <= 150; ++seed) {
    Lcg rng(1000 + seed);
    std::vector<int> levels = {2 + rng.below(2), 2 + rng.below(3)};
    if (rng.uniform() < 0.5) levels.push_back(2);
    VarsPlan pl = random_plan(rng, levels, 2, 0.6, seed % 3);
    if (total_units(pl) > 12) continue;
    const sdcRisk::VarsPlanView v = pl.view();
    const int n = total_units(pl);
    std::vector<int> targets, a;
    for (int j = 0; j < static_cast<int>(pl.counts.size()); ++j) targets.push_back(j);
    for (int k = 1; k <= n; ++k) a.push_back(k);
    const auto cr = sdcRisk::vars_cell_risk(v, targets, a, false, none);
    std::vector<double> want(3, std::nan(""));
    for (int j : targets) {
      const Enumerated e = enumerate(pl, j);
      bool ok = close(std::exp(cr.log_p_empty[j]), e.p_empty, 1e-9);
      for (int k = 0; k < n; ++k) {
        const double r = cr.risk[static_cast<std::size_t>(j) * n + k];
        // P(S = a) = 0 exactly where the enumeration has no mass
        ok = ok && (std::isnan(r) == std::isnan(e.risk[k])) && close(r, e.risk[k], 1e-9) &&
             close(std::exp(cr.log_prob[static_cast<std::size_t>(j) * n + k]), e.prob[k], 1e-9);
        if (!std::isnan(e.risk[k])) {
          auto up = [&](double& w) { w = std::isnan(w) ? e.risk[k] : std::max(w, e.risk[k]); };
          up(want[0]);
          if (k == 0) {
            up(want[1]);
            if (pl.counts[j] == 1) up(want[2]);
          }
        }
      }
      check(ok, "seed " + std::to_string(seed) + " cell " + std::to_string(j) + ": risks equal enumeration");
    }
    for (int g = 0; g < 3; ++g) {
      const auto mx = sdcRisk::vars_max_risk(v, kGoals[g], none);
      check(close(mx.value, want[g], 1e-9), "seed " + std::to_string(seed) + " goal " + std::to_string(g) +
                                                ": certificate equals the enumerated maximum");
    }
  }
}

// 5. the plan's certificate with random per-cell weights (random, tied,
// tiny) against every cell and a; weights 1 are no weights, bit for bit
void check_weighted(Lcg& rng, const VarsPlan& pl, int seed, int& pruned) {
  auto none = [] {};
  const sdcRisk::VarsPlanView v = pl.view();
  const int n = static_cast<int>(pl.counts.size());
  std::vector<double> w(n);
  for (double& x : w) {
    const double u = rng.uniform();
    x = std::min(1.0, u < 0.2 ? 1.0 : u < 0.35 ? 1e-7 : u < 0.5 ? 0.25 : 1e-12 + rng.uniform());
  }
  for (int g = 0; g < 3; ++g) {
    const std::string what = "weighted seed " + std::to_string(seed) + " goal " + std::to_string(g);
    const Exhaustive ref = exhaustive_at(pl, kGoals[g], std::min(total_units(pl), 400), w);
    const auto mx = sdcRisk::vars_max_risk(v, kGoals[g], w, none);
    const bool attained = std::isnan(ref.best.value) || close(ref.at(mx.cell, mx.a), mx.value, 1e-9);
    check(close(mx.value, ref.best.value, 1e-9) && attained,
          what + ": certificate equals exhaustive search (" + std::to_string(mx.value) + " vs " +
              std::to_string(ref.best.value) + ") at its cell and a");
    const auto plain = sdcRisk::vars_max_risk(v, kGoals[g], none);
    const auto ones = sdcRisk::vars_max_risk(v, kGoals[g], std::vector<double>(n, 1.0), none);
    const bool same = ones.value == plain.value || (std::isnan(ones.value) && std::isnan(plain.value));
    check(same && ones.cell == plain.cell && ones.a == plain.a && ones.targets_evaluated == plain.targets_evaluated,
          what + ": weights 1 give the unweighted certificate bit for bit");
    if (mx.targets_evaluated < static_cast<std::int64_t>(n) / 2) ++pruned;
  }
}

// 2. larger plans against exhaustive exact evaluation
void test_larger_plans_exhaustive() {
  auto none = [] {};
  int pruned_somewhere = 0, pruned_weighted = 0;
  for (int seed = 1; seed <= 40; ++seed) {
    Lcg rng(5000 + seed);
    std::vector<int> levels = {2 + rng.below(2), 3 + rng.below(8), 2 + rng.below(5)};
    if (seed % 2 == 0) levels.push_back(2 + rng.below(6));
    const int kind = seed % 4;
    VarsPlan pl = random_plan(rng, levels, seed % 5 == 0 ? 40 : 3, 0.5, kind);
    const sdcRisk::VarsPlanView v = pl.view();
    for (int g = 0; g < 3; ++g) {
      const auto mx = sdcRisk::vars_max_risk(v, kGoals[g], none);
      const int A = std::min(total_units(pl), 400);
      const auto ref = exhaustive(pl, kGoals[g], A);
      // beyond a = A the risk is below 1 / A
      const bool covered = g > 0 || A == total_units(pl) || std::isnan(ref.value) || ref.value > 1.0 / A;
      check(covered && close(mx.value, ref.value, 1e-9),
            "seed " + std::to_string(seed) + " goal " + std::to_string(g) + ": certificate equals exhaustive search (" +
                std::to_string(mx.value) + " vs " + std::to_string(ref.value) + ")");
      if (mx.targets_evaluated < static_cast<std::int64_t>(pl.counts.size()) / 2) ++pruned_somewhere;
    }
    check_weighted(rng, pl, seed, pruned_weighted);
  }
  check(pruned_somewhere > 0, "the bounds prune targets on some plans");
  check(pruned_weighted > 0, "the weighted bounds prune targets on some plans");
}

// 3. a unit that surely lands in D (a column with an entry 1) and a kept
// key: the certificate still equals the exhaustive maximum
void test_sure_units() {
  auto none = [] {};
  {
    VarsPlan pl;
    pl.codes = {{0, 0, 1, 1, 2}, {0, 1, 0, 1, 1}};
    pl.counts = {1, 2, 1, 3, 1};
    pl.n_levels = {3, 2};
    pl.var_of_key = {0, -1};
    pl.n_vars = 1;
    pl.stratum.assign(5, 0);
    pl.matrices = {{0.6, 0.4, 0.0, 0.0, 1.0, 0.0, 0.2, 0.3, 0.5}};
    pl.known = {1, 1};
    const sdcRisk::VarsPlanView v = pl.view();
    for (int g = 0; g < 3; ++g) {
      const auto mx = sdcRisk::vars_max_risk(v, kGoals[g], none);
      const auto ref = exhaustive(pl, kGoals[g], 9);
      check(close(mx.value, ref.value, 1e-12), "sure units: certificate equals exhaustive search");
    }
  }
}

// 4. progress: fractions in [0, 1], never decreasing, ending at 1
void test_progress() {
  {
    Lcg rng(77);
    VarsPlan pl = random_plan(rng, {2, 8, 5, 4}, 3, 0.7, 2);
    const sdcRisk::VarsPlanView v = pl.view();
    std::vector<double> seen;
    auto progress = [&](double f) { seen.push_back(f); };
    sdcRisk::vars_max_risk(v, sdcRisk::Goal::AllMatches, progress);
    bool ok = !seen.empty() && seen.back() == 1.0;
    for (std::size_t i = 0; i < seen.size(); ++i)
      ok = ok && seen[i] >= 0.0 && seen[i] <= 1.0 && (i == 0 || seen[i] >= seen[i - 1]);
    check(ok, "progress fractions rise from 0 to 1");
  }
}

}  // namespace

int main() {
  test_tiny_plans_enumerated();
  test_larger_plans_exhaustive();
  test_sure_units();
  test_progress();
  return testutil::report("test_risk_vars_search");
}
