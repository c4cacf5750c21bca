#' Cross-classify key variables into cells
#'
#' Counts the records of every nonempty combination (cell) of the key
#' variables in one pass of compiled code over the records, and returns the
#' cells, their frequencies \eqn{T_i}, the cell of every record and the numbers
#' of singleton (\eqn{T_i = 1}) and doubleton (\eqn{T_i = 2}) cells. This is
#' the cross-classified variable \eqn{X} of Nayak, Zhang and You (2016,
#' Section 2.1), restricted to its nonempty cells: empty cells play no role in
#' post-randomization (Section 3.3).
#'
#' Keys may be factors, character, integer, logical or double vectors. The
#' categories of a factor are its levels, in their order (unused levels are
#' kept as categories; they have no nonempty cell). The categories of other
#' types are their distinct non-missing values, sorted. Cells are numbered in
#' lexicographic order of their categories, the first key varying slowest, so
#' the numbering does not depend on the order of the records.
#'
#' @param data A data frame with one row per record, or a lazy database
#'   table (`dplyr::tbl(con, "persons")`): then the counts are computed by
#'   the database and only the cells come back; `cell_id` is `NULL`.
#' @param keys Character vector: the names of the key variables.
#' @param na How to treat missing values in a key. `"exclude"` (the default)
#'   leaves a record with a missing value in any key out of the
#'   cross-classification: it belongs to no cell (its cell id is `NA`) and is
#'   never perturbed; the result says how many records were left out.
#'   `"category"` treats `NA` as one more category of each key: a release
#'   ([ifpr()], [pram_release()]) can then move records into and out of the
#'   missing category (see the section "Missing key values" of [ifpr()]).
#'
#' @returns An object of class `sdc_cells`, a list with
#'   * `cells`: a data frame with one row per nonempty cell, the key values
#'     (same types and levels as in `data`) and `count`, the frequency
#'     \eqn{T_i};
#'   * `cell_id`: the cell (row of `cells`) of every record, `NA` for a record
#'     left out;
#'   * `keys`, `na`, `n_records`, `n_excluded`, `n_singletons`,
#'     `n_doubletons`.
#'
#' @references Nayak, T. K., Zhang, C. and You, J. (2016). Measuring
#'   identification risk in microdata release and its control by
#'   post-randomization. U.S. Census Bureau, Research Report Series
#'   (Disclosure Avoidance #2016-02).
#' @family cells
#' @export
#' @examples
#' set.seed(1)
#' people <- data.frame(
#'   sex = factor(sample(c("F", "M"), 200, TRUE)),
#'   age = sample(18:90, 200, TRUE),
#'   region = sample(c("north", "south", "east"), 200, TRUE)
#' )
#' cf <- cell_frequencies(people, c("sex", "age", "region"))
#' cf
#' head(cf$cells)
cell_frequencies <- function(data, keys, na = c("exclude", "category")) UseMethod("cell_frequencies")

#' @export
cell_frequencies.default <- function(data, keys, na = c("exclude", "category")) {
  check_data_frame(data)
}

# (a lazy database table: cell_frequencies.tbl_lazy() of db-cells.R)
#' @export
cell_frequencies.data.frame <- function(data, keys, na = c("exclude", "category")) {
  check_data_frame(data)
  check_names_in(keys, data)
  check_names_free(keys, cell_columns)
  na <- check_choice(na)
  env <- rlang::current_env()
  coded <- lapply(keys, function(k) code_key(data[[k]], k, na == "category", call = env, shift = FALSE))
  nlevels <- vapply(coded, `[[`, integer(1), "nlevels")
  warn_distinct_keys(keys, lapply(coded, function(x) {
    # observed categories only (a factor's unused levels and the gaps of an
    # integer range count for nothing), counted where they could be many
    if (x$nlevels < 0.8 * nrow(data)) return(x$nlevels)
    sum(tabulate(shifted_codes(x), x$nlevels) > 0L)
  }), nrow(data))
  # a key without categories (all missing) has no cell
  res <- if (all(nlevels > 0L)) {
    cross_classify_codes(lapply(coded, `[[`, "codes"), nlevels, vapply(coded, `[[`, integer(1), "offset"))
  }
  if (length(res$counts) == 0) {
    abort_sdc(c(
      "No record has a value in every key of {.arg keys}.",
      "x" = "All {fmt_int(nrow(data))} records have a missing key value.",
      "i" = "Use {.code na = \"category\"} to treat {.val NA} as a category."
    ), "key_type", arg = "keys")
  }
  cells <- lapply(seq_along(keys), function(k) cell_values(coded[[k]]$values, res$codes[[k]]))
  names(cells) <- keys
  cells <- as.data.frame(cells, stringsAsFactors = FALSE, optional = TRUE)
  names(cells) <- keys
  cells$count <- res$counts
  out <- new_sdc_cells(
    cells = cells,
    cell_id = res$cell_id,
    keys = keys,
    na = na,
    n_records = nrow(data),
    n_excluded = res$n_excluded
  )
  out$source <- key_source(coded, res$fingerprint)
  out
}

# A key with nearly as many distinct values as records (a continuous
# variable, an identifier) makes almost every record a singleton: valid, but
# rarely meant. `distinct` counts each key's distinct non-missing values.
warn_distinct_keys <- function(keys, distinct, n_records, call = rlang::caller_env()) {
  distinct <- as.numeric(unlist(distinct))
  bad <- which(key_too_distinct(distinct, n_records))
  for (k in bad) {
    warn_sdc(c(
      "Key {.var {keys[k]}} has {fmt_int(distinct[k])} distinct values in {fmt_int(n_records)} records.",
      "!" = "With so many values most cells are small, and a release would change many of their records.",
      "i" = "Group it first (for a number, e.g. with {.fn cut}), or leave it out of the keys."
    ), "key_distinct", call = call)
  }
  invisible()
}

# The values of the cells of one key from their codes: values[codes], where
# a factor's codes are its values (no copy of the codes).
cell_values <- function(values, codes) {
  if (is.factor(values) && identical(unclass(values), structure(seq_along(levels(values)), levels = levels(values)))) {
    attributes(codes) <- attributes(values)
    return(codes)
  }
  values[codes]
}

# What identifies the records a cross-classification was made from: the
# categories of every key and a fingerprint of every record's codes (the
# one cpp_cross_classify() computed in passing, if given). `check_range`:
# the fingerprint is NA if a code lies outside its levels (for codes that
# code_key(check = FALSE) left unchecked).
key_source <- function(coded, fingerprint = NULL, check_range = FALSE) {
  list(
    values = lapply(coded, `[[`, "values"),
    fingerprint = fingerprint %||% core_call(
      cpp_key_fingerprint, lapply(coded, `[[`, "codes"), vapply(coded, `[[`, integer(1), "offset"),
      if (check_range) vapply(coded, `[[`, integer(1), "nlevels")
    )
  )
}

new_sdc_cells <- function(cells, cell_id, keys, na, n_records, n_excluded) {
  structure(
    list(
      cells = cells,
      cell_id = cell_id,
      keys = keys,
      na = na,
      n_records = n_records,
      n_excluded = n_excluded,
      n_singletons = sum(cells$count == 1L),
      n_doubletons = sum(cells$count == 2L)
    ),
    class = "sdc_cells"
  )
}

# The validator of `sdc_cells` objects: the cells table and the cell of
# every record: counts are whole numbers >= 1 and the numbers of records in
# each cell (one pass over the records in C++). A cells object whose
# `cell_id` is empty (made from counts alone, or by a database) has no
# records to check. `records = FALSE` checks the cells table only: what a
# risk computation reads (engine_plan()); the records' cells are checked
# where records are drawn or written (check_plan_data(), pram_draw(),
# as_release()), which is what made the certificate cost a pass over 10^7
# records.
validate_sdc_cells <- function(cells, arg = "cells", call = rlang::caller_env(), records = TRUE) {
  broken <- function(what) {
    abort_invalid(arg, what, "Use the object {.fn cell_frequencies} returned, or call it again.", call)
  }
  tab <- cells$cells
  if (!is.data.frame(tab) || !is.character(cells$keys) || !all(c(cells$keys, "count") %in% names(tab))) {
    broken("its cells table must hold the key columns and {.field count}")
  }
  counts <- tab$count
  if (!is.integer(counts) || length(counts) == 0 || anyNA(counts) || core_call(cpp_int_range, counts, call = call)[1] < 1L) {
    broken("the cell counts must be whole numbers of at least 1")
  }
  # the counts add up to the records in cells (O(cells): an edited count or
  # a dropped cell is caught without a pass over the records)
  n_in_cells <- as.numeric(cells$n_records %||% NA) - as.numeric(cells$n_excluded %||% 0)
  if (length(n_in_cells) != 1 || is.na(n_in_cells) || core_call(cpp_int_sum, counts, call = call) != n_in_cells) {
    broken("the cell counts do not add up to its records ({.field n_records} - {.field n_excluded})")
  }
  id <- cells$cell_id
  # cells built from counts alone (no cell_id) serve risk computations only
  if (!records || length(id) == 0) return(invisible(cells))
  ncell <- length(counts)
  if (!is.integer(id) || is.object(id)) broken("{.field cell_id} must be an integer vector")
  # one pass: ids in range, and how many records each cell has
  n_of_cell <- core_call(cpp_count_ids, id, ncell, call = call)
  if (is.null(n_of_cell)) {
    broken(paste0("{.field cell_id} must be between 1 and ", fmt_int(ncell), " (the number of cells) or NA"))
  }
  if (!identical(n_of_cell, counts)) {
    broken("the cell counts do not match the numbers of records in each cell ({.field cell_id})")
  }
  invisible(cells)
}

# Integer codes 1..L of one key (NA where missing) and the value of each code.
code_key <- function(x, name, na_category, call = rlang::caller_env(), shift = TRUE, check = TRUE) {
  offset <- 0L
  if (!is.null(dim(x))) {
    abort_sdc(c(
      "Key {.var {name}} must be a vector, one value per record.",
      "x" = "It is a matrix or array column with dimensions {paste(dim(x), collapse = ' x ')}."
    ), "key_type", call = call)
  }
  if (is.factor(x)) {
    # the factor itself carries its codes: no copy
    codes <- x
    if (!is.integer(codes)) codes <- as.integer(unclass(x))
    # check = FALSE: the caller's fingerprint pass checks the codes
    r <- if (check) core_call(cpp_int_range, codes, call = call) else c(NA_integer_, NA_integer_)
    if (!is.na(r[1]) && (r[1] < 1L || r[2] > length(levels(x)))) {
      abort_sdc(c(
        "Key {.var {name}} is a malformed factor: its codes must lie between 1 and its number of levels ({length(levels(x))}).",
        "x" = "They run from {r[1]} to {r[2]}.",
        "i" = "Make it again with {.fn factor}, e.g. {.code factor(as.character(x))}."
      ), "key_type", call = call, arg = name)
    }
    values <- structure(seq_along(levels(x)), levels = levels(x), class = class(x))
  } else if (is.logical(x)) {
    codes <- as.integer(x) + 1L
    values <- c(FALSE, TRUE)
  } else if (is.integer(x) && !is.object(x) && !is.na((r <- core_call(cpp_int_range, x))[1]) &&
    as.numeric(r[2]) - r[1] < 1e6) {
    # a dense range: codes by subtraction; unobserved values make no cells
    # codes x - r[1] + 1: in one pass, or (shift = FALSE, for the core's
    # functions that take offsets) x itself with its offset r[1] - 1
    if (r[1] == 1L) {
      codes <- x
    } else if (shift || (na_category && anyNA(x)) || r[1] == -.Machine$integer.max) {
      # (the offset r[1] - 1 of the smallest integer would be NA)
      codes <- core_call(cpp_shift_codes, x, r[1])
    } else {
      codes <- x
      offset <- r[1] - 1L
    }
    values <- seq.int(r[1], r[2])
  } else if (is.atomic(x) && (is.character(x) || is.numeric(x)) && !is.complex(x)) {
    values <- sort(unique(x[!is.na(x)]), method = "radix")
    codes <- match(x, values)
  } else {
    abort_sdc(c(
      "Key {.var {name}} must be a factor, character, integer, logical or double vector.",
      "x" = "It is {.obj_type_friendly {x}}."
    ), "key_type", call = call)
  }
  nlevels <- length(values)
  if (na_category && anyNA(x)) {
    nlevels <- nlevels + 1L
    codes <- as.integer(codes)
    codes[is.na(codes)] <- nlevels
    # NaN stays NaN when the key has no other missing value
    values[nlevels] <- if (is.double(x) && all(is.nan(x[is.na(x)]))) NaN else NA
  }
  list(codes = codes, values = values, nlevels = as.integer(nlevels), offset = offset)
}

# The codes 1..L of a coded key (code_key(shift = FALSE) may keep an offset).
shifted_codes <- function(coded) {
  if (coded$offset == 0L) coded$codes else core_call(cpp_shift_codes, coded$codes, coded$offset + 1L)
}

# Cross-classify integer codes. Keys whose numbers of levels multiply beyond
# what one 62-bit index holds are first combined in groups; cell numbering
# stays lexicographic because each group's cells are numbered in order.
cross_classify_codes <- function(codes, nlevels, offsets = integer(length(codes))) {
  limit <- 2^60
  if (prod(as.numeric(nlevels)) <= limit) {
    return(core_call(cpp_cross_classify, codes, nlevels, as.integer(offsets)))
  }
  # shifted copies of keys with offsets, then the groups
  for (k in which(offsets != 0L)) codes[[k]] <- core_call(cpp_shift_codes, codes[[k]], offsets[k] + 1L)
  group <- integer(length(nlevels))
  g <- 1L
  acc <- 1
  for (k in seq_along(nlevels)) {
    if (acc * nlevels[k] > limit) {
      g <- g + 1L
      acc <- 1
    }
    acc <- acc * nlevels[k]
    group[k] <- g
  }
  parts <- lapply(split(seq_along(codes), group), function(ks) {
    core_call(cpp_cross_classify, codes[ks], nlevels[ks], integer(length(ks)))
  })
  combined <- cross_classify_codes(
    lapply(parts, `[[`, "cell_id"),
    vapply(parts, function(p) length(p$counts), integer(1))
  )
  # map the combined cells back to the codes of the original keys
  out_codes <- unlist(lapply(seq_along(parts), function(p) {
    lapply(parts[[p]]$codes, function(cc) cc[combined$codes[[p]]])
  }), recursive = FALSE)
  combined$codes <- out_codes
  # the fingerprint of the parts' cells is not that of the keys' codes
  combined$fingerprint <- NULL
  combined
}

#' @export
format.sdc_cells <- function(x, ...) {
  c(
    paste0(
      "<sdc_cells>: ", n_of(x$n_records, "record"), ", ", n_of(length(x$keys), "key"),
      " (", paste(x$keys, collapse = ", "), ")"
    ),
    paste0(
      n_of(nrow(x$cells), "nonempty cell"), ": ", n_of(x$n_singletons, "singleton"),
      ", ", n_of(x$n_doubletons, "doubleton")
    ),
    if (x$na == "exclude") {
      paste0(n_of(x$n_excluded, "record"), " left out for missing keys")
    } else {
      "missing key values form a category of their own"
    }
  )
}

#' @export
print.sdc_cells <- function(x, ...) {
  writeLines(format(x, ...))
  invisible(x)
}

#' @export
summary.sdc_cells <- function(object, ...) {
  t <- object$cells$count
  brk <- c(1, 2, 3, 4, 5, 10, Inf)
  lab <- c("1", "2", "3", "4", "5-9", "10+")
  grp <- cut(t, c(brk[-length(brk)] - 0.5, Inf), labels = lab)
  tab <- data.frame(
    count = lab,
    cells = as.vector(table(grp)),
    records = as.vector(tapply(t, grp, sum, default = 0))
  )
  tab$records_pct <- 100 * tab$records / max(1, sum(t))
  structure(
    list(
      keys = object$keys,
      n_records = object$n_records,
      n_excluded = object$n_excluded,
      n_cells = nrow(object$cells),
      distribution = tab
    ),
    class = "summary.sdc_cells"
  )
}

#' @export
print.summary.sdc_cells <- function(x, ...) {
  cat(
    n_of(x$n_records, "record"), " (", fmt_int(x$n_excluded), " left out), ",
    n_of(x$n_cells, "nonempty cell"), " of ", paste(x$keys, collapse = " x "), "\n",
    sep = ""
  )
  d <- x$distribution
  d$records_pct <- sprintf("%.2f%%", d$records_pct)
  names(d) <- c("count T", "cells", "records", "% of records")
  print(d, row.names = FALSE)
  invisible(x)
}

#' Plot the distribution of cell sizes
#'
#' Bars show how many nonempty cells have each count \eqn{T} (1, 2, 3, 4,
#' 5-9, 10 or more); singleton and doubleton cells, whose records are the
#' easiest to re-identify, are marked in colour. Each bar is labelled with
#' the share of the records its cells hold.
#'
#' @param x An `sdc_cells` object from [cell_frequencies()].
#' @param ... Passed on to [graphics::barplot()].
#' @returns `x`, invisibly.
#' @family cells
#' @export
#' @examples
#' cf <- cell_frequencies(pums_md, c("sex", "age", "race", "marital", "puma"))
#' plot(cf)
plot.sdc_cells <- function(x, ...) {
  d <- summary(x)$distribution
  cols <- c("#D55E00", "#E69F00", rep("grey60", nrow(d) - 2))
  mids <- graphics::barplot(d$cells, names.arg = d$count, col = cols, ylim = c(0, 1.15 * max(d$cells)),
    xlab = "count T of the cell", ylab = "nonempty cells",
    main = paste0("Cells of ", paste(x$keys, collapse = " x "), ": ", n_of(x$n_singletons, "singleton"),
                  ", ", n_of(x$n_doubletons, "doubleton")), ...)
  graphics::text(mids, d$cells, sprintf("%.1f%% of records", d$records_pct), pos = 3, cex = 0.8)
  graphics::legend("topright", c("singletons", "doubletons"), fill = cols[1:2], bty = "n")
  invisible(x)
}

#' @export
as.data.frame.sdc_cells <- function(x, ...) {
  cbind(cell = seq_len(nrow(x$cells)), x$cells)
}

fmt_int <- function(x) format(x, big.mark = ",", scientific = FALSE, trim = TRUE)

# "1 record", "2,000 records"
n_of <- function(n, word) paste(fmt_int(n), if (n == 1) word else paste0(word, "s"))
