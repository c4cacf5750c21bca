// Exact checks of blocks against a risk bound per cell, the ground on which
// the least-damage design (ifpr(method = "optimal")) stands.
//
// A cell t may carry its own bound b_t (Goal 3: R_t(a, t) <= b_t for every
// a; Goals 1-2: a = 1). Since R_t(a, t) <= 1 / a, only a < 1 / b_t can break
// the bound, so each cell is checked on a = 1..ceil(1 / b_t): exactly, with
// the target models of risk.hpp, and no pruning. Blocks are independent
// (a unit never leaves its block), so a plan meets its bounds iff every
// block does and every cell outside the blocks does (R = 1 / T at a = T).
#ifndef SDCRISK_DESIGN_OPTIMAL_HPP
#define SDCRISK_DESIGN_OPTIMAL_HPP

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#include "plan.hpp"
#include "risk.hpp"

namespace sdcRisk {

// The worst cell of a check: the largest R_t(a, t) / b_t found, with its cell
// (a plan's cell id, or a position within a block), a and R. ratio <= 1 means
// every bound holds.
struct BoundCheck {
  double ratio = 0.0;
  int cell = -1;
  int a = -1;
  double risk = kNaN;
};

// The values of a to examine for a cell of bound b: a = 1 for Goals 1-2;
// for Goal 3 up to ceil(1 / b) (beyond, R <= 1 / a <= b), capped at the
// largest possible S_t.
inline int bound_a_limit(double b, std::int64_t max_s, Goal goal) {
  if (goal != Goal::AllMatches) return 1;
  const double lim = std::ceil(1.0 / b);
  return static_cast<int>(std::max<double>(1.0, std::min<double>(lim, static_cast<double>(max_s))));
}

namespace detail {

inline void offer_ratio(BoundCheck& best, const TargetRisk& tr, double b, int cell, int A) {
  for (int a = 1; a <= A; ++a) {
    const double r = tr.risk[a - 1];
    if (std::isnan(r)) continue;
    const double ratio = r / b;
    if (ratio > best.ratio || best.cell < 0) {
      best.ratio = ratio;
      best.cell = cell;
      best.a = a;
      best.risk = r;
    }
  }
}

inline void merge_check(BoundCheck& best, const BoundCheck& c) {
  if (c.cell >= 0 && (best.cell < 0 || c.ratio > best.ratio)) best = c;
}

}  // namespace detail

// Block b of `plan`, every cell t against bound[t] (indexed by the plan's
// cell ids). In an IFPR block the cells of one count share their risks
// (eq. 4.11), so each count is checked once, against the smallest bound of
// its cells; `cache` shares the results of IFPR blocks of the same design.
using IfprCheckKey = std::tuple<int, double, std::vector<std::pair<int, std::int64_t>>, int, double>;

inline BoundCheck block_bound_check(const PlanView& plan, int b, const double* bound, Goal goal,
                                    std::map<IfprCheckKey, BoundCheck>* cache = nullptr) {
  BoundCheck best;
  const int start = plan.block_start[b], m = plan.block_size(b);
  if (!plan.is_ifpr(b)) {
    for (int jj = 0; jj < m; ++jj) {
      const int cell = plan.block_cells[start + jj];
      if (goal == Goal::SampleUniques && plan.counts[cell] != 1) continue;
      const TargetModel tm = matrix_target(plan, b, jj);
      const int A = bound_a_limit(bound[cell], tm.max_s, goal);
      detail::offer_ratio(best, evaluate_target(tm, A, false), bound[cell], cell, A);
    }
    return best;
  }
  // the smallest bound of each count, and a cell that has it
  std::map<int, std::pair<double, int>> low;
  for (int k = start; k < start + m; ++k) {
    const int cell = plan.block_cells[k];
    auto it = low.find(plan.counts[cell]);
    if (it == low.end()) low.emplace(plan.counts[cell], std::make_pair(bound[cell], cell));
    else if (bound[cell] < it->second.first) it->second = std::make_pair(bound[cell], cell);
  }
  const auto groups = count_groups(plan, b);
  for (const auto& g : low) {
    const int f = g.first;
    const double bf = g.second.first;
    if (goal == Goal::SampleUniques && f != 1) continue;
    const IfprCheckKey key = std::make_tuple(m, plan.theta[b], groups, f, bf);
    BoundCheck c;
    auto hit = cache ? cache->find(key) : std::map<IfprCheckKey, BoundCheck>::iterator();
    if (cache && hit != cache->end()) {
      c = hit->second;
    } else {
      const TargetModel tm = ifpr_target(plan, b, groups, f);
      const int A = bound_a_limit(bf, tm.max_s, goal);
      detail::offer_ratio(c, evaluate_target(tm, A, false), bf, g.second.second, A);
      if (cache) cache->emplace(key, c);
    }
    c.cell = g.second.second;
    detail::merge_check(best, c);
  }
  return best;
}

// The whole plan against one bound per cell: every block, and every cell
// outside the blocks (Goal 3: R = 1 / T at a = T; Goals 1-2: a singleton
// has R = 1 at a = 1).
template <class Interrupt>
BoundCheck plan_bound_check(const PlanView& plan, const double* bound, Goal goal, Interrupt&& interrupt) {
  std::vector<int> block_of, pos_of;
  locate_cells(plan, block_of, pos_of);
  BoundCheck best;
  for (int j = 0; j < plan.n_cells; ++j) {
    if (!(bound[j] > 0.0)) throw std::invalid_argument("bound check: bounds must be positive");
    if (block_of[j] >= 0) continue;
    const int t = plan.counts[j];
    BoundCheck c;
    if (goal == Goal::AllMatches) c = BoundCheck{1.0 / t / bound[j], j, t, 1.0 / t};
    else if (t == 1) c = BoundCheck{1.0 / bound[j], j, 1, 1.0};
    detail::merge_check(best, c);
  }
  std::map<IfprCheckKey, BoundCheck> cache;
  for (int b = 0; b < plan.n_blocks; ++b) {
    if (b % 256 == 0) interrupt();
    detail::merge_check(best, block_bound_check(plan, b, bound, goal, &cache));
  }
  return best;
}

// ---------------------------------------------------------------------------
// Damage: what a move costs. A unit that moves from cell j to cell i changes
// every key in which the cells differ; a key may be ordered (age), its
// values then numbers and a change costing |x_i - x_j|. A missing value
// (NaN) of an ordered key is one unit away from any value.

struct KeySpace {
  int n_cells = 0;
  std::vector<const int*> codes;     // per key: the category code of every cell
  std::vector<const double*> value;  // per key: the value of every cell if ordered, else nullptr

  int n_keys() const { return static_cast<int>(codes.size()); }
  bool differ(int k, int i, int j) const { return codes[k][i] != codes[k][j]; }
  // The distance on key k between cells i and j (0 when they agree).
  double distance(int k, int i, int j) const {
    if (!differ(k, i, j)) return 0.0;
    if (value[k] == nullptr) return 1.0;
    const double a = value[k][i], b = value[k][j];
    if (std::isnan(a) || std::isnan(b)) return 1.0;
    return std::fabs(a - b);
  }
};

// Expected damage of a block plan, key by key: the expected number of
// records whose key k changes, and the expected distance they move on it
// (equal for an unordered key).
struct KeyDamage {
  std::vector<double> changed, distance;
};

namespace detail {

// Sum over ordered pairs (i, j), i != j, of the cells `cells` of 1[differ]
// and of the distance on key k, in O(m log m): categories counted, ordered
// values sorted (sum_{i<j} |x_i - x_j| = sum_r x_(r) (2 r - m - 1)).
inline std::pair<double, double> pair_sums(const KeySpace& ks, int k, const int* cells, int m) {
  std::vector<int> code(cells, cells + m);
  for (int& c : code) c = ks.codes[k][c];
  std::sort(code.begin(), code.end());
  double same = 0.0;
  for (int r = 0; r < m;) {
    int e = r;
    while (e < m && code[e] == code[r]) ++e;
    same += static_cast<double>(e - r) * (e - r);
    r = e;
  }
  const double differ = static_cast<double>(m) * m - same;
  if (ks.value[k] == nullptr) return {differ, differ};
  std::vector<double> x;
  int missing = 0;
  for (int r = 0; r < m; ++r) {
    const double v = ks.value[k][cells[r]];
    if (std::isnan(v)) ++missing;
    else x.push_back(v);
  }
  std::sort(x.begin(), x.end());
  const double n = static_cast<double>(x.size());
  double dist = 0.0;
  for (std::size_t r = 0; r < x.size(); ++r) dist += x[r] * (2.0 * r + 1.0 - n);
  return {differ, 2.0 * dist + 2.0 * missing * (m - missing)};
}

}  // namespace detail

inline KeyDamage block_key_damage(const PlanView& plan, const KeySpace& ks) {
  KeyDamage out;
  out.changed.assign(ks.n_keys(), 0.0);
  out.distance.assign(ks.n_keys(), 0.0);
  for (int b = 0; b < plan.n_blocks; ++b) {
    const int m = plan.block_size(b);
    const int* cells = plan.block_cells + plan.block_start[b];
    if (plan.is_ifpr(b)) {
      // every ordered pair carries the flow theta / (m - 1) (Section 3.3)
      const double flow = plan.theta[b] / (m - 1);
      for (int k = 0; k < ks.n_keys(); ++k) {
        const auto s = detail::pair_sums(ks, k, cells, m);
        out.changed[k] += flow * s.first;
        out.distance[k] += flow * s.second;
      }
      continue;
    }
    for (int c = 0; c < m; ++c)
      for (int r = 0; r < m; ++r) {
        if (r == c) continue;
        const double flow = plan.counts[cells[c]] * plan.p(b, r, c);
        for (int k = 0; k < ks.n_keys(); ++k) {
          if (!ks.differ(k, cells[r], cells[c])) continue;
          out.changed[k] += flow;
          out.distance[k] += flow * ks.distance(k, cells[r], cells[c]);
        }
      }
  }
  return out;
}

}  // namespace sdcRisk

#endif  // SDCRISK_DESIGN_OPTIMAL_HPP
