// baton/ops/op_support.cuh — what every chain op (ops::Mlp, ops::Conv2dChain) does with CUDA while it
// builds and tunes itself: its zeroed workspaces, the chain's workspace, and the time of a pass.
#pragma once

#include <cuda_runtime.h>

#include <string>

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

// The device part of an op's tuning-cache key (tune_device_key, tuner.hpp) for the current device.
[[nodiscard]] inline result<std::string> current_tune_device_key(int sms) {
  int dev = 0;
  cudaDeviceProp prop{};
  BATON_CUDA_TRY(cudaGetDevice(&dev));
  BATON_CUDA_TRY(cudaGetDeviceProperties(&prop, dev));
  return tune_device_key(prop.name, prop.major, prop.minor, sms);
}

// `bytes` of device memory zeroed on `stream` (nothing for 0 bytes); `what` names it in errors.
[[nodiscard]] inline status alloc_zeroed(void*& p, size_t bytes, cudaStream_t stream, const char* what) {
  if (bytes == 0) return {};
  BATON_TRY(cuda_status(cudaMalloc(&p, bytes), std::string("cudaMalloc(") + what + ")"));
  return cuda_status(cudaMemsetAsync(p, 0, bytes, stream), std::string("zeroing the ") + what);
}

// The chain's semaphore workspace, allocated and initialized on `stream`.
[[nodiscard]] inline status alloc_chain_workspace(Chain& chain, void*& ws, cudaStream_t stream) {
  BATON_CUDA_TRY(cudaMalloc(&ws, chain.workspace_bytes()));
  return initialize_workspace(chain, ws, chain.workspace_bytes(), stream);
}

// Mean microseconds of one pass of `op` (op.enqueue(stream)) over `iters` timed passes after `warm`
// untimed ones, between two events, then op.check_errors(stream): a chain that failed (a watchdog)
// is an error, not a time.
template <class Op>
[[nodiscard]] result<double> mean_pass_us(Op& op, cudaStream_t stream, int iters, int warm) {
  cudaEvent_t a = nullptr, b = nullptr;
  BATON_CUDA_TRY(cudaEventCreate(&a));
  status st = cuda_status(cudaEventCreate(&b), "cudaEventCreate");
  float ms = 0;
  for (int i = 0; i < warm && st.ok(); ++i) st = op.enqueue(stream);
  if (st.ok()) st = cuda_status(cudaEventRecord(a, stream), "cudaEventRecord");
  for (int i = 0; i < iters && st.ok(); ++i) st = op.enqueue(stream);
  if (st.ok()) st = cuda_status(cudaEventRecord(b, stream), "cudaEventRecord");
  if (st.ok()) st = cuda_status(cudaEventSynchronize(b), "cudaEventSynchronize (tuning)");
  if (st.ok()) st = cuda_status(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
  if (st.ok()) st = op.check_errors(stream);
  (void)cudaEventDestroy(a);
  if (b) (void)cudaEventDestroy(b);
  if (!st.ok()) return st;
  return 1000.0 * double(ms) / double(iters > 0 ? iters : 1);
}

}  // namespace baton::ops::detail
