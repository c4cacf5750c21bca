// Large buffers: a hint to the operating system to back them with huge pages.
//
// Plain C++17, no R headers. On machines where mapping fresh memory is slow
// (virtual machines: each 4 KB page costs a fault of several microseconds
// when first written), writing a new 40 MB vector costs more than the work
// done in it; 2 MB pages make that 512 times fewer faults. The hint is given
// for the whole 2 MB pages inside [p, p + bytes) only (memory the caller
// owns), before the buffer is first written, and only for buffers of at
// least 8 MB. It changes no value: where it is not supported (not Linux, or
// transparent huge pages off) it does nothing, and its errors are ignored.
#ifndef SDCRISK_MEMORY_HPP
#define SDCRISK_MEMORY_HPP

#include <cstddef>
#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace sdcRisk {

inline void advise_huge_pages(void* p, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t huge = std::uintptr_t(1) << 21;
  if (p == nullptr || bytes < 4 * huge) return;
  const std::uintptr_t from = (reinterpret_cast<std::uintptr_t>(p) + huge - 1) & ~(huge - 1);
  const std::uintptr_t to = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~(huge - 1);
  if (to > from) (void)madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

}  // namespace sdcRisk

#endif  // SDCRISK_MEMORY_HPP
