// baton/cutlass/sm90_waiting_mainloop.cuh — a CUTLASS 4.2 sm90 TMA warp-specialized mainloop
// whose producer warp waits on baton semaphores per k-block before it loads A.
//
//   using Mainloop = baton::sm90::WaitingMainloop<CollectiveMma<MainloopSm90TmaGmmaWarpSpecialized<...>, ...>>;
//
// Everything but load() is the CUTLASS collective (Params, to_underlying_arguments, load_init,
// mma, mma_tail, load_tail). load() takes two more arguments: the pipeline's shared storage (to
// test a slot without blocking) and an input waiter (StageInputWaits below, or NoInputWaits).
//
// Order of operations in the elected producer thread, per k-block k:
//   1. B (weights, not produced by the chain) is issued first. While A(k) is not ready, B runs
//      ahead into every pipeline slot that is already free, up to a whole pipeline.
//   2. Wait for A(k): ld.acquire.gpu on the semaphores of the policy (a non-blocking check first,
//      then baton::Stage::wait_leader with its watchdog), then fence.proxy.async.global: the TMA
//      (async proxy) read of A must see what the acquire made visible to this thread (generic
//      proxy). Waits already seen satisfied in this tile are not reloaded, and a k-block with no
//      new acquire needs no new fence (the earlier one precedes every later TMA of this thread).
//   3. TMA-load A(k) into the same slot; its mbarrier was armed for A+B bytes when the slot was
//      acquired, so the MMA warps see the slot full only when both have landed.
//
// Why load() is re-implemented instead of wrapped: CUTLASS issues A and B of a k-block back to back
// inside one loop with no hook between the slot acquire and the copies, so the only way to put a
// wait between them (and to let B run ahead of A) is to write that ~40-line loop again. The TMA
// atoms, partitioning and pipeline are still the collective's own.
#pragma once

#if __has_include(<cutlass/cutlass.h>)  // CUTLASS 4.2 on the include path (link baton::cutlass)

#include <concepts>
#include <cstdint>
#include <type_traits>
#include <utility>

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/pipeline/pipeline.hpp>

#include "baton/device/flags.hpp"
#include "baton/footprint.hpp"
#include "baton/policy.hpp"
#include "baton/stage.hpp"

namespace baton::sm90 {

// A stage with no inputs: every k-block is ready, nothing to fence.
struct NoInputWaits {
  static constexpr bool enabled = false;
  CUTLASS_DEVICE bool ready(int) { return true; }
  CUTLASS_DEVICE void wait(int) {}
  CUTLASS_DEVICE void fence_for_tma_reads() {}
};

// A stage without inputs that is PDL-launched behind the grid that writes its A (the kernel-granular
// baseline and baton::ops::mlp's `none` policy at decode): A(0) waits for griddepcontrol.wait, the
// previous grid's completion; B, the weights, which no grid of the chain writes, streams into
// every free pipeline slot first, so a CTA that starts while the previous grid drains already
// has a pipeline of weights in flight. griddepcontrol.wait makes the previous grid's writes
// visible to this grid's loads, TMA included (CUTLASS issues its TMA right after it too).
struct GridDependencyWaits {
  static constexpr bool enabled = true;
  bool done = false;
  CUTLASS_DEVICE bool ready(int) { return done; }
  CUTLASS_DEVICE void wait(int) {
    device::grid_dependency_wait();
    done = true;
  }
  CUTLASS_DEVICE void fence_for_tma_reads() {}
};

namespace detail {
template <class P>
concept k_local_policy = requires(P const& p) {
  { p.footprint } -> std::convertible_to<footprint::GemmA>;
  { p.per_k_block } -> std::convertible_to<bool>;
};
// Does a CTA that starts at k-block k_begin > 0 (split-K) also have to make the policy's waits of
// k-blocks [0, k_begin)? A policy's waits for k-block k cover every later k-block, so in general
// yes. Per-k-block policies over a GemmA footprint wait at k exactly for the producer tiles that
// k-block k reads (footprint.rect(t, k)), so they do not.
template <class P>
CUTLASS_DEVICE bool needs_prefix_waits(P const& p) {
  if constexpr (k_local_policy<P>) return !p.per_k_block;
  else return true;
}
}  // namespace detail

// The inputs of a baton Stage, for the tile `assignment` took, from k-block k_begin on (0, or
// the first k-block of this CTA's split-K part). The mainloop calls ready/wait with k-blocks
// relative to k_begin. One thread uses it (the elected lane of the producer warp), so it may
// keep state.
template <class StageT>
struct StageInputWaits {
  static constexpr bool enabled = StageT::num_inputs > 0;
  static constexpr int num_inputs = StageT::num_inputs;
  const StageT* stage = nullptr;
  Assignment assignment{};
  int k_begin = 0;
  bool failed = false;         // a wait bailed out (watchdog or chain error): stop waiting, drain the tile
  bool fence_pending = false;  // an acquire happened since the last proxy fence
  // Per input, the last semaphore seen satisfied (index + 1, 0: none) and its target. A
  // satisfied wait stays satisfied, and consecutive k-blocks usually wait on the same producer
  // tile (two 64-wide k-blocks per 128-wide tile): this halves the acquire round trips on the
  // TMA issue path.
  int cached_sem[num_inputs > 0 ? num_inputs : 1] = {};
  uint32_t cached_target[num_inputs > 0 ? num_inputs : 1] = {};

  // Non-blocking: are all of k-block k's waits already satisfied? (acquire loads, no spinning)
  CUTLASS_DEVICE bool ready(int k) {
    if (failed) return true;
    return ready_(k, std::make_integer_sequence<int, num_inputs>{});
  }
  // Blocking: spin (with backoff and the stage's watchdog) until k-block k may be read.
  CUTLASS_DEVICE void wait(int k) {
    if (!failed) wait_(k, std::make_integer_sequence<int, num_inputs>{});
    fence_pending = true;
  }
  // After the acquires, before the TMA (async proxy) reads what they published. One fence
  // covers every later TMA read of this thread, so k-blocks with no new acquire skip it.
  CUTLASS_DEVICE void fence_for_tma_reads() {
    if (fence_pending) device::fence_proxy_async_global();
    fence_pending = false;
  }

 private:
  // The absolute k-blocks whose waits input I makes before local k-block k.
  template <int I>
  CUTLASS_DEVICE int first_k_(int k) const {
    if (k != 0 || k_begin == 0) return k_begin + k;
    return detail::needs_prefix_waits(baton::detail::get<I>(stage->in).policy) ? 0 : k_begin;
  }
  template <int... I>
  CUTLASS_DEVICE bool ready_(int k, std::integer_sequence<int, I...>) {
    return (input_ready_<I>(k) && ...);
  }
  template <int I>
  CUTLASS_DEVICE bool input_ready_(int k) {
    for (int kk = first_k_<I>(k); kk <= k_begin + k; ++kk)
      if (!input_ready_at_<I>(kk)) return false;
    return true;
  }
  template <int I>
  CUTLASS_DEVICE bool input_ready_at_(int k) {
    const auto& e = baton::detail::get<I>(stage->in);
    const Assignment& a = assignment;
    return e.policy.for_each_wait(a.tile, k, [&](WaitSpec w) {
      const uint32_t target = a.epoch * w.per_epoch + w.count;
      if (cached_sem[I] == w.sem + 1 && cached_target[I] == target) return true;
      if (int32_t(device::load_acquire_gpu(e.sems + w.sem) - target) < 0) return false;  // same compare as wait_geq
      cached_sem[I] = w.sem + 1;
      cached_target[I] = target;
      fence_pending = true;
      return true;
    });
  }
  template <int... I>
  CUTLASS_DEVICE void wait_(int k, std::integer_sequence<int, I...>) {
    ((failed ? (void)0 : input_wait_<I>(k)), ...);
  }
  template <int I>
  CUTLASS_DEVICE void input_wait_(int k) {
    for (int kk = first_k_<I>(k); kk <= k_begin + k && !failed; ++kk)
      if (!stage->template wait_input_leader<I>(assignment, kk)) failed = true;
  }
};

template <class BaseMainloop>
struct WaitingMainloop : BaseMainloop {
  using Base = BaseMainloop;
  using typename Base::DispatchPolicy;
  using typename Base::MainloopPipeline;
  using typename Base::Params;
  using typename Base::PipelineState;
  using typename Base::PipelineStorage;
  using typename Base::SmemLayoutA;
  using typename Base::SmemLayoutB;
  using typename Base::TensorStorage;
  static constexpr int Stages = DispatchPolicy::Stages;

  // Clusters of one CTA, or CTA pairs along N (1 x 2 x 1) that share A: each CTA of a pair loads
  // its half of A's box and multicasts it to both (B, the weights, differs per CTA).
  using ClusterShape = typename DispatchPolicy::ClusterShape;
  static constexpr int kClusterN = int(cute::size<1>(ClusterShape{}));
  static_assert(cute::size<0>(ClusterShape{}) == 1 && cute::size<2>(ClusterShape{}) == 1 &&
                    (kClusterN == 1 || kClusterN == 2),
                "baton::sm90::WaitingMainloop: 1x1x1 clusters or CTA pairs (1x2x1) only");
  static_assert(std::is_same_v<typename Base::GmemTiledCopyA,
                               std::conditional_t<kClusterN == 1, cute::SM90_TMA_LOAD, cute::SM90_TMA_LOAD_MULTICAST>> &&
                    std::is_same_v<typename Base::GmemTiledCopyB, cute::SM90_TMA_LOAD>,
                "baton::sm90::WaitingMainloop: expects SM90_TMA_LOAD for B, and for A unless A is multicast to a pair");

  // Producer side of the mainloop for one output tile. Same contract as the CUTLASS load()
  // (called by the whole producer warp, one lane works), plus the pipeline storage and the waiter.
  template <class TensorA, class TensorB, class KTileIterator, class BlockCoord, class Waiter>
  CUTLASS_DEVICE void load(Params const& params, MainloopPipeline pipeline, PipelineState smem_pipe_write,
                           cute::tuple<TensorA, TensorB> const& load_inputs, BlockCoord const& blk_coord,
                           KTileIterator k_tile_iter, int k_tile_count, TensorStorage& shared_tensors,
                           PipelineStorage& pipeline_storage, Waiter& waiter) {
    using namespace cute;
    if (!cute::elect_one_sync()) return;

    Tensor sA = make_tensor(make_smem_ptr(shared_tensors.smem_A.data()), SmemLayoutA{});  // (BLK_M,BLK_K,PIPE)
    Tensor sB = make_tensor(make_smem_ptr(shared_tensors.smem_B.data()), SmemLayoutB{});  // (BLK_N,BLK_K,PIPE)
    // A CTA pair: this CTA's rank along N picks its half of A's box; the mask sends it to both.
    const uint32_t rank_n = kClusterN > 1 ? cute::block_rank_in_cluster() : 0u;
    const uint16_t mcast_mask_a = kClusterN > 1 ? uint16_t((1u << kClusterN) - 1u) : uint16_t(0);
    auto block_tma_a = params.tma_load_a.get_slice(rank_n);
    auto block_tma_b = params.tma_load_b.get_slice(0);
    auto [m_coord, n_coord, k_coord, l_coord] = blk_coord;
    Tensor gA = get<0>(load_inputs)(_, _, m_coord, _, l_coord);  // (BLK_M,BLK_K,k)
    Tensor gB = get<1>(load_inputs)(_, _, n_coord, _, l_coord);  // (BLK_N,BLK_K,k)
    Tensor tAgA = block_tma_a.partition_S(gA);                   // (TMA,TMA_M,TMA_K,k)
    Tensor tAsA = block_tma_a.partition_D(sA);                   // (TMA,TMA_M,TMA_K,PIPE)
    Tensor tBgB = block_tma_b.partition_S(gB);                   // (TMA,TMA_N,TMA_K,k)
    Tensor tBsB = block_tma_b.partition_D(sB);                   // (TMA,TMA_N,TMA_K,PIPE)

    // Two cursors over the same slots: B's runs ahead of A's. Each slot is acquired once, by B,
    // which arms its full barrier for the A+B transaction bytes.
    PipelineState write_a = smem_pipe_write;
    PipelineState write_b = smem_pipe_write;
    KTileIterator iter_a = k_tile_iter;
    KTileIterator iter_b = k_tile_iter;
    int kb = 0;  // k-blocks whose B has been issued
    auto issue_b = [&](bool slot_known_free) {
      if (slot_known_free)
        pipeline.producer_acquire(write_b, ::cutlass::ProducerToken{::cutlass::BarrierStatus::WaitDone});
      else
        pipeline.producer_acquire(write_b);
      auto* bar = pipeline.producer_get_barrier(write_b);
      copy(params.tma_load_b.with(*bar, uint16_t(0)), tBgB(_, _, _, *iter_b), tBsB(_, _, _, write_b.index()));
      ++iter_b;
      ++write_b;
      ++kb;
    };

    CUTLASS_PRAGMA_NO_UNROLL
    for (int ka = 0; ka < k_tile_count; ++ka) {
      // A's slot. Blocking here cannot deadlock: the slot's previous k-block (ka - Stages) is
      // released by the MMA warps once k-block ka - Stages + 1 < ka has landed, and every k-block
      // below ka is fully issued.
      if (kb == ka) issue_b(false);
      if constexpr (Waiter::enabled) {
        bool ready = waiter.ready(ka);
        // While A(ka) is not published, stream B into slots that are already free. Stop at the
        // first busy slot (it frees only as the MMA warps progress) and block on A instead, so
        // the blocking wait (with its watchdog) is always reached.
        while (!ready && kb < k_tile_count && kb < ka + Stages &&
               pipeline_storage.empty_barrier_[write_b.index()].test_wait(write_b.phase())) {
          issue_b(true);
          ready = waiter.ready(ka);
        }
        if (!ready) waiter.wait(ka);
        waiter.fence_for_tma_reads();  // acquire (generic proxy) -> TMA read (async proxy)
      }
      auto* bar = pipeline.producer_get_barrier(write_a);
      copy(params.tma_load_a.with(*bar, mcast_mask_a), tAgA(_, _, _, *iter_a), tAsA(_, _, _, write_a.index()));
      ++iter_a;
      ++write_a;
    }
  }
};

}  // namespace baton::sm90

#endif  // __has_include(<cutlass/cutlass.h>)
