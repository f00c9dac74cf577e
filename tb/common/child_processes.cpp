#include "tb/common/child_processes.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>

#include "tb/common/stop_signals.h"

namespace wafersim::tb {

std::vector<int> run_children(const std::string& executable, const std::vector<ChildJob>& jobs,
                              int parallel, const std::function<void(size_t, int)>& done) {
  parallel = std::max(1, parallel);
  std::map<pid_t, size_t> running;
  std::vector<int> exit_codes(jobs.size(), kNotRun);
  size_t next = 0;
  auto launch = [&](size_t i) {
    const ChildJob& job = jobs[i];
    std::filesystem::create_directories(job.dir);
    std::vector<std::string> args = {executable};
    args.insert(args.end(), job.args.begin(), job.args.end());
    pid_t pid = fork();
    if (pid == 0) {
      int o = ::open((job.dir + "/stdout.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int e = ::open((job.dir + "/stderr.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(o, 1);
      dup2(e, 2);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(executable.c_str(), argv.data());
      _exit(127);
    }
    if (pid < 0) {
      exit_codes[i] = 127;  // could not fork
      if (done) done(i, 127);
      return;
    }
    running[pid] = i;
  };
  bool passed_on = false;
  while (next < jobs.size() || !running.empty()) {
    while (!StopSignals::received() && next < jobs.size() &&
           static_cast<int>(running.size()) < parallel)
      launch(next++);
    if (running.empty()) break;
    int status = 0;
    pid_t pid = wait(&status);
    if (StopSignals::received() && !passed_on) {
      // Ctrl-C reaches the whole process group anyway; a SIGTERM sent to us alone does not.
      for (const auto& [child, index] : running) kill(child, StopSignals::received());
      passed_on = true;
    }
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    auto it = running.find(pid);
    if (it == running.end()) continue;
    size_t i = it->second;
    running.erase(it);
    exit_codes[i] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (done) done(i, exit_codes[i]);
  }
  return exit_codes;
}

int run_program(const std::vector<std::string>& argv, std::string& output) {
  output.clear();
  int pipe_fds[2];
  if (argv.empty() || pipe(pipe_fds) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[1]);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int spawned = posix_spawnp(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  if (spawned == 0) {
    char buf[4096];
    ssize_t n;
    while ((n = ::read(pipe_fds[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
      if (n > 0) output.append(buf, static_cast<size_t>(n));
  }
  ::close(pipe_fds[0]);
  if (spawned != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string first_error_line(const std::string& dir) {
  std::ifstream ef(dir + "/stderr.txt");
  std::string line;
  while (std::getline(ef, line))
    if (!line.empty()) return line;
  return "";
}

std::string csv_escape(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace wafersim::tb
