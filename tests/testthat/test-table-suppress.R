# Secondary suppression (protect_table(), R/table-suppress.R): its patterns
# pass an independent audit and brute force (brute_intervals() in
# helper-tables.R), its search box and witness tables, its arguments,
# printing and progress bars. The audit itself is tested in
# test-table-audit.R, the optimal method and the improvement in
# test-table-suppress-optimal.R, the clean-up in test-table-suppress-cleanup.R.

test_that("protect_table() patterns pass an independent audit and brute force", {
  for (seed in 1:10) {
    d <- small_firms(seed, n = 30, nr = 3, nc = 3)
    d$v <- d$v + sample(0:1, nrow(d), TRUE)
    rules <- list(rule_frequency(3), rule_p(25))
    sens <- cell_sensitivity(d, c("r", "c"), "v", rules, contributor = "firm")
    for (cost in c("value", "cells")) {
      prot <- protect_table(sens, cost = cost, attacker = "outsider")
      supp <- prot$status != "published"
      expect_true(all(supp[sens$sensitive]), info = paste("seed", seed))
      expect_true(all(prot$status[!sens$sensitive] != "primary"))
      aud <- audit_table(sens, supp, attacker = "outsider")
      expect_true(attr(aud, "passed"), info = paste("seed", seed, cost))
      # the certificate printed with the pattern is the audit's
      m <- match(paste(aud$r, aud$c), paste(prot$r, prot$c))
      expect_equal(prot$lower[m], aud$lower)
      expect_equal(prot$upper[m], aud$upper)
      # brute force agrees that every sensitive cell meets its level
      if (!supp[sens$r == "Total" & sens$c == "Total"] && sum(supp) <= 5) {
        ref <- brute_intervals(sens, supp)
        k <- match(paste(ref$r, ref$c), paste(prot$r, prot$c))
        lev <- prot$protection[k]
        sensitive <- prot$status[k] == "primary"
        expect_true(all((ref$upper >= prot$total[k] + lev - 1e-9 &
                           ref$lower <= pmax(prot$total[k] - lev, 0) + 1e-9 &
                           ref$upper > ref$lower)[sensitive]), info = paste("seed", seed))
      }
    }
  }
})

test_that("protection levels are the rules' classic upper protection levels", {
  d <- data.frame(k = c(rep("a", 4), rep("b", 3)),
                  v = c(100, 30, 10, 5, 50, 40, 30))
  sens <- cell_sensitivity(d, "k", "v", list(rule_p(10), rule_nk(1, 60), rule_pq(10, 50)))
  prot <- protect_table(sens, attacker = "outsider")
  a <- prot[prot$k == "a", ]
  # p%: p/100 x1 - (X - x1 - x2) = 10 - 15 < 0 (safe); (1, 60): 100/60 x1 - X
  expect_equal(sens$S_p10[sens$k == "a"], 10 - 15)
  expect_equal(a$protection, 100 / 60 * 100 - 145)
  # pq: p/100 x1 - q/100 (X - x1 - x2)
  expect_equal(sens$S_pq10_50[sens$k == "a"], 10 - 0.5 * 15)
  expect_equal(attr(audit_table(sens, prot$status != "published", attacker = "outsider"), "passed"), TRUE)
})

test_that("frequency tables (counts) are protected and audited the same way", {
  set.seed(11)
  d <- data.frame(sex = sample(c("f", "m"), 60, TRUE),
                  age = sample(c("young", "mid", "old"), 60, TRUE, prob = c(0.1, 0.6, 0.3)),
                  area = sample(c("x", "y", "z"), 60, TRUE))
  d$one <- 1
  counts <- cell_sensitivity(d, c("sex", "age", "area"), "one", rule_frequency(3))
  expect_true(any(counts$sensitive))
  prot <- protect_table(counts, cost = "cells", attacker = "outsider")
  expect_true(all(prot$protected[counts$sensitive]))
  prim <- prot[prot$status == "primary", ]
  expect_true(all(prim$upper - prim$lower > 0))
  expect_true(all(prim$upper >= prim$total + 0.1 * prim$total - 1e-9))
  expect_true(attr(audit_table(counts, prot$status != "published", attacker = "outsider"), "passed"))
})

test_that("hierarchies give margins at every level, equal to direct aggregation", {
  set.seed(5)
  n <- 200
  d <- data.frame(firm = seq_len(n),
                  ind = sample(c("A1", "A2", "B1", "B2", "B3"), n, TRUE),
                  county = sample(c("n1", "n2", "s1", "s2"), n, TRUE),
                  v = round(rlnorm(n, 4, 1.5)))
  hier <- list(ind = c(A1 = "A", A2 = "A", B1 = "B", B2 = "B", B3 = "B"),
               county = data.frame(county = c("n1", "n2", "s1", "s2"),
                                   region = c("N", "N", "S", "S")))
  rules <- list(rule_frequency(3), rule_p(10))
  s <- cell_sensitivity(d, c("ind", "county"), "v", rules, contributor = "firm", hierarchy = hier)
  # 3 levels of ind (detail, group, total) x 3 of county
  expect_equal(length(unique(s$level)), 9)
  expect_equal(nrow(s), (5 + 2 + 1) * (4 + 2 + 1))
  # the group x region cells are the table of the derived variables
  d$grp <- substr(d$ind, 1, 1)
  d$region <- ifelse(d$county %in% c("n1", "n2"), "N", "S")
  flat <- cell_sensitivity(d, c("grp", "region"), "v", rules, contributor = "firm")
  mine <- s[s$level == "ind_group:region", ]
  m <- match(paste(flat$grp, flat$region), paste(mine$ind, mine$county))
  m[flat$grp == "Total" & flat$region == "Total"] <- which(s$level == "(total)") - 0
  ref <- as.data.frame(flat)
  got <- as.data.frame(s)
  gi <- match(paste(ref$grp, ref$region),
              paste(ifelse(got$ind == "Total", "Total", as.character(got$ind)),
                    as.character(got$county)))
  expect_false(anyNA(gi))
  expect_equal(got$total[gi], ref$total)
  expect_equal(got$S_p10[gi], ref$S_p10)
  expect_equal(got$sensitive[gi], ref$sensitive)
  # and the protected pattern passes its audit across every level
  prot <- protect_table(s, attacker = "outsider")
  expect_true(attr(audit_table(s, prot$status != "published", attacker = "outsider"), "passed"))
  # hierarchy relation: every suppressed group cell is linked to its children
  rel <- sdcRisk:::table_structure(s)
  expect_equal(length(unique(rel$rel)), rel$nrel)
})

test_that("sensitive-only intervals agree with the full audit", {
  set.seed(9)
  d <- random_records(300, c(6, 5), 4, 2)
  sens <- cell_sensitivity(d, c("a", "b"), "v", list(rule_frequency(3), rule_p(10)))
  full <- protect_table(sens, attacker = "outsider")
  fast <- protect_table(sens, intervals = "sensitive", attacker = "outsider")
  expect_equal(fast$status, full$status)
  p <- full$status == "primary"
  expect_equal(fast$lower[p], full$lower[p])
  expect_equal(fast$upper[p], full$upper[p])
  expect_true(all(is.na(fast$lower[full$status == "secondary"])))
})

test_that("errors are classed and worded", {
  d <- small_firms(2, n = 30)
  sens <- cell_sensitivity(d, c("r", "c"), "v", rule_frequency(5), contributor = "firm")
  expect_true(any(sens$sensitive))
  expect_error(protect_table(as.data.frame(sens), attacker = "outsider"), class = "sdcRisk_error_not_sensitivity")
  expect_error(audit_table(sens, TRUE, attacker = "outsider"), class = "sdcRisk_error_pattern")
  expect_error(audit_table(sens, data.frame(r = "zz", c = "A"), attacker = "outsider"), class = "sdcRisk_error_pattern")
  expect_error(protect_table(sens[sens$level != "(total)", ], attacker = "outsider"), class = "sdcRisk_error_incomplete_table")
  expect_error(protect_table(sens, lower = sens$total, upper = sens$total, attacker = "outsider"),
               class = "sdcRisk_error_unprotectable")
  expect_error(protect_table(sens, upper = 0, attacker = "outsider"), class = "sdcRisk_error_bounds")
  bad <- sens
  bad$total[bad$r == "a" & bad$c == "Total"] <- bad$total[bad$r == "a" & bad$c == "Total"] + 5
  # a total that no longer adds up is refused before any program is solved
  expect_error(audit_table(bad, bad$r == "a" & bad$c != "Total", attacker = "outsider"),
               class = "sdcRisk_error_not_additive")
  expect_error(cell_sensitivity(d, c("r", "c"), "v", rule_frequency(3), hierarchy = list(r = c(a = "g"))),
               class = "sdcRisk_error_hierarchy")
  expect_error(cell_sensitivity(d, c("r", "c"), "v", rule_frequency(3), hierarchy = list(r = c(a = "b", b = "g"))),
               class = "sdcRisk_error_hierarchy")
  expect_snapshot(error = TRUE, {
    audit_table(sens, TRUE)
    protect_table(sens, lower = sens$total, upper = sens$total)
    cell_sensitivity(d, c("r", "c"), "v", rule_frequency(3), hierarchy = list(r = c(a = "g")))
  })
})

test_that("printing and plotting a protected table", {
  d <- small_firms(4, n = 40)
  sens <- cell_sensitivity(d, c("r", "c"), "v", list(rule_frequency(3), rule_p(20)),
                           contributor = "firm")
  prot <- protect_table(sens, attacker = "outsider")
  out <- format(prot)
  expect_match(out[1], "<sdc_protection> 12 cells of v by r x c")
  expect_match(out[3], "Audit passed")
  expect_match(format(audit_table(sens, sens$sensitive, attacker = "outsider"))[2], "NOT PROTECTED")
  pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_invisible(plot(prot))
})

test_that("summary() counts the shares of the value over interior cells only, margins apart (issue 37)", {
  set.seed(8)
  d <- random_records(300, c(5, 4), 4, 1.5)
  sens <- cell_sensitivity(d, c("a", "b"), "v", list(rule_frequency(3), rule_p(20)))
  prot <- protect_table(sens, attacker = "outsider")
  s <- summary(prot)
  inner <- prot$level == "a:b"
  # the value is the grand total, which the interior cells add up to
  grand <- prot$total[prot$level == "(total)"]
  expect_equal(s$total_value, grand)
  expect_equal(sum(abs(prot$total[inner])), grand)
  expect_equal(s$suppressed_value, sum(prot$total[inner & prot$status != "published"]))
  expect_equal(sum(s$counts$value), grand)
  expect_identical(s$counts$interior, as.vector(table(prot$status[inner])))
  out <- format(s)
  pct <- sprintf("%.2f%%", 100 * s$suppressed_value / grand)
  expect_match(out[grep("^Suppressed:", out)], paste0("(", pct, " of the value)"), fixed = TRUE)
  expect_match(format(prot)[2], paste0("(", pct, " of the value)"), fixed = TRUE)
  expect_true(any(grepl("sum of the 20 interior cells", out, fixed = TRUE)))
})

test_that("a protected table prints within 80 columns and draws its totals without 16 digits (issue 37)", {
  set.seed(2024)
  d <- random_firms(600, 10, 6)
  d$v <- d$v * 1.0731
  rules <- list(freq = rule_frequency(3), dom1 = rule_nk(1, 60), dom2 = rule_nk(2, 90),
                p10 = rule_p(10), pq = rule_pq(10, 50))
  sens <- cell_sensitivity(d, c("a", "b"), "v", rules)
  prot <- protect_table(sens, attacker = "outsider")
  for (out in list(format(prot, n = 50), format(summary(prot)), format(audit_table(sens, sens$sensitive, attacker = "outsider"), n = 50))) {
    expect_true(all(nchar(out) <= 80), info = out[nchar(out) > 80][1])
    expect_false(any(grepl("[0-9]e[-+][0-9]", out)))
  }
  # the published totals drawn: fixed notation, to 6 significant digits of
  # the largest (47,985.4, not 47,985.3669508889)
  set.seed(8)
  d <- random_records(300, c(5, 4), 4, 1.5)
  d$v <- d$v * 1.0731
  d$a <- letters[d$a]
  d$b <- LETTERS[d$b]
  prot <- protect_table(cell_sensitivity(d, c("a", "b"), "v", list(rule_frequency(3), rule_p(20))), attacker = "outsider")
  drawn <- plotted_strings(plot(prot))
  nums <- grep("^-?[0-9][0-9,]*(\\.[0-9]+)?$", drawn, value = TRUE)
  grand <- prot$total[prot$level == "(total)"]
  expect_true(grand >= 1e4 && grand < 1e5)
  expect_true(format(round(grand, 1), big.mark = ",", nsmall = 1) %in% nums)
  expect_true(all(grepl("\\.[0-9]$", nums)))
})

test_that("every pattern protect_table() returns passes a fresh audit, whatever the box", {
  for (seed in 1:6) {
    set.seed(seed)
    d <- random_records(120, c(6, 4, 3), 3, 1.5)
    sens <- cell_sensitivity(d, c("a", "b", "c"), "v", list(rule_frequency(3), rule_p(15)))
    expect_true(any(sens$sensitive))
    for (box in c(4, 30, Inf)) {
      for (cost in c("value", "cells")) {
        info <- paste("seed", seed, "box", box, cost)
        prot <- protect_table(sens, cost = cost, intervals = "none", box = box, attacker = "outsider")
        aud <- audit_table(sens, prot$status != "published", intervals = "sensitive", attacker = "outsider")
        expect_true(attr(aud, "passed"), info = info)
        # every secondary cell names the sensitive cell whose witness chose it
        sec <- prot$reason[prot$status == "secondary"]
        named <- sub("^protects ", "", sec)
        expect_true(all(startsWith(sec, "protects ")), info = info)
        expect_true(all(named %in% sdcRisk:::cell_labels(sens)[sens$sensitive]), info = info)
      }
    }
  }
})

test_that("a larger box never needs the whole table and finds cheaper patterns on the whole", {
  set.seed(21)
  d <- random_records(600, c(12, 8, 5), 4, 1.8)
  sens <- cell_sensitivity(d, c("a", "b", "c"), "v", rule_p(10))
  small <- protect_table(sens, box = 8, intervals = "none", attacker = "outsider")
  whole <- protect_table(sens, box = Inf, intervals = "none", attacker = "outsider")
  expect_true(attr(audit_table(sens, small$status != "published", intervals = "none", attacker = "outsider"), "passed"))
  expect_true(attr(audit_table(sens, whole$status != "published", intervals = "none", attacker = "outsider"), "passed"))
  expect_lte(lost(whole), lost(small))
})

test_that("the search box holds the cell, its ancestors and siblings, within its budget", {
  set.seed(5)
  n <- 300
  d <- data.frame(ind = sample(c("A1", "A2", "A3", "B1", "B2", "B3"), n, TRUE),
                  area = sample(c("x", "y", "z", "u"), n, TRUE),
                  v = round(rlnorm(n, 4, 1.5)))
  hier <- list(ind = c(A1 = "A", A2 = "A", A3 = "A", B1 = "B", B2 = "B", B3 = "B"))
  s <- cell_sensitivity(d, c("ind", "area"), "v", rule_p(10), hierarchy = hier)
  prep <- sdcRisk:::table_problem(s, NULL, NULL, 10)
  search <- sdcRisk:::new_protection_search(prep, sdcRisk:::suppression_cost(prep$value, "value"),
                                           sdcRisk:::cell_labels(s), 2000)
  i <- which(s$ind == "A2" & s$area == "y")
  lab <- function(cells) paste(s$ind[cells], s$area[cells])
  whole <- sdcRisk:::search_box(search, i, 1, Inf)
  expect_true(whole$whole)
  expect_setequal(whole$cells, seq_len(nrow(s)))
  # the smallest box: one other category at each level
  tiny <- sdcRisk:::search_box(search, i, 1, 4)
  expect_false(tiny$whole)
  got <- lab(tiny$cells)
  expect_true(all(c("A2 y", "A y", "Total y", "A2 Total", "A Total", "Total Total") %in% got))
  cats <- unique(as.character(s$ind[tiny$cells]))
  # ancestors A and Total, one sibling of A2 and one of A (B), B's child
  expect_equal(length(cats), 6)
  expect_true("B" %in% cats)
  expect_true(any(c("B1", "B2", "B3") %in% cats))
  expect_true(any(c("A1", "A3") %in% cats))
  # a margin cell's box reaches down to the finest level
  m <- which(s$ind == "Total" & s$area == "Total")
  got <- lab(sdcRisk:::search_box(search, m, 1, 4)$cells)
  expect_true(any(grepl("^(A|B)[123] ", got)))
  # the budget holds, unless the smallest box is larger
  for (b in c(10, 40, 100)) {
    expect_lte(length(sdcRisk:::search_box(search, i, 1, b)$cells), max(b, length(tiny$cells)))
  }
})

# The search box as R computed it before the core did (the reference of
# the test below), with its lookup of cells by their codes.
reference_box <- function(search, i, t, budget) {
  st <- search$prep$structure
  codes <- st$codes
  nd <- ncol(codes)
  nl <- vapply(st$parents, length, integer(1))
  mult <- cumprod(c(1, nl[-length(nl)]))
  keys <- as.vector((codes - 1) %*% mult)
  search$cell_at <- function(m) match(as.vector((m - 1) %*% mult), keys, nomatch = 0L)
  search$children <- lapply(st$parents, function(p) {
    split(which(!is.na(p)), factor(p[!is.na(p)], levels = seq_along(p)))
  })
  k <- max(1L, floor(budget^(1 / nd)))
  categories <- function(d, k) {
    parent <- search$prep$structure$parents[[d]]
    children <- search$children[[d]]
    c0 <- codes[i, d]
    whole <- TRUE
    pick <- function(cand) {
      if (length(cand) <= k) return(cand)
      whole <<- FALSE
      m <- matrix(codes[i, ], length(cand), ncol(codes), byrow = TRUE)
      m[, d] <- cand
      j <- search$cell_at(m)
      score <- rep(Inf, length(cand))
      ok <- j > 0
      jj <- j[ok]
      score[ok] <- ifelse(search$supp[jj], 0, search$w[jj]) +
        ifelse(pmax(search$cap_up[jj], search$cap_dn[jj]) >= t, 0, search$w_max)
      cand[order(score, cand)][seq_len(k)]
    }
    out <- c0
    u <- c0
    while (!is.na(parent[u])) {
      p <- parent[u]
      out <- c(out, p, pick(setdiff(children[[p]], u)))
      u <- p
    }
    down <- unique(c(c0, setdiff(out, unlist(lapply(out, function(u) parent[u])))))
    while (length(down)) {
      u <- down[1]
      down <- down[-1]
      ch <- children[[u]]
      if (!length(ch)) next
      add <- setdiff(pick(ch), out)
      out <- c(out, add)
      down <- c(down, add)
    }
    structure(unique(out), whole = whole)
  }
  repeat {
    sets <- lapply(seq_len(nd), function(d) categories(d, k))
    size <- prod(lengths(sets))
    if (size <= budget || k == 1L) break
    k <- max(1L, floor(k * min(0.9, (budget / size)^(1 / nd))))
  }
  grid <- as.matrix(expand.grid(lapply(sets, as.vector), KEEP.OUT.ATTRS = FALSE))
  cells <- search$cell_at(grid)
  list(cells = cells[cells > 0], whole = all(vapply(sets, attr, logical(1), "whole")))
}

# The search state's lookup of cells by their codes switched to the sorted
# keys that tables too large for a dense lookup get.
use_sorted_keys <- function(search) {
  bi <- search$box_index
  keys <- as.vector((search$prep$structure$codes - 1) %*% bi$mult)
  search$box_index$keys <- keys[order(keys)]
  search$box_index$key_cell <- order(keys)
  search$box_index$dense <- integer()
  invisible(search)
}

test_that("search boxes are those of the R code they replaced, cell for cell", {
  for (seed in 1:4) {
    h <- hier_search(seed)
    search <- h$search
    sens <- h$sens
    # (seeds 3 and 4: the lookup of sorted keys)
    if (seed > 2) use_sorted_keys(search)
    for (i in sample(nrow(sens), 40)) {
      for (budget in c(8, 60, 400, 3000)) {
        t <- sample(c(1, 100, 1e4), 1)
        ref <- reference_box(search, i, t, budget)
        # (a fresh cache of whole boxes: the reference keeps none)
        rm(list = ls(search$whole_boxes), envir = search$whole_boxes)
        got <- sdcRisk:::search_box(search, i, t, budget)
        expect_identical(got$cells, ref$cells, info = paste(seed, i, budget))
        expect_identical(got$whole, ref$whole, info = paste(seed, i, budget))
      }
    }
  }
})

test_that("a box without a witness gets exactly the cells that break its certificate of infeasibility", {
  ns <- asNamespace("sdcRisk")
  seen <- c(feasible = 0, proved = 0)
  for (seed in 1:4) {
    # (with upper bounds, some deviations need more than the whole table has)
    h <- hier_search(seed, upper = if (seed > 2) 1.05)
    search <- h$search
    prep <- h$prep
    n <- prep$structure$ncell
    for (i in sample(n, 40)) {
      dir <- sample(c(1, -1), 1)
      # a deviation of up to the whole value: often more than a small box holds
      t <- max(1, runif(1, 0.05, 1) * abs(prep$value[i]))
      cells <- ns$search_box(search, i, t, 8)$cells
      # (the whole table's program first: ray_cells() reads the last one)
      whole <- ns$deviation_lp(search, i, seq_len(n), t, dir, symmetric = FALSE)
      y <- ns$deviation_lp(search, i, cells, t, dir, symmetric = FALSE)
      rounds <- 0
      # the cells of the certificates, one round after another (no product)
      while (is.null(y)) {
        more <- ns$ray_cells(search, cells, dir)
        if (!length(more)) break
        expect_false(any(more %in% cells))
        # every cell added lies in a relation of the program
        st <- prep$structure
        rels <- unique(st$rel[unlist(st$cell_trips[cells])])
        expect_true(all(vapply(more, function(j) any(st$rel[st$cell_trips[[j]]] %in% rels), logical(1))))
        cells <- c(cells, more)
        y <- ns$deviation_lp(search, i, cells, t, dir, symmetric = FALSE)
        rounds <- rounds + 1
        expect_lte(rounds, n)
      }
      info <- paste(seed, i, dir, t)
      if (rounds == 0 && !is.null(y)) next
      if (is.null(y)) {
        # no cell breaks the certificate: then no table at all (brute force
        # over the whole table's program) moves the cell that far
        expect_null(whole, info = info)
        seen[["proved"]] <- seen[["proved"]] + 1
      } else {
        # the rounds found a witness: the whole table has one, and it is a table
        expect_false(is.null(whole), info = info)
        expect_true(ns$witness_ok(search, y$cells, y$y), info = info)
        expect_true(i %in% y$cells, info = info)
        seen[["feasible"]] <- seen[["feasible"]] + 1
      }
    }
  }
  # both outcomes were met
  expect_gt(seen[["feasible"]], 5)
  expect_gt(seen[["proved"]], 5)
})

test_that("a box enlarged by the certificate's cells is the product of its categories and theirs", {
  ns <- asNamespace("sdcRisk")
  for (seed in 4:5) {
    h <- hier_search(seed)
    search <- h$search
    codes <- h$prep$structure$codes
    parent <- search$box_index$parent
    # (seed 5: the lookup of sorted keys)
    if (seed == 5) use_sorted_keys(search)
    for (k in 1:20) {
      i <- sample(nrow(codes), 1)
      cells <- ns$search_box(search, i, 1, sample(c(8, 60), 1))$cells
      more <- sample(setdiff(seq_len(nrow(codes)), cells), sample(1:3, 1))
      got <- ns$ray_box(search, cells, more)
      expect_identical(got[seq_along(cells)], cells)
      expect_false(anyDuplicated(got) > 0)
      # the categories of the box and of the cells added, with their ancestors
      sets <- lapply(seq_len(ncol(codes)), function(d) {
        s <- unique(codes[c(cells, more), d])
        repeat {
          up <- setdiff(parent[[d]][s], c(0, s))
          if (!length(up)) break
          s <- c(s, up)
        }
        s
      })
      inside <- Reduce(`&`, lapply(seq_len(ncol(codes)), function(d) codes[, d] %in% sets[[d]]))
      expect_setequal(got, which(inside))
    }
  }
})

test_that("a small cell beside margins of billions is protected, not refused (its witness keeps its small moves)", {
  d <- data.frame(a = rep(c("a1", "a1", "a2", "a2", "a3", "a3", "a1", "a2", "a3"), 3),
                  b = rep(c("b1", "b2", "b1", "b2", "b1", "b2", "b3", "b3", "b3"), 3),
                  v = c(1e9, 3e8, 5e8, 0, 7e8, 4e8, 6e8, 9e8, 8e8) * rep(c(1, 1, 1.1), each = 9))
  d <- rbind(d, data.frame(a = "a2", b = "b2", v = 2))
  sens <- cell_sensitivity(d, c("a", "b"), "v", rule_p(10))
  i <- which(sens$a == "a2" & sens$b == "b2")
  expect_equal(sens$total[i], 2)
  expect_equal(which(sens$sensitive), i)
  for (attacker in c("outsider", "respondents")) {
    # (the protection level is 0.2; the margins above the cell exceed 10^9)
    prot <- protect_table(sens, attacker = attacker)
    expect_true(prot$status[i] == "primary")
    expect_true(attr(audit_table(sens, prot$status != "published", intervals = "sensitive",
                                 attacker = attacker), "passed"), info = attacker)
  }
  # the print shows the cell's total as it is, not as a solver's rounding
  out <- capture.output(print(prot))
  expect_true(any(grepl("^ *a2 +b2 +(a:b +)?2 +primary", out)))
})

test_that("a witness must add up and keep the bounds before it counts", {
  d <- data.frame(k = c("a", "a", "b", "b", "b"), v = c(1, 2, 3, 4, 5))
  sens <- cell_sensitivity(d, "k", "v", rule_frequency(3))
  prep <- sdcRisk:::table_problem(sens, NULL, NULL, 10)
  search <- sdcRisk:::new_protection_search(prep, sdcRisk:::suppression_cost(prep$value, "value"),
                                           sdcRisk:::cell_labels(sens), 2000)
  a <- which(sens$k == "a")
  b <- which(sens$k == "b")
  tot <- which(sens$k == "Total")
  expect_true(sdcRisk:::witness_ok(search, c(a, b), c(1, -1)))
  expect_true(sdcRisk:::witness_ok(search, c(a, tot), c(2, 2)))
  # does not add up
  expect_false(sdcRisk:::witness_ok(search, c(a, b), c(1, -0.5)))
  # leaves the bounds: a is 3 and cannot go below 0
  expect_false(sdcRisk:::witness_ok(search, c(a, b), c(-4, 4)))
})

test_that("negative contributions and known bounds are respected", {
  set.seed(8)
  d <- data.frame(a = sample(5, 150, TRUE), b = sample(4, 150, TRUE),
                  v = round(rnorm(150, 20, 40)))
  sens <- cell_sensitivity(d, c("a", "b"), "v", list(rule_frequency(4), rule_p(20)),
                           negative = "abs")
  expect_true(any(sens$total < 0))
  prot <- protect_table(sens, attacker = "outsider")
  aud <- audit_table(sens, prot$status != "published", attacker = "outsider")
  expect_true(attr(aud, "passed"))
  # the intervals may reach below zero when contributions may be negative
  expect_true(any(prot$lower < 0, na.rm = TRUE))
  # known upper bounds close the intervals; the pattern still passes
  up <- abs(sens$total) * 3 + 50
  lo <- -up
  prot2 <- protect_table(sens, lower = lo, upper = up, attacker = "outsider")
  expect_true(all(prot2$upper <= up + 1e-6, na.rm = TRUE))
  expect_true(all(prot2$lower >= lo - 1e-6, na.rm = TRUE))
  expect_true(attr(audit_table(sens, prot2$status != "published", lower = lo, upper = up, attacker = "outsider"), "passed"))
})

test_that("method = \"optimal\" refuses large tables and checks its arguments", {
  set.seed(2)
  d <- random_records(30000, c(30, 20, 20), 3, 2)
  sens <- cell_sensitivity(d, c("a", "b", "c"), "v", rule_p(15))
  expect_gt(nrow(sens), 10000)
  expect_error(protect_table(sens, method = "optimal", attacker = "outsider"), class = "sdcRisk_error_argument")
  expect_error(protect_table(sens, time_limit = 0, attacker = "outsider"), class = "sdcRisk_error_argument")
  expect_error(protect_table(sens, method = "best", attacker = "outsider"), class = "sdcRisk_error_argument")
  expect_error(protect_table(sens, cleanup = "yes", attacker = "outsider"), class = "sdcRisk_error_argument")
  expect_error(protect_table(sens, cleanup = NA, attacker = "outsider"), class = "sdcRisk_error_argument")
})

test_that("cleanup = \"auto\" cleans tables of at most 3,500 cells and leaves larger ones to the heuristic", {
  expect_true(sdcRisk:::check_cleanup("auto", 3500))
  expect_false(sdcRisk:::check_cleanup("auto", 3501))
  expect_false(sdcRisk:::check_cleanup(FALSE, 10))
  expect_true(sdcRisk:::check_cleanup(TRUE, 1e6))
  d <- small_firms(5, n = 40)
  sens <- cell_sensitivity(d, c("r", "c"), "v", rule_p(20), contributor = "firm")
  expect_identical(protect_table(sens, attacker = "outsider")$status, protect_table(sens, cleanup = TRUE, attacker = "outsider")$status)
})

test_that("progress bars show only when R is interactive, and leave the result unchanged", {
  skip_if_not_installed("callr")
  # in a child process whose cli redraws every millisecond (CLI_TICK_TIME),
  # so that bars of a small table show at all
  res <- in_child(function() {
    set.seed(3)
    firms <- data.frame(firm = 1:80, sector = sample(c("a", "b", "c", "d"), 80, TRUE),
                        area = sample(c("x", "y", "z"), 80, TRUE), sales = round(rlnorm(80, 5, 1.5)))
    sens <- cell_sensitivity(firms, c("sector", "area"), "sales",
                             rules = list(rule_frequency(3), rule_p(15)), contributor = "firm")
    msgs <- function(expr) {
      out <- character()
      value <- withCallingHandlers(expr, message = function(m) {
        out <<- c(out, conditionMessage(m))
        invokeRestart("muffleMessage")
      })
      list(value = value, messages = out)
    }
    options(cli.progress_show_after = 0)
    quiet <- msgs(protect_table(sens, attacker = "outsider"))
    quiet_audit <- msgs(audit_table(sens, quiet$value$status != "published", attacker = "outsider"))
    rlang::local_interactive(TRUE)
    shown <- msgs(protect_table(sens, attacker = "outsider"))
    shown_audit <- msgs(audit_table(sens, quiet$value$status != "published", attacker = "outsider"))
    list(quiet = quiet$messages, quiet_audit = quiet_audit$messages, shown = shown$messages,
         shown_audit = shown_audit$messages,
         same = identical(quiet$value$status, shown$value$status) &&
           identical(quiet$value$lower, shown$value$lower))
  }, env = c(callr::rcmd_safe_env(), CLI_TICK_TIME = "1"))
  # tests and scripts (not interactive): silent
  expect_identical(res$quiet, character())
  expect_identical(res$quiet_audit, character())
  expect_true(any(grepl("Protecting the sensitive cells", res$shown)))
  expect_true(any(grepl("Auditing the suppressed cells", res$shown)))
  expect_true(any(grepl("Auditing the suppressed cells", res$shown_audit)))
  expect_true(res$same)
})

test_that("env_set() assigns in place, values computed from the vector itself included", {
  e <- new.env()
  e$x <- c(1, 2, 3)
  env_set(e, "x", 2:3, e$x[2:3] * 10)
  expect_identical(e$x, c(1, 20, 30))
  env_set(e, "x", integer(), numeric())
  expect_identical(e$x, c(1, 20, 30))
  e$l <- list()
  env_set(e, "l", 1L, list("a"))
  expect_identical(e$l, list("a"))
})

test_that("a witness program solved in a kept model equals the program built on its own", {
  ns <- asNamespace("sdcRisk")
  checked <- 0
  # (from HiGHS' slack basis, the default, and from the last optimum)
  for (warm in c(FALSE, TRUE)) for (seed in 1:4) {
    withr::local_options(sdcRisk.deviation_warm = warm)
    set.seed(seed)
    d <- skewed_firms(300, 10, 5)
    sens <- cell_sensitivity(d, c("a", "b", "c"), "v", rule_p(10))
    prep <- ns$table_problem(sens, NULL, NULL, 10, arg = "x")
    st <- prep$structure
    search <- ns$new_protection_search(prep, ns$suppression_cost(prep$value, "value"),
                                       ns$cell_labels(sens), 2000)
    search$supp[sample(st$ncell, 20)] <- TRUE
    # programs in one model: the whole table first, then boxes within it
    # (reused when at least half as large) and boxes of their own
    for (k in 1:30) {
      cells <- if (k == 1) seq_len(st$ncell) else sort(sample(st$ncell, sample(c(20, st$ncell %/% 2, st$ncell - 3), 1)))
      i <- cells[sample(length(cells), 1)]
      t <- max(1, prep$level[i], 0.5 * abs(prep$value[i]))
      up <- search$cap_up[cells]
      dn <- search$cap_dn[cells]
      m <- length(cells)
      obj <- c(search$w[cells] / pmax(pmin(up, t), 1e-9), search$w[cells] / pmax(pmin(dn, t), 1e-9))
      obj[c(search$supp[cells], search$supp[cells])] <- 1e-6
      ii <- match(i, cells)
      lb <- numeric(2 * m)
      ub <- c(up, dn)
      lb[ii] <- ub[ii] <- t
      ub[m + ii] <- 0
      kept <- ns$deviation_solve(search, cells, obj, lb, ub)
      own <- ns$deviation_cold(st, cells, obj, lb, ub)
      info <- paste(warm, seed, k)
      expect_identical(is.null(kept), is.null(own), info = info)
      if (!is.null(own)) {
        expect_equal(sum(obj * kept), sum(obj * own), tolerance = 1e-7, info = info)
        # the kept model's table keeps every relation and bound
        y <- kept[seq_len(m)] - kept[m + seq_len(m)]
        expect_true(all(kept >= lb - 1e-7 & kept <= ub + 1e-7), info = info)
        expect_true(ns$witness_ok(search, cells, y), info = info)
        checked <- checked + 1
      }
    }
    # the model kept is the last one built: the whole table's or a box's
    expect_true(length(search$dev_session$scope) >= 20)
  }
  expect_gte(checked, 80)
})
