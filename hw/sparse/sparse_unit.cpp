#include "hw/sparse/sparse_unit.h"

#include <algorithm>
#include <cstring>

#include "hw/proto/probe.h"
#include "hw/sparse/datapath.h"
#include "models/sparse/kernels.h"

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
  port.bind(*this);
}

tlm::tlm_sync_enum SparseUnit::nb_transport_fw(tlm::tlm_generic_payload& trans,
                                               tlm::tlm_phase& phase, sc_time&) {
  if (phase != tlm::BEGIN_REQ) return tlm::TLM_ACCEPTED;
  SparseJobExt* ext = trans.get_extension<SparseJobExt>();
  if (!ext) {
    trans.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    phase = tlm::BEGIN_RESP;
    return tlm::TLM_UPDATED;
  }
  Probe* observer = probe();
  ext->checked = false;
  ext->mismatch.clear();
  if (ext->data)
    run_on_data(*ext);
  else
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
    trans.set_response_status(trans.get_extension<SparseJobExt>()->mismatch.empty()
                                  ? tlm::TLM_OK_RESPONSE
                                  : tlm::TLM_GENERIC_ERROR_RESPONSE);
    port->nb_transport_bw(trans, resp, delay);
  });
  return tlm::TLM_ACCEPTED;
}

void SparseUnit::run_on_data(SparseJobExt& ext) {
  sparse::SparseJob& job = ext.job;
  const double positions = static_cast<double>(job.a.rows) * static_cast<double>(job.a.cols);
  if (positions > static_cast<double>(kMaxDataPositions) || job.b_format) {
    ext.timing = sparse::time_job(job, params_, probe() != nullptr);
    stats_.unchecked++;
    return;
  }
  const sparse::Layout layout = job.layout ? *job.layout : params_.layout;
  const sparse::Matrix m = sparse::generate(job.a.rows, job.a.cols, job.a.density(),
                                            sparse::Structure::Uniform, ext.seed);
  job.a = sparse::stats_of(m, layout);
  job.a_data = &m;
  ext.timing = sparse::time_job(job, params_, probe() != nullptr);
  job.a_data = nullptr;
  // The datapath's blocks: as many segments as a block of input holds.
  const sparse::Encoded in = sparse::encode(m, job.in, layout);
  const uint64_t segments = sparse::column_major(job.in) ? m.cols : m.rows;
  const uint64_t per_block = std::max<uint64_t>(
      1, params_.block_bytes / std::max<uint64_t>(1, sparse::encoded_bytes(in, layout) /
                                                         std::max<uint64_t>(1, segments)));
  auto differ = [&](const std::vector<double>& got, const std::vector<double>& want) {
    for (size_t k = 0; k < want.size(); ++k)
      if (std::memcmp(&got[k], &want[k], sizeof(double)) != 0) {
        ext.mismatch = "element " + std::to_string(k) + ": the unit computed " +
                       std::to_string(got[k]) + ", models/sparse " + std::to_string(want[k]);
        return;
      }
  };
  switch (job.op) {
    case sparse::SparseOp::Convert:
      if (!(stream_convert(in, job.out, layout, per_block) == sparse::encode(m, job.out, layout)))
        ext.mismatch = std::string("the ") + sparse::to_string(job.in) + " -> " +
                       sparse::to_string(job.out) + " conversion's arrays differ";
      break;
    case sparse::SparseOp::Spmv: {
      std::vector<double> x(m.cols);
      for (uint64_t c = 0; c < m.cols; ++c) x[c] = 1.0 / static_cast<double>(c + 1) - 0.25;
      differ(stream_spmv(in, x, per_block), sparse::spmv(in, x));
      break;
    }
    case sparse::SparseOp::Spmm: {
      sparse::DenseMatrix b{m.cols, job.dense_cols, std::vector<double>(m.cols * job.dense_cols)};
      for (size_t k = 0; k < b.values.size(); ++k)
        b.values[k] = 0.5 - 1.0 / static_cast<double>(k + 2);
      differ(stream_spmm(in, b, per_block).values, sparse::spmm(in, b).values);
      break;
    }
  }
  ext.checked = ext.mismatch.empty();
  stats_.checked++;
}

}  // namespace wafersim::hw
