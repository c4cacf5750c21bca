// Standalone test of the witness tables' combinations, without R:
//   g++ -std=c++17 -O2 -I../../inst/include test_table_hull.cpp -o build/test_table_hull && build/test_table_hull
// Compares hull_maximum() with the best vertex of its polytope, found by
// brute force (every choice of as many active constraints as weights,
// solved by Gaussian elimination and kept when feasible), on random
// programs of up to 6 weights and 3 ranges, many with equality rows and
// degenerate vertices; checks that combination_extremes() returns
// extremes that a combination keeping the checked rows reaches, no less
// than the best single table, and the brute-force optimum where a row is
// open; and that malformed input throws. Larger programs (up to 64
// weights and 25 ranges, most of them equalities, as a respondent's) and
// a real program on which an earlier pivoting rule cycled are compared
// with a tableau simplex under Bland's rule at every step, and so are
// programs with ranges open on one side, as a respondent's interval
// knowledge makes them (where a bound flip once overshot its bound).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <vector>

#include "sdcRisk/table_hull.hpp"
#include "testutil.hpp"

namespace {

using testutil::Lcg;

void check(bool ok, const char* what, int rep) {
  if (!ok) testutil::check(false, std::string(what) + " (case " + std::to_string(rep) + ")");
}

// Solves the m x m system M z = b (row-major) by Gaussian elimination
// with partial pivoting; false when singular.
bool solve(std::vector<double> M, std::vector<double> b, int m, std::vector<double>& z) {
  for (int c = 0; c < m; ++c) {
    int p = c;
    for (int r = c + 1; r < m; ++r) {
      if (std::fabs(M[r * m + c]) > std::fabs(M[p * m + c])) p = r;
    }
    if (std::fabs(M[p * m + c]) < 1e-10) return false;
    if (p != c) {
      for (int k = 0; k < m; ++k) std::swap(M[p * m + k], M[c * m + k]);
      std::swap(b[p], b[c]);
    }
    for (int r = 0; r < m; ++r) {
      if (r == c) continue;
      const double f = M[r * m + c] / M[c * m + c];
      if (f == 0.0) continue;
      for (int k = c; k < m; ++k) M[r * m + k] -= f * M[c * m + k];
      b[r] -= f * b[c];
    }
  }
  z.assign(m, 0.0);
  for (int c = 0; c < m; ++c) z[c] = b[c] / M[c * m + c];
  return true;
}

// The constraints of the program as rows a'l <= b (finite ones only).
struct Rows {
  std::vector<std::vector<double>> a;
  std::vector<double> b;
};

Rows constraints(const std::vector<double>& D, int r, int m, const std::vector<double>& L,
                 const std::vector<double>& U) {
  Rows out;
  for (int j = 0; j < m; ++j) {  // -l_j <= 0
    std::vector<double> a(m, 0.0);
    a[j] = -1.0;
    out.a.push_back(a);
    out.b.push_back(0.0);
  }
  out.a.push_back(std::vector<double>(m, 1.0));  // sum(l) <= 1
  out.b.push_back(1.0);
  for (int i = 0; i < r; ++i) {
    std::vector<double> a(m);
    for (int j = 0; j < m; ++j) a[j] = D[i + r * j];
    if (std::isfinite(U[i])) {
      out.a.push_back(a);
      out.b.push_back(U[i]);
    }
    if (std::isfinite(L[i])) {
      for (double& x : a) x = -x;
      out.a.push_back(a);
      out.b.push_back(-L[i]);
    }
  }
  return out;
}

bool feasible(const Rows& c, const std::vector<double>& l, double tol) {
  for (std::size_t k = 0; k < c.a.size(); ++k) {
    double s = 0.0;
    for (std::size_t j = 0; j < l.size(); ++j) s += c.a[k][j] * l[j];
    if (s > c.b[k] + tol) return false;
  }
  return true;
}

// The optimum over the vertices (the polytope is bounded and holds l = 0).
double brute_max(const std::vector<double>& D, int r, int m, const std::vector<double>& g,
                 const std::vector<double>& L, const std::vector<double>& U) {
  const Rows c = constraints(D, r, m, L, U);
  const int n = static_cast<int>(c.a.size());
  double best = 0.0;  // l = 0
  std::vector<int> pick(m);
  // every subset of m constraints, by a mask over n (n <= 6 + 1 + 6)
  for (std::uint32_t mask = 0; mask < (1u << n); ++mask) {
    if (__builtin_popcount(mask) != m) continue;
    std::vector<double> M;
    std::vector<double> b;
    for (int k = 0; k < n; ++k) {
      if (!(mask >> k & 1u)) continue;
      M.insert(M.end(), c.a[k].begin(), c.a[k].end());
      b.push_back(c.b[k]);
    }
    std::vector<double> z;
    if (!solve(M, b, m, z) || !feasible(c, z, 1e-9)) continue;
    double v = 0.0;
    for (int j = 0; j < m; ++j) v += g[j] * z[j];
    best = std::max(best, v);
  }
  return best;
}

// The reference for the larger programs: a dense tableau simplex on
// max g'l s.t. A l <= b, l >= 0 (b >= 0, so the slacks' basis is
// feasible), with Bland's rule at every step (smallest index enters,
// smallest basic index leaves among ties): slow, but it never cycles.
double bland_max(const std::vector<double>& D, int r, int m, const std::vector<double>& g,
                 const std::vector<double>& L, const std::vector<double>& U) {
  const Rows c = constraints(D, r, m, L, U);
  // the constraints l >= 0 are the variables' own bounds here
  std::vector<std::vector<double>> a;
  std::vector<double> b;
  for (std::size_t k = static_cast<std::size_t>(m); k < c.a.size(); ++k) {
    // (rows of unit size, so that the tolerances are relative)
    double s = 0.0;
    for (const double x : c.a[k]) s = std::max(s, std::fabs(x));
    if (s == 0.0) continue;  // 0 <= b: no constraint
    a.push_back(c.a[k]);
    for (double& x : a.back()) x /= s;
    b.push_back(c.b[k] / s);
  }
  const int rows = static_cast<int>(a.size()), n = m + rows;
  std::vector<std::vector<double>> t(rows, std::vector<double>(n, 0.0));
  std::vector<int> basis(rows);
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < m; ++j) t[i][j] = a[i][j];
    t[i][m + i] = 1.0;
    basis[i] = m + i;
  }
  std::vector<double> cost(n, 0.0);  // reduced costs, maximizing
  double gs = 0.0;
  for (const double x : g) gs = std::max(gs, std::fabs(x));
  if (gs == 0.0) return 0.0;
  for (int j = 0; j < m; ++j) cost[j] = g[j] / gs;
  double value = 0.0;
  const double eps = 1e-9;
  for (;;) {
    int q = -1;
    for (int j = 0; j < n && q < 0; ++j) {
      if (cost[j] > eps) q = j;
    }
    if (q < 0) return value * gs;
    int leave = -1;
    double best = 0.0;
    for (int i = 0; i < rows; ++i) {
      if (t[i][q] <= eps) continue;
      const double ratio = b[i] / t[i][q];
      if (leave < 0 || ratio < best - eps || (ratio <= best + eps && basis[i] < basis[leave])) {
        leave = i;
        best = ratio;
      }
    }
    if (leave < 0) return std::numeric_limits<double>::infinity();  // unbounded: cannot happen
    const double piv = t[leave][q];
    for (double& x : t[leave]) x /= piv;
    b[leave] /= piv;
    for (int i = 0; i < rows; ++i) {
      if (i == leave || t[i][q] == 0.0) continue;
      const double f = t[i][q];
      for (int j = 0; j < n; ++j) t[i][j] -= f * t[leave][j];
      b[i] = std::max(b[i] - f * b[leave], 0.0);
    }
    const double f = cost[q];
    for (int j = 0; j < n; ++j) cost[j] -= f * t[leave][j];
    value += f * b[leave];
    basis[leave] = q;
  }
}

double small_value(Lcg& rng) {
  // integers, many zeros: degenerate vertices and ties
  const int k = rng.below(9);
  return k < 3 ? 0.0 : static_cast<double>(rng.below(11) - 5);
}

// integers of up to five digits, a few zeros: deviations of the size of
// real tables', with fewer ties
double wide_value(Lcg& rng) {
  return rng.below(10) == 0 ? 0.0 : static_cast<double>(rng.below(20001)) - 10000.0;
}

}  // namespace

int main() {
  Lcg rng(2026);
  const double inf = std::numeric_limits<double>::infinity();
  // hull_maximum() against the best vertex
  for (int rep = 0; rep < 3000; ++rep) {
    const int m = 1 + rng.below(6), r = rng.below(4);
    std::vector<double> D(static_cast<std::size_t>(r * m)), g(m), L(r), U(r);
    for (double& x : D) x = small_value(rng);
    for (double& x : g) x = small_value(rng);
    for (int i = 0; i < r; ++i) {
      const int kind = rng.below(5);
      L[i] = kind == 0 ? 0.0 : kind == 1 ? -inf : -static_cast<double>(rng.below(4));
      U[i] = kind == 0 ? 0.0 : kind == 2 ? inf : static_cast<double>(rng.below(4));
    }
    const sdcRisk::HullSolution h = sdcRisk::hull_maximum(D, r, m, g, L, U);
    check(h.ok, "the simplex stopped without an optimum", rep);
    if (!h.ok) continue;
    const double want = brute_max(D, r, m, g, L, U);
    check(std::fabs(h.value - want) <= 1e-7 * (1 + std::fabs(want)), "optimum differs from the best vertex", rep);
    if (std::fabs(h.value - want) > 1e-7 * (1 + std::fabs(want))) {
      std::printf("  m %d r %d: simplex %g, vertices %g\n", m, r, h.value, want);
    }
    // the weights keep every constraint, and give the value reported
    const Rows c = constraints(D, r, m, L, U);
    check(feasible(c, h.weight, 1e-7), "the weights break a constraint", rep);
    double v = 0.0;
    for (int j = 0; j < m; ++j) v += g[j] * h.weight[j];
    check(std::fabs(v - h.value) <= 1e-9 * (1 + std::fabs(v)), "value differs from the weights'", rep);
  }
  // larger programs like a respondent's (combined_witnesses()): up to 64
  // tables and 25 rows, most of them equalities (a cell known exactly),
  // tables repeated and rows tied to each other, so that most pivots
  // are degenerate; against a simplex with Bland's rule at every step
  for (int rep = 0; rep < 300; ++rep) {
    const int m = 20 + rng.below(45), r = 5 + rng.below(21);
    std::vector<double> D(static_cast<std::size_t>(r * m)), g(m), L(r), U(r);
    for (int j = 0; j < m; ++j) {
      const bool copy = j > 0 && rng.below(4) == 0;
      const int from = copy ? rng.below(j) : j;
      for (int i = 0; i < r; ++i) D[i + r * j] = copy ? D[i + r * from] : wide_value(rng);
      g[j] = copy && rng.below(2) ? g[from] : wide_value(rng);
    }
    for (int i = 1; i < r; ++i) {
      // a third of the rows copies, sums or mirrors of earlier ones (the
      // known cells of a table are tied by its relations)
      const int kind = rng.below(9);
      if (kind > 2) continue;
      const int a = rng.below(i), b = rng.below(i);
      for (int j = 0; j < m; ++j) {
        D[i + r * j] = kind == 2 ? D[a + r * j] : kind == 1 ? D[a + r * j] + D[b + r * j] : -D[a + r * j];
      }
    }
    const bool all_known = rep % 2 == 0;  // every row an equality
    for (int i = 0; i < r; ++i) {
      const int kind = all_known ? 0 : rng.below(8);
      L[i] = kind < 6 ? 0.0 : kind == 6 ? -inf : -static_cast<double>(1 + rng.below(4));
      U[i] = kind < 6 ? 0.0 : kind == 7 ? inf : static_cast<double>(1 + rng.below(4));
    }
    const sdcRisk::HullSolution h = sdcRisk::hull_maximum(D, r, m, g, L, U);
    check(h.ok, "the simplex stopped without an optimum (larger program)", rep);
    if (!h.ok) continue;
    const double want = bland_max(D, r, m, g, L, U);
    const bool same = std::fabs(h.value - want) <= 1e-7 * (1 + std::fabs(want));
    check(same, "optimum differs from Bland's (larger program)", rep);
    if (!same) std::printf("  m %d r %d: simplex %g, Bland %g\n", m, r, h.value, want);
    check(feasible(constraints(D, r, m, L, U), h.weight, 1e-7), "the weights break a constraint (larger)", rep);
  }

  // programs with ranges open on one side or bounded by values of the
  // tables' own size (a respondent's interval knowledge), zero entries and
  // mirrored rows, several objectives over the same rows (as
  // combination_extremes() solves them): against Bland's, and the weights
  // keep every row. (An entering variable that one step had put back to a
  // bound by x += theta, a rounding off it, once overshot that bound by
  // its whole range: weights 2% of a row's size beyond it.)
  for (int rep = 0; rep < 200; ++rep) {
    const int m = 3 + rng.below(40), r = 1 + rng.below(15);
    std::vector<double> D(static_cast<std::size_t>(r * m)), L(r), U(r);
    for (double& x : D) x = rng.below(3) == 0 ? 0.0 : wide_value(rng);
    for (int i = 1; i < r; ++i) {
      if (rng.below(4) == 0) {
        const int a = rng.below(i);
        for (int j = 0; j < m; ++j) D[i + r * j] = -D[a + r * j];
      }
    }
    for (int i = 0; i < r; ++i) {
      const int kind = rng.below(6);
      L[i] = kind < 3 ? 0.0 : kind == 3 ? -inf : -static_cast<double>(1 + rng.below(400));
      U[i] = kind < 3 ? 0.0 : kind == 4 ? inf : static_cast<double>(1 + rng.below(400));
    }
    const Rows c = constraints(D, r, m, L, U);
    for (int k = 0; k < 12; ++k) {
      std::vector<double> g(m);
      for (double& x : g) x = wide_value(rng);
      const sdcRisk::HullSolution h = sdcRisk::hull_maximum(D, r, m, g, L, U);
      check(h.ok, "the simplex stopped without an optimum (open ranges)", rep);
      const double want = bland_max(D, r, m, g, L, U);
      const bool same = h.ok && std::fabs(h.value - want) <= 1e-7 * (1 + std::fabs(want));
      check(same, "optimum differs from Bland's (open ranges)", rep);
      if (!same) std::printf("  m %d r %d: simplex %g, Bland %g\n", m, r, h.value, want);
      check(feasible(c, h.weight, 1e-7), "the weights break a constraint (open ranges)", rep);
    }
  }

  // one HullProgram over many objectives (combination_extremes() solves
  // one per target end, each from the basis the last one ended at): every
  // optimum against Bland's, with more than enough pivots in all for the
  // basis' inverse to be computed again from its columns (after 100); an
  // early stop (stop_at) returns weights that keep every row and reach
  // it, and the next call with the same objective goes on to the optimum.
  // Rows mostly equalities and tied (a respondent's known cells), as above.
  int refactored = 0;
  for (int rep = 0; rep < 60; ++rep) {
    const int m = 10 + rng.below(55), r = 1 + rng.below(25);
    std::vector<double> D(static_cast<std::size_t>(r * m)), L(r), U(r);
    for (double& x : D) x = rng.below(3) == 0 ? 0.0 : wide_value(rng);
    for (int i = 1; i < r; ++i) {
      const int kind = rng.below(6);
      if (kind > 1) continue;
      const int a = rng.below(i);
      for (int j = 0; j < m; ++j) D[i + r * j] = kind ? D[a + r * j] : -D[a + r * j];
    }
    for (int i = 0; i < r; ++i) {
      const int kind = rng.below(6);
      L[i] = kind < 3 ? 0.0 : kind == 3 ? -inf : -static_cast<double>(1 + rng.below(400));
      U[i] = kind < 3 ? 0.0 : kind == 4 ? inf : static_cast<double>(1 + rng.below(400));
    }
    const Rows c = constraints(D, r, m, L, U);
    sdcRisk::HullProgram prog(D, r, m, L, U);
    for (int k = 0; k < 40; ++k) {
      std::vector<double> g(m);
      for (double& x : g) x = wide_value(rng);
      const double want = bland_max(D, r, m, g, L, U);
      if (k % 3 == 1 && want > 0.0) {
        // stop halfway to the optimum, then go on
        const double half = want / 2;
        const sdcRisk::HullSolution e = prog.maximize(g, half);
        check(e.ok, "the early stop has no weights", rep);
        check(e.value >= half - 1e-9 * (1 + want), "the early stop is short of its value", rep);
        check(feasible(c, e.weight, 1e-7), "the early stop's weights break a constraint", rep);
      }
      const sdcRisk::HullSolution h = prog.maximize(g);
      const bool same = h.ok && h.optimal && std::fabs(h.value - want) <= 1e-7 * (1 + std::fabs(want));
      check(same, "a warm optimum differs from Bland's", rep);
      if (!same) std::printf("  m %d r %d k %d: warm %g, Bland %g\n", m, r, k, h.value, want);
      check(feasible(c, h.weight, 1e-7), "the warm weights break a constraint", rep);
      // a stop at or below the value it starts from: no step
      const sdcRisk::HullSolution z = prog.maximize(g, h.value - 1);
      check(z.ok && z.iterations == 0 && std::fabs(z.value - h.value) <= 1e-9 * (1 + std::fabs(want)),
            "a stop already reached took steps", rep);
    }
    refactored += prog.refactored();
  }
  check(refactored > 10, "few bases were inverted again", refactored);

  // a program on which Bland's rule, with the leaving row chosen among
  // ties by the largest pivot, cycled until the iteration limit: a
  // respondent's combination program of the bench table R8 (sex x age x
  // race x PUMA of 12 PUMAs), its deviations in thousands, reduced to the
  // rows and tables that still cycled; every row a cell the respondent
  // knows exactly, so every step from l = 0 is degenerate. Also its
  // tables and rows in random orders.
  {
    const int r = 10, m = 23;
    const std::vector<double> D0{
        -22,  259,  210,  -127, -66,  -5,   -25, 108,  62,   -129, 152,  154,  210,  12,   -92,  85,
        -25,  -196, -290, -233, -22,  -137, 210, -66,  -187, 180,  -25,  -30,  -219, -217, -35,  170,
        210,  -79,  -239, 50,   -25,  146,  -42, -42,  -22,  -159, -79,  -122, -105, 262,  -25,  -64,
        -238, 288,  12,   199,  104,  16,   423, -233, -25,  -482, 19,   -129, 234,  -98,  -102, 4,
        -365, 65,   6,    -90,  -290, -129, 249, -43,  -102, -124, -556, 259,  -25,  13,   -290, -129,
        249,  -43,  -102, 69,   -534, 176,  -25, -49,  -268, -42,  181,  -43,  -102, -22,  -272, 114,
        66,   118,  29,   -163, 28,   -598, -102, -79, -527, 195,  191,  -153, -131, -259, -34,  122,
        210,  -83,  293,  -305, -25,  -172, 89,  52,   80,   -285, 42,   -24,  -307, -66,  -25,  -194,
        89,   -233, 44,   -120, 34,   126,  -230, -37, 121,  -283, -290, 45,   44,   -120, -102, 126,
        -221, 392,  70,   24,   -290, 209,  40,  -54,  -102, 117,  177,  -305, 115,  -302, 89,   263,
        -22,  83,   -53,  126,  -32,  54,   77,  193,  89,   146,  -22,  -54,  9,    126,  -162, 54,
        77,   186,  89,   -114, 44,   -398, -102, 33,  -472, 197,  -5,   -312, -290, -259, 0,    0,
        -102, -143, 0,    0,    0,    0,    -8,  0,    0,    0,    -102, 0,    0,    0,    0,    0,
        45,   0,    0,    0,    -102, 0,    0,   0,    0,    0,    -138, 0,    0,    0,    147,  0,
        0,    0,    0,    0,    -8,   0};
    const std::vector<double> g0{9, 9, 9, 9, 9, 9, -22, 9, 9, 9, -206, 9, 9, 9, 9, 9, 9, -1, 9, 9, 9, 9, 9};
    const std::vector<double> Z(r, 0.0);
    for (int rep = 0; rep < 50; ++rep) {
      std::vector<int> col(m), row(r);
      for (int j = 0; j < m; ++j) col[j] = j;
      for (int i = 0; i < r; ++i) row[i] = i;
      if (rep > 0) {  // Fisher-Yates, from the test's generator
        for (int j = m - 1; j > 0; --j) std::swap(col[j], col[rng.below(j + 1)]);
        for (int i = r - 1; i > 0; --i) std::swap(row[i], row[rng.below(i + 1)]);
      }
      std::vector<double> D(static_cast<std::size_t>(r * m)), g(m);
      for (int j = 0; j < m; ++j) {
        g[j] = g0[col[j]];
        for (int i = 0; i < r; ++i) D[i + r * j] = D0[row[i] + r * col[j]];
      }
      const sdcRisk::HullSolution h = sdcRisk::hull_maximum(D, r, m, g, Z, Z);
      check(h.ok, "the simplex stopped without an optimum (the program that cycled)", rep);
      const double want = bland_max(D, r, m, g, Z, Z);
      check(want > 0.0, "the program that cycled has a positive optimum", rep);
      check(h.ok && std::fabs(h.value - want) <= 1e-9 * (1 + want), "optimum differs (the program that cycled)", rep);
      check(feasible(constraints(D, r, m, Z, Z), h.weight, 1e-9), "the weights break a constraint (cycled)", rep);
    }
  }

  // scale: rows and objective far from unit size give the same weights' value
  for (int rep = 0; rep < 300; ++rep) {
    const int m = 1 + rng.below(6), r = 1 + rng.below(3);
    std::vector<double> D(static_cast<std::size_t>(r * m)), g(m), L(r), U(r);
    for (double& x : D) x = small_value(rng);
    for (double& x : g) x = small_value(rng);
    for (int i = 0; i < r; ++i) {
      L[i] = -static_cast<double>(rng.below(3));
      U[i] = static_cast<double>(rng.below(3));
    }
    const sdcRisk::HullSolution a = sdcRisk::hull_maximum(D, r, m, g, L, U);
    std::vector<double> D2 = D, g2 = g, L2 = L, U2 = U;
    for (int i = 0; i < r; ++i) {
      const double s = i % 2 ? 1e7 : 1e-5;
      for (int j = 0; j < m; ++j) D2[i + r * j] *= s;
      L2[i] *= s;
      U2[i] *= s;
    }
    for (double& x : g2) x *= 3e6;
    const sdcRisk::HullSolution b = sdcRisk::hull_maximum(D2, r, m, g2, L2, U2);
    check(a.ok && b.ok && std::fabs(b.value / 3e6 - a.value) <= 1e-7 * (1 + std::fabs(a.value)),
          "scaled program differs", rep);
  }

  // combination_extremes(): tables of a polytope (here any vectors: the
  // function only combines them), checked rows, needs
  for (int rep = 0; rep < 500; ++rep) {
    const int n_row = 2 + rng.below(6), n_tab = rng.below(6);
    std::vector<double> center(n_row);
    for (double& x : center) x = static_cast<double>(rng.below(5));
    std::vector<std::vector<double>> tabs(n_tab, std::vector<double>(n_row));
    std::vector<const double*> ptr;
    for (auto& t : tabs) {
      for (int k = 0; k < n_row; ++k) t[k] = center[k] + small_value(rng);
      ptr.push_back(t.data());
    }
    std::vector<int> rows, check_rows;
    std::vector<double> lo, hi, tol;
    for (int k = 0; k < n_row; ++k) {
      if (rng.below(3) == 0 && check_rows.size() < 3) {
        check_rows.push_back(k);
        lo.push_back(center[k] - rng.below(2));
        hi.push_back(center[k] + rng.below(2));
        tol.push_back(0.0);
      } else {
        rows.push_back(k);
      }
    }
    const std::size_t nr = rows.size();
    std::vector<double> seen_hi(nr, -inf), seen_lo(nr, inf), need_hi(nr), need_lo(nr);
    for (std::size_t k = 0; k < nr; ++k) {
      seen_hi[k] = seen_lo[k] = center[rows[k]];
      // some rows need nothing, some a value (a program may stop there),
      // the others their best
      const int kh = rng.below(4), kl = rng.below(4);
      need_hi[k] = kh == 0 ? -inf : kh == 1 ? center[rows[k]] + 1 + rng.below(4) : inf;
      need_lo[k] = kl == 0 ? inf : kl == 1 ? center[rows[k]] - 1 - rng.below(4) : -inf;
    }
    const sdcRisk::CombinationExtremes ex = sdcRisk::combination_extremes(
        ptr, n_row, rows, check_rows, lo, hi, tol, center, need_hi, need_lo, seen_hi, seen_lo, false,
        rep % 2 == 0);
    // the best combination of each open row, by brute force over the
    // tables' deviations
    const int r = static_cast<int>(check_rows.size());
    std::vector<double> D(static_cast<std::size_t>(r * n_tab)), L(r), U(r);
    for (int i = 0; i < r; ++i) {
      L[i] = lo[i] - center[check_rows[i]];
      U[i] = hi[i] - center[check_rows[i]];
      for (int j = 0; j < n_tab; ++j) D[i + r * j] = tabs[j][check_rows[i]] - center[check_rows[i]];
    }
    for (std::size_t k = 0; k < nr; ++k) {
      for (const int up : {1, 0}) {
        std::vector<double> g(n_tab);
        for (int j = 0; j < n_tab; ++j) g[j] = (up ? 1 : -1) * (tabs[j][rows[k]] - center[rows[k]]);
        const double best = n_tab ? brute_max(D, r, n_tab, g, L, U) : 0.0;
        const double got = up ? ex.max[k] - center[rows[k]] : center[rows[k]] - ex.min[k];
        // never beyond the best combination; at it where the row was open
        check(got <= best + 1e-7, "an extreme beyond every combination", rep);
        const bool open = up ? need_hi[k] == inf : need_lo[k] == -inf;
        if (open) check(got >= best - 1e-7, "an open row short of its best combination", rep);
        if (open && got < best - 1e-7) std::printf("  got %g best %g r %d n_tab %d\n", got, best, r, n_tab);
        // a need within reach is reached
        const double need = up ? need_hi[k] - center[rows[k]] : center[rows[k]] - need_lo[k];
        if (std::isfinite(need) && best >= need + 1e-7) check(got >= need - 1e-9, "a need within reach not reached", rep);
      }
    }
    bool all_met = true;
    for (std::size_t k = 0; k < nr; ++k) all_met = all_met && ex.max[k] >= need_hi[k] && ex.min[k] <= need_lo[k];
    check(ex.settled == all_met, "settled is whether every row meets its needs", rep);
  }

  // all_or_none: stops at the first row short of its need
  {
    const std::vector<double> center{0, 0, 0};
    const std::vector<double> t1{1, 1, 0}, t2{-1, 1, 0};
    const std::vector<const double*> ptr{t1.data(), t2.data()};
    // row 0 known exactly: t1 and t2 half and half keep it and move row 1 by 1
    const sdcRisk::CombinationExtremes ex = sdcRisk::combination_extremes(
        ptr, 3, {1, 2}, {0}, {0.0}, {0.0}, {0.0}, center, {1.0, 1.0}, {-inf, -inf}, {0.0, 0.0}, {0.0, 0.0}, true);
    check(std::fabs(ex.max[0] - 1.0) < 1e-12, "the pair that cancels on the known row", 0);
    check(!ex.settled, "row 2 cannot move: not settled", 0);
    check(ex.programs == 2, "stopped at row 2", static_cast<int>(ex.programs));
    const sdcRisk::CombinationExtremes ok = sdcRisk::combination_extremes(
        ptr, 3, {1}, {0}, {0.0}, {0.0}, {0.0}, center, {1.0}, {inf}, {0.0}, {0.0}, true);
    check(ok.settled && ok.programs == 1, "one row settled by one program", 0);
  }

  // malformed input throws
  using testutil::throws;
  check(throws([] { sdcRisk::hull_maximum({1.0}, 1, 2, {1.0, 1.0}, {0.0}, {0.0}); }), "sizes", 0);
  check(throws([] { sdcRisk::hull_maximum({1.0}, 1, 1, {1.0}, {1.0}, {2.0}); }), "bounds without 0", 0);
  check(throws([] { sdcRisk::hull_maximum({std::nan("")}, 1, 1, {1.0}, {0.0}, {0.0}); }), "NaN entry", 0);
  {
    const std::vector<double> t{1, 2};
    const std::vector<const double*> ptr{t.data()};
    check(throws([&] {
            sdcRisk::combination_extremes(ptr, 2, {2}, {0}, {0.0}, {0.0}, {0.0}, {0.0, 0.0}, {1.0}, {0.0},
                                          {0.0}, {0.0});
          }),
          "row out of range", 0);
    check(throws([&] {
            sdcRisk::combination_extremes(ptr, 2, {1}, {0}, {1.0}, {2.0}, {0.0}, {0.0, 0.0}, {1.0}, {0.0},
                                          {0.0}, {0.0});
          }),
          "center outside the checked bounds", 0);
  }

  return testutil::report("test_table_hull");
}
