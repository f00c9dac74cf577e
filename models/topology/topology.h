#pragma once
// The one topology graph (DESIGN.md decision 4): NPUs, routers / switches and directed links, plus
// the routing rules every hop uses (dimension order on a mesh and across network dimensions, the
// shorter way round a ring, the direct link of a fully-connected network, up to a switch and down):
// no table of nodes x NPUs, so memory grows with the links. The platform builder, the collectives
// and the reports read this graph.
#include <cstdint>
#include <string>
#include <vector>

namespace wafersim::topology {

// Mesh: a 2-D mesh of routers, one NPU each. Ring / FullyConnected / Switch: a network of one
// dimension. Dimensions: a list of Ring, FullyConnected and Switch dimensions (NetworkSpec::dims).
// Tree: a two-level switch tree, NPUs under leaf switches under one spine switch (the Fred wafer's
// almost-fat tree, PAPERS.md section 1).
enum class Shape { Mesh, Ring, FullyConnected, Switch, Dimensions, Tree };

const char* to_string(Shape shape);
Shape shape_from_string(const std::string& text);  // throws std::invalid_argument

// One dimension of a multi-dimensional network (ASTRA-sim's blocks): NPU ids decompose per
// dimension, dimension 0 varying fastest, so NPU r sits at coordinate (r / stride_d) % npus in
// dimension d, stride_d being the product of the sizes of the dimensions below d. Each group of
// NPUs that differ only in dimension d forms one Ring, FullyConnected or Switch block.
struct Dimension {
  Shape shape = Shape::Ring;       // Ring, FullyConnected or Switch
  int npus = 0;                    // NPUs per block
  double link_bandwidth_gbps = 0;  // per link per direction
  double link_latency_ns = 0;
  // Parallel links between two neighbours (a ring's neighbours, an FC pair, an NPU and its switch):
  // they act as one link of `links` times the bandwidth.
  int links = 1;
};

// What a platform file says about the network. Bandwidths are GB/s = 1e9 bytes/s per link per
// direction.
struct NetworkSpec {
  Shape shape = Shape::Mesh;
  // Shape::Dimensions: the dimensions, dimension 0 first (at least one; the NPU count is the
  // product of their sizes). The other shapes leave it empty and use the fields below.
  std::vector<Dimension> dims;
  int npus = 0;    // ring / fully-connected / switch: number of NPUs
  int mesh_x = 0;  // mesh: columns
  int mesh_y = 0;  // mesh: rows
  double clock_ghz = 1.0;
  double link_bandwidth_gbps = 0;
  double link_bandwidth_y_gbps = 0;  // mesh: the y (column) links; 0 = link_bandwidth_gbps
  double link_latency_ns = 0;
  // NPU <-> its router, per dimension (a NIC port each). 0 bandwidth = the sum of that router's
  // network links in that dimension (the NPU can drive all of them at once). A network whose only
  // dimension is a switch has no per-NPU router: the NPU's port is a network link.
  double injection_bandwidth_gbps = 0;
  double injection_latency_ns = 0;
  // Tree: `npus` NPUs, `leaf_npus` under each leaf switch (NPU r under leaf r / leaf_npus), each
  // NPU joined to its leaf by a link of link_bandwidth_gbps, each leaf to the spine by `uplinks`
  // parallel links of uplink_bandwidth_gbps and uplink_latency_ns (< 0: link_latency_ns). A route
  // between leaves takes uplink (and downlink) k = (its destination's place in its leaf) mod
  // uplinks, as a fat tree's d-mod-k routing does.
  int leaf_npus = 0;
  int uplinks = 1;
  double uplink_bandwidth_gbps = 0;
  double uplink_latency_ns = -1;
  // Tree: whether its switches are Fred switches (they reduce and multicast in-network flows, and
  // route unicasts as the plain switches do) rather than plain switches.
  bool fred_switches = false;
  // Mesh and tree: I/O controllers to off-wafer memory (PAPERS.md section 1), endpoints beside the
  // NPUs with ranks npus .. npus + io_controllers - 1, each joined by a duplex link of
  // io_bandwidth_gbps and io_latency_ns (< 0: link_latency_ns). On a mesh they hang off the edge
  // routers: the first half (rounded up) along the north edge (row 0), the rest along the south
  // edge (the last row), controller j of an edge's k on column j x mesh_x / k (the Fred paper's
  // 18 on a 5x4 mesh: 2N - 1 = 9 per edge, whose X-Y multicast trees load the links between the
  // rows with 9 streams each). On a tree, controller i hangs off leaf i mod leaves.
  int io_controllers = 0;
  double io_bandwidth_gbps = 0;
  double io_latency_ns = -1;
};

// An in-network flow's ends, as endpoint ranks (DESIGN.md decision 2): the data of every input is
// reduced on the way, and every output receives the sum. `key` spreads flows over parallel links
// (the uplink a flow takes is key mod uplinks, as d-mod-k spreads destinations).
struct FlowEnds {
  std::vector<int> inputs;
  std::vector<int> outputs;
  uint64_t key = 0;
};

// What a switch does with a flow's units that arrive on one of its inputs: it waits for `inputs`
// of them (one from each child that holds inputs of the flow: an NPU, or a switch's partial sum),
// reduces them, and sends the sum on every output of `ports` (one unit each: a multicast). A
// switch may see a flow twice: on the way up (stage 0, reducing) and on the way down (stage 1, the
// sum coming back to be multicast).
struct FlowHop {
  int stage = 0;
  int inputs = 0;
  std::vector<int> ports;  // indices into out_links(node)
};

// A flow's way through one switch at one stage, known before it runs: the inputs (indices into
// in_links(node)) its units come in on, and what the switch does with them.
struct FlowPassage {
  std::vector<int> in_ports;
  FlowHop hop;
};

// NPUs are one kind of node among others. Routers sit beside NPUs (one per NPU, with ports in
// every dimension); switches join the NPUs of one block of a Switch dimension. FredSwitch: a
// tree's switch that also reduces and multicasts flows (hw/fred). IoController: an I/O controller
// to off-wafer memory, an endpoint that is not an NPU. Endpoints (NPUs, then I/O controllers)
// are numbered by rank, the address every route and trace names.
enum class NodeKind { Npu, Router, Switch, FredSwitch, IoController };

inline bool is_endpoint(NodeKind kind) {
  return kind == NodeKind::Npu || kind == NodeKind::IoController;
}
// Whether a node forwards units between its links (a Router block in hw/, or a Fred switch).
inline bool is_switching(NodeKind kind) {
  return !is_endpoint(kind);
}

struct Node {
  int id = 0;
  NodeKind kind = NodeKind::Router;
  std::string name;
  int rank = -1;  // endpoints: their rank (router r of a network of dimensions is node NPUs + r)
  int x = -1, y = -1;   // mesh: coordinates; ring: position; switch: its block in its dimension
  int dim = -1;         // switches: their dimension
  int first_rank = -1;  // switches: the lowest rank of their block
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
  int dim = 0;          // the network dimension it belongs to (a mesh's links are all in 0)
  std::string name;
};

// A cycle through every cell of a `columns` x `rows` grid (cell x + columns * y) whose every step
// goes to a neighbouring cell: along row 0, back and forth over the other rows (leaving column 0
// out), then up column 0; transposed when `rows` is odd and `columns` even. Empty when there is
// none (both odd, or a line of more than 2 cells).
std::vector<int> grid_cycle(int columns, int rows);

class Topology {
 public:
  // Validates the spec (throws std::invalid_argument naming the key) and builds the graph and
  // routes.
  static Topology build(const NetworkSpec& spec);

  const NetworkSpec& spec() const { return spec_; }
  // The dimensions (one for a ring, fully-connected or switch network; none for a mesh).
  const std::vector<Dimension>& dims() const { return spec_.dims; }
  // NPU `rank`'s coordinate in dimension `d`, and the NPU at that rank with it replaced by `c`.
  int coordinate(int rank, int d) const {
    return coords_.empty() ? rank / stride_[d] % spec_.dims[d].npus
                           : coords_[static_cast<size_t>(rank) * stride_.size() + d];
  }
  int with_coordinate(int rank, int d, int c) const {
    return rank + (c - coordinate(rank, d)) * stride_[d];
  }
  // Per dimension, how many distinct coordinates the NPUs `ranks` (each one of the platform's)
  // have there: the extents of the smallest grid of the dimensions that holds them.
  std::vector<int> extents(const std::vector<int>& ranks) const;
  // What one NPU can send in dimension `d` at once, GB/s: all its links in that dimension (a
  // ring's two neighbours, an FC's n - 1 peers, its switch), each `links` wide.
  double npu_bandwidth_gbps(int d) const;
  // The lowest dimension in which two NPUs differ (the one a route leaves on), or -1 if equal.
  int first_differing_dim(int a, int b) const;
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<Link>& links() const { return links_; }
  int npu_count() const { return spec_.npus; }
  // NPUs and I/O controllers; rank r's node.
  int endpoint_count() const { return static_cast<int>(endpoint_nodes_.size()); }
  int endpoint_node(int rank) const { return endpoint_nodes_.at(rank); }
  bool is_io_controller(int rank) const { return rank >= spec_.npus; }
  // The switching node endpoint `rank` hangs off (its router, or its switch), and the output
  // there that leads to it.
  int attach_node(int rank) const { return router_of_rank_.at(rank); }
  int attach_port(int rank) const {
    return port_to(router_of_rank_.at(rank), endpoint_nodes_.at(rank));
  }
  const std::vector<int>& out_links(int node) const { return out_[node]; }
  const std::vector<int>& in_links(int node) const { return in_[node]; }
  std::vector<Link> links_of(const std::vector<int>& ids) const {
    std::vector<Link> out;
    for (int id : ids) out.push_back(links_[id]);
    return out;
  }

  // The output (index into out_links(node)) a packet at `node` takes towards endpoint `dst_rank`,
  // or -1 at that endpoint. `in_dim`: the dimension of the link it arrived on; at the destination's
  // router it leaves on that dimension's port to the NPU (every NIC port group receives its own
  // dimension).
  int next_port(int node, int dst_rank, int in_dim = 0) const;
  // The link a packet at `node` takes towards endpoint `dst_rank`, or -1 at that endpoint.
  int next_link(int node, int dst_rank, int in_dim = 0) const {
    const int port = next_port(node, dst_rank, in_dim);
    return port < 0 ? -1 : out_[node][port];
  }
  // Links on the path from one endpoint to another, in order.
  std::vector<int> path(int src_rank, int dst_rank) const;
  // Router-to-router links on that path (the links to and from endpoints not counted), walked
  // without building it: a traffic run asks for each measured packet.
  int router_hops(int src_rank, int dst_rank) const;
  // The narrowest link on that path, in bytes per cycle (what a message can stream at).
  double path_bytes_per_cycle(int src_rank, int dst_rank) const;
  // Whether in-network flows can run here: a tree of Fred switches.
  bool carries_flows() const { return spec_.shape == Shape::Tree && spec_.fred_switches; }
  // What switch `node` does with the units of `flow` that arrive on its input `in_port` (an index
  // into in_links(node)); only where carries_flows(). The flow's tree: each input's leaf reduces
  // the inputs under it; a flow whose ends share one leaf is multicast from there, any other goes
  // up uplink (key mod uplinks) to the spine, which reduces the leaves' sums and multicasts the
  // total down to every leaf with outputs, which multicasts it to them.
  FlowHop flow_hop(int node, int in_port, const FlowEnds& flow) const;
  // Every stage at which `flow` passes switch `node`, stage 0 first (none when it does not): what
  // a Fred switch's routing configurations are computed from ahead of the flow.
  std::vector<FlowPassage> flow_passages(int node, const FlowEnds& flow) const;
  // The narrowest link of that tree, in bytes per cycle (what the flow can stream at).
  double flow_bytes_per_cycle(const FlowEnds& flow) const;
  // Whether routes need two VC classes to stay deadlock-free (rings with multi-hop routes).
  bool needs_dateline_classes() const { return needs_dateline_; }

 private:
  int add_node(NodeKind kind, std::string name, int rank = -1, int x = -1, int y = -1);
  int add_link(int src, int dst, double gbps, double latency_ns, bool attach, int dim = 0);
  void add_duplex(int a, int b, double gbps, double latency_ns, bool attach, int dim = 0);
  int link_between(int src, int dst) const;
  // The leaves (blocks of a tree's first level) under a flow's inputs, and under its outputs,
  // each in ascending order; and the uplink (of each leaf) it takes.
  struct FlowLeaves {
    std::vector<int> inputs, outputs;
    int uplink = 0;
    bool one_leaf() const {
      return inputs.size() == 1 && outputs.size() == 1 && inputs[0] == outputs[0];
    }
  };
  FlowLeaves flow_leaves(const FlowEnds& flow) const;
  // Whether `flow` (under `leaves`) comes into switch `node` on input `in_port`.
  bool flow_enters(int node, int in_port, const FlowEnds& flow, const FlowLeaves& leaves) const;
  // The output of `node` whose link leads to node `next`, or -1.
  int port_to(int node, int next) const;
  // The step round a ring of `npus` from coordinate `from` towards `to`: +1 (up) or -1, the
  // shorter way, ties going up.
  static int ring_step(int from, int to, int npus);
  // Calls visit(link) for each link of the route from one endpoint to another, in order.
  template <typename Visit>
  void walk_route(int src_rank, int dst_rank, Visit&& visit) const;
  // next_port by the rules, worked out from the graph (the tables below are filled from it).
  int rule_port(int node, int dst_rank, int in_dim) const;
  // Fills coords_ and the routing tables of a network of dimensions.
  void tabulate_routes();
  // Fills the routing tables of a mesh.
  void tabulate_mesh_routes();
  void attach_npus_to_routers(const std::vector<int>& routers);
  void build_mesh();
  void build_dimensions();
  void build_tree();
  // Adds spec_.io_controllers endpoints after every other node, each joined to its switching node
  // in `hosts` (one per controller).
  void attach_io_controllers(const std::vector<int>& hosts);
  // A tree's uplink index for routes towards `rank` (d-mod-k: its place in its leaf, or for an I/O
  // controller its number, mod uplinks).
  int uplink_of(int rank) const;
  // The switch of dimension d's block that holds NPU `rank`.
  int switch_of(int d, int rank) const {
    return switches_[d][rank % stride_[d] + rank / (stride_[d] * spec_.dims[d].npus) * stride_[d]];
  }
  // Sorts every node's neighbours for port_to and checks that every route arrives.
  void index_neighbours();

  NetworkSpec spec_;
  std::vector<Node> nodes_;
  std::vector<Link> links_;
  std::vector<int> endpoint_nodes_;  // by rank: NPUs, then I/O controllers
  std::vector<int> router_of_rank_;  // the node an endpoint hangs off (its router, or its switch)
  std::vector<int> stride_;          // per dimension
  std::vector<std::vector<int>> switches_;  // per dimension, its switch per block (or none)
  std::vector<int> eject_port_;  // per router, its output to its NPU in dimension 0 (then 1, ...)
  int spine_ = -1;               // a tree's spine switch
  std::vector<std::vector<int>> out_, in_;
  // Per node, its out-neighbours by node id, each with the output that leads there.
  struct Neighbour {
    int node;
    int port;
  };
  std::vector<std::vector<Neighbour>> neighbours_;
  // A network of dimensions routes by small tables rather than arithmetic on every hop (a message
  // crosses several at message fidelity within one call; the divisions and the neighbour search
  // were a tenth of a 1,024-NPU run's instructions): each NPU's coordinates; per router, its
  // outputs in each dimension (a ring's up and down, a fully-connected block's per coordinate, its
  // switch); per switch, its output towards each coordinate. They are filled from rule_port, so
  // the rules stay the one definition, and grow with the links.
  struct Hop {
    NodeKind kind = NodeKind::Router;
    int rank = -1;   // NPUs and routers: the NPU's rank
    int dim = -1;    // switches: their dimension
    int table = -1;  // routers and switches: where their outputs start in route_ports_
  };
  std::vector<int> coords_;      // rank x dimensions + d
  std::vector<int> dim_offset_;  // per dimension, where its entries start in a router's table
  std::vector<Hop> hops_;        // per node (empty for a mesh)
  std::vector<int> route_ports_;
  // A mesh's tables (filled from rule_port too): per node, an endpoint's rank, or a router's
  // coordinates and its outputs towards x + 1, x - 1, y + 1 and y - 1; per endpoint, the router it
  // hangs off, that router's coordinates and its output down to the endpoint. At flit fidelity
  // every head crosses a router in every few cycles: the rules' neighbour search was a twentieth
  // of an 8x8 BookSim-configuration run's instructions (docs/performance.md).
  struct MeshHop {
    int rank = -1;  // endpoints
    int x = -1, y = -1;
    int towards[4] = {-1, -1, -1, -1};
  };
  struct MeshTarget {
    int router = -1;
    int x = -1, y = -1;
    int down = -1;
  };
  std::vector<MeshHop> mesh_hops_;
  std::vector<MeshTarget> mesh_targets_;  // by rank
  bool needs_dateline_ = false;
};

// The tree the routes from `members[root]` to the other members form, as each member's parent
// (a position in `members`; -1 at the root): a member's parent is a member that hangs off the
// last node of its route before its own node that holds any (the lowest such position other than
// the root, else the root); a member that hangs off the root's node has the root as parent. On a
// mesh under X-Y routing it is the X-Y multicast tree: along the root's row, then up and down each
// column. Throws std::invalid_argument if the routes form no tree.
std::vector<int> route_tree(const Topology& topology, const std::vector<int>& members, int root);

}  // namespace wafersim::topology
