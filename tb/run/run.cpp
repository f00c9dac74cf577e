#include "tb/run/run.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <systemc>
#include <utility>

#include "hw/fred/fred_switch.h"
#include "hw/platform/platform.h"
#include "hw/proto/event_counter.h"
#include "models/common/error.h"
#include "tb/common/files.h"
#include "tb/common/huge_pages.h"
#include "tb/observe/probe_fanout.h"
#include "tb/observe/timeline_recorder.h"
#include "tb/plots/run_plots.h"
#include "tb/replay/replay.h"
#include "tb/report/report.h"
#include "tb/run/progress.h"

namespace wafersim::tb {

PlatformSpec load_platform_spec(const RunOptions& o) {
  PlatformSpec spec;
  if (!o.platform.empty() && !o.astra_network.empty())
    throw InputError("command line", "--platform",
                     "give either --platform or --astra-network/--astra-system");
  // --fidelity is the last override, so that the platform is checked with it (in-network flows,
  // Go-Back-N and fault injection ask for a fidelity).
  std::vector<std::string> overrides = o.overrides;
  if (!o.fidelity.empty()) {
    try {
      hw::fidelity_from_string(o.fidelity);
    } catch (const std::exception& e) {
      throw InputError("command line", "--fidelity", e.what());
    }
    overrides.push_back("fabric.fidelity=" + o.fidelity);
  }
  if (!o.platform.empty()) {
    spec = load_platform(o.platform, overrides);
  } else if (!o.astra_network.empty() && !o.astra_system.empty()) {
    spec = load_astra_platform(o.astra_network, o.astra_system, overrides);
  } else {
    throw InputError("command line", "--platform",
                     "give --platform FILE, or both --astra-network and --astra-system");
  }
  return spec;
}

void check_time_limits(const chakra::Workload& workload, const PlatformSpec& spec) {
  // Half the kernel's range for one transfer or memory node leaves room for the rest of the run.
  constexpr double kLongestPs = 9.2e18;
  const auto& n = spec.network;
  double slowest_gbps = n.shape == topology::Shape::Dimensions ? 1e300 : n.link_bandwidth_gbps;
  for (const auto& dim : n.dims) slowest_gbps = std::min(slowest_gbps, dim.link_bandwidth_gbps);
  if (n.injection_bandwidth_gbps > 0)
    slowest_gbps = std::min(slowest_gbps, n.injection_bandwidth_gbps);
  if (n.uplink_bandwidth_gbps > 0) slowest_gbps = std::min(slowest_gbps, n.uplink_bandwidth_gbps);
  for (const auto& trace : workload.ranks)
    for (const auto& node : trace.nodes) {
      if (node.is_cpu_op) continue;
      const bool memory =
          node.kind == chakra::NodeKind::MemLoad || node.kind == chakra::NodeKind::MemStore;
      const bool transfer = node.kind == chakra::NodeKind::Send ||
                            node.kind == chakra::NodeKind::Recv ||
                            node.kind == chakra::NodeKind::Collective;
      if (!memory && !transfer) continue;
      // All-gather moves every rank's part; the others at most the buffer.
      double bytes =
          static_cast<double>(memory ? node.tensor_size.value_or(0) : node.comm_size.value_or(0));
      if (node.kind == chakra::NodeKind::Collective)
        bytes *= static_cast<double>(workload.members(node.pg_name).size());
      const double gbps = memory ? spec.npu.hbm_bandwidth_gbps : slowest_gbps;
      const double ps = bytes / gbps * 1e3;  // GB/s = bytes per ns
      if (ps > kLongestPs)
        throw InputError(trace.file, "node " + std::to_string(node.id) + " ('" + node.name + "')",
                         fmt::format("{:.0f} bytes at {:g} GB/s take {:.3g} s, longer than "
                                     "SystemC can simulate (2^64 ps, about 213 days)",
                                     bytes, gbps, ps * 1e-12));
    }
}

topology::Topology build_topology(const PlatformSpec& spec) {
  try {
    return topology::Topology::build(spec.network);
  } catch (const std::invalid_argument& e) {
    throw InputError(spec.source, "network", e.what());
  }
}

std::unique_ptr<hw::Platform> build_platform(const PlatformSpec& spec,
                                             const topology::Topology& topology) {
  sc_core::sc_report_handler::set_actions("/IEEE_Std_1666/deprecated", sc_core::SC_DO_NOTHING);
  try {
    return std::make_unique<hw::Platform>("platform", topology, spec.fabric, spec.npu);
  } catch (const std::invalid_argument& e) {
    throw InputError(spec.source, "fabric", e.what());
  }
}

namespace {

// The closing line on stderr and the exit code, from how the run ended.
int finish_message(const RunInfo& info, double simulated_ns, std::ostream& err) {
  if (info.stop_code != 0) {
    err << "wafersim: "
        << (info.stop_code == kInterrupted  ? "interrupted"
            : info.stop_code == kTerminated ? "terminated (SIGTERM)"
                                            : "hung up (SIGHUP)")
        << " at " << simulated_ns / 1e3 << " us simulated; the report is marked incomplete\n";
    return info.stop_code;
  }
  if (!info.errors.empty()) {
    for (const auto& e : info.errors) err << "wafersim: error: " << e << "\n";
    return kInputError;
  }
  if (!info.stall.empty()) {
    err << "wafersim: the replay can no longer progress; what each rank waits for:\n" << info.stall;
    return kStalled;
  }
  if (info.data_mismatch) {
    err << "wafersim: data check failed: " << *info.data_mismatch << "\n";
    return kDataMismatch;
  }
  return kOk;
}

}  // namespace

int run_simulation(const RunOptions& o, std::ostream& out, std::ostream& err,
                   nlohmann::json* report_out) {
  const auto wall_start = std::chrono::steady_clock::now();
  try {
    PlatformSpec spec = load_platform_spec(o);
    topology::Topology topology = build_topology(spec);
    restart_with_huge_pages_for(topology.nodes().size());  // before anything is printed
    for (const std::string& notice : spec.notices) out << "wafersim: notice: " << notice << "\n";
    chakra::WorkloadOptions wo = o.workload;
    wo.ranks = topology.npu_count();
    wo.io_controllers = topology.endpoint_count() - topology.npu_count();
    chakra::Workload workload = chakra::load_workload(wo);
    check_time_limits(workload, spec);

    // Every collective's plan is built, and proven up to collectives.verify_max_ops, before the
    // platform: a wrong plan is reported sooner, and the proof's memory (24 bytes per block per
    // rank) is given back before the platform's is taken, not added to it.
    PlanLibrary plans(spec, &topology);
    plans.prepare(workload);
    std::unique_ptr<hw::Platform> platform = build_platform(spec, topology);
    Replay replay("replay", workload, spec, *platform, std::move(plans), o.data);

    // Output files are checked before simulating: a long run must not fail at its end.
    if (!o.waves.file.empty()) {
      if (o.waves.to_ns >= 0 && o.waves.to_ns <= o.waves.from_ns)
        throw InputError("command line", "--waves-to", "the window ends before it starts");
      check_writable(o.waves.file, "--waves");
    }
    if (!o.timeline.empty()) check_writable(o.timeline, "--timeline");
    if (!o.out_dir.empty()) check_writable(o.out_dir + "/report.json", "--out");

    // Observation: probes only when asked for, so a plain run pays nothing for them.
    ProbeFanout probes;
    std::unique_ptr<WaveRecorder> waves;
    std::unique_ptr<TimelineRecorder> timeline;
    if (!o.waves.file.empty()) {
      waves = std::make_unique<WaveRecorder>(o.waves, topology, platform->fabric().vcs,
                                             static_cast<int>(platform->fabric().buffer_flits));
      if (waves->signal_count() == 0)
        throw InputError("command line", "--waves-select", "no signal matches the patterns");
      probes.add(waves.get());
    }
    if (!o.timeline.empty()) {
      timeline = std::make_unique<TimelineRecorder>(topology);
      probes.add(timeline.get());
    }
    hw::probe() = waves || timeline ? &probes : nullptr;

    hw::event_counter() = 0;
    SlicedRun sliced({[&replay]() { return replay.nodes_done(); }, workload.node_count()},
                     o.progress ? &err : nullptr);
    RunInfo info;
    try {
      info.stop_code = sliced.run();
      hw::probe() = nullptr;
      replay.rethrow_failure();
    } catch (const hw::FlowConflict& e) {  // the platform's Fred switches cannot carry the flows
      hw::probe() = nullptr;
      throw InputError(o.platform.empty() ? "platform" : o.platform, "fabric.fred_middles",
                       e.what());
    }

    info.platform = spec.name;
    info.workload = o.workload.prefix;
    info.finished = replay.all_finished();
    info.events = hw::event_counter();
    info.reached = sc_core::sc_time_stamp();
    info.wall_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    info.errors = replay.errors();
    if (info.stop_code == 0 && info.errors.empty()) {
      // Finished with messages nobody received is a stall too: those ranks wait for nothing, but
      // the workload did not do what it says.
      info.stall = info.finished ? replay.unclaimed_report()
                                 : replay.stall_report() + replay.unclaimed_report();
      if (!info.stall.empty()) {
        info.finished = false;
        if (!workload.expected_stalls.empty()) {
          info.stall += "the trace check before the run had found:\n";
          for (const auto& why : workload.expected_stalls) info.stall += "  " + why + "\n";
        }
      }
    }
    if (replay.data_check().failed())
      info.data_mismatch = "collective '" + replay.data_check().collective +
                           "': " + replay.data_check().first->text();
    nlohmann::json report = make_report(spec, *platform, replay, info);
    report["notices"] = spec.notices;
    if (!o.out_dir.empty()) {
      write_file_atomically(o.out_dir + "/report.json", report.dump(2) + "\n");
      write_tables(report, o.out_dir);
      if (o.plots) {
        std::string problem = plot_run(report, topology, o.out_dir);
        if (!problem.empty()) throw InputError(o.out_dir, "--plots", problem);
      }
    }
    const double simulated_ns = report["simulated_ns"].get<double>();
    if (waves) waves->finish(sc_core::sc_time(simulated_ns, sc_core::SC_NS));
    if (timeline) timeline->write(o.timeline);
    out << summary(report);
    if (report_out) *report_out = report;
    return finish_message(info, simulated_ns, err);
  } catch (const InputError& e) {
    err << "wafersim: error: " << e.what() << "\n";
    return kInputError;
  }
}

}  // namespace wafersim::tb
