#pragma once
// A workload: one Chakra trace per rank plus the communicator groups, checked before anything runs
// so that bad input is reported with its file and node instead of hanging the replay.
#include <map>
#include <string>
#include <vector>

#include "tb/chakra/trace.h"

namespace wafersim::chakra {

enum class DependencyMode { DataAndControl, DataOnly };

struct WorkloadOptions {
  std::string prefix;  // files are <prefix>.<rank>.et
  int ranks = 0;       // the NPUs: every one needs a trace
  // I/O controllers (ranks `ranks` ..): a controller's trace is optional (without one it stays
  // idle); controllers join no communicator but the groups that name them.
  int io_controllers = 0;
  DependencyMode dependencies = DependencyMode::DataAndControl;
  uint64_t size_unit_bytes = 1;  // multiplies comm_size and tensor_size (element counts -> bytes)
  std::string comm_groups;       // JSON {"group": [ranks]}; empty = <dir>/workload.json if present
};

// Whether a pg_name means the communicator of every rank ("" or "0").
inline bool is_everyone(const std::string& pg_name) {
  return pg_name.empty() || pg_name == "0";
}
// The communicator's one name ("" and "0" are both "0"): collectives match across ranks by it.
inline std::string communicator_name(const std::string& pg_name) {
  return is_everyone(pg_name) ? "0" : pg_name;
}

struct Workload {
  std::vector<Trace> ranks;
  std::map<std::string, std::vector<int>> groups;  // pg_name -> ranks in communicator order
  std::string groups_source;
  DependencyMode dependencies = DependencyMode::DataAndControl;
  std::vector<int> everyone;  // the NPUs, 0 .. options.ranks - 1 (I/O controllers follow them)
  // What the check before the run found that will stall it (a SEND nobody receives, a collective
  // a rank never joins), one sentence each: the stall report repeats them.
  std::vector<std::string> expected_stalls;

  // The ranks of a communicator, in communicator order: every rank for pg_name "" or "0".
  const std::vector<int>& members(const std::string& pg_name) const;
  // The dependencies the replay honours for a node in this mode.
  std::vector<uint64_t> dependencies_of(const TraceNode& node) const;
  size_t node_count() const;
};

// The trace file of one rank: <prefix>.<rank>.et, else <prefix>.<rank>.et.gz; "" when neither is.
std::string trace_path(const std::string& prefix, int rank);

// Loads and, unless `validate` is false, validates (tb/chakra/workload_check.h). Throws InputError
// naming the file, the node and the problem.
Workload load_workload(const WorkloadOptions& options, bool validate = true);

std::map<std::string, std::vector<int>> read_comm_groups(const std::string& path, int ranks);

// PyTorch captures describe their process groups in a METADATA_NODE named
// "## process_group:init ##": inputs.values is a Python-printed list holding one JSON string, a
// list of
// {"pg_name", "ranks" (empty = all), "group_size", ...}. Returns the groups it defines (none when
// the node is another metadata node). Throws InputError naming the file and node when it cannot be
// read.
std::map<std::string, std::vector<int>> process_groups_of(const TraceNode& node, int ranks,
                                                          const std::string& file);

}  // namespace wafersim::chakra
