// R glue for the suppression core (inst/include/sdcRisk/table_components.hpp,
// table_hull.hpp). The entry points run through run_engine() (src/glue.h),
// where exceptions are caught.
// None draws random numbers, so none saves and restores R's generator
// (rng = false: the clean-ups call them some 2,000 times a table).
#include <Rcpp.h>

#include <stdexcept>
#include <vector>

#include "glue.h"
#include "sdcRisk/table_boxes.hpp"
#include "sdcRisk/table_components.hpp"
#include "sdcRisk/table_hull.hpp"

// Components of the graph linking the nodes of each relation; 1-based
// relations and nodes in, 1-based component labels out.
// [[Rcpp::export(rng = false)]]
SEXP cpp_relation_components(const Rcpp::IntegerVector& relation, const Rcpp::IntegerVector& node,
                             int n_relation, int n_node) {
  return sdcRisk_glue::run_engine([&] {
    const std::vector<int> comp = sdcRisk::relation_components(sdcRisk_glue::zero_based(relation),
                                                               sdcRisk_glue::zero_based(node), n_relation, n_node);
    return sdcRisk_glue::one_based(comp);
  });
}

// Twin columns of a program with equality rows (sdcRisk::twin_columns());
// triplets with 1-based rows and columns. Returns list(root (1-based),
// a, b, size): column c is a + b x[root] on every table of the program.
// [[Rcpp::export(rng = false)]]
SEXP cpp_twin_columns(const Rcpp::IntegerVector& row, const Rcpp::IntegerVector& col, const Rcpp::NumericVector& v,
                      const Rcpp::NumericVector& rhs, int n_row, int n_col) {
  return sdcRisk_glue::run_engine([&] {
    const sdcRisk::TwinColumns t = sdcRisk::twin_columns(
        sdcRisk_glue::zero_based(row), sdcRisk_glue::zero_based(col), Rcpp::as<std::vector<double>>(v),
        Rcpp::as<std::vector<double>>(rhs), n_row, n_col);
    return Rcpp::List::create(Rcpp::Named("root") = sdcRisk_glue::one_based(t.root), Rcpp::Named("a") = t.a,
                              Rcpp::Named("b") = t.b, Rcpp::Named("size") = t.size);
  });
}

// The tables of a list of numeric vectors of one length, read in place, and
// that length (`n_row`; 0 for no table).
static std::vector<const double*> table_columns(const Rcpp::List& tables, std::size_t& n_row) {
  std::vector<const double*> tabs;
  tabs.reserve(static_cast<std::size_t>(tables.size()));
  R_xlen_t n = -1;
  for (R_xlen_t t = 0; t < tables.size(); ++t) {
    SEXP col = tables[t];
    if (TYPEOF(col) != REALSXP) throw std::invalid_argument("a table is not a numeric vector");
    if (n < 0) n = XLENGTH(col);
    if (XLENGTH(col) != n) throw std::invalid_argument("tables differ in length");
    tabs.push_back(REAL(col));
  }
  n_row = static_cast<std::size_t>(n < 0 ? 0 : n);
  return tabs;
}

// The largest and smallest value of rows `rows` over the tables (a list of
// numeric vectors of one length) that keep rows `check` within [lo - tol,
// hi + tol], or, with a `center` (numeric(0) for none), are moved toward it
// until they do; with `need_hi` and `need_lo` (numeric(0) for none), until
// every row reaches them; 1-based rows. Returns list(max, min, used).
// [[Rcpp::export(rng = false)]]
SEXP cpp_table_extremes(const Rcpp::List& tables, const Rcpp::IntegerVector& rows,
                        const Rcpp::IntegerVector& check, const Rcpp::NumericVector& lo,
                        const Rcpp::NumericVector& hi, const Rcpp::NumericVector& tol,
                        const Rcpp::NumericVector& center, const Rcpp::NumericVector& need_hi,
                        const Rcpp::NumericVector& need_lo) {
  return sdcRisk_glue::run_engine([&] {
    std::size_t n_row = 0;
    const std::vector<const double*> tabs = table_columns(tables, n_row);
    const sdcRisk::TableExtremes ex = sdcRisk::table_extremes(
        tabs, n_row, sdcRisk_glue::zero_based(rows),
        sdcRisk_glue::zero_based(check), Rcpp::as<std::vector<double>>(lo),
        Rcpp::as<std::vector<double>>(hi), Rcpp::as<std::vector<double>>(tol),
        Rcpp::as<std::vector<double>>(center), Rcpp::as<std::vector<double>>(need_hi),
        Rcpp::as<std::vector<double>>(need_lo));
    return Rcpp::List::create(Rcpp::Named("max") = ex.max, Rcpp::Named("min") = ex.min,
                              Rcpp::Named("used") = static_cast<double>(ex.used));
  });
}

// The extremes of rows `rows` over the convex combinations of `center` and
// the tables (a list of numeric vectors of one length) that keep rows
// `check` within [lo, hi] (sdcRisk::combination_extremes(): one small
// program per row whose extreme seen so far, `seen_hi` or `seen_lo`, falls
// short of `need_hi` or `need_lo`; with `all_or_none`, up to the first row
// whose best combination falls short; `warm`: each program from the
// basis the last one ended at, until its need); 1-based rows. Returns list(max, min,
// programs, settled).
// [[Rcpp::export(rng = false)]]
SEXP cpp_combination_extremes(const Rcpp::List& tables, const Rcpp::IntegerVector& rows,
                              const Rcpp::IntegerVector& check, const Rcpp::NumericVector& lo,
                              const Rcpp::NumericVector& hi, const Rcpp::NumericVector& tol,
                              const Rcpp::NumericVector& center, const Rcpp::NumericVector& need_hi,
                              const Rcpp::NumericVector& need_lo, const Rcpp::NumericVector& seen_hi,
                              const Rcpp::NumericVector& seen_lo, bool all_or_none, bool warm = true) {
  return sdcRisk_glue::run_engine([&] {
    std::size_t n_row = 0;
    const std::vector<const double*> tabs = table_columns(tables, n_row);
    if (tabs.empty()) n_row = static_cast<std::size_t>(center.size());
    if (static_cast<std::size_t>(center.size()) != n_row) {
      throw std::invalid_argument("the center differs in length from the tables");
    }
    const sdcRisk::CombinationExtremes ex = sdcRisk::combination_extremes(
        tabs, n_row, sdcRisk_glue::zero_based(rows), sdcRisk_glue::zero_based(check),
        Rcpp::as<std::vector<double>>(lo), Rcpp::as<std::vector<double>>(hi), Rcpp::as<std::vector<double>>(tol),
        Rcpp::as<std::vector<double>>(center), Rcpp::as<std::vector<double>>(need_hi),
        Rcpp::as<std::vector<double>>(need_lo), Rcpp::as<std::vector<double>>(seen_hi),
        Rcpp::as<std::vector<double>>(seen_lo), all_or_none, warm);
    return Rcpp::List::create(Rcpp::Named("max") = ex.max, Rcpp::Named("min") = ex.min,
                              Rcpp::Named("programs") = static_cast<double>(ex.programs),
                              Rcpp::Named("settled") = ex.settled);
  });
}

// The largest and smallest move of the cells `targets` over sparse
// witness tables (sdcRisk::witness_moves(): 0-based `id`, `cstart`,
// `by_cell`, read in place), shrunk to keep the bounds [lower, upper] of
// the cells `known` (1-based cells in). Returns list(up, dn).
// [[Rcpp::export(rng = false)]]
SEXP cpp_witness_moves(const Rcpp::NumericVector& y, const Rcpp::IntegerVector& id,
                       const Rcpp::IntegerVector& cstart, const Rcpp::IntegerVector& by_cell,
                       const Rcpp::NumericVector& lam_pos, const Rcpp::NumericVector& lam_neg,
                       const Rcpp::LogicalVector& dead, const Rcpp::IntegerVector& known,
                       const Rcpp::NumericVector& value, const Rcpp::NumericVector& lower,
                       const Rcpp::NumericVector& upper, const Rcpp::IntegerVector& targets) {
  return sdcRisk_glue::run_engine([&] {
    const sdcRisk::WitnessMoves m = sdcRisk::witness_moves(
        y, id, cstart, by_cell, Rcpp::as<std::vector<double>>(lam_pos), Rcpp::as<std::vector<double>>(lam_neg),
        Rcpp::as<std::vector<int>>(dead), sdcRisk_glue::zero_based(known), Rcpp::as<std::vector<double>>(value),
        Rcpp::as<std::vector<double>>(lower), Rcpp::as<std::vector<double>>(upper),
        sdcRisk_glue::zero_based(targets));
    return Rcpp::List::create(Rcpp::Named("up") = m.up, Rcpp::Named("dn") = m.dn);
  });
}

// Bounds on the columns of a program implied by its relations (triplets
// with 1-based rows and columns, `rhs` per row) and the bounds `lower`,
// `upper`, by at most `passes` passes of propagation. Returns list(lower,
// upper).
// [[Rcpp::export(rng = false)]]
SEXP cpp_relation_bounds(const Rcpp::IntegerVector& row, const Rcpp::IntegerVector& col,
                         const Rcpp::NumericVector& v, int n_row, int n_col,
                         const Rcpp::NumericVector& rhs, const Rcpp::NumericVector& lower,
                         const Rcpp::NumericVector& upper, int passes, double moved) {
  return sdcRisk_glue::run_engine([&] {
    const sdcRisk::ColumnBounds b = sdcRisk::relation_bounds(
        sdcRisk_glue::zero_based(row), sdcRisk_glue::zero_based(col), Rcpp::as<std::vector<double>>(v),
        n_row, n_col, Rcpp::as<std::vector<double>>(rhs), Rcpp::as<std::vector<double>>(lower),
        Rcpp::as<std::vector<double>>(upper), passes, moved);
    return Rcpp::List::create(Rcpp::Named("lower") = b.lower, Rcpp::Named("upper") = b.upper);
  });
}

// A component's program as R's core_program() gives it: list(i, j, v,
// nrow, ncol, rhs, lower, upper, vars, targets) (1-based triplets, cells
// `vars` of the columns, 1-based columns `targets`).
static sdcRisk::ComponentProgram program_of(const Rcpp::List& p) {
  sdcRisk::ComponentProgram cp;
  cp.row = sdcRisk_glue::zero_based(Rcpp::as<Rcpp::IntegerVector>(p["i"]));
  cp.col = sdcRisk_glue::zero_based(Rcpp::as<Rcpp::IntegerVector>(p["j"]));
  cp.v = Rcpp::as<std::vector<double>>(p["v"]);
  cp.n_row = Rcpp::as<int>(p["nrow"]);
  cp.n_col = Rcpp::as<int>(p["ncol"]);
  cp.rhs = Rcpp::as<std::vector<double>>(p["rhs"]);
  cp.lower = Rcpp::as<std::vector<double>>(p["lower"]);
  cp.upper = Rcpp::as<std::vector<double>>(p["upper"]);
  cp.vars = sdcRisk_glue::zero_based(Rcpp::as<Rcpp::IntegerVector>(p["vars"]));
  cp.targets = sdcRisk_glue::zero_based(Rcpp::as<Rcpp::IntegerVector>(p["targets"]));
  return cp;
}

// The relation bounds of a component's program (program_of()) when its
// 1-based columns `cols` are known to lie within [lo, hi]
// (sdcRisk::relation_bounds_known(): the program's own relation bounds
// narrowed by the knowledge, as the respondents' relation tests of
// cpp_relation_breach_groups() compute them). Returns list(lower, upper).
// [[Rcpp::export(rng = false)]]
SEXP cpp_relation_bounds_known(const Rcpp::List& program, const Rcpp::IntegerVector& cols,
                               const Rcpp::NumericVector& lo, const Rcpp::NumericVector& hi, int passes,
                               double moved) {
  return sdcRisk_glue::run_engine([&] {
    const sdcRisk::ComponentProgram p = program_of(program);
    const std::vector<int> c = sdcRisk_glue::zero_based(cols);
    if (lo.size() != cols.size() || hi.size() != cols.size()) {
      throw std::invalid_argument("known bounds: one per column needed");
    }
    for (const int k : c) {
      if (k < 0 || k >= p.n_col) throw std::invalid_argument("known bounds: column out of range");
    }
    const sdcRisk::Narrowing nw = sdcRisk::narrowing_of(p, passes, moved);
    const sdcRisk::ColumnBounds b = sdcRisk::relation_bounds_known(
        p, nw, c, Rcpp::as<std::vector<double>>(lo), Rcpp::as<std::vector<double>>(hi), passes, moved);
    return Rcpp::List::create(Rcpp::Named("lower") = b.lower, Rcpp::Named("upper") = b.upper);
  });
}

// The relations of the table as the core indexes them
// (sdcRisk::relation_index()), from 1-based relations and cells of the
// triplets with their coefficients.
static sdcRisk::RelationIndex relations_of(const Rcpp::IntegerVector& rel, const Rcpp::IntegerVector& cell,
                                           const Rcpp::NumericVector& coef, int n_rel, int n_cell) {
  return sdcRisk::relation_index(sdcRisk_glue::zero_based(rel), sdcRisk_glue::zero_based(cell),
                                 Rcpp::as<std::vector<double>>(coef), n_rel, n_cell);
}

// A logical vector as 0/1 (NA as 0).
static std::vector<int> flags_of(const Rcpp::LogicalVector& x) {
  std::vector<int> out(x.begin(), x.end());
  for (int& v : out) v = (v == NA_LOGICAL) ? 0 : v;
  return out;
}

// The relation index of a table (cpp_relation_index()) from its external
// pointer, or an error when it is gone (a pointer saved and read again).
static const sdcRisk::RelationIndex& index_of(SEXP index) {
  if (TYPEOF(index) != EXTPTRSXP || R_ExternalPtrAddr(index) == nullptr) {
    throw std::invalid_argument("relation index: the index is gone (built in another session)");
  }
  return *static_cast<const sdcRisk::RelationIndex*>(R_ExternalPtrAddr(index));
}

// Whether the relation bounds of the components the relations of the cells
// `near` touch leave a sensitive cell short (sdcRisk::relation_breach_near());
// the table's relation index `index` (cpp_relation_index()), per cell the
// values, pattern, sensitive flags, bounds, tolerances and levels (read in
// place); 1-based `near`.
// [[Rcpp::export(rng = false)]]
SEXP cpp_relation_breach_near(SEXP index, const Rcpp::NumericVector& value, const Rcpp::LogicalVector& supp,
                              const Rcpp::LogicalVector& sensitive, const Rcpp::NumericVector& lower,
                              const Rcpp::NumericVector& upper, const Rcpp::NumericVector& tol,
                              const Rcpp::NumericVector& level, const Rcpp::IntegerVector& near, int passes,
                              double moved) {
  return sdcRisk_glue::run_engine([&] {
    return sdcRisk::relation_breach_near(
        index_of(index), Rcpp::as<std::vector<double>>(value), flags_of(supp), flags_of(sensitive),
        Rcpp::as<std::vector<double>>(lower), Rcpp::as<std::vector<double>>(upper),
        Rcpp::as<std::vector<double>>(tol), Rcpp::as<std::vector<double>>(level), sdcRisk_glue::zero_based(near),
        passes, moved);
  });
}

// The number of relations between the cells `from` and every cell, through
// suppressed cells (sdcRisk::relation_hops()); the table's relation index
// `index` (cpp_relation_index()), 1-based cells.
// [[Rcpp::export(rng = false)]]
SEXP cpp_relation_hops(SEXP index, const Rcpp::LogicalVector& supp, const Rcpp::IntegerVector& from) {
  return sdcRisk_glue::run_engine([&] {
    return Rcpp::wrap(sdcRisk::relation_hops(index_of(index), flags_of(supp), sdcRisk_glue::zero_based(from)));
  });
}

// The cells' vectors of the respondents' relation tests (sdcRisk::BreachCells)
// from R: per cell of the table `supp`, `prog` (1-based index into the
// programs, 0 for none), the outsider's interval, `tol`, `value`, `level`
// and the a priori bounds.
static sdcRisk::BreachCells breach_cells_of(const Rcpp::LogicalVector& supp, const Rcpp::IntegerVector& prog,
                                            const Rcpp::NumericVector& outer_lo, const Rcpp::NumericVector& outer_hi,
                                            const Rcpp::NumericVector& tol, const Rcpp::NumericVector& value,
                                            const Rcpp::NumericVector& level, const Rcpp::NumericVector& lower,
                                            const Rcpp::NumericVector& upper) {
  sdcRisk::BreachCells bc;
  bc.supp = flags_of(supp);
  bc.prog = sdcRisk_glue::zero_based(prog);
  bc.outer_lo = Rcpp::as<std::vector<double>>(outer_lo);
  bc.outer_hi = Rcpp::as<std::vector<double>>(outer_hi);
  bc.tol = Rcpp::as<std::vector<double>>(tol);
  bc.value = Rcpp::as<std::vector<double>>(value);
  bc.level = Rcpp::as<std::vector<double>>(level);
  bc.lower = Rcpp::as<std::vector<double>>(lower);
  bc.upper = Rcpp::as<std::vector<double>>(upper);
  return bc;
}

// The groups' knowledge (sdcRisk::GroupKnowledge) from R: CSR form, 0-based
// offsets `start`, 1-based cells.
static sdcRisk::GroupKnowledge group_knowledge_of(const Rcpp::IntegerVector& start, const Rcpp::IntegerVector& cell,
                                                  const Rcpp::NumericVector& lo, const Rcpp::NumericVector& hi,
                                                  const Rcpp::LogicalVector& alone) {
  sdcRisk::GroupKnowledge gk;
  gk.start = Rcpp::as<std::vector<int>>(start);
  gk.cell = sdcRisk_glue::zero_based(cell);
  gk.lo = Rcpp::as<std::vector<double>>(lo);
  gk.hi = Rcpp::as<std::vector<double>>(hi);
  gk.alone = flags_of(alone);
  return gk;
}

static std::vector<sdcRisk::ComponentProgram> programs_of(const Rcpp::List& programs) {
  std::vector<sdcRisk::ComponentProgram> progs;
  progs.reserve(static_cast<std::size_t>(programs.size()));
  for (R_xlen_t q = 0; q < programs.size(); ++q) progs.push_back(program_of(programs[q]));
  return progs;
}

// The respondents' relation breaches of a pattern
// (sdcRisk::relation_breach_groups()): `programs` a list of the
// components' programs (program_of()); the cells as breach_cells_of() reads
// them; the groups' knowledge as group_knowledge_of() reads it. Returns
// list(group (1-based position in the knowledge), cell, lower, upper,
// need_lower, need_upper, n_groups).
// [[Rcpp::export(rng = false)]]
SEXP cpp_relation_breach_groups(const Rcpp::List& programs, const Rcpp::LogicalVector& supp,
                                const Rcpp::IntegerVector& prog, const Rcpp::NumericVector& outer_lo,
                                const Rcpp::NumericVector& outer_hi, const Rcpp::NumericVector& tol,
                                const Rcpp::NumericVector& value, const Rcpp::NumericVector& level,
                                const Rcpp::NumericVector& lower, const Rcpp::NumericVector& upper,
                                const Rcpp::IntegerVector& start, const Rcpp::IntegerVector& cell,
                                const Rcpp::NumericVector& lo, const Rcpp::NumericVector& hi,
                                const Rcpp::LogicalVector& alone, int passes, double moved, bool first) {
  return sdcRisk_glue::run_engine([&] {
    const sdcRisk::RelationBreaches b = sdcRisk::relation_breach_groups(
        programs_of(programs), breach_cells_of(supp, prog, outer_lo, outer_hi, tol, value, level, lower, upper),
        group_knowledge_of(start, cell, lo, hi, alone), passes, moved, first);
    std::vector<int> group = b.group;
    for (int& g : group) ++g;
    return Rcpp::List::create(Rcpp::Named("group") = Rcpp::wrap(group),
                              Rcpp::Named("cell") = sdcRisk_glue::one_based(b.cell),
                              Rcpp::Named("lower") = Rcpp::wrap(b.lower),
                              Rcpp::Named("upper") = Rcpp::wrap(b.upper),
                              Rcpp::Named("need_lower") = Rcpp::wrap(b.need_lower),
                              Rcpp::Named("need_upper") = Rcpp::wrap(b.need_upper),
                              Rcpp::Named("n_groups") = b.n_groups);
  });
}

// The clean-up's relation tests of its candidates `cand` (1-based cells)
// against the respondents (sdcRisk::relation_breach_groups_each()), the
// targets those flagged in `attack` (one flag per cell, or none for all),
// the groups flagged in `hint` first among the nearest (one flag per group,
// or none), the other arguments as cpp_relation_breach_groups() reads them. Returns
// per candidate the 1-based position in the knowledge of a group that
// breaks the pattern without it, 0 for none.
// [[Rcpp::export(rng = false)]]
SEXP cpp_relation_breach_groups_each(const Rcpp::List& programs, const Rcpp::LogicalVector& supp,
                                     const Rcpp::IntegerVector& prog, const Rcpp::NumericVector& outer_lo,
                                     const Rcpp::NumericVector& outer_hi, const Rcpp::NumericVector& tol,
                                     const Rcpp::NumericVector& value, const Rcpp::NumericVector& level,
                                     const Rcpp::NumericVector& lower, const Rcpp::NumericVector& upper,
                                     const Rcpp::IntegerVector& start, const Rcpp::IntegerVector& cell,
                                     const Rcpp::NumericVector& lo, const Rcpp::NumericVector& hi,
                                     const Rcpp::LogicalVector& alone, int passes, double moved,
                                     const Rcpp::IntegerVector& cand, const Rcpp::LogicalVector& attack,
                                     const Rcpp::LogicalVector& hint) {
  return sdcRisk_glue::run_engine([&] {
    std::vector<int> by = sdcRisk::relation_breach_groups_each(
        programs_of(programs), breach_cells_of(supp, prog, outer_lo, outer_hi, tol, value, level, lower, upper),
        group_knowledge_of(start, cell, lo, hi, alone), sdcRisk_glue::zero_based(cand), flags_of(attack),
        flags_of(hint), passes, moved);
    for (int& g : by) ++g;
    return Rcpp::wrap(by);
  });
}

// The clean-up's screen of its candidates `cand` (1-based cells) against
// the outsider (sdcRisk::relation_breach_each()), the other arguments as
// cpp_relation_breach_near() reads them. Returns one verdict per candidate.
// [[Rcpp::export(rng = false)]]
SEXP cpp_relation_breach_each(SEXP index, const Rcpp::NumericVector& value, const Rcpp::LogicalVector& supp,
                              const Rcpp::LogicalVector& sensitive, const Rcpp::NumericVector& lower,
                              const Rcpp::NumericVector& upper, const Rcpp::NumericVector& tol,
                              const Rcpp::NumericVector& level, const Rcpp::IntegerVector& cand, int passes,
                              double moved) {
  return sdcRisk_glue::run_engine([&] {
    const std::vector<int> out = sdcRisk::relation_breach_each(
        index_of(index), Rcpp::as<std::vector<double>>(value), flags_of(supp), flags_of(sensitive),
        Rcpp::as<std::vector<double>>(lower), Rcpp::as<std::vector<double>>(upper),
        Rcpp::as<std::vector<double>>(tol), Rcpp::as<std::vector<double>>(level), sdcRisk_glue::zero_based(cand),
        passes, moved);
    Rcpp::LogicalVector v(out.size());
    for (std::size_t k = 0; k < out.size(); ++k) v[static_cast<R_xlen_t>(k)] = out[k];
    return v;
  });
}

// The open ends a batch program of the audit maximises together: targets
// `open` (1-based indices into `pos`, their 1-based columns) packed so
// that no two share a relation (triplets with 1-based rows and columns).
// [[Rcpp::export(rng = false)]]
SEXP cpp_relation_packing(const Rcpp::IntegerVector& open, const Rcpp::IntegerVector& pos,
                          const Rcpp::IntegerVector& row, const Rcpp::IntegerVector& col, int n_row,
                          int n_col, double batch) {
  return sdcRisk_glue::run_engine([&] {
    return sdcRisk_glue::one_based(sdcRisk::relation_packing(
        sdcRisk_glue::zero_based(open), sdcRisk_glue::zero_based(pos), sdcRisk_glue::zero_based(row),
        sdcRisk_glue::zero_based(col), n_row, n_col, batch));
  });
}

// The search box of cell `code` (1-based codes of its variables; R's
// search_box()): `parent`, `start`, `child` per variable (a list of
// integer vectors each: parents, 0 for none, and children in CSR form, see
// BoxVariable), the lookup `mult` with `dense` (integer(0) for none) or the
// sorted `keys` and their cells `key_cell`; the pattern, costs, capacities,
// `w_max`, the target `t`, the `budget`, the first k `k0` and `shrink`.
// Returns list(cells, whole).
// [[Rcpp::export(rng = false)]]
SEXP cpp_search_box(const Rcpp::IntegerVector& code, const Rcpp::List& parent, const Rcpp::List& start,
                    const Rcpp::List& child, const Rcpp::NumericVector& mult, const Rcpp::IntegerVector& dense,
                    const Rcpp::NumericVector& keys, const Rcpp::IntegerVector& key_cell,
                    const Rcpp::LogicalVector& supp, const Rcpp::NumericVector& w,
                    const Rcpp::NumericVector& cap_up, const Rcpp::NumericVector& cap_dn, double w_max,
                    double t, double budget, double k0, double shrink) {
  return sdcRisk_glue::run_engine([&] {
    const R_xlen_t nd = code.size();
    if (parent.size() != nd || start.size() != nd || child.size() != nd || mult.size() != nd) {
      throw std::invalid_argument("search box: one entry per variable is needed");
    }
    const R_xlen_t n = supp.size();
    if (w.size() != n || cap_up.size() != n || cap_dn.size() != n) {
      throw std::invalid_argument("search box: the cell vectors differ in length");
    }
    if (keys.size() != key_cell.size()) throw std::invalid_argument("search box: keys and cells differ in length");
    sdcRisk::BoxProblem p;
    p.code.assign(code.begin(), code.end());
    for (R_xlen_t d = 0; d < nd; ++d) {
      SEXP pa = parent[d];
      SEXP st = start[d];
      SEXP ch = child[d];
      if (TYPEOF(pa) != INTSXP || TYPEOF(st) != INTSXP || TYPEOF(ch) != INTSXP ||
          XLENGTH(st) != XLENGTH(pa) + 1) {
        throw std::invalid_argument("search box: a variable's parents or children are malformed");
      }
      const int* s = INTEGER(st);
      if (s[0] != 0 || s[XLENGTH(pa)] != XLENGTH(ch)) throw std::invalid_argument("search box: children malformed");
      for (R_xlen_t c = 0; c < XLENGTH(pa); ++c) {
        const int up = INTEGER(pa)[c];
        if (up < 0 || up > XLENGTH(pa) || s[c + 1] < s[c]) throw std::invalid_argument("search box: parents malformed");
      }
      for (R_xlen_t c = 0; c < XLENGTH(ch); ++c) {
        if (INTEGER(ch)[c] < 1 || INTEGER(ch)[c] > XLENGTH(pa)) throw std::invalid_argument("search box: children malformed");
      }
      sdcRisk::BoxVariable v;
      v.parent = INTEGER(pa);
      v.n_cat = static_cast<int>(XLENGTH(pa));
      v.start = s;
      v.child = INTEGER(ch);
      p.vars.push_back(v);
    }
    p.lookup.mult = mult.begin();
    p.lookup.n_var = static_cast<int>(nd);
    if (dense.size()) {
      p.lookup.dense = dense.begin();
      p.lookup.n_dense = static_cast<std::size_t>(dense.size());
    } else {
      p.lookup.keys = keys.begin();
      p.lookup.key_cell = key_cell.begin();
      p.lookup.n_keys = static_cast<std::size_t>(keys.size());
    }
    p.supp = supp.begin();
    p.w = w.begin();
    p.cap_up = cap_up.begin();
    p.cap_dn = cap_dn.begin();
    p.n_cell = static_cast<std::size_t>(n);
    p.w_max = w_max;
    p.t = t;
    const sdcRisk::Box box = sdcRisk::search_box(p, budget, k0, shrink);
    return Rcpp::List::create(Rcpp::Named("cells") = Rcpp::IntegerVector(box.cells.begin(), box.cells.end()),
                              Rcpp::Named("whole") = box.whole);
  });
}

// The relations of a table indexed both ways (sdcRisk::relation_index()):
// 1-based relations and cells of the triplets with their coefficients.
// Returns an external pointer, built once per table problem
// (relation_index_of() in R) and read by the witness checks, the pool, the
// swaps and the relation tests near a cell.
// [[Rcpp::export(rng = false)]]
SEXP cpp_relation_index(const Rcpp::IntegerVector& rel, const Rcpp::IntegerVector& cell,
                        const Rcpp::NumericVector& coef, int n_rel, int n_cell) {
  return sdcRisk_glue::run_engine([&] {
    auto* ix = new sdcRisk::RelationIndex(relations_of(rel, cell, coef, n_rel, n_cell));
    return Rcpp::XPtr<sdcRisk::RelationIndex>(ix, true);
  });
}

// The cells' vectors a witness check reads (by pointer, in place), each one
// value per cell of the index `ix`.
static sdcRisk::WitnessCells witness_cells(const sdcRisk::RelationIndex& ix, const Rcpp::NumericVector& value,
                                           const Rcpp::NumericVector& lower, const Rcpp::NumericVector& upper,
                                           const Rcpp::NumericVector& tol) {
  const R_xlen_t n = ix.n_cell;
  if (value.size() != n || lower.size() != n || upper.size() != n || tol.size() != n) {
    throw std::invalid_argument("witness check: cell vectors of the wrong length");
  }
  return sdcRisk::WitnessCells{value.begin(), lower.begin(), upper.begin(), tol.begin()};
}

// Whether value + y adds up in every relation of `index`
// (cpp_relation_index()) and keeps the bounds, within the tolerances
// (sdcRisk::witness_adds_up()), for each of several tables y at once: table k
// moves the 1-based cells cells[start[k]], ..., cells[start[k + 1] - 1]
// (0-based offsets, one more than the tables) by the same entries of `y`;
// the cells' vectors read in place. Returns one verdict per table.
// [[Rcpp::export(rng = false)]]
SEXP cpp_witnesses_ok(SEXP index, const Rcpp::IntegerVector& cells, const Rcpp::NumericVector& y,
                      const Rcpp::IntegerVector& start, const Rcpp::NumericVector& value,
                      const Rcpp::NumericVector& lower, const Rcpp::NumericVector& upper,
                      const Rcpp::NumericVector& tol, double audit_tol) {
  return sdcRisk_glue::run_engine([&] {
    const sdcRisk::RelationIndex& ix = index_of(index);
    const sdcRisk::WitnessCells wc = witness_cells(ix, value, lower, upper, tol);
    if (y.size() != cells.size()) throw std::invalid_argument("witness check: one move per cell needed");
    const R_xlen_t n_table = start.size() - 1;
    if (n_table < 0 || start[0] != 0 || start[n_table] != cells.size()) {
      throw std::invalid_argument("witness check: offsets that do not cover the cells");
    }
    for (R_xlen_t k = 0; k < n_table; ++k) {
      if (start[k + 1] < start[k]) throw std::invalid_argument("witness check: offsets that decrease");
    }
    // (scratch kept between calls, one table or many: zeros again after each)
    static std::vector<double> resid;
    static std::vector<int> touched;
    std::vector<int> one;
    Rcpp::LogicalVector ok(n_table);
    for (R_xlen_t k = 0; k < n_table; ++k) {
      const int from = start[k];
      const int to = start[k + 1];
      one.assign(cells.begin() + from, cells.begin() + to);
      for (int& c : one) c -= 1;
      ok[k] = sdcRisk::witness_adds_up(ix, one, y.begin() + from, wc, audit_tol, resid, touched);
    }
    return ok;
  });
}

// The tables of the audit's pool (reset_lp_cache() in R) that are tables
// of a component's program, as pooled_tables() describes: `chunks` a list
// of list(vars, x), each x a matrix of tables (one per column, oldest
// first) over the 1-based cells `vars`, chunks oldest first; the
// component's 1-based cells `vars` and bounds `lower`, `upper` (one per
// cell of it); the table's `value`, a priori bounds and tolerances per
// cell. Each table, newest first, restricted to the component's cells
// (its moves y = x - value there), counts when it moves one of them, adds
// up and keeps the a priori bounds (sdcRisk::witness_adds_up()) and keeps
// the component's bounds within the tolerances; at most `max_tables`.
// Returns a list of the tables over `vars`.
// [[Rcpp::export(rng = false)]]
SEXP cpp_pooled_tables(SEXP index, const Rcpp::List& chunks, const Rcpp::IntegerVector& vars,
                       const Rcpp::NumericVector& lower, const Rcpp::NumericVector& upper,
                       const Rcpp::NumericVector& value, const Rcpp::NumericVector& plower,
                       const Rcpp::NumericVector& pupper, const Rcpp::NumericVector& tol, double audit_tol,
                       int max_tables) {
  return sdcRisk_glue::run_engine([&] {
    const sdcRisk::RelationIndex& ix = index_of(index);
    const sdcRisk::WitnessCells wc = witness_cells(ix, value, plower, pupper, tol);
    const R_xlen_t n = vars.size();
    if (lower.size() != n || upper.size() != n) throw std::invalid_argument("pooled tables: bounds of the wrong length");
    std::vector<int> pos(static_cast<std::size_t>(ix.n_cell), -1);
    for (R_xlen_t k = 0; k < n; ++k) {
      const int c = vars[k] - 1;
      if (c < 0 || c >= ix.n_cell) throw std::invalid_argument("pooled tables: cell out of range");
      pos[static_cast<std::size_t>(c)] = static_cast<int>(k);
    }
    std::vector<Rcpp::NumericVector> got;
    std::vector<int> rows, cols, cells, moved;
    std::vector<double> y, resid;
    std::vector<int> touched;
    for (R_xlen_t q = chunks.size() - 1; q >= 0 && static_cast<int>(got.size()) < max_tables; --q) {
      const Rcpp::List chunk = chunks[q];
      const Rcpp::IntegerVector cv = chunk["vars"];
      const Rcpp::NumericMatrix x = chunk["x"];
      if (x.nrow() != cv.size()) throw std::invalid_argument("pooled tables: a chunk's tables and cells differ");
      rows.clear();
      cols.clear();
      for (R_xlen_t i = 0; i < cv.size(); ++i) {
        const int c = cv[i] - 1;
        if (c < 0 || c >= ix.n_cell) throw std::invalid_argument("pooled tables: cell out of range");
        if (pos[static_cast<std::size_t>(c)] >= 0) {
          rows.push_back(static_cast<int>(i));
          cols.push_back(pos[static_cast<std::size_t>(c)]);
        }
      }
      if (rows.empty()) continue;
      for (int t = x.ncol() - 1; t >= 0 && static_cast<int>(got.size()) < max_tables; --t) {
        cells.clear();
        y.clear();
        moved.clear();
        for (std::size_t k = 0; k < rows.size(); ++k) {
          const int c = cv[rows[k]] - 1;
          const double d = x(rows[k], t) - value[c];
          if (d == 0.0) continue;
          cells.push_back(c);
          y.push_back(d);
          moved.push_back(cols[k]);
        }
        if (cells.empty() || !sdcRisk::witness_adds_up(ix, cells, y.data(), wc, audit_tol, resid, touched)) continue;
        Rcpp::NumericVector xt(n);
        for (R_xlen_t k = 0; k < n; ++k) xt[k] = value[vars[k] - 1];
        for (std::size_t m = 0; m < moved.size(); ++m) xt[moved[m]] += y[m];
        bool within = true;
        for (R_xlen_t k = 0; k < n && within; ++k) {
          const double tk = tol[vars[k] - 1];
          within = xt[k] >= lower[k] - tk && xt[k] <= upper[k] + tk;
        }
        if (within) got.push_back(xt);
      }
    }
    Rcpp::List out(got.size());
    for (std::size_t k = 0; k < got.size(); ++k) out[static_cast<R_xlen_t>(k)] = got[k];
    return out;
  });
}

// The cheapest usable table of the clean-up's pool for a side
// (sdcRisk::pool_cheapest()): the pool flattened (0-based cells, moves,
// 0-based offsets of each table, read in place: buffers of which the first
// n_entry entries and n_table + 1 offsets are used), the candidate tables (1-based) and their scales, the cells'
// state (read in place), the side's level t and the cell left out
// (1-based; 0 for none). Returns the candidate's position (1-based), 0 for
// none.
// [[Rcpp::export(rng = false)]]
SEXP cpp_pool_cheapest(const Rcpp::IntegerVector& cell0, const Rcpp::NumericVector& y,
                       const Rcpp::IntegerVector& start, int n_table, int n_entry, const Rcpp::IntegerVector& cand,
                       const Rcpp::NumericVector& scale, const Rcpp::LogicalVector& supp,
                       const Rcpp::LogicalVector& sensitive, const Rcpp::NumericVector& cap_up,
                       const Rcpp::NumericVector& cap_dn, const Rcpp::NumericVector& w, double t, int exclude) {
  return sdcRisk_glue::run_engine([&] {
    const R_xlen_t n = supp.size();
    if (sensitive.size() != n || cap_up.size() != n || cap_dn.size() != n || w.size() != n) {
      throw std::invalid_argument("witness pool: cell vectors of the wrong length");
    }
    if (n_table < 0 || n_entry < 0 || start.size() <= n_table || cell0.size() < n_entry || y.size() < n_entry ||
        scale.size() != cand.size()) {
      throw std::invalid_argument("witness pool: malformed pool");
    }
    const sdcRisk::WitnessPool pool{cell0.begin(), y.begin(), start.begin(), n_table, n_entry, static_cast<int>(n)};
    const sdcRisk::SwapCells cs{cap_up.begin(), cap_dn.begin(), supp.begin(), w.begin()};
    return Rcpp::wrap(sdcRisk::pool_cheapest(pool, cs, sensitive.begin(), sdcRisk_glue::zero_based(cand),
                                             scale.begin(), t, exclude - 1) + 1);
  });
}

// The clean-up's swap bounds (sdcRisk::swap_bounds()) of the sides
// (1-based cells, directions, levels) without cell j (1-based), read from
// the index `index` (cpp_relation_index()) and the cells' state, each a vector
// of the table's cells (read in place, not copied); stops after the first
// bound that reaches `limit`.
// [[Rcpp::export(rng = false)]]
SEXP cpp_swap_bounds(SEXP index, const Rcpp::NumericVector& cap_up, const Rcpp::NumericVector& cap_dn,
                     const Rcpp::LogicalVector& supp, const Rcpp::NumericVector& w,
                     const Rcpp::IntegerVector& side_cell, const Rcpp::NumericVector& side_dir,
                     const Rcpp::NumericVector& side_t, int j, double slack_per, double limit) {
  return sdcRisk_glue::run_engine([&] {
    const sdcRisk::RelationIndex* ix = &index_of(index);
    const R_xlen_t n = ix->n_cell;
    if (cap_up.size() != n || cap_dn.size() != n || supp.size() != n || w.size() != n) {
      throw std::invalid_argument("swap bound: cell vectors of the wrong length");
    }
    const sdcRisk::SwapCells cs{cap_up.begin(), cap_dn.begin(), supp.begin(), w.begin()};
    return Rcpp::wrap(sdcRisk::swap_bounds(*ix, cs, sdcRisk_glue::zero_based(side_cell),
                                           Rcpp::as<std::vector<double>>(side_dir),
                                           Rcpp::as<std::vector<double>>(side_t), j - 1, slack_per, limit));
  });
}

// The contributors of the contributions (sdcRisk::contributor_index(), for
// new_respondents()): list(code, who, ord, start). `id`: the contributor of
// each row, whole numbers from 1 to max_id.
// [[Rcpp::export(rng = false)]]
SEXP cpp_contributor_index(const Rcpp::IntegerVector& id, int max_id) {
  return sdcRisk_glue::run_engine([&] {
    if (max_id < 0) throw std::invalid_argument("cpp_contributor_index: negative max_id");
    const sdcRisk::ContributorIndex ix =
        sdcRisk::contributor_index(id.begin(), static_cast<std::size_t>(id.size()), static_cast<std::size_t>(max_id));
    return Rcpp::List::create(Rcpp::Named("code") = Rcpp::wrap(ix.code), Rcpp::Named("who") = Rcpp::wrap(ix.who),
                              Rcpp::Named("ord") = Rcpp::wrap(ix.ord), Rcpp::Named("start") = Rcpp::wrap(ix.start));
  });
}
