// Design rules for IFPR blocks: the bound psi(T, theta) of Nayak, Zhang &
// You (2016, eq. 4.12) and the theta that meets a risk bound xi.
#ifndef SDCRISK_DESIGN_HPP
#define SDCRISK_DESIGN_HPP

#include <cmath>
#include <limits>

namespace sdcRisk {

// psi(T, theta) = (T - theta) / (T (T - theta) + theta^2) bounds R_1(1, t)
// for a cell of count T in an IFPR block (eq. 4.12).
inline double psi(double t, double theta) {
  return (t - theta) / (t * (t - theta) + theta * theta);
}

// The theta in [0, T) with psi(T, theta) = xi. psi is strictly decreasing in
// theta on (0, T) (its derivative has the sign of theta (theta - 2T)), from
// 1 / T to 0, so the root exists iff xi < 1 / T; for xi >= 1 / T no
// perturbation is needed and 0 is returned. The root of
// xi theta^2 + (1 - xi T) theta + xi T^2 - T = 0, written without
// cancellation:
//   theta = 2 T sqrt(1 - xi T) / (sqrt(1 - xi T) + sqrt(1 + 3 xi T)).
inline double theta_for_psi(double xi, double t) {
  const double d = 1.0 - xi * t;
  if (d <= 0.0) return 0.0;
  const double s = std::sqrt(d);
  return 2.0 * t * s / (s + std::sqrt(1.0 + 3.0 * xi * t));
}

// Nayak et al.'s h(theta) = max_T psi(T, theta) for theta in [0, 1]:
// psi(1, .) for theta <= 2/3 and psi(2, .) beyond. Its inverse theta_0(xi),
// defined for xi > 1/3 (h(1) = 1/3).
inline double theta_for_h(double xi) {
  if (xi >= 3.0 / 7.0) return theta_for_psi(xi, 1.0);  // psi(1, 2/3) = 3/7
  return theta_for_psi(xi, 2.0);
}

// The smallest integer m >= x, where x is a ratio of exact quantities that
// floating point may put a hair above an integer (1 / (1 - 0.8) evaluates
// to 5.000000000000001): values within 1e-9 (relative) of an integer count
// as that integer.
inline double ceiling_tolerant(double x) {
  const double r = std::round(x);
  if (std::fabs(x - r) <= 1e-9 * std::max(1.0, std::fabs(x))) return r;
  return std::ceil(x);
}

}  // namespace sdcRisk

#endif  // SDCRISK_DESIGN_HPP
