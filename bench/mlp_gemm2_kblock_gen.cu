// GEMM2 Z = Y W2^T waiting per k-block of Y under the generated KBlockPolicy<dsl::AffineFootprint>.
// One kernel instantiation of bench/mlp.cu (declared in mlp_gemms.cuh); the policy is the one batonc
// generates from include/baton/ops/mlp.baton (the op's).
#include "mlp_gemms.cuh"

namespace baton_bench::mlp {
baton::result<baton::StageLaunch> gemm2_launch(const ConsumerStage<KBlock>& s, const Args2& a) {
  return baton::sm90::Gemm<Config2, ConsumerStage<KBlock>>::make_launch(s, a);
}
}  // namespace baton_bench::mlp
