#pragma once
// Runs a command line as a child process (through /bin/sh, under GNU time) and measures it: wall
// time, the CPU time of the child and its descendants (wait4's rusage), the command's peak RSS
// (GNU time's) and its exit status. The bench's cases time whole processes, so each tool pays its
// own start-up.
#include <string>

namespace wafersim::bench {

struct ProcessFigures {
  double wall_s = 0;
  double cpu_s = 0;  // user + system
  double rss_mb = 0;
  bool ok = false;  // exited with status 0
};

// `command` runs with its standard output and error sent to `log` (or inherited if empty).
ProcessFigures run_child(const std::string& command, const std::string& log = "");

// run_child, and if the command failed, a message naming it (and `log`, where its output went)
// and exit(1): a bench case without its figures has nothing to print.
ProcessFigures run_checked(const std::string& command, const std::string& log = "");

// The message and exit(1) of a case whose tool failed; its output is in `log`.
[[noreturn]] void fail(const std::string& what, const std::string& log);

// The CPU seconds this process has used so far.
double cpu_seconds();

}  // namespace wafersim::bench
