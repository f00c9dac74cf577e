#include "hw/sparse/sparse_unit.h"

#include <algorithm>

#include "hw/proto/probe.h"

namespace wafersim::hw {

using sc_core::sc_time;

SparseUnit::SparseUnit(sc_core::sc_module_name name, int rank, const sparse::UnitParams& params,
                       CallbackQueue& callbacks)
    : sc_module(name),
      port("port"),
      rank_(rank),
      params_(params),
      cycle_(1.0 / params.clock_ghz, sc_core::SC_NS),
      callbacks_(callbacks) {
  port.register_nb_transport_fw(this, &SparseUnit::request);
  port.register_b_transport(this, &SparseUnit::refuse_blocking);
}

tlm::tlm_sync_enum SparseUnit::request(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                       sc_time&) {
  if (phase != tlm::BEGIN_REQ) return tlm::TLM_ACCEPTED;
  SparseJobExt* ext = trans.get_extension<SparseJobExt>();
  if (!ext) {
    trans.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    phase = tlm::BEGIN_RESP;
    return tlm::TLM_UPDATED;
  }
  Probe* observer = probe();
  ext->timing = sparse::time_job(ext->job, params_, observer != nullptr);
  const sc_time now = sc_core::sc_time_stamp();
  const sc_time begin = std::max(now, free_at_);
  const sc_time duration = cycle_ * static_cast<double>(ext->timing.cycles);
  free_at_ = begin + duration;
  stats_.jobs++;
  stats_.busy += duration;
  sparse::accumulate(stats_.total, ext->timing);
  if (observer) observer->sparse_job(rank_, begin, cycle_, ext->timing);
  callbacks_.at(free_at_, [this, &trans]() {
    tlm::tlm_phase resp = tlm::BEGIN_RESP;
    sc_time delay = sc_core::SC_ZERO_TIME;
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
    port->nb_transport_bw(trans, resp, delay);
  });
  return tlm::TLM_ACCEPTED;
}

}  // namespace wafersim::hw
