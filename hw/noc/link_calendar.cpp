#include "hw/noc/link_calendar.h"

#include <algorithm>

namespace wafersim::hw {

using sc_core::sc_time;

long LinkCalendar::step_at(const sc_time& t) const {
  const long first = static_cast<long>(first_);
  if (first_ == steps_.size() || t < steps_[first_].at) return first - 1;
  // Messages reach a link at or near the end of what is booked on it: search from the back.
  long i = static_cast<long>(steps_.size()) - 1;
  while (steps_[i].at > t) --i;  // stops at first_ at the latest
  return i;
}

sc_time LinkCalendar::first_fit(const sc_time& from, const sc_time& length, double rate) const {
  if (from >= end_) return from;  // the common case: nothing booked from then on
  // Rates are sums of doubles: allow for their rounding.
  const double limit = capacity_ * (1 + 1e-9) - rate;
  const long n = static_cast<long>(steps_.size());
  const sc_time needed = length > slack_ ? length - slack_ : sc_core::SC_ZERO_TIME;
  sc_time start = from;
  long i = step_at(start);
  for (;;) {
    // The steps in force over [start, start + length): the first one that lacks the rate moves
    // the start to its end (the last step, in force for ever, has the whole link free).
    bool fits = true;
    for (long j = i;; ++j) {
      if (used(j) > limit) {
        start = steps_[j + 1].at;
        i = j + 1;
        fits = false;
        break;
      }
      if (j + 1 == n || steps_[j + 1].at >= start + needed) break;
    }
    if (fits) return start;
  }
}

double LinkCalendar::spare_rate(const sc_time& from, double amount, const sc_time& unit,
                                double rate) const {
  if (from >= end_) return rate;
  const long n = static_cast<long>(steps_.size());
  const long first = step_at(from);
  // Each lower rate streams longer and may meet more bookings: lower it until it holds throughout
  // (at most once per step).
  for (;;) {
    const sc_time length = unit * (amount / rate);
    const sc_time needed = length > slack_ ? length - slack_ : sc_core::SC_ZERO_TIME;
    double spare = rate;
    for (long j = first;; ++j) {
      spare = std::min(spare, capacity_ - used(j));
      if (j + 1 == n || steps_[j + 1].at >= from + needed) break;
    }
    if (spare >= rate * (1 - 1e-9)) return rate;
    if (spare <= capacity_ * 1e-6) return 0;
    rate = spare;
  }
}

LinkCalendar::Fit LinkCalendar::soonest_end(const sc_time& from, double amount, const sc_time& unit,
                                            double rate) const {
  const sc_time length = unit * (amount / rate);
  Fit best{first_fit(from, length, rate), rate};
  if (best.start == from) return best;
  sc_time best_end = best.start + length;
  // The search looks at `from` and at most the next few times the link's load drops (a bound on
  // the work per message; later starts rarely end sooner than the whole rate's).
  constexpr int kCandidates = 8;
  const long n = static_cast<long>(steps_.size());
  long i = step_at(from);
  sc_time t = from;
  for (int k = 0; k < kCandidates && t < best_end; ++k) {
    const double r = spare_rate(t, amount, unit, rate);
    if (r > 0 && t + unit * (amount / r) < best_end) {
      best = {t, r};
      best_end = t + unit * (amount / r);
    }
    // The next time the load drops.
    do ++i;
    while (i < n && used(i) >= used(i - 1));
    if (i >= n) break;
    t = steps_[i].at;
  }
  return best;
}

size_t LinkCalendar::split(const sc_time& t) {
  const long i = step_at(t);
  if (i >= static_cast<long>(first_) && steps_[i].at == t) return static_cast<size_t>(i);
  const Step s{t, used(i)};
  steps_.insert(steps_.begin() + (i + 1), s);
  return static_cast<size_t>(i + 1);
}

void LinkCalendar::book(const sc_time& start, const sc_time& length, double rate) {
  if (length == sc_core::SC_ZERO_TIME) return;
  const sc_time end = start + length;
  if (start >= end_) {  // after everything booked: two steps at the back, or one if back to back
    if (first_ < steps_.size() && steps_.back().at == start)
      steps_.back().used = rate;
    else
      steps_.push_back({start, rate});
    steps_.push_back({end, 0});
    end_ = end;
    return;
  }
  end_ = std::max(end_, end);
  const size_t begin = split(start);
  const size_t stop = split(end);
  for (size_t k = begin; k < stop; ++k) steps_[k].used += rate;
}

void LinkCalendar::forget_until(const sc_time& now) {
  if (end_ <= now) {  // all over: the common case, kept cheap
    steps_.clear();
    first_ = 0;
    return;
  }
  while (first_ + 1 < steps_.size() && steps_[first_ + 1].at <= now) ++first_;
  // Compact once the forgotten part is most of the vector: amortised O(1) per booking.
  if (first_ > 32 && first_ * 2 > steps_.size()) {
    steps_.erase(steps_.begin(), steps_.begin() + static_cast<long>(first_));
    first_ = 0;
  }
}

}  // namespace wafersim::hw
