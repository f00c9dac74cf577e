// In-network flows on a tree of Fred switches (configs/fred_b.yaml, fred_d.yaml) against closed
// forms: a flow streams at the narrowest link of its tree, an NPU sends its data once instead of
// an endpoint ring's 2 (N - 1) / N times, flows spread over the uplinks, and every in-switch
// collective leaves every rank with the reference result.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tb/chakra/generator.h"
#include "tb/chakra/trace.h"
#include "tests/testing.h"

using namespace wafersim;
using wafersim::testing::source;
using wafersim::testing::temp_dir;

namespace {

constexpr double kHeader = 1.0 + 6.0 / 4096;  // the configs' 6 B header per 4 KB packet

// Writes one `collective` of `bytes` over `ranks` ranks and returns its prefix.
std::string workload(const std::string& name, const char* collective, uint64_t bytes,
                     int ranks = 20) {
  chakra::MicrobenchmarkSpec spec;
  spec.collective = chakra::collective_from_string(collective);
  spec.bytes = bytes;
  spec.ranks = ranks;
  const std::string prefix = temp_dir(name) + "/w";
  chakra::write_microbenchmark(prefix, spec);
  return prefix;
}

nlohmann::json run(const char* config, const std::string& prefix, const std::string& sets) {
  return wafersim::testing::run_report("--platform " + source(config) + " --workload " + prefix +
                                       " --set " + sets);
}

double link_bytes(const nlohmann::json& report, const std::string& src, const std::string& dst) {
  for (const auto& l : report["links"])
    if (l["src"] == src && l["dst"] == dst) return l["bytes"].get<double>();
  ADD_FAILURE() << src << "->" << dst;
  return 0;
}

}  // namespace

// Fred-D, one chunk: an all-reduce, reduce-scatter, reduce or broadcast of B bytes is one stream
// of B per NPU (the reduce-scatter's n serial reduces add up to B) at the 3 TB/s of every link
// on the way: B / 3,000 ns plus 4 links of 20 ns, 3 switches of 8 to 10 cycles and the headers. An
// all-gather of s bytes per rank is 20 multicasts one after another: each NPU's link from its
// leaf carries 19 of them, and the leaf's downlink all 20 (a collective's flows take one uplink),
// 20 s / 3,000. At packet fidelity too, packet by packet, with buffers deep enough to cover the
// credits' round trip (480 flits: 240 KB per VC; the next test takes the config's 24 KB).
TEST(FredFabric, InSwitchCollectivesStreamAtTheLinkRate) {
  const uint64_t bytes = 4 << 20;
  for (const char* fidelity : {"message", "packet"}) {
    const std::string sets = std::string(
                                 "collectives.dataset_splits=1 fabric.buffer_flits=480 "
                                 "fabric.fidelity=") +
                             fidelity;
    for (const char* collective : {"all_reduce", "reduce_scatter", "reduce", "broadcast"}) {
      const double t =
          run("configs/fred_d.yaml", workload(collective, collective, bytes), sets)["makespan_ns"]
              .get<double>();
      EXPECT_GE(t, bytes / 3000.0) << collective << " " << fidelity;
      EXPECT_LT(t, bytes * kHeader / 3000.0 + 120) << collective << " " << fidelity;
    }
    const uint64_t input = 256 << 10;
    const double t =
        run("configs/fred_d.yaml", workload("all_gather", "all_gather", input), sets)["makespan_ns"]
            .get<double>();
    EXPECT_GE(t, 19 * input / 3000.0) << fidelity;
    EXPECT_LT(t, 20 * input * kHeader / 3000.0 + 120) << fidelity;
  }
}

// At packet fidelity a contribution's packet holds its slot in the leaf's input buffer until the
// sum has left, and the slot's credit then takes the credit delay to come back: an NPU has at
// most its window in flight per round trip, and the round trip grows with the link's latency.
// The config's 24 KB per VC (48 flits of 512 B) holds 5 packets of 4,102 wire bytes (9 flits
// each), and a flow keeps to its traffic class's one VC: a window of 5 packets, W = 20,510 B.
// Each nanosecond more of link latency then costs B / W ns (the 3 TB/s link would need 60 KB per
// 20 ns to stay busy, so the window, not the link, sets the rate).
TEST(FredFabric, PacketFlowsAreBoundByTheirCreditWindow) {
  const uint64_t bytes = 64 << 20;
  const std::string prefix = workload("window", "all_reduce", bytes);
  std::map<int, double> t;
  for (int latency : {20, 40})
    t[latency] = run("configs/fred_d.yaml", prefix,
                     "collectives.dataset_splits=1 fabric.fidelity=packet "
                     "network.link_latency_ns=" +
                         std::to_string(latency))["makespan_ns"]
                     .get<double>();
  const double window = 5 * (4096 + 6);
  EXPECT_NEAR(t[40] - t[20], 20 * bytes / window, 0.01 * 20 * bytes / window);
  EXPECT_GT(t[20], 4 * bytes / 3000.0);  // under a quarter of the link's rate
}

// A Fred switch's traversal is its Fred_m(P)'s blocks, fabric.fred_stage_cycles each. Fred-D's
// leaves have 12 ports (4 NPUs, 4 uplinks, 4 I/O controllers; leaves 3 and 4 have 3 controllers:
// 11): Fred_3(12) = input stage + Fred_3(6) + output stage, Fred_3(6) = 2 + Fred_3(3), a base
// switch: 5 blocks (Fred_3(11): 11 is odd, 5 pairs and the odd port around Fred_3(6): 5 too). Its
// spine has 20 (5 leaves x 4 uplinks): 20 -> 10 -> 5 -> the base Fred_3(3) (5 is odd: 2 pairs and
// the odd port), 2 + 2 + 2 + 1 = 7. A wafer-wide all-reduce of one chunk crosses leaf, spine and
// leaf: every extra cycle per block adds 5 + 7 + 5 = 17 cycles (1 ns each) to its time.
TEST(FredFabric, EachInterconnectStageAddsItsCycles) {
  const std::string prefix = workload("stages", "all_reduce", 64 << 10);
  std::map<int, double> t;
  for (int cycles : {0, 1, 4})
    t[cycles] = run("configs/fred_d.yaml", prefix,
                    "collectives.dataset_splits=1 fabric.fred_stage_cycles=" +
                        std::to_string(cycles))["makespan_ns"]
                    .get<double>();
  EXPECT_DOUBLE_EQ(t[1] - t[0], 17);
  EXPECT_DOUBLE_EQ(t[4] - t[1], 3 * 17);
}

// A switch loads a communication phase's configuration before the phase's first flow leaves it.
// Two all-reduces one after the other, one chunk each: each flow passes leaf, spine and leaf
// again, and the leaf already holds its phase on the way down, so every collective waits for two
// loads in a row: 2 x 2 x 100 cycles (1 ns each) in all. At packet fidelity too (with buffers
// deep enough that the NPUs do not wait for credits meanwhile: with the config's, the packets
// they send during a load are buffered, and part of it is hidden).
TEST(FredFabric, EachPhaseWaitsForItsConfiguration) {
  chakra::MicrobenchmarkSpec spec;
  spec.bytes = 64 << 10;
  spec.ranks = 20;
  spec.iterations = 2;
  const std::string prefix = temp_dir("phases") + "/w";
  chakra::write_microbenchmark(prefix, spec);
  for (const char* fidelity : {"message", "packet"}) {
    std::map<int, double> t;
    for (int cycles : {0, 100})
      t[cycles] = run("configs/fred_d.yaml", prefix,
                      std::string("collectives.dataset_splits=1 fabric.buffer_flits=480 "
                                  "fabric.fidelity=") +
                          fidelity + " fabric.fred_reconfiguration_cycles=" +
                          std::to_string(cycles))["makespan_ns"]
                      .get<double>();
    // Within a cycle: at packet fidelity a packet on a 3 TB/s link ends mid-cycle.
    EXPECT_NEAR(t[100] - t[0], 2 * 2 * 100, 1) << fidelity;
  }
}

namespace {

// Collectives issued at once, each over its own communicator (group i + 1, with a traffic class),
// written as a workload of `ranks` ranks (every rank in at least one); returns its prefix.
struct Collective {
  chakra::CollectiveKind kind;
  uint64_t bytes;
  std::vector<int> ranks;
  const char* traffic_class;
};
std::string write_collectives(const std::string& name, int ranks,
                              const std::vector<Collective>& collectives) {
  const std::string dir = temp_dir(name);
  nlohmann::json groups;
  std::vector<chakra::Trace> traces(static_cast<size_t>(ranks));
  for (size_t g = 0; g < collectives.size(); ++g) {
    const Collective& c = collectives[g];
    const std::string group = std::to_string(g + 1);
    groups[group] = {{"ranks", c.ranks}, {"class", c.traffic_class}};
    for (int r : c.ranks) {
      chakra::TraceNode n;
      n.id = traces[static_cast<size_t>(r)].nodes.size();
      n.name = std::string(chakra::to_string(c.kind)) + "_" + group;
      n.kind = chakra::NodeKind::Collective;
      n.comm_type = static_cast<int64_t>(c.kind);
      n.comm_size = c.bytes;
      n.pg_name = group;
      traces[static_cast<size_t>(r)].nodes.push_back(n);
    }
  }
  for (int r = 0; r < ranks; ++r) {
    traces[static_cast<size_t>(r)].version = "0.0.4";
    chakra::write_trace(dir + "/w." + std::to_string(r) + ".et", traces[static_cast<size_t>(r)]);
  }
  std::ofstream(dir + "/workload.json") << groups.dump();
  return dir + "/w";
}

// Each collective's end, ns, by group.
std::map<std::string, double> ends(const nlohmann::json& report) {
  std::map<std::string, double> end;
  for (const auto& c : report["collectives"]) end[c["group"]] = c["end_ns"].get<double>();
  return end;
}

// Two all-reduces of 4 MiB over the same 8 NPUs (Fred-D's first two leaves) issued at once, the
// first by a communicator of class `first`, the second of class `second`; returns each one's end.
std::pair<double, double> two_classes(const std::string& name, const char* first,
                                      const char* second) {
  const std::vector<int> eight{0, 1, 2, 3, 4, 5, 6, 7};
  const auto prefix =
      write_collectives(name, 8,
                        {{chakra::CollectiveKind::AllReduce, 4 << 20, eight, first},
                         {chakra::CollectiveKind::AllReduce, 4 << 20, eight, second}});
  const auto end = ends(run("configs/fred_d.yaml", prefix,
                            "network.npus=8 collectives.dataset_splits=1 fabric.fidelity=packet "
                            "fabric.buffer_flits=480"));
  return {end.at("1"), end.at("2")};
}

}  // namespace

// Traffic classes at packet fidelity: a NIC and a Fred switch serve MP before PP before DP, packet
// by packet, each class on its own VC. Two all-reduces of B = 4 MiB over the same 8 NPUs, issued
// at once: the higher class's streams as if alone (B / 3 TB/s plus the path, under 1,520 ns, as
// InSwitchCollectivesStreamAtTheLinkRate), whichever was issued first, and the other follows
// (at least 2 B / 3 TB/s). Classes of equal priority go in the order they were issued.
TEST(FredFabric, HigherTrafficClassesGoFirst) {
  const double alone = (4 << 20) * kHeader / 3000.0 + 120;
  const double both = 2 * (4 << 20) / 3000.0;
  struct Case {
    const char* first;   // the class of the collective issued first
    const char* second;  // and of the other
    bool second_goes_first;
  };
  for (const Case& c : {Case{"dp", "mp", true}, Case{"mp", "dp", false}, Case{"dp", "pp", true},
                        Case{"pp", "dp", false}, Case{"pp", "mp", true}, Case{"mp", "mp", false}}) {
    const auto [first, second] =
        two_classes(std::string("classes_") + c.first + "_" + c.second, c.first, c.second);
    const std::string name = std::string(c.first) + " then " + c.second;
    EXPECT_LT(c.second_goes_first ? second : first, alone) << name;
    EXPECT_GE(c.second_goes_first ? first : second, both) << name;
  }
}

// The traffic fact of PAPERS.md section 1: an endpoint all-reduce sends 2 (N - 1) / N x D per
// NPU, an in-network one D. Measured on NPU 0's link into its leaf: Fred-D's in-switch flows
// against Fred-C's ring (the same tree, its switches carrying unicasts), both at message fidelity.
TEST(FredFabric, AnInNetworkAllReduceSendsHalfTheTraffic) {
  const uint64_t bytes = 8 << 20;
  const std::string prefix = workload("traffic", "all_reduce", bytes);
  const auto fred_d = run("configs/fred_d.yaml", prefix, "collectives.dataset_splits=4");
  const auto fred_c =
      run("configs/fred_c.yaml", prefix, "fabric.fidelity=message collectives.dataset_splits=4");
  const double in_network = link_bytes(fred_d, "npu0", "leaf0");
  const double ring = link_bytes(fred_c, "npu0", "leaf0");
  EXPECT_NEAR(in_network, bytes * kHeader, bytes * 1e-3);
  EXPECT_NEAR(ring, 2.0 * 19 / 20 * bytes * kHeader, bytes * 1e-3);
  // A leaf sends the spine one sum of its four NPUs' data, and gets one total back, all on one
  // uplink (the collective's instance, 0, mod 4): its chunks pass the NPUs' ports one after the
  // other anyway.
  for (const char* dir : {"up", "down"})
    for (int k = 0; k < 4; ++k) {
      const std::string u = ".u" + std::to_string(k);
      const double b = dir == std::string("up") ? link_bytes(fred_d, "leaf0", "spine" + u)
                                                : link_bytes(fred_d, "spine", "leaf0" + u);
      EXPECT_NEAR(b, k == 0 ? bytes * kHeader : 0, bytes * 1e-3) << dir << u;
    }
}

// Fred-B's uplinks are 375 GB/s, four per leaf. A port of a Fred switch serves one flow at a time,
// so a collective's chunks pass its NPUs' ports one after the other: a wafer-wide all-reduce of B
// takes B / 375 with 1 chunk in flight or 4. Collectives with ports of their own run side by side
// on uplinks of their own: the 4 DP all-reduces of MP(2)-DP(5)-PP(2) (one NPU in each leaf each,
// instances 0 to 3, so uplinks 0 to 3) take B / 375 together, not 4 B / 375. With one middle
// fewer than the paper's (Fred_2(P)), the same flows still route, and the times do not change.
TEST(FredFabric, APortServesOneFlowAtATimeAndCollectivesSpreadOverTheUplinks) {
  const uint64_t bytes = 3 << 20;
  const std::string prefix = workload("uplinks", "all_reduce", bytes);
  const auto expect = [&](double t, const std::string& what) {
    EXPECT_GE(t, bytes / 375.0) << what;
    EXPECT_LT(t, bytes * kHeader / 375.0 + 4 * 120) << what;
  };
  for (int active : {1, 4})
    expect(run("configs/fred_b.yaml", prefix,
               "collectives.dataset_splits=4 collectives.active_chunks=" +
                   std::to_string(active))["makespan_ns"]
               .get<double>(),
           std::to_string(active) + " chunks in flight");
  chakra::MicrobenchmarkSpec spec;
  spec.bytes = bytes;
  chakra::apply_parallelism(spec, {"2,5,2", "dp"}, false);
  const std::string dp = temp_dir("dp") + "/w";
  chakra::write_microbenchmark(dp, spec);
  for (const char* middles : {"3", "2"})
    expect(run("configs/fred_b.yaml", dp,
               std::string("collectives.dataset_splits=4 fabric.fred_middles=") +
                   middles)["makespan_ns"]
               .get<double>(),
           std::string("4 DP all-reduces, m = ") + middles);
}

// Three broadcasts of B into leaf 1 at once (from NPUs 0, 1 and 2 of leaf 0: to NPU 4, to NPU 6,
// to NPUs 5 and 7; the corpus's fred_clash) clash pairwise in leaf 1's interconnect (12 ports: 4
// NPUs, 4 uplinks, 4 I/O controllers). Fred_3(12) carries them side by side; Fred_2(12) cannot, and
// the third waits for one of the others to pass: one more stream of B / 3,000 ns. With
// fabric.fred_conflicts: error the run stops naming them.
TEST(FredFabric, FlowsTheMiddlesCannotCarryTogetherWaitOrAreReported) {
  chakra::MicrobenchmarkSpec spec;
  spec.collective = chakra::CollectiveKind::Broadcast;
  spec.ranks = 20;
  spec.groups = {{0, 4}, {1, 6}, {2, 5, 7}, {3, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}};
  const std::string prefix = temp_dir("clash") + "/w";
  chakra::write_microbenchmark(prefix, spec);
  nlohmann::json control;
  const auto time = [&](const char* middles) {
    const auto report =
        run("configs/fred_d.yaml", prefix,
            std::string("collectives.dataset_splits=1 fabric.fred_middles=") + middles);
    control = report["fred_control"];
    return report["makespan_ns"].get<double>();
  };
  // Each broadcast is configured ahead around the ones held (leaf 1's flows on the way down):
  // the middles leave room for all three on Fred_3(12), for two on Fred_2(12), where the third,
  // configured alone, waits for one of the others to pass and then takes its configured route.
  const double three = time("3");
  // The three: up at leaf 0, the spine, down at leaf 1; the fourth also down at leaves 2-4.
  EXPECT_EQ(control["configured_routes"], 3 * 3 + 5) << control;
  EXPECT_EQ(control["online_routes"], 0) << control;
  const double two = time("2");
  EXPECT_EQ(control["configured_routes"], 3 * 3 + 5) << control;
  EXPECT_EQ(control["online_routes"], 0) << control;
  EXPECT_LT(three, spec.bytes * kHeader / 3000.0 + 120);
  EXPECT_NEAR(two - three, spec.bytes * kHeader / 3000.0, 2);
  const auto r = wafersim::testing::wafersim(
      "run --quiet --platform " + source("configs/fred_d.yaml") + " --workload " + prefix +
      " --set fabric.fred_middles=2 fabric.fred_conflicts=error --out " + temp_dir("clash_out"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot all be routed on Fred_2(12)"), std::string::npos) << r.err;
}

// The control unit computes each collective's routing configurations when it is issued, before its
// flows move, around the configurations of the collectives under way (PAPERS.md section 1). The
// DP all-reduces of MP(2)-DP(5)-PP(2) on Fred-D, 2 chunks: 4 groups of one NPU per leaf, so each
// chunk's flow passes the 5 leaves twice (up and down) and the spine once: 4 x 2 x 11 = 88 routes,
// every one the configured one, with 3 middles or 2. A switch's two chunks of one group share its
// ports and take them in turns: 2 configurations per collective per switch, 4 x 2 x 6 = 48. At
// packet fidelity the configurations are computed as well and the links arbitrate (no routes
// taken).
TEST(FredFabric, EveryFlowTakesTheRouteItsPhaseWasConfiguredWith) {
  chakra::MicrobenchmarkSpec spec;
  spec.bytes = 8 << 20;
  chakra::apply_parallelism(spec, {"2,5,2", "dp"}, false);
  const std::string prefix = temp_dir("configured") + "/w";
  chakra::write_microbenchmark(prefix, spec);
  for (const char* sets :
       {"fabric.fred_middles=3", "fabric.fred_middles=2", "fabric.fidelity=packet"}) {
    const auto control = run("configs/fred_d.yaml", prefix,
                             std::string("collectives.dataset_splits=2 ") + sets)["fred_control"];
    const bool packet = std::string(sets).find("packet") != std::string::npos;
    EXPECT_EQ(control["configurations"], 48) << sets;
    EXPECT_EQ(control["configured_routes"], packet ? 0 : 88) << sets;
    EXPECT_EQ(control["online_routes"], 0) << sets;
  }
}

// The clash above with the first two broadcasts 4 times longer (4 MiB, the third 1 MiB): on
// Fred_2(12) the third waits for them to pass (4 MiB / 3 TB/s), then streams. With
// fabric.fred_conflicts: unicast it goes at once as one flow per output, to NPU 5 and then to
// NPU 7, each a unicast the two middles carry beside the others: 2 x 1 MiB / 3 TB/s, and every NPU
// still gets the root's data.
TEST(FredFabric, AFlowSplitIntoUnicastsGoesAtOnce) {
  const uint64_t long_bytes = 4 << 20, short_bytes = 1 << 20;
  const std::vector<int> rest{3, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19};
  const auto prefix =
      write_collectives("split", 20,
                        {{chakra::CollectiveKind::Broadcast, long_bytes, {0, 4}, "mp"},
                         {chakra::CollectiveKind::Broadcast, long_bytes, {1, 6}, "mp"},
                         {chakra::CollectiveKind::Broadcast, short_bytes, {2, 5, 7}, "mp"},
                         {chakra::CollectiveKind::Broadcast, 4096, rest, "mp"}});
  const auto time = [&](const char* conflicts) {
    return ends(run("configs/fred_d.yaml", prefix,
                    std::string("collectives.dataset_splits=1 fabric.fred_middles=2 "
                                "fabric.fred_conflicts=") +
                        conflicts + " --data"))
        .at("3");
  };
  const double waits = time("wait"), split = time("unicast");
  EXPECT_GE(waits, (long_bytes + short_bytes) / 3000.0);
  EXPECT_GE(split, 2 * short_bytes / 3000.0);
  EXPECT_LT(split, 2 * short_bytes * kHeader / 3000.0 + 120);
}

// Data mode: every in-switch collective leaves every rank with the reference result, on the
// wafer's 20 NPUs and on a tree of two leaves, with uneven blocks and two chunks, at message and
// at packet fidelity (chunks of several packets, the last one short).
TEST(FredFabric, InSwitchCollectivesComputeTheReference) {
  for (const char* fidelity : {"message", "packet"})
    for (int npus : {8, 20})
      for (const char* collective :
           {"all_reduce", "reduce_scatter", "all_gather", "broadcast", "reduce"}) {
        const std::string name = std::string(collective) + std::to_string(npus) + fidelity;
        const auto report =
            run("configs/fred_d.yaml", workload(name, collective, 3 * 4099, npus),
                "network.npus=" + std::to_string(npus) +
                    " collectives.dataset_splits=2 fabric.fidelity=" + fidelity + " --data");
        EXPECT_EQ(report["data_check"]["collectives_checked"], 1) << name;
        EXPECT_EQ(report["data_check"]["status"], "pass") << name << report["data_check"];
      }
}

// The microbenchmark study as shipped, against the rows of PAPERS.md section 1 it reproduces
// (within 2%, the mesh's MP(20) within 5%): Fred-C and Fred-D reach 3 TB/s per NPU on the MP(20)
// all-reduce (the mesh 1.5 TB/s), Fred-D sending
// half the traffic of Fred-C's ring so taking about half the time; under MP(2)-DP(5)-PP(2), the
// MP all-reduce and the PP multicast reach 3 TB/s on Fred-A, C and D, and the DP all-reduce 750
// GB/s on the mesh, 375 on Fred-A, 3 TB/s on Fred-C and on Fred-D, which sends 37.5% less.
TEST(FredFabric, MicrobenchmarkStudyReachesThePapersFredRows) {
  const std::string dir = temp_dir("fred_study");
  const auto r = wafersim::testing::wafersim(
      "study " + source("configs/studies/fred_microbench.yaml") + " --out " + dir + " -j 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream csv(dir + "/results.csv");
  std::string line;
  std::getline(csv, line);
  std::vector<std::string> header;
  for (std::stringstream ss(line); std::getline(ss, line, ',');) header.push_back(line);
  auto column = [&](const std::string& name) {
    return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  struct Row {
    double effective_gbps = 0, makespan_ns = 0;
    std::string io_fraction;
  };
  std::map<std::pair<std::string, std::string>, Row> rows;  // by (case, fabric)
  while (std::getline(csv, line)) {
    std::vector<std::string> cells;
    for (std::stringstream ss(line); std::getline(ss, line, ',');) cells.push_back(line);
    cells.resize(header.size());  // the last cell (error) is empty
    rows[{cells[column("case")], cells[column("fabric")]}] = {
        std::stod(cells[column("effective_bw_per_npu_gbps")]),
        std::stod(cells[column("makespan_ns")]), cells[column("io_line_rate_fraction")]};
  }
  ASSERT_EQ(rows.size(), 40u);  // 8 cases x 5 fabrics
  auto expect = [&](const char* c, const char* fabric, double gbps, double within = 0.02) {
    const Row& row = rows[std::make_pair(std::string(c), std::string(fabric))];
    EXPECT_NEAR(row.effective_gbps, gbps, gbps * within) << c << " on " << fabric;
  };
  expect("mp20_all_reduce", "mesh", 1500, 0.05);  // rings on a cycle of the mesh, both ways
  expect("mp20_all_reduce", "fred_c", 3000);
  expect("mp20_all_reduce", "fred_d", 3000);
  for (const char* fabric : {"fred_a", "fred_c", "fred_d"}) {
    expect("mp_all_reduce", fabric, 3000);
    expect("pp_multicast", fabric, 3000);
  }
  expect("dp_all_reduce", "mesh", 750);
  expect("dp_all_reduce", "fred_a", 375);
  expect("dp_all_reduce", "fred_c", 3000);
  expect("dp_all_reduce", "fred_d", 3000);
  auto time_ratio = [&](const char* c) {
    return rows[std::make_pair(std::string(c), std::string("fred_d"))].makespan_ns /
           rows[std::make_pair(std::string(c), std::string("fred_c"))].makespan_ns;
  };
  EXPECT_NEAR(time_ratio("mp20_all_reduce"), 20.0 / 38, 0.02);  // D against 2 x 19/20 D
  EXPECT_NEAR(time_ratio("dp_all_reduce"), 1 - 0.375, 0.02);    // D against 2 x 4/5 D
  // Laid along a snake of the mesh, every MP pair is two neighbours (750 GB/s each way), but the
  // DP rings in rank order now share links (half the row-by-row placement's 750). Fred-D's
  // all-reduces do not care where the groups sit.
  expect("mp_all_reduce_snake", "mesh", 750);
  expect("dp_all_reduce_snake", "mesh", 375, 0.03);
  for (const char* c : {"mp_all_reduce_snake", "dp_all_reduce_snake"}) expect(c, "fred_d", 3000);
  // The I/O hotspot: 18 controllers of 128 GB/s streaming in at once. On the mesh the links
  // between the rows carry the X-Y trees of the 9 controllers of one edge: 750 / (9 x 128) of the
  // line rate (within 3%: 64 chunks relayed from the edge to the far row); Fred-D multicasts every
  // stream at its line rate. Collectives among NPUs only have no I/O column.
  auto io = [&](const char* fabric) {
    return std::stod(
        rows[std::make_pair(std::string("io_stream_in"), std::string(fabric))].io_fraction);
  };
  EXPECT_NEAR(io("mesh"), 750.0 / (9 * 128), 0.03 * 750.0 / (9 * 128));
  EXPECT_NEAR(io("fred_d"), 1.0, 0.01);
  // Fred-C relays every stream round the logical ring at the NPUs: 18 x 128 GB/s leave each NPU
  // and cross the uplinks, within their 3 TB/s (the chunks' relay down the ring of 21 costs 3%).
  EXPECT_NEAR(io("fred_c"), 1.0, 0.04);
  EXPECT_EQ(rows[std::make_pair(std::string("mp_all_reduce"), std::string("mesh"))].io_fraction,
            "");
}

// I/O streams carry real data: weights broadcast in from 3 of the 18 controllers (the others idle,
// without traces) and gradients reduced out to them leave every rank with the reference, relayed
// along the X-Y trees on the mesh, round the logical ring on Fred-C, multicast and reduced in the
// switches on Fred-D.
TEST(FredFabric, IoStreamsCarryTheReference) {
  for (const char* config :
       {"configs/wafer_mesh_5x4_io.yaml", "configs/fred_c.yaml", "configs/fred_d.yaml"})
    for (auto kind : {chakra::CollectiveKind::Broadcast, chakra::CollectiveKind::Reduce}) {
      chakra::MicrobenchmarkSpec spec;
      spec.collective = kind;
      spec.bytes = 3 * 4099;
      spec.ranks = 20;
      spec.io_controllers = 3;
      const std::string name = std::string("io_") + chakra::to_string(kind);
      const std::string prefix = temp_dir(name) + "/w";
      chakra::write_microbenchmark(prefix, spec);
      const auto report =
          run(config, prefix, "collectives.dataset_splits=2 fabric.fidelity=message --data");
      EXPECT_EQ(report["data_check"]["collectives_checked"], 3) << config << " " << name;
      EXPECT_EQ(report["data_check"]["status"], "pass") << config << " " << name;
      ASSERT_EQ(report["io_controllers"].size(), 18u);
      EXPECT_EQ(report["npus"].size(), 20u);
      for (int i = 0; i < 18; ++i)
        EXPECT_EQ(report["io_controllers"][i]["streamed_bytes"].get<uint64_t>(),
                  i < 3 ? spec.bytes : 0u)
            << config << " io" << i;
    }
}

// The endpoint baselines of the study compute the reference too: rings on a cycle of the mesh,
// both ways, and hierarchical rings on the mesh's lines and on the tree's leaves (the grids a mesh
// and a tree count as), with uneven blocks.
TEST(FredFabric, EndpointBaselinesComputeTheReference) {
  struct Case {
    const char* config;
    const char* sets;
  };
  for (const Case& c : {Case{"configs/wafer_mesh_5x4.yaml", ""},
                        Case{"configs/wafer_mesh_5x4.yaml",
                             " collectives.all_reduce=ring,ring collectives.all_gather=ring,ring"
                             " collectives.reduce_scatter=ring,ring"},
                        Case{"configs/fred_a.yaml", ""}})
    for (const char* collective : {"all_reduce", "reduce_scatter", "all_gather"}) {
      const std::string name = std::string("baseline_") + collective;
      const auto report = run(
          c.config, workload(name, collective, 20 * 4099 + 7),
          std::string("collectives.dataset_splits=3 fabric.fidelity=message") + c.sets + " --data");
      EXPECT_EQ(report["data_check"]["status"], "pass")
          << c.config << c.sets << " " << collective << report["data_check"];
      EXPECT_EQ(report["data_check"]["collectives_checked"], 1) << c.config << " " << collective;
    }
}
