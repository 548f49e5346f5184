// The names the core's CUDA blocks use (README "Two dependent kernels"): shapes, a stream, a
// workspace and device arrays. Allocated only when the block runs (on a GPU).
#pragma once
#include <cuda_runtime.h>

#include "baton/baton.cuh"

namespace doc {
struct core_env {
  static constexpr int M = 1024, N = 1024, TM = 64, TN = 128;
  cudaStream_t stream = nullptr;
  void* ws = nullptr;  // 1 MiB: more than any block's chain needs
  float *x = nullptr, *y = nullptr, *out = nullptr;
  core_env() {
    (void)cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    (void)cudaMalloc(&ws, 1 << 20);
    (void)cudaMalloc(&x, sizeof(float) * M * N);
    (void)cudaMalloc(&y, sizeof(float) * M * N);
    (void)cudaMalloc(&out, sizeof(float) * M);
  }
  ~core_env() {
    (void)cudaStreamSynchronize(stream);
    (void)cudaFree(ws), (void)cudaFree(x), (void)cudaFree(y), (void)cudaFree(out);
    (void)cudaStreamDestroy(stream);
  }
  core_env(const core_env&) = delete;
  core_env& operator=(const core_env&) = delete;
};
}  // namespace doc
