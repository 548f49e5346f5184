// baton::ops::plan_mlp: shape validation with actionable messages, split-K and policy choice, the
// log line.
#include <gtest/gtest.h>

#include <string>

#include "baton/ops/mlp.hpp"

namespace {

using baton::ops::activation;
using baton::ops::mlp_policy;
using baton::ops::MlpShape;
using baton::ops::plan_mlp;

TEST(OpsMlpPlan, RejectsBadShapesWithTheReason) {
  auto bad = plan_mlp(MlpShape{0, 8192, 2752, activation::swiglu}, 132);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code(), baton::errc::invalid_argument);
  EXPECT_NE(bad.error().message().find("m=0"), std::string::npos) << bad.error().message();
  auto odd = plan_mlp(MlpShape{16, 8190, 2752, activation::gelu}, 132);
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.error().code(), baton::errc::not_supported);
  EXPECT_NE(odd.error().message().find("multiples of 8"), std::string::npos) << odd.error().message();
  auto sms = plan_mlp(MlpShape{16, 8192, 2752, activation::gelu}, 0);
  ASSERT_FALSE(sms.ok());
  baton::ops::MlpOptions too_many;
  too_many.split1 = 1000;
  auto split = plan_mlp(MlpShape{16, 8192, 2752, activation::gelu}, 132, too_many);
  ASSERT_FALSE(split.ok());
  EXPECT_NE(split.error().message().find("exceeds the k-blocks 128/43"), std::string::npos) << split.error().message();
}

TEST(OpsMlpPlan, RaggedShapesArePlanned) {
  for (int m : {1, 17, 200, 1000}) {
    auto p = plan_mlp(MlpShape{m, 1032, 344, activation::swiglu}, 132);  // H, F not multiples of the tile
    ASSERT_TRUE(p.ok()) << p.error().to_string();
    EXPECT_EQ(p.value().gemm1.m, (m + 127) / 128);
    EXPECT_EQ(p.value().gemm1.n, (2 * 344 + 127) / 128);  // SwiGLU computes 2F columns
    EXPECT_EQ(p.value().gemm2.n, (1032 + 127) / 128);
  }
}

TEST(OpsMlpPlan, DecodeSplitsAndSkipsOverlap) {
  auto p = plan_mlp(MlpShape{1, 12288, 6144, activation::gelu}, 132);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.value().split1, baton::choose_split_k(48, 192, 132));
  EXPECT_GT(p.value().split1, 1);
  EXPECT_EQ(p.value().policy, mlp_policy::none);
  EXPECT_EQ(p.value().group_m, 1);  // one row of tiles
  const std::string line = p.value().log_line();
  EXPECT_NE(line.find("baton::ops::mlp m=1 h=12288 f=6144 gelu: policy none, split-K"), std::string::npos) << line;
  EXPECT_NE(line.find("because"), std::string::npos) << line;
}

TEST(OpsMlpPlan, PrefillNeitherSplitsNorOverlaps) {
  auto p = plan_mlp(MlpShape{2048, 12288, 6144, activation::gelu}, 132);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.value().policy, mlp_policy::none);  // measured: waits lose to plain launches on the H200
  EXPECT_EQ(p.value().group_m, 8);
  EXPECT_EQ(p.value().split1, 1);
  EXPECT_EQ(p.value().split2, 1);
}

TEST(OpsMlpPlan, CallerPolicyWins) {
  baton::ops::MlpOptions o;
  o.policy = mlp_policy::kblock;
  o.split1 = 2;
  o.split2 = 3;
  auto p = plan_mlp(MlpShape{64, 8192, 2752, activation::swiglu}, 132, o);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.value().policy, mlp_policy::kblock);
  EXPECT_EQ(p.value().split1, 2);
  EXPECT_EQ(p.value().split2, 3);
  EXPECT_NE(p.value().reason.find("caller"), std::string::npos);
}

}  // namespace
