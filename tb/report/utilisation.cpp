#include "tb/report/utilisation.h"

namespace wafersim::tb {

namespace {

// What NPU `rank` can send in dimension `d`, GB/s: its port (NPU -> router or switch link) there.
double port_gbps(const topology::Topology& t, int rank, int d) {
  double gbps = 0;
  for (int id : t.out_links(t.endpoint_node(rank)))
    if (t.links()[id].dim == d) gbps += t.links()[id].bytes_per_cycle * t.spec().clock_ghz;
  return gbps;
}

}  // namespace

std::vector<collectives::DimensionGroup> group_dimensions(const topology::Topology& topology,
                                                          const std::vector<int>& members) {
  if (members.size() < 2) return {};
  // A mesh (no dimensions) counts as one dimension of all its NPUs.
  const std::vector<int> extents = topology.dims().empty()
                                       ? std::vector<int>{static_cast<int>(members.size())}
                                       : topology.extents(members);
  const int dims = static_cast<int>(extents.size());
  std::vector<collectives::DimensionGroup> out;
  double product = 1, spanned_gbps = 0;
  for (int d = 0; d < dims; ++d) {
    if (extents[d] < 2) continue;
    collectives::DimensionGroup g;
    g.size = extents[d];
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
                           const std::vector<int>& members, uint64_t bytes, bool in_network) {
  if (in_network) {
    if (members.size() < 2) return 0;
    const double n = static_cast<double>(members.size());
    const double moved = kind == collectives::Collective::AllGather
                             ? static_cast<double>(bytes) * (n - 1)  // bytes: each rank's input
                             : static_cast<double>(bytes);
    return moved / port_gbps(topology, members.front(), 0);
  }
  const auto dims = group_dimensions(topology, members);
  return dims.empty() ? 0 : collectives::ideal_seconds(kind, dims, bytes) * 1e9;
}

}  // namespace wafersim::tb
