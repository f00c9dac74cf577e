#pragma once
// The sparse-format conversion and compute unit beside an NPU (docs/sparse.md): a target on its own
// TLM-2.0 socket, which the NPU reaches through an initiator socket, as further NPU-side blocks (a
// DMA, a memory controller) would be. It takes one job at a time, in arrival order: a conversion
// between compression formats or an SpMV / SpMM on compressed operands. Its cycles come from
// models/sparse/unit_model (a double-buffered pipeline whose blocks cost what their data holds),
// counted on the NPU's clock; the job completes with BEGIN_RESP on the backward path.
#include <string>
#include <systemc>
#include <tlm>

#include "hw/proto/callback_queue.h"
#include "models/sparse/unit_model.h"

namespace wafersim::hw {

// The job a payload sent to a SparseUnit carries; the unit fills in `timing` and, in data mode,
// `checked` or `mismatch`.
struct SparseJobExt : tlm::tlm_extension<SparseJobExt> {
  sparse::SparseJob job;
  // Data mode (`run --data`): the unit makes the operand (positions uniformly at random at the
  // job's density, from `seed`), times the job on it, computes with its datapath (hw/sparse/
  // datapath.h) and checks the values against models/sparse. Operands of more than
  // kMaxDataPositions positions, and SpMM with a sparse B, are timed on an even spread unchecked.
  bool data = false;
  uint64_t seed = 0;
  bool checked = false;
  std::string mismatch;  // what differs, when the check failed (the job completes with an error)
  sparse::UnitTiming timing;
  tlm::tlm_extension_base* clone() const override { return new SparseJobExt(*this); }
  void copy_from(const tlm::tlm_extension_base& o) override {
    *this = static_cast<const SparseJobExt&>(o);
  }
};

constexpr uint64_t kMaxDataPositions = uint64_t{1} << 22;

struct SparseUnitStats {
  uint64_t jobs = 0;
  uint64_t checked = 0;    // data mode: jobs whose values were checked
  uint64_t unchecked = 0;  // data mode: jobs too large (or SpMM with a sparse B) to check
  sc_core::sc_time busy;
  sparse::UnitTiming total;  // the jobs' timings summed (cycles, bytes, stalls, elements)
};

class SparseUnit : public sc_core::sc_module, private tlm::tlm_fw_transport_if<> {
 public:
  // A plain TLM-2.0 base-protocol socket whose transport interface is the unit's own: the utility
  // library's simple socket builds three events and a process list per unit, for the blocking
  // and non-blocking adaptation jobs never need (docs/performance.md).
  tlm::tlm_target_socket<32> port;

  SparseUnit(sc_core::sc_module_name name, int rank, const sparse::UnitParams& params,
             CallbackQueue& callbacks);

  const SparseUnitStats& stats() const { return stats_; }
  const sparse::UnitParams& params() const { return params_; }

 private:
  // The socket's forward interface. Jobs are non-blocking only, like the NPU's commands: blocking
  // and debug transport and DMI are refused.
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay) override;
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time&) override {
    trans.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
  }
  unsigned int transport_dbg(tlm::tlm_generic_payload&) override { return 0; }
  bool get_direct_mem_ptr(tlm::tlm_generic_payload&, tlm::tlm_dmi&) override { return false; }

  // Data mode: makes the operand, times the job on it and checks the datapath's values.
  void run_on_data(SparseJobExt& ext);

  const int rank_;
  const sparse::UnitParams params_;
  const sc_core::sc_time cycle_;
  CallbackQueue& callbacks_;
  sc_core::sc_time free_at_;
  SparseUnitStats stats_;
};

}  // namespace wafersim::hw
