// Whole-run timings of the issues' speed cases, printed as figures (docs/performance.md). Each case
// runs `wafersim` as a child process (SystemC elaborates once per process) and reads its report
// and its peak RSS and CPU time.
// Usage: wafersim_bench [path/to/wafersim]
//                       [all | collectives | traffic | waves | import | data | synth | multidim |
//                        fred | sparse | themis | scaling | booksim | astra-sim]
//                       [--booksim PATH] [--astra-sim PATH] [--repeats N]
// `themis` (the whole Themis study, about 9 minutes on 2 cores), `scaling` and the side-by-side
// cases (bench/side_by_side.h) are not part of `all`.
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "bench/child_process.h"
#include "bench/scaling.h"
#include "bench/side_by_side.h"
#include "models/collectives/msccl.h"
#include "models/collectives/symbolic.h"
#include "models/tacos/tacos.h"
#include "models/topology/topology.h"
#include "tb/chakra/generator.h"
#include "tb/chakra/sparse_workload.h"
#include "tb/collectives/msccl_xml.h"

namespace {

using wafersim::bench::cpu_seconds;

struct Figures {
  double wall_s;
  double cpu_s;
  double rss_mb;
  nlohmann::json report;
};

// Runs `wafersim <command> [--quiet] --out OUT ARGS` and reads OUT/<report> (if JSON).
Figures run(const std::string& wafersim, const std::string& command, const std::string& args,
            const std::string& out, const std::string& report = "report.json", bool quiet = true) {
  const std::string cmd =
      wafersim + " " + command + (quiet ? " --quiet" : "") + " --out " + out + " " + args;
  const wafersim::bench::ProcessFigures p = wafersim::bench::run_checked(cmd);
  Figures f{p.wall_s, p.cpu_s, p.rss_mb, nlohmann::json::object()};
  std::ifstream in(out + "/" + report);
  if (in && report.size() > 5 && report.compare(report.size() - 5, 5, ".json") == 0) in >> f.report;
  return f;
}

void print_run(const char* name, const Figures& f) {
  double events = f.report.value("events", 0.0);
  std::printf(
      "%-62s wall %7.2f s  peak RSS %7.1f MB  simulated %10.1f us  events %11.0f  (%.2f M "
      "events/s)\n",
      name, f.wall_s, f.rss_mb, f.report.value("makespan_ns", 0.0) / 1e3, events,
      events / f.wall_s / 1e6);
}

void print_traffic(const char* name, const Figures& f) {
  double cycles = f.report.value("simulated_cycles", 0.0);
  std::printf(
      "%-62s CPU %6.2f s  peak RSS %6.1f MB  %8.0f cycles  %9.0f cycles/CPU-s  latency %.1f "
      "cycles\n",
      name, f.cpu_s, f.rss_mb, cycles, cycles / f.cpu_s,
      f.report.value("avg_packet_latency_cycles", 0.0));
}

// A ring all-reduce of `bytes` on `ranks` NPUs of 50 GB/s, 500 ns ring links.
void ring_all_reduce(const std::string& wafersim, const std::string& dir, const char* name,
                     int ranks, uint64_t bytes, const std::string& fidelity) {
  wafersim::chakra::MicrobenchmarkSpec spec;
  spec.bytes = bytes;
  spec.ranks = ranks;
  const std::string prefix = dir + "/ar" + std::to_string(ranks);
  wafersim::chakra::write_microbenchmark(prefix + "/ar", spec);
  print_run(name,
            run(wafersim, "run",
                "--platform configs/ring_8npus.yaml --set network.npus=" + std::to_string(ranks) +
                    " network.link_bandwidth_gbps=50 collectives.dataset_splits=1 "
                    "--fidelity " +
                    fidelity + " --workload " + prefix + "/ar",
                prefix + "/out"));
}

void collectives(const std::string& wafersim, const std::string& dir) {
  ring_all_reduce(wafersim, dir, "64-NPU ring all-reduce 64 MiB, 50 GB/s 500 ns, packet", 64,
                  64ull << 20, "packet");
  ring_all_reduce(wafersim, dir, "1024-NPU ring all-reduce 1 GiB, message", 1024, 1ull << 30,
                  "message");
}

// BookSim's setup (configs/booksim_mesh8x8.yaml), flit fidelity, uniform traffic. The 8x8 cases
// measure 100,000 cycles: the default 10,000 take a tenth of a second, where process start-up and
// the CPU clock's 10 ms granularity would weigh.
void traffic(const std::string& wafersim, const std::string& dir) {
  const std::string base = "--platform configs/booksim_mesh8x8.yaml --pattern uniform ";
  const std::string long_window = " --measure-cycles 100000";
  print_traffic(
      "traffic 8x8 uniform 0.1 flits/node/cycle",
      run(wafersim, "traffic", base + "--rate 0.1" + long_window, dir + "/t8_01", "traffic.json"));
  print_traffic(
      "traffic 8x8 uniform 0.3 flits/node/cycle",
      run(wafersim, "traffic", base + "--rate 0.3" + long_window, dir + "/t8_03", "traffic.json"));
  print_traffic(
      "traffic 16x16 uniform 0.1 flits/node/cycle",
      run(wafersim, "traffic", base + "--rate 0.1 --set network.mesh_x=16 network.mesh_y=16",
          dir + "/t16_01", "traffic.json"));
}

// The cost of waveforms: a whole-wafer run without, with every signal, and with one router.
void waves(const std::string& wafersim, const std::string& dir) {
  wafersim::chakra::MicrobenchmarkSpec ar;
  ar.bytes = 16ull << 20;
  ar.ranks = 20;
  wafersim::chakra::write_microbenchmark(dir + "/ar20/ar", ar);
  const std::string base =
      "--platform configs/wafer_mesh_5x4.yaml --fidelity packet --set collectives.ring_path=ranks "
      "--workload " +
      dir + "/ar20/ar";  // the ring of docs/performance.md's figures
  print_run("wafer 5x4 all-reduce 16 MiB, packet, no waves",
            run(wafersim, "run", base, dir + "/w0"));
  print_run("  same, --waves of every signal",
            run(wafersim, "run", base + " --waves " + dir + "/w1/all.vcd", dir + "/w1"));
  print_run("  same, --waves-select 'platform.router7.*'",
            run(wafersim, "run",
                base + " --waves " + dir + "/w2/r7.vcd --waves-select 'platform.router7.*'",
                dir + "/w2"));
  print_run("  same, --timeline",
            run(wafersim, "run", base + " --timeline " + dir + "/w3/t.json", dir + "/w3"));
}

// MSCCL XML import, in this process: msccl-tools' 128-GPU ring all-reduce (bench/data) read, turned
// into a plan and proved by the symbolic executor.
void import(const std::string& dir) {
  const std::string xml = dir + "/ar_ring_128.xml";
  std::system(("mkdir -p " + dir +
               " && gzip -dc bench/data/msccl-tools_allreduce_a100_ring_128_1_1.xml.gz > " + xml)
                  .c_str());
  namespace collectives = wafersim::collectives;
  double t0 = cpu_seconds();
  const auto algos = wafersim::tb::read_msccl_xml(xml);
  double t1 = cpu_seconds();
  const collectives::Plan plan = collectives::msccl::to_plan(algos.at(0), 1 << 30);
  double t2 = cpu_seconds();
  const std::string problem = collectives::check_plan(plan, collectives::Collective::AllReduce);
  double t3 = cpu_seconds();
  size_t ops = 0;
  for (const auto& r : plan.ranks) ops += r.ops.size();
  std::printf(
      "MSCCL import, msccl-tools ring all-reduce 128 GPUs (%zu ops): read XML %.3f CPU-s, plan "
      "%.3f CPU-s, proof %.3f CPU-s (%s)\n",
      ops, t1 - t0, t2 - t1, t3 - t2, problem.empty() ? "correct" : problem.c_str());
}

// TACOS all-reduce synthesis on uniform 2D meshes, 1 chunk per NPU, in this process.
void synth() {
  for (int side : {16, 32, 64}) {
    wafersim::tacos::LinkGraph g;
    g.npus = side * side;
    for (int v = 0; v < g.npus; ++v) {
      const int x = v % side, y = v / side;
      if (x > 0) g.links.push_back({v, v - 1, 500, 50});
      if (x + 1 < side) g.links.push_back({v, v + 1, 500, 50});
      if (y > 0) g.links.push_back({v, v - side, 500, 50});
      if (y + 1 < side) g.links.push_back({v, v + side, 500, 50});
    }
    const double t0 = cpu_seconds();
    double time_ns = 0;
    const auto plan = wafersim::tacos::synthesize(g, wafersim::collectives::Collective::AllReduce,
                                                  1 << 30, 1, 1, &time_ns);
    const double t1 = cpu_seconds();
    struct rusage usage {};
    getrusage(RUSAGE_SELF, &usage);
    std::printf(
        "TACOS all-reduce %dx%d mesh, 1 chunk per NPU: %.2f CPU-s, peak RSS %.0f MB, "
        "synthesized %.1f us\n",
        side, side, t1 - t0, usage.ru_maxrss / 1024.0, time_ns / 1e3);
  }
}

// Data mode against timing only, on the same run.
void data(const std::string& wafersim, const std::string& dir) {
  wafersim::chakra::MicrobenchmarkSpec spec;
  spec.bytes = 64ull << 20;
  spec.ranks = 64;
  wafersim::chakra::write_microbenchmark(dir + "/data/ar", spec);
  const std::string base =
      "--platform configs/ring_8npus.yaml --set network.npus=64 network.link_bandwidth_gbps=50 "
      "collectives.dataset_splits=4 --fidelity packet --workload " +
      dir + "/data/ar";
  print_run("64-NPU ring all-reduce 64 MiB, 4 chunks, packet",
            run(wafersim, "run", base, dir + "/d0"));
  print_run("  same, --data (fp32, 16 values per block)",
            run(wafersim, "run", base + " --data", dir + "/d1"));
  print_run(
      "  same, --data --data-type bf16 --data-elements 1024",
      run(wafersim, "run", base + " --data --data-type bf16 --data-elements 1024", dir + "/d2"));
}

// A 4,096-NPU platform of three dimensions, Ring 16 x FullyConnected 16 x Switch 16: the topology
// graph built in this process, then a whole run (SystemC elaboration of every NPU, NIC, router and
// switch) of a small all-reduce as a child process.
void multidim(const std::string& wafersim, const std::string& dir) {
  namespace topo = wafersim::topology;
  topo::NetworkSpec spec;
  spec.shape = topo::Shape::Dimensions;
  spec.dims = {{topo::Shape::Ring, 16, 100, 1, 1},
               {topo::Shape::FullyConnected, 16, 25, 1, 1},
               {topo::Shape::Switch, 16, 50, 1, 1}};
  struct rusage before {};
  getrusage(RUSAGE_SELF, &before);
  const auto t0 = std::chrono::steady_clock::now();
  const topo::Topology t = topo::Topology::build(spec);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  struct rusage after {};
  getrusage(RUSAGE_SELF, &after);
  std::printf("%-62s wall %7.3f s  peak RSS growth %6.1f MB  (%zu nodes, %zu links)\n",
              "4096-NPU R16 x FC16 x SW16 topology graph", seconds,
              (after.ru_maxrss - before.ru_maxrss) / 1024.0, t.nodes().size(), t.links().size());

  wafersim::chakra::MicrobenchmarkSpec ar;
  ar.ranks = 4096;
  ar.bytes = 16ull << 20;
  wafersim::chakra::write_microbenchmark(dir + "/md/ar", ar);
  print_run(
      "  whole run: 16 MiB hierarchical all-reduce, message",
      run(wafersim, "run",
          "--platform configs/ring4x8_2d.yaml --fidelity message "
          "--set network.dimensions.0.npus=16 network.dimensions.1.npus=16 "
          "network.dimensions.1.shape=fully_connected network.dimensions.1.link_bandwidth_gbps=25 "
          "network.dimensions.2.shape=switch network.dimensions.2.npus=16 "
          "network.dimensions.2.link_bandwidth_gbps=50 "
          "collectives.all_reduce=ring,direct,halving_doubling --workload " +
              dir + "/md/ar",
          dir + "/md/out"));
}

// The whole Themis study (configs/studies/themis_allreduce.yaml): 270 runs of 1,024 NPUs, two at a
// time; then the mean bandwidth utilisation per topology and scheduler from its results.csv.
void themis(const std::string& wafersim, const std::string& dir) {
  const std::string out = dir + "/themis";
  const Figures f = run(wafersim, "study", "configs/studies/themis_allreduce.yaml -j 2", out,
                        "results.csv", false);
  std::printf("%-62s wall %7.1f s  CPU %7.1f s\n", "Themis study, 270 runs of 1,024 NPUs, -j 2",
              f.wall_s, f.cpu_s);
  std::ifstream csv(out + "/results.csv");
  std::string line;
  std::getline(csv, line);
  std::vector<std::string> header;
  std::stringstream hs(line);
  for (std::string c; std::getline(hs, c, ',');) header.push_back(c);
  auto column = [&](const std::string& name) {
    for (size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return i;
    return header.size();
  };
  const size_t topology = column("topology"), scheduler = column("scheduler"),
               utilisation = column("bw_utilization"), wall = column("wall_seconds");
  std::map<std::pair<std::string, std::string>, std::vector<double>> by;
  std::map<std::string, std::vector<double>> by_scheduler;
  double run_seconds = 0;
  while (std::getline(csv, line)) {
    std::vector<std::string> cells;
    std::stringstream ls(line);
    for (std::string c; std::getline(ls, c, ',');) cells.push_back(c);
    if (cells.size() <= std::max(utilisation, wall) || cells[utilisation].empty()) continue;
    const double u = std::stod(cells[utilisation]);
    by[{cells[topology], cells[scheduler]}].push_back(u);
    by_scheduler[cells[scheduler]].push_back(u);
    run_seconds += std::stod(cells[wall]);
  }
  auto mean = [](const std::vector<double>& v) {
    double sum = 0;
    for (double x : v) sum += x;
    return v.empty() ? 0.0 : sum / v.size();
  };
  for (const auto& [key, values] : by)
    std::printf("  %-30s %-12s mean bw_utilization %.3f over %zu sizes\n", key.first.c_str(),
                key.second.c_str(), mean(values), values.size());
  for (const auto& [name, values] : by_scheduler)
    std::printf("  all topologies %-15s mean bw_utilization %.3f over %zu runs\n", name.c_str(),
                mean(values), values.size());
  std::printf("  sum of the runs' own wall times %.1f s\n", run_seconds);
}

// The Fred fabric's speed cases (issue 12): a wafer-wide 1 GiB all-reduce on Fred-D (in-switch
// flows, which run at message fidelity) and on the mesh at packet and message fidelity, and the
// whole microbenchmark study.
void fred(const std::string& wafersim, const std::string& dir) {
  wafersim::chakra::MicrobenchmarkSpec ar;
  ar.bytes = 1ull << 30;
  ar.ranks = 20;
  const std::string prefix = dir + "/fred/ar";
  wafersim::chakra::write_microbenchmark(prefix, ar);
  print_run(
      "Fred-D in-switch all-reduce 1 GiB, 20 NPUs, message",
      run(wafersim, "run", "--platform configs/fred_d.yaml --workload " + prefix, dir + "/fred/d"));
  print_run(
      "Fred-D in-switch all-reduce 1 GiB, 20 NPUs, packet",
      run(wafersim, "run", "--platform configs/fred_d.yaml --fidelity packet --workload " + prefix,
          dir + "/fred/d_packet"));
  print_run("5x4 mesh all-reduce 1 GiB, rings on a cycle, packet",
            run(wafersim, "run",
                "--platform configs/wafer_mesh_5x4.yaml --fidelity packet --workload " + prefix,
                dir + "/fred/mesh"));
  print_run("5x4 mesh all-reduce 1 GiB, rings on a cycle, message",
            run(wafersim, "run",
                "--platform configs/wafer_mesh_5x4.yaml --fidelity message --workload " + prefix,
                dir + "/fred/mesh_message"));
  const Figures study = run(wafersim, "study", "configs/studies/fred_microbench.yaml -j 2",
                            dir + "/fred/study", "results.csv", false);
  std::printf("%-62s wall %7.2f s  CPU %7.2f s\n", "Fred microbenchmark study (all its runs), -j 2",
              study.wall_s, study.cpu_s);
}

// The sparse unit's speed case (issue 13): a 1,000-layer pruned MLP on 64 NPUs (8x8 mesh, message
// fidelity) against the same trace with dense layers, and the unit's simulated cycles per CPU
// second.
void sparse_units(const std::string& wafersim, const std::string& dir) {
  wafersim::chakra::SparseMlpSpec mlp;
  mlp.ranks = 64;
  mlp.layers = 1000;
  mlp.hidden = 1024;
  mlp.batch = 64;
  mlp.densities = {0.5, 0.1, 0.02};
  wafersim::chakra::write_sparse_mlp(dir + "/sparse/s/mlp", mlp);
  mlp.dense_layers = true;
  wafersim::chakra::write_sparse_mlp(dir + "/sparse/d/mlp", mlp);
  const std::string platform = "--platform configs/mesh_8x8.yaml --fidelity message --workload ";
  const Figures sparse = run(wafersim, "run", platform + dir + "/sparse/s/mlp", dir + "/sparse/so");
  const Figures dense = run(wafersim, "run", platform + dir + "/sparse/d/mlp", dir + "/sparse/do");
  print_run("pruned MLP, 1,000 sparse layers, 64 NPUs, message", sparse);
  print_run("the same with dense layers, 64 NPUs, message", dense);
  double cycles = 0, jobs = 0;
  for (const auto& npu : sparse.report["npus"])
    if (npu.contains("sparse_unit")) {
      cycles += npu["sparse_unit"]["cycles"].get<double>();
      jobs += npu["sparse_unit"]["jobs"].get<double>();
    }
  std::printf("  sparse units: %.0f jobs, %.3g unit cycles simulated, %.3g per CPU second\n", jobs,
              cycles, cycles / sparse.cpu_s);
}

}  // namespace

// libsystemc (linked through the testbench library) references sc_main; the bench never elaborates.
extern "C" int sc_main(int, char**) {
  return 0;
}

int main(int argc, char** argv) {
  CLI::App app{"wafersim's speed cases, as whole runs (docs/performance.md)"};
  std::string wafersim = "build/wafersim", which = "all";
  wafersim::bench::Tools tools;
  tools.dir = "/tmp/wafersim-bench";
  app.add_option("wafersim", wafersim, "the wafersim binary (default build/wafersim)");
  app.add_option("case", which,
                 "all | collectives | traffic | waves | import | data | synth | multidim | fred | "
                 "sparse | themis | scaling | booksim | astra-sim (default all; themis, scaling "
                 "and the side-by-side cases are not part of all)");
  app.add_option("--booksim", tools.booksim,
                 "BookSim 2 binary, built outside this repository: the booksim case runs it and "
                 "wafersim alternately");
  app.add_option("--booksim-config", tools.booksim_config,
                 "BookSim configuration (default: the binary's ../runfiles/meshconfig)");
  app.add_option("--astra-sim", tools.astra_sim,
                 "ASTRA-sim analytical binary, built outside this repository: the astra-sim case "
                 "runs it and wafersim alternately");
  app.add_option("--astra-sim-unaware", tools.astra_sim_unaware,
                 "ASTRA-sim's congestion-unaware analytical binary, for the multi-dimensional case "
                 "(the congestion-aware backend models one dimension)");
  app.add_option("--repeats", tools.repeats, "side-by-side runs of each tool per case (default 3)")
      ->check(CLI::Range(1, 100));
  app.add_option("--dir", tools.dir, "scratch folder (default /tmp/wafersim-bench)");
  CLI11_PARSE(app, argc, argv);
  // Absolute paths: the reference tools run in their cases' folders (ASTRA-sim writes ./log).
  auto absolute = [](std::string& path) {
    if (!path.empty()) path = std::filesystem::absolute(path).string();
  };
  for (std::string* path :
       {&tools.booksim, &tools.booksim_config, &tools.astra_sim, &tools.astra_sim_unaware})
    absolute(*path);
  tools.wafersim = wafersim;
  const std::string& dir = tools.dir;
  if (tools.booksim_config.empty() && !tools.booksim.empty())
    tools.booksim_config =
        (std::filesystem::path(tools.booksim).parent_path() / ".." / "runfiles" / "meshconfig")
            .lexically_normal()
            .string();
  auto needs = [&](const std::string& tool, const char* option) {
    if (tool.empty())
      std::fprintf(stderr, "wafersim_bench: the %s case needs %s PATH\n", which.c_str(), option);
    else if (access(tool.c_str(), X_OK) != 0)
      std::fprintf(stderr, "wafersim_bench: %s '%s': not an executable file\n", option,
                   tool.c_str());
    else
      return true;
    std::exit(2);
  };
  if (which == "booksim" && needs(tools.booksim, "--booksim"))
    wafersim::bench::booksim_side_by_side(tools);
  if (which == "astra-sim" && needs(tools.astra_sim, "--astra-sim"))
    wafersim::bench::astra_sim_side_by_side(tools);
  if (which == "all" || which == "collectives") collectives(wafersim, dir);
  if (which == "all" || which == "traffic") traffic(wafersim, dir);
  if (which == "all" || which == "waves") waves(wafersim, dir);
  if (which == "all" || which == "import") import(dir);
  if (which == "all" || which == "data") data(wafersim, dir);
  if (which == "all" || which == "synth") synth();
  if (which == "all" || which == "multidim") multidim(wafersim, dir);
  if (which == "all" || which == "fred") fred(wafersim, dir);
  if (which == "all" || which == "sparse") sparse_units(wafersim, dir);
  if (which == "themis") themis(wafersim, dir);
  if (which == "scaling") wafersim::bench::scaling(wafersim, dir, dir + "/scaling_results");
  return 0;
}
