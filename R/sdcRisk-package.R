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
## usethis namespace: end
NULL
