// Primary sensitivity of magnitude-table cells: the PTN (precision threshold
// and noise) framework of Gray (2018).
//
// Plain C++17, no R headers. A respondent r of a cell has a precision
// threshold PT(r), a noise N(r) and a self-noise SN(r). For disjoint sets T
// (targets, |T| = nt) and S (suspects, |S| = ns) the set pair sensitivity is
// (eq. 7)
//   S(T, S) = sum_T PT - sum_S SN - sum_{r not in T u S} N
//           = sum_T ft + sum_S fs - sum_r N             (eq. 6 / 13)
// with target function ft = PT + N and suspect function fs = N - SN. The cell
// sensitivity S^nt_ns is the maximum over all pairs (T, S).
//
// A cell with fewer than nt + ns respondents is completed with "phantom"
// respondents whose PT, N and SN are 0 (id -1): the textbook convention
// x_k = 0 for k beyond the number of contributors.
#ifndef SDCRISK_TABLE_SENSITIVITY_HPP
#define SDCRISK_TABLE_SENSITIVITY_HPP

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <queue>
#include <stdexcept>
#include <utility>
#include <vector>

#include "cells.hpp"

namespace sdcRisk {

struct Respondent {
  double pt = 0, noise = 0, self_noise = 0;
  int id = -1;  // -1: phantom respondent
  double ft() const { return pt + noise; }
  double fs() const { return noise - self_noise; }
};

struct PtnSets {
  double s = 0;                // S(T, S), eq. 7
  std::vector<int> target;     // ids of T (-1 = phantom), by decreasing ft
  std::vector<int> suspect;    // ids of S (-1 = phantom), by decreasing fs
};

namespace detail {

// "a ranks before b": larger value first, ties broken by smaller position, so
// that results do not depend on the sorting algorithm.
inline bool ranks_before(double va, int pa, double vb, int pb) {
  return va > vb || (va == vb && pa < pb);
}

// Positions (into `r`) of the k best respondents by `key` among [lo, hi) of
// `order`, best first.
template <class Key>
std::vector<int> top_positions(const std::vector<Respondent>& r, const std::vector<int>& order,
                               std::size_t lo, std::size_t hi, std::size_t k, Key key) {
  std::vector<int> pos(order.begin() + static_cast<std::ptrdiff_t>(lo),
                       order.begin() + static_cast<std::ptrdiff_t>(hi));
  auto better = [&](int a, int b) { return ranks_before(key(r[a]), a, key(r[b]), b); };
  k = std::min(k, pos.size());
  std::partial_sort(pos.begin(), pos.begin() + static_cast<std::ptrdiff_t>(k), pos.end(), better);
  pos.resize(k);
  return pos;
}

// S(T, S) from the PTN variables directly: sum_T PT - sum_S SN - (rest of N).
// Summing this way (not through ft + fs - sum N) keeps the sign exact when the
// classic rules are fed whole numbers.
inline double set_value(const std::vector<Respondent>& r, const std::vector<int>& t,
                        const std::vector<int>& s, double noise_total) {
  double pt = 0, sn = 0, used = 0;
  for (int i : t) { pt += r[i].pt; used += r[i].noise; }
  for (int i : s) { sn += r[i].self_noise; used += r[i].noise; }
  return pt - sn - (noise_total - used);
}

inline PtnSets finish(const std::vector<Respondent>& r, const std::vector<int>& t,
                      const std::vector<int>& s, double noise_total) {
  PtnSets out;
  out.s = set_value(r, t, s, noise_total);
  for (int i : t) out.target.push_back(r[i].id);
  for (int i : s) out.suspect.push_back(r[i].id);
  return out;
}

inline void pad_phantoms(std::vector<Respondent>& r, std::size_t need) {
  while (r.size() < need) r.push_back(Respondent{});
}

}  // namespace detail

// Theorem 1 (nt = ns = 1): with tau1, tau2 the two best respondents by ft and
// sigma1, sigma2 the two best by fs, (tau1, sigma1) is maximal if they differ,
// otherwise the better of (tau1, sigma2) and (tau2, sigma1).
// `noise_total` is sum_r N over all respondents of the cell, including any
// not in `r` (the per-cell tracker keeps only the candidates).
inline PtnSets ptn_theorem1(std::vector<Respondent> r, double noise_total) {
  detail::pad_phantoms(r, 2);
  std::vector<int> all(r.size());
  std::iota(all.begin(), all.end(), 0);
  auto ft = [](const Respondent& x) { return x.ft(); };
  auto fs = [](const Respondent& x) { return x.fs(); };
  const std::vector<int> tau = detail::top_positions(r, all, 0, all.size(), 2, ft);
  const std::vector<int> sigma = detail::top_positions(r, all, 0, all.size(), 2, fs);
  int t = tau[0], s = sigma[0];
  if (t == s) {
    const double a = r[tau[0]].ft() + r[sigma[1]].fs();
    const double b = r[tau[1]].ft() + r[sigma[0]].fs();
    if (a >= b) s = sigma[1];
    else t = tau[1];
  }
  return detail::finish(r, {t}, {s}, noise_total);
}

namespace detail {

// Running sum of the k largest of values(0..m-1), visited forwards (out[j + 1]
// after value j) or backwards (out[j] after value j), with a heap of size k.
template <class Value>
void running_top_sum(std::size_t m, int k, bool backwards, Value value, std::vector<double>& out) {
  std::priority_queue<double, std::vector<double>, std::greater<double>> heap;
  double sum = 0;
  for (std::size_t step = 0; step < m; ++step) {
    const std::size_t j = backwards ? m - 1 - step : step;
    const double v = value(j);
    if (heap.size() < static_cast<std::size_t>(k)) {
      heap.push(v);
      sum += v;
    } else if (v > heap.top()) {
      sum += v - heap.top();
      heap.pop();
      heap.push(v);
    }
    out[backwards ? j : j + 1] = sum;
  }
}

}  // namespace detail

// Exact S^nt_ns for any nt >= 1, ns >= 0 in O(m log m), m = r.size().
//
// Exchange argument: if target t and suspect s have ft(t) - fs(t) <
// ft(s) - fs(s), swapping their roles raises S by the difference. So some
// optimal pair has every target ranked before every suspect in the order of
// decreasing d = ft - fs: for some split j, T is the nt best by ft among the
// first j and S the ns best by fs among the rest. Prefix and suffix sums of
// the best nt ft (ns fs) come from one sweep each with a size-bounded heap.
inline PtnSets ptn_general(std::vector<Respondent> r, double noise_total, int nt, int ns) {
  if (nt < 1 || ns < 0) throw std::invalid_argument("ptn_general: need nt >= 1 and ns >= 0");
  detail::pad_phantoms(r, static_cast<std::size_t>(nt) + static_cast<std::size_t>(ns));
  const std::size_t m = r.size();
  std::vector<int> order(m);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return detail::ranks_before(r[a].ft() - r[a].fs(), a, r[b].ft() - r[b].fs(), b);
  });

  // prefix[j]: best sum of nt ft among order[0..j); valid for j >= nt.
  // suffix[j]: best sum of ns fs among order[j..m).
  std::vector<double> prefix(m + 1, 0), suffix(m + 1, 0);
  detail::running_top_sum(m, nt, false, [&](std::size_t j) { return r[order[j]].ft(); }, prefix);
  if (ns > 0) detail::running_top_sum(m, ns, true, [&](std::size_t j) { return r[order[j]].fs(); }, suffix);
  std::size_t best = static_cast<std::size_t>(nt);
  double best_val = prefix[best] + suffix[best];
  for (std::size_t j = best + 1; j + static_cast<std::size_t>(ns) <= m; ++j) {
    const double v = prefix[j] + suffix[j];
    if (v > best_val) { best_val = v; best = j; }
  }
  auto ft = [](const Respondent& x) { return x.ft(); };
  auto fs = [](const Respondent& x) { return x.fs(); };
  const std::vector<int> t = detail::top_positions(r, order, 0, best, nt, ft);
  const std::vector<int> s = detail::top_positions(r, order, best, m, ns, fs);
  return detail::finish(r, t, s, noise_total);
}

inline PtnSets ptn_max(std::vector<Respondent> r, double noise_total, int nt, int ns) {
  if (nt == 1 && ns == 1) return ptn_theorem1(std::move(r), noise_total);
  return ptn_general(std::move(r), noise_total, nt, ns);
}

// The k best (value, row) pairs of every cell, kept in a flat array sorted
// best first (ties: earlier row first). Insertion costs O(k), so a cell is
// never sorted as a whole.
class CellTopK {
 public:
  CellTopK(std::size_t ncell, std::size_t k)
      : k_(k), size_(ncell, 0), val_(ncell * k), row_(ncell * k) {}
  void add(std::size_t cell, double v, int row) {
    if (k_ == 0) return;
    double* vals = &val_[cell * k_];
    int* rows = &row_[cell * k_];
    std::size_t n = size_[cell];
    if (n == k_ && !detail::ranks_before(v, row, vals[k_ - 1], rows[k_ - 1])) return;
    std::size_t i = n < k_ ? n++ : k_ - 1;
    while (i > 0 && detail::ranks_before(v, row, vals[i - 1], rows[i - 1])) {
      vals[i] = vals[i - 1];
      rows[i] = rows[i - 1];
      --i;
    }
    vals[i] = v;
    rows[i] = row;
    size_[cell] = n;
  }
  std::size_t size(std::size_t cell) const { return size_[cell]; }
  double value(std::size_t cell, std::size_t j) const { return val_[cell * k_ + j]; }
  int row(std::size_t cell, std::size_t j) const { return row_[cell * k_ + j]; }
  std::size_t k() const { return k_; }

 private:
  std::size_t k_;
  std::vector<std::size_t> size_;
  std::vector<double> val_;
  std::vector<int> row_;
};

// PTN sensitivity of many cells at once. Row i (a contributor in a cell) has
// cell[i] in [0, ncell) and PTN variables pt[i], noise[i], self_noise[i].
// One pass keeps, per cell, sum N and the nt + ns best rows by ft and by fs:
// a target outside the best nt + ns by ft can be replaced by one of them that
// is in neither set without lowering S (likewise for suspects), so the
// candidates contain an optimal pair.
struct CellsPtn {
  std::vector<double> s;                    // per cell
  std::vector<int> target, suspect;         // ncell * nt, ncell * ns rows (-1 phantom)
  std::vector<int> n_respondents;
};

template <class Interrupt>
CellsPtn ptn_cells(const int* cell, std::size_t nrow, std::size_t ncell, const double* pt,
                   const double* noise, const double* self_noise, int nt, int ns,
                   Interrupt&& interrupt) {
  if (nt < 1 || ns < 0) throw std::invalid_argument("ptn_cells: need nt >= 1 and ns >= 0");
  const std::size_t k = static_cast<std::size_t>(nt) + static_cast<std::size_t>(ns);
  CellTopK by_ft(ncell, k), by_fs(ncell, ns > 0 ? k : 0);
  std::vector<double> noise_total(ncell, 0);
  CellsPtn out;
  out.n_respondents.assign(ncell, 0);
  for (std::size_t i = 0; i < nrow; ++i) {
    if ((i & 0x3FFFF) == 0 && i > 0) interrupt();
    const int c = cell[i];
    if (c < 0 || static_cast<std::size_t>(c) >= ncell)
      throw std::invalid_argument("ptn_cells: cell index out of range");
    noise_total[c] += noise[i];
    ++out.n_respondents[c];
    by_ft.add(c, pt[i] + noise[i], static_cast<int>(i));
    by_fs.add(c, noise[i] - self_noise[i], static_cast<int>(i));
  }
  out.s.assign(ncell, 0);
  out.target.assign(ncell * static_cast<std::size_t>(nt), -1);
  out.suspect.assign(ncell * static_cast<std::size_t>(ns), -1);
  std::vector<Respondent> cand;
  std::vector<int> rows;
  for (std::size_t c = 0; c < ncell; ++c) {
    if ((c & 0xFFFF) == 0 && c > 0) interrupt();
    rows.clear();
    for (std::size_t j = 0; j < by_ft.size(c); ++j) rows.push_back(by_ft.row(c, j));
    for (std::size_t j = 0; j < by_fs.size(c); ++j) rows.push_back(by_fs.row(c, j));
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    cand.clear();
    for (int i : rows) cand.push_back(Respondent{pt[i], noise[i], self_noise[i], i});
    const PtnSets res = ptn_max(cand, noise_total[c], nt, ns);
    out.s[c] = res.s;
    for (int j = 0; j < nt; ++j) out.target[c * nt + j] = res.target[j];
    for (int j = 0; j < ns; ++j) out.suspect[c * ns + j] = res.suspect[j];
  }
  return out;
}

// The k largest values of every cell (rows best first, -1 when the cell has
// fewer than k rows): the "largest contributions" of the classic rules.
inline CellTopK largest_per_cell(const int* cell, const double* x, std::size_t nrow,
                                 std::size_t ncell, std::size_t k) {
  CellTopK top(ncell, k);
  for (std::size_t i = 0; i < nrow; ++i) {
    if (cell[i] < 0 || static_cast<std::size_t>(cell[i]) >= ncell)
      throw std::invalid_argument("largest_per_cell: cell index out of range");
    top.add(static_cast<std::size_t>(cell[i]), x[i], static_cast<int>(i));
  }
  return top;
}

// Magnitude table at one level of aggregation: the cells of the keys in
// `codes` (none: the grand total), and one row per contributor in a cell
// with the sums of `values` over its records (a contributor with several
// records in a cell is one respondent, as holdings are in tau-ARGUS).
// `contributor` may be null: then every record is its own contributor and
// row i is record i. Codes are 1..L; the R side has removed missing ones.
struct ContributorCells {
  std::size_t ncell = 0;
  std::vector<std::vector<int>> cell_codes;  // per key, code of each cell (lexicographic)
  std::vector<int> row_cell;                 // 0-based cell of each row
  std::vector<int> row_contributor;          // contributor code, or record (1-based)
  std::vector<int> row_records;              // number of records behind the row
  std::vector<std::vector<double>> sums;     // per value column, sum over the row's records
};

template <class Interrupt>
ContributorCells contributor_cells(const std::vector<const int*>& codes,
                                   const std::vector<int>& nlevels, const int* contributor,
                                   int ncontributor, const std::vector<const double*>& values,
                                   std::size_t n, Interrupt&& interrupt) {
  ContributorCells out;
  std::vector<int> cell_of_record;
  if (codes.empty()) {
    out.ncell = n > 0 ? 1 : 0;
    cell_of_record.assign(n, 0);
  } else {
    CellTable tab = cross_classify(codes, nlevels, n, interrupt);
    if (tab.n_excluded > 0) throw std::invalid_argument("contributor_cells: missing key code");
    out.ncell = tab.counts.size();
    out.cell_codes = std::move(tab.cell_codes);
    cell_of_record = std::move(tab.cell_of_record);
  }
  std::vector<int> row_of_record;
  if (contributor == nullptr) {
    row_of_record.resize(n);
    std::iota(row_of_record.begin(), row_of_record.end(), 0);
    out.row_cell = cell_of_record;
    out.row_contributor.resize(n);
    std::iota(out.row_contributor.begin(), out.row_contributor.end(), 1);
    out.row_records.assign(n, 1);
  } else {
    // (cell, contributor) pairs, numbered by cell then contributor.
    std::vector<int> cell1(n);
    for (std::size_t i = 0; i < n; ++i) cell1[i] = cell_of_record[i] + 1;
    CellTable pairs = cross_classify({cell1.data(), contributor},
                                     {static_cast<int>(std::max<std::size_t>(out.ncell, 1)), ncontributor},
                                     n, interrupt);
    if (pairs.n_excluded > 0) throw std::invalid_argument("contributor_cells: missing contributor code");
    row_of_record = std::move(pairs.cell_of_record);
    out.row_cell = std::move(pairs.cell_codes[0]);
    for (int& c : out.row_cell) --c;
    out.row_contributor = std::move(pairs.cell_codes[1]);
    out.row_records = std::move(pairs.counts);
  }
  const std::size_t nrow = out.row_cell.size();
  out.sums.assign(values.size(), std::vector<double>(nrow, 0));
  for (std::size_t v = 0; v < values.size(); ++v) {
    double* sum = out.sums[v].data();
    const double* x = values[v];
    for (std::size_t i = 0; i < n; ++i) sum[row_of_record[i]] += x[i];
  }
  return out;
}

}  // namespace sdcRisk

#endif  // SDCRISK_TABLE_SENSITIVITY_HPP
