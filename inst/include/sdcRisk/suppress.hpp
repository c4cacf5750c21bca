// Secondary cell suppression: the independent sub-problems of an audit.
//
// Plain C++17, no R headers. The suppressed cells of a table are linked by
// the table's additive relations (a relation holding two suppressed cells
// ties their feasible values); the audit's linear programs split into one per
// connected component of that graph (Hundepool et al. 2012, Section 4.4: the
// attacker's problem is separable), found here by union-find.
#ifndef SDCRISK_SUPPRESS_HPP
#define SDCRISK_SUPPRESS_HPP

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <queue>
#include <stdexcept>
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

// Candidate step of secondary suppression by Gaussian elimination
// (Langsrud 2024). The table is y = X' z: column j of X (rows: the inner
// cells, entries 0/1) says which inner cells cell j adds up. A suppressed
// cell j is disclosed exactly, from the published cells P and additivity
// alone, iff x_j lies in span{x_p : p in P}. The candidates are published
// one at a time in the given order (the cells most costly to suppress
// first); each is reduced against an echelon basis of the published columns
// and is suppressed instead when publishing it would put a primary column
// into the span, i.e. when some reduced primary column is a multiple of the
// reduced candidate. Every suppression is thus needed against the cells
// published before it, and no primary cell is in the final span.
//
// Exact sparse integer elimination: vectors keep a gcd of 1 and the result
// is exact; if an entry would leave +-2^40, or the work exceeds `max_work`
// entry operations (fill-in on large tables), the step stops with
// `completed = false` and the caller falls back to another method.
struct GaussResult {
  bool completed = false;
  // per entry of `order`: 0 published, else 1 + the position in `primary`
  // of the cell publishing it would disclose
  std::vector<int> suppress;
};

namespace gauss_detail {

struct SparseVec {
  std::vector<int> idx;  // sorted rows
  std::vector<std::int64_t> val;
  std::size_t size() const { return idx.size(); }
  std::int64_t at(int r) const {
    auto it = std::lower_bound(idx.begin(), idx.end(), r);
    if (it == idx.end() || *it != r) return 0;
    return val[static_cast<std::size_t>(it - idx.begin())];
  }
};

constexpr std::int64_t kLimit = std::int64_t{1} << 40;
__extension__ typedef __int128 wide;  // products of two entries below kLimit

inline wide gcd_wide(wide a, wide b) {
  a = a < 0 ? -a : a;
  b = b < 0 ? -b : b;
  while (b) {
    const wide t = a % b;
    a = b;
    b = t;
  }
  return a;
}

// a * u - b * w, normalised to gcd 1; false if an entry leaves the range
inline bool combine(const SparseVec& u, std::int64_t a, const SparseVec& w, std::int64_t b,
                    SparseVec& out, std::vector<wide>& buf, std::size_t& work) {
  out.idx.clear();
  buf.clear();
  std::size_t i = 0, k = 0;
  while (i < u.size() || k < w.size()) {
    int r;
    wide x;
    if (k == w.size() || (i < u.size() && u.idx[i] < w.idx[k])) {
      r = u.idx[i];
      x = static_cast<wide>(a) * u.val[i++];
    } else if (i == u.size() || w.idx[k] < u.idx[i]) {
      r = w.idx[k];
      x = -static_cast<wide>(b) * w.val[k++];
    } else {
      r = u.idx[i];
      x = static_cast<wide>(a) * u.val[i++] - static_cast<wide>(b) * w.val[k++];
    }
    if (x == 0) continue;
    out.idx.push_back(r);
    buf.push_back(x);
  }
  work += u.size() + w.size();
  wide g = 0;
  for (auto v : buf) g = gcd_wide(g, v);
  out.val.resize(buf.size());
  for (std::size_t m = 0; m < buf.size(); ++m) {
    const wide v = g > 1 ? buf[m] / g : buf[m];
    if (v > kLimit || v < -kLimit) return false;
    out.val[m] = static_cast<std::int64_t>(v);
  }
  return true;
}

inline bool parallel(const SparseVec& u, const SparseVec& w) {
  if (u.size() != w.size() || u.size() == 0) return false;
  if (u.idx != w.idx) return false;
  const wide a = u.val[0], b = w.val[0];
  for (std::size_t i = 1; i < u.size(); ++i)
    if (a * w.val[i] != b * u.val[i]) return false;
  return true;
}

}  // namespace gauss_detail

// X in compressed columns (col_start of length n_col + 1, 0-based rows in
// [0, n_row)); `primary`: columns to protect; `order`: candidate columns,
// first published first.
inline GaussResult gauss_candidates(int n_row, const std::vector<int>& col_start,
                                    const std::vector<int>& row, const std::vector<int>& primary,
                                    const std::vector<int>& order, double max_work,
                                    const std::function<void()>& interrupt = nullptr) {
  using namespace gauss_detail;
  const int n_col = static_cast<int>(col_start.size()) - 1;
  if (n_col < 0 || col_start.front() != 0 || col_start.back() != static_cast<int>(row.size()))
    throw std::invalid_argument("malformed column pointers");
  for (int r : row)
    if (r < 0 || r >= n_row) throw std::invalid_argument("row out of range");
  auto column = [&](int j) {
    if (j < 0 || j >= n_col) throw std::invalid_argument("column out of range");
    SparseVec v;
    v.idx.assign(row.begin() + col_start[j], row.begin() + col_start[j + 1]);
    std::sort(v.idx.begin(), v.idx.end());
    v.val.assign(v.idx.size(), 1);
    return v;
  };
  // future degree of each row: candidates not yet processed that hold it;
  // pivoting on a row few later columns hold keeps fill-in down
  std::vector<int> degree(static_cast<std::size_t>(n_row), 0);
  for (int j : order) {
    if (j < 0 || j >= n_col) throw std::invalid_argument("column out of range");
    for (int k = col_start[j]; k < col_start[j + 1]; ++k) ++degree[row[k]];
  }
  GaussResult res;
  res.suppress.assign(order.size(), 0);
  std::vector<SparseVec> basis;
  std::vector<int> pivot_of(static_cast<std::size_t>(n_row), -1), pivot_cell;
  std::size_t work = 0;
  SparseVec tmp;
  std::vector<wide> buf;
  std::vector<std::size_t> seen;
  std::size_t stamp = 0;
  std::priority_queue<int, std::vector<int>, std::greater<int>> heap;
  // reduce v against the basis, pivots in basis order (each basis vector is
  // zero on the pivots before it); false when out of range or budget
  auto reduce = [&](SparseVec& v) {
    ++stamp;
    seen.resize(basis.size(), 0);
    auto enqueue = [&](const SparseVec& x) {
      for (int c : x.idx) {
        const int b = pivot_of[c];
        if (b >= 0 && seen[b] != stamp) {
          heap.push(b);
          seen[b] = stamp;
        }
      }
    };
    enqueue(v);
    while (!heap.empty()) {
      const int b = heap.top();
      heap.pop();
      const std::int64_t c = v.at(pivot_cell[b]);
      if (c == 0) continue;
      const std::int64_t p = basis[b].at(pivot_cell[b]);
      if (!combine(v, p, basis[b], c, tmp, buf, work) || static_cast<double>(work) > max_work) {
        heap = decltype(heap)();
        return false;
      }
      std::swap(v, tmp);
      enqueue(v);
    }
    return true;
  };
  auto pivot_entry = [&](const SparseVec& v) {
    std::size_t best = 0;
    for (std::size_t i = 1; i < v.size(); ++i) {
      const std::int64_t a = std::llabs(v.val[i]), b = std::llabs(v.val[best]);
      if (a < b || (a == b && degree[v.idx[i]] < degree[v.idx[best]])) best = i;
    }
    return best;
  };
  auto add = [&](SparseVec&& v, std::size_t at) {
    pivot_of[v.idx[at]] = static_cast<int>(basis.size());
    pivot_cell.push_back(v.idx[at]);
    basis.push_back(std::move(v));
  };
  std::vector<SparseVec> prim;
  prim.reserve(primary.size());
  for (int j : primary) {
    prim.push_back(column(j));
    if (!reduce(prim.back())) return res;
  }
  for (std::size_t t = 0; t < order.size(); ++t) {
    if (interrupt && t % 256 == 0) interrupt();
    const int j = order[t];
    for (int k = col_start[j]; k < col_start[j + 1]; ++k) --degree[row[k]];
    SparseVec v = column(j);
    if (!reduce(v)) return res;
    if (v.size() == 0) continue;  // already determined by the published cells
    int discloses = 0;
    for (std::size_t q = 0; q < prim.size() && !discloses; ++q)
      if (parallel(prim[q], v)) discloses = static_cast<int>(q) + 1;
    if (discloses) {
      res.suppress[t] = discloses;
      continue;
    }
    const std::size_t at = pivot_entry(v);
    const int pc = v.idx[at];
    const std::int64_t pv = v.val[at];
    for (auto& r : prim) {
      const std::int64_t c = r.at(pc);
      if (c == 0) continue;
      if (!combine(r, pv, v, c, tmp, buf, work)) return res;
      std::swap(r, tmp);
    }
    add(std::move(v), at);
  }
  res.completed = true;
  return res;
}

}  // namespace sdcRisk

#endif
