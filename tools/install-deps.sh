#!/usr/bin/env bash
# Installs what sdcRisk needs on a fresh Debian machine with R: Debian's
# prebuilt r-cran-* packages where they exist (fast), CRAN for the rest.
#   bash tools/install-deps.sh          # what the package needs to install and run
#   bash tools/install-deps.sh --tests  # plus what R CMD check and the tests need
set -euo pipefail

runtime=(Rcpp RcppEigen cli rlang)
tests=(testthat withr knitr rmarkdown roxygen2 data.table sdcMicro)
# sdcMicro is not in Debian, but nearly all it depends on is: install that
# prebuilt, and only sdcMicro itself (and prettydoc) from CRAN.
sdcmicro_debs=(r-cran-car r-cran-cardata r-cran-xtable r-cran-robustbase r-cran-e1071
  r-cran-ggplot2 r-cran-shiny r-cran-haven r-cran-rhandsontable r-cran-dt r-cran-vim
  r-cran-httr r-cran-jsonlite r-cran-knitr r-cran-rmarkdown r-cran-data.table)
pkgs=("${runtime[@]}")
if [ "${1:-}" = "--tests" ]; then pkgs+=("${tests[@]}"); fi

missing=$(Rscript --vanilla -e 'p <- commandArgs(TRUE); cat(p[!vapply(p, requireNamespace, logical(1), quietly = TRUE)])' "${pkgs[@]}")

if [ -n "$missing" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  debs=()
  for p in $missing; do debs+=("r-cran-$(echo "$p" | tr '[:upper:]' '[:lower:]')"); done
  # tools R CMD check uses beside the R packages
  if [ "${1:-}" = "--tests" ]; then debs+=(pandoc qpdf); fi
  echo "Installing from Debian: ${debs[*]}"
  apt-get update -qq >/dev/null 2>&1 || true
  for d in "${debs[@]}"; do
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$d" >/dev/null 2>&1 \
      || echo "  (not from Debian: $d)"
  done
  missing=$(Rscript --vanilla -e 'p <- commandArgs(TRUE); cat(p[!vapply(p, requireNamespace, logical(1), quietly = TRUE)])' "${pkgs[@]}")
fi

if [ -n "$missing" ]; then
  echo "Installing from CRAN: $missing"
  # shellcheck disable=SC2086
  Rscript -e 'p <- commandArgs(TRUE); install.packages(p, Ncpus = 2L); stopifnot(all(vapply(p, requireNamespace, logical(1), quietly = TRUE)))' $missing
fi
echo "Dependencies ready."
