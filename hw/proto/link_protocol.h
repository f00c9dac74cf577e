#pragma once
// The protocol of wafersim's links (DESIGN.md decision 2, docs/design.md "Links"). Links carry
// TLM-2.0 generic payloads, each with a TransferExt (hw/proto/transfer.h), but on sockets of their
// own protocol type: a base-protocol component (a memory model, an NPU's command socket) cannot be
// bound to a link socket, the compiler refuses it.
//
// Phases, non-blocking transport only (DESIGN.md decision 2):
//   kUnit = BEGIN_REQ (forward)   a unit (flit, packet or message) leaves the sender; the timing
//                                 annotation is when its head reaches the receiver. The receiver
//                                 returns TLM_ACCEPTED and keeps the payload until it passes the
//                                 unit on.
//   kCredit = END_REQ (backward)  the credit: the receiver has freed the unit's buffer slots; the
//                                 annotation is when the credit reaches the sender. It returns the
//                                 payload's reference. There is no BEGIN_RESP or END_RESP.
// At message fidelity (temporally decoupled) the receiver passes a message on within the call and
// returns TLM_COMPLETED: no credit. Blocking transport is refused (TLM_COMMAND_ERROR_RESPONSE).
#include <tlm>

namespace wafersim::hw {

struct LinkProtocol {
  using tlm_payload_type = tlm::tlm_generic_payload;
  using tlm_phase_type = tlm::tlm_phase;
};

constexpr tlm::tlm_phase_enum kUnit = tlm::BEGIN_REQ;
constexpr tlm::tlm_phase_enum kCredit = tlm::END_REQ;

}  // namespace wafersim::hw
