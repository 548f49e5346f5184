// GEMM2 Z = Y W2^T with griddepcontrol.wait before its loads (cutlass-pdl-graph).
// One kernel instantiation of bench/mlp.cu (declared in mlp_gemms.cuh).
#include "mlp_gemms.cuh"

namespace baton_bench::mlp {
baton::result<baton::StageLaunch> gemm2_pdl_wait_launch(const PlainStage& s, const Args2& a) {
  return baton::sm90::Gemm<Config2, PlainStage, /*GridDependencyWait=*/true>::make_launch(s, a);
}
}  // namespace baton_bench::mlp
