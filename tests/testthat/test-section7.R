# The procedure of Nayak, Zhang and You (2016), Section 7, on the real ACS
# excerpts: theta = 0.8, m0 = 5, sex kept, age in seven groups, race as
# white / black / other, marital status and PUMA free.
section7_release <- function(d) {
  part <- list(
    SEX = "keep", AGEP = c(0, 18, 25, 35, 45, 55, 65, Inf),
    RAC1P = list(white = "1", black = "2", other = as.character(3:9))
  )
  ifpr(d, c("SEX", "AGEP", "RAC1P", "MSP", "PUMA"), psi(2, 0.8), method = "nayak",
       calibrate = "bound", partition = part, on_infeasible = "merge")
}

test_that("Section 7 on the ACS excerpts: certificate <= xi and Table 3 below the certified bound", {
  for (f in c("ma2019", "national2019")) {
    d <- load_acs(f)
    set.seed(2016)
    rel <- section7_release(d)
    xi <- psi(2, 0.8)
    expect_equal(unique(rel$plan$theta), 0.8, tolerance = 1e-12)
    expect_lte(rel$certificate$risk, xi)
    tab <- release_risk(rel)$table
    # Each empirical mean estimates a mixture of R_j(a, t) <= certified
    # maximum: it may exceed it only by sampling error (3 standard errors).
    big <- tab$units >= 30 & !is.na(tab$se)
    expect_true(all(tab$mean[big] <= rel$certificate$risk + 3 * tab$se[big]), info = f)
    # and the means for a unique match lie below psi(1, 0.8) and psi(2, 0.8)
    # up to sampling error, as in the paper's Table 3
    m11 <- tab[tab$tau == "1" & tab$tau_star == "1", ]
    m21 <- tab[tab$tau == "2" & tab$tau_star == "1", ]
    expect_lte(m11$mean, psi(1, 0.8) + 3 * m11$se)
    expect_lte(m21$mean, psi(2, 0.8) + 3 * m21$se)
  }
})
