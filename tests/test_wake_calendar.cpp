// The calendar that wakes the fabric's blocks (hw/proto/wake_calendar), on its own: each block runs
// once at the earliest cycle it asked for, in the order blocks asked, across the wheel's horizon,
// and within the cycle when woken during it.
#include <gtest/gtest.h>

#include <functional>
#include <systemc>
#include <utility>
#include <vector>

#include "hw/proto/wake_calendar.h"

using sc_core::SC_NS;
using sc_core::sc_time;
using wafersim::hw::WakeCalendar;

namespace {

using Log = std::vector<std::pair<uint64_t, int>>;  // (cycle, block) per wake

// A block that records its wakes and runs a scripted reaction.
class Block : public WakeCalendar::Sleeper {
 public:
  Block(int id, Log& log, std::function<void(uint64_t)> react = nullptr)
      : id_(id), log_(log), react_(std::move(react)) {}

 protected:
  void on_wake() override {
    const auto cycle = static_cast<uint64_t>(sc_core::sc_time_stamp() / sc_time(2, SC_NS));
    log_.push_back({cycle, id_});
    if (react_) react_(cycle);
  }

 private:
  int id_;
  Log& log_;
  std::function<void(uint64_t)> react_;
};

// Calls `fn` once, at `at`, from a SystemC process of its own (the way a testbench or another
// clock domain wakes fabric blocks).
class At : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(At);
  At(sc_core::sc_module_name name, const sc_time& at, std::function<void()> fn)
      : sc_module(name), fn_(std::move(fn)) {
    SC_METHOD(run);
    dont_initialize();
    sensitive << event_;
    event_.notify(at);
  }

 private:
  void run() { fn_(); }
  std::function<void()> fn_;
  sc_core::sc_event event_;
};

sc_time cycles(double n) {
  return sc_time(2, SC_NS) * n;  // a 500 MHz clock: 2 ns cycles
}

}  // namespace

TEST(WakeCalendar, RunsEachBlockOnceAtItsEarliestCycleInRequestOrder) {
  Log log;
  WakeCalendar calendar("calendar", cycles(1));
  Block a(0, log), b(1, log), far(3, log);
  // c wakes a in its own cycle (same-cycle wake: a runs in that cycle, after c), and itself again
  // 300 cycles later (past the 256-slot wheel).
  Block c(2, log, [&](uint64_t cycle) {
    if (cycle == 4) {
      calendar.wake(a, cycles(4));
      calendar.wake(c, cycles(304));
    }
  });
  At start("start", sc_core::SC_ZERO_TIME, [&] {
    calendar.wake(b, cycles(4));
    calendar.wake(a, cycles(9));
    calendar.wake(a, cycles(7));        // earlier: replaces 9
    calendar.wake(a, cycles(8));        // later than 7: nothing
    calendar.wake(c, cycles(3.5));      // between boundaries: the next one, cycle 4
    calendar.wake(far, cycles(1000));   // beyond the wheel
    calendar.wake(far, cycles(999.2));  // earlier, still beyond: cycle 1000 once
  });
  sc_core::sc_start();
  // A reference worked out by hand: cycle 4 runs b, then c (in the order they asked), then a (woken
  // by c). That earlier wake replaced a's wake at 7: a block is woken once, at the earliest cycle
  // asked for since it last ran, and asks again for whatever it still waits for.
  const Log expected{{4, 1}, {4, 2}, {4, 0}, {304, 2}, {1000, 3}};
  EXPECT_EQ(log, expected);
}

TEST(WakeCalendar, AWakeForTheCurrentCycleFromOutsideRunsInThatCycle) {
  Log log;
  WakeCalendar calendar("calendar", cycles(1));
  Block a(0, log), b(1, log);
  At early("early", cycles(0), [&] { calendar.wake(a, cycles(5)); });
  // At cycle 5, possibly after the calendar has run that cycle's wakes: b must still run at 5.
  At late("late", cycles(5), [&] { calendar.wake(b, cycles(5)); });
  sc_core::sc_start();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0].first, 5u);
  EXPECT_EQ(log[1].first, 5u);
}
