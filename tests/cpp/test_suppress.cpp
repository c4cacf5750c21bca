// Standalone test of the suppression core, without R:
//   g++ -std=c++17 -O2 -I../../inst/include test_suppress.cpp -o build/test_suppress && build/test_suppress
// Compares union-find components with a breadth-first search over the same
// random relation graphs, and the elimination step (gauss_candidates())
// with a greedy that decides each cell by rank tests.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "sdcRisk/suppress.hpp"

namespace {

struct Lcg {  // deterministic generator: identical on every platform
  std::uint64_t s;
  int below(int n) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((s >> 33) % static_cast<std::uint64_t>(n));
  }
};

// same partition: labels agree up to renaming
bool same_partition(const std::vector<int>& a, const std::vector<int>& b) {
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = 0; j < a.size(); ++j)
      if ((a[i] == a[j]) != (b[i] == b[j])) return false;
  return true;
}

std::vector<int> bfs(const std::vector<int>& rel, const std::vector<int>& node, int nr, int nn) {
  std::vector<int> label(nn, -1);
  int next = 0;
  for (int s = 0; s < nn; ++s) {
    if (label[s] >= 0) continue;
    label[s] = next;
    std::vector<int> stack{s};
    while (!stack.empty()) {
      const int v = stack.back();
      stack.pop_back();
      for (std::size_t k = 0; k < rel.size(); ++k) {
        if (node[k] != v) continue;
        for (std::size_t m = 0; m < rel.size(); ++m) {
          if (rel[m] == rel[k] && label[node[m]] < 0) {
            label[node[m]] = next;
            stack.push_back(node[m]);
          }
        }
      }
    }
    ++next;
  }
  (void)nr;
  return label;
}

// rank of the columns `cols` of the 0/1 matrix x (n_row x n_col, by column)
int rank_of(const std::vector<std::vector<int>>& x, const std::vector<int>& cols, int n_row) {
  std::vector<std::vector<double>> a;
  for (int j : cols) {
    std::vector<double> v(n_row, 0.0);
    for (int r : x[j]) v[r] = 1.0;
    a.push_back(v);
  }
  int rank = 0;
  for (int r = 0; r < n_row && rank < static_cast<int>(a.size()); ++r) {
    int best = -1;
    for (int k = rank; k < static_cast<int>(a.size()); ++k)
      if (std::fabs(a[k][r]) > 1e-9 && (best < 0 || std::fabs(a[k][r]) > std::fabs(a[best][r]))) best = k;
    if (best < 0) continue;
    std::swap(a[rank], a[best]);
    for (int k = 0; k < static_cast<int>(a.size()); ++k) {
      if (k == rank) continue;
      const double f = a[k][r] / a[rank][r];
      for (int i = 0; i < n_row; ++i) a[k][i] -= f * a[rank][i];
    }
    ++rank;
  }
  return rank;
}

// the greedy by rank tests: publish in order unless a primary column falls
// into the span of the published columns
std::vector<int> greedy_by_rank(const std::vector<std::vector<int>>& x, int n_row,
                                const std::vector<int>& primary, const std::vector<int>& order) {
  std::vector<int> published, out(order.size(), 0);
  for (std::size_t t = 0; t < order.size(); ++t) {
    std::vector<int> with = published;
    with.push_back(order[t]);
    const int base = rank_of(x, with, n_row);
    bool hit = false;
    for (int j : primary) {
      std::vector<int> w2 = with;
      w2.push_back(j);
      if (rank_of(x, w2, n_row) == base) hit = true;
    }
    if (hit) out[t] = 1;
    else published.push_back(order[t]);
  }
  return out;
}

}  // namespace

int main() {
  Lcg g{12345};
  int failures = 0;
  for (int rep = 0; rep < 300; ++rep) {
    const int nn = 1 + g.below(30), nr = 1 + g.below(20), m = g.below(60);
    std::vector<int> rel(m), node(m);
    for (int k = 0; k < m; ++k) {
      rel[k] = g.below(nr);
      node[k] = g.below(nn);
    }
    const auto a = sdcRisk::relation_components(rel, node, nr, nn);
    const auto b = bfs(rel, node, nr, nn);
    if (!same_partition(a, b)) {
      std::printf("components differ from BFS, case %d\n", rep);
      ++failures;
    }
  }
  bool threw = false;
  try {
    sdcRisk::relation_components({0}, {5}, 1, 3);
  } catch (const std::invalid_argument&) {
    threw = true;
  }
  if (!threw) {
    std::printf("out-of-range incidence not rejected\n");
    ++failures;
  }
  for (int rep = 0; rep < 300; ++rep) {
    const int n_row = 1 + g.below(6), n_col = 2 + g.below(10);
    std::vector<std::vector<int>> x(n_col);
    std::vector<int> start{0}, row;
    for (int j = 0; j < n_col; ++j) {
      for (int r = 0; r < n_row; ++r)
        if (g.below(2)) x[j].push_back(r);
      if (x[j].empty()) x[j].push_back(g.below(n_row));
      row.insert(row.end(), x[j].begin(), x[j].end());
      start.push_back(static_cast<int>(row.size()));
    }
    std::vector<int> primary, order;
    for (int j = 0; j < n_col; ++j) (g.below(4) == 0 ? primary : order).push_back(j);
    if (primary.empty()) continue;
    const auto res = sdcRisk::gauss_candidates(n_row, start, row, primary, order, 1e9);
    const auto ref = greedy_by_rank(x, n_row, primary, order);
    bool same = res.completed;
    for (std::size_t t = 0; t < order.size(); ++t) same = same && ((res.suppress[t] > 0) == (ref[t] > 0));
    if (!same) {
      std::printf("elimination differs from the rank-test greedy, case %d\n", rep);
      ++failures;
    }
  }
  if (failures) return 1;
  std::printf("test_suppress: all passed\n");
  return 0;
}
