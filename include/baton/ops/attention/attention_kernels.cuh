// baton/ops/attention/attention_kernels.cuh — the kernels of baton::ops::Attention: the QKV and
// O-proj GEMMs (128 x 128 x 64 tiles, batched over the sequences, weights shared) and the causal
// FMHA (128 queries x 128 keys x head_dim 128), each in the stage forms the chain's per-edge
// policies need (attention.hpp: none or kblock on each edge):
//
//   qkv    plain (its edge none)                 | posting per tile (kblock)
//   attn   in none: PDL, griddepcontrol.wait     | in kblock: waiting per key block
//          x out none: no posts                  | x out kblock: posting per tile
//   oproj  in none: PDL, weights first           | in kblock: waiting per k-block
//
// The policies are batonc's, from attention_chain.baton (attention_chain_policies.hpp).
//   Inline    instantiates the kernels where the op is used (~1 min and ~3 GB of compiler memory each);
//   Compiled  declares compiled_launch only; the library baton::attention_kernels defines the
//             explicit instantiations, from the table in kernels/attention/kernels.cmake.
#pragma once

#include "baton/cutlass/sm90_fmha.cuh"  // first: CUTLASS's headers and example 88's collectives

#include <concepts>

#include "baton/cutlass/sm90_gemm.cuh"
#include "baton/launch.cuh"
#include "baton/ops/attention/attention_chain_policies.hpp"
#include "baton/order.hpp"
#include "baton/policy.hpp"
#include "baton/stage.hpp"

namespace baton::ops::attention_kernels {
using bf16 = ::cutlass::bfloat16_t;
using GemmConfig = sm90::GemmConfig<>;  // 128 x 128 x 64, D = acc (bf16 out)
using FmhaConfig = sm90::FmhaConfig<>;  // causal, 128 x 128 x 128
inline constexpr int kGemmTileM = GemmConfig::tile_m, kGemmTileN = GemmConfig::tile_n, kGemmTileK = GemmConfig::tile_k;

// The edges' policy types: batonc's, per k-block (the per-tile forms share them, a run-time flag).
using QkvPolicy = attention_gen::qkv_to_attn_policy;     // dsl::BoxesPolicy<Grouping::tile>: Q, K_j, V_j tiles
using OprojPolicy = attention_gen::attn_to_oproj_policy;  // KBlockPolicy<dsl::AffineFootprint>
using PlainStage = Stage<RowMajor, Outputs<>, Inputs<>>;
using QkvStage = Stage<RowMajor, Outputs<QkvPolicy>, Inputs<>>;
using AttnPostStage = Stage<RowMajor, Outputs<OprojPolicy>, Inputs<>>;
using AttnWaitStage = Stage<RowMajor, Outputs<>, Inputs<QkvPolicy>>;
using AttnWaitPostStage = Stage<RowMajor, Outputs<OprojPolicy>, Inputs<QkvPolicy>>;
using OprojStage = Stage<RowMajor, Outputs<>, Inputs<OprojPolicy>>;
static_assert(std::is_same_v<QkvStage, attention_gen::qkv_stage> && std::is_same_v<AttnWaitPostStage, attention_gen::attn_stage> &&
                  std::is_same_v<OprojStage, attention_gen::oproj_stage>,
              "baton::ops::attention_kernels: the stages must be the ones batonc generates from attention_chain.baton");

// The launches a kernel set provides (Kernels::launch<Config, Stage, Wait>(stage, args)).
template <class K>
concept AttentionKernelSet = requires(const PlainStage& plain, const QkvStage& qkv, const AttnPostStage& attn_post,
                                      const AttnWaitStage& attn_wait, const AttnWaitPostStage& attn_wait_post,
                                      const OprojStage& oproj, const sm90::GemmArguments<GemmConfig>& g,
                                      const sm90::FmhaArguments& f) {
  { K::template launch<GemmConfig, PlainStage, sm90::NoGridWait>(plain, g) } -> std::same_as<result<StageLaunch>>;
  { K::template launch<GemmConfig, QkvStage, sm90::NoGridWait>(qkv, g) } -> std::same_as<result<StageLaunch>>;
  { K::template launch<FmhaConfig, PlainStage, sm90::GridWaitBeforeLoads>(plain, f) } -> std::same_as<result<StageLaunch>>;
  { K::template launch<FmhaConfig, AttnPostStage, sm90::GridWaitBeforeLoads>(attn_post, f) } -> std::same_as<result<StageLaunch>>;
  { K::template launch<FmhaConfig, AttnWaitStage, sm90::NoGridWait>(attn_wait, f) } -> std::same_as<result<StageLaunch>>;
  { K::template launch<FmhaConfig, AttnWaitPostStage, sm90::NoGridWait>(attn_wait_post, f) } -> std::same_as<result<StageLaunch>>;
  { K::template launch<GemmConfig, PlainStage, sm90::GridWaitBeforeA>(plain, g) } -> std::same_as<result<StageLaunch>>;
  { K::template launch<GemmConfig, OprojStage, sm90::NoGridWait>(oproj, g) } -> std::same_as<result<StageLaunch>>;
};

struct Inline {
  template <class Config, class StageT, sm90::GridWait Wait = sm90::NoGridWait>
  static result<StageLaunch> launch(const StageT& s, const sm90::LaunchArguments<Config>& a) {
    if constexpr (sm90::is_fmha_config<Config>) return sm90::Fmha<Config, StageT, Wait>::make_launch(s, a);
    else return sm90::Gemm<Config, StageT, Wait>::make_launch(s, a);
  }
};
// Defined in baton::attention_kernels only (kernels/attention/compiled_launch.cuh).
template <class Config, class StageT, sm90::GridWait Wait>
result<StageLaunch> compiled_launch(const StageT& s, const sm90::LaunchArguments<Config>& a);
struct Compiled {
  template <class Config, class StageT, sm90::GridWait Wait = sm90::NoGridWait>
  static result<StageLaunch> launch(const StageT& s, const sm90::LaunchArguments<Config>& a) {
    return compiled_launch<Config, StageT, Wait>(s, a);
  }
};
static_assert(AttentionKernelSet<Inline> && AttentionKernelSet<Compiled>);
}  // namespace baton::ops::attention_kernels
