#include <Rcpp.h>

#include <cstdio>
#include <stdexcept>
#include <vector>

#include "glue.h"
#include "sdcRisk/cells.hpp"

// Cross-classify key codes (each 1..L, NA or < 1 = missing).
// [[Rcpp::export]]
SEXP cpp_cross_classify(const Rcpp::List& codes, const Rcpp::IntegerVector& nlevels) {
  return sdcRisk_glue::run_engine([&] {
    const R_xlen_t nkeys = codes.size();
    std::vector<Rcpp::IntegerVector> keep;
    std::vector<const int*> ptrs;
    std::size_t n = 0;
    for (R_xlen_t k = 0; k < nkeys; ++k) {
      keep.push_back(codes[k]);
      ptrs.push_back(keep.back().begin());
      if (k == 0) n = keep.back().size();
      else if (static_cast<std::size_t>(keep.back().size()) != n) throw std::invalid_argument("key lengths differ");
    }
    std::vector<int> nl(nlevels.begin(), nlevels.end());
    const sdcRisk::CellTable tab = sdcRisk::cross_classify(ptrs, nl, n, sdcRisk_glue::interrupt_callback());
    Rcpp::List cell_codes(nkeys);
    for (R_xlen_t k = 0; k < nkeys; ++k) cell_codes[k] = Rcpp::wrap(tab.cell_codes[k]);
    return Rcpp::List::create(Rcpp::Named("cell_id") = sdcRisk_glue::one_based(tab.cell_of_record),
                              Rcpp::Named("counts") = Rcpp::wrap(tab.counts),
                              Rcpp::Named("codes") = cell_codes,
                              Rcpp::Named("n_excluded") = static_cast<double>(tab.n_excluded));
  });
}

// Smallest and largest non-missing value of an integer vector (NA if none),
// in one pass and without the copies range(na.rm = TRUE) makes.
// [[Rcpp::export]]
SEXP cpp_int_range(const Rcpp::IntegerVector& x) {
  return sdcRisk_glue::run_engine([&] {
    int lo = NA_INTEGER, hi = NA_INTEGER;
    for (R_xlen_t i = 0; i < x.size(); ++i) {
      const int v = x[i];
      if (v == NA_INTEGER) continue;
      if (lo == NA_INTEGER || v < lo) lo = v;
      if (hi == NA_INTEGER || v > hi) hi = v;
    }
    return Rcpp::IntegerVector::create(lo, hi);
  });
}

// Fingerprint of the records' key codes, in record order (see
// sdcRisk::key_fingerprint), as 16 hexadecimal digits.
// [[Rcpp::export]]
SEXP cpp_key_fingerprint(const Rcpp::List& codes) {
  return sdcRisk_glue::run_engine([&] {
    std::vector<Rcpp::IntegerVector> keep;
    std::vector<const int*> ptrs;
    std::size_t n = 0;
    for (R_xlen_t k = 0; k < codes.size(); ++k) {
      keep.push_back(codes[k]);
      ptrs.push_back(keep.back().begin());
      n = keep.back().size();
    }
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx",
                  static_cast<unsigned long long>(sdcRisk::key_fingerprint(ptrs, n)));
    return std::string(buf);
  });
}

// How often each id 1..n occurs in `ids` (NA ignored), in one pass; NULL if
// an id lies outside 1..n. The validators of cells and plans use it to check
// that record cells are in range and add up to the cell counts.
// [[Rcpp::export]]
SEXP cpp_count_ids(const Rcpp::IntegerVector& ids, int n) {
  return sdcRisk_glue::run_engine([&]() -> SEXP {
    Rcpp::IntegerVector out(n);
    for (R_xlen_t i = 0; i < ids.size(); ++i) {
      const int v = ids[i];
      if (v == NA_INTEGER) continue;
      if (v < 1 || v > n) return R_NilValue;
      ++out[v - 1];
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
