// Whole-run timings of the speed cases, printed as figures (docs/performance.md). Each case
// runs `wafersim run` as a child process (SystemC elaborates once per process) and reads its report
// and peak RSS. Usage: wafersim_bench [path/to/wafersim]
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "tb/chakra/generator.h"

namespace {

struct Figures {
  double wall_s;
  double rss_mb;
  nlohmann::json report;
};

Figures run(const std::string& wafersim, const std::string& args, const std::string& out) {
  std::string cmd = wafersim + " run --quiet --out " + out + " " + args;
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
  Figures f{wall, usage.ru_maxrss / 1024.0, {}};
  std::ifstream in(out + "/report.json");
  if (in) in >> f.report;
  return f;
}

void print(const char* name, const Figures& f) {
  double events = f.report.value("events", 0.0);
  std::printf(
      "%-58s wall %7.2f s  peak RSS %7.1f MB  simulated %10.1f us  events %11.0f  (%.2f M "
      "events/s)\n",
      name, f.wall_s, f.rss_mb, f.report.value("makespan_ns", 0.0) / 1e3, events,
      events / f.wall_s / 1e6);
}

}  // namespace

// libsystemc (linked through the testbench library) references sc_main; the bench never elaborates.
extern "C" int sc_main(int, char**) { return 0; }

int main(int argc, char** argv) {
  std::string wafersim = argc > 1 ? argv[1] : "build/wafersim";
  std::string dir = "/tmp/wafersim-bench";
  using wafersim::chakra::MicrobenchmarkSpec;
  MicrobenchmarkSpec ar64;
  ar64.bytes = 64ull << 20;
  ar64.ranks = 64;
  wafersim::chakra::write_microbenchmark(dir + "/ar64/ar", ar64);
  print(
      "64-NPU ring all-reduce 64 MiB, 50 GB/s 500 ns, packet",
      run(wafersim,
          "--platform configs/ring_8npus.yaml --set network.npus=64 network.link_bandwidth_gbps=50 "
          "collectives.dataset_splits=1 --fidelity packet --workload " +
              dir + "/ar64/ar",
          dir + "/out64"));
  MicrobenchmarkSpec ar1k;
  ar1k.bytes = 1ull << 30;
  ar1k.ranks = 1024;
  wafersim::chakra::write_microbenchmark(dir + "/ar1k/ar", ar1k);
  print("1024-NPU ring all-reduce 1 GiB, message",
        run(wafersim,
            "--platform configs/ring_8npus.yaml --set network.npus=1024 "
            "network.link_bandwidth_gbps=50 "
            "collectives.dataset_splits=1 --fidelity message --workload " +
                dir + "/ar1k/ar",
            dir + "/out1k"));
  return 0;
}
