#include <Rcpp.h>

#include <cstddef>

#include "glue.h"
#include "sdcRisk/estimate.hpp"

// Sums by group of the weights and values of a released file's records
// (sdcRisk::group_moments): a numeric matrix with one row per group and the
// columns w, w^2 (no value) or w, w y, w^2, w^2 y, w^2 y^2. `group`: 1-based,
// NA for a record in no group; `w`, `y`: numeric vectors of the records'
// length, or NULL.
// [[Rcpp::export]]
SEXP cpp_group_moments(const Rcpp::IntegerVector& group, int n_groups, const Rcpp::Nullable<Rcpp::NumericVector>& w,
                       const Rcpp::Nullable<Rcpp::NumericVector>& y) {
  return sdcRisk_glue::run_engine([&] {
    const std::size_t n = static_cast<std::size_t>(group.size());
    const double* wp = nullptr;
    const double* yp = nullptr;
    Rcpp::NumericVector wv, yv;
    if (w.isNotNull()) {
      wv = Rcpp::NumericVector(w.get());
      if (static_cast<std::size_t>(wv.size()) != n) throw std::invalid_argument("cpp_group_moments: weights length");
      wp = wv.begin();
    }
    if (y.isNotNull()) {
      yv = Rcpp::NumericVector(y.get());
      if (static_cast<std::size_t>(yv.size()) != n) throw std::invalid_argument("cpp_group_moments: values length");
      yp = yv.begin();
    }
    if (n_groups < 0) throw std::invalid_argument("cpp_group_moments: negative number of groups");
    const std::size_t nc = sdcRisk::moment_columns(yp != nullptr);
    Rcpp::NumericMatrix out(n_groups, static_cast<int>(nc));
    sdcRisk::group_moments(group.begin(), n, wp, yp, static_cast<std::size_t>(n_groups), out.begin());
    return Rcpp::wrap(out);
  });
}

// Sums of the rows of a numeric matrix by group (sdcRisk::group_sums): a
// matrix with one row per group. `group`: 1-based, NA for a row in no group.
// [[Rcpp::export]]
SEXP cpp_group_sums(const Rcpp::IntegerVector& group, const Rcpp::NumericMatrix& x, int n_groups) {
  return sdcRisk_glue::run_engine([&] {
    if (group.size() != x.nrow()) throw std::invalid_argument("cpp_group_sums: rows and groups differ");
    if (n_groups < 0) throw std::invalid_argument("cpp_group_sums: negative number of groups");
    Rcpp::NumericMatrix out(n_groups, x.ncol());
    sdcRisk::group_sums(group.begin(), static_cast<std::size_t>(group.size()), x.begin(),
                        static_cast<std::size_t>(x.ncol()), static_cast<std::size_t>(n_groups), out.begin());
    return Rcpp::wrap(out);
  });
}

// The moment estimator's sums over the IFPR blocks (sdcRisk::ifpr_sums):
// a list with the 1-based block, group and d of every target row, its sums
// `lin` and `quad` (matrices with the columns of cpp_group_moments()), and
// `singular`, the blocks whose matrix is singular (then no target is
// computed). The records: their cell (NA outside the blocks), group,
// weights and values (NULL when absent).
// [[Rcpp::export]]
SEXP cpp_ifpr_sums(const Rcpp::IntegerVector& block_start, const Rcpp::NumericVector& theta,
                   const Rcpp::IntegerVector& count, const Rcpp::IntegerVector& d, int n_d, double tol,
                   const Rcpp::IntegerVector& cell, const Rcpp::IntegerVector& g,
                   const Rcpp::Nullable<Rcpp::NumericVector>& w, const Rcpp::Nullable<Rcpp::NumericVector>& y) {
  return sdcRisk_glue::run_engine([&] {
    const std::size_t nb = static_cast<std::size_t>(theta.size());
    const R_xlen_t n = cell.size();
    Rcpp::NumericVector wv, yv;
    if (w.isNotNull()) wv = Rcpp::NumericVector(w.get());
    if (y.isNotNull()) yv = Rcpp::NumericVector(y.get());
    if (static_cast<std::size_t>(block_start.size()) != nb + 1 || count.size() != d.size() ||
        block_start[nb] != count.size() || g.size() != n || (w.isNotNull() && wv.size() != n) ||
        (y.isNotNull() && yv.size() != n) || n_d < 0) {
      throw std::invalid_argument("cpp_ifpr_sums: inconsistent lengths");
    }
    const sdcRisk::IfprBlockInput in{block_start.begin(), theta.begin(), nb, count.begin(), d.begin(),
                                     static_cast<std::size_t>(n_d), tol};
    const sdcRisk::IfprRowInput rows{cell.begin(), g.begin(), static_cast<std::size_t>(n),
                                     w.isNotNull() ? wv.begin() : nullptr, y.isNotNull() ? yv.begin() : nullptr};
    const sdcRisk::IfprSums out = sdcRisk::ifpr_sums(in, rows);
    const int nl = y.isNotNull() ? 2 : 1, nq = y.isNotNull() ? 3 : 1;
    const R_xlen_t nt = static_cast<R_xlen_t>(out.block.size());
    // row after row in the core, column after column for R
    Rcpp::NumericMatrix l(nt, nl), q(nt, nq);
    for (R_xlen_t t = 0; t < nt; ++t) {
      for (int j = 0; j < nl; ++j) l[j * nt + t] = out.lin[t * nl + j];
      for (int j = 0; j < nq; ++j) q[j * nt + t] = out.quad[t * nq + j];
    }
    return Rcpp::List::create(Rcpp::Named("block") = Rcpp::wrap(out.block), Rcpp::Named("g") = Rcpp::wrap(out.g),
                              Rcpp::Named("d") = Rcpp::wrap(out.d), Rcpp::Named("lin") = l, Rcpp::Named("quad") = q,
                              Rcpp::Named("singular") = Rcpp::wrap(out.singular));
  });
}

// The variance of the unweighted counts from the IFPR blocks' original
// counts (sdcRisk::ifpr_plug_var): a list with one element per slot (a
// block and a d of its cells) of `block`, `d`, `outside`, `own` and
// `count`, and `singular`, the 1-based blocks whose matrix is singular.
// [[Rcpp::export]]
SEXP cpp_ifpr_plug_var(const Rcpp::IntegerVector& block_start, const Rcpp::NumericVector& theta,
                       const Rcpp::IntegerVector& count, const Rcpp::IntegerVector& d, int n_d, double tol) {
  return sdcRisk_glue::run_engine([&] {
    const std::size_t nb = static_cast<std::size_t>(theta.size());
    if (static_cast<std::size_t>(block_start.size()) != nb + 1 || count.size() != d.size() ||
        block_start[nb] != count.size() || n_d < 0) {
      throw std::invalid_argument("cpp_ifpr_plug_var: inconsistent lengths");
    }
    const sdcRisk::IfprBlockInput in{block_start.begin(), theta.begin(), nb, count.begin(), d.begin(),
                                     static_cast<std::size_t>(n_d), tol};
    const sdcRisk::IfprPlugVar out = sdcRisk::ifpr_plug_var(in);
    return Rcpp::List::create(Rcpp::Named("block") = Rcpp::wrap(out.block), Rcpp::Named("d") = Rcpp::wrap(out.d),
                              Rcpp::Named("outside") = Rcpp::wrap(out.outside), Rcpp::Named("own") = Rcpp::wrap(out.own),
                              Rcpp::Named("count") = Rcpp::wrap(out.count),
                              Rcpp::Named("singular") = Rcpp::wrap(out.singular));
  });
}

// The block cell of every record (sdcRisk::match_block_cells): `codes` the
// records' codes (a list of integer vectors, 1-based, every code at most
// its key's `nlevels`), `cell_codes` those of the plan's block cells, `by`
// the 1-based positions of the keys whose values number the rows of a
// table. A list: `cell`, the 1-based block cell of each record (NA when its
// cell is in no block); `duplicate`, the first block cell listed twice (0 if
// none); and when `by` is not NULL, `d_rec` and `d_cell`, the 1-based
// mixed-radix index of the `by` keys of every record and block cell (the
// caller checks that their product fits in an int).
// [[Rcpp::export]]
SEXP cpp_match_block_cells(const Rcpp::List& codes, const Rcpp::List& cell_codes, const Rcpp::IntegerVector& nlevels,
                           const Rcpp::Nullable<Rcpp::IntegerVector>& by) {
  return sdcRisk_glue::run_engine([&] {
    const std::size_t nk = static_cast<std::size_t>(nlevels.size());
    if (static_cast<std::size_t>(codes.size()) != nk || static_cast<std::size_t>(cell_codes.size()) != nk || nk == 0)
      throw std::invalid_argument("cpp_match_block_cells: keys differ");
    std::vector<Rcpp::IntegerVector> keep;
    std::vector<const int*> rp(nk), cp(nk);
    std::size_t n = 0, nc = 0;
    for (std::size_t k = 0; k < nk; ++k) {
      Rcpp::IntegerVector r(codes[k]), c(cell_codes[k]);
      if (k == 0) n = static_cast<std::size_t>(r.size()), nc = static_cast<std::size_t>(c.size());
      if (static_cast<std::size_t>(r.size()) != n || static_cast<std::size_t>(c.size()) != nc)
        throw std::invalid_argument("cpp_match_block_cells: lengths differ");
      keep.push_back(r);
      keep.push_back(c);
      rp[k] = r.begin();
      cp[k] = c.begin();
    }
    std::vector<int> nl(nlevels.begin(), nlevels.end());
    std::vector<int> bv;
    const bool with_d = by.isNotNull();
    if (with_d) {
      Rcpp::IntegerVector b(by.get());
      for (R_xlen_t j = 0; j < b.size(); ++j) bv.push_back(b[j] - 1);
      long double prod = 1;
      for (int k : bv) {
        if (k < 0 || static_cast<std::size_t>(k) >= nk) throw std::invalid_argument("cpp_match_block_cells: by");
        prod *= nl[k];
      }
      if (prod > 2.0e9L) throw std::invalid_argument("cpp_match_block_cells: too many values of by");
    }
    Rcpp::IntegerVector out(n), d_rec(with_d ? n : 0), d_cell(with_d ? nc : 0);
    const std::size_t dup = sdcRisk::match_block_cells(rp, n, cp, nc, nl, out.begin(), bv,
                                                       with_d ? d_rec.begin() : nullptr,
                                                       with_d ? d_cell.begin() : nullptr);
    for (R_xlen_t i = 0; i < out.size(); ++i)
      if (out[i] == 0) out[i] = NA_INTEGER;
    return Rcpp::List::create(Rcpp::Named("cell") = out, Rcpp::Named("duplicate") = static_cast<double>(dup),
                              Rcpp::Named("d_rec") = d_rec, Rcpp::Named("d_cell") = d_cell);
  });
}
