// baton/async/copy_pool.hpp — host threads that copy several buffers at once, each cut into parts.
// pipeline (baton/async/pipeline.cuh) stages pageable input chunks ahead of the GPU with it. Host
// only; no CUDA.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "baton/status.hpp"

namespace baton::async {

// A fixed pool of host threads and a FIFO queue of copy parts. submit() queues one copy, cut into
// parts of at least kMinPart bytes (at most one per thread), and returns at once with a handle
// whose wait() blocks until every part is copied. Several copies are in flight together: the
// pipeline submits the next chunks' staging copies while the GPU works on earlier ones, so that
// many small copies run on many threads at once (one thread copies pageable memory at a few GB/s,
// a fraction of what the host's memory and the link move), and a large copy still spreads over
// all the threads. Parts run in submission order, so the copy submitted first finishes first.
//
// `before` (optional) runs before a part copies anything, on the thread that copies it, once per
// part: the pipeline's wait for the slab's previous H2D. It must be safe to call from several
// threads at once and more than once. If it fails, that part copies nothing and wait() returns
// its error (the first one).
//
// Thread-safe: submit() and wait() from any threads. The destructor finishes every queued part
// first (their buffers must outlive it, as they must outlive wait()).
class CopyPool {
 public:
  static constexpr size_t kMinPart = size_t(256) << 10;

  // One submitted copy.
  class copy {
   public:
    // Blocks until every part is copied; the first error of `before`, if any.
    [[nodiscard]] status wait() {
      std::unique_lock<std::mutex> lk(m_);
      cv_.wait(lk, [&] { return left_ == 0; });
      return err_;
    }
    [[nodiscard]] bool done() {
      std::lock_guard<std::mutex> lk(m_);
      return left_ == 0;
    }

   private:
    friend class CopyPool;
    void part_done(status st) {
      std::lock_guard<std::mutex> lk(m_);
      if (!st.ok() && err_.ok()) err_ = std::move(st);
      if (--left_ == 0) cv_.notify_all();
    }
    char* dst_ = nullptr;
    const char* src_ = nullptr;
    size_t len_ = 0, per_ = 0;
    std::function<status()> before_;
    std::mutex m_;
    std::condition_variable cv_;
    size_t left_ = 0;  // parts not yet copied (under m_)
    status err_;
  };

  // on_start runs first on every thread (the pipeline's: its device).
  explicit CopyPool(int threads, std::function<void()> on_start = {}) : n_(std::max(1, threads)) {
    for (int i = 0; i < n_; ++i)
      th_.emplace_back([this, on_start] {
        if (on_start) on_start();
        work_();
      });
  }
  ~CopyPool() {
    {
      std::lock_guard<std::mutex> lk(m_);
      stop_ = true;
    }
    go_.notify_all();
    for (auto& t : th_) t.join();
  }
  CopyPool(const CopyPool&) = delete;
  CopyPool& operator=(const CopyPool&) = delete;

  [[nodiscard]] int threads() const noexcept { return n_; }
  // The number of parts a copy of `len` bytes is cut into.
  [[nodiscard]] size_t parts_for(size_t len) const noexcept { return std::clamp<size_t>(len / kMinPart, 1, size_t(n_)); }

  [[nodiscard]] std::shared_ptr<copy> submit(void* dst, const void* src, size_t len, std::function<status()> before = {}) {
    auto c = std::make_shared<copy>();
    const size_t parts = parts_for(len);
    c->dst_ = static_cast<char*>(dst);
    c->src_ = static_cast<const char*>(src);
    c->len_ = len;
    c->per_ = (len + parts - 1) / parts;
    c->before_ = std::move(before);
    c->left_ = parts;
    {
      std::lock_guard<std::mutex> lk(m_);
      for (size_t p = 0; p < parts; ++p) q_.push_back({c, p});
    }
    if (parts == 1) go_.notify_one();
    else go_.notify_all();
    return c;
  }

 private:
  struct part {
    std::shared_ptr<copy> c;
    size_t index;
  };
  void work_() {
    for (;;) {
      part p;
      {
        std::unique_lock<std::mutex> lk(m_);
        go_.wait(lk, [&] { return stop_ || !q_.empty(); });
        if (q_.empty()) return;  // stopping, and nothing left to copy
        p = std::move(q_.front());
        q_.pop_front();
      }
      copy& c = *p.c;
      status st = c.before_ ? c.before_() : status{};
      if (st.ok()) {
        const size_t o = p.index * c.per_;
        if (o < c.len_) std::memcpy(c.dst_ + o, c.src_ + o, std::min(c.per_, c.len_ - o));
      }
      c.part_done(std::move(st));
    }
  }
  int n_;
  std::mutex m_;
  std::condition_variable go_;
  std::deque<part> q_;  // under m_
  bool stop_ = false;   // under m_
  std::vector<std::thread> th_;
};

}  // namespace baton::async
