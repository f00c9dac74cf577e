#pragma once
// Runs the wafersim executable as child processes, a few at a time. SystemC elaborates once per
// process, so every study run and every point of a traffic sweep is its own process.
#include <functional>
#include <string>
#include <vector>

namespace wafersim::tb {

struct ChildJob {
  std::vector<std::string> args;  // argv[1..]: the executable is given to run_children
  std::string dir;                // created; receives stdout.txt and stderr.txt
};

// The exit code of a job that was never started (a stop signal came first).
constexpr int kNotRun = -1;

// Runs every job with at most `jobs` at once; calls `done(index, exit_code)` as each ends (exit
// code 128 + signal when killed). Returns the exit codes in job order. Once a stop signal has
// arrived (tb/common/stop_signals.h) it starts no more jobs, passes the signal on to those running
// and waits for them.
std::vector<int> run_children(const std::string& executable, const std::vector<ChildJob>& jobs,
                              int parallel, const std::function<void(size_t, int)>& done);

// Runs a helper program (found on PATH) with an argument vector, never through a shell, and waits
// for it; `output` receives what it wrote to stdout and stderr. Returns its exit code, 128 + signal
// when killed, or -1 when it could not be started (not installed).
int run_program(const std::vector<std::string>& argv, std::string& output);

// The first non-empty line a job wrote to stderr (its error message), or "".
std::string first_error_line(const std::string& dir);

// Quotes a CSV field when it holds a comma, a quote or a newline.
std::string csv_escape(const std::string& s);

}  // namespace wafersim::tb
