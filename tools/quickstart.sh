#!/usr/bin/env bash
# The README's first command: installs every dependency and sdcRisk itself
# (with its vignettes), then runs a short demonstration of the release
# procedure on built-in data. The released file is written to the folder
# the command was started from.
set -euo pipefail
here=$(pwd)
cd "$(dirname "$0")/.."
bash tools/install-deps.sh --vignettes
# Built as a tarball first, so that the vignettes are built and installed
# (vignette("sdcRisk"), browseVignettes("sdcRisk")).
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
log="$build/install.log"
echo "Building sdcRisk and its vignettes ..."
src=$(pwd)
(cd "$build" && R CMD build "$src") > "$log" 2>&1 || { cat "$log"; echo "R CMD build failed"; exit 1; }
R CMD INSTALL "$build"/sdcRisk_*.tar.gz >> "$log" 2>&1 || { tail -n 60 "$log"; echo "R CMD INSTALL failed"; exit 1; }
echo "sdcRisk installed, with its vignettes: vignette(package = \"sdcRisk\") lists them."
Rscript tools/demo.R "$here"
