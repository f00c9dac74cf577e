#pragma once
// Transparent huge pages for the heap. A message-fidelity run of thousands of NPUs touches
// hundreds of MB of block state in no particular order, and with 4 KiB pages most of its
// messages pay TLB misses on every hop (docs/performance.md, Side by side). glibc backs malloc with
// huge pages (where the kernel's transparent_hugepage setting is `madvise` or `always`) when its
// tunable `glibc.malloc.hugetlb=1` says so, but it reads tunables only at start-up.
namespace wafersim::tb {

// If GLIBC_TUNABLES does not name glibc.malloc.hugetlb yet (and WAFERSIM_HUGE_PAGES is not 0),
// adds it and starts this program again with the same arguments (the same process: exec keeps
// the pid, the open files and the signal mask). Returns only if it did not restart.
void restart_with_huge_pages(char* argv[]);

}  // namespace wafersim::tb
