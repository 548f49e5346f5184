// baton/baton.hpp — umbrella header of the host-compilable core (g++ or nvcc).
#pragma once

#include "baton/chain.hpp"
#include "baton/config.hpp"
#include "baton/dependency.hpp"
#include "baton/device/flags.hpp"
#include "baton/error_record.hpp"
#include "baton/footprint.hpp"
#include "baton/order.hpp"
#include "baton/policy.hpp"
#include "baton/stage.hpp"
#include "baton/status.hpp"
#include "baton/tile.hpp"
#include "baton/trace.hpp"
