// NPU parts tested on their own: the queues that match receives with messages.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "hw/npu/match_queues.h"

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
