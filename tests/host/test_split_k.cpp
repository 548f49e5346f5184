// baton::choose_split_k: split-K only where the tiles leave SMs idle, never into parts of fewer
// than 4 k-blocks, and the estimate it minimizes.
#include <gtest/gtest.h>

#include "baton/split_k.hpp"

namespace {

TEST(SplitK, NoSplitOnceTheTilesFillTheMachine) {
  EXPECT_EQ(baton::choose_split_k(1536, 96, 132), 1);   // GPT-3 GEMM2 at M = 2048
  EXPECT_EQ(baton::choose_split_k(768, 192, 132), 1);   // GPT-3 GEMM1 at M = 2048
  EXPECT_EQ(baton::choose_split_k(132, 192, 132), 1);   // exactly one wave
}

TEST(SplitK, SplitsDecodeShapes) {
  // GPT-3 decode: 48 tiles of GEMM1 over 192 k-blocks on 132 SMs. 5 parts: 240 CTAs in 2 waves
  // of 39 + 8 k-blocks = 94, against 1 x (192 + 6) unsplit.
  EXPECT_EQ(baton::choose_split_k(48, 192, 132), 5);
  // LLaMA decode: 43 tiles x 3 parts = 129 CTAs, one wave.
  EXPECT_EQ(baton::choose_split_k(43, 128, 132), 3);
  EXPECT_EQ(baton::choose_split_k(64, 43, 132), 2);
  // Every split beats no split on an almost empty machine.
  EXPECT_GT(baton::choose_split_k(1, 1024, 132), 1);
}

TEST(SplitK, RespectsLimits) {
  EXPECT_EQ(baton::choose_split_k(1, 7, 132), 1);          // parts of < 4 k-blocks: no split
  EXPECT_LE(baton::choose_split_k(1, 8, 132), 2);
  EXPECT_LE(baton::choose_split_k(1, 4096, 132), 8);       // max_split default
  EXPECT_LE(baton::choose_split_k(1, 4096, 132, 3), 3);
  EXPECT_EQ(baton::choose_split_k(0, 100, 132), 1);        // degenerate inputs
  EXPECT_EQ(baton::choose_split_k(10, 0, 132), 1);
  EXPECT_EQ(baton::choose_split_k(10, 100, 0), 1);
  static_assert(baton::choose_split_k(48, 192, 132) == 5, "usable in constant expressions");
}

}  // namespace
