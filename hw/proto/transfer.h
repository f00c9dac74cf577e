#pragma once
// The wafersim TLM payload extension (DESIGN.md decision 2) and the pool that recycles payloads, so
// the hot path allocates nothing per flit or packet.
#include <systemc>
#include <tlm>
#include <vector>

namespace wafersim::hw {

// One end-to-end message: what a plan's Send moves from one NPU to another. Units (flits, packets
// or the whole message, depending on fidelity) point at it.
struct Message {
  uint64_t id = 0;
  int src = 0;  // ranks
  int dst = 0;
  uint64_t bytes = 0;
  uint64_t tag = 0;  // matching key chosen by the sender's driver
  uint64_t received_bytes = 0;
  sc_core::sc_time created;    // handed to the sending NIC
  sc_core::sc_time injected;   // its first unit left the sending NIC
  sc_core::sc_time delivered;  // its last byte reached the receiving NIC
  // Message fidelity: the rate it streams at, its path's narrowest link (bytes per cycle).
  double bytes_per_cycle = 0;
  uint64_t cookie = 0;  // sender's handle for its completion
};

// What travels on a link: one flit, one packet or one message (the fidelity knob).
struct TransferExt : tlm::tlm_extension<TransferExt> {
  Message* message = nullptr;
  uint64_t packet = 0;      // packet sequence number within the message
  uint64_t bytes = 0;       // payload bytes of this unit
  uint64_t wire_bytes = 0;  // bytes on the wire (payload + header)
  uint32_t flits = 1;       // buffer slots it occupies
  uint32_t credits = 1;     // slots it holds downstream (min(flits, buffer depth))
  int vc = 0;
  int vc_class = 0;  // dateline class on rings
  int dst = 0;       // the message's destination rank, carried so that routers need not look
  bool head = true;
  bool tail = true;
  sc_core::sc_time tail_at;  // when the unit's last byte reaches the receiving side
  int port = -1;             // receiving (or, for credits, sending) port index; set per hop

  tlm::tlm_extension_base* clone() const override { return new TransferExt(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    *this = static_cast<const TransferExt&>(other);
  }
};

// Recycles generic payloads that each carry one TransferExt.
class PayloadPool : public tlm::tlm_mm_interface {
 public:
  ~PayloadPool() override {
    for (auto* t : all_) delete t;
  }
  tlm::tlm_generic_payload* acquire() {
    tlm::tlm_generic_payload* t;
    if (free_.empty()) {
      t = new tlm::tlm_generic_payload(this);
      t->set_extension(new TransferExt);
      all_.push_back(t);
    } else {
      t = free_.back();
      free_.pop_back();
    }
    t->acquire();
    return t;
  }
  void free(tlm::tlm_generic_payload* t) override { free_.push_back(t); }
  size_t allocated() const { return all_.size(); }

 private:
  std::vector<tlm::tlm_generic_payload*> free_;
  std::vector<tlm::tlm_generic_payload*> all_;
};

inline TransferExt* transfer(tlm::tlm_generic_payload& t) {
  return t.get_extension<TransferExt>();
}

}  // namespace wafersim::hw
