// An inference-style loop that never blocks a thread on the GPU: while batch i runs on the GPU
// (H2D, "model" kernel, D2H), a thread-pool worker prepares batch i+1 on the CPU. The loop is a
// coroutine; the only blocking call is sync_wait at the top.
//   baton_example_inference_loop [--batches N] [--batch-mib M] [--prep-ms P]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "baton/async/cuda_await.cuh"
#include "baton/async/executor.hpp"
#include "baton/async/memory.cuh"
#include "baton/async/reactor.hpp"
#include "baton/async/task.hpp"
#include "baton/async/when.hpp"

using namespace baton;
using namespace baton::async;

__global__ void model(const float* in, float* out, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    float v = in[i];
    for (int k = 0; k < 64; ++k) v = tanhf(v) * 1.5f;
    out[i] = v;
  }
}

int main(int argc, char** argv) {
  int batches = 16, prep_ms = 4;
  size_t mib = 32;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    if (k == "--help" || k == "-h") {
      std::printf("usage: baton_example_inference_loop [--batches N] [--batch-mib M] [--prep-ms P]\n"
                  "Prepares batch i+1 on the CPU (P ms) while batch i runs on the GPU; compares with a serial loop.\n");
      return 0;
    }
    if (i + 1 >= argc) return std::fprintf(stderr, "error: %s needs a value\n", k.c_str()), 2;
    if (k == "--batches") batches = std::atoi(argv[++i]);
    else if (k == "--batch-mib") mib = size_t(std::atol(argv[++i]));
    else if (k == "--prep-ms") prep_ms = std::atoi(argv[++i]);
    else return std::fprintf(stderr, "error: unknown option %s\n", k.c_str()), 2;
  }
  if (batches < 1 || mib < 1 || prep_ms < 0) return std::fprintf(stderr, "error: bad arguments\n"), 2;
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) return std::printf("no CUDA device: nothing to run\n"), 0;

  const size_t bytes = mib << 20, n = bytes / 4;
  pinned_pool pool(bytes, 4);  // 2 input + 2 output slabs: double buffering
  auto s = stream::create();
  if (!s.ok()) return std::printf("%s\n", s.error().to_string().c_str()), 1;
  thread_pool workers(2);  // executors outlive the reactor
  reactor r;
  event_pool events;
  gpu_context ctx{r, workers, events};
  float *din = nullptr, *dout = nullptr;
  if (cudaMalloc(&din, bytes) != cudaSuccess || cudaMalloc(&dout, bytes) != cudaSuccess) return 1;

  // CPU work for one batch ("tokenize"): fills a pinned buffer, takes about prep_ms.
  double prep_total_ms = 0, gpu_total_ms = 0;
  auto since = [](std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  auto prepare = [&](pinned_span<float> buf, int b) -> task<status> {
    co_await schedule(workers);
    auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < buf.size(); ++i) buf[i] = float((i + size_t(b)) % 97) * 0.01f;
    std::this_thread::sleep_until(t0 + std::chrono::milliseconds(prep_ms));
    prep_total_ms += since(t0);  // one prepare at a time: no race
    co_return status{};
  };
  auto gpu_work = [&](pinned_span<float> in, pinned_span<float> out) -> task<status> {
    BATON_CO_TRY(cuda_check(cudaMemcpyAsync(din, in.data(), bytes, cudaMemcpyHostToDevice, s.value().get()), "H2D"));
    model<<<528, 256, 0, s.value().get()>>>(din, dout, n);
    BATON_CO_TRY(cuda_check(cudaGetLastError(), "model"));
    BATON_CO_TRY(cuda_check(cudaMemcpyAsync(out.data(), dout, bytes, cudaMemcpyDeviceToHost, s.value().get()), "D2H"));
    co_return co_await done(ctx, s.value());
  };
  auto gpu = [&](pinned_span<float> in, pinned_span<float> out) -> task<status> {
    auto t0 = std::chrono::steady_clock::now();
    status st = co_await gpu_work(in, out);
    gpu_total_ms += since(t0);
    co_return st;
  };
  std::vector<pinned_buffer> in, out;
  for (int k = 0; k < 2; ++k) {
    in.push_back(std::move(pool.acquire(bytes).value()));
    out.push_back(std::move(pool.acquire(bytes).value()));
  }
  double checksum = 0;
  auto loop = [&](bool overlap) -> task<status> {
    BATON_CO_TRY(co_await prepare(in[0].as<float>(), 0));
    for (int b = 0; b < batches; ++b) {
      auto cur = in[size_t(b % 2)].as<float>(), nxt = in[size_t((b + 1) % 2)].as<float>();
      if (overlap && b + 1 < batches) {
        auto [g, p] = co_await when_all(gpu(cur, out[size_t(b % 2)].as<float>()), prepare(nxt, b + 1));
        BATON_CO_TRY(g);
        BATON_CO_TRY(p);
      } else {
        BATON_CO_TRY(co_await gpu(cur, out[size_t(b % 2)].as<float>()));
        if (b + 1 < batches) BATON_CO_TRY(co_await prepare(nxt, b + 1));
      }
      checksum += out[size_t(b % 2)].as<float>()[7];
    }
    co_return status{};
  };
  for (bool overlap : {false, true}) {
    checksum = 0;
    prep_total_ms = gpu_total_ms = 0;
    auto t0 = std::chrono::steady_clock::now();
    status st = sync_wait(loop(overlap));
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!st.ok()) return std::printf("error: %s\n", st.to_string().c_str()), 1;
    std::printf("%-28s %d batches of %zu MiB: %8.2f ms (CPU prepare %.2f ms/batch, GPU %.2f ms/batch; checksum %.4f)\n",
                overlap ? "prepare i+1 while GPU runs i" : "serial", batches, mib, ms, prep_total_ms / batches,
                gpu_total_ms / batches, checksum);
  }
  (void)cudaFree(din);
  (void)cudaFree(dout);
  return 0;
}
