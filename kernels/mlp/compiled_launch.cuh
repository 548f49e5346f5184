// kernels/mlp/compiled_launch.cuh — the definition behind baton::ops::mlp_kernels::compiled_launch
// (declared in baton/ops/mlp_compiled.cuh). Included only by the library's generated translation
// units, each of which instantiates it once (kernels/mlp/CMakeLists.txt); not installed.
#pragma once

#include "baton/ops/mlp_compiled.cuh"

namespace baton::ops::mlp_kernels {
template <class Config, class StageT, sm90::GridWait Wait>
result<StageLaunch> compiled_launch(const StageT& s, const sm90::GemmArguments<Config>& a) {
  return sm90::Gemm<Config, StageT, Wait>::make_launch(s, a);
}
}  // namespace baton::ops::mlp_kernels
