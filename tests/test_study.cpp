// Parameter studies: a grid expands to runs, runs execute as processes, failures become rows.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tb/chakra/generator.h"
#include "tests/testing.h"

using wafersim::testing::source;

TEST(Study, GridRunsAndFailedRunIsARow) {
  std::string dir = wafersim::testing::temp_dir("study");
  std::ofstream(dir + "/s.yaml") << "name: t\nbase:\n  platform: "
                                 << source("configs/ring_8npus.yaml") << "\n  workload: "
                                 << source(
                                        "tests/data/astra-sim-examples/workload/microbenchmarks/"
                                        "all_reduce/8npus_1MB/all_reduce")
                                 << "\ngrid:\n  network.link_bandwidth_gbps: [25, 100, -1]\n";
  auto r = wafersim::testing::wafersim("study " + dir + "/s.yaml --out " + dir + "/out -j 2");
  EXPECT_EQ(r.exit_code, 2) << "a study with a failed run exits 2: " << r.err;
  std::ifstream csv(dir + "/out/results.csv");
  std::vector<std::string> lines;
  for (std::string line; std::getline(csv, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0].rfind("run,network.link_bandwidth_gbps,status,exit_code,makespan_ns", 0), 0u);
  EXPECT_NE(lines[1].find(",finished,0,"), std::string::npos) << lines[1];
  EXPECT_NE(lines[3].find("must be >= 0.001"), std::string::npos) << lines[3];
  // Four times the bandwidth: the bandwidth-bound part of the time shrinks about fourfold.
  auto makespan = [](const std::string& l) {
    size_t p = l.find(",finished,0,") + 12;
    return std::stod(l.substr(p, l.find(',', p) - p));
  };
  EXPECT_GT(makespan(lines[1]) / makespan(lines[2]), 2.0);
}

// Ctrl-C on a study (SIGINT to its whole process group, as a terminal sends it): the run in
// progress stops and reports, no further run starts, and results.csv lists them all.
TEST(Study, InterruptWritesResultsForTheRunsDone) {
  std::string dir = wafersim::testing::temp_dir("study");
  wafersim::chakra::MicrobenchmarkSpec spec;
  spec.ranks = 64;
  spec.bytes = 1ull << 30;
  wafersim::chakra::write_microbenchmark(dir + "/ar", spec);
  std::ofstream(dir + "/s.yaml") << "base:\n  platform: " << source("configs/ring_8npus.yaml")
                                 << "\n  workload: ar\n  set: [network.npus=64]\n"
                                 << "grid:\n  network.link_latency_ns: [500, 600, 700]\n";
  const std::string out = dir + "/out";
  // Three seconds in, the first run (about a minute in all) is under way.
  EXPECT_EQ(wafersim::testing::wafersim_stopped({"study", dir + "/s.yaml", "--out", out, "-j", "1"},
                                                3, SIGINT, dir),
            130);
  std::ifstream csv(out + "/results.csv");
  std::vector<std::string> lines;
  for (std::string line; std::getline(csv, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_NE(lines[1].find(",interrupted,130,"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find(",not run,"), std::string::npos) << lines[2];
  EXPECT_NE(lines[3].find(",not run,"), std::string::npos) << lines[3];
}

// results.csv keeps every digit of the report's numbers, and no more (shortest round trip).
TEST(Study, ResultsKeepTheReportsNumbersExactly) {
  std::string dir = wafersim::testing::temp_dir("study");
  std::ofstream(dir + "/s.yaml") << "base:\n  platform: " << source("configs/ring_8npus.yaml")
                                 << "\n  workload: "
                                 << source(
                                        "tests/data/astra-sim-examples/workload/microbenchmarks/"
                                        "all_reduce/8npus_1MB/all_reduce")
                                 << "\ngrid:\n  network.link_bandwidth_gbps: [33.3]\n";
  auto r = wafersim::testing::wafersim("study " + dir + "/s.yaml --out " + dir + "/out");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream csv(dir + "/out/results.csv");
  std::string header, row;
  std::getline(csv, header);
  std::getline(csv, row);
  std::ifstream rf(dir + "/out/run000/report.json");
  nlohmann::json report;
  rf >> report;
  const std::string makespan = fmt::format("{}", report["makespan_ns"].get<double>());
  EXPECT_NE(row.find("," + makespan + ","), std::string::npos) << row << " vs " << makespan;
  EXPECT_EQ(std::stod(makespan), report["makespan_ns"].get<double>());
}

// A study that writes its own workload (base.generate) and names its columns freely: each grid
// value is a mapping whose `value` is the column's text and whose other keys are run options.
// bw_utilization is the mean over the run's collectives of ideal / measured time.
TEST(Study, GeneratedWorkloadNamedValuesAndUtilisation) {
  std::string dir = wafersim::testing::temp_dir("study");
  std::ofstream(dir + "/s.yaml") << "base:\n  platform: " << source("configs/ring_8npus.yaml")
                                 << "\n  generate: {collective: all_reduce, ranks: 8, bytes: 1}\n"
                                 << "grid:\n  variant:\n"
                                 << "    - {value: slow, set: [network.link_bandwidth_gbps=25]}\n"
                                 << "    - {value: fast, network.link_bandwidth_gbps: 100}\n"
                                 << "  size_bytes:\n    - {value: 1048576, size-unit: 1048576}\n";
  auto r = wafersim::testing::wafersim("study " + dir + "/s.yaml --out " + dir + "/out");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::ifstream(dir + "/out/workload/microbenchmark.7.et").good());
  std::ifstream csv(dir + "/out/results.csv");
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(csv, line);) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
    rows.push_back(cells);
  }
  ASSERT_EQ(rows.size(), 3u);
  auto col = [&](const std::string& name) {
    auto it = std::find(rows[0].begin(), rows[0].end(), name);
    EXPECT_NE(it, rows[0].end()) << name;
    return it - rows[0].begin();
  };
  EXPECT_EQ(rows[0][1], "variant");
  EXPECT_EQ(rows[0][2], "size_bytes");
  EXPECT_EQ(rows[1][1], "slow");
  EXPECT_EQ(rows[2][1], "fast");
  // Ideal all-reduce on a ring of 8: 2 S (n-1)/n over the NPU's two links.
  for (size_t i = 1; i <= 2; ++i) {
    const double link_gbps = i == 1 ? 25 : 100;
    const double ideal_ns = 2.0 * 1048576 * 7 / 8 / (2 * link_gbps);
    const double makespan = std::stod(rows[i][col("makespan_ns")]);
    const double utilisation = std::stod(rows[i][col("bw_utilization")]);
    EXPECT_GT(utilisation, 0.0);
    EXPECT_LE(utilisation, 1.0);
    EXPECT_NEAR(utilisation * makespan, ideal_ns, 0.01 * ideal_ns) << rows[i][1];
  }
}

TEST(Study, BadGenerateAndNamedValuesAreInputErrors) {
  std::string dir = wafersim::testing::temp_dir("study");
  const std::string platform = source("configs/ring_8npus.yaml");
  struct Case {
    std::string yaml, message;
  };
  const std::vector<Case> cases = {
      {"base:\n  generate: {collective: all_reduce, ranks: 0}\ngrid:\n  fidelity: [packet]\n",
       "key 'base.generate.ranks': '0' is not a whole number in [1, 4096]"},
      {"base:\n  generate: {collective: allreduce}\ngrid:\n  fidelity: [packet]\n",
       "key 'base.generate.collective'"},
      {"base:\n  generate: {ranks: 8, size: 3}\ngrid:\n  fidelity: [packet]\n",
       "key 'base.generate.size': unknown key"},
      {"base:\n  workload: x\n  generate: {ranks: 8}\ngrid:\n  fidelity: [packet]\n",
       "give either base.workload or base.generate"},
      {"grid:\n  variant: [{platform: p.yaml}]\n", "needs 'value:'"},
      {"grid:\n  variant: [slow]\n", "a grid column of another name takes its values as mappings"},
      {"grid:\n  case: [{value: a, workload: w, generate: {ranks: 8}}]\n",
       "a value gives either workload or generate"},
      {"base:\n  workload: w\ngrid:\n  case: [{value: a, generate: {ranks: 8}}]\n",
       "base.workload: given with grid values that generate their own workload"},
      {"grid:\n  case: [{value: a, generate: {parallelism: '2,5,2', group: tp}}]\n",
       "key 'case.generate.parallelism': unknown group 'tp'"},
      {"grid:\n  case: [{value: a, generate: {parallelism: '2,5', group: dp}}]\n",
       "expected MP,DP,PP"},
  };
  for (const auto& c : cases) {
    std::ofstream(dir + "/s.yaml") << c.yaml;
    auto r = wafersim::testing::wafersim("study " + dir + "/s.yaml --out " + dir + "/out");
    EXPECT_NE(r.exit_code, 0) << c.yaml;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.yaml << "\n" << r.err;
    EXPECT_NE(r.err.find("s.yaml"), std::string::npos) << r.err;
  }
}
