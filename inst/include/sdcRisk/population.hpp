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
#include <cstdint>
#include <stdexcept>

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

}  // namespace sdcRisk

#endif  // SDCRISK_POPULATION_HPP
