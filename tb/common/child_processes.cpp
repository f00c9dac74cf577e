#include "tb/common/child_processes.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

namespace wafersim::tb {

std::vector<int> run_children(const std::string& executable, const std::vector<ChildJob>& jobs,
                              int parallel, const std::function<void(size_t, int)>& done) {
  parallel = std::max(1, parallel);
  std::map<pid_t, size_t> running;
  std::vector<int> exit_codes(jobs.size(), -1);
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
      exit_codes[i] = 127;
      if (done) done(i, 127);
      return;
    }
    running[pid] = i;
  };
  while (next < jobs.size() || !running.empty()) {
    while (next < jobs.size() && static_cast<int>(running.size()) < parallel) launch(next++);
    if (running.empty()) continue;
    int status = 0;
    pid_t pid = wait(&status);
    if (pid < 0) break;
    auto it = running.find(pid);
    if (it == running.end()) continue;
    size_t i = it->second;
    running.erase(it);
    exit_codes[i] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (done) done(i, exit_codes[i]);
  }
  return exit_codes;
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
