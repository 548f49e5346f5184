// Two dependent kernels with baton: `scale` writes Y = 2·X tile by tile; `rowsum` reads whole
// rows of Y. With a row policy, a rowsum tile starts as soon as its row of Y is done, while the
// rest of `scale` still runs. Build: part of the CMake tree (baton_example_two_stage).
#include <cstdio>
#include <vector>

#include "baton/baton.cuh"

using namespace baton;
constexpr int M = 4096, N = 4096, TM = 64, TN = 128;
using RowSync = RowPolicy<footprint::GemmA>;

__global__ void scale(Stage<RowMajor, Outputs<RowSync>> s, const float* x, float* y) {
  Assignment a = s.tile();  // this CTA's tile (and the epoch)
  for (int i = threadIdx.x; i < TM * TN; i += blockDim.x) {
    int r = a.tile.m * TM + i / TN, c = a.tile.n * TN + i % TN;
    y[r * N + c] = 2.f * x[r * N + c];
  }
  s.post(a);  // CTA barrier, then release-add on this row's semaphore
}

__global__ void rowsum(Stage<RowMajor, Outputs<>, Inputs<RowSync>> s, const float* y, float* out) {
  Assignment a = s.tile();
  if (!s.wait(a)) return;  // acquire: every tile of rows [a.tile.m*TM, +TM) of y is written
  int r = a.tile.m * TM + threadIdx.x;
  float acc = 0.f;
  for (int c = 0; c < N; ++c) acc += y[r * N + c];
  out[r] = acc;
}

int main() {
  if (status s = require_device(); !s.ok()) return std::printf("%s\n", s.to_string().c_str()), 0;
  footprint::GemmA fp{M, N, TM, TN, TM, N};  // rowsum tile m reads rows [m*TM, +TM), all columns
  Grid g1 = fp.producer_grid(), g2{M / TM, 1, 1};
  Chain chain;
  auto a = chain.add_stage("scale", g1, RowMajor{}, {.writes = {"y"}});
  auto b = chain.add_stage("rowsum", g2, RowMajor{}, {.reads = {"y"}});
  auto e = chain.add_edge(a, b, RowSync{g1, fp}, deps::gemm_a(fp, g2));
  if (status s = chain.validate(); !s.ok()) return std::printf("%s\n", s.to_string().c_str()), 1;  // checker ran

  float *x, *y, *out;
  void* ws;
  cudaMalloc(&x, M * N * 4), cudaMalloc(&y, M * N * 4), cudaMalloc(&out, M * 4);
  cudaMalloc(&ws, chain.workspace_bytes());
  std::vector<float> hx(size_t(M) * N, 1.f), hout(M);
  cudaStream_t st;
  cudaStreamCreate(&st);
  cudaMemcpyAsync(x, hx.data(), hx.size() * 4, cudaMemcpyHostToDevice, st);
  if (status s = initialize_workspace(chain, ws, chain.workspace_bytes(), st); !s.ok()) return 1;

  auto sa = chain.bind(a, ws, chain.workspace_bytes(), outs(e), ins());
  auto sb = chain.bind(b, ws, chain.workspace_bytes(), outs(), ins(e));
  std::vector<StageLaunch> launches{make_launch(scale, dim3(unsigned(g1.size())), dim3(256), 0, sa.value(), (const float*)x, y),
                                    make_launch(rowsum, dim3(unsigned(g2.size())), dim3(TM), 0, sb.value(), (const float*)y, out)};
  for (int it = 0; it < 10; ++it)  // relaunch freely: semaphores advance by epoch, never reset
    if (status s = launch_chain(chain, st, launches); !s.ok()) return std::printf("%s\n", s.to_string().c_str()), 1;
  if (status s = check_errors(chain, ws, st); !s.ok()) return std::printf("%s\n", s.to_string().c_str()), 1;
  cudaMemcpyAsync(hout.data(), out, M * 4, cudaMemcpyDeviceToHost, st);
  cudaStreamSynchronize(st);
  std::printf("out[0] = %.0f (expected %d)\n", hout[0], 2 * N);
  return hout[0] == 2.f * N ? 0 : 1;
}
