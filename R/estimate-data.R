# A released file as its publication sees it (the first steps of
# estimate_table() and estimate_glm()): the category code of every record in
# every key, checked against the publication, and the released file
# aggregated by cell and group in one pass over the records.

# The codes of the released file's keys in the published categories: one
# integer vector per key (NA where a value is missing and missing is not a
# category), after checking that the file is the one published: its keys,
# its number of records, its categories and the released count of every
# category of every key.
released_codes <- function(pub, data, arg = "data", call = rlang::caller_env()) {
  names <- vapply(pub$keys, `[[`, "", "name")
  missing <- setdiff(names, names(data))
  if (length(missing) > 0) {
    abort_mismatch(arg, "its keys are missing", "Not found: {.val {missing}}.",
                   "The publication's keys are {.val {names}}.", call)
  }
  if (nrow(data) != pub$records$n) {
    abort_mismatch(arg, "it has {n_of(nrow(data), 'record')}",
                   "The file was released with {fmt_int(pub$records$n)} records.",
                   "Give the whole released file; estimate for a part of it with {.arg by}.", call)
  }
  codes <- lapply(pub$keys, function(k) released_key_codes(data[[k$name]], k, pub$na, arg, call))
  names(codes) <- names
  for (k in seq_along(codes)) check_released_margin(codes[[k]], pub$keys[[k]], pub$records$margins[[k]], arg, call)
  codes
}

# The codes of one key; an error for a category the publication does not
# have.
released_key_codes <- function(x, key, na, arg, call) {
  if (is.factor(x)) {
    # a factor's codes through the table of its levels, in one pass in the
    # core (no copy of the records)
    code <- core_call(cpp_recode, x, match(category_text(levels(x)), key$categories), 1L,
                      match(NA_character_, key$categories))
  } else if (is.numeric(x) && key$type %in% c("integer", "double")) {
    cats <- suppressWarnings(as.numeric(key$categories))
    # integers matched as integers (twice as fast as against doubles), or
    # through a table over the range of the categories when it is short
    whole <- is.na(cats) | (cats == round(cats) & abs(cats) < .Machine$integer.max)
    if (is.integer(x) && all(whole)) {
      cats <- as.integer(cats)
      known <- cats[!is.na(cats)]
      lo <- if (length(known)) min(known) else 0L
      span <- if (length(known)) as.numeric(max(known)) - lo + 1 else 0
      if (span <= max(2^16, length(x))) {
        table <- rep(NA_integer_, span)
        table[known - lo + 1L] <- which(!is.na(cats))
        code <- core_call(cpp_recode, x, table, lo, match(NA_integer_, cats))
      } else {
        code <- match(x, cats)
      }
    } else {
      code <- match(x, cats)
    }
  } else if (is.atomic(x) && is.null(dim(x))) {
    code <- match(category_text(x), key$categories)
  } else {
    abort_sdc(c("Key {.var {key$name}} of {.arg {arg}} must be a vector of categories.",
                "x" = "It is {.obj_type_friendly {x}}."), "publication_mismatch", call = call, arg = arg)
  }
  if (!anyNA(code)) return(code)
  unknown <- if (na == "category") is.na(code) else is.na(code) & !is.na(x)
  if (any(unknown)) {
    bad <- unique(category_text(x[unknown]))
    abort_sdc(c(
      "Key {.var {key$name}} of {.arg {arg}} has categories the plan does not have.",
      "x" = "Not in the publication: {show_value(bad)}.",
      "i" = "The published categories are {show_value(key$categories, 8)}.",
      "i" = "Is this the released file, read with the types it was written with?"
    ), "publication_mismatch", call = call, arg = arg)
  }
  code
}

check_released_margin <- function(code, key, margin, arg, call) {
  counts <- tabulate(code, length(key$categories))
  if (all(counts == margin$counts)) return(invisible())
  worst <- which.max(abs(counts - margin$counts))
  abort_mismatch(
    arg, "key {.var {key$name}} has other counts",
    "Category {show_value(key$categories[worst])}: {fmt_int(counts[worst])} in {.arg {arg}}, {fmt_int(margin$counts[worst])} in the released file.",
    "Give the released file as it was published, every record and every category unchanged.", call
  )
}

# The released file has as many records in each part of the plan (block or
# stratum) as the publication says: records never leave their block, and
# strata are made of keys that are not perturbed.
check_released_parts <- function(got, expected, what, arg, call) {
  if (all(got == expected)) return(invisible())
  worst <- which.max(abs(got - expected))
  abort_mismatch(arg, "{what} {worst} has {fmt_int(got[worst])} records",
                 "The publication has {fmt_int(expected[worst])} records in {what} {worst}.",
                 "Give the released file as it was published, every record and every category unchanged.", call)
}

# The error for a released file other than the one published.
abort_mismatch <- function(arg, what, found, hint, call, .envir = parent.frame()) {
  msg <- c(paste0("{.arg {arg}} is not the released file of {.arg publication}: ", what, "."), x = found, i = hint)
  abort_sdc(msg, "publication_mismatch", call = call, arg = arg, .envir = .envir)
}

# Codes 1..L of every key with missing values given a code of their own
# (L + 1) when missing is not a category: the records with a missing key
# (never perturbed, na = "exclude") then form groups like the others.
extended_codes <- function(codes, pub) {
  nl <- vapply(pub$keys, function(k) length(k$categories), 1L)
  ext <- lapply(seq_along(codes), function(k) {
    x <- codes[[k]]
    if (anyNA(x)) x[is.na(x)] <- nl[k] + 1L
    x
  })
  names(ext) <- names(codes)
  list(codes = ext, nlevels = nl + 1L, categories = nl)
}

# The records aggregated by released cell (every key) and group `g` in one
# pass: for each such row, its codes, its group, whether it is in a cell
# (no missing key, or missing a category), its number of records and the
# moments of the weights
# `w` and values `y` of its records (cpp_group_moments(): `lin` the sums
# of w and w y, `quad` those of w^2, w^2 y and w^2 y^2).
aggregate_released <- function(codes, pub, g, n_groups, w, y) {
  ext <- extended_codes(codes, pub)
  cc <- cross_classify_codes(c(ext$codes, list(g)), c(ext$nlevels, n_groups))
  mom <- core_call(cpp_group_moments, cc$cell_id, length(cc$counts), w, y)
  nk <- length(codes)
  keys <- cc$codes[seq_len(nk)]
  names(keys) <- names(codes)
  in_cell <- Reduce(`&`, lapply(seq_len(nk), function(k) keys[[k]] <= ext$categories[k]), TRUE)
  lin_cols <- if (is.null(y)) 1L else 1:2
  list(
    codes = keys, g = cc$codes[[nk + 1L]], in_cell = in_cell, count = cc$counts,
    lin = mom[, lin_cols, drop = FALSE], quad = mom[, -lin_cols, drop = FALSE],
    nlevels = ext$nlevels, n_groups = n_groups
  )
}

# Dense ids shared by the rows of several tables of integer columns (the same
# columns, 1-based codes with `nlevels` levels each): one cross-classification
# of the rows stacked. Returns the ids of each table's rows, and the codes
# of every id. Tables without columns (`nlevels` empty: all rows alike) give
# their numbers of rows in `n`.
shared_ids <- function(tables, nlevels, n = NULL) {
  n <- n %||% vapply(tables, function(t) length(t[[1]]), 1L)
  if (length(nlevels) == 0 || sum(n) == 0) {
    return(list(ids = lapply(n, function(k) rep.int(1L, k)), codes = list(), n = as.integer(sum(n) > 0)))
  }
  cols <- lapply(seq_along(nlevels), function(j) unlist(lapply(tables, `[[`, j), use.names = FALSE))
  cc <- cross_classify_codes(cols, as.integer(nlevels))
  end <- cumsum(n)
  ids <- lapply(seq_along(tables), function(i) cc$cell_id[seq.int(end[i] - n[i] + 1, length.out = n[i])])
  list(ids = ids, codes = cc$codes, n = length(cc$counts))
}

# Sums of the rows of a numeric matrix (or of a vector) by id (1..n), as a
# matrix (a vector), in one pass in C++.
sum_by <- function(x, id, n) {
  if (is.matrix(x)) return(core_call(cpp_group_sums, as.integer(id), as_double_matrix(x), ncol(x), as.integer(n)))
  core_call(cpp_group_sums, as.integer(id), as.numeric(x), 1L, as.integer(n))[, 1]
}

# A matrix of doubles (no copy when it is one).
as_double_matrix <- function(x) {
  if (!is.double(x)) storage.mode(x) <- "double"
  x
}
