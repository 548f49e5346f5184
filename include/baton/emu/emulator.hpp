// baton/emu/emulator.hpp — CPU emulator: runs a chain's stages with CTAs as host threads.
//
// Host only (std::thread), no CUDA. The kernel bodies call the very same baton::Stage objects
// (tile() / wait() / post()) that the GPU runs, bound by Chain::bind() onto a host-memory
// workspace made by chain.workspace_image(). device/flags.hpp falls back to std::atomic_ref on the
// host, so the emulator exercises the real protocol: tickets, epochs, semaphores, the watchdog.
//
//   baton::emu::Emulator emu({.sm_slots = 4, .co_schedule = true, .seed = 7, .max_delay_us = 50});
//   std::vector<unsigned char> ws;
//   BATON_TRY(chain.workspace_image(0, ws));
//   auto sa = chain.bind(a, ws.data(), ws.size(), baton::outs(e), baton::ins()).value();
//   auto sb = chain.bind(b, ws.data(), ws.size(), baton::outs(), baton::ins(e)).value();
//   BATON_TRY(emu.run_iteration(chain, ws.data(), ws.size(), {
//       {.stage = a.index, .ctas = 16, .body = [&](baton::emu::CtaContext& c) {
//          auto t = sa.tile(); c.random_delay(); /* write tile t.tile */ sa.post(t); }},
//       {.stage = b.index, .ctas = 16, .body = [&](baton::emu::CtaContext& c) {
//          auto t = sb.tile(); if (!sb.wait(t)) return; /* read, compute */ }},
//   }));
//
// Model. `sm_slots` worker threads each run one CTA at a time, to completion (a CTA that spins
// holds its slot, as on an SM). The launches of one run_iteration() are the stages of one chain
// iteration, in launch order; CTAs of a stage are dispatched in index order.
//   * co_schedule = true (what PDL gives on Hopper): CTAs of launch k become eligible only after
//     every CTA of launch k-1 has started. Every CTA a consumer waits on then holds a slot or has
//     finished, so a chain whose policies are sound cannot deadlock, whatever the slot count.
//   * co_schedule = false: CTAs of every launch are eligible at once and `dispatch` picks among
//     them; Dispatch::consumer_first (or an unlucky Dispatch::random) lets spinning consumers take
//     every slot while their producers are never scheduled: a deadlock, which the detector
//     reports instead of hanging.
// Deadlock detector: when no CTA has started or finished for deadlock_timeout_ms while CTAs
// remain, the emulator writes DeviceError::aborted into the workspace's ErrorRecord, so every
// spinning wait() returns false and the CTAs drain; CTAs not yet started are cancelled; the run
// returns errc::deadlock naming the stages and CTAs that held the slots and the ones never
// scheduled. A wait whose watchdog fired (Stage::watchdog_ns, BATON_ENABLE_WATCHDOG) makes the run
// return chain.error_status(record) (errc::watchdog_timeout, naming stage, tile and semaphore).
// After a failed run the error record stays set: re-initialize the workspace from
// workspace_image() before running again (run_iteration refuses a workspace with an error set).
//
// Bodies must return when wait() returns false (as kernels must); a body that loops forever
// without waiting cannot be stopped (threads are not killable) — poll CtaContext::aborted().
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "baton/chain.hpp"
#include "baton/error_record.hpp"
#include "baton/status.hpp"

namespace baton::emu {

// How a free slot picks among eligible CTAs.
enum class Dispatch {
  in_order,        // the earliest launch first (a single stream's FIFO)
  consumer_first,  // the latest eligible launch first (the adversarial scheduler)
  random,          // uniformly among all eligible CTAs (seeded)
};

[[nodiscard]] inline const char* to_string(Dispatch d) noexcept {
  switch (d) {
    case Dispatch::in_order: return "in-order";
    case Dispatch::consumer_first: return "consumer-first";
    case Dispatch::random: return "random";
  }
  return "unknown";
}

struct Config {
  int sm_slots = 4;                   // CTAs that run at once (worker threads)
  bool co_schedule = true;            // PDL rule: launch k waits until launch k-1 fully started
  Dispatch dispatch = Dispatch::in_order;
  uint64_t seed = 0;                  // seeds the random delays and Dispatch::random
  uint32_t max_delay_us = 0;          // CtaContext::random_delay() sleeps 0..max_delay_us
  uint32_t deadlock_timeout_ms = 500; // no CTA started or finished for this long: deadlock
};

// Counters of the last run_iteration().
struct RunStats {
  uint64_t ctas_run = 0;           // CTAs whose body ran (to completion or to an abort)
  uint64_t ctas_cancelled = 0;     // CTAs never started because the run was aborted
  uint64_t ctas_overlapped = 0;    // CTAs started while a CTA of an earlier launch still ran
  int max_slots_busy = 0;          // most CTAs running at once
  double wall_ms = 0;
  bool deadlock = false;           // the detector fired
};

// What a CTA body gets: its index, its stage, and seeded randomness.
class CtaContext {
 public:
  CtaContext(int cta, int stage, int launch, uint64_t run, uint64_t seed, uint32_t max_delay_us,
             const uint32_t* error_code) noexcept
      : cta_(cta), stage_(stage), launch_(launch), run_(run), state_(seed), max_delay_us_(max_delay_us),
        error_code_(error_code) {}

  [[nodiscard]] int cta() const noexcept { return cta_; }        // blockIdx.x within its launch
  [[nodiscard]] int stage() const noexcept { return stage_; }    // chain stage index
  [[nodiscard]] int launch() const noexcept { return launch_; }  // position in the launch list
  [[nodiscard]] uint64_t run() const noexcept { return run_; }   // the emulator's run counter

  // splitmix64, seeded from (Config::seed, run, launch, cta): reproducible per CTA.
  uint64_t next_random() noexcept {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Sleeps a random 0..max_delay_us (Config::max_delay_us); 0 yields.
  void random_delay() { random_delay(max_delay_us_); }
  void random_delay(uint32_t max_us) {
    if (max_us == 0) return;
    const uint64_t us = next_random() % (uint64_t(max_us) + 1);
    if (us == 0)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(us));
  }
  // The chain's error record is set (deadlock abort or a watchdog): stop looping.
  [[nodiscard]] bool aborted() const noexcept {
    return error_code_ != nullptr &&
           std::atomic_ref<uint32_t>(*const_cast<uint32_t*>(error_code_)).load(std::memory_order_relaxed) != 0;
  }

 private:
  int cta_, stage_, launch_;
  uint64_t run_;
  uint64_t state_;
  uint32_t max_delay_us_;
  const uint32_t* error_code_;
};

using Body = std::function<void(CtaContext&)>;

// Adapts a body taking `int cta` (or a CtaContext&) to a Body.
template <class F>
[[nodiscard]] Body make_body(F f) {
  if constexpr (std::is_invocable_v<const F&, CtaContext&>) {
    return Body(std::move(f));
  } else {
    static_assert(std::is_invocable_v<const F&, int>,
                  "baton::emu::make_body: the body must be callable as f(CtaContext&) or f(int cta)");
    return [f = std::move(f)](CtaContext& c) { f(c.cta()); };
  }
}

// One kernel launch of a chain iteration.
struct StageLaunch {
  int stage = -1;  // the chain's stage index (names in reports); -1: the position in the list
  int ctas = 0;    // grid size (CTAs); a non-persistent baton stage launches grid.size()
  Body body;       // the kernel body, run once per CTA
};

class Emulator {
 public:
  Emulator() = default;
  explicit Emulator(Config cfg) : cfg_(cfg) {}

  [[nodiscard]] const Config& config() const noexcept { return cfg_; }
  [[nodiscard]] Config& config() noexcept { return cfg_; }
  [[nodiscard]] const RunStats& last_stats() const noexcept { return stats_; }
  [[nodiscard]] uint64_t runs() const noexcept { return runs_; }                // run_iteration calls
  [[nodiscard]] uint64_t total_ctas_run() const noexcept { return total_ctas_; }

  // Runs one chain iteration: every launch, with CTAs on sm_slots threads, until all CTAs have
  // finished (ok), the detector found a deadlock (errc::deadlock), or a wait's watchdog fired
  // (errc::watchdog_timeout via chain.error_status). `workspace` is the chain's host workspace
  // the bodies' Stage objects are bound to.
  [[nodiscard]] status run_iteration(const Chain& chain, void* workspace, size_t workspace_size,
                                     const std::vector<StageLaunch>& launches);
  [[nodiscard]] status run_iteration(const Chain& chain, std::vector<unsigned char>& workspace,
                                     const std::vector<StageLaunch>& launches) {
    return run_iteration(chain, workspace.data(), workspace.size(), launches);
  }

 private:
  struct RunState;
  static std::string stage_name_(const Chain& chain, int stage);

  Config cfg_{};
  RunStats stats_{};
  uint64_t runs_ = 0;
  uint64_t total_ctas_ = 0;
};

// One iteration on a fresh emulator: emu::launch(chain, ws, {{...}, {...}}, cfg).
[[nodiscard]] inline status launch(const Chain& chain, std::vector<unsigned char>& workspace,
                                   const std::vector<StageLaunch>& launches, const Config& cfg = {}) {
  Emulator e(cfg);
  return e.run_iteration(chain, workspace, launches);
}

// ---- implementation ----------------------------------------------------------------------------

namespace detail {
inline uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
inline std::string list_ctas(const std::vector<int>& ctas, size_t max_listed = 8) {
  std::string s;
  for (size_t i = 0; i < ctas.size() && i < max_listed; ++i) s += (i ? ", " : "") + std::to_string(ctas[i]);
  if (ctas.size() > max_listed) s += ", ...";
  return s;
}
}  // namespace detail

struct Emulator::RunState {
  using clock = std::chrono::steady_clock;
  std::mutex mu;
  std::condition_variable done_cv;
  std::vector<int> ctas, dispatched, finished;
  std::vector<std::vector<int>> running;  // CTA indices holding a slot, per launch
  int64_t total = 0, total_dispatched = 0;
  int busy = 0;
  int live_workers = 0;
  bool abort = false;
  clock::time_point last_progress = clock::now();
  uint64_t rng = 0;
  uint64_t ctas_run = 0, overlapped = 0;
  int max_busy = 0;
  std::string body_error;  // first exception thrown by a body

  bool eligible(size_t k, bool co_schedule) const {
    if (dispatched[k] >= ctas[k]) return false;
    if (co_schedule)
      for (size_t j = 0; j < k; ++j)
        if (dispatched[j] < ctas[j]) return false;
    return true;
  }
  // Picks the launch of the next CTA, -1 when nothing is eligible. Caller holds mu.
  int pick(const Config& cfg) {
    const size_t n = ctas.size();
    switch (cfg.dispatch) {
      case Dispatch::in_order:
        for (size_t k = 0; k < n; ++k)
          if (eligible(k, cfg.co_schedule)) return int(k);
        return -1;
      case Dispatch::consumer_first:
        for (size_t k = n; k-- > 0;)
          if (eligible(k, cfg.co_schedule)) return int(k);
        return -1;
      case Dispatch::random: {
        int64_t pending = 0;
        for (size_t k = 0; k < n; ++k)
          if (eligible(k, cfg.co_schedule)) pending += ctas[k] - dispatched[k];
        if (pending == 0) return -1;
        rng = detail::mix64(rng);
        int64_t r = int64_t(rng % uint64_t(pending));
        for (size_t k = 0; k < n; ++k)
          if (eligible(k, cfg.co_schedule)) {
            r -= ctas[k] - dispatched[k];
            if (r < 0) return int(k);
          }
        return -1;
      }
    }
    return -1;
  }
};

inline std::string Emulator::stage_name_(const Chain& chain, int stage) {
  if (stage >= 0 && stage < chain.num_stages()) return "'" + chain.stage(stage).name + "'";
  return std::to_string(stage);
}

inline status Emulator::run_iteration(const Chain& chain, void* workspace, size_t workspace_size,
                                      const std::vector<StageLaunch>& launches) {
  using clock = RunState::clock;
  stats_ = RunStats{};
  const auto t0 = clock::now();
  // ---- arguments -------------------------------------------------------------------------------
  if (cfg_.sm_slots < 1)
    return status(errc::invalid_argument, "emulator: sm_slots must be >= 1, got " + std::to_string(cfg_.sm_slots));
  if (cfg_.deadlock_timeout_ms == 0)
    return status(errc::invalid_argument, "emulator: deadlock_timeout_ms must be >= 1");
  if (workspace == nullptr) return status(errc::workspace_too_small, "emulator: workspace is null");
  if (workspace_size < chain.workspace_bytes())
    return status(errc::workspace_too_small, "emulator: workspace has " + std::to_string(workspace_size) +
                                                 " bytes, the chain needs " + std::to_string(chain.workspace_bytes()));
  if (reinterpret_cast<uintptr_t>(workspace) % alignof(ErrorRecord) != 0)
    return status(errc::invalid_argument, "emulator: workspace must be " + std::to_string(alignof(ErrorRecord)) +
                                              "-byte aligned (atomics on its tickets and semaphores)");
  std::vector<int> stage_of(launches.size());
  for (size_t i = 0; i < launches.size(); ++i) {
    const auto& l = launches[i];
    const int s = l.stage >= 0 ? l.stage : int(i);
    const std::string what = "emulator: launch " + std::to_string(i) + " (stage " + stage_name_(chain, s) + ")";
    if (l.stage >= chain.num_stages() && chain.num_stages() > 0)
      return status(errc::invalid_argument, what + ": the chain has " + std::to_string(chain.num_stages()) + " stages");
    if (i > 0 && s <= stage_of[i - 1])
      return status(errc::invalid_argument, what + ": launches must follow the chain's stage order "
                                                   "(producers before consumers)");
    if (l.ctas < 0) return status(errc::invalid_argument, what + ": negative CTA count");
    if (l.ctas > 0 && !l.body) return status(errc::invalid_argument, what + ": no body");
    stage_of[i] = s;
  }
  auto* rec = reinterpret_cast<ErrorRecord*>(static_cast<unsigned char*>(workspace) + Chain::error_offset());
  std::atomic_ref<uint32_t> code(rec->code);
  if (code.load(std::memory_order_acquire) != 0) {
    ErrorRecord copy;
    std::memcpy(&copy, rec, sizeof copy);
    return chain.error_status(copy).with_context(
        "emulator: the workspace carries an error from an earlier run (re-initialize it from "
        "workspace_image())");
  }
  const uint64_t run = runs_++;

  // ---- workers ---------------------------------------------------------------------------------
  RunState st;
  const size_t n = launches.size();
  st.ctas.resize(n);
  st.dispatched.assign(n, 0);
  st.finished.assign(n, 0);
  st.running.resize(n);
  for (size_t i = 0; i < n; ++i) {
    st.ctas[i] = launches[i].ctas;
    st.total += launches[i].ctas;
  }
  st.rng = detail::mix64(cfg_.seed ^ detail::mix64(run + 0x5bd1e995ull));
  const Config cfg = cfg_;

  auto worker = [&] {
    std::unique_lock<std::mutex> lk(st.mu);
    for (;;) {
      if (st.abort || st.total_dispatched == st.total) break;
      const int k = st.pick(cfg);
      if (k < 0) break;  // cannot happen: the earliest launch with CTAs left is always eligible
      const int cta = st.dispatched[size_t(k)]++;
      ++st.total_dispatched;
      st.running[size_t(k)].push_back(cta);
      st.max_busy = std::max(st.max_busy, ++st.busy);
      for (int j = 0; j < k; ++j)
        if (st.finished[size_t(j)] < st.ctas[size_t(j)]) {
          ++st.overlapped;
          break;
        }
      st.last_progress = clock::now();
      lk.unlock();

      const uint64_t seed = detail::mix64(cfg.seed ^ detail::mix64((run << 24) ^ (uint64_t(k) << 20) ^ uint64_t(cta)));
      CtaContext ctx(cta, stage_of[size_t(k)], k, run, seed, cfg.max_delay_us, &rec->code);
      std::string thrown;
      try {
        launches[size_t(k)].body(ctx);
      } catch (const std::exception& e) {
        thrown = e.what();
        if (thrown.empty()) thrown = "std::exception";
      } catch (...) {
        thrown = "unknown exception";
      }

      lk.lock();
      auto& r = st.running[size_t(k)];
      r.erase(std::find(r.begin(), r.end(), cta));
      --st.busy;
      ++st.finished[size_t(k)];
      ++st.ctas_run;
      st.last_progress = clock::now();
      if (!thrown.empty() && st.body_error.empty()) {
        st.body_error = "stage " + stage_name_(chain, stage_of[size_t(k)]) + " CTA " + std::to_string(cta) +
                        " threw: " + thrown;
        st.abort = true;
        uint32_t expected = 0;
        code.compare_exchange_strong(expected, uint32_t(DeviceError::aborted), std::memory_order_relaxed);
      }
    }
    if (--st.live_workers == 0) st.done_cv.notify_all();
  };

  const int nthreads = int(std::min<int64_t>(cfg.sm_slots, std::max<int64_t>(st.total, 1)));
  std::vector<std::thread> threads;
  threads.reserve(size_t(nthreads));
  st.live_workers = nthreads;
  std::string spawn_error;
  for (int i = 0; i < nthreads; ++i) {
    try {
      threads.emplace_back(worker);
    } catch (const std::exception& e) {  // out of threads: run on the slots we got
      spawn_error = e.what();
      std::lock_guard<std::mutex> lk(st.mu);
      st.live_workers -= nthreads - i;
      break;
    }
  }
  if (threads.empty())
    return status(errc::not_supported, "emulator: cannot start a worker thread: " + spawn_error);

  // ---- monitor (this thread) -------------------------------------------------------------------
  const auto timeout = std::chrono::milliseconds(cfg.deadlock_timeout_ms);
  const auto slice = std::max(std::chrono::milliseconds(1), std::min(std::chrono::milliseconds(20), timeout / 4));
  std::string deadlock_msg;
  {
    std::unique_lock<std::mutex> lk(st.mu);
    while (st.live_workers > 0) {
      st.done_cv.wait_for(lk, slice);
      if (st.abort || st.live_workers == 0) continue;
      const int64_t remaining = st.total - int64_t(st.ctas_run);
      const auto idle = clock::now() - st.last_progress;
      if (remaining <= 0 || idle < timeout) continue;
      // Deadlock: describe who holds the slots and who never got one, then abort the chain.
      std::string held, never;
      std::vector<size_t> holders;
      for (size_t k = 0; k < n; ++k)
        if (!st.running[k].empty()) holders.push_back(k);
      const std::string slots = std::to_string(st.busy) + " of " + std::to_string(cfg.sm_slots) + " SM slots";
      if (holders.size() == 1) {
        const size_t k = holders[0];
        std::vector<int> r = st.running[k];
        std::sort(r.begin(), r.end());
        held = slots + " held by CTAs of stage " + stage_name_(chain, stage_of[k]) + " spinning (CTAs " +
               detail::list_ctas(r) + ")";
      } else {
        held = slots + " held by spinning CTAs:";
        for (size_t h = 0; h < holders.size(); ++h) {
          const size_t k = holders[h];
          std::vector<int> r = st.running[k];
          std::sort(r.begin(), r.end());
          held += (h ? ", " : " ") + std::to_string(r.size()) + " of stage " + stage_name_(chain, stage_of[k]) +
                  " (CTAs " + detail::list_ctas(r) + ")";
        }
      }
      for (size_t k = 0; k < n; ++k) {
        const int left = st.ctas[k] - st.dispatched[k];
        if (left > 0)
          never += "; " + std::to_string(left) + " CTAs of stage " + stage_name_(chain, stage_of[k]) +
                   " never scheduled";
      }
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(idle).count();
      deadlock_msg = "deadlock: " + held + never + "; no CTA started or finished for " + std::to_string(ms) +
                     " ms (" + std::to_string(st.ctas_run) + " of " + std::to_string(st.total) +
                     " CTAs finished; " + to_string(cfg.dispatch) + " dispatch, co-scheduling " +
                     (cfg.co_schedule ? "on" : "off") + "). " +
                     (cfg.co_schedule
                          ? "With co-scheduling every producer CTA was scheduled, so a wait can never be "
                            "satisfied: an unsound policy, a missing post, or a CTA that never finishes."
                          : "Without co-scheduling (PDL), consumer CTAs can occupy every slot before their "
                            "producers are scheduled; launch dependent stages with co-scheduling.");
      st.abort = true;
      uint32_t expected = 0;
      code.compare_exchange_strong(expected, uint32_t(DeviceError::aborted), std::memory_order_release);
    }
  }
  for (auto& t : threads) t.join();

  // ---- result ----------------------------------------------------------------------------------
  stats_.ctas_run = st.ctas_run;
  stats_.ctas_cancelled = uint64_t(st.total) - st.ctas_run;
  stats_.ctas_overlapped = st.overlapped;
  stats_.max_slots_busy = st.max_busy;
  stats_.deadlock = !deadlock_msg.empty();
  stats_.wall_ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
  total_ctas_ += st.ctas_run;

  ErrorRecord final_rec;
  std::memcpy(&final_rec, rec, sizeof final_rec);
  if (!st.body_error.empty()) return status(errc::invalid_argument, "emulator: " + st.body_error);
  if (final_rec.code == uint32_t(DeviceError::watchdog)) {
    status s = chain.error_status(final_rec);
    if (!deadlock_msg.empty()) s = status(s.code(), s.message() + " [also: " + deadlock_msg + "]");
    return s;
  }
  if (!deadlock_msg.empty()) return status(errc::deadlock, deadlock_msg);
  if (final_rec.code != 0) return chain.error_status(final_rec);
  return {};
}

}  // namespace baton::emu
