// Adaptive Gauss-Legendre quadrature for the expectation E[1 / (1 + Y)] of a
// sum of independent binomials, via E[1 / (1 + Y)] = int_0^1 E[x^Y] dx
// = int_0^1 prod_i (1 - alpha_i u)^{n_i} du (u = 1 - x).
//
// The integrand is a polynomial, positive and decreasing on [0, 1], and
// bounded by exp(-mu u) with mu = sum_i n_i alpha_i; panels grow geometrically
// from 0 and the tail is dropped only once a rigorous bound on it is below
// 1e-17 of the integral.
#ifndef SDCRISK_QUADRATURE_HPP
#define SDCRISK_QUADRATURE_HPP

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "logdist.hpp"

namespace sdcRisk {

namespace detail {

struct GaussLegendre {
  static constexpr int N = 20;
  double x[N], w[N];
  GaussLegendre() {
    // Newton iteration on the Legendre polynomial P_N from Chebyshev guesses.
    const double pi = 3.14159265358979323846;
    for (int i = 0; i < N; ++i) {
      double z = std::cos(pi * (i + 0.75) / (N + 0.5)), dp = 0.0;
      for (int it = 0; it < 100; ++it) {
        double p0 = 1.0, p1 = z;
        for (int k = 2; k <= N; ++k) {
          const double p2 = ((2.0 * k - 1.0) * z * p1 - (k - 1.0) * p0) / k;
          p0 = p1;
          p1 = p2;
        }
        dp = N * (z * p1 - p0) / (z * z - 1.0);
        const double dz = p1 / dp;
        z -= dz;
        if (std::fabs(dz) < 1e-16) break;
      }
      x[i] = z;
      w[i] = 2.0 / ((1.0 - z * z) * dp * dp);
    }
  }
};

inline const GaussLegendre& gauss_legendre() {
  static const GaussLegendre gl;
  return gl;
}

template <class F>
double gl_panel(const F& f, double a, double b) {
  const GaussLegendre& gl = gauss_legendre();
  const double h = 0.5 * (b - a), c = 0.5 * (a + b);
  double s = 0.0;
  for (int i = 0; i < GaussLegendre::N; ++i) s += gl.w[i] * f(c + h * gl.x[i]);
  return s * h;
}

template <class F>
double adaptive(const F& f, double a, double b, double whole, double tol, int depth) {
  const double m = 0.5 * (a + b);
  const double left = gl_panel(f, a, m), right = gl_panel(f, m, b);
  // Accept at the tolerance or at the rounding noise of the panel itself,
  // whichever is larger, so that halving tolerances never chase noise.
  const double noise = 1e-13 * std::fabs(left + right);
  if (depth <= 0 || std::fabs(left + right - whole) <= std::max(tol, noise)) return left + right;
  return adaptive(f, a, m, left, 0.5 * tol, depth - 1) + adaptive(f, m, b, right, 0.5 * tol, depth - 1);
}

}  // namespace detail

// E[1 / (1 + Y)] for Y = sum of the binomials in `parts`.
inline double expected_inverse_1p(const std::vector<Binom>& parts) {
  double mu = 0.0;
  for (const Binom& p : parts)
    if (p.n > 0 && p.alpha > 0.0) mu += static_cast<double>(p.n) * p.alpha;
  if (mu == 0.0) return 1.0;
  // Many summands (per-variable PRAM: one per cell of the table): those with
  // alpha <= 1/4 enter log f(u) = sum_i n_i log(1 - alpha_i u) through the
  // power sums p_m = sum_i n_i alpha_i^m, log f = -sum_m p_m u^m / m. Cut at
  // m = M = 40, the rest is below p_1 sum_{m > M} 4^{1-m} / m
  // <= p_1 4^{-M} (4/3) / M < 1e-25 p_1: far below rounding for any
  // p_1 <= 1e7 (counts up to 1e7), as an absolute error in log f.
  std::vector<Binom> big;
  std::vector<double> psum;
  constexpr int M = 40;
  const bool split = parts.size() > 64;
  if (split) {
    psum.assign(M + 1, 0.0);
    for (const Binom& p : parts) {
      if (p.n <= 0 || p.alpha <= 0.0) continue;
      if (p.alpha > 0.25) {
        big.push_back(p);
        continue;
      }
      double am = 1.0;
      for (int m = 1; m <= M; ++m) {
        am *= p.alpha;
        psum[m] += static_cast<double>(p.n) * am;
        if (am < 1e-300) break;
      }
    }
  }
  auto log_f = [&](double u) {
    double s = 0.0;
    if (split) {
      for (const Binom& p : big) s += static_cast<double>(p.n) * log1m_scaled(p.alpha, p.oma, u);
      double um = 1.0, t = 0.0;
      for (int m = 1; m <= M; ++m) {
        um *= u;
        t += psum[m] * um / m;
      }
      return s - t;
    }
    for (const Binom& p : parts)
      if (p.n > 0 && p.alpha > 0.0) s += static_cast<double>(p.n) * log1m_scaled(p.alpha, p.oma, u);
    return s;
  };
  auto f = [&log_f](double u) { return std::exp(log_f(u)); };
  const double rel_tol = 1e-14;
  double total = 0.0, left = 0.0;
  double width = std::min(1.0, 1.0 / mu) / 8.0;
  while (left < 1.0) {
    const double right = std::min(1.0, left + width);
    const double whole = detail::gl_panel(f, left, right);
    const double tol = rel_tol * std::max(total + whole, 1e-300);
    total += detail::adaptive(f, left, right, whole, tol, 18);
    left = right;
    width *= 2.0;
    // f is decreasing: what is left is at most f(left) * (1 - left).
    if (left < 1.0 && std::exp(log_f(left)) * (1.0 - left) <= 1e-17 * total) break;
  }
  return total;
}

}  // namespace sdcRisk

#endif  // SDCRISK_QUADRATURE_HPP
