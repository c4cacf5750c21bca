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

// Block of each cell (-1 if none) and position within its block.
inline void locate_cells(const PlanView& plan, std::vector<int>& block_of,
                         std::vector<int>& pos_of) {
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
