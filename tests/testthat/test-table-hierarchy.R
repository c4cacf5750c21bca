# Hierarchies of classification variables (R/table-hierarchy.R) as
# cell_sensitivity() builds the table's margins from them, and audit_table()
# and protect_table() read them: sums computed by hand at every level,
# intervals against one program per end over the whole table.

# Every margin of a table with a 3-level hierarchy on `a`, by hand: the sum
# of the records of its group at its level.
hand_totals <- function(d, h, b_levels) {
  out <- list()
  a_of <- list(a = d$a, g = h$g[match(d$a, h$a)], s = h$s[match(d$a, h$a)], "(total)" = rep("Total", nrow(d)))
  for (lev in names(a_of)) {
    for (bb in c(b_levels, "Total")) {
      keep <- if (bb == "Total") rep(TRUE, nrow(d)) else d$b == bb
      s <- tapply(d$v[keep], a_of[[lev]][keep], sum)
      out[[length(out) + 1]] <- data.frame(a = names(s), b = bb, total = as.numeric(s))
    }
  }
  do.call(rbind, out)
}

test_that("a 3-level hierarchy gives every margin at every level its sum (by hand)", {
  for (seed in 1:4) {
    set.seed(seed)
    d <- data.frame(a = sample(sprintf("a%d", 1:6), 80, TRUE), b = sample(c("x", "y", "z"), 80, TRUE),
                    v = round(rlnorm(80, 3, 1)))
    h <- data.frame(a = sprintf("a%d", 1:6), g = c("G1", "G1", "G2", "G2", "G3", "G3"),
                    s = c("S1", "S1", "S1", "S1", "S2", "S2"))
    h <- h[h$a %in% d$a, ]
    sens <- cell_sensitivity(d, c("a", "b"), "v", rule_p(10), hierarchy = list(a = h))
    ref <- hand_totals(d, h, sort(unique(d$b)))
    got <- as.data.frame(sens)
    m <- match(paste(ref$a, ref$b), paste(got$a, got$b))
    expect_false(anyNA(m), info = paste("seed", seed))
    expect_equal(got$total[m], ref$total, info = paste("seed", seed))
    expect_equal(nrow(got), nrow(ref), info = paste("seed", seed))
    # each group's parent is its supergroup, each supergroup's the total
    par <- attr(sens, "options")$hierarchy$a
    expect_equal(unname(par[h$g]), h$s, info = paste("seed", seed))
    expect_equal(unname(par[unique(h$s)]), rep("Total", length(unique(h$s))), info = paste("seed", seed))
  }
})

# Reference: one linear program per end over the whole table (every
# published cell fixed), by highs directly, no components.
whole_table_lp <- function(sens, supp, lower, upper) {
  st <- sdcRisk:::table_structure(sens)
  n <- nrow(sens)
  A <- sdcRisk:::triplet_matrix(st$rel, st$cell, st$coef, st$nrel, n)
  lo <- ifelse(supp, lower, sens$total)
  hi <- ifelse(supp, upper, sens$total)
  one <- function(j, maximize) {
    obj <- numeric(n)
    obj[j] <- 1
    r <- highs::highs_solve(L = obj, lower = lo, upper = hi, A = A, lhs = numeric(st$nrel),
                            rhs = numeric(st$nrel), maximum = maximize)
    r$objective_value
  }
  cells <- which(supp)
  data.frame(cell = cells, lower = vapply(cells, one, 0, maximize = FALSE),
             upper = vapply(cells, one, 0, maximize = TRUE))
}

test_that("audits of a table with two 3-level hierarchies equal whole-table programs", {
  for (seed in 1:3) {
    set.seed(seed)
    n <- 150
    d <- data.frame(a = sample(sprintf("a%d", 1:4), n, TRUE), b = sample(sprintf("b%d", 1:4), n, TRUE),
                    c = sample(c("u", "v"), n, TRUE), v = round(rlnorm(n, 3, 1)))
    ha <- data.frame(a = sprintf("a%d", 1:4), ag = c("A1", "A1", "A2", "A2"), as = "AS")
    hb <- data.frame(b = sprintf("b%d", 1:4), bg = c("B1", "B1", "B1", "B2"), bs = c("BS1", "BS1", "BS1", "BS2"))
    sens <- cell_sensitivity(d, c("a", "b", "c"), "v", rule_p(10), hierarchy = list(a = ha, b = hb))
    supp <- sens$sensitive | runif(nrow(sens)) < 0.3
    bound <- 2 * sum(d$v)
    aud <- audit_table(sens, supp, upper = bound, attacker = "outsider")
    ref <- whole_table_lp(sens, supp, rep(0, nrow(sens)), rep(bound, nrow(sens)))
    got <- aud[aud$suppressed, ]
    expect_equal(got$lower, ref$lower, tolerance = 1e-7, info = paste("seed", seed))
    expect_equal(got$upper, ref$upper, tolerance = 1e-7, info = paste("seed", seed))
    # the pattern protect_table() returns passes its audit
    p <- protect_table(sens, attacker = "outsider")
    expect_true(attr(audit_table(sens, p$status != "published", attacker = "outsider"), "passed"),
                info = paste("seed", seed))
  }
})

test_that("a hierarchy whose codes do not nest is a classed error", {
  set.seed(5)
  d <- data.frame(a = sample(sprintf("a%d", 1:4), 40, TRUE), b = sample(c("x", "y"), 40, TRUE),
                  v = round(rlnorm(40, 3, 1)))
  # group G2 in two supergroups
  h <- data.frame(a = sprintf("a%d", 1:4), g = c("G1", "G1", "G2", "G2"), s = c("S1", "S1", "S1", "S2"))
  expect_error(cell_sensitivity(d, c("a", "b"), "v", rule_p(10), hierarchy = list(a = h)),
               class = "sdcRisk_error_hierarchy")
  # a detailed code in two groups
  h2 <- data.frame(a = c("a1", "a1", "a2", "a3", "a4"), g = c("G1", "G2", "G1", "G2", "G2"), s = "S")
  expect_error(cell_sensitivity(d, c("a", "b"), "v", rule_p(10), hierarchy = list(a = h2)),
               class = "sdcRisk_error_hierarchy")
  # a group label that is also a detailed code
  h3 <- data.frame(a = sprintf("a%d", 1:4), g = c("a1", "a1", "G2", "G2"), s = "S")
  expect_error(cell_sensitivity(d, c("a", "b"), "v", rule_p(10), hierarchy = list(a = h3)),
               class = "sdcRisk_error_hierarchy")
  expect_snapshot(error = TRUE, cell_sensitivity(d, c("a", "b"), "v", rule_p(10), hierarchy = list(a = h)))
})
