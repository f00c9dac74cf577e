#pragma once
// MSCCL-IR (../shared/FORMATS.md, "MSCCL XML"): the algorithm as MSCCL writes it, GPUs holding
// thread blocks holding serial steps, and its translation into a Plan. tb/collectives reads and
// writes the XML; this file owns the meaning, so the rules hold whatever the XML reader.
//
// Translation (docs/collectives.md): a thread block's steps run in order, and a step also waits on
// step `deps` of thread block `depid`. Each step becomes one to three plan ops:
//   s -> Send          r -> Recv          cpy -> Copy        re -> Reduce (dst += src)
//   rrc -> Recv combining src into dst (a combining Recv also takes the reduction engine's time)
//   rcs -> Recv into dst, then Send of dst
//   rrs -> Recv combining src into a relay, then Send of the relay (dst untouched)
//   rrcs -> Recv combining src into dst, then Send of dst
//   nop -> Nop
// The k-th sending step of a thread block with send = b on channel c meets the k-th receiving step
// of b's thread block with recv = a on channel c; the pair gets tag (c << 16) | k.
#include <cstdint>
#include <string>
#include <vector>

#include "models/collectives/algorithms.h"
#include "models/collectives/plan.h"

namespace wafersim::collectives::msccl {

struct Step {
  int s = 0;
  std::string type;
  char srcbuf = 'i', dstbuf = 'o';
  int64_t srcoff = 0, dstoff = 0, cnt = 0;
  int depid = -1, deps = -1;
  bool hasdep = false;
  int line = 0;  // where it was read, for messages (0: not from a file)
};

struct ThreadBlock {
  int id = 0;
  int send = -1, recv = -1, chan = 0;
  std::vector<Step> steps;
  int line = 0;
};

struct Gpu {
  int id = 0;
  int64_t i_chunks = 0, o_chunks = 0, s_chunks = 0;
  std::vector<ThreadBlock> tbs;
  int line = 0;
};

struct Algorithm {
  std::string name, proto = "Simple", coll;
  int ngpus = 0, nchannels = 1;
  int64_t nchunksperloop = 1;
  bool inplace = false;
  std::vector<Gpu> gpus;
  int line = 0;
};

// The collective of an MSCCL `coll` value (allreduce, allgather, reduce_scatter / reducescatter,
// alltoall, broadcast, reduce, custom); throws std::invalid_argument for others.
Collective collective_of(const std::string& coll);
// MSCCL's spelling of a collective.
std::string coll_name(Collective c);

// The plan of `algo` for a collective of `bytes` (Chakra's convention: all-gather's is each rank's
// input, the others' the whole buffer). Throws std::invalid_argument naming the gpu, thread block
// and step (and its line) of the first problem: a step type it does not know, a send without a
// send peer, an offset outside its buffer, a dependency on a step that does not exist, a cycle,
// sends and receives that do not pair up.
Plan to_plan(const Algorithm& algo, uint64_t bytes);

// `plan` as MSCCL-IR, for `collective` (Custom writes coll="custom"). Every op becomes one thread
// block of its own: its dependencies beyond the first are carried by nop steps before it (which
// to_plan folds back), and every message between two gpus has a channel of its own, so the
// file's pairing and ordering are exactly the plan's; to_plan of the result gives the same ops,
// sizes, data and dependencies (tags are renumbered). A relay becomes a scratch block. Throws
// std::invalid_argument for what MSCCL cannot say: several chunks (MSCCL runs one loop of the
// algorithm; build the plan with one dataset split), a compute op of fixed duration or a
// reduction's time without its data (from Chakra graphs), blocks that wrap around their buffer.
Algorithm from_plan(const Plan& plan, Collective collective, const std::string& name);

// Where a problem sits, for messages: "gpu 2 tb 1 step 3 (line 40)".
std::string place(const Gpu& gpu, const ThreadBlock& tb, const Step& step);

}  // namespace wafersim::collectives::msccl
