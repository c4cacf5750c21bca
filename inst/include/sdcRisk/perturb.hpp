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
#include <stdexcept>
#include <memory>
#include <vector>

#include "memory.hpp"
#include "plan.hpp"
#include "progress.hpp"

namespace sdcRisk {

class PramSampler {
 public:
  explicit PramSampler(const PlanView& plan) : plan_(plan) {
#ifdef SDCRISK_DEBUG
    check_plan(plan);
#endif
    // one compact record per cell in a block: a single memory access per
    // unit drawn (built directly, without locate_cells()'s two
    // temporaries). Entries of cells outside blocks are never read (the
    // bitmap in_block_ says which cells are in a block), so the array is
    // not initialised: only the pages of block cells are ever written.
    n_cells_ = plan.n_cells;
    where_.reset(new Where[static_cast<std::size_t>(std::max(plan.n_cells, 1))]);
    advise_huge_pages(where_.get(), static_cast<std::size_t>(std::max(plan.n_cells, 1)) * sizeof(Where));
    in_block_.assign((static_cast<std::size_t>(plan.n_cells) + 63) / 64, 0);
    for (int b = 0; b < plan.n_blocks; ++b)
      for (int k = plan.block_start[b]; k < plan.block_start[b + 1]; ++k) {
        const int c = plan.block_cells[k];
        if (c < 0 || c >= plan.n_cells) throw std::invalid_argument("plan: cell id out of range");
        if (in_block(c)) throw std::invalid_argument("plan: cell in two blocks");
        where_[c] = Where{b, k - plan.block_start[b], plan.counts[c]};
        in_block_[static_cast<std::size_t>(c) >> 6] |= std::uint64_t(1) << (c & 63);
      }
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

  // From a bitmap of the cells (one bit each, in cache at millions of
  // cells), so that records outside blocks cost no miss in where_.
  bool in_block(int cell) const {
    if (cell >= n_cells_) throw std::invalid_argument("pram_draw: record cell id out of range");
    return cell >= 0 && ((in_block_[static_cast<std::size_t>(cell) >> 6] >> (cell & 63)) & 1U);
  }

  // A hint that `cell` will be drawn soon: records come in random cell
  // order, so fetching its entry ahead hides the cache miss.
  void prefetch(int cell) const {
#if defined(__GNUC__) || defined(__clang__)
    if (cell >= 0 && cell < n_cells_ &&
        ((in_block_[static_cast<std::size_t>(cell) >> 6] >> (cell & 63)) & 1U))
      __builtin_prefetch(&where_[cell]);
#else
    (void)cell;
#endif
  }

  // New cell of a unit of `cell` (which must be in a block) given u in (0, 1).
  int draw(int cell, double u) const {
    int own = 0;
    const int s = draw_slot(cell, u, own);
    return s == own ? cell : plan_.block_cells[s];
  }

  // The same as a slot, the new cell's position in plan.block_cells; `own`
  // receives the slot of `cell` itself, so that a caller sees whether the
  // unit moves without reading block_cells (a random access per unit; see
  // pram_draw_moves()).
  int draw_slot(int cell, double u, int& own) const {
    const Where w = where_[cell];
    const int b = w.block, pos = w.pos;
    const int m = plan_.block_size(b);
    const int first = plan_.block_start[b];
    own = first + pos;
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
    return first + row;
  }

 private:
  struct Where { int block, pos, count; };
  const PlanView& plan_;
  int n_cells_ = 0;
  std::unique_ptr<Where[]> where_;
  std::vector<std::uint64_t> in_block_;
  std::vector<double> cum_;
  std::vector<std::int64_t> cum_start_;
};

// Draws the new cell of every record in a block, in record order (one
// uniform each): `cell_of(i)` gives record i's 0-based cell (-1: left out,
// untouched) and `sink(i, cell, own, slot)` receives every record drawn,
// with the slots (positions in plan.block_cells) of its own cell and of
// its new cell. Records outside blocks get no call and no uniform.
template <class CellOf, class Rng, class Interrupt, class Sink>
void pram_draw_slots(const PlanView& plan, std::size_t n, CellOf&& cell_of, Rng& rng, Interrupt&& interrupt,
                     Sink&& sink) {
  PramSampler sampler(plan);
  constexpr std::size_t ahead = 32;
  for (std::size_t i = 0; i < n; ++i) {
    if ((i & 0xFFFFF) == 0 && i > 0) report_progress(interrupt, static_cast<double>(i) / static_cast<double>(n));
    if (i + ahead < n) sampler.prefetch(cell_of(i + ahead));
    const int c = cell_of(i);
    if (!sampler.in_block(c)) continue;
    int own = 0;
    const int slot = sampler.draw_slot(c, rng.uniform(), own);
    sink(i, c, own, slot);
  }
}

// The same with `sink(i, old, new)`, the records' 0-based cells.
template <class CellOf, class Rng, class Interrupt, class Sink>
void pram_draw_each(const PlanView& plan, std::size_t n, CellOf&& cell_of, Rng& rng, Interrupt&& interrupt,
                    Sink&& sink) {
  const int* members = plan.block_cells;
  pram_draw_slots(plan, n, cell_of, rng, interrupt, [&sink, members](std::size_t i, int c, int own, int slot) {
    sink(i, c, slot == own ? c : members[slot]);
  });
}

// The records that move, in record order (the same uniforms as
// pram_draw_each(), so the same release): push(i, slot) for each, slot
// being the position of its new cell in plan.block_cells. The caller reads
// the new cells afterwards, in a pass whose reads do not wait on each other
// (the processor overlaps those cache misses), where reading them inside
// the draws costs one dependent miss per unit drawn.
template <class CellOf, class Rng, class Interrupt, class Push>
void pram_draw_moves(const PlanView& plan, std::size_t n, CellOf&& cell_of, Rng& rng, Interrupt&& interrupt,
                     Push&& push) {
  pram_draw_slots(plan, n, cell_of, rng, interrupt, [&push](std::size_t i, int, int own, int slot) {
    if (slot != own) push(i, slot);
  });
}

// New cell of every record (cells are 0-based, -1 = left out and untouched).
template <class Rng, class Interrupt>
std::vector<int> pram_draw(const PlanView& plan, const int* cell_of_record, std::size_t n,
                           Rng& rng, Interrupt&& interrupt) {
  std::vector<int> out(cell_of_record, cell_of_record + n);
  pram_draw_each(
      plan, n, [&](std::size_t i) { return cell_of_record[i]; }, rng, interrupt,
      [&](std::size_t i, int, int to) { out[i] = to; });
  return out;
}

}  // namespace sdcRisk

#endif  // SDCRISK_PERTURB_HPP
