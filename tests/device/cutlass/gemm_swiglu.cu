// The SwiGLU producer GEMM instantiation (interleaved gate/up weights, SiLU(gate) * up epilogue).
#include "gemm_test_types.cuh"

namespace bt::gemm {
baton::result<baton::StageLaunch> swiglu_producer_launch(const ProducerStage& stage, const SwiArgs& args) {
  return baton::sm90::Gemm<SwiConfig, ProducerStage>::make_launch(stage, args);
}
}  // namespace bt::gemm
