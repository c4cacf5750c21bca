// Standalone test of the records' pass of estimation, without R:
//   g++ -std=c++17 -O2 -I../../inst/include test_estimate.cpp -o build/test_estimate
// group_moments() and group_sums() against sums written out record by
// record, with and without weights and values, records in no group and
// values that are NaN; ifpr_sums() against the dense inverse of a block,
// of many blocks and groups, with its targets by block and summed by
// (d, group); ifpr_plug_var() against the dense matrices of its blocks.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "testutil.hpp"

namespace {

using testutil::check;

void check_moments() {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<int> group = {1, 3, 3, 0, 2, 1, 3};
  const std::vector<double> w = {1.5, 2.0, 0.5, 9.0, 3.0, 1.0, 4.0};
  const std::vector<double> y = {10.0, -1.0, 2.0, 5.0, nan, 3.0, 0.5};
  std::vector<double> out(3 * 5);
  sdcRisk::group_moments(group.data(), group.size(), w.data(), y.data(), 3, out.data());
  // group 1: records 0 and 5; group 2: record 4 (NaN value, left out);
  // group 3: records 1, 2 and 6; record 3 in no group (0)
  const double expected[5][3] = {
      {2.5, 0.0, 6.5},                                      // w
      {15.0 + 3.0, 0.0, -2.0 + 1.0 + 2.0},                  // w y
      {2.25 + 1.0, 0.0, 4.0 + 0.25 + 16.0},                 // w^2
      {22.5 + 3.0, 0.0, -4.0 + 0.5 + 8.0},                  // w^2 y
      {225.0 + 9.0, 0.0, 4.0 + 1.0 + 4.0}                   // w^2 y^2
  };
  for (int c = 0; c < 5; ++c)
    for (int g = 0; g < 3; ++g) check(std::fabs(out[c * 3 + g] - expected[c][g]) < 1e-12, "group_moments with values");
  std::vector<double> counts(3 * 2);
  sdcRisk::group_moments(group.data(), group.size(), nullptr, nullptr, 3, counts.data());
  const double n_expected[2][3] = {{2, 1, 3}, {2, 1, 3}};
  for (int c = 0; c < 2; ++c)
    for (int g = 0; g < 3; ++g) check(counts[c * 3 + g] == n_expected[c][g], "group_moments of counts");
  bool thrown = false;
  const std::vector<int> bad = {1, 4};
  try {
    sdcRisk::group_moments(bad.data(), bad.size(), nullptr, nullptr, 3, counts.data());
  } catch (const std::invalid_argument&) {
    thrown = true;
  }
  check(thrown, "a group out of range throws");
}

void check_sums() {
  const std::vector<int> group = {2, 1, 0, 2, 3, -5};
  // two columns of six rows, column after column
  const std::vector<double> x = {1, 2, 3, 4, 5, 6, 10, 20, 30, 40, 50, 60};
  std::vector<double> out(3 * 2);
  sdcRisk::group_sums(group.data(), group.size(), x.data(), 2, 3, out.data());
  const std::vector<double> expected = {2, 5, 5, 20, 50, 50};
  for (std::size_t i = 0; i < out.size(); ++i) check(out[i] == expected[i], "group_sums");
}

// The inverse of a small dense matrix (row after row) by Gauss-Jordan
// elimination with partial pivoting.
std::vector<double> inverse(std::vector<double> a, int m) {
  std::vector<double> inv(m * m, 0.0);
  for (int i = 0; i < m; ++i) inv[i * m + i] = 1.0;
  for (int col = 0; col < m; ++col) {
    int piv = col;
    for (int r = col + 1; r < m; ++r)
      if (std::fabs(a[r * m + col]) > std::fabs(a[piv * m + col])) piv = r;
    for (int j = 0; j < m; ++j) {
      std::swap(a[col * m + j], a[piv * m + j]);
      std::swap(inv[col * m + j], inv[piv * m + j]);
    }
    const double p = a[col * m + col];
    for (int j = 0; j < m; ++j) {
      a[col * m + j] /= p;
      inv[col * m + j] /= p;
    }
    for (int r = 0; r < m; ++r) {
      if (r == col) continue;
      const double f = a[r * m + col];
      for (int j = 0; j < m; ++j) {
        a[r * m + j] -= f * a[col * m + j];
        inv[r * m + j] -= f * inv[col * m + j];
      }
    }
  }
  return inv;
}

// ifpr_sums() of one IFPR block against the dense inverse: cells of counts
// 1, 2, 2 and 3 with theta = 0.75, so that a = 0 for the singleton (the
// cell k the closed form eliminates); d pairs the cells as {0, 1}, {2, 3};
// two groups of rows.
void check_ifpr_sums() {
  const std::vector<int> start = {0, 4};
  const std::vector<double> theta = {0.75};
  const std::vector<int> count = {1, 2, 2, 3}, d = {1, 1, 2, 2};
  const int m = 4;
  std::vector<double> p(m * m);  // p[i][j] = P(released i | original j)
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j) p[i * m + j] = i == j ? 1 - 0.75 / count[j] : 0.75 / ((m - 1) * count[j]);
  const std::vector<double> q = inverse(p, m);
  // records: cell (1-based; 0 outside the blocks), group, weight, value
  const std::vector<int> cell = {1, 2, 3, 4, 2, 4, 0}, g = {1, 1, 1, 1, 2, 2, 1};
  const std::vector<double> w = {1.5, 2, 0.5, 4, 3, 1, 7}, y = {2, -1, 3, 0.5, 1, 2, 5};
  const sdcRisk::IfprBlockInput in{start.data(), theta.data(), 1, count.data(), d.data(), 2, 1e-10};
  const sdcRisk::IfprRowInput rows{cell.data(), g.data(), cell.size(), w.data(), y.data()};
  // every target of `out` against the dense inverse, the records in groups `gr`
  const auto against_dense = [&](const sdcRisk::IfprSums& out, const std::vector<int>& gr, const std::string& what) {
    for (std::size_t t = 0; t < out.block.size(); ++t) {
      std::vector<double> el(2, 0.0), eq(3, 0.0);
      for (std::size_t r = 0; r < cell.size(); ++r) {
        if (gr[r] != out.g[t] || cell[r] < 1) continue;
        const int z = cell[r] - 1;
        double h = 0;
        for (int x = 0; x < m; ++x)
          if (d[x] == out.d[t]) h += q[x * m + z];
        const double lin[2] = {w[r], w[r] * y[r]}, quad[3] = {w[r] * w[r], w[r] * w[r] * y[r], w[r] * w[r] * y[r] * y[r]};
        for (int j = 0; j < 2; ++j) el[j] += lin[j] * h;
        for (int j = 0; j < 3; ++j) eq[j] += quad[j] * (h * h - h);
      }
      for (int j = 0; j < 2; ++j) check(std::fabs(out.lin[t * 2 + j] - el[j]) < 1e-10, what + " (lin) against the dense inverse");
      for (int j = 0; j < 3; ++j) check(std::fabs(out.quad[t * 3 + j] - eq[j]) < 1e-10, what + " (quad) against the dense inverse");
    }
  };
  const sdcRisk::IfprSums out = sdcRisk::ifpr_sums(in, rows);
  check(out.singular.empty() && out.block.size() == 4, "ifpr_sums: one target per group and d");
  against_dense(out, g, "ifpr_sums");
  // every record in group 1: the core sums by cell first, the same targets
  const std::vector<int> g1(cell.size(), 1);
  const sdcRisk::IfprRowInput rows1{cell.data(), g1.data(), cell.size(), w.data(), y.data()};
  const sdcRisk::IfprSums one = sdcRisk::ifpr_sums(in, rows1);
  check(one.block.size() == 2, "ifpr_sums: one target per d in one group");
  against_dense(one, g1, "ifpr_sums by cell");
  // key_sums(): the same targets from one pass summing the records by cell,
  // plus the record outside the blocks (d 3, a row of its own)
  {
    const sdcRisk::IfprBlockInput in3{start.data(), theta.data(), 1, count.data(), d.data(), 3, 1e-10};
    const std::vector<int> d_rec = {0, 0, 0, 0, 0, 0, 3};
    const sdcRisk::KeySums ks = sdcRisk::key_sums(in3, cell.data(), d_rec.data(), cell.size(), w.data(), y.data());
    check(ks.singular.empty() && ks.d == std::vector<int>({1, 2, 3}), "key_sums: the rows");
    for (int t = 0; t < 2; ++t) {
      for (int j = 0; j < 2; ++j) {
        check(std::fabs(ks.lin[t * 2 + j] - one.lin[t * 2 + j]) < 1e-12, "key_sums: lin as ifpr_sums");
        check(ks.direct_lin[t * 2 + j] == 0, "key_sums: no direct record in d 1, 2");
      }
      for (int j = 0; j < 3; ++j) check(std::fabs(ks.quad[t * 3 + j] - one.quad[t * 3 + j]) < 1e-12, "key_sums: quad as ifpr_sums");
    }
    check(ks.lin[4] == 7 && ks.lin[5] == 35 && ks.direct_lin[4] == 7 && ks.direct_lin[5] == 35, "key_sums: the direct row");
    check(ks.quad[6] == 0 && ks.quad[7] == 0 && ks.quad[8] == 0, "key_sums: the direct row adds no variance");
    // the moments of cell 2: records 2 and 5
    check(ks.agg[5 * 1 + 0] == 5 && ks.agg[5 * 1 + 1] == 2 * -1 + 3 * 1 && ks.agg[5 * 1 + 2] == 4 + 9,
          "key_sums: the moments of a cell");
    // a record outside the blocks without a value still makes its row
    std::vector<double> y2 = y;
    y2[6] = std::numeric_limits<double>::quiet_NaN();
    const sdcRisk::KeySums k2 = sdcRisk::key_sums(in3, cell.data(), d_rec.data(), cell.size(), w.data(), y2.data());
    check(k2.d == std::vector<int>({1, 2, 3}) && k2.lin[4] == 0, "key_sums: a row of records without a value");
  }
  // the targets kept by block (no array of (d, group)): the same numbers,
  // block 1
  const sdcRisk::IfprSums sep = sdcRisk::ifpr_sums(in, rows, 0);
  // (by block: group then d; summed: d then group)
  check(sep.block == std::vector<int>(4, 1) && sep.g == std::vector<int>({1, 1, 2, 2}) &&
        sep.d == std::vector<int>({1, 2, 1, 2}), "ifpr_sums by block: the targets");
  check(out.g == std::vector<int>({1, 2, 1, 2}) && out.d == std::vector<int>({1, 1, 2, 2}), "ifpr_sums summed: the targets");
  for (int t = 0; t < 4; ++t) {
    const int u = (t % 2) * 2 + t / 2;
    for (int j = 0; j < 2; ++j) check(sep.lin[t * 2 + j] == out.lin[u * 2 + j], "ifpr_sums by block: one block's sums as summed");
    for (int j = 0; j < 3; ++j) check(sep.quad[t * 3 + j] == out.quad[u * 3 + j], "ifpr_sums by block: one block's sums as summed");
  }
  check(out.block == std::vector<int>(4, 0), "ifpr_sums summed over the blocks: block 0");
  // groups far apart in a block of few rows: its rows sorted by group
  // rather than an array over the groups, the same targets
  const std::vector<int> g_far = {1, 1, 700, 1, 700, 700, 1};
  const sdcRisk::IfprRowInput rows_far{cell.data(), g_far.data(), cell.size(), w.data(), y.data()};
  for (std::size_t limit : {std::size_t(0), sdcRisk::ifpr_merge_limit}) {
    const sdcRisk::IfprSums far = sdcRisk::ifpr_sums(in, rows_far, limit);
    check(far.block.size() == 4 && far.g[0] == 1 && far.g[limit ? 1 : 2] == 700, "ifpr_sums: groups far apart, in order");
    against_dense(far, g_far, "ifpr_sums with groups far apart");
  }
  // two cells of count 1 at theta 0.75: a = 0 twice, the matrix is singular
  const std::vector<int> count2 = {1, 1, 2, 3};
  const sdcRisk::IfprBlockInput in2{start.data(), theta.data(), 1, count2.data(), d.data(), 2, 1e-10};
  check(sdcRisk::ifpr_sums(in2, rows).singular.size() == 1, "ifpr_sums finds a singular block");
}

// ifpr_sums() over many blocks and groups: the targets by block against
// sums over the records with each block's dense inverse, and the targets
// summed by (d, group) against the sums of those over the blocks.
void check_ifpr_sums_blocks() {
  std::uint64_t s = 11;
  const auto draw = [&](int l) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((s >> 33) % static_cast<std::uint64_t>(l));
  };
  const int nb = 30, nd = 4, ngr = 5;
  std::vector<int> start = {0}, count, d;
  std::vector<double> theta;
  for (int b = 0; b < nb; ++b) {
    // (block 3 larger than small_block: its slots found through the array over d)
    const int m = b == 3 ? 40 : 2 + draw(4);
    start.push_back(start.back() + m);
    theta.push_back(0.3);
    for (int z = 0; z < m; ++z) {
      count.push_back(3 + draw(20));
      d.push_back(1 + draw(nd));
    }
  }
  const int ncell = start.back();
  const std::size_t n = 2000;
  std::vector<int> cell(n), g(n);
  std::vector<double> w(n), y(n);
  for (std::size_t i = 0; i < n; ++i) {
    cell[i] = draw(10) == 0 ? 0 : 1 + draw(ncell);
    // groups 1..ngr, and now and then a far one (a block's sort)
    g[i] = draw(300) == 0 ? 400 : 1 + draw(ngr);
    w[i] = 0.5 + draw(100) / 50.0;
    y[i] = draw(7) - 3.0;
  }
  const sdcRisk::IfprBlockInput in{start.data(), theta.data(), static_cast<std::size_t>(nb), count.data(), d.data(),
                                   static_cast<std::size_t>(nd), 1e-10};
  const sdcRisk::IfprRowInput rows{cell.data(), g.data(), n, w.data(), y.data()};
  const sdcRisk::IfprSums by_block = sdcRisk::ifpr_sums(in, rows, 0);
  const sdcRisk::IfprSums merged = sdcRisk::ifpr_sums(in, rows);
  check(by_block.singular.empty() && !by_block.block.empty(), "ifpr_sums of many blocks");
  // brute force: every target by block
  std::vector<double> sum_lin(nd * 400 * 2, 0.0), sum_quad(nd * 400 * 3, 0.0);
  std::vector<int> seen(nd * 400, 0);
  int last_block = 0, last_g = 0;
  for (std::size_t t = 0; t < by_block.block.size(); ++t) {
    const int b = by_block.block[t] - 1, lo = start[b], m = start[b + 1] - lo;
    check(b + 1 > last_block || (b + 1 == last_block && by_block.g[t] >= last_g), "ifpr_sums: targets by block, then group");
    last_block = b + 1;
    last_g = by_block.g[t];
    std::vector<double> p(m * m);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < m; ++j)
        p[i * m + j] = i == j ? 1 - theta[b] / count[lo + j] : theta[b] / ((m - 1) * count[lo + j]);
    const std::vector<double> q = inverse(p, m);
    std::vector<double> el(2, 0.0), eq(3, 0.0);
    for (std::size_t r = 0; r < n; ++r) {
      if (g[r] != by_block.g[t] || cell[r] < lo + 1 || cell[r] > lo + m) continue;
      const int z = cell[r] - 1 - lo;
      double h = 0;
      for (int x = 0; x < m; ++x)
        if (d[lo + x] == by_block.d[t]) h += q[x * m + z];
      const double lin[2] = {w[r], w[r] * y[r]}, quad[3] = {w[r] * w[r], w[r] * w[r] * y[r], w[r] * w[r] * y[r] * y[r]};
      for (int j = 0; j < 2; ++j) el[j] += lin[j] * h;
      for (int j = 0; j < 3; ++j) eq[j] += quad[j] * (h * h - h);
    }
    for (int j = 0; j < 2; ++j) check(std::fabs(by_block.lin[t * 2 + j] - el[j]) < 1e-8, "ifpr_sums of many blocks (lin)");
    for (int j = 0; j < 3; ++j) check(std::fabs(by_block.quad[t * 3 + j] - eq[j]) < 1e-8, "ifpr_sums of many blocks (quad)");
    const int at = (by_block.d[t] - 1) * 400 + by_block.g[t] - 1;
    seen[at] = 1;
    for (int j = 0; j < 2; ++j) sum_lin[at * 2 + j] += by_block.lin[t * 2 + j];
    for (int j = 0; j < 3; ++j) sum_quad[at * 3 + j] += by_block.quad[t * 3 + j];
  }
  // summed by (d, group): one target per pair with a target, in order
  std::size_t t = 0;
  for (int at = 0; at < nd * 400; ++at) {
    if (!seen[at]) continue;
    check(t < merged.block.size() && merged.block[t] == 0 && merged.d[t] == at / 400 + 1 && merged.g[t] == at % 400 + 1,
          "ifpr_sums by (d, group): the pairs in order");
    if (t >= merged.block.size()) return;
    for (int j = 0; j < 2; ++j)
      check(std::fabs(merged.lin[t * 2 + j] - sum_lin[at * 2 + j]) < 1e-9, "ifpr_sums by (d, group): the sums (lin)");
    for (int j = 0; j < 3; ++j)
      check(std::fabs(merged.quad[t * 3 + j] - sum_quad[at * 3 + j]) < 1e-9, "ifpr_sums by (d, group): the sums (quad)");
    ++t;
  }
  check(t == merged.block.size(), "ifpr_sums by (d, group): no other target");
  // a group below 1 among the kept records is an error
  std::vector<int> g0 = g;
  for (std::size_t i = 0; i < n; ++i)
    if (cell[i] > 0) {
      g0[i] = 0;
      break;
    }
  const sdcRisk::IfprRowInput rows0{cell.data(), g0.data(), n, w.data(), y.data()};
  bool thrown = false;
  try {
    sdcRisk::ifpr_sums(in, rows0);
  } catch (const std::invalid_argument&) {
    thrown = true;
  }
  check(thrown, "ifpr_sums: a group below 1 throws");
}

// ifpr_plug_var() against each block's dense matrices: g_d(x) =
// sum_z P[z, x] q_d(z), q_d = h_d^2 - h_d, h_d = Q' 1_D, the sums of T_x
// g_d(x) over the cells outside D and of T_x max(g_d(x), 0) and T_x over
// D, for every slot (block, d); blocks of random counts, one with a cell
// of a = 0 (counts 1, 2, 2, 3 at theta 0.75), a block that is not IFPR
// (no slot) and rows whose cells lie in several blocks.
void check_ifpr_plug_var() {
  std::uint64_t s = 5;
  const auto draw = [&](int l) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((s >> 33) % static_cast<std::uint64_t>(l));
  };
  const int nd = 5;
  std::vector<int> start = {0, 4}, count = {1, 2, 2, 3}, d = {1, 1, 2, 3};
  std::vector<double> theta = {0.75};
  for (int b = 0; b < 25; ++b) {
    // (block 3 larger than small_block: its slots found through the array over d)
    const int m = b == 3 ? 40 : 2 + draw(5);
    start.push_back(start.back() + m);
    theta.push_back(b == 7 ? std::numeric_limits<double>::quiet_NaN() : 0.1 + draw(5) / 10.0);
    for (int z = 0; z < m; ++z) {
      count.push_back(2 + draw(30));
      d.push_back(1 + draw(nd));
    }
  }
  const sdcRisk::IfprBlockInput in{start.data(), theta.data(), theta.size(), count.data(), d.data(),
                                   static_cast<std::size_t>(nd), 1e-10};
  const sdcRisk::IfprPlugVar out = sdcRisk::ifpr_plug_var(in);
  check(out.singular.empty(), "ifpr_plug_var: no singular block");
  const auto close = [](double x, double y) { return std::fabs(x - y) < 1e-8 * (1 + std::fabs(y)); };
  std::size_t t = 0;
  for (std::size_t b = 0; b < theta.size(); ++b) {
    if (std::isnan(theta[b])) continue;
    const int lo = start[b], m = start[b + 1] - lo;
    std::vector<double> p(m * m);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < m; ++j)
        p[i * m + j] = i == j ? 1 - theta[b] / count[lo + j] : theta[b] / ((m - 1) * count[lo + j]);
    const std::vector<double> q = inverse(p, m);
    // the slots of the block: its distinct d in the order of its cells
    std::vector<int> ds;
    for (int x = 0; x < m; ++x)
      if (std::find(ds.begin(), ds.end(), d[lo + x]) == ds.end()) ds.push_back(d[lo + x]);
    for (const int dv : ds) {
      std::vector<double> qd(m, 0.0);
      for (int z = 0; z < m; ++z) {
        double h = 0;
        for (int x = 0; x < m; ++x)
          if (d[lo + x] == dv) h += q[x * m + z];
        qd[z] = h * h - h;
      }
      double outside = 0, own = 0, cnt = 0;
      for (int x = 0; x < m; ++x) {
        double gx = 0;
        for (int z = 0; z < m; ++z) gx += p[z * m + x] * qd[z];
        if (d[lo + x] == dv) {
          own += count[lo + x] * std::max(gx, 0.0);
          cnt += count[lo + x];
        } else {
          outside += count[lo + x] * gx;
        }
      }
      check(t < out.d.size() && out.block[t] == static_cast<int>(b) + 1 && out.d[t] == dv, "ifpr_plug_var: the slots in order");
      if (t >= out.d.size()) return;
      check(close(out.outside[t], outside), "ifpr_plug_var: the variance outside the row against the dense matrices");
      check(close(out.own[t], own), "ifpr_plug_var: the row's own variance against the dense matrices");
      check(out.count[t] == cnt, "ifpr_plug_var: the row's original count in the block");
      ++t;
    }
  }
  check(t == out.d.size() && out.outside.size() == t && out.own.size() == t, "ifpr_plug_var: no other slot");
  // two cells of count 1 at theta 0.75 in the first block: singular
  count[1] = 1;
  const sdcRisk::IfprBlockInput in2{start.data(), theta.data(), theta.size(), count.data(), d.data(),
                                    static_cast<std::size_t>(nd), 1e-10};
  check(sdcRisk::ifpr_plug_var(in2).singular == std::vector<int>({1}), "ifpr_plug_var finds a singular block");
}

// match_block_cells() against a search of every cell, with few and with
// many combinations of codes (its bitmap and its hash table), the `by`
// index, and a cell listed twice.
void check_match_block_cells() {
  for (int levels : {3, 2000}) {
    const std::vector<int> nl = {levels, 4, levels};
    std::uint64_t s = 7;
    const auto draw = [&](int l) {
      s = s * 6364136223846793005ULL + 1442695040888963407ULL;
      return static_cast<int>((s >> 33) % static_cast<std::uint64_t>(l)) + 1;
    };
    const std::size_t n = 300, nc = 20;
    std::vector<std::vector<int>> rc(3, std::vector<int>(n)), cc(3);
    for (std::size_t i = 0; i < n; ++i)
      for (int k = 0; k < 3; ++k) rc[k][i] = draw(k == 1 ? 4 : std::min(levels, 3));
    // the cells: distinct combinations, some of the records' and some not
    for (std::size_t j = 0; cc[0].size() < nc; ++j) {
      int c[3];
      for (int k = 0; k < 3; ++k) c[k] = j % 2 ? rc[k][j % n] : draw(nl[k]);
      bool seen = false;
      for (std::size_t t = 0; t < cc[0].size(); ++t) seen = seen || (cc[0][t] == c[0] && cc[1][t] == c[1] && cc[2][t] == c[2]);
      if (!seen)
        for (int k = 0; k < 3; ++k) cc[k].push_back(c[k]);
    }
    const std::vector<const int*> rp = {rc[0].data(), rc[1].data(), rc[2].data()};
    const std::vector<const int*> cp = {cc[0].data(), cc[1].data(), cc[2].data()};
    std::vector<int> out(n), d_rec(n), d_cell(nc), count(nc, -1), want_count(nc, 0);
    check(sdcRisk::match_block_cells(rp, n, cp, nc, nl, out.data(), count.data()) == 0, "match_block_cells: no cell twice");
    for (std::size_t i = 0; i < n; ++i) {
      int want = 0;
      for (std::size_t t = 0; t < nc; ++t)
        if (cc[0][t] == rc[0][i] && cc[1][t] == rc[1][i] && cc[2][t] == rc[2][i]) want = static_cast<int>(t) + 1;
      check(out[i] == want, "match_block_cells finds the record's cell");
      if (want) ++want_count[want - 1];
    }
    check(count == want_count, "match_block_cells counts the records of every cell");
    // number_by_values(): the rank of the index of `by` (key 3 then key 1)
    // among the distinct indexes of records and cells, sorted; with no key,
    // every d is 1. levels 3: the bitmap; 2000: the hash table
    for (const std::vector<int>& by : {std::vector<int>{2, 0}, std::vector<int>{1}, std::vector<int>{}}) {
      std::vector<std::uint64_t> want_rec(n), want_cell(nc), all;
      const auto idx = [&](const std::vector<std::vector<int>>& x, std::size_t i) {
        std::uint64_t v = 0;
        for (int k : by) v = v * static_cast<std::uint64_t>(nl[k]) + static_cast<std::uint64_t>(x[k][i] - 1);
        return v;
      };
      for (std::size_t i = 0; i < n; ++i) all.push_back(want_rec[i] = idx(rc, i));
      for (std::size_t t = 0; t < nc; ++t) all.push_back(want_cell[t] = idx(cc, t));
      std::sort(all.begin(), all.end());
      all.erase(std::unique(all.begin(), all.end()), all.end());
      const auto rank = [&](std::uint64_t v) {
        return static_cast<int>(std::lower_bound(all.begin(), all.end(), v) - all.begin()) + 1;
      };
      // with and without the records' block cells (out: 0 outside the blocks),
      // and with the records' index of `by` from match_block_cells()
      for (int variant = 0; variant < 3; ++variant) {
        const int* rec_cell = variant == 0 ? nullptr : out.data();
        std::fill(d_rec.begin(), d_rec.end(), -7);
        if (variant == 2) {
          std::vector<int> cnt(nc);
          sdcRisk::match_block_cells(rp, n, cp, nc, nl, out.data(), cnt.data(), &by, d_rec.data());
          for (std::size_t i = 0; i < n; ++i) {
            check(static_cast<std::uint64_t>(d_rec[i]) == want_rec[i], "match_block_cells: the index of by");
            if (out[i] >= 1) d_rec[i] = -7;
          }
        }
        const std::vector<std::uint64_t> got =
            sdcRisk::number_by_values(rp, n, cp, nc, nl, by, rec_cell, d_rec.data(), d_cell.data(), variant == 2);
        check(got == all, "number_by_values: the sorted distinct indexes");
        for (std::size_t i = 0; i < n; ++i) {
          // records in a block cell: left as they were (-7), their d is their cell's
          const int got_d = rec_cell && rec_cell[i] >= 1 ? d_cell[rec_cell[i] - 1] : d_rec[i];
          check(got_d == rank(want_rec[i]), "number_by_values: d of a record");
          if (rec_cell && rec_cell[i] >= 1) check(d_rec[i] == -7, "number_by_values: records in a cell untouched");
        }
        for (std::size_t t = 0; t < nc; ++t) check(d_cell[t] == rank(want_cell[t]), "number_by_values: d of a cell");
      }
    }
    for (int k = 0; k < 3; ++k) cc[k].push_back(cc[k][5]);
    const std::vector<const int*> cp2 = {cc[0].data(), cc[1].data(), cc[2].data()};
    check(sdcRisk::match_block_cells(rp, n, cp2, nc + 1, nl, out.data()) == nc + 1, "match_block_cells: a cell twice");
  }
}

}  // namespace

int main() {
  check_match_block_cells();
  check_ifpr_sums();
  check_ifpr_sums_blocks();
  check_ifpr_plug_var();
  check_moments();
  check_sums();
  return testutil::report("test_estimate");
}
