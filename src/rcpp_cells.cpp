#include <Rcpp.h>

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "glue.h"
#include "sdcRisk/cells.hpp"

namespace {

// Pointers to the code vectors of `codes` (kept alive by `keep`), and their
// common length.
std::size_t key_pointers(const Rcpp::List& codes, std::vector<Rcpp::IntegerVector>& keep,
                         std::vector<const int*>& ptrs) {
  std::size_t n = 0;
  for (R_xlen_t k = 0; k < codes.size(); ++k) {
    keep.push_back(codes[k]);
    ptrs.push_back(keep.back().begin());
    if (k == 0) n = keep.back().size();
    else if (static_cast<std::size_t>(keep.back().size()) != n) throw std::invalid_argument("key lengths differ");
  }
  return n;
}

// A fingerprint as R holds it: 16 hexadecimal digits.
std::string fingerprint_hex(std::uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return std::string(buf);
}

}  // namespace

// Cross-classify key codes (each 1..L, NA or < 1 = missing; key k stored
// as code + offsets[k], so that whole numbers need no shifted copy). The
// records' cells are written straight into the result (1-based, NA if left out),
// and the fingerprint of the codes (cpp_key_fingerprint()) comes from the
// same pass over the records.
// [[Rcpp::export]]
SEXP cpp_cross_classify(const Rcpp::List& codes, const Rcpp::IntegerVector& nlevels,
                        const Rcpp::IntegerVector& offsets) {
  return sdcRisk_glue::run_engine([&] {
    const R_xlen_t nkeys = codes.size();
    std::vector<Rcpp::IntegerVector> keep;
    std::vector<const int*> ptrs;
    const std::size_t n = key_pointers(codes, keep, ptrs);
    std::vector<int> nl(nlevels.begin(), nlevels.end());
    std::vector<int> off(offsets.begin(), offsets.end());
    Rcpp::IntegerVector cell_id(sdcRisk_glue::alloc_large(INTSXP, static_cast<R_xlen_t>(n)));
    int* id = cell_id.begin();
    std::uint64_t fingerprint = 0;
    const sdcRisk::CellTable tab =
        sdcRisk::cross_classify_into(ptrs, nl, n, id, sdcRisk_glue::interrupt_callback(), &fingerprint, &off);
    for (std::size_t i = 0; i < n; ++i) id[i] = id[i] < 0 ? NA_INTEGER : id[i] + 1;
    Rcpp::List cell_codes(nkeys);
    for (R_xlen_t k = 0; k < nkeys; ++k) {
      Rcpp::IntegerVector ck(Rcpp::no_init(static_cast<R_xlen_t>(tab.counts.size())));
      tab.decode(static_cast<std::size_t>(k), ck.begin());
      cell_codes[k] = ck;
    }
    return Rcpp::List::create(Rcpp::Named("cell_id") = cell_id,
                              Rcpp::Named("counts") = Rcpp::wrap(tab.counts),
                              Rcpp::Named("codes") = cell_codes,
                              Rcpp::Named("n_excluded") = static_cast<double>(tab.n_excluded),
                              Rcpp::Named("fingerprint") = fingerprint_hex(fingerprint));
  });
}

// Smallest and largest non-missing value of an integer vector (NA if none),
// in one pass and without the copies range(na.rm = TRUE) makes.
// [[Rcpp::export]]
SEXP cpp_int_range(const Rcpp::IntegerVector& x) {
  return sdcRisk_glue::run_engine([&] {
    int lo = NA_INTEGER, hi = NA_INTEGER;
    const int* p = x.begin();
    const R_xlen_t n = x.size();
    for (R_xlen_t i = 0; i < n; ++i) {
      const int v = p[i];
      if (v == NA_INTEGER) continue;
      if (lo == NA_INTEGER || v < lo) lo = v;
      if (hi == NA_INTEGER || v > hi) hi = v;
    }
    return Rcpp::IntegerVector::create(lo, hi);
  });
}

// Fingerprint of the records' key codes (stored as code + offsets[k]), in
// record order (see sdcRisk::key_fingerprint), as 16 hexadecimal digits;
// NA if `nlevels` is given and a code lies outside 1..nlevels[k] (a
// malformed factor), checked in the same pass.
// [[Rcpp::export]]
SEXP cpp_key_fingerprint(const Rcpp::List& codes, const Rcpp::IntegerVector& offsets,
                         Rcpp::Nullable<Rcpp::IntegerVector> nlevels = R_NilValue) {
  return sdcRisk_glue::run_engine([&]() -> SEXP {
    std::vector<Rcpp::IntegerVector> keep;
    std::vector<const int*> ptrs;
    const std::size_t n = key_pointers(codes, keep, ptrs);
    const std::vector<int> off(offsets.begin(), offsets.end());
    std::vector<int> nl;
    if (nlevels.isNotNull()) {
      const Rcpp::IntegerVector v(nlevels.get());
      nl.assign(v.begin(), v.end());
    }
    bool in_range = true;
    const std::uint64_t h = sdcRisk::key_fingerprint(ptrs, n, &off, nlevels.isNotNull() ? &nl : nullptr, &in_range);
    if (!in_range) return Rcpp::CharacterVector::create(NA_STRING);
    return Rcpp::wrap(fingerprint_hex(h));
  });
}

// How often each id 1..n occurs in `ids` (NA ignored), in one pass; NULL if
// an id lies outside 1..n. The validators of cells and plans use it to check
// that record cells are in range and add up to the cell counts.
// [[Rcpp::export]]
SEXP cpp_count_ids(const Rcpp::IntegerVector& ids, int n) {
  return sdcRisk_glue::run_engine([&]() -> SEXP {
    Rcpp::IntegerVector out(n);
    int* o = out.begin();
    const int* p = ids.begin();
    const R_xlen_t m = ids.size();
    for (R_xlen_t i = 0; i < m; ++i) {
      const int v = p[i];
      if (v == NA_INTEGER) continue;
      if (v < 1 || v > n) return R_NilValue;
      ++o[v - 1];
    }
    return out;
  });
}

// The records (1-based) whose released cell `new_cell` is a cell other
// than `old_cell`, in one pass.
// [[Rcpp::export]]
SEXP cpp_changed_records(const Rcpp::IntegerVector& old_cell, const Rcpp::IntegerVector& new_cell) {
  return sdcRisk_glue::run_engine([&]() -> SEXP {
    const R_xlen_t n = old_cell.size();
    if (new_cell.size() != n) throw std::invalid_argument("changed records: lengths differ");
    if (n > static_cast<R_xlen_t>(2147483647)) throw std::invalid_argument("changed records: too many records");
    const int* a = old_cell.begin();
    const int* b = new_cell.begin();
    R_xlen_t m = 0;
    for (R_xlen_t i = 0; i < n; ++i) m += b[i] != NA_INTEGER && b[i] != a[i];
    Rcpp::IntegerVector out(Rcpp::no_init(m));
    int* o = out.begin();
    for (R_xlen_t i = 0; i < n; ++i)
      if (b[i] != NA_INTEGER && b[i] != a[i]) *o++ = static_cast<int>(i + 1);
    return out;
  });
}

// Codes x - lo + 1 of a dense integer key (NA stays NA), in one pass; the
// caller has checked that the range of x is below 10^6, so no overflow.
// [[Rcpp::export]]
SEXP cpp_shift_codes(const Rcpp::IntegerVector& x, int lo) {
  return sdcRisk_glue::run_engine([&] {
    const R_xlen_t n = x.size();
    Rcpp::IntegerVector out(Rcpp::no_init(n));
    const int* p = x.begin();
    int* o = out.begin();
    const long long shift = static_cast<long long>(lo) - 1;
    for (R_xlen_t i = 0; i < n; ++i)
      o[i] = p[i] == NA_INTEGER ? NA_INTEGER : static_cast<int>(static_cast<long long>(p[i]) - shift);
    return out;
  });
}

// A copy of the vector x (attributes kept) with x[at[j]] = values[to[j]]
// (at and to 1-based, in range), or NULL if no element changes: keys that
// no moved record changes are not copied, and the new values are read in
// place (no vector of them). x and values have the same type (integer,
// double, logical or character); the caller checks.
// [[Rcpp::export]]
SEXP cpp_write_at(SEXP x, const Rcpp::IntegerVector& at, SEXP values, const Rcpp::IntegerVector& to) {
  return sdcRisk_glue::run_engine([&]() -> SEXP {
    const int type = TYPEOF(x);
    if (TYPEOF(values) != type || to.size() != at.size()) throw std::invalid_argument("write_at: values do not match");
    const R_xlen_t n = Rf_xlength(x);
    const R_xlen_t nv = Rf_xlength(values);
    const R_xlen_t m = at.size();
    const int* pos = at.begin();
    const int* src = to.begin();
    for (R_xlen_t j = 0; j < m; ++j) {
      if (pos[j] == NA_INTEGER || pos[j] < 1 || pos[j] > n) throw std::invalid_argument("write_at: position out of range");
      if (src[j] == NA_INTEGER || src[j] < 1 || src[j] > nv) throw std::invalid_argument("write_at: value out of range");
    }
    R_xlen_t first = m;
    switch (type) {
      case INTSXP:
      case LGLSXP: {
        const int* a = type == INTSXP ? INTEGER(x) : LOGICAL(x);
        const int* v = type == INTSXP ? INTEGER(values) : LOGICAL(values);
        for (R_xlen_t j = 0; j < m && first == m; ++j)
          if (a[pos[j] - 1] != v[src[j] - 1]) first = j;
        break;
      }
      case REALSXP: {
        const double* a = REAL(x);
        const double* v = REAL(values);
        // bitwise, so that NA and NaN count as different values
        for (R_xlen_t j = 0; j < m && first == m; ++j)
          if (std::memcmp(&a[pos[j] - 1], &v[src[j] - 1], sizeof(double)) != 0) first = j;
        break;
      }
      case STRSXP:
        for (R_xlen_t j = 0; j < m && first == m; ++j)
          if (STRING_ELT(x, pos[j] - 1) != STRING_ELT(values, src[j] - 1)) first = j;
        break;
      default:
        throw std::invalid_argument("write_at: unsupported type");
    }
    if (first == m) return R_NilValue;
    // a copy whose pages are advised huge before the copy writes them (Rf_duplicate()
    // maps 4 KB pages one fault at a time); strings keep Rf_duplicate()
    Rcpp::Shield<SEXP> out(type == STRSXP ? Rf_duplicate(x) : sdcRisk_glue::alloc_large(type, n));
    if (type != STRSXP) {
      if (type == REALSXP) std::memcpy(REAL(out), REAL(x), static_cast<std::size_t>(n) * sizeof(double));
      else if (type == INTSXP) std::memcpy(INTEGER(out), INTEGER(x), static_cast<std::size_t>(n) * sizeof(int));
      else std::memcpy(LOGICAL(out), LOGICAL(x), static_cast<std::size_t>(n) * sizeof(int));
      DUPLICATE_ATTRIB(out, x);
    }
    switch (type) {
      case INTSXP:
      case LGLSXP: {
        int* o = type == INTSXP ? INTEGER(out) : LOGICAL(out);
        const int* v = type == INTSXP ? INTEGER(values) : LOGICAL(values);
        for (R_xlen_t j = first; j < m; ++j) o[pos[j] - 1] = v[src[j] - 1];
        break;
      }
      case REALSXP: {
        double* o = REAL(out);
        const double* v = REAL(values);
        for (R_xlen_t j = first; j < m; ++j) o[pos[j] - 1] = v[src[j] - 1];
        break;
      }
      default:
        for (R_xlen_t j = first; j < m; ++j) SET_STRING_ELT(out, pos[j] - 1, STRING_ELT(values, src[j] - 1));
    }
    return out;
  });
}

// The first block (1-based) whose theta is outside [0, the smallest count
// of its cells], or 0; NA theta (matrix blocks) is not checked. The
// validator of block plans checked block_start and block_cells before.
// [[Rcpp::export]]
SEXP cpp_theta_outside(const Rcpp::NumericVector& theta, const Rcpp::IntegerVector& block_start,
                       const Rcpp::IntegerVector& block_cells, const Rcpp::IntegerVector& counts) {
  return sdcRisk_glue::run_engine([&]() -> SEXP {
    const double* th = theta.begin();
    const int* bs = block_start.begin();
    const int* bc = block_cells.begin();
    const int* ct = counts.begin();
    const R_xlen_t nb = theta.size(), nbc = block_cells.size(), nc = counts.size();
    if (block_start.size() != nb + 1) return Rcpp::wrap(1);
    for (R_xlen_t b = 0; b < nb; ++b) {
      if (ISNAN(th[b])) continue;
      if (th[b] < 0) return Rcpp::wrap(static_cast<int>(b + 1));
      for (int k = bs[b]; k < bs[b + 1]; ++k) {
        if (k < 0 || k >= nbc || bc[k] < 1 || bc[k] > nc) return Rcpp::wrap(static_cast<int>(b + 1));
        if (th[b] > ct[bc[k] - 1]) return Rcpp::wrap(static_cast<int>(b + 1));
      }
    }
    return Rcpp::wrap(0);
  });
}

// The sum of an integer vector as a double (NA counts as 0), in one pass
// and without the copy sum(as.numeric(x)) makes.
// [[Rcpp::export]]
SEXP cpp_int_sum(const Rcpp::IntegerVector& x) {
  return sdcRisk_glue::run_engine([&] {
    const int* p = x.begin();
    const R_xlen_t n = x.size();
    long double s = 0;
    for (R_xlen_t i = 0; i < n; ++i)
      if (p[i] != NA_INTEGER) s += p[i];
    return Rcpp::wrap(static_cast<double>(s));
  });
}
