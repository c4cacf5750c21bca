# Shared by bench_vars.R. Source from the package root.
# sdcMicro-style invariant PRAM matrices (Gouweleeuw et al. 1998), in the
# package convention (columns = original category): diagonal pd, the rest
# spread evenly, then made invariant for the frequencies `freq` by
# R = P Ptilde with Ptilde_ij = P_ji f_j / sum_k P_ki f_k (rows = original).
invariant_matrix <- function(freq, pd = 0.8, alpha = 0.5) {
  k <- length(freq)
  if (k == 1) return(matrix(1, 1, 1))
  p <- matrix((1 - pd) / (k - 1), k, k)
  diag(p) <- pd                      # rows = original category
  f <- pmax(as.numeric(freq), 0)
  denom <- as.vector(crossprod(p, f)) # sum_k P_ki f_k
  pt <- t(p * f) / ifelse(denom > 0, denom, 1)
  pt[, denom == 0] <- 0
  # r = p %*% pt with p = (pd - off) I + off 11', in O(k^2) rather than a
  # k^3 product (area has thousands of categories at 10^7 records)
  off <- (1 - pd) / (k - 1)
  r <- (pd - off) * pt + off * matrix(colSums(pt), k, k, byrow = TRUE) # rows = original, invariant
  r[, denom == 0] <- 0
  r <- r / rowSums(r)
  r <- alpha * r + (1 - alpha) * diag(k) # sdcMicro's alpha: still invariant
  t(r)                                # package convention
}

vars_matrices <- function(data, vars, levels, pd = 0.8, alpha = 0.5) {
  out <- lapply(vars, function(v) {
    x <- data[[v]]
    freq <- table(factor(as.character(x), levels = levels[[v]]))
    invariant_matrix(freq, pd, alpha)
  })
  names(out) <- vars
  out
}
