#pragma once
// The one topology graph (DESIGN.md decision 4): NPUs, routers / switches and directed links, plus
// the routing rules every hop uses (dimension order on a mesh, the shorter way round a ring, the
// direct link of a fully-connected network): no table of nodes x NPUs, so memory grows with the
// links. The platform builder, the collectives and the reports read this graph.
#include <cstdint>
#include <string>
#include <vector>

namespace wafersim::topology {

enum class Shape { Mesh, Ring, FullyConnected, Switch };

const char* to_string(Shape shape);
Shape shape_from_string(const std::string& text);  // throws std::invalid_argument

// What a platform file says about the network. Bandwidths are GB/s = 1e9 bytes/s per link per
// direction.
struct NetworkSpec {
  Shape shape = Shape::Mesh;
  int npus = 0;    // ring / fully-connected / switch: number of NPUs
  int mesh_x = 0;  // mesh: columns
  int mesh_y = 0;  // mesh: rows
  double clock_ghz = 1.0;
  double link_bandwidth_gbps = 0;
  double link_bandwidth_y_gbps = 0;  // mesh: the y (column) links; 0 = link_bandwidth_gbps
  double link_latency_ns = 0;
  // NPU <-> its router. 0 bandwidth = the sum of that router's network links (the NPU can drive all
  // of them at once). A switch topology has no per-NPU router: the NPU's port is a network link.
  double injection_bandwidth_gbps = 0;
  double injection_latency_ns = 0;
};

enum class NodeKind { Npu, Router };

struct Node {
  int id = 0;
  NodeKind kind = NodeKind::Router;
  std::string name;
  int rank = -1;  // NPUs: their rank
  int x = -1, y = -1;
};

struct Link {
  int id = 0;
  int src = 0;  // node ids
  int dst = 0;
  double bytes_per_cycle = 0;
  uint32_t latency_cycles = 0;
  bool dateline =
      false;            // crossing it moves a packet to the upper VC class (ring deadlock freedom)
  bool attach = false;  // NPU <-> router link rather than a network link
  std::string name;
};

class Topology {
 public:
  // Validates the spec (throws std::invalid_argument naming the key) and builds the graph and
  // routes.
  static Topology build(const NetworkSpec& spec);

  const NetworkSpec& spec() const { return spec_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<Link>& links() const { return links_; }
  int npu_count() const { return static_cast<int>(npu_nodes_.size()); }
  int npu_node(int rank) const { return npu_nodes_.at(rank); }
  const std::vector<int>& out_links(int node) const { return out_[node]; }
  const std::vector<int>& in_links(int node) const { return in_[node]; }
  std::vector<Link> links_of(const std::vector<int>& ids) const {
    std::vector<Link> out;
    for (int id : ids) out.push_back(links_[id]);
    return out;
  }

  // The output (index into out_links(node)) a packet at `node` takes towards NPU `dst_rank`, or -1
  // at that NPU.
  int next_port(int node, int dst_rank) const;
  // The link a packet at `node` takes towards NPU `dst_rank`, or -1 at that NPU.
  int next_link(int node, int dst_rank) const {
    const int port = next_port(node, dst_rank);
    return port < 0 ? -1 : out_[node][port];
  }
  // Links on the path from one NPU to another, in order.
  std::vector<int> path(int src_rank, int dst_rank) const;
  // The narrowest link on that path, in bytes per cycle (what a message can stream at).
  double path_bytes_per_cycle(int src_rank, int dst_rank) const;
  // Whether routes need two VC classes to stay deadlock-free (rings with multi-hop routes).
  bool needs_dateline_classes() const { return needs_dateline_; }

 private:
  int add_node(NodeKind kind, std::string name, int rank = -1, int x = -1, int y = -1);
  int add_link(int src, int dst, double gbps, double latency_ns, bool attach);
  void add_duplex(int a, int b, double gbps, double latency_ns, bool attach);
  int link_between(int src, int dst) const;
  // The output of `node` whose link leads to node `next`, or -1.
  int port_to(int node, int next) const;
  void attach_npus_to_routers(const std::vector<int>& routers);
  // Sorts every node's neighbours for port_to and checks that every route arrives.
  void index_neighbours();

  NetworkSpec spec_;
  std::vector<Node> nodes_;
  std::vector<Link> links_;
  std::vector<int> npu_nodes_;
  std::vector<int> router_of_rank_;
  std::vector<std::vector<int>> out_, in_;
  // Per node, its out-neighbours by node id, each with the output that leads there.
  struct Neighbour {
    int node;
    int port;
  };
  std::vector<std::vector<Neighbour>> neighbours_;
  bool needs_dateline_ = false;
};

}  // namespace wafersim::topology
