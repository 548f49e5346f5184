// baton/async/copy_team.hpp — a fixed team of host threads that copy one buffer together.
// pipeline (baton/async/pipeline.cuh) stages pageable chunks through pinned slabs with it. Host
// only; no CUDA.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace baton::async {

// A fixed team of host threads that copy one buffer together, the caller taking the first slice:
// the pageable staging copies, without creating threads for every chunk (a thread start costs
// tens of microseconds; a 64 MiB chunk's copy about a millisecond). Not thread-safe: one copy()
// at a time (the pipeline's input staging and its drain thread each own a team).
class CopyTeam {
 public:
  explicit CopyTeam(int threads) : n_(std::max(1, threads)) {
    for (int i = 1; i < n_; ++i) th_.emplace_back([this, i] { work(i); });
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

  // Slices of at least 1 MiB, one per thread at most.
  void copy(void* dst, const void* src, size_t len) {
    const int parts = std::max(1, std::min(n_, int(len / (size_t(1) << 20)) + 1));
    if (parts == 1) {
      std::memcpy(dst, src, len);
      return;
    }
    {
      std::lock_guard<std::mutex> lk(m_);
      job_ = job{static_cast<char*>(dst), static_cast<const char*>(src), len, parts, (len + size_t(parts) - 1) / size_t(parts)};
      remaining_ = parts - 1;
      ++generation_;
    }
    go_.notify_all();
    slice(job_, 0);
    std::unique_lock<std::mutex> lk(m_);
    done_.wait(lk, [this] { return remaining_ == 0; });
  }
  [[nodiscard]] int threads() const noexcept { return n_; }

 private:
  struct job {
    char* dst = nullptr;
    const char* src = nullptr;
    size_t len = 0;
    int parts = 0;
    size_t per = 0;
  };
  static void slice(const job& j, int i) {
    const size_t o = size_t(i) * j.per;
    if (o < j.len) std::memcpy(j.dst + o, j.src + o, std::min(j.per, j.len - o));
  }
  void work(int i) {
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
      if (i >= j.parts) continue;  // a small copy: not this thread's
      slice(j, i);
      std::lock_guard<std::mutex> lk(m_);
      if (--remaining_ == 0) done_.notify_one();
    }
  }
  int n_;
  std::mutex m_;
  std::condition_variable go_, done_;
  job job_;
  int remaining_ = 0;
  std::uint64_t generation_ = 0;
  bool stop_ = false;
  std::vector<std::thread> th_;
};

// The name before the naming rule (docs/naming.md).
using copy_team [[deprecated("renamed CopyTeam, docs/naming.md")]] = CopyTeam;

}  // namespace baton::async
