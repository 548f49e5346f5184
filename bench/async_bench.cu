// async: copies, N-buffered copy/compute pipelines, and (with the reactor) await latency.
// Writes async.csv / async.json in the common schema (bench_util.hpp). --help for options.
//
// Workloads (one row per variant):
//   copy               pinned H2D, D2H, and both at once; floor = bytes / 55.3 GB/s
//   pipeline           N chunks: H2D -> compute -> D2H, pinned host memory. Baselines: synchronous
//                      (copy, sync, compute, sync, copy, sync) and a hand-written 3-stream version
//                      (chunk i on stream i%3). floor = max(sum H2D, sum compute, sum D2H), each
//                      measured alone in the same run. baton-pipeline-graph: the K=3 pipeline
//                      captured once (pipeline::capture, outside the timed loop) and replayed as one
//                      CUDA graph; each timed rep is launch + stream synchronize.
//                      link-bound (computed, not timed): chunk 0's H2D and the last D2H at the one-way
//                      rates, the other N-1 chunks at the measured both-directions-at-once rate.
//                      baton-pipeline-await-k3: the same K=3 pipeline awaited (co_await
//                      pipeline::run(ctx, ...)), with the awaiting thread's CPU time per run
//                      (caller_cpu_us, caller_cpu_fraction of the run). It is timed alternately
//                      with baton-pipeline-k3's run() (pinned and pageable alike):
//                      paired_ratio_to_run / paired_excess_us are the medians over those pairs of
//                      awaited / run() and awaited - run(); start_to_runner_us (sync_wait called ->
//                      the runner thread's first compute call), start_to_resumed_us (-> the
//                      coroutine resumed after its co_await) and resumed_to_caller_us (-> sync_wait
//                      returned) time the awaited run's thread hand-offs.
//                      -inline: the same with the coroutine resumed on the reactor's thread
//                      (inline_executor) instead of a one-thread pool. -back-to-back: awaited runs
//                      one after the other with no run() between them (threads still awake).
//   pipeline-pageable  the same from/to pageable memory; baseline: synchronous pageable copies.
//                      -stagingT: pipeline_options::staging_threads = T (default: one per hardware thread).
//   pipeline-pageable-src  a pageable source into pinned memory (only the input staged); baseline:
//                      the synchronous pipeline on the same buffers.
//   host-copy          the pageable staging alone: pageable -> pinned by a CopyTeam of T threads.
//   await-latency      time from a kernel's completion (seen by a host thread spinning on a mapped
//                      flag the kernel sets last) to the waiter running again: cudaEventSynchronize
//                      (baseline) vs co_await in poll and host-callback modes (inline executor);
//                      poll-yieldY-capC: reactor_options::yield_for = Y us, max_sleep = C us (the
//                      trade-off of the default's tail against CPU while waits are pending;
//                      cpu_fraction column: the process's CPU time less the bench's flag monitor
//                      thread's (which busy-polls throughout, one core), over the run's wall time).
//                      poll-spin: the reactor keeps busy-polling while waits are pending
//                      (reactor_options::spin_iterations = 200000) instead of backing off to sleeps.
//                      callback-spin: host-callback mode on that latency-tuned reactor (the callback
//                      was announced, so the reactor spins for its post instead of sleeping).
//                      cudaLaunchHostFunc (callback mode's baseline): a bare host function that only
//                      stamps the time: the driver's own latency, under any callback-based waiter.
//                      Rows with stat=median / stat=p99 in the shape carry that statistic in median_us.
//                      One clock (steady_clock) and only well-defined samples (common/latency.hpp:
//                      the monitor, pinned to a core, polled without a gap around the flag; the
//                      waiter ran after the flag could be seen); the `dropped` column counts the rest.
//   inflight           N tasks, each awaiting 20 tiny kernels in turn on 16 streams: median_us is
//                      the wall time per completion; completions_per_s in an extra column.
//   reactor-idle       CPU time of an idle reactor over 1 s (cpu_percent of one core).
// Pipeline timings are wall-clock (the host does staging copies), median of --reps.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>

#include <atomic>
#include <thread>

#include "baton/async/copy_team.hpp"
#include "baton/async/cuda_await.cuh"
#include "baton/async/executor.hpp"
#include "baton/async/memory.cuh"
#include "baton/async/reactor.hpp"
#include "baton/async/task.hpp"
#include "baton/async/when.hpp"
#include "baton/async/pipeline.cuh"
#include "baton/async/stream.cuh"
#include "bench_util.hpp"
#include "common/latency.hpp"
#include "common/device_memory.cuh"
#include "common/timing.cuh"

using namespace baton;
using namespace baton::async;

namespace {

__global__ void transform(const float* __restrict__ in, float* __restrict__ out, size_t n, int iters) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    float v = in[i];
    float acc = v;
    for (int k = 0; k < iters; ++k) acc = fmaf(acc, 0.999f, 0.001f * v);
    out[i] = acc;
  }
}
__global__ void sleep_then_flag(volatile int* flag, int value, unsigned ns) {
  for (unsigned t = 0; t < ns; t += 10000) __nanosleep(10000);
  __threadfence_system();
  *flag = value;
}
__global__ void tiny(int* p) { p[0] += 1; }

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

float transform_ref(float v, int iters) {
  float acc = v;
  for (int k = 0; k < iters; ++k) acc = std::fmaf(acc, 0.999f, 0.001f * v);
  return acc;
}

struct Args {
  int chunks = 16;
  size_t chunk_mib = 64;
  int compute_iters = 200;
  int reps = 30;
  std::string out_dir = ".";
  bool quick = false;
  std::string only = "all";  // all | transfers | latency
};

double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

#define TRY(expr)                                                            \
  do {                                                                       \
    status s_ = (expr);                                                      \
    if (!s_.ok()) {                                                          \
      std::fprintf(stderr, "error: %s: %s\n", #expr, s_.to_string().c_str()); \
      std::exit(1);                                                          \
    }                                                                        \
  } while (0)

// The value of `r`; on an error, the error on stderr and exit status 1 (as TRY).
template <class T>
T take(result<T> r, const char* what) {
  if (!r.ok()) {
    std::fprintf(stderr, "error: %s: %s\n", what, r.error().to_string().c_str());
    std::exit(1);
  }
  return std::move(r).value();
}

status launch_transform(const void* in, void* out, size_t bytes, stream_ref s, int iters) {
  size_t n = bytes / 4;
  transform<<<132 * 8, 256, 0, s>>>(static_cast<const float*>(in), static_cast<float*>(out), n, iters);
  return cuda_check(cudaGetLastError(), "transform launch");
}

bool check(const float* src, const float* dst, size_t n, int iters) {
  for (size_t i = 0; i < n; i += 997)  // sampled: every 997th element, all chunks covered
    if (!(std::fabs(dst[i] - transform_ref(src[i], iters)) <= 1e-5f * (1.f + std::fabs(dst[i])))) return false;
  return std::fabs(dst[n - 1] - transform_ref(src[n - 1], iters)) <= 1e-5f * (1.f + std::fabs(dst[n - 1]));
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    auto val = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "error: %s needs a value\n", k.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (k == "--help" || k == "-h") {
      std::printf(
          "usage: baton_bench_async [--chunks N] [--chunk-mib M] [--compute-iters I] [--reps R] [--out-dir DIR] [--quick]\n"
          "                         [--only all|transfers|latency]\n"
          "Copies and H2D->compute->D2H pipelines of N chunks of M MiB (pinned and pageable) vs synchronous and\n"
          "hand-written 3-stream baselines. Writes DIR/async.csv and DIR/async.json.\n"
          "--only transfers: copies, pipelines and staging alone (another size: the await does not depend on it);\n"
          "--only latency: the await latency, tasks in flight and the idle reactor alone.\n"
          "Defaults: --chunks 16 --chunk-mib 64 --compute-iters 200 --reps 30 --out-dir . --only all\n");
      return 0;
    } else if (k == "--chunks") a.chunks = std::atoi(val());
    else if (k == "--chunk-mib") a.chunk_mib = size_t(std::atol(val()));
    else if (k == "--compute-iters") a.compute_iters = std::atoi(val());
    else if (k == "--reps") a.reps = std::atoi(val());
    else if (k == "--out-dir") a.out_dir = val();
    else if (k == "--quick") a.quick = true;
    else if (k == "--only") {
      a.only = val();
      if (a.only != "all" && a.only != "transfers" && a.only != "latency") {
        std::fprintf(stderr, "error: --only all|transfers|latency, got '%s'\n", a.only.c_str());
        return 2;
      }
    }
    else {
      std::fprintf(stderr, "error: unknown option %s (see --help)\n", k.c_str());
      return 2;
    }
  }
  if (a.chunks < 1 || a.chunk_mib < 1 || a.reps < 1 || a.compute_iters < 0) {
    std::fprintf(stderr, "error: --chunks, --chunk-mib, --reps must be >= 1, --compute-iters >= 0\n");
    return 2;
  }
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::fprintf(stderr, "baton_bench_async: no CUDA device; this benchmark needs a GPU\n");
    return 3;
  }
  const bench::Env env = bench::detect_env();

  const size_t C = a.chunk_mib << 20, bytes = C * size_t(a.chunks), n = bytes / 4;
  const int iters = a.compute_iters;
  const std::string shape = "chunks=" + std::to_string(a.chunks) + ";chunk_mib=" + std::to_string(a.chunk_mib) +
                            ";compute_iters=" + std::to_string(iters);
  std::vector<bench::Row> rows;

  // ---- buffers ----
  // Declared before the device buffers, whose destructors enqueue their frees on s1.
  stream s1 = take(stream::create(), "stream::create"), s2 = take(stream::create(), "stream::create"),
         s3 = take(stream::create(), "stream::create");
  // Pinned source and destinations: slabs of one pool (the pool outlives its leases). The second
  // destination is the awaited run's, timed alternately with run() into the first.
  pinned_pool pinned(bytes, 3);
  const pinned_buffer hsrc_mem = take(pinned.acquire(bytes), "pinned source");
  const pinned_buffer hdst_mem = take(pinned.acquire(bytes), "pinned destination");
  const pinned_buffer hdst2_mem = take(pinned.acquire(bytes), "pinned destination (awaited)");
  float* const hsrc = hsrc_mem.as<float>().data();
  float* const hdst = hdst_mem.as<float>().data();
  float* const hdst2 = hdst2_mem.as<float>().data();
  std::vector<float> psrc(n), pdst(n), pdst2(n);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (size_t i = 0; i < n; ++i) hsrc[i] = psrc[i] = dist(rng);
  const device_buffer dA_mem = take(bench::device_alloc(bytes, s1, "A"), "device memory");
  const device_buffer dB_mem = take(bench::device_alloc(bytes, s1, "B"), "device memory");
  float* const dA = bench::device_ptr<float>(dA_mem);
  float* const dB = bench::device_ptr<float>(dB_mem);
  // Allocated in s1's order but used on every stream and by synchronous copies: s1 drains first.
  TRY(s1.ref().synchronize());
  // GPU time of body() on s1 (one warm-up call, then `reps` calls between two events).
  auto time_events = [&](auto&& body, int reps) {
    std::vector<double> us;
    TRY(bench::time_repetitions(s1, /*warmup=*/1, reps, /*iters=*/1, body, us));
    return us;
  };
  auto time_wall = [&](auto&& body, int reps) {
    std::vector<double> us;
    body();
    for (int r = 0; r < reps; ++r) {
      double t0 = now_us();
      body();
      us.push_back(now_us() - t0);
    }
    return us;
  };

  // Progress on stderr (unbuffered): a hang shows where it is.
  auto phase = [t0 = std::chrono::steady_clock::now()](const char* what) {
    std::fprintf(stderr, "[async] %s (t = %.1f s)\n", what,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  };
  if (a.only != "latency") {  // transfers: copies, pipelines, staging
    // ---- copy ----
    phase("copies");
    const double copy_floor = double(bytes) / 55.3e9 * 1e6;
    auto h2d = time_events([&] { return cuda_check(cudaMemcpyAsync(dA, hsrc, bytes, cudaMemcpyHostToDevice, s1.get()), "H2D"); }, a.reps);
    auto d2h = time_events([&] { return cuda_check(cudaMemcpyAsync(hdst, dA, bytes, cudaMemcpyDeviceToHost, s1.get()), "D2H"); }, a.reps);
    event_pool order_events;
    // Both directions at once: s2 joins s1 (after its start event), each stream copies one way, and
    // s1 joins s2 again so that s1's stop event follows both copies.
    auto both = time_events([&]() -> status {
      BATON_TRY(gpu_order(order_events, s1, s2));
      BATON_TRY(cuda_check(cudaMemcpyAsync(dB, hsrc, bytes, cudaMemcpyHostToDevice, s1.get()), "H2D"));
      BATON_TRY(cuda_check(cudaMemcpyAsync(hdst, dA, bytes, cudaMemcpyDeviceToHost, s2.get()), "D2H"));
      return gpu_order(order_events, s2, s1);
    }, a.reps);
    auto pageable = time_wall([&] { TRY(cuda_check(cudaMemcpy(dA, psrc.data(), bytes, cudaMemcpyHostToDevice), "pageable H2D")); }, std::max(3, a.reps / 5));
    {
      std::string sh = "bytes_mib=" + std::to_string(bytes >> 20);
      auto gbps = [&](double us, double b) { return bench::fmt(b / us / 1e3); };
      auto r1 = bench::timed_row("copy", sh + ";dir=h2d", "pinned-h2d", h2d, copy_floor, false, true);
      r1.extra = {{"gb_per_s", gbps(r1.median_us, double(bytes))}};
      auto r2 = bench::timed_row("copy", sh + ";dir=d2h", "pinned-d2h", d2h, copy_floor, false, true);
      r2.extra = {{"gb_per_s", gbps(r2.median_us, double(bytes))}};
      auto r3 = bench::timed_row("copy", sh + ";dir=both", "pinned-bidirectional", both, copy_floor, false, true);
      r3.extra = {{"gb_per_s", gbps(r3.median_us, double(bytes)) + " each way"}};
      auto r4 = bench::timed_row("copy", sh + ";dir=h2d", "pageable-sync", pageable, copy_floor, true, true);
      r4.extra = {{"gb_per_s", gbps(r4.median_us, double(bytes))}};
      rows.insert(rows.end(), {r1, r2, r3, r4});
    }

    // ---- stage totals for the pipeline floor ----
    phase("stage totals");
    auto comp = time_events([&] { return launch_transform(dA, dB, bytes, s1.ref(), iters); }, std::max(5, a.reps / 3));
    const double h2d_us = bench::stats(h2d).median, d2h_us = bench::stats(d2h).median, comp_us = bench::stats(comp).median;
    const double pipe_floor = std::max({h2d_us, d2h_us, comp_us});
    std::printf("stage totals: H2D %.0f us, compute %.0f us, D2H %.0f us -> floor %.0f us\n", h2d_us, comp_us, d2h_us, pipe_floor);

    // ---- pipeline, pinned ----
    phase("pipeline (pinned)");
    auto sync_pipeline = [&](const float* src, float* dst) {
      for (int c = 0; c < a.chunks; ++c) {
        size_t off = size_t(c) * C;
        TRY(cuda_check(cudaMemcpy((char*)dA + off, (const char*)src + off, C, cudaMemcpyHostToDevice), "H2D"));
        TRY(launch_transform((char*)dA + off, (char*)dB + off, C, s1.ref(), iters));
        TRY(s1.ref().synchronize());
        TRY(cuda_check(cudaMemcpy((char*)dst + off, (char*)dB + off, C, cudaMemcpyDeviceToHost), "D2H"));
      }
    };
    stream* ss[3] = {&s1, &s2, &s3};
    auto three_stream = [&](const float* src, float* dst) {
      for (int c = 0; c < a.chunks; ++c) {
        size_t off = size_t(c) * C;
        cudaStream_t s = ss[c % 3]->get();
        TRY(cuda_check(cudaMemcpyAsync((char*)dA + off, (const char*)src + off, C, cudaMemcpyHostToDevice, s), "H2D"));
        TRY(launch_transform((char*)dA + off, (char*)dB + off, C, s, iters));
        TRY(cuda_check(cudaMemcpyAsync((char*)dst + off, (char*)dB + off, C, cudaMemcpyDeviceToHost, s), "D2H"));
      }
      for (auto* s : ss) TRY(s->ref().synchronize());
    };
    compute_fn f = [&](const void* in, void* out, size_t b, stream_ref s) { return launch_transform(in, out, b, s, iters); };
    auto pipe_variant = [&](int K, const float* src, float* dst, int reps) {
      auto p = pipeline::create(pipeline_options{C, K});
      TRY(p.error());
      return time_wall([&] { TRY(p.value().run(src, dst, bytes, f)); }, reps);
    };
    auto verify = [&](const float* dst) { return check(psrc.data(), dst, n, iters); };
    // The awaited form (co_await pipeline::run(ctx, ...)): the runner thread issues and stages; the
    // caller's thread only starts the run and is resumed at the end. caller_cpu_us: the CPU time of
    // the thread that co_awaits (CLOCK_THREAD_CPUTIME_ID around the whole awaited run, sync_wait's
    // wake-up included): the work the pipeline costs its caller. The blocking run() costs the caller
    // its pageable staging copies and its waits.
    auto thread_cpu_us = [] {
      timespec ts{};
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
      return double(ts.tv_sec) * 1e6 + double(ts.tv_nsec) / 1e3;
    };
    // run() (enqueue + finish) and the awaited run of the same K pipeline, alternated rep by rep
    // (run, await, run, await, ...): both see the same host and link conditions, which drift from
    // one second to the next with pageable memory (host memcpy), and each awaited run starts with
    // its threads idle for a whole run() (as a program's occasional await does), where back-to-back
    // awaits find them just woken. Each pair gives one ratio. Per awaited run, host clock stamps:
    // the start (before sync_wait), the runner thread's first compute call, the awaiting coroutine
    // resumed on `ex` (after the co_await), and the caller back from sync_wait.
    struct Paired {
      std::vector<double> run_us, await_us, caller_cpu, start_hop_us, resume_us, back_hop_us;
    };
    auto paired_variants = [&](int K, const float* src, float* await_dst, float* run_dst, int reps, executor& ex) {
      Paired out;
      auto p = pipeline::create(pipeline_options{C, K});
      auto q = pipeline::create(pipeline_options{C, K});
      TRY(p.error());
      TRY(q.error());
      reactor r;
      event_pool evs;
      gpu_context ctx{r, ex, evs};
      std::atomic<double> first_call{0.0};
      compute_fn f_await = [&](const void* in, void* out_, size_t b, stream_ref s) {
        double zero = 0.0;
        (void)first_call.compare_exchange_strong(zero, now_us());
        return f(in, out_, b, s);
      };
      double resumed = 0;
      auto body = [&]() -> task<result<pipeline_report>> {
        auto rep = co_await q.value().run(ctx, src, await_dst, bytes, f_await);
        resumed = now_us();
        co_return rep;
      };
      auto awaited = [&]() -> status {
        first_call.store(0.0);
        const double c0 = thread_cpu_us(), t0 = now_us();
        auto rep = sync_wait(body());
        const double t1 = now_us();
        out.caller_cpu.push_back(thread_cpu_us() - c0);
        out.start_hop_us.push_back(first_call.load() - t0);
        out.resume_us.push_back(resumed - t0);
        out.back_hop_us.push_back(t1 - resumed);
        BATON_TRY(rep.error());
        if (rep.value().chunks_completed != rep.value().chunks_total)
          return status(errc::invalid_argument, "pipeline::run (awaited) stopped early");
        return status{};
      };
      TRY(p.value().run(src, run_dst, bytes, f));  // untimed first calls: slabs, threads, events
      TRY(awaited());
      out = Paired{};
      for (int i = 0; i < reps; ++i) {
        double t0 = now_us();
        TRY(p.value().run(src, run_dst, bytes, f));
        out.run_us.push_back(now_us() - t0);
        t0 = now_us();
        TRY(awaited());
        out.await_us.push_back(now_us() - t0);
      }
      return out;
    };
    auto await_row = [&](const std::string& wl, const std::string& variant, const Paired& t, const float* dst) {
      bench::Row r = bench::timed_row(wl, shape, variant, t.await_us, pipe_floor, false, verify(dst));
      std::vector<double> ratio, excess;
      for (size_t i = 0; i < t.await_us.size(); ++i) {
        ratio.push_back(t.await_us[i] / t.run_us[i]);
        excess.push_back(t.await_us[i] - t.run_us[i]);
      }
      auto med = [](const std::vector<double>& v, const char* f) {
        char b[64];
        std::snprintf(b, sizeof b, f, bench::stats(v).median);
        return std::string(b);
      };
      const double c = bench::stats(t.caller_cpu).median;
      char b[64];
      std::snprintf(b, sizeof b, "%.4f", r.median_us > 0 ? c / r.median_us : 0.0);
      // paired_ratio_to_run: the median over the alternated pairs of awaited / run(), the
      // comparison the two rows' medians make less exactly when the host drifts; the rest are
      // medians of the awaited runs' stamps (see paired_variants).
      r.extra = {{"caller_cpu_us", med(t.caller_cpu, "%.1f")},
                 {"caller_cpu_fraction", b},
                 {"paired_ratio_to_run", med(ratio, "%.4f")},
                 {"paired_excess_us", med(excess, "%.1f")},
                 {"start_to_runner_us", med(t.start_hop_us, "%.1f")},
                 {"start_to_resumed_us", med(t.resume_us, "%.1f")},
                 {"resumed_to_caller_us", med(t.back_hop_us, "%.1f")}};
      return r;
    };
    {
      std::memset(hdst, 0xFF, bytes);
      auto us = time_wall([&] { sync_pipeline(hsrc, hdst); }, a.reps);
      rows.push_back(bench::timed_row("pipeline", shape, "sync", us, pipe_floor, true, verify(hdst)));
      std::memset(hdst, 0xFF, bytes);
      us = time_wall([&] { three_stream(hsrc, hdst); }, a.reps);
      rows.push_back(bench::timed_row("pipeline", shape, "hand-3-stream", us, pipe_floor, true, verify(hdst)));
      std::memset(hdst, 0xFF, bytes);
      us = pipe_variant(2, hsrc, hdst, a.reps);
      rows.push_back(bench::timed_row("pipeline", shape, "baton-pipeline-k2", us, pipe_floor, false, verify(hdst)));
      {  // K = 3: run() and the awaited run alternated (the awaited one writes hdst2)
        std::memset(hdst, 0xFF, bytes);
        std::memset(hdst2, 0xFF, bytes);
        thread_pool pool(1);
        auto t = paired_variants(3, hsrc, hdst2, hdst, a.reps, pool);
        rows.push_back(bench::timed_row("pipeline", shape, "baton-pipeline-k3", t.run_us, pipe_floor, false, verify(hdst)));
        rows.push_back(await_row("pipeline", "baton-pipeline-await-k3", t, hdst2));
        // The same with the coroutine resumed inline on the reactor's thread (no executor hop).
        std::memset(hdst2, 0xFF, bytes);
        inline_executor inl;
        t = paired_variants(3, hsrc, hdst2, hdst, a.reps, inl);
        rows.push_back(await_row("pipeline", "baton-pipeline-await-k3-inline", t, hdst2));
        // Awaited runs back to back (no run() between them): the threads find each other awake.
        std::memset(hdst2, 0xFF, bytes);
        auto q = pipeline::create(pipeline_options{C, 3});
        TRY(q.error());
        reactor r;
        event_pool evs;
        gpu_context ctx{r, pool, evs};
        us = time_wall([&] {
          auto rep = sync_wait(q.value().run(ctx, hsrc, hdst2, bytes, f));
          TRY(rep.error());
        }, a.reps);
        rows.push_back(bench::timed_row("pipeline", shape, "baton-pipeline-await-k3-back-to-back", us, pipe_floor, false, verify(hdst2)));
      }
      {  // the same K=3 pipeline as one graph: captured once, replays timed (the graph before the pipeline)
        auto p = pipeline::create(pipeline_options{C, 3});
        TRY(p.error());
        auto g = p.value().capture(hsrc, hdst, bytes, f, s1.ref());
        TRY(g.error());
        std::memset(hdst, 0xFF, bytes);
        us = time_wall([&] {
          TRY(g.value().launch(s1.ref()));
          TRY(s1.ref().synchronize());
        }, a.reps);
        rows.push_back(bench::timed_row("pipeline", shape, "baton-pipeline-graph", us, pipe_floor, false, verify(hdst)));
      }
      // What the PCIe link allows any schedule of these copies (computed from this run's copy rows,
      // not timed): chunk 0's H2D precedes every D2H and the last chunk's D2H follows every H2D, so
      // one chunk each way runs alone at the one-direction rate; at best the other N-1 run both ways
      // at once, at the measured bidirectional rate (the `copy dir=both` row).
      const double link_bound = (h2d_us + d2h_us) / a.chunks + bench::stats(both).median * (a.chunks - 1) / a.chunks;
      bench::Row lb = bench::timed_row("pipeline", shape, "link-bound (computed)", {link_bound}, pipe_floor, false, true);
      lb.reps = 0;
      rows.push_back(lb);
      std::printf("pipeline: the link's bound for %d chunks is %.0f us = %.3fx the floor\n", a.chunks, link_bound,
                  link_bound / pipe_floor);
    }
    // ---- pipeline, pageable ----
    phase("pipeline (pageable)");
    {
      const int preps = std::max(5, a.reps / 3);
      std::memset(pdst.data(), 0xFF, bytes);
      auto us = time_wall([&] { sync_pipeline(psrc.data(), pdst.data()); }, preps);
      rows.push_back(bench::timed_row("pipeline-pageable", shape, "sync-pageable", us, pipe_floor, true, verify(pdst.data())));
      {  // run() and the awaited run alternated, a.reps pairs (the awaited one writes pdst2)
        std::memset(pdst.data(), 0xFF, bytes);
        std::memset(pdst2.data(), 0xFF, bytes);
        thread_pool pool(1);
        auto t = paired_variants(3, psrc.data(), pdst2.data(), pdst.data(), a.reps, pool);
        rows.push_back(bench::timed_row("pipeline-pageable", shape, "baton-pipeline-k3", t.run_us, pipe_floor, false, verify(pdst.data())));
        rows.push_back(await_row("pipeline-pageable", "baton-pipeline-await-k3", t, pdst2.data()));
      }
      for (int t : {4, 8}) {  // pipeline_options::staging_threads (default: hardware threads, the row above)
        std::memset(pdst.data(), 0xFF, bytes);
        auto p = pipeline::create(pipeline_options{C, 3, t});
        TRY(p.error());
        us = time_wall([&] { TRY(p.value().run(psrc.data(), pdst.data(), bytes, f)); }, preps);
        rows.push_back(bench::timed_row("pipeline-pageable", shape, "baton-pipeline-k3-staging" + std::to_string(t), us, pipe_floor,
                                false, verify(pdst.data())));
      }
      // A pageable source into a pinned destination (the issue's "pageable source"): only the input
      // is staged; the synchronous baseline gets the same buffers.
      std::memset(hdst, 0xFF, bytes);
      us = time_wall([&] { sync_pipeline(psrc.data(), hdst); }, preps);
      rows.push_back(bench::timed_row("pipeline-pageable-src", shape, "sync-pageable-src", us, pipe_floor, true, verify(hdst)));
      std::memset(hdst, 0xFF, bytes);
      us = pipe_variant(3, psrc.data(), hdst, preps);
      rows.push_back(bench::timed_row("pipeline-pageable-src", shape, "baton-pipeline-k3", us, pipe_floor, false, verify(hdst)));
    }

    // ---- host copies: what staging costs ----
    // The pageable pipeline's host side: `bytes` from pageable into pinned memory by a CopyTeam of
    // T threads (the input staging), alone; GB/s in the extra column.
    phase("host copies");
    for (int t : {1, 4, 8, 16}) {
      CopyTeam team(t);
      auto us = time_wall([&] {
        for (int c = 0; c < a.chunks; ++c) team.copy((char*)hsrc + size_t(c) * C, (const char*)psrc.data() + size_t(c) * C, C);
      }, std::max(3, a.reps / 5));
      bench::Row r = bench::timed_row("host-copy", "bytes_mib=" + std::to_string(bytes >> 20) + ";threads=" + std::to_string(t),
                              "CopyTeam pageable->pinned", us, 0.0, t == 1, std::memcmp(hsrc, psrc.data(), bytes) == 0);
      r.extra = {{"gb_per_s", bench::fmt(double(bytes) / r.median_us / 1e3)}};
      rows.push_back(r);
    }

  }
  if (a.only != "transfers") {  // the await: latency, tasks in flight, idle reactor
    // ---- await latency ----
    phase("await latency");
    {
      // The flag the kernel sets: pinned memory, which the GPU reaches at its host address (unified
      // addressing), so the kernel writes it directly and a host thread sees the write.
      pinned_pool flag_pool(sizeof(int), 1);
      const pinned_buffer flag_mem = take(flag_pool.acquire(sizeof(int)), "pinned flag");
      int* const flag = flag_mem.as<int>().data();
      *flag = 0;
      // The baseline's event keeps cudaEventCreate's flags (timing enabled), as in earlier runs'
      // cudaEventSynchronize rows, so those rows stay comparable.
      const event sync_event = take(event::create(/*timing=*/true), "event::create");
      const int reps = a.quick ? 50 : 400;
      std::atomic<bool> stop{false};
      std::atomic<int> want{0};
      std::atomic<long long> seen_ns{0};
      std::atomic<long long> prev_ns{0};  // the monitor's last poll before seen_ns that did not see the flag
      auto ns_now = [] {
        return (long long)std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
      };
      // The monitor disarms (want: w -> 0) before it publishes the time: the waiter arms the next
      // round only after it saw the time, so the monitor's last write of a round is always seen_ns.
      // Disarming after publishing could overwrite the next round's arm, and the waiter would then
      // wait for a time that is never published.
      // The flag became visible in (prev_ns, seen_ns]; bench/common/latency.hpp keeps a sample only when
      // that window is short (the monitor was running) and counts the others.
      std::thread monitor([&] {
        long long last = ns_now();
        while (!stop.load(std::memory_order_relaxed)) {
          const long long poll = ns_now();  // stamped before this poll reads the flag
          int w = want.load(std::memory_order_acquire);
          if (w != 0 && *(volatile int*)flag == w && want.compare_exchange_strong(w, 0, std::memory_order_acq_rel)) {
            const long long t = ns_now();
            prev_ns.store(last, std::memory_order_relaxed);
            seen_ns.store(t, std::memory_order_release);
          }
          last = poll;
        }
      });
      // The monitor on a core of its own where the process may use more than one: a descheduled monitor
      // stamps the flag late (the samples it spoils are dropped, not kept, but fewer is better).
      {
        cpu_set_t allowed;
        CPU_ZERO(&allowed);
        if (sched_getaffinity(0, sizeof allowed, &allowed) == 0 && CPU_COUNT(&allowed) > 2) {
          int last_cpu = -1;
          for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &allowed)) last_cpu = c;
          cpu_set_t one;
          CPU_ZERO(&one);
          CPU_SET(last_cpu, &one);
          if (pthread_setaffinity_np(monitor.native_handle(), sizeof one, &one) != 0)
            std::fprintf(stderr, "warning: await-latency: could not pin the monitor thread\n");
        }
      }
      auto arm = [&](int v) {
        seen_ns.store(0);
        want.store(v, std::memory_order_release);
      };
      // One sample: the waiter ran again at `resumed`; waits for the monitor's stamps of this round.
      auto observe = [&](long long resumed) {
        long long t;
        const long long give_up = ns_now() + 10'000'000'000LL;  // 10 s: the 50 us kernel's flag is lost
        while ((t = seen_ns.load(std::memory_order_acquire)) == 0) {
          if (ns_now() > give_up) {
            std::fprintf(stderr, "error: await-latency: the kernel's flag was not seen within 10 s (monitor lost it)\n");
            std::_Exit(3);
          }
        }
        return bench::LatencyObservation{prev_ns.load(std::memory_order_relaxed), t, resumed};
      };
      const unsigned kernel_ns = 50000;
      bench::LatencySeries base;
      for (int i = 1; i <= reps; ++i) {
        arm(i);
        sleep_then_flag<<<1, 1, 0, s1.get()>>>(flag, i, kernel_ns);
        TRY(sync_event.record(s1));
        TRY(sync_event.synchronize());
        base.add(observe(ns_now()));
      }
      auto coro = [&](completion_mode mode, reactor_options ro) {
        inline_executor inl;
        reactor r(ro);
        event_pool evs;
        gpu_context ctx{r, inl, evs, mode};
        bench::LatencySeries lat;
        auto body = [&]() -> task<status> {
          for (int i = 1; i <= reps; ++i) {
            arm(reps + i);
            sleep_then_flag<<<1, 1, 0, s1.get()>>>(flag, reps + i, kernel_ns);
            status st = co_await done(ctx, s1.ref());
            const long long t = ns_now();
            if (!st.ok()) co_return st;
            lat.add(observe(t));
          }
          co_return status{};
        };
        TRY(sync_wait(body()));
        return lat;
      };
      auto poll = coro(completion_mode::poll, reactor_options{});
      reactor_options spin;  // latency-tuned: keep busy-polling while work is pending (up to ~0.1 s)
      spin.spin_iterations = 200000;
      auto poll_spin = coro(completion_mode::poll, spin);
      auto cb = coro(completion_mode::host_callback, reactor_options{});
      auto cb_spin = coro(completion_mode::host_callback, spin);
      // The poll-mode trade-off (issue 18): a time window of yields before any sleep
      // (reactor_options::yield_for) and the sleep cap (max_sleep), against the await's tail and the
      // CPU the process burns while the 50 us waits are pending (process CPU time / wall time over
      // the run: the reactor thread's spinning and yielding, the waiter's own work included).
      struct sweep_point {
        std::string name;
        bench::LatencySeries lat;
        double cpu_fraction = 0;
      };
      std::vector<sweep_point> sweep;
      auto process_cpu_s = [] {
        rusage u{};
        getrusage(RUSAGE_SELF, &u);
        return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
      };
      // The monitor thread busy-polls the flag for the whole run: its CPU is the bench's, not the
      // waiter's, so it is taken out of the sweep's cpu_fraction.
      clockid_t monitor_clock{};
      const bool have_monitor_clock = pthread_getcpuclockid(monitor.native_handle(), &monitor_clock) == 0;
      auto monitor_cpu_s = [&] {
        timespec ts{};
        if (!have_monitor_clock || clock_gettime(monitor_clock, &ts) != 0) return 0.0;
        return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
      };
      if (!have_monitor_clock) std::fprintf(stderr, "warning: await-latency: no CPU clock of the monitor thread; cpu_fraction includes it\n");
      for (int yield_us : {0, 200, 2000})
        for (int cap_us : {1000, 100, 20}) {
          reactor_options ro;
          ro.yield_for = std::chrono::microseconds(yield_us);
          ro.max_sleep = std::chrono::microseconds(cap_us);
          const double c0 = process_cpu_s() - monitor_cpu_s(), w0 = now_us();
          sweep_point sp{"baton-await-poll-yield" + std::to_string(yield_us) + "-cap" + std::to_string(cap_us), {}, 0};
          sp.lat = coro(completion_mode::poll, ro);
          sp.cpu_fraction = (process_cpu_s() - monitor_cpu_s() - c0) / ((now_us() - w0) * 1e-6);
          sweep.push_back(std::move(sp));
        }
      // The mechanism under callback mode: a bare cudaLaunchHostFunc whose function only stamps the
      // time (what any callback-based waiter pays before it can do anything).
      bench::LatencySeries raw_cb;
      {
        static std::atomic<long long> stamp{0};
        for (int i = 1; i <= reps; ++i) {
          arm(3 * reps + i);
          stamp.store(0);
          sleep_then_flag<<<1, 1, 0, s1.get()>>>(flag, 3 * reps + i, kernel_ns);
          TRY(cuda_check(cudaLaunchHostFunc(s1.get(), [](void*) {
            stamp.store((long long)std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::steady_clock::now().time_since_epoch()).count(), std::memory_order_release);
          }, nullptr), "cudaLaunchHostFunc"));
          long long t;
          const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
          while ((t = stamp.load(std::memory_order_acquire)) == 0) {
            if (std::chrono::steady_clock::now() > give_up) {
              std::fprintf(stderr, "error: await-latency: the host function did not run within 10 s\n");
              std::_Exit(3);
            }
          }
          raw_cb.add(observe(t));
        }
        TRY(s1.ref().synchronize());
      }
      stop = true;
      monitor.join();
      auto pct = [](std::vector<double> v, double q) {
        std::sort(v.begin(), v.end());
        return v[std::min(v.size() - 1, size_t(q * double(v.size())))];
      };
      for (const char* stat : {"median", "p99"}) {
        const double q = std::string(stat) == "median" ? 0.5 : 0.99;
        const std::string sh = "stat=" + std::string(stat) + ";kernel_us=50";
        // A variant whose samples were nearly all dropped has no statistic to report: correct 0.
        auto add = [&](const char* variant, const bench::LatencySeries& series, bool baseline) {
          const std::vector<double>& v = series.us;
          const bool enough = v.size() * 2 >= v.size() + size_t(series.dropped()) && !v.empty();
          const std::vector<double> use = v.empty() ? std::vector<double>{0.0} : v;
          auto st = bench::stats(use);
          bench::Row r = bench::timed_row("await-latency", sh, variant, use, 0.0, baseline, enough);
          r.median_us = pct(use, q);
          r.min_us = st.min;
          r.max_us = st.max;
          r.extra = {{"dropped", std::to_string(series.dropped())}};
          rows.push_back(r);
        };
        add("cudaEventSynchronize", base, true);
        add("baton-await-poll", poll, false);
        add("baton-await-poll-spin", poll_spin, false);
        add("baton-await-callback", cb, false);
        add("baton-await-callback-spin", cb_spin, false);
        add("cudaLaunchHostFunc", raw_cb, false);
        for (const sweep_point& sp : sweep) {
          add(sp.name.c_str(), sp.lat, false);
          rows.back().extra.push_back({"cpu_fraction", bench::fmt(sp.cpu_fraction)});
        }
      }
    }

    // ---- tasks in flight ----
    phase("tasks in flight");
    {
      std::vector<stream> ss16;
      for (int i = 0; i < 16; ++i) ss16.push_back(take(stream::create(), "stream::create"));
      const device_buffer counters_mem = take(bench::device_alloc(1000 * sizeof(int), s1, "counters"), "device memory");
      int* const counters = bench::device_ptr<int>(counters_mem);
      TRY(s1.ref().synchronize());  // allocated in s1's order, used on the 16 streams
      double rate10 = 0;
      for (int tasks : {10, 100, 1000}) {
        thread_pool pool(4);
        reactor r;
        event_pool evs;
        gpu_context ctx{r, pool, evs, completion_mode::poll};
        const int per = 20;
        std::vector<double> us;
        for (int rep = 0; rep < (a.quick ? 2 : 5); ++rep) {
          std::vector<task<status>> ts;
          auto one = [&](int i) -> task<status> {
            for (int k = 0; k < per; ++k) {
              tiny<<<1, 1, 0, ss16[size_t(i % 16)].get()>>>(counters + i);
              status st = co_await done(ctx, ss16[size_t(i % 16)].ref());
              if (!st.ok()) co_return st;
            }
            co_return status{};
          };
          for (int i = 0; i < tasks; ++i) ts.push_back(one(i));
          double t0 = now_us();
          auto res = sync_wait(when_all(std::move(ts)));
          double t = now_us() - t0;
          for (auto& x : res) TRY(x);
          us.push_back(t / double(tasks * per));
        }
        bench::Row row = bench::timed_row("inflight", "tasks=" + std::to_string(tasks) + ";streams=16;awaits_per_task=20",
                                  "baton-await-poll", us, 0.0, false, true);
        const double rate = 1e6 / row.median_us;
        if (tasks == 10) rate10 = rate;
        row.extra = {{"completions_per_s", bench::fmt(rate)}, {"rate_vs_tasks10", bench::fmt(rate10 > 0 ? rate / rate10 : 0)}};
        rows.push_back(row);
      }
    }

    // ---- idle reactor CPU ----
    phase("idle reactor");
    {
      reactor r;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      double c0 = cpu_seconds(), t0 = now_us();
      std::this_thread::sleep_for(std::chrono::milliseconds(1000));
      double cpu = cpu_seconds() - c0, wall = (now_us() - t0) / 1e6;
      bench::Row row = bench::timed_row("reactor-idle", "seconds=1", "baton-reactor", {wall * 1e6}, 0.0, false, true);
      row.extra = {{"cpu_percent", bench::fmt(100.0 * cpu / wall)}};
      rows.push_back(row);
    }

  }

  const bool ok = bench::publish(rows, env, a.out_dir, "async");
  return ok ? 0 : 1;
}
