// The time-ordered ring (hw/proto/timed_queue) that holds credits coming back over a link, on its
// own, against a reference model: a list kept sorted by time, equal times in insertion order.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <systemc>
#include <vector>

#include "hw/proto/timed_queue.h"

using sc_core::SC_NS;
using sc_core::sc_time;
namespace {
struct Credit {  // as FabricNode files them
  sc_time at;
  int vc;
  int credits;
};
using CreditQueue = wafersim::hw::TimedQueue<Credit>;
}  // namespace

TEST(TimedQueue, KeepsTimeOrderThroughGrowthWrapAndOutOfOrderArrivals) {
  CreditQueue q;
  std::vector<Credit> reference;
  std::mt19937 rng(7);
  int next_id = 0;  // carried in `credits`, to tell entries apart
  double clock = 0;
  for (int step = 0; step < 2000; ++step) {
    // Mostly in order, sometimes a few cycles early (a unit that left before one sent earlier).
    const int burst = static_cast<int>(rng() % 4);
    for (int k = 0; k < burst; ++k) {
      clock += 1;
      const double at = clock - ((rng() % 5 == 0) ? static_cast<double>(rng() % 6) : 0.0);
      Credit e{sc_time(at, SC_NS), static_cast<int>(rng() % 16), next_id++};
      q.insert(e);
      auto slot = std::upper_bound(reference.begin(), reference.end(), e,
                                   [](const auto& a, const auto& b) { return a.at < b.at; });
      reference.insert(slot, e);
    }
    // Take out what is due by a moment behind the clock: sometimes everything (the ring starts
    // again at its first slot), sometimes far behind (it fills and grows).
    const int lag = rng() % 3 == 0 ? 0 : (rng() % 4 == 0 ? 40 : 3);
    const sc_time now(std::max(0.0, clock - lag), SC_NS);
    while (!q.empty() && q.front().at <= now) {
      ASSERT_FALSE(reference.empty());
      EXPECT_EQ(q.front().credits, reference.front().credits) << "step " << step;
      EXPECT_EQ(q.front().vc, reference.front().vc);
      EXPECT_EQ(q.front().at, reference.front().at);
      q.pop_front();
      reference.erase(reference.begin());
    }
    EXPECT_TRUE(reference.empty() || reference.front().at > now);
  }
  while (!q.empty()) {
    ASSERT_FALSE(reference.empty());
    EXPECT_EQ(q.front().credits, reference.front().credits);
    q.pop_front();
    reference.erase(reference.begin());
  }
  EXPECT_TRUE(reference.empty());
}
