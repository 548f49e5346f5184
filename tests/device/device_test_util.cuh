// Helpers for device tests: RAII device memory, status assertions, skipping without a GPU.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "baton/baton.cuh"

#define BT_ASSERT_OK(expr)                                   \
  do {                                                       \
    ::baton::status bt_s_ = (expr);                          \
    ASSERT_TRUE(bt_s_.ok()) << #expr << ": " << bt_s_.to_string(); \
  } while (0)
#define BT_CUDA(expr) ASSERT_EQ(cudaSuccess, (expr)) << #expr << ": " << cudaGetErrorString(expr)

namespace bt {

// The Stage type inside a baton::result<Stage>.
template <class R>
using stage_t = std::remove_cvref_t<decltype(std::declval<R&>().value())>;

struct CudaFree {
  void operator()(void* p) const { (void)cudaFree(p); }
};
template <class T>
using dev_ptr = std::unique_ptr<T, CudaFree>;

template <class T>
dev_ptr<T> dev_alloc(size_t count) {
  void* p = nullptr;
  if (cudaMalloc(&p, count * sizeof(T) + 16) != cudaSuccess) return dev_ptr<T>(nullptr);
  return dev_ptr<T>(static_cast<T*>(p));
}

// Iteration counts divided by BATON_TEST_SCALE (compute-sanitizer runs use a large divisor).
inline int scaled(int n) {
  const char* s = std::getenv("BATON_TEST_SCALE");
  int d = s ? std::atoi(s) : 1;
  if (d < 1) d = 1;
  int v = n / d;
  return v < 1 ? 1 : v;
}

class DeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    baton::status s = baton::require_device();
    if (!s.ok()) GTEST_SKIP() << "skipping device test: " << s.to_string();
    ASSERT_EQ(cudaSuccess, cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  }
  void TearDown() override {
    if (stream) (void)cudaStreamDestroy(stream);
  }
  template <class T>
  std::vector<T> download(const T* p, size_t n) {
    std::vector<T> h(n);
    EXPECT_EQ(cudaSuccess, cudaMemcpyAsync(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost, stream));
    EXPECT_EQ(cudaSuccess, cudaStreamSynchronize(stream));
    return h;
  }
  cudaStream_t stream = nullptr;
};

}  // namespace bt
