// Chakra ET reader and writer: a varint length before each message, GlobalMetadata first, then
// Nodes.
#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/stubs/logging.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>

#include "et_def.pb.h"
#include "models/common/error.h"
#include "tb/chakra/sparse_node.h"
#include "tb/chakra/trace.h"

namespace wafersim::chakra {

namespace pb = ChakraProtoMsg;
namespace io = google::protobuf::io;

const char* to_string(NodeKind kind) {
  switch (kind) {
    case NodeKind::Invalid:
      return "INVALID_NODE";
    case NodeKind::Metadata:
      return "METADATA_NODE";
    case NodeKind::MemLoad:
      return "MEM_LOAD_NODE";
    case NodeKind::MemStore:
      return "MEM_STORE_NODE";
    case NodeKind::Compute:
      return "COMP_NODE";
    case NodeKind::Send:
      return "COMM_SEND_NODE";
    case NodeKind::Recv:
      return "COMM_RECV_NODE";
    case NodeKind::Collective:
      return "COMM_COLL_NODE";
  }
  return "unknown";
}

const char* to_string(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::AllReduce:
      return "ALL_REDUCE";
    case CollectiveKind::Reduce:
      return "REDUCE";
    case CollectiveKind::AllGather:
      return "ALL_GATHER";
    case CollectiveKind::Gather:
      return "GATHER";
    case CollectiveKind::Scatter:
      return "SCATTER";
    case CollectiveKind::Broadcast:
      return "BROADCAST";
    case CollectiveKind::AllToAll:
      return "ALL_TO_ALL";
    case CollectiveKind::ReduceScatter:
      return "REDUCE_SCATTER";
    case CollectiveKind::ReduceScatterBlock:
      return "REDUCE_SCATTER_BLOCK";
    case CollectiveKind::Barrier:
      return "BARRIER";
  }
  return "unknown";
}

namespace {

// Producers disagree on the integer member used for one attribute: accept any of them, as long as
// it holds a whole number (a string must be one entirely, a double one without a fraction).
std::optional<int64_t> integer_value(const pb::AttributeProto& a) {
  switch (a.value_case()) {
    case pb::AttributeProto::kInt32Val:
      return a.int32_val();
    case pb::AttributeProto::kInt64Val:
      return a.int64_val();
    case pb::AttributeProto::kUint32Val:
      return a.uint32_val();
    case pb::AttributeProto::kUint64Val:
      if (a.uint64_val() > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
      return static_cast<int64_t>(a.uint64_val());
    case pb::AttributeProto::kSint32Val:
      return a.sint32_val();
    case pb::AttributeProto::kSint64Val:
      return a.sint64_val();
    case pb::AttributeProto::kFixed32Val:
      return a.fixed32_val();
    case pb::AttributeProto::kFixed64Val:
      if (a.fixed64_val() > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
      return static_cast<int64_t>(a.fixed64_val());
    case pb::AttributeProto::kSfixed32Val:
      return a.sfixed32_val();
    case pb::AttributeProto::kSfixed64Val:
      return a.sfixed64_val();
    case pb::AttributeProto::kBoolVal:
      return a.bool_val() ? 1 : 0;
    case pb::AttributeProto::kDoubleVal:
    case pb::AttributeProto::kFloatVal: {
      const double d =
          a.value_case() == pb::AttributeProto::kDoubleVal ? a.double_val() : a.float_val();
      if (!(d >= -9.2e18 && d <= 9.2e18) || d != std::floor(d)) return std::nullopt;
      return static_cast<int64_t>(d);
    }
    case pb::AttributeProto::kStringVal: {
      const std::string& text = a.string_val();
      errno = 0;
      char* end = nullptr;
      const long long v = std::strtoll(text.c_str(), &end, 10);
      if (text.empty() || errno != 0 || *end != '\0') return std::nullopt;
      return v;
    }
    default:
      return std::nullopt;
  }
}

std::string attribute_item(const pb::Node& n, const pb::AttributeProto& a) {
  return "node " + std::to_string(n.id()) + " attribute " + a.name();
}

std::string string_value(const pb::AttributeProto& a) {
  if (a.value_case() == pb::AttributeProto::kStringVal) return a.string_val();
  if (auto v = integer_value(a)) return std::to_string(*v);
  return "";
}

// An integer attribute the replay uses: present means readable, or it is an error.
int64_t integer(const std::string& file, const pb::Node& n, const pb::AttributeProto& a) {
  if (auto v = integer_value(a)) return *v;
  std::string shown = a.value_case() == pb::AttributeProto::kStringVal
                          ? "the string '" + a.string_val() + "'"
                          : "a value that is not a whole number in 64 bits";
  throw InputError(file, attribute_item(n, a), "expected a whole number, got " + shown);
}

uint64_t non_negative(const std::string& file, const pb::Node& n, const pb::AttributeProto& a) {
  // Unsigned members may use all 64 bits.
  if (a.value_case() == pb::AttributeProto::kUint64Val) return a.uint64_val();
  if (a.value_case() == pb::AttributeProto::kFixed64Val) return a.fixed64_val();
  const int64_t v = integer(file, n, a);
  if (v < 0) throw InputError(file, attribute_item(n, a), "negative value " + std::to_string(v));
  return static_cast<uint64_t>(v);
}

double real(const std::string& file, const pb::Node& n, const pb::AttributeProto& a) {
  if (a.value_case() == pb::AttributeProto::kDoubleVal) return a.double_val();
  if (a.value_case() == pb::AttributeProto::kFloatVal) return a.float_val();
  if (auto v = integer_value(a)) return static_cast<double>(*v);
  throw InputError(file, attribute_item(n, a), "expected a number");
}

// The sparse_* attributes (docs/sparse.md); false when the name is not one of them.
bool read_sparse_attribute(const std::string& file, const pb::Node& n, const pb::AttributeProto& a,
                           TraceNode& t) {
  const std::string& name = a.name();
  if (name.rfind("sparse_", 0) != 0) return false;
  SparseAttrs& s = t.sparse ? *t.sparse : t.sparse.emplace();
  if (name == "sparse_op")
    s.op = string_value(a);
  else if (name == "sparse_in_format")
    s.in_format = string_value(a);
  else if (name == "sparse_out_format")
    s.out_format = string_value(a);
  else if (name == "sparse_b_format")
    s.b_format = string_value(a);
  else if (name == "sparse_rows")
    s.rows = non_negative(file, n, a);
  else if (name == "sparse_cols")
    s.cols = non_negative(file, n, a);
  else if (name == "sparse_nnz")
    s.nnz = non_negative(file, n, a);
  else if (name == "sparse_n")
    s.n = non_negative(file, n, a);
  else if (name == "sparse_density")
    s.density = real(file, n, a);
  else if (name == "sparse_b_density")
    s.b_density = real(file, n, a);
  else if (name == "sparse_value_bytes")
    s.value_bytes = integer(file, n, a);
  else if (name == "sparse_index_bytes")
    s.index_bytes = integer(file, n, a);
  else
    throw InputError(file, attribute_item(n, a),
                     "unknown sparse attribute (known: sparse_op, sparse_in_format, "
                     "sparse_out_format, sparse_rows, sparse_cols, sparse_density, sparse_nnz, "
                     "sparse_n, sparse_b_format, sparse_b_density, sparse_value_bytes, "
                     "sparse_index_bytes)");
  return true;
}

TraceNode convert(const std::string& file, const pb::Node& n) {
  TraceNode t;
  t.id = n.id();
  t.name = n.name();
  int type = static_cast<int>(n.type());
  if (type < 0 || type > static_cast<int>(NodeKind::Collective))
    throw InputError(file, "node " + std::to_string(n.id()),
                     "unknown node type " + std::to_string(type));
  t.kind = static_cast<NodeKind>(type);
  t.data_deps.assign(n.data_deps().begin(), n.data_deps().end());
  t.ctrl_deps.assign(n.ctrl_deps().begin(), n.ctrl_deps().end());
  t.duration_micros = n.duration_micros();
  t.inputs_values = n.inputs().values();
  for (const auto& a : n.attr()) {
    const std::string& name = a.name();
    if (read_sparse_attribute(file, n, a, t)) continue;
    if (name == "is_cpu_op") {
      t.is_cpu_op = integer(file, n, a) != 0;
    } else if (name == "num_ops") {
      t.num_ops = non_negative(file, n, a);
    } else if (name == "tensor_size") {
      t.tensor_size = non_negative(file, n, a);
    } else if (name == "comm_size") {
      t.comm_size = non_negative(file, n, a);
    } else if (name == "comm_type") {
      t.comm_type = integer(file, n, a);
    } else if (name == "comm_src") {
      t.comm_src = integer(file, n, a);
    } else if (name == "comm_dst") {
      t.comm_dst = integer(file, n, a);
    } else if (name == "comm_tag") {
      t.comm_tag = integer(file, n, a);
    } else if (name == "root") {
      t.root = integer(file, n, a);
    } else if (name == "comm_priority") {
      t.comm_priority = integer(file, n, a);
    } else if (name == "pg_name") {
      t.pg_name = string_value(a);
    } else if (name == "wafersim_data") {
      if (a.value_case() != pb::AttributeProto::kInt64List)
        throw InputError(file, attribute_item(n, a), "expected a list of 64-bit integers");
      t.data_ref.assign(a.int64_list().values().begin(), a.int64_list().values().end());
    }
  }
  if (t.sparse) check_sparse(file, t);
  return t;
}

bool is_gzip(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char magic[2] = {0, 0};
  in.read(reinterpret_cast<char*>(magic), 2);
  return in.gcount() == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

// The stream of length-delimited messages of one file, plain or gzip.
class DelimitedReader {
 public:
  DelimitedReader(const std::string& path, int fd) : path_(path), file_(fd) {
    struct stat st {};
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) file_bytes_ = static_cast<uint64_t>(st.st_size);
    if (is_gzip(path)) {
      gzip_ = std::make_unique<io::GzipInputStream>(&file_, io::GzipInputStream::GZIP);
      file_bytes_ = 0;  // unknown until decompressed
    }
  }

  // Reads one message; false at a clean end of the stream.
  template <typename Message>
  bool read(Message* msg, const std::string& what) {
    io::ZeroCopyInputStream* raw = stream();
    const uint64_t start = static_cast<uint64_t>(raw->ByteCount());
    io::CodedInputStream in(raw);
    // No bytes at all is a clean end; a partial varint is truncation.
    const void* data;
    int available;
    if (!in.GetDirectBufferPointer(&data, &available)) {
      fail_on_stream_error(what);
      return false;
    }
    uint64_t size = 0;
    if (!in.ReadVarint64(&size)) {
      fail_on_stream_error(what);
      throw InputError(path_, what, "malformed length prefix (the file ends inside it)");
    }
    const uint64_t at = start + static_cast<uint64_t>(in.CurrentPosition());
    const uint64_t left = file_bytes_ > at ? file_bytes_ - at : 0;
    if ((file_bytes_ > 0 && size > left) || size > static_cast<uint64_t>(INT32_MAX))
      throw InputError(path_, what,
                       "file ends inside a message: its length prefix declares " +
                           std::to_string(size) + " bytes but " +
                           (file_bytes_ > 0 ? "only " + std::to_string(left) + " are left"
                                            : std::string("a message holds at most 2 GiB")));
    auto limit = in.PushLimit(static_cast<int>(size));
    bool parsed = msg->ParseFromCodedStream(&in);
    if (in.BytesUntilLimit() > 0) {
      fail_on_stream_error(what);
      throw InputError(path_, what,
                       "file ends inside a message (" + std::to_string(size) + " bytes declared)");
    }
    if (!parsed || !in.ConsumedEntireMessage())
      throw InputError(path_, what, "malformed message (" + std::to_string(size) + " bytes)");
    in.PopLimit(limit);
    return true;
  }

  void fail_on_stream_error(const std::string& what) const {
    if (gzip_ && gzip_->ZlibErrorCode() < 0)
      throw InputError(path_, what,
                       std::string("damaged gzip stream (") +
                           (gzip_->ZlibErrorMessage() ? gzip_->ZlibErrorMessage() : "zlib error") +
                           ")");
  }

 private:
  io::ZeroCopyInputStream* stream() {
    return gzip_ ? static_cast<io::ZeroCopyInputStream*>(gzip_.get()) : &file_;
  }

  std::string path_;
  io::FileInputStream file_;
  std::unique_ptr<io::GzipInputStream> gzip_;
  uint64_t file_bytes_ = 0;  // 0: unknown
};

}  // namespace

Trace read_trace(const std::string& path) {
  // protobuf logs what it dislikes (invalid UTF-8 in a string, say) on stderr itself; the reader
  // reports every problem as an InputError instead.
  static const bool quiet = (google::protobuf::SetLogHandler(nullptr), true);
  (void)quiet;
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw InputError(path, "", std::string("cannot open file: ") + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))
    throw InputError(path, "", "is a folder, not a trace file");
  DelimitedReader reader(path, fd);

  Trace trace;
  trace.file = path;
  pb::GlobalMetadata meta;
  if (!reader.read(&meta, "global metadata"))
    throw InputError(path, "global metadata", "empty file: no GlobalMetadata message");
  trace.version = meta.version();
  for (const auto& a : meta.attr()) {
    if (a.name() == "schema" && trace.version.empty()) trace.version = string_value(a);
    if (a.name() == "wafersim_plan" && a.value_case() == pb::AttributeProto::kInt64List)
      trace.plan_shape.assign(a.int64_list().values().begin(), a.int64_list().values().end());
  }

  pb::Node node;
  for (size_t index = 0;; ++index) {
    node.Clear();
    std::string what = "node #" + std::to_string(index) + " (after " +
                       (trace.nodes.empty() ? std::string("metadata")
                                            : "node id " + std::to_string(trace.nodes.back().id)) +
                       ")";
    if (!reader.read(&node, what)) break;
    trace.nodes.push_back(convert(path, node));
  }
  reader.fail_on_stream_error("end of file");
  return trace;
}

namespace {

void add_int(pb::Node* n, const char* name, int64_t v) {
  auto* a = n->add_attr();
  a->set_name(name);
  a->set_int64_val(v);
}

void add_uint(pb::Node* n, const char* name, uint64_t v) {
  auto* a = n->add_attr();
  a->set_name(name);
  a->set_uint64_val(v);
}

void add_string(pb::Node* n, const char* name, const std::string& v) {
  auto* a = n->add_attr();
  a->set_name(name);
  a->set_string_val(v);
}

void add_double(pb::Node* n, const char* name, double v) {
  auto* a = n->add_attr();
  a->set_name(name);
  a->set_double_val(v);
}

void add_sparse(pb::Node* n, const SparseAttrs& s) {
  add_string(n, "sparse_op", s.op);
  add_string(n, "sparse_in_format", s.in_format);
  if (!s.out_format.empty()) add_string(n, "sparse_out_format", s.out_format);
  add_uint(n, "sparse_rows", s.rows);
  add_uint(n, "sparse_cols", s.cols);
  if (s.density) add_double(n, "sparse_density", *s.density);
  if (s.nnz) add_uint(n, "sparse_nnz", *s.nnz);
  if (s.n) add_uint(n, "sparse_n", s.n);
  if (!s.b_format.empty()) add_string(n, "sparse_b_format", s.b_format);
  if (s.b_density) add_double(n, "sparse_b_density", *s.b_density);
  add_int(n, "sparse_value_bytes", s.value_bytes);
  add_int(n, "sparse_index_bytes", s.index_bytes);
}

template <typename Message>
void write_delimited(io::ZeroCopyOutputStream* raw, const Message& msg) {
  io::CodedOutputStream out(raw);
  out.WriteVarint32(static_cast<uint32_t>(msg.ByteSizeLong()));
  msg.SerializeWithCachedSizes(&out);
}

}  // namespace

void write_trace(const std::string& path, const Trace& trace) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) throw InputError(path, "", "cannot create file");
  {
    io::OstreamOutputStream raw(&file);
    pb::GlobalMetadata meta;
    meta.set_version(trace.version.empty() ? "1.0.0" : trace.version);
    if (!trace.plan_shape.empty()) {
      auto* a = meta.add_attr();
      a->set_name("wafersim_plan");
      for (int64_t v : trace.plan_shape) a->mutable_int64_list()->add_values(v);
    }
    write_delimited(&raw, meta);
    for (const TraceNode& t : trace.nodes) {
      pb::Node n;
      n.set_id(t.id);
      n.set_name(t.name);
      n.set_type(static_cast<pb::NodeType>(t.kind));
      for (auto d : t.data_deps) n.add_data_deps(d);
      for (auto d : t.ctrl_deps) n.add_ctrl_deps(d);
      n.set_duration_micros(t.duration_micros);
      if (!t.inputs_values.empty()) n.mutable_inputs()->set_values(t.inputs_values);
      auto* cpu = n.add_attr();
      cpu->set_name("is_cpu_op");
      cpu->set_bool_val(t.is_cpu_op);
      if (t.num_ops) add_uint(&n, "num_ops", *t.num_ops);
      if (t.tensor_size) add_uint(&n, "tensor_size", *t.tensor_size);
      if (t.comm_type) add_int(&n, "comm_type", *t.comm_type);
      if (t.comm_size) add_uint(&n, "comm_size", *t.comm_size);
      if (t.comm_src) add_int(&n, "comm_src", *t.comm_src);
      if (t.comm_dst) add_int(&n, "comm_dst", *t.comm_dst);
      if (t.comm_tag) add_int(&n, "comm_tag", *t.comm_tag);
      if (t.root) add_int(&n, "root", *t.root);
      if (t.comm_priority) add_int(&n, "comm_priority", t.comm_priority);
      if (!t.pg_name.empty()) {
        auto* a = n.add_attr();
        a->set_name("pg_name");
        a->set_string_val(t.pg_name);
      }
      if (t.sparse) add_sparse(&n, *t.sparse);
      if (!t.data_ref.empty()) {
        auto* a = n.add_attr();
        a->set_name("wafersim_data");
        for (int64_t v : t.data_ref) a->mutable_int64_list()->add_values(v);
      }
      write_delimited(&raw, n);
    }
  }
  if (!file) throw InputError(path, "", "write failed");
}

}  // namespace wafersim::chakra
