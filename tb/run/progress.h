#pragma once
// Runs the SystemC kernel in slices of simulated time so that a long run can show progress (one
// updating line on stderr: simulated time, share of trace nodes done, events per second, ETA) and
// stop cleanly on SIGINT. Slices are sized to about a fifth of a wall second; the order of events
// is the kernel's either way, so results do not depend on slicing.
#include <cstdint>
#include <functional>
#include <iosfwd>

namespace wafersim::tb {

struct ProgressSource {
  std::function<uint64_t()> done;  // trace nodes done
  uint64_t total = 0;              // trace nodes in the workload
};

class SlicedRun {
 public:
  // `out` receives the progress line (nullptr: no progress), shown once a run passes
  // `quiet_seconds` of wall time.
  SlicedRun(ProgressSource source, std::ostream* out, double quiet_seconds = 2.0);
  // Simulates until nothing is left to do, sc_stop() is called, or SIGINT arrives. Returns false
  // when interrupted.
  bool run();

 private:
  ProgressSource source_;
  std::ostream* out_;
  double quiet_seconds_;
};

}  // namespace wafersim::tb
