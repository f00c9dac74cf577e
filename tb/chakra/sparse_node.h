#pragma once
// COMP nodes for the sparse unit: their wafersim attributes checked as a trace is read, and the
// job they describe for the unit (docs/sparse.md).
#include <string>

#include "models/sparse/unit_model.h"
#include "tb/chakra/trace.h"

namespace wafersim::chakra {

// Throws InputError naming the file, the node and the attribute when a sparse node is not one the
// unit can run: not a COMP node, an unknown op or format, a density outside [0, 1], a non-zero
// count the shape cannot hold, widths that cannot index the matrix, a missing attribute.
void check_sparse(const std::string& file, const TraceNode& node);

// The unit's job for a checked node: the operand's stats with its non-zeros spread evenly (the
// trace says how many, not where), `auto` formats resolved by sparse::advise with the unit's
// parameters.
sparse::SparseJob sparse_job(const SparseAttrs& attrs, const sparse::UnitParams& unit);

}  // namespace wafersim::chakra
