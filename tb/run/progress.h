#pragma once
// Runs the SystemC kernel in slices so that a long run shows progress (one updating line on
// stderr: simulated time, share of trace nodes done, events per second, ETA) and stops cleanly on
// SIGINT or SIGTERM. A slice ends after a span of simulated time sized to about a fifth of a wall
// second, or earlier when the event counter's poll finds a quarter second of wall time gone (so a
// burst of activity in a long slice cannot hide the line). The order of events is the kernel's
// either way, so results do not depend on slicing.
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>

namespace wafersim::tb {

struct ProgressSource {
  std::function<uint64_t()> done;  // units done: trace nodes, or cycles of a traffic point
  uint64_t total = 0;              // units in all
  std::string units = "nodes";     // their name on the progress line
};

class SlicedRun {
 public:
  // `out` receives the progress line (nullptr: no progress), shown once a run passes
  // `quiet_seconds` of wall time.
  SlicedRun(ProgressSource source, std::ostream* out, double quiet_seconds = 2.0);
  // Simulates until nothing is left to do, sc_stop() is called, or a stop signal has arrived
  // (tb/common/stop_signals.h: caught while a StopSignals lives, as in the command line). Returns
  // the exit code of the signal that stopped it (130, 143 or 129), or 0.
  int run();

 private:
  ProgressSource source_;
  std::ostream* out_;
  double quiet_seconds_;
};

}  // namespace wafersim::tb
