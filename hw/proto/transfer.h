#pragma once
// The wafersim TLM payload extension (DESIGN.md decision 2) and the pool that recycles payloads, so
// the hot path allocates nothing per flit or packet.
#include <memory>
#include <systemc>
#include <tlm>
#include <vector>

namespace wafersim::hw {

struct FlowTransfer;

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
  uint64_t cookie = 0;  // sender's handle for its completion (0: none)
  // A part of an in-network flow (hw/fred/flow_table.h): an input's contribution (src its rank,
  // dst -1), the sum delivered to an output (src -1, dst its rank), or the flow's carrier between
  // switches (both -1). Null for a point-to-point message.
  FlowTransfer* flow = nullptr;
};

// What travels on a link: one flit, one packet or one message (the fidelity knob). What every
// hop reads and writes comes first: in a LinkPayload, aligned to cache lines, these fields share
// one line with the payload's reference count (docs/performance.md).
struct TransferExt : tlm::tlm_extension<TransferExt> {
  Message* message = nullptr;
  uint64_t wire_bytes = 0;   // bytes on the wire (payload + header)
  sc_core::sc_time tail_at;  // when the unit's last byte reaches the receiving side
  int dst = 0;  // the message's destination rank, carried so that routers need not look
  int vc = 0;
  uint32_t flits = 1;    // buffer slots it occupies
  uint32_t credits = 1;  // slots it holds downstream (min(flits, buffer depth))
  int vc_class = 0;      // dateline class on rings
  bool head = true;
  bool tail = true;
  // Link-level retransmission (hw/noc/link_retry.h): what the link layer makes of the unit, how
  // often it has been sent on the link it crosses before (modulo 256), and its sequence number
  // there (modulo 2^32; an ACK's: the packets it acknowledges).
  enum class Control : uint8_t { Data, Ack, Nack, Corrupted } control = Control::Data;
  uint8_t attempt = 0;
  uint64_t packet = 0;  // packet sequence number within the message
  uint64_t bytes = 0;   // payload bytes of this unit
  uint32_t link_seq = 0;

  tlm::tlm_extension_base* clone() const override { return new TransferExt(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    *this = static_cast<const TransferExt&>(other);
  }
};

// A link payload: a generic payload with its TransferExt beside it. The extension is also set on
// the payload (any TLM-2.0 tool that asks for it finds it), but the blocks reach it without the
// extension lookup, which costs two dependent loads on every hop of every unit. Every payload that
// crosses a link comes from the PayloadPool, so every payload on a link is a LinkPayload.
struct alignas(64) LinkPayload : tlm::tlm_generic_payload {
  explicit LinkPayload(tlm::tlm_mm_interface* mm) : tlm::tlm_generic_payload(mm) {
    set_extension(&unit);
  }
  // The extension is a member, not the payload's to delete.
  ~LinkPayload() override { clear_extension(&unit); }
  TransferExt unit;
};

// Recycles link payloads.
class PayloadPool : public tlm::tlm_mm_interface {
 public:
  ~PayloadPool() override {
    for (auto* t : all_) delete t;
  }
  LinkPayload* acquire() {
    LinkPayload* t;
    if (free_.empty()) {
      t = new LinkPayload(this);
      all_.push_back(t);
    } else {
      t = free_.back();
      free_.pop_back();
    }
    t->acquire();
    return t;
  }
  void free(tlm::tlm_generic_payload* t) override { free_.push_back(static_cast<LinkPayload*>(t)); }
  size_t allocated() const { return all_.size(); }

 private:
  std::vector<LinkPayload*> free_;
  std::vector<LinkPayload*> all_;
};

// The unit a link payload carries.
inline TransferExt* transfer(tlm::tlm_generic_payload& t) {
  return &static_cast<LinkPayload&>(t).unit;
}

// Recycles messages: NPUs send millions of them, each made by its sender and freed by its
// receiver. The pool owns them all, so those still in flight when a run stops are freed too.
class MessagePool {
 public:
  // A message with every field at its default.
  Message* acquire() {
    if (free_.empty()) {
      all_.push_back(std::make_unique<Message>());
      return all_.back().get();
    }
    Message* m = free_.back();
    free_.pop_back();
    *m = Message{};
    return m;
  }
  void release(Message* m) { free_.push_back(m); }

 private:
  std::vector<std::unique_ptr<Message>> all_;
  std::vector<Message*> free_;
};

}  // namespace wafersim::hw
