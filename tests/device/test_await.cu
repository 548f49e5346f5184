// Device tests for co_await on GPU work: both completion modes, when_all/when_any over streams,
// CUDA errors surfacing with the call site, cancellation, baton chains, many tasks in flight.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "baton/async/cancel.hpp"
#include "baton/async/chain_await.cuh"
#include "baton/async/cuda_await.cuh"
#include "baton/async/executor.hpp"
#include "baton/async/reactor.hpp"
#include "baton/async/task.hpp"
#include "baton/async/when.hpp"
#include "chain_kernels.cuh"
#include "device_test_util.cuh"

using namespace baton;
using namespace baton::async;

namespace {

__global__ void sleep_then_set(int* flag, int value, unsigned ns) {
  for (unsigned t = 0; t < ns; t += 20000) __nanosleep(20000);
  *flag = value;
}

struct Ctx {
  thread_pool pool{2};  // executors outlive the reactor (declared first, destroyed last)
  reactor r;
  event_pool events;
  gpu_context ctx;
  explicit Ctx(completion_mode m) : ctx{r, pool, events, m} {}
};

class Await : public bt::DeviceTest, public ::testing::WithParamInterface<completion_mode> {};
class AwaitMisc : public bt::DeviceTest {};

// An empty baton stream is refused, not awaited as the legacy NULL stream; the named default stream
// is awaited like any other.
TEST_P(Await, EmptyStreamIsRefusedAndTheLegacyStreamIsAwaited) {
  Ctx c(GetParam());
  const async::stream empty;
  auto body = [&]() -> task<status> {
    status st = co_await done(c.ctx, empty);
    if (st.code() != errc::invalid_argument || st.message().find("stream_ref::legacy()") == std::string::npos)
      co_return status(errc::not_supported, "an empty stream was not refused: " + st.to_string());
    co_return co_await done(c.ctx, stream_ref::legacy());
  };
  status st = sync_wait(body());
  EXPECT_TRUE(st.ok()) << st.to_string();
  EXPECT_EQ(c.events.in_use(), 0u);
}

TEST_P(Await, ResumesAfterKernelOnExecutorThread) {
  Ctx c(GetParam());
  auto s = async::stream::create();
  ASSERT_TRUE(s.ok());
  int* flag = nullptr;
  BT_CUDA(cudaHostAlloc(&flag, sizeof(int), cudaHostAllocMapped));
  *flag = 0;
  const auto main_id = std::this_thread::get_id();
  auto body = [&]() -> task<status> {
    for (int i = 1; i <= 20; ++i) {
      sleep_then_set<<<1, 1, 0, s.value().get()>>>(flag, i, 100000);  // ~0.1 ms
      status st = co_await done(c.ctx, s.value());
      if (!st.ok()) co_return st;
      if (*flag != i) co_return status(errc::invalid_argument, "resumed before the kernel finished");
      if (std::this_thread::get_id() == main_id) co_return status(errc::invalid_argument, "resumed on the waiting thread");
    }
    co_return status{};
  };
  status st = sync_wait(body());
  EXPECT_TRUE(st.ok()) << st.to_string();
  EXPECT_EQ(c.events.in_use(), 0u);  // every pooled event returned
  (void)cudaFreeHost(flag);
}

TEST_P(Await, WhenAllAndWhenAnyOverStreams) {
  Ctx c(GetParam());
  std::vector<async::stream> streams;
  for (int i = 0; i < 4; ++i) streams.push_back(std::move(async::stream::create().value()));
  int* flags = nullptr;
  BT_CUDA(cudaHostAlloc(&flags, 4 * sizeof(int), cudaHostAllocMapped));
  for (int i = 0; i < 4; ++i) flags[i] = 0;
  auto one = [&](int i, unsigned ns) -> task<status> {
    sleep_then_set<<<1, 1, 0, streams[size_t(i)].get()>>>(flags + i, i + 1, ns);
    co_return co_await done(c.ctx, streams[size_t(i)]);
  };
  std::vector<task<status>> all;
  for (int i = 0; i < 4; ++i) all.push_back(one(i, 200000u * unsigned(4 - i)));
  auto res = sync_wait(when_all(std::move(all)));
  ASSERT_EQ(res.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(res[size_t(i)].ok()) << res[size_t(i)].to_string();
    EXPECT_EQ(flags[i], i + 1);
  }
  std::vector<task<status>> any;
  any.push_back(one(0, 5000000));  // 5 ms
  any.push_back(one(1, 10000));    // 10 us: wins
  auto [idx, st] = sync_wait(when_any(std::move(any)));
  EXPECT_EQ(idx, 1u);
  EXPECT_TRUE(st.ok());
  BT_ASSERT_OK(streams[0].ref().synchronize());  // the loser finishes in the background
  (void)cudaFreeHost(flags);
}

INSTANTIATE_TEST_SUITE_P(Modes, Await, ::testing::Values(completion_mode::poll, completion_mode::host_callback),
                         [](const auto& info) { return info.param == completion_mode::poll ? "poll" : "host_callback"; });

TEST_F(AwaitMisc, CudaErrorSurfacesWithCallSite) {
  Ctx c(completion_mode::poll);
  cudaEvent_t e;
  BT_CUDA(cudaEventCreate(&e));
  BT_CUDA(cudaEventDestroy(e));  // now an invalid handle
  auto body = [&]() -> task<status> { co_return co_await ready(c.ctx, e); };
  status st = sync_wait(body());
  EXPECT_EQ(st.code(), errc::cuda_error) << st.to_string();
  EXPECT_NE(st.message().find("test_await.cu:"), std::string::npos) << st.message();
  EXPECT_NE(st.cuda_code(), 0);
  (void)cudaGetLastError();
}

TEST_F(AwaitMisc, CancelledBeforeStartNeverLaunches) {
  Ctx c(completion_mode::poll);
  auto s = async::stream::create();
  std::atomic<int> launched{0};
  cancel_source cs;
  auto body = [&]() -> task<status> {
    launched++;
    co_return co_await done(c.ctx, s.value());
  };
  cs.request_stop();
  auto res = sync_wait(guarded(cs.get_token(), body()));
  EXPECT_EQ(res.code(), errc::cancelled) << res.to_string();
  EXPECT_EQ(launched.load(), 0);
}

TEST_F(AwaitMisc, AwaitBatonChain) {
  Ctx c(completion_mode::poll);
  const int M = 256, K = 256, N = 64;
  footprint::GemmA fp{M, K, 64, 64, 64, 64};
  Grid pg = fp.producer_grid(), cg{4, 1, 1};
  Chain chain;
  auto a = chain.add_stage("gemm1", pg);
  auto b = chain.add_stage("gemm2", cg);
  auto e = chain.add_edge(a, b, RowPolicy<footprint::GemmA>{pg, fp}, deps::gemm_a(fp, cg));
  BT_ASSERT_OK(chain.validate());
  auto ws = bt::dev_alloc<unsigned char>(chain.workspace_bytes());
  BT_ASSERT_OK(initialize_workspace(chain, ws.get(), chain.workspace_bytes(), stream));
  auto x = bt::dev_alloc<float>(size_t(M) * K), out = bt::dev_alloc<float>(size_t(M) * N);
  auto mism = bt::dev_alloc<unsigned>(1);
  BT_CUDA(cudaMemsetAsync(mism.get(), 0, 4, stream));
  auto sa = chain.bind(a, ws.get(), chain.workspace_bytes(), outs(e), ins());
  auto sb = chain.bind(b, ws.get(), chain.workspace_bytes(), outs(), ins(e));
  ASSERT_TRUE(sa.ok() && sb.ok());
  std::vector<StageLaunch> l{
      make_launch(bt::produce<bt::stage_t<decltype(sa)>>, dim3(unsigned(pg.size())), dim3(256), 0, sa.value(), x.get(),
                  bt::Dense{M, K, 64, 64}, 0.f, 0u),
      make_launch(bt::row_reduce<bt::stage_t<decltype(sb)>>, dim3(unsigned(cg.size())), dim3(256), 0, sb.value(),
                  (const float*)x.get(), 0.f, out.get(), M, K, N, 64, 64, 64, false, mism.get())};
  chain_runner run(chain, ws.get(), chain.workspace_bytes());
  auto body = [&]() -> task<status> {
    for (int i = 0; i < 100; ++i) {
      status st = co_await run(c.ctx, stream, l);
      if (!st.ok()) co_return st;
    }
    co_return status{};
  };
  status st = sync_wait(body());
  EXPECT_TRUE(st.ok()) << st.to_string();
  EXPECT_EQ(download(mism.get(), 1)[0], 0u);
}

// 1000 tasks in flight over 16 streams, each awaiting 20 short kernels: all complete once.
TEST_F(AwaitMisc, ThousandTasksInFlight) {
  Ctx c(completion_mode::poll);
  std::vector<async::stream> streams;
  for (int i = 0; i < 16; ++i) streams.push_back(std::move(async::stream::create().value()));
  int* flags = nullptr;
  BT_CUDA(cudaHostAlloc(&flags, 1000 * sizeof(int), cudaHostAllocMapped));
  std::atomic<int> completions{0};
  auto one = [&](int i) -> task<status> {
    for (int k = 1; k <= 20; ++k) {
      sleep_then_set<<<1, 1, 0, streams[size_t(i % 16)].get()>>>(flags + i, k, 0);
      status st = co_await done(c.ctx, streams[size_t(i % 16)]);
      if (!st.ok()) co_return st;
      completions++;
    }
    co_return status{};
  };
  std::vector<task<status>> ts;
  for (int i = 0; i < 1000; ++i) ts.push_back(one(i));
  auto res = sync_wait(when_all(std::move(ts)));
  for (auto& r : res) ASSERT_TRUE(r.ok()) << r.to_string();
  EXPECT_EQ(completions.load(), 20000);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(flags[i], 20);
  (void)cudaFreeHost(flags);
}

}  // namespace
