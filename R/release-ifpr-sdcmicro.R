#' @rdname ifpr
#' @order 4
#' @export
ifpr.sdcMicroObj <- function(data, keys = NULL, xi, ..., also = NULL, population = NULL,
                             households = c("error", "ignore")) {
  rlang::check_installed("sdcMicro", reason = "to release an sdcMicroObj with ifpr().")
  households <- check_choice(households)
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
  hh <- sdcmicro_households(obj, current, c(keys, also), households)
  if (!is.null(hh)) {
    lev <- function(v) unique(as.character(rel$cells$cells[[v]]))
    hh <- check_households(hh, function(v) ifpr_transition_counts(rel, v, lev(v)),
                           keep = function(v) paste0("or keep them fixed here, e.g. {.code partition = list(", v, " = \"keep\")}"))
    rel$certificate$households <- hh
  }

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

# Expected numbers of records moving from each value of `v` (rows) to each
# value (columns) under the plan of an ifpr() release.
ifpr_transition_counts <- function(rel, v, lev) {
  value <- match(as.character(rel$cells$cells[[v]]), lev)
  n <- core_call(cpp_category_transitions, engine_plan(rel$plan), value, length(lev))
  dimnames(n) <- list(lev, lev)
  n
}

# Exact expected transition matrix of one variable under the plan (rows:
# original value), from the core's expected transitions.
expected_transitions <- function(rel, v, lev) {
  n <- ifpr_transition_counts(rel, v, lev)
  rs <- rowSums(n)
  n[rs > 0, ] <- n[rs > 0, ] / rs[rs > 0]
  n
}

# Households (issue 37, item 5). A person-level PRAM changes one record at a
# time, so a variable that ties the members of a household together breaks
# when it moves: a household-level variable (one value in every household:
# water, roof) gets several values in a household, and a role held by
# exactly one member of every household (the head) is lost or doubled. The
# certificate bounds the risk of matching a person, not a household.
# `sdcmicro_households()` finds such variables among `vars` in the object's
# households (only households of two or more records say anything);
# `check_households()` refuses a release whose plan can move them (`moves(v)`:
# the expected numbers of records moving between values of `v`, rows and
# columns named by value),
# unless `policy` is "ignore", and returns what the certificate says.
sdcmicro_households <- function(obj, data, vars, policy) {
  if (length(obj@hhId) == 0) return(NULL)
  id <- colnames(obj@origData)[obj@hhId]
  g <- match(obj@origData[[id]], unique(obj@origData[[id]]))
  n_hh <- max(g)
  shared <- any(tabulate(g, n_hh) > 1)
  level <- vapply(vars, function(v) {
    x <- as.character(data[[v]])
    shared && all(tabulate(g[!duplicated(data.frame(g, x))], n_hh) == 1)
  }, logical(1))
  roles <- lapply(vars[!level], function(v) {
    x <- as.character(data[[v]])
    for (h in names(which(table(x) == n_hh))) if (shared && all(tabulate(g[x %in% h], n_hh) == 1)) return(h)
    NULL
  })
  names(roles) <- vars[!level]
  list(id = id, n = n_hh, policy = policy, level = vars[level], roles = roles[lengths(roles) > 0])
}

check_households <- function(hh, moves, keep, call = rlang::caller_env()) {
  level <- Filter(function(v) {
    n <- moves(v)
    sum(n) - sum(diag(n)) > 1e-12
  }, hh$level)
  roles <- Filter(function(v) {
    n <- moves(v)
    h <- which(rownames(n) == hh$roles[[v]])
    sum(n[h, -h]) + sum(n[-h, h]) > 1e-12
  }, names(hh$roles))
  if (hh$policy == "error" && length(c(level, roles)) > 0) abort_households(hh, level, roles, keep, call)
  list(id = hh$id, n = hh$n, policy = hh$policy, level = hh$level, perturbed = level, roles = hh$roles[roles])
}

# `keep(v)`: how to leave the variables (the first is `v`) unperturbed.
abort_households <- function(hh, level, roles, keep, call) {
  keep <- keep(c(level, roles)[1])
  role_txt <- paste0(roles, " = ", vapply(roles, function(v) hh$roles[[v]], ""), collapse = ", ")
  abort_sdc(c(
    "The PRAM perturbs, one person at a time, variables that tie the members of a household together.",
    "x" = if (length(level)) "Household-level (one value in every household of {.field {hh$id}}) and changed by the perturbation: {.val {level}}.",
    "x" = if (length(roles)) "Held by exactly one member of every household (the head, say) and changed by the perturbation: {.code {role_txt}}: households would lose or gain one.",
    "i" = "A person-level PRAM gives the members of a household different values of a household variable, which an intruder can see and a data user cannot analyse, and its certificate bounds the risk of matching a person, not a household.",
    "i" = paste0("Release household variables in a household-level file (one record per household) and certify that file; ", keep, "; or accept a person-level release knowingly with {.code households = \"ignore\"}.")
  ), "households", call = call, arg = "households")
}
