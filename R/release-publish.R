#' Publish the plan of a release for the users of the released file
#'
#' A released file is analysed correctly only with its transition
#' probabilities (Nayak, Zhang and You 2016, Section 3.1: "agencies should
#' release P along with the perturbed data"). `publish_plan()` gathers
#' everything a data user needs for that and nothing of the records: the keys
#' and their categories, the plan, the goal, \eqn{\xi} and the certificate.
#' [read_plan()] reads it back; [estimate_table()] and [estimate_glm()] take
#' it beside the released file.
#'
#' @section What is published:
#' * `keys`: every key of the cross-classification (with `also` variables
#'   perturbed jointly: they are keys here), in the order of the plan, each
#'   with its type in the original data, its categories (as text; `NA` is a
#'   category of its own with `na = "category"`) and whether it is perturbed.
#' * `na`: how records with a missing key were treated (with `"exclude"`
#'   they were never perturbed).
#' * `records`: the number of records, of records with a missing key left out
#'   (`"exclude"`), and the released count of every category of every key
#'   (the margins of the released file, to recognise it).
#' * `plan`, for a block plan ([ifpr()], [pram_plan()]): the cells of the
#'   blocks, each by the codes of its categories, with its original count
#'   \eqn{T_i}, its block, and each block's \eqn{\theta} (IFPR) or
#'   transition matrix. The transition probabilities of IFPR,
#'   \eqn{p_{ii} = 1 - \theta / T_i} and
#'   \eqn{p_{ji} = \theta / ((m - 1) T_i)}, are made of these counts, so a
#'   user who has the plan knows the original count of every cell: cells
#'   outside the blocks are released unchanged and no record enters them.
#'   For a per-variable plan ([pram_release()], [pram_plan_vars()], an
#'   `sdcMicroObj` certified by [pram_certify()]): the perturbed keys, the
#'   strata (each by the codes of its categories, with its number of
#'   records) and one transition matrix per perturbed key and stratum, one
#'   column per original category (columns sum to 1). No cell count is
#'   published: none is needed.
#' * `certificate`: the goal, \eqn{\xi}, the maximum risk with what it is
#'   (`risk_kind`: `"exact"`, or `"estimated"` from a [population_model()];
#'   `target`: a target known to be in the file, or for a sample release one
#'   who may not be, with the population it was computed from), the
#'   \eqn{a} and the cell (its key values and count) where it is attained,
#'   the method and calibration, and the maxima for intruders who know fewer
#'   keys when the release was certified for them.
#'
#' Not published: the seed, the original cell of any record, the cells
#' outside the blocks, the partition sets and everything else the release
#' object holds.
#'
#' @section Why publishing keeps the certificate:
#' The certificate bounds \eqn{R_j(a, t) = P(CM \mid X_B = c_j, S_j = a,
#' T = t)}, the probability that an intruder's match is correct *given the
#' original frequencies* \eqn{T = t}, for every cell \eqn{j} and every
#' \eqn{a} the goal covers, computed with the transition probabilities of
#' the plan (eq. 2.8, 4.3-4.4). Below (2.8), Nayak, Zhang and You (2016)
#' note that this bound holds "even if the intruder knows the frequencies in
#' the original data"; and \eqn{R_j(a, t)} is computed as the intruder who
#' knows \eqn{P} would compute it. Every published field is a function of
#' \eqn{t} and \eqn{P} (or of the released file itself), so an intruder who
#' reads the publication knows nothing that \eqn{R_j(a, t)} does not already
#' condition on:
#' * the categories of the keys and the released margins are in the released
#'   file;
#' * IFPR plans: the block cells, their counts \eqn{T_i} (a part of
#'   \eqn{t}) and \eqn{\theta} are \eqn{P}; matrix blocks are \eqn{P};
#' * per-variable plans: the matrices are \eqn{P}; the strata are
#'   combinations of keys that are not perturbed, and their numbers of
#'   records can be counted in the released file;
#' * goal, \eqn{\xi}, the certificate's value, cell, count and \eqn{a}, and
#'   the maxima for intruders who know fewer keys are functions of \eqn{t}
#'   and \eqn{P}.
#'
#' The seed is left out: with it the draw, and so every record's original
#' cell, could be recomputed. The argument covers the paper's intruder, who
#' knows that the target is in the data. The counts of block cells tell
#' anyone that each of these combinations of keys occurs in the original
#' data (for a cell of count 1: that exactly one person has it); an agency
#' that must also hide whether a combination occurs at all (response
#' knowledge) should weigh that before publishing an IFPR plan. Per-variable
#' plans publish no count.
#'
#' @section Files:
#' `file` ending in `.rds` is written with [saveRDS()]; ending in `.json`,
#' as JSON following the schema
#' `system.file("schema", "sdc-publication-1.schema.json", package = "sdcRisk")`
#' (JSON Schema 2020-12; numbers with 17 significant digits, so a plan read
#' back is the plan written). Both hold the same object, which [read_plan()]
#' checks whole.
#'
#' @param release A release: an `sdc_release` from [ifpr()] (on a data frame
#'   or a database table), an `sdc_pram_release` from [pram_release()], or an
#'   `sdcMicroObj` after `sdcMicro::pram()`; or a plan (`pram_plan`,
#'   `pram_plan_vars`) applied with [pram_apply()], with the released data
#'   in `released`: its certificate is then computed by [max_match_risk()]
#'   (Goal 3, every key known).
#' @param file `NULL`, or a path ending in `.rds` or `.json` to write the
#'   publication to.
#' @param released With a plan only: the data frame [pram_apply()]
#'   returned.
#' @returns An object of class `sdc_publication` (a list with the fields
#'   above, `format`, `version` and `made_with`), invisibly when `file` is
#'   given.
#' @references Nayak, T. K., Zhang, C. and You, J. (2016). Measuring
#'   identification risk in microdata release and its control by
#'   post-randomization. U.S. Census Bureau, Research Report Series
#'   (Disclosure Avoidance #2016-02), Sections 2.2 and 3.
#' @family estimation
#' @export
#' @examples
#' set.seed(1)
#' rel <- ifpr(pums_md[1:3000, ], c("sex", "age", "race"), xi = 0.3)
#' pub <- publish_plan(rel)
#' pub
#' f <- tempfile(fileext = ".json")
#' publish_plan(rel, f)
#' identical(read_plan(f)$plan, pub$plan)
publish_plan <- function(release, file = NULL, released = NULL) {
  call <- rlang::current_env()
  rel <- publication_release(release, released, call = call)
  if (!is.null(file)) publication_file_kind(file, call = call)
  plan <- rel$plan
  keys <- publication_keys(plan$cells, plan_perturbed_keys(plan))
  pub <- new_sdc_publication(
    kind = plan_kind(plan),
    keys = keys,
    na = plan$cells$na,
    records = list(
      n = as.numeric(plan$cells$n_records),
      excluded = as.numeric(plan$cells$n_excluded %||% 0),
      margins = release_margins(rel, keys)
    ),
    plan = publication_plan(plan, keys),
    certificate = publication_certificate(release_certificate(rel))
  )
  validate_sdc_publication(pub, call = call)
  if (is.null(file)) return(pub)
  write_publication(pub, file, call = call)
  invisible(pub)
}

#' Read a published plan
#'
#' Reads what [publish_plan()] wrote, as RDS or JSON (by the file's
#' extension), and checks it whole: a publication edited so that it no
#' longer hangs together (categories, codes, counts, \eqn{\theta},
#' matrices) is an error of class `sdcRisk_error_publication`.
#'
#' @param file Path of a `.rds` or `.json` file written by [publish_plan()].
#' @returns An object of class `sdc_publication`.
#' @family estimation
#' @export
#' @examples
#' set.seed(1)
#' rel <- pram_release(pums_md[1:2000, ], c("sex", "race", "marital"),
#'   vars = c("race", "marital"), strata = "sex")
#' f <- tempfile(fileext = ".rds")
#' publish_plan(rel, f)
#' read_plan(f)
read_plan <- function(file) {
  call <- rlang::current_env()
  kind <- publication_file_kind(file, call = call)
  if (!file.exists(file)) {
    abort_sdc("{.arg file} does not exist: {.file {file}}.", "argument", call = call, arg = "file")
  }
  pub <- tryCatch(
    if (kind == "rds") readRDS(file) else publication_from_json(file),
    error = function(e) {
      msg <- conditionMessage(e)
      abort_sdc(c("{.arg file} is not a publication written by {.fn publish_plan}.", "x" = "{msg}"),
                "publication", call = call, arg = "file")
    }
  )
  if (!is.list(pub) || !identical(pub$format, publication_format)) {
    abort_sdc(c("{.arg file} is not a publication written by {.fn publish_plan}.",
                "x" = "Its {.field format} is not {.val {publication_format}}."), "publication", call = call, arg = "file")
  }
  pub <- new_sdc_publication_from_list(pub)
  validate_sdc_publication(pub, arg = "file", call = call)
}

# What publish_plan() reads of a release: its plan, released data and
# certificate (a plan given with its released data is certified here).
publication_release <- function(release, released, call) {
  if (!inherits(release, "pram_plan_any")) {
    if (!is.null(released)) {
      abort_sdc(c("{.arg released} is for a plan only.",
                  "i" = "A release holds its released data."), "argument", call = call, arg = "released")
    }
    rel <- as_release(release, call = call)
    rel$certificate <- release_certificate(rel)
    return(rel)
  }
  plan <- release
  validate_plan(plan, arg = "release", call = call)
  check_data_frame(released, call = call)
  missing <- setdiff(plan$cells$keys, names(released))
  if (nrow(released) != plan$cells$n_records || length(missing) > 0) {
    abort_sdc(c("{.arg released} must be the data {.fn pram_apply} returned for {.arg release}.",
                "x" = "It has {fmt_int(nrow(released))} rows (the plan has {fmt_int(plan$cells$n_records)} records){if (length(missing)) paste0(' and lacks ', show_value(missing)) else ''}."),
              "publication_mismatch", call = call, arg = "released")
  }
  mx <- max_match_risk(plan)
  cert <- list(goal = mx$goal, xi = NA_real_, risk = mx$risk, cell = mx$cell, a = mx$a, count = mx$count,
               cell_keys = mx$keys, method = if (plan_kind(plan) == "vars") "per-variable PRAM" else "pram_plan()")
  structure(list(plan = plan, data = released, certificate = cert), class = c("sdc_release_plan", "sdc_release_any"))
}

publication_format <- "sdcRisk-publication"
publication_version <- 1L

new_sdc_publication <- function(kind, keys, na, records, plan, certificate) {
  structure(
    list(
      format = publication_format, version = publication_version, kind = kind, keys = keys, na = na,
      records = records, plan = plan, certificate = certificate,
      made_with = paste("sdcRisk", utils::packageVersion("sdcRisk"))
    ),
    class = c(paste0("sdc_publication_", kind), "sdc_publication")
  )
}

# A publication read back from a file: the class from its kind (checked by
# the validator).
new_sdc_publication_from_list <- function(x) {
  kind <- if (is.character(x$kind) && length(x$kind) == 1 && x$kind %in% c("blocks", "vars")) x$kind else "unknown"
  structure(unclass(x), class = c(paste0("sdc_publication_", kind), "sdc_publication"))
}

# The keys that the plan perturbs (a block plan: every key of its cells).
plan_perturbed_keys <- function(plan) {
  if (plan_kind(plan) == "vars") plan$vars else plan$cells$keys
}

# Name, type, categories (text, NA for the missing category) and whether it
# is perturbed, of every key of the cells.
publication_keys <- function(cells, perturbed) {
  lapply(seq_along(cells$keys), function(k) {
    name <- cells$keys[k]
    values <- cells$source$values[[k]] %||% {
      # cells counted in a database record no categories: those of the cells
      x <- cells$cells[[name]]
      if (is.factor(x)) factor(levels(x), levels(x)) else sort(unique(x), na.last = TRUE)
    }
    if (identical(cells$na, "category") && anyNA(cells$cells[[name]]) && !anyNA(values)) values <- c(values, NA)
    list(name = name, type = key_type(values), categories = category_text(values),
         perturbed = name %in% perturbed)
  })
}

key_type <- function(x) {
  if (is.factor(x)) "factor" else if (is.logical(x)) "logical" else if (is.integer(x)) "integer" else if (is.numeric(x)) "double" else "character"
}

# Values as the text of their category: levels of a factor, numbers with
# 15 significant digits (what as.character() writes), NA kept.
category_text <- function(x) {
  out <- if (is.factor(x)) as.character(x) else if (is.numeric(x)) format_number(x) else as.character(x)
  out[is.na(x)] <- NA_character_
  out
}

format_number <- function(x) {
  out <- as.character(x)
  whole <- !is.na(x) & x == round(x) & abs(x) < 1e15
  out[whole] <- format(x[whole], scientific = FALSE, trim = TRUE)
  out
}

# The codes of the cells' values in the published categories.
publication_codes <- function(cells_table, keys) {
  out <- lapply(keys, function(k) match(category_text(cells_table[[k$name]]), k$categories))
  names(out) <- vapply(keys, `[[`, "", "name")
  out
}

# The plan, as published: methods per kind of plan.
publication_plan <- function(plan, keys) UseMethod("publication_plan")

#' @export
publication_plan.pram_plan <- function(plan, keys) {
  validate_pram_plan(plan, records = FALSE)
  sizes <- diff(plan$block_start)
  cells <- plan$block_cells
  matrices <- lapply(seq_along(sizes), function(b) {
    if (!is.na(plan$theta[b])) return(NULL)
    m <- sizes[b]
    matrix(plan$matrix[plan$matrix_start[b] + seq_len(m * m)], m, m)
  })
  list(
    theta = plan$theta,
    size = as.integer(sizes),
    cells = list(codes = publication_codes(plan$cells$cells[cells, , drop = FALSE], keys),
                 count = plan$cells$cells$count[cells]),
    matrices = matrices
  )
}

#' @export
publication_plan.pram_plan_vars <- function(plan, keys) {
  validate_pram_plan_vars(plan, records = FALSE)
  cells <- plan$cells
  first <- match(seq_along(plan$stratum_labels), plan$stratum_of_cell)
  key_names <- vapply(keys, `[[`, "", "name")
  strata_keys <- keys[match(plan$strata, key_names)]
  list(
    vars = plan$vars,
    strata = plan$strata,
    strata_cells = list(
      codes = publication_codes(cells$cells[first, , drop = FALSE], strata_keys),
      records = as.numeric(rowsum(cells$cells$count, plan$stratum_of_cell, reorder = TRUE))
    ),
    # the package convention, categories in the published order
    matrices = lapply(plan$matrices, function(ms) {
      out <- lapply(plan$vars, function(v) unname(ms[[v]]))
      names(out) <- plan$vars
      out
    })
  )
}

publication_certificate <- function(cert) {
  cell <- cert$cell_keys
  cell <- if (is.null(cell)) NULL else vapply(cell, function(x) category_text(x)[1], "")
  known <- if (is.data.frame(cert$known)) cert$known else NULL
  list(
    goal = cert$goal %||% NA_character_,
    xi = as.numeric(cert$xi %||% NA_real_),
    risk = as.numeric(cert$risk %||% NA_real_),
    # what the risk is: exact or estimated, and for which target (a sample
    # release certifies a target who may not be in the file)
    risk_kind = tolower(risk_kind(cert$sample)),
    target = sample_line(cert$sample),
    a = as.numeric(cert$a %||% NA_real_),
    count = as.numeric(cert$count %||% NA_real_),
    cell = as.list(cell),
    method = cert$method %||% NA_character_,
    calibrate = cert$calibrate %||% NA_character_,
    intruder_keys = if (is.character(cert$known)) cert$known else NULL,
    known = if (!is.null(known)) as.data.frame(known[intersect(c("known", "risk", "cell", "a", "count_known"), names(known))]) else NULL
  )
}

# The released count of every category of every key, and of the records
# whose value is none of them (a missing value where it is not a category):
# methods per kind of release.
release_margins <- function(release, keys) UseMethod("release_margins")

#' @export
release_margins.sdc_release_any <- function(release, keys) {
  margins <- lapply(keys, function(k) {
    code <- match(category_text(release$data[[k$name]]), k$categories)
    list(counts = as.numeric(tabulate(code, length(k$categories))), other = as.numeric(sum(is.na(code))))
  })
  names(margins) <- vapply(keys, `[[`, "", "name")
  margins
}

#' @export
release_margins.sdc_release_db <- function(release, keys) {
  margins <- lapply(keys, function(k) {
    tab <- db_counts(release$data, k$name)
    code <- match(category_text(tab[[k$name]]), k$categories)
    counts <- numeric(length(k$categories))
    counts[code[!is.na(code)]] <- tab$sdc_count__[!is.na(code)]
    list(counts = counts, other = as.numeric(sum(tab$sdc_count__[is.na(code)])))
  })
  names(margins) <- vapply(keys, `[[`, "", "name")
  margins
}

# ---- validation -------------------------------------------------------------

# Every field of a publication that estimation reads, whatever edits were
# made to it: keys and categories, records and margins, the plan (codes in
# range, distinct cells, theta in [0, min T] of its block, column-stochastic
# matrices of the right size), the certificate's types. Linear in the size
# of the publication. An error here is sdcRisk_error_publication.
# `deep = FALSE` leaves out the check that no cell is in the blocks twice,
# which estimate_table() makes in its own pass over the cells.
# A publication already checked (with `deep` at least as asked) is not
# checked again: its fingerprint (rlang::hash(), a quarter of the time of
# the check) is remembered, so a publication edited since is checked anew.
validate_sdc_publication <- function(pub, arg = "publication", call = rlang::caller_env(), deep = TRUE) {
  fingerprint <- if (inherits(pub, "sdc_publication")) rlang::hash(pub)
  if (!is.null(fingerprint) && isTRUE(publication_checked[[fingerprint]] >= deep)) return(invisible(pub))
  check_sdc_publication(pub, arg, call, deep)
  if (length(publication_checked) >= 16) rm(list = ls(publication_checked), envir = publication_checked)
  assign(fingerprint, deep || isTRUE(publication_checked[[fingerprint]]), envir = publication_checked)
  invisible(pub)
}

# The fingerprints of the publications checked in this session: TRUE when
# checked deeply (deep = TRUE), FALSE otherwise.
publication_checked <- new.env(parent = emptyenv())

check_sdc_publication <- function(pub, arg, call, deep) {
  broken <- function(what) {
    abort_sdc(c("{.arg {arg}} is not a valid publication: {what}.",
                "i" = "Use the object {.fn publish_plan} returned or {.fn read_plan} read, unmodified."),
              "publication", call = call, arg = arg)
  }
  if (!inherits(pub, "sdc_publication") || !identical(pub$format, publication_format)) {
    abort_sdc(c("{.arg {arg}} must be a publication from {.fn publish_plan} or {.fn read_plan}.",
                "x" = "It is {.obj_type_friendly {pub}}."), "publication", call = call, arg = arg)
  }
  if (!identical(pub$version, publication_version)) broken(paste0("its version is not ", publication_version))
  if (!is.character(pub$kind) || length(pub$kind) != 1 || !pub$kind %in% c("blocks", "vars") ||
      !inherits(pub, paste0("sdc_publication_", pub$kind))) {
    broken("its {.field kind} must be \"blocks\" or \"vars\"")
  }
  validate_publication_keys(pub, broken)
  validate_publication_records(pub, broken)
  validate_publication_plan(pub, broken, deep)
  cert <- pub$certificate
  if (!is.list(cert) || !is.character(cert$goal) || !is.numeric(cert$risk) || !is.numeric(cert$xi)) {
    broken("its {.field certificate} must hold the goal, xi and the risk")
  }
  if (!is.character(cert$risk_kind) || length(cert$risk_kind) != 1 || !cert$risk_kind %in% c("exact", "estimated") ||
      !is.character(cert$target) || length(cert$target) != 1 || is.na(cert$target)) {
    broken("its {.field certificate} must say whether the risk is exact or estimated, and for which target")
  }
  invisible(pub)
}

validate_publication_keys <- function(pub, broken) {
  keys <- pub$keys
  ok_key <- function(k) {
    is.list(k) && is.character(k$name) && length(k$name) == 1 && !is.na(k$name) &&
      is.character(k$type) && length(k$type) == 1 && k$type %in% c("factor", "logical", "integer", "double", "character") &&
      is.character(k$categories) && !anyDuplicated(k$categories) && is.logical(k$perturbed) &&
      length(k$perturbed) == 1 && !is.na(k$perturbed)
  }
  if (!is.list(keys) || length(keys) == 0 || !all(vapply(keys, ok_key, logical(1)))) {
    broken("each of its {.field keys} must have a name, a type, distinct categories and a flag {.field perturbed}")
  }
  names <- vapply(keys, `[[`, "", "name")
  if (anyDuplicated(names) || !any(vapply(keys, `[[`, TRUE, "perturbed"))) {
    broken("its {.field keys} must have distinct names, one of them perturbed at least")
  }
  if (!is.character(pub$na) || length(pub$na) != 1 || !pub$na %in% c("exclude", "category")) {
    broken("its {.field na} must be \"exclude\" or \"category\"")
  }
  invisible()
}

validate_publication_records <- function(pub, broken) {
  rec <- pub$records
  keys <- pub$keys
  if (!is.list(rec) || !is_numbers(rec$n, 1, whole = TRUE, n = 1) ||
      !is_numbers(rec$excluded, 0, rec$n, whole = TRUE, n = 1)) {
    broken("its {.field records} must give the number of records and of records left out")
  }
  mg <- rec$margins
  if (!is.list(mg) || !identical(names(mg), vapply(keys, `[[`, "", "name"))) {
    broken("its {.field records$margins} must have one element per key")
  }
  for (k in seq_along(keys)) {
    m <- mg[[k]]
    if (!is.list(m) || !is_numbers(m$counts, 0, whole = TRUE, n = length(keys[[k]]$categories)) ||
        !is_numbers(m$other, 0, whole = TRUE, n = 1) || sum(m$counts) + m$other != rec$n) {
      broken(paste0("the released margin of key ", keys[[k]]$name, " must count its ", fmt_int(rec$n), " records by category"))
    }
  }
  invisible()
}

validate_publication_plan <- function(pub, broken, deep) UseMethod("validate_publication_plan")

#' @export
validate_publication_plan.sdc_publication_blocks <- function(pub, broken, deep) {
  p <- pub$plan
  theta <- p$theta
  nb <- length(theta)
  if (!is.list(p) || !is.numeric(theta) || !is.numeric(p$size) || length(p$size) != nb ||
      !is_numbers(p$size, 2, whole = TRUE) || !is.list(p$matrices) || length(p$matrices) != nb) {
    broken("its {.field plan} must give theta, a size of at least 2 and a matrix or NULL for every block")
  }
  ncell <- sum(p$size)
  validate_publication_codes(p$cells$codes, pub$keys, ncell, broken)
  count <- p$cells$count
  if (!is_numbers(count, 1, whole = TRUE, n = ncell) || sum(count) > pub$records$n - pub$records$excluded) {
    broken("the counts of its block cells must be whole numbers of at least 1, no more than its records")
  }
  if (deep && has_duplicate_rows(p$cells$codes, pub$keys)) broken("a cell is in its blocks twice")
  block <- rep.int(seq_len(nb), p$size)
  ifpr <- !is.na(theta)
  # theta <= min T of its block: every cell's count at least its block's theta
  th <- theta[block]
  if (any(!is.finite(theta[ifpr])) || any(theta[ifpr] < 0) || any(count < th, na.rm = TRUE)) {
    broken("every IFPR block's theta must lie in [0, the smallest count of its cells]")
  }
  for (b in which(!ifpr)) {
    if (!is_stochastic(p$matrices[[b]], p$size[b])) {
      broken(paste0("block ", b, " must have theta or a column-stochastic ", p$size[b], " x ", p$size[b], " matrix"))
    }
  }
  if (any(lengths(p$matrices[ifpr]) > 0)) broken("an IFPR block must have no matrix")
  invisible()
}

#' @export
validate_publication_plan.sdc_publication_vars <- function(pub, broken, deep) {
  p <- pub$plan
  names <- vapply(pub$keys, `[[`, "", "name")
  perturbed <- names[vapply(pub$keys, `[[`, TRUE, "perturbed")]
  if (!is.list(p) || !identical(p$vars, perturbed) || !is.character(p$strata) ||
      !all(p$strata %in% setdiff(names, perturbed)) || anyDuplicated(p$strata)) {
    broken("its {.field plan} must name the perturbed keys and strata among the other keys")
  }
  ns <- length(p$strata_cells$records)
  strata_keys <- pub$keys[match(p$strata, names)]
  validate_publication_codes(p$strata_cells$codes, strata_keys, ns, broken)
  if (ns < 1 || !is_numbers(p$strata_cells$records, 0, whole = TRUE) ||
      sum(p$strata_cells$records) != pub$records$n - pub$records$excluded ||
      (length(p$strata) > 0 && has_duplicate_rows(p$strata_cells$codes, strata_keys)) ||
      (length(p$strata) == 0 && ns != 1)) {
    broken("its strata must be distinct, with numbers of records adding up to the records in cells")
  }
  if (!is.list(p$matrices) || length(p$matrices) != ns) broken("it must have one list of matrices per stratum")
  k <- vapply(pub$keys[match(p$vars, names)], function(x) length(x$categories), 1L)
  for (ms in p$matrices) {
    ok <- is.list(ms) && identical(names(ms), p$vars) &&
      all(vapply(seq_along(k), function(j) is_stochastic(ms[[j]], k[j]), logical(1)))
    if (!ok) broken("each stratum must have a column-stochastic matrix per perturbed key, one row and column per category")
  }
  invisible()
}

#' @export
validate_publication_plan.default <- function(pub, broken, deep) broken("its {.field kind} is unknown")

validate_publication_codes <- function(codes, keys, n, broken) {
  names <- vapply(keys, `[[`, "", "name")
  if (!is.list(codes) || !identical(names(codes), names)) broken("its cells must have codes for every key")
  for (k in seq_along(keys)) {
    if (!is_codes(codes[[k]], length(keys[[k]]$categories), n)) {
      broken(paste0("the codes of key ", names[k], " must be ", fmt_int(n), " category numbers"))
    }
  }
  invisible()
}

# Integer codes 1..max, n of them (one pass in C++ for the range).
is_codes <- function(x, max, n) {
  if (!is.integer(x) || is.object(x) || length(x) != n || anyNA(x)) return(FALSE)
  n == 0 || all(core_call(cpp_int_range, x) >= c(1L, -Inf) & core_call(cpp_int_range, x) <= c(Inf, max))
}

# Whether two rows of codes (checked in range) are the same, by one
# cross-classification.
has_duplicate_rows <- function(codes, keys) {
  n <- length(codes[[1]])
  if (n < 2) return(FALSE)
  nl <- vapply(keys, function(k) length(k$categories), 1L)
  length(cross_classify_codes(unname(codes), nl)$counts) < n
}

# An m x m matrix with entries in [0, 1] whose columns sum to 1.
is_stochastic <- function(p, m) {
  is.matrix(p) && is.numeric(p) && identical(dim(p), as.integer(c(m, m))) && all(is.finite(p)) &&
    all(p >= 0 & p <= 1) && all(abs(colSums(p) - 1) <= 1e-9)
}

# ---- files ------------------------------------------------------------------

publication_file_kind <- function(file, call = rlang::caller_env()) {
  ok <- is.character(file) && length(file) == 1 && !is.na(file)
  ext <- if (ok && grepl(".", basename(file), fixed = TRUE)) tolower(sub(".*[.]", "", basename(file))) else ""
  if (!ext %in% c("rds", "json")) {
    abort_sdc(c("{.arg file} must be one path ending in {.file .rds} or {.file .json}.",
                "x" = "It is {show_value(file)}."), "argument", call = call, arg = "file")
  }
  ext
}

write_publication <- function(pub, file, call = rlang::caller_env()) {
  if (publication_file_kind(file, call = call) == "rds") {
    saveRDS(pub, file)
    return(invisible(file))
  }
  require_package("jsonlite", "write a publication as JSON", call = call)
  txt <- jsonlite::toJSON(publication_to_json_list(pub), auto_unbox = TRUE, digits = NA, na = "null",
                          null = "null", pretty = TRUE, json_verbatim = TRUE)
  writeLines(txt, file, useBytes = TRUE)
  invisible(file)
}

# JSON cannot tell a vector of length 1 from a number: vectors that are
# vectors in the schema are marked with I() so that toJSON() writes arrays.
# Non-integer numbers (theta, matrices) are written verbatim with 17
# significant digits, which read back as the same doubles (jsonlite writes
# 15 at most).
publication_to_json_list <- function(pub) {
  x <- unclass(pub)
  x$keys <- lapply(x$keys, function(k) {
    k$categories <- I(k$categories)
    k
  })
  x$records$margins <- lapply(x$records$margins, function(m) {
    m$counts <- I(m$counts)
    m
  })
  x$plan <- if (x$kind == "blocks") {
    list(theta = json_numbers(x$plan$theta), size = I(x$plan$size),
         cells = list(codes = lapply(x$plan$cells$codes, I), count = I(x$plan$cells$count)),
         matrices = lapply(x$plan$matrices, json_matrix))
  } else {
    list(vars = I(x$plan$vars), strata = I(x$plan$strata),
         strata_cells = list(codes = lapply(x$plan$strata_cells$codes, I), records = I(x$plan$strata_cells$records)),
         matrices = lapply(x$plan$matrices, function(ms) lapply(ms, json_matrix)))
  }
  for (f in c("xi", "risk")) x$certificate[[f]] <- json_numbers(x$certificate[[f]], array = FALSE)
  if (!is.null(x$certificate$intruder_keys)) x$certificate$intruder_keys <- I(x$certificate$intruder_keys)
  x
}

json_numbers <- function(x, array = TRUE) {
  txt <- ifelse(is.na(x), "null", sprintf("%.17g", x))
  structure(if (array) paste0("[", paste(txt, collapse = ", "), "]") else txt, class = "json")
}

json_matrix <- function(m) {
  if (is.null(m)) return(NULL)
  rows <- vapply(seq_len(nrow(m)), function(i) json_numbers(m[i, ]), "")
  structure(paste0("[", paste(rows, collapse = ", "), "]"), class = "json")
}

# The publication of a JSON file, with the R types of the object
# publish_plan() made (JSON has numbers, strings and null only). Read
# without simplification, so that every field is converted here and
# nowhere else.
publication_from_json <- function(file) {
  require_package("jsonlite", "read a publication from JSON", call = rlang::caller_env(2))
  x <- jsonlite::fromJSON(file, simplifyVector = FALSE)
  # null in an array is NA
  vec <- function(v, as) vapply(v %||% list(), function(e) if (is.null(e)) as(NA) else as(e), as(NA))
  chr <- function(v) vec(v, as.character)
  num <- function(v) vec(v, as.numeric)
  int <- function(v) vec(v, as.integer)
  mat <- function(m) if (is.null(m)) NULL else do.call(rbind, lapply(m, num))
  x$version <- as.integer(x$version)
  x$keys <- lapply(x$keys, function(k) {
    list(name = as.character(k$name), type = as.character(k$type), categories = chr(k$categories),
         perturbed = as.logical(k$perturbed))
  })
  x$records$n <- as.numeric(x$records$n)
  x$records$excluded <- as.numeric(x$records$excluded)
  x$records$margins <- lapply(x$records$margins, function(m) list(counts = num(m$counts), other = as.numeric(m$other)))
  p <- x$plan
  x$plan <- if (identical(x$kind, "blocks")) {
    list(theta = num(p$theta), size = int(p$size),
         cells = list(codes = lapply(p$cells$codes, int), count = int(p$cells$count)),
         matrices = lapply(p$matrices, mat))
  } else {
    codes <- lapply(p$strata_cells$codes, int)
    if (length(codes) == 0) codes <- stats::setNames(list(), character())
    list(vars = chr(p$vars), strata = chr(p$strata),
         strata_cells = list(codes = codes, records = num(p$strata_cells$records)),
         matrices = lapply(p$matrices, function(ms) lapply(ms, mat)))
  }
  x$certificate <- certificate_from_json(x$certificate, chr)
  x
}

certificate_from_json <- function(cert, chr) {
  one <- function(v, as) if (is.null(v)) as(NA) else as(v)
  out <- list(
    goal = one(cert$goal, as.character), xi = one(cert$xi, as.numeric), risk = one(cert$risk, as.numeric),
    risk_kind = one(cert$risk_kind, as.character), target = one(cert$target, as.character),
    a = one(cert$a, as.numeric), count = one(cert$count, as.numeric),
    cell = if (length(cert$cell)) lapply(cert$cell, function(v) one(v, as.character)) else NULL,
    method = one(cert$method, as.character), calibrate = one(cert$calibrate, as.character),
    intruder_keys = if (is.null(cert$intruder_keys)) NULL else chr(cert$intruder_keys),
    known = if (length(cert$known)) {
      do.call(rbind, lapply(cert$known, function(r) as.data.frame(lapply(r, function(v) one(v, identity)))))
    }
  )
  out
}

require_package <- function(pkg, what, call = rlang::caller_env()) {
  if (!requireNamespace(pkg, quietly = TRUE)) {
    abort_sdc(c(
      "To {what}, the package {.pkg {pkg}} is needed.",
      "i" = "Install it with {.code install.packages(\"{pkg}\")}."
    ), "missing_package", call = call)
  }
  invisible(TRUE)
}

# ---- printing ---------------------------------------------------------------

#' @export
format.sdc_publication <- function(x, ...) {
  validate_sdc_publication(x, arg = "x", call = rlang::current_env())
  keys <- vapply(x$keys, function(k) paste0(k$name, " (", length(k$categories), if (k$perturbed) ", perturbed" else "", ")"), "")
  cert <- x$certificate
  plan <- if (x$kind == "blocks") {
    p <- x$plan
    n_ifpr <- sum(!is.na(p$theta))
    th <- range(p$theta, na.rm = TRUE)
    paste0("Block plan: ", n_of(length(p$theta), "block"), " over ", n_of(sum(p$size), "cell"), " (",
           fmt_int(sum(p$cells$count)), " records); IFPR blocks ", fmt_int(n_ifpr),
           if (n_ifpr > 0) paste0(", theta ", format(th[1], digits = 4), if (diff(th) > 0) paste0(" to ", format(th[2], digits = 4))) else "",
           "; matrix blocks ", fmt_int(length(p$theta) - n_ifpr))
  } else {
    p <- x$plan
    paste0("Per-variable plan: ", paste(p$vars, collapse = ", "), " perturbed",
           if (length(p$strata)) paste0(" within ", fmt_int(length(p$strata_cells$records)), if (length(p$strata_cells$records) == 1) " stratum" else " strata", " of ", paste(p$strata, collapse = " x ")) else "")
  }
  c(
    paste0("<sdc_publication>: the plan of a release of ", n_of(x$records$n, "record"), " (", x$made_with, ")"),
    paste0("Keys: ", paste(keys, collapse = ", "), "; missing keys: ", x$na),
    plan,
    paste0("Certificate: goal ", cert$goal, if (!is.na(cert$xi)) paste0(", xi = ", format(cert$xi)) else "",
           ", ", cert$risk_kind, " maximum risk ", format(cert$risk, digits = 6), if (!is.na(cert$a)) paste0(" (a = ", cert$a, ")") else ""),
    paste0("  ", cert$target)
  )
}

#' @export
print.sdc_publication <- function(x, ...) {
  writeLines(format(x, ...))
  invisible(x)
}
