# Classed errors: every user-facing error of the package has class
# c("sdcRisk_error_<what>", "sdcRisk_error") and names the argument at fault.
abort_sdc <- function(message, what, call = rlang::caller_env(), ...,
                      .envir = parent.frame()) {
  cli::cli_abort(
    message,
    class = c(paste0("sdcRisk_error_", what), "sdcRisk_error"),
    call = call,
    ...,
    .envir = .envir
  )
}

# Classed warnings: c("sdcRisk_warning_<what>", "sdcRisk_warning"), for
# input that is valid but probably not what the user meant.
warn_sdc <- function(message, what, call = rlang::caller_env(), ...,
                     .envir = parent.frame()) {
  cli::cli_warn(
    message,
    class = c(paste0("sdcRisk_warning_", what), "sdcRisk_warning"),
    call = call,
    ...,
    .envir = .envir
  )
}

# Short display of a value for error messages.
show_value <- function(x, n = 5) {
  if (is.null(x)) return("NULL")
  if (is.character(x)) x <- encodeString(x, quote = "\"")
  out <- paste(utils::head(format(x, digits = 15), n), collapse = ", ")
  if (length(x) > n) out <- paste0(out, ", ...")
  if (length(x) != 1) out <- paste0("c(", out, ")")
  out
}

#' Errors raised by sdcRisk
#'
#' Every error that sdcRisk raises on purpose is an rlang error
#' ([rlang::abort()], through [cli::cli_abort()]) of class
#' `c("sdcRisk_error_<what>", "sdcRisk_error", "rlang_error", "error",
#' "condition")`. Catch all of them with class `sdcRisk_error`, or one kind
#' with its own class, e.g.
#' `tryCatch(ifpr(data, keys, xi), sdcRisk_error_infeasible = function(e) ...)`
#' or `testthat::expect_error(..., class = "sdcRisk_error_xi")`. The wording
#' of messages may change between versions; the classes do not. The
#' compiled core is reached through one bridge that turns its exceptions
#' into these classes, so no `Rcpp::exception` reaches the user; an error of
#' any other class, or of class `sdcRisk_error_internal`, is a bug: please
#' report it.
#'
#' @section Condition fields:
#' Every error carries the fields of an rlang error: `message` (the first
#' line), `body` (the bullets: what was found, what to do), `call` (the
#' exported function the user called), `trace` and `parent`.
#' Errors from argument checks also carry
#' * `arg`: the name of the argument at fault, as the user wrote it (or the
#'   object's path, e.g. `"plan$cells"`);
#' * `value`: the offending value, when one value is at fault (classes
#'   `argument`, `xi`, `theta`, `rule_parameter`, `known` from the checks of
#'   single numbers, counts, ids, probabilities and known keys).
#'
#' Errors from the compiled core (`underflow`, `memory`, `internal`) carry
#' `core_message`, the core's own message.
#'
#' @section Classes:
#' Each class below is `sdcRisk_error_` followed by the name shown.
#' * `sdcRisk_error_argument`: an argument has the wrong type, length or
#'   range (a count, a cell or block id, a flag, a tolerance, `reps`,
#'   `target`, `a`, `nt`, `ns`, `largest`, a whole number above
#'   2,147,483,647, a plan or release of the wrong class, ...).
#' * `sdcRisk_error_not_data_frame`: `data` is not a data frame.
#' * `sdcRisk_error_empty_data`: `data` has no rows, or a PTN cell has no
#'   respondents.
#' * `sdcRisk_error_keys`: `keys` (or `by`) is not a character vector of
#'   distinct column names, or a `by` variable is named like an output
#'   column of [cell_sensitivity()].
#' * `sdcRisk_error_unknown_key`: a key (or another named variable) is not a
#'   column of the data, or not a key variable of an `sdcMicroObj`.
#' * `sdcRisk_error_key_name`: a key or `also` variable is named like a
#'   column the package adds to its tables (`count`, `cell`).
#' * `sdcRisk_error_key_type`: a key is not a factor, character, integer,
#'   logical or double vector (e.g. a list or matrix column), or no record
#'   has a value in every key (all missing with `na = "exclude"`).
#' * `sdcRisk_error_invalid_object`: an object of the package (`sdc_cells`,
#'   `pram_plan`, `pram_plan_vars`, a release from [ifpr()] or
#'   [pram_release()]) was modified so that it no longer hangs together
#'   (counts, cell ids, block offsets, theta, matrices, codes, strata,
#'   released cells or categories, columns); every function checks the whole
#'   object before any compiled code reads it, and `arg` names it.
#' * `sdcRisk_error_release_mismatch`: a release whose data, cells and
#'   released cells disagree in their numbers of records (rows dropped or
#'   added).
#' * `sdcRisk_error_publication`: a publication (from [publish_plan()] or
#'   [read_plan()]) that does not hang together (edited categories, codes,
#'   counts, theta, matrices or margins), or a file that is not one.
#' * `sdcRisk_error_publication_mismatch`: a released file that does not
#'   match its publication: other keys, categories the plan does not have,
#'   or other numbers of records (in all, by category of a key, in a block
#'   or a stratum); or the data given to [publish_plan()] with a plan is not
#'   the data of the plan.
#' * `sdcRisk_error_plan_mismatch`: [pram_apply()] or [simulate_release()]
#'   got data or keys other than those the plan was built on.
#' * `sdcRisk_error_block`: the blocks of [pram_plan()] are malformed (not
#'   cell ids, a block of fewer than two cells, an id out of range).
#' * `sdcRisk_error_block_overlap`: a cell is in two blocks.
#' * `sdcRisk_error_theta`: `theta` is missing, not a number, negative or
#'   above the smallest count of its block, or above `t` in [psi()].
#' * `sdcRisk_error_matrix`: a transition matrix is not a square numeric
#'   matrix of the block's size with entries in \[0, 1\] and columns summing
#'   to 1, or a block has both or neither of `theta` and `matrix`.
#' * `sdcRisk_error_xi`: a risk bound is not in (0, 1).
#' * `sdcRisk_error_infeasible`: no design reaches the bound: a goal or
#'   method that cannot reach `xi`, a partition set that cannot hold the
#'   blocks it needs (with `on_infeasible = "error"`, or no set to merge
#'   with), or blocks that would need more than 2,147,483,647 cells.
#' * `sdcRisk_error_partition`: a `partition` rule of [ifpr()] is malformed
#'   or keeps every key fixed.
#' * `sdcRisk_error_bound`: per-cell risk bounds given to the design are not
#'   one number in (0, 1] per cell.
#' * `sdcRisk_error_weights`: `weights` of [ifpr()] (`method = "optimal"`)
#'   or [pram_damage()] are not nonnegative numbers, one per key or named by
#'   distinct keys.
#' * `sdcRisk_error_ordered`: `ordered` of [ifpr()] or [pram_damage()] names
#'   something that is not a key, or a key whose values have no order.
#' * `sdcRisk_error_also`: an `also` variable repeats a key, or is not a
#'   PRAM variable of an `sdcMicroObj`.
#' * `sdcRisk_error_households`: [ifpr()] or [pram_certify()] on an
#'   `sdcMicroObj` with households (`hhId`) whose release would change, one
#'   person at a time, a household-level variable or which member heads a
#'   household (`households = "error"`).
#' * `sdcRisk_error_certificate`: the exact maximum risk of the final plan
#'   exceeds `xi`; no release is returned (this would be a bug).
#' * `sdcRisk_error_rules`: `rules` is not a rule or a list of rules with
#'   distinct names.
#' * `sdcRisk_error_rule_parameter`: a parameter of a rule constructor is
#'   out of range (percentages, `p < q`, PTN specifications).
#' * `sdcRisk_error_rule_value`: a function given to [rule_ptn()] returned
#'   values of the wrong length or type for the contributor data.
#' * `sdcRisk_error_ptn_input`: `pt`, `noise` or `self_noise` of
#'   [ptn_sensitivity()] are not finite numbers, or too large to add up in a
#'   double.
#' * `sdcRisk_error_ptn_length`: `pt`, `noise` and `self_noise` have
#'   different lengths.
#' * `sdcRisk_error_value_type`: the `value` column of [cell_sensitivity()]
#'   is missing, not numeric or not finite; the `value` of
#'   [estimate_table()] is missing, not a numeric or logical column, a key
#'   of the publication, or not 0/1 for a proportion.
#' * `sdcRisk_error_missing_value`: a column of [cell_sensitivity()] has
#'   missing values where none are allowed, or the `value` of
#'   [estimate_table()] has missing values and `na_rm` is `FALSE`.
#' * `sdcRisk_error_negative_values`: negative contributions under rules that
#'   assume non-negative ones (`negative = "error"`).
#' * `sdcRisk_error_weight`: the `weight` column is not a column of finite
#'   weights in range; the `weights` of [estimate_table()] are not a
#'   numeric column that the release did not perturb, or have missing,
#'   infinite or negative values.
#' * `sdcRisk_error_by`: `by` of [estimate_table()] is not a character
#'   vector of distinct columns, or names a column the table adds
#'   (`estimate`, `se`, ...).
#' * `sdcRisk_error_model`: the `formula` or `family` of [estimate_glm()]
#'   is not one it fits (a one-sided formula, a family other than
#'   `gaussian()`, `binomial()` or `poisson()` with its canonical link, a
#'   response out of range), or the corrected model cannot be fitted (a
#'   category that no record has by the corrected weights, collinear
#'   covariates, no convergence), or would need too many rows.
#' * `sdcRisk_error_singular_block`: a block of the published plan has a
#'   singular transition matrix (some of its cells cannot be told apart
#'   from the released file), so no unbiased estimator exists for a table
#'   by keys.
#' * `sdcRisk_error_waiver`: the `waiver` column is not logical.
#' * `sdcRisk_error_bounds`: the `lower` / `upper` columns are not numeric or
#'   do not contain the contributions.
#' * `sdcRisk_error_total_label`: `total_label` equals a category of a `by`
#'   variable.
#' * `sdcRisk_error_known`: `known` (the keys an intruder matches on) is not
#'   `NULL` or a set of distinct keys of the plan.
#' * `sdcRisk_error_population`: `population` (of a sample release) is not
#'   population counts by the keys (a data frame, an `sdc_cells` or a lazy
#'   table with every key and a `count` column of whole numbers of at least
#'   0) or a [population_model()], is missing while `target_in_file =
#'   "unknown"`, or is given while the intruder knows that the target is in
#'   the file.
#' * `sdcRisk_error_population_categories`: a key of the population has
#'   another type than the sample's, or lacks categories the sample has.
#' * `sdcRisk_error_population_missing`: cells of the sample have no
#'   population count.
#' * `sdcRisk_error_population_counts`: population counts are smaller than
#'   the sample's.
#' * `sdcRisk_error_population_model`: a [population_model()] without (or
#'   with both) sampling weights and fraction, a fraction outside (0, 1],
#'   margins that are not 1, 2 or sets of keys, a log-linear table beyond
#'   10^7 combinations, or a log-linear fit that does not converge.
#' * `sdcRisk_error_sampling_weights`: sampling weights that are missing,
#'   not finite or not positive, not one per record, not a column of the
#'   data, or that add up to less than a cell's sample count.
#' * `sdcRisk_error_strata`: `strata` of [pram_plan_vars()] or
#'   [pram_release()] does not name keys outside the perturbed ones, or the
#'   matrices given per stratum do not match the strata of the cells.
#' * `sdcRisk_error_underflow`: a product of transition probabilities of one
#'   unit's move falls below the smallest double, so the exact risk cannot be
#'   computed; set such probabilities to 0.
#' * `sdcRisk_error_memory`: the compiled core could not allocate the memory
#'   a computation needs.
#' * `sdcRisk_error_sdcmicro_no_pram`: an `sdcMicroObj` given to
#'   [pram_certify()] or the risk functions holds no PRAM of key variables.
#' * `sdcRisk_error_sdcmicro_pram_data_frame`: the result of
#'   `sdcMicro::pram()` on a data frame (a `pram` object) was given where an
#'   `sdcMicroObj` is needed; the message gives the code that certifies its
#'   matrices with [pram_plan_vars()] and [max_match_risk()].
#' * `sdcRisk_error_sdcmicro_history`: the key values before `pram()` cannot
#'   be recovered from the `sdcMicroObj` (other methods changed the keys).
#' * `sdcRisk_error_sdcmicro_strata`: `sdcMicro::pram()` was run within strata:
#'   sdcMicro keeps only the last stratum's matrix, so the release cannot be
#'   certified from the object; use [pram_release()].
#' * `sdcRisk_error_db_packages`: a database table was given but DBI, dplyr
#'   or dbplyr is not installed.
#' * `sdcRisk_error_db_id`: `id` of [ifpr()] on a database table is missing,
#'   not a column, a key, or not unique and never missing in the database.
#' * `sdcRisk_error_db_table_exists`: the output table `name` exists (and
#'   `overwrite` is `FALSE`), or was created by someone else while the release
#'   was made, or is a table the source query reads (then also of class
#'   `sdcRisk_error_db_source_table`).
#' * `sdcRisk_error_db_source_table`: the output table `name` is a table that
#'   the query of `data` reads (found in the query, in any schema and
#'   whatever the case of the name, or in the database's plan of the query,
#'   where views are expanded), or the plan opens a table the database does
#'   not name.
#' * `sdcRisk_error_db_write`: the release inside a database failed while it
#'   ran (a statement failed, the connection was lost); the transaction was
#'   rolled back, so no table was written or changed. The database's error
#'   is the condition's `parent`. When the commit itself failed, the message
#'   says the database may or may not have written the table.
#' * `sdcRisk_error_db_changed`: the records found for the drawn moves in the
#'   database do not match the counts (the table changed while the release
#'   was made, possible only inside a user's transaction that does not read
#'   one snapshot); nothing was written.
#' * `sdcRisk_error_plan`: a plan that the release inside a database cannot
#'   apply (a block given by a matrix rather than IFPR).
#' * `sdcRisk_error_hierarchy`: `hierarchy` of [cell_sensitivity()] is not a
#'   list named by `by` variables, or does not give a parent to every
#'   category.
#' * `sdcRisk_error_not_sensitivity`: [protect_table()] or [audit_table()]
#'   was not given a table from [cell_sensitivity()].
#' * `sdcRisk_error_incomplete_table`: the table lacks some of its margins
#'   (a subset of the result of [cell_sensitivity()]).
#' * `sdcRisk_error_not_additive`: a table object whose margins no longer
#'   add up to their cells (an edited total); also of class
#'   `sdcRisk_error_invalid_object`.
#' * `sdcRisk_error_linked_mismatch`: tables given to [protect_tables()] or
#'   [audit_tables()] total different value variables or records, or
#'   disagree on the total of a cell they share.
#' * `sdcRisk_error_no_contributions`: the respondent audit of
#'   [audit_table()] or [protect_table()] (`attacker = "respondents"`, the
#'   default) was given a table that carries no contributions (subset,
#'   edited, or made by an older version of [cell_sensitivity()]).
#' * `sdcRisk_error_linked_contributors`: tables given to [protect_tables()]
#'   or [audit_tables()] for the respondent audit identify contributors
#'   differently (different `contributor` columns, or records in one and a
#'   column in another), or one contributor id has different contributions
#'   to a cell they share (ids that name different respondents).
#' * `sdcRisk_error_pattern`: `suppressed` of [audit_table()] is not one
#'   logical per cell or a data frame of cells of the table.
#' * `sdcRisk_error_audit_infeasible`: the published cells contradict the
#'   table's relations or the bounds (no table fits them).
#' * `sdcRisk_error_unprotectable`: a sensitive cell cannot be protected
#'   even with every related cell suppressed, against the outsider or
#'   against a respondent; the message names the cell (and the respondent).
#' * `sdcRisk_error_worker`: a process of [protect_table()] with `cores` of
#'   2 or more (a part of the heuristic) ended without its result (killed,
#'   out of memory); no pattern is returned.
#' * `sdcRisk_error_solver`: a linear program of [protect_table()] or
#'   [audit_table()] failed in the solver (numerical trouble) where no
#'   fallback is left; no pattern or audit is returned.
#' * `sdcRisk_error_internal`: a pattern [protect_table()] built failed its
#'   own final audit (it is not returned), or the compiled core met a broken
#'   internal assumption (`core_message` says which). Please report it.
#'
#' @section Warnings:
#' Input that is valid but probably not what was meant gives a warning of
#' class `c("sdcRisk_warning_<what>", "sdcRisk_warning", "rlang_warning",
#' "warning", "condition")`; the computation goes on. Silence one kind with
#' `withCallingHandlers(..., sdcRisk_warning_key_distinct = function(w)
#' invokeRestart("muffleWarning"))`.
#' * `sdcRisk_warning_key_distinct`: a key has nearly as many distinct
#'   values as there are records (at least 80% of 50 or more records with a
#'   value), such as a continuous variable or an identifier: almost every
#'   record is alone in its cell, and a release would change most of them.
#'   Group the key first (e.g. with [cut()]) or leave it out of the keys.
#' * `sdcRisk_warning_percent`: a percentage below 1 given to [rule_p()],
#'   [rule_pq()] or [rule_nk()] (`rule_p(0.1)` is the 0.1% rule; 10% is
#'   `rule_p(10)`). The warning has fields `arg` and `value`.
#' * `sdcRisk_warning_not_estimable`: the maximum likelihood fit of
#'   [estimate_table()] leaves a row of a mean (or proportion) no released
#'   record: its estimate is `NA`.
#' * `sdcRisk_warning_ml_too_large`: rows of [estimate_table()] outside the
#'   parameter space whose systems have more than 2,000 states keep their
#'   moment estimate.
#' * `sdcRisk_warning_variance_negative`: an unbiased variance estimate of
#'   [estimate_table()] is negative for some rows (their `se` is reported
#'   as 0).
#' * `sdcRisk_warning_rule_nk`: [rule_nk()] with `n >= 10` and `k < n`, such
#'   as `rule_nk(60, 1)`, which reads as `rule_nk(1, 60)` with its
#'   arguments swapped. The warning has fields `n` and `k`.
#'
#' @name sdcRisk_errors
#' @family errors
#' @examples
#' cf <- cell_frequencies(data.frame(k = c("a", "b", "b")), "k")
#' e <- tryCatch(pram_plan(cf, list(1:2), theta = 5), sdcRisk_error = function(e) e)
#' class(e)
#' conditionMessage(e)
#' e <- tryCatch(ifpr_theta(1.5), sdcRisk_error_xi = function(e) e)
#' e$arg
#' e$value
NULL
