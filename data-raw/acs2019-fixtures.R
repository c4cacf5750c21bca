# Make tests/testthat/fixtures/acs2019/<name>_values.rds: the non-key
# variables PINCP, EDU and PWGTP of the NIST ACS excerpts, in the record
# order of the key fixtures <name>.rds (which hold SEX, AGEP, RAC1P, MSP,
# PUMA of the same files; see the README in that folder). Rerun from the
# package root with the folder of NIST's CSV files as the argument:
#   Rscript data-raw/acs2019-fixtures.R /path/to/acs2019
# The literal "N" is the null code of the excerpts (data_dictionary.json:
# PINCP "N/A (less than 15 years old)", EDU "N/A (less than 3 years old)");
# it becomes NA.

args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 1) stop("usage: Rscript data-raw/acs2019-fixtures.R <folder of ma2019.csv and national2019.csv>")
src <- args[1]
out <- file.path("tests", "testthat", "fixtures", "acs2019")

for (name in c("ma2019", "national2019")) {
  raw <- utils::read.csv(file.path(src, paste0(name, ".csv")), colClasses = "character")
  keys <- readRDS(file.path(out, paste0(name, ".rds")))
  # the key fixture was read from the same file in the same order
  stopifnot(
    nrow(raw) == nrow(keys),
    identical(as.integer(raw$SEX), keys$SEX), identical(as.integer(raw$AGEP), keys$AGEP),
    identical(as.integer(raw$RAC1P), keys$RAC1P), identical(raw$MSP, keys$MSP),
    identical(raw$PUMA, keys$PUMA)
  )
  null <- function(x) ifelse(x == "N", NA, x)
  values <- data.frame(
    PINCP = as.numeric(null(raw$PINCP)),
    EDU = as.integer(null(raw$EDU)),
    PWGTP = as.integer(raw$PWGTP)
  )
  stopifnot(!anyNA(values$PWGTP), all(values$PWGTP >= 1))
  saveRDS(values, file.path(out, paste0(name, "_values.rds")), compress = "xz")
}
