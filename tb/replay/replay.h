#pragma once
// Trace replay: a per-NPU dependency-graph executor. It issues every ready node to its NPU through
// a TLM socket, as a driver would (compute, memory, send, receive), turns collectives into the plan
// of their algorithm and issues the plan's operations, and releases children on completion. When
// nothing can progress any more it says what each rank is waiting for.
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <systemc>
#include <tlm>
#include <unordered_map>
#include <vector>

#include "hw/platform/platform.h"
#include "models/collectives/data_plane.h"
#include "models/collectives/plan.h"
#include "tb/chakra/workload.h"
#include "tb/config/platform_spec.h"
#include "tb/replay/phase_scheduler.h"
#include "tb/replay/plan_library.h"

namespace wafersim::tb {

struct RankResult {
  int rank = 0;
  bool finished = false;
  sc_core::sc_time finish;
  sc_core::sc_time compute;       // time with a compute node in flight
  sc_core::sc_time comm;          // time with a communication node in flight
  sc_core::sc_time exposed_comm;  // communication in flight while no compute is
  size_t nodes = 0;
  size_t nodes_done = 0;
  // The comm_size of its finished collectives, sends and receives: the data it moved (a
  // broadcast's buffer once, however many times the rank relayed it).
  uint64_t comm_bytes = 0;
  // When what it moved had arrived everywhere: its finish, or the end of the last collective it
  // took part in (a broadcast's root is done sending before the last rank has the data).
  sc_core::sc_time comm_end;
};

struct CollectiveResult {
  std::string name;
  std::string kind;
  std::string algorithm;
  std::string group;
  int ranks = 0;
  uint64_t bytes = 0;
  sc_core::sc_time start;  // first rank issued it
  sc_core::sc_time end;    // last rank finished it
  int finished_ranks = 0;
  double ideal_ns = 0;  // every dimension busy all along (tb/report/utilisation.h)
};

// `run --data`: collectives carry real values and every rank's result is checked
// (models/collectives/data_plane).
struct DataOptions {
  bool enabled = false;
  collectives::Element type = collectives::Element::FP32;
  uint32_t elements = 16;  // values per block (the bytes are timed in full)
  // One collective's values may take at most this much memory (all ranks together).
  uint64_t max_bytes = uint64_t{2} << 30;
};

// What the data check found.
struct DataCheck {
  int collectives_checked = 0;    // collective instances whose every rank was checked
  int collectives_unchecked = 0;  // foreign Chakra graphs: no data to check
  std::optional<collectives::DataMismatch> first;  // the first wrong value
  std::string collective;                          // whose (name)
  bool failed() const { return first.has_value(); }
};

class Replay : public sc_core::sc_module, private tlm::tlm_bw_transport_if<> {
 public:
  SC_HAS_PROCESS(Replay);
  // `plans`: the plans of `workload`'s collectives, prepared (and proven) before the platform was
  // built, over its topology.
  Replay(sc_core::sc_module_name name, const chakra::Workload& workload, const PlatformSpec& spec,
         hw::Platform& platform, PlanLibrary plans, DataOptions data = {});
  ~Replay() override;

  bool all_finished() const;
  std::vector<RankResult> rank_results() const;
  const std::vector<CollectiveResult>& collectives() const { return collective_results_; }
  // Human-readable account of what every unfinished rank waits for.
  std::string stall_report() const;
  size_t nodes_done() const { return nodes_done_; }
  // Inconsistencies found while replaying (e.g. a receive whose message has another size).
  const std::vector<std::string>& errors() const { return errors_; }
  // Messages that arrived and that no receive took (a SEND without its RECV), one line each; empty
  // when there are none.
  std::string unclaimed_report() const;
  // Rethrows an exception that stopped the simulation inside one of the replay's processes.
  void rethrow_failure() const;
  const DataOptions& data_options() const { return data_options_; }
  const DataCheck& data_check() const { return data_check_; }
  // The runtime scheduler of chunk phases (collectives.scheduler: runtime), else nullptr.
  const PhaseScheduler* phase_scheduler() const { return scheduler_.get(); }

 private:
  struct CollectiveRun;
  struct Command;
  struct RankState;
  struct Lane;

  // Issue work is queued and drained iteratively, so long chains of instant nodes never recurse.
  struct Work {
    int rank;
    size_t node;
    CollectiveRun* run;
    uint32_t op;
  };

  void start();
  void drain();
  Command* acquire_command(int rank, size_t node, CollectiveRun* run, uint32_t op);
  void issue(int rank, size_t node);
  void node_done(int rank, size_t node);
  void issue_plan_op(CollectiveRun& run, uint32_t op);
  void plan_op_done(CollectiveRun& run, uint32_t op);
  // Runtime scheduler: whether phase `i` of `run`, whose gate is ready, starts now; a message
  // for `rank` arrived (its phase, started by a peer, is followed); phase `i` of `run` follows a
  // peer; op `op` of `run` finished (a phase's closing op ends it).
  bool admit(CollectiveRun& run, size_t i);
  void arrived(int rank, uint64_t tag);
  void follow(CollectiveRun& run, size_t i);
  void phase_progress(CollectiveRun& run, uint32_t op);
  PhaseScheduler::Phase scheduled(CollectiveRun& run, size_t i) const;
  // Sends `command` to the NPU of its rank.
  void send_command(Command* command);
  void finish_command(int rank, tlm::tlm_generic_payload& trans);
  void account(RankState& r);
  Lane* lane_of(RankState& r, const chakra::TraceNode& node) const;
  // Runs a process body; an exception stops the simulation and is kept for rethrow_failure().
  template <typename Body>
  void guarded(Body&& body);
  uint32_t instance_of(const std::string& group, size_t sequence);
  // The values of `run`'s collective instance, made by its first rank (nullptr: not checkable).
  // Has the platform's Fred switches compute the routing configurations of a collective's flows
  // ahead of them (on its first rank's issue).
  void configure_flows(const CollectiveRun& run);
  // A flow's ends as ranks, and its key, as its commands and the Fred switches name them (refills
  // `ends`' vectors in place: commands are reused).
  static void flow_ends(const CollectiveRun& run, const collectives::FlowSpec& spec,
                        topology::FlowEnds& ends);
  collectives::DataPlane* data_plane(const CollectiveRun& run, const PlanLibrary::Entry& planned,
                                     const std::string& file, const chakra::TraceNode& node);

  const chakra::Workload& workload_;
  const PlatformSpec& spec_;
  hw::Platform& platform_;
  // The NPUs' command sockets: plain TLM-2.0 base-protocol sockets, one per rank, all bound to the
  // replay's own backward interface (a completion's command names its rank; the utility library's
  // tagged socket adds a process object per call, and a per-rank interface object a cold cache
  // line per completion), and each NPU's forward interface, looked up once after elaboration.
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay) override;
  void invalidate_direct_mem_ptr(sc_dt::uint64, sc_dt::uint64) override {}
  void end_of_elaboration() override;
  std::vector<std::unique_ptr<tlm::tlm_initiator_socket<32>>> npu_sockets_;
  std::vector<tlm::tlm_fw_transport_if<>*> npus_;
  std::vector<std::unique_ptr<RankState>> ranks_;
  PlanLibrary plans_;
  std::map<std::pair<std::string, size_t>, uint32_t> instances_;
  std::vector<CollectiveResult> collective_results_;
  const DataOptions data_options_;
  DataCheck data_check_;
  // The values of the collectives in flight, by instance.
  std::unordered_map<uint32_t, std::unique_ptr<collectives::DataPlane>> data_planes_;
  std::set<uint64_t> unchecked_;
  std::vector<Command*> free_commands_;
  std::vector<std::unique_ptr<Command>> all_commands_;
  std::vector<std::string> errors_;
  // First in, first out: read from work_next_ on, and emptied when drained (a deque allocated and
  // freed a block every 16 items, 3% of a 2,048-rank run).
  std::vector<Work> work_;
  size_t work_next_ = 0;
  std::unique_ptr<PhaseScheduler> scheduler_;
  // Tags of messages that arrived before their rank issued their collective, by (rank, instance).
  std::unordered_map<uint64_t, std::vector<uint32_t>> early_;
  std::exception_ptr failure_;
  bool draining_ = false;
  size_t nodes_done_ = 0;
};

}  // namespace wafersim::tb
