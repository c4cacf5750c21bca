// Standalone test of the PTN core, without R:
//   g++ -std=c++17 -O2 -I../../inst/include test_tabular.cpp -o build/test_tabular && build/test_tabular
// Compares Theorem 1, the general O(n log n) algorithm and the per-cell
// tracker with brute-force enumeration of all disjoint set pairs.
#include <cstdint>
#include <cstdio>
#include <limits>
#include <vector>

#include "sdcRisk/table_sensitivity.hpp"

namespace {

struct Lcg {  // deterministic generator: identical on every platform
  std::uint64_t s;
  int below(int n) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((s >> 33) % static_cast<std::uint64_t>(n));
  }
};

double brute(std::vector<sdcRisk::Respondent> r, int nt, int ns) {
  while (r.size() < static_cast<std::size_t>(nt + ns)) r.push_back(sdcRisk::Respondent{});
  const int n = static_cast<int>(r.size());
  double best = -std::numeric_limits<double>::infinity();
  // role of each respondent: 0 other, 1 target, 2 suspect (3^n assignments)
  std::vector<int> role(n, 0);
  while (true) {
    int t = 0, s = 0;
    double v = 0;
    for (int i = 0; i < n; ++i) {
      if (role[i] == 1) { ++t; v += r[i].pt; }
      else if (role[i] == 2) { ++s; v -= r[i].self_noise; }
      else v -= r[i].noise;
    }
    if (t == nt && s == ns && v > best) best = v;
    int i = 0;
    while (i < n && role[i] == 2) role[i++] = 0;
    if (i == n) break;
    ++role[i];
  }
  return best;
}

}  // namespace

int main() {
  Lcg g{42};
  int failures = 0;
  for (int it = 0; it < 20000; ++it) {
    const int n = 1 + g.below(7), nt = 1 + g.below(3), ns = g.below(4);
    std::vector<sdcRisk::Respondent> r(n);
    double total = 0;
    for (int i = 0; i < n; ++i) {
      r[i] = sdcRisk::Respondent{double(g.below(6)), double(g.below(6)), double(g.below(8)), i};
      total += r[i].noise;
    }
    const double ref = brute(r, nt, ns);
    if (sdcRisk::ptn_general(r, total, nt, ns).s != ref) ++failures;
    if (nt == 1 && ns == 1 && sdcRisk::ptn_theorem1(r, total).s != brute(r, 1, 1)) ++failures;
    // per-cell tracker: the same respondents as one cell among others
    std::vector<int> cell(n, 1);
    std::vector<double> pt(n), noise(n), sn(n);
    for (int i = 0; i < n; ++i) { pt[i] = r[i].pt; noise[i] = r[i].noise; sn[i] = r[i].self_noise; }
    const auto cells = sdcRisk::ptn_cells(cell.data(), n, 2, pt.data(), noise.data(), sn.data(),
                                          nt, ns, [] {});
    if (cells.s[1] != ref || cells.s[0] != brute({}, nt, ns)) ++failures;
  }
  std::printf("%s: %d failures\n", failures == 0 ? "OK" : "FAILED", failures);
  return failures == 0 ? 0 : 1;
}
