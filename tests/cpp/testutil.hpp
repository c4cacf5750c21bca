// Fixtures shared by the standalone C++ tests (as glmnetpp's test/testutil/):
// a failure counter with check(), relative comparison, deterministic
// generators plugged into the core's RNG interface, and plans that own
// their vectors and hand out the core's views. Header-only; every program
// includes it once.
#ifndef SDCRISK_TESTUTIL_HPP
#define SDCRISK_TESTUTIL_HPP

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sdcRisk/sdcRisk.hpp"

namespace testutil {

inline int& failures() {
  static int n = 0;
  return n;
}

// Records a failure (and prints `what`) unless ok.
inline void check(bool ok, const std::string& what) {
  if (!ok) {
    ++failures();
    std::printf("FAIL: %s\n", what.c_str());
  }
}

// Prints the summary line and returns the exit status of the program.
inline int report(const char* program) {
  std::printf("%s: %s, %d failure(s)\n", program, failures() ? "FAILED" : "ok", failures());
  return failures() == 0 ? 0 : 1;
}

// x and y agree to `rel` relative (NaN only with NaN, -Inf only with -Inf).
inline bool close(double x, double y, double rel = 1e-10) {
  if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
  if (x == y) return true;
  if (std::isinf(x) || std::isinf(y)) return false;
  return std::fabs(x - y) <= rel * std::max(std::fabs(x), std::fabs(y));
}

// f() throws E.
template <class E = std::invalid_argument>
bool throws(const std::function<void()>& f) {
  try {
    f();
  } catch (const E&) {
    return true;
  }
  return false;
}

// The core's RNG interface (double uniform() in (0, 1)), deterministic.
struct Lcg {
  std::uint64_t s;
  explicit Lcg(std::uint64_t seed = 12345) : s(seed) {}
  double uniform() {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return ((s >> 11) + 0.5) / 9007199254740992.0;
  }
  int below(int n) { return std::min(n - 1, static_cast<int>(uniform() * n)); }
};

// u_i = (i + 0.5) / N, i = 0, 1, ...: a stratified grid of uniforms, on
// which a draw's frequencies equal its probabilities within 1 / N.
struct Grid {
  std::int64_t i = 0, n;
  explicit Grid(std::int64_t n_) : n(n_) {}
  double uniform() { return (static_cast<double>(i++) + 0.5) / static_cast<double>(n); }
};

// A block plan that owns its vectors (the PlanView conventions of plan.hpp:
// 0-based cells, theta NaN and matrix_start -1 where not used).
struct BlockPlan {
  std::vector<int> counts, start, cells;
  std::vector<double> theta, mat;
  std::vector<std::int64_t> mstart;
  sdcRisk::PlanView view() const {
    sdcRisk::PlanView v;
    v.n_cells = static_cast<int>(counts.size());
    v.counts = counts.data();
    v.n_blocks = static_cast<int>(theta.size());
    v.block_start = start.data();
    v.block_cells = cells.data();
    v.theta = theta.data();
    v.matrix = mat.empty() ? nullptr : mat.data();
    v.matrix_start = mstart.data();
    return v;
  }
};

// P(S_j = a) and P(S_j = a, B stays) by enumerating every outcome of block
// b (j: a position within the block, B the first unit of its cell).
inline void enumerate(const sdcRisk::PlanView& plan, int b, int j, std::vector<double>& total,
                      std::vector<double>& joint) {
  const int m = plan.block_size(b);
  std::vector<int> unit_pos;
  for (int c = 0; c < m; ++c)
    for (int u = 0; u < plan.counts[plan.block_cells[plan.block_start[b] + c]]; ++u) unit_pos.push_back(c);
  const int n = static_cast<int>(unit_pos.size());
  int B = 0;
  while (unit_pos[B] != j) ++B;
  total.assign(n + 1, 0.0);
  joint.assign(n + 1, 0.0);
  std::vector<int> dest(n, 0);
  while (true) {
    double w = 1.0;
    int s = 0;
    for (int u = 0; u < n; ++u) {
      w *= plan.p(b, dest[u], unit_pos[u]);
      s += dest[u] == j;
    }
    total[s] += w;
    if (dest[B] == j) joint[s] += w;
    int u = 0;
    while (u < n && dest[u] == m - 1) dest[u++] = 0;
    if (u == n) break;
    ++dest[u];
  }
}

// A per-variable plan that owns its vectors: codes[k][cell], one
// column-major k_v x k_v matrix per (stratum, variable) at
// matrices[s * n_vars + v].
struct VarsPlan {
  std::vector<int> counts, stratum;
  std::vector<std::vector<int>> codes;
  std::vector<int> n_levels, var_of_key;
  int n_vars = 0, n_strata = 1;
  std::vector<std::vector<double>> matrices;
  std::vector<char> known;
  sdcRisk::VarsPlanView view() const {
    sdcRisk::VarsPlanView v;
    v.n_cells = static_cast<int>(counts.size());
    v.counts = counts.data();
    v.n_keys = static_cast<int>(codes.size());
    for (const auto& c : codes) v.codes.push_back(c.data());
    v.n_levels = n_levels;
    v.var_of_key = var_of_key;
    v.n_vars = n_vars;
    v.n_strata = n_strata;
    v.stratum = stratum.data();
    for (const auto& m : matrices) v.matrices.push_back(m.data());
    v.known = known;
    return v;
  }
  // P_v[to, from] in stratum s
  double p(int s, int v, int to, int from) const {
    int k = 0;
    while (var_of_key[k] != v) ++k;
    return matrices[static_cast<std::size_t>(s) * n_vars + v][static_cast<std::size_t>(from) * n_levels[k] + to];
  }
};

// A random column-stochastic k x k matrix (column-major). With `zeros`,
// about a third of the off-diagonal entries are 0; with `dominant`, the
// diagonal carries most of each column, as in sdcMicro's matrices.
inline std::vector<double> random_matrix(Lcg& rng, int k, bool zeros, bool dominant = false) {
  std::vector<double> m(static_cast<std::size_t>(k) * k);
  for (int c = 0; c < k; ++c) {
    double s = 0.0;
    for (int r = 0; r < k; ++r) {
      double x = -std::log(rng.uniform());
      if (r == c) x += dominant ? 4.0 * k : 0.1;
      else if (zeros && rng.uniform() < 1.0 / 3) x = 0.0;
      m[static_cast<std::size_t>(c) * k + r] = x;
      s += x;
    }
    for (int r = 0; r < k; ++r) m[static_cast<std::size_t>(c) * k + r] /= s;
  }
  return m;
}

}  // namespace testutil

#endif  // SDCRISK_TESTUTIL_HPP
