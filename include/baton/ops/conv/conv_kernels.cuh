// baton/ops/conv/conv_kernels.cuh — the kernels of baton::ops::Conv2dChain: one 128 x 64 x 64 tile
// (pixels x output channels x input channels per k-block), two epilogues (bias + ReLU; bias +
// residual + ReLU), three stage forms (no semaphores, posting, waiting). The op's policies are
// TilePolicy over the footprint batonc generates from conv_chain.baton (per tile: the whole R x S
// halo before the first load; per k-block: filter row r's input rows before k-block (r, s, cb)),
// so one posting and one waiting kernel serve both.
//
//   Inline    instantiates sm90::Conv<...> where the op is used (~1 min and ~3 GB of compiler memory
//             per kernel);
//   Compiled  declares compiled_launch only; the library baton::conv_kernels defines the explicit
//             instantiations, from the table in kernels/conv/kernels.cmake. A combination missing
//             from that table is a link error naming it.
#pragma once

#include "baton/cutlass/sm90_conv.cuh"  // first: CUTLASS's headers, CuTe's extended GMMA shapes

#include <concepts>

#include "baton/dsl/affine_footprint.hpp"
#include "baton/launch.cuh"
#include "baton/order.hpp"
#include "baton/policy.hpp"
#include "baton/stage.hpp"

namespace baton::ops::conv_kernels {

using bf16 = ::cutlass::bfloat16_t;
using TileShape = cute::Shape<cute::_128, cute::_64, cute::Shape<cute::_64>>;
using ReluConfig = sm90::ConvConfig<TileShape, false>;      // D = ReLU(conv + bias)
using ResidualConfig = sm90::ConvConfig<TileShape, true>;   // D = ReLU(conv + bias + R)
inline constexpr int kTileM = ReluConfig::tile_m, kTileN = ReluConfig::tile_n, kTileK = ReluConfig::tile_k;

// The edge's policy type: batonc's tile policy over its affine footprint (conv_chain_policies.hpp).
using Policy = TilePolicy<dsl::AffineFootprint>;
using PlainStage = Stage<Grouped, Outputs<>, Inputs<>>;
using ProducerStage = Stage<Grouped, Outputs<Policy>, Inputs<>>;
using ConsumerStage = Stage<Grouped, Outputs<>, Inputs<Policy>>;

// The launches a kernel set provides (Kernels::launch<Config, Stage, Wait>(stage, args)).
template <class K>
concept ConvKernelSet = requires(const PlainStage& plain, const ProducerStage& producer, const ConsumerStage& consumer,
                                 const sm90::ConvArguments<ReluConfig>& relu,
                                 const sm90::ConvArguments<ResidualConfig>& residual) {
  { K::template launch<ReluConfig, PlainStage, sm90::NoGridWait>(plain, relu) } -> std::same_as<result<StageLaunch>>;
  { K::template launch<ReluConfig, ProducerStage, sm90::NoGridWait>(producer, relu) } -> std::same_as<result<StageLaunch>>;
  { K::template launch<ReluConfig, ConsumerStage, sm90::NoGridWait>(consumer, relu) } -> std::same_as<result<StageLaunch>>;
  { K::template launch<ReluConfig, PlainStage, sm90::GridWaitBeforeA>(plain, relu) } -> std::same_as<result<StageLaunch>>;
  { K::template launch<ResidualConfig, PlainStage, sm90::NoGridWait>(plain, residual) } -> std::same_as<result<StageLaunch>>;
  { K::template launch<ResidualConfig, ConsumerStage, sm90::NoGridWait>(consumer, residual) } -> std::same_as<result<StageLaunch>>;
  { K::template launch<ResidualConfig, PlainStage, sm90::GridWaitBeforeA>(plain, residual) } -> std::same_as<result<StageLaunch>>;
};

struct Inline {
  template <class Config, class StageT, sm90::GridWait Wait = sm90::NoGridWait>
  static result<StageLaunch> launch(const StageT& s, const sm90::ConvArguments<Config>& a) {
    return sm90::Conv<Config, StageT, Wait>::make_launch(s, a);
  }
};

// Defined in baton::conv_kernels only (kernels/conv/compiled_launch.cuh).
template <class Config, class StageT, sm90::GridWait Wait>
result<StageLaunch> compiled_launch(const StageT& s, const sm90::ConvArguments<Config>& a);

struct Compiled {
  template <class Config, class StageT, sm90::GridWait Wait = sm90::NoGridWait>
  static result<StageLaunch> launch(const StageT& s, const sm90::ConvArguments<Config>& a) {
    return compiled_launch<Config, StageT, Wait>(s, a);
  }
};
static_assert(ConvKernelSet<Inline> && ConvKernelSet<Compiled>);

}  // namespace baton::ops::conv_kernels
