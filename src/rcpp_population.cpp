// The expected inverse population counts E[1 / F | f] of the models of a
// population given a sample (sdcRisk/population.hpp), for every cell.
#include <Rcpp.h>

#include <string>

#include "glue.h"
#include "sdcRisk/population.hpp"

// E[1 / F_j | f_j] for each cell: `model` "negbin" (param: p_j) or
// "poisson" (param: lambda_j); f and param of one length.
// [[Rcpp::export]]
SEXP cpp_population(const std::string& model, const Rcpp::NumericVector& f, const Rcpp::NumericVector& param) {
  return sdcRisk_glue::run_engine([&] {
    if (f.size() != param.size()) throw std::invalid_argument("population: f and param of different lengths");
    const bool negbin = model == "negbin";
    if (!negbin && model != "poisson") throw std::invalid_argument("unknown population model " + model);
    Rcpp::NumericVector out(f.size());
    sdcRisk_glue::ProgressCallback interrupt = sdcRisk_glue::interrupt_callback();
    for (R_xlen_t i = 0; i < f.size(); ++i) {
      if (i % 4096 == 0) interrupt();
      out[i] = negbin ? sdcRisk::expected_inverse_negbin(f[i], param[i]) : sdcRisk::expected_inverse_poisson(f[i], param[i]);
    }
    return out;
  });
}
