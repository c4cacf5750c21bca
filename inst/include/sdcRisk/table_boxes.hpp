// The search box of the suppression heuristic (protect_table(), R's
// search_box() in R/table-suppress.R): the cells among which the program
// for a sensitive cell may choose. For every classification variable, the
// cell's category, its ancestors, up to k other categories at each of those
// levels (siblings) and below them down to the finest level, the cheapest
// first; the box is their product, with k the largest that keeps it within
// the budget. Plain C++17, no R: tested standalone in tests/cpp.
#ifndef SDCRISK_TABLE_BOXES_HPP
#define SDCRISK_TABLE_BOXES_HPP

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace sdcRisk {

// The cell at a combination of codes: key = sum over variables of
// (code - 1) * mult; a dense table of every key (cell, 1-based; 0 absent),
// or the sorted keys of the cells present with their cells.
struct CellLookup {
  const double* mult = nullptr;
  int n_var = 0;
  const int* dense = nullptr;
  std::size_t n_dense = 0;
  const double* keys = nullptr;  // sorted
  const int* key_cell = nullptr;
  std::size_t n_keys = 0;

  // 1-based cell at the 1-based codes, 0 when absent
  int at(const int* code) const {
    double key = 0;
    for (int d = 0; d < n_var; ++d) key += (code[d] - 1) * mult[d];
    if (dense) {
      const auto k = static_cast<std::size_t>(key);
      return k < n_dense ? dense[k] : 0;
    }
    const double* end = keys + n_keys;
    const double* hit = std::lower_bound(keys, end, key);
    return (hit != end && *hit == key) ? key_cell[hit - keys] : 0;
  }
};

// One classification variable: the parent of each category (1-based
// categories; 0 for none) and its children (CSR: those of category c are
// child[start[c - 1]] to child[start[c] - 1], 1-based, in increasing order).
struct BoxVariable {
  const int* parent = nullptr;
  int n_cat = 0;
  const int* start = nullptr;
  const int* child = nullptr;
};

// What the box is chosen from: the cell's codes, the variables, the
// lookup, the pattern (`supp`, 0/1 per cell), the suppression costs `w`,
// the capacities and the target t of the deviation.
struct BoxProblem {
  std::vector<int> code;  // the cell's codes, 1-based
  std::vector<BoxVariable> vars;
  CellLookup lookup;
  const int* supp = nullptr;
  const double* w = nullptr;
  const double* cap_up = nullptr;
  const double* cap_dn = nullptr;
  std::size_t n_cell = 0;
  double w_max = 0;
  double t = 0;
};

struct Box {
  std::vector<int> cells;  // 1-based, the first variable varying fastest
  bool whole = true;       // nothing left out
};

namespace detail {

// at most k of the candidate categories of variable d, the cheapest first
// (a suppressed cell is free, one that cannot absorb t costs w_max more,
// an absent one comes last; ties by category)
inline std::vector<int> pick_categories(const BoxProblem& p, int d, double k, const std::vector<int>& cand,
                                        bool& whole) {
  if (static_cast<double>(cand.size()) <= k) return cand;
  whole = false;
  std::vector<int> code = p.code;
  std::vector<double> score(cand.size(), std::numeric_limits<double>::infinity());
  for (std::size_t a = 0; a < cand.size(); ++a) {
    code[static_cast<std::size_t>(d)] = cand[a];
    const int j = p.lookup.at(code.data());
    if (j <= 0) continue;
    const auto c = static_cast<std::size_t>(j - 1);
    if (c >= p.n_cell) throw std::out_of_range("box: the lookup names a cell beyond the table");
    score[a] = (p.supp[c] ? 0.0 : p.w[c]) + (std::max(p.cap_up[c], p.cap_dn[c]) >= p.t ? 0.0 : p.w_max);
  }
  std::vector<std::size_t> idx(cand.size());
  std::iota(idx.begin(), idx.end(), std::size_t{0});
  std::sort(idx.begin(), idx.end(), [&](std::size_t x, std::size_t y) {
    if (score[x] != score[y]) return score[x] < score[y];
    return cand[x] < cand[y];
  });
  const auto m = static_cast<std::size_t>(k);
  std::vector<int> out;
  out.reserve(m);
  for (std::size_t a = 0; a < m; ++a) out.push_back(cand[idx[a]]);
  return out;
}

inline void check_category(const BoxVariable& v, int c) {
  if (c < 1 || c > v.n_cat) throw std::out_of_range("box: a category code is out of range");
}

}  // namespace detail

// The categories of variable d in the box at k.
inline std::vector<int> box_categories(const BoxProblem& p, int d, double k, bool& whole) {
  const BoxVariable& v = p.vars[static_cast<std::size_t>(d)];
  const int c0 = p.code[static_cast<std::size_t>(d)];
  detail::check_category(v, c0);
  auto parent = [&](int c) { return v.parent[c - 1]; };
  auto children = [&](int c) {
    return std::vector<int>(v.child + v.start[c - 1], v.child + v.start[c]);
  };
  std::vector<char> in_out(static_cast<std::size_t>(v.n_cat) + 1, 0);
  std::vector<int> out{c0};
  in_out[static_cast<std::size_t>(c0)] = 1;
  auto add_out = [&](int c) {
    out.push_back(c);
    in_out[static_cast<std::size_t>(c)] = 1;
  };
  // the ancestors, and siblings at each of their levels
  for (int u = c0; parent(u) != 0;) {
    const int p_u = parent(u);
    detail::check_category(v, p_u);
    std::vector<int> sib;
    for (int c : children(p_u))
      if (c != u) sib.push_back(c);
    add_out(p_u);
    for (int c : detail::pick_categories(p, d, k, sib, whole)) add_out(c);
    u = p_u;
  }
  // categories below the chosen ones, down to the finest level: from the
  // cell's and from every chosen category that is no chosen one's parent
  std::vector<char> is_parent(static_cast<std::size_t>(v.n_cat) + 1, 0);
  for (int c : out)
    if (parent(c) != 0) is_parent[static_cast<std::size_t>(parent(c))] = 1;
  std::vector<int> down{c0};
  std::vector<char> in_down(static_cast<std::size_t>(v.n_cat) + 1, 0);
  in_down[static_cast<std::size_t>(c0)] = 1;
  for (int c : out) {
    if (is_parent[static_cast<std::size_t>(c)] || in_down[static_cast<std::size_t>(c)]) continue;
    down.push_back(c);
    in_down[static_cast<std::size_t>(c)] = 1;
  }
  for (std::size_t at = 0; at < down.size(); ++at) {
    const std::vector<int> ch = children(down[at]);
    if (ch.empty()) continue;
    for (int c : detail::pick_categories(p, d, k, ch, whole)) {
      if (in_out[static_cast<std::size_t>(c)]) continue;
      add_out(c);
      down.push_back(c);
    }
  }
  // (each category once, in the order chosen)
  std::vector<int> uniq;
  std::vector<char> seen(static_cast<std::size_t>(v.n_cat) + 1, 0);
  for (int c : out) {
    if (seen[static_cast<std::size_t>(c)]) continue;
    seen[static_cast<std::size_t>(c)] = 1;
    uniq.push_back(c);
  }
  return uniq;
}

// The box: k from k0 down (by at least the factor `shrink`, or as the
// budget requires) until the product of the variables' categories is
// within `budget` cells, or k is 1.
inline Box search_box(const BoxProblem& p, double budget, double k0, double shrink) {
  const int nd = static_cast<int>(p.vars.size());
  if (nd == 0 || p.code.size() != p.vars.size()) throw std::invalid_argument("box: codes and variables differ");
  double k = k0;
  std::vector<std::vector<int>> sets(static_cast<std::size_t>(nd));
  bool whole = true;
  for (;;) {
    whole = true;
    double size = 1;
    for (int d = 0; d < nd; ++d) {
      bool w_d = true;
      sets[static_cast<std::size_t>(d)] = box_categories(p, d, k, w_d);
      whole = whole && w_d;
      size *= static_cast<double>(sets[static_cast<std::size_t>(d)].size());
    }
    if (size <= budget || k == 1) break;
    k = std::max(1.0, std::floor(k * std::min(shrink, std::pow(budget / size, 1.0 / nd))));
  }
  Box box;
  box.whole = whole;
  // every combination, the first variable fastest
  std::vector<std::size_t> pos(static_cast<std::size_t>(nd), 0);
  std::vector<int> code(static_cast<std::size_t>(nd));
  for (;;) {
    for (int d = 0; d < nd; ++d) code[static_cast<std::size_t>(d)] = sets[static_cast<std::size_t>(d)][pos[static_cast<std::size_t>(d)]];
    const int j = p.lookup.at(code.data());
    if (j > 0) box.cells.push_back(j);
    int d = 0;
    while (d < nd && ++pos[static_cast<std::size_t>(d)] == sets[static_cast<std::size_t>(d)].size()) {
      pos[static_cast<std::size_t>(d)] = 0;
      ++d;
    }
    if (d == nd) break;
  }
  return box;
}

}  // namespace sdcRisk

#endif  // SDCRISK_TABLE_BOXES_HPP
