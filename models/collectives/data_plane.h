#pragma once
// Real values for one collective while the fabric times it (`wafersim run --data`): every rank's
// buffers hold numbers, a send takes its blocks' values when it is issued, a receive writes or adds
// them when it completes, and at the end each rank's output is compared with the reference
// computed outside the fabric (the collective's promise, models/collectives/layout).
//
// Each block holds `elements` values (a cap: the bytes are still timed in full). Inputs are small
// integers, so FP32 sums are exact whatever the order; FP16 and BF16 values are rounded to their
// type whenever they are stored (a reduction adds in FP32, then rounds), and are compared with a
// tolerance of ranks x the type's epsilon x |expected| (at least 1 x epsilon).
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/collectives/layout.h"

namespace wafersim::collectives {

enum class Element { FP32, FP16, BF16 };
const char* to_string(Element e);
Element element_from_string(const std::string& text);  // fp32, fp16, bf16; std::invalid_argument

// The first wrong value of a rank's output.
struct DataMismatch {
  int rank = 0;  // position in the communicator
  uint32_t chunk = 0, block = 0, element = 0;
  double expected = 0, got = 0;
  std::string text() const;
};

class DataPlane {
 public:
  // `seed` varies the inputs between collectives (the replay passes the collective's instance).
  DataPlane(const Plan& plan, Collective collective, int root, Element type, uint32_t elements,
            uint64_t seed);

  // Bytes of values a plan of this shape holds for all ranks (the run refuses too large ones).
  static uint64_t bytes_needed(const Plan& plan, uint32_t elements);

  // Op k of position p was issued (a send reads its blocks now) / has finished (a receive, copy
  // or reduce writes its blocks now). Throws std::logic_error on a plan that breaks the layout
  // (the symbolic executor refuses those before a run).
  void issued(int p, uint32_t k);
  void finished(int p, uint32_t k);
  // Position p's output against the reference.
  std::optional<DataMismatch> check(int p);

 private:
  using Values = std::vector<float>;
  float input_value(int rank, uint64_t block, uint32_t e) const;
  float round(double v) const;
  Values read(int p, uint32_t k, Side side);
  void write(int p, uint32_t k, Values&& values);
  void add(Values& into, const Values& part) const;
  const Values& reference_sum(uint64_t block);
  float* at(int p, Buffer b, uint32_t c, uint32_t j) {
    return values_[p].data() + layout_.slot(p, b, c, j) * elements_;
  }

  const Layout layout_;
  const Element type_;
  const uint32_t elements_;
  const uint64_t seed_;
  std::vector<Values> values_;  // per position, slot by slot
  std::map<std::tuple<int, int, uint32_t>, std::deque<Values>> messages_;  // (from, to, tag)
  std::unordered_map<uint64_t, Values> relays_;                            // (position, op)
  std::unordered_map<uint64_t, Values> sums_;                              // reference sums
  // Per in-network flow, the sum of what its inputs gave, and how many gave.
  struct FlowSum {
    Values sum;
    size_t inputs = 0;
  };
  std::vector<FlowSum> flow_sums_;
  std::vector<uint32_t> index_;
};

}  // namespace wafersim::collectives
