#pragma once
// A Chrome / Perfetto trace-event timeline (--timeline FILE.json): one process per NPU with its
// trace nodes (named from the trace) on compute, memory, host and communication tracks, and one
// track per link with the units (packets or messages) that crossed it. Timestamps in
// microseconds; opens in ui.perfetto.dev and chrome://tracing.
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "hw/proto/probe.h"
#include "models/topology/topology.h"

namespace wafersim::tb {

class TimelineRecorder : public hw::Probe {
 public:
  explicit TimelineRecorder(const topology::Topology& topology) : topology_(topology) {}

  // Throws InputError when the file cannot be written.
  void write(const std::string& path) const;

  void node_span(int rank, uint64_t node_id, const std::string& name, const char* category,
                 const sc_core::sc_time& start) override;
  void link_unit(int link, const sc_core::sc_time& start, const sc_core::sc_time& end,
                 const hw::TransferExt& unit) override;

 public:
  struct Span {
    int track_owner;  // rank, or link id
    uint64_t id;      // node id, or message id
    uint64_t packet;
    std::string name;
    const char* category;
    double start_us, end_us;
  };

 private:
  void write_events(std::ostream& out) const;

  const topology::Topology& topology_;
  std::vector<Span> nodes_;
  std::vector<Span> units_;
};

}  // namespace wafersim::tb
