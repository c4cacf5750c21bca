#' @keywords internal
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
