// The consumer GEMM instantiation (a stage that waits per k-block of A, posts nothing).
#include "gemm_test_types.cuh"

namespace bt::gemm {
baton::result<baton::StageLaunch> consumer_launch(const ConsumerStage& stage, const Args& args) {
  return baton::sm90::Gemm<Config, ConsumerStage>::make_launch(stage, args);
}
}  // namespace bt::gemm
