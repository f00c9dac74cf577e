#include "models/collectives/data_plane.h"

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "models/common/hash.h"

namespace wafersim::collectives {

namespace {

// Round to nearest even at 16-bit precision.
float to_bf16(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  if ((bits & 0x7f800000u) == 0x7f800000u) return v;  // inf, nan
  bits += 0x7fffu + ((bits >> 16) & 1u);
  bits &= 0xffff0000u;
  std::memcpy(&v, &bits, 4);
  return v;
}

float to_fp16(float v) {
  return static_cast<float>(static_cast<_Float16>(v));
}

double epsilon(Element e) {
  switch (e) {
    case Element::FP16:
      return std::ldexp(1.0, -10);
    case Element::BF16:
      return std::ldexp(1.0, -7);
    case Element::FP32:
      break;
  }
  return 0;
}

}  // namespace

const char* to_string(Element e) {
  switch (e) {
    case Element::FP32:
      return "fp32";
    case Element::FP16:
      return "fp16";
    case Element::BF16:
      return "bf16";
  }
  return "?";
}

Element element_from_string(const std::string& text) {
  if (text == "fp32") return Element::FP32;
  if (text == "fp16") return Element::FP16;
  if (text == "bf16") return Element::BF16;
  throw std::invalid_argument("unknown element type '" + text + "' (expected fp32, fp16 or bf16)");
}

std::string DataMismatch::text() const {
  auto shown = [](double v) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.9g", v);
    return std::string(buffer);
  };
  return "rank " + std::to_string(rank) + " chunk " + std::to_string(chunk) + " block " +
         std::to_string(block) + " element " + std::to_string(element) + ": expected " +
         shown(expected) + ", got " + shown(got);
}

DataPlane::DataPlane(const Plan& plan, Collective collective, int root, Element type,
                     uint32_t elements, uint64_t seed)
    : layout_(plan, collective, root), type_(type), elements_(elements), seed_(seed) {
  const std::string shape = layout_.check_shape();
  if (!shape.empty()) throw std::logic_error(shape);
  const int n = layout_.ranks();
  values_.assign(n, Values(layout_.slots_per_rank() * elements_, std::nanf("")));
  for (int r = 0; r < n; ++r)
    for (uint32_t c = 0; c < plan.chunks; ++c)
      for (uint32_t j = 0; j < plan.input_blocks; ++j) {
        const uint64_t block = layout_.initial(r, c, j);
        if (block == Layout::kNothing) continue;
        float* v = at(r, Buffer::Input, c, j);
        for (uint32_t e = 0; e < elements_; ++e) v[e] = input_value(r, block, e);
      }
}

uint64_t DataPlane::bytes_needed(const Plan& plan, uint32_t elements) {
  const Layout layout(plan, Collective::Custom, 0);
  return layout.slots_per_rank() * elements * sizeof(float) * static_cast<uint64_t>(plan.size());
}

// An integer from -4 to 4, exact in every element type, different per rank, block and element.
float DataPlane::input_value(int rank, uint64_t block, uint32_t e) const {
  const uint64_t h = mix64(seed_ ^ mix64(block ^ mix64(static_cast<uint64_t>(rank) ^ mix64(e))));
  return static_cast<float>(static_cast<int>(h % 9) - 4);
}

float DataPlane::round(double v) const {
  switch (type_) {
    case Element::FP16:
      return to_fp16(static_cast<float>(v));
    case Element::BF16:
      return to_bf16(static_cast<float>(v));
    case Element::FP32:
      break;
  }
  return static_cast<float>(v);
}

DataPlane::Values DataPlane::read(int p, uint32_t k, Side side) {
  const DataRef& d = layout_.plan().of(p).data[k];
  if (d.buffer(side) == Buffer::Relay) {
    auto it = relays_.find((static_cast<uint64_t>(p) << 32) | d.first(side));
    if (it == relays_.end())
      throw std::logic_error(layout_.where(p, k) + " forwards a relay that holds nothing");
    return it->second;
  }
  const std::string problem = layout_.blocks(p, k, side, index_);
  if (!problem.empty()) throw std::logic_error(problem);
  Values out;
  out.reserve(index_.size() * elements_);
  for (uint32_t j : index_) {
    const float* v = at(p, d.buffer(side), d.chunk, j);
    out.insert(out.end(), v, v + elements_);
  }
  return out;
}

void DataPlane::write(int p, uint32_t k, Values&& values) {
  const DataRef& d = layout_.plan().of(p).data[k];
  if (d.dst == Buffer::Relay) {
    relays_[(static_cast<uint64_t>(p) << 32) | k] = std::move(values);
    return;
  }
  const std::string problem = layout_.blocks(p, k, Side::Destination, index_);
  if (!problem.empty()) throw std::logic_error(problem);
  if (values.size() != index_.size() * elements_)
    throw std::logic_error(layout_.where(p, k) + " receives a message of another size");
  for (size_t t = 0; t < index_.size(); ++t)
    std::memcpy(at(p, d.dst, d.chunk, index_[t]), values.data() + t * elements_,
                elements_ * sizeof(float));
}

void DataPlane::add(Values& into, const Values& part) const {
  if (into.size() != part.size())
    throw std::logic_error("a reduction combines blocks of different sizes");
  for (size_t i = 0; i < into.size(); ++i)
    into[i] = round(static_cast<double>(into[i]) + static_cast<double>(part[i]));
}

void DataPlane::issued(int p, uint32_t k) {
  const Op& op = layout_.plan().of(p).ops[k];
  if (op.kind == OpKind::Flow) {  // an input gives its blocks to the flow's sum
    if (!layout_.plan().flows[op.peer].has_input(p)) return;
    if (flow_sums_.empty()) flow_sums_.resize(layout_.plan().flows.size());
    FlowSum& f = flow_sums_[op.peer];
    Values part = read(p, k, Side::Source);
    if (f.inputs++ == 0)
      f.sum = std::move(part);
    else
      add(f.sum, part);
    return;
  }
  if (op.kind != OpKind::Send) return;
  messages_[{p, layout_.plan().peer_of(p, op), op.tag}].push_back(read(p, k, Side::Source));
}

void DataPlane::finished(int p, uint32_t k) {
  const Op& op = layout_.plan().of(p).ops[k];
  const DataRef& d = layout_.plan().of(p).data[k];
  switch (op.kind) {
    case OpKind::Recv: {
      auto& queue = messages_[{layout_.plan().peer_of(p, op), p, op.tag}];
      if (queue.empty()) throw std::logic_error(layout_.where(p, k) + " received no values");
      Values payload = std::move(queue.front());
      queue.pop_front();
      if (d.reduce) {
        Values local = read(p, k, Side::Source);
        add(local, payload);
        payload = std::move(local);
      }
      write(p, k, std::move(payload));
      return;
    }
    case OpKind::Flow: {  // an output takes the sum, once every input has given
      const FlowSpec& spec = layout_.plan().flows[op.peer];
      if (!spec.has_output(p)) return;
      if (flow_sums_.empty() || flow_sums_[op.peer].inputs < spec.inputs.size())
        throw std::logic_error(layout_.where(p, k) + " took flow " + std::to_string(op.peer) +
                               "'s result before all its inputs gave");
      write(p, k, Values(flow_sums_[op.peer].sum));
      return;
    }
    case OpKind::Copy:
      if (d.count > 0) write(p, k, read(p, k, Side::Source));
      return;
    case OpKind::Reduce:
      if (d.count > 0) {
        Values into = read(p, k, Side::Destination);
        add(into, read(p, k, Side::Source));
        write(p, k, std::move(into));
      }
      return;
    default:
      return;
  }
}

const DataPlane::Values& DataPlane::reference_sum(uint64_t block) {
  auto it = sums_.find(block);
  if (it != sums_.end()) return it->second;
  Values sum(elements_);
  for (uint32_t e = 0; e < elements_; ++e) {
    double total = 0;
    for (int r = 0; r < layout_.ranks(); ++r) total += input_value(r, block, e);
    sum[e] = static_cast<float>(total);  // exact: small integers
  }
  return sums_.emplace(block, std::move(sum)).first->second;
}

std::optional<DataMismatch> DataPlane::check(int p) {
  const Plan& plan = layout_.plan();
  const double eps = epsilon(type_);
  for (uint32_t c = 0; c < plan.chunks; ++c)
    for (uint32_t j = 0; j < plan.output_blocks; ++j) {
      const Layout::Want want = layout_.expected(p, c, j);
      if (want.kind == Layout::Want::Anything) continue;
      const float* got = at(p, Buffer::Output, c, j);
      for (uint32_t e = 0; e < elements_; ++e) {
        const double expected = want.kind == Layout::Want::SumOfAll
                                    ? reference_sum(want.block)[e]
                                    : input_value(want.owner, want.block, e);
        const double tolerance = eps * layout_.ranks() * std::max(1.0, std::fabs(expected));
        if (!(std::fabs(got[e] - expected) <= tolerance))  // NaN (never written) fails too
          return DataMismatch{p, c, j, e, expected, got[e]};
      }
    }
  return std::nullopt;
}

}  // namespace wafersim::collectives
