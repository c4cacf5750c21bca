# The heuristic by parts of a hierarchy (R/table-suppress-parts.R): which
# cells each part gets, the merge of the parts, the same pattern in one
# process or several, and a certified pattern.

test_that("top_groups() and part_split() find the groups under the total and halve them", {
  # 1 the total; 2, 3 under it; 4, 5 under 2; 6 under 3; 7 under 4
  expect_identical(sdcRisk:::top_groups(c(NA, 1L, 1L, 2L, 2L, 3L, 4L)), c(NA, 2L, 3L, 2L, 2L, 3L, 2L))
  # a flat variable: every category is its own top group
  expect_identical(sdcRisk:::top_groups(c(3L, 3L, NA)), c(1L, 2L, NA))
  expect_identical(sdcRisk:::part_split(c(10, 10), 2L), c(1, 2))
  expect_identical(sdcRisk:::part_split(c(1, 1, 1, 10), 2L), c(1, 1, 1, 2))
  expect_identical(sdcRisk:::part_split(c(5, 1, 1, 5), 2L), c(1, 1, 2, 2))
  # every group in a part, the parts in the groups' order
  for (seed in 1:20) {
    set.seed(seed)
    size <- rpois(sample(2:9, 1), 5)
    p <- sdcRisk:::part_split(size, 2L)
    expect_true(all(p %in% 1:2))
    expect_false(is.unsorted(p))
  }
})

test_that("pattern_parts() splits the sensitive cells by the top groups of a hierarchy", {
  local_package_function("suppress_part_cells", 100)
  for (seed in 1:3) {
    h <- hier_search(seed)
    search <- h$search
    st <- h$prep$structure
    todo <- which(h$prep$sensitive)
    todo <- todo[order(-h$prep$level[todo], todo)]
    # one process: no parts
    expect_null(sdcRisk:::pattern_parts(search, todo, 1L))
    parts <- sdcRisk:::pattern_parts(search, todo, 2L)
    expect_length(parts$parts, 2)
    # every cell once, each part in the order of `todo`
    expect_setequal(c(unlist(parts$parts), parts$last), todo)
    expect_identical(anyDuplicated(c(unlist(parts$parts), parts$last)), 0L)
    for (p in c(parts$parts, list(parts$last))) expect_identical(p, todo[todo %in% p])
    # the variable split: the one whose parts are top groups of its
    # hierarchy that no two parts share, with its total last
    tops <- lapply(seq_along(st$parents), function(j) sdcRisk:::top_groups(st$parents[[j]])[st$codes[, j]])
    split_by <- Filter(function(j) {
      g <- lapply(parts$parts, function(p) unique(tops[[j]][p]))
      !anyNA(unlist(g)) && !length(intersect(g[[1]], g[[2]])) && all(is.na(tops[[j]][parts$last]))
    }, seq_along(tops))
    expect_true(length(split_by) >= 1)
    # (a hierarchy: a's 3 levels or b's 2; never the flat c, whose boxes
    # cross every split)
    expect_true(attr(h$sens, "by")[split_by[1]] %in% c("a", "b"))
    expect_true(all(lengths(parts$parts) > 0))
  }
  # a flat table, or a small one: no parts
  h <- hier_search(1)
  flat <- cell_sensitivity(data.frame(a = sample(letters[1:6], 400, TRUE), b = sample(1:5, 400, TRUE),
                                      v = rlnorm(400, 5, 2)), c("a", "b"), "v", rule_p(10))
  prep <- sdcRisk:::table_problem(flat, NULL, NULL, 10)
  s <- sdcRisk:::new_protection_search(prep, prep$value, sdcRisk:::cell_labels(flat), 2000)
  expect_null(sdcRisk:::pattern_parts(s, which(prep$sensitive), 2L))
  local_package_function("suppress_part_cells", 1e9)
  expect_null(sdcRisk:::pattern_parts(h$search, which(h$prep$sensitive), 2L))
})

test_that("the parts merge into one state, the same in one process as in two", {
  skip_on_os("windows")
  local_package_function("suppress_part_cells", 100)
  for (seed in 1:2) {
    h <- hier_search(seed)
    prep <- h$prep
    todo <- which(prep$sensitive)
    todo <- todo[order(-prep$level[todo], todo)]
    fresh <- function() {
      s <- sdcRisk:::new_protection_search(prep, sdcRisk:::suppression_cost(prep$value, "value"),
                                           sdcRisk:::cell_labels(h$sens), 2000)
      s$reason[prep$sensitive] <- "primary"
      s
    }
    parts <- sdcRisk:::pattern_parts(fresh(), todo, 2L)
    states <- lapply(1:2, function(cores) {
      s <- fresh()
      sdcRisk:::protect_parts(s, parts$parts, cores, call = NULL, tick = function(...) invisible())
      s
    })
    for (nm in c("supp", "reason", "cover_up", "cover_dn", "wit_up", "wit_dn", "wits", "n_lp")) {
      expect_identical(states[[1]][[nm]], states[[2]][[nm]], info = nm)
    }
    s <- states[[1]]
    # each part alone, from the same start: the merged state holds both
    alone <- lapply(parts$parts, function(p) {
      a <- fresh()
      for (i in p) sdcRisk:::protect_cell(a, i, call = NULL)
      a
    })
    expect_identical(s$supp, alone[[1]]$supp | alone[[2]]$supp)
    expect_identical(s$n_lp, alone[[1]]$n_lp + alone[[2]]$n_lp)
    expect_identical(s$wits, c(alone[[1]]$wits, alone[[2]]$wits))
    expect_identical(s$cover_up, pmax(alone[[1]]$cover_up, alone[[2]]$cover_up))
    expect_identical(s$cover_dn, pmax(alone[[1]]$cover_dn, alone[[2]]$cover_dn))
    # every cover is the move of the witness it names, whose cells are all
    # suppressed; every sensitive cell of the parts covered on each side
    for (side in c("up", "dn")) {
      cover <- s[[paste0("cover_", side)]]
      id <- s[[paste0("wit_", side)]]
      sgn <- if (side == "up") 1 else -1
      for (i in which(id != 0)) {
        w <- s$wits[[abs(id[i])]]
        expect_equal(sgn * sign(id[i]) * w$y[w$cells == i], cover[i])
        expect_true(all(s$supp[w$cells]))
      }
    }
    done <- unlist(parts$parts)
    t <- vapply(done, function(i) sdcRisk:::protection_targets(s, i, NULL), numeric(2))
    expect_true(all(s$cover_up[done] >= t["up", ] - prep$tol[done]))
    expect_true(all(s$cover_dn[done] >= t["down", ] - prep$tol[done]))
  }
})

test_that("protect_table() by parts returns a certified pattern, the same for any number of cores", {
  skip_on_os("windows")
  local_package_function("suppress_part_cells", 100)
  for (seed in 1:2) {
    sens <- hier_search(seed, n = 1200)$sens
    # (the parts are the heuristic's: no clean-up or improvement after it)
    prot <- function(cores) protect_table(sens, attacker = "outsider", intervals = "none", cores = cores,
                                          cleanup = FALSE, improve = FALSE)
    p2 <- prot(2)
    p3 <- prot(3)
    expect_identical(p2$status, p3$status)
    expect_identical(attr(p2, "witnesses"), attr(p3, "witnesses"))
    expect_true(all(p2$protected[sens$sensitive]))
    # the certificate, given the protection and from the pattern alone
    expect_true(attr(audit_table(sens, p2, intervals = "none", attacker = "outsider"), "passed"))
    expect_true(attr(audit_table(sens, p2$status != "published", intervals = "none", attacker = "outsider"),
                     "passed"))
  }
  # against the respondents too (their rounds come after the parts)
  sens <- hier_search(3, n = 500)$sens
  p <- protect_table(sens, intervals = "none", cores = 2, cleanup = FALSE, improve = FALSE)
  a <- audit_table(sens, p$status != "published", intervals = "none")
  expect_true(attr(a, "passed"))
})

test_that("an error in a part is raised as it is; a part without a result is a classed error", {
  skip_on_os("windows")
  local_package_function("suppress_part_cells", 100)
  sens <- hier_search(1)$sens
  local_package_function("protect_cell", function(search, i, call) {
    sdcRisk:::abort_sdc("Cell {i} cannot be protected.", "unprotectable", call = call)
  })
  expect_error(protect_table(sens, attacker = "outsider", cores = 2), class = "sdcRisk_error_unprotectable")
  # (the forked part was stopped and collected: no process is left)
  expect_null(parallel::mccollect(wait = FALSE))
  # an error in the forked part only
  me <- Sys.getpid()
  local_package_function("protect_cell", function(search, i, call) {
    if (Sys.getpid() != me) sdcRisk:::abort_sdc("Cell {i} cannot be protected.", "unprotectable", call = call)
  })
  expect_error(protect_table(sens, attacker = "outsider", cores = 2), class = "sdcRisk_error_unprotectable")
  expect_null(parallel::mccollect(wait = FALSE))
  # a process that dies (killed) leaves no part
  # (the first part runs in this process: only the forked one is killed)
  local_package_function("protect_cell", function(search, i, call) {
    if (Sys.getpid() != me) tools::pskill(Sys.getpid(), tools::SIGKILL)
  })
  expect_error(protect_table(sens, attacker = "outsider", cores = 2), class = "sdcRisk_error_worker")
})

test_that("run_forked() runs the first of each batch here, the others forked, in order", {
  skip_on_os("windows")
  me <- Sys.getpid()
  ticks <- 0
  tick <- function(n = 1) ticks <<- ticks + n
  run <- function(k, tick) {
    tick()
    list(k = k, here = Sys.getpid() == me)
  }
  for (cores in 2:3) {
    ticks <- 0
    res <- sdcRisk:::run_forked(c(5L, 7L, 9L), cores, run, tick, size = c(rep(0, 4), 1, 0, 2, 0, 4))
    expect_identical(vapply(res, `[[`, integer(1), "k"), c(5L, 7L, 9L))
    # batches of `cores`: the first of each here
    here <- if (cores == 2) c(TRUE, FALSE, TRUE) else c(TRUE, FALSE, FALSE)
    expect_identical(vapply(res, `[[`, logical(1), "here"), here)
    # the runs here tick themselves, the forked ones by their size
    expect_identical(ticks, sum(here) + sum(c(1, 2, 4)[!here]))
  }
  # an error here stops the forked runs, which are collected: the forked
  # run (which would sleep for minutes) is no longer a process
  pid_file <- withr::local_tempfile()
  slow <- function(k, tick) {
    if (Sys.getpid() != me) {
      writeLines(as.character(Sys.getpid()), pid_file)
      Sys.sleep(600)
    }
    # (here: once the forked run has started)
    while (!file.exists(pid_file) || !length(readLines(pid_file))) Sys.sleep(0.05)
    stop("here")
  }
  expect_error(sdcRisk:::run_forked(1:2, 2L, slow, tick, size = c(1, 1)), "here")
  expect_null(parallel::mccollect(wait = FALSE))
  expect_false(tools::pskill(as.integer(readLines(pid_file)), 0L))
  # a forked error comes back as its try-error, a dead process as NULL
  res <- sdcRisk:::run_forked(1:3, 3L, function(k, tick) {
    if (k == 2) stop("two")
    if (k == 3) tools::pskill(Sys.getpid(), tools::SIGKILL)
    k
  }, tick, size = c(1, 1, 1))
  expect_identical(res[[1]], 1L)
  expect_s3_class(res[[2]], "try-error")
  expect_match(conditionMessage(attr(res[[2]], "condition")), "two")
  expect_null(res[[3]])
})

test_that("protect_cells() hands free memory back every suppress_trim_cells cells", {
  # (glibc: done; elsewhere nothing to do)
  expect_identical(sdcRisk:::cpp_release_free_memory(), R.version$os == "linux-gnu")
  calls <- 0
  local_package_function("cpp_release_free_memory", function() calls <<- calls + 1)
  local_package_function("protect_cell", function(search, i, call) invisible())
  local_package_function("suppress_trim_cells", 3L)
  n <- 0
  sdcRisk:::protect_cells(new.env(), 1:10, call = NULL, tick = function() n <<- n + 1)
  expect_identical(calls, 3)
  expect_identical(n, 10)
})

test_that("run_forked() hands the free memory back before each batch it forks, not before one it runs here", {
  skip_on_os("windows")
  me <- Sys.getpid()
  # (what the batches found at their start: the releases so far)
  released <- 0
  local_package_function("cpp_release_free_memory", function() released <<- released + 1)
  run <- function(k, tick) c(k = k, released = released, here = Sys.getpid() == me)
  # 3 runs on 2 cores: a batch of two (one forked), then one alone
  res <- sdcRisk:::run_forked(1:3, 2L, run, function(n = 1) NULL, size = c(1, 1, 1))
  got <- do.call(rbind, res)
  expect_identical(unname(got[, "k"]), c(1, 2, 3))
  expect_identical(unname(got[, "here"]), c(1, 0, 1))
  # the first batch after one release (seen here and in the forked run),
  # the last one with no more
  expect_identical(unname(got[, "released"]), c(1, 1, 1))
  expect_identical(released, 1)
  # one core: no fork, no release
  released <- 0
  sdcRisk:::run_forked(1:2, 1L, run, function(n = 1) NULL, size = c(1, 1))
  expect_identical(released, 0)
})

test_that("protect_cells() collects R's young garbage every suppress_gc_cells cells on large tables only", {
  collected <- 0
  local_package_function("collect_young_garbage", function() collected <<- collected + 1)
  local_package_function("protect_cell", function(search, i, call) invisible())
  local_package_function("suppress_gc_cells", 4L)
  local_package_function("suppress_gc_min_cells", 50)
  for (n in c(49, 50)) {
    collected <- 0
    search <- new.env()
    search$prep <- list(structure = list(ncell = n))
    sdcRisk:::protect_cells(search, 1:10, call = NULL, tick = function() NULL)
    expect_identical(collected, if (n >= 50) 2 else 0)
  }
})

test_that("cores must be one whole number of at least 1", {
  sens <- hier_search(1)$sens
  for (bad in list(0, -1, 1.5, NA, "2", c(1, 2), NULL, Inf)) {
    expect_error(protect_table(sens, cores = bad), class = "sdcRisk_error_argument")
  }
})
