// baton::choose_split_k: split-K only where the tiles leave SMs idle, within one wave, never into
// parts of fewer than 8 k-blocks.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "baton/split_k.hpp"

namespace {

TEST(SplitK, NoSplitOnceTheTilesFillTheMachine) {
  EXPECT_EQ(baton::choose_split_k(1536, 96, 132), 1);   // GPT-3 GEMM2 at M = 2048
  EXPECT_EQ(baton::choose_split_k(768, 192, 132), 1);   // GPT-3 GEMM1 at M = 2048
  EXPECT_EQ(baton::choose_split_k(132, 192, 132), 1);   // exactly one wave
}

TEST(SplitK, SplitsDecodeShapesWithinOneWave) {
  // GPT-3 decode: 48 tiles of GEMM1 over 192 k-blocks on 132 SMs: 2 parts (96 CTAs); 3 would
  // spill into a second wave.
  EXPECT_EQ(baton::choose_split_k(48, 192, 132), 2);
  EXPECT_EQ(baton::choose_split_k(96, 96, 132), 1);
  // LLaMA decode: 43 tiles x 3 parts = 129 CTAs, one wave.
  EXPECT_EQ(baton::choose_split_k(43, 128, 132), 3);
  EXPECT_EQ(baton::choose_split_k(64, 43, 132), 2);
  // Every split beats no split on an almost empty machine.
  EXPECT_GT(baton::choose_split_k(1, 1024, 132), 1);
}

TEST(SplitK, RespectsLimits) {
  EXPECT_EQ(baton::choose_split_k(1, 15, 132), 1);         // parts of < 8 k-blocks: no split
  EXPECT_EQ(baton::choose_split_k(1, 16, 132), 2);
  EXPECT_LE(baton::choose_split_k(1, 4096, 132), 8);       // max_split default
  EXPECT_LE(baton::choose_split_k(1, 4096, 132, 3), 3);
  EXPECT_EQ(baton::choose_split_k(0, 100, 132), 1);        // degenerate inputs
  EXPECT_EQ(baton::choose_split_k(10, 0, 132), 1);
  EXPECT_EQ(baton::choose_split_k(10, 100, 0), 1);
  static_assert(baton::choose_split_k(48, 192, 132) == 2, "usable in constant expressions");
  for (int tiles = 1; tiles <= 300; ++tiles)  // never more than one wave
    EXPECT_LE(tiles * baton::choose_split_k(tiles, 1000, 132), std::max(tiles, 132)) << tiles;
}

}  // namespace

#include "baton/order.hpp"
#include "baton/stage.hpp"

namespace {

// Split-K tickets: consecutive tickets share a tile (its parts run side by side), every part of
// every tile is handed out once per epoch, and the epoch advances once per grid.size() tiles.
TEST(SplitK, TicketsGiveEachTileItsPartsPerEpoch) {
  baton::Stage<baton::Grouped> s;
  s.grid = baton::Grid{2, 3, 1};
  s.order = baton::Grouped{2};
  uint64_t ticket = 0;
  s.ticket = &ticket;
  const uint32_t parts = 3;
  for (uint32_t epoch = 0; epoch < 3; ++epoch) {
    std::vector<int> seen(size_t(s.grid.size()) * parts, 0);
    for (int i = 0; i < s.grid.size() * int(parts); ++i) {
      uint32_t part = 99;
      const baton::Assignment a = s.acquire_tile_leader(parts, &part);
      EXPECT_EQ(a.epoch, epoch);
      EXPECT_EQ(a.position, i / int(parts));
      EXPECT_EQ(part, uint32_t(i) % parts);
      EXPECT_TRUE(a.tile == s.order(s.grid, a.position));
      ++seen[size_t(s.grid.linear(a.tile)) * parts + part];
    }
    for (int v : seen) EXPECT_EQ(v, 1);
  }
  EXPECT_EQ(ticket, uint64_t(3 * 6 * parts));
  // Without split-K the old behaviour: one ticket per tile.
  uint32_t part = 7;
  const baton::Assignment a = s.acquire_tile_leader(1, &part);
  EXPECT_EQ(part, 0u);
  EXPECT_EQ(a.epoch, uint32_t(ticket - 1) / 6u);
}

}  // namespace
