// libFuzzer target: the Chakra ET reader and the checks `inspect` runs on one trace. Any input must
// end in a trace or an InputError; anything else (a crash, a sanitizer report, another exception)
// is a finding. `make fuzz` runs it; see docs/usage.md, "Fuzzing".
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "models/common/error.h"
#include "tb/chakra/trace.h"
#include "tb/chakra/workload_check.h"

// SystemC's library references sc_main (extern "C"); these targets never start the kernel.
extern "C" int sc_main(int, char*[]) {
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The reader takes a path (it detects gzip by content): one scratch file per process.
  static const std::string path = "/tmp/wafersim-fuzz-trace-" + std::to_string(getpid()) + ".et";
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    wafersim::chakra::Trace t = wafersim::chakra::read_trace(path);
    wafersim::chakra::check_trace(t);
  } catch (const wafersim::InputError&) {
  }
  return 0;
}
