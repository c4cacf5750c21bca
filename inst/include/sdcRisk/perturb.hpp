// Drawing the perturbed cell of every record under a PRAM plan.
//
// The core only asks its random number generator for `double uniform()` in
// (0, 1); the R glue answers with R's own generator, so set.seed() reproduces
// a release on every platform. Each record in a block uses exactly one
// uniform, drawn in record order, and its new cell is the inverse of the
// cumulative distribution of its cell's column, rows in block order. No
// std::*_distribution is used: their output differs between compilers.
#ifndef SDCRISK_PERTURB_HPP
#define SDCRISK_PERTURB_HPP

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "plan.hpp"

namespace sdcRisk {

class PramSampler {
 public:
  explicit PramSampler(const PlanView& plan) : plan_(plan) {
    std::vector<int> block_of, pos_of;
    locate_cells(plan, block_of, pos_of);
    // one compact record per cell: a single memory access per unit drawn
    where_.resize(plan.n_cells);
    for (int c = 0; c < plan.n_cells; ++c) where_[c] = {block_of[c], pos_of[c], plan.counts[c]};
    cum_start_.assign(plan.n_blocks, -1);
    for (int b = 0; b < plan.n_blocks; ++b) {
      if (plan.is_ifpr(b)) continue;
      const int m = plan.block_size(b);
      cum_start_[b] = static_cast<std::int64_t>(cum_.size());
      for (int c = 0; c < m; ++c) {
        double s = 0.0;
        for (int r = 0; r < m; ++r) {
          s += plan.p(b, r, c);
          cum_.push_back(s);
        }
      }
    }
  }

  bool in_block(int cell) const {
    SDCRISK_ASSERT(cell < static_cast<int>(where_.size()), "pram_draw: record cell id out of range");
    return cell >= 0 && where_[cell].block >= 0;
  }

  // New cell of a unit of `cell` (which must be in a block) given u in (0, 1).
  int draw(int cell, double u) const {
    const Where w = where_[cell];
    const int b = w.block, pos = w.pos;
    const int m = plan_.block_size(b);
    const int* members = plan_.block_cells + plan_.block_start[b];
    int row;
    if (plan_.is_ifpr(b)) {
      const double t = w.count, theta = plan_.theta[b];
      const double q = theta / ((m - 1) * t), stay = 1.0 - theta / t;
      const double before = pos * q;  // mass of the rows above the diagonal
      if (u < before) {
        row = std::min(pos - 1, static_cast<int>(u / q));
      } else if (u < before + stay || q <= 0.0) {
        row = pos;
      } else {
        row = std::min(m - 1, pos + 1 + static_cast<int>((u - before - stay) / q));
      }
    } else {
      const double* cum = cum_.data() + cum_start_[b] + static_cast<std::int64_t>(pos) * m;
      row = static_cast<int>(std::upper_bound(cum, cum + m, u) - cum);
      // u beyond the last cumulative value (rounding): the last row with mass
      if (row >= m) {
        row = m - 1;
        while (row > 0 && plan_.p(b, row, pos) <= 0.0) --row;
      }
    }
    return members[row];
  }

 private:
  struct Where { int block, pos, count; };
  const PlanView& plan_;
  std::vector<Where> where_;
  std::vector<double> cum_;
  std::vector<std::int64_t> cum_start_;
};

// New cell of every record (cells are 0-based, -1 = left out and untouched).
template <class Rng, class Interrupt>
std::vector<int> pram_draw(const PlanView& plan, const int* cell_of_record, std::size_t n,
                           Rng& rng, Interrupt&& interrupt) {
  PramSampler sampler(plan);
  std::vector<int> out(cell_of_record, cell_of_record + n);
  for (std::size_t i = 0; i < n; ++i) {
    if ((i & 0xFFFFF) == 0 && i > 0) interrupt();
    const int c = cell_of_record[i];
    if (!sampler.in_block(c)) continue;
    out[i] = sampler.draw(c, rng.uniform());
  }
  return out;
}

}  // namespace sdcRisk

#endif  // SDCRISK_PERTURB_HPP
