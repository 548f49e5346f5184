// Host tests for baton/footprint.hpp and baton/policy.hpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "baton/footprint.hpp"
#include "baton/order.hpp"
#include "baton/policy.hpp"
#include "baton/tile.hpp"
#include "host_test_printers.hpp"

namespace {

using namespace baton;
using footprint::AllOfBatch;
using footprint::ConvHalo;
using footprint::GemmA;
using footprint::Identity;
using footprint::Transpose;

TileRect R(int m0, int m1, int n0, int n1, int z0, int z1) { return TileRect{m0, m1, n0, n1, z0, z1}; }

template <class P>
std::vector<WaitSpec> waits(const P& p, Tile t, int k) {
  std::vector<WaitSpec> out;
  bool r = p.for_each_wait(t, k, [&](WaitSpec w) {
    out.push_back(w);
    return true;
  });
  EXPECT_TRUE(r);
  return out;
}

// ================================================================ footprints

TEST(Footprint, TileRectBasics) {
  TileRect r = R(1, 3, 0, 2, 0, 1);
  EXPECT_FALSE(r.empty());
  EXPECT_EQ(r.count(), 4);
  EXPECT_TRUE(r.contains(Tile{2, 1, 0}));
  EXPECT_FALSE(r.contains(Tile{3, 1, 0}));
  EXPECT_FALSE(r.contains(Tile{1, 2, 0}));
  EXPECT_FALSE(r.contains(Tile{1, 1, 1}));
  EXPECT_TRUE(R(1, 1, 0, 2, 0, 1).empty());
  EXPECT_EQ(R(1, 1, 0, 2, 0, 1).count(), 0);
  EXPECT_TRUE(R(0, 1, 0, 1, 2, 1).empty());
}

TEST(Footprint, Identity) {
  Identity f;
  EXPECT_EQ(f.k_blocks(), 1);
  EXPECT_EQ(f.rect_all(Tile{2, 5, 1}), R(2, 3, 5, 6, 1, 2));
  EXPECT_EQ(f.rect(Tile{2, 5, 1}, 0), R(2, 3, 5, 6, 1, 2));
  static_assert(Identity{}.rect_all(Tile{0, 0, 0}).count() == 1);
}

TEST(Footprint, Transpose) {
  Transpose f;
  EXPECT_EQ(f.k_blocks(), 1);
  EXPECT_EQ(f.rect_all(Tile{2, 5, 1}), R(5, 6, 2, 3, 1, 2));
  EXPECT_EQ(f.rect(Tile{0, 3, 0}, 0), R(3, 4, 0, 1, 0, 1));
}

TEST(Footprint, AllOfBatch) {
  AllOfBatch f{Grid{3, 4, 2}};
  EXPECT_EQ(f.k_blocks(), 1);
  EXPECT_EQ(f.rect_all(Tile{7, 9, 1}), R(0, 3, 0, 4, 1, 2));
  EXPECT_EQ(f.rect(Tile{0, 0, 0}, 0), R(0, 3, 0, 4, 0, 1));
  EXPECT_EQ(f.rect_all(Tile{0, 0, 0}).count(), 12);
}

TEST(Footprint, GemmAConsumerTileTwiceProducerRaggedMK) {
  // M = 100, K = 70, producer tiles 32x32 (grid 4x3), consumer tiles 64 rows, k-blocks of 16.
  GemmA f{100, 70, 32, 32, 64, 16};
  EXPECT_EQ(f.producer_grid(), (Grid{4, 3, 1}));
  EXPECT_EQ(f.producer_grid(3), (Grid{4, 3, 3}));
  EXPECT_EQ(f.k_blocks(), 5);
  // Consumer row 0: rows 0..63 -> producer rows 0,1.
  EXPECT_EQ(f.rows_of(Tile{0, 0, 0}), R(0, 2, 0, 0, 0, 1));
  // Consumer row 1: rows 64..99 (ragged) -> producer rows 2,3.
  EXPECT_EQ(f.rect_all(Tile{1, 7, 2}), R(2, 4, 0, 3, 2, 3));
  EXPECT_EQ(f.rect(Tile{1, 0, 0}, 0), R(2, 4, 0, 1, 0, 1));  // cols 0..15
  EXPECT_EQ(f.rect(Tile{1, 0, 0}, 1), R(2, 4, 0, 1, 0, 1));  // cols 16..31
  EXPECT_EQ(f.rect(Tile{1, 0, 0}, 2), R(2, 4, 1, 2, 0, 1));  // cols 32..47
  EXPECT_EQ(f.rect(Tile{1, 0, 0}, 3), R(2, 4, 1, 2, 0, 1));  // cols 48..63
  EXPECT_EQ(f.rect(Tile{1, 0, 0}, 4), R(2, 4, 2, 3, 0, 1));  // cols 64..69 (ragged)
  // Past the last row: nothing.
  EXPECT_TRUE(f.rect_all(Tile{2, 0, 0}).empty());
  EXPECT_TRUE(f.rect(Tile{0, 0, 0}, 5).empty());
}

TEST(Footprint, GemmAMisalignedTiles) {
  // Producer tiles 32x24, consumer 48 rows and k-blocks of 16: rectangles straddle tiles.
  GemmA f{100, 70, 32, 24, 48, 16};
  EXPECT_EQ(f.producer_grid(), (Grid{4, 3, 1}));
  EXPECT_EQ(f.rows_of(Tile{0, 0, 0}), R(0, 2, 0, 0, 0, 1));  // rows 0..47
  EXPECT_EQ(f.rows_of(Tile{1, 0, 0}), R(1, 3, 0, 0, 0, 1));  // rows 48..95
  EXPECT_EQ(f.rows_of(Tile{2, 0, 0}), R(3, 4, 0, 0, 0, 1));  // rows 96..99
  EXPECT_EQ(f.rect(Tile{0, 0, 0}, 1), R(0, 2, 0, 2, 0, 1));  // cols 16..31 -> producer cols 0,1
  EXPECT_EQ(f.rect(Tile{0, 0, 0}, 2), R(0, 2, 1, 2, 0, 1));  // cols 32..47 -> producer col 1
  EXPECT_EQ(f.rect(Tile{0, 0, 0}, 4), R(0, 2, 2, 3, 0, 1));  // cols 64..69 -> producer col 2
  // Consumer tile smaller than producer tile.
  GemmA g{100, 64, 64, 64, 16, 64};
  EXPECT_EQ(g.rows_of(Tile{3, 0, 0}), R(0, 1, 0, 0, 0, 1));
  EXPECT_EQ(g.rows_of(Tile{4, 0, 0}), R(1, 2, 0, 0, 0, 1));
  EXPECT_EQ(g.rows_of(Tile{6, 0, 0}), R(1, 2, 0, 0, 0, 1));  // rows 96..99
  EXPECT_EQ(g.k_blocks(), 1);
}

TEST(Footprint, GemmASingleRow) {
  GemmA f{1, 256, 64, 128, 128, 64};
  EXPECT_EQ(f.producer_grid(), (Grid{1, 2, 1}));
  EXPECT_EQ(f.k_blocks(), 4);
  EXPECT_EQ(f.rect_all(Tile{0, 3, 0}), R(0, 1, 0, 2, 0, 1));
  EXPECT_EQ(f.rect(Tile{0, 0, 0}, 1), R(0, 1, 0, 1, 0, 1));
  EXPECT_EQ(f.rect(Tile{0, 0, 0}, 2), R(0, 1, 1, 2, 0, 1));
  EXPECT_TRUE(f.rect_all(Tile{1, 0, 0}).empty());
}

TEST(Footprint, ConvHaloStride1) {
  // 1 image 8x8x16, 3x3 pad 1; producer tiles hold 16 pixels (two image rows).
  ConvHalo f{1, 8, 8, 16, 3, 3, 1, 1, 16, 16, 16, 16};
  EXPECT_EQ(f.out_h(), 8);
  EXPECT_EQ(f.out_w(), 8);
  EXPECT_EQ(f.channel_blocks(), 1);
  EXPECT_EQ(f.k_blocks(), 9);
  EXPECT_EQ(f.producer_grid(), (Grid{4, 1, 1}));
  EXPECT_EQ(f.consumer_grid(32, 16), (Grid{4, 2, 1}));
  // Consumer tile 1: output rows 2..3 read input rows 1..4 = pixels 8..39 = producer tiles 0..2.
  EXPECT_EQ(f.rect_all(Tile{1, 0, 0}), R(0, 3, 0, 1, 0, 1));
  EXPECT_EQ(f.rect(Tile{1, 0, 0}, 0), R(0, 2, 0, 1, 0, 1));  // filter row 0: input rows 1..2
  EXPECT_EQ(f.rect(Tile{1, 0, 0}, 2), R(0, 2, 0, 1, 0, 1));  // (r=0, s=2): same rows
  EXPECT_EQ(f.rect(Tile{1, 0, 0}, 4), R(1, 2, 0, 1, 0, 1));  // filter row 1: input rows 2..3
  EXPECT_EQ(f.rect(Tile{1, 0, 0}, 6), R(1, 3, 0, 1, 0, 1));  // filter row 2: input rows 3..4
  // Top edge: filter row 0 of tile 0 reads the padding plus input row 0.
  EXPECT_EQ(f.rect(Tile{0, 0, 0}, 0), R(0, 1, 0, 1, 0, 1));
  EXPECT_EQ(f.rect_all(Tile{0, 0, 0}), R(0, 2, 0, 1, 0, 1));
  // Bottom edge.
  EXPECT_EQ(f.rect(Tile{3, 0, 0}, 8), R(3, 4, 0, 1, 0, 1));
  EXPECT_EQ(f.rect_all(Tile{3, 0, 0}), R(2, 4, 0, 1, 0, 1));
}

TEST(Footprint, ConvHaloTapsEntirelyInPadding) {
  // 1x1 output rows per tile, pad 2: filter row 0 of output row 0 reads only padding.
  ConvHalo f{1, 4, 4, 8, 3, 3, 1, 2, 4, 8, 4, 8};
  EXPECT_EQ(f.out_h(), 6);
  EXPECT_EQ(f.out_w(), 6);
  // Tile 0 = output pixels 0..3 (row 0): filter row 0 -> input row -2: padding only.
  EXPECT_TRUE(f.rect(Tile{0, 0, 0}, 0).empty());
  // filter row 2 -> input row 0 -> producer tile 0.
  EXPECT_EQ(f.rect(Tile{0, 0, 0}, 6), R(0, 1, 0, 1, 0, 1));
}

TEST(Footprint, ConvHaloStride2) {
  // 8x8 input, 3x3 stride 2 pad 1 -> 4x4 output; consumer tiles of 8 outputs (two output rows).
  ConvHalo f{1, 8, 8, 16, 3, 3, 2, 1, 16, 16, 8, 16};
  EXPECT_EQ(f.out_h(), 4);
  EXPECT_EQ(f.out_w(), 4);
  EXPECT_EQ(f.consumer_grid(16, 16), (Grid{2, 1, 1}));
  // Tile 1: output rows 2..3 -> input rows 3..7 (all taps), rows 3..5 for filter row 0.
  EXPECT_EQ(f.rect_all(Tile{1, 0, 0}), R(1, 4, 0, 1, 0, 1));
  EXPECT_EQ(f.rect(Tile{1, 0, 0}, 0), R(1, 3, 0, 1, 0, 1));
  EXPECT_EQ(f.rect(Tile{1, 0, 0}, 8), R(2, 4, 0, 1, 0, 1));  // filter row 2: input rows 5..7
  // Tile 0: output rows 0..1 -> input rows 0..3 -> producer tiles 0..1.
  EXPECT_EQ(f.rect_all(Tile{0, 0, 0}), R(0, 2, 0, 1, 0, 1));
}

TEST(Footprint, ConvHaloTileSpansImages) {
  // 2 images 4x4x8, 3x3 pad 1, out 4x4; consumer tiles of 12 output pixels span images.
  ConvHalo f{2, 4, 4, 8, 3, 3, 1, 1, 8, 8, 12, 4};
  EXPECT_EQ(f.producer_grid(), (Grid{4, 1, 1}));
  EXPECT_EQ(f.channel_blocks(), 2);
  EXPECT_EQ(f.k_blocks(), 18);
  // Tile 1 = outputs 12..23: image 0 row 3 and image 1 rows 0..1.
  // Reads image 0 rows 2..3 (pixels 8..15) and image 1 rows 0..2 (pixels 16..27).
  EXPECT_EQ(f.rect_all(Tile{1, 0, 0}), R(1, 4, 0, 1, 0, 1));
  // Filter row 0: image 0 row 2 and image 1 row 0 (pixels 8..19) -> tiles 1..2.
  EXPECT_EQ(f.rect(Tile{1, 0, 0}, 0), R(1, 3, 0, 1, 0, 1));
  EXPECT_EQ(f.rect(Tile{1, 0, 0}, 1), R(1, 3, 0, 1, 0, 1));  // channel block 1 (channels 4..7)
  // Channel blocks land on different producer columns when producer tiles are 4 channels.
  ConvHalo g{2, 4, 4, 8, 3, 3, 1, 1, 8, 4, 12, 4};
  EXPECT_EQ(g.producer_grid(), (Grid{4, 2, 1}));
  EXPECT_EQ(g.rect(Tile{1, 0, 0}, 1), R(1, 3, 1, 2, 0, 1));
  EXPECT_EQ(g.rect(Tile{1, 0, 0}, 0), R(1, 3, 0, 1, 0, 1));
  EXPECT_EQ(g.rect_all(Tile{1, 0, 0}), R(1, 4, 0, 2, 0, 1));
}

// ================================================================ policies

TEST(Policy, TilePolicyIdentity) {
  Grid g{3, 4, 2};
  TilePolicy<Identity> p{g};
  EXPECT_EQ(p.producer_grid(), g);
  EXPECT_EQ(p.num_semaphores(), 24);
  EXPECT_EQ(p.k_blocks(), 1);
  std::set<int> seen;
  for (int i = 0; i < int(g.size()); ++i) {
    int s = p.post_index(g.tile(i));
    EXPECT_GE(s, 0);
    EXPECT_LT(s, p.num_semaphores());
    seen.insert(s);
  }
  EXPECT_EQ(seen.size(), size_t(24));  // one semaphore per tile
  auto w = waits(p, Tile{2, 1, 1}, 0);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0], (WaitSpec{g.linear(Tile{2, 1, 1}), 1u, 1u}));
  EXPECT_TRUE(waits(p, Tile{2, 1, 1}, 1).empty());
}

TEST(Policy, TilePolicyGemmAPerTileWaitsOnlyAtK0) {
  GemmA f{100, 70, 32, 32, 64, 16};
  Grid g = f.producer_grid();
  TilePolicy<GemmA> p{g, f};
  EXPECT_EQ(p.k_blocks(), 5);
  auto w0 = waits(p, Tile{1, 0, 0}, 0);
  ASSERT_EQ(w0.size(), 6u);  // rows 2,3 x cols 0..2
  std::vector<WaitSpec> want;
  for (int m = 2; m < 4; ++m)
    for (int n = 0; n < 3; ++n) want.push_back(WaitSpec{g.linear(Tile{m, n, 0}), 1u, 1u});
  EXPECT_EQ(w0, want);
  for (int k = 1; k < 5; ++k) EXPECT_TRUE(waits(p, Tile{1, 0, 0}, k).empty()) << "k " << k;
}

TEST(Policy, TilePolicyGemmAPerKBlock) {
  GemmA f{100, 70, 32, 32, 64, 16};
  Grid g = f.producer_grid();
  TilePolicy<GemmA> p{g, f, true};
  auto sems = [&](int k) {
    std::vector<int> s;
    for (auto w : waits(p, Tile{1, 0, 0}, k)) {
      EXPECT_EQ(w.count, 1u);
      EXPECT_EQ(w.per_epoch, 1u);
      s.push_back(w.sem);
    }
    return s;
  };
  EXPECT_EQ(sems(0), (std::vector<int>{6, 9}));   // (2,0),(3,0)
  EXPECT_EQ(sems(1), (std::vector<int>{6, 9}));
  EXPECT_EQ(sems(2), (std::vector<int>{7, 10}));  // (2,1),(3,1)
  EXPECT_EQ(sems(4), (std::vector<int>{8, 11}));  // (2,2),(3,2)
}

TEST(Policy, KBlockPolicyIsPerKBlock) {
  GemmA f{64, 128, 32, 64, 32, 32};
  KBlockPolicy<GemmA> p{f.producer_grid(2), f};
  EXPECT_TRUE(p.per_k_block);
  KBlockPolicy<GemmA> d;
  EXPECT_TRUE(d.per_k_block);
  EXPECT_EQ(p.num_semaphores(), 2 * 2 * 2);
  EXPECT_EQ(p.k_blocks(), 4);
  // Batch 1, consumer row 1: producer row 1; k 0,1 -> col 0; k 2,3 -> col 1.
  Grid g = p.producer_grid();
  EXPECT_EQ(waits(p, Tile{1, 0, 1}, 0), (std::vector<WaitSpec>{{g.linear(Tile{1, 0, 1}), 1u, 1u}}));
  EXPECT_EQ(waits(p, Tile{1, 0, 1}, 1), (std::vector<WaitSpec>{{g.linear(Tile{1, 0, 1}), 1u, 1u}}));
  EXPECT_EQ(waits(p, Tile{1, 0, 1}, 3), (std::vector<WaitSpec>{{g.linear(Tile{1, 1, 1}), 1u, 1u}}));
  static_assert(SyncPolicy<KBlockPolicy<GemmA>>);
}

TEST(Policy, RowPolicyGemmA) {
  GemmA f{100, 70, 32, 32, 64, 16};
  Grid g = f.producer_grid(2);  // 4x3x2
  RowPolicy<GemmA> p{g, f};
  EXPECT_EQ(p.num_semaphores(), 8);
  EXPECT_EQ(p.k_blocks(), 5);
  std::vector<int> hits(8, 0);
  for (int i = 0; i < int(g.size()); ++i) {
    Tile t = g.tile(i);
    int s = p.post_index(t);
    ASSERT_GE(s, 0);
    ASSERT_LT(s, 8);
    EXPECT_EQ(s, t.z * 4 + t.m);
    ++hits[size_t(s)];
  }
  for (int h : hits) EXPECT_EQ(h, 3);  // every row semaphore gets one post per column
  // Consumer row 1 of batch 1: producer rows 2,3 of batch 1 -> sems 6,7, count 3 each.
  EXPECT_EQ(waits(p, Tile{1, 4, 1}, 0), (std::vector<WaitSpec>{{6, 3u, 3u}, {7, 3u, 3u}}));
  for (int k = 1; k < 5; ++k) EXPECT_TRUE(waits(p, Tile{1, 4, 1}, k).empty());
  // Per k-block: the same rows at every k.
  RowPolicy<GemmA> pk{g, f, true};
  for (int k = 0; k < 5; ++k)
    EXPECT_EQ(waits(pk, Tile{0, 0, 0}, k), (std::vector<WaitSpec>{{0, 3u, 3u}, {1, 3u, 3u}})) << "k " << k;
  // Empty footprint (consumer row past M): no waits.
  EXPECT_TRUE(waits(p, Tile{5, 0, 0}, 0).empty());
}

TEST(Policy, ColumnPolicyTranspose) {
  Grid g{3, 5, 2};
  ColumnPolicy<Transpose> p{g, Transpose{}};
  EXPECT_EQ(p.num_semaphores(), 10);
  EXPECT_EQ(p.post_index(Tile{2, 4, 1}), 9);
  EXPECT_EQ(p.post_index(Tile{0, 0, 0}), 0);
  std::vector<int> hits(10, 0);
  for (int i = 0; i < int(g.size()); ++i) ++hits[size_t(p.post_index(g.tile(i)))];
  for (int h : hits) EXPECT_EQ(h, 3);
  // Consumer (m=3, n=1, z=1) of the transposed grid reads producer (1,3,1): column 3 of batch 1.
  EXPECT_EQ(waits(p, Tile{3, 1, 1}, 0), (std::vector<WaitSpec>{{8, 3u, 3u}}));
}

TEST(Policy, ConvPolicy) {
  ConvHalo f{1, 8, 8, 16, 3, 3, 1, 1, 16, 16, 16, 16};
  ConvPolicy p{f};
  EXPECT_EQ(p.producer_grid(), (Grid{4, 1, 1}));
  EXPECT_EQ(p.num_semaphores(), 4);
  EXPECT_EQ(p.k_blocks(), 9);
  EXPECT_FALSE(p.per_k_block);
  EXPECT_EQ(waits(p, Tile{1, 0, 0}, 0), (std::vector<WaitSpec>{{0, 1u, 1u}, {1, 1u, 1u}, {2, 1u, 1u}}));
  for (int k = 1; k < 9; ++k) EXPECT_TRUE(waits(p, Tile{1, 0, 0}, k).empty());
  ConvPolicy pk{f, true};
  EXPECT_TRUE(pk.per_k_block);
  EXPECT_EQ(waits(pk, Tile{1, 0, 0}, 0), (std::vector<WaitSpec>{{0, 1u, 1u}, {1, 1u, 1u}}));
  EXPECT_EQ(waits(pk, Tile{1, 0, 0}, 3), (std::vector<WaitSpec>{{1, 1u, 1u}}));
  EXPECT_EQ(waits(pk, Tile{1, 0, 0}, 8), (std::vector<WaitSpec>{{1, 1u, 1u}, {2, 1u, 1u}}));
  // Two producer columns: per-row count is 2.
  ConvHalo g{1, 8, 8, 32, 3, 3, 1, 1, 16, 16, 16, 16};
  ConvPolicy q{g};
  EXPECT_EQ(q.producer_grid(), (Grid{4, 2, 1}));
  EXPECT_EQ(waits(q, Tile{0, 0, 0}, 0), (std::vector<WaitSpec>{{0, 2u, 2u}, {1, 2u, 2u}}));
  // A tap entirely in the padding waits on nothing.
  ConvHalo h{1, 4, 4, 8, 3, 3, 1, 2, 4, 8, 4, 8};
  ConvPolicy ph{h, true};
  EXPECT_TRUE(waits(ph, Tile{0, 0, 0}, 0).empty());
}

TEST(Policy, EarlyStop) {
  GemmA f{128, 128, 32, 32, 64, 128};
  Grid g = f.producer_grid();
  auto stop_after = [](int n, int& calls) {
    return [n, &calls](WaitSpec) { return ++calls < n; };
  };
  {
    TilePolicy<GemmA> p{g, f};
    int calls = 0;
    EXPECT_FALSE(p.for_each_wait(Tile{0, 0, 0}, 0, stop_after(1, calls)));
    EXPECT_EQ(calls, 1);
    calls = 0;
    EXPECT_FALSE(p.for_each_wait(Tile{0, 0, 0}, 0, stop_after(3, calls)));
    EXPECT_EQ(calls, 3);
    calls = 0;
    EXPECT_TRUE(p.for_each_wait(Tile{0, 0, 0}, 0, stop_after(100, calls)));
    EXPECT_EQ(calls, 8);  // 2 rows x 4 cols
  }
  {
    RowPolicy<GemmA> p{g, f};
    int calls = 0;
    EXPECT_FALSE(p.for_each_wait(Tile{1, 0, 0}, 0, stop_after(1, calls)));
    EXPECT_EQ(calls, 1);
    calls = 0;
    EXPECT_TRUE(p.for_each_wait(Tile{1, 0, 0}, 0, stop_after(100, calls)));
    EXPECT_EQ(calls, 2);
  }
  {
    ColumnPolicy<AllOfBatch> p{g, AllOfBatch{g}};
    int calls = 0;
    EXPECT_FALSE(p.for_each_wait(Tile{0, 0, 0}, 0, stop_after(2, calls)));
    EXPECT_EQ(calls, 2);
  }
  {
    ConvPolicy p{ConvHalo{1, 8, 8, 16, 3, 3, 1, 1, 16, 16, 16, 16}};
    int calls = 0;
    EXPECT_FALSE(p.for_each_wait(Tile{1, 0, 0}, 0, stop_after(2, calls)));
    EXPECT_EQ(calls, 2);
  }
}

TEST(Policy, AllOfBatchWaits) {
  Grid g{2, 3, 4};
  TilePolicy<AllOfBatch> p{g, AllOfBatch{g}};
  auto w = waits(p, Tile{5, 0, 2}, 0);
  ASSERT_EQ(w.size(), 6u);
  for (auto x : w) {
    Tile t = g.tile(x.sem);
    EXPECT_EQ(t.z, 2);
    EXPECT_EQ(x.count, 1u);
  }
  RowPolicy<AllOfBatch> r{g, AllOfBatch{g}};
  EXPECT_EQ(waits(r, Tile{0, 0, 3}, 0), (std::vector<WaitSpec>{{6, 3u, 3u}, {7, 3u, 3u}}));
}

// ================================================================ concepts

struct NoKBlocksPolicy {
  Grid producer_grid() const { return {}; }
  int num_semaphores() const { return 1; }
  int post_index(Tile) const { return 0; }
  template <class F>
  bool for_each_wait(Tile, int, F&&) const { return true; }
};
struct WrongGridTypePolicy {
  int producer_grid() const { return 0; }
  int num_semaphores() const { return 1; }
  int post_index(Tile) const { return 0; }
  int k_blocks() const { return 1; }
  template <class F>
  bool for_each_wait(Tile, int, F&&) const { return true; }
};
struct VoidWaitPolicy {
  Grid producer_grid() const { return {}; }
  int num_semaphores() const { return 1; }
  int post_index(Tile) const { return 0; }
  int k_blocks() const { return 1; }
  template <class F>
  void for_each_wait(Tile, int, F&&) const {}
};
struct MinimalPolicy {
  Grid producer_grid() const { return {}; }
  int num_semaphores() const { return 1; }
  int post_index(Tile) const { return 0; }
  int k_blocks() const { return 1; }
  template <class F>
  bool for_each_wait(Tile, int, F&& f) const { return f(WaitSpec{0, 1, 1}); }
};
struct NoRectAllFootprint {
  int k_blocks() const { return 1; }
  TileRect rect(Tile, int) const { return {}; }
};
struct MinimalFootprint {
  int k_blocks() const { return 1; }
  TileRect rect(Tile, int) const { return {}; }
  TileRect rect_all(Tile) const { return {}; }
};
struct WrongReturnOrder {
  int operator()(Grid, int) const { return 0; }
};
struct NoCallOrder {};

TEST(Concepts, AcceptBuiltinsRejectIncomplete) {
  static_assert(Footprint<Identity>);
  static_assert(Footprint<Transpose>);
  static_assert(Footprint<AllOfBatch>);
  static_assert(Footprint<GemmA>);
  static_assert(Footprint<ConvHalo>);
  static_assert(Footprint<MinimalFootprint>);
  static_assert(!Footprint<NoRectAllFootprint>);
  static_assert(!Footprint<int>);

  static_assert(SyncPolicy<TilePolicy<Identity>>);
  static_assert(SyncPolicy<TilePolicy<AllOfBatch>>);
  static_assert(SyncPolicy<KBlockPolicy<GemmA>>);
  static_assert(SyncPolicy<RowPolicy<GemmA>>);
  static_assert(SyncPolicy<ColumnPolicy<Transpose>>);
  static_assert(SyncPolicy<ConvPolicy>);
  static_assert(SyncPolicy<MinimalPolicy>);
  static_assert(!SyncPolicy<NoKBlocksPolicy>);
  static_assert(!SyncPolicy<WrongGridTypePolicy>);
  static_assert(!SyncPolicy<VoidWaitPolicy>);
  static_assert(!SyncPolicy<int>);

  static_assert(TileOrder<RowMajor>);
  static_assert(TileOrder<ColumnMajor>);
  static_assert(TileOrder<Grouped>);
  static_assert(TileOrder<Custom>);
  static_assert(TileOrder<Transposed<Grouped>>);
  static_assert(!TileOrder<WrongReturnOrder>);
  static_assert(!TileOrder<NoCallOrder>);
  SUCCEED();
}

}  // namespace
