// The topology graph and its routes.
#include <gtest/gtest.h>

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

TEST(Topology, InjectionDefaultsToTheSumOfTheRoutersLinks) {
  Topology t = Topology::build(spec(Shape::Mesh, 0, 3, 3));
  // The centre router has 4 links of 100 GB/s: its NPU injects at 400 GB/s (100 B/cycle at 1 GHz
  // each).
  int centre = t.npu_node(4);
  EXPECT_DOUBLE_EQ(t.links()[t.out_links(centre)[0]].bytes_per_cycle, 400.0);
  EXPECT_DOUBLE_EQ(t.links()[t.out_links(t.npu_node(0))[0]].bytes_per_cycle, 200.0);
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
