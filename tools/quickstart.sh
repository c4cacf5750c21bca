#!/usr/bin/env bash
# The README's first command: installs every dependency and sdcRisk itself,
# then runs a short demonstration of the release procedure on built-in data.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
R CMD INSTALL --preclean . > /tmp/sdcRisk-install.log 2>&1 || { cat /tmp/sdcRisk-install.log; exit 1; }
echo "sdcRisk installed."
Rscript tools/demo.R
