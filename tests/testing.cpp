#include "tests/testing.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <systemc>

// SystemC's library references sc_main; the tests bring their own main (STYLE.md pattern 1).
int sc_main(int, char*[]) {
  return 0;
}

int main(int argc, char** argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
  ::testing::InitGoogleTest(&argc, argv);
  // Any SystemC warning or error fails the test rather than scrolling by.
  sc_core::sc_report_handler::set_actions("/IEEE_Std_1666/deprecated", sc_core::SC_DO_NOTHING);
  sc_core::sc_report_handler::set_actions(sc_core::SC_WARNING,
                                          sc_core::SC_DISPLAY | sc_core::SC_THROW);
  return RUN_ALL_TESTS();
}

namespace wafersim::testing {

std::string source(const std::string& relative) {
  return std::string(WAFERSIM_SOURCE_DIR) + "/" + relative;
}

std::string temp_dir(const std::string& name) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string dir = std::string(WAFERSIM_BINARY_DIR) + "/test-output/" +
                    (info ? std::string(info->test_suite_name()) + "." + info->name() : "x") + "/" +
                    name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

static std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

CommandResult wafersim(const std::string& args) {
  std::string dir = temp_dir("cli");
  std::string cmd = std::string(WAFERSIM_BINARY_DIR) + "/wafersim " + args + " >" + dir +
                    "/out.txt 2>" + dir + "/err.txt </dev/null";
  int status = std::system(cmd.c_str());
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return {code, slurp(dir + "/out.txt"), slurp(dir + "/err.txt")};
}

int wafersim_stopped(const std::vector<std::string>& args, unsigned seconds, int signal,
                     const std::string& dir, std::string* err, const std::string& ready) {
  const std::string exe = std::string(WAFERSIM_BINARY_DIR) + "/wafersim";
  std::vector<char*> argv = {const_cast<char*>(exe.c_str())};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    freopen((dir + "/stdout.txt").c_str(), "w", stdout);
    freopen((dir + "/stderr.txt").c_str(), "w", stderr);
    execv(exe.c_str(), argv.data());
    _exit(127);
  }
  setpgid(pid, pid);
  sleep(seconds);
  int status = 0;
  bool ended = false;  // before saying `ready`
  for (int tenths = 0; !ready.empty() && tenths < 6000 && !ended; ++tenths) {
    if (slurp(dir + "/stderr.txt").find(ready) != std::string::npos) break;
    ended = waitpid(pid, &status, WNOHANG) == pid;
    if (!ended) usleep(100000);
  }
  if (!ended) {
    kill(-pid, signal);
    waitpid(pid, &status, 0);
  }
  if (err) *err = slurp(dir + "/stderr.txt");
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace wafersim::testing

#include "tb/chakra/trace.h"

namespace wafersim::testing {

std::string write_flows(const std::string& dir, int ranks, const std::vector<Flow>& flows) {
  std::vector<chakra::Trace> traces(ranks);
  int tag = 0;
  for (const auto& f : flows) {
    for (auto kind : {chakra::NodeKind::Send, chakra::NodeKind::Recv}) {
      bool send = kind == chakra::NodeKind::Send;
      chakra::Trace& trace = traces[send ? f.src : f.dst];
      chakra::TraceNode n;
      n.kind = kind;
      n.id = trace.nodes.size();
      n.name = (send ? "send" : "recv") + std::to_string(tag);
      n.comm_size = f.bytes;
      n.comm_src = f.src;
      n.comm_dst = f.dst;
      n.comm_tag = tag;
      trace.nodes.push_back(n);
    }
    ++tag;
  }
  std::string prefix = dir + "/flows";
  for (int r = 0; r < ranks; ++r)
    chakra::write_trace(prefix + "." + std::to_string(r) + ".et", traces[r]);
  return prefix;
}

nlohmann::json simulate(const tb::RunOptions& options) {
  std::ostringstream out, err;
  nlohmann::json report;
  int code = tb::run_simulation(options, out, err, &report);
  EXPECT_EQ(code, 0) << err.str();
  return report;
}

}  // namespace wafersim::testing

namespace wafersim::testing {
nlohmann::json run_report(const std::string& args) {
  static int n = 0;
  std::string dir = temp_dir("run" + std::to_string(n++));
  CommandResult r = wafersim("run --quiet --out " + dir + " " + args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::ifstream f(dir + "/report.json");
  nlohmann::json j;
  if (f) f >> j;
  return j;
}

nlohmann::json run_mesh_8x8(const std::string& prefix, const std::string& fidelity,
                            const std::string& sets) {
  return run_report("--platform " + source("configs/mesh_8x8.yaml") + " --workload " + prefix +
                    " --fidelity " + fidelity +
                    " --set network.injection_bandwidth_gbps=32 fabric.buffer_flits=32 " + sets);
}
}  // namespace wafersim::testing
