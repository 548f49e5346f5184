// baton/async/memory.cuh — host and device memory for asynchronous copies.
//
//   pinned_span<T>, device_span<T>  typed, trivially copyable views that say where memory lives
//   pinned_pool                     slab pool of page-locked host memory (cudaHostAlloc); leases
//                                   (pinned_buffer) return their slab when destroyed
//   host_registration               page-locks a user buffer in place (cudaHostRegister), RAII
//   device_buffer                   stream-ordered device memory (cudaMallocAsync / cudaFreeAsync)
//   device_allocation               device memory tied to no stream (cudaMalloc / cudaFree): what an
//                                   object that outlives the streams it runs on owns (an op's workspaces)
#pragma once

#include <cuda_runtime.h>

#include <cuda/std/span>

#include <algorithm>
#include <cstddef>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "baton/async/stream.cuh"
#include "baton/status.hpp"

namespace baton::async {

// One span shape for every view the layer hands out: cuda::std::span (data(), size(), size_bytes(),
// indexing, iteration, subspan(); usable in device code too), tagged with where the memory lives so
// that a device pointer is not passed where page-locked host memory is expected. bytes() is
// size_bytes(). Both convert to a plain cuda::std::span<T>.
template <class T>
struct pinned_span : cuda::std::span<T> {
  using cuda::std::span<T>::span;
  constexpr pinned_span() noexcept = default;
  constexpr pinned_span(T* p, size_t n) noexcept : cuda::std::span<T>(p, n) {}
  [[nodiscard]] constexpr size_t bytes() const noexcept { return this->size_bytes(); }
};
template <class T>
struct device_span : cuda::std::span<T> {
  using cuda::std::span<T>::span;
  constexpr device_span() noexcept = default;
  constexpr device_span(T* p, size_t n) noexcept : cuda::std::span<T>(p, n) {}
  [[nodiscard]] constexpr size_t bytes() const noexcept { return this->size_bytes(); }
};
static_assert(std::is_trivially_copyable_v<pinned_span<float>> && std::is_trivially_copyable_v<device_span<float>>);

// Is `p` page-locked (pinned or registered) host memory?
[[nodiscard]] inline bool is_pinned(const void* p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return a.type == cudaMemoryTypeHost;
}

class pinned_pool;

// A slab on loan from a pinned_pool.
class pinned_buffer {
 public:
  pinned_buffer() = default;
  pinned_buffer(const pinned_buffer&) = delete;
  pinned_buffer& operator=(const pinned_buffer&) = delete;
  pinned_buffer(pinned_buffer&& o) noexcept
      : pool_(std::exchange(o.pool_, nullptr)), p_(std::exchange(o.p_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  pinned_buffer& operator=(pinned_buffer&& o) noexcept {
    if (this != &o) {
      release();
      pool_ = std::exchange(o.pool_, nullptr);
      p_ = std::exchange(o.p_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  ~pinned_buffer() { release(); }
  [[nodiscard]] void* data() const noexcept { return p_; }
  [[nodiscard]] size_t bytes() const noexcept { return bytes_; }
  template <class T>
  [[nodiscard]] pinned_span<T> as() const noexcept {
    return {static_cast<T*>(p_), bytes_ / sizeof(T)};
  }

 private:
  friend class pinned_pool;
  pinned_buffer(pinned_pool* pool, void* p, size_t b) : pool_(pool), p_(p), bytes_(b) {}
  inline void release() noexcept;
  pinned_pool* pool_ = nullptr;
  void* p_ = nullptr;
  size_t bytes_ = 0;
};

// Fixed-size slabs of pinned memory. Grows up to max_slabs (0: unbounded); past that acquire()
// fails with errc::resource_exhausted rather than blocking. Pinned memory is slow to allocate
// (cudaHostAlloc can take milliseconds), so allocate early with reserve().
class pinned_pool {
 public:
  explicit pinned_pool(size_t slab_bytes, size_t max_slabs = 0) : slab_(slab_bytes), max_(max_slabs) {}
  pinned_pool(const pinned_pool&) = delete;
  pinned_pool& operator=(const pinned_pool&) = delete;
  ~pinned_pool() {
    for (void* p : all_) (void)cudaFreeHost(p);
  }
  [[nodiscard]] size_t slab_bytes() const noexcept { return slab_; }
  [[nodiscard]] status reserve(size_t slabs) {
    std::vector<pinned_buffer> tmp;
    for (size_t i = 0; i < slabs; ++i) {
      auto b = acquire(slab_);
      if (!b.ok()) return b.error();
      tmp.push_back(std::move(b.value()));
    }
    return {};
  }
  [[nodiscard]] result<pinned_buffer> acquire(size_t bytes) {
    if (bytes > slab_)
      return status(errc::invalid_argument, "pinned_pool: " + std::to_string(bytes) + " bytes requested, slabs are " +
                                                std::to_string(slab_));
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (!free_.empty()) {
        void* p = free_.back();
        free_.pop_back();
        return result<pinned_buffer>(pinned_buffer(this, p, slab_));
      }
      if (max_ && all_.size() >= max_)
        return status(errc::resource_exhausted, "pinned_pool: all " + std::to_string(max_) + " slabs of " +
                                                    std::to_string(slab_) + " bytes are in use");
      all_.push_back(nullptr);  // reserve the slot under the lock
    }
    void* p = nullptr;
    cudaError_t e = cudaHostAlloc(&p, slab_, cudaHostAllocPortable);
    std::lock_guard<std::mutex> lk(mu_);
    for (auto& slot : all_)
      if (slot == nullptr) {
        if (e == cudaSuccess) slot = p;
        break;
      }
    if (e != cudaSuccess) {
      all_.erase(std::find(all_.begin(), all_.end(), nullptr));
      return cuda_check(e, "pinned_pool: cudaHostAlloc");
    }
    return result<pinned_buffer>(pinned_buffer(this, p, slab_));
  }
  [[nodiscard]] size_t slabs() const {
    std::lock_guard<std::mutex> lk(mu_);
    return all_.size();
  }
  [[nodiscard]] size_t available() const {
    std::lock_guard<std::mutex> lk(mu_);
    return free_.size();
  }

 private:
  friend class pinned_buffer;
  void give_back(void* p) noexcept {
    std::lock_guard<std::mutex> lk(mu_);
    free_.push_back(p);
  }
  mutable std::mutex mu_;
  size_t slab_, max_;
  std::vector<void*> all_, free_;
};

inline void pinned_buffer::release() noexcept {
  if (pool_ && p_) pool_->give_back(p_);
  pool_ = nullptr;
  p_ = nullptr;
  bytes_ = 0;
}

// Page-locks [p, p+bytes) for the lifetime of this object so copies from it are real DMA.
class host_registration {
 public:
  host_registration() = default;
  host_registration(const host_registration&) = delete;
  host_registration& operator=(const host_registration&) = delete;
  host_registration(host_registration&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  host_registration& operator=(host_registration&& o) noexcept {
    if (this != &o) {
      reset();
      p_ = std::exchange(o.p_, nullptr);
    }
    return *this;
  }
  ~host_registration() { reset(); }
  [[nodiscard]] static result<host_registration> create(void* p, size_t bytes) {
    if (p == nullptr || bytes == 0) return status(errc::invalid_argument, "host_registration: empty buffer");
    host_registration r;
    BATON_TRY(cuda_check(cudaHostRegister(p, bytes, cudaHostRegisterPortable), "cudaHostRegister"));
    r.p_ = p;
    return result<host_registration>(std::move(r));
  }

 private:
  void reset() noexcept {
    if (p_) (void)cudaHostUnregister(p_);
    p_ = nullptr;
  }
  void* p_ = nullptr;
};

// Stream-ordered device memory: allocated and freed in the order of `stream`.
class device_buffer {
 public:
  device_buffer() = default;
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  device_buffer(device_buffer&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)), bytes_(std::exchange(o.bytes_, 0)), s_(o.s_) {}
  device_buffer& operator=(device_buffer&& o) noexcept {
    if (this != &o) {
      reset();
      p_ = std::exchange(o.p_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
      s_ = o.s_;
    }
    return *this;
  }
  ~device_buffer() { reset(); }
  [[nodiscard]] static result<device_buffer> create(size_t bytes, stream_ref s) {
    BATON_TRY(s.usable("device_buffer::create"));
    device_buffer b;
    BATON_TRY(cuda_check(cudaMallocAsync(&b.p_, bytes, s), "cudaMallocAsync"));
    b.bytes_ = bytes;
    b.s_ = s;
    return result<device_buffer>(std::move(b));
  }
  [[nodiscard]] void* data() const noexcept { return p_; }
  [[nodiscard]] size_t bytes() const noexcept { return bytes_; }
  template <class T>
  [[nodiscard]] device_span<T> as() const noexcept {
    return {static_cast<T*>(p_), bytes_ / sizeof(T)};
  }

 private:
  void reset() noexcept {
    if (p_) (void)cudaFreeAsync(p_, s_);
    p_ = nullptr;
  }
  void* p_ = nullptr;
  size_t bytes_ = 0;
  stream_ref s_{cudaStream_t{}};  // an empty buffer has no stream
};

// Device memory tied to no stream: cudaMalloc, and cudaFree when destroyed (or reset), which waits for
// the device's work in flight to finish before the memory is reused. For memory used on whatever
// streams its owner is given over its life, where a stream-ordered free (device_buffer) would need a
// stream that outlives the owner: the ops' semaphore and split-K workspaces. Zero bytes: empty, no call.
class device_allocation {
 public:
  device_allocation() = default;
  device_allocation(const device_allocation&) = delete;
  device_allocation& operator=(const device_allocation&) = delete;
  device_allocation(device_allocation&& o) noexcept : p_(std::exchange(o.p_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  device_allocation& operator=(device_allocation&& o) noexcept {
    if (this != &o) {
      reset();
      p_ = std::exchange(o.p_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  ~device_allocation() { reset(); }
  [[nodiscard]] static result<device_allocation> create(size_t bytes) {
    device_allocation a;
    if (bytes == 0) return result<device_allocation>(std::move(a));
    if (const cudaError_t e = cudaMalloc(&a.p_, bytes); e != cudaSuccess) {
      a.p_ = nullptr;
      return cuda_check(e, ("cudaMalloc(" + std::to_string(bytes) + " bytes)").c_str());
    }
    a.bytes_ = bytes;
    return result<device_allocation>(std::move(a));
  }
  [[nodiscard]] void* data() const noexcept { return p_; }
  [[nodiscard]] size_t bytes() const noexcept { return bytes_; }
  template <class T>
  [[nodiscard]] device_span<T> as() const noexcept {
    return {static_cast<T*>(p_), bytes_ / sizeof(T)};
  }
  void reset() noexcept {
    if (p_) (void)cudaFree(p_);
    p_ = nullptr;
    bytes_ = 0;
  }

 private:
  void* p_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace baton::async
