// The tuning cache (baton/ops/tuner.hpp) and the MLP options' text form (baton/ops/mlp.hpp): round
// trips, file persistence across "processes" (a cleared cache), and clear errors for bad input.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "baton/ops/mlp.hpp"
#include "baton/ops/tuner.hpp"

using baton::errc;
using baton::ops::MlpOptions;
using baton::ops::TuneCache;

namespace {
std::string temp_path(const char* name) { return std::string(::testing::TempDir()) + name; }
}  // namespace

TEST(MlpOptionsText, RoundTripsEveryField) {
  MlpOptions o;
  o.policy = baton::ops::MlpPolicy::kblock;
  o.gemm1 = {baton::ops::GemmOperands::plain, 96, 3, true, {}, {}};
  o.gemm2 = {baton::ops::GemmOperands::swapped, 160, 2, {}, false, true, true};
  o.group_m = 4;
  o.l2_prefetch_mb = 24;
  o.launch = baton::ops::Gemm2Launch::after_gemm1;
  const std::string text = baton::ops::mlp_options_to_string(o);
  EXPECT_EQ(text, "policy=kblock;gemm1=plain/96/3/1/auto/auto/auto;gemm2=swapped/160/2/auto/0/1/1;group_m=4;"
                  "l2_prefetch_mb=24;launch=after_gemm1");
  auto back = baton::ops::mlp_options_from_string(text);
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  EXPECT_EQ(back.value(), o);
  EXPECT_EQ(baton::ops::mlp_options_to_string(MlpOptions{}),
            "policy=auto;gemm1=auto/auto/auto/auto/auto/auto/auto;gemm2=auto/auto/auto/auto/auto/auto/auto;group_m=auto;"
            "l2_prefetch_mb=0;"
            "launch=auto");
  EXPECT_EQ(baton::ops::mlp_options_from_string(baton::ops::mlp_options_to_string(MlpOptions{})).value(), MlpOptions{});
  MlpOptions banded;
  banded.gemm2 = {baton::ops::GemmOperands::plain, 192, {}, {}, true, {}};
  EXPECT_EQ(baton::ops::mlp_options_from_string(baton::ops::mlp_options_to_string(banded)).value(), banded);
  // A cache written before band pairs (four parts per GEMM) still parses, band_pairs left empty.
  auto old = baton::ops::mlp_options_from_string(
      "policy=none;gemm1=plain/96/3/1;gemm2=auto/auto/auto/auto;group_m=4;l2_prefetch_mb=0;launch=pdl");
  ASSERT_TRUE(old.ok()) << old.error().to_string();
  EXPECT_TRUE(old.value().gemm1.cta_pairs.value_or(false));
  EXPECT_FALSE(old.value().gemm1.band_pairs.has_value());
  // One written before persistent CTAs (five parts) too, persistent left empty.
  auto five = baton::ops::mlp_options_from_string(
      "policy=none;gemm1=plain/192/1/auto/1;gemm2=auto/auto/auto/auto/auto;group_m=4;l2_prefetch_mb=0;launch=pdl");
  ASSERT_TRUE(five.ok()) << five.error().to_string();
  EXPECT_TRUE(five.value().gemm1.band_pairs.value_or(false));
  EXPECT_FALSE(five.value().gemm1.persistent.has_value());
  // One written before stream-K (six parts) too, stream_k left empty.
  auto six = baton::ops::mlp_options_from_string(
      "policy=none;gemm1=plain/192/1/auto/auto/1;gemm2=auto/auto/auto/auto/auto/0;group_m=4;l2_prefetch_mb=0;launch=pdl");
  ASSERT_TRUE(six.ok()) << six.error().to_string();
  EXPECT_TRUE(six.value().gemm1.persistent.value_or(false));
  EXPECT_FALSE(six.value().gemm1.stream_k.has_value());
}

TEST(MlpOptionsText, RefusesBadTextNamingTheField) {
  const std::string good = baton::ops::mlp_options_to_string(MlpOptions{});
  auto expect_bad = [](const std::string& text, const std::string& what) {
    auto r = baton::ops::mlp_options_from_string(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.error().code(), errc::invalid_argument);
    EXPECT_NE(r.error().message().find(what), std::string::npos) << r.error().message();
  };
  expect_bad("policy=sometimes;" + good.substr(good.find(';') + 1), "unknown policy 'sometimes'");
  expect_bad(good + ";warp_specialized=1", "unknown field 'warp_specialized'");
  expect_bad(good.substr(0, good.rfind(';')), "no launch");
  expect_bad("gemm1=auto/auto/auto/auto", "no policy");
  std::string bad_int = good;
  bad_int.replace(bad_int.find("group_m=auto"), 12, "group_m=x2");
  expect_bad(bad_int, "group_m = 'x2' is malformed");
  std::string bad_gemm = good;
  bad_gemm.replace(bad_gemm.find("gemm2=auto/auto/auto/auto/auto/auto/auto"), 40, "gemm2=diagonal/auto/auto/auto/auto");
  expect_bad(bad_gemm, "gemm2 = 'diagonal/auto/auto/auto/auto' is malformed");
  std::string short_gemm = good;
  short_gemm.replace(short_gemm.find("gemm1=auto/auto/auto/auto/auto/auto/auto"), 40, "gemm1=plain/128");
  expect_bad(short_gemm, "gemm1 = 'plain/128' is malformed");
  std::string bad_band = good;
  bad_band.replace(bad_band.find("gemm1=auto/auto/auto/auto/auto/auto/auto"), 40, "gemm1=auto/auto/auto/auto/yes");
  expect_bad(bad_band, "gemm1 = 'auto/auto/auto/auto/yes' is malformed (a GEMM: "
                       "operands/tile/split_k/cta_pairs/band_pairs/persistent/stream_k");
  std::string bad_persistent = good;
  bad_persistent.replace(bad_persistent.find("gemm1=auto/auto/auto/auto/auto/auto/auto"), 40, "gemm1=auto/auto/auto/auto/auto/2");
  expect_bad(bad_persistent, "gemm1 = 'auto/auto/auto/auto/auto/2' is malformed");
  std::string long_gemm = good;
  long_gemm.replace(long_gemm.find("gemm1=auto/auto/auto/auto/auto/auto/auto"), 40, "gemm1=auto/auto/auto/auto/auto/auto/auto/auto");
  expect_bad(long_gemm, "gemm1 = 'auto/auto/auto/auto/auto/auto/auto/auto' is malformed");
  std::string bad_stream_k = good;
  bad_stream_k.replace(bad_stream_k.find("gemm2=auto/auto/auto/auto/auto/auto/auto"), 40,
                       "gemm2=auto/auto/auto/auto/auto/auto/sk");
  expect_bad(bad_stream_k, "gemm2 = 'auto/auto/auto/auto/auto/auto/sk' is malformed");
  expect_bad("policy=row;gemm1", "'gemm1' is not name=value");
}

TEST(MlpTuneKey, SeparatesShapesOptionsAndDevices) {
  const baton::ops::MlpShape a{128, 8192, 2752, baton::ops::Activation::swiglu};
  const std::string dev = baton::ops::tune_device_key("NVIDIA H200", 9, 0, 132);
  EXPECT_EQ(dev, "NVIDIA H200/sm_90/132sms");
  const std::string k = baton::ops::mlp_tune_key(a, MlpOptions{}, dev);
  EXPECT_NE(k, baton::ops::mlp_tune_key({129, 8192, 2752, baton::ops::Activation::swiglu}, MlpOptions{}, dev));
  EXPECT_NE(k, baton::ops::mlp_tune_key({128, 8192, 2752, baton::ops::Activation::gelu}, MlpOptions{}, dev));
  MlpOptions forced;
  forced.gemm1.split_k = 2;
  EXPECT_NE(k, baton::ops::mlp_tune_key(a, forced, dev));
  EXPECT_NE(k, baton::ops::mlp_tune_key(a, MlpOptions{}, baton::ops::tune_device_key("NVIDIA H100", 9, 0, 132)));
  EXPECT_NE(k, baton::ops::mlp_tune_key(a, MlpOptions{}, baton::ops::tune_device_key("NVIDIA H200", 9, 0, 66)));
  EXPECT_EQ(baton::ops::tune_device_key("a\tb;c", 9, 0, 1), "a b c/sm_90/1sms");  // no separators in names
  // A kernel set without every optional form tuned over fewer candidates: its own key; a complete
  // set's key is the one it always was.
  EXPECT_EQ(k, baton::ops::mlp_tune_key(a, MlpOptions{}, dev, baton::ops::MlpKernelForms{}));
  const std::string lacking = baton::ops::mlp_tune_key(a, MlpOptions{}, dev, {.cta_pairs = false, .narrow_swapped = false});
  EXPECT_NE(k, lacking);
  EXPECT_NE(lacking.find(";kernels_lack=cta_pairs,narrow_swapped"), std::string::npos) << lacking;
  EXPECT_EQ(k.find("kernels_lack"), std::string::npos) << k;
}

TEST(TuneCache, FindPutAndPersistAcrossProcesses) {
  TuneCache c;
  EXPECT_FALSE(c.find("k").has_value());
  ASSERT_TRUE(c.put("mlp;m=1", "policy=none").ok());
  ASSERT_TRUE(c.put("mlp;m=2", "policy=row").ok());
  ASSERT_TRUE(c.put("mlp;m=1", "policy=kblock").ok());  // replaces
  EXPECT_EQ(c.size(), 2u);
  EXPECT_EQ(*c.find("mlp;m=1"), "policy=kblock");
  const std::string path = temp_path("baton_tune_cache_test.txt");
  std::remove(path.c_str());
  TuneCache later;
  ASSERT_TRUE(later.load(path).ok());  // a missing file: an empty cache
  EXPECT_EQ(later.size(), 0u);
  ASSERT_TRUE(c.save(path).ok());
  ASSERT_TRUE(later.load(path).ok());
  EXPECT_EQ(later.size(), 2u);
  EXPECT_EQ(*later.find("mlp;m=2"), "policy=row");
  // Loading merges, the file's entries winning.
  TuneCache mine;
  ASSERT_TRUE(mine.put("mlp;m=2", "policy=none").ok());
  ASSERT_TRUE(mine.put("mlp;m=3", "policy=none").ok());
  ASSERT_TRUE(mine.load(path).ok());
  EXPECT_EQ(mine.size(), 3u);
  EXPECT_EQ(*mine.find("mlp;m=2"), "policy=row");
  std::remove(path.c_str());
}

TEST(TuneCache, RefusesBadInputAndLosesNothing) {
  TuneCache c;
  EXPECT_EQ(c.put("", "v").code(), errc::invalid_argument);
  EXPECT_EQ(c.put("a\tb", "v").code(), errc::invalid_argument);
  EXPECT_EQ(c.put("k", "two\nlines").code(), errc::invalid_argument);
  ASSERT_TRUE(c.put("kept", "v").ok());
  const std::string path = temp_path("baton_tune_cache_bad.txt");
  {
    std::ofstream f(path);
    f << "something else\n";
  }
  baton::status s = c.load(path);
  EXPECT_EQ(s.code(), errc::invalid_argument);
  EXPECT_NE(s.message().find("is not a baton tuning cache"), std::string::npos) << s.message();
  {
    std::ofstream f(path);
    f << TuneCache::kHeader << "\nk1\tv1\nno tab here\n";
  }
  s = c.load(path);
  EXPECT_EQ(s.code(), errc::invalid_argument);
  EXPECT_NE(s.message().find(path + ":3: expected 'key<TAB>value'"), std::string::npos) << s.message();
  EXPECT_EQ(c.size(), 1u);  // nothing of the bad file merged; what was there stays
  EXPECT_FALSE(c.find("k1").has_value());
  EXPECT_EQ(c.save("/nonexistent-dir/x/cache").code(), errc::invalid_argument);
  std::remove(path.c_str());
}
