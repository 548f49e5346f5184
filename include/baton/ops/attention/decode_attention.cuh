// baton/ops/attention/decode_attention.cuh — the attention of a decode step: m <= 16 new tokens per
// sequence against a KV cache, split over the keys (split-KV), then the parts combined. Used by
// baton::ops::Attention for decode shapes (attention.cuh); the kernels are small and instantiated
// where the op is (no CUTLASS).
//
//   decode_attention_kernel<MaxM>  grid (parts, heads, batch), 128 threads (4 warps): one (sequence,
//       head) and one part of its keys. Query i of the m new tokens sits at position old + i, old =
//       kv_len - m, and attends keys 0..old + i (causal, aligned to the cache's end). Keys below old
//       come from the caches, the new ones from the QKV GEMM's output, so no part reads a cache row
//       that this step writes; part 0 also appends the new K and V rows to the caches (rows
//       old..kv_len-1). Each warp walks every 4th key of the part, kKeysPerLoad keys a step, with a
//       running softmax per query (a lane holds 4 of the 128 dimensions and the queries in
//       registers): the next step's keys are loaded before this step's are scored, the step's
//       dot products are reduced across the warp together (independent shuffles, not one chain per
//       key), and the running maximum is updated once per step. Two keys a step is the measured
//       best: four or eight hold more registers and fewer CTAs stay resident (docs/attention.md).
//       The warps' states are merged through shared memory. One part: O in bf16 (padding rows m..m_pad-1 zeroed);
//       several: each part's normalized O (fp32) and log-sum-exp.
//   decode_combine_kernel           grid (m_pad, heads, batch), 128 threads: O = the parts weighted by
//       exp(lse_p - max lse), padding rows zeroed.
//
// Both start with griddepcontrol.wait (cudaGridDependencySynchronize): launched with PDL behind the
// kernel that writes their input, they wait for it to complete and flush; launched plainly it returns
// at once. Memory-bound by design: per key, 512 bytes of K and V against 4 m dot products of 128.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace baton::ops::decode {

inline constexpr int kHeadDim = 128;       // the head dim (one lane: 4 dimensions)
inline constexpr int kThreads = 128;       // 4 warps
inline constexpr int kKeysPerLoad = 2;     // keys a warp scores per step (and as many loaded ahead)
inline constexpr int kBlockKeys = 64;      // split-KV's unit (AttentionShape::key_blocks for decode)
inline constexpr int kMaxTokens = 16;      // new tokens per sequence (kAttentionDecodeMaxTokens)

struct Arguments {
  int batch = 0, heads = 0;
  int m = 0;           // new tokens per sequence (1..16)
  int m_pad = 0;       // rows per sequence of qkv and o (m rounded up to 8)
  int kv_len = 0;      // keys per sequence after the append (old keys + m)
  int cache_rows = 0;  // rows per sequence of the caches (>= kv_len)
  int parts = 1;       // split-KV parts per (sequence, head)
  const __nv_bfloat16* qkv = nullptr;  // [batch, m_pad, 3 * heads * 128]: Q | K | V of the new tokens
  __nv_bfloat16* k_cache = nullptr;    // [batch, cache_rows, heads * 128]
  __nv_bfloat16* v_cache = nullptr;    // [batch, cache_rows, heads * 128]
  __nv_bfloat16* o = nullptr;          // [batch, m_pad, heads * 128]
  float* o_part = nullptr;             // parts > 1: [batch, heads, parts, m, 128]
  float* lse_part = nullptr;           // parts > 1: [batch, heads, parts, m]
};

// The key range [begin, end) of `part`: the sequence's 64-key blocks dealt out evenly.
__host__ __device__ inline void part_keys(int kv_len, int parts, int part, int& begin, int& end) {
  const int blocks = (kv_len + kBlockKeys - 1) / kBlockKeys;
  const int b0 = int(int64_t(part) * blocks / parts), b1 = int(int64_t(part + 1) * blocks / parts);
  begin = b0 * kBlockKeys;
  end = b1 * kBlockKeys < kv_len ? b1 * kBlockKeys : kv_len;
}

// Bytes of the parts' buffers (o_part, lse_part) for `a` (0 with one part).
inline size_t part_bytes(const Arguments& a, size_t& lse_offset) {
  const size_t rows = size_t(a.batch) * a.heads * a.parts * a.m;
  lse_offset = rows * kHeadDim * sizeof(float);
  return a.parts > 1 ? lse_offset + rows * sizeof(float) : 0;
}

namespace detail {
__device__ inline void load4(const __nv_bfloat16* p, float (&v)[4]) {
  const uint2 raw = *reinterpret_cast<const uint2*>(p);
  const __nv_bfloat162 lo = *reinterpret_cast<const __nv_bfloat162*>(&raw.x);
  const __nv_bfloat162 hi = *reinterpret_cast<const __nv_bfloat162*>(&raw.y);
  const float2 a = __bfloat1622float2(lo), b = __bfloat1622float2(hi);
  v[0] = a.x;
  v[1] = a.y;
  v[2] = b.x;
  v[3] = b.y;
}
}  // namespace detail

template <int MaxM>
__global__ void __launch_bounds__(kThreads) decode_attention_kernel(const Arguments a) {
  static_assert(MaxM >= 1 && MaxM <= kMaxTokens, "decode_attention_kernel: 1..16 queries");
  constexpr int K = kKeysPerLoad;
  cudaGridDependencySynchronize();
  const int part = int(blockIdx.x), h = int(blockIdx.y), b = int(blockIdx.z);
  const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  const int W = a.heads * kHeadDim, ld = 3 * W, old = a.kv_len - a.m;
  const __nv_bfloat16* qkv_b = a.qkv + size_t(b) * a.m_pad * ld;
  const size_t cache_b = size_t(b) * a.cache_rows * W + size_t(h) * kHeadDim;
  if (part == 0)
    for (int idx = int(threadIdx.x); idx < a.m * (kHeadDim / 8); idx += kThreads) {
      const int r = idx / (kHeadDim / 8), c = (idx % (kHeadDim / 8)) * 8;
      const __nv_bfloat16* src = qkv_b + size_t(r) * ld + h * kHeadDim + c;
      const size_t dst = cache_b + size_t(old + r) * W + c;
      *reinterpret_cast<uint4*>(a.k_cache + dst) = *reinterpret_cast<const uint4*>(src + W);
      *reinterpret_cast<uint4*>(a.v_cache + dst) = *reinterpret_cast<const uint4*>(src + 2 * W);
    }
  __shared__ float acc_s[4][MaxM][kHeadDim];
  __shared__ float mx_s[4][MaxM], l_s[4][MaxM];
  const float scale = rsqrtf(float(kHeadDim));
  float q[MaxM][4];
#pragma unroll
  for (int i = 0; i < MaxM; ++i) {
    float t[4] = {0.f, 0.f, 0.f, 0.f};
    if (i < a.m) detail::load4(qkv_b + size_t(i) * ld + h * kHeadDim + lane * 4, t);
#pragma unroll
    for (int d = 0; d < 4; ++d) q[i][d] = t[d] * scale;
  }
  float mx[MaxM], l[MaxM], acc[MaxM][4];
#pragma unroll
  for (int i = 0; i < MaxM; ++i) {
    mx[i] = -INFINITY;
    l[i] = 0.f;
    acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.f;
  }
  int begin = 0, end = 0;
  part_keys(a.kv_len, a.parts, part, begin, end);
  auto load = [&](int j, float (&kf)[4], float (&vf)[4]) {
    if (j < end) {
      const __nv_bfloat16* kr = j < old ? a.k_cache + cache_b + size_t(j) * W : qkv_b + size_t(j - old) * ld + W + h * kHeadDim;
      const __nv_bfloat16* vr = j < old ? a.v_cache + cache_b + size_t(j) * W : qkv_b + size_t(j - old) * ld + 2 * W + h * kHeadDim;
      detail::load4(kr + lane * 4, kf);
      detail::load4(vr + lane * 4, vf);
    } else {
      kf[0] = kf[1] = kf[2] = kf[3] = 0.f;
      vf[0] = vf[1] = vf[2] = vf[3] = 0.f;
    }
  };
  float kf[K][4], vf[K][4], kn[K][4], vn[K][4];
  int j0 = begin + warp;
#pragma unroll
  for (int u = 0; u < K; ++u) load(j0 + 4 * u, kf[u], vf[u]);
  for (; j0 < end; j0 += 4 * K) {
    const int jn = j0 + 4 * K;
#pragma unroll
    for (int u = 0; u < K; ++u) load(jn + 4 * u, kn[u], vn[u]);  // next group in flight
    float s[MaxM][K];
#pragma unroll
    for (int i = 0; i < MaxM; ++i)
#pragma unroll
      for (int u = 0; u < K; ++u)
        s[i][u] = q[i][0] * kf[u][0] + q[i][1] * kf[u][1] + q[i][2] * kf[u][2] + q[i][3] * kf[u][3];
#pragma unroll
    for (int off = 16; off > 0; off /= 2)
#pragma unroll
      for (int i = 0; i < MaxM; ++i)
#pragma unroll
        for (int u = 0; u < K; ++u) s[i][u] += __shfl_xor_sync(0xffffffffu, s[i][u], off);
#pragma unroll
    for (int i = 0; i < MaxM; ++i) {
      float nm = mx[i];
#pragma unroll
      for (int u = 0; u < K; ++u) {
        const int j = j0 + 4 * u;
        if (!(j < end && j <= old + i)) s[i][u] = -INFINITY;
        nm = fmaxf(nm, s[i][u]);
      }
      if (nm != -INFINITY) {
        const float corr = __expf(mx[i] - nm);
        float ps = 0.f, pv[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
        for (int u = 0; u < K; ++u) {
          const float p = __expf(s[i][u] - nm);
          ps += p;
#pragma unroll
          for (int d = 0; d < 4; ++d) pv[d] += p * vf[u][d];
        }
        l[i] = l[i] * corr + ps;
#pragma unroll
        for (int d = 0; d < 4; ++d) acc[i][d] = acc[i][d] * corr + pv[d];
        mx[i] = nm;
      }
    }
#pragma unroll
    for (int u = 0; u < K; ++u)
#pragma unroll
      for (int d = 0; d < 4; ++d) {
        kf[u][d] = kn[u][d];
        vf[u][d] = vn[u][d];
      }
  }
#pragma unroll
  for (int i = 0; i < MaxM; ++i) {
    if (lane == 0) {
      mx_s[warp][i] = mx[i];
      l_s[warp][i] = l[i];
    }
#pragma unroll
    for (int d = 0; d < 4; ++d) acc_s[warp][i][lane * 4 + d] = acc[i][d];
  }
  __syncthreads();
  const int d = int(threadIdx.x);
  __nv_bfloat16* o_b = a.o + size_t(b) * a.m_pad * W + size_t(h) * kHeadDim;
  for (int i = 0; i < a.m; ++i) {
    float M = -INFINITY;
    for (int w = 0; w < 4; ++w) M = fmaxf(M, mx_s[w][i]);
    float L = 0.f, O = 0.f;
    if (M != -INFINITY)
      for (int w = 0; w < 4; ++w) {
        const float f = mx_s[w][i] == -INFINITY ? 0.f : __expf(mx_s[w][i] - M);
        L += l_s[w][i] * f;
        O += acc_s[w][i][d] * f;
      }
    const float out = L > 0.f ? O / L : 0.f;
    if (a.parts == 1) o_b[size_t(i) * W + d] = __float2bfloat16(out);
    else {
      const size_t row = ((size_t(b) * a.heads + h) * a.parts + part) * a.m + i;
      a.o_part[row * kHeadDim + d] = out;
      if (d == 0) a.lse_part[row] = L > 0.f ? M + __logf(L) : -INFINITY;
    }
  }
  if (a.parts == 1)
    for (int i = a.m; i < a.m_pad; ++i) o_b[size_t(i) * W + d] = __float2bfloat16(0.f);
}

__global__ void __launch_bounds__(kThreads) decode_combine_kernel(const Arguments a) {
  cudaGridDependencySynchronize();
  const int i = int(blockIdx.x), h = int(blockIdx.y), b = int(blockIdx.z), d = int(threadIdx.x);
  const int W = a.heads * kHeadDim;
  __nv_bfloat16* out = a.o + (size_t(b) * a.m_pad + i) * W + size_t(h) * kHeadDim + d;
  if (i >= a.m) {  // padding rows
    *out = __float2bfloat16(0.f);
    return;
  }
  const size_t row0 = (size_t(b) * a.heads + h) * a.parts * a.m + i;  // part p: row0 + p * m
  float M = -INFINITY;
  for (int p = 0; p < a.parts; ++p) M = fmaxf(M, a.lse_part[row0 + size_t(p) * a.m]);
  float L = 0.f, O = 0.f;
  if (M != -INFINITY)
    for (int p = 0; p < a.parts; ++p) {
      const float lse = a.lse_part[row0 + size_t(p) * a.m];
      const float w = lse == -INFINITY ? 0.f : __expf(lse - M);
      L += w;
      O += w * a.o_part[(row0 + size_t(p) * a.m) * kHeadDim + d];
    }
  *out = __float2bfloat16(L > 0.f ? O / L : 0.f);
}

// The kernel for m new tokens: the smallest instantiation of 1, 2, 4, 8, 16 queries that holds m.
using AttentionKernel = void (*)(const Arguments);
inline AttentionKernel attention_kernel_for(int m) {
  if (m <= 1) return decode_attention_kernel<1>;
  if (m <= 2) return decode_attention_kernel<2>;
  if (m <= 4) return decode_attention_kernel<4>;
  if (m <= 8) return decode_attention_kernel<8>;
  return decode_attention_kernel<16>;
}

}  // namespace baton::ops::decode
