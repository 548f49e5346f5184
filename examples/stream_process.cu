// Stream a large pageable array through the GPU with the awaitable pipeline, as a data engineer
// would: the array stays in ordinary (pageable) host memory, the pipeline stages it through pinned
// slabs on its own threads, and the program's coroutine awaits the whole run without blocking a
// thread. Ctrl-C (or --cancel-after-ms) stops it part-way: the chunks already in flight finish, the
// rest of the output is left as it was, and the report says how far it got. At the end it times the
// same transform as a plain synchronous loop (cudaMemcpy, kernel, cudaMemcpy per chunk) and prints
// both throughputs.
//
//   baton_example_stream_process [--mib N] [--chunk-mib M] [--buffers K] [--cancel-after-ms T]
//
// Without a GPU it says so and exits 0.
#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "baton/async.cuh"

using namespace baton;
using namespace baton::async;

namespace {

// The "compute": y = sqrt(|x|) * 3 + 1 per float, as one fused multiply-add on both sides so that
// the check can be exact: left to the compilers, nvcc contracts `* 3 + 1` into an FMA and the host
// compiler does not, and 8 in 10^5 results then differ in the last bit.
__global__ void transform(const float* in, float* out, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    out[i] = fmaf(sqrtf(fabsf(in[i])), 3.f, 1.f);
}
float transform_ref(float x) { return std::fma(std::sqrt(std::fabs(x)), 3.f, 1.f); }

status launch_transform(const void* in, void* out, size_t bytes, stream_ref s) {
  transform<<<264, 256, 0, s>>>(static_cast<const float*>(in), static_cast<float*>(out), bytes / sizeof(float));
  return cuda_check(cudaGetLastError(), "transform");
}

// Ctrl-C sets a lock-free flag (all a signal handler may safely do); a watcher thread turns it, or
// the --cancel-after-ms deadline, into a stop request.
std::atomic<bool> g_sigint{false};
extern "C" void on_sigint(int) { g_sigint.store(true, std::memory_order_relaxed); }
static_assert(std::atomic<bool>::is_always_lock_free);

struct Args {
  size_t mib = 1024, chunk_mib = 16;
  int buffers = 3;
  long cancel_after_ms = -1;
};

bool parse(int argc, char** argv, Args& a) {
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto num = [&](long lo, long hi, long& out) {
      if (i + 1 >= argc) return false;
      char* end = nullptr;
      out = std::strtol(argv[++i], &end, 10);
      return *end == '\0' && out >= lo && out <= hi;
    };
    long v = 0;
    if (k == "--help" || k == "-h") {
      std::printf("usage: baton_example_stream_process [--mib N] [--chunk-mib M] [--buffers K] [--cancel-after-ms T]\n");
      std::exit(0);
    } else if (k == "--mib" && num(1, 1 << 20, v)) a.mib = size_t(v);
    else if (k == "--chunk-mib" && num(1, 4096, v)) a.chunk_mib = size_t(v);
    else if (k == "--buffers" && num(1, 16, v)) a.buffers = int(v);
    else if (k == "--cancel-after-ms" && num(0, 1 << 30, v)) a.cancel_after_ms = v;
    else {
      std::fprintf(stderr, "baton_example_stream_process: bad argument '%s' (--help)\n", k.c_str());
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (!parse(argc, argv, a)) return 2;
  if (status d = require_device(); !d.ok()) {
    std::printf("baton_example_stream_process: %s; nothing to stream\n", d.to_string().c_str());
    return 0;
  }
  const size_t bytes = a.mib << 20, n = bytes / sizeof(float), chunk = a.chunk_mib << 20;
  std::vector<float> src(n), dst(n, std::nanf(""));
  for (size_t i = 0; i < n; ++i) src[i] = float(int64_t(i % 100003) - 50000) * 0.01f;

  auto p = pipeline::create(pipeline_options{chunk, a.buffers, 0});
  if (!p.ok()) return std::fprintf(stderr, "%s\n", p.error().to_string().c_str()), 1;
  thread_pool pool{1};
  reactor r;
  event_pool events;
  gpu_context ctx{r, pool, events};

  cancel_source stop;
  std::atomic<bool> finished{false};
  std::signal(SIGINT, on_sigint);
  std::thread watcher([&, ms = a.cancel_after_ms] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms < 0 ? 0 : ms);
    while (!finished.load()) {
      if (g_sigint.load() || (ms >= 0 && std::chrono::steady_clock::now() >= deadline)) {
        stop.request_stop();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  pipeline_run_options o;
  o.token = stop.get_token();
  o.progress = [total_mib = a.mib, chunk_mib = a.chunk_mib](size_t done, size_t total) {
    if (done == total || done % 16 == 0)
      std::printf("  %zu / %zu chunks (%zu of %zu MiB)\n", done, total, std::min(done * chunk_mib, total_mib), total_mib);
  };
  const auto t0 = std::chrono::steady_clock::now();
  auto run = [&]() -> task<result<pipeline_report>> {
    co_return co_await p.value().run(ctx, src.data(), dst.data(), bytes, launch_transform, o);
  };
  auto rep = sync_wait(run());
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  finished = true;
  watcher.join();
  std::signal(SIGINT, SIG_DFL);
  if (!rep.ok()) return std::fprintf(stderr, "pipeline: %s\n", rep.error().to_string().c_str()), 1;
  const pipeline_report& R = rep.value();
  const size_t done = R.bytes_completed / sizeof(float);
  size_t wrong = 0, touched_after = 0;
  for (size_t i = 0; i < done; ++i) wrong += dst[i] != transform_ref(src[i]);
  for (size_t i = done; i < n; ++i) touched_after += !std::isnan(dst[i]);
  std::printf("pipeline: %zu of %zu chunks%s, %.1f MiB in %.3f s = %.2f GB/s; %zu wrong, %zu bytes past the end touched\n",
              R.chunks_completed, R.chunks_total, R.cancelled ? " (cancelled)" : "", double(R.bytes_completed) / (1 << 20),
              secs, double(R.bytes_completed) / secs / 1e9, wrong, touched_after * sizeof(float));
  if (wrong || touched_after) return 1;

  // The synchronous loop over the same (pageable) data, for comparison.
  void *din = nullptr, *dout = nullptr;
  if (cudaMalloc(&din, chunk) != cudaSuccess || cudaMalloc(&dout, chunk) != cudaSuccess) return 1;
  const auto t1 = std::chrono::steady_clock::now();
  for (size_t off = 0; off < bytes; off += chunk) {
    const size_t len = std::min(chunk, bytes - off);
    (void)cudaMemcpy(din, reinterpret_cast<const char*>(src.data()) + off, len, cudaMemcpyHostToDevice);
    (void)launch_transform(din, dout, len, stream_ref::legacy());  // the legacy stream, on purpose: cudaMemcpy orders with it
    (void)cudaMemcpy(reinterpret_cast<char*>(dst.data()) + off, dout, len, cudaMemcpyDeviceToHost);
  }
  const double sync_secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  std::printf("synchronous loop: %.1f MiB in %.3f s = %.2f GB/s (the pipeline %s: %.2fx)\n", double(bytes) / (1 << 20),
              sync_secs, double(bytes) / sync_secs / 1e9, R.cancelled ? "was cancelled, per byte" : "",
              (double(bytes) / sync_secs) > 0 ? (double(R.bytes_completed) / secs) / (double(bytes) / sync_secs) : 0.0);
  (void)cudaFree(din);
  (void)cudaFree(dout);
  return 0;
}
