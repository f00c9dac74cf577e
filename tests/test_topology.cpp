// The topology graph and its routes.
#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>

#include "models/topology/topology.h"

using namespace wafersim::topology;

namespace {
NetworkSpec spec(Shape shape, int npus, int x = 0, int y = 0) {
  NetworkSpec s;
  s.shape = shape;
  s.npus = npus;
  s.mesh_x = x;
  s.mesh_y = y;
  s.link_bandwidth_gbps = 100;
  s.link_latency_ns = 10;
  return s;
}
}  // namespace

TEST(Topology, MeshRoutesDimensionOrder) {
  Topology t = Topology::build(spec(Shape::Mesh, 0, 5, 4));
  EXPECT_EQ(t.npu_count(), 20);
  // 2 attach links + Manhattan distance.
  for (int a = 0; a < 20; ++a)
    for (int b = 0; b < 20; ++b) {
      if (a == b) continue;
      int manhattan = std::abs(a % 5 - b % 5) + std::abs(a / 5 - b / 5);
      auto path = t.path(a, b);
      ASSERT_EQ(static_cast<int>(path.size()), manhattan + 2) << a << "->" << b;
      EXPECT_EQ(t.router_hops(a, b), manhattan) << a << "->" << b;  // the attach links left out
      // X first: once the path moves in Y it never moves in X again.
      bool in_y = false;
      for (size_t i = 1; i + 1 < path.size(); ++i) {
        const auto& l = t.links()[path[i]];
        bool y_move = t.nodes()[l.src].y != t.nodes()[l.dst].y;
        if (in_y) {
          EXPECT_TRUE(y_move);
        }
        in_y |= y_move;
      }
    }
  // 31 bidirectional mesh links (5x4: 4*4 + 5*3) and 20 attach pairs.
  EXPECT_EQ(t.links().size(), 2u * 31 + 2u * 20);
}

TEST(Topology, RingTakesTheShorterWay) {
  Topology t = Topology::build(spec(Shape::Ring, 8));
  EXPECT_EQ(t.path(0, 1).size(), 3u);
  EXPECT_EQ(t.path(0, 7).size(), 3u);  // one hop backwards, across the dateline
  EXPECT_EQ(t.path(0, 4).size(), 6u);  // 4 hops (tie: clockwise)
  EXPECT_EQ(t.path(2, 7).size(), 5u);  // 3 hops backwards
  EXPECT_TRUE(t.needs_dateline_classes());
}

TEST(Topology, SwitchIsTwoHopsAndFullyConnectedOne) {
  Topology sw = Topology::build(spec(Shape::Switch, 8));
  EXPECT_EQ(sw.path(3, 5).size(), 2u);
  Topology fc = Topology::build(spec(Shape::FullyConnected, 6));
  EXPECT_EQ(fc.path(0, 5).size(), 3u);
  EXPECT_EQ(fc.links().size(), 2u * 15 + 2u * 6);
}

// The Fred wafer's tree: 20 NPUs, 4 per leaf, 2 uplinks per leaf. Within a leaf a route is NPU ->
// leaf -> NPU; between leaves NPU -> leaf -> spine -> leaf -> NPU on uplink and downlink
// (destination's place in its leaf) mod 2, and its narrowest link is the uplink.
TEST(Topology, TreeGoesThroughTheLeafOrUpToTheSpine) {
  auto s = spec(Shape::Tree, 20);
  s.leaf_npus = 4;
  s.uplinks = 2;
  s.link_bandwidth_gbps = 3000;
  s.uplink_bandwidth_gbps = 1500;
  s.uplink_latency_ns = 30;
  const Topology t = Topology::build(s);
  EXPECT_EQ(t.npu_count(), 20);
  EXPECT_EQ(t.nodes().size(), 20u + 5 + 1);
  EXPECT_EQ(t.links().size(), 2u * 20 + 2u * 5 * 2);
  for (int a = 0; a < 20; ++a)
    for (int b = 0; b < 20; ++b) {
      if (a == b) continue;
      const auto path = t.path(a, b);
      const bool same_leaf = a / 4 == b / 4;
      ASSERT_EQ(path.size(), same_leaf ? 2u : 4u) << a << "->" << b;
      const auto& up = t.links()[path[0]];
      EXPECT_EQ(t.nodes()[up.dst].name, "leaf" + std::to_string(a / 4));
      EXPECT_EQ(t.nodes()[t.links()[path.back()].src].name, "leaf" + std::to_string(b / 4));
      if (!same_leaf) {
        const std::string k = ".u" + std::to_string(b % 4 % 2);
        EXPECT_EQ(t.links()[path[1]].name, "leaf" + std::to_string(a / 4) + "->spine" + k);
        EXPECT_EQ(t.links()[path[2]].name, "spine->leaf" + std::to_string(b / 4) + k);
        EXPECT_EQ(t.links()[path[1]].latency_cycles, 30u);
      }
      EXPECT_DOUBLE_EQ(t.path_bytes_per_cycle(a, b), same_leaf ? 3000.0 : 1500.0);
    }
  // One leaf: no spine.
  s.leaf_npus = 20;
  EXPECT_EQ(Topology::build(s).nodes().size(), 21u);
  // Bad trees.
  s.leaf_npus = 3;  // 20 NPUs do not split into leaves of 3
  EXPECT_THROW(Topology::build(s), std::invalid_argument);
  s.leaf_npus = 4;
  s.uplinks = 0;
  EXPECT_THROW(Topology::build(s), std::invalid_argument);
  s.uplinks = 1;
  s.uplink_bandwidth_gbps = 0;
  EXPECT_THROW(Topology::build(s), std::invalid_argument);
  EXPECT_EQ(shape_from_string("tree"), Shape::Tree);
}

// A flow's tree on a tree of Fred switches, by hand: 8 NPUs, 4 per leaf, 2 uplinks of half the
// NPU link's rate. Ports are found by their links' names, so the test does not lean on the order
// the builder makes them in.
TEST(Topology, FlowTreeReducesUnderLeavesAndMulticastsFromTheTop) {
  auto s = spec(Shape::Tree, 8);
  s.leaf_npus = 4;
  s.uplinks = 2;
  s.link_bandwidth_gbps = 3000;
  s.uplink_bandwidth_gbps = 1500;
  const FlowEnds all_reduce{{0, 1, 5}, {0, 1, 5}, 3};  // key 3: uplink 1
  EXPECT_FALSE(Topology::build(s).carries_flows());
  EXPECT_THROW(Topology::build(s).flow_hop(8, 0, all_reduce), std::logic_error);
  s.fred_switches = true;
  const Topology t = Topology::build(s);
  ASSERT_TRUE(t.carries_flows());
  auto node = [&](const std::string& name) {
    for (const auto& n : t.nodes())
      if (n.name == name) return n.id;
    ADD_FAILURE() << name;
    return 0;
  };
  EXPECT_EQ(t.nodes()[node("leaf0")].kind, NodeKind::FredSwitch);
  EXPECT_EQ(t.nodes()[node("spine")].kind, NodeKind::FredSwitch);
  auto in_port = [&](int n, const std::string& link) {
    const auto& ins = t.in_links(n);
    for (size_t i = 0; i < ins.size(); ++i)
      if (t.links()[ins[i]].name == link) return static_cast<int>(i);
    ADD_FAILURE() << link;
    return 0;
  };
  auto outs = [&](int n, const FlowHop& hop) {
    std::vector<std::string> names;
    for (int p : hop.ports) names.push_back(t.links()[t.out_links(n)[p]].name);
    return names;
  };
  using Names = std::vector<std::string>;
  const int leaf0 = node("leaf0"), leaf1 = node("leaf1"), spine = node("spine");
  // Up: leaf 0 sums NPUs 0 and 1, leaf 1 passes NPU 5 on; both on uplink 1.
  FlowHop h = t.flow_hop(leaf0, in_port(leaf0, "npu1->leaf0"), all_reduce);
  EXPECT_EQ(h.stage, 0);
  EXPECT_EQ(h.inputs, 2);
  EXPECT_EQ(outs(leaf0, h), Names{"leaf0->spine.u1"});
  h = t.flow_hop(leaf1, in_port(leaf1, "npu5->leaf1"), all_reduce);
  EXPECT_EQ(h.inputs, 1);
  EXPECT_EQ(outs(leaf1, h), Names{"leaf1->spine.u1"});
  // The spine sums the two leaves and sends the total down to both.
  h = t.flow_hop(spine, in_port(spine, "leaf1->spine.u1"), all_reduce);
  EXPECT_EQ(h.inputs, 2);
  EXPECT_EQ(outs(spine, h), (Names{"spine->leaf0.u1", "spine->leaf1.u1"}));
  // Down: each leaf multicasts the total to its outputs.
  h = t.flow_hop(leaf0, in_port(leaf0, "spine->leaf0.u1"), all_reduce);
  EXPECT_EQ(h.stage, 1);
  EXPECT_EQ(h.inputs, 1);
  EXPECT_EQ(outs(leaf0, h), (Names{"leaf0->npu0", "leaf0->npu1"}));
  h = t.flow_hop(leaf1, in_port(leaf1, "spine->leaf1.u1"), all_reduce);
  EXPECT_EQ(outs(leaf1, h), Names{"leaf1->npu5"});
  EXPECT_DOUBLE_EQ(t.flow_bytes_per_cycle(all_reduce), 1500.0);  // it crosses an uplink
  // A reduce within one leaf never leaves it, and streams at the NPU links' rate.
  const FlowEnds reduce{{0, 2, 3}, {1}, 0};
  h = t.flow_hop(leaf0, in_port(leaf0, "npu3->leaf0"), reduce);
  EXPECT_EQ(h.inputs, 3);
  EXPECT_EQ(outs(leaf0, h), Names{"leaf0->npu1"});
  EXPECT_DOUBLE_EQ(t.flow_bytes_per_cycle(reduce), 3000.0);
  // A multicast from NPU 4 to NPUs 0 and 7 goes up from its leaf (key 0: uplink 0).
  const FlowEnds multicast{{4}, {0, 7}, 0};
  h = t.flow_hop(leaf1, in_port(leaf1, "npu4->leaf1"), multicast);
  EXPECT_EQ(h.inputs, 1);
  EXPECT_EQ(outs(leaf1, h), Names{"leaf1->spine.u0"});
  h = t.flow_hop(spine, in_port(spine, "leaf1->spine.u0"), multicast);
  EXPECT_EQ(h.inputs, 1);
  EXPECT_EQ(outs(spine, h), (Names{"spine->leaf0.u0", "spine->leaf1.u0"}));
}

// The same tree, worked out ahead for a Fred switch's control unit: every stage at which a flow
// passes a switch, with the inputs it comes in on, each agreeing with flow_hop on that input.
TEST(Topology, FlowPassagesAreEachStageAFlowCrossesASwitch) {
  auto s = spec(Shape::Tree, 8);
  s.leaf_npus = 4;
  s.uplinks = 2;
  s.uplink_bandwidth_gbps = 50;
  s.fred_switches = true;
  const Topology t = Topology::build(s);
  auto node = [&](const std::string& name) {
    for (const auto& n : t.nodes())
      if (n.name == name) return n.id;
    ADD_FAILURE() << name;
    return 0;
  };
  using Names = std::vector<std::string>;
  // Per passage: its stage, the links it comes in on and the links it leaves on.
  auto passages = [&](const std::string& name, const FlowEnds& flow) {
    const int n = node(name);
    std::vector<std::tuple<int, Names, Names>> out;
    for (const FlowPassage& p : t.flow_passages(n, flow)) {
      Names in, to;
      for (int i : p.in_ports) {
        in.push_back(t.links()[t.in_links(n)[i]].name);
        const FlowHop hop = t.flow_hop(n, i, flow);
        EXPECT_EQ(hop.stage, p.hop.stage) << name;
        EXPECT_EQ(hop.ports, p.hop.ports) << name;
        EXPECT_EQ(hop.inputs, p.hop.inputs) << name;
      }
      for (int o : p.hop.ports) to.push_back(t.links()[t.out_links(n)[o]].name);
      out.emplace_back(p.hop.stage, in, to);
    }
    return out;
  };
  using Passages = std::vector<std::tuple<int, Names, Names>>;
  const FlowEnds all_reduce{{0, 1, 5}, {0, 1, 5}, 3};  // uplink 1
  EXPECT_EQ(passages("leaf0", all_reduce),
            (Passages{{0, {"npu0->leaf0", "npu1->leaf0"}, {"leaf0->spine.u1"}},
                      {1, {"spine->leaf0.u1"}, {"leaf0->npu0", "leaf0->npu1"}}}));
  EXPECT_EQ(passages("spine", all_reduce), (Passages{{0,
                                                      {"leaf0->spine.u1", "leaf1->spine.u1"},
                                                      {"spine->leaf0.u1", "spine->leaf1.u1"}}}));
  EXPECT_EQ(passages("leaf1", all_reduce), (Passages{{0, {"npu5->leaf1"}, {"leaf1->spine.u1"}},
                                                     {1, {"spine->leaf1.u1"}, {"leaf1->npu5"}}}));
  const FlowEnds reduce{{0, 2, 3}, {1}, 0};  // within leaf 0: it passes nothing else
  EXPECT_EQ(passages("leaf0", reduce),
            (Passages{{0, {"npu0->leaf0", "npu2->leaf0", "npu3->leaf0"}, {"leaf0->npu1"}}}));
  EXPECT_TRUE(passages("spine", reduce).empty());
  EXPECT_TRUE(passages("leaf1", reduce).empty());
  const FlowEnds multicast{{4}, {0, 7}, 0};  // leaf 0 only sees it on its way down
  EXPECT_EQ(passages("leaf0", multicast), (Passages{{1, {"spine->leaf0.u0"}, {"leaf0->npu0"}}}));
  EXPECT_EQ(passages("leaf1", multicast), (Passages{{0, {"npu4->leaf1"}, {"leaf1->spine.u0"}},
                                                    {1, {"spine->leaf1.u0"}, {"leaf1->npu7"}}}));
}

// grid_cycle: every cell once, every step (and the last back to the first) to a neighbour; none
// where the grid has no such cycle.
TEST(Topology, GridCycleStepsToANeighbourEveryTime) {
  for (auto [columns, rows] : std::vector<std::pair<int, int>>{
           {5, 4}, {4, 5}, {2, 2}, {2, 3}, {3, 2}, {6, 6}, {2, 1}, {1, 2}, {7, 2}}) {
    const std::vector<int> cycle = grid_cycle(columns, rows);
    ASSERT_EQ(static_cast<int>(cycle.size()), columns * rows) << columns << "x" << rows;
    std::vector<int> sorted = cycle;
    std::sort(sorted.begin(), sorted.end());
    for (int i = 0; i < columns * rows; ++i) EXPECT_EQ(sorted[i], i);
    for (size_t i = 0; i < cycle.size(); ++i) {
      const int a = cycle[i], b = cycle[(i + 1) % cycle.size()];
      const int steps = std::abs(a % columns - b % columns) + std::abs(a / columns - b / columns);
      EXPECT_EQ(steps, cycle.size() == 1 ? 0 : 1) << columns << "x" << rows << " at " << i;
    }
  }
  EXPECT_TRUE(grid_cycle(3, 3).empty());
  EXPECT_TRUE(grid_cycle(5, 1).empty());
  EXPECT_TRUE(grid_cycle(1, 3).empty());
}

TEST(Topology, InjectionDefaultsToTheSumOfTheRoutersLinks) {
  Topology t = Topology::build(spec(Shape::Mesh, 0, 3, 3));
  // The centre router has 4 links of 100 GB/s: its NPU injects at 400 GB/s (100 B/cycle at 1 GHz
  // each).
  int centre = t.endpoint_node(4);
  EXPECT_DOUBLE_EQ(t.links()[t.out_links(centre)[0]].bytes_per_cycle, 400.0);
  EXPECT_DOUBLE_EQ(t.links()[t.out_links(t.endpoint_node(0))[0]].bytes_per_cycle, 200.0);
}

TEST(Topology, BadSpecsAreRefused) {
  auto s = spec(Shape::Ring, 8);
  s.link_bandwidth_gbps = 0;
  EXPECT_THROW(Topology::build(s), std::invalid_argument);
  s.link_bandwidth_gbps = -5;
  EXPECT_THROW(Topology::build(s), std::invalid_argument);
  EXPECT_THROW(Topology::build(spec(Shape::Ring, 1)), std::invalid_argument);
  EXPECT_THROW(Topology::build(spec(Shape::Mesh, 0, 0, 3)), std::invalid_argument);
  EXPECT_THROW(shape_from_string("torus9d"), std::invalid_argument);
}

// Routes are rules, not a table: a 64x64 mesh and a 4,096-NPU ring route every sampled pair by
// the shortest way (Manhattan distance; the shorter way round), and a fully-connected network and
// a switch of 1,024 NPUs in one and two hops.
TEST(Topology, RoutesAtScaleFollowTheRules) {
  Topology mesh = Topology::build(spec(Shape::Mesh, 0, 64, 64));
  Topology ring = Topology::build(spec(Shape::Ring, 4096));
  Topology fc = Topology::build(spec(Shape::FullyConnected, 1024));
  Topology sw = Topology::build(spec(Shape::Switch, 1024));
  for (int k = 0; k < 200; ++k) {
    const int a = (k * 7919) % 4096, b = (k * 104729 + 13) % 4096;
    if (a == b) continue;
    const int manhattan = std::abs(a % 64 - b % 64) + std::abs(a / 64 - b / 64);
    EXPECT_EQ(static_cast<int>(mesh.path(a, b).size()), manhattan + 2) << a << "->" << b;
    const int cw = ((b - a) % 4096 + 4096) % 4096;
    EXPECT_EQ(static_cast<int>(ring.path(a, b).size()), std::min(cw, 4096 - cw) + 2)
        << a << "->" << b;
    EXPECT_EQ(fc.path(a % 1024, (a + 1 + b % 1023) % 1024).size(), 3u);
    EXPECT_EQ(sw.path(a % 1024, (a + 1 + b % 1023) % 1024).size(), 2u);
  }
}

namespace {
NetworkSpec dimensions(std::vector<Dimension> dims) {
  NetworkSpec s;
  s.shape = Shape::Dimensions;
  s.dims = std::move(dims);
  return s;
}
}  // namespace

// Ring 4 x FullyConnected 4 x Switch 4 (64 NPUs, dimension 0 fastest): a route leaves its NPU,
// corrects the dimensions in order (the shorter way round the ring, one FC hop, up to the switch
// and down), and enters the destination NPU; its links' dimensions never decrease.
TEST(Topology, ThreeDimensionalRoutesCorrectOneDimensionAfterTheOther) {
  Topology t = Topology::build(dimensions({{Shape::Ring, 4, 100, 10, 1},
                                           {Shape::FullyConnected, 4, 50, 10, 1},
                                           {Shape::Switch, 4, 25, 10, 1}}));
  ASSERT_EQ(t.npu_count(), 64);
  EXPECT_EQ(t.coordinate(27, 0), 3);  // 27 = 3 + 2 x 4 + 1 x 16
  EXPECT_EQ(t.coordinate(27, 1), 2);
  EXPECT_EQ(t.coordinate(27, 2), 1);
  for (int a = 0; a < 64; ++a)
    for (int b = 0; b < 64; ++b) {
      if (a == b) continue;
      const int cw = ((t.coordinate(b, 0) - t.coordinate(a, 0)) % 4 + 4) % 4;
      const int hops = std::min(cw, 4 - cw) + (t.coordinate(a, 1) != t.coordinate(b, 1)) +
                       2 * (t.coordinate(a, 2) != t.coordinate(b, 2));
      const auto path = t.path(a, b);
      ASSERT_EQ(static_cast<int>(path.size()), hops + 2) << a << "->" << b;
      EXPECT_TRUE(t.links()[path.front()].attach);
      EXPECT_TRUE(t.links()[path.back()].attach);
      for (size_t i = 2; i + 1 < path.size(); ++i)
        EXPECT_LE(t.links()[path[i - 1]].dim, t.links()[path[i]].dim) << a << "->" << b;
    }
  // Per-NPU bandwidth: both ring neighbours, three FC peers, the switch.
  EXPECT_DOUBLE_EQ(t.npu_bandwidth_gbps(0), 200);
  EXPECT_DOUBLE_EQ(t.npu_bandwidth_gbps(1), 150);
  EXPECT_DOUBLE_EQ(t.npu_bandwidth_gbps(2), 25);
}

// 4,096 NPUs in Ring 16 x FullyConnected 16 x Switch 16: the graph has exactly the nodes and links
// the dimensions call for (no table), and routes follow the rules at that scale.
TEST(Topology, FourThousandNpusInThreeDimensions) {
  Topology t = Topology::build(dimensions({{Shape::Ring, 16, 100, 10, 1},
                                           {Shape::FullyConnected, 16, 50, 10, 1},
                                           {Shape::Switch, 16, 25, 10, 1}}));
  ASSERT_EQ(t.npu_count(), 4096);
  // NPUs, their routers, one switch per block of 16 in dimension 2.
  EXPECT_EQ(t.nodes().size(), 4096u + 4096u + 256u);
  // Directed links: a ring's 2 per NPU, an FC block's 16 x 15, a switch's 2 per NPU, and an
  // NPU-router pair per dimension.
  EXPECT_EQ(t.links().size(), 4096u * 2 + 256u * 240 + 4096u * 2 + 4096u * 6);
  for (int k = 0; k < 200; ++k) {
    const int a = (k * 7919) % 4096, b = (k * 104729 + 13) % 4096;
    if (a == b) continue;
    const int cw = ((t.coordinate(b, 0) - t.coordinate(a, 0)) % 16 + 16) % 16;
    const int hops = std::min(cw, 16 - cw) + (t.coordinate(a, 1) != t.coordinate(b, 1)) +
                     2 * (t.coordinate(a, 2) != t.coordinate(b, 2));
    EXPECT_EQ(static_cast<int>(t.path(a, b).size()), hops + 2) << a << "->" << b;
  }
}

// I/O controllers are endpoints after the NPUs: on a mesh half along the north edge and half
// along the south, spread over the columns; on a tree, controller i on leaf i mod leaves. Routes
// reach them and leave them like any endpoint's.
TEST(Topology, IoControllersHangOffTheEdgesAndTheLeaves) {
  NetworkSpec mesh = spec(Shape::Mesh, 0, 5, 4);
  mesh.io_controllers = 18;
  mesh.io_bandwidth_gbps = 128;
  Topology t = Topology::build(mesh);
  EXPECT_EQ(t.npu_count(), 20);
  EXPECT_EQ(t.endpoint_count(), 38);
  // 9 per edge over 5 columns: column j * 5 / 9 of row 0, then of row 3.
  const int columns[9] = {0, 0, 1, 1, 2, 2, 3, 3, 4};
  for (int i = 0; i < 18; ++i) {
    const int rank = 20 + i;
    EXPECT_TRUE(t.is_io_controller(rank));
    const Node& io = t.nodes()[t.endpoint_node(rank)];
    EXPECT_EQ(io.kind, NodeKind::IoController);
    EXPECT_EQ(io.rank, rank);
    EXPECT_EQ(io.name, "io" + std::to_string(i));
    const Node& host = t.nodes()[t.attach_node(rank)];
    EXPECT_EQ(host.x, columns[i % 9]) << io.name;
    EXPECT_EQ(host.y, i < 9 ? 0 : 3) << io.name;
    const Link& up = t.links()[t.out_links(t.endpoint_node(rank))[0]];
    EXPECT_DOUBLE_EQ(up.bytes_per_cycle, 128);
    EXPECT_TRUE(up.attach);
    // Controller -> its router -> X-Y -> NPU 19 (4, 3): Manhattan distance + 2.
    EXPECT_EQ(static_cast<int>(t.path(rank, 19).size()),
              std::abs(host.x - 4) + std::abs(host.y - 3) + 2);
    EXPECT_EQ(t.path(19, rank).size(), t.path(rank, 19).size());
  }
  NetworkSpec tree = spec(Shape::Tree, 20);
  tree.leaf_npus = 4;
  tree.uplinks = 4;
  tree.uplink_bandwidth_gbps = 100;
  tree.io_controllers = 18;
  tree.io_bandwidth_gbps = 128;
  Topology f = Topology::build(tree);
  for (int i = 0; i < 18; ++i) {
    EXPECT_EQ(f.nodes()[f.attach_node(20 + i)].x, i % 5);
    EXPECT_EQ(f.path(20 + i, (i % 5) * 4 + 1).size(), 2u);    // its leaf's NPU: up and down
    EXPECT_EQ(f.path(20 + i, ((i + 1) % 5) * 4).size(), 4u);  // another leaf's: via the spine
  }
  NetworkSpec ring = spec(Shape::Ring, 8);
  ring.io_controllers = 2;
  ring.io_bandwidth_gbps = 128;
  EXPECT_THROW(Topology::build(ring), std::invalid_argument);
  mesh.io_bandwidth_gbps = 0;
  EXPECT_THROW(Topology::build(mesh), std::invalid_argument);
}

// The tree of a controller's routes on the 5x4 mesh is its X-Y multicast tree: the NPU beside it
// first, along that row, then up and down each column, every link between two rows carrying it
// once.
TEST(Topology, RouteTreeOfAMeshIsTheXyMulticastTree) {
  NetworkSpec mesh = spec(Shape::Mesh, 0, 5, 4);
  mesh.io_controllers = 18;
  mesh.io_bandwidth_gbps = 128;
  Topology t = Topology::build(mesh);
  std::vector<int> members;
  for (int r = 0; r < 20; ++r) members.push_back(r);
  members.push_back(22);  // io2, on column 1 of the north edge
  const int root = 20;
  const std::vector<int> parent = route_tree(t, members, root);
  ASSERT_EQ(parent.size(), 21u);
  EXPECT_EQ(parent[root], -1);
  for (int r = 0; r < 20; ++r) {
    const int x = r % 5, y = r / 5;
    // Row 0 hangs off its neighbour towards column 1 (NPU 1 off the controller); the other rows
    // off the NPU above them.
    const int expected = y > 0 ? r - 5 : x == 1 ? root : x < 1 ? r + 1 : r - 1;
    EXPECT_EQ(parent[r], expected) << "NPU " << r;
  }
  // A member beside the root's NPU on the same router relays for it; members in a ring have the
  // previous one on the shorter way round as parent.
  Topology ring = Topology::build(spec(Shape::Ring, 8));
  const std::vector<int> all{0, 1, 2, 3, 4, 5, 6, 7};
  const std::vector<int> ring_parent = route_tree(ring, all, 0);
  EXPECT_EQ(ring_parent, (std::vector<int>{-1, 0, 1, 2, 3, 6, 7, 0}));
}
