// Exact correct-match risk under PRAM (Nayak, Zhang & You 2016, Sec. 4).
//
// For a target unit B in cell c_j, let alpha_i = p_ji be the probability that
// a unit of cell c_i lands in c_j and Y the number of units other than B that
// land in c_j: a sum of independent Binomial(T_i*, alpha_i), T_j* = T_j - 1.
// Then (eq. 4.1-4.3)
//   P(S_j = a, Z_B = c_j) = alpha_j P(Y = a - 1),
//   P(S_j = a, Z_B != c_j) = (1 - alpha_j) P(Y = a),
//   R_j(a, t) = (1 / a) alpha_j P(Y = a - 1) / P(S_j = a),
//   gamma(j, t) = sum_a R_j(a, t) P(S_j = a) = alpha_j E[1 / (1 + Y)].
// Cells with the same (T_i, alpha_i), such as all cells of one count in an
// IFPR block, merge into one binomial, so a whole IFPR block costs about
// (distinct counts)^2 x A^2 and no dense matrix is ever formed.
#ifndef SDCRISK_RISK_HPP
#define SDCRISK_RISK_HPP

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "algebra.hpp"
#include "logdist.hpp"
#include "plan.hpp"
#include "quadrature.hpp"

namespace sdcRisk {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The distribution seen from one target cell: B stays with probability
// stay (1 - stay = leave) and the other units form `others`.
struct TargetModel {
  double stay = 1.0, leave = 0.0;
  std::vector<Binom> others;
  std::int64_t max_s = 0;  // largest possible S_j
};

struct TargetRisk {
  std::vector<double> risk;      // R_j(a, t) for a = 1..A; NaN where P(S_j = a) = 0
  std::vector<double> log_prob;  // log P(S_j = a | T) for a = 1..A
  double log_p_empty = kNegInf;  // log P(S_j = 0 | T)
  double gamma = kNaN;           // P(CM | X_B = c_j, T = t)
  std::int64_t max_s = 0;        // largest possible S_j
};

// R_j(a, t) and P(S_j = a) for a = 1..A, and P(S_j = 0), from the
// distribution of Y on 0..A and the probability that B stays (eq. 4.1-4.3).
inline TargetRisk risk_from_dist(const LogDist& y, double stay, double leave, int A) {
  TargetRisk out;
  const double log_stay = stay > 0 ? std::log(stay) : kNegInf;
  const double log_leave = leave > 0 ? std::log(leave) : kNegInf;
  out.risk.assign(A, kNaN);
  out.log_prob.assign(A, kNegInf);
  for (int a = 1; a <= A; ++a) {
    const double la = log_stay + y.rel_at(a - 1);  // B stays, a - 1 others come
    const double lb = log_leave + y.rel_at(a);     // B leaves, a others come
    if (y.base == kNegInf || (la == kNegInf && lb == kNegInf)) continue;
    out.log_prob[a - 1] = y.base + log_add_exp(la, lb);
    out.risk[a - 1] = la == kNegInf ? 0.0 : (1.0 / a) / (1.0 + std::exp(lb - la));
  }
  out.log_p_empty = log_leave + y.log_at(0);
  return out;
}

inline TargetRisk evaluate_target(const TargetModel& tm, int A, bool want_gamma) {
  TargetRisk out = risk_from_dist(sum_logdist(tm.others, A), tm.stay, tm.leave, A);
  out.max_s = tm.max_s;
  if (want_gamma) out.gamma = tm.stay > 0 ? tm.stay * expected_inverse_1p(tm.others) : 0.0;
  return out;
}

// The target model of a cell of count f0 in an IFPR block of m cells with
// parameter theta and the given (count, number of cells) groups. All cells of
// one count in a block share it.
inline TargetModel ifpr_target_model(int m, double theta,
                                     const std::vector<std::pair<int, std::int64_t>>& count_groups,
                                     int f0) {
  TargetModel tm;
  tm.stay = (f0 - theta) / f0;  // p_jj = 1 - theta / T_j
  tm.leave = theta / f0;
  tm.others.push_back({f0 - 1, tm.stay, tm.leave});
  std::int64_t units = 0;
  for (const auto& g : count_groups) {
    const int f = g.first;
    const std::int64_t n = g.second * f - (f == f0 ? f0 : 0);
    units += g.second * f;
    if (n <= 0) continue;
    const double denom = static_cast<double>(m - 1) * f;  // p_ji = theta / ((m - 1) T_i)
    tm.others.push_back({n, theta / denom, (denom - theta) / denom});
  }
  tm.max_s = units;
  return tm;
}

inline TargetModel ifpr_target(const PlanView& plan, int b,
                               const std::vector<std::pair<int, std::int64_t>>& count_groups,
                               int f0) {
  return ifpr_target_model(plan.block_size(b), plan.theta[b], count_groups, f0);
}

// The target model of the cell at position jj of a matrix block.
inline TargetModel matrix_target(const PlanView& plan, int b, int jj) {
  const int m = plan.block_size(b);
  TargetModel tm;
  auto column_rest = [&](int c) {  // 1 - p_{jj,c}, summed for accuracy
    double s = 0.0;
    for (int r = 0; r < m; ++r)
      if (r != jj) s += plan.p(b, r, c);
    return s;
  };
  std::int64_t units = 0;
  for (int c = 0; c < m; ++c) {
    const int cell = plan.block_cells[plan.block_start[b] + c];
    const std::int64_t t = plan.counts[cell];
    const double alpha = plan.p(b, jj, c), oma = column_rest(c);
    if (alpha > 0) units += t;
    if (c == jj) {
      tm.stay = alpha;
      tm.leave = oma;
      tm.others.push_back({t - 1, alpha, oma});
    } else {
      tm.others.push_back({t, alpha, oma});
    }
  }
  tm.max_s = units;
  return tm;
}

// Distinct counts of an IFPR block with their multiplicities.
inline std::vector<std::pair<int, std::int64_t>> count_groups(const PlanView& plan, int b) {
  std::map<int, std::int64_t> g;
  for (int k = plan.block_start[b]; k < plan.block_start[b + 1]; ++k) ++g[plan.counts[plan.block_cells[k]]];
  return {g.begin(), g.end()};
}

// ---------------------------------------------------------------------------
// Per-cell results for a set of target cells and values of a.

struct CellRiskTable {
  // target-major: entry t * n_a + i is cell targets[t] and a = a_values[i]
  std::vector<double> risk, log_prob;
  // per target
  std::vector<double> log_p_empty, gamma;
};

// The largest a asked for (every a must be >= 1).
inline int largest_a(const std::vector<int>& a_values) {
  int A = 0;
  for (int a : a_values) {
    if (a < 1) throw std::invalid_argument("cell_risk: a must be >= 1");
    A = std::max(A, a);
  }
  return A;
}

// A table for n targets and na values of a: risk NaN (impossible), log
// probabilities -Inf, until filled.
inline CellRiskTable empty_risk_table(std::size_t n, std::size_t na) {
  CellRiskTable out;
  out.risk.assign(n * na, kNaN);
  out.log_prob.assign(n * na, kNegInf);
  out.log_p_empty.assign(n, kNegInf);
  out.gamma.assign(n, kNaN);
  return out;
}

// Copies one target's results into row t of the table.
inline void fill_target_row(CellRiskTable& out, std::size_t t, const TargetRisk& tr,
                            const std::vector<int>& a_values) {
  const std::size_t na = a_values.size();
  for (std::size_t i = 0; i < na; ++i) {
    out.risk[t * na + i] = tr.risk[a_values[i] - 1];
    out.log_prob[t * na + i] = tr.log_prob[a_values[i] - 1];
  }
  out.log_p_empty[t] = tr.log_p_empty;
  out.gamma[t] = tr.gamma;
}

// Per-cell results for engines whose cells share their results with a
// representative cell (rep[j]): each representative is evaluated once, by
// `evaluate(rep, A)`, and its results copied to every target it stands for.
template <class Evaluate, class Interrupt>
CellRiskTable representative_cell_risk(int n_cells, const std::vector<int>& rep,
                                       const std::vector<int>& targets,
                                       const std::vector<int>& a_values, Evaluate&& evaluate,
                                       Interrupt&& interrupt) {
  const int A = largest_a(a_values);
  CellRiskTable out = empty_risk_table(targets.size(), a_values.size());
  std::map<int, TargetRisk> cache;
  for (std::size_t t = 0; t < targets.size(); ++t) {
    if (t % 64 == 0) interrupt();
    const int j = targets[t];
    if (j < 0 || j >= n_cells) throw std::invalid_argument("cell_risk: target out of range");
    auto it = cache.find(rep[j]);
    if (it == cache.end()) it = cache.emplace(rep[j], evaluate(rep[j], A)).first;
    fill_target_row(out, t, it->second, a_values);
  }
  return out;
}

template <class Interrupt>
CellRiskTable cell_risk(const PlanView& plan, const std::vector<int>& targets,
                        const std::vector<int>& a_values, Interrupt&& interrupt) {
  std::vector<int> block_of, pos_of;
  locate_cells(plan, block_of, pos_of);
  const int A = largest_a(a_values);
  const std::size_t na = a_values.size();
  CellRiskTable out = empty_risk_table(targets.size(), na);

  // Results of IFPR targets are shared by all cells of one count in blocks of
  // the same design (size, theta and counts), as the certificate shares them.
  std::map<std::tuple<int, double, std::vector<std::pair<int, std::int64_t>>, int>, TargetRisk> cache;
  std::map<int, std::vector<std::pair<int, std::int64_t>>> groups;
  for (std::size_t t = 0; t < targets.size(); ++t) {
    if (t % 256 == 0) interrupt();
    const int j = targets[t];
    if (j < 0 || j >= plan.n_cells) throw std::invalid_argument("cell_risk: target out of range");
    const int b = block_of[j];
    const int tj = plan.counts[j];
    if (b < 0) {  // never changed: S_j = T_j, R_j(T_j, t) = 1 / T_j
      for (std::size_t i = 0; i < na; ++i) {
        if (a_values[i] == tj) {
          out.risk[t * na + i] = 1.0 / tj;
          out.log_prob[t * na + i] = 0.0;
        }
      }
      out.log_p_empty[t] = kNegInf;
      out.gamma[t] = 1.0 / tj;
      continue;
    }
    const TargetRisk* tr;
    TargetRisk local;
    if (plan.is_ifpr(b)) {
      auto g = groups.find(b);
      if (g == groups.end()) g = groups.emplace(b, count_groups(plan, b)).first;
      auto key = std::make_tuple(plan.block_size(b), plan.theta[b], g->second, tj);
      auto it = cache.find(key);
      if (it == cache.end())
        it = cache.emplace(key, evaluate_target(ifpr_target(plan, b, g->second, tj), A, true)).first;
      tr = &it->second;
    } else {
      local = evaluate_target(matrix_target(plan, b, pos_of[j]), A, true);
      tr = &local;
    }
    fill_target_row(out, t, *tr, a_values);
  }
  return out;
}

// ---------------------------------------------------------------------------
// The maximum of R_j(a, t) over the cells and values of a a goal covers
// (Nayak, Zhang & You 2016, Sec. 4.2):
//   SampleUniques (Goal 1): a = 1 and cells with t_j = 1;
//   UniqueMatches (Goal 2): a = 1 and every cell;
//   AllMatches    (Goal 3): every a >= 1 and every cell.
// Only (cell, a) with P(S_j = a | T) > 0 count. The search over a stops
// exactly: R_j(a, t) <= 1 / a, and R_j(a, t) <= 1 / t_j for every a because
// the units of c_j are exchangeable and at most a of them can stay.
//
// Per-cell weights. The certified value may be max over (cell, a) of
// w_j R_j(a, t) with weights w_j in (0, 1] (empty: 1 for every cell, the
// same search bit for bit). For a sample release w_j = t_j / F_j, the
// probability that a target drawn from the F_j population units of c_j is
// in the file: the match is correct only then, and the sampled units of c_j
// are exchangeable under the plan, so the risk of a target who may not be
// in the file is w_j R_j(a, t). For per-cell bounds b_j, w_j = xi / b_j.
// The pruning stays exact with every bound multiplied by its cell's
// weight (w_j / a, w_j / t_j); cells that share a target model form one
// group that carries the largest weight among them and reports the cell
// of that weight (the smallest such cell on ties).

enum class Goal { SampleUniques, UniqueMatches, AllMatches };

inline Goal parse_goal(const std::string& g) {
  if (g == "sample_uniques") return Goal::SampleUniques;
  if (g == "unique_matches") return Goal::UniqueMatches;
  if (g == "all_matches") return Goal::AllMatches;
  throw std::invalid_argument("unknown goal: " + g);
}

struct MaxRisk {
  double value = kNaN;  // NaN when the goal covers no possible event
  int cell = -1;
  int a = -1;
  std::int64_t targets_evaluated = 0;  // distinct target models computed
};

// The weight of cell j (1 without weights).
inline double cell_weight(const std::vector<double>& weight, int j) { return weight.empty() ? 1.0 : weight[j]; }

// Weights are empty or one per cell, each in (0, 1].
inline void check_weights(const std::vector<double>& weight, int n_cells) {
  if (weight.empty()) return;
  if (static_cast<int>(weight.size()) != n_cells) throw std::invalid_argument("weights: one per cell expected");
  for (double w : weight)
    if (!(w > 0.0 && w <= 1.0)) throw std::invalid_argument("weights: outside (0, 1]");
}

namespace detail {

// Cells with the same target model: `cell` is the cell reported (the one of
// the largest weight), `weight` that weight.
struct TargetGroup {
  int block, cell, count, pos;
  double weight = 1.0;
};

// Makes (w, cell) the group's reported cell if its weight is larger, or
// equal with a smaller cell.
inline void take_heavier(TargetGroup& g, double w, int cell) {
  if (w > g.weight || (w == g.weight && cell < g.cell)) {
    g.weight = w;
    g.cell = cell;
  }
}

inline void offer(MaxRisk& best, double r, int cell, int a) {
  if (std::isnan(r)) return;
  if (std::isnan(best.value) || r > best.value ||
      (r == best.value && (cell < best.cell || (cell == best.cell && a < best.a)))) {
    best.value = r;
    best.cell = cell;
    best.a = a;
  }
}

// Largest a >= 1 with a * best < 1 (R_j(a, t) <= 1 / a can still beat
// `best`), capped at max_s; computed in doubles so that a tiny `best` (below
// 2^-63, say) cannot overflow an integer and wrap the range to nothing.
inline std::int64_t search_limit(double best, std::int64_t max_s) {
  if (std::isnan(best) || best <= 0.0) return max_s;
  const double lim = std::ceil(1.0 / best) + 1.0;
  if (!(lim < static_cast<double>(max_s))) return max_s;
  std::int64_t a = static_cast<std::int64_t>(lim);
  while (a > 1 && static_cast<double>(a) * best >= 1.0) --a;
  return a;
}

// The maximum a group's unweighted risk must beat: best / w, rounded down
// (a larger search range) so that no a with w / a > best is cut off.
inline double scaled_best(double best, double w) {
  if (w == 1.0 || std::isnan(best)) return best;
  return best / w * (1.0 - 4.0 * std::numeric_limits<double>::epsilon());
}

// Raise `best` to the maximum of w R_j(a, t) over the target groups and the
// values of a the goal covers. `eval(group, A)` gives a group's TargetRisk on
// a = 1..A (with max_s, the largest possible S_j).
template <class Eval, class Interrupt>
void search_targets_eval(std::vector<TargetGroup> todo, const Eval& eval, Goal goal, MaxRisk& best,
                         Interrupt& interrupt) {
  if (goal == Goal::SampleUniques)
    todo.erase(std::remove_if(todo.begin(), todo.end(), [](const TargetGroup& g) { return g.count != 1; }),
               todo.end());
  // Largest bound w / t_j first (without weights: smallest counts first).
  auto cap = [](const TargetGroup& g) { return g.weight / g.count; };
  std::stable_sort(todo.begin(), todo.end(),
                   [&cap](const TargetGroup& x, const TargetGroup& y) { return cap(x) > cap(y); });
  // Pass 1: a = 1 everywhere (cheap), which raises the bar for pass 2.
  std::vector<std::int64_t> max_s(todo.size(), -1);
  std::size_t done = 0;
  for (std::size_t t = 0; t < todo.size(); ++t) {
    const TargetGroup& g = todo[t];
    if (++done % 64 == 0) interrupt();
    if (goal == Goal::AllMatches && !std::isnan(best.value) && cap(g) <= best.value) continue;
    const TargetRisk& tr = eval(g, 1);
    max_s[t] = tr.max_s;
    ++best.targets_evaluated;
    offer(best, g.weight * tr.risk[0], g.cell, 1);
  }
  if (goal != Goal::AllMatches) return;
  // Pass 2: a >= 2 while w / a and w / t_j can still beat the maximum.
  for (std::size_t t = 0; t < todo.size(); ++t) {
    const TargetGroup& g = todo[t];
    if (++done % 64 == 0) interrupt();
    if (!std::isnan(best.value) && cap(g) <= best.value) break;  // sorted by cap
    if (max_s[t] < 0) continue;
    const std::int64_t A = search_limit(scaled_best(best.value, g.weight), max_s[t]);
    if (A < 2) continue;
    if (A > std::numeric_limits<int>::max()) throw std::invalid_argument("max_risk: search range too large");
    const TargetRisk& tr = eval(g, static_cast<int>(A));
    ++best.targets_evaluated;
    for (int a = 2; a <= static_cast<int>(A); ++a) offer(best, g.weight * tr.risk[a - 1], g.cell, a);
  }
}

template <class Model, class Interrupt>
void search_targets(std::vector<TargetGroup> todo, const Model& model, Goal goal, MaxRisk& best,
                    Interrupt& interrupt) {
  auto eval = [&model](const TargetGroup& g, int A) { return evaluate_target(model(g), A, false); };
  search_targets_eval(std::move(todo), eval, goal, best, interrupt);
}

}  // namespace detail

// The maximum of w_j R_j(a, t) over what the goal covers (`weight` empty:
// w_j = 1).
template <class Interrupt>
MaxRisk max_risk(const PlanView& plan, Goal goal, const std::vector<double>& weight, Interrupt&& interrupt) {
  std::vector<int> block_of, pos_of;
  locate_cells(plan, block_of, pos_of);
  check_weights(weight, plan.n_cells);
  MaxRisk best;

  // Cells outside every block keep S_j = T_j.
  for (int j = 0; j < plan.n_cells; ++j) {
    if (block_of[j] >= 0) continue;
    const int tj = plan.counts[j];
    const double w = cell_weight(weight, j);
    if (goal == Goal::AllMatches) detail::offer(best, w * (1.0 / tj), j, tj);
    else if (tj == 1) detail::offer(best, w, j, 1);
  }

  // Target groups: one per distinct count of an IFPR block, one per cell of a
  // matrix block. IFPR blocks with the same size, theta and counts have the
  // same risks (a tiered design makes many), so they share their groups. A
  // group reports the heaviest of the cells it stands for (without weights:
  // the smallest cell id).
  std::vector<detail::TargetGroup> todo;
  std::map<std::tuple<int, double, std::vector<std::pair<int, std::int64_t>>>, std::map<int, std::size_t>> seen;
  for (int b = 0; b < plan.n_blocks; ++b) {
    if (plan.is_ifpr(b)) {
      std::map<int, detail::TargetGroup> rep;  // by count
      for (int k = plan.block_start[b]; k < plan.block_start[b + 1]; ++k) {
        const int c = plan.block_cells[k];
        const double w = cell_weight(weight, c);
        auto it = rep.find(plan.counts[c]);
        if (it == rep.end()) rep.emplace(plan.counts[c], detail::TargetGroup{b, c, plan.counts[c], -1, w});
        else detail::take_heavier(it->second, w, c);
      }
      auto key = std::make_tuple(plan.block_size(b), plan.theta[b], count_groups(plan, b));
      auto hit = seen.find(key);
      if (hit != seen.end()) {
        for (const auto& r : rep) detail::take_heavier(todo[hit->second.at(r.first)], r.second.weight, r.second.cell);
        continue;
      }
      std::map<int, std::size_t> where;
      for (const auto& r : rep) {
        where.emplace(r.first, todo.size());
        todo.push_back(r.second);
      }
      seen.emplace(std::move(key), std::move(where));
    } else {
      for (int k = plan.block_start[b]; k < plan.block_start[b + 1]; ++k) {
        const int c = plan.block_cells[k];
        todo.push_back({b, c, plan.counts[c], k - plan.block_start[b], cell_weight(weight, c)});
      }
    }
  }
  std::map<int, std::vector<std::pair<int, std::int64_t>>> groups;
  auto model = [&](const detail::TargetGroup& g) {
    if (plan.is_ifpr(g.block)) {
      auto it = groups.find(g.block);
      if (it == groups.end()) it = groups.emplace(g.block, count_groups(plan, g.block)).first;
      return ifpr_target(plan, g.block, it->second, g.count);
    }
    return matrix_target(plan, g.block, g.pos);
  };
  detail::search_targets(std::move(todo), model, goal, best, interrupt);
  return best;
}

template <class Interrupt>
MaxRisk max_risk(const PlanView& plan, Goal goal, Interrupt&& interrupt) {
  return max_risk(plan, goal, std::vector<double>(), interrupt);
}

// The exact maximum of w R_j(a, t) over the cells of one IFPR block of m
// cells (counts given as (count, number of cells) groups) and the values of
// a the goal covers. `cell` of the result is the count of the arg-max cell.
// `weight`: empty, or the weight of each count group (the largest weight of
// its cells).
template <class Interrupt>
MaxRisk ifpr_block_max(int m, double theta, const std::vector<std::pair<int, std::int64_t>>& groups,
                       Goal goal, Interrupt&& interrupt, const std::vector<double>& weight = {}) {
  if (!weight.empty() && weight.size() != groups.size()) throw std::invalid_argument("ifpr_block_max: weights");
  std::vector<detail::TargetGroup> todo;
  for (std::size_t i = 0; i < groups.size(); ++i)
    todo.push_back({0, groups[i].first, groups[i].first, -1, weight.empty() ? 1.0 : weight[i]});
  MaxRisk best;
  auto model = [&](const detail::TargetGroup& g) { return ifpr_target_model(m, theta, groups, g.count); };
  detail::search_targets(std::move(todo), model, goal, best, interrupt);
  return best;
}

// The largest weight among the cells of each count group of IFPR block b
// (empty without weights).
inline std::vector<double> group_weights(const PlanView& plan, int b,
                                         const std::vector<std::pair<int, std::int64_t>>& groups,
                                         const std::vector<double>& weight) {
  if (weight.empty()) return {};
  std::map<int, double> heaviest;
  for (int k = plan.block_start[b]; k < plan.block_start[b + 1]; ++k) {
    const int c = plan.block_cells[k];
    double& h = heaviest[plan.counts[c]];
    h = std::max(h, weight[c]);
  }
  std::vector<double> out;
  for (const auto& g : groups) out.push_back(heaviest[g.first]);
  return out;
}

// Exact calibration (ifpr(calibrate = "exact")): for each IFPR block, the
// smallest theta in [0, theta_b] found by bisection whose exact maximum risk
// over the goal is at most `target`, starting from the plan's theta_b (which
// must meet it), unless it would raise the block's total variance (eq. 6.3).
// So no block changes more records in expectation, or has more variance,
// than with theta_b. Blocks with the same size, counts (and weights of
// their count groups) share the result. With per-cell weights the target
// is met by max w_j R_j(a, t).
template <class Interrupt>
std::vector<double> calibrate_ifpr(const PlanView& plan, Goal goal, double target, const std::vector<double>& weight,
                                   Interrupt&& interrupt) {
  check_weights(weight, plan.n_cells);
  std::vector<double> out(plan.theta, plan.theta + plan.n_blocks);
  using Groups = std::vector<std::pair<int, std::int64_t>>;
  std::map<std::tuple<Groups, std::vector<double>, int, double>, double> cache;
  for (int b = 0; b < plan.n_blocks; ++b) {
    if (!plan.is_ifpr(b)) continue;
    interrupt();
    const int m = plan.block_size(b);
    const Groups groups = count_groups(plan, b);
    const std::vector<double> gw = group_weights(plan, b, groups, weight);
    const auto key = std::make_tuple(groups, gw, m, plan.theta[b]);
    auto hit = cache.find(key);
    if (hit != cache.end()) {
      out[b] = hit->second;
      continue;
    }
    auto meets = [&](double th) {
      const MaxRisk r = ifpr_block_max(m, th, groups, goal, interrupt, gw);
      return std::isnan(r.value) || r.value <= target;
    };
    const double bound = plan.theta[b];
    double hi = bound, lo = 0.0;
    if (!meets(hi)) {  // the bound design does not meet the target: leave it
      cache.emplace(key, hi);
      continue;
    }
    if (meets(lo)) {
      hi = 0.0;
    } else {
      for (int it = 0; it < 60 && hi - lo > 1e-9 * hi; ++it) {
        const double mid = 0.5 * (lo + hi);
        if (meets(mid)) hi = mid;
        else lo = mid;
      }
    }
    // The total variance of the block's counts (eq. 6.3) is not monotone in
    // theta (two singletons with theta = 1 swap surely): keep the bound's
    // theta where the lower one would add variance.
    double inv = 0.0;
    for (const auto& g : groups) inv += static_cast<double>(g.second) / g.first;
    auto variance = [&](double th) { return ifpr_total_variance(m, th, inv); };
    if (variance(hi) > variance(bound)) hi = bound;
    out[b] = hi;
    cache.emplace(key, hi);
  }
  return out;
}

template <class Interrupt>
std::vector<double> calibrate_ifpr(const PlanView& plan, Goal goal, double target, Interrupt&& interrupt) {
  return calibrate_ifpr(plan, goal, target, std::vector<double>(), interrupt);
}

}  // namespace sdcRisk

#endif  // SDCRISK_RISK_HPP
