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

// Runs every job with at most `jobs` at once; calls `done(index, exit_code)` as each ends (exit
// code 128 + signal when killed). Returns the exit codes in job order.
std::vector<int> run_children(const std::string& executable, const std::vector<ChildJob>& jobs,
                              int parallel, const std::function<void(size_t, int)>& done);

// The first non-empty line a job wrote to stderr (its error message), or "".
std::string first_error_line(const std::string& dir);

// Quotes a CSV field when it holds a comma, a quote or a newline.
std::string csv_escape(const std::string& s);

}  // namespace wafersim::tb
