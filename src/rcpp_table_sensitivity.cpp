// R glue for the sensitivity core (inst/include/sdcRisk/table_sensitivity.hpp). Every
// entry point runs through run_engine() (src/glue.h), where exceptions are caught;
// a broken internal assumption is a std::invalid_argument there. None draws random
// numbers, so none saves and restores R's generator (rng = false).
#include <Rcpp.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "glue.h"
#include "sdcRisk/table_sensitivity.hpp"

namespace {

using sdcRisk_glue::one_based;
using sdcRisk_glue::run_engine;
using sdcRisk_glue::zero_based;

std::vector<sdcRisk::Respondent> respondents(const Rcpp::NumericVector& pt, const Rcpp::NumericVector& noise,
                                             const Rcpp::NumericVector& self_noise, double& noise_total) {
  const R_xlen_t n = pt.size();
  if (noise.size() != n || self_noise.size() != n) throw std::invalid_argument("PTN lengths differ");
  std::vector<sdcRisk::Respondent> r(n);
  noise_total = 0;
  for (R_xlen_t i = 0; i < n; ++i) {
    r[i] = sdcRisk::Respondent{pt[i], noise[i], self_noise[i], static_cast<int>(i)};
    noise_total += noise[i];
  }
  return r;
}

}  // namespace

// S^nt_ns of one cell (eq. 3-7) and a maximal pair (1-based, NA = phantom).
// opts: nt, ns, algorithm ("auto", "theorem1", "general").
// [[Rcpp::export(rng = false)]]
SEXP cpp_ptn_sensitivity(const Rcpp::NumericVector& pt, const Rcpp::NumericVector& noise,
                         const Rcpp::NumericVector& self_noise, const Rcpp::List& opts) {
  return run_engine([&] {
    const int nt = Rcpp::as<int>(opts["nt"]), ns = Rcpp::as<int>(opts["ns"]);
    const std::string algorithm = Rcpp::as<std::string>(opts["algorithm"]);
    double noise_total = 0;
    std::vector<sdcRisk::Respondent> r = respondents(pt, noise, self_noise, noise_total);
    sdcRisk::PtnSets res;
    if (algorithm == "theorem1") {
      if (nt != 1 || ns != 1) throw std::invalid_argument("Theorem 1 needs nt = ns = 1");
      res = sdcRisk::ptn_theorem1(std::move(r), noise_total);
    } else if (algorithm == "general") {
      res = sdcRisk::ptn_general(std::move(r), noise_total, nt, ns);
    } else {
      res = sdcRisk::ptn_max(std::move(r), noise_total, nt, ns);
    }
    return Rcpp::List::create(Rcpp::Named("S") = res.s, Rcpp::Named("target") = one_based(res.target),
                              Rcpp::Named("suspect") = one_based(res.suspect));
  });
}

// Aggregate records to contributors in the cells of one level of aggregation.
// codes: list of integer codes (1..L) of the keys kept at this level (may be
// empty: grand total); contributor: integer codes 1..C or NULL; values: list
// of numeric columns to sum.
// [[Rcpp::export(rng = false)]]
SEXP cpp_contributor_cells(const Rcpp::List& codes, const Rcpp::IntegerVector& nlevels,
                           const Rcpp::Nullable<Rcpp::IntegerVector>& contributor, const Rcpp::List& values,
                           int n) {
  return run_engine([&] {
    std::vector<Rcpp::IntegerVector> keep;
    std::vector<const int*> ptrs;
    for (R_xlen_t k = 0; k < codes.size(); ++k) {
      keep.push_back(codes[k]);
      if (keep.back().size() != n) throw std::invalid_argument("key lengths differ");
      ptrs.push_back(keep.back().begin());
    }
    std::vector<int> nl(nlevels.begin(), nlevels.end());
    Rcpp::IntegerVector contrib;
    const int* cptr = nullptr;
    int ncontrib = 0;
    if (contributor.isNotNull()) {
      contrib = Rcpp::IntegerVector(contributor.get());
      if (contrib.size() != n) throw std::invalid_argument("contributor length differs");
      cptr = contrib.begin();
      for (R_xlen_t i = 0; i < contrib.size(); ++i) ncontrib = std::max(ncontrib, contrib[i]);
    }
    std::vector<Rcpp::NumericVector> vkeep;
    std::vector<const double*> vptr;
    for (R_xlen_t v = 0; v < values.size(); ++v) {
      vkeep.push_back(values[v]);
      if (vkeep.back().size() != n) throw std::invalid_argument("value lengths differ");
      vptr.push_back(vkeep.back().begin());
    }
    const sdcRisk::ContributorCells res = sdcRisk::contributor_cells(
        ptrs, nl, cptr, ncontrib, vptr, static_cast<std::size_t>(n), sdcRisk_glue::interrupt_callback());
    Rcpp::List cell_codes(res.cell_codes.size());
    for (std::size_t k = 0; k < res.cell_codes.size(); ++k) cell_codes[k] = Rcpp::wrap(res.cell_codes[k]);
    Rcpp::List sums(res.sums.size());
    for (std::size_t v = 0; v < res.sums.size(); ++v) sums[v] = Rcpp::wrap(res.sums[v]);
    return Rcpp::List::create(Rcpp::Named("ncell") = static_cast<int>(res.ncell),
                              Rcpp::Named("codes") = cell_codes,
                              Rcpp::Named("cell") = one_based(res.row_cell),
                              Rcpp::Named("contributor") = Rcpp::wrap(res.row_contributor),
                              Rcpp::Named("records") = Rcpp::wrap(res.row_records),
                              Rcpp::Named("sums") = sums);
  });
}

// PTN sensitivity of every cell from contributor rows. cell: 1-based cell of
// each row; opts: ncell, nt, ns. Returns S per cell and the maximal target and
// suspect rows (ncell x nt and ncell x ns matrices, 1-based, NA = phantom).
// [[Rcpp::export(rng = false)]]
SEXP cpp_ptn_cells(const Rcpp::IntegerVector& cell, const Rcpp::NumericVector& pt,
                   const Rcpp::NumericVector& noise, const Rcpp::NumericVector& self_noise,
                   const Rcpp::List& opts) {
  return run_engine([&] {
    const int nt = Rcpp::as<int>(opts["nt"]), ns = Rcpp::as<int>(opts["ns"]);
    const int ncell = Rcpp::as<int>(opts["ncell"]);
    const R_xlen_t n = cell.size();
    if (pt.size() != n || noise.size() != n || self_noise.size() != n)
      throw std::invalid_argument("PTN lengths differ");
    const std::vector<int> cell0 = zero_based(cell);
    const sdcRisk::CellsPtn res =
        sdcRisk::ptn_cells(cell0.data(), static_cast<std::size_t>(n), static_cast<std::size_t>(ncell), pt.begin(),
                           noise.begin(), self_noise.begin(), nt, ns, sdcRisk_glue::interrupt_callback());
    Rcpp::IntegerMatrix target(ncell, nt), suspect(ncell, ns);
    for (int c = 0; c < ncell; ++c) {
      for (int j = 0; j < nt; ++j) {
        const int r = res.target[static_cast<std::size_t>(c) * nt + j];
        target(c, j) = r < 0 ? NA_INTEGER : r + 1;
      }
      for (int j = 0; j < ns; ++j) {
        const int r = res.suspect[static_cast<std::size_t>(c) * ns + j];
        suspect(c, j) = r < 0 ? NA_INTEGER : r + 1;
      }
    }
    return Rcpp::List::create(Rcpp::Named("S") = Rcpp::wrap(res.s), Rcpp::Named("target") = target,
                              Rcpp::Named("suspect") = suspect);
  });
}

// The k largest values per cell (ties: earlier row first) and their rows
// (ncell x k matrices, NA where the cell has fewer rows).
// [[Rcpp::export(rng = false)]]
SEXP cpp_cell_largest(const Rcpp::IntegerVector& cell, const Rcpp::NumericVector& x, int ncell, int k) {
  return run_engine([&] {
    const R_xlen_t n = cell.size();
    if (x.size() != n) throw std::invalid_argument("lengths differ");
    const std::vector<int> cell0 = zero_based(cell);
    Rcpp::NumericMatrix value(ncell, k);
    Rcpp::IntegerMatrix row(ncell, k);
    const sdcRisk::CellTopK top = sdcRisk::largest_per_cell(
        cell0.data(), x.begin(), static_cast<std::size_t>(n), static_cast<std::size_t>(ncell), static_cast<std::size_t>(k));
    for (int c = 0; c < ncell; ++c) {
      for (int j = 0; j < k; ++j) {
        const bool has = static_cast<std::size_t>(j) < top.size(c);
        value(c, j) = has ? top.value(c, j) : NA_REAL;
        row(c, j) = has ? top.row(c, j) + 1 : NA_INTEGER;
      }
    }
    return Rcpp::List::create(Rcpp::Named("value") = value, Rcpp::Named("row") = row);
  });
}
