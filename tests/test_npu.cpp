// NPU parts tested on their own: the queues that match receives with messages, the reduction
// engines.
#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <random>
#include <vector>

#include "hw/npu/match_queues.h"
#include "hw/npu/reduction_engines.h"

using wafersim::hw::MatchKey;
using wafersim::hw::MatchQueues;

// Items under one key come out first in, first out, whether the key sits in an inline slot or in
// the pool (a second item moves it there), and keys never mix.
TEST(MatchQueues, FirstInFirstOutPerKeyAcrossSlotsAndPool) {
  MatchQueues<int> q;
  const MatchKey a{1, 10}, b{2, 10}, c{1, 11}, d{3, 12};
  q.push(a, 1);  // a and b take the two slots
  q.push(b, 2);
  q.push(c, 3);  // no free slot: pooled
  q.push(a, 4);  // a's second item: a moves to the pool, 1 before 4
  q.push(d, 5);  // the slot a left
  q.push(a, 6);
  EXPECT_EQ(q.keys(), 4u);

  // A reference model: a list per key.
  std::map<std::pair<int, uint64_t>, std::vector<int>> seen;
  q.for_each([&](const MatchKey& k, int item) { seen[{k.src, k.tag}].push_back(item); });
  EXPECT_EQ((seen[{1, 10}]), (std::vector<int>{1, 4, 6}));
  EXPECT_EQ((seen[{2, 10}]), (std::vector<int>{2}));

  int item = 0;
  ASSERT_TRUE(q.pop(a, item));
  EXPECT_EQ(item, 1);
  ASSERT_TRUE(q.pop(a, item));
  EXPECT_EQ(item, 4);
  q.push(a, 7);
  ASSERT_TRUE(q.pop(a, item));
  EXPECT_EQ(item, 6);
  ASSERT_TRUE(q.pop(a, item));
  EXPECT_EQ(item, 7);
  EXPECT_FALSE(q.pop(a, item));
  ASSERT_TRUE(q.pop(d, item));
  EXPECT_EQ(item, 5);
  ASSERT_TRUE(q.pop(c, item));
  EXPECT_EQ(item, 3);
  ASSERT_TRUE(q.pop(b, item));
  EXPECT_EQ(item, 2);
  EXPECT_FALSE(q.pop(b, item));
  EXPECT_EQ(q.keys(), 0u);
}

// Many keys at once (a direct all-to-all posts a receive per peer): all found, in order.
TEST(MatchQueues, ManyKeysAtOnce) {
  MatchQueues<int> q;
  for (int r = 0; r < 1000; ++r) q.push({r, 7}, r);
  for (int r = 0; r < 1000; ++r) q.push({r, 7}, r + 1000);
  EXPECT_EQ(q.keys(), 1000u);
  for (int r = 999; r >= 0; --r) {
    int item = -1;
    ASSERT_TRUE(q.pop({r, 7}, item));
    EXPECT_EQ(item, r);
    ASSERT_TRUE(q.pop({r, 7}, item));
    EXPECT_EQ(item, r + 1000);
  }
  EXPECT_EQ(q.keys(), 0u);
}

// Keys that come and go by the thousand, as in a long collective (the index reuses its entries
// and rebuilds itself): every pop agrees with a reference model of a queue per key.
TEST(MatchQueues, KeysComingAndGoingAgreeWithAReferenceModel) {
  MatchQueues<int> q;
  std::map<std::pair<int, uint64_t>, std::deque<int>> model;
  std::mt19937 random(7);
  int next_item = 0;
  for (int step = 0; step < 200000; ++step) {
    // Keys from a window that moves on, as a collective's tags do; a few live long.
    const int src = static_cast<int>(random() % 16);
    const uint64_t tag = step / 64 + random() % 48;
    const MatchKey key{src, tag};
    if (random() % 2) {
      q.push(key, next_item);
      model[{src, tag}].push_back(next_item++);
    } else {
      int item = -1;
      auto it = model.find({src, tag});
      const bool expected = it != model.end() && !it->second.empty();
      ASSERT_EQ(q.pop(key, item), expected) << "step " << step;
      if (expected) {
        ASSERT_EQ(item, it->second.front()) << "step " << step;
        it->second.pop_front();
        if (it->second.empty()) model.erase(it);
      }
    }
    if (step % 10000 == 0) {
      ASSERT_EQ(q.keys(), model.size()) << "step " << step;
    }
  }
  size_t items = 0;
  q.for_each([&](const MatchKey& k, int item) {
    auto& queue = model.at({k.src, k.tag});
    EXPECT_EQ(item, queue[0]);
    queue.pop_front();
    ++items;
  });
  for (const auto& [key, queue] : model) EXPECT_TRUE(queue.empty());
  EXPECT_GT(items, 0u);
}

// The first engine free, against every engine's free time kept and the earliest taken: random
// reductions arriving in time order, on 1, 3 and 64 engines, some arriving when all are idle.
TEST(ReductionEngines, TakeTheFirstFreeAsAScanOfEveryEngineWould) {
  using sc_core::SC_NS;
  using sc_core::sc_time;
  std::mt19937 rng(11);
  for (int engines : {1, 3, 64}) {
    wafersim::hw::ReductionEngines reducers(engines, 100.0, 1.0, sc_time(1, SC_NS));
    std::vector<sc_time> free_at(static_cast<size_t>(engines), sc_core::SC_ZERO_TIME);
    sc_time now = sc_core::SC_ZERO_TIME;
    for (int i = 0; i < 2000; ++i) {
      now += sc_time(static_cast<double>(rng() % 4 == 0 ? 500 : rng() % 3), SC_NS);
      const sc_time duration = reducers.time_for(100 * (1 + rng() % 20));
      auto first = std::min_element(free_at.begin(), free_at.end());
      const sc_time expected = std::max(now, *first);
      *first = expected + duration;
      const sc_time begin = std::max(now, reducers.take(now));
      ASSERT_EQ(begin, expected) << engines << " engines, reduction " << i;
      reducers.busy_until(begin + duration);
    }
  }
}

// Whole cycles, rounded up: 1,000 bytes at 1,600 GB/s take 0.625 ns, one cycle of 1 GHz; at
// 0.5 GHz one cycle of 2 ns.
TEST(ReductionEngines, TimeInWholeCyclesOfTheClock) {
  using sc_core::SC_NS;
  using sc_core::sc_time;
  EXPECT_EQ(wafersim::hw::ReductionEngines(1, 1600, 1.0, sc_time(1, SC_NS)).time_for(1000),
            sc_time(1, SC_NS));
  EXPECT_EQ(wafersim::hw::ReductionEngines(1, 1600, 0.5, sc_time(2, SC_NS)).time_for(1000),
            sc_time(2, SC_NS));
  EXPECT_EQ(wafersim::hw::ReductionEngines(1, 1, 1.0, sc_time(1, SC_NS)).time_for(3),
            sc_time(3, SC_NS));
  EXPECT_EQ(wafersim::hw::ReductionEngines(1, 1, 1.0, sc_time(1, SC_NS)).time_for(0),
            sc_core::SC_ZERO_TIME);
}
