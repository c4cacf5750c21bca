// The algebra of a block PRAM plan in one place: transition probabilities
// (PlanView::p), E(S | T) and V(S | T) (Nayak, Zhang & You 2016, eq. 3.3,
// 3.6, 6.1, 6.5), costs (eq. 6.3) and the probability that a unit keeps its
// cell. Per-variable plans have theirs in plan_vars.hpp, built on the same
// definitions; draws are in perturb.hpp and simulate.hpp, risk in risk.hpp.
// Everything is linear in the cells of the blocks for IFPR blocks and
// quadratic only within an explicit matrix block (whose matrix the plan
// already holds).
#ifndef SDCRISK_ALGEBRA_HPP
#define SDCRISK_ALGEBRA_HPP

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "plan.hpp"

namespace sdcRisk {

// The m x m transition matrix of block b, column-major, from PlanView::p
// (for an IFPR block, p_ii = 1 - theta / T_i and p_ji = theta / ((m - 1) T_i)).
inline std::vector<double> block_matrix(const PlanView& plan, int b) {
  const int m = plan.block_size(b);
  std::vector<double> out(static_cast<std::size_t>(m) * m);
  for (int c = 0; c < m; ++c)
    for (int r = 0; r < m; ++r) out[static_cast<std::size_t>(c) * m + r] = plan.p(b, r, c);
  return out;
}

// eq. 6.3: total variance of the counts of an IFPR block of m cells with
// parameter theta and inv_sum = sum_i 1 / T_i,
//   V_t = sum_i V(S_i | T) = 2 m theta - theta^2 m / (m - 1) sum_i 1 / T_i.
inline double ifpr_total_variance(int m, double theta, double inv_sum) {
  return 2.0 * m * theta - theta * theta * (static_cast<double>(m) / (m - 1)) * inv_sum;
}

struct CellMoments {
  std::vector<double> mean, var;  // E(S_i | T), V(S_i | T) for every cell
};

// E(S | T) = P T (eq. 3.3) and the diagonal of V(S | T) (eq. 3.6); cells in
// no block keep S_i = T_i. IFPR blocks by eq. 6.1,
//   v_ii = theta (2 - theta / T_i) - theta^2 / (m - 1)^2 sum_{j != i} 1 / T_j,
// with E(S_i | T) = T_i (unbiased); matrix blocks by
//   E S_i = sum_k p_ik T_k,  v_ii = sum_k T_k p_ik (1 - p_ik).
inline CellMoments block_moments(const PlanView& plan) {
  CellMoments out;
  out.mean.assign(plan.counts, plan.counts + plan.n_cells);
  out.var.assign(plan.n_cells, 0.0);
  for (int b = 0; b < plan.n_blocks; ++b) {
    const int m = plan.block_size(b);
    const int* cells = plan.block_cells + plan.block_start[b];
    if (plan.is_ifpr(b)) {
      const double th = plan.theta[b];
      double inv = 0.0;
      for (int k = 0; k < m; ++k) inv += 1.0 / plan.counts[cells[k]];
      for (int k = 0; k < m; ++k) {
        const double t = plan.counts[cells[k]];
        out.var[cells[k]] = th * (2.0 - th / t) - th * th / ((m - 1.0) * (m - 1.0)) * (inv - 1.0 / t);
      }
      continue;
    }
    for (int r = 0; r < m; ++r) {
      double e = 0.0, v = 0.0;
      for (int c = 0; c < m; ++c) {
        const double p = plan.p(b, r, c), t = plan.counts[cells[c]];
        e += p * t;
        v += t * p * (1.0 - p);
      }
      out.mean[cells[r]] = e;
      out.var[cells[r]] = v;
    }
  }
  return out;
}

// Probability p_ii that a unit of each cell keeps its cell (1 in no block).
inline std::vector<double> block_stay(const PlanView& plan) {
  std::vector<double> out(plan.n_cells, 1.0);
  for (int b = 0; b < plan.n_blocks; ++b)
    for (int k = 0; k < plan.block_size(b); ++k) out[plan.block_cells[plan.block_start[b] + k]] = plan.p(b, k, k);
  return out;
}

// Expected changed records sum_i T_i (1 - p_ii), and the total variance
// sum_j V(S_j | T) = sum_i T_i (1 - sum_j p_ji^2), which is eq. 6.3 block by
// block for IFPR.
struct BlockCost {
  double changed = 0.0, variance = 0.0;
};

inline BlockCost block_cost(const PlanView& plan) {
  BlockCost out;
  for (int b = 0; b < plan.n_blocks; ++b) {
    const int m = plan.block_size(b);
    const int* cells = plan.block_cells + plan.block_start[b];
    if (plan.is_ifpr(b)) {
      double inv = 0.0;
      for (int k = 0; k < m; ++k) inv += 1.0 / plan.counts[cells[k]];
      out.changed += m * plan.theta[b];
      out.variance += ifpr_total_variance(m, plan.theta[b], inv);
      continue;
    }
    for (int c = 0; c < m; ++c) {
      const double t = plan.counts[cells[c]];
      double sq = 0.0;
      for (int r = 0; r < m; ++r) sq += plan.p(b, r, c) * plan.p(b, r, c);
      out.changed += t * (1.0 - plan.p(b, c, c));
      out.variance += t * (1.0 - sq);
    }
  }
  return out;
}

// V(S_D | T) for the categories D of one variable (category[i] of every
// cell, 0-based, n_cat of them), and for IFPR the bound 2 theta b of eq. 6.7
// (b cells of D in the block). A unit of cell i lands in D with probability
// q_i, independently (eq. 3.6 on the margin): V = sum_i T_i q_i (1 - q_i).
// IFPR block with b of its m cells in D, by eq. 6.5:
//   V = 2 theta b (m - b) / (m - 1)
//       - theta^2 / (m - 1)^2 (b^2 sum_{i not in D} 1/T_i + (m - b)^2 sum_{i in D} 1/T_i).
struct CategoryMoments {
  std::vector<double> var, bound;
};

inline CategoryMoments block_category_moments(const PlanView& plan, const int* category, int n_cat) {
  CategoryMoments out;
  out.var.assign(n_cat, 0.0);
  out.bound.assign(n_cat, 0.0);
  std::vector<int> b_of(n_cat, 0);
  std::vector<double> inv_of(n_cat, 0.0);
  std::vector<int> present;
  std::vector<double> q(n_cat, 0.0);
  for (int b = 0; b < plan.n_blocks; ++b) {
    const int m = plan.block_size(b);
    const int* cells = plan.block_cells + plan.block_start[b];
    present.clear();
    for (int k = 0; k < m; ++k) {
      const int d = category[cells[k]];
      if (d < 0 || d >= n_cat) throw std::invalid_argument("block_category_moments: category out of range");
      if (b_of[d]++ == 0) present.push_back(d);
      inv_of[d] += 1.0 / plan.counts[cells[k]];
    }
    if (plan.is_ifpr(b)) {
      const double th = plan.theta[b];
      double inv_all = 0.0;
      for (int d : present) inv_all += inv_of[d];
      for (int d : present) {
        const double bd = b_of[d];
        out.var[d] += 2.0 * th * bd * (m - bd) / (m - 1.0) -
                      th * th / ((m - 1.0) * (m - 1.0)) * (bd * bd * (inv_all - inv_of[d]) + (m - bd) * (m - bd) * inv_of[d]);
        out.bound[d] += 2.0 * th * bd;
      }
    } else {
      for (int c = 0; c < m; ++c) {
        for (int d : present) q[d] = 0.0;
        for (int r = 0; r < m; ++r) q[category[cells[r]]] += plan.p(b, r, c);
        const double t = plan.counts[cells[c]];
        for (int d : present) out.var[d] += t * q[d] * (1.0 - q[d]);
      }
    }
    for (int d : present) {
      b_of[d] = 0;
      inv_of[d] = 0.0;
    }
  }
  return out;
}

// Expected transitions of one variable under a block plan: out[x * n_cat +
// y] = E(number of units whose category goes from x to y) =
// sum_i T_i [cat(i) = x] sum_r p_ri [cat(r) = y]. In an IFPR block every
// cell keeps T_i - theta units and sends theta / (m - 1) to each other cell
// (Section 3.3), whatever T_i, so a block costs O(categories present^2).
inline std::vector<double> block_category_transitions(const PlanView& plan, const int* category, int n_cat) {
  std::vector<double> out(static_cast<std::size_t>(n_cat) * n_cat, 0.0);
  for (int c = 0; c < plan.n_cells; ++c) {
    const int x = category[c];
    if (x < 0 || x >= n_cat) throw std::invalid_argument("block_category_transitions: category out of range");
    out[static_cast<std::size_t>(x) * n_cat + x] += plan.counts[c];
  }
  std::vector<int> nv(n_cat, 0), present;
  for (int b = 0; b < plan.n_blocks; ++b) {
    const int m = plan.block_size(b);
    const int* cells = plan.block_cells + plan.block_start[b];
    if (plan.is_ifpr(b)) {
      present.clear();
      for (int k = 0; k < m; ++k)
        if (nv[category[cells[k]]]++ == 0) present.push_back(category[cells[k]]);
      const double th = plan.theta[b], share = th / (m - 1.0);
      for (int x : present) {
        for (int y : present) out[static_cast<std::size_t>(x) * n_cat + y] += share * (static_cast<double>(nv[x]) * nv[y] - (x == y ? nv[x] : 0));
        out[static_cast<std::size_t>(x) * n_cat + x] -= th * nv[x];
      }
      for (int x : present) nv[x] = 0;
      continue;
    }
    for (int c = 0; c < m; ++c) {
      const int x = category[cells[c]];
      const double t = plan.counts[cells[c]];
      out[static_cast<std::size_t>(x) * n_cat + x] -= t;  // replaced by the column
      for (int r = 0; r < m; ++r) out[static_cast<std::size_t>(x) * n_cat + category[cells[r]]] += t * plan.p(b, r, c);
    }
  }
  return out;
}

}  // namespace sdcRisk

#endif  // SDCRISK_ALGEBRA_HPP
