#pragma once
// SIGINT (Ctrl-C), SIGTERM (timeout, Slurm, kill) and SIGHUP (the terminal went away) ask a run to
// stop cleanly: it finishes the current slice, writes its reports marked incomplete and exits 130,
// 143 or 129. The command line holds one StopSignals for its whole life, so a signal that comes
// while files load is kept too (the run then stops before its first slice); the long phases ask
// `received()`. The previous handlers come back when it goes.
#include <array>
#include <csignal>

namespace wafersim::tb {

class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // The signal that asked to stop (SIGINT, SIGTERM or SIGHUP), or 0.
  static int received();
  // The exit code for the signal received (tb/common/exit_codes.h); 0 when none was.
  static int exit_code();

 private:
  static constexpr std::array<int, 3> kSignals = {SIGINT, SIGTERM, SIGHUP};
  std::array<struct sigaction, 3> previous_;
};

}  // namespace wafersim::tb
