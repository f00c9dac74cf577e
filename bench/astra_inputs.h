#pragma once
// ASTRA-sim input files the bench writes, so that both tools read the same ones.
#include <string>
#include <vector>

namespace wafersim::bench {

// ASTRA-sim's examples/system/native_collectives/Ring_4chunks.json, key for key (4 dataset
// splits, 1 active chunk per dimension, ring everywhere), with one implementation per dimension.
void write_ring_4chunks_system(const std::string& path, int dims);

// An ASTRA-sim network file of rings of `sizes` NPUs, 50 GB/s and 500 ns per link.
void write_ring_network(const std::string& path, const std::vector<int>& sizes);

// ASTRA-sim's remote memory file for no memory expansion.
void write_no_memory_expansion(const std::string& path);

}  // namespace wafersim::bench
