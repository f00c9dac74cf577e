#include "tb/traffic/traffic_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>
#include <systemc>

#include "hw/platform/platform.h"
#include "hw/proto/event_counter.h"
#include "models/common/error.h"
#include "tb/common/child_processes.h"
#include "tb/common/files.h"
#include "tb/common/huge_pages.h"
#include "tb/common/stop_signals.h"
#include "tb/plots/gnuplot.h"
#include "tb/run/progress.h"

namespace wafersim::tb {

namespace {

nlohmann::json to_json(const TrafficOptions& o, const PlatformSpec& spec, const TrafficResult& r) {
  nlohmann::json j;
  j["platform"] = spec.name;
  j["pattern"] = to_string(o.spec.pattern);
  j["fidelity"] = hw::to_string(spec.fabric.fidelity);
  j["rate_flits_per_node_cycle"] = o.spec.rate;
  j["packet_flits"] = o.spec.packet_flits;
  j["warmup_cycles"] = o.spec.warmup_cycles;
  j["measure_cycles"] = o.spec.measure_cycles;
  j["offered_flits_per_node_cycle"] = r.offered_flits_per_node_cycle;
  j["accepted_flits_per_node_cycle"] = r.accepted_flits_per_node_cycle;
  j["avg_packet_latency_cycles"] = r.avg_packet_latency_cycles;
  j["avg_network_latency_cycles"] = r.avg_network_latency_cycles;
  j["max_packet_latency_cycles"] = r.max_packet_latency_cycles;
  j["avg_hops"] = r.avg_hops;
  j["measured_packets"] = r.measured_packets;
  j["delivered_measured_packets"] = r.delivered_measured_packets;
  j["simulated_cycles"] = r.simulated_cycles;
  j["saturated"] = r.saturated;
  return j;
}

// One folder per point, named by the rate in shortest round-trip form (distinct rates, distinct
// folders).
std::string rate_dir(double rate) {
  return fmt::format("rate_{}", rate);
}

}  // namespace

int run_traffic(const TrafficOptions& o, std::ostream& out, std::ostream& err) {
  const auto wall_start = std::chrono::steady_clock::now();
  try {
    PlatformSpec spec = load_platform_spec(o.platform);
    if (!o.platform.out_dir.empty()) check_writable(o.platform.out_dir + "/traffic.json", "--out");
    TrafficOptions opts = o;
    try {
      opts.spec.pattern = pattern_from_string(o.pattern);
    } catch (const std::invalid_argument& e) {
      throw InputError("command line", "--pattern", e.what());
    }
    if (o.rates.size() != 1) throw InputError("command line", "--rate", "give one offered load");
    opts.spec.rate = o.rates.front();
    if (spec.fabric.fidelity == hw::Fidelity::Message)
      throw InputError("command line", "--fidelity",
                       "synthetic traffic needs flit or packet fidelity (a packet is the unit "
                       "measured)");
    // One packet per message, its payload what the flits leave after the header: the NIC cuts
    // nothing further.
    const uint64_t wire = static_cast<uint64_t>(opts.spec.packet_flits) * spec.fabric.flit_bytes;
    if (spec.fabric.header_bytes >= wire)
      throw InputError("command line", "traffic",
                       "a packet of " + std::to_string(opts.spec.packet_flits) +
                           " flits has no room for its payload after the header");
    spec.fabric.packet_bytes = static_cast<uint32_t>(wire - spec.fabric.header_bytes);
    topology::Topology topology = build_topology(spec);
    restart_with_huge_pages_for(topology.nodes().size());  // before anything is printed
    std::unique_ptr<hw::Platform> platform = build_platform(spec, topology);
    std::unique_ptr<TrafficDriver> driver;
    try {
      driver = std::make_unique<TrafficDriver>("traffic", opts.spec, topology, *platform);
    } catch (const std::invalid_argument& e) {
      throw InputError("command line", "traffic", e.what());
    }
    hw::event_counter() = 0;
    // Sliced like a replay: a progress line for long points, and SIGINT / SIGTERM stop it cleanly
    // (a partial point measures nothing, so nothing is written).
    const uint64_t cycles = opts.spec.warmup_cycles + opts.spec.measure_cycles;
    const double cycle_ns = 1.0 / spec.network.clock_ghz;
    SlicedRun sliced({[cycles, cycle_ns]() {
                        return std::min<uint64_t>(
                            cycles, static_cast<uint64_t>(sc_core::sc_time_stamp().to_seconds() *
                                                          1e9 / cycle_ns));
                      },
                      cycles, "cycles"},
                     o.platform.progress ? &err : nullptr);
    if (const int stopped = sliced.run()) {
      err << "wafersim: stopped by a signal at cycle "
          << static_cast<uint64_t>(sc_core::sc_time_stamp().to_seconds() * 1e9 / cycle_ns) << " of "
          << cycles << "; nothing measured, nothing written\n";
      return stopped;
    }
    const TrafficResult r = driver->result();
    if (r.measured_packets == 0)
      throw InputError("command line", "--rate",
                       "no packet was offered in the " + std::to_string(opts.spec.measure_cycles) +
                           "-cycle measurement window at " + fmt::format("{}", opts.spec.rate) +
                           " flits/node/cycle, so nothing was measured: raise --rate or "
                           "--measure-cycles");
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    nlohmann::json j = to_json(opts, spec, r);
    j["events"] = hw::event_counter();
    j["wall_seconds"] = wall;
    j["simulated_cycles_per_second"] = wall > 0 ? r.simulated_cycles / wall : 0;
    if (!o.platform.out_dir.empty())
      write_file_atomically(o.platform.out_dir + "/traffic.json", j.dump(2) + "\n");
    out << "traffic " << j["pattern"].get<std::string>() << " on " << spec.name << " ("
        << j["fidelity"].get<std::string>() << " fidelity), " << o.spec.packet_flits
        << "-flit packets\n"
        << "  offered  " << r.offered_flits_per_node_cycle << " flits/node/cycle\n"
        << "  accepted " << r.accepted_flits_per_node_cycle << " flits/node/cycle\n"
        << "  latency  " << r.avg_packet_latency_cycles << " cycles per packet ("
        << r.avg_network_latency_cycles << " in the network), " << r.measured_packets
        << " packets measured\n"
        << "  " << (r.saturated ? "SATURATED" : "not saturated") << "; " << r.simulated_cycles
        << " cycles simulated in " << wall << " s\n";
    return kOk;
  } catch (const InputError& e) {
    err << "wafersim: error: " << e.what() << "\n";
    return kInputError;
  }
}

int run_traffic_sweep(const TrafficOptions& o, const std::vector<std::string>& point_args,
                      const std::string& self, std::ostream& out, std::ostream& err) {
  const std::string dir = o.platform.out_dir.empty() ? "." : o.platform.out_dir;
  std::filesystem::create_directories(dir);
  std::vector<ChildJob> jobs;
  for (double rate : o.rates) {
    std::string d = dir + "/" + rate_dir(rate);
    ChildJob job{{"traffic", "--quiet", "--out", d, "--rate", fmt::format("{}", rate)}, d};
    job.args.insert(job.args.end(), point_args.begin(), point_args.end());
    jobs.push_back(job);
  }
  std::vector<int> codes = run_children(self, jobs, o.jobs, [&](size_t i, int code) {
    out << "rate " << o.rates[i] << ": " << (code == 0 ? "ok" : "failed") << "\n";
  });

  std::ostringstream csv;
  csv << "rate_flits_per_node_cycle,offered_flits_per_node_cycle,accepted_flits_per_node_cycle,"
         "avg_packet_latency_cycles,avg_network_latency_cycles,simulated_cycles,saturated,"
         "wall_seconds,error\n";
  Curve packet{"packet latency", {}}, network{"network latency", {}};
  int failed = 0;
  for (size_t i = 0; i < o.rates.size(); ++i) {
    nlohmann::json j;
    std::ifstream f(jobs[i].dir + "/traffic.json");
    bool have = false;
    if (codes[i] == 0 && f) {
      try {
        f >> j;
        have = true;
      } catch (...) {
      }
    }
    csv << fmt::format("{},", o.rates[i]);
    if (have) {
      // Shortest round-trip text: full precision, no float noise.
      csv << fmt::format("{},{},{},{},{},{},{},\n", j["offered_flits_per_node_cycle"].get<double>(),
                         j["accepted_flits_per_node_cycle"].get<double>(),
                         j["avg_packet_latency_cycles"].get<double>(),
                         j["avg_network_latency_cycles"].get<double>(),
                         j["simulated_cycles"].get<uint64_t>(), j["saturated"].get<bool>() ? 1 : 0,
                         j["wall_seconds"].get<double>());
      if (!j["saturated"].get<bool>()) {
        packet.points.push_back({j["offered_flits_per_node_cycle"].get<double>(),
                                 j["avg_packet_latency_cycles"].get<double>()});
        network.points.push_back({j["offered_flits_per_node_cycle"].get<double>(),
                                  j["avg_network_latency_cycles"].get<double>()});
      }
    } else {
      ++failed;
      csv << ",,,,,,," << csv_escape(first_error_line(jobs[i].dir)) << "\n";
    }
  }
  write_file_atomically(dir + "/latency_load.csv", csv.str());
  out << "table: " << dir << "/latency_load.csv\n";
  if (o.plots) {
    std::string problem = plot_curves(
        dir + "/latency_load.png", "latency against offered load (" + o.pattern + ")",
        "offered load (flits/node/cycle)", "average latency (cycles)", {packet, network});
    if (!problem.empty()) {
      err << "wafersim: error: " << dir << "/latency_load.png: " << problem << "\n";
      return kInputError;
    }
    out << "plot: " << dir << "/latency_load.png\n";
  }
  if (StopSignals::received()) return StopSignals::exit_code();
  if (failed) {
    err << "wafersim: error: " << failed << " of " << o.rates.size()
        << " points failed; see latency_load.csv\n";
    return kInputError;
  }
  return kOk;
}

}  // namespace wafersim::tb
