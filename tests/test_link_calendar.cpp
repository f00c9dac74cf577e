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
