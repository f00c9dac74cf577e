#include "bench/scaling.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "bench/astra_inputs.h"
#include "bench/child_process.h"
#include "tb/chakra/generator.h"
#include "tb/plots/gnuplot.h"

namespace wafersim::bench {

namespace {

struct Point {
  double size;  // NPUs, or routers
  ProcessFigures figures;
  double events, units;  // kernel events; messages sent, or router crossings
};

// The least-squares slope of log(cpu) against log(size): cost grows as size^slope.
double growth_exponent(const std::vector<Point>& points) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  const double n = static_cast<double>(points.size());
  for (const Point& p : points) {
    const double x = std::log(p.size), y = std::log(p.figures.cpu_s);
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

nlohmann::json read_json(const std::string& path) {
  nlohmann::json j;
  std::ifstream in(path);
  if (in) in >> j;
  return j;
}

void print_point(const char* what, const Point& p, const char* unit) {
  std::printf(
      "  %-22s wall %8.2f s  CPU %8.2f s  peak RSS %8.1f MB  %12.0f events  %11.0f %s  %.2f "
      "events per %s\n",
      what, p.figures.wall_s, p.figures.cpu_s, p.figures.rss_mb, p.events, p.units, unit,
      p.events / p.units, unit);
}

}  // namespace

void scaling(const std::string& wafersim, const std::string& dir, const std::string& out_dir) {
  std::filesystem::create_directories(dir + "/scaling");
  std::filesystem::create_directories(out_dir);
  std::ofstream csv(out_dir + "/scaling.csv");
  csv << "fidelity,size,wall_s,cpu_s,peak_rss_mb,events,units,events_per_unit\n";
  auto record = [&](const char* fidelity, const Point& p) {
    csv << fidelity << "," << p.size << "," << p.figures.wall_s << "," << p.figures.cpu_s << ","
        << p.figures.rss_mb << "," << p.events << "," << p.units << "," << p.events / p.units
        << "\n";
  };

  std::printf("message fidelity: ring all-reduce of 1 GiB, 4 chunks (Ring_4chunks.json)\n");
  std::vector<Point> message;
  for (int npus : {16, 64, 256, 1024, 4096}) {
    const std::string prefix = dir + "/scaling/ring" + std::to_string(npus);
    chakra::MicrobenchmarkSpec spec;
    spec.ranks = npus;
    spec.bytes = uint64_t{1} << 30;
    chakra::write_microbenchmark(prefix + "/ar", spec);
    write_ring_network(prefix + "/network.yml", {npus});
    write_ring_4chunks_system(prefix + "/system.json", 1);
    const ProcessFigures f =
        run_checked(wafersim + " run --quiet --fidelity message --astra-network " + prefix +
                        "/network.yml --astra-system " + prefix + "/system.json --workload " +
                        prefix + "/ar --out " + prefix + "/out",
                    prefix + "/run.log");
    const nlohmann::json report = read_json(prefix + "/out/report.json");
    double messages = 0;
    for (const auto& npu : report["npus"]) messages += npu.value("messages_sent", 0.0);
    message.push_back({static_cast<double>(npus), f, report.value("events", 0.0), messages});
    print_point((std::to_string(npus) + " NPUs").c_str(), message.back(), "message");
    record("message", message.back());
  }
  std::printf("  CPU time grows as NPUs^%.2f\n", growth_exponent(message));

  std::printf("flit fidelity: uniform traffic at 0.1 flits/node/cycle, 3,000 + 3,000 cycles\n");
  std::vector<Point> flit;
  for (int k : {4, 8, 16, 32}) {
    const std::string out = dir + "/scaling/mesh" + std::to_string(k);
    const ProcessFigures f = run_checked(
        wafersim +
            " traffic --quiet --platform configs/booksim_meshconfig.yaml --pattern uniform "
            "--rate 0.1 --warmup-cycles 3000 --measure-cycles 3000 --set network.mesh_x=" +
            std::to_string(k) + " network.mesh_y=" + std::to_string(k) + " --out " + out,
        out + ".log");
    const nlohmann::json report = read_json(out + "/traffic.json");
    // Router crossings: every flit offered over the run crosses hops + 1 routers.
    const double cycles = report.value("simulated_cycles", 0.0);
    const double crossings = report.value("offered_flits_per_node_cycle", 0.0) * k * k * cycles *
                             (report.value("avg_hops", 0.0) + 1);
    flit.push_back({static_cast<double>(k * k), f, report.value("events", 0.0), crossings});
    print_point((std::to_string(k) + "x" + std::to_string(k) + " mesh").c_str(), flit.back(),
                "crossing");
    record("flit", flit.back());
  }
  std::printf("  CPU time grows as routers^%.2f\n", growth_exponent(flit));

  auto curve = [](const char* title, const std::vector<Point>& points) {
    tb::Curve c{title, {}};
    for (const Point& p : points) c.points.push_back({p.size, p.figures.cpu_s});
    return c;
  };
  const std::string problem =
      tb::plot_curves(out_dir + "/scaling.png", "wafersim: CPU time against system size",
                      "NPUs (mesh: routers)", "CPU seconds",
                      {curve("message fidelity, ring all-reduce 1 GiB, 4 chunks", message),
                       curve("flit fidelity, uniform 0.1, 6,000 cycles", flit)},
                      true);
  if (!problem.empty()) std::fprintf(stderr, "wafersim_bench: no plot: %s\n", problem.c_str());
  std::printf("wrote %s/scaling.csv and scaling.png\n", out_dir.c_str());
}

}  // namespace wafersim::bench
