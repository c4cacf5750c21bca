# The clean-up pass of protect_table() (cleanup_pattern(),
# R/table-suppress-cleanup.R): repeated passes against a single one.

test_that("repeated clean-up passes never cost more than one, and every pattern passes the audit", {
  ns <- asNamespace("sdcRisk")
  one_pass <- function(sens) {
    # the heuristic and a single clean-up pass, by the package's own steps
    prep <- ns$table_problem(sens, NULL, NULL, 10, arg = "x")
    search <- ns$new_protection_search(prep, ns$suppression_cost(prep$value, "value"),
                                       ns$cell_labels(sens), 2000)
    todo <- which(prep$sensitive)
    todo <- todo[order(-prep$level[todo], todo)]
    for (i in todo) ns$protect_cell(search, i, call = environment())
    ns$cleanup_pattern(search, todo, call = environment())
    search$supp
  }
  checked <- 0
  for (seed in 1:8) {
    set.seed(seed)
    d <- skewed_firms(300, 12, 6)
    by <- if (seed %% 2) c("a", "b") else c("a", "b", "c")
    sens <- cell_sensitivity(d, by, "v", rule_p(10))
    if (!any(sens$sensitive)) next
    w <- abs(sens$total)
    once <- one_pass(sens)
    p <- protect_table(sens, intervals = "none", cleanup = TRUE, attacker = "outsider")
    again <- p$status != "published"
    expect_lte(sum(w[again]), sum(w[once]) + 1e-9, label = paste("seed", seed))
    expect_true(attr(audit_table(sens, again, intervals = "none", attacker = "outsider"), "passed"), info = paste("seed", seed))
    checked <- checked + 1
  }
  expect_gte(checked, 6)
})
