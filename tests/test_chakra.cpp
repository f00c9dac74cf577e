// Chakra ET reader and writer against traces written by other tools (tests/data, see its README).
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>

#include "models/common/error.h"
#include "tb/chakra/generator.h"
#include "tb/chakra/trace.h"
#include "tb/chakra/workload.h"
#include "tests/testing.h"

using namespace wafersim;
using namespace wafersim::chakra;
using wafersim::testing::source;

TEST(Chakra, ReadsAstraSimMicrobenchmark) {
  Trace t =
      read_trace(source("tests/data/astra-sim-examples/workload/microbenchmarks/all_reduce/"
                        "8npus_1MB/all_reduce.3.et"));
  EXPECT_EQ(t.version, "0.0.4");
  ASSERT_EQ(t.nodes.size(), 1u);
  EXPECT_EQ(t.nodes[0].kind, NodeKind::Collective);
  EXPECT_EQ(*t.nodes[0].comm_type, static_cast<int64_t>(CollectiveKind::AllReduce));
  EXPECT_EQ(*t.nodes[0].comm_size, 1048576u);
}

TEST(Chakra, ReadsStgTraceWithSparseIdsAndInt32Flags) {
  Trace t = read_trace(source("tests/data/chakra-traces/stg/gpt_tp4_L8/workload.0.et"));
  ASSERT_GT(t.nodes.size(), 10u);
  size_t comp = 0, coll = 0;
  std::set<uint64_t> ids;
  for (size_t i = 0; i < t.nodes.size(); ++i) {
    const auto& n = t.nodes[i];
    if (n.kind == NodeKind::Compute) {
      ++comp;
      EXPECT_TRUE(n.num_ops.has_value()) << n.id;
    }
    if (n.kind == NodeKind::Collective) {
      ++coll;
      EXPECT_TRUE(n.comm_size.has_value());
    }
    ids.insert(n.id);
  }
  EXPECT_GT(comp, 0u);
  EXPECT_GT(coll, 0u);
  EXPECT_EQ(ids.size(), t.nodes.size()) << "ids are unique";
  EXPECT_GT(*ids.rbegin(), t.nodes.size()) << "ids are sparse";
}

TEST(Chakra, ReadsPyTorchCapture) {
  Trace t = read_trace(source("tests/data/chakra-traces/pytorch/chakra.0.et"));
  EXPECT_EQ(t.nodes.size(), 3664u);
  size_t coll = 0;
  for (const auto& n : t.nodes) coll += n.kind == NodeKind::Collective;
  EXPECT_EQ(coll, 21u);
}

TEST(Chakra, WriteThenReadRoundTrips) {
  std::string dir = wafersim::testing::temp_dir("rt");
  Trace t;
  TraceNode a;
  a.id = 7;
  a.name = "gemm";
  a.kind = NodeKind::Compute;
  a.duration_micros = 12;
  a.num_ops = 1000;
  a.tensor_size = 64;
  TraceNode b;
  b.id = 3;
  b.name = "ar";
  b.kind = NodeKind::Collective;
  b.comm_type = 0;
  b.comm_size = 1 << 20;
  b.data_deps = {7};
  b.pg_name = "2";
  t.nodes = {a, b};
  write_trace(dir + "/w.0.et", t);
  Trace r = read_trace(dir + "/w.0.et");
  ASSERT_EQ(r.nodes.size(), 2u);
  EXPECT_EQ(r.nodes[0].id, 7u);
  EXPECT_EQ(*r.nodes[0].num_ops, 1000u);
  EXPECT_EQ(r.nodes[0].duration_micros, 12u);
  EXPECT_EQ(r.nodes[1].data_deps, std::vector<uint64_t>{7});
  EXPECT_EQ(r.nodes[1].pg_name, "2");
  EXPECT_EQ(*r.nodes[1].comm_size, 1u << 20);
}

TEST(Chakra, ReadsGzippedTrace) {
  std::string dir = wafersim::testing::temp_dir("gz");
  std::string plain = source(
      "tests/data/astra-sim-examples/workload/microbenchmarks/all_gather/4npus_1MB/"
      "all_gather.0.et");
  std::ifstream in(plain, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  gzFile gz = gzopen((dir + "/g.0.et").c_str(), "wb");
  gzwrite(gz, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(gz);
  Trace t = read_trace(dir + "/g.0.et");
  ASSERT_EQ(t.nodes.size(), 1u);
  EXPECT_EQ(*t.nodes[0].comm_type, static_cast<int64_t>(CollectiveKind::AllGather));
}

TEST(Chakra, PyTorchCtrlDepsAreReportedNotHung) {
  WorkloadOptions o;
  o.prefix = source("tests/data/chakra-traces/pytorch/chakra");
  o.ranks = 1;
  try {
    load_workload(o);
    FAIL() << "expected the dangling or cyclic ctrl_deps to be reported";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("chakra.0.et"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--deps data"), std::string::npos) << e.what();
  }
  o.dependencies = DependencyMode::DataOnly;
  Workload w = load_workload(o);
  EXPECT_EQ(w.node_count(), 3664u);
}

// A PyTorch capture declares its process groups in a metadata node; pg_name refers to them.
TEST(Chakra, ProcessGroupsFromPyTorchMetadataNode) {
  std::string dir = wafersim::testing::temp_dir("pg");
  for (int r = 0; r < 4; ++r) {
    Trace t;
    TraceNode meta;
    meta.id = 1;
    meta.name = "## process_group:init ##";
    meta.kind = NodeKind::Metadata;
    meta.inputs_values =
        "['[{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", \"ranks\": [], \"group_size\": 4}, "
        "{\"pg_name\": \"7\", \"pg_desc\": \"tp\", \"ranks\": [1, 3], \"group_size\": 2}]']";
    t.nodes.push_back(meta);
    if (r == 1 || r == 3) {
      TraceNode ar;
      ar.id = 2;
      ar.kind = NodeKind::Collective;
      ar.comm_type = 0;
      ar.comm_size = 4096;
      ar.pg_name = "7";
      ar.data_deps = {1};
      t.nodes.push_back(ar);
    }
    write_trace(dir + "/pt." + std::to_string(r) + ".et", t);
  }
  WorkloadOptions o;
  o.prefix = dir + "/pt";
  o.ranks = 4;
  Workload w = load_workload(o);
  EXPECT_EQ(w.groups.at("7"), (std::vector<int>{1, 3}));
  EXPECT_EQ(w.groups.at("0").size(), 4u);
  auto r = wafersim::testing::run_report("--platform " + source("configs/ring_8npus.yaml") +
                                         " --set network.npus=4 --workload " + o.prefix);
  ASSERT_EQ(r["collectives"].size(), 1u);
  EXPECT_EQ(r["collectives"][0]["group"], "7");
  EXPECT_EQ(r["collectives"][0]["ranks"], 2);
  EXPECT_EQ(r["collectives"][0]["finished_ranks"], 2);

  TraceNode bad;
  bad.id = 9;
  bad.name = "## process_group:init ##";
  bad.kind = NodeKind::Metadata;
  bad.inputs_values = "['[{\"pg_name\": \"1\", \"ranks\": [0, 12]}]']";
  try {
    process_groups_of(bad, 4, "x.et");
    FAIL() << "expected a bad rank to be reported";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 12 is outside"), std::string::npos) << e.what();
  }
}

// The Fred paper's placement of MP(2)-DP(5)-PP(2): MP groups on consecutive ranks, then PP, then
// DP, so rank = mp + 2 x (pp + 2 x dp); and the workload the generator writes for one kind.
TEST(Generator, ParallelGroupsFollowTheFredPlacement) {
  const Parallelism p = parallelism_from_string("2,5,2");
  EXPECT_EQ(p.ranks(), 20);
  using Groups = std::vector<std::vector<int>>;
  Groups mp, pp, dp;
  for (int g = 0; g < 10; ++g) mp.push_back({2 * g, 2 * g + 1});
  for (int d = 0; d < 5; ++d)
    for (int m = 0; m < 2; ++m) pp.push_back({4 * d + m, 4 * d + m + 2});
  for (int first = 0; first < 4; ++first)
    dp.push_back({first, first + 4, first + 8, first + 12, first + 16});
  std::sort(pp.begin(), pp.end());
  EXPECT_EQ(parallel_groups(p, GroupKind::Mp), mp);
  EXPECT_EQ(parallel_groups(p, GroupKind::Pp), pp);
  EXPECT_EQ(parallel_groups(p, GroupKind::Dp), dp);
  for (const char* bad : {"2,5", "2,x,2", "0,5,2", "2,5,2,1", ""})
    EXPECT_THROW(parallelism_from_string(bad), std::invalid_argument) << bad;

  MicrobenchmarkSpec spec;
  spec.ranks = 8;
  EXPECT_THROW(apply_parallelism(spec, {"2,5,2", "dp"}, true), std::invalid_argument);  // 8 != 20
  EXPECT_THROW(apply_parallelism(spec, {"2,5,2", ""}, false), std::invalid_argument);
  EXPECT_THROW(apply_parallelism(spec, {"2,5,2", "tp"}, false), std::invalid_argument);
  apply_parallelism(spec, {"2,5,2", "dp"}, false);
  EXPECT_EQ(spec.ranks, 20);
  const std::string prefix = wafersim::testing::temp_dir("parallel") + "/dp";
  write_microbenchmark(prefix, spec);
  WorkloadOptions o;
  o.prefix = prefix;
  o.ranks = 20;
  const Workload w = load_workload(o);
  EXPECT_EQ(w.groups.size(), 4u);
  for (int r = 0; r < 20; ++r) {
    const auto& node = w.ranks[r].nodes.front();
    EXPECT_EQ(w.members(node.pg_name), dp[r % 4]) << "rank " << r;
  }
}

// Traffic classes by the Fred paper's placement rule: under MP(2)-DP(5)-PP(2) (MP groups on
// consecutive NPUs, strides 1, PP 2, DP 4) the rule gives each group its kind; with no pipeline
// (MP(4)-DP(5)), the strided groups are DP; every NPU at once is MP (the MP(20) case). A group the
// comm-group file classes keeps its class, in either form of the file.
TEST(Workload, TrafficClassesFollowThePlacementRuleUnlessNamed) {
  const Parallelism p = parallelism_from_string("2,5,2");
  std::map<std::string, std::vector<int>> groups;
  std::map<std::string, hw::TrafficClass> expected{{"0", hw::TrafficClass::Mp}};
  const std::pair<GroupKind, hw::TrafficClass> kinds[] = {{GroupKind::Mp, hw::TrafficClass::Mp},
                                                          {GroupKind::Dp, hw::TrafficClass::Dp},
                                                          {GroupKind::Pp, hw::TrafficClass::Pp}};
  for (const auto& [kind, traffic] : kinds)
    for (const auto& g : parallel_groups(p, kind)) {
      const std::string name = std::to_string(groups.size() + 1);
      groups[name] = g;
      expected[name] = traffic;
    }
  EXPECT_EQ(inferred_classes(groups), expected);
  const Parallelism no_pp = parallelism_from_string("4,5,1");
  std::map<std::string, std::vector<int>> two{{"mp", parallel_groups(no_pp, GroupKind::Mp)[0]},
                                              {"dp", parallel_groups(no_pp, GroupKind::Dp)[0]}};
  EXPECT_EQ(inferred_classes(two).at("mp"), hw::TrafficClass::Mp);
  EXPECT_EQ(inferred_classes(two).at("dp"), hw::TrafficClass::Dp);

  const std::string dir = wafersim::testing::temp_dir("classes");
  MicrobenchmarkSpec spec;
  spec.ranks = 4;
  write_microbenchmark(dir + "/w", spec);
  std::ofstream(dir + "/groups.json")
      << R"({"1": [0, 1, 2, 3], "2": {"ranks": [0, 2], "class": "mp"}, "3": {"ranks": [1, 3]}})";
  const CommGroups file = read_comm_groups(dir + "/groups.json", 4);
  EXPECT_EQ(file.members.at("2"), (std::vector<int>{0, 2}));
  EXPECT_EQ(file.members.at("3"), (std::vector<int>{1, 3}));
  EXPECT_EQ(file.classes, (std::map<std::string, hw::TrafficClass>{{"2", hw::TrafficClass::Mp}}));
  WorkloadOptions o;
  o.prefix = dir + "/w";
  o.ranks = 4;
  o.comm_groups = dir + "/groups.json";
  const Workload w = load_workload(o);
  EXPECT_EQ(w.traffic_class("1"), hw::TrafficClass::Mp);  // consecutive
  EXPECT_EQ(w.traffic_class("2"), hw::TrafficClass::Mp);  // named, though strided
  EXPECT_EQ(w.traffic_class("3"), hw::TrafficClass::Dp);  // the widest stride
  EXPECT_EQ(w.traffic_class(""), hw::TrafficClass::Mp);
}

// Other placements: DP innermost (rank = dp + 5 x (mp + 2 x pp)), and the paper's order laid
// along a snake of the 5x4 mesh (positions 0-4 on row 0 left to right, 5-9 on row 1 right to
// left: position 5 is NPU 9, so MP pair (4, 5) becomes NPUs 4 and 9, one above the other).
TEST(Generator, PlacementsNestTheKindsAndFollowASnake) {
  const Parallelism p = parallelism_from_string("2,5,2");
  using Groups = std::vector<std::vector<int>>;
  Groups dp;
  for (int g = 0; g < 4; ++g) dp.push_back({5 * g, 5 * g + 1, 5 * g + 2, 5 * g + 3, 5 * g + 4});
  EXPECT_EQ(parallel_groups(p, GroupKind::Dp, placement_from_string("dp,mp,pp")), dp);
  const Groups mp = {{0, 1},   {2, 3},   {4, 9},   {5, 6},   {7, 8},
                     {10, 11}, {12, 13}, {14, 19}, {15, 16}, {17, 18}};
  EXPECT_EQ(parallel_groups(p, GroupKind::Mp, placement_from_string("mp,pp,dp", 5)), mp);
  // Every snake MP pair is two mesh neighbours: one column or one row apart.
  for (const auto& g : mp) {
    const int dx = std::abs(g[0] % 5 - g[1] % 5), dy = std::abs(g[0] / 5 - g[1] / 5);
    EXPECT_EQ(dx + dy, 1) << g[0] << "," << g[1];
  }
  for (const char* bad : {"mp,pp", "mp,mp,dp", "mp,pp,tp", "mp,pp,dp,mp"})
    EXPECT_THROW(placement_from_string(bad), std::invalid_argument) << bad;
  EXPECT_THROW(parallel_groups(p, GroupKind::Mp, placement_from_string("mp,pp,dp", 3)),
               std::invalid_argument);  // 20 ranks are no whole rows of 3
}
