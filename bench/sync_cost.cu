// sync-cost: what does baton's tile protocol cost?
//
// A chain of N copy stages (each stage reads the previous stage's tile and writes its own; the
// cuSync paper's simple test) is timed four ways, each captured as a CUDA graph of R chain
// iterations and replayed:
//   pdl-graph-nosync   baseline: no baton; every stage is PDL-launched and calls
//                      griddepcontrol.wait before reading (kernel-granular PDL, the 2026 best practice)
//   graph-nosync       baseline: no baton, no PDL (plain stream order)
//   baton-tile         baton per-tile policy, PDL co-scheduling (tiles of consecutive stages overlap)
//   baton-tile-serial  baton per-tile policy, no PDL: the waits are already satisfied, so this is
//                      the protocol's pure overhead (ticket, acquire loads, release adds)
// added_us_per_consumer_tile = (variant - baseline) / consumer tiles, against pdl-graph-nosync
// for baton-tile and against graph-nosync for baton-tile-serial.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "baton/baton.cuh"
#include "baton/trace.hpp"
#include "bench_util.hpp"
#include "common/device_memory.cuh"
#include "common/graph.cuh"
#include "common/timing.cuh"

using namespace baton;

namespace {

using P = TilePolicy<footprint::Identity>;

template <bool Sync, class S>
__global__ void __launch_bounds__(256) copy_stage(S s, const float* __restrict__ in, float* __restrict__ out,
                                                  int tile_elems, float add, bool pdl_wait) {
  int tile;
  Assignment a;
  if constexpr (Sync) {
    a = s.tile();
    if (!s.wait(a)) return;
    tile = s.grid.linear(a.tile);
  } else {
    device::launch_dependents();
    if (pdl_wait) device::grid_dependency_wait();
    tile = int(blockIdx.x);
  }
  const float4* src = reinterpret_cast<const float4*>(in + int64_t(tile) * tile_elems);
  float4* dst = reinterpret_cast<float4*>(out + int64_t(tile) * tile_elems);
  for (int i = threadIdx.x; i < tile_elems / 4; i += blockDim.x) {
    float4 v = src[i];
    v.x += add; v.y += add; v.z += add; v.w += add;
    dst[i] = v;
  }
  if constexpr (Sync && S::num_outputs > 0) s.post(a);
  if constexpr (Sync && S::num_outputs == 0) s.done(a);
}

struct Args {
  int stages = 4;
  std::vector<int> tiles = {132, 528, 2112};
  int tile_elems = 4096;
  int reps = 50;
  int iters_per_graph = 20;
  std::string out_dir = ".";
  int trace_tiles = 0;  // >0: write a per-tile timeline of the baton-tile chain with this many tiles per stage
};

void usage() {
  std::printf(
      "usage: baton_bench_sync_cost [--stages N] [--tiles T1,T2,...] [--tile-elems E] [--reps R]\n"
      "                             [--iters-per-graph I] [--out-dir DIR] [--trace-tiles T]\n"
      "Times a chain of N copy stages (T tiles each, E floats per tile) with baton's per-tile sync vs.\n"
      "the same kernels without sync (PDL graph and plain graph). Writes DIR/sync-cost.csv and .json.\n"
      "--trace-tiles T also writes DIR/timeline-sync-cost.json (Perfetto) of one baton-tile chain run with T tiles per stage.\n"
      "Defaults: --stages 4 --tiles 132,528,2112 --tile-elems 4096 --reps 50 --iters-per-graph 20 --out-dir .\n");
}

bool parse(int argc, char** argv, Args& a) {
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (k == "--help" || k == "-h") {
      usage();
      std::exit(0);
    }
    const char* v = next();
    if (!v) {
      std::fprintf(stderr, "error: %s needs a value\n", k.c_str());
      return false;
    }
    if (k == "--stages") a.stages = std::atoi(v);
    else if (k == "--tile-elems") a.tile_elems = std::atoi(v);
    else if (k == "--reps") a.reps = std::atoi(v);
    else if (k == "--iters-per-graph") a.iters_per_graph = std::atoi(v);
    else if (k == "--out-dir") a.out_dir = v;
    else if (k == "--trace-tiles") a.trace_tiles = std::atoi(v);
    else if (k == "--tiles") {
      a.tiles.clear();
      for (char* t = std::strtok(const_cast<char*>(v), ","); t; t = std::strtok(nullptr, ",")) a.tiles.push_back(std::atoi(t));
    } else {
      std::fprintf(stderr, "error: unknown option %s (see --help)\n", k.c_str());
      return false;
    }
  }
  if (a.stages < 2 || a.tile_elems < 4 || a.tile_elems % 4 || a.reps < 1 || a.iters_per_graph < 1 || a.tiles.empty()) {
    std::fprintf(stderr, "error: need --stages >= 2, --tile-elems a positive multiple of 4, --reps >= 1, tiles >= 1\n");
    return false;
  }
  for (int t : a.tiles)
    if (t < 1) {
      std::fprintf(stderr, "error: --tiles entries must be >= 1\n");
      return false;
    }
  return true;
}

#define CHECK(expr)                                                                        \
  do {                                                                                     \
    status s_ = (expr);                                                                    \
    if (!s_.ok()) {                                                                        \
      std::fprintf(stderr, "error: %s: %s\n", #expr, s_.to_string().c_str());             \
      return false;                                                                        \
    }                                                                                      \
  } while (0)
#define CUDA_CHECK(expr) CHECK(cuda_status((expr), #expr))

struct Setup {
  Chain chain;
  std::vector<StageRef<RowMajor>> st;
  std::vector<EdgeRef<P>> ed;
};

// Times `record` (which enqueues one chain iteration) captured R times in a graph.
template <class F>
bool time_graph(cudaStream_t stream, int iters, int reps, F&& record, std::vector<double>& per_iter_us) {
  auto g = bench::capture_iterations(stream, iters, record);
  CHECK(g.error());
  const bench::graph_exec& ge = g.value();
  CHECK(bench::time_repetitions(stream, 3, reps, iters, [&] { return ge.launch(stream); }, per_iter_us));
  return true;
}

bool run_shape(const Args& args, int T, cudaStream_t stream, std::vector<bench::Row>& rows) {
  const int N = args.stages, E = args.tile_elems;
  const size_t elems = size_t(T) * E;
  Grid g{T, 1, 1};
  Setup su;
  for (int i = 0; i < N; ++i) su.st.push_back(su.chain.add_stage("s" + std::to_string(i), g, RowMajor{}));
  for (int i = 0; i + 1 < N; ++i) su.ed.push_back(su.chain.add_edge(su.st[size_t(i)], su.st[size_t(i) + 1], P{g, {}}, deps::one_to_one(g)));
  CHECK(su.chain.validate());

  bench::device_buffer ws_mem;
  CHECK(bench::device_alloc(ws_mem, su.chain.workspace_bytes(), stream, "workspace"));
  void* const ws = ws_mem.data();
  CHECK(initialize_workspace(su.chain, ws, su.chain.workspace_bytes(), stream));
  std::vector<bench::device_buffer> buf_mem(size_t(N) + 1);
  std::vector<float*> buf;
  for (auto& b : buf_mem) {
    CHECK(bench::device_alloc(b, elems * sizeof(float), stream, "stage buffer"));
    buf.push_back(bench::device_ptr<float>(b));
  }
  std::vector<float> src(elems);
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (auto& x : src) x = dist(rng);
  CUDA_CHECK(cudaMemcpyAsync(buf[0], src.data(), elems * 4, cudaMemcpyHostToDevice, stream));

  // baton launches (traced into per-stage TileEvent buffers when this is the traced shape)
  const bool traced = T == args.trace_tiles;
  std::vector<bench::device_buffer> trace_mem(static_cast<size_t>(N));
  std::vector<TileEvent*> trace_buf(size_t(N), nullptr);
  if (traced)
    for (int i = 0; i < N; ++i) {
      CHECK(bench::device_alloc(trace_mem[size_t(i)], size_t(T) * sizeof(TileEvent), stream, "trace"));
      trace_buf[size_t(i)] = bench::device_ptr<TileEvent>(trace_mem[size_t(i)]);
    }
  auto opt = [&](int i) {
    BindOptions o;
    o.trace = trace_buf[size_t(i)];
    return o;
  };
  std::vector<StageLaunch> sync_l, nosync_l, nosync_pdl_l;
  using S0 = Stage<RowMajor, Outputs<P>, Inputs<>>;
  using SM = Stage<RowMajor, Outputs<P>, Inputs<P>>;
  using SL = Stage<RowMajor, Outputs<>, Inputs<P>>;
  for (int i = 0; i < N; ++i) {
    const float add = i == 0 ? 0.f : 1.f;
    const dim3 grid{unsigned(T)}, block{256};
    if (i == 0) {
      auto s = su.chain.bind(su.st[0], ws, su.chain.workspace_bytes(), outs(su.ed[0]), ins(), opt(0));
      CHECK(s.error());
      sync_l.push_back(make_launch(copy_stage<true, S0>, grid, block, 0, s.value(), (const float*)buf[0], buf[1], E, add, false));
    } else if (i + 1 < N) {
      auto s = su.chain.bind(su.st[size_t(i)], ws, su.chain.workspace_bytes(), outs(su.ed[size_t(i)]), ins(su.ed[size_t(i) - 1]), opt(i));
      CHECK(s.error());
      sync_l.push_back(make_launch(copy_stage<true, SM>, grid, block, 0, s.value(), (const float*)buf[size_t(i)], buf[size_t(i) + 1], E, add, false));
    } else {
      auto s = su.chain.bind(su.st[size_t(i)], ws, su.chain.workspace_bytes(), outs(), ins(su.ed[size_t(i) - 1]), opt(i));
      CHECK(s.error());
      sync_l.push_back(make_launch(copy_stage<true, SL>, grid, block, 0, s.value(), (const float*)buf[size_t(i)], buf[size_t(i) + 1], E, add, false));
    }
    nosync_l.push_back(make_launch(copy_stage<false, S0>, grid, block, 0, S0{}, (const float*)buf[size_t(i)], buf[size_t(i) + 1], E, add, false));
    nosync_pdl_l.push_back(make_launch(copy_stage<false, S0>, grid, block, 0, S0{}, (const float*)buf[size_t(i)], buf[size_t(i) + 1], E, add, i > 0));
  }

  struct Variant {
    std::string name;
    const std::vector<StageLaunch>* l;
    LaunchSchedule sched;
    bool baseline;
  };
  std::vector<Variant> variants{{"pdl-graph-nosync", &nosync_pdl_l, LaunchSchedule::pdl, true},
                                {"graph-nosync", &nosync_l, LaunchSchedule::serial, true},
                                {"baton-tile", &sync_l, LaunchSchedule::pdl, false},
                                {"baton-tile-serial", &sync_l, LaunchSchedule::serial, false}};
  const double bytes = double(N) * double(elems) * 4.0 * 2.0;
  const double floor_us = bytes / 4.3e12 * 1e6;
  const std::string shape = "stages=" + std::to_string(N) + ";tiles=" + std::to_string((N - 1) * T) +
                            ";tiles_per_stage=" + std::to_string(T) + ";tile_elems=" + std::to_string(E);
  std::vector<bench::Row> local;
  for (const auto& v : variants) {
    // Correctness: poison every intermediate/output buffer, run one iteration, compare.
    for (int i = 1; i <= N; ++i) CUDA_CHECK(cudaMemsetAsync(buf[size_t(i)], 0xFF, elems * 4, stream));
    CHECK(launch_chain(su.chain, stream, *v.l, v.sched));
    CHECK(check_errors(su.chain, ws, stream));
    std::vector<float> out(elems);
    CUDA_CHECK(cudaMemcpyAsync(out.data(), buf[size_t(N)], elems * 4, cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    size_t bad = 0;
    for (size_t j = 0; j < elems; ++j)
      if (!(std::fabs(out[j] - (src[j] + float(N - 1))) <= 1e-5f)) ++bad;
    std::vector<double> us;
    if (!time_graph(stream, args.iters_per_graph, args.reps, [&] { return launch_chain(su.chain, stream, *v.l, v.sched); }, us))
      return false;
    CHECK(check_errors(su.chain, ws, stream));
    auto st = bench::stats(us);
    bench::Row r;
    r.workload = "sync-cost";
    r.shape = shape;
    r.variant = v.name;
    r.median_us = st.median;
    r.min_us = st.min;
    r.max_us = st.max;
    r.reps = args.reps;
    r.floor_us = floor_us;
    r.baseline = v.baseline;
    r.correct = bad == 0;
    local.push_back(r);
  }
  const double consumer_tiles = double((N - 1) * T);
  auto med = [&](const char* n) {
    for (auto& r : local)
      if (r.variant == n) return r.median_us;
    return 0.0;
  };
  for (auto& r : local) {
    double ref = r.variant == "baton-tile-serial" ? med("graph-nosync") : med("pdl-graph-nosync");
    double added = r.variant.rfind("baton-", 0) == 0 ? (r.median_us - ref) / consumer_tiles : 0.0;
    r.extra = {{"added_us_per_consumer_tile", bench::fmt(added)},
               {"added_vs", r.variant == "baton-tile-serial" ? "graph-nosync" : (r.variant == "baton-tile" ? "pdl-graph-nosync" : "-")}};
    rows.push_back(r);
  }
  if (traced) {  // one more baton-tile run, its timeline written as Perfetto JSON
    CHECK(launch_chain(su.chain, stream, sync_l, LaunchSchedule::pdl));
    CHECK(check_errors(su.chain, ws, stream));
    std::vector<std::vector<TileEvent>> ev(static_cast<size_t>(N), std::vector<TileEvent>(static_cast<size_t>(T)));
    for (int i = 0; i < N; ++i)
      CUDA_CHECK(cudaMemcpy(ev[size_t(i)].data(), trace_buf[size_t(i)], size_t(T) * sizeof(TileEvent), cudaMemcpyDeviceToHost));
    CHECK(write_chrome_trace(args.out_dir + "/timeline-sync-cost.json", su.chain, ev));
    std::printf("wrote %s/timeline-sync-cost.json (%d stages x %d tiles)\n", args.out_dir.c_str(), N, T);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!parse(argc, argv, args)) return 2;
  status dev = require_device();
  if (!dev.ok()) {
    std::fprintf(stderr, "baton_bench_sync_cost: %s. This benchmark needs an NVIDIA GPU (sm_90).\n", dev.to_string().c_str());
    return 3;
  }
  const bench::Env env = bench::detect_env();
  cudaStream_t stream;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) return 1;
  std::vector<bench::Row> rows;
  for (int T : args.tiles)
    if (!run_shape(args, T, stream, rows)) return 1;
  const bool ok = bench::publish(rows, env, args.out_dir, "sync-cost");
  return ok ? 0 : 1;
}
