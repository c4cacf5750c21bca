// Standalone test of E[1 / F | f] under the models of population counts
// (population.hpp), without R:
//   g++ -std=c++17 -O2 -I../../inst/include test_population.cpp -o build/test_population
// Against the defining series summed in long double (negative binomial and
// Poisson mass functions by recurrence), and the closed forms at f = 1
// (and f = 2 for the negative binomial, sdcMicro's formulas), over a grid of
// f, p and lambda reaching p = 1e-4 and lambda = 5000; the population
// counts of a sample's cells against a count with std::map.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "testutil.hpp"

namespace {

using testutil::check;
using testutil::close;

// sum_k P(K = k) / (f + k) for a mass function given by its log at the
// mode m and the ratio P(K = k + 1) / P(K = k) = up(k), summed outwards from
// the mode in long double (no underflow of the terms that matter).
template <class Up>
double series_from_mode(double f, long double m, long double log_at_mode, Up up) {
  long double sum = 0.0L, term = std::exp(log_at_mode);
  for (long double k = m;; k += 1) {
    sum += term / (f + k);
    term *= up(k);
    if (term < 1e-24L * sum) break;
  }
  term = std::exp(log_at_mode);
  for (long double k = m; k > 0; k -= 1) {
    term /= up(k - 1);
    sum += term / (f + k - 1);
    if (term < 1e-24L * sum) break;
  }
  return static_cast<double>(sum);
}

// Y ~ NegBin(f, p): P(Y = y) = C(f + y - 1, y) p^f q^y
double negbin_series(double f, double p) {
  const long double q = 1.0L - p, m = std::floor((f - 1) * q / p);
  const long double lp = std::lgamma(f + m) - std::lgamma(static_cast<long double>(f)) - std::lgamma(m + 1) +
                         f * std::log(static_cast<long double>(p)) + (q > 0 ? m * std::log(q) : 0.0L);
  return series_from_mode(f, m, lp, [&](long double y) { return q * (f + y) / (y + 1); });
}

// X ~ Poisson(lambda)
double poisson_series(double f, double lambda) {
  const long double m = std::floor(static_cast<long double>(lambda));
  const long double lp = -lambda + m * std::log(static_cast<long double>(lambda)) - std::lgamma(m + 1.0L);
  return series_from_mode(f, m, lp, [&](long double x) { return lambda / (x + 1); });
}

}  // namespace

int main() {
  const double fs[] = {1, 2, 3, 5, 17, 100, 2500};
  const double ps[] = {1e-4, 0.003, 0.05, 0.2, 0.5, 0.9, 0.999999, 1.0};
  for (double f : fs)
    for (double p : ps) {
      if (f * (1 - p) / p > 3e6) continue;  // the series would be too long
      const double got = sdcRisk::expected_inverse_negbin(f, p);
      check(close(got, negbin_series(f, p), 1e-12),
            "negbin f = " + std::to_string(f) + " p = " + std::to_string(p) + ": " + std::to_string(got));
      check(got <= 1.0 / f * (1 + 1e-15) && got >= p / f * (1 - 1e-15), "negbin between p / f and 1 / f");
    }
  for (double p : {0.001, 0.3, 0.77}) {
    const double q = 1 - p;
    check(close(sdcRisk::expected_inverse_negbin(1, p), p * std::log(1 / p) / q, 1e-13), "negbin f = 1 closed form");
    check(close(sdcRisk::expected_inverse_negbin(2, p), p / q - (p / q) * (p / q) * std::log(1 / p), 1e-12),
          "negbin f = 2 closed form (sdcMicro)");
  }
  const double lambdas[] = {0.0, 1e-8, 0.01, 0.7, 3, 40, 900, 5000};
  for (double f : fs)
    for (double lambda : lambdas) {
      const double got = sdcRisk::expected_inverse_poisson(f, lambda);
      const double want = lambda == 0 ? 1 / f : poisson_series(f, lambda);
      check(close(got, want, 1e-12), "poisson f = " + std::to_string(f) + " lambda = " + std::to_string(lambda));
      // Jensen: E[1 / F] >= 1 / E[F]
      check(got >= 1 / (f + lambda) * (1 - 1e-14) && got <= 1 / f, "poisson between 1 / (f + lambda) and 1 / f");
    }
  for (double lambda : {1e-6, 0.5, 12.0, 1e6})
    check(close(sdcRisk::expected_inverse_poisson(1, lambda), -std::expm1(-lambda) / lambda, 1e-13),
          "poisson f = 1 closed form");
  // population counts of sample cells against a count with std::map
  for (int seed = 1; seed <= 30; ++seed) {
    testutil::Lcg rng(seed);
    const std::vector<int> nlev = {1 + rng.below(3), 2 + rng.below(5), 1 + rng.below(4)};
    std::map<std::vector<int>, double> want;
    std::vector<std::vector<int>> s(3), p(3);
    std::vector<double> count;
    for (int r = 0; r < 200; ++r) {
      std::vector<int> c(3);
      for (int k = 0; k < 3; ++k) c[k] = rng.uniform() < 0.05 ? -2147483647 - 1 : 1 + rng.below(nlev[k]);  // R's NA
      for (int k = 0; k < 3; ++k) p[k].push_back(c[k]);
      count.push_back(rng.below(5));
      want[c] += count.back();
    }
    std::vector<std::vector<int>> cells;
    for (const auto& w : want)
      if (w.first[0] > 0 && w.first[1] > 0 && w.first[2] > 0 && rng.uniform() < 0.6) cells.push_back(w.first);
    cells.push_back({nlev[0], nlev[1], nlev[2]});  // maybe absent from the population
    std::sort(cells.begin(), cells.end());
    cells.erase(std::unique(cells.begin(), cells.end()), cells.end());
    for (const auto& c : cells)
      for (int k = 0; k < 3; ++k) s[k].push_back(c[k]);
    const auto got = sdcRisk::population_counts({s[0].data(), s[1].data(), s[2].data()}, cells.size(),
                                                {p[0].data(), p[1].data(), p[2].data()}, count.size(), nlev,
                                                count.data());
    bool ok = got.size() == cells.size();
    for (std::size_t j = 0; ok && j < cells.size(); ++j) ok = got[j] == (want.count(cells[j]) ? want[cells[j]] : 0.0);
    check(ok, "population counts of the sample's cells, seed " + std::to_string(seed));
  }
  check(testutil::throws([] { sdcRisk::expected_inverse_negbin(0, 0.5); }), "f = 0 refused");
  check(testutil::throws([] { sdcRisk::expected_inverse_negbin(1, 0); }), "p = 0 refused");
  check(testutil::throws([] { sdcRisk::expected_inverse_poisson(1, -1); }), "negative lambda refused");
  return testutil::report("test_population");
}
