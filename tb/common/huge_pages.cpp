#include "tb/common/huge_pages.h"

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

namespace wafersim::tb {

namespace {
char** arguments = nullptr;

// The value of `name` in `env` (laid out as `environ`), or nullptr. The hook that runs before the
// libraries' static initialisers cannot use getenv: the C library has not set `environ` yet.
const char* env_value(char* const* env, const char* name) {
  const size_t length = std::strlen(name);
  for (char* const* e = env; e && *e; ++e)
    if (std::strncmp(*e, name, length) == 0 && (*e)[length] == '=') return *e + length + 1;
  return nullptr;
}

bool huge_pages_refused(char* const* env) {
  const char* wanted = env_value(env, "WAFERSIM_HUGE_PAGES");
  return wanted && std::strcmp(wanted, "0") == 0;
}

// glibc backs the whole heap with huge pages already (restarted, or the user's own setting).
bool restarted_with_huge_pages(char* const* env) {
  const char* tunables = env_value(env, "GLIBC_TUNABLES");
  return tunables && std::strstr(tunables, "glibc.malloc.hugetlb");
}
}  // namespace

bool backs_small_heap(char* const* env) {
  return !huge_pages_refused(env) && !restarted_with_huge_pages(env);
}

void keep_arguments(char* argv[]) {
  arguments = argv;
}

void restart_with_huge_pages(char* argv[]) {
  if (!argv || huge_pages_refused(environ) || restarted_with_huge_pages(environ)) return;
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  std::string value = tunables ? tunables : "";
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

void back_small_heap_with_huge_pages(char* const* env) {
  if (!backs_small_heap(env)) return;
  // Blocks up to the largest threshold glibc takes come from the heap (not a mapping each), and
  // its free top stays: the block below is carved into the rest of the run's allocations.
  constexpr size_t kMaxMmapThreshold = size_t{32} << 20;  // glibc's limit on 64-bit systems
  mallopt(M_MMAP_THRESHOLD, static_cast<int>(kMaxMmapThreshold));
  mallopt(M_TRIM_THRESHOLD, static_cast<int>(4 * kSmallHeapBytes));
  void* block = std::malloc(kSmallHeapBytes);
  if (!block) return;
  constexpr uintptr_t kHugePage = uintptr_t{2} << 20;  // x86-64's transparent huge page
  const auto begin = (reinterpret_cast<uintptr_t>(block) + kHugePage - 1) & ~(kHugePage - 1);
  const auto end = (reinterpret_cast<uintptr_t>(block) + kSmallHeapBytes) & ~(kHugePage - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
  std::free(block);
}

}  // namespace wafersim::tb
