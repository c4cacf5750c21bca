// Standalone test of the search box of the suppression heuristic, without R:
//   g++ -std=c++17 -O2 -I../../inst/include test_table_boxes.cpp -o build/test_table_boxes && build/test_table_boxes
// A table of two variables, `a` with a 3-level hierarchy (Total; G1, G2;
// a1, a2 under G1 and a3, a4 under G2) and `b` flat (Total; b1, b2, b3),
// every combination a cell. Checks: a box of unlimited budget is the whole
// table, the cell first; every box
// holds the cell, the product of its ancestors, and keeps its budget unless
// k is 1; a box is "whole" exactly when it is the whole table; the sibling
// chosen is the cheapest (a suppressed cell is free); the lookup of sorted
// keys gives the boxes of the dense one.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "sdcRisk/table_boxes.hpp"
#include "testutil.hpp"

namespace {

using testutil::Lcg;

// categories of a: 1 Total, 2 G1, 3 G2, 4 a1, 5 a2 (G1), 6 a3, 7 a4 (G2)
const std::vector<int> a_parent{0, 1, 1, 2, 2, 3, 3};
const std::vector<int> a_start{0, 2, 4, 6, 6, 6, 6, 6};
const std::vector<int> a_child{2, 3, 4, 5, 6, 7};
// categories of b: 1 Total, 2 b1, 3 b2, 4 b3
const std::vector<int> b_parent{0, 1, 1, 1};
const std::vector<int> b_start{0, 3, 3, 3, 3};
const std::vector<int> b_child{2, 3, 4};
const std::vector<double> mult{1, 7};
const int n_cell = 28;  // cell = (ca - 1) + 7 (cb - 1) + 1

struct Table {
  std::vector<int> dense;
  std::vector<double> keys;
  std::vector<int> key_cell;
  std::vector<int> supp;
  std::vector<double> w, up, dn;
};

Table make_table(Lcg& g) {
  Table t;
  for (int c = 1; c <= n_cell; ++c) t.dense.push_back(c);
  for (int c = 1; c <= n_cell; ++c) {
    t.keys.push_back(c - 1);
    t.key_cell.push_back(c);
    t.supp.push_back(g.below(4) == 0);
    t.w.push_back(1 + g.below(100));
    t.up.push_back(g.below(50));
    t.dn.push_back(g.below(50));
  }
  return t;
}

sdcRisk::BoxProblem problem(const Table& t, int ca, int cb, double target, bool dense) {
  sdcRisk::BoxProblem p;
  p.code = {ca, cb};
  p.vars.push_back({a_parent.data(), 7, a_start.data(), a_child.data()});
  p.vars.push_back({b_parent.data(), 4, b_start.data(), b_child.data()});
  p.lookup.mult = mult.data();
  p.lookup.n_var = 2;
  if (dense) {
    p.lookup.dense = t.dense.data();
    p.lookup.n_dense = t.dense.size();
  } else {
    p.lookup.keys = t.keys.data();
    p.lookup.key_cell = t.key_cell.data();
    p.lookup.n_keys = t.keys.size();
  }
  p.supp = t.supp.data();
  p.w = t.w.data();
  p.cap_up = t.up.data();
  p.cap_dn = t.dn.data();
  p.n_cell = n_cell;
  p.w_max = 100;
  p.t = target;
  return p;
}

int cell(int ca, int cb) { return (ca - 1) + 7 * (cb - 1) + 1; }
bool has(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }
double k0(double budget) { return std::max(1.0, std::floor(std::pow(budget, 0.5))); }

}  // namespace

int main() {
  auto check = [](bool ok, const char* what, int rep) {
    testutil::check(ok, std::string(what) + " (case " + std::to_string(rep) + ")");
  };
  Lcg g(11);
  const double inf = std::numeric_limits<double>::infinity();
  for (int rep = 0; rep < 300; ++rep) {
    const Table t = make_table(g);
    const int ca = 1 + g.below(7), cb = 1 + g.below(4);
    const double target = g.below(60);
    // unlimited budget: the whole table, the cell first (each variable's
    // categories in the order chosen, the first variable fastest)
    const sdcRisk::Box all = sdcRisk::search_box(problem(t, ca, cb, target, true), inf, inf, 0.9);
    std::vector<int> every = all.cells;
    std::sort(every.begin(), every.end());
    bool whole = all.whole && static_cast<int>(every.size()) == n_cell && all.cells[0] == cell(ca, cb);
    for (int c = 1; whole && c <= n_cell; ++c) whole = every[static_cast<std::size_t>(c - 1)] == c;
    check(whole, "unlimited box is not the whole table", rep);
    for (double budget : {1.0, 4.0, 6.0, 9.0, 12.0, 20.0, 28.0}) {
      const sdcRisk::Box box = sdcRisk::search_box(problem(t, ca, cb, target, true), budget, k0(budget), 0.9);
      const sdcRisk::Box sparse = sdcRisk::search_box(problem(t, ca, cb, target, false), budget, k0(budget), 0.9);
      check(box.cells == sparse.cells && box.whole == sparse.whole, "sorted keys differ from the dense lookup", rep);
      // the cell and the product of its ancestors
      std::vector<int> anc_a{ca}, anc_b{cb};
      for (int u = ca; a_parent[static_cast<std::size_t>(u - 1)]; u = a_parent[static_cast<std::size_t>(u - 1)])
        anc_a.push_back(a_parent[static_cast<std::size_t>(u - 1)]);
      if (cb != 1) anc_b.push_back(1);
      bool holds = true;
      for (int x : anc_a)
        for (int y : anc_b) holds = holds && has(box.cells, cell(x, y));
      check(holds, "box misses the cell or an ancestor", rep);
      // the budget, unless k is 1 (then the smallest box)
      const sdcRisk::Box smallest = sdcRisk::search_box(problem(t, ca, cb, target, true), 1.0, 1.0, 0.9);
      check(static_cast<double>(box.cells.size()) <= std::max(budget, static_cast<double>(smallest.cells.size())),
            "box exceeds its budget", rep);
      check(box.whole == (static_cast<int>(box.cells.size()) == n_cell), "whole disagrees with the box", rep);
      std::vector<int> sorted = box.cells;
      std::sort(sorted.begin(), sorted.end());
      check(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(), "a cell twice", rep);
    }
  }
  // the cheapest sibling: cell (a1, b1), one other category of b, the
  // suppressed (a1, b3) free where (a1, b2) costs its value
  {
    Lcg h(5);
    Table t = make_table(h);
    for (int c = 0; c < n_cell; ++c) {
      t.supp[static_cast<std::size_t>(c)] = 0;
      t.up[static_cast<std::size_t>(c)] = t.dn[static_cast<std::size_t>(c)] = 100;
    }
    t.supp[static_cast<std::size_t>(cell(4, 4) - 1)] = 1;
    const sdcRisk::Box box = sdcRisk::search_box(problem(t, 4, 2, 10, true), 1.0, 1.0, 0.9);
    check(has(box.cells, cell(4, 4)) && !has(box.cells, cell(4, 3)), "the suppressed sibling is not chosen", -1);
    // and a cell that cannot absorb the deviation comes last
    t.supp[static_cast<std::size_t>(cell(4, 4) - 1)] = 0;
    t.w[static_cast<std::size_t>(cell(4, 3) - 1)] = 1;
    t.w[static_cast<std::size_t>(cell(4, 4) - 1)] = 50;
    t.up[static_cast<std::size_t>(cell(4, 3) - 1)] = t.dn[static_cast<std::size_t>(cell(4, 3) - 1)] = 1;
    const sdcRisk::Box box2 = sdcRisk::search_box(problem(t, 4, 2, 10, true), 1.0, 1.0, 0.9);
    check(has(box2.cells, cell(4, 4)) && !has(box2.cells, cell(4, 3)), "a cell too small for t is chosen first", -1);
  }
  return testutil::report("test_table_boxes");
}
