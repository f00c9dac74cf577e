// Collective algorithms from files, end to end: Chakra collective graphs read and written, MSCCL
// XML and Chakra graphs named by ASTRA-sim system files and by platforms, run on the fabric.
#include <gtest/gtest.h>

#include <deque>
#include <filesystem>
#include <fstream>
#include <map>

#include "models/collectives/hierarchical.h"
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

// Which receive takes each send: (position, op) -> (position, op), first come first served per
// (sender, receiver, tag) in op order.
std::map<std::pair<int, uint32_t>, std::pair<int, uint32_t>> pairing(const Plan& plan) {
  std::map<std::tuple<int, int, uint32_t>, std::deque<uint32_t>> sends;
  for (int p = 0; p < plan.size(); ++p)
    for (uint32_t k = 0; k < plan.of(p).ops.size(); ++k) {
      const Op& op = plan.of(p).ops[k];
      if (op.kind == OpKind::Send) sends[{p, plan.peer_of(p, op), op.tag}].push_back(k);
    }
  std::map<std::pair<int, uint32_t>, std::pair<int, uint32_t>> out;
  for (int p = 0; p < plan.size(); ++p)
    for (uint32_t k = 0; k < plan.of(p).ops.size(); ++k) {
      const Op& op = plan.of(p).ops[k];
      if (op.kind != OpKind::Recv) continue;
      const int from = plan.peer_of(p, op);
      auto& queue = sends[{from, p, op.tag}];
      if (queue.empty()) continue;
      out[{from, queue.front()}] = {p, k};
      queue.pop_front();
    }
  return out;
}

// Two plans are the same when every position holds the same ops, dependencies and data, and the
// same sends meet the same receives (with `same_tags`, under the same tags too).
void expect_same(const Plan& a, const Plan& b, const std::string& what, bool same_tags = true) {
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
      if (same_tags) {
        EXPECT_EQ(o.tag, q.tag) << at;
      }
      std::vector<uint32_t> dx(x.deps(k).begin(), x.deps(k).end()),
          dy(y.deps(k).begin(), y.deps(k).end());
      std::sort(dx.begin(), dx.end());
      std::sort(dy.begin(), dy.end());
      EXPECT_EQ(dx, dy) << at;
      const DataRef &d = x.data[k], &e = y.data[k];
      // A rotational plan names blocks relative to the position; written out they are absolute.
      const uint32_t shift = a.rotation > 0 ? static_cast<uint32_t>(p) : 0;
      auto abs = [&](Buffer buf, uint32_t first) {
        const uint32_t size = buf == Buffer::Input    ? a.input_blocks
                              : buf == Buffer::Output ? a.output_blocks
                                                      : a.scratch_blocks;
        return shift == 0 || buf == Buffer::Relay || size == 0 ? first : (first + shift) % size;
      };
      EXPECT_EQ(d.count, e.count) << at;
      if (d.count == 0) continue;  // names no data
      EXPECT_EQ(std::make_tuple(d.chunk, d.src, abs(d.src, d.src_first), d.dst,
                                abs(d.dst, d.dst_first), d.reduce),
                std::make_tuple(e.chunk, e.src, e.src_first, e.dst, e.dst_first, e.reduce))
          << at;
      EXPECT_EQ(std::make_tuple(d.src_runs.run, d.src_runs.every, d.dst_runs.run, d.dst_runs.every),
                std::make_tuple(e.src_runs.run, e.src_runs.every, e.dst_runs.run, e.dst_runs.every))
          << at;
    }
  }
  EXPECT_EQ(pairing(a), pairing(b)) << what;
}

// Every built-in plan over `ranks` of `sizes` (roots at the last rank), with its request and name;
// returns how many `visit` took (it returns false to skip one).
template <typename Visit>
int for_each_builtin_plan(std::initializer_list<int> ranks, std::initializer_list<uint64_t> sizes,
                          int splits, Visit visit) {
  int visited = 0;
  for (Collective c : {Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter,
                       Collective::AllToAll, Collective::Broadcast, Collective::Reduce})
    for (Algorithm a : {Algorithm::Ring, Algorithm::Direct, Algorithm::HalvingDoubling,
                        Algorithm::DoubleBinaryTree, Algorithm::Pairwise})
      for (int n : ranks)
        for (uint64_t bytes : sizes) {
          CollectiveRequest q;
          q.collective = c;
          q.algorithm = a;
          q.ranks = n;
          q.bytes = bytes;
          q.splits = splits;
          q.root = n - 1;
          Plan plan;
          try {
            plan = build_plan(q);
          } catch (const std::invalid_argument&) {
            continue;  // the algorithm does not run this collective or rank count
          }
          const std::string what = std::string(to_string(a)) + " " + to_string(c) +
                                   " n=" + std::to_string(n) + " bytes=" + std::to_string(bytes);
          visited += visit(plan, q, what) ? 1 : 0;
        }
  return visited;
}

}  // namespace

// Built-in plans written as Chakra graphs read back into the same plan, which the symbolic
// executor still proves (the data travels in the graph).
TEST(ChakraGraph, BuiltInPlansRoundTrip) {
  const std::string dir = wafersim::testing::temp_dir("roundtrip");
  int files = 0;
  const int checked = for_each_builtin_plan(
      {4, 5}, {uint64_t{1} << 16, uint64_t{65537}}, 2,
      [&](const Plan& plan, const CollectiveRequest& q, const std::string& what) {
        const std::string prefix = dir + "/plan" + std::to_string(files++);
        tb::write_chakra_collective(plan, q.collective, prefix);
        const tb::ChakraCollective back = tb::read_chakra_collective(prefix);
        EXPECT_TRUE(back.data_known) << what;
        EXPECT_EQ(back.collective, q.collective) << what;
        expect_same(plan, back.plan, what);
        EXPECT_EQ(check_plan(back.plan, q.collective, q.root), "") << what;
        return true;
      });
  EXPECT_GT(checked, 30);
}

// Built-in plans written as MSCCL XML read back into the same plan (tags renumbered: the file pairs
// messages by channel), which still proves correct. Even sizes for all; uneven sizes too where no
// scratch block is involved (MSCCL sizes a scratch block as an even share).
TEST(MscclExport, BuiltInPlansRoundTrip) {
  const std::string dir = wafersim::testing::temp_dir("msccl_roundtrip");
  const uint64_t even = uint64_t{120} << 10;
  int files = 0;
  const int checked = for_each_builtin_plan(
      {4, 5, 8}, {even, uint64_t{65537}}, 1,
      [&](const Plan& plan, const CollectiveRequest& q, const std::string& what) {
        if (plan.scratch_blocks > 0 && q.bytes != even) return false;
        const std::string path = dir + "/plan" + std::to_string(files++) + ".xml";
        std::ofstream(path) << tb::msccl_xml_text(msccl::from_plan(plan, q.collective, "x"));
        const auto algos = tb::read_msccl_xml(path);
        EXPECT_EQ(algos.size(), 1u) << what;
        const Plan back = msccl::to_plan(algos.at(0), q.bytes);
        expect_same(plan, back, what, false);
        EXPECT_EQ(check_plan(back, q.collective, q.root), "") << what;
        return true;
      });
  EXPECT_GT(checked, 60);
}

// A hierarchical all-to-all names strided blocks (each phase transposes the data): a Chakra graph
// carries the runs and reads back into the same plan, still proved; MSCCL, whose steps name
// contiguous chunks, refuses it by name.
TEST(ChakraGraph, StridedBlocksRoundTripAndMscclRefusesThem) {
  HierarchicalRequest q;
  q.collective = Collective::AllToAll;
  q.dims = {{2, Algorithm::Direct, 100}, {3, Algorithm::Direct, 50}, {2, Algorithm::Direct, 25}};
  q.bytes = 12007;
  const Plan plan = build_hierarchical(q);
  bool strided = false;
  for (const RankPlan& rp : plan.ranks)
    for (const DataRef& d : rp.data) strided |= d.src_runs.strided() || d.dst_runs.strided();
  ASSERT_TRUE(strided);
  const std::string prefix = wafersim::testing::temp_dir("strided") + "/a2a";
  tb::write_chakra_collective(plan, q.collective, prefix);
  const tb::ChakraCollective back = tb::read_chakra_collective(prefix);
  expect_same(plan, back.plan, "hierarchical all_to_all");
  EXPECT_EQ(check_plan(back.plan, Collective::AllToAll), "");
  try {
    msccl::from_plan(plan, Collective::AllToAll, "x");
    ADD_FAILURE() << "strided blocks were written as MSCCL";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("strided runs"), std::string::npos) << e.what();
  }
}

// What MSCCL cannot say is refused: several chunks, and a Chakra graph's timed compute.
TEST(MscclExport, RefusesWhatMscclCannotSay) {
  CollectiveRequest q;
  q.ranks = 4;
  q.bytes = 1 << 16;
  q.splits = 2;
  EXPECT_THROW(msccl::from_plan(build_plan(q), Collective::AllReduce, "x"), std::invalid_argument);
  const tb::ChakraCollective foreign =
      tb::read_chakra_collective(wafersim::testing::source(kAstraExample) + "custom_allreduce");
  try {
    msccl::from_plan(foreign.plan, Collective::AllReduce, "x");
    ADD_FAILURE() << "a timed COMP node was written as MSCCL";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("MSCCL has no step for it"), std::string::npos);
  }
}

// Imported MSCCL algorithms (fused steps, scratch, relays) written out again import to a plan
// that proves correct and moves the same bytes between the same ranks.
TEST(MscclExport, ImportedAlgorithmsWriteBack) {
  const std::string dir = wafersim::testing::temp_dir("msccl_back");
  int checked = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(
           wafersim::testing::source("tests/data/msccl/xml"))) {
    if (e.path().extension() != ".xml" || e.path().filename() == "ar_pcie_hier_8_1.xml") continue;
    for (const msccl::Algorithm& a : tb::read_msccl_xml(e.path().string())) {
      const Collective c = msccl::collective_of(a.coll);
      const Plan plan = msccl::to_plan(a, 1 << 20);
      const std::string path = dir + "/" + std::to_string(checked) + ".xml";
      std::ofstream(path) << tb::msccl_xml_text(msccl::from_plan(plan, c, a.name));
      const Plan back = msccl::to_plan(tb::read_msccl_xml(path).at(0), 1 << 20);
      EXPECT_EQ(check_plan(back, c), "") << e.path();
      EXPECT_EQ(back.bytes_sent(), plan.bytes_sent()) << e.path();
      ++checked;
    }
  }
  EXPECT_GE(checked, 27);
}

// export-collective writes files a run takes back: the same time as the built-in algorithm.
TEST(MscclExport, ExportCollectiveCommandRunsBack) {
  const std::string dir = wafersim::testing::temp_dir("export");
  const std::string platform = wafersim::testing::source("configs/ring_8npus.yaml");
  for (const char* format : {"msccl", "chakra"}) {
    const auto r = wafersim::testing::wafersim(
        "export-collective --platform " + platform +
        " --set collectives.dataset_splits=1 --collective all_reduce --size 1048576 --format " +
        format + " --out " + dir + "/" + format);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  const std::string workload = " --workload " + wafersim::testing::source(kAllReduce8);
  const auto builtin = wafersim::testing::run_report(
      "--data --platform " + platform + " --set collectives.dataset_splits=1" + workload);
  const auto from_xml = wafersim::testing::run_report("--data --platform " + platform +
                                                      " --set collectives.all_reduce=msccl:" + dir +
                                                      "/msccl/all_reduce.xml" + workload);
  const auto from_et = wafersim::testing::run_report("--data --platform " + platform +
                                                     " --set collectives.all_reduce=chakra:" + dir +
                                                     "/chakra/all_reduce" + workload);
  EXPECT_EQ(from_xml["makespan_ns"], builtin["makespan_ns"]);
  EXPECT_EQ(from_et["makespan_ns"], builtin["makespan_ns"]);
  EXPECT_EQ(from_xml["data_check"]["status"], "pass");
  EXPECT_EQ(from_et["data_check"]["status"], "pass");
  EXPECT_EQ(from_et["data_check"]["collectives_checked"], 1);
  // Bad requests name the option.
  auto bad = wafersim::testing::wafersim("export-collective --platform " + platform +
                                         " --collective all_sum --size 8 --format msccl --out " +
                                         dir + "/bad");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("--collective: unknown collective 'all_sum'"), std::string::npos)
      << bad.err;
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
