# The policy numbers of the table side: every threshold, limit and budget of
# the suppression search (protect_table(), protect_tables()), its clean-up,
# improvement and optimal method, and of the exact audit (audit_table()),
# in one place. Each says what measurement chose it; where none is
# recorded, it says so. "The bench tables" are those of
# bench/bench_suppress.R (bench/README.md, "Secondary suppression head to
# head"): table 1 (3,049 cells), 2 (3,179), 5 (4,022, hierarchical), 6
# (11,724) and 7 (106,636). The default `box = 2000` of protect_table()
# stays in its signature, where users read it: on table 7, when the
# heuristic was written, it took 213 s, and 26 s with `box = 500` at the
# price of more suppression (NEWS, "Protecting a table"); 2,000 itself was
# chosen by hand.

# --- Tolerances ------------------------------------------------------------

# Relative tolerance of every comparison of a cell with its interval or its
# protection level (the cell's tolerance is audit_tolerance * (1 + |value|)),
# and of a witness table's residuals; documented in ?audit_table. Chosen by
# hand for double-precision solvers; not measured.
audit_tolerance <- 1e-7

# Relative difference up to which a margin equals the sum of its cells, and
# linked tables agree on a shared cell (rounding of the totals only).
# Chosen by hand; not measured.
additivity_tolerance <- 1e-9

# --- The exact audit (R/table-audit.R) -------------------------------------

# At most this many passes of relation_bounds(), which stops earlier when no
# bound moves by more than relation_bound_moved (relative). Propagating
# until nothing moves, instead of one pass, took the 11,724-cell bench table
# from 761 to 635 programs with the same intervals (commit b9af911); every
# bound is valid after any pass, so the cap only limits work. The cap of 20
# and the 1e-9 were chosen by hand; not measured.
audit_relation_passes <- 20L
relation_bound_moved <- 1e-9

# Components of at least this many suppressed cells (columns) solve by
# HiGHS' interior point method: on the 19,229-column component of bench
# table 7 one batch program took 5.0 s by the interior point method against
# 2.8 minutes by the primal simplex and 4.1 by the dual simplex, and a cold
# start by the simplex 35-39 s against 8 s (bench/README.md, "Exact
# certificate at 106,636 cells"), while on small components the simplex
# from the previous basis takes about 24 ms a program (11,724-cell table,
# table-lp.R). Where between the two the method should change was not
# measured: 5,000 was chosen by hand. The option `sdcRisk.audit_ipm_cols` (undocumented) lets
# the tests take that path on small tables.
audit_ipm_cols <- 5000L

# The simplex iterations allowed to a single program of a large component
# after the first: max(audit_iterations, columns). On bench table 7's
# component single programs from the previous vertex took 0.1 to 11 s and
# one more than 3 minutes, where the interior point method solves a program
# from scratch in 5 to 10 s (the first batch by the simplex: 135,000
# iterations in 3 minutes); with this limit two of its 54 single programs
# went to the interior point method, in the change that took the whole
# certificate to 7.6 minutes from more than 28 (commit bf902d4). The form of
# the limit was chosen by hand from these timings; no other limit is
# recorded as measured.
audit_iterations <- 10000L

# Batch programs (one optimum settling many ends of intervals at once) run
# while at least audit_batch_min_open ends are open, and go on while each
# settles at least max(audit_batch_settle_ipm (interior point) or
# audit_batch_settle_simplex (simplex), audit_batch_settle_share * open
# ends). On bench table 7 a batch by the interior point method cost 5 to
# 10 s and a single program by the simplex from a near vertex 1.3 s on
# average, so a batch must settle several ends to pay; packed batches
# settled 1,579 of 1,627 ends in the first program there (bench/README.md).
# The numbers 4, 8, 2 and 5% were chosen by hand from these timings; not
# measured against others.
audit_batch_min_open <- 4L
audit_batch_settle_ipm <- 8
audit_batch_settle_simplex <- 2
audit_batch_settle_share <- 0.05

# Batch programs, and every program of a large component, bound each cell
# within audit_bound_factor times the table's total absolute value (plus 1):
# the interior point method declared the program of a bounded cell of bench
# table 7 infeasible with infinite bounds and solved it with finite ones
# (commit bf902d4). An optimum within audit_added_bound_near (relative) of
# such an added bound is solved again without it. Both numbers were chosen
# by hand; not measured.
audit_bound_factor <- 10
audit_added_bound_near <- 1e-6

# The box of the small programs that decide an audit's protection
# (intervals = "none") on components of the interior point method
# (audit_ipm_cols cells and more) before the component's own
# (local_witnesses()): at most this many cells around the target, of which
# the suppressed ones move. protect_table()'s default box, so that the
# witnesses its heuristic found are within reach. 300 gave the same number
# of programs and open ends on the 10^4-cell table of
# bench/bench_suppress_large.R (its boxes are smaller); chosen by hand.
audit_local_box <- 2000

# On sets of at least audit_local_grow_cols suppressed cells, the ends the
# small programs leave open get boxes enlarged suppress_box_growth-fold up
# to audit_local_box_max cells before any program over the whole set: on
# the 10^4-cell table of bench/bench_suppress_large.R (a set of 9,670
# cells) that took the certificate from 24 to 52 CPU s (a batch program of
# the whole set by the interior point method: 1.1 s), on its 10^5-cell
# table (72,306 cells) one such batch program took about 4 minutes. The
# threshold between the two was chosen by hand.
audit_local_grow_cols <- 20000L
audit_local_box_max <- 8000

# The optimal tables kept per component for the respondents' audits of the
# same pattern (each a witness for a respondent whose bounds it keeps): the
# first ones of the outsider's audit (every one of its tables on the
# 11,724-cell bench table: 411 tables of 2,123 cells, 7 MB), as long as
# they hold at most audit_shared_values numbers (40 MB). Chosen by hand.
audit_shared_values <- 5e6

# The optimal tables of earlier patterns' programs kept for later patterns
# (reset_lp_cache()): the newest ones, as long as they hold at most
# audit_pool_values numbers (1.6 MB; about 300 tables of the 668-cell ACS
# table's largest component). Five times as many saved 2 of its 2,873
# programs and no time. Chosen by hand.
audit_pool_values <- 2e5

# --- The suppression search (R/table-suppress.R) ---------------------------

# The box of a witness program: at least suppress_box_min cells, a box with
# no witness enlarged suppress_box_growth-fold (both documented in
# ?protect_table), and its number of categories per variable lowered by at
# least the factor suppress_box_shrink while the box exceeds its budget.
# Chosen by hand when the heuristic was written (commit 5379a6a); not
# measured.
suppress_box_min <- 4
suppress_box_growth <- 4
suppress_box_shrink <- 0.9

# A box whose one-sided program has no witness gets the cells that break
# the program's certificate of infeasibility (box_witness(), ray_cells())
# at most this many times before the next, larger box. Chosen by hand; see
# bench/README.md for the measurements on the large tables.
suppress_ray_rounds <- 20

# ... from the box of this many times the `box` budget on (smaller boxes
# grow suppress_box_growth-fold, which finds cheaper witnesses).
suppress_ray_budget <- 4

# Dual ray entries (and gains) below this share of the largest are
# rounding. Chosen by hand; not measured.
ray_tolerance <- 1e-9

# A witness program reuses the model of an earlier one when its cells lie
# in that model's and are at least this share of them (deviation_solve()):
# a program of a few cells in a model of thousands takes longer from the
# kept basis than in a model of its own (on the 3,049-cell bench table 1,
# the whole table's model for boxes of 100 to 700 cells made the pattern
# 40% slower, 9.3 CPU s against 6.7; on the 10,994-cell table of
# bench_suppress_large.R, reuse without this limit took 109 CPU s against
# 10). With it, both are as fast as before or faster. Chosen by hand,
# and measured while the kept model started each program from the last
# optimal basis (before deviation_warm below); not measured again since.
deviation_reuse_share <- 0.5
# ... and solves it from HiGHS' slack basis, not from the earlier
# program's optimal basis (lp_session()'s `warm`; the option
# sdcRisk.deviation_warm, undocumented, lets the tests and the bench
# compare). The programs of consecutive sides (another cell, other costs
# and bounds) took about as many dual simplex iterations from either
# basis, but each iteration two to three times as long from the kept one
# (on the 755-cell table of bench_suppress_sweep.R, the clean-up's swaps
# 11,800 iterations in 0.52 s, from the slack basis 11,400 in 0.19 s).
# With it, on the sweep's 40 tables and R1-R8, S1-S9 of
# bench_suppress_small.R, 31.2 -> 29.9 s in all (the 755-cell table 4.0
# -> 3.1 s), the same pattern on 56 of the 57 and a value 0.3% lower on
# the other; bench tables 1 (3,049 cells) 4.2 -> 3.0 s and 6 (11,724)
# 26.1 -> 23.7 s, tables 3 and 5 within 2%, the same values
# (thirty-first session of bench/README.md). The audits' programs keep
# their warm start: from the slack basis they took seventeen times as
# many iterations.
deviation_warm <- FALSE

# The heuristic protects the sensitive cells of tables of at least
# suppress_part_cells cells by suppress_parts parts of a hierarchy, which
# may run side by side (R/table-suppress-parts.R, `cores` of
# protect_table()). On the 85,328-cell table of bench_suppress_large.R two
# parts on 2 cores took 52 s elapsed instead of about 130, for 1.6% more
# suppressed value; on the 10,994-cell table (parts forced) 2.2% more
# value for little time, hence the 20,000 (chosen by hand between them).
# Two parts: the machine measured has 2 cores; more parts (each from the
# same state) would suppress more. Chosen by hand.
suppress_part_cells <- 20000
suppress_parts <- 2L

# Every this many cells the heuristic hands the free pages of the C
# library's heap back to the system (glibc's malloc_trim(), protect_cells()).
# Without it, on the 85,328-cell table of bench_suppress_large.R, each of
# the two parts' processes grew to 826 MB of which 185 MB were in use.
# Every 1,000 cells: 1,398 MB for the two processes together instead of
# 1,486, for 3% more time (every 200: 1,253 MB for 15% more elapsed).
# On the 764,158-cell table (with the first part in the main process) the
# two processes held at most 6,858 to 7,858 MB, against 10,612 for three
# processes without either change, for about 270 s of system time (pages
# handed back are faulted in again) in a run of 1,579 s elapsed.
suppress_trim_cells <- 1000L

# On tables of at least suppress_gc_min_cells cells, protect_cells() runs
# R's collection of young garbage every suppress_gc_cells cells. Each
# witness program of a large table builds a HiGHS model for its box, and
# R frees the model of the last box only when it collects its garbage;
# R does not count that memory, so it collected rarely: on the
# 764,158-cell table of bench_suppress_large.R each part's process held
# about 2 GB of such garbage between collections (the C library's free
# memory jumping by 2 GB at each). In the first minute of that table's
# pattern, with a collection every 100 cells: the two processes held at
# most 4,966 MB together instead of 7,982 (mean 4,372 against 6,759), and
# protected 3,900 and 3,800 cells against 2,600 and 3,100 (the
# collections took about a seventh of the time, yet both processes got
# further). The whole step with its certificate: 19:57 and 5,000 MB
# against 22:52 and 8,728 MB, the same pattern. 100 and 20,000 (the size
# of the parts, suppress_part_cells) chosen by hand; small tables are left
# as they were.
suppress_gc_cells <- 100L
suppress_gc_min_cells <- 20000

# Tables whose cross-classification has at most this many code combinations
# find a cell by its codes in a dense lookup vector (200 MB at most, 4 bytes
# each); larger ones by match(). Chosen by hand for memory; not measured.
suppress_dense_lookup <- 5e7

# When a cell's protection levels leave no width (zero rule, levels cut by
# the bounds), its target is this share of 1 + |value| on the roomier side.
# Chosen by hand; not measured.
suppress_small_target <- 1e-3

# A witness table moves a cell only when it moves it by more than this
# share of 1 + its largest move (smaller moves are the solver's rounding).
# Chosen by hand; not measured.
witness_move <- 1e-9

# --- The clean-up and the improvement (R/table-suppress-cleanup.R, -optimal.R)

# cleanup = "auto" cleans tables of at most this many cells: on the 2-way
# bench tables of 3,049 and 3,179 cells the clean-up took 1 to 3 s, on the
# 4,022-cell hierarchical table 94 s against 2 for the heuristic, on the
# 11,724-cell table 776 CPU s against 7 (commits 003b60a, d3c32c7;
# ?protect_table). 3,500 lies between the measured sizes, by hand.
cleanup_auto_cells <- 3500

# The clean-up is repeated while a pass lowers the cost by more than the
# share cleanup_min_gain and its swaps added cells, at most
# cleanup_max_passes times (commit f8624e3; the swaps' condition from the
# thirteenth session of bench/README.md). Chosen by hand; not measured.
cleanup_max_passes <- 3L
# Against the respondents, at most cleanup_respondent_passes passes
# (protection_pattern(): their rounds add cells and their own clean-up then
# tries every secondary cell again; R4 of the bench 1.1 -> 0.8-0.9 CPU s,
# the same patterns on R1-R4, tables 1 and 2 and L; fifteenth session of
# bench/README.md).
cleanup_respondent_passes <- 1L
# The passes of the clean-up that price every side's witness again
# (cleanup_pattern()'s step 1); the later ones start from the witnesses the
# last pass kept. Pricing again in the second and third passes found nothing
# cheaper on R1-R4, tables 1 and 3 and 58 random tables against the
# outsider (the same value on every one), and took 10% of their programs
# (R4: 448 -> 360; sixteenth session of bench/README.md).
cleanup_reprice_passes <- 1L
# Against the respondents, none: the one pass starts from the heuristic's
# witnesses (their rounds add cells and their own clean-up then tries every
# secondary cell again). The same value on R1-R4, tables 1 to 3 of the bench
# and 109 of 110 random tables (the other 0.5% cheaper), with R4 524 -> 441
# programs and table 1 1,916 -> 1,792 (seventeenth session of
# bench/README.md).
cleanup_respondent_reprice_passes <- 0L
cleanup_min_gain <- 1e-12
# Against the respondents (method = "heuristic"), the clean-ups' trials
# that need a program or an audit stop once the secondary cells left to
# try, the cheapest, cost less than this share of the secondary cost of
# the pattern they start from (cheap_tail(); publishing all of them would
# save less): the trials go costliest first, so the respondents' clean-up
# makes the same decisions up to there. On the 668-cell table R6 of
# bench_suppress_small.R 5.2 -> 3.0 s, the suppressed value +0.24% (R5
# +0.66%, R4 +0.57%); a share of 0.02: 3.5 s, +0.13%; 0.05: 2.8 s,
# +0.40% (each with the outsider's pass below at the same share, before
# it got its own; twenty-sixth session of bench/README.md). Against the
# outsider
# alone (whose pattern is compared with GaussSuppression's, issue 32) and
# under method = "optimal", none.
cleanup_respondent_tail <- 0.03
# The same for the outsider's clean-up pass before the respondents' rounds
# (cheap_tail(pass = TRUE)): a larger share, since the respondents' own
# clean-up tries every cell above its tail again with the full audit. On
# R1-R6 and R7 of bench_suppress_small.R, two tables of 10 and 16 PUMAs
# and bench tables 1-3, a share of 0.2 against 0.03 gave the same value on
# six tables, a lower one on five (up to -0.6%) and +0.04% and +0.28% on
# the others, and R7 (965 cells) 6.2 -> 4.7 s; 0.3 and 0.5 raised R6's
# value by 1.1% and 2.8% (twenty-sixth session of bench/README.md).
cleanup_respondent_pass_tail <- 0.2

# The respondents' clean-up tests its trials' publications together
# (respondent_cleanup()): its first test takes at most this many trials,
# then more after each passed test (below) and half as many after a
# refused one. Every trial before a test runs on the pattern with the
# trials before it published; when the test fails, those after the
# refused one run again on other patterns, so a first test of the whole
# pass (all its trials, as before) repeats most of them when an early
# trial fails. Every size gives the same pattern. On the 755-cell table
# of bench_suppress_sweep.R (education x marital status x PUMA x age, 6
# PUMAs), whose first test of 31 trials failed on its third, 4.8 -> 4.1 s;
# 4 or 16 within 3% of 8; on the sweep's 40 tables 17.7 -> 16.9 s in all,
# the others within 5% but one of 628 cells (+8%), and the same on R1-R7
# and eleven other tables of the bench's ACS excerpt (thirtieth session
# of bench/README.md).
cleanup_respondent_first_test <- 8
# ... and after a passed test the next takes this many times as many (a
# passed test costs far more than a refused one: it attacks every
# respondent). 4 against 2: on the sweep's 40 tables 15.5 -> 15.3 s in
# all (the 736-cell puma x race x marital status x sex table 2.23 ->
# 2.09 s), R6 2.2 -> 2.0-2.1 s, R7 2.9 -> 2.9-3.1 s, the others of the
# bench's ACS tables within noise; 8: the 755-cell table 4.2 -> 4.5 s; all
# tests at once after a passed one: 5.1 s. The same patterns (thirtieth
# session of bench/README.md).
cleanup_respondent_test_growth <- 4

# The pair swaps after the clean-up (pair_pass(), against the outsider and
# with method = "optimal") try the pairs of this many of the most expensive
# secondary cells (28 pairs at most, only those whose witnesses serve a
# common side; each trial solves a program for every side either cell
# serves). Chosen by hand: the 218-cell table of the sweep where pairs
# help needs its 4th and 5th; with 10 they took 31% of the outsider's
# 7.8 s on the 736-cell table (thirty-sixth session of bench/README.md).
cleanup_pair_cells <- 8L

# The backward pattern (backward_pattern(), against the outsider with the
# clean-up) on tables of at most this many cells: its first witnesses are
# programs over the whole table, and its clean-up tries nearly every cell.
backward_max_cells <- 3500

# improve = "auto" improves tables of at most this many cells, the clean-up's
# threshold, after which it runs: on the bench tables up to 3,179 cells it
# cost up to 6 s more per table (bench/README.md, "The bounded
# improvement"); it was not measured above 3,500 cells.
improve_auto_cells <- 3500

# The fixed budget of the improvement, so that its result does not depend
# on the machine: improve_masters integer master programs of at most
# improve_mip_nodes branch-and-bound nodes each, improve_duals_per_side dual
# programs per side of a sensitive cell. With it, bench table 2 reaches its
# proved optimum and the bench tables cost up to 6 s more (commit a4df0e4,
# bench/README.md); chosen by hand, other budgets not measured.
improve_masters <- 8
improve_mip_nodes <- 500L
improve_duals_per_side <- 4

# ... and it ends after this many rounds in a row in which every side of a
# sensitive cell needed a new constraint (the master's pattern protects
# none: far from every protected pattern). On the bench tables R1-R4 every
# round was such a round until the budget ran out, with nothing cheaper
# found (R4: 358 programs, 178 with this rule); on tables 1 and 2, where
# the improvement lowers the cost, the second round already left most
# sides protected (bench/README.md, tenth session). Chosen from these
# measurements. The last of those rounds is decided before its programs
# when the relation bounds prove it stalled (stall_ahead(): no known
# witness protects a side and every side is short): R4 330 programs under
# the default instead of 418 with the earlier changes of the eighteenth
# session, the same patterns (bench/README.md, eighteenth session).
improve_stall_rounds <- 2
# ... a round being stalled when its master pattern leaves at least this
# share of the sides unprotected (every side, 1, until the thirtieth
# session). On 40 random tables of 100-1,000 cells of the bench's ACS
# excerpt (bench_suppress_sweep.R) and 18 named ones (R1-R7 and others,
# up to 1,285 cells) the improvement lowered no final cost, under either
# attacker; on 7 of the 40 it ran all 8 rounds, the second leaving 53% to
# 93% of the sides unprotected (0.09-0.57 s, up to 57% of protect_table()'s
# time), and ends there with 0.5. Bench tables 1 and 2, where it finds
# the cheaper pattern, leave 5% and 14% of the sides unprotected in the
# first round; on 60 random firm tables of the tests (30 per attacker) the
# improvement improved 18, none with two rounds in a row at half or more
# (bench/README.md, thirtieth session).
improve_stall_share <- 0.5

# method = "optimal" takes tables of at most this many cells (documented in
# ?protect_table). The largest table measured is bench table 2 (3,179 cells,
# proved optimal in 3.3 s); 10,000 was chosen by hand.
optimal_max_cells <- 10000

# The master program of the optimal method: the incumbent's cost bound
# relaxed by the share optimal_cost_slack, so that the incumbent itself
# stays feasible, and at least optimal_min_seconds of time for each master.
# A dual program proves a side protected when its value is at least
# 1 - optimal_cut_tolerance; a capacity cut keeps the coefficients above
# optimal_cut_coef, from multipliers above optimal_cut_multiplier. Chosen by
# hand; not measured.
optimal_cost_slack <- 1e-9

# A repaired master pattern (repair_incumbent()) replaces the incumbent
# when it costs less by more than this share (chosen by hand: above the
# programs' tolerances, far below any cell's share of a pattern).
optimal_repair_gain <- 1e-9
# ... and the repairs stop after this many in a row that did not replace
# it (on the seed-1 sweep's 350-cell table the third master's repair came
# within 0.04% of the optimum and the fourth's did not beat it; repairing
# every round doubled the time of the proofs that take seconds). Chosen
# by hand.
optimal_repair_misses <- 2L

# The bounded improvement against the outsider, with the clean-up, on
# tables of at most improve_repair_cells cells repairs its master patterns
# too (repair_plan("improve")): the master programs get the partner rows,
# and a master pattern that costs less than improve_repair_share times the
# incumbent is completed by the heuristic with one clean-up pass, the best
# of them then given the full clean-up and the pair swaps. Measured on the
# 80 sweep tables of bench_suppress_sweep.R (seeds 1 and 2, 101 to 985
# cells; bench/README.md, thirty-eighth session): the value lower on 19
# tables (down to 0.962), higher on none, the outsider mode's time 1.5
# times (median 1.25 per table) and the 350-cell table 2.4% and 4.5% above
# its proved optimum where it was 6.4%. The whole table's cuts with every
# master repaired (as the optimal method does) lowered the value on more
# tables but took 3.5 to 5 times as long in all (median 2.4 to 2.6 per
# table). Not measured above 1,000 cells, so not used there. A master
# pattern within 5% of the incumbent was never repaired into a cheaper one
# on the tables traced (its repair adds 5 to 15%). Chosen by hand from
# these runs.
improve_repair_cells <- 1000
improve_repair_share <- 0.95

# The relative gap at which a master program (a mixed integer program) is
# solved: HiGHS' default, 10^-4, let the optimal method stop at a pattern
# 7 * 10^-6 dearer than one the heuristic's improvement found under cost =
# "cells" (whose ties are broken by shares of 10^-3 of a cell), and call it
# optimal. 10^-9 lies far below every tie-break; chosen by hand.
optimal_mip_gap <- 1e-9
optimal_min_seconds <- 1
optimal_cut_tolerance <- 1e-7
optimal_cut_coef <- 1e-9
optimal_cut_multiplier <- 1e-12

# The audit's combinations of a component's earlier tables
# (combined_extremes()): the newest this many of its solver's tables (on
# the 668-cell ACS table of bench_suppress_small.R, where the clean-up's
# trials hold dozens of published cells fixed, 32 / 48 / 64 / 96 / all
# tables: 5.5 / 5.5 / 5.2 / 5.8 / 7.9 s).
audit_combination_tables <- 64L

# A component's programs are solved as those of a cached solver over more
# cells (cached_program()) when the component has at least this share of
# its cells.
audit_subpattern_share <- 0.5
