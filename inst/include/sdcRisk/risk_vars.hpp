// Exact correct-match risk under per-variable PRAM (the PRAM of sdcMicro and
// mu-ARGUS), optionally stratified, for intruders who match on all keys or
// only on some of them (Nayak, Zhang & You 2016, Sec. 4.1, eq. 4.1-4.4).
//
// The plan: key v (perturbed) has a k_v x k_v column-stochastic matrix P_{v,s}
// in stratum s (a combination of unperturbed keys); the other keys never
// change. The intruder knows the keys K of the target B and looks at the set
// D of released records whose K-values are B's. A unit of cell c_i lands in D
// with probability
//   alpha_D(i) = prod_{v in K, perturbed} P_{v,s(i)}[d_v, i_v]
// when c_i agrees with B on the unperturbed keys of K, and 0 otherwise: the
// keys not in K sum out of the Kronecker product. With K = all keys, D is B's
// cell and alpha_D(i) = alpha(j, i) = prod_v P_v[j_v, i_v]. So S_D = 1{Z_B in
// D} + Y, Y = sum_i Binomial(T_i - 1{i = j}, alpha_D(i)), and (eq. 4.3)
//   R_D(a, t) = (1 / a) alpha_D(j) P(Y = a - 1) / P(S_D = a).
// No matrix over the cells is formed: each target needs one pass over the
// cells of its group (those agreeing with it on K's unperturbed keys), each
// costing O(|K|) for alpha_D and O(A min(T_i, A)) to convolve.
//
// Exactness. The distribution of Y on 0..A is accumulated in linear space as
// c[k] * 2^e: every step multiplies and adds nonnegative numbers only (no
// cancellation), so with n summands each c[k] carries a relative error below
// (A + 3) n u (u = 2^-53, at most about 1e-10 for n = 10^5 cells and A <= 20),
// and 1 - alpha_D(i) is formed without cancellation as
// (1 - p_1) + p_1 (1 - p_2) + p_1 p_2 (1 - p_3) + ... from column complements
// summed over the other rows. The support of Y is the interval [L, H] (L the
// units that land in D surely, H those that can): every k in [L, min(H, A)]
// must have c[k] > 0. Where underflow relative to the largest entry broke
// that, the target is recomputed in log space (logdist.hpp), which is exact
// at any magnitude; a probability alpha_D(i) below the smallest double is
// refused rather than rounded to an impossible event.
#ifndef SDCRISK_RISK_VARS_HPP
#define SDCRISK_RISK_VARS_HPP

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "errors.hpp"
#include "logdist.hpp"
#include "plan_vars.hpp"
#include "quadrature.hpp"
#include "risk.hpp"

namespace sdcRisk {

constexpr const char* kUnderflowMessage =
    "a transition probability product underflows a double (below 1e-308)";

class VarsRisk {
 public:
  explicit VarsRisk(const VarsPlanView& plan) : p_(plan) {
    if (static_cast<int>(p_.codes.size()) != p_.n_keys || static_cast<int>(p_.n_levels.size()) != p_.n_keys ||
        static_cast<int>(p_.var_of_key.size()) != p_.n_keys || static_cast<int>(p_.known.size()) != p_.n_keys ||
        static_cast<int>(p_.matrices.size()) != p_.n_strata * p_.n_vars)
      throw std::invalid_argument("vars plan: malformed view");
    for (int i = 0; i < p_.n_cells; ++i) {
      if (p_.counts[i] < 1) throw std::invalid_argument("vars plan: cell count below 1");
      if (p_.stratum[i] < 0 || p_.stratum[i] >= p_.n_strata) throw std::invalid_argument("vars plan: stratum out of range");
      for (int k = 0; k < p_.n_keys; ++k)
        if (p_.codes[k][i] < 0 || p_.codes[k][i] >= p_.n_levels[k])
          throw std::invalid_argument("vars plan: category code out of range");
    }
    // known perturbed keys and their matrices' column complements
    for (int k = 0; k < p_.n_keys; ++k) {
      if (p_.var_of_key[k] >= p_.n_vars) throw std::invalid_argument("vars plan: variable out of range");
      if (p_.known[k] && p_.var_of_key[k] >= 0) kp_.push_back(k);
      if (p_.known[k] && p_.var_of_key[k] < 0) ku_.push_back(k);
    }
    // Row-major copies (row = landing category) of the known keys' matrices
    // and of their column complements 1 - p_rc = sum_{r' != r} p_r'c, so that
    // a target reads one contiguous row per key.
    nkp_ = static_cast<int>(kp_.size());
    rows_.resize(static_cast<std::size_t>(p_.n_strata) * nkp_);
    comp_.resize(rows_.size());
    for (int s = 0; s < p_.n_strata; ++s) {
      for (int q = 0; q < nkp_; ++q) {
        const int k = kp_[q], u = p_.var_of_key[k], m = p_.n_levels[k];
        const double* P = p_.matrices[s * p_.n_vars + u];
        std::vector<double>& R = rows_[s * nkp_ + q];
        std::vector<double>& C = comp_[s * nkp_ + q];
        R.assign(static_cast<std::size_t>(m) * m, 0.0);
        C.assign(static_cast<std::size_t>(m) * m, 0.0);
        // sum_{r' != r} = (sum_{r' < r}) + (sum_{r' > r}): prefix and suffix
        // sums, O(m^2) per matrix and still no subtraction
        std::vector<double> suffix(static_cast<std::size_t>(m) + 1);
        for (int c = 0; c < m; ++c) {
          const double* col = P + static_cast<std::size_t>(m) * c;
          suffix[m] = 0.0;
          for (int r = m - 1; r >= 0; --r) suffix[r] = suffix[r + 1] + col[r];
          double prefix = 0.0;
          for (int r = 0; r < m; ++r) {
            R[static_cast<std::size_t>(m) * r + c] = col[r];
            C[static_cast<std::size_t>(m) * r + c] = prefix + suffix[r + 1];
            prefix += col[r];
          }
        }
      }
    }
    for (int k : kp_) kcodes_.push_back(p_.codes[k]);
    // groups: cells agreeing on the known unperturbed keys; D: on all known keys
    std::map<std::vector<int>, int> gid, did;
    group_of_.resize(p_.n_cells);
    d_of_.resize(p_.n_cells);
    std::vector<int> sig;
    for (int i = 0; i < p_.n_cells; ++i) {
      sig.clear();
      for (int k : ku_) sig.push_back(p_.codes[k][i]);
      auto g = gid.emplace(sig, static_cast<int>(gid.size())).first->second;
      if (g == static_cast<int>(members_.size())) members_.emplace_back();
      members_[g].push_back(i);
      group_of_[i] = g;
      for (int k : kp_) sig.push_back(p_.codes[k][i]);
      d_of_[i] = did.emplace(sig, static_cast<int>(did.size())).first->second;
    }
    // For each member of a group, the first known perturbed key in which it
    // differs from the member before it (0 at a change of stratum): the
    // products over the keys before it carry over (cells come in
    // lexicographic order, so most of a product is shared).
    group_strata_.resize(members_.size());
    for (std::size_t g = 0; g < members_.size(); ++g) {
      std::vector<int>& gs = group_strata_[g];
      for (int i : members_[g]) gs.push_back(p_.stratum[i]);
      std::sort(gs.begin(), gs.end());
      gs.erase(std::unique(gs.begin(), gs.end()), gs.end());
    }
    first_diff_.resize(members_.size());
    for (std::size_t g = 0; g < members_.size(); ++g) {
      const std::vector<int>& mem = members_[g];
      first_diff_[g].assign(mem.size(), 0);
      for (std::size_t t = 1; t < mem.size(); ++t) {
        const int i = mem[t], prev = mem[t - 1];
        int q = 0;
        if (p_.stratum[i] == p_.stratum[prev])
          while (q < nkp_ && kcodes_[q][i] == kcodes_[q][prev]) ++q;
        first_diff_[g][t] = q;
      }
    }
  }

  // Target classes: cells with the same D, stratum and count have the same
  // risks. Returns, for every cell, the representative (smallest cell id).
  std::vector<int> representatives() const {
    std::map<std::tuple<int, int, int>, int> rep;
    std::vector<int> out(p_.n_cells);
    for (int i = 0; i < p_.n_cells; ++i)
      out[i] = rep.emplace(std::make_tuple(d_of_[i], p_.stratum[i], p_.counts[i]), i).first->second;
    return out;
  }

  // R_D(a, t), P(S_D = a) for a = 1..A, P(S_D = 0) and (if asked) gamma, for
  // the unit of cell j.
  TargetRisk evaluate(int j, int A, bool want_gamma) const {
    if (j < 0 || j >= p_.n_cells) throw std::invalid_argument("vars risk: target out of range");
    if (A < 1) throw std::invalid_argument("vars risk: A must be >= 1");
    // this target's row of every known key's matrix, in every stratum
    std::vector<const double*>& prow = prow_buf_;
    std::vector<const double*>& crow = crow_buf_;
    target_rows(j, prow, crow);
    auto alpha_of = [&](int i, double& al, double& om) { alpha_rows(prow, crow, i, al, om); };
    double stay = 0.0, leave = 0.0;
    alpha_of(j, stay, leave);
    if (A == 1) {
      // the same recursion on c_0, c_1 only (pass 1 of the search)
      double c0 = 1.0, c1 = 0.0, ls = 0.0;
      std::int64_t L1 = 0, H1 = 0;
      bool ok = true;
      for_each_source(j, prow, crow, [&](std::int64_t n, double al, double om) {
        H1 += n;
        if (om <= 0.0) {
          L1 += n;
          if (n == 1) {
            c1 = c0;
            c0 = 0.0;
          } else {
            c0 = c1 = 0.0;
          }
          return true;
        }
        double b0, b1;
        if (n == 1) {
          b0 = om;
          b1 = al;
        } else if (n <= 16 && om > 1e-10) {
          b0 = om;
          for (std::int64_t t = 1; t < n; ++t) b0 *= om;
          b1 = b0 * static_cast<double>(n) * (al / om);
        } else {
          ok = false;  // the general path below
          return false;
        }
        c1 = b0 * c1 + b1 * c0;
        c0 = b0 * c0;
        if (c0 < 0x1p-600 && c1 < 0x1p-600) {
          const double mx = std::max(c0, c1);
          if (mx == 0.0) {
            ok = false;
            return false;
          }
          int e;
          std::frexp(mx, &e);
          c0 = std::ldexp(c0, -e);
          c1 = std::ldexp(c1, -e);
          ls += e * 0.6931471805599453;
        }
        return true;
      });
      // every k of the support [L1, min(H1, 1)] must have kept a positive mass
      const bool support_ok = L1 > 1 || ((L1 > 0 || c0 > 0.0) && (H1 < 1 || c1 > 0.0));
      if (ok && support_ok) {
        TargetRisk out;
        if (L1 > 1) {
          out = impossible(1, H1 + (stay > 0.0 ? 1 : 0));
        } else {
          LogDist y;
          const double mx = std::max(c0, c1);
          y.base = ls + std::log(mx);
          y.rel = {c0 > 0.0 ? std::log(c0 / mx) : kNegInf, c1 > 0.0 ? std::log(c1 / mx) : kNegInf};
          out = risk_from_dist(y, stay, leave, 1);
          out.max_s = H1 + (stay > 0.0 ? 1 : 0);
        }
        if (want_gamma) out.gamma = stay > 0 ? stay * expected_inverse_1p(parts(j)) : 0.0;
        return out;
      }
    }
    // fast path: linear space with a binary exponent
    std::vector<double> c(static_cast<std::size_t>(A) + 1, 0.0), b(static_cast<std::size_t>(A) + 1), nc(c.size());
    c[0] = 1.0;
    double log_scale = 0.0;
    std::int64_t L = 0, H = 0;  // support of Y
    int top = 0;                // highest index of c that may be nonzero
    bool lost = false, beyond = false;
    for_each_source(j, prow, crow, [&](std::int64_t n, double al, double om) {
      H += n;
      if (beyond) return true;  // only H still matters
      if (om <= 0.0) {  // point mass at n: shift
        L += n;
        if (L > A) {  // Y > A surely
          beyond = true;
          return true;
        }
        const int sh = static_cast<int>(n);
        for (int k = top; k >= 0; --k) {
          if (k + sh <= A) c[k + sh] = c[k];
          c[k] = 0.0;
        }
        top = std::min(A, top + sh);
        return true;
      }
      const int K = static_cast<int>(std::min<std::int64_t>(n, A));
      const double r = al / om;
      if (n == 1) {
        b[0] = om;
        b[1] = al;
      } else if (n <= 16 && om > 1e-10) {
        // the pmf itself, no logarithm: b_0 = om^n >= 1e-160 and
        // b_k = b_{k-1} (n - k + 1) / k * r = C(n, k) al^k om^(n-k) <= 1; a
        // b_k that underflows is caught by the support check below
        double b0 = om;
        for (std::int64_t t = 1; t < n; ++t) b0 *= om;
        b[0] = b0;
        for (int k = 1; k <= K; ++k) b[k] = b[k - 1] * (static_cast<double>(n - k + 1) / k) * r;
      } else {
        // pmf relative to its largest term on 0..K, in log space
        const double lo = std::log(al) - std::log(om);
        double lb = 0.0, mx = 0.0;
        nc[0] = 0.0;
        for (int k = 1; k <= K; ++k) {
          lb += std::log(static_cast<double>(n - k + 1) / k) + lo;
          nc[k] = lb;
          mx = std::max(mx, lb);
        }
        for (int k = 0; k <= K; ++k) b[k] = std::exp(nc[k] - mx);
        log_scale += static_cast<double>(n) * log1m_scaled(al, om, 1.0) + mx;
      }
      const int ntop = std::min(A, top + K);
      for (int k = ntop; k >= 0; --k) {
        double s = 0.0;
        const int lo_l = std::max(0, k - top), hi_l = std::min(k, K);
        for (int l = lo_l; l <= hi_l; ++l) s += b[l] * c[k - l];
        nc[k] = s;
      }
      double mx = 0.0;
      for (int k = 0; k <= ntop; ++k) {
        c[k] = nc[k];
        mx = std::max(mx, c[k]);
      }
      top = ntop;
      if (mx == 0.0) {
        lost = true;
        return false;
      }
      if (mx < 0x1p-600) {
        int e;
        std::frexp(mx, &e);
        for (int k = 0; k <= top; ++k) c[k] = std::ldexp(c[k], -e);
        log_scale += e * 0.6931471805599453;
      }
      return true;
    });
    if (beyond) {
      TargetRisk out = impossible(A, H + (stay > 0.0 ? 1 : 0));
      if (want_gamma) out.gamma = stay > 0 ? stay * expected_inverse_1p(parts(j)) : 0.0;
      return out;
    }
    const std::int64_t hi = std::min<std::int64_t>(H, A);
    for (std::int64_t k = L; k <= hi && !lost; ++k)
      if (!(c[k] > 0.0)) lost = true;
    LogDist y;
    if (lost) {
      const std::vector<Binom> all = parts(j);
      H = 0;
      for (const Binom& b0 : all) H += b0.n;
      y = sum_logdist(all, A);
    } else {
      double mx = 0.0;
      for (int k = 0; k <= top; ++k) mx = std::max(mx, c[k]);
      y.base = log_scale + std::log(mx);
      y.rel.resize(static_cast<std::size_t>(top) + 1);
      for (int k = 0; k <= top; ++k) y.rel[k] = c[k] > 0.0 ? std::log(c[k] / mx) : kNegInf;
    }
    TargetRisk out = risk_from_dist(y, stay, leave, A);
    out.max_s = H + (stay > 0.0 ? 1 : 0);
    if (want_gamma) out.gamma = stay > 0 ? stay * expected_inverse_1p(parts(j)) : 0.0;
    return out;
  }

  // R_D(1, t) alone, as the search's first pass needs it. With no unit
  // landing in D surely, P(Y = 1) = P(Y = 0) sum_i n_i alpha_i / (1 - alpha_i)
  // for independent binomials and P(Y = 0) > 0, so (eq. 4.3 at a = 1)
  //   R_D(1, t) = stay / (stay + leave sum_i n_i alpha_i / (1 - alpha_i)),
  // a sum of positive terms (relative error below (2 |K| + 4) n u). Where some
  // unit lands in D surely, evaluate() decides.
  TargetRisk risk_a1(int j) const {
    std::vector<const double*>& prow = prow_buf_;
    std::vector<const double*>& crow = crow_buf_;
    target_rows(j, prow, crow);
    double stay = 0.0, leave = 0.0;
    alpha_rows(prow, crow, j, stay, leave);
    double odds = 0.0;
    std::int64_t H = 0;
    bool sure = false;  // some unit lands in D surely
    for_each_source(j, prow, crow, [&](std::int64_t n, double al, double om) {
      if (om <= 0.0) {
        sure = true;
        return false;
      }
      H += n;
      odds += static_cast<double>(n) * (al / om);
      return true;
    });
    if (sure) return evaluate(j, 1, false);
    TargetRisk out;
    out.risk.assign(1, kNaN);
    out.log_prob.assign(1, kNaN);  // not computed here
    const double other = leave * odds;
    if (!std::isfinite(other)) return evaluate(j, 1, false);  // odds beyond a double: log space
    if (stay > 0.0 || other > 0.0) out.risk[0] = stay / (stay + other);
    out.max_s = H + (stay > 0.0 ? 1 : 0);
    return out;
  }

  int n_cells() const { return p_.n_cells; }

 private:
  const VarsPlanView& p_;
  std::vector<int> kp_, ku_;  // known perturbed / known unperturbed keys
  int nkp_ = 0;
  std::vector<std::vector<double>> rows_, comp_;
  std::vector<const int*> kcodes_;
  std::vector<std::vector<int>> first_diff_, group_strata_;
  // one target's rows (see target_rows()); every caller fills them for its
  // own target first, and nested calls are for the same target
  mutable std::vector<const double*> prow_buf_, crow_buf_;

  // Running products over the known perturbed keys, reusing the prefix the
  // previous source shares (same operations in the same order as
  // alpha_rows(), so the same numbers).
  struct Prefix {
    std::vector<double> a, o;
    bool tiny = false;
  };

  // Calls f(n, alpha, 1 - alpha) for every source cell of target j that can
  // reach D: n its units other than the target (n > 0), alpha > 0 the
  // probability that one lands in D. Products over the known perturbed keys
  // reuse the prefix shared with the previous source (alpha_next()). f
  // returns false to stop.
  template <class F>
  void for_each_source(int j, const std::vector<const double*>& prow, const std::vector<const double*>& crow,
                       F&& f) const {
    const std::vector<int>& src = members_[group_of_[j]];
    const std::vector<int>& fd = first_diff_[group_of_[j]];
    Prefix pf;
    pf.a.assign(nkp_ + 1, 1.0);
    pf.o.assign(nkp_ + 1, 0.0);
    int from = 0;
    for (std::size_t t = 0; t < src.size(); ++t) {
      const int i = src[t];
      from = std::min(from, fd[t]);
      const std::int64_t n = p_.counts[i] - (i == j ? 1 : 0);
      if (n <= 0) continue;
      double al, om;
      alpha_next(prow, crow, i, from, pf, al, om);
      from = nkp_;
      if (al <= 0.0) continue;
      if (!f(n, al, om)) return;
    }
  }
  void alpha_next(const std::vector<const double*>& prow, const std::vector<const double*>& crow, int i,
                  int from, Prefix& pf, double& al, double& om) const {
    const std::size_t base = static_cast<std::size_t>(p_.stratum[i]) * nkp_;
    for (int q = from; q < nkp_; ++q) {
      const int ci = kcodes_[q][i];
      const double pv = prow[base + q][ci];
      pf.o[q + 1] = pf.o[q] + pf.a[q] * crow[base + q][ci];
      pf.a[q + 1] = pf.a[q] * pv;
      if (pf.a[q] > 0.0 && pv > 0.0 && pf.a[q + 1] == 0.0) pf.tiny = true;
    }
    if (pf.tiny) throw underflow_error(kUnderflowMessage);
    al = pf.a[nkp_];
    om = std::min(pf.o[nkp_], 1.0);
  }
  std::vector<std::vector<int>> members_;
  std::vector<int> group_of_, d_of_;

  // alpha_D(i) for the target set D whose rows are prow (and complements
  // crow), and 1 - alpha_D(i) without cancellation. Cells i outside the
  // target's group have alpha 0 (not called).
  void alpha_rows(const std::vector<const double*>& prow, const std::vector<const double*>& crow, int i,
                  double& al, double& om) const {
    const std::size_t base = static_cast<std::size_t>(p_.stratum[i]) * nkp_;
    double a = 1.0, o = 0.0;
    bool tiny = false;
    for (int q = 0; q < nkp_; ++q) {
      const int ci = kcodes_[q][i];
      const double pv = prow[base + q][ci];
      o += a * crow[base + q][ci];  // 1 - a p = (1 - a) + a (1 - p)
      const double prev = a;
      a *= pv;
      if (prev > 0.0 && pv > 0.0 && a == 0.0) tiny = true;
    }
    if (tiny) throw underflow_error(kUnderflowMessage);
    al = a;
    om = std::min(o, 1.0);
  }

  // Only the strata present in the target's group are filled (a group lies
  // in one stratum when the strata keys are known), so a target costs
  // nothing per stratum of the table.
  void target_rows(int j, std::vector<const double*>& prow, std::vector<const double*>& crow) const {
    if (prow.size() != rows_.size()) {
      prow.assign(rows_.size(), nullptr);
      crow.assign(rows_.size(), nullptr);
    }
    for (int s : group_strata_[group_of_[j]])
      for (int q = 0; q < nkp_; ++q) {
        const std::size_t off = static_cast<std::size_t>(p_.n_levels[kp_[q]]) * kcodes_[q][j];
        prow[s * nkp_ + q] = rows_[s * nkp_ + q].data() + off;
        crow[s * nkp_ + q] = comp_[s * nkp_ + q].data() + off;
      }
  }

  std::vector<Binom> parts(int j) const {
    std::vector<const double*>& prow = prow_buf_;
    std::vector<const double*>& crow = crow_buf_;
    target_rows(j, prow, crow);
    std::vector<Binom> out;
    for (int i : members_[group_of_[j]]) {
      const std::int64_t n = p_.counts[i] - (i == j ? 1 : 0);
      if (n <= 0) continue;
      double al, om;
      alpha_rows(prow, crow, i, al, om);
      if (al > 0.0) out.push_back({n, al, om});
    }
    return out;
  }

  // S_D > A surely: every event on 0..A is impossible.
  static TargetRisk impossible(int A, std::int64_t max_s) {
    TargetRisk out;
    out.risk.assign(A, kNaN);
    out.log_prob.assign(A, kNegInf);
    out.log_p_empty = kNegInf;
    out.max_s = max_s;
    return out;
  }
};

// Per-cell results for target cells (0-based) and values of a.
template <class Interrupt>
CellRiskTable vars_cell_risk(const VarsPlanView& plan, const std::vector<int>& targets,
                             const std::vector<int>& a_values, bool want_gamma, Interrupt&& interrupt) {
  VarsRisk eng(plan);
  return representative_cell_risk(
      plan.n_cells, eng.representatives(), targets, a_values,
      [&](int r, int A) { return eng.evaluate(r, A, want_gamma); }, interrupt);
}

// The exact maximum of R_D(a, t) over what a goal covers (see max_risk()).
template <class Interrupt>
MaxRisk vars_max_risk(const VarsPlanView& plan, Goal goal, Interrupt&& interrupt) {
  VarsRisk eng(plan);
  const std::vector<int> rep = eng.representatives();
  std::vector<detail::TargetGroup> todo;
  for (int i = 0; i < plan.n_cells; ++i)
    if (rep[i] == i) todo.push_back({0, i, plan.counts[i], -1});
  MaxRisk best;
  auto eval = [&](const detail::TargetGroup& g, int A) {
    return A == 1 ? eng.risk_a1(g.cell) : eng.evaluate(g.cell, A, false);
  };
  detail::search_targets_eval(std::move(todo), eval, goal, best, interrupt);
  return best;
}

}  // namespace sdcRisk

#endif  // SDCRISK_RISK_VARS_HPP
