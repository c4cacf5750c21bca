// Secondary cell suppression: witness tables combined.
//
// Plain C++17, no R headers. The tables of one component's program (every
// relation kept, every bound within the program's first bounds) form a
// convex polytope, and so does the part of it that keeps a respondent's
// knowledge (a few cells' bounds tightened). A table of the earlier
// programs that breaks the knowledge is no witness there, but a convex
// combination of several such tables and the published table may keep it
// exactly (a table that moves a known cell up and one that moves it down,
// weighted so that the moves cancel). The best such combination for one
// cell is a linear program over the tables' weights with as many rows as
// known cells, plus one: hull_maximum() solves it by a dense bounded primal
// simplex (a handful of rows; its optimum uses at most that many tables),
// and combination_extremes() uses it to settle the ends that no single
// table settles, without the component's own program: one HullProgram for
// all the ends of a call, each from the basis the last one ended at.
#ifndef SDCRISK_TABLE_HULL_HPP
#define SDCRISK_TABLE_HULL_HPP

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <vector>

namespace sdcRisk {

// The program
//   maximize g'l  s.t.  L_i <= (D l)_i <= U_i (i < r),  sum(l) <= 1,  l >= 0
// over m weights l, D an r x m matrix (column-major: D[i + r j]), with
// L_i <= 0 <= U_i (l = 0 is feasible; L_i may be -Inf, U_i Inf). Solved by
// a bounded primal simplex on the rows' activities w = (D l, sum(l)) as
// logical columns, from the basis of every logical (l = 0), with a dense
// inverse of the basis (r + 1 rows); Dantzig's rule, Bland's after
// `stall` degenerate steps in a row (the smallest index enters, and of the
// rows that tie in the ratio test the smallest index leaves). The rows and
// the objective are scaled to unit size first. `ok` is false when the
// iteration limit stops it
// (the caller then has no combination, never a wrong one: it checks the
// weights it gets against the original rows again). `optimal` is false
// when HullProgram::maximize() stopped early, at weights whose value
// reached its `stop_at`.
struct HullSolution {
  bool ok = false;
  bool optimal = false;
  std::vector<double> weight;
  double value = 0.0;
  int iterations = 0;
};

// The rows of hull_maximum()'s program, kept with the basis of its last
// solution: the next objective over the same rows (combination_extremes()
// solves one per target end) starts from that basis, feasible for every
// objective, instead of from l = 0. With `stop_at`, maximize() returns as
// soon as the weights' value g'l reaches it (feasible weights of that
// value serve a caller that needs no more), not optimal; a later call
// goes on from there. The basis' inverse is computed again from its
// columns after `refactor_pivots` updates (a failed inversion, or basic
// values that left their bounds by more than a rounding, start again
// from l = 0).
class HullProgram {
 public:
  HullProgram(const std::vector<double>& D, std::size_t r, std::size_t m, const std::vector<double>& L,
              const std::vector<double>& U)
      : r_(r), m_(m), R_(r + 1), n_(m + r + 1) {
    if (D.size() != r * m || L.size() != r || U.size() != r) {
      throw std::invalid_argument("hull program: sizes differ");
    }
    const double inf = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < r; ++i) {
      if (std::isnan(L[i]) || std::isnan(U[i]) || L[i] > 0.0 || U[i] < 0.0) {
        throw std::invalid_argument("hull program: the bounds must keep 0");
      }
    }
    // scaled matrix (rows of unit size) with the sum row last; bounds alike
    A_.assign(R_ * m, 0.0);
    lo_.assign(n_, 0.0);
    up_.assign(n_, inf);
    for (std::size_t i = 0; i < r; ++i) {
      double s = 0.0;
      for (std::size_t j = 0; j < m; ++j) {
        const double d = D[i + r * j];
        if (!std::isfinite(d)) throw std::invalid_argument("hull program: a non-finite entry");
        s = std::max(s, std::fabs(d));
      }
      const double scale = s > 0.0 ? 1.0 / s : 1.0;
      for (std::size_t j = 0; j < m; ++j) A_[i + R_ * j] = D[i + r * j] * scale;
      lo_[m + i] = L[i] * scale;
      up_[m + i] = U[i] * scale;
    }
    for (std::size_t j = 0; j < m; ++j) A_[r + R_ * j] = 1.0;
    lo_[m + r] = 0.0;
    up_[m + r] = 1.0;
    col_.resize(R_);
    y_.resize(R_);
    alpha_.resize(R_);
    cold();
  }

  HullSolution maximize(const std::vector<double>& g,
                        double stop_at = std::numeric_limits<double>::infinity(), int max_iterations = -1) {
    if (g.size() != m_) throw std::invalid_argument("hull program: sizes differ");
    const double inf = std::numeric_limits<double>::infinity();
    const std::size_t R = R_, m = m_, n = n_;
    double gs = 0.0;
    for (std::size_t j = 0; j < m; ++j) {
      if (!std::isfinite(g[j])) throw std::invalid_argument("hull program: a non-finite objective");
      gs = std::max(gs, std::fabs(g[j]));
    }
    const double gscale = gs > 0.0 ? 1.0 / gs : 1.0;
    std::vector<double> c(n, 0.0);
    for (std::size_t j = 0; j < m; ++j) c[j] = g[j] * gscale;
    if (pivots_ >= refactor_pivots) refactor();
    HullSolution out;
    out.weight.assign(m, 0.0);
    // (the weights' value, for `stop_at`)
    const auto value_now = [&] {
      double v = 0.0;
      for (std::size_t j = 0; j < m; ++j) {
        if (x_[j] > 0.0) v += g[j] * x_[j];
      }
      return v;
    };
    const bool stops = stop_at < inf;
    const double eps_d = 1e-9, eps_piv = 1e-9, eps_x = 1e-12;
    const int limit = max_iterations > 0 ? max_iterations : static_cast<int>(50 * (R + m) + 100);
    const int stall = 20;
    int degenerate = 0;
    for (int it = 0;; ++it) {
      if (stops && value_now() >= stop_at) {
        out.iterations = it;
        out.ok = true;
        break;
      }
      if (it >= limit) {
        out.iterations = it;
        // (the next objective starts again from l = 0)
        cold();
        return out;
      }
      // duals y = c_B' B^-1
      for (std::size_t k = 0; k < R; ++k) {
        double s = 0.0;
        for (std::size_t i = 0; i < R; ++i) s += c[head_[i]] * binv_[i * R + k];
        y_[k] = s;
      }
      // pricing: a nonbasic variable whose move improves the objective
      const bool bland = degenerate >= stall;
      std::size_t q = n;
      double best = 0.0;
      int dir = 0;
      for (std::size_t j = 0; j < n; ++j) {
        if (where_[j] >= 0) continue;
        double d;
        if (j < m) {
          d = c[j];
          for (std::size_t i = 0; i < R; ++i) d -= y_[i] * A_[i + R * j];
        } else {
          d = y_[j - m];
        }
        const bool at_up = x_[j] >= up_[j];
        const bool at_lo = x_[j] <= lo_[j];
        int s = 0;
        if (d > eps_d && !at_up) s = 1;
        else if (d < -eps_d && !at_lo) s = -1;
        if (!s) continue;
        if (bland) {
          q = j;
          dir = s;
          break;
        }
        if (std::fabs(d) > best) {
          best = std::fabs(d);
          q = j;
          dir = s;
        }
      }
      if (q == n) {
        out.iterations = it;
        out.ok = true;
        out.optimal = true;
        break;  // optimal
      }
      // alpha = B^-1 a_q; the basic variables move by -dir * theta * alpha
      column(q);
      for (std::size_t i = 0; i < R; ++i) {
        double s = 0.0;
        for (std::size_t k = 0; k < R; ++k) s += binv_[i * R + k] * col_[k];
        alpha_[i] = s;
      }
      // (the entering variable's own way to its other bound, from where it
      // is: one put back to a bound by x += dir * theta may lie a rounding
      // off it, and its whole range from there overshot the bound; found by
      // tests/cpp/test_table_hull.cpp on ranges with one open side)
      double theta = dir > 0 ? up_[q] - x_[q] : x_[q] - lo_[q];
      std::size_t leave = R;
      bool leave_up = false;
      for (std::size_t i = 0; i < R; ++i) {
        const double a = dir * alpha_[i];
        if (std::fabs(a) <= eps_piv) continue;
        const std::size_t b = head_[i];
        double t;
        bool to_up;
        if (a > 0.0) {  // falls to its lower bound
          if (lo_[b] == -inf) continue;
          t = (x_[b] - lo_[b]) / a;
          to_up = false;
        } else {  // rises to its upper bound
          if (up_[b] == inf) continue;
          t = (up_[b] - x_[b]) / -a;
          to_up = true;
        }
        t = std::max(t, 0.0);
        // among rows that tie (within eps_x), the largest pivot; under
        // Bland's rule the basic variable of the smallest index, without
        // which the rule can cycle (it did, at l = 0 of programs whose rows
        // are all known cells: every step there is degenerate)
        const bool tie = leave < R && std::fabs(t - theta) <= eps_x;
        // (`leave` is a row only once one was chosen: read only on a tie)
        const bool better =
            tie ? (bland ? head_[i] < head_[leave] : std::fabs(alpha_[i]) > std::fabs(alpha_[leave])) : t < theta;
        if (better) {
          theta = std::min(theta, t);
          leave = i;
          leave_up = to_up;
        }
      }
      if (theta == inf) {
        // cannot happen (the weights' sum is at most 1): no combination
        out.iterations = it;
        cold();
        return out;
      }
      degenerate = theta <= eps_x ? degenerate + 1 : 0;
      x_[q] += dir * theta;
      for (std::size_t i = 0; i < R; ++i) x_[head_[i]] -= dir * theta * alpha_[i];
      if (leave == R) {
        // the entering variable went to its other bound: exactly there
        x_[q] = dir > 0 ? up_[q] : lo_[q];
        continue;
      }
      // the leaving variable at the bound it reached, q basic in its row
      const std::size_t b = head_[leave];
      x_[b] = leave_up ? up_[b] : lo_[b];
      where_[b] = -1;
      head_[leave] = q;
      where_[q] = static_cast<int>(leave);
      const double piv = alpha_[leave];
      for (std::size_t k = 0; k < R; ++k) binv_[leave * R + k] /= piv;
      for (std::size_t i = 0; i < R; ++i) {
        if (i == leave || alpha_[i] == 0.0) continue;
        const double f = alpha_[i];
        for (std::size_t k = 0; k < R; ++k) binv_[i * R + k] -= f * binv_[leave * R + k];
      }
      ++pivots_;
    }
    double value = 0.0;
    for (std::size_t j = 0; j < m; ++j) {
      out.weight[j] = std::max(x_[j], 0.0);
      value += g[j] * out.weight[j];
    }
    out.value = value;
    return out;
  }

  // how many times the basis' inverse was computed again (for the tests)
  int refactored() const { return refactored_; }

 private:
  static constexpr int refactor_pivots = 100;
  std::size_t r_, m_, R_, n_;
  std::vector<double> A_, lo_, up_;
  // basis: head_[i] the variable of row i; binv_ the basis' inverse
  // (row-major R x R); x_ the values of every variable
  std::vector<std::size_t> head_;
  std::vector<int> where_;  // the row of a basic variable, -1 if not
  std::vector<double> binv_, x_, col_, y_, alpha_;
  int pivots_ = 0;
  int refactored_ = 0;

  // the column of variable q (a weight's, or a logical's -e_i)
  void column(std::size_t q) {
    if (q < m_) {
      for (std::size_t i = 0; i < R_; ++i) col_[i] = A_[i + R_ * q];
    } else {
      std::fill(col_.begin(), col_.end(), 0.0);
      col_[q - m_] = -1.0;
    }
  }

  // the basis of every logical, l = 0
  void cold() {
    head_.assign(R_, 0);
    where_.assign(n_, -1);
    binv_.assign(R_ * R_, 0.0);
    x_.assign(n_, 0.0);
    for (std::size_t i = 0; i < R_; ++i) {
      head_[i] = m_ + i;
      where_[m_ + i] = static_cast<int>(i);
      binv_[i * R_ + i] = -1.0;  // B = -I
    }
    pivots_ = 0;
  }

  // the inverse of the basis from its columns (Gauss-Jordan, partial
  // pivoting), and the basic values from the nonbasic ones (B x_B = -N x_N)
  void refactor() {
    const std::size_t R = R_;
    std::vector<double> B(R * R), inv(R * R, 0.0);
    for (std::size_t i = 0; i < R; ++i) {
      column(head_[i]);
      for (std::size_t k = 0; k < R; ++k) B[k * R + i] = col_[k];  // B[k][i]
      inv[i * R + i] = 1.0;
    }
    for (std::size_t c = 0; c < R; ++c) {
      std::size_t p = c;
      for (std::size_t k = c + 1; k < R; ++k) {
        if (std::fabs(B[k * R + c]) > std::fabs(B[p * R + c])) p = k;
      }
      if (std::fabs(B[p * R + c]) < 1e-11) {
        cold();
        return;
      }
      if (p != c) {
        for (std::size_t k = 0; k < R; ++k) {
          std::swap(B[p * R + k], B[c * R + k]);
          std::swap(inv[p * R + k], inv[c * R + k]);
        }
      }
      const double d = B[c * R + c];
      for (std::size_t k = 0; k < R; ++k) {
        B[c * R + k] /= d;
        inv[c * R + k] /= d;
      }
      for (std::size_t k = 0; k < R; ++k) {
        if (k == c || B[k * R + c] == 0.0) continue;
        const double f = B[k * R + c];
        for (std::size_t l = 0; l < R; ++l) {
          B[k * R + l] -= f * B[c * R + l];
          inv[k * R + l] -= f * inv[c * R + l];
        }
      }
    }
    // the rows' residual of the nonbasic variables: sum_j col_j x_j
    std::vector<double> res(R, 0.0);
    for (std::size_t j = 0; j < n_; ++j) {
      if (where_[j] >= 0 || x_[j] == 0.0) continue;
      column(j);
      for (std::size_t k = 0; k < R; ++k) res[k] += col_[k] * x_[j];
    }
    for (std::size_t i = 0; i < R; ++i) {
      double s = 0.0;
      for (std::size_t k = 0; k < R; ++k) s -= inv[i * R + k] * res[k];
      const std::size_t b = head_[i];
      const double slack = 1e-9 * (1.0 + std::fabs(s));
      if (s < lo_[b] - slack || s > up_[b] + slack) {
        cold();
        return;
      }
      x_[b] = std::min(std::max(s, lo_[b]), up_[b]);
    }
    binv_ = inv;
    pivots_ = 0;
    ++refactored_;
  }
};

inline HullSolution hull_maximum(const std::vector<double>& D, std::size_t r, std::size_t m,
                                 const std::vector<double>& g, const std::vector<double>& L,
                                 const std::vector<double>& U, int max_iterations = -1) {
  if (D.size() != r * m || g.size() != m || L.size() != r || U.size() != r) {
    throw std::invalid_argument("hull program: sizes differ");
  }
  HullProgram p(D, r, m, L, U);
  return p.maximize(g, std::numeric_limits<double>::infinity(), max_iterations);
}

// The extremes of the rows `rows` of a component's program over the convex
// combinations of the published table `center` and the tables `tables`
// (each n_row values, all within the program's first bounds) that keep
// rows check[c] within [lo[c], hi[c]] (the bounds a respondent's knowledge
// tightened; the center keeps them within tol[c]). Starting from the
// extremes seen so far (`seen_hi`, `seen_lo`), each row whose largest
// value is short of need_hi (or smallest above need_lo) gets the best
// combination for it (hull_maximum()), whose values are then seen at every
// row; a combination is used only when it keeps the checked rows within
// tol[c] (and the rounding of its sum, 10^-12 of its terms' size) once
// computed from its weights, scaled down so that they sum to at most 1.
// Tables with a non-finite value in a checked row or in `rows` take no
// part. With `all_or_none`, it stops at the first row whose best
// combination falls short of its need (`settled` false: a caller that
// needs every end settled then solves the rest otherwise). The programs
// share one HullProgram: each starts from the basis the last one ended
// at, and stops once its row reaches its need (any such combination
// settles the end; a row with no need, need_hi = Inf, gets its best).
// `warm = false` solves each from l = 0 to its optimum instead (for the
// tests to compare). Returns the extremes, how many programs were solved
// and whether every row reaches its needs. 0-based rows.
struct CombinationExtremes {
  std::vector<double> max, min;
  std::size_t programs = 0;
  bool settled = false;
};

inline CombinationExtremes combination_extremes(
    const std::vector<const double*>& tables, std::size_t n_row, const std::vector<int>& rows,
    const std::vector<int>& check, const std::vector<double>& lo, const std::vector<double>& hi,
    const std::vector<double>& tol, const std::vector<double>& center, const std::vector<double>& need_hi,
    const std::vector<double>& need_lo, const std::vector<double>& seen_hi, const std::vector<double>& seen_lo,
    bool all_or_none = false, bool warm = true) {
  const std::size_t nr = rows.size(), r = check.size();
  if (lo.size() != r || hi.size() != r || tol.size() != r) {
    throw std::invalid_argument("bounds of the checked rows differ in length");
  }
  if (center.size() != n_row) throw std::invalid_argument("the center differs in length");
  if (need_hi.size() != nr || need_lo.size() != nr || seen_hi.size() != nr || seen_lo.size() != nr) {
    throw std::invalid_argument("the needs differ in length from the rows");
  }
  for (const int k : rows) {
    if (k < 0 || static_cast<std::size_t>(k) >= n_row) throw std::invalid_argument("row out of range");
  }
  for (const int k : check) {
    if (k < 0 || static_cast<std::size_t>(k) >= n_row) throw std::invalid_argument("checked row out of range");
  }
  CombinationExtremes out;
  out.max = seen_hi;
  out.min = seen_lo;
  std::vector<double> L(r), U(r);
  for (std::size_t c = 0; c < r; ++c) {
    const double v0 = center[static_cast<std::size_t>(check[c])];
    if (!std::isfinite(v0) || std::isnan(lo[c]) || std::isnan(hi[c]) || v0 < lo[c] - tol[c] ||
        v0 > hi[c] + tol[c]) {
      throw std::invalid_argument("the center breaks the bounds of the checked rows");
    }
    L[c] = std::min(lo[c] - v0, 0.0);
    U[c] = std::max(hi[c] - v0, 0.0);
  }
  const auto all_settled = [&] {
    for (std::size_t k = 0; k < nr; ++k) {
      if (out.max[k] < need_hi[k] || out.min[k] > need_lo[k]) return false;
    }
    return true;
  };
  out.settled = all_settled();
  if (out.settled) return out;
  for (const int k : rows) {
    if (!std::isfinite(center[static_cast<std::size_t>(k)])) return out;
  }
  // the tables that take part, as deviations from the center on the
  // checked rows
  std::vector<const double*> use;
  use.reserve(tables.size());
  for (const double* t : tables) {
    bool ok = true;
    for (std::size_t c = 0; c < r && ok; ++c) ok = std::isfinite(t[check[c]]);
    for (std::size_t k = 0; k < nr && ok; ++k) ok = std::isfinite(t[rows[k]]);
    if (ok) use.push_back(t);
  }
  const std::size_t m = use.size();
  if (!m) return out;
  // the program's rows: the checked rows some table moves (a row no table
  // moves keeps its bounds in every combination)
  std::vector<std::size_t> act;
  for (std::size_t c = 0; c < r; ++c) {
    const std::size_t row = static_cast<std::size_t>(check[c]);
    for (std::size_t j = 0; j < m; ++j) {
      if (use[j][row] != center[row]) {
        act.push_back(c);
        break;
      }
    }
  }
  const std::size_t ra = act.size();
  std::vector<double> D(ra * m), g(m), La(ra), Ua(ra);
  for (std::size_t q = 0; q < ra; ++q) {
    La[q] = L[act[q]];
    Ua[q] = U[act[q]];
    const std::size_t row = static_cast<std::size_t>(check[act[q]]);
    for (std::size_t j = 0; j < m; ++j) D[q + ra * j] = use[j][row] - center[row];
  }
  // (the tables a combination weighs: at most one per row of its program,
  // so each value reads those alone, not every table)
  std::vector<std::size_t> on;
  const auto see = [&](const std::vector<double>& w) {
    // the combination's values, from its weights, checked first
    double sum = 0.0;
    on.clear();
    for (std::size_t j = 0; j < m; ++j) {
      sum += w[j];
      if (w[j] > 0.0) on.push_back(j);
    }
    const double shrink = sum > 1.0 ? 1.0 / sum : 1.0;
    for (std::size_t c = 0; c < r; ++c) {
      const std::size_t row = static_cast<std::size_t>(check[c]);
      double v = center[row], size = std::fabs(center[row]);
      for (const std::size_t j : on) {
        const double d = shrink * w[j] * (use[j][row] - center[row]);
        v += d;
        size += std::fabs(d);
      }
      // (beyond the tolerance by the sum's rounding at most)
      const double slack = tol[c] + 1e-12 * (1.0 + size);
      if (!(v >= lo[c] - slack && v <= hi[c] + slack)) return;
    }
    for (std::size_t k = 0; k < nr; ++k) {
      const std::size_t row = static_cast<std::size_t>(rows[k]);
      double v = center[row];
      for (const std::size_t j : on) v += shrink * w[j] * (use[j][row] - center[row]);
      out.max[k] = std::max(out.max[k], v);
      out.min[k] = std::min(out.min[k], v);
    }
  };
  // (one program for every end: only the objective changes)
  HullProgram program(D, ra, m, La, Ua);
  for (const int upward : {1, 0}) {
    for (std::size_t k = 0; k < nr; ++k) {
      if (upward ? out.max[k] >= need_hi[k] : out.min[k] <= need_lo[k]) continue;
      const std::size_t row = static_cast<std::size_t>(rows[k]);
      const double sign = upward ? 1.0 : -1.0;
      for (std::size_t j = 0; j < m; ++j) g[j] = sign * (use[j][row] - center[row]);
      ++out.programs;
      if (!warm) {
        const HullSolution h = hull_maximum(D, ra, m, g, La, Ua);
        if (h.ok && h.value > 0.0) see(h.weight);
      } else {
        // (from the basis the last program ended at, until the row
        // reaches its need: any combination of that value settles the end.
        // The rounding of its values may leave it a hair short, and then
        // the program goes on to its optimum)
        const double want = upward ? need_hi[k] - center[row] : center[row] - need_lo[k];
        const double stop_at = want + 1e-9 * (1.0 + std::fabs(want) + std::fabs(center[row]));
        HullSolution h = program.maximize(g, stop_at);
        if (h.ok && h.value > 0.0) see(h.weight);
        if (h.ok && !h.optimal && (upward ? out.max[k] < need_hi[k] : out.min[k] > need_lo[k])) {
          h = program.maximize(g);
          if (h.ok && h.value > 0.0) see(h.weight);
        }
      }
      if (all_or_none && (upward ? out.max[k] < need_hi[k] : out.min[k] > need_lo[k])) return out;
    }
  }
  out.settled = all_settled();
  return out;
}

}  // namespace sdcRisk

#endif  // SDCRISK_TABLE_HULL_HPP
