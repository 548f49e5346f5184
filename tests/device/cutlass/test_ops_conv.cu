// Device tests (label gpu) of the conv-chain op, baton::ops::Conv2dChain (include/baton/ops/conv/),
// as CompiledConv2dChain over the library baton::conv_kernels (kernels/conv/), the kernels the conv
// bench times:
//   * both blocks (ResNet basic: conv2 adds X; VGG pair) x every policy (none with conv2 PDL-launched
//     or after conv1, tile and kblock halo waits, automatic) x shapes: ragged pixel counts (n*h*w not
//     a multiple of 128, tiles spanning images), 1x1 images (only the centre tap in bounds), channels
//     8 (one k-block of 8 of 64 channels), 40 and 72 (partial channel blocks), 512 (deep K);
//   * split-K on either convolution, under every policy, including the residual epilogue (its C
//     source is loaded only by the part that finishes the tile);
//   * a 10^4-pass random-delay stress of the waiting chains (each tile's loads start after up to
//     3 us): the output must equal, bit for bit, the unsynchronized chain's;
//   * tuning (ConvChainRunOptions::tune): the chain it keeps is correct;
//   * errors: shapes and pointers the kernels cannot take are refused by create() with the field
//     named, and nothing is launched (the output keeps its poison).
// Each case NaN-poisons the output (and Y) before every run and compares it with an fp64 CPU
// reference (Y rounded to bf16 as the kernel stores it): relative Frobenius error < 1e-2 and every
// element within 2e-2 * max|ref|.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "../device_test_util.cuh"
#include "random_bf16.hpp"
#include "baton/ops/conv/conv_chain.cuh"

using namespace baton;
using baton::ops::ConvBlock;
using baton::ops::ConvChainPolicy;
using baton::ops::ConvLaunch;
using bf16 = ::cutlass::bfloat16_t;
using Op = ops::CompiledConv2dChain;

namespace {

using bt::parallel_for;

// out[n, p, q, k] = sum x[n, p + r - 1, q + s - 1, c] * w[k, r, s, c] (3x3, stride 1, pad 1).
void conv_ref(const std::vector<float>& x, const std::vector<float>& w, int n, int h, int wd, int c, int k,
              std::vector<double>& out) {
  out.assign(size_t(n) * h * wd * k, 0.0);
  parallel_for(size_t(n) * h * wd, [&](size_t pix) {
    const int q = int(pix % wd), p = int(pix / wd % h), b = int(pix / (size_t(wd) * h));
    for (int o = 0; o < k; ++o) {
      double acc = 0;
      for (int r = 0; r < 3; ++r)
        for (int s = 0; s < 3; ++s) {
          const int hh = p + r - 1, ww = q + s - 1;
          if (hh < 0 || hh >= h || ww < 0 || ww >= wd) continue;
          const float* xp = &x[((size_t(b) * h + hh) * wd + ww) * c];
          const float* wp = &w[((size_t(o) * 3 + r) * 3 + s) * c];
          for (int i = 0; i < c; ++i) acc += double(xp[i]) * double(wp[i]);
        }
      out[pix * k + o] = acc;
    }
  });
}

struct Data {
  ops::ConvChainShape shape;
  std::vector<bf16> x, w1, b1, w2, b2;
  std::vector<double> ref;  // [n, h, w, k]
};

Data make_data(const ops::ConvChainShape& s) {
  Data d{s, {}, {}, {}, {}, {}, {}};
  const size_t px = size_t(s.pixels());
  d.x = bt::random_bf16(px * s.c, 21, 1.0f);
  d.w1 = bt::random_bf16(size_t(s.k) * 9 * s.c, 22, 2.0f / std::sqrt(9.0f * s.c));
  d.b1 = bt::random_bf16(size_t(s.k), 23, 0.2f);
  d.w2 = bt::random_bf16(size_t(s.k) * 9 * s.k, 24, 2.0f / std::sqrt(9.0f * s.k));
  d.b2 = bt::random_bf16(size_t(s.k), 25, 0.2f);
  auto f = [](const std::vector<bf16>& v) {
    std::vector<float> o(v.size());
    for (size_t i = 0; i < v.size(); ++i) o[i] = float(v[i]);
    return o;
  };
  std::vector<double> a;
  conv_ref(f(d.x), f(d.w1), s.n, s.h, s.w, s.c, s.k, a);
  std::vector<float> y(a.size());
  for (size_t i = 0; i < a.size(); ++i) y[i] = float(bf16(float(std::max(0.0, a[i] + double(float(d.b1[i % s.k]))))));
  conv_ref(y, f(d.w2), s.n, s.h, s.w, s.k, s.k, d.ref);
  for (size_t i = 0; i < d.ref.size(); ++i) {
    double v = d.ref[i] + double(float(d.b2[i % s.k]));
    if (s.block == ConvBlock::resnet_basic) v += double(float(d.x[i]));  // c == k: same [pixel, channel] index
    d.ref[i] = std::max(0.0, v);
  }
  return d;
}

const Data& data(const ops::ConvChainShape& s) {
  static std::map<std::string, Data> cache;
  auto it = cache.find(s.str());
  if (it == cache.end()) it = cache.emplace(s.str(), make_data(s)).first;
  return it->second;
}

struct Buffers {
  bt::dev_ptr<bf16> x, w1, b1, w2, b2, y, out;
  ops::ConvChainTensors t;
};

Buffers upload(const Data& d, cudaStream_t stream) {
  Buffers b;
  const ops::ConvChainShape& s = d.shape;
  const size_t px = size_t(s.pixels());
  b.x = bt::dev_alloc<bf16>(px * s.c);
  b.w1 = bt::dev_alloc<bf16>(d.w1.size());
  b.b1 = bt::dev_alloc<bf16>(d.b1.size());
  b.w2 = bt::dev_alloc<bf16>(d.w2.size());
  b.b2 = bt::dev_alloc<bf16>(d.b2.size());
  b.y = bt::dev_alloc<bf16>(px * s.k);
  b.out = bt::dev_alloc<bf16>(px * s.k);
  auto put = [&](bf16* dst, const std::vector<bf16>& v) {
    (void)cudaMemcpyAsync(dst, v.data(), v.size() * sizeof(bf16), cudaMemcpyHostToDevice, stream);
  };
  put(b.x.get(), d.x);
  put(b.w1.get(), d.w1);
  put(b.b1.get(), d.b1);
  put(b.w2.get(), d.w2);
  put(b.b2.get(), d.b2);
  b.t = {b.x.get(), b.w1.get(), b.b1.get(), b.w2.get(), b.b2.get(), b.y.get(), b.out.get()};
  return b;
}

class ConvChainTest : public bt::DeviceTest {
 protected:
  // Runs the op `runs` times with the output and Y NaN-poisoned before each, checks every run.
  void run_and_check(const ops::ConvChainShape& s, ops::ConvChainRunOptions o, int runs = 3,
                     ops::ConvChainPlan* plan_out = nullptr) {
    const Data& d = data(s);
    Buffers b = upload(d, stream);
    o.log = false;
    auto op = Op::create(s, b.t, stream, o);
    ASSERT_TRUE(op.ok()) << s.str() << ": " << op.error().to_string();
    if (plan_out) *plan_out = op.value()->plan();
    const size_t n_out = size_t(s.pixels()) * s.k;
    for (int run = 0; run < runs; ++run) {
      BT_CUDA(cudaMemsetAsync(b.out.get(), 0xFF, n_out * sizeof(bf16), stream));  // NaN
      BT_CUDA(cudaMemsetAsync(b.y.get(), 0xFF, n_out * sizeof(bf16), stream));
      BT_ASSERT_OK(op.value()->enqueue(stream));
      BT_ASSERT_OK(op.value()->check_errors(stream));
      auto out = download(b.out.get(), n_out);
      double err = 0, norm = 0, maxref = 0;
      for (size_t i = 0; i < n_out; ++i) maxref = std::max(maxref, std::abs(d.ref[i]));
      size_t bad = 0, first_bad = 0;
      for (size_t i = 0; i < n_out; ++i) {
        const double v = double(float(out[i])), e = v - d.ref[i];
        err += e * e;
        norm += d.ref[i] * d.ref[i];
        if (!(std::abs(e) <= 2e-2 * maxref + 1e-3)) {
          if (bad++ == 0) first_bad = i;
        }
      }
      const double rel = std::sqrt(err / std::max(norm, 1e-30));
      ASSERT_TRUE(rel < 1e-2) << s.str() << " " << op.value()->plan().log_line() << ": relative error " << rel;
      ASSERT_EQ(bad, 0u) << s.str() << " " << op.value()->plan().log_line() << ": " << bad
                         << " elements off, first at " << first_bad << " (" << float(out[first_bad]) << " vs "
                         << d.ref[first_bad] << ")";
    }
  }
};

ops::ConvChainShape resnet(int n, int h, int w, int c) { return {n, h, w, c, c, ConvBlock::resnet_basic}; }
ops::ConvChainShape vgg(int n, int h, int w, int c, int k) { return {n, h, w, c, k, ConvBlock::vgg_pair}; }

const ops::ConvChainShape kShapes[] = {
    resnet(1, 7, 7, 64),     // 49 pixels: one partial tile
    resnet(2, 9, 13, 72),    // 234 pixels, tiles span images; 72 channels: a partial channel block
    vgg(2, 9, 13, 72, 40),   // c != k, 40 output channels (a partial tile column)
    resnet(1, 1, 1, 64),     // 1x1 images: only the centre tap in bounds
    resnet(3, 5, 6, 8),      // 8 channels
    resnet(2, 28, 28, 64),   // 1568 pixels: 13 row bands
    vgg(1, 14, 14, 128, 128),
    resnet(1, 7, 7, 512),    // deep K: 72 k-blocks per tile
};

TEST_F(ConvChainTest, EveryPolicyMatchesTheReference) {
  for (const auto& s : kShapes)
    for (ConvChainPolicy p : {ConvChainPolicy::none, ConvChainPolicy::tile, ConvChainPolicy::kblock, ConvChainPolicy::automatic}) {
      SCOPED_TRACE(s.str() + " policy " + ops::to_string(p));
      ops::ConvChainRunOptions o;
      o.plan.policy = p;
      run_and_check(s, o);
      if (HasFatalFailure()) return;
    }
}

TEST_F(ConvChainTest, NoneInTwoLaunchesAndPdl) {
  for (const auto& s : {resnet(2, 9, 13, 72), vgg(1, 14, 14, 128, 128)})
    for (ConvLaunch l : {ConvLaunch::pdl, ConvLaunch::serial}) {
      ops::ConvChainRunOptions o;
      o.plan.policy = ConvChainPolicy::none;
      o.plan.launch = l;
      run_and_check(s, o);
      if (HasFatalFailure()) return;
    }
}

TEST_F(ConvChainTest, SplitKUnderEveryPolicy) {
  struct Split {
    int s1, s2;
  };
  for (const auto& s : {resnet(1, 7, 7, 512), resnet(2, 9, 13, 72), vgg(1, 14, 14, 128, 128)})
    for (Split sp : {Split{1, 1}, Split{3, 1}, Split{1, 3}, Split{4, 5}})
      for (ConvChainPolicy p : {ConvChainPolicy::none, ConvChainPolicy::tile, ConvChainPolicy::kblock}) {
        if (sp.s1 > s.k_blocks1() || sp.s2 > s.k_blocks2()) continue;
        SCOPED_TRACE(s.str() + " split " + std::to_string(sp.s1) + "/" + std::to_string(sp.s2) + " " + ops::to_string(p));
        ops::ConvChainRunOptions o;
        o.plan.policy = p;
        o.plan.split_k1 = sp.s1;
        o.plan.split_k2 = sp.s2;
        ops::ConvChainPlan plan;
        run_and_check(s, o, 3, &plan);
        if (HasFatalFailure()) return;
        EXPECT_EQ(plan.split_k1, sp.s1);
        EXPECT_EQ(plan.split_k2, sp.s2);
      }
}

TEST_F(ConvChainTest, RowMajorAndGroupedOrders) {
  for (int g : {1, 2, 5}) {
    ops::ConvChainRunOptions o;
    o.plan.policy = ConvChainPolicy::kblock;
    o.plan.group_m = g;
    run_and_check(resnet(2, 28, 28, 64), o);
    if (HasFatalFailure()) return;
  }
}

TEST_F(ConvChainTest, TunedChainIsCorrect) {
  ops::ConvChainRunOptions o;
  o.tune = true;
  o.tune_cache = false;
  o.tune_iters = 10;
  ops::ConvChainPlan plan;
  run_and_check(resnet(1, 14, 14, 64), o, 3, &plan);
  EXPECT_NE(plan.reason.find("tuned"), std::string::npos) << plan.log_line();
}

// The waiting chains under random per-tile delays, 10^4 passes: conv2's output must equal the
// unsynchronized chain's bit for bit (the same kernels, the same split-K order). A count of
// differing elements is accumulated on the device after every pass.
__global__ void count_mismatch(const uint16_t* a, const uint16_t* b, size_t n, unsigned long long* count) {
  unsigned long long local = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    local += a[i] != b[i];
  if (local) atomicAdd(count, local);
}

TEST_F(ConvChainTest, RandomDelayStressMatchesBitForBit) {
  const auto s = resnet(2, 14, 14, 64);  // 392 pixels: 4 row bands, each reading its neighbours' halo
  const Data& d = data(s);
  Buffers b = upload(d, stream);
  const size_t n_out = size_t(s.pixels()) * s.k;
  auto golden = bt::dev_alloc<bf16>(n_out);
  {
    ops::ConvChainRunOptions o;
    o.log = false;
    o.plan.policy = ConvChainPolicy::none;
    o.plan.launch = ConvLaunch::serial;
    o.plan.split_k1 = o.plan.split_k2 = 1;
    auto ref = Op::create(s, b.t, stream, o);
    ASSERT_TRUE(ref.ok()) << ref.error().to_string();
    BT_ASSERT_OK(ref.value()->enqueue(stream));
    BT_CUDA(cudaMemcpyAsync(golden.get(), b.out.get(), n_out * sizeof(bf16), cudaMemcpyDeviceToDevice, stream));
    BT_ASSERT_OK(ref.value()->check_errors(stream));
  }
  auto count = bt::dev_alloc<unsigned long long>(1);
  const int passes = bt::scaled(10000);
  for (ConvChainPolicy p : {ConvChainPolicy::kblock, ConvChainPolicy::tile}) {
    ops::ConvChainRunOptions o;
    o.log = false;
    o.plan.policy = p;
    o.plan.split_k1 = o.plan.split_k2 = 1;
    o.debug_max_tile_delay_ns = 3000;
    auto op = Op::create(s, b.t, stream, o);
    ASSERT_TRUE(op.ok()) << op.error().to_string();
    BT_CUDA(cudaMemsetAsync(count.get(), 0, sizeof(unsigned long long), stream));
    for (int i = 0; i < passes; ++i) {
      BT_CUDA(cudaMemsetAsync(b.out.get(), 0xFF, n_out * sizeof(bf16), stream));
      BT_ASSERT_OK(op.value()->enqueue(stream));
      count_mismatch<<<64, 256, 0, stream>>>(reinterpret_cast<const uint16_t*>(b.out.get()),
                                             reinterpret_cast<const uint16_t*>(golden.get()), n_out, count.get());
      if (i % 1000 == 999) BT_ASSERT_OK(op.value()->check_errors(stream));
    }
    BT_ASSERT_OK(op.value()->check_errors(stream));
    auto c = download(count.get(), 1);
    EXPECT_EQ(c[0], 0ull) << ops::to_string(p) << ": " << c[0] << " mismatching elements over " << passes << " passes";
  }
}

TEST_F(ConvChainTest, BadShapesAndPointersAreRefusedAndNothingRuns) {
  const auto good = resnet(1, 7, 7, 64);
  const Data& d = data(good);
  Buffers b = upload(d, stream);
  const size_t n_out = size_t(good.pixels()) * good.k;
  BT_CUDA(cudaMemsetAsync(b.out.get(), 0xFF, n_out * sizeof(bf16), stream));
  struct Bad {
    const char* name;
    ops::ConvChainShape s;
    ops::ConvChainTensors t;
    errc code;
    const char* mentions;
  };
  ops::ConvChainTensors misaligned = b.t;
  misaligned.x = static_cast<const bf16*>(b.t.x) + 1;
  ops::ConvChainTensors null_w2 = b.t;
  null_w2.w2 = nullptr;
  ops::ConvChainTensors aliased = b.t;
  aliased.out = const_cast<void*>(b.t.x);
  auto with = [&](auto edit) {
    ops::ConvChainShape s = good;
    edit(s);
    return s;
  };
  const Bad cases[] = {
      {"channels not a multiple of 8", with([](auto& s) { s.c = s.k = 12; }), b.t, errc::not_supported, "multiples of 8"},
      {"stride 2", with([](auto& s) { s.stride = 2; }), b.t, errc::not_supported, "stride 1, pad 1"},
      {"pad 0", with([](auto& s) { s.pad = 0; }), b.t, errc::not_supported, "stride 1, pad 1"},
      {"resnet c != k", with([](auto& s) { s.k = 128; }), b.t, errc::invalid_argument, "c must equal k"},
      {"zero batch", with([](auto& s) { s.n = 0; }), b.t, errc::invalid_argument, ">= 1"},
      {"misaligned x", good, misaligned, errc::not_supported, "x is not 16-byte aligned"},
      {"null w2", good, null_w2, errc::invalid_argument, "w2 is null"},
      {"out aliases x", good, aliased, errc::invalid_argument, "distinct"},
  };
  for (const Bad& c : cases) {
    ops::ConvChainRunOptions o;
    o.log = false;
    auto op = Op::create(c.s, c.t, stream, o);
    ASSERT_FALSE(op.ok()) << c.name;
    EXPECT_EQ(op.error().code(), c.code) << c.name << ": " << op.error().to_string();
    EXPECT_NE(op.error().to_string().find(c.mentions), std::string::npos) << c.name << ": " << op.error().to_string();
  }
  {
    ops::ConvChainRunOptions o;
    o.log = false;
    o.plan.split_k2 = 100;  // 9 k-blocks
    auto op = Op::create(good, b.t, stream, o);
    ASSERT_FALSE(op.ok());
    EXPECT_NE(op.error().to_string().find("split_k2"), std::string::npos) << op.error().to_string();
  }
  auto out = download(b.out.get(), n_out);
  size_t touched = 0;
  for (const bf16& v : out) touched += !std::isnan(float(v));
  EXPECT_EQ(touched, 0u) << "a refused create() must launch nothing";
}

}  // namespace
