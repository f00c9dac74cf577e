#include "tests/bad_workloads.h"

#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "et_def.pb.h"
#include "tb/chakra/generator.h"
#include "tb/chakra/trace.h"

namespace wafersim::testing {

namespace {

using chakra::CollectiveKind;
using chakra::NodeKind;
using chakra::Trace;
using chakra::TraceNode;

constexpr int kRanks = 4;

std::string file_of(const std::string& prefix, int rank) {
  return prefix + "." + std::to_string(rank) + ".et";
}

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

void spit(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// The good workload every case starts from: a 1 MiB all-reduce on 4 ranks, then `edit` applied
// to every rank's trace.
void all_reduce(const std::string& prefix, const std::function<void(int, Trace&)>& edit = {}) {
  chakra::MicrobenchmarkSpec spec;
  spec.ranks = kRanks;
  spec.bytes = 1 << 20;
  chakra::write_microbenchmark(prefix, spec);
  if (!edit) return;
  for (int r = 0; r < kRanks; ++r) {
    Trace t = chakra::read_trace(file_of(prefix, r));
    edit(r, t);
    chakra::write_trace(file_of(prefix, r), t);
  }
}

// The same, with rank 2's collective node changed by `edit`.
void rank2(const std::string& prefix, const std::function<void(TraceNode&)>& edit) {
  all_reduce(prefix, [&](int r, Trace& t) {
    if (r == 2) edit(t.nodes.front());
  });
}

TraceNode node(uint64_t id, NodeKind kind, const std::string& name) {
  TraceNode n;
  n.id = id;
  n.kind = kind;
  n.name = name;
  return n;
}

// The all-reduce with a sparse COMP node (a CSR SpMV, 64x64 at 10%) on rank 2, changed by `edit`.
void sparse_on_rank2(const std::string& prefix,
                     const std::function<void(chakra::SparseAttrs&)>& edit) {
  all_reduce(prefix, [&](int r, Trace& t) {
    if (r != 2) return;
    TraceNode n = node(7, NodeKind::Compute, "spmv");
    chakra::SparseAttrs s;
    s.op = "spmv";
    s.in_format = "csr";
    s.rows = 64;
    s.cols = 64;
    s.density = 0.1;
    if (edit) edit(s);
    n.sparse = s;
    t.nodes.push_back(n);
  });
}

// A SEND to, or a RECV from, `peer`.
TraceNode point(NodeKind kind, uint64_t id, int peer, int64_t tag, uint64_t bytes) {
  const bool sends = kind == NodeKind::Send;
  TraceNode n = node(id, kind, (sends ? "send" : "recv") + std::to_string(id));
  (sends ? n.comm_dst : n.comm_src) = peer;
  n.comm_tag = tag;
  n.comm_size = bytes;
  return n;
}

TraceNode send(uint64_t id, int dst, int64_t tag, uint64_t bytes = 4096) {
  return point(NodeKind::Send, id, dst, tag, bytes);
}

TraceNode recv(uint64_t id, int src, int64_t tag, uint64_t bytes = 4096) {
  return point(NodeKind::Recv, id, src, tag, bytes);
}

// Point-to-point workloads: `nodes[r]` is rank r's trace.
void point_to_point(const std::string& prefix, const std::vector<std::vector<TraceNode>>& nodes) {
  for (int r = 0; r < kRanks; ++r) {
    Trace t;
    if (r < static_cast<int>(nodes.size())) t.nodes = nodes[r];
    chakra::write_trace(file_of(prefix, r), t);
  }
}

// A protobuf varint.
std::string varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  return out + static_cast<char>(v);
}

// Rank 2's file as raw bytes, changed by `edit`.
void raw_rank2(const std::string& prefix,
               const std::function<std::string(const std::string&)>& edit) {
  all_reduce(prefix);
  spit(file_of(prefix, 2), edit(slurp(file_of(prefix, 2))));
}

std::string gzip(const std::string& bytes) {
  z_stream z{};
  deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, bytes.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// Rank 2's collective with comm_size written as a protobuf string attribute (some converters do).
void comm_size_as_string(const std::string& prefix, const std::string& value) {
  all_reduce(prefix);
  namespace pb = ChakraProtoMsg;
  std::string bytes;
  {
    pb::GlobalMetadata meta;
    meta.set_version("1.0.0");
    pb::Node n;
    n.set_id(0);
    n.set_name("all_reduce");
    n.set_type(pb::COMM_COLL_NODE);
    auto* type = n.add_attr();
    type->set_name("comm_type");
    type->set_int64_val(0);
    auto* size = n.add_attr();
    size->set_name("comm_size");
    size->set_string_val(value);
    for (const google::protobuf::Message* m : {static_cast<google::protobuf::Message*>(&meta),
                                               static_cast<google::protobuf::Message*>(&n)}) {
      bytes += varint(m->ByteSizeLong());
      bytes += m->SerializeAsString();
    }
  }
  spit(file_of(prefix, 2), bytes);
}

const std::map<std::string, std::function<void(const std::string&)>>& generators() {
  static const std::map<std::string, std::function<void(const std::string&)>> table = {
      {"good", [](const std::string& p) { all_reduce(p); }},
      {"garbage",
       [](const std::string& p) {
         raw_rank2(p, [](const std::string&) {
           return std::string("\xff\xff\xff\xff\xff\xff not protobuf");
         });
       }},
      {"empty",
       [](const std::string& p) {
         raw_rank2(p, [](const std::string&) { return std::string(); });
       }},
      {"truncated",
       [](const std::string& p) {
         raw_rank2(p, [](const std::string& b) { return b.substr(0, b.size() - 5); });
       }},
      {"partial_varint",
       [](const std::string& p) { raw_rank2(p, [](const std::string& b) { return b + "\xff"; }); }},
      // A node's length prefix of 2^32 + 7: a 32-bit reader sees 7.
      {"prefix_2p32",
       [](const std::string& p) {
         raw_rank2(p, [](const std::string& b) {
           const size_t meta = static_cast<unsigned char>(b.data()[0]) + 1u;  // one-byte prefix
           return b.substr(0, meta) + varint((1ull << 32) + 7) + b.substr(meta + 1);
         });
       }},
      {"prefix_huge",
       [](const std::string& p) {
         raw_rank2(p, [](const std::string& b) { return varint(~0ull) + b; });
       }},
      {"gzip_damaged",
       [](const std::string& p) {
         raw_rank2(p, [](const std::string& b) {
           std::string z = gzip(b);
           for (size_t i = 12; i < z.size() - 8; i += 3) z[i] = static_cast<char>(z[i] ^ 0x5a);
           return z;
         });
       }},
      {"gzip_truncated",
       [](const std::string& p) {
         raw_rank2(p, [](const std::string& b) {
           std::string z = gzip(b);
           return z.substr(0, z.size() / 2);
         });
       }},
      {"etgz_names",  // legal: every rank as <prefix>.<rank>.et.gz
       [](const std::string& p) {
         all_reduce(p);
         for (int r = 0; r < kRanks; ++r) {
           spit(file_of(p, r) + ".gz", gzip(slurp(file_of(p, r))));
           std::filesystem::remove(file_of(p, r));
         }
       }},
      {"missing_rank3",
       [](const std::string& p) {
         all_reduce(p);
         std::filesystem::remove(file_of(p, 3));
       }},
      {"extra_rank4",
       [](const std::string& p) {
         all_reduce(p);
         std::filesystem::copy_file(file_of(p, 0), file_of(p, 4));
       }},
      {"rank_is_folder",
       [](const std::string& p) {
         all_reduce(p);
         std::filesystem::remove(file_of(p, 1));
         std::filesystem::create_directory(file_of(p, 1));
       }},
      {"comm_size_zero",
       [](const std::string& p) { rank2(p, [](TraceNode& n) { n.comm_size = 0; }); }},
      {"comm_size_missing",
       [](const std::string& p) { rank2(p, [](TraceNode& n) { n.comm_size.reset(); }); }},
      {"comm_type_missing",
       [](const std::string& p) { rank2(p, [](TraceNode& n) { n.comm_type.reset(); }); }},
      {"comm_type_77",
       [](const std::string& p) { rank2(p, [](TraceNode& n) { n.comm_type = 77; }); }},
      {"comm_type_negative",
       [](const std::string& p) { rank2(p, [](TraceNode& n) { n.comm_type = -3; }); }},
      {"gather_unsupported",
       [](const std::string& p) {
         all_reduce(p, [](int, Trace& t) { t.nodes.front().comm_type = 3; });
       }},
      {"duration_max",
       [](const std::string& p) {
         all_reduce(p, [](int, Trace& t) {
           TraceNode c = node(100, NodeKind::Compute, "forever");
           c.duration_micros = ~0ull;
           t.nodes.front().data_deps = {100};
           t.nodes.push_back(c);
         });
       }},
      // Legal: 1e11 us of compute (past 2^56 ps) before the collective.
      {"duration_1e11us",
       [](const std::string& p) {
         all_reduce(p, [](int, Trace& t) {
           TraceNode c = node(100, NodeKind::Compute, "long");
           c.duration_micros = 100000000000ull;
           t.nodes.front().data_deps = {100};
           t.nodes.push_back(c);
         });
       }},
      // Each duration fits, their sum does not: 2 x 1e13 us is past 2^64 ps.
      {"durations_overflow",
       [](const std::string& p) {
         all_reduce(p, [](int, Trace& t) {
           TraceNode a = node(100, NodeKind::Compute, "first");
           TraceNode b = node(101, NodeKind::Compute, "second");
           a.duration_micros = b.duration_micros = 10000000000000ull;
           b.data_deps = {100};
           t.nodes.front().data_deps = {101};
           t.nodes.push_back(a);
           t.nodes.push_back(b);
         });
       }},
      {"dep_missing",
       [](const std::string& p) { rank2(p, [](TraceNode& n) { n.data_deps = {42}; }); }},
      {"ctrl_dep_missing",
       [](const std::string& p) { rank2(p, [](TraceNode& n) { n.ctrl_deps = {43}; }); }},
      {"dep_cycle",
       [](const std::string& p) {
         all_reduce(p, [](int r, Trace& t) {
           if (r != 2) return;
           TraceNode c = node(100, NodeKind::Compute, "c");
           c.duration_micros = 1;
           c.data_deps = {t.nodes.front().id};
           t.nodes.front().data_deps = {100};
           t.nodes.push_back(c);
         });
       }},
      {"duplicate_id",
       [](const std::string& p) {
         all_reduce(p, [](int r, Trace& t) {
           if (r == 2) t.nodes.push_back(t.nodes.front());
         });
       }},
      {"invalid_node_type",
       [](const std::string& p) {
         all_reduce(p, [](int r, Trace& t) {
           if (r == 2) t.nodes.push_back(node(100, NodeKind::Invalid, "nothing"));
         });
       }},
      {"node_type_99",
       [](const std::string& p) {
         all_reduce(p, [](int r, Trace& t) {
           if (r == 2) t.nodes.push_back(node(100, static_cast<NodeKind>(99), "alien"));
         });
       }},
      {"pg_unknown", [](const std::string& p) { rank2(p, [](TraceNode& n) { n.pg_name = "7"; }); }},
      {"kind_mismatch",  // rank 0 REDUCE_SCATTER, the others ALL_GATHER of a quarter the size
       [](const std::string& p) {
         all_reduce(p, [](int r, Trace& t) {
           t.nodes.front().comm_type = static_cast<int64_t>(r == 0 ? CollectiveKind::ReduceScatter
                                                                   : CollectiveKind::AllGather);
           if (r != 0) t.nodes.front().comm_size = (1 << 20) / 4;
         });
       }},
      {"size_mismatch",
       [](const std::string& p) { rank2(p, [](TraceNode& n) { n.comm_size = 4 << 20; }); }},
      {"collective_missing",
       [](const std::string& p) {
         all_reduce(p, [](int r, Trace& t) {
           if (r == 2) t.nodes.clear();
         });
       }},
      {"collective_extra",
       [](const std::string& p) {
         all_reduce(p, [](int r, Trace& t) {
           if (r != 1) return;
           TraceNode second = t.nodes.front();
           second.id = 100;
           second.data_deps = {t.nodes.front().id};
           t.nodes.push_back(second);
         });
       }},
      {"send_no_recv", [](const std::string& p) { point_to_point(p, {{send(1, 1, 7)}}); }},
      {"recv_no_send",
       [](const std::string& p) {
         point_to_point(p, {{}, {recv(1, 3, 9)}});
       }},
      {"send_recv_size_mismatch",
       [](const std::string& p) {
         point_to_point(p, {{send(1, 1, 7, 4096)}, {recv(1, 0, 7, 8192)}});
       }},
      {"send_to_self", [](const std::string& p) { point_to_point(p, {{send(1, 0, 7)}}); }},
      {"send_peer_outside", [](const std::string& p) { point_to_point(p, {{send(1, 9, 7)}}); }},
      {"send_peer_missing",
       [](const std::string& p) {
         TraceNode s = send(1, 1, 7);
         s.comm_dst.reset();
         point_to_point(p, {{s}});
       }},
      {"recv_size_missing",
       [](const std::string& p) {
         TraceNode r = recv(1, 0, 7);
         r.comm_size.reset();
         point_to_point(p, {{send(1, 1, 7)}, {r}});
       }},
      {"p2p_good",
       [](const std::string& p) {
         point_to_point(p, {{send(1, 1, 7)}, {recv(1, 0, 7)}});
       }},
      {"huge_comm_size",  // legal alone; with --size-unit 8 past 64 bits
       [](const std::string& p) {
         all_reduce(p, [](int, Trace& t) { t.nodes.front().comm_size = 1ull << 62; });
       }},
      {"all_gather",
       [](const std::string& p) {
         all_reduce(p, [](int, Trace& t) {
           t.nodes.front().comm_type = static_cast<int64_t>(CollectiveKind::AllGather);
         });
       }},
      {"tiny_all_reduce",  // 2 bytes over 4 ranks: blocks of 0 bytes unless the plan avoids them
       [](const std::string& p) {
         all_reduce(p, [](int, Trace& t) { t.nodes.front().comm_size = 2; });
       }},
      {"comm_size_string_number",  // legal: the whole string is a number
       [](const std::string& p) { comm_size_as_string(p, "1048576"); }},
      {"comm_size_string_text", [](const std::string& p) { comm_size_as_string(p, "1 MiB"); }},
      {"sparse_good", [](const std::string& p) { sparse_on_rank2(p, {}); }},
      {"sparse_unknown_format",
       [](const std::string& p) { sparse_on_rank2(p, [](auto& s) { s.in_format = "zip"; }); }},
      {"sparse_unknown_op",
       [](const std::string& p) { sparse_on_rank2(p, [](auto& s) { s.op = "gemm"; }); }},
      {"sparse_density_above_one",
       [](const std::string& p) { sparse_on_rank2(p, [](auto& s) { s.density = 1.5; }); }},
      {"sparse_nnz_beyond_shape",
       [](const std::string& p) {
         sparse_on_rank2(p, [](auto& s) {
           s.density.reset();
           s.nnz = 4097;
         });
       }},
      {"sparse_spmm_without_n",
       [](const std::string& p) { sparse_on_rank2(p, [](auto& s) { s.op = "spmm"; }); }},
      {"six",
       [](const std::string& p) {
         chakra::MicrobenchmarkSpec spec;
         spec.ranks = 6;
         chakra::write_microbenchmark(p, spec);
       }},
      {"all_to_all",
       [](const std::string& p) {
         all_reduce(p, [](int, Trace& t) {
           t.nodes.front().comm_type = static_cast<int64_t>(CollectiveKind::AllToAll);
         });
       }},
      {"in_group_1",
       [](const std::string& p) {
         all_reduce(p, [](int, Trace& t) { t.nodes.front().pg_name = "1"; });
       }},
      {"name_not_utf8",  // proto3 strings must be UTF-8: protobuf refuses the node
       [](const std::string& p) { rank2(p, [](TraceNode& n) { n.name = "\xff\xfe layer"; }); }},
      {"root_outside",
       [](const std::string& p) {
         all_reduce(p, [](int, Trace& t) {
           t.nodes.front().comm_type = static_cast<int64_t>(CollectiveKind::Broadcast);
           t.nodes.front().root = 7;
         });
       }},
      {"root_mismatch",  // rank 2 thinks the broadcast comes from position 2
       [](const std::string& p) {
         all_reduce(p, [](int r, Trace& t) {
           t.nodes.front().comm_type = static_cast<int64_t>(CollectiveKind::Broadcast);
           if (r == 2) t.nodes.front().root = 2;
         });
       }},
      {"metadata_only", [](const std::string& p) { point_to_point(p, {}); }},
      // Three broadcasts into leaf 1 of a 20-NPU tree at once, from NPUs 0, 1 and 2 of leaf 0: to
      // NPU 4, to NPU 6, and to NPUs 5 and 7. In leaf 1's Fred_m(8) the first two come down
      // uplinks 0 and 1 (instances 0 and 1), one input micro-switch; the third leaves on both
      // output micro-switches, each shared with one of them: three flows that clash pairwise,
      // which two middles cannot separate (the rest of the ranks broadcast among themselves).
      // Prefix fred_clash/w.
      {"fred_clash",
       [](const std::string& p) {
         chakra::MicrobenchmarkSpec spec;
         spec.collective = CollectiveKind::Broadcast;
         spec.ranks = 20;
         spec.groups = {
             {0, 4}, {1, 6}, {2, 5, 7}, {3, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}};
         chakra::write_microbenchmark(p + "/w", spec);  // a folder of its own for its groups
       }},
      // Weights streamed in from one I/O controller of wafer_mesh_5x4_io.yaml (rank 20), which
      // also has a compute node: a controller only transfers. Prefix io_compute/w.
      {"io_compute",
       [](const std::string& p) {
         chakra::MicrobenchmarkSpec spec;
         spec.collective = CollectiveKind::Broadcast;
         spec.ranks = 20;
         spec.io_controllers = 1;
         chakra::write_microbenchmark(p + "/w", spec);
         chakra::Trace t = chakra::read_trace(p + "/w.20.et");
         TraceNode c = node(7, NodeKind::Compute, "fetch");
         c.duration_micros = 1;
         t.nodes.push_back(c);
         chakra::write_trace(p + "/w.20.et", t);
       }},
  };
  return table;
}

}  // namespace

std::vector<std::string> write_bad_workloads(const std::string& dir) {
  std::filesystem::create_directories(dir);
  // Nesting 100,000 deep: a reader or a message that recurses over it overflows the stack.
  const std::string open(100000, '['), close(100000, ']');
  spit(dir + "/deep.json", "{\"1\": " + open + close + "}");
  spit(dir + "/deep_system.json", "{\"preferred-dataset-splits\": " + open + close + "}");
  spit(dir + "/deep.yaml", "network: " + open + close + "\n");
  std::vector<std::string> names;
  for (const auto& [name, write] : generators()) {
    write(dir + "/" + name);
    names.push_back(name);
  }
  return names;
}

}  // namespace wafersim::testing
