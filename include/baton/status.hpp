// baton/status.hpp — the one error style of baton: [[nodiscard]] status values.
//
// Every host function that can fail is [[nodiscard]] and returns `baton::status` (or `baton::result<T>`), carrying a
// code, a human-readable message with the context needed to act on it, and — for CUDA failures —
// the cudaError_t value. Nothing in baton throws, calls exit() or aborts.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace baton {

enum class errc : int {
  ok = 0,
  invalid_argument,      // bad shapes, grids, tile sizes, null pointers
  invalid_order,         // a tile order that is not a bijection over the grid
  invalid_policy,        // semaphore index out of range, wrong per-epoch count, ...
  unsound_policy,        // the soundness checker found a read that no wait covers
  invalid_chain,         // a chain wired to itself, backwards, or with unknown stages
  workspace_too_small,   // missing or undersized workspace
  cuda_error,            // a CUDA runtime call failed; see cuda_code()
  no_device,             // no CUDA device present
  watchdog_timeout,      // a device-side wait spun past its bound (debug watchdog)
  deadlock,              // the CPU emulator detected a deadlock
  parse_error,           // DSL syntax error
  not_supported,
  cancelled,             // async work cancelled before it started, or a wait ended by a stop token
  resource_exhausted,    // a pool (events, pinned buffers) has nothing left and may not grow
};

[[nodiscard]] inline const char* to_string(errc c) noexcept {
  switch (c) {
    case errc::ok: return "ok";
    case errc::invalid_argument: return "invalid argument";
    case errc::invalid_order: return "invalid tile order";
    case errc::invalid_policy: return "invalid sync policy";
    case errc::unsound_policy: return "unsound sync policy";
    case errc::invalid_chain: return "invalid chain";
    case errc::workspace_too_small: return "workspace too small";
    case errc::cuda_error: return "CUDA error";
    case errc::no_device: return "no CUDA device";
    case errc::watchdog_timeout: return "watchdog timeout";
    case errc::deadlock: return "deadlock";
    case errc::parse_error: return "parse error";
    case errc::not_supported: return "not supported";
    case errc::cancelled: return "cancelled";
    case errc::resource_exhausted: return "resource exhausted";
  }
  return "unknown error";
}

class status {
 public:
  status() = default;
  status(errc code, std::string message, int cuda_code = 0)
      : code_(code), cuda_code_(cuda_code), message_(std::move(message)) {}

  [[nodiscard]] static status success() { return {}; }
  [[nodiscard]] bool ok() const noexcept { return code_ == errc::ok; }
  explicit operator bool() const noexcept { return ok(); }
  [[nodiscard]] errc code() const noexcept { return code_; }
  // The cudaError_t value (as int) when code() == errc::cuda_error, 0 otherwise.
  [[nodiscard]] int cuda_code() const noexcept { return cuda_code_; }
  [[nodiscard]] const std::string& message() const noexcept { return message_; }
  [[nodiscard]] std::string to_string() const {
    if (ok()) return "ok";
    return std::string(baton::to_string(code_)) + ": " + message_;
  }
  // Prefix context ("while launching stage 'gemm2': ...").
  [[nodiscard]] status with_context(const std::string& ctx) const {
    if (ok()) return *this;
    return status(code_, ctx + ": " + message_, cuda_code_);
  }

 private:
  errc code_ = errc::ok;
  int cuda_code_ = 0;
  std::string message_;
};

// A value or an error status.
template <class T>
class result {
 public:
  using value_type = T;
  result(T value) : v_(std::move(value)) {}                     // NOLINT: implicit on purpose
  result(status s) : v_(std::move(s)) {}                        // NOLINT
  [[nodiscard]] bool ok() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }
  [[nodiscard]] T& value() & { return std::get<0>(v_); }
  [[nodiscard]] const T& value() const& { return std::get<0>(v_); }
  [[nodiscard]] T&& value() && { return std::get<0>(std::move(v_)); }
  [[nodiscard]] status error() const { return ok() ? status{} : std::get<1>(v_); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }

 private:
  std::variant<T, status> v_;
};

}  // namespace baton

// Propagate a failed status to the caller.
#define BATON_TRY(expr)                         \
  do {                                          \
    ::baton::status baton_try_s_ = (expr);      \
    if (!baton_try_s_.ok()) return baton_try_s_; \
  } while (0)

// Unwrap a result<T> into a declaration, or propagate its error to the caller (whose return type is
// constructible from status: status or any result<U>):
//   BATON_TRY_ASSIGN(auto buf, device_buffer::create(bytes, s));
//   BATON_TRY_ASSIGN(plan, plan_mlp(shape, sms));            // assigns an existing variable
// One per line (the temporary's name carries __LINE__); in a coroutine use BATON_CO_TRY_ASSIGN.
#define BATON_TRY_ASSIGN(decl, expr) BATON_TRY_ASSIGN_IMPL_(BATON_TRY_CAT_(baton_try_r_, __LINE__), decl, expr, return)
#define BATON_CO_TRY_ASSIGN(decl, expr) \
  BATON_TRY_ASSIGN_IMPL_(BATON_TRY_CAT_(baton_try_r_, __LINE__), decl, expr, co_return)
#define BATON_TRY_CAT_(a, b) BATON_TRY_CAT2_(a, b)
#define BATON_TRY_CAT2_(a, b) a##b
#define BATON_TRY_ASSIGN_IMPL_(tmp, decl, expr, ret) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) ret tmp.error();                    \
  decl = std::move(tmp).value()

// The same inside a coroutine returning task<status>.
#define BATON_CO_TRY(expr)                         \
  do {                                             \
    ::baton::status baton_try_s_ = (expr);         \
    if (!baton_try_s_.ok()) co_return baton_try_s_; \
  } while (0)
