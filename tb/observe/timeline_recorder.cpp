#include "tb/observe/timeline_recorder.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>

#include "hw/proto/transfer.h"
#include "models/common/error.h"
#include "tb/common/files.h"

namespace wafersim::tb {

namespace {

double micros(const sc_core::sc_time& t) {
  return t.to_seconds() * 1e6;
}

constexpr int kLinksPid = 1000000;  // NPUs are processes 0..N-1; all links share one process

nlohmann::json metadata(const char* what, int pid, int tid, const std::string& name) {
  nlohmann::json m = {{"ph", "M"}, {"name", what}, {"pid", pid}, {"args", {{"name", name}}}};
  if (tid >= 0) m["tid"] = tid;
  return m;
}

}  // namespace

void TimelineRecorder::node_span(int rank, uint64_t node_id, const std::string& name,
                                 const char* category, const sc_core::sc_time& start) {
  nodes_.push_back(
      {rank, node_id, 0, name, category, micros(start), micros(sc_core::sc_time_stamp())});
}

void TimelineRecorder::link_unit(int link, const sc_core::sc_time& start,
                                 const sc_core::sc_time& end, const hw::TransferExt& unit) {
  units_.push_back({link, unit.message ? unit.message->id : 0, unit.packet, "", "link",
                    micros(start), micros(end)});
}

namespace {

// Streams trace events: a whole run can hold millions, too many for one JSON tree in memory.
class EventStream {
 public:
  explicit EventStream(std::ostream& out) : out_(out) { out_ << "{\"traceEvents\":[\n"; }
  void add(const nlohmann::json& event) {
    out_ << (first_ ? "" : ",\n") << event.dump();
    first_ = false;
  }
  // A complete slice; written by hand, as most events are these.
  void slice(const std::string& name, const char* category, int pid, int tid, double ts, double dur,
             const char* arg1, uint64_t value1, const char* arg2 = nullptr, uint64_t value2 = 0) {
    out_ << (first_ ? "" : ",\n") << "{\"ph\":\"X\",\"name\":" << nlohmann::json(name).dump()
         << ",\"cat\":\"" << category << "\",\"pid\":" << pid << ",\"tid\":" << tid
         << ",\"ts\":" << fmt::format("{:.6f}", ts) << ",\"dur\":" << fmt::format("{:.6f}", dur)
         << ",\"args\":{\"" << arg1 << "\":" << value1;
    if (arg2) out_ << ",\"" << arg2 << "\":" << value2;
    out_ << "}}";
    first_ = false;
  }
  void close() { out_ << "\n],\"displayTimeUnit\":\"ns\"}\n"; }

 private:
  std::ostream& out_;
  bool first_ = true;
};

bool by_track_then_start(const TimelineRecorder::Span& a, const TimelineRecorder::Span& b) {
  return a.track_owner != b.track_owner ? a.track_owner < b.track_owner : a.start_us < b.start_us;
}

}  // namespace

void TimelineRecorder::write(const std::string& path) const {
  // Under a temporary name, then renamed: a stopped run never leaves half a timeline.
  write_file_atomically(
      path, [this](std::ostream& out) { write_events(out); }, "--timeline");
}

void TimelineRecorder::write_events(std::ostream& f) const {
  EventStream events(f);
  // Tracks per endpoint (NPUs, then I/O controllers): 0 compute, 1 memory, 2 host, 3..
  // communication lanes (overlapping collectives and sends take one lane each, so slices on a
  // track never overlap).
  const char* fixed[] = {"compute", "memory", "host"};
  std::vector<Span> nodes = nodes_;
  std::stable_sort(nodes.begin(), nodes.end(), by_track_then_start);
  std::vector<std::vector<double>> lane_end(topology_.endpoint_count());
  for (int r = 0; r < topology_.endpoint_count(); ++r) {
    events.add(metadata("process_name", r, -1, topology_.nodes()[topology_.endpoint_node(r)].name));
    events.add(
        {{"ph", "M"}, {"name", "process_sort_index"}, {"pid", r}, {"args", {{"sort_index", r}}}});
    for (int t = 0; t < 3; ++t) events.add(metadata("thread_name", r, t, fixed[t]));
  }
  for (const Span& s : nodes) {
    int tid = -1;
    for (int t = 0; t < 3; ++t)
      if (std::strcmp(s.category, fixed[t]) == 0) tid = t;
    if (tid < 0) {
      auto& lanes = lane_end[s.track_owner];
      size_t lane = 0;
      while (lane < lanes.size() && lanes[lane] > s.start_us) ++lane;
      if (lane == lanes.size()) {
        lanes.push_back(0);
        events.add(metadata("thread_name", s.track_owner, 3 + static_cast<int>(lane),
                            "communication " + std::to_string(lane)));
      }
      lanes[lane] = s.end_us;
      tid = 3 + static_cast<int>(lane);
    }
    events.slice(s.name.empty() ? "node " + std::to_string(s.id) : s.name, s.category,
                 s.track_owner, tid, s.start_us, s.end_us - s.start_us, "node_id", s.id);
  }
  events.add(metadata("process_name", kLinksPid, -1, "links"));
  std::vector<bool> named(topology_.links().size(), false);
  std::vector<Span> units = units_;
  std::stable_sort(units.begin(), units.end(), by_track_then_start);
  for (const Span& u : units) {
    if (!named[u.track_owner]) {
      named[u.track_owner] = true;
      events.add(
          metadata("thread_name", kLinksPid, u.track_owner, topology_.links()[u.track_owner].name));
    }
    const uint64_t src = u.id >> 40, sequence = u.id & ((1ull << 40) - 1);
    const bool endpoint = src < static_cast<uint64_t>(topology_.endpoint_count());
    events.slice(
        "msg " + std::to_string(sequence) + " of " +
            (endpoint ? topology_.nodes()[topology_.endpoint_node(static_cast<int>(src))].name
                      : "npu" + std::to_string(src)),
        "link", kLinksPid, u.track_owner, u.start_us, u.end_us - u.start_us, "message", u.id,
        "packet", u.packet);
  }
  events.close();
}

}  // namespace wafersim::tb
