// libFuzzer target: the configuration readers. The first byte picks one (wafersim platform YAML,
// ASTRA-sim network YAML, ASTRA-sim system JSON, communicator-group JSON, study YAML); the rest is
// the file. Any input must load or end in an InputError; anything else is a finding.
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "models/common/error.h"
#include "tb/chakra/workload.h"
#include "tb/config/platform_spec.h"
#include "tb/study/study.h"

// SystemC's library references sc_main (extern "C"); these targets never start the kernel.
extern "C" int sc_main(int, char*[]) {
  return 0;
}

namespace {

std::string scratch(const std::string& name, const char* data, size_t size) {
  const std::string path = "/tmp/wafersim-fuzz-" + std::to_string(getpid()) + "-" + name;
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(data, static_cast<std::streamsize>(size));
  return path;
}

constexpr char kNetwork[] =
    "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n";
constexpr char kSystem[] =
    "{\"preferred-dataset-splits\": 4, \"all-reduce-implementation\": [\"ring\"]}";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const char* text = reinterpret_cast<const char*>(data) + 1;
  const size_t length = size - 1;
  using namespace wafersim;
  try {
    switch (data[0] % 5) {
      case 0:
        tb::load_platform(scratch("platform.yaml", text, length));
        break;
      case 1:
        tb::load_astra_platform(scratch("network.yml", text, length),
                                scratch("system.json", kSystem, sizeof kSystem - 1));
        break;
      case 2:
        tb::load_astra_platform(scratch("network.yml", kNetwork, sizeof kNetwork - 1),
                                scratch("system.json", text, length));
        break;
      case 3:
        chakra::read_comm_groups(scratch("groups.json", text, length), 8);
        break;
      case 4:
        tb::load_study(scratch("study.yaml", text, length));
        break;
    }
  } catch (const InputError&) {
  }
  return 0;
}
