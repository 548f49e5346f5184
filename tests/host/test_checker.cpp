// Host tests for the soundness checker (baton/dependency.hpp): a corpus of unsound policies that
// must be rejected with the exact missed dependency, sound policies that must be accepted, and
// over-synchronization reporting.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "baton/dependency.hpp"
#include "baton/footprint.hpp"
#include "baton/policy.hpp"
#include "baton/tile.hpp"
#include "host_test_printers.hpp"

namespace {

using namespace baton;
using footprint::AllOfBatch;
using footprint::ConvHalo;
using footprint::GemmA;
using footprint::Identity;
using footprint::Transpose;

// ============================================================================================
// User-defined policies (each satisfies SyncPolicy). Most carry a realistic bug.
// ============================================================================================

// One semaphore per row of producer tiles per batch, like RowPolicy.
struct RowSems {
  Grid producer{};
  Grid producer_grid() const { return producer; }
  int num_semaphores() const { return producer.m * producer.z; }
  int post_index(Tile t) const { return t.z * producer.m + t.m; }
  int row_sem(int m, int z) const { return z * producer.m + m; }
  WaitSpec whole_row(int m, int z) const {
    return WaitSpec{row_sem(m, z), uint32_t(producer.n), uint32_t(producer.n)};
  }
};

// Bug: the loop over the rows of the footprint stops one row early (`m < m1 - 1`).
struct RowRangeDropsLast : RowSems {
  GemmA fp{};
  int k_blocks() const { return fp.k_blocks(); }
  template <class F>
  bool for_each_wait(Tile t, int k, F&& f) const {
    if (k != 0) return true;
    TileRect r = fp.rows_of(t);
    for (int m = r.m0; m < r.m1 - 1; ++m)
      if (!f(whole_row(m, t.z))) return false;
    return true;
  }
};

// Bug: waits on the previous row (an off-by-one in the tile -> row computation), clamped at 0.
struct RowPrevious : RowSems {
  int kb = 1;
  int k_blocks() const { return kb; }
  template <class F>
  bool for_each_wait(Tile t, int k, F&& f) const {
    if (k != 0) return true;
    return f(whole_row(t.m > 0 ? t.m - 1 : 0, t.z));
  }
};

// Bug: assumes consumer and producer tiles have the same height (waits on row t.m).
struct RowAssumesEqualTiles : RowSems {
  int kb = 1;
  int k_blocks() const { return kb; }
  template <class F>
  bool for_each_wait(Tile t, int k, F&& f) const {
    if (k != 0) return true;
    if (t.m >= producer.m) return true;
    return f(whole_row(t.m, t.z));
  }
};

// Row waits with configurable count / per_epoch (partial count, wrong per_epoch, too many).
struct RowWaitCounts : RowSems {
  GemmA fp{};
  uint32_t count = 0;
  uint32_t per_epoch = 0;
  int k_blocks() const { return fp.k_blocks(); }
  template <class F>
  bool for_each_wait(Tile t, int k, F&& f) const {
    if (k != 0) return true;
    TileRect r = fp.rows_of(t);
    for (int m = r.m0; m < r.m1; ++m)
      if (!f(WaitSpec{row_sem(m, t.z), count, per_epoch})) return false;
    return true;
  }
};

// Bug: the wait ignores the batch index (waits on batch 0's row semaphore).
struct RowIgnoresBatch : RowSems {
  GemmA fp{};
  int k_blocks() const { return fp.k_blocks(); }
  template <class F>
  bool for_each_wait(Tile t, int k, F&& f) const {
    if (k != 0) return true;
    TileRect r = fp.rows_of(t);
    for (int m = r.m0; m < r.m1; ++m)
      if (!f(whole_row(m, 0))) return false;
    return true;
  }
};

// Bug: the semaphore array is sized for one batch (num_semaphores forgets z).
struct RowForgotBatches : RowSems {
  GemmA fp{};
  int num_semaphores() const { return producer.m; }
  int k_blocks() const { return fp.k_blocks(); }
  template <class F>
  bool for_each_wait(Tile t, int k, F&& f) const {
    if (k != 0) return true;
    TileRect r = fp.rows_of(t);
    for (int m = r.m0; m < r.m1; ++m)
      if (!f(whole_row(m, t.z))) return false;
    return true;
  }
};

// Bug: `return true` inside the loop: only the first row is waited on.
struct StopsAfterFirstWait : RowSems {
  GemmA fp{};
  int k_blocks() const { return fp.k_blocks(); }
  template <class F>
  bool for_each_wait(Tile t, int k, F&& f) const {
    if (k != 0) return true;
    TileRect r = fp.rows_of(t);
    for (int m = r.m0; m < r.m1; ++m) {
      f(whole_row(m, t.z));
      return true;  // BUG
    }
    return true;
  }
};

// One semaphore per producer tile.
struct TileSems {
  Grid producer{};
  Grid producer_grid() const { return producer; }
  int num_semaphores() const { return int(producer.size()); }
  int post_index(Tile t) const { return producer.linear(t); }
  template <class F>
  bool wait_rect(TileRect r, F&& f) const {
    for (int z = r.z0; z < r.z1; ++z)
      for (int m = r.m0; m < r.m1; ++m)
        for (int n = r.n0; n < r.n1; ++n)
          if (!f(WaitSpec{producer.linear(Tile{m, n, z}), 1u, 1u})) return false;
    return true;
  }
};

// Bug: per-k-block waits lag one k-block behind (waits for k-1's tiles at k-block k).
struct LaggingKBlock : TileSems {
  GemmA fp{};
  int k_blocks() const { return fp.k_blocks(); }
  template <class F>
  bool for_each_wait(Tile t, int k, F&& f) const {
    return wait_rect(fp.rect(t, k > 0 ? k - 1 : 0), f);
  }
};

// Bug: meant to wait once per tile, but waits on k-block 0's tiles instead of rect_all.
struct FirstKBlockOnly : TileSems {
  GemmA fp{};
  int k_blocks() const { return fp.k_blocks(); }
  template <class F>
  bool for_each_wait(Tile t, int k, F&& f) const {
    if (k != 0) return true;
    return wait_rect(fp.rect(t, 0), f);
  }
};

// Bug: maps k-block k to producer column k (assumes cons_tile_k == prod_tile_n).
struct KBlockAsColumn : TileSems {
  GemmA fp{};
  int k_blocks() const { return fp.k_blocks(); }
  template <class F>
  bool for_each_wait(Tile t, int k, F&& f) const {
    TileRect r = fp.rows_of(t);
    r.n0 = k;
    r.n1 = k + 1;
    return wait_rect(r, f);
  }
};

// Bug: never waits.
struct NeverWaits : TileSems {
  int k_blocks() const { return 1; }
  template <class F>
  bool for_each_wait(Tile, int, F&&) const { return true; }
};

// One semaphore per column of producer tiles; bug: count = tiles per row instead of per column.
struct ColumnCountMixup {
  Grid producer{};
  Grid producer_grid() const { return producer; }
  int num_semaphores() const { return producer.n * producer.z; }
  int post_index(Tile t) const { return t.z * producer.n + t.n; }
  int k_blocks() const { return 1; }
  template <class F>
  bool for_each_wait(Tile t, int k, F&& f) const {
    if (k != 0) return true;
    // Transposed consumer: reads producer column t.m.
    return f(WaitSpec{t.z * producer.n + t.m, uint32_t(producer.n), uint32_t(producer.m)});
  }
};

// One semaphore per band of `band` rows of producer tiles (a Grouped-order companion).
struct BandPolicy {
  Grid producer{};
  GemmA fp{};
  int band = 2;
  bool span_bug = false;    // waits only on the band of the first row read
  bool ragged_bug = false;  // assumes every band is full (band * n posters)
  int bands() const { return ceil_div(producer.m, band); }
  Grid producer_grid() const { return producer; }
  int num_semaphores() const { return bands() * producer.z; }
  int post_index(Tile t) const { return t.z * bands() + t.m / band; }
  int k_blocks() const { return fp.k_blocks(); }
  uint32_t posters(int b) const {
    int rows = std::min(producer.m, (b + 1) * band) - b * band;
    return uint32_t((ragged_bug ? band : rows) * producer.n);
  }
  template <class F>
  bool for_each_wait(Tile t, int k, F&& f) const {
    if (k != 0) return true;
    TileRect r = fp.rows_of(t);
    if (r.m0 >= r.m1) return true;  // note: rows_of leaves the n range empty
    int b0 = r.m0 / band, b1 = span_bug ? b0 : (r.m1 - 1) / band;
    for (int b = b0; b <= b1; ++b)
      if (!f(WaitSpec{t.z * bands() + b, posters(b), posters(b)})) return false;
    return true;
  }
};

// One semaphore per 2x2 quad of producer tiles; bug: the consumer swaps m and n.
struct QuadSwapped {
  Grid producer{};
  int qn() const { return ceil_div(producer.n, 2); }
  Grid producer_grid() const { return producer; }
  int num_semaphores() const { return ceil_div(producer.m, 2) * qn() * producer.z; }
  int post_index(Tile t) const { return (t.z * ceil_div(producer.m, 2) + t.m / 2) * qn() + t.n / 2; }
  int k_blocks() const { return 1; }
  uint32_t posters(int qm, int qnn) const {
    return uint32_t((std::min(producer.m, 2 * qm + 2) - 2 * qm) * (std::min(producer.n, 2 * qnn + 2) - 2 * qnn));
  }
  template <class F>
  bool for_each_wait(Tile t, int k, F&& f) const {
    if (k != 0) return true;
    int qm = t.n / 2, qnn = t.m / 2;  // BUG: swapped
    return f(WaitSpec{(t.z * ceil_div(producer.m, 2) + qm) * qn() + qnn, posters(qm, qnn), posters(qm, qnn)});
  }
};

// A 1-D stencil footprint that forgets to clip at the grid border.
struct Stencil1D {
  int k_blocks() const { return 1; }
  TileRect rect(Tile t, int) const { return rect_all(t); }
  TileRect rect_all(Tile t) const { return TileRect{t.m - 1, t.m + 2, t.n, t.n + 1, t.z, t.z + 1}; }
};

static_assert(SyncPolicy<RowRangeDropsLast>);
static_assert(SyncPolicy<RowPrevious>);
static_assert(SyncPolicy<RowAssumesEqualTiles>);
static_assert(SyncPolicy<RowWaitCounts>);
static_assert(SyncPolicy<RowIgnoresBatch>);
static_assert(SyncPolicy<RowForgotBatches>);
static_assert(SyncPolicy<StopsAfterFirstWait>);
static_assert(SyncPolicy<LaggingKBlock>);
static_assert(SyncPolicy<FirstKBlockOnly>);
static_assert(SyncPolicy<KBlockAsColumn>);
static_assert(SyncPolicy<NeverWaits>);
static_assert(SyncPolicy<ColumnCountMixup>);
static_assert(SyncPolicy<BandPolicy>);
static_assert(SyncPolicy<QuadSwapped>);
static_assert(Footprint<Stencil1D>);

// ============================================================================================
// The unsound corpus.
// ============================================================================================

struct UnsoundCase {
  std::string name;
  std::function<CheckReport(const std::string&)> run;
  errc code = errc::unsound_policy;
  // For unsound_policy: the exact counterexample.
  Tile consumer{};
  int k_block = 0;
  Tile producer{};
  int sem = -1;
  std::vector<std::string> contains;  // further substrings of the message
};

template <class P>
std::function<CheckReport(const std::string&)> check(P p, DependencyRelation rel) {
  return [p, rel](const std::string& name) { return check_soundness(p, rel, name); };
}

std::string no_wait(int sem) { return "no wait on semaphore " + std::to_string(sem) + " before or at this k-block"; }

std::vector<UnsoundCase> unsound_corpus() {
  std::vector<UnsoundCase> v;

  // --- GEMM chains (consumer reads its rows of the producer's output C[M, K]) -------------
  {  // 1. Row loop stops one row early: consumer tile 64 rows = 2 producer rows, waits 1.
    GemmA fp{128, 64, 32, 32, 64, 64};
    RowRangeDropsLast p;
    p.producer = fp.producer_grid();
    p.fp = fp;
    v.push_back({"row_range_drops_last", check(p, deps::gemm_a(fp, Grid{2, 2, 1})), errc::unsound_policy,
                 Tile{0, 0, 0}, 0, Tile{1, 0, 0}, 1, {no_wait(1)}});
  }
  {  // 2. Waits on the previous row.
    GemmA fp{128, 64, 32, 32, 32, 64};
    RowPrevious p;
    p.producer = fp.producer_grid();
    v.push_back({"row_previous", check(p, deps::gemm_a(fp, Grid{4, 2, 1})), errc::unsound_policy,
                 Tile{1, 0, 0}, 0, Tile{1, 0, 0}, 1, {no_wait(1)}});
  }
  {  // 3. RowPolicy whose footprint has cons_tile_m = producer tile_m, but the consumer's is 2x.
    GemmA truth{128, 64, 32, 32, 64, 32};
    GemmA wrong{128, 64, 32, 32, 32, 32};
    RowPolicy<GemmA> p{truth.producer_grid(), wrong};
    v.push_back({"row_footprint_too_few_rows", check(p, deps::gemm_a(truth, Grid{2, 3, 1})),
                 errc::unsound_policy, Tile{0, 0, 0}, 0, Tile{1, 0, 0}, 1, {no_wait(1)}});
  }
  {  // 4. Consumer tiles half the producer's height, policy waits on row t.m.
    GemmA fp{64, 64, 32, 32, 16, 64};
    RowAssumesEqualTiles p;
    p.producer = fp.producer_grid();
    v.push_back({"row_assumes_equal_tiles", check(p, deps::gemm_a(fp, Grid{4, 1, 1})), errc::unsound_policy,
                 Tile{1, 0, 0}, 0, Tile{0, 0, 0}, 0, {no_wait(0)}});
  }
  {  // 5. Partial count: waits for n-1 of the row's n posts.
    GemmA fp{64, 96, 32, 32, 32, 96};
    RowWaitCounts p;
    p.producer = fp.producer_grid();
    p.fp = fp;
    p.count = 2;
    p.per_epoch = 3;
    v.push_back({"row_partial_count", check(p, deps::gemm_a(fp, Grid{2, 2, 1})), errc::unsound_policy,
                 Tile{0, 0, 0}, 0, Tile{0, 0, 0}, 0,
                 {"a wait on semaphore 0 for 2 of its 3 posts does not prove any particular tile posted"}});
  }
  {  // 6. count = 0: a no-op wait.
    GemmA fp{64, 96, 32, 32, 32, 96};
    RowWaitCounts p;
    p.producer = fp.producer_grid();
    p.fp = fp;
    p.count = 0;
    p.per_epoch = 3;
    v.push_back({"row_zero_count", check(p, deps::gemm_a(fp, Grid{2, 2, 1})), errc::unsound_policy,
                 Tile{0, 0, 0}, 0, Tile{0, 0, 0}, 0, {"for 0 of its 3 posts"}});
  }
  {  // 7. Batch index ignored in the wait.
    GemmA fp{64, 64, 32, 32, 32, 64};
    RowIgnoresBatch p;
    p.producer = fp.producer_grid(2);
    p.fp = fp;
    v.push_back({"row_ignores_batch", check(p, deps::gemm_a(fp, Grid{2, 1, 2})), errc::unsound_policy,
                 Tile{0, 0, 1}, 0, Tile{0, 0, 1}, 2, {no_wait(2)}});
  }
  {  // 8. Early `return true` inside the wait loop.
    GemmA fp{128, 64, 32, 32, 96, 64};
    StopsAfterFirstWait p;
    p.producer = fp.producer_grid();
    p.fp = fp;
    v.push_back({"stops_after_first_wait", check(p, deps::gemm_a(fp, Grid{2, 1, 1})), errc::unsound_policy,
                 Tile{0, 0, 0}, 0, Tile{1, 0, 0}, 1, {no_wait(1)}});
  }
  {  // 9. Per-k-block waits lagging one k-block.
    GemmA fp{64, 128, 32, 64, 32, 32};  // k-blocks 0,1 read producer column 0; 2,3 column 1
    LaggingKBlock p;
    p.producer = fp.producer_grid();
    p.fp = fp;
    v.push_back({"kblock_lags_one", check(p, deps::gemm_a(fp, Grid{2, 1, 1})), errc::unsound_policy,
                 Tile{0, 0, 0}, 2, Tile{0, 1, 0}, 1, {no_wait(1)}});
  }
  {  // 10. Waits only for the first k-block's tiles, once, for a per-k dependency.
    GemmA fp{64, 128, 32, 32, 32, 32};
    FirstKBlockOnly p;
    p.producer = fp.producer_grid();
    p.fp = fp;
    v.push_back({"waits_first_kblock_only", check(p, deps::gemm_a(fp, Grid{2, 2, 1})), errc::unsound_policy,
                 Tile{0, 0, 0}, 1, Tile{0, 1, 0}, 1, {no_wait(1)}});
  }
  {  // 11. k-block k mapped to producer column k while a k-block spans two producer columns.
    GemmA fp{64, 256, 32, 32, 32, 64};
    KBlockAsColumn p;
    p.producer = fp.producer_grid();
    p.fp = fp;
    v.push_back({"kblock_as_column", check(p, deps::gemm_a(fp, Grid{2, 1, 1})), errc::unsound_policy,
                 Tile{0, 0, 0}, 0, Tile{0, 1, 0}, 1, {no_wait(1)}});
  }
  {  // 12. KBlockPolicy built with the wrong producer tile height (64 instead of 32).
    GemmA truth{128, 64, 32, 32, 32, 32};
    GemmA wrong{128, 64, 64, 32, 32, 32};
    KBlockPolicy<GemmA> p{truth.producer_grid(), wrong};
    v.push_back({"kblock_wrong_prod_tile_m", check(p, deps::gemm_a(truth, Grid{4, 1, 1})),
                 errc::unsound_policy, Tile{1, 0, 0}, 0, Tile{1, 0, 0}, 2, {no_wait(2)}});
  }
  {  // 13. Band semaphores (Grouped companion): waits only the first band a consumer tile reads.
    GemmA fp{192, 64, 32, 32, 48, 64};  // consumer tile 1 = rows 48..95 = producer rows 1..2
    BandPolicy p;
    p.producer = fp.producer_grid();
    p.fp = fp;
    p.band = 2;
    p.span_bug = true;
    v.push_back({"band_misses_second_band", check(p, deps::gemm_a(fp, Grid{4, 1, 1})), errc::unsound_policy,
                 Tile{1, 0, 0}, 0, Tile{2, 0, 0}, 1, {no_wait(1)}});
  }
  // --- transposed consumers ---------------------------------------------------------------
  {  // 14. Transposed consumer using an Identity footprint.
    Grid g{2, 3, 1};
    TilePolicy<Identity> p{g};
    v.push_back({"transposed_with_identity", check(p, deps::transposed(g)), errc::unsound_policy,
                 Tile{0, 1, 0}, 0, Tile{1, 0, 0}, 3, {no_wait(3)}});
  }
  {  // 15. Column policy waiting on the wrong column (Identity instead of Transpose).
    Grid g{3, 5, 1};
    ColumnPolicy<Identity> p{g};
    v.push_back({"column_wrong_column", check(p, deps::transposed(g)), errc::unsound_policy,
                 Tile{0, 1, 0}, 0, Tile{1, 0, 0}, 0, {no_wait(0)}});
  }
  {  // 16. Row policy for a transposed consumer.
    Grid g{3, 4, 1};
    RowPolicy<Identity> p{g};
    v.push_back({"row_for_transposed", check(p, deps::transposed(g)), errc::unsound_policy,
                 Tile{0, 1, 0}, 0, Tile{1, 0, 0}, 1, {no_wait(1)}});
  }
  {  // 17. Column count taken from the wrong extent: waits for 2 of the column's 4 posts.
    Grid g{4, 2, 1};
    ColumnCountMixup p{g};
    v.push_back({"column_count_mixup", check(p, deps::transposed(g)), errc::unsound_policy,
                 Tile{0, 0, 0}, 0, Tile{0, 0, 0}, 0, {"for 2 of its 4 posts"}});
  }
  {  // 18. 2x2-quad semaphores with m and n swapped on the consumer side.
    Grid g{4, 4, 1};
    QuadSwapped p{g};
    v.push_back({"quad_swapped", check(p, deps::one_to_one(g)), errc::unsound_policy, Tile{0, 2, 0}, 0,
                 Tile{0, 2, 0}, 1, {no_wait(1)}});
  }
  {  // 19. A policy that never waits.
    Grid g{2, 2, 1};
    NeverWaits p{{g}};
    v.push_back({"never_waits", check(p, deps::one_to_one(g)), errc::unsound_policy, Tile{0, 0, 0}, 0,
                 Tile{0, 0, 0}, 0, {no_wait(0)}});
  }
  // --- attention-like (all of batch) ------------------------------------------------------
  {  // 20. Attention reads every K/V tile of its head but the policy waits one tile.
    Grid prod{2, 2, 2};
    TilePolicy<Identity> p{prod};
    v.push_back({"attention_identity", check(p, deps::from_footprint(prod, Grid{3, 1, 2}, AllOfBatch{prod}, "attn")),
                 errc::unsound_policy, Tile{0, 0, 0}, 0, Tile{0, 1, 0}, 1, {no_wait(1)}});
  }
  {  // 21. AllOfBatch footprint built with a stale (shorter) producer grid.
    Grid prod{3, 2, 2};
    RowPolicy<AllOfBatch> p{prod, AllOfBatch{Grid{2, 2, 2}}};
    v.push_back({"attention_stale_grid", check(p, deps::from_footprint(prod, Grid{2, 1, 2}, AllOfBatch{prod}, "attn")),
                 errc::unsound_policy, Tile{0, 0, 0}, 0, Tile{2, 0, 0}, 2, {no_wait(2)}});
  }
  // --- convolution chains -----------------------------------------------------------------
  {  // 22. Conv halo with the padding forgotten (pad 0 in the policy, 1 in the kernel).
    ConvHalo truth{1, 8, 8, 16, 3, 3, 1, 1, 8, 16, 8, 16};  // producer tile = 1 input row
    ConvHalo wrong = truth;
    wrong.pad = 0;
    ConvPolicy p{wrong};
    v.push_back({"conv_pad_forgotten", check(p, deps::conv_exact(truth, truth.consumer_grid(16, 16))),
                 errc::unsound_policy, Tile{1, 0, 0}, 0, Tile{0, 0, 0}, 0, {no_wait(0)}});
  }
  {  // 23. Stride-2 conv guarded by a stride-1 footprint.
    ConvHalo truth{1, 8, 8, 16, 3, 3, 2, 1, 8, 16, 4, 16};  // consumer tile = 1 output row
    ConvHalo wrong = truth;
    wrong.stride = 1;
    ConvPolicy p{wrong};
    v.push_back({"conv_stride2_as_stride1", check(p, deps::conv_exact(truth, truth.consumer_grid(16, 16))),
                 errc::unsound_policy, Tile{1, 0, 0}, 3, Tile{2, 0, 0}, 2, {no_wait(2)}});
  }
  {  // 24. Non-square image with h and w swapped in the policy's footprint.
    ConvHalo truth{1, 4, 8, 16, 3, 3, 1, 1, 4, 16, 8, 16};  // producer tile = half an input row
    ConvHalo wrong = truth;
    wrong.h = 8;
    wrong.w = 4;
    ConvPolicy p{wrong};
    v.push_back({"conv_h_w_swapped", check(p, deps::conv_exact(truth, truth.consumer_grid(16, 16))),
                 errc::unsound_policy, Tile{0, 0, 0}, 6, Tile{3, 0, 0}, 3, {no_wait(3)}});
  }
  // --- invalid policies (errc::invalid_policy): no counterexample, a precise message ------
  {  // 25. per_epoch wrong.
    GemmA fp{64, 96, 32, 32, 32, 96};
    RowWaitCounts p;
    p.producer = fp.producer_grid();
    p.fp = fp;
    p.count = 3;
    p.per_epoch = 1;
    v.push_back({"row_per_epoch_wrong", check(p, deps::gemm_a(fp, Grid{2, 2, 1})), errc::invalid_policy,
                 {}, 0, {}, -1,
                 {"consumer tile (0,0,0) k-block 0 waits on semaphore 0 with per_epoch 1 but 3 producer tiles "
                  "post to it per epoch"}});
  }
  {  // 26. count > posters: would hang.
    GemmA fp{64, 96, 32, 32, 32, 96};
    RowWaitCounts p;
    p.producer = fp.producer_grid();
    p.fp = fp;
    p.count = 4;
    p.per_epoch = 3;
    v.push_back({"row_count_exceeds_posters", check(p, deps::gemm_a(fp, Grid{2, 2, 1})), errc::invalid_policy,
                 {}, 0, {}, -1,
                 {"consumer tile (0,0,0) k-block 0 waits for 4 posts on semaphore 0 which receives only 3 per "
                  "epoch: it would hang"}});
  }
  {  // 27. Ragged last band assumed full: per_epoch 4 on a band with 2 posters.
    GemmA fp{160, 64, 32, 32, 32, 64};  // producer grid 5x2, bands {0,1},{2,3},{4}
    BandPolicy p;
    p.producer = fp.producer_grid();
    p.fp = fp;
    p.band = 2;
    p.ragged_bug = true;
    v.push_back({"band_ragged_assumed_full", check(p, deps::gemm_a(fp, Grid{5, 1, 1})), errc::invalid_policy,
                 {}, 0, {}, -1,
                 {"consumer tile (4,0,0) k-block 0 waits on semaphore 2 with per_epoch 4 but 2 producer tiles"}});
  }
  {  // 29. Semaphore array sized for one batch: producer tiles of batch 1 post out of range.
    GemmA fp{64, 96, 32, 32, 32, 96};
    RowForgotBatches p;
    p.producer = fp.producer_grid(2);
    p.fp = fp;
    v.push_back({"post_index_out_of_range", check(p, deps::gemm_a(fp, Grid{2, 1, 2})), errc::invalid_policy,
                 {}, 0, {}, -1, {"producer tile (0,0,1) posts to semaphore 2, outside the array of 2"}});
  }
  {  // 30. KBlockPolicy whose k-block size differs from the consumer's.
    GemmA truth{64, 128, 32, 32, 32, 32};
    GemmA wrong{64, 128, 32, 32, 32, 64};
    KBlockPolicy<GemmA> p{truth.producer_grid(), wrong};
    v.push_back({"kblock_count_mismatch", check(p, deps::gemm_a(truth, Grid{2, 1, 1})), errc::invalid_policy,
                 {}, 0, {}, -1, {"policy walks 2 k-blocks but the consumer has 4"}});
  }
  {  // 31. Policy built for one batch, consumer has two.
    GemmA fp{128, 64, 32, 32, 64, 64};
    RowPolicy<GemmA> p{fp.producer_grid(), fp};
    v.push_back({"producer_grid_mismatch", check(p, deps::gemm_a(fp, Grid{2, 1, 2})), errc::invalid_policy,
                 {}, 0, {}, -1,
                 {"policy's producer grid 4x2x1 differs from the dependency's producer grid 4x2x2"}});
  }
  return v;
}

// Built-in policies clip footprints to the producer grid: a stencil reaching past the border must
// not wait on another tile's (or a negative) semaphore index.
TEST(Checker, BuiltinPoliciesClipFootprintsToTheProducerGrid) {
  Grid g{4, 3, 1};
  TilePolicy<Stencil1D> p{g};
  CheckReport rep = check_soundness(p, deps::from_footprint(g, g, Stencil1D{}, "stencil"), "stencil");
  EXPECT_TRUE(rep.sound()) << rep.summary();
  int waits = 0;
  p.for_each_wait(Tile{0, 0, 0}, 0, [&](WaitSpec w) {
    EXPECT_GE(w.sem, 0);
    EXPECT_LT(w.sem, p.num_semaphores());
    ++waits;
    return true;
  });
  EXPECT_EQ(waits, 2);  // rows 0 and 1; row -1 is outside the grid
}

TEST(Checker, UnsoundCorpusIsLargeAndVaried) {
  auto corpus = unsound_corpus();
  int unsound = 0;
  for (const auto& c : corpus) unsound += c.code == errc::unsound_policy;
  EXPECT_GE(unsound, 20) << "at least 20 policies must be rejected with a counterexample";
  EXPECT_GE(corpus.size(), 27u);
  std::vector<std::string> names;
  for (const auto& c : corpus) names.push_back(c.name);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end()) << "duplicate case name";
}

TEST(Checker, UnsoundCorpusRejectedWithExactCounterexample) {
  for (const auto& c : unsound_corpus()) {
    SCOPED_TRACE(c.name);
    CheckReport rep = c.run(c.name);
    const std::string& msg = rep.result.message();
    EXPECT_FALSE(rep.sound()) << rep.summary();
    EXPECT_EQ(rep.result.code(), c.code) << msg;
    EXPECT_EQ(msg.rfind(c.name + ": ", 0), 0u) << "message must start with the edge name: " << msg;
    for (const auto& s : c.contains) EXPECT_NE(msg.find(s), std::string::npos) << "missing '" << s << "' in: " << msg;
    if (c.code != errc::unsound_policy) {
      EXPECT_FALSE(rep.counterexample.has_value());
      continue;
    }
    ASSERT_TRUE(rep.counterexample.has_value()) << msg;
    const Counterexample& ce = *rep.counterexample;
    EXPECT_EQ(ce.consumer, c.consumer) << msg;
    EXPECT_EQ(ce.k_block, c.k_block) << msg;
    EXPECT_EQ(ce.producer, c.producer) << msg;
    EXPECT_EQ(ce.producer_sem, c.sem) << msg;
    const std::string expect_head = c.name + ": consumer tile " + to_string(c.consumer) + " k-block " +
                                    std::to_string(c.k_block) + " reads producer tile " + to_string(c.producer) +
                                    " (posts to semaphore " + std::to_string(c.sem) + ") without a wait that covers it: ";
    EXPECT_EQ(msg.rfind(expect_head, 0), 0u) << "got: " << msg << "\nwant prefix: " << expect_head;
    EXPECT_EQ(rep.result.to_string().rfind("unsound sync policy: ", 0), 0u);
    EXPECT_NE(rep.summary().find("unsound sync policy"), std::string::npos);
  }
}

// The spelled-out example from the brief: the message names both tiles.
TEST(Checker, MessageNamesConsumerAndProducerTiles) {
  // A relation where consumer tile (1,0,0) also reads producer tile (1,2,0), which an
  // Identity tile policy does not guard.
  Grid g{2, 3, 1};
  DependencyRelation rel;
  rel.producer = g;
  rel.consumer = g;
  rel.k_blocks = 1;
  rel.description = "custom";
  rel.reads = [](Tile t, int, const std::function<void(Tile)>& emit) {
    emit(t);
    if (t == Tile{1, 0, 0}) emit(Tile{1, 2, 0});  // an extra, unguarded read
  };
  CheckReport rep = check_soundness(TilePolicy<Identity>{g}, rel, "gemm1->gemm2");
  ASSERT_FALSE(rep.sound());
  EXPECT_EQ(rep.result.code(), errc::unsound_policy);
  const std::string& m = rep.result.message();
  EXPECT_NE(m.find("consumer tile (1,0,0)"), std::string::npos) << m;
  EXPECT_NE(m.find("producer tile (1,2,0)"), std::string::npos) << m;
  EXPECT_NE(m.find("(posts to semaphore 5)"), std::string::npos) << m;
  ASSERT_TRUE(rep.counterexample);
  EXPECT_EQ(rep.counterexample->consumer, (Tile{1, 0, 0}));
  EXPECT_EQ(rep.counterexample->producer, (Tile{1, 2, 0}));
}

// ============================================================================================
// Sound policies.
// ============================================================================================

void expect_sound(const CheckReport& rep) {
  EXPECT_TRUE(rep.sound()) << rep.summary();
  EXPECT_FALSE(rep.counterexample.has_value());
  EXPECT_GT(rep.reads_checked, 0);
  EXPECT_GT(rep.waits, 0);
}

TEST(Checker, SoundTileIdentityOneToOne) {
  for (Grid g : {Grid{1, 1, 1}, Grid{3, 4, 2}, Grid{7, 1, 3}}) {
    CheckReport rep = check_soundness(TilePolicy<Identity>{g}, deps::one_to_one(g), "copy");
    expect_sound(rep);
    EXPECT_EQ(rep.reads_checked, g.size());
    EXPECT_EQ(rep.waits, g.size());
    EXPECT_EQ(rep.over_sync_pairs, 0);
    EXPECT_TRUE(rep.over_sync_example.empty());
    EXPECT_EQ(rep.summary(), "sound; " + std::to_string(g.size()) + " reads, " + std::to_string(g.size()) + " waits");
  }
}

TEST(Checker, SoundGemmAChains) {
  struct Shape {
    GemmA fp;
    int cons_n;
    int batches;
  };
  const std::vector<Shape> shapes = {
      {{128, 128, 32, 32, 32, 32}, 4, 1},   // equal tiles
      {{128, 128, 32, 32, 64, 32}, 2, 1},   // consumer tile_m = 2 * producer tile_m
      {{100, 70, 32, 32, 64, 16}, 3, 2},    // ragged M and K, batched
      {{100, 70, 32, 24, 48, 16}, 2, 1},    // misaligned tiles
      {{100, 64, 64, 64, 16, 64}, 1, 1},    // consumer tile smaller than producer tile
      {{1, 256, 64, 128, 128, 64}, 2, 1},   // M = 1
      {{1, 1, 1, 1, 1, 1}, 1, 1},           // a single element
      {{257, 129, 64, 32, 128, 48}, 3, 3},  // everything ragged
  };
  for (const auto& s : shapes) {
    SCOPED_TRACE("M " + std::to_string(s.fp.rows) + " K " + std::to_string(s.fp.cols) + " prod " +
                 std::to_string(s.fp.prod_tile_m) + "x" + std::to_string(s.fp.prod_tile_n) + " cons_m " +
                 std::to_string(s.fp.cons_tile_m) + " cons_k " + std::to_string(s.fp.cons_tile_k));
    const Grid prod = s.fp.producer_grid(s.batches);
    const Grid cons{ceil_div(s.fp.rows, s.fp.cons_tile_m), s.cons_n, s.batches};
    const DependencyRelation rel = deps::gemm_a(s.fp, cons);
    {
      CheckReport rep = check_soundness(RowPolicy<GemmA>{prod, s.fp}, rel, "row");
      expect_sound(rep);
      EXPECT_EQ(rep.over_sync_pairs, 0) << rep.over_sync_example;  // every column of the row is read
    }
    {
      CheckReport rep = check_soundness(RowPolicy<GemmA>{prod, s.fp, true}, rel, "row_k");
      expect_sound(rep);
    }
    {
      CheckReport rep = check_soundness(KBlockPolicy<GemmA>{prod, s.fp}, rel, "kblock");
      expect_sound(rep);
      EXPECT_EQ(rep.over_sync_pairs, 0) << rep.over_sync_example;
    }
    {
      CheckReport rep = check_soundness(TilePolicy<GemmA>{prod, s.fp}, rel, "tile");
      expect_sound(rep);
      EXPECT_EQ(rep.over_sync_pairs, 0) << rep.over_sync_example;
    }
  }
}

TEST(Checker, SoundUserBandPolicy) {
  GemmA fp{192, 64, 32, 32, 48, 64};
  BandPolicy p;
  p.producer = fp.producer_grid();
  p.fp = fp;
  p.band = 2;
  expect_sound(check_soundness(p, deps::gemm_a(fp, Grid{4, 1, 1}), "band"));
  // Ragged last band with correct counts.
  GemmA fp5{160, 64, 32, 32, 32, 64};
  p.producer = fp5.producer_grid();
  p.fp = fp5;
  CheckReport rep = check_soundness(p, deps::gemm_a(fp5, Grid{5, 1, 1}), "band5");
  expect_sound(rep);
  EXPECT_GT(rep.over_sync_pairs, 0);  // a band forces the other row of the band
}

TEST(Checker, SoundColumnPolicyTransposedConsumer) {
  for (Grid g : {Grid{3, 5, 1}, Grid{3, 5, 2}, Grid{1, 4, 1}}) {
    CheckReport rep = check_soundness(ColumnPolicy<Transpose>{g, Transpose{}}, deps::transposed(g), "t");
    expect_sound(rep);
    // A column semaphore forces the whole column; the consumer reads one tile of it.
    EXPECT_EQ(rep.over_sync_pairs, g.m > 1 ? g.size() * (g.m - 1) : 0);
  }
  Grid g{3, 5, 2};
  CheckReport rep = check_soundness(TilePolicy<Transpose>{g, Transpose{}}, deps::transposed(g), "t");
  expect_sound(rep);
  EXPECT_EQ(rep.over_sync_pairs, 0);
}

TEST(Checker, SoundAttentionAllOfBatch) {
  Grid prod{3, 2, 4};
  Grid cons{5, 1, 4};
  DependencyRelation rel = deps::from_footprint(prod, cons, AllOfBatch{prod}, "attention");
  CheckReport rep = check_soundness(TilePolicy<AllOfBatch>{prod, AllOfBatch{prod}}, rel, "attn");
  expect_sound(rep);
  EXPECT_EQ(rep.reads_checked, cons.size() * 6);
  EXPECT_EQ(rep.over_sync_pairs, 0);
  expect_sound(check_soundness(RowPolicy<AllOfBatch>{prod, AllOfBatch{prod}}, rel, "attn_row"));
  expect_sound(check_soundness(ColumnPolicy<AllOfBatch>{prod, AllOfBatch{prod}}, rel, "attn_col"));
}

TEST(Checker, SoundConvPolicyStride1And2) {
  struct C {
    ConvHalo fp;
    int cons_c, cons_tile_n;
  };
  std::vector<C> cfgs = {
      {{1, 8, 8, 16, 3, 3, 1, 1, 16, 16, 16, 16}, 16, 16},  // 3x3 pad 1 stride 1
      {{1, 8, 8, 16, 3, 3, 2, 1, 16, 16, 8, 16}, 16, 16},   // 3x3 pad 1 stride 2
      {{2, 4, 4, 8, 3, 3, 1, 1, 8, 8, 12, 4}, 8, 8},        // tiles span images
      {{2, 4, 4, 8, 3, 3, 1, 1, 8, 4, 12, 4}, 8, 8},        // channel blocks on producer columns
      {{3, 5, 7, 24, 3, 3, 2, 1, 16, 16, 8, 8}, 16, 8},     // ragged everything, stride 2
      {{2, 7, 5, 8, 3, 3, 1, 1, 6, 8, 10, 8}, 8, 8},        // odd tile sizes spanning images
      {{1, 4, 4, 8, 3, 3, 1, 2, 4, 8, 4, 8}, 8, 8},         // pad 2: taps entirely in padding
      {{2, 6, 6, 8, 5, 5, 2, 2, 12, 8, 5, 8}, 8, 8},        // 5x5 stride 2 pad 2
      {{1, 9, 9, 8, 1, 1, 1, 0, 9, 8, 9, 8}, 8, 8},         // 1x1 conv
  };
  for (const auto& c : cfgs) {
    SCOPED_TRACE("n " + std::to_string(c.fp.n) + " h " + std::to_string(c.fp.h) + " w " + std::to_string(c.fp.w) +
                 " r " + std::to_string(c.fp.r) + " stride " + std::to_string(c.fp.stride) + " pad " +
                 std::to_string(c.fp.pad));
    DependencyRelation rel = deps::conv_exact(c.fp, c.fp.consumer_grid(c.cons_c, c.cons_tile_n));
    expect_sound(check_soundness(ConvPolicy{c.fp}, rel, "conv"));
    expect_sound(check_soundness(ConvPolicy{c.fp, true}, rel, "conv_k"));
  }
}

// ============================================================================================
// Over-synchronization.
// ============================================================================================

TEST(Checker, OverSyncExactTilePolicyReportsZero) {
  Grid g{4, 4, 2};
  CheckReport rep = check_soundness(TilePolicy<Identity>{g}, deps::one_to_one(g), "copy");
  expect_sound(rep);
  EXPECT_EQ(rep.over_sync_pairs, 0);
  EXPECT_EQ(rep.summary().find("over-synchronized"), std::string::npos);
}

TEST(Checker, OverSyncRowPolicyWhenConsumerReadsOneColumn) {
  Grid g{3, 4, 1};
  CheckReport rep = check_soundness(RowPolicy<Identity>{g}, deps::one_to_one(g), "copy_row");
  expect_sound(rep);
  // Each of the 12 consumer tiles is forced on the 3 other tiles of its row.
  EXPECT_EQ(rep.over_sync_pairs, 12 * 3);
  EXPECT_EQ(rep.over_sync_example, "consumer tile (0,0,0) waits for producer tile (0,1,0) which it never reads");
  EXPECT_NE(rep.summary().find("over-synchronized: 36 (consumer, producer) pairs"), std::string::npos)
      << rep.summary();
  EXPECT_NE(rep.summary().find("never reads"), std::string::npos);
}

TEST(Checker, OverSyncConvHaloWiderThanExact) {
  // Producer tiles of 4 pixels (half an 8-wide row); consumer tiles of 2 output pixels read
  // input columns 0..2 only, yet the halo waits on whole input rows (both halves).
  ConvHalo fp{1, 8, 8, 8, 3, 3, 1, 1, 4, 8, 2, 8};
  DependencyRelation rel = deps::conv_exact(fp, fp.consumer_grid(8, 8));
  CheckReport rep = check_soundness(ConvPolicy{fp}, rel, "conv");
  expect_sound(rep);
  EXPECT_GT(rep.over_sync_pairs, 0);
  // Consumer tile 0 (outputs (0,0),(0,1)) reads input rows 0..1, columns 0..2: producer tiles
  // 0 and 2; the halo also forces tiles 1 and 3.
  EXPECT_EQ(rep.over_sync_example, "consumer tile (0,0,0) waits for producer tile (1,0,0) which it never reads");
  // Stride 2 conv: over-synchronized as well (whole rows).
  ConvHalo s2{1, 8, 8, 8, 3, 3, 2, 1, 4, 8, 2, 8};
  CheckReport rep2 = check_soundness(ConvPolicy{s2, true}, deps::conv_exact(s2, s2.consumer_grid(8, 8)), "conv2");
  expect_sound(rep2);
  EXPECT_GT(rep2.over_sync_pairs, 0);
  EXPECT_NE(rep2.over_sync_example.find("never reads"), std::string::npos);
}

// ============================================================================================
// Checker plumbing.
// ============================================================================================

TEST(Checker, InvalidInputs) {
  Grid g{2, 2, 1};
  {
    CheckReport rep = check_soundness(TilePolicy<Identity>{Grid{0, 2, 1}}, deps::one_to_one(g), "e");
    EXPECT_EQ(rep.result.code(), errc::invalid_argument);
    EXPECT_NE(rep.result.message().find("invalid grid"), std::string::npos);
  }
  {
    DependencyRelation rel = deps::one_to_one(g);
    rel.reads = nullptr;
    CheckReport rep = check_soundness(TilePolicy<Identity>{g}, rel, "e");
    EXPECT_EQ(rep.result.code(), errc::invalid_argument);
    EXPECT_NE(rep.result.message().find("no reads function"), std::string::npos);
  }
  {
    DependencyRelation rel = deps::one_to_one(g);
    rel.reads = [](Tile t, int, const std::function<void(Tile)>& emit) {
      emit(t);
      if (t.m == 1) emit(Tile{2, t.n, t.z});  // row 2 does not exist
    };
    CheckReport rep = check_soundness(TilePolicy<Identity>{g}, rel, "e");
    EXPECT_EQ(rep.result.code(), errc::invalid_argument);
    EXPECT_NE(rep.result.message().find("consumer tile (1,0,0) k-block 0 reads (2,0,0): the dependency names a tile "
                                        "outside the producer grid"),
              std::string::npos)
        << rep.result.message();
  }
  {
    DependencyRelation rel = deps::one_to_one(g);
    rel.k_blocks = 0;
    CheckReport rep = check_soundness(TilePolicy<Identity>{g}, rel, "e");
    EXPECT_EQ(rep.result.code(), errc::invalid_argument);
  }
}

TEST(Checker, WaitsAccumulateAcrossKBlocks) {
  // A per-tile policy waiting for everything at k == 0 covers all later k-blocks; a per-k policy
  // waiting for k-block k's tiles exactly is sound too, with more (finer) waits.
  GemmA fp{64, 128, 32, 32, 32, 32};
  Grid prod = fp.producer_grid();
  DependencyRelation rel = deps::gemm_a(fp, Grid{2, 2, 1});
  CheckReport per_tile = check_soundness(TilePolicy<GemmA>{prod, fp}, rel, "t");
  CheckReport per_k = check_soundness(KBlockPolicy<GemmA>{prod, fp}, rel, "k");
  expect_sound(per_tile);
  expect_sound(per_k);
  EXPECT_EQ(per_tile.waits, 4 * 4);  // 4 consumer tiles x 4 producer tiles of their row
  EXPECT_EQ(per_k.waits, 4 * 4);
  EXPECT_EQ(per_tile.reads_checked, per_k.reads_checked);
}

}  // namespace
