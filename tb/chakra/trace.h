#pragma once
// In-memory form of one rank's Chakra execution trace, independent of the protobuf classes so that
// the replay never touches the wire format. Attributes are already resolved by name
// (docs/formats.md).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace wafersim::chakra {

enum class NodeKind : int {
  Invalid = 0,
  Metadata = 1,
  MemLoad = 2,
  MemStore = 3,
  Compute = 4,
  Send = 5,
  Recv = 6,
  Collective = 7,
};

// Values of Chakra's CollectiveCommType.
enum class CollectiveKind : int {
  AllReduce = 0,
  Reduce = 1,
  AllGather = 2,
  Gather = 3,
  Scatter = 4,
  Broadcast = 5,
  AllToAll = 6,
  ReduceScatter = 7,
  ReduceScatterBlock = 8,
  Barrier = 9,
};

const char* to_string(NodeKind kind);
const char* to_string(CollectiveKind kind);

// A COMP node for the sparse unit, in wafersim's attributes (docs/sparse.md), as written; checked
// when read (tb/chakra/sparse_node.h).
struct SparseAttrs {
  std::string op;                   // sparse_op: convert, spmv, spmm
  std::string in_format;            // sparse_in_format: a format or auto
  std::string out_format;           // sparse_out_format (convert): a format or auto
  uint64_t rows = 0;                // sparse_rows
  uint64_t cols = 0;                // sparse_cols
  std::optional<double> density;    // sparse_density, or
  std::optional<uint64_t> nnz;      // sparse_nnz
  uint64_t n = 0;                   // sparse_n: SpMM's B columns
  std::string b_format;             // sparse_b_format: SpMM with a sparse B
  std::optional<double> b_density;  // sparse_b_density
  int64_t value_bytes = 4;          // sparse_value_bytes
  int64_t index_bytes = 4;          // sparse_index_bytes
};

struct TraceNode {
  uint64_t id = 0;
  std::string name;
  NodeKind kind = NodeKind::Invalid;
  std::vector<uint64_t> data_deps;
  std::vector<uint64_t> ctrl_deps;
  uint64_t duration_micros = 0;
  bool is_cpu_op = false;
  std::optional<uint64_t> num_ops;      // COMP: operations, for roofline
  std::optional<uint64_t> tensor_size;  // COMP / MEM: bytes (or elements, see size unit)
  std::optional<uint64_t> comm_size;    // COLL / SEND / RECV: bytes (or elements)
  std::optional<int64_t> comm_type;     // COLL: a CollectiveKind value
  std::optional<int64_t> comm_src;
  std::optional<int64_t> comm_dst;
  std::optional<int64_t> comm_tag;
  std::optional<int64_t> root;  // COLL broadcast / reduce: the root's position in the communicator
  int64_t comm_priority = 0;
  std::string pg_name;
  std::string inputs_values;  // free-form; PyTorch captures keep process groups here
  // A collective-graph node written by wafersim: what it moves (collectives::DataRef as chunk,
  // src buffer, src first, dst buffer, dst first, count, reduce), in the attribute wafersim_data.
  std::vector<int64_t> data_ref;
  std::optional<SparseAttrs> sparse;  // sparse_* attributes: runs on the NPU's sparse unit
};

struct Trace {
  std::string file;
  std::string version;
  // A collective graph written by wafersim: its plan's data shape (GlobalMetadata attribute
  // wafersim_plan: collective, chunks, blocks per chunk, input, output and scratch blocks, in
  // place).
  std::vector<int64_t> plan_shape;
  std::vector<TraceNode> nodes;
};

// Reads one `.et` file (plain or gzip). Throws InputError naming the file and node on bad input.
Trace read_trace(const std::string& path);

// Writes a trace in the same format (version "1.0.0"), readable by Chakra and ASTRA-sim.
void write_trace(const std::string& path, const Trace& trace);

}  // namespace wafersim::chakra
