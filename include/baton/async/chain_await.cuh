// baton/async/chain_await.cuh — await a baton chain like any other GPU work.
//
//   async::chain_runner run(chain, ws, ws_bytes);          // once: pins a small error-record buffer
//   status s = co_await run(ctx, stream, launches);         // launch (PDL), then await; watchdog
//                                                           // reports come back as the status
#pragma once

#include <cuda_runtime.h>

#include <utility>
#include <vector>

#include "baton/async/cuda_await.cuh"
#include "baton/async/task.hpp"
#include "baton/chain.hpp"
#include "baton/launch.cuh"

namespace baton::async {

class chain_runner {
 public:
  chain_runner(Chain& chain, void* workspace, size_t workspace_bytes)
      : chain_(&chain), ws_(workspace), bytes_(workspace_bytes) {}
  chain_runner(const chain_runner&) = delete;
  chain_runner& operator=(const chain_runner&) = delete;
  ~chain_runner() {
    if (record_) (void)cudaFreeHost(record_);
  }

  // Launches every stage on `s` and completes when the chain has finished, with the chain's
  // error record turned into a status (watchdog reports name stage, tile and semaphore).
  [[nodiscard]] task<status> operator()(gpu_context& ctx, stream_ref s, std::vector<StageLaunch> launches) {
    if (status u = s.usable("chain_runner"); !u.ok()) co_return u;
    if (record_ == nullptr) {
      void* p = nullptr;
      status st = cuda_check(cudaHostAlloc(&p, sizeof(ErrorRecord), cudaHostAllocDefault), "cudaHostAlloc (error record)");
      if (!st.ok()) co_return st;
      record_ = static_cast<ErrorRecord*>(p);
    }
    if (bytes_ < chain_->workspace_bytes())
      co_return status(errc::workspace_too_small, "chain_runner: workspace of " + std::to_string(bytes_) +
                                                      " bytes, the chain needs " + std::to_string(chain_->workspace_bytes()));
    status st = launch_chain(*chain_, s, launches);
    if (!st.ok()) co_return st;
    st = cuda_check(cudaMemcpyAsync(record_, static_cast<unsigned char*>(ws_) + Chain::error_offset(),
                                    sizeof(ErrorRecord), cudaMemcpyDeviceToHost, s),
                    "cudaMemcpyAsync (error record)");
    if (!st.ok()) co_return st;
    st = co_await done(ctx, s);
    if (!st.ok()) co_return st;
    co_return chain_->error_status(*record_);
  }

 private:
  Chain* chain_;
  void* ws_;
  size_t bytes_;
  ErrorRecord* record_ = nullptr;
};

}  // namespace baton::async
