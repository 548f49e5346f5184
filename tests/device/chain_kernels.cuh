// Kernels for the device tests and the sync-cost benchmark: the cuSync paper's "simple test"
// (chained copy/transform kernels), generalized to every built-in policy.
//
// Stage 0 generates data from the epoch, so every chain iteration produces new values without a
// host round trip. Every consumer checks EVERY value it reads against the value its producer
// must have written in the same epoch and counts mismatches on the device: a missing or late
// wait, a stale read or a write-after-read hazard shows up as a mismatch.
#pragma once

#include <cstdint>

#include "baton/baton.cuh"

namespace bt {

__host__ __device__ inline float value0(uint32_t epoch, int64_t i) {
  return float((uint32_t(i) * 7u + epoch * 13u) % 1021u);
}

__device__ inline uint32_t mix(uint32_t a, uint32_t b) {
  uint32_t h = a * 0x9E3779B1u ^ (b + 0x7F4A7C15u + (a << 6) + (a >> 2));
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  return h;
}

// Thread 0 sleeps a pseudo-random 0..max_ns (per epoch and tile), the CTA waits for it.
__device__ inline void random_delay(uint32_t epoch, int tile, uint32_t max_ns) {
  if (max_ns == 0) return;
  if (threadIdx.x == 0) {
    uint32_t ns = mix(epoch, uint32_t(tile)) % max_ns;
    while (ns > 0) {
      uint32_t step = ns > 100000u ? 100000u : ns;
      __nanosleep(step);
      ns -= step;
    }
  }
  __syncthreads();
}

__device__ inline void count_mismatch(unsigned* mismatches, float got, float want) {
  if (got != want) atomicAdd(mismatches, 1u);
}

struct Dense {
  int rows = 0, cols = 0;  // elements
  int tile_m = 0, tile_n = 0;
};

// Stage 0: out[r][c] = value0(epoch, r*cols+c) + level, then post.
template <class S>
__global__ void produce(S s, float* out, Dense d, float level, uint32_t max_delay_ns) {
  const baton::Assignment a = s.tile();
  random_delay(a.epoch, a.position, max_delay_ns);
  for (int i = threadIdx.x; i < d.tile_m * d.tile_n; i += blockDim.x) {
    int r = a.tile.m * d.tile_m + i / d.tile_n, c = a.tile.n * d.tile_n + i % d.tile_n;
    if (r < d.rows && c < d.cols) out[int64_t(r) * d.cols + c] = value0(a.epoch, int64_t(r) * d.cols + c) + level;
  }
  if constexpr (S::num_outputs > 0) s.post(a);
}

// Identity consumer: out = in + 1 for the same tile; checks in == value0 + in_level.
// With two inputs (in2 != nullptr) it also reads in2 (level in2_level) and adds it.
template <class S>
__global__ void map_identity(S s, const float* in, float in_level, const float* in2, float in2_level, float* out,
                             Dense d, unsigned* mismatches, uint32_t max_delay_ns) {
  const baton::Assignment a = s.tile();
  if (!s.wait(a)) return;  // watchdog fired or chain aborted: do not touch data, do not post
  random_delay(a.epoch, a.position, max_delay_ns);
  for (int i = threadIdx.x; i < d.tile_m * d.tile_n; i += blockDim.x) {
    int r = a.tile.m * d.tile_m + i / d.tile_n, c = a.tile.n * d.tile_n + i % d.tile_n;
    if (r >= d.rows || c >= d.cols) continue;
    int64_t idx = int64_t(r) * d.cols + c;
    float v = in[idx];
    count_mismatch(mismatches, v, value0(a.epoch, idx) + in_level);
    if (in2) {
      float v2 = in2[idx];
      count_mismatch(mismatches, v2, value0(a.epoch, idx) + in2_level);
      v += v2;
    }
    out[idx] = v + 1.0f;
  }
  if constexpr (S::num_outputs > 0) s.post(a);
}

// Transposed consumer: out[r][c] = in[c][r] + 1 (out is cols x rows of in).
template <class S>
__global__ void map_transpose(S s, const float* in, float in_level, float* out, Dense in_d, unsigned* mismatches) {
  const baton::Assignment a = s.tile();
  if (!s.wait(a)) return;
  // consumer tile (m, n) covers out rows m*tile_n.., out cols n*tile_m.. (in's tile transposed)
  for (int i = threadIdx.x; i < in_d.tile_m * in_d.tile_n; i += blockDim.x) {
    int orow = a.tile.m * in_d.tile_n + i / in_d.tile_m, ocol = a.tile.n * in_d.tile_m + i % in_d.tile_m;
    if (orow >= in_d.cols || ocol >= in_d.rows) continue;
    int64_t src = int64_t(ocol) * in_d.cols + orow;
    float v = in[src];
    count_mismatch(mismatches, v, value0(a.epoch, src) + in_level);
    out[int64_t(orow) * in_d.rows + ocol] = v + 1.0f;
  }
  if constexpr (S::num_outputs > 0) s.post(a);
}

// GEMM-A consumer: tile (m, n) of out[M][N]: out[r][c] = sum_k in[r][k] + c, walking K in
// k-blocks of kb; waits per k-block when per_k (KBlockPolicy), else once per tile.
template <class S>
__global__ void row_reduce(S s, const float* in, float in_level, float* out, int M, int K, int N, int tile_m,
                           int tile_n, int kb, bool per_k, unsigned* mismatches) {
  const baton::Assignment a = s.tile();
  if (!per_k && !s.wait(a)) return;
  const int r = a.tile.m * tile_m + int(threadIdx.x);
  float acc = 0.f;
  const int kblocks = (K + kb - 1) / kb;
  for (int k = 0; k < kblocks; ++k) {
    if (per_k && !s.wait(a, k)) return;
    if (threadIdx.x < unsigned(tile_m) && r < M)
      for (int kk = k * kb; kk < min(K, (k + 1) * kb); ++kk) {
        int64_t idx = int64_t(r) * K + kk;
        float v = in[idx];
        count_mismatch(mismatches, v, value0(a.epoch, idx) + in_level);
        acc += v;
      }
  }
  if (threadIdx.x < unsigned(tile_m) && r < M)
    for (int c = a.tile.n * tile_n; c < min(N, (a.tile.n + 1) * tile_n); ++c) out[int64_t(r) * N + c] = acc + float(c);
  if constexpr (S::num_outputs > 0) s.post(a);
}

// Implicit-GEMM conv consumer (all filter weights 1): out[o][co] = sum over in-bounds taps and
// channels of in[pixel][c] + co. One thread per output pixel; k-block = (r, s, channel block).
template <class S>
__global__ void conv_sum(S s, const float* in, float in_level, float* out, baton::footprint::ConvHalo f, int cout,
                         bool per_k, unsigned* mismatches) {
  const baton::Assignment a = s.tile();
  if (!per_k && !s.wait(a)) return;
  const int P = f.out_h(), Q = f.out_w();
  const int64_t total = int64_t(f.n) * P * Q;
  const int64_t o = int64_t(a.tile.m) * f.cons_tile_m + threadIdx.x;
  const bool active = threadIdx.x < unsigned(f.cons_tile_m) && o < total;
  float acc = 0.f;
  for (int k = 0; k < f.k_blocks(); ++k) {
    if (per_k && !s.wait(a, k)) return;
    if (!active) continue;
    const int cb = k % f.channel_blocks(), tap = k / f.channel_blocks();
    const int rr = tap / f.s, ss = tap % f.s;
    const int64_t img = o / (int64_t(P) * Q), p = (o % (int64_t(P) * Q)) / Q, q = o % Q;
    const int64_t h = p * f.stride - f.pad + rr, w = q * f.stride - f.pad + ss;
    if (h < 0 || h >= f.h || w < 0 || w >= f.w) continue;
    for (int c = cb * f.cons_tile_k; c < min(f.c, (cb + 1) * f.cons_tile_k); ++c) {
      int64_t idx = ((img * f.h + h) * f.w + w) * f.c + c;
      float v = in[idx];
      count_mismatch(mismatches, v, value0(a.epoch, idx) + in_level);
      acc += v;
    }
  }
  if (active)
    for (int co = 0; co < cout; ++co) out[o * cout + co] = acc + float(co);
  if constexpr (S::num_outputs > 0) s.post(a);
}

}  // namespace bt
