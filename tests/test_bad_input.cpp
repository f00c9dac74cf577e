// Bad input ends in a message naming the file, the item and the problem, and a non-zero exit; a
// replay that cannot progress says what each rank waits for. Never a crash or a hang.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "tb/chakra/generator.h"
#include "tb/chakra/trace.h"
#include "tests/testing.h"

using namespace wafersim;
using wafersim::testing::CommandResult;
using wafersim::testing::source;
using wafersim::testing::temp_dir;
const auto cli = wafersim::testing::wafersim;

namespace {

const std::string kAstra = "tests/data/astra-sim-examples/";

std::string ring4_args(const std::string& workload) {
  return "run --astra-network " + source(kAstra + "network/analytical/Ring_4npus.yml") +
         " --astra-system " + source(kAstra + "system/native_collectives/Ring_4chunks.json") +
         " --workload " + workload;
}

// Copies the 4-rank all-reduce microbenchmark and replaces rank 2's file with `trace`.
std::string with_rank2(const std::string& dir, const chakra::Trace* trace,
                       const std::string* raw = nullptr) {
  std::string prefix = dir + "/w";
  chakra::Trace good = chakra::read_trace(
      source(kAstra + "workload/microbenchmarks/all_reduce/4npus_1MB/all_reduce.0.et"));
  for (int r = 0; r < 4; ++r) chakra::write_trace(prefix + "." + std::to_string(r) + ".et", good);
  std::string bad = prefix + ".2.et";
  if (trace) chakra::write_trace(bad, *trace);
  if (raw) std::ofstream(bad, std::ios::binary | std::ios::trunc) << *raw;
  return prefix;
}

chakra::Trace collective(std::optional<uint64_t> size, std::optional<int64_t> type) {
  chakra::Trace t;
  chakra::TraceNode n;
  n.id = 5;
  n.name = "ar";
  n.kind = chakra::NodeKind::Collective;
  n.comm_size = size;
  n.comm_type = type;
  t.nodes = {n};
  return t;
}

// A SEND to `peer` or a RECV from `peer` of 4 KiB.
chakra::TraceNode point_to_point(chakra::NodeKind kind, uint64_t id, const std::string& name,
                                 int peer, int64_t tag) {
  chakra::TraceNode n;
  n.id = id;
  n.name = name;
  n.kind = kind;
  n.comm_size = 4096;
  (kind == chakra::NodeKind::Send ? n.comm_dst : n.comm_src) = peer;
  n.comm_tag = tag;
  return n;
}

void expect_error(const CommandResult& r, const std::vector<std::string>& words) {
  EXPECT_NE(r.exit_code, 0);
  EXPECT_LT(r.exit_code, 128) << "crashed: " << r.err;
  for (const auto& w : words)
    EXPECT_NE(r.err.find(w), std::string::npos) << "'" << w << "' not in: " << r.err;
}

}  // namespace

TEST(BadInput, GarbageTraceFile) {
  std::string raw = "\xff\xff\xff\xff\xff\xff this is not protobuf";
  auto r = cli(ring4_args(with_rank2(temp_dir("t"), nullptr, &raw)));
  expect_error(r, {"w.2.et", "global metadata"});
}

TEST(BadInput, TruncatedTraceFile) {
  std::ifstream in(source(kAstra + "workload/microbenchmarks/all_reduce/4npus_1MB/all_reduce.2.et"),
                   std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string cut = bytes.substr(0, bytes.size() - 5);
  auto r = cli(ring4_args(with_rank2(temp_dir("t"), nullptr, &cut)));
  expect_error(r, {"w.2.et", "node #0", "ends inside a message"});
}

TEST(BadInput, MissingRankFile) {
  std::string prefix = with_rank2(temp_dir("t"), nullptr);
  std::remove((prefix + ".3.et").c_str());
  expect_error(cli(ring4_args(prefix)), {"w.3.et", "rank 3", "missing"});
}

TEST(BadInput, MoreRankFilesThanNpus) {
  std::string prefix = with_rank2(temp_dir("t"), nullptr);
  chakra::write_trace(prefix + ".4.et", chakra::read_trace(prefix + ".0.et"));
  expect_error(cli(ring4_args(prefix)),
               {"w.4.et", "rank 4", "more ranks than the platform's 4 NPUs"});
}

TEST(BadInput, DependencyOnMissingNode) {
  auto t = collective(1024, 0);
  t.nodes[0].data_deps = {42};
  expect_error(cli(ring4_args(with_rank2(temp_dir("t"), &t))),
               {"w.2.et", "node 5", "node 42", "does not exist"});
}

TEST(BadInput, DependencyCycle) {
  auto t = collective(1024, 0);
  chakra::TraceNode c;
  c.id = 6;
  c.kind = chakra::NodeKind::Compute;
  c.duration_micros = 1;
  c.data_deps = {5};
  t.nodes[0].data_deps = {6};
  t.nodes.push_back(c);
  expect_error(cli(ring4_args(with_rank2(temp_dir("t"), &t))), {"w.2.et", "cycle", "5", "6"});
}

TEST(BadInput, CommSizeZeroOrMissing) {
  auto zero = collective(0, 0);
  expect_error(cli(ring4_args(with_rank2(temp_dir("a"), &zero))),
               {"w.2.et", "node 5", "comm_size is 0"});
  auto missing = collective(std::nullopt, 0);
  expect_error(cli(ring4_args(with_rank2(temp_dir("b"), &missing))),
               {"w.2.et", "node 5", "comm_size is missing"});
}

TEST(BadInput, UnknownCommType) {
  auto t = collective(1024, 77);
  expect_error(cli(ring4_args(with_rank2(temp_dir("t"), &t))),
               {"w.2.et", "node 5", "unknown comm_type 77"});
}

TEST(BadInput, UnknownYamlKey) {
  std::string dir = temp_dir("y");
  std::ofstream(dir + "/p.yaml") << "network:\n  topology: ring\n  npus: 4\n  link_bandwidth_gbps: "
                                    "10\n  link_bandwith_gbps: 5\n";
  auto r = cli("run --platform " + dir + "/p.yaml --workload " +
               source(kAstra + "workload/microbenchmarks/all_reduce/4npus_1MB/all_reduce"));
  expect_error(r, {"p.yaml", "network.link_bandwith_gbps", "unknown key"});
}

TEST(BadInput, ZeroOrNegativeBandwidth) {
  std::string w = source(kAstra + "workload/microbenchmarks/all_reduce/4npus_1MB/all_reduce");
  auto r = cli("run --platform " + source("configs/ring_8npus.yaml") +
               " --set network.npus=4 network.link_bandwidth_gbps=0 --workload " + w);
  expect_error(r, {"network.link_bandwidth_gbps", "must be >= 0.001"});
  std::string dir = temp_dir("n");
  std::ofstream(dir + "/net.yml")
      << "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ -50 ]\nlatency: [ 500 ]\n";
  auto a = cli("run --astra-network " + dir + "/net.yml --astra-system " +
               source(kAstra + "system/native_collectives/Ring_4chunks.json") + " --workload " + w);
  expect_error(a, {"net.yml", "bandwidth", "positive"});
}

TEST(BadInput, NetworkListsOfDifferentLengths) {
  std::string dir = temp_dir("n");
  std::ofstream(dir + "/net.yml") << "topology: [ Ring, Switch ]\nnpus_count: [ 2, 2 ]\nbandwidth: "
                                     "[ 50 ]\nlatency: [ 500, 500 ]\n";
  auto r = cli("run --astra-network " + dir + "/net.yml --astra-system " +
               source(kAstra + "system/native_collectives/Ring_4chunks.json") + " --workload x");
  expect_error(r, {"net.yml", "one entry per dimension"});
}

TEST(BadInput, CommGroupListsARankTwice) {
  std::string dir = temp_dir("g");
  std::ofstream(dir + "/groups.json") << "{\"1\": [0, 1, 1]}";
  auto r = cli(ring4_args(with_rank2(temp_dir("t"), nullptr)) + " --comm-groups " + dir +
               "/groups.json");
  expect_error(r, {"groups.json", "group '1'", "listed twice"});
}

TEST(BadInput, SendToSelf) {
  chakra::Trace t;
  t.nodes = {point_to_point(chakra::NodeKind::Send, 3, "loop", 2, 0)};
  expect_error(cli(ring4_args(with_rank2(temp_dir("t"), &t))),
               {"w.2.et", "node 3", "comm_dst is this rank itself"});
}

// A RECV that no SEND matches: the replay stops and says who waits for what.
TEST(Stall, UnmatchedRecvIsReported) {
  std::string dir = temp_dir("s");
  std::vector<chakra::Trace> t(4);
  t[1].nodes = {point_to_point(chakra::NodeKind::Recv, 1, "lonely_recv", 3, 9)};
  for (int r = 0; r < 4; ++r) chakra::write_trace(dir + "/p." + std::to_string(r) + ".et", t[r]);
  auto r = cli(ring4_args(dir + "/p") + " --out " + dir);
  EXPECT_EQ(r.exit_code, 3);
  for (const char* w : {"rank 1", "lonely_recv", "from rank 3", "tag 9"})
    EXPECT_NE(r.err.find(w), std::string::npos) << w << " not in: " << r.err;
  std::ifstream report(dir + "/report.json");
  nlohmann::json j;
  report >> j;
  EXPECT_EQ(j["status"], "stalled");
}

// Ranks that disagree about a collective's size are refused before the run, naming both ranks and
// nodes.
TEST(BadInput, CollectiveSizeMismatchAcrossRanks) {
  auto t = collective(4 << 20, 0);  // 4 MiB on rank 2, 1 MiB elsewhere
  auto r = cli(ring4_args(with_rank2(temp_dir("t"), &t)));
  expect_error(r, {"w.2.et", "node 5", "differs in comm_size (1048576 against 4194304 bytes)",
                   "rank 0", "w.0.et", "rank 2"});
  EXPECT_EQ(r.exit_code, 1);
}

// A rank that never joins the all-reduce deadlocks its plan: reported, not hung.
TEST(Stall, MissingCollectiveParticipantIsReported) {
  chakra::Trace t;
  auto r = cli(ring4_args(with_rank2(temp_dir("t"), &t)));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("waits for a message from rank"), std::string::npos) << r.err;
}

// Memory running out is a sentence and exit 1, not std::bad_alloc's own report: a 4,096-NPU mesh's
// routers, NPUs and the all-reduce's plan do not fit in 64 MB of address space. (Checking the same
// workload fits now: routes are rules, not a table.)
TEST(BadInput, OutOfMemoryIsASentence) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space";
#else
  const std::string dir = temp_dir("oom");
  chakra::MicrobenchmarkSpec spec;
  spec.ranks = 4096;
  chakra::write_microbenchmark(dir + "/ar", spec);
  const std::string exe = std::string(WAFERSIM_BINARY_DIR) + "/wafersim";
  const std::string platform = source("configs/mesh_8x8.yaml");
  const std::string prefix = dir + "/ar", err = dir + "/err.txt";
  pid_t pid = fork();
  if (pid == 0) {
    rlimit limit{64ull << 20, 64ull << 20};
    setrlimit(RLIMIT_AS, &limit);
    freopen(err.c_str(), "w", stderr);
    execl(exe.c_str(), exe.c_str(), "run", "--quiet", "--platform", platform.c_str(), "--set",
          "network.mesh_x=64", "network.mesh_y=64", "--workload", prefix.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 1);
  std::ifstream e(err);
  const std::string text((std::istreambuf_iterator<char>(e)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("wafersim: error: out of memory"), std::string::npos) << text;
  EXPECT_EQ(text.find("bad_alloc"), std::string::npos) << text;
#endif
}
