// Collective algorithms from files, end to end: Chakra collective graphs read and written, MSCCL
// XML and Chakra graphs named by ASTRA-sim system files and by platforms, run on the fabric.
#include <gtest/gtest.h>

#include <fstream>

#include "models/collectives/msccl.h"
#include "models/collectives/symbolic.h"
#include "tb/chakra/trace.h"
#include "tb/collectives/chakra_graph.h"
#include "tb/collectives/msccl_xml.h"
#include "tests/testing.h"

using namespace wafersim;
using namespace wafersim::collectives;

namespace {

const char* kAstraExample =
    "tests/data/astra-sim-examples/system/custom_collectives/custom_ring_allreduce_8npus_1MB/";
const char* kAllReduce8 =
    "tests/data/astra-sim-examples/workload/microbenchmarks/all_reduce/8npus_1MB/all_reduce";

// The messages of each rank, in plan order: (send or receive, peer, bytes).
std::vector<std::vector<std::tuple<OpKind, int, uint64_t>>> messages(const Plan& plan) {
  std::vector<std::vector<std::tuple<OpKind, int, uint64_t>>> out(plan.size());
  for (int p = 0; p < plan.size(); ++p)
    for (const Op& op : plan.of(p).ops)
      if (op.kind == OpKind::Send || op.kind == OpKind::Recv)
        out[p].push_back({op.kind, plan.peer_of(p, op), op.bytes});
  return out;
}

// Two plans are the same when every position holds the same ops, dependencies and data.
void expect_same(const Plan& a, const Plan& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  EXPECT_EQ(a.chunks, b.chunks) << what;
  EXPECT_EQ(a.input_blocks, b.input_blocks) << what;
  EXPECT_EQ(a.output_blocks, b.output_blocks) << what;
  EXPECT_EQ(a.scratch_blocks, b.scratch_blocks) << what;
  EXPECT_EQ(a.in_place, b.in_place) << what;
  for (int p = 0; p < a.size(); ++p) {
    const RankPlan &x = a.of(p), &y = b.of(p);
    ASSERT_EQ(x.ops.size(), y.ops.size()) << what << " position " << p;
    for (uint32_t k = 0; k < x.ops.size(); ++k) {
      const Op &o = x.ops[k], &q = y.ops[k];
      const std::string at = what + " position " + std::to_string(p) + " op " + std::to_string(k);
      EXPECT_EQ(o.kind, q.kind) << at;
      if (o.kind == OpKind::Send || o.kind == OpKind::Recv) {
        EXPECT_EQ(a.peer_of(p, o), b.peer_of(p, q)) << at;
      }
      EXPECT_EQ(o.bytes, q.bytes) << at;
      EXPECT_EQ(o.tag, q.tag) << at;
      EXPECT_EQ(std::vector<uint32_t>(x.deps(k).begin(), x.deps(k).end()),
                std::vector<uint32_t>(y.deps(k).begin(), y.deps(k).end()))
          << at;
      const DataRef &d = x.data[k], &e = y.data[k];
      // A rotational plan names blocks relative to the position; written out they are absolute.
      const uint32_t shift = a.rotation > 0 ? static_cast<uint32_t>(p) : 0;
      auto abs = [&](Buffer buf, uint32_t first) {
        const uint32_t size = buf == Buffer::Input    ? a.input_blocks
                              : buf == Buffer::Output ? a.output_blocks
                                                      : a.scratch_blocks;
        return shift == 0 || buf == Buffer::Relay || size == 0 ? first : (first + shift) % size;
      };
      EXPECT_EQ(std::make_tuple(d.chunk, d.src, abs(d.src, d.src_first), d.dst,
                                abs(d.dst, d.dst_first), d.count, d.reduce),
                std::make_tuple(e.chunk, e.src, e.src_first, e.dst, e.dst_first, e.count, e.reduce))
          << at;
    }
  }
}

}  // namespace

// Built-in plans written as Chakra graphs read back into the same plan, which the symbolic
// executor still proves (the data travels in the graph).
TEST(ChakraGraph, BuiltInPlansRoundTrip) {
  const std::string dir = wafersim::testing::temp_dir("roundtrip");
  int checked = 0;
  for (Collective c : {Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter,
                       Collective::AllToAll, Collective::Broadcast, Collective::Reduce})
    for (Algorithm a : {Algorithm::Ring, Algorithm::Direct, Algorithm::HalvingDoubling,
                        Algorithm::DoubleBinaryTree, Algorithm::Pairwise})
      for (int n : {4, 5})
        for (uint64_t bytes : {uint64_t{1} << 16, uint64_t{65537}}) {
          CollectiveRequest q;
          q.collective = c;
          q.algorithm = a;
          q.ranks = n;
          q.bytes = bytes;
          q.splits = 2;
          q.root = n - 1;
          Plan plan;
          try {
            plan = build_plan(q);
          } catch (const std::invalid_argument&) {
            continue;
          }
          const std::string what = std::string(to_string(a)) + " " + to_string(c) +
                                   " n=" + std::to_string(n) + " bytes=" + std::to_string(bytes);
          const std::string prefix = dir + "/plan" + std::to_string(checked);
          tb::write_chakra_collective(plan, c, prefix);
          const tb::ChakraCollective back = tb::read_chakra_collective(prefix);
          EXPECT_TRUE(back.data_known) << what;
          EXPECT_EQ(back.collective, c) << what;
          expect_same(plan, back.plan, what);
          EXPECT_EQ(check_plan(back.plan, c, q.root), "") << what;
          ++checked;
        }
  EXPECT_GT(checked, 30);
}

// ASTRA-sim's custom-collective example, from its MSCCL XML and from its Chakra files: the same
// messages between the same ranks, in the same order (the .et files time reductions as COMP nodes
// of a fixed duration, the XML as the reduction engine's work).
TEST(ChakraGraph, AstraExampleFromXmlAndFromEtAgree) {
  const std::string dir = wafersim::testing::source(kAstraExample);
  const auto algos = tb::read_msccl_xml(dir + "custom_allreduce.xml");
  ASSERT_EQ(algos.size(), 1u);
  const Plan from_xml = msccl::to_plan(algos[0], 1 << 20);
  const tb::ChakraCollective from_et = tb::read_chakra_collective(dir + "custom_allreduce");
  EXPECT_FALSE(from_et.data_known);
  EXPECT_EQ(messages(from_xml), messages(from_et.plan));
  EXPECT_EQ(check_plan(from_xml, Collective::AllReduce), "");
  EXPECT_EQ(check_plan(from_et.plan, Collective::Custom), "");  // runs to its end
}

// Broken graphs are refused naming the file and the node.
TEST(ChakraGraph, BrokenGraphsAreNamed) {
  const std::string dir = wafersim::testing::temp_dir("broken");
  const std::string source = wafersim::testing::source(kAstraExample) + "custom_allreduce";
  auto copy = [&](const std::string& name) {
    for (int r = 0; r < 8; ++r) {
      chakra::Trace t = chakra::read_trace(source + "." + std::to_string(r) + ".et");
      chakra::write_trace(dir + "/" + name + "." + std::to_string(r) + ".et", t);
    }
    return dir + "/" + name;
  };
  auto problem = [&](const std::string& prefix) {
    try {
      tb::read_chakra_collective(prefix);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  // Rank 3 receives from rank 5, which never sends to it.
  std::string prefix = copy("wrong_source");
  chakra::Trace t = chakra::read_trace(prefix + ".3.et");
  for (auto& n : t.nodes)
    if (n.kind == chakra::NodeKind::Recv) {
      n.comm_src = 5;
      break;
    }
  chakra::write_trace(prefix + ".3.et", t);
  EXPECT_NE(problem(prefix).find("wrong_source.3.et: node"), std::string::npos) << problem(prefix);
  EXPECT_NE(problem(prefix).find("which rank 5 never sends"), std::string::npos) << problem(prefix);
  // A dependency on a node the file does not hold.
  prefix = copy("dangling");
  t = chakra::read_trace(prefix + ".0.et");
  t.nodes.back().data_deps.push_back(999);
  chakra::write_trace(prefix + ".0.et", t);
  EXPECT_NE(problem(prefix).find("depends on node 999, which the file does not hold"),
            std::string::npos)
      << problem(prefix);
  // No files at all.
  EXPECT_NE(problem(dir + "/missing").find("missing.0.et: no such file"), std::string::npos);
}

// An ASTRA-sim system file names the converted Chakra graph (msccl/configs): the run takes its
// messages and finishes near ASTRA-sim's 90,174 ns (tests/data/README.md); the fabric's packet
// model adds latency ASTRA-sim's analytical links do not have.
TEST(ChakraGraph, AstraSystemFileRunsTheConvertedRing) {
  const auto report = wafersim::testing::run_report(
      "--astra-network " +
      wafersim::testing::source("tests/data/astra-sim-examples/network/analytical/Ring_8npus.yml") +
      " --astra-system " +
      wafersim::testing::source("tests/data/msccl/configs/sys_ar_ring_8_1_1.json") +
      " --workload " + wafersim::testing::source(kAllReduce8));
  EXPECT_EQ(report["collectives"][0]["algorithm"], "chakra:ar_ring_8_1_1");
  EXPECT_NEAR(report["simulated_ns"].get<double>(), 90174, 90174 * 0.02);
  // 8 ranks x 14 messages of 1/8 MiB.
  uint64_t bytes = 0;
  for (const auto& npu : report["npus"]) bytes += npu["bytes_sent"].get<uint64_t>();
  EXPECT_EQ(bytes, uint64_t{8} * 14 * (1 << 17));
}

// The same algorithm as MSCCL XML, named by an ASTRA-sim system file and by a platform, runs and
// moves the ring's bytes; a file that does not fit the collective is refused before the run.
TEST(ChakraGraph, MscclXmlNamedByAstraSystemAndByPlatform) {
  const std::string dir = wafersim::testing::temp_dir("msccl_system");
  const std::string xml =
      wafersim::testing::source("tests/data/msccl/xml/msccl-tools_fused/ar_a100_ring_8_1_1.xml");
  std::ofstream(dir + "/sys.json")
      << R"({"local-mem-bw": 50, "all-reduce-implementation-custom": [")" << xml << R"("]})";
  const std::string network =
      wafersim::testing::source("tests/data/astra-sim-examples/network/analytical/Ring_8npus.yml");
  auto report = wafersim::testing::run_report("--astra-network " + network + " --astra-system " +
                                              dir + "/sys.json --workload " +
                                              wafersim::testing::source(kAllReduce8));
  EXPECT_EQ(report["collectives"][0]["algorithm"], "msccl:allreduce_ring_1channelsperring");
  uint64_t bytes = 0;
  for (const auto& npu : report["npus"]) bytes += npu["bytes_sent"].get<uint64_t>();
  EXPECT_EQ(bytes, uint64_t{8} * 14 * (1 << 17));
  // A platform: msccl:FILE, relative to the platform's folder.
  std::ifstream ring(wafersim::testing::source("configs/ring_8npus.yaml"));
  std::string text(std::istreambuf_iterator<char>(ring), {});
  text.replace(text.find("all_reduce: ring"), 16, "all_reduce: msccl:ring.xml");
  std::ofstream(dir + "/platform.yaml") << text;
  std::ifstream from(xml);
  std::ofstream(dir + "/ring.xml") << from.rdbuf();
  report = wafersim::testing::run_report("--platform " + dir + "/platform.yaml --workload " +
                                         wafersim::testing::source(kAllReduce8));
  EXPECT_EQ(report["collectives"][0]["algorithm"], "msccl:allreduce_ring_1channelsperring");
  // An all-gather file for an all-reduce.
  const auto refused = wafersim::testing::wafersim(
      "run --platform " + dir + "/platform.yaml --set collectives.all_reduce=msccl:" +
      wafersim::testing::source("tests/data/msccl/xml/nofusion/ag_ring_8_1_1.xml") +
      " --workload " + wafersim::testing::source(kAllReduce8) + " --out " + dir + "/out");
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("implements allgather, not all_reduce"), std::string::npos)
      << refused.err;
}
