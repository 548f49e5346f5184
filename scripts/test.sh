#!/usr/bin/env bash
# Builds everything (all CUDA code for sm_90a; no GPU needed) and runs the tests.
# On a machine without a GPU the device tests (label gpu) report "skipped".
#   BATON_PRESET=ci|default|debug (default: ci)   BATON_JOBS=N (default: 2)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bootstrap.sh
preset="${BATON_PRESET:-ci}"
cmake --preset "$preset"
cmake --build --preset "$preset" -j "${BATON_JOBS:-2}"
ctest --preset "$preset" -j "${BATON_JOBS:-2}"
