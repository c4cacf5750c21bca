// Truncated distributions of sums of independent binomials, in log space.
//
// The number of other units that land in a target cell c_j under PRAM is
// Y = sum_i Binomial(n_i, alpha_i) (Nayak, Zhang & You 2016, eq. 4.1). Its
// probability mass on 0..A can underflow a double by millions of orders of
// magnitude (T up to 1e7, alpha near 1), yet the correct-match risk R_j(a, t)
// only needs ratios P(Y = a) / P(Y = a - 1). So each mass function is kept as
// exp(base + rel[k]): `base` is a possibly huge common log factor, `rel` holds
// moderate logs (k * log of a ratio), and ratios never touch `base`.
#ifndef SDCRISK_LOGDIST_HPP
#define SDCRISK_LOGDIST_HPP

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

namespace sdcRisk {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// One binomial summand: n trials with success probability alpha; oma is
// 1 - alpha supplied separately so that it keeps full relative accuracy when
// alpha is close to 1 (alpha = 1 - theta / T for large T).
struct Binom {
  std::int64_t n;
  double alpha;
  double oma;
};

struct LogDist {
  double base = 0.0;          // -inf: the distribution has no mass on 0..A
  std::vector<double> rel;    // rel[k], k = 0..K; log P(k) = base + rel[k]
  double log_at(std::size_t k) const {
    if (base == kNegInf || k >= rel.size()) return kNegInf;
    return base + rel[k];
  }
  double rel_at(std::size_t k) const { return k < rel.size() ? rel[k] : kNegInf; }
};

inline double log_add_exp(double x, double y) {
  if (x == kNegInf) return y;
  if (y == kNegInf) return x;
  const double m = std::max(x, y);
  return m + std::log1p(std::exp(-std::fabs(x - y)));
}

// log(1 - alpha * u) for u in [0, 1] to full relative accuracy: log1p while
// alpha * u is small, and 1 - alpha u = oma + alpha (1 - u) (no cancellation,
// u >= 1/2 there so 1 - u is exact) once it is not.
inline double log1m_scaled(double alpha, double oma, double u) {
  const double x = alpha * u;
  if (x <= 0.5) return std::log1p(-x);
  return std::log(oma + alpha * (1.0 - u));
}

// Mass function of Binomial(n, alpha) on 0..min(n, A).
inline LogDist binom_logdist(const Binom& b, int A) {
  LogDist d;
  if (b.n <= 0 || b.alpha <= 0.0) {  // point mass at 0
    d.rel.assign(1, 0.0);
    return d;
  }
  if (b.oma <= 0.0) {  // point mass at n
    if (b.n > A) {
      d.base = kNegInf;
      d.rel.assign(1, 0.0);
      return d;
    }
    d.rel.assign(static_cast<std::size_t>(b.n) + 1, kNegInf);
    d.rel[static_cast<std::size_t>(b.n)] = 0.0;
    return d;
  }
  const std::int64_t K = std::min<std::int64_t>(b.n, A);
  const double log_odds = std::log(b.alpha) - std::log(b.oma);
  d.base = static_cast<double>(b.n) * log1m_scaled(b.alpha, b.oma, 1.0);
  d.rel.resize(static_cast<std::size_t>(K) + 1);
  d.rel[0] = 0.0;
  // log C(n, k) + k log(alpha / (1 - alpha)), one exact ratio at a time
  for (std::int64_t k = 1; k <= K; ++k)
    d.rel[k] = d.rel[k - 1] + std::log(static_cast<double>(b.n - k + 1) / static_cast<double>(k)) + log_odds;
  return d;
}

// A hook that long loops of the core call now and then (the R glue sets it
// to check for a user interrupt; it may throw). Empty by default.
inline std::function<void()>& interrupt_hook() {
  static thread_local std::function<void()> hook;
  return hook;
}

// Distribution of X + Y on 0..A (truncated convolution in log space), for
// log-concave X and Y (binomials and their sums, the only use): then the
// terms t_k = x_k + y_{a-k} of each a are log-concave in k, unimodal with
// ratios exp(t_{k+1} - t_k) non-increasing. Each a is summed outward from
// the largest term, and a side stops once its ratio r < 1 and its term
// times r / (1 - r), which bounds everything left on that side, is below
// 2^-64 of the largest term: a relative error below 1.2e-19 per side, and a
// cost per a of the width of the terms that matter (a few standard
// deviations), not of A. Two binomials of 40,000 each cost O(A), not O(A^2).
inline LogDist convolve(const LogDist& x, const LogDist& y, int A) {
  LogDist z;
  if (x.base == kNegInf || y.base == kNegInf) {
    z.base = kNegInf;
    z.rel.assign(1, 0.0);
    return z;
  }
  const std::size_t kx = x.rel.size() - 1, ky = y.rel.size() - 1;
  const std::size_t K = std::min<std::size_t>(static_cast<std::size_t>(A), kx + ky);
  // The finite entries of x and y: [xl, xu] and [yl, yu] when they are
  // intervals (ok), so that the first finite term of each a is found at
  // once, not by a scan as long as the support (point masses of 10^5 units
  // would cost 10^10 steps); the same term the scan finds.
  auto support = [](const std::vector<double>& r, std::size_t& lo, std::size_t& hi) {
    std::size_t n = 0;
    lo = r.size();
    hi = 0;
    for (std::size_t k = 0; k < r.size(); ++k)
      if (r[k] != kNegInf) {
        if (n++ == 0) lo = k;
        hi = k;
      }
    return n > 0 && n == hi - lo + 1;
  };
  std::size_t xl, xu, yl, yu;
  const bool ok_x = support(x.rel, xl, xu), ok_y = support(y.rel, yl, yu);
  const bool intervals = ok_x && ok_y;
  z.base = x.base + y.base;
  z.rel.assign(K + 1, kNegInf);
  const double stop = -64.0 * 0.6931471805599453;  // log 2^-64
  std::size_t mode = 0;
  const std::function<void()>& hook = interrupt_hook();
  for (std::size_t a = 0; a <= K; ++a) {
    if (hook && (a & 4095) == 4095) hook();
    const std::size_t lo = a > ky ? a - ky : 0, hi = std::min(a, kx);
    auto term = [&](std::size_t k) { return x.rel[k] + y.rel[a - k]; };
    // the largest term: climb from the previous a's mode
    std::size_t k = std::min(std::max(mode, lo), hi);
    double m = term(k);
    if (m == kNegInf && intervals) {  // the first finite term, if any
      std::size_t k0 = std::max(lo, xl), k1 = std::min(hi, xu);
      if (a >= yu) k0 = std::max(k0, a - yu);
      if (a < yl) continue;
      k1 = std::min(k1, a - yl);
      if (k0 > k1) continue;
      k = k0;
      m = term(k0);
    } else if (m == kNegInf) {  // find any finite term (supports are intervals)
      for (std::size_t kk = lo; kk <= hi; ++kk)
        if (term(kk) != kNegInf) {
          k = kk;
          m = term(kk);
          break;
        }
      if (m == kNegInf) continue;
    }
    while (k < hi && term(k + 1) > m) m = term(++k);
    while (k > lo && term(k - 1) > m) m = term(--k);
    mode = k;
    double s = 1.0;
    // upward
    double prev = m;
    for (std::size_t kk = k + 1; kk <= hi; ++kk) {
      const double t = term(kk);
      if (t == kNegInf) break;
      s += std::exp(t - m);
      const double lr = t - prev;  // log ratio, non-increasing from here on
      prev = t;
      if (lr < 0.0 && t - m + lr - std::log1p(-std::exp(lr)) < stop) break;
    }
    // downward
    prev = m;
    for (std::size_t kk = k; kk-- > lo;) {
      const double t = term(kk);
      if (t == kNegInf) break;
      s += std::exp(t - m);
      const double lr = t - prev;
      prev = t;
      if (lr < 0.0 && t - m + lr - std::log1p(-std::exp(lr)) < stop) break;
    }
    z.rel[a] = m + std::log(s);
  }
  return z;
}

// Distribution of a sum of independent binomials on 0..A. Summands with the
// same alpha merge into one binomial (their n add up).
inline LogDist sum_logdist(std::vector<Binom> parts, int A) {
  std::sort(parts.begin(), parts.end(), [](const Binom& a, const Binom& b) {
    return a.alpha < b.alpha || (a.alpha == b.alpha && a.oma < b.oma);
  });
  std::vector<Binom> merged;
  for (const Binom& p : parts) {
    if (p.n <= 0 || p.alpha <= 0.0) continue;
    if (!merged.empty() && merged.back().alpha == p.alpha && merged.back().oma == p.oma)
      merged.back().n += p.n;
    else
      merged.push_back(p);
  }
  LogDist acc;
  acc.rel.assign(1, 0.0);  // point mass at 0
  for (const Binom& p : merged) acc = convolve(acc, binom_logdist(p, A), A);
  return acc;
}

}  // namespace sdcRisk

#endif  // SDCRISK_LOGDIST_HPP
