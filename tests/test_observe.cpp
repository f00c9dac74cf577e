// What a run shows besides its report: VCD waveforms (checked by our own parser and by gtkwave's
// vcd2fst, and against the report's link statistics), the Perfetto timeline (structure, one slice
// per trace node, totals equal to the report), the CSV tables, and an interrupted run's report.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "tb/chakra/generator.h"
#include "tb/chakra/trace.h"
#include "tests/testing.h"

using namespace wafersim;
using wafersim::testing::source;
using wafersim::testing::temp_dir;

namespace {

// A parsed VCD: what the checker verified, plus each signal's changes.
struct Vcd {
  std::string timescale;
  std::map<std::string, std::string> id_of;  // full hierarchical name -> id
  std::map<std::string, std::vector<std::pair<uint64_t, uint64_t>>> changes;  // id -> (t, value)
  uint64_t first_time = 0, last_time = 0;
};

// Our own VCD checker: header complete, scopes balanced, every change uses a declared id, time
// strictly increases. Fails the test with the line at fault.
Vcd parse_vcd(const std::string& path) {
  Vcd v;
  std::ifstream f(path);
  EXPECT_TRUE(f.good()) << path;
  std::string tok;
  std::vector<std::string> scope;
  bool definitions_done = false, have_time = false;
  uint64_t now = 0;
  std::set<std::string> ids;
  while (f >> tok) {
    if (!definitions_done) {
      if (tok == "$timescale") {
        f >> v.timescale >> tok;
      } else if (tok == "$scope") {
        std::string kind, name;
        f >> kind >> name >> tok;
        scope.push_back(name);
      } else if (tok == "$upscope") {
        f >> tok;
        EXPECT_FALSE(scope.empty()) << "unbalanced $upscope";
        if (!scope.empty()) scope.pop_back();
      } else if (tok == "$var") {
        std::string type, width, id, name, rest;
        f >> type >> width >> id >> name;
        while (f >> rest && rest != "$end") {
        }
        std::string full;
        for (const auto& s : scope) full += s + ".";
        v.id_of[full + name] = id;
        EXPECT_TRUE(ids.insert(id).second) << "id declared twice: " << id;
      } else if (tok == "$enddefinitions") {
        f >> tok;
        EXPECT_TRUE(scope.empty()) << "scopes left open";
        definitions_done = true;
      } else if (tok[0] == '$') {
        while (tok != "$end" && f >> tok) {
        }
      }
      continue;
    }
    if (tok == "$dumpvars" || tok == "$end") continue;
    if (tok[0] == '#') {
      uint64_t t = std::stoull(tok.substr(1));
      if (have_time) {
        EXPECT_GT(t, now) << "time does not increase at " << tok;
      }
      if (!have_time) v.first_time = t;
      have_time = true;
      now = t;
      v.last_time = t;
      continue;
    }
    std::string id;
    uint64_t value = 0;
    if (tok[0] == 'b') {
      f >> id;
      value = std::stoull(tok.substr(1), nullptr, 2);
    } else {
      value = tok[0] == '1';
      id = tok.substr(1);
    }
    EXPECT_TRUE(ids.count(id)) << "change of undeclared id " << id;
    v.changes[id].push_back({now, value});
  }
  EXPECT_TRUE(definitions_done) << "no $enddefinitions";
  EXPECT_EQ(v.timescale, "1ps");
  return v;
}

// Total time a 1-bit signal is 1, in ps, up to `end`.
uint64_t high_time(const std::vector<std::pair<uint64_t, uint64_t>>& changes, uint64_t end) {
  uint64_t total = 0, since = 0;
  bool high = false;
  for (auto [t, value] : changes) {
    if (high && !value) total += t - since;
    if (!high && value) since = t;
    high = value != 0;
  }
  if (high) total += end - since;
  return total;
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream f(path);
  nlohmann::json j;
  f >> j;
  return j;
}

// An all-reduce microbenchmark under `dir`; returns its trace prefix.
// A signal's changes as (time in ps, value); a failure when the VCD has no such signal.
std::vector<std::pair<uint64_t, uint64_t>> changes_of(const Vcd& vcd, const std::string& name) {
  EXPECT_TRUE(vcd.id_of.count(name)) << name;
  return vcd.id_of.count(name) ? vcd.changes.at(vcd.id_of.at(name))
                               : std::vector<std::pair<uint64_t, uint64_t>>{};
}

std::string write_all_reduce(const std::string& dir, int ranks, uint64_t bytes, int iterations = 1,
                             uint64_t compute_us = 0) {
  chakra::MicrobenchmarkSpec spec;
  spec.ranks = ranks;
  spec.bytes = bytes;
  spec.iterations = iterations;
  spec.compute_micros = compute_us;
  chakra::write_microbenchmark(dir + "/ar", spec);
  return dir + "/ar";
}

// An 8-NPU all-reduce of `bytes` on the 4x2 wafer, report in `dir`, with `options` added.
wafersim::testing::CommandResult run_wafer_4x2(const std::string& dir, uint64_t bytes,
                                               const std::string& options) {
  return wafersim::testing::wafersim(
      "run --quiet --platform " + source("configs/wafer_mesh_4x2.yaml") + " --workload " +
      write_all_reduce(dir, 8, bytes) + " --out " + dir + " " + options);
}

// Seven NPUs of row 0 send to NPU 7: a congested row of links.
std::string hotspot_workload() {
  std::vector<wafersim::testing::Flow> flows;
  for (int s = 0; s < 7; ++s) flows.push_back({s, 7, 16 * 1024});
  return wafersim::testing::write_flows(temp_dir("hot"), 64, flows);
}

}  // namespace

// Every link's busy time in the VCD equals its busy_ns in the report; returns the links checked.
static int expect_busy_matches_report(const Vcd& vcd, const nlohmann::json& report) {
  int checked = 0;
  for (const auto& link : report["links"]) {
    const std::string name = "platform." + link["src"].get<std::string>() + ".to_" +
                             link["dst"].get<std::string>() + ".busy";
    EXPECT_TRUE(vcd.id_of.count(name)) << name;
    if (!vcd.id_of.count(name)) continue;
    auto it = vcd.changes.find(vcd.id_of.at(name));
    const uint64_t busy_ps = it == vcd.changes.end() ? 0 : high_time(it->second, vcd.last_time);
    EXPECT_NEAR(busy_ps / 1000.0, link["busy_ns"].get<double>(), 0.5) << name;
    if (link["busy_ns"].get<double>() > 0) ++checked;
  }
  return checked;
}

TEST(Observe, WaveformIsValidAndAgreesWithTheReport) {
  const std::string dir = temp_dir("waves");
  auto r = wafersim::testing::wafersim("run --quiet --platform " + source("configs/mesh_8x8.yaml") +
                                       " --workload " + hotspot_workload() + " --out " + dir +
                                       " --waves " + dir + "/run.vcd");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Vcd vcd = parse_vcd(dir + "/run.vcd");
  EXPECT_GT(expect_busy_matches_report(vcd, read_json(dir + "/report.json")), 10);
  // The congested link into router 7 holds buffered flits at some point.
  auto depth = vcd.id_of.find("platform.router7.from_router6.depth_vc0");
  ASSERT_NE(depth, vcd.id_of.end());
  uint64_t deepest = 0;
  for (auto [t, v] : vcd.changes.at(depth->second)) deepest = std::max(deepest, v);
  EXPECT_GT(deepest, 0u);
  // gtkwave's own converter accepts it, and the save file names signals that exist.
  EXPECT_EQ(
      std::system(("vcd2fst " + dir + "/run.vcd " + dir + "/run.fst >/dev/null 2>&1").c_str()), 0);
  std::ifstream gtkw(dir + "/run.gtkw");
  std::string line;
  int listed = 0;
  while (std::getline(gtkw, line))
    if (line.rfind("platform.", 0) == 0) {
      std::string base = line.substr(0, line.find('['));
      EXPECT_TRUE(vcd.id_of.count(base)) << line;
      ++listed;
    }
  EXPECT_EQ(listed, static_cast<int>(vcd.id_of.size()));
}

// A Fred switch's view (waves/fred_switch.gtkw): a wafer-wide in-switch all-reduce of one chunk is
// one flow. Leaf 0 reduces its four NPUs' data on the way up and distributes the total to them on
// the way down; the spine reduces the five leaves' sums and distributes the total at once, for as
// long as it streams: B / 3,000 ns. The phase is that of the run's first collective (1).
TEST(Observe, FredSwitchWaveformShowsItsFunctionsAndPhase) {
  const std::string dir = temp_dir("fred_waves");
  const uint64_t bytes = 3 << 20;
  auto r = wafersim::testing::wafersim(
      "run --quiet --platform " + source("configs/fred_d.yaml") + " --workload " +
      write_all_reduce(dir, 20, bytes) + " --set collectives.dataset_splits=1 --out " + dir +
      " --waves " + dir + "/run.vcd --waves-select 'platform.leaf0.*' 'platform.spine.*'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Vcd vcd = parse_vcd(dir + "/run.vcd");
  auto changes = [&](const std::string& name) { return changes_of(vcd, name); };
  // Each function is on once: (start, end) in ps.
  auto once = [&](const std::string& name) {
    const auto c = changes(name);
    EXPECT_EQ(c.size(), 3u) << name;  // the initial 0, on, off
    if (c.size() != 3) return std::make_pair(uint64_t{0}, uint64_t{0});
    EXPECT_EQ(c[1].second, 1u) << name;
    EXPECT_EQ(c[2].second, 0u) << name;
    return std::make_pair(c[1].first, c[2].first);
  };
  const auto leaf_reduce = once("platform.leaf0.reduce");
  const auto leaf_distribute = once("platform.leaf0.distribute");
  const auto spine_reduce = once("platform.spine.reduce");
  const auto spine_distribute = once("platform.spine.distribute");
  const double stream_ps = bytes * (1 + 6.0 / 4096) / 3000.0 * 1000;
  EXPECT_NEAR(spine_reduce.second - spine_reduce.first, stream_ps, 2000);
  EXPECT_EQ(spine_distribute, spine_reduce);
  EXPECT_LT(leaf_reduce.first, spine_reduce.first);
  EXPECT_GT(leaf_distribute.first, spine_reduce.first);
  const auto phase = changes("platform.leaf0.phase");
  ASSERT_FALSE(phase.empty());
  EXPECT_EQ(phase.back().second, 1u);
  // A leaf's four uplinks are four links, each with its own signals.
  for (int k = 0; k < 4; ++k)
    EXPECT_TRUE(vcd.id_of.count("platform.leaf0.to_spine.u" + std::to_string(k) + ".busy")) << k;
}

// More than a million value changes: the recorder writes them out while the run goes on (every
// million, those before the current time), and the file still agrees with the report.
TEST(Observe, LongWaveformIsWrittenAsTheRunGoes) {
  const std::string dir = temp_dir("long_waves");
  auto r = wafersim::testing::wafersim(
      "run --quiet --platform " + source("configs/wafer_mesh_5x4.yaml") + " --workload " +
      write_all_reduce(dir, 20, 8 << 20) + " --out " + dir + " --waves " + dir + "/run.vcd");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Vcd vcd = parse_vcd(dir + "/run.vcd");
  size_t changes = 0;
  for (const auto& [id, list] : vcd.changes) changes += list.size();
  EXPECT_GT(changes, 1u << 20);
  EXPECT_GT(expect_busy_matches_report(vcd, read_json(dir + "/report.json")), 20);
}

// Waves thrown away: the run succeeds and leaves no GTKWave file in /dev (the save file goes only
// beside a regular file).
TEST(Observe, WaveformToDevNullWritesNoSaveFile) {
  const std::string dir = temp_dir("null_waves");
  auto r = run_wafer_4x2(dir, 1 << 16, "--waves /dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(std::filesystem::exists("/dev/null.gtkw"));
}

TEST(Observe, WaveformWindowAndSelection) {
  const std::string dir = temp_dir("window");
  auto r = wafersim::testing::wafersim("run --quiet --platform " + source("configs/mesh_8x8.yaml") +
                                       " --workload " + hotspot_workload() + " --waves " + dir +
                                       "/w.vcd --waves-from 1000 --waves-to 2000 " +
                                       "--waves-select 'platform.router6.*' 'platform.npu0.*'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Vcd vcd = parse_vcd(dir + "/w.vcd");
  EXPECT_EQ(vcd.first_time, 1000000u);
  EXPECT_LE(vcd.last_time, 2000000u);
  EXPECT_FALSE(vcd.id_of.empty());
  for (const auto& [name, id] : vcd.id_of)
    EXPECT_TRUE(name.rfind("platform.router6.", 0) == 0 || name.rfind("platform.npu0.", 0) == 0)
        << name;
  r = wafersim::testing::wafersim("run --quiet --platform " + source("configs/mesh_8x8.yaml") +
                                  " --workload " + hotspot_workload() + " --waves " + dir +
                                  "/x.vcd --waves-select 'nothing.*'");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no signal matches"), std::string::npos) << r.err;
  // A reversed window and an unwritable file are refused before the simulation starts.
  r = wafersim::testing::wafersim("run --quiet --platform " + source("configs/mesh_8x8.yaml") +
                                  " --workload " + hotspot_workload() + " --waves " + dir +
                                  "/y.vcd --waves-from 500 --waves-to 100");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--waves-to: the window ends before it starts"), std::string::npos) << r.err;
  r = wafersim::testing::wafersim("run --quiet --platform " + source("configs/mesh_8x8.yaml") +
                                  " --workload " + hotspot_workload() +
                                  " --timeline /proc/no/such/t.json");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/proc/no/such/t.json: --timeline: cannot write here"), std::string::npos)
      << r.err;
}

TEST(Observe, TimelineHasEveryNodeOnceAndAgreesWithTheReport) {
  const std::string dir = temp_dir("timeline");
  const std::string prefix = write_all_reduce(dir, 8, 256 * 1024, 3, 2);
  auto r = wafersim::testing::wafersim("run --quiet --platform " +
                                       source("configs/wafer_mesh_4x2.yaml") + " --workload " +
                                       prefix + " --out " + dir + " --timeline " + dir + "/t.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto report = read_json(dir + "/report.json");
  const auto timeline = read_json(dir + "/t.json");
  ASSERT_TRUE(timeline.contains("traceEvents"));
  std::map<std::pair<int, int>, double> track_end;    // (pid, tid) -> end of the last slice
  std::map<int, std::multiset<uint64_t>> nodes_seen;  // rank -> node ids
  std::map<int, double> compute_us;                   // rank -> compute slices
  std::map<int, double> link_us;                      // link id -> units
  std::map<int, int> sort_index;                      // pid -> its process_sort_index
  for (const auto& e : timeline["traceEvents"]) {
    ASSERT_TRUE(e.contains("ph") && e.contains("pid"));
    // The trace-event format names the field of process_sort_index `sort_index`, an integer.
    if (e["ph"] == "M" && e["name"] == "process_sort_index")
      sort_index[e["pid"].get<int>()] = e["args"].at("sort_index").get<int>();
    if (e["ph"] != "X") continue;
    const double ts = e["ts"], dur = e["dur"];
    EXPECT_GE(dur, 0);
    auto key = std::make_pair(e["pid"].get<int>(), e["tid"].get<int>());
    auto it = track_end.find(key);
    if (it != track_end.end()) {
      EXPECT_GE(ts, it->second - 1e-6) << "overlap on a track";
    }
    track_end[key] = ts + dur;
    if (e["cat"] == "link") {
      link_us[e["tid"].get<int>()] += dur;
    } else {
      nodes_seen[e["pid"].get<int>()].insert(e["args"]["node_id"].get<uint64_t>());
      if (e["cat"] == "compute") compute_us[e["pid"].get<int>()] += dur;
    }
  }
  for (int rank = 0; rank < 8; ++rank) {
    EXPECT_EQ(sort_index[rank], rank);
    auto trace = chakra::read_trace(prefix + "." + std::to_string(rank) + ".et");
    const auto& seen = nodes_seen[rank];
    EXPECT_EQ(seen.size(), trace.nodes.size()) << rank;
    for (const auto& n : trace.nodes) EXPECT_EQ(seen.count(n.id), 1u) << rank << " " << n.id;
    EXPECT_NEAR(compute_us[rank] * 1e3, report["npus"][rank]["compute_ns"].get<double>(), 1e-3);
  }
  for (const auto& link : report["links"])
    EXPECT_NEAR(link_us[link["id"].get<int>()] * 1e3, link["busy_ns"].get<double>(), 1e-3);
}

TEST(Observe, TablesCarryUnitsAndNcclBandwidthsAndPicturesAreDrawn) {
  const std::string dir = temp_dir("tables");
  auto r = run_wafer_4x2(dir, 1 << 20, "--plots");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* picture : {"link_utilisation.png", "npu_time.png"}) {
    std::ifstream png(dir + "/" + picture, std::ios::binary);
    char magic[4] = {};
    png.read(magic, 4);
    EXPECT_EQ(std::string(magic + 1, 3), "PNG") << picture;
  }
  std::ifstream csv(dir + "/collectives.csv");
  std::string header, row;
  std::getline(csv, header);
  std::getline(csv, row);
  EXPECT_NE(header.find("duration_ns"), std::string::npos);
  EXPECT_NE(header.find("busbw_gbps"), std::string::npos);
  const auto report = read_json(dir + "/report.json");
  const auto& c = report["collectives"][0];
  const double algbw = c["bytes"].get<double>() / c["duration_ns"].get<double>();
  EXPECT_NEAR(c["algbw_gbps"].get<double>(), algbw, 1e-9);
  EXPECT_NEAR(c["busbw_gbps"].get<double>(), algbw * 2 * 7 / 8, 1e-9);
  for (const char* table : {"npus.csv", "links.csv"}) {
    std::ifstream t(dir + "/" + table);
    std::getline(t, header);
    EXPECT_NE(header.find("_ns"), std::string::npos) << table;
  }
}

// A long run shows its progress line and, on SIGINT, stops and still writes its report, marked
// incomplete.
// SIGINT (Ctrl-C) and SIGTERM (timeout, Slurm, kill) stop a run the same way: the report is written
// whole, marked incomplete, with every fraction over the simulated time reached.
void expect_stopped_cleanly(int signal, int exit_code, const std::string& expected_status) {
  const std::string dir = temp_dir("stop");
  const std::string workload = write_all_reduce(dir, 64, 1ull << 30);
  const std::string out = dir + "/out";
  std::string err;
  // Past the 2 s before the progress line shows; the whole run takes far longer.
  EXPECT_EQ(wafersim::testing::wafersim_stopped(
                {"run", "--platform", source("configs/ring_8npus.yaml"), "--set", "network.npus=64",
                 "--fidelity", "packet", "--workload", workload, "--out", out},
                4, signal, dir, &err, "% of nodes"),
            exit_code);
  const auto report = read_json(out + "/report.json");
  EXPECT_EQ(report["status"], expected_status);
  EXPECT_FALSE(report["complete"].get<bool>());
  const double reached = report["simulated_ns"].get<double>();
  EXPECT_GT(reached, 0);
  EXPECT_GE(reached, report["makespan_ns"].get<double>());
  for (const auto& l : report["links"]) EXPECT_LE(l["busy_fraction"].get<double>(), 1.0) << l;
  EXPECT_FALSE(std::filesystem::exists(out + "/report.json.partial"));
  EXPECT_NE(err.find("% of nodes"), std::string::npos) << err;
  const std::string said =
      expected_status == "interrupted" ? "interrupted at " : "terminated (SIGTERM) at ";
  EXPECT_NE(err.find(said), std::string::npos) << err;
  EXPECT_EQ(err.find(" at 0 us simulated"), std::string::npos) << err;
}

TEST(Observe, InterruptedRunWritesAnIncompleteReport) {
  expect_stopped_cleanly(SIGINT, 130, "interrupted");
}

TEST(Observe, TerminatedRunWritesAnIncompleteReport) {
  expect_stopped_cleanly(SIGTERM, 143, "terminated");
}

namespace wafersim::tb {
namespace {

// The sparse unit's view (waves/sparse_unit.gtkw) of one CSR -> COO conversion, hand-worked in
// tests/test_sparse_unit_model.cpp: 64 blocks of 10 rows; a first step of 3 cycles (read only),
// 64 of 7 (the last writing only 4 of them, so the port waits 3), a last of 4 (write only, the
// datapath waits 4); then the closing pointer and the pipeline fill, 13 cycles, unit busy to 468.
TEST(Observe, SparseUnitWaveformShowsItsPipelineStepByStep) {
  const std::string dir = temp_dir("sparse_waves");
  chakra::TraceNode n;
  n.id = 0;
  n.name = "convert";
  n.kind = chakra::NodeKind::Compute;
  chakra::SparseAttrs s;
  s.op = "convert";
  s.in_format = "csr";
  s.out_format = "coo";
  s.rows = 640;
  s.cols = 64;
  s.nnz = 2560;
  n.sparse = s;
  chakra::Trace t;
  t.nodes = {n};
  for (int r = 0; r < 8; ++r) chakra::write_trace(dir + "/w." + std::to_string(r) + ".et", t);
  auto r = wafersim::testing::wafersim(
      "run --quiet --platform " + source("configs/ring_8npus.yaml") + " --workload " + dir +
      "/w --set npu.sparse_unit.hbm_bandwidth_gbps=128 npu.sparse_unit.block_bytes=360 --out " +
      dir + " --waves " + dir + "/run.vcd --waves-select 'platform.npu0_sparse.*'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Vcd vcd = parse_vcd(dir + "/run.vcd");
  auto changes = [&](const std::string& name) { return changes_of(vcd, name); };
  using Changes = std::vector<std::pair<uint64_t, uint64_t>>;
  const uint64_t ns = 1000;  // ps
  // (time, value) of each change; the dump's initial values are at 0.
  EXPECT_EQ(changes("platform.npu0_sparse.busy"), (Changes{{0, 1}, {468 * ns, 0}}));
  EXPECT_EQ(changes("platform.npu0_sparse.step_cycles"),
            (Changes{{0, 3}, {3 * ns, 7}, {451 * ns, 4}, {455 * ns, 0}}));
  // 40 non-zeros a block, while the datapath works (steps 1 to 64).
  EXPECT_EQ(changes("platform.npu0_sparse.elements_in"),
            (Changes{{0, 0}, {3 * ns, 40}, {451 * ns, 0}}));
  // The port waits 4 cycles in step 1 (it reads 3 while the datapath works 7), none while it
  // reads and writes (7 of 7), 3 in step 64 (it writes 4).
  EXPECT_EQ(changes("platform.npu0_sparse.memory_stall"),
            (Changes{{0, 0}, {3 * ns, 4}, {10 * ns, 0}, {444 * ns, 3}, {451 * ns, 0}}));
  // Every signal the standard view shows is in the VCD.
  std::ifstream view(source("waves/sparse_unit.gtkw"));
  for (std::string line; std::getline(view, line);) {
    if (line.rfind("platform.", 0) != 0) continue;
    EXPECT_TRUE(vcd.id_of.count(line.substr(0, line.find('[')))) << line;
  }
}

}  // namespace
}  // namespace wafersim::tb
