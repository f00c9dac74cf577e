#pragma once
// Collectives are plans, plans are data (DESIGN.md decision 5): for every rank of a communicator, a
// small dependency graph of sends, receives and reductions. Built-in algorithms, imported MSCCL XML
// and Chakra collective graphs all produce this form, and the replay executes only this form.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace wafersim::collectives {

// Send / Recv: a message to / from a peer; Reduce: the local engine combining data; Copy: a local
// copy between buffers (timed by the NPU's memory); Compute: local work of a fixed duration (a COMP
// node of an imported Chakra collective graph; `Op::bytes` holds picoseconds); Nop: only joins
// dependencies; Flow: a rank's part in an in-network flow (Plan::flows), which the network reduces
// and multicasts (a Fred fabric's switches).
enum class OpKind { Send, Recv, Reduce, Copy, Compute, Nop, Flow };

const char* to_string(OpKind kind);

// The buffers of a rank (MSCCL's i, o and s), and a relay: the value a receive combined without
// storing it, which a later send forwards (MSCCL's rrs).
enum class Buffer : uint8_t { Input, Output, Scratch, Relay };

const char* to_string(Buffer buffer);

// What an op moves, for executing a plan on values and checking it (models/collectives/symbolic).
// The collective's data is cut into `Plan::chunks` chunks (dataset splits); per chunk a rank has
// an input, an output and a scratch buffer of `Plan::*_blocks` blocks each. An op names `count`
// blocks of chunk `chunk`: a Send reads them from `src` from block `src_first` on; a Recv writes
// them into `dst` from `dst_first` on, or, with `reduce`, writes there the sum of what arrived and
// the blocks of `src` from `src_first` (MSCCL's rrc; built-ins combine in place, src = dst) and
// takes the reduction engine's time for its bytes once the message is in; a Copy copies src to
// dst; a Reduce op with blocks adds src into dst (MSCCL's re), without blocks it is only time (a
// COMP of a known size in a Chakra graph). Block ranges are cyclic within their
// buffer; in a rotational plan position p adds p to both firsts. A Recv into `Relay` keeps its
// result for a Send whose src is `Relay` and whose `src_first` is that Recv's op index. A side may
// name its blocks in runs (`src_runs`, `dst_runs`): a hierarchical all-to-all transposes its data
// in every phase, so what it sends to one peer is a strided set. Kept beside the ops, not in them:
// the replay's hot path reads only Op.
//
// Blocks in runs: `run` blocks from `first`, `run` more from first + every, from first + 2 every,
// ..., `count` in all (count a multiple of run, every at least run). run 0: `count` blocks in a
// row.
struct Runs {
  uint16_t run = 0;
  uint16_t every = 0;
  bool strided() const { return run != 0; }
};

// Which side of an op's data: what it reads, or where it writes.
enum class Side : uint8_t { Source, Destination };

struct DataRef {
  uint32_t chunk = 0;
  uint32_t src_first = 0;
  uint32_t dst_first = 0;
  uint32_t count = 0;
  Buffer src = Buffer::Output;
  Buffer dst = Buffer::Output;
  bool reduce = false;
  Runs src_runs{}, dst_runs{};

  Buffer buffer(Side s) const { return s == Side::Source ? src : dst; }
  uint32_t first(Side s) const { return s == Side::Source ? src_first : dst_first; }
  Runs runs(Side s) const { return s == Side::Source ? src_runs : dst_runs; }
};

struct Op {
  OpKind kind = OpKind::Nop;
  int peer = -1;  // Send: destination, Recv: source; a position in the communicator; Flow: the flow
  uint64_t bytes = 0;  // Send / Recv: message size; Reduce: bytes combined; Compute: picoseconds
  uint32_t tag = 0;    // a Send and its Recv carry the same (sender, receiver, tag)
  // Where this op's dependencies sit in RankPlan::dep_list (kept flat: plans of 1,000 ranks hold
  // millions of ops, so no allocation per op).
  uint32_t first_dep = 0;
  uint32_t dep_count = 0;
};

// The dependencies of one op: indices of earlier ops of the same rank that must finish first.
struct DepRange {
  const uint32_t* first;
  const uint32_t* last;
  const uint32_t* begin() const { return first; }
  const uint32_t* end() const { return last; }
  size_t size() const { return static_cast<size_t>(last - first); }
  bool empty() const { return first == last; }
  uint32_t operator[](size_t i) const { return first[i]; }
};

// A chunk phase of a hierarchical plan built for a scheduler at run time (one per phase, in op
// order; HierarchicalRequest::runtime_queues). Its ops are `gate` to `close`: the gate is a Nop
// that every op of the phase waits for, directly or through others, and that the replay's
// scheduler finishes when it admits the phase to its dimension. Its messages carry tags
// `first_tag` to `last_tag` (no other phase's do), so that the first of them to arrive says a
// peer has started it (tb/replay/phase_scheduler.h).
struct PhaseGate {
  uint32_t gate = 0;   // op index of its gate
  uint32_t close = 0;  // op index of the Nop that ends it
  uint32_t chunk = 0;
  uint16_t dim = 0;     // the network dimension it runs over
  uint16_t slot = 0;    // which of the dimension's slots serves it (chunk mod slots)
  bool limited = true;  // a slot serves one phase at a time (false: no limit of chunks in flight)
  uint64_t bytes = 0;   // the chunk's data when it starts, as the load model sees it (SCF's key)
  uint32_t first_tag = UINT32_MAX, last_tag = 0;
};

struct RankPlan {
  std::vector<Op> ops;
  std::vector<DataRef> data;  // data[k]: what ops[k] moves
  std::vector<uint32_t> dep_list;
  // The dependents of each op (the reverse of the dependencies, CSR), made by Plan::finish(): the
  // replay releases them when the op completes.
  std::vector<uint32_t> child_offsets, child_list;
  // The ops that depend on nothing, in order (made by Plan::finish()): those a rank issues first.
  std::vector<uint32_t> roots;
  // Hierarchical plans built for a scheduler at run time: their phases, in op order (empty
  // otherwise).
  std::vector<PhaseGate> phases;
  // The phase whose gate or closing op is op `k`, or whose messages carry tag `tag`
  // (phases.size(): none). Constant time, and a binary search over the phases' tags: the replay
  // asks at every Nop and every message.
  size_t phase_at(uint32_t k) const {
    return k < phase_marks.size() ? phase_marks[k] : phases.size();
  }
  size_t phase_of_tag(uint32_t tag) const;
  // Made by Plan::finish(): per op, the phase it opens or closes (phases.size(): neither); the
  // phases' first tags in ascending order, and the phase of each.
  std::vector<uint32_t> phase_marks, phase_tag_starts, phases_by_tag;

  // Appends a Nop that ends the ops from `first` on: it waits for those nothing else among them
  // waits for (their sinks), or, when there are none, for op `otherwise` (-1: nothing). Returns
  // its index. Chunks and phases close this way, so that later ones can wait for them.
  uint32_t close(size_t first, int64_t otherwise = -1);
  // Appends an op with its dependencies (at most kMaxDeps) and its data; returns its index.
  uint32_t add(Op op, const std::vector<uint32_t>& deps, DataRef moved = {});
  DepRange deps(uint32_t op) const {
    const uint32_t* base = dep_list.data() + ops[op].first_dep;
    return {base, base + ops[op].dep_count};
  }
  DepRange children(uint32_t op) const {
    const uint32_t* base = child_list.data();
    return {base + child_offsets[op], base + child_offsets[op + 1]};
  }
  // Runs count an op's unfinished dependencies in 15 bits (1,000-rank plans run millions of ops).
  static constexpr uint32_t kMaxDeps = 32767;
};

// An in-network flow (PAPERS.md section 1): the data of its `inputs` (positions) is reduced on the
// way through the network and the sum reaches every one of its `outputs`. Each member (input,
// output or both) has one Flow op naming the flow (Op::peer) and its bytes (the same for all): an
// input's DataRef source side names the blocks it contributes, an output's destination side the
// blocks the sum replaces. An all-reduce is one flow with inputs = outputs = everyone; a reduce
// has one output, a broadcast or multicast one input. Both lists are in ascending order, each
// position once (Plan::validate checks), so membership is a binary search.
struct FlowSpec {
  std::vector<int> inputs;
  std::vector<int> outputs;
  bool has_input(int p) const;
  bool has_output(int p) const;
};

// Part j of `total` cut into `n` near-equal parts (the first total mod n one larger): the parts add
// up to total exactly. Every producer of plans sizes blocks and chunks this way.
inline uint64_t share(uint64_t total, uint64_t n, uint64_t j) {
  return total / n + (j < total % n ? 1 : 0);
}

// One digit of a chunk's block numbering in a symmetric plan: the dimension whose coordinate it
// counts, and whether it counts it backwards (a ring chunk going round the other way).
struct BlockDigit {
  uint16_t dim = 0;
  bool backwards = false;
};

// A plan every position runs alike, moved along the dimensions of a grid: a hierarchical plan
// whose dimensions run rings, direct exchanges or halving-doubling on blocks that divide evenly.
// Positions are coordinates, dimension 0 varying fastest. Position p runs position 0's ops with
// each peer g moved to p + g, coordinate by coordinate: added modulo the dimension's size, or, on a
// halving-doubling dimension, combined by exclusive or (its butterflies pair bits, not distances).
// Blocks of a chunk's whole buffer are numbers whose digits are coordinates (`digits`); they move
// with the position the same way, a backwards digit by subtraction. A 1,024-NPU hierarchical
// all-reduce then holds one rank's ops, not 1,024.
struct Symmetry {
  int positions = 0;                            // 0: not symmetric
  std::vector<int> sizes, strides;              // per dimension
  std::vector<bool> by_xor;                     // per dimension
  std::vector<std::vector<BlockDigit>> digits;  // per chunk, most significant first
  // Per chunk, its bytes, when some chunk does not split evenly into blocks (empty when all do):
  // block j of a chunk of S bytes holds S / blocks, one more when j < S mod blocks, so an op's
  // size then depends on the blocks it names where it runs (Plan::bytes_of).
  std::vector<uint64_t> uneven_chunk_bytes;

  int coordinate(int p, size_t d) const { return p / strides[d] % sizes[d]; }
  // Position p moved by g (p + g); and the g with p + g = 0 (p's inverse).
  int move(int p, int g) const;
  int inverse(int g) const;
  // Block j of chunk c's whole buffer as position 0 names it, seen from position p.
  uint32_t move_block(int p, uint32_t chunk, uint32_t j) const;
  // The same for the `count` lowest digits of j alone (a number of those digits).
  uint32_t move_digits(int p, uint32_t chunk, uint32_t j, size_t count) const;
  // Value v of one digit, seen from position p.
  uint32_t move_digit(int p, BlockDigit digit, uint32_t v) const;
  // move_block of each of `blocks`, in place: p's coordinates worked out once for them all (the
  // plan proof moves every block every op names, tens of millions at 1,024 ranks).
  void move_blocks(int p, uint32_t chunk, std::vector<uint32_t>& blocks) const;
};

struct Plan {
  std::string algorithm;
  // The data's shape (DataRef): `chunks` chunks; per chunk the collective's data is
  // `blocks_per_chunk` blocks, and each rank's buffers hold `input_blocks`, `output_blocks` and
  // `scratch_blocks` blocks. Built-in plans: all-gather's input is one of the n output blocks,
  // reduce-scatter's output one of the n input blocks, the others' buffers the whole data.
  uint32_t chunks = 1;
  uint32_t blocks_per_chunk = 1;
  uint32_t input_blocks = 1, output_blocks = 1, scratch_blocks = 0;
  // In place (MSCCL's inplace="1"): input and output are one memory. When one is smaller, rank r's
  // small buffer is blocks [r x small, (r + 1) x small) of the large one (all-gather's input is its
  // slot of the output, reduce-scatter's output its slot of the input).
  bool in_place = true;
  // Which of the collective's rank slots (a rank's share: all-gather's input, reduce-scatter's
  // output) each position of a chunk's data holds: `chunks` x size() entries, chunk by chunk;
  // empty when position p holds slot p. A rank's own slot sits at that slot's position of its
  // buffer. Hierarchical reduce-scatters and all-gathers number positions by the dimensions' order
  // (models/collectives/hierarchical.h), so rank r's share is not at position r.
  std::vector<uint32_t> slot_order;
  // One plan per position in the communicator; or, when `rotation` is set, position 0's plan
  // alone, which every position p runs with its peers shifted by p. Ring algorithms on sizes that
  // divide evenly are rotational: a 1,024-rank all-reduce then holds one rank's ops, not 1,024.
  std::vector<RankPlan> ranks;
  int rotation = 0;  // communicator size of a rotational plan; 0 = one plan per position
  // Or: position 0's plan alone, moved along the dimensions (Symmetry). A rotational plan is the
  // one-dimension case, kept apart because its block ranges wrap round the buffer.
  Symmetry symmetry;
  // In-network flows, named by Flow ops (none in plans of endpoint algorithms). A plan with flows
  // holds every position's ops.
  std::vector<FlowSpec> flows;
  // Where op `op` of position `p` came from, for messages about imported plans ("gpu 2 tb 1 step
  // 3 (line 40)"); empty for built-in plans, whose ops are named by rank, index and tag.
  std::function<std::string(int p, uint32_t op)> origin;

  int size() const {
    return rotation > 0             ? rotation
           : symmetry.positions > 0 ? symmetry.positions
                                    : static_cast<int>(ranks.size());
  }
  // Whether position 0's plan stands for every position (rotational or symmetric).
  bool held_once() const { return rotation > 0 || symmetry.positions > 0; }
  // Blocks per chunk of a rank's buffer `b` (0 for the relay).
  uint32_t blocks_in(Buffer b) const {
    return b == Buffer::Input     ? input_blocks
           : b == Buffer::Output  ? output_blocks
           : b == Buffer::Scratch ? scratch_blocks
                                  : 0;
  }
  // Block j of buffer `b` of chunk `chunk` as position p's op names it, as an absolute index: a
  // rotational plan shifts it by the position, a symmetric one moves its digits (relays are op
  // indices and do not move; a symmetric plan's buffers of one rank's share hold one block).
  uint32_t absolute_block(int p, Buffer b, uint32_t chunk, uint32_t j) const {
    const uint32_t size = blocks_in(b);
    if (size == 0) return j;
    if (rotation > 0) return static_cast<uint32_t>((uint64_t{j} + static_cast<uint64_t>(p)) % size);
    if (symmetry.positions > 0 && size == blocks_per_chunk) return symmetry.move_block(p, chunk, j);
    return j;
  }
  // absolute_block of each of `blocks` (indices into buffer `b` of chunk `chunk`), in place.
  void absolute_blocks(int p, Buffer b, uint32_t chunk, std::vector<uint32_t>& blocks) const {
    if (rotation == 0 && symmetry.positions > 0 && blocks_in(b) == blocks_per_chunk)
      symmetry.move_blocks(p, chunk, blocks);
    else
      for (uint32_t& j : blocks) j = absolute_block(p, b, chunk, j);
  }
  // The first block, as an absolute index, of the `count` blocks from `first` that position p's op
  // names in buffer `b` of chunk `chunk`: where a file that names ranges by their start (MSCCL XML,
  // a Chakra graph) puts them. Throws std::logic_error when a symmetric plan's range does not stay
  // in a row once moved (its plans' ranges do).
  uint32_t absolute_first(int p, Buffer b, uint32_t chunk, uint32_t first, uint32_t count) const;
  // The bytes op k of position p moves (or, for Compute, its picoseconds): Op::bytes, or in a
  // symmetric plan of uneven blocks the size of the blocks the op names at p.
  uint64_t bytes_of(int p, uint32_t k) const {
    return symmetry.uneven_chunk_bytes.empty() ? of(p).ops[k].bytes : moved_bytes(p, k);
  }
  // The ops position `p` runs, and the position its op `op` exchanges with.
  const RankPlan& of(int p) const { return held_once() ? ranks[0] : ranks[p]; }
  int peer_of(int p, const Op& op) const {
    return rotation > 0             ? (p + op.peer) % rotation
           : symmetry.positions > 0 ? symmetry.move(p, op.peer)
                                    : op.peer;
  }
  // Total bytes sent by all ranks (for traffic accounting and tests).
  uint64_t bytes_sent() const;
  // Validates the plan, then fills every RankPlan's children.
  void finish();
  // Checks the plan is executable: deps point backwards inside the rank, every Send has exactly one
  // Recv with the same (sender, receiver, tag) and size, every flow has inputs and outputs and one
  // Flow op of one size at each member and none elsewhere. Throws std::logic_error describing the
  // first problem.
  void validate() const;

 private:
  uint64_t moved_bytes(int p, uint32_t k) const;
  void validate_flows() const;
};

}  // namespace wafersim::collectives
