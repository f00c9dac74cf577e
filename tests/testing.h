#pragma once
// Shared test helpers: paths, temporary folders, and running the simulator in-process.
#include <string>

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

}  // namespace wafersim::testing
