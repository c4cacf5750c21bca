#' Primary sensitivity rules for magnitude tables
#'
#' Rule constructors for [cell_sensitivity()]. Each returns a small object of
#' class `sdc_rule` that can be printed and combined with others in a list.
#'
#' * `rule_frequency(n)`: a cell is unsafe when it has contributors but fewer
#'   than `n` of them (`convention = "below"`, the minimum frequency rule of
#'   tau-ARGUS and of Hundepool et al. 2012, Section 4.2.1: a cell needs at
#'   least `n` contributors). `convention = "at_most"` flags cells with at
#'   most `n` contributors (the `maxN` convention of sdcTable).
#' * `rule_zero()`: a cell is unsafe when it has contributors but its total is
#'   exactly 0 (every contribution is then disclosed when they cannot be
#'   negative).
#' * `rule_nk(n, k)`: dominance rule, unsafe when the `n` largest
#'   contributions exceed `k`% of the total, \eqn{x_1 + \dots + x_n > k/100\,X}
#'   (Cox 2001, eq. 3.6). In PTN form (Gray 2018, Section 4 and appendix):
#'   \eqn{n_t = n}, \eqn{n_s = 0}, \eqn{PT = (100 - k)/k\,x},
#'   \eqn{N = x}, \eqn{SN = 0}.
#' * `rule_p(p)`: p% rule, unsafe when \eqn{X - x_1 - x_2 < p/100\,x_1}
#'   (Cox 2001, eq. 3.4). PTN form (Gray 2018, Section 2.4):
#'   \eqn{PT = p/100\,x}, \eqn{N = x}, \eqn{SN = 0}, \eqn{n_t = n_s = 1}.
#' * `rule_pq(p, q)`: pq rule, unsafe when \eqn{X - x_1 - x_2 < (p/q)\,x_1}
#'   (Cox 2001, eq. 3.8). PTN form: \eqn{PT = p/100\,x}, \eqn{N = q/100\,x},
#'   \eqn{SN = 0}; its \eqn{S} is the rule's value multiplied by \eqn{q/100}
#'   (Gray 2018, Theorem 2).
#' * `rule_ptn(pt, noise, self_noise, nt, ns)`: any PTN rule (Gray 2018,
#'   eq. 3-7). `pt`, `noise` and `self_noise` are each a number, or a function
#'   of the contributor data `d` returning one value per contributor, or
#'   `list(upper = , lower = )` of those for asymmetric sensitivity. `d` is a
#'   data frame with one row per contributor of a cell and columns `x` (the
#'   contribution, weighted, in absolute value with `negative = "abs"`),
#'   `value` (the signed weighted contribution), `y` (the unweighted
#'   contribution, in absolute value with `negative = "abs"`), `w`
#'   (`value / y`, 1 without weights), `lower`, `upper` (known bounds on
#'   `value`, `-Inf`/`Inf` when none), `waiver` (logical) and `records`.
#'
#' How the classic rules (`rule_p()`, `rule_pq()`, `rule_nk()`) use the
#' special cases of Gray (2018, Section 3) set in [cell_sensitivity()]:
#' * `negative = "abs"`: \eqn{x} is replaced by \eqn{|x|} (Section 3.2).
#' * waivers: \eqn{PT = 0} for a respondent who waived, noise unchanged
#'   (Section 3.3).
#' * bounds: lower noise \eqn{\min(q/100\,|x|, x - LB)} and upper noise
#'   \eqn{\min(q/100\,|x|, UB - x)} (\eqn{q = 100} for the p% and nk rules),
#'   and both upper and lower sensitivity are computed (Section 3.1).
#' * weights unknown to respondents (p% and pq rules): \eqn{x = w y},
#'   \eqn{PT = p/100\,y - (w - 1) y}, \eqn{SN = (w - 1) y}, \eqn{N = q/100\,x}
#'   (Section 3.4, after O'Malley and Ernst). Known weights: the rule applies
#'   to \eqn{x = w y}.
#'
#' Internally the classic rules are evaluated on PTN variables multiplied by
#' 100 (by `k` for the nk rule) so that, for whole-number data and
#' parameters, the status is exactly that of the textbook inequality; the
#' reported \eqn{S} is divided back.
#'
#' Two inputs that are valid but rarely meant give a warning (the rule is
#' still made): a percentage below 1 in `rule_p()`, `rule_pq()` or
#' `rule_nk()` (`rule_p(0.1)` is the 0.1% rule; 10% is `rule_p(10)`), class
#' `sdcRisk_warning_percent`; and `rule_nk(n, k)` with \eqn{n \ge 10} and
#' \eqn{k < n}, such as `rule_nk(60, 1)` for `rule_nk(1, 60)`, class
#' `sdcRisk_warning_rule_nk`: dominance rules look at a few largest
#' contributions (\eqn{n} of 1 to 3, rarely more) against a large share
#' (\eqn{k} of 50 to 95), so ten or more contributions against a share
#' smaller than their number reads as swapped arguments.
#'
#' @param n For `rule_frequency()`, the minimum number of contributors; for
#'   `rule_nk()`, the number of largest contributions. A whole number
#'   \eqn{\ge 1}.
#' @param convention `"below"` (unsafe when \eqn{0 <} contributors \eqn{< n})
#'   or `"at_most"` (unsafe when \eqn{0 <} contributors \eqn{\le n}).
#' @param k Percentage in \eqn{(0, 100]}.
#' @param p,q Percentages, \eqn{0 < p < q \le 100} for the pq rule;
#'   \eqn{p > 0} for the p% rule.
#' @param pt,noise,self_noise Precision threshold \eqn{PT}, noise \eqn{N} and
#'   self-noise \eqn{SN}: a number, a function of the contributor data, or
#'   `list(upper = , lower = )`. Upper sensitivity uses the upper `pt` with the
#'   lower `noise` and `self_noise` (an upper estimate of \eqn{x_t} comes from
#'   lower bounds on the others); lower sensitivity the other way round.
#' @param nt,ns Sizes of the target set (\eqn{\ge 1}) and of the colluding
#'   suspect set (\eqn{\ge 0}).
#' @returns An object of class `sdc_rule`.
#' @references Gray, D. (2018). Precision threshold and noise: an alternative
#'   framework of sensitivity measures. In *Privacy in Statistical Databases*,
#'   LNCS 11126, 15-27. Springer.
#'
#'   Cox, L. H. (2001). Disclosure risk for tabular economic data. In
#'   *Confidentiality, Disclosure and Data Access*, chap. 8. North-Holland.
#'
#'   Hundepool, A. et al. (2012). *Statistical Disclosure Control*. Wiley.
#' @family tabular
#' @name rules
#' @examples
#' rules <- list(rule_frequency(3), rule_zero(), rule_nk(2, 85), rule_p(10))
#' rules
#' rule_pq(10, 50)
#' # the p% rule with waivers stated by hand in PTN form
#' rule_ptn(pt = function(d) ifelse(d$waiver, 0, 0.1 * d$x),
#'          noise = function(d) d$x)
NULL

#' @rdname rules
#' @export
rule_frequency <- function(n = 3, convention = c("below", "at_most")) {
  check_count(n, min = 1)
  check_scalar(n)
  convention <- check_choice(convention)
  new_sdc_rule("frequency", list(n = n, convention = convention),
               paste0("freq", n))
}

#' @rdname rules
#' @export
rule_zero <- function() {
  new_sdc_rule("zero", list(), "zero")
}

#' @rdname rules
#' @export
rule_nk <- function(n, k) {
  check_count(n, min = 1, max = max_contributors)
  check_scalar(n)
  check_percent(k, upper_open = FALSE)
  warn_small_percent(k)
  if (n >= 10 && k < n) {
    warn_sdc(c(
      "{.code rule_nk({n}, {k})} asks whether the {n} largest contributions exceed {k}% of the total.",
      "!" = "That flags almost every cell; the arguments look swapped.",
      "i" = "{.fn rule_nk} takes the number of contributions first: did you mean {.code rule_nk({k}, {n})}?"
    ), "rule_nk", n = n, k = k)
  }
  new_sdc_rule("nk", list(n = as.integer(n), k = k, nt = as.integer(n), ns = 0L),
               paste0("nk", n, "_", k))
}

#' @rdname rules
#' @export
rule_p <- function(p) {
  if (!is.numeric(p) || length(p) != 1 || is.na(p) || !is.finite(p) || p <= 0) {
    abort_sdc(c(
      "{.arg p} must be a single positive percentage.",
      "x" = "It is {show_value(p)}."
    ), "rule_parameter")
  }
  warn_small_percent(p)
  new_sdc_rule("p", list(p = p, q = 100, nt = 1L, ns = 1L), paste0("p", p))
}

#' @rdname rules
#' @export
rule_pq <- function(p, q) {
  check_percent(p, upper_open = TRUE)
  check_percent(q, upper_open = FALSE)
  if (p >= q) {
    abort_sdc(c(
      "{.arg p} must be smaller than {.arg q} in the pq rule.",
      "x" = "{.arg p} is {show_value(p)} and {.arg q} is {show_value(q)}.",
      "i" = "Attackers estimate others to within {.arg q}%, and each contribution is protected to within {.arg p}% < {.arg q}%."
    ), "rule_parameter")
  }
  # (p < q: a q below 1 has a p below 1)
  warn_small_percent(p)
  new_sdc_rule("pq", list(p = p, q = q, nt = 1L, ns = 1L), paste0("pq", p, "_", q))
}

#' @rdname rules
#' @export
rule_ptn <- function(pt, noise, self_noise = 0, nt = 1, ns = 1) {
  check_nt_ns(nt, ns)
  spec <- list(pt = ptn_spec(pt), noise = ptn_spec(noise),
               self_noise = ptn_spec(self_noise))
  symmetric <- all(vapply(spec, function(s) identical(s$upper, s$lower), logical(1)))
  new_sdc_rule("ptn", c(spec, list(nt = as.integer(nt), ns = as.integer(ns),
                                   symmetric = symmetric)), "ptn")
}

# A percentage below 1 was probably meant as a fraction (0.1 for 10%).
warn_small_percent <- function(x, arg = rlang::caller_arg(x), call = rlang::caller_env()) {
  if (x < 1) {
    warn_sdc(c(
      "{.arg {arg}} is a percentage: {.code {arg} = {x}} means {x}%, not {100 * x}%.",
      "i" = "Write {.code {arg} = {100 * x}} for {100 * x}%."
    ), "percent", call = call, arg = arg, value = x)
  }
  invisible(x)
}

new_sdc_rule <- function(type, params, name) {
  structure(list(type = type, params = params, name = name), class = "sdc_rule")
}

# One PTN variable: a number or a function, or list(upper =, lower =) of those.
ptn_spec <- function(x, arg = rlang::caller_arg(x), call = rlang::caller_env()) {
  one_ok <- function(v) is.function(v) ||
    (is.numeric(v) && length(v) == 1 && !is.na(v) && is.finite(v))
  if (is.list(x) && !is.function(x)) {
    if (!setequal(names(x), c("upper", "lower")) || !all(vapply(x, one_ok, logical(1)))) {
      abort_sdc(c(
        "{.arg {arg}} must be a number, a function of the contributor data, or {.code list(upper = , lower = )} of those.",
        "x" = "It is a list with names {.val {names(x)}}."
      ), "rule_parameter", call = call)
    }
    return(list(upper = x$upper, lower = x$lower))
  }
  if (!one_ok(x)) {
    abort_sdc(c(
      "{.arg {arg}} must be a number, a function of the contributor data, or {.code list(upper = , lower = )} of those.",
      "x" = "It is {.obj_type_friendly {x}}."
    ), "rule_parameter", call = call)
  }
  list(upper = x, lower = x)
}

#' @export
format.sdc_rule <- function(x, ...) {
  p <- x$params
  desc <- switch(x$type,
    frequency = sprintf("minimum frequency rule: unsafe if 0 < contributors %s %s",
                        if (p$convention == "below") "<" else "<=", p$n),
    zero = "zero rule: unsafe if contributors > 0 and total = 0",
    nk = sprintf("(%s, %s) dominance rule: unsafe if %s > %s%% of the total",
                 p$n, p$k, largest_sum_text(p$n), p$k),
    p = sprintf("p%% rule (p = %s): unsafe if X - x1 - x2 < %s%% of x1", p$p, p$p),
    pq = sprintf("pq rule (p = %s, q = %s): unsafe if X - x1 - x2 < (p/q) x1", p$p, p$q),
    ptn = sprintf("PTN rule S^%s_%s (%s): unsafe if S > 0", p$nt, p$ns,
                  if (p$symmetric) "symmetric" else "upper and lower")
  )
  paste0("<sdc_rule ", x$name, "> ", desc)
}

#' @export
print.sdc_rule <- function(x, ...) {
  cat(format(x, ...), sep = "\n")
  invisible(x)
}

# --- Evaluation ----------------------------------------------------------

rule_is_ptn <- function(rule) rule$type %in% c("nk", "p", "pq", "ptn")

# Does the rule assume non-negative contributions?
rule_needs_nonnegative <- function(rule) rule$type %in% c("nk", "p", "pq")

# PTN variables of a rule for contributor data `d`: a list of sides (`upper`,
# and `lower` unless symmetric), each list(pt, noise, self_noise), and the
# factor by which they were scaled.
rule_ptn_vars <- function(rule, d, opts) {
  switch(rule$type,
    p = , pq = classic_pq_vars(rule$params, d, opts),
    nk = classic_nk_vars(rule$params, d, opts),
    ptn = custom_ptn_vars(rule, d, opts$call)
  )
}

# p% and pq rules (Gray 2018, Sections 2.4 and 3), scaled by 100.
classic_pq_vars <- function(par, d, opts) {
  p <- par$p
  q <- par$q
  if (opts$weights_known) {
    pt <- p * d$x
    sn <- numeric(nrow(d))
  } else {
    # Section 3.4: protect y to within p%; the weighted part (w - 1) y is noise
    # the respondent cannot remove from its own contribution.
    extra <- d$x - d$y
    pt <- p * d$y - 100 * extra
    sn <- 100 * extra
  }
  pt[d$waiver] <- 0
  noise <- q * d$x
  bounded_sides(pt, noise, sn, d, scale = 100, 100)
}

# nk rule (Gray 2018, appendix eq. 9-11), scaled by k.
classic_nk_vars <- function(par, d, opts) {
  k <- par$k
  pt <- (100 - k) * d$x
  pt[d$waiver] <- 0
  bounded_sides(pt, k * d$x, numeric(nrow(d)), d, scale = k, k)
}

# Known bounds (Section 3.1) tighten the noise: lower noise x - LB, upper
# noise UB - x, each scaled like the rule's noise.
bounded_sides <- function(pt, noise, sn, d, scale, unit) {
  has_lower <- any(is.finite(d$lower))
  has_upper <- any(is.finite(d$upper))
  if (!has_lower && !has_upper) {
    return(list(sides = list(upper = list(pt = pt, noise = noise, self_noise = sn)),
                scale = scale))
  }
  n_low <- if (has_lower) pmin(noise, unit * (d$value - d$lower)) else noise
  n_up <- if (has_upper) pmin(noise, unit * (d$upper - d$value)) else noise
  list(sides = list(upper = list(pt = pt, noise = n_low, self_noise = sn),
                    lower = list(pt = pt, noise = n_up, self_noise = sn)),
       scale = scale)
}

custom_ptn_vars <- function(rule, d, call) {
  par <- rule$params
  ev <- function(f, what) eval_ptn_fun(f, d, what, rule$name, call)
  upper <- list(pt = ev(par$pt$upper, "pt"), noise = ev(par$noise$lower, "noise"),
                self_noise = ev(par$self_noise$lower, "self_noise"))
  sides <- list(upper = upper)
  if (!par$symmetric) {
    sides$lower <- list(pt = ev(par$pt$lower, "pt"), noise = ev(par$noise$upper, "noise"),
                        self_noise = ev(par$self_noise$upper, "self_noise"))
  }
  list(sides = sides, scale = 1)
}

eval_ptn_fun <- function(f, d, what, name, call) {
  v <- if (is.function(f)) f(d) else f
  n <- nrow(d)
  if (!is.numeric(v) || !(length(v) %in% c(1L, n)) || anyNA(v) || !all(is.finite(v))) {
    abort_sdc(c(
      "The {.arg {what}} of rule {.val {name}} must give one finite number per contributor.",
      "x" = "It gave {.obj_type_friendly {v}} of length {length(v)} for {n} contributor{?s}{if (is.numeric(v) && anyNA(v)) ' with missing values' else ''}."
    ), "rule_value", call = call)
  }
  if (length(v) == 1L) v <- rep(as.numeric(v), n)
  as.numeric(v)
}

# "x1", "x1 + x2", "x1 + x2 + x3", "x1 + ... + xn"
largest_sum_text <- function(n) {
  if (n <= 3) paste0("x", seq_len(n), collapse = " + ") else paste0("x1 + ... + x", n)
}
