// baton/ops/attention/attention.cuh — baton::ops::Attention: the attention block of GPT-3 / LLaMA
// (QKV GEMM -> causal attention -> O-proj GEMM) as one baton chain on CUTLASS 4.2 sm90 kernels:
// prefill (the FMHA, its edges none or per-k-block waits) and decode (a few new tokens against a KV
// cache: decode_attention.cuh's split-KV kernel and its combine, PDL edges).
//
//   using Op = baton::ops::CompiledAttention;            // kernels from baton::attention_kernels
//   AttentionShape s{.batch = 1, .seq = 2048, .heads = 12, .hidden = 12288};
//   auto op = Op::create(s, tensors, stream);            // plan, checks, chain proven, launches built
//   if (!op.ok()) { ... op.error().message() ... }      // bad shapes and pointers: nothing launched
//   BATON_TRY(op.value()->enqueue(stream));              // one pass, graph-capturable
//
// create(): plan_attention (attention.hpp) picks each edge's policy (none: PDL, the consumer's
// griddepcontrol.wait before its first load of the producer's output; kblock: batonc's per-k-block
// policies from attention_chain.baton), or tune = true times the pairs on this GPU and keeps the
// fastest (cached per shape in TuneCache::global()); Chain::validate proves each kblock edge against
// its exact relation (deps::causal_attention for QKV -> attention, deps::gemm_a for attention ->
// O-proj) before any launch.
//
// Layout: every tensor has padded_seq() = seq rounded up to 8 rows per sequence (the FMHA's query
// alignment); the rows past seq are padding the caller allocates (computed, never read). X, W_qkv
// and W_o must be written before enqueue (nothing waits for them). Decode: the K and V caches
// ([batch, cache_rows(), heads * 128]) hold the old keys in rows 0..old_keys()-1; each pass writes
// the m new tokens' K and V to rows old_keys()..kv_len-1 (docs/attention.md, Decode).
#pragma once

// CuTe's every-GMMA-width selector, as baton/ops/mlp.cuh defines it; it must precede CuTe's first
// inclusion, which the FMHA's headers below make. The op's flat GEMMs include 160-token swapped tiles
// (mlp_kernels' forms), which need it; the FMHA's 128-wide GMMAs are the same either way. The kernel
// library's own translation units (attention_kernels.cuh only) go without it: with it, each compiled
// 1.6x slower (docs/cutlass.md).
#ifndef CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED
#define CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED
#endif

#include "baton/ops/attention/attention_kernels.cuh"  // first: CUTLASS and example 88's collectives

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "baton/chain.hpp"
#include "baton/dependency.hpp"
#include "baton/launch.cuh"
#include "baton/ops/attention/attention.hpp"
#include "baton/ops/attention/attention_chain_policies.hpp"
#include "baton/ops/attention/decode_attention.cuh"
#include "baton/ops/mlp_compiled.cuh"
#include "baton/ops/op_support.cuh"
#include "baton/ops/tuner.hpp"
#include "baton/trace.hpp"

namespace baton::ops {
static_assert(decode::kCtasPerSm == kAttentionDecodeCtasPerSm,
              "the split-KV rule (attention.hpp) plans one wave of the decode kernel's resident CTAs");

static_assert(attention_kernels::kGemmTileM == kAttentionGemmTileM && attention_kernels::kGemmTileN == kAttentionGemmTileN &&
                  attention_kernels::kGemmTileK == kAttentionGemmTileK &&
                  attention_kernels::FmhaConfig::tile_q == kAttentionBlockM &&
                  attention_kernels::FmhaConfig::tile_kv == kAttentionBlockN &&
                  attention_kernels::FmhaConfig::head_dim == kAttentionHeadDim,
              "baton::ops::Attention: the plan's tile constants must match the kernels'");

// Non-owning bf16 device pointers, 16-byte aligned (TMA), rows per sequence = padded_seq().
struct AttentionTensors {
  const void* x = nullptr;      // [batch, padded_seq, hidden]
  const void* w_qkv = nullptr;  // [3 * heads * 128, hidden] (nn.Linear layout: out x in)
  void* qkv = nullptr;          // [batch, padded_seq, 3 * heads * 128]: Q | K | V
  void* o = nullptr;            // [batch, padded_seq, heads * 128]
  const void* w_o = nullptr;    // [hidden, heads * 128]
  void* y = nullptr;            // [batch, padded_seq, hidden]
  void* k_cache = nullptr;      // decode: [batch, cache_rows(), heads * 128] (prefill: unused)
  void* v_cache = nullptr;      // decode: the same for V
};

struct AttentionRunOptions {
  AttentionOptions plan{};
  int sms = 0;                              // 0: the current device's SM count
  uint64_t watchdog_ns = 2'000'000'000ull;  // bound on every wait (0: off)
  bool log = true;                          // print the plan's log line
  // Optional per-tile timelines, one event per tile of plan().qkv_gemm.grid / attention_grid() /
  // plan().oproj_gemm.grid (a flat GEMM's grid is its form's, not qkv_grid() / oproj_grid(): plan
  // first with plan_attention to size them). Decode traces its two GEMMs only (trace_attention unused).
  TileEvent* trace_qkv = nullptr;
  TileEvent* trace_attention = nullptr;
  TileEvent* trace_oproj = nullptr;
  uint32_t debug_max_tile_delay_ns = 0;     // tests: a random delay before each tile's loads
  // With QKV -> attention kblock (ignored with none): the attention loads the key blocks whose waits
  // hold before the pending ones (sm90::FmhaArguments::load_published_first: sums in arrival order,
  // not bit-reproducible run to run).
  bool load_published_first = false;
  // Per-shape tuning (an edge left automatic): create() times every pair of edge policies the
  // request allows on `stream` with the given tensors (it overwrites qkv, o and y), 5 interleaved
  // rounds of tune_iters / 5 passes after ~30 ms of warm-up, median round; the plan is kept unless
  // another pair is > 2% faster. Cached per shape, request and GPU in TuneCache::global().
  bool tune = false;
  int tune_iters = 40;
  bool tune_cache = true;
};

// The three kernels' arguments for a shape and its tensors (the op's, and a bench's own launches of
// the same kernels): the GEMMs batched over the sequences (padded_seq() rows each), weights shared.
inline sm90::GemmArguments<attention_kernels::GemmConfig> attention_qkv_arguments(const AttentionShape& s,
                                                                                   const AttentionTensors& t) {
  using bf16 = attention_kernels::bf16;
  sm90::GemmArguments<attention_kernels::GemmConfig> a{};
  a.m = s.padded_seq();
  a.n = 3 * s.width();
  a.k = s.hidden;
  a.a = static_cast<const bf16*>(t.x);
  a.b = static_cast<const bf16*>(t.w_qkv);
  a.d = static_cast<bf16*>(t.qkv);
  a.batch = s.batch;
  return a;
}
inline sm90::FmhaArguments attention_fmha_arguments(const AttentionShape& s, const AttentionTensors& t) {
  using bf16 = attention_kernels::bf16;
  sm90::FmhaArguments a{};
  a.batch = s.batch;
  a.seq = s.padded_seq();
  a.heads = s.heads;
  a.qkv = static_cast<const bf16*>(t.qkv);
  a.o = static_cast<bf16*>(t.o);
  return a;
}
inline sm90::GemmArguments<attention_kernels::GemmConfig> attention_oproj_arguments(const AttentionShape& s,
                                                                                     const AttentionTensors& t) {
  using bf16 = attention_kernels::bf16;
  sm90::GemmArguments<attention_kernels::GemmConfig> a{};
  a.m = s.padded_seq();
  a.n = s.hidden;
  a.k = s.width();
  a.a = static_cast<const bf16*>(t.o);
  a.b = static_cast<const bf16*>(t.w_o);
  a.d = static_cast<bf16*>(t.y);
  a.batch = s.batch;
  return a;
}

// Kernels: the chain's kernels (attention_kernels::Inline or Compiled). GemmKernels: the GEMM forms a
// GEMM without edges runs on (flat, plan_free_gemm's form): mlp_kernels::Inline<gelu> (its down forms,
// instantiated where used) or mlp_kernels::Compiled<gelu> (baton::mlp_kernels).
template <attention_kernels::AttentionKernelSet Kernels = attention_kernels::Inline,
          class GemmKernels = mlp_kernels::Inline<Activation::gelu>>
class Attention {
 public:
  using bf16 = attention_kernels::bf16;
  // The optional flat-GEMM forms GemmKernels has (CTA pairs, 32-token swapped tiles): a request for one
  // it lacks is refused at create().
  static constexpr MlpKernelForms gemm_forms = mlp_kernels::kernel_forms_of<GemmKernels>();
  Attention(const Attention&) = delete;
  Attention& operator=(const Attention&) = delete;

  // Plans, checks shapes and pointers, validates the chain (the soundness checker included),
  // allocates the semaphore workspace (initialized on `stream`) and builds the launches. Nothing
  // is launched.
  [[nodiscard]] static result<std::unique_ptr<Attention>> create(const AttentionShape& shape, const AttentionTensors& t,
                                                                 cudaStream_t stream, const AttentionRunOptions& o = {}) {
    BATON_TRY(validate_attention(shape));
    BATON_TRY(check_tensors_(shape, t));
    BATON_TRY_ASSIGN(const int sms, detail::plan_sms(o.sms));
    if (o.tune && (o.plan.qkv_to_attention == AttentionEdgePolicy::automatic ||
                   o.plan.attention_to_oproj == AttentionEdgePolicy::automatic))
      return tuned_(shape, t, stream, o, sms);
    auto plan = plan_attention(shape, sms, o.plan, gemm_forms);
    if (!plan.ok()) return plan.error();
    std::unique_ptr<Attention> op(new Attention());
    op->plan_ = plan.value();
    BATON_TRY(op->build_(t, stream, o));
    if (o.log) std::printf("%s\n", op->plan_.log_line().c_str());
    return result<std::unique_ptr<Attention>>(std::move(op));
  }

  // One pass on `stream` (capturable in a CUDA graph).
  [[nodiscard]] status enqueue(cudaStream_t stream) { return launch_chain(chain_, stream, launches_, LaunchSchedule::pdl); }
  // Waits for `stream`; the chain's error record (watchdog reports) as a status.
  [[nodiscard]] status check_errors(cudaStream_t stream) const { return ::baton::check_errors(chain_, ws_.data(), stream); }
  // One stage alone (0 qkv, 1 attention, 2 oproj; decode with split-KV: 2 combine, 3 oproj), a plain
  // launch on `stream`: for timing each kernel
  // of the plan in isolation (bench/attention.cu's --breakdown). It reads whatever its input holds.
  // Plans with a kblock edge are refused: a consumer launched without its producer would wait for
  // posts that never come, and its tickets would leave the chain's epochs out of step.
  [[nodiscard]] status enqueue_stage(int which, cudaStream_t stream) {
    if (which < 0 || which >= int(launches_.size()))
      return status(errc::invalid_argument, "baton::ops::Attention::enqueue_stage: which must be in [0, " +
                                                std::to_string(launches_.size()) + "), got " + std::to_string(which));
    if (plan_.qkv_to_attention != AttentionEdgePolicy::none || plan_.attention_to_oproj != AttentionEdgePolicy::none)
      return status(errc::not_supported, "baton::ops::Attention::enqueue_stage: one stage alone needs both edges none, the "
                                         "plan has " + std::string(to_string(plan_.qkv_to_attention)) + "/" +
                                         to_string(plan_.attention_to_oproj));
    return launch_stage(launches_[size_t(which)], stream);
  }
  const AttentionPlan& plan() const { return plan_; }
  const Chain& chain() const { return chain_; }

 private:
  Attention() = default;

  [[nodiscard]] static status check_tensors_(const AttentionShape& s, const AttentionTensors& t) {
    const std::string what = "baton::ops::Attention " + s.str() + ": ";
    const bool decode = s.mode == AttentionMode::decode;
    const int n = decode ? 8 : 6;  // the caches are decode's
    const void* ptrs[] = {t.x, t.w_qkv, t.qkv, t.o, t.w_o, t.y, t.k_cache, t.v_cache};
    const char* names[] = {"x", "w_qkv", "qkv", "o", "w_o", "y", "k_cache", "v_cache"};
    for (int i = 0; i < n; ++i) {
      if (ptrs[i] == nullptr) return status(errc::invalid_argument, what + names[i] + " is null");
      if (reinterpret_cast<uintptr_t>(ptrs[i]) % 16 != 0)
        return status(errc::not_supported, what + names[i] + " is not 16-byte aligned (TMA)");
    }
    // Written tensors must not overlap anything the chain reads or writes (sizes in elements).
    const int64_t rows = s.padded_tokens();
    struct Span {
      const char* name;
      const void* p;
      int64_t elems;
    };
    const int64_t cache = decode ? int64_t(s.batch) * s.cache_rows() * s.width() : 0;
    const Span spans[] = {{"x", t.x, rows * s.hidden},          {"w_qkv", t.w_qkv, int64_t(3) * s.width() * s.hidden},
                          {"qkv", t.qkv, rows * 3 * s.width()}, {"o", t.o, rows * s.width()},
                          {"w_o", t.w_o, int64_t(s.hidden) * s.width()}, {"y", t.y, rows * s.hidden},
                          {"k_cache", t.k_cache, cache},        {"v_cache", t.v_cache, cache}};
    auto is_written = [](int i) { return i == 2 || i == 3 || i >= 5; };
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j < n; ++j) {
        const bool written = is_written(i) || is_written(j);
        const auto* a0 = static_cast<const char*>(spans[i].p);
        const auto* b0 = static_cast<const char*>(spans[j].p);
        if (written && a0 < b0 + spans[j].elems * 2 && b0 < a0 + spans[i].elems * 2)
          return status(errc::invalid_argument, what + spans[i].name + " and " + spans[j].name +
                                                    " overlap (qkv, o, y and the caches are written by the chain; rows per "
                                                    "sequence are padded_seq() = " +
                                                    std::to_string(s.padded_seq()) + ")");
      }
    return {};
  }

  [[nodiscard]] status build_(const AttentionTensors& t, cudaStream_t stream, const AttentionRunOptions& o) {
    using namespace attention_kernels;
    const AttentionShape& s = plan_.shape;
    if (s.mode == AttentionMode::decode) return build_decode_(t, stream, o);
    const attention_gen::Params gp = s.program_params();
    const uint32_t delay = o.debug_max_tile_delay_ns;
    auto qa = attention_qkv_arguments(s, t);
    qa.debug_max_tile_delay_ns = delay;
    // Only a waiting attention chooses its load order (with none it waits for the whole QKV grid).
    auto fa = attention_fmha_arguments(s, t);
    fa.debug_max_tile_delay_ns = delay;
    fa.load_published_first = o.load_published_first && plan_.qkv_to_attention == AttentionEdgePolicy::kblock;
    auto oa = attention_oproj_arguments(s, t);
    oa.debug_max_tile_delay_ns = delay;
    const bool wait1 = plan_.qkv_to_attention == AttentionEdgePolicy::kblock;
    const bool wait2 = plan_.attention_to_oproj == AttentionEdgePolicy::kblock;
    // A GEMM without edges runs flat over the padded tokens in its plan's form (GemmKernels); one with
    // an edge is the chain's batched 128 x 128 kernel, whose grid must be the program's.
    detail::FormedGemm fq, fo;
    if (!wait1) BATON_TRY(flat_gemm_(true, t, stream, fq));
    else BATON_TRY((sm90::Gemm<GemmConfig, PlainStage>::can_implement(qa).with_context("baton::ops::Attention qkv")));
    BATON_TRY((sm90::Fmha<FmhaConfig, PlainStage>::can_implement(fa).with_context("baton::ops::Attention attention")));
    if (!wait2) BATON_TRY(flat_gemm_(false, t, stream, fo));
    else BATON_TRY((sm90::Gemm<GemmConfig, PlainStage>::can_implement(oa).with_context("baton::ops::Attention oproj")));
    const Grid gq = sm90::tile_grid<GemmConfig>(qa.m, qa.n, qa.batch);
    const Grid ga = sm90::fmha_tile_grid<FmhaConfig>(fa.batch, fa.seq, fa.heads);
    const Grid go = sm90::tile_grid<GemmConfig>(oa.m, oa.n, oa.batch);
    if (!(attention_gen::qkv_grid(gp) == gq) || !(attention_gen::attn_grid(gp) == ga) || !(attention_gen::oproj_grid(gp) == go))
      return status(errc::invalid_chain, "baton::ops::Attention: attention_chain.baton's grids differ from the kernels'");

    // A stage declares the tensors it reads through semaphores. An edge without them (none) is a kernel
    // boundary: the consumer's griddepcontrol.wait (GridWaitBeforeLoads / GridWaitBeforeA below) comes
    // before its first load of the producer's tensor, so validate() has no relation to prove there, and
    // a declared read without an edge would be refused as a PDL race.
    const StageIO iq{.reads = {"X", "Wqkv"}, .writes = {"QKV"}};
    StageIO ia{.writes = {"O"}}, io{.reads = {"Wo"}, .writes = {"Y"}};
    if (wait1) ia.reads.push_back("QKV");
    if (wait2) io.reads.push_back("O");
    // Stages in chain order; a flat GEMM's stage has its form's grid and tile order.
    std::optional<StageRef<RowMajor>> sq, so;
    std::optional<StageRef<Grouped>> sq_flat, so_flat;
    if (wait1) sq = chain_.add_stage("qkv", gq, RowMajor{}, iq);
    else sq_flat = chain_.add_stage("qkv", plan_.qkv_gemm.grid, Grouped{plan_.qkv_gemm.group_m}, iq);
    auto sa = chain_.add_stage("attention", ga, RowMajor{}, ia);
    if (wait2) so = chain_.add_stage("oproj", go, RowMajor{}, io);
    else so_flat = chain_.add_stage("oproj", plan_.oproj_gemm.grid, Grouped{plan_.oproj_gemm.group_m}, io);
    std::optional<EdgeRef<QkvPolicy>> e1;
    std::optional<EdgeRef<OprojPolicy>> e2;
    // The exact relations (not the maps' relation, which reads past each tile's causal bound).
    if (wait1) e1 = chain_.add_edge(*sq, sa, attention_gen::qkv_to_attn(gp), attention_gen::qkv_to_attn_exact_relation(gp));
    if (wait2) e2 = chain_.add_edge(sa, *so, attention_gen::attn_to_oproj(gp), attention_gen::attn_to_oproj_exact_relation(gp));
    BATON_TRY(chain_.validate());  // the soundness checker proves every kblock edge before any launch
    BATON_TRY(detail::alloc_chain_workspace(chain_, ws_, stream));
    const size_t bytes = chain_.workspace_bytes();
    BindOptions bq, ba, bo;
    bq.watchdog_ns = ba.watchdog_ns = bo.watchdog_ns = o.watchdog_ns;
    bq.trace = o.trace_qkv;
    ba.trace = o.trace_attention;
    bo.trace = o.trace_oproj;

    result<StageLaunch> lq = status(errc::invalid_chain, "unset"), la = lq, lo = lq;
    // Bound stages (types follow the edges) -> launches.
    auto bind = [&](const auto& stage, auto out, auto in, const BindOptions& b) { return chain_.bind(stage, ws_.data(), bytes, out, in, b); };
    if (wait1) {
      auto st = bind(*sq, outs(*e1), ins(), bq);
      if (!st.ok()) return st.error();
      lq = Kernels::template launch<GemmConfig, QkvStage, sm90::NoGridWait>(st.value(), qa);
    } else {
      auto st = bind(*sq_flat, outs(), ins(), bq);
      if (!st.ok()) return st.error();
      lq = fq.launch(st.value(), sw_qkv_.data(), false);
    }
    if (wait1 && wait2) {
      auto st = bind(sa, outs(*e2), ins(*e1), ba);
      if (!st.ok()) return st.error();
      la = Kernels::template launch<FmhaConfig, AttnWaitPostStage, sm90::NoGridWait>(st.value(), fa);
    } else if (wait1) {
      auto st = bind(sa, outs(), ins(*e1), ba);
      if (!st.ok()) return st.error();
      la = Kernels::template launch<FmhaConfig, AttnWaitStage, sm90::NoGridWait>(st.value(), fa);
    } else if (wait2) {
      auto st = bind(sa, outs(*e2), ins(), ba);
      if (!st.ok()) return st.error();
      la = Kernels::template launch<FmhaConfig, AttnPostStage, sm90::GridWaitBeforeLoads>(st.value(), fa);
    } else {
      auto st = bind(sa, outs(), ins(), ba);
      if (!st.ok()) return st.error();
      la = Kernels::template launch<FmhaConfig, PlainStage, sm90::GridWaitBeforeLoads>(st.value(), fa);
    }
    if (wait2) {
      auto st = bind(*so, outs(), ins(*e2), bo);
      if (!st.ok()) return st.error();
      lo = Kernels::template launch<GemmConfig, OprojStage, sm90::NoGridWait>(st.value(), oa);
    } else {
      // PDL: O-proj's CTAs stream W_o into their pipeline, then griddepcontrol.wait before O (the
      // swapped forms wait before any load: their B operand is O).
      auto st = bind(*so_flat, outs(), ins(), bo);
      if (!st.ok()) return st.error();
      lo = fo.launch(st.value(), sw_oproj_.data(), true);
    }
    if (!lq.ok()) return lq.error().with_context("baton::ops::Attention qkv");
    if (!la.ok()) return la.error().with_context("baton::ops::Attention attention");
    if (!lo.ok()) return lo.error().with_context("baton::ops::Attention oproj");
    launches_ = {lq.value(), la.value(), lo.value()};
    return {};
  }

  // The QKV (qkv = true) or O-proj GEMM flat over the padded tokens in its plan's form on GemmKernels:
  // formed, its split-K workspace allocated (zeroed on `stream`) and its shape and pointers checked.
  [[nodiscard]] status flat_gemm_(bool qkv, const AttentionTensors& t, cudaStream_t stream, detail::FormedGemm& out) {
    const AttentionShape& s = plan_.shape;
    const auto a = qkv ? attention_qkv_arguments(s, t) : attention_oproj_arguments(s, t);
    const int n = qkv ? 3 * s.width() : s.hidden, k = qkv ? s.hidden : s.width();
    const std::string what = std::string("baton::ops::Attention ") + (qkv ? "qkv" : "oproj") + " GEMM";
    out = detail::plain_gemm_in_form<GemmKernels>((qkv ? plan_.qkv_gemm : plan_.oproj_gemm).form, int(s.padded_tokens()), n,
                                                  k, a.a, a.b, a.d, what);
    BATON_TRY(out.unformed);
    async::device_allocation& ws = qkv ? sw_qkv_ : sw_oproj_;
    BATON_TRY(detail::alloc_zeroed(ws, out.split_bytes, stream, ("split-K workspace (" + what + ")").c_str()));
    return out.can(ws.data()).with_context(what);
  }

  // Decode: qkv (flat GEMM) -> attention (split-KV, appending the new K/V to the caches) -> [combine,
  // with more than one part] -> oproj (flat GEMM), every edge a PDL kernel boundary.
  [[nodiscard]] status build_decode_(const AttentionTensors& t, cudaStream_t stream, const AttentionRunOptions& o) {
    const AttentionShape& s = plan_.shape;
    detail::FormedGemm fq, fo;
    BATON_TRY(flat_gemm_(true, t, stream, fq));
    BATON_TRY(flat_gemm_(false, t, stream, fo));

    decode::Arguments da;
    da.batch = s.batch;
    da.heads = s.heads;
    da.m = s.seq;
    da.m_pad = s.padded_seq();
    da.kv_len = s.kv_len;
    da.cache_rows = s.cache_rows();
    da.parts = plan_.kv_splits;
    da.qkv = static_cast<const __nv_bfloat16*>(t.qkv);
    da.k_cache = static_cast<__nv_bfloat16*>(t.k_cache);
    da.v_cache = static_cast<__nv_bfloat16*>(t.v_cache);
    da.o = static_cast<__nv_bfloat16*>(t.o);
    size_t lse_offset = 0;
    const size_t part_bytes = decode::part_bytes(da, lse_offset);
    BATON_TRY(detail::alloc_zeroed(parts_, part_bytes, stream, "split-KV partial outputs"));
    if (part_bytes > 0) {
      da.o_part = static_cast<float*>(parts_.data());
      da.lse_part = reinterpret_cast<float*>(static_cast<char*>(parts_.data()) + lse_offset);
    }
    const bool combine = da.parts > 1;
    const Grid ga{da.parts, s.heads, s.batch}, gc{da.m_pad, s.heads, s.batch};
    const StageIO iq{.reads = {"X", "Wqkv"}, .writes = {"QKV"}};
    auto sq = chain_.add_stage("qkv", plan_.qkv_gemm.grid, Grouped{plan_.qkv_gemm.group_m}, iq);
    // The decode kernels take no tickets and post nothing: their stages are the chain's launch order.
    (void)chain_.add_stage("attention", ga, RowMajor{}, {.reads = {"Kcache", "Vcache"}, .writes = {"O", "Kcache", "Vcache"}});
    if (combine) (void)chain_.add_stage("combine", gc, RowMajor{}, {.writes = {"O"}});
    auto so = chain_.add_stage("oproj", plan_.oproj_gemm.grid, Grouped{plan_.oproj_gemm.group_m}, {.reads = {"Wo"}, .writes = {"Y"}});
    BATON_TRY(chain_.validate());
    BATON_TRY(detail::alloc_chain_workspace(chain_, ws_, stream));
    const size_t bytes = chain_.workspace_bytes();
    BindOptions bq, bo;
    bq.watchdog_ns = bo.watchdog_ns = o.watchdog_ns;
    bq.trace = o.trace_qkv;
    bo.trace = o.trace_oproj;
    auto stq = chain_.bind(sq, ws_.data(), bytes, outs(), ins(), bq);
    auto sto = chain_.bind(so, ws_.data(), bytes, outs(), ins(), bo);
    if (!stq.ok()) return stq.error();
    if (!sto.ok()) return sto.error();
    auto lq = fq.launch(stq.value(), sw_qkv_.data(), false);
    auto lo = fo.launch(sto.value(), sw_oproj_.data(), true);
    if (!lq.ok()) return lq.error().with_context("baton::ops::Attention qkv");
    if (!lo.ok()) return lo.error().with_context("baton::ops::Attention oproj");
    const dim3 block(decode::kThreads);
    launches_ = {lq.value(), make_launch(decode::attention_kernel(), dim3(ga.m, ga.n, ga.z), block, 0, da)};
    if (combine) launches_.push_back(make_launch(decode::decode_combine_kernel, dim3(gc.m, gc.n, gc.z), block, 0, da));
    launches_.push_back(lo.value());
    return {};
  }

  static std::string options_to_string_(const AttentionPlan& p) {
    return std::string("qkv_to_attention=") + to_string(p.qkv_to_attention) + ";attention_to_oproj=" +
           to_string(p.attention_to_oproj);
  }
  // The caller's options with the edges of `p` (a plan or a cached choice), its GEMM requests kept.
  static AttentionOptions edges_(const AttentionOptions& asked, const AttentionPlan& p) {
    AttentionOptions c = asked;
    c.qkv_to_attention = p.qkv_to_attention;
    c.attention_to_oproj = p.attention_to_oproj;
    return c;
  }
  static AttentionOptions edges_(const AttentionOptions& asked, const AttentionOptions& e) {
    AttentionOptions c = asked;
    c.qkv_to_attention = e.qkv_to_attention;
    c.attention_to_oproj = e.attention_to_oproj;
    return c;
  }
  static std::optional<AttentionOptions> options_from_string_(const std::string& v) {
    char a[16] = {0}, b[16] = {0};
    if (std::sscanf(v.c_str(), "qkv_to_attention=%15[a-z];attention_to_oproj=%15[a-z]", a, b) != 2) return std::nullopt;
    auto edge = [](const std::string& w) -> std::optional<AttentionEdgePolicy> {
      if (w == "none") return AttentionEdgePolicy::none;
      if (w == "kblock") return AttentionEdgePolicy::kblock;
      return std::nullopt;
    };
    auto e1 = edge(a), e2 = edge(b);
    if (!e1 || !e2) return std::nullopt;
    AttentionOptions o;
    o.qkv_to_attention = *e1;
    o.attention_to_oproj = *e2;
    return o;
  }

  [[nodiscard]] static result<std::unique_ptr<Attention>> tuned_(const AttentionShape& shape, const AttentionTensors& t,
                                                                 cudaStream_t stream, const AttentionRunOptions& o, int sms) {
    auto base = plan_attention(shape, sms, o.plan, gemm_forms);
    if (!base.ok()) return base.error();
    auto with = [&](const AttentionOptions& plan) {
      AttentionRunOptions co = o;
      co.tune = false;
      co.log = false;
      co.plan = plan;
      return create(shape, t, stream, co);
    };
    std::string key;
    if (o.tune_cache) {
      auto device = detail::current_tune_device_key(sms);
      if (!device.ok()) return device.error().with_context("baton::ops::Attention tuning");
      // The shape, what the caller fixed (a cached plan must honour the same requests) and the GPU.
      key = "attention;" + shape.str() + ";asked=" + to_string(o.plan.qkv_to_attention) + "," +
            to_string(o.plan.attention_to_oproj) + ",qkv_gemm=" + detail::request_text(o.plan.qkv_gemm) +
            ",oproj_gemm=" + detail::request_text(o.plan.oproj_gemm) + ";" + device.value();
      if (auto hit = TuneCache::global().find(key))
        if (auto cached = options_from_string_(*hit)) {
          auto m = with(edges_(o.plan, *cached));
          if (m.ok()) {
            m.value()->plan_.reason = "tuned earlier on this GPU (tuning cache): " + *hit;
            if (o.log) std::printf("%s\n", m.value()->plan_.log_line().c_str());
            return m;
          }
        }
    }
    // The planned pair first (kept unless another is > 2% faster), then every pair the request allows
    // (a GEMM form asked for keeps its edge none). Each keeps the caller's GEMM requests; the flat
    // GEMMs take the plan's forms.
    std::vector<AttentionOptions> cands{edges_(o.plan, base.value())};
    for (auto p1 : {AttentionEdgePolicy::none, AttentionEdgePolicy::kblock})
      for (auto p2 : {AttentionEdgePolicy::none, AttentionEdgePolicy::kblock}) {
        if (o.plan.qkv_to_attention != AttentionEdgePolicy::automatic && p1 != o.plan.qkv_to_attention) continue;
        if (o.plan.attention_to_oproj != AttentionEdgePolicy::automatic && p2 != o.plan.attention_to_oproj) continue;
        AttentionOptions c = o.plan;
        c.qkv_to_attention = p1;
        c.attention_to_oproj = p2;
        if (!plan_attention(shape, sms, c, gemm_forms).ok()) continue;
        if (std::find(cands.begin(), cands.end(), c) == cands.end()) cands.push_back(c);
      }
    std::vector<std::unique_ptr<Attention>> ops;
    for (const AttentionOptions& c : cands) {
      auto m = with(c);
      if (!m.ok()) return m.error().with_context("baton::ops::Attention tuning candidate");
      ops.push_back(std::move(m.value()));
    }
    auto timed = detail::time_candidates(ops, stream, o.tune_iters, [&](size_t i) { return options_to_string_(ops[i]->plan_); });
    if (!timed.ok()) return timed.error();
    std::string tried;
    for (size_t i = 0; i < ops.size(); ++i) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "%s%s %.2f us", i ? ", " : "", options_to_string_(ops[i]->plan_).c_str(),
                    timed.value().medians[i]);
      tried += buf;
    }
    std::unique_ptr<Attention> chosen = std::move(ops[timed.value().best]);
    ops.clear();
    if (o.tune_cache)
      BATON_TRY(TuneCache::global().put(key, options_to_string_(chosen->plan_)).with_context("baton::ops::Attention tuning"));
    chosen->plan_.reason = "tuned on this GPU (median of " + std::to_string(timed.value().rounds) +
                           " interleaved rounds of " + std::to_string(timed.value().per_round) + " passes): " + tried;
    if (o.log) std::printf("%s\n", chosen->plan_.log_line().c_str());
    return result<std::unique_ptr<Attention>>(std::move(chosen));
  }

  AttentionPlan plan_{};
  Chain chain_;
  async::device_allocation ws_;
  async::device_allocation sw_qkv_;  // split-K workspaces of the flat GEMMs (zeroed; the kernels leave them so)
  async::device_allocation sw_oproj_;
  async::device_allocation parts_;  // decode with split-KV: the parts' O (fp32) and log-sum-exp
  std::vector<StageLaunch> launches_;
};

// The op over the libraries' kernels (link baton::attention_kernels, which links baton::mlp_kernels for the
// flat GEMMs).
using CompiledAttention = Attention<attention_kernels::Compiled, mlp_kernels::Compiled<Activation::gelu>>;

}  // namespace baton::ops
