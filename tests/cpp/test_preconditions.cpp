// Standalone test of the core's preconditions, without R:
//   g++ -std=c++17 -O1 -I../../inst/include test_preconditions.cpp -o build/test_preconditions
// Debug builds (SDCRISK_DEBUG, defined here) check every plan that enters the
// core: an edited plan throws std::invalid_argument from every entry point
// instead of reading out of range. Built with sanitizers as well, a missed
// check shows up as an AddressSanitizer report.
#ifndef SDCRISK_DEBUG
#define SDCRISK_DEBUG
#endif
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "testutil.hpp"

namespace {

using testutil::check;
using testutil::throws;

struct Lcg : testutil::Lcg {
  Lcg() : testutil::Lcg(99) {}
};

// A valid plan: an IFPR block over cells 0-2 and a matrix block over 3-4.
struct Plan : testutil::BlockPlan {
  Plan() : testutil::BlockPlan{{1, 2, 1, 3, 5}, {0, 3, 5}, {0, 1, 2, 3, 4}, {0.8, std::nan("")}, {0.7, 0.3, 0.1, 0.9}, {-1, 0}} {}
};

// Every entry point that takes a plan must reject it.
void rejected_everywhere(const Plan& p, const std::string& what) {
  const sdcRisk::PlanView v = p.view();
  std::vector<int> rec = {0, 1, 1, 2};
  Lcg rng;
  check(throws([&] { sdcRisk::check_plan(v); }), what + ": check_plan");
  check(throws([&] { sdcRisk::pram_draw(v, rec.data(), rec.size(), rng, [] {}); }), what + ": pram_draw");
  check(throws([&] { sdcRisk::cell_risk(v, {0}, {1}, [] {}); }), what + ": cell_risk");
  check(throws([&] { sdcRisk::max_risk(v, sdcRisk::Goal::AllMatches, [] {}); }), what + ": max_risk");
  sdcRisk::SimulationOptions opt;
  opt.reps = 2;
  check(throws([&] { sdcRisk::simulate_release(v, opt, rng, [] {}); }), what + ": simulate_release");
}

}  // namespace

int main() {
  {
    Plan p;
    check(!throws([&] { sdcRisk::check_plan(p.view()); }), "a valid plan passes");
  }
  { Plan p; p.counts[1] = 0; rejected_everywhere(p, "count edited to 0"); }
  { Plan p; p.counts[0] = -5; rejected_everywhere(p, "negative count"); }
  { Plan p; p.cells[1] = 998; rejected_everywhere(p, "cell id out of range"); }
  { Plan p; p.cells[1] = -3; rejected_everywhere(p, "negative cell id"); }
  { Plan p; p.cells[2] = 0; rejected_everywhere(p, "cell in two places"); }
  { Plan p; p.start = {0, 1, 5}; rejected_everywhere(p, "block of one cell"); }
  { Plan p; p.start = {0, 3, 7}; rejected_everywhere(p, "block past the cells"); }
  { Plan p; p.theta[0] = 1.5; rejected_everywhere(p, "theta above a count"); }
  { Plan p; p.theta[0] = std::nan(""); p.mstart[0] = -1; rejected_everywhere(p, "IFPR block without theta"); }
  { Plan p; p.theta[0] = -0.1; rejected_everywhere(p, "negative theta"); }
  { Plan p; p.mat[2] = std::nan(""); rejected_everywhere(p, "NaN matrix entry"); }
  { Plan p; p.mat[0] = 1.7; rejected_everywhere(p, "matrix entry above 1"); }

  // a record whose cell id is past the plan's cells
  {
    Plan p;
    const sdcRisk::PlanView v = p.view();
    std::vector<int> rec = {0, 1, 999};
    Lcg rng;
    check(throws([&] { sdcRisk::pram_draw(v, rec.data(), rec.size(), rng, [] {}); }),
          "pram_draw: record cell id out of range");
  }
  // the simulator's own target check
  {
    Plan p;
    Lcg rng;
    sdcRisk::SimulationOptions opt;
    opt.target = 5;
    check(throws([&] { sdcRisk::simulate_release(p.view(), opt, rng, [] {}); }), "simulate: target out of range");
  }

  return testutil::report("test_preconditions");
}
