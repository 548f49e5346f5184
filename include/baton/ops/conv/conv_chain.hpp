// baton/ops/conv/conv_chain.hpp — the host side of baton::ops::Conv2dChain (conv_chain.cuh): its
// shapes, options and plan. No CUDA: the plan is tested on the CPU.
//
// The chain is two 3x3, stride-1, pad-1 convolutions over NHWC bf16 activations (implicit GEMMs
// on 128-pixel x 64-channel tiles, k-blocks of 64 input channels per filter tap):
//   resnet_basic  Y = ReLU(conv(X, W1) + b1);  Out = ReLU(conv(Y, W2) + b2 + X)   (c == k)
//   vgg_pair      Y = ReLU(conv(X, W1) + b1);  Out = ReLU(conv(Y, W2) + b2)
// X [n, h, w, c], W1 [k, 3, 3, c], W2 [k, 3, 3, k], b1, b2 [k], Y and Out [n, h, w, k].
//
// Policies (ConvChainPolicy):
//   none    no semaphores: conv2 PDL-launched behind conv1 (its filters stream first, then
//           griddepcontrol.wait before its first load of Y), or two plain launches (ConvLaunch)
//   tile    conv2's tile waits, before its first load of Y, for every conv1 tile its 3x3 halo reads
//   kblock  conv2's k-block (r, s, cb) waits only for the conv1 tiles holding filter row r's input
//           rows: the tile's first taps start while the rows below are still being written
// Both waiting policies are batonc's (conv_chain.baton -> conv_chain_policies.hpp), proven against
// deps::conv_exact by Chain::validate before any launch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "baton/status.hpp"
#include "baton/tile.hpp"

namespace baton::ops {

enum class ConvBlock { resnet_basic, vgg_pair };
enum class ConvChainPolicy { automatic, none, tile, kblock };
enum class ConvLaunch { pdl, serial };  // policy none: conv2 PDL-launched, or after conv1

constexpr const char* to_string(ConvBlock b) { return b == ConvBlock::resnet_basic ? "resnet_basic" : "vgg_pair"; }
constexpr const char* to_string(ConvChainPolicy p) {
  switch (p) {
    case ConvChainPolicy::automatic: return "automatic";
    case ConvChainPolicy::none: return "none";
    case ConvChainPolicy::tile: return "tile";
    default: return "kblock";
  }
}
constexpr const char* to_string(ConvLaunch l) { return l == ConvLaunch::pdl ? "pdl" : "serial"; }

// The kernels' tile (conv_kernels.cuh static_asserts the same numbers).
inline constexpr int kConvTileM = 128, kConvTileN = 64, kConvTileK = 64;

struct ConvChainShape {
  int n = 1, h = 0, w = 0;  // batch and image
  int c = 0;                // input channels
  int k = 0;                // output channels of both convolutions (resnet_basic: k == c)
  ConvBlock block = ConvBlock::resnet_basic;
  int stride = 1, pad = 1;  // the op's kernels: 1 and 1 only (checked)
  std::string str() const {
    return std::string(to_string(block)) + " n=" + std::to_string(n) + " h=" + std::to_string(h) +
           " w=" + std::to_string(w) + " c=" + std::to_string(c) + " k=" + std::to_string(k);
  }
  int64_t pixels() const { return int64_t(n) * h * w; }
  Grid grid() const { return Grid{int(ceil_div(pixels(), int64_t(kConvTileM))), ceil_div(k, kConvTileN), 1}; }
  int k_blocks1() const { return 9 * ceil_div(c, kConvTileK); }
  int k_blocks2() const { return 9 * ceil_div(k, kConvTileK); }
};

// What the shape must be for the op's kernels; the message names the field and the fix.
[[nodiscard]] inline status validate_conv_chain(const ConvChainShape& s) {
  const std::string what = "baton::ops::Conv2dChain " + s.str() + ": ";
  if (s.n < 1 || s.h < 1 || s.w < 1 || s.c < 1 || s.k < 1)
    return status(errc::invalid_argument, what + "n, h, w, c and k must be >= 1");
  if (s.stride != 1 || s.pad != 1)
    return status(errc::not_supported, what + "stride " + std::to_string(s.stride) + " and pad " +
                                           std::to_string(s.pad) + ": the op's kernels are 3x3, stride 1, pad 1");
  if (s.c % 8 != 0 || s.k % 8 != 0)
    return status(errc::not_supported, what + "c and k must be multiples of 8 (TMA needs 16-byte channel strides); "
                                              "pad the channels with zeros");
  if (s.block == ConvBlock::resnet_basic && s.c != s.k)
    return status(errc::invalid_argument, what + "a ResNet basic block adds X to conv2's output: c must equal k (a "
                                                 "projection shortcut is not this op)");
  if (s.pixels() > int64_t(INT32_MAX) / 2)
    return status(errc::not_supported, what + "n*h*w exceeds 2^30 pixels");
  return {};
}

struct ConvChainOptions {
  ConvChainPolicy policy = ConvChainPolicy::automatic;
  std::optional<int> split_k1, split_k2;  // each convolution's split-K parts (empty: the plan's)
  std::optional<int> group_m;             // the tile order, Grouped{group_m} (1: row-major)
  std::optional<ConvLaunch> launch;       // policy none only
  bool operator==(const ConvChainOptions&) const = default;
};

struct ConvChainPlan {
  ConvChainShape shape{};
  ConvChainPolicy policy = ConvChainPolicy::none;
  int split_k1 = 1, split_k2 = 1;
  int group_m = 1;
  ConvLaunch launch = ConvLaunch::pdl;
  std::string reason;
  std::string log_line() const {
    return "baton::ops::Conv2dChain " + shape.str() + ": policy " + to_string(policy) + ", split-K " +
           std::to_string(split_k1) + "/" + std::to_string(split_k2) + ", Grouped{" + std::to_string(group_m) + "}" +
           (policy == ConvChainPolicy::none ? std::string(", ") + to_string(launch) : std::string()) + " (" + reason + ")";
  }
};

// The split-K rule's cost, per convolution: a k-block (64 channels of one filter tap) of a one-wave
// convolution costs ~0.19 us, and splitting costs 2.5 + 0.2 us per part (the fp32 partials' round
// trip and the parts' serial reduction). Fit on the chains tuning timed split and unsplit on an H200
// and an H100 (docs/conv.md, "The plan"): 3x3 convolutions over 64-128 channels (9-18 k-blocks) ran
// slower split 2-6 ways, those over 160-512 channels that leave most SMs idle faster split 2-8 ways.
inline constexpr double kConvKBlockUs = 0.19, kConvSplitFixedUs = 2.5, kConvSplitPartUs = 0.2;

// Split-K parts for a convolution of `tiles` output tiles and `k_blocks` k-blocks on `sms` SMs: the
// most parts that keep every part's CTA on its own SM (tiles * parts <= sms), at most 8, each part at
// least 3 k-blocks (a part's pipeline needs a few k-blocks to fill; conv_split_k_max), if the
// k-blocks that takes off the critical path (k_blocks - k_blocks / parts, at kConvKBlockUs each)
// outweigh what the split costs; else 1. So a 3x3 convolution over 64 or 128 channels is never
// split, one over 512 channels that leaves most SMs idle is.
constexpr int conv_split_k_max(int tiles, int k_blocks, int sms) {
  if (tiles <= 0 || k_blocks <= 0 || sms <= 0) return 1;
  int parts = sms / tiles;
  if (parts > 8) parts = 8;
  if (parts > k_blocks / 3) parts = k_blocks / 3;
  return parts < 1 ? 1 : parts;
}
constexpr int conv_split_k(int tiles, int k_blocks, int sms) {
  const int parts = conv_split_k_max(tiles, k_blocks, sms);
  if (parts < 2) return 1;
  const double longest = double((k_blocks + parts - 1) / parts);
  const double saved = (double(k_blocks) - longest) * kConvKBlockUs;
  return saved > kConvSplitFixedUs + kConvSplitPartUs * parts ? parts : 1;
}

// The plan for a shape on `sms` SMs. Requests in `o` are checked and kept; the rest is chosen:
//   policy   automatic -> none, conv2 PDL-launched: the waiting policies measured 1.1-1.3x the PDL
//            chain at every ResNet-38 and VGG-19 shape (docs/conv.md), and tuning kept none at all of
//            them. Below one wave conv1's tiles all end together, so a waiting conv2 tile cannot start
//            earlier than griddepcontrol.wait lets it; beyond, the SMs are busy anyway. tile / kblock
//            run when asked, or when tuning times them faster.
//   split-K  conv_split_k per convolution.
//   order    row-major (Grouped{1}): pixel order, so conv2's first row bands need conv1's first.
[[nodiscard]] inline result<ConvChainPlan> plan_conv_chain(const ConvChainShape& s, int sms, const ConvChainOptions& o = {}) {
  BATON_TRY(validate_conv_chain(s));
  if (sms < 1) return status(errc::invalid_argument, "baton::ops::Conv2dChain: sms must be >= 1");
  ConvChainPlan p;
  p.shape = s;
  const Grid g = s.grid();
  const int tiles = g.size();
  auto check_split = [&](std::optional<int> v, int kb, const char* which) -> status {
    if (v && (*v < 1 || *v > kb))
      return status(errc::invalid_argument, "baton::ops::Conv2dChain " + s.str() + ": " + which + " = " +
                                                std::to_string(*v) + " must be in [1, " + std::to_string(kb) +
                                                "] (the convolution's k-blocks)");
    return {};
  };
  BATON_TRY(check_split(o.split_k1, s.k_blocks1(), "split_k1"));
  BATON_TRY(check_split(o.split_k2, s.k_blocks2(), "split_k2"));
  if (o.group_m && *o.group_m < 1)
    return status(errc::invalid_argument, "baton::ops::Conv2dChain: group_m must be >= 1");
  if (o.launch && o.policy != ConvChainPolicy::none)
    return status(errc::invalid_argument, "baton::ops::Conv2dChain: launch is for policy none (the waiting "
                                          "policies always PDL-launch conv2)");
  p.split_k1 = o.split_k1.value_or(conv_split_k(tiles, s.k_blocks1(), sms));
  p.split_k2 = o.split_k2.value_or(conv_split_k(tiles, s.k_blocks2(), sms));
  p.group_m = o.group_m.value_or(1);
  p.launch = o.launch.value_or(ConvLaunch::pdl);
  if (o.policy != ConvChainPolicy::automatic) {
    p.policy = o.policy;
    p.reason = "asked";
  } else {
    p.policy = ConvChainPolicy::none;
    const int64_t ctas = int64_t(tiles) * p.split_k2;
    p.reason = std::to_string(ctas) + " CTAs per convolution (" +
               (ctas <= sms ? std::string("one wave") : std::to_string((ctas + sms - 1) / sms) + " waves") + " of " +
               std::to_string(sms) + " SMs): PDL, no semaphores (halo waits measured 1.10-1.32x slower at every "
               "size; docs/conv.md)";
  }
  return p;
}

}  // namespace baton::ops
