# Make data/pums_md.rda: a synthetic stand-in for the 2013 ACS one-year PUMS
# person file for Maryland used in Section 7 of Nayak, Zhang and You (2016).
# The real file cannot be shipped; this one is generated from the parameters
# typed in below and nothing else. Rerun from the package root with
#   Rscript data-raw/pums_md.R
#
# Marginal counts of race (Table 5) and marital status (Table 4) are exact.
# Three concentration parameters were calibrated by hand (a small grid over
# `black_spread` 0.6-0.9, `minor_spread` 1.2-2.0 and `age_tilt` 0.15-0.6 at
# this seed) so that the five-way key sex x age x race x marital x puma has
# about as many nonempty, singleton and doubleton cells as the paper's data:
#                nonempty  singletons  doubletons
#   paper          25,406      13,662       4,777
#   this script    25,469      13,641       4,757   (+0.2%, -0.2%, -0.4%)
# The counts depend on the seed as well: with only 44 PUMA-level draws,
# other seeds at the same parameters gave 24,600-25,800 nonempty cells.

set.seed(20130701)
n <- 59033L

# ---- Helpers ---------------------------------------------------------------

# Scale the columns of a person x category probability matrix until the
# expected category totals equal `target` (iterative proportional fitting;
# zeros, e.g. "married" for a child, stay zero).
rake <- function(p, target, iter = 100) {
  for (i in seq_len(iter)) {
    p <- sweep(p, 2, target / colSums(p), `*`)
    p <- p / rowSums(p)
  }
  p
}

# One category per row of `p`, by inverse CDF.
draw <- function(p) {
  cp <- p %*% upper.tri(diag(ncol(p)), diag = TRUE)
  1L + rowSums(cp < runif(nrow(p)) * cp[, ncol(p)])
}

# Move persons from categories over their target into categories under it,
# choosing those most likely to belong there (a weighted sample without
# replacement via exponential keys), until the counts are exact.
fix_counts <- function(x, target, p) {
  repeat {
    diff <- tabulate(x, length(target)) - target
    if (all(diff == 0)) return(x)
    from <- which.max(diff)
    to <- which.min(diff)
    cand <- which(x == from & p[, to] > 0)
    stopifnot(length(cand) >= min(diff[from], -diff[to]))
    pick <- cand[order(rexp(length(cand)) / p[cand, to])]
    x[pick[seq_len(min(diff[from], -diff[to]))]] <- to
  }
}

# Interpolate a typed-in table, rows at ages `at`, to single years 0..91.
by_age <- function(at, tab) {
  apply(tab, 2, function(v) approx(at, v, xout = 0:91, rule = 2)$y)
}

# ---- PUMAs -----------------------------------------------------------------
# 44 areas in 13 regions shaped like Maryland's counties; the Black, Asian
# and other-race shares per region approximate 2010 census county figures.
regions <- data.frame(
  region = c("Western", "Frederick", "Carroll", "Baltimore County",
             "Harford", "Cecil", "Baltimore City", "Howard", "Montgomery",
             "Prince George's", "Anne Arundel", "Southern", "Eastern Shore"),
  code   = c(1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15),
  pumas  = c(2, 2, 1, 7, 2, 1, 5, 2, 7, 7, 4, 2, 2),
  black  = c(.07, .09, .03, .26, .13, .07, .63, .18, .18, .64, .16, .30, .22),
  asian  = c(.01, .04, .015, .055, .025, .012, .025, .16, .14, .04, .035,
             .025, .012),
  other  = c(.005, .02, .005, .015, .01, .01, .015, .025, .07, .07, .015,
             .01, .02)
)
reg <- rep(seq_len(nrow(regions)), regions$pumas)
puma_label <- sprintf("24-%03d%02d", regions$code[reg],
                      sequence(regions$pumas) - (regions$pumas[reg] == 1))

# Unequal sample sizes between about 900 and 2,200, summing to n.
extra <- rbeta(44, 1.6, 2.2)
size <- 900L + as.integer(floor(extra / sum(extra) * (n - 44 * 900)))
top <- order(-size)[seq_len(n - sum(size))]
size[top] <- size[top] + 1L
puma <- rep(seq_len(44), size)

# ---- Age and sex -----------------------------------------------------------
# Maryland age pyramid around 2013, percent in 5-year groups 0-4, ...,
# 80-84, 85+ (approximating the ACS one-year estimates).
pyramid <- c(6.2, 6.3, 6.4, 6.7, 6.8, 6.8, 6.5, 6.3, 6.8, 7.5, 7.6, 6.8, 5.8,
             4.4, 3.1, 2.2, 1.7, 1.9)
cum <- splinefun(c(seq(0, 85, 5), 100), c(0, cumsum(pyramid)) / sum(pyramid),
                 method = "hyman")(0:100)
p_age <- diff(cum)
p_age <- c(p_age[1:91], sum(p_age[92:100]))   # 91 means 91 or older

# Each PUMA leans younger or older (college towns, retirement areas).
age_tilt <- 0.35
tilt <- rnorm(44, 0, age_tilt)
age <- integer(n)
for (j in seq_len(44)) {
  w <- p_age * exp(tilt[j] * ((0:91) - 38) / 38)
  age[puma == j] <- sample(0:91, size[j], replace = TRUE, prob = w)
}

# Boys outnumber girls at birth, women outnumber men in old age.
p_male <- approx(c(0, 20, 50, 70, 85, 91), c(.512, .505, .48, .45, .38, .31),
                 xout = age)$y
sex <- factor(ifelse(runif(n) < p_male, "Male", "Female"),
              levels = c("Male", "Female"))

# ---- Race: exact Table 5 counts, shares varying by PUMA --------------------
race_levels <- c("White", "Black", "American Indian alone",
                 "Alaska Native alone", "American Indian & Alaska Native",
                 "Asian", "Native Hawaiian & other Pacific Islander",
                 "Some other race alone", "Two or more races")
race_target <- c(37201, 15239, 97, 1, 42, 3461, 20, 1349, 1623)

# PUMAs within a region differ on the logit scale by `black_spread`; the
# smaller groups cluster more (`minor_spread`), as immigrant communities do;
# persons of two or more races are spread evenly.
black_spread <- 0.7
minor_spread <- 1.8
vary <- function(p, s) plogis(qlogis(p) + rnorm(length(p), 0, s))
black <- vary(regions$black[reg], black_spread)
asian <- vary(regions$asian[reg], minor_spread)
other <- vary(regions$other[reg], minor_spread)
small <- cbind(matrix(vary(rep(c(97, 1, 42, 20) / n, each = 44),
                            minor_spread), 44),
               vary(rep(1623 / n, 44), 0.4))
by_puma <- cbind(NA, black, NA, NA, NA, asian, NA, other, NA)
by_puma[, c(3, 4, 5, 7, 9)] <- small
by_puma <- by_puma / pmax(1, rowSums(by_puma, na.rm = TRUE) / 0.95)
by_puma[, 1] <- 1 - rowSums(by_puma, na.rm = TRUE)

# Minorities are younger than the White population; "Two or more races"
# is mostly children.
young <- by_age(c(0, 18, 40, 65, 91),
                cbind(white = c(.8, .9, 1, 1.3, 1.6),
                      other = c(1.2, 1.1, 1, .8, .6),
                      multi = c(2.8, 1.6, .8, .5, .4)))
p <- by_puma[puma, ] * young[age + 1, c(1, 2, 2, 2, 2, 2, 2, 2, 3)]
p <- rake(p, race_target)
race <- fix_counts(draw(p), race_target, p)
race <- factor(race_levels[race], levels = race_levels)

# ---- Marital status: exact Table 4 counts, by age and sex ------------------
marital_levels <- c("Married", "Widowed", "Divorced", "Separated",
                    "Never married")
marital_target <- c(24688, 3156, 4742, 1040, 25407)
# Shares at the given ages (approximating the ACS); the ACS codes under-15s
# as never married.
at <- c(0, 14, 15, 19, 22, 27, 32, 40, 50, 60, 70, 80, 91)
men <- cbind(
  mar = c(0, 0, .002, .01, .05, .20, .40, .57, .62, .62, .66, .66, .55),
  wid = c(0, 0, 0, 0, 0, 0, .002, .004, .01, .02, .06, .14, .33),
  div = c(0, 0, 0, .001, .003, .01, .04, .09, .13, .15, .13, .10, .06),
  sep = c(0, 0, 0, .001, .003, .01, .02, .03, .03, .03, .02, .01, .01),
  nev = c(1, 1, .998, .988, .944, .78, .538, .306, .21, .18, .13, .09, .05))
women <- cbind(
  mar = c(0, 0, .004, .02, .09, .27, .45, .56, .57, .52, .46, .32, .12),
  wid = c(0, 0, 0, 0, 0, .001, .003, .01, .03, .07, .18, .38, .68),
  div = c(0, 0, 0, .002, .006, .02, .06, .13, .17, .20, .18, .15, .10),
  sep = c(0, 0, 0, .002, .007, .02, .03, .04, .04, .03, .02, .01, .005),
  nev = c(1, 1, .996, .976, .897, .689, .457, .26, .19, .18, .16, .14, .095))
p <- ifelse(sex == "Male", 1, 0) * by_age(at, men)[age + 1, ] +
  ifelse(sex == "Male", 0, 1) * by_age(at, women)[age + 1, ]
# Black adults are less often married and more often never married.
p[race == "Black", 1] <- p[race == "Black", 1] * 0.6
p <- rake(p, marital_target)
marital <- fix_counts(draw(p), marital_target, p)
marital <- factor(marital_levels[marital], levels = marital_levels)

# ---- Education: 8 levels of Section 7.2, by age ----------------------------
edu_levels <- c("Grade 6 or less", "Grade 7-12, no diploma",
                "High school diploma", "Some college, no degree",
                "Associate degree", "Bachelor's degree",
                "Master's or professional degree", "Doctorate degree")
# Adult attainment approximating Maryland's (ACS around 2013), older
# cohorts less schooled; nobody holds a level before the youngest age at
# which it can be reached.
at <- c(0, 11, 12, 17, 18, 20, 22, 25, 30, 45, 65, 80, 91)
edu <- cbind(
  g6  = c(1, 1, 0, 0, 0, 0, 0, .01, .02, .03, .04, .07, .10),
  g12 = c(0, 0, 1, .93, .25, .10, .07, .06, .06, .07, .09, .14, .17),
  hs  = c(0, 0, 0, .07, .45, .27, .22, .20, .22, .25, .29, .33, .33),
  col = c(0, 0, 0, 0, .30, .52, .38, .18, .16, .18, .19, .17, .16),
  aso = c(0, 0, 0, 0, 0, .10, .07, .07, .07, .07, .06, .04, .04),
  bac = c(0, 0, 0, 0, 0, .01, .24, .33, .26, .21, .17, .13, .11),
  mas = c(0, 0, 0, 0, 0, 0, .02, .13, .18, .16, .14, .10, .08),
  doc = c(0, 0, 0, 0, 0, 0, 0, .02, .03, .03, .02, .02, .01))
youngest <- c(0, 12, 17, 18, 19, 21, 23, 26)
p <- by_age(at, edu)[age + 1, ] * outer(age, youngest, ">=")
education <- factor(edu_levels[draw(p)], levels = edu_levels, ordered = TRUE)

# ---- Class of worker -------------------------------------------------------
worker_levels <- c("Not applicable", "Private for-profit",
                   "Private not-for-profit", "Local government",
                   "State government", "Federal government",
                   "Self-employed, not incorporated",
                   "Self-employed, incorporated",
                   "Working without pay in family business")
# Share with a class of worker (worked in the last five years) by age;
# Maryland's large federal and public sector in the split among workers.
has_job <- approx(c(15, 16, 20, 25, 55, 65, 75, 91),
                  c(0, .35, .75, .86, .72, .35, .10, .03), xout = age,
                  rule = 2)$y
cls <- c(.61, .09, .08, .05, .08, .05, .035, .003)
p <- cbind(1 - has_job, outer(has_job, cls / sum(cls)))
# Self-employment rises with age.
p[, 7:8] <- p[, 7:8] * age / 50
worker <- factor(worker_levels[draw(p)], levels = worker_levels)

# ---- Person weights --------------------------------------------------------
# About 1% of Maryland's 5,928,814 residents (2013) are in the sample:
# weights vary around 100 as in the ACS, a little more for older and
# for Black and Hispanic persons (lower response).
pop <- 5928814
w <- exp(rnorm(n, 0, 0.5)) * ifelse(race %in% c("White", "Asian"), 1, 1.15)
weight <- pmax(1L, as.integer(round(w / sum(w) * pop)))

pums_md <- data.frame(
  sex = sex,
  age = as.integer(age),
  race = race,
  marital = marital,
  puma = factor(puma_label[puma], levels = puma_label),
  worker = worker,
  education = education,
  weight = weight
)

cells <- table(do.call(paste, pums_md[c("sex", "age", "race", "marital",
                                         "puma")]))
print(c(nonempty = length(cells), singletons = sum(cells == 1),
        doubletons = sum(cells == 2)))

save(pums_md, file = file.path("data", "pums_md.rda"), compress = "xz")
