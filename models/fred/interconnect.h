#pragma once
// The shape of Fred_m(P), the interconnect inside a Fred switch (PAPERS.md section 1): a recursive
// Clos-like network of P ports and m middle subnetworks. Above the base case, the P ports pair up
// into r = floor(P / 2) input micro-switches (2 ports in, one link to each middle subnetwork) and
// r output micro-switches (one link from each middle, 2 ports out); when P is odd, port P - 1 joins
// every middle subnetwork through a demux on the way in and a mux on the way out. The m middles
// are alike: Fred_m(r), or Fred_m(r + 1) with the odd port. The recursion ends at the base
// switches Fred_m(2) (one RD micro-switch) and Fred_m(3).
//
// Plain C++: models/fred/flow_router.h routes flows over this shape; hw/fred will time them.
//
// Modelling choices the paper leaves open (docs/design.md, Fred):
// - For m = 2 an input or output micro-switch is one 2x2 RD micro-switch. For m > 2 it is
//   counted as one 2 x m (m x 2) micro-switch with the same functions (reduce its two inputs,
//   distribute to its two outputs); how it is built from 2x2 cells is not modelled.
// - Fred_m(3) is one base switch that carries any flows whose inputs and outputs are disjoint
//   (reducing and distributing among its 3 ports). Its inner structure is not published.
#include <memory>
#include <string>

namespace wafersim::fred {

// How many blocks of each kind Fred_m(P) holds, counting every copy of every middle subnetwork.
struct Inventory {
  long input_switches = 0;   // 2 x m micro-switches of the outer stages
  long output_switches = 0;  // m x 2
  long base_switches = 0;    // Fred_m(2) and Fred_m(3)
  long demuxes = 0;          // an odd port's 1 x m demux
  long muxes = 0;            // and its m x 1 mux
  long links = 0;            // between blocks (the ports themselves not counted)
};

class Interconnect {
 public:
  // Throws std::invalid_argument for ports < 2 or middles < 2.
  Interconnect(int ports, int middles);

  int ports() const { return ports_; }
  int middles() const { return middles_; }
  // Fred_m(2) or Fred_m(3): one base switch, no middle subnetworks.
  bool is_base() const { return ports_ <= 3; }
  // Input (and output) micro-switches of the outer stage: port p < 2 x pairs() sits on number p
  // / 2.
  int pairs() const { return is_base() ? 0 : ports_ / 2; }
  // Whether port P - 1 is the odd port, joined to the middles by a demux and a mux.
  bool has_odd_port() const { return !is_base() && ports_ % 2 == 1; }
  // The port of a middle subnetwork that port p reaches: its micro-switch's number, or for the odd
  // port the last one.
  int middle_port(int port) const { return port / 2; }
  // The shape every middle subnetwork has (do not call on a base switch).
  const Interconnect& middle() const { return *middle_; }
  // Levels of recursion: 1 for a base switch, else 1 + the middle's.
  int levels() const { return is_base() ? 1 : 1 + middle_->levels(); }
  // Blocks a unit crosses from a port to a port: 1 for a base switch, else an input micro-switch
  // (or demux), the middle's stages and an output micro-switch (or mux). Every path has this
  // length, so with a fixed pipeline per block a flow's latency does not depend on its route.
  int stages() const { return is_base() ? 1 : 2 + middle_->stages(); }
  Inventory inventory() const;
  // "Fred_3(8)".
  std::string name() const;

 private:
  int ports_;
  int middles_;
  std::shared_ptr<const Interconnect> middle_;  // the one shape of all m middles
};

}  // namespace wafersim::fred
