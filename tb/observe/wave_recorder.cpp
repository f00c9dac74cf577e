#include "tb/observe/wave_recorder.h"

#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "hw/proto/transfer.h"
#include "models/common/error.h"

namespace wafersim::tb {

namespace {

uint64_t picoseconds(const sc_core::sc_time& t) {
  return static_cast<uint64_t>(std::llround(t.to_seconds() * 1e12));
}

// VCD identifiers: printable characters '!'..'~', base 94.
std::string vcd_id(uint32_t index) {
  std::string id;
  do {
    id += static_cast<char>('!' + index % 94);
    index /= 94;
  } while (index > 0);
  return id;
}

std::string value_text(uint64_t value, int width, const std::string& id) {
  if (width == 1) return (value ? "1" : "0") + id;
  std::string bits;
  for (int b = width - 1; b >= 0; --b) bits += ((value >> b) & 1) ? '1' : '0';
  auto first = bits.find('1');
  bits = first == std::string::npos ? "0" : bits.substr(first);
  return "b" + bits + " " + id;
}

}  // namespace

WaveRecorder::WaveRecorder(const WaveOptions& options, const topology::Topology& topology, int vcs,
                           int buffer_flits)
    : options_(options), vcs_(vcs) {
  const auto& nodes = topology.nodes();
  link_.resize(topology.links().size());
  for (const auto& link : topology.links()) {
    const std::string& src = nodes[link.src].name;
    const std::string& dst = nodes[link.dst].name;
    // An NPU's ports are named after their dimension when it has several.
    // Parallel links (a tree's uplinks) are told apart as the topology names them (".u<k>").
    const std::string parallel = link.name.substr(src.size() + 2 + dst.size());
    const std::string port =
        parallel +
        (link.attach && topology.dims().size() > 1 ? "_d" + std::to_string(link.dim) : "");
    const std::string out = "platform." + src + ".to_" + dst + port;
    LinkSignals& s = link_[link.id];
    s.busy = add(out, "busy", 1, src);
    s.message = add(out, "message", 32, src);
    s.packet = add(out, "packet", 32, src);
    s.vc = add(out, "vc", 8, src);
    if (topology::is_switching(nodes[link.src].kind)) s.grant = add(out, "grant_from", 16, src);
    for (int v = 0; v < vcs; ++v)
      s.credits.push_back(
          add(out, "credits_vc" + std::to_string(v), 16, src, static_cast<uint64_t>(buffer_flits)));
    if (topology::is_switching(nodes[link.dst].kind)) {
      const std::string in = "platform." + dst + ".from_" + src + port;
      for (int v = 0; v < vcs; ++v)
        s.depth.push_back(add(in, "depth_vc" + std::to_string(v), 16, dst));
    }
  }
  switch_.resize(nodes.size());
  for (const auto& node : nodes) {
    if (node.kind != topology::NodeKind::FredSwitch) continue;
    const std::string scope = "platform." + node.name;
    switch_[node.id] = {add(scope, "reduce", 16, node.name),
                        add(scope, "distribute", 16, node.name),
                        add(scope, "phase", 32, node.name)};
  }
  npu_.resize(topology.endpoint_count());  // NPUs, then I/O controllers (io0, ...)
  for (int r = 0; r < topology.endpoint_count(); ++r) {
    const std::string npu = topology.nodes()[topology.endpoint_node(r)].name;
    npu_[r].compute = add("platform." + npu, "compute_busy", 1, npu);
    npu_[r].queue = add("platform." + npu + ".nic", "queue_depth", 16, npu);
    npu_[r].step = add("platform." + npu, "collective_step", 16, npu);
    if (topology.nodes()[topology.endpoint_node(r)].kind != topology::NodeKind::Npu) continue;
    const std::string unit = "platform." + npu + "_sparse";
    npu_[r].sparse_busy = add(unit, "busy", 1, npu + "_sparse");
    npu_[r].sparse_step = add(unit, "step_cycles", 32, npu + "_sparse");
    npu_[r].sparse_in = add(unit, "elements_in", 32, npu + "_sparse");
    npu_[r].sparse_out = add(unit, "elements_out", 32, npu + "_sparse");
    npu_[r].sparse_memory_stall = add(unit, "memory_stall", 32, npu + "_sparse");
    npu_[r].sparse_datapath_stall = add(unit, "datapath_stall", 32, npu + "_sparse");
  }
  from_ps_ = static_cast<uint64_t>(std::llround(options_.from_ns * 1000));
  to_ps_ =
      options_.to_ns < 0 ? kOpenEnd : static_cast<uint64_t>(std::llround(options_.to_ns * 1000));
  last_stamp_ = from_ps_;
  if (selected_count_ > 0) write_header();
}

int WaveRecorder::add(const std::string& scope, const std::string& name, int width,
                      const std::string& group, uint64_t initial) {
  bool selected = options_.patterns.empty();
  const std::string full = scope + "." + name;
  for (const auto& p : options_.patterns)
    if (fnmatch(p.c_str(), full.c_str(), 0) == 0) selected = true;
  if (!selected) return -1;
  signals_.push_back({scope, name, width, group, initial});
  ++selected_count_;
  return static_cast<int>(signals_.size() - 1);
}

void WaveRecorder::record(int signal, const sc_core::sc_time& at, uint64_t value, bool delta) {
  if (signal < 0) return;
  const uint64_t t = picoseconds(at);
  if (t > to_ps_) return;  // after the window
  changes_.push_back({t, static_cast<uint32_t>(signal), delta, value});
  // Nothing is reported for a time before now: what lies before it is final and can be written,
  // which keeps the recorder's memory bounded on long runs.
  if (changes_.size() >= kFlushEvery) flush(picoseconds(sc_core::sc_time_stamp()));
}

void WaveRecorder::record_now(int signal, uint64_t value) {
  record(signal, sc_core::sc_time_stamp(), value);
}

void WaveRecorder::link_unit(int link, const sc_core::sc_time& start, const sc_core::sc_time& end,
                             const hw::TransferExt& unit) {
  const LinkSignals& s = link_[link];
  record(s.busy, start, 1);
  record(s.message, start, unit.message ? unit.message->id & 0xffffffffu : 0);
  record(s.packet, start, unit.packet);
  record(s.vc, start, static_cast<uint64_t>(unit.vc));
  record(s.busy, end, 0);
}

void WaveRecorder::credit_change(int link, int vc, int delta, const sc_core::sc_time& at) {
  if (vc < static_cast<int>(link_[link].credits.size()))
    record(link_[link].credits[vc], at, static_cast<uint64_t>(static_cast<int64_t>(delta)), true);
}

void WaveRecorder::buffer_change(int link, int vc, int delta, const sc_core::sc_time& at) {
  if (vc < static_cast<int>(link_[link].depth.size()))
    record(link_[link].depth[vc], at, static_cast<uint64_t>(static_cast<int64_t>(delta)), true);
}

void WaveRecorder::grant(int link, int from_link) {
  record_now(link_[link].grant, static_cast<uint64_t>(from_link));
}

void WaveRecorder::compute_busy(int rank, const sc_core::sc_time& start,
                                const sc_core::sc_time& end) {
  record(npu_[rank].compute, start, 1);
  record(npu_[rank].compute, end, 0);
}

void WaveRecorder::sparse_job(int rank, const sc_core::sc_time& start,
                              const sc_core::sc_time& cycle, const sparse::UnitTiming& timing) {
  // A run of identical steps holds its values, so one change per run is the per-cycle view.
  const NpuSignals& n = npu_[rank];
  sc_core::sc_time at = start;
  record(n.sparse_busy, start, 1);
  for (const sparse::StepRun& run : timing.steps) {
    record(n.sparse_step, at, run.cycles);
    record(n.sparse_in, at, run.elements_in);
    record(n.sparse_out, at, run.elements_out);
    record(n.sparse_memory_stall, at, run.memory_stall);
    record(n.sparse_datapath_stall, at, run.datapath_stall);
    at += cycle * static_cast<double>(run.count * run.cycles);
  }
  for (int signal :
       {n.sparse_step, n.sparse_in, n.sparse_out, n.sparse_memory_stall, n.sparse_datapath_stall})
    record(signal, at, 0);
  record(n.sparse_busy, start + cycle * static_cast<double>(timing.cycles), 0);
}

void WaveRecorder::nic_queue(int rank, int depth) {
  record_now(npu_[rank].queue, static_cast<uint64_t>(depth));
}

void WaveRecorder::collective_step(int rank, int step) {
  record_now(npu_[rank].step, static_cast<uint64_t>(step));
}

void WaveRecorder::switch_function(int node, hw::SwitchFunction function,
                                   const sc_core::sc_time& start, const sc_core::sc_time& end) {
  const SwitchSignals& s = switch_[node];
  const int signal = function == hw::SwitchFunction::Reduce ? s.reduce : s.distribute;
  record(signal, start, 1, true);
  record(signal, end, ~uint64_t{0}, true);  // -1
}

void WaveRecorder::switch_phase(int node, uint64_t phase, const sc_core::sc_time& at) {
  record(switch_[node].phase, at, phase);
}

void WaveRecorder::write_header() {
  vcd_.open(options_.file);
  if (!vcd_) throw InputError(options_.file, "--waves", "cannot write the waveform file");
  vcd_ << "$date wafersim run $end\n$version wafersim 0.1 $end\n$timescale 1ps $end\n";
  // Scopes: signals sorted by scope so that each scope is opened once.
  order_.resize(signals_.size());
  for (uint32_t i = 0; i < order_.size(); ++i) order_[i] = i;
  std::stable_sort(order_.begin(), order_.end(),
                   [&](uint32_t a, uint32_t b) { return signals_[a].scope < signals_[b].scope; });
  std::vector<std::string> open;
  auto split = [](const std::string& scope) {
    std::vector<std::string> parts;
    size_t start = 0, dot;
    while ((dot = scope.find('.', start)) != std::string::npos) {
      parts.push_back(scope.substr(start, dot - start));
      start = dot + 1;
    }
    parts.push_back(scope.substr(start));
    return parts;
  };
  for (uint32_t i : order_) {
    auto parts = split(signals_[i].scope);
    size_t common = 0;
    while (common < open.size() && common < parts.size() && open[common] == parts[common]) ++common;
    while (open.size() > common) {
      vcd_ << "$upscope $end\n";
      open.pop_back();
    }
    for (size_t k = common; k < parts.size(); ++k) {
      vcd_ << "$scope module " << parts[k] << " $end\n";
      open.push_back(parts[k]);
    }
    const Signal& s = signals_[i];
    vcd_ << "$var wire " << s.width << " " << vcd_id(i) << " " << s.name;
    if (s.width > 1) vcd_ << " [" << s.width - 1 << ":0]";
    vcd_ << " $end\n";
  }
  while (!open.empty()) {
    vcd_ << "$upscope $end\n";
    open.pop_back();
  }
  vcd_ << "$enddefinitions $end\n";
  value_.resize(signals_.size());
  for (size_t i = 0; i < signals_.size(); ++i) value_[i] = signals_[i].initial;
}

void WaveRecorder::dump_initial_values() {
  if (dumped_) return;
  dumped_ = true;
  vcd_ << "#" << from_ps_ << "\n$dumpvars\n";
  for (uint32_t i = 0; i < signals_.size(); ++i)
    vcd_ << value_text(value_[i], signals_[i].width, vcd_id(i)) << "\n";
  vcd_ << "$end\n";
}

void WaveRecorder::flush(uint64_t before_ps) {
  // Stable: changes at one time keep the order they were reported in, and the last one wins.
  std::stable_sort(changes_.begin(), changes_.end(),
                   [](const Change& a, const Change& b) { return a.time_ps < b.time_ps; });
  size_t k = 0;
  while (k < changes_.size() && changes_[k].time_ps < before_ps) {
    const uint64_t t = changes_[k].time_ps;
    if (t <= from_ps_) {  // before the window: only the values it starts with
      for (; k < changes_.size() && changes_[k].time_ps == t; ++k) {
        const Change& c = changes_[k];
        value_[c.signal] = c.delta ? value_[c.signal] + c.value : c.value;
      }
      continue;
    }
    dump_initial_values();
    std::map<uint32_t, uint64_t> last;
    for (; k < changes_.size() && changes_[k].time_ps == t; ++k) {
      const Change& c = changes_[k];
      if (!c.delta) {
        last[c.signal] = c.value;
        continue;
      }
      auto it = last.find(c.signal);
      const uint64_t before = it == last.end() ? value_[c.signal] : it->second;
      last[c.signal] = before + c.value;
    }
    bool stamped = false;
    for (const auto& [sig, v] : last) {
      if (value_[sig] == v) continue;
      if (!stamped) vcd_ << "#" << t << "\n";
      stamped = true;
      last_stamp_ = t;
      value_[sig] = v;
      vcd_ << value_text(v, signals_[sig].width, vcd_id(sig)) << "\n";
    }
  }
  changes_.erase(changes_.begin(), changes_.begin() + static_cast<long>(k));
}

void WaveRecorder::finish(const sc_core::sc_time& end) {
  const uint64_t to = to_ps_ == kOpenEnd ? picoseconds(end) : to_ps_;
  flush(to + 1);
  dump_initial_values();
  // The window's end, so that viewers show the last values up to it.
  if (to > last_stamp_ && to > from_ps_) vcd_ << "#" << to << "\n";
  vcd_.flush();
  if (!vcd_) throw InputError(options_.file, "--waves", "cannot write the waveform file");
  changes_.clear();

  // GTKWave save file: one group per block, busy bits as binary, counts as decimals. Only beside a
  // regular file: a VCD written to a device or a pipe (/dev/null, /dev/stdout) has no folder.
  std::error_code ec;
  if (std::filesystem::exists(options_.file, ec) &&
      !std::filesystem::is_regular_file(options_.file, ec))
    return;
  const std::string gtkw_path =
      std::filesystem::path(options_.file).replace_extension(".gtkw").string();
  std::ofstream gtkw(gtkw_path);
  if (!gtkw) throw InputError(gtkw_path, "--waves", "cannot write the GTKWave save file");
  gtkw << "[*] wafersim: waves of one run; open with gtkwave " << gtkw_path << "\n"
       << "[dumpfile] \"" << std::filesystem::absolute(options_.file).string() << "\"\n"
       << "[timestart] " << from_ps_ << "\n[size] 1600 900\n[signals_width] 360\n"
       << "[sst_expanded] 1\n[sst_vpaned_height] 300\n";
  std::vector<std::string> groups;
  std::map<std::string, std::vector<uint32_t>> by_group;
  for (uint32_t i : order_) {
    if (!by_group.count(signals_[i].group)) groups.push_back(signals_[i].group);
    by_group[signals_[i].group].push_back(i);
  }
  for (const auto& g : groups) {
    gtkw << "@800200\n-" << g << "\n";
    for (uint32_t i : by_group[g]) {
      const Signal& s = signals_[i];
      gtkw << (s.width == 1 ? "@28\n" : "@24\n") << s.scope << "." << s.name;
      if (s.width > 1) gtkw << "[" << s.width - 1 << ":0]";
      gtkw << "\n";
    }
    gtkw << "@1000200\n-" << g << "\n";
  }
}

}  // namespace wafersim::tb
