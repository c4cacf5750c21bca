#' Certify the PRAM release an sdcMicroObj holds
#'
#' After `sdcMicro::pram()` on key variables, sdcMicro warns that its risk
#' measures are "not useful anymore". The exact correct-match risk
#' \eqn{R_j(a, t)} of Nayak, Zhang and You (2016, eq. 4.3-4.4) is: this
#' function reads the transition matrix of every perturbed key from the
#' object's `pram` slot (rows there are the original category,
#' `orientation = "rows"` of [pram_plan_vars()]), the original key values
#' from the state before `pram()` (the object's undo history, or its
#' original data), computes the exact maximum risk of the release with
#' [max_match_risk()], and stores the certificate in the object's `risk`
#' slot as `risk$pram`, the way [ifpr()] stores its own as `risk$ifpr`.
#' [max_match_risk()], [match_risk()], [release_risk()],
#' [release_utility()] and [simulate_release()] accept the object directly.
#'
#' @section Strata: With `strata_variables` (or a strata variable of the
#'   object), sdcMicro 5.8 draws a different matrix in every stratum (random
#'   diagonal in \eqn{[pd, 1]}, invariant adjustment with `alpha`) but keeps
#'   only the last one in the object, so the release cannot be certified
#'   from the object. This is detected (a strata variable in the object, or a
#'   stored matrix that is not invariant for the variable's frequencies over
#'   all records, as an unstratified `pram()` would make it) and raises an
#'   error of class `sdcRisk_error_sdcmicro_strata`. The way out is
#'   [pram_release()] with `strata`, which builds the same kind of matrices
#'   per variable and stratum, draws the release, and records every matrix.
#'   A `pd` given as a matrix is used unchanged in every stratum, so such a
#'   release is certified.
#'
#' @section Households: For an object with households (`hhId`),
#'   `sdcMicro::pram()` perturbs every record on its own, so a
#'   household-level variable (one value in every household) gets several
#'   values in a household, and a role held by one member of every
#'   household (the head) is lost or doubled. The certificate is per person
#'   and says nothing about households, so with `households = "error"` (the
#'   default) `pram_certify()` refuses such a release with an error of class
#'   `sdcRisk_error_households` when a matrix can change such a variable.
#'   Release household variables in a household-level file and certify that
#'   file, or certify the person-level risk knowingly with `households =
#'   "ignore"`. The certificate then says that it covers persons as targets,
#'   not an intruder who knows a household's composition. See the section
#'   on households of [ifpr()].
#'
#' @param obj An `sdcMicroObj` on which `sdcMicro::pram()` was run on key
#'   variables. The result of `sdcMicro::pram()` on a data frame (a `pram`
#'   object) names no keys: it is refused with an error of class
#'   `sdcRisk_error_sdcmicro_pram_data_frame` whose message gives the code
#'   that certifies its matrices with [pram_plan_vars()] and
#'   [max_match_risk()].
#' @param goal The goal, as in [max_match_risk()].
#' @param known The keys the intruder matches on, as in [max_match_risk()]
#'   (`NULL`: all keys).
#' @param population,target_in_file For a sample (most `sdcMicroObj`s hold
#'   one): the population it was drawn from and whether the intruder knows
#'   that his target is in the file, as in [max_match_risk()]. A
#'   [population_model()] may name the object's weight variable as its
#'   `weights`.
#' @param households For an object with households (`hhId`): `"error"` or
#'   `"ignore"`, see the section on households.
#' @returns `obj`, with `obj@risk$pram` the certificate: a list with the
#'   goal, the exact maximum risk, its cell, `a`, the cell's count and key
#'   values, the perturbed variables, the expected number of changed
#'   records and the total perturbation variance (for a sample also
#'   `target_in_file`, `sample` and the arg-max cell's `p_in_file`,
#'   `population` and `risk_in_file`).
#' @family per-variable PRAM
#' @export
#' @examplesIf rlang::is_installed("sdcMicro")
#' keys <- c("sex", "race", "marital")
#' d <- pums_md[1:2000, keys]
#' obj <- sdcMicro::createSdcObj(d, keyVars = keys)
#' set.seed(1)
#' obj <- suppressWarnings(sdcMicro::pram(obj, variables = c("race", "marital")))
#' obj <- pram_certify(obj)
#' obj@risk$pram$risk
pram_certify <- function(obj, goal = c("all_matches", "unique_matches", "sample_uniques"),
                         known = NULL, population = NULL, target_in_file = c("known", "unknown"),
                         households = c("error", "ignore")) {
  goal <- check_choice(goal)
  households <- check_choice(households)
  rel <- sdcmicro_release(obj, arg = "obj")
  hh <- sdcmicro_pram_households(obj, rel, households)
  known <- check_known(known, rel$keys)
  # sampling weights may name a variable of the object's data
  smp <- sample_of(rel$cells, population, target_in_file, data = obj@origData)
  ep <- engine_plan(rel$plan)
  bar <- progress_bar("Exact maximum risk")
  mx <- plan_max_risk(rel$plan, goal, known, ep, progress = progress_part(bar), weight = smp$weight)
  mx <- add_sample(mx, smp)
  cost <- plan_cost(rel$plan, ep = ep, stay = FALSE)
  risk <- sdcMicro::get.sdcMicroObj(obj, "risk")
  risk$pram <- structure(certificate_sample(list(
    goal = goal, known = known, risk = mx$risk, cell = mx$cell, a = mx$a, count = mx$count, cell_keys = mx$keys,
    vars = rel$vars, expected_changed = cost$changed, total_variance = cost$variance,
    n_excluded = rel$cells$n_excluded %||% 0, households = hh
  ), mx), class = "sdc_pram_certificate")
  sdcMicro::set.sdcMicroObj(obj, "risk", list(risk))
}

# The households of an object after sdcMicro::pram() (see
# sdcmicro_households()): the values before pram() are those of the
# release's cells, and a variable moves as its matrix says (rows: the
# original value), weighted by the records holding each value.
sdcmicro_pram_households <- function(obj, rel, policy, call = rlang::caller_env()) {
  cells <- rel$cells
  before <- lapply(rel$vars, function(v) cells$cells[[v]][cells$cell_id])
  names(before) <- rel$vars
  hh <- sdcmicro_households(obj, before, rel$vars, policy)
  if (is.null(hh)) return(NULL)
  check_households(hh, function(v) {
    rs <- obj@pram$params[[v]]$Rs
    counts <- tapply(cells$cells$count, factor(as.character(cells$cells[[v]]), levels = rownames(rs)), sum)
    rs * as.vector(ifelse(is.na(counts), 0, counts))
  }, keep = function(v) "or run {.fn sdcMicro::pram} without them", call = call)
}

check_sdcmicro <- function(obj, arg = rlang::caller_arg(obj), call = rlang::caller_env()) {
  if (inherits(obj, "pram")) abort_pram_data_frame(obj, arg, call)
  if (!inherits(obj, "sdcMicroObj")) {
    abort_sdc(c(
      "{.arg {arg}} must be an {.cls sdcMicroObj}.",
      "x" = "It is {.obj_type_friendly {obj}}."
    ), "argument", call = call, arg = arg)
  }
  rlang::check_installed("sdcMicro", reason = "to read an sdcMicroObj.")
  invisible(obj)
}

# sdcMicro::pram() on a data frame returns a "pram" object: the data with a
# column <var>_pram per perturbed variable and the matrices in the
# attribute "pram_params", but no key variables, so the intruder's keys
# are unknown (issue 37). The error gives the code that certifies it: the
# same plan sdcmicro_release() builds from an sdcMicroObj.
abort_pram_data_frame <- function(obj, arg, call) {
  vars <- names(attr(obj, "pram_params"))
  cols <- setdiff(names(obj), paste0(vars, "_pram"))
  keys <- paste0("keys <- c(", paste0("\"", cols, "\"", collapse = ", "), ")")
  abort_sdc(c(
    "{.arg {arg}} is the result of {.fn sdcMicro::pram} on a data frame (a {.cls pram} object), not an {.cls sdcMicroObj}: it does not say which variables are the intruder's keys.",
    "i" = "Certify its matrices with {.fn pram_plan_vars} and {.fn max_match_risk}, keeping in {.code keys} only the variables the intruder matches on:",
    " " = "{.code {keys}}",
    " " = "{.code mats <- lapply(attr({arg}, \"pram_params\"), function(p) p$Rs)}",
    " " = "{.code cf <- cell_frequencies(as.data.frame(unclass({arg}))[keys], keys)}",
    " " = "{.code max_match_risk(pram_plan_vars(cf, mats, orientation = \"rows\"))}",
    "i" = "Or run {.fn sdcMicro::pram} on {.code sdcMicro::createSdcObj(data, keyVars = keys)} and give that object to {.fn pram_certify}."
  ), "sdcmicro_pram_data_frame", call = call, arg = arg)
}

# The release an sdcMicroObj holds after pram(), as an sdc_pram_release:
# the per-variable plan from the pram slot, the original cells, and the
# released categories.
sdcmicro_release <- function(obj, arg = "obj", call = rlang::caller_env()) {
  check_sdcmicro(obj, arg = arg, call = call)
  keys <- colnames(obj@origData)[obj@keyVars]
  params <- obj@pram$params
  methods_used <- vapply(params, function(p) p$method %||% "pram", "")
  vars <- keys[keys %in% names(params)[methods_used == "pram"]]
  if (length(vars) == 0) {
    abort_sdc(c(
      "{.arg {arg}} holds no release of {.fn sdcMicro::pram} on its key variables.",
      "x" = if (length(params)) "PRAM variables of the object: {.val {names(params)}}; its keys: {.val {keys}}." else "Its {.code pram} slot is empty.",
      "i" = "Run {.code sdcMicro::pram(obj, variables = <keys>)} first."
    ), "sdcmicro_no_pram", call = call, arg = arg)
  }
  before <- sdcmicro_before_pram(obj, keys, vars, call, arg)
  mats <- lapply(vars, function(v) params[[v]]$Rs)
  names(mats) <- vars
  check_sdcmicro_strata(obj, before, params, vars, call, arg)
  for (v in vars) before[[v]] <- factor(as.character(before[[v]]), levels = rownames(mats[[v]]))
  cf <- cell_frequencies(before, keys)
  plan <- pram_plan_vars(cf, mats, orientation = "rows")
  after <- as.data.frame(obj@manipKeyVars)[keys]
  codes <- vapply(vars, function(v) match(as.character(after[[v]]), rownames(mats[[v]])), integer(nrow(after)))
  codes <- matrix(codes, ncol = length(vars), dimnames = list(NULL, vars))
  codes[is.na(cf$cell_id), ] <- NA_integer_
  released <- before
  for (v in vars) released[[v]] <- factor(as.character(after[[v]]), levels = rownames(mats[[v]]))
  mx <- list(goal = NA_character_, risk = NA_real_, cell = NA_integer_, a = NA_integer_,
             count = NA_integer_, keys = NULL)
  new_sdc_pram_release(released, plan, cf, codes, released_cell(cf, vars, codes), keys, vars, NULL, mx)
}

# Key values as they were before pram(): the object's undo history when it
# has one, else its original data (when no other method changed the keys).
sdcmicro_before_pram <- function(obj, keys, vars, call, arg = "obj") {
  prev <- obj@prev
  while (!is.null(prev) && any(vars %in% names(prev@pram$params))) prev <- prev@prev
  if (!is.null(prev)) return(as.data.frame(prev@manipKeyVars)[keys])
  orig <- obj@origData[keys]
  kept <- setdiff(keys, vars)
  same <- all(vapply(kept, function(k) {
    identical(as.character(orig[[k]]), as.character(obj@manipKeyVars[[k]]))
  }, logical(1)))
  if (!same) {
    abort_sdc(c(
      "Cannot tell the key values of {.arg {arg}} before {.fn sdcMicro::pram}.",
      "x" = "Other methods changed its keys, and it keeps no undo history.",
      "i" = "Keep sdcMicro's undo history, or run {.fn sdcMicro::pram} before other methods."
    ), "sdcmicro_history", call = call, arg = arg)
  }
  orig
}

# sdcMicro 5.8 draws one matrix per stratum but keeps the last: detect it.
check_sdcmicro_strata <- function(obj, before, params, vars, call, arg = "obj") {
  random <- vapply(vars, function(v) !is.matrix(params[[v]]$pd), logical(1))
  if (!any(random)) return(invisible())
  strata_slot <- length(obj@strataVar) > 0
  deviation <- vapply(vars[random], function(v) {
    rs <- params[[v]]$Rs
    x <- factor(as.character(before[[v]]), levels = rownames(rs))
    p <- as.numeric(table(x)) / sum(!is.na(x))
    max(abs(drop(p %*% rs) - p))
  }, numeric(1))
  bad <- names(deviation)[deviation > 1e-9]
  if (strata_slot || length(bad) > 0) {
    abort_sdc(c(
      "The PRAM release in {.arg {arg}} cannot be certified: it was drawn within strata.",
      "x" = if (strata_slot) {
        "The object has strata variables, and with strata sdcMicro 5.8 draws a different random matrix in every stratum but keeps only the last one."
      } else {
        "The matrix stored for {.val {bad}} is not invariant for the variable's frequencies over all records (largest deviation {format(max(deviation), digits = 3)}): it was built on one stratum's records ({.arg strata_variables}), and sdcMicro 5.8 keeps only the last stratum's matrix."
      },
      "i" = "Make the release with {.fn pram_release} and {.arg strata}: it builds the same invariant matrices per variable and stratum, draws the release, and records every matrix, so it can be certified."
    ), "sdcmicro_strata", call = call, arg = arg)
  }
  invisible()
}
