#pragma once
// Link-level retransmission: Go-Back-N on every link, at packet fidelity (fabric.link_retry:
// go_back_n). The Fred paper's switches keep every packet until the next hop acknowledges it and
// send again from the first one lost; links in a wafer are not error-free (PAPERS.md section 1).
//
// The sending side numbers the packets it puts on a link. A packet the link drops never arrives:
// the sender sends it again once `retransmit_timeout_cycles` have passed without its ACK. A
// corrupted packet arrives and fails its check: the receiver drops it and NACKs it at once. Either
// way the receiver discards every packet after it until the lost one comes again (Go-Back-N), so
// the sender sends them all again, in order. The receiver acknowledges every `ack_every_packets`
// packets it takes in order with one cumulative ACK, and the packets it holds unacknowledged when
// the link has been quiet for half the timeout; ACKs and NACKs are one flit each on the reverse
// link's control VC (the last VC), real traffic that takes its share of that link.
//
// Credit flow control is unaffected: a packet takes its credits when it is first sent, and the
// receiver's buffer holds only the copy that arrives intact (the copies a link loses or the
// receiver discards never reach it).
//
// Simplified: the sender knows at once which of its packets will be lost (the draw is made when it
// leaves) but acts only when a real sender would, on the NACK or the timeout; its retransmission
// buffer is unbounded (no window stalls it) and it never times out on a packet that arrived (the
// receiver's ACKs always come before the timeout); the draws are independent per packet and
// attempt (no bursts).
#include <cstdint>
#include <systemc>
#include <tlm>
#include <vector>

namespace wafersim::hw {

// Deterministic draws: whether a link loses a packet, by seed, link, sequence number and attempt.
enum class LinkFault { None, Drop, Corrupt };
LinkFault draw_link_fault(uint64_t seed, int link, uint64_t seq, uint32_t attempt, double drop,
                          double corrupt);

// The sending side of one link.
struct RetrySender {
  uint64_t next_seq = 0;  // the next new packet's
  uint32_t acked = 0;     // packets acknowledged (cumulative, the ACK's 32 bits)
  // The first packet the link lost and every packet sent after it, not yet sent again: the
  // receiver discards them all (the payloads are this side's until then). A vector: empty, it
  // holds no memory (a deque took 576 bytes on every link of every run, go-back-N or not).
  std::vector<tlm::tlm_generic_payload*> held;
  sc_core::sc_time resend_at;   // when they go again (when `held` is not empty)
  bool resend_on_nack = false;  // they go when the NACK comes (a corruption), not at resend_at
};

// The receiving side of one link.
struct RetryReceiver {
  uint64_t in_order = 0;     // packets taken, in order
  uint64_t acked = 0;        // of which acknowledged
  sc_core::sc_time last_in;  // the last one's arrival (an idle link acknowledges the rest)
  bool flush_due = false;    // a quiet-link ACK is scheduled
};

}  // namespace wafersim::hw
