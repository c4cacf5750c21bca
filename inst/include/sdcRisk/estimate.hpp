// The one pass over the records of a released file that estimation needs:
// the sums, in each group of records, of the weights and values whose
// linear combinations are the estimates and their variance estimates
// (R/estimate-table.R). Everything after it works on the groups.
#ifndef SDCRISK_ESTIMATE_HPP
#define SDCRISK_ESTIMATE_HPP

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace sdcRisk {

// Records taken together by group_moments(), ifpr_sums(), key_sums() and
// match_block_cells(): the memory a batch needs (cells met in any order)
// asked for first, then read.
constexpr std::size_t match_batch = 32;

inline std::size_t moment_columns(bool has_value) { return has_value ? 5 : 2; }

// The moments of one record added to a row of sums laid out lin then quad
// (w, or w and w y; then w^2, or w^2, w^2 y and w^2 y^2): `nl` is 2 with a
// value `y` (not NaN), 1 without (y ignored).
inline void add_moments(double* a, std::size_t nl, double wi, const double* y) {
  a[0] += wi;
  a[nl] += wi * wi;
  if (y) {
    const double yi = *y;
    a[1] += wi * yi;
    a[3] += wi * wi * yi;
    a[4] += wi * wi * yi * yi;
  }
}

// Sums by group of c = w (or w y) and c^2, or with values of w, w y, w^2,
// w^2 y and w^2 y^2: the first and second moments of a count, a total and a
// ratio of the two. `group[i]` is the record's group, 1-based in
// [1, n_groups] (as R numbers them), or below 1 (R's NA is INT_MIN) for a
// record that counts in no group; `w` and
// `y` may be null (every weight 1; no value). A record whose value is NaN
// counts in no group. `out` holds n_groups * n_columns doubles, column
// after column (as R stores a matrix), set to zero here.
//
// With `skip` not null, records whose skip[i] is at least 1 count in no
// group (the records in a block cell, skip their block cell); with `hit`
// not null (n_groups bytes, set here), hit[g] tells whether a record counts
// in group g (a record whose value is NaN included). The groups of the
// records are then read a batch ahead (the groups met in any order).
inline void group_moments(const int* group, std::size_t n, const double* w, const double* y,
                          std::size_t n_groups, double* out, const int* skip = nullptr,
                          unsigned char* hit = nullptr) {
  const std::size_t nc = moment_columns(y != nullptr);
  std::fill(out, out + n_groups * nc, 0.0);
  if (hit) std::fill(hit, hit + n_groups, static_cast<unsigned char>(0));
  double* s[5];
  for (std::size_t c = 0; c < nc; ++c) s[c] = out + c * n_groups;
  for (std::size_t i = 0; i < n; ++i) {
    if (skip && i % match_batch == 0) {
      for (std::size_t j = i; j < std::min(n, i + match_batch); ++j) {
        if (skip[j] >= 1 || group[j] < 1 || static_cast<std::size_t>(group[j]) > n_groups) continue;
        for (std::size_t c = 0; c < nc; ++c) __builtin_prefetch(&s[c][group[j] - 1]);
      }
    }
    if (group[i] < 1 || (skip && skip[i] >= 1)) continue;
    const std::size_t g = static_cast<std::size_t>(group[i]) - 1;
    if (g >= n_groups) throw std::invalid_argument("group_moments: group out of range");
    const double wi = w ? w[i] : 1.0;
    if (!y) {
      s[0][g] += wi;
      s[1][g] += wi * wi;
      if (hit) hit[g] = 1;
      continue;
    }
    // (a record without a value still makes its group one with records)
    if (hit) hit[g] = 1;
    const double yi = y[i];
    if (std::isnan(yi)) continue;
    const double w2 = wi * wi;
    s[0][g] += wi;
    s[1][g] += wi * yi;
    s[2][g] += w2;
    s[3][g] += w2 * yi;
    s[4][g] += w2 * yi * yi;
  }
}

// Sums by group of the rows of a matrix x (n rows, `ncol` columns, column
// after column): out[g, c] = sum of x[i, c] over the rows i of group g.
// Groups are 1-based as above; rows of group below 1 count nowhere.
inline void group_sums(const int* group, std::size_t n, const double* x, std::size_t ncol, std::size_t n_groups,
                       double* out) {
  std::fill(out, out + n_groups * ncol, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    if (group[i] < 1) continue;
    const std::size_t g = static_cast<std::size_t>(group[i]) - 1;
    if (g >= n_groups) throw std::invalid_argument("group_sums: group out of range");
    for (std::size_t c = 0; c < ncol; ++c) out[c * n_groups + g] += x[c * n + i];
  }
}


// The moment estimator's sums over the IFPR blocks of a block plan (see
// R/estimate-blocks.R). A block of m cells with parameter theta has the
// transition matrix P = A + c 1 v', A = diag(a), v_z = 1 / T_z,
// c = theta / (m - 1), a_z = 1 - c m v_z. For the key values d of a row of
// the table (the cells D with them), h_d = Q' 1_D solves P' h = 1_D: with k
// the cell of smallest |a| and, for the other cells, alpha = 1 / a and
// w = v / a,
//   h_d(z) = 1_D(z) alpha_z - c w_z s_d (z != k),  h_d(k) = s_d (1 + c V') - F'_d,
//   F'_d = sum of alpha over the cells of D other than k, V' = sum of w,
//   s_d = (1_D(k) + a_k F'_d) / den,  den = a_k (1 + c V') + c v_k,
// which divides by no a_k (zero when T_k = c m). For every group g of
// released records of the block and every d of its cells, the sums over
// the records of M h_d (for each moment M of `lin`) and of M h_d and
// M h_d^2 (for each moment of `quad`, whose difference is the variance
// estimate) are sums over the records of D, over the block and over the
// records of cell k: linear in the records and cells. When there are at
// most `merge_limit` pairs (d, group) (n_d times the largest group), the
// targets of the blocks are summed by (d, group), block after block, and
// given in the order of d then group, with block 0.
struct IfprSums {
  std::vector<int> block, g, d;   // one target per (block, group, d), 1-based, or per (d, group) with block 0
  std::vector<double> lin, quad;  // targets x columns, row after row
  std::vector<int> singular;      // 1-based blocks whose matrix is singular
};

struct IfprBlockInput {
  const int* block_start;  // nb + 1 offsets of the blocks' cells
  const double* theta;     // per block; NaN: not an IFPR block (skipped)
  std::size_t nb;
  const int* count;        // T of every cell
  const int* d;            // d id of every cell, 1-based, below n_d + 1
  std::size_t n_d;
  double tol;              // below it, |a_z| (z != k) and |den| count as 0
};

// The records of the released file: their moments are those of
// group_moments() (lin: w, or w and w y; quad: w^2, or w^2, w^2 y and
// w^2 y^2), a record whose value is NaN counting nowhere.
struct IfprRowInput {
  const int* cell;  // 1-based cell of every record; records below 1 (R's NA)
                    // or in a block that is not IFPR are skipped
  const int* g;     // 1-based group
  std::size_t n;
  const double* w;  // weights, or null (1)
  const double* y;  // values, or null
  // Or, every record in group 1, their moments already summed by cell:
  // `agg` (a row of lin and quad moments per cell, row after row) and
  // `seen` (whether the cell has records); then cell, g, w and the values
  // of y are not read (y only tells whether there are values).
  const double* agg = nullptr;
  const unsigned char* seen = nullptr;
};

// Blocks of at most this many cells find the slot of a d among their own
// slots (a short scan) rather than in an array over every d.
constexpr int small_block = 32;

// Up to this many (d, group) pairs, ifpr_sums() sums its targets over the
// blocks in one array of them (8 MB a column of sums).
constexpr std::size_t ifpr_merge_limit = std::size_t(1) << 20;

// The moments of the records of every cell of an IFPR block (one group):
// `agg` (block_of.size() rows of lin and quad moments, row after row, set
// to 0 first by the caller) and `seen` (whether a record with a value is
// in the cell). Records outside the blocks, in blocks that are not IFPR or
// whose value is NaN count nowhere. The cells of the records are read a
// batch ahead (met in any order).
inline void cell_moments(const IfprRowInput& rows, const std::vector<int>& block_of, double* agg,
                         unsigned char* seen) {
  const std::size_t nl = rows.y ? 2 : 1, wm = rows.y ? 5 : 2, n = rows.n, ncell = block_of.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (i % match_batch == 0) {
      for (std::size_t j = i; j < std::min(n, i + match_batch); ++j) {
        const int zj = rows.cell[j];
        if (zj < 1 || zj > static_cast<int>(ncell)) continue;
        __builtin_prefetch(&block_of[zj - 1]);
        __builtin_prefetch(&agg[static_cast<std::size_t>(zj - 1) * wm]);
      }
    }
    const int z = rows.cell[i];
    if (z < 1 || (rows.y && std::isnan(rows.y[i]))) continue;
    if (z > static_cast<int>(ncell)) throw std::invalid_argument("ifpr_sums: cell out of range");
    if (block_of[z - 1] < 0) continue;
    add_moments(&agg[static_cast<std::size_t>(z - 1) * wm], nl, rows.w ? rows.w[i] : 1.0, rows.y ? &rows.y[i] : nullptr);
    seen[z - 1] = 1;
  }
}

// The second part of ifpr_sums(): the rows packed block after block (a
// counting sort by block), then within each block the sums of every group:
// side by side in one pass over the block's rows when its groups span a
// range of at most about four times its rows (an array over them, linear
// in the rows), else after a stable sort of its rows by group.
inline void ifpr_row_sums(const IfprBlockInput& in, const IfprRowInput& rows, std::size_t merge_limit,
                          const std::vector<int>& block_of,
                          const std::vector<double>& alpha, const std::vector<double>& w, const std::vector<int>& k_of,
                          const std::vector<double>& c, const std::vector<int>& slot, const std::vector<int>& slot_start,
                          const std::vector<int>& slot_d, const std::vector<double>& slot_s,
                          const std::vector<double>& slot_hk, IfprSums& out) {
  const std::size_t nl = rows.y ? 2 : 1, nq = rows.y ? 3 : 1, n = rows.n;
  std::vector<std::size_t> first(in.nb + 1, 0);
  std::vector<double> packed;
  // the smallest and largest group of every block's records
  std::vector<int> g_lo(in.nb, 1), g_hi(in.nb, 1);
  // Every record in the same group (a table by keys alone): the records are
  // summed by cell in one pass, and each block's rows are its cells with
  // records, each with its moments. The formulas are linear in the records'
  // moments, so the sums by cell give the same targets as the records do.
  // Otherwise the rows are the records, each with its weight and value
  // (the moments are taken block by block).
  const bool given = rows.agg != nullptr;
  const bool one_group = given || std::all_of(rows.g, rows.g + n, [](int g) { return g == 1; });
  const std::size_t width = rows.y ? 4 : 3, wm = nl + nq;
  // one group: the moments of every cell, and whether it has records (a
  // block's rows are then its cells with records, read from here)
  std::vector<double> agg_own;
  std::vector<unsigned char> seen_own;
  const double* agg = rows.agg;
  const unsigned char* seen = rows.seen;
  if (one_group && !given) {
    agg_own.assign(block_of.size() * wm, 0.0);
    seen_own.assign(block_of.size(), 0);
    agg = agg_own.data();
    seen = seen_own.data();
    cell_moments(rows, block_of, agg_own.data(), seen_own.data());
  }
  if (one_group) {
    for (std::size_t b = 0; b < in.nb; ++b) {
      first[b + 1] = first[b];
      for (int z = in.block_start[b]; z < in.block_start[b + 1]; ++z) first[b + 1] += seen[z];
    }
  } else {
    // the block of every kept record (-1: skipped), read once from the
    // cells: the records of a block lie anywhere in the file, and every
    // look-up of a cell by record is a cache miss
    std::vector<int> rec_block(n, -1);
    for (std::size_t i = 0; i < n; ++i) {
      if (i % match_batch == 0) {
        for (std::size_t j = i; j < std::min(n, i + match_batch); ++j) {
          const int zj = rows.cell[j];
          if (zj >= 1 && zj <= static_cast<int>(block_of.size())) __builtin_prefetch(&block_of[zj - 1]);
        }
      }
      const int z = rows.cell[i];
      if (z < 1 || (rows.y && std::isnan(rows.y[i]))) continue;
      if (z > static_cast<int>(block_of.size())) throw std::invalid_argument("ifpr_sums: cell out of range");
      const int b = block_of[z - 1];
      if (b < 0) continue;
      rec_block[i] = b;
      ++first[b + 1];
    }
    std::partial_sum(first.begin(), first.end(), first.begin());
    // the kept records packed block after block, each record's cell, group,
    // weight and value side by side
    packed.resize(first[in.nb] * width);
    std::vector<std::size_t> next(first.begin(), first.end() - 1);
    for (std::size_t i = 0; i < n; ++i) {
      if (i % match_batch == 0) {
        for (std::size_t j = i; j < std::min(n, i + match_batch); ++j) {
          if (rec_block[j] < 0) continue;
          __builtin_prefetch(&next[rec_block[j]]);
          __builtin_prefetch(&g_lo[rec_block[j]]);
        }
      }
      const int b = rec_block[i];
      if (b < 0) continue;
      const int gi = rows.g[i];
      if (gi < 1) throw std::invalid_argument("ifpr_sums: group below 1");
      if (next[b] == first[b]) g_lo[b] = g_hi[b] = gi;
      g_lo[b] = std::min(g_lo[b], gi);
      g_hi[b] = std::max(g_hi[b], gi);
      double* r = &packed[next[b]++ * width];
      r[0] = rows.cell[i] - 1;
      r[1] = gi;
      r[2] = rows.w ? rows.w[i] : 1.0;
      if (rows.y) r[3] = rows.y[i];
    }
  }
  // the moments of a row: lin (w, or w and w y) then quad (w^2, or w^2,
  // w^2 y and w^2 y^2)
  double mom[5];
  const auto moments = [&](const double* r) {
    const double wi = r[2];
    mom[0] = wi;
    mom[nl] = wi * wi;
    if (rows.y) {
      const double yi = r[3];
      mom[1] = wi * yi;
      mom[3] = wi * wi * yi;
      mom[4] = wi * wi * yi * yi;
    }
  };
  // The sums of a group of a block: `gb` its block sums B1, Mk (the row of
  // cell k) (nl each), B1q, B2q, Mkq (nq each); `ga` per slot A1 (nl), A1q,
  // A2q, A3q (nq each).
  const std::size_t gbw = 2 * nl + 3 * nq, saw = nl + 3 * nq;
  // (the moments of the row of cell z in `mom`)
  const auto add_row = [&](std::size_t b, int z, double* gb, double* ga) {
    const bool is_k = z == k_of[b];
    double* a = ga + static_cast<std::size_t>(slot[z]) * saw;
    for (std::size_t j = 0; j < nl; ++j) {
      const double m = mom[j];
      if (is_k) gb[nl + j] += m;
      gb[j] += m * w[z];
      a[j] += m * alpha[z];
    }
    for (std::size_t j = 0; j < nq; ++j) {
      const double m = mom[nl + j];
      double* q = gb + 2 * nl;
      if (is_k) q[2 * nq + j] += m;
      q[j] += m * w[z];
      q[nq + j] += m * w[z] * w[z];
      a[nl + j] += m * alpha[z];
      a[nl + nq + j] += m * alpha[z] * alpha[z];
      a[nl + 2 * nq + j] += m * alpha[z] * w[z];
    }
  };
  // The targets, one per (block, group, d); or, when the array of every
  // (d, group) is small (ng the largest group), summed over the blocks by
  // (d, group) there, in the order of the blocks (block 0 in the output).
  int ng = 0;
  if (given) ng = 1;
  for (std::size_t i = 0; !given && i < n; ++i) ng = std::max(ng, rows.g[i]);
  const std::size_t n_dg = in.n_d * static_cast<std::size_t>(std::max(ng, 1));
  const bool merge = n_dg <= merge_limit;
  std::vector<double> m_lin(merge ? n_dg * nl : 0, 0.0), m_quad(merge ? n_dg * nq : 0, 0.0);
  std::vector<unsigned char> m_hit(merge ? n_dg : 0, 0);
  double tl[2], tq[3];
  const auto emit = [&](std::size_t b, int g, const double* gb, const double* ga) {
    const int ns = slot_start[b + 1] - slot_start[b];
    const double *B1 = gb, *Mk = gb + nl, *B1q = gb + 2 * nl, *B2q = B1q + nq, *Mkq = B2q + nq;
    for (int sl = 0; sl < ns; ++sl) {
      const std::size_t t = static_cast<std::size_t>(slot_start[b] + sl);
      const double cs = c[b] * slot_s[t], hk = slot_hk[t];
      const double *A1 = ga + sl * saw, *A1q = A1 + nl, *A2q = A1q + nq, *A3q = A2q + nq;
      for (std::size_t j = 0; j < nl; ++j) tl[j] = A1[j] - cs * B1[j] + hk * Mk[j];
      for (std::size_t j = 0; j < nq; ++j) {
        const double lin_q = A1q[j] - cs * B1q[j] + hk * Mkq[j];
        const double sq = A2q[j] - 2 * cs * A3q[j] + cs * cs * B2q[j] + hk * hk * Mkq[j];
        tq[j] = sq - lin_q;
      }
      if (merge) {
        const std::size_t at = static_cast<std::size_t>(slot_d[t] - 1) * ng + (g - 1);
        m_hit[at] = 1;
        for (std::size_t j = 0; j < nl; ++j) m_lin[at * nl + j] += tl[j];
        for (std::size_t j = 0; j < nq; ++j) m_quad[at * nq + j] += tq[j];
        continue;
      }
      out.block.push_back(static_cast<int>(b) + 1);
      out.g.push_back(g);
      out.d.push_back(slot_d[t]);
      out.lin.insert(out.lin.end(), tl, tl + nl);
      out.quad.insert(out.quad.end(), tq, tq + nq);
    }
  };
  std::vector<double> gb, ga;
  std::vector<unsigned char> g_hit;
  std::vector<std::size_t> order;
  for (std::size_t b = 0; b < in.nb; ++b) {
    if (first[b] == first[b + 1]) continue;
    const std::size_t ns = static_cast<std::size_t>(slot_start[b + 1] - slot_start[b]);
    const std::size_t rows_b = first[b + 1] - first[b];
    const int glo = one_group ? 1 : g_lo[b], ghi = one_group ? 1 : g_hi[b];
    const std::size_t span = static_cast<std::size_t>(ghi - glo) + 1;
    if (one_group || span * (ns + 1) <= 4 * rows_b + 64) {
      // the block's groups side by side: one pass over its rows in their
      // order (each sum receives the same terms in the same order as in the
      // group-by-group pass below), then the groups in order
      gb.assign(span * gbw, 0.0);
      ga.assign(span * ns * saw, 0.0);
      g_hit.assign(span, 0);
      if (one_group) {
        for (int z = in.block_start[b]; z < in.block_start[b + 1]; ++z) {
          if (!seen[z]) continue;
          std::copy(&agg[static_cast<std::size_t>(z) * wm], &agg[static_cast<std::size_t>(z) * wm] + wm, mom);
          add_row(b, z, gb.data(), ga.data());
        }
        g_hit[0] = 1;
      }
      for (std::size_t i = first[b]; !one_group && i < first[b + 1]; ++i) {
        const double* r = &packed[i * width];
        const std::size_t gi = static_cast<std::size_t>(static_cast<int>(r[1]) - glo);
        g_hit[gi] = 1;
        moments(r);
        add_row(b, static_cast<int>(r[0]), &gb[gi * gbw], &ga[gi * ns * saw]);
      }
      for (std::size_t gi = 0; gi < span; ++gi) {
        if (g_hit[gi]) emit(b, glo + static_cast<int>(gi), &gb[gi * gbw], &ga[gi * ns * saw]);
      }
      continue;
    }
    // groups spread too far for an array: the block's rows sorted by group
    // (stable: the same sums in every run), one group after another
    order.clear();
    for (std::size_t i = first[b]; i < first[b + 1]; ++i) order.push_back(i);
    const auto grp = [&](std::size_t i) { return packed[i * width + 1]; };
    std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return grp(x) < grp(y); });
    gb.resize(gbw);
    ga.resize(ns * saw);
    for (auto run = order.begin(); run != order.end();) {
      const double gv = grp(*run);
      auto end = run;
      while (end != order.end() && grp(*end) == gv) ++end;
      std::fill(gb.begin(), gb.end(), 0.0);
      std::fill(ga.begin(), ga.begin() + static_cast<std::ptrdiff_t>(ns * saw), 0.0);
      for (auto it = run; it != end; ++it) {
        const double* r = &packed[*it * width];
        moments(r);
        add_row(b, static_cast<int>(r[0]), gb.data(), ga.data());
      }
      emit(b, static_cast<int>(gv), gb.data(), ga.data());
      run = end;
    }
  }
  if (merge) {
    const std::size_t hits = static_cast<std::size_t>(std::count(m_hit.begin(), m_hit.end(), 1));
    for (auto* v : {&out.block, &out.g, &out.d}) v->reserve(hits);
    out.lin.reserve(hits * nl);
    out.quad.reserve(hits * nq);
    for (std::size_t at = 0; at < n_dg; ++at) {
      if (!m_hit[at]) continue;
      out.block.push_back(0);
      out.g.push_back(static_cast<int>(at % ng) + 1);
      out.d.push_back(static_cast<int>(at / ng) + 1);
      out.lin.insert(out.lin.end(), &m_lin[at * nl], &m_lin[at * nl] + nl);
      out.quad.insert(out.quad.end(), &m_quad[at * nq], &m_quad[at * nq] + nq);
    }
  }
}

// One IFPR block b of `in` (the formulas above): a_z of its cells, and
// alpha_z = 1 / a_z and w_z = alpha_z / T_z of its cells other than k (0 at
// k), written into the vectors over all cells; c, k, V' and den; whether
// the block is singular (|a_z| for z != k or |den| below in.tol).
struct IfprBlock {
  double c, vp, den;
  int k;
  bool singular;
};

inline IfprBlock ifpr_block(const IfprBlockInput& in, std::size_t b, std::vector<double>& a, std::vector<double>& alpha,
                            std::vector<double>& w) {
  const int lo = in.block_start[b], hi = in.block_start[b + 1];
  const double m = hi - lo;
  IfprBlock out{in.theta[b] / (m - 1), 0.0, 0.0, lo, false};
  for (int z = lo; z < hi; ++z) {
    a[z] = 1.0 - out.c * m / in.count[z];
    if (std::fabs(a[z]) < std::fabs(a[out.k])) out.k = z;
  }
  for (int z = lo; z < hi; ++z) {
    if (z == out.k) {
      alpha[z] = w[z] = 0.0;
      continue;
    }
    if (std::fabs(a[z]) < in.tol) out.singular = true;
    alpha[z] = 1.0 / a[z];
    w[z] = alpha[z] / in.count[z];
    out.vp += w[z];
  }
  out.den = a[out.k] * (1.0 + out.c * out.vp) + out.c / in.count[out.k];
  if (std::fabs(out.den) < in.tol) out.singular = true;
  return out;
}

inline IfprSums ifpr_sums(const IfprBlockInput& in, const IfprRowInput& rows,
                          std::size_t merge_limit = ifpr_merge_limit) {
  const std::size_t ncell = static_cast<std::size_t>(in.block_start[in.nb]);
  // the block of every cell, -1 for a block that is not IFPR
  std::vector<int> block_of(ncell);
  for (std::size_t b = 0; b < in.nb; ++b)
    for (int z = in.block_start[b]; z < in.block_start[b + 1]; ++z) block_of[z] = std::isnan(in.theta[b]) ? -1 : static_cast<int>(b);
  // per cell: a, alpha, w, whether it is k, its slot (its d among the
  // block's distinct d); per block: c, k, den, V', the slots' d, s and h(k)
  std::vector<double> a(ncell), alpha(ncell, 0.0), w(ncell, 0.0), c(in.nb, 0.0), den(in.nb, 0.0), vp(in.nb, 0.0);
  std::vector<int> k_of(in.nb, -1), slot(ncell), slot_start(in.nb + 1, 0), slot_of_d(in.n_d + 1, -1);
  std::vector<int> slot_d;
  std::vector<double> slot_s, slot_hk;
  IfprSums out;

  std::vector<double> fp;
  for (std::size_t b = 0; b < in.nb; ++b) {
    slot_start[b] = static_cast<int>(slot_d.size());
    const int lo = in.block_start[b], hi = in.block_start[b + 1];
    if (std::isnan(in.theta[b])) continue;
    const IfprBlock blk = ifpr_block(in, b, a, alpha, w);
    c[b] = blk.c;
    k_of[b] = blk.k;
    vp[b] = blk.vp;
    den[b] = blk.den;
    const int k = blk.k;
    if (blk.singular) out.singular.push_back(static_cast<int>(b) + 1);
    // slots: the distinct d of the block, F'_d, then s_d and h_d(k); a d
    // found among the block's slots (a small block) or in an array over
    // every d (a cache miss a cell)
    fp.clear();
    const bool small = hi - lo <= small_block;
    for (int z = lo; z < hi; ++z) {
      const int dz = in.d[z];
      if (dz < 1 || static_cast<std::size_t>(dz) > in.n_d) throw std::invalid_argument("ifpr_sums: d out of range");
      int j = -1;
      if (small) {
        for (std::size_t t = static_cast<std::size_t>(slot_start[b]); t < slot_d.size() && j < 0; ++t)
          if (slot_d[t] == dz) j = static_cast<int>(t) - slot_start[b];
      } else {
        j = slot_of_d[dz];
      }
      if (j < 0) {
        j = static_cast<int>(slot_d.size()) - slot_start[b];
        if (!small) slot_of_d[dz] = j;
        slot_d.push_back(dz);
        fp.push_back(0.0);
      }
      slot[z] = j;
      fp[j] += alpha[z];
    }
    for (std::size_t j = 0; j < fp.size(); ++j) {
      const double s = ((slot[k] == static_cast<int>(j) ? 1.0 : 0.0) + a[k] * fp[j]) / den[b];
      slot_s.push_back(s);
      slot_hk.push_back(s * (1.0 + c[b] * vp[b]) - fp[j]);
    }
    if (!small)
      for (int z = lo; z < hi; ++z) slot_of_d[in.d[z]] = -1;
  }
  slot_start[in.nb] = static_cast<int>(slot_d.size());
  if (!out.singular.empty()) return out;
  ifpr_row_sums(in, rows, merge_limit, block_of, alpha, w, k_of, c, slot, slot_start, slot_d, slot_s, slot_hk, out);
  return out;
}

// The variance of the unweighted count of every row d given the original
// file, from the IFPR blocks' original counts T (the intervals of
// estimate_table(), R/estimate-blocks.R), by slot (a block and a d of its
// cells, the cells D of the row): `outside`, sum_x T_x g_d(x) over the
// block's cells x outside D, with g_d(x) = E[q_d(Z) | x], q_d = h_d^2 - h_d;
// `own`, sum_x T_x max(g_d(x), 0) over the block's cells in D; `count`, the
// sum of T over them. With H = s_d of ifpr_sums() and h(x) = (1 - c H /
// T_x) alpha_x for x != k, P'h = 1_D gives q's expectation in closed form:
//   g_d(x) = a_x q(x) + c / T_x Q_d,  Q_d = sum_z q(z) over the block
//          = E1 - 2 c H E2 + c^2 H^2 W2 + h(k)^2 - H,
// E1, E2 the sums of alpha^2 and alpha^2 / T over the cells of D other
// than k, W2 that of w^2 over the block's cells but k. Outside D, for x !=
// k, h(x) = -c H w_x, so T_x a_x q(x) = c^2 H^2 w_x + c H; the cell k when
// it is not in D adds T_k a_k q(k), and every cell outside D adds c Q_d.
// Linear in the cells. The slots come block after block (1-based block
// and d); `singular` as in ifpr_sums() (then nothing is computed).
struct IfprPlugVar {
  std::vector<int> block, d;
  std::vector<double> outside, own, count;
  std::vector<int> singular;
};

// The slots of ifpr_plug_var() handed one at a time to `emit(b, d,
// outside, own, count)` (0-based block, 1-based d), block after block;
// returns the 1-based singular blocks (skipped).
template <typename Emit>
inline std::vector<int> ifpr_plug_slots(const IfprBlockInput& in, Emit&& emit) {
  const std::size_t ncell = static_cast<std::size_t>(in.block_start[in.nb]);
  std::vector<double> a(ncell, 0.0), alpha(ncell, 0.0), w(ncell, 0.0);
  std::vector<int> singular, slot(ncell), slot_of_d(in.n_d + 1, -1), ds;
  // per slot of the block (a distinct d): F', E1, E2, the sum of w over D,
  // D's number of cells, the sums of T max(g, 0) and of T; then H, h(k), Q
  // and the outside part (reused from block to block)
  std::vector<double> fp, e1, e2, vd, nd, own, cnt, hh, hk, qq, outside;
  for (std::size_t b = 0; b < in.nb; ++b) {
    if (std::isnan(in.theta[b])) continue;
    const int lo = in.block_start[b], hi = in.block_start[b + 1];
    const IfprBlock blk = ifpr_block(in, b, a, alpha, w);
    if (blk.singular) {
      singular.push_back(static_cast<int>(b) + 1);
      continue;
    }
    const int k = blk.k;
    const double c = blk.c, m = hi - lo, tk = in.count[k];
    double w2 = 0.0;
    ds.clear();
    // (a slot per cell at most: the sums sized once, set to 0)
    for (auto* v : {&fp, &e1, &e2, &vd, &nd, &own, &cnt}) v->assign(static_cast<std::size_t>(hi - lo), 0.0);
    const bool small = hi - lo <= small_block;
    for (int z = lo; z < hi; ++z) {
      const int dz = in.d[z];
      if (dz < 1 || static_cast<std::size_t>(dz) > in.n_d) throw std::invalid_argument("ifpr_plug_var: d out of range");
      int j = -1;
      if (small) {
        for (std::size_t t = 0; t < ds.size() && j < 0; ++t)
          if (ds[t] == dz) j = static_cast<int>(t);
      } else {
        j = slot_of_d[dz];
      }
      if (j < 0) {
        j = static_cast<int>(ds.size());
        if (!small) slot_of_d[dz] = j;
        ds.push_back(dz);
      }
      slot[z] = j;
      const double al2 = alpha[z] * alpha[z];
      fp[j] += alpha[z];
      e1[j] += al2;
      e2[j] += al2 / in.count[z];
      vd[j] += w[z];
      nd[j] += 1.0;
      cnt[j] += in.count[z];
      w2 += w[z] * w[z];
    }
    const std::size_t ns = ds.size();
    hh.assign(ns, 0.0);
    hk.assign(ns, 0.0);
    qq.assign(ns, 0.0);
    outside.assign(ns, 0.0);
    for (std::size_t j = 0; j < ns; ++j) {
      const double fk = slot[k] == static_cast<int>(j) ? 1.0 : 0.0, kout = 1.0 - fk;
      hh[j] = (fk + a[k] * fp[j]) / blk.den;
      hk[j] = hh[j] * (1.0 + c * blk.vp) - fp[j];
      qq[j] = e1[j] - 2.0 * c * hh[j] * e2[j] + c * c * hh[j] * hh[j] * w2 + hk[j] * hk[j] - hh[j];
      outside[j] = c * c * hh[j] * hh[j] * (blk.vp - vd[j]) + c * hh[j] * (m - nd[j] - kout) +
                   kout * tk * a[k] * (hk[j] * hk[j] - hk[j]) + c * (m - nd[j]) * qq[j];
    }
    for (int z = lo; z < hi; ++z) {
      const int j = slot[z];
      const double h = z == k ? hk[j] : (1.0 - c * hh[j] / in.count[z]) * alpha[z];
      own[j] += in.count[z] * std::max(a[z] * (h * h - h) + c / in.count[z] * qq[j], 0.0);
      if (!small) slot_of_d[in.d[z]] = -1;
    }
    for (std::size_t j = 0; j < ns; ++j) emit(b, ds[j], outside[j], own[j], cnt[j]);
  }
  return singular;
}

inline IfprPlugVar ifpr_plug_var(const IfprBlockInput& in) {
  IfprPlugVar out;
  const std::size_t ncell = static_cast<std::size_t>(in.block_start[in.nb]);
  for (auto* v : {&out.block, &out.d}) v->reserve(ncell);
  for (auto* v : {&out.outside, &out.own, &out.count}) v->reserve(ncell);
  out.singular = ifpr_plug_slots(in, [&](std::size_t b, int d, double outside, double own, double count) {
    out.block.push_back(static_cast<int>(b) + 1);
    out.d.push_back(d);
    out.outside.push_back(outside);
    out.own.push_back(own);
    out.count.push_back(count);
  });
  return out;
}

// A table whose rows are key values d alone (every record in one group)
// from a block plan whose blocks are all IFPR (estimate_sums() in
// R/estimate-blocks.R): one pass over the records sums their moments by
// block cell (the records in a block) and by d (the records outside the
// blocks, which count as they are, `d_rec` their 1-based d); ifpr_sums()
// then works from the cells' sums, with its targets summed by d; the rows
// are the d with records outside the blocks or a target, in order, with
// the sums of lin and quad moments (`lin`, `quad`) and those of the records
// outside the blocks alone (`direct_lin`), row after row. `agg`: the
// moments of every block cell (row after row, lin then quad), for the
// variance function of the intervals. `singular` as in ifpr_sums() (then
// no row is computed). With `plug`, the parts of that variance function by
// row (`plug_outside`, `plug_own`, `plug_count`: ifpr_plug_var()'s slots
// summed by d, outside and own times their block's mean c^2 and count
// times its mean c, over the block's records; c the weight, or with values
// the weighted value), as block_plug_var() in R/estimate-blocks.R has them.
struct KeySums {
  std::vector<int> d;
  std::vector<double> lin, quad, direct_lin, agg;
  std::vector<double> plug_outside, plug_own, plug_count;
  std::vector<int> singular;
};

inline KeySums key_sums(const IfprBlockInput& in, const int* cell, const int* d_rec, std::size_t n, const double* w,
                        const double* y, bool plug = false) {
  const std::size_t ncell = static_cast<std::size_t>(in.block_start[in.nb]);
  const std::size_t nl = y ? 2 : 1, nq = y ? 3 : 1, wm = nl + nq, n_d = in.n_d;
  std::vector<int> block_of(ncell);
  for (std::size_t b = 0; b < in.nb; ++b) {
    if (std::isnan(in.theta[b])) throw std::invalid_argument("key_sums: a block that is not IFPR");
    for (int z = in.block_start[b]; z < in.block_start[b + 1]; ++z) block_of[z] = static_cast<int>(b);
  }
  KeySums out;
  out.agg.assign(ncell * wm, 0.0);
  std::vector<unsigned char> seen(ncell, 0), hit(n_d, 0);
  // the records outside the blocks by d: their lin moments (they add no
  // variance)
  std::vector<double> dm(n_d * nl, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    if (i % match_batch == 0) {
      for (std::size_t j = i; j < std::min(n, i + match_batch); ++j) {
        const int zj = cell[j], dj = d_rec[j];
        if (zj >= 1 && static_cast<std::size_t>(zj) <= ncell) {
          __builtin_prefetch(&out.agg[static_cast<std::size_t>(zj - 1) * wm]);
        } else if (zj < 1 && dj >= 1 && static_cast<std::size_t>(dj) <= n_d) {
          __builtin_prefetch(&dm[static_cast<std::size_t>(dj - 1) * nl]);
        }
      }
    }
    const int z = cell[i];
    const double wi = w ? w[i] : 1.0;
    if (z < 1) {
      const int di = d_rec[i];
      if (di < 1 || static_cast<std::size_t>(di) > n_d) throw std::invalid_argument("key_sums: d out of range");
      // (a record without a value still makes its d a row)
      hit[di - 1] = 1;
      if (y && std::isnan(y[i])) continue;
      double* a = &dm[static_cast<std::size_t>(di - 1) * nl];
      a[0] += wi;
      if (y) a[1] += wi * y[i];
      continue;
    }
    if (static_cast<std::size_t>(z) > ncell) throw std::invalid_argument("key_sums: cell out of range");
    if (y && std::isnan(y[i])) continue;
    seen[z - 1] = 1;
    add_moments(&out.agg[static_cast<std::size_t>(z - 1) * wm], nl, wi, y ? &y[i] : nullptr);
  }
  IfprRowInput rows{nullptr, nullptr, 0, nullptr, y};
  rows.agg = out.agg.data();
  rows.seen = seen.data();
  const IfprSums s = ifpr_sums(in, rows, static_cast<std::size_t>(-1));
  if (!s.singular.empty()) {
    out.singular = s.singular;
    return out;
  }
  // the variance function's parts by d: each block's mean c and c^2 over
  // its records (a record never leaves its block; T_b of them), the slots
  // weighted by them
  std::vector<double> po(plug ? n_d : 0, 0.0), pw(plug ? n_d : 0, 0.0), pc(plug ? n_d : 0, 0.0);
  if (plug) {
    const std::size_t lc = y ? 1 : 0, qc = y ? 4 : 1;
    std::vector<double> k1(in.nb, 0.0), k2(in.nb, 0.0);
    for (std::size_t b = 0; b < in.nb; ++b) {
      double tb = 0.0, s1 = 0.0, s2 = 0.0;
      for (int z = in.block_start[b]; z < in.block_start[b + 1]; ++z) {
        tb += in.count[z];
        s1 += out.agg[static_cast<std::size_t>(z) * wm + lc];
        s2 += out.agg[static_cast<std::size_t>(z) * wm + qc];
      }
      if (tb > 0) k1[b] = s1 / tb, k2[b] = s2 / tb;
    }
    ifpr_plug_slots(in, [&](std::size_t b, int d, double outside, double own, double count) {
      po[d - 1] += outside * k2[b];
      pw[d - 1] += own * k2[b];
      pc[d - 1] += count * k1[b];
    });
  }
  // the targets (one per d, summed over the blocks, in the order of d)
  // added to the records outside the blocks
  for (int dt : s.d) hit[static_cast<std::size_t>(dt) - 1] = 1;
  // (the rows' vectors at their size at once)
  const std::size_t n_rows = static_cast<std::size_t>(std::count(hit.begin(), hit.end(), 1));
  out.d.reserve(n_rows);
  out.lin.reserve(n_rows * nl);
  out.direct_lin.reserve(n_rows * nl);
  out.quad.reserve(n_rows * nq);
  for (auto* v : {&out.plug_outside, &out.plug_own, &out.plug_count}) v->reserve(plug ? n_rows : 0);
  std::size_t t = 0;
  for (std::size_t j = 0; j < n_d; ++j) {
    if (!hit[j]) continue;
    out.d.push_back(static_cast<int>(j) + 1);
    const bool target = t < s.d.size() && static_cast<std::size_t>(s.d[t]) == j + 1;
    for (std::size_t c = 0; c < nl; ++c) {
      out.lin.push_back(dm[j * nl + c] + (target ? s.lin[t * nl + c] : 0.0));
      out.direct_lin.push_back(dm[j * nl + c]);
    }
    for (std::size_t c = 0; c < nq; ++c) out.quad.push_back(target ? s.quad[t * nq + c] : 0.0);
    if (target) ++t;
    if (plug) {
      out.plug_outside.push_back(po[j]);
      out.plug_own.push_back(pw[j]);
      out.plug_count.push_back(pc[j]);
    }
  }
  return out;
}

// The strides of the mixed-radix index of the keys `by` (positions among
// the `nlevels`; the first most significant), and in `product` the number
// of their combinations (match_block_cells(), number_by_values()).
inline std::vector<std::uint64_t> by_strides(const std::vector<int>& nlevels, const std::vector<int>& by,
                                             long double& product, const char* what) {
  std::vector<std::uint64_t> stride(by.size());
  product = 1;
  for (std::size_t j = by.size(); j-- > 0;) {
    if (by[j] < 0 || static_cast<std::size_t>(by[j]) >= nlevels.size())
      throw std::invalid_argument(std::string(what) + ": by");
    if (nlevels[by[j]] < 1) throw std::invalid_argument(std::string(what) + ": key without levels");
    stride[j] = static_cast<std::uint64_t>(product);
    product *= nlevels[by[j]];
  }
  return stride;
}

// The block cell of every record of a released file: the cells of a block
// plan (nc cells given by their codes, key after key) looked up by the
// records' codes in one pass. Codes are 1-based, at most nlevels[k]; the
// product of the nlevels must stay below 2^63. `out[i]` receives the
// 1-based block cell of record i, or 0 when its cell is in no block;
// `cell_count` (nc ints, or null) the number of records of every block
// cell; with `by` (positions of keys) and `by_index` not null, the
// mixed-radix index of the `by` keys of every record (0-based, the first
// most significant; it must fit in an int), as number_by_values() numbers
// them. Returns the 1-based position of a cell listed twice, 0 if none
// (then the counts are not set).
//
// The cells are found by their mixed-radix index (first key most
// significant). When the indexes span at most 16 times the records and
// cells, a bitmap of the block cells' indexes with the rank of every 64-bit
// word (one cache line per record) gives the cell's position among the
// block cells sorted by index; otherwise a hash table of the indexes (open
// addressing, at most half full) does. Both are linear in the records and
// cells.
inline std::size_t match_block_cells(const std::vector<const int*>& rec_codes, std::size_t n,
                                     const std::vector<const int*>& cell_codes, std::size_t nc,
                                     const std::vector<int>& nlevels, int* out, int* cell_count = nullptr,
                                     const std::vector<int>* by = nullptr, int* by_index = nullptr) {
  const std::size_t nk = nlevels.size();
  if (rec_codes.size() != nk || cell_codes.size() != nk) throw std::invalid_argument("match_block_cells: keys differ");
  std::vector<std::uint64_t> stride(nk);
  long double prod = 1;
  for (std::size_t k = nk; k-- > 0;) {
    if (nlevels[k] < 1) throw std::invalid_argument("match_block_cells: key without levels");
    stride[k] = static_cast<std::uint64_t>(prod);
    prod *= nlevels[k];
  }
  if (prod > 9.0e18L) throw std::invalid_argument("match_block_cells: too many key combinations");
  const std::uint64_t total = static_cast<std::uint64_t>(prod);
  // the mixed-radix index of the keys `by` of every record, while its codes
  // are at hand (number_by_values() reads it back)
  std::vector<std::uint64_t> by_stride;
  if (by && by_index) {
    long double by_prod = 1;
    by_stride = by_strides(nlevels, *by, by_prod, "match_block_cells");
    if (by_prod >= 2147483647.0L) throw std::invalid_argument("match_block_cells: the index of by does not fit");
  }
  const auto by_idx = [&](std::size_t i) {
    std::uint64_t x = 0;
    for (std::size_t t = 0; t < by_stride.size(); ++t)
      x += static_cast<std::uint64_t>(rec_codes[(*by)[t]][i] - 1) * by_stride[t];
    by_index[i] = static_cast<int>(x);
  };
  const auto index = [&](const std::vector<const int*>& codes, std::size_t i) {
    std::uint64_t idx = 0;
    for (std::size_t k = 0; k < nk; ++k) {
      const int c = codes[k][i];
      if (c < 1 || c > nlevels[k]) throw std::invalid_argument("match_block_cells: code out of range");
      idx += static_cast<std::uint64_t>(c - 1) * stride[k];
    }
    return idx;
  };
  if (total <= 16 * static_cast<std::uint64_t>(n + nc) + 64) {
    struct Word {
      std::uint64_t bits;
      std::uint64_t rank;  // block cells of the words before
    };
    std::vector<Word> words(static_cast<std::size_t>(total / 64 + 1), Word{0, 0});
    std::vector<std::uint64_t> idx(nc);
    for (std::size_t j = 0; j < nc; ++j) {
      idx[j] = index(cell_codes, j);
      Word& wd = words[idx[j] >> 6];
      const std::uint64_t bit = std::uint64_t(1) << (idx[j] & 63);
      if (wd.bits & bit) return j + 1;
      wd.bits |= bit;
    }
    std::uint64_t acc = 0;
    for (Word& wd : words) {
      wd.rank = acc;
      acc += static_cast<std::uint64_t>(__builtin_popcountll(wd.bits));
    }
    const auto rank = [&](std::uint64_t x) {
      const Word& wd = words[x >> 6];
      const std::uint64_t bit = std::uint64_t(1) << (x & 63);
      if (!(wd.bits & bit)) return std::uint64_t(0);
      return wd.rank + static_cast<std::uint64_t>(__builtin_popcountll(wd.bits & (bit - 1))) + 1;
    };
    // the cell at every rank, and its records counted beside it (the same
    // cache line)
    struct At {
      int cell;
      int count;
    };
    std::vector<At> cell_at(nc, At{0, 0});
    for (std::size_t j = 0; j < nc; ++j) cell_at[rank(idx[j]) - 1].cell = static_cast<int>(j) + 1;
    // the records in batches: the words of a batch, then its cells, asked
    // for from memory before they are read (two cache misses a record
    // overlapped rather than one after the other)
    std::uint64_t bx[match_batch];
    for (std::size_t i0 = 0; i0 < n; i0 += match_batch) {
      const std::size_t m = std::min(match_batch, n - i0);
      for (std::size_t j = 0; j < m; ++j) {
        bx[j] = index(rec_codes, i0 + j);
        if (by_index) by_idx(i0 + j);
        __builtin_prefetch(&words[bx[j] >> 6]);
      }
      for (std::size_t j = 0; j < m; ++j) {
        bx[j] = rank(bx[j]);
        if (bx[j]) __builtin_prefetch(&cell_at[bx[j] - 1]);
      }
      for (std::size_t j = 0; j < m; ++j) {
        if (!bx[j]) {
          out[i0 + j] = 0;
          continue;
        }
        At& at = cell_at[bx[j] - 1];
        out[i0 + j] = at.cell;
        ++at.count;
      }
    }
    if (cell_count)
      for (const At& at : cell_at) cell_count[at.cell - 1] = at.count;
    return 0;
  }
  int bits = 4;
  while ((std::size_t(1) << bits) < 2 * nc) ++bits;
  const std::size_t mask = (std::size_t(1) << bits) - 1;
  const std::uint64_t empty = ~std::uint64_t(0);
  struct Slot {
    std::uint64_t key;
    int cell;
    int count;
  };
  std::vector<Slot> table(mask + 1, Slot{empty, 0, 0});
  const auto home = [&](std::uint64_t key) {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ULL) >> (64 - bits));
  };
  for (std::size_t j = 0; j < nc; ++j) {
    const std::uint64_t key = index(cell_codes, j);
    std::size_t h = home(key);
    while (table[h].key != empty && table[h].key != key) h = (h + 1) & mask;
    if (table[h].key == key) return j + 1;
    table[h] = Slot{key, static_cast<int>(j) + 1, 0};
  }
  std::uint64_t bx[match_batch];
  for (std::size_t i0 = 0; i0 < n; i0 += match_batch) {
    const std::size_t m = std::min(match_batch, n - i0);
    for (std::size_t j = 0; j < m; ++j) {
      bx[j] = index(rec_codes, i0 + j);
      if (by_index) by_idx(i0 + j);
      __builtin_prefetch(&table[home(bx[j])]);
    }
    for (std::size_t j = 0; j < m; ++j) {
      const std::uint64_t key = bx[j];
      std::size_t h = home(key);
      while (table[h].key != empty && table[h].key != key) h = (h + 1) & mask;
      if (table[h].key == key) {
        out[i0 + j] = table[h].cell;
        ++table[h].count;
      } else {
        out[i0 + j] = 0;
      }
    }
  }
  if (cell_count)
    for (const Slot& sl : table)
      if (sl.key != empty) cell_count[sl.cell - 1] = sl.count;
  return 0;
}

// Rows (d, g) of several pieces summed by (d, g) (combine_sums() in
// R/estimate-blocks.R): piece t has n[t] rows with 1-based d[t][i] (at most
// n_d) and g[t][i] (at most ng) and the columns of `lin` (nl) and `quad`
// (nq), column after column. The pairs present are numbered in the order
// of d then g through an array of n_d * ng ints (the caller keeps it
// small); `out_d`, `out_g` receive them, `lin`, `quad` their sums (row
// after row, nl and nq a row) and `direct_lin` the sums of `lin` over the
// first piece alone.
struct CombinePiece {
  std::size_t n;
  const int* d;
  const int* g;
  const double* lin;
  const double* quad;
};

struct Combined {
  std::vector<int> d, g;
  std::vector<double> lin, quad, direct_lin;
};

inline Combined combine_rows(const std::vector<CombinePiece>& pieces, std::size_t n_d, std::size_t ng, std::size_t nl,
                             std::size_t nq) {
  std::vector<int> id(n_d * ng, -1);
  const auto at = [&](const CombinePiece& p, std::size_t i) {
    if (p.d[i] < 1 || static_cast<std::size_t>(p.d[i]) > n_d || p.g[i] < 1 || static_cast<std::size_t>(p.g[i]) > ng)
      throw std::invalid_argument("combine_rows: d or g out of range");
    return static_cast<std::size_t>(p.d[i] - 1) * ng + static_cast<std::size_t>(p.g[i] - 1);
  };
  for (const CombinePiece& p : pieces)
    for (std::size_t i = 0; i < p.n; ++i) id[at(p, i)] = 0;
  Combined out;
  for (std::size_t x = 0; x < id.size(); ++x) {
    if (id[x] < 0) continue;
    id[x] = static_cast<int>(out.d.size());
    out.d.push_back(static_cast<int>(x / ng) + 1);
    out.g.push_back(static_cast<int>(x % ng) + 1);
  }
  const std::size_t m = out.d.size();
  out.lin.assign(m * nl, 0.0);
  out.quad.assign(m * nq, 0.0);
  out.direct_lin.assign(m * nl, 0.0);
  for (std::size_t t = 0; t < pieces.size(); ++t) {
    const CombinePiece& p = pieces[t];
    for (std::size_t i = 0; i < p.n; ++i) {
      const std::size_t r = static_cast<std::size_t>(id[at(p, i)]);
      for (std::size_t j = 0; j < nl; ++j) {
        out.lin[r * nl + j] += p.lin[j * p.n + i];
        if (t == 0) out.direct_lin[r * nl + j] += p.lin[j * p.n + i];
      }
      for (std::size_t j = 0; j < nq; ++j) out.quad[r * nq + j] += p.quad[j * p.n + i];
    }
  }
  return out;
}

// The confidence limits of the rows of estimate_table()
// (R/estimate-table.R, estimate_limits()): with v = max(var, 0) + sv, the
// normal interval est -+ z sqrt(v); where the row has a variance function
// outside + sv + own t of its true value t (`outside` not null and not NaN)
// and the test (est - t)^2 <= z^2 (outside + sv + own t) accepts some t, the
// limits of those t, est + z^2 own / 2 -+ sqrt(z^2 (outside + sv + own est)
// + z^4 own^2 / 4). `sv` has n values, or one for every row (n_sv 1).
// NaN stays NaN. One pass over the rows.
inline void score_limits(std::size_t n, const double* est, const double* var, const double* sv, std::size_t n_sv,
                         const double* outside, const double* own, double z, double* lower, double* upper) {
  const double z2 = z * z, z4 = z2 * z2;
  for (std::size_t i = 0; i < n; ++i) {
    const double s = sv[n_sv == 1 ? 0 : i];
    const double vi = (std::isnan(var[i]) ? var[i] : std::max(var[i], 0.0)) + s;
    const double half = z * std::sqrt(vi);
    lower[i] = est[i] - half;
    upper[i] = est[i] + half;
    if (!outside || std::isnan(outside[i])) continue;
    const double o = outside[i] + s;
    const double radicand = z2 * (o + own[i] * est[i]) + z4 * own[i] * own[i] / 4;
    if (std::isnan(radicand) || radicand < 0) continue;
    const double mid = est[i] + z2 * own[i] / 2, r = std::sqrt(radicand);
    lower[i] = mid - r;
    upper[i] = mid + r;
  }
}

// The key values of the keys `by` (positions among the keys, possibly
// none) of every record and every block cell, numbered 1..n_d in the order
// of their mixed-radix index (the first key of `by` most significant; codes
// 1-based, at most nlevels): `d_rec[i]`, `d_cell[j]`. Returns the 0-based
// indexes of the n_d values, sorted: rows numbered by d are in the order of
// their key values. When the indexes span at most 16 times the records and
// cells (and fit in an int), a bitmap of the indexes present with the rank
// of every 64-bit word numbers them (two passes); otherwise a hash table of
// the distinct indexes (open addressing, at most half full, doubled as it
// fills) numbers them as met, and the distinct indexes are sorted once.
// `rec_cell` (null, or the 1-based block cell of every record, 0 or less
// outside the blocks, as match_block_cells() finds them): a record in a
// block cell has its cell's key values, d_cell[rec_cell[i] - 1], so only
// the records outside the blocks are looked at and numbered (d_rec is left
// as it is for the others). With `rec_index`, d_rec holds the index of the
// `by` keys of those records already (match_block_cells() computes it).
// Linear in the records and cells (and n_d log n_d).
inline std::vector<std::uint64_t> number_by_values(const std::vector<const int*>& rec_codes, std::size_t n,
                                                   const std::vector<const int*>& cell_codes, std::size_t nc,
                                                   const std::vector<int>& nlevels, const std::vector<int>& by,
                                                   const int* rec_cell, int* d_rec, int* d_cell,
                                                   bool rec_index = false) {
  const std::size_t nk = nlevels.size(), nby = by.size();
  if (rec_codes.size() != nk || cell_codes.size() != nk) throw std::invalid_argument("number_by_values: keys differ");
  long double prod = 1;
  const std::vector<std::uint64_t> stride = by_strides(nlevels, by, prod, "number_by_values");
  if (prod > 9.0e18L) throw std::invalid_argument("number_by_values: too many key combinations");
  const std::uint64_t total = static_cast<std::uint64_t>(prod);
  const auto index = [&](const std::vector<const int*>& codes, std::size_t i) {
    std::uint64_t idx = 0;
    for (std::size_t j = 0; j < nby; ++j) {
      const int c = codes[by[j]][i];
      if (c < 1 || c > nlevels[by[j]]) throw std::invalid_argument("number_by_values: code out of range");
      idx += static_cast<std::uint64_t>(c - 1) * stride[j];
    }
    return idx;
  };
  std::vector<std::uint64_t> present;
  if (n + nc == 0) return present;
  if (total <= 16 * static_cast<std::uint64_t>(n + nc) + 64 && total < (std::uint64_t(1) << 31)) {
    struct Word {
      std::uint64_t bits;
      std::uint64_t rank;  // indexes present in the words before
    };
    std::vector<Word> words(static_cast<std::size_t>(total / 64 + 1), Word{0, 0});
    // the index of every record and cell kept in d (it fits in an int),
    // then replaced by its rank
    const auto mark = [&](const std::vector<const int*>& codes, std::size_t m, int* d, const int* in_cell,
                          bool given) {
      for (std::size_t i = 0; i < m; ++i) {
        if (in_cell && in_cell[i] >= 1) continue;
        const std::uint64_t x = given ? static_cast<std::uint64_t>(d[i]) : index(codes, i);
        if (x >= total) throw std::invalid_argument("number_by_values: index out of range");
        d[i] = static_cast<int>(x);
        words[x >> 6].bits |= std::uint64_t(1) << (x & 63);
      }
    };
    mark(rec_codes, n, d_rec, rec_cell, rec_index);
    mark(cell_codes, nc, d_cell, nullptr, false);
    std::uint64_t acc = 0, total_present = 0;
    for (const Word& wd : words) total_present += static_cast<std::uint64_t>(__builtin_popcountll(wd.bits));
    present.reserve(static_cast<std::size_t>(total_present));
    for (std::size_t t = 0; t < words.size(); ++t) {
      words[t].rank = acc;
      for (std::uint64_t bits = words[t].bits; bits; bits &= bits - 1)
        present.push_back(static_cast<std::uint64_t>(t) * 64 + static_cast<std::uint64_t>(__builtin_ctzll(bits)));
      acc += static_cast<std::uint64_t>(__builtin_popcountll(words[t].bits));
    }
    const auto rank = [&](int* d, std::size_t m, const int* in_cell) {
      for (std::size_t i = 0; i < m; ++i) {
        if (in_cell && in_cell[i] >= 1) continue;
        const std::uint64_t x = static_cast<std::uint64_t>(d[i]);
        const Word& wd = words[x >> 6];
        const std::uint64_t below = wd.bits & ((std::uint64_t(1) << (x & 63)) - 1);
        d[i] = static_cast<int>(wd.rank + static_cast<std::uint64_t>(__builtin_popcountll(below))) + 1;
      }
    };
    rank(d_cell, nc, nullptr);
    rank(d_rec, n, rec_cell);
    return present;
  }
  // the hash table: the distinct indexes numbered as met (provisional ids
  // in d), then sorted and the ids replaced by their ranks
  const std::uint64_t empty = ~std::uint64_t(0);
  struct Slot {
    std::uint64_t key;
    int id;
  };
  int bits = 10;
  std::vector<Slot> table(std::size_t(1) << bits, Slot{empty, 0});
  const auto home = [&](std::uint64_t key) {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ULL) >> (64 - bits));
  };
  const auto insert = [&](std::uint64_t key) {
    std::size_t mask = table.size() - 1, h = home(key);
    while (table[h].key != empty && table[h].key != key) h = (h + 1) & mask;
    if (table[h].key == key) return table[h].id;
    const int id = static_cast<int>(present.size());
    table[h] = Slot{key, id};
    present.push_back(key);
    if (2 * present.size() > table.size()) {
      ++bits;
      std::vector<Slot> old(std::size_t(1) << bits, Slot{empty, 0});
      old.swap(table);
      mask = table.size() - 1;
      for (const Slot& sl : old) {
        if (sl.key == empty) continue;
        std::size_t g = home(sl.key);
        while (table[g].key != empty) g = (g + 1) & mask;
        table[g] = sl;
      }
    }
    return id;
  };
  for (std::size_t j = 0; j < nc; ++j) d_cell[j] = insert(index(cell_codes, j));
  for (std::size_t i = 0; i < n; ++i)
    if (!rec_cell || rec_cell[i] < 1)
      d_rec[i] = insert(rec_index ? static_cast<std::uint64_t>(d_rec[i]) : index(rec_codes, i));
  std::vector<int> order(present.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int x, int y) { return present[x] < present[y]; });
  std::vector<int> rank_of(present.size());
  std::vector<std::uint64_t> sorted(present.size());
  for (std::size_t r = 0; r < order.size(); ++r) {
    rank_of[order[r]] = static_cast<int>(r) + 1;
    sorted[r] = present[order[r]];
  }
  for (std::size_t j = 0; j < nc; ++j) d_cell[j] = rank_of[d_cell[j]];
  for (std::size_t i = 0; i < n; ++i)
    if (!rec_cell || rec_cell[i] < 1) d_rec[i] = rank_of[d_rec[i]];
  return sorted;
}

}  // namespace sdcRisk

#endif  // SDCRISK_ESTIMATE_HPP
