// The `wafersim` command line: run, check, study, traffic, generate, inspect. See docs/usage.md;
// exit codes in tb/common/exit_codes.h.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <systemc>

#include "models/common/error.h"
#include "tb/chakra/generator.h"
#include "tb/chakra/sparse_workload.h"
#include "tb/chakra/workload_check.h"
#include "tb/cli/check.h"
#include "tb/cli/validators.h"
#include "tb/collectives/export_collective.h"
#include "tb/common/error_path.h"
#include "tb/common/huge_pages.h"
#include "tb/common/stop_signals.h"
#include "tb/run/run.h"
#include "tb/sparse/sparse_advise.h"
#include "tb/sparse/sparse_study.h"
#include "tb/study/study.h"
#include "tb/traffic/traffic_run.h"

using namespace wafersim;

namespace {
// The longest synthetic traffic run: about a minute of CPU at 8x8 (docs/usage.md).
constexpr long long kMaxTrafficCycles = 100000000;

// Runs before any shared library's static initialisers, SystemC's 3 MiB string heap among them
// (tb/common/huge_pages.h). Nothing of ours is initialised yet, nor the C library's `environ`.
void back_heap_before_libraries(int, char**, char** env) {
  tb::back_small_heap_with_huge_pages(env);
}
using PreinitFunction = void (*)(int, char**, char**);
__attribute__((section(".preinit_array"), used)) const PreinitFunction kBackHeapBeforeLibraries =
    back_heap_before_libraries;
}  // namespace

// Our own main, so the SystemC banner can be switched off before the kernel starts.
int main(int argc, char* argv[]) {
  // `run` and `traffic` restart with huge pages only for a large platform, once they know its size
  // (tb/common/huge_pages.h); the other subcommands at once, but not for --help or --version.
  tb::keep_arguments(argv);
  const std::string subcommand = argc > 1 ? argv[1] : "";
  const bool sizes_platform_first = subcommand == "run" || subcommand == "traffic";
  if (!sizes_platform_first && !subcommand.empty() && subcommand[0] != '-')
    tb::restart_with_huge_pages(argv);
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  // Output piped into `head` that closes early: the run goes on and writes its files; the summary
  // line simply goes nowhere (rather than the process dying of SIGPIPE).
  std::signal(SIGPIPE, SIG_IGN);
  return sc_core::sc_elab_and_sim(argc, argv);
}

namespace {
int dispatch(int argc, char* argv[]);
}

int sc_main(int argc, char* argv[]) {
  tb::quiet_systemc_reports();
  const tb::StopSignals stop_signals;
  return tb::run_guarded([&]() { return dispatch(argc, argv); }, std::cerr);
}

namespace {

// The platform: a wafersim YAML or ASTRA-sim's pair of files, with overrides.
void add_platform_options(CLI::App* cmd, tb::RunOptions& o) {
  cmd->add_option("--platform", o.platform, "wafersim platform YAML (configs/*.yaml)");
  cmd->add_option("--astra-network", o.astra_network, "ASTRA-sim analytical network .yml");
  cmd->add_option("--astra-system", o.astra_system, "ASTRA-sim system .json");
  cmd->add_option("--set", o.overrides, "override a platform key: section.key=value")->take_all();
}

// The options `run` and `check` share: the platform, the workload and how to read it.
void add_workload_options(CLI::App* cmd, tb::RunOptions& o, std::string& deps) {
  add_platform_options(cmd, o);
  cmd->add_option("--workload", o.workload.prefix,
                  "trace prefix: files <prefix>.<rank>.et (or .et.gz)")
      ->required();
  cmd->add_option("--deps", deps, "dependencies honoured: all (data + control) | data")
      ->check(CLI::IsMember({"all", "data"}));
  cmd->add_option("--size-unit", o.workload.size_unit_bytes,
                  "bytes per unit of comm_size / tensor_size (e.g. 2 for FP16 element counts)")
      ->check(tb::whole_number(1, 1 << 30));
  cmd->add_option("--comm-groups", o.workload.comm_groups,
                  "communicator groups JSON (default: <trace dir>/workload.json if present)");
}

chakra::DependencyMode dependency_mode(const std::string& deps) {
  return deps == "data" ? chakra::DependencyMode::DataOnly : chakra::DependencyMode::DataAndControl;
}

int dispatch(int argc, char* argv[]) {
  CLI::App app{"wafersim: a SystemC / TLM-2.0 cycle-level simulator of distributed DNN training"};
  app.require_subcommand(1);

  tb::RunOptions run;
  std::string deps = "all";
  bool quiet = false;
  auto* run_cmd = app.add_subcommand("run", "replay a Chakra workload on a platform");
  add_workload_options(run_cmd, run, deps);
  run_cmd->add_option("--out", run.out_dir, "output folder for report.json");
  run_cmd->add_option("--fidelity", run.fidelity,
                      "flit | packet | message (overrides the platform)");
  run_cmd->add_flag("--quiet", quiet, "print nothing but errors (no progress line)");
  run_cmd->add_option("--waves", run.waves.file, "write a VCD waveform (and a .gtkw beside it)");
  run_cmd->add_option("--waves-from", run.waves.from_ns, "waveform window start, ns (default 0)")
      ->check(tb::real_number(0, 1e12));
  run_cmd->add_option("--waves-to", run.waves.to_ns, "waveform window end, ns (default: the end)")
      ->check(tb::real_number(0, 1e12));
  run_cmd
      ->add_option("--waves-select", run.waves.patterns,
                   "signals to trace: glob on hierarchical names, e.g. 'platform.router3.*' "
                   "(repeatable; default all)")
      ->take_all();
  run_cmd->add_option("--timeline", run.timeline,
                      "write a Perfetto / Chrome trace-event JSON timeline");
  run_cmd->add_flag("--plots", run.plots,
                    "draw link_utilisation.png and npu_time.png into --out (gnuplot)");
  std::string data_type = "fp32";
  run_cmd->add_flag("--data", run.data.enabled,
                    "collectives carry real values; every rank's result is checked (data_check)");
  run_cmd->add_option("--data-type", data_type, "fp32 | fp16 | bf16 (default fp32)")
      ->check(CLI::IsMember({"fp32", "fp16", "bf16"}));
  run_cmd
      ->add_option("--data-elements", run.data.elements,
                   "values per block of a collective's data (default 16; bytes are timed in "
                   "full)")
      ->check(tb::whole_number(1, 65536));

  std::string study_file, study_out;
  int jobs = 1;
  auto* study_cmd = app.add_subcommand("study", "run a list or grid of runs and tabulate them");
  study_cmd->add_option("file", study_file, "study YAML (configs/studies/*.yaml)")->required();
  study_cmd->add_option("--out", study_out, "output folder for results.csv and one folder per run")
      ->required();
  study_cmd->add_option("-j,--jobs", jobs, "runs at a time")->check(tb::whole_number(1, 256));

  std::string gen_prefix, gen_collective = "all_reduce";
  chakra::ParallelOptions gen_parallel;
  chakra::MicrobenchmarkSpec gen;
  auto* gen_cmd = app.add_subcommand("generate", "write a collective microbenchmark as Chakra ET");
  gen_cmd->add_option("--prefix", gen_prefix, "output prefix: files <prefix>.<rank>.et")
      ->required();
  gen_cmd->add_option("--collective", gen_collective,
                      "all_reduce | all_gather | reduce_scatter | all_to_all | broadcast | reduce");
  gen_cmd->add_option("--bytes", gen.bytes, "comm_size in bytes (all_gather: per rank)")
      ->check(tb::whole_number(1, 1ll << 50));
  gen_cmd->add_option("--ranks", gen.ranks, "number of ranks")->check(tb::whole_number(1, 4096));
  gen_cmd->add_option("--iterations", gen.iterations, "collectives in sequence")
      ->check(tb::whole_number(1, 1000000));
  gen_cmd->add_option(
      "--parallelism", gen_parallel.parallelism,
      "MP,DP,PP (e.g. 2,5,2): ranks placed MP first, then PP, then DP (with --group)");
  gen_cmd->add_option("--group", gen_parallel.group,
                      "mp | dp | pp: every group of that kind runs the collective at once "
                      "(groups written to the prefix's folder as workload.json)");
  gen_cmd->add_option("--placement", gen_parallel.placement,
                      "with --parallelism: the kinds' nesting, innermost first (default mp,pp,dp: "
                      "MP groups on consecutive positions, then PP, then DP)");
  gen_cmd
      ->add_option("--snake-columns", gen_parallel.snake_columns,
                   "with --parallelism: position i is the i-th NPU along a boustrophedon of a "
                   "mesh of this many columns (consecutive positions are neighbours)")
      ->check(tb::whole_number(1, 4096));
  gen_cmd->add_option("--compute-us", gen.compute_micros, "compute before each collective, in us")
      ->check(tb::whole_number(0, 1ll << 44));
  gen_cmd
      ->add_option("--io-controllers", gen.io_controllers,
                   "I/O streams: each of this many I/O controllers (ranks after the NPUs) runs "
                   "the collective (broadcast: weights in; reduce: gradients out) with every NPU, "
                   "all at once")
      ->check(tb::whole_number(0, 4096));

  std::string gen_workload = "collective";
  chakra::SparseMlpSpec gen_sparse;
  gen_cmd
      ->add_option("--workload", gen_workload,
                   "collective (a microbenchmark) | sparse-mlp (a pruned MLP on the sparse "
                   "units, data parallel: docs/sparse.md)")
      ->check(CLI::IsMember({"collective", "sparse-mlp"}));
  gen_cmd->add_option("--layers", gen_sparse.layers, "sparse-mlp: layers")
      ->check(tb::whole_number(1, 1000000));
  gen_cmd->add_option("--hidden", gen_sparse.hidden, "sparse-mlp: weights are hidden x hidden")
      ->check(tb::whole_number(1, 1ll << 20));
  gen_cmd->add_option("--batch", gen_sparse.batch, "sparse-mlp: activation columns (SpMM's B)")
      ->check(tb::whole_number(1, 1ll << 20));
  gen_cmd
      ->add_option("--densities", gen_sparse.densities,
                   "sparse-mlp: weight density per layer, repeated in turn (e.g. 0.5,0.1,0.02)")
      ->delimiter(',');
  gen_cmd->add_option("--sparse-format", gen_sparse.format,
                      "sparse-mlp: the weights' format, or auto (sparse-advise's choice)");
  gen_cmd->add_flag("--dense-layers", gen_sparse.dense_layers,
                    "sparse-mlp: the same layers as dense COMP nodes (roofline), for comparison");

  tb::SparseAdviseOptions advise;
  auto* advise_cmd = app.add_subcommand(
      "sparse-advise", "each compression format's size and the sparse unit's cycles for a tensor");
  advise_cmd->add_option("--shape", advise.shape, "ROWSxCOLS, e.g. 4096x1024")->required();
  advise_cmd->add_option("--density", advise.density, "non-zeros / positions, in [0, 1]")
      ->required();
  advise_cmd->add_option("--op", advise.op,
                         "spmv | spmm: also the unit's compute cycles per format");
  advise_cmd->add_option("--n", advise.n, "spmm: the dense B's columns (default 64)")
      ->check(tb::whole_number(1, 1ll << 30));
  advise_cmd->add_option("--index-bytes", advise.index_bytes, "index width, bytes (default 4)")
      ->check(CLI::IsMember({1, 2, 4, 8}));
  advise_cmd->add_option("--value-bytes", advise.value_bytes, "value width, bytes (default 4)")
      ->check(CLI::IsMember({1, 2, 4, 8}));
  add_platform_options(advise_cmd, advise.platform);

  std::string sparse_study_file, sparse_study_out;
  auto* sparse_study_cmd =
      app.add_subcommand("sparse-study",
                         "the sparse unit's conversions against software on this CPU, and the "
                         "compactness map (configs/studies/sparse_conversion.yaml)");
  sparse_study_cmd->add_option("file", sparse_study_file, "study YAML")->required();
  sparse_study_cmd->add_option("--out", sparse_study_out, "output folder")->required();

  tb::TrafficOptions traffic;
  bool traffic_quiet = false;
  auto* traffic_cmd = app.add_subcommand(
      "traffic", "synthetic traffic on a platform's fabric (BookSim-comparable latency and load)");
  traffic_cmd->add_option("--platform", traffic.platform.platform, "wafersim platform YAML")
      ->required();
  traffic_cmd->add_option("--set", traffic.platform.overrides, "override a platform key")
      ->take_all();
  traffic_cmd->add_option("--fidelity", traffic.platform.fidelity, "flit | packet");
  traffic_cmd
      ->add_option("--pattern", traffic.pattern,
                   "uniform | transpose | bit_complement | hotspot | nearest_neighbour")
      ->required();
  traffic_cmd
      ->add_option("--rate", traffic.rates,
                   "offered load in flits/node/cycle; several values (or a,b,c) run a sweep")
      ->required()
      ->delimiter(',')
      ->check(tb::real_number(1e-9, 1));
  traffic_cmd->add_option("--packet-flits", traffic.spec.packet_flits, "packet length, flits")
      ->check(tb::whole_number(1, 65536));
  traffic_cmd
      ->add_option("--warmup-cycles", traffic.spec.warmup_cycles,
                   "cycles before measuring (default 1000)")
      ->check(tb::whole_number(0, kMaxTrafficCycles));
  traffic_cmd
      ->add_option("--measure-cycles", traffic.spec.measure_cycles,
                   "measurement window, cycles (default 10000)")
      ->check(tb::whole_number(1, kMaxTrafficCycles));
  traffic_cmd
      ->add_option("--drain-cycles", traffic.spec.drain_cycles,
                   "cycles allowed after the window for measured packets (default 20000)")
      ->check(tb::whole_number(0, kMaxTrafficCycles));
  traffic_cmd
      ->add_option("--latency-threshold", traffic.spec.latency_threshold_cycles,
                   "average latency (cycles) above which the point counts as saturated "
                   "(default 0: off; BookSim uses 500)")
      ->check(tb::real_number(0, 1e12));
  traffic_cmd->add_option("--seed", traffic.spec.seed, "random seed (default 1)")
      ->check(tb::whole_number(0, 1ll << 62));
  traffic_cmd
      ->add_option("--hotspot", traffic.spec.hotspot,
                   "hotspot pattern: destination NPU (default: the middle one)")
      ->check(tb::whole_number(0, 4095));
  traffic_cmd
      ->add_option("--hotspot-fraction", traffic.spec.hotspot_fraction,
                   "hotspot pattern: share of packets sent to the hotspot (default 0.5)")
      ->check(tb::real_number(0, 1));
  traffic_cmd->add_option("--out", traffic.platform.out_dir, "output folder")->required();
  traffic_cmd->add_option("-j,--jobs", traffic.jobs, "sweep points at a time")
      ->check(tb::whole_number(1, 256));
  traffic_cmd->add_flag("--plots", traffic.plots, "sweep: draw latency_load.png with gnuplot");
  traffic_cmd->add_flag("--quiet", traffic_quiet, "print nothing but errors");

  std::string inspect_file;
  auto* inspect_cmd = app.add_subcommand(
      "inspect", "print the nodes of one .et file, and the problems it shows on its own");
  inspect_cmd->add_option("file", inspect_file, "a Chakra .et file (plain or gzip)")->required();

  tb::RunOptions check;
  std::string check_deps = "all";
  tb::ExportOptions export_options;
  auto* export_cmd = app.add_subcommand(
      "export-collective",
      "write the plan a platform runs for one collective as MSCCL XML or Chakra graphs");
  add_platform_options(export_cmd, export_options.platform);
  export_cmd
      ->add_option("--collective", export_options.collective,
                   "all_reduce | all_gather | reduce_scatter | all_to_all | broadcast | reduce")
      ->required();
  export_cmd
      ->add_option("--size", export_options.bytes,
                   "bytes (Chakra's comm_size: for all_gather, each rank's part)")
      ->required()
      ->check(tb::whole_number(1, 1ull << 50));
  export_cmd->add_option("--root", export_options.root, "root rank of broadcast / reduce");
  export_cmd->add_option("--format", export_options.format, "msccl | chakra")
      ->required()
      ->check(CLI::IsMember({"msccl", "chakra"}));
  export_cmd->add_option("--out", export_options.out_dir, "output folder")->required();
  tb::SynthOptions synth;
  auto* synth_cmd = app.add_subcommand(
      "synth", "synthesize a collective for the platform's topology (TACOS) and write it out");
  add_platform_options(synth_cmd, synth.platform);
  synth_cmd
      ->add_option("--collective", synth.collective, "all_gather | reduce_scatter | all_reduce")
      ->required()
      ->check(CLI::IsMember({"all_gather", "reduce_scatter", "all_reduce"}));
  synth_cmd->add_option("--size", synth.bytes, "bytes (Chakra's comm_size)")
      ->required()
      ->check(tb::whole_number(1, 1ull << 50));
  synth_cmd->add_option("--chunks", synth.chunks_per_npu, "chunks per NPU (default 1)")
      ->check(tb::whole_number(1, 4096));
  synth_cmd->add_option("--seed", synth.seed, "random seed of the matching (default 1)");
  synth_cmd->add_option("--out", synth.out_dir, "output folder")->required();
  auto* check_cmd = app.add_subcommand(
      "check", "validate a workload against a platform without simulating it (a trace linter)");
  add_workload_options(check_cmd, check, check_deps);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One exit code for every usage error (CLI11's own codes are 100 and up).
    std::cerr << "wafersim: error: command line: " << e.what() << "\n"
              << "run 'wafersim "
              << (app.get_subcommands().empty() ? std::string()
                                                : app.get_subcommands().front()->get_name() + " ")
              << "--help' for the options\n";
    return tb::kInputError;
  }

  if (*run_cmd) {
    run.workload.dependencies = dependency_mode(deps);
    std::ostringstream sink;
    run.progress = !quiet;
    if (run.plots && run.out_dir.empty())
      throw InputError("command line", "--plots", "needs --out DIR");
    run.data.type = collectives::element_from_string(data_type);
    return tb::run_simulation(run, quiet ? static_cast<std::ostream&>(sink) : std::cout, std::cerr);
  }
  if (*advise_cmd) return tb::sparse_advise(advise, std::cout);
  if (*sparse_study_cmd)
    return tb::run_sparse_study(sparse_study_file, sparse_study_out, std::cout);
  if (*export_cmd) return tb::export_collective(export_options, std::cout);
  if (*synth_cmd) return tb::synth_collective(synth, std::cout);
  if (*check_cmd) {
    check.workload.dependencies = dependency_mode(check_deps);
    return tb::check_workload_command(check, std::cout, std::cerr);
  }
  if (*traffic_cmd) {
    std::ostringstream sink;
    std::ostream& out = traffic_quiet ? static_cast<std::ostream&>(sink) : std::cout;
    traffic.platform.progress = !traffic_quiet;
    for (size_t i = 0; i < traffic.rates.size(); ++i)
      for (size_t k = 0; k < i; ++k)
        if (traffic.rates[i] == traffic.rates[k])
          throw InputError(
              "command line", "--rate",
              fmt::format("{} is given twice: each rate is one point", traffic.rates[i]));
    if (traffic.rates.size() == 1) return tb::run_traffic(traffic, out, std::cerr);
    // A sweep: every point is its own process with the same options but one rate.
    std::vector<std::string> point = {"--platform", traffic.platform.platform, "--pattern",
                                      traffic.pattern};
    auto add = [&](const std::string& flag, const std::string& value) {
      point.push_back(flag);
      point.push_back(value);
    };
    for (const auto& o : traffic.platform.overrides) add("--set", o);
    if (!traffic.platform.fidelity.empty()) add("--fidelity", traffic.platform.fidelity);
    for (auto* opt : traffic_cmd->get_options()) {
      const std::string name = opt->get_name();
      static const std::set<std::string> forwarded = {
          "--packet-flits",      "--warmup-cycles", "--measure-cycles", "--drain-cycles",
          "--latency-threshold", "--seed",          "--hotspot",        "--hotspot-fraction"};
      if (forwarded.count(name) && opt->count() > 0) add(name, opt->as<std::string>());
    }
    std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
    return tb::run_traffic_sweep(traffic, point, self, out, std::cerr);
  }
  if (*study_cmd) {
    tb::Study study = tb::load_study(study_file);
    std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
    return tb::run_study(study, self, study_out, jobs, std::cout, std::cerr);
  }
  if (*inspect_cmd) return tb::inspect_trace(inspect_file, std::cout, std::cerr);
  if (*gen_cmd && gen_workload == "sparse-mlp") {
    gen_sparse.ranks = gen.ranks;
    try {
      chakra::check_sparse_mlp(gen_sparse);
    } catch (const std::invalid_argument& e) {
      throw InputError("command line", "generate --workload sparse-mlp", e.what());
    }
    chakra::write_sparse_mlp(gen_prefix, gen_sparse);
    std::cout << "wrote " << gen_sparse.ranks << " traces " << gen_prefix << ".<rank>.et ("
              << gen_sparse.layers << " " << (gen_sparse.dense_layers ? "dense" : "sparse")
              << " layers)\n";
    return 0;
  }
  if (*gen_cmd) {
    try {
      gen.collective = chakra::collective_from_string(gen_collective);
    } catch (const std::invalid_argument& e) {
      throw InputError("command line", "--collective", e.what());
    }
    try {
      chakra::apply_parallelism(gen, gen_parallel, gen_cmd->get_option("--ranks")->count() > 0);
    } catch (const std::invalid_argument& e) {
      throw InputError("command line", "--parallelism, --group, --placement, --snake-columns",
                       e.what());
    }
    try {
      chakra::check_microbenchmark(gen);
    } catch (const std::invalid_argument& e) {
      throw InputError("command line", "--io-controllers", e.what());
    }
    chakra::write_microbenchmark(gen_prefix, gen);
    std::cout << "wrote " << gen.ranks + gen.io_controllers << " traces " << gen_prefix
              << ".<rank>.et\n";
    return 0;
  }
  return 0;
}

}  // namespace
