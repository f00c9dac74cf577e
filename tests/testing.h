#pragma once
// Shared test helpers: paths, temporary folders, and running the simulator in-process.
#include <string>
#include <vector>

namespace wafersim::testing {

std::string source(const std::string& relative);  // a path inside the source tree
std::string temp_dir(const std::string& name);    // a fresh folder under the build tree

struct CommandResult {
  int exit_code;
  std::string out;
  std::string err;
};
// Runs the built `wafersim` executable with arguments (for end-to-end CLI tests).
CommandResult wafersim(const std::string& args);

// Starts `wafersim ARGS` (stdout and stderr to files in `dir`), sends `signal` after `seconds`
// (to its whole process group, as a terminal sends Ctrl-C), and returns its exit code; -1 if it
// died of a signal. `err` receives what it wrote to stderr. With `ready`, the signal waits also
// until stderr holds that text (for at most 10 minutes, or until the process ends): a loaded
// machine (a sanitizer build, tests side by side) may print its first progress line late.
int wafersim_stopped(const std::vector<std::string>& args, unsigned seconds, int signal,
                     const std::string& dir, std::string* err = nullptr,
                     const std::string& ready = "");

}  // namespace wafersim::testing

#include <nlohmann/json.hpp>
#include <vector>

#include "tb/run/run.h"

namespace wafersim::testing {

struct Flow {
  int src;
  int dst;
  uint64_t bytes;
};
// Writes a workload of point-to-point messages (one SEND and one RECV node per flow) for `ranks`.
std::string write_flows(const std::string& dir, int ranks, const std::vector<Flow>& flows);
// Runs one simulation in this process and returns its report; fails the test on a non-zero exit.
nlohmann::json simulate(const tb::RunOptions& options);

}  // namespace wafersim::testing

namespace wafersim::testing {
// Runs `wafersim run ARGS --out DIR` in a child process and returns its report.json (several runs
// in one test need separate processes: SystemC elaborates once per process).
nlohmann::json run_report(const std::string& args);
// run_report on configs/mesh_8x8.yaml at `fidelity`, with injection at link speed (32 B per cycle
// everywhere, which keeps the arithmetic whole) and buffers of 32 flits (they cover the credit
// round trip, so credits never throttle a lone flow), and `sets` more overrides.
nlohmann::json run_mesh_8x8(const std::string& prefix, const std::string& fidelity,
                            const std::string& sets = "");
}  // namespace wafersim::testing
