// GEMM1 Y = GeLU(X W1^T), 128x256 tiles, without baton edges.
// One kernel instantiation of bench/mlp.cu (declared in mlp_gemms.cuh).
#include "mlp_gemms.cuh"

namespace baton_bench::mlp {
baton::result<baton::StageLaunch> gemm1_wide_launch(const PlainStage& s, const WideArgs1& a) {
  return baton::sm90::Gemm<WideConfig1, PlainStage>::make_launch(s, a);
}
}  // namespace baton_bench::mlp
