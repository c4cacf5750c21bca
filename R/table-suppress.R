#' Protect a table by secondary cell suppression
#'
#' Chooses cells to suppress besides the sensitive ones so that no sensitive
#' cell can be recovered, or estimated more closely than its protection
#' level, from the published cells, the table's additive relations (at every
#' level of every hierarchy) and a priori bounds; and proves it with the
#' audit of [audit_table()]. The returned pattern always passes its own
#' audit: otherwise the function stops with an error of class
#' `sdcRisk_error_unprotectable` naming the cell.
#'
#' The heuristic (Kelly, Golden and Assad 1992; Fischetti and
#' Salazar-González 2000) scales to tables of \eqn{10^4} to \eqn{10^5}
#' cells. It takes the sensitive cells one at a time, the largest
#' protection level first. A cell is protected upwards when some table that
#' agrees with every published cell, adds up at every level and keeps
#' within the bounds puts it at least its protection level above its value
#' (downwards likewise). For each side not yet shown protected, a linear
#' program finds the cheapest such table, moving only cells of a box around
#' the cell: for every `by` variable, the cell's category, its ancestors,
#' and the cheapest other categories at each of those levels and below,
#' with at most about `box` cells in all (enlarged fourfold while no such
#' table exists inside, up to the whole table). From the second box on (four
#' times `box`), a box without such a table first gets the categories of the
#' cells that can break the linear program's proof that it has none (its
#' dual ray, a Farkas certificate: only a cell in a relation the proof uses,
#' with room to move the way the proof forbids, can), up to 20 times, before
#' it is enlarged fourfold: on tables of \eqn{10^5} cells and more, such
#' boxes lack a few categories, not three quarters of the table. Every
#' published cell that table moves is suppressed. Its cost in the program is
#' its suppression cost when it takes the whole deviation or its whole room
#' (the linear relaxation of the fixed charge); suppressed cells are free.
#' Because more suppression only widens what an attacker must allow, every
#' table found stays a witness until the end; each is checked to add up and
#' to keep the bounds before it counts, and it serves every cell it moves
#' (its mirror image too, when that keeps the bounds).
#'
#' A clean-up pass then looks, for every side of every sensitive cell, for
#' the cheapest witness table among the suppressed cells alone (suppressed
#' cells now priced at their cost, so that witnesses avoid expensive ones),
#' publishes every secondary cell that no witness moves, and tries the others
#' one by one, the most expensive first: a cell is published when every side
#' whose witness moves it finds another witness without it. Cells are only
#' ever removed, and each witness is checked, so the pattern stays protected.
#' The pass is repeated, from the witnesses the last one kept (without
#' looking for the cheapest again), while it
#' lowers the cost and its swaps added cells (at most three passes; one
#' with `attacker = "respondents"`, whose rounds add cells to the pattern
#' and whose own clean-up then tries every secondary cell again, below:
#' that pass starts from the heuristic's witnesses, without looking for the
#' cheapest).
#'
#' Then (`improve`) the cut generation of `method = "optimal"` starts from
#' this pattern as its incumbent, with a fixed budget of work instead of a
#' time limit, so that the result does not depend on the machine: at most
#' 8 master programs of at most 500 branch-and-bound nodes each, and 4 dual
#' programs per side of a sensitive cell; it also stops, keeping the
#' heuristic's pattern, after two rounds in a row whose master pattern
#' leaves at least half the sides of the sensitive cells unprotected (a
#' search that far from any protected pattern found nothing within the
#' budget on the bench tables, nor on 58 tables of up to 1,285 cells from
#' the bench's ACS excerpt). A pattern it finds replaces the
#' heuristic's only when it passes the exact separation of every side
#' (no side's attacker program can narrow a sensitive cell below its level),
#' has a witness table for every side, and costs less; otherwise the
#' heuristic's pattern stays. The pattern is then audited as always.
#' Against the outsider (`attacker = "outsider"`), with the clean-up, on
#' tables of at most 1,000 cells, the master programs also require a
#' suppressed cell's partners in its relations, as with `method =
#' "optimal"` (see `method`), and a master pattern that
#' leaves sides unprotected but costs less than 95% of the incumbent is
#' repaired by the heuristic (its witness tables with the master's cells
#' already suppressed, one pass of the clean-up); when the repair costs
#' less it becomes the incumbent, and the cheapest is returned after the
#' full clean-up and the pair swaps (repairs stop after two in a row that
#' did not pay). On the 350-cell table of the bench's sweep whose optimum
#' is proved, this brings the pattern from 6.4% above the optimum to 2.4%;
#' on the sweep's 80 tables it lowers the value of 19 and takes 1.5 times
#' as long in all (`bench/README.md`).
#'
#' The cost of suppressing a cell is its absolute value (`cost = "value"`,
#' the total value lost) or 1 (`cost = "cells"`, ties broken by smaller value,
#' so detailed cells go before margins). The heuristic does not seek the
#' optimum (a mixed integer program, Fischetti and Salazar-González 2001).
#' Then the pattern is audited: with `intervals = "suppressed"` or
#' `"sensitive"` the exact intervals by linear programming, as
#' [audit_table()] computes them; with `intervals = "none"` the witness tables
#' themselves are the proof (inner bounds of every interval, each at least
#' the protection level).
#'
#' With `attacker = "respondents"` (the default) the pattern must also
#' withstand every respondent of the table, who knows its own contributions
#' (see "Respondents as attackers" in [audit_table()]): after the steps
#' above, the respondent audit runs, and for every (respondent, sensitive
#' cell) pair that breaks the pattern the heuristic looks for a witness
#' table within what the respondent knows (its cells fixed where it is
#' alone, bounded below by its contributions), suppressing the cells it
#' moves (reason "protects ... against respondent ..."); then the audit
#' again, until no respondent breaks any sensitive cell. When no table
#' within a respondent's knowledge can move a cell far enough, the function
#' stops with an error of class `sdcRisk_error_unprotectable` naming the
#' cell and the respondent. With `cleanup`, the rounds are followed by a
#' clean-up: each secondary cell, the most expensive first, is published
#' again when the pattern without it still passes the full audit (outsider
#' and respondents), only the component of suppressed cells that held it
#' audited again. The respondents' part of that audit is run once for all
#' the cells whose other tests pass, on the pattern without every one of
#' them (when it finds no breach, neither would each cell's own test: a
#' pattern with more cells suppressed only widens a respondent's
#' intervals), and again cell by cell only when it finds one; the
#' respondents that broke an earlier cell's trial attack each cell first,
#' alone, so that such a test seldom finds one. Against the
#' respondents both clean-ups leave a cheap tail: once the secondary cells
#' left to try, the cheapest, cost less than a share of the secondary cost
#' of the pattern the clean-up started from, those that a witness table
#' moves stay suppressed without a trial (publishing every one of them
#' would save less than that share): 3% for the respondents' clean-up, 20%
#' for the pass before their rounds (the respondents' clean-up tries those
#' cells again). The trials go costliest first, so the decisions before a
#' tail are those of a clean-up that tries every cell; on the real tables
#' of 72 to 1,285 cells of `bench/README.md` the suppressed value is within
#' -0.5% and +0.6% of that with every trial (with up to 6% more cells,
#' cheap ones, suppressed), for up to half the time.
#' `attacker = "outsider"` and `method = "optimal"` try every cell.
#' `attacker = "outsider"` protects against the outside attacker alone (the
#' smaller patterns of earlier versions).
#'
#' Where the clean-up tries every cell (`attacker = "outsider"`, and
#' `method = "optimal"`), pair swaps follow its passes: of the 8 most
#' expensive secondary cells, every pair whose witnesses serve a common
#' side is published together when the sides that use either find new
#' witnesses whose new cells cost less in all than the two (then one more
#' pass). Against the outsider on tables of at most 3,500 cells (with the
#' clean-up), a second pattern is built the other way round, backward:
#' every cell suppressed, each side given its cheapest witness among them,
#' then the clean-up publishes the cells again, the most expensive first,
#' each when every side it serves finds another witness (as
#' GaussSuppression publishes its candidates, the largest first, while the
#' sensitive cells stay protected). When it costs less than the forward
#' pattern, it gets the swaps' passes and the pair swaps too, and goes on
#' (`stats$start`); so the pattern never costs more than the forward one.
#' The forward heuristic can commit early to expensive margins that no swap
#' undoes: on the 628-cell PUMA x sex x race x education table of the
#' bench's sweep (p% rule), the backward pattern suppresses 0.99 times
#' GaussSuppression's value where the forward one suppressed 1.10; on the
#' 218-cell PUMA x education x race table ((1, 80) rule) a pair swap takes
#' the forward pattern from 1.08 to 0.99. Against the outsider the
#' suppressed value is then at most GaussSuppression's on all 80 tables of
#' the sweep (median 0.88), for about twice the time of the forward
#' pattern alone (`bench/README.md`). The default (`attacker =
#' "respondents"`) has neither: its rounds and clean-up follow, and its
#' time is what is compared with GaussSuppression's.
#'
#' Frequency tables are protected the same way: make the table of a column
#' of ones with [rule_frequency()] (see the examples).
#'
#' @inheritParams audit_table
#' @param cost What suppression loses: `"value"` (the sum of the suppressed
#'   cells' absolute values) or `"cells"` (their number).
#' @param method `"heuristic"` (the default; see Details) or `"optimal"`: the
#'   pattern of least cost, by the cut generation of Fischetti and
#'   Salazar-González (2001): a mixed integer program over one 0/1 variable
#'   per cell, to which the dual of the attacker's linear program adds a
#'   capacity constraint for every side of a sensitive cell that the current
#'   pattern leaves unprotected, until none is. It also requires every
#'   suppressed cell that is not sensitive to have another suppressed cell
#'   in each of its relations: a cell suppressed alone in a relation is
#'   known from the published ones, so publishing it changes no
#'   attacker's problem and some optimal pattern has none. Against the
#'   outsider (with the clean-up), every master pattern that leaves sides
#'   unprotected is completed by the heuristic (its witness tables, its
#'   clean-up and swaps); when that costs less, it bounds the next master
#'   programs. The heuristic's pattern
#'   bounds the cost from the start, so the result is never worse than the
#'   heuristic's. With `attacker = "respondents"` the optimum is the
#'   least-cost pattern safe from the respondents too: the heuristic's
#'   pattern after the respondents' rounds and clean-up is the start, and
#'   every master solution the outsider cannot break is audited against the
#'   respondents, each breach adding the capacity constraints of the cell
#'   in that respondent's problem (the outsider's with the bounds the
#'   respondent knows). For tables of at most 10,000 cells.
#' @param time_limit Seconds `method = "optimal"` may spend on top of the
#'   heuristic. When it stops before proving optimality, the cheapest
#'   protected pattern found is kept: the heuristic's, or against the
#'   outsider a master program's pattern completed by the heuristic (the
#'   programs' own solutions are never returned unproved),
#'   and `stats$optimal` is `FALSE`; `stats$lower_bound` is then a lower
#'   bound on the cost of any pattern.
#' @param cleanup After the heuristic, publish again every secondary cell
#'   that no side of any sensitive cell needs, the most expensive first (see
#'   Details), in passes repeated while they lower the cost and swap cells
#'   (at most three; one against the respondents, whose own clean-up
#'   follows; against the respondents both leave a cheap tail untried,
#'   see Details).
#'   `TRUE` or `FALSE`; the default `"auto"` runs it on tables of at most
#'   3,500 cells, where it takes seconds (on the 2-way bench tables of
#'   `bench/bench_suppress.R`, 3,049 and 3,179 cells: 1 to 3 s). Its cost
#'   grows faster than the table (on the 4,022-cell hierarchical bench
#'   table 94 s against 2 for the heuristic, for 0.481% of the value
#'   instead of 0.508%; on the 11,724-cell one 776 CPU seconds against 7,
#'   for 3.17% instead of 3.43%), so larger tables get it only when asked
#'   for with `TRUE`.
#' @param improve After the clean-up, try to lower the cost with the exact
#'   method's cut generation under a fixed budget (see Details). `TRUE` or
#'   `FALSE`; the default `"auto"` runs it on tables of at most 3,500 cells.
#'   On the 3,179-cell bench table 2 of `bench/bench_suppress.R` it finds
#'   the proved optimum (0.04418% of the value against 0.04491% without it,
#'   and 0.04421% for GaussSuppression's interval protection) for about one
#'   second more; where it finds nothing cheaper it costs 0.1 to 3 s on the
#'   bench tables (`stats$improved` says whether it changed the pattern).
#' @param box The number of cells, about, among which the linear program
#'   protecting one sensitive cell may choose suppressions (see Details; at
#'   least 4). Larger boxes find cheaper patterns more slowly; `Inf` searches
#'   the whole table every time.
#' @param cores The number of processes the heuristic may use (a whole number,
#'   default `getOption("sdcRisk.cores", 1)`). With 2 or more, on tables of
#'   at least 20,000 cells with a hierarchy (a variable with categories
#'   below the groups under its total), the sensitive cells are protected in
#'   two parts, the cells under each half of that variable's top groups, side
#'   by side (the first in this process, the second in a forked one; one
#'   after the other on Windows, where processes cannot be forked), then
#'   those at its total on the merged pattern. The pattern is certified as
#'   always, and it is the same for every value of `cores` from 2 on; it
#'   differs from the one-process pattern, since neither part sees the
#'   other's suppressions: on the tables of `bench/bench_suppress_large.R` it
#'   suppressed 1.6% more value at 85,328 cells, in 52 s elapsed instead of
#'   about 130 with one process (see `bench/README.md`). Each process needs
#'   its own memory for its part's programs: on the 764,158-cell table there,
#'   20 minutes on 2 cores and at most 5.0 GB for both processes together
#'   (6.7 GB for the one process before they part).
#' @returns An object of class `sdc_protection`: the table as a data frame,
#'   one row per cell, with the `by` columns, `level`, `total`, `status`
#'   (factor: `"published"`, `"primary"` or `"secondary"`), `reason` (the
#'   rules that flag a primary cell; for a secondary cell the step that chose
#'   it and the cell it protects), `protection` (the level required on each
#'   side, 0 for non-sensitive cells), `lower` and `upper` (the audit's
#'   feasibility interval of every suppressed cell with `intervals =
#'   "suppressed"`, `NA` for published cells) and `protected` (`TRUE` for
#'   every sensitive cell, `NA` otherwise). Attributes `by`, `value`, `cost`
#'   and `stats` (linear programs solved, seconds, the method and, for
#'   `method = "optimal"`, `optimal`, whether the pattern is proved optimal,
#'   and `lower_bound`, the proved lower bound on the cost of any pattern,
#'   in the units of `cost` with primary cells free; `improved`: whether
#'   `improve` replaced the heuristic's pattern, `NA` when it did not run;
#'   `attacker`; `start`, `"forward"` or `"backward"`: the pattern the
#'   heuristic went on from (see Details); `respondent_rounds`, the rounds of the respondent
#'   audit that added suppressions; `cleanup_passes`, the passes of the
#'   clean-up, 0 without it; with `method = "optimal"` the optimum
#'   and `lower_bound` are against the same attacker as the pattern), and
#'   `witnesses`: the witness tables that prove each side of every
#'   sensitive cell protected against the outsider, a data frame with one
#'   row per cell a table moves, `witness` (the table's number), `row` (the
#'   cell's row) and `change` (how far the table moves it from its total;
#'   the table minus `change` is a witness too when it keeps the bounds).
#'   [audit_table()] given the protection itself checks these tables and
#'   solves programs only for what they leave open (see there).
#' @references Hundepool, A. et al. (2012). *Statistical Disclosure
#'   Control*, Section 4.4. Wiley.
#'
#'   Kelly, J. P., Golden, B. L. and Assad, A. A. (1992). Cell suppression:
#'   disclosure protection for sensitive tabular data. *Networks* 22(4),
#'   397-417.
#'
#'   Fischetti, M. and Salazar-González, J. J. (2000). Models and algorithms
#'   for optimizing cell suppression in tabular data with linear
#'   constraints. *Journal of the American Statistical Association* 95(451),
#'   916-928.
#'
#'   Fischetti, M. and Salazar-González, J. J. (2001). Solving the cell
#'   suppression problem on tabular data with linear constraints.
#'   *Management Science* 47(7), 1008-1027.

#' @family tabular
#' @export
#' @examples
#' set.seed(3)
#' firms <- data.frame(firm = 1:80,
#'                     sector = sample(c("a", "b", "c", "d"), 80, TRUE),
#'                     area = sample(c("x", "y", "z"), 80, TRUE),
#'                     sales = round(rlnorm(80, 5, 1.5)))
#' sens <- cell_sensitivity(firms, c("sector", "area"), "sales",
#'   rules = list(rule_frequency(3), rule_p(15)), contributor = "firm")
#' prot <- protect_table(sens)
#' prot
#' plot(prot)
#'
#' # a frequency table: counts of firms, frequency rule
#' firms$one <- 1
#' counts <- cell_sensitivity(firms, c("sector", "area"), "one", rule_frequency(3))
#' protect_table(counts, cost = "cells")
protect_table <- function(x, ..., cost = c("value", "cells"), lower = NULL, upper = NULL,
                          freq_protection = 10, intervals = c("suppressed", "sensitive", "none"),
                          box = 2000, method = c("heuristic", "optimal"), time_limit = 60,
                          cleanup = "auto", improve = "auto",
                          attacker = c("respondents", "outsider"),
                          zero_contributions = c("ignore", "count"),
                          cores = getOption("sdcRisk.cores", 1L)) {
  rlang::check_dots_empty()
  check_sensitivity_table(x)
  cost <- check_choice(cost)
  intervals <- check_choice(intervals)
  method <- check_choice(method)
  attacker <- check_choice(attacker)
  zero_contributions <- check_choice(zero_contributions)
  if (!identical(box, Inf)) check_number(box, min = suppress_box_min)
  check_number(time_limit, min = 1)
  check_count(cores, min = 1, max = 1024)
  check_scalar(cores)
  cleanup <- check_cleanup(cleanup, nrow(x))
  improve <- check_cleanup(improve, nrow(x), max_cells = improve_auto_cells)
  if (method == "optimal" && nrow(x) > optimal_max_cells) {
    abort_sdc(c(
      "{.code method = \"optimal\"} is for tables of at most {format(optimal_max_cells, big.mark = ',')} cells.",
      "x" = "This one has {format(nrow(x), big.mark = ',')} cells.",
      "i" = "Use the default {.code method = \"heuristic\"}."
    ), "argument", call = rlang::current_env())
  }
  prep <- table_problem(x, lower, upper, freq_protection, arg = "x")
  resp <- table_respondents(x, prep, attacker, zero_contributions)
  res <- protection_pattern(prep, cost, cell_labels(x), x$rules, box, method, time_limit, cleanup,
                            intervals, improve = improve, call = rlang::current_env(),
                            respondents = resp, cores = as.integer(cores))
  new_sdc_protection(x, prep, res$supp, res$reason, res$targets, res$final, cost, res$stats,
                     res$witnesses)
}

# `cleanup = "auto"` (and `improve = "auto"`): on tables of at most
# `max_cells` cells (cleanup_auto_cells, improve_auto_cells).
check_cleanup <- function(cleanup, n_cells, max_cells = cleanup_auto_cells,
                          arg = rlang::caller_arg(cleanup), call = rlang::caller_env()) {
  if (identical(cleanup, "auto")) return(n_cells <= max_cells)
  if (!rlang::is_bool(cleanup)) {
    abort_sdc(c(
      "{.arg {arg}} must be {.code TRUE}, {.code FALSE} or {.val auto}.",
      "x" = "It is {.obj_type_friendly {cleanup}}."
    ), "argument", call = call, arg = arg)
  }
  cleanup
}

# The pattern of protect_table() and protect_tables() for one problem (a
# table, or linked tables made one by linked_problem()): the heuristic and
# its clean-up, the exact method's step (the bounded improvement, or the
# optimal method if asked), and the final audit, which must pass. Returns
# list(supp, reason, targets, final, stats).
protection_pattern <- function(prep, cost, labels, reasons, box, method, time_limit, cleanup,
                               intervals, call, improve = FALSE, respondents = NULL, cores = 1L) {
  start <- proc.time()[["elapsed"]]
  search <- new_protection_search(prep, suppression_cost(prep$value, cost), labels, box)
  primary <- prep$sensitive
  search$reason[primary] <- reasons[primary]
  # (against the respondents the clean-ups leave the cheap tail of their
  # trials: cheap_tail())
  tails <- !is.null(respondents) && method == "heuristic"
  search$tail_share <- if (tails) cleanup_respondent_tail else 0
  search$pass_tail_share <- if (tails) cleanup_respondent_pass_tail else 0
  # (pair swaps where the clean-up tries every cell)
  search$pair_swaps <- !tails
  todo <- which(primary)
  todo <- todo[order(-prep$level[todo], todo)]
  # the heuristic first: its pattern bounds the optimal one. Against the
  # respondents its clean-up makes fewer passes (cleanup_respondent_passes):
  # their rounds add cells to its pattern and their own clean-up then tries
  # every secondary cell again
  passes <- if (is.null(respondents)) cleanup_max_passes else cleanup_respondent_passes
  reprice <- if (is.null(respondents)) cleanup_reprice_passes else cleanup_respondent_reprice_passes
  heuristic_pattern(search, todo, cleanup, call, cores, passes = passes, reprice = reprice)
  # then the pair swaps (against the outsider and with method = "optimal")
  if (cleanup && search$pair_swaps && length(todo)) pair_pass(search, todo, call)
  # against the outsider, with the clean-up, also the backward pattern
  # (from every cell suppressed): the cheaper of the two goes on, the
  # backward one after its swaps' passes and pair swaps, which only lower
  # its cost, so that the pattern never costs more than the forward one (the
  # option sdcRisk.backward, undocumented, lets the tests and the bench
  # compare the forward pattern alone)
  start_kind <- "forward"
  if (is.null(respondents) && cleanup && length(todo) && prep$structure$ncell <= backward_max_cells &&
      getOption("sdcRisk.backward", TRUE)) {
    # (NULL when a side had no witness in its box)
    back <- backward_pattern(prep, search, todo, call)
    secondary_cost <- function(s) sum(s$w[s$supp & !prep$sensitive])
    if (!is.null(back) && secondary_cost(back) < secondary_cost(search)) {
      # (its swaps only when it goes on)
      cleanup_passes(back, todo, call, passes, reprice = 0L)
      pair_pass(back, todo, call)
      search <- back
      start_kind <- "backward"
    } else if (!is.null(back)) {
      search$n_lp <- back$n_lp
    }
  }
  cleanup_passes <- length(search$cleanup_log$gain)
  # the optimal method against the respondents starts from a pattern safe
  # from them (its cost bounds the optimum's), and separates their breaches
  # too; otherwise the respondents come last
  resp_first <- method == "optimal" && !is.null(respondents)
  rp0 <- if (resp_first) respondent_step(prep, search, respondents, cleanup, intervals, call) else
    list(n_lp = 0L, rounds = NA_integer_)
  exact <- exact_pattern_step(prep, search, todo, method, improve, time_limit, start, call,
                              respondents = if (resp_first) respondents,
                              repair = is.null(respondents) && cleanup)
  search <- exact$search
  # the respondents' suppressions come on top of the pattern (which stays
  # protected against the outsider, more suppression only widening the
  # intervals), until none of them breaks it (none, after the optimal
  # method against them)
  rp <- if (!is.null(respondents)) respondent_step(prep, search, respondents, cleanup, intervals, call) else
    list(n_lp = 0L, rounds = NA_integer_)
  audit <- final_audit(prep, search, intervals, call, known = rp$outer)
  stats <- list(n_lp = search$n_lp + exact$n_lp + audit$final$n_lp + rp$n_lp + rp0$n_lp,
                seconds = proc.time()[["elapsed"]] - start, method = method,
                # suppressions the respondents added after the optimum are not
                # proved optimal (the lower bound stays one: a pattern safe
                # from them is safe from the outsider)
                optimal = if (isTRUE(rp$rounds > 0) && !is.na(exact$optimal)) FALSE else exact$optimal,
                lower_bound = exact$lower_bound, improved = exact$improved,
                attacker = if (is.null(respondents)) "outsider" else "respondents", start = start_kind,
                respondent_rounds = if (resp_first) rp0$rounds + rp$rounds else rp$rounds,
                cleanup_passes = cleanup_passes)
  list(supp = search$supp, reason = search$reason, targets = audit$targets, final = audit$final,
       stats = stats, witnesses = pattern_witnesses(search))
}

# The witness tables of the pattern in `search` that its sensitive cells'
# covers come from (wit_up, wit_dn), as a list of list(cells, y): those
# that move suppressed cells only (the respondents' clean-up may have
# published a cell an earlier witness moved). protect_table() returns them
# with its pattern (attribute "witnesses"), for audit_table() to check.
pattern_witnesses <- function(search) {
  sens <- which(search$prep$sensitive)
  ids <- unique(abs(c(search$wit_up[sens], search$wit_dn[sens])))
  wits <- search$wits[sort(ids[ids > 0])]
  Filter(function(w) all(search$supp[w$cells]), wits)
}

# The respondents' rounds on the pattern in `search` (respondent_pattern()),
# then, when they added cells and `cleanup`, their clean-up: their
# witnesses are one per breach, and the clean-up publishes again what the
# full audit does not need (the option sdcRisk.respondent_cleanup,
# undocumented, lets the tests and the bench compare the patterns without
# it). Returns list(n_lp, rounds, outer): `outer` the outsider's intervals
# of the final pattern (list(lower, upper, exact), `exact` the cells whose
# interval is exact), which final_audit() reads instead of measuring them
# again.
respondent_step <- function(prep, search, respondents, cleanup, intervals, call) {
  rp <- respondent_pattern(prep, search, respondents, call)
  # (the last round measured every suppressed cell of the pattern, but
  # upper ends that only needed an outer bound: respondent_audit())
  rp$outer$exact <- (rp$outer$exact %||% search$supp) & search$supp
  if (cleanup && isTRUE(rp$rounds > 0) && getOption("sdcRisk.respondent_cleanup", TRUE)) {
    rc <- respondent_cleanup(prep, search, respondents, keep_witnessed = intervals == "none", call,
                             outer = rp$outer, witnesses = rp$witnesses, index = rp$index)
    rp$n_lp <- rp$n_lp + rc$n_lp
    rp$outer <- rc$outer
  }
  rp
}

# The heuristic's pattern in `search`: witness tables for the sensitive
# cells `todo`, in that order, then (`cleanup`) the clean-up's passes
# (cleanup_passes()).
heuristic_pattern <- function(search, todo, cleanup, call, cores = 1L, passes = cleanup_max_passes,
                              reprice = cleanup_reprice_passes) {
  tick <- table_progress("Protecting the sensitive cells", length(todo))
  # (large hierarchical tables: by parts of a hierarchy, R/table-suppress-parts.R)
  parts <- pattern_parts(search, todo, cores)
  if (!is.null(parts)) {
    protect_parts(search, parts$parts, cores, call, tick)
    todo_rest <- parts$last
  } else {
    todo_rest <- todo
  }
  protect_cells(search, todo_rest, call, tick)
  tick(done = TRUE)
  # (no sensitive cell: no secondary cell either, and no pass)
  if (!cleanup || !length(todo)) return(invisible(search))
  cleanup_passes(search, todo, call, passes, reprice)
}

# The clean-up of the pattern in `search` (cleanup_pattern()), again while
# a pass lowers the cost and its swaps added cells (each pass starts from
# the witnesses the last one kept, so a later pass can free what an
# earlier swap made unnecessary), at most `passes` passes, the first
# `reprice` of which price every side's witness again; without `swaps`,
# passes that only publish (no swaps: a single pass).
cleanup_passes <- function(search, todo, call, passes, reprice, swaps = TRUE) {
  secondary_cost <- function() sum(search$w[search$supp & !search$prep$sensitive])
  # (per pass, the cost it freed and the cells its swaps added)
  search$cleanup_log <- list(gain = numeric(), swap_added = integer())
  for (pass in seq_len(passes)) {
    before <- secondary_cost()
    # (later passes start from the witnesses the last one kept: pricing
    # every side again found nothing cheaper, cleanup_reprice_passes)
    cleanup_pattern(search, todo, call = call, reprice = pass <= reprice, swaps = swaps)
    search$cleanup_log$gain <- c(search$cleanup_log$gain, before - secondary_cost())
    search$cleanup_log$swap_added <- c(search$cleanup_log$swap_added, search$swap_added)
    if (secondary_cost() >= before * (1 - cleanup_min_gain)) break
    # a pass whose swaps added no cell only published cells: the next one
    # would look for witnesses among fewer cells than this one did, where
    # its trials failed (on R1-R4 and tables 1 and 2 of the bench, such a
    # pass was never followed by one that published a cell)
    if (!search$swap_added) break
  }
  invisible(search)
}

# The backward pattern against the outsider: every cell of the table
# suppressed, each side of the sensitive cells `todo` given a witness
# among them, then the clean-up publishes again
# the most expensive cells first, each when every side it serves finds
# another witness (as GaussSuppression's greedy publishes its candidates,
# largest first, while the sensitive cells stay protected). The forward
# heuristic's first choices can commit it to expensive margins that no
# swap undoes; the backward pattern meets the cheap cells first (on the
# 628-cell PUMA x sex x race x education table of the sweep, 0.99 of
# GaussSuppression's value against 1.10). Its clean-up publishes only (one
# pass, no swaps: protection_pattern() runs the swaps' passes when it is
# the cheaper; on the 755-cell table of the sweep, where it is not, swaps
# in its passes took 5 of its 8 s). Returns its search, whose n_lp counts
# the forward heuristic's programs too; NULL when a side finds no witness
# in its search box.
backward_pattern <- function(prep, search, todo, call) {
  back <- derived_search(search)
  back$reason[prep$sensitive] <- search$reason[prep$sensitive]
  back$supp[] <- TRUE
  # each side's witness priced among all cells of its box (the clean-up's
  # first step, side_witness()); a side without one (a box too small for
  # it) leaves the forward pattern alone
  sides <- protection_sides(back, todo, call)
  ref <- lapply(seq_len(nrow(sides)), function(s) side_witness(back, side_at(sides, s), exclude = 0L))
  if (any(vapply(ref, is.null, logical(1)))) {
    search$n_lp <- back$n_lp
    return(NULL)
  }
  for (s in seq_along(ref)) {
    cells <- ref[[s]]$cells
    unnamed <- cells[back$reason[cells] == "" & !prep$sensitive[cells]]
    back$reason[unnamed] <- paste("protects", back$labels[sides$cell[s]])
  }
  record_covers(back, sides, ref)
  cleanup_passes(back, todo, call, passes = 1L, reprice = 0L, swaps = FALSE)
}

# The exact method after the heuristic: its bounded improvement of the
# heuristic's pattern (`improve`, method "heuristic"), or the optimal
# pattern (method "optimal") within what is left of `time_limit` since
# `start`; with `repair` (against the outsider, with the clean-up) the
# optimal method and the improvement repair their master patterns into
# incumbents (repair_incumbent(), repair_plan()). Returns list(search,
# n_lp, optimal, lower_bound, improved), with `search` the heuristic's own
# when nothing replaced it.
exact_pattern_step <- function(prep, search, todo, method, improve, time_limit, start, call,
                               respondents = NULL, repair = FALSE) {
  out <- list(search = search, n_lp = 0L, optimal = NA, lower_bound = NA_real_, improved = NA)
  if (improve && method == "heuristic" && length(todo)) {
    better <- improve_pattern(prep, search, todo, call = call, repair = repair)
    out$n_lp <- better$n_lp
    out$improved <- !is.null(better$search)
    if (out$improved) out$search <- better$search
  }
  if (method == "optimal") {
    opt <- list(supp = NULL, optimal = TRUE, lower_bound = 0, n_lp = 0L)
    if (length(todo)) {
      left <- time_limit - (proc.time()[["elapsed"]] - start)
      opt <- optimal_pattern(search, todo, search$supp, left, call = call, respondents = respondents,
                             partners = TRUE,
                             repair = if (repair && is.null(respondents)) repair_plan("optimal"))
    }
    if (!is.null(opt$supp)) {
      out$search <- witness_search(prep, search, opt$supp, todo, call = call)
    } else if (!is.null(opt$search)) {
      out$search <- opt$search
    }
    out$optimal <- opt$optimal
    out$lower_bound <- opt$lower_bound
    out$n_lp <- opt$n_lp
  }
  out
}

# The audit of the pattern in `search`: the exact intervals by linear
# programming, or with intervals = "none" the witness tables themselves
# (inner bounds of every interval). Returns list(targets, final): the cells
# with an interval and list(lower, upper, n_lp). `known`: exact intervals of
# the pattern already measured (respondent_step()'s `outer`: list(lower,
# upper, exact) over all cells, `exact` where they are), not measured again
# (on R2 and R4 of the bench, 19 programs each).
final_audit <- function(prep, search, intervals, call, known = NULL) {
  supp <- search$supp
  primary <- prep$sensitive
  targets <- which(supp & (primary | intervals == "suppressed"))
  if (intervals == "none") {
    final <- list(lower = prep$value[targets] - search$cover_dn[targets],
                  upper = prep$value[targets] + search$cover_up[targets], n_lp = 0L)
  } else {
    have <- if (is.null(known$exact)) logical(length(targets)) else known$exact[targets]
    final <- list(lower = rep(NA_real_, length(targets)), upper = rep(NA_real_, length(targets)), n_lp = 0L)
    final$lower[have] <- known$lower[targets[have]]
    final$upper[have] <- known$upper[targets[have]]
    if (!all(have)) {
      a <- audit_cells(prep, supp, targets[!have], exact = TRUE, call = call)
      final$lower[!have] <- a$lower
      final$upper[!have] <- a$upper
      final$n_lp <- a$n_lp
    }
  }
  sens <- which(primary)
  at <- match(sens, targets)
  if (!all(protection_met(prep, sens, final$lower[at], final$upper[at]))) {
    # cannot happen: each sensitive cell has a verified witness table
    abort_sdc("Internal error: the final audit of the suppression pattern failed.", "internal",
              call = call)
  }
  if (intervals == "none") final$lower[] <- final$upper[] <- NA_real_
  list(targets = targets, final = final)
}

new_sdc_protection <- function(x, prep, supp, reason, targets, final, cost, stats, witnesses = list(),
                               map = seq_len(nrow(x))) {
  by <- attr(x, "by")
  out <- as.data.frame(x)[c(by, "level", "total")]
  status <- ifelse(prep$sensitive, "primary", ifelse(supp, "secondary", "published"))
  out$status <- factor(status, levels = c("published", "primary", "secondary"))
  out$reason <- reason
  out$protection <- ifelse(prep$sensitive, prep$level, 0)
  out$lower <- NA_real_
  out$upper <- NA_real_
  out$lower[targets] <- final$lower
  out$upper[targets] <- final$upper
  out$protected <- ifelse(prep$sensitive, TRUE, NA)
  structure(out, class = c("sdc_protection", "data.frame"), by = by, value = attr(x, "value"),
            cost = cost, stats = stats, total_label = attr(x, "options")$total_label,
            rules = attr(x, "rules"), # for the code of release_report()
            witnesses = witness_frame(witnesses, map))
}

# The witness tables (list(cells, y) over the cells of the problem) as the
# attribute "witnesses" of a protection: a data frame with one row per
# cell a table moves, `witness` (its number), `row` (the cell's row of the
# table) and `change` (how far it moves the cell). `map`: the problem's cell
# of each row (linked tables: a witness of the linked problem restricted to
# one table's cells keeps that table's relations, each of which lies in
# the table, and bounds).
witness_frame <- function(witnesses, map) {
  # (the row of each cell of the problem: one lookup per cell moved, where
  # match() over the table per witness grew with the square of the table)
  row_of <- rep(NA_integer_, max(c(map, unlist(lapply(witnesses, `[[`, "cells")), 0L)))
  row_of[map] <- seq_along(map)
  rows <- lapply(witnesses, function(w) row_of[w$cells])
  n <- vapply(rows, function(r) sum(!is.na(r)), integer(1))
  keep <- n > 0
  data.frame(witness = rep(seq_len(sum(keep)), n[keep]),
             row = as.integer(unlist(lapply(rows[keep], function(r) r[!is.na(r)]))),
             change = as.double(unlist(lapply(which(keep), function(k) witnesses[[k]]$y[!is.na(rows[[k]])]))))
}

suppression_cost <- function(value, cost) {
  a <- abs(value)
  scale <- max(a, 1)
  # ties: smaller cells first
  if (cost == "cells") 1 + 1e-3 * a / scale else a + 1e-9 * scale
}

cell_labels <- function(x) {
  by <- attr(x, "by")
  do.call(paste, c(lapply(by, function(b) as.character(x[[b]])), sep = " x "))
}

# Search state of protect_table(): the pattern, the reasons, and for every
# cell the largest deviation upwards and downwards shown possible by a
# verified witness table (a table that agrees with every published cell,
# adds up at every level and keeps within the bounds). `box_index`: the
# index of the classification that search_box() reads, from another search
# of the same table (it depends on the table's structure alone).
new_protection_search <- function(prep, w, labels, box, box_index = NULL) {
  st <- prep$structure
  n <- st$ncell
  search <- new.env(parent = emptyenv())
  search$prep <- prep
  search$w <- w
  # (read by every box and program: not recomputed over every cell each time)
  search$w_min <- min(w)
  search$w_max <- max(w)
  search$labels <- labels
  search$box <- box
  search$cap_up <- prep$upper - prep$value
  search$cap_dn <- prep$value - prep$lower
  search$supp <- logical(n)
  search$supp[prep$sensitive] <- TRUE
  search$reason <- character(n)
  search$cover_up <- numeric(n)
  search$cover_dn <- numeric(n)
  search$wits <- list()
  search$wit_up <- integer(n)
  search$wit_dn <- integer(n)
  search$n_lp <- 0L
  # boxes that left nothing out, by cell (search_box())
  search$whole_boxes <- new.env(parent = emptyenv())
  # linked tables have no classification codes (their box is the whole problem)
  if (is.null(st$codes)) return(search)
  if (!is.null(box_index)) {
    search$box_index <- box_index
    return(search)
  }
  codes <- st$codes
  nl <- vapply(st$parents, length, integer(1))
  mult <- cumprod(c(1, nl[-length(nl)]))
  keys <- as.vector((codes - 1) %*% mult)
  dense <- prod(nl) <= suppress_dense_lookup
  lookup <- if (dense) {
    l <- integer(prod(nl))
    l[keys + 1] <- seq_len(n)
    l
  }
  # the classification as the core's search_box() reads it: per variable
  # the parent of each category (0 for none) and its children (CSR), and
  # the cell at each combination of codes (a dense lookup, or the sorted
  # keys of the cells)
  children <- lapply(st$parents, function(p) {
    split(which(!is.na(p)), factor(p[!is.na(p)], levels = seq_along(p)))
  })
  ord <- if (!dense) order(keys)
  search$box_index <- list(
    parent = lapply(st$parents, function(p) {
      p <- as.integer(p)
      p[is.na(p)] <- 0L
      p
    }),
    start = lapply(children, function(ch) as.integer(c(0, cumsum(lengths(ch))))),
    child = lapply(children, function(ch) as.integer(unlist(ch, use.names = FALSE))),
    mult = as.double(mult), dense = if (dense) as.integer(lookup) else integer(),
    keys = if (dense) numeric() else as.double(keys[ord]), key_cell = if (dense) integer() else as.integer(ord))
  search
}

# A fresh search of the same problem as `from` (witness_search(),
# backward_pattern(), repair_incumbent()): its costs, labels and box (with
# the box's index), and the settings and program count it takes over: the
# programs solved so far, the clean-ups' cheap tails and whether pairs are
# swapped. Nothing suppressed beyond what new_protection_search() sets.
derived_search <- function(from) {
  to <- new_protection_search(from$prep, from$w, from$labels, from$box, box_index = from$box_index)
  to$n_lp <- from$n_lp
  to$tail_share <- from$tail_share
  to$pass_tail_share <- from$pass_tail_share
  to$pair_swaps <- from$pair_swaps
  to
}

# env[[name]][idx] <- value, in place, for the state environments of the
# search and the audit: R copies a vector bound in an environment whenever
# a function assigns into part of it (3 ms for 10^6 numbers, several times
# per witness table), so the vector leaves its binding for the assignment.
env_set <- function(env, name, idx, value) {
  force(idx)
  # (nothing to set: half the calls of a small table, each of which took as
  # long as a real one)
  if (!length(idx)) return(invisible(env))
  # (value may be computed from the vector itself)
  force(value)
  v <- env[[name]]
  env[[name]] <- NULL
  v[idx] <- value
  env[[name]] <- v
  invisible(env)
}

# A fresh search state for the pattern `supp` (from the optimal method):
# witness tables found among its suppressed cells only, so that nothing is
# added unless a program fails numerically (then the heuristic completes
# the pattern, and the audit decides as always).
# With `relabel`, secondary cells the old pattern had keep their reason
# and the others are named after the first sensitive cell whose witness
# moves them ("protects ...", as in the heuristic).
witness_search <- function(prep, old, supp, todo, call, relabel = FALSE) {
  search <- derived_search(old)
  search$reason <- old$reason
  fresh <- supp & !prep$sensitive & (!relabel | !old$supp)
  search$reason[fresh] <- if (relabel) "" else "optimal pattern"
  search$reason[!supp] <- ""
  search$supp <- supp
  cells <- which(supp)
  for (i in todo) {
    t <- protection_targets(search, i, call)
    for (direction in c(1, -1)) {
      ti <- t[[if (direction > 0) "up" else "down"]]
      if (ti <= 0) next
      y <- deviation_lp(search, i, cells, ti, direction, symmetric = FALSE)
      if (is.null(y)) next
      unnamed <- y$cells[search$reason[y$cells] == "" & !prep$sensitive[y$cells]]
      env_set(search, "reason", unnamed, paste("protects", search$labels[i]))
      record_witness(search, y, i)
    }
    protect_cell(search, i, call)
  }
  search
}

# The protection cell i needs on each side: its level, within its a priori
# bounds; when that leaves no width (zero rule, or levels cut by the
# bounds), a small deviation on the roomier side.
protection_targets <- function(search, i, call) {
  prep <- search$prep
  lev <- prep$level[i]
  tol <- prep$tol[i]
  up <- max(min(lev, search$cap_up[i]), 0)
  dn <- max(min(lev, search$cap_dn[i]), 0)
  if (up + dn <= 2 * tol) {
    room <- max(search$cap_up[i], search$cap_dn[i])
    small <- min(room, max(lev, suppress_small_target * (1 + abs(prep$value[i]))))
    if (small <= 2 * tol) unprotectable(search, i, call)
    if (search$cap_up[i] >= search$cap_dn[i]) up <- small else dn <- small
  }
  c(up = up, down = dn)
}

# protect_cell() for the cells `cells` in turn, with tick() after each;
# on tables of at least suppress_gc_min_cells cells R's young garbage is
# collected every suppress_gc_cells cells (the HiGHS models of the
# witness programs, which R does not count, are freed only then); every
# suppress_trim_cells cells the free memory of the C library's heap goes
# back to the system (src/rcpp_utils_memory.cpp).
protect_cells <- function(search, cells, call, tick) {
  collect <- isTRUE(search$prep$structure$ncell >= suppress_gc_min_cells)
  for (k in seq_along(cells)) {
    protect_cell(search, cells[[k]], call = call)
    tick()
    if (collect && k %% suppress_gc_cells == 0L) collect_young_garbage()
    if (k %% suppress_trim_cells == 0L) cpp_release_free_memory()
  }
  invisible(search)
}

# R's collection of its young objects only (those made since the last
# collection; a full one would touch every object of a large table's
# state).
collect_young_garbage <- function() {
  invisible(gc(verbose = FALSE, full = FALSE))
}

# Suppress cells until cell i has a witness table on each side that meets its
# protection level.
protect_cell <- function(search, i, call) {
  targets <- protection_targets(search, i, call)
  tol <- search$prep$tol[i]
  for (direction in c(1, -1)) {
    t <- targets[[if (direction > 0) "up" else "down"]]
    have <- if (direction > 0) search$cover_up[i] else search$cover_dn[i]
    if (t <= 0 || have >= t - tol) next
    budget <- search$box
    repeat {
      box <- search_box(search, i, t, budget)
      y <- box_witness(search, i, box$cells, t, direction,
                       rounds = if (budget >= suppress_ray_budget * search$box) suppress_ray_rounds else 0L)
      if (!is.null(y)) break
      if (box$whole) unprotectable(search, i, call)
      budget <- budget * suppress_box_growth
    }
    record_witness(search, y, i)
  }
  invisible(search)
}

# A witness for cell i moving by dir * t among `cells` (a box): the
# symmetric program's, else the one-sided program's. When the one-sided
# program has none, the cells that break its certificate of infeasibility
# (ray_cells()) join the box, up to suppress_ray_rounds times: a box that
# lacks a few cells of the table (a relation whose cells in the box cannot
# take the deviation) gets those, where the next box of the heuristic
# would be suppress_box_growth times as large (on the 265,539-cell table (size 3e5) of
# bench_suppress_large.R, boxes of 4,000 cells grew to 95,000, programs of
# up to minutes).
box_witness <- function(search, i, cells, t, dir, rounds = suppress_ray_rounds) {
  for (round in 0:rounds) {
    # (after the first round the one-sided program first: the symmetric one
    # has no witness where it has none)
    if (round == 0L) {
      y <- deviation_lp(search, i, cells, t, dir, symmetric = TRUE) %||%
        deviation_lp(search, i, cells, t, dir, symmetric = FALSE)
    } else {
      y <- deviation_lp(search, i, cells, t, dir, symmetric = FALSE)
      if (!is.null(y)) return(deviation_lp(search, i, cells, t, dir, symmetric = TRUE) %||% y)
    }
    if (!is.null(y) || round == rounds) return(y)
    more <- ray_cells(search, cells, dir)
    if (!length(more)) return(NULL)
    cells <- ray_box(search, cells, more)
  }
}

# The box `cells` (a product of categories, one set per variable) with the
# categories of the cells `more` and their ancestors added: the cells of
# the enlarged product. (A cell added alone would be alone in its other
# relations, and each round would add their cells: on the 10,994-cell
# table of bench_suppress_large.R, boxes took 8 to 16 rounds that way.)
# Linked tables, which have no classification: `cells` and `more`.
ray_box <- function(search, cells, more) {
  st <- search$prep$structure
  codes <- st$codes
  if (is.null(codes)) return(c(cells, more))
  bi <- search$box_index
  sets <- lapply(seq_len(ncol(codes)), function(d) {
    add <- codes[more, d]
    # (with their ancestors, up to the total)
    repeat {
      up <- bi$parent[[d]][add]
      up <- up[up > 0 & !(up %in% add)]
      if (!length(up)) break
      add <- c(add, up)
    }
    unique(c(codes[cells, d], add))
  })
  grid <- as.matrix(expand.grid(sets, KEEP.OUT.ATTRS = FALSE))
  keys <- as.vector((grid - 1) %*% bi$mult)
  found <- if (length(bi$dense)) bi$dense[keys + 1] else bi$key_cell[match(keys, bi$keys)]
  found <- found[!is.na(found) & found > 0]
  c(cells, setdiff(found, cells))
}

# The cells outside `cells` that break the certificate of infeasibility of
# deviation_solve()'s last program (one-sided, over `cells`, direction
# `dir`): HiGHS' dual ray y over the program's relations proves that every
# deviation x within the bounds has y'Ax < 0 (or every one > 0; Farkas'
# lemma). A cell j outside can change that only if it lies in a relation
# with y != 0 and its rise or fall, within its bounds, moves y'Ax the other
# way: those cells, the ones that cover most of the certificate's gap
# first (then the cheapest), until they cover it. integer() when there is
# no certificate or no such cell. (When there is a certificate and no such
# cell, the program over the whole table is infeasible too; the caller's
# larger boxes still decide.)
ray_cells <- function(search, cells, dir) {
  ray <- search$dev_ray
  if (is.null(ray) || !identical(ray$cells, cells)) return(integer())
  st <- search$prep$structure
  # (the triplets of each relation: ord[start + 1:count], built once)
  ix <- search$rel_index %||% {
    count <- tabulate(st$rel, st$nrel)
    search$rel_index <- list(ord = order(st$rel), count = count, start = cumsum(count) - count)
    search$rel_index
  }
  nz <- abs(ray$y) > ray_tolerance * max(abs(ray$y))
  rels <- ray$rels[nz]
  if (!length(rels)) return(integer())
  trips <- ix$ord[sequence(ix$count[rels], from = ix$start[rels] + 1L)]
  a <- rowsum(st$coef[trips] * rep(ray$y[nz], ix$count[rels]), st$cell[trips])
  cand <- as.integer(rownames(a))
  a <- a[, 1]
  # y'Ax over the program's own columns at its extremes (rises then falls)
  m <- length(cells)
  at <- match(cells, cand, nomatch = 0L)
  ain <- numeric(m)
  ain[at > 0] <- a[at]
  r <- c(ain, -ain)
  hi <- sum(ifelse(r > 0, r * ray$ub, r * ray$lb))
  lo <- sum(ifelse(r > 0, r * ray$lb, r * ray$ub))
  gap <- if (hi < 0) -hi else if (lo > 0) lo else return(integer())
  sgn <- if (hi < 0) 1 else -1
  out <- !(cand %in% cells)
  cand <- cand[out]
  a <- sgn * a[out]
  up <- pmin(search$cap_up[cand], highs_infinity())
  dn <- pmin(search$cap_dn[cand], highs_infinity())
  if (dir < 0) {
    tmp <- up
    up <- dn
    dn <- tmp
  }
  gain <- pmin(up * pmax(a, 0) + dn * pmax(-a, 0), gap)
  keep <- gain > ray_tolerance * gap
  cand <- cand[keep]
  gain <- gain[keep]
  if (!length(cand)) return(integer())
  cost <- ifelse(search$supp[cand], 0, search$w[cand])
  o <- order(-gain, cost, cand)
  covered <- which(cumsum(gain[o]) >= gap * (1 - ray_tolerance))[1]
  cand[o[seq_len(if (is.na(covered)) length(o) else covered)]]
}

unprotectable <- function(search, i, call) {
  prep <- search$prep
  abort_sdc(c(
    "Cell {.val {search$labels[i]}} cannot be protected.",
    "x" = "It needs {format(prep$level[i])} on each side of {format(prep$value[i])}, and no table that keeps the relations and bounds moves it that far, whatever else is suppressed.",
    "i" = "Check the bounds {.arg lower}/{.arg upper} and the protection levels of the rules."
  ), "unprotectable", call = call, arg = "x")
}

# The cells among which the linear program for cell i may choose: for every
# `by` variable, the cell's category, its ancestors, up to k other categories
# at each of those levels (siblings) and below them down to the finest level,
# the cheapest first (suppressed cells are free; cells that cannot absorb
# the deviation t come last); the box is their product, with k the largest
# that keeps it within `budget` cells. `whole` when nothing was left out:
# such a box depends on the cell alone, and is kept for the cell's later
# boxes of at least the same budget (a larger k picks the same categories).
search_box <- function(search, i, t, budget) {
  codes <- search$prep$structure$codes
  # linked tables: no classification to build a box from
  if (is.null(codes)) return(list(cells = seq_len(search$prep$structure$ncell), whole = TRUE))
  key <- as.character(i)
  hit <- search$whole_boxes[[key]]
  if (!is.null(hit) && budget >= hit$budget) return(hit$box)
  nd <- ncol(codes)
  bi <- search$box_index
  # (in the core, table_boxes.hpp: the categories of each variable at k,
  # from the largest k down, and the cells of their product)
  box <- core_call(cpp_search_box, codes[i, ], bi$parent, bi$start, bi$child, bi$mult, bi$dense, bi$keys,
                   bi$key_cell, search$supp, search$w, search$cap_up, search$cap_dn, search$w_max, t, budget,
                   max(1, floor(budget^(1 / nd))), suppress_box_shrink)
  if (box$whole) assign(key, list(budget = budget, box = box), envir = search$whole_boxes)
  box
}

# A deviation y of the table, nonzero only on `cells`, with y_i = dir * t,
# that keeps every relation and every bound: the cheapest by linear
# programming, each published cell costing its suppression cost when fully
# used (the linear relaxation of the fixed charge), suppressed cells
# (almost) nothing. With `symmetric`, -y keeps the bounds too. NULL if none.
deviation_lp <- function(search, i, cells, t, dir, symmetric, priced = FALSE, scope = cells) {
  m <- length(cells)
  up <- search$cap_up[cells]
  dn <- search$cap_dn[cells]
  if (symmetric) up <- dn <- pmin(up, dn)
  if (dir < 0) {
    tmp <- up
    up <- dn
    dn <- tmp
  }
  # with `priced`, suppressed secondary cells cost as much as published
  # ones: witnesses then avoid expensive cells, which the clean-up frees
  free <- if (priced) search$prep$sensitive[cells] else search$supp[cells]
  eps <- 1e-6 * search$w_min / t
  w <- search$w[cells]
  obj <- c(replace(move_price(w, up, t), free, eps), replace(move_price(w, dn, t), free, eps))
  ii <- match(i, cells)
  lb <- numeric(2 * m)
  ub <- c(up, dn)
  lb[ii] <- ub[ii] <- t
  ub[m + ii] <- 0
  search$n_lp <- search$n_lp + 1L
  y <- deviation_solve(search, cells, obj, lb, ub, scope)
  if (is.null(y)) return(NULL)
  checked_witness(search, cells, dir * (y[seq_len(m)] - y[m + seq_len(m)]), i)
}

# The price of moving a cell of cost w by one unit in a direction with
# capacity `cap`, for a side of level t: its whole cost when it moves by
# min(cap, t) (the linear relaxation of the fixed charge).
move_price <- function(w, cap, t) w / pmax(pmin(cap, t), 1e-9 * t)

# The model of deviation_lp()'s programs over the cells `scope`: columns
# every cell's rise, then every cell's fall; rows the relations they are in
# (right-hand sides 0).
deviation_model <- function(st, scope) {
  trips <- unlist(st$cell_trips[scope], use.names = FALSE)
  rels <- unique(st$rel[trips])
  m <- length(scope)
  col <- match(st$cell[trips], scope)
  row <- match(st$rel[trips], rels)
  mat <- triplet_matrix(i = c(row, row), j = c(col, col + m), v = c(st$coef[trips], -st$coef[trips]),
                        nrow = length(rels), ncol = 2 * m)
  mat$rels <- rels
  mat
}

# Solves deviation_lp()'s program over `cells` (objective, bounds of the
# rises then the falls). The search keeps the HiGHS model of the last
# program that needed a new one: a program whose cells lie in its cells and
# are at least half of them (deviation_reuse_share) is that model's
# columns' bounds and objective (the cells outside `cells` fixed at 0,
# which is the program over `cells` alone), solved in that model instead of
# one built for it (the two sides of a cell share their box; on small
# tables most boxes are the whole table), from HiGHS' slack basis
# (deviation_warm: from the previous program's optimal basis each took
# about as many iterations, each far longer).
# A new model is built over `scope` (the cells, or more: the clean-up's
# swaps, whose programs leave out one cell of the box after another, build
# it over the whole box, where the next trial's program fits again).
# Returns the solution on `cells`, NULL when no deviation exists; a program
# the kept model fails gets a model of its own (without HiGHS' presolve: on
# these programs of a few hundred columns it took 40% of the time).
deviation_solve <- function(search, cells, obj, lb, ub, scope = cells) {
  st <- search$prep$structure
  search$dev_ray <- NULL
  sess <- search$dev_session
  pos <- if (!is.null(sess) && length(cells) >= deviation_reuse_share * length(sess$scope)) match(cells, sess$scope)
  if (is.null(pos) || anyNA(pos)) {
    mat <- deviation_model(st, scope)
    # (a box in no relation: nothing to keep)
    if (!mat$nrow) return(deviation_cold(st, cells, obj, lb, ub))
    sess <- list(scope = scope, rels = mat$rels,
                 lp = lp_session(mat, numeric(mat$nrow), numeric(mat$nrow), numeric(mat$ncol),
                                 numeric(mat$ncol), strategy = 1L,
                                 warm = isTRUE(getOption("sdcRisk.deviation_warm", deviation_warm))))
    search$dev_session <- sess
    pos <- match(cells, scope)
  }
  k <- length(sess$scope)
  cols <- c(pos, pos + k)
  full <- function(v) {
    out <- numeric(2 * k)
    out[cols] <- v
    out
  }
  sess$lp$set_bounds(full(lb), full(ub))
  r <- sess$lp$extreme(full(obj), maximize = FALSE)
  if (r$status == "optimal") return(r$solution[cols])
  if (r$status == "infeasible") {
    # (kept for ray_cells(): the certificate, with the bounds of `cells`)
    y <- sess$lp$dual_ray()
    if (!is.null(y)) search$dev_ray <- list(cells = cells, rels = sess$rels, y = y, lb = lb, ub = ub)
    return(NULL)
  }
  deviation_cold(st, cells, obj, lb, ub)
}

deviation_cold <- function(st, cells, obj, lb, ub) {
  mat <- deviation_model(st, cells)
  r <- solve_lp(obj, mat, rep("==", mat$nrow), numeric(mat$nrow), lower = lb, upper = ub,
                presolve = FALSE)
  if (r$status == "optimal") r$solution
}

# A program's deviation y on `cells` as a witness (the cells it moves, and
# by how much), or NULL unless it moves cell i and passes witness_ok().
# Moves below witness_move of the deviation's own scale are the solver's
# rounding. (Measured against each cell's value, as before, a deviation of
# 0.2 for a cell of 2 lost its moves of the margins above 2 * 10^8, so
# every program for it failed its check: "cannot be protected", a false
# error, on a table of 16 cells and on the 10^6-cell table of
# bench_suppress_large.R.)
checked_witness <- function(search, cells, y, i) {
  keep <- abs(y) > witness_move * (1 + max(abs(y)))
  w <- list(cells = cells[keep], y = y[keep])
  if (!any(w$cells == i) || !witness_ok(search, w$cells, w$y)) return(NULL)
  w
}

# Is value + y (y on `cells`, 0 elsewhere) a table that adds up at every
# level and keeps the a priori bounds, within the audit's tolerances?
# In the core (cpp_witnesses_ok() of one table: witness_adds_up() of
# table_components.hpp, reading the table's relation index,
# relation_index_of()): it is called for every
# witness found or reused, some 900 times on R4 of the bench, where the
# residuals by rowsum() took a twentieth of the default's time.
witness_ok <- function(search, cells, y) {
  prep <- search$prep
  core_call(cpp_witnesses_ok, relation_index_of(prep), as.integer(cells), as.double(y), c(0L, length(cells)),
            prep$value, as.double(prep$lower), as.double(prep$upper), prep$tol, audit_tolerance)
}

# The relations of the table indexed both ways in the core (relation_index()
# of table_components.hpp, an external pointer), built once per table
# problem and kept in `prep$core_memo` (shared by the respondents' copies
# of the problem, whose bounds alone differ).
relation_index_of <- function(prep) {
  memo <- prep$core_memo
  ix <- if (!is.null(memo)) memo$relation_index
  if (is.null(ix)) {
    st <- prep$structure
    ix <- core_call(cpp_relation_index, st$rel, st$cell, as.double(st$coef), st$nrel, st$ncell)
    if (!is.null(memo)) memo$relation_index <- ix
  }
  ix
}

# Suppress the cells a witness moves, and record how far it moves each one
# (its mirror image -y too, when that keeps the bounds: `mirror_ok`, whether
# it does when the caller checked it already, witnesses_ok() of many).
record_witness <- function(search, y, i, mirror_ok = NULL) {
  cells <- y$cells
  new <- cells[!search$supp[cells]]
  env_set(search, "supp", new, TRUE)
  env_set(search, "reason", new, paste("protects", search$labels[i]))
  k <- length(search$wits) + 1L
  env_set(search, "wits", k, list(y))
  # the witness (signed: -k for its mirror image) of each cell's largest cover
  cover <- function(dev, ref) {
    up <- dev > search$cover_up[cells]
    env_set(search, "cover_up", cells[up], dev[up])
    env_set(search, "wit_up", cells[up], ref)
    dn <- -dev > search$cover_dn[cells]
    env_set(search, "cover_dn", cells[dn], -dev[dn])
    env_set(search, "wit_dn", cells[dn], ref)
  }
  cover(y$y, k)
  if (mirror_ok %||% witness_ok(search, cells, -y$y)) cover(-y$y, -k)
  invisible(search)
}

# An sdc_protection object that a user may have edited: the columns its
# methods read, with `status` consistent with the other columns (a primary
# cell has a protection verdict, a published one no interval).
validate_sdc_protection <- function(x, arg = rlang::caller_arg(x), call = rlang::caller_env()) {
  by <- attr(x, "by")
  st <- attr(x, "stats")
  need <- c(by, "level", "total", "status", "reason", "protection", "lower", "upper", "protected")
  problem <- if (!inherits(x, "sdc_protection") || !is.data.frame(x)) {
    "it is not a data frame of class {.cls sdc_protection}"
  } else if (!is.character(by) || !length(by) || !is.list(st) || !is.character(attr(x, "cost"))) {
    "its attributes {.field by}, {.field cost} and {.field stats} are missing or wrong"
  } else if (length(miss <- setdiff(need, names(x)))) {
    paste0("column", if (length(miss) > 1) "s", " ", paste(miss, collapse = ", "), " missing")
  } else if (!is.null(bad <- table_frame_problem(x, by))) {
    bad
  } else if (!is.factor(x$status) || !identical(levels(x$status), c("published", "primary", "secondary")) ||
             anyNA(x$status)) {
    "{.field status} must be a factor of published, primary and secondary cells"
  } else if (!is.numeric(x$total) || !all(is.finite(x$total)) || !is.numeric(x$protection) ||
             anyNA(x$protection) || any(x$protection < 0) || !is.numeric(x$lower) || !is.numeric(x$upper)) {
    "{.field total}, {.field protection}, {.field lower} and {.field upper} must be numbers"
  } else if (!is.logical(x$protected) || !identical(x$status == "primary", !is.na(x$protected)) ||
             !all(x$protected[x$status == "primary"]) ||
             any(!is.na(x$lower[x$status == "published"]) | !is.na(x$upper[x$status == "published"]))) {
    "{.field status} disagrees with {.field protected}, {.field lower} and {.field upper}"
  }
  if (!is.null(problem)) {
    abort_invalid(arg, problem, "Use the object {.fn protect_table} returned, or call it again.", call)
  }
  invisible(x)
}

#' @export
format.sdc_protection <- function(x, n = 10, ...) {
  validate_sdc_protection(x)
  st <- attr(x, "stats")
  status <- x$status
  inner <- interior_cells(x)
  value <- abs(x$total) * inner
  share <- if (sum(value) > 0) sprintf("%.2f%%", 100 * sum(value[status != "published"]) / sum(value)) else "0%"
  df <- as.data.frame(unclass(x))
  shown <- df[status != "published", , drop = FALSE]
  body <- if (nrow(shown)) protection_table_lines(utils::head(shown, n))
  c(
    wrap_lines(c(
      sprintf("<sdc_protection> %s of %s by %s", plural(nrow(x), "cell"),
              attr(x, "value"), paste(attr(x, "by"), collapse = " x ")),
      if (!nrow(shown)) "No sensitive cell: every cell is published." else
        sprintf("Suppressed: %d primary, %d secondary (%s of the value); cost = \"%s\"%s",
                sum(status == "primary"), sum(status == "secondary"), share, attr(x, "cost"),
                optimality_note(st)),
      if (nrow(shown)) sprintf("Audit passed: every sensitive cell protected (%s, %.2f s)",
                               plural(st$n_lp, "linear program"), st$seconds)
    )),
    body$lines,
    wrap_lines(c(
      if (nrow(shown) > n) sprintf("# ... %d more suppressed cells", nrow(shown) - n),
      if (length(body$dropped)) sprintf("# %s not shown; as.data.frame() gives all columns",
                                        paste(body$dropped, collapse = ", "))
    ))
  )
}

# The cells of a protection or an audit as printed: numbers in fixed
# notation at the table's precision, within PRINT_WIDTH columns (`protected`,
# `suppressed`, `level` and last `reason` left out while they do not fit).
protection_table_lines <- function(df) {
  df$total <- fmt_column(df$total, exact = TRUE)
  for (v in intersect(c("protection", "lower", "upper", "required_lower", "required_upper"), names(df))) df[[v]] <- fmt_column(df[[v]], digits = 5L)
  table_lines(df, optional = c("reason", "level", "suppressed", "protected"))
}

# The interior cells of a table (every `by` variable at its most detailed
# level): the cells whose values add up to the table's value once. The
# margins repeat that value and are left out of its shares.
interior_cells <- function(x) x$level == paste(attr(x, "by"), collapse = ":")

optimality_note <- function(st) {
  if (!identical(st$method, "optimal")) return("")
  if (isTRUE(st$optimal)) return("; optimal (proved)")
  sprintf("; optimality not proved (time limit; no pattern costs less than %s)",
          format(signif(st$lower_bound, 6), big.mark = ","))
}

#' @export
print.sdc_protection <- function(x, n = 10, ...) {
  cat(format(x, n = n, ...), sep = "\n")
  invisible(x)
}

#' @export
summary.sdc_protection <- function(object, ...) {
  validate_sdc_protection(object)
  status <- object$status
  # shares of the value over the interior cells only: every margin repeats
  # the value of the cells it adds up (issue 37: 2,441 of 6,280, where the
  # grand total is 1,570)
  inner <- interior_cells(object)
  value <- abs(object$total) * inner
  counts <- data.frame(status = levels(status),
                       cells = as.vector(table(status)),
                       interior = as.vector(table(status[inner])),
                       value = as.vector(tapply(value, status, sum, default = 0)))
  levels_tab <- as.data.frame.matrix(table(factor(object$level, levels = unique(object$level)), status))
  by_level <- data.frame(level = rownames(levels_tab), cells = rowSums(levels_tab),
                         primary = levels_tab$primary, secondary = levels_tab$secondary,
                         row.names = NULL)
  st <- attr(object, "stats")
  sens <- status == "primary"
  new_summary_sdc_protection(list(
    value = attr(object, "value"), by = attr(object, "by"), cost = attr(object, "cost"),
    counts = counts, by_level = by_level, total_value = sum(value), n_interior = sum(inner),
    suppressed_value = sum(value[status != "published"]),
    n_sensitive = sum(sens), n_protected = sum(object$protected[sens]),
    exact = any(!is.na(object$lower[sens])), stats = st))
}

new_summary_sdc_protection <- function(x) structure(x, class = "summary.sdc_protection")

#' @export
format.summary.sdc_protection <- function(x, ...) {
  pct <- function(a, b) if (b > 0) sprintf("%.2f%%", 100 * a / b) else "0%"
  num <- function(v) format(v, big.mark = ",", scientific = FALSE, trim = TRUE)
  st <- x$stats
  wrap_lines(c(
    sprintf("Secondary cell suppression of %s by %s (cost = \"%s\")", x$value,
            paste(x$by, collapse = " x "), x$cost),
    sprintf("The value: the sum of the %s interior cells (margins repeat it)", num(x$n_interior)),
    sprintf("  %-10s %13s  %7s of the value (%s interior)", x$counts$status, plural(x$counts$cells, "cell"),
            vapply(x$counts$value, pct, "", b = x$total_value), num(x$counts$interior)),
    sprintf("Suppressed: %s cells, %s of %s (%s of the value)",
            num(sum(x$counts$cells[-1])), num(x$suppressed_value), num(x$total_value),
            pct(x$suppressed_value, x$total_value)),
    if (x$n_sensitive == 0) "Audit: no sensitive cell; nothing to protect." else
      sprintf("Audit: %s of %s sensitive cells protected, %s (%s, %.2f s)",
              num(x$n_protected), num(x$n_sensitive),
              if (x$exact) "exact intervals by linear programming" else "proved by witness tables",
              plural(st$n_lp, "linear program"), st$seconds),
    sprintf("Method: %s%s", st$method, optimality_note(st)),
    if (identical(st$attacker, "respondents")) "Attackers: an outsider and every respondent (see ?audit_table)" else
      if (identical(st$attacker, "outsider")) "Attacker: an outsider only (attacker = \"outsider\")",
    "By level of aggregation:",
    sprintf("  %-24s %s, %s primary, %s secondary", x$by_level$level, plural(x$by_level$cells, "cell"),
            num(x$by_level$primary), num(x$by_level$secondary))
  ))
}

#' @export
print.summary.sdc_protection <- function(x, ...) {
  cat(format(x, ...), sep = "\n")
  invisible(x)
}

# "1 cell", "2 cells"
plural <- function(n, word) sprintf("%s %s%s", format(n, big.mark = ",", scientific = FALSE),
                                    word, ifelse(n == 1, "", "s"))

# Totals as drawn in a table's cells, thousands separated: whole totals
# with every digit, others in fixed notation to 6 significant digits of the
# largest (47,985.4, not 47,985.3669508889), never scientific.
format_total <- function(v) fmt_column(v, big.mark = ",", exact = TRUE)

#' Plot a suppression pattern
#'
#' Draws the two-way table of `rows` by `cols` (the other `by` variables at
#' their totals), margins included, with each published cell's total and
#' the primary and secondary suppressions filled. Base graphics only.
#'
#' @param x An `sdc_protection` object from [protect_table()].
#' @param rows,cols `by` variables shown in rows and columns (`cols = NULL`
#'   for a one-way table).
#' @param col Fill colours of published, primary and secondary cells.
#' @param digits `NULL` (the default) to show whole totals exactly and
#'   others to 6 significant digits of the largest (in fixed notation), or
#'   a number of significant digits to round them to.
#' @param main Title.
#' @param ... Further graphical parameters passed to [graphics::plot.default()].
#' @returns `x`, invisibly.
#' @family tabular
#' @export
#' @examples
#' set.seed(2)
#' d <- data.frame(sector = sample(c("a", "b", "c"), 40, TRUE),
#'                 area = sample(c("x", "y"), 40, TRUE),
#'                 sales = round(rlnorm(40, 5, 1.2)))
#' plot(protect_table(cell_sensitivity(d, c("sector", "area"), "sales", rule_p(15))))
plot.sdc_protection <- function(x, rows = attr(x, "by")[1],
                                cols = if (length(attr(x, "by")) > 1) attr(x, "by")[2],
                                col = c(published = "grey95", primary = "#E06666",
                                        secondary = "#F6B26B"),
                                digits = NULL, main = NULL, ...) {
  validate_sdc_protection(x)
  by <- attr(x, "by")
  sub <- table_slice(x, by, rows, cols, attr(x, "total_label"))
  shown <- if (is.null(digits)) sub$total else signif(sub$total, digits)
  plot_table_grid(sub, x, rows, cols,
    fill = col[as.character(sub$status)],
    labels = ifelse(sub$status == "published", format_total(shown),
                    ifelse(sub$status == "primary", "X", "x")),
    legend_fill = col, legend = names(col),
    main = main %||% paste("Suppression pattern of", attr(x, "value")), ...
  )
  invisible(x)
}
