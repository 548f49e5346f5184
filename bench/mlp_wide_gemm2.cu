// GEMM2 Z = Y W2^T, 128x256 tiles, without baton edges.
// One kernel instantiation of bench/mlp.cu (declared in mlp_gemms.cuh).
#include "mlp_gemms.cuh"

namespace baton_bench::mlp {
baton::result<baton::StageLaunch> gemm2_wide_launch(const PlainStage& s, const WideArgs2& a) {
  return baton::sm90::Gemm<WideConfig2, PlainStage>::make_launch(s, a);
}
}  // namespace baton_bench::mlp
