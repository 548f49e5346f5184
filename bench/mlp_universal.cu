// The CUTLASS GemmUniversal baselines of bench/mlp.cu (declared in mlp_gemms.cuh; target
// baton_bench_universal): GeLU epilogue (GEMM1 of the GPT-3 MLP) and plain (GEMM2, and GEMM1 of the
// LLaMA MLP before its SwiGLU kernel). One translation unit for both: they share CUTLASS's headers
// and the mainloop's instantiations (docs/mlp.md, "Build time"). Config1 / Config2 are 128-wide tiles,
// CuTe's standard GMMA widths: no extended selector (baton/cutlass/sm90_gemm.cuh).
#define BATON_STANDARD_MMA_SHAPES_ONLY
#include "mlp_universal.cuh"

namespace baton_bench::mlp {
baton::result<std::unique_ptr<UniversalGemm>> make_universal_gelu(int m, int n, int k, const bf16* a, const bf16* b, bf16* d,
                                                                 SchedulerMode mode, int sms, cudaStream_t stream) {
  return make_universal<Config1>(m, n, k, a, b, d, mode, sms, stream);
}
baton::result<std::unique_ptr<UniversalGemm>> make_universal_plain(int m, int n, int k, const bf16* a, const bf16* b, bf16* d,
                                                                  SchedulerMode mode, int sms, cudaStream_t stream) {
  return make_universal<Config2>(m, n, k, a, b, d, mode, sms, stream);
}
}  // namespace baton_bench::mlp
