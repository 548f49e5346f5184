// GEMM1 swapped for decode, GeLU: Y^T = GeLU(W1 X^T) in 128x32 tiles (F units x tokens), Y written
// column-major. One kernel instantiation of bench/mlp.cu (declared in mlp_gemms.cuh).
#include "mlp_gemms.cuh"

namespace baton_bench::mlp {
baton::result<baton::StageLaunch> gemm1_swap_launch(const PlainStage& s, const SwapArgs1& a) {
  return baton::sm90::Gemm<SwapConfig1, PlainStage>::make_launch(s, a);
}
}  // namespace baton_bench::mlp
