# The floor plan ------------------------------------------------------------
#
# R/ is flat, so the file names carry the layout: one prefix per area, and
# tests/testthat/test-<file>.R tests R/<file>.R (the test files without an
# R file of their name test across files: test-contract*.R the one
# interface of every kind, test-bad-input.R classed errors everywhere,
# test-app-hostile.R the app attacked through every input,
# test-section7.R the paper's tables, test-core-cpp.R the C++ core alone,
# test-risk-vars.R the exact risk of per-variable plans, the core's
# risk_vars.hpp, through every exported function that certifies them).
#
# Microdata, in the order the data flow through a release:
#   design-cells.R      the nonempty cells of the keys (cell_frequencies())
#   design-blocks.R     partition of the keys, which cells need protection,
#                       blocks (tiered, Nayak) and their θ
#   design-theta.R      ψ, θ and block sizes of the papers (Goals 1-3)
#   design-optimal.R    the least-damage design (ifpr(method = "optimal"))
#   plan-interface.R    the generics every kind of plan answers
#   plan-blocks.R       block plans (IFPR and matrix blocks): pram_plan()
#   plan-vars.R         per-variable plans with strata: pram_plan_vars()
#   plan-matrices.R     sdcMicro's and ARGUS's per-variable matrices
#   plan-damage.R       what a plan costs in data quality: pram_damage()
#   risk-match.R        the exact risk R_j(a, t): match_risk(),
#                       max_match_risk(), max_match_risk_known()
#   risk-sample.R       sample releases: the risk of a target who may not
#                       be in the file, from the population counts
#   risk-sample-model.R population_model(): F estimated from the sample
#   risk-simulate.R     simulated intruders: simulate_release()
#   release-interface.R the generics every kind of release answers
#   release-ifpr.R      ifpr() on a data frame, the release and certificate
#   release-ifpr-sdcmicro.R  ifpr() on an sdcMicroObj
#   release-pram.R      pram_release(): per-variable PRAM, certified
#   release-pram-sdcmicro.R  pram_certify(): sdcMicro::pram() certified
#   release-draw.R      drawing a release from a plan
#   release-evaluate.R  release_risk(), release_utility() and their plots
#   release-publish.R   publish_plan(), read_plan(): what the data users
#                       get beside the released file
#   db-release.R        the same release inside a database: ifpr() on a
#                       lazy table, in one transaction, and its release
#   db-cells.R          the cells counted by the database
#                       (cell_frequencies() on a lazy table)
#   db-movers.R         the moves drawn in R and the ways the database
#                       finds the records they move
#   db-evaluate.R       release_risk() and release_utility() from counts
#   db-dialect.R        everything that differs between SQLite, PostgreSQL
#                       and other DBI backends: methods of a dialect
#   db-utils.R          what every backend needs beyond dplyr verbs (names,
#                       the tables a query reads, the transaction)
# The data user's side, from a released file and its publication:
#   estimate-data.R     the released file checked against its publication
#                       and aggregated by cell and group in one pass
#   estimate-table.R    estimate_table(): counts, totals, means and
#                       proportions with the perturbation's standard error
#   estimate-blocks.R   its moment estimator for block plans (IFPR blocks in
#                       closed form, matrix blocks inverted)
#   estimate-vars.R     ... for per-variable plans (Kronecker inverse per
#                       stratum, one key of `by` at a time)
#   estimate-ml.R       the maximum likelihood estimator (EM) where the
#                       moment estimator leaves the parameter space
#   estimate-models.R   estimate_glm(): linear, logistic and Poisson
#                       regression by a corrected estimating equation
# Tables:
#   table-sensitivity.R cell_sensitivity(), ptn_sensitivity()
#   table-rules.R       the rules (frequency, zero, nk, p%, pq, PTN)
#   table-hierarchy.R   hierarchies of classification variables
#   table-suppress*.R   protect_table(): the pattern, its search, the
#                       optimal pattern and the clean-up
#   table-audit.R       audit_table(): the attacker's exact LP
#   table-respondent.R  respondents as attackers: their knowledge, their
#                       audit and the suppressions that withstand them
#   table-linked.R      linked tables: protect_tables(), audit_tables()
#   table-lp.R          the LP solver (HiGHS) behind both
#   table-policy.R      every threshold, limit and budget of the above, each
#                       with the measurement that chose it
# Around them:
#   report.R            release_report()
#   app-*.R             the browser app: app.R (run_app(), sdc_app(), its
#                       security, the pages), app-server.R (the
#                       server, running steps, .rds policy), one
#                       app-server-<page>.R per page (data, release,
#                       certify, tables, downloads), app-calls.R (steps as
#                       R calls, written into the script and parsed back),
#                       app-inputs.R (every value the page sends, checked)
#   utils-core.R        the one bridge into C++ (core_call()) and progress
#   utils-checks.R, utils-errors.R  argument checks and classed errors
#   data.R, sdcRisk-package.R, RcppExports.R  data sets, this page, glue
#
# The C++ core (inst/include/sdcRisk/, no R header) mirrors the areas:
# cells, design, plan, plan_vars, perturb (draws), risk, risk_known,
# risk_vars, population (E[1 / F | f] of the models of a population),
# simulate, table_sensitivity, table_components; src/ holds only
# the Rcpp glue (rcpp_<area>.cpp, engine.cpp for the kinds of plan).

#' @keywords internal
#' @section Options:
#' * `sdcRisk.progress`: whether long computations (the exact risk of a
#'   per-variable plan, [max_match_risk_known()], [pram_release()],
#'   [simulate_release()], [ifpr()]) show a cli progress bar. By default they
#'   do when R is interactive and never in scripts; `TRUE` or `FALSE`
#'   overrides that. cli draws a bar only for work that lasts more than two
#'   seconds (option `cli.progress_show_after`). The computations stay
#'   interruptible either way.
#' @references
#' Nayak, T. K., Zhang, C. and You, J. (2016). Measuring identification risk
#' in microdata release and its control by post-randomization. Research
#' Report Series (Disclosure Avoidance #2016-02), Center for Disclosure
#' Avoidance Research, U.S. Census Bureau.
#'
#' Ghatak, D. et al. (2018). An improved bound for security in an identity
#' disclosure problem.
"_PACKAGE"

## usethis namespace: start
#' @useDynLib sdcRisk, .registration = TRUE
#' @importFrom Rcpp sourceCpp
#' @importFrom rlang %||%
#' @importFrom stats coef confint family formula nobs vcov
## usethis namespace: end
NULL
