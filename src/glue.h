// The one bridge between R and the C++ core (inst/include/sdcRisk).
//
// * run_engine() runs every entry point: the core's typed exceptions
//   (sdcRisk/errors.hpp: sdcRisk::underflow_error; std::invalid_argument
//   for a broken internal assumption; std::bad_alloc) are caught here, once,
//   and returned to R as an object of class "sdcRisk_core_error" that
//   core_call() in R/utils-core.R turns into a classed R condition
//   (sdcRisk_error_underflow, sdcRisk_error_internal, sdcRisk_error_memory).
//   A user interrupt passes through.
// * EnginePlan: a plan as the core sees it, its kind (block plan, block
//   plan for an intruder who knows some keys, per-variable plan) chosen
//   once, in make_engine_plan(), from the list engine_plan() builds in R;
//   the operations are virtual, so every entry point has one path.
// * RUniform: the core's random number interface, answered by R's
//   generator, so that set.seed() reproduces every draw.
// * zero_based() / one_based(): the only conversions between R's 1-based
//   indices (NA for none) and the core's 0-based ones (-1 for none).
#ifndef SDCRISK_GLUE_H
#define SDCRISK_GLUE_H

#include <Rcpp.h>

#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "sdcRisk/design_optimal.hpp"
#include "sdcRisk/errors.hpp"
#include "sdcRisk/memory.hpp"
#include "sdcRisk/plan.hpp"
#include "sdcRisk/plan_vars.hpp"
#include "sdcRisk/risk.hpp"
#include "sdcRisk/risk_vars.hpp"

namespace sdcRisk_glue {

// ---- index conversion ------------------------------------------------------

inline std::vector<int> zero_based(const Rcpp::IntegerVector& x) {
  std::vector<int> out(x.size());
  for (R_xlen_t i = 0; i < x.size(); ++i) out[i] = x[i] == NA_INTEGER ? -1 : x[i] - 1;
  return out;
}

inline Rcpp::IntegerVector one_based(const std::vector<int>& x) {
  Rcpp::IntegerVector out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = x[i] < 0 ? NA_INTEGER : x[i] + 1;
  return out;
}

// ---- large vectors ----------------------------------------------------------

// A new R vector of n elements, not initialised, with the hint that its
// pages be huge (sdcRisk/memory.hpp) given before anything writes them.
inline SEXP alloc_large(SEXPTYPE type, R_xlen_t n) {
  SEXP x = Rf_allocVector(type, n);
  switch (type) {
    case INTSXP: sdcRisk::advise_huge_pages(INTEGER(x), static_cast<std::size_t>(n) * sizeof(int)); break;
    case LGLSXP: sdcRisk::advise_huge_pages(LOGICAL(x), static_cast<std::size_t>(n) * sizeof(int)); break;
    case REALSXP: sdcRisk::advise_huge_pages(REAL(x), static_cast<std::size_t>(n) * sizeof(double)); break;
    default: break;
  }
  return x;
}

// Capacity for n elements, with the same hint (pages are mapped only as
// elements are added).
template <class T>
void reserve_large(std::vector<T>& v, std::size_t n) {
  v.reserve(n);
  sdcRisk::advise_huge_pages(v.data(), v.capacity() * sizeof(T));
}

// ---- random numbers and interrupts -------------------------------------------

struct RUniform {
  double uniform() { return R::unif_rand(); }
};

// The callback of the core's long loops (sdcRisk/progress.hpp): f() checks
// for a user interrupt; f(fraction) does too, and moves the progress bar
// that R/utils-core.R's core_call(progress =) has opened, if any: the R
// function bound to `update` in the package's `the_progress` environment,
// called at most once per percent. Without a bar it costs one interrupt
// check, as before.
class ProgressCallback {
 public:
  ProgressCallback() {
    Rcpp::Environment ns = Rcpp::Environment::namespace_env("sdcRisk");
    SEXP state = ns.get("the_progress");
    if (TYPEOF(state) == ENVSXP) {
      SEXP fn = Rcpp::Environment(state).get("update");
      if (Rf_isFunction(fn)) update_ = fn;
    }
  }
  void operator()() const { Rcpp::checkUserInterrupt(); }
  void operator()(double fraction) {
    Rcpp::checkUserInterrupt();
    const bool final_step = fraction >= 1.0 && last_ < 1.0;
    if (update_ == R_NilValue || (fraction < last_ + 0.01 && !final_step)) return;
    last_ = fraction;
    Rcpp::Function update(update_);
    update(fraction);
  }

 private:
  SEXP update_ = R_NilValue;  // bound in the_progress while the call runs
  double last_ = -1.0;
};

inline ProgressCallback interrupt_callback() { return ProgressCallback(); }

// While alive, lets the core's long inner loops (sdcRisk::interrupt_hook())
// check for a user interrupt.
struct InterruptHookGuard {
  InterruptHookGuard() { sdcRisk::interrupt_hook() = []() { Rcpp::checkUserInterrupt(); }; }
  ~InterruptHookGuard() { sdcRisk::interrupt_hook() = nullptr; }
  InterruptHookGuard(const InterruptHookGuard&) = delete;
  InterruptHookGuard& operator=(const InterruptHookGuard&) = delete;
};

// ---- the bridge ----------------------------------------------------------------

inline SEXP core_error(const char* kind, const std::string& message) {
  Rcpp::List out = Rcpp::List::create(Rcpp::Named("kind") = kind, Rcpp::Named("message") = message);
  out.attr("class") = "sdcRisk_core_error";
  return out;
}

// Runs an entry point. f() returns anything Rcpp::wrap() takes.
template <class F>
SEXP run_engine(F&& f) {
  try {
    InterruptHookGuard guard;
    return Rcpp::wrap(f());
  } catch (const Rcpp::internal::InterruptedException&) {
    throw;
  } catch (const sdcRisk::underflow_error& e) {
    return core_error("underflow", e.what());
  } catch (const std::bad_alloc& e) {
    return core_error("memory", e.what());
  } catch (const std::exception& e) {  // std::invalid_argument: a broken assumption
    return core_error("internal", e.what());
  }
}

// ---- plans ------------------------------------------------------------------------

// The operations of the core on a plan, whatever its kind. Results are R
// objects; indices in them are 1-based.
class EnginePlan {
 public:
  virtual ~EnginePlan() = default;
  virtual int n_cells() const = 0;
  // R_j(a, t), P(S_j = a), P(S_j = 0), gamma of target cells (0-based).
  virtual sdcRisk::CellRiskTable cell_risk(const std::vector<int>& targets, const std::vector<int>& a,
                                           bool gamma) = 0;
  // The maximum of w_j R_j(a, t) over a goal, w_j the plan's per-cell
  // weights (its element `weight`; 1 without it).
  virtual sdcRisk::MaxRisk max_risk(sdcRisk::Goal goal) = 0;
  // The released cell (block plans) or categories (per-variable plans) of
  // every record; `cell_id` 1-based as R holds it (NA: a record in no
  // cell), read in place.
  virtual SEXP draw(const Rcpp::IntegerVector& cell_id) = 0;
  // The same draws, as the records whose cell changes: list(at = records,
  // to = their released cells), both 1-based (block plans; no vector of
  // every record's cell).
  virtual SEXP draw_changes(const Rcpp::IntegerVector&) {
    throw std::invalid_argument("draw_changes: block plans only");
  }
  // E(S_i | T), V(S_i | T) of every cell.
  virtual Rcpp::List moments() = 0;
  // Expected changed records, total perturbation variance, P(keep cell).
  virtual Rcpp::List cost(bool stay) = 0;  // stay: also the probability of each cell to keep its units
  // V(S_D | T) (and the eq. 6.7 bound, NA where there is none) of the
  // categories D of one key: `category` (0-based, one per cell) for block
  // plans, the perturbed variable `var` (0-based) for per-variable plans.
  virtual Rcpp::List category_moments(const std::vector<int>& category, int n_cat, int var) = 0;
  // Monte Carlo sums of `reps` releases; target 0-based or -1.
  virtual Rcpp::List simulate(int reps, int target) = 0;
  // Operations of block plans only.
  virtual std::vector<double> calibrate(sdcRisk::Goal, double) { return unsupported<std::vector<double>>("calibrate"); }
  virtual Rcpp::NumericMatrix block_matrix(int) { return unsupported<Rcpp::NumericMatrix>("block_matrix"); }
  // Expected records changed and distance moved on each key (block plans):
  // `codes` 0-based per key and cell, `values` per key (empty: unordered).
  virtual sdcRisk::KeyDamage key_damage(const std::vector<std::vector<int>>&, const std::vector<std::vector<double>>&) {
    return unsupported<sdcRisk::KeyDamage>("key_damage");
  }
  virtual Rcpp::NumericMatrix category_transitions(const std::vector<int>&, int) {
    return unsupported<Rcpp::NumericMatrix>("category_transitions");
  }

 protected:
  template <class T>
  static T unsupported(const char* what) {
    throw std::invalid_argument(std::string(what) + " is not defined for this kind of plan");
  }
};

// The plan's kind, chosen once: "blocks" (with `known_set` for an intruder
// who knows only some keys) or "vars".
std::unique_ptr<EnginePlan> make_engine_plan(const Rcpp::List& plan);

// R's list of a risk table / a maximum, 1-based.
Rcpp::List wrap_table(const sdcRisk::CellRiskTable& res);
Rcpp::List wrap_max(const sdcRisk::MaxRisk& res);

}  // namespace sdcRisk_glue

#endif  // SDCRISK_GLUE_H
