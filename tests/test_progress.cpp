// The run loop stays responsive however simulated time advances: a burst of activity that does
// not move time at all (delta cycles) or one that jumps past 2^56 ps still yields progress lines,
// because the event counter's poll ends a slice after a quarter second of wall time.
#include <gtest/gtest.h>

#include <sstream>
#include <systemc>

#include "hw/proto/event_counter.h"
#include "tb/run/progress.h"
#include "tests/testing.h"

namespace {

// Counts `steps` events, each in its own delta cycle at the same simulated time after a jump of
// `jump` (so no time slice can end the run's first slice early).
class Burst : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Burst);
  Burst(sc_core::sc_module_name name, uint64_t steps, sc_core::sc_time jump)
      : sc_module(name), left_(steps) {
    SC_METHOD(step);
    sensitive << next_;
    dont_initialize();
    next_.notify(jump);
  }
  uint64_t done = 0;

 private:
  void step() {
    wafersim::hw::count_event();
    ++done;
    if (--left_ > 0) next_.notify(sc_core::SC_ZERO_TIME);
  }
  uint64_t left_;
  sc_core::sc_event next_;
};

}  // namespace

TEST(Progress, LinesAppearWhileSimulatedTimeStandsStill) {
  const uint64_t steps = 60000000;  // about two seconds of delta cycles
  Burst burst("burst", steps, sc_core::sc_time::from_value(1ull << 57));
  std::ostringstream out;
  wafersim::tb::SlicedRun run({[&burst]() { return burst.done; }, steps}, &out,
                              /*quiet_seconds=*/0);
  EXPECT_EQ(run.run(), 0);
  EXPECT_EQ(burst.done, steps);
  // Lines are at least half a second apart: a run of a second or more shows two.
  size_t lines = 0;
  for (size_t at = 0; (at = out.str().find("% of nodes", at)) != std::string::npos; ++at) ++lines;
  EXPECT_GE(lines, 2u) << out.str();
  EXPECT_NE(out.str().find("144115188075.856 us simulated"), std::string::npos) << out.str();
}
