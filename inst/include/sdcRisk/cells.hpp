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

namespace sdcRisk {

struct CellTable {
  std::vector<int> cell_of_record;          // 0-based cell of each record, -1 if left out
  std::vector<int> counts;                  // T_i of each nonempty cell
  std::vector<std::vector<int>> cell_codes; // per key, the code (1..L) of each cell
  std::int64_t n_excluded = 0;
};

namespace detail {

// Open-addressing hash map from a 64-bit cell index to a dense id.
class IndexMap {
 public:
  explicit IndexMap(std::size_t expected) {
    std::size_t cap = 1024;
    while (cap < 2 * expected) cap <<= 1;
    resize(cap);
  }
  // Returns the id of `key`, inserting `next_id` if it is new (sets inserted).
  int find_or_insert(std::uint64_t key, int next_id, bool& inserted) {
    if (2 * (size_ + 1) > keys_.size()) grow();
    std::size_t pos = slot(key);
    while (true) {
      if (keys_[pos] == kEmpty) {
        keys_[pos] = key;
        vals_[pos] = next_id;
        ++size_;
        inserted = true;
        return next_id;
      }
      if (keys_[pos] == key) {
        inserted = false;
        return vals_[pos];
      }
      pos = (pos + 1) & mask_;
    }
  }

 private:
  static constexpr std::uint64_t kEmpty = std::numeric_limits<std::uint64_t>::max();
  std::vector<std::uint64_t> keys_;
  std::vector<int> vals_;
  std::size_t size_ = 0, mask_ = 0;
  int shift_ = 0;

  std::size_t slot(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ULL) >> shift_) & mask_;
  }
  void resize(std::size_t cap) {
    keys_.assign(cap, kEmpty);
    vals_.assign(cap, -1);
    mask_ = cap - 1;
    int bits = 0;
    while ((std::size_t(1) << bits) < cap) ++bits;
    shift_ = 64 - bits;
  }
  void grow() {
    std::vector<std::uint64_t> old_keys;
    std::vector<int> old_vals;
    old_keys.swap(keys_);
    old_vals.swap(vals_);
    resize(old_keys.size() * 2);
    for (std::size_t i = 0; i < old_keys.size(); ++i) {
      if (old_keys[i] == kEmpty) continue;
      std::size_t pos = slot(old_keys[i]);
      while (keys_[pos] != kEmpty) pos = (pos + 1) & mask_;
      keys_[pos] = old_keys[i];
      vals_[pos] = old_vals[i];
    }
  }
};

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
  out.cell_of_record.assign(n, -1);
  std::vector<std::uint64_t> index_of_cell;
  std::vector<int> counts;

  const bool dense = total <= std::max<std::uint64_t>(std::uint64_t(1) << 20, 4 * std::uint64_t(n));
  std::vector<int> dense_id;
  detail::IndexMap map(dense ? 0 : std::min<std::size_t>(n, std::size_t(1) << 20));
  if (dense) dense_id.assign(static_cast<std::size_t>(total), -1);

  // One pass over the records: index, id on first sight, count.
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
    int id;
    if (dense) {
      id = dense_id[idx];
      if (id < 0) {
        id = static_cast<int>(counts.size());
        dense_id[idx] = id;
        index_of_cell.push_back(idx);
        counts.push_back(0);
      }
    } else {
      bool inserted = false;
      id = map.find_or_insert(idx, static_cast<int>(counts.size()), inserted);
      if (inserted) {
        index_of_cell.push_back(idx);
        counts.push_back(0);
      }
    }
    ++counts[id];
    out.cell_of_record[i] = id;
  }

  // Renumber cells in lexicographic order of their codes.
  const std::size_t ncell = counts.size();
  std::vector<int> order(ncell);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int a, int b) { return index_of_cell[a] < index_of_cell[b]; });
  std::vector<int> rank(ncell);
  for (std::size_t r = 0; r < ncell; ++r) rank[order[r]] = static_cast<int>(r);
  bool identity = true;
  for (std::size_t r = 0; r < ncell && identity; ++r) identity = order[r] == static_cast<int>(r);
  if (!identity) {
    for (std::size_t i = 0; i < n; ++i) {
      const int c = out.cell_of_record[i];
      if (c >= 0) out.cell_of_record[i] = rank[c];
    }
  }
  out.counts.resize(ncell);
  out.cell_codes.assign(nkeys, std::vector<int>(ncell));
  for (std::size_t r = 0; r < ncell; ++r) {
    const int c = order[r];
    out.counts[r] = counts[c];
    const std::uint64_t idx = index_of_cell[c];
    for (std::size_t k = 0; k < nkeys; ++k)
      out.cell_codes[k][r] = static_cast<int>((idx / stride[k]) % static_cast<std::uint64_t>(nlevels[k])) + 1;
  }
  return out;
}

}  // namespace sdcRisk

#endif  // SDCRISK_CELLS_HPP
