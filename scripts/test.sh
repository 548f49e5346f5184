#!/usr/bin/env bash
# Builds everything (all CUDA code for sm_90a; no GPU needed) and runs the tests.
# On a machine without a GPU the device tests (label gpu) report "skipped".
#   BATON_PRESET=ci|default|debug (default: ci)   BATON_JOBS=N (default: the cores, capped at one per 6 GiB)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bootstrap.sh
preset="${BATON_PRESET:-ci}"
cmake --preset "$preset"
jobs="${BATON_JOBS:-$(baton_default_jobs)}"
cmake --build --preset "$preset" -j "$jobs"
ctest --preset "$preset" -j "$jobs"
# batonc's fuzz target builds and survives a short run (scripts/fuzz.sh runs it for 10 minutes).
if command -v clang++ >/dev/null 2>&1 && [ "${BATON_FUZZ_SECONDS:-30}" != 0 ]; then
  BATON_FUZZ_SECONDS="${BATON_FUZZ_SECONDS:-30}" bash scripts/fuzz.sh
else
  echo "test.sh: clang++ not found; skipping the batonc fuzz smoke run"
fi
