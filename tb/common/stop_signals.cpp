#include "tb/common/stop_signals.h"

#include "tb/common/exit_codes.h"

namespace wafersim::tb {

namespace {

volatile std::sig_atomic_t stop_signal = 0;

extern "C" void on_stop_signal(int signal) {
  stop_signal = signal;
}

}  // namespace

StopSignals::StopSignals() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: a parent waiting for children wakes up
  for (size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &action, &previous_[i]);
}

StopSignals::~StopSignals() {
  for (size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &previous_[i], nullptr);
}

int StopSignals::received() {
  return stop_signal;
}

int StopSignals::exit_code() {
  switch (stop_signal) {
    case SIGINT:
      return kInterrupted;
    case SIGTERM:
      return kTerminated;
    case SIGHUP:
      return kHungUp;
    default:
      return 0;
  }
}

}  // namespace wafersim::tb
