#' @rdname ifpr
#' @order 4
#' @export
ifpr.sdcMicroObj <- function(data, keys = NULL, xi, ..., also = NULL, population = NULL) {
  rlang::check_installed("sdcMicro", reason = "to release an sdcMicroObj with ifpr().")
  obj <- data
  all_keys <- colnames(obj@origData)[obj@keyVars]
  keys <- keys %||% all_keys
  bad <- setdiff(keys, all_keys)
  if (length(bad) > 0) {
    abort_sdc(c(
      "{.arg keys} must be categorical key variables of the {.cls sdcMicroObj}.",
      "x" = "Not key variables of the object: {.val {bad}}.",
      "i" = "Its key variables are {.val {all_keys}}."
    ), "unknown_key", arg = "keys")
  }
  pram_vars <- if (length(obj@pramVars)) colnames(obj@origData)[obj@pramVars] else character()
  bad <- setdiff(also, pram_vars)
  if (length(bad) > 0) {
    abort_sdc(c(
      "{.arg also} must name PRAM variables of the {.cls sdcMicroObj}: only their values can be written back.",
      "x" = "Not PRAM variables of the object: {.val {bad}}."
    ), "also", arg = "also")
  }
  # the current (already anonymised) values of keys and PRAM variables
  current <- as.data.frame(obj@manipKeyVars)
  if (length(also) > 0) current <- cbind(current, as.data.frame(obj@manipPramVars)[also])
  # a model's sampling weights may name a variable of the object (its weight)
  w <- population$weights
  if (inherits(population, "sdc_population_model") && is.character(w) && w %in% names(obj@origData)) {
    population$weights <- obj@origData[[w]]
  }
  rel <- ifpr(current, keys, xi, ..., also = also, population = population)

  # sdcMicro's own setter records every slot it changes, so that undolast()
  # and the print/report methods see them
  set <- sdcMicro::set.sdcMicroObj
  obj <- sdcMicro::nextSdcObj(obj)
  mk <- obj@manipKeyVars
  for (k in keys) mk[[k]] <- rel$data[[k]]
  obj <- set(obj, "manipKeyVars", list(mk))
  if (length(also) > 0) {
    mp <- obj@manipPramVars
    for (v in also) mp[[v]] <- rel$data[[v]]
    obj <- set(obj, "manipPramVars", list(mp))
  }
  old_pram <- sdcMicro::get.sdcMicroObj(obj, "pram")
  obj <- set(obj, "pram", list(sdcmicro_pram_slot(old_pram, rel, current, c(keys, also))))
  obj <- sdcMicro::calcRisks(obj)
  risk <- sdcMicro::get.sdcMicroObj(obj, "risk")
  risk$ifpr <- rel$certificate
  set(obj, "risk", list(risk))
}

# The pram slot in the structure sdcMicro's pram() uses, for every perturbed
# variable: the expected transition matrix of the variable under the plan
# (rows: original value), the observed transitions, the original and
# perturbed frequencies and the number of changed records.
sdcmicro_pram_slot <- function(slot, rel, before, vars) {
  if (is.null(slot) || length(slot) == 0) {
    slot <- list(params = list(), transitions = list(), comparison = list(), summary = NULL)
  }
  after <- rel$data
  summary <- slot$summary
  for (v in vars) {
    from <- as.character(before[[v]])
    to <- as.character(after[[v]])
    lev <- sort(unique(c(from, to)), na.last = TRUE)
    slot$params[[v]] <- list(Rs = expected_transitions(rel, v, lev), pd = NA_real_, alpha = NA_real_,
                             method = "ifpr", certificate = rel$certificate)
    tr <- table(factor(from, levels = lev, exclude = NULL), factor(to, levels = lev, exclude = NULL))
    keep <- tr > 0
    slot$transitions[[v]] <- data.table::data.table(
      transition = paste(rownames(tr)[row(tr)[keep]], "-->", colnames(tr)[col(tr)[keep]]),
      Frequency = as.integer(tr[keep])
    )
    orig <- table(factor(from, levels = lev, exclude = NULL))
    pert <- table(factor(to, levels = lev, exclude = NULL))
    comp <- data.table::data.table(c("Original Frequencies", "Frequencies after Perturbation"))
    names(comp) <- v
    for (l in seq_along(lev)) comp[[ifelse(is.na(lev[l]), "NA", lev[l])]] <- as.character(c(orig[l], pert[l]))
    slot$comparison[[v]] <- comp
    changed <- sum(from != to | (is.na(from) != is.na(to)), na.rm = TRUE)
    row <- data.frame(variable = v, nrChanges = changed, percChanges = round(100 * changed / length(from), 2))
    summary <- rbind(summary[summary$variable != v, , drop = FALSE], row)
  }
  slot$summary <- summary
  slot
}

# Exact expected transition matrix of one variable under the plan (rows:
# original value), from the core's expected transitions.
expected_transitions <- function(rel, v, lev) {
  value <- match(as.character(rel$cells$cells[[v]]), lev)
  n <- core_call(cpp_category_transitions, engine_plan(rel$plan), value, length(lev))
  dimnames(n) <- list(lev, lev)
  rs <- rowSums(n)
  n[rs > 0, ] <- n[rs > 0, ] / rs[rs > 0]
  n
}
