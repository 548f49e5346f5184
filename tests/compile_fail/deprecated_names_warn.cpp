// EXPECT: renamed DeviceError.*renamed Outputs.*renamed Inputs.*renamed Activation.*renamed MlpPolicy
// The old spellings of renamed names (docs/naming.md) still compile but warn, naming the new name;
// made errors here so that the warning is checked. tests/host/test_deprecated_names.cpp checks they
// are the new types.
#pragma GCC diagnostic error "-Wdeprecated-declarations"
#include "baton/error_record.hpp"
#include "baton/ops/mlp.hpp"
#include "baton/stage.hpp"

using P = baton::TilePolicy<baton::footprint::Identity>;
auto e = baton::device_error::watchdog;
baton::Stage<baton::RowMajor, baton::outputs<P>> producer;
baton::Stage<baton::RowMajor, baton::Outputs<>, baton::inputs<P>> consumer;
auto a = baton::ops::activation::gelu;
auto p = baton::ops::mlp_policy::row;
