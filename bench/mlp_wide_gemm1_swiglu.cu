// GEMM1 Y = SiLU(X Wg^T) * (X Wu^T), 128x256 tiles (128 output columns), without baton edges.
// One kernel instantiation of bench/mlp.cu (declared in mlp_gemms.cuh).
#include "mlp_gemms.cuh"

namespace baton_bench::mlp {
baton::result<baton::StageLaunch> gemm1_wide_launch(const PlainStage& s, const WideSwiArgs1& a) {
  return baton::sm90::Gemm<WideSwiConfig1, PlainStage>::make_launch(s, a);
}
}  // namespace baton_bench::mlp
