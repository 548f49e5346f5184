// kernels/conv/compiled_launch.cuh — the definition behind baton::ops::conv_kernels::compiled_launch
// (declared in baton/ops/conv/conv_kernels.cuh). Included only by the library's generated
// translation units, each of which instantiates it once (kernels/conv/CMakeLists.txt); not installed.
#pragma once

#include "baton/ops/conv/conv_kernels.cuh"

namespace baton::ops::conv_kernels {
template <class Config, class StageT, sm90::GridWait Wait>
result<StageLaunch> compiled_launch(const StageT& s, const sm90::ConvArguments<Config>& a) {
  return sm90::Conv<Config, StageT, Wait>::make_launch(s, a);
}
}  // namespace baton::ops::conv_kernels
