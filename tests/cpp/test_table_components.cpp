// Standalone test of the suppression core, without R:
//   g++ -std=c++17 -O2 -I../../inst/include test_suppress.cpp -o build/test_suppress && build/test_suppress
// Compares union-find components with a breadth-first search over the same
// random relation graphs; the extremes over witness tables with a scan of
// every (table, row), and over sparse tables shrunk to bounds with a scan
// of every move; propagated relation bounds with the bounds each
// relation implies given the others' (a fixed point: no relation tightens
// them further) and with a point that keeps every relation; and twin
// columns with the components of the 2-entry rows and with solutions of
// the rows.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <cstdio>
#include <vector>

#include "sdcRisk/table_components.hpp"

namespace {

struct Lcg {  // deterministic generator: identical on every platform
  std::uint64_t s;
  int below(int n) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((s >> 33) % static_cast<std::uint64_t>(n));
  }
};

// same partition: labels agree up to renaming
bool same_partition(const std::vector<int>& a, const std::vector<int>& b) {
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = 0; j < a.size(); ++j)
      if ((a[i] == a[j]) != (b[i] == b[j])) return false;
  return true;
}

std::vector<int> bfs(const std::vector<int>& rel, const std::vector<int>& node, int nr, int nn) {
  std::vector<int> label(nn, -1);
  int next = 0;
  for (int s = 0; s < nn; ++s) {
    if (label[s] >= 0) continue;
    label[s] = next;
    std::vector<int> stack{s};
    while (!stack.empty()) {
      const int v = stack.back();
      stack.pop_back();
      for (std::size_t k = 0; k < rel.size(); ++k) {
        if (node[k] != v) continue;
        for (std::size_t m = 0; m < rel.size(); ++m) {
          if (rel[m] == rel[k] && label[node[m]] < 0) {
            label[node[m]] = next;
            stack.push_back(node[m]);
          }
        }
      }
    }
    ++next;
  }
  (void)nr;
  return label;
}

// Random relations over n_cell cells: each cell in each relation with
// probability 1/2, with coefficient 1 or -1.
struct Triplets {
  std::vector<int> rel, cell;
  std::vector<double> coef;
};

Triplets random_relations(Lcg& g, int n_rel, int n_cell) {
  Triplets tr;
  for (int r = 0; r < n_rel; ++r) {
    for (int c = 0; c < n_cell; ++c) {
      if (g.below(2)) continue;
      tr.rel.push_back(r);
      tr.cell.push_back(c);
      tr.coef.push_back(g.below(2) ? 1.0 : -1.0);
    }
  }
  return tr;
}

// x and y agree to 10^-9 of their size (at least 1).
bool testutil_close(double x, double y) {
  return std::fabs(x - y) <= 1e-9 * std::max({1.0, std::fabs(x), std::fabs(y)});
}

// Does f() reject its input (std::invalid_argument)?
template <class F>
bool rejects(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument&) {
    return true;
  }
  return false;
}

}  // namespace

// A random program over the cells `vars` with n_row rows of coefficients
// +-1 that the values x0 keep, the cells' a priori bounds, and each column a
// target or not at random.
static sdcRisk::ComponentProgram random_program(Lcg& g, const std::vector<int>& vars, int n_row,
                                                const std::vector<double>& x0, const std::vector<double>& lower,
                                                const std::vector<double>& upper) {
  sdcRisk::ComponentProgram p;
  p.vars = vars;
  p.n_col = static_cast<int>(vars.size());
  p.n_row = n_row;
  p.rhs.assign(p.n_row, 0.0);
  for (int r = 0; r < p.n_row; ++r) {
    for (int k = 0; k < p.n_col; ++k) {
      if (g.below(2) == 0) continue;
      const double coef = g.below(2) ? 1.0 : -1.0;
      p.row.push_back(r);
      p.col.push_back(k);
      p.v.push_back(coef);
      p.rhs[r] += coef * x0[p.vars[k]];
    }
  }
  for (int k = 0; k < p.n_col; ++k) {
    p.lower.push_back(lower[p.vars[k]]);
    p.upper.push_back(upper[p.vars[k]]);
    if (g.below(2)) p.targets.push_back(k);
  }
  return p;
}

int main() {
  Lcg g{12345};
  int failures = 0;
  for (int rep = 0; rep < 300; ++rep) {
    const int nn = 1 + g.below(30), nr = 1 + g.below(20), m = g.below(60);
    std::vector<int> rel(m), node(m);
    for (int k = 0; k < m; ++k) {
      rel[k] = g.below(nr);
      node[k] = g.below(nn);
    }
    const auto a = sdcRisk::relation_components(rel, node, nr, nn);
    const auto b = bfs(rel, node, nr, nn);
    if (!same_partition(a, b)) {
      std::printf("components differ from BFS, case %d\n", rep);
      ++failures;
    }
  }
  bool threw = false;
  try {
    sdcRisk::relation_components({0}, {5}, 1, 3);
  } catch (const std::invalid_argument&) {
    threw = true;
  }
  if (!threw) {
    std::printf("out-of-range incidence not rejected\n");
    ++failures;
  }

  // extremes over witness tables against a direct scan
  for (int rep = 0; rep < 200; ++rep) {
    const int n_row = 1 + g.below(12), n_tab = g.below(8);
    std::vector<std::vector<double>> tabs(n_tab, std::vector<double>(n_row));
    std::vector<const double*> ptr;
    for (auto& t : tabs) {
      for (auto& x : t) x = g.below(21) - 10;
      ptr.push_back(t.data());
    }
    std::vector<int> rows, check;
    std::vector<double> lo, hi, tol;
    for (int r = 0; r < n_row; ++r) {
      if (g.below(2)) rows.push_back(r);
      if (g.below(3) == 0) {
        check.push_back(r);
        lo.push_back(g.below(11) - 10);
        hi.push_back(g.below(11));
        tol.push_back(g.below(2) * 0.5);
      }
    }
    const auto ex = sdcRisk::table_extremes(ptr, n_row, rows, check, lo, hi, tol);
    std::size_t used = 0;
    bool ok = true;
    std::vector<double> mx(rows.size(), -std::numeric_limits<double>::infinity());
    std::vector<double> mn(rows.size(), std::numeric_limits<double>::infinity());
    for (const auto& t : tabs) {
      bool keep = true;
      for (std::size_t c = 0; c < check.size(); ++c) {
        keep = keep && t[check[c]] >= lo[c] - tol[c] && t[check[c]] <= hi[c] + tol[c];
      }
      if (!keep) continue;
      ++used;
      for (std::size_t k = 0; k < rows.size(); ++k) {
        mx[k] = std::max(mx[k], t[rows[k]]);
        mn[k] = std::min(mn[k], t[rows[k]]);
      }
    }
    ok = used == ex.used && mx == ex.max && mn == ex.min;
    if (!ok) {
      std::printf("table extremes differ from the scan, case %d\n", rep);
      ++failures;
    }
    // moved toward a center inside the checked bounds (0 there: lo <= 0 <= hi)
    const std::vector<double> center(static_cast<std::size_t>(n_row), 0.0);
    const auto sc = sdcRisk::table_extremes(ptr, n_row, rows, check, lo, hi, tol, center);
    std::size_t used_sc = 0;
    std::vector<double> mx_sc(rows.size(), -std::numeric_limits<double>::infinity());
    std::vector<double> mn_sc(rows.size(), std::numeric_limits<double>::infinity());
    for (const auto& t : tabs) {
      double lambda = 1.0;
      for (std::size_t c = 0; c < check.size(); ++c) {
        const double x = t[check[c]];
        if (x > hi[c] + tol[c]) lambda = std::min(lambda, hi[c] / x);
        if (x < lo[c] - tol[c]) lambda = std::min(lambda, lo[c] / x);
      }
      if (!(lambda > 0.0)) continue;
      ++used_sc;
      for (std::size_t k = 0; k < rows.size(); ++k) {
        const double x = lambda < 1.0 ? lambda * t[rows[k]] : t[rows[k]];
        mx_sc[k] = std::max(mx_sc[k], x);
        mn_sc[k] = std::min(mn_sc[k], x);
      }
    }
    // with one checked row, tables between one above and one below its
    // bounds (those with the largest, the smallest value of each row)
    if (check.size() == 1) {
      const double l = lo[0], h = hi[0], tl = tol[0];
      const auto along = [](double xa, double ya, double xb, double yb, double x) {
        return yb + (x - xb) / (xa - xb) * (ya - yb);
      };
      for (std::size_t k = 0; k < rows.size(); ++k) {
        int a_hi = -1, b_hi = -1, a_lo = -1, b_lo = -1;
        for (int t = 0; t < n_tab; ++t) {
          const double xc = tabs[t][check[0]], y = tabs[t][rows[k]];
          if (xc > h + tl) {
            if (a_hi < 0 || y > tabs[a_hi][rows[k]]) a_hi = t;
            if (a_lo < 0 || y < tabs[a_lo][rows[k]]) a_lo = t;
          } else if (xc < l - tl) {
            if (b_hi < 0 || y > tabs[b_hi][rows[k]]) b_hi = t;
            if (b_lo < 0 || y < tabs[b_lo][rows[k]]) b_lo = t;
          }
        }
        if (a_hi >= 0 && b_hi >= 0) {
          const double xa = tabs[a_hi][check[0]], ya = tabs[a_hi][rows[k]];
          const double xb = tabs[b_hi][check[0]], yb = tabs[b_hi][rows[k]];
          mx_sc[k] = std::max({mx_sc[k], along(xa, ya, xb, yb, l), along(xa, ya, xb, yb, h)});
          const double xa2 = tabs[a_lo][check[0]], ya2 = tabs[a_lo][rows[k]];
          const double xb2 = tabs[b_lo][check[0]], yb2 = tabs[b_lo][rows[k]];
          mn_sc[k] = std::min({mn_sc[k], along(xa2, ya2, xb2, yb2, l), along(xa2, ya2, xb2, yb2, h)});
        }
      }
    }
    if (used_sc != sc.used || mx_sc != sc.max || mn_sc != sc.min) {
      std::printf("moved table extremes differ from the scan, case %d\n", rep);
      ++failures;
    }
  }

  // propagated relation bounds: valid for a point of the relations, and a
  // fixed point of one relation's bounds when the passes were not cut short
  for (int rep = 0; rep < 300; ++rep) {
    const int n_col = 2 + g.below(8), n_row = 1 + g.below(4);
    std::vector<int> row, col;
    std::vector<double> v, x0(n_col), rhs(n_row, 0.0), lower(n_col), upper(n_col);
    for (int c = 0; c < n_col; ++c) {
      x0[c] = g.below(10);
      lower[c] = g.below(4) == 0 ? -std::numeric_limits<double>::infinity() : x0[c] - g.below(5);
      upper[c] = g.below(3) == 0 ? std::numeric_limits<double>::infinity() : x0[c] + g.below(5);
    }
    for (int r = 0; r < n_row; ++r) {
      for (int c = 0; c < n_col; ++c) {
        if (g.below(2) == 0) continue;
        const double coef = g.below(2) ? 1.0 : -1.0;
        row.push_back(r);
        col.push_back(c);
        v.push_back(coef);
        rhs[r] += coef * x0[c];
      }
    }
    const auto b = sdcRisk::relation_bounds(row, col, v, n_row, n_col, rhs, lower, upper, 50, 0.0);
    bool ok = true;
    for (int c = 0; c < n_col; ++c) {
      ok = ok && b.lower[c] <= x0[c] + 1e-9 && x0[c] <= b.upper[c] + 1e-9;
      ok = ok && b.lower[c] >= lower[c] && b.upper[c] <= upper[c];
    }
    // one more pass moves nothing
    const auto again = sdcRisk::relation_bounds(row, col, v, n_row, n_col, rhs, b.lower, b.upper, 1, 0.0);
    for (int c = 0; c < n_col; ++c) {
      auto same = [](double a, double z) { return a == z || std::fabs(a - z) <= 1e-9 * (1 + std::fabs(z)); };
      ok = ok && same(again.lower[c], b.lower[c]) && same(again.upper[c], b.upper[c]);
    }
    if (!ok) {
      std::printf("relation bounds wrong, case %d\n", rep);
      ++failures;
    }
    // a respondent's knowledge of some columns (around x0): the program's
    // own bounds narrowed from those columns by the work list are valid,
    // moved by no further pass, and where both run to their end the same
    // as the passes from the a priori bounds narrowed by the knowledge
    std::vector<int> cols;
    std::vector<double> clo, chi;
    for (int c = 0; c < n_col; ++c) {
      if (g.below(3) != 0) continue;
      cols.push_back(c);
      clo.push_back(x0[c] - g.below(3));
      chi.push_back(x0[c] + g.below(3));
    }
    sdcRisk::ComponentProgram prog_k;
    prog_k.row = row;
    prog_k.col = col;
    prog_k.v = v;
    prog_k.rhs = rhs;
    prog_k.n_row = n_row;
    prog_k.n_col = n_col;
    prog_k.lower = lower;
    prog_k.upper = upper;
    const auto known = sdcRisk::relation_bounds_known(prog_k, sdcRisk::narrowing_of(prog_k, 50, 0.0), cols, clo, chi,
                                                      50, 0.0);
    std::vector<double> lo = lower, up = upper;
    for (std::size_t k = 0; k < cols.size(); ++k) {
      lo[cols[k]] = std::max(lo[cols[k]], clo[k]);
      up[cols[k]] = std::min(up[cols[k]], chi[k]);
    }
    const auto scratch = sdcRisk::relation_bounds(row, col, v, n_row, n_col, rhs, lo, up, 50, 0.0);
    const auto settled = sdcRisk::relation_bounds(row, col, v, n_row, n_col, rhs, known.lower, known.upper, 1, 0.0);
    bool same_known = true;
    for (int c = 0; c < n_col; ++c) {
      auto same = [](double a, double z) { return a == z || std::fabs(a - z) <= 1e-9 * (1 + std::fabs(z)); };
      same_known = same_known && known.lower[c] <= x0[c] + 1e-9 && x0[c] <= known.upper[c] + 1e-9;
      same_known = same_known && known.lower[c] >= lo[c] && known.upper[c] <= up[c];
      same_known = same_known && same(settled.lower[c], known.lower[c]) && same(settled.upper[c], known.upper[c]);
      same_known = same_known && same(scratch.lower[c], known.lower[c]) && same(scratch.upper[c], known.upper[c]);
    }
    if (!same_known) {
      std::printf("relation bounds narrowed by knowledge differ from the passes from scratch, case %d\n", rep);
      ++failures;
    }
  }
  {
    bool threw_known = false;
    try {
      sdcRisk::ComponentProgram one;
      one.row = {0};
      one.col = {0};
      one.v = {1.0};
      one.rhs = {0.0};
      one.n_row = 1;
      one.n_col = 1;
      one.lower = {0.0};
      one.upper = {1.0, 2.0};
      sdcRisk::narrowing_of(one, 1, 0.0);
    } catch (const std::invalid_argument&) {
      threw_known = true;
    }
    if (!threw_known) {
      std::printf("a program with bounds of the wrong length not rejected\n");
      ++failures;
    }
  }

  // the respondents' relation breaches against a plain loop: each group's
  // effective knowledge narrows the program, relation_bounds_known() bounds it,
  // and each target not known alone is tested within what the group knows
  int breach_seen = 0, passed_seen = 0;
  for (int rep = 0; rep < 400; ++rep) {
    const int n = 3 + g.below(10);
    std::vector<double> x0(n), level(n), lower(n), upper(n), olo(n), ohi(n), tol(n, 1e-9);
    std::vector<int> supp(n), prog(n, -1), vars;
    for (int c = 0; c < n; ++c) {
      x0[c] = 5 + g.below(10);
      level[c] = 1 + g.below(4);
      lower[c] = 0;
      upper[c] = g.below(3) ? 40.0 : std::numeric_limits<double>::infinity();
      supp[c] = g.below(3) != 0;
      olo[c] = supp[c] ? x0[c] - g.below(6) : std::nan("");
      ohi[c] = supp[c] ? x0[c] + g.below(6) : std::nan("");
      if (supp[c] && g.below(4)) {
        prog[c] = 0;
        vars.push_back(c);
      }
    }
    const int n_row = vars.empty() ? 0 : g.below(4);
    const sdcRisk::ComponentProgram p = random_program(g, vars, n_row, x0, lower, upper);
    sdcRisk::BreachCells bc{supp, prog, olo, ohi, tol, x0, level, lower, upper};
    sdcRisk::GroupKnowledge gk;
    gk.start.push_back(0);
    const int n_group = g.below(5);
    for (int q = 0; q < n_group; ++q) {
      std::vector<int> seen(n);
      const int m = g.below(4);
      for (int e = 0; e < m; ++e) {
        const int c = g.below(n);
        if (seen[c]) continue;
        seen[c] = 1;
        const bool alone = g.below(4) == 0;
        gk.cell.push_back(c);
        gk.alone.push_back(alone);
        gk.lo.push_back(alone ? x0[c] : x0[c] - g.below(4));
        gk.hi.push_back(alone ? x0[c] : x0[c] + g.below(4));
      }
      // (now and then a group that knows what the one before it knows)
      if (q > 0 && g.below(4) == 0) {
        const int a = gk.start[q - 1], b = gk.start[q];
        gk.cell.resize(gk.start[q]);
        gk.alone.resize(gk.start[q]);
        gk.lo.resize(gk.start[q]);
        gk.hi.resize(gk.start[q]);
        for (int e = a; e < b; ++e) {
          gk.cell.push_back(gk.cell[e]);
          gk.alone.push_back(gk.alone[e]);
          gk.lo.push_back(gk.lo[e]);
          gk.hi.push_back(gk.hi[e]);
        }
      }
      gk.start.push_back(static_cast<int>(gk.cell.size()));
    }
    for (const bool first : {false, true}) {
      const auto got = sdcRisk::relation_breach_groups({p}, bc, gk, 20, 1e-9, first);
      sdcRisk::RelationBreaches want;
      for (int q = 0; q < n_group; ++q) {
        std::vector<int> cols;
        std::vector<double> clo, chi;
        for (int e = gk.start[q]; e < gk.start[q + 1]; ++e) {
          const int c = gk.cell[e];
          if (!supp[c] || !(gk.lo[e] > olo[c] + tol[c] || gk.hi[e] < ohi[c] - tol[c]) || prog[c] != 0) continue;
          cols.push_back(static_cast<int>(std::find(p.vars.begin(), p.vars.end(), c) - p.vars.begin()));
          clo.push_back(gk.lo[e]);
          chi.push_back(gk.hi[e]);
        }
        if (cols.empty()) continue;
        ++want.n_groups;
        const auto b = sdcRisk::relation_bounds_known(p, sdcRisk::narrowing_of(p, 20, 1e-9), cols, clo, chi, 20, 1e-9);
        bool broke = false;
        for (const int t : p.targets) {
          const int c = p.vars[t];
          double l = lower[c], u = upper[c];
          bool alone = false, known = false;
          for (int e = gk.start[q]; e < gk.start[q + 1]; ++e) {
            if (gk.cell[e] != c) continue;
            alone = alone || gk.alone[e];
            if (!known) l = gk.lo[e], u = gk.hi[e], known = true;
          }
          if (alone) continue;
          const double need_lo = std::max(x0[c] - level[c], l), need_hi = std::min(x0[c] + level[c], u);
          if (b.upper[t] >= need_hi - tol[c] && b.lower[t] <= need_lo + tol[c] && b.upper[t] - b.lower[t] > tol[c]) continue;
          want.group.push_back(q);
          want.cell.push_back(c);
          want.lower.push_back(b.lower[t]);
          want.upper.push_back(b.upper[t]);
          want.need_lower.push_back(need_lo);
          want.need_upper.push_back(need_hi);
          broke = true;
        }
        if (first && broke) break;
      }
      if (got.group != want.group || got.cell != want.cell || got.lower != want.lower || got.upper != want.upper ||
          got.need_lower != want.need_lower || got.need_upper != want.need_upper || got.n_groups != want.n_groups) {
        std::printf("respondents' relation breaches differ from the plain loop, case %d first %d\n", rep, first);
        ++failures;
      }
      if (!got.group.empty()) ++breach_seen;
      if (got.group.empty() && got.n_groups > 0) ++passed_seen;
    }
  }
  // (both outcomes must occur for the comparison to mean anything)
  if (breach_seen < 20 || passed_seen < 20) {
    std::printf("respondents' relation breaches: too few cases (%d breached, %d passed)\n", breach_seen, passed_seen);
    ++failures;
  }
  {
    bool threw_breach = false;
    try {
      sdcRisk::BreachCells bc{{1}, {-1}, {0.0}, {1.0}, {0.0}, {1.0}, {1.0}, {0.0}, {2.0}};
      sdcRisk::GroupKnowledge gk{{0, 1}, {5}, {0}, {0.0}, {1.0}};
      sdcRisk::relation_breach_groups({}, bc, gk, 1, 0.0, false);
    } catch (const std::invalid_argument&) {
      threw_breach = true;
    }
    if (!threw_breach) {
      std::printf("knowledge of a cell out of range not rejected\n");
      ++failures;
    }
  }

  // the clean-up's relation tests of its candidates against the
  // respondents: for each candidate, on the program held at the values of
  // the candidate and of the cells published since it was built, the group
  // reported is one whose relation bounds of that program, computed from
  // scratch (relation_breach_groups() on the held program), break a target
  // the test attacks, and none is reported when no group's do (integer
  // data, coefficients +-1 and enough passes: both propagations end at the
  // same bounds)
  int each_breach = 0, each_passed = 0;
  for (int rep = 0; rep < 400; ++rep) {
    const int n = 3 + g.below(8);
    std::vector<double> x0(n), level(n), lower(n), upper(n), olo(n), ohi(n), tol(n, 1e-9);
    std::vector<int> supp(n), prog(n, -1), attack(n), vars;
    for (int c = 0; c < n; ++c) {
      x0[c] = 5 + g.below(10);
      level[c] = 1 + g.below(4);
      lower[c] = 0;
      upper[c] = g.below(3) ? 40.0 : std::numeric_limits<double>::infinity();
      supp[c] = g.below(4) != 0;
      olo[c] = x0[c] - 2 - g.below(6);
      ohi[c] = x0[c] + 2 + g.below(6);
      attack[c] = g.below(5) != 0;
      if (supp[c]) {
        prog[c] = 0;
        vars.push_back(c);
      }
    }
    if (vars.size() < 2) continue;
    const sdcRisk::ComponentProgram p = random_program(g, vars, 1 + g.below(4), x0, lower, upper);
    sdcRisk::GroupKnowledge gk;
    gk.start.push_back(0);
    const int n_group = 1 + g.below(4);
    for (int q = 0; q < n_group; ++q) {
      std::vector<int> seen(n);
      const int m = 1 + g.below(3);
      for (int e = 0; e < m; ++e) {
        const int c = g.below(n);
        if (seen[c]) continue;
        seen[c] = 1;
        const bool alone = g.below(5) == 0;
        gk.cell.push_back(c);
        gk.alone.push_back(alone);
        gk.lo.push_back(alone ? x0[c] : x0[c] - g.below(3));
        gk.hi.push_back(alone ? x0[c] : x0[c] + g.below(3));
      }
      gk.start.push_back(static_cast<int>(gk.cell.size()));
    }
    // the programs were built for the pattern `supp`; some of their cells
    // were published since
    std::vector<int> now = supp;
    for (const int c : p.vars) {
      if (g.below(5) == 0) now[c] = 0;
    }
    std::vector<int> cand;
    for (const int c : p.vars) {
      if (now[c]) cand.push_back(c);
    }
    std::vector<int> hint(n_group);
    for (int& h : hint) h = g.below(2);
    const sdcRisk::BreachCells bc{now, prog, olo, ohi, tol, x0, level, lower, upper};
    const auto got = sdcRisk::relation_breach_groups_each({p}, bc, gk, cand, attack, hint, 1000, 1e-9);
    for (std::size_t k = 0; k < cand.size(); ++k) {
      const int j = cand[k];
      sdcRisk::ComponentProgram held = p;
      std::vector<int> after = now;
      after[j] = 0;
      for (int c = 0; c < held.n_col; ++c) {
        if (!after[held.vars[c]]) held.lower[c] = held.upper[c] = x0[held.vars[c]];
      }
      held.targets.clear();
      for (const int t : p.targets) {
        if (after[p.vars[t]] && attack[p.vars[t]]) held.targets.push_back(t);
      }
      const sdcRisk::BreachCells bh{after, prog, olo, ohi, tol, x0, level, lower, upper};
      const auto all = sdcRisk::relation_breach_groups({held}, bh, gk, 1000, 1e-9, false);
      const bool ok = got[k] < 0 ? all.group.empty()
                                 : std::find(all.group.begin(), all.group.end(), got[k]) != all.group.end();
      if (!ok) {
        std::printf("clean-up's relation test of candidate %d wrong, case %d: got %d\n", j, rep, got[k]);
        ++failures;
      }
      if (got[k] >= 0) ++each_breach; else ++each_passed;
    }
  }
  if (each_breach < 20 || each_passed < 20) {
    std::printf("clean-up's relation tests: too few cases (%d breached, %d passed)\n", each_breach, each_passed);
    ++failures;
  }
  {
    // a chain of cells 0 - 1 - 2 - 3 - 4 (rows x_c - x_{c+1} = 0, all 10),
    // cell 0 the candidate, cells 2 and 4 sensitive (level 1); group 0 is
    // alone in cell 3, group 1 in cell 1: each pins every cell, and the
    // nearer to cell 0, group 1, is reported whatever the hints and
    // whichever target is attacked; with no row nothing breaks
    sdcRisk::ComponentProgram p;
    p.n_col = 5;
    p.n_row = 4;
    for (int r = 0; r < 4; ++r) {
      p.row.insert(p.row.end(), {r, r});
      p.col.insert(p.col.end(), {r, r + 1});
      p.v.insert(p.v.end(), {1.0, -1.0});
    }
    p.rhs.assign(4, 0.0);
    p.lower.assign(5, 0.0);
    p.upper.assign(5, 100.0);
    p.vars = {0, 1, 2, 3, 4};
    p.targets = {2, 4};
    const std::vector<double> x(5, 10.0), lv{0, 0, 1, 0, 1}, lo(5, 0.0), up(5, 100.0), olo(5, 0.0),
        ohi(5, 100.0), tol(5, 1e-9);
    const sdcRisk::BreachCells bc{{1, 1, 1, 1, 1}, {0, 0, 0, 0, 0}, olo, ohi, tol, x, lv, lo, up};
    const sdcRisk::GroupKnowledge gk{{0, 1, 2}, {3, 1}, {1, 1}, {10.0, 10.0}, {10.0, 10.0}};
    const auto near = sdcRisk::relation_breach_groups_each({p}, bc, gk, {0}, {}, {1, 0}, 20, 1e-9);
    const auto plain = sdcRisk::relation_breach_groups_each({p}, bc, gk, {0}, {}, {}, 20, 1e-9);
    std::vector<int> only4(5, 0);
    only4[4] = 1;
    const auto far = sdcRisk::relation_breach_groups_each({p}, bc, gk, {0}, only4, {}, 20, 1e-9);
    sdcRisk::ComponentProgram loose = p;
    loose.row.clear();
    loose.col.clear();
    loose.v.clear();
    loose.rhs.clear();
    loose.n_row = 0;
    const auto none = sdcRisk::relation_breach_groups_each({loose}, bc, gk, {0}, {}, {}, 20, 1e-9);
    if (near != std::vector<int>{1} || plain != std::vector<int>{1} || far != std::vector<int>{1} ||
        none != std::vector<int>{-1}) {
      std::printf("clean-up's relation test order wrong: %d %d %d %d\n", near[0], plain[0], far[0], none[0]);
      ++failures;
    }
    // a candidate not suppressed, hints of the wrong length
    int threw = 0;
    try {
      const sdcRisk::BreachCells b0{{0, 1, 1, 1, 1}, {0, 0, 0, 0, 0}, olo, ohi, tol, x, lv, lo, up};
      sdcRisk::relation_breach_groups_each({p}, b0, gk, {0}, {}, {}, 20, 1e-9);
    } catch (const std::invalid_argument&) {
      ++threw;
    }
    try {
      sdcRisk::relation_breach_groups_each({p}, bc, gk, {0}, {}, {1}, 20, 1e-9);
    } catch (const std::invalid_argument&) {
      ++threw;
    }
    if (threw != 2) {
      std::printf("clean-up's relation test: bad input not rejected (%d of 2)\n", threw);
      ++failures;
    }
  }

  // the outsider's relation test near a cell, on a 2 x 2 table with its
  // margins published: a sensitive cell suppressed alone is pinned; with
  // its whole 2 x 2 block it moves by its level
  {
    // cells a b c d (0-3), row sums R1 R2 (4, 5), column sums C1 C2 (6, 7)
    const std::vector<int> rel{0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3};
    const std::vector<int> cell{0, 1, 4, 2, 3, 5, 0, 2, 6, 1, 3, 7};
    const std::vector<double> coef{1, 1, -1, 1, 1, -1, 1, 1, -1, 1, 1, -1};
    const std::vector<double> value{10, 20, 30, 40, 30, 70, 40, 60};
    const std::vector<double> lower(8, 0.0), upper(8, std::numeric_limits<double>::infinity()), tol(8, 1e-9);
    std::vector<double> level(8, 0.0);
    level[0] = 5;
    std::vector<int> sens(8, 0);
    sens[0] = 1;
    std::vector<int> alone(8, 0), block(8, 0);
    alone[0] = 1;
    for (int c = 0; c < 4; ++c) block[c] = 1;
    const auto ix = sdcRisk::relation_index(rel, cell, coef, 4, 8);
    const bool pinned = sdcRisk::relation_breach_near(ix, value, alone, sens, lower, upper, tol, level, {0}, 20, 1e-9);
    const bool moves = sdcRisk::relation_breach_near(ix, value, block, sens, lower, upper, tol, level, {3}, 20, 1e-9);
    // (the relation of R2 touches no suppressed cell: nothing to test)
    const bool far = sdcRisk::relation_breach_near(ix, value, alone, sens, lower, upper, tol, level, {5}, 20, 1e-9);
    if (!pinned || moves || far) {
      std::printf("relation test near a cell wrong: pinned %d moves %d far %d\n", pinned, moves, far);
      ++failures;
    }
    // the clean-up's screen: each candidate of the block published in turn,
    // as relation_breach_near() finds the pattern without it (cell 0 itself
    // is not a candidate: it is sensitive)
    const std::vector<int> cands{1, 2, 3};
    const auto each = sdcRisk::relation_breach_each(ix, value, block, sens, lower, upper, tol, level, cands, 20, 1e-9);
    for (std::size_t k = 0; k < cands.size(); ++k) {
      std::vector<int> without = block;
      without[cands[k]] = 0;
      const bool want = sdcRisk::relation_breach_near(ix, value, without, sens, lower, upper, tol, level,
                                                      {cands[k]}, 20, 1e-9);
      if (each[k] != static_cast<int>(want) || !want) {
        std::printf("clean-up's screen of candidate %d wrong: %d, want %d (pinned)\n", cands[k], each[k], want);
        ++failures;
      }
    }
    bool threw_each = false;
    try {
      sdcRisk::relation_breach_each(ix, value, alone, sens, lower, upper, tol, level, {1}, 20, 1e-9);
    } catch (const std::invalid_argument&) {
      threw_each = true;
    }
    if (!threw_each) {
      std::printf("clean-up's screen: a candidate not suppressed not rejected\n");
      ++failures;
    }
  }

  // the swap bound against its definition, relation by relation (a
  // brute force over each relation's cells)
  for (int rep = 0; rep < 300; ++rep) {
    const int n_cell = 2 + g.below(10), n_rel = 1 + g.below(5);
    const Triplets tr = random_relations(g, n_rel, n_cell);
    const std::vector<int>& rel = tr.rel;
    const std::vector<int>& cell = tr.cell;
    const std::vector<double>& coef = tr.coef;
    std::vector<double> up(n_cell), dn(n_cell), w(n_cell);
    std::vector<int> supp(n_cell);
    for (int c = 0; c < n_cell; ++c) {
      up[c] = g.below(4);
      dn[c] = g.below(4);
      w[c] = 1 + g.below(9);
      supp[c] = g.below(2);
    }
    const auto ix = sdcRisk::relation_index(rel, cell, coef, n_rel, n_cell);
    const sdcRisk::SwapCells cs{up.data(), dn.data(), supp.data(), w.data()};
    const int i = g.below(n_cell), j = g.below(n_cell);
    const double dir = g.below(2) ? 1.0 : -1.0, t = 1 + g.below(5);
    double want = 0;
    for (std::size_t a = 0; a < rel.size() && std::isfinite(want); ++a) {
      if (cell[a] != i) continue;
      double held = 0, cheapest = std::numeric_limits<double>::infinity();
      bool any = false;
      for (std::size_t b = 0; b < rel.size(); ++b) {
        if (rel[b] != rel[a] || cell[b] == i || cell[b] == j) continue;
        const double cap = -coef[a] * coef[b] * dir > 0 ? up[cell[b]] : dn[cell[b]];
        if (supp[cell[b]]) {
          held += cap;
        } else if (cap > 0) {
          any = true;
          cheapest = std::min(cheapest, w[cell[b]]);
        }
      }
      if (held >= t) continue;
      want = any ? std::max(want, cheapest) : std::numeric_limits<double>::infinity();
    }
    if (sdcRisk::swap_bound(ix, cs, i, dir, t, j, 0.0) != want) {
      std::printf("swap bound differs from its definition, case %d\n", rep);
      ++failures;
    }
  }
  {
    bool threw_swap = false;
    try {
      sdcRisk::relation_index({0}, {4}, {1.0}, 1, 3);
    } catch (const std::invalid_argument&) {
      threw_swap = true;
    }
    if (!threw_swap) {
      std::printf("a swap index with a cell out of range not rejected\n");
      ++failures;
    }
  }

  // packing of open ends: no two kept share a row, and every end left out
  // shares one with a kept end (the packing is maximal)
  for (int rep = 0; rep < 200; ++rep) {
    const int n_col = 1 + g.below(20), n_row = 1 + g.below(10), m = g.below(40);
    std::vector<int> row, col;
    std::vector<std::vector<char>> has(n_col, std::vector<char>(n_row, 0));
    for (int k = 0; k < m; ++k) {
      const int r = g.below(n_row), c = g.below(n_col);
      if (has[c][r]) continue;
      has[c][r] = 1;
      row.push_back(r);
      col.push_back(c);
    }
    std::vector<int> pos, open;
    for (int c = 0; c < n_col; ++c) {
      if (g.below(2)) pos.push_back(c);
    }
    for (int t = 0; t < static_cast<int>(pos.size()); ++t) {
      if (g.below(3)) open.push_back(t);
    }
    const auto kept = sdcRisk::relation_packing(open, pos, row, col, n_row, n_col, 1 + g.below(50));
    std::vector<char> used(n_row, 0);
    bool ok = true;
    for (const int t : kept) {
      for (int r = 0; r < n_row; ++r) {
        if (!has[pos[t]][r]) continue;
        ok = ok && !used[r];
        used[r] = 1;
      }
    }
    for (const int t : open) {
      bool in = false, blocked = false;
      for (const int u : kept) in = in || u == t;
      for (int r = 0; r < n_row; ++r) blocked = blocked || (has[pos[t]][r] && used[r]);
      ok = ok && (in || blocked);
    }
    if (!ok) {
      std::printf("packing wrong, case %d\n", rep);
      ++failures;
    }
  }
  // sparse witness tables shrunk to tightened bounds, against a scan of
  // every table over every one of its moves
  for (int rep = 0; rep < 300; ++rep) {
    const int n_cell = 1 + g.below(10), n_tab = g.below(7);
    std::vector<std::vector<int>> cells_of(n_tab);
    std::vector<std::vector<double>> y_of(n_tab);
    std::vector<int> id, mcell;
    std::vector<double> y;
    for (int t = 0; t < n_tab; ++t) {
      for (int c = 0; c < n_cell; ++c) {
        if (g.below(3)) continue;
        cells_of[t].push_back(c);
        y_of[t].push_back(g.below(3) ? g.below(21) - 10 : 0);
        id.push_back(t);
        mcell.push_back(c);
        y.push_back(y_of[t].back());
      }
    }
    std::vector<int> cstart(n_cell + 1, 0), by_cell;
    for (const int c : mcell) ++cstart[c + 1];
    for (int c = 0; c < n_cell; ++c) cstart[c + 1] += cstart[c];
    for (int c = 0; c < n_cell; ++c)
      for (int m = 0; m < static_cast<int>(mcell.size()); ++m)
        if (mcell[m] == c) by_cell.push_back(m);
    std::vector<double> lam_pos(n_tab), lam_neg(n_tab);
    std::vector<int> dead(g.below(2) ? n_tab : 0);
    for (int t = 0; t < n_tab; ++t) {
      lam_pos[t] = g.below(5) / 4.0;
      lam_neg[t] = g.below(5) / 4.0;
      if (!dead.empty()) dead[t] = g.below(4) == 0;
    }
    std::vector<int> known, targets;
    std::vector<double> value, lower, upper;
    std::vector<double> val(n_cell), lo_c(n_cell, -1e300), up_c(n_cell, 1e300);
    for (int c = 0; c < n_cell; ++c) {
      val[c] = g.below(11);
      if (g.below(2)) {
        known.push_back(c);
        value.push_back(val[c]);
        lower.push_back(val[c] - g.below(6));
        upper.push_back(val[c] + g.below(6));
        lo_c[c] = lower.back();
        up_c[c] = upper.back();
      }
      if (g.below(2)) targets.push_back(c);
    }
    const auto got = sdcRisk::witness_moves(y, id, cstart, by_cell, lam_pos, lam_neg, dead, known, value,
                                            lower, upper, targets);
    bool ok = got.up.size() == targets.size() && got.dn.size() == targets.size();
    for (std::size_t j = 0; j < targets.size() && ok; ++j) {
      double up = 0, dn = 0;
      for (int t = 0; t < n_tab; ++t) {
        if (!dead.empty() && dead[t]) continue;
        double lp = lam_pos[t], ln = lam_neg[t];
        for (std::size_t k = 0; k < cells_of[t].size(); ++k) {
          const int c = cells_of[t][k];
          const double yy = y_of[t][k];
          if (yy == 0 || lo_c[c] < -1e299) continue;
          const double above = std::max(up_c[c] - val[c], 0.0), below = std::max(val[c] - lo_c[c], 0.0);
          lp = std::min(lp, (yy > 0 ? above : below) / std::fabs(yy));
          ln = std::min(ln, (yy > 0 ? below : above) / std::fabs(yy));
        }
        for (std::size_t k = 0; k < cells_of[t].size(); ++k) {
          if (cells_of[t][k] != targets[j]) continue;
          up = std::max(up, std::max(lp * y_of[t][k], -ln * y_of[t][k]));
          dn = std::min(dn, std::min(lp * y_of[t][k], -ln * y_of[t][k]));
        }
      }
      ok = got.up[j] == up && got.dn[j] == dn;
    }
    if (!ok) {
      std::printf("witness moves differ from the scan, case %d\n", rep);
      ++failures;
    }
  }
  // an index out of range is an error, not a read beyond the vectors
  {
    bool threw = false;
    try {
      sdcRisk::witness_moves(std::vector<double>{1.0}, std::vector<int>{3}, std::vector<int>{0, 1},
                             std::vector<int>{0}, std::vector<double>{1.0}, std::vector<double>{1.0},
                             std::vector<int>(), std::vector<int>(), std::vector<double>(),
                             std::vector<double>(), std::vector<double>(), std::vector<int>{0});
    } catch (const std::invalid_argument&) {
      threw = true;
    }
    if (!threw) {
      std::printf("witness moves read a table out of range\n");
      ++failures;
    }
  }
  // the witness check against a dense sum of every relation and a scan of
  // the bounds: random tables, some witnesses that add up (a relation-free
  // move scaled), some that do not, some beyond a bound
  {
    std::vector<double> resid;
    std::vector<int> touched;
    int kept = 0, refused = 0;
    for (int rep = 0; rep < 400; ++rep) {
      const int n_cell = 2 + g.below(12), n_rel = 1 + g.below(6);
      const Triplets tr = random_relations(g, n_rel, n_cell);
      const std::vector<int>& rel = tr.rel;
      const std::vector<int>& cell = tr.cell;
      const std::vector<double>& coef = tr.coef;
      const auto ix = sdcRisk::relation_index(rel, cell, coef, n_rel, n_cell);
      std::vector<double> value(n_cell), lower(n_cell), upper(n_cell), tol(n_cell, 1e-9);
      for (int c = 0; c < n_cell; ++c) {
        value[c] = g.below(50);
        lower[c] = value[c] - g.below(20);
        upper[c] = value[c] + g.below(20);
      }
      // a witness on a random subset of the cells, in a random order
      std::vector<int> cells;
      std::vector<double> y;
      for (int c = 0; c < n_cell; ++c) {
        if (g.below(3) == 0) continue;
        cells.push_back(c);
        y.push_back(g.below(3) == 0 ? 0.0 : (g.below(21) - 10) / 2.0);
      }
      for (std::size_t a = cells.size(); a > 1; --a) {
        const std::size_t b = static_cast<std::size_t>(g.below(static_cast<int>(a)));
        std::swap(cells[a - 1], cells[b]);
        std::swap(y[a - 1], y[b]);
      }
      const sdcRisk::WitnessCells wc{value.data(), lower.data(), upper.data(), tol.data()};
      const bool got = sdcRisk::witness_adds_up(ix, cells, y.data(), wc, 1e-9, resid, touched);
      std::vector<double> dense(n_rel, 0.0), full(n_cell, 0.0);
      double big = 0;
      for (std::size_t k = 0; k < cells.size(); ++k) {
        full[cells[k]] = y[k];
        big = std::max(big, std::abs(y[k]));
      }
      for (std::size_t t = 0; t < rel.size(); ++t) dense[rel[t]] += coef[t] * full[cell[t]];
      bool want = true;
      for (int r = 0; r < n_rel; ++r) want = want && std::abs(dense[r]) <= 1e-9 * (1 + big);
      for (std::size_t k = 0; k < cells.size(); ++k) {
        const int c = cells[k];
        want = want && value[c] + y[k] >= lower[c] - tol[c] && value[c] + y[k] <= upper[c] + tol[c];
      }
      (got ? kept : refused)++;
      bool clean = true;
      for (const double v : resid) clean = clean && v == 0.0;
      if (got != want || !clean) {
        std::printf("witness check differs from the dense sums, case %d (got %d, want %d, scratch %s)\n", rep, got,
                    want, clean ? "clean" : "dirty");
        ++failures;
      }
    }
    if (kept < 20 || refused < 20) {
      std::printf("witness check: too few cases (%d kept, %d refused)\n", kept, refused);
      ++failures;
    }
    const auto ix1 = sdcRisk::relation_index({0}, {0}, {1.0}, 1, 1);
    const double v1 = 0.0;
    const sdcRisk::WitnessCells wc1{&v1, &v1, &v1, &v1};
    if (!rejects([&] { sdcRisk::witness_adds_up(ix1, {4}, &v1, wc1, 1e-9, resid, touched); })) {
      std::printf("witness check read a cell out of range\n");
      ++failures;
    }
  }

  // the pool's cheapest table against a plain scan: the usable tables
  // (every cell suppressed, not the excluded one), priced cell by cell
  {
    int found = 0, none = 0;
    for (int rep = 0; rep < 400; ++rep) {
      const int n_cell = 3 + g.below(10), n_table = 1 + g.below(6);
      std::vector<int> flat, start{0};
      std::vector<double> ys;
      for (int k = 0; k < n_table; ++k) {
        for (int c = 0; c < n_cell; ++c) {
          if (g.below(2)) continue;
          flat.push_back(c);
          ys.push_back((g.below(21) - 10) / 3.0);
        }
        start.push_back(static_cast<int>(flat.size()));
      }
      std::vector<double> up(n_cell), dn(n_cell), w(n_cell);
      std::vector<int> supp(n_cell), sens(n_cell);
      for (int c = 0; c < n_cell; ++c) {
        up[c] = g.below(8);
        dn[c] = g.below(8);
        w[c] = 1 + g.below(30);
        supp[c] = g.below(5) > 0;
        sens[c] = g.below(4) == 0;
      }
      std::vector<int> cand;
      std::vector<double> scale;
      for (int k = 0; k < n_table; ++k) {
        if (g.below(3) == 0) continue;
        cand.push_back(k);
        scale.push_back(0.25 + g.below(4) / 4.0);
      }
      const double t = 1 + g.below(5);
      const int exclude = g.below(2) ? g.below(n_cell) : -1;
      const sdcRisk::WitnessPool pool{flat.data(), ys.data(), start.data(), n_table, static_cast<int>(flat.size()),
                                      n_cell};
      const sdcRisk::SwapCells cs{up.data(), dn.data(), supp.data(), w.data()};
      const int got = sdcRisk::pool_cheapest(pool, cs, sens.data(), cand, scale.data(), t, exclude);
      int want = -1;
      double best = std::numeric_limits<double>::infinity();
      for (std::size_t h = 0; h < cand.size(); ++h) {
        bool usable = true;
        long double cost = 0;
        for (int q = start[cand[h]]; q < start[cand[h] + 1]; ++q) {
          const int c = flat[q];
          if (!supp[c] || c == exclude) usable = false;
          if (sens[c]) continue;
          const double y = ys[q] * scale[h];
          const double cap = y > 0 ? up[c] : dn[c];
          const double unit = std::max(std::min(cap, t), 1e-9 * t);
          cost += std::abs(y) * (w[c] / unit);
        }
        if (usable && static_cast<double>(cost) < best) {
          best = static_cast<double>(cost);
          want = static_cast<int>(h);
        }
      }
      (got >= 0 ? found : none)++;
      if (got != want) {
        std::printf("pool's cheapest table differs from the scan, case %d (got %d, want %d)\n", rep, got, want);
        ++failures;
      }
    }
    if (found < 20 || none < 20) {
      std::printf("pool's cheapest table: too few cases (%d found, %d none)\n", found, none);
      ++failures;
    }
    const std::vector<int> flat{7}, start{0, 1}, supp(2, 1), sens(2, 0);
    const std::vector<double> ys{1.0}, up(2, 1.0), w(2, 1.0), scale{1.0};
    const sdcRisk::WitnessPool pool{flat.data(), ys.data(), start.data(), 1, 1, 2};
    const sdcRisk::SwapCells cs{up.data(), up.data(), supp.data(), w.data()};
    if (!rejects([&] { sdcRisk::pool_cheapest(pool, cs, sens.data(), {0}, scale.data(), 1.0, -1); })) {
      std::printf("pool's cheapest table read a cell out of range\n");
      ++failures;
    }
  }

  // contributor_index(): against a plain reference (codes in the order of
  // their first row, rows by code in row order), on random ids
  for (int rep = 0; rep < 2000; ++rep) {
    const int n = g.below(40), max_id = 1 + g.below(12);
    std::vector<int> id(n);
    for (int r = 0; r < n; ++r) id[r] = 1 + g.below(max_id);
    const auto ix = sdcRisk::contributor_index(id.data(), n, max_id);
    std::vector<int> code;
    for (int r = 0; r < n; ++r) {
      bool seen = false;
      for (int c : code) seen = seen || c == id[r];
      if (!seen) code.push_back(id[r]);
    }
    std::vector<int> who(n), ord, start{0};
    for (std::size_t k = 0; k < code.size(); ++k) {
      for (int r = 0; r < n; ++r) {
        if (id[r] == code[k]) {
          who[r] = static_cast<int>(k) + 1;
          ord.push_back(r + 1);
        }
      }
      start.push_back(static_cast<int>(ord.size()));
    }
    if (ix.code != code || ix.who != who || ix.ord != ord || ix.start != start) {
      std::printf("contributor index differs from a plain scan, case %d\n", rep);
      ++failures;
    }
  }
  {
    const std::vector<int> bad{1, 3};
    if (!rejects([&] { sdcRisk::contributor_index(bad.data(), bad.size(), 2); })) {
      std::printf("contributor index took an id out of range\n");
      ++failures;
    }
  }

  // twin columns: random programs whose rows hold 2 nonzero entries (a
  // forest, parallel rows, rows closing cycles), more, or 2 among zeros,
  // with right-hand sides from a point x0; and programs of forest rows
  // alone, whose other solutions x0 + d (d spread from each root over the
  // forest by a breadth-first search, independent of the union-find) the
  // maps must give too
  for (int rep = 0; rep < 400; ++rep) {
    const bool forest_only = rep % 2 == 1;
    const int nc = 1 + g.below(25);
    std::vector<double> x0(nc);
    for (auto& x : x0) x = g.below(2001) - 1000;
    std::vector<int> row, col;
    std::vector<double> v, rhs;
    // (the rows of the 2-entry graph, for the reference partition)
    std::vector<int> e1, e2;
    std::vector<double> w1, w2;
    const auto coef = [&] { return static_cast<double>(g.below(2) ? 1 + g.below(3) : -1 - g.below(3)); };
    const auto add_row = [&](const std::vector<int>& cs, const std::vector<double>& vs) {
      const int r = static_cast<int>(rhs.size());
      double sum = 0.0;
      for (std::size_t k = 0; k < cs.size(); ++k) {
        row.push_back(r);
        col.push_back(cs[k]);
        v.push_back(vs[k]);
        sum += vs[k] * x0[cs[k]];
      }
      rhs.push_back(sum);
    };
    // a forest: each column after the first tied to an earlier one, or not
    for (int c = 1; c < nc; ++c) {
      if (g.below(3) == 0) continue;
      const int p = g.below(c);
      const double a = coef(), b = coef();
      add_row({p, c}, {a, b});
      e1.push_back(p);
      e2.push_back(c);
      w1.push_back(a);
      w2.push_back(b);
    }
    if (!forest_only) {
      const int extra = g.below(8);
      for (int k = 0; k < extra && nc > 1; ++k) {
        const int kind = g.below(3);
        const int c1 = g.below(nc);
        int c2 = g.below(nc);
        if (c2 == c1) c2 = (c1 + 1) % nc;
        if (kind == 0) {
          // two entries: parallel to a forest row or closing a cycle
          const double a = coef(), b = coef();
          add_row({c1, c2}, {a, b});
          e1.push_back(c1);
          e2.push_back(c2);
          w1.push_back(a);
          w2.push_back(b);
        } else if (kind == 1 && nc > 2) {
          // three entries: no twins
          int c3 = g.below(nc);
          while (c3 == c1 || c3 == c2) c3 = (c3 + 1) % nc;
          add_row({c1, c2, c3}, {coef(), coef(), coef()});
        } else {
          // two nonzero entries among a zero one: twins
          int c3 = g.below(nc);
          while (nc > 2 && (c3 == c1 || c3 == c2)) c3 = (c3 + 1) % nc;
          if (nc <= 2) continue;
          const double a = coef(), b = coef();
          add_row({c1, c3, c2}, {a, 0.0, b});
          e1.push_back(c1);
          e2.push_back(c2);
          w1.push_back(a);
          w2.push_back(b);
        }
      }
    }
    const int nr = static_cast<int>(rhs.size());
    const sdcRisk::TwinColumns t = sdcRisk::twin_columns(row, col, v, rhs, nr, nc);
    bool ok = static_cast<int>(t.root.size()) == nc;
    // the classes are the components of the 2-entry rows (bfs() over them
    // as relations), each of its size, its root mapped to itself
    const std::vector<int> ref = bfs([&] {
      std::vector<int> r;
      for (std::size_t k = 0; k < e1.size(); ++k) {
        r.push_back(static_cast<int>(k));
        r.push_back(static_cast<int>(k));
      }
      return r;
    }(), [&] {
      std::vector<int> n;
      for (std::size_t k = 0; k < e1.size(); ++k) {
        n.push_back(e1[k]);
        n.push_back(e2[k]);
      }
      return n;
    }(), static_cast<int>(e1.size()), nc);
    ok = ok && same_partition(t.root, ref);
    for (int c = 0; ok && c < nc; ++c) {
      int size = 0;
      for (int q = 0; q < nc; ++q) size += t.root[q] == t.root[c];
      ok = t.size[c] == size && t.root[t.root[c]] == t.root[c];
      if (t.root[c] == c) ok = ok && t.a[c] == 0.0 && t.b[c] == 1.0;
      // x0 from its root's value
      ok = ok && testutil_close(x0[c], t.a[c] + t.b[c] * x0[t.root[c]]);
    }
    if (ok && forest_only) {
      // another solution: each root moved at random, spread over the forest
      std::vector<double> d(nc, 0.0);
      std::vector<char> done(nc, 0);
      for (int c = 0; c < nc; ++c) {
        if (t.root[c] != c) continue;
        d[c] = g.below(201) - 100;
        done[c] = 1;
        std::vector<int> stack{c};
        while (!stack.empty()) {
          const int u = stack.back();
          stack.pop_back();
          for (std::size_t k = 0; k < e1.size(); ++k) {
            int other = -1;
            double wu = 0.0, wo = 0.0;
            if (e1[k] == u) { other = e2[k]; wu = w1[k]; wo = w2[k]; }
            else if (e2[k] == u) { other = e1[k]; wu = w2[k]; wo = w1[k]; }
            if (other < 0 || done[other]) continue;
            d[other] = -wu * d[u] / wo;
            done[other] = 1;
            stack.push_back(other);
          }
        }
      }
      for (int c = 0; ok && c < nc; ++c) {
        ok = testutil_close(x0[c] + d[c], t.a[c] + t.b[c] * (x0[t.root[c]] + d[t.root[c]]));
      }
    }
    if (!ok) {
      std::printf("twin columns wrong, case %d\n", rep);
      ++failures;
    }
  }
  if (!rejects([] { sdcRisk::twin_columns({0}, {3}, {1.0}, {0.0}, 1, 2); }) ||
      !rejects([] { sdcRisk::twin_columns({0}, {0}, {1.0}, {}, 1, 1); })) {
    std::printf("twin columns took a triplet out of range or a short right-hand side\n");
    ++failures;
  }

  if (failures) return 1;
  std::printf("test_suppress: all passed\n");
  return 0;
}
