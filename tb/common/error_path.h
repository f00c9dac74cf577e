#pragma once
// The one error path of the program: whatever a command throws (a problem with the user's input,
// memory running out, a file system error, a SystemC report) ends as a single sentence on stderr
// and an exit code from tb/common/exit_codes.h, never as a runtime's or SystemC's own report.
#include <functional>
#include <iosfwd>
#include <string>

namespace wafersim::tb {

// Quiets SystemC's own messages (the "simulation stopped by user" notice, report displays): the
// program reports everything itself.
void quiet_systemc_reports();

// Runs `command` and returns its exit code; an exception becomes "wafersim: error: ..." on `err`
// and exit code 1.
int run_guarded(const std::function<int()>& command, std::ostream& err);

// The sentence for an exception in flight (call inside a catch block).
std::string describe_current_exception();

}  // namespace wafersim::tb
