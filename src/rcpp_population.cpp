// The population side of sample releases (sdcRisk/population.hpp): the
// population counts of a sample's cells, and the expected inverse
// population counts E[1 / F | f] of the models of a population given a
// sample.
#include <Rcpp.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

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

// F_j of every sample cell from the population's rows: `sample` and `pop`
// lists of integer codes per key over the sample's categories (NA: a
// category the sample lacks), `nlevels` per key, `count` per row.
// [[Rcpp::export]]
SEXP cpp_population_counts(const Rcpp::List& sample, const Rcpp::List& pop, const Rcpp::IntegerVector& nlevels,
                           const Rcpp::NumericVector& count) {
  return sdcRisk_glue::run_engine([&] {
    const R_xlen_t K = nlevels.size();
    if (sample.size() != K || pop.size() != K) throw std::invalid_argument("population counts: one code vector per key");
    std::vector<const int*> s, p;
    R_xlen_t n = -1, N = count.size();
    for (R_xlen_t k = 0; k < K; ++k) {
      Rcpp::IntegerVector a = sample[k], b = pop[k];
      if ((n >= 0 && a.size() != n) || b.size() != N) throw std::invalid_argument("population counts: code lengths");
      n = a.size();
      s.push_back(a.begin());
      p.push_back(b.begin());
    }
    return sdcRisk::population_counts(s, static_cast<std::size_t>(std::max<R_xlen_t>(n, 0)), p,
                                      static_cast<std::size_t>(N), std::vector<int>(nlevels.begin(), nlevels.end()),
                                      count.begin());
  });
}
