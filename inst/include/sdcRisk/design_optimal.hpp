// Exact checks of blocks against a risk bound per cell, the ground on which
// the least-damage design (ifpr(method = "optimal")) stands.
//
// A cell t may carry its own bound b_t (Goal 3: R_t(a, t) <= b_t for every
// a; Goals 1-2: a = 1). Since R_t(a, t) <= 1 / a, only a < 1 / b_t can break
// the bound, so each cell is checked on a = 1..ceil(1 / b_t): exactly, with
// the target models of risk.hpp, and no pruning. This checks one block
// while the design fits it; the final plan is certified by the core's
// weighted maximum (risk.hpp max_risk() with w_t = min(xi, b) / b_t).
#ifndef SDCRISK_DESIGN_OPTIMAL_HPP
#define SDCRISK_DESIGN_OPTIMAL_HPP

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "algebra.hpp"
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

// ---------------------------------------------------------------------------
// One block on its own, to fit and check: its cells' counts and bounds, an
// IFPR theta or a column-major m x m matrix, seen as a one-block plan.

class OneBlock {
 public:
  OneBlock(std::vector<int> counts, std::vector<double> bound)
      : counts_(std::move(counts)), bound_(std::move(bound)) {
    const int m = size();
    start_ = {0, m};
    cells_.resize(m);
    for (int i = 0; i < m; ++i) cells_[i] = i;
  }
  int size() const { return static_cast<int>(counts_.size()); }
  const std::vector<int>& counts() const { return counts_; }
  void set_theta(double th) {
    theta_[0] = th;
    mstart_[0] = -1;
  }
  void set_matrix(const std::vector<double>& p) {
    matrix_ = p;
    theta_[0] = kNaN;
    mstart_[0] = 0;
  }
  PlanView view() const {
    PlanView v;
    v.n_cells = size();
    v.counts = counts_.data();
    v.n_blocks = 1;
    v.block_start = start_.data();
    v.block_cells = cells_.data();
    v.theta = theta_.data();
    v.matrix = matrix_.empty() ? nullptr : matrix_.data();
    v.matrix_start = mstart_.data();
    return v;
  }
  // Every cell within its bound (with a margin of 1e-9 relative, as the
  // calibration of ifpr() keeps).
  bool meets(Goal goal) const { return block_bound_check(view(), 0, bound_.data(), goal).ratio <= 1.0 - 1e-9; }

 private:
  std::vector<int> counts_;
  std::vector<double> bound_;
  std::vector<int> start_, cells_;
  std::vector<double> theta_{kNaN}, matrix_;
  std::vector<std::int64_t> mstart_{-1};
};

// The smallest x in [0, cap] found by bisection (to 1e-10 relative) at which
// meets(x) holds, given that it holds at cap; NaN when it does not. The
// risk of a block need not be monotone in the scale of its flows, but the
// value returned always meets the bound: it is the upper end of the last
// bracket, checked.
template <class Meets>
double smallest_meeting(double cap, Meets&& meets) {
  if (!(cap > 0.0) || !meets(cap)) return kNaN;
  double lo = 0.0, hi = cap;
  if (meets(0.0)) return 0.0;
  for (int it = 0; it < 60 && hi - lo > 1e-10 * hi; ++it) {
    const double mid = 0.5 * (lo + hi);
    if (meets(mid)) hi = mid;
    else lo = mid;
  }
  return hi;
}

// IFPR: p_jj = 1 - theta / T_j, p_ij = theta / ((m - 1) T_j). A unit never
// moves to one other cell more likely than it stays (p_jj >= p_ij) iff
// theta <= T_j (m - 1) / m for every cell: the cap.
inline double ifpr_cap(const std::vector<int>& counts) {
  const int m = static_cast<int>(counts.size());
  const int tmin = *std::min_element(counts.begin(), counts.end());
  return tmin * (m - 1.0) / m;
}

// The gravity flows of a block: phi_ij = c x_i x_j / X (i != j) units of
// cell j expected to move to cell i, x_i = T_i^gamma, X = sum x: symmetric,
// so every cell receives what it sends and the PRAM is unbiased (E S = T,
// eq. 3.3). gamma = 0 is IFPR with theta = c (m - 1) / m; gamma = 1 moves
// units in proportion to the counts. The matrix p_ij = phi_ij / T_j.
inline std::vector<double> gravity_matrix(const std::vector<int>& counts, double gamma, double c) {
  const int m = static_cast<int>(counts.size());
  std::vector<double> x(m), p(static_cast<std::size_t>(m) * m, 0.0);
  double X = 0.0;
  for (int i = 0; i < m; ++i) X += (x[i] = std::pow(static_cast<double>(counts[i]), gamma));
  for (int j = 0; j < m; ++j) {
    double out = 0.0;
    for (int i = 0; i < m; ++i) {
      if (i == j) continue;
      const double pij = c * x[i] * x[j] / X / counts[j];
      p[static_cast<std::size_t>(j) * m + i] = pij;
      out += pij;
    }
    p[static_cast<std::size_t>(j) * m + j] = 1.0 - out;
  }
  return p;
}

// The largest c with p_jj >= p_ij for every i, j (so also p_jj >= 0).
inline double gravity_cap(const std::vector<int>& counts, double gamma) {
  const int m = static_cast<int>(counts.size());
  std::vector<double> x(m);
  double X = 0.0;
  for (int i = 0; i < m; ++i) X += (x[i] = std::pow(static_cast<double>(counts[i]), gamma));
  double cap = std::numeric_limits<double>::infinity();
  for (int j = 0; j < m; ++j) {
    double other = 0.0;
    for (int i = 0; i < m; ++i)
      if (i != j) other = std::max(other, x[i]);
    cap = std::min(cap, X * counts[j] / (x[j] * (X - x[j] + other)));
  }
  return cap;
}

// ---------------------------------------------------------------------------
// The least-damage design of one partition set.
//
// Every cell t that needs protection (Goal 3: T_t b_t < 1; Goals 1-2: a
// singleton with b_t < 1) goes into a block of an unbiased PRAM in which no
// unit is likelier to move to any one other cell than to stay (p_jj >= p_ij:
// the released cell stays the intruder's best guess, so the correct-match
// risk R_t(a, t) is the risk that matters), and every block is fitted so
// that each of its cells meets its bound exactly. The damage to minimise is
// one of:
//   Keys:     expected key values changed, sum_k w_k 1[x_ik != x_jk] a move;
//   Records:  expected records changed;
//   Variance: total perturbation variance sum_j T_j (1 - sum_i p_ij^2);
//   Distance: Keys with |x_ik - x_jk| for ordered keys.
// Steps:
// 1. Tiers. Cells needing protection are taken by count f. Within a block
//    of cells of one count, IFPR is the best unbiased PRAM we found (random
//    searches over symmetric flows never beat it), with theta the smallest
//    that meets the bound exactly (tier_theta()), and blocks as small as
//    that allows. So each tier is cut into blocks of m_f to 2 m_f - 1 cells
//    (a longer run splits into two that damage less) along an order of its
//    cells: for each key v, the cells sorted by the other keys (the
//    costliest slowest) and then by v, so that runs of cells that differ in
//    v alone (or, ordered, by little) are adjacent. A dynamic programme finds
//    the cut of least damage along each order; the best order wins.
// 2. Leftovers. A tier with fewer than m_f cells forms a block with the
//    cells nearest it (other leftovers first, then cells that need nothing,
//    the smallest first), grown one cell at a time until some member of the
//    family fits: IFPR, or gravity flows phi_ij = c T_i^g T_j^g / X
//    (g = 1/2, 1), which let cells of different counts move different
//    numbers of units. Failing that, its cells join the blocks already made
//    where they add least damage.
// 3. A set of at most `exhaustive_cells` cells is searched exhaustively
//    instead: every collection of disjoint blocks, each fitted with the
//    family, that covers the cells needing protection; the least damage wins.

enum class Damage { Keys, Records, Variance, Distance };

struct DesignOptions {
  Goal goal = Goal::AllMatches;
  Damage damage = Damage::Keys;
  std::vector<double> weight;  // per key of the KeySpace
  int exhaustive_cells = 10;   // sets of at most this many cells: exhaustive search
  int max_block = 64;          // largest block a tier or a padded block forms
};

// A block of the design: its cells (positions in the set) and flows, an
// IFPR theta or a column-major matrix, and its damage.
struct FittedBlock {
  std::vector<int> cells;
  double theta = kNaN;
  std::vector<double> matrix;
  double damage = std::numeric_limits<double>::infinity();
  bool ok() const { return std::isfinite(damage); }
};

struct SetDesign {
  std::vector<FittedBlock> blocks;
  std::string lacks;  // why the set cannot hold its blocks; empty if it can
};

// The IFPR matrix of a block (Section 3.3), column-major.
inline std::vector<double> ifpr_matrix(const std::vector<int>& counts, double theta) {
  const int m = static_cast<int>(counts.size());
  std::vector<double> p(static_cast<std::size_t>(m) * m);
  for (int j = 0; j < m; ++j)
    for (int i = 0; i < m; ++i)
      p[static_cast<std::size_t>(j) * m + i] = i == j ? 1.0 - theta / counts[j] : theta / ((m - 1.0) * counts[j]);
  return p;
}

class SetDesigner {
 public:
  SetDesigner(std::vector<int> counts, std::vector<double> bound, std::vector<char> need, const KeySpace& ks,
              DesignOptions opt)
      : counts_(std::move(counts)), bound_(std::move(bound)), need_(std::move(need)), ks_(ks), opt_(std::move(opt)) {
    const std::size_t n = counts_.size();
    if (bound_.size() != n || need_.size() != n || ks_.n_cells != static_cast<int>(n) ||
        static_cast<int>(opt_.weight.size()) != ks_.n_keys())
      throw std::invalid_argument("design: cells, bounds, needs, keys and weights disagree");
  }

  template <class Interrupt>
  SetDesign run(Interrupt&& interrupt) {
    if (n() <= opt_.exhaustive_cells) return exhaustive();
    SetDesign out;
    assigned_.assign(n(), 0);
    std::vector<int> left = tiers(out, interrupt);
    leftovers(out, left);
    return out;
  }

  // The least-damage member of the family on `cells`; damage infinite when
  // none meets the bounds.
  FittedBlock fit(const std::vector<int>& cells) const {
    FittedBlock best;
    best.cells = cells;
    std::vector<int> cnt;
    for (int c : cells) cnt.push_back(counts_[c]);
    const FamilyScales& sc = scales(cells);
    if (!std::isnan(sc.theta)) {
      best.theta = sc.theta;
      best.damage = block_damage(cells, ifpr_matrix(cnt, sc.theta));
    }
    for (int g = 0; g < 2; ++g) {
      if (std::isnan(sc.gravity[g])) continue;
      std::vector<double> p = gravity_matrix(cnt, kGravity[g], sc.gravity[g]);
      const double d = block_damage(cells, p);
      if (d < best.damage * (1 - 1e-12)) {
        best.theta = kNaN;
        best.matrix = std::move(p);
        best.damage = d;
      }
    }
    return best;
  }

  // The cost of one unit's move from cell j to cell i (not for Variance).
  double move_cost(int i, int j) const {
    if (opt_.damage == Damage::Records) return 1.0;
    double c = 0.0;
    for (int k = 0; k < ks_.n_keys(); ++k) {
      if (!ks_.differ(k, i, j) || opt_.weight[k] == 0.0) continue;
      c += opt_.weight[k] * (opt_.damage == Damage::Distance ? ks_.distance(k, i, j) : 1.0);
    }
    return c;
  }

  // The damage of a block with column-major matrix p over its cells.
  double block_damage(const std::vector<int>& cells, const std::vector<double>& p) const {
    const int m = static_cast<int>(cells.size());
    double d = 0.0;
    for (int c = 0; c < m; ++c) {
      const double t = counts_[cells[c]];
      const double* col = p.data() + static_cast<std::size_t>(c) * m;
      if (opt_.damage == Damage::Variance) {
        double sq = 0.0;
        for (int r = 0; r < m; ++r) sq += col[r] * col[r];
        d += t * (1.0 - sq);
        continue;
      }
      for (int r = 0; r < m; ++r)
        if (r != c && col[r] > 0.0) d += t * col[r] * move_cost(cells[r], cells[c]);
    }
    return d;
  }

  // The smallest theta of an IFPR block of s cells of count f, each with
  // bound b, that meets the bound exactly (NaN if none up to the cap).
  double tier_theta(int f, int s, double b) {
    const auto key = std::make_tuple(f, s, b);
    auto it = theta_cache_.find(key);
    if (it != theta_cache_.end()) return it->second;
    OneBlock ob(std::vector<int>(s, f), std::vector<double>(s, b));
    const double th = smallest_meeting(f * (s - 1.0) / s, [&](double t) {
      ob.set_theta(t);
      return ob.meets(opt_.goal);
    });
    theta_cache_.emplace(key, th);
    return th;
  }

  // The smallest block of cells of count f and bound b that can meet it
  // (0 if none of at most max_block cells).
  int tier_size(int f, double b) {
    for (int s = 2; s <= opt_.max_block; ++s)
      if (!std::isnan(tier_theta(f, s, b))) return s;
    return 0;
  }

 private:
  int n() const { return static_cast<int>(counts_.size()); }

  // The smallest scale of each member of the family that meets the bounds
  // of a block (NaN where none does): IFPR theta and the gravity flows'
  // c for each exponent. They depend on the block's counts and bounds only
  // (not on their order), so blocks of the same counts and bounds share them.
  static constexpr double kGravity[2] = {0.5, 1.0};
  struct FamilyScales {
    double theta = kNaN;
    double gravity[2] = {kNaN, kNaN};
  };
  const FamilyScales& scales(const std::vector<int>& cells) const {
    std::vector<std::pair<int, double>> key;
    for (int c : cells) key.emplace_back(counts_[c], bound_[c]);
    std::sort(key.begin(), key.end());
    auto it = scale_cache_.find(key);
    if (it != scale_cache_.end()) return it->second;
    std::vector<int> cnt;
    std::vector<double> bnd;
    double units = 0.0, bmin = 1.0;
    for (const auto& kb : key) {
      cnt.push_back(kb.first);
      bnd.push_back(kb.second);
      units += kb.first;
      bmin = std::min(bmin, kb.second);
    }
    FamilyScales sc;
    // Goal 3 needs at least 1 / b units that can land in a cell: at a =
    // all of them, R = 1 / a (a cheap test that rules out most small blocks)
    if (opt_.goal != Goal::AllMatches || units * bmin >= 1.0) {
      OneBlock ob(cnt, bnd);
      sc.theta = smallest_meeting(ifpr_cap(cnt), [&](double t) {
        ob.set_theta(t);
        return ob.meets(opt_.goal);
      });
      const bool mixed = cnt.front() != cnt.back();
      for (int g = 0; g < 2 && mixed; ++g) {
        sc.gravity[g] = smallest_meeting(gravity_cap(cnt, kGravity[g]), [&](double x) {
          ob.set_matrix(gravity_matrix(cnt, kGravity[g], x));
          return ob.meets(opt_.goal);
        });
      }
    }
    return scale_cache_.emplace(std::move(key), sc).first->second;
  }

  // The damage of an IFPR block of s cells of count f with parameter th
  // whose pairs of cells cost pair_sum in all (unordered pairs): eq. 6.3 for
  // the variance; every ordered pair carries the flow th / (s - 1).
  double segment_damage(int f, int s, double th, double pair_sum) const {
    switch (opt_.damage) {
      case Damage::Records: return s * th;
      case Damage::Variance: return ifpr_total_variance(s, th, static_cast<double>(s) / f);
      default: return th / (s - 1.0) * 2.0 * pair_sum;
    }
  }

  // The keys by cost, the costliest first: the order in which keys vary
  // slowest.
  std::vector<int> keys_by_cost() const {
    std::vector<int> by_cost(ks_.n_keys());
    for (int k = 0; k < ks_.n_keys(); ++k) by_cost[k] = k;
    std::stable_sort(by_cost.begin(), by_cost.end(), [&](int a, int b) { return opt_.weight[a] > opt_.weight[b]; });
    return by_cost;
  }

  // `cells` sorted by the other keys (the costliest varying slowest), then
  // by v: cells that differ in v alone (a line along v) are adjacent, in
  // the order of v.
  std::vector<int> order_by(const std::vector<int>& cells, int v) const {
    std::vector<int> seq = keys_by_cost();
    seq.erase(std::find(seq.begin(), seq.end(), v));
    seq.push_back(v);
    std::vector<int> o = cells;
    std::stable_sort(o.begin(), o.end(), [&](int a, int b) {
      for (int k : seq) {
        const double xa = sort_value(k, a), xb = sort_value(k, b);
        if (xa != xb) return xa < xb;
      }
      return false;
    });
    return o;
  }

  // Orders of `cells` in which cells that differ in one key are adjacent,
  // one per key, the cheapest key's first. The damages Records and Variance
  // do not see the keys: one order.
  std::vector<std::vector<int>> orders(const std::vector<int>& cells) const {
    const std::vector<int> by_cost = keys_by_cost();
    std::vector<std::vector<int>> out;
    for (auto it = by_cost.rbegin(); it != by_cost.rend(); ++it) {
      out.push_back(order_by(cells, *it));
      if (!keyed()) break;
    }
    return out;
  }

  bool keyed() const { return opt_.damage == Damage::Keys || opt_.damage == Damage::Distance; }

  // Whether cells a and b agree on every key but v.
  bool same_line(int a, int b, int v) const {
    for (int k = 0; k < ks_.n_keys(); ++k)
      if (k != v && ks_.differ(k, a, b)) return false;
    return true;
  }

  // A cell's position on key k for sorting: its value if ordered (missing
  // last), else its code.
  double sort_value(int k, int c) const {
    if (ks_.value[k] == nullptr) return ks_.codes[k][c];
    const double x = ks_.value[k][c];
    return std::isnan(x) ? std::numeric_limits<double>::infinity() : x;
  }

  // The least-damage cut of `seq` (cells of count f) into runs of 2..smax
  // cells with an IFPR theta that meets the smallest bound of the run: the
  // starts of the runs and the total damage, or false if there is none.
  bool cut_tier(const std::vector<int>& seq, int f, int smax, std::vector<int>& starts, double& total) {
    const int len = static_cast<int>(seq.size());
    const bool pairs = opt_.damage == Damage::Keys || opt_.damage == Damage::Distance;
    std::vector<double> best(len + 1, std::numeric_limits<double>::infinity());
    std::vector<int> back(len + 1, -1);
    best[0] = 0.0;
    for (int e = 1; e <= len; ++e) {
      double acc = 0.0, bmin = std::numeric_limits<double>::infinity();
      for (int a = e - 1; a >= std::max(0, e - smax); --a) {
        bmin = std::min(bmin, bound_[seq[a]]);
        if (pairs)
          for (int j = a + 1; j < e; ++j) acc += move_cost(seq[a], seq[j]);
        const int s = e - a;
        if (s < 2 || !std::isfinite(best[a])) continue;
        const double th = tier_theta(f, s, bmin);
        if (std::isnan(th)) continue;
        const double cand = best[a] + segment_damage(f, s, th, acc);
        if (cand < best[e]) {
          best[e] = cand;
          back[e] = a;
        }
      }
    }
    if (!std::isfinite(best[len])) return false;
    starts.clear();
    for (int e = len; e > 0; e = back[e]) starts.push_back(back[e]);
    std::reverse(starts.begin(), starts.end());
    total = best[len];
    return true;
  }

  // Step 1: every tier that can, cut into blocks. Two ways, the one of less
  // damage kept: along the tier's best order; or first within the lines
  // (cells that differ in one key, the cheapest key first) that hold enough
  // of its cells, and what is left along its best order. The cells of the
  // tiers too small to cut are returned.
  template <class Interrupt>
  std::vector<int> tiers(SetDesign& out, Interrupt& interrupt) {
    std::map<int, std::vector<int>> by_count;
    for (int i = 0; i < n(); ++i)
      if (need_[i]) by_count[counts_[i]].push_back(i);
    std::vector<int> left;
    for (const auto& tier : by_count) {
      interrupt();
      const int f = tier.first;
      double bmin = std::numeric_limits<double>::infinity();
      for (int c : tier.second) bmin = std::min(bmin, bound_[c]);
      const int m = tier_size(f, bmin);
      if (m == 0 || static_cast<int>(tier.second.size()) < m) {
        left.insert(left.end(), tier.second.begin(), tier.second.end());
        continue;
      }
      const int smax = std::max(m, std::min(2 * m - 1, opt_.max_block));
      SetDesign plain, lines;
      std::vector<int> rest_plain = cut_best(plain, tier.second, f, m, smax), rest_lines = tier.second;
      if (keyed()) {
        const std::vector<int> by_cost = keys_by_cost();
        for (auto v = by_cost.rbegin(); v != by_cost.rend(); ++v)
          rest_lines = cut_lines(lines, rest_lines, f, m, smax, *v);
        rest_lines = cut_best(lines, rest_lines, f, m, smax);
      }
      const bool use_lines = keyed() && total_damage(lines) < total_damage(plain) && rest_lines.size() <= rest_plain.size();
      SetDesign& chosen = use_lines ? lines : plain;
      const std::vector<int>& rest = use_lines ? rest_lines : rest_plain;
      if (keyed()) improve(chosen, f);
      for (auto& b : chosen.blocks) {
        for (int c : b.cells) assigned_[c] = 1;
        out.blocks.push_back(std::move(b));
      }
      left.insert(left.end(), rest.begin(), rest.end());
    }
    return left;
  }

  // Local search over the blocks of one tier (cells of count f, IFPR):
  // a cell swaps blocks with one of the cells near it (within `kSwapWindow`
  // places in one of the tier's orders) whenever that lowers the damage.
  // Blocks keep their sizes, so their theta and records changed stay; only
  // which cells share a block, hence the keys changed or the distance,
  // improves. Cells of different bounds are not swapped (theta follows the
  // smallest bound of a block). At most kSwapPasses passes.
  void improve(SetDesign& d, int f) {
    static constexpr int kSwapWindow = 8, kSwapPasses = 6;
    const int nb = static_cast<int>(d.blocks.size());
    if (nb < 2) return;
    std::vector<int> cells;
    std::vector<int>& block_of = scratch_;
    block_of.assign(n(), -1);
    std::vector<double> kappa(nb);
    for (int b = 0; b < nb; ++b) {
      const FittedBlock& fb = d.blocks[b];
      kappa[b] = 2.0 * fb.theta / (fb.cells.size() - 1.0);
      for (int c : fb.cells) {
        cells.push_back(c);
        block_of[c] = b;
      }
    }
    auto others = [&](int x, int b, int skip) {  // sum of d(x, a) over block b but `skip`
      double t = 0.0;
      for (int a : d.blocks[b].cells)
        if (a != skip) t += move_cost(x, a);
      return t;
    };
    const auto ords = orders(cells);
    for (int pass = 0; pass < kSwapPasses; ++pass) {
      bool improved = false;
      for (const auto& seq : ords) {
        const int len = static_cast<int>(seq.size());
        for (int i = 0; i < len; ++i) {
          for (int j = i + 1; j < std::min(len, i + 1 + kSwapWindow); ++j) {
            const int x = seq[i], y = seq[j], A = block_of[x], B = block_of[y];
            if (A == B || bound_[x] != bound_[y]) continue;
            const double delta = kappa[A] * (others(y, A, x) - others(x, A, x)) +
                                 kappa[B] * (others(x, B, y) - others(y, B, y));
            if (!(delta < -1e-9)) continue;
            std::replace(d.blocks[A].cells.begin(), d.blocks[A].cells.end(), x, y);
            std::replace(d.blocks[B].cells.begin(), d.blocks[B].cells.end(), y, x);
            block_of[x] = B;
            block_of[y] = A;
            improved = true;
          }
        }
      }
      if (!improved) break;
    }
    for (auto& fb : d.blocks)
      fb.damage = block_damage(fb.cells, ifpr_matrix(std::vector<int>(fb.cells.size(), f), fb.theta));
  }

  static double total_damage(const SetDesign& d) {
    double t = 0.0;
    for (const auto& b : d.blocks) t += b.damage;
    return t;
  }

  // The cells `rest` of a tier cut along their best order into `out`; the
  // cells returned if there are too few.
  std::vector<int> cut_best(SetDesign& out, const std::vector<int>& rest, int f, int m, int smax) {
    if (static_cast<int>(rest.size()) < m) return rest;
    std::vector<int> best_starts, best_seq;
    double best_total = std::numeric_limits<double>::infinity();
    for (const auto& seq : orders(rest)) {
      std::vector<int> starts;
      double total = 0.0;
      if (cut_tier(seq, f, smax, starts, total) && total < best_total) {
        best_total = total;
        best_starts = starts;
        best_seq = seq;
      }
    }
    if (best_seq.empty()) return rest;
    emit(out, best_seq, best_starts, f);
    return {};
  }

  // The lines along key v that hold at least m of the tier's cells `rest`,
  // each cut into blocks on its own; the cells of the other lines are
  // returned.
  std::vector<int> cut_lines(SetDesign& out, const std::vector<int>& rest, int f, int m, int smax, int v) {
    const std::vector<int> seq = order_by(rest, v);
    std::vector<int> keep;
    for (std::size_t a = 0; a < seq.size();) {
      std::size_t e = a + 1;
      while (e < seq.size() && same_line(seq[a], seq[e], v)) ++e;
      const std::vector<int> line(seq.begin() + a, seq.begin() + e);
      std::vector<int> starts;
      double total = 0.0;
      if (static_cast<int>(line.size()) >= m && cut_tier(line, f, smax, starts, total)) emit(out, line, starts, f);
      else keep.insert(keep.end(), line.begin(), line.end());
      a = e;
    }
    return keep;
  }

  // The blocks of a cut: runs of `seq` of cells of count f from each start.
  void emit(SetDesign& out, const std::vector<int>& seq, std::vector<int> starts, int f) {
    starts.push_back(static_cast<int>(seq.size()));
    for (std::size_t r = 0; r + 1 < starts.size(); ++r) {
      FittedBlock fb;
      fb.cells.assign(seq.begin() + starts[r], seq.begin() + starts[r + 1]);
      double b = std::numeric_limits<double>::infinity();
      for (int c : fb.cells) b = std::min(b, bound_[c]);
      const int s = static_cast<int>(fb.cells.size());
      fb.theta = tier_theta(f, s, b);
      fb.damage = block_damage(fb.cells, ifpr_matrix(std::vector<int>(s, f), fb.theta));
      out.blocks.push_back(std::move(fb));
    }
  }

  // Step 2: the cells of tiers too small to cut, by count, smallest first.
  void leftovers(SetDesign& out, std::vector<int> left) {
    std::stable_sort(left.begin(), left.end(), [&](int a, int b) { return counts_[a] < counts_[b]; });
    for (std::size_t i = 0; i < left.size();) {
      std::size_t e = i;
      std::vector<int> group;
      while (e < left.size() && counts_[left[e]] == counts_[left[i]]) {
        if (!assigned_[left[e]]) group.push_back(left[e]);
        ++e;
      }
      i = e;
      if (group.empty()) continue;
      FittedBlock fb = grow(group);
      if (fb.ok()) {
        for (int c : fb.cells) assigned_[c] = 1;
        out.blocks.push_back(std::move(fb));
        continue;
      }
      for (int c : group) {
        if (!join(out, c)) {
          out.lacks = "a cell of count " + std::to_string(counts_[c]) +
                      " finds no block of at most " + std::to_string(opt_.max_block) +
                      " cells that meets its bound, nor a block to join, among the set's " +
                      std::to_string(n()) + " cells";
          return;
        }
      }
    }
  }

  // The group and the cells nearest it, added one at a time (cells needing
  // protection first, then the smallest, then the nearest to the group's
  // first cell) until the family fits: the fitted block, or a failure.
  FittedBlock grow(const std::vector<int>& group) const {
    std::vector<int> cand;
    for (int c = 0; c < n(); ++c)
      if (!assigned_[c] && std::find(group.begin(), group.end(), c) == group.end()) cand.push_back(c);
    const int g0 = group[0];
    std::stable_sort(cand.begin(), cand.end(), [&](int a, int b) {
      if (need_[a] != need_[b]) return need_[a] > need_[b];
      if (counts_[a] != counts_[b]) return counts_[a] < counts_[b];
      return move_cost(a, g0) + move_cost(g0, a) < move_cost(b, g0) + move_cost(g0, b);
    });
    std::vector<int> block = group;
    std::size_t next = 0;
    while (static_cast<int>(block.size()) <= opt_.max_block) {
      if (block.size() >= 2) {
        FittedBlock fb = fit(block);
        if (fb.ok()) return fb;
      }
      if (next >= cand.size()) break;
      block.push_back(cand[next++]);
    }
    return FittedBlock();
  }

  // Cell c joins the block of the set where it adds least damage.
  bool join(SetDesign& out, int c) {
    int best = -1;
    FittedBlock best_fit;
    double best_rise = std::numeric_limits<double>::infinity();
    for (std::size_t b = 0; b < out.blocks.size(); ++b) {
      if (static_cast<int>(out.blocks[b].cells.size()) >= opt_.max_block) continue;
      std::vector<int> cells = out.blocks[b].cells;
      cells.push_back(c);
      FittedBlock fb = fit(cells);
      if (!fb.ok() || fb.damage - out.blocks[b].damage >= best_rise) continue;
      best_rise = fb.damage - out.blocks[b].damage;
      best = static_cast<int>(b);
      best_fit = std::move(fb);
    }
    if (best < 0) return false;
    out.blocks[best] = std::move(best_fit);
    assigned_[c] = 1;
    return true;
  }

  // Step 3: every collection of disjoint fitted blocks covering the cells
  // that need protection, by dynamic programming over subsets: the least
  // damage of a subset U is that of the best block B holding U's first cell
  // needing protection plus that of U \ B.
  SetDesign exhaustive() const {
    SetDesign out;
    const int len = n();
    const std::uint32_t full = (1u << len) - 1u;
    std::uint32_t needed = 0;
    for (int i = 0; i < len; ++i)
      if (need_[i]) needed |= 1u << i;
    if (needed == 0) return out;
    std::vector<FittedBlock> fits(full + 1u);
    for (std::uint32_t mask = 1; mask <= full; ++mask) {
      if (!(mask & needed) || (mask & (mask - 1u)) == 0) continue;
      std::vector<int> cells;
      for (int i = 0; i < len; ++i)
        if (mask >> i & 1u) cells.push_back(i);
      fits[mask] = fit(cells);
    }
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<double> best(full + 1u, inf);
    std::vector<std::uint32_t> choice(full + 1u, 0u);
    for (std::uint32_t u = 0; u <= full; ++u) {
      const std::uint32_t nu = u & needed;
      if (nu == 0) {
        best[u] = 0.0;
        continue;
      }
      const std::uint32_t low = nu & (~nu + 1u);
      for (std::uint32_t b = u; b > 0; b = (b - 1u) & u) {
        if (!(b & low) || !fits[b].ok()) continue;
        const double cand = fits[b].damage + best[u & ~b];
        if (cand < best[u]) {
          best[u] = cand;
          choice[u] = b;
        }
      }
    }
    if (!std::isfinite(best[full])) {
      out.lacks = "no collection of blocks of its " + std::to_string(len) + " cells meets every bound";
      return out;
    }
    for (std::uint32_t u = full; (u & needed) != 0; u &= ~choice[u]) out.blocks.push_back(fits[choice[u]]);
    return out;
  }

  std::vector<int> counts_;
  std::vector<double> bound_;
  std::vector<char> need_;
  const KeySpace& ks_;
  DesignOptions opt_;
  std::vector<char> assigned_;
  std::map<std::tuple<int, int, double>, double> theta_cache_;
  mutable std::map<std::vector<std::pair<int, double>>, FamilyScales> scale_cache_;
  std::vector<int> scratch_;  // the block of every cell, in improve()
};

}  // namespace sdcRisk

#endif  // SDCRISK_DESIGN_OPTIMAL_HPP
