// baton/async/pipeline.cuh — N chunks through host→device copy, compute, device→host copy with K
// device buffers, on three streams with events between the stages.
//
//   chunk i uses slot i % K.  h2d stream:     wait compute_done[slot] (chunk i-K read its input),
//                                             copy chunk i in, record h2d_done[slot]
//                             compute stream: wait h2d_done[slot] and d2h_done[slot] (chunk i-K's
//                                             output left), compute, record compute_done[slot]
//                             d2h stream:     wait compute_done[slot], copy out, record d2h_done[slot]
// All cross-stream ordering is cudaStreamWaitEvent: no host round trip. K = 2 is double
// buffering, K = 3 triple buffering.
//
// Pageable sources/destinations are staged through pinned slabs: the host copies chunk i into
// staging slot i % K after that slot's previous H2D finished (a per-event wait), using several
// threads, while the GPU works on other chunks; a drain thread copies finished outputs from their
// staging slabs to a pageable destination as soon as each chunk's D2H completes, concurrently
// with the input staging. Pinned (or registered) memory is copied directly.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "baton/async/memory.cuh"
#include "baton/async/stream.cuh"
#include "baton/status.hpp"

namespace baton::async {

struct pipeline_options {
  size_t chunk_bytes = size_t(64) << 20;
  int buffers = 3;          // K: 2 = double buffering, 3 = triple buffering
  int staging_threads = 8;  // host threads copying pageable data into/out of pinned staging slabs
};

// Enqueues the compute for one chunk on `s`: reads `bytes` at d_in, writes `bytes` at d_out.
using compute_fn = std::function<status(const void* d_in, void* d_out, size_t bytes, stream_ref s)>;

class pipeline {
 public:
  pipeline() = default;
  pipeline(pipeline&&) noexcept = default;
  pipeline& operator=(pipeline&&) noexcept = default;
  pipeline(const pipeline&) = delete;
  pipeline& operator=(const pipeline&) = delete;
  ~pipeline() {
    if (!h2d_.get()) return;
    // Work may still be in flight: let the streams drain before freeing their buffers.
    (void)h2d_.ref().synchronize();
    (void)compute_.ref().synchronize();
    (void)d2h_.ref().synchronize();
    if (drain_) drain_->stop();
    for (void* p : dev_) (void)cudaFree(p);
  }

  [[nodiscard]] static result<pipeline> create(pipeline_options o) {
    if (o.chunk_bytes == 0 || o.buffers < 1 || o.staging_threads < 1)
      return status(errc::invalid_argument, "pipeline: chunk_bytes must be > 0, buffers >= 1, staging_threads >= 1");
    pipeline p;
    p.opt_ = o;
    auto mk = [](stream& s) -> status {
      auto r = stream::create();
      if (!r.ok()) return r.error();
      s = std::move(r.value());
      return {};
    };
    BATON_TRY(mk(p.h2d_));
    BATON_TRY(mk(p.compute_));
    BATON_TRY(mk(p.d2h_));
    for (int i = 0; i < 3 * o.buffers + 1; ++i) {
      auto e = event::create();
      if (!e.ok()) return e.error();
      p.ev_.push_back(std::move(e.value()));
    }
    for (int i = 0; i < 2 * o.buffers; ++i) {
      void* d = nullptr;
      BATON_TRY(cuda_check(cudaMalloc(&d, o.chunk_bytes), "pipeline: cudaMalloc"));
      p.dev_.push_back(d);
    }
    p.staging_ = std::make_unique<pinned_pool>(o.chunk_bytes, size_t(2 * o.buffers));
    return result<pipeline>(std::move(p));
  }

  [[nodiscard]] const pipeline_options& options() const { return opt_; }
  [[nodiscard]] stream_ref h2d_stream() const { return h2d_.ref(); }
  [[nodiscard]] stream_ref compute_stream() const { return compute_.ref(); }
  [[nodiscard]] stream_ref d2h_stream() const { return d2h_.ref(); }

  // Pushes `bytes` from `src` through the pipeline into `dst`. Returns once every chunk is
  // enqueued; with a pageable `src` the calling thread does the staging copies as slots free up.
  // `after` (optional) is an event the first copies wait for. Then call finish() (or await
  // done_event()) before reading `dst`.
  [[nodiscard]] status enqueue(const void* src, void* dst, size_t bytes, const compute_fn& f, cudaEvent_t after = nullptr) {
    if (!h2d_.get()) return status(errc::invalid_argument, "pipeline: not created (use pipeline::create)");
    if ((src == nullptr || dst == nullptr) && bytes > 0) return status(errc::invalid_argument, "pipeline: null buffer");
    if (!f) return status(errc::invalid_argument, "pipeline: empty compute function");
    BATON_TRY(drain_pending_outputs());
    src_pinned_ = is_pinned(src);
    dst_pinned_ = is_pinned(dst);
    const int K = opt_.buffers;
    const size_t C = opt_.chunk_bytes;
    const size_t n = (bytes + C - 1) / C;
    if (after) {
      BATON_TRY(h2d_.ref().wait(after));
    }
    staging_in_.clear();
    staging_out_.clear();
    for (int k = 0; k < K && !src_pinned_; ++k) {
      auto b = staging_->acquire(C);
      if (!b.ok()) return b.error();
      staging_in_.push_back(std::move(b.value()));
    }
    for (int k = 0; k < K && !dst_pinned_; ++k) {
      auto b = staging_->acquire(C);
      if (!b.ok()) return b.error();
      staging_out_.push_back(std::move(b.value()));
    }
    const size_t first_seq = issued_;  // sequence number of this call's chunk 0
    for (size_t i = 0; i < n; ++i) {
      const int slot = int(i % size_t(K));
      const size_t off = i * C, len = std::min(C, bytes - off);
      void* din = dev_[size_t(slot)];
      void* dout = dev_[size_t(K + slot)];
      const bool reuse = i >= size_t(K);
      // ---- host -> device
      if (reuse) BATON_TRY(h2d_.ref().wait(compute_done(slot)));
      const void* from = static_cast<const char*>(src) + off;
      if (!src_pinned_) {
        if (reuse) BATON_TRY(cuda_check(cudaEventSynchronize(h2d_done(slot)), "pipeline: staging slot wait"));
        parallel_copy(staging_in_[size_t(slot)].data(), from, len);
        from = staging_in_[size_t(slot)].data();
      }
      BATON_TRY(cuda_check(cudaMemcpyAsync(din, from, len, cudaMemcpyHostToDevice, h2d_.get()), "pipeline: H2D"));
      BATON_TRY(cuda_check(cudaEventRecord(h2d_done(slot), h2d_.get()), "cudaEventRecord"));
      // ---- compute
      BATON_TRY(compute_.ref().wait(h2d_done(slot)));
      if (reuse) BATON_TRY(compute_.ref().wait(d2h_done(slot)));
      BATON_TRY(f(din, dout, len, compute_.ref()).with_context("pipeline: compute of chunk " + std::to_string(i)));
      BATON_TRY(cuda_check(cudaEventRecord(compute_done(slot), compute_.get()), "cudaEventRecord"));
      // ---- device -> host
      BATON_TRY(d2h_.ref().wait(compute_done(slot)));
      char* to = static_cast<char*>(dst) + off;
      if (!dst_pinned_) {
        if (reuse) BATON_TRY(wait_drained(first_seq + i - size_t(K) + 1));  // chunk i-K left the slab
        BATON_TRY(cuda_check(cudaMemcpyAsync(staging_out_[size_t(slot)].data(), dout, len, cudaMemcpyDeviceToHost, d2h_.get()),
                             "pipeline: D2H"));
      } else {
        BATON_TRY(cuda_check(cudaMemcpyAsync(to, dout, len, cudaMemcpyDeviceToHost, d2h_.get()), "pipeline: D2H"));
      }
      BATON_TRY(cuda_check(cudaEventRecord(d2h_done(slot), d2h_.get()), "cudaEventRecord"));
      if (!dst_pinned_) queue_drain(slot, issued_++, to, len);
    }
    BATON_TRY(cuda_check(cudaEventRecord(done_event(), d2h_.get()), "cudaEventRecord"));
    return {};
  }

  // Recorded on the d2h stream after the last chunk: await it, or call finish().
  [[nodiscard]] cudaEvent_t done_event() const { return ev_.back().get(); }

  // Waits for the last chunk (per-event) and copies staged outputs to a pageable destination.
  [[nodiscard]] status finish() {
    BATON_TRY(cuda_check(cudaEventSynchronize(done_event()), "pipeline: cudaEventSynchronize"));
    return drain_pending_outputs();
  }

  // One-call form: enqueue + finish.
  [[nodiscard]] status run(const void* src, void* dst, size_t bytes, const compute_fn& f) {
    BATON_TRY(enqueue(src, dst, bytes, f));
    return finish();
  }

 private:
  cudaEvent_t h2d_done(int s) const { return ev_[size_t(s)].get(); }
  cudaEvent_t compute_done(int s) const { return ev_[size_t(opt_.buffers + s)].get(); }
  cudaEvent_t d2h_done(int s) const { return ev_[size_t(2 * opt_.buffers + s)].get(); }

  // Queue chunk `seq`'s staged output for the drain thread.
  void queue_drain(int slot, size_t seq, char* to, size_t len) {
    if (!drain_) drain_ = std::make_unique<drainer>(opt_.staging_threads);
    drain_->push(drain_job{d2h_done(slot), staging_out_[size_t(slot)].data(), to, len, seq});
  }
  // Blocks until the drain thread has copied out every chunk with sequence number < `seq`.
  status wait_drained(size_t seq) { return drain_ ? drain_->wait_until(seq) : status{}; }
  status drain_pending_outputs() { return wait_drained(issued_); }

  struct drain_job {
    cudaEvent_t ready;  // the chunk's D2H into its staging slab
    const void* from;
    char* to;
    size_t len;
    size_t seq;
  };
  // One thread that waits for each staged output (per-event) and copies it out, in order.
  class drainer {
   public:
    explicit drainer(int threads) : threads_(threads), th_([this] { loop(); }) {}
    ~drainer() { stop(); }
    void push(drain_job j) {
      std::lock_guard<std::mutex> lk(m_);
      q_.push_back(j);
      cv_.notify_all();
    }
    status wait_until(size_t seq) {
      std::unique_lock<std::mutex> lk(m_);
      cv_.wait(lk, [&] { return done_ >= seq || !err_.ok(); });
      return err_;
    }
    void stop() {
      {
        std::lock_guard<std::mutex> lk(m_);
        stop_ = true;
        cv_.notify_all();
      }
      if (th_.joinable()) th_.join();
    }

   private:
    void loop() {
      for (;;) {
        drain_job j;
        {
          std::unique_lock<std::mutex> lk(m_);
          cv_.wait(lk, [&] { return stop_ || !q_.empty(); });
          if (q_.empty()) return;
          j = q_.front();
          q_.pop_front();
        }
        status st = cuda_check(cudaEventSynchronize(j.ready), "pipeline: output drain wait");
        if (st.ok()) parallel_copy_n(j.to, j.from, j.len, threads_);
        std::lock_guard<std::mutex> lk(m_);
        if (!st.ok() && err_.ok()) err_ = st;
        done_ = j.seq + 1;
        cv_.notify_all();
      }
    }
    int threads_;
    std::mutex m_;
    std::condition_variable cv_;
    std::deque<drain_job> q_;
    size_t done_ = 0;
    bool stop_ = false;
    status err_;
    std::thread th_;
  };

  static void parallel_copy_n(void* dst, const void* src, size_t len, int threads) {
    const int t = std::max(1, std::min(threads, int(len / (size_t(1) << 20)) + 1));
    if (t == 1) {
      std::memcpy(dst, src, len);
      return;
    }
    std::vector<std::thread> th;
    const size_t per = (len + size_t(t) - 1) / size_t(t);
    for (int i = 0; i < t; ++i) {
      size_t o = size_t(i) * per;
      if (o >= len) break;
      size_t l = std::min(per, len - o);
      th.emplace_back([=] { std::memcpy(static_cast<char*>(dst) + o, static_cast<const char*>(src) + o, l); });
    }
    for (auto& x : th) x.join();
  }
  void parallel_copy(void* dst, const void* src, size_t len) const { parallel_copy_n(dst, src, len, opt_.staging_threads); }

  pipeline_options opt_{};
  stream h2d_, compute_, d2h_;
  std::vector<event> ev_;
  std::vector<void*> dev_;
  std::unique_ptr<pinned_pool> staging_;
  std::vector<pinned_buffer> staging_in_, staging_out_;
  std::unique_ptr<drainer> drain_;
  size_t issued_ = 0;  // staged output chunks handed to the drain thread, over the pipeline's life
  bool src_pinned_ = false, dst_pinned_ = false;
};

}  // namespace baton::async
