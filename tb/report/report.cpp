#include "tb/report/report.h"

#include <fmt/format.h>

#include <algorithm>

namespace wafersim::tb {

namespace {

// One NPU's sparse unit: its jobs and where their cycles went (docs/outputs.md).
nlohmann::json sparse_unit_json(const hw::SparseUnit& unit) {
  const hw::SparseUnitStats& st = unit.stats();
  return {{"jobs", st.jobs},
          {"busy_ns", st.busy.to_seconds() * 1e9},
          {"cycles", st.total.cycles},
          {"memory_cycles", st.total.memory_cycles},
          {"datapath_cycles", st.total.datapath_cycles},
          {"memory_stall_cycles", st.total.memory_stall_cycles},
          {"datapath_stall_cycles", st.total.datapath_stall_cycles},
          {"bytes_read", st.total.bytes_read},
          {"bytes_written", st.total.bytes_written},
          {"elements_in", st.total.elements_in},
          {"elements_out", st.total.elements_out}};
}

// Nanoseconds from the kernel's integer picoseconds: one correctly rounded division, so reports
// show 14339.001, not 14339.001000000002.
double ns(const sc_core::sc_time& t) {
  return static_cast<double>(t.value()) / 1e3;
}
}  // namespace

std::pair<double, double> nccl_bandwidths(const std::string& kind, int ranks, uint64_t bytes,
                                          double duration_ns) {
  if (duration_ns <= 0 || ranks < 1) return {0, 0};
  const double n = ranks;
  // nccl-tests' size S: the whole buffer; for all-gather that is every rank's part (Chakra's
  // comm_size is one rank's input).
  const double size = kind == "all_gather" ? bytes * n : static_cast<double>(bytes);
  const double algbw = size / duration_ns;  // bytes per ns = GB/s
  double factor = 1;
  if (kind == "all_reduce") factor = 2 * (n - 1) / n;
  if (kind == "all_gather" || kind == "reduce_scatter" || kind == "all_to_all")
    factor = (n - 1) / n;
  return {algbw, algbw * factor};
}

namespace {

// `run --data`: off, pass (every collective's every rank checked), fail (the first wrong value),
// or incomplete (the run did not finish, so not every result was checked).
nlohmann::json data_check_json(const Replay& replay, const hw::Platform& platform, bool complete) {
  nlohmann::json d;
  const DataOptions& o = replay.data_options();
  const DataCheck& c = replay.data_check();
  if (!o.enabled) {
    d["status"] = "off";
    return d;
  }
  d["status"] = c.failed() ? "fail" : complete ? "pass" : "incomplete";
  d["element_type"] = collectives::to_string(o.type);
  d["elements_per_block"] = o.elements;
  d["collectives_checked"] = c.collectives_checked;
  d["collectives_without_data"] = c.collectives_unchecked;
  uint64_t sparse_checked = 0, sparse_unchecked = 0;
  for (int r = 0; r < platform.endpoint_count(); ++r)
    if (const hw::SparseUnit* unit = platform.sparse_unit(r)) {
      sparse_checked += unit->stats().checked;
      sparse_unchecked += unit->stats().unchecked;
    }
  d["sparse_jobs_checked"] = sparse_checked;
  d["sparse_jobs_without_data"] = sparse_unchecked;
  if (c.failed()) {
    const auto& m = *c.first;
    d["first_mismatch"] = {{"collective", c.collective},
                           {"rank", m.rank},
                           {"chunk", m.chunk},
                           {"block", m.block},
                           {"element", m.element},
                           {"expected", m.expected},
                           {"got", m.got}};
  }
  return d;
}

}  // namespace

nlohmann::json make_report(const PlatformSpec& spec, const hw::Platform& platform,
                           const Replay& replay, const RunInfo& info) {
  nlohmann::json r;
  const auto ranks = replay.rank_results();
  double makespan = 0;
  for (const auto& rr : ranks) makespan = std::max(makespan, ns(rr.finish));
  const bool complete = info.finished && info.stop_code == 0 && info.errors.empty();
  // Fractions are over the time the run covered: the makespan when it finished, else the time it
  // reached (an unfinished rank's last activity would understate it).
  const double covered = complete ? makespan : std::max(makespan, ns(info.reached));
  r["status"] = !info.errors.empty()  ? "error"
                : info.stop_code != 0 ? (info.stop_code == 130 ? "interrupted" : "terminated")
                : info.finished       ? "finished"
                                      : "stalled";
  r["complete"] = complete;
  if (!info.errors.empty()) r["errors"] = info.errors;
  r["platform"] = info.platform;
  r["workload"] = info.workload;
  r["fidelity"] = hw::to_string(platform.fabric().fidelity);
  r["makespan_ns"] = makespan;
  r["makespan_cycles"] = static_cast<uint64_t>(std::llround(makespan * spec.network.clock_ghz));
  r["simulated_ns"] = covered;
  r["clock_ghz"] = spec.network.clock_ghz;
  r["wall_seconds"] = info.wall_seconds;
  r["events"] = info.events;
  r["nodes_done"] = replay.nodes_done();
  // NPUs, then the I/O controllers (ranks after the NPUs), each with what it streamed.
  auto& npus = r["npus"] = nlohmann::json::array();
  auto& io = r["io_controllers"] = nlohmann::json::array();
  const auto& topology = platform.topology();
  for (const auto& rr : ranks) {
    const auto& st = const_cast<hw::Platform&>(platform).npu(rr.rank).stats();
    if (topology.is_io_controller(rr.rank)) {
      const topology::Link& l =
          topology.links()[topology.out_links(topology.endpoint_node(rr.rank))[0]];
      const double line_gbps = l.bytes_per_cycle * spec.network.clock_ghz;
      const double end = ns(rr.comm_end);
      const double stream_gbps = end > 0 ? static_cast<double>(rr.comm_bytes) / end : 0;
      io.push_back({{"id", rr.rank},
                    {"name", topology.nodes()[topology.endpoint_node(rr.rank)].name},
                    {"finished", rr.finished},
                    {"finish_ns", ns(rr.finish)},
                    {"delivered_ns", end},
                    {"comm_ns", ns(rr.comm)},
                    {"nodes", rr.nodes},
                    {"nodes_done", rr.nodes_done},
                    {"streamed_bytes", rr.comm_bytes},
                    {"bytes_sent", st.bytes_sent},
                    {"line_gbps", line_gbps},
                    {"stream_gbps", stream_gbps},
                    {"line_rate_fraction", line_gbps > 0 ? stream_gbps / line_gbps : 0.0}});
      continue;
    }
    npus.push_back({{"id", rr.rank},
                    {"finished", rr.finished},
                    {"finish_ns", ns(rr.finish)},
                    {"compute_ns", ns(rr.compute)},
                    {"comm_ns", ns(rr.comm)},
                    {"exposed_comm_ns", ns(rr.exposed_comm)},
                    {"nodes", rr.nodes},
                    {"nodes_done", rr.nodes_done},
                    {"messages_sent", st.messages_sent},
                    {"bytes_sent", st.bytes_sent},
                    {"reduce_busy_ns", ns(st.reduce_busy)}});
    if (st.sparse_jobs > 0)
      npus.back()["sparse_unit"] = sparse_unit_json(*platform.sparse_unit(rr.rank));
  }
  auto& links = r["links"] = nlohmann::json::array();
  for (const auto& l : platform.link_reports()) {
    double busy = ns(l.stats.busy);
    links.push_back({{"id", l.link->id},
                     {"src", l.link->name.substr(0, l.link->name.find("->"))},
                     {"dst", l.link->name.substr(l.link->name.find("->") + 2)},
                     {"attach", l.link->attach},
                     {"bandwidth_gbps", l.link->bytes_per_cycle * spec.network.clock_ghz},
                     {"latency_cycles", l.link->latency_cycles},
                     {"units", l.stats.units},
                     {"bytes", l.stats.bytes},
                     {"busy_ns", busy},
                     {"stall_ns", ns(l.stats.stall)},
                     {"busy_fraction", covered > 0 ? busy / covered : 0.0},
                     {"faults", l.stats.faults},
                     {"resent", l.stats.resent},
                     {"controls", l.stats.controls}});
  }
  auto& colls = r["collectives"] = nlohmann::json::array();
  for (const auto& c : replay.collectives()) {
    if (c.ranks == 0) continue;
    double duration = ns(c.end) - ns(c.start);
    const auto bw = nccl_bandwidths(c.kind, c.ranks, c.bytes, duration);
    colls.push_back({{"name", c.name},
                     {"kind", c.kind},
                     {"algorithm", c.algorithm},
                     {"group", c.group},
                     {"ranks", c.ranks},
                     {"bytes", c.bytes},
                     {"start_ns", ns(c.start)},
                     {"end_ns", ns(c.end)},
                     {"duration_ns", duration},
                     {"algbw_gbps", bw.first},
                     {"busbw_gbps", bw.second},
                     {"ideal_ns", c.ideal_ns},
                     {"bw_utilization", duration > 0 ? c.ideal_ns / duration : 0.0},
                     {"finished_ranks", c.finished_ranks}});
  }
  if (platform.has_fred_switches()) {
    const hw::FredSwitch::ControlStats control = platform.fred_control_stats();
    r["fred_control"] = {{"configurations", control.configurations},
                         {"configured_routes", control.configured_routes},
                         {"online_routes", control.online_routes}};
  }
  if (const PhaseScheduler* scheduler = replay.phase_scheduler())
    r["phase_scheduler"] = {
        {"kind", collectives::to_string(spec.collectives.scheduler)},
        {"queue_policy", collectives::to_string(spec.collectives.queue_policy)},
        {"collective_priority", collectives::to_string(spec.collectives.collective_priority)},
        {"phases_followed", scheduler->followed()}};
  if (!info.stall.empty()) r["stall"] = info.stall;
  r["data_check"] = data_check_json(replay, platform, complete);
  return r;
}

std::optional<double> io_line_rate_fraction(const nlohmann::json& r) {
  if (!r.contains("io_controllers")) return std::nullopt;
  double bytes = 0, line_gbps = 0, delivered_ns = 0;
  for (const auto& c : r["io_controllers"]) {
    if (c["streamed_bytes"].get<uint64_t>() == 0) continue;
    bytes += c["streamed_bytes"].get<double>();
    line_gbps += c["line_gbps"].get<double>();
    delivered_ns = std::max(delivered_ns, c["delivered_ns"].get<double>());
  }
  if (line_gbps <= 0 || delivered_ns <= 0) return std::nullopt;
  return bytes / delivered_ns / line_gbps;  // bytes per ns = GB/s
}

std::string summary(const nlohmann::json& r) {
  std::string s;
  s += fmt::format("wafersim: {} on {} ({} fidelity)\n", r["workload"].get<std::string>(),
                   r["platform"].get<std::string>(), r["fidelity"].get<std::string>());
  s += fmt::format("  status          {}\n", r["status"].get<std::string>());
  s += fmt::format("  makespan        {:.3f} us ({} cycles)\n",
                   r["makespan_ns"].get<double>() / 1e3, r["makespan_cycles"].get<uint64_t>());
  double compute = 0, comm = 0, exposed = 0;
  size_t n = r["npus"].size();
  for (const auto& p : r["npus"]) {
    compute += p["compute_ns"].get<double>();
    comm += p["comm_ns"].get<double>();
    exposed += p["exposed_comm_ns"].get<double>();
  }
  if (n > 0) {
    s += fmt::format(
        "  per NPU (mean)  compute {:.3f} us, communication {:.3f} us, exposed {:.3f} us\n",
        compute / n / 1e3, comm / n / 1e3, exposed / n / 1e3);
  }
  if (const std::optional<double> io = io_line_rate_fraction(r))
    s += fmt::format("  I/O streams     {:.3f}x the controllers' line rate, together\n", *io);
  double hottest = 0;
  std::string hot;
  for (const auto& l : r["links"])
    if (!l["attach"].get<bool>() && l["busy_fraction"].get<double>() > hottest) {
      hottest = l["busy_fraction"].get<double>();
      hot = l["src"].get<std::string>() + "->" + l["dst"].get<std::string>();
    }
  if (!hot.empty()) s += fmt::format("  busiest link    {} ({:.1f}% busy)\n", hot, 100 * hottest);
  uint64_t faults = 0, resent = 0, controls = 0;
  for (const auto& l : r["links"]) {
    faults += l["faults"].get<uint64_t>();
    resent += l["resent"].get<uint64_t>();
    controls += l["controls"].get<uint64_t>();
  }
  if (controls > 0)
    s += fmt::format("  link retry      {} packets lost, {} sent again; {} ACKs and NACKs\n",
                     faults, resent, controls);
  s += fmt::format("  collectives     {}\n", r["collectives"].size());
  const auto& data = r["data_check"];
  if (data["status"] != "off")
    s += fmt::format("  data check      {} ({} collectives, {})\n",
                     data["status"].get<std::string>(), data["collectives_checked"].get<int>(),
                     data["element_type"].get<std::string>());
  s += fmt::format("  simulated in    {:.2f} s wall, {} events\n", r["wall_seconds"].get<double>(),
                   r["events"].get<uint64_t>());
  return s;
}

}  // namespace wafersim::tb
