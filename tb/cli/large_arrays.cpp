// Large arrays made with new[] are backed in one go rather than a page fault at a time.
//
// SystemC's static initialisation (libsystemc, before main) makes a 3 MiB array and zeroes it,
// which faults its 768 pages in one by one. On the virtual machines measured here a page fault
// costs about 10 us, so that alone was 8-10 ms of every run's start (a bare `wafersim --help`
// took 21 ms of CPU, BookSim's start 4 ms; docs/performance.md). This replacement of the global
// array new, which the dynamic linker gives the libraries too, asks the kernel for a large array's
// pages in one call (MADV_POPULATE_WRITE, Linux 5.14; older kernels refuse it and the pages fault
// in as before). The memory is ::operator new's, so delete[] frees it as usual.
//
// Not in sanitizer or fuzzing builds: AddressSanitizer tells apart memory from operator new and
// new[], and would take this new[]'s for the former.
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <new>

namespace {
constexpr std::size_t kPopulateFrom = std::size_t{1} << 20;  // smaller arrays fault in as used
constexpr std::uintptr_t kPage = 4096;
}  // namespace

void* operator new[](std::size_t bytes) {
  void* p = ::operator new(bytes);
#ifdef MADV_POPULATE_WRITE
  if (bytes >= kPopulateFrom) {
    // The whole pages inside the block (its first and last may share pages with other blocks).
    const auto begin = (reinterpret_cast<std::uintptr_t>(p) + kPage - 1) & ~(kPage - 1);
    const auto end = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~(kPage - 1);
    if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
  }
#endif
  return p;
}
