// GEMM1 (SwiGLU pair) posting each tile for the generated RowPolicy<dsl::AffineFootprint>.
// One kernel instantiation of bench/mlp.cu (declared in mlp_gemms.cuh); the policy is the one batonc
// generates from include/baton/ops/mlp.baton (the op's).
#include "mlp_gemms.cuh"

namespace baton_bench::mlp {
baton::result<baton::StageLaunch> gemm1_launch(const ProducerStage<Row>& s, const SwiArgs1& a) {
  return baton::sm90::Gemm<SwiConfig1, ProducerStage<Row>>::make_launch(s, a);
}
}  // namespace baton_bench::mlp
