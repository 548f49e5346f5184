// The names the async layer's CUDA blocks use (README "Async/await on the GPU", docs/async.md):
// streams, spans, buffers, a compute function and a kernel. Compiled only.
#pragma once
#include <cuda_runtime.h>

#include "baton/async.cuh"

namespace doc {
__global__ void model(float* d, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) d[i] *= 2.f;
}
struct async_env {
  baton::async::stream_ref s1, s2, origin;
  baton::async::pinned_span<float> x1, x2;
  baton::async::device_span<float> d1, d2;
  const void *src = nullptr, *pinned_src = nullptr;
  void *dst = nullptr, *pinned_dst = nullptr;
  size_t bytes = 0;
  baton::async::compute_fn compute;
};
}  // namespace doc
