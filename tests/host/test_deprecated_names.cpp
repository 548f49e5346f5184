// The old spellings of renamed public names (docs/naming.md) still compile, as deprecated aliases of
// the new names: the same types, so code written against either mixes. That they warn is checked by
// tests/compile_fail/deprecated_names_warn.cpp; the CUDA-only ones (launch_schedule, sm90::grid_wait)
// by tests/device/cutlass/test_sm90_gemm.cu.
#include <gtest/gtest.h>

#include <type_traits>

#include "baton/async/copy_team.hpp"
#include "baton/async/slot_ledger.hpp"
#include "baton/error_record.hpp"
#include "baton/ops/mlp.hpp"
#include "baton/policy.hpp"
#include "baton/stage.hpp"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace {

using P = baton::TilePolicy<baton::footprint::Identity>;

static_assert(std::is_same_v<baton::device_error, baton::DeviceError>);
static_assert(std::is_same_v<baton::async::copy_team, baton::async::CopyTeam>);
static_assert(std::is_same_v<baton::async::slot_ledger, baton::async::SlotLedger>);
static_assert(std::is_same_v<baton::outputs<>, baton::Outputs<>>);
static_assert(std::is_same_v<baton::outputs<P, P>, baton::Outputs<P, P>>);
static_assert(std::is_same_v<baton::inputs<P>, baton::Inputs<P>>);
static_assert(std::is_same_v<baton::Stage<baton::RowMajor, baton::outputs<P>, baton::inputs<>>,
                             baton::Stage<baton::RowMajor, baton::Outputs<P>, baton::Inputs<>>>);
static_assert(std::is_same_v<baton::ops::activation, baton::ops::Activation>);
static_assert(std::is_same_v<baton::ops::mlp_policy, baton::ops::MlpPolicy>);

TEST(DeprecatedNames, OldSpellingsNameTheSameEnumerators) {
  EXPECT_EQ(baton::device_error::watchdog, baton::DeviceError::watchdog);
  EXPECT_EQ(uint32_t(baton::device_error::aborted), 2u);
  const baton::ops::MlpShape s{16, 8192, 2752, baton::ops::activation::swiglu};
  EXPECT_EQ(s.act, baton::ops::Activation::swiglu);
  baton::ops::MlpOptions o;
  o.policy = baton::ops::mlp_policy::kblock;
  EXPECT_EQ(o.policy, baton::ops::MlpPolicy::kblock);
  // A stage declared with the old tags is the stage declared with the new ones.
  baton::Stage<baton::RowMajor, baton::outputs<>, baton::inputs<P>> old_stage;
  baton::Stage<baton::RowMajor, baton::Outputs<>, baton::Inputs<P>> new_stage = old_stage;
  EXPECT_EQ(decltype(new_stage)::num_inputs, 1);
}

}  // namespace

#pragma GCC diagnostic pop
