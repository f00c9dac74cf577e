// Whole-run timings of the issues' speed cases, printed as figures (docs/performance.md). Each case
// runs `wafersim` as a child process (SystemC elaborates once per process) and reads its report
// and its peak RSS and CPU time.
// Usage: wafersim_bench [path/to/wafersim] [all | collectives | traffic | waves | import | data]
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "models/collectives/msccl.h"
#include "models/collectives/symbolic.h"
#include "models/tacos/tacos.h"
#include "tb/chakra/generator.h"
#include "tb/collectives/msccl_xml.h"

namespace {

struct Figures {
  double wall_s;
  double cpu_s;
  double rss_mb;
  nlohmann::json report;
};

// Runs `wafersim <command> --quiet --out OUT ARGS` and reads OUT/<report>.
Figures run(const std::string& wafersim, const std::string& command, const std::string& args,
            const std::string& out, const std::string& report = "report.json") {
  std::string cmd = wafersim + " " + command + " --quiet --out " + out + " " + args;
  auto t0 = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", cmd.c_str(), nullptr);
    _exit(127);
  }
  int status = 0;
  struct rusage usage {};
  wait4(pid, &status, 0, &usage);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double cpu = usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec +
               usage.ru_stime.tv_usec / 1e6;
  Figures f{wall, cpu, usage.ru_maxrss / 1024.0, {}};
  std::ifstream in(out + "/" + report);
  if (in) in >> f.report;
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
      "--platform configs/wafer_mesh_5x4.yaml --fidelity packet --workload " + dir + "/ar20/ar";
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

double cpu_seconds() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec +
         usage.ru_stime.tv_usec / 1e6;
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

}  // namespace

// libsystemc (linked through the testbench library) references sc_main; the bench never elaborates.
extern "C" int sc_main(int, char**) {
  return 0;
}

int main(int argc, char** argv) {
  std::string wafersim = argc > 1 ? argv[1] : "build/wafersim";
  std::string which = argc > 2 ? argv[2] : "all";
  std::string dir = "/tmp/wafersim-bench";
  if (which == "all" || which == "collectives") collectives(wafersim, dir);
  if (which == "all" || which == "traffic") traffic(wafersim, dir);
  if (which == "all" || which == "waves") waves(wafersim, dir);
  if (which == "all" || which == "import") import(dir);
  if (which == "all" || which == "data") data(wafersim, dir);
  if (which == "all" || which == "synth") synth();
  return 0;
}
