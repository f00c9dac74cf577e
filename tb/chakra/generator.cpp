#include "tb/chakra/generator.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>
#include <stdexcept>

namespace wafersim::chakra {

CollectiveKind collective_from_string(const std::string& text) {
  if (text == "all_reduce") return CollectiveKind::AllReduce;
  if (text == "all_gather") return CollectiveKind::AllGather;
  if (text == "reduce_scatter") return CollectiveKind::ReduceScatter;
  if (text == "all_to_all") return CollectiveKind::AllToAll;
  if (text == "broadcast") return CollectiveKind::Broadcast;
  if (text == "reduce") return CollectiveKind::Reduce;
  throw std::invalid_argument(
      "unknown collective '" + text +
      "' (all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce)");
}

GroupKind group_kind_from_string(const std::string& text) {
  if (text == "mp") return GroupKind::Mp;
  if (text == "dp") return GroupKind::Dp;
  if (text == "pp") return GroupKind::Pp;
  throw std::invalid_argument("unknown group '" + text + "' (mp, dp or pp)");
}

Parallelism parallelism_from_string(const std::string& text) {
  std::vector<int> sizes;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    size_t used = 0;
    int v = 0;
    try {
      v = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || item.empty() || v < 1 || v > 4096)
      throw std::invalid_argument("parallelism '" + text +
                                  "': expected MP,DP,PP, three whole numbers from 1 to 4096");
    sizes.push_back(v);
  }
  if (sizes.size() != 3)
    throw std::invalid_argument("parallelism '" + text + "': expected MP,DP,PP (e.g. 2,5,2)");
  return {sizes[0], sizes[1], sizes[2]};
}

Placement placement_from_string(const std::string& order, int snake_columns) {
  Placement placement;
  placement.snake_columns = snake_columns;
  std::vector<std::string> kinds;
  std::stringstream in(order);
  for (std::string item; std::getline(in, item, ',');) kinds.push_back(item);
  const auto fail = [&] {
    return std::invalid_argument("placement '" + order +
                                 "': expected mp, dp and pp once each, innermost first (e.g. "
                                 "mp,pp,dp)");
  };
  if (kinds.size() != 3) throw fail();
  for (size_t i = 0; i < 3; ++i) {
    try {
      placement.order[i] = group_kind_from_string(kinds[i]);
    } catch (const std::invalid_argument&) {
      throw fail();
    }
    for (size_t j = 0; j < i; ++j)
      if (placement.order[j] == placement.order[i]) throw fail();
  }
  if (snake_columns < 0) throw std::invalid_argument("snake columns cannot be negative");
  return placement;
}

int Placement::rank(const Parallelism& p, int mp, int dp, int pp) const {
  const auto coordinate = [&](GroupKind k) {
    return k == GroupKind::Mp ? mp : k == GroupKind::Dp ? dp : pp;
  };
  const int position =
      coordinate(order[0]) +
      p.size(order[0]) * (coordinate(order[1]) + p.size(order[1]) * coordinate(order[2]));
  if (snake_columns <= 0) return position;
  const int y = position / snake_columns, along = position % snake_columns;
  return (y % 2 == 0 ? along : snake_columns - 1 - along) + snake_columns * y;
}

std::vector<std::vector<int>> parallel_groups(const Parallelism& p, GroupKind kind,
                                              const Placement& placement) {
  if (placement.snake_columns > 0 && p.ranks() % placement.snake_columns != 0)
    throw std::invalid_argument("a snake of " + std::to_string(placement.snake_columns) +
                                " columns needs whole rows: " + std::to_string(p.ranks()) +
                                " ranks are not a multiple of it");
  std::vector<std::vector<int>> groups;
  for (int a = 0; a < (kind == GroupKind::Mp ? p.pp : p.mp); ++a)
    for (int b = 0; b < (kind == GroupKind::Dp ? p.pp : p.dp); ++b) {
      std::vector<int> g;
      for (int i = 0; i < p.size(kind); ++i)
        g.push_back(kind == GroupKind::Mp   ? placement.rank(p, i, b, a)
                    : kind == GroupKind::Dp ? placement.rank(p, a, i, b)
                                            : placement.rank(p, a, b, i));
      std::sort(g.begin(), g.end());
      groups.push_back(g);
    }
  std::sort(groups.begin(), groups.end());
  return groups;
}

void apply_parallelism(MicrobenchmarkSpec& spec, const ParallelOptions& options, bool ranks_given) {
  const std::string& parallelism = options.parallelism;
  if (parallelism.empty() != options.group.empty())
    throw std::invalid_argument(
        "parallelism and group go together: MP,DP,PP and the kind of group (mp, dp or pp) whose "
        "collectives the workload runs");
  if (parallelism.empty()) return;
  const Parallelism p = parallelism_from_string(parallelism);
  if (ranks_given && spec.ranks != p.ranks())
    throw std::invalid_argument("parallelism " + parallelism + " needs " +
                                std::to_string(p.ranks()) + " ranks, not " +
                                std::to_string(spec.ranks));
  if (p.ranks() > 4096)
    throw std::invalid_argument("parallelism " + parallelism + ": more than 4096 ranks");
  spec.ranks = p.ranks();
  spec.groups = parallel_groups(p, group_kind_from_string(options.group),
                                placement_from_string(options.placement, options.snake_columns));
}

namespace {

// The communicator groups `spec` names, as pg_name -> ranks; per rank, the groups its collectives
// run over (empty name: every NPU).
struct GroupPlan {
  nlohmann::json groups = nlohmann::json::object();
  std::vector<std::vector<std::string>> of_rank;
};

GroupPlan plan_groups(const MicrobenchmarkSpec& spec) {
  GroupPlan plan;
  const int endpoints = spec.ranks + spec.io_controllers;
  plan.of_rank.resize(static_cast<size_t>(endpoints));
  if (spec.io_controllers > 0) {
    for (int i = 0; i < spec.io_controllers; ++i) {
      const std::string name = "io" + std::to_string(i);
      std::vector<int> members(static_cast<size_t>(spec.ranks));
      std::iota(members.begin(), members.end(), 0);
      members.push_back(spec.ranks + i);
      for (int r : members) plan.of_rank[r].push_back(name);
      plan.groups[name] = members;
    }
    return plan;
  }
  if (spec.groups.empty()) {
    for (auto& names : plan.of_rank) names = {""};
    return plan;
  }
  for (size_t g = 0; g < spec.groups.size(); ++g) {
    const std::string name = std::to_string(g + 1);
    for (int r : spec.groups[g]) {
      if (r < 0 || r >= spec.ranks || !plan.of_rank[r].empty())
        throw std::invalid_argument("groups: rank " + std::to_string(r) +
                                    " is out of range or in two groups");
      plan.of_rank[r] = {name};
    }
    plan.groups[name] = spec.groups[g];
  }
  for (int r = 0; r < spec.ranks; ++r)
    if (plan.of_rank[r].empty())
      throw std::invalid_argument("groups: rank " + std::to_string(r) + " is in no group");
  return plan;
}

}  // namespace

void check_microbenchmark(const MicrobenchmarkSpec& spec) {
  if (spec.ranks < 1) throw std::invalid_argument("ranks must be at least 1");
  if (spec.bytes == 0) throw std::invalid_argument("size must be above 0 bytes");
  if (spec.io_controllers < 0) throw std::invalid_argument("io controllers must not be negative");
  if (spec.io_controllers > 0 && !spec.groups.empty())
    throw std::invalid_argument(
        "an I/O stream runs over every NPU: it does not take parallelism groups");
  if (spec.io_controllers > 0 && spec.collective != CollectiveKind::Broadcast &&
      spec.collective != CollectiveKind::Reduce)
    throw std::invalid_argument(
        std::string("an I/O stream is a broadcast (weights in) or a reduce (gradients out), not ") +
        to_string(spec.collective));
}

void write_microbenchmark(const std::string& prefix, const MicrobenchmarkSpec& spec) {
  check_microbenchmark(spec);
  const GroupPlan groups = plan_groups(spec);
  auto dir = std::filesystem::path(prefix).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir);
  if (!groups.groups.empty()) {
    std::ofstream out(dir / "workload.json");
    out << groups.groups.dump() << "\n";
    if (!out) throw std::runtime_error("cannot write " + (dir / "workload.json").string());
  }
  for (int r = 0; r < spec.ranks + spec.io_controllers; ++r) {
    const bool io = r >= spec.ranks;
    Trace t;
    t.version = "0.0.4";
    uint64_t id = 0;
    std::vector<uint64_t> previous;
    for (int i = 0; i < spec.iterations; ++i) {
      if (spec.compute_micros > 0 && !io) {
        TraceNode c;
        c.id = id++;
        c.name = "compute_" + std::to_string(i);
        c.kind = NodeKind::Compute;
        c.duration_micros = spec.compute_micros;
        c.data_deps = previous;
        previous = {c.id};
        t.nodes.push_back(c);
      }
      // The rank's collectives of this iteration run side by side (an NPU's with every stream).
      std::vector<uint64_t> started;
      for (const std::string& group : groups.of_rank[r]) {
        TraceNode n;
        n.id = id++;
        n.name = std::string(to_string(spec.collective)) + "_" + std::to_string(i) +
                 (spec.io_controllers > 0 ? "_" + group : "");
        n.kind = NodeKind::Collective;
        n.comm_type = static_cast<int64_t>(spec.collective);
        n.comm_size = spec.bytes;
        n.pg_name = group;
        if (spec.io_controllers > 0) n.root = spec.ranks;  // the controller, after the NPUs
        n.data_deps = previous;
        started.push_back(n.id);
        t.nodes.push_back(n);
      }
      previous = started;
    }
    write_trace(prefix + "." + std::to_string(r) + ".et", t);
  }
}

}  // namespace wafersim::chakra
