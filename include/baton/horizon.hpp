// baton/horizon.hpp — a tile's input waits made by one sync warp and published as a horizon.
//
// A consumer tile that loads its inputs k-block by k-block (a TMA producer warp) must not load
// k-block k before every wait its policies give for k is satisfied. Making those waits on the
// load thread puts the semaphore round trips (ld.acquire.gpu, ~0.5-1 us each) and the footprint
// arithmetic on the critical path of every load. Here they move to a sync warp:
//
//   sync warp (32 lanes)                               load thread (elected lane of the load warp)
//   lane l proves local k-blocks l, l+32, ...          k-block k: if k >= seen,
//     (ld.acquire.gpu on each wait's semaphore,          seen = acquire.cta(ready);
//      one k-block per lane per round, re-polling      while k >= seen: fill free B slots, re-read
//      only the waits still pending)                   TMA-load A(k)
//   a lane that proved anything: fence.proxy.async
//   H = min over lanes of the first unproven k-block
//   __syncwarp; lane 0: release.cta(ready, H)
//   (monotone; capped backoff while stuck; the
//    watchdog names the tile, k-block, semaphore)
//
// Every k-block below H is proven: k belongs to lane k % 32, whose first unproven k-block is >= H
// > k. Memory order (docs/design.md, "The horizon"): the producer's red.release.gpu -> a lane's
// ld.acquire.gpu -> the lane's fence.proxy.async.global -> __syncwarp -> lane 0's release.cta ->
// the load thread's acquire.cta -> its TMA reads (async proxy). The proxy fence is made by the
// threads that observed the data (as CUTLASS fences smem writes before another thread's TMA
// store), so the load thread, which has TMA loads in flight, never fences.
//
// On failure (a watchdog fired, or the chain's error record is set) the sync warp sets `failed`
// and publishes ready = count: the load thread drains the tile (its data is not valid) and the
// host reports the error, as with any failed wait.
//
// Host and device: the CPU emulator runs the same lane code, 32 lanes in one host thread
// (run_sync_lanes<32>), against a load thread of its own (tests/host/test_horizon.cpp).
#pragma once

#include <concepts>
#include <cstdint>
#include <utility>

#include "baton/config.hpp"
#include "baton/device/flags.hpp"
#include "baton/footprint.hpp"
#include "baton/policy.hpp"
#include "baton/stage.hpp"

namespace baton {

// One tile's horizon, in shared memory (or, in the emulator, in the CTA body's frame).
struct HorizonWord {
  uint32_t ready = 0;   // local k-blocks [0, ready) may be loaded
  uint32_t failed = 0;  // 1: a wait bailed out; ready == count, the tile's data is not valid
  // With HorizonTile::publish_ahead: bit k set = local k-block k (< 32) proven, whether or not the
  // k-blocks below it are (a loader whose k-blocks are independent may take it out of order).
  // Bits are only ever set (a proven k-block stays proven within an epoch).
  uint32_t ahead = 0;
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
BATON_HOST_DEVICE bool needs_prefix_waits(P const& p) {
  if constexpr (k_local_policy<P>) return !p.per_k_block;
  else return true;
}
// Built-in per-tile policies (per_k_block == false) give every wait at k-block 0 and none after
// (policy.hpp): enumerating k-blocks 1.. would only spend footprint arithmetic on empty sets.
template <class P>
BATON_HOST_DEVICE bool waits_at_first_k_block_only(P const& p) {
  if constexpr (requires { { p.per_k_block } -> std::convertible_to<bool>; }) return !p.per_k_block;
  else return false;
}
}  // namespace detail

// The waits of one tile, from local k-block 0 (= absolute k_begin) to count - 1.
template <class StageT>
struct HorizonTile {
  const StageT* stage = nullptr;
  Assignment assignment{};
  int k_begin = 0;
  int count = 0;
  // Also publish HorizonWord::ahead, the proven k-blocks of [0, 32) past the prefix. Only for
  // policies whose k-block waits each cover that k-block's reads on their own (no prefix waits:
  // a tile that starts at k-block 0 with per-k-block policies, as the attention's), which is what
  // makes a k-block loadable before the ones below it.
  bool publish_ahead = false;
};

// One lane's share of a tile's wait list: local k-blocks lane, lane + lanes, ...
template <class StageT>
struct HorizonLane {
  static constexpr int num_inputs = StageT::num_inputs;
  int next = 0;     // the local k-block this lane proves next (>= count: all of its k-blocks are proven)
  int proven = 0;   // waits of `next`, in for_each_wait order, already seen satisfied
  // The wait `next` is stuck on, for the watchdog's record.
  uint32_t pending_edge = 0, pending_sem = 0, pending_target = 0, pending_seen = 0;
  int pending_k = 0;

  // Proves up to `max_steps` of this lane's k-blocks, in order, stopping at the first with an
  // unsatisfied wait; returns next. Waits seen satisfied are not loaded again (a satisfied wait
  // stays satisfied within an epoch). The sync warp takes one step per round: the 32 lanes then
  // prove 32 k-blocks in one round trip each, and the horizon is published after every round
  // rather than after a lane's whole share (up to count / 32 round trips in a row).
  BATON_HOST_DEVICE int advance(const HorizonTile<StageT>& t, int lanes, int max_steps = 1 << 30) {
    for (int step = 0; step < max_steps && next < t.count; ++step) {
      if (!prove_(t, std::make_integer_sequence<int, num_inputs>{})) return next;
      next += lanes;
      proven = 0;
    }
    return next;
  }

 private:
  template <int... I>
  BATON_HOST_DEVICE bool prove_(const HorizonTile<StageT>& t, std::integer_sequence<int, I...>) {
    int index = 0;  // running index over every wait of k-block `next`, all inputs
    return (prove_input_<I>(t, index) && ...);
  }
  template <int I>
  BATON_HOST_DEVICE bool prove_input_(const HorizonTile<StageT>& t, int& index) {
    const auto& e = detail::get<I>(t.stage->in);
    int last = t.k_begin + next;
    int first = (next != 0 || t.k_begin == 0) ? last
                : (detail::needs_prefix_waits(e.policy) && !e.k_local ? 0 : t.k_begin);
    if (detail::waits_at_first_k_block_only(e.policy)) {  // per tile: k-block 0's waits, at local 0
      if (next != 0) return true;
      first = last = 0;
    }
    const Assignment& a = t.assignment;
    for (int k = first; k <= last; ++k) {
      const bool ok = e.policy.for_each_wait(a.tile, k, [&](WaitSpec w) {
        if (index++ < proven) return true;
        const uint32_t target = a.epoch * w.per_epoch + w.count;
        const uint32_t v = device::load_acquire_gpu(e.sems + w.sem);
        if (int32_t(v - target) < 0) {  // same compare as wait_geq
          pending_edge = e.edge_index;
          pending_sem = uint32_t(w.sem);
          pending_target = target;
          pending_seen = v;
          pending_k = k;
          return false;
        }
        ++proven;
        return true;
      });
      if (!ok) return false;
    }
    return true;
  }
};

// Backoff of the sync warp while its horizon is stuck: short (a post should be seen within about
// an L2 round trip) and capped low; reset whenever the horizon advances.
struct HorizonBackoff {
  static constexpr uint32_t first_ns = 64;
#if BATON_DEVICE_PASS
  static constexpr uint32_t cap_ns = 512;
#else
  static constexpr uint32_t cap_ns = 20000;  // host threads (emulator): yield first, then short sleeps
#endif
  uint32_t ns = first_ns;
  BATON_HOST_DEVICE void pause() {
    device::sleep_ns(ns);
    ns = ns * 2 < cap_ns ? ns * 2 : cap_ns;
  }
  BATON_HOST_DEVICE void reset() { ns = first_ns; }
};

// The sync loop. LanesPerThread = 1: the device form, one lane per thread of a full warp
// (lane = threadIdx.x % 32); LanesPerThread = 32: the host form, one thread doing all 32 lanes.
// Returns when the horizon reaches t.count (or on failure, with word->failed set).
template <int LanesPerThread, class StageT>
BATON_HOST_DEVICE void run_sync_lanes(const HorizonTile<StageT>& t, HorizonWord* word, int first_lane) {
  static_assert(StageT::num_inputs > 0, "baton::run_sync_lanes: the stage has no inputs to wait for");
  constexpr int kLanes = 32;
  HorizonLane<StageT> lane[LanesPerThread];
  for (int i = 0; i < LanesPerThread; ++i) lane[i].next = first_lane + i;
  const bool leader = first_lane == 0;
  int published = 0;
  uint32_t published_ahead = 0;
  HorizonBackoff backoff;
  uint64_t last_progress = t.stage->watchdog_ns ? device::global_timer_ns() : 0;
  for (uint32_t round = 1;; ++round) {
    int mine = t.count;
    bool moved = false;  // some lane proved a k-block this round
    for (int i = 0; i < LanesPerThread; ++i) {
      const int before = lane[i].next;
      const int c = lane[i].advance(t, kLanes, 1);
      moved = moved || c != before;
      mine = c < mine ? c : mine;
    }
    // A lane that acquired anything orders what it observed before the TMA (async proxy) reads
    // that the published horizon will let the load thread issue.
    if (moved) device::fence_proxy_async_global();
#if BATON_DEVICE_PASS
    const int h = int(__reduce_min_sync(0xffffffffu, uint32_t(mine)));
#else
    const int h = mine;
#endif
    // The proven k-blocks of [0, 32): each is the first k-block of its lane, proven once the lane
    // moved past it. Uniform over the warp (a ballot), so every lane takes the branch below alike.
    uint32_t ahead = published_ahead;
    if (t.publish_ahead) {
#if BATON_DEVICE_PASS
      ahead = __ballot_sync(0xffffffffu, first_lane < t.count && lane[0].next > first_lane);
#else
      for (int i = 0; i < LanesPerThread; ++i)
        if (first_lane + i < 32 && first_lane + i < t.count && lane[i].next > first_lane + i) ahead |= 1u << (first_lane + i);
#endif
    }
    if (h > published || ahead != published_ahead) {
#if BATON_DEVICE_PASS
      __syncwarp();  // every lane's acquires and proxy fences before lane 0's release
#endif
      if (leader && ahead != published_ahead) device::store_release_cta(&word->ahead, ahead);
      if (leader && h > published) device::store_release_cta(&word->ready, uint32_t(h));
      published_ahead = ahead;
    }
    if (h > published) {
      published = h;
      if (t.stage->watchdog_ns) last_progress = device::global_timer_ns();
    }
    if (h >= t.count) return;
    // Stuck: bail if the chain failed elsewhere, or if this wait outlived the watchdog. Every
    // condition below is made warp-uniform before a lane acts on it (the ballot needs all lanes).
    bool chain_failed = false, timed_out = false;
    if ((round & 7) == 0 && t.stage->error) {  // uniform: the same round and stage in every lane
      chain_failed = device::load_relaxed_gpu(&t.stage->error->code) != 0;
      timed_out = t.stage->watchdog_ns && device::global_timer_ns() - last_progress > t.stage->watchdog_ns;
    }
#if BATON_DEVICE_PASS
    chain_failed = __any_sync(0xffffffffu, chain_failed);
    timed_out = __any_sync(0xffffffffu, timed_out);
#endif
    if (timed_out && !chain_failed) {
      // The lowest lane stuck at the horizon names the wait.
      for (int i = 0; i < LanesPerThread; ++i) {
        const bool stuck = lane[i].next == h;
#if BATON_DEVICE_PASS
        const uint32_t stuck_lanes = __ballot_sync(0xffffffffu, stuck);
        const bool reporter = stuck && (__ffs(stuck_lanes) - 1) == int(threadIdx.x % 32);
#else
        const bool reporter = stuck;
#endif
        if (reporter) {
          const auto& L = lane[i];
          WaitSite site{t.stage->error, t.stage->watchdog_ns, t.stage->stage_index, L.pending_edge, t.assignment.tile,
                        L.pending_k, L.pending_sem, t.assignment.epoch};
          report_watchdog(site, L.pending_target, L.pending_seen);
          break;
        }
      }
    }
    if (chain_failed || timed_out) {
      if (leader) {
        word->failed = 1;
        device::store_release_cta(&word->ready, uint32_t(t.count));
      }
      return;
    }
#if BATON_DEVICE_PASS
    moved = __any_sync(0xffffffffu, moved);
#endif
    if (moved) backoff.reset();  // a round that proved anything polls again at once
    else backoff.pause();
  }
}

// The load thread's side: is local k-block k proven? (The sync lanes made the proxy fences.)
struct HorizonWaits {
  static constexpr bool enabled = true;
  static constexpr bool cheap_poll = true;  // ready() reads shared memory: poll it while filling B
  const uint32_t* ready_word = nullptr;
  uint32_t seen = 0;  // the horizon last read
  const uint32_t* ahead_word = nullptr;  // HorizonWord::ahead, for proven() / first_proven()

  BATON_HOST_DEVICE bool ready(int k) {
    if (uint32_t(k) < seen) return true;
    seen = device::load_acquire_cta(ready_word);
    return uint32_t(k) < seen;
  }
  // The load thread spins on shared memory without sleeping: a __nanosleep wakes late (it is a
  // hint with coarse granularity), and A(k) is on the critical path; the spin's loads cost the MMA
  // warps of its scheduler little, and only while they wait for this A anyway.
  BATON_HOST_DEVICE void pause() {
#if !BATON_DEVICE_PASS
    device::sleep_ns(0);  // host threads (emulator): yield
#endif
  }
  // Blocks until k is proven (the sync warp's watchdog bounds it: on failure it publishes count).
  BATON_HOST_DEVICE void wait(int k) {
    while (!ready(k)) pause();
  }
  // Nothing: the lanes that acquired fenced before the horizon was released (see the top).
  BATON_HOST_DEVICE void fence_for_tma_reads() {}

  // Out of order (HorizonTile::publish_ahead): is local k-block k proven, below the horizon or
  // published ahead of it?
  BATON_HOST_DEVICE bool proven(int k) {
    if (ready(k)) return true;
    if (ahead_word == nullptr || k >= 32) return false;
    return ((device::load_acquire_cta(ahead_word) >> k) & 1u) != 0;
  }
  // The lowest k-block of [0, end) (end <= 32) not in `issued` (bit k) that is proven, or -1. A
  // loader that issues every k-block of [0, end) this way, then the rest in order with wait(),
  // loads what is published first, and never a k-block before its waits hold.
  BATON_HOST_DEVICE int first_proven(uint32_t issued, int end) {
    for (int k = 0; k < end; ++k)
      if (((issued >> k) & 1u) == 0 && proven(k)) return k;
    return -1;
  }
};

}  // namespace baton
