// baton/cutlass/swiglu.cuh — the weight layout of a SwiGLU GEMM (GemmConfig<..., SwiGluPairs = true>).
//
// LLaMA's MLP computes H = SiLU(X Wg^T) * (X Wu^T) with Wg, Wu [F, K]. One GEMM computes both when
// the rows of its weight matrix interleave them:
//   packed[2c] = Wg[c],  packed[2c + 1] = Wu[c]        (packed [2F, K], row-major)
// so the GEMM's 2F output columns pair up as (gate_c, up_c) in adjacent accumulators of one MMA
// thread, and the epilogue writes H[m, c] = SiLU(gate_c) * up_c.
//
//   baton::sm90::pack_swiglu_weights(gate, up, packed, F, K, stream);   // once, at load time
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include <algorithm>

#include "baton/launch.cuh"
#include "baton/status.hpp"

namespace baton::sm90 {

namespace detail {
template <int = 0>
__global__ void pack_swiglu_rows(const uint4* __restrict__ gate, const uint4* __restrict__ up, uint4* __restrict__ packed,
                                 int64_t rows, int64_t vecs_per_row) {
  const int64_t total = 2 * rows * vecs_per_row;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t out_row = i / vecs_per_row, v = i % vecs_per_row, c = out_row / 2;
    packed[i] = (out_row % 2 == 0 ? gate : up)[c * vecs_per_row + v];
  }
}
}  // namespace detail

// gate, up: [f, k] bf16 row-major (2-byte elements); packed: [2f, k]. k must be a multiple of 8
// and the pointers 16-byte aligned (the GEMM's TMA needs both anyway). Stream-ordered.
[[nodiscard]] inline status pack_swiglu_weights(const void* gate, const void* up, void* packed, int f, int k,
                                                cudaStream_t stream) {
  if (f < 1 || k < 1 || k % 8 != 0)
    return status(errc::invalid_argument, "pack_swiglu_weights: f=" + std::to_string(f) + " k=" + std::to_string(k) +
                                              ": need f >= 1 and k a positive multiple of 8");
  auto misaligned = [](const void* p) { return p == nullptr || reinterpret_cast<uintptr_t>(p) % 16 != 0; };
  if (misaligned(gate) || misaligned(up) || misaligned(packed))
    return status(errc::invalid_argument, "pack_swiglu_weights: gate, up and packed must be non-null and 16-byte aligned");
  const int64_t vecs = k / 8, total = 2 * int64_t(f) * vecs;
  const int threads = 256;
  const int blocks = int(std::min<int64_t>((total + threads - 1) / threads, 4096));
  detail::pack_swiglu_rows<<<blocks, threads, 0, stream>>>(static_cast<const uint4*>(gate), static_cast<const uint4*>(up),
                                                         static_cast<uint4*>(packed), f, vecs);
  return cuda_status(cudaGetLastError(), "launching pack_swiglu_weights");
}

}  // namespace baton::sm90
