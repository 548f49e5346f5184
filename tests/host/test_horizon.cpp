// Host tests for baton/horizon.hpp, the sync warp's protocol: the lanes' horizon against a brute
// force over every wait, and the protocol run for real in the CPU emulator (a sync thread doing
// all 32 lanes, the CTA body as the load thread) under random delays, split-K and the watchdog.
#define BATON_ENABLE_WATCHDOG 1

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "baton/baton.hpp"
#include "baton/emu/emulator.hpp"
#include "baton/horizon.hpp"

namespace {

namespace emu = baton::emu;
namespace fp = baton::footprint;
namespace deps = baton::deps;
using baton::Assignment;
using baton::Chain;
using baton::Grid;
using baton::HorizonLane;
using baton::HorizonTile;
using baton::HorizonWaits;
using baton::HorizonWord;
using baton::RowMajor;
using baton::Tile;

template <class P>
using Consumer = baton::Stage<RowMajor, baton::Outputs<>, baton::Inputs<P>>;

// A consumer stage bound by hand onto a semaphore array.
template <class P>
Consumer<P> bind_by_hand(const P& policy, std::vector<uint32_t>& sems, bool proven_k_local = false) {
  Consumer<P> s;
  auto& in = baton::detail::get<0>(s.in);
  in.policy = policy;
  in.sems = sems.data();
  in.edge_index = 0;
  in.k_local = proven_k_local;  // what Chain::bind copies from the checker's CheckReport::k_local
  s.watchdog_ns = 0;
  return s;
}

// Brute force: the first local k-block of [k_begin, k_begin + count) whose waits are not all
// satisfied. A wait for k-block k also covers later ones, so local k-block 0 of a part that starts
// at k_begin > 0 must also make the waits of every earlier k-block, unless the policy is k-local
// (a built-in per-k-block policy over GemmA: k-block k's waits cover the producer tiles it reads).
template <class P>
int brute_horizon(const P& p, const std::vector<uint32_t>& sems, Assignment a, int k_begin, int count, bool k_local) {
  auto satisfied = [&](int k) {
    return p.for_each_wait(a.tile, k, [&](baton::WaitSpec w) {
      return int32_t(sems[size_t(w.sem)] - (a.epoch * w.per_epoch + w.count)) >= 0;
    });
  };
  for (int local = 0; local < count; ++local) {
    const int last = k_begin + local;
    const int first = (local == 0 && !k_local) ? 0 : last;
    for (int k = first; k <= last; ++k)
      if (!satisfied(k)) return local;
  }
  return count;
}

// One round of the 32 lanes, as the sync warp runs it: the minimum of the lanes' first unproven
// k-block.
template <class P>
int lanes_round(std::vector<HorizonLane<Consumer<P>>>& lanes, const HorizonTile<Consumer<P>>& t) {
  int h = t.count;
  for (auto& l : lanes) h = std::min(h, l.advance(t, 32));
  return h;
}

template <class P>
void check_against_brute_force(const P& policy, bool k_local, Grid consumer, uint32_t seed, bool proven_k_local = false) {
  std::mt19937 rng(seed);
  const Grid pg = policy.producer_grid();
  std::vector<uint32_t> sems(size_t(policy.num_semaphores()), 0u);
  Consumer<P> s = bind_by_hand(policy, sems, proven_k_local);
  const int kb = policy.k_blocks();
  for (int trial = 0; trial < 200; ++trial) {
    const Tile tile{int(rng() % uint32_t(consumer.m)), int(rng() % uint32_t(consumer.n)), 0};
    const uint32_t epoch = rng() % 3;
    const int parts = 1 + int(rng() % 4);
    const int part = int(rng() % uint32_t(parts));
    const int base = kb / parts, rem = kb % parts;
    const int k_begin = part * base + std::min(part, rem), count = base + (part < rem ? 1 : 0);
    if (count == 0) continue;
    // Producer tiles posted in a random order, one at a time (every post of the epoch before).
    std::vector<int> order(size_t(pg.size()));
    for (size_t i = 0; i < order.size(); ++i) order[i] = int(i);
    std::shuffle(order.begin(), order.end(), rng);
    std::fill(sems.begin(), sems.end(), 0u);
    for (int t = 0; t < pg.size(); ++t)  // epochs before this one: every tile posted
      for (uint32_t e = 0; e < epoch; ++e) sems[size_t(policy.post_index(pg.tile(t)))] += 1;
    HorizonTile<Consumer<P>> ht{&s, Assignment{tile, 0, epoch}, k_begin, count};
    std::vector<HorizonLane<Consumer<P>>> lanes(32);
    for (int l = 0; l < 32; ++l) lanes[size_t(l)].next = l;
    int last_h = 0;
    for (size_t posted = 0; posted <= order.size(); ++posted) {
      const int h = lanes_round(lanes, ht);
      const int want = brute_horizon(policy, sems, ht.assignment, k_begin, count, k_local);
      ASSERT_EQ(h, want) << "trial " << trial << " tile " << baton::to_string(tile) << " k_begin " << k_begin
                         << " count " << count << " after " << posted << " posts";
      ASSERT_GE(h, last_h) << "the horizon went back";
      last_h = h;
      if (posted < order.size()) sems[size_t(policy.post_index(pg.tile(order[posted])))] += 1;
    }
    EXPECT_EQ(last_h, count);
  }
}

// Ragged GEMM shapes: M = 37, K = 45 (producer N), producer tiles 8x16 (grid 5x3), consumer
// tiles 16 rows with k-blocks of 8 (6 k-blocks): a consumer row spans 2-3 producer rows, a
// k-block 1-2 producer columns.
constexpr fp::GemmA kGemm{37, 45, 8, 16, 16, 8};
const Grid kConsumer{3, 2, 1};

TEST(HorizonLanes, KBlockPolicyMatchesBruteForce) {
  check_against_brute_force(baton::KBlockPolicy<fp::GemmA>(kGemm.producer_grid(), kGemm), true, kConsumer, 1);
}
TEST(HorizonLanes, RowPolicyPerTileMatchesBruteForce) {
  check_against_brute_force(baton::RowPolicy<fp::GemmA>{kGemm.producer_grid(), kGemm, false}, false, kConsumer, 2);
}
TEST(HorizonLanes, RowPolicyPerKBlockMatchesBruteForce) {
  check_against_brute_force(baton::RowPolicy<fp::GemmA>{kGemm.producer_grid(), kGemm, true}, true, kConsumer, 3);
}
TEST(HorizonLanes, GroupPolicyMatchesBruteForce) {
  check_against_brute_force(baton::GroupPolicy<fp::GemmA>{kGemm.producer_grid(), kGemm, 2, 2, true}, true, kConsumer, 4);
}
// Not k-local (per tile: every wait at k-block 0): a split part that starts later still makes them.
TEST(HorizonLanes, GroupPolicyPerTileSplitMakesThePrefixWaits) {
  check_against_brute_force(baton::GroupPolicy<fp::GemmA>{kGemm.producer_grid(), kGemm, 2, 2, false}, false, kConsumer, 6);
}
// A footprint the horizon cannot see through (not a GemmA: conv halos, batonc's AffineFootprint):
// the same reads as kGemm, so its per-k-block policy is k-local, but only the checker's proof
// (InEdge::k_local) lets a split part skip the prefix waits.
struct OpaqueGemmA {
  fp::GemmA f;
  int k_blocks() const { return f.k_blocks(); }
  baton::TileRect rect(Tile t, int k) const { return f.rect(t, k); }
  baton::TileRect rect_all(Tile t) const { return f.rect_all(t); }
};
TEST(HorizonLanes, OpaqueFootprintMakesThePrefixWaitsUnlessProvenKLocal) {
  const baton::KBlockPolicy<OpaqueGemmA> p{kGemm.producer_grid(), OpaqueGemmA{kGemm}};
  check_against_brute_force(p, /*k_local=*/false, kConsumer, 7);
  check_against_brute_force(p, /*k_local=*/true, kConsumer, 8, /*proven_k_local=*/true);
}
// The checker's CheckReport::k_local: per-k-block policies over their exact reads are k-local,
// per-tile ones (every wait at k-block 0) and ones that wait for later k-blocks' reads early are not.
TEST(HorizonLanes, CheckerProvesKLocal) {
  const auto rel = deps::gemm_a(kGemm, kConsumer);
  const auto kb = baton::check_soundness(baton::KBlockPolicy<OpaqueGemmA>{kGemm.producer_grid(), OpaqueGemmA{kGemm}}, rel);
  ASSERT_TRUE(kb.sound()) << kb.summary();
  EXPECT_TRUE(kb.k_local);
  const auto row_k = baton::check_soundness(baton::RowPolicy<fp::GemmA>{kGemm.producer_grid(), kGemm, true}, rel);
  ASSERT_TRUE(row_k.sound()) << row_k.summary();
  EXPECT_TRUE(row_k.k_local);
  const auto tile = baton::check_soundness(baton::TilePolicy<fp::GemmA>{kGemm.producer_grid(), kGemm, false}, rel);
  ASSERT_TRUE(tile.sound()) << tile.summary();
  EXPECT_FALSE(tile.k_local);  // k-block 1's reads are covered by k-block 0's waits only
  // Sound but not local: k-block k waits for what k-blocks k and k + 1 read.
  struct Early {
    fp::GemmA f;
    int k_blocks() const { return f.k_blocks(); }
    baton::TileRect rect(Tile t, int k) const {
      baton::TileRect a = f.rect(t, k);
      if (k + 1 < f.k_blocks()) {
        const baton::TileRect b = f.rect(t, k + 1);
        a.m0 = std::min(a.m0, b.m0), a.m1 = std::max(a.m1, b.m1);
        a.n0 = std::min(a.n0, b.n0), a.n1 = std::max(a.n1, b.n1);
        a.z0 = std::min(a.z0, b.z0), a.z1 = std::max(a.z1, b.z1);
      }
      return a;
    }
    baton::TileRect rect_all(Tile t) const { return f.rect_all(t); }
  };
  // Shifted: k-block k waits only for what k-block k + 1 reads (k-block 0 also for its own).
  struct Shifted {
    fp::GemmA f;
    int k_blocks() const { return f.k_blocks(); }
    baton::TileRect rect(Tile t, int k) const {
      if (k == 0) return Early{f}.rect(t, 0);
      return k + 1 < f.k_blocks() ? f.rect(t, k + 1) : baton::TileRect{};
    }
    baton::TileRect rect_all(Tile t) const { return f.rect_all(t); }
  };
  const auto early = baton::check_soundness(baton::KBlockPolicy<Early>{kGemm.producer_grid(), Early{kGemm}}, rel);
  ASSERT_TRUE(early.sound()) << early.summary();
  EXPECT_TRUE(early.k_local);  // a superset of each k-block's own reads is still local
  const auto shifted = baton::check_soundness(baton::KBlockPolicy<Shifted>{kGemm.producer_grid(), Shifted{kGemm}}, rel);
  ASSERT_TRUE(shifted.sound()) << shifted.summary();
  EXPECT_FALSE(shifted.k_local);  // k-block k's reads were waited for at k - 1 only
}
// More k-blocks than lanes: 70 k-blocks, every lane owns two or three.
TEST(HorizonLanes, MoreKBlocksThanLanes) {
  constexpr fp::GemmA wide{20, 70 * 8, 8, 16, 16, 8};
  check_against_brute_force(baton::KBlockPolicy<fp::GemmA>(wide.producer_grid(), wide), true, Grid{2, 1, 1}, 5);
}

// HorizonTile::publish_ahead: the sync lanes (run_sync_lanes<32> on their own thread) publish the
// proven k-blocks of [0, 32) past the prefix, and a loader that takes them with first_proven (the
// lowest proven one not yet issued, over [0, window), then the rest in order with wait()) never takes
// a k-block before every producer tile it reads is posted, takes each exactly once, and, with the
// producer tiles posted in a random order, takes some out of order. 40 k-blocks (more than the
// 32-bit window), producer tiles posted one at a time by another thread.
TEST(HorizonAhead, PublishedKBlocksAreTakenFirstAndNeverEarly) {
  constexpr fp::GemmA wide{16, 40 * 8, 16, 8, 16, 8};  // one producer tile per k-block
  const auto policy = baton::KBlockPolicy<fp::GemmA>(wide.producer_grid(), wide);
  const Grid pg = policy.producer_grid();
  const int count = policy.k_blocks();
  ASSERT_EQ(count, 40);
  uint64_t reordered_trials = 0;
  for (uint32_t trial = 0; trial < 30; ++trial) {
    std::vector<uint32_t> sems(size_t(policy.num_semaphores()), 0u);
    auto s = bind_by_hand(policy, sems);
    HorizonWord word;
    HorizonTile<decltype(s)> t{&s, Assignment{Tile{0, 0, 0}, 0, 0}, 0, count, /*publish_ahead=*/true};
    std::vector<int> order(size_t(pg.size()));
    for (size_t i = 0; i < order.size(); ++i) order[i] = int(i);
    std::mt19937 rng(100 + trial);
    std::shuffle(order.begin(), order.end(), rng);
    std::thread sync([&] { baton::run_sync_lanes<32>(t, &word, 0); });
    std::thread poster([&] {
      for (int i : order) {
        std::this_thread::sleep_for(std::chrono::microseconds(rng() % 200));
        std::atomic_ref<uint32_t>(sems[size_t(policy.post_index(pg.tile(i)))]).fetch_add(1, std::memory_order_release);
      }
    });
    // Is every wait of k-block k satisfied now? (Semaphores only grow: true once is true for good.)
    auto satisfied = [&](int k) {
      return policy.for_each_wait(Tile{0, 0, 0}, k, [&](baton::WaitSpec w) {
        return int32_t(std::atomic_ref<uint32_t>(sems[size_t(w.sem)]).load(std::memory_order_acquire) - w.count) >= 0;
      });
    };
    HorizonWaits w{&word.ready, 0, &word.ahead};
    const int window = count - 1 < 32 ? count - 1 : 32;  // the last k-block (a diagonal) stays last
    std::vector<int> taken;
    uint32_t issued = 0;
    for (int n = 0; n < window; ++n) {
      int k;
      while ((k = w.first_proven(issued, window)) < 0) w.pause();
      ASSERT_TRUE(satisfied(k)) << "trial " << trial << ": k-block " << k << " taken before its producer tile was posted";
      issued |= 1u << k;
      taken.push_back(k);
    }
    for (int k = window; k < count; ++k) {
      w.wait(k);
      ASSERT_TRUE(satisfied(k)) << "trial " << trial << ": k-block " << k << " taken before its producer tile was posted";
      taken.push_back(k);
    }
    poster.join();
    sync.join();
    ASSERT_EQ(word.failed, 0u);
    std::vector<int> sorted = taken;
    std::sort(sorted.begin(), sorted.end());
    for (int k = 0; k < count; ++k) ASSERT_EQ(sorted[size_t(k)], k) << "trial " << trial << ": a k-block taken twice or never";
    EXPECT_EQ(word.ahead, 0xffffffffu) << "every k-block of the window ends proven";
    if (!std::is_sorted(taken.begin(), taken.end())) ++reordered_trials;
  }
  EXPECT_GT(reordered_trials, 0u) << "random post orders should let the loader take some k-blocks out of order";
}

// Without publish_ahead the word's ahead bits stay 0 (the GEMMs' horizon is unchanged).
TEST(HorizonAhead, OffByDefault) {
  const auto policy = baton::KBlockPolicy<fp::GemmA>(kGemm.producer_grid(), kGemm);
  std::vector<uint32_t> sems(size_t(policy.num_semaphores()), 1u);  // everything posted
  auto s = bind_by_hand(policy, sems);
  HorizonWord word;
  HorizonTile<decltype(s)> t{&s, Assignment{Tile{0, 0, 0}, 0, 0}, 0, policy.k_blocks()};
  baton::run_sync_lanes<32>(t, &word, 0);
  EXPECT_EQ(word.ready, uint32_t(policy.k_blocks()));
  EXPECT_EQ(word.ahead, 0u);
}

// A satisfied wait is not loaded again: a lane stuck on its k-block's second wait re-polls only it.
TEST(HorizonLanes, RePollsOnlyPendingWaits) {
  // A consumer tile of 16 rows over producer rows of 8: each k-block waits on two producer tiles.
  const auto policy = baton::KBlockPolicy<fp::GemmA>(kGemm.producer_grid(), kGemm);
  std::vector<uint32_t> sems(size_t(policy.num_semaphores()), 0u);
  auto s = bind_by_hand(policy, sems);
  HorizonTile<decltype(s)> t{&s, Assignment{Tile{0, 0, 0}, 0, 0}, 0, policy.k_blocks()};
  HorizonLane<decltype(s)> lane;
  lane.next = 0;
  const Grid pg = policy.producer_grid();
  sems[size_t(pg.linear(Tile{0, 0, 0}))] = 1;  // the first of k-block 0's two waits
  EXPECT_EQ(lane.advance(t, 32), 0);
  EXPECT_EQ(lane.proven, 1);
  EXPECT_EQ(lane.pending_sem, uint32_t(pg.linear(Tile{1, 0, 0})));
  EXPECT_EQ(lane.pending_target, 1u);
  EXPECT_EQ(lane.pending_seen, 0u);
  EXPECT_EQ(lane.pending_k, 0);
  sems[size_t(pg.linear(Tile{0, 0, 0}))] = 0;  // (never happens: posts only grow) not re-read
  sems[size_t(pg.linear(Tile{1, 0, 0}))] = 1;
  EXPECT_EQ(lane.advance(t, 32), 32);  // k-block 0 proven; the lane's next is 32 (past the 6)
}

// =================================================================================================
// The protocol in the emulator: producer GEMM tiles post; consumer CTAs (split-K parts) run a sync
// thread (run_sync_lanes<32>) and load k-blocks as the horizon allows, checking every element they
// read was written in this epoch.
// =================================================================================================

uint32_t produce(int i, int j, uint32_t epoch) { return uint32_t(i) * 7919u + uint32_t(j) * 104729u + epoch * 31u + 1u; }

template <class P>
struct HorizonChain {
  fp::GemmA f;
  Grid PG, CG;
  int parts;
  Chain chain;
  baton::StageRef<RowMajor> a, b;
  baton::EdgeRef<P> e;
  std::vector<unsigned char> ws;
  std::vector<uint32_t> X;  // [rows, cols], written by the producer
  std::atomic<uint64_t> wrong{0}, reads{0}, failed{0};

  HorizonChain(fp::GemmA footprint, Grid consumer, int split, P policy)
      : f(footprint), PG(f.producer_grid()), CG(consumer), parts(split), X(size_t(f.rows) * size_t(f.cols), 0u) {
    a = chain.add_stage("gemm1", PG, RowMajor{}, {.reads = {}, .writes = {"X"}});
    b = chain.add_stage("gemm2", CG, RowMajor{}, {.reads = {"X"}, .writes = {}});
    e = chain.add_edge(a, b, policy, deps::gemm_a(f, CG));
  }
  std::vector<emu::StageLaunch> launches(uint64_t watchdog_ns = 0) {
    auto A = chain.bind(a, ws.data(), ws.size(), baton::outs(e), baton::ins()).value();
    baton::BindOptions ob;
    ob.watchdog_ns = watchdog_ns;
    auto B = chain.bind(b, ws.data(), ws.size(), baton::outs(), baton::ins(e), ob).value();
    emu::Body pa = [this, A](emu::CtaContext& c) {
      const auto t = A.tile();
      const int r0 = t.tile.m * f.prod_tile_m, r1 = std::min(f.rows, r0 + f.prod_tile_m);
      const int c0 = t.tile.n * f.prod_tile_n, c1 = std::min(f.cols, c0 + f.prod_tile_n);
      for (int i = r0; i < r1; ++i) {
        if (i == (r0 + r1) / 2) c.random_delay();  // a torn tile if read early
        for (int j = c0; j < c1; ++j) std::atomic_ref<uint32_t>(X[size_t(i) * f.cols + j]).store(produce(i, j, t.epoch), std::memory_order_relaxed);
      }
      A.post(t);
    };
    emu::Body pb = [this, B](emu::CtaContext& c) {
      uint32_t part = 0;
      const Assignment as = B.acquire_tile_leader(uint32_t(parts), &part);
      const int kb = f.k_blocks(), base = kb / parts, rem = kb % parts;
      const int k_begin = int(part) * base + std::min(int(part), rem), count = base + (int(part) < rem ? 1 : 0);
      if (count == 0) return;
      HorizonWord word;
      using S = decltype(B);
      const HorizonTile<S> t{&B, as, k_begin, count};
      std::thread sync([&] { baton::run_sync_lanes<32>(t, &word, 0); });
      HorizonWaits w{&word.ready};
      const int r0 = as.tile.m * f.cons_tile_m, r1 = std::min(f.rows, r0 + f.cons_tile_m);
      for (int local = 0; local < count; ++local) {
        w.wait(local);
        w.fence_for_tma_reads();
        if (std::atomic_ref<uint32_t>(word.failed).load(std::memory_order_relaxed)) break;
        if ((local & 1) == 0) c.random_delay();
        const int k0 = (k_begin + local) * f.cons_tile_k, k1 = std::min(f.cols, k0 + f.cons_tile_k);
        uint64_t bad = 0, n = 0;
        for (int i = r0; i < r1; ++i)
          for (int j = k0; j < k1; ++j, ++n)
            bad += std::atomic_ref<uint32_t>(X[size_t(i) * f.cols + j]).load(std::memory_order_relaxed) !=
                   produce(i, j, as.epoch);
        wrong += bad;
        reads += n;
      }
      sync.join();
      if (word.failed) ++failed;
    };
    return {{a.index, int(PG.size()), pa}, {b.index, int(CG.size()) * parts, pb}};
  }
};

template <class P>
void run_horizon_chain(P policy, int parts, uint64_t seed, int iters) {
  HorizonChain<P> fx(kGemm, kConsumer, parts, policy);
  ASSERT_TRUE(fx.chain.validate().ok());
  ASSERT_TRUE(fx.chain.workspace_image(0, fx.ws).ok());
  const auto launches = fx.launches();
  emu::Emulator em({.sm_slots = 4, .co_schedule = true, .seed = seed, .max_delay_us = 30});
  for (int it = 0; it < iters; ++it) {
    const baton::status s = em.run_iteration(fx.chain, fx.ws, launches);
    ASSERT_TRUE(s.ok()) << "iteration " << it << ": " << s.to_string();
  }
  EXPECT_EQ(fx.wrong.load(), 0u) << "elements read before their producer tile posted them";
  EXPECT_EQ(fx.failed.load(), 0u);
  // Every consumer read every element of its rows once per epoch.
  EXPECT_EQ(fx.reads.load(), uint64_t(iters) * uint64_t(kGemm.rows) * uint64_t(kGemm.cols) * uint64_t(kConsumer.n));
}

TEST(HorizonEmulator, KBlockPolicy) {
  run_horizon_chain(baton::KBlockPolicy<fp::GemmA>(kGemm.producer_grid(), kGemm), 1, 21, 40);
}
TEST(HorizonEmulator, KBlockPolicySplitK) {
  run_horizon_chain(baton::KBlockPolicy<fp::GemmA>(kGemm.producer_grid(), kGemm), 4, 22, 40);
}
TEST(HorizonEmulator, RowPolicyPerTile) {
  run_horizon_chain(baton::RowPolicy<fp::GemmA>{kGemm.producer_grid(), kGemm, false}, 1, 23, 40);
}
TEST(HorizonEmulator, RowPolicyPerKBlockSplitK) {
  run_horizon_chain(baton::RowPolicy<fp::GemmA>{kGemm.producer_grid(), kGemm, true}, 3, 24, 40);
}

// The sync lanes' watchdog: a consumer whose producer never runs. The lane stuck at the horizon
// names the tile, k-block and semaphore; the horizon jumps to the end with `failed` set, so the
// load thread drains instead of hanging.
TEST(HorizonEmulator, WatchdogNamesTheStuckWaitAndReleasesTheLoadThread) {
  const auto policy = baton::KBlockPolicy<fp::GemmA>(kGemm.producer_grid(), kGemm);
  std::vector<uint32_t> sems(size_t(policy.num_semaphores()), 0u);
  auto s = bind_by_hand(policy, sems);
  baton::ErrorRecord rec{};
  s.error = &rec;
  s.watchdog_ns = 20'000'000;  // 20 ms
  s.stage_index = 1;
  // Everything but producer tile (1, 2) posted: consumer tile (0, 0) reads it from k-block 4 on.
  const Grid pg = policy.producer_grid();
  for (int t = 0; t < pg.size(); ++t) sems[size_t(t)] = 1;
  sems[size_t(pg.linear(Tile{1, 2, 0}))] = 0;
  HorizonWord word;
  const HorizonTile<decltype(s)> t{&s, Assignment{Tile{0, 1, 0}, 0, 0}, 0, policy.k_blocks()};
  const auto t0 = std::chrono::steady_clock::now();
  std::thread sync([&] { baton::run_sync_lanes<32>(t, &word, 0); });
  HorizonWaits w{&word.ready};
  w.wait(3);  // k-blocks 0-3 read producer columns 0 and 1, all posted
  EXPECT_EQ(word.failed, 0u);
  w.wait(policy.k_blocks() - 1);  // returns once the watchdog fired
  sync.join();
  const double s_elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s_elapsed, 2.0);
  EXPECT_EQ(word.failed, 1u);
  EXPECT_EQ(word.ready, uint32_t(policy.k_blocks()));
  EXPECT_EQ(rec.code, uint32_t(baton::DeviceError::watchdog));
  EXPECT_EQ(rec.stage, 1u);
  EXPECT_EQ(rec.tile_m, 0);
  EXPECT_EQ(rec.tile_n, 1);
  EXPECT_EQ(rec.k_block, 4);
  EXPECT_EQ(rec.semaphore, uint32_t(pg.linear(Tile{1, 2, 0})));
  EXPECT_EQ(rec.expected, 1u);
  EXPECT_EQ(rec.seen, 0u);
}

// Another wait's watchdog (the chain's error record set) makes the sync lanes bail too.
TEST(HorizonEmulator, ChainErrorReleasesTheLoadThread) {
  const auto policy = baton::RowPolicy<fp::GemmA>{kGemm.producer_grid(), kGemm, false};
  std::vector<uint32_t> sems(size_t(policy.num_semaphores()), 0u);
  auto s = bind_by_hand(policy, sems);
  baton::ErrorRecord rec{};
  s.error = &rec;
  HorizonWord word;
  const HorizonTile<decltype(s)> t{&s, Assignment{Tile{2, 0, 0}, 0, 0}, 0, policy.k_blocks()};
  std::thread sync([&] { baton::run_sync_lanes<32>(t, &word, 0); });
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(std::atomic_ref<uint32_t>(word.ready).load(), 0u);  // nothing posted: nothing proven
  std::atomic_ref<uint32_t>(rec.code).store(uint32_t(baton::DeviceError::watchdog));
  HorizonWaits w{&word.ready};
  w.wait(policy.k_blocks() - 1);
  sync.join();
  EXPECT_EQ(word.failed, 1u);
}

}  // namespace
