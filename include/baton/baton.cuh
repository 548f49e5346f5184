// baton/baton.cuh — umbrella header for CUDA translation units.
#pragma once

#include "baton/baton.hpp"
#include "baton/launch.cuh"
