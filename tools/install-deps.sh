#!/usr/bin/env bash
# Installs what sdcRisk needs on a Debian machine with R.
#   bash tools/install-deps.sh              # what the package needs to install and run (Imports, LinkingTo)
#   bash tools/install-deps.sh --vignettes  # plus what building its vignettes needs (VignetteBuilder,
#                                           # the packages of Config/sdcRisk/vignettes, pandoc)
#   bash tools/install-deps.sh --tests      # plus what R CMD check and the tests need (Suggests,
#                                           # pandoc, qpdf, a PostgreSQL server for the database tests,
#                                           # Chromium for the app's browser tests)
#
# The R packages come from DESCRIPTION, so this script never falls out of
# step with it. Order of sources:
#   1. Debian's prebuilt r-cran-* packages, for every package Debian has, and
#      for every dependency (recursively) of the packages it does not have:
#      sdcMicro is not in Debian, but all it depends on is, so only sdcMicro
#      itself (and prettydoc) is built from CRAN. Building its dependency
#      tree from CRAN source does not work on R 4.2 (MatrixModels needs a
#      newer Matrix, VIM and doBy need packages CRAN no longer offers for it).
#   2. CRAN (source) for what Debian lacks.
#   3. A final check that every package loads; each one that does not is
#      named with the reason, and the script fails.
# Without root or apt-get (not Debian), only CRAN is used.
set -uo pipefail
cd "$(dirname "$0")/.."

mode=runtime
case "${1:-}" in
  --tests) mode=tests ;;
  --vignettes) mode=vignettes ;;
esac
log=$(mktemp -d)/install-deps.log
say() { echo "install-deps: $*"; }

# R packages from DESCRIPTION (base and recommended packages R ships are left out).
pkgs=$(Rscript --vanilla -e '
  d <- read.dcf("DESCRIPTION")
  mode <- commandArgs(TRUE)[1]
  f <- c("Imports", "LinkingTo",
         if (mode == "vignettes") c("VignetteBuilder", "Config/sdcRisk/vignettes"),
         if (mode == "tests") "Suggests")
  p <- unlist(lapply(intersect(f, colnames(d)), function(x) strsplit(d[, x], ",")[[1]]))
  p <- trimws(sub("\\(.*", "", gsub("\n", " ", p)))
  base <- rownames(installed.packages(priority = "base"))
  cat(setdiff(unique(p[nzchar(p)]), base))' "$mode") || { say "cannot read DESCRIPTION"; exit 1; }

missing_pkgs() {
  Rscript --vanilla -e 'p <- commandArgs(TRUE); cat(p[!vapply(p, requireNamespace, logical(1), quietly = TRUE)])' $pkgs
}
missing=$(missing_pkgs)
say "R packages needed ($mode): $pkgs"

system_debs=()
tools_needed=()
if [ "$mode" = vignettes ]; then tools_needed=(pandoc); fi
if [ "$mode" = tests ]; then
  # R CMD check builds the vignettes (pandoc) and checks PDF sizes (qpdf);
  # the database tests start a PostgreSQL server of their own; the app's
  # tests drive Debian's Chromium (headless).
  tools_needed=(pandoc qpdf chromium)
  [ -x /usr/lib/postgresql/15/bin/initdb ] || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || system_debs+=(postgresql)
fi
for tool in "${tools_needed[@]}"; do command -v "$tool" >/dev/null 2>&1 || system_debs+=("$tool"); done

have_apt=no
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then have_apt=yes; fi

deb_name() { echo "r-cran-$(echo "$1" | tr '[:upper:]' '[:lower:]')"; }
# (the output is captured first: `apt-cache ... | grep -q` would end apt-cache
# with SIGPIPE, which pipefail turns into "not available")
deb_available() {
  local out
  out=$(apt-cache policy "$1" 2>/dev/null)
  [[ "$out" =~ Candidate:\ [^\(] ]]
}

if [ "$have_apt" = yes ] && { [ -n "$missing" ] || [ ${#system_debs[@]} -gt 0 ]; }; then
  say "apt-get update"
  apt-get update -qq >>"$log" 2>&1 || say "apt-get update failed (see $log); trying the package lists at hand"
  debs=("${system_debs[@]}")
  cran_only=()
  deps=""
  for p in $missing; do
    d=$(deb_name "$p")
    if deb_available "$d"; then debs+=("$d"); else cran_only+=("$p"); fi
  done
  if [ ${#cran_only[@]} -gt 0 ]; then
    # Dependencies of the CRAN-only packages, recursively: take from Debian
    # whatever it has, so that CRAN builds only the packages themselves.
    say "not in Debian: ${cran_only[*]}; looking up their dependencies on CRAN"
    deps=$(Rscript --vanilla -e '
      options(repos = c(CRAN = "https://cloud.r-project.org"))
      db <- tryCatch(available.packages(), error = function(e) NULL)
      if (is.null(db)) quit(status = 0)
      p <- commandArgs(TRUE)
      d <- unique(unlist(tools::package_dependencies(p, db = db, recursive = TRUE,
                    which = c("Depends", "Imports", "LinkingTo"))))
      have <- rownames(installed.packages())
      cat(setdiff(d, c(have, p)))' "${cran_only[@]}" 2>>"$log")
    for p in $deps; do
      d=$(deb_name "$p")
      if deb_available "$d"; then debs+=("$d"); fi
    done
  fi
  # System libraries that CRAN source builds of these packages need.
  for p in "${cran_only[@]}" $deps; do
    case "$p" in
      Rglpk) debs+=(libglpk-dev) ;;
      highs) debs+=(cmake pkg-config) ;;  # builds the HiGHS library it ships (about 10 min on one core)
      RPostgreSQL) debs+=(libpq-dev) ;;
      curl) debs+=(libcurl4-openssl-dev) ;;
    esac
  done
  if [ ${#debs[@]} -gt 0 ]; then
    say "from Debian: ${debs[*]}"
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${debs[@]}" >>"$log" 2>&1; then
      # One at a time, so that each failure is named with apt's reason.
      for d in "${debs[@]}"; do
        if ! out=$(DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$d" 2>&1); then
          say "Debian package $d failed: $(echo "$out" | grep -E '^E:' | head -n 2 | tr '\n' ' ')"
        fi
      done
    fi
  fi
  missing=$(missing_pkgs)
elif [ "$have_apt" = no ] && [ ${#system_debs[@]} -gt 0 ]; then
  say "not root or no apt-get: cannot install ${system_debs[*]}; install them with your system's package manager"
fi

if [ -n "$missing" ]; then
  say "from CRAN (source): $missing"
  # shellcheck disable=SC2086
  Rscript --vanilla -e '
    options(repos = c(CRAN = "https://cloud.r-project.org"))
    p <- commandArgs(TRUE)
    # failures are named below; other warnings (such as the mirror having no
    # PACKAGES.rds, after which R reads PACKAGES.gz) only go to the log
    withCallingHandlers(install.packages(p, Ncpus = 2L), warning = function(w) {
      m <- conditionMessage(w)
      message(if (grepl("installation of|non-zero exit|not available", m)) "install-deps: CRAN: " else "(log) ", m)
      invokeRestart("muffleWarning")
    })' $missing 2>&1 \
    | tee -a "$log" | grep -E '^(install-deps|ERROR|\* installing|\* DONE)' || true
  missing=$(missing_pkgs)
fi

status=0
if [ -n "$missing" ]; then
  for p in $missing; do
    reason=$(grep -E "(ERROR|Error).*$p|$p.*(not available|had non-zero exit status)" "$log" | head -n 2 | tr '\n' ' ')
    say "MISSING R package $p: ${reason:-it does not load; see $log}"
  done
  status=1
fi
for tool in "${tools_needed[@]}"; do
  command -v "$tool" >/dev/null 2>&1 || { say "MISSING $tool (Debian package $tool)"; status=1; }
done
if [ "$mode" = tests ]; then
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { say "MISSING PostgreSQL server (Debian package postgresql)"; status=1; }
fi
if [ "$status" -ne 0 ]; then say "failed: the packages above are missing (log: $log)"; exit 1; fi
say "dependencies ready"
