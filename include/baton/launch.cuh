// baton/launch.cuh — launching a chain (CUDA host code).
//
// PDL mode (Hopper): every stage on ONE stream. Stage 0 is launched normally, so it starts after
// all earlier work on the stream, including the previous iteration's last stage (no
// write-after-read hazard on the chain's buffers). Stages 1.. are launched with programmatic
// stream serialization: their CTAs become eligible once every CTA of the previous stage has run
// griddepcontrol.launch_dependents (Stage::tile() does it first thing) or exited. So a spinning
// consumer never holds an SM that an unscheduled producer CTA needs. Consumers never call
// griddepcontrol.wait before their tile waits. The whole thing is capturable in a CUDA graph;
// epochs advance on the device, so replays need no host work.
//
// Wait-kernel mode (GPUs without PDL, cuSync-style): stage k>0 runs on its own stream behind a
// one-thread kernel that spins until every CTA of stage k-1 has taken its ticket.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "baton/chain.hpp"
#include "baton/device/flags.hpp"
#include "baton/error_record.hpp"
#include "baton/status.hpp"

namespace baton {

[[nodiscard]] inline status cuda_status(cudaError_t e, const std::string& what) {
  if (e == cudaSuccess) return {};
  return status(errc::cuda_error, what + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")", int(e));
}

#define BATON_CUDA_TRY(expr) BATON_TRY(::baton::cuda_status((expr), #expr))

// Fails with errc::no_device when no CUDA device is usable.
[[nodiscard]] inline status require_device() {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    (void)cudaGetLastError();
    return status(errc::no_device, std::string("no CUDA device is available (") +
                                       (e == cudaSuccess ? "0 devices" : cudaGetErrorString(e)) + ")");
  }
  return {};
}

// Writes the initial workspace for epoch `start_epoch` (stream-ordered).
[[nodiscard]] inline status initialize_workspace(const Chain& chain, void* workspace, size_t bytes,
                                                 cudaStream_t stream, uint32_t start_epoch = 0) {
  if (workspace == nullptr) return status(errc::workspace_too_small, "initialize_workspace: workspace is null");
  if (bytes < chain.workspace_bytes())
    return status(errc::workspace_too_small, "initialize_workspace: " + std::to_string(bytes) +
                                                 " bytes given, the chain needs " +
                                                 std::to_string(chain.workspace_bytes()));
  std::vector<unsigned char> image;
  BATON_TRY(chain.workspace_image(start_epoch, image));
  // From pageable memory: returns once `image` has been staged, so it may go out of scope.
  BATON_CUDA_TRY(cudaMemcpyAsync(workspace, image.data(), image.size(), cudaMemcpyHostToDevice, stream));
  return {};
}

// Reads the error record after `stream` drains (per-stream sync, never device-wide) and turns a
// watchdog report into a status naming stage, tile, semaphore, expected/seen values and epoch.
[[nodiscard]] inline status check_errors(const Chain& chain, const void* workspace, cudaStream_t stream) {
  ErrorRecord rec{};
  BATON_CUDA_TRY(cudaMemcpyAsync(&rec, static_cast<const unsigned char*>(workspace) + Chain::error_offset(),
                                 sizeof(rec), cudaMemcpyDeviceToHost, stream));
  BATON_CUDA_TRY(cudaStreamSynchronize(stream));
  return chain.error_status(rec);
}

// Clears the error record (stream-ordered) so the chain can run again after a reported error.
[[nodiscard]] inline status clear_errors(void* workspace, cudaStream_t stream) {
  BATON_CUDA_TRY(cudaMemsetAsync(static_cast<unsigned char*>(workspace) + Chain::error_offset(), 0,
                                 sizeof(ErrorRecord), stream));
  return {};
}

// One stage's kernel launch, type-erased.
struct StageLaunch {
  dim3 grid{};
  dim3 block{};
  size_t smem = 0;
  std::function<cudaError_t(const cudaLaunchConfig_t&)> launch;
  int ctas_per_tile = 1;  // > 1: split-K kernels, each tile's k range shared by this many CTAs
  // Persistent kernels: fewer CTAs than tiles, each looping over tiles without tickets (stages
  // without edges only; e.g. sm90::GemmArguments::persistent_ctas).
  bool loops_over_tiles = false;
  // With loops_over_tiles: the most CTAs the kernel can use; 0 means the stage's tiles. Stream-K
  // kernels share k-blocks, so up to tiles x k-blocks (sm90::GemmArguments::stream_k).
  int64_t max_ctas = 0;
};

template <class... KParams, class... Args>
[[nodiscard]] StageLaunch make_launch(void (*kernel)(KParams...), dim3 grid, dim3 block, size_t smem,
                                      Args... args) {
  StageLaunch l;
  l.grid = grid;
  l.block = block;
  l.smem = smem;
  l.launch = [=](const cudaLaunchConfig_t& cfg) { return cudaLaunchKernelEx(&cfg, kernel, args...); };
  return l;
}

namespace detail {
[[nodiscard]] inline status check_launches(Chain& chain, const std::vector<StageLaunch>& launches) {
#if BATON_CHECK_BEFORE_LAUNCH
  BATON_TRY(chain.validate());
#else
  if (!chain.validated()) BATON_TRY(chain.validate());
#endif
  if (int(launches.size()) != chain.num_stages())
    return status(errc::invalid_argument, "launch_chain: " + std::to_string(launches.size()) +
                                              " launches given for a chain of " + std::to_string(chain.num_stages()) +
                                              " stages");
  for (int i = 0; i < chain.num_stages(); ++i) {
    const auto& l = launches[size_t(i)];
    const int64_t ctas = int64_t(l.grid.x) * l.grid.y * l.grid.z;
    if (l.ctas_per_tile < 1)
      return status(errc::invalid_argument, "stage '" + chain.stage(i).name + "': ctas_per_tile must be >= 1, got " +
                                                std::to_string(l.ctas_per_tile));
    if (l.loops_over_tiles) {
      const int64_t most = l.max_ctas > 0 ? l.max_ctas : chain.stage(i).grid.size();
      if (ctas < 1 || ctas > most || l.ctas_per_tile != 1)
        return status(errc::invalid_argument, "stage '" + chain.stage(i).name + "': a persistent launch needs 1 to " +
                                                  std::to_string(most) +
                                                  (l.max_ctas > 0 ? " CTAs (max_ctas)" : " CTAs (its tiles)") +
                                                  " and one CTA per tile-part, got " + std::to_string(ctas) + " CTAs");
    } else if (ctas != chain.stage(i).grid.size() * int64_t(l.ctas_per_tile))
      return status(errc::invalid_argument,
                    "stage '" + chain.stage(i).name + "': launched with " + std::to_string(ctas) +
                        " CTAs but its grid has " + std::to_string(chain.stage(i).grid.size()) + " tiles x " +
                        std::to_string(l.ctas_per_tile) + " CTAs per tile (each CTA takes exactly one ticket)");
    if (!l.launch) return status(errc::invalid_argument, "stage '" + chain.stage(i).name + "': empty launch");
  }
  return {};
}
}  // namespace detail

enum class LaunchSchedule {
  pdl,     // stages 1.. launched with programmatic stream serialization: they overlap
  serial,  // every stage waits for the previous one to finish (debugging, overhead measurement)
};
using launch_schedule [[deprecated("renamed LaunchSchedule, docs/naming.md")]] = LaunchSchedule;

// Launches every stage of `chain` on `stream` (with PDL unless `sched` is serial). Capturable in
// a CUDA graph.
[[nodiscard]] inline status launch_chain(Chain& chain, cudaStream_t stream, const std::vector<StageLaunch>& launches,
                                         LaunchSchedule sched = LaunchSchedule::pdl) {
  BATON_TRY(detail::check_launches(chain, launches));
  for (int i = 0; i < chain.num_stages(); ++i) {
    const auto& l = launches[size_t(i)];
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = l.grid;
    cfg.blockDim = l.block;
    cfg.dynamicSmemBytes = l.smem;
    cfg.stream = stream;
    const bool pdl = i > 0 && sched == LaunchSchedule::pdl;  // stage 0 waits for everything before it
    cfg.attrs = pdl ? attr : nullptr;
    cfg.numAttrs = pdl ? 1 : 0;
    BATON_TRY(cuda_status(l.launch(cfg), "launching stage " + std::to_string(i) + " '" + chain.stage(i).name + "'"));
  }
  return {};
}

// Launches one stage by itself on `stream`, without PDL, so it starts after everything before it
// on the stream (as stage 0 of launch_chain does). For tests and measurements of one stage in
// isolation; a chain is launched with launch_chain, which also checks the launches against it.
// The stage keeps its chain's protocol: its CTAs take tickets and wait and post as bound, and
// each launch is one epoch of the stage when it has the stage's tiles x ctas_per_tile CTAs (not
// checked here). So launch a producer's epoch e before any consumer epoch e that waits on it: a
// consumer launched first on the same stream waits for a producer that cannot start, and its
// waits never return (until the bind's watchdog, where enabled, reports them).
[[nodiscard]] inline status launch_stage(const StageLaunch& l, cudaStream_t stream) {
  if (!l.launch) return status(errc::invalid_argument, "launch_stage: empty launch");
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = l.grid;
  cfg.blockDim = l.block;
  cfg.dynamicSmemBytes = l.smem;
  cfg.stream = stream;
  return cuda_status(l.launch(cfg), "launching a stage alone");
}

// ---- wait-kernel fallback ----------------------------------------------------------------------

// Spins until every CTA of the producer stage has taken its ticket for the consumer's epoch.
// (A template so that the header can be included by several translation units.)
template <int = 0>
__global__ void wait_for_stage_start(const uint64_t* producer_ticket, uint64_t producer_tiles,
                                     const uint64_t* consumer_ticket, uint64_t consumer_tiles,
                                     const ErrorRecord* error) {
  const uint64_t epoch = device::load_relaxed_gpu(consumer_ticket) / consumer_tiles;
  const uint64_t target = (epoch + 1) * producer_tiles;
  device::Backoff backoff;
  while (device::load_relaxed_gpu(producer_ticket) < target) {
    if (device::load_relaxed_gpu(&error->code) != 0) return;
    backoff.pause();
  }
}

// Streams and events the fallback needs, created once and reused (never in the launch path).
class FallbackResources {
 public:
  FallbackResources() = default;
  FallbackResources(const FallbackResources&) = delete;
  FallbackResources& operator=(const FallbackResources&) = delete;
  FallbackResources(FallbackResources&& o) noexcept { swap(o); }
  FallbackResources& operator=(FallbackResources&& o) noexcept {
    swap(o);
    return *this;
  }
  ~FallbackResources() {
    for (auto s : streams_) (void)cudaStreamDestroy(s);
    for (auto e : events_) (void)cudaEventDestroy(e);
  }
  [[nodiscard]] static result<FallbackResources> create(int num_stages) {
    FallbackResources r;
    for (int i = 0; i < num_stages; ++i) {
      cudaStream_t s;
      cudaEvent_t e;
      BATON_TRY(cuda_status(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags"));
      r.streams_.push_back(s);
      BATON_TRY(cuda_status(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags"));
      r.events_.push_back(e);
    }
    cudaEvent_t start;
    BATON_TRY(cuda_status(cudaEventCreateWithFlags(&start, cudaEventDisableTiming), "cudaEventCreateWithFlags"));
    r.events_.push_back(start);
    return result<FallbackResources>(std::move(r));
  }
  [[nodiscard]] int size() const { return int(streams_.size()); }
  [[nodiscard]] cudaStream_t stream(int i) const { return streams_[size_t(i)]; }
  [[nodiscard]] cudaEvent_t done(int i) const { return events_[size_t(i)]; }
  [[nodiscard]] cudaEvent_t start() const { return events_.back(); }

 private:
  void swap(FallbackResources& o) noexcept {
    streams_.swap(o.streams_);
    events_.swap(o.events_);
  }
  std::vector<cudaStream_t> streams_;
  std::vector<cudaEvent_t> events_;
};

// Launches the chain cuSync-style: stage 0 on `stream`, stage k>0 on its own stream behind
// wait_for_stage_start; `stream` then joins every side stream.
[[nodiscard]] inline status launch_chain_wait_kernel(Chain& chain, const void* workspace, cudaStream_t stream,
                                                     const FallbackResources& res,
                                                     const std::vector<StageLaunch>& launches) {
  BATON_TRY(detail::check_launches(chain, launches));
  if (res.size() < chain.num_stages())
    return status(errc::invalid_argument, "launch_chain_wait_kernel: FallbackResources for " +
                                              std::to_string(res.size()) + " stages, chain has " +
                                              std::to_string(chain.num_stages()));
  const auto* base = static_cast<const unsigned char*>(workspace);
  auto ticket = [&](int s) { return reinterpret_cast<const uint64_t*>(base + chain.ticket_offset(s)); };
  const auto* err = reinterpret_cast<const ErrorRecord*>(base + Chain::error_offset());
  BATON_CUDA_TRY(cudaEventRecord(res.start(), stream));
  for (int i = 0; i < chain.num_stages(); ++i) {
    const auto& l = launches[size_t(i)];
    cudaStream_t s = i == 0 ? stream : res.stream(i);
    if (i > 0) {
      BATON_CUDA_TRY(cudaStreamWaitEvent(s, res.start(), 0));
      wait_for_stage_start<><<<1, 1, 0, s>>>(
          ticket(i - 1), uint64_t(chain.stage(i - 1).grid.size()) * uint64_t(launches[size_t(i - 1)].ctas_per_tile),
          ticket(i), uint64_t(chain.stage(i).grid.size()) * uint64_t(l.ctas_per_tile), err);
      BATON_TRY(cuda_status(cudaGetLastError(), "launching wait_for_stage_start for stage " + std::to_string(i)));
    }
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = l.grid;
    cfg.blockDim = l.block;
    cfg.dynamicSmemBytes = l.smem;
    cfg.stream = s;
    BATON_TRY(cuda_status(l.launch(cfg), "launching stage " + std::to_string(i) + " '" + chain.stage(i).name + "'"));
  }
  for (int i = 1; i < chain.num_stages(); ++i) {
    BATON_CUDA_TRY(cudaEventRecord(res.done(i), res.stream(i)));
    BATON_CUDA_TRY(cudaStreamWaitEvent(stream, res.done(i), 0));
  }
  return {};
}

}  // namespace baton
