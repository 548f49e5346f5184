// bench/bench_util.hpp — the shared bench code in one include: the result schema and its writers
// (common/report.hpp), the environment stamp (common/env.hpp) and the statistics
// (common/stats.hpp). Host-only; the CUDA owners and timing are in common/*.cuh.
#pragma once

#include "common/env.hpp"
#include "common/report.hpp"
#include "common/stats.hpp"
