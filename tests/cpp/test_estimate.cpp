// Standalone test of the records' pass of estimation, without R:
//   g++ -std=c++17 -O2 -I../../inst/include test_estimate.cpp -o build/test_estimate
// group_moments() against sums written out record by record, with and
// without weights and values, records in no group and values that are NaN.
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "testutil.hpp"

namespace {

using testutil::check;

void check_moments() {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<int> group = {1, 3, 3, 0, 2, 1, 3};
  const std::vector<double> w = {1.5, 2.0, 0.5, 9.0, 3.0, 1.0, 4.0};
  const std::vector<double> y = {10.0, -1.0, 2.0, 5.0, nan, 3.0, 0.5};
  std::vector<double> out(3 * 5);
  sdcRisk::group_moments(group.data(), group.size(), w.data(), y.data(), 3, out.data());
  // group 1: records 0 and 5; group 2: record 4 (NaN value, left out);
  // group 3: records 1, 2 and 6; record 3 in no group (0)
  const double expected[5][3] = {
      {2.5, 0.0, 6.5},                                      // w
      {15.0 + 3.0, 0.0, -2.0 + 1.0 + 2.0},                  // w y
      {2.25 + 1.0, 0.0, 4.0 + 0.25 + 16.0},                 // w^2
      {22.5 + 3.0, 0.0, -4.0 + 0.5 + 8.0},                  // w^2 y
      {225.0 + 9.0, 0.0, 4.0 + 1.0 + 4.0}                   // w^2 y^2
  };
  for (int c = 0; c < 5; ++c)
    for (int g = 0; g < 3; ++g) check(std::fabs(out[c * 3 + g] - expected[c][g]) < 1e-12, "group_moments with values");
  std::vector<double> counts(3 * 2);
  sdcRisk::group_moments(group.data(), group.size(), nullptr, nullptr, 3, counts.data());
  const double n_expected[2][3] = {{2, 1, 3}, {2, 1, 3}};
  for (int c = 0; c < 2; ++c)
    for (int g = 0; g < 3; ++g) check(counts[c * 3 + g] == n_expected[c][g], "group_moments of counts");
  bool thrown = false;
  const std::vector<int> bad = {1, 4};
  try {
    sdcRisk::group_moments(bad.data(), bad.size(), nullptr, nullptr, 3, counts.data());
  } catch (const std::invalid_argument&) {
    thrown = true;
  }
  check(thrown, "a group out of range throws");
}

}  // namespace

int main() {
  check_moments();
  return testutil::report("test_estimate");
}
