// The heap's huge pages are decided from the environment before the C library has set `environ`
// (tb/common/huge_pages.h): the decision reads the environment it is given, by exact name.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tb/common/huge_pages.h"

namespace {

// A null-terminated NAME=value array, as the program's environment is laid out.
class Environment {
 public:
  Environment(std::initializer_list<std::string> entries) : text_(entries) {
    for (std::string& e : text_) pointers_.push_back(e.data());
    pointers_.push_back(nullptr);
  }
  char* const* get() const { return pointers_.data(); }

 private:
  std::vector<std::string> text_;
  std::vector<char*> pointers_;
};

TEST(HugePages, SmallHeapBackedUnlessRefusedOrAlreadyBacked) {
  EXPECT_TRUE(wafersim::tb::backs_small_heap(Environment{}.get()));
  EXPECT_TRUE(wafersim::tb::backs_small_heap(nullptr));
  EXPECT_TRUE(wafersim::tb::backs_small_heap(Environment{"PATH=/bin", "HOME=/root"}.get()));
  EXPECT_FALSE(
      wafersim::tb::backs_small_heap(Environment{"PATH=/bin", "WAFERSIM_HUGE_PAGES=0"}.get()));
  EXPECT_TRUE(wafersim::tb::backs_small_heap(Environment{"WAFERSIM_HUGE_PAGES=1"}.get()));
  // Only the exact name counts: neither a longer one nor a value that merely starts with 0.
  EXPECT_TRUE(wafersim::tb::backs_small_heap(Environment{"WAFERSIM_HUGE_PAGES_X=0"}.get()));
  EXPECT_TRUE(wafersim::tb::backs_small_heap(Environment{"XWAFERSIM_HUGE_PAGES=0"}.get()));
  EXPECT_TRUE(wafersim::tb::backs_small_heap(Environment{"WAFERSIM_HUGE_PAGES=01"}.get()));
  // glibc backs the heap itself (a restarted process, or the user's tunable).
  EXPECT_FALSE(wafersim::tb::backs_small_heap(
      Environment{"GLIBC_TUNABLES=glibc.malloc.check=0:glibc.malloc.hugetlb=1"}.get()));
  EXPECT_TRUE(
      wafersim::tb::backs_small_heap(Environment{"GLIBC_TUNABLES=glibc.malloc.check=0"}.get()));
}

}  // namespace
