#include "tb/traffic/traffic_driver.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "hw/proto/event_counter.h"

namespace wafersim::tb {

using sc_core::sc_time;

namespace {

int middle_npu(const topology::Topology& t) {
  if (t.spec().shape == topology::Shape::Mesh)
    return (t.spec().mesh_y / 2) * t.spec().mesh_x + t.spec().mesh_x / 2;
  return t.npu_count() / 2;
}

}  // namespace

TrafficDriver::TrafficDriver(sc_core::sc_module_name name, const TrafficSpec& spec,
                             const topology::Topology& topology, hw::Platform& platform)
    : sc_module(name),
      spec_(spec),
      topology_(topology),
      platform_(platform),
      picker_(spec.pattern, topology, spec.hotspot < 0 ? middle_npu(topology) : spec.hotspot,
              spec.hotspot_fraction),
      cycle_(1.0 / platform.fabric().clock_ghz, sc_core::SC_NS),
      payload_bytes_(platform.fabric().packet_bytes),
      hops_(topology.npu_count() <= kHopTableMaxNpus
                ? static_cast<size_t>(topology.npu_count()) * topology.npu_count()
                : 0,
            kUnknownHops),
      rng_(spec.seed),
      gap_(std::clamp(spec.rate / std::max(1, spec.packet_flits), 1e-12, 1.0)) {
  if (!(spec.rate > 0) || spec.rate > spec.packet_flits)
    throw std::invalid_argument("rate must be above 0 and at most 1 packet per node per cycle");
  if (spec.packet_flits < 1) throw std::invalid_argument("packet length must be at least 1 flit");
  if (spec.measure_cycles < 1) throw std::invalid_argument("the measurement window is empty");
  for (int n = 0; n < platform.npu_count(); ++n) {
    idle_hosts_.push_back(
        std::make_unique<tlm::tlm_initiator_socket<32>>(("host" + std::to_string(n)).c_str()));
    // Its backward interface first, as the replay binds: in the other order the run fails with
    // an error on the socket's export (traffic.host0_export_0).
    idle_hosts_.back()->bind(*this);
    idle_hosts_.back()->bind(platform.npu(n).cmd);
    // The driver takes over the NIC: nothing waits for a send, deliveries come here.
    platform.npu(n).nic().on_sent = nullptr;
    platform.npu(n).nic().on_delivered = [this](hw::Message* m) { delivered(m); };
    schedule_next(n, 0);
  }
  SC_METHOD(generate);
  sensitive << wake_;
  dont_initialize();
  SC_METHOD(stop_if_done);
  sensitive << deadline_;
  dont_initialize();
  wake_.notify(cycle_ * static_cast<double>(next_.top().cycle));
  deadline_.notify(
      cycle_ * static_cast<double>(spec.warmup_cycles + spec.measure_cycles + spec.drain_cycles));
}

TrafficDriver::~TrafficDriver() = default;

hw::Message* TrafficDriver::new_message() {
  if (spare_.empty()) {
    messages_.push_back(std::make_unique<hw::Message>());
    return messages_.back().get();
  }
  hw::Message* m = spare_.back();
  spare_.pop_back();
  *m = hw::Message{};
  return m;
}

uint64_t TrafficDriver::cycle_of(const sc_time& t) const {
  return static_cast<uint64_t>(std::llround(t / cycle_));
}

bool TrafficDriver::in_window(uint64_t cycle) const {
  return cycle >= spec_.warmup_cycles && cycle < spec_.warmup_cycles + spec_.measure_cycles;
}

void TrafficDriver::schedule_next(int node, uint64_t after_cycle) {
  // Bernoulli trials, one per cycle: the number of empty cycles before the next success.
  next_.push({after_cycle + gap_(rng_), node});
}

void TrafficDriver::generate() {
  hw::count_event();
  const uint64_t now = cycle_of(sc_core::sc_time_stamp());
  while (!next_.empty() && next_.top().cycle <= now) {
    const int src = next_.top().node;
    next_.pop();
    hw::Message* m = new_message();
    m->id = next_id_++;
    m->src = src;
    m->dst = picker_.pick(src, rng_);
    m->bytes = payload_bytes_;
    m->created = sc_core::sc_time_stamp();
    m->cookie = in_window(now) ? 1 : 0;
    if (m->cookie) {
      ++measured_;
      created_in_window_flits_ += spec_.packet_flits;
      hops_sum_ += hops(src, m->dst);
    }
    ++in_flight_;
    platform_.npu(src).nic().send(m);
    schedule_next(src, now + 1);
  }
  if (!next_.empty()) wake_.notify(cycle_ * static_cast<double>(next_.top().cycle - now));
}

void TrafficDriver::delivered(hw::Message* m) {
  const uint64_t at = cycle_of(m->delivered);
  if (in_window(at)) ejected_in_window_flits_ += spec_.packet_flits;
  if (m->cookie) {
    const double latency = (m->delivered - m->created) / cycle_;
    latency_sum_ += latency;
    latency_max_ = std::max(latency_max_, latency);
    network_latency_sum_ += (m->delivered - m->injected) / cycle_;
    ++measured_done_;
  }
  --in_flight_;
  spare_.push_back(m);
  if (measured_done_ == measured_ && at >= spec_.warmup_cycles + spec_.measure_cycles)
    stop_if_done();
}

void TrafficDriver::stop_if_done() {
  if (stopped_) return;
  stopped_ = true;
  const uint64_t now = cycle_of(sc_core::sc_time_stamp());
  if (measured_done_ < measured_) saturated_ = true;  // the drain limit ran out
  stopped_at_ = now;
  sc_core::sc_stop();
}

uint16_t TrafficDriver::hops(int src, int dst) {
  if (hops_.empty()) return static_cast<uint16_t>(topology_.router_hops(src, dst));
  uint16_t& h = hops_[static_cast<size_t>(src) * platform_.npu_count() + dst];
  if (h == kUnknownHops) h = static_cast<uint16_t>(topology_.router_hops(src, dst));
  return h;
}

TrafficResult TrafficDriver::result() const {
  TrafficResult r;
  const double node_cycles =
      static_cast<double>(platform_.npu_count()) * static_cast<double>(spec_.measure_cycles);
  r.offered_flits_per_node_cycle = created_in_window_flits_ / node_cycles;
  r.accepted_flits_per_node_cycle = ejected_in_window_flits_ / node_cycles;
  r.measured_packets = measured_;
  r.delivered_measured_packets = measured_done_;
  if (measured_done_ > 0) {
    r.avg_packet_latency_cycles = latency_sum_ / measured_done_;
    r.avg_network_latency_cycles = network_latency_sum_ / measured_done_;
  }
  r.max_packet_latency_cycles = latency_max_;
  r.avg_hops = measured_ > 0 ? static_cast<double>(hops_sum_) / measured_ : 0;
  r.simulated_cycles = stopped_at_;
  // Saturated: the measured packets did not all get out in time, the network accepts visibly less
  // than it is offered (below saturation the two agree to a fraction of a percent), or the
  // latency passed the user's threshold.
  r.saturated = saturated_ ||
                r.accepted_flits_per_node_cycle < 0.95 * r.offered_flits_per_node_cycle ||
                (spec_.latency_threshold_cycles > 0 &&
                 r.avg_packet_latency_cycles > spec_.latency_threshold_cycles);
  return r;
}

}  // namespace wafersim::tb
