#include "tb/report/utilisation.h"

#include <set>

namespace wafersim::tb {

namespace {

// What NPU `rank` can send in dimension `d`, GB/s: its port (NPU -> router or switch link) there.
double port_gbps(const topology::Topology& t, int rank, int d) {
  double gbps = 0;
  for (int id : t.out_links(t.npu_node(rank)))
    if (t.links()[id].dim == d) gbps += t.links()[id].bytes_per_cycle * t.spec().clock_ghz;
  return gbps;
}

}  // namespace

std::vector<collectives::DimensionGroup> group_dimensions(const topology::Topology& topology,
                                                          const std::vector<int>& members) {
  if (members.size() < 2) return {};
  const int dims = std::max<int>(1, static_cast<int>(topology.dims().size()));
  std::vector<std::set<int>> extent(dims);
  for (int r : members)
    for (int d = 0; d < dims; ++d)
      extent[d].insert(topology.dims().empty() ? r : topology.coordinate(r, d));
  std::vector<collectives::DimensionGroup> out;
  double product = 1, spanned_gbps = 0;
  for (int d = 0; d < dims; ++d) {
    if (extent[d].size() < 2) continue;
    collectives::DimensionGroup g;
    g.size = static_cast<int>(extent[d].size());
    g.bandwidth_gbps = port_gbps(topology, members.front(), d);
    product *= g.size;
    spanned_gbps += g.bandwidth_gbps;
    out.push_back(g);
  }
  if (product == static_cast<double>(members.size())) return out;
  collectives::DimensionGroup flat;
  flat.size = static_cast<int>(members.size());
  flat.bandwidth_gbps = spanned_gbps;
  return {flat};
}

double ideal_collective_ns(const topology::Topology& topology, collectives::Collective kind,
                           const std::vector<int>& members, uint64_t bytes) {
  const auto dims = group_dimensions(topology, members);
  return dims.empty() ? 0 : collectives::ideal_seconds(kind, dims, bytes) * 1e9;
}

}  // namespace wafersim::tb
