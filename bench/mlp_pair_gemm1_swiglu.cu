// GEMM1 Y = SiLU(X Wg^T) * (X Wu^T), 128x96 tiles as CTA pairs (A multicast), without baton edges.
// One kernel instantiation of bench/mlp.cu and baton::ops::Mlp (declared in mlp_gemms.cuh).
#include "mlp_gemms.cuh"

namespace baton_bench::mlp {
baton::result<baton::StageLaunch> gemm1_pair_launch(const PlainStage& s, const PairSwiArgs1& a) {
  return baton::sm90::Gemm<PairSwiConfig1, PlainStage>::make_launch(s, a);
}
}  // namespace baton_bench::mlp
