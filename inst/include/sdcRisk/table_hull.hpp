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
// table settles, without the component's own program.
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
// weights it gets against the original rows again).
struct HullSolution {
  bool ok = false;
  std::vector<double> weight;
  double value = 0.0;
  int iterations = 0;
};

inline HullSolution hull_maximum(const std::vector<double>& D, std::size_t r, std::size_t m,
                                 const std::vector<double>& g, const std::vector<double>& L,
                                 const std::vector<double>& U, int max_iterations = -1) {
  if (D.size() != r * m || g.size() != m || L.size() != r || U.size() != r) {
    throw std::invalid_argument("hull program: sizes differ");
  }
  const double inf = std::numeric_limits<double>::infinity();
  const std::size_t R = r + 1;  // rows: the r ranges and the weights' sum
  const std::size_t n = m + R;  // columns: weights, then logicals
  HullSolution out;
  out.weight.assign(m, 0.0);
  for (std::size_t i = 0; i < r; ++i) {
    if (std::isnan(L[i]) || std::isnan(U[i]) || L[i] > 0.0 || U[i] < 0.0) {
      throw std::invalid_argument("hull program: the bounds must keep 0");
    }
  }
  // scaled matrix (rows of unit size) with the sum row last; bounds alike
  std::vector<double> A(R * m, 0.0), lo(n, 0.0), up(n, inf), c(n, 0.0);
  for (std::size_t i = 0; i < r; ++i) {
    double s = 0.0;
    for (std::size_t j = 0; j < m; ++j) {
      const double d = D[i + r * j];
      if (!std::isfinite(d)) throw std::invalid_argument("hull program: a non-finite entry");
      s = std::max(s, std::fabs(d));
    }
    const double scale = s > 0.0 ? 1.0 / s : 1.0;
    for (std::size_t j = 0; j < m; ++j) A[i + R * j] = D[i + r * j] * scale;
    lo[m + i] = L[i] * scale;
    up[m + i] = U[i] * scale;
  }
  for (std::size_t j = 0; j < m; ++j) A[r + R * j] = 1.0;
  lo[m + r] = 0.0;
  up[m + r] = 1.0;
  double gs = 0.0;
  for (std::size_t j = 0; j < m; ++j) {
    if (!std::isfinite(g[j])) throw std::invalid_argument("hull program: a non-finite objective");
    gs = std::max(gs, std::fabs(g[j]));
  }
  const double gscale = gs > 0.0 ? 1.0 / gs : 1.0;
  for (std::size_t j = 0; j < m; ++j) c[j] = g[j] * gscale;
  const double eps_d = 1e-9, eps_piv = 1e-9, eps_x = 1e-12;
  // the column of variable q (a weight's, or a logical's -e_i)
  std::vector<double> col(R);
  const auto column = [&](std::size_t q) {
    if (q < m) {
      for (std::size_t i = 0; i < R; ++i) col[i] = A[i + R * q];
    } else {
      std::fill(col.begin(), col.end(), 0.0);
      col[q - m] = -1.0;
    }
  };
  // basis: head[i] the variable of row i; binv the basis' inverse
  // (row-major R x R); x the values of every variable
  std::vector<std::size_t> head(R);
  std::vector<int> where(n, -1);  // the row of a basic variable, -1 if not
  std::vector<double> binv(R * R, 0.0), x(n, 0.0);
  for (std::size_t i = 0; i < R; ++i) {
    head[i] = m + i;
    where[m + i] = static_cast<int>(i);
    binv[i * R + i] = -1.0;  // B = -I
  }
  const int limit = max_iterations > 0 ? max_iterations : static_cast<int>(50 * (R + m) + 100);
  const int stall = 20;
  int degenerate = 0;
  std::vector<double> y(R), alpha(R);
  for (int it = 0;; ++it) {
    if (it >= limit) {
      out.iterations = it;
      return out;
    }
    // duals y = c_B' B^-1
    for (std::size_t k = 0; k < R; ++k) {
      double s = 0.0;
      for (std::size_t i = 0; i < R; ++i) s += c[head[i]] * binv[i * R + k];
      y[k] = s;
    }
    // pricing: a nonbasic variable whose move improves the objective
    const bool bland = degenerate >= stall;
    std::size_t q = n;
    double best = 0.0;
    int dir = 0;
    for (std::size_t j = 0; j < n; ++j) {
      if (where[j] >= 0) continue;
      double d;
      if (j < m) {
        d = c[j];
        for (std::size_t i = 0; i < R; ++i) d -= y[i] * A[i + R * j];
      } else {
        d = y[j - m];
      }
      const bool at_up = x[j] >= up[j];
      const bool at_lo = x[j] <= lo[j];
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
      break;  // optimal
    }
    // alpha = B^-1 a_q; the basic variables move by -dir * theta * alpha
    column(q);
    for (std::size_t i = 0; i < R; ++i) {
      double s = 0.0;
      for (std::size_t k = 0; k < R; ++k) s += binv[i * R + k] * col[k];
      alpha[i] = s;
    }
    // (the entering variable's own way to its other bound, from where it
    // is: one put back to a bound by x += dir * theta may lie a rounding
    // off it, and its whole range from there overshot the bound; found by
    // tests/cpp/test_table_hull.cpp on ranges with one open side)
    double theta = dir > 0 ? up[q] - x[q] : x[q] - lo[q];
    std::size_t leave = R;
    bool leave_up = false;
    for (std::size_t i = 0; i < R; ++i) {
      const double a = dir * alpha[i];
      if (std::fabs(a) <= eps_piv) continue;
      const std::size_t b = head[i];
      double t;
      bool to_up;
      if (a > 0.0) {  // falls to its lower bound
        if (lo[b] == -inf) continue;
        t = (x[b] - lo[b]) / a;
        to_up = false;
      } else {  // rises to its upper bound
        if (up[b] == inf) continue;
        t = (up[b] - x[b]) / -a;
        to_up = true;
      }
      t = std::max(t, 0.0);
      // among rows that tie (within eps_x), the largest pivot; under
      // Bland's rule the basic variable of the smallest index, without
      // which the rule can cycle (it did, at l = 0 of programs whose rows
      // are all known cells: every step there is degenerate)
      const bool tie = leave < R && std::fabs(t - theta) <= eps_x;
      if (tie ? (bland ? head[i] < head[leave] : std::fabs(alpha[i]) > std::fabs(alpha[leave])) : t < theta) {
        theta = std::min(theta, t);
        leave = i;
        leave_up = to_up;
      }
    }
    if (theta == inf) {
      // cannot happen (the weights' sum is at most 1): no combination
      out.iterations = it;
      return out;
    }
    degenerate = theta <= eps_x ? degenerate + 1 : 0;
    x[q] += dir * theta;
    for (std::size_t i = 0; i < R; ++i) x[head[i]] -= dir * theta * alpha[i];
    if (leave == R) {
      // the entering variable went to its other bound: exactly there
      x[q] = dir > 0 ? up[q] : lo[q];
      continue;
    }
    // the leaving variable at the bound it reached, q basic in its row
    const std::size_t b = head[leave];
    x[b] = leave_up ? up[b] : lo[b];
    where[b] = -1;
    head[leave] = q;
    where[q] = static_cast<int>(leave);
    const double piv = alpha[leave];
    for (std::size_t k = 0; k < R; ++k) binv[leave * R + k] /= piv;
    for (std::size_t i = 0; i < R; ++i) {
      if (i == leave || alpha[i] == 0.0) continue;
      const double f = alpha[i];
      for (std::size_t k = 0; k < R; ++k) binv[i * R + k] -= f * binv[leave * R + k];
    }
  }
  out.ok = true;
  double value = 0.0;
  for (std::size_t j = 0; j < m; ++j) {
    out.weight[j] = std::max(x[j], 0.0);
    value += g[j] * out.weight[j];
  }
  out.value = value;
  return out;
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
// needs every end settled then solves the rest otherwise). Returns the
// extremes, how many programs were solved and whether every row reaches
// its needs. 0-based rows.
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
    bool all_or_none = false) {
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
  for (const int upward : {1, 0}) {
    for (std::size_t k = 0; k < nr; ++k) {
      if (upward ? out.max[k] >= need_hi[k] : out.min[k] <= need_lo[k]) continue;
      const std::size_t row = static_cast<std::size_t>(rows[k]);
      const double sign = upward ? 1.0 : -1.0;
      for (std::size_t j = 0; j < m; ++j) g[j] = sign * (use[j][row] - center[row]);
      const HullSolution h = hull_maximum(D, ra, m, g, La, Ua);
      ++out.programs;
      if (h.ok && h.value > 0.0) see(h.weight);
      if (all_or_none && (upward ? out.max[k] < need_hi[k] : out.min[k] > need_lo[k])) return out;
    }
  }
  out.settled = all_settled();
  return out;
}

}  // namespace sdcRisk

#endif  // SDCRISK_TABLE_HULL_HPP
