#include "hw/platform/platform.h"

#include <algorithm>
#include <stdexcept>

namespace wafersim::hw {

Platform::Platform(sc_core::sc_module_name name, const topology::Topology& topology,
                   const FabricParams& fabric, const NpuParams& npu)
    : sc_module(name),
      topology_(topology),
      fabric_(fabric),
      flows_(topology, messages_),
      callbacks_("callbacks"),
      calendar_("calendar", sc_core::sc_time(1.0 / fabric.clock_ghz, sc_core::SC_NS)) {
  const FabricShared shared{pool_, messages_, calendar_, topology_, flows_};
  if (topology.needs_dateline_classes()) {
    if (fabric_.vcs < 2)
      throw std::invalid_argument(
          "vcs: a ring with multi-hop routes needs at least 2 virtual channels (dateline classes)");
    fabric_.vc_classes = 2;
  }
  std::vector<FabricNode*> block(topology.nodes().size(), nullptr);
  npus_.resize(topology.endpoint_count());
  sparse_units_.resize(topology.endpoint_count(), nullptr);
  for (const auto& node : topology.nodes()) {
    if (topology::is_endpoint(node.kind)) {
      // One NIC port per link pair: one per network dimension.
      const auto& in = topology.in_links(node.id);
      const auto& out = topology.out_links(node.id);
      if (in.empty() || in.size() != out.size())
        throw std::logic_error(node.name + " needs as many links in as out, at least one");
      auto made = std::make_unique<Npu>(node.name.c_str(), node.rank, npu, fabric_, shared,
                                        callbacks_, topology.links_of(in), topology.links_of(out));
      npus_[node.rank] = made.get();
      block[node.id] = &made->nic();
      Npu& made_npu = *made;
      blocks_.push_back(std::move(made));
      if (node.kind == topology::NodeKind::Npu) {  // NPU-side blocks, on their own sockets
        auto sparse = std::make_unique<SparseUnit>((node.name + "_sparse").c_str(), node.rank,
                                                   npu.sparse_unit_params(), callbacks_);
        made_npu.sparse.bind(sparse->port);
        sparse_units_[node.rank] = sparse.get();
        blocks_.push_back(std::move(sparse));
      }
    } else {
      std::unique_ptr<Router> made;
      if (node.kind == topology::NodeKind::FredSwitch) {
        auto fred =
            std::make_unique<FredSwitch>(node.name.c_str(), fabric_, shared, topology, node.id);
        fred_switches_.push_back(fred.get());
        made = std::move(fred);
      } else {
        made = std::make_unique<Router>(node.name.c_str(), fabric_, shared, topology, node.id);
      }
      routers_.push_back(made.get());
      block[node.id] = made.get();
      blocks_.push_back(std::move(made));
    }
  }
  // Ports were created in each node's link order: port k of a node is its k-th link.
  link_source_.resize(topology.links().size());
  for (const auto& link : topology.links()) {
    const auto& outs = topology.out_links(link.src);
    const auto& ins = topology.in_links(link.dst);
    int out = static_cast<int>(std::find(outs.begin(), outs.end(), link.id) - outs.begin());
    int in = static_cast<int>(std::find(ins.begin(), ins.end(), link.id) - ins.begin());
    block[link.src]->output_socket(out).bind(block[link.dst]->input_socket(in));
    link_source_[link.id] = {block[link.src], out};
  }
}

// SystemC's registries of ports, exports and modules find the one to remove by searching back from
// their newest entry: blocks destroyed newest first are found at once, oldest first each costs a
// search of all the rest (at 1,024 NPUs, a quarter of a small run's instructions).
Platform::~Platform() {
  while (!blocks_.empty()) blocks_.pop_back();
}

std::vector<LinkReport> Platform::link_reports() const {
  std::vector<LinkReport> out;
  for (const auto& link : topology_.links()) {
    auto [block, port] = link_source_[link.id];
    out.push_back({&link, block->output_stats(port)});
  }
  return out;
}

void Platform::configure_flows(const std::vector<FredSwitch::PlannedFlow>& flows) {
  for (FredSwitch* s : fred_switches_) s->configure_flows(flows);
}

void Platform::release_flows(uint64_t tag) {
  for (FredSwitch* s : fred_switches_) s->release_flows(tag);
}

FredSwitch::ControlStats Platform::fred_control_stats() const {
  FredSwitch::ControlStats total;
  for (const FredSwitch* s : fred_switches_) {
    const FredSwitch::ControlStats one = s->control_stats();
    total.configurations += one.configurations;
    total.configured_routes += one.configured_routes;
    total.online_routes += one.online_routes;
  }
  return total;
}

size_t Platform::buffered_units() const {
  size_t n = 0;
  for (const auto& r : routers_) n += r->buffered_units();
  return n;
}

}  // namespace wafersim::hw
