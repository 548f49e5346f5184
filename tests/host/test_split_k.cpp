// baton::choose_split_k: split-K only where the tiles leave SMs idle, within one wave, never into
// parts of fewer than 8 k-blocks.
#include <gtest/gtest.h>

#include <algorithm>

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
