#pragma once
// Collective algorithms as Chakra graphs (../shared/FORMATS.md, "Collective algorithms as Chakra
// graphs"): one file per rank, `<prefix>.<i>.et`, of COMM_SEND / COMM_RECV / COMP nodes ordered by
// their dependencies. Reading turns them into a Plan; writing turns any plan into them.
//
// Ops and nodes: Send <-> COMM_SEND (comm_dst, comm_size, comm_tag); Recv <-> COMM_RECV (comm_src,
// comm_size, comm_tag); Reduce <-> COMP with tensor_size (bytes combined); Copy <-> MEM_STORE with
// tensor_size; Compute <-> COMP with a duration; Nop <-> COMP with neither. The k-th send from a
// to b with tag t meets b's k-th receive from a with tag t (in dependency order, ties by node id).
// wafersim writes what each op moves in a `wafersim_data` attribute and the plan's data shape in
// the metadata (`wafersim_plan`), so its own graphs read back into the same plan and can be proved
// by the symbolic executor; graphs from other tools carry no data and are checked only for running
// to the end (no deadlock, every message received).
#include <string>

#include "models/collectives/algorithms.h"
#include "models/collectives/plan.h"

namespace wafersim::tb {

struct ChakraCollective {
  collectives::Plan plan;
  // The collective the graph says it computes (Custom when it does not say: graphs of other tools).
  collectives::Collective collective = collectives::Collective::Custom;
  bool data_known = false;  // every op names its data (a graph wafersim wrote)
};

// Reads `<prefix>.0.et`, `<prefix>.1.et`, ... (as many as exist). Throws InputError naming the
// file, the node and the problem.
ChakraCollective read_chakra_collective(const std::string& prefix);

// Writes one file per position of `plan`, `<prefix>.<i>.et`.
void write_chakra_collective(const collectives::Plan& plan, collectives::Collective collective,
                             const std::string& prefix);

}  // namespace wafersim::tb
