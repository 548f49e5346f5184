// bench/common/device_memory.cuh — device memory for a bench: baton::async::device_buffer (owning,
// stream-ordered) with the bench's error context (what the buffer is for, how large).
//
// A buffer lives in the order of the stream it was allocated on: used on that stream, the order
// cudaMallocAsync / cudaFreeAsync impose is the order the bench runs in anyway; used on other
// streams or by synchronous copies, it is ready once that stream has been synchronized (or the
// other stream ordered after it). That stream must outlive the buffers (their destructors enqueue
// the free on it).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <utility>

#include "baton/async/memory.cuh"
#include "baton/async/stream.cuh"
#include "baton/status.hpp"

namespace baton::bench {

using async::device_buffer;

// `bytes` of device memory on `stream`; an error names `what` and the size. Zero bytes give an
// empty buffer (null data), as cudaMalloc(0) does.
[[nodiscard]] inline result<device_buffer> device_alloc(size_t bytes, async::stream_ref stream, const char* what) {
  if (bytes == 0) return device_buffer{};
  auto b = device_buffer::create(bytes, stream);
  if (!b.ok()) return b.error().with_context(std::string("allocating ") + what + " (" + std::to_string(bytes) + " bytes)");
  return b;
}

// The same into `out` (its old memory freed on its stream first).
[[nodiscard]] inline status device_alloc(device_buffer& out, size_t bytes, async::stream_ref stream, const char* what) {
  auto b = device_alloc(bytes, stream, what);
  if (!b.ok()) return b.error();
  out = std::move(b.value());
  return {};
}

// The buffer's memory as T*.
template <class T>
[[nodiscard]] T* device_ptr(const device_buffer& b) noexcept {
  return static_cast<T*>(b.data());
}

}  // namespace baton::bench
