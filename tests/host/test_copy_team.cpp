// baton::async::CopyTeam: the pipeline's pageable staging copies. Every byte arrives, for any
// length (below one part, ragged, many parts) and any team size, and one team serves many
// copies of mixed sizes in a row (the generation hand-off between copies).
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "byte_pattern.hpp"
#include "baton/async/copy_team.hpp"

namespace {
using baton::async::CopyTeam;

using bt_host::pattern;

TEST(CopyTeam, CopiesEveryByteForAnyLengthAndTeamSize) {
  const size_t MiB = size_t(1) << 20;
  for (int threads : {1, 2, 3, 8, 16}) {
    CopyTeam team(threads);
    EXPECT_EQ(team.threads(), threads);
    for (size_t len : {size_t(0), size_t(1), MiB - 1, MiB, MiB + 1, 3 * MiB + 12345, 17 * MiB + 7}) {
      const auto src = pattern(len, unsigned(len) + unsigned(threads));
      std::vector<std::uint8_t> dst(len + 64, 0xAB);
      team.copy(dst.data() + 32, src.data(), len);
      ASSERT_TRUE(std::equal(src.begin(), src.end(), dst.begin() + 32)) << "threads " << threads << " len " << len;
      for (size_t i = 0; i < 32; ++i) {  // nothing written outside [dst, dst + len)
        ASSERT_EQ(dst[i], 0xAB);
        ASSERT_EQ(dst[32 + len + i], 0xAB);
      }
    }
  }
}

TEST(CopyTeam, OneTeamServesManyCopiesOfMixedSizes) {
  CopyTeam team(6);
  const size_t big = (size_t(1) << 20) * 5 + 3;
  const auto src = pattern(big, 7);
  std::vector<std::uint8_t> dst(big);
  for (int i = 0; i < 300; ++i) {
    const size_t len = i % 3 == 0 ? big : i % 3 == 1 ? size_t(100 + i) : (size_t(1) << 20) * 2;
    std::fill(dst.begin(), dst.begin() + std::ptrdiff_t(len), std::uint8_t(i));
    team.copy(dst.data(), src.data(), len);
    ASSERT_TRUE(std::equal(src.begin(), src.begin() + std::ptrdiff_t(len), dst.begin())) << "copy " << i << " len " << len;
  }
}

TEST(CopyTeam, ANonPositiveSizeMeansTheCallerAlone) {
  CopyTeam team(0);
  EXPECT_EQ(team.threads(), 1);
  const auto src = pattern(3 << 20, 3);
  std::vector<std::uint8_t> dst(src.size());
  team.copy(dst.data(), src.data(), src.size());
  EXPECT_EQ(src, dst);
}

// The cut: parts of at least kMinPart, at most kPartsPerThread per thread, one for a team of one.
TEST(CopyTeam, PartsFollowTheSizeAndTheTeam) {
  const size_t MiB = size_t(1) << 20;
  CopyTeam sixteen(16), one(1);
  EXPECT_EQ(sixteen.parts_for(0), 1u);
  EXPECT_EQ(sixteen.parts_for(CopyTeam::kMinPart - 1), 1u);
  EXPECT_EQ(sixteen.parts_for(MiB), 4u);  // a 1 MiB chunk is not left to one or two threads
  EXPECT_EQ(sixteen.parts_for(4 * MiB), 16u);
  EXPECT_EQ(sixteen.parts_for(64 * MiB), 64u);  // 16 threads x 4
  EXPECT_EQ(sixteen.parts_for(300 * MiB), 64u);
  EXPECT_EQ(one.parts_for(300 * MiB), 1u);
}

// Copies back to back at random sizes around the part size: a helper that wakes for one copy
// while the next has begun must take no part of it with the old pointers (the generation in the
// part counter). Every byte of every copy checked, and nothing past its end written.
TEST(CopyTeam, RandomSizesBackToBackNeverMixCopies) {
  std::mt19937_64 rng(12345);
  const size_t cap = 3 * (size_t(1) << 20);
  const auto src_a = pattern(cap, 1), src_b = pattern(cap, 2);
  std::vector<std::uint8_t> dst(cap + 16);
  for (int threads : {2, 5, 16}) {
    CopyTeam team(threads);
    for (int i = 0; i < 400; ++i) {
      const size_t len = rng() % cap;
      const auto& src = (i & 1) ? src_a : src_b;
      std::fill(dst.begin(), dst.begin() + std::ptrdiff_t(len + 16), std::uint8_t(0xCD));
      team.copy(dst.data(), src.data(), len);
      ASSERT_TRUE(std::equal(src.begin(), src.begin() + std::ptrdiff_t(len), dst.begin()))
          << "threads " << threads << " copy " << i << " len " << len;
      for (size_t k = 0; k < 16; ++k) ASSERT_EQ(dst[len + k], 0xCD) << "written past the end, copy " << i;
    }
  }
}

}  // namespace
