#pragma once
// A pruned MLP under data parallelism, as Chakra ET (`wafersim generate --workload sparse-mlp`):
// each layer's forward and backward pass is an SpMM of its pruned weights (hidden x hidden, the
// layer's density) with a batch of activations, run on the NPU's sparse unit; each layer's gradient
// All-Reduce (its non-zero values) follows its backward pass. With `dense_layers` the same layers
// are ordinary COMP nodes (roofline operations and bytes), for comparison.
#include <cstdint>
#include <string>
#include <vector>

namespace wafersim::chakra {

struct SparseMlpSpec {
  int ranks = 8;
  int layers = 4;
  uint64_t hidden = 1024;              // weights are hidden x hidden
  uint64_t batch = 64;                 // activations are hidden x batch (SpMM's B)
  std::vector<double> densities{0.1};  // per layer, repeated in turn
  std::string format = "auto";         // the weights' format (sparse_in_format), or auto
  int value_bytes = 2;                 // fp16 weights and activations
  bool dense_layers = false;
};

// Throws std::invalid_argument naming the option at fault.
void check_sparse_mlp(const SparseMlpSpec& spec);
// Writes <prefix>.<rank>.et for every rank.
void write_sparse_mlp(const std::string& prefix, const SparseMlpSpec& spec);

}  // namespace wafersim::chakra
