// The names the MLP op's blocks use (README "A transformer MLP as one op"): bf16 device pointers and
// a stream. Compiled only: the blocks use baton::ops::CompiledMlp (their marker's replace=), the same
// API over kernels compiled once in baton::mlp_kernels, so no CUTLASS kernel is instantiated here.
#pragma once
#include <cuda_runtime.h>

#include "baton/ops/mlp_compiled.cuh"

namespace doc {
struct mlp_env {
  cudaStream_t stream = nullptr;
  const void *x = nullptr, *w1_packed = nullptr, *w2 = nullptr;
  void *y = nullptr, *z = nullptr;
};
}  // namespace doc
