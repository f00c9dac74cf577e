#include "bench/child_process.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

namespace wafersim::bench {

namespace {

double seconds(const struct rusage& usage) {
  return usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec +
         usage.ru_stime.tv_usec / 1e6;
}

}  // namespace

ProcessFigures run_child(const std::string& command, const std::string& log) {
  const std::string line = log.empty() ? command : "exec > '" + log + "' 2>&1; " + command;
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", line.c_str(), nullptr);
    _exit(127);
  }
  int status = 0;
  struct rusage usage {};
  wait4(pid, &status, 0, &usage);
  ProcessFigures f;
  f.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  f.cpu_s = seconds(usage);
  f.rss_mb = usage.ru_maxrss / 1024.0;
  f.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return f;
}

double cpu_seconds() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return seconds(usage);
}

}  // namespace wafersim::bench
