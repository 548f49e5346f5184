#!/usr/bin/env bash
# kernels.wgmma_guard: cmake/wgmma_serialization_guard.sh fails a compile whose ptxas output reports
# serialized wgmma instructions, passes any other, and keeps the compiler's own exit status and output.
set -u
guard="$1"
fails=0
expect() {  # expected-status description command...
  local want=$1 what=$2; shift 2
  local out rc
  out=$("$guard" "$@" 2>&1); rc=$?
  if [ "$rc" != "$want" ]; then echo "FAIL: $what: exit $rc, expected $want; output: $out"; fails=1; else echo "ok: $what"; fi
  LAST_OUT=$out
}
msg='ptxas info    : (C7514) Potential Performance Loss: wgmma.mma_async instructions are serialized due to non wgmma instructions reading accumulator registers of  a wgmma between start and end of the pipeline stage'
expect 1 "a serialization report fails the compile" bash -c "echo '$msg' >&2"
case "$LAST_OUT" in *C7514*) echo "ok: ptxas's line is passed on";; *) echo "FAIL: ptxas's line was swallowed"; fails=1;; esac
case "$LAST_OUT" in *wgmma_serialization_guard.sh*) echo "ok: the failure names the guard";; *) echo "FAIL: the failure does not say why"; fails=1;; esac
expect 0 "other ptxas output passes" bash -c "echo 'ptxas info    : Used 168 registers' >&2"
expect 3 "the compiler's own failure is kept" bash -c "echo 'error: x' >&2; exit 3"
expect 0 "stdout is the compiler's" bash -c "echo out"
[ "$LAST_OUT" = "out" ] || { echo "FAIL: stdout changed: $LAST_OUT"; fails=1; }
BATON_ALLOW_WGMMA_SERIALIZATION=1 expect 0 "BATON_ALLOW_WGMMA_SERIALIZATION=1 only warns" bash -c "echo '$msg' >&2"
exit $fails
