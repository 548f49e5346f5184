// baton/async.cuh — the async layer in one include (CMake target baton::async):
//   tasks and executors         baton/async/task.hpp, executor.hpp, when.hpp, cancel.hpp
//   the reactor                 baton/async/reactor.hpp, completion.hpp
//   streams, events, memory     baton/async/stream.cuh, memory.cuh, graph.cuh
//   awaiting GPU work           baton/async/cuda_await.cuh, chain_await.cuh
//   N-buffered pipelines        baton/async/pipeline.cuh (slot_ledger.hpp, copy_team.hpp)
// Host-only users (no CUDA compiler) include the .hpp headers they need. docs/async.md.
#pragma once

#include "baton/async/cancel.hpp"
#include "baton/async/chain_await.cuh"
#include "baton/async/completion.hpp"
#include "baton/async/copy_team.hpp"
#include "baton/async/cuda_await.cuh"
#include "baton/async/executor.hpp"
#include "baton/async/graph.cuh"
#include "baton/async/memory.cuh"
#include "baton/async/pipeline.cuh"
#include "baton/async/reactor.hpp"
#include "baton/async/slot_ledger.hpp"
#include "baton/async/stream.cuh"
#include "baton/async/task.hpp"
#include "baton/async/when.hpp"
