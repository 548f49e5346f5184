// GEMM2 swapped for decode (mlp_swap_gemm2.cu), PDL-launched: griddepcontrol.wait before any load
// (its B operand is Y, written by GEMM1). One kernel instantiation of bench/mlp.cu.
#include "mlp_gemms.cuh"

namespace baton_bench::mlp {
baton::result<baton::StageLaunch> gemm2_swap_pdl_launch(const PlainStage& s, const SwapArgs2& a) {
  return baton::sm90::Gemm<SwapConfig2, PlainStage, /*GridDependencyWait=*/true>::make_launch(s, a);
}
}  // namespace baton_bench::mlp
