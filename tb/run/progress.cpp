#include "tb/run/progress.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ostream>
#include <systemc>

#include "hw/proto/event_counter.h"
#include "tb/common/stop_signals.h"

namespace wafersim::tb {

namespace {

using Clock = std::chrono::steady_clock;

constexpr uint64_t kPollEvents = 1 << 16;  // about a millisecond of simulation between polls
constexpr double kSliceWallSeconds = 0.2;

Clock::time_point slice_started;

// Called by the event counter: ends the slice when a signal came or it ran long.
void poll() {
  hw::EventCounter& e = hw::events();
  e.poll_at = e.count + kPollEvents;
  if (StopSignals::received() ||
      std::chrono::duration<double>(Clock::now() - slice_started).count() >
          1.25 * kSliceWallSeconds)
    sc_core::sc_pause();
}

std::string duration_text(double seconds) {
  if (seconds < 60) return fmt::format("{:.0f} s", seconds);
  if (seconds < 3600)
    return fmt::format("{:.0f} min {:02.0f} s", std::floor(seconds / 60), std::fmod(seconds, 60));
  return fmt::format("{:.1f} h", seconds / 3600);
}

// The kernel's time limit: a slice may not reach past it.
sc_core::sc_time room_left() {
  return sc_core::sc_max_time() - sc_core::sc_time_stamp();
}

}  // namespace

SlicedRun::SlicedRun(ProgressSource source, std::ostream* out, double quiet_seconds)
    : source_(std::move(source)), out_(out), quiet_seconds_(quiet_seconds) {}

int SlicedRun::run() {
  hw::EventCounter& counter = hw::events();
  counter.poll = poll;
  counter.poll_at = counter.count + kPollEvents;
  const auto start = Clock::now();
  auto last_print = start;
  uint64_t last_events = counter.count;
  sc_core::sc_time slice(1, sc_core::SC_US);
  bool shown = false;
  // Before the first slice the kernel has not initialised, so it reports no pending activity.
  bool first = true;
  while (!StopSignals::received() && sc_core::sc_get_status() != sc_core::SC_STOPPED &&
         (first || sc_core::sc_pending_activity())) {
    const bool first_slice = first;
    first = false;
    const auto before = Clock::now();
    slice_started = before;
    // Idle stretches are skipped: a slice starts at the next activity.
    const sc_core::sc_time gap =
        first_slice ? sc_core::SC_ZERO_TIME : sc_core::sc_time_to_pending_activity();
    const sc_core::sc_time room = room_left();
    sc_core::sc_start(gap < room && slice < room - gap ? gap + slice : room);
    const double took = std::chrono::duration<double>(Clock::now() - before).count();
    const double scale = took > 1e-4 ? std::clamp(kSliceWallSeconds / took, 0.25, 4.0) : 4.0;
    slice = std::max(slice * scale, sc_core::sc_time(1, sc_core::SC_NS));
    const auto now = Clock::now();
    const double elapsed = std::chrono::duration<double>(now - start).count();
    if (out_ && elapsed >= quiet_seconds_ &&
        std::chrono::duration<double>(now - last_print).count() >= 0.5) {
      const double rate =
          (counter.count - last_events) / std::chrono::duration<double>(now - last_print).count();
      last_events = counter.count;
      last_print = now;
      const double fraction =
          source_.total ? static_cast<double>(source_.done()) / source_.total : 0.0;
      const std::string eta =
          fraction > 0 ? duration_text(elapsed * (1 - fraction) / fraction) : std::string("?");
      *out_ << fmt::format(
                   "\r  {:.3f} us simulated | {:5.1f}% of {} | {:.2f} M events/s | "
                   "{} elapsed | ETA {}   ",
                   sc_core::sc_time_stamp().to_seconds() * 1e6, 100 * fraction, source_.units,
                   rate / 1e6, duration_text(elapsed), eta)
            << std::flush;
      shown = true;
    }
    if (room_left() == sc_core::SC_ZERO_TIME) break;  // nothing can happen after the end of time
  }
  counter.poll = nullptr;
  counter.poll_at = UINT64_MAX;
  if (shown) *out_ << "\n";
  return StopSignals::exit_code();
}

}  // namespace wafersim::tb
