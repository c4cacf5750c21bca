// Secondary cell suppression: the independent sub-problems of an audit.
//
// Plain C++17, no R headers. The suppressed cells of a table are linked by
// the table's additive relations (a relation holding two suppressed cells
// ties their feasible values); the audit's linear programs split into one per
// connected component of that graph (Hundepool et al. 2012, Section 4.4: the
// attacker's problem is separable), found here by union-find.
#ifndef SDCRISK_TABLE_COMPONENTS_HPP
#define SDCRISK_TABLE_COMPONENTS_HPP

#include <cmath>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <numeric>
#include <utility>
#include <stdexcept>
#include <tuple>
#include <vector>

namespace sdcRisk {

class UnionFind {
 public:
  explicit UnionFind(std::size_t n) : parent_(n), size_(n, 1) {
    std::iota(parent_.begin(), parent_.end(), std::size_t{0});
  }
  std::size_t find(std::size_t a) {
    while (parent_[a] != a) {
      parent_[a] = parent_[parent_[a]];  // path halving
      a = parent_[a];
    }
    return a;
  }
  void unite(std::size_t a, std::size_t b) {
    a = find(a);
    b = find(b);
    if (a == b) return;
    if (size_[a] < size_[b]) std::swap(a, b);
    parent_[b] = a;
    size_[a] += size_[b];
  }

 private:
  std::vector<std::size_t> parent_, size_;
};

// Component of every node (0-based labels, numbered by first appearance among
// nodes 0..n_node-1) when the incidences (relation[k], node[k]) link every
// node of a relation to the others. Nodes in no relation are their own
// component.
inline std::vector<int> relation_components(const std::vector<int>& relation,
                                            const std::vector<int>& node, int n_relation,
                                            int n_node) {
  if (relation.size() != node.size()) throw std::invalid_argument("incidence lengths differ");
  UnionFind uf(static_cast<std::size_t>(n_node));
  std::vector<int> first(static_cast<std::size_t>(n_relation), -1);
  for (std::size_t k = 0; k < relation.size(); ++k) {
    const int r = relation[k], v = node[k];
    if (r < 0 || r >= n_relation || v < 0 || v >= n_node) {
      throw std::invalid_argument("incidence out of range");
    }
    if (first[r] < 0) first[r] = v;
    else uf.unite(static_cast<std::size_t>(first[r]), static_cast<std::size_t>(v));
  }
  std::vector<int> label(static_cast<std::size_t>(n_node), -1), out(static_cast<std::size_t>(n_node));
  int next = 0;
  for (int v = 0; v < n_node; ++v) {
    const std::size_t root = uf.find(static_cast<std::size_t>(v));
    if (label[root] < 0) label[root] = next++;
    out[static_cast<std::size_t>(v)] = label[root];
  }
  return out;
}

// The tables of an audit's earlier programs as witnesses (the audit's
// shared_witnesses()): each table a column of n_row values (tables[t]), a
// table counts when it keeps every row check[c] within [lo[c] - tol[c],
// hi[c] + tol[c]] (a non-finite value never does). With a `center` (n_row
// values, a table of the same polytope that keeps those bounds: the
// published table), a table that does not is moved toward it,
// center + lambda (table - center) with the largest lambda in (0, 1] that
// keeps them (the polytope is convex): a witness all the same, of smaller
// moves. With one checked row, a table above its bounds and one below meet
// them along the segment between them, so for every row the tables above
// and below with its largest (smallest) value give one more witness, at lo
// or hi. Returns, for every row rows[k], the largest and smallest value
// over the tables that count and these pairs (-Inf and Inf when none
// does), and how many tables counted (pairs aside). 0-based rows. With
// `need_hi` and `need_lo` (one per row), the tables are read in order
// until every row's largest value reaches its need_hi and its smallest its
// need_lo (the extremes are then those of the tables read).
struct TableExtremes {
  std::vector<double> max, min;
  std::size_t used = 0;
};

inline TableExtremes table_extremes(const std::vector<const double*>& tables, std::size_t n_row,
                                    const std::vector<int>& rows, const std::vector<int>& check,
                                    const std::vector<double>& lo, const std::vector<double>& hi,
                                    const std::vector<double>& tol,
                                    const std::vector<double>& center = std::vector<double>(),
                                    const std::vector<double>& need_hi = std::vector<double>(),
                                    const std::vector<double>& need_lo = std::vector<double>()) {
  if (check.size() != lo.size() || check.size() != hi.size() || check.size() != tol.size()) {
    throw std::invalid_argument("bounds of the checked rows differ in length");
  }
  const bool scaled = !center.empty();
  if (scaled && center.size() != n_row) throw std::invalid_argument("the center differs in length");
  const bool needs = !need_hi.empty() || !need_lo.empty();
  if (needs && (need_hi.size() != rows.size() || need_lo.size() != rows.size())) {
    throw std::invalid_argument("the needs differ in length from the rows");
  }
  for (const int r : rows) {
    if (r < 0 || static_cast<std::size_t>(r) >= n_row) throw std::invalid_argument("row out of range");
  }
  for (const int r : check) {
    if (r < 0 || static_cast<std::size_t>(r) >= n_row) throw std::invalid_argument("checked row out of range");
  }
  const double inf = std::numeric_limits<double>::infinity();
  TableExtremes out;
  out.max.assign(rows.size(), -inf);
  out.min.assign(rows.size(), inf);
  if (scaled) {
    for (std::size_t c = 0; c < check.size(); ++c) {
      const double v0 = center[static_cast<std::size_t>(check[c])];
      if (!std::isfinite(v0) || v0 < lo[c] - tol[c] || v0 > hi[c] + tol[c]) {
        throw std::invalid_argument("the center breaks the bounds of the checked rows");
      }
    }
  }
  // rows whose extremes do not yet reach their needs (with needs)
  std::size_t open = 0;
  std::vector<char> hi_open, lo_open;
  if (needs) {
    hi_open.assign(rows.size(), 1);
    lo_open.assign(rows.size(), 1);
    open = 2 * rows.size();
  }
  // with one checked row, pairs of tables on either side of its bounds:
  // per row, the tables beyond them with the largest and the smallest
  // value (their value there and in the checked row)
  const bool pairs = scaled && check.size() == 1;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> up_hi_y, up_hi_x, up_lo_y, up_lo_x, dn_hi_y, dn_hi_x, dn_lo_y, dn_lo_x;
  if (pairs) {
    for (auto* v : {&up_hi_y, &up_hi_x, &up_lo_y, &up_lo_x, &dn_hi_y, &dn_hi_x, &dn_lo_y, &dn_lo_x}) {
      v->assign(rows.size(), nan);
    }
  }
  for (const double* t : tables) {
    if (needs && open == 0) break;
    if (pairs) {
      const double xc = t[check[0]];
      const bool above = xc > hi[0] + tol[0];
      if (std::isfinite(xc) && (above || xc < lo[0] - tol[0])) {
        auto& hy = above ? up_hi_y : dn_hi_y;
        auto& hx = above ? up_hi_x : dn_hi_x;
        auto& ly = above ? up_lo_y : dn_lo_y;
        auto& lx = above ? up_lo_x : dn_lo_x;
        for (std::size_t k = 0; k < rows.size(); ++k) {
          const double y = t[rows[k]];
          if (!std::isfinite(y)) continue;
          if (std::isnan(hy[k]) || y > hy[k]) {
            hy[k] = y;
            hx[k] = xc;
          }
          if (std::isnan(ly[k]) || y < ly[k]) {
            ly[k] = y;
            lx[k] = xc;
          }
        }
      }
    }
    bool ok = true;
    double lambda = 1.0;
    for (std::size_t c = 0; c < check.size() && ok; ++c) {
      const double x = t[check[c]];
      ok = std::isfinite(x);
      if (!ok) break;
      const bool above = x > hi[c] + tol[c];
      const bool below = x < lo[c] - tol[c];
      if (!above && !below) continue;
      if (!scaled) {
        ok = false;
        break;
      }
      // the center keeps [lo, hi] and x lies beyond it: x != v0
      const double v0 = center[static_cast<std::size_t>(check[c])];
      const double room = above ? hi[c] - v0 : lo[c] - v0;
      lambda = std::min(lambda, room / (x - v0));
      ok = lambda > 0.0;
    }
    if (!ok) continue;
    ++out.used;
    for (std::size_t k = 0; k < rows.size(); ++k) {
      double x = t[rows[k]];
      if (lambda < 1.0) {
        const double v0 = center[static_cast<std::size_t>(rows[k])];
        x = v0 + lambda * (x - v0);
      }
      if (x > out.max[k]) out.max[k] = x;
      if (x < out.min[k]) out.min[k] = x;
      if (needs) {
        if (hi_open[k] && out.max[k] >= need_hi[k]) {
          hi_open[k] = 0;
          --open;
        }
        if (lo_open[k] && out.min[k] <= need_lo[k]) {
          lo_open[k] = 0;
          --open;
        }
      }
    }
  }
  if (pairs) {
    // a table above the bounds and one below: the tables between them
    // that meet the bounds (at lo or hi, where the row's value along the
    // segment is largest or smallest) are tables of the polytope too
    const auto along = [](double xa, double ya, double xb, double yb, double x) {
      return yb + (x - xb) / (xa - xb) * (ya - yb);
    };
    for (std::size_t k = 0; k < rows.size(); ++k) {
      if (!std::isnan(up_hi_y[k]) && !std::isnan(dn_hi_y[k])) {
        const double best = std::max(along(up_hi_x[k], up_hi_y[k], dn_hi_x[k], dn_hi_y[k], lo[0]),
                                     along(up_hi_x[k], up_hi_y[k], dn_hi_x[k], dn_hi_y[k], hi[0]));
        if (best > out.max[k]) out.max[k] = best;
      }
      if (!std::isnan(up_lo_y[k]) && !std::isnan(dn_lo_y[k])) {
        const double best = std::min(along(up_lo_x[k], up_lo_y[k], dn_lo_x[k], dn_lo_y[k], lo[0]),
                                     along(up_lo_x[k], up_lo_y[k], dn_lo_x[k], dn_lo_y[k], hi[0]));
        if (best < out.min[k]) out.min[k] = best;
      }
    }
  }
  return out;
}

// The propagation's arithmetic of one relation sum_k v_k x_k = rhs, shared
// by relation_bounds_until() (every relation, pass after pass) and
// relation_bounds_narrowed() (the relations a narrowing reaches): each
// term's extremes over its column's bounds, the sums of the finite ones
// (infinities counted apart), and the bounds each column gets from the
// others' extremes.
struct RelationSums {
  double sum_min = 0.0, sum_max = 0.0;
  int inf_min = 0, inf_max = 0;
};

// The extremes [tmin, tmax] of the term v x for x in [lo, hi], added to
// the relation's sums `s`.
inline void add_term(double v, double lo, double hi, double& tmin, double& tmax, RelationSums& s) {
  const double inf = std::numeric_limits<double>::infinity();
  const double a = v * lo, b = v * hi;
  tmin = std::min(a, b);
  tmax = std::max(a, b);
  if (!std::isinf(tmin)) s.sum_min += tmin;
  if (!std::isinf(tmax)) s.sum_max += tmax;
  if (tmin == -inf) ++s.inf_min;
  if (tmax == inf) ++s.inf_max;
}

// The bounds [lo, hi] of the column of a term (coefficient v, extremes
// tmin, tmax) that the relation's other terms (its sums `s` without this
// one) leave: v x = rhs - (sum of the others).
inline void term_bounds(double v, double rhs, double tmin, double tmax, const RelationSums& s, double& lo,
                        double& hi) {
  const double inf = std::numeric_limits<double>::infinity();
  const double fmin = std::isinf(tmin) ? 0.0 : tmin;
  const double fmax = std::isinf(tmax) ? 0.0 : tmax;
  const double omin = s.inf_min - (tmin == -inf ? 1 : 0) > 0 ? -inf : s.sum_min - fmin;
  const double omax = s.inf_max - (tmax == inf ? 1 : 0) > 0 ? inf : s.sum_max - fmax;
  const double a = (rhs - omax) / v, b = (rhs - omin) / v;
  hi = std::max(a, b);
  lo = std::min(a, b);
}

// Whether a bound moved from `old` to `now` by more than `moved` (relative;
// any move from an infinite bound counts).
inline bool bound_moved(double now, double old, double moved) {
  return now != old && (std::isinf(old) || std::fabs(now - old) > moved * (1 + std::fabs(old)));
}

// Bounds on every column of a component's program (the audit's
// relation_bounds()) implied by its relations sum_j v x_j = rhs and the
// a priori bounds, by propagation: each relation bounds each of its columns
// given the others' current bounds, for at most `passes` passes or until no
// bound moves by more than `moved` (relative; any move from an infinite
// bound counts). Triplets (row[k], col[k], v[k]), 0-based, no (row, col)
// twice. Sums run in the triplets' order, so that the bounds are those of
// the vectorised R code this replaced, bit for bit.
struct ColumnBounds {
  std::vector<double> lower, upper;
};

// relation_bounds_until() stops after any pass at which
// stop(lower, upper) holds for the bounds so far (outer bounds all the same:
// a caller that asks whether some bound is short of a level can stop at the
// first pass that shows it, since further passes only narrow them).
template <class Stop>
inline ColumnBounds relation_bounds_until(const std::vector<int>& row, const std::vector<int>& col,
                                          const std::vector<double>& v, int n_row, int n_col,
                                          const std::vector<double>& rhs, std::vector<double> lower,
                                          std::vector<double> upper, int passes, double moved, Stop&& stop) {
  const std::size_t nt = row.size();
  if (col.size() != nt || v.size() != nt) throw std::invalid_argument("triplet lengths differ");
  if (rhs.size() != static_cast<std::size_t>(n_row) || lower.size() != static_cast<std::size_t>(n_col) ||
      upper.size() != static_cast<std::size_t>(n_col)) {
    throw std::invalid_argument("bounds or right-hand side of the wrong length");
  }
  for (std::size_t k = 0; k < nt; ++k) {
    if (row[k] < 0 || row[k] >= n_row || col[k] < 0 || col[k] >= n_col) {
      throw std::invalid_argument("triplet out of range");
    }
  }
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> tmin(nt), tmax(nt);
  std::vector<RelationSums> sums(static_cast<std::size_t>(n_row));
  std::vector<double> lb(n_col), ub(n_col);
  for (int pass = 0; pass < passes; ++pass) {
    std::fill(sums.begin(), sums.end(), RelationSums{});
    for (std::size_t k = 0; k < nt; ++k) add_term(v[k], lower[col[k]], upper[col[k]], tmin[k], tmax[k], sums[row[k]]);
    std::fill(lb.begin(), lb.end(), -inf);
    std::fill(ub.begin(), ub.end(), inf);
    for (std::size_t k = 0; k < nt; ++k) {
      double lo, hi;
      term_bounds(v[k], rhs[row[k]], tmin[k], tmax[k], sums[row[k]], lo, hi);
      if (hi < ub[col[k]]) ub[col[k]] = hi;
      if (lo > lb[col[k]]) lb[col[k]] = lo;
    }
    bool any_moved = false;
    for (int c = 0; c < n_col; ++c) {
      const double nl = std::max(lower[c], lb[c]), nu = std::min(upper[c], ub[c]);
      if (bound_moved(nl, lower[c], moved) || bound_moved(nu, upper[c], moved)) any_moved = true;
      lower[c] = nl;
      upper[c] = nu;
    }
    if (!any_moved || stop(lower, upper)) break;
  }
  return {std::move(lower), std::move(upper)};
}

inline ColumnBounds relation_bounds(const std::vector<int>& row, const std::vector<int>& col,
                                    const std::vector<double>& v, int n_row, int n_col,
                                    const std::vector<double>& rhs, std::vector<double> lower,
                                    std::vector<double> upper, int passes, double moved) {
  return relation_bounds_until(row, col, v, n_row, n_col, rhs, std::move(lower), std::move(upper), passes, moved,
                               [](const std::vector<double>&, const std::vector<double>&) { return false; });
}

// The table's relations indexed both ways: triplet k (0-based) puts cell
// cell[k] in relation rel[k] with coefficient coef[k]; the triplets of
// relation r are rel_trip[rel_start[r] .. rel_start[r + 1]) and those of
// cell c cell_trip[cell_start[c] .. cell_start[c + 1]), each in increasing
// order. Built once per table problem and read thousands of times: by the
// witness checks (witness_adds_up()), the clean-up's pool and swaps and
// the relation tests near a cell (relation_hops(), relation_breach_near()).
struct RelationIndex {
  std::vector<int> rel, cell;
  std::vector<double> coef;
  std::vector<int> rel_start, rel_trip, cell_start, cell_trip;
  int n_rel = 0, n_cell = 0;
};

// The triplets of `key` (values in [0, n)) grouped by key, each group in
// increasing order: (start, index).
inline std::pair<std::vector<int>, std::vector<int>> group_triplets(const std::vector<int>& key, int n) {
  std::vector<int> start(static_cast<std::size_t>(n) + 1, 0), index(key.size());
  for (const int k : key) ++start[static_cast<std::size_t>(k) + 1];
  for (int r = 0; r < n; ++r) start[r + 1] += start[r];
  std::vector<int> next(start.begin(), start.end() - 1);
  for (std::size_t t = 0; t < key.size(); ++t) index[next[key[t]]++] = static_cast<int>(t);
  return {std::move(start), std::move(index)};
}

// Twin columns of a program whose rows are equalities (sum_k v_k x_k =
// rhs): a row with exactly two nonzero entries ties one column to the
// other, v1 x1 + v2 x2 = rhs, so that every table of the program has
// x2 = (rhs - v1 x1) / v2. Chains of such rows tie whole classes of
// columns: each column c is, on every table of the program and whatever
// bounds its columns have, a[c] + b[c] x[root[c]] (root[c] = c, a = 0,
// b = 1 for a class's root). Then the largest value of column c over the
// program's tables is a[c] + b[c] times the largest (b > 0) or the
// smallest (b < 0) value of its root: one program for the whole class and
// direction. Found by union-find with the map of each column to its
// parent, composed along the path (compressed as it is read); a row that
// closes a cycle ties nothing new and is skipped (the tree's rows alone
// make every map hold). `size[c]`: the number of columns of c's class
// (read at its root). 0-based columns.
struct TwinColumns {
  std::vector<int> root, size;
  std::vector<double> a, b;
};

inline TwinColumns twin_columns(const std::vector<int>& row, const std::vector<int>& col,
                                const std::vector<double>& v, const std::vector<double>& rhs, int n_row,
                                int n_col) {
  if (row.size() != col.size() || row.size() != v.size()) throw std::invalid_argument("triplet lengths differ");
  if (n_row < 0 || n_col < 0 || rhs.size() != static_cast<std::size_t>(n_row)) {
    throw std::invalid_argument("the right-hand side differs in length from the rows");
  }
  const std::size_t nc = static_cast<std::size_t>(n_col), nr = static_cast<std::size_t>(n_row);
  // (each row's nonzero entries: their count, and the first two)
  std::vector<int> count(nr, 0), first(nr, -1), second(nr, -1);
  for (std::size_t k = 0; k < row.size(); ++k) {
    if (row[k] < 0 || static_cast<std::size_t>(row[k]) >= nr || col[k] < 0 ||
        static_cast<std::size_t>(col[k]) >= nc) {
      throw std::invalid_argument("triplet out of range");
    }
    if (!std::isfinite(v[k])) throw std::invalid_argument("a non-finite entry");
    if (v[k] == 0.0) continue;
    const std::size_t r = static_cast<std::size_t>(row[k]);
    if (count[r] == 0) first[r] = static_cast<int>(k);
    else if (count[r] == 1) second[r] = static_cast<int>(k);
    ++count[r];
  }
  TwinColumns t;
  std::vector<int> parent(nc);
  std::iota(parent.begin(), parent.end(), 0);
  t.a.assign(nc, 0.0);
  t.b.assign(nc, 1.0);
  t.size.assign(nc, 1);
  // the root of c, the map of c to its root left in a[c], b[c] and c
  // attached to the root directly
  const auto find = [&](int c) {
    std::vector<int> path;
    while (parent[static_cast<std::size_t>(c)] != c) {
      path.push_back(c);
      c = parent[static_cast<std::size_t>(c)];
    }
    // (from the column nearest the root outwards: each one's parent
    // already maps to the root)
    for (auto it = path.rbegin(); it != path.rend(); ++it) {
      const std::size_t q = static_cast<std::size_t>(*it);
      const std::size_t p = static_cast<std::size_t>(parent[q]);
      if (static_cast<int>(p) != c) {
        t.a[q] += t.b[q] * t.a[p];
        t.b[q] *= t.b[p];
        parent[q] = c;
      }
    }
    return c;
  };
  for (std::size_t r = 0; r < nr; ++r) {
    if (count[r] != 2) continue;
    if (!std::isfinite(rhs[r])) continue;
    const std::size_t k1 = static_cast<std::size_t>(first[r]), k2 = static_cast<std::size_t>(second[r]);
    const int c1 = col[k1], c2 = col[k2];
    if (c1 == c2) continue;
    const int r1 = find(c1), r2 = find(c2);
    if (r1 == r2) continue;
    const std::size_t q1 = static_cast<std::size_t>(c1), q2 = static_cast<std::size_t>(c2);
    // v1 (a1 + b1 x_r1) + v2 (a2 + b2 x_r2) = rhs, solved for x_r2
    const double a1 = c1 == r1 ? 0.0 : t.a[q1], b1 = c1 == r1 ? 1.0 : t.b[q1];
    const double a2 = c2 == r2 ? 0.0 : t.a[q2], b2 = c2 == r2 ? 1.0 : t.b[q2];
    const double den = v[k2] * b2;
    const std::size_t s1 = static_cast<std::size_t>(r1), s2 = static_cast<std::size_t>(r2);
    parent[s2] = r1;
    t.a[s2] = (rhs[r] - v[k1] * a1 - v[k2] * a2) / den;
    t.b[s2] = -(v[k1] * b1) / den;
    t.size[s1] += t.size[s2];
  }
  t.root.resize(nc);
  for (std::size_t c = 0; c < nc; ++c) t.root[c] = find(static_cast<int>(c));
  for (std::size_t c = 0; c < nc; ++c) t.size[c] = t.size[static_cast<std::size_t>(t.root[c])];
  return t;
}

// The triplets of a program grouped by row and by column (group_triplets()
// of each), for relation_bounds_narrowed().
struct ProgramIndex {
  std::vector<int> row_start, row_trip, col_start, col_trip;
};

inline ProgramIndex program_index(const std::vector<int>& row, const std::vector<int>& col, int n_row, int n_col) {
  ProgramIndex ix;
  std::tie(ix.row_start, ix.row_trip) = group_triplets(row, n_row);
  std::tie(ix.col_start, ix.col_trip) = group_triplets(col, n_col);
  return ix;
}

// The bounds `lower`, `upper` of a program's columns narrowed, in place,
// by its relations after the columns `changed` (0-based) were narrowed:
// bounds that were already outer bounds of the program's tables (its
// relation bounds before the narrowing, say) need only the relations that
// a narrowed column reaches, and then those of the columns they narrow in
// turn (a work list, first in first out; a relation is queued once at a
// time). Each relation narrows each of its columns as one pass of
// relation_bounds_until() does, from its columns' bounds when it is taken
// (so a relation taken again after its own narrowing narrows nothing);
// a column that moves by more than `moved` (relative, as there) queues its
// other relations. At most `budget` triplets are read: every bound is
// valid after any step, so the budget only limits work. Where the
// propagation runs to its end from the same bounds, it ends where
// relation_bounds() from the wider bounds would after enough passes (the
// largest bounds below the start that no relation narrows are the same
// from any start that contains them), in a fraction of the reads when the
// narrowing reaches a few relations of a large component.
inline void relation_bounds_narrowed(const std::vector<int>& row, const std::vector<int>& col,
                                     const std::vector<double>& v, const std::vector<double>& rhs,
                                     const ProgramIndex& ix, std::vector<double>& lower,
                                     std::vector<double>& upper, const std::vector<int>& changed,
                                     std::size_t budget, double moved) {
  const int n_row = static_cast<int>(ix.row_start.size()) - 1;
  std::vector<char> queued(static_cast<std::size_t>(n_row > 0 ? n_row : 0), 0);
  std::deque<int> work;
  auto queue_col = [&](int c, int except) {
    for (int q = ix.col_start[c]; q < ix.col_start[c + 1]; ++q) {
      const int r = row[ix.col_trip[q]];
      if (r != except && !queued[r]) {
        queued[r] = 1;
        work.push_back(r);
      }
    }
  };
  for (const int c : changed) queue_col(c, -1);
  std::vector<double> tmin, tmax;
  std::size_t read = 0;
  while (!work.empty() && read < budget) {
    const int r = work.front();
    work.pop_front();
    queued[r] = 0;
    const int from = ix.row_start[r], to = ix.row_start[r + 1];
    read += static_cast<std::size_t>(to - from);
    tmin.resize(static_cast<std::size_t>(to - from));
    tmax.resize(static_cast<std::size_t>(to - from));
    RelationSums sums;
    for (int p = from; p < to; ++p) {
      const int k = ix.row_trip[p];
      add_term(v[k], lower[col[k]], upper[col[k]], tmin[p - from], tmax[p - from], sums);
    }
    for (int p = from; p < to; ++p) {
      const int k = ix.row_trip[p], c = col[k];
      double lo, hi;
      term_bounds(v[k], rhs[r], tmin[p - from], tmax[p - from], sums, lo, hi);
      const double nl = std::max(lower[c], lo), nu = std::min(upper[c], hi);
      const bool moves = bound_moved(nl, lower[c], moved) || bound_moved(nu, upper[c], moved);
      lower[c] = nl;
      upper[c] = nu;
      if (moves) queue_col(c, r);
    }
  }
}

// The contributors of a table's contributions (the respondents' index,
// new_respondents()), numbered in the order of their first row: `code` the
// contributor ids so ordered (1-based, as the rows hold them), `who` the
// number of each row's contributor (1-based), `ord` the rows (1-based)
// contributor by contributor, each contributor's in the order of the rows
// (group_triplets() of `who`), and `start` the offsets of each
// contributor's rows in `ord` (m + 1 of them, from 0). The ids, from 1 to
// `max_id`, are numbered by direct addressing: time linear in the rows and
// ids.
struct ContributorIndex {
  std::vector<int> code, who, ord, start;
};

inline ContributorIndex contributor_index(const int* id, std::size_t n, std::size_t max_id) {
  ContributorIndex out;
  std::vector<int> code_of(max_id + 1, 0), key(n);
  out.who.resize(n);
  for (std::size_t r = 0; r < n; ++r) {
    const int a = id[r];
    if (a < 1 || static_cast<std::size_t>(a) > max_id) throw std::invalid_argument("contributor_index: id out of range");
    if (!code_of[a]) {
      out.code.push_back(a);
      code_of[a] = static_cast<int>(out.code.size());
    }
    out.who[r] = code_of[a];
    key[r] = code_of[a] - 1;
  }
  auto grouped = group_triplets(key, static_cast<int>(out.code.size()));
  out.start = std::move(grouped.first);
  out.ord = std::move(grouped.second);
  for (int& r : out.ord) ++r;
  return out;
}

inline RelationIndex relation_index(std::vector<int> rel, std::vector<int> cell, std::vector<double> coef, int n_rel,
                            int n_cell) {
  if (n_rel < 0 || n_cell < 0 || cell.size() != rel.size() || coef.size() != rel.size() ||
      rel.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw std::invalid_argument("relation index: malformed relations");
  }
  for (std::size_t t = 0; t < rel.size(); ++t) {
    if (rel[t] < 0 || rel[t] >= n_rel || cell[t] < 0 || cell[t] >= n_cell) {
      throw std::invalid_argument("relation index: relation or cell out of range");
    }
  }
  RelationIndex ix;
  auto by_rel = group_triplets(rel, n_rel);
  auto by_cell = group_triplets(cell, n_cell);
  ix.rel_start = std::move(by_rel.first);
  ix.rel_trip = std::move(by_rel.second);
  ix.cell_start = std::move(by_cell.first);
  ix.cell_trip = std::move(by_cell.second);
  ix.rel = std::move(rel);
  ix.cell = std::move(cell);
  ix.coef = std::move(coef);
  ix.n_rel = n_rel;
  ix.n_cell = n_cell;
  return ix;
}

// What a witness table is checked against, per cell of the table (n_cell
// values each, by pointer): the published values, the a priori bounds and
// the audit's tolerance of each cell.
struct WitnessCells {
  const double* value;
  const double* lower;
  const double* upper;
  const double* tol;
};

// Is value + y (y[k] the move of cell cells[k] (0-based), 0 elsewhere) a
// table that adds up in every relation of `ix` and keeps the a priori
// bounds, within the audit's tolerances: each relation's residual at most
// audit_tol (1 + max |y|), each cell within its bounds widened by its
// tolerance? Each relation's residual is summed in the order of the cells
// and, for each cell, of its triplets (R's rowsum() of witness_ok(), which
// this replaces). A missing move (NaN) fails. `resid` (n_rel zeros, left
// as zeros) and `touched` are the caller's scratch.
inline bool witness_adds_up(const RelationIndex& ix, const std::vector<int>& cells, const double* y,
                            const WitnessCells& wc, double audit_tol, std::vector<double>& resid,
                            std::vector<int>& touched) {
  double big = 0.0;
  for (std::size_t k = 0; k < cells.size(); ++k) {
    const int c = cells[k];
    if (c < 0 || c >= ix.n_cell) throw std::invalid_argument("witness check: cell out of range");
    const double nv = wc.value[c] + y[k];
    if (!(nv >= wc.lower[c] - wc.tol[c]) || !(nv <= wc.upper[c] + wc.tol[c])) return false;
    big = std::max(big, std::abs(y[k]));
  }
  if (resid.size() != static_cast<std::size_t>(ix.n_rel)) resid.assign(static_cast<std::size_t>(ix.n_rel), 0.0);
  touched.clear();
  for (std::size_t k = 0; k < cells.size(); ++k) {
    const int c = cells[k];
    for (int q = ix.cell_start[c]; q < ix.cell_start[c + 1]; ++q) {
      const int t = ix.cell_trip[q];
      const int r = ix.rel[t];
      if (resid[r] == 0.0) touched.push_back(r);
      resid[r] += ix.coef[t] * y[k];
    }
  }
  const double limit = audit_tol * (1.0 + big);
  bool ok = true;
  for (const int r : touched) {
    if (!(std::abs(resid[r]) <= limit)) ok = false;
    resid[r] = 0.0;
  }
  return ok;
}

// What the swaps read of each cell (n_cell values each, by pointer: the
// clean-up's state, which changes between calls): capacities up and down,
// whether it is suppressed (nonzero), its cost.
struct SwapCells {
  const double* cap_up;
  const double* cap_dn;
  const int* supp;
  const double* w;
};

// A lower bound on the cost of the published cells that any witness for
// the side (cell i, direction dir, level t) without cell j must move (the
// clean-up's swap bound, R/table-suppress-cleanup.R): in each relation of
// cell i, when the suppressed cells other than i and j cannot offset a
// move of t by their capacities in the offsetting direction (within
// `slack`), some published cell of the relation that can must move, at
// least the cheapest of them; the largest of these over the relations,
// infinity when such a relation has no published cell that can move that
// way, 0 when the suppressed cells suffice everywhere. The capacities are
// added in order in long double, as R's sum() adds them.
inline double swap_bound(const RelationIndex& ix, const SwapCells& cs, int i, double dir, double t, int j,
                         double slack) {
  if (i < 0 || i >= ix.n_cell) throw std::invalid_argument("swap bound: cell out of range");
  double bound = 0;
  for (int a = ix.cell_start[i]; a < ix.cell_start[i + 1]; ++a) {
    const int tr = ix.cell_trip[a];
    const int r = ix.rel[tr];
    long double held = 0;
    bool any_pub = false;
    double cheapest = std::numeric_limits<double>::infinity();
    for (int b = ix.rel_start[r]; b < ix.rel_start[r + 1]; ++b) {
      const int tk = ix.rel_trip[b];
      const int c = ix.cell[tk];
      if (c == i || c == j) continue;
      // (cell c offsets cell i's move dir * t by rising when
      // -coef_i * coef_c * dir > 0, by falling otherwise)
      const bool rise = -ix.coef[tr] * ix.coef[tk] * dir > 0;
      const double cap = rise ? cs.cap_up[c] : cs.cap_dn[c];
      if (cs.supp[c]) {
        held += cap;
      } else if (cap > 0) {
        any_pub = true;
        cheapest = std::min(cheapest, cs.w[c]);
      }
    }
    if (static_cast<double>(held) >= t - slack) continue;
    if (!any_pub) return std::numeric_limits<double>::infinity();
    bound = std::max(bound, cheapest);
  }
  return bound;
}

// swap_bound() of the sides (side_cell, side_dir, side_t) in turn, with
// slack slack_per * (1 + t) each; stops after the first whose bound reaches
// `limit`. Returns the bounds found, that one last.
inline std::vector<double> swap_bounds(const RelationIndex& ix, const SwapCells& cs, const std::vector<int>& side_cell,
                                       const std::vector<double>& side_dir, const std::vector<double>& side_t,
                                       int j, double slack_per, double limit) {
  if (side_dir.size() != side_cell.size() || side_t.size() != side_cell.size()) {
    throw std::invalid_argument("swap bound: sides of different lengths");
  }
  std::vector<double> out;
  out.reserve(side_cell.size());
  for (std::size_t s = 0; s < side_cell.size(); ++s) {
    out.push_back(swap_bound(ix, cs, side_cell[s], side_dir[s], side_t[s], j, slack_per * (1 + side_t[s])));
    if (out.back() >= limit) break;
  }
  return out;
}

// The clean-up's pool of witness tables (R/table-suppress-cleanup.R,
// pool_witness()), flattened: table k moves cells cell[start[k] ..
// start[k + 1]) (0-based) by y over the same range; n_table tables, n_entry
// entries, cells below n_cell (checked as read).
struct WitnessPool {
  const int* cell;
  const double* y;
  const int* start;
  int n_table;
  int n_entry;
  int n_cell;
};

// The cheapest of the pool's tables `cand` (0-based) for a side of level t
// once table cand[h] is scaled by scale[h]: among those that move only
// suppressed cells and not cell `exclude` (0-based; -1 for none), the one
// whose moves of cells other than the sensitive ones cost least, each
// cell's move |y| priced at its cost per unit of min(capacity, t) in the
// move's direction (rises up, falls and zeros down; at least 10^-9 t), the
// costs added in order in long double as R's sum() adds them; the first of
// equal costs. Returns its position in `cand` (0-based), -1 for none.
inline int pool_cheapest(const WitnessPool& pool, const SwapCells& cs, const int* sensitive,
                         const std::vector<int>& cand, const double* scale, double t, int exclude) {
  int best = -1;
  double best_cost = std::numeric_limits<double>::infinity();
  const double floor_t = 1e-9 * t;
  for (std::size_t h = 0; h < cand.size(); ++h) {
    const int k = cand[h];
    if (k < 0 || k >= pool.n_table) throw std::invalid_argument("witness pool: table out of range");
    if (pool.start[k] < 0 || pool.start[k] > pool.start[k + 1] || pool.start[k + 1] > pool.n_entry) {
      throw std::invalid_argument("witness pool: malformed pool");
    }
    bool usable = true;
    for (int q = pool.start[k]; q < pool.start[k + 1] && usable; ++q) {
      const int c = pool.cell[q];
      if (c < 0 || c >= pool.n_cell) throw std::invalid_argument("witness pool: cell out of range");
      usable = cs.supp[c] != 0 && c != exclude;
    }
    if (!usable) continue;
    long double cost = 0;
    for (int q = pool.start[k]; q < pool.start[k + 1]; ++q) {
      const int c = pool.cell[q];
      if (sensitive[c] != 0) continue;
      const double y = pool.y[q] * scale[h];
      const double cap = y > 0 ? cs.cap_up[c] : cs.cap_dn[c];
      cost += std::abs(y) * (cs.w[c] / std::max(std::min(cap, t), floor_t));
    }
    if (static_cast<double>(cost) < best_cost) {
      best_cost = static_cast<double>(cost);
      best = static_cast<int>(h);
    }
  }
  return best;
}

// A greedy packing of the open ends of an audit's batch program (the
// audit's relation_packing()): the targets `open` (indices into `pos`, the
// column of each target) are taken in a pseudo-random order that depends
// on (target, batch) alone, each kept when none of its relations (the rows
// of its column's triplets) holds a target kept before. The order is a
// multiplicative hash of (target + 1 + 40503 batch) modulo 2^21, times
// 2654435761, modulo 2^32, ties in the order of `open` (the R code it
// replaced, exactly). Returns the kept targets in the order of `open`.
// 0-based indices.
inline std::vector<int> relation_packing(const std::vector<int>& open, const std::vector<int>& pos,
                                         const std::vector<int>& row, const std::vector<int>& col,
                                         int n_row, int n_col, double batch) {
  if (row.size() != col.size()) throw std::invalid_argument("triplet lengths differ");
  if (open.size() <= 1) return open;
  if (!(batch >= 0) || batch > 1e12) throw std::invalid_argument("batch number out of range");
  // the rows of each column (compressed)
  std::vector<std::size_t> start(static_cast<std::size_t>(n_col) + 1, 0);
  for (std::size_t k = 0; k < row.size(); ++k) {
    if (row[k] < 0 || row[k] >= n_row || col[k] < 0 || col[k] >= n_col) {
      throw std::invalid_argument("triplet out of range");
    }
    ++start[static_cast<std::size_t>(col[k]) + 1];
  }
  for (int c = 0; c < n_col; ++c) start[c + 1] += start[c];
  std::vector<int> rows_of(row.size());
  {
    std::vector<std::size_t> fill(start.begin(), start.end() - 1);
    for (std::size_t k = 0; k < row.size(); ++k) rows_of[fill[col[k]]++] = row[k];
  }
  const std::uint64_t b = static_cast<std::uint64_t>(batch);
  std::vector<std::uint64_t> key(open.size());
  for (std::size_t i = 0; i < open.size(); ++i) {
    if (open[i] < 0 || static_cast<std::size_t>(open[i]) >= pos.size()) {
      throw std::invalid_argument("open end out of range");
    }
    if (pos[open[i]] < 0 || pos[open[i]] >= n_col) throw std::invalid_argument("target column out of range");
    const std::uint64_t t = static_cast<std::uint64_t>(open[i]) + 1 + b * 40503ULL;
    key[i] = ((t % 2097152ULL) * 2654435761ULL) % 4294967296ULL;
  }
  std::vector<std::size_t> order(open.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t z) { return key[a] < key[z]; });
  std::vector<char> used(static_cast<std::size_t>(n_row), 0), keep(open.size(), 0);
  for (const std::size_t i : order) {
    const int c = pos[open[i]];
    bool free = true;
    for (std::size_t k = start[c]; k < start[c + 1] && free; ++k) free = !used[rows_of[k]];
    if (!free) continue;
    for (std::size_t k = start[c]; k < start[c + 1]; ++k) used[rows_of[k]] = 1;
    keep[i] = 1;
  }
  std::vector<int> out;
  for (std::size_t i = 0; i < open.size(); ++i) {
    if (keep[i]) out.push_back(open[i]);
  }
  return out;
}

// Does the interval [lo, hi] of a cell of value v give it its protection
// `level` on each side, no further than its a priori bounds [lower, upper]
// (protection_met() and protection_required() in R, the same operations):
// within the tolerance `tol` of each required end, and wider than `tol`.
// `need_lo`, `need_hi` get the required ends.
inline bool protection_met_at(double v, double level, double lower, double upper, double tol, double lo,
                              double hi, double& need_lo, double& need_hi) {
  need_lo = std::max(v - level, lower);
  need_hi = std::min(v + level, upper);
  return !std::isnan(lo) && !std::isnan(hi) && hi >= need_hi - tol && lo <= need_lo + tol && hi - lo > tol;
}

// Does the pattern `supp` leave some sensitive cell whose relation bounds
// fall short of its protection, in the components of suppressed cells that
// the relations of the cells `near` touch (relation_breach() in R, which
// this replaces bit for bit)? Each such component's program is the one the
// audit builds: its suppressed cells as columns, the relations of their
// triplets as rows (in the triplets' order), the published part of each
// relation on the right-hand side (summed in the triplets' order), the a
// priori bounds; relation_bounds() bounds it, and a sensitive cell is short
// when its bounds miss its protection (protection_met_at()). TRUE proves
// the pattern unprotected; FALSE proves nothing. The relations `ix`
// (relation_index()); per cell value, supp and sensitive (0 or 1), lower,
// upper, tol, level.
inline bool relation_breach_near(const RelationIndex& ix, const std::vector<double>& value,
                                 const std::vector<int>& supp, const std::vector<int>& sensitive,
                                 const std::vector<double>& lower, const std::vector<double>& upper,
                                 const std::vector<double>& tol, const std::vector<double>& level,
                                 const std::vector<int>& near, int passes, double moved) {
  const std::size_t nc = static_cast<std::size_t>(ix.n_cell);
  if (value.size() != nc || supp.size() != nc || sensitive.size() != nc || lower.size() != nc ||
      upper.size() != nc || tol.size() != nc || level.size() != nc) {
    throw std::invalid_argument("relation breach: the cells' vectors differ in length");
  }
  // the suppressed cells of the relations of `cells`, each relation's in
  // the triplets' order, through f(cell)
  auto neighbours = [&](int c, auto&& f) {
    for (int q = ix.cell_start[c]; q < ix.cell_start[c + 1]; ++q) {
      const int r = ix.rel[ix.cell_trip[q]];
      for (int p = ix.rel_start[r]; p < ix.rel_start[r + 1]; ++p) {
        const int d = ix.cell[ix.rel_trip[p]];
        if (supp[d] != 0) f(d);
      }
    }
  };
  std::vector<int> touched;
  for (const int c : near) {
    if (c < 0 || c >= ix.n_cell) throw std::invalid_argument("relation breach: cell out of range");
    neighbours(c, [&](int d) { touched.push_back(d); });
  }
  std::vector<char> comp_done(nc, 0);
  std::vector<int> members, stack, trips, rel_row(static_cast<std::size_t>(ix.n_rel), -1), col_of(nc, -1);
  for (const int start : touched) {
    if (comp_done[start]) continue;
    // the component of `start`: suppressed cells linked by relations
    members.clear();
    stack.assign(1, start);
    comp_done[start] = 1;
    while (!stack.empty()) {
      const int c = stack.back();
      stack.pop_back();
      members.push_back(c);
      neighbours(c, [&](int d) {
        if (!comp_done[d]) {
          comp_done[d] = 1;
          stack.push_back(d);
        }
      });
    }
    bool any_sens = false;
    for (const int c : members) any_sens = any_sens || sensitive[c] != 0;
    if (!any_sens) continue;
    std::sort(members.begin(), members.end());
    // its triplets in the triplets' order, its relations numbered as met
    trips.clear();
    for (const int c : members) {
      for (int q = ix.cell_start[c]; q < ix.cell_start[c + 1]; ++q) trips.push_back(ix.cell_trip[q]);
    }
    if (trips.empty()) continue;
    std::sort(trips.begin(), trips.end());
    for (std::size_t m = 0; m < members.size(); ++m) col_of[members[m]] = static_cast<int>(m);
    std::vector<int> row(trips.size()), col(trips.size()), rels;
    std::vector<double> v(trips.size());
    for (std::size_t t = 0; t < trips.size(); ++t) {
      const int k = trips[t];
      int& rr = rel_row[ix.rel[k]];
      if (rr < 0) {
        rr = static_cast<int>(rels.size());
        rels.push_back(ix.rel[k]);
      }
      row[t] = rr;
      col[t] = col_of[ix.cell[k]];
      v[t] = ix.coef[k];
    }
    // each relation's published part, summed in the triplets' order
    std::vector<double> rhs(rels.size());
    for (std::size_t q = 0; q < rels.size(); ++q) {
      double pub = 0.0;
      for (int p = ix.rel_start[rels[q]]; p < ix.rel_start[rels[q] + 1]; ++p) {
        const int k = ix.rel_trip[p];
        if (supp[ix.cell[k]] == 0) pub += ix.coef[k] * value[ix.cell[k]];
      }
      rhs[q] = -pub;
    }
    std::vector<double> lo(members.size()), up(members.size());
    for (std::size_t m = 0; m < members.size(); ++m) {
      lo[m] = lower[members[m]];
      up[m] = upper[members[m]];
    }
    // (a sensitive cell short after some pass stays short: the passes stop
    // there)
    auto short_of = [&](const std::vector<double>& blo, const std::vector<double>& bhi) {
      for (std::size_t m = 0; m < members.size(); ++m) {
        const int c = members[m];
        double need_lo, need_hi;
        if (sensitive[c] != 0 &&
            !protection_met_at(value[c], level[c], lower[c], upper[c], tol[c], blo[m], bhi[m], need_lo, need_hi)) {
          return true;
        }
      }
      return false;
    };
    const ColumnBounds b = relation_bounds_until(row, col, v, static_cast<int>(rels.size()),
                                                 static_cast<int>(members.size()), rhs, std::move(lo), std::move(up),
                                                 passes, moved, short_of);
    for (const int r : rels) rel_row[r] = -1;
    for (const int c : members) col_of[c] = -1;
    if (short_of(b.lower, b.upper)) return true;
  }
  return false;
}

// Hops over nodes joined by links (cells by relations, a program's columns
// by its rows), breadth first: 0 for the nodes `from`, 1 for the passable
// nodes of their links, and so on through passable nodes only; infinity
// for nodes never reached. `links_of(c, f)` calls f(link) for each link of
// node c, `nodes_of(r, f)` f(node) for each node of link r (indexes the
// caller has checked); each link is read once.
template <class LinksOf, class NodesOf, class Passable>
std::vector<double> link_hops(std::size_t n_node, std::size_t n_link, const std::vector<int>& from,
                              LinksOf links_of, NodesOf nodes_of, Passable passable) {
  std::vector<double> hops(n_node, std::numeric_limits<double>::infinity());
  std::vector<char> link_seen(n_link, 0);
  std::vector<int> frontier, next;
  for (const int c : from) {
    if (c < 0 || static_cast<std::size_t>(c) >= n_node) throw std::invalid_argument("hops: node out of range");
    hops[static_cast<std::size_t>(c)] = 0;
    frontier.push_back(c);
  }
  for (double h = 1; !frontier.empty(); h += 1) {
    next.clear();
    for (const int c : frontier) {
      links_of(c, [&](int r) {
        if (link_seen[static_cast<std::size_t>(r)]) return;
        link_seen[static_cast<std::size_t>(r)] = 1;
        nodes_of(r, [&](int d) {
          if (passable(d) && hops[static_cast<std::size_t>(d)] > h) {
            hops[static_cast<std::size_t>(d)] = h;
            next.push_back(d);
          }
        });
      });
    }
    frontier.swap(next);
  }
  return hops;
}

// The number of relations between the cells `from` and every cell
// (relation_hops() in R): 0 for `from`, 1 for the suppressed cells of their
// relations, and so on through suppressed cells only; infinity for cells
// never reached. The relations `ix` (relation_index()); supp per cell.
inline std::vector<double> relation_hops(const RelationIndex& ix, const std::vector<int>& supp,
                                         const std::vector<int>& from) {
  if (supp.size() != static_cast<std::size_t>(ix.n_cell)) throw std::invalid_argument("relation hops: lengths differ");
  for (const int c : from) {
    if (c < 0 || c >= ix.n_cell) throw std::invalid_argument("relation hops: cell out of range");
  }
  return link_hops(
      static_cast<std::size_t>(ix.n_cell), static_cast<std::size_t>(ix.n_rel), from,
      [&](int c, auto&& f) {
        for (int q = ix.cell_start[c]; q < ix.cell_start[c + 1]; ++q) f(ix.rel[ix.cell_trip[q]]);
      },
      [&](int r, auto&& f) {
        for (int p = ix.rel_start[r]; p < ix.rel_start[r + 1]; ++p) f(ix.cell[ix.rel_trip[p]]);
      },
      [&](int d) { return supp[d] != 0; });
}

// The respondents' relation breaches of a pattern (respondent_breaches()
// with relations_only in R): for each respondent group in turn, its
// knowledge of the cells (bounds [lo, hi] per cell, and whether it is alone
// in the cell) that is effective (a suppressed cell, narrower than the
// outsider's interval [outer_lo, outer_hi] by more than the cell's
// tolerance) narrows the relation bounds of each component it falls in
// (those with cells to attack, in the order the knowledge first reaches
// them; relation_bounds_known(), from the program's own computed once):
// those outer bounds of the respondent's intervals are then
// tested against the protection of the component's targets, each within
// what the group knows of it, but a cell it knows alone (no pattern hides
// it). A breach is real; none proves nothing. With `first`, the test ends
// at the first (group, component) pair that breaks a cell. The same
// knowledge of a component gets the same bounds, computed once. The
// breaches, n_groups (the groups with some pair, up to the breaking one
// with `first`) and the order are those of the R loop one group at a time.
struct ComponentProgram {
  std::vector<int> row, col;  // 0-based triplets (row, col, v)
  std::vector<double> v, rhs, lower, upper;
  int n_row = 0, n_col = 0;
  std::vector<int> vars;      // 0-based cell of each column
  std::vector<int> targets;   // 0-based columns of the cells to attack
};

// Per cell of the table: suppressed, the outsider's interval, tolerance,
// value, protection level, a priori bounds and the index of its program in
// the list given (-1: none to attack).
struct BreachCells {
  std::vector<int> supp, prog;
  std::vector<double> outer_lo, outer_hi, tol, value, level, lower, upper;
};

// The groups' knowledge, group by group: entries start[g] .. start[g + 1]
// (0-based cells, bounds, alone flags).
struct GroupKnowledge {
  std::vector<int> start, cell, alone;
  std::vector<double> lo, hi;
};

struct RelationBreaches {
  std::vector<int> group, cell;  // 0-based group (position in the knowledge) and cell
  std::vector<double> lower, upper, need_lower, need_upper;
  int n_groups = 0;
};

// A program's relation bounds from its a priori bounds (relation_bounds())
// and its index (program_index()), the start of every respondent's
// relation bounds of it (relation_bounds_known()).
struct Narrowing {
  bool ready = false;
  ColumnBounds base;
  ProgramIndex ix;
};

inline Narrowing narrowing_of(const ComponentProgram& p, int passes, double moved) {
  Narrowing nw;
  nw.base = relation_bounds(p.row, p.col, p.v, p.n_row, p.n_col, p.rhs, p.lower, p.upper, passes, moved);
  nw.ix = program_index(p.row, p.col, p.n_row, p.n_col);
  nw.ready = true;
  return nw;
}

// The relation bounds of program p when a respondent knows columns `cols`
// to lie within [clo, chi]: the program's own relation bounds (outer bounds
// of every table of it, so of the respondent's too) narrowed to the
// knowledge, then by relation_bounds_narrowed() from the columns it
// narrowed, within the reads of `passes` passes over the program. The
// same as relation_bounds() from the a priori bounds narrowed to the
// knowledge where both run to their end; a respondent's knowledge of one
// cell reaches a few relations of a component of hundreds (the clean-up's
// relation tests of a 668-cell table took a sixth of protect_table()'s
// time, pass after pass over the whole component for each respondent).
inline ColumnBounds relation_bounds_known(const ComponentProgram& p, const Narrowing& nw, const std::vector<int>& cols,
                                          const std::vector<double>& clo, const std::vector<double>& chi,
                                          int passes, double moved) {
  ColumnBounds b = nw.base;
  std::vector<int> changed;
  for (std::size_t k = 0; k < cols.size(); ++k) {
    const int c = cols[k];
    const double nl = std::max(b.lower[c], clo[k]), nu = std::min(b.upper[c], chi[k]);
    if (nl != b.lower[c] || nu != b.upper[c]) changed.push_back(c);
    b.lower[c] = nl;
    b.upper[c] = nu;
  }
  if (!changed.empty()) {
    relation_bounds_narrowed(p.row, p.col, p.v, p.rhs, nw.ix, b.lower, b.upper, changed,
                             static_cast<std::size_t>(passes > 0 ? passes : 0) * p.row.size(), moved);
  }
  return b;
}

// relation_breach_groups() with the programs' own relation bounds and
// indexes `narrowing` (one per program; those not ready are computed) and
// the groups taken in the order `order` (positions in the knowledge; empty:
// in turn).
inline RelationBreaches relation_breach_groups_with(const std::vector<ComponentProgram>& progs,
                                                    const BreachCells& bc, const GroupKnowledge& gk, int passes,
                                                    double moved, bool first, std::vector<Narrowing>& narrowing,
                                                    const std::vector<int>& order) {
  const std::size_t n = bc.supp.size();
  if (bc.prog.size() != n || bc.outer_lo.size() != n || bc.outer_hi.size() != n || bc.tol.size() != n ||
      bc.value.size() != n || bc.level.size() != n || bc.lower.size() != n || bc.upper.size() != n) {
    throw std::invalid_argument("the cells' vectors differ in length");
  }
  const std::size_t n_entry = gk.cell.size();
  if (gk.start.empty() || gk.start.front() != 0 || gk.start.back() != static_cast<int>(n_entry) ||
      gk.lo.size() != n_entry || gk.hi.size() != n_entry || gk.alone.size() != n_entry) {
    throw std::invalid_argument("malformed knowledge");
  }
  for (std::size_t g = 0; g + 1 < gk.start.size(); ++g) {
    if (gk.start[g + 1] < gk.start[g]) throw std::invalid_argument("malformed knowledge");
  }
  for (const int c : gk.cell) {
    if (c < 0 || static_cast<std::size_t>(c) >= n) throw std::invalid_argument("knowledge of a cell out of range");
  }
  for (const int q : bc.prog) {
    if (q < -1 || q >= static_cast<int>(progs.size())) throw std::invalid_argument("program out of range");
  }
  for (const ComponentProgram& p : progs) {
    if (p.vars.size() != static_cast<std::size_t>(p.n_col) || p.lower.size() != p.vars.size() ||
        p.upper.size() != p.vars.size()) {
      throw std::invalid_argument("a program's columns differ in length");
    }
    for (const int c : p.vars) {
      if (c < 0 || static_cast<std::size_t>(c) >= n) throw std::invalid_argument("a program's cell out of range");
    }
    for (const int t : p.targets) {
      if (t < 0 || t >= p.n_col) throw std::invalid_argument("a program's target out of range");
    }
  }
  // (each program's column of every cell, filled for the program at hand)
  std::vector<int> col_of(n, -1);
  // the bounds found per program: knowledge (columns, lo, hi) -> the
  // targets' bounds
  struct Known {
    std::vector<int> cols;
    std::vector<double> lo, hi, t_lower, t_upper;
  };
  std::vector<std::vector<Known>> cache(progs.size());
  if (narrowing.size() != progs.size()) throw std::invalid_argument("one narrowing per program needed");
  RelationBreaches out;
  const std::size_t n_group = gk.start.size() - 1;
  if (!order.empty() && order.size() != n_group) throw std::invalid_argument("an order of the wrong length");
  for (const int g : order) {
    if (g < 0 || static_cast<std::size_t>(g) >= n_group) throw std::invalid_argument("an order out of range");
  }
  std::vector<int> comps, cols;
  std::vector<double> clo, chi;
  for (std::size_t pos = 0; pos < n_group; ++pos) {
    const std::size_t g = order.empty() ? pos : static_cast<std::size_t>(order[pos]);
    const int from = gk.start[g], to = gk.start[g + 1];
    // the effective knowledge, and the programs it reaches in order
    comps.clear();
    for (int e = from; e < to; ++e) {
      const int c = gk.cell[e];
      const bool eff = bc.supp[c] != 0 &&
                       (gk.lo[e] > bc.outer_lo[c] + bc.tol[c] || gk.hi[e] < bc.outer_hi[c] - bc.tol[c]);
      if (eff && bc.prog[c] >= 0 && std::find(comps.begin(), comps.end(), bc.prog[c]) == comps.end()) {
        comps.push_back(bc.prog[c]);
      }
    }
    if (comps.empty()) continue;
    ++out.n_groups;
    bool broke = false;
    for (const int q : comps) {
      const ComponentProgram& p = progs[static_cast<std::size_t>(q)];
      for (int k = 0; k < p.n_col; ++k) col_of[p.vars[k]] = k;
      cols.clear();
      clo.clear();
      chi.clear();
      for (int e = from; e < to; ++e) {
        const int c = gk.cell[e];
        const bool eff = bc.supp[c] != 0 &&
                         (gk.lo[e] > bc.outer_lo[c] + bc.tol[c] || gk.hi[e] < bc.outer_hi[c] - bc.tol[c]);
        if (!eff || bc.prog[c] != q) continue;
        if (col_of[c] < 0) throw std::invalid_argument("a cell outside its program");
        cols.push_back(col_of[c]);
        clo.push_back(gk.lo[e]);
        chi.push_back(gk.hi[e]);
      }
      for (int k = 0; k < p.n_col; ++k) col_of[p.vars[k]] = -1;
      const Known* hit = nullptr;
      for (const Known& kn : cache[static_cast<std::size_t>(q)]) {
        if (kn.cols == cols && kn.lo == clo && kn.hi == chi) {
          hit = &kn;
          break;
        }
      }
      if (hit == nullptr) {
        // (the program's own relation bounds and index, once, narrowed by
        // the knowledge: relation_bounds_known())
        Narrowing& nw = narrowing[static_cast<std::size_t>(q)];
        if (!nw.ready) nw = narrowing_of(p, passes, moved);
        const ColumnBounds b = relation_bounds_known(p, nw, cols, clo, chi, passes, moved);
        Known kn{cols, clo, chi, {}, {}};
        for (const int t : p.targets) {
          kn.t_lower.push_back(b.lower[t]);
          kn.t_upper.push_back(b.upper[t]);
        }
        cache[static_cast<std::size_t>(q)].push_back(std::move(kn));
        hit = &cache[static_cast<std::size_t>(q)].back();
      }
      // the group's requirement on each target
      for (std::size_t t = 0; t < p.targets.size(); ++t) {
        const int c = p.vars[p.targets[t]];
        double lower = bc.lower[c], upper = bc.upper[c];
        bool alone = false, known = false;
        for (int e = from; e < to; ++e) {
          if (gk.cell[e] != c) continue;
          if (gk.alone[e] != 0) alone = true;
          if (!known) {
            lower = gk.lo[e];
            upper = gk.hi[e];
            known = true;
          }
        }
        if (alone) continue;
        const double lo = hit->t_lower[t], hi = hit->t_upper[t];
        double need_lo, need_hi;
        if (protection_met_at(bc.value[c], bc.level[c], lower, upper, bc.tol[c], lo, hi, need_lo, need_hi)) continue;
        out.group.push_back(static_cast<int>(g));
        out.cell.push_back(c);
        out.lower.push_back(lo);
        out.upper.push_back(hi);
        out.need_lower.push_back(need_lo);
        out.need_upper.push_back(need_hi);
        broke = true;
      }
      if (first && broke) return out;
    }
  }
  return out;
}

inline RelationBreaches relation_breach_groups(const std::vector<ComponentProgram>& progs, const BreachCells& bc,
                                               const GroupKnowledge& gk, int passes, double moved, bool first) {
  std::vector<Narrowing> narrowing(progs.size());
  return relation_breach_groups_with(progs, bc, gk, passes, moved, first, narrowing, {});
}

// The clean-up's relation tests of its candidates against the respondents
// (respondent_screen() and trial_verdict() in R), on programs of the
// pattern it starts from: for each candidate cell j (0-based, suppressed in
// bc.supp), the first group of `gk` whose relation bounds break a target
// of j's program (bc.prog[j]) once j is published, -1 when none does or j
// lies in no program. The program is that of j's component with the
// columns of j and of every cell bc.supp publishes held at their values:
// the components of the pattern without j that lie in it, each a block of
// it (the clean-up only publishes cells of the pattern the programs were
// built for). Its own relation bounds start from those of the program
// (outer bounds of its tables, so of theirs) with the held columns at their
// values, narrowed from them (relation_bounds_narrowed()); so a breach
// found is real. The targets are the program's but j and those `attack`
// leaves out (one flag per cell; empty: every target). The groups are
// attacked nearest first, as respondent_breaches() takes them with `near`:
// by the fewest relations between j and their effective knowledge, through
// suppressed cells (relation_hops()), then those flagged in `hint` (one
// flag per group, or empty), then in turn.
inline std::vector<int> relation_breach_groups_each(const std::vector<ComponentProgram>& progs, BreachCells bc,
                                                    const GroupKnowledge& gk, const std::vector<int>& cand,
                                                    const std::vector<int>& attack, const std::vector<int>& hint,
                                                    int passes, double moved) {
  const std::size_t n = bc.supp.size();
  const std::size_t n_group = gk.start.empty() ? 0 : gk.start.size() - 1;
  if (bc.prog.size() != n || bc.value.size() != n || bc.outer_lo.size() != n || bc.outer_hi.size() != n ||
      bc.tol.size() != n || (!attack.empty() && attack.size() != n)) {
    throw std::invalid_argument("the cells' vectors differ in length");
  }
  if (!hint.empty() && hint.size() != n_group) throw std::invalid_argument("one hint per group needed");
  const std::vector<int> prog0 = bc.prog;
  // (each program's own relation bounds and index, once)
  std::vector<Narrowing> own(progs.size());
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<int> out(cand.size(), -1);
  for (std::size_t k = 0; k < cand.size(); ++k) {
    const int j = cand[k];
    if (j < 0 || static_cast<std::size_t>(j) >= n) throw std::invalid_argument("a candidate out of range");
    if (bc.supp[j] == 0) throw std::invalid_argument("a candidate not suppressed");
    const int q = prog0[j];
    if (q < -1 || q >= static_cast<int>(progs.size())) throw std::invalid_argument("program out of range");
    if (q < 0) continue;
    ComponentProgram p = progs[static_cast<std::size_t>(q)];
    if (p.lower.size() != p.vars.size() || p.upper.size() != p.vars.size() ||
        p.vars.size() != static_cast<std::size_t>(p.n_col)) {
      throw std::invalid_argument("a program's columns differ in length");
    }
    Narrowing& base = own[static_cast<std::size_t>(q)];
    if (!base.ready) base = narrowing_of(p, passes, moved);
    bc.supp[j] = 0;
    int col_j = -1;
    std::vector<int> held;
    for (int c = 0; c < p.n_col; ++c) {
      const int cell = p.vars[c];
      if (cell < 0 || static_cast<std::size_t>(cell) >= n) throw std::invalid_argument("a program's cell out of range");
      if (cell == j) col_j = c;
      if (bc.supp[cell] == 0) {
        p.lower[c] = p.upper[c] = bc.value[cell];
        held.push_back(c);
      }
    }
    if (col_j < 0) throw std::invalid_argument("a candidate outside its program");
    std::vector<int> targets;
    for (const int t : p.targets) {
      if (t < 0 || t >= p.n_col) throw std::invalid_argument("a program's target out of range");
      const int cell = p.vars[t];
      if (bc.supp[cell] != 0 && (attack.empty() || attack[cell] != 0)) targets.push_back(t);
    }
    p.targets.swap(targets);
    // the program's relation bounds with the held columns at their values
    std::vector<Narrowing> nw(1);
    nw[0].ix = base.ix;
    nw[0].base = base.base;
    for (const int c : held) nw[0].base.lower[c] = nw[0].base.upper[c] = bc.value[p.vars[c]];
    relation_bounds_narrowed(p.row, p.col, p.v, p.rhs, nw[0].ix, nw[0].base.lower, nw[0].base.upper, held,
                             static_cast<std::size_t>(passes > 0 ? passes : 0) * p.row.size(), moved);
    nw[0].ready = true;
    // the relations between j and each column, through suppressed cells
    // (as relation_hops() counts them, over the program's rows)
    const ProgramIndex& pix = nw[0].ix;
    const std::vector<double> hops = link_hops(
        static_cast<std::size_t>(p.n_col), static_cast<std::size_t>(p.n_row), {col_j},
        [&](int c, auto&& f) {
          for (int t = pix.col_start[c]; t < pix.col_start[c + 1]; ++t) f(p.row[pix.col_trip[t]]);
        },
        [&](int r, auto&& f) {
          for (int u = pix.row_start[r]; u < pix.row_start[r + 1]; ++u) f(p.col[pix.row_trip[u]]);
        },
        [&](int d) { return bc.supp[p.vars[d]] != 0; });
    // the groups by the nearest of their effective knowledge of the program
    std::vector<int> col_of_cell(n, -1);
    for (int c = 0; c < p.n_col; ++c) col_of_cell[p.vars[c]] = c;
    std::vector<double> dist(n_group, inf);
    for (std::size_t g = 0; g < n_group; ++g) {
      for (int e = gk.start[g]; e < gk.start[g + 1]; ++e) {
        const int c = gk.cell[e];
        if (c < 0 || static_cast<std::size_t>(c) >= n) throw std::invalid_argument("knowledge of a cell out of range");
        const int col = col_of_cell[c];
        if (col < 0 || bc.supp[c] == 0) continue;
        if (gk.lo[e] > bc.outer_lo[c] + bc.tol[c] || gk.hi[e] < bc.outer_hi[c] - bc.tol[c]) {
          dist[g] = std::min(dist[g], hops[static_cast<std::size_t>(col)]);
        }
      }
    }
    std::vector<int> order(n_group);
    for (std::size_t g = 0; g < n_group; ++g) order[g] = static_cast<int>(g);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      if (dist[a] != dist[b]) return dist[a] < dist[b];
      const bool ha = !hint.empty() && hint[a] != 0, hb = !hint.empty() && hint[b] != 0;
      return ha && !hb;
    });
    for (std::size_t c = 0; c < n; ++c) bc.prog[c] = prog0[c] == q ? 0 : -1;
    const RelationBreaches b = relation_breach_groups_with({p}, bc, gk, passes, moved, true, nw, order);
    bc.supp[j] = 1;
    if (!b.group.empty()) out[k] = b.group.front();
  }
  return out;
}

// The clean-up's screen of its candidates against the outsider: for each
// candidate cell (0-based, suppressed in `supp`), whether the pattern
// without it breaks by the relation bounds near it (relation_breach_near()
// of the pattern without the candidate, the clean-up's first test of a
// trial).
inline std::vector<int> relation_breach_each(const RelationIndex& ix, const std::vector<double>& value,
                                             std::vector<int> supp, const std::vector<int>& sensitive,
                                             const std::vector<double>& lower, const std::vector<double>& upper,
                                             const std::vector<double>& tol, const std::vector<double>& level,
                                             const std::vector<int>& cand, int passes, double moved) {
  if (supp.size() != static_cast<std::size_t>(ix.n_cell)) {
    throw std::invalid_argument("relation breach: the cells' vectors differ in length");
  }
  std::vector<int> out(cand.size(), 0);
  for (std::size_t k = 0; k < cand.size(); ++k) {
    const int j = cand[k];
    if (j < 0 || j >= ix.n_cell) throw std::invalid_argument("relation breach: cell out of range");
    if (supp[j] == 0) throw std::invalid_argument("relation breach: a candidate not suppressed");
    supp[j] = 0;
    out[k] = relation_breach_near(ix, value, supp, sensitive, lower, upper, tol, level, {j}, passes, moved) ? 1 : 0;
    supp[j] = 1;
  }
  return out;
}

// The extremes of witness tables given sparsely, for the respondents'
// programs (respondent_seeds() in R): move m changes its cell by y[m] in
// table id[m] (0-based tables); the moves of cell c (0-based) are
// by_cell[cstart[c]], ..., by_cell[cstart[c + 1] - 1]. Table t may be taken
// as lambda y for any lambda in [-lam_neg[t], lam_pos[t]] (every relation
// kept, and the a priori bounds: the shares the caller found), and not at
// all when dead[t] (empty: none is). The cells `known` have tighter bounds
// [lower[k], upper[k]] around their value value[k]: a table that moves
// one of them is shrunk to the largest shares that keep them. Returns for
// every cell of `targets` the largest (up, >= 0) and the smallest (dn,
// <= 0) move over the tables (0 where none moves it: the published
// table). The index vectors are read in place (any type with size() and
// operator[]: R's own vectors, never copied, for the caller's many calls
// over one index); every index is checked before it is used.
struct WitnessMoves {
  std::vector<double> up, dn;
};

template <class IntSeq, class DblSeq>
WitnessMoves witness_moves(const DblSeq& y, const IntSeq& id, const IntSeq& cstart, const IntSeq& by_cell,
                           std::vector<double> lam_pos, std::vector<double> lam_neg,
                           const std::vector<int>& dead, const std::vector<int>& known,
                           const std::vector<double>& value, const std::vector<double>& lower,
                           const std::vector<double>& upper, const std::vector<int>& targets) {
  const std::size_t n_move = static_cast<std::size_t>(y.size());
  const std::size_t n_table = lam_pos.size();
  if (static_cast<std::size_t>(id.size()) != n_move || static_cast<std::size_t>(by_cell.size()) != n_move) {
    throw std::invalid_argument("the moves differ in length");
  }
  if (lam_neg.size() != n_table || (!dead.empty() && dead.size() != n_table)) {
    throw std::invalid_argument("the tables' shares differ in length");
  }
  if (value.size() != known.size() || lower.size() != known.size() || upper.size() != known.size()) {
    throw std::invalid_argument("the bounds of the known cells differ in length");
  }
  if (cstart.size() == 0) throw std::invalid_argument("no start of the moves by cell");
  const int n_cell = static_cast<int>(cstart.size()) - 1;
  // the moves of cell c, each checked
  auto moves = [&](int c, auto&& f) {
    if (c < 0 || c >= n_cell) throw std::invalid_argument("cell out of range");
    const int from = cstart[c], to = cstart[c + 1];
    if (from < 0 || to < from || static_cast<std::size_t>(to) > n_move) {
      throw std::invalid_argument("the moves' start by cell is out of range");
    }
    for (int i = from; i < to; ++i) {
      const int m = by_cell[i];
      if (m < 0 || static_cast<std::size_t>(m) >= n_move) throw std::invalid_argument("a move out of range");
      const int t = id[m];
      if (t < 0 || static_cast<std::size_t>(t) >= n_table) throw std::invalid_argument("a table out of range");
      if (!dead.empty() && dead[static_cast<std::size_t>(t)] != 0) continue;
      f(static_cast<std::size_t>(t), static_cast<double>(y[m]));
    }
  };
  for (std::size_t k = 0; k < known.size(); ++k) {
    const double room_up = std::max(upper[k] - value[k], 0.0);
    const double room_dn = std::max(value[k] - lower[k], 0.0);
    moves(known[k], [&](std::size_t t, double ym) {
      if (ym == 0.0) return;
      const double a = std::fabs(ym);
      // (y upward uses the room above, its mirror image the room below)
      lam_pos[t] = std::min(lam_pos[t], (ym > 0 ? room_up : room_dn) / a);
      lam_neg[t] = std::min(lam_neg[t], (ym > 0 ? room_dn : room_up) / a);
    });
  }
  WitnessMoves out;
  out.up.assign(targets.size(), 0.0);
  out.dn.assign(targets.size(), 0.0);
  for (std::size_t j = 0; j < targets.size(); ++j) {
    moves(targets[j], [&](std::size_t t, double ym) {
      const double a = lam_pos[t] * ym, b = -lam_neg[t] * ym;
      out.up[j] = std::max(out.up[j], std::max(a, b));
      out.dn[j] = std::min(out.dn[j], std::min(a, b));
    });
  }
  return out;
}

}  // namespace sdcRisk

#endif
