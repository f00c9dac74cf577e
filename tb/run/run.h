#pragma once
// One simulation, from files to report: load the platform and the workload, build the hardware and
// the replay, simulate, and write the report. One per process (SystemC elaborates once).
#include <iosfwd>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "hw/platform/platform.h"
#include "tb/chakra/workload.h"
#include "tb/common/exit_codes.h"
#include "tb/common/files.h"
#include "tb/config/platform_spec.h"
#include "tb/observe/wave_recorder.h"
#include "tb/replay/replay.h"

namespace wafersim::tb {

struct RunOptions {
  std::string platform;       // wafersim YAML
  std::string astra_network;  // or ASTRA-sim network .yml + system .json
  std::string astra_system;
  std::vector<std::string> overrides;  // section.key=value
  std::string fidelity;                // overrides fabric.fidelity when set
  chakra::WorkloadOptions workload;    // ranks: taken from the platform
  std::string out_dir;                 // report.json and the CSV tables go here (empty: no files)
  WaveOptions waves;                   // VCD waveforms when waves.file is set
  std::string timeline;                // Perfetto / Chrome trace-event JSON when set
  bool plots = false;                  // PNG pictures into out_dir
  bool progress = false;               // an updating progress line on stderr for long runs
  DataOptions data;                    // --data: real values through the collectives, checked
};

// The platform of a run: --platform or the ASTRA-sim pair, with --set overrides and --fidelity
// applied. Throws InputError.
PlatformSpec load_platform_spec(const RunOptions& options);

// Refuses a workload whose transfers or memory nodes would take longer than SystemC can simulate
// (2^64 ps) on this platform's slowest link or its HBM. Throws InputError naming the node.
void check_time_limits(const chakra::Workload& workload, const PlatformSpec& spec);

// The topology graph and the hardware of a platform; throw InputError naming the platform file.
topology::Topology build_topology(const PlatformSpec& spec);
std::unique_ptr<hw::Platform> build_platform(const PlatformSpec& spec,
                                             const topology::Topology& topology);

// Prints the summary to `out` and problems to `err`; returns an ExitCode. When `report` is given it
// receives report.json's content.
int run_simulation(const RunOptions& options, std::ostream& out, std::ostream& err,
                   nlohmann::json* report = nullptr);

}  // namespace wafersim::tb
