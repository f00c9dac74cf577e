// Parameter studies: a grid expands to runs, runs execute as processes, failures become rows.
#include <gtest/gtest.h>

#include <fstream>

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
