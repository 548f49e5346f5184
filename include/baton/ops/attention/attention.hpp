// baton/ops/attention/attention.hpp — the host side of the attention chain of GPT-3 / LLaMA (issue 19):
// its shapes, their validation and the plan. No CUDA: everything here is tested on the CPU
// (tests/host/test_ops_attention.cpp). The op that runs the plan is baton/ops/attention/attention.cuh
// (docs/attention.md says what is built and what is not).
//
// The chain, per GPU (under tensor parallelism each GPU holds `heads` of the model's heads):
//   qkv    QKV = X W_qkv                                    X [batch, seq, hidden], QKV [batch, seq, 3*heads*head_dim]
//   attn   O   = softmax(Q K^T / sqrt(head_dim) + mask) V   per head, causal; O [batch, seq, heads*head_dim]
//   oproj  Y   = O W_o                                      Y [batch, seq, hidden]
// QKV is the [Q|K|V] layout: head h's Q at columns h*head_dim, K at heads*head_dim + h*head_dim, V
// at 2*heads*head_dim + h*head_dim. Tiles: the GEMMs 128 x 128 x 64; the attention 128 queries of
// one head of one sequence per tile, its k-loop over key blocks of 128 (causal: query block m walks
// key blocks 0..m). The batch is every stage's grid z (attention_chain.baton says why).
//
// Policies per edge (AttentionEdgePolicy):
//   none    no semaphores: the consumer PDL-launched behind its producer (griddepcontrol.wait
//           before its first load of the producer's output)
//   kblock  batonc's per-k-block policy from attention_chain.baton (attention_chain_policies.hpp):
//           qkv -> attn: an attention tile's key block j waits for the QKV tiles holding its Q and
//           block j's K and V (dsl::BoxesPolicy over the three boxes); attn -> oproj: O-proj's
//           k-block kb waits for the attention tile holding those 64 columns of its 128 rows
// Decode (a few new tokens against a KV cache) is validated and planned here, but its chain is
// not in attention_chain.baton yet: its edges have no proven policy, so the plan gives none.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "baton/dependency.hpp"
#include "baton/footprint.hpp"
#include "baton/ops/attention/attention_chain_policies.hpp"
#include "baton/ops/mlp.hpp"
#include "baton/status.hpp"
#include "baton/tile.hpp"

namespace baton::ops {

enum class AttentionMode { prefill, decode };
enum class AttentionEdgePolicy { automatic, none, kblock };

constexpr const char* to_string(AttentionMode m) { return m == AttentionMode::prefill ? "prefill" : "decode"; }
constexpr const char* to_string(AttentionEdgePolicy p) {
  switch (p) {
    case AttentionEdgePolicy::automatic: return "automatic";
    case AttentionEdgePolicy::none: return "none";
    default: return "kblock";
  }
}

// The kernels' tiles (the .baton program's numbers).
inline constexpr int kAttentionBlockM = 128;    // queries per attention tile
inline constexpr int kAttentionBlockN = 128;    // keys per k-block
inline constexpr int kAttentionHeadDim = 128;   // the only head dim of the kernel
inline constexpr int kAttentionQueryAlign = 8;  // example 88's can_implement: Sq % 8 == 0 (16 bytes of bf16)
inline constexpr int kAttentionGemmTileM = 128, kAttentionGemmTileN = 128, kAttentionGemmTileK = 64;
// Decode (baton/ops/attention/decode_attention.cuh): at most this many new tokens per sequence (one
// CTA keeps every query's running softmax in registers), keys split in blocks of this many.
inline constexpr int kAttentionDecodeMaxTokens = 16;
inline constexpr int kAttentionDecodeBlockN = 64;
// Decode's split-KV rule (attention_kv_splits): one wave of the attention kernel's CTAs, which is this
// many per SM (decode::kCtasPerSm, its __launch_bounds__; attention.cuh checks they agree), with at
// least kAttentionDecodeMinBlocksPerPart 64-key blocks per part.
inline constexpr int kAttentionDecodeCtasPerSm = 3;
inline constexpr int kAttentionDecodeMinBlocksPerPart = 4;

struct AttentionShape {
  AttentionMode mode = AttentionMode::prefill;
  int batch = 1;         // sequences
  int seq = 0;           // queries per sequence: prefill, the sequence (also its keys); decode, the new tokens m
  int kv_len = 0;        // decode: keys per sequence, the m new ones included (the cache after appending
                         // them); prefill: 0 (= seq)
  int kv_capacity = 0;   // decode: rows per sequence of the K and V caches (0: kv_len); prefill: 0
  int heads = 0;         // attention heads on this GPU
  int head_dim = kAttentionHeadDim;
  int hidden = 0;        // X's and Y's columns: heads*head_dim, or tp times that under tensor parallelism
  bool causal = true;

  std::string str() const {
    std::string s = std::string(to_string(mode)) + " b=" + std::to_string(batch);
    s += mode == AttentionMode::prefill ? " s=" + std::to_string(seq) : " m=" + std::to_string(seq) + " kv=" + std::to_string(kv_len);
    if (kv_capacity != 0) s += " cache=" + std::to_string(kv_capacity);
    s += " heads=" + std::to_string(heads) + " d=" + std::to_string(head_dim) + " hidden=" + std::to_string(hidden);
    return s + (causal ? " causal" : " non-causal");
  }
  int keys() const { return mode == AttentionMode::prefill ? seq : kv_len; }
  // Queries per sequence as the kernel runs them: seq rounded up to a multiple of 8.
  int padded_seq() const { return seq <= 0 ? 0 : ceil_div(seq, kAttentionQueryAlign) * kAttentionQueryAlign; }
  int width() const { return heads * head_dim; }  // O's columns, W_o's rows
  int tp() const { return width() > 0 ? hidden / width() : 0; }
  int64_t tokens() const { return int64_t(batch) * seq; }
  int64_t padded_tokens() const { return int64_t(batch) * padded_seq(); }
  // What the padding is, for the log (empty when seq is already a multiple of 8).
  std::string padding() const {
    if (padded_seq() == seq) return {};
    return "queries padded " + std::to_string(seq) + " -> " + std::to_string(padded_seq()) +
           " per sequence (rows " + std::to_string(seq) + ".." + std::to_string(padded_seq() - 1) +
           " of each sequence's X, QKV, O and Y are padding: computed, never read; keys past " +
           std::to_string(keys()) + " are masked)";
  }

  // Prefill grids: those of attention_chain.baton, the batch on z, S = padded_seq().
  Grid qkv_grid() const {
    if (mode == AttentionMode::decode)  // decode's GEMMs run flat over the batch's new tokens
      return Grid{int(ceil_div(padded_tokens(), int64_t(kAttentionGemmTileM))), ceil_div(3 * width(), kAttentionGemmTileN), 1};
    return Grid{ceil_div(padded_seq(), kAttentionGemmTileM), ceil_div(3 * width(), kAttentionGemmTileN), batch};
  }
  Grid attention_grid() const {
    if (mode == AttentionMode::decode) return Grid{1, heads, batch};  // one CTA per (sequence, head), x split-KV parts
    return Grid{ceil_div(padded_seq(), kAttentionBlockM), heads, batch};
  }
  Grid oproj_grid() const {
    if (mode == AttentionMode::decode)
      return Grid{int(ceil_div(padded_tokens(), int64_t(kAttentionGemmTileM))), ceil_div(hidden, kAttentionGemmTileN), 1};
    return Grid{ceil_div(padded_seq(), kAttentionGemmTileM), ceil_div(hidden, kAttentionGemmTileN), batch};
  }
  // Key blocks of a sequence: prefill, 128 keys (the padded queries are keys too); decode, 64 keys
  // (kAttentionDecodeBlockN, the unit split-KV divides).
  int key_blocks() const {
    return mode == AttentionMode::prefill ? ceil_div(padded_seq(), kAttentionBlockN) : ceil_div(kv_len, kAttentionDecodeBlockN);
  }
  // Decode: rows per sequence of the caches, and the first new token's row in them.
  int cache_rows() const { return kv_capacity > 0 ? kv_capacity : kv_len; }
  int old_keys() const { return kv_len - seq; }
  int qkv_k_blocks() const { return ceil_div(hidden, kAttentionGemmTileK); }
  int oproj_k_blocks() const { return ceil_div(width(), kAttentionGemmTileK); }

  // The exact relation of qkv -> attn (prefill): deps::causal_attention(causal_attention_shape(),
  // attention_grid()), what the kernel reads tile by tile, independent of the program's maps.
  CausalAttentionShape causal_attention_shape() const {
    return CausalAttentionShape{.seq = padded_seq(), .cols = 3 * width(), .head_dim = head_dim, .q_col = 0,
                                .k_col = width(), .v_col = 2 * width(), .head_stride = head_dim,
                                .prod_tile_m = kAttentionGemmTileM, .prod_tile_n = kAttentionGemmTileN,
                                .block_m = kAttentionBlockM, .block_n = kAttentionBlockN};
  }
  // attn -> oproj (prefill): O-proj reads O [padded_seq, width] of its sequence in row bands and
  // 64-column k-blocks, the attention writes it in 128-row x head_dim tiles:
  // deps::gemm_a(oproj_footprint(), oproj_grid()).
  footprint::GemmA oproj_footprint() const {
    return footprint::GemmA{padded_seq(), width(), kAttentionBlockM, head_dim, kAttentionGemmTileM, kAttentionGemmTileK};
  }
  // The program's parameters for this shape (prefill). Set every one: the generated Params keeps
  // the derived ones (HD, HIDDEN) as plain fields, so `{.HEADS = 8}` alone would leave HD at 1536.
  attention_gen::Params program_params() const {
    return attention_gen::Params{.B = batch, .S = padded_seq(), .HEADS = heads, .D = head_dim, .TP = tp(),
                                 .HD = width(), .HIDDEN = tp() * width()};
  }
};

// What the shape must be for the chain's kernels; the message names the shape, the field and the fix.
[[nodiscard]] inline status validate_attention(const AttentionShape& s) {
  const std::string what = "baton::ops::Attention " + s.str() + ": ";
  if (s.batch < 1 || s.seq < 1 || s.heads < 1 || s.head_dim < 1 || s.hidden < 1)
    return status(errc::invalid_argument, what + "batch, seq, heads, head_dim and hidden must be >= 1");
  if (s.head_dim != kAttentionHeadDim)
    return status(errc::not_supported, what + "head_dim " + std::to_string(s.head_dim) +
                                           " is not supported: the kernel (CUTLASS example 88's Hopper FMHA on 128 x 128 x "
                                           "128 tiles, one 128-column projection tile per head) is built for head_dim 128 only");
  if (s.hidden % s.width() != 0)
    return status(errc::invalid_argument,
                  what + "hidden " + std::to_string(s.hidden) + " must be heads*head_dim = " + std::to_string(s.width()) +
                      " (or a multiple of it under tensor parallelism: hidden = tp*heads*head_dim, each GPU holding heads of "
                      "the model's tp*heads heads)");
  if (s.mode == AttentionMode::prefill) {
    if (s.kv_len != 0 && s.kv_len != s.seq)
      return status(errc::invalid_argument, what + "kv_len " + std::to_string(s.kv_len) +
                                                ": a prefill attends its own seq tokens (kv_len 0 or seq); attending a KV "
                                                "cache is decode");
    if (!s.causal)
      return status(errc::not_supported, what + "a non-causal (bidirectional) prefill is not this chain: attention_chain.baton "
                                                "describes causal attention (query block m reads key blocks 0..m), and no "
                                                "policy is proven for one that reads every key block");
  } else {
    if (s.kv_len < s.seq)
      return status(errc::invalid_argument, what + "kv_len " + std::to_string(s.kv_len) +
                                                " must be >= the new tokens m = " + std::to_string(s.seq) +
                                                " (kv_len counts the cache's keys after appending the new ones)");
    if (s.seq > kAttentionDecodeMaxTokens)
      return status(errc::not_supported, what + "decode takes at most " + std::to_string(kAttentionDecodeMaxTokens) +
                                             " new tokens per sequence (the decode kernel keeps every query's softmax "
                                             "in one CTA's registers); more is a prefill chunk against a cache, not built");
    if (s.kv_capacity != 0 && s.kv_capacity < s.kv_len)
      return status(errc::invalid_argument, what + "kv_capacity " + std::to_string(s.kv_capacity) +
                                                " must be 0 (= kv_len) or >= kv_len " + std::to_string(s.kv_len));
  }
  if (s.mode == AttentionMode::prefill && s.kv_capacity != 0)
    return status(errc::invalid_argument, what + "kv_capacity is for decode (a prefill has no cache)");
  const int64_t widest = s.hidden > 3 * s.width() ? s.hidden : 3 * s.width();
  const int64_t key_rows = s.mode == AttentionMode::decode ? s.cache_rows() : s.keys();
  if (s.padded_tokens() * widest > int64_t(INT32_MAX) || int64_t(s.batch) * key_rows * s.width() > int64_t(INT32_MAX))
    return status(errc::not_supported, what + "a tensor exceeds 2^31 elements (the kernels' int32 extents and strides)");
  return {};
}

// A GEMM's form request (GemmFormRequest, baton/ops/mlp.hpp) applies to a GEMM whose edge is none: it
// then runs flat over the padded tokens on baton::mlp_kernels' GEMM2 forms (plan_free_gemm: 128 x 96
// / 128 / 192 / 256 tiles, split-K, swapped at small M), not on the chain's batched 128 x 128 kernel.
// A GEMM on a kblock edge is that 128 x 128 kernel (the program's tiles), so a request for it is
// refused.
struct AttentionOptions {
  AttentionEdgePolicy qkv_to_attention = AttentionEdgePolicy::automatic;
  AttentionEdgePolicy attention_to_oproj = AttentionEdgePolicy::automatic;
  std::optional<int> kv_splits;  // decode: split-KV parts per (sequence, head) (empty: the plan's)
  GemmFormRequest qkv_gemm, oproj_gemm;
  bool operator==(const AttentionOptions&) const = default;
};

struct AttentionPlan {
  AttentionShape shape{};
  AttentionEdgePolicy qkv_to_attention = AttentionEdgePolicy::none;
  AttentionEdgePolicy attention_to_oproj = AttentionEdgePolicy::none;
  int kv_splits = 1;
  // Each GEMM as it runs: with its edge none (qkv_flat / oproj_flat), flat over padded_tokens() rows in
  // the free form plan_free_gemm chose; with kblock, the batched 128 x 128 kernel (form {plain, 128,
  // split 1}, grid qkv_grid() / oproj_grid(), expected_us the cost model's time for that tiling).
  FreeGemmPlan qkv_gemm{}, oproj_gemm{};
  std::string reason;
  bool qkv_flat() const { return qkv_to_attention == AttentionEdgePolicy::none; }
  bool oproj_flat() const { return attention_to_oproj == AttentionEdgePolicy::none; }
  std::string log_line() const {
    auto form = [](const FreeGemmPlan& g, bool flat) {
      const GemmForm& f = g.form;
      std::string t = f.operands == GemmOperands::swapped ? "swapped 128x" + std::to_string(f.tile)
                                                          : "128x" + std::to_string(f.tile) + (f.cta_pairs ? " pairs" : "");
      if (f.split_k > 1) t += " split-K " + std::to_string(f.split_k);
      return t + (flat ? " flat" : " batched");
    };
    std::string s = "baton::ops::Attention " + shape.str() + ": qkv->attention " + to_string(qkv_to_attention) +
                    ", attention->oproj " + to_string(attention_to_oproj) + ", GEMMs " + form(qkv_gemm, qkv_flat()) +
                    " / " + form(oproj_gemm, oproj_flat());
    if (shape.mode == AttentionMode::decode) s += ", split-KV " + std::to_string(kv_splits);
    if (!shape.padding().empty()) s += ", " + shape.padding();
    return s + " (" + reason + ")";
  }
};

// Idle SMs in the last wave of `ctas` CTAs on `sms` SMs, one CTA per SM (what the 128x128 GEMM
// tiles and the FMHA tiles each take with their shared memory): 0 when the last wave is full.
constexpr int last_wave_idle_sms(int64_t ctas, int sms) {
  if (ctas <= 0 || sms <= 0) return 0;
  const int64_t r = ctas % sms;
  return r == 0 ? 0 : int(sms - r);
}

// Split-KV parts for decode: decode attention streams the K/V cache, so its (sequence, head) CTAs
// are split over the keys into as many parts as one wave holds (kAttentionDecodeCtasPerSm resident
// CTAs on each SM): more parts add a second, partial wave and more partial outputs for the combine
// kernel to read. Each part keeps at least kAttentionDecodeMinBlocksPerPart 64-key blocks (a part of
// one block gives its 4 warps one 16-key step each and costs a combine row all the same), and there
// are at most 64. Checked against a sweep of part counts over 12 decode shapes (batch 1-16, 8-12 heads,
// 1-16 new tokens, 777-8192 keys): docs/attention.md, "Decode on tensor cores".
constexpr int attention_kv_splits(int64_t ctas, int key_blocks, int sms) {
  if (ctas <= 0 || key_blocks <= 0 || sms <= 0) return 1;
  int64_t parts = int64_t(sms) * kAttentionDecodeCtasPerSm / ctas;
  const int64_t by_keys = key_blocks / kAttentionDecodeMinBlocksPerPart;
  if (parts > by_keys) parts = by_keys;
  if (parts > 64) parts = 64;
  return parts < 1 ? 1 : int(parts);
}

// A flat GEMM (edge none) takes the place of the chain's 128 x 128 kernel on an automatic edge when the
// cost model (mlp_cost.hpp) puts it more than this share of that kernel's time faster. The share sits
// between what per-tile waits won over the PDL chain of the same kernels on the H200 and what the
// 128 x 128 GEMMs lost to cuBLASLt's (docs/attention.md, Results); tuning (AttentionRunOptions::tune)
// times both where it matters.
inline constexpr double kAttentionFlatGemmGain = 0.05;

// The plan for a shape on `sms` SMs. Requests in `o` are checked and kept; the rest is chosen. `have`:
// the optional forms of the GEMM kernel set (MlpKernelForms) that runs the flat GEMMs.
//   prefill, per edge, automatic -> first the waits' rule, kblock when either
//     * the consumer's CTAs fit in one wave: all of them can be resident as the producer's tiles
//       retire, and each starts on the inputs already written; or
//     * the producer leaves SMs idle at its end that consumer tiles with written inputs can take:
//       its last wave leaves at least a quarter of the SMs idle, or (attn -> oproj) the attention is
//       causal over more than one query block, so its tiles walk 1..S/128 key blocks and the last
//       ones to finish run alone whatever the tile count;
//     else none: the SMs stay busy through the boundary and the waits would only cost. Then the
//     GEMM on a kblock edge goes back to none when its flat form (plan_free_gemm) is modeled more
//     than kAttentionFlatGemmGain faster than the 128 x 128 kernel the waits need.
//   decode: none on both edges (the decode chain is not in attention_chain.baton: no proven
//     policy); split-KV attention_kv_splits(batch*heads, key blocks, sms) unless asked; the GEMMs flat.
[[nodiscard]] inline result<AttentionPlan> plan_attention(const AttentionShape& s, int sms, const AttentionOptions& o = {},
                                                          const MlpKernelForms& have = {}) {
  BATON_TRY(validate_attention(s));
  const std::string what = "baton::ops::Attention " + s.str() + ": ";
  if (sms < 1) return status(errc::invalid_argument, what + "sms must be >= 1");
  AttentionPlan p;
  p.shape = s;
  const int64_t qkv_ctas = s.qkv_grid().size(), attn_tiles = s.attention_grid().size(), oproj_ctas = s.oproj_grid().size();
  if (s.mode == AttentionMode::decode) {
    if (o.qkv_to_attention == AttentionEdgePolicy::kblock || o.attention_to_oproj == AttentionEdgePolicy::kblock)
      return status(errc::not_supported, what + "kblock in decode: the decode chain (flat GEMMs over the batch's new tokens, "
                                                "split-KV attention over the cache) is not in attention_chain.baton yet, so "
                                                "no policy is proven for it; use none");
    const int kb = s.key_blocks();
    if (o.kv_splits && (*o.kv_splits < 1 || *o.kv_splits > kb))
      return status(errc::invalid_argument, what + "kv_splits = " + std::to_string(*o.kv_splits) + " must be in [1, " +
                                                std::to_string(kb) + "] (the key blocks of a sequence)");
    p.kv_splits = o.kv_splits.value_or(attention_kv_splits(attn_tiles, kb, sms));
    BATON_TRY_ASSIGN(p.qkv_gemm, plan_free_gemm(int(s.padded_tokens()), 3 * s.width(), s.hidden, sms, o.qkv_gemm, have, what + "qkv GEMM"));
    BATON_TRY_ASSIGN(p.oproj_gemm, plan_free_gemm(int(s.padded_tokens()), s.hidden, s.width(), sms, o.oproj_gemm, have, what + "oproj GEMM"));
    p.reason = "decode: PDL only (the decode chain is not in attention_chain.baton); ";
    p.reason += o.kv_splits ? std::string("split-KV asked")
                            : "split-KV " + std::to_string(p.kv_splits) + ": " + std::to_string(attn_tiles) +
                                  " (sequence, head) CTAs x " + std::to_string(p.kv_splits) + " parts of " +
                                  std::to_string(kb) + " 64-key blocks: one wave of " + std::to_string(kAttentionDecodeCtasPerSm) +
                                  " CTAs on each of " + std::to_string(sms) + " SMs, >= " +
                                  std::to_string(kAttentionDecodeMinBlocksPerPart) + " blocks a part";
    return p;
  }
  if (o.kv_splits && *o.kv_splits != 1)
    return status(errc::invalid_argument, what + "kv_splits is for decode (a prefill's query blocks fill the GPU)");
  auto choose = [&](AttentionEdgePolicy asked, int64_t consumer_ctas, int64_t producer_ctas, bool producer_tail,
                    const char* producer, const char* consumer, AttentionEdgePolicy& out) -> std::string {
    if (asked != AttentionEdgePolicy::automatic) {
      out = asked;
      return "asked";
    }
    const int idle = last_wave_idle_sms(producer_ctas, sms);
    if (consumer_ctas <= sms) {
      out = AttentionEdgePolicy::kblock;
      return std::string(consumer) + "'s " + std::to_string(consumer_ctas) + " CTAs fit one wave";
    }
    if (4 * idle >= sms) {
      out = AttentionEdgePolicy::kblock;
      return std::string(producer) + "'s last wave leaves " + std::to_string(idle) + " of " + std::to_string(sms) + " SMs idle";
    }
    if (producer_tail) {
      out = AttentionEdgePolicy::kblock;
      return std::string(producer) + " is causal over " + std::to_string(s.attention_grid().m) +
             " query blocks: its tail runs alone";
    }
    out = AttentionEdgePolicy::none;
    return std::to_string(consumer_ctas) + " " + consumer + " CTAs and a full last wave of " + producer + ": PDL, no semaphores";
  };
  std::string r1 = choose(o.qkv_to_attention, attn_tiles, qkv_ctas, false, "qkv", "attention", p.qkv_to_attention);
  std::string r2 = choose(o.attention_to_oproj, oproj_ctas, attn_tiles, s.causal && s.attention_grid().m > 1, "attention",
                                "oproj", p.attention_to_oproj);
  // The GEMMs: the flat form where the edge is none, or, on an automatic kblock edge, where the model
  // puts it more than kAttentionFlatGemmGain faster than the batched 128 x 128 kernel.
  const int tokens = int(s.padded_tokens());
  const MlpCostModel model{};
  auto gemm = [&](int n, int k, const GemmFormRequest& r, AttentionEdgePolicy asked, AttentionEdgePolicy& edge,
                  Grid batched, const char* name, std::string& why) -> result<FreeGemmPlan> {
    const bool requested = r != GemmFormRequest{};
    if (requested && asked == AttentionEdgePolicy::kblock)
      return status(errc::not_supported, what + name + " GEMM: a form request (tile, split-K, operands, CTA pairs) needs "
                                                       "its edge none; on a kblock edge it is the chain's 128 x 128 kernel");
    BATON_TRY_ASSIGN(FreeGemmPlan flat, plan_free_gemm(tokens, n, k, sms, r, have, what + name + " GEMM"));
    FreeGemmPlan tiled;
    tiled.form = GemmForm{GemmOperands::plain, kAttentionGemmTileN, 1, false};
    tiled.grid = batched;
    tiled.expected_us = mlp_gemm_cost_us(model, MlpGemmShape{tokens, n, k, kAttentionGemmTileN, 1, 1, 0}, sms);
    if (edge == AttentionEdgePolicy::none) return flat;
    if (asked == AttentionEdgePolicy::automatic && (requested || (flat.expected_us > 0 &&
                                                    flat.expected_us < (1.0 - kAttentionFlatGemmGain) * tiled.expected_us))) {
      edge = AttentionEdgePolicy::none;
      char buf[200];
      if (requested) std::snprintf(buf, sizeof buf, "none: its GEMM's form was asked for");
      else std::snprintf(buf, sizeof buf, "none: the flat %s GEMM is modeled %.0f us against %.0f us for the 128x128 one the waits need",
                         name, flat.expected_us, tiled.expected_us);
      why += std::string(" -> ") + buf;
      return flat;
    }
    return tiled;
  };
  BATON_TRY_ASSIGN(p.qkv_gemm, gemm(3 * s.width(), s.hidden, o.qkv_gemm, o.qkv_to_attention, p.qkv_to_attention,
                                    s.qkv_grid(), "qkv", r1));
  BATON_TRY_ASSIGN(p.oproj_gemm, gemm(s.hidden, s.width(), o.oproj_gemm, o.attention_to_oproj, p.attention_to_oproj,
                                      s.oproj_grid(), "oproj", r2));
  p.reason = "qkv->attention: " + r1 + "; attention->oproj: " + r2;
  return p;
}

}  // namespace baton::ops
