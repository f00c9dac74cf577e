#pragma once
// The sparse unit's functional datapath, as its hardware streams it: a decoder walks the input
// block by block in the input's order and hands its non-zeros to an encoder that appends them to
// the output's arrays (row pointers as rows close, RLC runs from the last position written, ...);
// when the output's order differs, they go through the reorder buffer and a counting sort first.
// The compute path multiplies the non-zeros as the decoder hands them over. In data mode
// (`run --data`) each job's values come from here and are checked bit for bit against
// models/sparse's codecs and kernels, an implementation written the other way (whole matrices).
#include <vector>

#include "models/sparse/codec.h"
#include "models/sparse/kernels.h"

namespace wafersim::hw {

// `in` converted to `out`, `segments_per_block` rows (columns for CSC input) a block.
sparse::Encoded stream_convert(const sparse::Encoded& in, sparse::Format out,
                               const sparse::Layout& layout, uint64_t segments_per_block);

// y = A x and C = A B (B dense, rows x cols row-major), multiplying as the decoder streams A.
std::vector<double> stream_spmv(const sparse::Encoded& a, const std::vector<double>& x,
                                uint64_t segments_per_block);
sparse::DenseMatrix stream_spmm(const sparse::Encoded& a, const sparse::DenseMatrix& b,
                                uint64_t segments_per_block);

}  // namespace wafersim::hw
