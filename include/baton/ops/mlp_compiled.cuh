// baton/ops/mlp_compiled.cuh — baton::ops::Mlp over kernels compiled once, in the library
// baton::mlp_kernels (CMake: target_link_libraries(app PRIVATE baton::mlp_kernels)).
//
//   using Mlp = baton::ops::CompiledMlp<baton::ops::Activation::swiglu>;
//   auto mlp = Mlp::create(shape, tensors, stream);   // as baton::ops::Mlp; no kernel compiled here
//
// The header-only form, Mlp<A> (mlp_kernels::Inline<A>), instantiates its 33-34 kernels in the
// including translation unit (~1 min and ~3 GB of compiler memory each). Here they are only
// declared: compiled_launch<Config, Stage, GridWait> has no definition in
// any header a user includes, and the library defines one explicit instantiation per translation
// unit, from the table in kernels/mlp/kernels.cmake. A combination missing from the table is a
// link error naming it.
//
// The forms the plan never picks on its own (MlpKernelForms, baton/ops/mlp.hpp: the CTA-pair GEMMs
// and the 32-token swapped ones, 7 kernels) are in the library only when baton is configured with
// -DBATON_MLP_EXTRA_KERNELS=ON; the target baton::mlp_kernels then carries the compile definition
// BATON_MLP_EXTRA_KERNELS=1 to everything that links it (installed packages included). Without it,
// Compiled<A> says so (has_cta_pairs, has_narrow_swapped false), its functions for those forms
// return errc::not_supported naming the option instead of referencing kernels the library lacks,
// and CompiledMlp<A> refuses a request for them at create().
#pragma once

#include "baton/ops/mlp.cuh"

#if defined(BATON_MLP_EXTRA_KERNELS) && BATON_MLP_EXTRA_KERNELS
#define BATON_MLP_HAS_EXTRA_KERNELS_ 1
#else
#define BATON_MLP_HAS_EXTRA_KERNELS_ 0
#endif

namespace baton::ops {
namespace mlp_kernels {

// The StageLaunch of sm90::Gemm<Config, StageT, Wait>; defined in baton::mlp_kernels only
// (kernels/mlp/compiled_launch.cuh).
template <class Config, class StageT, sm90::GridWait Wait>
result<StageLaunch> compiled_launch(const StageT& s, const sm90::GemmArguments<Config>& a);

// The kernel set of CompiledMlp<A>: every member of MlpKernelSet, forwarding to the library.
template <Activation A>
struct Compiled {
  // The optional forms (MlpKernelForms): in the library with -DBATON_MLP_EXTRA_KERNELS=ON only.
  static constexpr bool has_cta_pairs = BATON_MLP_HAS_EXTRA_KERNELS_ != 0;
  static constexpr bool has_narrow_swapped = BATON_MLP_HAS_EXTRA_KERNELS_ != 0;
  // The band pairs (tuning's candidates) are always in the library.
  static constexpr bool has_band_pairs = true;
  template <class Config, class S, sm90::GridWait Wait = sm90::NoGridWait>
  static result<StageLaunch> launch(const S& s, const sm90::GemmArguments<Config>& a) {
    return compiled_launch<Config, S, Wait>(s, a);
  }
  template <class S>
  static result<StageLaunch> up(const S& s, const sm90::GemmArguments<UpConfig<A>>& a) { return launch<UpConfig<A>>(s, a); }
  template <class S>
  static result<StageLaunch> down(const S& s, const sm90::GemmArguments<DownConfig>& a) { return launch<DownConfig>(s, a); }
  static result<StageLaunch> down_after_grid(const PlainStage& s, const sm90::GemmArguments<DownConfig>& a) {
    return launch<DownConfig, PlainStage, sm90::GridWaitBeforeA>(s, a);
  }
  static result<StageLaunch> up_wide(const PlainStage& s, const sm90::GemmArguments<WideUpConfig<A>>& a) {
    return launch<WideUpConfig<A>>(s, a);
  }
  static result<StageLaunch> down_wide(const PlainStage& s, const sm90::GemmArguments<WideDownConfig>& a) {
    return launch<WideDownConfig>(s, a);
  }
  static result<StageLaunch> down_wide_after_grid(const PlainStage& s, const sm90::GemmArguments<WideDownConfig>& a) {
    return launch<WideDownConfig, PlainStage, sm90::GridWaitBeforeA>(s, a);
  }
  static result<StageLaunch> up_mid(const PlainStage& s, const sm90::GemmArguments<MidUpConfig<A>>& a) {
    return launch<MidUpConfig<A>>(s, a);
  }
  static result<StageLaunch> down_mid(const PlainStage& s, const sm90::GemmArguments<MidDownConfig>& a) {
    return launch<MidDownConfig>(s, a);
  }
  static result<StageLaunch> down_mid_after_grid(const PlainStage& s, const sm90::GemmArguments<MidDownConfig>& a) {
    return launch<MidDownConfig, PlainStage, sm90::GridWaitBeforeA>(s, a);
  }
  static result<StageLaunch> up_narrow(const PlainStage& s, const sm90::GemmArguments<NarrowUpConfig<A>>& a) {
    return launch<NarrowUpConfig<A>>(s, a);
  }
  static result<StageLaunch> down_narrow(const PlainStage& s, const sm90::GemmArguments<NarrowDownConfig>& a) {
    return launch<NarrowDownConfig>(s, a);
  }
  static result<StageLaunch> down_narrow_after_grid(const PlainStage& s, const sm90::GemmArguments<NarrowDownConfig>& a) {
    return launch<NarrowDownConfig, PlainStage, sm90::GridWaitBeforeA>(s, a);
  }
  static result<StageLaunch> up_band(const PlainStage& s, const sm90::GemmArguments<BandUpConfig<A>>& a) {
    return launch<BandUpConfig<A>>(s, a);
  }
  static result<StageLaunch> down_band(const PlainStage& s, const sm90::GemmArguments<BandDownConfig>& a) {
    return launch<BandDownConfig>(s, a);
  }
  static result<StageLaunch> down_band_after_grid(const PlainStage& s, const sm90::GemmArguments<BandDownConfig>& a) {
    return launch<BandDownConfig, PlainStage, sm90::GridWaitBeforeA>(s, a);
  }
#if BATON_MLP_HAS_EXTRA_KERNELS_
  static result<StageLaunch> up_pair(const PlainStage& s, const sm90::GemmArguments<PairUpConfig<A>>& a) {
    return launch<PairUpConfig<A>>(s, a);
  }
  static result<StageLaunch> down_pair(const PlainStage& s, const sm90::GemmArguments<PairDownConfig>& a) {
    return launch<PairDownConfig>(s, a);
  }
  static result<StageLaunch> down_pair_after_grid(const PlainStage& s, const sm90::GemmArguments<PairDownConfig>& a) {
    return launch<PairDownConfig, PlainStage, sm90::GridWaitBeforeA>(s, a);
  }
  static result<StageLaunch> up_swapped(const PlainStage& s, const sm90::GemmArguments<SwapGeluConfig>& a) {
    return launch<SwapGeluConfig>(s, a);
  }
  static result<StageLaunch> down_swapped(const PlainStage& s, const sm90::GemmArguments<SwapDownConfig>& a) {
    return launch<SwapDownConfig>(s, a);
  }
  // PDL-launched: griddepcontrol.wait before any load (the swapped GEMM2's B is Y).
  static result<StageLaunch> down_swapped_after_grid(const PlainStage& s, const sm90::GemmArguments<SwapDownConfig>& a) {
    return launch<SwapDownConfig, PlainStage, sm90::GridWaitBeforeLoads>(s, a);
  }
#else
  // Not in the library: a status naming the kernel and the option, no reference to an instantiation
  // (no link error for a caller that reaches them, e.g. through the functions' addresses).
  static result<StageLaunch> up_pair(const PlainStage&, const sm90::GemmArguments<PairUpConfig<A>>&) {
    return missing_("up_pair (GEMM1 as CTA pairs)");
  }
  static result<StageLaunch> down_pair(const PlainStage&, const sm90::GemmArguments<PairDownConfig>&) {
    return missing_("down_pair (GEMM2 as CTA pairs)");
  }
  static result<StageLaunch> down_pair_after_grid(const PlainStage&, const sm90::GemmArguments<PairDownConfig>&) {
    return missing_("down_pair_after_grid (GEMM2 as CTA pairs, PDL-launched)");
  }
  static result<StageLaunch> up_swapped(const PlainStage&, const sm90::GemmArguments<SwapGeluConfig>&) {
    return missing_("up_swapped (GEMM1 swapped in 32-token tiles)");
  }
  static result<StageLaunch> down_swapped(const PlainStage&, const sm90::GemmArguments<SwapDownConfig>&) {
    return missing_("down_swapped (GEMM2 swapped in 32-token tiles)");
  }
  static result<StageLaunch> down_swapped_after_grid(const PlainStage&, const sm90::GemmArguments<SwapDownConfig>&) {
    return missing_("down_swapped_after_grid (GEMM2 swapped in 32-token tiles, PDL-launched)");
  }
  static status missing_(const char* kernel) {
    return mlp_missing_kernels(std::string("baton::ops::mlp_kernels::Compiled::") + kernel);
  }
#endif
  template <int W>
  static result<StageLaunch> up_plain_wide(const PlainStage& s, const sm90::GemmArguments<PlainUpConfigT<A, W>>& a) {
    return launch<PlainUpConfigT<A, W>>(s, a);
  }
  template <int W>
  static result<StageLaunch> down_plain_wide(const PlainStage& s, const sm90::GemmArguments<PlainDownConfigT<W>>& a) {
    return launch<PlainDownConfigT<W>>(s, a);
  }
  template <int W>
  static result<StageLaunch> down_plain_wide_after_grid(const PlainStage& s,
                                                        const sm90::GemmArguments<PlainDownConfigT<W>>& a) {
    return launch<PlainDownConfigT<W>, PlainStage, sm90::GridWaitBeforeA>(s, a);
  }
  template <int T>
  static result<StageLaunch> up_swapped_wide(const PlainStage& s, const sm90::GemmArguments<SwapUpConfigT<A, T>>& a) {
    return launch<SwapUpConfigT<A, T>>(s, a);
  }
  template <int T>
  static result<StageLaunch> down_swapped_wide(const PlainStage& s, const sm90::GemmArguments<SwapDownConfigT<T>>& a) {
    return launch<SwapDownConfigT<T>>(s, a);
  }
  template <int T>
  static result<StageLaunch> down_swapped_wide_after_grid(const PlainStage& s,
                                                          const sm90::GemmArguments<SwapDownConfigT<T>>& a) {
    return launch<SwapDownConfigT<T>, PlainStage, sm90::GridWaitBeforeLoads>(s, a);
  }
};
static_assert(MlpKernelSet<Compiled<Activation::gelu>, Activation::gelu> &&
              MlpKernelSet<Compiled<Activation::swiglu>, Activation::swiglu>);
static_assert(kernel_forms_of<Compiled<Activation::gelu>>().complete() == (BATON_MLP_HAS_EXTRA_KERNELS_ != 0),
              "baton::ops::mlp_kernels::Compiled: its kernel forms must follow BATON_MLP_EXTRA_KERNELS");

}  // namespace mlp_kernels

// The op over baton::mlp_kernels.
template <Activation A>
using CompiledMlp = Mlp<A, mlp_kernels::Compiled<A>>;

}  // namespace baton::ops

#undef BATON_MLP_HAS_EXTRA_KERNELS_
