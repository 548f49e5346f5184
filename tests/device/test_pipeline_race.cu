// Device tests for the pipeline's slot reuse across calls (issue 22, part 1): back-to-back
// enqueue() calls with slow compute, and a randomized stress of enqueue / graph replay / finish
// interleavings on pinned and pageable buffers, every output checked.
//
// Before the fix, enqueue() decided slot reuse per call (chunk index >= K), so the second of two
// back-to-back calls overwrote device slots (and, pageable, staging slabs) that the first call's
// compute and D2H still used. These tests fail on that code; see docs/async.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "baton/async/memory.cuh"
#include "baton/async/pipeline.cuh"
#include "baton/async/stream.cuh"
#include "device_test_util.cuh"

using namespace baton;
using namespace baton::async;

namespace {

// out = 2 * in + 1 after a spin of `spin_ns` by every block before it reads its input: a slow
// compute keeps a chunk's slot in use while the host issues the next call.
__global__ void slow_affine(const float* in, float* out, size_t n, unsigned spin_ns) {
  if (threadIdx.x == 0 && spin_ns) {
    unsigned waited = 0;
    while (waited < spin_ns) {
      __nanosleep(1000);
      waited += 1000;
    }
  }
  __syncthreads();
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    out[i] = in[i] * 2.f + 1.f;
}

compute_fn slow_fn(unsigned spin_ns) {
  return [spin_ns](const void* in, void* out, size_t bytes, stream_ref s) {
    slow_affine<<<64, 256, 0, s>>>(static_cast<const float*>(in), static_cast<float*>(out), bytes / 4, spin_ns);
    return cuda_check(cudaGetLastError(), "slow_affine");
  };
}

// A host buffer of floats, pinned (cudaHostAlloc) or pageable.
class HostFloats {
 public:
  HostFloats(size_t n, bool pinned) : pinned_(pinned) {
    if (pinned) {
      if (cudaHostAlloc(&p_, n * 4 + 4, cudaHostAllocDefault) != cudaSuccess) p_ = nullptr;
    } else {
      v_.resize(n + 1);
      p_ = v_.data();
    }
  }
  ~HostFloats() {
    if (pinned_ && p_) (void)cudaFreeHost(p_);
  }
  HostFloats(const HostFloats&) = delete;
  HostFloats& operator=(const HostFloats&) = delete;
  float* data() const { return p_; }

 private:
  bool pinned_;
  float* p_ = nullptr;
  std::vector<float> v_;
};

void fill_random(float* p, size_t n, std::mt19937& rng) {
  std::uniform_int_distribution<int> d(-1000, 1000);
  for (size_t i = 0; i < n; ++i) p[i] = float(d(rng)) * 0.25f;  // exact in 2x + 1
}
size_t count_wrong(const float* src, const float* dst, size_t n) {
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) bad += !(dst[i] == src[i] * 2.f + 1.f);
  return bad;
}

struct BackToBackCase {
  bool src_pinned, dst_pinned;
};
class PipelineBackToBack : public bt::DeviceTest, public ::testing::WithParamInterface<BackToBackCase> {};
class PipelineRace : public bt::DeviceTest {};

// The issue's reproduction: 16 chunks of 1 MiB, K = 2, a compute that spins ~50 us before it reads,
// two enqueue() calls back to back, then finish(); both outputs checked, 20 trials.
TEST_P(PipelineBackToBack, BothOutputsCorrect) {
  const BackToBackCase c = GetParam();
  const size_t chunk = size_t(1) << 20, bytes = 16 * chunk, n = bytes / 4;
  auto p = pipeline::create(pipeline_options{chunk, 2, 4});
  ASSERT_TRUE(p.ok()) << p.error().to_string();
  HostFloats src1(n, c.src_pinned), src2(n, c.src_pinned), dst1(n, c.dst_pinned), dst2(n, c.dst_pinned);
  ASSERT_TRUE(src1.data() && src2.data() && dst1.data() && dst2.data());
  std::mt19937 rng(22);
  const compute_fn f = slow_fn(50000);
  size_t wrong1 = 0, wrong2 = 0;
  for (int trial = 0; trial < bt::scaled(20); ++trial) {
    fill_random(src1.data(), n, rng);
    fill_random(src2.data(), n, rng);
    std::memset(dst1.data(), 0xFF, bytes);
    std::memset(dst2.data(), 0xFF, bytes);
    BT_ASSERT_OK(p.value().enqueue(src1.data(), dst1.data(), bytes, f));
    BT_ASSERT_OK(p.value().enqueue(src2.data(), dst2.data(), bytes, f));
    BT_ASSERT_OK(p.value().finish());
    wrong1 += count_wrong(src1.data(), dst1.data(), n);
    wrong2 += count_wrong(src2.data(), dst2.data(), n);
  }
  EXPECT_EQ(wrong1, 0u) << "first call's output";
  EXPECT_EQ(wrong2, 0u) << "second call's output";
}
INSTANTIATE_TEST_SUITE_P(Buffers, PipelineBackToBack,
                         ::testing::Values(BackToBackCase{true, true}, BackToBackCase{false, false},
                                           BackToBackCase{false, true}, BackToBackCase{true, false}),
                         [](const auto& info) {
                           return std::string(info.param.src_pinned ? "pinned" : "pageable") + "_to_" +
                                  (info.param.dst_pinned ? "pinned" : "pageable");
                         });

// The same with the two calls on different kinds of buffer (pinned, then pageable, then pinned),
// which take different staging paths through the same slots.
TEST_F(PipelineRace, BackToBackMixedBuffers) {
  const size_t chunk = size_t(256) << 10, bytes = 9 * chunk + 12, n = bytes / 4;
  auto p = pipeline::create(pipeline_options{chunk, 3, 2});
  ASSERT_TRUE(p.ok());
  HostFloats a_src(n, true), a_dst(n, true), b_src(n, false), b_dst(n, false), c_src(n, true), c_dst(n, false);
  std::mt19937 rng(5);
  const compute_fn f = slow_fn(30000);
  for (int trial = 0; trial < bt::scaled(10); ++trial) {
    for (HostFloats* s : {&a_src, &b_src, &c_src}) fill_random(s->data(), n, rng);
    for (HostFloats* d : {&a_dst, &b_dst, &c_dst}) std::memset(d->data(), 0xFF, bytes);
    BT_ASSERT_OK(p.value().enqueue(a_src.data(), a_dst.data(), bytes, f));
    BT_ASSERT_OK(p.value().enqueue(b_src.data(), b_dst.data(), bytes, f));
    BT_ASSERT_OK(p.value().enqueue(c_src.data(), c_dst.data(), bytes, f));
    BT_ASSERT_OK(p.value().finish());
    EXPECT_EQ(count_wrong(a_src.data(), a_dst.data(), n), 0u) << "trial " << trial << ": pinned -> pinned";
    EXPECT_EQ(count_wrong(b_src.data(), b_dst.data(), n), 0u) << "trial " << trial << ": pageable -> pageable";
    EXPECT_EQ(count_wrong(c_src.data(), c_dst.data(), n), 0u) << "trial " << trial << ": pinned -> pageable";
  }
}

// 10^4 runs (BATON_TEST_SCALE divides it) of random interleavings on pipelines with K = 1..4:
// each batch issues 1-4 operations back to back, without host waits between them: enqueue() on
// pinned or pageable src/dst (chosen independently), or a replay of a captured graph; a random
// finish() may follow any operation. Chunk counts 1-6 with a ragged last chunk, compute delays of
// 0-20 us per chunk. After the batch: finish(), the origin stream synchronized, every output
// checked against its own source.
TEST_F(PipelineRace, Stress10kRandomInterleavings) {
  const int total_runs = bt::scaled(10000);
  std::mt19937 rng(0xBA70u);
  constexpr size_t kChunk = size_t(64) << 10;
  constexpr size_t kMaxN = 6 * kChunk / 4;
  constexpr int kOpsPerBatch = 4;
  size_t runs = 0, wrong = 0, replays = 0, enqueues = 0, pageable_ops = 0;
  std::string first_bad;
  for (int buffers = 1; buffers <= 4; ++buffers) {
    auto p = pipeline::create(pipeline_options{kChunk, buffers, 2});
    ASSERT_TRUE(p.ok()) << p.error().to_string();
    auto origin = async::stream::create();
    ASSERT_TRUE(origin.ok());
    // Per batch slot: its own src/dst of each kind (an operation's buffers are not touched again
    // until the batch's outputs are checked).
    std::vector<std::unique_ptr<HostFloats>> pin_src, pin_dst, pg_src, pg_dst;
    for (int i = 0; i < kOpsPerBatch; ++i) {
      pin_src.push_back(std::make_unique<HostFloats>(kMaxN, true));
      pin_dst.push_back(std::make_unique<HostFloats>(kMaxN, true));
      pg_src.push_back(std::make_unique<HostFloats>(kMaxN, false));
      pg_dst.push_back(std::make_unique<HostFloats>(kMaxN, false));
    }
    // Two captured graphs with their own pinned buffers, sizes and delays.
    struct Captured {
      std::unique_ptr<HostFloats> src, dst;
      size_t n = 0;
      pipeline_graph g;
    };
    std::vector<Captured> graphs(2);
    for (size_t gi = 0; gi < graphs.size(); ++gi) {
      Captured& c = graphs[gi];
      c.src = std::make_unique<HostFloats>(kMaxN, true);
      c.dst = std::make_unique<HostFloats>(kMaxN, true);
      c.n = gi == 0 ? (3 * kChunk + 4 * 37) / 4 : (5 * kChunk) / 4 + 1;
      auto g = p.value().capture(c.src->data(), c.dst->data(), c.n * 4, slow_fn(gi == 0 ? 15000 : 3000), origin.value());
      ASSERT_TRUE(g.ok()) << g.error().to_string();
      c.g = std::move(g.value());
    }
    const int runs_here = total_runs / 4;
    int done_here = 0;
    while (done_here < runs_here) {
      struct Op {
        const float* src;
        const float* dst;
        size_t n;
        const char* kind;
      };
      std::vector<Op> ops;
      bool graph_used[2] = {false, false};
      const int batch = std::uniform_int_distribution<int>(1, kOpsPerBatch)(rng);
      for (int o = 0; o < batch && done_here < runs_here; ++o, ++done_here) {
        const int what = std::uniform_int_distribution<int>(0, 9)(rng);
        if (what < 2 && !graph_used[what]) {  // a replay, each graph at most once a batch
          Captured& c = graphs[size_t(what)];
          graph_used[what] = true;
          fill_random(c.src->data(), c.n, rng);
          std::memset(c.dst->data(), 0xFF, c.n * 4);
          BT_ASSERT_OK(c.g.launch(origin.value()));
          ops.push_back({c.src->data(), c.dst->data(), c.n, "replay"});
          ++replays;
        } else {
          const bool sp = rng() & 1, dp = rng() & 1;
          const size_t chunks = std::uniform_int_distribution<size_t>(1, 6)(rng);
          const size_t ragged = std::uniform_int_distribution<size_t>(0, kChunk / 4 - 1)(rng);
          const size_t n = (chunks - 1) * (kChunk / 4) + 1 + ragged;  // last chunk: 1 .. kChunk/4 floats
          HostFloats& s = sp ? *pin_src[size_t(o)] : *pg_src[size_t(o)];
          HostFloats& d = dp ? *pin_dst[size_t(o)] : *pg_dst[size_t(o)];
          fill_random(s.data(), n, rng);
          std::memset(d.data(), 0xFF, n * 4);
          const unsigned delay = std::uniform_int_distribution<unsigned>(0, 20)(rng) * 1000u;
          BT_ASSERT_OK(p.value().enqueue(s.data(), d.data(), n * 4, slow_fn(delay)));
          ops.push_back({s.data(), d.data(), n, sp && dp ? "enqueue pinned" : "enqueue pageable"});
          pageable_ops += !(sp && dp);
          ++enqueues;
        }
        if (std::uniform_int_distribution<int>(0, 7)(rng) == 0) BT_ASSERT_OK(p.value().finish());
      }
      BT_ASSERT_OK(p.value().finish());
      BT_ASSERT_OK(origin.value().ref().synchronize());
      for (size_t i = 0; i < ops.size(); ++i) {
        const size_t w = count_wrong(ops[i].src, ops[i].dst, ops[i].n);
        if (w && first_bad.empty())
          first_bad = "K=" + std::to_string(buffers) + ", op " + std::to_string(i) + " of a batch of " +
                      std::to_string(ops.size()) + " (" + ops[i].kind + ", " + std::to_string(ops[i].n) + " floats): " +
                      std::to_string(w) + " wrong";
        wrong += w;
      }
      runs += ops.size();
    }
  }
  std::printf("pipeline stress: %zu runs (%zu enqueues, %zu of them staged, %zu replays), %zu wrong floats\n", runs,
              enqueues, pageable_ops, replays, wrong);
  EXPECT_EQ(runs, size_t(total_runs / 4 * 4));
  EXPECT_GT(replays, 0u);
  EXPECT_GT(pageable_ops, 0u);
  EXPECT_EQ(wrong, 0u) << "first: " << first_bad;
}

}  // namespace
