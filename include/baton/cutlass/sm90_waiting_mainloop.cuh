// baton/cutlass/sm90_waiting_mainloop.cuh — a CUTLASS 4.2 sm90 TMA warp-specialized mainloop
// whose producer warp loads A(k) only once a baton horizon says k-block k may be read.
//
//   using Mainloop = baton::sm90::WaitingMainloop<CollectiveMma<MainloopSm90TmaGmmaWarpSpecialized<...>, ...>>;
//   using ConvMainloop = baton::sm90::WaitingMainloop<CollectiveConv<MainloopSm90TmaGmmaWarpSpecializedImplicitGemm<
//                            conv::Operator::kFprop, ...>, ...>>;   // A through im2col TMA (sm90_conv.cuh)
//
// Everything but load() is the CUTLASS collective (Params, to_underlying_arguments, load_init,
// mma, mma_tail, load_tail). load() takes two more arguments: the pipeline's shared storage (to
// test a slot without blocking) and an input waiter: baton::HorizonWaits (baton/horizon.hpp; the
// kernel's sync warp makes the semaphore waits and publishes the horizon), GridDependencyWaits
// or NoInputWaits.
//
// Order of operations in the elected producer thread, per k-block k:
//   1. B (weights, not produced by the chain) is issued first. While A(k) is not ready, B runs
//      ahead into every pipeline slot that is free, up to a whole pipeline: the weights never
//      wait for the activations.
//   2. A(k) ready: with HorizonWaits a compare of k with the horizon last read (a shared-memory
//      atomic only when k reaches it). No semaphore load, no footprint arithmetic and no proxy
//      fence on this thread: the sync lanes fence after their acquires, before they publish.
//   3. TMA-load A(k) into the same slot; its mbarrier was armed for A+B bytes when the slot was
//      acquired, so the MMA warps see the slot full only when both have landed (a shortened A box,
//      ABox, takes its missing bytes off first).
//
// Why load() is re-implemented instead of wrapped: CUTLASS issues A and B of a k-block back to back
// inside one loop with no hook between the slot acquire and the copies, so the only way to put a
// wait between them (and to let B run ahead of A) is to write that ~40-line loop again. The TMA
// atoms, partitioning and pipeline are still the collective's own.
#pragma once

#if !__has_include(<cutlass/cutlass.h>)
#error "baton/cutlass/sm90_waiting_mainloop.cuh needs CUTLASS 4.2 on the include path: link the CMake target baton::cutlass (configure baton with -DBATON_WITH_CUTLASS=ON, or -DBATON_CUTLASS_DIR=<CUTLASS 4.2 checkout>), or add <cutlass>/include and <cutlass>/tools/util/include (pip: nvidia-cutlass==4.2.0.0, under cutlass_library/source/)"
#endif

#include <concepts>
#include <cstdint>
#include <type_traits>
#include <utility>

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/pipeline/pipeline.hpp>

#include "baton/device/flags.hpp"
#include "baton/horizon.hpp"

namespace baton::sm90 {

// A stage with no inputs: every k-block is ready, nothing to fence.
struct NoInputWaits {
  static constexpr bool enabled = false;
  static constexpr bool cheap_poll = false;
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
  static constexpr bool cheap_poll = false;  // griddepcontrol.wait blocks once; nothing to poll
  bool done = false;
  CUTLASS_DEVICE bool ready(int) { return done; }
  CUTLASS_DEVICE void wait(int) {
    device::grid_dependency_wait();
    done = true;
  }
  CUTLASS_DEVICE void fence_for_tma_reads() {}
  CUTLASS_DEVICE void pause() {}
};

// The A box of one tile: the kernel's own (desc == nullptr), or a shortened one for a ragged last
// row band. The pipeline arms every slot for the full box's bytes; missing_bytes (the full box's
// minus the short box's) are taken off the slot's barrier with mbarrier.complete_tx before the short
// load is issued, so the slot completes when the bytes that do come have landed. The expected count
// stays positive throughout (the short box is at least 8 rows), so the phase cannot complete early.
// skip: no load at all (a band pair's padded band, wholly past m): missing_bytes, all of A's, are
// completed without a copy, so the slot completes when B has landed. Its rows feed accumulator
// rows that are never stored, and that CTA skips its GMMAs anyway.
struct ABox {
  cute::TmaDescriptor const* desc = nullptr;  // in kernel parameter space (__grid_constant__)
  uint32_t missing_bytes = 0;
  bool skip = false;
};
// B's box of one tile, the same way: a shortened one for the ragged last token tile of a swapped
// GEMM (B holds the tokens), whose other rows would be zero-filled by TMA at every k-block.
using BBox = ABox;

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

  // Clusters of one CTA; CTA pairs along N (1 x 2 x 1) that share A: each CTA of a pair loads its
  // half of A's box and multicasts it to both (B, the weights, differs per CTA); or band pairs
  // along M (2 x 1 x 1) that share B, the weights, the same way (A differs per CTA).
  using ClusterShape = typename DispatchPolicy::ClusterShape;
  static constexpr int kClusterM = int(cute::size<0>(ClusterShape{}));
  static constexpr int kClusterN = int(cute::size<1>(ClusterShape{}));
  static_assert(cute::size<2>(ClusterShape{}) == 1 && kClusterM * kClusterN <= 2,
                "baton::sm90::WaitingMainloop: 1x1x1 clusters, CTA pairs (1x2x1) or band pairs (2x1x1) only");
  // A through plain TMA (a GEMM) or im2col TMA (an implicit-GEMM convolution's activations, CUTLASS's
  // sm90 fprop collective); B, the weights or filters, through plain TMA.
  static constexpr bool im2col_a = std::is_same_v<typename Base::GmemTiledCopyA, cute::SM90_TMA_LOAD_IM2COL>;
  static_assert((im2col_a && kClusterN == 1) ||
                    std::is_same_v<typename Base::GmemTiledCopyA,
                                   std::conditional_t<kClusterN == 1, cute::SM90_TMA_LOAD, cute::SM90_TMA_LOAD_MULTICAST>>,
                "baton::sm90::WaitingMainloop: expects SM90_TMA_LOAD (or, for a convolution, SM90_TMA_LOAD_IM2COL) for A, "
                "or SM90_TMA_LOAD_MULTICAST when A is multicast to a CTA pair");
  static_assert(std::is_same_v<typename Base::GmemTiledCopyB,
                               std::conditional_t<kClusterM == 1, cute::SM90_TMA_LOAD, cute::SM90_TMA_LOAD_MULTICAST>>,
                "baton::sm90::WaitingMainloop: expects SM90_TMA_LOAD for B, or SM90_TMA_LOAD_MULTICAST when B is "
                "multicast to a band pair");

  // Producer side of the mainloop for one output tile. Same contract as the CUTLASS load()
  // (called by the whole producer warp, one lane works), plus the pipeline storage and the waiter.
  template <class TensorA, class TensorB, class KTileIterator, class BlockCoord, class Waiter>
  CUTLASS_DEVICE void load(Params const& params, MainloopPipeline pipeline, PipelineState smem_pipe_write,
                           cute::tuple<TensorA, TensorB> const& load_inputs, BlockCoord const& blk_coord,
                           KTileIterator k_tile_iter, int k_tile_count, TensorStorage& shared_tensors,
                           PipelineStorage& pipeline_storage, Waiter& waiter, ABox a_box = {}, BBox b_box = {}) {
    using namespace cute;
    if (!cute::elect_one_sync()) return;

    Tensor sA = make_tensor(make_smem_ptr(shared_tensors.smem_A.data()), SmemLayoutA{});  // (BLK_M,BLK_K,PIPE)
    Tensor sB = make_tensor(make_smem_ptr(shared_tensors.smem_B.data()), SmemLayoutB{});  // (BLK_N,BLK_K,PIPE)
    // A CTA pair: this CTA's rank along N picks its half of A's box; the mask sends it to both. A
    // band pair: the same for B along M.
    const uint32_t rank_n = kClusterN > 1 ? cute::block_rank_in_cluster() : 0u;
    const uint32_t rank_m = kClusterM > 1 ? cute::block_rank_in_cluster() : 0u;
    const uint16_t mcast_mask_a = kClusterN > 1 ? uint16_t((1u << kClusterN) - 1u) : uint16_t(0);
    const uint16_t mcast_mask_b = kClusterM > 1 ? uint16_t((1u << kClusterM) - 1u) : uint16_t(0);
    // mbarrier.complete_tx addresses a CTA of the cluster: this one's rank (0 without a cluster).
    const uint32_t self_rank = kClusterM * kClusterN > 1 ? cute::block_rank_in_cluster() : 0u;
    auto block_tma_a = params.tma_load_a.get_slice(rank_n);
    auto block_tma_b = params.tma_load_b.get_slice(rank_m);
    auto [m_coord, n_coord, k_coord, l_coord] = blk_coord;
    // A GEMM's tiled views carry a batch mode L, (BLK,BLK_K,m,k,l); a convolution's do not,
    // (BLK,BLK_K,m,k) with k = (channel block, s, r).
    // A batched GEMM (GemmArguments::batch) shares the weights: A's batch is the tile's, B's is 0
    // (its descriptor has one batch).
    auto slice = [&](auto const& g, auto coord, auto l) {
      if constexpr (decltype(cute::rank(g))::value == 5) return g(_, _, coord, _, l);
      else return g(_, _, coord, _);
    };
    Tensor gA = slice(get<0>(load_inputs), m_coord, l_coord);  // (BLK_M,BLK_K,k)
    Tensor gB = slice(get<1>(load_inputs), n_coord, 0);        // (BLK_N,BLK_K,k)
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
      if constexpr (kClusterM > 1) {  // a band pair: B is multicast, its box never shortened
        copy(params.tma_load_b.with(*bar, mcast_mask_b), tBgB(_, _, _, *iter_b), tBsB(_, _, _, write_b.index()));
      } else if (b_box.desc != nullptr) {  // a shortened box: the slot was armed for the full one
        ::cutlass::arch::ClusterTransactionBarrier::complete_transaction(bar, self_rank, b_box.missing_bytes);
        copy(params.tma_load_b.with(b_box.desc, *bar), tBgB(_, _, _, *iter_b), tBsB(_, _, _, write_b.index()));
      } else {
        copy(params.tma_load_b.with(*bar, uint16_t(0)), tBgB(_, _, _, *iter_b), tBsB(_, _, _, write_b.index()));
      }
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
        // While A(ka) is not ready, stream B into every slot that frees up. A horizon is cheap to
        // poll (shared memory), so the loop keeps filling B until A is ready; its sync warp's
        // watchdog bounds the wait (on failure the horizon jumps to the end). A blocking waiter
        // (griddepcontrol.wait) blocks at the first busy slot instead.
        while (!waiter.ready(ka)) {
          if (kb < k_tile_count && kb < ka + Stages &&
              pipeline_storage.empty_barrier_[write_b.index()].test_wait(write_b.phase())) {
            issue_b(true);
          } else if constexpr (Waiter::cheap_poll) {
            waiter.pause();
          } else {
            waiter.wait(ka);
            break;
          }
        }
        waiter.fence_for_tma_reads();  // acquire (generic proxy) -> TMA read (async proxy), where the waiter's thread acquired
      }
      auto* bar = pipeline.producer_get_barrier(write_a);
      if constexpr (im2col_a) {
        copy(params.tma_load_a.with(*bar), tAgA(_, _, _, *iter_a), tAsA(_, _, _, write_a.index()));
      } else if constexpr (kClusterN == 1) {
        if (a_box.skip) {
          ::cutlass::arch::ClusterTransactionBarrier::complete_transaction(bar, self_rank, a_box.missing_bytes);
        } else if (a_box.desc != nullptr) {  // a shortened box (plain TMA only; a convolution never sets one)
          ::cutlass::arch::ClusterTransactionBarrier::complete_transaction(bar, self_rank, a_box.missing_bytes);
          copy(params.tma_load_a.with(a_box.desc, *bar), tAgA(_, _, _, *iter_a), tAsA(_, _, _, write_a.index()));
        } else {
          copy(params.tma_load_a.with(*bar), tAgA(_, _, _, *iter_a), tAsA(_, _, _, write_a.index()));
        }
      } else {
        copy(params.tma_load_a.with(*bar, mcast_mask_a), tAgA(_, _, _, *iter_a), tAsA(_, _, _, write_a.index()));
      }
      ++iter_a;
      ++write_a;
    }
  }
};

}  // namespace baton::sm90
