#!/usr/bin/env bash
# The main job: install, then compare DCTCP, PIAS and pFabric on a 32-host leaf-spine with web-search traffic at
# load 0.6 (the PIAS paper's setup, scaled down): prints mean and 99th-percentile FCT per flow-size bin and writes
# plots and an HTML report to results/demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
.venv/bin/fctlab demo --out results/demo
