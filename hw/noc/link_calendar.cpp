#include "hw/noc/link_calendar.h"

#include <algorithm>

namespace wafersim::hw {

using sc_core::sc_time;

namespace {

// The index of the step of `v` in force at `t`, or -1 if none has begun.
template <typename Steps>
long step_at(const Steps& v, const sc_time& t) {
  if (v.n == 0 || t < v.step[0].at) return -1;
  // Messages reach a link at or near the end of what is booked on it: search from the back.
  long i = v.n - 1;
  while (v.step[i].at > t) --i;  // stops at 0 at the latest
  return i;
}

template <typename Steps>
double used(const Steps& v, long i) {
  return i < 0 ? 0 : v.step[i].used;
}

}  // namespace

void LinkCalendar::view(Steps& v) const {
  if (one_rate_ == kSteps) {
    v.step = general_->steps.data() + general_->first;
    v.n = static_cast<long>(general_->steps.size() - general_->first);
  } else if (one_rate_ > 0) {
    v.one[0] = {one_start_, one_rate_};
    v.one[1] = {end_, 0};
    v.step = v.one;
    v.n = 2;
  } else {
    v.step = nullptr;
    v.n = 0;
  }
}

size_t LinkCalendar::size() const {
  Steps v;
  view(v);
  return static_cast<size_t>(v.n);
}

sc_time LinkCalendar::first_fit(const sc_time& from, const sc_time& length, double rate) const {
  if (from >= end_) return from;  // the common case: nothing booked from then on
  Steps v;
  view(v);
  // Rates are sums of doubles: allow for their rounding.
  const double limit = general_->capacity * (1 + 1e-9) - rate;
  const sc_time& slack = general_->slack;
  const sc_time needed = length > slack ? length - slack : sc_core::SC_ZERO_TIME;
  sc_time start = from;
  long i = step_at(v, start);
  for (;;) {
    // The steps in force over [start, start + length): the first one that lacks the rate moves
    // the start to its end (the last step, in force for ever, has the whole link free).
    bool fits = true;
    for (long j = i;; ++j) {
      if (used(v, j) > limit) {
        start = v.step[j + 1].at;
        i = j + 1;
        fits = false;
        break;
      }
      if (j + 1 == v.n || v.step[j + 1].at >= start + needed) break;
    }
    if (fits) return start;
  }
}

double LinkCalendar::spare_rate(const sc_time& from, double amount, const sc_time& unit,
                                double rate) const {
  if (from >= end_) return rate;
  Steps v;
  view(v);
  const long first = step_at(v, from);
  const double capacity = general_->capacity;
  const sc_time& slack = general_->slack;
  // Each lower rate streams longer and may meet more bookings: lower it until it holds throughout
  // (at most once per step).
  for (;;) {
    const sc_time length = unit * (amount / rate);
    const sc_time needed = length > slack ? length - slack : sc_core::SC_ZERO_TIME;
    double spare = rate;
    for (long j = first;; ++j) {
      spare = std::min(spare, capacity - used(v, j));
      if (j + 1 == v.n || v.step[j + 1].at >= from + needed) break;
    }
    if (spare >= rate * (1 - 1e-9)) return rate;
    if (spare <= capacity * 1e-6) return 0;
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
  Steps v;
  view(v);
  long i = step_at(v, from);
  sc_time t = from;
  for (int k = 0; k < kCandidates && t < best_end; ++k) {
    const double r = spare_rate(t, amount, unit, rate);
    if (r > 0 && t + unit * (amount / r) < best_end) {
      best = {t, r};
      best_end = t + unit * (amount / r);
    }
    // The next time the load drops.
    do ++i;
    while (i < v.n && used(v, i) >= used(v, i - 1));
    if (i >= v.n) break;
    t = v.step[i].at;
  }
  return best;
}

void LinkCalendar::to_steps() {
  std::vector<Step>& steps = general_->steps;
  steps.clear();
  general_->first = 0;
  if (one_rate_ > 0) {
    steps.push_back({one_start_, one_rate_});
    steps.push_back({end_, 0});
  }
  one_rate_ = kSteps;
}

size_t LinkCalendar::split(const sc_time& t) {
  Steps v;
  view(v);
  std::vector<Step>& steps = general_->steps;
  const long first = general_->first;
  const long i = step_at(v, t) + first;
  if (i >= first && steps[i].at == t) return static_cast<size_t>(i);
  const Step s{t, i >= first ? steps[i].used : 0};
  steps.insert(steps.begin() + (i + 1), s);
  return static_cast<size_t>(i + 1);
}

void LinkCalendar::book(const sc_time& start, const sc_time& length, double rate) {
  if (length == sc_core::SC_ZERO_TIME) return;
  const sc_time end = start + length;
  if (start >= end_ && one_rate_ == kEmpty) {  // the link's only booking: the common case
    end_ = end;
    if (rate > 0) {  // (a booking of no rate only moves the end)
      one_start_ = start;
      one_rate_ = rate;
    }
    return;
  }
  if (one_rate_ != kSteps) to_steps();
  std::vector<Step>& steps = general_->steps;
  if (start >= end_) {  // after everything booked: two steps at the back, or one if back to back
    if (general_->first < steps.size() && steps.back().at == start)
      steps.back().used = rate;
    else
      steps.push_back({start, rate});
    steps.push_back({end, 0});
    end_ = end;
    return;
  }
  end_ = std::max(end_, end);
  const size_t begin = split(start);
  const size_t stop = split(end);
  for (size_t k = begin; k < stop; ++k) steps[k].used += rate;
}

void LinkCalendar::forget_until(const sc_time& now) {
  if (end_ <=
      now) {  // all over: the common case, kept cheap (the steps are cleared when next used)
    one_rate_ = kEmpty;
    return;
  }
  if (one_rate_ != kSteps) return;  // the one booking is still in force or ahead
  std::vector<Step>& steps = general_->steps;
  uint32_t& first = general_->first;
  while (first + 1 < steps.size() && steps[first + 1].at <= now) ++first;
  // Compact once the forgotten part is most of the vector: amortised O(1) per booking.
  if (first > 32 && first * 2 > steps.size()) {
    steps.erase(steps.begin(), steps.begin() + static_cast<long>(first));
    first = 0;
  }
}

}  // namespace wafersim::hw
