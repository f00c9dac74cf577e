#pragma once
// Bandwidth utilisation of a collective (report.json, collectives.csv): the ideal time of
// collectives::ideal_seconds over the dimensions the group spans, with each dimension's per-NPU
// bandwidth read from the platform (an NPU's port in that dimension), over the measured time.
#include <cstdint>
#include <vector>

#include "models/collectives/hierarchical.h"
#include "models/topology/topology.h"

namespace wafersim::tb {

// The dimensions a group of ranks spans: on a network of dimensions whose group is a product of
// its coordinates in each (every NPU of the platform, or a sub-grid), those dimensions with the
// group's extent in each; any other group (or a mesh) is one dimension of its size, with the
// NPU's whole network bandwidth in the dimensions it spans.
std::vector<collectives::DimensionGroup> group_dimensions(const topology::Topology& topology,
                                                          const std::vector<int>& members);

// The ideal time of collective `kind` of `bytes` over `members`, in ns (0 for one rank). In the
// network (`in_network`: a plan of flows, reduced and multicast by the switches), it is the busier
// direction of an NPU's port at its full rate: an all-reduce, reduce or broadcast streams `bytes`
// once each way, a reduce-scatter sends all of them, an all-gather receives n - 1 inputs of
// `bytes`.
double ideal_collective_ns(const topology::Topology& topology, collectives::Collective kind,
                           const std::vector<int>& members, uint64_t bytes,
                           bool in_network = false);

}  // namespace wafersim::tb
