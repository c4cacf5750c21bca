// Standalone test of the suppression core, without R:
//   g++ -std=c++17 -O2 -I../../inst/include test_suppress.cpp -o build/test_suppress && build/test_suppress
// Compares union-find components with a breadth-first search over the same
// random relation graphs.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "sdcRisk/table_components.hpp"

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
  if (failures) return 1;
  std::printf("test_suppress: all passed\n");
  return 0;
}
