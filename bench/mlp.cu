// mlp: transformer MLPs, bf16 in/out, fp32 accumulation. X [M, H], W2 [H, F] (nn.Linear layout
// [N, K]), Y [M, F], Z [M, H]:
//   --act gelu    (GPT-3)  Y = GeLU(X W1^T),               W1 [F, H]
//   --act swiglu  (LLaMA)  Y = SiLU(X Wg^T) * (X Wu^T),   W1 [2F, H] = Wg, Wu rows interleaved
//                          (baton::sm90::pack_swiglu_weights), one GEMM with a SwiGLU pair epilogue
//   then Z = Y W2^T.
// Presets (tensor-parallel shards): gpt3 H = 12288, F = 6144 (GeLU); llama H = 8192, F = 2752
// (SwiGLU); M in {1, 2, 4, ..., 2048}. See docs/mlp.md.
//
// Every variant built on the baton sm90 GEMM uses the same split-K per GEMM
// (sm90::choose_split_k for the shape, or --split-k), so the variants differ only in how the
// two GEMMs are synchronized.
//
// Variants, all in the same run, the activation fused into GEMM1 except where noted:
//   cutlass-stream     baseline: the sm90 CUTLASS GEMMs of include/baton/cutlass (stages without
//                      edges: same kernel code, no waits, no posts) back-to-back on one stream
//   cutlass-graph      baseline: the same, captured in a CUDA graph
//   cutlass-pdl-graph  baseline: the same, GEMM2 PDL-launched; its load warp executes
//                      griddepcontrol.wait before its first load (Gemm<..., GridDependencyWait>);
//                      GEMM1 triggers its dependents first thing. In a graph.
//   cublaslt-graph     baseline: cuBLASLt, GEMM1 with CUBLASLT_EPILOGUE_GELU, GEMM2 plain, bf16 in/out,
//                      fp32 compute, the heuristic's top algorithm, 32 MiB workspace. In a graph.
//   baton-kblock       KBlockPolicy<GemmA>: GEMM2 waits per k-block of Y; launch_chain (PDL), graph
//   baton-row          RowPolicy<GemmA>: GEMM2 waits once per row of Y tiles; same
//   baton-kblock-gen   the same chains on the policies batonc generates from include/baton/ops/mlp.baton
//   baton-row-gen      (the op's; lowered to footprint::GemmA by batonc, so the same kernels)
//   baton-auto         baton::ops::Mlp with per-shape tuning (MlpRunOptions::tune: times none and per-row
//                      candidate plans at create(), keeps the fastest, logs why), timed as its own graph
//   baton-plan         the op as create() gives it with default options and no tuning (what a user
//                      who does not tune gets)
//   baton-plan-stream, baton-auto-stream, cublaslt-stream   diagnostics, not baselines: the same op
//                      objects (built once) launched straight onto the stream, --iters-per-graph
//                      iterations per repetition, no graph; what the op's tuning times (its
//                      candidates are enqueued, not captured), so a graph / stream pair in one run
//                      says what the graph changes
//   cutlass-streamk-graph     baseline: CUTLASS 4.2 GemmUniversal, cooperative kernel with the
//                      StreamKScheduler in Stream-K mode (persistent; partial tiles reduced
//                      through a workspace), same collectives; SwiGLU: GEMM1 plain into [M, 2F],
//                      then an elementwise SwiGLU kernel. In a graph.
//   cutlass-persistent-graph  baseline: the same GemmUniversal, data-parallel decomposition (the
//                      persistent kernel; our baton GEMM is the non-persistent one). In a graph.
//   cutlass-wide-graph baseline: the baton sm90 GEMM on 128x256 tiles for both GEMMs (no edges, no
//                      split-K), two launches in a graph
//   cutlass-wide2-graph baseline: GEMM1 on 128x128 tiles (planned split-K), GEMM2 on 128x256
// cuBLASLt for SwiGLU: GEMM1 into [M, 2F], the same SwiGLU kernel, GEMM2.
//
// Method (BENCHMARKS.md): CUDA events, warm-up, median of --reps timed repetitions (each rep is
// --iters-per-graph MLP iterations, in one graph or launched back to back, divided), the variants of a
// shape timed in interleaved rounds (bench/common/rounds.hpp; --order in-turn: one after another). Inputs are
// random (X ~ U with std 1, W ~ U with std 1/sqrt(K): GeLU's input has std ~1). The weights
// (2 x 151 MB for gpt3) exceed the 60 MB L2, so inputs are not rotated. Before timing and again
// after it, Y and Z are poisoned (NaN) and one iteration runs (graph variants: a one-iteration
// graph); Z must have no NaN anywhere and match a CPU fp64 reference (erf GeLU, Y rounded to bf16)
// on sampled rows (one in every 128-row tile up to M = 128 x --check-rows): ||Z - ref||_F / ||ref||_F < 1e-2.
//
// Layout: this file runs the shapes (run_shape) and main; bench/mlp/ holds the rest by concern:
// args.hpp (command line), problem.cuh (one shape on the device), baselines.cuh (CUTLASS, cuBLASLt,
// GemmUniversal), baton_variants.cuh (baton chains and the op), measure.cuh (check and timing),
// reference.hpp (CPU reference), sync_overhead.cuh, timeline.cuh, report.hpp (breakdown, summary).
// What every bench shares is in bench/common/.
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <cutlass/version.h>

#include "bench_util.hpp"
#include "common/device_memory.cuh"
#include "common/random.hpp"
#include "mlp/args.hpp"
#include "mlp/baselines.cuh"
#include "mlp/baton_variants.cuh"
#include "mlp/measure.cuh"
#include "mlp/reference.hpp"
#include "mlp/report.hpp"
#include "mlp/sync_overhead.cuh"
#include "mlp/timeline.cuh"
#include "mlp_gemms.cuh"

using namespace baton;
using namespace baton_bench::mlp;

namespace {

// A GEMM's form as the CSV's `tiles` column writes it: 128x96, 128x96p (CTA pairs), 128x192b (band pairs), swap128x160,
// with a P for persistent CTAs (128x128P, swap128x208P) and an S for stream-K (128x256S).
std::string op_form(const ops::GemmForm& f) {
  return (f.operands == ops::GemmOperands::swapped
              ? "swap128x" + std::to_string(f.tile)
              : "128x" + std::to_string(f.tile) + (f.cta_pairs ? "p" : f.band_pairs ? "b" : "")) +
         (f.stream_k ? "S" : f.persistent ? "P" : "");
}

// Returns false on a fatal error (the CUDA context is unusable); failed variants give rows with correct = 0.
bool run_shape(Ctx& c, int m, std::vector<bench::Row>& rows, std::vector<BreakdownRow>& parts) {
  Problem p{m, c.args.hidden, c.args.ffn, c.dx, c.dw1, c.dw2, c.dy, c.dz};
  p.swiglu = c.args.swiglu;
  p.t = c.dt;
  const Grid g1 = p.g1(), g2 = p.g2();
  // Split-K, the same for every variant on the baton GEMM: chosen for the shape unless --split-k.
  const int k1_blocks = ceil_div(p.h, Config1::tile_k), k2_blocks = ceil_div(p.f, Config2::tile_k);
  p.split1 = c.args.split1 > 0 ? std::min(c.args.split1, k1_blocks) : sm90::choose_split_k(g1.size(), k1_blocks, c.num_sms);
  p.split2 = c.args.split2 > 0 ? std::min(c.args.split2, k2_blocks) : sm90::choose_split_k(g2.size(), k2_blocks, c.num_sms);
  p.group_m = c.args.group_m > 0 ? c.args.group_m : ops::mlp_group_m(g1);
  bench::device_buffer sw1, sw2;
  for (auto [mem, bytes, ptr] : {std::tuple{&sw1, p.sw1_bytes(), &p.sw1}, std::tuple{&sw2, p.sw2_bytes(), &p.sw2}}) {
    if (bytes == 0) continue;
    status st = bench::device_alloc(*mem, bytes, c.stream, "split-K workspace");
    if (st.ok()) st = cuda_status(cudaMemsetAsync(mem->data(), 0, bytes, c.stream), "zeroing the split-K workspace");
    if (!st.ok()) {
      std::fprintf(stderr, "error: [m=%d] %s\n", m, st.to_string().c_str());
      return false;
    }
    *ptr = mem->data();
  }
  const std::string shape = "m=" + std::to_string(m) + ";h=" + std::to_string(p.h) + ";f=" + std::to_string(p.f);
  // GeLU: 2 GEMMs of M x H x F; SwiGLU: GEMM1 is M x H x 2F. Weights read once, X and Z once.
  const double w_mats = p.swiglu ? 3.0 : 2.0;
  const double flops = 2.0 * w_mats * double(m) * p.h * p.f;
  const double bytes = 2.0 * (2.0 * double(m) * p.h + w_mats * double(p.h) * p.f);
  const double floor_us = std::max(flops / 790e12, bytes / 4.3e12) * 1e6;

  // Reference rows, cached across shapes (every M uses the leading rows of the same X).
  const std::vector<int> sample = sample_rows(m, c.args.check_rows);
  std::vector<int> missing;
  for (int r : sample)
    if (!c.ref_cache.count(r)) missing.push_back(r);
  if (!missing.empty()) {
    auto z = reference_rows(c.x, c.w1, c.w2, p.h, p.f, p.swiglu, missing);
    for (size_t i = 0; i < missing.size(); ++i) c.ref_cache[missing[i]] = std::move(z[i]);
  }
  std::vector<std::vector<double>> ref;
  for (int r : sample) ref.push_back(c.ref_cache[r]);

  {
    // UTC time of day: lines up the shapes with a clock/power log (scripts/device_run.sh samples nvidia-smi).
    const auto now = std::chrono::system_clock::now();
    const std::time_t tt = std::chrono::system_clock::to_time_t(now);
    std::tm tm{};
    gmtime_r(&tt, &tm);
    const int ms = int(std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
    std::printf("[m=%d] %02d:%02d:%02d.%03d UTC: GEMM1 %lld tiles x %d split-K parts, GEMM2 %lld tiles x %d parts (%s), "
                "tile order Grouped{%d}\n",
                m, tm.tm_hour, tm.tm_min, tm.tm_sec, ms, (long long)g1.size(), p.split1, (long long)g2.size(), p.split2,
                c.args.split1 > 0 ? "--split-k" : "choose_split_k", p.group_m);
  }
  if (c.args.sync_overhead) {
    const status st = sync_overhead_shape(c, p, shape, sample, ref, rows);
    if (!st.ok()) {
      std::fprintf(stderr, "error: [m=%d] sync overhead: %s\n", m, st.to_string().c_str());
      if (st.code() == errc::cuda_error && cudaStreamSynchronize(c.stream) != cudaSuccess) return false;
    }
    return true;
  }
  ops::MlpOptions plan_opts;
  if (c.args.split1 > 0) plan_opts.gemm1.split_k = c.args.split1;
  if (c.args.split2 > 0) plan_opts.gemm2.split_k = c.args.split2;
  if (c.args.group_m > 0) plan_opts.group_m = c.args.group_m;
  const auto auto_plan = ops::plan_mlp({m, p.h, p.f, p.swiglu ? ops::Activation::swiglu : ops::Activation::gelu},
                                       c.num_sms, plan_opts);
  const std::string auto_policy = auto_plan.ok() ? ops::to_string(auto_plan.value().policy) : "?";

  PlainMlp plain;
  auto kblock = std::make_unique<BatonMlp<HandKBlock>>();
  auto row = std::make_unique<BatonMlp<HandRow>>();
  auto kblock_gen = std::make_unique<BatonMlp<KBlock, true>>();  // batonc's, from include/baton/ops/mlp.baton
  auto row_gen = std::make_unique<BatonMlp<Row, true>>();
  auto op = std::make_unique<OpMlp>();
  auto plan_op = std::make_unique<OpMlp>();  // baton-plan: the op untuned
  LtMlp lt;
  UniversalMlp streamk, persistent;
  WideMlp wide, wide2;
  wide2.wide1 = false;

  std::vector<Variant> vs;
  {
    Variant v;
    v.baseline = true;
    v.name = "cutlass-stream";
    v.graph = false;
    v.enqueue = [&] { return launch_chain(plain.chain, c.stream, plain.serial, LaunchSchedule::serial); };
    vs.push_back(v);
    v.name = "cutlass-graph";
    v.graph = true;
    vs.push_back(v);
    v.name = "cutlass-pdl-graph";
    v.enqueue = [&] { return launch_chain(plain.chain, c.stream, plain.pdl, LaunchSchedule::pdl); };
    vs.push_back(v);
    v.name = "cutlass-streamk-graph";
    v.enqueue = [&] { return streamk.enqueue(c.stream); };
    vs.push_back(v);
    v.name = "cutlass-persistent-graph";
    v.enqueue = [&] { return persistent.enqueue(c.stream); };
    vs.push_back(v);
    v.name = "cublaslt-graph";
    v.enqueue = [&] { return lt.enqueue(c.stream); };
    vs.push_back(v);
    v.name = "cublaslt-stream";  // a diagnostic, not a baseline (above)
    v.baseline = false;
    v.graph = false;
    vs.push_back(v);
    v.baseline = true;
    v.graph = true;
    v.name = "cutlass-wide-graph";
    v.enqueue = [&] { return wide.enqueue(c.stream); };
    vs.push_back(v);
    v.name = "cutlass-wide2-graph";
    v.enqueue = [&] { return wide2.enqueue(c.stream); };
    vs.push_back(v);
  }
  auto baton_variant = [&](const std::string& name, auto* mlp, const std::string& policy, bool graph = true) {
    Variant v;
    v.name = name;
    v.policy = policy;
    v.graph = graph;
    v.enqueue = [&c, mlp] { return mlp->enqueue(c.stream); };
    v.errors = [&c, mlp] { return mlp->errors(c.stream); };
    vs.push_back(v);
  };
  baton_variant("baton-kblock", kblock.get(), "kblock");
  baton_variant("baton-row", row.get(), "row");
  baton_variant("baton-kblock-gen", kblock_gen.get(), "kblock");
  baton_variant("baton-row-gen", row_gen.get(), "row");
  baton_variant("baton-auto", op.get(), auto_policy);
  baton_variant("baton-plan", plan_op.get(), auto_policy);
  baton_variant("baton-auto-stream", op.get(), auto_policy, /*graph=*/false);
  baton_variant("baton-plan-stream", plan_op.get(), auto_policy, /*graph=*/false);

  // Builds what the wanted variants need (host work: validation, TMA descriptors, heuristics).
  // Variants that share an object (the three CUTLASS chains; the stream twins and their graph rows)
  // build it (and tune it) once.
  std::unique_ptr<status> lt_built, op_built, plan_built;
  auto once = [](std::unique_ptr<status>& built, auto&& build) -> status {
    if (!built) built = std::make_unique<status>(build());
    return *built;
  };
  auto build_for = [&](const std::string& name) -> status {
    if (name == "cutlass-streamk-graph") return streamk.build(p, SchedulerMode::stream_k, c.num_sms, c.stream);
    if (name == "cutlass-persistent-graph") return persistent.build(p, SchedulerMode::data_parallel, c.num_sms, c.stream);
    if (name == "cutlass-wide-graph") return wide.build(p, c.stream);
    if (name == "cutlass-wide2-graph") return wide2.build(p, c.stream);
    if (name.rfind("cutlass-", 0) == 0) return once(plain.built, [&] { return plain.build(p, c.stream); });
    if (name.rfind("cublaslt-", 0) == 0) return once(lt_built, [&] { return lt.build(p, c.lt, c.lt_ws); });
    if (name == "baton-kblock") return kblock->build(p, c.stream);
    if (name == "baton-row") return row->build(p, c.stream);
    if (name == "baton-kblock-gen") return kblock_gen->build(p, c.stream);
    if (name == "baton-row-gen") return row_gen->build(p, c.stream);
    if (name.rfind("baton-plan", 0) == 0)
      return once(plan_built, [&] { return plan_op->build(p, c.args, c.num_sms, c.stream, /*tune=*/false); });
    return once(op_built, [&] { return op->build(p, c.args, c.num_sms, c.stream); });
  };

  // Every wanted variant is built, run once and checked; then they are timed together (interleaved
  // rounds unless --order in-turn: bench/common/rounds.hpp), checked again, and reported.
  struct Run {
    Variant* v = nullptr;
    status st;
    Check before, after;
    std::vector<double> us;
  };
  std::vector<Run> runs;
  bool fatal = false;
  // A failed step: its error printed; a sticky error (illegal address, ...) leaves the context
  // unusable, so nothing more runs on it (the rows so far are still written).
  auto report_failure = [&](const status& st) {
    std::fprintf(stderr, "error: [m=%d] %s\n", m, st.to_string().c_str());
    (void)cudaGetLastError();
    if (st.code() == errc::cuda_error && cudaStreamSynchronize(c.stream) != cudaSuccess) fatal = true;
    (void)cudaGetLastError();
  };
  for (auto& v : vs) {
    if (!wanted(c, v.name) || fatal) continue;
    Run& run = runs.emplace_back();
    run.v = &v;
    status& st = run.st;
    st = build_for(v.name).with_context("building " + v.name);
    // One iteration outside any capture first: loads the kernels (lazy module loading) and
    // cuBLASLt's, so nothing is loaded while a graph is captured.
    if (st.ok()) st = [&]() -> status {
      BATON_TRY(v.enqueue());
      BATON_CUDA_TRY(cudaStreamSynchronize(c.stream));
      return v.errors();
    }().with_context("first run of " + v.name);
    if (st.ok() && v.name.rfind("baton-auto", 0) == 0) v.policy = ops::to_string(op->plan().policy);  // tuned at build
    if (st.ok() && v.name.rfind("baton-plan", 0) == 0) v.policy = ops::to_string(plan_op->plan().policy);
    if (st.ok()) st = check(c, p, v, sample, ref, run.before).with_context("checking " + v.name + " before timing");
    if (!st.ok()) report_failure(st);
  }
  std::vector<Run*> timed;
  for (auto& run : runs)
    if (run.st.ok() && !fatal) timed.push_back(&run);
  {
    std::vector<Variant*> tv;
    for (Run* run : timed) tv.push_back(run->v);
    std::vector<std::vector<double>> us;
    std::vector<status> errs;
    const status st = time_variants(c, tv, us, errs);
    for (size_t i = 0; i < timed.size(); ++i) {
      timed[i]->st = (!st.ok() ? st : errs[i]).with_context("timing " + timed[i]->v->name);
      if (i < us.size()) timed[i]->us = std::move(us[i]);
    }
  }
  for (Run* run : timed) {
    if (run->st.ok() && !fatal)
      run->st = check(c, p, *run->v, sample, ref, run->after).with_context("checking " + run->v->name + " after timing");
    else if (run->st.ok())
      run->st = status(errc::cuda_error, "not checked after timing: an earlier variant left the CUDA context unusable");
    if (!run->st.ok() && !fatal) report_failure(run->st);
  }
  for (Run& run : runs) {
    Variant& v = *run.v;
    const status& st = run.st;
    const Check& before = run.before;
    const Check& after = run.after;
    bench::Row r;
    r.workload = c.workload;
    r.shape = shape;
    r.variant = v.name;
    r.floor_us = floor_us;
    r.baseline = v.baseline;
    if (st.ok()) {
      const auto s = bench::stats(run.us);
      r.median_us = s.median;
      r.min_us = s.min;
      r.max_us = s.max;
      r.reps = int(run.us.size());
      r.correct = before.ok && after.ok;
    }
    const double rel = std::max(before.rel_err, after.rel_err);
    const size_t nonfinite = std::max(before.nonfinite, after.nonfinite);
    std::printf("[m=%d] %-18s median %9.2f us  (min %9.2f, max %9.2f)  rel_err %.2e%s%s\n", m, v.name.c_str(),
                r.median_us, r.min_us, r.max_us, rel, nonfinite ? (" NaN/Inf " + std::to_string(nonfinite)).c_str() : "",
                r.correct ? "" : "  FAILED");
    char relbuf[32];
    std::snprintf(relbuf, sizeof relbuf, "%.3e", rel);
    const bool on_baton_gemm = v.name.rfind("baton-", 0) == 0 || v.name == "cutlass-stream" || v.name == "cutlass-graph" ||
                               v.name == "cutlass-pdl-graph";
    // The op's rows (baton-auto tuned, baton-plan untuned) report the plan the op runs.
    const OpMlp* op_of_v = v.name.rfind("baton-auto", 0) == 0 && (op->gelu || op->swiglu)             ? op.get()
                           : v.name.rfind("baton-plan", 0) == 0 && (plan_op->gelu || plan_op->swiglu) ? plan_op.get()
                                                                                                       : nullptr;
    auto op_tiles = [](const ops::MlpPlan& pl) {
      return op_form(pl.form1) + "/" + op_form(pl.form2);
    };
    r.extra = {{"policy", v.policy},
               {"act", p.swiglu ? "swiglu" : "gelu"},
               {"group_m", op_of_v        ? std::to_string(op_of_v->plan().group_m)
                           : on_baton_gemm ? std::to_string(p.group_m)
                                           : "-"},
               {"split_k", op_of_v ? std::to_string(op_of_v->plan().form1.split_k) + "/" + std::to_string(op_of_v->plan().form2.split_k)
                           : on_baton_gemm ? std::to_string(p.split1) + "/" + std::to_string(p.split2)
                                           : "-"},
               {"tiles", op_of_v                           ? op_tiles(op_of_v->plan())
                         : v.name == "cutlass-wide-graph"  ? "128x256/128x256"
                         : v.name == "cutlass-wide2-graph" ? "128x128/128x256"
                         : on_baton_gemm                   ? "128x128/128x128"
                                                           : "-"},
               {"gemm2_pdl", op_of_v ? (op_of_v->plan().launch == ops::Gemm2Launch::pdl ? "1" : "0")
                             : v.name == "cutlass-pdl-graph" || v.name.starts_with("baton-kblock") || v.name.starts_with("baton-row") ? "1"
                             : on_baton_gemm ? "0"
                                             : "-"},
               {"l2_prefetch_kblocks", op_of_v ? std::to_string(op_of_v->plan().l2_prefetch_kblocks) : "0"},
               {"rel_err", relbuf},
               {"gemm1_tiles", std::to_string(g1.size())},
               {"gemm2_tiles", std::to_string(g2.size())},
               {"iters_per_rep", std::to_string(c.args.iters)},
               {"timing", v.graph ? "graph" : "stream"},
               {"cutlass", std::to_string(CUTLASS_MAJOR) + "." + std::to_string(CUTLASS_MINOR) + "." +
                               std::to_string(CUTLASS_PATCH)},
               {"cublaslt", std::to_string(cublasLtGetVersion())},
               {"order", c.args.interleave ? "interleaved" : "in-turn"}};
    rows.push_back(r);
  }
  if (fatal) return false;

  // The breakdown: baton-auto's and cuBLASLt's GEMMs each timed alone (a graph of --iters-per-graph
  // launches of that GEMM, the same method), against the chain's median above. rest = chain - GEMM1
  // - GEMM2 is what chaining costs beyond the GEMMs themselves (launch and ramp between them, tails
  // that do not overlap; negative where the chain overlaps them, PDL).
  if (c.args.breakdown) {
    auto chain_median = [&](const std::string& v) {
      for (const auto& r : rows)
        if (r.shape == shape && r.variant == v && r.correct) return r.median_us;
      return 0.0;
    };
    auto time_alone = [&](const std::string& what, std::function<status()> f, double& med) -> status {
      Variant v;
      v.name = what;
      v.enqueue = std::move(f);
      std::vector<double> us;
      BATON_TRY(time_variant(c, v, us).with_context("timing " + what + " alone"));
      med = bench::stats(us).median;
      return {};
    };
    const double n1 = p.swiglu ? 2.0 * p.f : double(p.f);
    BreakdownRow base;
    base.m = m;
    base.gemm1_bytes = 2.0 * (n1 * p.h + double(m) * p.h + double(m) * p.f);
    base.gemm2_bytes = 2.0 * (double(p.h) * p.f + double(m) * p.f + double(m) * p.h);
    base.gemm1_floor_us = std::max(2.0 * m * n1 * p.h / 790e12, base.gemm1_bytes / 4.3e12) * 1e6;
    base.gemm2_floor_us = std::max(2.0 * m * double(p.h) * p.f / 790e12, base.gemm2_bytes / 4.3e12) * 1e6;
    struct Who {
      std::string name;
      std::function<status(int)> gemm;
      std::string plan;
    };
    std::vector<Who> who;
    if (wanted(c, "baton-auto") && chain_median("baton-auto") > 0 && (op->gelu || op->swiglu)) {
      const auto& pl = op->plan();
      char buf[128];
      std::snprintf(buf, sizeof buf, "%s split-K %d/%d tiles %s/%s%s", ops::to_string(pl.policy), pl.form1.split_k,
                    pl.form2.split_k, op_form(pl.form1).c_str(), op_form(pl.form2).c_str(),
                    pl.launch == ops::Gemm2Launch::pdl ? " pdl" : "");
      who.push_back({"baton-auto", [&](int g) { return op->enqueue_gemm(g, c.stream); }, buf});
    }
    if (wanted(c, "cublaslt-graph") && chain_median("cublaslt-graph") > 0)
      who.push_back({"cublaslt-graph",
                     [&](int g) { return g == 1 ? lt.enqueue_gemm1(c.stream) : lt.enqueue_gemm2(c.stream); },
                     p.swiglu ? "heuristic's top algorithm; GEMM1 includes the SwiGLU kernel" : "heuristic's top algorithm"});
    for (auto& w : who) {
      BreakdownRow r = base;
      r.variant = w.name;
      r.plan = w.plan;
      r.chain_us = chain_median(w.name);
      status st = time_alone(w.name + " GEMM1", [&] { return w.gemm(1); }, r.gemm1_us);
      if (st.ok()) st = time_alone(w.name + " GEMM2", [&] { return w.gemm(2); }, r.gemm2_us);
      if (!st.ok()) {
        std::fprintf(stderr, "error: [m=%d] breakdown: %s\n", m, st.to_string().c_str());
        (void)cudaGetLastError();
        continue;
      }
      std::printf("[m=%d] breakdown %-14s chain %8.2f us = GEMM1 %8.2f (%.2f TB/s) + GEMM2 %8.2f (%.2f TB/s) + rest %7.2f\n",
                  m, w.name.c_str(), r.chain_us, r.gemm1_us, r.gemm1_bytes / (r.gemm1_us * 1e6), r.gemm2_us,
                  r.gemm2_bytes / (r.gemm2_us * 1e6), r.chain_us - r.gemm1_us - r.gemm2_us);
      parts.push_back(r);
    }
  }

  if (c.args.trace_m == m) {
    const std::string base = c.args.out_dir + "/timeline-" + c.workload + "-m" + std::to_string(m);
    status st = write_timeline<BatonMlp<HandRow>>(c, p, base + ".json", "baton-row",
                                                  [&](BatonMlp<HandRow>& b) { return b.enqueue(c.stream); });
    if (!st.ok()) std::fprintf(stderr, "error: timeline: %s\n", st.to_string().c_str());
    st = write_timeline<PlainMlp>(c, p, base + "-cutlass-pdl.json", "cutlass-pdl", [&](PlainMlp& b) {
      return launch_chain(b.chain, c.stream, b.pdl, LaunchSchedule::pdl);
    });
    if (!st.ok()) std::fprintf(stderr, "error: timeline (cutlass-pdl): %s\n", st.to_string().c_str());
  }
  return true;
}

extern "C" void on_timeout(int) {
  const char msg[] = "\nbaton_bench_mlp: --timeout-s reached, aborting (a hang? rerun with fewer --m / --variants)\n";
  ssize_t rc = write(2, msg, sizeof msg - 1);
  (void)rc;
  _exit(124);
}

}  // namespace

int main(int argc, char** argv) {
  Ctx c;
  if (!parse(argc, argv, c.args)) return 2;
  if (status s = op_kernels_cover(c.args); !s.ok()) {
    std::fprintf(stderr, "error: baton_bench_mlp: %s\n", s.to_string().c_str());
    return 2;
  }
  if (c.args.timeout_s > 0) {
    std::signal(SIGALRM, on_timeout);
    alarm(unsigned(c.args.timeout_s));
  }
  status dev = require_device();
  if (!dev.ok()) {
    std::fprintf(stderr, "baton_bench_mlp: %s. This benchmark needs an NVIDIA Hopper GPU (sm_90a).\n", dev.to_string().c_str());
    return 3;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess || prop.major != 9) {
    std::fprintf(stderr, "baton_bench_mlp: device 0 (%s) is not sm_90; the CUTLASS kernels are built for sm_90a only\n",
                 prop.name);
    return 3;
  }
  c.num_sms = prop.multiProcessorCount;
  c.workload = !c.args.swiglu && c.args.hidden == kGpt3Hidden && c.args.ffn == kGpt3Ffn  ? "mlp-gpt3"
               : c.args.swiglu && c.args.hidden == kLlamaHidden && c.args.ffn == kLlamaFfn ? "mlp-llama"
                                                                                          : "mlp-custom";
  const bench::Env env = bench::detect_env();
  auto fail = [](const status& s) {
    std::fprintf(stderr, "error: %s\n", s.to_string().c_str());
    return 1;
  };
  const int H = c.args.hidden, F = c.args.ffn, M = c.args.ms.back();
  std::printf("baton_bench_mlp: %s, %d SMs; H=%d F=%d, %zu shapes (M up to %d), reps %d x %d iterations\n", prop.name,
              c.num_sms, H, F, c.args.ms.size(), M, c.args.reps, c.args.iters);
  // Non-blocking; it outlives every buffer below (they are freed in its order).
  auto created = async::stream::create();
  if (!created.ok()) return fail(created.error());
  const async::stream stream = std::move(created.value());
  c.stream = stream.get();
  if (status s = lt_status(cublasLtCreate(&c.lt), "cublasLtCreate"); !s.ok()) return fail(s);

  // Inputs for the largest M; smaller M use the leading rows of X.
  c.x = bench::random_uniform<bf16>(size_t(M) * H, 1, 1.0);
  // SwiGLU: W1 = [Wg; Wu] with rows interleaved (what baton::sm90::pack_swiglu_weights makes
  // from separate Wg, Wu): a random matrix either way.
  c.w1 = bench::random_uniform<bf16>(size_t(c.args.swiglu ? 2 : 1) * size_t(F) * H, 2, 1.0 / std::sqrt(double(H)));
  c.w2 = bench::random_uniform<bf16>(size_t(H) * F, 3, 1.0 / std::sqrt(double(F)));
  bench::device_buffer x, w1, w2, y, z, t, ltws;
  for (auto [mem, bytes, what] : {std::tuple{&x, c.x.size() * sizeof(bf16), "X"}, std::tuple{&w1, c.w1.size() * sizeof(bf16), "W1"},
                                  std::tuple{&w2, c.w2.size() * sizeof(bf16), "W2"},
                                  std::tuple{&y, size_t(M) * F * sizeof(bf16), "Y"},
                                  std::tuple{&t, size_t(M) * F * (c.args.swiglu ? 2 : 1) * sizeof(bf16), "T"},
                                  std::tuple{&z, size_t(M) * H * sizeof(bf16), "Z"},
                                  std::tuple{&ltws, kLtWorkspaceBytes, "cuBLASLt workspace"}})
    if (status s = bench::device_alloc(*mem, bytes, c.stream, what); !s.ok()) return fail(s);
  c.dx = bench::device_ptr<bf16>(x);
  c.dw1 = bench::device_ptr<bf16>(w1);
  c.dw2 = bench::device_ptr<bf16>(w2);
  c.dy = bench::device_ptr<bf16>(y);
  c.dz = bench::device_ptr<bf16>(z);
  c.dt = bench::device_ptr<bf16>(t);
  c.lt_ws = ltws.data();
  // On c.stream and synchronized: a pageable cudaMemcpy may return before its DMA lands, and the
  // non-blocking stream would not wait for it.
  for (auto [dst, src] : {std::pair{c.dx, &c.x}, std::pair{c.dw1, &c.w1}, std::pair{c.dw2, &c.w2}})
    if (status s = cuda_status(cudaMemcpyAsync(dst, src->data(), src->size() * sizeof(bf16), cudaMemcpyHostToDevice, c.stream),
                               "uploading the inputs");
        !s.ok())
      return fail(s);
  if (status s = cuda_status(cudaStreamSynchronize(c.stream), "uploading the inputs"); !s.ok()) return fail(s);

  std::vector<bench::Row> rows;
  std::vector<BreakdownRow> parts;
  if (c.args.sync_overhead) c.workload = "sync-overhead-" + c.workload.substr(4);  // mlp-gpt3 -> sync-overhead-gpt3
  const std::string out = c.args.out_dir + "/" + c.workload;
  bool fatal = false;
  for (int m : c.args.ms) {
    fatal = !run_shape(c, m, rows, parts);
    bench::finalize(rows);  // written after every shape: a run killed later keeps what it measured
    bench::write_csv(out + ".csv", rows, env);
    bench::write_json(out + ".json", rows, env);
    if (c.args.breakdown && !parts.empty())
      if (status s = write_breakdown_csv(out + "-breakdown.csv", c.workload, parts); !s.ok())
        std::fprintf(stderr, "error: %s\n", s.to_string().c_str());
    if (fatal) break;
  }
  (void)cublasLtDestroy(c.lt);

  bench::print_table(rows, env);
  std::vector<std::string> shown;
  for (const auto* list : {&kVariants, &kDiagnosticVariants})
    for (const auto& v : *list)
      if (wanted(c, v)) shown.push_back(v);
  print_summary(rows, shown);
  bool ok = !fatal;
  for (const auto& r : rows) ok = ok && r.correct;
  std::printf("\nwrote %s/%s.csv and .json%s\n", c.args.out_dir.c_str(), c.workload.c_str(),
              ok ? "" : fatal ? "  (ABORTED: CUDA context unusable)" : "  (SOME ROWS INCORRECT)");
  return ok ? 0 : 1;
}

