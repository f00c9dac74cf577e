#pragma once
// report.json and the printed summary. Every key carries its unit in its name (docs/outputs.md).
#include <nlohmann/json.hpp>
#include <string>

#include "hw/platform/platform.h"
#include "tb/config/platform_spec.h"
#include "tb/replay/replay.h"

namespace wafersim::tb {

struct RunInfo {
  std::string platform;
  std::string workload;
  double wall_seconds = 0;
  uint64_t events = 0;
  bool finished = false;
  std::string stall;                // what blocks, when not finished
  std::vector<std::string> errors;  // inconsistent input found while replaying
};

nlohmann::json make_report(const PlatformSpec& spec, const hw::Platform& platform,
                           const Replay& replay, const RunInfo& info);
std::string summary(const nlohmann::json& report);

}  // namespace wafersim::tb
