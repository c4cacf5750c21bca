// A PRAM plan over the nonempty cells of a cross-classification: disjoint
// blocks, each with an IFPR parameter theta (Nayak, Zhang & You 2016, Sec. 3.3)
// or an explicit column-stochastic matrix p_ij = P(Z = c_i | X = c_j).
// Cells in no block are never changed. Views only: the memory belongs to the
// caller.
#ifndef SDCRISK_PLAN_HPP
#define SDCRISK_PLAN_HPP

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "assert.hpp"

namespace sdcRisk {

struct PlanView {
  int n_cells = 0;
  const int* counts = nullptr;        // T_i, length n_cells
  int n_blocks = 0;
  const int* block_start = nullptr;   // length n_blocks + 1, into block_cells
  const int* block_cells = nullptr;   // 0-based cell ids, block by block
  const double* theta = nullptr;      // length n_blocks; NaN for a matrix block
  const double* matrix = nullptr;     // matrices of matrix blocks, column-major, concatenated
  const std::int64_t* matrix_start = nullptr;  // length n_blocks; -1 for an IFPR block

  int block_size(int b) const { return block_start[b + 1] - block_start[b]; }
  bool is_ifpr(int b) const { return matrix_start == nullptr || matrix_start[b] < 0; }
  // Entry p_{rc} of block b (r, c are positions within the block).
  double p(int b, int r, int c) const {
    if (is_ifpr(b)) {
      const int m = block_size(b);
      const double t = counts[block_cells[block_start[b] + c]];
      return r == c ? 1.0 - theta[b] / t : theta[b] / ((m - 1) * t);
    }
    const int m = block_size(b);
    return matrix[matrix_start[b] + static_cast<std::int64_t>(c) * m + r];
  }
};

// Structural preconditions of a plan, in time linear in its size: counts
// of at least 1, blocks of at least two cells with increasing offsets,
// theta in [0, min T] of its block, matrix blocks inside the matrix vector
// with entries in [0, 1]. Throws std::invalid_argument naming the first
// violation. Every entry point of the core reaches it through
// locate_cells() in debug builds (SDCRISK_DEBUG).
inline void check_plan(const PlanView& plan) {
  if (plan.n_cells < 0 || plan.n_blocks < 0) throw std::invalid_argument("plan: negative size");
  if (plan.n_cells > 0 && plan.counts == nullptr) throw std::invalid_argument("plan: no counts");
  for (int c = 0; c < plan.n_cells; ++c)
    if (plan.counts[c] < 1) throw std::invalid_argument("plan: cell count below 1");
  if (plan.n_blocks == 0) return;
  if (plan.block_start == nullptr || plan.block_cells == nullptr || plan.theta == nullptr)
    throw std::invalid_argument("plan: missing block vectors");
  if (plan.block_start[0] != 0) throw std::invalid_argument("plan: block_start[0] != 0");
  for (int b = 0; b < plan.n_blocks; ++b)
    if (plan.block_start[b + 1] - plan.block_start[b] < 2)
      throw std::invalid_argument("plan: block with fewer than two cells");
  if (plan.block_start[plan.n_blocks] > plan.n_cells)
    throw std::invalid_argument("plan: more block cells than cells");
  std::vector<char> seen(static_cast<std::size_t>(plan.n_cells), 0);
  for (int k = 0; k < plan.block_start[plan.n_blocks]; ++k) {
    const int c = plan.block_cells[k];
    if (c < 0 || c >= plan.n_cells) throw std::invalid_argument("plan: cell id out of range");
    if (seen[c]) throw std::invalid_argument("plan: cell in two blocks");
    seen[c] = 1;
  }
  std::int64_t matrix_end = 0;
  for (int b = 0; b < plan.n_blocks; ++b) {
    const int m = plan.block_size(b);
    if (plan.is_ifpr(b)) {
      const double th = plan.theta[b];
      if (!(th >= 0)) throw std::invalid_argument("plan: IFPR theta missing or negative");
      for (int k = plan.block_start[b]; k < plan.block_start[b + 1]; ++k)
        if (th > plan.counts[plan.block_cells[k]]) throw std::invalid_argument("plan: theta above a count of its block");
      continue;
    }
    if (plan.matrix == nullptr) throw std::invalid_argument("plan: no matrix entries");
    const std::int64_t start = plan.matrix_start[b];
    if (start < matrix_end) throw std::invalid_argument("plan: matrix blocks overlap");
    matrix_end = start + static_cast<std::int64_t>(m) * m;
    for (std::int64_t e = start; e < matrix_end; ++e)
      if (!(plan.matrix[e] >= 0.0 && plan.matrix[e] <= 1.0))
        throw std::invalid_argument("plan: matrix entry outside [0, 1]");
  }
}

// Block of each cell (-1 if none) and position within its block.
inline void locate_cells(const PlanView& plan, std::vector<int>& block_of,
                         std::vector<int>& pos_of) {
#ifdef SDCRISK_DEBUG
  check_plan(plan);
#endif
  block_of.assign(plan.n_cells, -1);
  pos_of.assign(plan.n_cells, -1);
  for (int b = 0; b < plan.n_blocks; ++b) {
    for (int k = plan.block_start[b]; k < plan.block_start[b + 1]; ++k) {
      const int c = plan.block_cells[k];
      if (c < 0 || c >= plan.n_cells) throw std::invalid_argument("plan: cell id out of range");
      if (block_of[c] >= 0) throw std::invalid_argument("plan: cell in two blocks");
      block_of[c] = b;
      pos_of[c] = k - plan.block_start[b];
    }
  }
}

}  // namespace sdcRisk

#endif  // SDCRISK_PLAN_HPP
