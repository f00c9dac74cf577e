#pragma once
// report.json and the printed summary. Every key carries its unit in its name (docs/outputs.md).
#include <nlohmann/json.hpp>
#include <optional>
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
  int stop_code = 0;                // 130 / 143 when SIGINT / SIGTERM stopped the run early
  sc_core::sc_time reached;         // the simulated time the kernel reached
  std::string stall;                // what blocks, when not finished
  std::vector<std::string> errors;  // inconsistent input found while replaying
  std::optional<std::string> data_mismatch;  // run --data: the first wrong value
};

nlohmann::json make_report(const PlatformSpec& spec, const hw::Platform& platform,
                           const Replay& replay, const RunInfo& info);
std::string summary(const nlohmann::json& report);
// The I/O controllers that streamed, together: their bytes over the time until the last had
// arrived everywhere, over the sum of their line rates (the Fred paper's line-rate fraction);
// nullopt when none streamed.
std::optional<double> io_line_rate_fraction(const nlohmann::json& report);

// nccl-tests' algorithm and bus bandwidth (GB/s) of one collective: algbw = S / t, busbw = algbw x
// 2(n-1)/n for all-reduce, (n-1)/n for all-gather, reduce-scatter and all-to-all, 1 otherwise.
std::pair<double, double> nccl_bandwidths(const std::string& kind, int ranks, uint64_t bytes,
                                          double duration_ns);

// CSV tables next to report.json (units in the headers): npus.csv, links.csv, collectives.csv.
// Throws InputError when a file cannot be written.
void write_tables(const nlohmann::json& report, const std::string& dir);

}  // namespace wafersim::tb
