// The exceptions the core throws, so that the glue can translate each kind
// into its own classed R condition in one place:
//
//   sdcRisk::underflow_error   a probability the input implies is below the
//                              smallest double (a product of transition
//                              probabilities, say): the input is valid but
//                              the exact answer is out of a double's reach,
//                              so the core refuses rather than round an
//                              event of positive probability to an
//                              impossible one. Derived from std::domain_error.
//   std::invalid_argument      a broken internal assumption: the R side
//                              validates every input before the core sees
//                              it, so this is a bug (or an object edited past
//                              its validator), never a user error.
//
// Nothing else is thrown on purpose; std::bad_alloc may escape from any
// allocation.
#ifndef SDCRISK_ERRORS_HPP
#define SDCRISK_ERRORS_HPP

#include <stdexcept>
#include <string>

namespace sdcRisk {

class underflow_error : public std::domain_error {
 public:
  explicit underflow_error(const std::string& what) : std::domain_error(what) {}
  explicit underflow_error(const char* what) : std::domain_error(what) {}
};

// A broken internal assumption, with where it was found.
[[noreturn]] inline void precondition_failed(const char* what, const char* file, int line) {
  throw std::invalid_argument(std::string("precondition failed: ") + what + " (" + file + ":" +
                              std::to_string(line) + ")");
}

}  // namespace sdcRisk

#endif  // SDCRISK_ERRORS_HPP
