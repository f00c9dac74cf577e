#include "tb/collectives/export_collective.h"

#include <filesystem>
#include <ostream>

#include "models/collectives/msccl.h"
#include "models/common/error.h"
#include "tb/collectives/chakra_graph.h"
#include "tb/collectives/msccl_xml.h"
#include "tb/common/exit_codes.h"
#include "tb/common/files.h"
#include "tb/replay/plan_library.h"

namespace wafersim::tb {

int export_collective(const ExportOptions& o, std::ostream& out) {
  const PlatformSpec spec = load_platform_spec(o.platform);
  const int ranks = build_topology(spec).npu_count();
  collectives::CollectiveRequest q;
  try {
    q.collective = collectives::collective_from_string(o.collective);
  } catch (const std::invalid_argument& e) {
    throw InputError("command line", "--collective", e.what());
  }
  if (o.root < 0 || o.root >= ranks)
    throw InputError("command line", "--root",
                     std::to_string(o.root) + " is not a rank of 0.." + std::to_string(ranks - 1));
  q.ranks = ranks;
  q.bytes = o.bytes;
  q.root = o.root;
  q.splits = spec.collectives.dataset_splits;
  q.active_chunks = spec.collectives.active_chunks;
  // MSCCL XML holds one loop of the algorithm (its runtime repeats it over a larger buffer).
  if (o.format == "msccl") q.splits = 1;
  PlanLibrary library(spec.collectives, spec.source);
  const PlanLibrary::Entry entry = library.plan(q, "command line", "--collective " + o.collective);
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (o.format == "msccl") {
    collectives::msccl::Algorithm algo;
    try {
      algo = collectives::msccl::from_plan(*entry.plan, q.collective, entry.plan->algorithm);
    } catch (const std::invalid_argument& e) {
      throw InputError("command line", "--format msccl", e.what());
    }
    const std::string path = o.out_dir + "/" + o.collective + ".xml";
    const std::string text = msccl_xml_text(algo);
    write_file_atomically(
        path, [&](std::ostream& file) { file << text; }, "--out");
    out << "wrote " << path << ": " << entry.plan->algorithm << " " << o.collective << " over "
        << ranks << " ranks, " << algo.nchunksperloop << " chunks per loop, " << algo.nchannels
        << " channels\n";
  } else {
    const std::string prefix = o.out_dir + "/" + o.collective;
    write_chakra_collective(*entry.plan, q.collective, prefix);
    out << "wrote " << prefix << ".0.et .. " << prefix << "." << ranks - 1
        << ".et: " << entry.plan->algorithm << " " << o.collective << " over " << ranks
        << " ranks, " << entry.plan->chunks << " chunks\n";
  }
  return kOk;
}

}  // namespace wafersim::tb
