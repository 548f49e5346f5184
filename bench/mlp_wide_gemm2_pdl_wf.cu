// GEMM2 Z = Y W2^T, 128x256 tiles, PDL-launched: W2 into the pipeline first, then griddepcontrol.wait
// before its loads of Y (the op's form when its plan PDL-launches GEMM2).
// One kernel instantiation of bench/mlp.cu and baton::ops::Mlp (declared in mlp_gemms.cuh).
#include "mlp_gemms.cuh"

namespace baton_bench::mlp {
baton::result<baton::StageLaunch> gemm2_wide_pdl_weights_first_launch(const PlainStage& s, const WideArgs2& a) {
  return baton::sm90::Gemm<WideConfig2, PlainStage, /*GridDependencyWait=*/true, /*WeightsFirst=*/true>::make_launch(s, a);
}
}  // namespace baton_bench::mlp
