// baton/config.hpp — portability macros. Compiles under plain g++/clang++ (host tests)
// and under nvcc (host and device passes).
#pragma once

#if defined(__CUDACC__) || defined(__CUDA_ARCH__)
#define BATON_HOST_DEVICE __host__ __device__ __forceinline__
#define BATON_DEVICE __device__ __forceinline__
#define BATON_CUDA_COMPILER 1
#else
#define BATON_HOST_DEVICE inline
#define BATON_DEVICE inline
#define BATON_CUDA_COMPILER 0
#endif

// Unroll the next loop fully in the device pass (device code that must index fixed-size arrays
// with constants, so they stay in registers); nothing for host compilers (g++ warns on the pragma).
#if defined(__CUDA_ARCH__)
#define BATON_UNROLL _Pragma("unroll")
#else
#define BATON_UNROLL
#endif

// True in the device pass of nvcc only.
#if defined(__CUDA_ARCH__)
#define BATON_DEVICE_PASS 1
#else
#define BATON_DEVICE_PASS 0
#endif

// Debug watchdog: a wait that spins past its bound (BindOptions::watchdog_ns, Stage::watchdog_ns)
// reports an error record and bails out instead of hanging. The check is always compiled (it sits
// in the slow path of the spin loop and costs nothing while watchdog_ns == 0, and one definition
// of the wait everywhere avoids ODR surprises); this macro only sets the default bound:
// 10 s in debug builds, off (0) with NDEBUG. -DBATON_ENABLE_WATCHDOG=1 turns the default on in
// release builds, =0 turns it off in debug builds.
#ifndef BATON_ENABLE_WATCHDOG
#if defined(NDEBUG)
#define BATON_ENABLE_WATCHDOG 0
#else
#define BATON_ENABLE_WATCHDOG 1
#endif
#endif
#if BATON_ENABLE_WATCHDOG
#define BATON_DEFAULT_WATCHDOG_NS 10000000000ull
#else
#define BATON_DEFAULT_WATCHDOG_NS 0ull
#endif

// The soundness checker runs before every launch helper in debug builds (always in CLI tools).
#ifndef BATON_CHECK_BEFORE_LAUNCH
#if defined(NDEBUG)
#define BATON_CHECK_BEFORE_LAUNCH 0
#else
#define BATON_CHECK_BEFORE_LAUNCH 1
#endif
#endif

#define BATON_VERSION_MAJOR 0
#define BATON_VERSION_MINOR 1
#define BATON_VERSION_PATCH 0
