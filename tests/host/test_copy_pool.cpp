// baton::async::CopyPool: the pipeline's staging copies run ahead of the GPU. Every byte arrives,
// for any length and pool size, with many copies in flight from several threads; nothing of a
// copy is written before its `before` hook returns; a failing hook is reported and its part
// writes nothing; parts run in submission order; the destructor finishes what was queued.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "byte_pattern.hpp"
#include "baton/async/copy_pool.hpp"

namespace {
using baton::async::CopyPool;
using baton::errc;
using baton::status;

using bt_host::pattern;

constexpr size_t MiB = size_t(1) << 20;

TEST(CopyPool, CopiesEveryByteForAnyLengthAndPoolSize) {
  for (int threads : {1, 2, 5, 16}) {
    CopyPool pool(threads);
    EXPECT_EQ(pool.threads(), threads);
    for (size_t len : {size_t(0), size_t(1), MiB - 1, MiB, MiB + 1, 3 * MiB + 12345, 17 * MiB + 7}) {
      const auto src = pattern(len, unsigned(len) + unsigned(threads));
      std::vector<std::uint8_t> dst(len + 64, 0xAB);
      ASSERT_TRUE(pool.submit(dst.data() + 32, src.data(), len)->wait().ok());
      ASSERT_TRUE(std::equal(src.begin(), src.end(), dst.begin() + 32)) << "threads " << threads << " len " << len;
      for (size_t i = 0; i < 32; ++i) {  // nothing written outside [dst, dst + len)
        ASSERT_EQ(dst[i], 0xAB);
        ASSERT_EQ(dst[32 + len + i], 0xAB);
      }
    }
  }
}

TEST(CopyPool, PartsAtLeastAQuarterMiBAtMostOnePerThread) {
  CopyPool pool(4);
  EXPECT_EQ(pool.parts_for(0), 1u);
  EXPECT_EQ(pool.parts_for(CopyPool::kMinPart - 1), 1u);
  EXPECT_EQ(pool.parts_for(2 * CopyPool::kMinPart), 2u);
  EXPECT_EQ(pool.parts_for(64 * MiB), 4u);
}

TEST(CopyPool, ManyCopiesInFlightFromSeveralThreads) {
  CopyPool pool(6);
  constexpr int kSubmitters = 4, kCopies = 40;
  std::vector<std::thread> ts;
  std::atomic<int> wrong{0};
  for (int t = 0; t < kSubmitters; ++t)
    ts.emplace_back([&, t] {
      std::vector<std::vector<std::uint8_t>> srcs, dsts;
      std::vector<std::shared_ptr<CopyPool::copy>> cs;
      for (int i = 0; i < kCopies; ++i) {
        const size_t len = size_t(i % 7) * 300000 + size_t(t) * 17 + 1;
        srcs.push_back(pattern(len, unsigned(t * 1000 + i)));
        dsts.emplace_back(len, 0);
      }
      for (int i = 0; i < kCopies; ++i) cs.push_back(pool.submit(dsts[size_t(i)].data(), srcs[size_t(i)].data(), srcs[size_t(i)].size()));
      for (int i = 0; i < kCopies; ++i) {
        if (!cs[size_t(i)]->wait().ok() || dsts[size_t(i)] != srcs[size_t(i)]) ++wrong;
      }
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(CopyPool, NothingIsWrittenBeforeTheHookReturns) {
  CopyPool pool(4);
  const auto src = pattern(3 * MiB, 7);
  std::vector<std::uint8_t> dst(src.size(), 0);
  std::promise<void> gate;
  std::shared_future<void> open = gate.get_future().share();
  std::atomic<int> calls{0};
  auto c = pool.submit(dst.data(), src.data(), src.size(), [&] {
    ++calls;
    open.wait();
    return status{};
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_FALSE(c->done());
  EXPECT_TRUE(std::all_of(dst.begin(), dst.end(), [](std::uint8_t b) { return b == 0; }));
  gate.set_value();
  ASSERT_TRUE(c->wait().ok());
  EXPECT_EQ(dst, src);
  EXPECT_EQ(calls.load(), int(pool.parts_for(src.size())));  // once per part
}

TEST(CopyPool, AFailingHookIsReportedAndItsPartWritesNothing) {
  CopyPool pool(1);  // one part: the copy writes nothing at all
  const auto src = pattern(MiB / 8, 3);
  std::vector<std::uint8_t> dst(src.size(), 0x5A);
  auto c = pool.submit(dst.data(), src.data(), src.size(), [] { return status(errc::cuda_error, "slab wait failed"); });
  const status st = c->wait();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), errc::cuda_error);
  EXPECT_NE(st.message().find("slab wait failed"), std::string::npos);
  EXPECT_TRUE(std::all_of(dst.begin(), dst.end(), [](std::uint8_t b) { return b == 0x5A; }));
  // The pool goes on with the next copy.
  std::vector<std::uint8_t> dst2(src.size(), 0);
  ASSERT_TRUE(pool.submit(dst2.data(), src.data(), src.size())->wait().ok());
  EXPECT_EQ(dst2, src);
}

TEST(CopyPool, PartsRunInSubmissionOrder) {
  CopyPool pool(1);
  std::vector<int> order;
  std::mutex m;
  std::promise<void> gate;
  std::shared_future<void> open = gate.get_future().share();
  std::vector<std::uint8_t> a(8), b(8), c(8), src(8, 1);
  auto hook = [&](int id, bool block) {
    return [&, id, block] {
      if (block) open.wait();
      std::lock_guard<std::mutex> lk(m);
      order.push_back(id);
      return status{};
    };
  };
  auto ca = pool.submit(a.data(), src.data(), 8, hook(0, true));  // holds the one thread until the others are queued
  auto cb = pool.submit(b.data(), src.data(), 8, hook(1, false));
  auto cc = pool.submit(c.data(), src.data(), 8, hook(2, false));
  gate.set_value();
  ASSERT_TRUE(cc->wait().ok());
  ASSERT_TRUE(ca->wait().ok() && cb->wait().ok());
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
}

TEST(CopyPool, TheDestructorFinishesWhatWasQueued) {
  const auto src = pattern(8 * MiB, 11);
  std::vector<std::vector<std::uint8_t>> dsts(6, std::vector<std::uint8_t>(src.size(), 0));
  std::vector<std::shared_ptr<CopyPool::copy>> cs;
  {
    CopyPool pool(2);
    for (auto& d : dsts) cs.push_back(pool.submit(d.data(), src.data(), src.size()));
  }
  for (size_t i = 0; i < dsts.size(); ++i) {
    EXPECT_TRUE(cs[i]->done());
    EXPECT_EQ(dsts[i], src) << i;
  }
}
}  // namespace
