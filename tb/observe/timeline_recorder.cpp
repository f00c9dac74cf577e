#include "tb/observe/timeline_recorder.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "hw/proto/transfer.h"
#include "models/common/error.h"

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

void TimelineRecorder::write(const std::string& path) const {
  nlohmann::json events = nlohmann::json::array();
  // Tracks per NPU: 0 compute, 1 memory, 2 host, 3.. communication lanes (overlapping collectives
  // and sends take one lane each, so slices on a track never overlap).
  const char* fixed[] = {"compute", "memory", "host"};
  std::vector<Span> nodes = nodes_;
  std::stable_sort(nodes.begin(), nodes.end(), [](const Span& a, const Span& b) {
    return a.track_owner != b.track_owner ? a.track_owner < b.track_owner : a.start_us < b.start_us;
  });
  std::vector<std::vector<double>> lane_end(topology_.npu_count());
  std::vector<std::vector<double>> fixed_end(topology_.npu_count(), std::vector<double>(3, -1));
  for (int r = 0; r < topology_.npu_count(); ++r) {
    events.push_back(metadata("process_name", r, -1, "npu" + std::to_string(r)));
    events.push_back(metadata("process_sort_index", r, -1, std::to_string(r)));
    for (int t = 0; t < 3; ++t) events.push_back(metadata("thread_name", r, t, fixed[t]));
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
        events.push_back(metadata("thread_name", s.track_owner, 3 + static_cast<int>(lane),
                                  "communication " + std::to_string(lane)));
      }
      lanes[lane] = s.end_us;
      tid = 3 + static_cast<int>(lane);
    }
    events.push_back({{"ph", "X"},
                      {"name", s.name.empty() ? "node " + std::to_string(s.id) : s.name},
                      {"cat", s.category},
                      {"pid", s.track_owner},
                      {"tid", tid},
                      {"ts", s.start_us},
                      {"dur", s.end_us - s.start_us},
                      {"args", {{"node_id", s.id}}}});
  }
  events.push_back(metadata("process_name", kLinksPid, -1, "links"));
  std::vector<bool> named(topology_.links().size(), false);
  std::vector<Span> units = units_;
  std::stable_sort(units.begin(), units.end(), [](const Span& a, const Span& b) {
    return a.track_owner != b.track_owner ? a.track_owner < b.track_owner : a.start_us < b.start_us;
  });
  for (const Span& u : units) {
    if (!named[u.track_owner]) {
      named[u.track_owner] = true;
      events.push_back(
          metadata("thread_name", kLinksPid, u.track_owner, topology_.links()[u.track_owner].name));
    }
    const int src = static_cast<int>(u.id >> 40);
    events.push_back({{"ph", "X"},
                      {"name", "msg " + std::to_string(u.id & ((1ull << 40) - 1)) + " of npu" +
                                   std::to_string(src)},
                      {"cat", "link"},
                      {"pid", kLinksPid},
                      {"tid", u.track_owner},
                      {"ts", u.start_us},
                      {"dur", u.end_us - u.start_us},
                      {"args", {{"message", u.id}, {"packet", u.packet}}}});
  }
  std::ofstream f(path);
  if (!f) throw InputError(path, "--timeline", "cannot write the timeline file");
  f << nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ns"}}.dump() << "\n";
  if (!f) throw InputError(path, "--timeline", "cannot write the timeline file");
}

}  // namespace wafersim::tb
