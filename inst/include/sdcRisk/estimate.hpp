// The one pass over the records of a released file that estimation needs:
// the sums, in each group of records, of the weights and values whose
// linear combinations are the estimates and their variance estimates
// (R/estimate-table.R). Everything after it works on the groups.
#ifndef SDCRISK_ESTIMATE_HPP
#define SDCRISK_ESTIMATE_HPP

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <vector>

namespace sdcRisk {

// Sums by group of c = w (or w y) and c^2, or with values of w, w y, w^2,
// w^2 y and w^2 y^2: the first and second moments of a count, a total and a
// ratio of the two. `group[i]` is the record's group, 1-based in
// [1, n_groups] (as R numbers them), or below 1 (R's NA is INT_MIN) for a
// record that counts in no group; `w` and
// `y` may be null (every weight 1; no value). A record whose value is NaN
// counts in no group. `out` holds n_groups * n_columns doubles, column
// after column (as R stores a matrix), set to zero here.
inline std::size_t moment_columns(bool has_value) { return has_value ? 5 : 2; }

inline void group_moments(const int* group, std::size_t n, const double* w, const double* y,
                          std::size_t n_groups, double* out) {
  const std::size_t nc = moment_columns(y != nullptr);
  std::fill(out, out + n_groups * nc, 0.0);
  double* s[5];
  for (std::size_t c = 0; c < nc; ++c) s[c] = out + c * n_groups;
  for (std::size_t i = 0; i < n; ++i) {
    if (group[i] < 1) continue;
    const std::size_t g = static_cast<std::size_t>(group[i]) - 1;
    if (g >= n_groups) throw std::invalid_argument("group_moments: group out of range");
    const double wi = w ? w[i] : 1.0;
    if (!y) {
      s[0][g] += wi;
      s[1][g] += wi * wi;
      continue;
    }
    const double yi = y[i];
    if (std::isnan(yi)) continue;
    const double w2 = wi * wi;
    s[0][g] += wi;
    s[1][g] += wi * yi;
    s[2][g] += w2;
    s[3][g] += w2 * yi;
    s[4][g] += w2 * yi * yi;
  }
}

}  // namespace sdcRisk

#endif  // SDCRISK_ESTIMATE_HPP
