test_that("cell_frequencies counts every combination like table() does", {
  for (seed in 1:20) {
    set.seed(seed)
    n <- sample(1:300, 1)
    df <- data.frame(
      f = factor(sample(c("x", "y", "z"), n, TRUE), levels = c("z", "y", "x", "unused")),
      ch = sample(c("b", "a", "c", "d"), n, TRUE),
      i = sample(c(-3L, 10L, 7L), n, TRUE),
      l = sample(c(TRUE, FALSE), n, TRUE),
      stringsAsFactors = FALSE
    )
    cf <- cell_frequencies(df, c("f", "ch", "i", "l"))
    ref <- as.data.frame(table(df$f, df$ch, df$i, df$l), stringsAsFactors = FALSE)
    ref <- ref[ref$Freq > 0, ]
    # lexicographic order, first key slowest (factor levels in their order)
    ref <- ref[order(match(ref$Var1, levels(df$f)), ref$Var2, as.integer(ref$Var3), ref$Var4 == "TRUE"), ]
    expect_equal(cf$cells$count, ref$Freq, info = paste("seed", seed))
    expect_equal(as.character(cf$cells$f), ref$Var1, info = paste("seed", seed))
    expect_equal(cf$cells$ch, ref$Var2, info = paste("seed", seed))
    expect_identical(cf$cells$i, as.integer(ref$Var3), info = paste("seed", seed))
    # every record points at the cell with its values
    back <- cf$cells[cf$cell_id, c("f", "ch", "i", "l")]
    rownames(back) <- NULL
    expect_identical(back, df[c("f", "ch", "i", "l")], info = paste("seed", seed))
    expect_identical(cf$n_singletons, sum(ref$Freq == 1))
    expect_identical(cf$n_doubletons, sum(ref$Freq == 2))
  }
})

test_that("cell types and factor levels are kept", {
  df <- data.frame(
    f = factor(c("a", "b", "a"), levels = c("b", "a", "c")),
    o = factor(c("lo", "hi", "lo"), levels = c("lo", "hi"), ordered = TRUE),
    d = c(1.5, 2.5, 1.5)
  )
  cf <- cell_frequencies(df, c("f", "o", "d"))
  expect_identical(levels(cf$cells$f), c("b", "a", "c"))
  expect_s3_class(cf$cells$o, c("ordered", "factor"))
  expect_identical(cf$cells$d, c(2.5, 1.5))
  expect_identical(cf$cells$count, c(1L, 2L))
})

test_that("the cell numbering does not depend on the order of the records", {
  set.seed(3)
  df <- data.frame(a = sample(1:5, 100, TRUE), b = sample(letters[1:4], 100, TRUE))
  cf1 <- cell_frequencies(df, c("a", "b"))
  perm <- sample(100)
  cf2 <- cell_frequencies(df[perm, ], c("a", "b"))
  expect_identical(cf1$cells, cf2$cells)
  expect_identical(cf1$cell_id[perm], cf2$cell_id)
})

test_that("records with missing keys are left out or form a category", {
  df <- data.frame(a = c(1, NA, 1, 2, NA), b = c("x", "x", NA, "y", "y"))
  cf <- cell_frequencies(df, c("a", "b"))
  expect_identical(cf$n_excluded, 3)
  expect_identical(cf$cell_id, c(1L, NA, NA, 2L, NA))
  expect_identical(cf$cells$count, c(1L, 1L))
  cf2 <- cell_frequencies(df, c("a", "b"), na = "category")
  expect_identical(cf2$n_excluded, 0)
  expect_identical(sum(cf2$cells$count), 5L)
  expect_true(anyNA(cf2$cells$a))
  expect_identical(nrow(cf2$cells), 5L)
  expect_output(print(cf), "3 records left out for missing keys")
})

test_that("a single key works and large level products are combined", {
  cf <- cell_frequencies(data.frame(k = c(3L, 1L, 3L)), "k")
  expect_identical(cf$cells$k, c(1L, 3L))
  expect_identical(cf$cells$count, c(1L, 2L))
  # 8 keys with 300 distinct values each: more combinations than 2^60
  set.seed(1)
  df <- as.data.frame(replicate(8, sample(1:300, 500, TRUE), simplify = FALSE))
  names(df) <- paste0("v", 1:8)
  cf <- cell_frequencies(df, names(df))
  key <- do.call(paste, df)
  expect_identical(sum(cf$cells$count), 500L)
  expect_identical(nrow(cf$cells), length(unique(key)))
  back <- cf$cells[cf$cell_id, names(df)]
  rownames(back) <- NULL
  expect_identical(back, df)
  ord <- do.call(order, unname(as.list(cf$cells[names(df)])))
  expect_identical(ord, seq_len(nrow(cf$cells)))
})

test_that("every path of the cross-classification numbers the cells like sort() and fingerprints like the plain pass", {
  # a bitmap of a small index space, dense buckets (many records per 2^16
  # indices of a large space), sparse buckets (few: sorted), more than 2^16
  # buckets, and index spaces too large for buckets (radix sort of pairs);
  # keys encoded as numbers whose order is the lexicographic order of the
  # keys
  cases <- list(
    list(n = 20000, levels = c(300, 300)),
    list(n = 50000, levels = c(100, 100, 1000), used = c(1, 100, 1000)),
    list(n = 2000, levels = c(300, 300)),
    list(n = 600000, levels = c(2048, 2048, 2048)),
    list(n = 3000, levels = c(1000, 1000, 1000, 1000))
  )
  for (cs in cases) {
    set.seed(cs$n)
    used <- cs$used %||% cs$levels
    df <- as.data.frame(lapply(used, function(l) sample.int(l, cs$n, TRUE)))
    # every level occurs at least where the space must span it
    df[1, ] <- as.list(as.integer(cs$levels))
    df[2, ] <- as.list(rep(1L, length(cs$levels)))
    names(df) <- paste0("k", seq_along(df))
    df$k1[sample(3:cs$n, 5)] <- NA
    cf <- cell_frequencies(df, names(df))
    num <- Reduce(function(acc, x) acc * 1e4 + x, df)
    u <- sort(unique(num[!is.na(num)]))
    expect_identical(cf$cell_id, match(num, u), info = paste(cs$n, "records"))
    expect_identical(cf$cells$count, tabulate(match(num, u), length(u)), info = paste(cs$n, "records"))
    expect_identical(cf$n_excluded, 5)
    codes <- lapply(df, function(x) x - min(x, na.rm = TRUE) + 1L)
    expect_identical(cf$source$fingerprint, core_call(cpp_key_fingerprint, unname(codes), integer(length(codes))))
  }
})

test_that("whole-number keys that do not start at 1 are coded without a shifted copy, missing values included", {
  set.seed(12)
  n <- 3000
  df <- data.frame(
    a = sample(c(-5L, 0L, 3L, NA), n, TRUE),
    b = sample(0:40, n, TRUE),
    f = factor(sample(c("x", "y"), n, TRUE))
  )
  for (na in c("exclude", "category")) {
    cf <- cell_frequencies(df, c("a", "b", "f"), na = na)
    key <- paste(df$a, df$b, df$f)
    if (na == "exclude") key[is.na(df$a)] <- NA
    expect_identical(sum(cf$cells$count), sum(!is.na(key)), info = na)
    back <- cf$cells[cf$cell_id, c("a", "b", "f")]
    ok <- !is.na(cf$cell_id)
    expect_identical(paste(back$a, back$b, back$f)[ok], key[ok], info = na)
    expect_identical(ok, !is.na(key), info = na)
    # the fingerprint recognises the same records (pram_apply() takes the
    # plan's cells without a second cross-classification) and not others
    expect_identical(check_plan_data(df, list(cells = cf)), cf$cell_id)
    other <- df
    other$b[1] <- other$b[1] + 1L
    expect_false(identical(key_source(lapply(c("a", "b", "f"), function(k) {
      code_key(other[[k]], k, na == "category", shift = FALSE)
    }))$fingerprint, cf$source$fingerprint))
  }
})

test_that("the fingerprint tells apart data that differ in any one code of any record", {
  # every step of the fingerprint is a bijection of its lane's state, so one
  # changed code always changes it (brute force over every record, key and
  # other code); 4,103 records: runs of 2,048, lanes of 4 and a tail
  set.seed(44)
  n <- 4103
  codes <- list(sample.int(3, n, TRUE), sample.int(7, n, TRUE), sample.int(2, n, TRUE))
  codes[[2]][c(5, 4100)] <- NA
  fp <- function(cd) core_call(cpp_key_fingerprint, cd, integer(3), c(3L, 7L, 2L))
  base <- fp(codes)
  # the cross-classification's fused fingerprint is the same value
  cf <- cell_frequencies(as.data.frame(setNames(codes, c("a", "b", "c"))), c("a", "b", "c"))
  expect_identical(cf$source$fingerprint, base)
  nl <- c(3L, 7L, 2L)
  seen <- base
  for (i in c(1:9, 2046:2051, 4097:4103)) {
    for (k in 1:3) {
      for (v in c(seq_len(nl[k]), NA)) {
        if (identical(v, codes[[k]][i])) next
        other <- codes
        other[[k]][i] <- v
        seen <- c(seen, fp(other))
      }
    }
  }
  expect_false(anyDuplicated(seen) > 0)
  # records exchanged, and the same codes in another number of records
  swapped <- lapply(codes, function(x) x[c(2, 1, 3:n)])
  expect_false(identical(fp(swapped), base))
  expect_false(identical(core_call(cpp_key_fingerprint, lapply(codes, `[`, -n), integer(3)),
                         core_call(cpp_key_fingerprint, codes, integer(3))))
  # a code outside its levels gives NA (the caller's range check)
  bad <- codes
  bad[[3]][4103] <- 3L
  expect_identical(fp(bad), NA_character_)
})

test_that("print, summary and as.data.frame describe the cells", {
  df <- data_with_counts(c(1, 1, 2, 5, 12))
  cf <- cell_frequencies(df, "k")
  expect_snapshot(print(cf))
  expect_snapshot(print(summary(cf)))
  d <- as.data.frame(cf)
  expect_identical(names(d), c("cell", "k", "count"))
})

test_that("bad input to cell_frequencies gets classed errors", {
  df <- data.frame(a = 1:3, b = c("x", "y", "x"))
  expect_error(cell_frequencies(list(a = 1), "a"), class = "sdcRisk_error_not_data_frame")
  expect_error(cell_frequencies(df[0, ], "a"), class = "sdcRisk_error_empty_data")
  expect_error(cell_frequencies(df, c("a", "zz")), class = "sdcRisk_error_unknown_key")
  expect_error(cell_frequencies(df, character()), class = "sdcRisk_error_keys")
  expect_error(cell_frequencies(df, c("a", "a")), class = "sdcRisk_error_keys")
  df$l <- I(list(1, 2, 3))
  expect_error(cell_frequencies(df, "l"), class = "sdcRisk_error_key_type")
  expect_error(cell_frequencies(data.frame(a = c(NA, NA)), "a"), class = "sdcRisk_error_key_type")
  expect_error(cell_frequencies(df, "a", na = "drop"))
  expect_snapshot(error = TRUE, cell_frequencies(df, c("a", "zz")))
  expect_snapshot(error = TRUE, cell_frequencies(matrix(1:4, 2), "a"))
  expect_snapshot(error = TRUE, cell_frequencies(df[0, ], "a"))
})

test_that("plot() of the cells shows the distribution of cell sizes", {
  cf <- cell_frequencies(pums_md, c("sex", "age", "race"))
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_invisible(out <- plot(cf))
  expect_identical(out, cf)
})

test_that("a key with nearly as many distinct values as records warns, naming it", {
  set.seed(1)
  d <- data.frame(sex = sample(c("F", "M"), 200, TRUE), inc = stats::rnorm(200), id = 1:200,
                  age = sample(0:90, 200, TRUE))
  expect_warning(cell_frequencies(d, c("sex", "inc")), class = "sdcRisk_warning_key_distinct")
  w <- tryCatch(cell_frequencies(d, c("sex", "inc")), sdcRisk_warning = function(w) w)
  expect_match(conditionMessage(w), "inc")
  expect_match(conditionMessage(w), "200 distinct values in 200 records")
  expect_warning(cell_frequencies(d, c("id", "sex")), class = "sdcRisk_warning_key_distinct")
  # a key of many categories but few observed values, and ordinary keys: silent
  expect_no_warning(cell_frequencies(d, c("sex", "age")))
  expect_no_warning(cell_frequencies(data.frame(k = factor(rep(c("a", "b"), 100), levels = c("a", "b", 1:1000))), "k"))
  expect_no_warning(cell_frequencies(data.frame(k = c(1L, 100000L)[rep(1:2, 100)]), "k"))
  # small data (under 50 records) are not warned about
  expect_no_warning(cell_frequencies(data.frame(k = letters[1:20]), "k"))
  # ifpr() passes the warning on
  expect_warning(
    suppressMessages(ifpr(d, c("sex", "inc"), xi = 0.5)),
    class = "sdcRisk_warning_key_distinct"
  )
})
