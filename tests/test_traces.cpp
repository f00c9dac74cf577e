// Every trace in tests/data loads and runs to completion; the text-converter workloads land on the
// times ASTRA-sim reports for them (tests/data/README.md).
#include <gtest/gtest.h>

#include "tests/testing.h"

using wafersim::testing::run_report;
using wafersim::testing::source;

namespace {
const std::string kData = "tests/data/";

std::string astra(int npus, const std::string& system) {
  return "--astra-network " +
         source(kData + "astra-sim-examples/network/analytical/Ring_" + std::to_string(npus) +
                "npus.yml") +
         " --astra-system " + source(kData + "chakra-traces/configs/" + system);
}

struct TextCase {
  const char* workload;
  double astra_ns;  // 0: ASTRA-sim time not listed
  // Relative: compute-bound traces agree to 1%; a communication-bound one as closely as the
  // ASTRA-sim microbenchmarks (test_astra_validation.cpp), whose per-step costs differ.
  double tolerance = 0.01;
};
}  // namespace

class TextTrace : public ::testing::TestWithParam<TextCase> {};

TEST_P(TextTrace, RunsAndMatchesAstraSim) {
  auto c = GetParam();
  auto r = run_report(astra(8, "text_converter_system.json") + " --workload " +
                      source(kData + "chakra-traces/text/" + c.workload));
  ASSERT_EQ(r["status"], "finished");
  for (const auto& n : r["npus"]) EXPECT_EQ(n["nodes_done"], n["nodes"]);
  if (c.astra_ns > 0) {
    EXPECT_NEAR(r["makespan_ns"].get<double>() / c.astra_ns, 1.0, c.tolerance);
  }
}

INSTANTIATE_TEST_SUITE_P(Text, TextTrace,
                         ::testing::Values(TextCase{"Resnet50_DataParallel", 1082479776},
                                           TextCase{"MLP_ModelParallel", 195350188},
                                           TextCase{"microAllReduce", 64440, 0.05},
                                           TextCase{"microAllToAll", 0},
                                           TextCase{"DLRM_HybridParallel", 0},
                                           TextCase{"MLP_HybridParallel_Data_Model", 0},
                                           TextCase{"MLP_HybridParallel_Model_Data", 0}));

class StgTrace : public ::testing::TestWithParam<const char*> {};

// GPT-3-shaped symbolic-tensor-graph traces with communicator groups, roofline compute, sizes read
// as bytes like the ASTRA-sim runs of data/README.md. Message fidelity keeps the suite fast;
// docs/validation.md lists packet-fidelity times too. dp2tp2pp2 deadlocks ASTRA-sim: it must
// finish.
TEST_P(StgTrace, RunsToCompletion) {
  std::string w = GetParam();
  int npus = w == "gpt_dp2tp2pp2_L4" ? 8 : 4;
  auto r =
      run_report(astra(npus, "Ring_4chunks_roofline.json") + " --fidelity message --workload " +
                 source(kData + "chakra-traces/stg/" + w + "/workload"));
  ASSERT_EQ(r["status"], "finished");
  uint64_t sent = 0;  // pp4 has only point-to-point sends, the others collectives too
  for (const auto& n : r["npus"]) sent += n["bytes_sent"].get<uint64_t>();
  EXPECT_GT(sent, 0u);
  for (const auto& n : r["npus"]) {
    EXPECT_EQ(n["nodes_done"], n["nodes"]);
    EXPECT_GT(n["compute_ns"].get<double>(), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Stg, StgTrace,
                         ::testing::Values("gpt_dp4_L8", "gpt_tp4_L8", "gpt_pp4_L8", "gpt_fsdp4_L8",
                                           "gpt_dp2tp2_L4", "gpt_dp2pp2_L4", "gpt_tp2pp2_L4",
                                           "gpt_dp2tp2pp2_L4"));

// The real PyTorch capture, on data dependencies only (its ctrl_deps dangle and cycle), on one NPU.
TEST(PyTorchTrace, RunsOnDataDependencies) {
  auto r = run_report("--platform " + source("configs/switch_8npus.yaml") +
                      " --set network.npus=1 --deps data --workload " +
                      source(kData + "chakra-traces/pytorch/chakra"));
  ASSERT_EQ(r["status"], "finished");
  EXPECT_EQ(r["npus"][0]["nodes_done"], 3664);
  EXPECT_GT(r["npus"][0]["compute_ns"].get<double>(), 0);
}

// With ASTRA-sim's issue policy (one collective or send in flight per NPU, in node-id order) the
// 3-D traces deadlock as they do in ASTRA-sim: on gpt_tp2pp2_L4, rank 2 enters a reduce-scatter of
// group 6 while rank 3 has entered an all-gather of the same group, and each waits for the other.
// The stall report names both. wafersim's default issues collectives concurrently and finishes.
TEST(StgTrace, AstraSimIssueOrderDeadlocksAndIsExplained) {
  auto r =
      wafersim::testing::wafersim("run " + astra(4, "Ring_4chunks_roofline.json") +
                                  " --fidelity message --set npu.comm_order=node_id --workload " +
                                  source(kData + "chakra-traces/stg/gpt_tp2pp2_L4/workload"));
  EXPECT_EQ(r.exit_code, 3);
  for (const char* w : {"rank 2", "REDUCE_SCATTER group '6'", "rank 3", "ALL_GATHER group '6'",
                        "waits for a message from rank"})
    EXPECT_NE(r.err.find(w), std::string::npos) << w << " not in: " << r.err;
}
