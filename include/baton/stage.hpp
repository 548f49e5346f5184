// baton/stage.hpp — a stage of a chain: tile(), wait(), post(). Host + device.
//
//   using S = baton::Stage<RowMajor, Outputs<RowPolicy<GemmA>>, Inputs<TilePolicy<Identity>>>;
//   __global__ void k(S s, ...) {
//     auto a = s.tile();                 // which tile this CTA computes (ticket + order), epoch
//     if (!s.wait(a)) return;            // wait for the producer tiles this tile reads
//     ... compute tile a.tile ...
//     s.post(a);                         // publish: all CTA writes visible, then release-add
//   }
//
// tile()/wait()/post() are CTA-cooperative on the device (every thread calls them) and plain
// calls on the host (the CPU emulator runs one thread per CTA). The *_leader() variants are for
// warp-specialized kernels, where one elected thread waits and the kernel releases its readers
// through its own barrier.
//
// Epochs: the CTA's ticket t gives position t % tiles and epoch t / tiles. Semaphores are never
// reset: epoch e waits until sem >= e * per_epoch + count, compared modulo 2^32, so u32
// semaphores wrap around safely.
#pragma once

#include <cstdint>
#include <type_traits>

#include "baton/config.hpp"
#include "baton/device/flags.hpp"
#include "baton/error_record.hpp"
#include "baton/order.hpp"
#include "baton/policy.hpp"
#include "baton/tile.hpp"

namespace baton {

// The policies of the edges a stage produces (Outputs) and consumes (Inputs), in edge order.
template <class... Ps>
struct Outputs {};
template <class... Ps>
struct Inputs {};
// The old spellings (docs/naming.md).
template <class... Ps>
using outputs [[deprecated("renamed Outputs, docs/naming.md")]] = Outputs<Ps...>;
template <class... Ps>
using inputs [[deprecated("renamed Inputs, docs/naming.md")]] = Inputs<Ps...>;

template <class P>
struct OutEdge {
  P policy{};
  uint32_t* sems = nullptr;
  uint32_t edge_index = 0;
};
template <class P>
struct InEdge {
  P policy{};
  const uint32_t* sems = nullptr;
  uint32_t edge_index = 0;
  // The checker proved every k-block's reads covered by that k-block's own waits
  // (CheckReport::k_local; Chain::bind copies it): a split-K part skips the waits of the k-blocks
  // before its first (horizon.hpp). False unless proven.
  bool k_local = false;
};

namespace detail {
template <template <class> class E, class... Ps>
struct edge_list;
template <template <class> class E>
struct edge_list<E> {
  static constexpr int size = 0;
};
template <template <class> class E, class P, class... Rest>
struct edge_list<E, P, Rest...> {
  static constexpr int size = 1 + sizeof...(Rest);
  E<P> head{};
  edge_list<E, Rest...> tail{};
};
template <int I, class L>
BATON_HOST_DEVICE constexpr auto& get(L& l) {
  if constexpr (I == 0)
    return l.head;
  else
    return get<I - 1>(l.tail);
}
template <int I, class L>
BATON_HOST_DEVICE constexpr const auto& get(const L& l) {
  if constexpr (I == 0)
    return l.head;
  else
    return get<I - 1>(l.tail);
}
template <class T>
struct is_outputs : std::false_type {};
template <class... Ps>
struct is_outputs<Outputs<Ps...>> : std::true_type {};
template <class T>
struct is_inputs : std::false_type {};
template <class... Ps>
struct is_inputs<Inputs<Ps...>> : std::true_type {};
}  // namespace detail

// What tile() hands a CTA.
struct Assignment {
  Tile tile{};
  int position = 0;    // place in the stage's order
  uint32_t epoch = 0;  // chain iteration (mod 2^32)
  uint64_t start_ns = 0;  // when the tile was taken (only with tracing on)
};

// One tile's life, for per-tile timelines (trace.hpp exports them as Perfetto/Chrome JSON).
struct TileEvent {
  uint64_t start_ns;  // tile() took the ticket (%globaltimer)
  uint64_t end_ns;    // post() / done() published it
  uint32_t stage;
  uint32_t tile;      // Grid::linear of the tile
  uint32_t sm;        // %smid (0 on the host)
  uint32_t epoch;
};

BATON_HOST_DEVICE uint32_t sm_id() {
#if BATON_DEVICE_PASS
  uint32_t id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
#else
  return 0;
#endif
}

// Where a wait happened, for the watchdog's error record.
struct WaitSite {
  ErrorRecord* error = nullptr;
  uint64_t watchdog_ns = 0;
  uint32_t stage = 0;
  uint32_t edge = 0;
  Tile tile{};
  int k_block = -1;
  uint32_t sem = 0;
  uint32_t epoch = 0;
};

// A wait at `site` timed out having seen `seen` of `target`: claims the chain's error record once,
// fills it, then publishes the code that makes every other wait bail.
BATON_HOST_DEVICE void report_watchdog(const WaitSite& site, uint32_t target, uint32_t seen) {
  if (!site.error) return;
  if (device::cas_relaxed_gpu(&site.error->claim, 0u, 1u) == 0u) {
    ErrorRecord* e = site.error;
    e->stage = site.stage;
    e->tile_m = site.tile.m;
    e->tile_n = site.tile.n;
    e->tile_z = site.tile.z;
    e->k_block = site.k_block;
    e->edge = site.edge;
    e->semaphore = site.sem;
    e->expected = target;
    e->seen = seen;
    e->epoch = site.epoch;
    device::store_release_gpu(&e->code, uint32_t(DeviceError::watchdog));
  }
}

// Spin until *sem >= target (mod 2^32) with acquire semantics. Returns false if the chain's
// error record is set (by another wait's watchdog or by the host) or this wait's watchdog fires.
BATON_HOST_DEVICE bool wait_geq(const uint32_t* sem, uint32_t target, const WaitSite& site) {
  uint32_t v = device::load_acquire_gpu(sem);
  if (int32_t(v - target) >= 0) return true;
  device::Backoff backoff;
  const uint64_t start = site.watchdog_ns ? device::global_timer_ns() : 0;
  for (uint32_t spins = 1;; ++spins) {
    backoff.pause();
    v = device::load_acquire_gpu(sem);
    if (int32_t(v - target) >= 0) return true;
    if ((spins & 7) == 0 && site.error) {
      if (device::load_relaxed_gpu(&site.error->code) != 0) return false;
      if (site.watchdog_ns && device::global_timer_ns() - start > site.watchdog_ns) {
        report_watchdog(site, target, v);
        return false;
      }
    }
  }
}

template <TileOrder Order, class Outs = Outputs<>, class Ins = Inputs<>>
struct Stage {
  static_assert(detail::is_outputs<Outs>::value,
                "baton::Stage<Order, Outs, Ins>: Outs must be baton::Outputs<Policy...> "
                "(the policies of the edges this stage produces)");
  static_assert(detail::is_inputs<Ins>::value,
                "baton::Stage<Order, Outs, Ins>: Ins must be baton::Inputs<Policy...> "
                "(the policies of the edges this stage consumes)");
};

template <TileOrder Order, class... OutPs, class... InPs>
struct Stage<Order, Outputs<OutPs...>, Inputs<InPs...>> {
  static_assert((SyncPolicy<OutPs> && ...),
                "baton::Stage: every type in Outputs<...> must satisfy baton::SyncPolicy "
                "(producer_grid, num_semaphores, post_index, k_blocks, for_each_wait)");
  static_assert((SyncPolicy<InPs> && ...),
                "baton::Stage: every type in Inputs<...> must satisfy baton::SyncPolicy "
                "(producer_grid, num_semaphores, post_index, k_blocks, for_each_wait)");

  static constexpr int num_outputs = sizeof...(OutPs);
  static constexpr int num_inputs = sizeof...(InPs);

  Grid grid{};
  Order order{};
  uint64_t* ticket = nullptr;
  ErrorRecord* error = nullptr;
  uint32_t stage_index = 0;
  uint64_t watchdog_ns = BATON_DEFAULT_WATCHDOG_NS;  // 0 disables the watchdog for this stage
  bool async_proxy_reads = false;  // inputs are read by TMA: fence.proxy.async after acquire
  bool trigger_dependents = true;  // PDL: let the next stage be scheduled once this CTA runs
  TileEvent* trace = nullptr;      // optional: grid.size() events indexed by position (last epoch wins)
  detail::edge_list<OutEdge, OutPs...> out{};
  detail::edge_list<InEdge, InPs...> in{};

  // ---- leader-level API (one thread) ---------------------------------------------------------

  BATON_HOST_DEVICE Assignment acquire_tile_leader() const {
    uint32_t part = 0;
    return acquire_tile_leader(1u, &part);
  }

  // For kernels that give each tile to `ctas_per_tile` CTAs (split-K): the ticket counts CTAs,
  // consecutive tickets share a tile (so a tile's parts run together), *part is this CTA's part
  // in [0, ctas_per_tile). The epoch still advances once per grid.size() tiles.
  BATON_HOST_DEVICE Assignment acquire_tile_leader(uint32_t ctas_per_tile, uint32_t* part) const {
    const uint64_t parts = ctas_per_tile == 0 ? 1u : ctas_per_tile;
    const uint64_t n = uint64_t(grid.size()) * parts;
    const uint64_t t = device::fetch_add_relaxed_gpu(ticket, 1);
    const uint64_t u = t % n;
    Assignment a;
    a.position = int(u / parts);
    *part = uint32_t(u % parts);
    a.epoch = uint32_t(t / n);
    a.tile = order(grid, a.position);
    if (trace) a.start_ns = device::global_timer_ns();
    return a;
  }

  // Records the tile's end in the trace (post_leader does it; last stages call done()).
  BATON_HOST_DEVICE void record_end_leader(const Assignment& a) const {
    if (trace)
      trace[a.position] = TileEvent{a.start_ns, device::global_timer_ns(), stage_index, uint32_t(grid.linear(a.tile)),
                                    sm_id(), a.epoch};
  }

  // Waits of input I for k-block k of the assigned tile.
  template <int I>
  BATON_HOST_DEVICE bool wait_input_leader(const Assignment& a, int k) const {
    static_assert(I >= 0 && I < num_inputs, "baton::Stage::wait_input_leader<I>: input index out of range");
    const auto& e = detail::get<I>(in);
    WaitSite site{error, watchdog_ns, stage_index, e.edge_index, a.tile, k, 0, a.epoch};
    bool ok = e.policy.for_each_wait(a.tile, k, [&](WaitSpec w) {
      site.sem = uint32_t(w.sem);
      return wait_geq(e.sems + w.sem, a.epoch * w.per_epoch + w.count, site);
    });
    if (async_proxy_reads) device::fence_proxy_async_global();
    return ok;
  }

  // All inputs, k-block k.
  BATON_HOST_DEVICE bool wait_leader(const Assignment& a, int k) const {
    return wait_all_inputs_(a, k, std::make_integer_sequence<int, num_inputs>{});
  }

  // All inputs, every k-block (for kernels that read the whole footprint up front).
  BATON_HOST_DEVICE bool wait_leader(const Assignment& a) const {
    int kmax = max_k_blocks_(std::make_integer_sequence<int, num_inputs>{});
    for (int k = 0; k < kmax; ++k)
      if (!wait_leader(a, k)) return false;
    return true;
  }

  // Publish the tile to every output edge. The caller guarantees that all of the tile's writes
  // happened before (CTA barrier for plain stores; tma_store_wait_all + fence_proxy_async_global
  // for TMA stores).
  BATON_HOST_DEVICE void post_leader(const Assignment& a) const {
    static_assert(num_outputs > 0,
                  "baton::Stage::post: this stage has no Outputs<...>; it is the last stage of its "
                  "chain and has nothing to publish");
    post_all_(a, std::make_integer_sequence<int, num_outputs>{});
    record_end_leader(a);
  }

  // ---- CTA-cooperative API (every thread of the CTA calls these) -----------------------------

  BATON_HOST_DEVICE Assignment tile() const {
#if BATON_DEVICE_PASS
    __shared__ Assignment shared_assignment;
    if (trigger_dependents) device::launch_dependents();
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) shared_assignment = acquire_tile_leader();
    __syncthreads();
    Assignment a = shared_assignment;
    __syncthreads();  // the shared slot may be reused by the next tile() call
    return a;
#else
    return acquire_tile_leader();
#endif
  }

  BATON_HOST_DEVICE bool wait(const Assignment& a) const { return cta_bool_([&] { return wait_leader(a); }); }
  BATON_HOST_DEVICE bool wait(const Assignment& a, int k) const {
    return cta_bool_([&] { return wait_leader(a, k); });
  }

  // For stages without outputs: marks the tile finished (only the trace cares).
  BATON_HOST_DEVICE void done(const Assignment& a) const {
#if BATON_DEVICE_PASS
    if (!trace) return;
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) record_end_leader(a);
#else
    record_end_leader(a);
#endif
  }

  BATON_HOST_DEVICE void post(const Assignment& a) const {
#if BATON_DEVICE_PASS
    __syncthreads();  // every thread's writes of the tile happen before thread 0's release
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) post_leader(a);
#else
    post_leader(a);
#endif
  }

 private:
  template <class F>
  BATON_HOST_DEVICE bool cta_bool_(F&& f) const {
#if BATON_DEVICE_PASS
    __shared__ int shared_ok;
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) shared_ok = f() ? 1 : 0;
    __syncthreads();
    bool ok = shared_ok != 0;
    __syncthreads();
    return ok;
#else
    return f();
#endif
  }
  template <int... I>
  BATON_HOST_DEVICE bool wait_all_inputs_(const Assignment& a, int k, std::integer_sequence<int, I...>) const {
    return (wait_input_leader<I>(a, k) && ...);
  }
  template <int... I>
  BATON_HOST_DEVICE int max_k_blocks_(std::integer_sequence<int, I...>) const {
    int m = 1;
    ((m = detail::get<I>(in).policy.k_blocks() > m ? detail::get<I>(in).policy.k_blocks() : m), ...);
    return m;
  }
  template <int... I>
  BATON_HOST_DEVICE void post_all_(const Assignment& a, std::integer_sequence<int, I...>) const {
    (device::red_add_release_gpu(detail::get<I>(out).sems + detail::get<I>(out).policy.post_index(a.tile), 1u),
     ...);
  }
};

}  // namespace baton
