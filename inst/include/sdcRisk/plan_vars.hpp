// A per-variable PRAM plan (sdcMicro's pram(), mu-ARGUS): each perturbed key
// v has its own column-stochastic k_v x k_v matrix P_v,
// P_v[r, c] = P(Z_v = r | X_v = c), possibly one per stratum of other keys;
// keys neither perturbed nor strata never change. On the cross-
// classification this is the Kronecker product of the P_v (within a
// stratum): a unit of cell i lands in cell j with probability
//   alpha(j, i) = prod_v P_v[j_v, i_v]        (0 unless j and i agree on
//                                              every unperturbed key),
// the variables being perturbed independently. Nothing here forms a matrix
// over cells: every quantity below factorises over the variables or is
// contracted one variable at a time.
//
// The plan is a VarsPlanView (the one representation of a per-variable plan
// in the core, which the risk engine of risk_vars.hpp reads too), indexed by
// VarsIndex. Views only: the memory belongs to the caller.
#ifndef SDCRISK_PLAN_VARS_HPP
#define SDCRISK_PLAN_VARS_HPP

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "progress.hpp"

namespace sdcRisk {

// A per-variable plan as the caller holds it. Views only.
struct VarsPlanView {
  int n_cells = 0;
  const int* counts = nullptr;              // T_i
  int n_keys = 0;
  std::vector<const int*> codes;            // per key: 0-based category of every cell
  std::vector<int> n_levels;                // per key
  std::vector<int> var_of_key;              // per key: index of its matrix, -1 if not perturbed
  int n_vars = 0;
  int n_strata = 1;
  const int* stratum = nullptr;             // per cell, 0-based
  std::vector<const double*> matrices;      // [s * n_vars + u]: column-major k x k, p[r + k c]
  std::vector<char> known;                  // per key: the intruder matches on it
};

// The perturbed variables of a per-variable plan (VarsPlanView above), indexed
// for the algebra: variable v is key key_of_var[v]; group[c] numbers the
// combinations of the unperturbed keys (cells of one group can reach each
// other, cells of different groups never).
class VarsIndex {
 public:
  explicit VarsIndex(const VarsPlanView& plan) : plan_(plan), key_of_var_(plan.n_vars, -1) {
    for (int k = 0; k < plan.n_keys; ++k) {
      const int v = plan.var_of_key[k];
      if (v >= plan.n_vars) throw std::invalid_argument("vars plan: variable out of range");
      if (v >= 0) key_of_var_[v] = k;
    }
    for (int v = 0; v < plan.n_vars; ++v)
      if (key_of_var_[v] < 0) throw std::invalid_argument("vars plan: variable without a key");
    if (static_cast<int>(plan.matrices.size()) != plan.n_strata * plan.n_vars)
      throw std::invalid_argument("vars plan: malformed view");
    std::map<std::vector<int>, int> gid;
    std::vector<int> sig;
    group_.resize(plan.n_cells);
    for (int c = 0; c < plan.n_cells; ++c) {
      sig.clear();
      for (int k = 0; k < plan.n_keys; ++k)
        if (plan.var_of_key[k] < 0) sig.push_back(plan.codes[k][c]);
      group_[c] = gid.emplace(sig, static_cast<int>(gid.size())).first->second;
    }
    n_groups_ = static_cast<int>(gid.size());
  }

  const VarsPlanView& plan() const { return plan_; }
  int n_cells() const { return plan_.n_cells; }
  int n_vars() const { return plan_.n_vars; }
  int n_strata() const { return plan_.n_strata; }
  int count(int c) const { return plan_.counts[c]; }
  int stratum(int c) const { return plan_.stratum[c]; }
  int group(int c) const { return group_[c]; }
  int n_groups() const { return n_groups_; }
  int n_cat(int v) const { return plan_.n_levels[key_of_var_[v]]; }
  int code(int v, int c) const { return plan_.codes[key_of_var_[v]][c]; }
  const double* mat(int s, int v) const { return plan_.matrices[static_cast<std::size_t>(s) * plan_.n_vars + v]; }
  // P_v[to, from] in stratum s
  double p(int s, int v, int to, int from) const {
    return mat(s, v)[static_cast<std::int64_t>(from) * n_cat(v) + to];
  }

 private:
  const VarsPlanView& plan_;
  std::vector<int> key_of_var_;
  std::vector<int> group_;
  int n_groups_ = 0;
};

// ---- draws ------------------------------------------------------------------

// Inverse-CDF sampler of every column of every matrix. Each record uses one
// uniform per perturbed variable, in record order and then variable order;
// the new category is the first r with u < sum_{r' <= r} P_v[r', c] (binary
// search on the cumulative column), or the last category of positive mass if
// rounding leaves u above the total.
class VarsSampler {
 public:
  explicit VarsSampler(const VarsIndex& plan) : plan_(plan) {
    const std::int64_t nm = static_cast<std::int64_t>(plan.n_strata()) * plan.n_vars();
    cum_start_.resize(nm);
    last_.resize(nm);
    for (int s = 0; s < plan.n_strata(); ++s) {
      for (int v = 0; v < plan.n_vars(); ++v) {
        const int k = plan.n_cat(v);
        const std::int64_t idx = static_cast<std::int64_t>(s) * plan.n_vars() + v;
        cum_start_[idx] = static_cast<std::int64_t>(cum_.size());
        last_[idx].assign(k, 0);
        for (int c = 0; c < k; ++c) {
          double acc = 0.0;
          int last = 0;
          for (int r = 0; r < k; ++r) {
            const double pr = plan.p(s, v, r, c);
            if (pr > 0.0) last = r;
            acc += pr;
            cum_.push_back(acc);
          }
          last_[idx][c] = last;
        }
      }
    }
  }

  int draw(int s, int v, int from, double u) const {
    const std::int64_t idx = static_cast<std::int64_t>(s) * plan_.n_vars() + v;
    const int k = plan_.n_cat(v);
    const double* col = cum_.data() + cum_start_[idx] + static_cast<std::int64_t>(from) * k;
    const int r = static_cast<int>(std::upper_bound(col, col + k, u) - col);
    const int last = last_[idx][from];
    return r > last ? last : r;
  }

 private:
  const VarsIndex& plan_;
  std::vector<double> cum_;
  std::vector<std::int64_t> cum_start_;
  std::vector<std::vector<int>> last_;
};

// New categories of every record: out[v * n + rec] (0-based; -1 for a record
// in no cell, cell[rec] < 0). Linear in the records.
template <class Rng, class Interrupt>
std::vector<int> vars_draw(const VarsIndex& plan, const int* cell, std::size_t n, Rng& rng,
                           Interrupt&& interrupt) {
  VarsSampler sampler(plan);
  std::vector<int> out(n * static_cast<std::size_t>(plan.n_vars()), -1);
  for (std::size_t rec = 0; rec < n; ++rec) {
    const int c = cell[rec];
    if (c < 0) continue;
    if (c >= plan.n_cells()) throw std::invalid_argument("vars_draw: cell id out of range");
    const int s = plan.stratum(c);
    for (int v = 0; v < plan.n_vars(); ++v) {
      out[static_cast<std::size_t>(v) * n + rec] = sampler.draw(s, v, plan.code(v, c), rng.uniform());
    }
    if ((rec & 0xFFFF) == 0xFFFF) interrupt();
  }
  return out;
}

// ---- costs ------------------------------------------------------------------

// Expected number of records whose cell changes, sum_i T_i (1 - alpha(i, i)),
// and the total perturbation variance over all cells of the
// cross-classification (eq. 3.6 summed over j),
//   sum_j V(S_j | T) = sum_i T_i (1 - sum_j alpha(j, i)^2)
//                    = sum_i T_i (1 - prod_v sum_r P_v[r, i_v]^2),
// the same totals as eq. 6.3 gives for an IFPR block.
struct PlanCost {
  double changed = 0.0;
  double variance = 0.0;
};

inline PlanCost vars_cost(const VarsIndex& plan) {
  // column sums of squares, per (stratum, variable, category)
  std::vector<std::vector<double>> sq(static_cast<std::size_t>(plan.n_strata()) * plan.n_vars());
  for (int s = 0; s < plan.n_strata(); ++s) {
    for (int v = 0; v < plan.n_vars(); ++v) {
      const int k = plan.n_cat(v);
      auto& q = sq[static_cast<std::size_t>(s) * plan.n_vars() + v];
      q.assign(k, 0.0);
      for (int c = 0; c < k; ++c)
        for (int r = 0; r < k; ++r) q[c] += plan.p(s, v, r, c) * plan.p(s, v, r, c);
    }
  }
  PlanCost out;
  for (int c = 0; c < plan.n_cells(); ++c) {
    const int s = plan.stratum(c);
    double stay = 1.0, norm = 1.0;
    for (int v = 0; v < plan.n_vars(); ++v) {
      const int i = plan.code(v, c);
      stay *= plan.p(s, v, i, i);
      norm *= sq[static_cast<std::size_t>(s) * plan.n_vars() + v][i];
    }
    out.changed += plan.count(c) * (1.0 - stay);
    out.variance += plan.count(c) * (1.0 - norm);
  }
  return out;
}

// Probability that a unit of each cell keeps its cell, prod_v P_v[i_v, i_v].
inline std::vector<double> vars_stay(const VarsIndex& plan) {
  std::vector<double> out(plan.n_cells(), 1.0);
  for (int c = 0; c < plan.n_cells(); ++c)
    for (int v = 0; v < plan.n_vars(); ++v) {
      const int i = plan.code(v, c);
      out[c] *= plan.p(plan.stratum(c), v, i, i);
    }
  return out;
}

// ---- moments of the released counts ------------------------------------------

// For every target cell j (given by its group, stratum and perturbed codes),
//   out[j] = sum_i T_i alpha(j, i)^power
// over the source cells i (the plan's cells). power 1 gives E(S_j | T) and,
// with power 2, V(S_j | T) = E - sum_i T_i alpha(j, i)^2 (eq. 3.6: the units
// move independently, so S_j is a sum of Bernoulli(alpha(j, i)) counts).
//
// Contraction one variable at a time, within each group of cells that agree
// on every unperturbed key (alpha = 0 across groups, and one stratum per
// group): a state maps the key (j_1..j_v, i_{v+1}..i_V), mixed radix over the
// k_v, to sum T_i prod_{u <= v} P_u[j_u, i_u]^power; step v replaces i_v by
// every j_v that continues a prefix of some target. The exact sums of
// products of the same numbers as the direct double sum, in another order:
// the relative rounding error is at most (V + log2(#terms)) * eps.
// Work: the states times k_v at each step, never |targets| x |sources|
// unless the keys force it.
inline std::vector<double> vars_power_sums(const VarsIndex& plan, int n_targets, const int* t_group,
                                           const int* t_code /* v * n_targets + j */, int power) {
  const int V = plan.n_vars();
  std::vector<double> radix(V + 1, 1.0);
  std::vector<std::int64_t> mult(V + 1, 1);
  for (int v = V - 1; v >= 0; --v) {
    radix[v] = radix[v + 1] * plan.n_cat(v);
    if (radix[v] > 9.0e18) throw std::invalid_argument("vars_power_sums: too many category combinations");
    mult[v] = mult[v + 1] * plan.n_cat(v);
  }
  // mixed radix: variable v has weight mult[v + 1]
  auto weight = [&](int v) { return mult[v + 1]; };
  std::vector<double> out(n_targets, 0.0);
  if (n_targets == 0) return out;
  int n_groups = 0;
  for (int c = 0; c < plan.n_cells(); ++c) n_groups = std::max(n_groups, plan.group(c) + 1);
  for (int j = 0; j < n_targets; ++j) n_groups = std::max(n_groups, t_group[j] + 1);
  std::vector<std::vector<int>> src(n_groups), tgt(n_groups);
  for (int c = 0; c < plan.n_cells(); ++c) src[plan.group(c)].push_back(c);
  for (int j = 0; j < n_targets; ++j) tgt[t_group[j]].push_back(j);
  for (int g = 0; g < n_groups; ++g) {
    if (src[g].empty() || tgt[g].empty()) continue;
    const int s = plan.stratum(src[g][0]);
    std::unordered_map<std::int64_t, double> state, next;
    for (int c : src[g]) {
      std::int64_t key = 0;
      for (int v = 0; v < V; ++v) key += plan.code(v, c) * weight(v);
      state[key] += plan.count(c);
    }
    for (int v = 0; v < V; ++v) {
      // the continuations j_v of every target prefix (j_1..j_{v-1}), keyed by
      // the prefix in the same mixed radix
      std::unordered_map<std::int64_t, std::vector<int>> cont;
      for (int j : tgt[g]) {
        std::int64_t pre = 0;
        for (int u = 0; u < v; ++u) pre += t_code[static_cast<std::int64_t>(u) * n_targets + j] * weight(u);
        auto& list = cont[pre];
        const int jv = t_code[static_cast<std::int64_t>(v) * n_targets + j];
        if (std::find(list.begin(), list.end(), jv) == list.end()) list.push_back(jv);
      }
      const double* P = plan.mat(s, v);
      const int k = plan.n_cat(v);
      const std::int64_t w = weight(v);
      next.clear();
      for (const auto& kv : state) {
        const std::int64_t key = kv.first;
        const std::int64_t below = key % w;            // i_{v+1}.. (source codes)
        const std::int64_t iv = (key / w) % k;         // i_v
        const std::int64_t pre = key - below - iv * w;  // j_1..j_{v-1}
        auto it = cont.find(pre);
        if (it == cont.end()) continue;
        for (int jv : it->second) {
          const double pr = P[iv * k + jv];
          if (pr == 0.0) continue;
          const double f = power == 1 ? pr : std::pow(pr, power);
          next[pre + jv * w + below] += kv.second * f;
        }
      }
      state.swap(next);
    }
    for (int j : tgt[g]) {
      std::int64_t key = 0;
      for (int v = 0; v < V; ++v) key += t_code[static_cast<std::int64_t>(v) * n_targets + j] * weight(v);
      auto it = state.find(key);
      out[j] = it == state.end() ? 0.0 : it->second;
    }
  }
  return out;
}

// E(S_j | T) and V(S_j | T) (eq. 3.6) of every cell of the plan.
struct VarsCellMoments {
  std::vector<double> mean, var;
};

inline VarsCellMoments vars_cell_moments(const VarsIndex& plan) {
  const int n = plan.n_cells(), V = plan.n_vars();
  std::vector<int> g(n), code(static_cast<std::size_t>(n) * V);
  for (int c = 0; c < n; ++c) {
    g[c] = plan.group(c);
    for (int v = 0; v < V; ++v) code[static_cast<std::size_t>(v) * n + c] = plan.code(v, c);
  }
  VarsCellMoments out;
  out.mean = vars_power_sums(plan, n, g.data(), code.data(), 1);
  const std::vector<double> q = vars_power_sums(plan, n, g.data(), code.data(), 2);
  out.var.resize(n);
  for (int c = 0; c < n; ++c) out.var[c] = std::max(0.0, out.mean[c] - q[c]);
  return out;
}

// Moments of the released count S_D of every category D of one perturbed
// variable v: a unit of cell i lands in D with probability
// q_i = P_v[D, i_v] (its stratum's matrix), independently, so
// E(S_D | T) = sum_i T_i q_i and V(S_D | T) = sum_i T_i q_i (1 - q_i)
// (eq. 3.6 on the margin). Linear in the cells plus strata x k_v^2.
inline void vars_category_moments(const VarsIndex& plan, int v, std::vector<double>& mean,
                                  std::vector<double>& var) {
  const int k = plan.n_cat(v);
  // records per (stratum, category of v)
  std::vector<double> t(static_cast<std::size_t>(plan.n_strata()) * k, 0.0);
  for (int c = 0; c < plan.n_cells(); ++c)
    t[static_cast<std::size_t>(plan.stratum(c)) * k + plan.code(v, c)] += plan.count(c);
  mean.assign(k, 0.0);
  var.assign(k, 0.0);
  for (int s = 0; s < plan.n_strata(); ++s)
    for (int i = 0; i < k; ++i) {
      const double ti = t[static_cast<std::size_t>(s) * k + i];
      if (ti == 0.0) continue;
      for (int d = 0; d < k; ++d) {
        const double q = plan.p(s, v, d, i);
        mean[d] += ti * q;
        var[d] += ti * q * (1.0 - q);
      }
    }
}

// ---- Monte Carlo replications ---------------------------------------------

// Released count S_j of every cell of the plan (the original nonempty
// cells) in `reps` replications, drawing every unit with VarsSampler and
// locating its new cell by its group and codes; sums of the powers 1..4 of
// S_j - T_j, and the correct-match probability of a target unit B of cell
// `target` (1 / S_target if B kept its cell, else 0). Linear in the units
// per replication. Units landing in cells that were empty are counted in
// `moved` but in no S_j.
struct VarsSimulation {
  std::vector<double> s1, s2, s3, s4;
  double cm_sum = 0.0, cm_sq = 0.0;
  double moved = 0.0;
};

template <class Rng, class Interrupt>
VarsSimulation vars_simulate(const VarsIndex& plan, int reps, int target, Rng& rng, Interrupt&& interrupt) {
  const int V = plan.n_vars();
  std::vector<std::int64_t> mult(V + 1, 1);
  double radix = 1.0;
  for (int v = V - 1; v >= 0; --v) {
    radix *= plan.n_cat(v);
    mult[v] = mult[v + 1] * plan.n_cat(v);
  }
  int n_groups = 0;
  for (int c = 0; c < plan.n_cells(); ++c) n_groups = std::max(n_groups, plan.group(c) + 1);
  if (radix * n_groups > 9.0e18) throw std::invalid_argument("vars_simulate: too many category combinations");
  auto key_of = [&](int g, const int* codes) {
    std::int64_t k = static_cast<std::int64_t>(g) * mult[0];
    for (int v = 0; v < V; ++v) k += codes[v] * mult[v + 1];
    return k;
  };
  std::unordered_map<std::int64_t, int> cell_of;
  std::vector<int> codes(V);
  for (int c = 0; c < plan.n_cells(); ++c) {
    for (int v = 0; v < V; ++v) codes[v] = plan.code(v, c);
    cell_of[key_of(plan.group(c), codes.data())] = c;
  }
  VarsSampler sampler(plan);
  VarsSimulation out;
  out.s1.assign(plan.n_cells(), 0.0);
  out.s2 = out.s3 = out.s4 = out.s1;
  std::vector<std::int64_t> s(plan.n_cells());
  std::int64_t work = 0;
  for (int rep = 0; rep < reps; ++rep) {
    std::fill(s.begin(), s.end(), 0);
    bool b_stayed = false;
    for (int c = 0; c < plan.n_cells(); ++c) {
      const int st = plan.stratum(c);
      for (int u = 0; u < plan.count(c); ++u) {
        bool same = true;
        for (int v = 0; v < V; ++v) {
          const int from = plan.code(v, c);
          codes[v] = sampler.draw(st, v, from, rng.uniform());
          same = same && codes[v] == from;
        }
        if (c == target && u == 0) b_stayed = same;
        if (same) {
          ++s[c];
          continue;
        }
        out.moved += 1.0;
        auto it = cell_of.find(key_of(plan.group(c), codes.data()));
        if (it != cell_of.end()) ++s[it->second];
      }
      work += plan.count(c);
      if (work > 100000) {
        report_progress(interrupt, (rep + static_cast<double>(c + 1) / plan.n_cells()) / reps);
        work = 0;
      }
    }
    for (int c = 0; c < plan.n_cells(); ++c) {
      const double d = static_cast<double>(s[c] - plan.count(c)), d2 = d * d;
      out.s1[c] += d;
      out.s2[c] += d2;
      out.s3[c] += d2 * d;
      out.s4[c] += d2 * d2;
    }
    if (target >= 0) {
      const double cm = b_stayed ? 1.0 / static_cast<double>(s[target]) : 0.0;
      out.cm_sum += cm;
      out.cm_sq += cm * cm;
    }
  }
  report_progress(interrupt, 1.0);
  return out;
}

}  // namespace sdcRisk

#endif  // SDCRISK_PLAN_VARS_HPP
