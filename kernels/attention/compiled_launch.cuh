// kernels/attention/compiled_launch.cuh — the definition behind
// baton::ops::attention_kernels::compiled_launch (declared in baton/ops/attention/attention_kernels.cuh).
// Included only by the library's generated translation units, each of which instantiates it once
// (kernels/attention/CMakeLists.txt); not installed.
#pragma once

#include "baton/ops/attention/attention_kernels.cuh"

namespace baton::ops::attention_kernels {
template <class Config, class StageT, sm90::GridWait Wait>
result<StageLaunch> compiled_launch(const StageT& s, const sm90::LaunchArguments<Config>& a) {
  return Inline::launch<Config, StageT, Wait>(s, a);
}
}  // namespace baton::ops::attention_kernels
