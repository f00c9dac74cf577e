#pragma once
// The pictures of a run (--plots): link utilisation laid out as the wafer / mesh
// (link_utilisation.png) and each NPU's compute against exposed and overlapped communication
// (npu_time.png).
#include <nlohmann/json.hpp>
#include <string>

#include "models/topology/topology.h"

namespace wafersim::tb {

// Returns "" or what went wrong (gnuplot missing, say).
std::string plot_run(const nlohmann::json& report, const topology::Topology& topology,
                     const std::string& dir);

}  // namespace wafersim::tb
