// Device tests of the awaitable, cancellable pipeline (pipeline::run(ctx, ...), issue 22 part 2):
//   * pinned and pageable buffers, ragged last chunk: every element right, and the awaiting thread
//     never does the staging (the coroutine resumes on the executor; the main thread's blocked time
//     is only sync_wait's);
//   * cancelled at a random chunk (a progress callback stops the token): the chunks reported
//     complete are right, every byte past report.bytes_completed is untouched, the counts agree with
//     what the callback saw; the same with the token stopped from another thread and no callback
//     (no per-chunk events); a token stopped before the run issues nothing;
//   * runs back to back and interleaved with enqueue() on the same pipeline: all outputs right;
//   * a compute function's error comes back with the chunk named, and the pipeline stays usable;
//   * a typed chunk function whose output is half its input (out_chunk_bytes), and the refusals.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "baton/async/cancel.hpp"
#include "baton/async/cuda_await.cuh"
#include "baton/async/executor.hpp"
#include "baton/async/pipeline.cuh"
#include "baton/async/reactor.hpp"
#include "baton/async/task.hpp"
#include "device_test_util.cuh"

using namespace baton;
using namespace baton::async;

namespace {

__global__ void times_two_plus_one(const float* in, float* out, size_t n, unsigned spin_ns) {
  if (spin_ns) {
    const unsigned long long t0 = clock64();
    while (clock64() - t0 < spin_ns) {
    }
  }
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    out[i] = in[i] * 2.f + 1.f;
}

compute_fn twice_plus_one(unsigned spin_cycles = 0) {
  return [spin_cycles](const void* in, void* out, size_t bytes, stream_ref s) {
    times_two_plus_one<<<64, 256, 0, s>>>(static_cast<const float*>(in), static_cast<float*>(out), bytes / 4, spin_cycles);
    return cuda_check(cudaGetLastError(), "times_two_plus_one");
  };
}

struct Ctx {
  thread_pool pool{2};  // executors outlive the reactor
  reactor r;
  event_pool events;
  gpu_context ctx{r, pool, events, completion_mode::poll};
};

struct Buffers {
  size_t n = 0;
  bool pinned = false;
  std::vector<float> pageable_src, pageable_dst;
  float *pin_src = nullptr, *pin_dst = nullptr;
  Buffers(size_t elems, bool pin) : n(elems), pinned(pin) {
    if (pin) {
      (void)cudaHostAlloc(&pin_src, n * 4, 0);
      (void)cudaHostAlloc(&pin_dst, n * 4, 0);
    } else {
      pageable_src.resize(n);
      pageable_dst.resize(n);
    }
  }
  ~Buffers() {
    if (pin_src) (void)cudaFreeHost(pin_src);
    if (pin_dst) (void)cudaFreeHost(pin_dst);
  }
  float* src() { return pinned ? pin_src : pageable_src.data(); }
  float* dst() { return pinned ? pin_dst : pageable_dst.data(); }
  void fill(uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-4.f, 4.f);
    for (size_t i = 0; i < n; ++i) src()[i] = d(rng);
    std::memset(dst(), 0xFF, n * 4);  // NaN: "untouched"
  }
  size_t wrong(size_t from, size_t to) {
    size_t bad = 0;
    for (size_t i = from; i < to; ++i) bad += !(dst()[i] == src()[i] * 2.f + 1.f);
    return bad;
  }
  size_t touched(size_t from, size_t to) {
    size_t t = 0;
    for (size_t i = from; i < to; ++i) t += !std::isnan(dst()[i]);
    return t;
  }
};

class PipelineAwait : public bt::DeviceTest, public ::testing::WithParamInterface<bool> {};

TEST_P(PipelineAwait, CompletesWithDstWrittenAndNeverStagesOnTheAwaitingThread) {
  Ctx c;
  const size_t chunk = size_t(1) << 20;
  auto p = pipeline::create(pipeline_options{chunk, 3, 4});
  ASSERT_TRUE(p.ok()) << p.error().to_string();
  const size_t bytes = 9 * chunk + 4096;  // a ragged last chunk
  Buffers b(bytes / 4, GetParam());
  b.fill(1);
  const auto main_id = std::this_thread::get_id();
  std::atomic<bool> progress_on_main{false};
  size_t last_progress = 0;
  auto body = [&]() -> task<result<pipeline_report>> {
    pipeline_run_options o;
    o.progress = [&](size_t done, size_t total) {
      if (std::this_thread::get_id() == main_id) progress_on_main = true;
      EXPECT_EQ(done, last_progress + 1);
      EXPECT_EQ(total, 10u);
      last_progress = done;
    };
    auto r = co_await p.value().run(c.ctx, b.src(), b.dst(), bytes, twice_plus_one(), o);
    if (std::this_thread::get_id() == main_id) co_return status(errc::invalid_argument, "resumed on the awaiting thread");
    co_return r;
  };
  auto r = sync_wait(body());
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r.value().chunks_total, 10u);
  EXPECT_EQ(r.value().chunks_completed, 10u);
  EXPECT_EQ(r.value().bytes_completed, bytes);
  EXPECT_FALSE(r.value().cancelled);
  EXPECT_EQ(last_progress, 10u);
  EXPECT_FALSE(progress_on_main.load()) << "progress runs on the pipeline's runner thread";
  EXPECT_EQ(b.wrong(0, b.n), 0u) << "dst must be fully written when run() completes (pageable included)";
}

TEST_P(PipelineAwait, CancelledAtARandomChunkLeavesTheRestUntouched) {
  Ctx c;
  const size_t chunk = size_t(256) << 10;
  auto p = pipeline::create(pipeline_options{chunk, 2, 2});
  ASSERT_TRUE(p.ok()) << p.error().to_string();
  const size_t chunks = 64, bytes = chunks * chunk;
  std::mt19937 rng(11);
  for (int trial = 0; trial < bt::scaled(8); ++trial) {
    Buffers b(bytes / 4, GetParam());
    b.fill(uint32_t(100 + trial));
    const size_t stop_at = 1 + rng() % (chunks - 2);
    cancel_source stop;
    size_t seen = 0;
    pipeline_run_options o;
    o.token = stop.get_token();
    o.progress = [&](size_t done, size_t) {
      seen = done;
      if (done == stop_at) stop.request_stop();
    };
    // ~20 us of compute per chunk: the stop lands while later chunks are still being issued.
    auto r = sync_wait(p.value().run(c.ctx, b.src(), b.dst(), bytes, twice_plus_one(40000), o));
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    const pipeline_report& rep = r.value();
    EXPECT_EQ(rep.chunks_total, chunks);
    EXPECT_GE(rep.chunks_completed, stop_at);
    EXPECT_EQ(rep.cancelled, rep.chunks_completed < chunks);
    EXPECT_EQ(seen, rep.chunks_completed) << "the callback saw every completed chunk";
    EXPECT_EQ(rep.bytes_completed, rep.chunks_completed * chunk);
    const size_t done_elems = rep.bytes_completed / 4;
    EXPECT_EQ(b.wrong(0, done_elems), 0u) << "trial " << trial;
    EXPECT_EQ(b.touched(done_elems, b.n), 0u) << "trial " << trial << ": chunks never issued must leave dst untouched";
  }
  // Stopped from another thread, with no progress callback (the runner then records no per-chunk
  // events and waits for the last chunk issued only): the same guarantees.
  for (int trial = 0; trial < bt::scaled(8); ++trial) {
    Buffers b(bytes / 4, GetParam());
    b.fill(uint32_t(200 + trial));
    cancel_source stop;
    pipeline_run_options o;
    o.token = stop.get_token();
    const auto delay = std::chrono::microseconds(100 + rng() % 1200);
    std::thread stopper([&] {
      std::this_thread::sleep_for(delay);
      stop.request_stop();
    });
    auto r = sync_wait(p.value().run(c.ctx, b.src(), b.dst(), bytes, twice_plus_one(40000), o));
    stopper.join();
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    const pipeline_report& rep = r.value();
    EXPECT_EQ(rep.cancelled, rep.chunks_completed < chunks) << "trial " << trial;
    EXPECT_EQ(rep.bytes_completed, rep.chunks_completed * chunk);
    const size_t done_elems = rep.bytes_completed / 4;
    EXPECT_EQ(b.wrong(0, done_elems), 0u) << "trial " << trial;
    EXPECT_EQ(b.touched(done_elems, b.n), 0u) << "trial " << trial << ": chunks never issued must leave dst untouched";
  }
  // Stopped before the run: nothing issued, nothing touched.
  Buffers b(bytes / 4, GetParam());
  b.fill(7);
  cancel_source stop;
  stop.request_stop();
  pipeline_run_options o;
  o.token = stop.get_token();
  auto r = sync_wait(p.value().run(c.ctx, b.src(), b.dst(), bytes, twice_plus_one(), o));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r.value().chunks_completed, 0u);
  EXPECT_TRUE(r.value().cancelled);
  EXPECT_EQ(b.touched(0, b.n), 0u);
}

TEST_P(PipelineAwait, RunsAndEnqueuesInterleaved) {
  Ctx c;
  const size_t chunk = size_t(512) << 10;
  auto p = pipeline::create(pipeline_options{chunk, 2, 2});
  ASSERT_TRUE(p.ok()) << p.error().to_string();
  const size_t bytes = 6 * chunk + 100 * 4;
  Buffers a(bytes / 4, GetParam()), b(bytes / 4, GetParam()), e(bytes / 4, GetParam());
  for (int rep = 0; rep < bt::scaled(10); ++rep) {
    a.fill(uint32_t(3 * rep));
    b.fill(uint32_t(3 * rep + 1));
    e.fill(uint32_t(3 * rep + 2));
    auto both = [&]() -> task<status> {
      auto ra = p.value().run(c.ctx, a.src(), a.dst(), bytes, twice_plus_one(20000));
      auto rb = p.value().run(c.ctx, b.src(), b.dst(), bytes, twice_plus_one());
      // An enqueue() from this thread while the runner issues the runs' chunks.
      BATON_CO_TRY(p.value().enqueue(e.src(), e.dst(), bytes, twice_plus_one(10000)));
      auto x = co_await std::move(ra);
      if (!x.ok()) co_return x.error();
      auto y = co_await std::move(rb);
      if (!y.ok()) co_return y.error();
      co_return p.value().finish();
    };
    BT_ASSERT_OK(sync_wait(both()));
    ASSERT_EQ(a.wrong(0, a.n), 0u) << "rep " << rep;
    ASSERT_EQ(b.wrong(0, b.n), 0u) << "rep " << rep;
    ASSERT_EQ(e.wrong(0, e.n), 0u) << "rep " << rep;
  }
}

TEST_P(PipelineAwait, ComputeErrorNamesTheChunkAndThePipelineStaysUsable) {
  Ctx c;
  const size_t chunk = size_t(1) << 20;
  auto p = pipeline::create(pipeline_options{chunk, 2, 2});
  ASSERT_TRUE(p.ok());
  Buffers b(4 * chunk / 4, GetParam());
  b.fill(5);
  int calls = 0;
  compute_fn failing = [&](const void* in, void* out, size_t n, stream_ref s) -> status {
    if (++calls == 3) return status(errc::invalid_argument, "kernel rejected the chunk");
    return twice_plus_one()(in, out, n, s);
  };
  auto r = sync_wait(p.value().run(c.ctx, b.src(), b.dst(), 4 * chunk, failing));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().to_string().find("pipeline::run: chunk 2 of 4"), std::string::npos) << r.error().to_string();
  EXPECT_NE(r.error().to_string().find("kernel rejected the chunk"), std::string::npos) << r.error().to_string();
  b.fill(6);
  auto again = sync_wait(p.value().run(c.ctx, b.src(), b.dst(), 4 * chunk, twice_plus_one()));
  ASSERT_TRUE(again.ok()) << again.error().to_string();
  EXPECT_EQ(b.wrong(0, b.n), 0u);
}

// A typed chunk function whose output differs in size from its input (pipeline_options::
// out_chunk_bytes): floats in, rounded int16 out (half the bytes), through enqueue and run, ragged
// last chunk included; a compute_fn (same-size contract) and a last chunk that would write half a
// byte are refused with the sizes named.
__global__ void round_to_i16(const float* in, int16_t* out, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    out[i] = int16_t(__float2int_rn(in[i]));
}

TEST_P(PipelineAwait, TypedComputeWithSmallerOutput) {
  Ctx c;
  const size_t chunk = size_t(256) << 10;
  pipeline_options po{chunk, 3, 2};
  po.out_chunk_bytes = chunk / 2;
  auto p = pipeline::create(po);
  ASSERT_TRUE(p.ok()) << p.error().to_string();
  const size_t n = 5 * chunk / 4 + 300;  // floats: 5 full chunks and a ragged one
  const size_t bytes = n * 4;
  Buffers in(n, GetParam());
  in.fill(9);
  for (size_t i = 0; i < n; ++i) in.src()[i] *= 1000.f;
  std::vector<int16_t> pageable_out(n);
  int16_t* pinned_out = nullptr;
  if (GetParam()) BT_CUDA(cudaHostAlloc(&pinned_out, n * 2, 0));
  int16_t* out = GetParam() ? pinned_out : pageable_out.data();
  const chunk_fn f = typed_compute<float, int16_t>([](device_span<const float> x, device_span<int16_t> y, stream_ref s) {
    if (x.size() != y.size()) return status(errc::invalid_argument, "sizes differ");
    round_to_i16<<<64, 256, 0, s>>>(x.data(), y.data(), x.size());
    return cuda_check(cudaGetLastError(), "round_to_i16");
  });
  auto check = [&] {
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i) bad += out[i] != int16_t(std::lrint(in.src()[i]));
    return bad;
  };
  std::memset(out, 0x7F, n * 2);
  BT_ASSERT_OK(p.value().run(in.src(), out, bytes, f));
  EXPECT_EQ(check(), 0u);
  std::memset(out, 0x7F, n * 2);
  auto r = sync_wait(p.value().run(c.ctx, in.src(), out, bytes, f));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r.value().out_bytes_completed, n * 2);
  EXPECT_EQ(check(), 0u);
  // A compute_fn writes as many bytes as it reads: refused when out_chunk_bytes differs.
  const status same = p.value().enqueue(in.src(), out, bytes, twice_plus_one());
  EXPECT_EQ(same.code(), errc::invalid_argument);
  EXPECT_NE(same.to_string().find("pass a chunk_fn"), std::string::npos) << same.to_string();
  // A last chunk of 3 input bytes would write 1.5 output bytes.
  const status half = p.value().enqueue(in.src(), out, chunk + 3, f);
  EXPECT_EQ(half.code(), errc::invalid_argument);
  EXPECT_NE(half.to_string().find("last chunk's 3 input bytes"), std::string::npos) << half.to_string();
  if (pinned_out) (void)cudaFreeHost(pinned_out);
}

INSTANTIATE_TEST_SUITE_P(Buffers, PipelineAwait, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? std::string("pinned") : std::string("pageable"); });

}  // namespace
