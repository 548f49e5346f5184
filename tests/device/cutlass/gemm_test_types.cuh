// Types shared by the sm90 GEMM device tests. The kernel instantiations live in gemm_kernels.cu;
// the test file only sees these declarations.
#pragma once

#include "baton/baton.cuh"
#include "baton/cutlass/sm90_gemm.cuh"
#include "baton/cutlass/swiglu.cuh"

namespace bt::gemm {

using Config = baton::sm90::GemmConfig<>;  // 128x128x64, cooperative, 1x1x1 cluster, bf16 -> fp32 -> bf16
using Args = baton::sm90::GemmArguments<Config>;
using bf16 = ::cutlass::bfloat16_t;

// Per-k-block waits: consumer k-block k waits only for the producer tiles holding A's columns
// [64k, 64k + 64) of its 128 rows.
using Edge = baton::KBlockPolicy<baton::footprint::GemmA>;
using ProducerStage = baton::Stage<baton::RowMajor, baton::Outputs<Edge>, baton::Inputs<>>;  // posts per tile
using ConsumerStage = baton::Stage<baton::RowMajor, baton::Outputs<>, baton::Inputs<Edge>>;  // waits per k-block

[[nodiscard]] baton::result<baton::StageLaunch> producer_launch(const ProducerStage& stage, const Args& args);

// SwiGLU producer: GEMM over interleaved gate/up weights [2F, K], writes SiLU(gate) * up [M, F].
using SwiConfig = baton::sm90::GemmConfig<Config::TileShape, Config::FusionOp, /*SwiGluPairs=*/true>;
using SwiArgs = baton::sm90::GemmArguments<SwiConfig>;
[[nodiscard]] baton::result<baton::StageLaunch> swiglu_producer_launch(const ProducerStage& stage, const SwiArgs& args);

[[nodiscard]] baton::result<baton::StageLaunch> consumer_launch(const ConsumerStage& stage, const Args& args);

// A stage without edges (as ops::Mlp's GEMMs under policy none): the persistent loop's kernels
// (GemmArguments::persistent_ctas), plain and SwiGLU.
using PlainStage = baton::Stage<baton::Grouped, baton::Outputs<>, baton::Inputs<>>;
[[nodiscard]] baton::result<baton::StageLaunch> plain_launch(const PlainStage& stage, const Args& args);
[[nodiscard]] baton::result<baton::StageLaunch> swiglu_plain_launch(const PlainStage& stage, const SwiArgs& args);

}  // namespace bt::gemm
