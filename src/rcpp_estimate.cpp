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
