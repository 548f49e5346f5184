#!/usr/bin/env bash
# The compiler launcher of baton's kernel libraries (cmake/BatonKernelTable.cmake): runs the compile
# command it is given and fails it when ptxas reports that it serialized a kernel's wgmma instructions
# ("Potential Performance Loss: wgmma.mma_async instructions are serialized due to ...", C75xx notes
# such as C7510 and C7514).
# ptxas only informs, and the kernel is then correct but loses the overlap of its MMAs (every wgmma
# waits for the one before it), so without this the loss would ship silently. Causes met so far:
# device asserts left in (build without -DNDEBUG, docs/cutlass.md) and a shfl whose source is an
# accumulator register (the swapped SwiGLU epilogue, sm90_gemm.cuh). BATON_ALLOW_WGMMA_SERIALIZATION=1
# in the environment turns the failure into a warning (to look at such a build, not to ship one).
set -uo pipefail
log=$(mktemp "${TMPDIR:-/tmp}/baton-ptxas.XXXXXX") || exit 1
trap 'rm -f "$log"' EXIT
"$@" 2> "$log"
rc=$?
cat "$log" >&2
if grep -q "wgmma.mma_async instructions are serialized" "$log"; then
  echo "error: ptxas serialized the wgmma instructions of a kernel above (cmake/wgmma_serialization_guard.sh says why this fails the build)" >&2
  [ "${BATON_ALLOW_WGMMA_SERIALIZATION:-0}" = 1 ] || rc=1
fi
exit $rc
