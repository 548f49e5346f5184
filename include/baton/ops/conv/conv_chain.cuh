// baton/ops/conv/conv_chain.cuh — baton::ops::Conv2dChain: two dependent 3x3 convolutions (a ResNet
// basic block, or a VGG pair) as one baton chain on CUTLASS 4.2 sm90 implicit-GEMM kernels.
//
//   using Op = baton::ops::CompiledConv2dChain;          // kernels from baton::conv_kernels
//   auto op = Op::create({.n = 1, .h = 56, .w = 56, .c = 64, .k = 64}, tensors, stream);
//   if (!op.ok()) { ... op.error().message() ... }      // bad shapes and pointers: nothing launched
//   BATON_TRY(op.value()->enqueue(stream));              // one pass, graph-capturable
//
// create(): plan_conv_chain (conv_chain.hpp) picks the policy, the split-K of each convolution and
// the order, or tune = true times the candidates on this GPU and keeps the fastest (cached per
// shape in TuneCache::global()). The waiting policies come from batonc (conv_chain.baton ->
// conv_chain_policies.hpp) and Chain::validate proves the chosen one against deps::conv_exact, the
// 3x3 halo tap by tap, before anything is launched: a policy that forgot the halo rows (cuSync's
// same-tile conv policy) is refused with the missed read named.
#pragma once

#include "baton/ops/conv/conv_kernels.cuh"  // first: CUTLASS (CuTe's extended GMMA shapes)

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "baton/chain.hpp"
#include "baton/dependency.hpp"
#include "baton/launch.cuh"
#include "baton/ops/conv/conv_chain.hpp"
#include "baton/ops/conv/conv_chain_policies.hpp"
#include "baton/ops/op_support.cuh"
#include "baton/ops/tuner.hpp"
#include "baton/trace.hpp"

namespace baton::ops {

static_assert(conv_kernels::kTileM == kConvTileM && conv_kernels::kTileN == kConvTileN &&
                  conv_kernels::kTileK == kConvTileK,
              "baton::ops::Conv2dChain: the plan's tile constants must match the kernels");
static_assert(std::is_same_v<conv_kernels::Policy, conv_gen::conv1_to_conv2_tile_policy>,
              "baton::ops::Conv2dChain: the kernels' policy type must be batonc's tile policy for conv_chain.baton");

// Non-owning bf16 device pointers, 16-byte aligned (TMA). X and the filters and biases must be
// written before enqueue (nothing waits for them); Y is the chain's intermediate.
struct ConvChainTensors {
  const void* x = nullptr;   // [n, h, w, c]
  const void* w1 = nullptr;  // [k, 3, 3, c]
  const void* b1 = nullptr;  // [k]
  const void* w2 = nullptr;  // [k, 3, 3, k]
  const void* b2 = nullptr;  // [k]
  void* y = nullptr;         // [n, h, w, k]
  void* out = nullptr;       // [n, h, w, k]; must not alias x (resnet_basic reads x in conv2's epilogue)
};

struct ConvChainRunOptions {
  ConvChainOptions plan{};
  int sms = 0;                              // 0: the current device's SM count
  uint64_t watchdog_ns = 2'000'000'000ull;  // bound on every wait (0: off)
  bool log = true;                          // print the plan's log line
  TileEvent* trace1 = nullptr;              // optional per-tile timelines (conv1 / conv2 tiles events)
  TileEvent* trace2 = nullptr;
  uint32_t debug_max_tile_delay_ns = 0;     // tests: a random delay before each tile's loads
  // Per-shape tuning (policy automatic): create() times the candidates on `stream` with the given
  // tensors (it overwrites y and out): none (PDL), none in two launches, tile and kblock waits,
  // each with the planned split-K, without split-K and with the most parts conv_split_k allows;
  // 5 interleaved rounds of tune_iters / 5
  // passes after ~30 ms of warm-up, median round; the plan is kept unless another is > 2% faster.
  bool tune = false;
  int tune_iters = 40;
  bool tune_cache = true;
};

template <conv_kernels::ConvKernelSet Kernels = conv_kernels::Inline>
class Conv2dChain {
 public:
  using bf16 = conv_kernels::bf16;
  Conv2dChain(const Conv2dChain&) = delete;
  Conv2dChain& operator=(const Conv2dChain&) = delete;

  // Plans, checks shapes and pointers, validates the chain (the soundness checker included),
  // allocates the workspaces (zeroed on `stream`) and builds the launches. Nothing is launched.
  [[nodiscard]] static result<std::unique_ptr<Conv2dChain>> create(const ConvChainShape& shape, const ConvChainTensors& t,
                                                                   cudaStream_t stream, const ConvChainRunOptions& o = {}) {
    BATON_TRY(validate_conv_chain(shape));
    BATON_TRY(check_tensors_(shape, t));
    BATON_TRY_ASSIGN(const int sms, detail::plan_sms(o.sms));
    if (o.tune && o.plan.policy == ConvChainPolicy::automatic) return tuned_(shape, t, stream, o, sms);
    auto plan = plan_conv_chain(shape, sms, o.plan);
    if (!plan.ok()) return plan.error();
    std::unique_ptr<Conv2dChain> op(new Conv2dChain());
    op->plan_ = plan.value();
    BATON_TRY(op->build_(t, stream, o));
    if (o.log) std::printf("%s\n", op->plan_.log_line().c_str());
    return result<std::unique_ptr<Conv2dChain>>(std::move(op));
  }

  // One pass on `stream` (capturable in a CUDA graph).
  [[nodiscard]] status enqueue(cudaStream_t stream) { return launch_chain(chain_, stream, launches_, sched_); }
  // Waits for `stream`; the chain's error record (watchdog reports) as a status.
  [[nodiscard]] status check_errors(cudaStream_t stream) const { return ::baton::check_errors(chain_, ws_.data(), stream); }
  const ConvChainPlan& plan() const { return plan_; }
  const Chain& chain() const { return chain_; }

 private:
  Conv2dChain() = default;

  [[nodiscard]] static status check_tensors_(const ConvChainShape& s, const ConvChainTensors& t) {
    const std::string what = "baton::ops::Conv2dChain " + s.str() + ": ";
    const void* ptrs[] = {t.x, t.w1, t.b1, t.w2, t.b2, t.y, t.out};
    const char* names[] = {"x", "w1", "b1", "w2", "b2", "y", "out"};
    for (int i = 0; i < 7; ++i) {
      if (ptrs[i] == nullptr) return status(errc::invalid_argument, what + names[i] + " is null");
      if (reinterpret_cast<uintptr_t>(ptrs[i]) % 16 != 0)
        return status(errc::not_supported, what + names[i] + " is not 16-byte aligned (TMA)");
    }
    if (t.out == t.x || t.y == t.x || t.y == t.out)
      return status(errc::invalid_argument, what + "x, y and out must be distinct buffers");
    return {};
  }

  sm90::ConvArguments<conv_kernels::ReluConfig> conv1_args_(const ConvChainTensors& t) const {
    const ConvChainShape& s = plan_.shape;
    sm90::ConvArguments<conv_kernels::ReluConfig> a;
    a.shape = sm90::ConvShape{s.n, s.h, s.w, s.c, s.k, 3, 3, 1, 1};
    a.x = static_cast<const bf16*>(t.x);
    a.filter = static_cast<const bf16*>(t.w1);
    a.bias = static_cast<const bf16*>(t.b1);
    a.d = static_cast<bf16*>(t.y);
    a.split_k = plan_.split_k1;
    a.split_workspace = sw1_.data();
    return a;
  }
  template <class Config>
  sm90::ConvArguments<Config> conv2_args_(const ConvChainTensors& t) const {
    const ConvChainShape& s = plan_.shape;
    sm90::ConvArguments<Config> a;
    a.shape = sm90::ConvShape{s.n, s.h, s.w, s.k, s.k, 3, 3, 1, 1};
    a.x = static_cast<const bf16*>(t.y);
    a.filter = static_cast<const bf16*>(t.w2);
    a.bias = static_cast<const bf16*>(t.b2);
    if constexpr (Config::residual) a.residual = static_cast<const bf16*>(t.x);
    a.d = static_cast<bf16*>(t.out);
    a.split_k = plan_.split_k2;
    a.split_workspace = sw2_.data();
    return a;
  }

  [[nodiscard]] status build_(const ConvChainTensors& t, cudaStream_t stream, const ConvChainRunOptions& o) {
    using namespace conv_kernels;
    const ConvChainShape& s = plan_.shape;
    {
      auto a1 = conv1_args_(t);
      auto r2 = conv2_args_<ResidualConfig>(t);
      BATON_TRY(detail::alloc_zeroed(sw1_, sm90::conv_split_workspace_bytes(a1), stream, "split-K workspace (conv1)"));
      BATON_TRY(detail::alloc_zeroed(sw2_, sm90::conv_split_workspace_bytes(r2), stream, "split-K workspace (conv2)"));
    }
    auto a1 = conv1_args_(t);
    a1.debug_max_tile_delay_ns = o.debug_max_tile_delay_ns;
    BATON_TRY((sm90::Conv<ReluConfig, PlainStage>::can_implement(a1).with_context("conv1")));
    const Grid g = s.grid();
    const conv_gen::Params gp{.N = s.n, .H = s.h, .W = s.w, .C = s.c, .K = s.k};
    if (!(conv_gen::conv1_grid(gp) == g) || !(conv_gen::conv2_grid(gp) == g))
      return status(errc::invalid_chain, "baton::ops::Conv2dChain: conv_chain.baton's grids differ from the kernels'");
    BindOptions b1, b2;
    b1.watchdog_ns = b2.watchdog_ns = o.watchdog_ns;
    b1.trace = o.trace1;
    b2.trace = o.trace2;
    const Grouped order{plan_.group_m};
    result<StageLaunch> l1 = status(errc::invalid_chain, "unset"), l2 = status(errc::invalid_chain, "unset");
    auto conv2 = [&](auto config, const auto& stage, auto wait) -> result<StageLaunch> {
      using C = typename decltype(config)::type;
      auto a2 = conv2_args_<C>(t);
      a2.debug_max_tile_delay_ns = o.debug_max_tile_delay_ns;
      BATON_TRY((sm90::Conv<C, PlainStage>::can_implement(a2).with_context("conv2")));
      return Kernels::template launch<C, std::remove_cvref_t<decltype(stage)>, decltype(wait)>(stage, a2);
    };
    const bool residual = s.block == ConvBlock::resnet_basic;
    if (plan_.policy == ConvChainPolicy::tile || plan_.policy == ConvChainPolicy::kblock) {
      const Policy policy{conv_gen::conv1_grid(gp), conv_gen::conv1_to_conv2_footprint(gp),
                          plan_.policy == ConvChainPolicy::kblock};
      auto s1 = chain_.add_stage("conv1", g, order, {.reads = {"X", "W1"}, .writes = {"Y"}});
      auto s2 = chain_.add_stage("conv2", g, order, {.reads = {"Y", "W2", "X"}, .writes = {"Out"}});
      auto e = chain_.add_edge(s1, s2, policy, conv_gen::conv1_to_conv2_exact_relation(gp));
      BATON_TRY(chain_.validate());  // the soundness checker proves the halo waits before any launch
      BATON_TRY(detail::alloc_chain_workspace(chain_, ws_, stream));
      auto st1 = chain_.bind(s1, ws_.data(), chain_.workspace_bytes(), outs(e), ins(), b1);
      auto st2 = chain_.bind(s2, ws_.data(), chain_.workspace_bytes(), outs(), ins(e), b2);
      if (!st1.ok()) return st1.error();
      if (!st2.ok()) return st2.error();
      l1 = Kernels::template launch<ReluConfig, ProducerStage, sm90::NoGridWait>(st1.value(), a1);
      l2 = residual ? conv2(std::type_identity<ResidualConfig>{}, st2.value(), sm90::NoGridWait{})
                    : conv2(std::type_identity<ReluConfig>{}, st2.value(), sm90::NoGridWait{});
      sched_ = LaunchSchedule::pdl;
    } else {
      // none: the kernel boundary orders the convolutions. PDL: conv2's CTAs start as conv1's last
      // ones run, load their filters, then wait (griddepcontrol.wait) before their first load of Y.
      const bool pdl = plan_.launch == ConvLaunch::pdl;
      sched_ = pdl ? LaunchSchedule::pdl : LaunchSchedule::serial;
      auto s1 = chain_.add_stage("conv1", g, order);
      auto s2 = chain_.add_stage("conv2", g, order);
      BATON_TRY(chain_.validate());
      BATON_TRY(detail::alloc_chain_workspace(chain_, ws_, stream));
      auto st1 = chain_.bind(s1, ws_.data(), chain_.workspace_bytes(), outs(), ins(), b1);
      auto st2 = chain_.bind(s2, ws_.data(), chain_.workspace_bytes(), outs(), ins(), b2);
      if (!st1.ok()) return st1.error();
      if (!st2.ok()) return st2.error();
      l1 = Kernels::template launch<ReluConfig, PlainStage, sm90::NoGridWait>(st1.value(), a1);
      if (pdl)
        l2 = residual ? conv2(std::type_identity<ResidualConfig>{}, st2.value(), sm90::GridWaitBeforeA{})
                      : conv2(std::type_identity<ReluConfig>{}, st2.value(), sm90::GridWaitBeforeA{});
      else
        l2 = residual ? conv2(std::type_identity<ResidualConfig>{}, st2.value(), sm90::NoGridWait{})
                      : conv2(std::type_identity<ReluConfig>{}, st2.value(), sm90::NoGridWait{});
    }
    if (!l1.ok()) return l1.error().with_context("baton::ops::Conv2dChain conv1");
    if (!l2.ok()) return l2.error().with_context("baton::ops::Conv2dChain conv2");
    launches_ = {l1.value(), l2.value()};
    return {};
  }

  static std::string options_to_string_(const ConvChainPlan& p) {
    return std::string("policy=") + to_string(p.policy) + ";split_k1=" + std::to_string(p.split_k1) +
           ";split_k2=" + std::to_string(p.split_k2) + ";group_m=" + std::to_string(p.group_m) +
           ";launch=" + to_string(p.launch);
  }
  static std::optional<ConvChainOptions> options_from_string_(const std::string& v) {
    ConvChainOptions o;
    char pol[16] = {0}, lau[16] = {0};
    int s1 = 0, s2 = 0, gm = 0;
    if (std::sscanf(v.c_str(), "policy=%15[a-z];split_k1=%d;split_k2=%d;group_m=%d;launch=%15[a-z]", pol, &s1, &s2, &gm,
                    lau) != 5)
      return std::nullopt;
    const std::string p = pol;
    if (p == "none") o.policy = ConvChainPolicy::none;
    else if (p == "tile") o.policy = ConvChainPolicy::tile;
    else if (p == "kblock") o.policy = ConvChainPolicy::kblock;
    else return std::nullopt;
    o.split_k1 = s1;
    o.split_k2 = s2;
    o.group_m = gm;
    if (o.policy == ConvChainPolicy::none) o.launch = std::string(lau) == "serial" ? ConvLaunch::serial : ConvLaunch::pdl;
    return o;
  }

  [[nodiscard]] static result<std::unique_ptr<Conv2dChain>> tuned_(const ConvChainShape& shape, const ConvChainTensors& t,
                                                                   cudaStream_t stream, const ConvChainRunOptions& o,
                                                                   int sms) {
    auto base = plan_conv_chain(shape, sms, o.plan);
    if (!base.ok()) return base.error();
    std::string key;
    if (o.tune_cache) {
      auto device = detail::current_tune_device_key(sms);
      if (!device.ok()) return device.error().with_context("baton::ops::Conv2dChain tuning");
      // The shape, what the caller fixed (a cached plan must honour the same requests) and the GPU.
      auto asked = [](const std::optional<int>& v) { return v ? std::to_string(*v) : std::string("auto"); };
      key = "conv2d_chain;" + shape.str() + ";asked=split_k1=" + asked(o.plan.split_k1) + ",split_k2=" +
            asked(o.plan.split_k2) + ",group_m=" + asked(o.plan.group_m) + ";" + device.value();
      if (auto hit = TuneCache::global().find(key))
        if (auto cached = options_from_string_(*hit)) {
          ConvChainRunOptions co = o;
          co.tune = false;
          co.log = false;
          co.plan = *cached;
          auto m = create(shape, t, stream, co);
          if (m.ok()) {
            m.value()->plan_.reason = "tuned earlier on this GPU (tuning cache): " + *hit;
            if (o.log) std::printf("%s\n", m.value()->plan_.log_line().c_str());
            return m;
          }
        }
    }
    const ConvChainPlan& bp = base.value();
    std::vector<ConvChainOptions> cands;
    auto add = [&](ConvChainPolicy p, int s1, int s2, std::optional<ConvLaunch> l) {
      ConvChainOptions c = o.plan;
      c.policy = p;
      c.split_k1 = o.plan.split_k1.value_or(s1);
      c.split_k2 = o.plan.split_k2.value_or(s2);
      c.group_m = bp.group_m;
      c.launch = p == ConvChainPolicy::none ? l : std::nullopt;
      if (std::find(cands.begin(), cands.end(), c) == cands.end()) cands.push_back(c);
    };
    // The planned chain first (kept unless another is > 2% faster).
    add(bp.policy, bp.split_k1, bp.split_k2, bp.policy == ConvChainPolicy::none ? std::optional(bp.launch) : std::nullopt);
    // Splits: the plan's, none, and the most parts conv_split_k allows (its cost model may have
    // declined them), so tuning times both sides of the model's split decision.
    const int tiles = shape.grid().size();
    const std::pair<int, int> most{conv_split_k_max(tiles, shape.k_blocks1(), sms), conv_split_k_max(tiles, shape.k_blocks2(), sms)};
    for (auto [s1, s2] : {std::pair{bp.split_k1, bp.split_k2}, std::pair{1, 1}, most}) {
      add(ConvChainPolicy::none, s1, s2, ConvLaunch::pdl);
      add(ConvChainPolicy::none, s1, s2, ConvLaunch::serial);
      add(ConvChainPolicy::kblock, s1, s2, std::nullopt);
      add(ConvChainPolicy::tile, s1, s2, std::nullopt);
    }
    std::vector<std::unique_ptr<Conv2dChain>> ops;
    for (const ConvChainOptions& c : cands) {
      ConvChainRunOptions co = o;
      co.tune = false;
      co.log = false;
      co.plan = c;
      auto m = create(shape, t, stream, co);
      if (!m.ok()) return m.error().with_context("baton::ops::Conv2dChain tuning candidate");
      ops.push_back(std::move(m.value()));
    }
    auto timed = detail::time_candidates(ops, stream, o.tune_iters, [&](size_t i) { return options_to_string_(ops[i]->plan_); });
    if (!timed.ok()) return timed.error();
    const std::vector<double>& med = timed.value().medians;
    const size_t best = timed.value().best;
    std::string tried;
    for (size_t i = 0; i < ops.size(); ++i) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "%s%s %.2f us", i ? ", " : "", options_to_string_(ops[i]->plan_).c_str(), med[i]);
      tried += buf;
    }
    std::unique_ptr<Conv2dChain> chosen = std::move(ops[best]);
    ops.clear();
    if (o.tune_cache)
      BATON_TRY(TuneCache::global().put(key, options_to_string_(chosen->plan_)).with_context("baton::ops::Conv2dChain tuning"));
    chosen->plan_.reason = "tuned on this GPU (median of " + std::to_string(timed.value().rounds) +
                           " interleaved rounds of " + std::to_string(timed.value().per_round) + " passes): " + tried;
    if (o.log) std::printf("%s\n", chosen->plan_.log_line().c_str());
    return result<std::unique_ptr<Conv2dChain>>(std::move(chosen));
  }

  ConvChainPlan plan_;
  Chain chain_;
  async::device_allocation ws_;
  async::device_allocation sw1_;
  async::device_allocation sw2_;
  std::vector<StageLaunch> launches_;
  LaunchSchedule sched_ = LaunchSchedule::pdl;
};

// The op over baton::conv_kernels (link it; nothing is instantiated where this is used).
using CompiledConv2dChain = Conv2dChain<conv_kernels::Compiled>;

}  // namespace baton::ops
