// Preconditions of the core, checked in debug builds.
//
// The R wrapper validates every input before it reaches the core; these
// checks catch what slips through (an edited object, a broken internal
// assumption) as std::invalid_argument (errors.hpp) instead of an
// out-of-range access. They are compiled in when SDCRISK_DEBUG is defined
// (the standalone tests in tests/cpp, with and without sanitizers) and cost
// nothing otherwise.
#ifndef SDCRISK_ASSERT_HPP
#define SDCRISK_ASSERT_HPP

#include "errors.hpp"

#ifdef SDCRISK_DEBUG
#define SDCRISK_ASSERT(cond, what) \
  do {                                                                      \
    if (!(cond)) ::sdcRisk::precondition_failed(what, __FILE__, __LINE__); \
  } while (0)
#else
#define SDCRISK_ASSERT(cond, what) \
  do {                             \
  } while (0)
#endif

#endif  // SDCRISK_ASSERT_HPP
