#!/usr/bin/env bash
# The main job: install, then compare DCTCP and TCP on a small leaf-spine fabric (web search, load 0.6):
# prints a table of average and 99th-percentile FCT per flow-size bin and writes plots to results/quick/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
.venv/bin/fctlab compare examples/quick.toml --scheme dctcp --scheme tcp --out results/quick
