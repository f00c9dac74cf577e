// A link's bandwidth bookings at message fidelity (hw/noc/link_calendar), on their own: first fit
// in time and rate, against a reference that samples the booked rate at every picosecond.
#include <gtest/gtest.h>

#include <random>
#include <systemc>
#include <vector>

#include "hw/noc/link_calendar.h"

using sc_core::SC_PS;
using sc_core::sc_time;
using wafersim::hw::LinkCalendar;

namespace {
sc_time ps(double v) {
  return sc_time(v, SC_PS);
}
}  // namespace

TEST(LinkCalendar, AMessageTakesTheFirstGapLongEnough) {
  LinkCalendar link(32);           // bytes per cycle, all messages at the full rate
  link.book(ps(100), ps(50), 32);  // booked first, for a message that reaches the link later
  EXPECT_EQ(link.first_fit(ps(0), ps(100), 32), ps(0));     // fits before it
  EXPECT_EQ(link.first_fit(ps(20), ps(100), 32), ps(150));  // does not: waits for it
  EXPECT_EQ(link.first_fit(ps(120), ps(10), 32), ps(150));  // reaches it while it streams
  link.book(ps(0), ps(100), 32);
  EXPECT_EQ(link.first_fit(ps(0), ps(1), 32), ps(150));  // back to back, no gap left
}

// With a slack of one cycle (the fabric's), a stream that would end less than a cycle into the
// next booking goes before it rather than after it; one cycle more and it waits.
TEST(LinkCalendar, SlackLetsAStreamEndJustIntoTheNextBooking) {
  LinkCalendar strict(32), slack(32, ps(1000));
  for (LinkCalendar* link : {&strict, &slack}) link->book(ps(10000), ps(5000), 32);
  EXPECT_EQ(strict.first_fit(ps(0), ps(10600), 32), ps(15000));
  EXPECT_EQ(slack.first_fit(ps(0), ps(10600), 32), ps(0));
  EXPECT_EQ(slack.first_fit(ps(0), ps(11001), 32), ps(15000));
}

TEST(LinkCalendar, SlowerMessagesShareTheLink) {
  LinkCalendar link(128);  // an attach link: the sum of four 32-byte links
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(link.first_fit(ps(0), ps(2048), 32), ps(0)) << k;
    link.book(ps(0), ps(2048), 32);
  }
  EXPECT_EQ(link.first_fit(ps(0), ps(10), 32), ps(2048));  // the fifth waits
  EXPECT_EQ(link.first_fit(ps(0), ps(10), 1), ps(2048));   // however slow
}

TEST(LinkCalendar, ForgettingThePastKeepsWhatIsAhead) {
  LinkCalendar link(10);
  for (int k = 0; k < 100; ++k) link.book(ps(10 * k), ps(10), 10);  // busy until 1000 ps
  link.forget_until(ps(995));
  EXPECT_LE(link.size(), 2u);
  EXPECT_EQ(link.first_fit(ps(995), ps(5), 10), ps(1000));
  EXPECT_EQ(link.first_fit(ps(995), ps(5), 0), ps(995));  // a rate of nothing always fits
}

// Random bookings of random rates: every first fit has the rate to spare throughout its interval,
// no earlier start does, and the booked rate never exceeds the capacity.
TEST(LinkCalendar, FirstFitAgreesWithAPicosecondReference) {
  const int horizon = 4000, capacity = 8;
  LinkCalendar link(capacity);
  std::vector<int> used(horizon + 400, 0);  // reference: the rate booked in each picosecond
  const auto fits = [&](int start, int length, int rate) {
    for (int t = start; t < start + length; ++t)
      if (used[t] + rate > capacity) return false;
    return true;
  };
  std::mt19937 rng(11);
  int now = 0;
  for (int step = 0; step < 400; ++step) {
    now += static_cast<int>(rng() % 8);
    if (rng() % 3 == 0) link.forget_until(ps(now));
    const int from = now + static_cast<int>(rng() % 200);
    const int length = 1 + static_cast<int>(rng() % 60);
    const int rate = 1 + static_cast<int>(rng() % capacity);
    int expected = from;
    while (!fits(expected, length, rate)) ++expected;
    if (expected + length > horizon) break;
    ASSERT_EQ(link.first_fit(ps(from), ps(length), rate), ps(expected)) << step;
    link.book(ps(expected), ps(length), rate);
    for (int t = expected; t < expected + length; ++t) used[t] += rate;
  }
}

// A message at the link's whole rate meets a slower stream: it streams beside it at the rate left
// (as its packets would interleave with the other's) when that ends sooner than waiting for the
// link to be free, and at the whole rate when waiting ends sooner.
TEST(LinkCalendar, AMessageStreamsAtWhatASlowerStreamLeaves) {
  LinkCalendar link(10);              // bytes per ps, say
  link.book(ps(0), ps(1000), 2);      // a slow stream for a long time
  link.book(ps(200), ps(100), 3);     // and a second one for a while
  // 800 bytes: at 10 per ps it would wait until 1,000; at the 8 left it ends at 100, before the
  // second stream starts.
  const auto fit = link.soonest_end(ps(0), 800, ps(1), 10);
  EXPECT_EQ(fit.start, ps(0));
  EXPECT_DOUBLE_EQ(fit.rate, 8);
  // 2,400 bytes: at 8 it would run into [200, 300) where 5 is left: 5 throughout, 480 ps.
  const auto longer = link.soonest_end(ps(0), 2400, ps(1), 10);
  EXPECT_EQ(longer.start, ps(0));
  EXPECT_DOUBLE_EQ(longer.rate, 5);
  EXPECT_DOUBLE_EQ(link.spare_rate(ps(0), 2400, ps(1), 10), 5);
  // From 250 the second stream's end at 300 is a candidate: 8 from 300 ends before 5 from 250.
  const auto later = link.soonest_end(ps(250), 8000, ps(1), 10);
  EXPECT_EQ(later.start, ps(300));
  EXPECT_DOUBLE_EQ(later.rate, 8);
  // A link with nothing to spare until 10 ps: the message takes the whole rate from then.
  LinkCalendar full(10);
  full.book(ps(0), ps(10), 10);
  const auto waits = full.soonest_end(ps(0), 100, ps(1), 10);
  EXPECT_EQ(waits.start, ps(10));
  EXPECT_DOUBLE_EQ(waits.rate, 10);
}
