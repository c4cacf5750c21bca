// Cross-classification of categorical key variables.
//
// Plain C++17, no R headers. Each key arrives as integer codes 1..L (any code
// < 1 means missing). A record with a missing key is left out of the
// cross-classification. Cells are numbered in lexicographic order of their
// codes (first key slowest), whatever the order of the records.
#ifndef SDCRISK_CELLS_HPP
#define SDCRISK_CELLS_HPP

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "dense_ids.hpp"

namespace sdcRisk {

struct CellTable {
  std::vector<int> cell_of_record;          // 0-based cell of each record, -1 if left out
  std::vector<int> counts;                  // T_i of each nonempty cell
  std::vector<std::vector<int>> cell_codes; // per key, the code (1..L) of each cell
  std::int64_t n_excluded = 0;
};

namespace detail {

template <class Key, class Interrupt>
void classify_with(const std::vector<const int*>& codes, const std::vector<int>& nlevels,
                   const std::vector<std::uint64_t>& stride, std::uint64_t total, std::size_t n,
                   CellTable& out, std::vector<std::uint64_t>& index_of_cell, Interrupt& interrupt) {
  const std::size_t nkeys = codes.size();
  out.cell_of_record.assign(n, -1);
  // One pass over the records: the mixed-radix index of each record's cell.
  std::vector<Key> key;
  std::vector<int> rec;
  key.reserve(n);
  rec.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    if ((i & 0x3FFFF) == 0 && i > 0) interrupt();
    std::uint64_t idx = 0;
    bool missing = false;
    for (std::size_t k = 0; k < nkeys; ++k) {
      const int c = codes[k][i];
      if (c < 1) { missing = true; break; }
      if (c > nlevels[k]) throw std::invalid_argument("cross_classify: code above its number of levels");
      idx += static_cast<std::uint64_t>(c - 1) * stride[k];
    }
    if (missing) { ++out.n_excluded; continue; }
    key.push_back(static_cast<Key>(idx));
    rec.push_back(static_cast<int>(i));
  }
  int bits = 0;
  while (bits < 64 && (std::uint64_t(1) << bits) < total) ++bits;
  radix_sort_pairs(key, rec, bits, interrupt);
  // Runs of equal keys are the cells, already in lexicographic order.
  for (std::size_t i = 0; i < key.size(); ++i) {
    if (i == 0 || key[i] != key[i - 1]) {
      index_of_cell.push_back(key[i]);
      out.counts.push_back(0);
    }
    ++out.counts.back();
    out.cell_of_record[rec[i]] = static_cast<int>(out.counts.size()) - 1;
  }
}

}  // namespace detail

// `codes[k]` points to n codes of key k with `nlevels[k]` levels.
// `interrupt()` is called every few hundred thousand records.
template <class Interrupt>
CellTable cross_classify(const std::vector<const int*>& codes,
                         const std::vector<int>& nlevels, std::size_t n,
                         Interrupt&& interrupt) {
  const std::size_t nkeys = codes.size();
  if (nkeys == 0 || nlevels.size() != nkeys)
    throw std::invalid_argument("cross_classify: no keys or levels mismatch");
  if (n > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw std::invalid_argument("cross_classify: too many records");

  // Mixed-radix index, first key most significant. The product of the level
  // counts must fit in 62 bits; the R side merges keys beforehand if not.
  std::vector<std::uint64_t> stride(nkeys);
  long double prod = 1;
  for (std::size_t k = nkeys; k-- > 0;) {
    if (nlevels[k] < 1) throw std::invalid_argument("cross_classify: key without levels");
    stride[k] = static_cast<std::uint64_t>(prod);
    prod *= nlevels[k];
  }
  if (prod > 4.0e18L)
    throw std::invalid_argument("cross_classify: too many key combinations for one pass");
  const std::uint64_t total = static_cast<std::uint64_t>(prod);

  CellTable out;
  std::vector<std::uint64_t> index_of_cell;
  if (total <= std::numeric_limits<std::uint32_t>::max())
    detail::classify_with<std::uint32_t>(codes, nlevels, stride, total, n, out, index_of_cell, interrupt);
  else
    detail::classify_with<std::uint64_t>(codes, nlevels, stride, total, n, out, index_of_cell, interrupt);

  const std::size_t ncell = out.counts.size();
  out.cell_codes.assign(nkeys, std::vector<int>(ncell));
  for (std::size_t r = 0; r < ncell; ++r) {
    const std::uint64_t idx = index_of_cell[r];
    for (std::size_t k = 0; k < nkeys; ++k)
      out.cell_codes[k][r] = static_cast<int>((idx / stride[k]) % static_cast<std::uint64_t>(nlevels[k])) + 1;
  }
  return out;
}

// A 64-bit fingerprint of the key codes of every record, in record order
// (missing codes count as 0): one sequential pass, used to recognise the
// data a plan was built from without comparing records with cells.
inline std::uint64_t key_fingerprint(const std::vector<const int*>& codes, std::size_t n) {
  std::uint64_t h = 0x9E3779B97F4A7C15ULL ^ (static_cast<std::uint64_t>(n) * 0xBF58476D1CE4E5B9ULL);
  for (std::size_t i = 0; i < n; ++i) {
    for (const int* c : codes) {
      const std::uint64_t v = c[i] < 1 ? 0 : static_cast<std::uint64_t>(c[i]);
      h ^= v + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
      h *= 0xFF51AFD7ED558CCDULL;
    }
    h ^= h >> 29;
  }
  return h;
}

}  // namespace sdcRisk

#endif  // SDCRISK_CELLS_HPP
