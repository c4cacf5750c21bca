// Population counts of a sample's cells (population_counts()), and
// E[1 / F | f]: the expected inverse of a population count F given the
// sample count f >= 1 under the two models of F given f of the disclosure
// risk literature (issue 34, sample releases). For a sample release without
// perturbation the risk of a target who may not be in the file is 1 / F at
// a = f; when F is unknown, its estimate is E[1 / F | f].
//
// Negative binomial (Benedetti and Franconi 1998; sdcMicro's individual
// risk): F = f + Y, Y ~ NegBin(f, p) failures before the f-th success,
// p = f / F-hat with F-hat the sum of the sampling weights. With
// 1 / (f + y) = int_0^1 u^(f + y - 1) du and the generating function of Y,
//   E[1 / F] = p^f int_0^1 u^(f-1) (1 - q u)^(-f) du          (q = 1 - p)
//            = p int_0^1 v^(f-1) / (p + q v) dv                 (v = p u / (1 - q u))
//            = (p / f) int_0^inf e^(-s) / (p + q e^(-s/f)) ds    (v = e^(-s/f)).
// f = 1 gives p log(1 / p) / q, sdcMicro's formula.
//
// Poisson (Skinner and Shlomo 2008, log-linear models): F = f + X,
// X ~ Poisson(lambda), lambda = (1 - pi) mu / pi the expected units of the
// cell outside the sample. With E[u^X] = e^(-lambda (1 - u)),
//   E[1 / F] = int_0^1 u^(f-1) e^(-lambda (1 - u)) du
//            = (1 / f) int_0^inf e^(-s) exp(-lambda (1 - e^(-s/f))) ds.
// f = 1 gives (1 - e^(-lambda)) / lambda.
//
// Both integrands on [0, inf) are positive, smooth, and below C e^(-s)
// (C = 1 / p and 1), where nothing in the forms in u is: they are
// integrated by adaptive Gauss-Legendre panels (quadrature.hpp) that start
// at the integrand's scale (f / lambda where lambda is large) and double,
// until a rigorous bound on the tail, C e^(-S), is below 1e-17 of the
// integral: relative error about 1e-13.
#ifndef SDCRISK_POPULATION_HPP
#define SDCRISK_POPULATION_HPP

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "quadrature.hpp"

namespace sdcRisk {

namespace detail {

// int_0^inf g(s) ds for g(s) <= cap e^(-s), with panels from width
// scale / 8, doubling.
template <class G>
double integral_to_infinity(const G& g, double scale, double cap) {
  double total = 0.0, left = 0.0, width = std::min(1.0, scale) / 8.0;
  for (int panel = 0; panel < 4000; ++panel) {
    const double right = left + width;
    const double whole = gl_panel(g, left, right);
    total += adaptive(g, left, right, whole, 1e-14 * std::max(total + whole, 1e-300), 18);
    left = right;
    width *= 2.0;
    if (cap * std::exp(-left) <= 1e-17 * total) break;
  }
  return total;
}

}  // namespace detail

// E[1 / F | f] for F = f + NegBin(f, p), p in (0, 1].
inline double expected_inverse_negbin(double f, double p) {
  if (!(f >= 1.0) || !(p > 0.0 && p <= 1.0)) throw std::invalid_argument("negbin: f >= 1 and p in (0, 1] expected");
  if (p == 1.0) return 1.0 / f;
  const double q = 1.0 - p;
  auto g = [&](double s) { return std::exp(-s) / (p + q * std::exp(-s / f)); };
  return p / f * detail::integral_to_infinity(g, 1.0, 1.0 / p);
}

// E[1 / F | f] for F = f + Poisson(lambda), lambda >= 0.
inline double expected_inverse_poisson(double f, double lambda) {
  if (!(f >= 1.0) || !(lambda >= 0.0) || !std::isfinite(lambda))
    throw std::invalid_argument("poisson: f >= 1 and finite lambda >= 0 expected");
  if (lambda == 0.0) return 1.0 / f;
  // -lambda (1 - e^(-s/f)) = lambda expm1(-s/f), accurate for small s
  auto g = [&](double s) { return std::exp(-s + lambda * std::expm1(-s / f)); };
  return detail::integral_to_infinity(g, f / lambda, 1.0) / f;
}

// The population count F_j of every cell of a sample, from the population's
// rows (a cell's combination of keys and a count; rows of one combination
// add up). Both are given by their codes over the sample's categories,
// 1-based as R holds them, read in place: sample[k][j] for the n sample
// cells, pop[k][i] for the N population rows, a code below 1 (R's NA) for a
// category the sample does not have, so that row is in no sample cell.
// Each combination is its mixed-radix number (the product of the numbers
// of categories must stay below 2^63), looked up in an open-addressing
// table of the sample's cells: one pass over the rows, whatever their
// order (4.3 million rows against half a million cells in a tenth of a
// second, where matching them in R took a second).
inline std::vector<double> population_counts(const std::vector<const int*>& sample, std::size_t n,
                                             const std::vector<const int*>& pop, std::size_t N,
                                             const std::vector<int>& nlevels, const double* count) {
  const std::size_t K = nlevels.size();
  if (sample.size() != K || pop.size() != K) throw std::invalid_argument("population_counts: one code vector per key");
  std::vector<std::uint64_t> stride(K, 1);
  double span = 1.0;
  for (std::size_t k = 0; k < K; ++k) {
    if (nlevels[k] < 1) throw std::invalid_argument("population_counts: a key without categories");
    stride[k] = k == 0 ? 1 : stride[k - 1] * static_cast<std::uint64_t>(nlevels[k - 1]);
    span *= nlevels[k];
  }
  if (!(span < 9.2e18)) throw std::invalid_argument("population_counts: too many combinations");
  // the code of row r of `codes`, or UINT64_MAX if a code is missing
  const std::uint64_t none = ~std::uint64_t(0);
  auto number = [&](const std::vector<const int*>& codes, std::size_t r) {
    std::uint64_t x = 0;
    for (std::size_t k = 0; k < K; ++k) {
      const int c = codes[k][r];
      if (c < 1 || c > nlevels[k]) return none;
      x += static_cast<std::uint64_t>(c - 1) * stride[k];
    }
    return x;
  };
  // key and cell side by side: one cache line per probe
  struct Entry {
    std::uint64_t key;
    std::int64_t cell;
  };
  std::size_t cap = 16;
  while (cap < 2 * n + 2) cap *= 2;
  std::vector<Entry> table(cap, Entry{none, -1});
  auto slot = [&](std::uint64_t x) {
    std::uint64_t h = x + 0x9E3779B97F4A7C15ULL;  // splitmix64's finaliser
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ULL;
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBULL;
    std::size_t i = static_cast<std::size_t>(h ^ (h >> 31)) & (cap - 1);
    while (table[i].key != none && table[i].key != x) i = (i + 1) & (cap - 1);
    return i;
  };
  for (std::size_t j = 0; j < n; ++j) {
    const std::uint64_t x = number(sample, j);
    if (x == none) throw std::invalid_argument("population_counts: a sample cell without a code");
    Entry& e = table[slot(x)];
    if (e.key == x) throw std::invalid_argument("population_counts: two sample cells alike");
    e = Entry{x, static_cast<std::int64_t>(j)};
  }
  std::vector<double> out(n, 0.0);
  for (std::size_t r = 0; r < N; ++r) {
    const std::uint64_t x = number(pop, r);
    if (x == none) continue;
    const Entry& e = table[slot(x)];
    if (e.key == x) out[static_cast<std::size_t>(e.cell)] += count[r];
  }
  return out;
}

}  // namespace sdcRisk

#endif  // SDCRISK_POPULATION_HPP
