// bench/common/env.hpp — where a result was measured: GPU, driver, CUDA runtime, SM clock, commit
// and date, stamped into every result row (bench/common/report.hpp).
#pragma once

#include <cctype>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#endif

// The build stamps the commit into each bench's main file (bench/CMakeLists.txt, baton_commit.h).
#ifndef BATON_GIT_COMMIT
#define BATON_GIT_COMMIT "unknown"
#endif

namespace baton::bench {

struct Env {
  std::string gpu = "none", driver = "unknown", cuda = "unknown", commit = BATON_GIT_COMMIT, date, sm_clock_mhz = "unknown";
};

// Today's date (UTC), YYYY-MM-DD.
inline std::string today() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

// The kernel driver's version as /proc/driver/nvidia/version states it; empty where absent.
inline std::string driver_version_from_proc() {
  std::ifstream f("/proc/driver/nvidia/version");
  std::string line;
  if (!std::getline(f, line)) return "";
  std::istringstream is(line);
  std::string w, last;
  while (is >> w)
    if (!w.empty() && std::isdigit(static_cast<unsigned char>(w[0])) && w.find('.') != std::string::npos) return w;
  return "";
}

#if defined(__CUDACC__)
// GPU name, SM clock, CUDA runtime and driver versions, date, commit.
inline Env detect_env(int device = 0) {
  Env env;
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) == cudaSuccess) env.gpu = prop.name;
  int clk = 0, rt = 0;
  if (cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, device) == cudaSuccess) env.sm_clock_mhz = std::to_string(clk / 1000);
  (void)cudaRuntimeGetVersion(&rt);
  env.cuda = std::to_string(rt / 1000) + "." + std::to_string((rt % 1000) / 10);
  env.driver = driver_version_from_proc();
  if (env.driver.empty()) {
    int dv = 0;
    (void)cudaDriverGetVersion(&dv);
    env.driver = "cuda-driver-api-" + std::to_string(dv);
  }
  env.date = today();
  return env;
}
#endif

}  // namespace baton::bench
