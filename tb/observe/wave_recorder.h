#pragma once
// VCD waveforms of the fabric and the NPUs (--waves): records the value changes the blocks report
// through hw::Probe for the selected signals, then writes FILE.vcd for the chosen time window and
// FILE.gtkw, a GTKWave save file that opens it with signals grouped per block. Signal names follow
// the module hierarchy (docs/outputs.md lists them).
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "hw/proto/probe.h"
#include "models/topology/topology.h"

namespace wafersim::tb {

struct WaveOptions {
  std::string file;                   // .vcd path
  double from_ns = 0;                 // window start
  double to_ns = -1;                  // window end (< 0: the end of the run)
  std::vector<std::string> patterns;  // glob patterns on hierarchical names (empty: everything)
};

class WaveRecorder : public hw::Probe {
 public:
  // `vcs` and `buffer_flits`: the fabric's VCs per port and slots per VC (credits start full).
  WaveRecorder(const WaveOptions& options, const topology::Topology& topology, int vcs,
               int buffer_flits);

  // Completes the .vcd (written as the run goes) and writes the .gtkw; `end` is the simulated end
  // of the run. Throws InputError when a file cannot be written.
  void finish(const sc_core::sc_time& end);
  size_t signal_count() const { return selected_count_; }

  void link_unit(int link, const sc_core::sc_time& start, const sc_core::sc_time& end,
                 const hw::TransferExt& unit) override;
  void credit_change(int link, int vc, int delta, const sc_core::sc_time& at) override;
  void buffer_change(int link, int vc, int delta, const sc_core::sc_time& at) override;
  void grant(int link, int from_link) override;
  void compute_busy(int rank, const sc_core::sc_time& start, const sc_core::sc_time& end) override;
  void nic_queue(int rank, int depth) override;
  void collective_step(int rank, int step) override;
  void switch_function(int node, hw::SwitchFunction function, const sc_core::sc_time& start,
                       const sc_core::sc_time& end) override;
  void switch_phase(int node, uint64_t phase, const sc_core::sc_time& at) override;
  void sparse_job(int rank, const sc_core::sc_time& start, const sc_core::sc_time& cycle,
                  const sparse::UnitTiming& timing) override;

 private:
  struct Signal {
    std::string scope;  // hierarchical scope, dot-separated
    std::string name;
    int width;
    std::string group;  // GTKWave group (the block)
    uint64_t initial;   // value before the first change
  };
  struct Change {
    uint64_t time_ps;
    uint32_t signal;
    bool delta;  // `value` is added to the signal (two's complement), not assigned
    uint64_t value;
  };
  void write_header();
  void dump_initial_values();
  // Writes every recorded change before `before_ps` (they are final) and forgets them.
  void flush(uint64_t before_ps);
  int add(const std::string& scope, const std::string& name, int width, const std::string& group,
          uint64_t initial = 0);
  void record(int signal, const sc_core::sc_time& at, uint64_t value, bool delta = false);
  void record_now(int signal, uint64_t value);

  WaveOptions options_;
  int vcs_;
  std::vector<Signal> signals_;
  size_t selected_count_ = 0;
  // Signal index per item (-1 when the item has no such signal).
  struct LinkSignals {
    int busy = -1, message = -1, packet = -1, vc = -1, grant = -1;
    std::vector<int> credits, depth;
  };
  std::vector<LinkSignals> link_;
  struct NpuSignals {
    int compute = -1, queue = -1, step = -1;
    // The sparse unit (NPUs only): busy, and per pipeline step its length in cycles, the entries
    // decoded and encoded (or MACs), and the cycles the port and the datapath sat idle.
    int sparse_busy = -1, sparse_step = -1, sparse_in = -1, sparse_out = -1,
        sparse_memory_stall = -1, sparse_datapath_stall = -1;
  };
  std::vector<NpuSignals> npu_;
  // Fred switches: the flows reducing and distributing in it at once, and the active phase.
  struct SwitchSignals {
    int reduce = -1, distribute = -1, phase = -1;
  };
  std::vector<SwitchSignals> switch_;  // per topology node
  std::vector<Change> changes_;        // not yet written, in the order reported

  static constexpr uint64_t kOpenEnd = ~uint64_t{0};
  static constexpr size_t kFlushEvery = 1 << 20;  // changes (24 MB)
  uint64_t from_ps_ = 0, to_ps_ = kOpenEnd;
  std::ofstream vcd_;
  std::vector<uint64_t> value_;  // each signal's value as last written (or due at the window start)
  bool dumped_ = false;          // initial values written
  uint64_t last_stamp_ = 0;
  std::vector<uint32_t> order_;  // signals by scope
};

}  // namespace wafersim::tb
