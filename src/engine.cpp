// The kinds of plan behind sdcRisk_glue::EnginePlan: a block plan (IFPR and
// explicit matrix blocks), the same for an intruder who knows only some
// keys, and a per-variable plan. Each holds 0-based copies of what the core
// reads and answers every operation with the core's functions for its kind.
#include <Rcpp.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "glue.h"
#include "sdcRisk/algebra.hpp"
#include "sdcRisk/perturb.hpp"
#include "sdcRisk/plan_vars.hpp"
#include "sdcRisk/risk.hpp"
#include "sdcRisk/risk_known.hpp"
#include "sdcRisk/risk_vars.hpp"
#include "sdcRisk/simulate.hpp"

namespace sdcRisk_glue {

namespace {

[[noreturn]] void malformed(const char* what) {
  throw std::invalid_argument(std::string("malformed plan: ") + what);
}

// 0-based copies of a block plan's vectors and a PlanView of them. The R
// side (validate_pram_plan()) has checked them; the sizes are checked
// again so that no copy reads out of bounds.
struct PlanHolder {
  std::vector<int> counts, block_start, block_cells;
  std::vector<double> theta, matrix;
  std::vector<std::int64_t> matrix_start;
  sdcRisk::PlanView view;

  explicit PlanHolder(const Rcpp::List& plan) {
    Rcpp::IntegerVector cnt = plan["counts"], bs = plan["block_start"], bc = plan["block_cells"];
    Rcpp::NumericVector th = plan["theta"], mat = plan["matrix"], ms = plan["matrix_start"];
    counts.assign(cnt.begin(), cnt.end());
    block_start.assign(bs.begin(), bs.end());
    block_cells = zero_based(bc);
    theta.assign(th.begin(), th.end());
    matrix.assign(mat.begin(), mat.end());
    matrix_start.resize(ms.size());
    for (R_xlen_t i = 0; i < ms.size(); ++i)
      matrix_start[i] = Rcpp::NumericVector::is_na(ms[i]) ? -1 : static_cast<std::int64_t>(ms[i]);
    const int nb = static_cast<int>(theta.size());
    if (static_cast<int>(block_start.size()) != nb + 1 || static_cast<int>(matrix_start.size()) != nb)
      malformed("block offsets");
    view.n_cells = static_cast<int>(counts.size());
    view.counts = counts.data();
    view.n_blocks = nb;
    view.block_start = block_start.data();
    view.block_cells = block_cells.data();
    view.theta = theta.data();
    view.matrix = matrix.data();
    view.matrix_start = matrix_start.data();
    sdcRisk::check_plan(view);
  }
};

// 0-based copies of a per-variable plan and a VarsPlanView of them.
struct VarsPlanHolder {
  std::vector<int> counts, stratum;
  std::vector<std::vector<int>> codes;
  std::vector<std::vector<double>> mats;
  sdcRisk::VarsPlanView view;

  explicit VarsPlanHolder(const Rcpp::List& plan) {
    Rcpp::IntegerVector cnt = plan["counts"], st = plan["stratum"], nl = plan["n_levels"], vk = plan["var_of_key"];
    Rcpp::LogicalVector kn = plan["known"];
    Rcpp::List cd = plan["codes"], mt = plan["matrices"];
    const int n_strata = Rcpp::as<int>(plan["n_strata"]), n_vars = Rcpp::as<int>(plan["n_vars"]);
    const R_xlen_t nk = cd.size();
    if (nl.size() != nk || vk.size() != nk || kn.size() != nk || st.size() != cnt.size() ||
        mt.size() != static_cast<R_xlen_t>(n_strata) * n_vars)
      malformed("per-variable plan sizes");
    counts.assign(cnt.begin(), cnt.end());
    stratum = zero_based(st);
    for (int s : stratum)
      if (s < 0 || s >= n_strata) malformed("stratum out of range");
    view.n_cells = static_cast<int>(counts.size());
    view.n_keys = static_cast<int>(nk);
    codes.resize(nk);
    for (R_xlen_t k = 0; k < nk; ++k) {
      Rcpp::IntegerVector c = cd[k];
      if (c.size() != cnt.size()) malformed("codes of a key");
      codes[k] = zero_based(c);
      for (int x : codes[k])
        if (x < 0 || x >= nl[k]) malformed("code out of range");
      view.codes.push_back(codes[k].data());
      view.n_levels.push_back(nl[k]);
      view.var_of_key.push_back(vk[k] - 1);
      view.known.push_back(kn[k] == TRUE ? 1 : 0);
    }
    for (R_xlen_t m = 0; m < mt.size(); ++m) {
      Rcpp::NumericVector x = mt[m];
      mats.emplace_back(x.begin(), x.end());
    }
    for (R_xlen_t m = 0; m < mt.size(); ++m) {
      const int u = static_cast<int>(m % n_vars);
      int k = -1;
      for (R_xlen_t kk = 0; kk < nk; ++kk)
        if (vk[kk] - 1 == u) k = static_cast<int>(kk);
      if (k < 0 || static_cast<R_xlen_t>(mats[m].size()) != static_cast<R_xlen_t>(nl[k]) * nl[k])
        malformed("matrix size");
      view.matrices.push_back(mats[m].data());
    }
    view.counts = counts.data();
    view.stratum = stratum.data();
    view.n_strata = n_strata;
    view.n_vars = n_vars;
  }
};

Rcpp::List simulation_list(const std::vector<double>& s1, const std::vector<double>& s2,
                           const std::vector<double>& s3, const std::vector<double>& s4, double cm_sum,
                           double cm_sq, double moved) {
  return Rcpp::List::create(Rcpp::Named("s1") = Rcpp::wrap(s1), Rcpp::Named("s2") = Rcpp::wrap(s2),
                            Rcpp::Named("s3") = Rcpp::wrap(s3), Rcpp::Named("s4") = Rcpp::wrap(s4),
                            Rcpp::Named("cm_sum") = cm_sum, Rcpp::Named("cm_sq") = cm_sq,
                            Rcpp::Named("moved") = moved);
}

// The per-cell weights of the certificate (sdcRisk::max_risk()): the
// plan's element `weight` when engine_weighted() in R has set it (checked
// there), else none (every weight 1).
std::vector<double> read_weights(const Rcpp::List& plan, int n_cells) {
  if (!plan.containsElementNamed("weight")) return {};
  Rcpp::NumericVector w = plan["weight"];
  std::vector<double> out(w.begin(), w.end());
  sdcRisk::check_weights(out, n_cells);
  return out;
}

void check_cells(const std::vector<int>& cells, int n_cells) {
  for (int c : cells)
    if (c >= n_cells) throw std::invalid_argument("cell id out of range");
}

// ---- block plans ---------------------------------------------------------------

// Record i's 0-based cell from R's 1-based cell ids, read in place (-1 for
// NA or below 1: left out); an id above the cells is an internal error.
inline int record_cell(const int* id, int n_cells, std::size_t i) {
  const int v = id[i];  // NA_INTEGER < 1
  if (v > n_cells) throw std::invalid_argument("cell id out of range");
  return v < 1 ? -1 : v - 1;
}

class BlockEngine : public EnginePlan {
 public:
  explicit BlockEngine(const Rcpp::List& plan) : h_(plan), weight_(read_weights(plan, h_.view.n_cells)) {}
  int n_cells() const override { return h_.view.n_cells; }

  sdcRisk::CellRiskTable cell_risk(const std::vector<int>& targets, const std::vector<int>& a, bool) override {
    return sdcRisk::cell_risk(h_.view, targets, a, interrupt_callback());
  }
  sdcRisk::MaxRisk max_risk(sdcRisk::Goal goal) override {
    return sdcRisk::max_risk(h_.view, goal, weight_, interrupt_callback());
  }
  // Reads R's 1-based cell ids in place and writes the released ids
  // straight into the result: no 0-based copies of 10^7 ids. A mover's
  // entry holds -2 - slot (its new cell's position in block_cells) until a
  // second pass reads the new cells with independent reads (see
  // sdcRisk::pram_draw_moves()); -2 - slot > NA_INTEGER for every slot.
  SEXP draw(const Rcpp::IntegerVector& cell_id) override {
    const int nc = n_cells();
    const std::size_t n = static_cast<std::size_t>(cell_id.size());
    const int* id = cell_id.begin();
    const int* members = h_.view.block_cells;
    if (h_.view.n_blocks > 0 && h_.view.block_start[h_.view.n_blocks] > 2147483645)
      throw std::invalid_argument("draw: too many cells in blocks");
    Rcpp::IntegerVector out(alloc_large(INTSXP, static_cast<R_xlen_t>(n)));
    int* o = out.begin();
    // one pass: every record's id is copied as it is read, the movers'
    // overwritten (pram_draw_slots() visits records in order)
    RUniform rng;
    sdcRisk::pram_draw_slots(
        h_.view, n,
        [id, o, nc](std::size_t i) {
          const int c = record_cell(id, nc, i);
          o[i] = c < 0 ? NA_INTEGER : c + 1;
          return c;
        },
        rng, interrupt_callback(), [o](std::size_t i, int, int own, int slot) {
          if (slot != own) o[i] = -2 - slot;
        });
    for (std::size_t i = 0; i < n; ++i)
      if (o[i] < -1 && o[i] != NA_INTEGER) o[i] = members[-2 - o[i]] + 1;
    return out;
  }
  // Only the records that move: their numbers (1-based) and new cells.
  // The draws give each mover the slot of its new cell in the plan's
  // block_cells; the cells are read afterwards, in a pass of independent
  // reads (sdcRisk::pram_draw_moves()).
  SEXP draw_changes(const Rcpp::IntegerVector& cell_id) override {
    const int nc = n_cells();
    const std::size_t n = static_cast<std::size_t>(cell_id.size());
    if (n > static_cast<std::size_t>(2147483647)) throw std::invalid_argument("draw: too many records");
    const int* id = cell_id.begin();
    std::vector<int> at, slot;
    // capacity only (pages are mapped as records move): no reallocation
    reserve_large(at, n);
    reserve_large(slot, n);
    RUniform rng;
    sdcRisk::pram_draw_moves(
        h_.view, n,
        [id, nc](std::size_t i) { return record_cell(id, nc, i); },
        rng, interrupt_callback(), [&at, &slot](std::size_t i, int s) {
          at.push_back(static_cast<int>(i) + 1);
          slot.push_back(s);
        });
    const R_xlen_t m = static_cast<R_xlen_t>(at.size());
    Rcpp::IntegerVector r_at(alloc_large(INTSXP, m)), r_to(alloc_large(INTSXP, m));
    std::copy(at.begin(), at.end(), r_at.begin());
    const int* members = h_.view.block_cells;
    int* to = r_to.begin();
    for (R_xlen_t j = 0; j < m; ++j) to[j] = members[slot[j]] + 1;
    return Rcpp::List::create(Rcpp::Named("at") = r_at, Rcpp::Named("to") = r_to);
  }
  Rcpp::List moments() override {
    const sdcRisk::CellMoments m = sdcRisk::block_moments(h_.view);
    return Rcpp::List::create(Rcpp::Named("mean") = Rcpp::wrap(m.mean), Rcpp::Named("var") = Rcpp::wrap(m.var));
  }
  Rcpp::List cost(bool stay) override {
    const sdcRisk::BlockCost c = sdcRisk::block_cost(h_.view);
    return Rcpp::List::create(Rcpp::Named("changed") = c.changed, Rcpp::Named("variance") = c.variance,
                              Rcpp::Named("stay") = stay ? Rcpp::wrap(sdcRisk::block_stay(h_.view)) : R_NilValue);
  }
  Rcpp::List category_moments(const std::vector<int>& category, int n_cat, int) override {
    check_categories(category, n_cat);
    const sdcRisk::CategoryMoments m = sdcRisk::block_category_moments(h_.view, category.data(), n_cat);
    return Rcpp::List::create(Rcpp::Named("var") = Rcpp::wrap(m.var), Rcpp::Named("bound") = Rcpp::wrap(m.bound));
  }
  Rcpp::List simulate(int reps, int target) override {
    sdcRisk::SimulationOptions opt;
    opt.reps = reps;
    opt.target = target;
    RUniform rng;
    const sdcRisk::SimulationSums r = sdcRisk::simulate_release(h_.view, opt, rng, interrupt_callback());
    return simulation_list(r.s1, r.s2, r.s3, r.s4, r.cm_sum, r.cm_sq, static_cast<double>(r.moved_out));
  }
  std::vector<double> calibrate(sdcRisk::Goal goal, double target) override {
    return sdcRisk::calibrate_ifpr(h_.view, goal, target, weight_, interrupt_callback());
  }
  sdcRisk::KeyDamage key_damage(const std::vector<std::vector<int>>& codes,
                                const std::vector<std::vector<double>>& values) override {
    if (codes.size() != values.size()) throw std::invalid_argument("key damage: codes and values per key");
    sdcRisk::KeySpace ks;
    ks.n_cells = n_cells();
    for (std::size_t k = 0; k < codes.size(); ++k) {
      if (static_cast<int>(codes[k].size()) != n_cells() ||
          (!values[k].empty() && static_cast<int>(values[k].size()) != n_cells()))
        throw std::invalid_argument("key damage: one code and value per cell");
      ks.codes.push_back(codes[k].data());
      ks.value.push_back(values[k].empty() ? nullptr : values[k].data());
    }
    return sdcRisk::block_key_damage(h_.view, ks);
  }
  Rcpp::NumericMatrix block_matrix(int block) override {
    if (block < 0 || block >= h_.view.n_blocks) throw std::invalid_argument("block out of range");
    const int m = h_.view.block_size(block);
    const std::vector<double> p = sdcRisk::block_matrix(h_.view, block);
    Rcpp::NumericMatrix out(m, m);
    std::copy(p.begin(), p.end(), out.begin());
    return out;
  }
  Rcpp::NumericMatrix category_transitions(const std::vector<int>& category, int n_cat) override {
    check_categories(category, n_cat);
    const std::vector<double> t = sdcRisk::block_category_transitions(h_.view, category.data(), n_cat);
    Rcpp::NumericMatrix out(n_cat, n_cat);
    for (int x = 0; x < n_cat; ++x)
      for (int y = 0; y < n_cat; ++y) out(x, y) = t[static_cast<std::size_t>(x) * n_cat + y];
    return out;
  }

 protected:
  void check_categories(const std::vector<int>& category, int n_cat) const {
    if (static_cast<int>(category.size()) != n_cells()) throw std::invalid_argument("one category per cell expected");
    for (int c : category)
      if (c < 0 || c >= n_cat) throw std::invalid_argument("category out of range");
  }
  PlanHolder h_;
  std::vector<double> weight_;
};

// A block plan for an intruder who knows only some keys: the risks are
// those of the sets of cells he cannot tell apart (risk_known.hpp).
class BlockKnownEngine : public BlockEngine {
 public:
  explicit BlockKnownEngine(const Rcpp::List& plan) : BlockEngine(plan) {
    Rcpp::IntegerVector ks = plan["known_set"];
    if (ks.size() != n_cells()) malformed("known sets");
    sets_ = zero_based(ks);
    for (int s : sets_)
      if (s < 0 || s >= n_cells()) malformed("known set out of range");
  }
  sdcRisk::CellRiskTable cell_risk(const std::vector<int>& targets, const std::vector<int>& a, bool gamma) override {
    return sdcRisk::block_known_cell_risk(h_.view, sets_, targets, a, interrupt_callback(), gamma);
  }
  sdcRisk::MaxRisk max_risk(sdcRisk::Goal goal) override {
    return sdcRisk::block_known_max_risk(h_.view, sets_, goal, weight_, interrupt_callback());
  }

 private:
  std::vector<int> sets_;
};

// ---- per-variable plans -----------------------------------------------------------

class VarsEngine : public EnginePlan {
 public:
  explicit VarsEngine(const Rcpp::List& plan)
      : h_(plan), ix_(h_.view), weight_(read_weights(plan, h_.view.n_cells)) {}
  int n_cells() const override { return h_.view.n_cells; }

  sdcRisk::CellRiskTable cell_risk(const std::vector<int>& targets, const std::vector<int>& a, bool gamma) override {
    return sdcRisk::vars_cell_risk(h_.view, targets, a, gamma, interrupt_callback());
  }
  sdcRisk::MaxRisk max_risk(sdcRisk::Goal goal) override {
    return sdcRisk::vars_max_risk(h_.view, goal, weight_, interrupt_callback());
  }
  SEXP draw(const Rcpp::IntegerVector& cell_id) override {
    const std::vector<int> cells = zero_based(cell_id);
    check_cells(cells, n_cells());
    RUniform rng;
    const std::size_t n = cells.size();
    const std::vector<int> out = sdcRisk::vars_draw(ix_, cells.data(), n, rng, interrupt_callback());
    Rcpp::IntegerMatrix res(static_cast<int>(n), ix_.n_vars());
    for (std::size_t i = 0; i < out.size(); ++i) res[i] = out[i] < 0 ? NA_INTEGER : out[i] + 1;
    return res;
  }
  Rcpp::List moments() override {
    const sdcRisk::VarsCellMoments m = sdcRisk::vars_cell_moments(ix_);
    return Rcpp::List::create(Rcpp::Named("mean") = Rcpp::wrap(m.mean), Rcpp::Named("var") = Rcpp::wrap(m.var));
  }
  Rcpp::List cost(bool stay) override {
    const sdcRisk::PlanCost c = sdcRisk::vars_cost(ix_);
    return Rcpp::List::create(Rcpp::Named("changed") = c.changed, Rcpp::Named("variance") = c.variance,
                              Rcpp::Named("stay") = stay ? Rcpp::wrap(sdcRisk::vars_stay(ix_)) : R_NilValue);
  }
  Rcpp::List category_moments(const std::vector<int>&, int n_cat, int var) override {
    if (var < 0 || var >= ix_.n_vars()) throw std::invalid_argument("variable out of range");
    std::vector<double> mean, var_out;
    sdcRisk::vars_category_moments(ix_, var, mean, var_out);
    if (static_cast<int>(var_out.size()) != n_cat) throw std::invalid_argument("number of categories");
    return Rcpp::List::create(Rcpp::Named("var") = Rcpp::wrap(var_out),
                              Rcpp::Named("bound") = Rcpp::NumericVector(n_cat, NA_REAL),
                              Rcpp::Named("mean") = Rcpp::wrap(mean));
  }
  Rcpp::List simulate(int reps, int target) override {
    RUniform rng;
    const sdcRisk::VarsSimulation r = sdcRisk::vars_simulate(ix_, reps, target, rng, interrupt_callback());
    return simulation_list(r.s1, r.s2, r.s3, r.s4, r.cm_sum, r.cm_sq, r.moved);
  }

 private:
  VarsPlanHolder h_;
  sdcRisk::VarsIndex ix_;
  std::vector<double> weight_;
};

}  // namespace

std::unique_ptr<EnginePlan> make_engine_plan(const Rcpp::List& plan) {
  const std::string kind = Rcpp::as<std::string>(plan["kind"]);
  if (kind == "vars") return std::make_unique<VarsEngine>(plan);
  if (kind == "blocks") {
    if (plan.containsElementNamed("known_set")) return std::make_unique<BlockKnownEngine>(plan);
    return std::make_unique<BlockEngine>(plan);
  }
  throw std::invalid_argument("unknown kind of plan: " + kind);
}

Rcpp::List wrap_table(const sdcRisk::CellRiskTable& res) {
  return Rcpp::List::create(Rcpp::Named("risk") = Rcpp::wrap(res.risk),
                            Rcpp::Named("log_prob") = Rcpp::wrap(res.log_prob),
                            Rcpp::Named("log_p_empty") = Rcpp::wrap(res.log_p_empty),
                            Rcpp::Named("gamma") = Rcpp::wrap(res.gamma));
}

Rcpp::List wrap_max(const sdcRisk::MaxRisk& res) {
  return Rcpp::List::create(Rcpp::Named("value") = res.value,
                            Rcpp::Named("cell") = res.cell < 0 ? NA_INTEGER : res.cell + 1,
                            Rcpp::Named("a") = res.a < 0 ? NA_INTEGER : res.a,
                            Rcpp::Named("targets_evaluated") = static_cast<double>(res.targets_evaluated));
}

}  // namespace sdcRisk_glue
