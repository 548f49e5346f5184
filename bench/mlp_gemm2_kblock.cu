// GEMM2 Z = Y W2^T waiting per k-block of Y (KBlockPolicy).
// One kernel instantiation of bench/mlp.cu (declared in mlp_gemms.cuh).
#include "mlp_gemms.cuh"

namespace baton_bench::mlp {
baton::result<baton::StageLaunch> gemm2_launch(const ConsumerStage<HandKBlock>& s, const Args2& a) {
  return baton::sm90::Gemm<Config2, ConsumerStage<HandKBlock>>::make_launch(s, a);
}
}  // namespace baton_bench::mlp
