#!/usr/bin/env bash
# Installs the build tools baton needs that Debian's packages lack or have too old:
# cmake >= 3.28 (Debian 12 ships 3.25, which predates CUDA 13) and ninja, from PyPI, into .tools/.
# Source it ("source scripts/bootstrap.sh") to get them on PATH; running it just installs.
# Needs: python3 with pip, g++, gtest (libgtest-dev); nvcc (CUDA 13) for the CUDA parts.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="$root/.tools"
need_cmake=1
if command -v cmake >/dev/null 2>&1; then
  v=$(cmake --version | head -1 | awk '{print $3}')
  if [ "$(printf '%s\n3.28\n' "$v" | sort -V | head -1)" = "3.28" ]; then need_cmake=0; fi
fi
if [ -x "$tools/bin/cmake" ] && [ -x "$tools/bin/ninja" ]; then need_cmake=0; fi
if [ "$need_cmake" = 1 ] || ! command -v ninja >/dev/null 2>&1; then
  if [ ! -x "$tools/bin/cmake" ] || [ ! -x "$tools/bin/ninja" ]; then
    echo "bootstrap: installing cmake 4.x and ninja from PyPI into $tools"
    python3 -m pip install --quiet --disable-pip-version-check --target "$tools/py" 'cmake>=4,<5' 'ninja>=1.11' \
      || { echo "bootstrap: 'pip install cmake ninja' failed: check access to PyPI" >&2; exit 1; }
    mkdir -p "$tools/bin"
    ln -sf "$tools/py/bin/cmake" "$tools/bin/cmake"
    ln -sf "$tools/py/bin/ctest" "$tools/bin/ctest"
    ln -sf "$tools/py/bin/ninja" "$tools/bin/ninja"
  fi
fi
if [ -x "$tools/bin/cmake" ]; then export PATH="$tools/bin:$PATH"; export PYTHONPATH="$tools/py${PYTHONPATH:+:$PYTHONPATH}"; fi
if [ ! -f /usr/include/gtest/gtest.h ] && [ ! -f /usr/local/include/gtest/gtest.h ] &&
   { [ -z "${GTEST_ROOT:-}" ] || [ ! -f "$GTEST_ROOT/include/gtest/gtest.h" ]; }; then
  echo "bootstrap: GoogleTest headers not found; install them with: apt-get install -y libgtest-dev (or set GTEST_ROOT)" >&2
  exit 1
fi
# Parallel compile jobs: the machine's cores, capped at one job per 6 GiB of available memory (the
# kernel libraries' translation units peak at 4-7 GB, the largest being the MLP's standard-width
# kernels: docs/mlp.md, "Build time"). BATON_JOBS overrides it.
baton_default_jobs() {
  local cores mem_gb by_mem
  cores=$(nproc 2>/dev/null || echo 2)
  mem_gb=$(awk '/MemAvailable/ {print int($2 / 1048576)}' /proc/meminfo 2>/dev/null || echo 6)
  by_mem=$((mem_gb / 6))
  [ "$by_mem" -lt 1 ] && by_mem=1
  echo $((cores < by_mem ? cores : by_mem))
}
