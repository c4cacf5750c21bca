# The respondent attack on a suppression pattern (audit_table(),
# protect_table(), protect_tables(), audit_tables() with attacker =
# "respondents"). A respondent knows its own contribution to every cell it is
# in; the attacker's problem is the outsider's linear program with the
# respondent's knowledge added as bounds on the cells:
#   y_c = x_a(c) + rest_c,  rest_c within the sum of the other contributors'
#   a priori bounds (0 below when every contribution of the table is
#   non-negative, the sums of their records' `lower`/`upper` when known),
# and y_c = x_a(c) exactly when the respondent is alone in c (all others
# contribute 0, with zero_contributions = "ignore"). Coalitions as the rules
# define them: the n - 1 largest contributors other than the largest of a
# cell flagged by an (n, k) rule (n >= 3; for n = 2 the second largest alone),
# the suspect set of a PTN rule with ns >= 2. A piece of knowledge that the
# outsider's exact interval of a suppressed cell already implies adds
# nothing (the polytope is unchanged), so only respondents whose knowledge
# falls strictly inside some outsider interval get programs, one per
# component of suppressed cells they narrow and per distinct knowledge.

# --- The respondents of a table ---------------------------------------------

# The respondent problem of one table: the contributions (as
# level_contributions() stores them) checked against the table, with every
# contributor keyed by its id (record number without `contributor`).
# Returns list(cell, id, keys, x, zero, lower, upper): `id` the contributor
# code of each row, `keys` the key of each code (NULL: the code itself),
# `lower` and `upper` one per row or one for all.
table_contributions <- function(x, arg = "x", call = rlang::caller_env()) {
  inc <- attr(x, "contributions")
  n <- nrow(x)
  if (is.null(inc)) {
    abort_sdc(c(
      "The respondent audit needs every contributor's contributions, which {.arg {arg}} does not carry.",
      "x" = "It was subset, edited, or made by an older version of {.fn cell_sensitivity}.",
      "i" = "Use the table {.fn cell_sensitivity} returned, or {.code attacker = \"outsider\"} for the outside attacker alone."
    ), "no_contributions", call = call, arg = arg)
  }
  fields <- c("cell", "contributor", "x", "zero", "lower", "upper")
  # (without known bounds, lower and upper are one number each; the rows'
  # checks by their least and largest values, values_within(): on R4 of the
  # bench, 115,104 rows, a vector of the rows' size for each check took 4 ms)
  ok <- is.list(inc) && all(fields %in% names(inc)) &&
    length(unique(lengths(inc[fields[1:4]]))) == 1 &&
    all(lengths(inc[fields[5:6]]) %in% c(1L, length(inc$cell))) &&
    is.numeric(inc$cell) && values_within(inc$cell, 1, n) &&
    # (contributor codes are whole numbers of at most the rows, as
    # cell_sensitivity() numbers them: new_respondents() addresses them)
    is.numeric(inc$contributor) && values_within(inc$contributor, 1, length(inc$cell)) &&
    (is.integer(inc$contributor) || all(inc$contributor == round(inc$contributor))) &&
    is.numeric(inc$x) && values_within(inc$x, -Inf, Inf, finite = TRUE) &&
    is.logical(inc$zero) && !anyNA(inc$zero) &&
    is.numeric(inc$lower) && is.numeric(inc$upper) && !anyNA(inc$lower) && !anyNA(inc$upper) &&
    (is.null(inc$ids) || (is.character(inc$ids) && length(inc$ids) >= max(inc$contributor, 0)))
  if (ok) {
    sums <- tabulate_sum(inc$cell, inc$x, n)
    scale <- tabulate_sum(inc$cell, abs(inc$x), n)
    ok <- all(abs(sums - x$total) <= additivity_tolerance * (1 + scale + abs(x$total)))
  }
  if (!ok) {
    abort_invalid(arg, "its contributions (attribute {.field contributions}) are broken or disagree with {.field total}",
                  "Use the table {.fn cell_sensitivity} returned, or call it again.", call)
  }
  # (contributors as integer codes, their keys apart: keys of every row
  # as text took seconds on the 4 * 10^6 rows of bench table 2)
  list(cell = as.integer(inc$cell), id = as.integer(inc$contributor), keys = inc$ids, x = inc$x,
       zero = inc$zero, lower = inc$lower, upper = inc$upper)
}

# Are the numbers `v` all within [lo, hi] (and finite, with `finite`), none
# NA? By their range: no vector of v's size.
values_within <- function(v, lo, hi, finite = FALSE) {
  if (!length(v)) return(TRUE)
  if (anyNA(v)) return(FALSE)
  # (min() and max(): range() copies v)
  a <- min(v)
  b <- max(v)
  a >= lo && b <= hi && (!finite || (is.finite(a) && is.finite(b)))
}

# The a priori bounds of contributions `rows` from `b`, one per row or one
# for all (the bounds of contributions without `lower`/`upper` are one
# number each: not expanded to every row).
row_values <- function(b, rows) if (length(b) == 1L) rep(b, length(rows)) else b[rows]

# Per cell the sum of the finite bounds `b` of its rows (cells `cell`) and
# the number of infinite ones.
bound_sums <- function(cell, b, n) {
  if (length(b) == 1L && (b == 0 || !is.finite(b))) {
    count <- tabulate(cell, n)
    return(list(fin = numeric(n), inf = if (is.finite(b)) integer(n) else count))
  }
  b <- rep_len(b, length(cell))
  list(fin = tabulate_sum(cell, replace(b, !is.finite(b), 0), n), inf = tabulate(cell[!is.finite(b)], n))
}

# The keys of contributor codes `id` of contributions `contr`: its ids, or
# the codes as text (record numbers without `contributor`).
contributor_keys <- function(contr, id) {
  if (is.null(contr$keys)) as.character(id) else contr$keys[id]
}

# The respondents of the problem whose cells `prep` describes (one table, or
# linked tables), from the contributions `contr` (table_contributions(),
# cells already those of the problem), with the coalitions `coalitions`
# (vectors of contributor codes). Per contributor (code 1..m) its rows, per
# cell the counts and bound sums its rest needs.
new_respondents <- function(prep, contr, coalitions, zero_contributions) {
  n <- prep$structure$ncell
  # contributors numbered in the order of their first row, by direct
  # addressing of their codes, and their rows contributor by contributor,
  # in the core (unique() and match() over the rows took a third of a
  # second on the 4 * 10^6 rows of bench table 2; on R4 of the bench,
  # 115,104 rows, R's vectors of the rows' size took 5 ms)
  ix <- core_call(cpp_contributor_index, contr$id, max(contr$id, 0L))
  codes <- ix$code
  who <- ix$who
  m <- length(codes)
  keys <- contributor_keys(contr, codes)
  # (x is finite, table_contributions(): its least value tells)
  nonneg <- !length(contr$x) || min(contr$x) >= 0
  # a contributor's a priori bounds: its records' bounds, and 0 below when
  # every contribution of the table is non-negative
  lq <- if (nonneg) pmax(contr$lower, 0) else contr$lower
  uq <- contr$upper
  counted <- if (zero_contributions == "ignore") !contr$zero else rep(TRUE, length(who))
  # coalitions of two or more contributors of the table (members it does
  # not have left out), each once though several cells may name it
  code_of <- integer(max(contr$id, 0L))
  code_of[codes] <- seq_along(codes)
  coal <- lapply(coalitions, function(g) {
    at <- code_of[g[!is.na(g) & g >= 1 & g <= length(code_of)]]
    sort(unique(at[at > 0L]))
  })
  coal <- coal[lengths(coal) >= 2]
  coal <- coal[!duplicated(vapply(coal, paste, character(1), collapse = ","))]
  rows_in <- tabulate(contr$cell, n)
  present <- rows_in > 0
  # (the zero rows' cells subtracted: no vector of the rows' size)
  n_counted <- if (zero_contributions == "ignore") rows_in - tabulate(contr$cell[contr$zero], n) else rows_in
  lo <- bound_sums(contr$cell, lq, n)
  up <- bound_sums(contr$cell, uq, n)
  list(cell = contr$cell, who = who, x = contr$x, lq = lq, uq = uq, counted = counted,
       zero_cells = which(present & n_counted == 0),
       # (the rows of contributor a: ord[(start[a] + 1):start[a + 1]]; a
       # list of them took a second on the 10^6 contributors of bench
       # table 2)
       ord = ix$ord, start = ix$start,
       # groups 1..m the contributors, then the coalitions (group_members())
       n_single = m, coalitions = coal,
       labels = c(keys, vapply(coal, function(g) paste(keys[g], collapse = " + "), character(1))),
       n_counted = n_counted,
       lo_fin = lo$fin, lo_inf = lo$inf, up_fin = up$fin, up_inf = up$inf,
       memo = new.env(parent = emptyenv()))
}

# The rows of the contributions to `cells` (cell by cell), from an index
# of the rows by cell built on first use: which() over every row took an
# eighth of the respondents' relation bounds on R4 of the bench (115,104
# rows, 13,303 in suppressed cells).
cell_rows <- function(resp, cells) {
  memo <- resp$memo
  if (is.null(memo$cell_ord)) {
    memo$cell_ord <- order(resp$cell)
    memo$cell_start <- c(0L, cumsum(tabulate(resp$cell, length(resp$n_counted))))
  }
  n <- memo$cell_start[cells + 1L] - memo$cell_start[cells]
  memo$cell_ord[sequence(n, from = memo$cell_start[cells] + 1L)]
}

# The contributors (codes) of respondent group g, and the number of groups.
group_members <- function(resp, g) if (g <= resp$n_single) g else resp$coalitions[[g - resp$n_single]]
n_groups <- function(resp) resp$n_single + length(resp$coalitions)

# The coalitions the rules of table x define, as vectors of contributor codes
# (contributions `contr` of table_contributions(), on the rows of x): for a
# cell flagged by rule_nk(n, k) with n >= 3, its n - 1 largest contributors
# after the largest; for a PTN rule with ns >= 2, its suspect set.
rule_coalitions <- function(x, contr) {
  out <- list()
  rules <- Filter(coalition_rule, attr(x, "rules"))
  if (!length(rules)) return(out)
  by_cell <- split(seq_along(contr$cell), contr$cell)
  for (r in rules) {
    flag <- x[[paste0("sensitive_", r$name)]]
    if (r$type == "nk") {
      for (c in which(flag)) {
        rows <- by_cell[[as.character(c)]]
        if (length(rows) < 3) next
        o <- rows[order(-abs(contr$x[rows]), rows)]
        out[[length(out) + 1L]] <- contr$id[o[2:min(r$params$n, length(o))]]
      }
    } else if (!is.null(x[[paste0("suspect_", r$name)]])) {
      for (c in which(flag)) {
        s <- strsplit(x[[paste0("suspect_", r$name)]][c], ", ", fixed = TRUE)[[1]]
        if (length(s) < 2) next
        # (a key no code has stays NA: the coalition is left out)
        out[[length(out) + 1L]] <- if (is.null(contr$keys)) suppressWarnings(as.integer(s)) else
          match(s, contr$keys)
      }
    }
  }
  out
}

# Does rule r define coalitions (rule_coalitions())? An (n, k) rule with
# n >= 3 (the n - 1 contributors after the largest), a PTN rule with
# ns >= 2 (its suspect set).
coalition_rule <- function(r) (r$type == "nk" && r$params$n >= 3) || (rule_is_ptn(r) && r$params$ns >= 2)

# What respondent group g knows about every cell it contributes to: the
# cells, the bounds (lo, hi) within which it knows each cell lies, and
# whether it is alone in the cell (then lo = hi = the cell's value).
respondent_knowledge <- function(resp, prep, g) {
  # (kept once found, with the rows' knowledge: it depends on the table's
  # values and a priori bounds, not on the pattern, and every audit of the
  # rounds and the clean-up asked for it again)
  memo <- knowledge_memo(resp, prep)
  key <- as.character(g)
  k <- memo$groups[[key]]
  if (!is.null(k)) return(k)
  members <- group_members(resp, g)
  rows <- contributor_rows(resp, members)
  # a contributor has one row per cell: a coalition's rows add up per cell
  k <- if (length(members) == 1L) row_knowledge(resp, prep, rows) else
    coalition_knowledge(resp, prep, rows)
  k <- zero_cells_known(resp, prep, k)
  assign(key, k, envir = memo$groups)
  k
}

# The rows of the contributors `members` (codes), each contributor's in
# increasing order.
contributor_rows <- function(resp, members) {
  if (length(members) == 1L) return(resp$ord[seq.int(resp$start[members] + 1L, resp$start[members + 1L])])
  unlist(lapply(members, function(a) resp$ord[seq.int(resp$start[a] + 1L, resp$start[a + 1L])]),
         use.names = FALSE)
}

# A respondent alone in a cell (every other contributor 0) knows that every
# cell below it in which it has no records is 0: those cells (whose
# contributors all contribute 0) join what it knows, as cells it is alone
# in. (The relations imply it when values are non-negative, not
# otherwise.) Linked tables have no classification codes to find the cells
# below: there the relations alone carry it.
zero_cells_known <- function(resp, prep, k) {
  z <- setdiff(resp$zero_cells, k$cells)
  st <- prep$structure
  top <- k$cells[k$alone]
  if (!length(z) || !length(top) || is.null(st$codes)) return(k)
  below <- vapply(z, function(cz) any(vapply(top, function(m) cell_below(st, cz, m), logical(1))),
                  logical(1))
  z <- z[below]
  if (!length(z)) return(k)
  list(cells = c(k$cells, z), lo = c(k$lo, prep$value[z]), hi = c(k$hi, prep$value[z]),
       alone = c(k$alone, rep(TRUE, length(z))))
}

# Is cell a at or below cell m in every classification variable?
cell_below <- function(st, a, m) {
  for (j in seq_len(ncol(st$codes))) {
    u <- st$codes[a, j]
    target <- st$codes[m, j]
    while (!is.na(u) && u != target) u <- st$parents[[j]][u]
    if (is.na(u)) return(FALSE)
  }
  TRUE
}

# The knowledge of a coalition whose contributions are the rows `rows`.
coalition_knowledge <- function(resp, prep, rows) {
  cells <- unique(resp$cell[rows])
  f <- factor(resp$cell[rows], levels = cells)
  s <- function(v) as.numeric(tapply(v, f, sum))
  lq <- row_values(resp$lq, rows)
  uq <- row_values(resp$uq, rows)
  knowledge_bounds(resp, prep, cells, s(resp$x[rows]), s(ifelse(is.finite(lq), lq, 0)),
                   s(!is.finite(lq)), s(ifelse(is.finite(uq), uq, 0)), s(!is.finite(uq)),
                   s(resp$counted[rows]))
}

# The knowledge of the single contributor of each row `rows` about its cell.
knowledge_rows <- function(resp, prep, rows) {
  lq <- row_values(resp$lq, rows)
  uq <- row_values(resp$uq, rows)
  l_inf <- !is.finite(lq)
  u_inf <- !is.finite(uq)
  knowledge_bounds(resp, prep, resp$cell[rows], resp$x[rows], replace(lq, l_inf, 0), as.numeric(l_inf),
                   replace(uq, u_inf, 0), as.numeric(u_inf), as.numeric(resp$counted[rows]))
}

# knowledge_rows() of the rows `rows`, each row's computed once per problem
# (it depends on the table's values and a priori bounds, not on the
# pattern) and only when first asked for: every respondent audit of a
# trial of the clean-up read the rows of the suppressed cells anew (115,104
# rows on R4 of the bench; 4 * 10^6 on its table 2, of which the audits
# read a small share). Without `alone`, the rows' knowledge without it.
row_knowledge <- function(resp, prep, rows, alone = TRUE) {
  memo <- knowledge_memo(resp, prep)
  need <- rows[!memo$done[rows]]
  if (length(need)) {
    k <- knowledge_rows(resp, prep, need)
    env_set(memo, "lo", need, k$lo)
    env_set(memo, "hi", need, k$hi)
    env_set(memo, "done", need, TRUE)
  }
  out <- list(cells = resp$cell[rows], lo = memo$lo[rows], hi = memo$hi[rows])
  if (alone) out$alone <- row_alone(resp)[rows]
  out
}

# The memo of row_knowledge(), cell_knowledge() and respondent_knowledge(),
# emptied when the table's values or a priori bounds are not those it was
# filled from.
knowledge_memo <- function(resp, prep) {
  memo <- resp$memo
  of <- list(prep$value, prep$lower, prep$upper)
  if (is.null(memo$done) || !identical(memo$of, of)) {
    n <- length(resp$who)
    memo$of <- of
    memo$done <- logical(n)
    memo$lo <- memo$hi <- rep(NA_real_, n)
    nc <- length(resp$n_counted)
    memo$cell_done <- logical(nc)
    memo$cell_lo <- rep(-Inf, nc)
    memo$cell_hi <- rep(Inf, nc)
    memo$groups <- new.env(parent = emptyenv())
    memo$flat <- NULL
  }
  memo
}

# The knowledge of the groups `groups` (respondent_knowledge()) flattened in
# that order, for the core: list(start (0-based offsets, one more than the
# groups), cells, lo, hi, alone). Read from one store of every group's
# knowledge found so far (`memo$flat` of knowledge_memo(), emptied with it),
# extended by the groups first asked for: the respondents' relation tests
# of the rounds and clean-ups ask for hundreds of groups each time (on R4 of
# the bench, the lists gathered per call took a fortieth of the default's
# time).
groups_knowledge <- function(resp, prep, groups) {
  memo <- knowledge_memo(resp, prep)
  fl <- memo$flat
  if (is.null(fl)) {
    fl <- memo$flat <- new.env(parent = emptyenv())
    fl$beg <- rep(NA_integer_, n_groups(resp))
    fl$len <- integer(n_groups(resp))
    fl$cells <- integer()
    fl$lo <- fl$hi <- numeric()
    fl$alone <- logical()
  }
  new <- unique(groups[is.na(fl$beg[groups])])
  if (length(new)) {
    ks <- lapply(new, function(g) respondent_knowledge(resp, prep, g))
    lens <- vapply(ks, function(k) length(k$cells), integer(1))
    fl$beg[new] <- length(fl$cells) + c(0L, cumsum(lens)[-length(lens)]) + 1L
    fl$len[new] <- lens
    fl$cells <- c(fl$cells, as.integer(unlist(lapply(ks, `[[`, "cells"), use.names = FALSE)))
    fl$lo <- c(fl$lo, as.double(unlist(lapply(ks, `[[`, "lo"), use.names = FALSE)))
    fl$hi <- c(fl$hi, as.double(unlist(lapply(ks, `[[`, "hi"), use.names = FALSE)))
    fl$alone <- c(fl$alone, as.logical(unlist(lapply(ks, `[[`, "alone"), use.names = FALSE)))
  }
  len <- fl$len[groups]
  idx <- sequence(len, from = fl$beg[groups])
  list(start = c(0L, cumsum(len)), cells = fl$cells[idx], lo = fl$lo[idx], hi = fl$hi[idx],
       alone = fl$alone[idx])
}

# The largest lower bound and the smallest upper bound that the knowledge
# of some single contributor (row_knowledge()) gives each of `cells` (-Inf
# and Inf for a cell without contributions), each cell's computed once per
# problem, when first asked for. A contributor's knowledge of a cell is
# effective beyond an interval only where these are.
cell_knowledge <- function(resp, prep, cells) {
  memo <- knowledge_memo(resp, prep)
  need <- cells[!memo$cell_done[cells]]
  if (length(need)) {
    k <- row_knowledge(resp, prep, cell_rows(resp, need), alone = FALSE)
    top <- group_extreme(k$lo, k$cells, largest = TRUE)
    env_set(memo, "cell_lo", top$group, top$value)
    bottom <- group_extreme(k$hi, k$cells)
    env_set(memo, "cell_hi", bottom$group, bottom$value)
    env_set(memo, "cell_done", need, TRUE)
  }
  list(lo = memo$cell_lo[cells], hi = memo$cell_hi[cells])
}

# Whether the contributor of each row is alone in its cell (no other
# counted contributor), as knowledge_rows() finds it; kept once computed.
row_alone <- function(resp) {
  if (is.null(resp$memo$alone)) resp$memo$alone <- alone_in_cell(resp, resp$cell, resp$counted)
  resp$memo$alone
}

# Whether a respondent with `cnt` counted contributions to each of `cells`
# is alone in it (no other counted contributor).
alone_in_cell <- function(resp, cells, cnt) resp$n_counted[cells] - cnt == 0

# The bounds a respondent knows on `cells` from its contributions `xg`,
# the finite parts and the numbers of infinite ones of its own a priori
# bounds, and the number of its rows that count as contributors (`cnt`):
# the cell is its contribution plus the rest, which lies within the others'
# bounds; alone (no other counted contributor), it knows the cell.
knowledge_bounds <- function(resp, prep, cells, xg, lfin, linf, ufin, uinf, cnt) {
  alone <- alone_in_cell(resp, cells, cnt)
  rest_lo <- replace(resp$lo_fin[cells] - lfin, resp$lo_inf[cells] - linf > 0, -Inf)
  rest_hi <- replace(resp$up_fin[cells] - ufin, resp$up_inf[cells] - uinf > 0, Inf)
  v <- prep$value[cells]
  lo <- replace(pmax(prep$lower[cells], xg + rest_lo), alone, v[alone])
  hi <- replace(pmin(prep$upper[cells], xg + rest_hi), alone, v[alone])
  # rounding of the sums must not exclude the cell's own value
  list(cells = cells, lo = pmin(lo, v), hi = pmax(hi, v), alone = alone)
}

# --- The audit ----------------------------------------------------------------

# The suppressed cells of pattern `supp` as components of the outsider's
# problem (as audit_cells() splits them): the component of every cell (0
# for published ones) and a function building the program of one.
respondent_components <- function(prep, supp, call) {
  sp <- suppressed_components(prep, supp, call)
  comp <- sp$comp
  comp[!supp] <- 0L
  supp_by_comp <- sp$supp_by_comp
  # (each built once: every respondent of the component reads it)
  built <- new.env(parent = emptyenv())
  lp_of <- function(cc) {
    key <- as.character(cc)
    lp <- built[[key]]
    if (!is.null(lp)) return(lp)
    vars <- supp_by_comp[[key]]
    trip <- sp$trip_by_comp[[key]]
    lp <- if (is.null(trip)) list(vars = vars, mat = NULL) else suppressed_lp(sp, prep, vars, trip)
    assign(key, lp, envir = built)
    lp
  }
  list(comp = comp, lp_of = lp_of, supp_by_comp = supp_by_comp)
}

# The breaches of a pattern no respondent breaks (respondent_breaches()).
no_breaches <- data.frame(group = integer(), cell = integer(), lower = numeric(), upper = numeric(),
                          need_lower = numeric(), need_upper = numeric())

# Every (respondent, sensitive cell) pair that breaks the pattern `supp`:
# the sensitive suppressed cells each respondent group (resp$groups) can
# narrow below their protection, given the outsider's exact intervals
# `outer` (list(lower, upper) over all cells, NA for published ones).
# `exact`: exact intervals of the breached cells (else only decided).
# Returns list(breaches = data frame (group, cell, lower, upper, need_lower,
# need_upper), n_lp, n_groups).
# `only`: attack only these cells (all sensitive suppressed cells when NULL).
# `first`: stop at the first group that breaks some cell (its breaches
# only: whether the pattern passes, as respondent_cleanup() needs);
# `hint`: groups to attack first (those that broke a trial before); `near`:
# cells (one just published) whose neighbourhood is attacked first: groups
# whose effective knowledge lies fewer relations away from them come
# first (relation_hops()), then those of `hint`. Both change the order
# only, which with `first` changes which breaching group is reported, not
# whether one is.
# `relations_only`: each respondent's intervals are the relation bounds of
# its problem (relation_bounds(): outer bounds, no program), so every
# breach reported is real and its interval contains the exact one, but a
# pattern without one is not proved safe (the clean-up's test before its
# programs). `outer` may then be wider than the exact intervals (those of
# the pattern before a trial): more knowledge counts as effective, which
# only tests more respondents.
# `witnesses`: witness tables (witness_index()), whose extremes within each
# respondent's knowledge settle ends before its programs (respondent_seeds();
# not used for exact intervals nor relation bounds). `among`: attack only
# these groups (NULL: every group; the clean-up's test of a trial by the
# respondents that broke earlier trials). `undominated`: attack only the
# groups no other dominates (undominated_groups()): whether some group
# breaks the pattern is the same, and a table that protects a cell
# against the dominating group protects it against those it dominates, but
# not every breach is reported (by default with `first`; the relation
# bounds in the core too, since the dominators are found once per class,
# respondent_dominators()).
respondent_breaches <- function(prep, supp, resp, outer, exact, call, only = NULL, first = FALSE,
                                hint = integer(), near = NULL, relations_only = FALSE, witnesses = NULL,
                                among = NULL, undominated = first && is.null(among)) {
  out <- list(breaches = no_breaches, n_lp = 0L, n_groups = 0L)
  sens <- attacked_cells(prep, supp, outer, only)
  if (!any(sens) || !n_groups(resp)) return(out)
  cmp <- attacked_components(prep, supp, sens, call)
  has_sens <- cmp$has_sens
  cache <- new.env(parent = emptyenv())
  found <- list()
  # (the witness tables that move a published cell of `supp`, found when a
  # program is first needed)
  if (exact || relations_only) witnesses <- NULL
  dead <- NULL
  ag <- attack_groups(prep, supp, resp, outer)
  groups <- ag$groups
  if (!is.null(among)) groups <- groups[groups %in% among]
  if (length(near) && length(groups) > 1L) {
    hops <- relation_hops(prep, near, supp)
    eff_who <- ag$eff_who
    dist <- rep(Inf, length(groups))
    if (length(eff_who)) {
      # (the fewest hops of each respondent's effective knowledge)
      nearest <- group_extreme(hops[ag$eff_cells], eff_who)
      at <- match(nearest$group, groups)
      dist[at[!is.na(at)]] <- nearest$value[!is.na(at)]
    }
    groups <- groups[order(dist, !groups %in% hint, seq_along(groups))]
  } else if (length(hint)) {
    groups <- c(intersect(hint, groups), setdiff(groups, hint))
  }
  if (undominated) groups <- undominated_groups(resp, prep, groups)
  if (relations_only && getOption("sdcRisk.relation_cases", TRUE)) {
    r <- relation_breach_groups(prep, supp, resp, outer, sens, cmp, has_sens, groups, first, call)
    out$breaches <- r$breaches
    out$n_groups <- r$n_groups
    return(out)
  }
  for (g in groups) {
    if (first && length(found)) break
    k <- respondent_knowledge(resp, prep, g)
    ek <- effective_knowledge(prep, supp, k, outer, cmp, has_sens)
    eff <- ek$eff
    comps <- ek$comps
    if (!length(comps)) next
    out$n_groups <- out$n_groups + 1L
    for (cc in comps) {
      if (first && length(found)) break
      mine <- eff & cmp$comp[k$cells] == cc
      # the cells it knows alone are not attacked (below): not even
      # measured (`exact = FALSE` decides the others all the same; the
      # inner bounds it reports may differ), and part of the key
      alone_cc <- k$cells[k$alone & cmp$comp[k$cells] == cc]
      if (length(alone_cc) > 1L) alone_cc <- sort(alone_cc)
      # (the same knowledge of the component gets the same intervals: found
      # among the earlier knowledge of the component with the same hash of
      # its cells, compared exactly; a text key of all the cells took a
      # tenth of the respondents' relation bounds on R4 of the bench)
      known <- list(cells = k$cells[mine], alone = alone_cc, lo = k$lo[mine], hi = k$hi[mine])
      # (in doubles: integer products of a coalition's many cells of a large
      # table would overflow)
      slot <- paste(cc, sum(as.double(known$cells) * seq_along(known$cells)) + 0.5 * sum(as.double(alone_cc)))
      res <- NULL
      for (e in cache[[slot]]) {
        if (identical(e$known, known)) {
          res <- e$res
          break
        }
      }
      if (is.null(res)) {
        sens_g <- sens
        sens_g[alone_cc] <- FALSE
        if (!is.null(witnesses) && is.null(dead)) dead <- witness_dead(witnesses, supp)
        res <- respondent_component(prep, cmp, cc, known$cells, known$lo, known$hi, exact,
                                    sens_g, call, relations_only, witnesses, dead)
        out$n_lp <- out$n_lp + res$n_lp
        cache[[slot]] <- c(cache[[slot]], list(list(known = known, res = res)))
      }
      # the respondent's requirement: its own knowledge of a cell bounds
      # what it must be left uncertain about; a cell it knows from its own
      # data alone is not attacked (no pattern can hide it)
      check <- res$cells[!res$cells %in% k$cells[k$alone]]
      if (!length(check)) next
      pos <- match(check, res$cells)
      # (the cells' bounds alone, not a copy of the table's)
      lower <- prep$lower[check]
      upper <- prep$upper[check]
      at <- match(check, k$cells)
      known <- !is.na(at)
      lower[known] <- k$lo[at[known]]
      upper[known] <- k$hi[at[known]]
      met <- protection_met(prep, check, res$lower[pos], res$upper[pos], lower, upper)
      if (all(met)) next
      bad <- check[!met]
      need <- protection_required(prep, bad, lower[!met], upper[!met])
      # (as columns, made a data frame once: a data frame per breach took
      # a fourteenth of the respondents' relation bounds on R4 of the bench)
      found[[length(found) + 1L]] <- list(
        group = rep(as.integer(g), length(bad)), cell = bad, lower = res$lower[pos][!met],
        upper = res$upper[pos][!met], need_lower = need$lo, need_upper = need$hi)
    }
  }
  out$breaches <- breach_columns(found)
  out
}

# The sensitive cells of pattern `supp` the respondents attack (`only` of
# them when given), as flags: a cell the outsider already narrows too far
# (its interval in `outer`) is reported by the outsider's audit, so only
# cells it leaves protected are attacked.
attacked_cells <- function(prep, supp, outer, only = NULL) {
  sens <- prep$sensitive & supp
  if (!is.null(only)) sens <- sens & seq_along(sens) %in% only
  s_idx <- which(sens)
  sens[s_idx] <- protection_met(prep, s_idx, outer$lower[s_idx], outer$upper[s_idx])
  sens
}

# The components of pattern `supp` (respondent_components()) with
# `has_sens`: per component, whether it holds a cell flagged in `sens`.
attacked_components <- function(prep, supp, sens, call) {
  cmp <- respondent_components(prep, supp, call)
  cmp$has_sens <- logical(max(cmp$comp, 0L))
  cmp$has_sens[cmp$comp[sens]] <- TRUE
  cmp
}

# The respondent groups that may break pattern `supp` given the outsider's
# intervals `outer`: the single contributors whose knowledge of some
# suppressed cell is effective (narrower than its outer interval, found at
# once from the rows of the cells where some knowledge is), those alone in a
# cell when zero cells are known below it (zero_cells_known()), and the
# coalitions with a suppressed cell. Returns list(groups, eff_who,
# eff_cells): with the contributor and the cell of each effective row.
attack_groups <- function(prep, supp, resp, outer) {
  # (the rows of the cells where some knowledge is effective: on R4 of the
  # bench, 13,303 rows lie in suppressed cells)
  s_cells <- which(supp)
  ck <- cell_knowledge(resp, prep, s_cells)
  ts <- prep$tol[s_cells]
  hot <- s_cells[which(ck$lo > outer$lower[s_cells] + ts | ck$hi < outer$upper[s_cells] - ts)]
  on_rows <- cell_rows(resp, hot)
  kr <- row_knowledge(resp, prep, on_rows, alone = FALSE)
  tr <- prep$tol[kr$cells]
  eff_rows <- kr$lo > outer$lower[kr$cells] + tr | kr$hi < outer$upper[kr$cells] - tr
  eff_who <- resp$who[on_rows[eff_rows]]
  single <- eff_who
  if (length(resp$zero_cells) && !is.null(prep$structure$codes)) {
    # those alone in a cell may know zero cells below it (zero_cells_known())
    single <- c(single, resp$who[row_alone(resp)])
  }
  single <- sort(unique(single))
  coal <- resp$n_single + seq_along(resp$coalitions)
  coal <- coal[vapply(resp$coalitions, function(g) any(supp[resp$cell[contributor_rows(resp, g)]]),
                      logical(1))]
  list(groups = c(single, coal), eff_who = eff_who, eff_cells = kr$cells[eff_rows])
}

# The groups of `groups` (in their order) but those that another single
# contributor of `groups` dominates (respondent_dominators()). Its
# program's tables are then tables of the dominated one's (its effective
# knowledge holds every effective knowledge of the other, tighter), so its
# intervals lie within the other's, with the same requirements, and so do
# its relation bounds: when it breaks no cell, neither does the other, and
# when the other breaks one, so does it. A test that asks only whether
# some group breaks the pattern (`first`) needs the undominated ones alone
# (on the 965-cell table of bench_suppress_small.R, persons of one
# interior cell: the one with the largest income dominates the others).
undominated_groups <- function(resp, prep, groups) {
  single <- groups <= resp$n_single
  if (sum(single) < 2L || !getOption("sdcRisk.respondent_dominance", TRUE)) return(groups)
  d <- integer(length(groups))
  d[single] <- respondent_dominators(resp, prep, groups[single])
  groups[!(d > 0L & d %in% groups)]
}

# The single contributor that dominates each of the contributors `groups`
# (0 for none): one that knows the same cells (neither alone in any), each
# within bounds at least as narrow (the same upper bounds, lower bounds at
# least as high), and whose knowledge of every sensitive one leaves its
# protection as required (a lower bound at most the value less the level:
# the requirement of protection_required() is then the same for both).
# Among the contributors of the same cells (the class), the one with the
# highest lower bounds in sum is the candidate. It depends on the table's
# values and bounds, not on the pattern: each class is found once, when
# one of its contributors is first asked for, among the contributors of
# its least populated cell, and kept in the knowledge memo (found per test
# from each group's knowledge, it took longer than the respondents'
# relation tests it would have spared).
respondent_dominators <- function(resp, prep, groups) {
  memo <- knowledge_memo(resp, prep)
  if (is.null(memo$dominators)) memo$dominators <- rep(NA_integer_, resp$n_single)
  for (g in groups[is.na(memo$dominators[groups])]) {
    if (!is.na(memo$dominators[g])) next
    cls <- dominance_class(resp, prep, g)
    ks <- lapply(cls, function(h) respondent_knowledge(resp, prep, h))
    dom <- integer(length(cls))
    if (length(cls) > 1L) {
      # (the candidate: the highest lower bounds, in sum)
      b <- which.max(vapply(ks, function(k) sum(k$lo), numeric(1)))
      kb <- ks[[b]]
      sens <- prep$sensitive[kb$cells]
      if (!any(kb$lo[sens] > prep$value[kb$cells[sens]] - prep$level[kb$cells[sens]])) {
        for (h in seq_along(cls)[-b]) {
          if (identical(ks[[h]]$hi, kb$hi) && all(ks[[h]]$lo <= kb$lo)) dom[h] <- cls[b]
        }
      }
    }
    env_set(memo, "dominators", cls, dom)
  }
  memo$dominators[groups]
}

# The class of single contributor g for respondent_dominators(): g alone
# when it is alone in a cell, otherwise the contributors of its least
# populated cell who know the same cells, none alone, in the same order
# (in increasing order: of the candidates with the same lower bounds in
# sum, the first).
dominance_class <- function(resp, prep, g) {
  k <- respondent_knowledge(resp, prep, g)
  if (any(k$alone) || !length(k$cells)) return(g)
  memo <- resp$memo
  if (is.null(memo$cell_start)) cell_rows(resp, integer())
  n_rows <- diff(memo$cell_start)
  c1 <- k$cells[which.min(n_rows[k$cells])]
  peers <- unique(resp$who[cell_rows(resp, c1)])
  peers <- peers[peers != g]
  same <- vapply(peers, function(h) {
    kh <- respondent_knowledge(resp, prep, h)
    identical(kh$cells, k$cells) && !any(kh$alone)
  }, logical(1))
  sort(c(g, peers[same]))
}

# The breaches `found` (a list of columns each) as one data frame (no_breaches
# when there are none).
breach_columns <- function(found) {
  if (!length(found)) return(no_breaches)
  cols <- lapply(names(no_breaches), function(nm) unlist(lapply(found, `[[`, nm), use.names = FALSE))
  names(cols) <- names(no_breaches)
  structure(cols, class = "data.frame", row.names = c(NA_integer_, -length(cols$cell)))
}

# Which cells of a respondent's knowledge `k` are effective (suppressed in
# `supp`, and narrower than the outsider's intervals `outer`: knowledge
# that the outsider's interval already implies changes nothing), and the
# components
# (respondent_components() `cmp`) they lie in that hold a cell to attack
# (flags `has_sens`), in the order of the knowledge.
effective_knowledge <- function(prep, supp, k, outer, cmp, has_sens) {
  tol <- prep$tol[k$cells]
  eff <- supp[k$cells] & (k$lo > outer$lower[k$cells] + tol | k$hi < outer$upper[k$cells] - tol)
  comps <- cmp$comp[k$cells[eff]]
  list(eff = eff, comps = unique(comps[has_sens[comps]]))
}

# respondent_breaches() with `relations_only`, in the core
# (cpp_relation_breach_groups()): the groups' knowledge (in the order of
# `groups`) and the programs of the components with cells to attack (flags
# `has_sens`) go in at once, and each group's relation bounds are tested
# there in turn; with `first`, up to the first (group, component) pair that
# breaks a cell. The breaches are those of the loop over groups and
# components one at a time (which, with the batches of groups in R that
# came between, took most of the clean-up's relation tests on R2 of the
# bench in the R code around each call: 0.17 of its 0.23 s in ten runs).
# The option sdcRisk.relation_cases (undocumented) lets the tests compare
# the two. Returns list(breaches, n_groups).
relation_breach_groups <- function(prep, supp, resp, outer, sens, cmp, has_sens, groups, first, call) {
  a <- relation_test_args(prep, supp, resp, outer, sens, cmp, has_sens, groups)
  r <- do.call(core_call, c(list(cpp_relation_breach_groups), a, list(first = first, call = call)))
  found <- if (length(r$cell)) {
    list(list(group = as.integer(groups[r$group]), cell = r$cell, lower = r$lower, upper = r$upper,
              need_lower = r$need_lower, need_upper = r$need_upper))
  }
  list(breaches = breach_columns(found), n_groups = r$n_groups)
}

# The arguments of the core's respondents' relation tests
# (cpp_relation_breach_groups(), cpp_relation_breach_groups_each()) they
# share, named as they are: the programs of the components flagged in
# `has_sens` (core_program(), targets the cells flagged in `sens`), per
# cell its program, the outsider's intervals `outer` and the cells'
# values, and the knowledge of the groups `groups` (groups_knowledge()).
relation_test_args <- function(prep, supp, resp, outer, sens, cmp, has_sens, groups) {
  ks <- groups_knowledge(resp, prep, groups)
  ccs <- which(has_sens)
  progs <- lapply(ccs, function(cc) core_program(cmp$lp_of(cc), prep, sens))
  prog <- integer(length(supp))
  at <- cmp$comp > 0L
  prog[at] <- match(cmp$comp[at], ccs, nomatch = 0L)
  list(programs = progs, supp = supp, prog = prog, outer_lo = as.double(outer$lower),
       outer_hi = as.double(outer$upper), tol = as.double(prep$tol), value = as.double(prep$value),
       level = as.double(prep$level), lower = as.double(prep$lower), upper = as.double(prep$upper),
       start = as.integer(ks$start), cell = ks$cells, lo = ks$lo, hi = ks$hi, alone = ks$alone,
       passes = as.integer(audit_relation_passes), moved = relation_bound_moved)
}

# A component's program `lp` as the core's relation tests read it
# (program_of() in src/rcpp_table_components.cpp): its triplets, the a
# priori bounds of `prep` on its cells `vars`, and as `targets` the
# columns of the cells flagged in `sens`.
core_program <- function(lp, prep, sens) {
  m <- lp$mat %||% list(i = integer(), j = integer(), v = numeric(), nrow = 0L, ncol = length(lp$vars))
  list(i = m$i, j = m$j, v = as.double(m$v), nrow = m$nrow, ncol = m$ncol,
       rhs = as.double(lp$rhs %||% numeric()), lower = as.double(prep$lower[lp$vars]),
       upper = as.double(prep$upper[lp$vars]), vars = lp$vars, targets = which(sens[lp$vars]))
}

# The number of relations between the cells `from` and every cell of the
# table, moving through suppressed cells (`supp`) only: 0 for `from`, 1
# for the suppressed cells of their relations, and so on; Inf for cells
# never reached. In the core (relation_hops() of table_components.hpp: a
# breadth-first search over the relations; the R loop over all triplets at
# each hop took a ninetieth of the default's time on R4 of the bench).
relation_hops <- function(prep, from, supp) {
  core_call(cpp_relation_hops, relation_index_of(prep), supp, as.integer(from))
}

# The intervals of the sensitive cells of component cc when the cells
# `cells` are known to lie within [lo, hi]. `witnesses`, `dead`: witness
# tables (witness_index()) and those of them that move a published cell
# (witness_dead()), whose extremes within the respondent's knowledge
# (respondent_seeds()) settle ends before any program.
respondent_component <- function(prep, cmp, cc, cells, lo, hi, exact, sens, call, relations_only = FALSE,
                                 witnesses = NULL, dead = NULL) {
  lp <- cmp$lp_of(cc)
  targets <- lp$vars[sens[lp$vars]]
  if (!length(targets)) return(list(cells = integer(), lower = numeric(), upper = numeric(), n_lp = 0L))
  if (relations_only && !is.null(lp$mat)) {
    # (the component's relation bounds narrowed by the knowledge, as
    # relation_breach_groups() finds them in the core)
    rb <- core_call(cpp_relation_bounds_known, core_program(lp, prep, sens), match(cells, lp$vars),
                    as.double(lo), as.double(hi), as.integer(audit_relation_passes), relation_bound_moved,
                    call = call)
    pos <- match(targets, lp$vars)
    return(list(cells = targets, lower = rb$lower[pos], upper = rb$upper[pos], n_lp = 0L))
  }
  pa <- prep
  pa$lower[cells] <- pmax(prep$lower[cells], lo)
  pa$upper[cells] <- pmin(prep$upper[cells], hi)
  if (is.null(lp$mat)) {
    return(list(cells = targets, lower = pa$lower[targets], upper = pa$upper[targets], n_lp = 0L))
  }
  lp$lower <- pa$lower[lp$vars]
  lp$upper <- pa$upper[lp$vars]
  lp <- cached_program(lp, pa)
  seeds <- if (!exact && !is.null(witnesses)) respondent_seeds(witnesses, dead, pa, cells, targets)
  if (!exact) {
    decided <- witnessed_protection(pa, lp, targets, seeds, call)
    if (!is.null(decided)) return(decided)
  }
  r <- component_intervals(lp, match(targets, lp$vars), targets, pa, exact, call, seeds = seeds)
  list(cells = targets, lower = r$lower, upper = r$upper, n_lp = r$n_lp)
}

# Protection decided by witness tables alone: the seeds (respondent_seeds())
# first, then the optimal tables of the component's earlier programs
# (another respondent's or the outsider's, kept by its shared solver:
# shared_extremes()), each a table of the respondent's program `lp` (bounds
# `pa`). When they protect every target, their extremes are returned as the
# inner bounds, as respondent_component() returns them, with neither
# relation bounds nor programs; otherwise NULL. (component_intervals() would
# settle those ends with the same tables after the relation bounds: on the
# bench tables R2 and R4, 115 and 85 of the respondents' problems of the
# clean-up ended there without a program.)
witnessed_protection <- function(pa, lp, targets, seeds, call) {
  hi <- lo <- pa$value[targets]
  if (!is.null(seeds)) {
    hi <- pmax(hi, seeds$hi)
    lo <- pmin(lo, seeds$lo)
  }
  # (protection_met() with the requirement computed once: it took a
  # twentieth of the clean-up's time on the 965-cell table of
  # bench_suppress_small.R, called thousands of times)
  req <- protection_required(pa, targets)
  tol <- pa$tol[targets]
  need_hi <- req$hi - tol
  need_lo <- req$lo + tol
  met_of <- function(lo, hi) !is.na(lo) & !is.na(hi) & hi >= need_hi & lo <= need_lo & hi - lo > tol
  met <- met_of(lo, hi)
  if (!all(met)) {
    solver <- cached_solver(lp, pa)
    if (is.null(solver$tables)) return(NULL)
    pos <- match(targets, lp$vars)
    ex <- shared_extremes(solver, lp, pa, pos, replace(need_hi, met, -Inf), replace(need_lo, met, Inf), call)
    if (is.null(ex)) return(NULL)
    hi <- pmax(hi, ex$max)
    lo <- pmin(lo, ex$min)
    met <- met_of(lo, hi)
    if (!all(met)) {
      # (combinations of those tables, until one end stays short)
      cx <- combined_extremes(solver, lp, pa, pos, replace(need_hi, met, -Inf), replace(need_lo, met, Inf),
                              hi, lo, call, all_or_none = TRUE)
      if (is.null(cx) || !cx$settled) return(NULL)
      hi <- cx$max
      lo <- cx$min
      if (!all(met_of(lo, hi))) return(NULL)
    }
  }
  list(cells = targets, lower = lo, upper = hi, n_lp = 0L)
}

# --- Witness tables as seeds of the respondents' programs -----------------------
#
# A witness table (list(cells, y): the deviation y of the published table
# on `cells`) that keeps every relation and a priori bound, and moves only
# suppressed cells of the pattern, restricted to the cells of one
# component of the pattern is a table of that component's programs (every
# relation through its cells lies in it). Shrunk toward the published
# table, lambda y keeps the relations too, and every bound y keeps; a
# respondent's knowledge tightens the bounds of a few cells only, so the
# largest lambda in [0, 1] that keeps them (and the same for the mirror
# image -y) gives a table of the respondent's program. The heuristic's
# tables and those of the respondents' rounds move few cells, so most keep
# a respondent's knowledge whole, where the extreme tables of the programs
# rarely do (on the bench tables R1-R4 and 1-2 they saved 5% to 44% of the
# respondents' programs, bench/README.md).

# The witness tables `witnesses` indexed for respondent_seeds(), each one
# checked first (witness_ok(): a table that fails is left out, so that a
# witness can only save programs, never decide a cell). Per table, the
# largest shares `lam_pos`, `lam_neg` in [0, 1] of y and -y that keep the
# a priori bounds of `prep` (not widened by the tolerance); its moves y != 0
# (`cell`, `y`, and 0-based `id0` for the core), and the moves of each cell
# (`by0`, 0-based, cell by cell from `cstart`). NULL when no table passes.
witness_index <- function(witnesses, prep) {
  witnesses <- witnesses[witnesses_ok(prep, witnesses)]
  if (!length(witnesses)) return(NULL)
  cells <- lapply(witnesses, `[[`, "cells")
  cell <- unlist(cells, use.names = FALSE)
  y <- as.double(unlist(lapply(witnesses, `[[`, "y"), use.names = FALSE))
  id <- rep.int(seq_along(witnesses), lengths(cells))
  moved <- y != 0
  cell <- as.integer(cell[moved])
  y <- y[moved]
  id <- id[moved]
  n_w <- length(witnesses)
  list(cell = cell, y = y, id0 = id - 1L, n_w = n_w,
       lam_pos = witness_shrink(rep(1, n_w), prep, cell, y, id),
       lam_neg = witness_shrink(rep(1, n_w), prep, cell, -y, id),
       cstart = c(0L, cumsum(tabulate(cell, length(prep$value)))), by0 = order(cell) - 1L)
}

# witness_ok() of each of the tables `witnesses` (list(cells, y)), in one
# call of the core (cpp_witnesses_ok(): witness_adds_up() of each table).
# A table of no cells, duplicated or unknown cells, or missing moves fails.
# (One call of witness_ok() per table took a twentieth of the default's
# time on R4 of the bench, in the respondents' rounds and clean-up, which
# index the pattern's tables again each time; one pass in R, with rowsum(),
# still a fiftieth.)
witnesses_ok <- function(prep, witnesses) {
  n <- length(prep$value)
  ok <- vapply(witnesses, function(w) {
    length(w$cells) > 0L && length(w$y) == length(w$cells) && !anyDuplicated(w$cells) &&
      all(w$cells >= 1L & w$cells <= n)
  }, logical(1))
  if (!any(ok)) return(ok)
  ws <- witnesses[ok]
  cells <- lapply(ws, `[[`, "cells")
  ok[ok] <- core_call(cpp_witnesses_ok, relation_index_of(prep), as.integer(unlist(cells, use.names = FALSE)),
                      as.double(unlist(lapply(ws, `[[`, "y"), use.names = FALSE)),
                      c(0L, cumsum(lengths(cells))), prep$value, as.double(prep$lower), as.double(prep$upper),
                      prep$tol, audit_tolerance)
  ok
}

# The shares `lam` (one per table) lowered, table by table, to the largest
# share of its moves y of `cells` (table `id`) that keeps the bounds of `p`.
witness_shrink <- function(lam, p, cells, y, id) {
  if (!length(cells)) return(lam)
  v <- p$value[cells]
  room <- ifelse(y > 0, p$upper[cells] - v, v - p$lower[cells])
  m <- group_extreme(pmax(room, 0) / abs(y), id)
  lam[m$group] <- pmin(lam[m$group], m$value)
  lam
}

# Which tables of the index `ix` move a cell that pattern `supp` publishes
# (tables of another pattern: not used).
witness_dead <- function(ix, supp) {
  dead <- logical(ix$n_w)
  dead[ix$id0[!supp[ix$cell]] + 1L] <- TRUE
  dead
}

# The extremes of the `targets` over the tables of the index `ix` (but the
# `dead` ones), each shrunk to keep the bounds of `pa`, the a priori bounds
# tightened by a respondent's knowledge on the cells `known` (in the core,
# witness_moves() of table_components.hpp). Returns the seeds of
# component_intervals() for the targets: list(cells, hi, lo), the
# published value where no table moves one.
respondent_seeds <- function(ix, dead, pa, known, targets) {
  m <- core_call(cpp_witness_moves, ix$y, ix$id0, ix$cstart, ix$by0, ix$lam_pos, ix$lam_neg, dead,
                 as.integer(known), pa$value[known], pa$lower[known], pa$upper[known], as.integer(targets))
  v <- pa$value[targets]
  list(cells = targets, hi = v + m$up, lo = v + m$dn)
}

# The outsider's seeds (respondent_seeds() without knowledge) of the
# `targets` under pattern `supp`, from the tables of the index `ix` that move
# only cells `supp` suppresses; NULL without tables. (The respondents'
# clean-up decides the outsider's protection of a trial with them: on R2 and
# R4 of the bench its trials' programs went from 27 and 20 to 13 and 9.)
outsider_seeds <- function(ix, prep, supp, targets) {
  if (is.null(ix)) return(NULL)
  respondent_seeds(ix, witness_dead(ix, supp), prep, integer(), targets)
}

# The respondent audit of pattern `supp`: the outsider's exact interval of
# every suppressed cell, then respondent_breaches() (`undominated`: of the
# undominated groups only, undominated_groups()). The intervals are the
# respondents' `outer` bounds: an upper end no respondent knows a bound
# below (upper_known()) needs only an outer bound, its relation bound (no
# program: on the 965-cell table of bench_suppress_small.R, where persons
# know only lower bounds of the cells they are not alone in, the rounds'
# 365 programs became 243). `among`, `only`: the groups and sensitive
# cells attacked (respondent_breaches()), all when NULL. Returns the
# breaches with `outer` (list(lower, upper, exact), `exact` the cells
# whose interval is exact).
respondent_audit <- function(prep, supp, resp, exact, call, witnesses = NULL, undominated = FALSE,
                             among = NULL, only = NULL) {
  all_supp <- which(supp)
  lazy <- if (getOption("sdcRisk.respondent_upper_bounds", TRUE)) !upper_known(resp, prep, all_supp)
  o <- audit_cells(prep, supp, all_supp, exact = TRUE, call = call, outer_upper = lazy)
  outer <- list(lower = rep(NA_real_, length(supp)), upper = rep(NA_real_, length(supp)), exact = supp)
  outer$lower[all_supp] <- o$lower
  outer$upper[all_supp] <- o$upper
  if (any(lazy)) outer$exact[all_supp[lazy]] <- FALSE
  r <- respondent_breaches(prep, supp, resp, outer, exact, call, only = only, witnesses = witnesses,
                           among = among, undominated = undominated)
  r$n_lp <- r$n_lp + o$n_lp
  r$outer <- outer
  r
}

# Whether some respondent may know an upper bound of each of `cells` below
# its a priori upper bound: a single contributor's knowledge of it
# (cell_knowledge()), a coalition's, or, for a cell whose contributors all
# contribute 0, one alone in a cell above it (zero_cells_known()). Where
# none does, no respondent's knowledge of the cell is effective above
# (effective_knowledge()) whatever outer upper bound the outsider has.
upper_known <- function(resp, prep, cells) {
  known <- cell_knowledge(resp, prep, cells)$hi < prep$upper[cells] | cells %in% resp$zero_cells
  for (g in resp$n_single + seq_along(resp$coalitions)) {
    k <- respondent_knowledge(resp, prep, g)
    known <- known | cells %in% k$cells[k$hi < prep$upper[k$cells]]
  }
  known
}

# The breaches as the audit reports them: the respondent (or coalition), the
# cell's `by` columns, its total and protection level, the respondent's
# interval and the interval it must at least be.
breach_table <- function(x, prep, resp, b, map = seq_len(nrow(x))) {
  by <- attr(x, "by")
  rows <- match(b$cell, map)
  keep <- !is.na(rows)
  b <- b[keep, , drop = FALSE]
  rows <- rows[keep]
  out <- data.frame(respondent = resp$labels[b$group], stringsAsFactors = FALSE)
  cells <- as.data.frame(x)[rows, by, drop = FALSE]
  out <- cbind(out, cells)
  out$total <- prep$value[b$cell]
  out$protection <- prep$level[b$cell]
  out$lower <- b$lower
  out$upper <- b$upper
  out$required_lower <- b$need_lower
  out$required_upper <- b$need_upper
  rownames(out) <- NULL
  out
}

# --- Protection -----------------------------------------------------------------

# Suppress more cells of the pattern in `search` until no respondent breaks
# it: for every breach, a witness table within the respondent's knowledge
# (protect_cell() on the respondent's bounds), then the audit again.
respondent_pattern <- function(prep, search, resp, call) {
  n_lp <- 0L
  rounds <- 0L
  # the witness tables of the pattern and of the rounds, seeds of the
  # respondents' programs (respondent_seeds())
  wits <- search$wits
  # (the respondents and sensitive cells the next audit attacks: every one
  # at first, then those of the last round's breaches. A round only adds
  # suppressions, and a pattern with more cells suppressed leaves every
  # attacker with more tables, the published table among them: each
  # interval only widens. A respondent that broke no cell in a round
  # breaks none after it, nor does one a cell it did not break; on the
  # 736-cell sweep table of bench_suppress_sweep.R, 131 respondents
  # attacked in the second round -> 23. The option
  # sdcRisk.respondent_rounds_all, undocumented, lets the tests attack with
  # every respondent in every round)
  among <- only <- NULL
  every <- getOption("sdcRisk.respondent_rounds_all", FALSE)
  repeat {
    index <- witness_index(wits, prep)
    # (the undominated respondents: a table within a dominating one's
    # knowledge is one within the dominated one's, undominated_groups())
    r <- respondent_audit(prep, search$supp, resp, exact = FALSE, call = call, witnesses = index,
                          undominated = TRUE, among = among, only = only)
    n_lp <- n_lp + r$n_lp
    b <- r$breaches
    if (!nrow(b)) break
    if (!every) {
      among <- unique(b$group)
      only <- unique(b$cell)
    }
    rounds <- rounds + 1L
    before <- sum(search$supp)
    # (the witness tables of the round so far: protect_against())
    found <- list()
    for (k in seq_len(nrow(b))) {
      if (!search$supp[b$cell[k]]) next
      kn <- respondent_knowledge(resp, prep, b$group[k])
      found <- c(found, protect_against(prep, search, kn, b$cell[k], resp$labels[b$group[k]], call, found))
    }
    wits <- c(wits, found)
    if (sum(search$supp) == before) {
      abort_sdc(c(
        "Cell {.val {search$labels[b$cell[1]]}} cannot be protected against respondent {.val {resp$labels[b$group[1]]}}.",
        "x" = "No table within what the respondent knows moves it far enough, whatever else is suppressed.",
        "i" = "Use {.code attacker = \"outsider\"} for the outside attacker alone (see {.fn audit_table})."
      ), "unprotectable", call = call, arg = "x")
    }
  }
  # (the outsider's exact intervals of the final pattern and the witness
  # tables with their index, for the clean-up)
  list(n_lp = n_lp, rounds = rounds, outer = r$outer, witnesses = wits, index = index)
}

# The clean-up after the respondent rounds (protect_table()'s `cleanup`):
# each secondary cell, the most expensive first (the order of the
# outsider's clean-up, costliest_first()), is published again when the
# pattern without it still passes the full audit, outsider and
# respondents. Publishing cell j changes only the component of suppressed
# cells that held it (every relation through j lies in it), so only that
# component is audited again: first the outsider's and the respondents'
# relation bounds (no program), then the outsider's protection of its
# sensitive cells decided, and only for a trial that passes all three the
# respondents' programs on the sensitive cells it held, with the region's
# outsider's intervals from before the trial (wider than the exact ones,
# which only lets more of the respondents' knowledge count: knowledge the
# exact interval implies changes nothing; the final audit measures the
# intervals once). With
# `keep_witnessed` (intervals = "none", where the final audit reads the
# outsider's witness tables) the cells a recorded witness moves stay.
# The respondents' programs of the trials that pass every other test are
# deferred: such trials publish their cells in turn, kept out of
# `search`, and one test of the respondents on the sensitive cells of all
# their regions (the components the trials changed) ends the pass. When it
# finds no breach, each trial's own test would have found none either
# (each pattern in between has more cells suppressed, which only widens a
# respondent's intervals, and every other component is as the rounds or
# the last test left it), so the pattern is the one the trials' own tests
# give, with one test instead of one per publication (on R2 of the bench,
# 6 tests and 341 programs in all -> 1 and 299, then 276 -> 211 with the
# intervals deferred too; on table 1, 2,952 -> 1,916 programs). Until
# then a region keeps its intervals of the pattern before the trial,
# wider, which only lets the next trials' respondents' relation bounds
# test more respondents. The first test takes at most
# cleanup_respondent_first_test trials. When the test finds a breach, the
# trials from the first deferred one run again, half as many to a test,
# and so on down to one, which the test then refuses; after a passed test
# cleanup_respondent_test_growth times as many. The
# trials published are those of the trials' own tests in turn (the option
# sdcRisk.respondent_defer, undocumented, lets the tests compare the two:
# FALSE tests each trial on its own). Before a trial joins the deferred
# test, the respondents whose programs broke earlier trials (in such a
# pre-test or a deferred test) attack it alone (on the pattern its own
# test would attack): a breach refuses it at once, so few deferred tests
# fail (sdcRisk.respondent_pretest = FALSE, undocumented, leaves this out).
# Those that broke trials by their relation bounds alone do not: every
# trial's relation test attacks them again, and their programs rarely
# break what their relation bounds leave (on R7 of bench_suppress_small.R,
# 965 cells, the 73 pre-tests attacked with 781 respondents and refused
# 11 trials; by the program breakers alone, 71 attacks refused 8. The
# deferred tests then solve more programs, those of the pre-tests no
# longer having left their tables to the shared solver, but R7 took 3.9
# -> 3.2 s, R6 2.8 -> 2.4 s; sdcRisk.respondent_pretest_all, undocumented,
# attacks with every earlier breaker). A trial run again after a refused
# deferred test, on the pattern and intervals it had the first time,
# keeps its verdict: only the respondents that broke a trial since attack
# it (on R7, 161 -> 117 respondents' relation tests, 1,019 -> 810
# respondents attacked by the pre-tests, then by every breaker). The
# cheapest candidates are not tried (cheap_tail()). Before the first
# trial, the relation tests of every candidate on the pattern the clean-up
# starts from refuse at once those whose publication breaks it there, and
# so at every later pattern (respondent_screen()).
# `outer`: the outsider's exact intervals of the pattern in `search`
# (list(lower, upper) over all cells, as the respondents' last round
# measured them), measured here when NULL. `witnesses`: witness tables
# (list(cells, y)) of the pattern and its rounds, seeds of the respondents'
# programs (respondent_seeds()) and of the outsider's tests of the trials
# (outsider_seeds()); `index`, their witness_index() when the rounds built
# it already. Returns list(n_lp, published, rolled_back, outer, tests,
# pretested), `rolled_back` TRUE when a deferred test failed, `outer` the
# outsider's intervals of the final pattern with `exact`, the cells whose
# interval is exact (for final_audit()), `tests` the deferred tests
# (list(size, passed): the trials each took, whether it passed),
# `pretested` the respondents the pre-tests attacked, in all.
respondent_cleanup <- function(prep, search, resp, keep_witnessed, call, outer = NULL, witnesses = NULL,
                               index = NULL) {
  supp <- search$supp
  n_lp <- 0L
  witnesses <- index %||% witness_index(witnesses, prep)
  if (is.null(outer)) {
    all_supp <- which(supp)
    o <- audit_cells(prep, supp, all_supp, exact = TRUE, call = call)
    n_lp <- o$n_lp
    outer <- list(lower = rep(NA_real_, length(supp)), upper = rep(NA_real_, length(supp)))
    outer$lower[all_supp] <- o$lower
    outer$upper[all_supp] <- o$upper
  }
  # (the cells whose interval in `outer` is exact under the current
  # pattern: every suppressed cell at first, those of a region published
  # without a measure no longer; returned for the final audit)
  fresh <- if (is.null(outer$exact)) supp else outer$exact & supp
  published <- 0L
  breakers <- integer()
  # (those of them whose programs broke a trial, in a pre-test or a
  # deferred test: the pre-tests' attackers. The others broke trials by
  # their relation bounds, which every trial's relation test attacks
  # anyway. The option sdcRisk.respondent_pretest_all, undocumented, lets
  # the tests and the bench pre-test every breaker, as before)
  program_breakers <- integer()
  pretest_all <- getOption("sdcRisk.respondent_pretest_all", FALSE)
  # (the respondents the pre-tests attacked, in all)
  pretested <- 0L
  cand <- costliest_first(search)
  # (not the cheap tail: cheap_tail())
  cand <- cand[!cheap_tail(search, cand)]
  if (keep_witnessed) {
    cand <- setdiff(cand, unlist(lapply(search$wits, `[[`, "cells"), use.names = FALSE))
  }
  # (the candidates whose publication the relation bounds refuse at the
  # pattern the clean-up starts from refuse it at every later one:
  # respondent_screen())
  screen <- respondent_screen(prep, supp, resp, outer, cand, call)
  st <- prep$structure
  comp_of <- NULL
  tick <- table_progress("Clean-up against the respondents", length(cand))
  # (deferred: the trials that passed all but the respondents' test since
  # the last one, kept out of `search` until it; `back`, the state before
  # the first of them)
  defer <- getOption("sdcRisk.respondent_defer", TRUE)
  pending <- integer()
  pending_sens <- integer()
  back <- NULL
  rolled_back <- FALSE
  # (the most trials one test takes: cleanup_respondent_first_test at
  # first; after a refused test half as many as it took, after a passed one
  # cleanup_respondent_test_growth times as many. The option
  # sdcRisk.respondent_first_test, undocumented, lets the tests compare
  # other first sizes)
  limit <- getOption("sdcRisk.respondent_first_test", cleanup_respondent_first_test)
  # (the trials each test took, and whether it passed)
  tests <- list(size = integer(), passed = logical())
  # (the verdicts of the trials since the last passed test, by position k;
  # the option sdcRisk.respondent_memo = FALSE, undocumented, lets the
  # tests run every trial again)
  memo <- list()
  remember <- getOption("sdcRisk.respondent_memo", TRUE)
  k <- ticked <- 0L
  while (k < length(cand) || length(pending)) {
    if (length(pending) && (k == length(cand) || length(pending) >= limit)) {
      # the respondents' test of the pattern without every pending cell,
      # on the sensitive cells of their regions (the only components that
      # changed): when it passes, so would each trial's own test (every
      # pattern between has those cells and more suppressed, which only
      # widens the respondents' intervals)
      passed <- TRUE
      if (length(pending_sens)) {
        # (the regions keep their wider intervals from before the trials:
        # the outsider's tests of the trials decided their sensitive cells,
        # each trial's test the whole component of its cell under the
        # pattern with the earlier pending cells published too)
        r <- respondent_breaches(prep, supp, resp, outer, exact = FALSE, call = call, only = pending_sens,
                                 first = TRUE, hint = breakers, near = pending, witnesses = witnesses)
        n_lp <- n_lp + r$n_lp
        passed <- !nrow(r$breaches)
      }
      tests$size <- c(tests$size, length(pending))
      tests$passed <- c(tests$passed, passed)
      if (passed) {
        publish(search, pending)
        published <- published + length(pending)
        pending <- pending_sens <- integer()
        limit <- limit * cleanup_respondent_test_growth
        # (no trial up to k runs again; those after it may, when this test
        # took half of a refused one's)
        memo <- memo[as.integer(names(memo)) > k]
        next
      }
      # otherwise some trial's own test would fail (a pattern with fewer
      # cells suppressed only narrows the intervals): back to the state
      # before the first pending trial. A test of one trial refuses it (as
      # its own test would); the trials of a larger one run again, half as
      # many to a test, until the first refused trial is found. Each
      # passed test publishes what the trials' own tests would have (a
      # respondents' test that passes costs far more programs than one that
      # finds a breach: on the 668-cell ACS table of bench_suppress_small.R,
      # about 150 against 20).
      n_pending <- length(pending)
      supp <- back$supp
      outer <- back$outer
      fresh <- back$fresh
      breakers <- unique(c(r$breaches$group[1], back$breakers))
      program_breakers <- unique(c(r$breaches$group[1], program_breakers))
      k <- if (n_pending == 1L) back$k else back$k - 1L
      limit <- if (n_pending == 1L) 1 else ceiling(n_pending / 2)
      pending <- pending_sens <- integer()
      rolled_back <- TRUE
      next
    }
    k <- k + 1L
    j <- cand[k]
    if (k > ticked) {
      tick()
      ticked <- k
    }
    if (screen$refused[k]) {
      # (as its relation tests would refuse it, by the same respondent
      # when one broke it)
      if (!is.na(screen$by[k])) breakers <- unique(c(screen$by[k], breakers))
      next
    }
    # the component of j under the current pattern, without j (the
    # components found again only when a trial changed the pattern: most
    # trials fail)
    if (!identical(comp_of, supp)) {
      is_s <- supp[st$cell]
      comp <- core_call(cpp_relation_components, st$rel[is_s], st$cell[is_s], st$nrel, st$ncell,
                        call = call)
      comp_of <- supp
    }
    region <- setdiff(which(supp & comp == comp[j]), j)
    trial <- supp
    trial[j] <- FALSE
    trial_outer <- outer
    trial_outer$lower[j] <- trial_outer$upper[j] <- NA_real_
    s_reg <- region[prep$sensitive[region]]
    if (length(s_reg)) {
      # (a trial run again after a refused deferred test, on the pattern
      # and intervals it had the first time, has the verdict it had then:
      # `memo`; only the respondents that broke a trial since attack it)
      seen <- if (remember) memo[[as.character(k)]]
      if (!is.null(seen) && !(identical(seen$supp, supp) && identical(seen$outer, outer))) seen <- NULL
      if (!is.null(seen) && seen$refused) {
        breakers <- unique(c(seen$by, breakers))
        next
      }
      if (is.null(seen)) {
        v <- trial_verdict(prep, trial, j, s_reg, resp, trial_outer, breakers, witnesses, call, screen$test)
        n_lp <- n_lp + v$n_lp
        if (v$refused) {
          breakers <- unique(c(v$by, breakers))
          memo[[as.character(k)]] <- list(supp = supp, outer = outer, refused = TRUE, by = v$by)
          next
        }
      }
      # the respondents whose programs broke earlier trials (and not this
      # one before) attack it first, or, not deferred, every respondent
      among <- if (!defer) NULL else
        if (getOption("sdcRisk.respondent_pretest", TRUE)) {
          setdiff(if (pretest_all) breakers else program_breakers, seen$tested)
        }
      if (!defer || length(among)) {
        # (deferred, those earlier breakers attack it as its own test would:
        # a breach refuses it at once, the trial its own test would refuse,
        # where a deferred test that finds it sends the trials back. On a
        # 965-cell table, age x race x education x PUMA of 12 PUMAs of the
        # bench's ACS excerpt, 32 deferred tests became 5, 9.5 -> 6.4 s.
        # Not deferred, whether some respondent breaks it: the first that
        # does ends the test, and is tried early next time; those whose
        # knowledge lies near j first. The region keeps its intervals of
        # the pattern with j, wider, as a deferred trial's does: they only
        # let more of the respondents' knowledge count, which changes
        # nothing where the exact interval already implies it, and the
        # outsider's protection of its sensitive cells was decided above.
        # Measuring the region's exact intervals first took 5,356 of 9,117
        # programs on a table of 668 cells, age x race x education x PUMA
        # of the bench's ACS excerpt; its intervals are measured once, by
        # the final audit.)
        r <- respondent_breaches(prep, trial, resp, trial_outer, exact = FALSE, call = call, only = s_reg,
                                 first = TRUE, hint = breakers, near = j, witnesses = witnesses, among = among)
        n_lp <- n_lp + r$n_lp
        pretested <- pretested + length(among)
        if (nrow(r$breaches)) {
          breakers <- unique(c(r$breaches$group[1], breakers))
          program_breakers <- unique(c(r$breaches$group[1], program_breakers))
          memo[[as.character(k)]] <- list(supp = supp, outer = outer, refused = TRUE, by = r$breaches$group[1])
          next
        }
      }
      if (defer) {
        memo[[as.character(k)]] <- list(supp = supp, outer = outer, refused = FALSE,
                                        tested = union(seen$tested, among))
        # (the respondents' test with the next pending ones; until then the
        # region keeps its intervals of the pattern with j, wider, for the
        # next trials' respondents' relation bounds)
        pending_sens <- union(pending_sens, s_reg)
      }
    }
    if (defer) {
      if (!length(pending)) back <- list(k = k, supp = supp, outer = outer, fresh = fresh, breakers = breakers)
      pending <- c(pending, j)
    } else {
      publish(search, j)
      published <- published + 1L
    }
    # (a region's intervals are not exact until the deferred test or the
    # final audit measures them)
    fresh[j] <- FALSE
    fresh[region] <- FALSE
    supp <- trial
    outer <- trial_outer
  }
  tick(done = TRUE)
  outer$exact <- fresh & supp
  list(n_lp = n_lp, published = published, rolled_back = rolled_back, outer = outer, tests = tests,
       pretested = pretested)
}

# The relation tests of respondent_cleanup()'s trials, for all its
# candidates `cand` at once, on the pattern `supp` it starts from (with the
# outsider's intervals `outer`): whether the outsider's relation bounds of
# the pattern without each candidate break (relation_breach()), then for
# the others whether some respondent's do (respondent_breaches() with
# `relations_only`, in the core: relation_breach_groups_each(), one
# program per candidate, its component's with the candidate held at its
# value, the pieces of the pattern without it). A breach found is real, and
# holds at every later pattern of the clean-up: it only publishes cells,
# which narrows every attacker's exact intervals, and its candidates'
# sensitive cells stay suppressed. So a candidate refused here is one the
# clean-up's own tests would refuse (on the 353-cell table of the sweep,
# bench_suppress_sweep.R, 68 of its 82 candidates, whose trials, tried
# again after refused deferred tests, had been 152 of 189), in one call of
# the core for all instead of one test per trial. The programs and groups
# serve the respondents' relation tests of the later trials too
# (screen_test()). The option sdcRisk.respondent_screen = FALSE
# (undocumented) leaves both out, for the tests to compare. Returns
# list(refused, by: the group that broke each, NA for none or the
# outsider, test: the programs and groups for screen_test(), NULL without
# respondents or cells to attack).
respondent_screen <- function(prep, supp, resp, outer, cand, call) {
  out <- list(refused = logical(length(cand)), by = rep(NA_integer_, length(cand)), test = NULL)
  if (!length(cand) || !getOption("sdcRisk.respondent_screen", TRUE)) return(out)
  out$refused <- core_call(cpp_relation_breach_each, relation_index_of(prep), as.double(prep$value), supp,
                           prep$sensitive, as.double(prep$lower), as.double(prep$upper), as.double(prep$tol),
                           as.double(prep$level), as.integer(cand), as.integer(audit_relation_passes),
                           relation_bound_moved, call = call)
  if (!n_groups(resp)) return(out)
  # (the cells to attack, as respondent_breaches() finds them)
  sens <- attacked_cells(prep, supp, outer)
  if (!any(sens)) return(out)
  groups <- undominated_groups(resp, prep, attack_groups(prep, supp, resp, outer)$groups)
  if (!length(groups)) return(out)
  cmp <- attacked_components(prep, supp, sens, call)
  out$test <- list(args = relation_test_args(prep, supp, resp, outer, sens, cmp, cmp$has_sens, groups),
                   groups = groups)
  left <- which(!out$refused)
  if (length(left)) {
    g <- screen_test(out$test, supp, cand[left], rep(TRUE, length(supp)), call)
    out$refused[left] <- !is.na(g)
    out$by[left] <- g
  }
  out
}

# The respondents' relation test of the pattern `supp` without each of the
# cells `cand` (suppressed in `supp`, which holds no cell the screen's
# pattern publishes), attacking the sensitive cells flagged in `attack`, on
# the programs and groups of respondent_screen() (`test`): a group that
# breaks it, NA for none. (Each trial's test then takes one call of the
# core, where respondent_breaches() built its programs and groups again
# for each: on the 353-cell table of the sweep, most of the clean-up's
# relation tests.)
screen_test <- function(test, supp, cand, attack, call, hint = integer()) {
  a <- test$args
  a$supp <- supp
  if (length(cand) == 1L) {
    # (the one program the candidate needs)
    q <- a$prog[cand]
    if (q == 0L) return(NA_integer_)
    a$programs <- a$programs[q]
    a$prog <- as.integer(a$prog == q)
  }
  g <- do.call(core_call, c(list(cpp_relation_breach_groups_each), a,
                            list(cand = as.integer(cand), attack = as.logical(attack),
                                 hint = test$groups %in% hint, call = call)))
  ifelse(g > 0L, as.integer(test$groups[pmax(g, 1L)]), NA_integer_)
}

# The tests of a trial of respondent_cleanup() before the respondents'
# programs, each deciding whether pattern `trial` (the pattern without
# cell j) breaks: the outsider's relation bounds (relation_breach(): on R4
# of the bench they end 55 of the 82 trials), then the respondents'
# relation bounds against `trial_outer`, the intervals before the trial
# (wider: they let more knowledge through, which only tests more
# respondents; a breach there is real), on the programs and groups of the
# clean-up's screen when it has them (`test`: screen_test(), the same
# intervals), otherwise found for the trial: before the outsider's programs
# they end 23 of the 27 trials left on R4, which the outsider's programs
# ended with 119 programs (R2: 538 -> 480 programs in all, R4: 1,154 ->
# 1,055); then the outsider's protection of the region's sensitive cells
# `s_reg` decided (witness tables settle most ends; the exact intervals of
# the whole region are measured only for the respondents' test of a trial
# that passes). Returns list(refused, by: the respondent that broke it,
# if one did, n_lp).
trial_verdict <- function(prep, trial, j, s_reg, resp, trial_outer, breakers, witnesses, call, test = NULL) {
  if (relation_breach(prep, trial, j, call)) return(list(refused = TRUE, by = integer(), n_lp = 0L))
  if (!is.null(test)) {
    g <- screen_test(test, replace(trial, j, TRUE), j, seq_along(trial) %in% s_reg, call, hint = breakers)
    if (!is.na(g)) return(list(refused = TRUE, by = g, n_lp = 0L))
  } else {
    q <- respondent_breaches(prep, trial, resp, trial_outer, exact = FALSE, call = call,
                             only = s_reg, first = TRUE, hint = breakers, near = j, relations_only = TRUE)
    if (nrow(q$breaches)) return(list(refused = TRUE, by = q$breaches$group[1], n_lp = 0L))
  }
  d <- audit_cells(prep, trial, s_reg, exact = FALSE, call = call, first_breach = TRUE,
                   seeds = outsider_seeds(witnesses, prep, trial, s_reg))
  list(refused = !all(protection_met(prep, s_reg, d$lower, d$upper)), by = integer(), n_lp = d$n_lp)
}

# Witness tables for cell i against a respondent who knows the cells of
# `kn`: the heuristic's protect_cell() in a search whose a priori bounds
# are the respondent's; its new suppressions go into `search`. `earlier`:
# witness tables (list(cells, y)) of the round's earlier breaches, all of
# whose cells are suppressed: those that move i and keep the respondent's
# knowledge (or whose mirror images do) cover their sides of i before any
# program (on R4 of the bench, 52 of the round's 60 breaches added no cell
# after the others had, each with a program). Returns the witness tables
# it found.
protect_against <- function(prep, search, kn, i, label, call, earlier = list()) {
  sub <- respondent_search(prep, search, kn)
  sub$supp <- search$supp
  sub$reason <- search$reason
  # (the model of the deviation programs is the table's, whatever the
  # bounds: the last one built serves the respondent's programs, and theirs
  # the next respondent's)
  sub$dev_session <- search$dev_session
  on.exit(search$dev_session <- sub$dev_session)
  # (the tables and their mirror images checked in one call each)
  use <- earlier[vapply(earlier, function(w) any(w$cells == i) && all(sub$supp[w$cells]), logical(1))]
  if (length(use)) {
    mirrors <- lapply(use, mirror_image)
    pos <- witnesses_ok(sub$prep, use)
    neg <- witnesses_ok(sub$prep, mirrors)
    for (k in seq_along(use)) {
      if (pos[k]) {
        record_witness(sub, use[[k]], i, mirror_ok = neg[k])
      } else if (neg[k]) {
        record_witness(sub, mirrors[[k]], i, mirror_ok = FALSE)
      }
    }
  }
  seeded <- length(sub$wits)
  tryCatch(protect_cell(sub, i, call),
    sdcRisk_error_unprotectable = function(e) {
      abort_sdc(c(
        "Cell {.val {search$labels[i]}} cannot be protected against respondent {.val {label}}.",
        "x" = "It needs {format(prep$level[i])} on each side of {format(prep$value[i])}, and no table within what the respondent knows moves it that far, whatever else is suppressed.",
        "i" = "Use {.code attacker = \"outsider\"} for the outside attacker alone (see {.fn audit_table})."
      ), "unprotectable", call = call, arg = "x")
    })
  new <- sub$supp & !search$supp
  search$supp <- sub$supp
  env_set(search, "reason", new, paste0("protects ", search$labels[i], " against respondent ", label))
  search$n_lp <- search$n_lp + sub$n_lp
  sub$wits[seq_along(sub$wits) > seeded]
}

# A search state like `search` (its costs, labels and box) whose a priori
# bounds are those of a respondent who knows the cells of `kn`: the
# respondent's problem, for protect_against() and the optimal method's
# respondent_cuts(). (The index of the classification is the table's:
# built again for each breach, it took a fiftieth of the default's time on
# R4 of the bench.)
respondent_search <- function(prep, search, kn) {
  pa <- prep
  pa$lower[kn$cells] <- kn$lo
  pa$upper[kn$cells] <- kn$hi
  new_protection_search(pa, search$w, search$labels, search$box, box_index = search$box_index)
}

# --- Arguments --------------------------------------------------------------

# The respondents of one table for attacker = "respondents" (NULL for the
# outsider).
table_respondents <- function(x, prep, attacker, zero_contributions, arg = "x", call = rlang::caller_env()) {
  if (attacker == "outsider") return(NULL)
  contr <- table_contributions(x, arg, call)
  new_respondents(prep, contr, rule_coalitions(x, contr), zero_contributions)
}

# The respondents of linked tables: contributor keys name the same
# respondent in every table (the tables come from the same records), so
# every table must identify contributors the same way, and a contributor's
# contribution to a shared cell must be the same in every table.
linked_respondents <- function(lp, attacker, zero_contributions, call) {
  if (attacker == "outsider") return(NULL)
  tables <- lp$tables
  col <- vapply(tables, function(x) attr(x, "options")$contributor %||% "", character(1))
  if (length(unique(col)) > 1) {
    abort_sdc(c(
      "Linked tables must identify their contributors the same way for the respondent audit.",
      "x" = "Their {.arg contributor} columns are {.val {ifelse(col == '', '(none: records)', col)}}.",
      "i" = "Make every table with the same {.arg contributor} of {.fn cell_sensitivity}, or use {.code attacker = \"outsider\"}."
    ), "linked_contributors", call = call, arg = "tables")
  }
  parts <- lapply(seq_along(tables), function(k) {
    ck <- table_contributions(tables[[k]], sprintf("tables[[%d]]", k), call)
    ck$lower <- rep_len(ck$lower, length(ck$cell))
    ck$upper <- rep_len(ck$upper, length(ck$cell))
    coal <- rule_coalitions(tables[[k]], ck)
    ck$cell <- lp$map[[k]][ck$cell]
    list(contr = ck, coal = coal)
  })
  # one code per key over the tables (their keys name the same respondents)
  keys_of <- lapply(parts, function(p) contributor_keys(p$contr, seq_len(max(p$contr$id, 0L))))
  all_keys <- unique(unlist(keys_of))
  for (k in seq_along(parts)) {
    recode <- match(keys_of[[k]], all_keys)
    parts[[k]]$contr$id <- recode[parts[[k]]$contr$id]
    parts[[k]]$coal <- lapply(parts[[k]]$coal, function(g) recode[g])
  }
  fields <- setdiff(names(parts[[1]]$contr), "keys")
  contr <- lapply(fields, function(nm) unlist(lapply(parts, function(p) p$contr[[nm]])))
  names(contr) <- fields
  contr$keys <- all_keys
  pair <- (contr$cell - 1) * (length(all_keys) + 1) + contr$id
  first <- match(pair, pair)
  if (any(abs(contr$x - contr$x[first]) > additivity_tolerance * (1 + abs(contr$x)))) {
    bad <- which(abs(contr$x - contr$x[first]) > additivity_tolerance * (1 + abs(contr$x)))[1]
    abort_sdc(c(
      "A contributor id names different respondents in different tables.",
      "x" = "Contributor {.val {all_keys[contr$id[bad]]}} contributes {format(contr$x[first[bad]])} and {format(contr$x[bad])} to the shared cell {.val {lp$labels[contr$cell[bad]]}}.",
      "i" = "Linked tables must come from the same records, with ids that name one respondent in all of them."
    ), "linked_contributors", call = call, arg = "tables")
  }
  keep <- !duplicated(pair)
  contr[fields] <- lapply(contr[fields], `[`, keep)
  new_respondents(lp$prep, contr, unlist(lapply(parts, `[[`, "coal"), recursive = FALSE),
                  zero_contributions)
}
