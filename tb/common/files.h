#pragma once
// Files a user hands us and files we write. Reads check that a path is a readable regular file
// before a parser sees it; writes go to a temporary name first and are renamed into place, so that
// a run stopped by a signal, or a full disk, never leaves a half-written report.
#include <string>

namespace wafersim::tb {

// Throws InputError(path, item, ...) unless `path` names an existing regular file we can read.
void check_input_file(const std::string& path, const std::string& item);

// Creates the file's folder and checks that the file can be written there, leaving no file
// behind (a run checks its outputs before it starts). Throws InputError naming `option`.
void check_writable(const std::string& path, const std::string& option);

// Writes `content` to `path` atomically (same folder, temporary name, rename); creates the folder.
// Throws InputError naming `path` when it cannot.
void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace wafersim::tb
