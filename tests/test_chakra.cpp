// Chakra ET reader and writer against traces written by other tools (tests/data, see its README).
#include <gtest/gtest.h>
#include <zlib.h>

#include <fstream>
#include <set>

#include "models/common/error.h"
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
