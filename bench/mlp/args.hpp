// bench/mlp/args.hpp — baton_bench_mlp's command line: presets, options, --help (scripts run it:
// its options and its text stay as they are).
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "common/cli.hpp"

namespace baton_bench::mlp {

using namespace baton;

const std::vector<int> kGpt3M = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048};
constexpr int kGpt3Hidden = 12288, kGpt3Ffn = 6144;
constexpr int kLlamaHidden = 8192, kLlamaFfn = 2752;
const std::vector<std::string> kVariants = {"cutlass-stream",        "cutlass-graph",           "cutlass-pdl-graph",
                                            "cutlass-streamk-graph", "cutlass-persistent-graph", "cublaslt-graph",
                                            "baton-kblock",          "baton-row",               "baton-auto",
                                            "cutlass-wide-graph",    "cutlass-wide2-graph",     "baton-kblock-gen",
                                            "baton-row-gen",         "baton-plan"};
// Asked for by name only (not in the default "all"): the op and cuBLASLt launched straight onto the
// stream, no graph, to compare with their graph rows in one run (bench/mlp.cu).
const std::vector<std::string> kDiagnosticVariants = {"baton-auto-stream", "baton-plan-stream", "cublaslt-stream"};

struct Args {
  std::vector<int> ms = kGpt3M;
  int hidden = kGpt3Hidden, ffn = kGpt3Ffn;
  bool swiglu = false;
  int split1 = 0, split2 = 0;  // 0: sm90::choose_split_k per shape
  int group_m = 0;             // 0: baton::ops::mlp_group_m per shape
  int l2_prefetch_mb = 0;      // baton-auto's L2 prefetch of W2 (0: off, the op's default)
  int swap_gemm2 = -1;         // baton-auto's swapped GEMM2 (-1: automatic, the op's default; 0 off; 1 on)
  int swap_gemm1 = -1;         // baton-auto's swapped GEMM1 (the same)
  int cta_pairs = 0;           // baton-auto's GemmFormRequest::cta_pairs for both GEMMs (0: off, the op's default; 1: tuning tries them)
  int band_pairs = 1;          // baton-auto's tuning tries band pairs (MlpRunOptions::tune_band_pairs; 1, the op's default)
  int persistent = 1;          // baton-auto's tuning tries persistent CTAs (MlpRunOptions::tune_persistent; 1, the op's default)
  int stream_k = 0;            // baton-auto's tuning tries stream-K (MlpRunOptions::tune_stream_k; 0, the op's default)
  int pdl = -1;                // baton-auto's MlpOptions::launch (-1: the op's rule; tuning tries the other)
  int breakdown = 1;           // time each GEMM of baton-auto and cuBLASLt alone (mlp-*-breakdown.csv)
  int sync_overhead = 0;       // 1: only the wait path's cost, GEMM2 with every semaphore posted (sync-overhead-*)
  int reps = 50;
  int interleave = 1;  // 1: the variants of a shape timed in interleaved rounds; 0: one after another
  int iters = 10;  // MLP iterations per timed repetition (per graph)
  int warmup = 3;  // untimed repetitions first
  int check_rows = 16;
  int trace_m = 0;
  int timeout_s = 300;
  std::vector<std::string> variants = kVariants;
  std::string out_dir = ".";
};

inline void usage() {
  std::printf(
      "usage: baton_bench_mlp [--preset gpt3|llama] [--m M1,M2,...] [--hidden H] [--ffn F] [--act gelu|swiglu]\n"
      "                       [--split-k auto|S1,S2] [--group-m auto|G] [--l2-prefetch-mb MB] [--swap-gemm2 auto|0|1]\n"
      "                       [--swap-gemm1 auto|0|1] [--cta-pairs 0|1] [--band-pairs 0|1] [--persistent 0|1]\n"
      "                       [--stream-k 0|1]\n"
      "                       [--pdl auto|0|1]\n"
      "                       [--breakdown 0|1] [--sync-overhead 0|1] [--reps R]\n"
      "                       [--iters-per-graph I] [--warmup W] [--order interleaved|in-turn] [--check-rows N]\n"
      "                       [--variants V1,V2,...] [--trace M] [--timeout-s S] [--out-dir DIR]\n"
      "Transformer MLP, bf16 with fp32 accumulation, X [M,H], W2 [H,F], Z = Y W2^T with\n"
      "  gelu:   Y = GeLU(X W1^T), W1 [F,H]                  (GPT-3)\n"
      "  swiglu: Y = SiLU(X Wg^T) * (X Wu^T), one GEMM over W1 [2F,H] with gate/up rows interleaved (LLaMA)\n"
      "CUTLASS sm90 GEMMs on a stream / in a graph / with PDL, CUTLASS Stream-K and persistent GemmUniversal,\n"
      "cuBLASLt in a graph, and baton (KBlockPolicy, RowPolicy, and a rule-picked 'auto') chains with PDL in\n"
      "a graph. Every variant's Z is checked (NaN-poisoned outputs, CPU fp64 reference on sampled rows) before\n"
      "and after timing. Writes DIR/mlp-gpt3.csv and .json (mlp-llama.*; mlp-custom.* for other shapes).\n"
      "  --preset gpt3        H=12288, F=6144, GeLU, M=1,2,4,...,2048 (the default)\n"
      "  --preset llama       H=8192, F=2752, SwiGLU, M=1,2,4,...,2048\n"
      "  --m, --hidden, --ffn any shape; H and F must be multiples of 8 (16-byte TMA rows); M >= 1\n"
      "  --act gelu|swiglu    GEMM1's activation (default: the preset's)\n"
      "  --split-k auto|S1,S2 split-K parts of GEMM1 and GEMM2 for every baton-GEMM variant (default auto:\n"
      "                       baton::sm90::choose_split_k for the shape and the SM count)\n"
      "  --group-m auto|G     tile order baton::Grouped{G} of both GEMMs for every baton-GEMM variant (1: row-major;\n"
      "                       default auto: baton::ops::mlp_group_m)\n"
      "  --l2-prefetch-mb MB  megabytes of W2 that baton-auto's GEMM1 prefetches into L2 as it ends (default 0: off);\n"
      "                       its tuning also times the plan without it\n"
      "  --swap-gemm2 auto|0|1 baton-auto's GEMM2 as W2 x Y^T in tiles of 32 or 144-224 tokens (default\n"
      "                       auto: the cost model weighs the wide tiles at 32 < m <= 1152; tuning tries both forms there)\n"
      "  --swap-gemm1 auto|0|1 the same for GEMM1 (W1 x X^T; the 32-token form with GeLU only)\n"
      "  --cta-pairs 0|1      baton-auto's 128x96 GEMMs as CTA pairs (1x2 clusters multicasting A; default 0;\n"
      "                       1: asked for, and tuning tries them against the other plans from M = 128 on)\n"
      "  --band-pairs 0|1     baton-auto's tuning also tries the 128x192 GEMMs as band pairs (2x1 clusters\n"
      "                       multicasting the weights) from two row bands on (default 1, the op's default)\n"
      "  --persistent 0|1     baton-auto's tuning also tries persistent CTAs (one CTA per SM looping over tiles)\n"
      "                       on GEMMs of more tiles than SMs (default 1, the op's default)\n"
      "  --stream-k 0|1       baton-auto's tuning also tries stream-K (persistent CTAs sharing every tile's\n"
      "                       k-blocks) where a GEMM's tiles leave its last wave part-empty (default 0, the\n"
      "                       op's default)\n"
      "  --pdl auto|0|1       baton-auto's GEMM2 launch with policy none: PDL (weights first) or after GEMM1\n"
      "                       (default auto: PDL when GEMM1 runs in one wave; tuning times the other too)\n"
      "  --breakdown 0|1      also time baton-auto's and cuBLASLt's GEMM1 and GEMM2 alone, each in a graph of\n"
      "                       its own, and write DIR/<workload>-breakdown.csv: chain = GEMM1 + GEMM2 + rest\n"
      "                       (rest: what the chain costs beyond its GEMMs run alone; default 1)\n"
      "  --sync-overhead 0|1  instead of the chains: GEMM2 alone with every semaphore it waits on already posted\n"
      "                       (GEMM1 run first for every epoch GEMM2 will wait on), per policy (kblock, row),\n"
      "                       against the same GEMM2 without waits: the wait path's pure cost. Writes\n"
      "                       DIR/sync-overhead-<preset>.csv and .json (default 0)\n"
      "  --reps R             timed repetitions, median reported (default 50; BENCHMARKS.md wants >= 50)\n"
      "  --iters-per-graph I  MLP iterations per repetition / per graph (default 10)\n"
      "  --warmup W           untimed repetitions before timing (default 3)\n"
      "  --order interleaved|in-turn  how a shape's variants are timed: in rounds, one repetition of every\n"
      "                       variant per round, each round starting at the next variant, so clock and power\n"
      "                       drift hit them alike (default interleaved); or each variant's repetitions\n"
      "                       together, one variant after another (in-turn; every variant built first either way). The CSV's\n"
      "                       `order` column says which\n"
      "  --check-rows N       rows of Z checked against the CPU reference, spread evenly, plus the last (default 16)\n"
      "  --variants ...       subset of: cutlass-stream,cutlass-graph,cutlass-pdl-graph,cutlass-streamk-graph,\n"
      "                       cutlass-persistent-graph,cublaslt-graph,baton-kblock,baton-row,baton-auto,\n"
      "                       cutlass-wide-graph,cutlass-wide2-graph,baton-kblock-gen,baton-row-gen,baton-plan\n"
      "                       (default: all; baton-plan is the op as create() gives it with no tuning); also, by\n"
      "                       name only, the diagnostics baton-auto-stream, baton-plan-stream, cublaslt-stream: the\n"
      "                       same objects launched straight onto the stream, no graph (not baselines)\n"
      "  --trace M            also write DIR/timeline-<workload>-m<M>.json (per-tile Perfetto timeline of the\n"
      "                       baton-row chain) and ...-m<M>-cutlass-pdl.json (the PDL baseline); M must be one\n"
      "                       of the measured M; plot with scripts/plot_timeline.py\n"
      "  --timeout-s S        abort the whole run after S seconds (default 300; 0: never)\n");
}

inline bool parse(int argc, char** argv, Args& a) {
  auto bad = [](const std::string& what) {
    std::fprintf(stderr, "error: %s (see --help)\n", what.c_str());
    return false;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (k == "--help" || k == "-h") {
      usage();
      std::exit(0);
    }
    if (i + 1 >= argc) return bad(k + " needs a value");
    const char* v = argv[++i];
    auto int_opt = [&](long lo, long hi, int& out) {
      if (!bench::parse_int(v, lo, hi, out))
        return bad(k + " '" + v + "': expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
      return true;
    };
    if (k == "--preset") {
      const std::string name = v;
      if (name == "gpt3") {
        a.hidden = kGpt3Hidden;
        a.ffn = kGpt3Ffn;
        a.swiglu = false;
      } else if (name == "llama") {
        a.hidden = kLlamaHidden;
        a.ffn = kLlamaFfn;
        a.swiglu = true;
      } else {
        return bad("unknown preset '" + name + "' (known: gpt3, llama)");
      }
      a.ms = kGpt3M;
    } else if (k == "--act") {
      const std::string act = v;
      if (act != "gelu" && act != "swiglu") return bad("--act '" + act + "': expected gelu or swiglu");
      a.swiglu = act == "swiglu";
    } else if (k == "--group-m") {
      if (std::string(v) == "auto") a.group_m = 0;
      else if (!int_opt(1, 1 << 20, a.group_m)) return false;
    } else if (k == "--l2-prefetch-mb") {
      if (!int_opt(0, 4096, a.l2_prefetch_mb)) return false;
    } else if (k == "--swap-gemm1") {
      if (std::string(v) == "auto") a.swap_gemm1 = -1;
      else if (!int_opt(0, 1, a.swap_gemm1)) return false;
    } else if (k == "--swap-gemm2") {
      if (std::string(v) == "auto") a.swap_gemm2 = -1;
      else if (!int_opt(0, 1, a.swap_gemm2)) return false;
    } else if (k == "--cta-pairs") {
      if (!int_opt(0, 1, a.cta_pairs)) return false;
    } else if (k == "--band-pairs") {
      if (!int_opt(0, 1, a.band_pairs)) return false;
    } else if (k == "--persistent") {
      if (!int_opt(0, 1, a.persistent)) return false;
    } else if (k == "--stream-k") {
      if (!int_opt(0, 1, a.stream_k)) return false;
    } else if (k == "--pdl") {
      if (std::string(v) == "auto") a.pdl = -1;
      else if (!int_opt(0, 1, a.pdl)) return false;
    } else if (k == "--breakdown") {
      if (!int_opt(0, 1, a.breakdown)) return false;
    } else if (k == "--sync-overhead") {
      if (!int_opt(0, 1, a.sync_overhead)) return false;
    } else if (k == "--split-k") {
      const std::string sk = v;
      if (sk == "auto") {
        a.split1 = a.split2 = 0;
      } else {
        const auto parts = bench::split_commas(sk);
        if (parts.size() != 2 || !bench::parse_int(parts[0].c_str(), 1, 64, a.split1) || !bench::parse_int(parts[1].c_str(), 1, 64, a.split2))
          return bad("--split-k '" + sk + "': expected auto or S1,S2 with 1 <= S <= 64");
      }
    } else if (k == "--m") {
      a.ms.clear();
      for (const auto& t : bench::split_commas(v)) {
        int m = 0;
        if (!bench::parse_int(t.c_str(), 1, 1 << 20, m)) return bad("--m entry '" + t + "': expected an integer in [1, 1048576]");
        a.ms.push_back(m);
      }
    } else if (k == "--hidden") {
      if (!int_opt(8, 1 << 20, a.hidden)) return false;
    } else if (k == "--ffn") {
      if (!int_opt(8, 1 << 20, a.ffn)) return false;
    } else if (k == "--reps") {
      if (!int_opt(1, 100000, a.reps)) return false;
    } else if (k == "--iters-per-graph") {
      if (!int_opt(1, 10000, a.iters)) return false;
    } else if (k == "--warmup") {
      if (!int_opt(0, 10000, a.warmup)) return false;
    } else if (k == "--order") {
      const std::string o = v;
      if (o == "interleaved") a.interleave = 1;
      else if (o == "in-turn") a.interleave = 0;
      else return bad("--order '" + o + "': expected interleaved or in-turn");
    } else if (k == "--check-rows") {
      if (!int_opt(1, 1024, a.check_rows)) return false;
    } else if (k == "--trace") {
      if (!int_opt(1, 1 << 20, a.trace_m)) return false;
    } else if (k == "--timeout-s") {
      if (!int_opt(0, 86400, a.timeout_s)) return false;
    } else if (k == "--variants") {
      a.variants.clear();
      for (const auto& t : bench::split_commas(v)) {
        if (std::find(kVariants.begin(), kVariants.end(), t) == kVariants.end() &&
            std::find(kDiagnosticVariants.begin(), kDiagnosticVariants.end(), t) == kDiagnosticVariants.end())
          return bad("unknown variant '" + t + "'");
        a.variants.push_back(t);
      }
    } else if (k == "--out-dir") {
      a.out_dir = v;
    } else {
      return bad("unknown option " + k);
    }
  }
  // GEMM1 has n = F, k = H; GEMM2 n = H, k = F: TMA needs 16-byte row strides of A, B and D.
  if (a.hidden % 8 != 0 || a.ffn % 8 != 0)
    return bad("--hidden " + std::to_string(a.hidden) + " / --ffn " + std::to_string(a.ffn) +
               ": both must be multiples of 8 (the sm90 GEMM's TMA needs 16-byte row strides; pad the weights)");
  if (a.trace_m != 0 && std::find(a.ms.begin(), a.ms.end(), a.trace_m) == a.ms.end())
    return bad("--trace " + std::to_string(a.trace_m) + " is not one of the measured M (add it to --m)");
  std::sort(a.ms.begin(), a.ms.end());
  a.ms.erase(std::unique(a.ms.begin(), a.ms.end()), a.ms.end());
  std::error_code ec;
  std::filesystem::create_directories(a.out_dir, ec);
  if (!std::filesystem::is_directory(a.out_dir, ec)) return bad("--out-dir '" + a.out_dir + "' is not a directory and cannot be created");
  if (a.reps < 50) std::fprintf(stderr, "note: --reps %d < 50 (BENCHMARKS.md wants >= 50 for reported numbers)\n", a.reps);
  return true;
}

}  // namespace baton_bench::mlp
