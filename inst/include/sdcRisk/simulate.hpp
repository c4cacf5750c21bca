// Monte Carlo replications of a PRAM release on cells and counts.
//
// A release under a plan only changes the counts S of the cells of each
// block, and given T the units of cell c_j move independently with the
// probabilities of column j: the T_j units of c_j spread over the block's
// cells by a Multinomial(T_j, P_j). So a replication draws, for every cell of
// every block, that multinomial, never touching records:
//  * IFPR block (Nayak, Zhang & You 2016, Sec. 3.3): the number of units
//    leaving c_i is Binomial(T_i, theta / T_i) (mean theta) and each leaver
//    goes to one of the other m - 1 cells with equal probabilities, one
//    uniform per leaver, so a cell costs O(theta), not O(m);
//  * matrix block: sequential conditional binomials down column j.
// The target unit B of cell c_j (if any) is drawn on its own first (one
// uniform: it stays with probability p_jj), then the other T_j - 1 units of
// c_j as above. Its correct-match probability in the replication is
// 1 / S_j if it stayed, else 0.
//
// Binomial draws are inversions of the CDF written here (no
// std::*_distribution, whose output differs between compilers): from 0 when
// the mean min(np, n(1-p)) is below 30, else a chop-down search outward from
// the mode (the support taken in a fixed order of decreasing probability
// mass), O(sd) uniforms-free steps, with the pmf at the mode from lgamma.
#ifndef SDCRISK_SIMULATE_HPP
#define SDCRISK_SIMULATE_HPP

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "plan.hpp"
#include "progress.hpp"

namespace sdcRisk {

// One Binomial(n, p) draw from one uniform of `rng`.
template <class Rng>
std::int64_t binomial_draw(std::int64_t n, double p, Rng& rng) {
  if (n <= 0 || !(p > 0.0)) return 0;
  if (p >= 1.0) return n;
  if (p > 0.5) return n - binomial_draw(n, 1.0 - p, rng);
  const double q = 1.0 - p, ratio = p / q;
  const double nd = static_cast<double>(n);
  double u = rng.uniform();
  if (nd * p < 30.0) {
    // inversion from 0: f(0) = q^n >= exp(-42), no underflow for p <= 1/2
    double f = std::exp(nd * std::log1p(-p));
    std::int64_t k = 0;
    while (u > f) {
      u -= f;
      if (k == n) return n;  // rounding left mass beyond n
      f *= ratio * static_cast<double>(n - k) / static_cast<double>(k + 1);
      ++k;
      if (f <= 0.0) return k;  // far tail underflowed: take the current point
    }
    return k;
  }
  // chop-down from the mode, taking next whichever neighbour has more mass
  const std::int64_t mode = std::min<std::int64_t>(n, static_cast<std::int64_t>(std::floor((nd + 1.0) * p)));
  const double md = static_cast<double>(mode);
  const double fm = std::exp(std::lgamma(nd + 1.0) - std::lgamma(md + 1.0) - std::lgamma(nd - md + 1.0) +
                             md * std::log(p) + (nd - md) * std::log1p(-p));
  u -= fm;
  if (u <= 0.0) return mode;
  std::int64_t lo = mode, hi = mode;
  double flo = fm, fhi = fm;
  // pmf of the next point below lo / above hi
  auto next_lo = [&]() { return lo > 0 ? flo * static_cast<double>(lo) / (static_cast<double>(n - lo + 1) * ratio) : 0.0; };
  auto next_hi = [&]() { return hi < n ? fhi * ratio * static_cast<double>(n - hi) / static_cast<double>(hi + 1) : 0.0; };
  double dlo = next_lo(), dhi = next_hi();
  while (dlo > 0.0 || dhi > 0.0) {
    if (dhi >= dlo) {
      ++hi;
      fhi = dhi;
      u -= fhi;
      if (u <= 0.0) return hi;
      dhi = next_hi();
    } else {
      --lo;
      flo = dlo;
      u -= flo;
      if (u <= 0.0) return lo;
      dlo = next_lo();
    }
  }
  return mode;  // rounding: all representable mass used up
}

struct SimulationOptions {
  int reps = 1;
  int target = -1;  // 0-based cell of the target unit B, -1 for none
};

// Sums over the replications; d_i = S_i - T_i (0 outside blocks).
struct SimulationSums {
  std::vector<double> s1, s2, s3, s4;  // sums of d, d^2, d^3, d^4 per cell
  double cm_sum = 0.0, cm_sq = 0.0;    // correct-match probability of B
  std::int64_t moved_out = 0;          // units that changed cell, all reps
};

class ReleaseSimulator {
 public:
  ReleaseSimulator(const PlanView& plan, int target) : plan_(plan), target_(target) {
    locate_cells(plan, block_of_, pos_of_);
    if (target_ >= plan.n_cells) throw std::invalid_argument("simulate: target cell out of range");
    if (target_ >= 0 && plan.counts[target_] < 1) throw std::invalid_argument("simulate: empty target cell");
    // suffix sums of every matrix column: conditional probabilities of the
    // sequential binomials without drift from repeated subtraction
    suffix_start_.assign(plan.n_blocks, -1);
    for (int b = 0; b < plan.n_blocks; ++b) {
      if (plan.is_ifpr(b)) continue;
      const int m = plan.block_size(b);
      suffix_start_[b] = static_cast<std::int64_t>(suffix_.size());
      suffix_.resize(suffix_.size() + static_cast<std::size_t>(m) * m);
      double* sf = suffix_.data() + suffix_start_[b];
      for (int c = 0; c < m; ++c) {
        double s = 0.0;
        for (int r = m - 1; r >= 0; --r) {
          s += plan.p(b, r, c);
          sf[static_cast<std::size_t>(c) * m + r] = s;
        }
      }
    }
    s_.assign(plan.n_cells, 0);
  }

  // One replication: fills the counts S of the block cells (others keep T)
  // and returns B's correct-match probability (0 without a target).
  template <class Rng>
  double replicate(Rng& rng, std::int64_t& moved) {
    for (int k = 0; k < plan_.block_start[plan_.n_blocks]; ++k) s_[plan_.block_cells[k]] = 0;
    bool b_stayed = false;
    for (int b = 0; b < plan_.n_blocks; ++b) {
      const int m = plan_.block_size(b);
      for (int pos = 0; pos < m; ++pos) {
        const int c = plan_.block_cells[plan_.block_start[b] + pos];
        std::int64_t units = plan_.counts[c];
        if (c == target_) {
          // B first: it stays with probability p_jj
          --units;
          if (rng.uniform() < plan_.p(b, pos, pos)) {
            b_stayed = true;
            ++s_[c];
          } else {
            ++moved;
            s_[plan_.block_cells[plan_.block_start[b] + draw_row(b, pos, rng)]] += 1;
          }
        }
        moved += spread(b, pos, units, rng);
      }
    }
    if (target_ < 0) return 0.0;
    if (block_of_[target_] < 0) return 1.0 / plan_.counts[target_];
    return b_stayed ? 1.0 / static_cast<double>(s_[target_]) : 0.0;
  }

  const std::vector<std::int64_t>& counts() const { return s_; }

 private:
  // Spread `units` units of the cell at position `pos` of block b; returns
  // how many left the cell.
  template <class Rng>
  std::int64_t spread(int b, int pos, std::int64_t units, Rng& rng) {
    const int m = plan_.block_size(b);
    const int* members = plan_.block_cells + plan_.block_start[b];
    if (units <= 0) return 0;
    if (plan_.is_ifpr(b)) {
      const double t = plan_.counts[members[pos]];
      const std::int64_t leave = binomial_draw(units, plan_.theta[b] / t, rng);
      s_[members[pos]] += units - leave;
      for (std::int64_t l = 0; l < leave; ++l) s_[members[other_cell(m, pos, rng)]] += 1;
      return leave;
    }
    // sequential conditional binomials down column pos
    const double* sf = suffix_.data() + suffix_start_[b] + static_cast<std::int64_t>(pos) * m;
    int last = m - 1;
    while (last > 0 && plan_.p(b, last, pos) <= 0.0) --last;
    std::int64_t rem = units, left = 0;
    for (int r = 0; r <= last && rem > 0; ++r) {
      const double pr = r == last ? 1.0 : std::min(1.0, plan_.p(b, r, pos) / sf[r]);
      const std::int64_t x = r == last ? rem : binomial_draw(rem, pr, rng);
      s_[members[r]] += x;
      rem -= x;
      if (r != pos) left += x;
    }
    return left;
  }

  // Uniform choice among the m - 1 positions other than pos.
  template <class Rng>
  static int other_cell(int m, int pos, Rng& rng) {
    int k = static_cast<int>(rng.uniform() * (m - 1));
    if (k > m - 2) k = m - 2;
    return k >= pos ? k + 1 : k;
  }

  // Row of one unit of column pos of block b (inverse CDF of the column).
  template <class Rng>
  int draw_row(int b, int pos, Rng& rng) {
    const int m = plan_.block_size(b);
    if (plan_.is_ifpr(b)) return other_cell(m, pos, rng);
    // B did not stay: choose among the other rows with their probabilities
    const double u = rng.uniform() * (1.0 - plan_.p(b, pos, pos));
    double s = 0.0;
    int row = -1;
    for (int r = 0; r < m; ++r) {
      if (r == pos || plan_.p(b, r, pos) <= 0.0) continue;
      row = r;
      s += plan_.p(b, r, pos);
      if (u < s) break;
    }
    if (row < 0) throw std::invalid_argument("simulate: unit left a cell it cannot leave");
    return row;
  }

  const PlanView& plan_;
  int target_;
  std::vector<int> block_of_, pos_of_;
  std::vector<double> suffix_;
  std::vector<std::int64_t> suffix_start_;
  std::vector<std::int64_t> s_;
};

// `reps` replications; sums of the powers of S_i - T_i per cell and of B's
// correct-match probability. `interrupt()` is called every ~10^5 units of
// work, with the share of the replications done when it takes one
// (progress.hpp).
template <class Rng, class Interrupt>
SimulationSums simulate_release(const PlanView& plan, const SimulationOptions& opt, Rng& rng,
                                Interrupt&& interrupt) {
  if (opt.reps < 1) throw std::invalid_argument("simulate: reps < 1");
  ReleaseSimulator sim(plan, opt.target);
  SimulationSums out;
  out.s1.assign(plan.n_cells, 0.0);
  out.s2 = out.s3 = out.s4 = out.s1;
  const int n_block_cells = plan.block_start[plan.n_blocks];
  std::int64_t work = 0;
  for (int rep = 0; rep < opt.reps; ++rep) {
    std::int64_t moved = 0;
    const double cm = sim.replicate(rng, moved);
    out.moved_out += moved;
    out.cm_sum += cm;
    out.cm_sq += cm * cm;
    const auto& s = sim.counts();
    for (int k = 0; k < n_block_cells; ++k) {
      const int c = plan.block_cells[k];
      const double d = static_cast<double>(s[c] - plan.counts[c]);
      const double d2 = d * d;
      out.s1[c] += d;
      out.s2[c] += d2;
      out.s3[c] += d2 * d;
      out.s4[c] += d2 * d2;
    }
    work += n_block_cells + moved + 1;
    if (work > 100000) {
      report_progress(interrupt, static_cast<double>(rep + 1) / opt.reps);
      work = 0;
    }
  }
  report_progress(interrupt, 1.0);
  return out;
}

}  // namespace sdcRisk

#endif  // SDCRISK_SIMULATE_HPP
