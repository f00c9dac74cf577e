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
  }
  return "?";
}

Shape shape_from_string(const std::string& text) {
  if (text == "mesh") return Shape::Mesh;
  if (text == "ring" || text == "Ring") return Shape::Ring;
  if (text == "fully_connected" || text == "FullyConnected") return Shape::FullyConnected;
  if (text == "switch" || text == "Switch") return Shape::Switch;
  throw std::invalid_argument("unknown topology '" + text +
                              "' (expected mesh, ring, fully_connected or switch)");
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

int Topology::add_link(int src, int dst, double gbps, double latency_ns, bool attach) {
  Link l;
  l.id = static_cast<int>(links_.size());
  l.src = src;
  l.dst = dst;
  l.bytes_per_cycle = gbps / spec_.clock_ghz;  // GB/s / (Gcycles/s) = bytes per cycle
  l.latency_cycles = static_cast<uint32_t>(std::llround(latency_ns * spec_.clock_ghz));
  l.attach = attach;
  l.name = nodes_[src].name + "->" + nodes_[dst].name;
  links_.push_back(l);
  out_[src].push_back(l.id);
  in_[dst].push_back(l.id);
  return l.id;
}

void Topology::add_duplex(int a, int b, double gbps, double latency_ns, bool attach) {
  add_link(a, b, gbps, latency_ns, attach);
  add_link(b, a, gbps, latency_ns, attach);
}

int Topology::link_between(int src, int dst) const {
  for (int l : out_[src])
    if (links_[l].dst == dst) return l;
  return -1;
}

void Topology::attach_npus_to_routers(const std::vector<int>& routers) {
  for (size_t r = 0; r < routers.size(); ++r) {
    int router = routers[r];
    double injection = spec_.injection_bandwidth_gbps;
    if (injection <= 0) {
      injection = 0;
      for (int l : out_[router]) injection += links_[l].bytes_per_cycle * spec_.clock_ghz;
    }
    add_duplex(npu_nodes_[r], router, injection, spec_.injection_latency_ns, true);
    router_of_rank_[r] = router;
  }
}

Topology Topology::build(const NetworkSpec& spec) {
  if (spec.clock_ghz <= 0) throw std::invalid_argument("clock_ghz must be positive");
  if (!(spec.link_bandwidth_gbps > 0))
    throw std::invalid_argument("link_bandwidth_gbps must be positive, got " +
                                std::to_string(spec.link_bandwidth_gbps));
  if (spec.link_latency_ns < 0) throw std::invalid_argument("link_latency_ns must not be negative");
  if (spec.injection_bandwidth_gbps < 0)
    throw std::invalid_argument("injection_bandwidth_gbps must not be negative");
  if (spec.injection_latency_ns < 0)
    throw std::invalid_argument("injection_latency_ns must not be negative");

  Topology t;
  t.spec_ = spec;
  int npus = spec.shape == Shape::Mesh ? spec.mesh_x * spec.mesh_y : spec.npus;
  if (spec.shape == Shape::Mesh && (spec.mesh_x < 1 || spec.mesh_y < 1))
    throw std::invalid_argument("mesh needs mesh_x >= 1 and mesh_y >= 1");
  const int min_npus = spec.shape == Shape::Switch ? 1 : 2;  // one NPU on a switch: a single device
  if (npus < min_npus)
    throw std::invalid_argument("npus: this topology needs at least " + std::to_string(min_npus) +
                                " NPUs, got " + std::to_string(npus));
  t.spec_.npus = npus;
  t.router_of_rank_.assign(npus, -1);
  for (int r = 0; r < npus; ++r) {
    int x = spec.shape == Shape::Mesh ? r % spec.mesh_x : -1;
    int y = spec.shape == Shape::Mesh ? r / spec.mesh_x : -1;
    t.npu_nodes_.push_back(t.add_node(NodeKind::Npu, "npu" + std::to_string(r), r, x, y));
  }

  const double bw = spec.link_bandwidth_gbps, lat = spec.link_latency_ns;
  std::vector<int> routers;
  switch (spec.shape) {
    case Shape::Mesh: {
      for (int r = 0; r < npus; ++r)
        routers.push_back(t.add_node(NodeKind::Router, "router" + std::to_string(r), -1,
                                     r % spec.mesh_x, r / spec.mesh_x));
      for (int y = 0; y < spec.mesh_y; ++y)
        for (int x = 0; x < spec.mesh_x; ++x) {
          int here = routers[y * spec.mesh_x + x];
          if (x + 1 < spec.mesh_x)
            t.add_duplex(here, routers[y * spec.mesh_x + x + 1], bw, lat, false);
          if (y + 1 < spec.mesh_y)
            t.add_duplex(here, routers[(y + 1) * spec.mesh_x + x],
                         spec.link_bandwidth_y_gbps > 0 ? spec.link_bandwidth_y_gbps : bw, lat,
                         false);
        }
      t.attach_npus_to_routers(routers);
      break;
    }
    case Shape::Ring: {
      for (int r = 0; r < npus; ++r)
        routers.push_back(t.add_node(NodeKind::Router, "router" + std::to_string(r), -1, r));
      if (npus == 2) {
        t.add_duplex(routers[0], routers[1], bw, lat, false);
      } else {
        for (int r = 0; r < npus; ++r)
          t.add_duplex(routers[r], routers[(r + 1) % npus], bw, lat, false);
        t.links_[t.link_between(routers[npus - 1], routers[0])].dateline = true;
        t.links_[t.link_between(routers[0], routers[npus - 1])].dateline = true;
        t.needs_dateline_ = npus > 3;  // with 3 NPUs every route is one hop
      }
      t.attach_npus_to_routers(routers);
      break;
    }
    case Shape::FullyConnected: {
      for (int r = 0; r < npus; ++r)
        routers.push_back(t.add_node(NodeKind::Router, "router" + std::to_string(r), -1, r));
      for (int a = 0; a < npus; ++a)
        for (int b = a + 1; b < npus; ++b) t.add_duplex(routers[a], routers[b], bw, lat, false);
      t.attach_npus_to_routers(routers);
      break;
    }
    case Shape::Switch: {
      int sw = t.add_node(NodeKind::Router, "switch", -1);
      for (int r = 0; r < npus; ++r) {
        t.add_duplex(t.npu_nodes_[r], sw, bw, lat, false);
        t.router_of_rank_[r] = sw;
      }
      break;
    }
  }
  t.index_neighbours();
  return t;
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
  // A check of the rules, in time linear in NPUs x hops: every NPU reaches its successor and its
  // mirror image (path() throws on a hop without a route or a loop).
  const int npus = npu_count();
  for (int r = 0; r < npus; ++r) {
    path((r + 1) % npus, r);
    path(npus - 1 - r, r);
  }
}

int Topology::port_to(int node, int next) const {
  const auto& list = neighbours_[node];
  auto it = std::lower_bound(list.begin(), list.end(), next,
                             [](const Neighbour& a, int id) { return a.node < id; });
  return it != list.end() && it->node == next ? it->port : -1;
}

int Topology::next_port(int node, int dst_rank) const {
  const Node& n = nodes_[node];
  if (n.kind == NodeKind::Npu) return n.rank == dst_rank ? -1 : 0;  // its one port
  const int dst_router = router_of_rank_[dst_rank];
  if (node == dst_router) return port_to(node, npu_nodes_[dst_rank]);
  const Node& target = nodes_[dst_router];
  const int npus = npu_count();
  switch (spec_.shape) {
    case Shape::Mesh: {  // dimension order: X first, then Y
      int x = n.x, y = n.y;
      if (target.x != x)
        x += target.x > x ? 1 : -1;
      else
        y += target.y > y ? 1 : -1;
      return port_to(node, npus + y * spec_.mesh_x + x);
    }
    case Shape::Ring: {  // the shorter way; ties go clockwise
      const int cw = ((target.x - n.x) % npus + npus) % npus;
      const int step = cw <= npus - cw ? 1 : -1;
      return port_to(node, npus + ((n.x + step) % npus + npus) % npus);
    }
    case Shape::FullyConnected:
      return port_to(node, dst_router);
    case Shape::Switch:
      break;  // the switch is every NPU's router: handled above
  }
  return -1;
}

std::vector<int> Topology::path(int src_rank, int dst_rank) const {
  std::vector<int> links;
  int node = npu_node(src_rank), dst = npu_node(dst_rank);
  while (node != dst) {
    int l = next_link(node, dst_rank);
    if (l < 0)
      throw std::logic_error("no route from " + nodes_[node].name + " to npu" +
                             std::to_string(dst_rank));
    links.push_back(l);
    node = links_[l].dst;
    if (links.size() > links_.size()) throw std::logic_error("routing loop");
  }
  return links;
}

double Topology::path_bytes_per_cycle(int src_rank, int dst_rank) const {
  double narrowest = std::numeric_limits<double>::infinity();
  int node = npu_node(src_rank), hops = 0;
  const int dst = npu_node(dst_rank);
  while (node != dst) {
    const Link& l = links_[next_link(node, dst_rank)];
    narrowest = std::min(narrowest, l.bytes_per_cycle);
    node = l.dst;
    if (++hops > static_cast<int>(links_.size())) throw std::logic_error("routing loop");
  }
  return narrowest;
}

}  // namespace wafersim::topology
