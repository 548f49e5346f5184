// baton/ops/op_support.cuh — what every chain op (ops::Mlp, ops::Conv2dChain, ops::Attention) does with
// CUDA while it builds and tunes itself: its zeroed workspaces, the chain's workspace, the time of a
// pass, and the timing of tuning candidates.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "baton/async/memory.cuh"
#include "baton/async/stream.cuh"
#include "baton/chain.hpp"
#include "baton/launch.cuh"
#include "baton/ops/tuner.hpp"
#include "baton/status.hpp"

namespace baton::ops::detail {

// The SM count an op plans for: `requested` when > 0, else the current device's.
[[nodiscard]] inline result<int> plan_sms(int requested) {
  if (requested > 0) return requested;
  BATON_TRY(require_device());
  int dev = 0, sms = 0;
  BATON_CUDA_TRY(cudaGetDevice(&dev));
  BATON_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return sms;
}

// The peak HBM bandwidth the op's cost model scales its memory terms with (mlp_cost_model_for_hbm),
// in bytes per microsecond: `requested` when > 0, else the current device's memory clock x bus width
// x 2 (double data rate) from its attributes; 0 (the model as fitted) when there is no device or it
// reports neither. Never an error: the bandwidth only refines the plan, and a plan for a given SM
// count must not need a GPU (it may refuse a request before anything runs; tests/consumer/mlp.cu).
[[nodiscard]] inline double plan_hbm_bytes_per_us(double requested) noexcept {
  if (requested > 0) return requested;
  int dev = 0, khz = 0, bits = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&bits, cudaDevAttrGlobalMemoryBusWidth, dev) != cudaSuccess || khz <= 0 || bits <= 0) {
    (void)cudaGetLastError();  // no device, or an unsupported attribute: not an error of the op's
    return 0.0;
  }
  return double(khz) * 1e3 * (double(bits) / 8.0) * 2.0 / 1e6;
}

// The device part of an op's tuning-cache key (tune_device_key, tuner.hpp) for the current device.
[[nodiscard]] inline result<std::string> current_tune_device_key(int sms) {
  int dev = 0;
  cudaDeviceProp prop{};
  BATON_CUDA_TRY(cudaGetDevice(&dev));
  BATON_CUDA_TRY(cudaGetDeviceProperties(&prop, dev));
  return tune_device_key(prop.name, prop.major, prop.minor, sms);
}

// An op's workspaces are async::device_allocation: tied to no stream (an op runs on whichever stream
// each enqueue names, and may outlive them all), freed by cudaFree when the op is destroyed.

// `bytes` of device memory zeroed on `stream` into `out` (empty for 0 bytes); `what` names it in errors.
[[nodiscard]] inline status alloc_zeroed(async::device_allocation& out, size_t bytes, cudaStream_t stream, const char* what) {
  auto a = async::device_allocation::create(bytes);
  if (!a.ok()) return a.error().with_context(std::string("allocating the ") + what);
  out = std::move(a.value());
  if (bytes == 0) return {};
  return cuda_status(cudaMemsetAsync(out.data(), 0, bytes, stream), std::string("zeroing the ") + what);
}

// The chain's semaphore workspace, allocated into `ws` and initialized on `stream`.
[[nodiscard]] inline status alloc_chain_workspace(Chain& chain, async::device_allocation& ws, cudaStream_t stream) {
  auto a = async::device_allocation::create(chain.workspace_bytes());
  if (!a.ok()) return a.error().with_context("allocating the chain's semaphore workspace");
  ws = std::move(a.value());
  return initialize_workspace(chain, ws.data(), chain.workspace_bytes(), stream);
}

// Mean microseconds of one pass of `op` (op.enqueue(stream)) over `iters` timed passes after `warm`
// untimed ones, between two events, then op.check_errors(stream): a chain that failed (a watchdog)
// is an error, not a time.
template <class Op>
[[nodiscard]] result<double> mean_pass_us(Op& op, cudaStream_t stream, int iters, int warm) {
  BATON_TRY_ASSIGN(const async::event a, async::event::create(/*timing=*/true));
  BATON_TRY_ASSIGN(const async::event b, async::event::create(/*timing=*/true));
  float ms = 0;
  status st;
  for (int i = 0; i < warm && st.ok(); ++i) st = op.enqueue(stream);
  // Raw records: an op takes any cudaStream_t, 0 included (CUDA's default stream as the program was
  // compiled: legacy or per-thread), which async::event::record refuses as an empty baton stream.
  if (st.ok()) st = cuda_status(cudaEventRecord(a, stream), "cudaEventRecord");
  for (int i = 0; i < iters && st.ok(); ++i) st = op.enqueue(stream);
  if (st.ok()) st = cuda_status(cudaEventRecord(b, stream), "cudaEventRecord");
  if (st.ok()) st = b.synchronize();
  if (st.ok()) st = cuda_status(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
  if (st.ok()) st = op.check_errors(stream);
  if (!st.ok()) return st;
  return 1000.0 * double(ms) / double(iters > 0 ? iters : 1);
}

// What time_candidates measured: the candidate tuning_choice keeps and every candidate's median.
struct TunedChoice {
  size_t best = 0;
  std::vector<double> medians;  // us per pass, per candidate
  int warm = 0, rounds = 0, per_round = 0;
};

// Times the candidate ops (op.enqueue / op.check_errors) on `stream` the way every op's tuning does:
// warm_us of warm-up passes of the first (at least 3, at most 2000), then 5 interleaved rounds of
// tune_iters / 5 passes each,
// the median round per candidate; the first candidate (the plan) is kept unless another is > 2%
// faster (tuning_choice). `name(i)` names candidate i in errors.
template <class Op, class Name>
[[nodiscard]] result<TunedChoice> time_candidates(std::vector<std::unique_ptr<Op>>& ops, cudaStream_t stream,
                                                  int tune_iters, Name name, double warm_us = 30'000.0) {
  if (ops.empty()) return status(errc::invalid_argument, "tuning: no candidates");
  auto one = mean_pass_us(*ops[0], stream, 1, 3);
  if (!one.ok()) return one.error().with_context("tuning warm-up");
  TunedChoice c;
  c.warm = int(std::min(2000.0, std::max(3.0, warm_us / std::max(one.value(), 1.0))));
  BATON_TRY(mean_pass_us(*ops[0], stream, c.warm, 0).error().with_context("tuning warm-up"));
  c.rounds = 5;
  c.per_round = std::max(1, (tune_iters + c.rounds - 1) / c.rounds);
  std::vector<std::vector<double>> rounds(ops.size());
  for (int r = 0; r < c.rounds; ++r)
    for (size_t i = 0; i < ops.size(); ++i) {
      auto us = mean_pass_us(*ops[i], stream, c.per_round, 1);
      if (!us.ok()) return us.error().with_context("tuning candidate " + name(i));
      rounds[i].push_back(us.value());
    }
  c.best = tuning_choice(rounds, c.medians);
  return c;
}

}  // namespace baton::ops::detail
