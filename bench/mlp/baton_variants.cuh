// bench/mlp/baton_variants.cuh — the MLP as baton chains: hand-written or batonc-generated
// KBlock / Row policies (BatonMlp) and the op baton::ops::Mlp, tuned or as create() gives it (OpMlp).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "baton/trace.hpp"
#include "common/device_memory.cuh"
#include "mlp/args.hpp"
#include "mlp/problem.cuh"

namespace baton_bench::mlp {

using namespace baton;

constexpr uint64_t kWatchdogNs = 2'000'000'000ull;  // a sync bug reports instead of hanging

// A baton chain: GEMM1 posts its tiles of Y, GEMM2 waits on them under policy P; PDL. Generated:
// the policy comes from the header batonc generates from include/baton/ops/mlp.baton (the op's),
// else it is built by hand from sm90::gemm_a_footprint.
template <class P, bool Generated>
P make_policy(const Problem& p, Grid g1, const footprint::GemmA& fp) {
  if constexpr (Generated && std::is_same_v<P, KBlock>)
    return p.swiglu ? ops::mlp_kernels::kblock_policy<ops::Activation::swiglu>(p.m, p.h, p.f)
                    : ops::mlp_kernels::kblock_policy<ops::Activation::gelu>(p.m, p.h, p.f);
  else if constexpr (Generated && std::is_same_v<P, Row>)
    return p.swiglu ? ops::mlp_kernels::row_policy<ops::Activation::swiglu>(p.m, p.h, p.f)
                    : ops::mlp_kernels::row_policy<ops::Activation::gelu>(p.m, p.h, p.f);
  else
    return P{g1, fp};
}

template <class P, bool Generated = false>
struct BatonMlp {
  Chain chain;
  bench::device_buffer ws;
  std::vector<StageLaunch> launches;

  [[nodiscard]] status build(const Problem& p, cudaStream_t stream, TileEvent* trace1 = nullptr,
                             TileEvent* trace2 = nullptr) {
    const Grid g1 = p.g1(), g2 = p.g2();
    const footprint::GemmA fp = p.fp();  // GEMM2's A on Y's tiles
    auto s1 = chain.add_stage("gemm1", g1, Grouped{p.group_m}, {.reads = {"X", "W1"}, .writes = {"Y"}});
    auto s2 = chain.add_stage("gemm2", g2, Grouped{p.group_m}, {.reads = {"Y", "W2"}, .writes = {"Z"}});
    auto e = chain.add_edge(s1, s2, make_policy<P, Generated>(p, g1, fp), deps::gemm_a(fp, g2));
    BATON_TRY(chain.validate());  // includes the soundness checker
    BATON_TRY(bench::device_alloc(ws, chain.workspace_bytes(), stream, "baton workspace"));
    BATON_TRY(initialize_workspace(chain, ws.data(), chain.workspace_bytes(), stream));
    BindOptions o1, o2;
    o1.watchdog_ns = o2.watchdog_ns = kWatchdogNs;
    o1.trace = trace1;
    o2.trace = trace2;
    auto b1 = chain.bind(s1, ws.data(), chain.workspace_bytes(), outs(e), ins(), o1);
    auto b2 = chain.bind(s2, ws.data(), chain.workspace_bytes(), outs(), ins(e), o2);
    if (!b1.ok()) return b1.error();
    if (!b2.ok()) return b2.error();
    auto l1 = p.launch1(b1.value());
    auto l2 = gemm2_launch(b2.value(), p.args2());
    if (!l1.ok()) return l1.error().with_context("gemm1");
    if (!l2.ok()) return l2.error().with_context("gemm2");
    launches = {l1.value(), l2.value()};
    return {};
  }
  [[nodiscard]] status enqueue(cudaStream_t s) { return launch_chain(chain, s, launches, LaunchSchedule::pdl); }
  [[nodiscard]] status errors(cudaStream_t s) { return check_errors(chain, ws.data(), s); }
};

// baton-auto: baton::ops::Mlp, the op with its own plan (policy, split-K, tile order; the bench's
// --split-k / --group-m are passed on when given), its kernels the bench's instantiations.
// The op's options from the bench's command line (0 / -1 there: the op's choice).
inline ops::MlpOptions op_options(const Args& a) {
  ops::MlpOptions o;
  auto request = [&](int split, int swap) {
    ops::GemmFormRequest r;
    if (split > 0) r.split_k = split;
    if (swap >= 0) r.operands = swap == 1 ? ops::GemmOperands::swapped : ops::GemmOperands::plain;
    if (a.cta_pairs == 1) r.cta_pairs = true;
    return r;
  };
  o.gemm1 = request(a.split1, a.swap_gemm1);
  o.gemm2 = request(a.split2, a.swap_gemm2);
  if (a.group_m > 0) o.group_m = a.group_m;
  o.l2_prefetch_mb = a.l2_prefetch_mb;
  if (a.pdl >= 0) o.launch = a.pdl == 1 ? ops::Gemm2Launch::pdl : ops::Gemm2Launch::after_gemm1;
  return o;
}

// Whether the op's kernels (baton::mlp_kernels) have the forms the command line asks for: --cta-pairs 1
// needs the CTA-pair kernels, --swap-gemm2 1 (and --swap-gemm1 1 with GeLU) at an M <= 32 the
// 32-token swapped ones; the library has them only with -DBATON_MLP_EXTRA_KERNELS=ON. Checked for
// every M before anything runs: the op's refusal (naming the option), with the flags that led to it.
// Which forms a request needs does not depend on the SM count, so the plan is made for 132.
inline status op_kernels_cover(const Args& a) {
  constexpr ops::MlpKernelForms have = ops::mlp_kernels::kernel_forms_of<OpKernels<ops::Activation::gelu>>();
  const ops::MlpOptions o = op_options(a);
  for (int m : a.ms) {
    const ops::MlpShape shape{m, a.hidden, a.ffn, a.swiglu ? ops::Activation::swiglu : ops::Activation::gelu};
    if (!ops::mlp_needs_missing_kernels(shape, 132, o, have)) continue;
    return ops::plan_mlp(shape, 132, o, have)
        .error()
        .with_context("--cta-pairs " + std::to_string(a.cta_pairs) + " --swap-gemm1 " + std::to_string(a.swap_gemm1) +
                      " --swap-gemm2 " + std::to_string(a.swap_gemm2) + " (-1: auto) at M = " + std::to_string(m));
  }
  return {};
}

struct OpMlp {
  std::unique_ptr<ops::Mlp<ops::Activation::gelu, OpKernels<ops::Activation::gelu>>> gelu;
  std::unique_ptr<ops::Mlp<ops::Activation::swiglu, OpKernels<ops::Activation::swiglu>>> swiglu;
  // tune = false: what create() gives a user with default options (the bench's baton-plan).
  [[nodiscard]] status build(const Problem& p, const Args& a, int sms, cudaStream_t stream, bool tune = true) {
    ops::MlpRunOptions o;
    o.sms = sms;
    o.plan = op_options(a);
    o.tune_cta_pairs = a.cta_pairs == 1;  // --cta-pairs 1: tuning also weighs them against the rest
    o.tune_band_pairs = a.band_pairs == 1;  // --band-pairs 1: the same for the 128x192 band pairs
    o.tune_persistent = a.persistent == 1;  // --persistent 1: the same for persistent CTAs
    o.tune_stream_k = a.stream_k == 1;      // --stream-k 1: the same for stream-K
    o.watchdog_ns = kWatchdogNs;
    o.tune = tune;  // per-shape: times the candidate plans, keeps the fastest (logged)
    const ops::MlpTensors t{p.x, p.w1, p.w2, p.y, p.z};
    const ops::MlpShape shape{p.m, p.h, p.f, p.swiglu ? ops::Activation::swiglu : ops::Activation::gelu};
    if (p.swiglu) {
      auto m = ops::Mlp<ops::Activation::swiglu, OpKernels<ops::Activation::swiglu>>::create(shape, t, stream, o);
      if (!m.ok()) return m.error();
      swiglu = std::move(m.value());
    } else {
      auto m = ops::Mlp<ops::Activation::gelu, OpKernels<ops::Activation::gelu>>::create(shape, t, stream, o);
      if (!m.ok()) return m.error();
      gelu = std::move(m.value());
    }
    return {};
  }
  [[nodiscard]] status enqueue(cudaStream_t s) { return gelu ? gelu->enqueue(s) : swiglu->enqueue(s); }
  [[nodiscard]] status enqueue_gemm(int which, cudaStream_t s) {
    return gelu ? gelu->enqueue_gemm(which, s) : swiglu->enqueue_gemm(which, s);
  }
  const ops::MlpPlan& plan() const { return gelu ? gelu->plan() : swiglu->plan(); }
  [[nodiscard]] status errors(cudaStream_t s) { return gelu ? gelu->check_errors(s) : swiglu->check_errors(s); }
};

}  // namespace baton_bench::mlp
