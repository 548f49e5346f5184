// GEMM1 Y = GeLU(X W1^T), 128x96 tiles as CTA pairs (1x2 clusters, A multicast), without baton edges.
// One kernel instantiation of bench/mlp.cu and baton::ops::Mlp (declared in mlp_gemms.cuh).
#include "mlp_gemms.cuh"

namespace baton_bench::mlp {
baton::result<baton::StageLaunch> gemm1_pair_launch(const PlainStage& s, const PairArgs1& a) {
  return baton::sm90::Gemm<PairConfig1, PlainStage>::make_launch(s, a);
}
}  // namespace baton_bench::mlp
