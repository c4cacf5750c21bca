// Dense ids of the distinct rows of integer columns, in time linear in the
// rows, by counting or radix sorting (no std::map of vectors, which costs a
// heap allocation and a string of comparisons per row, and no hash table,
// which misses the cache once per row).
//
// A row (c_1, ..., c_m), c_k in [0, radix_k), is folded into a 64-bit key
// (mixed radix, first column most significant); rows whose key would not fit
// are folded in several passes, each packing the previous pass's id with
// the next columns. Ids are the ranks of the distinct keys, so they follow
// the lexicographic order of the rows.
#ifndef SDCRISK_DENSE_IDS_HPP
#define SDCRISK_DENSE_IDS_HPP

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace sdcRisk {

namespace detail {

// Stable LSD radix sort of (key, record) pairs on the low `bits` bits of the
// keys: a few sequential counting passes, cache-friendly where a hash table
// would miss the cache once per record.
template <class Key, class Interrupt>
void radix_sort_pairs(std::vector<Key>& key, std::vector<int>& rec, int bits, Interrupt& interrupt) {
  if (bits <= 0 || key.size() < 2) return;
  const int passes = (bits + 15) / 16;
  const int digit = (bits + passes - 1) / passes;
  const std::size_t nb = std::size_t(1) << digit;
  const std::size_t n = key.size();
  std::vector<Key> key2(n);
  std::vector<int> rec2(n);
  std::vector<std::size_t> count(nb);
  for (int p = 0; p < passes; ++p) {
    interrupt();
    const int shift = p * digit;
    const Key mask = static_cast<Key>(nb - 1);
    std::fill(count.begin(), count.end(), 0);
    for (std::size_t i = 0; i < n; ++i) ++count[(key[i] >> shift) & mask];
    std::size_t sum = 0;
    for (std::size_t d = 0; d < nb; ++d) {
      const std::size_t c = count[d];
      count[d] = sum;
      sum += c;
    }
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t pos = count[(key[i] >> shift) & mask]++;
      key2[pos] = key[i];
      rec2[pos] = rec[i];
    }
    key.swap(key2);
    rec.swap(rec2);
  }
}

inline int bit_length(std::uint64_t x) {
  int b = 0;
  while (b < 64 && (std::uint64_t(1) << b) <= x) ++b;
  return b;
}

}  // namespace detail

// The distinct keys of a vector of 64-bit keys in [0, span), in increasing
// order, and the rank of every key among them.
struct KeyRanks {
  std::vector<int> id;                // rank of key[i]
  std::vector<std::uint64_t> unique;  // the distinct keys, increasing
  int size() const { return static_cast<int>(unique.size()); }
  // The rank of `key`, or -1 if it does not occur.
  int find(std::uint64_t key) const {
    const auto it = std::lower_bound(unique.begin(), unique.end(), key);
    return it != unique.end() && *it == key ? static_cast<int>(it - unique.begin()) : -1;
  }
};

// Buffers of rank_keys(), kept between calls so that repeated ranking (one
// call per subset of keys in the per-variable certificate) does not pay for
// fresh pages every time.
struct RankWorkspace {
  std::vector<int> slot, rec;
  std::vector<std::uint64_t> key;
};

// By a table over [0, span) when span is small beside the number of keys,
// else by a radix sort.
inline void rank_keys(const std::vector<std::uint64_t>& key, std::uint64_t span, KeyRanks& out,
                      RankWorkspace& ws) {
  const std::size_t n = key.size();
  out.id.resize(n);
  out.unique.clear();
  if (span <= std::max<std::uint64_t>(std::uint64_t(1) << 16, 4 * static_cast<std::uint64_t>(n))) {
    ws.slot.assign(static_cast<std::size_t>(span), -1);
    std::vector<int>& slot = ws.slot;
    for (std::size_t i = 0; i < n; ++i) {
      if (key[i] >= span) throw std::invalid_argument("rank_keys: key out of its span");
      slot[key[i]] = 0;
    }
    for (std::uint64_t k = 0; k < span; ++k)
      if (slot[k] == 0) {
        slot[k] = static_cast<int>(out.unique.size());
        out.unique.push_back(k);
      }
    for (std::size_t i = 0; i < n; ++i) out.id[i] = slot[key[i]];
    return;
  }
  ws.key.assign(key.begin(), key.end());
  ws.rec.resize(n);
  for (std::size_t i = 0; i < n; ++i) ws.rec[i] = static_cast<int>(i);
  auto none = [] {};
  detail::radix_sort_pairs(ws.key, ws.rec, detail::bit_length(span - 1), none);
  for (std::size_t i = 0; i < n; ++i) {
    if (i == 0 || ws.key[i] != ws.key[i - 1]) out.unique.push_back(ws.key[i]);
    out.id[ws.rec[i]] = static_cast<int>(out.unique.size()) - 1;
  }
}

inline KeyRanks rank_keys(const std::vector<std::uint64_t>& key, std::uint64_t span) {
  KeyRanks out;
  RankWorkspace ws;
  rank_keys(key, span, out, ws);
  return out;
}

// Dense ids of the rows (base[i], cols[0][i], cols[1][i], ...), base ids in
// [0, n_base) (no base if `base` is empty) and column k in [0, radix[k]),
// in lexicographic order of the rows. Sets n_ids.
inline std::vector<int> dense_row_ids(std::size_t n, const std::vector<int>& base, int n_base,
                                      const std::vector<const int*>& cols, const std::vector<std::int64_t>& radix,
                                      int& n_ids) {
  if (cols.size() != radix.size() || (!base.empty() && base.size() != n))
    throw std::invalid_argument("dense_row_ids: malformed columns");
  for (std::int64_t r : radix)
    if (r < 1) throw std::invalid_argument("dense_row_ids: radix below 1");
  std::vector<int> id = base.empty() ? std::vector<int>(n, 0) : base;
  std::uint64_t n_id = base.empty() ? 1 : static_cast<std::uint64_t>(n_base < 1 ? 1 : n_base);
  const std::uint64_t limit = std::uint64_t(1) << 62;
  std::vector<std::uint64_t> key(n);
  n_ids = n == 0 ? 0 : static_cast<int>(n_id);
  std::size_t k = 0;
  do {
    // pack as many columns as fit beside the current ids
    std::uint64_t span = n_id;
    std::size_t end = k;
    while (end < cols.size() && span <= limit / static_cast<std::uint64_t>(radix[end])) {
      span *= static_cast<std::uint64_t>(radix[end]);
      ++end;
    }
    if (end == k && k < cols.size()) throw std::invalid_argument("dense_row_ids: a column's radix exceeds 2^62");
    for (std::size_t i = 0; i < n; ++i) {
      std::uint64_t x = static_cast<std::uint64_t>(id[i]);
      for (std::size_t c = k; c < end; ++c)
        x = x * static_cast<std::uint64_t>(radix[c]) + static_cast<std::uint64_t>(cols[c][i]);
      key[i] = x;
    }
    KeyRanks kr = rank_keys(key, span);
    id.swap(kr.id);
    n_ids = kr.size();
    n_id = static_cast<std::uint64_t>(n_ids < 1 ? 1 : n_ids);
    k = end;
  } while (k < cols.size());
  return id;
}

}  // namespace sdcRisk

#endif  // SDCRISK_DENSE_IDS_HPP
