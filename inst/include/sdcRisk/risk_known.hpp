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
#include <utility>
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

  // The model of a target in cell j, built from the cells of every block
  // that meets D (one binomial per cell, in block order): the model of
  // block_known_cell_risk(), whose gamma depends on that order.
  TargetModel model(int j) const {
    const int d = set_of_[j];
    TargetModel tm;
    std::int64_t units = 0;
    for_each_source(d, [&](int i, double al, double om) {
      const std::int64_t n = plan_.counts[i] - (i == j ? 1 : 0);
      if (i == j) {
        tm.stay = al;
        tm.leave = om;
      }
      if (al > 0.0) units += plan_.counts[i];
      if (n > 0) tm.others.push_back({n, al, om});
    });
    tm.max_s = units;
    return tm;
  }

  // The probability (stay, leave) that the unit of a target in cell j lands
  // in its own D or not; every target of one D with the same pair has the
  // same risks (merged_model()).
  std::pair<double, double> target_pair(int j) const {
    const DSources& src = sources(set_of_[j]);
    return src.pair_of.at(j);
  }

  // The same distribution as model(j), its binomials already merged as
  // sum_logdist() merges them (sorted by (alpha, 1 - alpha), equal ones
  // added up): D's merged list is built once, and a target takes one unit
  // off its own class. So the risks are bit for bit those of model(j), at
  // a cost of the number of classes of D, not of the cells meeting D.
  TargetModel merged_model(int j) const {
    const DSources& src = sources(set_of_[j]);
    const std::pair<double, double> pr = src.pair_of.at(j);
    TargetModel tm;
    tm.stay = pr.first;
    tm.leave = pr.second;
    tm.max_s = src.units;
    tm.others.reserve(src.merged.size());
    for (const Binom& b : src.merged) {
      std::int64_t n = b.n;
      if (b.alpha == pr.first && b.oma == pr.second) --n;
      if (n > 0) tm.others.push_back({n, b.alpha, b.oma});
    }
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
  // Per set D: its merged binomials (all units of the blocks meeting D and
  // of D's cells outside blocks, none taken off), the largest S_D, and each
  // member's (stay, leave).
  struct DSources {
    std::vector<Binom> merged;
    std::int64_t units = 0;
    std::map<int, std::pair<double, double>> pair_of;
  };

  // Calls f(i, alpha_D(i), 1 - alpha_D(i)) for every cell i whose units can
  // land in D: D's cells outside blocks, then the cells of each block that
  // meets D (blocks in increasing order).
  template <class F>
  void for_each_source(int d, F&& f) const {
    std::map<int, int> in_block;  // blocks meeting D -> number of D's cells in it
    for (int c : members_[d]) {
      if (block_of_[c] >= 0) {
        ++in_block[block_of_[c]];
        continue;
      }
      f(c, 1.0, 0.0);  // never changed: lands in D surely
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
        f(i, al, om);
      }
    }
  }

  const DSources& sources(int d) const {
    auto it = sources_.find(d);
    if (it != sources_.end()) return it->second;
    DSources src;
    std::vector<Binom> parts;
    for_each_source(d, [&](int i, double al, double om) {
      if (set_of_[i] == d) src.pair_of.emplace(i, std::make_pair(al, om));
      if (al > 0.0) src.units += plan_.counts[i];
      parts.push_back({plan_.counts[i], al, om});
    });
    // as sum_logdist() sorts and merges
    std::sort(parts.begin(), parts.end(), [](const Binom& a, const Binom& b) {
      return a.alpha < b.alpha || (a.alpha == b.alpha && a.oma < b.oma);
    });
    for (const Binom& p : parts) {
      if (p.n <= 0 || p.alpha <= 0.0) continue;
      if (!src.merged.empty() && src.merged.back().alpha == p.alpha && src.merged.back().oma == p.oma)
        src.merged.back().n += p.n;
      else
        src.merged.push_back(p);
    }
    return sources_.emplace(d, std::move(src)).first->second;
  }

  const PlanView& plan_;
  std::vector<int> set_of_;
  std::vector<int> block_of_, pos_of_;
  std::vector<std::vector<int>> members_;
  mutable std::map<int, DSources> sources_;
};

// Per-cell results. With gamma, from each representative's own model (its
// gamma depends on the order of the binomials); without (gamma NaN), cells
// of one D with the same (stay, leave) share one evaluation of the merged
// model: the same risks and probabilities, bit for bit, in time linear in
// the cells meeting each D rather than quadratic.
template <class Interrupt>
CellRiskTable block_known_cell_risk(const PlanView& plan, const std::vector<int>& set_of,
                                    const std::vector<int>& targets, const std::vector<int>& a_values,
                                    Interrupt&& interrupt, bool want_gamma = true) {
  BlockKnownRisk eng(plan, set_of);
  if (want_gamma) {
    return representative_cell_risk(
        plan.n_cells, eng.representatives(), targets, a_values,
        [&](int r, int A) { return evaluate_target(eng.model(r), A, true); }, interrupt);
  }
  std::vector<int> rep(static_cast<std::size_t>(plan.n_cells), -1);
  std::map<std::tuple<int, double, double>, int> first;
  for (int j : targets) {
    if (j < 0 || j >= plan.n_cells) throw std::invalid_argument("cell_risk: target out of range");
    if (rep[j] >= 0) continue;
    const std::pair<double, double> pr = eng.target_pair(j);
    rep[j] = first.emplace(std::make_tuple(set_of[j], pr.first, pr.second), j).first->second;
  }
  return representative_cell_risk(
      plan.n_cells, rep, targets, a_values,
      [&](int r, int A) { return evaluate_target(eng.merged_model(r), A, false); }, interrupt);
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
  // Targets of one D with the same (stay, leave) have the same risks: each
  // is evaluated once, and again only for a larger range of a (the values
  // on 1..A do not depend on A).
  std::map<std::tuple<int, double, double>, TargetRisk> done;
  auto eval = [&](const detail::TargetGroup& g, int A) -> const TargetRisk& {
    const std::pair<double, double> pr = eng.target_pair(g.pos);
    const auto key = std::make_tuple(set_of[g.pos], pr.first, pr.second);
    auto it = done.find(key);
    if (it != done.end() && static_cast<int>(it->second.risk.size()) >= A) return it->second;
    TargetRisk tr = evaluate_target(eng.merged_model(g.pos), A, false);
    if (it == done.end()) return done.emplace(key, std::move(tr)).first->second;
    it->second = std::move(tr);
    return it->second;
  };
  detail::search_targets_eval(std::move(todo), eval, goal, best, interrupt);
  return best;
}

template <class Interrupt>
MaxRisk block_known_max_risk(const PlanView& plan, const std::vector<int>& set_of, Goal goal,
                             Interrupt&& interrupt) {
  return block_known_max_risk(plan, set_of, goal, std::vector<double>(), interrupt);
}

}  // namespace sdcRisk

#endif  // SDCRISK_RISK_KNOWN_HPP
