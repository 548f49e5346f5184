// wait-path: what each step of a consumer tile's first wait costs on the device, timed alone.
//
// docs/waits.md measured a waiting GEMM 0.8-1.2 us slower than the same GEMM without waits when
// every semaphore is already posted, and inferred (not timed) that it is the sync warp's first
// round. This bench times the steps of that round, with baton's own primitives
// (baton/device/flags.hpp), in one CTA of 128 threads (one SM), clock64 around `--reps` dependent
// repetitions (each load's address depends on the value the previous one returned, so nothing
// overlaps):
//   relaxed            ld.relaxed.gpu of a posted flag (a different 128-byte line each time: L2)
//   acquire            ld.acquire.gpu of the same (baton's wait: device::load_acquire_gpu)
//   acquire+proxy-fence  the acquire, then fence.proxy.async.global (the sync lanes' fence)
//   ticket             atom.relaxed.gpu.add.u64 (the tile ticket: Stage::acquire_tile_leader)
//   lanes32-acquire    32 lanes each ld.acquire.gpu of its own flag, then __reduce_min_sync (a round)
//   lanes32-round      the sync warp's whole round: 32 acquires, every lane's proxy fence,
//                      __syncwarp, __reduce_min_sync, lane 0's release.cta of the horizon word
//   publish-observe    one-way latency of a release.cta to shared memory seen by another warp's
//                      acquire.cta spin (the load thread reading the horizon), from a ping-pong
//   first-*            the first relaxed / acquire load of a kernel to a 2 MiB page no kernel has
//                      read (its first line written by a host copy just before): an SM-side TLB miss
// Shape one-cta;others-stream-hbm: the same with every other SM streaming 1 GiB from HBM meanwhile
// (16-byte loads, one CTA per SM), as a decode GEMM's weight loads load the memory system while its
// sync warps make their first round.
// Each row is the median over --launches launches (one fresh page each for first-*) of the
// per-repetition cost in SM cycles (`cycles`), and in microseconds (median_us) at the SM clock a
// second kernel measures right after each launch (clock64 against %globaltimer over 20 us).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "baton/device/flags.hpp"
#include "bench_util.hpp"
#include "common/cli.hpp"

namespace {

using namespace baton;

constexpr int kStride = 32;     // words between flags: one 128-byte line each
constexpr int kFlags = 4096;    // flags in the ring the chains walk (512 KiB of lines)
constexpr size_t kPage = size_t(2) << 20;

enum Kind : int {
  kRelaxed,
  kAcquire,
  kAcquireFence,
  kTicket,
  kLanes32Acquire,
  kLanes32Round,
  kPublishObserve,
  kFirstRelaxed,
  kFirstAcquire,
  kKinds
};
const char* kNames[kKinds] = {"relaxed",        "acquire",       "acquire+proxy-fence", "ticket",
                              "lanes32-acquire", "lanes32-round", "publish-observe",     "first-relaxed",
                              "first-acquire"};

struct Out {
  unsigned long long cycles;  // for `reps` repetitions
  unsigned long long ns;      // %globaltimer over the same span
  unsigned sink;
};

__device__ __forceinline__ unsigned long long now_ns() { return device::global_timer_ns(); }

// flags: kFlags posted flags (value 1), kStride words apart. fresh: a page no kernel has read.
// Every CTA but the first streams `stream_bytes` of HBM (16-byte loads) until CTA 0 has measured:
// the memory system as a GEMM's weight loads keep it at the start of a decode kernel.
__device__ void stream_until(const uint4* __restrict__ buf, size_t n16, const uint32_t* stop, unsigned* sink) {
  uint4 acc = make_uint4(0, 0, 0, 0);
  const size_t step = size_t(gridDim.x - 1) * blockDim.x;
  size_t i = size_t(blockIdx.x - 1) * blockDim.x + threadIdx.x;
  for (;;) {
    for (int j = 0; j < 64; ++j) {
      const uint4 v = __ldcs(buf + i);
      acc.x ^= v.x;
      acc.y ^= v.y;
      i += step;
      if (i >= n16) i -= n16;
    }
    if (device::load_relaxed_gpu(stop) != 0) break;
  }
  if (acc.x == 0x12345678u && acc.y == 0x9abcdef0u) *sink = acc.x;  // keeps the loads
}

__global__ void __launch_bounds__(128) wait_path(int kind, int reps, const uint32_t* flags, uint64_t* ticket,
                                                 const uint32_t* fresh, Out* out, const uint4* stream_buf,
                                                 size_t stream_n16, uint32_t* stop) {
  __shared__ uint32_t word[2];
  if (blockIdx.x > 0) {
    stream_until(stream_buf, stream_n16, stop, &out->sink);
    return;
  }
  // Under load: let the other CTAs' streams fill the memory system first.
  if (gridDim.x > 1) {
    const unsigned long long w0 = device::global_timer_ns();
    while (device::global_timer_ns() - w0 < 5000) {
    }
  }
  const int lane = int(threadIdx.x % 32), warp = int(threadIdx.x / 32);
  if (threadIdx.x < 2) word[threadIdx.x] = 0;
  __syncthreads();
  unsigned sink = 0;
  unsigned long long c0 = 0, c1 = 0, t0 = 0, t1 = 0;
  if (kind == kFirstRelaxed || kind == kFirstAcquire) {
    if (threadIdx.x == 0) {
      t0 = now_ns();
      c0 = clock64();
      const uint32_t v = kind == kFirstRelaxed ? device::load_relaxed_gpu(fresh) : device::load_acquire_gpu(fresh);
      uint32_t used;
      asm volatile("add.u32 %0, %1, 1;" : "=r"(used) : "r"(v));  // waits for the load: the clock after it
      sink = used;
      c1 = clock64();
      t1 = now_ns();
    }
  } else if (kind == kPublishObserve) {
    // Warp 0 lane 0 and warp 1 lane 0 bounce a counter through two shared words.
    if (lane == 0 && warp < 2) {
      const int me = warp;
      t0 = now_ns();
      c0 = clock64();
      for (uint32_t r = 1; r <= uint32_t(reps); ++r) {
        if (me == 0) {
          device::store_release_cta(&word[0], r);
          while (device::load_acquire_cta(&word[1]) != r) {
          }
        } else {
          while (device::load_acquire_cta(&word[0]) != r) {
          }
          device::store_release_cta(&word[1], r);
        }
      }
      c1 = clock64();
      t1 = now_ns();
    }
  } else if (kind == kLanes32Acquire || kind == kLanes32Round) {
    if (warp == 1) {
      uint32_t idx = uint32_t(lane);
      t0 = now_ns();
      c0 = clock64();
      for (int r = 0; r < reps; ++r) {
        const uint32_t v = device::load_acquire_gpu(flags + size_t(idx % kFlags) * kStride);
        if (kind == kLanes32Round) device::fence_proxy_async_global();
        const uint32_t h = __reduce_min_sync(0xffffffffu, v);
        if (kind == kLanes32Round) {
          __syncwarp();
          if (lane == 0) device::store_release_cta(&word[0], h + uint32_t(r));
        }
        idx += 32u + (h - 1u);  // h == 1: the next round's address depends on this round's values
      }
      c1 = clock64();
      t1 = now_ns();
      sink = idx;
    }
  } else if (threadIdx.x == 0) {
    uint32_t idx = 0;
    t0 = now_ns();
    c0 = clock64();
    for (int r = 0; r < reps; ++r) {
      uint32_t v = 1;
      if (kind == kRelaxed) v = device::load_relaxed_gpu(flags + size_t(idx % kFlags) * kStride);
      else if (kind == kAcquire) v = device::load_acquire_gpu(flags + size_t(idx % kFlags) * kStride);
      else if (kind == kAcquireFence) {
        v = device::load_acquire_gpu(flags + size_t(idx % kFlags) * kStride);
        device::fence_proxy_async_global();
      } else if (kind == kTicket) {
        v = 1u + uint32_t(device::fetch_add_relaxed_gpu(ticket, 1) >> 62);  // < 2^62 tickets: 1, not folded
      }
      idx += 1u + (v - 1u);
    }
    c1 = clock64();
    t1 = now_ns();
    sink = idx;
  }
  const bool reporter = (kind == kLanes32Acquire || kind == kLanes32Round) ? threadIdx.x == 32 : threadIdx.x == 0;
  if (reporter) {
    out->cycles = c1 - c0;
    out->ns = t1 - t0;
    out->sink = sink;
  }
  __syncthreads();
  if (threadIdx.x == 0 && gridDim.x > 1) device::store_release_gpu(stop, 1u);
}

// The SM clock: clock64 against %globaltimer over a 20 us spin.
__global__ void clock_rate(double* mhz) {
  const unsigned long long t0 = now_ns(), c0 = clock64();
  while (now_ns() - t0 < 20000) {
  }
  const unsigned long long t1 = now_ns(), c1 = clock64();
  *mhz = double(c1 - c0) / double(t1 - t0) * 1e3;
}

struct Args {
  int reps = 2000, launches = 31;
  std::string out_dir = ".";
};

#define CK(x)                                                                                        \
  do {                                                                                               \
    cudaError_t e_ = (x);                                                                            \
    if (e_ != cudaSuccess) {                                                                         \
      std::fprintf(stderr, "baton_bench_wait_path: %s: %s\n", #x, cudaGetErrorString(e_));           \
      return 1;                                                                                      \
    }                                                                                                \
  } while (0)

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (k == "--help" || k == "-h") {
      std::printf(
          "baton_bench_wait_path: the device cost of each step of a consumer tile's first wait (one CTA, one SM).\n"
          "  --reps N      dependent repetitions per launch, 1-1000000 (default 2000)\n"
          "  --launches N  launches per row, 1-10000; the row is their median (default 31)\n"
          "  --out-dir D   writes D/wait-path.csv and .json (default .)\n");
      return 0;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "error: %s needs a value (see --help)\n", k.c_str());
      return 2;
    }
    const char* v = argv[++i];
    bool ok = true;
    if (k == "--reps") ok = bench::parse_int(v, 1, 1000000, a.reps);
    else if (k == "--launches") ok = bench::parse_int(v, 1, 10000, a.launches);
    else if (k == "--out-dir") a.out_dir = v;
    else {
      std::fprintf(stderr, "error: unknown option %s (see --help)\n", k.c_str());
      return 2;
    }
    if (!ok) {
      std::fprintf(stderr, "error: %s %s: not an integer in range (see --help)\n", k.c_str(), v);
      return 2;
    }
  }
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::fprintf(stderr, "baton_bench_wait_path: no CUDA device; this benchmark needs a GPU\n");
    return 3;
  }
  const bench::Env env = bench::detect_env();
  std::vector<uint32_t> host(size_t(kFlags) * kStride, 0);
  for (int i = 0; i < kFlags; ++i) host[size_t(i) * kStride] = 1;
  uint32_t* flags = nullptr;
  uint64_t* ticket = nullptr;
  Out* out = nullptr;
  double* mhz = nullptr;
  uint32_t* fresh = nullptr;  // one untouched 2 MiB page per launch of the first-* rows
  const size_t fresh_bytes = kPage * size_t(2 * a.launches + 2);
  CK(cudaMalloc(&flags, host.size() * 4));
  CK(cudaMemcpy(flags, host.data(), host.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMalloc(&ticket, 8));
  CK(cudaMemset(ticket, 0, 8));
  CK(cudaMalloc(&out, sizeof(Out)));
  CK(cudaMalloc(&mhz, sizeof(double)));
  CK(cudaMalloc(&fresh, fresh_bytes));
  // The first line of each page written by a host copy (so it is probably in L2, as a just-posted
  // semaphore is); no kernel reads the page before its row.
  const uint32_t ones[32] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  for (size_t pg = 0; pg < fresh_bytes / kPage; ++pg)
    CK(cudaMemcpy(reinterpret_cast<char*>(fresh) + pg * kPage, ones, sizeof ones, cudaMemcpyHostToDevice));
  // The streamed buffer: 1 GiB, far past L2.
  const size_t stream_bytes = size_t(1) << 30;
  uint4* stream_buf = nullptr;
  uint32_t* stop = nullptr;
  CK(cudaMalloc(&stream_buf, stream_bytes));
  CK(cudaMemset(stream_buf, 0, stream_bytes));
  CK(cudaMalloc(&stop, 4));
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::vector<bench::Row> rows;
  size_t page = 0;
  for (int loaded = 0; loaded < 2; ++loaded)
  for (int kind = 0; kind < kKinds; ++kind) {
    if (loaded && (kind == kFirstRelaxed || kind == kFirstAcquire || kind == kPublishObserve)) continue;
    std::vector<double> us, cycles, clk;
    const bool first = kind == kFirstRelaxed || kind == kFirstAcquire;
    for (int l = 0; l < a.launches + 1; ++l) {  // launch 0 warms up (not for first-*)
      const uint32_t* f = fresh + (page * kPage) / 4;
      if (first) ++page;
      CK(cudaMemset(stop, 0, 4));
      // Loaded: one CTA per SM (128 threads, ~2 KB of shared memory: the measuring CTA gets its own SM).
      wait_path<<<loaded ? sms : 1, 128>>>(kind, first ? 1 : a.reps, flags, ticket, f, out, stream_buf,
                                           stream_bytes / 16, stop);
      clock_rate<<<1, 1>>>(mhz);
      CK(cudaGetLastError());
      Out o{};
      double m = 0;
      CK(cudaMemcpy(&o, out, sizeof o, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(&m, mhz, sizeof m, cudaMemcpyDeviceToHost));
      if (l == 0 && !first) continue;
      const int n = first ? 1 : (kind == kPublishObserve ? 2 * a.reps : a.reps);
      const double cyc = double(o.cycles) / n;
      cycles.push_back(cyc);
      clk.push_back(m);
      us.push_back(cyc / m);  // cycles / MHz = microseconds
    }
    bench::Row r = bench::timed_row("wait-path", loaded ? "one-cta;others-stream-hbm" : "one-cta", kNames[kind], us,
                                    0.0, false, true);
    char b[3][32];
    std::snprintf(b[0], sizeof b[0], "%.0f", bench::stats(cycles).median);
    std::snprintf(b[1], sizeof b[1], "%.0f", bench::stats(clk).median);
    std::snprintf(b[2], sizeof b[2], "%d", first ? 1 : a.reps);
    r.extra = {{"cycles", b[0]}, {"sm_mhz", b[1]}, {"reps_per_launch", b[2]}};
    rows.push_back(std::move(r));
  }
  cudaFree(flags);
  cudaFree(ticket);
  cudaFree(out);
  cudaFree(mhz);
  cudaFree(fresh);
  cudaFree(stream_buf);
  cudaFree(stop);
  bench::publish(rows, env, a.out_dir, "wait-path");
  return 0;
}
