#!/usr/bin/env bash
# The main job. With a GPU: builds and runs the benchmarks (scripts/device_run.sh).
# Without one: says so and runs the CPU emulator demo of baton's tile protocol.
# The GPU build is scripts/build_device.sh, which configures with -DBATON_MLP_EXTRA_KERNELS=ON (the
# MLP kernels the plan never picks, which the device tests and --cta-pairs runs need); binaries
# staged without it (no .device/bin/BUILD_OPTIONS saying so) are rebuilt first.
set -euo pipefail
cd "$(dirname "$0")/.."
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q GPU; then
  echo "GPU found: $(nvidia-smi -L | head -1)"
  if [ ! -x .device/bin/baton_bench_sync_cost ] ||
     ! grep -qx 'BATON_MLP_EXTRA_KERNELS=ON' .device/bin/BUILD_OPTIONS 2>/dev/null; then
    bash scripts/build_device.sh
  fi
  exec bash scripts/device_run.sh
fi
echo "No GPU found on this machine: running the CPU emulator demo instead (the GPU benchmarks need an H100/H200)."
source scripts/bootstrap.sh
cmake --preset host >/dev/null
cmake --build --preset host --target baton_emu_demo -j "${BATON_JOBS:-$(baton_default_jobs)}" >/dev/null
exec build/host/bin/baton_emu_demo "$@"
