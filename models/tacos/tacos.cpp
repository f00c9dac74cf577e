#include "models/tacos/tacos.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <queue>
#include <random>
#include <stdexcept>

namespace wafersim::tacos {

using collectives::Buffer;
using collectives::Collective;
using collectives::DataRef;
using collectives::OpKind;
using collectives::Plan;

namespace {

void check_graph(const LinkGraph& g, const Options& o) {
  if (g.npus < 1) throw std::invalid_argument("synthesis needs at least one NPU");
  if (o.chunks_per_npu < 1 || o.chunks_per_npu > 4096)
    throw std::invalid_argument("chunks per NPU must be 1 to 4096, got " +
                                std::to_string(o.chunks_per_npu));
  if (static_cast<uint64_t>(g.npus) * static_cast<uint64_t>(o.chunks_per_npu) > (1u << 24))
    throw std::invalid_argument("at most 2^24 chunks in all (NPUs x chunks per NPU)");
  for (size_t i = 0; i < g.links.size(); ++i) {
    const Link& l = g.links[i];
    if (l.src < 0 || l.src >= g.npus || l.dst < 0 || l.dst >= g.npus || l.src == l.dst)
      throw std::invalid_argument("link " + std::to_string(i) + " (" + std::to_string(l.src) +
                                  " -> " + std::to_string(l.dst) +
                                  ") does not join two NPUs of the graph");
    if (!(l.bandwidth_gbps > 0) || !(l.alpha_ns >= 0) || !std::isfinite(l.alpha_ns))
      throw std::invalid_argument("link " + std::to_string(i) +
                                  " needs a bandwidth above 0 and a latency of 0 or more");
  }
}

double duration(const Link& l, uint64_t bytes) {
  return l.alpha_ns + static_cast<double>(bytes) / l.bandwidth_gbps;
}

// Holdings as bitsets: NPU v's chunks at words [v W, (v + 1) W).
class Bits {
 public:
  Bits(int npus, uint32_t chunks) : words_((chunks + 63) / 64), bits_(size_t(npus) * words_, 0) {}
  void set(int v, uint32_t c) { bits_[size_t(v) * words_ + c / 64] |= uint64_t{1} << (c % 64); }
  bool test(int v, uint32_t c) const { return bits_[size_t(v) * words_ + c / 64] >> (c % 64) & 1; }
  const uint64_t* row(int v) const { return bits_.data() + size_t(v) * words_; }
  size_t words() const { return words_; }

 private:
  size_t words_;
  std::vector<uint64_t> bits_;
};

}  // namespace

Schedule all_gather(const LinkGraph& g, const Options& o) {
  check_graph(g, o);
  const int n = g.npus;
  const uint32_t chunks = static_cast<uint32_t>(n) * static_cast<uint32_t>(o.chunks_per_npu);
  Schedule out;
  out.npus = n;
  out.chunks_per_npu = o.chunks_per_npu;
  out.chunk_bytes = o.chunk_bytes;
  Bits held(n, chunks), promised(n, chunks);  // promised: held or on its way
  for (int v = 0; v < n; ++v)
    for (int k = 0; k < o.chunks_per_npu; ++k) {
      held.set(v, static_cast<uint32_t>(v * o.chunks_per_npu + k));
      promised.set(v, static_cast<uint32_t>(v * o.chunks_per_npu + k));
    }
  std::vector<std::vector<int>> out_links(n);
  for (size_t i = 0; i < g.links.size(); ++i) out_links[g.links[i].src].push_back(int(i));
  std::mt19937_64 random(o.seed);

  // Arrivals, in time order (ties by link): the chunk reaches the link's destination and the link
  // is free again.
  struct Arrival {
    double time;
    int link;
    uint32_t chunk;
    bool operator>(const Arrival& a) const {
      return time != a.time ? time > a.time : link > a.link;
    }
  };
  std::priority_queue<Arrival, std::vector<Arrival>, std::greater<>> arrivals;
  std::vector<char> busy(g.links.size(), 0);
  // How many NPUs hold or are promised each chunk: links prefer the rarest chunk they can carry
  // (it has the fewest other ways to spread), and serve the neediest destinations first (most
  // chunks missing per incoming link).
  std::vector<uint32_t> copies(chunks, 1);
  std::vector<int64_t> missing(n, static_cast<int64_t>(chunks) - o.chunks_per_npu);
  std::vector<int> in_degree(n, 0);
  for (const Link& l : g.links) in_degree[l.dst]++;
  // Tries to start a transfer on every link of `candidates` at time t.
  auto match = [&](std::vector<int>& candidates, double t) {
    std::shuffle(candidates.begin(), candidates.end(), random);
    std::stable_sort(candidates.begin(), candidates.end(), [&](int a, int b) {
      const int da = g.links[a].dst, db = g.links[b].dst;
      return missing[da] * in_degree[db] > missing[db] * in_degree[da];
    });
    for (int l : candidates) {
      if (busy[l]) continue;
      const Link& link = g.links[l];
      const uint64_t* have = held.row(link.src);
      const uint64_t* taken = promised.row(link.dst);
      const size_t w = held.words();
      const size_t start = w > 1 ? random() % w : 0;
      uint32_t best = UINT32_MAX;
      for (size_t i = 0; i < w; ++i) {
        const size_t word = (start + i) % w;
        for (uint64_t free = have[word] & ~taken[word]; free; free &= free - 1) {
          const uint32_t chunk = static_cast<uint32_t>(word * 64 + __builtin_ctzll(free));
          if (best == UINT32_MAX || copies[chunk] < copies[best]) best = chunk;
        }
      }
      if (best == UINT32_MAX) continue;
      promised.set(link.dst, best);
      copies[best]++;
      missing[link.dst]--;
      busy[l] = 1;
      const double end = t + duration(link, o.chunk_bytes);
      out.transfers.push_back({l, best, t, end});
      arrivals.push({end, l, best});
    }
  };
  std::vector<int> candidates(g.links.size());
  for (size_t i = 0; i < candidates.size(); ++i) candidates[i] = int(i);
  match(candidates, 0);
  while (!arrivals.empty()) {
    const double t = arrivals.top().time;
    candidates.clear();
    std::vector<int> reached;
    while (!arrivals.empty() && arrivals.top().time == t) {
      const Arrival a = arrivals.top();
      arrivals.pop();
      busy[a.link] = 0;
      held.set(g.links[a.link].dst, a.chunk);
      candidates.push_back(a.link);
      reached.push_back(g.links[a.link].dst);
    }
    // A link sleeps while its source has nothing its destination lacks; new chunks wake it.
    std::sort(reached.begin(), reached.end());
    reached.erase(std::unique(reached.begin(), reached.end()), reached.end());
    for (int v : reached)
      for (int l : out_links[v]) candidates.push_back(l);
    std::sort(candidates.begin(), candidates.end());
    candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
    match(candidates, t);
    out.time_ns = t;
  }
  for (int v = 0; v < n; ++v)
    for (uint32_t c = 0; c < chunks; ++c)
      if (!held.test(v, c)) {
        const int owner = static_cast<int>(c) / o.chunks_per_npu;
        throw std::invalid_argument("NPU " + std::to_string(v) + " can never receive NPU " +
                                    std::to_string(owner) + "'s data: no path of links from NPU " +
                                    std::to_string(owner) + " to NPU " + std::to_string(v));
      }
  std::stable_sort(out.transfers.begin(), out.transfers.end(),
                   [](const Transfer& a, const Transfer& b) { return a.start_ns < b.start_ns; });
  return out;
}

namespace {

// Alpha of a transfer from the NPU that sends on `first` to the one that receives from `last`,
// over `middle` (nullptr: a switch, whose ports are `first` and `last`), in ns: when the head
// enters the last link. The tail follows it at the message's rate.
double alpha_ns(const topology::Link& first, const topology::Link* middle,
                const topology::Link& last, const FabricCosts& c, double clock_ghz) {
  const auto head = [&](const topology::Link& l) { return c.flit_bytes / l.bytes_per_cycle; };
  // A router takes a head in from the first cycle boundary after it arrives.
  const auto boundary = [](double cycles) { return std::ceil(cycles - 1e-9); };
  double cycles =
      boundary(c.endpoint_cycles + head(first) + first.latency_cycles) + c.router_cycles;
  if (middle) cycles = boundary(cycles + head(*middle) + middle->latency_cycles) + c.router_cycles;
  return (cycles + last.latency_cycles) / clock_ghz;
}

}  // namespace

LinkGraph link_graph(const topology::Topology& t, const FabricCosts& costs) {
  LinkGraph g;
  g.npus = t.npu_count();
  g.reduce_gbps = costs.reduce_gbps;
  const double clock = t.spec().clock_ghz;
  const auto& nodes = t.nodes();
  if (t.dims().size() > 1)
    throw std::invalid_argument(
        "tacos synthesizes for a mesh or a network of one dimension; this one has " +
        std::to_string(t.dims().size()) + " (use a built-in algorithm per dimension)");
  if (t.spec().shape == topology::Shape::Switch) {
    // Every NPU's port: its link to the switch and back.
    const int n = g.npus;
    std::vector<const topology::Link*> up(n, nullptr), down(n, nullptr);
    for (const topology::Link& l : t.links()) {
      if (nodes[l.src].kind == topology::NodeKind::Npu) up[nodes[l.src].rank] = &l;
      if (nodes[l.dst].kind == topology::NodeKind::Npu) down[nodes[l.dst].rank] = &l;
    }
    for (int u = 0; u < n; ++u)
      for (int v = 0; v < n; ++v) {
        if (u == v || !up[u] || !down[v]) continue;
        const double gbps =
            std::min(up[u]->bytes_per_cycle, down[v]->bytes_per_cycle) * clock / (n - 1);
        g.links.push_back({u, v, alpha_ns(*up[u], nullptr, *down[v], costs, clock), gbps});
      }
    return g;
  }
  // Per router: its NPU and the attach links to and from it.
  std::vector<int> npu_of(nodes.size(), -1);
  std::vector<const topology::Link*> inject(nodes.size(), nullptr), eject(nodes.size(), nullptr);
  // (I/O controllers are not NPUs: TACOS synthesizes over the NPUs, and their links stay out.)
  auto io = [&](int node) { return nodes[node].kind == topology::NodeKind::IoController; };
  for (const topology::Link& l : t.links()) {
    if (!l.attach || io(l.src) || io(l.dst)) continue;
    if (nodes[l.src].kind == topology::NodeKind::Npu) {
      if (npu_of[l.dst] >= 0)
        throw std::invalid_argument("router " + nodes[l.dst].name + " holds more than one NPU");
      npu_of[l.dst] = nodes[l.src].rank;
      inject[l.dst] = &l;
    } else {
      eject[l.src] = &l;
    }
  }
  for (const topology::Link& l : t.links()) {
    if (l.attach || io(l.src) || io(l.dst)) continue;
    const int u = npu_of[l.src], v = npu_of[l.dst];
    if (u < 0 || v < 0 || !eject[l.dst])
      throw std::invalid_argument("link " + l.name + " joins a router without an NPU");
    g.links.push_back({u, v, alpha_ns(*inject[l.src], &l, *eject[l.dst], costs, clock),
                       l.bytes_per_cycle * clock});
  }
  return g;
}

LinkGraph reduce_scatter_graph(const LinkGraph& g, uint64_t chunk_bytes) {
  LinkGraph reversed = g;
  for (Link& l : reversed.links) {
    std::swap(l.src, l.dst);
    if (g.reduce_gbps > 0) l.alpha_ns += static_cast<double>(chunk_bytes) / g.reduce_gbps;
  }
  return reversed;
}

double ingress_lower_bound_ns(const LinkGraph& g, const Options& o) {
  if (g.links.empty()) return -1;
  const Link& first = g.links.front();
  std::vector<int> in_degree(g.npus, 0);
  for (const Link& l : g.links) {
    if (l.alpha_ns != first.alpha_ns || l.bandwidth_gbps != first.bandwidth_gbps) return -1;
    in_degree[l.dst]++;
  }
  const int min_in = *std::min_element(in_degree.begin(), in_degree.end());
  if (min_in == 0) return -1;
  const int64_t needed = static_cast<int64_t>(g.npus - 1) * o.chunks_per_npu;
  const int64_t steps = (needed + min_in - 1) / min_in;
  return static_cast<double>(steps) * duration(first, o.chunk_bytes);
}

namespace {

// Writes a schedule's transfers into a plan. `reverse`: run it backwards on the reversed links
// (reduce-scatter): every transfer goes the other way, in reverse time order, and its receiver
// combines. `ready[v][c]`: ops after which NPU v may send chunk c (its arrivals so far); a send
// waits for all of them and for the previous send on its link.
void write(const Schedule& s, const LinkGraph& g, bool reverse, Buffer buffer,
           const std::vector<uint64_t>& chunk_bytes, uint32_t tag_base, Plan& plan,
           std::vector<std::vector<std::vector<uint32_t>>>& ready) {
  std::vector<int64_t> last_send(g.links.size(), -1);
  std::map<std::pair<int, int>, uint32_t> next_tag;
  std::vector<size_t> order(s.transfers.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = reverse ? order.size() - 1 - i : i;
  if (reverse)  // backwards in time: by the end time of the forward transfer, latest first
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return s.transfers[a].end_ns > s.transfers[b].end_ns;
    });
  for (size_t i : order) {
    const Transfer& t = s.transfers[i];
    const Link& link = g.links[t.link];
    const int from = reverse ? link.dst : link.src, to = reverse ? link.src : link.dst;
    const uint32_t tag = tag_base + next_tag[{from, to}]++;
    const uint64_t bytes = chunk_bytes[t.chunk];
    std::vector<uint32_t> deps = ready[from][t.chunk];
    if (last_send[t.link] >= 0) deps.push_back(static_cast<uint32_t>(last_send[t.link]));
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    last_send[t.link] = plan.ranks[from].add({OpKind::Send, to, bytes, tag}, deps,
                                             {0, t.chunk, t.chunk, 1, buffer, buffer, false});
    const uint32_t received = plan.ranks[to].add({OpKind::Recv, from, bytes, tag}, {},
                                                 {0, t.chunk, t.chunk, 1, buffer, buffer, reverse});
    // All-gather: the chunk is there, and it is final. Reduce-scatter: one more part of the sum.
    if (reverse)
      ready[to][t.chunk].push_back(received);
    else
      ready[to][t.chunk] = {received};
  }
}

}  // namespace

collectives::Plan synthesize(const LinkGraph& g, Collective collective, uint64_t bytes,
                             int chunks_per_npu, uint64_t seed, double* time_ns) {
  if (collective != Collective::AllGather && collective != Collective::ReduceScatter &&
      collective != Collective::AllReduce)
    throw std::invalid_argument(std::string("TACOS synthesizes all_gather, reduce_scatter and "
                                            "all_reduce, not ") +
                                collectives::to_string(collective));
  if (bytes == 0) throw std::invalid_argument("a collective needs a size above 0 bytes");
  const int n = g.npus;
  const uint64_t k = static_cast<uint64_t>(chunks_per_npu);
  const uint64_t total = static_cast<uint64_t>(n) * k;
  // The whole data: all-gather's comm_size is one rank's part.
  const uint64_t whole =
      collective == Collective::AllGather ? bytes * static_cast<uint64_t>(n) : bytes;
  std::vector<uint64_t> chunk_bytes(total);
  for (uint64_t c = 0; c < total; ++c) chunk_bytes[c] = collectives::share(whole, total, c);
  Options o{chunks_per_npu, std::max<uint64_t>(1, whole / total), seed};
  Plan plan;
  plan.algorithm = "tacos";
  plan.ranks.resize(n);
  plan.chunks = 1;
  plan.blocks_per_chunk = static_cast<uint32_t>(total);
  plan.input_blocks = plan.output_blocks = static_cast<uint32_t>(total);
  plan.in_place = true;
  std::vector<std::vector<std::vector<uint32_t>>> ready(n,
                                                        std::vector<std::vector<uint32_t>>(total));
  double time = 0;
  if (collective == Collective::ReduceScatter || collective == Collective::AllReduce) {
    const LinkGraph reversed = reduce_scatter_graph(g, o.chunk_bytes);
    const Schedule s = all_gather(reversed, o);
    // The reversed graph's link i is g's link i turned around: written backwards it runs on g.
    write(s, reversed, true,
          collective == Collective::ReduceScatter ? Buffer::Input : Buffer::Output, chunk_bytes, 0,
          plan, ready);
    time += s.time_ns;
    if (collective == Collective::ReduceScatter) plan.output_blocks = static_cast<uint32_t>(k);
  }
  if (collective == Collective::AllGather || collective == Collective::AllReduce) {
    const Schedule s = all_gather(g, o);
    if (collective == Collective::AllGather) {
      plan.input_blocks = static_cast<uint32_t>(k);
      for (auto& per_npu : ready)
        for (auto& r : per_npu) r.clear();
    }
    write(s, g, false, Buffer::Output, chunk_bytes,
          collective == Collective::AllReduce ? 1u << 31 : 0, plan, ready);
    time += s.time_ns;
  }
  if (time_ns) *time_ns = time;
  plan.finish();
  return plan;
}

}  // namespace wafersim::tacos
