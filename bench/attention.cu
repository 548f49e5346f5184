// bench/attention.cu — the attention-chain benchmark (issue 19, docs/attention.md): the prefill block
// QKV GEMM -> causal FMHA -> O-proj GEMM of GPT-3 175B TP8 (hidden 12288, 12 heads of 128) and
// LLaMA-65B TP8 (hidden 8192, 8 heads of 128), baton::ops::CompiledAttention against the same
// CUTLASS sm90 kernels without semaphores. Variants, every one timed in a CUDA graph:
//   baton-auto         the op's plan (plan_attention picks none or kblock per edge, and each GEMM
//                      without edges runs flat in the MLP cost model's form)
//   baton-none         the op with both edges none: both GEMMs flat in their planned forms
//                      (baton::mlp_kernels' GEMM2 forms), the FMHA and O-proj PDL-launched
//   cutlass-pdl-graph  the chain's own three kernels (128 x 128 GEMMs, the FMHA) PDL-launched without
//                      edges (the FMHA and O-proj run griddepcontrol.wait before their first load of
//                      the producer's output): BENCHMARKS.md's baseline 3 for the kblock rows
//   baton-kblock       both edges kblock (batonc's per-key-block / per-k-block waits)
//   baton-kblock-none  qkv->attention kblock, attention->oproj none (PDL)
//   baton-none-kblock  qkv->attention none (PDL), attention->oproj kblock
//   cutlass-graph      the same three kernels launched one after the other without PDL (baseline 2)
//   cutlass-stream     the same, enqueued on a stream without a graph (baseline 1; only on request)
//   bound-concurrent   the same three kernels with no dependency between them, on three streams of
//                      a graph, joined after each pass: the overlap bound (BENCHMARKS.md baseline 6;
//                      not a baseline: it computes from inputs already in place)
// cutlass-pdl-graph, cutlass-graph, cutlass-stream and bound-concurrent come from a chain this bench
// builds itself from the library's compiled kernels (the ones the op's kblock edges run, with the
// op's arguments), without edges; nothing is added to the op. Decode shapes (--phase, default both:
// batch x new tokens x KV length against a K/V cache) run baton-auto (the op's split-KV plan) and
// baton-split1 (one part); their edges are always PDL. The PyTorch baselines (cuBLASLt + SDPA flash /
// cuDNN in a graph) come from bench/attention/sdpa_baseline.py in the same device call;
// bench/attention/merge.py joins both into attention-<workload>.csv.
//
// Layout: every tensor has padded_seq() rows per sequence (the op's contract); X's padding rows are
// random too, and only the real rows are compared.
//
// Check (--check on): Y against a GPU fp32 reference computed by this file's kernels: QKV = X W_qkv^T
// rounded to bf16 (as the GEMM stores it), causal attention per head in fp32 with O rounded to bf16,
// Y = O W_o^T. Pass: ||Y - ref|| / ||ref|| < 1e-2 over the real rows and no NaN. QKV, O and Y are
// NaN-poisoned before the run that is checked; each variant is checked once before its timing and
// once after it (one more replay of its graph), and `correct` is 1 only when both pass. With
// --check off nothing is compared and every row says correct 0 (an unchecked row is not a result).
//
// Timing (BENCHMARKS.md, Method): a repetition is one replay of a graph of --iters passes (default:
// enough passes for about 1 ms of floor time, 2 to 20), timed with CUDA events; 5 untimed
// repetitions first, then median, min and max of --reps (>= 50) repetitions, divided by the passes.
// A shape's variants are built and checked first, then timed in interleaved rounds, one repetition
// of each per round (bench/common/rounds.hpp; --order in-turn: one variant after another).
// Inputs are not rotated: at the workloads' shapes W_qkv + W_o alone (151 MB GPT-3, 67 MB LLaMA)
// exceed the H200's 60 MB L2, and the op binds its pointers at create().
//
//   baton_bench_attention --workload gpt3 [--batch 1,4,8] [--seq 512,1024,2048] [--out-dir DIR]
//   baton_bench_attention --batch 3 --seq 1000 --heads 4 --hidden 4096      (workload custom)
//   baton_bench_attention --workload gpt3 --timeline t.json --timeline-shape 1x2048
#include <cuda_runtime.h>

#include <algorithm>
#include <optional>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "baton/ops/attention/attention.cuh"
#include "common/cli.hpp"
#include "common/device_check.cuh"
#include "common/device_memory.cuh"
#include "common/env.hpp"
#include "common/graph.cuh"
#include "common/report.hpp"
#include "common/timing.cuh"

using namespace baton;
using bf16 = ::cutlass::bfloat16_t;
using Op = ops::CompiledAttention;
namespace ak = ops::attention_kernels;

namespace {

constexpr int kHeadDim = ops::kAttentionHeadDim;  // 128: the only head dim of the kernel
constexpr double kRelTol = 1e-2;

// ---- inputs and the fp32 reference ---------------------------------------------------------------

// c[m, n] = sum_k a[m, k] * b[n, k] in fp32 (both operands K-contiguous, as nn.Linear stores its
// weights); round_bf16: store bf16-rounded values (what the kernels store). 64 x 64 tiles of 256
// threads, 4 x 4 outputs each; grid (row tiles, column tiles).
template <class TA>
__global__ void __launch_bounds__(256) ref_gemm_nt(const TA* __restrict__ a, const bf16* __restrict__ b, float* __restrict__ c,
                                                   int m, int n, int k, bool round_bf16) {
  __shared__ __align__(16) float as[16][64 + 4];
  __shared__ __align__(16) float bs[16][64 + 4];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int row0 = blockIdx.x * 64, col0 = blockIdx.y * 64;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < k; k0 += 16) {
    for (int i = threadIdx.x; i < 64 * 16; i += 256) {
      const int r = i / 16, kk = i % 16, gk = k0 + kk;
      const int gr = row0 + r, gc = col0 + r;
      as[kk][r] = (gr < m && gk < k) ? float(a[size_t(gr) * k + gk]) : 0.f;
      bs[kk][r] = (gc < n && gk < k) ? float(b[size_t(gc) * k + gk]) : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < 16; ++kk) {
      const float4 av = *reinterpret_cast<const float4*>(&as[kk][ty * 4]);
      const float4 bv = *reinterpret_cast<const float4*>(&bs[kk][tx * 4]);
      const float ar[4] = {av.x, av.y, av.z, av.w}, br[4] = {bv.x, bv.y, bv.z, bv.w};
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] += ar[i] * br[j];
    }
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const int r = row0 + ty * 4 + i, col = col0 + tx * 4 + j;
      if (r < m && col < n) c[size_t(r) * n + col] = round_bf16 ? float(bf16(acc[i][j])) : acc[i][j];
    }
}

__device__ float block_reduce_128(float v, bool is_max, float* scratch) {
  for (int off = 16; off > 0; off /= 2) {
    const float o = __shfl_xor_sync(0xffffffffu, v, off);
    v = is_max ? fmaxf(v, o) : v + o;
  }
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  float r = scratch[0];
  for (int w = 1; w < 4; ++w) r = is_max ? fmaxf(r, scratch[w]) : r + scratch[w];
  __syncthreads();
  return r;
}

// Causal attention in fp32, one block of 128 threads (one per head dimension) per (query, head,
// sequence), online softmax over chunks of 128 keys. qkv: [batch, padded, 3 * heads * 128] (the
// reference QKV, bf16-rounded values); o: [batch, padded, heads * 128], real query rows written
// bf16-rounded (what the FMHA stores). Grid (seq, heads, batch).
__global__ void __launch_bounds__(128) ref_attention(const float* __restrict__ qkv, float* __restrict__ o, int padded, int heads) {
  const int i = blockIdx.x, h = blockIdx.y, b = blockIdx.z, t = threadIdx.x;
  const int W = heads * kHeadDim, ld = 3 * W;
  const float* base = qkv + size_t(b) * padded * ld;
  __shared__ float q[kHeadDim], p[kHeadDim], scratch[4];
  q[t] = base[size_t(i) * ld + h * kHeadDim + t] * (1.0f / sqrtf(float(kHeadDim)));
  __syncthreads();
  float m = -INFINITY, l = 0.f, acc = 0.f;
  for (int j0 = 0; j0 <= i; j0 += kHeadDim) {
    const int j = j0 + t;
    float s = -INFINITY;
    if (j <= i) {
      const float* kr = base + size_t(j) * ld + W + h * kHeadDim;
      float d = 0.f;
      for (int c = 0; c < kHeadDim; ++c) d += q[c] * kr[c];
      s = d;
    }
    const float m_new = fmaxf(m, block_reduce_128(s, true, scratch));
    const float pj = j <= i ? expf(s - m_new) : 0.f;
    p[t] = pj;
    const float sum = block_reduce_128(pj, false, scratch);  // its barriers also publish p[]
    const float corr = expf(m - m_new);                      // 0 on the first chunk (m = -inf)
    l = l * corr + sum;
    acc *= corr;
    const int jn = min(kHeadDim, i - j0 + 1);
    for (int jj = 0; jj < jn; ++jj) acc += p[jj] * base[size_t(j0 + jj) * ld + 2 * W + h * kHeadDim + t];
    m = m_new;
    __syncthreads();  // p[] is rewritten by the next chunk
  }
  o[(size_t(b) * padded + i) * W + h * kHeadDim + t] = float(bf16(acc / l));
}

// Decode attention in fp32, one block of 128 threads per (new token, head, sequence): query i of the
// m new tokens (position old + i) against keys 0..old + i, keys below old from the caches (bf16,
// [batch, kv, W]), the new ones from the reference QKV ([batch, m_pad, 3W], bf16-rounded values).
// o: [batch, m_pad, W], real rows written bf16-rounded.
__global__ void __launch_bounds__(128) ref_decode_attention(const float* __restrict__ qkv, const bf16* __restrict__ kc,
                                                            const bf16* __restrict__ vc, float* __restrict__ o, int m_pad,
                                                            int heads, int kv, int old) {
  const int i = blockIdx.x, h = blockIdx.y, b = blockIdx.z, t = threadIdx.x;
  const int W = heads * kHeadDim, ld = 3 * W;
  const float* base = qkv + size_t(b) * m_pad * ld;
  auto key = [&](int j, int c, bool v) -> float {
    if (j < old) return float((v ? vc : kc)[(size_t(b) * kv + j) * W + h * kHeadDim + c]);
    return base[size_t(j - old) * ld + (v ? 2 : 1) * W + h * kHeadDim + c];
  };
  __shared__ float q[kHeadDim], p[kHeadDim], scratch[4];
  q[t] = base[size_t(i) * ld + h * kHeadDim + t] * (1.0f / sqrtf(float(kHeadDim)));
  __syncthreads();
  const int n = old + i + 1;
  float m = -INFINITY, l = 0.f, acc = 0.f;
  for (int j0 = 0; j0 < n; j0 += kHeadDim) {
    const int j = j0 + t;
    float s = -INFINITY;
    if (j < n) {
      float d = 0.f;
      for (int c = 0; c < kHeadDim; ++c) d += q[c] * key(j, c, false);
      s = d;
    }
    const float m_new = fmaxf(m, block_reduce_128(s, true, scratch));
    const float pj = j < n ? expf(s - m_new) : 0.f;
    p[t] = pj;
    const float sum = block_reduce_128(pj, false, scratch);
    const float corr = expf(m - m_new);
    l = l * corr + sum;
    acc *= corr;
    const int jn = min(kHeadDim, n - j0);
    for (int jj = 0; jj < jn; ++jj) acc += p[jj] * key(j0 + jj, t, true);
    m = m_new;
    __syncthreads();
  }
  o[(size_t(b) * m_pad + i) * W + h * kHeadDim + t] = float(bf16(acc / l));
}

// ---- the three kernels without baton's waits ------------------------------------------------------

// A chain of the op's three stages without edges (each CTA still takes its tile from a ticket),
// launched from the library's kernels the op uses when both edges are none, with the op's
// arguments (ops::attention_qkv_arguments, _fmha_, _oproj_). Without PDL the FMHA's and
// O-proj's griddepcontrol.wait return at once: their producer has finished.
struct PlainAttention {
  Chain chain;
  bench::device_buffer ws;
  std::vector<StageLaunch> launches;  // qkv, attention, oproj

  [[nodiscard]] status build(const ops::AttentionShape& s, const ops::AttentionTensors& t, cudaStream_t stream) {
    using ak::FmhaConfig;
    using ak::GemmConfig;
    using ak::PlainStage;
    const auto qa = ops::attention_qkv_arguments(s, t);
    const auto fa = ops::attention_fmha_arguments(s, t);
    const auto oa = ops::attention_oproj_arguments(s, t);
    BATON_TRY((sm90::Gemm<GemmConfig, PlainStage>::can_implement(qa).with_context("plain qkv")));
    BATON_TRY((sm90::Fmha<FmhaConfig, PlainStage>::can_implement(fa).with_context("plain attention")));
    BATON_TRY((sm90::Gemm<GemmConfig, PlainStage>::can_implement(oa).with_context("plain oproj")));
    auto sq = chain.add_stage("qkv", sm90::tile_grid<GemmConfig>(qa.m, qa.n, qa.batch), RowMajor{});
    auto sa = chain.add_stage("attention", sm90::fmha_tile_grid<FmhaConfig>(fa.batch, fa.seq, fa.heads), RowMajor{});
    auto so = chain.add_stage("oproj", sm90::tile_grid<GemmConfig>(oa.m, oa.n, oa.batch), RowMajor{});
    BATON_TRY(chain.validate());
    BATON_TRY(bench::device_alloc(ws, chain.workspace_bytes(), stream, "plain chain workspace"));
    BATON_TRY(initialize_workspace(chain, ws.data(), chain.workspace_bytes(), stream));
    const size_t bytes = chain.workspace_bytes();
    auto bsq = chain.bind(sq, ws.data(), bytes, outs(), ins());
    auto bsa = chain.bind(sa, ws.data(), bytes, outs(), ins());
    auto bso = chain.bind(so, ws.data(), bytes, outs(), ins());
    if (!bsq.ok()) return bsq.error();
    if (!bsa.ok()) return bsa.error();
    if (!bso.ok()) return bso.error();
    auto lq = ak::Compiled::launch<GemmConfig, PlainStage, sm90::NoGridWait>(bsq.value(), qa);
    auto la = ak::Compiled::launch<FmhaConfig, PlainStage, sm90::GridWaitBeforeLoads>(bsa.value(), fa);
    auto lo = ak::Compiled::launch<GemmConfig, PlainStage, sm90::GridWaitBeforeA>(bso.value(), oa);
    if (!lq.ok()) return lq.error().with_context("plain qkv");
    if (!la.ok()) return la.error().with_context("plain attention");
    if (!lo.ok()) return lo.error().with_context("plain oproj");
    launches = {lq.value(), la.value(), lo.value()};
    return {};
  }
  [[nodiscard]] status enqueue_serial(cudaStream_t stream) { return launch_chain(chain, stream, launches, LaunchSchedule::serial); }
  // PDL-launched: the FMHA and O-proj wait with griddepcontrol.wait before their first load of the
  // producer's output (the op's none edges on these kernels).
  [[nodiscard]] status enqueue_pdl(cudaStream_t stream) { return launch_chain(chain, stream, launches, LaunchSchedule::pdl); }
  // One pass with the three kernels independent: forked from `stream` onto side[0] and side[1]
  // and joined back, so passes do not overlap one another.
  [[nodiscard]] status enqueue_concurrent(cudaStream_t stream, const cudaStream_t side[2], const cudaEvent_t ev[3]) {
    BATON_CUDA_TRY(cudaEventRecord(ev[0], stream));
    BATON_CUDA_TRY(cudaStreamWaitEvent(side[0], ev[0], 0));
    BATON_CUDA_TRY(cudaStreamWaitEvent(side[1], ev[0], 0));
    BATON_TRY(launch_stage(launches[0], stream));
    BATON_TRY(launch_stage(launches[1], side[0]));
    BATON_TRY(launch_stage(launches[2], side[1]));
    BATON_CUDA_TRY(cudaEventRecord(ev[1], side[0]));
    BATON_CUDA_TRY(cudaEventRecord(ev[2], side[1]));
    BATON_CUDA_TRY(cudaStreamWaitEvent(stream, ev[1], 0));
    BATON_CUDA_TRY(cudaStreamWaitEvent(stream, ev[2], 0));
    return {};
  }
  [[nodiscard]] status check_errors(cudaStream_t stream) const { return ::baton::check_errors(chain, ws.data(), stream); }
};

// ---- command line ---------------------------------------------------------------------------------

const char* const kAllVariants[] = {"baton-auto",        "baton-none",        "cutlass-pdl-graph", "baton-kblock",
                                    "baton-kblock-none", "baton-none-kblock", "cutlass-graph",     "cutlass-stream",
                                    "bound-concurrent",  "baton-split1"};
const char* const kDefaultVariants =
    "baton-auto,baton-none,cutlass-pdl-graph,baton-kblock,baton-kblock-none,baton-none-kblock,cutlass-graph,"
    "bound-concurrent,baton-split1";

struct Args {
  std::string workload;  // gpt3 | llama | custom ("" until parsed)
  std::string phase = "both";  // prefill | decode | both
  std::vector<int> batch, seq;
  std::vector<int> decode_batch, new_tokens, kv;  // decode shapes: batch x new tokens x KV length
  int heads = 0, hidden = 0;
  int reps = 50, iters = 0, warmup = 5;  // iters 0: per shape, about 1 ms of floor time (2..20)
  bool interleave = true;  // --order: a shape's variants timed in interleaved rounds (or one after another)
  std::string out_dir = ".";
  std::string timeline;
  int tl_batch = 0, tl_seq = 0;          // 0: the first shape
  std::string tl_policy = "auto";
  bool check = true;
  bool breakdown = true;  // each of the three kernels alone -> attention-<workload>-breakdown.csv
  std::string variants = kDefaultVariants;
};

void usage() {
  std::printf(
      "baton_bench_attention: prefill and decode attention-chain benchmark (baton::ops::CompiledAttention: QKV GEMM ->\n"
      "causal FMHA -> O-proj GEMM) vs the same CUTLASS sm90 kernels without semaphores\n"
      "  --workload gpt3|llama|custom  gpt3: GPT-3 175B TP8, hidden 12288, 12 heads of 128 (default)\n"
      "                                llama: LLaMA-65B TP8, hidden 8192, 8 heads of 128\n"
      "                                custom: --heads and --hidden given (implied by them)\n"
      "  --batch LIST                  sequences per shape, e.g. 1,4,8 (default 1,4,8; custom 1)\n"
      "  --seq LIST                    tokens per sequence, e.g. 512,1024 (default 512,1024,2048; custom: required\n"
      "                                with prefill)\n"
      "  --phase prefill|decode|both   which shapes (default both)\n"
      "  --decode-batch LIST           decode: sequences (default 1,16)\n"
      "  --new-tokens LIST             decode: new tokens per sequence, 1..16 (default 1,2,4)\n"
      "  --kv LIST                     decode: keys per sequence after the step (default 512,1024,2048,8192)\n"
      "  --heads H --hidden N          a custom model: H heads of 128 on this GPU, hidden N = tp * H * 128\n"
      "  --variants LIST               subset of baton-auto,baton-none,cutlass-pdl-graph,baton-kblock,\n"
      "                                baton-kblock-none,baton-none-kblock,cutlass-graph,cutlass-stream,\n"
      "                                bound-concurrent (prefill), baton-split1 (decode: one split-KV part)\n"
      "                                (default: all but cutlass-stream; bound-concurrent is the overlap\n"
      "                                bound, the kernels without dependencies: never counted as a baseline)\n"
      "  --reps N (50, >= 50 for results) --iters N (0: per shape, ~1 ms of floor time, 2..20)\n"
      "  --order interleaved|in-turn   a shape's variants timed in rounds, one repetition of each per round\n"
      "                                (default), or each variant's repetitions together, one after another\n"
      "  --check on|off                compare Y with a GPU fp32 reference (default on; off: rows say correct 0)\n"
      "  --out-dir DIR                 writes DIR/attention-<workload>.csv and .json (default .)\n"
      "  --breakdown 0|1               also time each kernel of the unsynchronized chain alone, in a graph of\n"
      "                                its own: DIR/attention-<workload>-breakdown.csv (default 1)\n"
      "  --timeline FILE               per-tile Perfetto timeline of one shape (the op's trace pointers)\n"
      "  --timeline-shape BxS          its shape (default: the first shape), e.g. 1x2048\n"
      "  --timeline-policy P           auto|none|kblock|kblock-none|none-kblock (default auto)\n"
      "Decode shapes are not measured: the op refuses them (docs/attention.md).\n");
}

bool parse_list(const char* flag, const char* v, int lo, int hi, std::vector<int>& out) {
  out.clear();
  for (auto& f : bench::split_commas(v)) {
    int x = 0;
    if (!bench::parse_int(f.c_str(), lo, hi, x)) {
      std::fprintf(stderr, "baton_bench_attention: bad %s entry '%s' (want integers in [%d, %d], comma-separated)\n", flag,
                   f.c_str(), lo, hi);
      return false;
    }
    out.push_back(x);
  }
  return true;
}

bool parse_policy(const std::string& p, ops::AttentionOptions& o) {
  using P = ops::AttentionEdgePolicy;
  if (p == "auto") o = {};
  else if (p == "none") o.qkv_to_attention = o.attention_to_oproj = P::none;
  else if (p == "kblock") o.qkv_to_attention = o.attention_to_oproj = P::kblock;
  else if (p == "kblock-none") o.qkv_to_attention = P::kblock, o.attention_to_oproj = P::none;
  else if (p == "none-kblock") o.qkv_to_attention = P::none, o.attention_to_oproj = P::kblock;
  else return false;
  return true;
}

// 1: parsed; 0: --help printed; -1: bad input (message printed).
int parse_args(int argc, char** argv, Args& a) {
  constexpr const char* me = "baton_bench_attention";
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (k == "--help" || k == "-h") {
      usage();
      return 0;
    }
    if (i + 1 >= argc) return std::fprintf(stderr, "%s: %s needs a value (--help)\n", me, k.c_str()), -1;
    const char* v = argv[++i];
    if (k == "--workload") {
      a.workload = v;
      if (a.workload != "gpt3" && a.workload != "llama" && a.workload != "custom")
        return std::fprintf(stderr, "%s: --workload gpt3|llama|custom, got '%s'\n", me, v), -1;
    } else if (k == "--batch") {
      if (!parse_list("--batch", v, 1, 65535, a.batch)) return -1;
    } else if (k == "--seq") {
      if (!parse_list("--seq", v, 1, 1 << 20, a.seq)) return -1;
    } else if (k == "--phase") {
      a.phase = v;
      if (a.phase != "prefill" && a.phase != "decode" && a.phase != "both")
        return std::fprintf(stderr, "%s: --phase prefill|decode|both, got '%s'\n", me, v), -1;
    } else if (k == "--decode-batch") {
      if (!parse_list("--decode-batch", v, 1, 65535, a.decode_batch)) return -1;
    } else if (k == "--new-tokens") {
      if (!parse_list("--new-tokens", v, 1, ops::kAttentionDecodeMaxTokens, a.new_tokens)) return -1;
    } else if (k == "--kv") {
      if (!parse_list("--kv", v, 1, 1 << 20, a.kv)) return -1;
    } else if (k == "--heads") {
      if (!bench::parse_int(v, 1, 65535, a.heads)) return std::fprintf(stderr, "%s: bad --heads '%s'\n", me, v), -1;
    } else if (k == "--hidden") {
      if (!bench::parse_int(v, 1, 1 << 20, a.hidden)) return std::fprintf(stderr, "%s: bad --hidden '%s'\n", me, v), -1;
    } else if (k == "--variants") {
      a.variants = v;
      for (auto& f : bench::split_commas(a.variants))
        if (std::none_of(std::begin(kAllVariants), std::end(kAllVariants), [&](const char* n) { return f == n; }))
          return std::fprintf(stderr, "%s: unknown variant '%s' (--help lists them)\n", me, f.c_str()), -1;
    } else if (k == "--order") {
      if (std::string(v) == "interleaved") a.interleave = true;
      else if (std::string(v) == "in-turn") a.interleave = false;
      else return std::fprintf(stderr, "%s: --order interleaved|in-turn, got '%s'\n", me, v), -1;
    } else if (k == "--reps") {
      if (!bench::parse_int(v, 1, 100000, a.reps)) return std::fprintf(stderr, "%s: bad --reps '%s'\n", me, v), -1;
    } else if (k == "--iters") {
      if (!bench::parse_int(v, 0, 100000, a.iters)) return std::fprintf(stderr, "%s: bad --iters '%s' (0: auto)\n", me, v), -1;
    } else if (k == "--check") {
      if (std::string(v) == "on") a.check = true;
      else if (std::string(v) == "off") a.check = false;
      else return std::fprintf(stderr, "%s: --check on|off, got '%s'\n", me, v), -1;
    } else if (k == "--out-dir") {
      a.out_dir = v;
    } else if (k == "--breakdown") {
      int b = 0;
      if (!bench::parse_int(v, 0, 1, b)) return std::fprintf(stderr, "%s: --breakdown 0|1, got '%s'\n", me, v), -1;
      a.breakdown = b == 1;
    } else if (k == "--timeline") {
      a.timeline = v;
    } else if (k == "--timeline-shape") {
      const std::string s = v;
      const auto x = s.find('x');
      if (x == std::string::npos || !bench::parse_int(s.substr(0, x).c_str(), 1, 65535, a.tl_batch) ||
          !bench::parse_int(s.substr(x + 1).c_str(), 1, 1 << 20, a.tl_seq))
        return std::fprintf(stderr, "%s: bad --timeline-shape '%s' (want BxS, e.g. 1x2048)\n", me, v), -1;
    } else if (k == "--timeline-policy") {
      ops::AttentionOptions o;
      a.tl_policy = v;
      if (!parse_policy(a.tl_policy, o))
        return std::fprintf(stderr, "%s: --timeline-policy auto|none|kblock|kblock-none|none-kblock, got '%s'\n", me, v), -1;
    } else {
      return std::fprintf(stderr, "%s: unknown option %s (--help)\n", me, k.c_str()), -1;
    }
  }
  if (a.timeline.empty() && (a.tl_batch || a.tl_policy != "auto"))
    return std::fprintf(stderr, "%s: --timeline-shape and --timeline-policy need --timeline FILE\n", me), -1;
  const bool model_given = a.heads || a.hidden;
  if (a.workload.empty()) a.workload = model_given ? "custom" : "gpt3";
  if (a.workload == "custom") {
    if (!a.heads || !a.hidden) return std::fprintf(stderr, "%s: a custom workload needs --heads and --hidden\n", me), -1;
    if (a.seq.empty() && a.phase != "decode") return std::fprintf(stderr, "%s: a custom workload needs --seq\n", me), -1;
    if (a.batch.empty()) a.batch = {1};
  } else {
    if (model_given)
      return std::fprintf(stderr, "%s: --heads/--hidden define a custom model; drop --workload %s or use --workload custom\n",
                          me, a.workload.c_str()),
             -1;
    a.heads = a.workload == "gpt3" ? 12 : 8;
    a.hidden = a.workload == "gpt3" ? 12288 : 8192;
    if (a.batch.empty()) a.batch = {1, 4, 8};
    if (a.seq.empty()) a.seq = {512, 1024, 2048};
  }
  if (a.decode_batch.empty()) a.decode_batch = {1, 16};
  if (a.new_tokens.empty()) a.new_tokens = {1, 2, 4};
  if (a.kv.empty()) a.kv = {512, 1024, 2048, 8192};
  if (a.hidden % (a.heads * kHeadDim) != 0)
    return std::fprintf(stderr, "%s: --hidden %d must be a multiple of heads * 128 = %d (hidden = tp * heads * 128)\n", me,
                        a.hidden, a.heads * kHeadDim),
           -1;
  return 1;
}

// ---- floors ---------------------------------------------------------------------------------------

// FLOPs: the QKV GEMM 2*T*hidden*3W, the causal attention 2 * 2*B*H*(S(S+1)/2)*128 (Q K^T and P V
// over the keys each query sees), the O-proj 2*T*W*hidden; T = B*S real tokens, W = heads*128.
// Bytes: X, W_qkv, W_o read once and Y written once (bf16). QKV and O are left out: BENCHMARKS.md's
// minimal bytes are the workload's inputs and outputs, and a fused block could keep its
// intermediates on chip; that this chain round-trips them through L2/HBM is its cost, not the
// floor's. (At every prefill shape here the FLOPs bound dominates anyway.)
// Decode: the attention's FLOPs over the keys each new token sees (old + i + 1), and its bytes the
// K/V caches read (2 x batch x kv x W bf16: decode is that stream plus the weights).
double floor_us(const ops::AttentionShape& s) {
  if (s.mode == ops::AttentionMode::decode) {
    const double T = double(s.batch) * s.seq, W = double(s.width()), N = double(s.hidden);
    double keys = 0;
    for (int i = 0; i < s.seq; ++i) keys += double(s.old_keys() + i + 1);
    const double flops = 2 * T * N * 3 * W + 2.0 * 2.0 * s.batch * s.heads * keys * kHeadDim + 2 * T * W * N;
    const double bytes = 2.0 * (T * N + 3 * W * N + N * W + T * N) + 2.0 * 2.0 * s.batch * double(s.kv_len) * W;
    return bench::floor_us_of(flops, bytes);
  }
  const double T = double(s.batch) * s.seq, W = double(s.width()), N = double(s.hidden), S = double(s.seq);
  const double flops = 2 * T * N * 3 * W + 2.0 * 2.0 * s.batch * s.heads * (S * (S + 1) / 2) * kHeadDim + 2 * T * W * N;
  const double bytes = 2.0 * (T * N + 3 * W * N + N * W + T * N);
  return bench::floor_us_of(flops, bytes);
}

// Passes per timed repetition: about 1 ms of floor time, 2..20 (sdpa_baseline.py uses the same rule).
int auto_iters(double floor) { return int(std::clamp(std::ceil(1000.0 / std::max(floor, 1e-3)), 2.0, 20.0)); }

std::string policy_str(const ops::AttentionPlan& p) {
  return std::string(ops::to_string(p.qkv_to_attention)) + "/" + ops::to_string(p.attention_to_oproj);
}
// The GEMMs' forms as run: "<qkv>/<oproj>", each 128xN[sK][ flat| batched] or swapped128xT[sK].
std::string gemms_str(const ops::AttentionPlan& p) {
  auto one = [](const ops::FreeGemmPlan& g, bool flat) {
    const ops::GemmForm& f = g.form;
    std::string t = (f.operands == ops::GemmOperands::swapped ? "swapped128x" : "128x") + std::to_string(f.tile);
    if (f.split_k > 1) t += "s" + std::to_string(f.split_k);
    return t + (flat ? " flat" : " batched");
  };
  return one(p.qkv_gemm, p.qkv_flat()) + "/" + one(p.oproj_gemm, p.oproj_flat());
}

// ---- the run --------------------------------------------------------------------------------------

struct Bench {
  const Args& a;
  cudaStream_t stream = nullptr;
  cudaStream_t side[2] = {nullptr, nullptr};
  cudaEvent_t ev[3] = {nullptr, nullptr, nullptr};
  std::vector<bench::Row> rows;
  std::vector<bench::Row> parts;  // --breakdown: the kernels alone
  bool all_ok = true;
  bool timeline_done = false;

  explicit Bench(const Args& args) : a(args) {}

  // --breakdown: each kernel of the unsynchronized chain alone, `iters` launches of it per graph
  // (the same graphs as the chain's rows, so per-launch costs amortize alike). The inputs are the
  // last checked pass's; the outputs are not compared here (the chain's rows check these kernels),
  // so the rows say correct 0 and rel_err "unchecked". Floors per kernel, as floor_us() counts them.
  // Each kernel alone in a graph of its own: the chain's three (part-qkv-gemm, part-fmha,
  // part-oproj-gemm) and, where `flat` (the op with both edges none) is given, its flat GEMMs
  // (part-qkv-gemm-flat, part-oproj-gemm-flat).
  void measure_parts(const ops::AttentionShape& s, const std::string& shape, PlainAttention& plain, Op* flat, int iters) {
    const double T = double(s.batch) * s.seq, W = double(s.width()), N = double(s.hidden), S = double(s.seq);
    const double fl[3] = {bench::floor_us_of(2 * T * N * 3 * W, 2.0 * (T * N + 3 * W * N + T * 3 * W)),
                          bench::floor_us_of(2.0 * 2.0 * s.batch * s.heads * (S * (S + 1) / 2) * kHeadDim,
                                             2.0 * (T * 3 * W + T * W)),
                          bench::floor_us_of(2 * T * W * N, 2.0 * (T * W + N * W + T * N))};
    const char* names[5] = {"part-qkv-gemm", "part-fmha", "part-oproj-gemm", "part-qkv-gemm-flat", "part-oproj-gemm-flat"};
    for (int i = 0; i < (flat ? 5 : 3); ++i) {
      auto one = [&]() -> status {
        if (i == 3) return flat->enqueue_stage(0, stream);
        if (i == 4) return flat->enqueue_stage(2, stream);
        return launch_stage(plain.launches[size_t(i)], stream);
      };
      const double floor = fl[i == 3 ? 0 : i == 4 ? 2 : i];
      std::vector<double> us;
      status st = {};
      auto cg = bench::capture_iterations(stream, iters, one);
      if (!cg.ok()) st = cg.error();
      if (st.ok()) {
        bench::graph_exec g = std::move(cg.value());
        st = bench::time_repetitions(stream, a.warmup, a.reps, iters, [&] { return g.launch(stream); },
                                     [&] { return plain.check_errors(stream); }, us);
      }
      if (!st.ok()) {
        std::fprintf(stderr, "%s %s: %s\n", shape.c_str(), names[i], st.to_string().c_str());
        all_ok = false;
        continue;
      }
      bench::Row r = bench::timed_row("attention-" + a.workload, shape, names[i], us, floor, false, false);
      const std::string gemms = flat && i >= 3 ? gemms_str(flat->plan()) : "128x128 batched/128x128 batched";
      r.extra = {{"policy", "none"}, {"gemms", gemms}, {"launch", "graph"}, {"iters", std::to_string(iters)},
                 {"rel_err", "unchecked"}};
      std::printf("%-62s %-20s %10.2f us  x%-6.2f floor  (kernel alone)\n", shape.c_str(), names[i], r.median_us,
                  floor > 0 ? r.median_us / floor : 0.0);
      parts.push_back(std::move(r));
    }
  }
  ~Bench() {
    for (auto e : ev)
      if (e) (void)cudaEventDestroy(e);
    for (auto s : side)
      if (s) (void)cudaStreamDestroy(s);
  }

  [[nodiscard]] status init(cudaStream_t main) {
    stream = main;
    for (auto& s : side) BATON_CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (auto& e : ev) BATON_CUDA_TRY(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    return {};
  }

  [[nodiscard]] status shape_run(const ops::AttentionShape& s);
};

status Bench::shape_run(const ops::AttentionShape& s) {
  const bool decode = s.mode == ops::AttentionMode::decode;
  const std::string shape = std::string("phase=") + ops::to_string(s.mode) + ";batch=" + std::to_string(s.batch) +
                            ";seq=" + std::to_string(s.seq) + ";kv=" + std::to_string(s.keys()) +
                            ";heads=" + std::to_string(s.heads) + ";hidden=" + std::to_string(s.hidden);
  const int P = s.padded_seq(), W = s.width(), N = s.hidden;
  const size_t rows_p = size_t(s.padded_tokens());
  const size_t nx = rows_p * N, nwq = size_t(3) * W * N, nqkv = rows_p * 3 * W, no = rows_p * W, nwo = size_t(N) * W,
               ny = rows_p * N;
  auto alloc = [&](bench::device_buffer& b, size_t bytes, const char* what) { return bench::device_alloc(b, bytes, stream, what); };
  bench::device_buffer x, wq, qkv, o, wo, y, yref, sums, kc, vc;
  const size_t ncache = decode ? size_t(s.batch) * s.cache_rows() * W : 0;  // decode: the K and V caches
  if (decode) {
    BATON_TRY(alloc(kc, ncache * 2, "k_cache"));
    BATON_TRY(alloc(vc, ncache * 2, "v_cache"));
  }
  BATON_TRY(alloc(x, nx * 2, "x"));
  BATON_TRY(alloc(wq, nwq * 2, "w_qkv"));
  BATON_TRY(alloc(qkv, nqkv * 2, "qkv"));
  BATON_TRY(alloc(o, no * 2, "o"));
  BATON_TRY(alloc(wo, nwo * 2, "w_o"));
  BATON_TRY(alloc(y, ny * 2, "y"));
  BATON_TRY(alloc(sums, 3 * sizeof(double), "sums"));
  auto bf = [](const bench::device_buffer& b) { return bench::device_ptr<bf16>(b); };
  // Scales: X uniform on [-1, 1]; W_qkv 3/sqrt(hidden) gives Q and K entries of standard deviation
  // about 1, so Q K^T / sqrt(128) does too (a softmax that is neither flat nor one-hot); W_o likewise.
  bench::fill_uniform<<<1024, 256, 0, stream>>>(bf(x), nx, 1, 1.0f);
  bench::fill_uniform<<<1024, 256, 0, stream>>>(bf(wq), nwq, 2, 3.0f / std::sqrt(float(N)));
  bench::fill_uniform<<<1024, 256, 0, stream>>>(bf(wo), nwo, 3, 3.0f / std::sqrt(float(W)));
  if (decode) {  // cached K and V like the new ones: entries of about unit size
    bench::fill_uniform<<<1024, 256, 0, stream>>>(bf(kc), ncache, 4, 1.7f);
    bench::fill_uniform<<<1024, 256, 0, stream>>>(bf(vc), ncache, 5, 1.7f);
  }
  BATON_CUDA_TRY(cudaGetLastError());
  if (a.check) {
    BATON_TRY(alloc(yref, ny * 4, "reference y"));
    bench::device_buffer qref, oref;
    BATON_TRY(alloc(qref, nqkv * 4, "reference qkv"));
    BATON_TRY(alloc(oref, no * 4, "reference o"));
    const dim3 blk(256);
    ref_gemm_nt<bf16><<<dim3(unsigned((rows_p + 63) / 64), (3 * W + 63) / 64), blk, 0, stream>>>(
        bf(x), bf(wq), bench::device_ptr<float>(qref), int(rows_p), 3 * W, N, true);
    BATON_CUDA_TRY(cudaMemsetAsync(oref.data(), 0, no * 4, stream));
    if (decode)  // the caches' old rows: the op appends the new K/V past them, so they stay as filled
      ref_decode_attention<<<dim3(s.seq, s.heads, s.batch), 128, 0, stream>>>(
          bench::device_ptr<float>(qref), bf(kc), bf(vc), bench::device_ptr<float>(oref), P, s.heads, s.cache_rows(),
          s.old_keys());
    else
      ref_attention<<<dim3(s.seq, s.heads, s.batch), 128, 0, stream>>>(bench::device_ptr<float>(qref),
                                                                          bench::device_ptr<float>(oref), P, s.heads);
    ref_gemm_nt<float><<<dim3(unsigned((rows_p + 63) / 64), (N + 63) / 64), blk, 0, stream>>>(
        bench::device_ptr<float>(oref), bf(wo), bench::device_ptr<float>(yref), int(rows_p), N, W, false);
    BATON_CUDA_TRY(cudaGetLastError());
    BATON_CUDA_TRY(cudaStreamSynchronize(stream));  // a failing reference kernel is reported here, not in a variant
  }
  const ops::AttentionTensors t{x.data(), wq.data(), qkv.data(), o.data(), wo.data(), y.data(), kc.data(), vc.data()};
  const double fl = floor_us(s);
  const int iters = a.iters > 0 ? a.iters : auto_iters(fl);

  auto poison = [&](bool intermediates) -> status {
    if (intermediates) {
      BATON_CUDA_TRY(cudaMemsetAsync(qkv.data(), 0xFF, nqkv * 2, stream));  // bf16 0xFFFF: NaN
      BATON_CUDA_TRY(cudaMemsetAsync(o.data(), 0xFF, no * 2, stream));
    }
    BATON_CUDA_TRY(cudaMemsetAsync(y.data(), 0xFF, ny * 2, stream));
    return {};
  };
  // Relative error of Y's real rows; NaN when Y holds a NaN or the sums cannot be read.
  auto check = [&]() -> double {
    return bench::relative_error(stream, bf(y), bench::device_ptr<float>(yref), size_t(s.batch), size_t(s.seq),
                                 size_t(P), size_t(N), bench::device_ptr<double>(sums));
  };

  // One variant: a pass and its check first; once every wanted variant has passed that, all are timed
  // together (a graph of `iters` passes each, or `iters` stream passes), in interleaved rounds unless
  // --order in-turn (bench/common/rounds.hpp: drift over the run hits every variant alike), and each is
  // checked again after one more repetition. `prepare` NaN-poisons what the checked run must write.
  struct Variant {
    std::string name, policy, launch;
    std::string gemms = "128x128 batched/128x128 batched";
    bool baseline = false, graph = true;
    std::function<status()> enqueue, errors, prepare;
  };
  struct Entry {
    Variant v;
    status st;
    double rel1 = 0, rel2 = 0;
    std::unique_ptr<bench::graph_exec> g;
    std::vector<double> us;
  };
  std::vector<Entry> entries;
  std::vector<std::unique_ptr<Op>> ops_alive;  // the op variants' chains, alive until they are timed
  auto fail = [&](const std::string& name, const status& st) {
    std::fprintf(stderr, "%s %s: %s\n", shape.c_str(), name.c_str(), st.to_string().c_str());
    all_ok = false;
  };
  auto measure = [&](const Variant& v) {
    Entry& e = entries.emplace_back();
    e.v = v;
    e.st = v.prepare();
    if (e.st.ok()) e.st = v.enqueue();
    if (e.st.ok()) e.st = v.errors();
    if (e.st.ok() && a.check) e.rel1 = check();
    if (e.st.ok() && v.graph) {
      auto cg = bench::capture_iterations(stream, iters, v.enqueue);
      if (cg.ok()) e.g = std::make_unique<bench::graph_exec>(std::move(cg.value()));
      else e.st = cg.error();
    }
  };

  // The op's variants.
  auto op_variant = [&](const std::string& name, const std::string& pol, bool baseline, std::optional<int> kv_splits = {}) {
    if (!bench::in_list(a.variants, name)) return;
    ops::AttentionRunOptions ro;
    (void)parse_policy(pol, ro.plan);
    ro.plan.kv_splits = kv_splits;
    ro.log = false;
    auto op = Op::create(s, t, stream, ro);
    if (!op.ok()) return fail(name, op.error());
    Op* chain = ops_alive.emplace_back(std::move(op.value())).get();
    if (name == "baton-auto") std::printf("  %s\n", chain->plan().log_line().c_str());
    Variant v;
    v.name = name;
    v.policy = policy_str(chain->plan());
    v.gemms = gemms_str(chain->plan());
    v.launch = "pdl";
    v.baseline = baseline;
    v.enqueue = [this, chain] { return chain->enqueue(stream); };
    v.errors = [this, chain] { return chain->check_errors(stream); };
    v.prepare = [&poison] { return poison(true); };
    measure(v);
  };
  op_variant("baton-auto", "auto", false);
  if (decode) {  // PDL edges only; the split-KV rule against one part
    op_variant("baton-split1", "none", false, 1);
  }
  if (!decode) op_variant("baton-none", "none", false);
  if (!decode) {
    op_variant("baton-kblock", "kblock", false);
    op_variant("baton-kblock-none", "kblock-none", false);
    op_variant("baton-none-kblock", "none-kblock", false);
  }

  // The bench's own chain of the same kernels without edges.
  PlainAttention plain;  // outlives the rounds below: its variants are timed there
  if (!decode && (a.breakdown || bench::in_list(a.variants, "cutlass-pdl-graph") || bench::in_list(a.variants, "cutlass-graph") ||
      bench::in_list(a.variants, "cutlass-stream") || bench::in_list(a.variants, "bound-concurrent"))) {
    if (status st = plain.build(s, t, stream); !st.ok()) {
      std::fprintf(stderr, "%s plain kernels: %s\n", shape.c_str(), st.to_string().c_str());
      all_ok = false;
    } else {
      Variant v;
      v.policy = "none/none";
      v.baseline = true;
      v.errors = [&] { return plain.check_errors(stream); };
      v.prepare = [&] { return poison(true); };
      if (bench::in_list(a.variants, "cutlass-pdl-graph")) {
        v.name = "cutlass-pdl-graph";
        v.launch = "pdl";
        v.enqueue = [&] { return plain.enqueue_pdl(stream); };
        measure(v);
      }
      v.enqueue = [&] { return plain.enqueue_serial(stream); };
      if (bench::in_list(a.variants, "cutlass-graph")) {
        v.name = "cutlass-graph";
        v.launch = "serial";
        measure(v);
      }
      if (bench::in_list(a.variants, "cutlass-stream")) {
        v.name = "cutlass-stream";
        v.launch = "stream";
        v.graph = false;
        measure(v);
        v.graph = true;
      }
      if (bench::in_list(a.variants, "bound-concurrent")) {
        // The kernels read QKV and O while the same pass rewrites them. Its check runs one serial
        // pass first, so QKV and O hold their final values and every concurrent pass rewrites them
        // with the same bits; then only Y is poisoned. It says the kernels computed right in this
        // arrangement, not that the arrangement computes the chain: a bound, never a baseline.
        v.name = "bound-concurrent";
        v.launch = "concurrent";
        v.baseline = false;
        v.prepare = [&]() -> status {
          BATON_TRY(plain.enqueue_serial(stream));
          return poison(false);
        };
        v.enqueue = [&] { return plain.enqueue_concurrent(stream, side, ev); };
        measure(v);
      }
      if (a.breakdown) {
        ops::AttentionRunOptions ro;
        (void)parse_policy("none", ro.plan);
        ro.log = false;
        auto flat = Op::create(s, t, stream, ro);
        if (!flat.ok()) {
          std::fprintf(stderr, "%s flat GEMMs: %s\n", shape.c_str(), flat.error().to_string().c_str());
          all_ok = false;
        }
        measure_parts(s, shape, plain, flat.ok() ? flat.value().get() : nullptr, iters);
      }
    }
  }

  // The rounds, then each variant's second check and its row.
  std::vector<std::function<status()>> reps;
  for (Entry& e : entries)
    reps.push_back([&e, this, iters]() -> status {
      if (!e.st.ok()) return e.st;
      if (e.g) return e.g->launch(stream);
      for (int i = 0; i < iters; ++i) BATON_TRY(e.v.enqueue());
      return {};
    });
  {
    std::vector<std::vector<double>> us;
    std::vector<status> failed;
    const status st = bench::time_in_order(stream, a.interleave, a.warmup, a.reps, iters, reps,
                                           [&](int i) { return entries[size_t(i)].v.errors(); }, us, failed);
    for (size_t i = 0; i < entries.size(); ++i) {
      if (entries[i].st.ok()) entries[i].st = st.ok() ? failed[i] : st;
      if (i < us.size()) entries[i].us = std::move(us[i]);
    }
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    Entry& e = entries[i];
    const Variant& v = e.v;
    if (e.st.ok() && a.check) {
      e.st = v.prepare();
      if (e.st.ok()) e.st = reps[i]();
      if (e.st.ok()) e.st = v.errors();
      if (e.st.ok()) e.rel2 = check();
    }
    if (!e.st.ok()) {
      fail(v.name, e.st);
      continue;
    }
    const bool correct = a.check && e.rel1 < kRelTol && e.rel2 < kRelTol;  // NaN compares false
    bench::Row r = bench::timed_row("attention-" + a.workload, shape, v.name, e.us, fl, v.baseline, correct);
    char err[32];
    std::snprintf(err, sizeof err, "%.3e", std::max(e.rel1, e.rel2));
    r.extra = {{"policy", v.policy}, {"gemms", v.gemms}, {"launch", v.launch}, {"iters", std::to_string(iters)},
               {"rel_err", a.check ? std::string(err) : std::string("unchecked")},
               {"order", a.interleave ? "interleaved" : "in-turn"}};
    all_ok = all_ok && (correct || !a.check);
    rows.push_back(r);
    std::printf("%-62s %-18s %10.2f us  x%-6.2f floor  %s\n", shape.c_str(), v.name.c_str(), r.median_us,
                fl > 0 ? r.median_us / fl : 0.0, !a.check ? "unchecked" : correct ? "ok" : "WRONG");
    std::fflush(stdout);
  }
  if (decode) return {};

  // The timeline: one shape, the op's trace pointers, the last of three passes.
  if (!a.timeline.empty() && !timeline_done && (a.tl_batch == 0 || (a.tl_batch == s.batch && a.tl_seq == s.seq))) {
    timeline_done = true;
    ops::AttentionRunOptions ro;
    (void)parse_policy(a.tl_policy, ro.plan);
    ro.log = false;
    // The trace buffers hold one event per tile of the grids the plan runs (a flat GEMM's are its form's).
    BATON_TRY_ASSIGN(const int sms, ops::detail::plan_sms(0));
    BATON_TRY_ASSIGN(const ops::AttentionPlan tp, ops::plan_attention(s, sms, ro.plan, Op::gemm_forms));
    const Grid grids[3] = {tp.qkv_gemm.grid, s.attention_grid(), tp.oproj_gemm.grid};
    bench::device_buffer tr[3];
    for (int i = 0; i < 3; ++i) {
      BATON_TRY(alloc(tr[i], size_t(grids[i].size()) * sizeof(TileEvent), "trace"));
      BATON_CUDA_TRY(cudaMemsetAsync(tr[i].data(), 0, size_t(grids[i].size()) * sizeof(TileEvent), stream));
    }
    ro.trace_qkv = bench::device_ptr<TileEvent>(tr[0]);
    ro.trace_attention = bench::device_ptr<TileEvent>(tr[1]);
    ro.trace_oproj = bench::device_ptr<TileEvent>(tr[2]);
    auto op = Op::create(s, t, stream, ro);
    status st = op.ok() ? status{} : op.error();
    for (int i = 0; i < 3 && st.ok(); ++i) st = op.value()->enqueue(stream);
    if (st.ok()) st = op.value()->check_errors(stream);
    std::vector<std::vector<TileEvent>> evs(3);
    for (int i = 0; i < 3 && st.ok(); ++i) {
      evs[size_t(i)].resize(size_t(grids[i].size()));
      st = cuda_status(cudaMemcpy(evs[size_t(i)].data(), tr[i].data(), evs[size_t(i)].size() * sizeof(TileEvent),
                                  cudaMemcpyDeviceToHost),
                       "copying the trace");
    }
    if (st.ok()) st = write_chrome_trace(a.timeline, op.value()->chain(), evs);
    if (!st.ok()) {
      std::fprintf(stderr, "timeline (%s): %s\n", shape.c_str(), st.to_string().c_str());
      all_ok = false;
    } else {
      // How far each consumer's first tile started before (or after) its producer's last tile ended.
      auto gap = [&](int prod, int cons) {
        uint64_t end = 0, start = UINT64_MAX;
        for (auto& e : evs[size_t(prod)]) end = std::max(end, e.end_ns);
        for (auto& e : evs[size_t(cons)]) start = std::min(start, e.start_ns);
        return (double(int64_t(start) - int64_t(end))) / 1e3;
      };
      std::printf("wrote %s (%s, %s): attention's first tile started %+.2f us, oproj's %+.2f us from its producer's "
                  "last tile's end (negative: before)\n",
                  a.timeline.c_str(), shape.c_str(), policy_str(op.value()->plan()).c_str(), gap(0, 1), gap(1, 2));
    }
  }
  return {};
}

int run(const Args& a) {
  cudaStream_t stream = nullptr;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
    std::printf("baton_bench_attention: no usable CUDA device; nothing measured\n");
    return 0;
  }
  const bench::Env env = bench::detect_env();
  int rc = 0;
  {
    Bench b(a);
    if (status st = b.init(stream); !st.ok()) {
      std::fprintf(stderr, "baton_bench_attention: %s\n", st.to_string().c_str());
      (void)cudaStreamDestroy(stream);
      return 1;
    }
    b.timeline_done = a.timeline.empty();
    std::vector<ops::AttentionShape> shapes;
    if (a.phase != "decode")
      for (int batch : a.batch)
        for (int seq : a.seq) shapes.push_back(ops::AttentionShape{.batch = batch, .seq = seq, .heads = a.heads, .hidden = a.hidden});
    if (a.phase != "prefill")
      for (int batch : a.decode_batch)
        for (int m : a.new_tokens)
          for (int kv : a.kv)
            shapes.push_back(ops::AttentionShape{.mode = ops::AttentionMode::decode, .batch = batch, .seq = m, .kv_len = kv,
                                                 .heads = a.heads, .hidden = a.hidden});
    for (const ops::AttentionShape& s : shapes) {
      if (auto v = ops::validate_attention(s); !v.ok()) {
        std::fprintf(stderr, "skipping %s: %s\n", s.str().c_str(), v.to_string().c_str());
        b.all_ok = false;
        continue;
      }
      if (status st = b.shape_run(s); !st.ok()) {
        std::fprintf(stderr, "%s: %s\n", s.str().c_str(), st.to_string().c_str());
        b.all_ok = false;
        (void)cudaGetLastError();
      }
      (void)cudaStreamSynchronize(stream);
    }
    if (!b.timeline_done)
      std::fprintf(stderr, "baton_bench_attention: --timeline-shape %dx%d is not among the shapes run; no timeline\n",
                   a.tl_batch, a.tl_seq);
    if (!a.check) std::printf("note: --check off: nothing compared, every row says correct 0\n");
    if (!b.parts.empty()) {  // the kernels alone: not results of the chain, so not in its file
      bench::unify_extra_columns(b.parts);
      bench::write_csv(a.out_dir + "/attention-" + a.workload + "-breakdown.csv", b.parts, env);
      bench::write_json(a.out_dir + "/attention-" + a.workload + "-breakdown.json", b.parts, env);
      std::printf("wrote %s/attention-%s-breakdown.csv and .json\n", a.out_dir.c_str(), a.workload.c_str());
    }
    const bool published = bench::publish(b.rows, env, a.out_dir, "attention-" + a.workload);
    rc = b.all_ok && (published || !a.check) && !b.rows.empty() ? 0 : 1;
    if (!b.timeline_done) rc = 1;
  }
  (void)cudaStreamDestroy(stream);
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  const int parsed = parse_args(argc, argv, a);
  if (parsed <= 0) return parsed == 0 ? 0 : 2;
  if (!require_device().ok()) {
    std::printf("baton_bench_attention: no CUDA device; nothing measured\n");
    return 0;
  }
  return run(a);
}
