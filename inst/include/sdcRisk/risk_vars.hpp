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
// No matrix over the cells is formed. Cells with the same stratum and the
// same codes of K's perturbed keys have the same alpha_D for every D, so
// they merge into one source class (one binomial); an exact evaluation of a
// target is one pass over the source classes of its group (those agreeing
// with it on K's unperturbed keys), each costing O(|K|) for alpha_D and
// O(A min(T_i, A)) to convolve.
//
// Exactness of one target. The distribution of Y on 0..A is accumulated in
// linear space as c[k] * 2^e, from nonnegative numbers only (no
// cancellation), in blocks of 256 source classes whose partial distributions
// are then convolved pairwise (a balanced tree). Along any path a number
// goes through at most (A + 3) (256 + 2 + log2 n) roundings beyond the
// errors of the summands' own mass functions, so its relative error stays
// below 4e-14 (A + 3) for n < 2^31 classes; sequential accumulation would
// give (A + 3) n u, above 1e-9 at a few million cells. 1 - alpha_D(i) is
// formed without cancellation as (1 - p_1) + p_1 (1 - p_2) + p_1 p_2
// (1 - p_3) + ..., where 1 - p is exact for p >= 1/2 (Sterbenz), and where
// p is the largest entry of its column (the only one that can be near 1) it
// is the sum of the column's other entries. The support of Y is the
// interval [L, H] (L the units that land in D surely, H those that can):
// every k in [L, min(H, A)] must have c[k] > 0. Where underflow relative to
// the largest entry broke that, the target is recomputed in log space
// (logdist.hpp), which is exact at any magnitude; a probability alpha_D(i)
// below the smallest double is refused (sdcRisk::underflow_error) rather
// than rounded to an impossible event. At a = 1 the risk is a ratio of
// positive sums, R_D(1, t) = stay / (stay + leave sum_i n_i o_i), o_i =
// alpha_i / (1 - alpha_i), summed with compensation (Neumaier): relative
// error below (4 |K| + 12) u + n u^2.
//
// The certificate (vars_max_risk()) without a pass per target. Evaluating
// every target exactly costs one pass over the cells per target: quadratic
// in the cells without strata. Instead every target gets a rigorous upper
// bound on its risk from one quantity that all targets get at once in time
// linear in the cells, and only targets whose bound exceeds the best exact
// value found so far are evaluated exactly, in decreasing order of bound.
//
//   Bound at a = 1. P(Y = 1) / P(Y = 0) = sum_i o_i >= sum_i alpha_i =: lambda
//   over the other units, so R_D(1, t) <= stay / (stay + leave lambda') for
//   any lambda' <= lambda (and R <= 0 = the bound's value where stay = 0;
//   where a unit lands in D surely, P(Y = 0) = 0 and R = 0).
//
//   Bound at a >= 2. With o_i the odds of the other units, P(Y = a) /
//   P(Y = a - 1) = e_a(o) / e_{a-1}(o) (elementary symmetric polynomials;
//   the factors prod (1 - alpha_i) cancel), and
//     e_1 e_{a-1} = a e_a + sum_{|S| = a-1} (sum_{i in S} o_i) prod_S o
//                <= a e_a + (a - 1) o_max e_{a-1},
//   so e_a / e_{a-1} >= (e_1 - (a - 1) o_max) / a >= (lambda' - (a - 1)
//   o') / a =: r_a for any o' >= o_max, and
//     R_D(a, t) = (1 / a) / (1 + (leave / stay) P(Y = a) / P(Y = a - 1))
//              <= (1 / a) / (1 + (leave / stay) max(r_a, 0)),
//   besides R <= 1 / a and R <= 1 / T_j.
//
//   lambda' for every target at once. For each stratum s and known
//   perturbed key q take a nonnegative minorant of P = P_{q,s},
//     L[r, c] = D_r 1{r = c} + u_r w_c <= P[r, c]   (all entries >= 0),
//   with w_c the off-diagonal mass of column c and u_r = min_c P[r, c] / w_c
//   (sdcMicro's invariant matrices are a diagonal plus a matrix of rank at
//   most two, so one rank-one term already holds most of their off-diagonal
//   mass). Then alpha_D(i) >= prod_q L_q[d_q, i_q], and expanding the
//   product over the keys,
//     sum_i n_i prod_q L_q[d_q, i_q]
//       = sum_{S subset of keys} prod_{q in S} D_q[d_q] prod_{q not in S} u_q[d_q]
//         * M_S(group, stratum, d_S),
//     M_S(g, s, x) = sum_{i in (g, s), i_S = x} n_i prod_{q not in S} w_q[i_q],
//   a table over the classes per subset S: 2^|K| passes over the classes
//   (or only the subsets with at most two keys outside S when |K| > 6:
//   dropping nonnegative terms keeps a lower bound). B's own unit,
//   prod_q (D_q + u_q w_q)[d_q], is taken off. Every step adds and
//   multiplies nonnegative numbers; the minorant's entries are rounded
//   down (u, D scaled by 1 - 4u after the division and the subtraction), so
//   the exact sum of the stored values is <= lambda, and the computed one is
//   within (n + 4 |K| + 2^|K| + 64) u of that exact sum: lambda' is the
//   computed value times 1 - 2 (n + 4 |K| + 2^|K| + 64) u, minus B's term
//   rounded up. o' bounds the largest alpha_D over the other units by
//   products of row maxima (the diagonal where D holds other units, an
//   off-diagonal row maximum in at least one key otherwise).
//
//   Pruning. A target is skipped when its bound, raised by the evaluator's
//   own error bound (1e-11 + 512 (A + 3) u relative), is at most the best
//   exact value found: its computed risk cannot exceed the maximum. The
//   result is the same maximum as evaluating every target; among exact ties
//   the first target in the order of the search (largest bound, then
//   smallest cell) is kept unless a later one has a smaller cell.
//
// For plans whose matrices have no large rank-one part (a band of nonzeros,
// say), the bounds are weak and the search evaluates more targets: still
// exact, slower, quadratic at worst.
#ifndef SDCRISK_RISK_VARS_HPP
#define SDCRISK_RISK_VARS_HPP

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "dense_ids.hpp"
#include "errors.hpp"
#include "logdist.hpp"
#include "plan_vars.hpp"
#include "progress.hpp"
#include "quadrature.hpp"
#include "risk.hpp"

namespace sdcRisk {

constexpr const char* kUnderflowMessage =
    "a transition probability product underflows a double (below 1e-308)";

namespace detail {

constexpr double kUnit = 0x1p-53;  // unit roundoff of a double

// Relative error bound of an exact evaluation of R_D(a, t) for a <= A (see
// the header), with room to spare.
inline double vars_eval_error(std::int64_t A) { return 1e-11 + 512.0 * (static_cast<double>(A) + 3.0) * kUnit; }

// Neumaier's compensated sum.
struct CompensatedSum {
  double s = 0.0, c = 0.0;
  void add(double x) {
    const double t = s + x;
    if (std::fabs(s) >= std::fabs(x)) c += (s - t) + x;
    else c += (x - t) + s;
    s = t;
  }
  double value() const { return s + c; }
};

}  // namespace detail

class VarsRisk {
 public:
  explicit VarsRisk(const VarsPlanView& plan) : p_(plan) {
    if (static_cast<int>(p_.codes.size()) != p_.n_keys || static_cast<int>(p_.n_levels.size()) != p_.n_keys ||
        static_cast<int>(p_.var_of_key.size()) != p_.n_keys || static_cast<int>(p_.known.size()) != p_.n_keys ||
        static_cast<int>(p_.matrices.size()) != p_.n_strata * p_.n_vars || p_.n_strata < 1 || p_.n_cells < 0)
      throw std::invalid_argument("vars plan: malformed view");
    for (int i = 0; i < p_.n_cells; ++i) {
      if (p_.counts[i] < 1) throw std::invalid_argument("vars plan: cell count below 1");
      if (p_.stratum[i] < 0 || p_.stratum[i] >= p_.n_strata) throw std::invalid_argument("vars plan: stratum out of range");
      for (int k = 0; k < p_.n_keys; ++k)
        if (p_.codes[k][i] < 0 || p_.codes[k][i] >= p_.n_levels[k])
          throw std::invalid_argument("vars plan: category code out of range");
    }
    for (int k = 0; k < p_.n_keys; ++k) {
      if (p_.var_of_key[k] >= p_.n_vars) throw std::invalid_argument("vars plan: variable out of range");
      if (p_.n_levels[k] < 1) throw std::invalid_argument("vars plan: key without categories");
      if (p_.known[k] && p_.var_of_key[k] >= 0) kp_.push_back(k);
      if (p_.known[k] && p_.var_of_key[k] < 0) ku_.push_back(k);
    }
    nkp_ = static_cast<int>(kp_.size());
    for (int k : kp_) kq_.push_back(p_.n_levels[k]);
    set_up_matrices();
    set_up_classes();
  }

  int n_cells() const { return p_.n_cells; }

  // Target classes: cells with the same D, stratum and count have the same
  // risks. Returns, for every cell, the representative (smallest cell id).
  std::vector<int> representatives() const {
    const std::size_t n = static_cast<std::size_t>(p_.n_cells);
    int n_ids = 0;
    const std::vector<int> id = dense_row_ids(n, d_of_, n_d_, {p_.stratum, p_.counts},
                                              {p_.n_strata, static_cast<std::int64_t>(max_count_) + 1}, n_ids);
    std::vector<int> first(static_cast<std::size_t>(n_ids), -1), out(n);
    for (std::size_t i = 0; i < n; ++i) {
      if (first[id[i]] < 0) first[id[i]] = static_cast<int>(i);
      out[i] = first[id[i]];
    }
    return out;
  }

  // R_D(a, t), P(S_D = a) for a = 1..A, P(S_D = 0) and (if asked) gamma, for
  // the unit of cell j.
  TargetRisk evaluate(int j, int A, bool want_gamma) const {
    if (j < 0 || j >= p_.n_cells) throw std::invalid_argument("vars risk: target out of range");
    if (A < 1) throw std::invalid_argument("vars risk: A must be >= 1");
    double stay = 0.0, leave = 0.0;
    target_alpha(j, stay, leave);
    Accumulator acc(A);
    for_each_source(j, [&](std::int64_t n, double al, double om) { return acc.add(n, al, om); });
    acc.finish();
    auto gamma = [&] { return stay > 0 ? stay * expected_inverse_1p(parts(j)) : 0.0; };
    if (acc.beyond) {
      TargetRisk out = impossible(A, acc.H + (stay > 0.0 ? 1 : 0));
      if (want_gamma) out.gamma = gamma();
      return out;
    }
    LogDist y;
    std::int64_t H = acc.H;
    if (acc.lost()) {
      const std::vector<Binom> all = parts(j);
      H = 0;
      for (const Binom& b0 : all) H += b0.n;
      y = sum_logdist(all, A);
    } else {
      y = acc.dist();
    }
    TargetRisk out = risk_from_dist(y, stay, leave, A);
    out.max_s = H + (stay > 0.0 ? 1 : 0);
    if (want_gamma) out.gamma = gamma();
    return out;
  }

  // R_D(1, t) alone, as the search's first pass needs it. With no unit
  // landing in D surely, P(Y = 1) = P(Y = 0) sum_i n_i alpha_i / (1 - alpha_i)
  // for independent binomials and P(Y = 0) > 0, so (eq. 4.3 at a = 1)
  //   R_D(1, t) = stay / (stay + leave sum_i n_i alpha_i / (1 - alpha_i)),
  // a ratio of positive sums (see the header for its error). Where some
  // unit lands in D surely, evaluate() decides.
  TargetRisk risk_a1(int j) const {
    if (j < 0 || j >= p_.n_cells) throw std::invalid_argument("vars risk: target out of range");
    double stay = 0.0, leave = 0.0;
    target_alpha(j, stay, leave);
    detail::CompensatedSum odds;
    std::int64_t H = 0;
    bool sure = false;  // some unit lands in D surely
    for_each_source(j, [&](std::int64_t n, double al, double om) {
      if (om <= 0.0) {
        sure = true;
        return false;
      }
      H += n;
      odds.add(static_cast<double>(n) * (al / om));
      return true;
    });
    if (sure) return evaluate(j, 1, false);
    TargetRisk out;
    out.risk.assign(1, kNaN);
    out.log_prob.assign(1, kNaN);  // not computed here
    const double other = leave * odds.value();
    if (!std::isfinite(other)) return evaluate(j, 1, false);  // odds beyond a double: log space
    if (stay > 0.0 || other > 0.0) out.risk[0] = stay / (stay + other);
    out.max_s = H + (stay > 0.0 ? 1 : 0);
    return out;
  }

  // The exact maximum of w_j R_D(a, t) over what a goal covers (see
  // max_risk() in risk.hpp; `weight` empty: w_j = 1), by bounds and exact
  // evaluation (see the header). Every bound of a target class is
  // multiplied by the largest weight of its cells (rounding is monotone, so
  // a pruned class's computed weighted risk cannot beat the maximum either),
  // and the class reports the cell of that weight.
  template <class Interrupt>
  MaxRisk max_risk(Goal goal, const std::vector<double>& weight, Interrupt& interrupt) const {
    check_weights(weight, p_.n_cells);
    ProgressMeter<Interrupt> progress(interrupt);
    MaxRisk best;
    const std::vector<int> rep = representatives();
    std::vector<int> targets, slot(static_cast<std::size_t>(p_.n_cells), -1);
    std::vector<detail::TargetGroup> heavy;  // reported cell and weight of each target class
    for (int i = 0; i < p_.n_cells; ++i) {
      if (goal == Goal::SampleUniques && p_.counts[i] != 1) continue;
      const double w = cell_weight(weight, i);
      if (rep[i] != i) {
        detail::take_heavier(heavy[slot[rep[i]]], w, i);
        continue;
      }
      slot[i] = static_cast<int>(targets.size());
      targets.push_back(i);
      heavy.push_back({0, i, p_.counts[i], i, w});
    }
    const std::size_t nt = targets.size();
    if (nt == 0) {
      progress.done();
      return best;
    }
    // lambda' of every D (all units of its group), then per target
    const std::vector<Minorant> mino = minorants();
    const std::vector<double> lam_d = lambda_lower(mino, progress, 0.0, 0.4);
    std::vector<double> stay(nt), leave(nt), lam(nt), bound(nt);
    for (std::size_t t = 0; t < nt; ++t) {
      const int j = targets[t];
      target_alpha(j, stay[t], leave[t]);
      lam[t] = others_lower(j, lam_d[d_of_[j]], mino);
      bound[t] = heavy[t].weight * bound_a1(p_.counts[j], stay[t], leave[t], lam[t]);
    }
    // Pass 1: a = 1, largest bounds first.
    std::size_t done = 0;
    auto tick = [&](std::size_t remaining, double from, double to) {
      if (++done % 64 == 0)
        progress(from + (to - from) * static_cast<double>(done) / static_cast<double>(done + remaining));
    };
    const double pass1_end = goal == Goal::AllMatches ? 0.8 : 1.0;
    in_bound_order(bound, targets, [&](std::size_t t, std::size_t remaining) {
      if (!std::isnan(best.value) && bound[t] <= best.value) return false;
      tick(remaining, 0.4, pass1_end);
      const TargetRisk tr = risk_a1(targets[t]);
      ++best.targets_evaluated;
      detail::offer(best, heavy[t].weight * tr.risk[0], heavy[t].cell, 1);
      return true;
    });
    if (goal == Goal::AllMatches) {
      // Pass 2: a >= 2 where w / a and w / T_j can still beat the maximum.
      std::vector<double> bound2(nt, -1.0);
      for (std::size_t t = 0; t < nt; ++t) {
        const int j = targets[t];
        const double w = heavy[t].weight;
        if (!std::isnan(best.value) && w / p_.counts[j] <= best.value) continue;
        const std::int64_t A =
            detail::search_limit(detail::scaled_best(best.value, w), group_units_[group_of_[j]] + 1);
        if (A < 2) continue;
        bound2[t] = w * bound_a2(j, stay[t], leave[t], lam[t], A);
      }
      done = 0;
      in_bound_order(bound2, targets, [&](std::size_t t, std::size_t remaining) {
        if (bound2[t] < 0.0 || (!std::isnan(best.value) && bound2[t] <= best.value)) return false;
        tick(remaining, pass1_end, 1.0);
        const int j = targets[t];
        const double w = heavy[t].weight;
        const std::int64_t A =
            detail::search_limit(detail::scaled_best(best.value, w), group_units_[group_of_[j]] + 1);
        if (A < 2) return true;
        if (A > std::numeric_limits<int>::max()) throw std::invalid_argument("max_risk: search range too large");
        const TargetRisk tr = evaluate(j, static_cast<int>(A), false);
        ++best.targets_evaluated;
        for (int a = 2; a <= static_cast<int>(A); ++a) detail::offer(best, w * tr.risk[a - 1], heavy[t].cell, a);
        return true;
      });
    }
    progress.done();
    return best;
  }

 private:
  const VarsPlanView& p_;
  std::vector<int> kp_, ku_;  // known perturbed / known unperturbed keys
  int nkp_ = 0;
  std::vector<int> kq_;  // categories of each known perturbed key

  // Per (stratum s, known perturbed key q) at s * nkp_ + q: the matrix
  // (column-major), for each column the row of its largest entry if that
  // entry is above 1/2 (else -1) and the sum of the column's other entries.
  std::vector<const double*> mat_;
  std::vector<std::vector<int>> big_row_;
  std::vector<std::vector<double>> big_comp_;

  // Cells: group (known unperturbed keys), source class, D.
  std::vector<int> group_of_, cls_of_, d_of_;
  int n_groups_ = 0, n_d_ = 0, max_count_ = 0;
  // Source classes, sorted by (group, stratum, codes): units, stratum, codes
  // per key (code_[q][c]), the first key in which a class differs from the
  // class before it in its group (0 at a new stratum or group).
  std::vector<std::int64_t> c_count_;
  std::vector<int> c_stratum_, c_first_diff_;
  std::vector<std::vector<int>> c_code_;
  std::vector<int> group_start_;                   // classes of group g: [start[g], start[g + 1])
  std::vector<std::int64_t> group_units_;          // units per group
  std::vector<std::vector<int>> group_strata_;     // strata present in each group
  std::vector<std::int64_t> d_units_;              // units per D

  // --- set-up --------------------------------------------------------------

  const double* matrix(int s, int q) const { return mat_[static_cast<std::size_t>(s) * nkp_ + q]; }

  void set_up_matrices() {
    const std::size_t nm = static_cast<std::size_t>(p_.n_strata) * nkp_;
    mat_.resize(nm);
    big_row_.resize(nm);
    big_comp_.resize(nm);
    for (int s = 0; s < p_.n_strata; ++s)
      for (int q = 0; q < nkp_; ++q) {
        const std::size_t m = static_cast<std::size_t>(s) * nkp_ + q;
        const int k = kq_[q];
        const double* P = p_.matrices[static_cast<std::size_t>(s) * p_.n_vars + p_.var_of_key[kp_[q]]];
        mat_[m] = P;
        big_row_[m].assign(k, -1);
        big_comp_[m].assign(k, 0.0);
        for (int c = 0; c < k; ++c) {
          const double* col = P + static_cast<std::size_t>(k) * c;
          int r_max = 0;
          for (int r = 1; r < k; ++r)
            if (col[r] > col[r_max]) r_max = r;
          if (!(col[r_max] > 0.5)) continue;
          double rest = 0.0;
          for (int r = 0; r < k; ++r)
            if (r != r_max) rest += col[r];
          big_row_[m][c] = r_max;
          big_comp_[m][c] = rest;
        }
      }
  }

  void set_up_classes() {
    const std::size_t n = static_cast<std::size_t>(p_.n_cells);
    for (std::size_t i = 0; i < n; ++i) max_count_ = std::max(max_count_, p_.counts[i]);
    std::vector<const int*> ucols, pcols;
    std::vector<std::int64_t> urad, prad;
    for (int k : ku_) {
      ucols.push_back(p_.codes[k]);
      urad.push_back(p_.n_levels[k]);
    }
    for (int q = 0; q < nkp_; ++q) {
      pcols.push_back(p_.codes[kp_[q]]);
      prad.push_back(kq_[q]);
    }
    group_of_ = dense_row_ids(n, {}, 0, ucols, urad, n_groups_);
    int n_raw = 0;
    std::vector<const int*> ccols = {p_.stratum};
    std::vector<std::int64_t> crad = {p_.n_strata};
    ccols.insert(ccols.end(), pcols.begin(), pcols.end());
    crad.insert(crad.end(), prad.begin(), prad.end());
    const std::vector<int> raw = dense_row_ids(n, group_of_, n_groups_, ccols, crad, n_raw);
    d_of_ = dense_row_ids(n, group_of_, n_groups_, pcols, prad, n_d_);
    // classes are numbered in lexicographic order of (group, stratum, codes)
    std::vector<int> cell_of(static_cast<std::size_t>(n_raw), -1);
    cls_of_ = raw;
    c_count_.assign(static_cast<std::size_t>(n_raw), 0);
    for (std::size_t i = 0; i < n; ++i) {
      if (cell_of[raw[i]] < 0) cell_of[raw[i]] = static_cast<int>(i);
      c_count_[raw[i]] += p_.counts[i];
    }
    c_stratum_.resize(static_cast<std::size_t>(n_raw));
    c_code_.assign(nkp_, std::vector<int>(static_cast<std::size_t>(n_raw)));
    c_first_diff_.assign(static_cast<std::size_t>(n_raw), 0);
    group_start_.assign(static_cast<std::size_t>(n_groups_) + 1, 0);
    group_units_.assign(static_cast<std::size_t>(n_groups_), 0);
    group_strata_.assign(static_cast<std::size_t>(n_groups_), {});
    for (int c = 0; c < n_raw; ++c) {
      const int cell = cell_of[c], g = group_of_[cell];
      c_stratum_[c] = p_.stratum[cell];
      for (int q = 0; q < nkp_; ++q) c_code_[q][c] = pcols[q][cell];
      ++group_start_[g + 1];
      group_units_[g] += c_count_[c];
      std::vector<int>& gs = group_strata_[g];
      if (gs.empty() || gs.back() != c_stratum_[c]) gs.push_back(c_stratum_[c]);
      if (c > 0 && group_of_[cell_of[c - 1]] == g && c_stratum_[c - 1] == c_stratum_[c]) {
        int q = 0;
        while (q < nkp_ && c_code_[q][c] == c_code_[q][c - 1]) ++q;
        c_first_diff_[c] = q;
      }
    }
    for (int g = 0; g < n_groups_; ++g) group_start_[g + 1] += group_start_[g];
    d_units_.assign(static_cast<std::size_t>(n_d_), 0);
    for (std::size_t i = 0; i < n; ++i) d_units_[d_of_[i]] += p_.counts[i];
  }

  // --- exact evaluation --------------------------------------------------------

  // P_{q,s}[r, c] and 1 - P_{q,s}[r, c] without cancellation.
  void entry(int s, int q, int r, int c, double& pv, double& cm) const {
    const std::size_t m = static_cast<std::size_t>(s) * nkp_ + q;
    pv = mat_[m][r + static_cast<std::size_t>(kq_[q]) * c];
    cm = big_row_[m][c] == r ? big_comp_[m][c] : 1.0 - pv;
  }

  // Running products over the known perturbed keys, reusing the prefix the
  // previous class shares.
  struct Prefix {
    std::vector<double> a, o;
    bool tiny = false;
  };

  // alpha_D(c) and 1 - alpha_D(c) of source class c for the target codes d,
  // from key `from` on (the products before it are those of the previous
  // class).
  void alpha_next(const int* d, int c, int from, Prefix& pf, double& al, double& om) const {
    const int s = c_stratum_[c];
    for (int q = from; q < nkp_; ++q) {
      double pv, cm;
      entry(s, q, d[q], c_code_[q][c], pv, cm);
      pf.o[q + 1] = pf.o[q] + pf.a[q] * cm;  // 1 - a p = (1 - a) + a (1 - p)
      pf.a[q + 1] = pf.a[q] * pv;
      if (pf.a[q] > 0.0 && pv > 0.0 && pf.a[q + 1] == 0.0) pf.tiny = true;
    }
    if (pf.tiny) throw underflow_error(kUnderflowMessage);
    al = pf.a[nkp_];
    om = std::min(pf.o[nkp_], 1.0);
  }

  void target_codes(int j, std::vector<int>& d) const {
    d.resize(static_cast<std::size_t>(nkp_));
    for (int q = 0; q < nkp_; ++q) d[q] = p_.codes[kp_[q]][j];
  }

  // stay = alpha_D(j) of the target's own unit, leave = 1 - stay.
  void target_alpha(int j, double& stay, double& leave) const {
    std::vector<int>& d = alpha_codes_;
    Prefix& pf = alpha_prefix_;
    target_codes(j, d);
    pf.a.assign(nkp_ + 1, 1.0);
    pf.o.assign(nkp_ + 1, 0.0);
    pf.tiny = false;
    alpha_next(d.data(), cls_of_[j], 0, pf, stay, leave);
  }
  // scratch of target_alpha() and for_each_source() (never nested)
  mutable std::vector<int> alpha_codes_, source_codes_;
  mutable Prefix alpha_prefix_, source_prefix_;

  // Calls f(n, alpha, 1 - alpha) for every source class of target j that can
  // reach D: n its units other than the target (n > 0), alpha > 0 the
  // probability that one lands in D. f returns false to stop.
  template <class F>
  void for_each_source(int j, F&& f) const {
    std::vector<int>& d = source_codes_;
    Prefix& pf = source_prefix_;
    target_codes(j, d);
    const int g = group_of_[j], own = cls_of_[j];
    pf.a.assign(nkp_ + 1, 1.0);
    pf.o.assign(nkp_ + 1, 0.0);
    pf.tiny = false;
    int from = 0;
    for (int c = group_start_[g]; c < group_start_[g + 1]; ++c) {
      from = std::min(from, c_first_diff_[c]);
      const std::int64_t n = c_count_[c] - (c == own ? 1 : 0);
      if (n <= 0) continue;
      double al, om;
      alpha_next(d.data(), c, from, pf, al, om);
      from = nkp_;
      if (al <= 0.0) continue;
      if (!f(n, al, om)) return;
    }
  }

  std::vector<Binom> parts(int j) const {
    std::vector<Binom> out;
    for_each_source(j, [&](std::int64_t n, double al, double om) {
      out.push_back({n, al, om});
      return true;
    });
    return out;
  }

  // The distribution of Y on 0..A in linear space with a binary exponent:
  // classes accumulate sequentially within blocks of 256, and the blocks'
  // partial distributions are convolved pairwise (a binary counter of
  // partial results), so that no number goes through more than
  // (A + 3) (256 + 2 + log2 n) roundings.
  class Accumulator {
   public:
    explicit Accumulator(int A) : A_(A), b_(static_cast<std::size_t>(A) + 1), nc_(b_.size()) { cur_ = unit(); }
    std::int64_t H = 0;  // units that can land in D
    bool beyond = false;  // Y > A surely

    bool add(std::int64_t n, double al, double om) {
      H += n;
      if (beyond) return true;  // only H still matters
      Partial& c = cur_;
      if (om <= 0.0) {  // point mass at n: shift
        c.L += n;
        if (c.L > A_) {
          beyond = true;
          return true;
        }
        const int sh = static_cast<int>(n);
        for (int k = c.top; k >= 0; --k) {
          if (k + sh <= A_) c.c[k + sh] = c.c[k];
          c.c[k] = 0.0;
        }
        c.top = std::min(A_, c.top + sh);
      } else {
        const int K = static_cast<int>(std::min<std::int64_t>(n, A_));
        const double r = al / om;
        if (n == 1) {
          b_[0] = om;
          b_[1] = al;
        } else if (n <= 16 && om > 1e-10) {
          // the pmf itself, no logarithm: b_0 = om^n >= 1e-160 and
          // b_k = b_{k-1} (n - k + 1) / k * r = C(n, k) al^k om^(n-k) <= 1; a
          // b_k that underflows is caught by the support check
          double b0 = om;
          for (std::int64_t t = 1; t < n; ++t) b0 *= om;
          b_[0] = b0;
          for (int k = 1; k <= K; ++k) b_[k] = b_[k - 1] * (static_cast<double>(n - k + 1) / k) * r;
        } else {
          // pmf relative to its largest term on 0..K, in log space
          const double lo = std::log(al) - std::log(om);
          double lb = 0.0, mx = 0.0;
          nc_[0] = 0.0;
          for (int k = 1; k <= K; ++k) {
            lb += std::log(static_cast<double>(n - k + 1) / k) + lo;
            nc_[k] = lb;
            mx = std::max(mx, lb);
          }
          for (int k = 0; k <= K; ++k) b_[k] = std::exp(nc_[k] - mx);
          c.log_scale += static_cast<double>(n) * log1m_scaled(al, om, 1.0) + mx;
        }
        convolve_into(c, b_.data(), K);
        if (c.lost) return false;
      }
      if (++in_block_ == 256) flush();
      return true;
    }

    void finish() {
      if (beyond) return;
      flush();
      if (stack_.empty()) {
        cur_ = unit();
        return;
      }
      cur_ = std::move(stack_.back().second);
      stack_.pop_back();
      while (!stack_.empty() && !cur_.lost) {
        merge(cur_, stack_.back().second);
        stack_.pop_back();
      }
      if (!cur_.lost && cur_.L > A_) beyond = true;
    }

    // Some k of the support [L, min(H, A)] lost its mass to underflow.
    bool lost() const {
      if (cur_.lost) return true;
      const std::int64_t hi = std::min<std::int64_t>(H, A_);
      for (std::int64_t k = cur_.L; k <= hi; ++k)
        if (!(cur_.c[k] > 0.0)) return true;
      return false;
    }

    LogDist dist() const {
      LogDist y;
      double mx = 0.0;
      for (int k = 0; k <= cur_.top; ++k) mx = std::max(mx, cur_.c[k]);
      y.base = cur_.log_scale + std::log(mx);
      y.rel.resize(static_cast<std::size_t>(cur_.top) + 1);
      for (int k = 0; k <= cur_.top; ++k) y.rel[k] = cur_.c[k] > 0.0 ? std::log(cur_.c[k] / mx) : kNegInf;
      return y;
    }

   private:
    struct Partial {
      std::vector<double> c;  // c[k] 2^(log_scale / log 2) = P(k), k <= top
      double log_scale = 0.0;
      int top = 0;
      std::int64_t L = 0;  // units that land surely
      bool lost = false;   // all mass underflowed
    };
    int A_;
    std::vector<double> b_, nc_;
    Partial cur_;
    int in_block_ = 0;
    std::vector<std::pair<int, Partial>> stack_;  // (level, partial)

    Partial unit() const {
      Partial p;
      p.c.assign(static_cast<std::size_t>(A_) + 1, 0.0);
      p.c[0] = 1.0;
      return p;
    }

    // x <- x * y (truncated at A), y given by its first K + 1 entries.
    void convolve_into(Partial& x, const double* y, int K) {
      const int ntop = std::min(A_, x.top + K);
      for (int k = ntop; k >= 0; --k) {
        double s = 0.0;
        const int lo_l = std::max(0, k - x.top), hi_l = std::min(k, K);
        for (int l = lo_l; l <= hi_l; ++l) s += y[l] * x.c[k - l];
        nc_[k] = s;
      }
      double mx = 0.0;
      for (int k = 0; k <= ntop; ++k) {
        x.c[k] = nc_[k];
        mx = std::max(mx, x.c[k]);
      }
      x.top = ntop;
      if (mx == 0.0) {
        x.lost = true;
        return;
      }
      if (mx < 0x1p-600 || mx > 0x1p600) {
        int e;
        std::frexp(mx, &e);
        for (int k = 0; k <= x.top; ++k) x.c[k] = std::ldexp(x.c[k], -e);
        x.log_scale += e * 0.6931471805599453;
      }
    }

    void merge(Partial& x, const Partial& y) {
      if (y.lost) {
        x.lost = true;
        return;
      }
      x.L += y.L;
      x.log_scale += y.log_scale;
      convolve_into(x, y.c.data(), y.top);
    }

    void flush() {
      if (in_block_ == 0) return;
      in_block_ = 0;
      std::pair<int, Partial> item(0, std::move(cur_));
      while (!stack_.empty() && stack_.back().first == item.first) {
        Partial& left = stack_.back().second;
        merge(left, item.second);
        item = std::make_pair(item.first + 1, std::move(left));
        stack_.pop_back();
      }
      stack_.push_back(std::move(item));
      cur_ = unit();
    }
  };

  // S_D > A surely: every event on 0..A is impossible.
  static TargetRisk impossible(int A, std::int64_t max_s) {
    TargetRisk out;
    out.risk.assign(A, kNaN);
    out.log_prob.assign(A, kNegInf);
    out.log_p_empty = kNegInf;
    out.max_s = max_s;
    return out;
  }

  // --- bounds ---------------------------------------------------------------

  // Nonnegative minorant D 1{r = c} + u_r w_c <= P of the matrix of (s, q).
  struct Minorant {
    std::vector<double> d, u, w;
  };

  Minorant minorant(int s, int q) const {
    const int k = kq_[q];
    const double* P = matrix(s, q);
    auto at = [&](int r, int c) { return P[r + static_cast<std::size_t>(k) * c]; };
    Minorant m;
    m.w.assign(k, 0.0);
    m.u.assign(k, 0.0);
    m.d.assign(k, 0.0);
    for (int c = 0; c < k; ++c)
      for (int r = 0; r < k; ++r)
        if (r != c) m.w[c] += at(r, c);
    constexpr double down = 1.0 - 4.0 * detail::kUnit, up = 1.0 + 4.0 * detail::kUnit;
    for (int r = 0; r < k; ++r) {
      double u = std::numeric_limits<double>::infinity();
      bool any = false;
      for (int c = 0; c < k; ++c) {
        if (!(m.w[c] > 0.0)) continue;
        any = true;
        u = std::min(u, at(r, c) / m.w[c]);
      }
      m.u[r] = any ? u * down : 0.0;
      // D_r + u_r w_r <= P[r, r]: the product rounded up, the difference down
      const double uw = (m.u[r] * m.w[r]) * up;
      m.d[r] = std::max(0.0, (at(r, r) - uw) * down);
    }
    return m;
  }

  std::vector<Minorant> minorants() const {
    std::vector<Minorant> mino(static_cast<std::size_t>(p_.n_strata) * nkp_);
    for (int s = 0; s < p_.n_strata; ++s)
      for (int q = 0; q < nkp_; ++q) mino[static_cast<std::size_t>(s) * nkp_ + q] = minorant(s, q);
    return mino;
  }

  // What lambda_lower() reads of the classes, the same for every subset S:
  // per class its D and its (group, stratum) pair; per D a cell; and, for
  // the groups that meet several strata, the (D, stratum) pairs that have no
  // class of their own.
  struct LambdaLayout {
    std::vector<int> d_of_cls, gs_of, d_cell;
    int n_gs = 0;
    // A D meets several strata when the intruder does not know a stratum
    // key: then its group's other strata send units too, looked up by key.
    // Per group of several strata: its D's and its (stratum, gs) pairs.
    std::vector<std::vector<int>> multi_d;
    std::vector<std::vector<std::pair<int, int>>> multi_s;
    std::vector<std::uint64_t> has_pair;  // (D, stratum) pairs with a class, sorted
    bool any_multi = false;
  };

  LambdaLayout lambda_layout() const {
    const std::size_t nc = c_count_.size();
    LambdaLayout L;
    L.d_of_cls.assign(nc, 0);
    L.d_cell.assign(static_cast<std::size_t>(n_d_), -1);
    std::vector<int> g_of(nc);
    for (int i = 0; i < p_.n_cells; ++i) {
      L.d_of_cls[cls_of_[i]] = d_of_[i];
      if (L.d_cell[d_of_[i]] < 0) L.d_cell[d_of_[i]] = i;
    }
    for (int g = 0; g < n_groups_; ++g)
      for (int c = group_start_[g]; c < group_start_[g + 1]; ++c) g_of[c] = g;
    L.gs_of = dense_row_ids(nc, g_of, n_groups_, {c_stratum_.data()}, {p_.n_strata}, L.n_gs);
    L.multi_d.resize(static_cast<std::size_t>(n_groups_));
    L.multi_s.resize(static_cast<std::size_t>(n_groups_));
    for (int g = 0; g < n_groups_; ++g) {
      if (group_strata_[g].size() < 2) continue;
      L.any_multi = true;
      for (int c = group_start_[g]; c < group_start_[g + 1]; ++c) {
        if (L.multi_s[g].empty() || L.multi_s[g].back().first != c_stratum_[c])
          L.multi_s[g].push_back({c_stratum_[c], L.gs_of[c]});
        L.has_pair.push_back(static_cast<std::uint64_t>(L.d_of_cls[c]) * static_cast<std::uint64_t>(p_.n_strata) +
                             static_cast<std::uint64_t>(c_stratum_[c]));
      }
    }
    std::sort(L.has_pair.begin(), L.has_pair.end());
    if (L.any_multi)
      for (int d = 0; d < n_d_; ++d) {
        const int g = group_of_[L.d_cell[d]];
        if (group_strata_[g].size() >= 2) L.multi_d[g].push_back(d);
      }
    return L;
  }

  // The subsets S of the expansion (bit q set: key q takes the diagonal
  // term): all of them up to 6 known perturbed keys; beyond, those with at
  // most two keys outside S (every other term dropped: still a bound); none
  // from 31 keys (no bound at all: every target is evaluated).
  std::vector<unsigned> lambda_subsets() const {
    std::vector<unsigned> subsets;
    if (nkp_ <= 6) {
      for (unsigned m = 0; m < (1u << nkp_); ++m) subsets.push_back(m);
    } else if (nkp_ < 31) {
      const unsigned full = (1u << nkp_) - 1u;
      subsets.push_back(full);
      for (int a = 0; a < nkp_; ++a) {
        subsets.push_back(full & ~(1u << a));
        for (int b = a + 1; b < nkp_; ++b) subsets.push_back(full & ~(1u << a) & ~(1u << b));
      }
    }
    return subsets;
  }

  // Buffers of one subset's pass, kept between subsets.
  struct LambdaWork {
    std::vector<int> src_id, code;
    std::vector<double> M;
    std::vector<std::uint64_t> key;
    KeyRanks ix;
    RankWorkspace ws;
  };

  // Adds subset S's terms to lam: per source class its weight M_S(gs, d_S),
  // then for every D prod_{q in S} D_q[d_q] prod_{q not in S} u_q[d_q] M_S.
  template <class Progress>
  void lambda_add_subset(unsigned S, const LambdaLayout& L, const std::vector<Minorant>& mino, LambdaWork& w,
                         std::vector<double>& lam, Progress& progress, double at) const {
    const std::size_t nc = c_count_.size();
    const std::uint64_t limit = std::uint64_t(1) << 62;
    std::vector<int>& code = w.code;
    // ids of (gs, codes in S): packed into 64 bits when they fit, so that
    // a (D, stratum) without a class of its own can be looked up
    std::uint64_t span = static_cast<std::uint64_t>(L.n_gs);
    bool packs = true;
    for (int q = 0; q < nkp_; ++q) {
      if (!(S >> q & 1u)) continue;
      if (span > limit / static_cast<std::uint64_t>(kq_[q])) packs = false;
      else span *= static_cast<std::uint64_t>(kq_[q]);
    }
    auto key_of = [&](int gs) {
      std::uint64_t x = static_cast<std::uint64_t>(gs);
      for (int q = 0; q < nkp_; ++q)
        if (S >> q & 1u) x = x * static_cast<std::uint64_t>(kq_[q]) + static_cast<std::uint64_t>(code[q]);
      return x;
    };
    int n_ids = 0;
    if (packs) {
      for (std::size_t c = 0; c < nc; ++c) {
        for (int q = 0; q < nkp_; ++q) code[q] = c_code_[q][c];
        w.key[c] = key_of(L.gs_of[c]);
      }
      rank_keys(w.key, span, w.ix, w.ws);
      w.src_id.swap(w.ix.id);
      n_ids = w.ix.size();
    } else {
      std::vector<const int*> cols;
      std::vector<std::int64_t> rad;
      for (int q = 0; q < nkp_; ++q)
        if (S >> q & 1u) {
          cols.push_back(c_code_[q].data());
          rad.push_back(kq_[q]);
        }
      w.src_id = dense_row_ids(nc, L.gs_of, L.n_gs, cols, rad, n_ids);
    }
    w.M.assign(static_cast<std::size_t>(n_ids), 0.0);
    for (std::size_t c = 0; c < nc; ++c) {
      double wt = static_cast<double>(c_count_[c]);
      const std::size_t base = static_cast<std::size_t>(c_stratum_[c]) * nkp_;
      for (int q = 0; q < nkp_; ++q)
        if (!(S >> q & 1u)) wt *= mino[base + q].w[c_code_[q][c]];
      w.M[w.src_id[c]] += wt;
      if ((c & 0xFFFF) == 0xFFFF) progress(at);
    }
    auto add = [&](int d, int s, int id) {
      const int cell = L.d_cell[d];
      const std::size_t base = static_cast<std::size_t>(s) * nkp_;
      double f = w.M[id];
      for (int q = 0; q < nkp_; ++q) {
        const int dq = p_.codes[kp_[q]][cell];
        f *= (S >> q & 1u) ? mino[base + q].d[dq] : mino[base + q].u[dq];
      }
      lam[d] += f;
    };
    for (std::size_t c = 0; c < nc; ++c) add(L.d_of_cls[c], c_stratum_[c], w.src_id[c]);
    if (!(L.any_multi && packs)) return;
    for (int g = 0; g < n_groups_; ++g)
      for (int d : L.multi_d[g]) {
        for (int q = 0; q < nkp_; ++q) code[q] = p_.codes[kp_[q]][L.d_cell[d]];
        for (const auto& sg : L.multi_s[g]) {
          if (std::binary_search(L.has_pair.begin(), L.has_pair.end(),
                                 static_cast<std::uint64_t>(d) * static_cast<std::uint64_t>(p_.n_strata) +
                                     static_cast<std::uint64_t>(sg.first)))
            continue;  // counted with its class
          const int id = w.ix.find(key_of(sg.second));
          if (id >= 0) add(d, sg.first, id);
        }
      }
  }

  // For every D: a lower bound on sum_i n_i alpha_D(i) over all units of its
  // group (B's own unit included), by the expansion of the header.
  template <class Progress>
  std::vector<double> lambda_lower(const std::vector<Minorant>& mino, Progress& progress, double from,
                                   double to) const {
    const std::size_t nc = c_count_.size();
    std::vector<double> lam(static_cast<std::size_t>(n_d_), 0.0);
    if (nc == 0) return lam;
    const LambdaLayout L = lambda_layout();
    const std::vector<unsigned> subsets = lambda_subsets();
    LambdaWork w;
    w.src_id.assign(nc, 0);
    w.code.assign(static_cast<std::size_t>(nkp_), 0);
    w.key.assign(nc, 0);
    const double step = (to - from) / static_cast<double>(std::max<std::size_t>(subsets.size(), 1));
    for (std::size_t si = 0; si < subsets.size(); ++si) {
      const double at = from + step * static_cast<double>(si);
      progress(at);
      lambda_add_subset(subsets[si], L, mino, w, lam, progress, at);
    }
    // the computed sums are within (n + 4 |K| + 2^|K| + 64) u of the exact
    // sums of the stored minorants (nonnegative terms); round down by twice that
    const double err = 2.0 * (static_cast<double>(nc) + 4.0 * nkp_ + static_cast<double>(subsets.size()) + 64.0) *
                       detail::kUnit;
    for (double& x : lam) x *= 1.0 - err;
    return lam;
  }

  // lambda' over the units other than B: the group's bound minus B's own
  // term prod_q (D_q + u_q w_q)[d_q], rounded up.
  double others_lower(int j, double lam_all, const std::vector<Minorant>& mino) const {
    const std::size_t base = static_cast<std::size_t>(p_.stratum[j]) * nkp_;
    double own = 1.0;
    for (int q = 0; q < nkp_; ++q) {
      const int dq = p_.codes[kp_[q]][j];
      const Minorant& m = mino[base + q];
      own *= m.d[dq] + m.u[dq] * m.w[dq];
    }
    own *= 1.0 + (4.0 * nkp_ + 8.0) * detail::kUnit;
    const double x = (lam_all - own) * (1.0 - 2.0 * detail::kUnit);
    return x > 0.0 ? x : 0.0;
  }

  // Upper bound on R_D(1, t) (header), raised by the evaluator's error.
  static double bound_a1(int count, double stay, double leave, double lam) {
    const double cap = 1.0 / count;
    if (!(stay > 0.0)) return 0.0;
    const double b = stay / (stay + leave * lam) * (1.0 + detail::vars_eval_error(1));
    return std::min(cap, b);
  }

  // Upper bound on max_{2 <= a <= A} R_D(a, t) (header).
  double bound_a2(int j, double stay, double leave, double lam, std::int64_t A) const {
    if (!(stay > 0.0)) return 0.0;
    const double cap = 1.0 / p_.counts[j];
    const double o = odds_upper(j);
    const double rho = leave / stay;
    const std::int64_t top = std::min<std::int64_t>(A, 64);
    double best = 0.0;
    for (std::int64_t a = 2; a <= top; ++a) {
      double r = std::isinf(o) ? 0.0 : (lam - static_cast<double>(a - 1) * o) / static_cast<double>(a);
      if (!(r > 0.0)) r = 0.0;
      best = std::max(best, (1.0 / static_cast<double>(a)) / (1.0 + rho * r));
    }
    if (A > 64) best = std::max(best, 1.0 / 65.0);
    return std::min(cap, best * (1.0 + detail::vars_eval_error(A)));
  }

  // An upper bound on the largest odds alpha / (1 - alpha) of a unit other
  // than B that can land in D (infinity if it may be 1).
  double odds_upper(int j) const {
    if (nkp_ == 0) return std::numeric_limits<double>::infinity();
    const bool others_in_d = d_units_[d_of_[j]] > 1;
    double amax = 0.0;
    for (int s : group_strata_[group_of_[j]]) {
      double diag = 1.0, rowmax_all = 1.0;
      std::vector<double> rowmax(static_cast<std::size_t>(nkp_)), offmax(static_cast<std::size_t>(nkp_));
      for (int q = 0; q < nkp_; ++q) {
        const int k = kq_[q], r = p_.codes[kp_[q]][j];
        const double* P = matrix(s, q);
        double rm = 0.0, om = 0.0;
        for (int c = 0; c < k; ++c) {
          const double x = P[r + static_cast<std::size_t>(k) * c];
          rm = std::max(rm, x);
          if (c != r) om = std::max(om, x);
        }
        rowmax[q] = rm;
        offmax[q] = om;
        diag *= P[r + static_cast<std::size_t>(k) * r];
        rowmax_all *= rm;
      }
      if (others_in_d) amax = std::max(amax, diag);
      for (int q = 0; q < nkp_; ++q) {
        double x = offmax[q];
        for (int q2 = 0; q2 < nkp_; ++q2)
          if (q2 != q) x *= rowmax[q2];
        amax = std::max(amax, x);
      }
    }
    amax *= 1.0 + (2.0 * nkp_ + 4.0) * detail::kUnit;
    if (amax >= 1.0 - 1e-9) return std::numeric_limits<double>::infinity();
    return amax / (1.0 - amax) * (1.0 + 1e-12);
  }

  // Calls visit(t, remaining) for the targets in decreasing order of bound,
  // then increasing cell id, until it returns false. A heap: only the
  // targets visited are ordered.
  template <class Visit>
  static void in_bound_order(const std::vector<double>& bound, const std::vector<int>& targets, Visit&& visit) {
    auto below = [&](std::size_t x, std::size_t y) {
      if (bound[x] != bound[y]) return bound[x] < bound[y];
      return targets[x] > targets[y];
    };
    std::vector<std::size_t> heap(bound.size());
    std::iota(heap.begin(), heap.end(), std::size_t(0));
    std::make_heap(heap.begin(), heap.end(), below);
    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end(), below);
      const std::size_t t = heap.back();
      heap.pop_back();
      if (!visit(t, heap.size())) return;
    }
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

// The exact maximum of w_j R_D(a, t) over what a goal covers (see
// max_risk(); `weight` empty: w_j = 1).
template <class Interrupt>
MaxRisk vars_max_risk(const VarsPlanView& plan, Goal goal, const std::vector<double>& weight, Interrupt&& interrupt) {
  VarsRisk eng(plan);
  return eng.max_risk(goal, weight, interrupt);
}

template <class Interrupt>
MaxRisk vars_max_risk(const VarsPlanView& plan, Goal goal, Interrupt&& interrupt) {
  return vars_max_risk(plan, goal, std::vector<double>(), interrupt);
}

}  // namespace sdcRisk

#endif  // SDCRISK_RISK_VARS_HPP
