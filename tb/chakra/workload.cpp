#include "tb/chakra/workload.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "models/common/error.h"

namespace wafersim::chakra {

namespace fs = std::filesystem;

std::vector<uint64_t> Workload::dependencies_of(const TraceNode& node) const {
  std::vector<uint64_t> deps = node.data_deps;
  if (dependencies == DependencyMode::DataAndControl)
    deps.insert(deps.end(), node.ctrl_deps.begin(), node.ctrl_deps.end());
  return deps;
}

size_t Workload::node_count() const {
  size_t n = 0;
  for (const auto& t : ranks) n += t.nodes.size();
  return n;
}

namespace {

// The ranks of one communicator group, checked: whole numbers inside the platform, none twice.
std::vector<int> group_members(const nlohmann::json& list, int ranks, const std::string& file,
                               const std::string& item) {
  std::vector<int> members;
  for (const auto& r : list) {
    if (!r.is_number_integer() || r.get<int>() < 0 || r.get<int>() >= ranks)
      throw InputError(file, item,
                       "rank " + r.dump() + " is outside 0.." + std::to_string(ranks - 1));
    if (std::find(members.begin(), members.end(), r.get<int>()) != members.end())
      throw InputError(file, item, "rank " + r.dump() + " is listed twice");
    members.push_back(r.get<int>());
  }
  return members;
}

}  // namespace

std::map<std::string, std::vector<int>> read_comm_groups(const std::string& path, int ranks) {
  std::ifstream in(path);
  if (!in) throw InputError(path, "", "cannot open communicator group file");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(path, "byte " + std::to_string(e.byte), "invalid JSON");
  }
  if (!j.is_object())
    throw InputError(path, "", "expected an object mapping group ids to rank lists");
  std::map<std::string, std::vector<int>> groups;
  for (const auto& [name, list] : j.items()) {
    if (!list.is_array() || list.empty())
      throw InputError(path, "group '" + name + "'", "expected a non-empty list of ranks");
    groups[name] = group_members(list, ranks, path, "group '" + name + "'");
  }
  return groups;
}

std::map<std::string, std::vector<int>> process_groups_of(const TraceNode& node, int ranks,
                                                          const std::string& file) {
  std::map<std::string, std::vector<int>> groups;
  if (node.kind != NodeKind::Metadata || node.name != "## process_group:init ##") return groups;
  const std::string item = "node " + std::to_string(node.id) + " ('" + node.name + "')";
  auto fail = [&](const std::string& why) {
    throw InputError(file, item, "cannot read the process groups: " + why);
  };
  // Strip the Python list and string quoting: ['<json>'] or ["<json>"], with \ escapes.
  const std::string& v = node.inputs_values;
  size_t open = v.find_first_of("'\"");
  size_t close = v.find_last_of("'\"");
  if (open == std::string::npos || close <= open) fail("inputs.values holds no quoted JSON string");
  std::string text;
  for (size_t i = open + 1; i < close; ++i) {
    if (v[i] == '\\' && i + 1 < close) ++i;
    text += v[i];
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    fail(std::string("invalid JSON: ") + e.what());
  }
  if (!j.is_array()) fail("expected a JSON list of groups");
  for (const auto& g : j) {
    if (!g.is_object() || !g.contains("pg_name")) fail("a group has no pg_name");
    std::string name =
        g["pg_name"].is_string() ? g["pg_name"].get<std::string>() : g["pg_name"].dump();
    std::vector<int> members;
    if (g.contains("ranks") && g["ranks"].is_array())
      members = group_members(g["ranks"], ranks, file, item + " group '" + name + "'");
    if (members.empty())  // empty = every rank
      for (int r = 0; r < ranks; ++r) members.push_back(r);
    groups[name] = members;
  }
  return groups;
}

namespace {

std::string node_item(const TraceNode& n) {
  return "node " + std::to_string(n.id) + (n.name.empty() ? "" : " ('" + n.name + "')");
}

bool all_ranks_group(const std::string& pg) {
  return pg.empty() || pg == "0";
}

void check_node(const Workload& w, const Trace& t, const TraceNode& n, int rank) {
  const int ranks = static_cast<int>(w.ranks.size());
  auto fail = [&](const std::string& problem) { throw InputError(t.file, node_item(n), problem); };
  if (n.is_cpu_op) return;  // host work: replayed as zero NPU time, its attributes are not used
  auto peer_ok = [&](const std::optional<int64_t>& p, const char* what) {
    if (!p) fail(std::string(what) + " is missing");
    if (*p < 0 || *p >= ranks)
      fail(std::string(what) + " " + std::to_string(*p) + " is outside 0.." +
           std::to_string(ranks - 1));
    if (*p == rank)
      fail(std::string(what) + " is this rank itself: a transfer to oneself is not modelled");
  };
  switch (n.kind) {
    case NodeKind::Invalid:
      if (!n.is_cpu_op) fail("node type INVALID_NODE (0) on an NPU node");
      break;
    case NodeKind::Collective: {
      if (!n.comm_type) fail("comm_type is missing");
      int64_t type = *n.comm_type;
      if (type < 0 || type > static_cast<int64_t>(CollectiveKind::Barrier))
        fail("unknown comm_type " + std::to_string(type));
      auto kind = static_cast<CollectiveKind>(type);
      if (kind == CollectiveKind::Gather || kind == CollectiveKind::Scatter)
        fail(std::string("collective ") + to_string(kind) + " is not supported yet");
      if (kind != CollectiveKind::Barrier && (!n.comm_size || *n.comm_size == 0))
        fail(n.comm_size ? "comm_size is 0" : "comm_size is missing");
      if (!all_ranks_group(n.pg_name)) {
        auto g = w.groups.find(n.pg_name);
        if (g == w.groups.end())
          fail("pg_name '" + n.pg_name + "' names no communicator group" +
               (w.groups_source.empty() ? " (give --comm-groups FILE)" : " in " + w.groups_source));
        bool member = false;
        for (int r : g->second) member |= r == rank;
        if (!member) fail("rank " + std::to_string(rank) + " is not in group '" + n.pg_name + "'");
      }
      break;
    }
    case NodeKind::Send:
      if (n.is_cpu_op) break;
      if (!n.comm_size || *n.comm_size == 0)
        fail(n.comm_size ? "comm_size is 0" : "comm_size is missing");
      peer_ok(n.comm_dst, "comm_dst");
      break;
    case NodeKind::Recv:
      if (n.is_cpu_op) break;
      if (!n.comm_size || *n.comm_size == 0)
        fail(n.comm_size ? "comm_size is 0" : "comm_size is missing");
      peer_ok(n.comm_src, "comm_src");
      break;
    default:
      break;
  }
}

// Kahn's algorithm over the dependencies in force; names the nodes left on a cycle.
void check_acyclic(const Workload& w, const Trace& t,
                   const std::unordered_map<uint64_t, size_t>& index) {
  std::vector<int> missing(t.nodes.size(), 0);
  std::vector<std::vector<size_t>> children(t.nodes.size());
  for (size_t i = 0; i < t.nodes.size(); ++i)
    for (uint64_t d : w.dependencies_of(t.nodes[i])) {
      children[index.at(d)].push_back(i);
      missing[i]++;
    }
  std::vector<size_t> ready;
  for (size_t i = 0; i < t.nodes.size(); ++i)
    if (missing[i] == 0) ready.push_back(i);
  size_t done = 0;
  while (!ready.empty()) {
    size_t i = ready.back();
    ready.pop_back();
    ++done;
    for (size_t c : children[i])
      if (--missing[c] == 0) ready.push_back(c);
  }
  if (done == t.nodes.size()) return;
  std::string ids;
  int shown = 0;
  for (size_t i = 0; i < t.nodes.size() && shown < 8; ++i)
    if (missing[i] > 0) {
      ids += (shown++ ? ", " : "") + std::to_string(t.nodes[i].id);
    }
  throw InputError(t.file, "nodes " + ids + (t.nodes.size() - done > 8 ? ", ..." : ""),
                   "dependency cycle: " + std::to_string(t.nodes.size() - done) +
                       " nodes can never run" +
                       (w.dependencies == DependencyMode::DataAndControl
                            ? " (if only ctrl_deps form it, try --deps data)"
                            : ""));
}

}  // namespace

void validate(const Workload& w) {
  for (size_t r = 0; r < w.ranks.size(); ++r) {
    const Trace& t = w.ranks[r];
    std::unordered_map<uint64_t, size_t> index;
    for (size_t i = 0; i < t.nodes.size(); ++i)
      if (!index.emplace(t.nodes[i].id, i).second)
        throw InputError(t.file, node_item(t.nodes[i]), "duplicate node id");
    for (const auto& n : t.nodes) {
      check_node(w, t, n, static_cast<int>(r));
      for (uint64_t d : n.data_deps)
        if (!index.count(d))
          throw InputError(t.file, node_item(n),
                           "data dependency on node " + std::to_string(d) + " that does not exist");
      if (w.dependencies == DependencyMode::DataAndControl)
        for (uint64_t d : n.ctrl_deps)
          if (!index.count(d))
            throw InputError(t.file, node_item(n),
                             "control dependency on node " + std::to_string(d) +
                                 " that does not exist (use --deps data to replay on data "
                                 "dependencies only)");
    }
    check_acyclic(w, t, index);
  }
}

Workload load_workload(const WorkloadOptions& o) {
  if (o.ranks < 1) throw InputError(o.prefix, "", "no ranks to load");
  if (o.size_unit_bytes == 0) throw InputError("--size-unit", "", "must be at least 1 byte");
  Workload w;
  w.dependencies = o.dependencies;
  for (int r = 0; r < o.ranks; ++r) {
    std::string path = o.prefix + "." + std::to_string(r) + ".et";
    if (!fs::exists(path))
      throw InputError(
          path, "rank " + std::to_string(r),
          "trace file missing (the platform has " + std::to_string(o.ranks) + " NPUs)");
    w.ranks.push_back(read_trace(path));
  }
  // A trace for a rank the platform does not have means the two do not belong together.
  std::string extra = o.prefix + "." + std::to_string(o.ranks) + ".et";
  if (fs::exists(extra))
    throw InputError(
        extra, "rank " + std::to_string(o.ranks),
        "the workload has more ranks than the platform's " + std::to_string(o.ranks) + " NPUs");
  if (o.size_unit_bytes != 1)
    for (auto& t : w.ranks)
      for (auto& n : t.nodes) {
        if (n.comm_size) *n.comm_size *= o.size_unit_bytes;
        if (n.tensor_size) *n.tensor_size *= o.size_unit_bytes;
      }
  std::string groups = o.comm_groups;
  if (groups.empty()) {
    fs::path candidate = fs::path(o.prefix).parent_path() / "workload.json";
    if (fs::exists(candidate)) groups = candidate.string();
  }
  if (!groups.empty()) {
    w.groups = read_comm_groups(groups, o.ranks);
    w.groups_source = groups;
  } else {
    for (const auto& t : w.ranks)
      for (const auto& n : t.nodes)
        for (auto& [name, members] : process_groups_of(n, o.ranks, t.file)) {
          w.groups.emplace(name, members);
          w.groups_source = t.file + " (process_group:init)";
        }
  }
  validate(w);
  return w;
}

}  // namespace wafersim::chakra
