// bench/conv.cu — the conv-chain benchmark (docs/conv.md): baton::ops::Conv2dChain (ResNet basic
// block: conv+bias+ReLU, conv+bias+residual+ReLU; VGG pair: conv+bias+ReLU twice; 3x3, stride 1,
// pad 1, NHWC bf16) against the same CUTLASS sm90 convolutions without semaphores:
//   cutlass-stream     two plain launches per pass, enqueued on a stream
//   cutlass-graph      the same, captured in a CUDA graph
//   cutlass-pdl-graph  conv2 PDL-launched behind conv1 (filters first, griddepcontrol.wait), in a graph
//   baton-tile         conv2's tiles wait for the whole 3x3 halo of conv1 tiles, in a graph
//   baton-kblock       conv2's k-blocks wait for filter row r's conv1 rows, in a graph
//   baton-plan         the op as create() gives it (no tuning: plan_conv_chain's policy and split-K), in a graph
//   baton-auto         the op tuned on this GPU (ConvChainRunOptions::tune), in a graph; its log line (every
//                      candidate's time) is printed
// The cuDNN baseline (cudnn-graph) comes from bench/conv/cudnn_pairs.py in the same device call;
// bench/conv/merge.py joins both into bench/results/<gpu>/conv-<workload>.csv.
//
// Every variant's output is checked against a GPU fp32 reference (a direct convolution, Y rounded to
// bf16 as the kernels store it): relative Frobenius error < 1e-2, no NaN. A timed repetition is one
// graph of --iters passes (the stream variant: --iters passes enqueued), median of --reps; a shape's
// variants are created and checked first, then timed in interleaved rounds (--order in-turn: one after
// another).
//
//   baton_bench_conv --workload resnet38 [--batch 1,2,4,8,16,32] [--layers 64@56,128@28]
//   baton_bench_conv --workload custom --block resnet|vgg --batch 3 --channels 96 --hw 40
//   baton_bench_conv ... --timeline conv-timeline.json   (per-tile timeline of the first shape, kblock)
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "baton/ops/conv/conv_chain.cuh"
#include "common/cli.hpp"
#include "common/device_check.cuh"
#include "common/device_memory.cuh"
#include "common/env.hpp"
#include "common/graph.cuh"
#include "common/random.hpp"
#include "common/report.hpp"
#include "common/timing.cuh"

using namespace baton;
using bf16 = ::cutlass::bfloat16_t;
using Op = ops::CompiledConv2dChain;

namespace {

// Direct 3x3 / stride 1 / pad 1 convolution in fp32: out[pix, k] = act(sum + bias[k] (+ res[pix, k])).
// round_bf16: store bf16-rounded values (Y, as the kernels store it).
__global__ void conv_ref_kernel(const bf16* x, const float* xf, const bf16* w, const bf16* bias, const bf16* res,
                                float* out, int n, int h, int wd, int c, int k, bool round_bf16) {
  const size_t total = size_t(n) * h * wd * k;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < total; i += size_t(gridDim.x) * blockDim.x) {
    const int o = int(i % k);
    const size_t pix = i / k;
    const int q = int(pix % wd), p = int(pix / wd % h), b = int(pix / (size_t(wd) * h));
    float acc = 0.f;
    for (int r = 0; r < 3; ++r)
      for (int s = 0; s < 3; ++s) {
        const int hh = p + r - 1, ww = q + s - 1;
        if (hh < 0 || hh >= h || ww < 0 || ww >= wd) continue;
        const size_t xi = ((size_t(b) * h + hh) * wd + ww) * c;
        const bf16* wp = w + ((size_t(o) * 3 + r) * 3 + s) * c;
        for (int ci = 0; ci < c; ++ci) acc += (xf ? xf[xi + ci] : float(x[xi + ci])) * float(wp[ci]);
      }
    float v = acc + float(bias[o]);
    if (res) v += float(res[i]);
    v = v > 0.f ? v : 0.f;
    out[i] = round_bf16 ? float(bf16(v)) : v;
  }
}

struct Layer {
  int c = 0, hw = 0;
};

struct Args {
  std::string workload = "resnet38";
  ops::ConvBlock block = ops::ConvBlock::resnet_basic;
  std::vector<int> batch;
  std::vector<Layer> layers;
  int reps = 50, iters = 20, warmup = 5;
  bool interleave = true;  // --order: the variants of a shape timed in interleaved rounds (or one after another)
  std::string out_dir = ".";
  std::string timeline;
  std::string variants = "cutlass-stream,cutlass-graph,cutlass-pdl-graph,baton-tile,baton-kblock,baton-plan,baton-auto";
};

void usage() {
  std::printf(
      "baton_bench_conv: conv-chain benchmark (baton::ops::Conv2dChain vs the same CUTLASS sm90 convs)\n"
      "  --workload resnet38|vgg19|custom  (default resnet38: 64@56,128@28,256@14,512@7, batch 1..32;\n"
      "                                     vgg19: 64@224,128@112,256@56,512@28,512@14, batch 1..16)\n"
      "  --block resnet|vgg                block of the custom workload (default resnet)\n"
      "  --batch LIST                      batch sizes, e.g. 1,2,3\n"
      "  --layers LIST                     C@HW pairs, e.g. 64@56,96@40 (channels a multiple of 8)\n"
      "  --channels C --hw HW              one custom layer\n"
      "  --variants LIST                   subset of cutlass-stream,cutlass-graph,cutlass-pdl-graph,\n"
      "                                    baton-tile,baton-kblock,baton-plan,baton-auto\n"
      "  --reps N (50) --iters N (20)      timed repetitions, passes per repetition\n"
      "  --order interleaved|in-turn       a shape's variants timed in rounds, one repetition of each per round\n"
      "                                    (default), or each variant's repetitions together, one after another\n"
      "  --out-dir DIR                     writes DIR/conv-<workload>.csv and .json\n"
      "  --timeline FILE                   per-tile Perfetto timeline of the first shape (kblock policy)\n");
}

bool parse_args(int argc, char** argv, Args& a) {
  int ch = 0, hw = 0;
  auto need = [&](int& i) -> const char* {
    if (i + 1 >= argc) {
      std::fprintf(stderr, "baton_bench_conv: %s needs a value\n", argv[i]);
      return nullptr;
    }
    return argv[++i];
  };
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    const char* v = nullptr;
    if (k == "--help" || k == "-h") {
      usage();
      std::exit(0);
    }
    if (!(v = need(i))) return false;
    if (k == "--workload") a.workload = v;
    else if (k == "--block") {
      if (std::string(v) == "resnet") a.block = ops::ConvBlock::resnet_basic;
      else if (std::string(v) == "vgg") a.block = ops::ConvBlock::vgg_pair;
      else return std::fprintf(stderr, "baton_bench_conv: --block resnet|vgg, got '%s'\n", v), false;
    } else if (k == "--batch") {
      a.batch.clear();
      for (auto& f : bench::split_commas(v)) {
        int b = 0;
        if (!bench::parse_int(f.c_str(), 1, 4096, b))
          return std::fprintf(stderr, "baton_bench_conv: bad batch '%s'\n", f.c_str()), false;
        a.batch.push_back(b);
      }
    } else if (k == "--layers") {
      a.layers.clear();
      for (auto& f : bench::split_commas(v)) {
        const auto at = f.find('@');
        Layer l;
        if (at == std::string::npos || !bench::parse_int(f.substr(0, at).c_str(), 1, 65536, l.c) ||
            !bench::parse_int(f.substr(at + 1).c_str(), 1, 65536, l.hw))
          return std::fprintf(stderr, "baton_bench_conv: bad layer '%s' (want C@HW)\n", f.c_str()), false;
        a.layers.push_back(l);
      }
    } else if (k == "--channels") {
      if (!bench::parse_int(v, 1, 65536, ch)) return std::fprintf(stderr, "baton_bench_conv: bad --channels\n"), false;
    } else if (k == "--hw") {
      if (!bench::parse_int(v, 1, 65536, hw)) return std::fprintf(stderr, "baton_bench_conv: bad --hw\n"), false;
    } else if (k == "--variants") a.variants = v;
    else if (k == "--order") {
      if (std::string(v) == "interleaved") a.interleave = true;
      else if (std::string(v) == "in-turn") a.interleave = false;
      else return std::fprintf(stderr, "baton_bench_conv: --order interleaved|in-turn, got '%s'\n", v), false;
    } else if (k == "--reps") {
      if (!bench::parse_int(v, 1, 100000, a.reps)) return std::fprintf(stderr, "baton_bench_conv: bad --reps\n"), false;
    } else if (k == "--iters") {
      if (!bench::parse_int(v, 1, 100000, a.iters)) return std::fprintf(stderr, "baton_bench_conv: bad --iters\n"), false;
    } else if (k == "--out-dir") a.out_dir = v;
    else if (k == "--timeline") a.timeline = v;
    else return std::fprintf(stderr, "baton_bench_conv: unknown option %s (--help)\n", k.c_str()), false;
  }
  if (a.workload == "resnet38") {
    a.block = ops::ConvBlock::resnet_basic;
    if (a.layers.empty()) a.layers = {{64, 56}, {128, 28}, {256, 14}, {512, 7}};
    if (a.batch.empty()) a.batch = {1, 2, 4, 8, 16, 32};
  } else if (a.workload == "vgg19") {
    a.block = ops::ConvBlock::vgg_pair;
    if (a.layers.empty()) a.layers = {{64, 224}, {128, 112}, {256, 56}, {512, 28}, {512, 14}};
    if (a.batch.empty()) a.batch = {1, 2, 4, 8, 16};
  } else if (a.workload == "custom") {
    if (ch && hw) a.layers.push_back({ch, hw});
    if (a.layers.empty()) return std::fprintf(stderr, "baton_bench_conv: custom needs --layers or --channels/--hw\n"), false;
    if (a.batch.empty()) a.batch = {1};
  } else {
    return std::fprintf(stderr, "baton_bench_conv: --workload resnet38|vgg19|custom, got '%s'\n", a.workload.c_str()), false;
  }
  return true;
}

int run(const Args& a) {
  cudaStream_t stream = nullptr;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
    std::printf("baton_bench_conv: no usable CUDA device; nothing measured\n");
    return 0;
  }
  const bench::Env env = bench::detect_env();
  std::vector<bench::Row> rows;
  bool all_ok = true;
  bool timeline_done = a.timeline.empty();
  for (const Layer& l : a.layers)
    for (int n : a.batch) {
      ops::ConvChainShape s{n, l.hw, l.hw, l.c, l.c, a.block};
      const std::string shape = "batch=" + std::to_string(n) + ";c=" + std::to_string(l.c) + ";hw=" + std::to_string(l.hw);
      if (auto v = ops::validate_conv_chain(s); !v.ok()) {
        std::fprintf(stderr, "skipping %s: %s\n", shape.c_str(), v.to_string().c_str());
        continue;
      }
      const size_t px = size_t(s.pixels()), nx = px * s.c, ny = px * s.k;
      const size_t nw1 = size_t(s.k) * 9 * s.c, nw2 = size_t(s.k) * 9 * s.k;
      auto alloc = [&](size_t bytes, const char* what) {
        auto b = bench::device_alloc(bytes, stream, what);
        if (!b.ok()) {
          std::fprintf(stderr, "%s: %s\n", shape.c_str(), b.error().to_string().c_str());
          std::exit(1);
        }
        return std::move(b.value());
      };
      auto x = alloc(nx * 2, "x"), w1 = alloc(nw1 * 2, "w1"), w2 = alloc(nw2 * 2, "w2"), b1 = alloc(size_t(s.k) * 2, "b1"),
           b2 = alloc(size_t(s.k) * 2, "b2"), y = alloc(ny * 2, "y"), out = alloc(ny * 2, "out");
      auto yref = alloc(ny * 4, "yref"), oref = alloc(ny * 4, "oref"), sums = alloc(3 * sizeof(double), "sums");
      auto bf = [](auto& b) { return static_cast<bf16*>(b.data()); };
      bench::fill_uniform<<<1024, 256, 0, stream>>>(bf(x), nx, 1, 1.0f);
      bench::fill_uniform<<<1024, 256, 0, stream>>>(bf(w1), nw1, 2, 2.0f / std::sqrt(9.0f * s.c));
      bench::fill_uniform<<<1024, 256, 0, stream>>>(bf(w2), nw2, 3, 2.0f / std::sqrt(9.0f * s.k));
      bench::fill_uniform<<<64, 256, 0, stream>>>(bf(b1), size_t(s.k), 4, 0.2f);
      bench::fill_uniform<<<64, 256, 0, stream>>>(bf(b2), size_t(s.k), 5, 0.2f);
      const bool residual = s.block == ops::ConvBlock::resnet_basic;
      conv_ref_kernel<<<4096, 256, 0, stream>>>(bf(x), nullptr, bf(w1), bf(b1), nullptr, static_cast<float*>(yref.data()),
                                                s.n, s.h, s.w, s.c, s.k, true);
      conv_ref_kernel<<<4096, 256, 0, stream>>>(nullptr, static_cast<float*>(yref.data()), bf(w2), bf(b2),
                                                residual ? bf(x) : nullptr, static_cast<float*>(oref.data()), s.n, s.h,
                                                s.w, s.k, s.k, false);
      const ops::ConvChainTensors t{x.data(), w1.data(), b1.data(), w2.data(), b2.data(), y.data(), out.data()};
      const double flops = 2.0 * 2.0 * double(px) * s.c * s.k * 9.0;
      const double bytes = 2.0 * double(nx + nw1 + nw2 + 2 * s.k + ny);
      const double floor_us = bench::floor_us_of(flops, bytes);

      // The output ([pixels, K]) against the reference: NaN (a NaN in it, a CUDA error) fails too.
      auto check = [&]() -> bool {
        return bench::relative_error(stream, bf(out), static_cast<const float*>(oref.data()), 1, px, px, size_t(s.k),
                                     static_cast<double*>(sums.data())) < 1e-2;
      };
      // Every wanted variant is created (baton-auto tuned), run once and checked first; then all are timed
      // together, in interleaved rounds unless --order in-turn (bench/common/rounds.hpp), so neither the
      // card's drift nor the heat of tuning lands on one variant.
      struct Entry {
        std::string variant;
        bool graph = true, baseline = false, tuned = false, correct = false;
        std::unique_ptr<Op> op;
        bench::graph_exec g;
        status st;
        std::vector<double> us;
      };
      std::vector<Entry> entries;
      auto prepare = [&](const std::string& variant, ops::ConvChainRunOptions o, bool graph, bool baseline) {
        if (!bench::in_list(a.variants, variant)) return;
        o.log = false;
        auto op = Op::create(s, t, stream, o);
        if (!op.ok()) {
          std::fprintf(stderr, "%s %s: %s\n", shape.c_str(), variant.c_str(), op.error().to_string().c_str());
          all_ok = false;
          return;
        }
        Entry& e = entries.emplace_back();
        e.variant = variant;
        e.graph = graph;
        e.baseline = baseline;
        e.tuned = o.tune;
        e.op = std::move(op.value());
        (void)cudaMemsetAsync(out.data(), 0xFF, ny * 2, stream);
        e.st = e.op->enqueue(stream);
        if (e.st.ok()) e.st = e.op->check_errors(stream);
        e.correct = e.st.ok() && check();
        if (e.st.ok() && graph) {
          Op& chain = *e.op;
          auto g = bench::capture_iterations(stream, a.iters, [&] { return chain.enqueue(stream); });
          if (g.ok()) e.g = std::move(g.value());
          else e.st = g.error();
        }
      };
      ops::ConvChainRunOptions none_serial, none_pdl, tile, kblock, planned, tuned;
      none_serial.plan.policy = ops::ConvChainPolicy::none;
      none_serial.plan.launch = ops::ConvLaunch::serial;
      none_pdl.plan.policy = ops::ConvChainPolicy::none;
      none_pdl.plan.launch = ops::ConvLaunch::pdl;
      tile.plan.policy = ops::ConvChainPolicy::tile;
      kblock.plan.policy = ops::ConvChainPolicy::kblock;
      tuned.tune = true;
      prepare("cutlass-stream", none_serial, false, true);
      prepare("cutlass-graph", none_serial, true, true);
      prepare("cutlass-pdl-graph", none_pdl, true, true);
      prepare("baton-tile", tile, true, false);
      prepare("baton-kblock", kblock, true, false);
      prepare("baton-plan", planned, true, false);
      prepare("baton-auto", tuned, true, false);
      std::vector<std::function<status()>> reps;
      for (Entry& e : entries)
        reps.push_back([&e, &a, stream]() -> status {
          if (!e.st.ok()) return e.st;
          if (e.graph) return e.g.launch(stream);
          for (int i = 0; i < a.iters; ++i) BATON_TRY(e.op->enqueue(stream));
          return {};
        });
      auto errors_of = [&](int i) { return entries[size_t(i)].op->check_errors(stream); };
      {
        std::vector<std::vector<double>> us;
        std::vector<status> failed;
        const status st = bench::time_in_order(stream, a.interleave, a.warmup, a.reps, a.iters, reps, errors_of, us, failed);
        for (size_t i = 0; i < entries.size(); ++i) {
          if (entries[i].st.ok()) entries[i].st = st.ok() ? failed[i] : st;
          if (i < us.size()) entries[i].us = std::move(us[i]);
        }
      }
      for (Entry& e : entries) {
        if (!e.st.ok()) {
          std::fprintf(stderr, "%s %s: %s\n", shape.c_str(), e.variant.c_str(), e.st.to_string().c_str());
          all_ok = false;
          continue;
        }
        bench::Row r = bench::timed_row("conv-" + a.workload, shape, e.variant, e.us, floor_us, e.baseline, e.correct);
        const ops::ConvChainPlan& p = e.op->plan();
        r.extra = {{"policy", ops::to_string(p.policy)},
                   {"split_k", std::to_string(p.split_k1) + "/" + std::to_string(p.split_k2)},
                   {"launch", p.policy == ops::ConvChainPolicy::none ? ops::to_string(p.launch) : "pdl"},
                   {"order", a.interleave ? "interleaved" : "in-turn"}};
        all_ok = all_ok && e.correct;
        rows.push_back(r);
        if (e.tuned) std::printf("%s\n", p.log_line().c_str());
        std::printf("%-28s %-18s %9.2f us  %s\n", shape.c_str(), e.variant.c_str(), r.median_us, e.correct ? "ok" : "WRONG");
        std::fflush(stdout);
      }
      if (!timeline_done) {
        timeline_done = true;
        const Grid g = s.grid();
        auto t1 = alloc(size_t(g.size()) * sizeof(TileEvent), "trace1"), t2 = alloc(size_t(g.size()) * sizeof(TileEvent), "trace2");
        (void)cudaMemsetAsync(t1.data(), 0, size_t(g.size()) * sizeof(TileEvent), stream);
        (void)cudaMemsetAsync(t2.data(), 0, size_t(g.size()) * sizeof(TileEvent), stream);
        ops::ConvChainRunOptions o = kblock;
        o.log = false;
        o.plan.split_k1 = o.plan.split_k2 = 1;  // one CTA per tile: one event each
        o.trace1 = static_cast<TileEvent*>(t1.data());
        o.trace2 = static_cast<TileEvent*>(t2.data());
        auto op = Op::create(s, t, stream, o);
        status st = op.ok() ? status{} : op.error();
        for (int i = 0; i < 3 && st.ok(); ++i) st = op.value()->enqueue(stream);
        if (st.ok()) st = op.value()->check_errors(stream);
        std::vector<std::vector<TileEvent>> ev(2, std::vector<TileEvent>(size_t(g.size())));
        if (st.ok()) st = cuda_status(cudaMemcpy(ev[0].data(), t1.data(), ev[0].size() * sizeof(TileEvent), cudaMemcpyDeviceToHost), "trace");
        if (st.ok()) st = cuda_status(cudaMemcpy(ev[1].data(), t2.data(), ev[1].size() * sizeof(TileEvent), cudaMemcpyDeviceToHost), "trace");
        if (st.ok()) st = write_chrome_trace(a.timeline, op.value()->chain(), ev);
        if (st.ok()) {
          uint64_t end1 = 0, start2 = UINT64_MAX;
          for (auto& e : ev[0]) end1 = std::max(end1, e.end_ns);
          for (auto& e : ev[1]) start2 = std::min(start2, e.start_ns);
          std::printf("wrote %s (%s, kblock): conv2's first tile started %.2f us %s conv1's last tile ended\n",
                      a.timeline.c_str(), shape.c_str(), std::abs(double(int64_t(end1) - int64_t(start2))) / 1e3,
                      start2 < end1 ? "before" : "after");
        } else {
          std::fprintf(stderr, "timeline: %s\n", st.to_string().c_str());
        }
      }
    }
  const bool published = bench::publish(rows, env, a.out_dir, "conv-" + a.workload);
  (void)cudaStreamDestroy(stream);
  return all_ok && published ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (!parse_args(argc, argv, a)) return 2;
  if (!require_device().ok()) {
    std::printf("baton_bench_conv: no CUDA device; nothing measured (the CPU emulator demo: baton_emu_demo)\n");
    return 0;
  }
  return run(a);
}
