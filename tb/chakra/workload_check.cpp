#include "tb/chakra/workload_check.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

namespace wafersim::chakra {

namespace {

// The longest compute node SystemC can time: 2^64 ps in whole microseconds.
constexpr uint64_t kMaxDurationMicros = UINT64_MAX / 1000000;

std::string node_item(const TraceNode& n) {
  return "node " + std::to_string(n.id) + (n.name.empty() ? "" : " ('" + n.name + "')");
}

std::string rank_node(int rank, const Trace& t, const TraceNode& n) {
  return "rank " + std::to_string(rank) + " (" + t.file + " " + node_item(n) + ")";
}

// Collects problems up to a limit; past it, counts them.
class Problems {
 public:
  explicit Problems(size_t limit) : limit_(limit) {}
  void add(const std::string& file, const std::string& item, const std::string& problem,
           bool stalls = false) {
    if (list_.size() < limit_)
      list_.push_back({InputError(file, item, problem), stalls});
    else
      ++dropped_;
  }
  std::vector<WorkloadProblem> take() {
    if (dropped_ > 0)
      list_.push_back(
          {InputError("", "", std::to_string(dropped_) + " more problems not shown"), false});
    return std::move(list_);
  }

 private:
  size_t limit_;
  size_t dropped_ = 0;
  std::vector<WorkloadProblem> list_;
};

bool npu_work(const TraceNode& n) {
  return !n.is_cpu_op;  // host work: replayed as zero NPU time, its attributes are not used
}

// Checks of one node; `w` and `rank` are null / -1 when the trace is looked at alone.
void check_node(const Workload* w, const Trace& t, const TraceNode& n, int rank, Problems& out) {
  auto fail = [&](const std::string& problem) { out.add(t.file, node_item(n), problem); };
  if (!npu_work(n)) return;
  const int ranks = w ? static_cast<int>(w->ranks.size()) : 0;
  auto size_ok = [&]() {
    if (!n.comm_size) return fail("comm_size is missing"), false;
    if (*n.comm_size == 0) return fail("comm_size is 0"), false;
    return true;
  };
  auto peer_ok = [&](const std::optional<int64_t>& p, const char* what) {
    if (!p) return fail(std::string(what) + " is missing");
    if (!w) return;
    if (*p < 0 || *p >= ranks)
      return fail(std::string(what) + " " + std::to_string(*p) + " is outside 0.." +
                  std::to_string(ranks - 1));
    if (*p == rank)
      fail(std::string(what) + " is this rank itself: a transfer to oneself is not modelled");
  };
  // Ranks past the NPUs are I/O controllers: endpoints that only transfer.
  const bool io = w && rank >= static_cast<int>(w->everyone.size());
  const std::string io_rank = "rank " + std::to_string(rank) + " is an I/O controller";
  if (io &&
      (n.kind == NodeKind::Compute || n.kind == NodeKind::MemLoad || n.kind == NodeKind::MemStore))
    return fail(io_rank + ": it has no compute engine or HBM, only transfers");
  if (io && n.kind == NodeKind::Collective && is_everyone(n.pg_name))
    return fail(io_rank + ": it is in no default communicator (pg_name '" + n.pg_name +
                "' means every NPU); name a group that holds it");
  if (n.duration_micros > kMaxDurationMicros)
    fail("duration_micros " + std::to_string(n.duration_micros) +
         " is longer than SystemC can simulate (at most " + std::to_string(kMaxDurationMicros) +
         " us: 2^64 ps)");
  switch (n.kind) {
    case NodeKind::Invalid:
      fail("node type INVALID_NODE (0) on an NPU node");
      break;
    case NodeKind::Collective: {
      if (!n.comm_type) return fail("comm_type is missing");
      const int64_t type = *n.comm_type;
      if (type < 0 || type > static_cast<int64_t>(CollectiveKind::Barrier))
        return fail("unknown comm_type " + std::to_string(type));
      const auto kind = static_cast<CollectiveKind>(type);
      if (kind == CollectiveKind::Gather || kind == CollectiveKind::Scatter)
        return fail(std::string("collective ") + to_string(kind) + " is not supported yet");
      if (kind != CollectiveKind::Barrier) size_ok();
      if (n.root && w) {
        // An unknown group is reported below; its root is judged against every rank meanwhile.
        const int size = is_everyone(n.pg_name) || w->groups.count(n.pg_name)
                             ? static_cast<int>(w->members(n.pg_name).size())
                             : ranks;
        if (*n.root < 0 || *n.root >= size)
          fail("root " + std::to_string(*n.root) + " is outside the communicator's positions 0.." +
               std::to_string(size - 1));
      }
      if (w && !is_everyone(n.pg_name)) {
        auto g = w->groups.find(n.pg_name);
        if (g == w->groups.end())
          return fail("pg_name '" + n.pg_name + "' names no communicator group" +
                      (w->groups_source.empty() ? " (give --comm-groups FILE)"
                                                : " in " + w->groups_source));
        if (std::find(g->second.begin(), g->second.end(), rank) == g->second.end())
          fail("rank " + std::to_string(rank) + " is not in group '" + n.pg_name + "'");
      }
      break;
    }
    case NodeKind::Send:
      size_ok();
      peer_ok(n.comm_dst, "comm_dst");
      break;
    case NodeKind::Recv:
      size_ok();
      peer_ok(n.comm_src, "comm_src");
      break;
    default:
      break;
  }
}

// Kahn's algorithm over the dependencies in force; names the nodes left on a cycle.
void check_acyclic(DependencyMode mode, const Trace& t,
                   const std::unordered_map<uint64_t, size_t>& index, Problems& out) {
  auto deps_of = [&](const TraceNode& n) {
    std::vector<uint64_t> d = n.data_deps;
    if (mode == DependencyMode::DataAndControl)
      d.insert(d.end(), n.ctrl_deps.begin(), n.ctrl_deps.end());
    return d;
  };
  std::vector<int> missing(t.nodes.size(), 0);
  std::vector<std::vector<size_t>> children(t.nodes.size());
  for (size_t i = 0; i < t.nodes.size(); ++i)
    for (uint64_t d : deps_of(t.nodes[i])) {
      auto it = index.find(d);
      if (it == index.end()) continue;  // reported as a missing dependency
      children[it->second].push_back(i);
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
    if (missing[i] > 0) ids += (shown++ ? ", " : "") + std::to_string(t.nodes[i].id);
  out.add(
      t.file, "nodes " + ids + (t.nodes.size() - done > 8 ? ", ..." : ""),
      "dependency cycle: " + std::to_string(t.nodes.size() - done) + " nodes can never run" +
          (mode == DependencyMode::DataAndControl ? " (if only ctrl_deps form it, try --deps data)"
                                                  : ""));
}

// Ids unique, dependencies present, no cycle, every node well formed.
void check_one_trace(const Workload* w, DependencyMode mode, const Trace& t, int rank,
                     Problems& out) {
  std::unordered_map<uint64_t, size_t> index;
  for (size_t i = 0; i < t.nodes.size(); ++i)
    if (!index.emplace(t.nodes[i].id, i).second)
      out.add(t.file, node_item(t.nodes[i]), "duplicate node id");
  for (const auto& n : t.nodes) {
    check_node(w, t, n, rank, out);
    for (uint64_t d : n.data_deps)
      if (!index.count(d))
        out.add(t.file, node_item(n),
                "data dependency on node " + std::to_string(d) + " that does not exist");
    if (mode == DependencyMode::DataAndControl)
      for (uint64_t d : n.ctrl_deps)
        if (!index.count(d))
          out.add(t.file, node_item(n),
                  "control dependency on node " + std::to_string(d) +
                      " that does not exist (use --deps data to replay on data dependencies "
                      "only)");
  }
  check_acyclic(mode, t, index, out);
}

bool well_formed_collective(const TraceNode& n) {
  return npu_work(n) && n.kind == NodeKind::Collective && n.comm_type && *n.comm_type >= 0 &&
         *n.comm_type <= static_cast<int64_t>(CollectiveKind::Barrier);
}

// The ranks of a communicator run its collectives in node-id order (as the replay matches them):
// position k must be the same collective, of the same size, on every member.
void check_collectives_agree(const Workload& w, Problems& out) {
  // group -> rank -> its collectives in id order
  std::map<std::string, std::map<int, std::vector<const TraceNode*>>> sequences;
  for (size_t r = 0; r < w.ranks.size(); ++r)
    for (const auto& n : w.ranks[r].nodes)
      if (well_formed_collective(n))
        sequences[communicator_name(n.pg_name)][static_cast<int>(r)].push_back(&n);
  for (auto& [group, per_rank] : sequences) {
    if (!is_everyone(group) && !w.groups.count(group)) continue;  // reported per node
    for (auto& [rank, list] : per_rank)
      std::sort(list.begin(), list.end(),
                [](const TraceNode* a, const TraceNode* b) { return a->id < b->id; });
    const auto& members = w.members(group);
    const int first = members.front();
    const auto& reference = per_rank[first];
    for (int rank : members) {
      const auto& list = per_rank[rank];
      const size_t common = std::min(list.size(), reference.size());
      for (size_t k = 0; k < common; ++k) {
        const TraceNode& a = *reference[k];
        const TraceNode& b = *list[k];
        auto kind = [](const TraceNode& n) {
          return to_string(static_cast<CollectiveKind>(*n.comm_type));
        };
        std::string differ;
        if (*a.comm_type != *b.comm_type)
          differ = std::string("kind (") + kind(a) + " against " + kind(b) + ")";
        else if (a.comm_size != b.comm_size &&
                 static_cast<CollectiveKind>(*a.comm_type) != CollectiveKind::Barrier)
          differ = "comm_size (" + std::to_string(a.comm_size.value_or(0)) + " against " +
                   std::to_string(b.comm_size.value_or(0)) + " bytes)";
        else if (a.root.value_or(0) != b.root.value_or(0))
          differ = "root (" + std::to_string(a.root.value_or(0)) + " against " +
                   std::to_string(b.root.value_or(0)) + ")";
        if (differ.empty()) continue;
        out.add(w.ranks[rank].file, node_item(b),
                "collective #" + std::to_string(k + 1) + " of communicator '" + group +
                    "' differs in " + differ + " between " + rank_node(first, w.ranks[first], a) +
                    " and " + rank_node(rank, w.ranks[rank], b) +
                    ": the ranks must run the same collectives in the same order");
        break;  // later positions of this rank follow from the first difference
      }
      if (list.size() != reference.size()) {
        const bool fewer = list.size() < reference.size();
        const int shorter = fewer ? rank : first, longer = fewer ? first : rank;
        const TraceNode& extra = *(fewer ? reference : list)[common];
        out.add(w.ranks[longer].file, node_item(extra),
                "collective #" + std::to_string(common + 1) + " of communicator '" + group +
                    "' on rank " + std::to_string(longer) + " has no counterpart on rank " +
                    std::to_string(shorter) + " (" + std::to_string(per_rank[shorter].size()) +
                    " collectives there): it can never complete",
                true);
      }
    }
  }
}

// Every SEND (src, dst, tag) needs a RECV (src, dst, tag) of the same size on the receiver.
void check_sends_received(const Workload& w, Problems& out) {
  using Key = std::tuple<int64_t, int64_t, int64_t>;  // src, dst, tag
  struct Side {
    std::vector<std::pair<int, const TraceNode*>> sends, recvs;
  };
  std::map<Key, Side> pairs;
  const int ranks = static_cast<int>(w.ranks.size());
  for (int r = 0; r < ranks; ++r)
    for (const auto& n : w.ranks[r].nodes) {
      if (!npu_work(n)) continue;
      if (n.kind == NodeKind::Send && n.comm_dst)
        pairs[{r, *n.comm_dst, n.comm_tag.value_or(0)}].sends.push_back({r, &n});
      if (n.kind == NodeKind::Recv && n.comm_src)
        pairs[{*n.comm_src, r, n.comm_tag.value_or(0)}].recvs.push_back({r, &n});
    }
  for (auto& [key, side] : pairs) {
    const auto [src, dst, tag] = key;
    auto by_id = [](const auto& a, const auto& b) { return a.second->id < b.second->id; };
    std::sort(side.sends.begin(), side.sends.end(), by_id);
    std::sort(side.recvs.begin(), side.recvs.end(), by_id);
    const size_t common = std::min(side.sends.size(), side.recvs.size());
    for (size_t k = 0; k < common; ++k) {
      const auto& [sr, s] = side.sends[k];
      const auto& [rr, v] = side.recvs[k];
      if (s->comm_size != v->comm_size) {
        out.add(w.ranks[rr].file, node_item(*v),
                "RECV of " + std::to_string(v->comm_size.value_or(0)) + " bytes from rank " +
                    std::to_string(src) + " (comm_tag " + std::to_string(tag) + ") matches " +
                    rank_node(sr, w.ranks[sr], *s) + ", a SEND of " +
                    std::to_string(s->comm_size.value_or(0)) +
                    " bytes: the ranks must agree on comm_size");
        break;
      }
    }
    for (size_t k = common; k < side.sends.size(); ++k) {
      const auto& [sr, s] = side.sends[k];
      out.add(w.ranks[sr].file, node_item(*s),
              "rank " + std::to_string(src) + " SENDs " + std::to_string(s->comm_size.value_or(0)) +
                  " bytes to rank " + std::to_string(dst) + " with comm_tag " +
                  std::to_string(tag) + ", and no RECV on rank " + std::to_string(dst) +
                  " takes it",
              true);
    }
    for (size_t k = common; k < side.recvs.size(); ++k) {
      const auto& [rr, v] = side.recvs[k];
      out.add(w.ranks[rr].file, node_item(*v),
              "rank " + std::to_string(dst) + " waits to RECV from rank " + std::to_string(src) +
                  " with comm_tag " + std::to_string(tag) + ", and no SEND on rank " +
                  std::to_string(src) + " delivers it",
              true);
    }
  }
}

}  // namespace

std::vector<WorkloadProblem> check_workload(const Workload& w, size_t limit) {
  Problems out(limit);
  for (size_t r = 0; r < w.ranks.size(); ++r)
    check_one_trace(&w, w.dependencies, w.ranks[r], static_cast<int>(r), out);
  check_collectives_agree(w, out);
  check_sends_received(w, out);
  return out.take();
}

std::vector<WorkloadProblem> check_trace(const Trace& trace) {
  Problems out(50);
  check_one_trace(nullptr, DependencyMode::DataAndControl, trace, -1, out);
  return out.take();
}

std::vector<std::string> validate(const Workload& w) {
  std::vector<std::string> stalls;
  for (const auto& p : check_workload(w, 1000)) {
    if (!p.stalls) throw p.error;
    stalls.push_back(p.error.what());
  }
  return stalls;
}

}  // namespace wafersim::chakra
