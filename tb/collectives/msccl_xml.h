#pragma once
// MSCCL XML files (../shared/FORMATS.md, "MSCCL XML"): reading them into MSCCL-IR
// (models/collectives/msccl.h), and writing IR back out. A file may hold several <algo> elements.
#include <iosfwd>
#include <string>
#include <vector>

#include "models/collectives/msccl.h"

namespace wafersim::tb {

// Every <algo> of the file, in order. Throws InputError naming the file, the element (with its
// line) and the problem: not XML, a missing or malformed attribute, an element out of place.
// Meaning (buffers, dependencies, pairing) is checked later, by msccl::to_plan.
std::vector<collectives::msccl::Algorithm> read_msccl_xml(const std::string& path);

// The XML of `algo`, as msccl-tools writes it.
void write_msccl_xml(std::ostream& out, const collectives::msccl::Algorithm& algo);
std::string msccl_xml_text(const collectives::msccl::Algorithm& algo);

}  // namespace wafersim::tb
