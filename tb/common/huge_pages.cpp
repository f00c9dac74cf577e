#include "tb/common/huge_pages.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace wafersim::tb {

namespace {
char** arguments = nullptr;
}  // namespace

void keep_arguments(char* argv[]) {
  arguments = argv;
}

void restart_with_huge_pages(char* argv[]) {
  const char* wanted = std::getenv("WAFERSIM_HUGE_PAGES");
  if (!argv || (wanted && std::string(wanted) == "0")) return;
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  std::string value = tunables ? tunables : "";
  if (value.find("glibc.malloc.hugetlb") != std::string::npos) return;  // set, or already restarted
  value += (value.empty() ? "" : ":") + std::string("glibc.malloc.hugetlb=1");
  setenv("GLIBC_TUNABLES", value.c_str(), 1);
  // The binary's own path rather than /proc/self/exe, so the process keeps its name (ps, top).
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return;
  self[n] = '\0';
  execv(self, argv);  // returns only on failure: go on with small pages
}

void restart_with_huge_pages_for(size_t nodes) {
  if (nodes >= kHugePagesFromNodes) restart_with_huge_pages(arguments);
}

}  // namespace wafersim::tb
