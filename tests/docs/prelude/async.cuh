// The names the async layer's CUDA blocks use (README "Async/await on the GPU", docs/async.md):
// streams, spans, buffers, a compute function and kernels; the layer's names are in scope (namespace
// doc uses baton::async, as docs/async.md's blocks assume). Compiled only.
#pragma once
#include <cuda_runtime.h>

#include "baton/async.cuh"

namespace doc {
__device__ void model_body(float* d, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) d[i] *= 2.f;
}
__global__ void model(float* d, size_t n) { model_body(d, n); }
__global__ void my_kernel(float* d, size_t n) { model_body(d, n); }
using namespace ::baton::async;
struct async_env {
  dim3 grid{132}, block{256};
  float* data = nullptr;
  size_t n = 0;
  int steps = 1;
  void refill(const void*) {}
  baton::async::stream_ref s1 = baton::async::stream_ref::per_thread(), s2 = s1, origin = s1;
  baton::async::pinned_span<float> x1, x2;
  baton::async::device_span<float> d1, d2;
  const void *src = nullptr, *pinned_src = nullptr;
  void *dst = nullptr, *pinned_dst = nullptr;
  size_t bytes = 0;
  baton::async::compute_fn compute;
};
}  // namespace doc
