#include "hw/npu/npu.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "hw/proto/probe.h"

namespace wafersim::hw {

using sc_core::SC_NS;
using sc_core::sc_time;

Npu::Npu(sc_core::sc_module_name name, int rank, const NpuParams& params,
         const FabricParams& fabric, FabricShared shared, CallbackQueue& callbacks,
         const std::vector<topology::Link>& from_network,
         const std::vector<topology::Link>& to_network)
    : sc_module(name),
      rank_(rank),
      messages_(shared.messages),
      callbacks_(callbacks),
      flows_(shared.flows),
      reducers_(params.reduce_engines, params.reduce_bandwidth_gbps, params.clock_ghz,
                sc_time(1.0 / params.clock_ghz, SC_NS)),
      cmd("cmd"),
      sparse("sparse"),
      params_(params),
      cycle_(1.0 / params.clock_ghz, SC_NS) {
  nic_ = std::make_unique<NetworkInterface>("nic", fabric, shared, callbacks_, from_network,
                                            to_network);
  nic_->on_delivered = [this](Message* m) { delivered(m); };
  nic_->on_sent = [this](Message* m) {
    if (m->cookie) complete(*reinterpret_cast<tlm::tlm_generic_payload*>(m->cookie));
    if (m->flow) flows_.sent(*m->flow, m);  // freed with its flow
  };
  cmd.bind(*this);
  sparse.bind(static_cast<tlm::tlm_bw_transport_if<>&>(*this));
}

// Messages left in the mailbox belong to the platform's MessagePool, which frees them.
Npu::~Npu() = default;

sc_time Npu::cycles_for(double ns) const {
  return whole_cycles(ns, params_.clock_ghz, cycle_);
}

void Npu::end_of_elaboration() {
  driver_ = cmd.operator->();
}

tlm::tlm_sync_enum Npu::nb_transport_fw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                        sc_time&) {
  if (phase != tlm::BEGIN_REQ) return tlm::TLM_ACCEPTED;
  start(trans);
  return tlm::TLM_ACCEPTED;
}

void Npu::run_on(Engine& engine, sc_time& busy, const sc_time& duration,
                 tlm::tlm_generic_payload& trans) {
  const sc_time now = sc_core::sc_time_stamp();
  const sc_time begin = std::max(now, engine.free_at);
  engine.free_at = begin + duration;
  busy += duration;
  if (&engine == &compute_)
    if (Probe* p = probe()) p->compute_busy(rank_, begin, engine.free_at);
  callbacks_.at(engine.free_at, [this, &trans]() { complete(trans); });
}

void Npu::start(tlm::tlm_generic_payload& trans) {
  CommandExt* c = &command_of(trans);
  switch (c->kind) {
    case CommandKind::Compute: {
      double ns = c->duration.to_seconds() * 1e9;
      if (c->roofline) {
        // time = ops / min(peak, intensity x memory bandwidth); intensity = ops / bytes
        double peak = params_.peak_tflops * 1e3;  // ops per ns
        double memory = c->bytes > 0 ? static_cast<double>(c->operations) / c->bytes *
                                           params_.hbm_bandwidth_gbps
                                     : peak;
        double rate = std::min(peak, memory);
        ns = c->operations > 0 ? static_cast<double>(c->operations) / rate : 0;
      }
      run_on(compute_, stats_.compute_busy, cycles_for(ns), trans);
      return;
    }
    case CommandKind::Memory:
      run_on(memory_, stats_.memory_busy, cycles_for(c->bytes / params_.hbm_bandwidth_gbps), trans);
      return;
    case CommandKind::Reduce: {
      // The first engine free: one that is idle, or the busy one that frees first.
      Engine engine{reducers_.take(sc_core::sc_time_stamp())};
      run_on(engine, stats_.reduce_busy, reducers_.time_for(c->bytes), trans);
      reducers_.busy_until(engine.free_at);
      return;
    }
    case CommandKind::Send: {
      Message* m = messages_.acquire();
      m->id = (static_cast<uint64_t>(rank_) << 40) | next_message_id_++;
      m->src = rank_;
      m->dst = c->peer;
      m->bytes = c->bytes;
      m->tag = c->tag;
      m->created = sc_core::sc_time_stamp();
      m->cookie = reinterpret_cast<uint64_t>(&trans);
      stats_.messages_sent++;
      stats_.bytes_sent += c->bytes;
      nic_->send(m);
      return;
    }
    case CommandKind::Recv:
      post_receive(trans, c->peer, c->tag);
      return;
    case CommandKind::Flow:
      if (c->flow_input && !join_flow(trans)) return;  // completed with the error
      if (c->flow_output) post_receive(trans, kFlowSource, c->tag);
      return;
    case CommandKind::Sparse: {
      if (sparse.size() == 0) {  // an I/O controller: no sparse unit
        complete(trans, tlm::TLM_COMMAND_ERROR_RESPONSE);
        return;
      }
      stats_.sparse_jobs++;
      tlm::tlm_phase phase = tlm::BEGIN_REQ;
      sc_time delay = sc_core::SC_ZERO_TIME;
      if (sparse->nb_transport_fw(trans, phase, delay) == tlm::TLM_UPDATED &&
          phase == tlm::BEGIN_RESP)
        complete(trans, trans.get_response_status());
      return;
    }
  }
}

tlm::tlm_sync_enum Npu::nb_transport_bw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                        sc_time&) {
  if (phase == tlm::BEGIN_RESP) complete(trans, trans.get_response_status());
  return tlm::TLM_COMPLETED;
}

void Npu::post_receive(tlm::tlm_generic_payload& trans, int src, uint64_t tag) {
  const MatchKey key{src, tag};
  Message* m;
  if (mailbox_.pop(key, m))
    match(trans, m);
  else
    posted_.push(key, &trans);
}

bool Npu::join_flow(tlm::tlm_generic_payload& trans) {
  CommandExt* c = &command_of(trans);
  FlowTransfer* flow = flows_.join(c->tag, c->flow, c->bytes, c->flow_class);
  if (!flow) {  // the flow runs with other bytes: the ranks disagree (reported by the driver)
    c->received_bytes = 0;
    complete(trans, tlm::TLM_GENERIC_ERROR_RESPONSE);
    return false;
  }
  Message* m = messages_.acquire();
  m->id = (static_cast<uint64_t>(rank_) << 40) | next_message_id_++;
  m->src = rank_;
  m->dst = -1;
  m->bytes = c->bytes;
  m->tag = c->tag;
  m->created = sc_core::sc_time_stamp();
  m->flow = flow;
  // An output completes when the sum is in, which is after every contribution has left.
  m->cookie = c->flow_output ? 0 : reinterpret_cast<uint64_t>(&trans);
  stats_.messages_sent++;
  stats_.bytes_sent += c->bytes;
  nic_->send(m);
  return true;
}

void Npu::delivered(Message* m) {
  stats_.messages_received++;
  if (m->flow) {  // the sum of a flow: the flow is done with once every output has it
    flows_.delivered(*m->flow);
    m->flow = nullptr;
  }
  if (on_arrival) on_arrival(m->src, m->tag);
  const MatchKey key{m->src, m->tag};
  tlm::tlm_generic_payload* trans;
  if (posted_.pop(key, trans))
    match(*trans, m);
  else
    mailbox_.push(key, m);
}

void Npu::match(tlm::tlm_generic_payload& trans, Message* m) {
  // A receive completes with the message's size; a size other than the one posted is an error
  // response (the ranks disagree about the transfer), reported by the driver.
  CommandExt* c = &command_of(trans);
  c->received_bytes = m->bytes;
  messages_.release(m);
  complete(trans,
           c->received_bytes == c->bytes ? tlm::TLM_OK_RESPONSE : tlm::TLM_GENERIC_ERROR_RESPONSE);
}

void Npu::complete(tlm::tlm_generic_payload& trans, tlm::tlm_response_status status) {
  tlm::tlm_phase phase = tlm::BEGIN_RESP;
  sc_time delay = sc_core::SC_ZERO_TIME;
  trans.set_response_status(status);
  driver_->nb_transport_bw(trans, phase, delay);
}

std::vector<std::pair<int, uint64_t>> Npu::waiting_receives() const {
  std::vector<std::pair<int, uint64_t>> out;
  posted_.for_each([&](const MatchKey& key, tlm::tlm_generic_payload*) {
    out.push_back({key.src, key.tag});
  });
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<Npu::Unclaimed> Npu::unclaimed_messages() const {
  std::vector<Unclaimed> out;
  mailbox_.for_each([&](const MatchKey& key, Message* m) {
    out.push_back({key.src, key.tag, m->bytes});
  });
  std::sort(out.begin(), out.end(), [](const Unclaimed& a, const Unclaimed& b) {
    return std::tie(a.src, a.tag) < std::tie(b.src, b.tag);
  });
  return out;
}

}  // namespace wafersim::hw
