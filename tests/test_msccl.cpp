// MSCCL XML import: every algorithm msccl-tools and ASTRA-sim wrote (tests/data/msccl) becomes a
// plan that the symbolic executor proves computes its collective; broken copies are refused with
// the step named.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "models/collectives/msccl.h"
#include "models/collectives/symbolic.h"
#include "models/common/error.h"
#include "tb/collectives/msccl_xml.h"
#include "tests/testing.h"

using namespace wafersim;
using namespace wafersim::collectives;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> xml_files() {
  std::vector<std::string> files;
  for (const auto& e :
       fs::recursive_directory_iterator(wafersim::testing::source("tests/data/msccl/xml")))
    if (e.path().extension() == ".xml") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string write_copy(const std::string& name, const std::string& text) {
  const std::string path = wafersim::testing::temp_dir("msccl") + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// The problem importing `text` raises ("" when it imports and proves correct).
std::string import_problem(const std::string& name, const std::string& text) {
  try {
    for (const msccl::Algorithm& a : tb::read_msccl_xml(write_copy(name, text))) {
      const Plan plan = msccl::to_plan(a, 1 << 20);
      const std::string wrong = check_plan(plan, msccl::collective_of(a.coll));
      if (!wrong.empty()) return wrong;
    }
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

const char* kRing = "tests/data/msccl/xml/nofusion/ar_ring_8_1_1.xml";

}  // namespace

// One real file is wrong, and the executor says where: msccl-tools' example
// allreduce_a100_pcie_hierarchical.py indexes the scratch buffer from 0 again in its second
// reduce-scatter, so it adds the first phase's data (scratch block 0) into block 8.
const std::map<std::string, std::string> kKnownWrong = {
    {"ar_pcie_hier_8_1.xml",
     "rank 4 op 49 (reduce, step tag 0) from gpu 4 tb 12 step 6 (line 766) combines block 0 of "
     "its scratch with other data"}};

TEST(Msccl, EveryRealAlgorithmImportsAndComputesItsCollective) {
  int algorithms = 0;
  std::set<std::string> types;
  for (const std::string& file : xml_files()) {
    const auto wrong = kKnownWrong.find(fs::path(file).filename().string());
    for (const msccl::Algorithm& a : tb::read_msccl_xml(file)) {
      for (const auto& g : a.gpus)
        for (const auto& tb : g.tbs)
          for (const auto& s : tb.steps) types.insert(s.type);
      for (uint64_t bytes : {uint64_t{1} << 20, uint64_t{1000003}}) {
        const Plan plan = msccl::to_plan(a, bytes);
        EXPECT_EQ(plan.size(), a.ngpus) << file;
        EXPECT_EQ(check_plan(plan, msccl::collective_of(a.coll)),
                  wrong == kKnownWrong.end() ? "" : wrong->second)
            << file << " " << a.name;
      }
      ++algorithms;
    }
  }
  EXPECT_GE(algorithms, 28);  // 27 files, one holding two algorithms
  // Every step type of the format appears in the real files.
  EXPECT_EQ(types,
            (std::set<std::string>{"s", "r", "rrc", "rcs", "rrs", "rrcs", "cpy", "re", "nop"}));
}

// The ring all-reduce's bytes: 8 ranks x 14 messages of one 1/8 chunk each.
TEST(Msccl, MessageSizesFollowTheChunks) {
  const auto algos = tb::read_msccl_xml(wafersim::testing::source(kRing));
  ASSERT_EQ(algos.size(), 1u);
  const Plan plan = msccl::to_plan(algos[0], 8 << 20);
  EXPECT_EQ(plan.bytes_sent(), uint64_t{8} * 14 * (1 << 20));
  // All-gather: comm_size is each rank's input, one chunk of the output.
  const auto gather = tb::read_msccl_xml(
      wafersim::testing::source("tests/data/msccl/xml/nofusion/ag_ring_8_1_1.xml"));
  EXPECT_EQ(msccl::to_plan(gather[0], 1 << 20).bytes_sent(), uint64_t{8} * 7 * (1 << 20));
}

// A checker that could not fail would pass these too: each breaks the algorithm differently.
TEST(Msccl, BrokenAlgorithmsAreRefusedNamingTheStep) {
  const std::string ring = read(wafersim::testing::source(kRing));
  auto broken = [&](const std::string& from, const std::string& to) {
    const size_t at = ring.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    std::string text = ring;
    return text.replace(at, from.size(), to);
  };
  // gpu 1's thread block gets a 29th step, receiving what gpu 0 never sends.
  std::string extra_receive = ring;
  extra_receive.insert(
      extra_receive.find("</tb>", extra_receive.find("<gpu id=\"1\"")),
      "  <step s=\"28\" type=\"r\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"i\" dstoff=\"0\" cnt=\"1\" "
      "depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n    ");
  // Recursive doubling's second send no longer waits for the first receive: it sends a block
  // gpu 0 does not hold yet.
  const std::string doubling =
      read(wafersim::testing::source("tests/data/msccl/xml/nofusion/ag_rd_8_1.xml"));
  std::string missing_dependency = doubling;
  const std::string dependency = "cnt=\"2\" depid=\"0\" deps=\"1\"";
  missing_dependency.replace(missing_dependency.find(dependency), dependency.size(),
                             "cnt=\"2\" depid=\"-1\" deps=\"-1\"");
  struct Case {
    std::string name, text, expected;
  };
  const std::vector<Case> cases = {
      {"receive_nobody_sends", extra_receive,
       "gpu 1 tb 0 step 28 (line 64): receives a message gpu 0 never sends"},
      {"missing_dependency", missing_dependency,
       "rank 0 op 2 (send, step tag 0) from gpu 0 tb 1 step 0 (line 8) reads block 1 of chunk 0 "
       "of its output before it holds it"},
      {"wrong_chunk_count", broken("nchunksperloop=\"8\"", "nchunksperloop=\"4\""),
       "i_chunks is 8 where allreduce over 8 gpus with 4 chunks per loop has 4"},
      {"offset_outside", broken("srcoff=\"7\"", "srcoff=\"8\""), "outside srcbuf 'i'"},
      {"unknown_type", broken("type=\"rrc\"", "type=\"rrx\""), "unknown step type 'rrx'"},
      {"dangling_dependency", broken("depid=\"-1\" deps=\"-1\"", "depid=\"9\" deps=\"0\""),
       "gpu 0 tb 0 step 0 (line 4): depends on thread block 9"},
      {"not_xml", ring.substr(0, ring.size() / 2), "not valid XML"},
      {"no_algo", "<gpu id=\"0\"/>", "<gpu> where an <algo> element belongs"},
      {"bad_number", broken("ngpus=\"8\"", "ngpus=\"eight\""), "ngpus is 'eight'"},
  };
  for (const Case& c : cases) {
    const std::string problem = import_problem(c.name + ".xml", c.text);
    EXPECT_NE(problem.find(c.expected), std::string::npos) << c.name << ": " << problem;
  }
}

// Two gpus exchanging one block each, with the dependencies `links` inserts.
std::string exchange(const std::string& gpu0, const std::string& gpu1) {
  return R"(<algo name="x" nchannels="1" nchunksperloop="2" ngpus="2" coll="allgather" inplace="1">
  <gpu id="0" i_chunks="0" o_chunks="2" s_chunks="0">
)" + gpu0 +
         R"(  </gpu>
  <gpu id="1" i_chunks="0" o_chunks="2" s_chunks="0">
)" + gpu1 +
         R"(  </gpu>
</algo>)";
}

std::string step(int s, const std::string& type, int block, const std::string& dep) {
  return "      <step s=\"" + std::to_string(s) + "\" type=\"" + type +
         "\" srcbuf=\"o\" srcoff=\"" + std::to_string(block) + "\" dstbuf=\"o\" dstoff=\"" +
         std::to_string(block) + "\" cnt=\"1\" " + dep + " hasdep=\"0\"/>\n";
}

// A cyclic dependency between two thread blocks, and a plan that deadlocks across gpus.
TEST(Msccl, CyclesAndDeadlocksAreNamed) {
  const std::string none = "depid=\"-1\" deps=\"-1\"";
  const std::string gpu1 = "    <tb id=\"0\" send=\"0\" recv=\"0\" chan=\"0\">\n" +
                           step(0, "s", 1, none) + step(1, "r", 0, none) + "    </tb>\n";
  // gpu 0's send waits for its receive, which waits for its send.
  const std::string cyclic =
      exchange("    <tb id=\"0\" send=\"1\" recv=\"-1\" chan=\"0\">\n" +
                   step(0, "s", 0, "depid=\"1\" deps=\"0\"") + "    </tb>\n" +
                   "    <tb id=\"1\" send=\"-1\" recv=\"1\" chan=\"0\">\n" +
                   step(0, "r", 1, "depid=\"0\" deps=\"0\"") + "    </tb>\n",
               gpu1);
  std::string problem = import_problem("cyclic.xml", cyclic);
  EXPECT_NE(problem.find("gpu 0 tb 0 step 0 (line 4): never runs: its dependencies form a cycle"),
            std::string::npos)
      << problem;
  // Both gpus receive before they send: every step is fine alone, the plan deadlocks.
  const std::string deadlock =
      exchange("    <tb id=\"0\" send=\"1\" recv=\"1\" chan=\"0\">\n" + step(0, "r", 1, none) +
                   step(1, "s", 0, none) + "    </tb>\n",
               "    <tb id=\"0\" send=\"0\" recv=\"0\" chan=\"0\">\n" + step(0, "r", 0, none) +
                   step(1, "s", 1, none) + "    </tb>\n");
  problem = import_problem("deadlock.xml", deadlock);
  EXPECT_NE(problem.find("never runs: the plan deadlocks"), std::string::npos) << problem;
  // The same exchange in a working order proves correct.
  const std::string fine =
      exchange("    <tb id=\"0\" send=\"1\" recv=\"1\" chan=\"0\">\n" + step(0, "s", 0, none) +
                   step(1, "r", 1, none) + "    </tb>\n",
               gpu1);
  EXPECT_EQ(import_problem("fine.xml", fine), "");
}
