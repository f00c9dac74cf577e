#include "models/fred/interconnect.h"

#include <stdexcept>

namespace wafersim::fred {

Interconnect::Interconnect(int ports, int middles) : ports_(ports), middles_(middles) {
  if (ports < 2)
    throw std::invalid_argument("a Fred interconnect needs at least 2 ports, got " +
                                std::to_string(ports));
  if (middles < 2)
    throw std::invalid_argument("a Fred interconnect needs at least 2 middle subnetworks, got " +
                                std::to_string(middles));
  if (!is_base())
    middle_ = std::make_shared<const Interconnect>(pairs() + (has_odd_port() ? 1 : 0), middles);
}

Inventory Interconnect::inventory() const {
  Inventory inv;
  if (is_base()) {
    inv.base_switches = 1;
    return inv;
  }
  const Inventory inner = middle_->inventory();
  const long m = middles_, r = pairs(), odd = has_odd_port() ? 1 : 0;
  inv.input_switches = r + m * inner.input_switches;
  inv.output_switches = r + m * inner.output_switches;
  inv.base_switches = m * inner.base_switches;
  inv.demuxes = odd + m * inner.demuxes;
  inv.muxes = odd + m * inner.muxes;
  // Each micro-switch (and the demux, the mux) of this stage has a link to every middle.
  inv.links = 2 * (r + odd) * m + m * inner.links;
  return inv;
}

std::string Interconnect::name() const {
  return "Fred_" + std::to_string(middles_) + "(" + std::to_string(ports_) + ")";
}

}  // namespace wafersim::fred
