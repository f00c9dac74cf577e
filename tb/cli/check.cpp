#include "tb/cli/check.h"

#include <ostream>
#include <set>

#include "models/common/error.h"
#include "tb/chakra/workload_check.h"
#include "tb/common/exit_codes.h"
#include "tb/replay/plan_library.h"

namespace wafersim::tb {

namespace {

// Prints problems as error lines; returns the exit code they call for.
int report_problems(const std::vector<chakra::WorkloadProblem>& problems, std::ostream& err) {
  bool input = false;
  for (const auto& p : problems) {
    err << "wafersim: " << (p.stalls ? "would stall: " : "error: ") << p.error.what() << "\n";
    input |= !p.stalls;
  }
  if (problems.empty()) return kOk;
  return input ? kInputError : kStalled;
}

std::string node_line(const chakra::TraceNode& n) {
  using chakra::CollectiveKind;
  std::string s = std::to_string(n.id) + " " + chakra::to_string(n.kind) + " '" + n.name + "'";
  if (n.is_cpu_op) s += " cpu";
  if (n.duration_micros) s += " duration_us=" + std::to_string(n.duration_micros);
  if (n.num_ops) s += " num_ops=" + std::to_string(*n.num_ops);
  if (n.tensor_size) s += " tensor_size=" + std::to_string(*n.tensor_size);
  if (n.comm_type) {
    s += " comm_type=";
    const int64_t t = *n.comm_type;
    s += t >= 0 && t <= static_cast<int64_t>(CollectiveKind::Barrier)
             ? std::string(chakra::to_string(static_cast<CollectiveKind>(t))) + " (" +
                   std::to_string(t) + ")"
             : "unknown (" + std::to_string(t) + ")";
  }
  if (n.comm_size) s += " comm_size=" + std::to_string(*n.comm_size);
  if (n.comm_src) s += " comm_src=" + std::to_string(*n.comm_src);
  if (n.comm_dst) s += " comm_dst=" + std::to_string(*n.comm_dst);
  if (n.comm_tag) s += " comm_tag=" + std::to_string(*n.comm_tag);
  if (n.root) s += " root=" + std::to_string(*n.root);
  if (!n.pg_name.empty()) s += " pg_name=" + n.pg_name;
  s += " data_deps=[";
  for (size_t i = 0; i < n.data_deps.size(); ++i)
    s += (i ? " " : "") + std::to_string(n.data_deps[i]);
  s += "] ctrl_deps=[";
  for (size_t i = 0; i < n.ctrl_deps.size(); ++i)
    s += (i ? " " : "") + std::to_string(n.ctrl_deps[i]);
  return s + "]";
}

}  // namespace

int check_workload_command(const RunOptions& o, std::ostream& out, std::ostream& err) {
  PlatformSpec spec = load_platform_spec(o);
  topology::Topology topology = build_topology(spec);
  chakra::WorkloadOptions wo = o.workload;
  wo.ranks = topology.npu_count();
  wo.io_controllers = topology.endpoint_count() - topology.npu_count();
  chakra::Workload workload = chakra::load_workload(wo, /*validate=*/false);
  auto problems = chakra::check_workload(workload);
  const bool valid =
      std::none_of(problems.begin(), problems.end(), [](const auto& p) { return !p.stalls; });
  if (valid) {
    // Only a valid workload's collectives can be planned: each needs its kind and group.
    try {
      PlanLibrary(spec, &topology).prepare(workload);
      check_time_limits(workload, spec);
    } catch (const InputError& e) {
      problems.insert(problems.begin(), {e, false});
    }
  }
  const int code = report_problems(problems, err);
  size_t collectives = 0;
  std::set<std::string> groups;
  for (const auto& t : workload.ranks)
    for (const auto& n : t.nodes)
      if (n.kind == chakra::NodeKind::Collective && !n.is_cpu_op) {
        ++collectives;
        groups.insert(n.pg_name.empty() ? "0" : n.pg_name);
      }
  out << o.workload.prefix << ": " << workload.ranks.size() << " ranks, " << workload.node_count()
      << " nodes, " << collectives << " collective nodes in " << groups.size()
      << " communicators: " << (code == kOk ? "ok" : std::to_string(problems.size()) + " problems")
      << "\n";
  return code;
}

int inspect_trace(const std::string& file, std::ostream& out, std::ostream& err) {
  chakra::Trace t = chakra::read_trace(file);
  out << file << ": version '" << t.version << "', " << t.nodes.size() << " nodes\n";
  for (const auto& n : t.nodes) out << node_line(n) << "\n";
  return report_problems(chakra::check_trace(t), err);
}

}  // namespace wafersim::tb
