// baton/cutlass/sm90_fmha.cuh — a Hopper (sm_90a) causal flash attention (FMHA forward) whose tiles
// are ordered, waited on and published by a baton Stage. bf16 in, fp32 softmax and accumulate, bf16 out.
//
//   O[b, s, h*128 +: 128] = softmax(Q K^T / sqrt(128), causal) V     per sequence b and head h, with
//   Q, K, V read from one packed projection QKV [batch, seq, 3 * heads * 128] (row-major):
//   head h's Q at columns h*128, its K at heads*128 + h*128, its V at 2*heads*128 + h*128
//   (the [Q|K|V] layout of a fused QKV GEMM), O [batch, seq, heads * 128] row-major.
//
// Built from the collectives of CUTLASS 4.2's example 88 (examples/88_hopper_fmha, shipped in the
// pip wheel under cutlass_library/source/examples): its warp-specialized cooperative mainloop
// (FmhaMainloopTmaWarpSpecialized: two MMA warp groups of 64 query rows each, online softmax, K/V
// in a 5-stage TMA pipeline), its causal fusion, and the sm90 TMA epilogue it builds. The kernel
// below keeps example 88's warp roles and pipelines for one tile per CTA (its non-persistent form)
// and changes three things, as GemmKernel does for the GEMMs (sm90_gemm.cuh):
//   - the tile (query block m, head n, sequence z) comes from the stage's ticket, not blockIdx;
//   - the producer warp group's first warp (idle in example 88's forward pass) is the sync warp:
//     it proves the tile's k-blocks (key blocks 0..m) against the stage's input policies and
//     publishes a horizon (baton/horizon.hpp); the load warp waits on it before Q and K_0/V_0
//     (k-block 0) and before K_j/V_j (k-block j), before it acquires a pipeline slot;
//   - after both MMA warp groups stored their 64 rows of O (cp.async.bulk.wait_group 0 and
//     fence.proxy.async.global in every thread, a named barrier over the 256 MMA threads), one
//     thread posts the tile (Stage::post_leader): one post per 128-row attention tile.
// The log-sum-exp example 88 stores for the backward pass is not computed (inference).
//
// Requirements (Fmha::can_implement): head_dim 128; seq a multiple of 8 (16-byte TMA strides of
// bf16 rows are guaranteed by the packed layout; example 88's mainloop needs Sq % 8 == 0);
// batch * seq * 3 * heads * 128 < 2^31 (the strides are 32-bit); 16-byte aligned pointers. Queries
// and keys are the same rows (prefill: Sq == Sk == seq); rows past seq in the last query block
// are zero-filled by TMA and never stored.
//
// Fmha<Config, Stage, GridWaitBeforeLoads>: the kernel-granular PDL baseline (no baton waits, the
// previous grid complete before any load). A grid wait before A only (GridWaitBeforeA) has no
// meaning here: Q, K and V all come from the producer.
#pragma once

#if !__has_include(<cutlass/cutlass.h>)
#error "baton/cutlass/sm90_fmha.cuh needs CUTLASS 4.2 on the include path: link the CMake target baton::cutlass (configure baton with -DBATON_WITH_CUTLASS=ON, or -DBATON_CUTLASS_DIR=<CUTLASS 4.2 checkout>), or add <cutlass>/include and <cutlass>/tools/util/include (pip: nvidia-cutlass==4.2.0.0, under cutlass_library/source/)"
#endif
#if !__has_include(<88_hopper_fmha/collective/fmha_collective_tma_warpspecialized.hpp>)
#error "baton/cutlass/sm90_fmha.cuh builds on the collectives of CUTLASS 4.2's example 88 (Hopper FMHA): put <cutlass>/examples on the include path (baton::cutlass does when the examples are there: the pip wheel nvidia-cutlass==4.2.0.0 ships them under cutlass_library/source/examples; a checkout has them under examples/)"
#endif

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include <88_hopper_fmha/collective/fmha_collective_tma_warpspecialized.hpp>
#include <88_hopper_fmha/collective/fmha_epilogue.hpp>
#include <88_hopper_fmha/collective/fmha_fusion.hpp>
#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/arch/reg_reconfig.h>
#include <cutlass/cutlass.h>
#include <cutlass/numeric_types.h>
#include <cutlass/pipeline/pipeline.hpp>

#include "baton/cutlass/sm90_gemm.cuh"  // grid-wait tags, detail::kernel_launch, detail::debug_tile_delay
#include "baton/device/flags.hpp"
#include "baton/horizon.hpp"
#include "baton/launch.cuh"
#include "baton/stage.hpp"
#include "baton/status.hpp"
#include "baton/tile.hpp"

namespace baton::sm90 {

// The attention kernel's compile-time shape: 128 queries x 128 keys per step x head_dim 128, bf16,
// causal. Fusion: example 88's CausalFusion (the only one a baton chain has a proven policy for).
template <class Fusion_ = ::cutlass::fmha::collective::CausalFusion>
struct FmhaConfig {
  using Element = ::cutlass::bfloat16_t;
  using Fusion = Fusion_;
  static constexpr int tile_q = 128;   // queries per tile (two MMA warp groups of 64)
  static constexpr int tile_kv = 128;  // keys per k-block
  static constexpr int head_dim = 128;
  static constexpr int kAlignment = 8;  // bf16 elements per 16 bytes
  using TileShape = cute::Shape<cute::Int<tile_q>, cute::Int<tile_kv>, cute::Int<head_dim>>;
  // (sequence position, head dimension, (batch, head)) strides of Q, K, V and O.
  using Stride = cute::tuple<int, cute::_1, cute::tuple<int, int>>;
  using Mainloop = ::cutlass::fmha::collective::FmhaMainloopTmaWarpSpecialized<Element, float, float, TileShape, Stride,
                                                                               Stride, Stride, Fusion>;
  using Epilogue = ::cutlass::fmha::collective::FmhaFwdEpilogue<Element, float, typename Mainloop::TileShapePV>;
  static_assert(Mainloop::NumMmaWarpGroups == 2, "baton::sm90::FmhaConfig: two MMA warp groups per 128-query tile");
};

// The tiles of an attention over `batch` sequences of `seq` queries and `heads` heads:
// (query blocks of tile_q, heads, sequences). The k-blocks of tile (m, ., .) are key blocks 0..m.
template <class Config>
constexpr Grid fmha_tile_grid(int batch, int seq, int heads) {
  return Grid{(seq + Config::tile_q - 1) / Config::tile_q, heads, batch};
}

// Pointers and extents of one attention launch.
struct FmhaArguments {
  int batch = 0;  // sequences
  int seq = 0;    // queries (= keys) per sequence, a multiple of 8
  int heads = 0;  // heads (of head_dim 128 each)
  const ::cutlass::bfloat16_t* qkv = nullptr;  // [batch, seq, 3 * heads * 128]
  ::cutlass::bfloat16_t* o = nullptr;          // [batch, seq, heads * 128]
  // Tests: every tile sleeps a pseudo-random time up to this before its first load (0: off).
  uint32_t debug_max_tile_delay_ns = 0;
  // Waiting stages: load the key blocks whose waits already hold before the ones still pending
  // (below the diagonal block, which stays last; the first 32 key blocks, then in order). Needs
  // per-k-block input policies. The online softmax then sums the blocks in the order they arrive,
  // so outputs may differ run to run in the last bits; off, the order is fixed (0, 1, ..., m).
  bool load_published_first = false;
};

template <class Config, class StageT, GridWait Wait = NoGridWait>
struct FmhaKernel {
  using Mainloop = typename Config::Mainloop;
  using Epilogue = typename Config::Epilogue;
  using EpilogueTma = typename Epilogue::CollectiveEpilogueTMA;
  using Fusion = typename Config::Fusion;
  using TileShape = typename Mainloop::TileShape;
  using TileShapeQK = typename Mainloop::TileShapeQK;
  using TileShapePV = typename Mainloop::TileShapePV;
  using TiledMmaPV = typename Mainloop::TiledMmaPV;
  static constexpr bool GridDependencyWait = !std::is_same_v<Wait, NoGridWait>;
  static_assert(!std::is_same_v<Wait, GridWaitBeforeA>,
                "baton::sm90::FmhaKernel: Q, K and V all come from the previous stage; use GridWaitBeforeLoads");
  static_assert(!GridDependencyWait || StageT::num_inputs == 0,
                "baton::sm90::FmhaKernel: a grid wait is for stages without inputs (a baton consumer waits on its "
                "producer's semaphores)");

  // B, H, Sq, Sk, D (example 88's problem shape).
  using ProblemShape = cute::tuple<int, int, int, int, int>;
  static constexpr int NumMmaWarpGroups = Mainloop::NumMmaWarpGroups;
  static constexpr uint32_t NumMmaThreads = uint32_t(NumMmaWarpGroups) * ::cutlass::NumThreadsPerWarpGroup;
  static constexpr uint32_t MaxThreadsPerBlock = NumMmaThreads + ::cutlass::NumThreadsPerWarpGroup;
  static constexpr uint32_t MinBlocksPerMultiprocessor = 1;
  // Example 88 gives its producer warp group 24 registers per thread; the sync warp evaluates the
  // input policies' footprints and needs GemmKernel's 40. The MMA warp groups get the rest of the
  // 64K registers (232 with a sync warp, 240 without).
  static constexpr uint32_t LoadRegisterRequirement = StageT::num_inputs > 0 ? 40 : 24;
  static constexpr uint32_t TotalRegisterSupply =
      (64 * 1024 / MaxThreadsPerBlock / MinBlocksPerMultiprocessor / 8) * 8 * MaxThreadsPerBlock /
      ::cutlass::NumThreadsPerWarpGroup;
  static constexpr uint32_t MmaRegisterRequirement =
      ((TotalRegisterSupply - LoadRegisterRequirement) / uint32_t(NumMmaWarpGroups) / 8) * 8;

  using PipelineKV = typename Mainloop::MainloopPipeline;
  using PipelineQ = typename Mainloop::MainloopPipelineQ;
  using PipelineReducer = ::cutlass::PipelineAsync<2>;  // compute() takes it; unused in the forward pass
  using OrderBarrier = ::cutlass::OrderedSequenceBarrier<2, NumMmaWarpGroups>;
  using EpiLoadPipeline = typename Epilogue::LoadPipeline;

  struct SharedStorage {
    // Example 88's non-persistent layout: each MMA warp group's epilogue buffer overlaps its own Q
    // stage, which it no longer reads once its last P*V is issued.
    union TensorStorage {
      typename Mainloop::SharedStorage mainloop;
      typename Epilogue::TensorStorage epilogue[NumMmaWarpGroups];
    } tensors;
    alignas(16) typename PipelineKV::SharedStorage pipeline_kv;
    alignas(16) typename PipelineQ::SharedStorage pipeline_q;
    alignas(16) typename PipelineReducer::SharedStorage pipeline_reducer;
    alignas(16) typename OrderBarrier::SharedStorage math_wg_order;
    alignas(16) typename Epilogue::PipelineStorage epi_load;
    alignas(16) Assignment assignment;  // the tile, broadcast from the thread that took the ticket
    HorizonWord horizon;                // the sync warp's horizon, read by the load warp
  };
  static constexpr int SharedStorageSize = int(sizeof(SharedStorage));
  static_assert(SharedStorageSize <= 232448, "exceeds the 227 KB of shared memory an sm90 CTA may use");

  // Trivially copyable; a __grid_constant__ kernel parameter (the TMA descriptors stay in
  // parameter space).
  struct Params {
    ProblemShape problem_size{};
    typename Mainloop::Params mainloop{};
    typename Epilogue::Params epilogue{};
    StageT stage{};
    uint32_t debug_max_tile_delay_ns = 0;
    bool load_published_first = false;
  };

  // Named barrier (user id) over the two MMA warp groups before the tile is posted.
  static constexpr uint32_t kPostBarrier = 0;

  CUTLASS_DEVICE void operator()(Params const& params, char* smem_buf) const {
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
    __trap();  // GMMA/TMA need sm_90a; compiled for another architecture
#else
    using namespace cute;
    enum class WarpGroupRole { Producer = 0, Consumer0 = 1, Consumer1 = 2 };
    // Example 88's producer warps: 1 loads Q, K and V; 0 (its reducer, a no-op forward) is the sync warp.
    enum class ProducerWarpRole { Sync = 0, LoadKV = 1, Warp2 = 2, Warp3 = 3 };

    SharedStorage& storage = *reinterpret_cast<SharedStorage*>(smem_buf);
    StageT const& stage = params.stage;
    // PDL: the next stage's CTAs may be scheduled once every CTA of this grid runs; they wait on
    // per-tile semaphores, so they cannot starve this grid.
    if (stage.trigger_dependents) device::launch_dependents();

    const int warp_idx = ::cutlass::canonical_warp_idx_sync();
    const auto warp_group_role = WarpGroupRole(::cutlass::canonical_warp_group_idx());
    const auto producer_warp_role = ProducerWarpRole(warp_idx % ::cutlass::NumWarpsPerWarpGroup);
    const int consumer_warp_group_idx = ::cutlass::canonical_warp_group_idx() - int(WarpGroupRole::Consumer0);
    const bool is_consumer =
        warp_group_role == WarpGroupRole::Consumer0 || warp_group_role == WarpGroupRole::Consumer1;
    const int lane_predicate = cute::elect_one_sync();

    if (warp_idx == 0 && lane_predicate) {
      Mainloop::prefetch_tma_descriptors(params.mainloop);
      // The tile comes from the stage's ticket (the stage's order).
      uint32_t part = 0;
      storage.assignment = stage.acquire_tile_leader(1u, &part);
      storage.horizon = HorizonWord{};
    }

    // The pipelines exactly as example 88 sets them up with Q loaded by the K/V warp.
    typename PipelineQ::Params pipeline_q_params;
    pipeline_q_params.transaction_bytes = Mainloop::kOuterLoadBytes;
    pipeline_q_params.is_leader = lane_predicate && producer_warp_role == ProducerWarpRole::LoadKV;
    pipeline_q_params.num_consumers = ::cutlass::NumThreadsPerWarpGroup;
    typename PipelineKV::Params pipeline_kv_params;
    pipeline_kv_params.transaction_bytes = Mainloop::kInnerLoadBytes;
    pipeline_kv_params.is_leader = lane_predicate && producer_warp_role == ProducerWarpRole::LoadKV;
    pipeline_kv_params.num_consumers = int(NumMmaThreads);
    typename PipelineReducer::Params pipeline_reducer_params;
    pipeline_reducer_params.producer_arv_count = NumMmaThreads;
    pipeline_reducer_params.consumer_arv_count = ::cutlass::NumThreadsPerWarp;
    typename EpiLoadPipeline::Params epi_load_params;
    if (warp_group_role == WarpGroupRole::Producer && producer_warp_role == ProducerWarpRole::LoadKV) {
      pipeline_kv_params.role = PipelineKV::ThreadCategory::Producer;
      pipeline_q_params.role = PipelineQ::ThreadCategory::Producer;
    }
    if (warp_group_role == WarpGroupRole::Producer && producer_warp_role == ProducerWarpRole::Sync)
      pipeline_reducer_params.role = PipelineReducer::ThreadCategory::Consumer;
    if (warp_group_role == WarpGroupRole::Producer && producer_warp_role == ProducerWarpRole::Warp3)
      epi_load_params.role = EpiLoadPipeline::ThreadCategory::Producer;
    if (is_consumer) {
      pipeline_kv_params.role = PipelineKV::ThreadCategory::Consumer;
      pipeline_q_params.role = PipelineQ::ThreadCategory::Consumer;
      pipeline_reducer_params.role = PipelineReducer::ThreadCategory::Producer;
      epi_load_params.role = EpiLoadPipeline::ThreadCategory::Consumer;
    }
    PipelineQ pipeline_q(storage.pipeline_q, pipeline_q_params, Shape<_1, _1, _1>{});
    PipelineKV pipeline_kv(storage.pipeline_kv, pipeline_kv_params, Shape<_1, _1, _1>{});
    PipelineReducer pipeline_reducer(storage.pipeline_reducer, pipeline_reducer_params);
    typename OrderBarrier::Params order_params;
    order_params.group_id = consumer_warp_group_idx;
    order_params.group_size = ::cutlass::NumThreadsPerWarpGroup;
    OrderBarrier math_wg_order_barrier(storage.math_wg_order, order_params);
    epi_load_params.dst_blockid = cute::block_rank_in_cluster();
    epi_load_params.producer_arv_count = ::cutlass::NumThreadsPerWarp;
    epi_load_params.consumer_arv_count = ::cutlass::NumThreadsPerWarpGroup;
    epi_load_params.transaction_bytes = Epilogue::TmaTransactionBytes;
    EpiLoadPipeline epi_load_pipeline(storage.epi_load, epi_load_params);

    typename Mainloop::PipelineState kv_read;
    auto kv_write = ::cutlass::make_producer_start_state<PipelineKV>();
    typename Mainloop::PipelineStateQ q_read;
    auto q_write = ::cutlass::make_producer_start_state<PipelineQ>();
    ::cutlass::PipelineState<PipelineReducer::Stages> reducer_write =
        ::cutlass::make_producer_start_state<PipelineReducer>();

    // Barriers initialized and the assignment written before any role reads them.
    __syncthreads();
    const Assignment assignment = storage.assignment;
    // Example 88's block coordinate: (query block, _0, (sequence, head)).
    const auto blk_coord = make_coord(assignment.tile.m, _0{}, make_coord(assignment.tile.z, assignment.tile.n));
    const ProblemShape problem_size = params.problem_size;
    Mainloop collective_mainloop;

    if (warp_group_role == WarpGroupRole::Producer) {
      ::cutlass::arch::warpgroup_reg_dealloc<LoadRegisterRequirement>();
      if (producer_warp_role == ProducerWarpRole::LoadKV) {
        if (params.debug_max_tile_delay_ns != 0) detail::debug_tile_delay(params.debug_max_tile_delay_ns, assignment);
        if constexpr (StageT::num_inputs > 0) {
          HorizonWaits waiter{&storage.horizon.ready, 0, &storage.horizon.ahead};
          load_(params, blk_coord, pipeline_kv, kv_write, pipeline_q, q_write, storage.tensors.mainloop, waiter);
        } else {
          // PDL as CUTLASS does it: the previous grid complete before any load.
          if constexpr (GridDependencyWait) device::grid_dependency_wait();
          NoInputWaits waiter;
          load_(params, blk_coord, pipeline_kv, kv_write, pipeline_q, q_write, storage.tensors.mainloop, waiter);
        }
      } else if (producer_warp_role == ProducerWarpRole::Sync) {
        // The sync warp: the tile's key blocks 0..m (its causal bound), each k-block's waits.
        if constexpr (StageT::num_inputs > 0) {
          const int trips = Fusion{}.get_trip_count(blk_coord, TileShape{}, problem_size);
          run_sync_lanes<1>(HorizonTile<StageT>{&stage, assignment, 0, trips, params.load_published_first},
                            &storage.horizon, int(threadIdx.x % 32));
        }
      }
    } else if (is_consumer) {
      ::cutlass::arch::warpgroup_reg_alloc<MmaRegisterRequirement>();
      // Each MMA warp group computes 64 of the tile's 128 query rows, reading its own Q stage.
      auto wg_coord = blk_coord;
      get<0>(wg_coord) = NumMmaWarpGroups * get<0>(wg_coord) + consumer_warp_group_idx;
      q_read.advance(consumer_warp_group_idx * Mainloop::kOuterLoads);
      auto result = collective_mainloop.compute(blk_coord, wg_coord, params.mainloop, problem_size, pipeline_kv,
                                                kv_read, pipeline_q, q_read, pipeline_reducer, reducer_write,
                                                storage.tensors.mainloop, math_wg_order_barrier);
      // The two warp groups' epilogues in turn, as example 88 runs them (they share the epilogue's
      // named barrier id).
      math_wg_order_barrier.wait();
      store_o_(params, wg_coord, get<0>(result), epi_load_pipeline, storage.tensors.epilogue[consumer_warp_group_idx]);
      math_wg_order_barrier.arrive();
      post_(stage, assignment, int(threadIdx.x) - int(::cutlass::NumThreadsPerWarpGroup));
    }
#endif
  }

 private:
  // The load warp: Q (two 64-row stages), then K_j and V_j of key block j = 0..m, as example 88's
  // load_kv_maybe_q issues them, each k-block's waits made before its first load and before the
  // pipeline slot is acquired (a waiting loader holds no slot). k-block 0 covers Q, K_0 and V_0.
  template <class BlkCoord, class Waiter>
  CUTLASS_DEVICE static void load_(Params const& params, BlkCoord const& blk_coord, PipelineKV& pipeline,
                                   typename Mainloop::PipelineState& write, PipelineQ& pipeline_q,
                                   typename Mainloop::PipelineStateQ& write_q,
                                   typename Mainloop::SharedStorage& storage, Waiter& waiter) {
    using namespace cute;
    const ProblemShape& problem_size = params.problem_size;
    const int trips = Fusion{}.get_trip_count(blk_coord, TileShape{}, problem_size);
    const int lane_predicate = cute::elect_one_sync();
    auto q_iter = cute::make_coord_iterator(Int<NumMmaWarpGroups>{});
    int q_count = NumMmaWarpGroups;
    auto k_iter = cute::make_coord_iterator(trips);
    int k_count = 2 * trips;  // K and V steps
    typename Mainloop::LoadQ load_q{params.mainloop.tma_load_q, pipeline_q, storage.smem_q};
    auto state_q = load_q.init_state(_0{}, problem_size, TileShapeQK{}, blk_coord, NumMmaWarpGroups);
    typename Mainloop::LoadK load_k{params.mainloop.tma_load_k, pipeline, storage.smem_k};
    auto state_k = load_k.init_state(0, problem_size, TileShapeQK{}, blk_coord, trips);
    typename Mainloop::LoadV load_v{params.mainloop.tma_load_v, pipeline, storage.smem_v};
    auto state_v = load_v.init_state(0, problem_size, TileShapePV{}, blk_coord, trips);

    if constexpr (Waiter::enabled) {
      if (params.load_published_first) {
        // Key block j (and Q with the first one): an explicit coordinate per block. Blocks below
        // the diagonal may go in any order (example 88's unmasked steps do not depend on which
        // block a slot holds; the masked diagonal step counts the blocks processed before it), and
        // every k-block's waits cover Q, K_j and V_j on their own (the generated per-k-block policy).
        bool first = true;
        auto load_block = [&](int j) {
          auto it = cute::make_coord_iterator(j, trips);
          int steps = 2;
          if (first) load_q.step(q_iter, state_q, write_q, lane_predicate, q_count);
          load_k.template step<false>(it, state_k, write, lane_predicate, steps);
          if (first) load_q.step(q_iter, state_q, write_q, lane_predicate, q_count);
          load_v.template step<true>(it, state_v, write, lane_predicate, steps);
          first = false;
        };
        const int window = trips - 1 < 32 ? trips - 1 : 32;
        uint32_t issued = 0;
        for (int n = 0; n < window; ++n) {
          int j;
          while ((j = waiter.first_proven(issued, window)) < 0) waiter.pause();
          issued |= 1u << j;
          load_block(j);
        }
        for (int j = window; j < trips; ++j) {
          waiter.wait(j);
          load_block(j);
        }
        return;
      }
      waiter.wait(0);
    }
    load_q.step(q_iter, state_q, write_q, lane_predicate, q_count);
    load_k.template step<false>(k_iter, state_k, write, lane_predicate, k_count);
    load_q.step(q_iter, state_q, write_q, lane_predicate, q_count);
    load_v.template step<true>(k_iter, state_v, write, lane_predicate, k_count);
    CUTLASS_PRAGMA_NO_UNROLL
    for (int j = 1; k_count > 0; ++j) {
      if constexpr (Waiter::enabled) waiter.wait(j);
      load_k.template step<false>(k_iter, state_k, write, lane_predicate, k_count);
      load_v.template step<true>(k_iter, state_v, write, lane_predicate, k_count);
    }
  }

  // One MMA warp group's 64 rows of O through the TMA epilogue example 88 builds (without its LSE).
  template <class WgCoord, class Accumulators>
  CUTLASS_DEVICE static void store_o_(Params const& params, WgCoord const& wg_coord, Accumulators const& acc,
                                      EpiLoadPipeline& epi_load_pipeline,
                                      typename Epilogue::TensorStorage& epi_storage) {
    using namespace cute;
    const ProblemShape& p = params.problem_size;
    EpilogueTma epilogue_tma(params.epilogue.epilogue_TMA, epi_storage);
    using StorePipeline = typename EpilogueTma::StorePipeline;
    typename StorePipeline::Params store_params;
    store_params.always_wait = true;
    StorePipeline store_pipeline(store_params);
    typename EpilogueTma::LoadPipelineState load_state;
    auto store_state = ::cutlass::make_producer_start_state<StorePipeline>();
    auto problem_size_o = make_shape(get<2>(p), get<4>(p), _, make_shape(get<0>(p), get<1>(p)));
    auto [load_next, store_next] = epilogue_tma.store(
        epi_load_pipeline, load_state, store_pipeline, store_state, problem_size_o, TileShapePV{},
        make_coord(get<0>(wg_coord), _0{}, _, get<2>(wg_coord)), acc, TiledMmaPV{},
        int(threadIdx.x % ::cutlass::NumThreadsPerWarpGroup), epi_storage);
    epilogue_tma.store_tail(epi_load_pipeline, load_next, store_pipeline, store_next);
  }

  // After both warp groups' stores: their writes complete and visible (every thread waits for its
  // own bulk groups and fences the async proxy), a barrier over the 256 MMA threads, one post. A
  // last stage only records the tile's end when traced.
  CUTLASS_DEVICE static void post_(StageT const& stage, Assignment const& assignment, int mma_thread_idx) {
    if constexpr (StageT::num_outputs > 0) {
      device::tma_store_wait_all();
      device::fence_proxy_async_global();
      ::cutlass::arch::NamedBarrier::sync(NumMmaThreads, kPostBarrier);
      // After a failed wait (watchdog) the tile holds garbage: do not publish it (every wait of
      // the chain sees the error code and bails out).
      const bool failed = stage.error != nullptr && device::load_relaxed_gpu(&stage.error->code) != 0;
      if (mma_thread_idx == 0 && !failed) stage.post_leader(assignment);
    } else if (stage.trace != nullptr) {
      device::tma_store_wait_all();
      ::cutlass::arch::NamedBarrier::sync(NumMmaThreads, kPostBarrier);
      if (mma_thread_idx == 0) stage.record_end_leader(assignment);
    }
  }
};

// ---- host side ----------------------------------------------------------------------------------

template <class Config, class StageT, GridWait Wait = NoGridWait>
class Fmha {
 public:
  using Kernel = FmhaKernel<Config, StageT, Wait>;
  using Params = typename Kernel::Params;
  using Arguments = FmhaArguments;
  static constexpr size_t smem_bytes = size_t(Kernel::SharedStorageSize);
  static constexpr unsigned threads = Kernel::MaxThreadsPerBlock;

  [[nodiscard]] static status can_implement(const Arguments& a) {
    const std::string dims = "sm90 FMHA batch=" + std::to_string(a.batch) + " seq=" + std::to_string(a.seq) +
                             " heads=" + std::to_string(a.heads) + " head_dim=" + std::to_string(Config::head_dim);
    if (a.batch < 1 || a.seq < 1 || a.heads < 1)
      return status(errc::invalid_argument, dims + ": batch, seq and heads must be >= 1");
    if (a.seq % Config::kAlignment != 0)
      return status(errc::not_supported, dims + ": seq must be a multiple of " + std::to_string(Config::kAlignment) +
                                             " (the FMHA mainloop's query alignment); pad the sequences");
    const int64_t qkv_elems = int64_t(a.batch) * a.seq * 3 * a.heads * Config::head_dim;
    if (qkv_elems >= (int64_t(1) << 31))
      return status(errc::not_supported, dims + ": QKV has " + std::to_string(qkv_elems) +
                                             " elements; the kernel's strides are 32-bit (< 2^31 elements)");
    if (a.qkv == nullptr || a.o == nullptr) return status(errc::invalid_argument, dims + ": qkv and o must be non-null");
    auto misaligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 != 0; };
    if (misaligned(a.qkv) || misaligned(a.o))
      return status(errc::not_supported, dims + ": qkv and o must be 16-byte aligned (TMA)");
    const auto* q0 = a.qkv;
    const auto* q1 = a.qkv + qkv_elems;
    const auto* o0 = a.o;
    const auto* o1 = a.o + qkv_elems / 3;
    if (static_cast<const void*>(o0) < static_cast<const void*>(q1) &&
        static_cast<const void*>(q0) < static_cast<const void*>(o1))
      return status(errc::invalid_argument, dims + ": o overlaps qkv (the kernel reads QKV while it writes O)");
    return {};
  }

  // Validates the arguments against the stage and builds the kernel parameters (TMA descriptors).
  [[nodiscard]] static result<Params> to_params(const StageT& stage, const Arguments& a) {
    BATON_TRY(can_implement(a));
    const Grid want = fmha_tile_grid<Config>(a.batch, a.seq, a.heads);
    if (!(stage.grid == want))
      return status(errc::invalid_argument, "sm90 FMHA: the stage's grid " + to_string(stage.grid) + " is not the " +
                                                to_string(want) + " tiles (query blocks of " +
                                                std::to_string(Config::tile_q) + ", heads, sequences) it computes");
    if (stage.ticket == nullptr) return status(errc::invalid_argument, "sm90 FMHA: the stage has no ticket counter (bind it)");
    BATON_TRY(check_inputs_(stage, a, std::make_integer_sequence<int, StageT::num_inputs>{}));
    BATON_TRY(check_outputs_(stage, std::make_integer_sequence<int, StageT::num_outputs>{}));
    using namespace cute;
    const int hd = a.heads * Config::head_dim;
    const typename Kernel::ProblemShape problem{a.batch, a.heads, a.seq, a.seq, Config::head_dim};
    const typename Config::Stride d_qkv{3 * hd, _1{}, make_tuple(a.seq * 3 * hd, Config::head_dim)};
    const typename Config::Stride d_o{hd, _1{}, make_tuple(a.seq * hd, Config::head_dim)};
    Params p{};
    p.problem_size = problem;
    p.mainloop = Kernel::Mainloop::to_underlying_arguments(
        problem, typename Kernel::Mainloop::Arguments{a.qkv, d_qkv, a.qkv + hd, d_qkv, a.qkv + 2 * hd, d_qkv}, nullptr);
    p.epilogue = Kernel::Epilogue::to_underlying_arguments(
        problem, typename Kernel::Epilogue::Arguments{a.o, d_o, nullptr, {}}, nullptr);
    p.stage = stage;
    p.debug_max_tile_delay_ns = a.debug_max_tile_delay_ns;
    p.load_published_first = a.load_published_first;
    return p;
  }

  // A launch for baton::launch_chain: one CTA per tile, 384 threads, smem_bytes of dynamic shared
  // memory. Sets the kernel's shared-memory limit (once per call, not per launch).
  [[nodiscard]] static result<StageLaunch> make_launch(const StageT& stage, const Arguments& a) {
    auto params = to_params(stage, a);
    if (!params.ok()) return params.error();
    return detail::kernel_launch<Kernel>(params.value(), stage.grid.size(), 1, "sm90 FMHA");
  }

 private:
  // Input policies walk the tile's key blocks: a policy with more k-blocks than the sequence has
  // key blocks would wait for k-blocks the kernel never loads.
  template <int... I>
  static status check_inputs_(const StageT& stage, const Arguments& a, std::integer_sequence<int, I...>) {
    status s;
    ((s.ok() ? (void)(s = check_input_<I>(stage, a)) : (void)0), ...);
    return s;
  }
  template <int I>
  static status check_input_(const StageT& stage, const Arguments& a) {
    const auto& policy = baton::detail::get<I>(stage.in).policy;
    const int key_blocks = (a.seq + Config::tile_kv - 1) / Config::tile_kv;
    if constexpr (requires { policy.per_k_block; }) {
      if (a.load_published_first && !policy.per_k_block)
        return status(errc::invalid_policy, "sm90 FMHA input " + std::to_string(I) +
                                                ": load_published_first needs a per-k-block policy (a per-tile policy makes "
                                                "every wait at k-block 0, so no later key block is proven on its own)");
    } else {
      if (a.load_published_first)
        return status(errc::invalid_policy, "sm90 FMHA input " + std::to_string(I) +
                                                ": load_published_first needs a per-k-block policy whose k-block waits "
                                                "cover that k-block's reads on their own");
    }
    if (policy.k_blocks() > key_blocks)
      return status(errc::invalid_policy, "sm90 FMHA input " + std::to_string(I) + ": the policy has " +
                                              std::to_string(policy.k_blocks()) + " k-blocks but the sequence has " +
                                              std::to_string(key_blocks) + " key blocks of " +
                                              std::to_string(Config::tile_kv));
    return {};
  }
  template <int... I>
  static status check_outputs_(const StageT& stage, std::integer_sequence<int, I...>) {
    status s;
    ((s.ok() ? (void)(s = check_output_<I>(stage)) : (void)0), ...);
    return s;
  }
  template <int I>
  static status check_output_(const StageT& stage) {
    const auto& policy = baton::detail::get<I>(stage.out).policy;
    if (!(policy.producer_grid() == stage.grid))
      return status(errc::invalid_policy, "sm90 FMHA output " + std::to_string(I) + ": the policy's producer grid " +
                                              to_string(policy.producer_grid()) + " is not this attention's tile grid " +
                                              to_string(stage.grid));
    return {};
  }
};

}  // namespace baton::sm90

namespace baton::sm90 {
// The arguments of a kernel configuration: FmhaArguments for an FmhaConfig, GemmArguments<Config>
// for a GEMM's (one launch signature for kernel libraries that hold both, e.g. the attention chain's).
namespace detail {
template <class Config>
struct launch_arguments {
  using type = GemmArguments<Config>;
};
template <class Fusion>
struct launch_arguments<FmhaConfig<Fusion>> {
  using type = FmhaArguments;
};
}  // namespace detail
template <class Config>
using LaunchArguments = typename detail::launch_arguments<Config>::type;
template <class Config>
inline constexpr bool is_fmha_config = std::is_same_v<LaunchArguments<Config>, FmhaArguments>;
}  // namespace baton::sm90
