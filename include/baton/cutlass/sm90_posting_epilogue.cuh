// baton/cutlass/sm90_posting_epilogue.cuh — a CUTLASS 4.2 sm90 TMA warp-specialized epilogue that
// publishes each finished tile to the baton semaphores of its stage.
//
//   using Epilogue = baton::sm90::PostingEpilogue<CollectiveEpilogue<Sm90TmaWarpSpecialized<...>, ...>>;
//   ... epilogue.store(...);                              // unchanged CUTLASS store (fusion included)
//   epilogue.store_tail_and_post(..., stage, assignment); // instead of store_tail(...)
//
// Why a new tail instead of the CUTLASS store_tail: store_tail ends with PipelineTmaStore::
// producer_tail, i.e. `cp.async.bulk.wait_group.read 0`, which only says that shared memory was
// read. Publishing needs the global writes complete:
//   every epilogue thread: cp.async.bulk.wait_group 0     (its own bulk groups: writes done)
//                          fence.proxy.async.global       (async-proxy writes -> generic proxy)
//   named barrier over the epilogue threads               (all of the above happen before ...)
//   thread 0:              red.release.gpu.global.add     (Stage::post_leader)
// CUTLASS lets all 32 lanes of the first epilogue warp issue the TMA stores and bulk groups are
// per thread, so every thread waits on its own groups (a no-op for threads that issued none).
// The fusion (alpha/beta, GeLU, ...) runs inside store(); it is the FusionOp of the collective.
#pragma once

#if !__has_include(<cutlass/cutlass.h>)
#error "baton/cutlass/sm90_posting_epilogue.cuh needs CUTLASS 4.2 on the include path: link the CMake target baton::cutlass (configure baton with -DBATON_WITH_CUTLASS=ON, or -DBATON_CUTLASS_DIR=<CUTLASS 4.2 checkout>), or add <cutlass>/include and <cutlass>/tools/util/include (pip: nvidia-cutlass==4.2.0.0, under cutlass_library/source/)"
#endif

#include <cstdint>

#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/collective/collective_builder.hpp>

#include "baton/device/flags.hpp"
#include "baton/error_record.hpp"
#include "baton/stage.hpp"

namespace baton::sm90 {

template <class BaseEpilogue>
struct PostingEpilogue : BaseEpilogue {
  using Base = BaseEpilogue;
  using Base::Base;
  using typename Base::LoadPipeline;
  using typename Base::LoadPipelineState;
  using typename Base::StorePipeline;
  using typename Base::StorePipelineState;

  // Called by every epilogue thread (thread_idx in [0, num_threads)) after store() of the tile.
  // Stages without outputs only run the CUTLASS tail, plus, when the stage is traced
  // (BindOptions::trace), the full store wait and a barrier before thread 0 records the tile's end.
  template <class StageT>
  CUTLASS_DEVICE auto store_tail_and_post(LoadPipeline load_pipeline, LoadPipelineState load_pipe_consumer_state,
                                          StorePipeline store_pipeline, StorePipelineState store_pipe_producer_state,
                                          int thread_idx, int num_threads, StageT const& stage,
                                          Assignment const& assignment) {
    auto next = Base::store_tail(load_pipeline, load_pipe_consumer_state, store_pipeline, store_pipe_producer_state);
    if constexpr (StageT::num_outputs > 0) {
      device::tma_store_wait_all();         // cp.async.bulk.wait_group 0 (not .read)
      device::fence_proxy_async_global();   // the TMA writes, then the release below
      ::cutlass::arch::NamedBarrier::sync(uint32_t(num_threads), ::cutlass::arch::ReservedNamedBarriers::EpilogueBarrier);
      // After a failed wait (watchdog) the tile holds garbage: do not publish it. Every wait of
      // the chain sees the error code and bails out, so nobody hangs on the missing post.
      if (thread_idx == 0 && !chain_failed_(stage)) stage.post_leader(assignment);
    } else {
      // Last stage: nothing to publish; the per-tile timeline still wants the tile's end, taken
      // after its stores completed (post_leader records it for stages with outputs). The branch
      // is uniform (a kernel parameter) and off unless traced.
      if (stage.trace != nullptr) {
        device::tma_store_wait_all();
        ::cutlass::arch::NamedBarrier::sync(uint32_t(num_threads), ::cutlass::arch::ReservedNamedBarriers::EpilogueBarrier);
        if (thread_idx == 0) stage.record_end_leader(assignment);
      }
    }
    return next;
  }

 private:
  template <class StageT>
  CUTLASS_DEVICE static bool chain_failed_(StageT const& stage) {
    return stage.error != nullptr && device::load_relaxed_gpu(&stage.error->code) != 0;
  }
};

}  // namespace baton::sm90
