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
#' A per-variable plan ([pram_plan_vars()]) is drawn the same way in the
#' C++ core: one uniform per record and perturbed key, in record order and
#' then key order, inverted through the cumulative column of the record's
#' category (in its stratum's matrix); the released record may fall in a
#' cell that was empty.
#'
#' @param plan A `pram_plan` or a `pram_plan_vars`.
#' @returns `pram_apply()`: `data` with perturbed keys. `pram_draw()`: an
#'   integer vector, the released cell id of every record of the plan's data
#'   (`NA` for records left out); for a `pram_plan_vars`, an integer matrix
#'   with one column per perturbed key, the released category (its position
#'   among the key's categories) of every record.
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
  ep <- engine_plan(plan)
  check_plan_keys(keys, plan)
  cell_id <- check_plan_data(data, plan)
  plan_apply_draws(plan, data, cell_id, ep)
}

#' @rdname pram_apply
#' @export
pram_draw <- function(plan) {
  ep <- engine_plan(plan)
  validate_sdc_cells(plan$cells, "plan$cells")
  drawn <- plan_draw(plan, plan$cells$cell_id, ep = ep)
  # a per-variable plan draws one category per perturbed key
  if (is.matrix(drawn)) colnames(drawn) <- plan$vars
  drawn
}

# The records whose released cell differs from their cell (NA: none), in
# one pass in C++ (which() of the comparison makes three vectors of the
# records' length).
changed_records <- function(old_cell, new_cell) core_call(cpp_changed_records, old_cell, new_cell)

# Write the key values of the released cells into the changed records,
# keeping every attribute of the columns (factor codes are written directly).
# A key that no changed record changes (a kept key) is not copied.
# `changed`: the records to write; `to`: their released cells.
write_cells <- function(data, cells, changed, to) {
  if (length(changed) == 0) return(data)
  for (k in cells$keys) {
    v <- data[[k]]
    values <- cells$cells[[k]]
    if ((is.factor(v) || !is.object(v)) && is.factor(values) == is.factor(v) && typeof(values) == typeof(v) &&
      typeof(v) %in% c("integer", "double", "logical", "character")) {
      # a factor's cell values are codes of its levels
      v <- core_call(cpp_write_at, v, changed, values, to)
      if (is.null(v)) next
    } else {
      v[changed] <- if (is.factor(v)) as.integer(values)[to] else values[to]
    }
    data[[k]] <- v
  }
  # `[[<-` copied a data.table without its over-allocation: restore it, so
  # that `:=` works on the release without a warning
  if (inherits(data, "data.table") && requireNamespace("data.table", quietly = TRUE)) {
    data <- data.table::setalloccol(data)
  }
  data
}
