#include "bench/side_by_side.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <vector>

#include "bench/astra_inputs.h"
#include "bench/child_process.h"
#include "tb/chakra/generator.h"

namespace wafersim::bench {

namespace {

// Repeated measurements of one tool on one case.
struct Samples {
  std::vector<double> cpu_s, rss_mb;
  void add(const ProcessFigures& f) {
    cpu_s.push_back(f.cpu_s);
    rss_mb.push_back(f.rss_mb);
  }
  static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }
  double median_cpu() const { return median(cpu_s); }
  double min_cpu() const { return *std::min_element(cpu_s.begin(), cpu_s.end()); }
  double max_rss() const { return *std::max_element(rss_mb.begin(), rss_mb.end()); }
};

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs `wafersim ARGS --out OUT` (its output to OUT.log), adds its figures to `samples` and returns
// OUT/<report>.
nlohmann::json run_wafersim(const Tools& tools, const std::string& args, const std::string& out,
                            const std::string& report, Samples& samples) {
  samples.add(run_checked(tools.wafersim + " " + args + " --out " + out, out + ".log"));
  nlohmann::json j;
  std::ifstream(out + "/" + report) >> j;
  return j;
}

// The value of `key = value;` in a BookSim configuration file (or `fallback`).
double booksim_setting(const std::string& config, const std::string& key, double fallback) {
  const std::regex re("(^|\\n)\\s*" + key + "\\s*=\\s*([0-9.]+)\\s*;");
  std::smatch m;
  return std::regex_search(config, m, re) ? std::stod(m[2]) : fallback;
}

// What a BookSim run in latency mode printed: its simulated cycles, the periods it ran (warm-up
// and samples, one "Packet latency average" line each) and the overall average packet latency.
struct BookSimRun {
  double cycles = 0, latency = 0;
  int periods = 0;
};

BookSimRun parse_booksim(const std::string& log_text) {
  BookSimRun run;
  std::smatch m;
  if (std::regex_search(log_text, m, std::regex("Time taken is ([0-9]+) cycles")))
    run.cycles = std::stod(m[1]);
  const std::regex latency("Packet latency average = ([0-9.]+)( \\(1 samples\\))?");
  for (auto it = std::sregex_iterator(log_text.begin(), log_text.end(), latency);
       it != std::sregex_iterator(); ++it) {
    if ((*it)[2].matched)
      run.latency = std::stod((*it)[1]);
    else
      ++run.periods;
  }
  return run;
}

void print_samples(const char* tool, const Samples& s, double cycles, double latency) {
  std::printf(
      "  %-9s CPU median %7.3f s  min %7.3f s  peak RSS %6.1f MB  %7.0f cycles  %9.0f cycles/CPU-s "
      "(median)  latency %.2f cycles\n",
      tool, s.median_cpu(), s.min_cpu(), s.max_rss(), cycles, cycles / s.median_cpu(), latency);
}

// The largest "sys[i] finished, T cycles" of an ASTRA-sim log: the collective's time, ns.
double astra_sim_finish(const std::string& log_text) {
  const std::regex finished("finished, ([0-9]+) cycles");
  double t = 0;
  for (auto it = std::sregex_iterator(log_text.begin(), log_text.end(), finished);
       it != std::sregex_iterator(); ++it)
    t = std::max(t, std::stod((*it)[1]));
  return t;
}

}  // namespace

void booksim_side_by_side(const Tools& tools) {
  const std::string config_text = read_text(tools.booksim_config);
  if (config_text.empty()) {
    std::fprintf(stderr, "wafersim_bench: cannot read BookSim's configuration '%s'\n",
                 tools.booksim_config.c_str());
    std::exit(1);
  }
  const int warmup_periods = static_cast<int>(booksim_setting(config_text, "warmup_periods", 3));
  const double sample_period = booksim_setting(config_text, "sample_period", 1000);
  struct Case {
    int k;
    double rate;
  };
  const std::string dir = tools.dir + "/booksim";
  std::filesystem::create_directories(dir);
  std::printf("BookSim 2 side by side (%s), %d runs each, alternating\n",
              tools.booksim_config.c_str(), tools.repeats);
  for (const Case c : {Case{8, 0.1}, Case{8, 0.3}, Case{16, 0.1}}) {
    char rate[16];
    std::snprintf(rate, sizeof rate, "%.2f", c.rate);
    const std::string k = std::to_string(c.k);
    std::printf("%sx%s mesh, uniform, %s flits/node/cycle\n", k.c_str(), k.c_str(), rate);
    Samples booksim, wafersim;
    BookSimRun reference;
    double cycles = 0, latency = 0;
    for (int r = 0; r < tools.repeats; ++r) {
      const std::string log = dir + "/booksim.log";
      const ProcessFigures b = run_child(tools.booksim + " " + tools.booksim_config + " k=" + k +
                                             " traffic=uniform injection_rate=" + rate,
                                         log);
      reference = parse_booksim(read_text(log));
      // BookSim's main returns -1 when the simulation succeeded: its log tells.
      if (reference.cycles == 0 || reference.latency == 0) fail("BookSim", log);
      booksim.add(b);
      // The same warm-up and measurement as BookSim's run; both drain what was measured.
      const auto warmup = static_cast<uint64_t>(warmup_periods * sample_period);
      const auto measure =
          static_cast<uint64_t>(std::max(1, reference.periods - warmup_periods) * sample_period);
      const nlohmann::json report = run_wafersim(
          tools,
          "traffic --quiet --platform configs/booksim_meshconfig.yaml --pattern uniform --rate " +
              std::string(rate) + " --warmup-cycles " + std::to_string(warmup) +
              " --measure-cycles " + std::to_string(measure) + " --set network.mesh_x=" + k +
              " network.mesh_y=" + k,
          dir + "/wafersim", "traffic.json", wafersim);
      cycles = report["simulated_cycles"];
      latency = report["avg_packet_latency_cycles"];
    }
    print_samples("BookSim", booksim, reference.cycles, reference.latency);
    print_samples("wafersim", wafersim, cycles, latency);
    std::printf(
        "  ratio (wafersim / BookSim cycles per CPU-s): %.1fx on medians, %.1fx on minima; peak "
        "RSS %.2fx\n",
        (cycles / wafersim.median_cpu()) / (reference.cycles / booksim.median_cpu()),
        (cycles / wafersim.min_cpu()) / (reference.cycles / booksim.min_cpu()),
        wafersim.max_rss() / booksim.max_rss());
  }
}

void astra_sim_side_by_side(const Tools& tools) {
  const std::string dir = tools.dir + "/astra-sim";
  std::filesystem::create_directories(dir);
  const std::string memory = dir + "/no_memory_expansion.json";
  write_no_memory_expansion(memory);
  std::printf(
      "ASTRA-sim side by side (%s; several dimensions: %s), %d runs each, alternating; wafersim "
      "at message fidelity\n",
      tools.astra_sim.c_str(),
      tools.astra_sim_unaware.empty() ? "skipped" : tools.astra_sim_unaware.c_str(), tools.repeats);
  struct Case {
    std::vector<int> dims;
    uint64_t bytes;
  };
  std::vector<Case> cases;
  for (uint64_t bytes : {uint64_t{1} << 20, uint64_t{1} << 30})
    for (int npus : {16, 64, 256, 1024}) cases.push_back({{npus}, bytes});
  cases.push_back({{32, 32}, uint64_t{1} << 30});
  for (const Case& c : cases) {
    int npus = 1;
    std::string shape;
    for (int n : c.dims) {
      npus *= n;
      shape += (shape.empty() ? "Ring " : " x Ring ") + std::to_string(n);
    }
    std::string label;
    for (int n : c.dims) label += (label.empty() ? "" : "x") + std::to_string(n);
    const std::string prefix = dir + "/" + label + "_" + std::to_string(c.bytes);
    // ASTRA-sim's congestion-aware backend models one dimension only: the multi-dimensional case
    // runs on its congestion-unaware one (--astra-sim-unaware).
    const std::string& astra_sim = c.dims.size() > 1 ? tools.astra_sim_unaware : tools.astra_sim;
    if (astra_sim.empty()) {
      std::printf("%s: skipped (needs --astra-sim-unaware PATH)\n", shape.c_str());
      continue;
    }
    chakra::MicrobenchmarkSpec spec;
    spec.ranks = npus;
    spec.bytes = c.bytes;
    chakra::write_microbenchmark(prefix + "/ar", spec);
    const std::string network = prefix + "/network.yml", system = prefix + "/system.json";
    write_ring_network(network, c.dims);
    write_ring_4chunks_system(system, static_cast<int>(c.dims.size()));
    std::printf("%s (%d NPUs), all-reduce of %s, 4 chunks\n", shape.c_str(), npus,
                c.bytes == (uint64_t{1} << 30) ? "1 GiB" : "1 MiB");
    Samples astra, wafersim;
    double astra_ns = 0, wafersim_ns = 0;
    for (int r = 0; r < tools.repeats; ++r) {
      const std::string log = prefix + "/astra-sim.log";
      // In the case's folder: ASTRA-sim writes ./log.
      const ProcessFigures a = run_child(
          "cd " + prefix + " && " + astra_sim + " --workload-configuration=" + prefix +
              "/ar --system-configuration=" + system + " --network-configuration=" + network +
              " --remote-memory-configuration=" + memory,
          log);
      astra_ns = astra_sim_finish(read_text(log));
      if (!a.ok || astra_ns == 0) fail("ASTRA-sim", log);
      astra.add(a);
      const nlohmann::json report =
          run_wafersim(tools,
                       "run --quiet --fidelity message --astra-network " + network +
                           " --astra-system " + system + " --workload " + prefix + "/ar",
                       prefix + "/wafersim", "report.json", wafersim);
      wafersim_ns = report["makespan_ns"];
    }
    auto line = [](const char* tool, const Samples& s, double ns) {
      std::printf("  %-9s CPU median %7.3f s  min %7.3f s  peak RSS %7.1f MB  simulated %.0f ns\n",
                  tool, s.median_cpu(), s.min_cpu(), s.max_rss(), ns);
    };
    line("ASTRA-sim", astra, astra_ns);
    line("wafersim", wafersim, wafersim_ns);
    std::printf(
        "  ratio (ASTRA-sim / wafersim CPU): %.1fx on medians, %.1fx on minima; memory %.2f of "
        "ASTRA-sim's; times differ by %+.2f%%\n",
        astra.median_cpu() / wafersim.median_cpu(), astra.min_cpu() / wafersim.min_cpu(),
        wafersim.max_rss() / astra.max_rss(), (wafersim_ns - astra_ns) / astra_ns * 100);
  }
}

}  // namespace wafersim::bench
