#pragma once
// Closed-form alpha-beta estimates of collective times, the independent reference the tests compare
// the cycle-level model against (and a quick estimate for users).
#include <cstdint>

namespace wafersim::analytical {

// One message of `bytes` over `hops` store-free (cut-through) hops: latency of every hop plus one
// serialisation at the bottleneck bandwidth (bytes per ns).
double message_ns(uint64_t bytes, int hops, double hop_latency_ns, double bytes_per_ns);

// Unidirectional ring all-reduce of `bytes` on `n` ranks, `chunks` chunks run one after another:
// 2(n-1) steps per chunk, each step a message of bytes/(chunks*n) to the neighbour plus a reduction
// (reduce-scatter half only) at `reduce_bytes_per_ns`.
double ring_all_reduce_ns(uint64_t bytes, int n, int chunks, double link_latency_ns,
                          double bytes_per_ns, double reduce_bytes_per_ns);

// The bandwidth term alone: 2(n-1)/n x bytes / bandwidth.
double ring_all_reduce_bandwidth_ns(uint64_t bytes, int n, double bytes_per_ns);

}  // namespace wafersim::analytical
