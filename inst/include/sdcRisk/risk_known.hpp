// Exact risk of a block plan (IFPR and explicit blocks) for an intruder who
// matches on only some keys (Nayak, Zhang & You 2016, eq. 4.3 with the
// target cell replaced by a set of cells).
//
// The intruder knows the target B's values of some keys; D is the set of
// cells sharing them and S_D the number of released records in D. A unit of
// cell c_i lands in D with probability alpha_D(i) = sum_{c in D} p_{c i}
// (1{i in D} for a cell in no block), so, as for one cell,
//   R_D(a, t) = (1 / a) alpha_D(j) P(Y = a - 1) / P(S_D = a),
// Y = sum_i Binomial(T_i - 1{i = j}, alpha_D(i)). Only the blocks that meet D
// contribute; 1 - alpha_D(i) is summed over the cells outside D, never
// formed as a difference.
#ifndef SDCRISK_RISK_KNOWN_HPP
#define SDCRISK_RISK_KNOWN_HPP

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "plan.hpp"
#include "risk.hpp"

namespace sdcRisk {

class BlockKnownRisk {
 public:
  // set_of: the set D (0-based id) of every cell.
  BlockKnownRisk(const PlanView& plan, const std::vector<int>& set_of) : plan_(plan), set_of_(set_of) {
    if (static_cast<int>(set_of_.size()) != plan_.n_cells) throw std::invalid_argument("known: set ids of wrong length");
    locate_cells(plan_, block_of_, pos_of_);
    int ns = 0;
    for (int d : set_of_) {
      if (d < 0) throw std::invalid_argument("known: negative set id");
      ns = std::max(ns, d + 1);
    }
    members_.resize(ns);
    for (int i = 0; i < plan_.n_cells; ++i) members_[set_of_[i]].push_back(i);
  }

  TargetModel model(int j) const {
    const int d = set_of_[j];
    TargetModel tm;
    std::int64_t units = 0;
    std::map<int, int> in_block;  // blocks meeting D -> number of D's cells in it
    for (int c : members_[d]) {
      if (block_of_[c] >= 0) {
        ++in_block[block_of_[c]];
        continue;
      }
      // never changed: lands in D surely
      const std::int64_t n = plan_.counts[c] - (c == j ? 1 : 0);
      if (c == j) {
        tm.stay = 1.0;
        tm.leave = 0.0;
      }
      if (n > 0) tm.others.push_back({n, 1.0, 0.0});
      units += plan_.counts[c];
    }
    for (const auto& bq : in_block) {
      const int b = bq.first, q = bq.second, m = plan_.block_size(b);
      for (int r = 0; r < m; ++r) {
        const int i = plan_.block_cells[plan_.block_start[b] + r];
        const bool inside = set_of_[i] == d;
        double al = 0.0, om = 0.0;
        if (plan_.is_ifpr(b)) {
          const double t = plan_.counts[i], th = plan_.theta[b];
          const double stay = (t - th) / t, move = th / ((m - 1) * t);
          al = (inside ? stay : 0.0) + (q - (inside ? 1 : 0)) * move;
          om = (inside ? 0.0 : stay) + ((m - q) - (inside ? 0 : 1)) * move;
        } else {
          for (int rr = 0; rr < m; ++rr) {
            const int c = plan_.block_cells[plan_.block_start[b] + rr];
            (set_of_[c] == d ? al : om) += plan_.p(b, rr, r);
          }
        }
        const std::int64_t n = plan_.counts[i] - (i == j ? 1 : 0);
        if (i == j) {
          tm.stay = al;
          tm.leave = om;
        }
        if (al > 0.0) units += plan_.counts[i];
        if (n > 0) tm.others.push_back({n, al, om});
      }
    }
    tm.max_s = units;
    return tm;
  }

  // Cells with the same risks share a representative (the smallest id): same
  // D, block and count in an IFPR block or outside blocks.
  std::vector<int> representatives() const {
    std::map<std::tuple<int, int, int, int>, int> rep;
    std::vector<int> out(plan_.n_cells);
    for (int i = 0; i < plan_.n_cells; ++i) {
      const int b = block_of_[i];
      const int pos = (b >= 0 && !plan_.is_ifpr(b)) ? pos_of_[i] : -1;
      out[i] = rep.emplace(std::make_tuple(set_of_[i], b, plan_.counts[i], pos), i).first->second;
    }
    return out;
  }

 private:
  const PlanView& plan_;
  std::vector<int> set_of_;
  std::vector<int> block_of_, pos_of_;
  std::vector<std::vector<int>> members_;
};

template <class Interrupt>
CellRiskTable block_known_cell_risk(const PlanView& plan, const std::vector<int>& set_of,
                                    const std::vector<int>& targets, const std::vector<int>& a_values,
                                    Interrupt&& interrupt) {
  BlockKnownRisk eng(plan, set_of);
  return representative_cell_risk(
      plan.n_cells, eng.representatives(), targets, a_values,
      [&](int r, int A) { return evaluate_target(eng.model(r), A, true); }, interrupt);
}

// The maximum of w_j R_D(a, t) (`weight` empty: w_j = 1; see max_risk()).
// A group of cells with one representative (`pos` holds it) reports its
// heaviest cell. For a sample, w_j = t_j / F_j bounds the risk of a target
// drawn from the population units of c_j; one drawn from those of D has a
// risk that averages these over the cells of D, so it is covered too.
template <class Interrupt>
MaxRisk block_known_max_risk(const PlanView& plan, const std::vector<int>& set_of, Goal goal,
                             const std::vector<double>& weight, Interrupt&& interrupt) {
  check_weights(weight, plan.n_cells);
  BlockKnownRisk eng(plan, set_of);
  const std::vector<int> rep = eng.representatives();
  std::vector<detail::TargetGroup> todo;
  std::vector<int> group_of(static_cast<std::size_t>(plan.n_cells), -1);
  for (int i = 0; i < plan.n_cells; ++i) {
    const double w = cell_weight(weight, i);
    if (rep[i] == i) {
      group_of[i] = static_cast<int>(todo.size());
      todo.push_back({0, i, plan.counts[i], i, w});
    } else {
      detail::take_heavier(todo[group_of[rep[i]]], w, i);
    }
  }
  MaxRisk best;
  auto model = [&](const detail::TargetGroup& g) { return eng.model(g.pos); };
  detail::search_targets(std::move(todo), model, goal, best, interrupt);
  return best;
}

template <class Interrupt>
MaxRisk block_known_max_risk(const PlanView& plan, const std::vector<int>& set_of, Goal goal,
                             Interrupt&& interrupt) {
  return block_known_max_risk(plan, set_of, goal, std::vector<double>(), interrupt);
}

}  // namespace sdcRisk

#endif  // SDCRISK_RISK_KNOWN_HPP
