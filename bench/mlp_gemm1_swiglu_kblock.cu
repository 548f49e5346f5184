// GEMM1 Y = SiLU(X Wg^T) * (X Wu^T) (interleaved gate/up weights) posting each tile for KBlockPolicy consumers.
// One kernel instantiation of bench/mlp.cu (declared in mlp_gemms.cuh).
#include "mlp_gemms.cuh"

namespace baton_bench::mlp {
baton::result<baton::StageLaunch> gemm1_launch(const ProducerStage<HandKBlock>& s, const SwiArgs1& a) {
  return baton::sm90::Gemm<SwiConfig1, ProducerStage<HandKBlock>>::make_launch(s, a);
}
}  // namespace baton_bench::mlp
