// Chakra ET reader and writer: a varint length before each message, GlobalMetadata first, then
// Nodes.
#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <unistd.h>

#include <fstream>
#include <memory>

#include "et_def.pb.h"
#include "models/common/error.h"
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

// Producers disagree on the integer member used for one attribute: accept any of them.
std::optional<int64_t> integer_value(const pb::AttributeProto& a) {
  switch (a.value_case()) {
    case pb::AttributeProto::kInt32Val:
      return a.int32_val();
    case pb::AttributeProto::kInt64Val:
      return a.int64_val();
    case pb::AttributeProto::kUint32Val:
      return a.uint32_val();
    case pb::AttributeProto::kUint64Val:
      return static_cast<int64_t>(a.uint64_val());
    case pb::AttributeProto::kSint32Val:
      return a.sint32_val();
    case pb::AttributeProto::kSint64Val:
      return a.sint64_val();
    case pb::AttributeProto::kFixed32Val:
      return a.fixed32_val();
    case pb::AttributeProto::kFixed64Val:
      return static_cast<int64_t>(a.fixed64_val());
    case pb::AttributeProto::kSfixed32Val:
      return a.sfixed32_val();
    case pb::AttributeProto::kSfixed64Val:
      return a.sfixed64_val();
    case pb::AttributeProto::kBoolVal:
      return a.bool_val() ? 1 : 0;
    case pb::AttributeProto::kDoubleVal:
      return static_cast<int64_t>(a.double_val());
    case pb::AttributeProto::kFloatVal:
      return static_cast<int64_t>(a.float_val());
    case pb::AttributeProto::kStringVal: {
      try {
        return std::stoll(a.string_val());
      } catch (...) {
        return std::nullopt;
      }
    }
    default:
      return std::nullopt;
  }
}

std::string string_value(const pb::AttributeProto& a) {
  if (a.value_case() == pb::AttributeProto::kStringVal) return a.string_val();
  if (auto v = integer_value(a)) return std::to_string(*v);
  return "";
}

std::optional<uint64_t> non_negative(const std::string& file, const pb::Node& n,
                                     const pb::AttributeProto& a) {
  auto v = integer_value(a);
  if (v && *v < 0)
    throw InputError(file, "node " + std::to_string(n.id()) + " attribute " + a.name(),
                     "negative value " + std::to_string(*v));
  if (!v) return std::nullopt;
  return static_cast<uint64_t>(*v);
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
    if (name == "is_cpu_op") {
      t.is_cpu_op = integer_value(a).value_or(0) != 0;
    } else if (name == "num_ops") {
      t.num_ops = non_negative(file, n, a);
    } else if (name == "tensor_size") {
      t.tensor_size = non_negative(file, n, a);
    } else if (name == "comm_size") {
      t.comm_size = non_negative(file, n, a);
    } else if (name == "comm_type") {
      t.comm_type = integer_value(a);
    } else if (name == "comm_src") {
      t.comm_src = integer_value(a);
    } else if (name == "comm_dst") {
      t.comm_dst = integer_value(a);
    } else if (name == "comm_tag") {
      t.comm_tag = integer_value(a);
    } else if (name == "comm_priority") {
      t.comm_priority = integer_value(a).value_or(0);
    } else if (name == "pg_name") {
      t.pg_name = string_value(a);
    }
  }
  return t;
}

bool is_gzip(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char magic[2] = {0, 0};
  in.read(reinterpret_cast<char*>(magic), 2);
  return in.gcount() == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

// Reads one length-delimited message; false at a clean end of file.
template <typename Message>
bool read_delimited(io::ZeroCopyInputStream* raw, Message* msg, const std::string& file,
                    const std::string& what) {
  io::CodedInputStream in(raw);
  uint32_t size = 0;
  if (!in.ReadVarint32(&size)) {
    // No bytes at all is a clean end; a partial varint is truncation.
    const void* data;
    int n;
    if (!in.GetDirectBufferPointer(&data, &n)) return false;
    throw InputError(file, what, "malformed length prefix");
  }
  auto limit = in.PushLimit(static_cast<int>(size));
  bool parsed = msg->ParseFromCodedStream(&in);
  if (in.BytesUntilLimit() > 0)
    throw InputError(file, what,
                     "file ends inside a message (" + std::to_string(size) + " bytes declared)");
  if (!parsed || !in.ConsumedEntireMessage())
    throw InputError(file, what, "malformed message (" + std::to_string(size) + " bytes)");
  in.PopLimit(limit);
  return true;
}

}  // namespace

Trace read_trace(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw InputError(path, "", "cannot open file");
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  io::FileInputStream file_stream(fd);
  std::unique_ptr<io::GzipInputStream> gzip;
  io::ZeroCopyInputStream* raw = &file_stream;
  if (is_gzip(path)) {
    gzip = std::make_unique<io::GzipInputStream>(&file_stream, io::GzipInputStream::GZIP);
    raw = gzip.get();
  }

  Trace trace;
  trace.file = path;
  pb::GlobalMetadata meta;
  if (!read_delimited(raw, &meta, path, "global metadata"))
    throw InputError(path, "global metadata", "empty file: no GlobalMetadata message");
  trace.version = meta.version();
  for (const auto& a : meta.attr())
    if (a.name() == "schema" && trace.version.empty()) trace.version = string_value(a);

  pb::Node node;
  for (size_t index = 0;; ++index) {
    node.Clear();
    std::string what = "node #" + std::to_string(index) + " (after " +
                       (trace.nodes.empty() ? std::string("metadata")
                                            : "node id " + std::to_string(trace.nodes.back().id)) +
                       ")";
    if (!read_delimited(raw, &node, path, what)) break;
    trace.nodes.push_back(convert(path, node));
  }
  if (gzip && gzip->ZlibErrorCode() < 0)
    throw InputError(path, "",
                     std::string("gzip stream error: ") +
                         (gzip->ZlibErrorMessage() ? gzip->ZlibErrorMessage() : "?"));
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
      if (t.comm_priority) add_int(&n, "comm_priority", t.comm_priority);
      if (!t.pg_name.empty()) {
        auto* a = n.add_attr();
        a->set_name("pg_name");
        a->set_string_val(t.pg_name);
      }
      write_delimited(&raw, n);
    }
  }
  if (!file) throw InputError(path, "", "write failed");
}

}  // namespace wafersim::chakra
