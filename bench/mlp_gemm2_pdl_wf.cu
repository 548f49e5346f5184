// GEMM2 Z = Y W2^T PDL-launched, its weights loaded before griddepcontrol.wait (baton::ops::Mlp's
// `none` chain at decode). One kernel instantiation of bench/mlp.cu (declared in mlp_gemms.cuh).
#include "mlp_gemms.cuh"

namespace baton_bench::mlp {
baton::result<baton::StageLaunch> gemm2_pdl_weights_first_launch(const PlainStage& s, const Args2& a) {
  return baton::sm90::Gemm<Config2, PlainStage, /*GridDependencyWait=*/true, /*WeightsFirst=*/true>::make_launch(s, a);
}
}  // namespace baton_bench::mlp
