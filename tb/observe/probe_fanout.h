#pragma once
// Several probes at once (waves and timeline in one run): forwards every report to each.
#include <vector>

#include "hw/proto/probe.h"

namespace wafersim::tb {

class ProbeFanout : public hw::Probe {
 public:
  void add(hw::Probe* p) { probes_.push_back(p); }
  void link_unit(int link, const sc_core::sc_time& start, const sc_core::sc_time& end,
                 const hw::TransferExt& unit) override {
    for (auto* p : probes_) p->link_unit(link, start, end, unit);
  }
  void credit_change(int link, int vc, int delta, const sc_core::sc_time& at) override {
    for (auto* p : probes_) p->credit_change(link, vc, delta, at);
  }
  void buffer_change(int link, int vc, int delta, const sc_core::sc_time& at) override {
    for (auto* p : probes_) p->buffer_change(link, vc, delta, at);
  }
  void grant(int link, int from_link) override {
    for (auto* p : probes_) p->grant(link, from_link);
  }
  void compute_busy(int rank, const sc_core::sc_time& start, const sc_core::sc_time& end) override {
    for (auto* p : probes_) p->compute_busy(rank, start, end);
  }
  void nic_queue(int rank, int depth) override {
    for (auto* p : probes_) p->nic_queue(rank, depth);
  }
  void collective_step(int rank, int step) override {
    for (auto* p : probes_) p->collective_step(rank, step);
  }
  void switch_function(int node, hw::SwitchFunction function, const sc_core::sc_time& start,
                       const sc_core::sc_time& end) override {
    for (auto* p : probes_) p->switch_function(node, function, start, end);
  }
  void switch_phase(int node, uint64_t phase, const sc_core::sc_time& at) override {
    for (auto* p : probes_) p->switch_phase(node, phase, at);
  }
  void sparse_job(int rank, const sc_core::sc_time& start, const sc_core::sc_time& cycle,
                  const sparse::UnitTiming& timing) override {
    for (auto* p : probes_) p->sparse_job(rank, start, cycle, timing);
  }
  void node_span(int rank, uint64_t node_id, const std::string& name, const char* category,
                 const sc_core::sc_time& start) override {
    for (auto* p : probes_) p->node_span(rank, node_id, name, category, start);
  }

 private:
  std::vector<hw::Probe*> probes_;
};

}  // namespace wafersim::tb
