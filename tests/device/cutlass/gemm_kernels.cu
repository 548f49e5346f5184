// The GEMM kernels of the sm90 device tests, one translation unit for all of them: the producer
// (posts each tile, reads nothing from the chain), the consumer (waits per k-block of A, posts
// nothing), the SwiGLU producer (interleaved gate/up weights, SiLU(gate) * up epilogue), and both
// GEMMs on a stage without edges (the persistent loop). They share
// CUTLASS's headers and the mainloop's instantiations, which are most of a unit's compile time, so
// one unit costs about what each of them cost alone (docs/mlp.md, "Build time"). The test file sees
// only the declarations in gemm_test_types.cuh.
#include "gemm_test_types.cuh"

namespace bt::gemm {
baton::result<baton::StageLaunch> producer_launch(const ProducerStage& stage, const Args& args) {
  return baton::sm90::Gemm<Config, ProducerStage>::make_launch(stage, args);
}
baton::result<baton::StageLaunch> consumer_launch(const ConsumerStage& stage, const Args& args) {
  return baton::sm90::Gemm<Config, ConsumerStage>::make_launch(stage, args);
}
baton::result<baton::StageLaunch> swiglu_producer_launch(const ProducerStage& stage, const SwiArgs& args) {
  return baton::sm90::Gemm<SwiConfig, ProducerStage>::make_launch(stage, args);
}
baton::result<baton::StageLaunch> plain_launch(const PlainStage& stage, const Args& args) {
  return baton::sm90::Gemm<Config, PlainStage>::make_launch(stage, args);
}
baton::result<baton::StageLaunch> swiglu_plain_launch(const PlainStage& stage, const SwiArgs& args) {
  return baton::sm90::Gemm<SwiConfig, PlainStage>::make_launch(stage, args);
}
}  // namespace bt::gemm
