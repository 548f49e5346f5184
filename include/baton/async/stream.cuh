// baton/async/stream.cuh — owning CUDA handles and their trivially copyable views.
//
//   stream      move-only owner of a cudaStream_t (non-blocking, with a priority)
//   stream_ref  trivially copyable view; converts to/from cudaStream_t and cuda::stream_ref; never
//               default-constructed (stream_ref::legacy() / per_thread() name the default streams)
//   event       move-only owner of a cudaEvent_t (timing disabled unless asked)
//   event_pool  thread-safe pool of events; acquire() hands out a pooled_event that returns to
//               the pool when destroyed, on every path (errors included)
//
// Every fallible call returns [[nodiscard]] baton::status / baton::result<T>; destructors never
// throw and never synchronize the device.
#pragma once

#include <cuda/stream_ref>
#include <cuda_runtime.h>

#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "baton/status.hpp"

namespace baton::async {

[[nodiscard]] inline status cuda_check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return {};
  return status(errc::cuda_error, std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")",
                int(e));
}

class stream_ref {
 public:
  // No default constructor: a stream_ref that nobody set would be the legacy NULL stream, which
  // synchronizes with every blocking stream of the device. Name it when you mean it.
  stream_ref() = delete;
  [[nodiscard]] static stream_ref legacy() noexcept { return stream_ref(cudaStreamLegacy); }
  [[nodiscard]] static stream_ref per_thread() noexcept { return stream_ref(cudaStreamPerThread); }
  constexpr stream_ref(cudaStream_t s) noexcept : s_(s) {}  // NOLINT: implicit, like cuda::stream_ref
  constexpr stream_ref(cuda::stream_ref s) noexcept : s_(s.get()) {}  // NOLINT
  [[nodiscard]] constexpr cudaStream_t get() const noexcept { return s_; }
  constexpr operator cudaStream_t() const noexcept { return s_; }  // NOLINT
  [[nodiscard]] cuda::stream_ref cccl() const noexcept { return cuda::stream_ref(s_); }
  // Every baton call that puts work on a stream or waits for one refuses the handle 0
  // (errc::invalid_argument, naming the call): it is what an empty baton::async::stream
  // (default-constructed or moved-from) converts to, and CUDA would silently take it as the legacy
  // default stream. A default stream is named: legacy() or per_thread().
  [[nodiscard]] status usable(const char* what) const {
    if (s_ != nullptr) return {};
    return status(errc::invalid_argument,
                  std::string(what) + ": the stream handle is 0 (an empty baton::async::stream, default-constructed or "
                                      "moved-from, or a literal 0), which CUDA would take as the legacy default stream; "
                                      "pass stream_ref::legacy() or stream_ref::per_thread() to mean a default stream");
  }
  // Non-blocking: true when all work enqueued so far has completed.
  [[nodiscard]] result<bool> ready() const {
    BATON_TRY(usable("stream_ref::ready"));
    cudaError_t e = cudaStreamQuery(s_);
    if (e == cudaSuccess) return true;
    if (e == cudaErrorNotReady) return false;
    return cuda_check(e, "cudaStreamQuery");
  }
  // Blocks the calling thread until this stream drains (per-stream, never device-wide).
  [[nodiscard]] status synchronize() const {
    BATON_TRY(usable("stream_ref::synchronize"));
    return cuda_check(cudaStreamSynchronize(s_), "cudaStreamSynchronize");
  }
  // Makes this stream wait, on the GPU, for `e` (no host round trip).
  [[nodiscard]] status wait(cudaEvent_t e) const {
    BATON_TRY(usable("stream_ref::wait"));
    return cuda_check(cudaStreamWaitEvent(s_, e, 0), "cudaStreamWaitEvent");
  }
  friend constexpr bool operator==(stream_ref a, stream_ref b) noexcept { return a.s_ == b.s_; }

 private:
  cudaStream_t s_ = nullptr;
};
static_assert(std::is_trivially_copyable_v<stream_ref>);

// Greatest (numerically lowest) and least stream priority of this device.
struct priority_range {
  int greatest = 0, least = 0;
};
[[nodiscard]] inline result<priority_range> stream_priorities() {
  priority_range r;
  BATON_TRY(cuda_check(cudaDeviceGetStreamPriorityRange(&r.least, &r.greatest), "cudaDeviceGetStreamPriorityRange"));
  return r;
}

class stream {
 public:
  stream() = default;
  stream(const stream&) = delete;
  stream& operator=(const stream&) = delete;
  stream(stream&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  stream& operator=(stream&& o) noexcept {
    if (this != &o) {
      reset();
      s_ = std::exchange(o.s_, nullptr);
    }
    return *this;
  }
  ~stream() { reset(); }

  // A non-blocking stream; priority 0 is the default, lower numbers are higher priority
  // (see stream_priorities()).
  [[nodiscard]] static result<stream> create(int priority = 0) {
    stream s;
    BATON_TRY(cuda_check(cudaStreamCreateWithPriority(&s.s_, cudaStreamNonBlocking, priority),
                         "cudaStreamCreateWithPriority"));
    return result<stream>(std::move(s));
  }
  [[nodiscard]] stream_ref ref() const noexcept { return s_; }
  [[nodiscard]] cudaStream_t get() const noexcept { return s_; }
  // Usable wherever a stream_ref or a raw cudaStream_t is (CUDA calls included), like its handle.
  operator stream_ref() const noexcept { return s_; }    // NOLINT
  operator cudaStream_t() const noexcept { return s_; }  // NOLINT
  [[nodiscard]] result<int> priority() const {
    BATON_TRY(ref().usable("stream::priority"));
    int p = 0;
    BATON_TRY(cuda_check(cudaStreamGetPriority(s_, &p), "cudaStreamGetPriority"));
    return p;
  }

 private:
  void reset() noexcept {
    if (s_) (void)cudaStreamDestroy(s_);  // returns at once; pending work still completes
    s_ = nullptr;
  }
  cudaStream_t s_ = nullptr;
};

class event {
 public:
  event() = default;
  event(const event&) = delete;
  event& operator=(const event&) = delete;
  event(event&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  event& operator=(event&& o) noexcept {
    if (this != &o) {
      reset();
      e_ = std::exchange(o.e_, nullptr);
    }
    return *this;
  }
  ~event() { reset(); }
  [[nodiscard]] static result<event> create(bool timing = false) {
    event e;
    BATON_TRY(cuda_check(cudaEventCreateWithFlags(&e.e_, timing ? cudaEventDefault : cudaEventDisableTiming),
                         "cudaEventCreateWithFlags"));
    return result<event>(std::move(e));
  }
  [[nodiscard]] cudaEvent_t get() const noexcept { return e_; }
  operator cudaEvent_t() const noexcept { return e_; }  // NOLINT: usable wherever the raw event is
  [[nodiscard]] status record(stream_ref s) const {
    BATON_TRY(s.usable("event record"));
    return cuda_check(cudaEventRecord(e_, s), "cudaEventRecord");
  }
  // Non-blocking completion check.
  [[nodiscard]] result<bool> ready() const {
    cudaError_t r = cudaEventQuery(e_);
    if (r == cudaSuccess) return true;
    if (r == cudaErrorNotReady) return false;
    return cuda_check(r, "cudaEventQuery");
  }
  [[nodiscard]] status synchronize() const { return cuda_check(cudaEventSynchronize(e_), "cudaEventSynchronize"); }

 private:
  void reset() noexcept {
    if (e_) (void)cudaEventDestroy(e_);
    e_ = nullptr;
  }
  cudaEvent_t e_ = nullptr;
};

class event_pool;

// An event on loan from an event_pool; goes back to the pool when destroyed.
class pooled_event {
 public:
  pooled_event() = default;
  pooled_event(const pooled_event&) = delete;
  pooled_event& operator=(const pooled_event&) = delete;
  pooled_event(pooled_event&& o) noexcept : pool_(std::exchange(o.pool_, nullptr)), e_(std::exchange(o.e_, nullptr)) {}
  pooled_event& operator=(pooled_event&& o) noexcept {
    if (this != &o) {
      release();
      pool_ = std::exchange(o.pool_, nullptr);
      e_ = std::exchange(o.e_, nullptr);
    }
    return *this;
  }
  ~pooled_event() { release(); }
  [[nodiscard]] cudaEvent_t get() const noexcept { return e_; }
  operator cudaEvent_t() const noexcept { return e_; }  // NOLINT: usable wherever the raw event is
  [[nodiscard]] status record(stream_ref s) const {
    BATON_TRY(s.usable("event record"));
    return cuda_check(cudaEventRecord(e_, s), "cudaEventRecord");
  }
  [[nodiscard]] explicit operator bool() const noexcept { return e_ != nullptr; }

 private:
  friend class event_pool;
  pooled_event(event_pool* p, cudaEvent_t e) : pool_(p), e_(e) {}
  inline void release() noexcept;
  event_pool* pool_ = nullptr;
  cudaEvent_t e_ = nullptr;
};

// Thread-safe pool of timing-disabled events. Grows on demand up to `max_events` (0: unbounded);
// past that, acquire() fails with errc::resource_exhausted instead of blocking.
class event_pool {
 public:
  explicit event_pool(size_t max_events = 0) : max_(max_events) {}
  event_pool(const event_pool&) = delete;
  event_pool& operator=(const event_pool&) = delete;
  ~event_pool() {
    for (auto e : free_) (void)cudaEventDestroy(e);
  }
  [[nodiscard]] result<pooled_event> acquire() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (!free_.empty()) {
        cudaEvent_t e = free_.back();
        free_.pop_back();
        ++in_use_;
        return result<pooled_event>(pooled_event(this, e));
      }
      if (max_ && created_ >= max_)
        return status(errc::resource_exhausted, "event_pool: all " + std::to_string(max_) +
                                                    " events are in use (raise max_events or release events sooner)");
      ++created_;
      ++in_use_;
    }
    cudaEvent_t e = nullptr;
    cudaError_t r = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
    if (r != cudaSuccess) {
      std::lock_guard<std::mutex> lk(mu_);
      --created_;
      --in_use_;
      return cuda_check(r, "event_pool: cudaEventCreateWithFlags");
    }
    return result<pooled_event>(pooled_event(this, e));
  }
  [[nodiscard]] size_t in_use() const {
    std::lock_guard<std::mutex> lk(mu_);
    return in_use_;
  }
  [[nodiscard]] size_t created() const {
    std::lock_guard<std::mutex> lk(mu_);
    return created_;
  }

 private:
  friend class pooled_event;
  void give_back(cudaEvent_t e) noexcept {
    std::lock_guard<std::mutex> lk(mu_);
    free_.push_back(e);
    --in_use_;
  }
  mutable std::mutex mu_;
  std::vector<cudaEvent_t> free_;
  size_t max_ = 0, created_ = 0, in_use_ = 0;
};

inline void pooled_event::release() noexcept {
  if (pool_ && e_) pool_->give_back(e_);
  pool_ = nullptr;
  e_ = nullptr;
}

// Orders `consumer` after all work enqueued so far on `producer`, on the GPU: records a pooled
// event on `producer` and makes `consumer` wait for it. No host round trip.
[[nodiscard]] inline status gpu_order(event_pool& pool, stream_ref producer, stream_ref consumer) {
  auto e = pool.acquire();
  if (!e.ok()) return e.error();
  BATON_TRY(e.value().record(producer));
  return consumer.wait(e.value().get());  // the event may be reused at once: the wait captured it
}

}  // namespace baton::async
