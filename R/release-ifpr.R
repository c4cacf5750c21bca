#' Release microdata with a proven bound on identification risk
#'
#' `ifpr()` perturbs the key variables of a data set with inverse-frequency
#' post-randomization (IFPR, an unbiased PRAM) so that no intruder's match of
#' a target unit is correct with probability above `xi`, and proves it: before
#' returning, it computes on the final plan the exact maximum of
#' \eqn{R_j(a, t)} over every cell of the table and every \eqn{a} the goal
#' covers, cells outside the blocks included (\eqn{R = 1 / T} there), and
#' raises an error rather than return a release above `xi`. This is the
#' four-step procedure of Nayak, Zhang and You (2016, Section 5), extended to
#' any \eqn{\xi \in (0, 1)}.
#'
#' @section The steps:
#' * **Steps 1-2.** `keys` are the key variables. `also` are non-key variables
#'   perturbed jointly with them: they enter the cross-classification, so a
#'   record that moves takes every value of its new cell and no new
#'   combination of values appears.
#' * **Step 3, partitioning.** `partition` says, for any variable of `keys` or
#'   `also`, how records may move: `"keep"` (the variable never changes), a
#'   named vector mapping values to groups (`c(White = "white", Black =
#'   "black", Asian = "other", ...)`), a list of level sets, or breaks for a
#'   numeric variable (groups \eqn{[b_k, b_{k+1})}; values change only within
#'   their group). Variables not named change freely. The procedure runs
#'   separately in every partition set (a combination of groups) and no
#'   record leaves its set. A set that cannot hold the blocks it needs is
#'   an error listing each such set and what it lacks; with
#'   `on_infeasible = "merge"` it is merged into the most similar set (fewest
#'   partition variables that differ, then the closest groups in their order,
#'   then the larger set, then the lower set number) until every set is
#'   feasible, and the result lists every merge.
#' * **Step 4, blocks.** `method = "nayak"` is the paper's procedure for
#'   \eqn{\xi > 1/3} (Goal 1: any \eqn{\xi}): one \eqn{\theta_0} from
#'   [ifpr_theta()], one block per set with all its singleton (Goal 1) or
#'   singleton and doubleton cells, padded with its smallest larger cells up
#'   to \eqn{m_0} cells, split into blocks of at least \eqn{m_0} cells when
#'   `split = TRUE`. `method = "tiered"` (the default) reaches any \eqn{\xi}:
#'   the cells that need protection (count below \eqn{1/\xi} for Goal 3,
#'   singletons for Goals 1 and 2) are taken by count \eqn{f}, smallest
#'   first; cells of count \eqn{f} form blocks of the minimum size
#'   \eqn{\lceil f / (f - \theta_f) \rceil} (2 for Goals 1 and 2) with
#'   \eqn{\theta_f} solving \eqn{\psi(f, \theta) = \xi} ([ifpr_theta_ghatak()]);
#'   a tier with too few cells is padded with cells of larger count \eqn{c}
#'   for which \eqn{\psi(c, \theta_f) \le \xi}, those needing protection
#'   first. Small blocks give less variance (Section 6, eq. 6.3-6.4).
#' * **Least damage.** `method = "optimal"` chooses which cells share a block
#'   and the transition inside each block to damage the data least, in the
#'   measure `damage` (see [pram_damage()]): the expected number of key
#'   values changed (`"keys"`, each key weighted by `weights`), of records
#'   changed (`"records"`), the total perturbation variance (`"variance"`,
#'   eq. 6.3), or a distance in which the keys named in `ordered` cost the
#'   difference of their values (`"distance"`: age moved by one year costs
#'   less than by forty). It searches the unbiased PRAMs in which no unit is
#'   likelier to move to any one other cell than to stay (\eqn{p_{jj} \ge
#'   p_{ij}}, so that the released cell stays the intruder's best guess and
#'   \eqn{R_j(a, t)} is the risk that matters): cells needing protection are
#'   taken by count; each count's cells are cut into the smallest blocks that
#'   meet the bound, with the smallest \eqn{\theta} that meets it exactly,
#'   along the order of the keys in which cells that differ in one key (or,
#'   ordered, by little) are adjacent; a count with too few cells forms a
#'   block with the nearest cells, fitted with IFPR or with flows that let
#'   cells of different counts move different numbers of units
#'   (\eqn{\phi_{ij} \propto T_i^g T_j^g}, symmetric, hence unbiased). A
#'   partition set of at most 10 cells is searched exhaustively: its design
#'   has the least damage of every collection of blocks of its cells (cells
#'   that need no protection included), each with IFPR or these flows
#'   (\eqn{g = 1/2} or 1) at any scale with \eqn{p_{jj} \ge p_{ij}}, as the
#'   tests check against brute force on tables of 4 to 6 cells. Larger sets
#'   are cut by the steps above, with no proof of optimality. Other unbiased
#'   matrices are not searched, nor moves likelier than staying: the tiered
#'   design allows those (\eqn{\theta} up to \eqn{T}), and it can then
#'   damage less, or reach a `xi` this design cannot: under Goals 1 and 2 on
#'   tiny tables (the tests), and under Goal 3 for a sample release, whose
#'   per-cell bounds let the tiered design's larger blocks move units more
#'   cheaply (on a 5% sample of a census of \eqn{10^7}, 2.5% fewer key values
#'   and 11% fewer records than this design; `bench/README.md` in the
#'   sources).
#'   Every block meets the bound exactly, so `calibrate` does not apply; the
#'   certificate still recomputes the exact maximum risk on the final plan.
#'   Under Goal 3 it also states a lower bound on the damage of any unbiased
#'   PRAM that meets the bound, blocks and matrices alike: a unit of cell
#'   \eqn{t} stays with probability at most \eqn{b_t T_t}, with \eqn{b_t}
#'   the cell's bound (`xi`, or for a sample release its own bound) (as
#'   \eqn{\sum_a a R_t(a, t) P(S_t = a)} is that probability, and at most
#'   \eqn{b_t E(S_t) = b_t T_t}), so at least \eqn{\sum_t T_t (1 - b_t
#'   T_t)} records change, over the cells with \eqn{T_t < 1 / b_t}, and at
#'   least the smallest of `weights` times as many key values.
#' * **Calibration.** `calibrate = "bound"` keeps the \eqn{\theta} of the bound
#'   \eqn{\psi}. `calibrate = "exact"` lowers \eqn{\theta} block by block, by
#'   bisection, to the smallest value found whose exact maximum risk over the
#'   block still meets the goal, so that fewer records change; the
#'   certificate reports what it saved in expected changed records and in
#'   total perturbation variance (eq. 6.3).
#'
#' @param data A data frame, or an `sdcMicroObj` (see below).
#' @param keys Names of the key variables.
#' @param xi The risk bound, in (0, 1).
#' @param goal `"all_matches"` (Goal 3: every cell, every number of matches
#'   \eqn{a}), `"unique_matches"` (Goal 2: every cell, \eqn{a = 1}) or
#'   `"sample_uniques"` (Goal 1: singleton cells, \eqn{a = 1}); see
#'   [max_match_risk()].
#' @param partition Named list of partition rules, see the steps above.
#' @param also Names of non-key variables perturbed jointly with the keys.
#' @param method How blocks are built (step 4 below): `"tiered"` (the
#'   default; any `xi`, blocks of the minimum size for each cell count, so
#'   less variance) or `"nayak"` (the paper's procedure, one block per
#'   partition set, for `xi > 1/3`; any `xi` under Goal 1) or `"optimal"`
#'   (least damage: see "Least damage" above and `damage`).
#' @param calibrate `"exact"` (the default: each block's theta lowered to
#'   the smallest value whose exact maximum risk still meets the goal, so
#'   fewer records change) or `"bound"` (the theta of the bound psi).
#'   `method = "optimal"` fits every block exactly already.
#' @param on_infeasible What to do with a partition set too small for the
#'   blocks it needs: `"error"` (the default; the error lists each such
#'   set and what it lacks) or `"merge"` (merge it into the most similar
#'   set, and list every merge in the result).
#' @param ... Passed on to methods; must be empty for data frames.
#' @param na Missing key values: `"exclude"` (records with a missing key or
#'   `also` value are never perturbed) or `"category"`; see
#'   [cell_frequencies()] and the section on missing key values.
#' @param split For `method = "nayak"`: split each set's block into blocks of
#'   at least \eqn{m_0} cells.
#' @param known Intruders who know only some of the keys, whom the release
#'   is designed and certified for too: `NULL` (the default: only an intruder
#'   who knows every key), a character vector of keys (one such intruder), a
#'   list of them, or `TRUE` (every nonempty subset of the keys); a set that
#'   names no key is an error. See the section on intruders who know fewer
#'   keys.
#' @param damage For `method = "optimal"`: the damage to minimise,
#'   `"keys"` (the default), `"records"`, `"variance"` or `"distance"`; see
#'   [pram_damage()].
#' @param weights For `method = "optimal"`: the cost of a change of each
#'   key, named by keys (others cost 1); see [pram_damage()].
#' @param ordered For `method = "optimal"` with `damage = "distance"`: keys
#'   whose values have an order (numbers or ordered factors), a change
#'   costing the difference of their values.
#' @param households For an `sdcMicroObj` with households (`hhId`):
#'   `"error"` (the default) refuses a release that would change a
#'   household-level variable or a household's head person by person;
#'   `"ignore"` perturbs them person by person knowingly. See the section
#'   on households.
#' @param population,target_in_file For a sample release: the population the
#'   file was sampled from (its counts by the keys and `also`, or a
#'   [population_model()]; sampling weights may name a column of `data`)
#'   and whether the intruder knows that his target is in the file
#'   (`"known"`, the default) or not (`"unknown"`). See the section on
#'   sample releases.
#'
#' @returns An object of class `sdc_release`: a list with
#'   * `data`: the released data: same rows in the same order, same columns
#'     and types; only `keys` and `also` of records in blocks can change;
#'   * `plan` (the final `pram_plan`), `cells` (the `sdc_cells` of the
#'     original data), `new_cell` (the released cell of every record);
#'   * `sets`: one row per partition set (records, cells, cells needing
#'     protection, blocks, the set it was merged into), `merges`, and
#'     `set_of_cell`, the partition set of every cell before merges;
#'   * `certificate`: goal, `xi`, the exact maximum risk with its cell and
#'     \eqn{a}, method, calibration, \eqn{\theta} per block (in `plan`),
#'     records and cells perturbed and changed, and the savings of exact
#'     calibration; for `method = "optimal"` also `design`: the damage
#'     minimised, the final plan's damage in every measure (`values`) and,
#'     under Goal 3, the `lower` bound on records and key values changed.
#' @section Intruders who know fewer keys:
#'   An intruder who knows only the keys \eqn{S} of his target cannot tell
#'   apart the cells that share their \eqn{S}-values: his cell is their set
#'   \eqn{D}, a move between two cells of \eqn{D} is no move for him, and
#'   his risk is \eqn{R_D(a, t)} (see [max_match_risk_known()]). A block of
#'   cells that differ only in keys he does not know does not protect
#'   against him. A necessary condition (Goal 3): a unit of cell \eqn{j} in
#'   \eqn{D} must stay in \eqn{D} with probability at most \eqn{\xi T_D}
#'   (as \eqn{\sum_a a R_D(a, t) P(S_D = a)} is that probability and at most
#'   \eqn{\xi E(S_D) = \xi T_D}), so the units of a small \eqn{D} must
#'   leave it, which partners in other sets \eqn{D} give them.
#'
#'   With `known`, `ifpr()` first designs for the intruder who knows every
#'   key, as without it, and certifies every declared intruder exactly; if
#'   all are met, that is the release (the same plan, bit for bit, as
#'   without `known`). Otherwise it repairs the design, in up to 6 rounds,
#'   each certified again exactly: the cells whose own \eqn{R_D(a, t)} is
#'   above the bound are found, and the cells of their sets \eqn{D} are kept
#'   in different blocks (the tiered design: a tier that cannot keep them
#'   apart is padded with cells of other sets \eqn{D}; the least-damage
#'   design, whose search does not see the sets, is steered by costlier
#'   moves in the keys such an intruder does not know); from the second round
#'   on, these cells also get tighter bounds of their own, by the excess
#'   found, so that more of their units leave \eqn{D}. When the
#'   least-damage design cannot be repaired so, the repair starts again
#'   with the partition sets that hold those cells designed by the tiered
#'   design. The first plan that meets the bound for every declared
#'   intruder, and for the intruder who knows every key, is the release; if
#'   no round meets them, `ifpr()` stops with `sdcRisk_error_certificate`
#'   and returns nothing. A design that meets every declared intruder as it
#'   is stays unchanged; the repair only turns some certificate errors into
#'   releases.
#' @section Sample releases:
#'   With `target_in_file = "unknown"` the intruder draws his target from the
#'   population: a cell of \eqn{t_j} records and \eqn{F_j} population units
#'   has the risk \eqn{(t_j / F_j) R_j(a, t)} (see [match_risk()]), so it
#'   needs \eqn{R_j(a, t) \le \min(1, \xi F_j / t_j)} only: cells whose
#'   population is large need less protection. The calibration and the
#'   certificate hold these per-cell bounds exactly (the core's maximum of
#'   \eqn{(t_j / F_j) R_j(a, t)}); the certificate, print and summary say
#'   that the release is certified for a target who may not be in the file,
#'   with the population or model (an estimate when \eqn{F} comes from a
#'   [population_model()]). The blocks are still those of the in-file design
#'   in this version; exact calibration lowers \eqn{\theta} (to 0 where the
#'   population alone protects every cell of a block).
#' @section sdcMicro objects:
#'   For an `sdcMicroObj` (package sdcMicro), `keys` default to the object's
#'   categorical key variables; the perturbed values are written back into
#'   them (factor levels kept), the transition information is stored in the
#'   object's `pram` slot as sdcMicro's own `pram()` does, the certificate is
#'   stored with the object's risk results, and the object is returned
#'   (after `nextSdcObj()`, so that `undolast()` works).
#' @section Households:
#'   An `sdcMicroObj` made with `hhId` holds persons in households. IFPR is
#'   a person-level PRAM: it moves one record at a time, and its certificate
#'   bounds the risk of matching a *person*. Two kinds of variable tie the
#'   members of a household together, and a person-level PRAM breaks them:
#'   a household-level variable (one value in every household of two or
#'   more records: water, roof, walls) would get several values within a
#'   household, and a role held by exactly one member of every household
#'   (the head, a value of the relationship variable) would be lost by some
#'   households and doubled in others. A careful statistical office releases
#'   neither: the inconsistency is visible to an intruder (who learns which
#'   records were changed), breaks household-level analysis, and the
#'   certificate says nothing about re-identifying a household.
#'
#'   So, with `households = "error"` (the default), `ifpr()` finds these
#'   variables among the keys and `also` (from the data, in the object's
#'   households) and stops with an error of class
#'   `sdcRisk_error_households` if the final plan can change any of them
#'   (an expected number of moved records above zero); no release is
#'   returned. A household-level key kept fixed (`partition = list(water =
#'   "keep")`) is allowed. What to do instead: release household variables
#'   in a household-level file (one record per household, e.g. with
#'   `ifpr()` on that file) and certify that file; or keep them fixed in
#'   the person file.
#'
#'   `households = "ignore"` perturbs them person by person knowingly: the
#'   returned object may then have households with several values of a
#'   household variable and without (or with two) heads.
#'
#'   In both cases the certificate (and its print) says what it covers:
#'   persons as targets, with person-level keys (age, sex) perturbed per
#'   person; an intruder who knows the composition of a household (and
#'   matches its members jointly) is not covered.
#' @section Missing key values:
#'   With `na = "exclude"` (the default), a record with a missing value in any
#'   key (or `also` variable) is in no cell: it is released exactly as it is,
#'   and the release's print and summary say how many such records there
#'   are. It does not count in the cells of the others, so the certificate
#'   covers the records in cells; an intruder who knows that a target's key
#'   is missing finds its record unchanged.
#'
#'   With `na = "category"`, `NA` is one more category of each key, and PRAM
#'   treats it like any other: records can move *into* the missing category
#'   (a released `NA` may have had a value) and *out of* it. That is what
#'   protects records with missing values, but it changes the number of
#'   missing values of a key. To keep every missing value where it is while
#'   protecting the records, put `NA` in a partition group of its own, e.g.
#'   `partition = list(race = list(known = levels(d$race), missing = NA))`:
#'   no record then enters or leaves the missing race, while its other keys
#'   can still change.
#' @references Nayak, T. K., Zhang, C. and You, J. (2016), Sections 4-6.
#'   Ghatak, D. et al. (2018), Sections 2-3.
#' @family release
#' @order 1
#' @export
#' @examples
#' set.seed(1)
#' rel <- ifpr(pums_md, c("sex", "age", "race", "marital", "puma"), xi = 0.3,
#'   partition = list(sex = "keep", age = c(0, 18, 25, 35, 45, 55, 65, Inf))
#' )
#' rel
#' rel$certificate$risk
#' head(rel$data)
ifpr <- function(data, ...) UseMethod("ifpr")

#' @export
ifpr.default <- function(data, ...) {
  check_data_frame(data)
}

#' @rdname ifpr
#' @order 2
#' @export
ifpr.data.frame <- function(data, keys, xi,
                            goal = c("all_matches", "unique_matches", "sample_uniques"),
                            partition = NULL, also = NULL, method = c("tiered", "nayak", "optimal"),
                            calibrate = c("exact", "bound"), on_infeasible = c("error", "merge"),
                            ..., na = c("exclude", "category"), split = FALSE, known = NULL,
                            damage = c("keys", "records", "variance", "distance"), weights = NULL, ordered = NULL,
                            population = NULL, target_in_file = c("known", "unknown")) {
  rlang::check_dots_empty()
  check_data_frame(data)
  check_names_in(keys, data)
  goal <- check_choice(goal)
  method <- check_choice(method)
  design <- list(damage = if (!missing(damage)) check_choice(damage), weights = weights, ordered = ordered)
  check_design_args(method, design)
  calibrate <- check_choice(calibrate)
  on_infeasible <- check_choice(on_infeasible)
  na <- check_choice(na)
  check_ifpr_common(data, keys, xi, also, goal, method, split)
  vars <- c(keys, also)
  # a bar over the steps (about their share of the time at 10^7 records)
  bar <- progress_bar(paste("ifpr():", n_of(nrow(data), "record")))
  progress_set(bar, 0, "cross-classifying")
  cf <- cell_frequencies(data, vars, na = na)
  smp <- sample_of(cf, population, target_in_file, data = data)
  progress_set(bar, 0.3, "designing blocks and certifying")
  # a sample: cell j needs R_j(a, t) <= xi F_j / t_j only (risk-sample.R)
  d <- ifpr_design(cf, vars, keys, xi, goal, partition, method, calibrate, on_infeasible, split,
    known = known, bound = if (!is.null(smp)) pmin(1, xi / smp$weight), design = design
  )
  d <- ifpr_sample_certificate(d, smp, goal, xi, known_subsets(known, vars))
  plan <- d$plan
  new_cell <- plan_draw(plan, cf$cell_id, ep = d$ep, progress = progress_part(bar, 0.6, 0.8, "drawing"))
  progress_set(bar, 0.8, "writing the keys")
  changed <- changed_records(cf$cell_id, new_cell)
  released <- write_cells(data, cf, changed, new_cell[changed])
  new_sdc_release(
    data = released, design = d, cells = cf, new_cell = new_cell, keys = keys, also = also, xi = xi,
    goal = goal, method = method, calibrate = calibrate, partition = partition,
    records_changed = length(changed), sample = smp
  )
}

# For a sample, the certificate of the designed plan (`d` of ifpr_design())
# is the maximum of (t_j / F_j) R_j(a, t), the risk of a target who may not
# be in the file: the design met R_j(a, t) <= bound[j] = min(1, xi F_j /
# t_j), which is the same, and the certificate reports the sample's own
# weights (not xi / bound, which is xi where the bound is 1).
ifpr_sample_certificate <- function(d, smp, goal, xi, subsets, call = rlang::caller_env()) {
  if (is.null(smp)) return(d)
  d$mx <- add_sample(plan_max_risk(d$plan, goal, d$plan$cells$keys, d$ep, call = call, weight = smp$weight), smp)
  if (!is.null(subsets)) d$known <- plan_max_risk_known(d$plan, goal, subsets, d$ep, smp, call = call)
  risks <- c(d$mx$risk, d$known$risk)
  worst <- if (all(is.na(risks))) NA_real_ else max(risks, na.rm = TRUE)
  if (!is.na(worst) && worst > xi) {
    abort_sdc(c(
      "The release does not meet its bound for a target who may not be in the file: the exact maximum risk is {format(worst, digits = 8)} > xi = {xi}.",
      "i" = "No release is returned. Please report this with the data's cell counts and the population."
    ), "certificate", call = call)
  }
  d
}

# The checks shared by the data frame and database methods of ifpr(), after
# the choices are matched. `data` is anything check_names_in() takes.
check_ifpr_common <- function(data, keys, xi, also, goal, method, split, call = rlang::caller_env()) {
  check_probability(xi, class = "xi", call = call)
  check_flag(split, call = call)
  check_also(also, keys, data, call = call)
  check_names_free(keys, cell_columns, call = call)
  if (!is.null(also)) check_names_free(also, cell_columns, call = call)
  if (method == "nayak" && goal != "sample_uniques" && xi <= 1 / 3) {
    abort_sdc(c(
      "{.code method = \"nayak\"} cannot reach {.arg xi} = {xi} for goal {.val {goal}}.",
      "x" = "Its theta is at most 1, which leaves cells of count 1 or 2 with a risk of at least 1/3 (Nayak, Zhang and You 2016, Section 4.2).",
      "i" = "Use {.code method = \"tiered\"}, which reaches any xi in (0, 1)."
    ), "infeasible", call = call, arg = "xi")
  }
  invisible()
}

# Steps 3-4, calibration and the certificate, from the cell counts alone:
# shared by the data frame and the database methods, so that both build the
# same plan from the same counts.
#
# `bound`: NULL (every cell's risk bound is xi) or one bound per cell in
# (0, 1]: the design makes R_t(a, t) <= bound[t] for every cell t and a of
# the goal (a sample's intruder who does not know whether the target is in
# the file, issue 34, sets bound[t] = min(1, xi F_t / f_t)); calibration and
# certificate hold it exactly as the maximum of w_t R_t(a, t) <= ref with the
# core's per-cell weights w_t = ref / bound[t], ref = min(xi, bound) (so
# every weight is in (0, 1]). With every bound equal to xi the plan is the
# same as with NULL, bit for bit.
#
# `design`: the damage, weights and ordered keys of ifpr() (method "optimal").
ifpr_design <- function(cf, vars, keys, xi, goal, partition, method, calibrate, on_infeasible,
                        split, known = NULL, call = rlang::caller_env(), bound = NULL, design = NULL) {
  uniform <- is.null(bound)
  bound <- risk_bounds(bound, xi, nrow(cf$cells), call = call)
  ref <- min(xi, bound)
  weight <- if (!uniform) ref / bound
  subsets <- known_subsets(known, vars, call = call)
  opts <- if (method == "optimal") {
    optimal_options(cf, goal, utils::modifyList(list(damage = "keys"), Filter(Negate(is.null), design)), call = call)
  }
  groups <- partition_groups(cf$cells, vars, partition, call = call)
  if (length(partition) > 0 && all(keys %in% names(partition)) &&
    all(vapply(partition[keys], identical, logical(1), "keep"))) {
    abort_sdc(c(
      "{.arg partition} keeps every key fixed: no record could change.",
      "i" = "Let at least one key change, at least within groups."
    ), "partition", call = call, arg = "partition")
  }
  ps <- partition_sets(groups)
  # steps 3-4 and calibration with design bounds `dbound` (the bounds
  # themselves, or tighter ones for intruders who know fewer keys) and what
  # the design avoids for them (design-known.R); the full-key certificate
  # always holds the bounds themselves
  build <- function(dbound, avoid = NULL) {
    o <- opts
    if (!is.null(avoid$weights)) o$core$weights <- avoid$weights
    des <- design_release(cf, ps$set_of_cell, ps$sets, dbound, goal, method, split, on_infeasible,
      opts = o, call = call, avoid = avoid
    )
    plan_bound <- ifpr_plan(
      cf,
      cells = unlist(lapply(des$design, `[[`, "cells")),
      sizes = unlist(lapply(des$design, `[[`, "sizes")),
      theta = unlist(lapply(des$design, `[[`, "theta")),
      matrix = unlist(lapply(des$design, `[[`, "matrix"))
    )
    plan <- plan_bound
    # the plans as the core reads them: ifpr_plan() has validated plan_bound;
    # the calibrated plan differs in theta only, which the core computed and
    # checks again (sdcRisk::check_plan(): finite, in [0, min T] of its block)
    # whenever it reads the plan
    ep_bound <- ep <- block_engine_list(plan_bound)
    # the least-damage design fits every block exactly already
    if (calibrate == "exact" && method != "optimal" && length(plan$theta) > 0) {
      dref <- ref
      dweight <- weight
      if (!identical(dbound, bound)) {
        dref <- min(xi, dbound)
        dweight <- dref / dbound
      }
      plan$theta <- core_call(cpp_calibrate_ifpr, engine_weighted(ep_bound, dweight, call = call), goal,
                              dref * (1 - 1e-9), call = call)
      ep <- block_engine_list(plan)
    }
    mx <- plan_max_risk(plan, goal, plan$cells$keys, ep, call = call, weight = weight)
    list(plan = plan, plan_bound = plan_bound, ep = ep, ep_bound = ep_bound, des = des, mx = mx)
  }
  b <- build(bound)
  check_certificate(b$mx, ref, call = call)
  kr <- NULL
  if (!is.null(subsets)) {
    # intruders who know fewer keys: R_D(a, t) for every set D of cells that
    # share their known values (max_match_risk(known =)); when one is above
    # the bound, the design is repaired for him (design-known.R)
    kr <- plan_max_risk_known(b$plan, goal, subsets, b$ep, call = call, weight = weight)
    if (!known_met(kr, ref)) {
      rebuild <- function(dbound, avoid) {
        tryCatch(build(dbound, avoid), sdcRisk_error_infeasible = function(e) NULL)
      }
      fixed <- known_repair(b, kr, rebuild, cf, goal, subsets, bound, ref, weight, opts = opts,
                            method = method, call = call)
      if (is.null(fixed)) abort_known_certificate(kr, ref, call)
      kr <- fixed$kr
      b <- fixed[names(b)]
    }
  }
  plan <- b$plan
  ep <- b$ep
  list(plan = plan, plan_bound = b$plan_bound, ep = ep, ep_bound = b$ep_bound, ps = ps, des = b$des, mx = b$mx,
       known = kr, bound = if (!uniform) bound, design = if (!is.null(opts)) design_summary(plan, ep, opts, bound))
}

# The certificate error of an intruder who knows fewer keys (`kr`, above
# `ref` in its first row) whom no design of known_repair() met.
abort_known_certificate <- function(kr, ref, call) {
  abort_sdc(c(
    "The release does not meet its bound for an intruder who knows only {.val {strsplit(kr$known[1], ', ')[[1]]}}: the exact maximum risk is {format(kr$risk[1], digits = 8)} > xi = {ref}.",
    "x" = "At cell {kr$cell[1]} (T_D = {kr$count_known[1]} records share its known values), a = {kr$a[1]}.",
    "i" = "The design was repaired for such intruders (blocks across the values they know, tighter bounds) in up to {known_repair_rounds} rounds, and no round met every one of them.",
    "i" = "Let more keys change (see {.arg partition}), use a larger {.arg xi}, or leave that intruder out of {.arg known}.",
    "i" = "No release is returned."
  ), "certificate", call = call, arg = "known")
}

# The risk bound of every cell: `bound` checked, or xi for every cell.
risk_bounds <- function(bound, xi, n_cells, call = rlang::caller_env()) {
  if (is.null(bound)) return(rep(xi, n_cells))
  if (!is.numeric(bound) || length(bound) != n_cells || anyNA(bound) || any(bound <= 0 | bound > 1)) {
    abort_sdc(c(
      "{.arg bound} must hold one risk bound in (0, 1] per cell ({fmt_int(n_cells)}).",
      "x" = "It is {.obj_type_friendly {bound}} of length {length(bound)}{if (is.numeric(bound) && length(bound)) paste0(', range ', paste(format(range(bound)), collapse = ' to ')) else ''}."
    ), "bound", call = call, arg = "bound")
  }
  as.numeric(bound)
}

# The certificate on the final plan, or an error: `mx` the exact maximum of
# w_t R_t(a, t) with the weights ref / bound[t] (plan_max_risk(weight =)),
# which is at most `ref` iff every cell meets its own bound.
check_certificate <- function(mx, ref, call = rlang::caller_env()) {
  if (is.na(mx$risk) || mx$risk <= ref) return(invisible())
  abort_sdc(c(
    "The release does not meet its bound: the exact maximum risk is {format(mx$risk, digits = 8)} > xi = {ref}.",
    "x" = "At cell {mx$cell} (count {mx$count}), a = {mx$a}.",
    "i" = "No release is returned. Please report this with the data's cell counts."
  ), "certificate", call = call)
}

# The sets of keys an intruder may know, from ifpr()'s `known`: NULL (only
# every key), one character vector, a list of them, or TRUE (every nonempty
# subset).
known_subsets <- function(known, keys, call = rlang::caller_env()) {
  if (is.null(known)) return(NULL)
  if (isTRUE(known)) {
    return(unlist(lapply(seq_along(keys), function(k) utils::combn(keys, k, simplify = FALSE)),
      recursive = FALSE
    ))
  }
  if (is.character(known)) known <- list(known)
  if (!is.list(known) || length(known) == 0) {
    abort_sdc(c(
      "{.arg known} must be {.code NULL}, {.code TRUE}, a character vector of keys or a list of them.",
      "x" = "It is {.obj_type_friendly {known}}."
    ), "known", call = call, arg = "known")
  }
  # a set that names no key is no intruder (check_known() would read NULL
  # as every key)
  empty <- which(lengths(known) == 0)
  if (length(empty) > 0) {
    abort_sdc(c(
      "Every set of {.arg known} must name at least one key.",
      "x" = "{if (length(empty) == 1) 'Set' else 'Sets'} {empty} name{if (length(empty) == 1) 's' else ''} no key.",
      "i" = "The keys are {.val {keys}}; use {.code NULL} for an intruder who knows every key."
    ), "known", call = call, arg = "known")
  }
  lapply(known, check_known, keys = keys, call = call)
}

# A block plan from flat vectors (cells in block order, block sizes, theta
# with NA for a block given by a matrix, and those blocks' column-major
# matrices one after another): the fast path of pram_plan() for designs with
# up to millions of blocks. `cf` comes from cell_frequencies() in the same
# call (ifpr() on a data frame or a database table), so its records' cells
# are not counted again.
ifpr_plan <- function(cf, cells, sizes, theta, matrix = NULL) {
  nb <- length(sizes)
  theta <- as.numeric(theta %||% numeric())
  msize <- ifelse(is.na(theta), as.numeric(sizes)^2, 0)
  matrix_start <- c(0, cumsum(msize))[seq_len(nb)]
  matrix_start[!is.na(theta)] <- NA_real_
  plan <- structure(
    list(
      cells = cf,
      block_start = as.integer(c(0L, cumsum(sizes))),
      block_cells = as.integer(cells %||% integer()),
      theta = theta,
      matrix = as.numeric(matrix %||% numeric()),
      matrix_start = matrix_start
    ),
    class = c("pram_plan", "pram_plan_any")
  )
  validate_pram_plan(plan, records = FALSE)
}

# A release of ifpr() on a data frame: the released data, the parts of
# every IFPR release, and the released cell of every record (`new_cell`).
new_sdc_release <- function(data, design, cells, new_cell, keys, also, xi, goal, method, calibrate,
                            partition, records_changed, sample = NULL) {
  s_new <- tabulate(new_cell, nbins = length(cells$cells$count)) # NA ignored
  parts <- ifpr_release_parts(design, cells, keys, also, xi, goal, method, calibrate, partition,
    records_changed = records_changed, s_new = s_new, sample = sample
  )
  first <- c("plan", "cells")
  structure(
    c(list(data = data), parts[first], list(new_cell = new_cell), parts[setdiff(names(parts), first)]),
    class = c("sdc_release", "sdc_release_any")
  )
}

# The parts of every IFPR release (ifpr() on a data frame or a database
# table): its plan and cells, the sets of the partition, the merges and
# the certificate, from the result of ifpr_design(), whose engine plans
# (`ep`, `ep_bound`) were validated there and are not made again. The
# realised changes come from the caller: `records_changed` and `s_new`, the
# released count of every cell.
ifpr_release_parts <- function(design, cells, keys, also, xi, goal, method, calibrate, partition,
                               records_changed, s_new, sample = NULL) {
  plan <- design$plan
  counts <- cells$cells$count
  bound <- design$bound %||% rep(xi, length(counts))
  members <- design$des$original
  n_blocks_set <- vapply(design$des$design, function(d) length(d$sizes), integer(1))
  set_table <- data.frame(
    set = design$ps$sets$set,
    label = design$ps$sets$label,
    records = vapply(members, function(m) sum(counts[m]), numeric(1)),
    cells = lengths(members),
    needing_protection = vapply(members, function(m) sum(needs_protection(counts[m], bound[m], goal)), integer(1)),
    blocks = n_blocks_set,
    merged_into = NA_integer_
  )
  set_table$merged_into[design$des$merges$set] <- design$des$merges$merged_into
  cost_exact <- plan_cost(plan, ep = design$ep, stay = FALSE)
  cost_bound <- plan_cost(design$plan_bound, ep = design$ep_bound, stay = FALSE)
  mx <- design$mx
  certificate <- new_sdc_certificate(
    goal = goal,
    xi = xi,
    risk = mx$risk,
    cell = mx$cell,
    a = mx$a,
    count = mx$count,
    cell_keys = mx$keys,
    method = method,
    calibrate = calibrate,
    blocks = length(plan$theta),
    cells_in_blocks = length(plan$block_cells),
    records_in_blocks = sum(counts[plan$block_cells]),
    theta_range = if (length(plan$theta)) range(plan$theta) else c(NA_real_, NA_real_),
    records_changed = records_changed,
    cells_changed = sum(s_new != counts),
    expected_changed = cost_exact$changed,
    expected_changed_bound = cost_bound$changed,
    total_variance = cost_exact$variance,
    total_variance_bound = cost_bound$variance,
    n_records = cells$n_records,
    n_excluded = cells$n_excluded %||% 0,
    known = design$known,
    design = design$design
  )
  certificate <- certificate_sample(certificate, mx)
  list(
    plan = plan, cells = cells, keys = keys, also = also, partition = partition,
    set_of_cell = design$ps$set_of_cell, sets = set_table, merges = design$des$merges,
    certificate = certificate, sample = sample
  )
}

# A release of ifpr() on a data frame: its data, cells, plan and released
# cells agree in their numbers of records and cells, the plan is valid for
# the cells, and every released cell is a cell.
#' @export
validate_release.sdc_release <- function(x, arg = "release", call = rlang::caller_env()) {
  hint <- "Use the object {.fn ifpr} returned, unmodified."
  if (!is.list(x) || !is.data.frame(x$data) || !inherits(x$cells, "sdc_cells") || !inherits(x$plan, "pram_plan")) {
    abort_invalid(arg, "its {.field data}, {.field cells} or {.field plan} are missing", hint, call)
  }
  validate_release_parts(x, arg, hint, call)
  counts <- x$cells$cells$count
  n <- nrow(x$data)
  if (n != x$cells$n_records || length(x$cells$cell_id) != n || length(x$new_cell) != n) {
    abort_sdc(c(
      "{.arg {arg}} does not hang together: its data, its cells and its released cells have different numbers of records.",
      "x" = "{fmt_int(n)} rows of data, {fmt_int(x$cells$n_records)} records in the cells, {fmt_int(length(x$new_cell))} released cells.",
      "i" = hint
    ), "release_mismatch", call = call, arg = arg)
  }
  nc <- x$new_cell
  if (!is.integer(nc) || is.object(nc) || !identical(is.na(nc), is.na(x$cells$cell_id)) ||
    any(nc < 1L | nc > length(counts), na.rm = TRUE)) {
    abort_invalid(arg, "its {.field new_cell} must hold a cell id for every record in a cell", hint, call)
  }
  check_release_columns(x, arg, hint, call)
  invisible(x)
}

# The keys (and `also`) of a release are columns of its data.
check_release_columns <- function(x, arg, hint, call) {
  vars <- c(x$keys, x$also)
  if (!is.character(vars) || !identical(vars, x$cells$keys) || !all(vars %in% names(x$data))) {
    abort_invalid(arg, "its keys are not the columns its cells were made of", hint, call)
  }
  invisible()
}

# The certificate of a release: a list of class `sdc_certificate`, printed
# as on the release (also where ifpr() stores it in an sdcMicroObj).
new_sdc_certificate <- function(...) structure(list(...), class = "sdc_certificate")

# Lines describing a certificate: goal, risk, blocks, changes, calibration,
# each within PRINT_WIDTH columns (the cell's keys on lines of their own).
certificate_lines <- function(cert, n) {
  saved <- cert$expected_changed_bound - cert$expected_changed
  lapply(list(
    goal = paste0("Goal: ", goal_label(cert$goal)),
    risk = risk_lines(paste0("Certificate (", tolower(risk_kind(cert$sample)), " maximum risk)"), cert,
                      cert$cell_keys, xi = cert$xi, n_excluded = cert$n_excluded),
    method = paste0(cert$method, ", calibration ", cert$calibrate),
    blocks = paste0(
      n_of(cert$blocks, "IFPR block"), " over ", fmt_int(cert$cells_in_blocks), " cells (",
      fmt_int(cert$records_in_blocks), " records)",
      if (cert$blocks > 0) paste0(", theta ", format(cert$theta_range[1], digits = 3),
        if (diff(cert$theta_range) > 0) paste0(" to ", format(cert$theta_range[2], digits = 3)) else "") else ""
    ),
    changed = sprintf("Changed: %s records (%.2f%%; expected %.1f), %s cells changed count",
      fmt_int(cert$records_changed), 100 * cert$records_changed / n, cert$expected_changed,
      fmt_int(cert$cells_changed)),
    known = if (!is.null(cert$known) && nrow(cert$known) > 0) {
      w <- cert$known[1, ]
      sprintf("Also certified for intruders who know fewer keys (%s): worst R = %s when they know %s",
        n_of(nrow(cert$known), "set"), format(w$risk, digits = 6), w$known)
    },
    design = if (!is.null(cert$design)) design_line(cert$design),
    calibration = if (cert$calibrate == "exact" && cert$blocks > 0 && is.null(cert$design)) {
      sprintf("Exact calibration saved %.1f expected changed records (%.1f%%) and %.1f%% of the total perturbation variance",
        saved, 100 * saved / max(cert$expected_changed_bound, 1e-300),
        100 * (1 - cert$total_variance / max(cert$total_variance_bound, 1e-300)))
    }
  ), function(l) if (is.null(l)) NULL else wrap_lines(l))
}

#' @export
format.sdc_certificate <- function(x, ...) {
  l <- certificate_lines(x, x$n_records)
  c("<sdc_certificate> of an IFPR release", l$goal, l$risk, l$known, households_line(x$households),
    paste0("Method ", l$method), l$blocks, l$changed, l$design, l$calibration)
}

# What the certificate of a release of an sdcMicroObj with households
# (`hhId`) covers: persons, not households (issue 37, item 5).
households_line <- function(hh) {
  if (is.null(hh)) return(NULL)
  wrap_lines(households_text(hh))
}

households_text <- function(hh) {
  roles <- paste0(names(hh$roles), " = ", unlist(hh$roles), collapse = ", ")
  what <- if (length(hh$perturbed) + length(hh$roles) > 0) {
    paste0("ignored (households = \"ignore\"): ",
           if (length(hh$perturbed)) paste0("household-level ", paste(hh$perturbed, collapse = ", "),
                                            " changed person by person (a household may hold several values)"),
           if (length(hh$perturbed) && length(hh$roles)) "; ",
           if (length(hh$roles)) paste0(roles, " (one per household) may be lost or doubled"))
  } else {
    "no household-level variable or head changes"
  }
  paste0("Households (", hh$id, ", ", fmt_int(hh$n), "): ", what,
         "; persons are the targets: an intruder who knows a household's composition is not covered")
}

#' @export
print.sdc_certificate <- function(x, ...) {
  writeLines(format(x, ...))
  invisible(x)
}

#' @export
format.sdc_release <- function(x, ...) {
  x <- as_release(x, arg = "x", call = rlang::current_env())
  cert <- x$certificate
  n <- x$cells$n_records
  keys_txt <- paste(x$keys, collapse = ", ")
  if (length(x$also)) keys_txt <- paste0(keys_txt, " (jointly with ", paste(x$also, collapse = ", "), ")")
  live <- sum(is.na(x$sets$merged_into))
  l <- certificate_lines(cert, n)
  wrap_lines(c(
    paste0("<sdc_release>: ", n_of(n, "record"), "; keys ", keys_txt),
    l$goal,
    l$risk,
    l$known,
    paste0(
      "Partition: ", n_of(live, "set"),
      if (nrow(x$merges) > 0) paste0(" (", nrow(x$merges), " merged into others)") else "",
      "; method ", l$method
    ),
    l$blocks,
    l$changed,
    missing_key_line(x$cells),
    l$design,
    l$calibration
  ))
}

# The records a certificate does not cover: those with a missing key value
# when they are left out of the cells (na = "exclude"), released unchanged
# and matched by no cell. Lines under the certificate, NULL when none.
outside_certificate_text <- function(n_excluded) {
  n <- n_excluded %||% 0
  if (n == 0) return(NULL)
  c("  records with complete keys only:",
    paste0("    ", n_of(n, "record"), " with a missing key ", if (n == 1) "is" else "are", " outside the certificate"))
}

# What happened to records with a missing key value: left out of the
# cross-classification (never perturbed) or in a category of their own
# (which records can move into and out of). NULL when no key is missing.
missing_key_line <- function(cells) {
  if (identical(cells$na, "category")) {
    has_na <- any(vapply(cells$keys, function(k) anyNA(cells$cells[[k]]), logical(1)))
    if (!has_na) return(NULL)
    return("Missing key values form a category of their own (na = \"category\"): records can move into and out of it, unless a partition keeps it apart")
  }
  n <- cells$n_excluded %||% 0
  if (n == 0) return(NULL)
  paste0("Not perturbed: ", n_of(n, "record"), " with a missing key value (na = \"exclude\"), released as they are, outside the certificate")
}

#' @export
print.sdc_release <- function(x, ...) {
  writeLines(format(x, ...))
  invisible(x)
}

#' @export
summary.sdc_release <- function(object, ...) {
  object <- as_release(object, arg = "object")
  cert <- object$certificate
  counts <- object$cells$cells$count
  sizes <- diff(object$plan$block_start)
  blocks <- data.frame(
    block = seq_along(sizes), cells = sizes,
    records = if (length(sizes)) as.vector(tapply(counts[object$plan$block_cells], rep.int(seq_along(sizes), sizes), sum)) else numeric(),
    theta = object$plan$theta
  )
  structure(
    list(certificate = cert, sets = object$sets, merges = object$merges, blocks = blocks,
         n_records = object$cells$n_records, keys = object$keys, also = object$also,
         missing = missing_key_line(object$cells)),
    class = "summary.sdc_release"
  )
}

#' @export
print.summary.sdc_release <- function(x, ...) {
  cert <- x$certificate
  writeLines(wrap_lines(c(
    paste0("Release of ", fmt_int(x$n_records), " records; keys ", paste(c(x$keys, x$also), collapse = ", ")),
    paste0("Goal: ", goal_label(cert$goal), ", xi = ", format(cert$xi)),
    paste0(risk_kind(cert$sample), " maximum risk", if (!is.null(cert$sample)) paste0(" ", sample_line(cert$sample)), ": ",
      if (is.na(cert$risk)) "none (no event covered)" else format(cert$risk, digits = 8),
      if (!is.na(cert$risk)) paste0(" (cell ", cert$cell, ", T = ", cert$count, ", a = ", cert$a, ")")),
    sample_cell_line(cert)
  )))
  tab <- data.frame(
    quantity = c("blocks", "cells in blocks", "records in blocks", "records changed", "cells whose count changed",
                 "expected records changed", "expected changed with bound theta",
                 "total perturbation variance (eq. 6.3)", "with bound theta"),
    value = c(fmt_int(cert$blocks), fmt_int(cert$cells_in_blocks), fmt_int(cert$records_in_blocks),
              fmt_int(cert$records_changed), fmt_int(cert$cells_changed),
              format(cert$expected_changed, digits = 6), format(cert$expected_changed_bound, digits = 6),
              format(cert$total_variance, digits = 6), format(cert$total_variance_bound, digits = 6))
  )
  print(tab, row.names = FALSE, right = FALSE)
  if (!is.null(x$missing)) writeLines(wrap_lines(x$missing))
  cat("\nPartition sets:\n")
  sets <- x$sets
  # the set each was merged into, only when some set was merged
  if (all(is.na(sets$merged_into))) sets$merged_into <- NULL
  print(utils::head(sets, 20), row.names = FALSE)
  if (nrow(x$sets) > 20) cat("# ... ", nrow(x$sets) - 20, " more sets\n", sep = "")
  if (nrow(x$merges) > 0) {
    cat("\nMerges:\n")
    print(x$merges, row.names = FALSE)
  }
  invisible(x)
}
