#include "tb/chakra/generator.h"

#include <filesystem>
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

void write_microbenchmark(const std::string& prefix, const MicrobenchmarkSpec& spec) {
  if (spec.ranks < 1) throw std::invalid_argument("ranks must be at least 1");
  if (spec.bytes == 0) throw std::invalid_argument("size must be above 0 bytes");
  auto dir = std::filesystem::path(prefix).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir);
  for (int r = 0; r < spec.ranks; ++r) {
    Trace t;
    t.version = "0.0.4";
    uint64_t id = 0;
    std::vector<uint64_t> previous;
    for (int i = 0; i < spec.iterations; ++i) {
      if (spec.compute_micros > 0) {
        TraceNode c;
        c.id = id++;
        c.name = "compute_" + std::to_string(i);
        c.kind = NodeKind::Compute;
        c.duration_micros = spec.compute_micros;
        c.data_deps = previous;
        previous = {c.id};
        t.nodes.push_back(c);
      }
      TraceNode n;
      n.id = id++;
      n.name = std::string(to_string(spec.collective)) + "_" + std::to_string(i);
      n.kind = NodeKind::Collective;
      n.comm_type = static_cast<int64_t>(spec.collective);
      n.comm_size = spec.bytes;
      n.data_deps = previous;
      previous = {n.id};
      t.nodes.push_back(n);
    }
    write_trace(prefix + "." + std::to_string(r) + ".et", t);
  }
}

}  // namespace wafersim::chakra
