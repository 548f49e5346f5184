// GEMM2 Z = Y W2^T, 128x96 tiles as CTA pairs, PDL-launched: W2 first, then griddepcontrol.wait before Y.
// One kernel instantiation of bench/mlp.cu and baton::ops::Mlp (declared in mlp_gemms.cuh).
#include "mlp_gemms.cuh"

namespace baton_bench::mlp {
baton::result<baton::StageLaunch> gemm2_pair_pdl_weights_first_launch(const PlainStage& s, const PairArgs2& a) {
  return baton::sm90::Gemm<PairConfig2, PlainStage, /*GridDependencyWait=*/true, /*WeightsFirst=*/true>::make_launch(s, a);
}
}  // namespace baton_bench::mlp
