#pragma once
// `wafersim traffic`: synthetic traffic on a platform's fabric, one offered load per process
// (traffic.json), or a sweep of loads run as child processes (latency_load.csv, and .png with
// --plots). docs/usage.md and docs/outputs.md describe the options and files.
#include <iosfwd>
#include <string>
#include <vector>

#include "tb/run/run.h"
#include "tb/traffic/traffic_driver.h"

namespace wafersim::tb {

struct TrafficOptions {
  RunOptions platform;  // platform, overrides, fidelity and out_dir; the workload is unused
  std::string pattern = "uniform";
  std::vector<double> rates;  // one: a single run in this process; more: a sweep
  TrafficSpec spec;           // everything but pattern and rate
  int jobs = 1;               // sweep points at a time
  bool plots = false;
};

// One offered load: simulates, writes out_dir/traffic.json, prints a summary. Returns an ExitCode.
int run_traffic(const TrafficOptions& options, std::ostream& out, std::ostream& err);

// Several offered loads, each `self traffic ... --rate R` in its own process under
// out_dir/rate_<R>/; writes out_dir/latency_load.csv (and latency_load.png with plots). Returns an
// ExitCode (kInputError when a point failed).
int run_traffic_sweep(const TrafficOptions& options, const std::vector<std::string>& point_args,
                      const std::string& self, std::ostream& out, std::ostream& err);

}  // namespace wafersim::tb
