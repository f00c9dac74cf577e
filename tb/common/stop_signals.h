#pragma once
// SIGINT (Ctrl-C) and SIGTERM (timeout, Slurm, kill) ask a run to stop cleanly: it finishes the
// current slice, writes its reports marked incomplete and exits 130 or 143. While a StopSignals
// object lives it catches both; the previous handlers come back when it goes.
#include <csignal>

namespace wafersim::tb {

class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // The signal that asked to stop (SIGINT or SIGTERM), or 0.
  static int received();
  // The exit code for the signal received (tb/common/exit_codes.h); 0 when none was.
  static int exit_code();

 private:
  struct sigaction previous_int_, previous_term_;
};

}  // namespace wafersim::tb
