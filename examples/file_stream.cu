// File -> GPU -> file streaming: reads the input in windows of `chunks` chunks, pushes each
// window through the N-buffered pipeline (H2D, a byte transform kernel, D2H), and writes the
// result while the next window is read. The host reads/writes files while the GPU works.
//   baton_example_file_stream IN OUT [--chunk-mib M] [--buffers K]
//   baton_example_file_stream --self-test            (generates 256 MiB, streams it, verifies)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "baton/async/memory.cuh"
#include "baton/async/pipeline.cuh"

using namespace baton;
using namespace baton::async;

// The "compute": a byte-wise transform (rotate each byte left by 3 and xor 0x5A).
__global__ void transform(const unsigned char* in, unsigned char* out, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    unsigned char b = in[i];
    out[i] = (unsigned char)(((b << 3) | (b >> 5)) ^ 0x5A);
  }
}
unsigned char transform_ref(unsigned char b) { return (unsigned char)(((b << 3) | (b >> 5)) ^ 0x5A); }

status stream_file(const std::string& in_path, const std::string& out_path, size_t chunk, int buffers) {
  FILE* in = std::fopen(in_path.c_str(), "rb");
  if (!in) return status(errc::invalid_argument, "cannot open input '" + in_path + "': " + std::strerror(errno));
  FILE* out = std::fopen(out_path.c_str(), "wb");
  if (!out) {
    std::fclose(in);
    return status(errc::invalid_argument, "cannot open output '" + out_path + "': " + std::strerror(errno));
  }
  auto p = pipeline::create(pipeline_options{chunk, buffers, 4});
  if (!p.ok()) return p.error();
  const size_t window = chunk * size_t(buffers) * 2;
  pinned_pool pool(window, 4);
  auto a = pool.acquire(window), b = pool.acquire(window), c = pool.acquire(window), d = pool.acquire(window);
  if (!a.ok() || !b.ok() || !c.ok() || !d.ok()) return status(errc::resource_exhausted, "pinned windows");
  pinned_buffer* src[2] = {&a.value(), &b.value()};
  pinned_buffer* dst[2] = {&c.value(), &d.value()};
  compute_fn f = [](const void* i, void* o, size_t n, stream_ref s) {
    transform<<<264, 256, 0, s>>>(static_cast<const unsigned char*>(i), static_cast<unsigned char*>(o), n);
    return cuda_check(cudaGetLastError(), "transform");
  };
  size_t got = std::fread(src[0]->data(), 1, window, in), total = 0;
  int cur = 0;
  status st;
  while (got > 0 && st.ok()) {
    st = p.value().enqueue(src[cur]->data(), dst[cur]->data(), got, f);  // returns at once (pinned)
    if (!st.ok()) break;
    size_t next = std::fread(src[1 - cur]->data(), 1, window, in);     // read while the GPU works
    st = p.value().finish();
    if (!st.ok()) break;
    if (std::fwrite(dst[cur]->data(), 1, got, out) != got)
      st = status(errc::invalid_argument, "write to '" + out_path + "' failed: " + std::strerror(errno));
    total += got;
    got = next;
    cur = 1 - cur;
  }
  std::fclose(in);
  if (std::fclose(out) != 0 && st.ok()) st = status(errc::invalid_argument, "closing '" + out_path + "' failed");
  if (st.ok()) std::printf("streamed %zu bytes from %s to %s\n", total, in_path.c_str(), out_path.c_str());
  return st;
}

int main(int argc, char** argv) {
  std::vector<std::string> pos;
  size_t chunk_mib = 16;
  int buffers = 3;
  bool self_test = false;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    if (k == "--help" || k == "-h") {
      std::printf("usage: baton_example_file_stream IN OUT [--chunk-mib M] [--buffers K]\n"
                  "       baton_example_file_stream --self-test\n"
                  "Streams IN through the GPU (byte transform) into OUT with an N-buffered pipeline.\n");
      return 0;
    } else if (k == "--self-test") self_test = true;
    else if (k == "--chunk-mib" && i + 1 < argc) chunk_mib = size_t(std::atol(argv[++i]));
    else if (k == "--buffers" && i + 1 < argc) buffers = std::atoi(argv[++i]);
    else if (!k.empty() && k[0] == '-') return std::fprintf(stderr, "error: unknown option %s\n", k.c_str()), 2;
    else pos.push_back(k);
  }
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) return std::printf("no CUDA device: nothing to run\n"), 0;
  if (self_test) {
    const std::string in = "/tmp/baton_stream_in.bin", out = "/tmp/baton_stream_out.bin";
    const size_t n = (size_t(256) << 20) + 12345;  // ragged last chunk
    std::vector<unsigned char> data(n);
    for (size_t i = 0; i < n; ++i) data[i] = (unsigned char)((i * 2654435761u) >> 13);
    FILE* f = std::fopen(in.c_str(), "wb");
    if (!f || std::fwrite(data.data(), 1, n, f) != n) return std::fprintf(stderr, "cannot write %s\n", in.c_str()), 1;
    std::fclose(f);
    status st = stream_file(in, out, chunk_mib << 20, buffers);
    if (!st.ok()) return std::printf("error: %s\n", st.to_string().c_str()), 1;
    std::vector<unsigned char> back(n + 1);
    f = std::fopen(out.c_str(), "rb");
    size_t m = f ? std::fread(back.data(), 1, n + 1, f) : 0;
    if (f) std::fclose(f);
    size_t bad = m == n ? 0 : n;
    for (size_t i = 0; i < std::min(m, n); ++i) bad += back[i] != transform_ref(data[i]);
    std::remove(in.c_str());
    std::remove(out.c_str());
    std::printf("self-test: %zu bytes, %zu mismatches\n", n, bad);
    return bad == 0 ? 0 : 1;
  }
  if (pos.size() != 2) return std::fprintf(stderr, "error: need IN and OUT (see --help)\n"), 2;
  status st = stream_file(pos[0], pos[1], chunk_mib << 20, buffers);
  if (!st.ok()) return std::printf("error: %s\n", st.to_string().c_str()), 1;
  return 0;
}
