// bench/common/device_check.cuh — random inputs filled on the GPU and the check of an output against
// an fp32 reference on the GPU (BENCHMARKS.md, Method: ||out - ref|| / ||ref|| < 1e-2, NaN never
// passes), for benches whose tensors are too large for a host reference.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace baton::bench {

// p[0, n) uniform on [-scale, scale), a SplitMix64 hash of (seed, index): the same values whatever
// the launch's grid. T: a type constructible from float (bf16, half, float).
template <class T>
__global__ void fill_uniform(T* p, size_t n, uint64_t seed, float scale) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    uint64_t z = seed * 0x9E3779B97F4A7C15ull + i;  // SplitMix64 of (seed, index)
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const float u = float(z >> 40) / float(1ull << 24) * 2.f - 1.f;
    p[i] = T(u * scale);
  }
}

// Adds to sums[0..2] the sums of (out - ref)^2, ref^2 and out's NaN count over the real rows of
// [batch, padded, cols] tensors: rows r < seq of each of the batch's sequences of padded rows.
template <class T>
__global__ void rel_err_sums(const T* out, const float* ref, size_t batch, size_t seq, size_t padded, size_t cols,
                             double* sums) {
  double e = 0, r = 0, nan = 0;
  const size_t total = batch * seq * cols;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < total; i += size_t(gridDim.x) * blockDim.x) {
    const size_t c = i % cols, row = i / cols;
    const size_t idx = ((row / seq) * padded + row % seq) * cols + c;
    const float v = float(out[idx]);
    if (v != v) nan += 1;
    const double d = double(v) - double(ref[idx]);
    e += d * d;
    r += double(ref[idx]) * double(ref[idx]);
  }
  atomicAdd(&sums[0], e);
  atomicAdd(&sums[1], r);
  atomicAdd(&sums[2], nan);
}

// ||out - ref|| / ||ref|| over those rows (a dense [rows, cols] tensor: batch 1, seq = padded =
// rows), computed on `stream` and waited for. NaN when out holds a NaN or a CUDA call fails, so
// `relative_error(...) < tolerance` is the check. sums: 3 doubles of device memory, scratch.
template <class T>
[[nodiscard]] double relative_error(cudaStream_t stream, const T* out, const float* ref, size_t batch, size_t seq,
                                    size_t padded, size_t cols, double* sums) {
  if (cudaMemsetAsync(sums, 0, 3 * sizeof(double), stream) != cudaSuccess) return NAN;
  rel_err_sums<<<1024, 256, 0, stream>>>(out, ref, batch, seq, padded, cols, sums);
  double h[3] = {0, 0, 0};
  if (cudaMemcpyAsync(h, sums, sizeof h, cudaMemcpyDeviceToHost, stream) != cudaSuccess) return NAN;
  if (cudaStreamSynchronize(stream) != cudaSuccess) return NAN;
  if (h[2] != 0) return NAN;
  return std::sqrt(h[0] / std::max(h[1], 1e-30));
}

}  // namespace baton::bench
