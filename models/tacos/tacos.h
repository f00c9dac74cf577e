#pragma once
// TACOS-style collective synthesis (PAPERS.md section 4): greedy link-chunk matching over a
// time-expanded network. Whenever a link is free, it carries a chunk its source already holds
// (causality: held when the transfer starts) and its destination neither holds nor is being sent;
// chunks arrive after the link's alpha + chunk / bandwidth, and a link carries one chunk at a time.
// Links are visited in a seeded random order and pick among the candidate chunks from a seeded
// random point, so a synthesis is deterministic for a seed.
//
// All-Gather is synthesized directly; Reduce-Scatter is the All-Gather of the reversed links run
// backwards in time, each receiver combining what it gets; All-Reduce is Reduce-Scatter then
// All-Gather. The output is a Plan the replay runs on the cycle-level fabric.
//
// Scale: holdings are bitsets (NPUs x chunks bits), adjacency is a link list, and a link with
// nothing to carry sleeps until a chunk reaches its source: time and memory grow with links x
// chunks (and the N^2 chunk destinations an all-gather must serve), with no N x N tables.
#include <cstdint>
#include <string>
#include <vector>

#include "models/collectives/algorithms.h"
#include "models/collectives/plan.h"
#include "models/topology/topology.h"

namespace wafersim::tacos {

// A directed point-to-point link between two NPUs.
struct Link {
  int src = 0, dst = 0;
  double alpha_ns = 0;        // latency per transfer
  double bandwidth_gbps = 1;  // 1e9 bytes/s
};

struct LinkGraph {
  int npus = 0;
  std::vector<Link> links;
  // The NPUs' reduction engines, 1e9 bytes/s (0: free): in a reduce-scatter a receiver combines a
  // chunk before it passes it on, which adds to the transfer's alpha.
  double reduce_gbps = 0;
};

struct Options {
  int chunks_per_npu = 1;
  uint64_t chunk_bytes = 1 << 20;
  uint64_t seed = 1;
};

// One chunk over one link.
struct Transfer {
  int link = 0;
  uint32_t chunk = 0;  // all-gather: NPU r's chunks are r x chunks_per_npu + k
  double start_ns = 0, end_ns = 0;
};

struct Schedule {
  int npus = 0, chunks_per_npu = 0;
  uint64_t chunk_bytes = 0;
  std::vector<Transfer> transfers;  // in start order
  double time_ns = 0;
};

// What the fabric adds to a transfer between neighbours beyond the network link's latency and
// serialisation, in network cycles (the platform's fabric section; zero: the bare links).
struct FabricCosts {
  double endpoint_cycles = 0;  // the sending NIC's per-message delay
  double router_cycles = 0;  // one router's pipeline: routing, VC and switch allocation, traversal
  double flit_bytes = 0;     // the head flit, serialised on the links before and after
  double reduce_gbps = 0;    // the NPUs' reduction engines (LinkGraph::reduce_gbps)
};

// The point-to-point links of a platform's topology graph: each network link between two routers
// joins their NPUs (its bandwidth; alpha: its latency plus `costs`). A switch is unwound, as the
// TACOS paper suggests, into a link between every pair of its NPUs with 1/(n - 1) of a port's
// bandwidth and the two port latencies (each NPU's port is shared by its n - 1 links). Throws
// std::invalid_argument for a router without exactly one NPU.
//
// Alpha follows the fabric's cut-through timing (hw/noc/fabric_node.h): the head leaves the sender
// after the endpoint delay and crosses each link (its latency and one flit) into a router, which
// takes it in at the next cycle boundary and passes it on after its pipeline; the tail follows at
// the link's bandwidth. The NPUs' attach links are taken to be no slower than the network links
// they feed (the default injection bandwidth is the sum of them), and a synthesis does not see
// that an NPU's links share them.
LinkGraph link_graph(const topology::Topology& topology, const FabricCosts& costs = {});

// The graph a Reduce-Scatter is synthesized on, as the All-Gather it runs backwards: every link
// turned around, its alpha grown by the time a receiver takes to combine a chunk.
LinkGraph reduce_scatter_graph(const LinkGraph& graph, uint64_t chunk_bytes);

// All-Gather over `graph`. Throws std::invalid_argument when some NPU can never receive some chunk
// (naming both NPUs), or for a bad graph (a link out of range, a self-loop, bandwidth <= 0).
Schedule all_gather(const LinkGraph& graph, const Options& options);

// The homogeneous ingress bound, ceil((N - 1) C / min in-degree) x (alpha + chunk / bandwidth),
// when every link has the same alpha and bandwidth; -1 otherwise.
double ingress_lower_bound_ns(const LinkGraph& graph, const Options& options);

// The plan of a synthesized collective (all_gather, reduce_scatter or all_reduce) of `bytes`
// (Chakra's convention). Throws std::invalid_argument as all_gather does, or for another
// collective. `time_ns` receives the synthesized time.
collectives::Plan synthesize(const LinkGraph& graph, collectives::Collective collective,
                             uint64_t bytes, int chunks_per_npu, uint64_t seed,
                             double* time_ns = nullptr);

}  // namespace wafersim::tacos
