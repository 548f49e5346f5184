// baton/async/slot_ledger.hpp — which device slot and staging slab each pipeline chunk uses, and
// which earlier chunk it must wait for, over the pipeline's whole life. Host only; no CUDA.
//
// The rule it keeps: a slot's next user waits for its previous user, whichever call issued it.
// pipeline (baton/async/pipeline.cuh) numbers every chunk it issues with one sequence that runs
// across enqueue() calls, so the first chunks of a call wait for the last chunks of the call
// before it; deciding reuse per call (chunk index >= K) lets the second of two back-to-back
// enqueue() calls overwrite slots whose compute and D2H are still running.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace baton::async {

class SlotLedger {
 public:
  static constexpr uint64_t none = ~uint64_t(0);

  // One chunk's place: its sequence number, its slot, and the sequence number of the slot's
  // previous user (none on the slot's first use).
  struct chunk {
    uint64_t seq = 0;
    int slot = 0;
    uint64_t previous = none;
    [[nodiscard]] bool reuses() const noexcept { return previous != none; }
  };

  SlotLedger() = default;
  explicit SlotLedger(int slots) : last_(size_t(slots > 0 ? slots : 1), none), drain_ticket_(last_.size(), 0) {}

  [[nodiscard]] int slots() const noexcept { return int(last_.size()); }
  [[nodiscard]] uint64_t issued() const noexcept { return next_; }

  // The next chunk: slots round-robin over the whole sequence.
  chunk next() {
    chunk c;
    c.seq = next_++;
    c.slot = int(c.seq % last_.size());
    c.previous = last_[size_t(c.slot)];
    last_[size_t(c.slot)] = c.seq;
    return c;
  }

  // Staged outputs: the drain ticket (1-based count of drain jobs) of the last job that reads the
  // slot's output slab; 0 when no job ever read it. A chunk that writes the slab again waits until
  // that many drain jobs have finished.
  [[nodiscard]] uint64_t drain_ticket(int slot) const { return drain_ticket_[size_t(slot)]; }
  void set_drain_ticket(int slot, uint64_t ticket) { drain_ticket_[size_t(slot)] = ticket; }

 private:
  uint64_t next_ = 0;
  std::vector<uint64_t> last_;          // per slot: sequence number of its last user
  std::vector<uint64_t> drain_ticket_;  // per slot: see drain_ticket()
};

// The name before the naming rule (docs/naming.md).
using slot_ledger [[deprecated("renamed SlotLedger, docs/naming.md")]] = SlotLedger;

}  // namespace baton::async
