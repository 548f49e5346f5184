// Host tests of baton::ops::Conv2dChain's host side (baton/ops/conv/conv_chain.hpp) and of its
// waiting protocol in the CPU emulator:
//   * validate_conv_chain: every shape the kernels cannot take is refused with the field named;
//   * plan_conv_chain: split-K per convolution (one wave, >= 3 k-blocks a part, at most 8), the
//     policy (none, conv2 PDL-launched, unless asked), requests kept or refused;
//   * the chain as the op builds it (batonc's tile policy over conv_chain.baton's footprint, per tile
//     and per k-block, proven by Chain::validate against deps::conv_exact) run in the emulator: conv1
//     CTAs write their [128 pixel x 64 channel] tiles with a random delay in the middle (a torn tile
//     if read early) and post; conv2 CTAs (split-K parts) run the sync lanes (run_sync_lanes<32>, the
//     kernel's sync warp) and load k-block (r, s, cb) as the horizon allows, reading exactly what the
//     im2col TMA box of that k-block reads (each output pixel's input pixel shifted by (r-1, s-1),
//     in bounds, channels of block cb), checking every element was written in this epoch;
//   * cuSync's same-tile conv policy (consumer tile m waits for producer row m only) in the same
//     emulator reads rows of the halo before they are written, and the checker refuses it.
#define BATON_ENABLE_WATCHDOG 1

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "baton/baton.hpp"
#include "baton/emu/emulator.hpp"
#include "baton/horizon.hpp"
#include "baton/ops/conv/conv_chain.hpp"
#include "baton/ops/conv/conv_chain_policies.hpp"

namespace {

using namespace baton;
using ops::ConvBlock;
using ops::ConvChainPolicy;
namespace gen = baton::ops::conv_gen;

ops::ConvChainShape resnet(int n, int h, int w, int c) { return {n, h, w, c, c, ConvBlock::resnet_basic}; }

// ---- validation -----------------------------------------------------------------------------------

TEST(ConvChainPlan, RefusesWhatTheKernelsCannotTake) {
  struct Bad {
    ops::ConvChainShape s;
    errc code;
    const char* mentions;
  };
  auto with = [](auto edit) {
    ops::ConvChainShape s = resnet(1, 56, 56, 64);
    edit(s);
    return s;
  };
  const Bad cases[] = {
      {with([](auto& s) { s.c = s.k = 12; }), errc::not_supported, "multiples of 8"},
      {with([](auto& s) { s.block = ConvBlock::vgg_pair; s.k = 20; }), errc::not_supported, "multiples of 8"},
      {with([](auto& s) { s.stride = 2; }), errc::not_supported, "stride 1, pad 1"},
      {with([](auto& s) { s.pad = 0; }), errc::not_supported, "stride 1, pad 1"},
      {with([](auto& s) { s.k = 128; }), errc::invalid_argument, "c must equal k"},
      {with([](auto& s) { s.n = 0; }), errc::invalid_argument, ">= 1"},
      {with([](auto& s) { s.h = -3; }), errc::invalid_argument, ">= 1"},
      {with([](auto& s) { s.n = 1 << 20; s.h = s.w = 1024; }), errc::not_supported, "2^30"},
  };
  for (const Bad& b : cases) {
    const status st = ops::validate_conv_chain(b.s);
    EXPECT_EQ(st.code(), b.code) << b.s.str() << ": " << st.to_string();
    EXPECT_NE(st.to_string().find(b.mentions), std::string::npos) << st.to_string();
    EXPECT_NE(st.to_string().find(b.s.str()), std::string::npos) << "the message names the shape: " << st.to_string();
    EXPECT_FALSE(ops::plan_conv_chain(b.s, 132).ok());
  }
  EXPECT_TRUE(ops::validate_conv_chain({1, 7, 7, 8, 40, ConvBlock::vgg_pair}).ok());
}

TEST(ConvChainPlan, RequestsAreCheckedAndKept) {
  const auto s = resnet(1, 7, 7, 512);  // 72 k-blocks per convolution
  ops::ConvChainOptions o;
  o.split_k1 = 73;
  auto p = ops::plan_conv_chain(s, 132, o);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().to_string().find("split_k1 = 73 must be in [1, 72]"), std::string::npos) << p.error().to_string();
  o = {};
  o.split_k2 = 0;
  EXPECT_FALSE(ops::plan_conv_chain(s, 132, o).ok());
  o = {};
  o.group_m = 0;
  EXPECT_FALSE(ops::plan_conv_chain(s, 132, o).ok());
  o = {};
  o.policy = ConvChainPolicy::kblock;
  o.launch = ops::ConvLaunch::serial;
  p = ops::plan_conv_chain(s, 132, o);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().to_string().find("launch is for policy none"), std::string::npos);
  o = {};
  o.policy = ConvChainPolicy::tile;
  o.split_k1 = 5;
  o.split_k2 = 2;
  o.group_m = 3;
  p = ops::plan_conv_chain(s, 132, o);
  ASSERT_TRUE(p.ok()) << p.error().to_string();
  EXPECT_EQ(p.value().policy, ConvChainPolicy::tile);
  EXPECT_EQ(p.value().split_k1, 5);
  EXPECT_EQ(p.value().split_k2, 2);
  EXPECT_EQ(p.value().group_m, 3);
  EXPECT_NE(p.value().log_line().find("policy tile, split-K 5/2, Grouped{3}"), std::string::npos) << p.value().log_line();
  EXPECT_FALSE(ops::plan_conv_chain(s, 0).ok());
}

TEST(ConvChainPlan, SplitKWhereTheKBlocksSavedOutweighTheSplit) {
  // The most parts: one tile, 72 k-blocks: 8 (the cap); 25 tiles, 9 k-blocks: 3 (>= 3 k-blocks each);
  // 25 tiles, 18 k-blocks: 5 (132 / 25); more tiles than SMs or too few k-blocks: 1.
  EXPECT_EQ(ops::conv_split_k_max(1, 72, 132), 8);
  EXPECT_EQ(ops::conv_split_k_max(25, 9, 132), 3);
  EXPECT_EQ(ops::conv_split_k_max(25, 18, 132), 5);
  EXPECT_EQ(ops::conv_split_k_max(200, 72, 132), 1);
  EXPECT_EQ(ops::conv_split_k_max(8, 5, 132), 1);
  // What the split costs decides: 72 k-blocks over 8 parts save 63 (~12 us) and are split; 9 or 18
  // k-blocks (3x3 over 64 or 128 channels) save less than the split costs and are not.
  EXPECT_EQ(ops::conv_split_k(1, 72, 132), 8);
  EXPECT_EQ(ops::conv_split_k(25, 9, 132), 1);
  EXPECT_EQ(ops::conv_split_k(14, 18, 132), 1);
  // The split-K tuning kept on the H200 (run 56, conv-resnet38.csv / conv-vgg19.csv, `baton-auto`
  // rows: tuning timed the planned split against none and kept the faster), at every shape where the
  // two differ by more than the 2% margin. ResNet 64@56 and 128@28 at N = 1-4 ran unsplit 17-46%
  // faster than split 2-6 ways; 256@14, 512@7 and VGG's 512@14 / 512@28 kept their splits.
  struct Kept { int n, c, hw, split; };
  for (const Kept& k : {Kept{1, 64, 56, 1}, Kept{2, 64, 56, 1}, Kept{1, 128, 28, 1}, Kept{2, 128, 28, 1},
                        Kept{4, 128, 28, 1}, Kept{1, 256, 14, 8}, Kept{2, 256, 14, 8}, Kept{4, 256, 14, 4},
                        Kept{1, 512, 7, 8}, Kept{8, 512, 7, 4}, Kept{16, 512, 7, 2}, Kept{1, 512, 28, 2},
                        Kept{1, 512, 14, 8}, Kept{2, 512, 14, 4}, Kept{4, 512, 14, 2}, Kept{1, 256, 56, 1},
                        // an H100 (run 101): 160@20 split 8 and 4 ways 8.5% and 3.7% faster, 72@33 and
                        // 96@40 (18 k-blocks) unsplit
                        Kept{1, 160, 20, 8}, Kept{3, 160, 20, 4}, Kept{1, 72, 33, 1}, Kept{1, 96, 40, 1}}) {
    auto p = ops::plan_conv_chain(resnet(k.n, k.hw, k.hw, k.c), 132);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p.value().split_k1, k.split) << p.value().log_line();
    EXPECT_EQ(p.value().split_k2, k.split) << p.value().log_line();
  }
  // Over a dense sweep of shapes: every part has >= 3 k-blocks (or there is one part), the CTAs
  // fit one wave when split, the split is in [1, 8] and never more than the most parts.
  for (int n : {1, 2, 3, 4, 8, 16, 32})
    for (int c : {8, 24, 64, 96, 128, 160, 200, 256, 320, 512})
      for (int hw : {1, 7, 9, 14, 28, 33, 56, 112}) {
        const auto s = resnet(n, hw, hw, c);
        auto p = ops::plan_conv_chain(s, 132);
        ASSERT_TRUE(p.ok()) << s.str();
        const int tiles = s.grid().size();
        for (auto [split, kb] : {std::pair{p.value().split_k1, s.k_blocks1()}, std::pair{p.value().split_k2, s.k_blocks2()}}) {
          EXPECT_GE(split, 1);
          EXPECT_LE(split, ops::conv_split_k_max(tiles, kb, 132));
          if (split > 1) {
            EXPECT_GE(kb / split, 3) << s.str();
            EXPECT_LE(tiles * split, 132) << s.str();
          }
        }
      }
}

TEST(ConvChainPlan, NoWaitsUnlessAsked) {
  // ResNet 64@56, batch 1: 25 tiles, one wave; batch 32: 784 tiles, several waves. Either way no
  // semaphores, conv2 PDL-launched (the waits measured 1.10-1.32x slower at every size on the H200).
  for (int n : {1, 32}) {
    auto p = ops::plan_conv_chain(resnet(n, 56, 56, 64), 132);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p.value().policy, ConvChainPolicy::none) << p.value().log_line();
    EXPECT_EQ(p.value().launch, ops::ConvLaunch::pdl);
    EXPECT_NE(p.value().reason.find(n == 1 ? "one wave" : "waves"), std::string::npos) << p.value().reason;
  }
  // Asked policies are kept whatever the waves.
  for (auto asked : {ConvChainPolicy::tile, ConvChainPolicy::kblock}) {
    ops::ConvChainOptions o;
    o.policy = asked;
    for (int n : {1, 32}) {
      auto p = ops::plan_conv_chain(resnet(n, 56, 56, 64), 132, o);
      ASSERT_TRUE(p.ok());
      EXPECT_EQ(p.value().policy, asked);
      EXPECT_EQ(p.value().reason, "asked");
    }
  }
}

// ---- the op's chain in the emulator ------------------------------------------------------------

uint32_t produce(int64_t pixel, int ch, uint32_t epoch) {
  return uint32_t(pixel) * 7919u + uint32_t(ch) * 104729u + epoch * 31u + 1u;
}

template <class P>
struct ConvChainFixture {
  ops::ConvChainShape s;
  gen::Params gp;
  Grid G;
  int parts;
  Chain chain;
  StageRef<Grouped> a, b;
  EdgeRef<P> e;
  std::vector<unsigned char> ws;
  std::vector<uint32_t> A;  // conv1's output [n*h*w, k]
  std::atomic<uint64_t> wrong{0}, reads{0}, failed{0};
  bool consumer_delays = true;  // off: the consumer reads as soon as its waits allow (races show sooner)

  ConvChainFixture(const ops::ConvChainShape& shape, int split, P policy, DependencyRelation rel, int group_m)
      : s(shape), gp{.N = shape.n, .H = shape.h, .W = shape.w, .C = shape.c, .K = shape.k}, G(shape.grid()),
        parts(split), A(size_t(shape.pixels()) * size_t(shape.k), 0u) {
    a = chain.add_stage("conv1", G, Grouped{group_m}, {.reads = {"X"}, .writes = {"Y"}});
    b = chain.add_stage("conv2", G, Grouped{group_m}, {.reads = {"Y"}, .writes = {"Out"}});
    e = chain.add_edge(a, b, policy, std::move(rel));
  }
  std::vector<emu::StageLaunch> launches() {
    auto A1 = chain.bind(a, ws.data(), ws.size(), outs(e), ins()).value();
    BindOptions ob;
    ob.watchdog_ns = 2'000'000'000ull;
    auto B1 = chain.bind(b, ws.data(), ws.size(), outs(), ins(e), ob).value();
    const int64_t px = s.pixels();
    const int K = s.k;
    emu::Body pa = [this, A1, px, K](emu::CtaContext& c) {
      const auto t = A1.tile();
      const int64_t r0 = int64_t(t.tile.m) * ops::kConvTileM, r1 = std::min(px, r0 + ops::kConvTileM);
      const int c0 = t.tile.n * ops::kConvTileN, c1 = std::min(K, c0 + ops::kConvTileN);
      for (int64_t i = r0; i < r1; ++i) {
        if (i == (r0 + r1) / 2) c.random_delay();  // a torn tile if read early
        for (int j = c0; j < c1; ++j)
          std::atomic_ref<uint32_t>(A[size_t(i) * K + j]).store(produce(i, j, t.epoch), std::memory_order_relaxed);
      }
      A1.post(t);
    };
    emu::Body pb = [this, B1, px, K](emu::CtaContext& c) {
      uint32_t part = 0;
      const Assignment as = B1.acquire_tile_leader(uint32_t(parts), &part);
      const int kb = s.k_blocks2(), base = kb / parts, rem = kb % parts;
      const int k_begin = int(part) * base + std::min(int(part), rem), count = base + (int(part) < rem ? 1 : 0);
      if (count == 0) return;
      HorizonWord word;
      using S = decltype(B1);
      const HorizonTile<S> t{&B1, as, k_begin, count};
      std::thread sync([&] { run_sync_lanes<32>(t, &word, 0); });
      HorizonWaits w{&word.ready};
      const int cbs = ceil_div(K, ops::kConvTileK);
      const int64_t o0 = int64_t(as.tile.m) * ops::kConvTileM, o1 = std::min(px, o0 + ops::kConvTileM);
      for (int local = 0; local < count; ++local) {
        w.wait(local);
        w.fence_for_tma_reads();
        if (std::atomic_ref<uint32_t>(word.failed).load(std::memory_order_relaxed)) break;
        if (consumer_delays && (local & 1) == 0) c.random_delay();
        // What the im2col TMA box of k-block (r, s, cb) reads for this tile's output pixels.
        const int k = k_begin + local, cb = k % cbs, tap = k / cbs, r = tap / 3, sx = tap % 3;
        const int ch0 = cb * ops::kConvTileK, ch1 = std::min(K, ch0 + ops::kConvTileK);
        uint64_t bad = 0, n = 0;
        for (int64_t o = o0; o < o1; ++o) {
          const int64_t img = o / (int64_t(s.h) * s.w), p = o / s.w % s.h, q = o % s.w;
          const int64_t hh = p + r - 1, ww = q + sx - 1;
          if (hh < 0 || hh >= s.h || ww < 0 || ww >= s.w) continue;  // the padding: zeros, nothing read
          const int64_t in = (img * s.h + hh) * s.w + ww;
          for (int j = ch0; j < ch1; ++j, ++n)
            bad += std::atomic_ref<uint32_t>(A[size_t(in) * K + j]).load(std::memory_order_relaxed) != produce(in, j, as.epoch);
        }
        wrong += bad;
        reads += n;
      }
      sync.join();
      if (word.failed) ++failed;
    };
    return {{a.index, int(G.size()), pa}, {b.index, int(G.size()) * parts, pb}};
  }
};

template <class P>
void run_conv_chain(const ops::ConvChainShape& s, P policy, int parts, uint64_t seed, int iters, int group_m = 1,
                    bool expect_sound = true) {
  const gen::Params gp{.N = s.n, .H = s.h, .W = s.w, .C = s.c, .K = s.k};
  if (!expect_sound) {
    // Against the true relation (conv_exact, the 3x3 halo tap by tap) the checker refuses the policy
    // and names a missed read.
    ConvChainFixture<P> exact(s, parts, policy, gen::conv1_to_conv2_exact_relation(gp), group_m);
    const status v = exact.chain.validate();
    ASSERT_EQ(v.code(), errc::unsound_policy) << v.to_string();
    EXPECT_NE(v.to_string().find("reads producer tile"), std::string::npos) << v.to_string();
    std::printf("checker: %s\n", v.to_string().c_str());
  }
  // The chain that runs: with the exact relation; an unsound policy runs against the relation it
  // believes (its own footprint, as cuSync's does), which proves it "sound".
  ConvChainFixture<P> fx(s, parts, policy,
                         expect_sound ? gen::conv1_to_conv2_exact_relation(gp)
                                      : deps::from_footprint(s.grid(), s.grid(), policy.footprint, "same tile only"),
                         group_m);
  fx.consumer_delays = expect_sound;
  const status v = fx.chain.validate();
  ASSERT_TRUE(v.ok()) << v.to_string();
  if (expect_sound) {  // per k-block halo waits cover each k-block's own reads: split parts skip the prefix
    EXPECT_EQ(fx.chain.edge(0).report.k_local, policy.per_k_block) << fx.chain.edge(0).report.summary();
  }
  ASSERT_TRUE(fx.chain.workspace_image(0, fx.ws).ok());
  const auto launches = fx.launches();
  emu::Emulator em({.sm_slots = 6, .co_schedule = true, .seed = seed, .max_delay_us = 40});
  for (int it = 0; it < iters; ++it) {
    const status st = em.run_iteration(fx.chain, fx.ws, launches);
    ASSERT_TRUE(st.ok()) << "iteration " << it << ": " << st.to_string();
  }
  EXPECT_EQ(fx.failed.load(), 0u);
  if (expect_sound) {
    EXPECT_EQ(fx.wrong.load(), 0u) << "elements read before the conv1 tile holding them posted";
    EXPECT_GT(fx.reads.load(), 0u);
  } else {
    EXPECT_GT(fx.wrong.load(), 0u) << "the same-tile policy should read some halo rows before they are written";
    std::printf("same-tile policy: %llu of %llu elements read before conv1 wrote them\n",
                (unsigned long long)fx.wrong.load(), (unsigned long long)fx.reads.load());
  }
}

using GenTile = gen::conv1_to_conv2_tile_policy;  // the op's policy type (conv_kernels::Policy)

GenTile op_policy(const ops::ConvChainShape& s, bool per_k) {
  const gen::Params gp{.N = s.n, .H = s.h, .W = s.w, .C = s.c, .K = s.k};
  return GenTile{gen::conv1_grid(gp), gen::conv1_to_conv2_footprint(gp), per_k};
}

// Ragged: 234 pixels (2 row bands, tiles spanning images), 72 channels (2 tile columns, partial
// channel blocks: 18 k-blocks).
TEST(ConvChainEmulator, KBlockWaitsRaggedShape) { run_conv_chain(resnet(2, 9, 13, 72), op_policy(resnet(2, 9, 13, 72), true), 1, 31, 30); }
TEST(ConvChainEmulator, TileWaitsRaggedShape) { run_conv_chain(resnet(2, 9, 13, 72), op_policy(resnet(2, 9, 13, 72), false), 1, 32, 30); }
// 784 pixels in 7 row bands, each tile's halo reaching into the bands above and below; split-K parts
// that start past k-block 0 (the per-tile waits are all made by the part's first k-block).
TEST(ConvChainEmulator, KBlockWaitsSplitK) { run_conv_chain(resnet(1, 28, 28, 64), op_policy(resnet(1, 28, 28, 64), true), 3, 33, 20); }
TEST(ConvChainEmulator, TileWaitsSplitK) { run_conv_chain(resnet(1, 28, 28, 64), op_policy(resnet(1, 28, 28, 64), false), 4, 34, 20); }
// A grouped order (bands of 2 rows of tiles) and a VGG pair with k != c.
TEST(ConvChainEmulator, KBlockWaitsGroupedOrderVgg) {
  const ops::ConvChainShape s{1, 20, 20, 8, 128, ConvBlock::vgg_pair};
  run_conv_chain(s, op_policy(s, true), 2, 35, 20, 2);
}
// 1x1 images: only the centre tap reads anything.
TEST(ConvChainEmulator, OnePixelImages) { run_conv_chain(resnet(300, 1, 1, 64), op_policy(resnet(300, 1, 1, 64), true), 1, 36, 20); }

// cuSync's Conv2DTileSync: consumer tile m waits for producer row m only (the same M tile, every
// column), never for the neighbouring rows its 3x3 halo reads. The checker refuses it, naming the
// read; run anyway under random delays, conv2 reads halo rows before conv1 has written them.
struct SameTileFootprint {
  int rows = 0, cols = 0, tile_m = ops::kConvTileM, tile_n = ops::kConvTileN, k_total = 0;
  constexpr const char* invalid_reason() const { return rows > 0 && cols > 0 && k_total > 0 ? nullptr : "empty"; }
  constexpr int k_blocks() const { return k_total; }
  constexpr TileRect rect(Tile t, int) const { return rect_all(t); }
  constexpr TileRect rect_all(Tile t) const {
    TileRect r{};
    r.m0 = t.m;
    r.m1 = t.m + 1;
    r.n0 = 0;
    r.n1 = ceil_div(cols, tile_n);
    r.z0 = 0;
    r.z1 = 1;
    return r;
  }
};

TEST(ConvChainEmulator, SameTileOnlyPolicyIsRefusedAndReadsUnwrittenHalo) {
  const auto s = resnet(2, 14, 14, 64);  // 392 pixels: 4 row bands, 14-pixel image rows
  const SameTileFootprint f{int(s.pixels()), s.k, ops::kConvTileM, ops::kConvTileN, s.k_blocks2()};
  const RowPolicy<SameTileFootprint> policy{s.grid(), f, false};
  run_conv_chain(s, policy, 1, 37, 200, 1, /*expect_sound=*/false);
}

}  // namespace
