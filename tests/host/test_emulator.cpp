// Host tests for baton/emu/emulator.hpp: real baton::Stage objects (tile/wait/post on
// std::atomic_ref) run as host threads on a few "SM slots", with random delays, over many epochs.
//
// The watchdog test needs the watchdog compiled in whatever the build type.
#define BATON_ENABLE_WATCHDOG 1

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "baton/baton.hpp"
#include "baton/emu/emulator.hpp"

namespace {

namespace emu = baton::emu;
namespace fp = baton::footprint;
namespace deps = baton::deps;
using baton::Chain;
using baton::ColumnMajor;
using baton::errc;
using baton::Grid;
using baton::RowMajor;
using baton::Tile;
using baton::TilePolicy;
using Clock = std::chrono::steady_clock;

static_assert(BATON_ENABLE_WATCHDOG == 1, "this file needs the watchdog");

// Every test runs under a time bound. Nothing may hang: the deadlock detector and the watchdog
// guarantee that; the bound catches a slow regression.
class TimeBound {
 public:
  explicit TimeBound(double seconds) : limit_(seconds), t0_(Clock::now()) {}
  ~TimeBound() { EXPECT_LT(elapsed(), limit_) << "test exceeded its time bound"; }
  [[nodiscard]] double elapsed() const { return std::chrono::duration<double>(Clock::now() - t0_).count(); }

 private:
  double limit_;
  Clock::time_point t0_;
};

uint32_t hash2(uint32_t i, uint32_t j) {
  uint32_t x = i * 0x9E3779B1u ^ (j + 0x7F4A7C15u) * 0x85EBCA77u;
  x ^= x >> 15;
  x *= 0x2C1B3C6Du;
  x ^= x >> 12;
  return x;
}

struct Mat {
  int rows = 0, cols = 0;
  std::vector<uint32_t> v;
  Mat() = default;
  Mat(int r, int c) : rows(r), cols(c), v(size_t(r) * size_t(c), 0u) {}
  uint32_t& operator()(int i, int j) { return v[size_t(i) * size_t(cols) + size_t(j)]; }
  uint32_t operator()(int i, int j) const { return v[size_t(i) * size_t(cols) + size_t(j)]; }
  static Mat random(int r, int c, uint32_t salt) {
    Mat m(r, c);
    for (int i = 0; i < r; ++i)
      for (int j = 0; j < c; ++j) m(i, j) = hash2(uint32_t(i) + salt, uint32_t(j)) & 0xffffu;
    return m;
  }
};

struct Rect {
  int r0, r1, c0, c1;
};
Rect tile_rect(Tile t, int tm, int tn, int rows, int cols) {
  return Rect{t.m * tm, std::min(rows, (t.m + 1) * tm), t.n * tn, std::min(cols, (t.n + 1) * tn)};
}

// What the first stage writes in epoch e: every epoch gives different data, so a consumer that
// reads before the producer wrote (this epoch) sees a stale or torn value.
uint32_t produce(uint32_t in, uint32_t e) { return in * 3u + e * 7u + 1u; }

// Writes a tile's rows with a random delay halfway through: an early read sees a torn tile.
template <class F>
void write_tile(emu::CtaContext& c, Rect r, F&& f) {
  const int mid = (r.r0 + r.r1) / 2;
  for (int i = r.r0; i < mid; ++i)
    for (int j = r.c0; j < r.c1; ++j) f(i, j);
  c.random_delay();
  for (int i = mid; i < r.r1; ++i)
    for (int j = r.c0; j < r.c1; ++j) f(i, j);
}

std::string compare(const Mat& got, const Mat& want, const std::string& what) {
  int64_t bad = 0;
  std::string first;
  for (int i = 0; i < want.rows; ++i)
    for (int j = 0; j < want.cols; ++j)
      if (got(i, j) != want(i, j)) {
        if (bad == 0)
          first = "(" + std::to_string(i) + "," + std::to_string(j) + ") = " + std::to_string(got(i, j)) +
                  ", want " + std::to_string(want(i, j));
        ++bad;
      }
  if (bad == 0) return {};
  return what + ": " + std::to_string(bad) + " of " + std::to_string(want.v.size()) + " elements wrong, first " + first;
}

uint32_t read_u32(const std::vector<unsigned char>& ws, size_t off) {
  uint32_t v;
  std::memcpy(&v, ws.data() + off, 4);
  return v;
}
uint64_t read_u64(const std::vector<unsigned char>& ws, size_t off) {
  uint64_t v;
  std::memcpy(&v, ws.data() + off, 8);
  return v;
}
baton::ErrorRecord read_record(const std::vector<unsigned char>& ws) {
  baton::ErrorRecord r;
  std::memcpy(&r, ws.data() + Chain::error_offset(), sizeof r);
  return r;
}

// ---- a 2-stage chained copy (the cuSync paper's simple test) -----------------------------------
// producer: out0 = produce(in, epoch); consumer: out1[tile] = out0[tile] * 5 + epoch.
// The consumer reads its own tile of out0; P is the policy it waits with (sound or not).
template <class P, class COrder = RowMajor>
struct CopyChain {
  static constexpr int TM = 8, TN = 8;
  int R, C;
  Grid G;
  Chain chain;
  baton::StageRef<RowMajor> a;
  baton::StageRef<COrder> b;
  baton::EdgeRef<P> e;
  std::vector<unsigned char> ws;
  Mat in, out0, out1;
  std::atomic<int> failed_waits{0};
  uint32_t consumer_delay_us = 0;  // extra random delay before the consumer's wait

  CopyChain(int rows, int cols, P policy, baton::DependencyRelation rel, COrder corder = {})
      : R(rows), C(cols), G{baton::ceil_div(rows, TM), baton::ceil_div(cols, TN), 1},
        in(Mat::random(rows, cols, 1)), out0(rows, cols), out1(rows, cols) {
    a = chain.add_stage("producer", G, RowMajor{}, {.reads = {}, .writes = {"out0"}});
    b = chain.add_stage("consumer", G, corder, {.reads = {"out0"}, .writes = {"out1"}});
    e = chain.add_edge(a, b, policy, std::move(rel));
  }
  [[nodiscard]] baton::status init(uint32_t start_epoch) {
    BATON_TRY(chain.validate());
    return chain.workspace_image(start_epoch, ws);
  }
  emu::Body producer_body() {
    auto A = chain.bind(a, ws.data(), ws.size(), baton::outs(e), baton::ins()).value();
    return [this, A](emu::CtaContext& c) {
      const auto t = A.tile();
      write_tile(c, tile_rect(t.tile, TM, TN, R, C), [&](int i, int j) { out0(i, j) = produce(in(i, j), t.epoch); });
      A.post(t);
    };
  }
  template <class S>
  emu::Body consumer_body(S B) {
    return [this, B](emu::CtaContext& c) {
      const auto t = B.tile();
      c.random_delay(consumer_delay_us);
      if (!B.wait(t)) {
        ++failed_waits;
        return;
      }
      const Rect r = tile_rect(t.tile, TM, TN, R, C);
      for (int i = r.r0; i < r.r1; ++i)
        for (int j = r.c0; j < r.c1; ++j) out1(i, j) = out0(i, j) * 5u + t.epoch;
    };
  }
  emu::Body consumer_body() {
    return consumer_body(chain.bind(b, ws.data(), ws.size(), baton::outs(), baton::ins(e)).value());
  }
  std::vector<emu::StageLaunch> launches() {
    return {{a.index, int(G.size()), producer_body()}, {b.index, int(G.size()), consumer_body()}};
  }
  [[nodiscard]] std::string check(uint32_t ep) const {
    Mat w0(R, C), w1(R, C);
    for (int i = 0; i < R; ++i)
      for (int j = 0; j < C; ++j) {
        w0(i, j) = produce(in(i, j), ep);
        w1(i, j) = w0(i, j) * 5u + ep;
      }
    std::string s = compare(out0, w0, "out0");
    return s.empty() ? compare(out1, w1, "out1") : s;
  }
};

// ---- a 2-stage GEMM chain: Y = X(e) * W + e, the consumer reads X's rows k-block by k-block ---
template <class P>
struct GemmChain {
  fp::GemmA f;
  int N2, cn;
  Grid PG, CG;
  Chain chain;
  baton::StageRef<RowMajor> a, b;
  baton::EdgeRef<P> e;
  std::vector<unsigned char> ws;
  Mat in, W, X, Y;
  std::atomic<int> failed_waits{0};

  GemmChain(fp::GemmA footprint, int n2, int cons_tile_n, P policy)
      : f(footprint), N2(n2), cn(cons_tile_n), PG(f.producer_grid()),
        CG{baton::ceil_div(f.rows, f.cons_tile_m), baton::ceil_div(n2, cons_tile_n), 1},
        in(Mat::random(f.rows, f.cols, 2)), W(Mat::random(f.cols, n2, 3)), X(f.rows, f.cols), Y(f.rows, n2) {
    a = chain.add_stage("gemm1", PG, RowMajor{}, {.reads = {}, .writes = {"X"}});
    b = chain.add_stage("gemm2", CG, RowMajor{}, {.reads = {"X"}, .writes = {"Y"}});
    e = chain.add_edge(a, b, policy, deps::gemm_a(f, CG));
  }
  [[nodiscard]] baton::status init(uint32_t start_epoch) {
    BATON_TRY(chain.validate());
    return chain.workspace_image(start_epoch, ws);
  }
  std::vector<emu::StageLaunch> launches() {
    auto A = chain.bind(a, ws.data(), ws.size(), baton::outs(e), baton::ins()).value();
    auto B = chain.bind(b, ws.data(), ws.size(), baton::outs(), baton::ins(e)).value();
    emu::Body pa = [this, A](emu::CtaContext& c) {
      const auto t = A.tile();
      write_tile(c, tile_rect(t.tile, f.prod_tile_m, f.prod_tile_n, f.rows, f.cols),
                 [&](int i, int j) { X(i, j) = produce(in(i, j), t.epoch); });
      A.post(t);
    };
    emu::Body pb = [this, B](emu::CtaContext& c) {
      const auto t = B.tile();
      const Rect r = tile_rect(t.tile, f.cons_tile_m, cn, f.rows, N2);
      const int w = r.c1 - r.c0;
      std::vector<uint32_t> acc(size_t((r.r1 - r.r0) * w), 0u);
      for (int k = 0; k < f.k_blocks(); ++k) {
        if (!B.wait(t, k)) {  // per-tile policies wait at k == 0 only
          ++failed_waits;
          return;
        }
        c.random_delay();
        const int k0 = k * f.cons_tile_k, k1 = std::min(f.cols, k0 + f.cons_tile_k);
        for (int i = r.r0; i < r.r1; ++i)
          for (int kk = k0; kk < k1; ++kk)
            for (int j = r.c0; j < r.c1; ++j) acc[size_t((i - r.r0) * w + (j - r.c0))] += X(i, kk) * W(kk, j);
      }
      for (int i = r.r0; i < r.r1; ++i)
        for (int j = r.c0; j < r.c1; ++j) Y(i, j) = acc[size_t((i - r.r0) * w + (j - r.c0))] + t.epoch;
    };
    return {{a.index, int(PG.size()), pa}, {b.index, int(CG.size()), pb}};
  }
  [[nodiscard]] std::string check(uint32_t ep) const {
    Mat wx(f.rows, f.cols), wy(f.rows, N2);
    for (int i = 0; i < f.rows; ++i)
      for (int j = 0; j < f.cols; ++j) wx(i, j) = produce(in(i, j), ep);
    for (int i = 0; i < f.rows; ++i)
      for (int j = 0; j < N2; ++j) {
        uint32_t s = 0;
        for (int k = 0; k < f.cols; ++k) s += wx(i, k) * W(k, j);
        wy(i, j) = s + ep;
      }
    std::string s = compare(X, wx, "X");
    return s.empty() ? compare(Y, wy, "Y") : s;
  }
};

// Ragged GEMM shapes: M = 37, K = 45 (producer N), N2 = 20; producer tiles 8x16 (grid 5x3),
// consumer tiles 16x8 with k-blocks of 8 (grid 3x3, 6 k-blocks). A consumer row of tiles spans
// 2-3 producer rows, a k-block 1-2 producer columns.
constexpr fp::GemmA kGemm{37, 45, 8, 16, 16, 8};
constexpr int kGemmN2 = 20, kGemmConsTileN = 8;

// ---- a 3-stage chain A -> B -> C with the extra edge A -> C ------------------------------------
// A: a = produce(in, e)                        grid P (24x20 elements, tiles 8x6: 3x4)
// B: b = transpose(a) + 2e                     grid P^T, waits on A with TilePolicy<Transpose>
// C: c[i][j] = 5 a[i][j] + b[j][i] + e         grid P, waits on A (Identity) and on B (Transpose)
struct ThreeStage {
  static constexpr int R = 24, C = 20, TM = 8, TN = 6;
  Grid P{3, 4, 1}, Pt{4, 3, 1};
  Chain chain;
  baton::StageRef<RowMajor> sa, sc;
  baton::StageRef<ColumnMajor> sb;
  baton::EdgeRef<TilePolicy<fp::Transpose>> e_ab, e_bc;
  baton::EdgeRef<TilePolicy<fp::Identity>> e_ac;
  std::vector<unsigned char> ws;
  Mat in, a, b, c;
  std::atomic<int> failed_waits{0};

  explicit ThreeStage(bool with_ac_edge = true)
      : in(Mat::random(R, C, 4)), a(R, C), b(C, R), c(R, C) {
    sa = chain.add_stage("A", P, RowMajor{}, {.reads = {}, .writes = {"a"}});
    sb = chain.add_stage("B", Pt, ColumnMajor{}, {.reads = {"a"}, .writes = {"b"}});
    sc = chain.add_stage("C", P, RowMajor{}, {.reads = {"a", "b"}, .writes = {"c"}});
    e_ab = chain.add_edge(sa, sb, TilePolicy<fp::Transpose>{P, {}}, deps::transposed(P));
    if (with_ac_edge) e_ac = chain.add_edge(sa, sc, TilePolicy<fp::Identity>{P, {}}, deps::one_to_one(P));
    e_bc = chain.add_edge(sb, sc, TilePolicy<fp::Transpose>{Pt, {}}, deps::transposed(Pt));
  }
  [[nodiscard]] baton::status init(uint32_t start_epoch) {
    BATON_TRY(chain.validate());
    return chain.workspace_image(start_epoch, ws);
  }
  std::vector<emu::StageLaunch> launches() {
    auto A = chain.bind(sa, ws.data(), ws.size(), baton::outs(e_ab, e_ac), baton::ins()).value();
    auto B = chain.bind(sb, ws.data(), ws.size(), baton::outs(e_bc), baton::ins(e_ab)).value();
    auto Cs = chain.bind(sc, ws.data(), ws.size(), baton::outs(), baton::ins(e_ac, e_bc)).value();
    emu::Body ba = [this, A](emu::CtaContext& cx) {
      const auto t = A.tile();
      write_tile(cx, tile_rect(t.tile, TM, TN, R, C), [&](int i, int j) { a(i, j) = produce(in(i, j), t.epoch); });
      A.post(t);
    };
    emu::Body bb = [this, B](emu::CtaContext& cx) {
      const auto t = B.tile();
      cx.random_delay();
      if (!B.wait(t)) {
        ++failed_waits;
        return;
      }
      write_tile(cx, tile_rect(t.tile, TN, TM, C, R), [&](int i, int j) { b(i, j) = a(j, i) + 2u * t.epoch; });
      B.post(t);
    };
    emu::Body bc = [this, Cs](emu::CtaContext& cx) {
      const auto t = Cs.tile();
      cx.random_delay();
      if (!Cs.wait(t)) {
        ++failed_waits;
        return;
      }
      const Rect r = tile_rect(t.tile, TM, TN, R, C);
      for (int i = r.r0; i < r.r1; ++i)
        for (int j = r.c0; j < r.c1; ++j) c(i, j) = 5u * a(i, j) + b(j, i) + t.epoch;
    };
    return {{sa.index, int(P.size()), ba}, {sb.index, int(Pt.size()), bb}, {sc.index, int(P.size()), bc}};
  }
  [[nodiscard]] std::string check(uint32_t ep) const {
    Mat wa(R, C), wb(C, R), wc(R, C);
    for (int i = 0; i < R; ++i)
      for (int j = 0; j < C; ++j) wa(i, j) = produce(in(i, j), ep);
    for (int i = 0; i < C; ++i)
      for (int j = 0; j < R; ++j) wb(i, j) = wa(j, i) + 2u * ep;
    for (int i = 0; i < R; ++i)
      for (int j = 0; j < C; ++j) wc(i, j) = 5u * wa(i, j) + wb(j, i) + ep;
    std::string s = compare(a, wa, "a");
    if (s.empty()) s = compare(b, wb, "b");
    return s.empty() ? compare(c, wc, "c") : s;
  }
};

// Runs `iters` iterations on one workspace (no reset), checking the data of every iteration.
template <class Fixture>
void run_and_check(Fixture& fx, emu::Emulator& em, uint32_t start_epoch, int iters) {
  ASSERT_TRUE(fx.init(start_epoch).ok());
  const auto launches = fx.launches();
  for (int it = 0; it < iters; ++it) {
    const uint32_t ep = start_epoch + uint32_t(it);
    baton::status s = em.run_iteration(fx.chain, fx.ws, launches);
    ASSERT_TRUE(s.ok()) << "iteration " << it << " (epoch " << ep << "): " << s.to_string();
    ASSERT_EQ(fx.check(ep), "") << "iteration " << it << " (epoch " << ep << "), seed " << em.config().seed;
  }
  EXPECT_EQ(fx.failed_waits.load(), 0);
}

// =================================================================================================
// 1. Two-stage chains under random delays, every built-in policy family.
// =================================================================================================

TEST(EmulatorChain, TilePolicyIdentityCopy) {
  TimeBound bound(5);
  CopyChain<TilePolicy<fp::Identity>> fx(20, 28, TilePolicy<fp::Identity>{Grid{3, 4, 1}, {}}, deps::one_to_one({3, 4, 1}));
  fx.consumer_delay_us = 30;
  emu::Emulator em({.sm_slots = 4, .co_schedule = true, .seed = 1, .max_delay_us = 40});
  run_and_check(fx, em, 0, 60);
  EXPECT_EQ(em.total_ctas_run(), uint64_t(60 * 2 * 12));
  // Tickets advanced 60 epochs; every semaphore got one post per epoch.
  EXPECT_EQ(read_u64(fx.ws, fx.chain.ticket_offset(0)), uint64_t(60 * 12));
  EXPECT_EQ(read_u64(fx.ws, fx.chain.ticket_offset(1)), uint64_t(60 * 12));
  for (int s = 0; s < 12; ++s) EXPECT_EQ(read_u32(fx.ws, fx.chain.semaphore_offset(0) + 4 * size_t(s)), 60u);
}

TEST(EmulatorChain, CtaIndexBodyAndStats) {
  TimeBound bound(5);
  CopyChain<TilePolicy<fp::Identity>> fx(16, 32, TilePolicy<fp::Identity>{Grid{2, 4, 1}, {}}, deps::one_to_one({2, 4, 1}));
  ASSERT_TRUE(fx.init(0).ok());
  auto launches = fx.launches();
  // A body taking `int cta` adapts through make_body (here it wraps the producer body).
  std::vector<int> seen(8, 0);
  auto producer = fx.producer_body();
  launches[0].body = emu::make_body([&, producer](int cta) {
    seen[size_t(cta)]++;
    emu::CtaContext c(cta, 0, 0, 0, /*seed=*/uint64_t(cta) * 977u + uint64_t(seen[size_t(cta)]), /*max_delay_us=*/60,
                      nullptr);
    producer(c);
  });
  fx.consumer_delay_us = 20;
  emu::Emulator em({.sm_slots = 3, .co_schedule = true, .seed = 3, .max_delay_us = 20});
  uint64_t overlapped = 0;
  for (int it = 0; it < 20; ++it) {
    ASSERT_TRUE(em.run_iteration(fx.chain, fx.ws, launches).ok());
    ASSERT_EQ(fx.check(uint32_t(it)), "");
    EXPECT_EQ(em.last_stats().ctas_run, 16u);
    EXPECT_EQ(em.last_stats().ctas_cancelled, 0u);
    EXPECT_LE(em.last_stats().max_slots_busy, 3);
    overlapped += em.last_stats().ctas_overlapped;
  }
  for (int v : seen) EXPECT_EQ(v, 20);
  // Consumers started while producers still ran: the stages overlapped.
  EXPECT_GT(overlapped, 0u);
}

template <class P>
void gemm_test(P policy, uint64_t seed, int iters) {
  GemmChain<P> fx(kGemm, kGemmN2, kGemmConsTileN, policy);
  emu::Emulator em({.sm_slots = 4, .co_schedule = true, .seed = seed, .max_delay_us = 30});
  run_and_check(fx, em, 0, iters);
}

TEST(EmulatorChain, RowPolicyGemmA) {
  TimeBound bound(5);
  gemm_test(baton::RowPolicy<fp::GemmA>{kGemm.producer_grid(), kGemm, false}, 11, 40);
}

TEST(EmulatorChain, RowPolicyGemmAPerKBlock) {
  TimeBound bound(5);
  gemm_test(baton::RowPolicy<fp::GemmA>{kGemm.producer_grid(), kGemm, true}, 12, 40);
}

TEST(EmulatorChain, KBlockPolicyGemmA) {
  TimeBound bound(5);
  gemm_test(baton::KBlockPolicy<fp::GemmA>(kGemm.producer_grid(), kGemm), 13, 40);
}

// ColumnPolicy with a transposed consumer: out1 = transpose(out0) * 5 + e. The producer runs
// column-major so that whole columns (one semaphore each) finish first.
TEST(EmulatorChain, ColumnPolicyTransposedConsumer) {
  TimeBound bound(5);
  constexpr int R = 24, C = 20, TM = 8, TN = 6;
  const Grid P{3, 4, 1};
  Chain chain;
  auto a = chain.add_stage("producer", P, ColumnMajor{}, {.reads = {}, .writes = {"out0"}});
  auto b = chain.add_stage("consumer", P.transposed(), RowMajor{}, {.reads = {"out0"}, .writes = {}});
  auto e = chain.add_edge(a, b, baton::ColumnPolicy<fp::Transpose>{P, {}}, deps::transposed(P));
  ASSERT_TRUE(chain.validate().ok());
  std::vector<unsigned char> ws;
  ASSERT_TRUE(chain.workspace_image(0, ws).ok());
  auto A = chain.bind(a, ws.data(), ws.size(), baton::outs(e), baton::ins()).value();
  auto B = chain.bind(b, ws.data(), ws.size(), baton::outs(), baton::ins(e)).value();
  const Mat in = Mat::random(R, C, 5);
  Mat out0(R, C), out1(C, R);
  std::atomic<int> failed{0};
  const std::vector<emu::StageLaunch> launches = {
      {a.index, int(P.size()),
       [&, A](emu::CtaContext& c) {
         const auto t = A.tile();
         write_tile(c, tile_rect(t.tile, TM, TN, R, C), [&](int i, int j) { out0(i, j) = produce(in(i, j), t.epoch); });
         A.post(t);
       }},
      {b.index, int(P.size()),
       [&, B](emu::CtaContext& c) {
         const auto t = B.tile();
         c.random_delay();
         if (!B.wait(t)) {
           ++failed;
           return;
         }
         const Rect r = tile_rect(t.tile, TN, TM, C, R);
         for (int i = r.r0; i < r.r1; ++i)
           for (int j = r.c0; j < r.c1; ++j) out1(i, j) = out0(j, i) * 5u + t.epoch;
       }},
  };
  emu::Emulator em({.sm_slots = 4, .co_schedule = true, .seed = 21, .max_delay_us = 40});
  for (int it = 0; it < 50; ++it) {
    ASSERT_TRUE(em.run_iteration(chain, ws, launches).ok());
    Mat want(C, R);
    for (int i = 0; i < C; ++i)
      for (int j = 0; j < R; ++j) want(i, j) = produce(in(j, i), uint32_t(it)) * 5u + uint32_t(it);
    ASSERT_EQ(compare(out1, want, "out1"), "") << "iteration " << it;
  }
  EXPECT_EQ(failed.load(), 0);
  // One semaphore per producer column, P.m posts per epoch.
  for (int s = 0; s < P.n; ++s) EXPECT_EQ(read_u32(ws, chain.semaphore_offset(0) + 4 * size_t(s)), uint32_t(50 * P.m));
}

// =================================================================================================
// 2. Chains of 3 and 4 stages.
// =================================================================================================

TEST(EmulatorChain, ThreeStagesWithSkipEdge) {
  TimeBound bound(5);
  ThreeStage fx;
  emu::Emulator em({.sm_slots = 4, .co_schedule = true, .seed = 31, .max_delay_us = 30});
  run_and_check(fx, em, 0, 50);
}

TEST(EmulatorChain, ThreeStagesMissingSkipEdgeIsRejected) {
  TimeBound bound(5);
  ThreeStage fx(/*with_ac_edge=*/false);
  baton::status s = fx.chain.validate();
  EXPECT_EQ(s.code(), errc::invalid_chain) << s.to_string();
  EXPECT_NE(s.message().find("'C' reads 'a' written by stage 'A'"), std::string::npos) << s.message();
}

// A -> B -> C -> D: X = produce(in); Y = X W1 (RowPolicy); Z = Y W2 (KBlockPolicy); out = Z*3 + e.
TEST(EmulatorChain, FourStageGemmChain) {
  TimeBound bound(5);
  constexpr int M = 24, K1 = 16, K2 = 24, N3 = 16;
  const fp::GemmA f1{M, K1, 8, 8, 8, 8};   // A tiles 8x8 -> B, B tiles 8x8, k-blocks 8
  const fp::GemmA f2{M, K2, 8, 8, 12, 8};  // B tiles 8x8 -> C, C tiles 12x8, k-blocks 8
  const Grid GA = f1.producer_grid(), GB{3, 3, 1}, GC{2, 2, 1};
  ASSERT_EQ(f2.producer_grid(), GB);
  Chain chain;
  auto a = chain.add_stage("A", GA, RowMajor{}, {.reads = {}, .writes = {"X"}});
  auto b = chain.add_stage("B", GB, RowMajor{}, {.reads = {"X"}, .writes = {"Y"}});
  auto c = chain.add_stage("C", GC, RowMajor{}, {.reads = {"Y"}, .writes = {"Z"}});
  auto d = chain.add_stage("D", GC, baton::Grouped{1}, {.reads = {"Z"}, .writes = {"out"}});
  auto e1 = chain.add_edge(a, b, baton::RowPolicy<fp::GemmA>{GA, f1, false}, deps::gemm_a(f1, GB));
  auto e2 = chain.add_edge(b, c, baton::KBlockPolicy<fp::GemmA>(GB, f2), deps::gemm_a(f2, GC));
  auto e3 = chain.add_edge(c, d, TilePolicy<fp::Identity>{GC, {}}, deps::one_to_one(GC));
  ASSERT_TRUE(chain.validate().ok()) << chain.validate().to_string();
  std::vector<unsigned char> ws;
  ASSERT_TRUE(chain.workspace_image(0, ws).ok());
  auto SA = chain.bind(a, ws.data(), ws.size(), baton::outs(e1), baton::ins()).value();
  auto SB = chain.bind(b, ws.data(), ws.size(), baton::outs(e2), baton::ins(e1)).value();
  auto SC = chain.bind(c, ws.data(), ws.size(), baton::outs(e3), baton::ins(e2)).value();
  auto SD = chain.bind(d, ws.data(), ws.size(), baton::outs(), baton::ins(e3)).value();
  const Mat in = Mat::random(M, K1, 6), W1 = Mat::random(K1, K2, 7), W2 = Mat::random(K2, N3, 8);
  Mat X(M, K1), Y(M, K2), Z(M, N3), O(M, N3);
  std::atomic<int> failed{0};
  // C = A_in * Bm (+ e), tile tm x tn, waiting per k-block of kb.
  auto gemm_body = [&](const auto& S, const Mat& Ain, const Mat& Bm, Mat& Out, int tm, int tn, int kb) {
    return [&, S, tm, tn, kb](emu::CtaContext& cx) {
      const auto t = S.tile();
      const Rect r = tile_rect(t.tile, tm, tn, Out.rows, Out.cols);
      const int w = r.c1 - r.c0;
      std::vector<uint32_t> acc(size_t((r.r1 - r.r0) * w), 0u);
      for (int k = 0; k * kb < Ain.cols; ++k) {
        if (!S.wait(t, k)) {
          ++failed;
          return;
        }
        cx.random_delay();
        for (int i = r.r0; i < r.r1; ++i)
          for (int kk = k * kb; kk < std::min(Ain.cols, (k + 1) * kb); ++kk)
            for (int j = r.c0; j < r.c1; ++j) acc[size_t((i - r.r0) * w + j - r.c0)] += Ain(i, kk) * Bm(kk, j);
      }
      for (int i = r.r0; i < r.r1; ++i)
        for (int j = r.c0; j < r.c1; ++j) Out(i, j) = acc[size_t((i - r.r0) * w + j - r.c0)] + t.epoch;
      if constexpr (std::decay_t<decltype(S)>::num_outputs > 0) S.post(t);
    };
  };
  const std::vector<emu::StageLaunch> launches = {
      {a.index, int(GA.size()),
       [&, SA](emu::CtaContext& cx) {
         const auto t = SA.tile();
         write_tile(cx, tile_rect(t.tile, 8, 8, M, K1), [&](int i, int j) { X(i, j) = produce(in(i, j), t.epoch); });
         SA.post(t);
       }},
      {b.index, int(GB.size()), gemm_body(SB, X, W1, Y, 8, 8, 8)},
      {c.index, int(GC.size()), gemm_body(SC, Y, W2, Z, 12, 8, 8)},
      {d.index, int(GC.size()),
       [&, SD](emu::CtaContext& cx) {
         const auto t = SD.tile();
         cx.random_delay();
         if (!SD.wait(t)) {
           ++failed;
           return;
         }
         const Rect r = tile_rect(t.tile, 12, 8, M, N3);
         for (int i = r.r0; i < r.r1; ++i)
           for (int j = r.c0; j < r.c1; ++j) O(i, j) = Z(i, j) * 3u + t.epoch;
       }},
  };
  emu::Emulator em({.sm_slots = 4, .co_schedule = true, .seed = 41, .max_delay_us = 30});
  for (int it = 0; it < 30; ++it) {
    const uint32_t ep = uint32_t(it);
    ASSERT_TRUE(em.run_iteration(chain, ws, launches).ok());
    Mat wx(M, K1), wy(M, K2), wz(M, N3), wo(M, N3);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < K1; ++j) wx(i, j) = produce(in(i, j), ep);
    auto mm = [](const Mat& A, const Mat& B, Mat& Cm, uint32_t e) {
      for (int i = 0; i < Cm.rows; ++i)
        for (int j = 0; j < Cm.cols; ++j) {
          uint32_t s = 0;
          for (int k = 0; k < A.cols; ++k) s += A(i, k) * B(k, j);
          Cm(i, j) = s + e;
        }
    };
    mm(wx, W1, wy, ep);
    mm(wy, W2, wz, ep);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N3; ++j) wo(i, j) = wz(i, j) * 3u + ep;
    ASSERT_EQ(compare(Y, wy, "Y"), "") << "iteration " << it;
    ASSERT_EQ(compare(Z, wz, "Z"), "") << "iteration " << it;
    ASSERT_EQ(compare(O, wo, "out"), "") << "iteration " << it;
  }
  EXPECT_EQ(failed.load(), 0);
}

// =================================================================================================
// 3. Epochs near the 2^32 wrap-around: semaphores are u32 compared modulo 2^32.
// =================================================================================================

constexpr uint32_t kNearWrap = 0xFFFFFFF0u;

TEST(EmulatorEpochs, ThreeStagesAcrossWrapAround) {
  TimeBound bound(5);
  ThreeStage fx;
  emu::Emulator em({.sm_slots = 4, .co_schedule = true, .seed = 51, .max_delay_us = 20});
  run_and_check(fx, em, kNearWrap, 40);
  // Tickets are u64 (no wrap); semaphores wrapped: 1 post per epoch, start + 40 == 24 (mod 2^32).
  EXPECT_EQ(read_u64(fx.ws, fx.chain.ticket_offset(0)), (uint64_t(kNearWrap) + 40) * 12);
  EXPECT_EQ(read_u32(fx.ws, fx.chain.semaphore_offset(0)), kNearWrap + 40u);
  EXPECT_EQ(kNearWrap + 40u, 24u);
}

TEST(EmulatorEpochs, RowPolicyAcrossWrapAround) {
  TimeBound bound(5);
  GemmChain<baton::RowPolicy<fp::GemmA>> fx(kGemm, kGemmN2, kGemmConsTileN,
                                             baton::RowPolicy<fp::GemmA>{kGemm.producer_grid(), kGemm, false});
  emu::Emulator em({.sm_slots = 4, .co_schedule = true, .seed = 52, .max_delay_us = 20});
  run_and_check(fx, em, kNearWrap, 40);
  // 3 posts per row per epoch: the semaphore wrapped past 2^32 once per epoch count crossing.
  const uint32_t per_row = uint32_t(kGemm.producer_grid().n);
  for (int r = 0; r < kGemm.producer_grid().m; ++r)
    EXPECT_EQ(read_u32(fx.ws, fx.chain.semaphore_offset(0) + 4 * size_t(r)), (kNearWrap + 40u) * per_row);
}

TEST(EmulatorEpochs, KBlockPolicyAcrossWrapAround) {
  TimeBound bound(5);
  GemmChain<baton::KBlockPolicy<fp::GemmA>> fx(kGemm, kGemmN2, kGemmConsTileN,
                                                baton::KBlockPolicy<fp::GemmA>(kGemm.producer_grid(), kGemm));
  emu::Emulator em({.sm_slots = 3, .co_schedule = true, .seed = 53, .max_delay_us = 20});
  run_and_check(fx, em, kNearWrap, 40);
}

// =================================================================================================
// 4. Deadlock without co-scheduling; none with it; an unsound policy gives wrong data.
// =================================================================================================

using IdCopy = CopyChain<TilePolicy<fp::Identity>>;
IdCopy* make_id_copy() {
  return new IdCopy(16, 32, TilePolicy<fp::Identity>{Grid{2, 4, 1}, {}}, deps::one_to_one({2, 4, 1}));
}

TEST(EmulatorDeadlock, ConsumerFirstWithoutCoSchedulingDeadlocksAndIsReported) {
  TimeBound bound(5);
  std::unique_ptr<IdCopy> fx(make_id_copy());
  ASSERT_TRUE(fx->init(0).ok());
  const auto launches = fx->launches();
  emu::Emulator em({.sm_slots = 2, .co_schedule = false, .dispatch = emu::Dispatch::consumer_first, .seed = 0,
                    .max_delay_us = 0, .deadlock_timeout_ms = 100});
  const auto t0 = Clock::now();
  baton::status s = em.run_iteration(fx->chain, fx->ws, launches);
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  ASSERT_EQ(s.code(), errc::deadlock) << s.to_string();
  EXPECT_LT(secs, 2.0);
  const std::string& m = s.message();
  EXPECT_NE(m.find("2 of 2 SM slots held by CTAs of stage 'consumer' spinning (CTAs 0, 1)"), std::string::npos) << m;
  EXPECT_NE(m.find("8 CTAs of stage 'producer' never scheduled"), std::string::npos) << m;
  EXPECT_NE(m.find("6 CTAs of stage 'consumer' never scheduled"), std::string::npos) << m;
  EXPECT_NE(m.find("co-scheduling off"), std::string::npos) << m;
  EXPECT_TRUE(em.last_stats().deadlock);
  EXPECT_EQ(em.last_stats().ctas_run, 2u);       // the two spinning consumers drained
  EXPECT_EQ(em.last_stats().ctas_cancelled, 14u);
  EXPECT_EQ(fx->failed_waits.load(), 2);         // their waits returned false
  // The abort is in the workspace's error record, as the device would see it.
  const baton::ErrorRecord rec = read_record(fx->ws);
  EXPECT_EQ(rec.code, uint32_t(baton::DeviceError::aborted));
  EXPECT_EQ(fx->chain.error_status(rec).code(), errc::deadlock);
  // The workspace is poisoned until re-initialized.
  baton::status again = em.run_iteration(fx->chain, fx->ws, launches);
  EXPECT_EQ(again.code(), errc::deadlock);
  EXPECT_NE(again.message().find("workspace_image"), std::string::npos) << again.message();

  // Same chain, same slots, same adversarial dispatcher, co-scheduling on: correct data.
  ASSERT_TRUE(fx->init(0).ok());
  const auto relaunch = fx->launches();  // bound to the re-initialized workspace
  em.config().co_schedule = true;
  for (int it = 0; it < 5; ++it) {
    ASSERT_TRUE(em.run_iteration(fx->chain, fx->ws, relaunch).ok());
    ASSERT_EQ(fx->check(uint32_t(it)), "");
  }
}

TEST(EmulatorDeadlock, CoSchedulingNeverDeadlocksAcrossSeeds) {
  TimeBound bound(5);
  int runs = 0;
  for (uint64_t seed = 0; seed < 12; ++seed) {
    ThreeStage fx;
    const emu::Dispatch d = seed % 2 ? emu::Dispatch::random : emu::Dispatch::consumer_first;
    emu::Emulator em({.sm_slots = 2, .co_schedule = true, .dispatch = d, .seed = seed, .max_delay_us = 20,
                      .deadlock_timeout_ms = 1000});
    run_and_check(fx, em, uint32_t(seed * 1000), 4);
    if (HasFatalFailure()) return;
    runs += 4;
  }
  EXPECT_EQ(runs, 48);
}

// Without co-scheduling a random dispatcher may deadlock or not; either way the run must end
// quickly and never yield wrong data.
TEST(EmulatorDeadlock, RandomDispatchWithoutCoSchedulingEndsCleanly) {
  TimeBound bound(5);
  int ok = 0, deadlocks = 0;
  for (uint64_t seed = 0; seed < 10; ++seed) {
    std::unique_ptr<IdCopy> fx(make_id_copy());
    ASSERT_TRUE(fx->init(0).ok());
    const auto launches = fx->launches();
    emu::Emulator em({.sm_slots = 2, .co_schedule = false, .dispatch = emu::Dispatch::random, .seed = seed,
                      .max_delay_us = 10, .deadlock_timeout_ms = 60});
    baton::status s = em.run_iteration(fx->chain, fx->ws, launches);
    if (s.ok()) {
      ++ok;
      ASSERT_EQ(fx->check(0), "") << "seed " << seed;
    } else {
      ASSERT_EQ(s.code(), errc::deadlock) << s.to_string();
      ++deadlocks;
    }
  }
  EXPECT_EQ(ok + deadlocks, 10);
  std::printf("[ info ] random dispatch without co-scheduling: %d completed, %d deadlocks detected\n", ok, deadlocks);
}

// Every consumer tile waits on producer tile (0,0) only — "waits on the wrong tile".
struct Origin {
  constexpr int k_blocks() const { return 1; }
  constexpr baton::TileRect rect(Tile t, int) const { return rect_all(t); }
  constexpr baton::TileRect rect_all(Tile t) const { return baton::TileRect{0, 1, 0, 1, t.z, t.z + 1}; }
};

TEST(EmulatorUnsound, WrongTileWaitIsRejectedByCheckerAndCorruptsDataInEmulator) {
  TimeBound bound(5);
  const Grid G{4, 4, 1};
  const TilePolicy<Origin> bad{G, {}};
  // The checker, given the true relation (each consumer tile reads its own producer tile):
  baton::CheckReport rep = baton::check_soundness(bad, deps::one_to_one(G), "copy");
  ASSERT_EQ(rep.result.code(), errc::unsound_policy) << rep.summary();
  ASSERT_TRUE(rep.counterexample.has_value());
  EXPECT_EQ(rep.counterexample->consumer, (Tile{0, 1, 0}));
  {
    Chain honest;
    auto a = honest.add_stage("producer", G, RowMajor{});
    auto b = honest.add_stage("consumer", G, RowMajor{});
    (void)honest.add_edge(a, b, bad, deps::one_to_one(G));
    EXPECT_EQ(honest.validate().code(), errc::unsound_policy);
  }
  // Lie to the checker (declare the policy's own footprint as the relation) and run it: the
  // consumer, walking tiles in reverse, reads tiles whose producer is still writing them.
  std::vector<int> reversed(16);
  for (int i = 0; i < 16; ++i) reversed[size_t(i)] = 15 - i;
  CopyChain<TilePolicy<Origin>, baton::Custom> fx(32, 32, bad, deps::from_footprint(G, G, Origin{}, "a lie"),
                                                  baton::Custom{reversed.data(), 16});
  ASSERT_TRUE(fx.init(0).ok());
  const auto launches = fx.launches();
  emu::Emulator em({.sm_slots = 4, .co_schedule = true, .seed = 61, .max_delay_us = 300});
  int bad_iterations = 0;
  std::string example;
  for (int it = 0; it < 30; ++it) {
    ASSERT_TRUE(em.run_iteration(fx.chain, fx.ws, launches).ok());
    std::string s = fx.check(uint32_t(it));
    if (!s.empty()) {
      ++bad_iterations;
      if (example.empty()) example = s;
    }
  }
  EXPECT_GT(bad_iterations, 0) << "an unsound policy never produced wrong data: is the emulator a stub?";
  std::printf("[ info ] unsound policy: %d of 30 iterations had wrong data, e.g. %s\n", bad_iterations, example.c_str());

  // Control: the sound policy, same orders, delays and seed, is always right.
  CopyChain<TilePolicy<fp::Identity>, baton::Custom> good(32, 32, TilePolicy<fp::Identity>{G, {}}, deps::one_to_one(G),
                                                          baton::Custom{reversed.data(), 16});
  emu::Emulator em2({.sm_slots = 4, .co_schedule = true, .seed = 61, .max_delay_us = 300});
  run_and_check(good, em2, 0, 30);
}

// =================================================================================================
// 5. The watchdog: a wait that can never complete reports stage, tile and semaphore.
// =================================================================================================

// Waits for 2 posts on a semaphore that gets 1 per epoch.
struct TooManyPosts {
  Grid producer{};
  constexpr Grid producer_grid() const { return producer; }
  constexpr int num_semaphores() const { return int(producer.size()); }
  constexpr int post_index(Tile t) const { return producer.linear(t); }
  constexpr int k_blocks() const { return 1; }
  template <class Fn>
  bool for_each_wait(Tile t, int k, Fn&& f) const {
    if (k != 0) return true;
    return f(baton::WaitSpec{producer.linear(t), 2u, 1u});
  }
};
static_assert(baton::SyncPolicy<TooManyPosts>);

// Binds the consumer by hand (validate() would reject TooManyPosts) onto the chain's workspace.
baton::Stage<RowMajor, baton::Outputs<>, baton::Inputs<TooManyPosts>> manual_consumer(IdCopy& fx,
                                                                                      uint64_t watchdog_ns) {
  baton::Stage<RowMajor, baton::Outputs<>, baton::Inputs<TooManyPosts>> s;
  unsigned char* base = fx.ws.data();
  s.grid = fx.G;
  s.ticket = reinterpret_cast<uint64_t*>(base + fx.chain.ticket_offset(fx.b.index));
  s.error = reinterpret_cast<baton::ErrorRecord*>(base + Chain::error_offset());
  s.stage_index = uint32_t(fx.b.index);
  s.watchdog_ns = watchdog_ns;
  auto& in = baton::detail::get<0>(s.in);
  in.policy = TooManyPosts{fx.G};
  in.sems = reinterpret_cast<const uint32_t*>(base + fx.chain.semaphore_offset(fx.e.index));
  in.edge_index = uint32_t(fx.e.index);
  return s;
}

TEST(EmulatorWatchdog, NeverPostedSemaphoreNamesStageTileAndSemaphore) {
  TimeBound bound(5);
  std::unique_ptr<IdCopy> fx(make_id_copy());
  EXPECT_EQ(baton::check_soundness(TooManyPosts{fx->G}, deps::one_to_one(fx->G)).result.code(), errc::invalid_policy);
  ASSERT_TRUE(fx->init(0).ok());
  const std::vector<emu::StageLaunch> launches = {
      {fx->a.index, int(fx->G.size()), fx->producer_body()},
      {fx->b.index, int(fx->G.size()), fx->consumer_body(manual_consumer(*fx, 50'000'000))},  // 50 ms
  };
  // The deadlock detector is slower than the watchdog here, so the watchdog reports.
  emu::Emulator em({.sm_slots = 4, .co_schedule = true, .seed = 71, .max_delay_us = 10, .deadlock_timeout_ms = 3000});
  const auto t0 = Clock::now();
  baton::status s = em.run_iteration(fx->chain, fx->ws, launches);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 2.0);
  ASSERT_EQ(s.code(), errc::watchdog_timeout) << s.to_string();
  EXPECT_FALSE(em.last_stats().deadlock);
  const baton::ErrorRecord rec = read_record(fx->ws);
  EXPECT_EQ(rec.code, uint32_t(baton::DeviceError::watchdog));
  EXPECT_EQ(rec.stage, 1u);
  EXPECT_EQ(rec.edge, 0u);
  EXPECT_EQ(int(rec.semaphore), fx->G.linear(Tile{rec.tile_m, rec.tile_n, rec.tile_z}));
  EXPECT_EQ(rec.expected, 2u);
  EXPECT_EQ(rec.seen, 1u);
  EXPECT_EQ(rec.epoch, 0u);
  const std::string& m = s.message();
  const std::string tile = baton::to_string(Tile{rec.tile_m, rec.tile_n, rec.tile_z});
  EXPECT_NE(m.find("stage 1 'consumer' tile " + tile), std::string::npos) << m;
  EXPECT_NE(m.find("semaphore " + std::to_string(rec.semaphore) + " of edge 0 'producer' -> 'consumer'"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("expected >= 2, seen 1"), std::string::npos) << m;
  // Every consumer drained: one by its watchdog, the others by seeing the error record.
  EXPECT_EQ(fx->failed_waits.load(), int(fx->G.size()));
  EXPECT_EQ(em.last_stats().ctas_run, uint64_t(2 * fx->G.size()));
}

// Without a watchdog, the same hang is caught by the deadlock detector — and co-scheduling being
// on, the report says it is not a scheduling problem.
TEST(EmulatorWatchdog, WithoutWatchdogTheDeadlockDetectorCatchesAnUnsatisfiableWait) {
  TimeBound bound(5);
  std::unique_ptr<IdCopy> fx(make_id_copy());
  ASSERT_TRUE(fx->init(0).ok());
  const std::vector<emu::StageLaunch> launches = {
      {fx->a.index, int(fx->G.size()), fx->producer_body()},
      {fx->b.index, int(fx->G.size()), fx->consumer_body(manual_consumer(*fx, 0))},
  };
  emu::Emulator em({.sm_slots = 4, .co_schedule = true, .seed = 72, .deadlock_timeout_ms = 100});
  baton::status s = em.run_iteration(fx->chain, fx->ws, launches);
  ASSERT_EQ(s.code(), errc::deadlock) << s.to_string();
  EXPECT_NE(s.message().find("4 of 4 SM slots held by CTAs of stage 'consumer' spinning"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("4 CTAs of stage 'consumer' never scheduled"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("unsound policy"), std::string::npos) << s.message();
  EXPECT_EQ(s.message().find("'producer' never scheduled"), std::string::npos) << s.message();
}

// =================================================================================================
// Argument checks.
// =================================================================================================

TEST(EmulatorArgs, BadArgumentsAreStatusesNotCrashes) {
  TimeBound bound(5);
  std::unique_ptr<IdCopy> fx(make_id_copy());
  ASSERT_TRUE(fx->init(0).ok());
  auto launches = fx->launches();
  emu::Emulator em({.sm_slots = 0});
  EXPECT_EQ(em.run_iteration(fx->chain, fx->ws, launches).code(), errc::invalid_argument);
  em.config().sm_slots = 2;
  std::vector<unsigned char> small(16, 0);
  EXPECT_EQ(em.run_iteration(fx->chain, small, launches).code(), errc::workspace_too_small);
  auto swapped = launches;
  std::swap(swapped[0], swapped[1]);
  EXPECT_EQ(em.run_iteration(fx->chain, fx->ws, swapped).code(), errc::invalid_argument);
  auto nobody = launches;
  nobody[1].body = nullptr;
  EXPECT_EQ(em.run_iteration(fx->chain, fx->ws, nobody).code(), errc::invalid_argument);
  // A throwing body becomes a status; the other CTAs drain.
  auto throwing = launches;
  throwing[1].body = [](emu::CtaContext& c) {
    if (c.cta() == 3) throw std::runtime_error("boom");
  };
  baton::status s = em.run_iteration(fx->chain, fx->ws, throwing);
  EXPECT_EQ(s.code(), errc::invalid_argument);
  EXPECT_NE(s.message().find("stage 'consumer' CTA 3 threw: boom"), std::string::npos) << s.message();
  // An empty launch list is a no-op.
  ASSERT_TRUE(fx->init(0).ok());
  EXPECT_TRUE(em.run_iteration(fx->chain, fx->ws, {}).ok());
}

}  // namespace
