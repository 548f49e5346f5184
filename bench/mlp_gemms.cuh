// bench/mlp_gemms.cuh — the sm90 GEMM kernels of the MLP benchmark (bench/mlp.cu), declared here and
// instantiated one per translation unit (bench/mlp_gemm*.cu: ~40 s and ~3 GB of compiler memory
// each, so `-j 2` builds them side by side). mlp.cu only sees these declarations.
//
//   GEMM1  Y = GeLU(X W1^T)   Config1 (GeLU fused in the epilogue)             GPT-3 style
//          Y = SiLU(X Wg^T) * (X Wu^T)  SwiConfig1 (one GEMM over interleaved
//              gate/up rows W1 [2F, H], SwiGLU pair epilogue)                    LLaMA style
//   GEMM2  Z = Y W2^T          Config2 (plain linear combination)
// plus the CUTLASS GemmUniversal baselines (Stream-K / persistent data-parallel scheduler) in
// mlp_streamk_*.cu.
#pragma once

#include "baton/baton.cuh"
#include "baton/cutlass/sm90_gemm.cuh"
#include "baton/ops/mlp.cuh"

#include <memory>

namespace baton_bench::mlp {

// The op's kernel types (baton/ops/mlp.cuh); the bench compiles each kernel in its own TU.
using bf16 = ::cutlass::bfloat16_t;
using Tile = baton::ops::mlp_kernels::Tile;
using Config1 = baton::ops::mlp_kernels::GeluConfig;
using Config2 = baton::ops::mlp_kernels::DownConfig;
using SwiConfig1 = baton::ops::mlp_kernels::SwiGluConfig;
using Args1 = baton::sm90::GemmArguments<Config1>;
using SwiArgs1 = baton::sm90::GemmArguments<SwiConfig1>;
using Args2 = baton::sm90::GemmArguments<Config2>;

using KBlock = baton::ops::mlp_kernels::KBlock;  // per-k-block waits
using Row = baton::ops::mlp_kernels::Row;        // one wait per row of producer tiles

// Plain GEMMs (the CUTLASS baselines): the same kernel code, a stage with no edges (it still takes
// a ticket for its tile). Every stage walks its tiles in baton::Grouped order (group_m at run time).
using PlainStage = baton::ops::mlp_kernels::PlainStage;
template <class P>
using ProducerStage = baton::ops::mlp_kernels::ProducerStage<P>;
template <class P>
using ConsumerStage = baton::ops::mlp_kernels::ConsumerStage<P>;

// GEMM1 (GeLU): plain, or posting each tile to a policy's semaphores.
[[nodiscard]] baton::result<baton::StageLaunch> gemm1_launch(const PlainStage& s, const Args1& a);      // mlp_gemm1_plain.cu
[[nodiscard]] baton::result<baton::StageLaunch> gemm1_launch(const ProducerStage<KBlock>& s, const Args1& a);  // mlp_gemm1_kblock.cu
[[nodiscard]] baton::result<baton::StageLaunch> gemm1_launch(const ProducerStage<Row>& s, const Args1& a);     // mlp_gemm1_row.cu
// GEMM1 (SwiGLU): the same three.
[[nodiscard]] baton::result<baton::StageLaunch> gemm1_launch(const PlainStage& s, const SwiArgs1& a);             // mlp_gemm1_swiglu_plain.cu
[[nodiscard]] baton::result<baton::StageLaunch> gemm1_launch(const ProducerStage<KBlock>& s, const SwiArgs1& a);  // mlp_gemm1_swiglu_kblock.cu
[[nodiscard]] baton::result<baton::StageLaunch> gemm1_launch(const ProducerStage<Row>& s, const SwiArgs1& a);     // mlp_gemm1_swiglu_row.cu
// GEMM2: plain; plain with griddepcontrol.wait before its loads (PDL baseline); or waiting on a policy.
[[nodiscard]] baton::result<baton::StageLaunch> gemm2_launch(const PlainStage& s, const Args2& a);       // mlp_gemm2_plain.cu
[[nodiscard]] baton::result<baton::StageLaunch> gemm2_pdl_wait_launch(const PlainStage& s, const Args2& a);  // mlp_gemm2_pdl.cu
// ... and the op's PDL form: weights into the pipeline first, then griddepcontrol.wait before Y's loads.
[[nodiscard]] baton::result<baton::StageLaunch> gemm2_pdl_weights_first_launch(const PlainStage& s, const Args2& a);  // mlp_gemm2_pdl_wf.cu
[[nodiscard]] baton::result<baton::StageLaunch> gemm2_launch(const ConsumerStage<KBlock>& s, const Args2& a);  // mlp_gemm2_kblock.cu
[[nodiscard]] baton::result<baton::StageLaunch> gemm2_launch(const ConsumerStage<Row>& s, const Args2& a);     // mlp_gemm2_row.cu

// 128x256 tiles (2x the MMAs of 128x128 for 1.5x the shared-memory fills): plain stages only, for
// the op's wide GEMMs and the cutlass-wide-graph / cutlass-wide2-graph variants (mlp_wide_*.cu).
using WideConfig1 = baton::ops::mlp_kernels::WideGeluConfig;
using WideSwiConfig1 = baton::ops::mlp_kernels::WideSwiGluConfig;
using WideConfig2 = baton::ops::mlp_kernels::WideDownConfig;
using WideArgs1 = baton::sm90::GemmArguments<WideConfig1>;
using WideSwiArgs1 = baton::sm90::GemmArguments<WideSwiConfig1>;
using WideArgs2 = baton::sm90::GemmArguments<WideConfig2>;
[[nodiscard]] baton::result<baton::StageLaunch> gemm1_wide_launch(const PlainStage& s, const WideArgs1& a);     // mlp_wide_gemm1.cu
[[nodiscard]] baton::result<baton::StageLaunch> gemm1_wide_launch(const PlainStage& s, const WideSwiArgs1& a);  // mlp_wide_gemm1_swiglu.cu
[[nodiscard]] baton::result<baton::StageLaunch> gemm2_wide_launch(const PlainStage& s, const WideArgs2& a);     // mlp_wide_gemm2.cu
[[nodiscard]] baton::result<baton::StageLaunch> gemm2_wide_pdl_weights_first_launch(const PlainStage& s,
                                                                                   const WideArgs2& a);  // mlp_wide_gemm2_pdl_wf.cu
// 128x192 tiles, the same way (the op's mid-width GEMMs).
using MidConfig1 = baton::ops::mlp_kernels::MidGeluConfig;
using MidSwiConfig1 = baton::ops::mlp_kernels::MidSwiGluConfig;
using MidConfig2 = baton::ops::mlp_kernels::MidDownConfig;
using MidArgs1 = baton::sm90::GemmArguments<MidConfig1>;
using MidSwiArgs1 = baton::sm90::GemmArguments<MidSwiConfig1>;
using MidArgs2 = baton::sm90::GemmArguments<MidConfig2>;
[[nodiscard]] baton::result<baton::StageLaunch> gemm1_mid_launch(const PlainStage& s, const MidArgs1& a);     // mlp_mid_gemm1.cu
[[nodiscard]] baton::result<baton::StageLaunch> gemm1_mid_launch(const PlainStage& s, const MidSwiArgs1& a);  // mlp_mid_gemm1_swiglu.cu
[[nodiscard]] baton::result<baton::StageLaunch> gemm2_mid_launch(const PlainStage& s, const MidArgs2& a);     // mlp_mid_gemm2.cu
[[nodiscard]] baton::result<baton::StageLaunch> gemm2_mid_pdl_weights_first_launch(const PlainStage& s,
                                                                                  const MidArgs2& a);  // mlp_mid_gemm2_pdl_wf.cu
// 128x96 tiles, the same way (the op's narrow GEMMs: 4/3 the tiles of 128x128, for grids that
// fill a wave better).
using NarrowConfig1 = baton::ops::mlp_kernels::NarrowGeluConfig;
using NarrowSwiConfig1 = baton::ops::mlp_kernels::NarrowSwiGluConfig;
using NarrowConfig2 = baton::ops::mlp_kernels::NarrowDownConfig;
using NarrowArgs1 = baton::sm90::GemmArguments<NarrowConfig1>;
using NarrowSwiArgs1 = baton::sm90::GemmArguments<NarrowSwiConfig1>;
using NarrowArgs2 = baton::sm90::GemmArguments<NarrowConfig2>;
[[nodiscard]] baton::result<baton::StageLaunch> gemm1_narrow_launch(const PlainStage& s, const NarrowArgs1& a);     // mlp_narrow_gemm1.cu
[[nodiscard]] baton::result<baton::StageLaunch> gemm1_narrow_launch(const PlainStage& s, const NarrowSwiArgs1& a);  // mlp_narrow_gemm1_swiglu.cu
[[nodiscard]] baton::result<baton::StageLaunch> gemm2_narrow_launch(const PlainStage& s, const NarrowArgs2& a);     // mlp_narrow_gemm2.cu
[[nodiscard]] baton::result<baton::StageLaunch> gemm2_narrow_pdl_weights_first_launch(const PlainStage& s,
                                                                                     const NarrowArgs2& a);  // mlp_narrow_gemm2_pdl_wf.cu
// 128x96 tiles as CTA pairs (1x2 clusters, A multicast; MlpOptions::cta_pairs).
using PairConfig1 = baton::ops::mlp_kernels::PairGeluConfig;
using PairSwiConfig1 = baton::ops::mlp_kernels::PairSwiGluConfig;
using PairConfig2 = baton::ops::mlp_kernels::PairDownConfig;
using PairArgs1 = baton::sm90::GemmArguments<PairConfig1>;
using PairSwiArgs1 = baton::sm90::GemmArguments<PairSwiConfig1>;
using PairArgs2 = baton::sm90::GemmArguments<PairConfig2>;
[[nodiscard]] baton::result<baton::StageLaunch> gemm1_pair_launch(const PlainStage& s, const PairArgs1& a);     // mlp_pair_gemm1.cu
[[nodiscard]] baton::result<baton::StageLaunch> gemm1_pair_launch(const PlainStage& s, const PairSwiArgs1& a);  // mlp_pair_gemm1_swiglu.cu
[[nodiscard]] baton::result<baton::StageLaunch> gemm2_pair_launch(const PlainStage& s, const PairArgs2& a);     // mlp_pair_gemm2.cu
[[nodiscard]] baton::result<baton::StageLaunch> gemm2_pair_pdl_weights_first_launch(const PlainStage& s,
                                                                                   const PairArgs2& a);  // mlp_pair_gemm2_pdl_wf.cu
// The swapped decode GEMM2 (W2 x Y^T, 128x32 tiles, D column-major): plain and PDL-waiting.
using SwapConfig2 = baton::ops::mlp_kernels::SwapDownConfig;
using SwapArgs2 = baton::sm90::GemmArguments<SwapConfig2>;
[[nodiscard]] baton::result<baton::StageLaunch> gemm2_swap_launch(const PlainStage& s, const SwapArgs2& a);      // mlp_swap_gemm2.cu
[[nodiscard]] baton::result<baton::StageLaunch> gemm2_swap_pdl_launch(const PlainStage& s, const SwapArgs2& a);  // mlp_swap_gemm2_pdl.cu
// The swapped decode GEMM1 with GeLU (W1 x X^T, Y column-major as Y^T).
using SwapConfig1 = baton::ops::mlp_kernels::SwapGeluConfig;
using SwapArgs1 = baton::sm90::GemmArguments<SwapConfig1>;
[[nodiscard]] baton::result<baton::StageLaunch> gemm1_swap_launch(const PlainStage& s, const SwapArgs1& a);  // mlp_swap_gemm1.cu

// CUTLASS 4.2 GemmUniversal (cooperative kernel, StreamKScheduler) on the same collectives as
// Config1 / Config2: a persistent kernel whose scheduler decomposes the work per `mode`.
enum class SchedulerMode { stream_k, data_parallel, heuristic };
class UniversalGemm {
 public:
  virtual ~UniversalGemm() = default;
  // One GEMM on `stream` (re-zeroes the Stream-K barrier workspace first; capturable).
  [[nodiscard]] virtual baton::status run(cudaStream_t stream) = 0;
};
// D [m, n] = act(A [m, k] B [n, k]^T); sms: the SM count the scheduler plans for.
[[nodiscard]] baton::result<std::unique_ptr<UniversalGemm>> make_universal_gelu(int m, int n, int k, const bf16* a, const bf16* b,
                                                                               bf16* d, SchedulerMode mode, int sms,
                                                                               cudaStream_t stream);  // mlp_streamk_gelu.cu
[[nodiscard]] baton::result<std::unique_ptr<UniversalGemm>> make_universal_plain(int m, int n, int k, const bf16* a, const bf16* b,
                                                                                bf16* d, SchedulerMode mode, int sms,
                                                                                cudaStream_t stream);  // mlp_streamk_plain.cu

// The kernel set of baton::ops::Mlp, forwarding to the instantiations above.
template <baton::ops::activation A>
struct OpKernels {
  template <class S, class UpArgs>
  static baton::result<baton::StageLaunch> up(const S& s, const UpArgs& a) { return gemm1_launch(s, a); }
  template <class S>
  static baton::result<baton::StageLaunch> down(const S& s, const Args2& a) { return gemm2_launch(s, a); }
  static baton::result<baton::StageLaunch> down_after_grid(const PlainStage& s, const Args2& a) {
    return gemm2_pdl_weights_first_launch(s, a);
  }
  template <class WideUpArgs>
  static baton::result<baton::StageLaunch> up_wide(const PlainStage& s, const WideUpArgs& a) { return gemm1_wide_launch(s, a); }
  static baton::result<baton::StageLaunch> down_wide(const PlainStage& s, const WideArgs2& a) { return gemm2_wide_launch(s, a); }
  template <class MidUpArgs>
  static baton::result<baton::StageLaunch> up_mid(const PlainStage& s, const MidUpArgs& a) { return gemm1_mid_launch(s, a); }
  static baton::result<baton::StageLaunch> down_mid(const PlainStage& s, const MidArgs2& a) { return gemm2_mid_launch(s, a); }
  static baton::result<baton::StageLaunch> down_mid_after_grid(const PlainStage& s, const MidArgs2& a) {
    return gemm2_mid_pdl_weights_first_launch(s, a);
  }
  static baton::result<baton::StageLaunch> down_wide_after_grid(const PlainStage& s, const WideArgs2& a) {
    return gemm2_wide_pdl_weights_first_launch(s, a);
  }
  template <class NarrowUpArgs>
  static baton::result<baton::StageLaunch> up_narrow(const PlainStage& s, const NarrowUpArgs& a) {
    return gemm1_narrow_launch(s, a);
  }
  static baton::result<baton::StageLaunch> down_narrow(const PlainStage& s, const NarrowArgs2& a) {
    return gemm2_narrow_launch(s, a);
  }
  static baton::result<baton::StageLaunch> down_narrow_after_grid(const PlainStage& s, const NarrowArgs2& a) {
    return gemm2_narrow_pdl_weights_first_launch(s, a);
  }
  template <class PairUpArgs>
  static baton::result<baton::StageLaunch> up_pair(const PlainStage& s, const PairUpArgs& a) { return gemm1_pair_launch(s, a); }
  static baton::result<baton::StageLaunch> down_pair(const PlainStage& s, const PairArgs2& a) { return gemm2_pair_launch(s, a); }
  static baton::result<baton::StageLaunch> down_pair_after_grid(const PlainStage& s, const PairArgs2& a) {
    return gemm2_pair_pdl_weights_first_launch(s, a);
  }
  static baton::result<baton::StageLaunch> down_swapped(const PlainStage& s, const SwapArgs2& a) { return gemm2_swap_launch(s, a); }
  static baton::result<baton::StageLaunch> up_swapped(const PlainStage& s, const SwapArgs1& a) { return gemm1_swap_launch(s, a); }
  static baton::result<baton::StageLaunch> down_swapped_after_grid(const PlainStage& s, const SwapArgs2& a) {
    return gemm2_swap_pdl_launch(s, a);
  }
};

}  // namespace baton_bench::mlp
