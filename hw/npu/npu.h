#pragma once
// The NPU chiplet: a compute engine (recorded duration, or roofline from operations and bytes), an
// HBM port for memory nodes, a reduction engine for collectives, and the network interface. The
// driver (tb/replay) issues commands on the `cmd` socket like a host driver would; each completes
// with BEGIN_RESP on the backward path.
#include <functional>
#include <memory>
#include <systemc>
#include <tlm>

#include "hw/npu/match_queues.h"
#include "hw/npu/network_interface.h"
#include "hw/npu/reduction_engines.h"
#include "hw/proto/callback_queue.h"
#include "hw/sparse/sparse_unit.h"

namespace wafersim::hw {

struct NpuParams {
  double clock_ghz = 1.0;               // compute clock: compute and reduction times round up to it
  double peak_tflops = 900;             // roofline peak, 1e12 operations/s
  double hbm_bandwidth_gbps = 1600;     // roofline memory bandwidth and MEM nodes, 1e9 bytes/s
  double reduce_bandwidth_gbps = 1600;  // bytes combined per second by a reduction engine, 1e9 B/s
  // Reduction engines working side by side, each at reduce_bandwidth_gbps: a received block waits
  // for the first one free.
  int reduce_engines = 1;
  // The sparse unit beside the NPU (hw/sparse); it runs on clock_ghz (sparse_unit_params()).
  sparse::UnitParams sparse_unit;

  // The sparse unit's parameters on the NPU's clock: what the unit, its advice and studies use.
  sparse::UnitParams sparse_unit_params() const {
    sparse::UnitParams p = sparse_unit;
    p.clock_ghz = clock_ghz;
    return p;
  }
};

// Flow: the NPU's part in an in-network flow (hw/fred/flow_table.h): it sends its contribution if
// it is an input, and takes the sum if it is an output; the command completes when both are done.
// Sparse: a job for the sparse unit (hw/sparse), passed on through the `sparse` socket.
enum class CommandKind { Compute, Memory, Send, Recv, Reduce, Flow, Sparse };

// The source rank an NPU's mailbox files the sum of a flow under.
constexpr int kFlowSource = -1;

// What the driver asks of the NPU. What every command's issue and completion read comes first,
// in one cache line with the extension's own pointer: at message fidelity a command is cold when
// it completes (the other ranks' steps ran since it was issued).
struct CommandExt : tlm::tlm_extension<CommandExt> {
  CommandKind kind = CommandKind::Compute;
  int peer = -1;                // Send: destination rank; Recv: source rank
  uint64_t bytes = 0;           // Send / Recv / Reduce / Memory; Compute: tensor bytes for roofline
  uint64_t received_bytes = 0;  // Recv: size of the message that matched
  uint64_t token = 0;           // the driver's handle
  uint64_t tag = 0;             // Send / Recv matching key
  // Compute only: set by whoever issues one.
  uint64_t operations = 0;    // with roofline
  sc_core::sc_time duration;  // the recorded duration (used when `roofline` is false)
  bool roofline = false;
  // Flow only: set by whoever issues one.
  bool flow_input = false;                     // this NPU contributes
  bool flow_output = false;                    // this NPU receives the sum
  TrafficClass flow_class = TrafficClass::Mp;  // its communicator's traffic class
  topology::FlowEnds flow;                     // the flow's ends, as ranks

  // Ready for another command of any kind: the fields every kind reads are the defaults again;
  // those of one kind (Compute's, Flow's) are left to its issuer, which sets them all (so a
  // reused command neither writes the cold lines nor drops the flow's vectors' capacity).
  void reset() {
    kind = CommandKind::Compute;
    peer = -1;
    bytes = 0;
    received_bytes = 0;
    token = 0;
    tag = 0;
  }

  tlm::tlm_extension_base* clone() const override { return new CommandExt(*this); }
  void copy_from(const tlm::tlm_extension_base& o) override {
    *this = static_cast<const CommandExt&>(o);
  }
};

// A command: a generic payload with its CommandExt beside it, which the NPU reaches without the
// extension lookup (set on the payload too, for any TLM-2.0 tool that asks for it). Every payload
// sent to an NPU's `cmd` socket is a CommandPayload. A Sparse command's job rides in `sparse_job`,
// the extension the sparse unit reads when the NPU passes the payload on.
struct CommandPayload : tlm::tlm_generic_payload {
  CommandPayload() {
    set_extension(&command);
    set_extension(&sparse_job);
  }
  // The extensions are members, not the payload's to delete.
  ~CommandPayload() override {
    clear_extension(&command);
    clear_extension(&sparse_job);
  }
  CommandExt command;
  SparseJobExt sparse_job;
};

inline CommandExt& command_of(tlm::tlm_generic_payload& trans) {
  return static_cast<CommandPayload&>(trans).command;
}

// Counters reported per NPU (those a message counts first: see Npu's members).
struct NpuStats {
  uint64_t messages_sent = 0;
  uint64_t bytes_sent = 0;
  uint64_t messages_received = 0;
  sc_core::sc_time compute_busy;
  sc_core::sc_time reduce_busy;
  sc_core::sc_time memory_busy;
  uint64_t sparse_jobs = 0;
};

class Npu : public sc_core::sc_module,
            private tlm::tlm_fw_transport_if<>,
            private tlm::tlm_bw_transport_if<> {
  // What a command's or a message's visit reads, first among the NPU's members and together (as
  // FabricNode's): at message fidelity every message visits two NPUs, each cold. Sending reads the
  // first cache line (to the sent counters), receiving the first two (to `on_arrival`'s test).
  alignas(64) tlm::tlm_bw_transport_if<>* driver_ = nullptr;  // looked up once after elaboration
  const int rank_;
  MessagePool& messages_;
  CallbackQueue& callbacks_;
  uint64_t next_message_id_ = 0;
  std::unique_ptr<NetworkInterface> nic_;
  NpuStats stats_;

 public:
  // Called when a message arrives, before any receive takes it (source rank, tag): the doorbell a
  // driver that schedules by what its peers have started listens to (tb/replay/phase_scheduler.h).
  // (Among the members a message's visit reads.)
  std::function<void(int src, uint64_t tag)> on_arrival;

 private:
  FlowTable& flows_;
  MatchQueues<Message*> mailbox_;                  // arrived, unclaimed
  MatchQueues<tlm::tlm_generic_payload*> posted_;  // receives waiting
  // Its own cache line (what a Reduce command reads besides the lines above).
  ReductionEngines reducers_;

 public:
  // A plain TLM-2.0 base-protocol socket whose transport interface is the NPU's own: the utility
  // library's simple socket adds a process object and a callback between the driver and the NPU
  // on each of a command's two calls, cold at every message of a 1,024-NPU run (8% of its time
  // went to those layers; docs/performance.md).
  tlm::tlm_target_socket<32> cmd;
  // To the NPU-side blocks: the sparse unit (unbound on an I/O controller, which has none). Plain
  // as `cmd`, its backward interface the NPU's own.
  tlm::tlm_initiator_socket<32, tlm::tlm_base_protocol_types, 1, sc_core::SC_ZERO_OR_MORE_BOUND>
      sparse;

  // `callbacks`: the platform's timed completions, shared by all NPUs (one SystemC event per
  // simulated instant however many NPUs finish something then).
  Npu(sc_core::sc_module_name name, int rank, const NpuParams& params, const FabricParams& fabric,
      FabricShared shared, CallbackQueue& callbacks,
      const std::vector<topology::Link>& from_network,
      const std::vector<topology::Link>& to_network);
  ~Npu() override;

  NetworkInterface& nic() { return *nic_; }
  const NpuStats& stats() const { return stats_; }
  int rank() const { return rank_; }
  // Receives posted and not yet matched, as (source rank, tag): for deadlock reports.
  std::vector<std::pair<int, uint64_t>> waiting_receives() const;
  // Messages that arrived and that no receive has taken: for reports of sends nobody receives.
  struct Unclaimed {
    int src;
    uint64_t tag;
    uint64_t bytes;
  };
  std::vector<Unclaimed> unclaimed_messages() const;

 private:
  // A serial engine: one command at a time, in arrival order.
  struct Engine {
    sc_core::sc_time free_at;
  };

  // The command socket's forward interface. Commands are non-blocking only: blocking and debug
  // transport and DMI are refused.
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay) override;
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time&) override {
    trans.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
  }
  unsigned int transport_dbg(tlm::tlm_generic_payload&) override { return 0; }
  bool get_direct_mem_ptr(tlm::tlm_generic_payload&, tlm::tlm_dmi&) override { return false; }
  void end_of_elaboration() override;
  void start(tlm::tlm_generic_payload& trans);
  void run_on(Engine& engine, sc_core::sc_time& busy, const sc_core::sc_time& duration,
              tlm::tlm_generic_payload& trans);
  void complete(tlm::tlm_generic_payload& trans,
                tlm::tlm_response_status status = tlm::TLM_OK_RESPONSE);
  void match(tlm::tlm_generic_payload& recv, Message* m);
  // Posts a receive for (src, tag), or matches the message already in.
  void post_receive(tlm::tlm_generic_payload& trans, int src, uint64_t tag);
  // Sends this NPU's contribution to the flow the command names; false (the command completed
  // with an error) when the flow already runs with other bytes.
  bool join_flow(tlm::tlm_generic_payload& trans);
  void delivered(Message* m);
  // The sparse socket's backward interface: a job done (BEGIN_RESP).
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay) override;
  void invalidate_direct_mem_ptr(sc_dt::uint64, sc_dt::uint64) override {}
  sc_core::sc_time cycles_for(double ns) const;

  const NpuParams params_;
  const sc_core::sc_time cycle_;
  Engine compute_, memory_;
};

}  // namespace wafersim::hw
