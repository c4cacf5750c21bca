# Large hierarchical tables (issue 32, goal 3): protect_table() and the
# exact certificate, audit_table() of its pattern, on tables of growing size,
# up to 10^6 cells. The table: 4 classification variables, two of them with
# 3-level hierarchies (detailed categories in groups in supergroups, then the
# total) and two flat, every margin at every level; p% rule, p = 10, records
# as contributors, non-negative values (log-normal), categories of skewed
# sizes so that sensitive cells remain at every level. The sizes (cells with
# margins):
#   1e4: a 12/4/2, b 12/4/2, c 5, d 5           (19 x 19 x 6 x 6  = 12,996)
#   1e5: a 24/6/2, b 24/6/2, c 9, d 9           (33 x 33 x 10 x 10 = 108,900)
#   3e5: a 30/6/2, b 30/6/2, c 14, d 14         (39 x 39 x 15 x 15 = 342,225)
#   1e6: a 40/8/2, b 40/8/2, c 19, d 19         (51 x 51 x 20 x 20 = 1,040,400)
# with 3 records per cell of the full table on average (so that most cells
# are present; absent cells are published zeros).
#   Rscript bench/bench_suppress_large.R   (writes bench/results-suppress-large.md,
#                                            or SDCRISK_BENCH_OUT)
# The certificate is audit_table(intervals = "none") given the protection:
# every sensitive cell's protection decided exactly, from the pattern's own
# witness tables once each is checked, then from witness tables of small
# programs and by programs over its whole set of linked suppressed cells
# where those leave it undecided; on tables of up to SDCRISK_BENCH_PLAIN_MAX
# cells (default 20,000) also given the pattern alone (no witness tables).
# SDCRISK_BENCH_WHAT=pattern stops after the pattern.
# SDCRISK_BENCH_SIZES (default "1e4,1e5,3e5,1e6") selects sizes;
# SDCRISK_BENCH_ATTACKER ("outsider" by default, or "respondents");
# SDCRISK_BENCH_CORES (default 2): protect_table()'s `cores` (the
# heuristic by parts of a hierarchy; CPU seconds include the parts');
# SDCRISK_BENCH_LIMIT (seconds, default 600) stops a step (R's elapsed time
# limit) and the larger sizes after it. Each step runs in a child R process
# (callr-free: system2 on this script with SDCRISK_BENCH_STEP) so that its
# peak memory (VmHWM) is its own and a step past the limit is killed, not
# merely interrupted. sdcRisk is loaded from SDCRISK_BENCH_LIB when set
# (R CMD INSTALL -l it there, as for the other bench scripts), else with
# pkgload from the package root (which needs pkgbuild to compile).
# The machine is shared: CPU seconds of the process beside elapsed ones.

step <- Sys.getenv("SDCRISK_BENCH_STEP", "")
cores <- as.integer(Sys.getenv("SDCRISK_BENCH_CORES", "2"))
sizes_spec <- list(
  "1e4" = list(a = c(12, 4, 2), b = c(12, 4, 2), c = 5, d = 5),
  "1e5" = list(a = c(24, 6, 2), b = c(24, 6, 2), c = 9, d = 9),
  "3e5" = list(a = c(30, 6, 2), b = c(30, 6, 2), c = 14, d = 14),
  "1e6" = list(a = c(40, 8, 2), b = c(40, 8, 2), c = 19, d = 19)
)

# The records of one size: hierarchical codes Axx -> AGx -> ASx (and B),
# flat C, D; category sizes skewed (gamma weights) so that rare cells stay.
make_large <- function(spec, seed = 32) {
  set.seed(seed)
  full <- prod(spec$a[1], spec$b[1], spec$c, spec$d)
  n <- 3 * full
  draw <- function(k) sample(k, n, TRUE, prob = rgamma(k, 1.5))
  a <- draw(spec$a[1])
  b <- draw(spec$b[1])
  grp <- function(x, k, g) (x - 1) %/% (k / g) + 1
  data.frame(
    a = sprintf("A%02d", a), b = sprintf("B%02d", b),
    c = sprintf("C%02d", draw(spec$c)), d = sprintf("D%02d", draw(spec$d)),
    ag = sprintf("AG%d", grp(a, spec$a[1], spec$a[2])), as = sprintf("AS%d", grp(a, spec$a[1], spec$a[3])),
    bg = sprintf("BG%d", grp(b, spec$b[1], spec$b[2])), bs = sprintf("BS%d", grp(b, spec$b[1], spec$b[3])),
    v = round(rlnorm(n, 6, 1.8))
  )
}

# The 3-level hierarchies as data frames (detailed, group, supergroup).
large_hierarchy <- function(d) {
  list(a = unique(d[c("a", "ag", "as")]), b = unique(d[c("b", "bg", "bs")]))
}

rss_mb <- function(field) {
  l <- grep(paste0("^", field, ":"), readLines("/proc/self/status"), value = TRUE)
  as.numeric(gsub("[^0-9]", "", l)) / 1024
}

# One step in this process: prints a tab-separated result line.
run_step <- function(size, what, attacker) {
  lib <- Sys.getenv("SDCRISK_BENCH_LIB", "")
  if (nzchar(lib)) {
    suppressPackageStartupMessages(library(sdcRisk, lib.loc = lib))
  } else {
    suppressMessages(pkgload::load_all(".", quiet = TRUE))
  }
  d <- make_large(sizes_spec[[size]])
  t0 <- proc.time()
  sens <- cell_sensitivity(d, c("a", "b", "c", "d"), "v", rule_p(10), hierarchy = large_hierarchy(d))
  rm(d)
  t_sens <- proc.time() - t0
  info <- sprintf("%d cells, %d sensitive", nrow(sens), sum(sens$sensitive))
  t1 <- proc.time()
  p <- protect_table(sens, intervals = "none", attacker = attacker, cores = cores)
  t_prot <- proc.time() - t1
  supp <- p$status != "published"
  # (with the parts' processes)
  cpu <- function(t) t[["user.self"]] + t[["sys.self"]] + t[["user.child"]] + t[["sys.child"]]
  line <- c(size, info, sum(supp), sprintf("%.1f", cpu(t_sens)), sprintf("%.1f", cpu(t_prot)),
            sprintf("%.1f", t_prot[["elapsed"]]))
  if (what == "both") {
    t2 <- proc.time()
    # the certificate decides every sensitive cell's protection exactly
    # (intervals = "none"); the exact interval of each of hundreds of
    # thousands of suppressed cells is not what certifies the pattern.
    # Given the protection itself, audit_table() checks its witness tables
    # (every relation, bound and suppressed cell) and solves programs only
    # for what they leave open
    a <- audit_table(sens, p, intervals = "none", attacker = attacker)
    t_aud <- proc.time() - t2
    w <- attr(a, "witnesses")
    line <- c(line, sprintf("%.1f", cpu(t_aud)), sprintf("%.1f", t_aud[["elapsed"]]),
              sprintf("%s (%d programs; %d of %d witness tables valid)",
                      if (isTRUE(attr(a, "passed"))) "passes" else "FAILS", attr(a, "n_lp"),
                      w[["valid"]], w[["given"]]))
    # the certificate from the pattern alone, as a tool that only has the
    # pattern would need it, on the sizes up to SDCRISK_BENCH_PLAIN_MAX cells
    if (nrow(sens) <= as.numeric(Sys.getenv("SDCRISK_BENCH_PLAIN_MAX", "20000"))) {
      t3 <- proc.time()
      b <- audit_table(sens, supp, intervals = "none", attacker = attacker)
      t_pl <- proc.time() - t3
      line <- c(line, sprintf("%.1f (%s, %d programs)", cpu(t_pl),
                              if (isTRUE(attr(b, "passed"))) "passes" else "FAILS", attr(b, "n_lp")))
    } else {
      line <- c(line, "not run")
    }
  }
  cat("RESULT\t", paste(c(line, sprintf("%.0f", rss_mb("VmHWM"))), collapse = "\t"), "\n", sep = "")
}

if (nzchar(step)) {
  run_step(step, Sys.getenv("SDCRISK_BENCH_WHAT", "both"), Sys.getenv("SDCRISK_BENCH_ATTACKER", "outsider"))
  quit(save = "no")
}

source(file.path("bench", "utils.R"))
sizes <- strsplit(Sys.getenv("SDCRISK_BENCH_SIZES", "1e4,1e5,3e5,1e6"), ",")[[1]]
attacker <- Sys.getenv("SDCRISK_BENCH_ATTACKER", "outsider")
limit <- as.numeric(Sys.getenv("SDCRISK_BENCH_LIMIT", "600"))
rows <- list()
for (size in sizes) {
  message("size ", size)
  out <- suppressWarnings(system2("timeout", c(limit, file.path(R.home("bin"), "Rscript"), "bench/bench_suppress_large.R"),
                                  stdout = TRUE, stderr = FALSE,
                                  env = c(paste0("SDCRISK_BENCH_STEP=", size), paste0("SDCRISK_BENCH_ATTACKER=", attacker))))
  res <- grep("^RESULT\t", out, value = TRUE)
  if (!length(res)) {
    rows[[size]] <- data.frame(size = size, table = "", suppressed = "", sensitivity_cpu = "", pattern_cpu = "",
                               pattern_elapsed = "", certificate_cpu = "", certificate_elapsed = "",
                               audit = sprintf("not finished in %g s", limit), pattern_alone_cpu = "",
                               peak_mb = "")
    message("  stopped after ", limit, " s")
    break
  }
  f <- strsplit(sub("^RESULT\t", "", res), "\t")[[1]]
  rows[[size]] <- data.frame(size = f[1], table = f[2], suppressed = f[3], sensitivity_cpu = f[4],
                             pattern_cpu = f[5], pattern_elapsed = f[6], certificate_cpu = f[7],
                             certificate_elapsed = f[8], audit = f[9], pattern_alone_cpu = f[10],
                             peak_mb = f[11])
  message("  ", paste(f, collapse = " | "))
}
tab <- do.call(rbind, rows)
header <- c("# Large hierarchical tables: protect_table() and its exact certificate",
            "", machine_line(paste0("sdcRisk ", read.dcf("DESCRIPTION", "Version")[1, 1], ", highs ",
                                     utils::packageVersion("highs"))),
            sprintf("Attacker: %s. Seconds are CPU seconds of the child process (elapsed beside); peak MB is its VmHWM.", attacker),
            "The certificate is audit_table(intervals = \"none\") given the protection: its witness tables checked, programs for what they leave open; pattern_alone_cpu: the same audit given the pattern alone.",
            "")
write_results(tab, header, Sys.getenv("SDCRISK_BENCH_OUT", file.path("bench", "results-suppress-large.md")),
              digits = c())
