// The pipeline's slot ledger (baton/async/slot_ledger.hpp): slot reuse is decided over the whole
// chunk sequence, across calls, so a call's first chunks wait for the previous call's last ones.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <vector>

#include "baton/async/slot_ledger.hpp"

using baton::async::SlotLedger;

// Random calls of 0..9 chunks on ledgers of 1..5 slots: every chunk's `previous` is exactly the
// latest earlier chunk (of any call) on the same slot, found by brute force over the history, and
// no chunk shares its slot with any of the K - 1 chunks issued just before it.
TEST(SlotLedger, PreviousUserIsTheLatestEarlierChunkOnTheSlotAcrossCalls) {
  std::mt19937 rng(22);
  for (int k = 1; k <= 5; ++k) {
    SlotLedger ledger(k);
    EXPECT_EQ(ledger.slots(), k);
    std::vector<SlotLedger::chunk> history;
    for (int call = 0; call < 200; ++call) {
      const int n = std::uniform_int_distribution<int>(0, 9)(rng);
      for (int i = 0; i < n; ++i) {
        const SlotLedger::chunk c = ledger.next();
        ASSERT_EQ(c.seq, history.size());
        uint64_t expect = SlotLedger::none;
        for (const auto& h : history)
          if (h.slot == c.slot) expect = h.seq;
        ASSERT_EQ(c.previous, expect) << "K=" << k << " call " << call << " chunk " << i;
        // The call-local rule the ledger replaces ("reuse when i >= K") misses the previous call's
        // chunks: here the first chunks of every call but the first must reuse.
        if (history.size() >= size_t(k)) { EXPECT_TRUE(c.reuses()) << "K=" << k << " call " << call << " chunk " << i; }
        for (size_t back = 1; back < size_t(k) && back <= history.size(); ++back)
          ASSERT_NE(history[history.size() - back].slot, c.slot) << "a slot shared within K chunks";
        history.push_back(c);
      }
    }
    EXPECT_EQ(ledger.issued(), history.size());
  }
}

TEST(SlotLedger, DrainTicketsPerSlot) {
  SlotLedger ledger(3);
  for (int s = 0; s < 3; ++s) EXPECT_EQ(ledger.drain_ticket(s), 0u);  // no job ever read it: nothing to wait for
  ledger.set_drain_ticket(1, 7);
  EXPECT_EQ(ledger.drain_ticket(1), 7u);
  EXPECT_EQ(ledger.drain_ticket(0), 0u);
  SlotLedger zero(0);  // clamped to one slot rather than dividing by zero
  EXPECT_EQ(zero.slots(), 1);
  EXPECT_EQ(zero.next().slot, 0);
  EXPECT_TRUE(zero.next().reuses());
}
