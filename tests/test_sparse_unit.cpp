// The sparse unit on the NPU (hw/sparse) driven by Chakra traces: a sparse COMP node takes the
// cycles models/sparse gives its job, on the NPU's clock; jobs queue on the unit while the compute
// engine works beside it; `auto` formats resolve to sparse-advise's choice; a generated pruned MLP
// runs end to end with its gradient all-reduces.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tb/chakra/sparse_node.h"
#include "tb/chakra/sparse_workload.h"
#include "tb/chakra/trace.h"
#include "tests/testing.h"

namespace wafersim {
namespace {

using chakra::NodeKind;
using chakra::SparseAttrs;
using chakra::TraceNode;

SparseAttrs spmv_csr() {
  SparseAttrs s;
  s.op = "spmv";
  s.in_format = "csr";
  s.rows = 4096;
  s.cols = 4096;
  s.density = 0.05;
  return s;
}

// Every one of `ranks` ranks runs these nodes.
std::string write_nodes(const std::string& name, int ranks, const std::vector<TraceNode>& nodes) {
  const std::string dir = testing::temp_dir(name);
  chakra::Trace t;
  t.nodes = nodes;
  for (int r = 0; r < ranks; ++r) chakra::write_trace(dir + "/w." + std::to_string(r) + ".et", t);
  return dir + "/w";
}

TraceNode sparse_node(uint64_t id, const SparseAttrs& s, std::vector<uint64_t> deps = {}) {
  TraceNode n;
  n.id = id;
  n.name = "sparse_" + std::to_string(id);
  n.kind = NodeKind::Compute;
  n.sparse = s;
  n.data_deps = std::move(deps);
  return n;
}

// A pruned MLP on 8 ranks (tb/chakra/sparse_workload.h); returns its prefix.
std::string write_mlp(const std::string& name, int layers, uint64_t hidden, uint64_t batch,
                      std::vector<double> densities) {
  chakra::SparseMlpSpec spec;
  spec.ranks = 8;
  spec.layers = layers;
  spec.hidden = hidden;
  spec.batch = batch;
  spec.densities = std::move(densities);
  const std::string dir = testing::temp_dir(name);
  chakra::write_sparse_mlp(dir + "/mlp", spec);
  return dir + "/mlp";
}

uint64_t model_cycles(const SparseAttrs& s, double clock_ghz = 1.0) {
  sparse::UnitParams unit;
  unit.clock_ghz = clock_ghz;  // HBM's bytes per cycle depend on it
  return sparse::time_job(chakra::sparse_job(s, unit), unit).cycles;
}

TEST(SparseUnit, ASparseNodeTakesItsJobsCyclesOnTheNpuClock) {
  const uint64_t cycles = model_cycles(spmv_csr(), 2.0);
  ASSERT_GT(cycles, 1000u);
  // At 2 GHz every cycle is half a nanosecond.
  const auto report = testing::run_report(
      "--platform " + testing::source("configs/ring_8npus.yaml") + " --set npu.clock_ghz=2 " +
      "--workload " + write_nodes("one", 8, {sparse_node(0, spmv_csr())}));
  ASSERT_EQ(report["status"], "finished");
  for (const auto& npu : report["npus"]) {
    EXPECT_DOUBLE_EQ(npu["finish_ns"].get<double>(), cycles / 2.0);
    EXPECT_EQ(npu["sparse_unit"]["jobs"], 1);
    EXPECT_EQ(npu["sparse_unit"]["cycles"], cycles);
  }
}

TEST(SparseUnit, JobsQueueOnTheUnitWhileTheComputeEngineWorksBesideIt) {
  SparseAttrs convert = spmv_csr();
  convert.op = "convert";
  convert.in_format = "coo";
  convert.out_format = "csc";
  const uint64_t a = model_cycles(spmv_csr()), b = model_cycles(convert);
  TraceNode dense;
  dense.id = 2;
  dense.name = "gemm";
  dense.kind = NodeKind::Compute;
  dense.duration_micros = 1000;  // longer than both sparse jobs together
  ASSERT_LT(a + b, 1000000u);
  const auto report = testing::run_report(
      "--platform " + testing::source("configs/ring_8npus.yaml") + " --workload " +
      write_nodes("queue", 8, {sparse_node(0, spmv_csr()), sparse_node(1, convert)}));
  EXPECT_DOUBLE_EQ(report["npus"][0]["finish_ns"].get<double>(), static_cast<double>(a + b));
  const auto beside = testing::run_report(
      "--platform " + testing::source("configs/ring_8npus.yaml") + " --workload " +
      write_nodes("beside", 8, {sparse_node(0, spmv_csr()), sparse_node(1, convert), dense}));
  EXPECT_DOUBLE_EQ(beside["npus"][0]["finish_ns"].get<double>(), 1e6);
  EXPECT_DOUBLE_EQ(beside["npus"][0]["sparse_unit"]["busy_ns"].get<double>(),
                   static_cast<double>(a + b));
}

TEST(SparseUnit, AutoFormatsAreTheAdvisedOnes) {
  SparseAttrs s = spmv_csr();
  s.in_format = "auto";
  s.density = 0.0005;
  const sparse::UnitParams unit;
  const sparse::SparseJob job = chakra::sparse_job(s, unit);
  sparse::UnitParams with_layout = unit;
  with_layout.layout = *job.layout;
  EXPECT_EQ(job.in, sparse::advise(job.a, sparse::SparseOp::Spmv, 1, with_layout).recommended);
  s.op = "convert";
  s.out_format = "auto";
  const sparse::SparseJob convert = chakra::sparse_job(s, unit);
  EXPECT_EQ(convert.in, sparse::Format::Dense);  // a dense tensor, compressed
  EXPECT_EQ(convert.out, sparse::advise(job.a, std::nullopt, 1, with_layout).recommended);
  EXPECT_NE(convert.out, sparse::Format::Dense);
}

TEST(SparseUnit, AGeneratedPrunedMlpRunsItsLayersOnTheUnitsAndItsGradientsOnTheNetwork) {
  const auto report =
      testing::run_report("--platform " + testing::source("configs/ring_8npus.yaml") +
                          " --workload " + write_mlp("mlp", 5, 512, 32, {0.5, 0.05}));
  ASSERT_EQ(report["status"], "finished");
  EXPECT_EQ(report["collectives"].size(), 5u);
  // Layers 0, 2, 4 keep half of 512 x 512 fp16 weights, 1 and 3 a twentieth.
  // Backward runs from layer 4, so the first all-reduce is 4's, the second 3's.
  EXPECT_EQ(report["collectives"][0]["bytes"], 131072u * 2);
  EXPECT_EQ(report["collectives"][1]["bytes"], 13108u * 2);  // ceil(262,144 x 0.05)
  for (const auto& npu : report["npus"]) EXPECT_EQ(npu["sparse_unit"]["jobs"], 10);
}

}  // namespace
}  // namespace wafersim

namespace wafersim {
namespace {

TEST(SparseStudy, EveryCaseIsARowWhoseSpeedupIsSoftwareOverTheUnit) {
  const std::string dir = testing::temp_dir("sparse_study");
  std::ofstream(dir + "/s.yaml") << "shapes: [64x32, 16x200]\n"
                                    "densities: [0.05, 0.5]\n"
                                    "structures: [uniform, block]\n"
                                    "conversions: [coo->csr, csr->csc, csr->rlc]\n"
                                    "repeats: 1\n";
  const auto r = testing::wafersim("sparse-study " + dir + "/s.yaml --out " + dir + "/out");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream csv(dir + "/out/results.csv");
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line, "shape,structure,density,nnz,from,to,hw_ns,sw_ns,speedup,sw_impl,hw_bound");
  int rows = 0;
  while (std::getline(csv, line)) {
    std::vector<std::string> f;
    std::stringstream s(line);
    for (std::string x; std::getline(s, x, ',');) f.push_back(x);
    ASSERT_EQ(f.size(), 11u) << line;
    const double hw = std::stod(f[6]), sw = std::stod(f[7]), speedup = std::stod(f[8]);
    EXPECT_GT(hw, 0);
    EXPECT_NEAR(speedup, sw / hw, 1e-3 * speedup + 1e-3) << line;
    EXPECT_EQ(f[9], f[5] == "rlc" ? "wafersim-codecs" : "eigen") << line;
    ++rows;
  }
  EXPECT_EQ(rows, 2 * 2 * 2 * 3);
  std::ifstream map(dir + "/out/compactness.csv");
  int map_rows = -1;
  while (std::getline(map, line)) ++map_rows;
  EXPECT_EQ(map_rows, 4);
}

}  // namespace
}  // namespace wafersim

namespace wafersim {
namespace {

// `run --data`: each NPU's unit makes its operands, computes with its streaming datapath and checks
// the values against models/sparse; its cycles are then counted on those matrices, within a few
// cycles a block of the even spread's.
TEST(SparseUnit, InDataModeEveryJobIsComputedAndChecked) {
  const std::string args = "--platform " + testing::source("configs/ring_8npus.yaml") +
                           " --workload " + write_mlp("mlp_data", 2, 256, 8, {0.3, 0.02});
  const auto data = testing::run_report(args + " --data");
  EXPECT_EQ(data["data_check"]["status"], "pass");
  EXPECT_EQ(data["data_check"]["sparse_jobs_checked"], 8 * 4);
  EXPECT_EQ(data["data_check"]["sparse_jobs_without_data"], 0);
  const auto even = testing::run_report(args);
  const double a = data["npus"][0]["sparse_unit"]["cycles"].get<double>();
  const double b = even["npus"][0]["sparse_unit"]["cycles"].get<double>();
  EXPECT_NEAR(a, b, 0.02 * b);
}

}  // namespace
}  // namespace wafersim
