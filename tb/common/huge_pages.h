#pragma once
// Transparent huge pages for the heap. A message-fidelity run of thousands of NPUs touches
// hundreds of MB of block state in no particular order, and with 4 KiB pages most of its
// messages pay TLB misses on every hop (docs/performance.md, Side by side). glibc backs malloc with
// huge pages (where the kernel's transparent_hugepage setting is `madvise` or `always`) when its
// tunable `glibc.malloc.hugetlb=1` says so, but it reads tunables only at start-up: the program
// starts itself again to get them. That costs a second round of dynamic linking and start-up,
// 5-15 ms, which a small platform never wins back (an 8x8 mesh runs no faster with huge pages),
// so `run` and `traffic` decide once they know the platform's size.
#include <cstddef>

namespace wafersim::tb {

// Platforms of at least this many topology nodes (NPUs, routers, switches) run with huge pages:
// a 16x16 mesh (512 nodes) ran 12% faster with them, an 8x8 one (128) 2% slower
// (docs/performance.md).
constexpr size_t kHugePagesFromNodes = 256;

// If GLIBC_TUNABLES does not name glibc.malloc.hugetlb yet (and WAFERSIM_HUGE_PAGES is not 0),
// adds it and starts this program again with the arguments it started with (the same process:
// exec keeps the pid, the open files and the signal mask). Returns only if it did not restart.
// `main` calls it at once, with its arguments (which it keeps for the other form), for the
// subcommands that do not size a platform first (not for --help or --version).
void restart_with_huge_pages(char* argv[]);
// Keeps the program's arguments for restart_with_huge_pages_for (main, first thing).
void keep_arguments(char* argv[]);
// Restarts with huge pages (as above) if a platform of `nodes` topology nodes wants them; call
// before anything is printed or written.
void restart_with_huge_pages_for(size_t nodes);

// A small platform's heap is a few MB, and each of its pages used to fault in on its own: on the
// virtual machines measured here a 4 KiB page costs about 15 us of kernel time. The first 3 MiB
// are not even ours: SystemC's static initialisers allocate and clear a 3 MiB string heap
// (sc_core::sc_temp_heap), 768 page faults and about 12 ms of a 17 ms `wafersim --version`. This
// grows the heap by kSmallHeapBytes of address space and advises huge pages for it (MADV_HUGEPAGE:
// with the kernel's transparent_hugepage setting `madvise` or `always`), so what the process
// touches there comes 2 MiB at a time; untouched pages are not taken (peak RSS grows by what the
// last huge page holds unused). It keeps malloc from mapping blocks below 32 MiB on their own and
// from giving the heap's top back. `main` has it run before any library's static initialisers
// (.preinit_array), so SystemC's heap lands there too; `env` is the environment (the hook's third
// argument: `environ` is not set that early). Nothing with WAFERSIM_HUGE_PAGES=0, nor in a process
// glibc already backs with huge pages (GLIBC_TUNABLES names glibc.malloc.hugetlb).
// docs/performance.md has the measurements.
constexpr size_t kSmallHeapBytes = size_t{24} << 20;
void back_small_heap_with_huge_pages(char* const* env);
// Whether it does so in environment `env` (a null-terminated array of NAME=value).
bool backs_small_heap(char* const* env);

}  // namespace wafersim::tb
