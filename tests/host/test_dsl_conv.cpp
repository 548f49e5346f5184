// Host tests for batonc's strided convolution taps ('@conv(H, W, DR, DS, stride = U, pad = E)'):
// over small shapes (odd and even images, batches of 1 and 2, strides 1 to 3, pad 0 and 1, 1x1 and
// 3x3 filters, tiles that do and do not divide a row), a program compiled by batonc and proven
// against deps::conv_exact yields
//   - a maps relation (what batonc enumerates from the maps) equal to a brute-force convolution,
//   - deps::conv_exact equal to the same brute force,
//   - an AffineFootprint whose per-k-block box is exactly the producer tiles between the first and
//     last read (every read inside, nothing read outside) and whose whole-k-loop box covers them,
//   - per-k-block and once-per-tile policies over that footprint that are sound against conv_exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "baton/dependency.hpp"
#include "baton/dsl/analysis.hpp"
#include "baton/dsl/candidates.hpp"
#include "baton/dsl/lowering.hpp"
#include "baton/dsl/program.hpp"
#include "baton/policy.hpp"

namespace {

using namespace baton;
using namespace baton::dsl;

struct ConvCase {
  int n, h, w, c;   // input images N x H x W, C channels
  int r, stride, pad;  // an R x R filter
  int tile_p, tile_pc;  // producer tile: pixels x channels
  int tile_m, tile_k;   // consumer tile: output pixels; channels per k-block

  int out_h() const { return (h + 2 * pad - r) / stride + 1; }
  int out_w() const { return (w + 2 * pad - r) / stride + 1; }
  int channel_blocks() const { return (c + tile_k - 1) / tile_k; }
  std::string name() const {
    return "N" + std::to_string(n) + " " + std::to_string(h) + "x" + std::to_string(w) + " R" + std::to_string(r) + " stride " +
           std::to_string(stride) + " pad " + std::to_string(pad) + " tiles " + std::to_string(tile_p) + "/" + std::to_string(tile_m);
  }
  // The chain: p writes X[N*H*W, C] in tile_p x tile_pc tiles; c reads it through the strided tap.
  std::string program() const {
    auto s = [](int v) { return std::to_string(v); };
    const std::string shift_r = "r - " + s(pad), shift_s = "s - " + s(pad);
    return "param N = " + s(n) + "\nparam H = " + s(h) + "\nparam W = " + s(w) + "\nparam C = " + s(c) +
           "\nparam P = " + s(out_h()) + "\nparam Q = " + s(out_w()) +
           "\ntensor X[N * H * W, C]\ntensor Y[N * P * Q, C]\n"
           "stage p {\n  grid m < cdiv(N * H * W, " + s(tile_p) + "), n < cdiv(C, " + s(tile_pc) + ")\n"
           "  writes X[m*" + s(tile_p) + " +: " + s(tile_p) + ", n*" + s(tile_pc) + " +: " + s(tile_pc) + "]\n}\n"
           "stage c {\n  grid m < cdiv(N * P * Q, " + s(tile_m) + ")\n"
           "  k r < " + s(r) + ", s < " + s(r) + ", cb < cdiv(C, " + s(tile_k) + ")\n"
           "  reads X[m*" + s(tile_m) + " +: " + s(tile_m) + " @conv(H, W, " + shift_r + ", " + shift_s + ", stride = " + s(stride) +
           ", pad = " + s(pad) + "), cb*" + s(tile_k) + " +: " + s(tile_k) + "]\n"
           "  writes Y[m*" + s(tile_m) + " +: " + s(tile_m) + ", :]\n}\n"
           "relation p -> c : conv_exact(n = N, h = H, w = W, c = C, r = " + s(r) + ", s = " + s(r) + ", stride = " + s(stride) +
           ", pad = " + s(pad) + ", prod_tile_m = " + s(tile_p) + ", prod_tile_n = " + s(tile_pc) + ", cons_tile_m = " + s(tile_m) +
           ", cons_tile_k = " + s(tile_k) + ")\n";
  }
  footprint::ConvHalo halo() const {
    footprint::ConvHalo f{};
    f.n = n, f.h = h, f.w = w, f.c = c, f.r = r, f.s = r, f.stride = stride, f.pad = pad;
    f.prod_tile_m = tile_p, f.prod_tile_n = tile_pc, f.cons_tile_m = tile_m, f.cons_tile_k = tile_k;
    return f;
  }
  // Brute force: the producer tiles consumer tile m's k-block k reads, pixel by pixel and channel
  // by channel, straight from the convolution's definition.
  std::set<std::pair<int, int>> reads(int m, int k) const {
    std::set<std::pair<int, int>> out;
    const int cb = k % channel_blocks(), tap = k / channel_blocks(), tr = tap / r, ts = tap % r;
    const int P = out_h(), Q = out_w();
    for (int o = m * tile_m; o < std::min((m + 1) * tile_m, n * P * Q); ++o) {
      const int img = o / (P * Q), p = o % (P * Q) / Q, q = o % Q;
      const int hh = p * stride - pad + tr, ww = q * stride - pad + ts;
      if (hh < 0 || hh >= h || ww < 0 || ww >= w) continue;
      const int pixel = (img * h + hh) * w + ww;
      for (int ch = cb * tile_k; ch < std::min((cb + 1) * tile_k, c); ++ch) out.insert({pixel / tile_p, ch / tile_pc});
    }
    return out;
  }
};

std::vector<ConvCase> cases() {
  std::vector<ConvCase> out;
  const std::pair<int, int> images[] = {{5, 7}, {6, 6}, {7, 5}, {9, 4}};
  for (int n : {1, 2})
    for (auto [h, w] : images)
      for (int r : {1, 3})
        for (int stride : {1, 2, 3})
          for (int pad : {0, 1}) {
            if (h + 2 * pad < r || w + 2 * pad < r) continue;
            // Producer tiles shorter and longer than an image row; consumer tiles that straddle rows.
            const int tile_p = (h + w + stride + pad + r) % 2 ? 3 : 8;
            out.push_back(ConvCase{n, h, w, 6, r, stride, pad, tile_p, 4, (n + r) % 2 ? 4 : 5, 4});
          }
  return out;
}

std::string text(const TileRect& r) {
  return "[" + std::to_string(r.m0) + ", " + std::to_string(r.m1) + ") x [" + std::to_string(r.n0) + ", " + std::to_string(r.n1) + ") x [" +
         std::to_string(r.z0) + ", " + std::to_string(r.z1) + ")";
}

std::set<std::pair<int, int>> relation_reads(const DependencyRelation& d, Tile t, int k) {
  std::set<std::pair<int, int>> out;
  d.reads(t, k, [&](Tile p) { out.insert({p.m, p.n}); });
  return out;
}

TEST(BatoncConv, StridedTapsAreExactlyTheConvolutionOverSmallShapes) {
  int checked = 0;
  for (const ConvCase& cc : cases()) {
    SCOPED_TRACE(cc.name());
    auto prog = parse("conv.baton", cc.program());
    ASSERT_TRUE(prog.ok()) << prog.error().to_string();
    // The relation line has no 'loose': analyze proves the maps read exactly conv_exact, and every
    // candidate against it.
    auto a = analyze(std::move(prog.value()));
    ASSERT_TRUE(a.ok()) << a.error().to_string() << "\n" << cc.program();
    const Analysis& an = a.value();
    ASSERT_EQ(an.edges.size(), 1u);
    for (const Candidate& c : an.edges[0].candidates) EXPECT_TRUE(c.sound) << candidate_name(c) << ": " << c.why_not;

    AffineFootprint fp;
    ASSERT_TRUE(edge_footprint(an, an.edges[0], an.bindings[0], fp).ok());
    ASSERT_EQ(fp.invalid_reason(), nullptr);
    EXPECT_EQ(fp.access[0].dim[0].out_h, cc.out_h());
    EXPECT_EQ(fp.access[0].dim[0].out_w, cc.out_w());
    const Grid cg{(cc.n * cc.out_h() * cc.out_w() + cc.tile_m - 1) / cc.tile_m, 1, 1};
    const DependencyRelation maps = Analyzer::relation(fp, cg, "maps");
    const DependencyRelation exact = deps::conv_exact(cc.halo(), cg);
    ASSERT_EQ(exact.k_blocks, fp.k_blocks());
    ASSERT_EQ(exact.producer, fp.producer);
    for (int m = 0; m < cg.m; ++m) {
      const Tile t{m, 0, 0};
      std::set<std::pair<int, int>> all;
      for (int k = 0; k < fp.k_blocks(); ++k) {
        const auto truth = cc.reads(m, k);
        ASSERT_EQ(relation_reads(maps, t, k), truth) << "maps, tile " << m << " k-block " << k;
        ASSERT_EQ(relation_reads(exact, t, k), truth) << "conv_exact, tile " << m << " k-block " << k;
        // The box: exactly the producer rows from the first read to the last, the channels read.
        const TileRect box = fp.rect(t, k);
        if (truth.empty()) {
          EXPECT_TRUE(box.empty()) << "tile " << m << " k-block " << k;
          continue;
        }
        int m0 = truth.begin()->first, m1 = m0, n0 = truth.begin()->second, n1 = n0;
        for (auto [pm, pn] : truth) {
          m0 = std::min(m0, pm), m1 = std::max(m1, pm), n0 = std::min(n0, pn), n1 = std::max(n1, pn);
          all.insert({pm, pn});
        }
        EXPECT_EQ(text(box), text(TileRect{m0, m1 + 1, n0, n1 + 1, 0, 1})) << "tile " << m << " k-block " << k;
        ++checked;
      }
      // The whole k-loop's box covers every k-block's reads.
      const TileRect every = fp.rect_all(t);
      for (auto [pm, pn] : all) EXPECT_TRUE(every.contains(Tile{pm, pn, 0})) << "tile " << m << " misses (" << pm << ", " << pn << ")";
    }
    EXPECT_TRUE(check_soundness(KBlockPolicy<AffineFootprint>{fp.producer, fp}, exact, "kblock").sound());
    EXPECT_TRUE(check_soundness(TilePolicy<AffineFootprint>{fp.producer, fp}, exact, "tile").sound());
  }
  EXPECT_GT(checked, 2000);
}

// The stride-1 form with pad named is the same tap as the bare form ("same" padding): equal
// footprints but for the output fields, and the same policies.
TEST(BatoncConv, NamedStrideOnePadOneIsTheSamePaddedForm) {
  const std::string head =
      "param H = 7\nparam W = 5\ntensor X[2 * H * W, 8]\ntensor Y[2 * H * W, 8]\n"
      "stage p {\n  grid m < cdiv(2 * H * W, 8)\n  writes X[m*8 +: 8, :]\n}\n"
      "stage c {\n  grid m < cdiv(2 * H * W, 8)\n  k r < 3, s < 3\n";
  const std::string tail = "  writes Y[m*8 +: 8, :]\n}\n";
  auto footprint_of = [&](const std::string& read, AffineFootprint& fp) {
    auto prog = parse("same.baton", head + read + tail);
    ASSERT_TRUE(prog.ok()) << prog.error().to_string();
    auto a = analyze(std::move(prog.value()));
    ASSERT_TRUE(a.ok()) << a.error().to_string();
    ASSERT_TRUE(edge_footprint(a.value(), a.value().edges[0], a.value().bindings[0], fp).ok());
  };
  AffineFootprint bare, named;
  footprint_of("  reads X[m*8 +: 8 @conv(H, W, r - 1, s - 1), :]\n", bare);
  footprint_of("  reads X[m*8 +: 8 @conv(H, W, r - 1, s - 1, pad = 1), :]\n", named);
  EXPECT_EQ(named.access[0].dim[0].out_h, 7);
  EXPECT_EQ(named.access[0].dim[0].out_w, 5);
  EXPECT_EQ(named.access[0].dim[0].stride, 1);
  const Grid cg{(2 * 7 * 5 + 7) / 8, 1, 1};
  for (int m = 0; m < cg.m; ++m)
    for (int k = 0; k < 9; ++k) EXPECT_EQ(text(bare.rect(Tile{m, 0, 0}, k)), text(named.rect(Tile{m, 0, 0}, k))) << m << " " << k;
}

// Bad strides, pads and output sizes are located errors (the exact texts: tests/dsl/bad/conv_*).
TEST(BatoncConv, BadStridePadAndOutputSizeAreLocated) {
  auto message = [](const std::string& conv, int h) {
    const std::string text = "param H = " + std::to_string(h) +
                             "\ntensor X[H * 8, 4]\ntensor Y[H * 8, 4]\n"
                             "stage p {\n  grid m < cdiv(H * 8, 8)\n  writes X[m*8 +: 8, :]\n}\n"
                             "stage c {\n  grid m < 1\n  k r < 3, s < 3\n  reads X[0 +: 8 @conv(H, 8, " + conv + "), :]\n"
                             "  writes Y[0 +: 8, :]\n}\n";
    auto prog = parse("bad.baton", text);
    const auto first_line = [](const std::string& m) { return m.substr(0, m.find('\n')); };
    if (!prog.ok()) return first_line(prog.error().message());
    auto a = analyze(std::move(prog.value()));
    return a.ok() ? std::string("ok") : first_line(a.error().message());
  };
  EXPECT_EQ(message("r - 1, s - 1, stride = 2, pad = 1", 8), "ok");
  EXPECT_EQ(message("r - 1, s - 1, stride = 0, pad = 1", 8), "bad.baton:11:53: '@conv' stride 0 (it must be >= 1)");
  EXPECT_EQ(message("r + 1, s + 1, pad = -1", 8),
            "bad.baton:11:50: '@conv' pad -1 (it must be >= 0: the zero rows and columns around an image)");
  EXPECT_EQ(message("r, s, stride = 2", 2).substr(0, 50), "bad.baton:11:19: '@conv' has no output rows: (H + ");
  EXPECT_EQ(message("r, s - 1, pad = 1", 8).substr(0, 69), "bad.baton:11:30: the tap's row shift runs from 0 to 2, but pad = 1 pu");
  EXPECT_EQ(message("r - 1, s, pad = 1", 8).substr(0, 76), "bad.baton:11:37: the tap's column shift runs from 0 to 2, but pad = 1 puts t");
  EXPECT_EQ(message("r - 1, s - 1, stride = 2, stride = 2", 8), "bad.baton:11:56: argument 'stride' given twice");
}

}  // namespace
