// GEMM1 Y = GeLU(X W1^T) posting each tile for KBlockPolicy consumers.
// One kernel instantiation of bench/mlp.cu (declared in mlp_gemms.cuh).
#include "mlp_gemms.cuh"

namespace baton_bench::mlp {
baton::result<baton::StageLaunch> gemm1_launch(const ProducerStage<HandKBlock>& s, const Args1& a) {
  return baton::sm90::Gemm<Config1, ProducerStage<HandKBlock>>::make_launch(s, a);
}
}  // namespace baton_bench::mlp
