#include "tb/run/progress.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <ostream>
#include <systemc>

#include "hw/proto/event_counter.h"

namespace wafersim::tb {

namespace {

volatile std::sig_atomic_t interrupted = 0;

extern "C" void on_sigint(int) {
  interrupted = 1;
}

std::string duration_text(double seconds) {
  if (seconds < 60) return fmt::format("{:.0f} s", seconds);
  if (seconds < 3600)
    return fmt::format("{:.0f} min {:02.0f} s", seconds / 60, std::fmod(seconds, 60));
  return fmt::format("{:.1f} h", seconds / 3600);
}

}  // namespace

SlicedRun::SlicedRun(ProgressSource source, std::ostream* out, double quiet_seconds)
    : source_(std::move(source)), out_(out), quiet_seconds_(quiet_seconds) {}

bool SlicedRun::run() {
  using clock = std::chrono::steady_clock;
  interrupted = 0;
  auto previous = std::signal(SIGINT, on_sigint);
  const auto start = clock::now();
  auto last_print = start;
  uint64_t last_events = hw::event_counter();
  sc_core::sc_time slice(1, sc_core::SC_US);
  bool shown = false;
  // Before the first slice the kernel has not initialised, so it reports no pending activity.
  bool first = true;
  while (!interrupted && sc_core::sc_get_status() != sc_core::SC_STOPPED &&
         (first || sc_core::sc_pending_activity())) {
    first = false;
    const auto before = clock::now();
    sc_core::sc_start(slice);
    const double took = std::chrono::duration<double>(clock::now() - before).count();
    // Aim at about 0.2 s of wall time per slice.
    const double scale = took > 1e-4 ? std::clamp(0.2 / took, 0.25, 4.0) : 4.0;
    slice = slice * scale;
    const auto now = clock::now();
    const double elapsed = std::chrono::duration<double>(now - start).count();
    if (out_ && elapsed >= quiet_seconds_ &&
        std::chrono::duration<double>(now - last_print).count() >= 0.5) {
      const double rate = (hw::event_counter() - last_events) /
                          std::chrono::duration<double>(now - last_print).count();
      last_events = hw::event_counter();
      last_print = now;
      const double fraction =
          source_.total ? static_cast<double>(source_.done()) / source_.total : 0.0;
      const std::string eta =
          fraction > 0 ? duration_text(elapsed * (1 - fraction) / fraction) : std::string("?");
      *out_ << fmt::format(
                   "\r  {:.3f} us simulated | {:5.1f}% of nodes | {:.2f} M events/s | "
                   "ETA {}   ",
                   sc_core::sc_time_stamp().to_seconds() * 1e6, 100 * fraction, rate / 1e6, eta)
            << std::flush;
      shown = true;
    }
  }
  if (shown) *out_ << "\n";
  std::signal(SIGINT, previous);
  return !interrupted;
}

}  // namespace wafersim::tb
