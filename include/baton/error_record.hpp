// baton/error_record.hpp — the device-side error record the watchdog writes and the host reads.
#pragma once

#include <cstdint>

namespace baton {

enum class DeviceError : uint32_t {
  none = 0,
  watchdog = 1,  // a wait spun past its bound
  aborted = 2,   // set by the host (emulator deadlock detector) to make every wait bail out
};
using device_error [[deprecated("renamed DeviceError, docs/naming.md")]] = DeviceError;

// Lives at offset 0 of a chain's workspace. The first failing wait claims it (CAS on `claim`),
// fills the fields and publishes `code` with release semantics; every other wait sees code != 0
// and bails out, so a broken chain drains instead of hanging.
struct alignas(16) ErrorRecord {
  uint32_t code;      // DeviceError
  uint32_t stage;     // stage index in the chain
  int32_t tile_m, tile_n, tile_z;
  int32_t k_block;    // -1 when the wait was not per k-block
  uint32_t edge;      // edge index in the chain
  uint32_t semaphore; // semaphore index within the edge
  uint32_t expected;  // the target value (epoch * per_epoch + count, mod 2^32)
  uint32_t seen;      // the last value read
  uint32_t epoch;
  uint32_t claim;     // 0 until a failing wait takes ownership of the record
};
static_assert(sizeof(ErrorRecord) == 48);

}  // namespace baton
