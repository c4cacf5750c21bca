// Secondary cell suppression: the independent sub-problems of an audit.
//
// Plain C++17, no R headers. The suppressed cells of a table are linked by
// the table's additive relations (a relation holding two suppressed cells
// ties their feasible values); the audit's linear programs split into one per
// connected component of that graph (Hundepool et al. 2012, Section 4.4: the
// attacker's problem is separable), found here by union-find.
#ifndef SDCRISK_TABLE_COMPONENTS_HPP
#define SDCRISK_TABLE_COMPONENTS_HPP

#include <cstddef>
#include <numeric>
#include <utility>
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

}  // namespace sdcRisk

#endif
