// baton/async/pipeline.cuh — N chunks through host→device copy, compute, device→host copy with K
// device buffers, on three streams with events between the stages.
//
//   chunk i uses slot i % K, where i counts every chunk the pipeline has issued, across calls
//   (SlotLedger), so a call's first chunks wait for the previous call's last ones.
//                             h2d stream:     wait compute_done[slot] (chunk i-K read its input),
//                                             copy chunk i in, record h2d_done[slot]
//                             compute stream: wait h2d_done[slot] and d2h_done[slot] (chunk i-K's
//                                             output left), compute, record compute_done[slot]
//                             d2h stream:     wait compute_done[slot], copy out, record d2h_done[slot]
// All cross-stream ordering is cudaStreamWaitEvent: no host round trip. K = 2 is double
// buffering, K = 3 triple buffering.
//
// Pageable sources/destinations are staged through pinned slabs. Input: a ring of K + D slabs
// (D = staging_ahead_bytes / chunk_bytes, at most 16) that a pool of host threads fills ahead of
// the GPU: when chunk i is issued, the copies of the chunks after it (up to D, this call's or the
// awaited run's) are already queued, each into the next slab of the ring once that slab's previous
// H2D is done (a per-event wait on the pool's thread). So many chunks are copied at once, on many
// threads, while the GPU works on earlier ones; a chunk's H2D waits only for its own copy. Output:
// a drain thread copies finished outputs from their staging slabs to a pageable destination as
// soon as each chunk's D2H completes. Pinned (or registered) memory is copied directly.
//
// Awaitable form: co_await p.run(ctx, src, dst, bytes, f, {.token, .progress}) -> result<pipeline_report>.
// The chunks are issued, and pageable data staged, by the pipeline's own runner thread, never by
// the awaiting thread (the coroutine is resumed through the reactor, gpu_context's executor); it
// completes only when dst is fully written, pageable included. A stopped token ends the issuing:
// chunks already issued finish (and are written to dst), chunks never issued leave dst untouched,
// and the report says how many completed.
//
// Steady state as one graph: for pinned (or registered) src/dst, capture() records exactly what
// enqueue() enqueues — the three streams forked from and joined back to an origin stream, the
// per-slot events becoming graph edges — into one CUDA graph; pipeline_graph::launch(s) replays it
// with a single cudaGraphLaunch (no per-chunk host work). Pageable buffers cannot be captured:
// their staging is done by host threads, which a graph cannot replay.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "baton/async/cancel.hpp"
#include "baton/async/copy_pool.hpp"
#include "baton/async/copy_team.hpp"
#include "baton/async/cuda_await.cuh"
#include "baton/async/graph.cuh"
#include "baton/async/memory.cuh"
#include "baton/async/slot_ledger.hpp"
#include "baton/async/stream.cuh"
#include "baton/status.hpp"

namespace baton::async {

struct pipeline_options {
  size_t chunk_bytes = size_t(64) << 20;
  int buffers = 3;          // K: 2 = double buffering, 3 = triple buffering
  // Host threads copying pageable data into (and, as many again, out of) pinned staging slabs;
  // 0: std::thread::hardware_concurrency(). One thread's memcpy is latency-bound far below the
  // memory's bandwidth, so more threads copy faster up to about one per core (measured in
  // docs/async.md, with async.csv). Created at the first pageable use.
  int staging_threads = 0;
  // Pinned memory for staging a pageable source ahead of the GPU: D = staging_ahead_bytes /
  // chunk_bytes chunks (at most 16) are copied ahead of the one being issued, in K + D slabs. 0:
  // none ahead (a chunk is copied when it is issued, as large chunks are by default).
  size_t staging_ahead_bytes = size_t(64) << 20;
  // Bytes the compute of a full input chunk writes (0: chunk_bytes, as many as it reads). A chunk
  // of len input bytes writes len * out_chunk_bytes / chunk_bytes (a whole number of bytes, or the
  // call is refused); dst holds the outputs back to back. Needs a chunk_fn (typed_compute) when
  // it differs from chunk_bytes.
  size_t out_chunk_bytes = 0;
};

// Enqueues the compute for one chunk on `s`: reads `bytes` at d_in, writes `bytes` at d_out.
using compute_fn = std::function<status(const void* d_in, void* d_out, size_t bytes, stream_ref s)>;

// Enqueues the compute for one chunk on `s`: reads `in`, writes `out` (whose size is the chunk's
// output size, pipeline_options::out_chunk_bytes). typed_compute<In, Out>(f) makes one from a
// function of typed spans.
using chunk_fn = std::function<status(device_span<const std::byte> in, device_span<std::byte> out, stream_ref s)>;

// A chunk_fn from f(device_span<const In> in, device_span<Out> out, stream_ref s) -> status. A chunk
// whose input or output is not a whole number of elements is refused with both sizes named.
template <class In, class Out, class F>
[[nodiscard]] chunk_fn typed_compute(F f) {
  return [f = std::move(f)](device_span<const std::byte> in, device_span<std::byte> out, stream_ref s) -> status {
    if (in.size() % sizeof(In) != 0 || out.size() % sizeof(Out) != 0)
      return status(errc::invalid_argument, "typed_compute: a chunk of " + std::to_string(in.size()) + " input and " +
                                                std::to_string(out.size()) + " output bytes is not a whole number of " +
                                                std::to_string(sizeof(In)) + "- and " + std::to_string(sizeof(Out)) +
                                                "-byte elements (choose chunk_bytes and out_chunk_bytes to fit)");
    return f(device_span<const In>(reinterpret_cast<const In*>(in.data()), in.size() / sizeof(In)),
             device_span<Out>(reinterpret_cast<Out*>(out.data()), out.size() / sizeof(Out)), s);
  };
}

// What an awaited pipeline::run() did.
struct pipeline_report {
  size_t chunks_total = 0;      // ceil(bytes / chunk_bytes)
  size_t chunks_completed = 0;  // issued before the stop (all of them without one), each fully written to dst
  size_t bytes_completed = 0;   // input bytes of the completed chunks
  size_t out_bytes_completed = 0;  // dst[0, out_bytes_completed) holds results; the rest of dst is untouched
  bool cancelled = false;       // the token stopped the issuing before the last chunk
};

// Options of pipeline::run(). progress(chunks_done, chunks_total) is called on the pipeline's
// runner thread as chunks' GPU work (H2D, compute, D2H) completes, in chunk order; it must not
// call back into the pipeline.
struct pipeline_run_options {
  cancel_token token{};
  std::function<void(size_t chunks_done, size_t chunks_total)> progress{};
};

// One thread that runs jobs in the order they were pushed (the pipeline's drain of staged outputs,
// and its runner of awaited runs). push() returns the job's ticket (1-based, in push order);
// wait_until(t) blocks until the first t jobs have run and returns the first error any job
// returned; stop() runs what is queued, then ends the thread. on_start runs first on the thread
// (the pipeline's device).
class serial_worker {
 public:
  explicit serial_worker(std::function<void()> on_start = {}) : th_([this, on_start = std::move(on_start)] {
    if (on_start) on_start();
    loop_();
  }) {}
  serial_worker(const serial_worker&) = delete;
  serial_worker& operator=(const serial_worker&) = delete;
  ~serial_worker() { stop(); }
  uint64_t push(std::function<status()> job) {
    std::lock_guard<std::mutex> lk(m_);
    q_.push_back(std::move(job));
    cv_.notify_all();
    return ++pushed_;
  }
  uint64_t pushed() {
    std::lock_guard<std::mutex> lk(m_);
    return pushed_;
  }
  status wait_until(uint64_t ticket) {
    std::unique_lock<std::mutex> lk(m_);
    cv_.wait(lk, [&] { return done_ >= ticket || !err_.ok(); });
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
  void loop_() {
    for (;;) {
      std::function<status()> job;
      {
        std::unique_lock<std::mutex> lk(m_);
        cv_.wait(lk, [&] { return stop_ || !q_.empty(); });
        if (q_.empty()) return;
        job = std::move(q_.front());
        q_.pop_front();
      }
      status st = job();
      std::lock_guard<std::mutex> lk(m_);
      if (!st.ok() && err_.ok()) err_ = std::move(st);
      ++done_;
      cv_.notify_all();
    }
  }
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<std::function<status()>> q_;
  uint64_t pushed_ = 0, done_ = 0;
  bool stop_ = false;
  status err_;
  std::thread th_;  // last: started once the members above exist
};

class pipeline;

// A pipeline's steady state captured into one graph (pipeline::capture); owning, move-only.
//
// launch() is safe to mix with the pipeline's own work: the captured graph uses the pipeline's
// device buffers, so a replay must not overlap an enqueue() (or a replay on another stream).
// Rather than leave that to the caller, launch() orders the replay on the GPU (no host round
// trip): `s` first waits for everything already on the pipeline's three streams, and after the
// replay those streams wait for it — so a later enqueue(), a replay on another stream and the
// pipeline's destructor (which drains its streams) all come after it. Cost: 4 event records and
// 6 stream waits per launch. Replays on one stream simply run one after the other.
//
// A pipeline_graph refers to its pipeline's streams and device buffers and to the captured src/dst
// (which must stay allocated and page-locked): destroy it before the pipeline (moving the pipeline
// is fine). Like the pipeline, it is not thread-safe: launch from one thread at a time, outside
// stream capture.
class pipeline_graph {
 public:
  pipeline_graph() = default;
  pipeline_graph(pipeline_graph&&) noexcept = default;
  pipeline_graph& operator=(pipeline_graph&&) noexcept = default;
  pipeline_graph(const pipeline_graph&) = delete;
  pipeline_graph& operator=(const pipeline_graph&) = delete;

  // Replays the whole pipeline on `s`: re-reads src, rewrites dst. Await it like any work on `s`.
  [[nodiscard]] status launch(stream_ref s) const {
    if (!g_.get()) return status(errc::invalid_argument, "pipeline_graph: empty (use pipeline::capture)");
    BATON_TRY(s.usable("pipeline_graph::launch"));
    for (cudaStream_t ps : streams_) {  // after whatever the pipeline's streams still hold
      BATON_TRY(order_.record(ps).with_context("pipeline_graph::launch: ordering after the pipeline"));
      BATON_TRY(s.wait(order_.get()).with_context("pipeline_graph::launch: ordering after the pipeline"));
    }
    BATON_TRY(g_.launch(s).with_context("pipeline_graph::launch"));
    BATON_TRY(order_.record(s).with_context("pipeline_graph::launch: ordering the pipeline after it"));
    for (cudaStream_t ps : streams_)
      BATON_TRY(stream_ref(ps).wait(order_.get()).with_context("pipeline_graph::launch: ordering the pipeline after it"));
    return {};
  }
  // Graph nodes: one H2D copy, the compute function's work and one D2H copy per chunk (events
  // and stream waits become edges, not nodes).
  [[nodiscard]] result<size_t> num_nodes() const { return g_.num_nodes(); }
  [[nodiscard]] const graph_exec& exec() const noexcept { return g_; }

 private:
  friend class pipeline;
  graph_exec g_;
  event order_;                      // reused for every ordering step: each wait captures its state
  cudaStream_t streams_[3] = {};     // the pipeline's h2d, compute, d2h (raw: survive moving it)
};

class pipeline {
 public:
  pipeline() = default;
  // Moving waits for the runs o's runner thread still has (their jobs refer to o), then takes o's
  // state; the runner thread is started again at the next run().
  pipeline(pipeline&& o) noexcept { *this = std::move(o); }
  // Releases this pipeline first (its runs finish, its streams drain, as in the destructor), then
  // takes o's.
  pipeline& operator=(pipeline&& o) noexcept {
    if (this != &o) {
      release_();
      o.stop_runner_();
      o.drop_ahead_();  // its fills refer to o's slabs and events
      h2d_ = std::move(o.h2d_);
      compute_ = std::move(o.compute_);
      d2h_ = std::move(o.d2h_);
      ev_ = std::move(o.ev_);
      run_events_ = std::move(o.run_events_);
      dev_ = std::exchange(o.dev_, {});
      ring_ = std::move(o.ring_);
      ring_free_ = std::move(o.ring_free_);
      ring_next_ = std::exchange(o.ring_next_, 0);
      staging_out_ = std::move(o.staging_out_);
      staging_ = std::move(o.staging_);
      drain_ = std::move(o.drain_);
      drain_team_ = std::move(o.drain_team_);
      in_pool_ = std::move(o.in_pool_);
      opt_ = o.opt_;
      slots_ = std::exchange(o.slots_, SlotLedger{});
      device_ = o.device_;
    }
    return *this;
  }
  pipeline(const pipeline&) = delete;
  pipeline& operator=(const pipeline&) = delete;
  ~pipeline() { release_(); }

  [[nodiscard]] static result<pipeline> create(pipeline_options o) {
    if (o.chunk_bytes == 0 || o.buffers < 1 || o.staging_threads < 0)
      return status(errc::invalid_argument,
                    "pipeline: chunk_bytes must be > 0, buffers >= 1, staging_threads >= 0 (0: one per hardware thread)");
    if (o.out_chunk_bytes == 0) o.out_chunk_bytes = o.chunk_bytes;
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
    for (int i = 0; i < 2 * o.buffers; ++i) {  // K input slots, then K output slots
      void* d = nullptr;
      BATON_TRY(cuda_check(cudaMalloc(&d, i < o.buffers ? o.chunk_bytes : o.out_chunk_bytes), "pipeline: cudaMalloc"));
      p.dev_.push_back(d);
    }
    p.staging_ = std::make_unique<pinned_pool>(std::max(o.chunk_bytes, o.out_chunk_bytes),
                                               size_t(2 * o.buffers) + p.ahead_chunks_());
    p.slots_ = SlotLedger(o.buffers);
    BATON_TRY(cuda_check(cudaGetDevice(&p.device_), "pipeline: cudaGetDevice"));
    return result<pipeline>(std::move(p));
  }

  [[nodiscard]] const pipeline_options& options() const { return opt_; }
  [[nodiscard]] stream_ref h2d_stream() const { return h2d_.ref(); }
  [[nodiscard]] stream_ref compute_stream() const { return compute_.ref(); }
  [[nodiscard]] stream_ref d2h_stream() const { return d2h_.ref(); }

  // Pushes `bytes` from `src` through the pipeline into `dst`. Returns once every chunk is
  // enqueued; with a pageable `src` it waits for each chunk's staging copy (made by the staging
  // pool, up to D chunks ahead) before issuing that chunk.
  // `after` (optional) is an event the first copies wait for. Then call finish() before reading
  // `dst` (with a pinned `dst`, awaiting gpu_done_event() is enough; with a pageable one the
  // drain thread still copies after it). Any sequence of enqueue() calls, replays of captured
  // graphs (pipeline_graph::launch orders them on the GPU) and finish() is safe: a slot's next
  // user waits for its previous user whichever call issued it (SlotLedger), on the GPU for
  // device slots and on the host only where a pageable buffer's staging slab is reused.
  [[nodiscard]] status enqueue(const void* src, void* dst, size_t bytes, const compute_fn& f, cudaEvent_t after = nullptr) {
    BATON_TRY(same_size_("pipeline::enqueue"));
    return enqueue(src, dst, bytes, as_chunk_fn_(f), after);
  }
  // The same with a chunk_fn: its output may differ in size from its input (out_chunk_bytes).
  [[nodiscard]] status enqueue(const void* src, void* dst, size_t bytes, const chunk_fn& f, cudaEvent_t after = nullptr) {
    if (!h2d_.get()) return status(errc::invalid_argument, "pipeline: not created (use pipeline::create)");
    std::lock_guard<std::mutex> lk(*use_);  // a run()'s runner thread enqueues too
    if ((src == nullptr || dst == nullptr) && bytes > 0) return status(errc::invalid_argument, "pipeline: null buffer");
    if (!f) return status(errc::invalid_argument, "pipeline: empty compute function");
    BATON_TRY(check_out_sizes_(bytes, "pipeline::enqueue"));
    if (after) {
      BATON_TRY(h2d_.ref().wait(after));
    }
    BATON_TRY(enqueue_locked_(src, dst, bytes, f, is_pinned(src), is_pinned(dst)));
    BATON_TRY(cuda_check(cudaEventRecord(gpu_done_event(), d2h_.get()), "cudaEventRecord"));
    return {};
  }

  // Records the pipeline for `bytes` from `src` to `dst` — both pinned or registered host memory —
  // into one graph, captured from `origin` (thread-local mode): `origin` forks the h2d, compute and
  // d2h streams, they enqueue exactly what enqueue() enqueues (enqueue_chunks), and all three join
  // back before the capture ends. `f` runs once per chunk, now: it must only enqueue capturable
  // work on the stream it is given, and what it enqueues (kernel arguments included) is what every
  // replay runs. Each replay re-reads `src` and rewrites `dst` at the captured addresses.
  // Any failure ends the capture (after rejoining the forked streams, so every stream leaves
  // capture mode) and returns the error with context; nothing is kept. Pipeline state used by
  // enqueue() (its events, staging, drain thread) is untouched: the capture uses events of its
  // own, so it may be taken while an enqueue() is still in flight.
  [[nodiscard]] result<pipeline_graph> capture(const void* src, void* dst, size_t bytes, const compute_fn& f,
                                               stream_ref origin) {
    BATON_TRY(same_size_("pipeline::capture"));
    return capture(src, dst, bytes, as_chunk_fn_(f), origin);
  }
  [[nodiscard]] result<pipeline_graph> capture(const void* src, void* dst, size_t bytes, const chunk_fn& f,
                                               stream_ref origin) {
    if (!h2d_.get()) return status(errc::invalid_argument, "pipeline::capture: not created (use pipeline::create)");
    if (src == nullptr || dst == nullptr) return status(errc::invalid_argument, "pipeline::capture: null buffer");
    if (bytes == 0) return status(errc::invalid_argument, "pipeline::capture: nothing to capture (bytes == 0)");
    if (!f) return status(errc::invalid_argument, "pipeline::capture: empty compute function");
    BATON_TRY(check_out_sizes_(bytes, "pipeline::capture"));
    std::lock_guard<std::mutex> lk(*use_);
    // Checked before the capture begins (cudaPointerGetAttributes is not a stream operation).
    auto pageable = [](const char* name) {
      return status(errc::invalid_argument,
                    std::string("pipeline::capture: ") + name +
                        " is not pinned or registered host memory; pageable buffers are staged by host threads, "
                        "which a graph cannot capture (use enqueue()/run(), or page-lock it with host_registration)");
    };
    if (!is_pinned(src)) return pageable("src");
    if (!is_pinned(dst)) return pageable("dst");
    // The capture's own events (3K stage events + the fork/join event), created before the capture
    // begins. Stream capture turns their records and waits into edges, so the graph does not refer
    // to them and they can go when capture() returns. The pipeline's own events are not used: an
    // event recorded in a capture is refused by cudaEventSynchronize/Query (cudaErrorCapturedEvent),
    // which the drain thread of an in-flight pageable enqueue() or a later finish() may call.
    std::vector<event> ev;
    for (int i = 0; i < 3 * opt_.buffers + 1; ++i) {
      auto e = event::create();
      if (!e.ok()) return e.error().with_context("pipeline::capture");
      ev.push_back(std::move(e.value()));
    }
    auto order = event::create();
    if (!order.ok()) return order.error().with_context("pipeline::capture");
    const cudaEvent_t fork = ev.back().get();
    const cudaStream_t side[3] = {h2d_.get(), compute_.get(), d2h_.get()};
    auto g = async::capture(origin, [&](stream_ref o) -> status {
      int joined = 0;  // side streams that joined the capture (by waiting on the fork event)
      // Every stream that joined must be joined back into `origin` before the capture ends, or it
      // fails (cudaErrorStreamCaptureUnjoined). Each side stream's tail is joined explicitly
      // rather than relying on it reaching the d2h stream's last event: the waits add no nodes.
      auto join = [&]() -> status {
        for (int i = 0; i < joined; ++i) {
          BATON_TRY(cuda_check(cudaEventRecord(fork, side[i]), "pipeline::capture: join: cudaEventRecord"));
          BATON_TRY(o.wait(fork).with_context("pipeline::capture: join"));
        }
        return {};
      };
      status st = cuda_check(cudaEventRecord(fork, o), "pipeline::capture: fork: cudaEventRecord");
      while (st.ok() && joined < 3) {
        st = stream_ref(side[joined]).wait(fork).with_context("pipeline::capture: fork");
        if (st.ok()) ++joined;
      }
      // The graph's own slot sequence: every replay runs after all of the pipeline's earlier
      // work and before its later work (pipeline_graph::launch), so inside the graph only the
      // graph's own chunks share slots.
      SlotLedger graph_slots(opt_.buffers);
      if (st.ok()) st = enqueue_chunks(src, dst, bytes, f, ev.data(), graph_slots, true, true);
      if (st.ok()) return join();
      // Failed mid-capture: rejoin what joined (best effort — an invalidated capture refuses
      // this too) so that ending the capture releases every stream; async::capture then ends it,
      // destroys the partial graph and returns `st`.
      (void)join();
      return st;
    });
    if (!g.ok()) {
      // The error is in the returned status; clear the thread's last CUDA error left by the failed
      // calls so that a later cudaGetLastError() check (as compute functions do) does not report it.
      (void)cudaGetLastError();
      return g.error().with_context("pipeline::capture");
    }
    pipeline_graph pg;
    pg.g_ = std::move(g.value());
    pg.order_ = std::move(order.value());
    for (int i = 0; i < 3; ++i) pg.streams_[i] = side[i];
    return result<pipeline_graph>(std::move(pg));
  }

  // Recorded on the d2h stream after the last chunk of the last enqueue(): the GPU's part is done.
  // `dst` is readable once it completes only if `dst` is pinned (or registered); a pageable `dst`
  // is written by the drain thread after it: call finish(), or use run(), which completes when dst
  // is written.
  [[nodiscard]] cudaEvent_t gpu_done_event() const { return ev_.back().get(); }
  [[deprecated("renamed gpu_done_event(): it does not mean that a pageable dst is written (finish() or run() does)")]]
  [[nodiscard]] cudaEvent_t done_event() const { return gpu_done_event(); }

  // Waits for the last chunk of the enqueue() calls (per-event) and copies staged outputs to a
  // pageable destination: afterwards every dst of those calls is readable. Runs in flight
  // (run()) are not waited for: await them.
  [[nodiscard]] status finish() {
    if (!h2d_.get()) return status(errc::invalid_argument, "pipeline: not created (use pipeline::create)");
    std::lock_guard<std::mutex> lk(*use_);
    BATON_TRY(cuda_check(cudaEventSynchronize(gpu_done_event()), "pipeline: cudaEventSynchronize"));
    return drain_pending_outputs();
  }

  // One-call form: enqueue + finish (blocks the calling thread; the awaitable form is below).
  [[nodiscard]] status run(const void* src, void* dst, size_t bytes, const compute_fn& f) {
    BATON_TRY(enqueue(src, dst, bytes, f));
    return finish();
  }
  [[nodiscard]] status run(const void* src, void* dst, size_t bytes, const chunk_fn& f) {
    BATON_TRY(enqueue(src, dst, bytes, f));
    return finish();
  }

  // The awaitable, cancellable form: co_await p.run(ctx, src, dst, bytes, f, options).
  //   * The runner thread (one per pipeline, started at the first run()) issues the chunks one by
  //     one, as enqueue() would (pageable staging included), and never the awaiting thread, which
  //     is free until the coroutine resumes through ctx's reactor and executor.
  //   * Completes when dst is fully written (pageable dst: after the drain thread's copies).
  //   * options.token stopped: no chunk is issued after the runner sees the stop; issued chunks
  //     finish and are written; dst past report.bytes_completed is untouched. A stop is not an
  //     error: the report says cancelled (a token stopped before the run starts issues nothing).
  //   * options.progress(done, total) as chunks' GPU work completes (runner thread, chunk order).
  //   * An error (a compute function's, a CUDA call's) ends the issuing; the chunks issued before it
  //     are waited for, and the error is returned with the chunk named.
  // Runs on one pipeline execute in the order they were started, one at a time; an enqueue() from
  // another thread may interleave with a run's chunks (the slot ledger orders them). The pipeline
  // must outlive the co_await (its destructor waits for the runs it still has).
  [[nodiscard]] task<result<pipeline_report>> run(gpu_context& ctx, const void* src, void* dst, size_t bytes,
                                                  compute_fn f, pipeline_run_options options = {}) {
    const status same = same_size_("pipeline::run");
    if (!same.ok()) return fail_(same);
    return run(ctx, src, dst, bytes, as_chunk_fn_(std::move(f)), std::move(options));
  }
  [[nodiscard]] task<result<pipeline_report>> run(gpu_context& ctx, const void* src, void* dst, size_t bytes,
                                                  chunk_fn f, pipeline_run_options options = {}) {
    if (!h2d_.get()) co_return status(errc::invalid_argument, "pipeline::run: not created (use pipeline::create)");
    if ((src == nullptr || dst == nullptr) && bytes > 0)
      co_return status(errc::invalid_argument, "pipeline::run: null buffer");
    if (!f) co_return status(errc::invalid_argument, "pipeline::run: empty compute function");
    BATON_CO_TRY(check_out_sizes_(bytes, "pipeline::run"));
    auto state = std::make_shared<run_state_>();
    BATON_CO_TRY(start_runner_());
    status waited;
    {
      // Attached before the runner can finish, detached once this frame is resumed (or destroyed).
      host_signal::attachment wake_me(state->done, ctx.r);
      (void)runner_->push([this, state, src, dst, bytes, f = std::move(f), options = std::move(options)] {
        status st = run_chunks_(src, dst, bytes, f, options, state->report);
        if (st.ok()) state->done.complete();
        else state->done.fail(std::move(st));
        return status{};  // delivered through state->done, not the worker's record
      });
      waited = co_await on(ctx.r, state->done, ctx.ex);
    }
    if (!waited.ok()) co_return waited;
    co_return state->report;
  }

 private:
  // Output bytes of a chunk of `len` input bytes.
  size_t out_len_(size_t len) const {
    const size_t C = opt_.chunk_bytes, OC = opt_.out_chunk_bytes;
    return OC == C ? len : len / C * OC + len % C * OC / C;
  }
  // Every chunk of a `bytes` input writes a whole number of output bytes (the last one too).
  status check_out_sizes_(size_t bytes, const char* what) const {
    const size_t C = opt_.chunk_bytes, OC = opt_.out_chunk_bytes, last = bytes % C;
    if (OC != C && last != 0 && (last * OC) % C != 0)
      return status(errc::invalid_argument, std::string(what) + ": the last chunk's " + std::to_string(last) +
                                                " input bytes would write " + std::to_string(double(last) * double(OC) / double(C)) +
                                                " output bytes (out_chunk_bytes " + std::to_string(OC) + " per chunk_bytes " +
                                                std::to_string(C) + "); make bytes a multiple of chunk_bytes or of the ratio");
    return {};
  }
  status same_size_(const char* what) const {
    if (opt_.out_chunk_bytes != 0 && opt_.out_chunk_bytes != opt_.chunk_bytes)
      return status(errc::invalid_argument, std::string(what) + ": out_chunk_bytes (" + std::to_string(opt_.out_chunk_bytes) +
                                                ") differs from chunk_bytes (" + std::to_string(opt_.chunk_bytes) +
                                                "): a compute_fn writes as many bytes as it reads; pass a chunk_fn (typed_compute)");
    return {};
  }
  static chunk_fn as_chunk_fn_(compute_fn f) {
    if (!f) return chunk_fn{};  // refused as "empty compute function" by the caller
    return [f = std::move(f)](device_span<const std::byte> in, device_span<std::byte> out, stream_ref s) {
      return f(in.data(), out.data(), in.size(), s);
    };
  }
  static task<result<pipeline_report>> fail_(status s) { co_return s; }

  // Stage events of slot `s` in an event set `ev` of 3K: ev_ for enqueue(), capture()'s own set.
  cudaEvent_t h2d_done(const event* ev, int s) const { return ev[size_t(s)].get(); }
  cudaEvent_t compute_done(const event* ev, int s) const { return ev[size_t(opt_.buffers + s)].get(); }
  cudaEvent_t d2h_done(const event* ev, int s) const { return ev[size_t(2 * opt_.buffers + s)].get(); }

  // A run()'s completion: the runner thread completes or fails `done` (which wakes the awaiting
  // reactor at once: a run lasts milliseconds, so the reactor is in its capped sleeps by then).
  struct run_state_ {
    host_signal done;
    pipeline_report report;
  };

  status start_runner_() {
    if (!runner_) runner_ = std::make_unique<serial_worker>([dev = device_] { (void)cudaSetDevice(dev); });
    return {};
  }
  void stop_runner_() noexcept {
    if (runner_) runner_->stop();
    runner_.reset();
  }

  // The chunks of one run(), on the runner thread: each issued as an enqueue() of one chunk (the
  // slot ledger orders them with everything before; the lock is taken per chunk so that another
  // thread's enqueue() may come between two); with a progress callback an event is recorded after
  // each chunk's D2H and completed chunks are reported without blocking while issuing, then the
  // issued ones are waited for and the pageable outputs drained. Without one only
  // gpu_done_event() is recorded and waited for: per-chunk events and queries cost the runner ~2 us
  // a chunk, which a pageable run, bound by the runner's host work, pays in full. What is the same
  // for every chunk is done once: the pinned queries and the events (kept by the pipeline and
  // reused by later runs).
  status run_chunks_(const void* src, void* dst, size_t bytes, const chunk_fn& f, const pipeline_run_options& o,
                     pipeline_report& report) {
    const size_t C = opt_.chunk_bytes, OC = opt_.out_chunk_bytes;
    const size_t n = (bytes + C - 1) / C;
    report = pipeline_report{};
    report.chunks_total = n;
    size_t issued = 0, completed = 0;
    status err;
    auto mark = [&](size_t upto) {  // chunks [completed, upto) are known complete
      while (completed < upto) {
        ++completed;
        if (o.progress) o.progress(completed, n);
      }
    };
    const bool src_pinned = is_pinned(src), dst_pinned = is_pinned(dst);
    const bool per_chunk = bool(o.progress);
    while (per_chunk && run_events_.size() < n && err.ok()) {
      auto e = event::create();
      if (e.ok()) run_events_.push_back(std::move(e.value()));
      else err = e.error().with_context("pipeline::run: chunk events");
    }
    const std::vector<event>& done = run_events_;
    for (size_t i = 0; i < n && err.ok(); ++i) {
      if (o.token.stop_requested()) {
        report.cancelled = true;
        break;
      }
      const size_t off = i * C, len = std::min(C, bytes - off);
      {
        std::lock_guard<std::mutex> lk(*use_);
        err = enqueue_locked_(static_cast<const char*>(src) + off, static_cast<char*>(dst) + i * OC, len, f, src_pinned,
                              dst_pinned, bytes - off - len);
        if (err.ok() && per_chunk) err = cuda_check(cudaEventRecord(done[i].get(), d2h_.get()), "cudaEventRecord");
        if (err.ok() && i + 1 == n) err = cuda_check(cudaEventRecord(gpu_done_event(), d2h_.get()), "cudaEventRecord");
      }
      if (!err.ok()) {
        err = err.with_context("pipeline::run: chunk " + std::to_string(i) + " of " + std::to_string(n));
        break;
      }
      ++issued;
      if (!per_chunk) continue;
      size_t k = completed;
      while (k < issued && cudaEventQuery(done[k].get()) == cudaSuccess) ++k;
      mark(k);
    }
    if (issued > 0 && issued < n) {  // cancelled or failed: gpu_done_event() after the last chunk issued
      std::lock_guard<std::mutex> lk(*use_);
      const status r = cuda_check(cudaEventRecord(gpu_done_event(), d2h_.get()), "cudaEventRecord");
      if (err.ok()) err = r;
    }
    if (!per_chunk && issued > 0) {  // gpu_done_event() follows the last chunk issued
      const status w = cuda_check(cudaEventSynchronize(gpu_done_event()), "pipeline::run: waiting for the chunks");
      if (!w.ok() && err.ok()) err = w;
      if (w.ok()) completed = issued;
    }
    for (size_t k = completed; per_chunk && k < issued; ++k) {
      const status w = cuda_check(cudaEventSynchronize(done[k].get()), "pipeline::run: waiting for a chunk");
      if (!w.ok()) {
        if (err.ok()) err = w;
        break;
      }
      mark(k + 1);
    }
    // Pageable dst: the drain thread's copies of the issued chunks (all queued by now). Staging
    // copies queued ahead for chunks never issued (a stop, an error) are waited for: they read src.
    status drained;
    {
      std::lock_guard<std::mutex> lk(*use_);  // drain_ is created under it
      drop_ahead_();
      drained = drain_pending_outputs();
    }
    if (err.ok()) err = drained;
    report.chunks_completed = issued;
    report.bytes_completed = std::min(bytes, issued * C);
    report.out_bytes_completed = out_len_(report.bytes_completed);
    return err;
  }

  // Work may still be in flight: let the runs and the streams finish before freeing their
  // buffers; the staging slabs go back to their pool before the pool goes.
  void release_() noexcept {
    stop_runner_();
    drop_ahead_();
    if (h2d_.get()) {
      (void)h2d_.ref().synchronize();
      (void)compute_.ref().synchronize();
      (void)d2h_.ref().synchronize();
    }
    if (drain_) drain_->stop();
    drain_.reset();
    drain_team_.reset();
    in_pool_.reset();
    for (void* p : dev_) (void)cudaFree(p);
    dev_.clear();
    ring_.clear();
    ring_free_.clear();
    ring_next_ = 0;
    staging_out_.clear();
    staging_.reset();
    ev_.clear();
    run_events_.clear();
    h2d_ = stream();
    compute_ = stream();
    d2h_ = stream();
  }

  // enqueue()'s chunk loop, the caller holding *use_ and having checked the arguments.
  // more_bytes: source bytes right after [src, src + bytes) that are issued next (an awaited run's
  // later chunks), whose staging copies may be queued ahead too.
  status enqueue_locked_(const void* src, void* dst, size_t bytes, const chunk_fn& f, bool src_pinned, bool dst_pinned,
                         size_t more_bytes = 0) {
    // Staging slabs are taken once and kept: the slot ledger's and the ring's waits cover them
    // across calls, whereas slabs handed back to the pool between calls could come back in
    // another order while the previous call's copies still use them.
    if (!src_pinned) BATON_TRY(take_ring_());
    if (!dst_pinned) BATON_TRY(take_staging_(staging_out_, size_t(opt_.buffers)));
    status st = enqueue_chunks(src, dst, bytes, f, ev_.data(), slots_, src_pinned, dst_pinned, more_bytes);
    if (!st.ok()) drop_ahead_();  // copies queued for chunks this call will not issue read src
    return st;
  }

  status take_staging_(std::vector<pinned_buffer>& slabs, size_t count) {
    while (slabs.size() < count) {
      auto b = staging_->acquire(staging_->slab_bytes());
      if (!b.ok()) return b.error().with_context("pipeline: staging slabs");
      slabs.push_back(std::move(b.value()));
    }
    return {};
  }
  // The input ring: K + D slabs, an event each, and the pool that fills them.
  status take_ring_() {
    const size_t R = size_t(opt_.buffers) + ahead_chunks_();
    BATON_TRY(take_staging_(ring_, R));
    while (ring_free_.size() < R) {
      auto e = event::create();
      if (!e.ok()) return e.error().with_context("pipeline: staging ring events");
      ring_free_.push_back(std::move(e.value()));
    }
    if (!in_pool_) in_pool_ = std::make_unique<CopyPool>(staging_threads_(), [dev = device_] { (void)cudaSetDevice(dev); });
    return {};
  }
  // D: chunks whose staging copies may be queued ahead of the one being issued.
  size_t ahead_chunks_() const {
    return opt_.chunk_bytes == 0 ? 0 : std::min<size_t>(16, opt_.staging_ahead_bytes / opt_.chunk_bytes);
  }
  // Queues the copy of source chunk [p, p + len) into the ring's next slab, to start once that
  // slab's previous H2D is done. That H2D was issued already: the slab was last assigned R = K + D
  // assignments ago, and ahead_ holds at most D unissued ones (the chunk being issued and D after
  // it), so the one R ago is issued or dropped, and the event's latest record is its H2D's (or an
  // older one, or none: cudaEventSynchronize returns at once).
  void submit_fill_(const char* p, size_t len) {
    const size_t s = size_t(ring_next_++ % ring_.size());
    cudaEvent_t freed = ring_free_[s].get();
    auto fill = in_pool_->submit(ring_[s].data(), p, len, [freed] {
      return cuda_check(cudaEventSynchronize(freed), "pipeline: staging slab wait");
    });
    ahead_.push_back(staged_{p, len, s, std::move(fill)});
  }
  // The ring slab holding source chunk [p, p + len), copied: the copy queued ahead for it, or one
  // queued now. Before waiting for it, queues the copies of the chunks after it, up to D: the
  // source's next more_bytes (chunks of chunk_bytes). Queued copies that are not what is issued
  // next (another caller's enqueue() between an awaited run's chunks) are waited for and dropped.
  result<size_t> stage_in_(const char* p, size_t len, size_t more_bytes) {
    if (!ahead_.empty() && (ahead_.front().src != p || ahead_.front().len != len)) drop_ahead_();
    if (ahead_.empty()) submit_fill_(p, len);
    const size_t C = opt_.chunk_bytes, D = ahead_chunks_();
    const char* next = p + len;
    for (size_t j = 1; j < ahead_.size(); ++j) {  // queued beyond this chunk: must be the next ones
      const size_t o = (j - 1) * C;
      if (o >= more_bytes || ahead_[j].src != next + o || ahead_[j].len != std::min(C, more_bytes - o)) {
        drop_ahead_from_(j);
        break;
      }
    }
    for (size_t o = (ahead_.size() - 1) * C; ahead_.size() <= D && o < more_bytes; o += C)
      submit_fill_(next + o, std::min(C, more_bytes - o));
    staged_ cur = std::move(ahead_.front());
    ahead_.pop_front();
    BATON_TRY(cur.fill->wait());
    return cur.slab;
  }
  void drop_ahead_from_(size_t j) noexcept {
    for (size_t k = j; k < ahead_.size(); ++k) (void)ahead_[k].fill->wait();  // unused: only the wait matters
    ahead_.erase(ahead_.begin() + std::ptrdiff_t(j), ahead_.end());
  }
  void drop_ahead_() noexcept { drop_ahead_from_(0); }

  // The chunk loop of enqueue() and capture() (see the top of this file), with stage events `ev`
  // and the slot sequence `ledger` (the pipeline's own for enqueue(), a fresh one for a graph).
  // A chunk whose slot was used before waits for that previous user: the H2D for its compute
  // (which read the input slot), the compute for its D2H (which read the output slot); the
  // previous user's events are the slot's latest records because each stage's records of one
  // slot happen in sequence order on one stream. With both buffers pinned it is pure stream work
  // — copies, the compute function, event records and waits — which is what makes it
  // capturable; the staging branches (host copies, host waits, the drain thread) are
  // enqueue()-only and need ring_/staging_out_ acquired.
  [[nodiscard]] status enqueue_chunks(const void* src, void* dst, size_t bytes, const chunk_fn& f, const event* ev,
                                      SlotLedger& ledger, bool src_pinned, bool dst_pinned, size_t more_bytes = 0) {
    const int K = opt_.buffers;
    const size_t C = opt_.chunk_bytes, OC = opt_.out_chunk_bytes;
    const size_t n = (bytes + C - 1) / C;
    for (size_t i = 0; i < n; ++i) {
      const SlotLedger::chunk c = ledger.next();
      const int slot = c.slot;
      const size_t off = i * C, len = std::min(C, bytes - off), out_len = out_len_(len);
      void* din = dev_[size_t(slot)];
      void* dout = dev_[size_t(K + slot)];
      const bool reuse = c.reuses();
      // ---- host -> device
      if (reuse) BATON_TRY(h2d_.ref().wait(compute_done(ev, slot)));
      const void* from = static_cast<const char*>(src) + off;
      size_t slab = 0;
      if (!src_pinned) {
        BATON_TRY_ASSIGN(slab, stage_in_(static_cast<const char*>(from), len, bytes - off - len + more_bytes));
        from = ring_[slab].data();
      }
      BATON_TRY(cuda_check(cudaMemcpyAsync(din, from, len, cudaMemcpyHostToDevice, h2d_.get()), "pipeline: H2D"));
      BATON_TRY(cuda_check(cudaEventRecord(h2d_done(ev, slot), h2d_.get()), "cudaEventRecord"));
      // The slab may be refilled once this H2D is done.
      if (!src_pinned) BATON_TRY(cuda_check(cudaEventRecord(ring_free_[slab].get(), h2d_.get()), "cudaEventRecord"));
      // ---- compute
      BATON_TRY(compute_.ref().wait(h2d_done(ev, slot)));
      if (reuse) BATON_TRY(compute_.ref().wait(d2h_done(ev, slot)));
      BATON_TRY(f(device_span<const std::byte>(static_cast<const std::byte*>(din), len),
                  device_span<std::byte>(static_cast<std::byte*>(dout), out_len), compute_.ref())
                    .with_context("pipeline: compute of chunk " + std::to_string(i)));
      BATON_TRY(cuda_check(cudaEventRecord(compute_done(ev, slot), compute_.get()), "cudaEventRecord"));
      // ---- device -> host
      BATON_TRY(d2h_.ref().wait(compute_done(ev, slot)));
      char* to = static_cast<char*>(dst) + i * OC;
      if (!dst_pinned) {
        // The drain job that last read this slot's output slab (any earlier call's) has copied it out.
        BATON_TRY(wait_drained(ledger.drain_ticket(slot)));
        BATON_TRY(cuda_check(cudaMemcpyAsync(staging_out_[size_t(slot)].data(), dout, out_len, cudaMemcpyDeviceToHost, d2h_.get()),
                             "pipeline: D2H"));
      } else {
        BATON_TRY(cuda_check(cudaMemcpyAsync(to, dout, out_len, cudaMemcpyDeviceToHost, d2h_.get()), "pipeline: D2H"));
      }
      BATON_TRY(cuda_check(cudaEventRecord(d2h_done(ev, slot), d2h_.get()), "cudaEventRecord"));
      if (!dst_pinned) ledger.set_drain_ticket(slot, queue_drain(d2h_done(ev, slot), slot, to, out_len));
    }
    return {};
  }

  // Queues a staged output (ready once `ready` completes) for the drain thread; returns its
  // ticket (1-based, in push order).
  uint64_t queue_drain(cudaEvent_t ready, int slot, char* to, size_t len) {
    if (!drain_) {
      drain_team_ = std::make_unique<CopyTeam>(staging_threads_());
      drain_ = std::make_unique<serial_worker>([dev = device_] { (void)cudaSetDevice(dev); });
    }
    const void* from = staging_out_[size_t(slot)].data();
    return drain_->push([team = drain_team_.get(), ready, from, to, len] {
      BATON_TRY(cuda_check(cudaEventSynchronize(ready), "pipeline: output drain wait"));
      team->copy(to, from, len);
      return status{};
    });
  }
  // Blocks until the drain thread has finished the first `ticket` jobs (0: returns at once).
  status wait_drained(uint64_t ticket) { return drain_ && ticket ? drain_->wait_until(ticket) : status{}; }
  status drain_pending_outputs() { return drain_ ? drain_->wait_until(drain_->pushed()) : status{}; }


  int staging_threads_() const {
    if (opt_.staging_threads > 0) return opt_.staging_threads;
    return std::clamp(int(std::thread::hardware_concurrency()), 1, 64);
  }

  pipeline_options opt_{};
  stream h2d_, compute_, d2h_;
  std::vector<event> ev_;
  std::vector<void*> dev_;
  std::unique_ptr<pinned_pool> staging_;
  std::vector<pinned_buffer> staging_out_;  // K output slabs (pageable dst)
  // Pageable input staging ahead of the GPU (stage_in_): R = K + D slabs, an event per slab
  // recorded after the H2D that read it, the copies queued and not yet issued (in issue order,
  // under *use_), and how many slab assignments were made (slab = ring_next_ % R).
  struct staged_ {
    const char* src;
    size_t len;
    size_t slab;
    std::shared_ptr<CopyPool::copy> fill;
  };
  std::vector<pinned_buffer> ring_;
  std::vector<event> ring_free_;
  std::deque<staged_> ahead_;
  uint64_t ring_next_ = 0;
  std::unique_ptr<serial_worker> drain_;   // copies staged outputs to a pageable dst, in order
  std::unique_ptr<CopyTeam> drain_team_;  // the drain's copies (created with it)
  std::unique_ptr<CopyPool> in_pool_;  // the input staging copies (created at the first pageable input)
  SlotLedger slots_;                   // enqueue()'s chunk sequence, over the pipeline's life
  int device_ = 0;                      // the device the pipeline was created on
  // Serializes enqueue(), capture() and finish() between the caller's threads and the runner
  // thread (each object its own; not moved).
  std::unique_ptr<std::mutex> use_ = std::make_unique<std::mutex>();
  std::unique_ptr<serial_worker> runner_;  // run()'s chunks (created at the first run())
  std::vector<event> run_events_;          // run()'s per-chunk events (runner thread only; grown, reused)
};

}  // namespace baton::async
