#pragma once
// A link's bookings at message fidelity. A message crosses its whole path inside the call that
// sends it (temporal decoupling), so messages book a link in the order they are sent, not the order
// they reach it: a message sent later may reach the link first. And a message streams at its
// path's bottleneck rate, so a link faster than that (an NPU's attach link, the sum of its
// router's links) carries several messages at once, as the flits of several packets interleave on
// it at flit fidelity.
//
// So a link books bandwidth over time: a message takes the first interval, at or after it reaches
// the link, in which the link has its rate to spare for as long as it streams, or streams slower
// at what the link has to spare (soonest_end) when that ends sooner, as its packets would
// interleave with those of slower streams. It is not held behind a booking made for a message
// that reaches the link later, while the link idles. A booking is never moved once made: a
// message that reaches the link first but does not fit before such a booking still waits for it
// (docs/design.md).
#include <cstdint>
#include <memory>
#include <systemc>
#include <vector>

namespace wafersim::hw {

class LinkCalendar {
 public:
  // `capacity`: the link's rate, in any unit the rates below share (bytes per cycle). `slack`: how
  // far the end of an interval may run into a booking that lacks the rate (one cycle of the link's
  // clock in the fabric): streams that meet back to back but for the rounding of their times to
  // the cycle then follow each other, where without it one would wait for the whole of the other
  // (a stream ending 0.6 ns into the next booking waited 5.6 us; docs/design.md).
  explicit LinkCalendar(double capacity = 1, sc_core::sc_time slack = sc_core::SC_ZERO_TIME)
      : general_(new General{capacity, slack, 0, {}}) {}

  // The earliest start at or after `from` of an interval `length` long in which the link has
  // `rate` (<= capacity) to spare throughout (but for its last `slack`).
  sc_core::sc_time first_fit(const sc_core::sc_time& from, const sc_core::sc_time& length,
                             double rate) const;
  // The highest rate up to `rate` that the link has to spare from `from` for as long as streaming
  // `amount` (in rate units x `unit`s of time) at it takes, but for its last `slack`; 0 when it has
  // none to spare at `from`.
  double spare_rate(const sc_core::sc_time& from, double amount, const sc_core::sc_time& unit,
                    double rate) const;
  // Where streaming `amount` (rate units x `unit`s of time) at up to `rate` from `from` on ends
  // soonest: at its whole rate from first_fit, or from `from` or one of the next few times the
  // link's load drops at what it has to spare then (as packets interleave with slower streams').
  struct Fit {
    sc_core::sc_time start;
    double rate;
  };
  Fit soonest_end(const sc_core::sc_time& from, double amount, const sc_core::sc_time& unit,
                  double rate) const;
  // Books `rate` over [start, start + length), which first_fit returned with nothing booked since.
  void book(const sc_core::sc_time& start, const sc_core::sc_time& length, double rate);
  // Forgets what lies before `now`: no message can reach the link earlier.
  void forget_until(const sc_core::sc_time& now);
  // When the last booking ends: the link is free from then on.
  const sc_core::sc_time& free_from() const { return end_; }
  // How many rate changes are kept (for tests).
  size_t size() const;

 private:
  // The rate in use from `at` until the next step (or for ever, for the last one; it is 0).
  struct Step {
    sc_core::sc_time at;
    double used;
  };
  // The steps not yet over (a view of the general form's, or of the one booking's two, held in
  // `one`).
  struct Steps {
    const Step* step;
    long n;
    Step one[2];
  };
  void view(Steps& v) const;
  // Makes a step begin at `t`; returns its index.
  size_t split(const sc_core::sc_time& t);
  // From one booking (or none) to the general form.
  void to_steps();

  // What a message reads and writes when the link is free, in 32 bytes: when the last booking
  // ends and, as most links hold one booking at a time, that booking itself; its rate also tells
  // the calendar's form. The general form's steps, and what only it reads, lie behind a pointer:
  // a message's visit to a free link then reads and writes the calendar in the output's first
  // cache line alone (docs/performance.md).
  static constexpr double kEmpty = 0;   // one_rate_: nothing booked from end_ on
  static constexpr double kSteps = -1;  // one_rate_: the general form (general_->steps)
  sc_core::sc_time end_;                // when the last booking ends: the link is free from then on
  sc_core::sc_time one_start_;          // one booking: [one_start_, end_) at one_rate_ (> 0)
  double one_rate_ = kEmpty;
  struct General {
    double capacity;
    sc_core::sc_time slack;
    uint32_t first;           // steps before it are over
    std::vector<Step> steps;  // by time
  };
  std::unique_ptr<General> general_;
};

}  // namespace wafersim::hw
