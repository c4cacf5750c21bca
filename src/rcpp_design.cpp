#include <Rcpp.h>

#include <stdexcept>
#include <string>

#include "glue.h"
#include "sdcRisk/design.hpp"

// Vectorised design formulas: "psi" (x = T, y = theta), "theta_psi"
// (x = xi, y = T), "theta_h" (x = xi), "ceiling" (x).
// [[Rcpp::export]]
SEXP cpp_design(const std::string& what, const Rcpp::NumericVector& x, const Rcpp::NumericVector& y) {
  return sdcRisk_glue::run_engine([&] {
    const R_xlen_t n = x.size();
    Rcpp::NumericVector out(n);
    for (R_xlen_t i = 0; i < n; ++i) {
      const double yi = y.size() > 0 ? y[i % y.size()] : 0.0;
      if (what == "psi") out[i] = sdcRisk::psi(x[i], yi);
      else if (what == "theta_psi") out[i] = sdcRisk::theta_for_psi(x[i], yi);
      else if (what == "theta_h") out[i] = sdcRisk::theta_for_h(x[i]);
      else if (what == "ceiling") out[i] = sdcRisk::ceiling_tolerant(x[i]);
      else throw std::invalid_argument("unknown design formula " + what);
    }
    return out;
  });
}
