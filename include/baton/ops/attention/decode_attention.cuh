// baton/ops/attention/decode_attention.cuh — the attention of a decode step: m <= 16 new tokens per
// sequence against a KV cache, split over the keys (split-KV), then the parts combined. Used by
// baton::ops::Attention for decode shapes (attention.cuh); the kernels are small and instantiated
// where the op is (no CUTLASS).
//
//   decode_attention_kernel<MinCtasPerSm>  grid (parts, heads, batch), 128 threads (4 warps): one
//       (sequence, head) and one part of its keys, on tensor cores. Query i of the m new tokens sits at
//       position old + i, old = kv_len - m, and attends keys 0..old + i (causal, aligned to the cache's
//       end). Keys below old come from the caches, the new ones from the QKV GEMM's output, so no part
//       reads a cache row that this step writes; part 0 also appends the new K and V rows to the caches
//       (rows old..kv_len-1). A warp takes 16 keys at a time (the part's 16-key blocks dealt out to
//       the 4 warps in turn): S = Q Kt is 16 mma.sync m16n8k16 with the m <= 16 queries as the 16 rows,
//       P V 16 more, the running softmax on the accumulators. The warps' states merge through shared
//       memory. One part: O in bf16 (padding rows m..m_pad-1 zeroed); several: each part's normalized O
//       (fp32) and log-sum-exp.
//   decode_combine_kernel           grid (m_pad, heads, batch), 128 threads: O = the parts weighted by
//       exp(lse_p - max lse), padding rows zeroed.
//
// Both start with griddepcontrol.wait (cudaGridDependencySynchronize): launched with PDL behind the
// kernel that writes their input, they wait for it to complete and flush; launched plainly it returns
// at once. Memory-bound by design: per key, 512 bytes of K and V against 2 x 16 x 128 multiply-adds
// on tensor cores, whatever m is.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace baton::ops::decode {

inline constexpr int kHeadDim = 128;       // the head dim
inline constexpr int kThreads = 128;       // 4 warps
inline constexpr int kBlockKeys = 64;      // split-KV's unit (AttentionShape::key_blocks for decode)
inline constexpr int kMaxTokens = 16;      // new tokens per sequence (kAttentionDecodeMaxTokens)
// decode_attention_kernel's residency: __launch_bounds__ asks for this many CTAs per SM (167 registers,
// no spills; without the bound 193 and 2 CTAs per SM, slower in the sweep: docs/attention.md). The
// split-KV rule aims at one wave of them (attention.hpp, kAttentionDecodeCtasPerSm; attention.cuh
// checks the two agree).
inline constexpr int kCtasPerSm = 3;

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
// mma.sync m16n8k16, bf16 inputs, fp32 accumulators: d += a * b. Fragments as PTX lays them out
// (g = lane / 4, q = lane % 4): a[0] row g, k 2q..2q+1; a[1] row g + 8; a[2] row g, k 2q+8..; a[3] row
// g + 8, k 2q+8..; b[0] k 2q..2q+1, column g; b[1] k 2q+8..; d[0..1] row g, columns 2q..2q+1; d[2..3]
// row g + 8.
__device__ inline void mma_bf16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// The transpose of the 8 x 8 bf16 matrix whose row g, columns 2q..2q+1 this lane holds.
__device__ inline uint32_t transpose8x8(uint32_t x) {
  uint32_t y;
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;\n" : "=r"(y) : "r"(x));
  return y;
}
__device__ inline uint32_t pack_bf16(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&v);
}
}  // namespace detail

// decode_attention_kernel: a warp takes 16 keys at a time (the part's 16-key blocks dealt out to the 4
// warps in turn): S = Q Kt is 2 x 8 mma.sync m16n8k16 (the m <= 16 queries are the 16 rows), P V is 16
// more, so the work per key does not grow with m. (It replaced a SIMT kernel whose warps reduced each
// key's dot product over 32 lanes, 5 shuffles per key per query, and which lost to it at every m in
// the sweep of docs/attention.md, "Decode on tensor cores".) Every operand comes from global memory in
// 16-byte loads, one key row segment per lane, because the order of the reduced index is free:
//   * Q Kt reduces over the head dim, so k-step 2s + e of the MMA takes dims 32s + 8q + 4e + {0..3}
//     (lane q of a quad): a lane's 16 bytes of Q and of K at dims 32s + 8q.. feed two k-steps as is;
//   * P V reduces over the keys, in their natural order (P is S's accumulator, repacked to bf16, as in
//     FlashAttention-2); its B operand needs two keys per register, so a lane's 16 bytes of V (key g,
//     dims 32s + 8q..) are 4 8 x 8 tiles transposed in registers (movmatrix), and output column c of
//     n-tile 4s + e is dim 32s + 8(c / 2) + 2e + c % 2: a lane ends with 8 consecutive dims per s.
// The softmax runs on the accumulators (a row's 16 scores sit in the 4 lanes of a quad: 2 shuffles
// for its max); the warps' states merge through shared memory.
// MinCtasPerSm: __launch_bounds__'s residency request; the op runs kCtasPerSm, the sweep also 1.
template <int MinCtasPerSm>
__global__ void __launch_bounds__(kThreads, MinCtasPerSm) decode_attention_kernel(const Arguments a) {
  cudaGridDependencySynchronize();
  const int part = int(blockIdx.x), h = int(blockIdx.y), b = int(blockIdx.z);
  const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32, g = lane / 4, q = lane % 4;
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
  __shared__ float acc_s[4][16][kHeadDim];
  __shared__ float mx_s[4][16], l_s[4][16];
  // Q as the A operand of the 8 k-steps (rows g and g + 8; rows >= m are zeros).
  uint32_t qa[8][4];
  {
    const uint4 zero = make_uint4(0u, 0u, 0u, 0u);
#pragma unroll
    for (int s = 0; s < 4; ++s) {
      const int c = 32 * s + 8 * q;
      const uint4 x = g < a.m ? *reinterpret_cast<const uint4*>(qkv_b + size_t(g) * ld + h * kHeadDim + c) : zero;
      const uint4 y = g + 8 < a.m ? *reinterpret_cast<const uint4*>(qkv_b + size_t(g + 8) * ld + h * kHeadDim + c) : zero;
      qa[2 * s][0] = x.x; qa[2 * s][1] = y.x; qa[2 * s][2] = x.y; qa[2 * s][3] = y.y;
      qa[2 * s + 1][0] = x.z; qa[2 * s + 1][1] = y.z; qa[2 * s + 1][2] = x.w; qa[2 * s + 1][3] = y.w;
    }
  }
  const float c_log2 = rsqrtf(float(kHeadDim)) * 1.4426950408889634f;  // scores -> log2 units
  float mx[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};  // rows g, g + 8 (this lane's share of l)
  float o[16][4];
#pragma unroll
  for (int j = 0; j < 16; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.f;
  int begin = 0, end = 0;
  part_keys(a.kv_len, a.parts, part, begin, end);
  const int rows[2] = {g, g + 8};
  for (int k0 = begin + 16 * warp; k0 < end; k0 += 64) {
    // This lane's key rows: k0 + g (n-tile 0) and k0 + 8 + g (n-tile 1), dims 32s + 8q.. per s.
    uint4 kr[2][4], vr[2][4];
#pragma unroll
    for (int t = 0; t < 2; ++t) {
      const int j = k0 + 8 * t + g;
      const __nv_bfloat16* kp = nullptr;
      const __nv_bfloat16* vp = nullptr;
      if (j < end) {
        kp = j < old ? a.k_cache + cache_b + size_t(j) * W : qkv_b + size_t(j - old) * ld + W + h * kHeadDim;
        vp = j < old ? a.v_cache + cache_b + size_t(j) * W : qkv_b + size_t(j - old) * ld + 2 * W + h * kHeadDim;
      }
#pragma unroll
      for (int s = 0; s < 4; ++s) {
        kr[t][s] = kp ? *reinterpret_cast<const uint4*>(kp + 32 * s + 8 * q) : make_uint4(0u, 0u, 0u, 0u);
        vr[t][s] = vp ? *reinterpret_cast<const uint4*>(vp + 32 * s + 8 * q) : make_uint4(0u, 0u, 0u, 0u);
      }
    }
    float sc[2][4];  // n-tile t: keys k0 + 8t + 2q.. for rows g (0, 1) and g + 8 (2, 3)
#pragma unroll
    for (int t = 0; t < 2; ++t) {
      sc[t][0] = sc[t][1] = sc[t][2] = sc[t][3] = 0.f;
#pragma unroll
      for (int s = 0; s < 4; ++s) {
        detail::mma_bf16(sc[t], qa[2 * s], kr[t][s].x, kr[t][s].y);
        detail::mma_bf16(sc[t], qa[2 * s + 1], kr[t][s].z, kr[t][s].w);
      }
    }
    // Mask (past the part, or after the query's own position: causal), then the running softmax.
    float corr[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int row = rows[r];
      float bm = -INFINITY;
#pragma unroll
      for (int t = 0; t < 2; ++t)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int j = k0 + 8 * t + 2 * q + e;
          float& x = sc[t][2 * r + e];
          x = (row < a.m && j < end && j <= old + row) ? x * c_log2 : -INFINITY;
          bm = fmaxf(bm, x);
        }
      bm = fmaxf(bm, __shfl_xor_sync(0xffffffffu, bm, 1));
      bm = fmaxf(bm, __shfl_xor_sync(0xffffffffu, bm, 2));
      const float nm = fmaxf(mx[r], bm);
      corr[r] = nm == -INFINITY ? 1.f : exp2f(mx[r] - nm);
      float ps = 0.f;
#pragma unroll
      for (int t = 0; t < 2; ++t)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          float& x = sc[t][2 * r + e];
          x = nm == -INFINITY ? 0.f : exp2f(x - nm);
          ps += x;
        }
      l[r] = l[r] * corr[r] + ps;
      mx[r] = nm;
    }
    // P as the A operand (keys k0..k0+15 are the reduced index, in order).
    const uint32_t pa[4] = {detail::pack_bf16(sc[0][0], sc[0][1]), detail::pack_bf16(sc[0][2], sc[0][3]),
                            detail::pack_bf16(sc[1][0], sc[1][1]), detail::pack_bf16(sc[1][2], sc[1][3])};
#pragma unroll
    for (int s = 0; s < 4; ++s) {
      const uint32_t v0[4] = {vr[0][s].x, vr[0][s].y, vr[0][s].z, vr[0][s].w};
      const uint32_t v1[4] = {vr[1][s].x, vr[1][s].y, vr[1][s].z, vr[1][s].w};
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float (&d)[4] = o[4 * s + e];
        d[0] *= corr[0];
        d[1] *= corr[0];
        d[2] *= corr[1];
        d[3] *= corr[1];
        detail::mma_bf16(d, pa, detail::transpose8x8(v0[e]), detail::transpose8x8(v1[e]));
      }
    }
  }
  // This warp's state to shared memory: l summed over the quad; lane (g, q) holds dims 32s + 8q + 2e..
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 1);
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 2);
    if (q == 0) {
      mx_s[warp][rows[r]] = mx[r];  // log2 units; the merge below works in them too
      l_s[warp][rows[r]] = l[r];
    }
#pragma unroll
    for (int s = 0; s < 4; ++s)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        acc_s[warp][rows[r]][32 * s + 8 * q + 2 * e] = o[4 * s + e][2 * r];
        acc_s[warp][rows[r]][32 * s + 8 * q + 2 * e + 1] = o[4 * s + e][2 * r + 1];
      }
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
        const float f = mx_s[w][i] == -INFINITY ? 0.f : exp2f(mx_s[w][i] - M);
        L += l_s[w][i] * f;
        O += acc_s[w][i][d] * f;
      }
    const float out = L > 0.f ? O / L : 0.f;
    if (a.parts == 1) o_b[size_t(i) * W + d] = __float2bfloat16(out);
    else {
      const size_t row = ((size_t(b) * a.heads + h) * a.parts + part) * a.m + i;
      a.o_part[row * kHeadDim + d] = out;
      // the combine weighs parts by exp(lse): natural-log units
      if (d == 0) a.lse_part[row] = L > 0.f ? (M + __log2f(L)) * 0.6931471805599453f : -INFINITY;
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

// The kernel the op launches (for every m: one instantiation holds 1..16 queries).
using AttentionKernel = void (*)(const Arguments);
inline AttentionKernel attention_kernel() { return decode_attention_kernel<kCtasPerSm>; }

}  // namespace baton::ops::decode
