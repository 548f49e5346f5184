// The CUTLASS GemmUniversal baseline (plain epilogue: GEMM2, and GEMM1 of the LLaMA MLP before its SwiGLU kernel).
// One kernel instantiation of bench/mlp.cu (declared in mlp_gemms.cuh; target baton_bench_universal).
#include "mlp_universal.cuh"

namespace baton_bench::mlp {
baton::result<std::unique_ptr<UniversalGemm>> make_universal_plain(int m, int n, int k, const bf16* a, const bf16* b, bf16* d,
                                                                 SchedulerMode mode, int sms, cudaStream_t stream) {
  return make_universal<Config2>(m, n, k, a, b, d, mode, sms, stream);
}
}  // namespace baton_bench::mlp
