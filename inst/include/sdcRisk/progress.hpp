// Progress and interrupts of long loops.
//
// Every long computation of the core takes one callback from its caller
// (the R glue passes a lambda, as glmnet does) and calls it now and then,
// every few thousand units of work. The callback may throw to interrupt
// the computation (the glue checks for a user interrupt there); the core
// holds no resource that a throw would leak.
//
// Two shapes are accepted, so that a caller without a progress bar stays a
// plain lambda:
//   f()                 "still working": check for an interrupt;
//   f(double fraction)  the same, and the share of the work done so far, in
//                       [0, 1] and non-decreasing within one computation
//                       (an estimate where the total is not known in
//                       advance; 1 is reported once, at the end).
#ifndef SDCRISK_PROGRESS_HPP
#define SDCRISK_PROGRESS_HPP

#include <algorithm>
#include <type_traits>

namespace sdcRisk {

template <class F>
void report_progress(F& f, double fraction) {
  if constexpr (std::is_invocable_v<F&, double>) {
    f(std::min(1.0, std::max(0.0, fraction)));
  } else {
    f();
  }
}

// Reports fractions that never go down (an estimate of the total that grows
// must not move a bar backwards).
template <class F>
class ProgressMeter {
 public:
  explicit ProgressMeter(F& f) : f_(f) {}
  void operator()(double fraction) {
    last_ = std::max(last_, std::min(1.0, fraction));
    report_progress(f_, last_);
  }
  void done() { (*this)(1.0); }

 private:
  F& f_;
  double last_ = 0.0;
};

}  // namespace sdcRisk

#endif  // SDCRISK_PROGRESS_HPP
