#' Perturb key variables with a PRAM plan
#'
#' `pram_apply()` draws, for every record whose cell is in a block of `plan`,
#' its released cell from the block's transition probabilities, and writes
#' the key values of that cell into the record. Records are independent
#' (Nayak, Zhang and You 2016, Section 3.1). `pram_draw()` returns the drawn
#' cells only.
#'
#' Random numbers come from R's generator, one uniform per record in a block,
#' in row order, turned into a cell by the inverse of the cumulative
#' distribution of the record's column (rows in block order): `set.seed()`
#' reproduces the release exactly on every platform. One pass over the
#' records, linear in their number.
#'
#' Only the key columns of records in blocks can change. Row order, every
#' other column, column types, factor levels and attributes come back
#' identical. Records left out of the cross-classification for a missing key
#' (`na = "exclude"` in [cell_frequencies()]) are untouched.
#'
#' @param data The data frame the plan's cells were computed from (same key
#'   values and cell counts; the row order may differ).
#' @param keys The plan's key variables, in the same order.
#' @param plan A `pram_plan`.
#' @returns `pram_apply()`: `data` with perturbed keys. `pram_draw()`: an
#'   integer vector, the released cell id of every record of the plan's data
#'   (`NA` for records left out).
#' @family perturbation
#' @export
#' @examples
#' set.seed(2)
#' df <- data.frame(
#'   sex = factor(sample(c("F", "M"), 40, TRUE)),
#'   area = sample(c("A", "B", "C", "D", "E"), 40, TRUE),
#'   income = round(rlnorm(40, 10), -2)
#' )
#' cf <- cell_frequencies(df, c("sex", "area"))
#' plan <- pram_plan(cf, list(which(cf$cells$count <= 4)), theta = 0.8)
#' set.seed(1)
#' released <- pram_apply(df, c("sex", "area"), plan)
#' sum(released$area != df$area | released$sex != df$sex)
#' identical(released$income, df$income)
pram_apply <- function(data, keys, plan) {
  check_data_frame(data)
  check_pram_plan(plan)
  check_plan_keys(keys, plan)
  cf <- check_plan_data(data, plan)
  new_cell <- cpp_pram_draw(plan_cpp(plan), cf$cell_id)
  write_cells(data, plan$cells, cf$cell_id, new_cell)
}

#' @rdname pram_apply
#' @export
pram_draw <- function(plan) {
  check_pram_plan(plan)
  cpp_pram_draw(plan_cpp(plan), plan$cells$cell_id)
}

# Write the key values of the released cells into the changed records.
write_cells <- function(data, cells, old_cell, new_cell) {
  changed <- which(!is.na(new_cell) & new_cell != old_cell)
  if (length(changed) == 0) return(data)
  for (k in cells$keys) {
    v <- data[[k]]
    v[changed] <- cells$cells[[k]][new_cell[changed]]
    data[[k]] <- v
  }
  data
}

check_plan_keys <- function(keys, plan, call = rlang::caller_env()) {
  if (!identical(as.character(keys), plan$cells$keys)) {
    abort_sdc(c(
      "{.arg keys} must be the key variables the plan was built on, in the same order.",
      "x" = "{.arg keys} is {.val {keys}}; the plan's keys are {.val {plan$cells$keys}}."
    ), "plan_mismatch", call = call)
  }
  invisible(keys)
}

# Cross-classify `data` as the plan's cells were and check that it gives the
# same cells with the same counts.
check_plan_data <- function(data, plan, call = rlang::caller_env()) {
  keys <- plan$cells$keys
  check_names_in(keys, data, arg = "keys", call = call)
  cf <- cell_frequencies(data, keys, na = plan$cells$na)
  same <- nrow(cf$cells) == nrow(plan$cells$cells) &&
    identical(cf$cells$count, plan$cells$cells$count) &&
    all(vapply(keys, function(k) identical(as.character(cf$cells[[k]]), as.character(plan$cells$cells[[k]])), logical(1)))
  if (!same) {
    abort_sdc(c(
      "{.arg plan} was built for other data.",
      "x" = "The data give {fmt_int(nrow(cf$cells))} cells ({fmt_int(sum(cf$cells$count))} records); the plan has {fmt_int(nrow(plan$cells$cells))} cells ({fmt_int(sum(plan$cells$cells$count))} records), or the cells differ.",
      "i" = "Build the plan from {.code cell_frequencies()} of this data."
    ), "plan_mismatch", call = call)
  }
  cf
}
