#include "bench/child_process.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace wafersim::bench {

namespace {

double seconds(const struct rusage& usage) {
  return usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec +
         usage.ru_stime.tv_usec / 1e6;
}

constexpr const char* kTime = "/usr/bin/time";  // GNU time (Debian's `time`)

}  // namespace

ProcessFigures run_child(const std::string& command, const std::string& log) {
  // The peak RSS comes from GNU time, not from wait4: a forked child starts with this process's
  // resident pages counted, and exec keeps that high-water mark, so wait4 would report at least
  // the bench's own size. GNU time is small and forks the command itself.
  if (access(kTime, X_OK) != 0) {
    std::fprintf(stderr, "wafersim_bench: needs %s (apt-get install time)\n", kTime);
    std::exit(1);
  }
  char rss_file[] = "/tmp/wafersim-bench-rss-XXXXXX";
  const int fd = mkstemp(rss_file);
  if (fd >= 0) close(fd);
  const std::string line = log.empty() ? command : "exec > '" + log + "' 2>&1; " + command;
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    execl(kTime, kTime, "-q", "-f", "%M", "-o", rss_file, "/bin/sh", "-c", line.c_str(), nullptr);
    _exit(127);
  }
  int status = 0;
  struct rusage usage {};
  wait4(pid, &status, 0, &usage);
  ProcessFigures f;
  f.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  f.cpu_s = seconds(usage);  // time's own share is a millisecond at most
  double rss_kb = 0;
  std::ifstream(rss_file) >> rss_kb;
  std::remove(rss_file);
  f.rss_mb = rss_kb / 1024.0;
  f.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return f;
}

ProcessFigures run_checked(const std::string& command, const std::string& log) {
  const ProcessFigures f = run_child(command, log);
  if (!f.ok) fail("'" + command + "'", log);
  return f;
}

void fail(const std::string& what, const std::string& log) {
  std::fprintf(stderr, "wafersim_bench: %s failed%s\n", what.c_str(),
               log.empty() ? "" : ("; its output is in " + log).c_str());
  std::exit(1);
}

double cpu_seconds() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return seconds(usage);
}

}  // namespace wafersim::bench
