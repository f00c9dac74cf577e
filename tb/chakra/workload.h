#pragma once
// A workload: one Chakra trace per rank plus the communicator groups, checked before anything runs
// so that bad input is reported with its file and node instead of hanging the replay.
#include <map>
#include <string>
#include <vector>

#include "hw/proto/traffic_class.h"
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
  // pg_name -> traffic class, for every group and "0": the comm-group file's, else the Fred
  // paper's placement rule (inferred_classes).
  std::map<std::string, hw::TrafficClass> classes;
  DependencyMode dependencies = DependencyMode::DataAndControl;
  std::vector<int> everyone;  // the NPUs, 0 .. options.ranks - 1 (I/O controllers follow them)
  // What the check before the run found that will stall it (a SEND nobody receives, a collective
  // a rank never joins), one sentence each: the stall report repeats them.
  std::vector<std::string> expected_stalls;

  // The ranks of a communicator, in communicator order: every rank for pg_name "" or "0".
  const std::vector<int>& members(const std::string& pg_name) const;
  // A communicator's traffic class (MP for one the workload does not define).
  hw::TrafficClass traffic_class(const std::string& pg_name) const {
    const auto c = classes.find(communicator_name(pg_name));
    return c == classes.end() ? hw::TrafficClass::Mp : c->second;
  }
  // The dependencies the replay honours for a node in this mode.
  std::vector<uint64_t> dependencies_of(const TraceNode& node) const;
  size_t node_count() const;
};

// The trace file of one rank: <prefix>.<rank>.et, else <prefix>.<rank>.et.gz; "" when neither is.
std::string trace_path(const std::string& prefix, int rank);

// Loads and, unless `validate` is false, validates (tb/chakra/workload_check.h). Throws InputError
// naming the file, the node and the problem.
Workload load_workload(const WorkloadOptions& options, bool validate = true);

// A comm-group file: {"group": [ranks]} (ASTRA-sim's form) or {"group": {"ranks": [ranks],
// "class": "mp" | "dp" | "pp"}} (wafersim's, naming the group's traffic class), mixed freely.
struct CommGroups {
  std::map<std::string, std::vector<int>> members;
  std::map<std::string, hw::TrafficClass> classes;  // the groups that name theirs
};
CommGroups read_comm_groups(const std::string& path, int ranks);

// The Fred paper's placement rule (PAPERS.md section 1) puts a model-parallel group on
// consecutive NPUs, then the pipeline stages, then the data-parallel replicas, so a group's stride
// (the smallest gap between its ranks) tells its kind: 1 is MP; of the other groups, those with
// the largest stride are DP and the rest PP. Covers `groups` and "0" (every NPU: MP).
std::map<std::string, hw::TrafficClass> inferred_classes(
    const std::map<std::string, std::vector<int>>& groups);

// PyTorch captures describe their process groups in a METADATA_NODE named
// "## process_group:init ##": inputs.values is a Python-printed list holding one JSON string, a
// list of
// {"pg_name", "ranks" (empty = all), "group_size", ...}. Returns the groups it defines (none when
// the node is another metadata node). Throws InputError naming the file and node when it cannot be
// read.
std::map<std::string, std::vector<int>> process_groups_of(const TraceNode& node, int ranks,
                                                          const std::string& file);

}  // namespace wafersim::chakra
