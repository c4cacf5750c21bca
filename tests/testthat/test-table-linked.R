# Linked tables (protect_tables(), audit_tables()) against an independent
# linear program over the union of the tables' relations, written here from
# the records: the cells of a x b and of a x c, the shared ones (a's margin
# and the grand total) identified by hand, every relation of both tables,
# solved by GLPK (Rglpk) where the package uses HiGHS.

linked_data <- function(seed, n = 90) {
  set.seed(seed)
  data.frame(a = sample(c("a1", "a2", "a3"), n, TRUE), b = sample(c("x", "y"), n, TRUE),
             c = sample(c("u", "v", "w"), n, TRUE, prob = c(0.6, 0.3, 0.1)),
             v = round(rlnorm(n, 4, 1.4)))
}

# Every distinct cell of the two tables (label "a|b|c" with "" for a
# variable not in the cell), its total from the records, and the relations
# of both tables as a dense matrix (rows: relations, columns: cells).
union_problem <- function(d) {
  av <- sort(unique(d$a)); bv <- sort(unique(d$b)); cv <- sort(unique(d$c))
  cells <- unique(c(
    apply(expand.grid(a = c(av, ""), b = c(bv, ""), stringsAsFactors = FALSE), 1,
          function(r) paste(r[1], r[2], "", sep = "|")),
    apply(expand.grid(a = c(av, ""), c = c(cv, ""), stringsAsFactors = FALSE), 1,
          function(r) paste(r[1], "", r[2], sep = "|"))))
  parts <- do.call(rbind, strsplit(paste0(cells, "|end"), "|", fixed = TRUE))[, 1:3]
  total <- vapply(seq_along(cells), function(k) {
    keep <- (parts[k, 1] == "" | d$a == parts[k, 1]) & (parts[k, 2] == "" | d$b == parts[k, 2]) &
      (parts[k, 3] == "" | d$c == parts[k, 3])
    sum(d$v[keep])
  }, 0)
  id <- function(a, b, c) match(paste(a, b, c, sep = "|"), cells)
  rows <- list()
  add <- function(parent, children) {
    r <- numeric(length(cells))
    r[parent] <- -1
    r[children] <- 1
    rows[[length(rows) + 1]] <<- r
  }
  for (x in c(av, "")) add(id(x, "", ""), id(x, bv, ""))
  for (y in c(bv, "")) add(id("", y, ""), id(av, y, ""))
  for (x in c(av, "")) add(id(x, "", ""), id(x, "", cv))
  for (z in c(cv, "")) add(id("", "", z), id(av, "", z))
  list(cells = cells, total = total, A = do.call(rbind, rows))
}

# Exact interval of each suppressed cell of the union (non-negative cells).
union_intervals <- function(up, supp) {
  n <- length(up$cells)
  lo <- ifelse(supp, 0, up$total)
  hi <- ifelse(supp, Inf, up$total)
  res <- t(vapply(which(supp), function(k) {
    obj <- numeric(n)
    obj[k] <- 1
    b <- list(lower = list(ind = 1:n, val = lo), upper = list(ind = 1:n, val = hi))
    ext <- vapply(c(FALSE, TRUE), function(mx) {
      r <- Rglpk::Rglpk_solve_LP(obj, up$A, rep("==", nrow(up$A)), numeric(nrow(up$A)), bounds = b,
                                 max = mx)
      if (r$status != 0) Inf else r$optimum
    }, 0)
    ext
  }, numeric(2)))
  data.frame(cell = up$cells[supp], lower = res[, 1], upper = res[, 2])
}

# The union label of every row of a table made by cell_sensitivity() on a x
# b or a x c.
union_label <- function(x) {
  lab <- function(v) if (is.null(x[[v]])) "" else ifelse(as.character(x[[v]]) == "Total", "", as.character(x[[v]]))
  paste(lab("a"), lab("b"), lab("c"), sep = "|")
}

test_that("audit_tables() intervals equal an independent program over the union of relations", {
  skip_if_not_installed("Rglpk")
  for (seed in 1:6) {
    d <- linked_data(seed)
    t1 <- cell_sensitivity(d, c("a", "b"), "v", rule_p(15))
    t2 <- cell_sensitivity(d, c("a", "c"), "v", rule_p(15))
    up <- union_problem(d)
    set.seed(50 + seed)
    # a random pattern per table, the shared cells suppressed in both
    pick <- sample(up$cells, 6)
    p1 <- union_label(t1) %in% pick
    p2 <- union_label(t2) %in% pick
    aud <- audit_tables(list(t1, t2), list(p1, p2), attacker = "outsider")
    ref <- union_intervals(up, up$cells %in% pick & up$cells %in% c(union_label(t1)[p1], union_label(t2)[p2]))
    for (k in 1:2) {
      a <- aud[[k]]
      got <- a[a$suppressed, ]
      m <- match(union_label(got), ref$cell)
      expect_false(anyNA(m))
      expect_equal(got$lower, ref$lower[m], tolerance = 1e-7, info = paste("seed", seed, "table", k))
      expect_equal(got$upper, ref$upper[m], tolerance = 1e-7, info = paste("seed", seed, "table", k))
    }
  }
})

test_that("protect_tables() patterns pass the independent audit of the union", {
  skip_if_not_installed("Rglpk")
  for (seed in 1:8) {
    d <- linked_data(seed, n = 120)
    t1 <- cell_sensitivity(d, c("a", "b"), "v", list(rule_frequency(3), rule_p(20)))
    t2 <- cell_sensitivity(d, c("a", "c"), "v", list(rule_frequency(3), rule_p(20)))
    if (!any(t1$sensitive) && !any(t2$sensitive)) next
    prot <- protect_tables(list(t1, t2), attacker = "outsider")
    expect_s3_class(prot, "sdc_protection_set")
    up <- union_problem(d)
    supp_lab <- unique(c(union_label(t1)[prot[[1]]$status != "published"],
                         union_label(t2)[prot[[2]]$status != "published"]))
    # every shared cell has one status
    shared <- intersect(union_label(t1), union_label(t2))
    s1 <- prot[[1]]$status[match(shared, union_label(t1))]
    s2 <- prot[[2]]$status[match(shared, union_label(t2))]
    expect_identical(as.character(s1), as.character(s2))
    ref <- union_intervals(up, up$cells %in% supp_lab)
    for (k in 1:2) {
      x <- list(t1, t2)[[k]]
      sens <- x$sensitive
      lev <- ifelse(sens, pmax(x$S_p20 %||% 0, 0), 0)
      lev[x$sensitive_freq3] <- pmax(lev[x$sensitive_freq3], 0.1 * x$total[x$sensitive_freq3])
      m <- match(union_label(x)[sens], ref$cell)
      expect_false(anyNA(m), info = paste("seed", seed))
      v <- x$total[sens]
      ok <- ref$upper[m] >= v + lev[sens] - 1e-6 & ref$lower[m] <= pmax(v - lev[sens], 0) + 1e-6 &
        ref$upper[m] - ref$lower[m] > 1e-6
      expect_true(all(ok), info = paste("seed", seed, "table", k))
    }
  }
})

test_that("linked tables protected one at a time can be attacked together; protect_tables() is not", {
  # a x b with an empty cell (a2, y): protecting the sensitive (a1, x) in a x
  # b alone suppresses the margins of a, which the table of a alone
  # publishes; together they give (a2, x) = a2 and (a1, x) = x - (a2, x)
  d <- data.frame(a = c("a1", "a1", "a1", "a1", "a1", "a2", "a2", "a2"),
                  b = c("x", "x", "y", "y", "y", "x", "x", "x"),
                  v = c(100, 1, 50, 60, 70, 40, 45, 50))
  t1 <- cell_sensitivity(d, c("a", "b"), "v", rule_p(15))
  t2 <- cell_sensitivity(d, "a", "v", rule_p(15))
  expect_identical(sum(t1$sensitive), 1L)
  expect_false(any(t2$sensitive))
  p1 <- protect_table(t1, attacker = "outsider")
  expect_true(attr(audit_table(t1, p1$status != "published", attacker = "outsider"), "passed"))
  joint <- audit_tables(list(t1, t2), list(p1$status != "published", t2$sensitive), attacker = "outsider")
  expect_false(attr(joint, "passed"))
  a1x <- joint[[1]][joint[[1]]$a == "a1" & joint[[1]]$b == "x", ]
  expect_equal(c(a1x$lower, a1x$upper), c(101, 101))
  prot <- protect_tables(list(t1, t2), attacker = "outsider")
  again <- audit_tables(list(t1, t2), lapply(prot, function(p) p$status != "published"), attacker = "outsider")
  expect_true(attr(again, "passed"))
  # the margins of a are suppressed in both tables
  expect_true(all(prot[[2]]$status[prot[[2]]$a != "Total"] == "secondary"))
})

test_that("linked tables that disagree, or are not tables, give classed errors", {
  d <- linked_data(1)
  t1 <- cell_sensitivity(d, c("a", "b"), "v", rule_p(15))
  d2 <- d
  d2$v[1] <- d2$v[1] + 100
  t2 <- cell_sensitivity(d2, c("a", "c"), "v", rule_p(15))
  expect_error(protect_tables(list(t1, t2), attacker = "outsider"), class = "sdcRisk_error_linked_mismatch")
  expect_error(audit_tables(list(t1, t2), list(t1$sensitive, t2$sensitive), attacker = "outsider"),
               class = "sdcRisk_error_linked_mismatch")
  d$w <- d$v * 2
  t3 <- cell_sensitivity(d, c("a", "c"), "w", rule_p(15))
  expect_error(protect_tables(list(t1, t3), attacker = "outsider"), class = "sdcRisk_error_linked_mismatch")
  expect_error(protect_tables(t1, attacker = "outsider"), class = "sdcRisk_error_not_sensitivity")
  expect_error(protect_tables(list(t1, "x"), attacker = "outsider"), class = "sdcRisk_error_not_sensitivity")
  expect_error(audit_tables(list(t1), list(), attacker = "outsider"), class = "sdcRisk_error_pattern")
  t4 <- t1[-2, ]
  expect_error(protect_tables(list(t4, t1), attacker = "outsider"), class = "sdcRisk_error_invalid_object")
})

test_that("linked results print", {
  local_edition(3)
  d <- linked_data(3, n = 60)
  t1 <- cell_sensitivity(d, c("a", "b"), "v", rule_p(15))
  t2 <- cell_sensitivity(d, c("a", "c"), "v", rule_p(15))
  prot <- protect_tables(list(region = t1, size = t2), intervals = "none", attacker = "outsider")
  out <- format(prot)
  expect_match(out[1], "2 linked tables protected together")
  expect_true(any(out == "$region"))
  aud <- audit_tables(list(t1, t2), list(t1$sensitive, t2$sensitive), attacker = "outsider")
  expect_match(format(aud)[1], "2 linked tables audited together")
})

test_that("the optimal method against the respondents of linked tables: safe, proved, no dearer than the default", {
  checked <- 0
  for (seed in 1:4) {
    d <- linked_data(seed, n = 60)
    t1 <- cell_sensitivity(d, c("a", "b"), "v", list(rule_frequency(3), rule_p(20)))
    t2 <- cell_sensitivity(d, c("a", "c"), "v", list(rule_frequency(3), rule_p(20)))
    if (!any(t1$sensitive) && !any(t2$sensitive)) next
    heur <- tryCatch(protect_tables(list(t1, t2)), sdcRisk_error_unprotectable = function(e) NULL)
    if (is.null(heur)) next
    opt <- protect_tables(list(t1, t2), method = "optimal")
    info <- paste("seed", seed)
    expect_true(attr(opt, "stats")$optimal, info = info)
    # the value of the distinct suppressed cells (a's margin and the grand
    # total, c = "Total" in the second table, are the first table's cells)
    cost <- function(p) sum(abs(p[[1]]$total[p[[1]]$status != "published"])) +
      sum(abs(p[[2]]$total[p[[2]]$status != "published" & p[[2]]$c != "Total"]))
    expect_lte(cost(opt), cost(heur) * (1 + 1e-9), label = info)
    aud <- audit_tables(list(t1, t2), list(opt[[1]]$status != "published", opt[[2]]$status != "published"))
    expect_true(attr(aud, "passed"), info = info)
    checked <- checked + 1
  }
  expect_gte(checked, 2)
})
