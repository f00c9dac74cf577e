#include "models/topology/topology.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace wafersim::topology {

const char* to_string(Shape shape) {
  switch (shape) {
    case Shape::Mesh:
      return "mesh";
    case Shape::Ring:
      return "ring";
    case Shape::FullyConnected:
      return "fully_connected";
    case Shape::Switch:
      return "switch";
    case Shape::Dimensions:
      return "dimensions";
    case Shape::Tree:
      return "tree";
  }
  return "?";
}

Shape shape_from_string(const std::string& text) {
  if (text == "mesh") return Shape::Mesh;
  if (text == "ring" || text == "Ring") return Shape::Ring;
  if (text == "fully_connected" || text == "FullyConnected") return Shape::FullyConnected;
  if (text == "switch" || text == "Switch") return Shape::Switch;
  if (text == "dimensions") return Shape::Dimensions;
  if (text == "tree") return Shape::Tree;
  throw std::invalid_argument(
      "unknown topology '" + text +
      "' (expected mesh, ring, fully_connected, switch, dimensions or tree)");
}

int Topology::add_node(NodeKind kind, std::string name, int rank, int x, int y) {
  Node n;
  n.id = static_cast<int>(nodes_.size());
  n.kind = kind;
  n.name = std::move(name);
  n.rank = rank;
  n.x = x;
  n.y = y;
  nodes_.push_back(n);
  out_.emplace_back();
  in_.emplace_back();
  return n.id;
}

int Topology::add_link(int src, int dst, double gbps, double latency_ns, bool attach, int dim) {
  Link l;
  l.id = static_cast<int>(links_.size());
  l.src = src;
  l.dst = dst;
  l.bytes_per_cycle = gbps / spec_.clock_ghz;  // GB/s / (Gcycles/s) = bytes per cycle
  l.latency_cycles = static_cast<uint32_t>(std::llround(latency_ns * spec_.clock_ghz));
  l.attach = attach;
  l.dim = dim;
  l.name = nodes_[src].name + "->" + nodes_[dst].name;
  // An NPU has a port per dimension: its links to its router are told apart by their dimension.
  if (attach && spec_.dims.size() > 1) l.name += ".d" + std::to_string(dim);
  links_.push_back(l);
  out_[src].push_back(l.id);
  in_[dst].push_back(l.id);
  return l.id;
}

void Topology::add_duplex(int a, int b, double gbps, double latency_ns, bool attach, int dim) {
  add_link(a, b, gbps, latency_ns, attach, dim);
  add_link(b, a, gbps, latency_ns, attach, dim);
}

int Topology::link_between(int src, int dst) const {
  for (int l : out_[src])
    if (links_[l].dst == dst) return l;
  return -1;
}

void Topology::attach_npus_to_routers(const std::vector<int>& routers) {
  const int dims = std::max<int>(1, static_cast<int>(spec_.dims.size()));
  eject_port_.assign(nodes_.size(), -1);
  for (size_t r = 0; r < routers.size(); ++r) {
    const int router = routers[r];
    // The router's outputs to its NPU follow each other, dimension 0 first.
    eject_port_[router] = static_cast<int>(out_[router].size());
    for (int d = 0; d < dims; ++d) {
      double injection = spec_.injection_bandwidth_gbps;
      if (injection <= 0) {
        injection = 0;
        for (int l : out_[router])
          if (!links_[l].attach && links_[l].dim == d)
            injection += links_[l].bytes_per_cycle * spec_.clock_ghz;
      }
      add_duplex(endpoint_nodes_[r], router, injection, spec_.injection_latency_ns, true, d);
    }
    router_of_rank_[r] = router;
  }
}

namespace {

void check_dimension(const Dimension& d, size_t index) {
  const std::string key = "dimension " + std::to_string(index) + ": ";
  if (d.shape != Shape::Ring && d.shape != Shape::FullyConnected && d.shape != Shape::Switch)
    throw std::invalid_argument(key + "shape must be Ring, FullyConnected or Switch, not " +
                                to_string(d.shape));
  const int min_npus = d.shape == Shape::Switch ? 1 : 2;  // one NPU on a switch: a single device
  if (d.npus < min_npus)
    throw std::invalid_argument(key + "npus: a " + to_string(d.shape) + " needs at least " +
                                std::to_string(min_npus) + " NPUs, got " + std::to_string(d.npus));
  if (!(d.link_bandwidth_gbps > 0))
    throw std::invalid_argument(key + "link_bandwidth_gbps must be positive, got " +
                                std::to_string(d.link_bandwidth_gbps));
  if (d.link_latency_ns < 0)
    throw std::invalid_argument(key + "link_latency_ns must not be negative");
  if (d.links < 1)
    throw std::invalid_argument(key + "links must be at least 1, got " + std::to_string(d.links));
}

}  // namespace

Topology Topology::build(const NetworkSpec& spec) {
  if (spec.clock_ghz <= 0) throw std::invalid_argument("clock_ghz must be positive");
  if (spec.injection_bandwidth_gbps < 0)
    throw std::invalid_argument("injection_bandwidth_gbps must not be negative");
  if (spec.injection_latency_ns < 0)
    throw std::invalid_argument("injection_latency_ns must not be negative");
  Topology t;
  t.spec_ = spec;
  if (spec.shape == Shape::Dimensions) {
    if (spec.dims.empty()) throw std::invalid_argument("dimensions: at least one is needed");
  } else {
    if (!(spec.link_bandwidth_gbps > 0))
      throw std::invalid_argument("link_bandwidth_gbps must be positive, got " +
                                  std::to_string(spec.link_bandwidth_gbps));
    if (spec.link_latency_ns < 0)
      throw std::invalid_argument("link_latency_ns must not be negative");
    // A ring, fully-connected or switch network is one dimension.
    t.spec_.dims.clear();
    if (spec.shape != Shape::Mesh && spec.shape != Shape::Tree)
      t.spec_.dims.push_back(
          {spec.shape, spec.npus, spec.link_bandwidth_gbps, spec.link_latency_ns, 1});
  }
  if (spec.io_controllers < 0)
    throw std::invalid_argument("io_controllers must not be negative, got " +
                                std::to_string(spec.io_controllers));
  if (spec.io_controllers > 0) {
    if (spec.shape != Shape::Mesh && spec.shape != Shape::Tree)
      throw std::invalid_argument(
          "io_controllers: only a mesh or a tree has I/O controllers, not a " +
          std::string(to_string(spec.shape)));
    if (!(spec.io_bandwidth_gbps > 0))
      throw std::invalid_argument("io_bandwidth_gbps: missing (" +
                                  std::to_string(spec.io_controllers) +
                                  " I/O controllers need their links' GB/s)");
  }
  if (spec.shape == Shape::Mesh) {
    t.build_mesh();
  } else if (spec.shape == Shape::Tree) {
    t.build_tree();
  } else {
    double npus = 1;
    for (size_t d = 0; d < t.spec_.dims.size(); ++d) {
      check_dimension(t.spec_.dims[d], d);
      npus *= t.spec_.dims[d].npus;
    }
    if (npus > std::numeric_limits<int32_t>::max() / 4)
      throw std::invalid_argument("dimensions: " + std::to_string(npus) + " NPUs are too many");
    t.spec_.npus = static_cast<int>(npus);
    t.build_dimensions();
  }
  t.index_neighbours();
  return t;
}

void Topology::build_mesh() {
  const NetworkSpec& spec = spec_;
  if (spec.mesh_x < 1 || spec.mesh_y < 1)
    throw std::invalid_argument("mesh needs mesh_x >= 1 and mesh_y >= 1");
  const int npus = spec.mesh_x * spec.mesh_y;
  if (npus < 2)
    throw std::invalid_argument("npus: this topology needs at least 2 NPUs, got " +
                                std::to_string(npus));
  spec_.npus = npus;
  router_of_rank_.assign(npus, -1);
  for (int r = 0; r < npus; ++r)
    endpoint_nodes_.push_back(
        add_node(NodeKind::Npu, "npu" + std::to_string(r), r, r % spec.mesh_x, r / spec.mesh_x));
  const double bw = spec.link_bandwidth_gbps, lat = spec.link_latency_ns;
  const double bw_y = spec.link_bandwidth_y_gbps > 0 ? spec.link_bandwidth_y_gbps : bw;
  std::vector<int> routers;
  for (int r = 0; r < npus; ++r)
    routers.push_back(add_node(NodeKind::Router, "router" + std::to_string(r), -1, r % spec.mesh_x,
                               r / spec.mesh_x));
  for (int y = 0; y < spec.mesh_y; ++y)
    for (int x = 0; x < spec.mesh_x; ++x) {
      const int here = routers[y * spec.mesh_x + x];
      if (x + 1 < spec.mesh_x) add_duplex(here, routers[y * spec.mesh_x + x + 1], bw, lat, false);
      if (y + 1 < spec.mesh_y)
        add_duplex(here, routers[(y + 1) * spec.mesh_x + x], bw_y, lat, false);
    }
  attach_npus_to_routers(routers);
  // Half the I/O controllers along the north edge (row 0), the rest along the south edge, each
  // edge's spread evenly over its columns.
  const int columns = spec.mesh_x, rows = spec.mesh_y, north = (spec.io_controllers + 1) / 2;
  std::vector<int> hosts;
  for (int i = 0; i < spec.io_controllers; ++i) {
    const bool on_north = i < north;
    const int j = on_north ? i : i - north, k = on_north ? north : spec.io_controllers - north;
    hosts.push_back(routers[(on_north ? 0 : rows - 1) * columns + j * columns / k]);
  }
  attach_io_controllers(hosts);
}

void Topology::attach_io_controllers(const std::vector<int>& hosts) {
  const double latency = spec_.io_latency_ns < 0 ? spec_.link_latency_ns : spec_.io_latency_ns;
  for (size_t i = 0; i < hosts.size(); ++i) {
    const int rank = spec_.npus + static_cast<int>(i);
    const int io = add_node(NodeKind::IoController, "io" + std::to_string(i), rank,
                            nodes_[hosts[i]].x, nodes_[hosts[i]].y);
    endpoint_nodes_.push_back(io);
    router_of_rank_.push_back(hosts[i]);
    add_duplex(io, hosts[i], spec_.io_bandwidth_gbps, latency, true);
  }
}

int Topology::uplink_of(int rank) const {
  const int index = rank < spec_.npus ? rank % spec_.leaf_npus : rank - spec_.npus;
  return index % spec_.uplinks;
}

// NPUs first (ids 0..N-1), then, unless the only dimension is a switch, one router per NPU (ids
// N..2N-1) with its links in every dimension, dimension by dimension, then the attach links. A
// network of one dimension is laid out as the ring, fully-connected and switch networks always
// were.
void Topology::build_dimensions() {
  const int npus = spec_.npus;
  const auto& dims = spec_.dims;
  stride_.assign(dims.size(), 1);
  for (size_t d = 1; d < dims.size(); ++d) stride_[d] = stride_[d - 1] * dims[d - 1].npus;
  router_of_rank_.assign(npus, -1);
  for (int r = 0; r < npus; ++r)
    endpoint_nodes_.push_back(add_node(NodeKind::Npu, "npu" + std::to_string(r), r));
  const bool direct = dims.size() == 1 && dims[0].shape == Shape::Switch;
  std::vector<int> routers;
  if (!direct)
    for (int r = 0; r < npus; ++r)
      routers.push_back(add_node(NodeKind::Router, "router" + std::to_string(r), -1,
                                 coordinate(r, 0), dims.size() > 1 ? coordinate(r, 1) : -1));
  // The node that NPU r's traffic in a dimension starts from.
  auto entry = [&](int r) { return direct ? endpoint_nodes_[r] : routers[r]; };
  switches_.assign(dims.size(), {});
  for (size_t di = 0; di < dims.size(); ++di) {
    const int d = static_cast<int>(di);
    const Dimension& dim = dims[d];
    const double bw = dim.link_bandwidth_gbps * dim.links, lat = dim.link_latency_ns;
    const int n = dim.npus, blocks = npus / n;
    for (int b = 0; b < blocks; ++b) {
      // The block's lowest rank: b's digits, with a 0 inserted at dimension d.
      const int base = b % stride_[d] + b / stride_[d] * stride_[d] * n;
      auto member = [&](int i) { return base + i * stride_[d]; };
      switch (dim.shape) {
        case Shape::Ring:
          if (n == 2) {
            add_duplex(entry(member(0)), entry(member(1)), bw, lat, false, d);
            break;
          }
          for (int i = 0; i < n; ++i)
            add_duplex(entry(member(i)), entry(member((i + 1) % n)), bw, lat, false, d);
          links_[link_between(entry(member(n - 1)), entry(member(0)))].dateline = true;
          links_[link_between(entry(member(0)), entry(member(n - 1)))].dateline = true;
          if (n > 3) needs_dateline_ = true;  // with 3 NPUs every route is one hop
          break;
        case Shape::FullyConnected:
          for (int i = 0; i < n; ++i)
            for (int j = i + 1; j < n; ++j)
              add_duplex(entry(member(i)), entry(member(j)), bw, lat, false, d);
          break;
        case Shape::Switch: {
          const std::string name = dims.size() == 1
                                       ? std::string("switch")
                                       : "switch_d" + std::to_string(d) + "_" + std::to_string(b);
          const int sw = add_node(NodeKind::Switch, name, -1, b);
          nodes_[sw].dim = d;
          nodes_[sw].first_rank = base;
          switches_[d].push_back(sw);
          for (int i = 0; i < n; ++i) {
            add_duplex(entry(member(i)), sw, bw, lat, false, d);
            if (direct) router_of_rank_[member(i)] = sw;
          }
          break;
        }
        default:
          break;
      }
    }
  }
  if (!direct) attach_npus_to_routers(routers);
}

// NPUs first (ids 0..N-1), then the leaf switches, then the spine (when there are two leaves or
// more). An NPU's port is its link to its leaf, as on a network of one switch.
void Topology::build_tree() {
  const NetworkSpec& spec = spec_;
  if (spec.npus < 2)
    throw std::invalid_argument("npus: a tree needs at least 2 NPUs, got " +
                                std::to_string(spec.npus));
  if (spec.leaf_npus < 1)
    throw std::invalid_argument("leaf_npus: missing (a tree needs the NPUs under each leaf)");
  if (spec.npus % spec.leaf_npus != 0)
    throw std::invalid_argument("leaf_npus: must divide npus (" + std::to_string(spec.npus) +
                                ") into whole leaves, got " + std::to_string(spec.leaf_npus));
  const int leaves = spec.npus / spec.leaf_npus;
  if (leaves > 1 && !(spec.uplink_bandwidth_gbps > 0))
    throw std::invalid_argument("uplink_bandwidth_gbps: missing (a tree of " +
                                std::to_string(leaves) + " leaves needs its uplinks' GB/s)");
  if (spec.uplinks < 1)
    throw std::invalid_argument("uplinks must be at least 1, got " + std::to_string(spec.uplinks));
  const double uplink_latency =
      spec.uplink_latency_ns < 0 ? spec.link_latency_ns : spec.uplink_latency_ns;
  router_of_rank_.assign(spec.npus, -1);
  for (int r = 0; r < spec.npus; ++r)
    endpoint_nodes_.push_back(add_node(NodeKind::Npu, "npu" + std::to_string(r), r));
  const NodeKind kind = spec.fred_switches ? NodeKind::FredSwitch : NodeKind::Switch;
  std::vector<int> leaf(leaves);
  for (int i = 0; i < leaves; ++i) {
    leaf[i] = add_node(kind, "leaf" + std::to_string(i), -1, i);
    nodes_[leaf[i]].first_rank = i * spec.leaf_npus;
  }
  for (int r = 0; r < spec.npus; ++r) {
    router_of_rank_[r] = leaf[r / spec.leaf_npus];
    add_duplex(endpoint_nodes_[r], router_of_rank_[r], spec.link_bandwidth_gbps,
               spec.link_latency_ns, false);
  }
  // A leaf's outputs: its NPUs in order, then its uplinks, then its I/O controllers; the spine's:
  // each leaf's downlinks in turn (rule_port counts on this order).
  if (leaves > 1) {
    spine_ = add_node(kind, "spine");
    for (int l : leaf)
      for (int k = 0; k < spec.uplinks; ++k)
        for (auto [from, to] : {std::pair{l, spine_}, std::pair{spine_, l}}) {
          const int id = add_link(from, to, spec.uplink_bandwidth_gbps, uplink_latency, false);
          if (spec.uplinks > 1) links_[id].name += ".u" + std::to_string(k);
        }
  }
  std::vector<int> hosts;
  for (int i = 0; i < spec.io_controllers; ++i) hosts.push_back(leaf[i % leaves]);
  attach_io_controllers(hosts);
}

std::vector<int> Topology::extents(const std::vector<int>& ranks) const {
  std::vector<int> out(spec_.dims.size(), 0);
  for (size_t d = 0; d < spec_.dims.size(); ++d) {
    std::vector<bool> seen(static_cast<size_t>(spec_.dims[d].npus), false);
    for (int r : ranks) {
      const auto c = static_cast<size_t>(coordinate(r, static_cast<int>(d)));
      out[d] += seen[c] ? 0 : 1;
      seen[c] = true;
    }
  }
  return out;
}

double Topology::npu_bandwidth_gbps(int d) const {
  const Dimension& dim = spec_.dims.at(d);
  const double link = dim.link_bandwidth_gbps * dim.links;
  switch (dim.shape) {
    case Shape::Ring:
      return dim.npus == 2 ? link : 2 * link;
    case Shape::FullyConnected:
      return (dim.npus - 1) * link;
    default:
      return link;
  }
}

int Topology::first_differing_dim(int a, int b) const {
  for (size_t d = 0; d < stride_.size(); ++d)
    if (coordinate(a, static_cast<int>(d)) != coordinate(b, static_cast<int>(d)))
      return static_cast<int>(d);
  return -1;
}

void Topology::index_neighbours() {
  neighbours_.assign(nodes_.size(), {});
  for (const Node& n : nodes_) {
    auto& list = neighbours_[n.id];
    for (size_t p = 0; p < out_[n.id].size(); ++p)
      list.push_back({links_[out_[n.id][p]].dst, static_cast<int>(p)});
    std::sort(list.begin(), list.end(),
              [](const Neighbour& a, const Neighbour& b) { return a.node < b.node; });
  }
  if (!spec_.dims.empty()) tabulate_routes();
  if (spec_.shape == Shape::Mesh) tabulate_mesh_routes();
  // A check of the rules, in time linear in NPUs x hops: every NPU reaches its successor and its
  // mirror image (path() throws on a hop without a route or a loop).
  const int npus = npu_count();
  for (int r = 0; r < npus; ++r) {
    path((r + 1) % npus, r);
    path(npus - 1 - r, r);
  }
  for (int io = npus; io < endpoint_count(); ++io) {
    path(io, io % npus);
    path(io % npus, io);
  }
}

int Topology::port_to(int node, int next) const {
  const auto& list = neighbours_[node];
  auto it = std::lower_bound(list.begin(), list.end(), next,
                             [](const Neighbour& a, int id) { return a.node < id; });
  return it != list.end() && it->node == next ? it->port : -1;
}

int Topology::ring_step(int from, int to, int npus) {
  const int up = ((to - from) % npus + npus) % npus;
  return up <= npus - up ? 1 : -1;  // the shorter way; ties go up
}

int Topology::next_port(int node, int dst_rank, int in_dim) const {
  if (!mesh_hops_.empty()) {
    const MeshHop& hop = mesh_hops_[node];
    if (hop.rank >= 0) return hop.rank == dst_rank ? -1 : 0;  // an endpoint's one port
    const MeshTarget& to = mesh_targets_[dst_rank];
    if (to.router == node) return to.down;
    return hop.towards[to.x != hop.x ? (to.x > hop.x ? 0 : 1) : (to.y > hop.y ? 2 : 3)];
  }
  if (hops_.empty()) return rule_port(node, dst_rank, in_dim);
  const Hop& hop = hops_[node];
  switch (hop.kind) {
    case NodeKind::Npu:
      if (hop.rank == dst_rank) return -1;
      return out_[node].size() == 1 ? 0 : first_differing_dim(hop.rank, dst_rank);
    case NodeKind::Router: {
      if (hop.rank == dst_rank) {
        const int last = static_cast<int>(spec_.dims.size()) - 1;
        return eject_port_[node] + std::min(std::max(in_dim, 0), last);
      }
      const int d = first_differing_dim(hop.rank, dst_rank);
      const int* ports = &route_ports_[hop.table + dim_offset_[d]];
      const Dimension& dim = spec_.dims[d];
      switch (dim.shape) {
        case Shape::Ring:
          return ports[ring_step(coordinate(hop.rank, d), coordinate(dst_rank, d), dim.npus) > 0
                           ? 0
                           : 1];
        case Shape::FullyConnected:
          return ports[coordinate(dst_rank, d)];
        default:
          return ports[0];
      }
    }
    case NodeKind::Switch:
      return route_ports_[hop.table + coordinate(dst_rank, hop.dim)];
    default:  // no Fred switches or I/O controllers in a network of dimensions
      break;
  }
  return -1;
}

void Topology::tabulate_routes() {
  const int npus = npu_count();
  const size_t dims = spec_.dims.size();
  coords_.resize(static_cast<size_t>(npus) * dims);
  for (int r = 0; r < npus; ++r)
    for (size_t d = 0; d < dims; ++d)
      coords_[static_cast<size_t>(r) * dims + d] =
          r / stride_[d] % spec_.dims[d].npus;  // coordinate() reads this table from now on
  // A router's outputs per dimension: a ring's up and down, a fully-connected one's per
  // coordinate, a switch's one (so the tables grow with the links, as the graph does).
  auto entries = [](const Dimension& dim) {
    return dim.shape == Shape::Ring ? 2 : dim.shape == Shape::FullyConnected ? dim.npus : 1;
  };
  dim_offset_.assign(dims, 0);
  for (size_t d = 1; d < dims; ++d)
    dim_offset_[d] = dim_offset_[d - 1] + entries(spec_.dims[d - 1]);
  std::vector<Hop> hops(nodes_.size());
  std::vector<int> ports;
  for (const Node& n : nodes_) {
    Hop& hop = hops[n.id];
    hop.kind = n.kind;
    hop.rank = n.kind == NodeKind::Router ? n.id - npus : n.rank;  // routers follow the NPUs
    hop.dim = n.dim;
    if (n.kind == NodeKind::Router) {
      hop.table = static_cast<int>(ports.size());
      for (size_t d = 0; d < dims; ++d) {
        const Dimension& dim = spec_.dims[d];
        const int here = coordinate(hop.rank, static_cast<int>(d));
        // The coordinate a route towards each entry aims at: a ring's next one up and next one
        // down, each coordinate of a fully-connected dimension, any other of a switch's.
        std::vector<int> towards;
        if (dim.shape == Shape::Ring)
          towards = {(here + 1) % dim.npus, (here + dim.npus - 1) % dim.npus};
        else if (dim.shape == Shape::FullyConnected)
          for (int c = 0; c < dim.npus; ++c) towards.push_back(c);
        else
          towards = {(here + 1) % dim.npus};
        for (int c : towards) {
          const int dst = with_coordinate(hop.rank, static_cast<int>(d), c);
          ports.push_back(dst == hop.rank ? -1 : rule_port(n.id, dst, 0));
        }
      }
    } else if (n.kind == NodeKind::Switch) {
      hop.table = static_cast<int>(ports.size());
      for (int c = 0; c < spec_.dims[n.dim].npus; ++c)
        ports.push_back(rule_port(n.id, with_coordinate(n.first_rank, n.dim, c), 0));
    }
  }
  route_ports_ = std::move(ports);
  hops_ = std::move(hops);
}

void Topology::tabulate_mesh_routes() {
  const int columns = spec_.mesh_x, rows = spec_.mesh_y;
  std::vector<MeshHop> hops(nodes_.size());
  for (const Node& n : nodes_) {
    MeshHop& hop = hops[n.id];
    if (is_endpoint(n.kind)) {
      hop.rank = n.rank;
      continue;
    }
    hop.x = n.x;
    hop.y = n.y;
    // Towards the NPU of each neighbouring router (NPU r hangs off the router at r's place).
    const std::pair<int, int> neighbours[4] = {
        {n.x + 1, n.y}, {n.x - 1, n.y}, {n.x, n.y + 1}, {n.x, n.y - 1}};
    for (int k = 0; k < 4; ++k) {
      const auto [x, y] = neighbours[k];
      if (x >= 0 && x < columns && y >= 0 && y < rows)
        hop.towards[k] = rule_port(n.id, y * columns + x, 0);
    }
  }
  std::vector<MeshTarget> targets(endpoint_nodes_.size());
  for (size_t rank = 0; rank < targets.size(); ++rank) {
    const Node& router = nodes_[router_of_rank_[rank]];
    targets[rank] = {router.id, router.x, router.y,
                     rule_port(router.id, static_cast<int>(rank), 0)};
  }
  mesh_hops_ = std::move(hops);
  mesh_targets_ = std::move(targets);
}

int Topology::rule_port(int node, int dst_rank, int in_dim) const {
  const Node& n = nodes_[node];
  if (spec_.shape == Shape::Mesh) {
    if (is_endpoint(n.kind)) return n.rank == dst_rank ? -1 : 0;  // its one port
    const int dst_router = router_of_rank_[dst_rank];
    if (node == dst_router) return port_to(node, endpoint_nodes_[dst_rank]);
    const Node& target = nodes_[dst_router];
    // Dimension order: X first, then Y.
    int x = n.x, y = n.y;
    if (target.x != x)
      x += target.x > x ? 1 : -1;
    else
      y += target.y > y ? 1 : -1;
    return port_to(node, npu_count() + y * spec_.mesh_x + x);
  }
  if (spec_.shape == Shape::Tree) {
    if (is_endpoint(n.kind)) return n.rank == dst_rank ? -1 : 0;
    const int k = uplink_of(dst_rank);
    if (node == spine_) return nodes_[router_of_rank_[dst_rank]].x * spec_.uplinks + k;
    if (node == router_of_rank_[dst_rank])  // down to the endpoint
      return dst_rank < spec_.npus ? dst_rank % spec_.leaf_npus
                                   : port_to(node, endpoint_nodes_[dst_rank]);
    return spec_.leaf_npus + k;  // up
  }
  const int npus = npu_count();
  switch (n.kind) {
    case NodeKind::Npu:  // the port of the dimension the route leaves on
      if (n.rank == dst_rank) return -1;
      return out_[node].size() == 1 ? 0 : first_differing_dim(n.rank, dst_rank);
    case NodeKind::Router: {
      const int here = node - npus;
      if (here == dst_rank) {
        const int last = static_cast<int>(spec_.dims.size()) - 1;
        return eject_port_[node] + std::min(std::max(in_dim, 0), last);
      }
      // Dimension order: the lowest dimension in which the destination differs.
      const int d = first_differing_dim(here, dst_rank);
      const Dimension& dim = spec_.dims[d];
      const int c = coordinate(here, d), target = coordinate(dst_rank, d);
      switch (dim.shape) {
        case Shape::Ring: {
          const int step = ring_step(c, target, dim.npus);
          return port_to(
              node, npus + with_coordinate(here, d, ((c + step) % dim.npus + dim.npus) % dim.npus));
        }
        case Shape::FullyConnected:
          return port_to(node, npus + with_coordinate(here, d, target));
        case Shape::Switch:
          return port_to(node, switch_of(d, here));
        default:
          return -1;
      }
    }
    case NodeKind::Switch: {  // down to the block's member with the destination's coordinate
      const int member = with_coordinate(n.first_rank, n.dim, coordinate(dst_rank, n.dim));
      return port_to(node, router_of_rank_[member] == node ? endpoint_nodes_[member]
                                                           : router_of_rank_[member]);
    }
    default:  // no Fred switches or I/O controllers in a network of dimensions
      break;
  }
  return -1;
}

template <typename Visit>
void Topology::walk_route(int src_rank, int dst_rank, Visit&& visit) const {
  int node = endpoint_node(src_rank), in_dim = 0, hops = 0;
  const int dst = endpoint_node(dst_rank);
  while (node != dst) {
    const int l = next_link(node, dst_rank, in_dim);
    if (l < 0)
      throw std::logic_error("no route from " + nodes_[node].name + " to " + nodes_[dst].name);
    visit(links_[l], l);
    node = links_[l].dst;
    in_dim = links_[l].dim;
    if (++hops > static_cast<int>(links_.size())) throw std::logic_error("routing loop");
  }
}

std::vector<int> Topology::path(int src_rank, int dst_rank) const {
  std::vector<int> links;
  walk_route(src_rank, dst_rank, [&](const Link&, int l) { links.push_back(l); });
  return links;
}

int Topology::router_hops(int src_rank, int dst_rank) const {
  int hops = 0;
  walk_route(src_rank, dst_rank, [&](const Link& l, int) { hops += l.attach ? 0 : 1; });
  return hops;
}

double Topology::path_bytes_per_cycle(int src_rank, int dst_rank) const {
  double narrowest = std::numeric_limits<double>::infinity();
  walk_route(src_rank, dst_rank,
             [&](const Link& l, int) { narrowest = std::min(narrowest, l.bytes_per_cycle); });
  return narrowest;
}

// The flow's tree, by the same rules as unicast routes: a leaf's outputs are its NPUs in order,
// then its uplinks; the spine's are each leaf's downlinks in turn (build_tree).
Topology::FlowLeaves Topology::flow_leaves(const FlowEnds& flow) const {
  auto leaves_of = [&](const std::vector<int>& ranks) {
    std::vector<int> out;
    for (int r : ranks) out.push_back(nodes_[router_of_rank_.at(r)].x);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  };
  return {leaves_of(flow.inputs), leaves_of(flow.outputs),
          static_cast<int>(flow.key % static_cast<uint64_t>(spec_.uplinks))};
}

FlowHop Topology::flow_hop(int node, int in_port, const FlowEnds& flow) const {
  if (!carries_flows()) throw std::logic_error("flow_hop: no Fred switches in this network");
  const int per_leaf = spec_.leaf_npus, uplinks = spec_.uplinks;
  const FlowLeaves leaves = flow_leaves(flow);
  const int k = leaves.uplink;
  auto leaf_of = [&](int rank) { return nodes_[router_of_rank_.at(rank)].x; };
  FlowHop hop;
  if (node == spine_) {
    hop.inputs = static_cast<int>(leaves.inputs.size());
    for (int l : leaves.outputs) hop.ports.push_back(l * uplinks + k);
    return hop;
  }
  const int leaf = nodes_.at(node).x;
  auto multicast_here = [&]() {
    for (int r : flow.outputs)
      if (leaf_of(r) == leaf) hop.ports.push_back(attach_port(r));
  };
  if (links_[in_[node].at(in_port)].src == spine_) {  // the total, on its way down
    hop.stage = 1;
    hop.inputs = 1;
    multicast_here();
    return hop;
  }
  for (int r : flow.inputs) hop.inputs += leaf_of(r) == leaf ? 1 : 0;
  if (leaves.one_leaf())
    multicast_here();
  else
    hop.ports.push_back(per_leaf + k);
  return hop;
}

bool Topology::flow_enters(int node, int in_port, const FlowEnds& flow,
                           const FlowLeaves& leaves) const {
  const int link = in_[node].at(static_cast<size_t>(in_port));
  const int src = links_[link].src;
  const auto has = [](const std::vector<int>& v, int x) {
    return std::binary_search(v.begin(), v.end(), x);
  };
  if (node == spine_)  // a leaf's sum, up the flow's uplink
    return nodes_[src].kind == NodeKind::FredSwitch && !leaves.one_leaf() &&
           has(leaves.inputs, nodes_[src].x) && link == out_[src][spec_.leaf_npus + leaves.uplink];
  if (src == spine_)  // the total, down the flow's uplink
    return !leaves.one_leaf() && has(leaves.outputs, nodes_[node].x) &&
           link == out_[spine_][nodes_[node].x * spec_.uplinks + leaves.uplink];
  const int rank = nodes_[src].rank;
  return rank >= 0 && std::find(flow.inputs.begin(), flow.inputs.end(), rank) != flow.inputs.end();
}

std::vector<FlowPassage> Topology::flow_passages(int node, const FlowEnds& flow) const {
  if (!carries_flows()) throw std::logic_error("flow_passages: no Fred switches in this network");
  const FlowLeaves leaves = flow_leaves(flow);
  std::vector<FlowPassage> passages;
  for (int p = 0; p < static_cast<int>(in_[node].size()); ++p) {
    if (!flow_enters(node, p, flow, leaves)) continue;
    FlowHop hop = flow_hop(node, p, flow);
    auto it = std::find_if(passages.begin(), passages.end(),
                           [&](const FlowPassage& f) { return f.hop.stage == hop.stage; });
    if (it == passages.end()) {
      passages.push_back({{p}, std::move(hop)});
    } else {
      it->in_ports.push_back(p);
    }
  }
  std::sort(passages.begin(), passages.end(),
            [](const FlowPassage& a, const FlowPassage& b) { return a.hop.stage < b.hop.stage; });
  return passages;
}

double Topology::flow_bytes_per_cycle(const FlowEnds& flow) const {
  double narrowest = std::numeric_limits<double>::infinity();
  auto take = [&](int node, int port) {
    narrowest = std::min(narrowest, links_[out_[node][port]].bytes_per_cycle);
  };
  for (int r : flow.inputs) take(endpoint_node(r), 0);
  for (int r : flow.outputs) take(router_of_rank_[r], attach_port(r));
  if (spine_ >= 0) {
    const int k = static_cast<int>(flow.key % static_cast<uint64_t>(spec_.uplinks));
    const int first = router_of_rank_[flow.inputs.at(0)];
    const bool spans = std::any_of(flow.inputs.begin(), flow.inputs.end(),
                                   [&](int r) { return router_of_rank_[r] != first; }) ||
                       std::any_of(flow.outputs.begin(), flow.outputs.end(),
                                   [&](int r) { return router_of_rank_[r] != first; });
    if (spans) take(first, spec_.leaf_npus + k);  // every uplink of a tree is alike
  }
  return narrowest;
}

std::vector<int> grid_cycle(int columns, int rows) {
  if (columns < 1 || rows < 1) return {};
  if (columns * rows <= 2) {  // one cell, or two neighbours: there and back
    std::vector<int> cells(static_cast<size_t>(columns * rows));
    for (size_t i = 0; i < cells.size(); ++i) cells[i] = static_cast<int>(i);
    return cells;
  }
  if (columns == 1 || rows == 1 || (columns % 2 == 1 && rows % 2 == 1)) return {};
  if (rows % 2 == 1) {  // columns even: walk the transposed grid and map its cells back
    std::vector<int> cells = grid_cycle(rows, columns);
    for (int& c : cells) c = c / rows + columns * (c % rows);
    return cells;
  }
  std::vector<int> cells;
  for (int x = 0; x < columns; ++x) cells.push_back(x);
  for (int y = 1; y < rows; ++y)  // row 1 right to left, row 2 left to right, ...
    for (int k = 1; k < columns; ++k) cells.push_back((y % 2 == 1 ? columns - k : k) + columns * y);
  for (int y = rows - 1; y >= 1; --y) cells.push_back(columns * y);
  return cells;
}

std::vector<int> route_tree(const Topology& t, const std::vector<int>& members, int root) {
  const int n = static_cast<int>(members.size());
  if (root < 0 || root >= n) throw std::invalid_argument("route_tree: root outside the group");
  // Per node, the positions hanging off it, lowest first, the root after them all (an I/O
  // controller's one link feeds the NPU beside it, which relays).
  std::vector<std::vector<int>> hosted(t.nodes().size());
  for (int p = 0; p < n; ++p)
    if (p != root) hosted[t.attach_node(members[p])].push_back(p);
  hosted[t.attach_node(members[root])].push_back(root);
  std::vector<int> parent(static_cast<size_t>(n), -1);
  for (int p = 0; p < n; ++p) {
    if (p == root) continue;
    const int own = t.attach_node(members[p]);
    parent[p] = root;
    if (own == t.attach_node(members[root])) continue;
    for (int l : t.path(members[root], members[p])) {
      const int node = t.links()[l].dst;
      if (node == own) break;
      if (!hosted[node].empty()) parent[p] = hosted[node].front();
    }
  }
  // Every chain of parents must reach the root within n steps.
  for (int p = 0; p < n; ++p) {
    int q = p, steps = 0;
    while (q != root && steps++ <= n) q = parent[q];
    if (q != root)
      throw std::invalid_argument("route_tree: the routes from rank " +
                                  std::to_string(members[root]) + " form no tree over the group");
  }
  return parent;
}

}  // namespace wafersim::topology
