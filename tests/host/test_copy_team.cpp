// baton::async::CopyTeam: the pipeline's pageable staging copies. Every byte arrives, for any
// length (below one slice, ragged, many slices) and any team size, and one team serves many
// copies of mixed sizes in a row (the generation hand-off between copies).
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "baton/async/copy_team.hpp"

namespace {
using baton::async::CopyTeam;

std::vector<std::uint8_t> pattern(size_t n, unsigned seed) {
  std::vector<std::uint8_t> v(n);
  std::uint32_t x = seed * 2654435761u + 1;
  for (auto& b : v) {
    x = x * 1664525u + 1013904223u;
    b = std::uint8_t(x >> 24);
  }
  return v;
}

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

}  // namespace
