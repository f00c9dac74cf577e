#include "models/analytical/alpha_beta.h"

namespace wafersim::analytical {

double message_ns(uint64_t bytes, int hops, double hop_latency_ns, double bytes_per_ns) {
  return hops * hop_latency_ns + static_cast<double>(bytes) / bytes_per_ns;
}

double ring_all_reduce_ns(uint64_t bytes, int n, int chunks, double link_latency_ns,
                          double bytes_per_ns, double reduce_bytes_per_ns) {
  const double block = static_cast<double>(bytes) / chunks / n;
  const double step = link_latency_ns + block / bytes_per_ns;
  const double reduce = reduce_bytes_per_ns > 0 ? block / reduce_bytes_per_ns : 0;
  return chunks * ((n - 1) * (step + reduce) + (n - 1) * step);
}

double ring_all_reduce_bandwidth_ns(uint64_t bytes, int n, double bytes_per_ns) {
  return 2.0 * (n - 1) / n * static_cast<double>(bytes) / bytes_per_ns;
}

}  // namespace wafersim::analytical
