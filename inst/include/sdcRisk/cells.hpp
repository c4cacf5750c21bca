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
  // the mixed-radix index of each cell, and the radix of each key: the
  // codes of key k are decode(k, out) (cross_classify_into() leaves
  // cell_codes empty, so that a caller can decode into its own memory)
  std::vector<std::uint64_t> index_of_cell;
  std::vector<std::uint64_t> stride;
  std::vector<int> nlevels;
  void decode(std::size_t k, int* out) const {
    const std::uint64_t s = stride[k], l = static_cast<std::uint64_t>(nlevels[k]);
    for (std::size_t r = 0; r < index_of_cell.size(); ++r)
      out[r] = static_cast<int>((index_of_cell[r] / s) % l) + 1;
  }
};

namespace detail {

// The fingerprint of the records' key codes (key_fingerprint() below, and
// the same value folded into the cross-classifications' first pass).
// Each record's codes become one 64-bit word, w <- mix((w ^ code) * K)
// over its keys in order (a missing code counts as 0); the words of
// records i with i % 4 == l are chained in lane l by h <- mix((h ^ w) * K),
// and the lanes are combined at the end. Records' words do not depend on
// each other and four chains run side by side, so the processor is not
// kept waiting on one chain of multiplications. Every step is a bijection
// of the state it updates (xor with a value, multiplication by an odd
// constant, xorshift), and injective in the value xored in: so data that
// differ from the fingerprinted data in one code of one record always give
// another fingerprint; other differences collide with a probability of the
// order of 2^-64.
class Fingerprint {
 public:
  explicit Fingerprint(std::size_t n) {
    const std::uint64_t seed = 0x9E3779B97F4A7C15ULL ^ (static_cast<std::uint64_t>(n) * 0xBF58476D1CE4E5B9ULL);
    for (int l = 0; l < 4; ++l) lane_[l] = seed + static_cast<std::uint64_t>(l) * 0xD6E8FEB86659FD93ULL;
  }
  // A record's word before its first key, and after one more key's code.
  static constexpr std::uint64_t word_seed() { return 0x2545F4914F6CDD1DULL; }
  static std::uint64_t word_step(std::uint64_t w, int c) {
    step(w, c < 1 ? 0 : static_cast<std::uint64_t>(c));
    return w;
  }
  // The word of record i.
  void add(std::size_t i, std::uint64_t word) { step(lane_[i & 3], word); }
  // The words of records first, first + 1, ..., first + len - 1, where
  // first is a multiple of 4.
  void add_run(std::size_t first, const std::uint64_t* word, std::size_t len) {
    std::size_t j = 0;
    std::uint64_t h0 = lane_[0], h1 = lane_[1], h2 = lane_[2], h3 = lane_[3];
    for (; j + 4 <= len; j += 4) {
      step(h0, word[j]);
      step(h1, word[j + 1]);
      step(h2, word[j + 2]);
      step(h3, word[j + 3]);
    }
    lane_[0] = h0, lane_[1] = h1, lane_[2] = h2, lane_[3] = h3;
    for (; j < len; ++j) add(first + j, word[j]);
  }
  std::uint64_t value() const {
    std::uint64_t h = lane_[0];
    for (int l = 1; l < 4; ++l) step(h, lane_[l]);
    return h;
  }

 private:
  static void step(std::uint64_t& h, std::uint64_t word) {
    h = (h ^ word) * 0xFF51AFD7ED558CCDULL;
    h ^= h >> 31;
  }
  std::uint64_t lane_[4];
};

// Record i's code of a key stored with an offset (the code is the stored
// value less `off`, so that a key of whole numbers needs no shifted copy);
// the smallest int (R's NA) stays missing.
inline int key_code(const int* col, std::size_t i, int off) {
  const int c = col[i];
  return (off == 0 || c == std::numeric_limits<int>::min()) ? c : c - off;
}

// The mixed-radix index of record i's cell, or false if a key is missing.
inline bool cell_index(const std::vector<const int*>& codes, const std::vector<int>& off,
                       const std::vector<int>& nlevels, const std::vector<std::uint64_t>& stride,
                       std::size_t i, std::uint64_t& idx) {
  idx = 0;
  bool missing = false;
  for (std::size_t k = 0; k < codes.size(); ++k) {
    const int c = key_code(codes[k], i, off[k]);
    if (c < 1) { missing = true; continue; }
    if (c > nlevels[k]) throw std::invalid_argument("cross_classify: code above its number of levels");
    idx += static_cast<std::uint64_t>(c - 1) * stride[k];
  }
  return !missing;
}

// The first pass of the cross-classifications below: the fingerprint of
// every record's codes (returned) and mark(i, index) of every record i with
// no missing key (the others counted as left out, with mark(i, kMissing));
// each code is read once.
constexpr std::uint64_t kMissing = ~std::uint64_t(0);
template <class Mark, class Interrupt>
std::uint64_t mark_records(const std::vector<const int*>& codes, const std::vector<int>& off,
                           const std::vector<int>& nlevels, const std::vector<std::uint64_t>& stride,
                           std::size_t n, CellTable& out, Mark&& mark, Interrupt& interrupt) {
  const std::size_t nkeys = codes.size();
  Fingerprint fp(n);
  for (std::size_t i = 0; i < n; ++i) {
    if ((i & 0x3FFFF) == 0 && i > 0) interrupt();
    std::uint64_t word = Fingerprint::word_seed(), idx = 0;
    bool missing = false;
    for (std::size_t k = 0; k < nkeys; ++k) {
      const int c = key_code(codes[k], i, off[k]);
      word = Fingerprint::word_step(word, c);
      if (c < 1) {
        missing = true;
        continue;
      }
      if (c > nlevels[k]) throw std::invalid_argument("cross_classify: code above its number of levels");
      idx += static_cast<std::uint64_t>(c - 1) * stride[k];
    }
    fp.add(i, word);
    if (!missing) {
      mark(i, idx);
    } else {
      ++out.n_excluded;
      mark(i, kMissing);
    }
  }
  return fp.value();
}

inline int popcount64(std::uint64_t x) {
  x = x - ((x >> 1) & 0x5555555555555555ULL);
  x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
  x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
  return static_cast<int>((x * 0x0101010101010101ULL) >> 56);
}

// Cells by a bitmap of the index space: one pass marks the index of every
// record's cell, a prefix count of the marks numbers the cells in index
// order, and a second pass gives each record the rank of its index (the
// marks before it). No array per record besides the result; the bitmap
// and its prefix counts take 12 bytes per 64 indices, so the index space
// must be at most a few dozen times the records.
template <class Interrupt>
void classify_bitmap(const std::vector<const int*>& codes, const std::vector<int>& off,
                     const std::vector<int>& nlevels,
                     const std::vector<std::uint64_t>& stride, std::uint64_t total, std::size_t n,
                     CellTable& out, int* cell_of_record, std::vector<std::uint64_t>& index_of_cell,
                     std::uint64_t& fingerprint, Interrupt& interrupt) {
  const std::size_t words = static_cast<std::size_t>((total + 63) / 64);
  std::vector<std::uint64_t> bits(words, 0);
  // where the index space has fewer than 2^32 - 1 indices, the first pass
  // keeps each record's index in its slot of the result (missing: all
  // ones), so that the second reads 4 bytes per record instead of every key
  const bool keep = total < 0xFFFFFFFFULL;
  std::uint32_t* kept = reinterpret_cast<std::uint32_t*>(cell_of_record);
  fingerprint = mark_records(
      codes, off, nlevels, stride, n, out,
      [&bits, keep, kept](std::size_t i, std::uint64_t idx) {
        if (keep) kept[i] = idx == kMissing ? 0xFFFFFFFFU : static_cast<std::uint32_t>(idx);
        if (idx != kMissing) bits[idx >> 6] |= std::uint64_t(1) << (idx & 63);
      },
      interrupt);
  std::uint64_t idx = 0;
  std::vector<std::uint32_t> before(words);
  std::uint32_t ncell = 0;
  for (std::size_t w = 0; w < words; ++w) {
    before[w] = ncell;
    ncell += static_cast<std::uint32_t>(popcount64(bits[w]));
  }
  index_of_cell.reserve(ncell);
  for (std::size_t w = 0; w < words; ++w) {
    std::uint64_t m = bits[w];
    while (m != 0) {
#if defined(__GNUC__) || defined(__clang__)
      const int b = __builtin_ctzll(m);
#else
      int b = 0;
      while (((m >> b) & 1U) == 0) ++b;
#endif
      index_of_cell.push_back((static_cast<std::uint64_t>(w) << 6) + static_cast<std::uint64_t>(b));
      m &= m - 1;
    }
  }
  out.counts.assign(ncell, 0);
  for (std::size_t i = 0; i < n; ++i) {
    if ((i & 0x3FFFF) == 0 && i > 0) interrupt();
    if (keep) {
      const std::uint32_t k = kept[i];
      if (k == 0xFFFFFFFFU) {
        cell_of_record[i] = -1;
        continue;
      }
      idx = k;
    } else if (!cell_index(codes, off, nlevels, stride, i, idx)) {
      cell_of_record[i] = -1;
      continue;
    }
    const std::size_t w = static_cast<std::size_t>(idx >> 6);
    const std::uint64_t below = (std::uint64_t(1) << (idx & 63)) - 1;
    const int cell = static_cast<int>(before[w]) + popcount64(bits[w] & below);
    cell_of_record[i] = cell;
    ++out.counts[cell];
  }
}

// Cells by buckets: one counting pass on the high bits of the index, one
// pass that files each record (its number and the low 16 bits of its
// index) under its bucket, and, bucket by bucket, a table over the low bits
// (256 KB, in cache) or a sort of the bucket's few records. Two arrays of
// 4 + 2 bytes per record, where a radix sort of (key, record) pairs moves
// 16 bytes per record and pass through two more such arrays: on machines
// where fresh memory is slow to map, that is most of the time. The index
// space must be at most 2^16 buckets of 2^16 (or a few per record).
template <class Interrupt>
void classify_buckets(const std::vector<const int*>& codes, const std::vector<int>& off,
                      const std::vector<int>& nlevels,
                      const std::vector<std::uint64_t>& stride, int bits, std::size_t n, CellTable& out,
                      int* cell_of_record, std::vector<std::uint64_t>& index_of_cell,
                      std::uint64_t& fingerprint, Interrupt& interrupt) {
  const int low_bits = std::min(bits, 16);
  const int high_bits = bits - low_bits;
  const std::size_t nbucket = std::size_t(1) << high_bits;
  const std::size_t span = std::size_t(1) << low_bits;
  const std::uint64_t low_mask = span - 1;
  std::vector<std::uint32_t> start(nbucket + 1, 0);
  fingerprint = mark_records(
      codes, off, nlevels, stride, n, out,
      [&start, low_bits](std::size_t, std::uint64_t idx) {
        if (idx != kMissing) ++start[(idx >> low_bits) + 1];
      },
      interrupt);
  std::uint64_t idx = 0;
  for (std::size_t b = 0; b < nbucket; ++b) start[b + 1] += start[b];
  const std::size_t m = start[nbucket];
  std::vector<int> rec(m);
  std::vector<std::uint16_t> low(m);
  {
    std::vector<std::uint32_t> next(start.begin(), start.end() - 1);
    for (std::size_t i = 0; i < n; ++i) {
      if ((i & 0x3FFFF) == 0 && i > 0) interrupt();
      if (!cell_index(codes, off, nlevels, stride, i, idx)) {
        cell_of_record[i] = -1;
        continue;
      }
      const std::uint32_t pos = next[idx >> low_bits]++;
      rec[pos] = static_cast<int>(i);
      low[pos] = static_cast<std::uint16_t>(idx & low_mask);
    }
  }
  std::vector<int> slot(span, -1);
  std::vector<std::uint64_t> sorted;
  for (std::size_t b = 0; b < nbucket; ++b) {
    const std::size_t from = start[b], to = start[b + 1];
    if (from == to) continue;
    if ((b & 0xFF) == 0) interrupt();
    const std::uint64_t base = static_cast<std::uint64_t>(b) << low_bits;
    if ((to - from) * 8 >= span) {
      // dense bucket: mark, number in order, assign, clear
      for (std::size_t p = from; p < to; ++p) slot[low[p]] = 0;
      for (std::size_t k = 0; k < span; ++k) {
        if (slot[k] != 0) continue;
        slot[k] = static_cast<int>(out.counts.size());
        out.counts.push_back(0);
        index_of_cell.push_back(base + k);
      }
      for (std::size_t p = from; p < to; ++p) {
        const int cell = slot[low[p]];
        cell_of_record[rec[p]] = cell;
        ++out.counts[cell];
      }
      for (std::size_t p = from; p < to; ++p) slot[low[p]] = -1;
    } else {
      // sparse bucket: sort its (low bits, position) pairs
      sorted.resize(to - from);
      for (std::size_t p = from; p < to; ++p)
        sorted[p - from] = (static_cast<std::uint64_t>(low[p]) << 32) | static_cast<std::uint64_t>(p);
      std::sort(sorted.begin(), sorted.end());
      std::uint64_t prev = ~std::uint64_t(0);
      for (const std::uint64_t s : sorted) {
        const std::uint64_t l = s >> 32;
        if (l != prev) {
          out.counts.push_back(0);
          index_of_cell.push_back(base + l);
          prev = l;
        }
        cell_of_record[rec[s & 0xFFFFFFFFULL]] = static_cast<int>(out.counts.size()) - 1;
        ++out.counts.back();
      }
    }
  }
}

// Cells by an LSD radix sort of (index, record) pairs, for index spaces too
// large for buckets.
template <class Key, class Interrupt>
void classify_with(const std::vector<const int*>& codes, const std::vector<int>& off,
                   const std::vector<int>& nlevels,
                   const std::vector<std::uint64_t>& stride, int bits, std::size_t n,
                   CellTable& out, int* cell_of_record, std::vector<std::uint64_t>& index_of_cell,
                   Interrupt& interrupt) {
  std::vector<Key> key;
  std::vector<int> rec;
  key.reserve(n);
  rec.reserve(n);
  std::uint64_t idx = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if ((i & 0x3FFFF) == 0 && i > 0) interrupt();
    cell_of_record[i] = -1;
    if (!cell_index(codes, off, nlevels, stride, i, idx)) { ++out.n_excluded; continue; }
    key.push_back(static_cast<Key>(idx));
    rec.push_back(static_cast<int>(i));
  }
  radix_sort_pairs(key, rec, bits, interrupt);
  // Runs of equal keys are the cells, already in lexicographic order.
  for (std::size_t i = 0; i < key.size(); ++i) {
    if (i == 0 || key[i] != key[i - 1]) {
      index_of_cell.push_back(key[i]);
      out.counts.push_back(0);
    }
    ++out.counts.back();
    cell_of_record[rec[i]] = static_cast<int>(out.counts.size()) - 1;
  }
}

}  // namespace detail

// A 64-bit fingerprint of the key codes of every record, in record order
// (missing codes count as 0): one sequential pass, used to recognise the
// data a plan was built from without comparing records with cells.
// `offsets` (one per key, default none): the codes are the stored values
// less the offset (detail::key_code()).
// `nlevels` (optional): `*in_range` is set false if a code (other than the
// smallest int, R's NA) lies outside 1..nlevels[k], so that a caller can
// skip its own pass over the codes.
inline std::uint64_t key_fingerprint(const std::vector<const int*>& codes, std::size_t n,
                                     const std::vector<int>* offsets = nullptr,
                                     const std::vector<int>* nlevels = nullptr, bool* in_range = nullptr) {
  const std::size_t nkeys = codes.size();
  const std::vector<int> off = offsets ? *offsets : std::vector<int>(nkeys, 0);
  if (off.size() != nkeys) throw std::invalid_argument("key_fingerprint: offsets mismatch");
  if (nlevels && nlevels->size() != nkeys) throw std::invalid_argument("key_fingerprint: levels mismatch");
  // key by key over runs of records, so that the inner loops have no
  // branch and the words of a run are chained four at a time
  constexpr std::size_t run = 2048;
  std::uint64_t word[run];
  detail::Fingerprint fp(n);
  bool bad = false;
  constexpr int na = std::numeric_limits<int>::min();
  for (std::size_t first = 0; first < n; first += run) {
    const std::size_t len = std::min(run, n - first);
    std::fill(word, word + len, detail::Fingerprint::word_seed());
    for (std::size_t k = 0; k < nkeys; ++k) {
      const int* col = codes[k] + first;
      const int o = off[k];
      const int top = nlevels ? (*nlevels)[k] : std::numeric_limits<int>::max();
      for (std::size_t j = 0; j < len; ++j) {
        const int v = col[j];
        const int c = (o == 0 || v == na) ? v : v - o;
        bad |= v != na && (c < 1 || c > top);
        word[j] = detail::Fingerprint::word_step(word[j], c);
      }
    }
    fp.add_run(first, word, len);
  }
  if (in_range) *in_range = !(nlevels && bad);
  return fp.value();
}

// `codes[k]` points to n codes of key k with `nlevels[k]` levels.
// `interrupt()` is called every few hundred thousand records. The 0-based
// cell of every record (-1 if left out) is written to `cell_of_record` (n
// ints), `tab.cell_of_record` and `tab.cell_codes` are left empty (decode()
// gives the codes); `fingerprint`, if given, receives key_fingerprint() of
// the codes; `offsets`, if given, are subtracted from the stored codes
// (detail::key_code()).
template <class Interrupt>
CellTable cross_classify_into(const std::vector<const int*>& codes,
                              const std::vector<int>& nlevels, std::size_t n, int* cell_of_record,
                              Interrupt&& interrupt, std::uint64_t* fingerprint = nullptr,
                              const std::vector<int>* offsets = nullptr) {
  const std::size_t nkeys = codes.size();
  if (nkeys == 0 || nlevels.size() != nkeys)
    throw std::invalid_argument("cross_classify: no keys or levels mismatch");
  const std::vector<int> off = offsets ? *offsets : std::vector<int>(nkeys, 0);
  if (off.size() != nkeys) throw std::invalid_argument("cross_classify: offsets mismatch");
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
  int bits = 0;
  while (bits < 64 && (std::uint64_t(1) << bits) < total) ++bits;

  CellTable out;
  std::vector<std::uint64_t>& index_of_cell = out.index_of_cell;
  // capacity only: pages are mapped as cells are found
  index_of_cell.reserve(std::min<std::uint64_t>(total, n));
  out.counts.reserve(std::min<std::uint64_t>(total, n));
  const int high_bits = std::max(0, bits - 16);
  if (total <= 32 * static_cast<std::uint64_t>(std::max<std::size_t>(n, 2048))) {
    std::uint64_t h = 0;
    detail::classify_bitmap(codes, off, nlevels, stride, total, n, out, cell_of_record, index_of_cell, h, interrupt);
    if (fingerprint) *fingerprint = h;
  } else if (high_bits <= 16 || (std::uint64_t(1) << high_bits) <= static_cast<std::uint64_t>(n) / 4) {
    std::uint64_t h = 0;
    detail::classify_buckets(codes, off, nlevels, stride, bits, n, out, cell_of_record, index_of_cell, h, interrupt);
    if (fingerprint) *fingerprint = h;
  } else {
    if (fingerprint) *fingerprint = key_fingerprint(codes, n, &off);
    if (total <= std::numeric_limits<std::uint32_t>::max())
      detail::classify_with<std::uint32_t>(codes, off, nlevels, stride, bits, n, out, cell_of_record, index_of_cell,
                                           interrupt);
    else
      detail::classify_with<std::uint64_t>(codes, off, nlevels, stride, bits, n, out, cell_of_record, index_of_cell,
                                           interrupt);
  }

  out.stride = std::move(stride);
  out.nlevels = nlevels;
  return out;
}

// The same, with the records' cells in `tab.cell_of_record`.
template <class Interrupt>
CellTable cross_classify(const std::vector<const int*>& codes,
                         const std::vector<int>& nlevels, std::size_t n,
                         Interrupt&& interrupt) {
  std::vector<int> cell_of_record(n);
  CellTable out = cross_classify_into(codes, nlevels, n, cell_of_record.data(), interrupt);
  out.cell_of_record = std::move(cell_of_record);
  out.cell_codes.assign(codes.size(), std::vector<int>(out.counts.size()));
  for (std::size_t k = 0; k < codes.size(); ++k) out.decode(k, out.cell_codes[k].data());
  return out;
}

}  // namespace sdcRisk

#endif  // SDCRISK_CELLS_HPP
