#include <Rcpp.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "glue.h"
#include "sdcRisk/design.hpp"
#include "sdcRisk/design_optimal.hpp"

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

// The least-damage design of one partition set (sdcRisk::SetDesigner):
// `codes` a list of 1-based category codes per key, `values` a list of the
// cells' values (NULL for a key without order), `opts` the goal, damage,
// weights, exhaustive_cells and max_block. Returns the blocks as positions
// within the set (1-based), block sizes, theta (NA for a matrix block), the
// matrix blocks' matrices concatenated, each block's damage, and `lacks`
// (NULL if the set can hold its blocks).
// [[Rcpp::export]]
SEXP cpp_design_optimal(const Rcpp::IntegerVector& counts, const Rcpp::NumericVector& bound,
                        const Rcpp::LogicalVector& need, const Rcpp::List& codes, const Rcpp::List& values,
                        const Rcpp::List& opts) {
  return sdcRisk_glue::run_engine([&] {
    std::vector<std::vector<int>> cd;
    std::vector<std::vector<double>> vl;
    sdcRisk::KeySpace ks;
    ks.n_cells = counts.size();
    for (R_xlen_t k = 0; k < codes.size(); ++k) {
      cd.push_back(sdcRisk_glue::zero_based(Rcpp::IntegerVector(codes[k])));
      vl.push_back(Rf_isNull(values[k]) ? std::vector<double>() : Rcpp::as<std::vector<double>>(values[k]));
      if (static_cast<R_xlen_t>(cd.back().size()) != counts.size() ||
          (!vl.back().empty() && static_cast<R_xlen_t>(vl.back().size()) != counts.size()))
        throw std::invalid_argument("design: one code and value per cell");
    }
    for (std::size_t k = 0; k < cd.size(); ++k) {
      ks.codes.push_back(cd[k].data());
      ks.value.push_back(vl[k].empty() ? nullptr : vl[k].data());
    }
    sdcRisk::DesignOptions opt;
    opt.goal = sdcRisk::parse_goal(Rcpp::as<std::string>(opts["goal"]));
    const std::string damage = Rcpp::as<std::string>(opts["damage"]);
    opt.damage = damage == "records" ? sdcRisk::Damage::Records
                 : damage == "variance" ? sdcRisk::Damage::Variance
                 : damage == "distance" ? sdcRisk::Damage::Distance
                                        : sdcRisk::Damage::Keys;
    opt.weight = Rcpp::as<std::vector<double>>(opts["weights"]);
    opt.exhaustive_cells = Rcpp::as<int>(opts["exhaustive_cells"]);
    opt.max_block = Rcpp::as<int>(opts["max_block"]);
    std::vector<char> nd(need.size());
    for (R_xlen_t i = 0; i < need.size(); ++i) nd[i] = need[i] == TRUE;
    sdcRisk::SetDesigner designer(Rcpp::as<std::vector<int>>(counts), Rcpp::as<std::vector<double>>(bound), nd, ks,
                                  opt);
    const sdcRisk::SetDesign d = designer.run(sdcRisk_glue::interrupt_callback());
    std::vector<int> cells, sizes;
    std::vector<double> theta, matrix, dmg;
    for (const auto& b : d.blocks) {
      for (int c : b.cells) cells.push_back(c + 1);
      sizes.push_back(static_cast<int>(b.cells.size()));
      theta.push_back(std::isnan(b.theta) ? NA_REAL : b.theta);
      matrix.insert(matrix.end(), b.matrix.begin(), b.matrix.end());
      dmg.push_back(b.damage);
    }
    return Rcpp::List::create(Rcpp::Named("cells") = Rcpp::wrap(cells), Rcpp::Named("sizes") = Rcpp::wrap(sizes),
                              Rcpp::Named("theta") = Rcpp::wrap(theta), Rcpp::Named("matrix") = Rcpp::wrap(matrix),
                              Rcpp::Named("damage") = Rcpp::wrap(dmg),
                              Rcpp::Named("lacks") = d.lacks.empty() ? R_NilValue : Rcpp::wrap(d.lacks));
  });
}
