#include "tb/chakra/workload.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "models/common/error.h"
#include "tb/chakra/workload_check.h"
#include "tb/common/files.h"
#include "tb/common/json_text.h"

namespace wafersim::chakra {

namespace fs = std::filesystem;

std::vector<uint64_t> Workload::dependencies_of(const TraceNode& node) const {
  std::vector<uint64_t> deps = node.data_deps;
  if (dependencies == DependencyMode::DataAndControl)
    deps.insert(deps.end(), node.ctrl_deps.begin(), node.ctrl_deps.end());
  return deps;
}

const std::vector<int>& Workload::members(const std::string& pg_name) const {
  if (is_everyone(pg_name)) return everyone;
  return groups.at(pg_name);
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
    if (!r.is_number_integer())
      throw InputError(file, item, "expected rank numbers, got " + tb::shown(r));
    if (r.get<int64_t>() < 0 || r.get<int64_t>() >= ranks)
      throw InputError(file, item,
                       "rank " + tb::shown(r) + " is outside 0.." + std::to_string(ranks - 1));
    if (std::find(members.begin(), members.end(), r.get<int>()) != members.end())
      throw InputError(file, item, "rank " + tb::shown(r) + " is listed twice");
    members.push_back(r.get<int>());
  }
  return members;
}

}  // namespace

CommGroups read_comm_groups(const std::string& path, int ranks) {
  const nlohmann::json j = tb::read_json_file(path);
  if (!j.is_object())
    throw InputError(path, "", "expected an object mapping group ids to rank lists");
  CommGroups groups;
  for (const auto& [name, value] : j.items()) {
    const std::string item = "group '" + name + "'";
    const nlohmann::json* list = &value;
    if (value.is_object()) {  // wafersim's form: {"ranks": [...], "class": "mp"}
      for (const auto& [key, field] : value.items())
        if (key != "ranks" && key != "class")
          throw InputError(path, item, "unknown key '" + key + "' (expected ranks and class)");
      if (!value.contains("ranks")) throw InputError(path, item, "no 'ranks' list");
      list = &value["ranks"];
      if (value.contains("class")) {
        const auto& c = value["class"];
        try {
          if (!c.is_string())
            throw std::invalid_argument("expected mp, dp or pp, got " + tb::shown(c));
          groups.classes[name] = hw::traffic_class_from_string(c.get<std::string>());
        } catch (const std::invalid_argument& e) {
          throw InputError(path, item + " class", e.what());
        }
      }
    }
    if (!list->is_array() || list->empty())
      throw InputError(path, item, "expected a non-empty list of ranks");
    groups.members[name] = group_members(*list, ranks, path, item);
  }
  return groups;
}

std::map<std::string, hw::TrafficClass> inferred_classes(
    const std::map<std::string, std::vector<int>>& groups) {
  auto stride = [](std::vector<int> ranks) {
    std::sort(ranks.begin(), ranks.end());
    int gap = 1;  // a group of one rank counts as consecutive
    for (size_t i = 1; i < ranks.size(); ++i)
      gap = i == 1 ? ranks[1] - ranks[0] : std::min(gap, ranks[i] - ranks[i - 1]);
    return gap;
  };
  int widest = 1;
  for (const auto& [name, ranks] : groups) widest = std::max(widest, stride(ranks));
  std::map<std::string, hw::TrafficClass> classes{{"0", hw::TrafficClass::Mp}};
  for (const auto& [name, ranks] : groups) {
    const int s = stride(ranks);
    classes[name] = s == 1        ? hw::TrafficClass::Mp
                    : s == widest ? hw::TrafficClass::Dp
                                  : hw::TrafficClass::Pp;
  }
  return classes;
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
  const nlohmann::json j = tb::parse_json(text, file, item + " process groups");
  if (!j.is_array()) fail("expected a JSON list of groups");
  for (const auto& g : j) {
    if (!g.is_object() || !g.contains("pg_name")) fail("a group has no pg_name");
    std::string name =
        g["pg_name"].is_string() ? g["pg_name"].get<std::string>() : tb::shown(g["pg_name"]);
    std::vector<int> members;
    if (g.contains("ranks") && g["ranks"].is_array())
      members = group_members(g["ranks"], ranks, file, item + " group '" + name + "'");
    if (members.empty())  // empty = every rank
      for (int r = 0; r < ranks; ++r) members.push_back(r);
    groups[name] = members;
  }
  return groups;
}

std::string trace_path(const std::string& prefix, int rank) {
  const std::string plain = prefix + "." + std::to_string(rank) + ".et";
  std::error_code ec;
  if (fs::exists(plain, ec)) return plain;
  if (fs::exists(plain + ".gz", ec)) return plain + ".gz";
  return "";
}

Workload load_workload(const WorkloadOptions& o, bool validate_it) {
  if (o.ranks < 1) throw InputError(o.prefix, "", "no ranks to load");
  if (o.size_unit_bytes == 0) throw InputError("--size-unit", "", "must be at least 1 byte");
  Workload w;
  w.dependencies = o.dependencies;
  for (int r = 0; r < o.ranks; ++r) w.everyone.push_back(r);
  for (int r = 0; r < o.ranks; ++r) {
    std::string path = trace_path(o.prefix, r);
    if (path.empty())
      throw InputError(
          o.prefix + "." + std::to_string(r) + ".et", "rank " + std::to_string(r),
          "trace file missing (the platform has " + std::to_string(o.ranks) + " NPUs)");
    w.ranks.push_back(read_trace(path));
  }
  const int endpoints = o.ranks + o.io_controllers;
  for (int r = o.ranks; r < endpoints; ++r) {
    const std::string path = trace_path(o.prefix, r);
    if (!path.empty()) {
      w.ranks.push_back(read_trace(path));
    } else {  // an idle controller
      w.ranks.emplace_back();
      w.ranks.back().file = "(no trace: I/O controller " + std::to_string(r) + " idle)";
    }
  }
  // A trace for a rank the platform does not have means the two do not belong together.
  std::string extra = trace_path(o.prefix, endpoints);
  if (!extra.empty())
    throw InputError(
        extra, "rank " + std::to_string(endpoints),
        "the workload has more ranks than the platform's " + std::to_string(o.ranks) + " NPUs" +
            (o.io_controllers > 0 ? " and " + std::to_string(o.io_controllers) + " I/O controllers"
                                  : std::string()));
  if (o.size_unit_bytes != 1)
    for (auto& t : w.ranks)
      for (auto& n : t.nodes)
        for (auto* size : {&n.comm_size, &n.tensor_size}) {
          if (!*size) continue;
          if (**size > UINT64_MAX / o.size_unit_bytes)
            throw InputError(t.file, "node " + std::to_string(n.id),
                             std::to_string(**size) + " x --size-unit " +
                                 std::to_string(o.size_unit_bytes) +
                                 " bytes does not fit in 64 bits");
          **size *= o.size_unit_bytes;
        }
  std::string groups = o.comm_groups;
  if (groups.empty()) {
    fs::path candidate = fs::path(o.prefix).parent_path() / "workload.json";
    if (fs::exists(candidate)) groups = candidate.string();
  }
  CommGroups file;
  if (!groups.empty()) {
    file = read_comm_groups(groups, endpoints);
    w.groups = file.members;
    w.groups_source = groups;
  } else {
    for (const auto& t : w.ranks)
      for (const auto& n : t.nodes)
        for (auto& [name, members] : process_groups_of(n, o.ranks, t.file)) {
          w.groups.emplace(name, members);
          w.groups_source = t.file + " (process_group:init)";
        }
  }
  w.classes = inferred_classes(w.groups);
  for (const auto& [name, c] : file.classes) w.classes[name] = c;
  if (validate_it) w.expected_stalls = validate(w);
  return w;
}

}  // namespace wafersim::chakra
