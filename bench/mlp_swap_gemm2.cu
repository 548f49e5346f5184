// GEMM2 swapped for decode: Z^T = W2 Y^T in 128x32 tiles (hidden units x tokens), D column-major.
// One kernel instantiation of bench/mlp.cu (declared in mlp_gemms.cuh).
#include "mlp_gemms.cuh"

namespace baton_bench::mlp {
baton::result<baton::StageLaunch> gemm2_swap_launch(const PlainStage& s, const SwapArgs2& a) {
  return baton::sm90::Gemm<SwapConfig2, PlainStage>::make_launch(s, a);
}
}  // namespace baton_bench::mlp
