#include "tb/replay/replay.h"

#include <algorithm>
#include <queue>
#include <sstream>
#include <unordered_map>
#include <utility>

#include "hw/proto/probe.h"
#include "models/common/error.h"
#include "tb/chakra/sparse_node.h"
#include "tb/replay/op_progress.h"
#include "tb/report/utilisation.h"

namespace wafersim::tb {

using chakra::CollectiveKind;
using chakra::NodeKind;
using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

namespace {
enum : uint8_t { kWaiting = 0, kIssued = 1, kDone = 2 };
constexpr uint64_t kPointToPointTag = 1ull << 63;
// A chunk phase's progress under the runtime scheduler.
enum : uint8_t { kPhaseIdle = 0, kPhaseQueued = 1, kPhaseRunning = 2, kPhaseDone = 3 };

// The timeline lane a node belongs to.
const char* category(const wafersim::chakra::TraceNode& node) {
  using wafersim::chakra::NodeKind;
  if (node.is_cpu_op || node.kind == NodeKind::Metadata || node.kind == NodeKind::Invalid)
    return "host";
  switch (node.kind) {
    case NodeKind::Compute:
      return "compute";
    case NodeKind::MemLoad:
    case NodeKind::MemStore:
      return "memory";
    default:
      return "communication";
  }
}
// A compute node's recorded duration, checked against the time the SystemC kernel can represent
// from now on (2^64 ps, about 213 days, in all).
sc_time duration_of(const std::string& file, const wafersim::chakra::TraceNode& node) {
  const uint64_t left_ps = sc_core::sc_max_time().value() - sc_core::sc_time_stamp().value();
  if (node.duration_micros > left_ps / 1000000)
    throw wafersim::InputError(
        file, "node " + std::to_string(node.id) + " ('" + node.name + "')",
        "duration_micros " + std::to_string(node.duration_micros) +
            " would run past the end of simulated time (SystemC counts at most 2^64 ps, about "
            "213 days; " +
            std::to_string(left_ps / 1000000) + " us are left)");
  return sc_time::from_value(node.duration_micros * 1000000);
}

}  // namespace

// Issue lanes that keep one node in flight and launch the ready node with the smallest id next:
// compute (npu.compute_order: node_id) and collectives + sends (npu.comm_order: node_id).
struct Replay::Lane {
  int inflight = 0;
  std::priority_queue<std::pair<uint64_t, size_t>, std::vector<std::pair<uint64_t, size_t>>,
                      std::greater<>>
      waiting;
};

struct Replay::RankState {
  int rank = 0;
  const chakra::Trace* trace = nullptr;
  std::vector<std::vector<size_t>> children;
  std::vector<int> missing;
  std::vector<uint8_t> state;
  std::vector<sc_time> started;  // when each node began running (for the timeline)
  std::vector<uint32_t>
      sequence;  // collectives: position among this rank's collectives of the group
  std::map<size_t, CollectiveRun*> running;
  uint64_t collectives_issued = 0;  // the runtime scheduler's collective order
  std::vector<size_t> joined;       // the collectives it took part in (collective_results_)
  size_t done = 0;
  int compute_inflight = 0;
  int comm_inflight = 0;
  Lane compute_lane, sparse_lane, comm_lane;
  sc_time last, compute, comm, exposed, finish;
};

// One rank's part in one collective: its plan ops and how far they are (the ops and their
// dependents live in the shared plan). At 1,024 ranks and more a rank's run is cold at each of its
// ops (the other ranks' steps ran since): what finishing an op reads, its progress included, is
// the first cache line; issuing one reads the second too.
struct alignas(64) Replay::CollectiveRun {
  const collectives::RankPlan* ops = nullptr;
  collectives::DataPlane* data = nullptr;  // --data: the collective's values
  uint32_t remaining = 0;                  // ops not done
  int rank = 0;
  uint32_t node = 0;
  bool phased = false;  // whether phase_state is in use (read here, in the first line)
  OpProgress progress;
  int position = 0;  // in the communicator
  // Runtime scheduler: per phase of the plan (RankPlan::phases) its progress.
  std::vector<uint8_t> phase_state;
  uint64_t instance = 0;
  const std::vector<int>* members = nullptr;
  std::shared_ptr<const collectives::Plan> plan;
  hw::TrafficClass traffic_class = hw::TrafficClass::Mp;  // its communicator's
  size_t result = 0;
  uint64_t order = 0;              // runtime scheduler: the collective's order among this rank's
  size_t recent_phase = SIZE_MAX;  // the phase of the last message that arrived

  // The rank that op `k` sends to or receives from.
  int peer_rank(uint32_t k) const { return (*members)[plan->peer_of(position, ops->ops[k])]; }
};

// What the replay keeps of a command lies in front of its payload, so that the replay's fields,
// the payload's response status and the extension's common fields (hw/npu/npu.h) take two cache
// lines: a command is cold when it completes, and it completes once per message at each end.
struct alignas(64) Replay::Command {
  CollectiveRun* run = nullptr;  // the collective whose plan op this is, or null
  int rank = 0;
  uint32_t item = 0;  // the plan op (run set), or the trace node
  hw::CommandPayload trans;

  hw::CommandExt& ext() { return trans.command; }
  size_t node() const { return run ? run->node : item; }
};

Replay::Replay(sc_core::sc_module_name name, const chakra::Workload& workload,
               const PlatformSpec& spec, hw::Platform& platform, PlanLibrary plans,
               DataOptions data)
    : sc_module(name),
      workload_(workload),
      spec_(spec),
      platform_(platform),
      plans_(std::move(plans)),
      data_options_(data) {
  const int n = platform.endpoint_count();
  if (static_cast<int>(workload.ranks.size()) != n)
    throw InputError("workload", "",
                     std::to_string(workload.ranks.size()) + " traces for " + std::to_string(n) +
                         " endpoints (NPUs and I/O controllers)");
  for (int r = 0; r < n; ++r) {
    npu_sockets_.push_back(
        std::make_unique<tlm::tlm_initiator_socket<32>>(("npu" + std::to_string(r)).c_str()));
    npu_sockets_.back()->bind(*this);
    npu_sockets_.back()->bind(platform.npu(r).cmd);

    auto state = std::make_unique<RankState>();
    state->rank = r;
    state->trace = &workload.ranks[r];
    const auto& nodes = state->trace->nodes;
    std::unordered_map<uint64_t, size_t> index;
    for (size_t i = 0; i < nodes.size(); ++i) index[nodes[i].id] = i;
    state->children.resize(nodes.size());
    state->missing.assign(nodes.size(), 0);
    state->started.assign(nodes.size(), SC_ZERO_TIME);
    state->state.assign(nodes.size(), kWaiting);
    state->sequence.assign(nodes.size(), 0);
    for (size_t i = 0; i < nodes.size(); ++i) {
      for (uint64_t d : workload.dependencies_of(nodes[i])) {
        state->children[index.at(d)].push_back(i);
        state->missing[i]++;
      }
      const auto& node = nodes[i];
      if (spec.compute == ComputeModel::Roofline && node.kind == NodeKind::Compute &&
          !node.is_cpu_op && !node.num_ops && !node.sparse)
        throw InputError(state->trace->file, "node " + std::to_string(node.id),
                         "num_ops is missing (the roofline compute model needs it)");
    }
    // Collectives of one group match across ranks by their order of node id on each rank.
    std::vector<size_t> order(nodes.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return nodes[a].id < nodes[b].id; });
    std::map<std::string, uint32_t> seen;
    for (size_t i : order)
      if (nodes[i].kind == NodeKind::Collective && !nodes[i].is_cpu_op)
        state->sequence[i] = seen[chakra::communicator_name(nodes[i].pg_name)]++;
    ranks_.push_back(std::move(state));
  }
  if (spec.collectives.scheduler == collectives::QueueScheduler::Runtime) {
    scheduler_ = std::make_unique<PhaseScheduler>(spec.collectives.queue_policy,
                                                  spec.collectives.collective_priority);
    for (int r = 0; r < n; ++r)
      platform.npu(r).on_arrival = [this, r](int, uint64_t tag) {
        guarded([&]() { arrived(r, tag); });
      };
  }
  SC_METHOD(start);
}

template <typename Body>
void Replay::guarded(Body&& body) {
  try {
    body();
  } catch (...) {
    if (!failure_) failure_ = std::current_exception();
    work_.clear();
    work_next_ = 0;
    draining_ = false;
    sc_core::sc_stop();
  }
}

void Replay::rethrow_failure() const {
  if (failure_) std::rethrow_exception(failure_);
}

Replay::~Replay() = default;

void Replay::start() {
  guarded([this]() {
    for (auto& r : ranks_)
      for (size_t i = 0; i < r->missing.size(); ++i)
        if (r->missing[i] == 0) work_.push_back({r->rank, i, nullptr, 0});
    drain();
  });
}

void Replay::drain() {
  // A completion can arrive while issuing (a receive whose message is already there): the outer
  // drain picks up what it queues.
  if (draining_) return;
  draining_ = true;
  while (work_next_ < work_.size()) {
    const Work w = work_[work_next_++];
    if (w.run)
      issue_plan_op(*w.run, w.op);
    else
      issue(w.rank, w.node);
  }
  work_.clear();
  work_next_ = 0;
  draining_ = false;
}

Replay::Command* Replay::acquire_command(int rank, size_t node, CollectiveRun* run, uint32_t op) {
  Command* c;
  if (free_commands_.empty()) {
    all_commands_.push_back(std::make_unique<Command>());
    c = all_commands_.back().get();
  } else {
    c = free_commands_.back();
    free_commands_.pop_back();
  }
  c->run = run;
  c->rank = rank;
  c->item = run ? op : static_cast<uint32_t>(node);
  c->ext().reset();
  return c;
}

void Replay::account(RankState& r) {
  const sc_time now = sc_core::sc_time_stamp();
  const sc_time dt = now - r.last;
  if (r.compute_inflight > 0) r.compute += dt;
  if (r.comm_inflight > 0) r.comm += dt;
  if (r.comm_inflight > 0 && r.compute_inflight == 0) r.exposed += dt;
  r.last = now;
}

void Replay::send_command(Command* c) {
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_time delay = SC_ZERO_TIME;
  c->ext().token = reinterpret_cast<uint64_t>(c);
  npus_[c->rank]->nb_transport_fw(c->trans, phase, delay);
}

void Replay::end_of_elaboration() {
  for (auto& socket : npu_sockets_) npus_.push_back(socket->operator->());
}

uint32_t Replay::instance_of(const std::string& group, size_t sequence) {
  auto key = std::make_pair(group, sequence);
  auto it = instances_.find(key);
  if (it != instances_.end()) return it->second;
  uint32_t id = static_cast<uint32_t>(instances_.size());
  instances_.emplace(key, id);
  return id;
}

void Replay::issue(int rank, size_t i) {
  RankState& r = *ranks_[rank];
  const chakra::TraceNode& node = r.trace->nodes[i];
  r.state[i] = kIssued;
  r.started[i] = sc_core::sc_time_stamp();
  if (node.is_cpu_op || node.kind == NodeKind::Metadata || node.kind == NodeKind::Invalid) {
    node_done(rank, i);  // host work takes no NPU time
    return;
  }
  auto command = [&]() { return acquire_command(rank, i, nullptr, 0); };
  if (Lane* lane = lane_of(r, node)) {
    if (lane->inflight > 0) {
      lane->waiting.push({node.id, i});
      r.state[i] = kWaiting;
      return;
    }
    lane->inflight++;
  }
  r.started[i] = sc_core::sc_time_stamp();
  account(r);
  switch (node.kind) {
    case NodeKind::Compute: {
      Command* c = command();
      if (node.sparse) {  // on the NPU's sparse unit
        c->ext().kind = hw::CommandKind::Sparse;
        c->trans.sparse_job.job = chakra::sparse_job(*node.sparse, spec_.npu.sparse_unit_params());
        c->trans.sparse_job.data = data_options_.enabled;
        c->trans.sparse_job.seed = (static_cast<uint64_t>(rank) << 40) ^ node.id;
        r.compute_inflight++;
        send_command(c);
        return;
      }
      c->ext().kind = hw::CommandKind::Compute;
      c->ext().roofline = spec_.compute == ComputeModel::Roofline;
      c->ext().duration = duration_of(r.trace->file, node);
      c->ext().operations = node.num_ops.value_or(0);
      c->ext().bytes = node.tensor_size.value_or(0);
      r.compute_inflight++;
      send_command(c);
      return;
    }
    case NodeKind::MemLoad:
    case NodeKind::MemStore: {
      Command* c = command();
      c->ext().kind = hw::CommandKind::Memory;
      c->ext().bytes = node.tensor_size.value_or(0);
      r.comm_inflight++;
      send_command(c);
      return;
    }
    case NodeKind::Send:
    case NodeKind::Recv: {
      Command* c = command();
      bool send = node.kind == NodeKind::Send;
      c->ext().kind = send ? hw::CommandKind::Send : hw::CommandKind::Recv;
      c->ext().bytes = *node.comm_size;
      c->ext().peer = static_cast<int>(send ? *node.comm_dst : *node.comm_src);
      c->ext().tag = kPointToPointTag | static_cast<uint64_t>(node.comm_tag.value_or(0));
      r.comm_inflight++;
      send_command(c);
      return;
    }
    case NodeKind::Collective: {
      const std::vector<int>* members = &workload_.members(node.pg_name);
      const PlanLibrary::Entry planned = plans_.get(r.trace->file, node, *members);
      const collectives::Collective kind = planned.kind;
      const auto& plan = planned.plan;
      auto run = new CollectiveRun;
      run->rank = rank;
      run->node = static_cast<uint32_t>(i);  // a trace holds far fewer than 2^32 nodes
      run->members = members;
      run->plan = plan;
      run->position =
          static_cast<int>(std::find(members->begin(), members->end(), rank) - members->begin());
      run->ops = &plan->of(run->position);
      run->instance = instance_of(chakra::communicator_name(node.pg_name), r.sequence[i]);
      run->traffic_class = workload_.traffic_class(node.pg_name);
      run->remaining = static_cast<uint32_t>(run->ops->ops.size());
      run->order = r.collectives_issued++;
      run->phase_state.assign(run->ops->phases.size(), kPhaseIdle);
      run->phased = !run->phase_state.empty();
      if (scheduler_) {  // phases peers started before this rank issued the collective
        auto early = early_.find((uint64_t{static_cast<uint32_t>(rank)} << 32) | run->instance);
        if (early != early_.end()) {
          for (uint32_t tag : early->second)
            if (size_t p = run->ops->phase_of_tag(tag); p < run->phase_state.size())
              follow(*run, p);
          early_.erase(early);
        }
      }
      if (run->instance >= collective_results_.size())
        collective_results_.resize(run->instance + 1);
      CollectiveResult& res = collective_results_[run->instance];
      run->result = run->instance;
      r.joined.push_back(run->instance);
      if (res.ranks == 0) {
        res.name = node.name;
        res.kind = to_string(kind);
        res.algorithm = plan->algorithm;
        res.group = chakra::communicator_name(node.pg_name);
        res.ranks = static_cast<int>(members->size());
        res.bytes = node.comm_size.value_or(0);
        res.start = sc_core::sc_time_stamp();
        res.ideal_ns = ideal_collective_ns(platform_.topology(), kind, *members, res.bytes,
                                           !plan->flows.empty());
        configure_flows(*run);
      }
      res.start = std::min(res.start, sc_core::sc_time_stamp());
      if (data_options_.enabled) run->data = data_plane(*run, planned, r.trace->file, node);
      r.comm_inflight++;
      r.running[i] = run;
      if (run->remaining == 0) {
        plan_op_done(*run, UINT32_MAX);
        return;
      }
      for (uint32_t k : run->ops->roots) work_.push_back({rank, i, run, k});
      return;
    }
    default:
      node_done(rank, i);
      return;
  }
}

void Replay::flow_ends(const CollectiveRun& run, const collectives::FlowSpec& spec,
                       topology::FlowEnds& ends) {
  const auto ranks = [&](const std::vector<int>& positions, std::vector<int>& out) {
    out.clear();
    for (int p : positions) out.push_back((*run.members)[static_cast<size_t>(p)]);
  };
  ranks(spec.inputs, ends.inputs);
  ranks(spec.outputs, ends.outputs);
  // A collective's flows share their members' ports, which serve one flow at a time, so they
  // pass one after the other whatever uplink they take: they all take one, and concurrent
  // collectives spread over the others (d-mod-k by instance).
  ends.key = run.instance;
}

void Replay::configure_flows(const CollectiveRun& run) {
  if (run.plan->flows.empty()) return;
  std::vector<hw::FredSwitch::PlannedFlow> flows;
  for (size_t f = 0; f < run.plan->flows.size(); ++f) {
    const collectives::FlowSpec& spec = run.plan->flows[f];
    hw::FredSwitch::PlannedFlow& planned = flows.emplace_back();
    planned.tag = (run.instance << 32) | f;
    flow_ends(run, spec, planned.ends);
  }
  platform_.configure_flows(flows);
}

collectives::DataPlane* Replay::data_plane(const CollectiveRun& run,
                                           const PlanLibrary::Entry& planned,
                                           const std::string& file, const chakra::TraceNode& node) {
  auto it = data_planes_.find(run.instance);
  if (it != data_planes_.end()) return it->second.get();
  if (!planned.data_known) {  // counted once per collective instance
    if (unchecked_.insert(run.instance).second) data_check_.collectives_unchecked++;
    return nullptr;
  }
  const uint64_t need = collectives::DataPlane::bytes_needed(*run.plan, data_options_.elements);
  if (need > data_options_.max_bytes)
    throw InputError(file, "node " + std::to_string(node.id) + " ('" + node.name + "')",
                     "--data needs " + std::to_string(need >> 20) +
                         " MiB for this collective's values, more than the " +
                         std::to_string(data_options_.max_bytes >> 20) +
                         " MiB allowed: lower --data-elements (" +
                         std::to_string(data_options_.elements) + " values per block)");
  auto plane = std::make_unique<collectives::DataPlane>(
      *run.plan, planned.kind, static_cast<int>(node.root.value_or(0)), data_options_.type,
      data_options_.elements, run.instance);
  return data_planes_.emplace(run.instance, std::move(plane)).first->second.get();
}

void Replay::issue_plan_op(CollectiveRun& run, uint32_t k) {
  const collectives::Op& op = run.ops->ops[k];
  if (run.data) run.data->issued(run.position, k);
  run.progress.issue(*run.ops, k);
  // A phase's gate: the phase may have to wait its turn in its dimension.
  if (op.kind == collectives::OpKind::Nop && run.phased) {
    const size_t i = run.ops->phase_at(k);
    if (i < run.phase_state.size() && run.ops->phases[i].gate == k && !admit(run, i)) return;
  }
  // A Nop only joins dependencies; a copy of nothing (built-in all-to-all's own block) is free.
  const uint64_t bytes = run.plan->bytes_of(run.position, k);
  if (op.kind == collectives::OpKind::Nop || (op.kind == collectives::OpKind::Copy && bytes == 0)) {
    plan_op_done(run, k);
    return;
  }
  Command* c = acquire_command(run.rank, run.node, &run, k);
  c->ext().bytes = bytes;
  c->ext().tag = (run.instance << 32) | op.tag;
  switch (op.kind) {
    case collectives::OpKind::Send:
      c->ext().kind = hw::CommandKind::Send;
      if (hw::Probe* p = hw::probe())
        p->collective_step(run.rank, static_cast<int>(op.tag & 0xffff));
      break;
    case collectives::OpKind::Recv:
      c->ext().kind = hw::CommandKind::Recv;
      break;
    case collectives::OpKind::Copy:  // through the NPU's memory
      c->ext().kind = hw::CommandKind::Memory;
      break;
    case collectives::OpKind::Compute:  // a fixed duration, in picoseconds
      c->ext().kind = hw::CommandKind::Compute;
      c->ext().roofline = false;
      c->ext().operations = 0;
      c->ext().duration = sc_core::sc_time::from_value(bytes);
      break;
    case collectives::OpKind::Flow: {  // platforms without Fred switches refuse them (tb/config)
      const collectives::FlowSpec& spec = run.plan->flows[static_cast<size_t>(op.peer)];
      c->ext().kind = hw::CommandKind::Flow;
      c->ext().tag = (run.instance << 32) | static_cast<uint32_t>(op.peer);
      c->ext().flow_input = spec.has_input(run.position);
      c->ext().flow_output = spec.has_output(run.position);
      flow_ends(run, spec, c->ext().flow);
      c->ext().flow_class = run.traffic_class;
      send_command(c);
      return;
    }
    default:
      c->ext().kind = hw::CommandKind::Reduce;
      break;
  }
  if (op.peer >= 0) c->ext().peer = run.peer_rank(k);
  send_command(c);
}

tlm::tlm_sync_enum Replay::nb_transport_bw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                           sc_time&) {
  if (phase != tlm::BEGIN_RESP) return tlm::TLM_ACCEPTED;
  const int rank = reinterpret_cast<Command*>(hw::command_of(trans).token)->rank;
  guarded([&]() { finish_command(rank, trans); });
  return tlm::TLM_COMPLETED;
}

void Replay::finish_command(int rank, tlm::tlm_generic_payload& trans) {
  hw::CommandExt* ext = &hw::command_of(trans);
  Command* c = reinterpret_cast<Command*>(ext->token);
  CollectiveRun* run = c->run;
  const uint32_t op = c->item;
  // A receive that combines (MSCCL's rrc) then takes the reduction engine for its bytes.
  if (run && ext->kind == hw::CommandKind::Recv &&
      trans.get_response_status() == tlm::TLM_OK_RESPONSE && run->ops->data[op].reduce) {
    ext->kind = hw::CommandKind::Reduce;
    trans.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    send_command(c);
    return;
  }
  free_commands_.push_back(c);
  if (trans.get_response_status() != tlm::TLM_OK_RESPONSE) {
    const RankState& r = *ranks_[rank];
    const chakra::TraceNode& n = r.trace->nodes[c->node()];
    std::ostringstream what;
    what << r.trace->file << ": node " << n.id << " '" << n.name << "': ";
    if (ext->kind == hw::CommandKind::Sparse &&
        !static_cast<hw::CommandPayload&>(trans).sparse_job.mismatch.empty())
      what << "rank " << rank << "'s sparse unit computed a value models/sparse does not: "
           << static_cast<hw::CommandPayload&>(trans).sparse_job.mismatch;
    else if (ext->kind == hw::CommandKind::Sparse)
      what << "a sparse node on rank " << rank
           << ", which has no sparse unit (an I/O controller: only NPUs have one)";
    else
      what << (run ? "a collective step receives" : "receives") << " from rank " << ext->peer
           << " a message of " << ext->received_bytes << " bytes where " << ext->bytes
           << " were expected (do the ranks agree on comm_size?)";
    errors_.push_back(what.str());
    sc_core::sc_stop();
  }
  if (run)
    plan_op_done(*run, op);
  else
    node_done(rank, c->item);
  drain();
}

void Replay::plan_op_done(CollectiveRun& run, uint32_t k) {
  if (k != UINT32_MAX) {
    if (run.data) run.data->finished(run.position, k);
    run.progress.finish(*run.ops, k);
    run.remaining--;
    for (uint32_t child : run.ops->children(k))
      if (run.progress.release(*run.ops, child)) work_.push_back({run.rank, run.node, &run, child});
    if (run.phased && run.ops->ops[k].kind == collectives::OpKind::Nop) phase_progress(run, k);
  }
  if (run.remaining > 0) return;
  CollectiveResult& res = collective_results_[run.result];
  res.end = std::max(res.end, sc_core::sc_time_stamp());
  res.finished_ranks++;
  if (run.data) {
    if (auto wrong = run.data->check(run.position); wrong && !data_check_.failed()) {
      data_check_.first = wrong;
      data_check_.collective = res.name;
    }
    if (res.finished_ranks == res.ranks) {
      data_planes_.erase(run.instance);
      data_check_.collectives_checked++;
    }
  }
  if (res.finished_ranks == res.ranks && !run.plan->flows.empty())
    platform_.release_flows(run.instance << 32);
  int rank = run.rank;
  size_t node = run.node;
  ranks_[rank]->running.erase(node);
  delete &run;
  node_done(rank, node);
}

PhaseScheduler::Phase Replay::scheduled(CollectiveRun& run, size_t i) const {
  const collectives::PhaseGate& g = run.ops->phases[i];
  PhaseScheduler::Phase p;
  p.npu = run.rank;
  p.dim = g.dim;
  p.slot = g.slot;
  p.limited = g.limited;
  p.collective = run.order;
  p.chunk = g.chunk;
  p.bytes = g.bytes;
  p.ready_ps = sc_core::sc_time_stamp().value();
  p.owner = &run;
  p.index = i;
  return p;
}

bool Replay::admit(CollectiveRun& run, size_t i) {
  uint8_t& state = run.phase_state[i];
  if (state == kPhaseRunning) return true;  // a peer's data started it before it was ready here
  if (scheduler_->ready(scheduled(run, i))) {
    state = kPhaseRunning;
    return true;
  }
  state = kPhaseQueued;
  return false;
}

void Replay::arrived(int rank, uint64_t tag) {
  if (tag & kPointToPointTag) return;
  const uint64_t instance = tag >> 32;
  const uint32_t op_tag = static_cast<uint32_t>(tag);
  for (auto& [node, run] : ranks_[rank]->running)
    if (run->instance == instance) {
      // Messages come in runs of one phase: try the phase of the last one first.
      const auto& phases = run->ops->phases;
      size_t i = run->recent_phase;
      if (i >= phases.size() || op_tag < phases[i].first_tag || op_tag > phases[i].last_tag)
        i = run->recent_phase = run->ops->phase_of_tag(op_tag);
      if (i < run->phase_state.size() && run->phase_state[i] < kPhaseRunning) follow(*run, i);
      drain();
      return;
    }
  early_[(uint64_t{static_cast<uint32_t>(rank)} << 32) | instance].push_back(op_tag);
}

void Replay::follow(CollectiveRun& run, size_t i) {
  // A peer started this phase (tb/replay/phase_scheduler.h). A gate waiting its turn opens; one
  // not reached yet opens when it is.
  uint8_t& state = run.phase_state[i];
  if (state == kPhaseRunning || state == kPhaseDone) return;
  const bool queued = state == kPhaseQueued;
  scheduler_->follow(scheduled(run, i), queued);
  state = kPhaseRunning;
  if (queued) plan_op_done(run, run.ops->phases[i].gate);
}

void Replay::phase_progress(CollectiveRun& run, uint32_t k) {
  const size_t i = run.ops->phase_at(k);
  if (i >= run.phase_state.size() || k != run.ops->phases[i].close) return;
  run.phase_state[i] = kPhaseDone;
  if (auto next = scheduler_->finished(scheduled(run, i))) {
    // The owner is a run of this NPU still in flight: its queued gate has not finished.
    auto& other = *static_cast<CollectiveRun*>(next->owner);
    other.phase_state[next->index] = kPhaseRunning;
    plan_op_done(other, other.ops->phases[next->index].gate);
  }
}

Replay::Lane* Replay::lane_of(RankState& r, const chakra::TraceNode& node) const {
  // Like a stream on a real device (and ASTRA-sim), the driver may keep one compute kernel, and one
  // collective or send, in flight and launch the ready one that comes first in program order.
  // The sparse unit is a stream of its own beside the compute engine.
  if (node.kind == NodeKind::Compute && spec_.compute_order == ComputeOrder::NodeId)
    return node.sparse ? &r.sparse_lane : &r.compute_lane;
  if ((node.kind == NodeKind::Collective || node.kind == NodeKind::Send) &&
      spec_.comm_order == CommOrder::NodeId)
    return &r.comm_lane;
  return nullptr;
}

void Replay::node_done(int rank, size_t i) {
  RankState& r = *ranks_[rank];
  const chakra::TraceNode& node = r.trace->nodes[i];
  if (!(node.is_cpu_op || node.kind == NodeKind::Metadata || node.kind == NodeKind::Invalid)) {
    account(r);
    if (node.kind == NodeKind::Compute)
      r.compute_inflight--;
    else
      r.comm_inflight--;
    if (Lane* lane = lane_of(r, node)) {
      lane->inflight--;
      if (!lane->waiting.empty()) {
        work_.push_back({rank, lane->waiting.top().second, nullptr, 0});
        lane->waiting.pop();
      }
    }
  }
  if (hw::Probe* p = hw::probe())
    p->node_span(rank, node.id, node.name, category(node), r.started[i]);
  r.state[i] = kDone;
  r.done++;
  nodes_done_++;
  if (r.done == r.state.size()) r.finish = sc_core::sc_time_stamp();
  for (size_t c : r.children[i])
    if (--r.missing[c] == 0) work_.push_back({rank, c, nullptr, 0});
}

bool Replay::all_finished() const {
  for (const auto& r : ranks_)
    if (r->done != r->state.size()) return false;
  return true;
}

std::vector<RankResult> Replay::rank_results() const {
  std::vector<RankResult> out;
  for (const auto& r : ranks_) {
    RankResult res;
    res.rank = r->rank;
    res.finished = r->done == r->state.size();
    res.finish = res.finished ? r->finish : r->last;
    res.compute = r->compute;
    res.comm = r->comm;
    res.exposed_comm = r->exposed;
    res.nodes = r->state.size();
    res.nodes_done = r->done;
    for (size_t i = 0; i < r->state.size(); ++i) {
      const chakra::TraceNode& n = r->trace->nodes[i];
      const bool comm =
          n.kind == NodeKind::Collective || n.kind == NodeKind::Send || n.kind == NodeKind::Recv;
      if (comm && !n.is_cpu_op && r->state[i] == kDone) res.comm_bytes += n.comm_size.value_or(0);
    }
    res.comm_end = res.finish;
    for (size_t c : r->joined) res.comm_end = std::max(res.comm_end, collective_results_[c].end);
    out.push_back(res);
  }
  return out;
}

std::string Replay::unclaimed_report() const {
  std::ostringstream out;
  for (int rank = 0; rank < platform_.endpoint_count(); ++rank)
    for (const auto& m : platform_.npu(rank).unclaimed_messages()) {
      out << "rank " << m.src << " sent " << m.bytes << " bytes to rank " << rank;
      if (m.tag & kPointToPointTag) {
        const int64_t tag = static_cast<int64_t>(m.tag & ~kPointToPointTag);
        out << " with comm_tag " << tag;
        for (const auto& n : ranks_[m.src]->trace->nodes)
          if (n.kind == NodeKind::Send && n.comm_dst == rank && n.comm_tag.value_or(0) == tag) {
            out << " (" << ranks_[m.src]->trace->file << " node " << n.id << " '" << n.name << "')";
            break;
          }
        out << ", and no RECV on rank " << rank << " takes it\n";
      } else {
        out << " in a collective step (tag " << m.tag << "), and no receive takes it\n";
      }
    }
  return out.str();
}

std::string Replay::stall_report() const {
  std::ostringstream out;
  for (const auto& rp : ranks_) {
    const RankState& r = *rp;
    if (r.done == r.state.size()) continue;
    const auto& nodes = r.trace->nodes;
    out << "rank " << r.rank << " (" << r.trace->file << "): " << r.done << " of " << r.state.size()
        << " nodes done\n";
    int shown = 0;
    const auto waiting = platform_.npu(r.rank).waiting_receives();
    for (size_t i = 0; i < nodes.size() && shown < 6; ++i) {
      if (r.state[i] != kIssued) continue;
      ++shown;
      const auto& n = nodes[i];
      out << "  in flight: node " << n.id << " '" << n.name << "' " << chakra::to_string(n.kind);
      if (n.kind == NodeKind::Collective) {
        out << " " << chakra::to_string(static_cast<CollectiveKind>(*n.comm_type)) << " group '"
            << chakra::communicator_name(n.pg_name) << "'";
        auto it = r.running.find(i);
        if (it != r.running.end()) {
          const CollectiveRun& run = *it->second;
          // The ops issued and not done: those of the kind asked for.
          const auto issued = [&](collectives::OpKind kind) {
            std::vector<uint32_t> found;
            const auto take = [&](uint32_t k) {
              if (run.progress.at(*run.ops, k) == OpProgress::kIssued &&
                  run.ops->ops[k].kind == kind)
                found.push_back(k);
            };
            for (uint32_t k = run.progress.first_open(); k < run.progress.end_open(); ++k) take(k);
            if (run.progress.far_open() != OpProgress::kNone) take(run.progress.far_open());
            return found;
          };
          const std::vector<uint32_t> receives = issued(collectives::OpKind::Recv);
          for (size_t j = 0; j < receives.size() && j < 3; ++j)
            out << "\n    waits for a message from rank " << run.peer_rank(receives[j])
                << " (plan step tag " << run.ops->ops[receives[j]].tag << ")";
          if (receives.size() > 3)
            out << "\n    ... and " << receives.size() - 3 << " more receives";
          for (uint32_t k : issued(collectives::OpKind::Flow)) {
            const auto& spec = run.plan->flows[static_cast<size_t>(run.ops->ops[k].peer)];
            out << "\n    waits for in-network flow " << run.ops->ops[k].peer << " ("
                << spec.inputs.size() << " inputs, " << spec.outputs.size()
                << " outputs): its sum has not reached this rank";
          }
          out << "\n    " << run.remaining << " of " << run.ops->ops.size()
              << " plan ops unfinished";
        }
      } else if (n.kind == NodeKind::Recv) {
        out << ": waits for a message from rank " << n.comm_src.value_or(-1) << " tag "
            << n.comm_tag.value_or(0) << " that no matching SEND delivered";
      } else if (n.kind == NodeKind::Send) {
        out << " to rank " << n.comm_dst.value_or(-1) << " tag " << n.comm_tag.value_or(0);
      }
      out << "\n";
    }
    shown = 0;
    for (size_t i = 0; i < nodes.size() && shown < 3; ++i) {
      if (r.state[i] != kWaiting || r.missing[i] == 0) continue;
      ++shown;
      out << "  blocked: node " << nodes[i].id << " '" << nodes[i].name << "' waits on";
      int deps = 0;
      for (uint64_t d : workload_.dependencies_of(nodes[i])) {
        for (size_t j = 0; j < nodes.size(); ++j)
          if (nodes[j].id == d && r.state[j] != kDone && deps++ < 4) out << " " << d;
      }
      out << "\n";
    }
    if (!waiting.empty())
      out << "  NPU has " << waiting.size() << " posted receive(s) with no message\n";
    if (scheduler_) {
      std::istringstream queued(scheduler_->waiting(r.rank));
      for (std::string line; std::getline(queued, line);) out << "  scheduler: " << line << "\n";
    }
  }
  return out.str();
}

}  // namespace wafersim::tb
