// Device tests for the CUDA side of the async layer: handles, pools, GPU-side cross-stream
// ordering, pinned/registered/stream-ordered memory, and the N-buffered pipeline (also captured
// into a graph and replayed).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "baton/async/graph.cuh"
#include "baton/async/memory.cuh"
#include "baton/async/pipeline.cuh"
#include "baton/async/stream.cuh"
#include "device_test_util.cuh"

using namespace baton;
using namespace baton::async;

namespace {

__global__ void spin_then_write(float* p, size_t n, float v, unsigned spin_ns) {
  if (threadIdx.x == 0) {
    for (unsigned t = 0; t < spin_ns; t += 50000) __nanosleep(50000);
  }
  __syncthreads();
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) p[i] = v;
}
__global__ void add_one(const float* in, float* out, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    out[i] = in[i] * 2.f + 1.f;
}

class Async : public bt::DeviceTest {};

TEST_F(Async, StreamAndEventHandles) {
  auto pr = stream_priorities();
  ASSERT_TRUE(pr.ok());
  auto s = async::stream::create(pr.value().greatest);
  ASSERT_TRUE(s.ok()) << s.error().to_string();
  EXPECT_EQ(s.value().priority().value(), pr.value().greatest);
  stream_ref r = s.value();
  cuda::stream_ref cr = r.cccl();
  EXPECT_EQ(cr.get(), s.value().get());
  stream_ref back = cr;
  EXPECT_EQ(back, r);
  auto e = event::create();
  ASSERT_TRUE(e.ok());
  BT_ASSERT_OK(e.value().record(r));
  BT_ASSERT_OK(e.value().synchronize());
  EXPECT_TRUE(e.value().ready().value());
  async::stream moved = std::move(s.value());
  EXPECT_EQ(s.value().get(), nullptr);
  EXPECT_NE(moved.get(), nullptr);
}

TEST_F(Async, EventPoolReusesAndReportsExhaustion) {
  event_pool pool(2);
  {
    auto a = pool.acquire(), b = pool.acquire();
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(pool.in_use(), 2u);
    auto c = pool.acquire();
    EXPECT_EQ(c.error().code(), errc::resource_exhausted);
    EXPECT_NE(c.error().message().find("all 2 events are in use"), std::string::npos);
  }
  EXPECT_EQ(pool.in_use(), 0u);  // returned on scope exit
  auto d = pool.acquire();
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(pool.created(), 2u);  // reused, not created
}

// Cross-stream dependency on the GPU: the consumer stream waits for a slow producer kernel
// without the host waiting for anything.
TEST_F(Async, GpuOrderWithoutHostRoundTrip) {
  const size_t n = 1 << 20;
  auto a = bt::dev_alloc<float>(n), b = bt::dev_alloc<float>(n);
  auto s1 = async::stream::create(), s2 = async::stream::create();
  ASSERT_TRUE(s1.ok() && s2.ok());
  event_pool pool;
  for (int it = 0; it < 20; ++it) {
    spin_then_write<<<64, 256, 0, s1.value().get()>>>(a.get(), n, float(it), 200000);  // ~0.2 ms
    BT_ASSERT_OK(gpu_order(pool, s1.value(), s2.value()));
    add_one<<<64, 256, 0, s2.value().get()>>>(a.get(), b.get(), n);
  }
  BT_ASSERT_OK(s2.value().ref().synchronize());
  std::vector<float> h(n);
  BT_CUDA(cudaMemcpy(h.data(), b.get(), n * 4, cudaMemcpyDeviceToHost));
  size_t bad = 0;
  for (float v : h) bad += v != 19.f * 2.f + 1.f;
  EXPECT_EQ(bad, 0u);
  EXPECT_EQ(pool.in_use(), 0u);
}

TEST_F(Async, PinnedPoolSlabsAndExhaustion) {
  pinned_pool pool(1 << 20, 2);
  BT_ASSERT_OK(pool.reserve(2));
  EXPECT_EQ(pool.slabs(), 2u);
  EXPECT_EQ(pool.available(), 2u);
  {
    auto a = pool.acquire(1000), b = pool.acquire(1 << 20);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_TRUE(is_pinned(a.value().data()));
    EXPECT_EQ(a.value().as<float>().size(), (1u << 20) / 4);
    EXPECT_EQ(pool.acquire(10).error().code(), errc::resource_exhausted);
    EXPECT_EQ(pool.acquire((1 << 20) + 1).error().code(), errc::invalid_argument);
  }
  EXPECT_EQ(pool.available(), 2u);
}

TEST_F(Async, HostRegistrationMakesPageableMemoryPinned) {
  std::vector<float> v(1 << 20, 1.f);
  EXPECT_FALSE(is_pinned(v.data()));
  {
    auto r = host_registration::create(v.data(), v.size() * 4);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    EXPECT_TRUE(is_pinned(v.data()));
  }
  EXPECT_FALSE(is_pinned(v.data()));
  EXPECT_EQ(host_registration::create(nullptr, 4).error().code(), errc::invalid_argument);
}

TEST_F(Async, StreamOrderedDeviceBuffer) {
  auto s = async::stream::create();
  ASSERT_TRUE(s.ok());
  for (int i = 0; i < 50; ++i) {
    auto b = device_buffer::create(size_t(1) << 22, s.value());
    ASSERT_TRUE(b.ok()) << b.error().to_string();
    BT_CUDA(cudaMemsetAsync(b.value().data(), 0, b.value().bytes(), s.value().get()));
  }  // each freed on its stream, in order
  BT_ASSERT_OK(s.value().ref().synchronize());
}

// Device memory tied to no stream (the ops' workspaces): usable on any stream, freed by cudaFree,
// movable; zero bytes is empty; an impossible size is a status naming the size, and the object stays empty.
TEST_F(Async, DeviceAllocation) {
  auto a = async::device_allocation::create(size_t(1) << 20);
  ASSERT_TRUE(a.ok()) << a.error().to_string();
  ASSERT_NE(a.value().data(), nullptr);
  EXPECT_EQ(a.value().bytes(), size_t(1) << 20);
  BT_CUDA(cudaMemsetAsync(a.value().data(), 0x5A, a.value().bytes(), stream));
  std::vector<unsigned char> back(a.value().bytes());
  BT_CUDA(cudaMemcpyAsync(back.data(), a.value().data(), back.size(), cudaMemcpyDeviceToHost, stream));
  BT_CUDA(cudaStreamSynchronize(stream));
  EXPECT_TRUE(std::all_of(back.begin(), back.end(), [](unsigned char c) { return c == 0x5A; }));
  async::device_allocation moved = std::move(a.value());
  EXPECT_EQ(a.value().data(), nullptr);
  EXPECT_EQ(a.value().bytes(), 0u);
  EXPECT_EQ(moved.as<float>().size(), (size_t(1) << 20) / 4);
  moved.reset();
  EXPECT_EQ(moved.data(), nullptr);
  auto empty = async::device_allocation::create(0);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty.value().data(), nullptr);
  auto huge = async::device_allocation::create(size_t(1) << 62);
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.error().code(), errc::cuda_error);
  EXPECT_NE(huge.error().to_string().find("cudaMalloc(4611686018427387904 bytes)"), std::string::npos) << huge.error().to_string();
  (void)cudaGetLastError();  // the failed cudaMalloc is not sticky; clear it for the next test
}

struct PipeCase {
  int buffers;
  bool pinned;
  size_t bytes;
};
class Pipeline : public bt::DeviceTest, public ::testing::WithParamInterface<PipeCase> {};

TEST_P(Pipeline, MatchesReference) {
  const PipeCase pc = GetParam();
  const size_t chunk = size_t(1) << 20;
  auto p = pipeline::create(pipeline_options{chunk, pc.buffers, 4});
  ASSERT_TRUE(p.ok()) << p.error().to_string();
  const size_t n = pc.bytes / 4;
  std::vector<float> psrc(n), pdst(n);
  float *hsrc = psrc.data(), *hdst = pdst.data();
  float *pin_src = nullptr, *pin_dst = nullptr;
  if (pc.pinned) {
    BT_CUDA(cudaHostAlloc(&pin_src, pc.bytes, 0));
    BT_CUDA(cudaHostAlloc(&pin_dst, pc.bytes, 0));
    hsrc = pin_src;
    hdst = pin_dst;
  }
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> d(-4.f, 4.f);
  compute_fn f = [](const void* in, void* out, size_t bytes, stream_ref s) {
    add_one<<<128, 256, 0, s>>>(static_cast<const float*>(in), static_cast<float*>(out), bytes / 4);
    return cuda_check(cudaGetLastError(), "add_one");
  };
  for (int rep = 0; rep < 3; ++rep) {  // fresh data and poisoned output every run
    for (size_t i = 0; i < n; ++i) hsrc[i] = d(rng);
    std::memset(hdst, 0xFF, pc.bytes);
    BT_ASSERT_OK(p.value().run(hsrc, hdst, pc.bytes, f));
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i) bad += !(hdst[i] == hsrc[i] * 2.f + 1.f);
    ASSERT_EQ(bad, 0u) << "rep " << rep;
  }
  if (pin_src) (void)cudaFreeHost(pin_src);
  if (pin_dst) (void)cudaFreeHost(pin_dst);
}
INSTANTIATE_TEST_SUITE_P(Buffers, Pipeline,
                         ::testing::Values(PipeCase{1, true, 8u << 20}, PipeCase{2, true, 8u << 20},
                                           PipeCase{3, true, (8u << 20) + 4096}, PipeCase{2, false, 8u << 20},
                                           PipeCase{3, false, (5u << 20) + 12}, PipeCase{3, true, 4096}),
                         [](const auto& info) {
                           return "k" + std::to_string(info.param.buffers) + (info.param.pinned ? "_pinned_" : "_pageable_") +
                                  std::to_string(info.param.bytes);
                         });

TEST_F(Async, PipelineErrorsTravelWithContext) {
  auto p = pipeline::create(pipeline_options{1 << 20, 2, 2});
  ASSERT_TRUE(p.ok());
  std::vector<float> src(1 << 18), dst(1 << 18);  // one 1 MiB chunk
  int calls = 0;
  compute_fn failing = [&](const void*, void*, size_t, stream_ref) -> status {
    return ++calls == 2 ? status(errc::invalid_argument, "kernel rejected the chunk") : status{};
  };
  status s = p.value().run(src.data(), dst.data(), src.size() * 4, failing);
  EXPECT_TRUE(s.ok()) << s.to_string();  // one chunk: the first call succeeds
  calls = 0;
  std::vector<float> big(1 << 20), bigout(1 << 20);
  s = p.value().run(big.data(), bigout.data(), big.size() * 4, failing);
  EXPECT_EQ(s.code(), errc::invalid_argument);
  EXPECT_NE(s.message().find("pipeline: compute of chunk 1: kernel rejected the chunk"), std::string::npos) << s.message();
  EXPECT_EQ(pipeline::create(pipeline_options{0, 2, 1}).error().code(), errc::invalid_argument);
  EXPECT_EQ(pipeline::create(pipeline_options{1 << 20, 2, -1}).error().code(), errc::invalid_argument);
  EXPECT_TRUE(pipeline::create(pipeline_options{1 << 20, 2, 0}).ok());  // 0: one thread per hardware thread
  // The pipeline is still usable after an error.
  BT_ASSERT_OK(p.value().finish());
  compute_fn ok = [](const void* in, void* out, size_t b, stream_ref s) {
    return cuda_check(cudaMemcpyAsync(out, in, b, cudaMemcpyDeviceToDevice, s), "copy");
  };
  big[12345] = 7.f;
  BT_ASSERT_OK(p.value().run(big.data(), bigout.data(), big.size() * 4, ok));
  EXPECT_EQ(bigout[12345], 7.f);
}

// Move-assigning a pipeline releases the old one (its device buffers: checked by free memory)
// and the moved-in one works, pageable staging included.
TEST_F(Async, PipelineMoveAssignmentReleasesTheOldOne) {
  constexpr size_t kChunk = size_t(64) << 20;
  auto a = pipeline::create(pipeline_options{kChunk, 3, 2});
  auto b = pipeline::create(pipeline_options{1 << 20, 2, 2});
  ASSERT_TRUE(a.ok() && b.ok());
  size_t free_before = 0, free_after = 0, total = 0;
  BT_CUDA(cudaMemGetInfo(&free_before, &total));
  a.value() = std::move(b.value());  // frees a's 6 x 64 MiB of device buffers
  BT_CUDA(cudaMemGetInfo(&free_after, &total));
  EXPECT_GE(free_after, free_before + 6 * kChunk - (size_t(16) << 20)) << "the old pipeline's buffers leaked";
  EXPECT_EQ(a.value().options().chunk_bytes, size_t(1) << 20);
  std::vector<float> src(3 << 18), dst(3 << 18, -1.f);  // 3 chunks of 1 MiB, pageable
  for (size_t i = 0; i < src.size(); ++i) src[i] = float(i % 1000);
  compute_fn copy = [](const void* in, void* out, size_t n, stream_ref s) {
    return cuda_check(cudaMemcpyAsync(out, in, n, cudaMemcpyDeviceToDevice, s), "copy");
  };
  BT_ASSERT_OK(a.value().run(src.data(), dst.data(), src.size() * 4, copy));
  EXPECT_EQ(src, dst);
  // Self-assignment leaves it intact.
  auto& self = a.value();
  a.value() = std::move(self);
  BT_ASSERT_OK(a.value().run(src.data(), dst.data(), src.size() * 4, copy));
}

// ---- the pipeline's steady state captured into one graph (pipeline::capture) ----

// Pinned host buffer for the capture tests (freed on every path).
struct PinnedFloats {
  float* p = nullptr;
  explicit PinnedFloats(size_t n) {
    if (cudaHostAlloc(&p, n * 4, cudaHostAllocDefault) != cudaSuccess) p = nullptr;
  }
  ~PinnedFloats() {
    if (p) (void)cudaFreeHost(p);
  }
  PinnedFloats(const PinnedFloats&) = delete;
  PinnedFloats& operator=(const PinnedFloats&) = delete;
};
compute_fn add_one_fn() {
  return [](const void* in, void* out, size_t bytes, stream_ref s) {
    add_one<<<128, 256, 0, s>>>(static_cast<const float*>(in), static_cast<float*>(out), bytes / 4);
    return cuda_check(cudaGetLastError(), "add_one");
  };
}
void expect_not_capturing(cudaStream_t s, const char* which) {
  cudaStreamCaptureStatus cs = cudaStreamCaptureStatusActive;
  EXPECT_EQ(cudaStreamIsCapturing(s, &cs), cudaSuccess) << which;
  EXPECT_EQ(cs, cudaStreamCaptureStatusNone) << which << " is still capturing";
}

struct GraphCase {
  int buffers;
  size_t bytes;
};
class PipelineGraph : public bt::DeviceTest, public ::testing::WithParamInterface<GraphCase> {};

// Captured once, replayed 5 times on one stream with a new source and a poisoned destination
// before each replay: every replay re-reads the source and rewrites the whole destination. Odd
// replays are followed at once (no host wait) by a run() of the same pipeline on other buffers,
// which launch() orders after the replay on the GPU (they share the device buffers).
TEST_P(PipelineGraph, ReplaysMatchReference) {
  const GraphCase gc = GetParam();
  const size_t chunk = size_t(1) << 20, n = gc.bytes / 4, chunks = (gc.bytes + chunk - 1) / chunk;
  auto p = pipeline::create(pipeline_options{chunk, gc.buffers, 4});
  ASSERT_TRUE(p.ok()) << p.error().to_string();
  auto origin = async::stream::create();
  ASSERT_TRUE(origin.ok());
  PinnedFloats src(n), dst(n), src2(n), dst2(n);
  ASSERT_TRUE(src.p && dst.p && src2.p && dst2.p);
  const compute_fn f = add_one_fn();
  auto g = p.value().capture(src.p, dst.p, gc.bytes, f, origin.value());
  ASSERT_TRUE(g.ok()) << g.error().to_string();
  EXPECT_EQ(g.value().num_nodes().value(), 3 * chunks);  // H2D + kernel + D2H per chunk; events are edges
  expect_not_capturing(origin.value().get(), "origin");
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> d(-4.f, 4.f);
  for (int rep = 0; rep < 5; ++rep) {
    for (size_t i = 0; i < n; ++i) src.p[i] = d(rng);
    std::memset(dst.p, 0xFF, gc.bytes);
    BT_ASSERT_OK(g.value().launch(origin.value()));
    if (rep % 2 == 1) {
      for (size_t i = 0; i < n; ++i) src2.p[i] = float(i % 1000) + float(rep);
      std::memset(dst2.p, 0xFF, gc.bytes);
      BT_ASSERT_OK(p.value().run(src2.p, dst2.p, gc.bytes, f));
      size_t bad2 = 0;
      for (size_t i = 0; i < n; ++i) bad2 += !(dst2.p[i] == src2.p[i] * 2.f + 1.f);
      EXPECT_EQ(bad2, 0u) << "run() after replay " << rep;
    }
    BT_ASSERT_OK(origin.value().ref().synchronize());
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i) bad += !(dst.p[i] == src.p[i] * 2.f + 1.f);
    ASSERT_EQ(bad, 0u) << "replay " << rep;
  }
}
INSTANTIATE_TEST_SUITE_P(Buffers, PipelineGraph,
                         ::testing::Values(GraphCase{2, 7u << 20}, GraphCase{3, 7u << 20}, GraphCase{3, (6u << 20) + 4096}),
                         [](const auto& info) {
                           return std::string("k") + std::to_string(info.param.buffers) + "_" + std::to_string(info.param.bytes);
                         });

TEST_F(Async, PipelineCaptureRejectsWhatItCannotCapture) {
  auto p = pipeline::create(pipeline_options{1 << 20, 2, 2});
  ASSERT_TRUE(p.ok());
  auto origin = async::stream::create();
  ASSERT_TRUE(origin.ok());
  const size_t n = 1 << 18, bytes = n * 4;  // one 1 MiB chunk
  PinnedFloats pin_src(n), pin_dst(n);
  ASSERT_TRUE(pin_src.p && pin_dst.p);
  std::vector<float> pageable(n, 1.f), pageable_out(n);
  const compute_fn f = add_one_fn();
  auto expect_invalid = [&](const result<pipeline_graph>& r, const std::string& msg) {
    ASSERT_FALSE(r.ok()) << msg;
    EXPECT_EQ(r.error().code(), errc::invalid_argument) << r.error().to_string();
    EXPECT_NE(r.error().message().find(msg), std::string::npos) << r.error().message();
  };
  expect_invalid(p.value().capture(pageable.data(), pin_dst.p, bytes, f, origin.value()),
                 "pipeline::capture: src is not pinned or registered host memory; pageable buffers are staged by host threads");
  expect_invalid(p.value().capture(pin_src.p, pageable_out.data(), bytes, f, origin.value()),
                 "pipeline::capture: dst is not pinned or registered host memory");
  expect_invalid(p.value().capture(nullptr, pin_dst.p, bytes, f, origin.value()), "pipeline::capture: null buffer");
  expect_invalid(p.value().capture(pin_src.p, nullptr, bytes, f, origin.value()), "pipeline::capture: null buffer");
  expect_invalid(p.value().capture(pin_src.p, pin_dst.p, 0, f, origin.value()), "pipeline::capture: nothing to capture");
  expect_invalid(p.value().capture(pin_src.p, pin_dst.p, bytes, compute_fn{}, origin.value()),
                 "pipeline::capture: empty compute function");
  pipeline never_created;
  expect_invalid(never_created.capture(pin_src.p, pin_dst.p, bytes, f, origin.value()), "pipeline::capture: not created");
  EXPECT_EQ(pipeline_graph{}.launch(origin.value()).code(), errc::invalid_argument);
  expect_not_capturing(origin.value().get(), "origin");
  // Registered (page-locked in place) buffers are accepted.
  {
    auto rs = host_registration::create(pageable.data(), bytes), rd = host_registration::create(pageable_out.data(), bytes);
    ASSERT_TRUE(rs.ok() && rd.ok()) << rs.error().to_string() << rd.error().to_string();
    auto g = p.value().capture(pageable.data(), pageable_out.data(), bytes, f, origin.value());
    ASSERT_TRUE(g.ok()) << g.error().to_string();
    BT_ASSERT_OK(g.value().launch(origin.value()));
    BT_ASSERT_OK(origin.value().ref().synchronize());
    EXPECT_EQ(pageable_out[0], 3.f);
    EXPECT_EQ(pageable_out[n - 1], 3.f);
  }  // graph before the registrations: nothing replays after them
}

// A compute function failing mid-capture: the error comes back with context, the capture is
// ended (no stream left capturing), and the stream and the pipeline are usable afterwards.
TEST_F(Async, PipelineCaptureErrorsEndTheCapture) {
  auto p = pipeline::create(pipeline_options{1 << 20, 2, 2});
  ASSERT_TRUE(p.ok());
  auto origin = async::stream::create();
  ASSERT_TRUE(origin.ok());
  const size_t n = size_t(3) << 18, bytes = n * 4;  // three 1 MiB chunks
  PinnedFloats src(n), dst(n);
  ASSERT_TRUE(src.p && dst.p);
  auto all_idle = [&] {
    expect_not_capturing(origin.value().get(), "origin");
    expect_not_capturing(p.value().h2d_stream(), "h2d stream");
    expect_not_capturing(p.value().compute_stream(), "compute stream");
    expect_not_capturing(p.value().d2h_stream(), "d2h stream");
  };
  int calls = 0;
  compute_fn failing = [&](const void* in, void* out, size_t b, stream_ref s) -> status {
    if (++calls == 2) return status(errc::invalid_argument, "kernel rejected the chunk");
    return add_one_fn()(in, out, b, s);
  };
  auto g = p.value().capture(src.p, dst.p, bytes, failing, origin.value());
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().code(), errc::invalid_argument);
  EXPECT_NE(g.error().message().find(
                "pipeline::capture: while capturing a graph: pipeline: compute of chunk 1: kernel rejected the chunk"),
            std::string::npos)
      << g.error().message();
  all_idle();
  // A CUDA-level failure that invalidates the capture (synchronizing a capturing stream).
  compute_fn syncing = [](const void*, void*, size_t, stream_ref s) -> status {
    return cuda_check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  };
  g = p.value().capture(src.p, dst.p, bytes, syncing, origin.value());
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().code(), errc::cuda_error);
  EXPECT_NE(g.error().message().find("pipeline::capture: while capturing a graph: pipeline: compute of chunk 0: "
                                     "cudaStreamSynchronize"),
            std::string::npos)
      << g.error().message();
  all_idle();
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // capture() leaves no stale error behind
  // Everything still works: the origin stream, enqueue() and a fresh capture.
  BT_CUDA(cudaMemsetAsync(dst.p, 0, 4, origin.value().get()));
  BT_ASSERT_OK(origin.value().ref().synchronize());
  for (size_t i = 0; i < n; ++i) src.p[i] = float(i % 4096);
  BT_ASSERT_OK(p.value().run(src.p, dst.p, bytes, add_one_fn()));
  EXPECT_EQ(dst.p[n - 1], src.p[n - 1] * 2.f + 1.f);
  std::memset(dst.p, 0xFF, bytes);
  g = p.value().capture(src.p, dst.p, bytes, add_one_fn(), origin.value());
  ASSERT_TRUE(g.ok()) << g.error().to_string();
  BT_ASSERT_OK(g.value().launch(origin.value()));
  BT_ASSERT_OK(origin.value().ref().synchronize());
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) bad += !(dst.p[i] == src.p[i] * 2.f + 1.f);
  EXPECT_EQ(bad, 0u);
}

}  // namespace

namespace {
// Capture/replay helpers: a captured chain of kernels replays with the same effect; a failing
// enqueue ends the capture and returns its error.
TEST_F(Async, GraphCaptureAndReplay) {
  auto s = async::stream::create();
  ASSERT_TRUE(s.ok());
  const size_t n = 1 << 16;
  auto a = bt::dev_alloc<float>(n), b = bt::dev_alloc<float>(n);
  BT_CUDA(cudaMemsetAsync(a.get(), 0, n * 4, s.value().get()));
  auto g = capture(s.value(), [&](stream_ref st) -> status {
    add_one<<<32, 256, 0, st>>>(a.get(), b.get(), n);  // b = 2a + 1
    add_one<<<32, 256, 0, st>>>(b.get(), a.get(), n);  // a = 2b + 1
    return cuda_check(cudaGetLastError(), "add_one");
  });
  ASSERT_TRUE(g.ok()) << g.error().to_string();
  EXPECT_EQ(g.value().num_nodes().value(), 2u);
  for (int i = 0; i < 3; ++i) BT_ASSERT_OK(g.value().launch(s.value()));
  BT_ASSERT_OK(s.value().ref().synchronize());
  std::vector<float> h(n);
  BT_CUDA(cudaMemcpy(h.data(), a.get(), n * 4, cudaMemcpyDeviceToHost));
  // a: 0 -> 3 -> 15 -> 63 (each replay: a = 4a + 3)
  EXPECT_EQ(h[0], 63.f);
  EXPECT_EQ(h[n - 1], 63.f);
  auto bad = capture(s.value(), [&](stream_ref) -> status { return status(errc::invalid_argument, "nope"); });
  EXPECT_EQ(bad.error().code(), errc::invalid_argument);
  EXPECT_NE(bad.error().message().find("while capturing a graph: nope"), std::string::npos);
  BT_CUDA(cudaMemsetAsync(a.get(), 0, 4, s.value().get()));  // the stream is usable again
  BT_ASSERT_OK(s.value().ref().synchronize());
}
}  // namespace
