#include <Rcpp.h>

#include <cstddef>
#include <string>

#include "glue.h"
#include "sdcRisk/estimate.hpp"

namespace {

// The blocks of a plan as the core reads them (sdcRisk::IfprBlockInput),
// their lengths checked; `what` names the caller in the error.
sdcRisk::IfprBlockInput block_input(const Rcpp::IntegerVector& block_start, const Rcpp::NumericVector& theta,
                                    const Rcpp::IntegerVector& count, const Rcpp::IntegerVector& d, int n_d,
                                    double tol, const char* what) {
  const std::size_t nb = static_cast<std::size_t>(theta.size());
  if (static_cast<std::size_t>(block_start.size()) != nb + 1 || count.size() != d.size() ||
      block_start[nb] != count.size() || n_d < 0) {
    throw std::invalid_argument(std::string(what) + ": inconsistent lengths");
  }
  return sdcRisk::IfprBlockInput{block_start.begin(), theta.begin(), nb, count.begin(), d.begin(),
                                 static_cast<std::size_t>(n_d), tol};
}

// The records' weights and values (NULL: none) as the core reads them:
// null pointers or n doubles each.
struct RecordValues {
  Rcpp::NumericVector w, y;
  const double* wp = nullptr;
  const double* yp = nullptr;
};

RecordValues record_values(const Rcpp::Nullable<Rcpp::NumericVector>& w, const Rcpp::Nullable<Rcpp::NumericVector>& y,
                           R_xlen_t n, const char* what) {
  RecordValues out;
  if (w.isNotNull()) out.w = Rcpp::NumericVector(w.get()), out.wp = out.w.begin();
  if (y.isNotNull()) out.y = Rcpp::NumericVector(y.get()), out.yp = out.y.begin();
  if ((out.wp && out.w.size() != n) || (out.yp && out.y.size() != n))
    throw std::invalid_argument(std::string(what) + ": inconsistent lengths");
  return out;
}

}  // namespace

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
// `x`: the matrix's values column after column, `ncol` columns (a vector
// is one column: no copy of it into a matrix, which on the 115,104
// contributions of R4 of bench_suppress.R cost more than the sums).
// [[Rcpp::export]]
SEXP cpp_group_sums(const Rcpp::IntegerVector& group, const Rcpp::NumericVector& x, int ncol, int n_groups) {
  return sdcRisk_glue::run_engine([&] {
    if (ncol < 0) throw std::invalid_argument("cpp_group_sums: negative number of columns");
    if (static_cast<double>(group.size()) * ncol != static_cast<double>(x.size())) {
      throw std::invalid_argument("cpp_group_sums: rows and groups differ");
    }
    if (n_groups < 0) throw std::invalid_argument("cpp_group_sums: negative number of groups");
    Rcpp::NumericMatrix out(n_groups, ncol);
    sdcRisk::group_sums(group.begin(), static_cast<std::size_t>(group.size()), x.begin(),
                        static_cast<std::size_t>(ncol), static_cast<std::size_t>(n_groups), out.begin());
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
    const R_xlen_t n = cell.size();
    const sdcRisk::IfprBlockInput in = block_input(block_start, theta, count, d, n_d, tol, "cpp_ifpr_sums");
    const RecordValues v = record_values(w, y, n, "cpp_ifpr_sums");
    if (g.size() != n) throw std::invalid_argument("cpp_ifpr_sums: inconsistent lengths");
    const sdcRisk::IfprRowInput rows{cell.begin(), g.begin(), static_cast<std::size_t>(n), v.wp, v.yp};
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
// With `k1` and `k2` (one value per block), `outside`, `own` and `count`
// are instead sums by d (n_d values) of every slot's outside and own times
// its block's k2 and count times its block's k1.
// [[Rcpp::export]]
SEXP cpp_ifpr_plug_var(const Rcpp::IntegerVector& block_start, const Rcpp::NumericVector& theta,
                       const Rcpp::IntegerVector& count, const Rcpp::IntegerVector& d, int n_d, double tol,
                       const Rcpp::Nullable<Rcpp::NumericVector>& k1, const Rcpp::Nullable<Rcpp::NumericVector>& k2) {
  return sdcRisk_glue::run_engine([&] {
    const std::size_t nb = static_cast<std::size_t>(theta.size());
    const sdcRisk::IfprBlockInput in = block_input(block_start, theta, count, d, n_d, tol, "cpp_ifpr_plug_var");
    const sdcRisk::IfprPlugVar out = sdcRisk::ifpr_plug_var(in);
    if (k1.isNotNull() && out.singular.empty()) {
      // every slot weighted by its block's k2 (outside, own) and k1 (count),
      // summed by d
      const Rcpp::NumericVector f1(k1.get()), f2(k2.get());
      if (static_cast<std::size_t>(f1.size()) != nb || static_cast<std::size_t>(f2.size()) != nb)
        throw std::invalid_argument("cpp_ifpr_plug_var: k1, k2");
      Rcpp::NumericVector o(n_d), w(n_d), c(n_d);
      for (std::size_t t = 0; t < out.d.size(); ++t) {
        const std::size_t b = static_cast<std::size_t>(out.block[t]) - 1, j = static_cast<std::size_t>(out.d[t]) - 1;
        o[j] += out.outside[t] * f2[b];
        w[j] += out.own[t] * f2[b];
        c[j] += out.count[t] * f1[b];
      }
      return Rcpp::List::create(Rcpp::Named("outside") = o, Rcpp::Named("own") = w, Rcpp::Named("count") = c,
                                Rcpp::Named("singular") = Rcpp::IntegerVector(0));
    }
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
// table (possibly none). A list: `cell`, the 1-based block cell of each
// record (NA when its cell is in no block); `duplicate`, the first block
// cell listed twice (0 if none); and when `by` is not NULL, `d_rec` and
// `d_cell`, the key values of `by` of every record outside the blocks (NA
// for a record in a block cell, whose d is its cell's) and of every block
// cell, numbered 1..n_d in the order of their codes
// (sdcRisk::number_by_values); `d_codes`, the codes of each key of `by`
// for every d; `n_d`. With `block_start` (the offsets of the blocks' cells)
// and `count` (every block cell's published count), `block_released` and
// `block_published`, the records of every block.
// [[Rcpp::export]]
SEXP cpp_match_block_cells(const Rcpp::List& codes, const Rcpp::List& cell_codes, const Rcpp::IntegerVector& nlevels,
                           const Rcpp::Nullable<Rcpp::IntegerVector>& by,
                           const Rcpp::Nullable<Rcpp::IntegerVector>& block_start = R_NilValue,
                           const Rcpp::Nullable<Rcpp::IntegerVector>& count = R_NilValue) {
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
    Rcpp::IntegerVector out(n);
    // the records of every block cell, counted in the look-up; the index of
    // `by` of every record computed there too when it fits in an int
    std::vector<int> per_cell(nc, 0), bv;
    long double by_prod = 1;
    if (by.isNotNull()) {
      Rcpp::IntegerVector b(by.get());
      for (R_xlen_t j = 0; j < b.size(); ++j) {
        if (b[j] < 1 || b[j] > static_cast<int>(nk)) throw std::invalid_argument("cpp_match_block_cells: by");
        bv.push_back(b[j] - 1);
        by_prod *= nl[b[j] - 1];
      }
    }
    const bool index_given = by.isNotNull() && by_prod < 2147483647.0L;
    Rcpp::IntegerVector d_rec =
        by.isNotNull() ? Rcpp::IntegerVector(Rcpp::no_init(static_cast<R_xlen_t>(n))) : Rcpp::IntegerVector(0);
    const std::size_t dup = sdcRisk::match_block_cells(rp, n, cp, nc, nl, out.begin(), per_cell.data(),
                                                       index_given ? &bv : nullptr,
                                                       index_given ? d_rec.begin() : nullptr);
    const bool with_d = by.isNotNull() && dup == 0;
    // d of the records in a block cell: NA (their cell's d_cell)
    for (R_xlen_t i = 0; i < out.size(); ++i) {
      if (out[i] == 0) {
        out[i] = NA_INTEGER;
      } else if (with_d) {
        d_rec[i] = NA_INTEGER;
      }
    }
    Rcpp::List res = Rcpp::List::create(Rcpp::Named("cell") = out, Rcpp::Named("duplicate") = static_cast<double>(dup));
    if (block_start.isNotNull() && count.isNotNull()) {
      // the records of every block, released and published
      const Rcpp::IntegerVector bs(block_start.get()), ct(count.get());
      const R_xlen_t nb = bs.size() - 1;
      if (nb < 0 || bs[nb] != static_cast<int>(nc) || ct.size() != static_cast<R_xlen_t>(nc))
        throw std::invalid_argument("cpp_match_block_cells: blocks");
      Rcpp::NumericVector released(nb), published(nb);
      for (R_xlen_t b = 0; b < nb; ++b) {
        for (int z = bs[b]; z < bs[b + 1]; ++z) {
          released[b] += per_cell[static_cast<std::size_t>(z)];
          published[b] += ct[z];
        }
      }
      res["block_released"] = released;
      res["block_published"] = published;
    }
    if (!with_d) return Rcpp::wrap(res);
    Rcpp::IntegerVector d_cell(nc);
    // records in a block cell: their cell's values (`out` holds 0 or NA outside)
    const std::vector<std::uint64_t> idx =
        sdcRisk::number_by_values(rp, n, cp, nc, nl, bv, out.begin(), d_rec.begin(), d_cell.begin(), index_given);
    // the codes of every d, key after key of `by` (the first most
    // significant): the digits of its index, each the quotient by the key's
    // stride through a multiplication by its inverse, corrected to the exact
    // integer (no division by record)
    const std::size_t nby = bv.size(), nd = idx.size();
    std::vector<std::uint64_t> stride(nby);
    std::vector<double> inverse(nby);
    std::uint64_t acc = 1;
    for (std::size_t j = nby; j-- > 0;) {
      stride[j] = acc;
      inverse[j] = 1.0 / static_cast<double>(acc);
      acc *= static_cast<std::uint64_t>(nl[bv[j]]);
    }
    std::vector<Rcpp::IntegerVector> cols;
    for (std::size_t j = 0; j < nby; ++j) cols.emplace_back(static_cast<R_xlen_t>(nd));
    for (std::size_t t = 0; t < nd; ++t) {
      std::uint64_t rem = idx[t];
      for (std::size_t j = 0; j < nby; ++j) {
        std::uint64_t q = static_cast<std::uint64_t>(static_cast<double>(rem) * inverse[j]);
        while (q > 0 && q * stride[j] > rem) --q;
        while ((q + 1) * stride[j] <= rem) ++q;
        cols[j][static_cast<R_xlen_t>(t)] = static_cast<int>(q) + 1;
        rem -= q * stride[j];
      }
    }
    Rcpp::List d_codes(nby);
    for (std::size_t j = 0; j < nby; ++j) d_codes[j] = cols[j];
    res["d_rec"] = d_rec;
    res["d_cell"] = d_cell;
    res["d_codes"] = d_codes;
    res["n_d"] = static_cast<double>(idx.size());
    return Rcpp::wrap(res);
  });
}

// The confidence limits of estimate_table()'s rows (sdcRisk::score_limits):
// a list with `lower` and `upper`. `sv`: one value, or one per row;
// `outside` and `own`: NULL (the normal interval of every row) or one value
// per row.
// [[Rcpp::export]]
SEXP cpp_score_limits(const Rcpp::NumericVector& estimate, const Rcpp::NumericVector& var,
                      const Rcpp::NumericVector& sv, const Rcpp::Nullable<Rcpp::NumericVector>& outside,
                      const Rcpp::Nullable<Rcpp::NumericVector>& own, double z) {
  return sdcRisk_glue::run_engine([&] {
    const R_xlen_t n = estimate.size();
    Rcpp::NumericVector ov, wv;
    if (outside.isNotNull()) ov = Rcpp::NumericVector(outside.get());
    if (own.isNotNull()) wv = Rcpp::NumericVector(own.get());
    if (var.size() != n || (sv.size() != 1 && sv.size() != n) || outside.isNotNull() != own.isNotNull() ||
        (outside.isNotNull() && (ov.size() != n || wv.size() != n))) {
      throw std::invalid_argument("cpp_score_limits: inconsistent lengths");
    }
    Rcpp::NumericVector lower(n), upper(n);
    sdcRisk::score_limits(static_cast<std::size_t>(n), estimate.begin(), var.begin(), sv.begin(),
                          static_cast<std::size_t>(sv.size()), outside.isNotNull() ? ov.begin() : nullptr,
                          own.isNotNull() ? wv.begin() : nullptr, z, lower.begin(), upper.begin());
    return Rcpp::List::create(Rcpp::Named("lower") = lower, Rcpp::Named("upper") = upper);
  });
}

// The moments (as cpp_group_moments()) of the records outside the blocks
// (`skip` NA) by group: a list with `group`, the 1-based groups in which a
// record counts, in order, and `moments`, their rows of the matrix.
// [[Rcpp::export]]
SEXP cpp_direct_moments(const Rcpp::IntegerVector& group, int n_groups, const Rcpp::IntegerVector& skip,
                        const Rcpp::Nullable<Rcpp::NumericVector>& w, const Rcpp::Nullable<Rcpp::NumericVector>& y) {
  return sdcRisk_glue::run_engine([&] {
    const std::size_t n = static_cast<std::size_t>(group.size());
    Rcpp::NumericVector wv, yv;
    if (w.isNotNull()) wv = Rcpp::NumericVector(w.get());
    if (y.isNotNull()) yv = Rcpp::NumericVector(y.get());
    if (static_cast<std::size_t>(skip.size()) != n || (w.isNotNull() && static_cast<std::size_t>(wv.size()) != n) ||
        (y.isNotNull() && static_cast<std::size_t>(yv.size()) != n) || n_groups < 0) {
      throw std::invalid_argument("cpp_direct_moments: inconsistent lengths");
    }
    const std::size_t ng = static_cast<std::size_t>(n_groups), nc = sdcRisk::moment_columns(y.isNotNull());
    std::vector<double> all(ng * nc);
    std::vector<unsigned char> hit(ng);
    sdcRisk::group_moments(group.begin(), n, w.isNotNull() ? wv.begin() : nullptr, y.isNotNull() ? yv.begin() : nullptr,
                           ng, all.data(), skip.begin(), hit.data());
    std::vector<int> there;
    for (std::size_t g = 0; g < ng; ++g)
      if (hit[g]) there.push_back(static_cast<int>(g));
    Rcpp::NumericMatrix m(static_cast<int>(there.size()), static_cast<int>(nc));
    for (std::size_t c = 0; c < nc; ++c)
      for (std::size_t t = 0; t < there.size(); ++t) m[c * there.size() + t] = all[c * ng + there[t]];
    for (int& g : there) ++g;
    return Rcpp::List::create(Rcpp::Named("group") = Rcpp::wrap(there), Rcpp::Named("moments") = m);
  });
}

// Rows (d, g) of the pieces of a table summed by (d, g)
// (sdcRisk::combine_rows): `pieces` a list of lists with `d`, `g` (integer)
// and matrices `lin`, `quad` (the same columns in every piece); the first
// piece's sums of `lin` also alone. A list with `d`, `g`, `lin`, `quad` and
// `direct_lin`.
// [[Rcpp::export]]
SEXP cpp_combine_rows(const Rcpp::List& pieces, int n_d, int n_groups) {
  return sdcRisk_glue::run_engine([&] {
    if (pieces.size() == 0 || n_d < 0 || n_groups < 1) throw std::invalid_argument("cpp_combine_rows: pieces");
    std::vector<sdcRisk::CombinePiece> ps;
    std::vector<Rcpp::RObject> keep;
    int nl = -1, nq = -1;
    for (R_xlen_t t = 0; t < pieces.size(); ++t) {
      const Rcpp::List p(pieces[t]);
      const Rcpp::IntegerVector d(p["d"]), g(p["g"]);
      const Rcpp::NumericMatrix l(p["lin"]), q(p["quad"]);
      if (g.size() != d.size() || l.nrow() != d.size() || q.nrow() != d.size() || (nl >= 0 && (l.ncol() != nl || q.ncol() != nq)))
        throw std::invalid_argument("cpp_combine_rows: inconsistent piece");
      nl = l.ncol();
      nq = q.ncol();
      keep.insert(keep.end(), {d, g, l, q});
      ps.push_back({static_cast<std::size_t>(d.size()), d.begin(), g.begin(), l.begin(), q.begin()});
    }
    const sdcRisk::Combined c = sdcRisk::combine_rows(ps, static_cast<std::size_t>(n_d),
                                                      static_cast<std::size_t>(n_groups), nl, nq);
    const R_xlen_t m = static_cast<R_xlen_t>(c.d.size());
    Rcpp::NumericMatrix l(m, nl), q(m, nq), dl(m, nl);
    for (R_xlen_t r = 0; r < m; ++r) {
      for (int j = 0; j < nl; ++j) {
        l[j * m + r] = c.lin[r * nl + j];
        dl[j * m + r] = c.direct_lin[r * nl + j];
      }
      for (int j = 0; j < nq; ++j) q[j * m + r] = c.quad[r * nq + j];
    }
    return Rcpp::List::create(Rcpp::Named("d") = Rcpp::wrap(c.d), Rcpp::Named("g") = Rcpp::wrap(c.g),
                              Rcpp::Named("lin") = l, Rcpp::Named("quad") = q, Rcpp::Named("direct_lin") = dl);
  });
}

// The sums of a table by keys alone (one group) from a block plan whose
// blocks are all IFPR (sdcRisk::key_sums): a list with the rows `d`, the
// matrices `lin`, `quad` and `direct_lin` (columns as cpp_group_moments()),
// `cell_moments`, the moments of every block cell's records (a matrix with
// all the columns), with `plug` the parts of the variance function of the
// intervals by row (`outside`, `own`, `count`; else NULL), and `singular`.
// `cell`: the records' block cells (NA outside the blocks); `d_rec`: the d
// of the records outside the blocks.
// [[Rcpp::export]]
SEXP cpp_key_sums(const Rcpp::IntegerVector& block_start, const Rcpp::NumericVector& theta,
                  const Rcpp::IntegerVector& count, const Rcpp::IntegerVector& d, int n_d, double tol,
                  const Rcpp::IntegerVector& cell, const Rcpp::IntegerVector& d_rec,
                  const Rcpp::Nullable<Rcpp::NumericVector>& w, const Rcpp::Nullable<Rcpp::NumericVector>& y,
                  bool plug) {
  return sdcRisk_glue::run_engine([&] {
    const R_xlen_t n = cell.size();
    const sdcRisk::IfprBlockInput in = block_input(block_start, theta, count, d, n_d, tol, "cpp_key_sums");
    const RecordValues v = record_values(w, y, n, "cpp_key_sums");
    if (d_rec.size() != n) throw std::invalid_argument("cpp_key_sums: inconsistent lengths");
    const sdcRisk::KeySums ks = sdcRisk::key_sums(in, cell.begin(), d_rec.begin(), static_cast<std::size_t>(n), v.wp,
                                                  v.yp, plug);
    const int nl = y.isNotNull() ? 2 : 1, nq = y.isNotNull() ? 3 : 1, wm = nl + nq;
    // row after row in the core, column after column for R
    const auto matrix = [](const std::vector<double>& x, R_xlen_t rows, int cols) {
      Rcpp::NumericMatrix m(rows, cols);
      for (R_xlen_t r = 0; r < rows; ++r)
        for (int j = 0; j < cols; ++j) m[j * rows + r] = x[static_cast<std::size_t>(r * cols + j)];
      return m;
    };
    const R_xlen_t m = static_cast<R_xlen_t>(ks.d.size());
    SEXP plug_parts = R_NilValue;
    Rcpp::List parts;
    if (plug) {
      parts = Rcpp::List::create(Rcpp::Named("outside") = Rcpp::wrap(ks.plug_outside),
                                 Rcpp::Named("own") = Rcpp::wrap(ks.plug_own),
                                 Rcpp::Named("count") = Rcpp::wrap(ks.plug_count));
      plug_parts = parts;
    }
    return Rcpp::List::create(Rcpp::Named("d") = Rcpp::wrap(ks.d), Rcpp::Named("lin") = matrix(ks.lin, m, nl),
                              Rcpp::Named("quad") = matrix(ks.quad, m, nq),
                              Rcpp::Named("direct_lin") = matrix(ks.direct_lin, m, nl),
                              Rcpp::Named("cell_moments") = matrix(ks.agg, count.size(), wm),
                              Rcpp::Named("plug") = plug_parts,
                              Rcpp::Named("singular") = Rcpp::wrap(ks.singular));
  });
}

// Codes of a key's values through a table (released_key_codes()): for
// every element of `x` (integers: a factor's codes or integer values), NA
// gives `na_code`, a value v with v - offset in [0, length(map)) gives
// map[v - offset], any other value NA. One pass, no copy of `x`.
// [[Rcpp::export]]
SEXP cpp_recode(const Rcpp::IntegerVector& x, const Rcpp::IntegerVector& map, int offset, int na_code) {
  return sdcRisk_glue::run_engine([&] {
    const R_xlen_t n = x.size();
    const long long len = static_cast<long long>(map.size());
    Rcpp::IntegerVector out(Rcpp::no_init(n));
    const int* xp = x.begin();
    const int* mp = map.begin();
    int* op = out.begin();
    for (R_xlen_t i = 0; i < n; ++i) {
      if (xp[i] == NA_INTEGER) {
        op[i] = na_code;
        continue;
      }
      const long long at = static_cast<long long>(xp[i]) - offset;
      op[i] = at >= 0 && at < len ? mp[at] : NA_INTEGER;
    }
    return Rcpp::wrap(out);
  });
}
