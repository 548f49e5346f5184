// The producer GEMM instantiation (a stage that posts each tile, reads nothing from the chain).
#include "gemm_test_types.cuh"

namespace bt::gemm {
baton::result<baton::StageLaunch> producer_launch(const ProducerStage& stage, const Args& args) {
  return baton::sm90::Gemm<Config, ProducerStage>::make_launch(stage, args);
}

}  // namespace bt::gemm
