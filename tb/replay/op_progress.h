#pragma once
// One rank's progress through its plan of one collective: per op, the dependencies it still waits
// for, then issued, then done. Only a window of ops is stored: those before it are done, those
// after it untouched (they wait for all their dependencies, as the plan says), but for one op far
// ahead kept aside: the Nop that closes a chunk waits for all its sends, so every send touches it
// from the chunk's start on. A plan runs nearly in op order, so the window stays a few ops wide
// however long the plan is: a 4,096-rank ring All-Reduce of 4 chunks holds 65,000 ops per rank,
// whose progress took 131 KB per rank (540 MB in all) and a cold cache line at every op; its
// window fits in the 8 entries kept inline (in the replay's CollectiveRun, on the line its op
// completion reads anyway). A plan that runs far out of order (chunks all in flight at once)
// widens the window, up to the whole plan at worst.
#include <cassert>
#include <cstdint>

#include "models/collectives/plan.h"

namespace wafersim::tb {

class OpProgress {
 public:
  // An op's state: the count of its dependencies not yet done (below kIssued), or one of these.
  static constexpr uint16_t kIssued = 0x8000, kDone = 0xffff;
  static_assert(collectives::RankPlan::kMaxDeps < kIssued, "dependency counts fit");

  OpProgress() = default;
  OpProgress(const OpProgress&) = delete;
  OpProgress& operator=(const OpProgress&) = delete;
  ~OpProgress() {
    if (on_heap()) delete[] heap_;
  }

  // Op k's state.
  uint16_t at(const collectives::RankPlan& plan, uint32_t k) const {
    if (k < first_) return kDone;
    if (k < end_) return slots()[k & mask()];
    if (k == far_op_) return far_state_;
    return static_cast<uint16_t>(plan.ops[k].dep_count);
  }
  void issue(const collectives::RankPlan& plan, uint32_t k) { entry(plan, k) = kIssued; }
  // One of op k's dependencies is done: whether it now waits for none.
  bool release(const collectives::RankPlan& plan, uint32_t k) { return --entry(plan, k) == 0; }
  void finish(const collectives::RankPlan& plan, uint32_t k) {
    entry(plan, k) = kDone;
    const uint16_t* s = slots();
    while (first_ < end_ && s[first_ & mask()] == kDone) ++first_;
  }

  // The ops that may be issued and not done lie from first_open() to before end_open(), and
  // far_open() if it is not kNone: all the others before are done, all those after untouched.
  static constexpr uint32_t kNone = UINT32_MAX;
  uint32_t first_open() const { return first_; }
  uint32_t end_open() const { return end_; }
  uint32_t far_open() const { return far_op_; }
  // How many ops the window holds before it must grow (8 inline; a power of two).
  uint32_t capacity() const { return mask() + 1; }

 private:
  static constexpr uint8_t kInlineShift = 3;
  static constexpr uint32_t kInline = 1u << kInlineShift;

  uint32_t mask() const { return (1u << shift_) - 1; }
  bool on_heap() const { return shift_ > kInlineShift; }
  uint16_t* slots() { return on_heap() ? heap_ : inline_; }
  const uint16_t* slots() const { return on_heap() ? heap_ : inline_; }
  // Op k's entry, in the window or aside (k is not done).
  uint16_t& entry(const collectives::RankPlan& plan, uint32_t k) {
    assert(k >= first_);
    if (k >= end_) {
      if (k - first_ > mask()) return far_entry(plan, k);
      extend(plan, k);
    }
    return slots()[k & mask()];
  }
  // The entry of op k, beyond what the window can hold: the one kept aside, or the window grown.
  uint16_t& far_entry(const collectives::RankPlan& plan, uint32_t k);
  // Widens the window to op k (within its capacity), each op new to it waiting for all its
  // dependencies (the one aside, if among them, as it was).
  void extend(const collectives::RankPlan& plan, uint32_t k);

  uint32_t first_ = 0;       // every op before it is done
  uint32_t end_ = 0;         // no op from it on has been touched, but far_op_
  uint32_t far_op_ = kNone;  // an op touched beyond the window, and its state
  uint16_t far_state_ = 0;
  uint8_t shift_ = kInlineShift;  // capacity: 1 << shift_
  // Op k's entry is slot k mod capacity: the window moves without copying.
  union {
    uint16_t inline_[kInline];
    uint16_t* heap_;
  };
};

}  // namespace wafersim::tb
