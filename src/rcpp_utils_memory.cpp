// Memory the C library keeps after R has freed it. A long loop of small
// programs (the heuristic of protect_table()) frees many vectors between
// its allocations; glibc's malloc keeps the freed pages of its heap as its
// own, so the process grows far beyond what it uses (on the 85,328-cell
// table of bench/bench_suppress_large.R, each part's process held 826 MB
// of which 185 MB were in use). malloc_trim() hands the free pages back.
#include <Rcpp.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

// Returns the free pages of the C library's heap to the system where the
// C library can (glibc); TRUE if it could, FALSE elsewhere (nothing done).
// [[Rcpp::export]]
bool cpp_release_free_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);
  return true;
#else
  return false;
#endif
}
