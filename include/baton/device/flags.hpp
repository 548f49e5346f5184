// baton/device/flags.hpp — synchronization primitives that name their memory order.
//
// Each function has a device implementation (inline PTX, sm_90) and a host implementation on
// std::atomic_ref with the same semantics, so the CPU emulator runs the exact stage code that
// the GPU runs. Names say the semantics: load_acquire_gpu is `ld.acquire.gpu`, not "volatile".
#pragma once

#include <cstdint>

#include "baton/config.hpp"

#if !BATON_DEVICE_PASS
#include <atomic>
#include <chrono>
#include <thread>
#endif

namespace baton::device {

// ld.acquire.gpu: later reads by this thread see everything the releasing thread published.
BATON_HOST_DEVICE uint32_t load_acquire_gpu(const uint32_t* p) {
#if BATON_DEVICE_PASS
  uint32_t v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
#else
  return std::atomic_ref<uint32_t>(*const_cast<uint32_t*>(p)).load(std::memory_order_acquire);
#endif
}

// ld.relaxed.gpu: a coherent read with no ordering (for error flags polled in spin loops).
BATON_HOST_DEVICE uint32_t load_relaxed_gpu(const uint32_t* p) {
#if BATON_DEVICE_PASS
  uint32_t v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
#else
  return std::atomic_ref<uint32_t>(*const_cast<uint32_t*>(p)).load(std::memory_order_relaxed);
#endif
}

BATON_HOST_DEVICE uint64_t load_relaxed_gpu(const uint64_t* p) {
#if BATON_DEVICE_PASS
  uint64_t v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
#else
  return std::atomic_ref<uint64_t>(*const_cast<uint64_t*>(p)).load(std::memory_order_relaxed);
#endif
}

// Acquire load / release store at CTA scope on a word shared by the threads of one CTA (shared
// memory, by a generic address): a horizon published by one warp and read by another
// (baton/horizon.hpp). On the device they are atomics (atom.acquire.cta.or 0, atom.release.cta.exch),
// not ld.acquire / st.release: compute-sanitizer's racecheck reports a st.release/ld.acquire pair on
// shared memory as a hazard, and counts atomics as synchronization.
BATON_HOST_DEVICE uint32_t load_acquire_cta(const uint32_t* p) {
#if BATON_DEVICE_PASS
  uint32_t v;
  asm volatile("atom.acquire.cta.or.b32 %0, [%1], 0;" : "=r"(v) : "l"(p) : "memory");
  return v;
#else
  return std::atomic_ref<uint32_t>(*const_cast<uint32_t*>(p)).load(std::memory_order_acquire);
#endif
}
BATON_HOST_DEVICE void store_release_cta(uint32_t* p, uint32_t v) {
#if BATON_DEVICE_PASS
  asm volatile("{ .reg .b32 old; atom.release.cta.exch.b32 old, [%0], %1; }" ::"l"(p), "r"(v) : "memory");
#else
  std::atomic_ref<uint32_t>(*p).store(v, std::memory_order_release);
#endif
}

// red.release.gpu.add: everything this thread wrote (and, after a CTA barrier, everything the
// CTA wrote) becomes visible at gpu scope before the increment does.
BATON_HOST_DEVICE void red_add_release_gpu(uint32_t* p, uint32_t v) {
#if BATON_DEVICE_PASS
  asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
#else
  std::atomic_ref<uint32_t>(*p).fetch_add(v, std::memory_order_release);
#endif
}

// atom.relaxed.gpu.add on a 64-bit counter; returns the previous value (tile tickets).
BATON_HOST_DEVICE uint64_t fetch_add_relaxed_gpu(uint64_t* p, uint64_t v) {
#if BATON_DEVICE_PASS
  uint64_t old;
  asm volatile("atom.relaxed.gpu.global.add.u64 %0, [%1], %2;" : "=l"(old) : "l"(p), "l"(v) : "memory");
  return old;
#else
  return std::atomic_ref<uint64_t>(*p).fetch_add(v, std::memory_order_relaxed);
#endif
}

// atom.acq_rel.gpu.add on a 32-bit counter; returns the previous value. Release: this thread's
// (and, after a CTA barrier, the CTA's) earlier writes are visible before the increment; acquire:
// the caller sees what every earlier incrementer published (split-K arrival counters).
BATON_HOST_DEVICE uint32_t fetch_add_acq_rel_gpu(uint32_t* p, uint32_t v) {
#if BATON_DEVICE_PASS
  uint32_t old;
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
  return old;
#else
  return std::atomic_ref<uint32_t>(*p).fetch_add(v, std::memory_order_acq_rel);
#endif
}

// st.relaxed.gpu: a coherent 32-bit store with no ordering (resetting a counter nobody races on).
BATON_HOST_DEVICE void store_relaxed_gpu(uint32_t* p, uint32_t v) {
#if BATON_DEVICE_PASS
  asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
#else
  std::atomic_ref<uint32_t>(*p).store(v, std::memory_order_relaxed);
#endif
}

// atom.cas.relaxed.gpu: claims an error record exactly once.
BATON_HOST_DEVICE uint32_t cas_relaxed_gpu(uint32_t* p, uint32_t expected, uint32_t desired) {
#if BATON_DEVICE_PASS
  uint32_t old;
  asm volatile("atom.relaxed.gpu.global.cas.b32 %0, [%1], %2, %3;"
               : "=r"(old)
               : "l"(p), "r"(expected), "r"(desired)
               : "memory");
  return old;
#else
  std::atomic_ref<uint32_t>(*p).compare_exchange_strong(expected, desired, std::memory_order_relaxed);
  return expected;
#endif
}

// st.release.gpu: publishes a 32-bit value with release semantics.
BATON_HOST_DEVICE void store_release_gpu(uint32_t* p, uint32_t v) {
#if BATON_DEVICE_PASS
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
#else
  std::atomic_ref<uint32_t>(*p).store(v, std::memory_order_release);
#endif
}

// fence.acq_rel.gpu
BATON_HOST_DEVICE void fence_acq_rel_gpu() {
#if BATON_DEVICE_PASS
  asm volatile("fence.acq_rel.gpu;" ::: "memory");
#else
  std::atomic_thread_fence(std::memory_order_acq_rel);
#endif
}

// fence.proxy.async.global: orders generic-proxy accesses with async-proxy (TMA) accesses to
// global memory. Needed after an acquire whose data TMA will read, and after TMA stores before a
// release. (A missing one gave stale TMA data in flashinfer PR #3361.)
BATON_HOST_DEVICE void fence_proxy_async_global() {
#if BATON_DEVICE_PASS
  asm volatile("fence.proxy.async.global;" ::: "memory");
#else
  std::atomic_signal_fence(std::memory_order_seq_cst);
#endif
}

// cp.async.bulk.wait_group 0: the issuing thread's bulk (TMA) stores are complete in global
// memory. NOT the `.read` variant, which only says shared memory was read.
BATON_HOST_DEVICE void tma_store_wait_all() {
#if BATON_DEVICE_PASS
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
#endif
}

// griddepcontrol.launch_dependents: this CTA allows the PDL-dependent grid to be scheduled.
BATON_HOST_DEVICE void launch_dependents() {
#if BATON_DEVICE_PASS
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// griddepcontrol.wait: block until all prerequisite grids completed and their writes are
// visible. baton consumers do NOT call this before their tile waits (it would serialize).
BATON_HOST_DEVICE void grid_dependency_wait() {
#if BATON_DEVICE_PASS
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Nanoseconds from a global clock (%globaltimer on the GPU, steady_clock on the host).
BATON_HOST_DEVICE uint64_t global_timer_ns() {
#if BATON_DEVICE_PASS
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
#else
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
#endif
}

BATON_HOST_DEVICE void sleep_ns(uint32_t ns) {
#if BATON_DEVICE_PASS
  __nanosleep(ns);
#else
  if (ns < 4096)
    std::this_thread::yield();
  else
    std::this_thread::sleep_for(std::chrono::nanoseconds(ns));
#endif
}

// Exponential nanosleep backoff for spin loops: starts short (flag round trips take ~1 us on
// H200) and caps so that a late post is seen quickly.
struct Backoff {
  uint32_t ns = 32;
#if BATON_DEVICE_PASS
  uint32_t cap = 1024;
#else
  uint32_t cap = 20000;  // host threads (emulator): yield first, then short sleeps
#endif
  BATON_HOST_DEVICE void pause() {
    sleep_ns(ns);
    ns = ns * 2 < cap ? ns * 2 : cap;
  }
};

}  // namespace baton::device
