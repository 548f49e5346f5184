// baton/async/copy_team.hpp — a fixed team of host threads that copy one buffer together.
// pipeline (baton/async/pipeline.cuh) stages pageable chunks through pinned slabs with it. Host
// only; no CUDA.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace baton::async {

// A fixed team of host threads that copy one buffer together: the pageable staging copies,
// without creating threads for every chunk (a thread start costs tens of microseconds; a 64 MiB
// chunk's copy about a millisecond). Not thread-safe: one copy() at a time (the pipeline's input
// staging and its drain thread each own a team).
//
// A copy is cut into parts of at least kMinPart bytes (at most kPartsPerThread per thread) that
// the caller and the helpers take one at a time from a shared counter, so that:
//   * one thread copies pageable memory at a few GB/s, a fraction of the link: a 1 MiB chunk is
//     cut into 4 parts, not copied by one or two threads;
//   * a helper that wakes late takes what is left and the caller never waits for a part nobody
//     started: the caller copies parts until none is left, then waits only for those in progress;
//   * only as many helpers are woken as there are parts beyond the caller's (a copy that needs 3
//     does not wake 15, whose wake-ups would contend for the lock).
// The counter holds the copy's generation in its high half: a helper that read an older copy's
// job cannot take a part of the next one.
class CopyTeam {
 public:
  static constexpr size_t kMinPart = size_t(256) << 10;
  static constexpr int kPartsPerThread = 4;

  explicit CopyTeam(int threads) : n_(std::max(1, threads)) {
    for (int i = 1; i < n_; ++i) th_.emplace_back([this] { work(); });
  }
  ~CopyTeam() {
    {
      std::lock_guard<std::mutex> lk(m_);
      stop_ = true;
    }
    go_.notify_all();
    for (auto& t : th_) t.join();
  }
  CopyTeam(const CopyTeam&) = delete;
  CopyTeam& operator=(const CopyTeam&) = delete;

  // The number of parts a copy of `len` bytes is cut into.
  [[nodiscard]] std::uint32_t parts_for(size_t len) const noexcept {
    const size_t by_size = len / kMinPart;
    const size_t cap = size_t(n_) * kPartsPerThread;
    return std::uint32_t(std::clamp<size_t>(by_size, 1, n_ == 1 ? 1 : cap));
  }

  void copy(void* dst, const void* src, size_t len) {
    const std::uint32_t parts = parts_for(len);
    if (parts == 1) {
      std::memcpy(dst, src, len);
      return;
    }
    std::uint64_t gen;
    {
      std::lock_guard<std::mutex> lk(m_);
      job_ = job{static_cast<char*>(dst), static_cast<const char*>(src), len, parts, (len + parts - 1) / parts};
      gen = ++generation_;
      finished_.store(0, std::memory_order_relaxed);
      next_.store(gen << 32, std::memory_order_release);  // part 0 of this generation
    }
    const int helpers = std::min(n_ - 1, int(parts) - 1);
    for (int i = 0; i < helpers; ++i) go_.notify_one();
    run_parts(job_, gen);
    if (finished_.load(std::memory_order_acquire) == parts) return;
    std::unique_lock<std::mutex> lk(m_);
    done_.wait(lk, [&] { return finished_.load(std::memory_order_acquire) == parts; });
  }
  [[nodiscard]] int threads() const noexcept { return n_; }

 private:
  struct job {
    char* dst = nullptr;
    const char* src = nullptr;
    size_t len = 0;
    std::uint32_t parts = 0;
    size_t per = 0;
  };
  // Takes and copies parts of copy `gen` (job j) until none is left or another copy began.
  void run_parts(const job& j, std::uint64_t gen) {
    for (;;) {
      std::uint64_t v = next_.load(std::memory_order_acquire);
      do {
        if ((v >> 32) != gen || std::uint32_t(v) >= j.parts) return;
      } while (!next_.compare_exchange_weak(v, v + 1, std::memory_order_acq_rel, std::memory_order_acquire));
      const size_t o = size_t(std::uint32_t(v)) * j.per;
      if (o < j.len) std::memcpy(j.dst + o, j.src + o, std::min(j.per, j.len - o));
      if (finished_.fetch_add(1, std::memory_order_acq_rel) + 1 == j.parts) {
        { std::lock_guard<std::mutex> lk(m_); }  // the caller is waiting or will see the count
        done_.notify_one();
      }
    }
  }
  void work() {
    std::uint64_t seen = 0;
    for (;;) {
      job j;
      {
        std::unique_lock<std::mutex> lk(m_);
        go_.wait(lk, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        j = job_;
      }
      run_parts(j, seen);
    }
  }
  int n_;
  std::mutex m_;
  std::condition_variable go_, done_;
  job job_;                              // the current copy (written under m_)
  std::uint64_t generation_ = 0;         // copies begun (under m_)
  std::atomic<std::uint64_t> next_{0};   // generation << 32 | next part to take
  std::atomic<std::uint32_t> finished_{0};  // parts of the current copy done
  bool stop_ = false;
  std::vector<std::thread> th_;
};

// The name before the naming rule (docs/naming.md).
using copy_team [[deprecated("renamed CopyTeam, docs/naming.md")]] = CopyTeam;

}  // namespace baton::async
