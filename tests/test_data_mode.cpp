// `run --data`: collectives carry real values through the cycle-level fabric and every rank's
// result is compared with the reference computed outside it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "models/collectives/data_plane.h"
#include "tb/chakra/generator.h"
#include "tb/collectives/msccl_xml.h"
#include "tests/testing.h"

using namespace wafersim;
using namespace wafersim::collectives;

namespace {

const char* kAllReduce8 =
    "tests/data/astra-sim-examples/workload/microbenchmarks/all_reduce/8npus_1MB/all_reduce";

// Runs a plan's data through the data plane in one valid order (sends when their dependencies
// are done, receives when their message is there), as the replay would in some timing.
std::optional<DataMismatch> run_data(const Plan& plan, Collective c, int root) {
  DataPlane plane(plan, c, root, Element::FP32, 4, 7);
  const int n = plan.size();
  std::vector<std::vector<int>> waiting(n);
  std::vector<std::pair<int, uint32_t>> ready;
  for (int p = 0; p < n; ++p)
    for (uint32_t k = 0; k < plan.of(p).ops.size(); ++k) {
      waiting[p].push_back(static_cast<int>(plan.of(p).ops[k].dep_count));
      if (waiting[p][k] == 0) ready.push_back({p, k});
    }
  std::map<std::tuple<int, int, uint32_t>, int> in_flight;
  std::vector<std::pair<int, uint32_t>> parked;
  std::vector<size_t> flow_inputs(plan.flows.size(), 0);  // inputs that have given, per flow
  auto done = [&](int p, uint32_t k) {
    plane.finished(p, k);
    for (uint32_t c : plan.of(p).children(k))
      if (--waiting[p][c] == 0) ready.push_back({p, c});
  };
  while (!ready.empty() || !parked.empty()) {
    if (ready.empty()) {
      bool moved = false;
      for (size_t i = 0; i < parked.size(); ++i) {
        auto [p, k] = parked[i];
        const Op& op = plan.of(p).ops[k];
        auto key = std::make_tuple(plan.peer_of(p, op), p, op.tag);
        const bool flow_done =
            op.kind == OpKind::Flow && flow_inputs[op.peer] == plan.flows[op.peer].inputs.size();
        if (flow_done || (op.kind == OpKind::Recv && in_flight[key] > 0)) {
          if (!flow_done) in_flight[key]--;
          parked.erase(parked.begin() + i);
          done(p, k);
          moved = true;
          break;
        }
      }
      if (!moved) break;
      continue;
    }
    auto [p, k] = ready.back();
    ready.pop_back();
    const Op& op = plan.of(p).ops[k];
    plane.issued(p, k);
    if (op.kind == OpKind::Send) in_flight[{p, plan.peer_of(p, op), op.tag}]++;
    const bool flow_output = op.kind == OpKind::Flow && plan.flows[op.peer].has_output(p);
    if (op.kind == OpKind::Flow && plan.flows[op.peer].has_input(p)) flow_inputs[op.peer]++;
    if (op.kind == OpKind::Recv || flow_output)
      parked.push_back({p, k});
    else
      done(p, k);
  }
  for (int p = 0; p < n; ++p)
    if (auto wrong = plane.check(p)) return wrong;
  return std::nullopt;
}

}  // namespace

// The data plane, without the fabric: a correct plan passes, a plan that forgets one reduction
// ends with a value one rank's part short, and the mismatch names where.
TEST(DataPlane, FindsAMissingReduction) {
  CollectiveRequest q;
  q.ranks = 4;
  q.bytes = 4099;
  Plan plan = build_plan(q);
  EXPECT_FALSE(run_data(plan, Collective::AllReduce, 0).has_value());
  for (DataRef& d : plan.ranks[1].data)
    if (d.reduce) {
      d.reduce = false;
      break;
    }
  const auto wrong = run_data(plan, Collective::AllReduce, 0);
  ASSERT_TRUE(wrong.has_value());
  EXPECT_NE(wrong->expected, wrong->got);
  EXPECT_NE(wrong->text().find("expected"), std::string::npos);
}

// In-network flows carry values too: each output takes the sum of the flow's inputs, and every
// in-switch collective ends with the reference result.
TEST(DataPlane, InSwitchFlowsComputeTheirCollectives) {
  for (Collective c : {Collective::AllReduce, Collective::ReduceScatter, Collective::AllGather,
                       Collective::Broadcast, Collective::Reduce})
    for (int n : {2, 5, 8}) {
      CollectiveRequest q;
      q.collective = c;
      q.algorithm = Algorithm::InSwitch;
      q.ranks = n;
      q.bytes = 4099;
      q.splits = 3;
      q.root = n - 1;
      const Plan plan = build_plan(q);
      const auto wrong = run_data(plan, c, q.root);
      EXPECT_FALSE(wrong.has_value()) << to_string(c) << " n=" << n << ": " << wrong->text();
    }
  // An output that takes the sum before every input has given is a broken schedule.
  CollectiveRequest q;
  q.algorithm = Algorithm::InSwitch;
  q.ranks = 3;
  q.bytes = 300;
  const Plan plan = build_plan(q);
  DataPlane plane(plan, Collective::AllReduce, 0, Element::FP32, 4, 7);
  plane.issued(0, 0);
  EXPECT_THROW(plane.finished(0, 0), std::logic_error);
}

TEST(DataPlane, ElementTypesByName) {
  EXPECT_EQ(element_from_string("bf16"), Element::BF16);
  EXPECT_THROW(element_from_string("fp8"), std::invalid_argument);
}

// Every built-in algorithm, for every collective it implements, on rank counts with and without
// power-of-two sizes and at two fidelities, ends with data_check: pass on the fabric.
TEST(DataMode, EveryBuiltInAlgorithmPassesOnTheFabric) {
  const std::string dir = wafersim::testing::temp_dir("matrix");
  const std::vector<std::pair<std::string, chakra::CollectiveKind>> kinds = {
      {"all_reduce", chakra::CollectiveKind::AllReduce},
      {"all_gather", chakra::CollectiveKind::AllGather},
      {"reduce_scatter", chakra::CollectiveKind::ReduceScatter},
      {"all_to_all", chakra::CollectiveKind::AllToAll},
      {"broadcast", chakra::CollectiveKind::Broadcast},
      {"reduce", chakra::CollectiveKind::Reduce}};
  const std::vector<std::string> algorithms = {"ring", "direct", "halving_doubling",
                                               "double_binary_tree", "pairwise"};
  int runs = 0;
  for (int n : {3, 4, 8})
    for (const auto& [name, kind] : kinds) {
      chakra::MicrobenchmarkSpec spec;
      spec.collective = kind;
      spec.ranks = n;
      spec.bytes = 3 * 4099;  // uneven blocks
      const std::string prefix = dir + "/" + name + std::to_string(n);
      chakra::write_microbenchmark(prefix, spec);
      for (const std::string& algorithm : algorithms)
        for (const char* fidelity : {"message", "packet"}) {
          const auto r = wafersim::testing::wafersim(
              "run --quiet --data --platform " +
              wafersim::testing::source("configs/ring_8npus.yaml") +
              " --set network.npus=" + std::to_string(n) + " collectives." + name + "=" +
              algorithm + " collectives.dataset_splits=2 --fidelity " + fidelity + " --workload " +
              prefix + " --out " + dir + "/out");
          if (r.exit_code == 1 && (r.err.find("does not implement") != std::string::npos ||
                                   r.err.find("power-of-two") != std::string::npos ||
                                   r.err.find("implements only") != std::string::npos))
            continue;  // the algorithm does not run this collective or rank count
          EXPECT_EQ(r.exit_code, 0)
              << algorithm << " " << name << " n=" << n << " " << fidelity << ": " << r.err;
          ++runs;
        }
    }
  EXPECT_GT(runs, 60);
}

// Flit fidelity and the half-precision types, on a mesh.
TEST(DataMode, FlitFidelityAndHalfPrecision) {
  for (const char* type : {"fp32", "fp16", "bf16"}) {
    const auto r = wafersim::testing::run_report(
        "--data --data-type " + std::string(type) + " --platform " +
        wafersim::testing::source("configs/wafer_mesh_4x2.yaml") + " --fidelity flit --workload " +
        wafersim::testing::source(kAllReduce8));
    EXPECT_EQ(r["data_check"]["status"], "pass") << type;
    EXPECT_EQ(r["data_check"]["element_type"], type);
    EXPECT_EQ(r["data_check"]["collectives_checked"], 1);
  }
}

// The data check is independent of the symbolic proof: with the proof off, the MSCCL algorithm
// that adds the wrong scratch block (docs/collectives.md) runs, and its result is caught.
TEST(DataMode, CatchesAWrongAlgorithmTheProofWasNotAskedToCheck) {
  const std::string dir = wafersim::testing::temp_dir("wrong");
  const auto r = wafersim::testing::wafersim(
      "run --quiet --data --platform " + wafersim::testing::source("configs/ring_8npus.yaml") +
      " --set collectives.verify_max_ops=0 collectives.all_reduce=msccl:" +
      wafersim::testing::source("tests/data/msccl/xml/msccl-tools_fused/ar_pcie_hier_8_1.xml") +
      " --workload " + wafersim::testing::source(kAllReduce8) + " --out " + dir);
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find("data check failed: collective 'all_reduce_8npus_1MB': rank "),
            std::string::npos)
      << r.err;
  std::ifstream f(dir + "/report.json");
  nlohmann::json report;
  f >> report;
  EXPECT_EQ(report["data_check"]["status"], "fail");
  EXPECT_NE(report["data_check"]["first_mismatch"]["expected"],
            report["data_check"]["first_mismatch"]["got"]);
}

// A foreign Chakra graph names no data: the run says it could not check it.
TEST(DataMode, ForeignChakraGraphsAreCountedNotChecked) {
  const auto r = wafersim::testing::run_report(
      "--data --platform " + wafersim::testing::source("configs/ring_8npus.yaml") +
      " --set collectives.all_reduce=chakra:" +
      wafersim::testing::source("tests/data/msccl/chakra/ar_ring_8_1_1/ar_ring_8_1_1") +
      " --workload " + wafersim::testing::source(kAllReduce8));
  EXPECT_EQ(r["data_check"]["collectives_without_data"], 1);
  EXPECT_EQ(r["data_check"]["collectives_checked"], 0);
}

// Every real MSCCL algorithm of 8 gpus runs on the fabric with its values right (the one known to
// be wrong, docs/collectives.md, is refused before it runs).
TEST(DataMode, EveryRealMscclAlgorithmPassesOnTheFabric) {
  const std::map<std::string, std::string> workloads = {
      {"allreduce", "all_reduce"}, {"allgather", "all_gather"}, {"alltoall", "all_to_all"}};
  int runs = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(
           wafersim::testing::source("tests/data/msccl/xml"))) {
    const std::string file = e.path().string();
    if (e.path().extension() != ".xml" || file.find("ar_pcie_hier") != std::string::npos) continue;
    for (const auto& algo : tb::read_msccl_xml(file)) {
      auto w = workloads.find(algo.coll);
      if (algo.ngpus != 8 || w == workloads.end()) continue;
      const auto r = wafersim::testing::wafersim(
          "run --quiet --data --platform " + wafersim::testing::source("configs/ring_8npus.yaml") +
          " --set collectives." + w->second + "=msccl:" + file + " --workload " +
          wafersim::testing::source("tests/data/astra-sim-examples/workload/microbenchmarks/" +
                                    w->second + "/8npus_1MB/" + w->second) +
          " --out " + wafersim::testing::temp_dir("msccl" + std::to_string(runs)));
      EXPECT_EQ(r.exit_code, 0) << file << ": " << r.err;
      ++runs;
    }
  }
  EXPECT_GE(runs, 24);
}
